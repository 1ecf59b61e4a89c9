/*
 * test_chain.h — helpers shared by the test_chain_*.c specs of the public
 * C API (include/toolgate.h): policy folders written from strings into a
 * mkdtemp() dir, outcomes and events copied out of their callbacks, a loop
 * driver, and a few small C tools. Every test runs in its own process
 * (tg_test.h), so the globals here start fresh in each test.
 */
#ifndef TG_TEST_CHAIN_H
#define TG_TEST_CHAIN_H

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "tg_test.h"

/* ---- temp policy folders ---------------------------------------------- */

/* A fresh empty directory (malloc'd path); remove with rm_dir. */
static inline char *make_dir(void) {
  char tmpl[] = "/tmp/tg-chain-XXXXXX";
  char *d = mkdtemp(tmpl);
  if (!d) TG_FAIL("mkdtemp: %s", strerror(errno));
  char *p = malloc(strlen(d) + 1);
  ASSERT(p);
  strcpy(p, d);
  return p;
}

/* Writes text into dir/name. */
static inline void write_file(const char *dir, const char *name, const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) TG_FAIL("cannot write %s: %s", path, strerror(errno));
  fputs(text, f);
  fclose(f);
}

/* Removes the files of dir (flat), then dir; frees the path. */
static inline void rm_dir(char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char path[1024];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
  free(dir);
}

/* ---- runtimes --------------------------------------------------------- */

/* A runtime that must come up; policies may be NULL. */
static inline tg_runtime *new_rt(tg_config *cfg) {
  char err[TG_ERRMSG] = "";
  tg_runtime *rt = tg_runtime_new(cfg, NULL, err);
  if (!rt) TG_FAIL("tg_runtime_new failed: %s", err);
  return rt;
}

/* Runs the loop one turn at a time until *counter reaches want. */
static inline void run_until(tg_runtime *rt, const int *counter, int want) {
  while (*counter < want)
    if (uv_run(tg_runtime_loop(rt), UV_RUN_ONCE) == 0 && *counter < want)
      TG_FAIL("the loop ran out of work with %d of %d done", *counter, want);
}

/* Runs the loop for about ms milliseconds (keeps it alive with a timer). */
static inline void idle_cb_(uv_timer_t *t) { (void)t; }
static inline void run_for(tg_runtime *rt, uint64_t ms) {
  uv_timer_t *t = malloc(sizeof *t);
  ASSERT(t);
  uv_timer_init(tg_runtime_loop(rt), t);
  uv_update_time(tg_runtime_loop(rt));
  uv_timer_start(t, idle_cb_, ms, 0);
  while (uv_is_active((uv_handle_t *)t))
    uv_run(tg_runtime_loop(rt), UV_RUN_ONCE);
  uv_close((uv_handle_t *)t, (uv_close_cb)free);
  uv_run(tg_runtime_loop(rt), UV_RUN_NOWAIT);
}

/* ---- outcomes --------------------------------------------------------- */

typedef struct {
  int n;                 /* times done was called */
  tg_status status;
  tg_phase phase;
  char id[64], tool[64], code[64], rule[128];
  char message[2048];
  int has_rule, retryable, attempts;
  tg_verdict verdict;
  double duration_ms;
  cJSON *result;         /* copy, or NULL */
  cJSON *json;           /* tg_outcome_to_json */
} outc;

static inline void copy_str(char *dst, size_t n, const char *s) {
  snprintf(dst, n, "%s", s ? s : "");
}

static inline void on_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  (void)rt;
  outc *r = ud;
  r->n++;
  r->status = o->status;
  r->phase = o->error.phase;
  copy_str(r->id, sizeof r->id, o->id);
  copy_str(r->tool, sizeof r->tool, o->tool);
  copy_str(r->code, sizeof r->code, o->error.code);
  copy_str(r->message, sizeof r->message, o->error.message);
  copy_str(r->rule, sizeof r->rule, o->rule);
  r->has_rule = o->rule != NULL;
  r->retryable = o->error.retryable;
  r->attempts = o->attempts;
  r->verdict = o->verdict;
  r->duration_ms = o->duration_ms;
  cJSON_Delete(r->result);
  r->result = o->result ? cJSON_Duplicate(o->result, 1) : NULL;
  cJSON_Delete(r->json);
  r->json = tg_outcome_to_json(o);
}

static inline void outc_free(outc *r) {
  cJSON_Delete(r->result);
  cJSON_Delete(r->json);
  r->result = r->json = NULL;
}

/* Starts a call that must be accepted. */
static inline void start_call(tg_runtime *rt, const char *id, const char *tool,
                       const char *args_json, outc *out) {
  char err[TG_ERRMSG] = "";
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.id = id;
  req.tool = tool;
  req.args_json = args_json;
  int rc = tg_call_start(rt, &req, on_done, out, err);
  if (rc != 0) TG_FAIL("tg_call_start(%s) = %d: %s", tool, rc, err);
}

