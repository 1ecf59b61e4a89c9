/*
 * test_sessions.c — sessions, messages and full-text search (schema
 * version 3) through the public API: a version 2 file (the fixture made
 * by spec/fixtures/make_db_v2.sh) upgraded in place with its calls
 * indexed; sessions begun, resumed and ended; messages recorded through a
 * runtime's writer and by a store of its own; hostile input (bad ids,
 * roles, unknown sessions, FTS syntax) refused with clear errors. Real
 * SQLite files in temp folders.
 */
#include "helpers.h"
#include <sqlite3.h>
#include "store/sqlite/sqlite_store.h"
#include "internal.h"

static char *copy_fixture(const char *dir, const char *name) {
  char *path = path_join(dir, "copy.db"), cmd[2400];
  snprintf(cmd, sizeof cmd, "cp '%s/spec/fixtures/%s' '%s'", TG_SOURCE_DIR,
           name, path);
  ASSERT_INT_EQ(system(cmd), 0);
  return path;
}

static tg_store *open_store(const char *path) {
  char err[TG_ERRMSG] = "";
  tg_store *st = tg_store_open(path, 1, err);
  if (!st) TG_FAIL("tg_store_open: %s", err);
  return st;
}

static cJSON *search(tg_store *st, const char *q, const char *session) {
  char err[TG_ERRMSG] = "";
  tg_search_filter f = {q, session, 0};
  cJSON *out = NULL;
  if (tg_store_search(st, &f, &out, err) < 0) TG_FAIL("search %s: %s", q, err);
  return out;
}

static char *schema_of(sqlite3 *db) {
  const char *q = "SELECT group_concat(sql, ';') FROM (SELECT sql FROM "
                  "sqlite_master ORDER BY name)";
  sqlite3_stmt *a = NULL;
  ASSERT_INT_EQ(sqlite3_prepare_v2(db, q, -1, &a, NULL), 0);
  ASSERT_INT_EQ(sqlite3_step(a), SQLITE_ROW);
  char *s = strdup((const char *)sqlite3_column_text(a, 0));
  sqlite3_finalize(a);
  return s;
}

/* The fixture is what steps 1 and 2 make, so upgrading it is the path
 * real version 2 files take. */
TEST(fixture_v2_matches_schema_step_2) {
  const char *fixture = TG_SOURCE_DIR "/spec/fixtures/toolgate-v2.db";
  char *dir = temp_dir(), *path = path_join(dir, "v2.db");
  char err[TG_ERRMSG] = "";
  sqlite3 *mine = NULL, *theirs = NULL;
  ASSERT_INT_EQ(sqlite3_open(path, &mine), SQLITE_OK);
  if (tg__schema_ensure(mine, path, 2, err) < 0) TG_FAIL("%s", err);
  ASSERT_INT_EQ(sqlite3_open_v2(fixture, &theirs, SQLITE_OPEN_READONLY, NULL), 0);
  char *a = schema_of(mine), *b = schema_of(theirs);
  ASSERT_STR_EQ(a, b);
  free(a);
  free(b);
  sqlite3_close(mine);
  sqlite3_close(theirs);
  free(path);
  remove_tree(dir);
}

TEST(version_2_file_is_upgraded_with_its_calls_searchable) {
  char *dir = temp_dir(), *path = copy_fixture(dir, "toolgate-v2.db");
  tg_store *st = open_store(path);
  char err[TG_ERRMSG] = "";
  cJSON *hits = search(st, "zebra", NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(hits), 1);
  const cJSON *h = cJSON_GetArrayItem(hits, 0);
  ASSERT_STR_EQ(str_at(h, "kind"), "call");
  ASSERT_STR_EQ(str_at(h, "call_id"), "call-3");
  ASSERT_STR_EQ(str_at(h, "tool"), "exec");
  ASSERT_CONTAINS(str_at(h, "snippet"), "[zebra]");
  cJSON_Delete(hits);
  /* the old rows are all there */
  cJSON *ap = tg_store_approvals(st, 1, err);
  ASSERT_INT_EQ(cJSON_GetArraySize(ap), 1);
  cJSON_Delete(ap);
  tg_usage_total t;
  ASSERT_INT_EQ(tg_store_usage(st, NULL, &t, err), 0);
  ASSERT_INT_EQ(t.records, 1);
  /* and the new tables work */
  char id[TG_SESSION_ID_MAX];
  tg_session_spec s = {"old-session", dir, "from before", 0};
  ASSERT_INT_EQ(tg_session_begin(st, &s, id, err), 0);
  tg_message m = {"old-session", "user", "where is the zebra?", NULL, 0};
  ASSERT_TRUE(tg_message_record(st, &m, err) > 0);
  hits = search(st, "zebra", NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(hits), 2);
  cJSON_Delete(hits);
  hits = search(st, "zebra", "old-session");
  ASSERT_INT_EQ(cJSON_GetArraySize(hits), 1);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(hits, 0), "kind"), "message");
  cJSON_Delete(hits);
  tg_store_close(st);
  free(path);
  remove_tree(dir);
}


/* Through a runtime: messages go through its writer; its calls are
 * indexed as they are committed. */
