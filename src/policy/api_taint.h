/*
 * api_taint.h — a session's taint for policies (api_taint.c, core/taint.h):
 * tg.taint(session, level, reason) marks a session sensitive, and
 * tg.session_taint(session) tells whether it is, and why.
 */
#ifndef TG_API_TAINT_H
#define TG_API_TAINT_H

#include "lua/luacompat.h"
#include "core/taint.h"

/* tg.taint(session | call, level, reason) -> true | nil, why, code
 * (upvalue 1: the generation) */
int tg__l_taint(lua_State *L);
/* tg.session_taint(session | call) -> nil | {level, reason, call, tool, at}
 * (upvalue 1: the generation) */
int tg__l_session_taint(lua_State *L);
/* tg.taint's (and the host's rt:taint's) level at idx and reason at
 * idx + 1, checked: raises "<fn>: the level must be a whole number from 1
 * to N", "<fn>: the reason must be a string (got T)" or a NUL byte's
 * error; *level is the level, and the reason is returned. */
const char *tg__l_taint_level_reason(lua_State *L, const char *fn, int idx,
                                    int *level);
/* What tg.session_taint (and the host's rt:session_taint) answers for a
 * read of session's taint that returned rc, t and err: a raise when it
 * could not be read (rc < 0: nil would say the session is clean), nil
 * when clean (0), else {level, reason, call?, tool?, at}. */
int tg__l_taint_answer(lua_State *L, const char *fn, const char *session,
                       int rc, const tg_taint *t, const char *err);

#endif
