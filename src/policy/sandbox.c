/*
 * sandbox.c — the limits of a policy generation's lua_State: the counting
 * allocator (memory cap), the time limit per call from C, and the state's
 * creation. What the standard library lets policies do is sandbox_lib.c.
 *
 * Time limit, without paying per instruction: no hook is set while policy
 * code behaves (Lua 5.4 checks a set hook at every instruction). Entering
 * a call from C bumps the watchdog's epoch (base/watchdog.c); when the same
 * call is still running after the limit, the watchdog's thread sets a
 * count hook of period 1 on the thread running policy code — lua_sethook
 * is safe to call asynchronously, as lua.c does from its SIGINT handler.
 * The hook then raises at every instruction, so a pcall inside the policy
 * cannot swallow the stop; back in C the hook is removed. It is a call hook
 * too (STOP_MASK): it also raises at every call of a function, C functions
 * included, so work that C code does by calling C functions — a
 * table.concat or table.unpack whose __index is a C function, a sort
 * whose comparator or __lt is one — is stopped although it runs no Lua
 * instruction. Loops inside one C function that call nothing and allocate
 * nothing are bounded where they are (sandbox_lib.c: string.rep).
 *
 * Coroutines: hooks are per thread in Lua 5.4, so the sandbox tracks the
 * thread that runs policy code (`running`): every switch — a call from C,
 * coroutine.resume / wrap / close (sandbox_flow.c), a Lua tool's resume —
 * publishes the thread it switches to and, if a stop is pending, hooks it
 * itself. The watchdog hooks the thread it reads under a small handshake
 * (`firing`) so that a coroutine cannot end and be collected meanwhile.
 * LuaJIT's hooks belong to the whole state: there the main thread is
 * hooked. None of this fences on the hot path (see base/watchdog.h).
 *
 * Memory: allocations are refused past the cap only while policy code runs
 * (depth > 0). C code pushes call tables and events between calls, outside
 * any protected call, where a refusal would be a panic; those pushes are
 * bounded by the args and event sizes, not by policy code. Going past
 * the cap stops the call as the time limit does — the stop hook raises at
 * the next instruction and every one after, so pcall cannot swallow it,
 * and the error names the policy's file:line (Lua's own "not enough
 * memory" names none, and the allocator cannot read a stack it may be
 * moving). The allocation that crossed the cap is granted within a small
 * slack, so the hook gets to run; beyond the slack it is refused.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandbox.h"
#include "sandbox_lib.h"
#include "base/watchdog.h"
#include "lua/luajson.h"
#if !TG_LUA54
#include <luajit.h>
#endif

struct tg_sandbox {
  lua_Alloc orig;           /* the state's own allocator, which we count for */
  void *orig_ud;
  size_t used, cap;         /* bytes */
  uint32_t limit_ms;        /* time per call from C */
  int depth;                /* calls from C into policy code, nested */
  uint64_t epoch;           /* the outermost call's, from the watchdog */
  tg_stop stop;             /* what stopped the current / last call */
  char where[256];          /* file:line a limit stopped, "" unknown */
  int mem_pending;          /* past the cap: stop the current call */
  lua_State *L;             /* the main thread */
  tg_watchdog *wd;
  /* shared with the watchdog's thread */
  _Atomic uint64_t stop_epoch;      /* stop the call of this epoch */
  _Atomic(lua_State *) running;     /* the thread running policy code */
  _Atomic(lua_State *) firing;      /* the thread the watchdog is hooking */
};

/* ---- memory ------------------------------------------------------------ */

#define MEMORY_SLACK ((size_t)256 << 10)

/* The stop hook's events: every instruction, and every call (of a Lua or
 * a C function: both Luas call hooks for C functions too). */
#define STOP_MASK (LUA_MASKCOUNT | LUA_MASKCALL)

static void stop_hook(lua_State *L, lua_Debug *ar);
static lua_State *hook_target(tg_sandbox *sb, lua_State *run);

/* An allocation past the cap stops the call like the time limit does: the
 * thread running policy code is hooked to raise at its next instruction
 * (and at every one after, so pcall cannot swallow it). The allocation
 * itself is granted within a small slack, refused beyond it. */
static int past_cap(tg_sandbox *sb, size_t grow) {
  size_t over = sb->used + grow - sb->cap;
  lua_State *run = atomic_load_explicit(&sb->running, memory_order_relaxed);
  if (sb->stop == TG_STOP_NONE) sb->stop = TG_STOP_MEMORY;
  if (!sb->mem_pending && run) {
    sb->mem_pending = 1;
    /* lua_sethook only sets fields and marks Lua frames: safe here */
    lua_sethook(hook_target(sb, run), stop_hook, STOP_MASK, 1);
  }
  return over <= MEMORY_SLACK;
}

