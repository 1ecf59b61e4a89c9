/*
 * test_watchdog.c — the policy time limit's watchdog (src/base/watchdog.c)
 * counts the CPU time of the thread it watches: a section that waits
 * (here: sleeps, as a call does that waits for a core on a busy machine)
 * is not stopped at the limit, one that computes is; and a section that
 * never uses CPU is still stopped, at ten times the limit of wall time.
 *
 * The margins hold on a loaded machine and under valgrind: the sleeping
 * section sleeps twice the limit against a wall bound of ten times it,
 * and the computing ones run until the watchdog fires (no deadline).
 */
#include "helpers.h"
#include <stdatomic.h>
#include <time.h>
#include "base/watchdog.h"

#define LIMIT_MS 100u

static _Atomic uint64_t fired; /* the epoch last fired for */

static void on_fire(void *ud, uint64_t epoch) {
  (void)ud;
  atomic_store(&fired, epoch);
}

static void sleep_ms(unsigned ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* Computes until the watchdog fires for epoch e; returns how many rounds. */
static uint64_t spin_until_fired(uint64_t e) {
  volatile uint64_t x = 0;
  while (atomic_load(&fired) != e) x++;
  return x;
}

TEST(a_section_that_waits_is_not_stopped_at_the_limit) {
  atomic_store(&fired, 0);
  tg_watchdog *w = tg__watchdog_new(LIMIT_MS, on_fire, NULL);
  ASSERT_TRUE(w != NULL);
  uint64_t e = tg__watchdog_enter(w);
  sleep_ms(2 * LIMIT_MS); /* no CPU used: not past the limit */
  ASSERT_TRUE(atomic_load(&fired) != e);
  /* the same section then computes: stopped once its CPU time is over */
  ASSERT_TRUE(spin_until_fired(e) > 0);
  tg__watchdog_leave(w);
  tg__watchdog_free(w);
}

TEST(a_section_that_computes_is_stopped) {
  atomic_store(&fired, 0);
  tg_watchdog *w = tg__watchdog_new(LIMIT_MS, on_fire, NULL);
  ASSERT_TRUE(w != NULL);
  for (int i = 0; i < 3; i++) { /* each section on its own */
    uint64_t e = tg__watchdog_enter(w);
    ASSERT_TRUE(spin_until_fired(e) > 0);
    tg__watchdog_leave(w);
  }
  tg__watchdog_free(w);
}

TEST(a_section_blocked_without_cpu_is_stopped_by_wall_time) {
  atomic_store(&fired, 0);
  tg_watchdog *w = tg__watchdog_new(LIMIT_MS, on_fire, NULL);
  ASSERT_TRUE(w != NULL);
  uint64_t e = tg__watchdog_enter(w);
  while (atomic_load(&fired) != e) sleep_ms(10);
  tg__watchdog_leave(w);
  tg__watchdog_free(w);
}

TEST_MAIN(TEST_ENTRY(a_section_that_waits_is_not_stopped_at_the_limit),
          TEST_ENTRY(a_section_that_computes_is_stopped),
          TEST_ENTRY(a_section_blocked_without_cpu_is_stopped_by_wall_time))
