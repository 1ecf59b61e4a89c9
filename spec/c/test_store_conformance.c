/*
 * test_store_conformance.c — what every storage backend must do, written
 * against the storage interface (store/store.h) and the public API only,
 * never a backend's own types: the audit trail (appended through the
 * interface, answered through each record's callback, read back oldest
 * first, filtered, followed), sessions and messages and their search,
 * remembered approvals (granted, looked up on the loop, revoked, expired,
 * kept to their session or project, queued with a callback), the usage
 * ledger, memories (recorded, recalled, kept to their scope), what an
 * agent's hooks keep of a session, a session's taint, an export imported back, two
 * stores open on one database at once, and a crash journal's promises
 * (every reader sees every answered record, a killed process loses none,
 * a torn record is dropped).
 *
 * Each backend comes as a factory (factories[] below): the address of a
 * fresh database and how to remove it. Every test runs once per factory,
 * on a store opened on the caller's thread (tg_store_open) and on a
 * runtime's store (its writer, its loop) where the contract differs. A
 * new backend (PostgreSQL) adds a factory here and passes unchanged.
 */
#include "helpers.h"
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include "store/store.h"
#include "internal.h"

/* ---- the backends ---------------------------------------------------------- */

typedef struct {
  const char *name;
  /* The address of a fresh, empty database for one test (malloc'd). */
  char *(*fresh)(void);
  /* Removes what fresh made (addr freed). */
  void (*gone)(char *addr);
  /* One address opened twice is one database (not a private ":memory:"). */
  int shared;
} store_factory;

static char *sqlite_file_fresh(void) {
  char *dir = temp_dir();
  char *p = path_join(dir, "conformance.db");
  free(dir);
  return p;
}

static void sqlite_file_gone(char *addr) {
  char *slash = strrchr(addr, '/');
  if (slash) *slash = '\0';
  remove_tree(addr);
}

static char *sqlite_memory_fresh(void) { return strdup(":memory:"); }

static void sqlite_memory_gone(char *addr) { free(addr); }

static const store_factory factories[] = {
    {"sqlite-file", sqlite_file_fresh, sqlite_file_gone, 1},
    {"sqlite-memory", sqlite_memory_fresh, sqlite_memory_gone, 0},
};

static const store_factory *F; /* the one the tests run on */

/* ---- stores ------------------------------------------------------------------ */

/* A store on the caller's thread at addr. */
static tg_store *open_at(const char *addr) {
  char err[TG_ERRMSG] = "";
  tg_store *st = tg_store_open(addr, 1, err);
  if (!st) TG_FAIL("%s: open %s: %s", F->name, addr, err);
  ASSERT_NOT_NULL(st->be);
  return st;
}

/* A runtime whose store is at addr (its session "conf"). */
static tg_runtime *runtime_at(const char *addr) {
  tg_config cfg = config_allowing();
  cfg.db = addr;
  cfg.session = "conf";
  tg_runtime *rt = new_runtime(&cfg);
  ASSERT_NOT_NULL(tg_runtime_store(rt));
  return rt;
}

/* Runs body on a fresh caller's store, then on a fresh runtime's store. */
static void on_each_store(void (*body)(tg_store *st, tg_runtime *rt)) {
  char *addr = F->fresh();
  tg_store *st = open_at(addr);
  body(st, NULL);
  tg_store_close(st);
  F->gone(addr);
  addr = F->fresh();
  tg_runtime *rt = runtime_at(addr);
  body(tg_runtime_store(rt), rt);
  tg_runtime_free(rt);
  F->gone(addr);
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A policy's memory, through the runtime (its session and project). */
static int64_t remember(tg_runtime *rt, const char *scope, const char *text) {
  char err[TG_ERRMSG] = "";
  tg_memory m = {"fact", text, NULL, scope, NULL, NULL};
  int64_t id = tg_runtime_remember(rt, &m, err);
  if (id <= 0) TG_FAIL("remember %s: %s", text, err);
  return id;
}

static cJSON *recall(tg_runtime *rt, const char *q, const char *scope) {
  char err[TG_ERRMSG] = "";
  tg_recall_filter f = {q, scope, NULL, NULL, 0, 0, 0};
  cJSON *a = tg_runtime_recall(rt, &f, err);
  if (!a) TG_FAIL("recall %s: %s", q, err);
  return a;
}

static int array_size(const cJSON *a) {
  ASSERT_TRUE(cJSON_IsArray(a));
  return cJSON_GetArraySize(a);
}

/* ---- audit ------------------------------------------------------------------- */

typedef struct {
  tg_audit_rec rec;
  char call_id[32];
  cJSON *args;
  tg_err error;
  int *committed, *ok;
} conf_rec;

static void rec_committed(tg_audit_rec *r, int ok) {
  conf_rec *c = (conf_rec *)r; /* rec first */
  (*c->committed)++;
  if (ok) (*c->ok)++;
}

TEST(audit_appends_are_answered_then_read_back_oldest_first) {
  char *addr = F->fresh();
  tg_runtime *rt = runtime_at(addr);
  tg_store *st = tg_runtime_store(rt);
  enum { N = 40 };
  static conf_rec recs[N];
  int committed = 0, ok = 0;
  for (int i = 0; i < N; i++) {
    conf_rec *c = &recs[i];
    snprintf(c->call_id, sizeof c->call_id, "c%03d", i);
    c->args = cJSON_CreateObject();
    cJSON_AddNumberToObject(c->args, "i", i);
    c->committed = &committed;
    c->ok = &ok;
    c->rec = (tg_audit_rec){.call_id = c->call_id, .session = "audit-s",
                            .tool = i % 2 ? "odd" : "even", .args = c->args,
                            .verdict = TG_VERDICT_ALLOW, .attempts = 1,
                            .status = TG_STATUS_OK, .error = &c->error,
                            .ts_ms = 1700000000000 + i, .duration_ms = 1.5,
                            .committed = rec_committed};
    st->be->audit_append(st, &c->rec);
    ASSERT_INT_EQ(committed, 0); /* never before append returns */
  }
  run_until(rt, &committed, N);
  ASSERT_INT_EQ(ok, N);
  char err[TG_ERRMSG] = "";
  tg_audit_filter f = {.session = "audit-s", .limit = 1000};
  cJSON *all = tg_store_audit(st, &f, err);
  ASSERT_NOT_NULL(all);
  ASSERT_INT_EQ(array_size(all), N);
  for (int i = 0; i < N; i++) {
    const cJSON *r = cJSON_GetArrayItem(all, i);
    ASSERT_STR_EQ(str_at(r, "call_id"), recs[i].call_id);
    ASSERT_NUM_EQ(num_at(cJSON_GetObjectItemCaseSensitive(r, "args"), "i"), i);
    ASSERT_STR_EQ(str_at(r, "status"), "ok");
  }
  /* the latest limit, oldest first */
  f.limit = 5;
  cJSON *last = tg_store_audit(st, &f, err);
  ASSERT_INT_EQ(array_size(last), 5);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(last, 0), "call_id"), "c035");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(last, 4), "call_id"), "c039");
  /* followed: after a row's id, oldest first */
  f.after_id = (int64_t)num_at(cJSON_GetArrayItem(all, 9), "id");
  cJSON *next = tg_store_audit(st, &f, err);
  ASSERT_INT_EQ(array_size(next), 5);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(next, 0), "call_id"), "c010");
  /* by tool, by call id */
  tg_audit_filter by_tool = {.session = "audit-s", .tool = "odd",
                             .limit = 1000};
  cJSON *odd = tg_store_audit(st, &by_tool, err);
  ASSERT_INT_EQ(array_size(odd), N / 2);
  tg_audit_filter one = {.call_id = "c007"};
  cJSON *c7 = tg_store_audit(st, &one, err);
  ASSERT_INT_EQ(array_size(c7), 1);
  /* a bad filter is a failure */
  tg_audit_filter bad = {.status = "no-such-status"};
  ASSERT_NULL(tg_store_audit(st, &bad, err));
  ASSERT_TRUE(err[0]);
  cJSON_Delete(all);
  cJSON_Delete(last);
  cJSON_Delete(next);
  cJSON_Delete(odd);
  cJSON_Delete(c7);
  for (int i = 0; i < N; i++) cJSON_Delete(recs[i].args);
  tg_runtime_free(rt);
  F->gone(addr);
}

