/*
 * watchdog.c — the sampling thread of watchdog.h. The owner's side is two
 * atomic stores and a load; everything that costs (the clocks, the lock,
 * the callback) happens on the watchdog's thread.
 *
 * What is timed is the CPU time of the owner's thread, read through its
 * CPU clock (pthread_getcpuclockid): on a machine shared with other work,
 * a call that waited for a core it did not get has not done too much, and
 * stopping it (a deny) would make the answer depend on the neighbours'
 * load. Wall time still bounds a call that uses no CPU (blocked inside a C
 * function): WALL_FACTOR times the limit. Where the owner's CPU clock
 * cannot be read, wall time alone, as before.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <uv.h>
#include "watchdog.h"

#define NS_PER_MS 1000000ull
#define WALL_FACTOR 10u /* a call blocked without using CPU: 10 × the limit */

struct tg_watchdog {
  /* shared with the owner's thread */
  _Atomic uint64_t epoch;  /* bumped when a section begins */
  _Atomic int inside;      /* a section is running */
  _Atomic int asleep;      /* the thread waits for the next section */
  _Atomic int has_clock;   /* cpu_clock is the owner's */
  _Atomic clockid_t cpu_clock; /* the owner thread's CPU clock */
  /* the owner's own */
  pthread_t owner;
  int has_owner;
  /* the watchdog's own (and fixed after start) */
  uint32_t limit_ms;
  uint64_t limit_ns, wall_ns, tick_ns;
  tg_watchdog_fn fire;
  void *ud;
  uv_thread_t thread;
  uv_mutex_t mu;
  uv_cond_t cv;
  int quit;                /* under mu */
};

/* What the thread remembers between ticks. */
typedef struct {
  uint64_t seen;        /* the epoch being timed (0: none) */
  uint64_t since;       /* when it was first seen inside (wall) */
  uint64_t cpu_since;   /* the owner's CPU time then (0: none read) */
  uint64_t idle_epoch;  /* the epoch last seen outside a section */
  int idle_ticks;       /* ticks in a row outside, with no new section */
} sampler;

/* Sleeps until a section begins (or quit). Called with mu held.
 *
 * Why a grace tick: the owner's side uses no fence (a fence per section
 * would cost more than all the rest), so its store of `inside` and its
 * load of `asleep` may pass each other. The thread announces `asleep`,
 * waits one more tick, and only then looks again: an enter it cannot see
 * yet is one whose load of `asleep` comes after the announcement became
 * visible a tick earlier, so that enter signals (under mu, which this
 * thread holds until cond_wait releases it). */
static void sleep_until_busy(tg_watchdog *w, sampler *s) {
  uint64_t e = atomic_load(&w->epoch);
  atomic_store(&w->asleep, 1);
  (void)uv_cond_timedwait(&w->cv, &w->mu, w->tick_ns);
  /* wakes for a section begun since, even one already over: then back to
   * ticking, so a stream of short sections does not signal at each enter */
  while (!w->quit && !atomic_load(&w->inside) && atomic_load(&w->epoch) == e)
    uv_cond_wait(&w->cv, &w->mu);
  atomic_store(&w->asleep, 0);
  s->idle_ticks = 0;
}

/* The owner thread's CPU time in ns, or 0 when it cannot be read. */
static uint64_t owner_cpu_ns(tg_watchdog *w) {
  struct timespec ts;
  if (!atomic_load(&w->has_clock) ||
      clock_gettime(atomic_load(&w->cpu_clock), &ts) != 0)
    return 0;
  uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  return ns ? ns : 1;
}

/* One tick's look at the owner. Returns the epoch to fire for, or 0. */
static uint64_t sample(tg_watchdog *w, sampler *s) {
  /* inside before epoch: an inside seen set belongs to this epoch or an
   * earlier one (enter bumps the epoch first) */
  int inside = atomic_load(&w->inside);
  uint64_t e = atomic_load(&w->epoch);
  if (!inside) {
    if (e == s->idle_epoch) s->idle_ticks++;
    else s->idle_epoch = e, s->idle_ticks = 1;
    return 0;
  }
  s->idle_ticks = 0;
  uint64_t now = uv_hrtime(), cpu = owner_cpu_ns(w);
  if (e != s->seen) {
    s->seen = e, s->since = now, s->cpu_since = cpu;
    return 0;
  }
  /* past the limit: again each tick until it ends (see tg_watchdog_fn) */
  if (s->cpu_since && cpu) {
    if (cpu - s->cpu_since >= w->limit_ns) return e;
    return now - s->since < w->wall_ns ? 0 : e;
  }
  return now - s->since < w->limit_ns ? 0 : e;
}