/* The number (or -1) at key of a JSON object. */
static inline double num_at(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static inline const char *str_at(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---- events ----------------------------------------------------------- */

typedef struct {
  uint64_t seq;
  char type[40];
  char call_id[64];
  cJSON *data;
} rec_ev;

typedef struct {
  rec_ev *ev;
  int n, cap;
} recorder;

static inline void on_event(tg_runtime *rt, const tg_event *e, void *ud) {
  (void)rt;
  recorder *r = ud;
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 64;
    r->ev = realloc(r->ev, (size_t)r->cap * sizeof *r->ev);
    ASSERT(r->ev);
  }
  rec_ev *x = &r->ev[r->n++];
  x->seq = e->seq;
  copy_str(x->type, sizeof x->type, e->type);
  copy_str(x->call_id, sizeof x->call_id, e->call_id);
  x->data = cJSON_Duplicate(e->data, 1);
}

static inline void recorder_free(recorder *r) {
  for (int i = 0; i < r->n; i++) cJSON_Delete(r->ev[i].data);
  free(r->ev);
  memset(r, 0, sizeof *r);
}

/* How many recorded events have this type (and call id, if not NULL). */
static inline int count_type(const recorder *r, const char *type, const char *id) {
  int k = 0;
  for (int i = 0; i < r->n; i++)
    if (!strcmp(r->ev[i].type, type) && (!id || !strcmp(r->ev[i].call_id, id)))
      k++;
  return k;
}

/* Index of the first event of a type, or -1. */
static inline int find_type(const recorder *r, const char *type) {
  for (int i = 0; i < r->n; i++)
    if (!strcmp(r->ev[i].type, type)) return i;
  return -1;
}

/* ---- C tools ---------------------------------------------------------- */

/* A tool definition with the given start/cancel; read-only so no rule or
 * default verdict asks for it. */
static inline tg_tool_def tool_def(const char *name, tg_tool_start_fn start,
                            tg_tool_cancel_fn cancel, void *ud) {
  tg_tool_def d;
  memset(&d, 0, sizeof d);
  d.name = name;
  d.read_only = 1;
  d.start = start;
  d.cancel = cancel;
  d.ud = ud;
  return d;
}

static inline void must_register(tg_runtime *rt, const tg_tool_def *d) {
  char err[TG_ERRMSG] = "";
  int rc = tg_tool_register(rt, d, err);
  if (rc != 0) TG_FAIL("tg_tool_register(%s) = %d: %s", d->name, rc, err);
}

/* echo: finishes at once with {"echo": args}. */
static int echo_starts __attribute__((unused));
static inline void echo_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)ud;
  echo_starts++;
  cJSON *r = cJSON_CreateObject();
  cJSON_AddItemToObject(r, "echo", cJSON_Duplicate(args, 1));
  tg_exec_finish_ok(ex, r);
}

/* A running C tool that finishes from a timer (or is stopped). */
typedef struct {
  tg_exec *ex;
  uv_timer_t timer;
  int timer_open;
  int starts, cancels;
  uint64_t delay_ms;       /* finish ok after this; 0: never on its own */
  int cancel_finishes;     /* the cancel fn finishes with a partial result */
  int late_finished;
  char late_call_id[64];
} slow_tool;

static inline void slow_timer_cb(uv_timer_t *t) {
  slow_tool *s = t->data;
  tg_exec *ex = s->ex;
  s->ex = NULL;
  if (!ex) return;
  /* the attempt may have been given up (no cancel fn): the id stays valid */
  copy_str(s->late_call_id, sizeof s->late_call_id, tg_exec_call_id(ex));
  s->late_finished = 1;
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "done", "late or not");
  tg_exec_finish_ok(ex, r);
}

static inline void slow_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)args;
  slow_tool *s = ud;
  s->starts++;
  s->ex = ex;
  if (!s->delay_ms) return;
  if (!s->timer_open) {
    uv_timer_init(tg_runtime_loop(tg_exec_runtime(ex)), &s->timer);
    s->timer.data = s;
    s->timer_open = 1;
  }
  /* the loop's cached clock may be stale (runtime creation, a long turn) */
  uv_update_time(tg_runtime_loop(tg_exec_runtime(ex)));
  uv_timer_start(&s->timer, slow_timer_cb, s->delay_ms, 0);
}

static inline void slow_cancel(tg_exec *ex, void *ud) {
  slow_tool *s = ud;
  s->cancels++;
  if (s->timer_open) uv_timer_stop(&s->timer);
  s->ex = NULL;
  if (!s->cancel_finishes) return;
  cJSON *partial = cJSON_CreateObject();
  cJSON_AddNumberToObject(partial, "lines_so_far", 2);
  tg_exec_finish_error(ex, partial, "STOPPED", "stopped on request", 0);
}

/* Closes the tool's timer (before the runtime's loop goes away). */
static inline void slow_close(tg_runtime *rt, slow_tool *s) {
  if (!s->timer_open) return;
  uv_close((uv_handle_t *)&s->timer, NULL);
  s->timer_open = 0;
  uv_run(tg_runtime_loop(rt), UV_RUN_NOWAIT);
}

/* ---- approvers -------------------------------------------------------- */

typedef struct {
  int n;                   /* times asked */
  uint64_t last_id;
  char last_call_id[64], last_tool[64], last_session[64];
  cJSON *last_args;
  int answer_now;          /* 0: never answers from the callback */
  tg_always_scope scope;
  const char *guidance;
} approver;

static inline void approver_cb(tg_runtime *rt, const tg_approval_request *req,
                        void *ud) {
  approver *a = ud;
  a->n++;
  a->last_id = req->approval_id;
  copy_str(a->last_call_id, sizeof a->last_call_id, req->call_id);
  copy_str(a->last_tool, sizeof a->last_tool, req->tool);
  copy_str(a->last_session, sizeof a->last_session, req->session);
  cJSON_Delete(a->last_args);
  a->last_args = req->args ? cJSON_Duplicate(req->args, 1) : NULL;
  if (a->answer_now)
    ASSERT_EQ(tg_approval_answer(rt, req->approval_id,
                                 (tg_answer)a->answer_now, a->scope,
                                 a->guidance),
              0);
}

static inline void approver_free(approver *a) {
  cJSON_Delete(a->last_args);
  a->last_args = NULL;
}

#endif
