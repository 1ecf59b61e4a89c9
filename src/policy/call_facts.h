/*
 * call_facts.h — call.paths and call.commands: what a call touches and
 * what it runs, computed by toolgate.facts (lua/toolgate/facts.lua) when
 * a rule first reads them, and kept in the call table until a rewrite;
 * and call.network: whether the configuration marks the call's tool as
 * reaching the network (core/network.h).
 *
 * Why lazily: most calls are read by no rule that asks (a Lua tool's,
 * an MCP tool's), and resolving paths costs system calls; the facts come
 * from the same code the executor or the kernel follows (apply_patch's
 * parser, the kernel's walk of a path, the shell analysis), never a
 * second reading in the rule.
 */
#ifndef TG_CALL_FACTS_H
#define TG_CALL_FACTS_H

#include "lua/luacompat.h"

/* Gives the call table at idx the facts' metatable. Policy code cannot
 * read it (the sandbox's getmetatable shows false for the runtime's); a
 * rule that replaces it has changed the call (tg__call_facts_untouched),
 * and a pre-hook's is undone before the rules judge again. */
void tg__call_facts_attach(lua_State *L, int idx);

/* Pushes {session, id, tool} as C built the call table at idx (an
 * agent's call: the agent's own id and tool name), and returns 1; or
 * pushes nothing and returns 0 when idx is no call table (a table policy
 * code made). What policy code later writes into the table does not
 * change it: tg.taint records the cause from here. */
int tg__call_facts_origin(lua_State *L, int idx);

/* Forgets the facts computed for the call table at idx (after a rewrite
 * its args are new) and attaches the metatable again. */
void tg__call_facts_reset(lua_State *L, int idx);

/* 1 when the call table at idx has the facts' metatable and no fact of
 * a rule's own stored in it. */
int tg__call_facts_untouched(lua_State *L, int idx);

#endif