static void run(void *arg) {
  tg_watchdog *w = arg;
  sampler s = {0};
  uv_mutex_lock(&w->mu);
  while (!w->quit) {
    if (s.idle_ticks >= 2) {
      sleep_until_busy(w, &s);
      continue;
    }
    (void)uv_cond_timedwait(&w->cv, &w->mu, w->tick_ns);
    if (w->quit) break;
    uint64_t e = sample(w, &s);
    if (e) {
      uv_mutex_unlock(&w->mu); /* the callback may take its time */
      w->fire(w->ud, e);
      uv_mutex_lock(&w->mu);
    }
  }
  uv_mutex_unlock(&w->mu);
}

tg_watchdog *tg__watchdog_new(uint32_t limit_ms, tg_watchdog_fn fire,
                              void *ud) {
  tg_watchdog *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->limit_ms = limit_ms ? limit_ms : 1;
  w->limit_ns = (uint64_t)w->limit_ms * NS_PER_MS;
  w->wall_ns = w->limit_ns * WALL_FACTOR;
  uint64_t tick = w->limit_ns / 10;
  w->tick_ns = tick < NS_PER_MS ? NS_PER_MS
               : tick > 10 * NS_PER_MS ? 10 * NS_PER_MS : tick;
  w->fire = fire;
  w->ud = ud;
  atomic_init(&w->epoch, 0);
  atomic_init(&w->inside, 0);
  atomic_init(&w->asleep, 0);
  atomic_init(&w->has_clock, 0);
  atomic_init(&w->cpu_clock, CLOCK_MONOTONIC);
  int mu = uv_mutex_init(&w->mu), cv = mu == 0 ? uv_cond_init(&w->cv) : -1;
  int th = cv == 0 ? uv_thread_create(&w->thread, run, w) : -1;
  if (th == 0) return w;
  if (cv == 0) uv_cond_destroy(&w->cv);
  if (mu == 0) uv_mutex_destroy(&w->mu);
  free(w);
  return NULL;
}

void tg__watchdog_free(tg_watchdog *w) {
  if (!w) return;
  uv_mutex_lock(&w->mu);
  w->quit = 1;
  uv_cond_signal(&w->cv);
  uv_mutex_unlock(&w->mu);
  uv_thread_join(&w->thread);
  uv_cond_destroy(&w->cv);
  uv_mutex_destroy(&w->mu);
  free(w);
}

/* Plain stores and a plain load on x86: no locked instruction, no fence
 * (see sleep_until_busy for why none is needed). Only this thread writes
 * the epoch. */
uint64_t tg__watchdog_enter(tg_watchdog *w) {
  pthread_t self = pthread_self(); /* a thread-local read */
  if (!w->has_owner || !pthread_equal(self, w->owner)) {
    clockid_t c;
    int ok = pthread_getcpuclockid(self, &c) == 0;
    w->owner = self, w->has_owner = 1;
    atomic_store(&w->has_clock, 0); /* never the old owner's clock */
    if (ok) atomic_store(&w->cpu_clock, c);
    atomic_store(&w->has_clock, ok);
  }
  uint64_t e = atomic_load_explicit(&w->epoch, memory_order_relaxed) + 1;
  atomic_store_explicit(&w->epoch, e, memory_order_relaxed);
  atomic_store_explicit(&w->inside, 1, memory_order_release);
  if (atomic_load_explicit(&w->asleep, memory_order_relaxed)) { /* once per idle period */
    uv_mutex_lock(&w->mu);
    uv_cond_signal(&w->cv);
    uv_mutex_unlock(&w->mu);
  }
  return e;
}

void tg__watchdog_leave(tg_watchdog *w) {
  atomic_store_explicit(&w->inside, 0, memory_order_release);
}

uint32_t tg__watchdog_limit_ms(const tg_watchdog *w) { return w->limit_ms; }

double tg__watchdog_tick_ms(const tg_watchdog *w) {
  return (double)w->tick_ns / NS_PER_MS;
}
