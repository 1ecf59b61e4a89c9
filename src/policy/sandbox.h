/*
 * sandbox.h — the limits policy code runs under (a policy file is untrusted
 * until proven otherwise: a rule must not hang, exhaust or escape the
 * host): each generation's lua_State gets
 *   - a counting allocator that refuses to grow past policy_memory_cap
 *     while policy code runs (Lua 5.4 and LuaJIT alike: it wraps the
 *     state's own allocator, so LuaJIT keeps its low-memory arena);
 *   - a time limit per call from C into policy code (policy_time_limit_ms),
 *     enforced by a watchdog thread that hooks the running Lua thread only
 *     once a call overruns: nothing is paid per instruction until then
 *     (LuaJIT: with the JIT off, so that every loop checks the hook);
 *   - unless trusted_policies, an allow-listed standard library: no
 *     os.execute / io.popen / writes / bytecode / debug / C modules, and a
 *     `require` that reaches only the shipped lua/ library and the policy
 *     folder. Refused names raise a message that says so.
 * Every call from C into policy code goes through tg__sandbox_pcall or
 * tg__sandbox_resume; after a failure tg__sandbox_describe_stop says
 * whether a limit stopped it.
 */
#ifndef TG_SANDBOX_H
#define TG_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include "lua/luacompat.h"
#include <cjson/cJSON.h>
#include "toolgate.h"

#define TG_DEFAULT_POLICY_TIME_LIMIT_MS 500u
#define TG_DEFAULT_POLICY_MEMORY_CAP ((size_t)64 << 20)

typedef struct tg_sandbox tg_sandbox;

typedef enum {
  TG_STOP_NONE = 0,
  TG_STOP_BUDGET,  /* the time limit ran out */
  TG_STOP_MEMORY   /* an allocation was refused at the memory cap */
} tg_stop;

/* Makes the lua_State of a generation whose policies live in policy_dir
 * (may be NULL): standard library (restricted unless cfg->trusted_policies),
 * package.path = the shipped lua/ library and policy_dir, no C modules.
 * Returns NULL with a message in err. Free with tg__sandbox_close. */
lua_State *tg__sandbox_new(const tg_config *cfg, const char *policy_dir,
                           tg_sandbox **out, char *err, size_t errlen);
void tg__sandbox_close(lua_State *L, tg_sandbox *sb);

/* Gives the function on top of the stack (a loaded policy file or module)
 * a fresh environment: its globals are its own (_G included), reads fall
 * back to the standard globals. */
void tg__sandbox_set_env(lua_State *L);

/* lua_pcall / resume under the time limit and the memory cap. Calls nest
 * (an event handler run while a rule runs shares the rule's time). */
int tg__sandbox_pcall(tg_sandbox *sb, lua_State *L, int nargs, int nres);
int tg__sandbox_resume(tg_sandbox *sb, lua_State *co, lua_State *from,
                       int nargs, int *nres);

/* For C functions of the sandbox that can run long without executing a
 * Lua instruction (the pattern matcher): call every few thousand steps.
 * Raises the same stop error the hook raises when the current call from C
 * is over its bound; returns otherwise. Only from inside a protected call
 * (a C function called by policy code). */
void tg__sandbox_poll(lua_State *L);

/* Every switch of the thread that runs policy code, other than the two
 * above (coroutine.resume / wrap / close: sandbox_flow.c), is announced:
 * switch_to before `run` runs, switch_from after it stopped, naming the
 * thread that runs next (NULL: none). This is how a stop reaches code
 * running in a coroutine (Lua 5.4's hooks are per thread). */
void tg__sandbox_switch_to(lua_State *run);
void tg__sandbox_switch_from(lua_State *left, lua_State *to);

/* The chunk name prefix of Lua code the sandbox installs: a stop names
 * the policy's line that called into it, never a line of it. */
#define TG_SANDBOX_CHUNK "=[toolgate] "

/* Installs the coroutine functions that announce their switches, and the
 * xpcall whose message handler a stop gets through (sandbox_flow.c). */
void tg__sandbox_flow_open(lua_State *L);

/* Is the call from C that runs L's code being stopped? */
int tg__sandbox_stopping(lua_State *L);

uint32_t tg__sandbox_time_limit_ms(const tg_sandbox *sb);

/* What stopped the last failed call (TG_STOP_NONE: it raised an error of
 * its own). */
tg_stop tg__sandbox_stop(const tg_sandbox *sb);

/* When a limit stopped the last call, writes "<what> ran past its time
 * limit of N ms (stopped at file:line)" or "<what> ran out of
 * memory ..." into msg and returns 1; returns 0 otherwise. */
int tg__sandbox_describe_stop(const tg_sandbox *sb, const char *what,
                              char *msg, size_t msglen);

#endif
