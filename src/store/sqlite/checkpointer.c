/*
 * checkpointer.c — a thread of its own, with a connection of its own,
 * that copies the WAL into the database file when the writer asks.
 * A checkpoint ends with an fsync that can take milliseconds; run by the
 * writer's thread it held up every call whose record came meanwhile. SQLite
 * lets a checkpoint and a writer work at once (the writer restarts the WAL
 * at its next transaction once a checkpoint copied all of it), so here it
 * costs the calls nothing. Asks coalesce: one checkpoint at a time, and
 * one more if asked while it ran.
 */
#include <stdlib.h>
#include "sqlite_store.h"

struct tg_checkpointer {
  sqlite3 *db;
  uv_thread_t thread;
  uv_mutex_t mu;
  uv_cond_t cv;
  int asked, quit;             /* mu */
};

static void checkpointer_main(void *arg) {
  tg_checkpointer *c = arg;
  uv_mutex_lock(&c->mu);
  for (;;) {
    while (!c->asked && !c->quit) uv_cond_wait(&c->cv, &c->mu);
    if (c->quit) break;
    c->asked = 0;
    uv_mutex_unlock(&c->mu);
    /* PASSIVE: never waits for readers (log --follow) nor the writer;
     * what it leaves, the next one takes */
    sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL,
                              NULL);
    uv_mutex_lock(&c->mu);
  }
  uv_mutex_unlock(&c->mu);
}

tg_checkpointer *tg__checkpointer_start(const char *path) {
  char err[TG_ERRMSG];
  tg_checkpointer *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  if (!(c->db = tg__db_open(path, 0, 0, err))) goto fail;
  if (uv_mutex_init(&c->mu) < 0) goto fail_db;
  if (uv_cond_init(&c->cv) < 0) goto fail_mu;
  if (uv_thread_create(&c->thread, checkpointer_main, c) < 0) goto fail_cv;
  return c;
fail_cv:
  uv_cond_destroy(&c->cv);
fail_mu:
  uv_mutex_destroy(&c->mu);
fail_db:
  sqlite3_close(c->db);
fail:
  free(c);
  return NULL;
}

void tg__checkpointer_ask(tg_checkpointer *c) {
  uv_mutex_lock(&c->mu);
  c->asked = 1;
  uv_cond_signal(&c->cv);
  uv_mutex_unlock(&c->mu);
}

void tg__checkpointer_stop(tg_checkpointer *c) {
  if (!c) return;
  uv_mutex_lock(&c->mu);
  c->quit = 1;
  uv_cond_signal(&c->cv);
  uv_mutex_unlock(&c->mu);
  uv_thread_join(&c->thread);
  uv_cond_destroy(&c->cv);
  uv_mutex_destroy(&c->mu);
  sqlite3_close(c->db);
  free(c);
}
