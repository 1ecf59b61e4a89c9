/*
 * lua_chunks.h — the shipped Lua library (the toolgate.* modules of lua/:
 * toolgate/shell.lua, toolgate/agents/common.lua, ...) as bytecode,
 * compiled at build time by cmake/lua_chunks.c with the Lua this build
 * links, so that a process's require of a shipped module does not parse
 * it again (most of what a short-lived `toolgate hook` costs). Only this
 * copy, inside the binary, is ever loaded as bytecode: policy code's
 * require and load take text.
 */
#ifndef TG_POLICY_LUA_CHUNKS_H
#define TG_POLICY_LUA_CHUNKS_H

#include <stddef.h>
#include <lua.h>

typedef struct {
  const char *module;        /* "toolgate.shell"; NULL ends the list */
  const unsigned char *code; /* lua_dump of the module, line info kept */
  size_t size;
  size_t name_at; /* where the placeholder chunk name "=?" and its one-byte
                   * length sit: the loader puts the file's name there */
} tg_lua_chunk;

/* Ends with a NULL module; empty when the build could not make the chunks
 * (a module built by luarocks has no Lua library to run the compiler). */
extern const tg_lua_chunk tg__lua_chunks[];

/* The chunk of module ("toolgate.shell"), or NULL. */
const tg_lua_chunk *tg__lua_chunk(const char *module);

/* Loads c as bytecode (mode "b": only this copy, made by the build, ever
 * is) named chunkname ("@/usr/share/toolgate/lua/toolgate/shell.lua"),
 * the function on top. Returns lua_load's status, its message on top when
 * not LUA_OK (as for a Lua other than the one the build used). */
int tg__lua_chunk_load(lua_State *L, const tg_lua_chunk *c,
                       const char *chunkname);

#endif
