/*
 * api_redact.h — tg.redact(fn) for policies (api_redact.c): one function
 * that sees every string about to leave the runtime (after the built-in
 * masks and the host's redactor) and may mask it.
 */
#ifndef TG_API_REDACT_H
#define TG_API_REDACT_H

#include "lua/luacompat.h"

/* tg.redact(fn) (upvalue 1: the generation): while the file loads, once. */
int tg__l_redact(lua_State *L);

/* s through generation origin's tg.redact function: malloc'd, or NULL to
 * keep it. A redactor that raises or returns something else than a string
 * or nil masks the whole string. (A core/redact.h policy redactor.) */
char *tg__policy_redact(void *origin, const char *s);

#endif
