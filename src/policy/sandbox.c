/*
 * sandbox.c — the limits of a policy generation's lua_State: the counting
 * allocator (memory cap), the count hook (instruction budget per call from
 * C), and the state's creation. What the standard library lets policies do
 * is sandbox_lib.c.
 *
 * Budget, Redis style: the hook is set once per state with a period of
 * TG_HOOK_PERIOD instructions; entering a call from C only zeroes a
 * counter, so the hot path pays no Lua API call. When the budget runs out
 * the hook raises, and sets the period to 1 so every further instruction
 * raises again: a pcall inside the policy cannot swallow the stop. Back in
 * C the period is restored.
 *
 * Memory: allocations are refused past the cap only while policy code runs
 * (depth > 0). C code pushes call tables and events between calls, outside
 * any protected call, where a refusal would be a panic; those pushes are
 * bounded by the args and event sizes, not by policy code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sandbox.h"
#include "sandbox_lib.h"
#if !TG_LUA54
#include <luajit.h>
#endif

#define TG_HOOK_PERIOD 10000

struct tg_sandbox {
  lua_Alloc orig;           /* the state's own allocator, which we count for */
  void *orig_ud;
  size_t used, cap;         /* bytes */
  uint64_t budget;          /* instructions per call from C */
  uint64_t ticks, max_ticks; /* hook firings this call, and the most allowed */
  int period;               /* instructions between hook firings */
  int depth;                /* calls from C into policy code, nested */
  tg_stop stop;             /* what stopped the current / last call */
  char where[256];          /* file:line the budget stopped */
  lua_State *L;             /* the main thread */
};

/* ---- memory ------------------------------------------------------------ */

static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  tg_sandbox *sb = ud;
  size_t old = ptr ? osize : 0; /* without ptr, osize is a type tag */
  if (nsize > old && sb->depth > 0) {
    size_t room = sb->used < sb->cap ? sb->cap - sb->used : 0;
    if (nsize - old > room) {
      if (sb->stop == TG_STOP_NONE) sb->stop = TG_STOP_MEMORY;
      return NULL; /* Lua collects and retries, then raises "not enough memory" */
    }
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

/* ---- instruction budget -------------------------------------------------- */

static tg_sandbox *sandbox_of(lua_State *L) {
  void *ud = NULL;
  lua_getallocf(L, &ud); /* the allocator's ud is the sandbox: no lookup */
  return ud;
}

static void budget_hook(lua_State *L, lua_Debug *ar) {
  tg_sandbox *sb = sandbox_of(L);
  if (sb->stop != TG_STOP_BUDGET) {
    /* a coroutine left at period 1 by an earlier stop: back to normal */
    if (lua_gethookcount(L) != sb->period)
      lua_sethook(L, budget_hook, LUA_MASKCOUNT, sb->period);
    if (++sb->ticks <= sb->max_ticks) return;
    sb->stop = TG_STOP_BUDGET;
    if (lua_getinfo(L, "Sl", ar))
      snprintf(sb->where, sizeof sb->where, "%s:%d", ar->short_src,
               ar->currentline);
    else
      snprintf(sb->where, sizeof sb->where, "?");
  }
  lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1);
  char msg[400];
  snprintf(msg, sizeof msg, "%s: instruction budget of %llu exceeded", sb->where,
           (unsigned long long)sb->budget);
  lua_pushstring(L, msg);
  lua_error(L);
}

/* A nested call shares the budget of the outermost one. */
static void enter(tg_sandbox *sb) {
  if (sb->depth++ > 0) return;
  sb->ticks = 0;
  sb->stop = TG_STOP_NONE;
}

static void leave(tg_sandbox *sb, lua_State *L) {
  if (--sb->depth > 0 || sb->stop == TG_STOP_NONE) return;
  if (sb->stop == TG_STOP_BUDGET) { /* back in C: the normal period again */
    lua_sethook(sb->L, budget_hook, LUA_MASKCOUNT, sb->period);
    if (L != sb->L) lua_sethook(L, budget_hook, LUA_MASKCOUNT, sb->period);
  } else {
    /* give back at once what the failed call built (LuaJIT has no
     * emergency collection of its own) */
    lua_gc(sb->L, LUA_GCCOLLECT, 0);
  }
}

int tg__sandbox_pcall(tg_sandbox *sb, lua_State *L, int nargs, int nres) {
  enter(sb);
  int st = lua_pcall(L, nargs, nres, 0);
  leave(sb, L);
  return st;
}

int tg__sandbox_resume(tg_sandbox *sb, lua_State *co, lua_State *from,
                       int nargs, int *nres) {
  enter(sb);
  int st = tg_resume(co, from, nargs, nres);
  leave(sb, co);
  return st;
}

void tg__sandbox_poll(lua_State *L) {
  (void)L; /* the watchdog (time bound) lands separately */
}

tg_stop tg__sandbox_stop(const tg_sandbox *sb) { return sb->stop; }

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
             "%s exceeded its instruction budget of %llu (stopped at %s); "
             "make it do less per call, or raise the budget "
             "(hook_instruction_budget, --instruction-budget)",
             what, (unsigned long long)sb->budget, sb->where);
    return 1;
  }
  if (sb->stop == TG_STOP_MEMORY) {
    char cap[32];
    format_bytes(cap, sizeof cap, sb->cap);
    snprintf(msg, msglen,
             "%s ran out of memory: the policies of a generation may hold "
             "at most %s (policy_memory_cap, --policy-memory-cap)", what, cap);
    return 1;
  }
  return 0;
}

/* ---- the state ---------------------------------------------------------- */

static void set_limits(tg_sandbox *sb, const tg_config *cfg) {
  sb->cap = cfg->policy_memory_cap ? cfg->policy_memory_cap
                                   : TG_DEFAULT_POLICY_MEMORY_CAP;
  sb->budget = cfg->hook_instruction_budget ? cfg->hook_instruction_budget
                                            : TG_DEFAULT_INSTRUCTION_BUDGET;
  sb->period = sb->budget < TG_HOOK_PERIOD ? (int)sb->budget : TG_HOOK_PERIOD;
  sb->max_ticks = sb->budget / (uint64_t)sb->period;
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
  sb->orig = lua_getallocf(L, &sb->orig_ud);
  sb->used = gc_bytes(L);
  lua_setallocf(L, limited_alloc, sb);
  luaL_openlibs(L);
#if !TG_LUA54
  /* Compiled traces skip count hooks: with the JIT on, `while true do end`
   * would never be stopped. The interpreter counts every instruction. */
  luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
#endif
  tg__sandbox_lib_open(L, policy_dir, cfg->trusted_policies);
  lua_sethook(L, budget_hook, LUA_MASKCOUNT, sb->period);
  *out = sb;
  return L;
}

void tg__sandbox_close(lua_State *L, tg_sandbox *sb) {
  if (L) lua_close(L); /* finalizers still run under the hook */
  free(sb);
}