/* ---- sessions, messages, search ------------------------------------------------ */

static void sessions_body(tg_store *st, tg_runtime *rt) {
  (void)rt;
  char err[TG_ERRMSG] = "", id[TG_SESSION_ID_MAX];
  tg_session_spec spec = {.id = "conv-1", .title = "first", .started_ms = 1000};
  ASSERT_OK(tg_session_begin(st, &spec, id, err));
  ASSERT_STR_EQ(id, "conv-1");
  char fresh[TG_SESSION_ID_MAX];
  ASSERT_OK(tg_session_begin(st, NULL, fresh, err));
  ASSERT_STARTS_WITH(fresh, "s-");
  cJSON *calls = cJSON_Parse("[{\"name\":\"grep\"}]");
  tg_message m1 = {"conv-1", "user", "where is the banana bread recipe",
                   NULL, 2000};
  tg_message m2 = {"conv-1", "assistant", NULL, calls, 3000};
  tg_message m3 = {"conv-1", "tool", "found: banana.md", NULL, 4000};
  int64_t i1 = tg_message_record(st, &m1, err);
  int64_t i2 = tg_message_record(st, &m2, err);
  int64_t i3 = tg_message_record(st, &m3, err);
  ASSERT_TRUE(i1 > 0 && i2 > i1 && i3 > i2);
  tg_message stray = {"no-such-session", "user", "hi", NULL, 0};
  ASSERT_INT_EQ(tg_message_record(st, &stray, err), -ENOENT);
  tg_message bad_role = {"conv-1", "robot", "hi", NULL, 0};
  ASSERT_INT_EQ(tg_message_record(st, &bad_role, err), -EINVAL);

  cJSON *s = tg_store_session(st, "conv-1", err);
  ASSERT_NOT_NULL(s);
  ASSERT_STR_EQ(str_at(s, "title"), "first");
  ASSERT_NUM_EQ(num_at(s, "started"), 1000);
  const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(s, "messages");
  ASSERT_INT_EQ(array_size(msgs), 3);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(msgs, 0), "role"), "user");
  const cJSON *tc = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(msgs, 1),
                                        "tool_calls");
  ASSERT_TRUE(cJSON_IsArray(tc)); /* JSON back, not text */
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(tc, 0), "name"), "grep");
  ASSERT_TRUE(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(s, "calls")));
  cJSON_Delete(s);
  ASSERT_NULL(tg_store_session(st, "no-such-session", err));
  ASSERT_CONTAINS(err, "no session");

  /* resumed: title kept unless given */
  tg_session_spec again = {.id = "conv-1"};
  ASSERT_OK(tg_session_begin(st, &again, id, err));
  ASSERT_OK(tg_session_end(st, "conv-1", err));
  ASSERT_INT_EQ(tg_session_end(st, "no-such-session", err), -ENOENT);
  s = tg_store_session(st, "conv-1", err);
  ASSERT_STR_EQ(str_at(s, "title"), "first");
  ASSERT_TRUE(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(s, "ended")));
  cJSON_Delete(s);

  cJSON *list = tg_store_sessions(st, 0, err);
  ASSERT_NOT_NULL(list);
  int seen = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, list) if (!strcmp(str_at(e, "id"), "conv-1")) {
    seen = 1;
    ASSERT_NUM_EQ(num_at(e, "messages"), 3);
  }
  ASSERT_TRUE(seen);
  cJSON_Delete(list);

  cJSON *hits = NULL;
  tg_search_filter q = {.query = "banana"};
  ASSERT_OK(tg_store_search(st, &q, &hits, err));
  ASSERT_INT_EQ(array_size(hits), 2);
  const cJSON *h = cJSON_GetArrayItem(hits, 0);
  ASSERT_STR_EQ(str_at(h, "kind"), "message");
  ASSERT_STR_EQ(str_at(h, "session"), "conv-1");
  ASSERT_CONTAINS(str_at(h, "snippet"), "[banana");
  cJSON_Delete(hits);
  tg_search_filter other = {.query = "banana", .session = fresh};
  ASSERT_OK(tg_store_search(st, &other, &hits, err));
  ASSERT_INT_EQ(array_size(hits), 0);
  cJSON_Delete(hits);
  tg_search_filter empty = {.query = ""};
  ASSERT_INT_EQ(tg_store_search(st, &empty, &hits, err), -EINVAL);
  tg_search_filter broken = {.query = "\"unbalanced"};
  ASSERT_INT_EQ(tg_store_search(st, &broken, &hits, err), -EINVAL);
  ASSERT_NULL(hits);
  cJSON_Delete(calls);
}

TEST(sessions_keep_their_messages_in_order_and_are_searched) {
  on_each_store(sessions_body);
}

