/*
 * test_memory.c — memories through the public API: recorded for a session
 * or a project, recalled by full-text relevance; project scope is shared
 * by the sessions of one project and never seen by another project;
 * session scope by its session only; storage off. Two runtimes on one
 * real SQLite file. (Ranking, limit, min_score, max_tokens, queries with
 * FTS5 syntax characters, bad input: the conformance suite's,
 * test_store_conformance.c.)
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


TEST(remember_and_recall_say_so_with_storage_off) {
  char err[TG_ERRMSG] = "";
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.db_off = 1;
  tg_runtime *rt = new_runtime(&cfg);
  tg_memory m = {"fact", "albatross wingspan", NULL, NULL, NULL, NULL};
  ASSERT_INT_EQ(tg_runtime_remember(rt, &m, err), -ENOTSUP);
  tg_recall_filter f = {"penguins", NULL, NULL, NULL, 1, 0, 0};
  ASSERT_NULL(tg_runtime_recall(rt, &f, err));
  ASSERT_CONTAINS(err, "storage is off");
  tg_runtime_free(rt);
}

TEST_MAIN(TEST_ENTRY(project_memories_are_shared_within_a_project_and_never_across),
          TEST_ENTRY(remember_and_recall_say_so_with_storage_off))