static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  tg_sandbox *sb = ud;
  size_t old = ptr ? osize : 0; /* without ptr, osize is a type tag */
  if (nsize > old && sb->depth > 0) {
    size_t room = sb->used < sb->cap ? sb->cap - sb->used : 0;
    if (nsize - old > room && !past_cap(sb, nsize - old))
      return NULL; /* Lua collects and retries, then raises "not enough memory" */
  }
  void *p = sb->orig(sb->orig_ud, ptr, osize, nsize);
  if (p || nsize == 0) /* saturating: blocks from before the wrap were estimated */
    sb->used = sb->used >= old ? sb->used - old + nsize : nsize;
  return p;
}

static size_t gc_bytes(lua_State *L) {
  return (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 +
         (size_t)lua_gc(L, LUA_GCCOUNTB, 0);
}

/* ---- the time limit ------------------------------------------------------ */

static tg_sandbox *sandbox_of(lua_State *L) {
  void *ud = NULL;
  lua_getallocf(L, &ud); /* the allocator's ud is the sandbox: no lookup */
  return ud;
}

/* Is the current call from C being stopped? (the loop thread) */
static int stopping(const tg_sandbox *sb) {
  return sb->depth > 0 &&
         (sb->mem_pending || atomic_load(&sb->stop_epoch) == sb->epoch);
}

/* The thread whose hook stops `run`: itself on 5.4, the state on LuaJIT. */
static lua_State *hook_target(tg_sandbox *sb, lua_State *run) {
#if TG_LUA54
  (void)sb;
  return run;
#else
  (void)run;
  return sb->L;
#endif
}

static void raise_stop(lua_State *L, tg_sandbox *sb) {
  if (sb->stop == TG_STOP_MEMORY)
    lua_pushfstring(L, "%s: ran out of memory", sb->where);
  else
    lua_pushfstring(L, "%s: ran past its time limit of %d ms", sb->where,
                    (int)sb->limit_ms);
  lua_error(L);
}

/* A line of the policy's: not of a C function, nor of the sandbox's own
 * Lua code (TG_SANDBOX_CHUNK). */
static int policy_line(lua_State *L, lua_Debug *ar) {
  return lua_getinfo(L, "Sl", ar) && ar->currentline > 0 &&
         strncmp(ar->source, TG_SANDBOX_CHUNK,
                 sizeof TG_SANDBOX_CHUNK - 1) != 0;
}

/* The policy's file:line: of the running Lua function (ar, from a count
 * hook), else of the nearest policy line on the stack from `level` up (a
 * call hook's callee, a C function that polls, the sandbox's own Lua code
 * are no place in a policy). */
static void note_where(tg_sandbox *sb, lua_State *L, lua_Debug *ar,
                       int level) {
  lua_Debug here;
  if (ar && policy_line(L, ar)) {
    snprintf(sb->where, sizeof sb->where, "%s:%d", ar->short_src,
             ar->currentline);
    return;
  }
  for (int i = level; i < level + 64 && lua_getstack(L, i, &here); i++)
    if (policy_line(L, &here)) {
      snprintf(sb->where, sizeof sb->where, "%s:%d", here.short_src,
               here.currentline);
      return;
    }
  snprintf(sb->where, sizeof sb->where, "?");
}

/* Notes what stopped the call and where, once per call. */
static void mark_stopped(tg_sandbox *sb, lua_State *L, lua_Debug *ar,
                         int level) {
  if (sb->where[0]) return;
  if (!sb->mem_pending) sb->stop = TG_STOP_BUDGET;
  note_where(sb, L, ar, level);
}

/* Set only while a call is being stopped; raises at every instruction. A
 * hook left on a thread by an earlier call, or reached outside a protected
 * call (depth 0), removes itself and never raises. */
static void stop_hook(lua_State *L, lua_Debug *ar) {
  tg_sandbox *sb = sandbox_of(L);
  if (!stopping(sb)) {
    lua_sethook(L, NULL, 0, 0);
    return;
  }
  /* at a call, the place is the caller's: level 0 is the callee */
  int call = ar->event != LUA_HOOKCOUNT;
  mark_stopped(sb, L, call ? NULL : ar, call ? 1 : 0);
  raise_stop(L, sb);
}

int tg__sandbox_stopping(lua_State *L) { return stopping(sandbox_of(L)); }

void tg__sandbox_poll(lua_State *L) {
  tg_sandbox *sb = sandbox_of(L);
  if (!stopping(sb)) return;
  mark_stopped(sb, L, NULL, 1); /* level 1: the C function's caller */
  raise_stop(L, sb);
}

/* The watchdog's thread, each tick while the call of `epoch` overruns:
 * hooks the thread that runs it. Called again on the next tick, so a stale
 * read of `running` (the loop thread does not fence its stores) is made
 * good a tick later. */
static void on_overrun(void *ud, uint64_t epoch) {
  tg_sandbox *sb = ud;
  atomic_store(&sb->stop_epoch, epoch);
  lua_State *run = atomic_load(&sb->running);
  if (!run) return;
  atomic_store(&sb->firing, run);
  /* still running it? Then a coroutine cannot be collected until firing
   * is clear (switch_from waits); if it already left, leave it alone */
  lua_State *t = hook_target(sb, run);
  /* once in place, the hook is left alone: lua_sethook from this thread
   * races with the loop thread's own updates of the hook state (LuaJIT
   * keeps flags in the same byte), so it is called as rarely as it can be */
  int hooked = lua_gethook(t) == stop_hook && lua_gethookcount(t) == 1 &&
               lua_gethookmask(t) == STOP_MASK;
  if (!hooked && atomic_load(&sb->running) == run)
    lua_sethook(t, stop_hook, STOP_MASK, 1);
  atomic_store(&sb->firing, NULL);
}

static void hook_if_stopping(tg_sandbox *sb, lua_State *run) {
  if (stopping(sb)) lua_sethook(hook_target(sb, run), stop_hook, STOP_MASK, 1);
}

/* The loop thread: policy code now runs on `run`. Publishes it, then
 * hooks it itself if a stop is already under way. */
static void switch_to(tg_sandbox *sb, lua_State *run) {
  atomic_store_explicit(&sb->running, run, memory_order_release);
  hook_if_stopping(sb, run);
}

void tg__sandbox_switch_to(lua_State *run) { switch_to(sandbox_of(run), run); }

/* Policy code left `left` for `to` (NULL: back to C). A coroutine may be
 * collected once it is left, so then the store is fenced and the switch
 * waits while the watchdog is hooking it. The main thread lives as long
 * as the sandbox: the hot path (rules and hooks run on it) pays no fence. */
static void switch_from(tg_sandbox *sb, lua_State *left, lua_State *to) {
  if (left == sb->L) {
    atomic_store_explicit(&sb->running, to, memory_order_release);
  } else {
    atomic_store(&sb->running, to);
    while (atomic_load(&sb->firing) == left) sched_yield();
  }
  if (to) hook_if_stopping(sb, to);
}

void tg__sandbox_switch_from(lua_State *left, lua_State *to) {
  switch_from(sandbox_of(left), left, to);
}

/* A nested call shares the time of the outermost one. Returns the thread
 * that ran before. */
static lua_State *enter(tg_sandbox *sb, lua_State *run) {
  lua_State *prev = atomic_load_explicit(&sb->running, memory_order_relaxed);
  if (sb->depth++ == 0) {
    sb->stop = TG_STOP_NONE;
    sb->mem_pending = 0;
    sb->where[0] = '\0';
    sb->epoch = tg__watchdog_enter(sb->wd);
  }
  switch_to(sb, run);
  return prev;
}

static void leave(tg_sandbox *sb, lua_State *run, lua_State *prev) {
  int outermost = sb->depth == 1;
  switch_from(sb, run, outermost ? NULL : prev);
  if (--sb->depth > 0) return;
  tg__watchdog_leave(sb->wd);
  if (sb->mem_pending || atomic_load(&sb->stop_epoch) == sb->epoch) {
    lua_sethook(sb->L, NULL, 0, 0); /* back in C: no hook */
    if (run != sb->L) lua_sethook(run, NULL, 0, 0);
  }
  sb->mem_pending = 0;
  if (sb->stop == TG_STOP_MEMORY)
    /* give back at once what the failed call built (LuaJIT has no
     * emergency collection of its own) */
    lua_gc(sb->L, LUA_GCCOLLECT, 0);
}

int tg__sandbox_pcall(tg_sandbox *sb, lua_State *L, int nargs, int nres) {
  lua_State *prev = enter(sb, L);
  int st = lua_pcall(L, nargs, nres, 0);
  leave(sb, L, prev);
  return st;
}

int tg__sandbox_resume(tg_sandbox *sb, lua_State *co, lua_State *from,
                       int nargs, int *nres) {
  lua_State *prev = enter(sb, co);
  int st = tg__resume(co, from, nargs, nres);
  leave(sb, co, prev);
  return st;
}

tg_stop tg__sandbox_stop(const tg_sandbox *sb) { return sb->stop; }

uint32_t tg__sandbox_time_limit_ms(const tg_sandbox *sb) { return sb->limit_ms; }

static void format_bytes(char *buf, size_t len, size_t n) {
  if (n >= ((size_t)1 << 20) && n % ((size_t)1 << 20) == 0)
    snprintf(buf, len, "%zu MiB", n >> 20);
  else if (n >= 1024 && n % 1024 == 0)
    snprintf(buf, len, "%zu KiB", n >> 10);
  else
    snprintf(buf, len, "%zu bytes", n);
}

int tg__sandbox_describe_stop(const tg_sandbox *sb, const char *what,
                              char *msg, size_t msglen) {
  if (sb->stop == TG_STOP_BUDGET) {
    snprintf(msg, msglen,
             "%s ran past its time limit of %u ms (stopped at %s); make it "
             "do less per call, or raise the limit (policy_time_limit_ms, "
             "--policy-time-limit)", what, (unsigned)sb->limit_ms, sb->where);
    return 1;
  }
  if (sb->stop == TG_STOP_MEMORY) {
    char cap[32];
    format_bytes(cap, sizeof cap, sb->cap);
    char at[sizeof sb->where + 8] = "";
    if (sb->where[0] && strcmp(sb->where, "?"))
      snprintf(at, sizeof at, " (at %s)", sb->where);
    snprintf(msg, msglen,
             "%s ran out of memory%s: the policies of a generation may hold "
             "at most %s (policy_memory_cap, --policy-memory-cap)", what, at,
             cap);
    return 1;
  }
  return 0;
}

/* ---- the state ---------------------------------------------------------- */

static void set_limits(tg_sandbox *sb, const tg_config *cfg) {
  sb->cap = cfg->policy_memory_cap ? cfg->policy_memory_cap
                                   : TG_DEFAULT_POLICY_MEMORY_CAP;
  sb->limit_ms = cfg->policy_time_limit_ms ? cfg->policy_time_limit_ms
                                           : TG_DEFAULT_POLICY_TIME_LIMIT_MS;
}

lua_State *tg__sandbox_new(const tg_config *cfg, const char *policy_dir,
                           tg_sandbox **out, char *err, size_t errlen) {
  tg_sandbox *sb = calloc(1, sizeof *sb);
  lua_State *L = sb ? luaL_newstate() : NULL;
  if (!L) {
    free(sb);
    snprintf(err, errlen, "cannot create a Lua state: out of memory");
    return NULL;
  }
  sb->L = L;
  set_limits(sb, cfg);
  atomic_init(&sb->stop_epoch, 0);
  atomic_init(&sb->running, NULL);
  atomic_init(&sb->firing, NULL);
  sb->wd = tg__watchdog_new(sb->limit_ms, on_overrun, sb);
  if (!sb->wd) {
    lua_close(L);
    free(sb);
    snprintf(err, errlen, "cannot start the policy watchdog thread");
    return NULL;
  }
  sb->orig = lua_getallocf(L, &sb->orig_ud);
  sb->used = gc_bytes(L);
  lua_setallocf(L, limited_alloc, sb);
  luaL_openlibs(L);
#if !TG_LUA54
  /* Compiled traces skip hooks: with the JIT on, `while true do end`
   * could never be stopped. The interpreter checks them. */
  luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
#endif
  tg__sandbox_lib_open(L, policy_dir, cfg->trusted_policies);
  tg__sandbox_flow_open(L);
  /* a value referenced many times converts to JSON once per reference */
  size_t json_max = sb->cap <= SIZE_MAX / TG_JSON_MEMORY_FACTOR
                        ? sb->cap * TG_JSON_MEMORY_FACTOR : SIZE_MAX;
  tg__json_set_max_memory(L, json_max);
  *out = sb;
  return L;
}

void tg__sandbox_close(lua_State *L, tg_sandbox *sb) {
  if (sb) tg__watchdog_free(sb->wd); /* no hooking while the state goes */
  if (L) lua_close(L);
  free(sb);
}