TEST(sessions_begin_resume_and_end) {
  char *dir = temp_dir(), *addr = F->fresh();
  tg_store *st = open_at(addr);
  char err[TG_ERRMSG] = "", id[TG_SESSION_ID_MAX], id2[TG_SESSION_ID_MAX];
  tg_session_spec s = {NULL, dir, "first", 1000};
  ASSERT_INT_EQ(tg_session_begin(st, &s, id, err), 0);
  ASSERT_STARTS_WITH(id, "s-");
  ASSERT_INT_EQ(strlen(id), 18);
  ASSERT_INT_EQ(tg_session_begin(st, &s, id2, err), 0);
  ASSERT_TRUE(strcmp(id, id2) != 0);
  ASSERT_INT_EQ(tg_session_end(st, id, err), 0);
  cJSON *one = tg_store_session(st, id, err);
  ASSERT_NOT_NULL(one);
  ASSERT_TRUE(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(one, "ended")));
  ASSERT_STR_EQ(str_at(one, "title"), "first");
  ASSERT_STR_EQ(str_at(one, "project"), dir);
  cJSON_Delete(one);
  /* resumed: its end cleared, its title kept */
  tg_session_spec again = {id, NULL, NULL, 0};
  ASSERT_INT_EQ(tg_session_begin(st, &again, id2, err), 0);
  ASSERT_STR_EQ(id2, id);
  one = tg_store_session(st, id, err);
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(one, "ended")));
  ASSERT_STR_EQ(str_at(one, "title"), "first");
  ASSERT_NUM_EQ(cJSON_GetObjectItemCaseSensitive(one, "started")->valuedouble, 1000);
  cJSON_Delete(one);
  cJSON *all = tg_store_sessions(st, 0, err);
  ASSERT_INT_EQ(cJSON_GetArraySize(all), 2);
  cJSON_Delete(all);
  /* hostile */
  tg_session_spec bad = {"a\nb", NULL, NULL, 0};
  ASSERT_INT_EQ(tg_session_begin(st, &bad, id2, err), -EINVAL);
  ASSERT_CONTAINS(err, "control character");
  bad.id = "";
  ASSERT_INT_EQ(tg_session_begin(st, &bad, id2, err), -EINVAL);
  char big[300];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  bad.id = big;
  ASSERT_INT_EQ(tg_session_begin(st, &bad, id2, err), -EINVAL);
  ASSERT_INT_EQ(tg_session_end(st, "nope", err), -ENOENT);
  ASSERT_CONTAINS(err, "no session 'nope'");
  ASSERT_NULL(tg_store_session(st, "nope", err));
  tg_store_close(st);
  F->gone(addr);
  remove_tree(dir);
}

/* ---- approvals ------------------------------------------------------------------ */

/* Is a call of tool with args (JSON text) in session covered, at now_ms? */
static int64_t covered(tg_store *st, const char *tool, const char *args,
                       const char *session, const char *project,
                       int64_t now_ms) {
  cJSON *a = cJSON_Parse(args);
  tg_approval_query q = {.tool = tool, .session = session, .project = project,
                         .args = a, .now_ms = now_ms};
  int64_t id = 0;
  int hit = tg__approval_find(st, &q, &id);
  tg__approval_query_done(&q);
  cJSON_Delete(a);
  return hit ? id : 0;
}

static int64_t grant(tg_store *st, tg_always_spec s) {
  char err[TG_ERRMSG] = "";
  int64_t id = tg_store_grant(st, &s, err);
  if (id <= 0) TG_FAIL("%s: grant: %s", F->name, err);
  return id;
}

static void approvals_body(tg_store *st, tg_runtime *rt) {
  char err[TG_ERRMSG] = "";
  int64_t now = now_ms();

  int64_t pat = grant(st, (tg_always_spec){.scope = TG_SCOPE_PATTERN,
                                           .arg = "command",
                                           .glob = "npm test*",
                                           .tool = "sh", .session = "s1"});
  cJSON *key = cJSON_Parse("{\"path\":\"a.txt\",\"token\":\"AKIAABCDEFGHIJKLMNOP\"}");
  int64_t exact = grant(st, (tg_always_spec){.scope = TG_SCOPE_ARGS,
                                             .tool = "write", .args = key,
                                             .session = "s1"});
  char *proj = temp_dir();
  int64_t whole = grant(st, (tg_always_spec){.scope = TG_SCOPE_TOOL,
                                             .where = TG_WHERE_PROJECT,
                                             .tool = "ls", .project = proj});
  int64_t brief = grant(st, (tg_always_spec){.scope = TG_SCOPE_TOOL,
                                             .tool = "date", .session = "s1",
                                             .until_ms = now + 400});
  ASSERT_TRUE(pat > 0 && exact > pat && whole > exact && brief > whole);

  if (rt) { /* looked up on the loop, without I/O */
    ASSERT_INT_EQ(covered(st, "sh", "{\"command\":\"npm test --ci\"}", "s1",
                          NULL, now), pat);
    ASSERT_INT_EQ(covered(st, "sh", "{\"command\":\"rm -rf /\"}", "s1", NULL,
                          now), 0);
    ASSERT_INT_EQ(covered(st, "sh", "{\"command\":\"npm test\"}", "s2", NULL,
                          now), 0); /* another session */
    ASSERT_INT_EQ(covered(st, "write", "{\"token\":\"AKIAABCDEFGHIJKLMNOP\","
                          "\"path\":\"a.txt\"}", "s1", NULL, now), exact);
    ASSERT_INT_EQ(covered(st, "write", "{\"path\":\"b.txt\"}", "s1", NULL,
                          now), 0);
    char *real = realpath(proj, NULL);
    ASSERT_INT_EQ(covered(st, "ls", "{}", "any", real, now), whole);
    ASSERT_INT_EQ(covered(st, "ls", "{}", "any", "/elsewhere", now), 0);
    free(real);
    ASSERT_INT_EQ(covered(st, "date", "{}", "s1", NULL, now), brief);
    ASSERT_INT_EQ(covered(st, "date", "{}", "s1", NULL, now + 400), 0);
  }

  cJSON *in_force = tg_store_approvals(st, 0, err);
  ASSERT_INT_EQ(array_size(in_force), 4);
  const cJSON *a1 = cJSON_GetArrayItem(in_force, 1);
  ASSERT_STR_EQ(str_at(a1, "scope"), "args");
  /* exact args are kept masked, never as given */
  char *shown = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(a1, "args"));
  ASSERT_NOT_CONTAINS(shown, "AKIAABCDEFGHIJKLMNOP");
  ASSERT_CONTAINS(shown, "a.txt");
  free(shown);
  cJSON_Delete(in_force);

  ASSERT_OK(tg_store_revoke(st, pat, err));
  ASSERT_INT_EQ(tg_store_revoke(st, pat, err), -ENOENT);
  ASSERT_INT_EQ(tg_store_revoke(st, 999999, err), -ENOENT);
  if (rt)
    ASSERT_INT_EQ(covered(st, "sh", "{\"command\":\"npm test\"}", "s1", NULL,
                          now), 0);
  usleep(500 * 1000); /* brief expires */
  in_force = tg_store_approvals(st, 0, err);
  ASSERT_INT_EQ(array_size(in_force), 2);
  ASSERT_NUM_EQ(num_at(cJSON_GetArrayItem(in_force, 0), "id"), exact);
  cJSON_Delete(in_force);
  ASSERT_INT_EQ(tg_store_revoke(st, brief, err), -ENOENT); /* expired */
  cJSON *all = tg_store_approvals(st, 1, err);
  ASSERT_INT_EQ(array_size(all), 4);
  ASSERT_TRUE(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(all, 0),
                                                 "revoked")));
  cJSON_Delete(all);
  /* a bad spec stores nothing */
  tg_always_spec no_tool = {.scope = TG_SCOPE_TOOL, .session = "s1"};
  ASSERT_TRUE(tg_store_grant(st, &no_tool, err) < 0);
  cJSON_Delete(key);
  remove_tree(proj);
}