TEST(messages_and_calls_of_a_runtime_are_searched_with_bm25_and_snippets) {
  char *dir = temp_dir(), *path = path_join(dir, "rt.db");
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.db = path;
  cfg.default_verdict = TG_VERDICT_ALLOW;
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &d);
  tg_store *st = tg_runtime_store(rt);
  char err[TG_ERRMSG] = "", id[TG_SESSION_ID_MAX];
  tg_session_spec s = {"conv-1", dir, "penguins", 0};
  ASSERT_INT_EQ(tg_session_begin(st, &s, id, err), 0);
  cJSON *calls = cJSON_Parse("[{\"name\":\"echo\",\"arguments\":"
                             "{\"word\":\"albatross\"}}]");
  tg_message msgs[] = {
      {"conv-1", "user", "tell me about penguins and penguins", NULL, 0},
      {"conv-1", "assistant", "penguins are birds; calling a tool", calls, 0},
      {"conv-1", "tool", "<script>alert(1)</script> penguins", NULL, 0},
  };
  for (size_t i = 0; i < 3; i++)
    if (tg_message_record(st, &msgs[i], err) <= 0) TG_FAIL("%s", err);
  cJSON_Delete(calls);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, "c-albatross", "echo", "{\"word\":\"albatross flies\"}", &o);
  run_until(rt, &o.n, 1);
  outcome_free(&o);
  cJSON *hits = search(st, "penguins", NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(hits), 3);
  /* bm25: the message saying it twice in fewer words ranks first */
  ASSERT_CONTAINS(str_at(cJSON_GetArrayItem(hits, 0), "snippet"),
                  "[penguins] and [penguins]");
  double s0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(hits, 0), "score")->valuedouble;
  double s2 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(hits, 2), "score")->valuedouble;
  ASSERT_TRUE(s0 <= s2);
  cJSON_Delete(hits);
  /* the tool calls of a message and the call's args are both found */
  hits = search(st, "albatross", NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(hits), 2);
  int kinds = 0;
  const cJSON *h;
  cJSON_ArrayForEach(h, hits) {
    if (!strcmp(str_at(h, "kind"), "call")) {
      kinds |= 1;
      ASSERT_STR_EQ(str_at(h, "call_id"), "c-albatross");
    } else {
      kinds |= 2;
      ASSERT_STR_EQ(str_at(h, "role"), "assistant");
    }
  }
  ASSERT_INT_EQ(kinds, 3);
  cJSON_Delete(hits);
  tg_search_filter lim = {"penguins OR albatross", NULL, 2};
  ASSERT_INT_EQ(tg_store_search(st, &lim, &hits, err), 0);
  ASSERT_INT_EQ(cJSON_GetArraySize(hits), 2);
  cJSON_Delete(hits);
  /* the session as one JSON: messages with tool_calls parsed back */
  cJSON *one = tg_store_session(st, "conv-1", err);
  ASSERT_NOT_NULL(one);
  cJSON *ms = cJSON_GetObjectItemCaseSensitive(one, "messages");
  ASSERT_INT_EQ(cJSON_GetArraySize(ms), 3);
  ASSERT_TRUE(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ms, 1),
                                                "tool_calls")));
  cJSON_Delete(one);
  /* hostile messages */
  tg_message bad = {"conv-1", "robot", "x", NULL, 0};
  ASSERT_INT_EQ(tg_message_record(st, &bad, err), -EINVAL);
  ASSERT_CONTAINS(err, "role");
  bad.role = "user";
  bad.session = "nobody";
  ASSERT_INT_EQ(tg_message_record(st, &bad, err), -ENOENT);
  bad.session = NULL;
  ASSERT_INT_EQ(tg_message_record(st, &bad, err), -EINVAL);
  tg_runtime_free(rt);
  free(path);
  remove_tree(dir);
}

TEST(bad_search_syntax_is_a_clear_error_not_a_crash) {
  char *dir = temp_dir(), *path = copy_fixture(dir, "toolgate-v2.db");
  tg_store *st = open_store(path);
  char err[TG_ERRMSG] = "";
  static const char *const bad[] = {"\"unbalanced", "AND", "nosuchcol: x",
                                    "(a OR", "a NOT", "*", "NEAR(a b, x)"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cJSON *out = (cJSON *)1;
    err[0] = 0;
    int rc = tg_store_search(st, &(tg_search_filter){bad[i], NULL, 0}, &out,
                             err);
    if (rc != -EINVAL) TG_FAIL("'%s' gave %d (%s)", bad[i], rc, err);
    ASSERT_NULL(out);
    ASSERT_CONTAINS(err, "bad search query");
  }
  cJSON *out = NULL;
  ASSERT_INT_EQ(tg_store_search(st, &(tg_search_filter){"", NULL, 0}, &out,
                                err), -EINVAL);
  /* a valid query over hostile text is fine */
  cJSON *hits = search(st, "\"rm -rf\"", NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(hits), 1);
  cJSON_Delete(hits);
  tg_store_close(st);
  free(path);
  remove_tree(dir);
}

TEST_MAIN(TEST_ENTRY(fixture_v2_matches_schema_step_2),
          TEST_ENTRY(version_2_file_is_upgraded_with_its_calls_searchable),
          TEST_ENTRY(messages_and_calls_of_a_runtime_are_searched_with_bm25_and_snippets),
          TEST_ENTRY(bad_search_syntax_is_a_clear_error_not_a_crash))
