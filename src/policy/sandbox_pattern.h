/*
 * sandbox_pattern.h — the Lua patterns policy code uses (sandbox_pattern.c):
 * string.find, string.match, string.gmatch and string.gsub with the
 * behaviour of the Lua toolgate is built for, but bounded. A pattern that
 * backtracks over an agent-controlled string can take exponential time
 * inside one C call, where no count hook runs; these count their steps and
 * call a poll function every TG_PATTERN_POLL_STEPS of them.
 */
#ifndef TG_SANDBOX_PATTERN_H
#define TG_SANDBOX_PATTERN_H

#include "lua/luacompat.h"

/* Steps between two polls. A step: one pattern item tried at a position,
 * or one subject character a repetition, a %b or a back reference went
 * over, or a plain find compared. A scan (one
 * repetition going over the subject) is counted at its end: the time
 * between polls is at most this many steps plus one linear scan. */
#define TG_PATTERN_POLL_STEPS 1000

/* Called every TG_PATTERN_POLL_STEPS steps from inside a pattern function;
 * may raise (lua_error) to stop it. The sandbox passes tg__sandbox_poll. */
typedef void (*tg_pattern_poll)(lua_State *L);

/* Sets find, match, gmatch and gsub in the table on top of the stack. */
void tg__pattern_register(lua_State *L, tg_pattern_poll poll);

#endif