TEST(approvals_are_granted_looked_up_revoked_and_expire) {
  on_each_store(approvals_body);
}

static void approval_stored(void *arg, int64_t id) { *(int64_t *)arg = id; }

TEST(an_approval_queued_on_the_loop_answers_through_its_callback) {
  char *addr = F->fresh();
  tg_runtime *rt = runtime_at(addr);
  tg_store *st = tg_runtime_store(rt);
  tg_approval a = {.scope = TG_SCOPE_TOOL, .tool = "make",
                   .where = TG_WHERE_SESSION, .session = "conf"};
  int64_t id = -1;
  ASSERT_OK(st->be->approval_add(st, &a, "call-1", approval_stored, &id));
  ASSERT_INT_EQ(id, -1); /* never before add returns */
  uv_loop_t *loop = tg_runtime_loop(rt);
  while (id == -1) uv_run(loop, UV_RUN_ONCE);
  ASSERT_TRUE(id > 0);
  /* in force for the lookup by the time the callback ran */
  ASSERT_INT_EQ(covered(st, "make", "{}", "conf", NULL, 1), id);
  char err[TG_ERRMSG] = "";
  cJSON *list = tg_store_approvals(st, 0, err);
  ASSERT_INT_EQ(array_size(list), 1);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(list, 0), "by"), "call-1");
  cJSON_Delete(list);
  tg_runtime_free(rt);
  F->gone(addr);
}

/* ---- the usage ledger ------------------------------------------------------------ */

static void usage_body(tg_store *st, tg_runtime *rt) {
  char err[TG_ERRMSG] = "";
  tg_usage u[] = {{"u-a", 1, "big", 100, 10, 0.5, 1000},
                  {"u-a", 2, "small", 50, 5, 0.25, 2000},
                  {"u-b", 1, "big", 7, 3, 1.0, 3000}};
  for (size_t i = 0; i < 3; i++) {
    if (rt) ASSERT_OK(tg_record_usage(rt, &u[i], err));
    else ASSERT_OK(st->be->usage_append(st, &u[i], err));
  }
  tg_usage_total t;
  ASSERT_OK(tg_store_usage(st, NULL, &t, err));
  ASSERT_INT_EQ(t.records, 3);
  ASSERT_INT_EQ(t.input_tokens, 157);
  ASSERT_INT_EQ(t.output_tokens, 18);
  ASSERT_NUM_NEAR(t.cost, 1.75, 1e-9);
  tg_usage_filter by_session = {.session = "u-a"};
  ASSERT_OK(tg_store_usage(st, &by_session, &t, err));
  ASSERT_INT_EQ(t.records, 2);
  tg_usage_filter by_model = {.model = "big"};
  ASSERT_OK(tg_store_usage(st, &by_model, &t, err));
  ASSERT_INT_EQ(t.records, 2);
  ASSERT_NUM_NEAR(t.cost, 1.5, 1e-9);
  tg_usage_filter window = {.since_ms = 2000, .until_ms = 3000};
  ASSERT_OK(tg_store_usage(st, &window, &t, err));
  ASSERT_INT_EQ(t.records, 1);
  ASSERT_INT_EQ(t.since_ms, 2000);
  tg_usage_filter today = {.period = "day"};
  ASSERT_OK(tg_store_usage(st, &today, &t, err));
  ASSERT_INT_EQ(t.records, 0); /* 1970 is not today */
  ASSERT_TRUE(t.since_ms > 3000);
  tg_usage_filter bad = {.period = "fortnight"};
  ASSERT_INT_EQ(tg_store_usage(st, &bad, &t, err), -EINVAL);
}

TEST(usage_records_are_summed_by_session_model_and_time) {
  on_each_store(usage_body);
}

TEST(usage_records_are_summed_per_period_and_filter) {
  char *addr = F->fresh();
  tg_config cfg = config_allowing();
  cfg.db = addr;
  cfg.session = "main";
  tg_runtime *rt = new_runtime(&cfg);
  char err[TG_ERRMSG] = "";
  int64_t now = now_ms();
  tg_usage a = {.model = "big", .input_tokens = 1000, .output_tokens = 200,
                .cost = 0.5, .turn = 1};
  tg_usage b = {.session = "side", .model = "small", .input_tokens = 10,
                .output_tokens = 5, .cost = 0.01};
  tg_usage old = {.model = "big", .input_tokens = 7, .cost = 9,
                  .ts_ms = now - 40LL * 86400000};
  ASSERT_INT_EQ(tg_record_usage(rt, &a, err), 0);
  ASSERT_INT_EQ(tg_record_usage(rt, &a, err), 0);
  ASSERT_INT_EQ(tg_record_usage(rt, &b, err), 0);
  ASSERT_INT_EQ(tg_record_usage(rt, &old, err), 0);
  tg_store *st = tg_runtime_store(rt); /* reads the runtime's own writes */
  tg_usage_total t;
  ASSERT_INT_EQ(tg_store_usage(st, NULL, &t, err), 0);
  ASSERT_INT_EQ(t.records, 4);
  ASSERT_INT_EQ(t.input_tokens, 2017);
  tg_usage_filter day = {.period = "day"};
  ASSERT_INT_EQ(tg_store_usage(st, &day, &t, err), 0);
  ASSERT_INT_EQ(t.records, 3);
  ASSERT_INT_EQ(t.output_tokens, 405);
  ASSERT_TRUE(t.cost > 1.0099 && t.cost < 1.0101);
  ASSERT_TRUE(t.since_ms <= now && t.since_ms > now - 86400000 - 3600000);
  tg_usage_filter mine = {.period = "month", .session = "main", .model = "big"};
  ASSERT_INT_EQ(tg_store_usage(st, &mine, &t, err), 0);
  ASSERT_INT_EQ(t.records, 2);
  tg_usage_filter week = {.period = "week"};
  ASSERT_INT_EQ(tg_store_usage(st, &week, &t, err), 0);
  ASSERT_INT_EQ(t.records, 3);
  tg_usage_filter bad = {.period = "fortnight"};
  ASSERT_INT_EQ(tg_store_usage(st, &bad, &t, err), -EINVAL);
  ASSERT_CONTAINS(err, "fortnight");
  tg_usage nomodel = {.input_tokens = 1};
  ASSERT_INT_EQ(tg_record_usage(rt, &nomodel, err), -EINVAL);
  ASSERT_CONTAINS(err, "model");
  tg_usage negative = {.model = "m", .output_tokens = -1};
  ASSERT_INT_EQ(tg_record_usage(rt, &negative, err), -EINVAL);
  tg_runtime_free(rt);
  if (F->shared) { /* and from another store's point of view */
    tg_store *other = open_at(addr);
    tg_usage_filter main_only = {.session = "main"};
    ASSERT_INT_EQ(tg_store_usage(other, &main_only, &t, err), 0);
    ASSERT_INT_EQ(t.records, 3);
    tg_store_close(other);
  }
  F->gone(addr);
}

