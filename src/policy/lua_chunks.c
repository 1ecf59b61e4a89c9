/*
 * lua_chunks.c — loading the shipped library's embedded bytecode
 * (lua_chunks.h): finding a module's chunk, and handing it to lua_load
 * with the file's name put in place of the placeholder the build dumped
 * it under, so that errors and tracebacks name the file as from source.
 */
#include <string.h>
#include "lua_chunks.h"
#include "lua/luacompat.h"

/* lua_load's reader over an embedded chunk, with the file's chunk name
 * ("@file") put where the dump has its placeholder "=?": the part before
 * it, the name's length as the dump encodes it, the name, the rest. */
typedef struct {
  const tg_lua_chunk *c;
  const char *name;
  size_t name_len, len_n;
  unsigned char len[16];
  int part;
} chunk_pieces;

static void encode_name_len(chunk_pieces *r) {
  size_t x = r->name_len;
#if TG_LUA54
  /* size + 1 in 7-bit groups, most significant first, the last marked */
  unsigned char tmp[16];
  size_t k = 0;
  x += 1;
  do {
    tmp[k++] = x & 0x7f;
    x >>= 7;
  } while (x);
  tmp[0] |= 0x80;
  for (r->len_n = 0; r->len_n < k; r->len_n++)
    r->len[r->len_n] = tmp[k - 1 - r->len_n];
#else
  /* LuaJIT: uleb128 */
  r->len_n = 0;
  do {
    unsigned char b = x & 0x7f;
    x >>= 7;
    r->len[r->len_n++] = b | (x ? 0x80 : 0);
  } while (x);
#endif
}

static const char *read_chunk(lua_State *L, void *ud, size_t *size) {
  chunk_pieces *r = ud;
  const tg_lua_chunk *c = r->c;
  switch (r->part++) {
  case 0: *size = c->name_at; return (const char *)c->code;
  case 1: *size = r->len_n; return (const char *)r->len;
  case 2: *size = r->name_len; return r->name;
  case 3:
    *size = c->size - c->name_at - 3; /* the length byte and "=?" */
    return (const char *)c->code + c->name_at + 3;
  default: *size = 0; return NULL;
  }
}

const tg_lua_chunk *tg__lua_chunk(const char *module) {
  for (const tg_lua_chunk *c = tg__lua_chunks; c->module; c++)
    if (!strcmp(c->module, module)) return c;
  return NULL;
}

int tg__lua_chunk_load(lua_State *L, const tg_lua_chunk *c,
                       const char *chunkname) {
  chunk_pieces r = {c, chunkname, strlen(chunkname), 0, {0}, 0};
  encode_name_len(&r);
#if TG_LUA54
  return lua_load(L, read_chunk, &r, chunkname, "b");
#else
  return lua_loadx(L, read_chunk, &r, chunkname, "b");
#endif
}

