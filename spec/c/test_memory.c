/*
 * test_memory.c — memories through the public API: recorded for a session
 * or a project, recalled by full-text relevance; project scope is shared
 * by the sessions of one project and never seen by another project;
 * session scope by its session only; limit, min_score, max_tokens;
 * natural-language queries with FTS5 syntax characters are words, not
 * errors; bad input refused. Two runtimes on one real SQLite file.
 */
#include "helpers.h"
#include "store/store.h"
#include "internal.h"

static tg_runtime *rt_in(const char *db, const char *session,
                         const char *project) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.db = db;
  cfg.session = session;
  cfg.project = project;
  return new_runtime(&cfg);
}

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

static int has_content(const cJSON *a, const char *text) {
  const cJSON *m;
  cJSON_ArrayForEach(m, a) if (!strcmp(str_at(m, "content"), text)) return 1;
  return 0;
}

TEST(project_memories_are_shared_within_a_project_and_never_across) {
  char *dir = temp_dir(), *db = path_join(dir, "m.db");
  make_subdir(dir, "p1");
  make_subdir(dir, "p2");
  char *p1 = path_join(dir, "p1"), *p2 = path_join(dir, "p2");
  tg_runtime *a = rt_in(db, "s-a", p1), *b = rt_in(db, "s-b", p1),
             *c = rt_in(db, "s-c", p2);
  remember(a, "project", "the build uses cmake and ninja");
  remember(a, "session", "the user likes cmake output terse");
  remember(c, "project", "project two builds with cmake too");
  /* b: same project, other session: the project's, not a's session's */
  cJSON *got = recall(b, "cmake", NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(got), 1);
  ASSERT_TRUE(has_content(got, "the build uses cmake and ninja"));
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(got, 0), "scope"), "project");
  cJSON_Delete(got);
  /* a: its session's and its project's */
  got = recall(a, "cmake", NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(got), 2);
  cJSON_Delete(got);
  got = recall(a, "cmake", "session");
  ASSERT_INT_EQ(cJSON_GetArraySize(got), 1);
  ASSERT_TRUE(has_content(got, "the user likes cmake output terse"));
  cJSON_Delete(got);
  /* c: another project sees only its own */
  got = recall(c, "cmake", NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(got), 1);
  ASSERT_TRUE(has_content(got, "project two builds with cmake too"));
  cJSON_Delete(got);
  tg_runtime_free(a);
  tg_runtime_free(b);
  tg_runtime_free(c);
  /* and from a store of its own, naming the project */
  char err[TG_ERRMSG] = "";
  tg_store *st = tg_store_open(db, 0, err);
  ASSERT_NOT_NULL(st);
  tg_recall_filter f = {"cmake", "project", NULL, p2, 0, 0, 0};
  got = tg_memory_recall(st, &f, err);
  ASSERT_INT_EQ(cJSON_GetArraySize(got), 1);
  cJSON_Delete(got);
  tg_store_close(st);
  free(p1);
  free(p2);
  free(db);
  remove_tree(dir);
}

TEST(recall_ranks_by_relevance_and_honours_limit_score_and_tokens) {
  char *dir = temp_dir(), *db = path_join(dir, "m.db");
  tg_runtime *rt = rt_in(db, "s", dir);
  remember(rt, "session", "penguins penguins penguins live in the south");
  remember(rt, "session", "a long note that mentions penguins once among "
                          "many many other words about birds and the sea");
  remember(rt, "session", "nothing relevant here");
  cJSON *got = recall(rt, "penguins", NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(got), 2);
  ASSERT_CONTAINS(str_at(cJSON_GetArrayItem(got, 0), "content"), "penguins penguins");
  double s0 = cJSON_GetObjectItem(cJSON_GetArrayItem(got, 0), "score")->valuedouble;
  double s1 = cJSON_GetObjectItem(cJSON_GetArrayItem(got, 1), "score")->valuedouble;
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
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItem(cJSON_GetArrayItem(got, 0),
                                           "metadata"), "source"), "test");
  cJSON_Delete(got);
  tg_runtime_free(rt);
  /* storage off */
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.db_off = 1;
  rt = new_runtime(&cfg);
  ASSERT_INT_EQ(tg_runtime_remember(rt, &withmeta, err), -ENOTSUP);
  ASSERT_NULL(tg_runtime_recall(rt, &f, err));
  ASSERT_CONTAINS(err, "storage is off");
  tg_runtime_free(rt);
  free(db);
  remove_tree(dir);
}

TEST_MAIN(TEST_ENTRY(project_memories_are_shared_within_a_project_and_never_across),
          TEST_ENTRY(recall_ranks_by_relevance_and_honours_limit_score_and_tokens))