/* ---- memories ---------------------------------------------------------------------- */

static void memory_body(tg_store *st, tg_runtime *rt) {
  (void)rt;
  char err[TG_ERRMSG] = "";
  char *p1 = temp_dir(), *p2 = temp_dir();
  cJSON *meta = cJSON_Parse("{\"source\":\"test\"}");
  tg_memory ms[] = {
      {"fact", "the build uses cmake and ninja", meta, "project", NULL, p1},
      {"fact", "project two builds with cmake too", NULL, "project", NULL, p2},
      {"preference", "the user likes cmake output terse", NULL, NULL, "m-s1",
       NULL},
      {"fact", "the cat is called cmake", NULL, "session", "m-s2", NULL}};
  int64_t last = 0;
  for (size_t i = 0; i < 4; i++) {
    int64_t id = tg_memory_record(st, &ms[i], err);
    if (id <= last) TG_FAIL("%s: memory %zu: %s", F->name, i, err);
    last = id;
  }
  /* session m-s1 in project p1: its session's and its project's */
  tg_recall_filter f = {.query = "how is cmake used?", .session = "m-s1",
                        .project = p1};
  cJSON *got = tg_memory_recall(st, &f, err);
  ASSERT_NOT_NULL(got);
  ASSERT_INT_EQ(array_size(got), 2);
  const cJSON *m;
  cJSON_ArrayForEach(m, got) {
    ASSERT_NOT_CONTAINS(str_at(m, "content"), "project two");
    ASSERT_NOT_CONTAINS(str_at(m, "content"), "cat");
    ASSERT_TRUE(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(m, "score")));
    if (!strcmp(str_at(m, "scope"), "project"))
      ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(m, "metadata"), "source"),
                    "test");
  }
  cJSON_Delete(got);
  f.scope = "project";
  got = tg_memory_recall(st, &f, err);
  ASSERT_INT_EQ(array_size(got), 1);
  cJSON_Delete(got);
  f.scope = NULL;
  f.limit = 1;
  got = tg_memory_recall(st, &f, err);
  ASSERT_INT_EQ(array_size(got), 1);
  cJSON_Delete(got);
  tg_recall_filter none = {.query = "?? !!", .session = "m-s1"};
  got = tg_memory_recall(st, &none, err); /* no words: nothing, no error */
  ASSERT_INT_EQ(array_size(got), 0);
  cJSON_Delete(got);
  tg_memory bad = {"fact", "x", NULL, "galaxy", "m-s1", NULL};
  ASSERT_INT_EQ(tg_memory_record(st, &bad, err), -EINVAL);
  tg_recall_filter bad_scope = {.query = "x", .scope = "galaxy"};
  ASSERT_NULL(tg_memory_recall(st, &bad_scope, err));
  cJSON_Delete(meta);
  remove_tree(p1);
  remove_tree(p2);
}

TEST(memories_are_recalled_within_their_session_or_project) {
  on_each_store(memory_body);
}

TEST(recall_ranks_by_relevance_and_honours_limit_score_and_tokens) {
  char *dir = temp_dir(), *addr = F->fresh();
  tg_config cfg = config_allowing();
  cfg.db = addr;
  cfg.session = "s";
  cfg.project = dir;
  tg_runtime *rt = new_runtime(&cfg);
  remember(rt, "session", "penguins penguins penguins live in the south");
  remember(rt, "session", "a long note that mentions penguins once among "
                          "many many other words about birds and the sea");
  remember(rt, "session", "nothing relevant here");
  cJSON *got = recall(rt, "penguins", NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(got), 2);
  ASSERT_CONTAINS(str_at(cJSON_GetArrayItem(got, 0), "content"), "penguins penguins");
  double s0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(got, 0), "score")->valuedouble;
  double s1 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(got, 1), "score")->valuedouble;
  ASSERT_TRUE(s0 > s1 && s1 > 0);
  cJSON_Delete(got);
  char err[TG_ERRMSG] = "";
  tg_recall_filter f = {"penguins", NULL, NULL, NULL, 1, 0, 0};
  got = tg_runtime_recall(rt, &f, err);
  ASSERT_INT_EQ(cJSON_GetArraySize(got), 1);
  cJSON_Delete(got);
  f.limit = 0;
  f.min_score = (s0 + s1) / 2;
  got = tg_runtime_recall(rt, &f, err);
  ASSERT_INT_EQ(cJSON_GetArraySize(got), 1);
  cJSON_Delete(got);
  f.min_score = 0;
  f.max_tokens = 12; /* the first is 11 tokens, the second 25 */
  got = tg_runtime_recall(rt, &f, err);
  ASSERT_INT_EQ(cJSON_GetArraySize(got), 1);
  cJSON_Delete(got);
  /* natural text with FTS5 syntax in it: words, never an error */
  got = recall(rt, "what's \"up\" with (penguins) AND OR NOT * : ^", NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(got), 2);
  cJSON_Delete(got);
  got = recall(rt, "!!! ???", NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(got), 0);
  cJSON_Delete(got);
  /* bad input */
  tg_memory bad = {"", "x", NULL, NULL, NULL, NULL};
  ASSERT_INT_EQ(tg_runtime_remember(rt, &bad, err), -EINVAL);
  bad.kind = "fact";
  bad.scope = "world";
  ASSERT_INT_EQ(tg_runtime_remember(rt, &bad, err), -EINVAL);
  ASSERT_CONTAINS(err, "scope");
  tg_recall_filter bf = {"x", "galaxy", NULL, NULL, 0, 0, 0};
  ASSERT_NULL(tg_runtime_recall(rt, &bf, err));
  ASSERT_CONTAINS(err, "scope");
  /* metadata comes back as JSON */
  cJSON *meta = cJSON_Parse("{\"source\":\"test\",\"n\":[1,2]}");
  tg_memory withmeta = {"fact", "albatross wingspan", meta, NULL, NULL, NULL};
  ASSERT_TRUE(tg_runtime_remember(rt, &withmeta, err) > 0);
  cJSON_Delete(meta);
  got = recall(rt, "albatross", NULL);
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(got, 0),
                                           "metadata"), "source"), "test");
  cJSON_Delete(got);
  tg_runtime_free(rt);
  F->gone(addr);
  remove_tree(dir);
}

