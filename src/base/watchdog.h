/*
 * watchdog.h — a thread that notices when a section of work on another
 * thread runs past a time limit, and calls back (on its own thread) so the
 * owner can interrupt it.
 *
 * Why a thread and an epoch: the section's owner (the loop thread entering
 * policy code, tens of thousands of times a second) must pay next to
 * nothing when nothing overruns — no clock read, no lock, no hook. Entering
 * bumps an epoch counter and raises a flag; the watchdog samples them each
 * tick and times a section only when it sees the same epoch still inside.
 * When nothing runs for two ticks it sleeps on a condition variable, and
 * the next enter wakes it (one lock, once per idle period): an idle
 * runtime costs no CPU.
 *
 * What is timed: the CPU time the owner's thread spends in the section
 * (not the time it waited for a core on a busy machine), and, for a
 * section that uses no CPU (blocked in a C function), 10 × the limit of
 * wall time.
 *
 * Precision: a section is reported between `limit` and `limit + tick`
 * of its CPU time, tick = limit / 10 clamped to 1..10 ms (plus the
 * thread's wake-up latency on a loaded machine).
 */
#ifndef TG_WATCHDOG_H
#define TG_WATCHDOG_H

#include <stdint.h>

typedef struct tg_watchdog tg_watchdog;

/* Called on the watchdog's thread when the section begun at `epoch` is
 * still running `limit` after it began, and again each tick while it
 * goes on (the owner's stores are not fenced: what the first call read may
 * have been stale). The section may end while the callback runs: check
 * `epoch` against what the owner publishes. */
typedef void (*tg_watchdog_fn)(void *ud, uint64_t epoch);

/* Starts the thread. Returns NULL when a thread cannot be made. */
tg_watchdog *tg__watchdog_new(uint32_t limit_ms, tg_watchdog_fn fire, void *ud);
/* Stops and joins the thread; no callback runs after it returns. */
void tg__watchdog_free(tg_watchdog *w);

/* The owner's thread: a section begins (returns its epoch, never 0) / ends.
 * Sections do not nest: the owner counts nesting itself. */
uint64_t tg__watchdog_enter(tg_watchdog *w);
void tg__watchdog_leave(tg_watchdog *w);

uint32_t tg__watchdog_limit_ms(const tg_watchdog *w);
/* The sampling period, in milliseconds (the bound's precision). */
double tg__watchdog_tick_ms(const tg_watchdog *w);

#endif