/* ---- what an agent's hooks keep ------------------------------------------------------ */

static void agent_body(tg_store *st, tg_runtime *rt) {
  (void)rt;
  char err[TG_ERRMSG] = "";
  ASSERT_INT_EQ(tg__agent_session(st, "ag-1", "claude", "/w", TG_AGENT_START,
                                  err), 0);
  ASSERT_INT_EQ(tg__agent_session(st, "ag-1", "claude", "/w", TG_AGENT_TURN,
                                  err), 1);
  ASSERT_INT_EQ(tg__agent_session(st, "ag-1", "claude", "/w", TG_AGENT_TURN,
                                  err), 2);
  int64_t turn = -1;
  char *mark = NULL;
  ASSERT_OK(tg__agent_read(st, "ag-1", &turn, &mark, err));
  ASSERT_INT_EQ(turn, 2);
  ASSERT_NULL(mark);
  tg_usage u = {"ag-1", 2, "m", 10, 1, 0.1, 5000};
  ASSERT_INT_EQ(tg__agent_stop(st, "ag-1", "claude", "/w", NULL, "{\"at\":1}",
                               &u, 1, err), 1);
  /* a reader that read from the old mark again counts nothing */
  ASSERT_INT_EQ(tg__agent_stop(st, "ag-1", "claude", "/w", NULL, "{\"at\":2}",
                               &u, 1, err), 0);
  ASSERT_OK(tg__agent_read(st, "ag-1", &turn, &mark, err));
  ASSERT_STR_EQ(mark, "{\"at\":1}");
  free(mark);
  tg_usage_filter f = {.session = "ag-1"};
  tg_usage_total t;
  ASSERT_OK(tg_store_usage(st, &f, &t, err));
  ASSERT_INT_EQ(t.records, 1);
  cJSON *s = tg_store_session(st, "ag-1", err);
  ASSERT_STR_EQ(str_at(s, "agent"), "claude");
  ASSERT_NUM_EQ(num_at(s, "turn"), 2);
  cJSON_Delete(s);
  ASSERT_INT_EQ(tg__agent_session(st, "bad\nid", "claude", "/w",
                                  TG_AGENT_NOTE, err), -EINVAL);
}

TEST(agent_sessions_count_turns_and_usage_once) { on_each_store(agent_body); }

/* ---- a session's taint ---------------------------------------------------------- */

static void taint_body(tg_store *st, tg_runtime *rt) {
  (void)rt;
  char err[TG_ERRMSG] = "";
  tg_taint t, got;
  ASSERT_INT_EQ(tg__store_taint_read(st, "tn-1", &got, err), 0); /* clean */
  ASSERT_INT_EQ(got.level, 0);
  tg__taint_fill(&t, 1, "it read .env", "call-7", "read_file", 1000);
  ASSERT_INT_EQ(tg__store_taint_raise(st, "tn-1", &t, err), 1);
  ASSERT_INT_EQ(tg__store_taint_read(st, "tn-1", &got, err), 1);
  ASSERT_INT_EQ(got.level, 1);
  ASSERT_STR_EQ(got.reason, "it read .env");
  ASSERT_STR_EQ(got.call_id, "call-7");
  ASSERT_STR_EQ(got.tool, "read_file");
  ASSERT_NUM_EQ(got.ts_ms, 1000);
  /* the same level again keeps the first cause; a higher one replaces it */
  tg__taint_fill(&t, 1, "later", "call-8", "exec", 2000);
  ASSERT_INT_EQ(tg__store_taint_raise(st, "tn-1", &t, err), 0);
  ASSERT_INT_EQ(tg__store_taint_read(st, "tn-1", &got, err), 1);
  ASSERT_STR_EQ(got.call_id, "call-7");
  tg__taint_fill(&t, 3, "a key, AKIAABCDEFGHIJKLMNOP, in a result", NULL,
                 NULL, 3000);
  ASSERT_INT_EQ(tg__store_taint_raise(st, "tn-1", &t, err), 1);
  ASSERT_INT_EQ(tg__store_taint_read(st, "tn-1", &got, err), 1);
  ASSERT_INT_EQ(got.level, 3);
  ASSERT_STR_EQ(got.call_id, "");
  ASSERT_NOT_CONTAINS(got.reason, "AKIAABCDEFGHIJKLMNOP"); /* masked */
  /* another session is clean; a bad id or level is refused */
  ASSERT_INT_EQ(tg__store_taint_read(st, "tn-2", &got, err), 0);
  ASSERT_INT_EQ(tg__store_taint_read(st, "bad\nid", &got, err), -EINVAL);
  t.level = 0;
  ASSERT_INT_EQ(tg__store_taint_raise(st, "tn-2", &t, err), -EINVAL);
  /* cleared: clean again; clearing a clean session is -ENOENT */
  /* an export says when and why */
  ASSERT_OK(tg__agent_session(st, "tn-1", "claude", "/w", TG_AGENT_NOTE, err));
  cJSON *doc = tg__session_doc(st, "tn-1", err);
  ASSERT_NOT_NULL(doc);
  ASSERT_NUM_EQ(num_at(cJSON_GetObjectItemCaseSensitive(doc, "taint"), "level"), 3);
  ASSERT_NUM_EQ(num_at(cJSON_GetObjectItemCaseSensitive(doc, "taint"), "at"), 3000);
  cJSON_Delete(doc);
  cJSON *j = tg_store_taint(st, "tn-1", err);
  ASSERT_NUM_EQ(num_at(j, "level"), 3);
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "call")));
  cJSON_Delete(j);
  ASSERT_INT_EQ(tg_store_taint_clear(st, "tn-1", err), 0);
  j = tg_store_taint(st, "tn-1", err);
  ASSERT_TRUE(cJSON_IsNull(j));
  cJSON_Delete(j);
  doc = tg__session_doc(st, "tn-1", err);
  ASSERT_NULL(cJSON_GetObjectItemCaseSensitive(doc, "taint"));
  cJSON_Delete(doc);
  ASSERT_INT_EQ(tg__store_taint_read(st, "tn-1", &got, err), 0);
  ASSERT_INT_EQ(tg_store_taint_clear(st, "tn-1", err), -ENOENT);
}

TEST(a_sessions_taint_only_rises_is_masked_and_cleared) {
  on_each_store(taint_body);
}

/* ---- export and import ------------------------------------------------------------ */

static void export_body(tg_store *st, tg_runtime *rt) {
  (void)rt;
  char err[TG_ERRMSG] = "", id[TG_SESSION_ID_MAX];
  tg_session_spec spec = {.id = "ex-1", .title = "round trip",
                          .started_ms = 10};
  ASSERT_OK(tg_session_begin(st, &spec, id, err));
  tg_message m = {"ex-1", "user", "hello there", NULL, 20};
  ASSERT_TRUE(tg_message_record(st, &m, err) > 0);
  char *first = tg_store_export(st, "ex-1", TG_EXPORT_JSON, err);
  ASSERT_NOT_NULL(first);
  tg_import_report rep;
  ASSERT_OK(tg_store_import(st, first, strlen(first), &rep, err));
  ASSERT_TRUE(rep.renamed); /* the store has ex-1 already */
  ASSERT_INT_EQ(rep.messages, 1);
  cJSON_Delete(rep.skipped);
  char *second = tg_store_export(st, rep.session, TG_EXPORT_JSON, err);
  ASSERT_NOT_NULL(second);
  cJSON *a = cJSON_Parse(first), *b = cJSON_Parse(second);
  cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(a, "session"), "id");
  cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "session"), "id");
  ASSERT_TRUE(cJSON_Compare(a, b, 1));
  ASSERT_INT_EQ(tg_store_import(st, "{}", 2, &rep, err), -EINVAL);
  cJSON_Delete(a);
  cJSON_Delete(b);
  free(first);
  free(second);
}

TEST(an_export_imports_back_as_the_same_session) {
  on_each_store(export_body);
}

/* ---- two stores on one database ------------------------------------------------------ */

typedef struct {
  const char *addr;
  tg_store *st;
  char err[TG_ERRMSG];
} opener;

static void *open_thread(void *arg) {
  opener *o = arg;
  o->st = tg_store_open(o->addr, 1, o->err);
  return NULL;
}

TEST(stores_opened_at_once_on_one_database_see_each_other) {
  if (!F->shared) {
    printf("  (%s: every open is its own database)\n", F->name);
    return;
  }
  char *addr = F->fresh();
  opener o[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    o[i] = (opener){.addr = addr};
    ASSERT_INT_EQ(pthread_create(&th[i], NULL, open_thread, &o[i]), 0);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++)
    if (!o[i].st) TG_FAIL("%s: open %d: %s", F->name, i, o[i].err);
  char err[TG_ERRMSG] = "", id[TG_SESSION_ID_MAX];
  tg_session_spec spec = {.id = "both"};
  ASSERT_OK(tg_session_begin(o[0].st, &spec, id, err));
  cJSON *s = tg_store_session(o[3].st, "both", err);
  ASSERT_NOT_NULL(s);
  cJSON_Delete(s);
  /* a runtime and a caller's store on the same database */
  tg_runtime *rt = runtime_at(addr);
  int64_t g = grant(o[1].st, (tg_always_spec){.scope = TG_SCOPE_TOOL,
                                              .tool = "pwd",
                                              .session = "conf"});
  cJSON *list = tg_store_approvals(tg_runtime_store(rt), 0, err);
  ASSERT_INT_EQ(array_size(list), 1);
  cJSON_Delete(list);
  tg_usage u = {"conf", 1, "m", 1, 1, 0.5, 100};
  ASSERT_OK(tg_record_usage(rt, &u, err));
  tg_usage_total t;
  ASSERT_OK(tg_store_usage(tg_runtime_store(rt), NULL, &t, err)); /* flush */
  ASSERT_OK(tg_store_usage(o[2].st, NULL, &t, err));
  ASSERT_INT_EQ(t.records, 1);
  ASSERT_OK(tg_store_revoke(tg_runtime_store(rt), g, err));
  list = tg_store_approvals(o[0].st, 0, err);
  ASSERT_INT_EQ(array_size(list), 0);
  cJSON_Delete(list);
  tg_runtime_free(rt);
  for (int i = 0; i < 4; i++) tg_store_close(o[i].st);
  F->gone(addr);
}

/* ---- a crash journal: what is answered is never lost, whoever reads ------------
 * A backend may keep a runtime's records in a journal beside the database
 * before they reach it (the SQLite file does: `<file>.calls.<pid>.<ms>`,
 * made once the runtime has recorded 32 calls). Nothing observable changes:
 * every reader sees every answered record at once, a process killed
 * after its answers loses none, and a record torn by a crash mid-write is
 * dropped, never loaded half. */

/* How many of pid's journals are beside the file addr. */
static int journals_of(const char *addr, long pid) {
  char dir[4096], prefix[600];
  const char *slash = strrchr(addr, '/');
  snprintf(dir, sizeof dir, "%.*s", (int)(slash - addr), addr);
  snprintf(prefix, sizeof prefix, "%s.calls.%ld.", slash + 1, pid);
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    n += !strncmp(e->d_name, prefix, strlen(prefix)) &&
         !strstr(e->d_name, ".new");
  if (d) closedir(d);
  return n;
}

/* n records of session through rt's store, answered. */
static void append_answered(tg_runtime *rt, const char *session, int n,
                            conf_rec *recs) {
  tg_store *st = tg_runtime_store(rt);
  int committed = 0, ok = 0;
  for (int i = 0; i < n; i++) {
    conf_rec *c = &recs[i];
    snprintf(c->call_id, sizeof c->call_id, "j%03d", i);
    c->args = cJSON_CreateObject();
    cJSON_AddStringToObject(c->args, "note", "the walrus journal");
    c->committed = &committed;
    c->ok = &ok;
    c->rec = (tg_audit_rec){.call_id = c->call_id, .session = session,
                            .tool = "echo", .args = c->args,
                            .verdict = TG_VERDICT_ALLOW, .attempts = 1,
                            .status = TG_STATUS_OK, .error = &c->error,
                            .ts_ms = 1700000000000 + i, .duration_ms = 0.5,
                            .committed = rec_committed};
    st->be->audit_append(st, &c->rec);
  }
  run_until(rt, &committed, n);
  ASSERT_INT_EQ(ok, n);
  for (int i = 0; i < n; i++) cJSON_Delete(recs[i].args);
}

/* Records calls until this process's runtime has made its journal
 * (waiting generously: a loaded machine, valgrind). */
static void warm_up(tg_runtime *rt, const char *addr) {
  static conf_rec warm[32];
  append_answered(rt, "j-warm", 32, warm);
  for (int i = 0; i < 3000 && !journals_of(addr, (long)getpid()); i++)
    usleep(10000);
  ASSERT_INT_EQ(journals_of(addr, (long)getpid()), 1);
}

static int audited(tg_store *st, const char *session) {
  char err[TG_ERRMSG] = "";
  tg_audit_filter f = {.session = session, .limit = 1000};
  cJSON *all = tg_store_audit(st, &f, err);
  if (!all) TG_FAIL("%s: audit: %s", F->name, err);
  int n = array_size(all);
  for (int i = 0; i < n; i++) /* whole, in order */
    ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(all, i), "tool"), "echo");
  cJSON_Delete(all);
  return n;
}

TEST(answered_records_reach_every_reader_at_once) {
  if (!F->shared) {
    printf("  (%s: one store per database)\n", F->name);
    return;
  }
  char *addr = F->fresh();
  tg_runtime *rt = runtime_at(addr);
  warm_up(rt, addr);
  static conf_rec recs[12];
  append_answered(rt, "j-live", 12, recs);
  /* another store, another runtime, the runtime itself: all twelve */
  tg_store *other = open_at(addr);
  ASSERT_INT_EQ(audited(other, "j-live"), 12);
  tg_runtime *rt2 = runtime_at(addr);
  ASSERT_INT_EQ(audited(tg_runtime_store(rt2), "j-live"), 12);
  ASSERT_INT_EQ(audited(tg_runtime_store(rt), "j-live"), 12);
  /* and searched */
  char err[TG_ERRMSG] = "";
  cJSON *hits = NULL;
  tg_search_filter q = {.query = "walrus", .session = "j-live", .limit = 50};
  ASSERT_OK(tg_store_search(other, &q, &hits, err));
  ASSERT_INT_EQ(array_size(hits), 12);
  cJSON_Delete(hits);
  /* more after the others read: loaded once, never twice */
  static conf_rec more[3];
  append_answered(rt, "j-live", 3, more);
  ASSERT_INT_EQ(audited(other, "j-live"), 15);
  ASSERT_INT_EQ(audited(tg_runtime_store(rt), "j-live"), 15);
  tg_runtime_free(rt2);
  tg_runtime_free(rt);
  ASSERT_INT_EQ(journals_of(addr, (long)getpid()), 0); /* gone with it */
  ASSERT_INT_EQ(audited(other, "j-live"), 15);
  tg_store_close(other);
  F->gone(addr);
}

/* A child process: a runtime at addr, n records answered, then killed
 * (no exit, no close). Returns its pid once it is dead. */
static pid_t killed_after_answers(const char *addr, int n) {
  fflush(NULL);
  pid_t pid = fork();
  ASSERT_TRUE(pid >= 0);
  if (pid == 0) {
    tg_runtime *rt = runtime_at(addr);
    warm_up(rt, addr);
    static conf_rec recs[16];
    append_answered(rt, "j-dead", n, recs);
    raise(SIGKILL);
    _exit(3);
  }
  int status = 0;
  ASSERT_INT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  return pid;
}

/* The journal of pid beside addr, opened to append. */
static FILE *journal_file(const char *addr, pid_t pid) {
  char dir[4096], prefix[600], path[8192];
  const char *slash = strrchr(addr, '/');
  snprintf(dir, sizeof dir, "%.*s", (int)(slash - addr), addr);
  snprintf(prefix, sizeof prefix, "%s.calls.%ld.", slash + 1, (long)pid);
  DIR *d = opendir(dir);
  FILE *f = NULL;
  struct dirent *e;
  while (!f && d && (e = readdir(d)))
    if (!strncmp(e->d_name, prefix, strlen(prefix))) {
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      f = fopen(path, "ab");
    }
  if (d) closedir(d);
  ASSERT_NOT_NULL(f);
  return f;
}

TEST(a_killed_processs_answered_records_are_loaded_at_open) {
  if (!F->shared) {
    printf("  (%s: gone with its process)\n", F->name);
    return;
  }
  char *addr = F->fresh();
  pid_t pid = killed_after_answers(addr, 9);
  ASSERT_INT_EQ(journals_of(addr, (long)pid), 1); /* left behind */
  tg_runtime *rt = runtime_at(addr); /* loads it as it opens */
  ASSERT_INT_EQ(journals_of(addr, (long)pid), 0);
  ASSERT_INT_EQ(audited(tg_runtime_store(rt), "j-dead"), 9);
  tg_runtime_free(rt);
  tg_store *st = open_at(addr);
  ASSERT_INT_EQ(audited(st, "j-dead"), 9); /* once */
  tg_store_close(st);
  F->gone(addr);
}

TEST(a_record_torn_by_a_crash_is_dropped_and_the_rest_loaded) {
  if (!F->shared) {
    printf("  (%s: gone with its process)\n", F->name);
    return;
  }
  char *addr = F->fresh();
  /* a write cut short: a length the file does not hold */
  pid_t pid = killed_after_answers(addr, 5);
  FILE *f = journal_file(addr, pid);
  fwrite("\x40\x00\x00\x00\x12\x34", 1, 6, f);
  fclose(f);
  tg_store *st = open_at(addr);
  ASSERT_INT_EQ(audited(st, "j-dead"), 5);
  ASSERT_INT_EQ(journals_of(addr, (long)pid), 0);
  tg_store_close(st);
  /* whole length, wrong checksum: garbage where a record should be */
  pid = killed_after_answers(addr, 4);
  f = journal_file(addr, pid);
  fwrite("\x04\x00\x00\x00\xde\xad\xbe\xef" "\x00\x00\x00\x00", 1, 12, f);
  fclose(f);
  tg_runtime *rt = runtime_at(addr);
  ASSERT_INT_EQ(audited(tg_runtime_store(rt), "j-dead"), 9);
  ASSERT_INT_EQ(journals_of(addr, (long)pid), 0);
  tg_runtime_free(rt);
  F->gone(addr);
}

/* ---- running every test on every backend ---------------------------------------- */

int main(int argc, char **argv) {
  static const tg_test_entry tests[] = {
      TEST_ENTRY(audit_appends_are_answered_then_read_back_oldest_first),
      TEST_ENTRY(sessions_keep_their_messages_in_order_and_are_searched),
      TEST_ENTRY(sessions_begin_resume_and_end),
      TEST_ENTRY(approvals_are_granted_looked_up_revoked_and_expire),
      TEST_ENTRY(an_approval_queued_on_the_loop_answers_through_its_callback),
      TEST_ENTRY(usage_records_are_summed_by_session_model_and_time),
      TEST_ENTRY(usage_records_are_summed_per_period_and_filter),
      TEST_ENTRY(memories_are_recalled_within_their_session_or_project),
      TEST_ENTRY(recall_ranks_by_relevance_and_honours_limit_score_and_tokens),
      TEST_ENTRY(agent_sessions_count_turns_and_usage_once),
      TEST_ENTRY(a_sessions_taint_only_rises_is_masked_and_cleared),
      TEST_ENTRY(an_export_imports_back_as_the_same_session),
      TEST_ENTRY(stores_opened_at_once_on_one_database_see_each_other),
      TEST_ENTRY(answered_records_reach_every_reader_at_once),
      TEST_ENTRY(a_killed_processs_answered_records_are_loaded_at_open),
      TEST_ENTRY(a_record_torn_by_a_crash_is_dropped_and_the_rest_loaded),
  };
  int failed = 0;
  for (size_t i = 0; i < sizeof factories / sizeof *factories; i++) {
    F = &factories[i];
    printf("== backend %s\n", F->name);
    failed |= tg_test_run_all(tests, sizeof tests / sizeof *tests, argc,
                              argv);
  }
  return failed;
}
