/*
 * test_fs_changes.c — file-change tracking: glob matching,
 * subscribers told after call_end, `file_change` events, the ring of
 * recent changes, and policy tg.on_file_change handlers.
 */
#include "helpers.h"
#include "internal.h"

/* ---- globs ----------------------------------------------------------- */

TEST(glob_star_stays_in_a_segment) {
  ASSERT_TRUE(tg_glob_match("*.c", "main.c"));
  ASSERT_FALSE(tg_glob_match("*.c", "src/main.c"));
  ASSERT_TRUE(tg_glob_match("src/*.c", "src/main.c"));
  ASSERT_FALSE(tg_glob_match("src/*.c", "src/a/main.c"));
  ASSERT_FALSE(tg_glob_match("src/*.c", "src/main.h"));
  ASSERT_TRUE(tg_glob_match("src/*", "src/x"));
  ASSERT_FALSE(tg_glob_match("src/*", "src/x/y"));
  ASSERT_TRUE(tg_glob_match("*", "file"));
  ASSERT_FALSE(tg_glob_match("*", "dir/file"));
}

TEST(glob_double_star_crosses_segments) {
  ASSERT_TRUE(tg_glob_match("src/**.c", "src/main.c"));
  ASSERT_TRUE(tg_glob_match("src/**.c", "src/a/b/main.c"));
  ASSERT_FALSE(tg_glob_match("src/**.c", "lib/main.c"));
  ASSERT_FALSE(tg_glob_match("src/**.c", "src/main.h"));
  ASSERT_TRUE(tg_glob_match("**", "a/b/c"));
  ASSERT_TRUE(tg_glob_match("**/*.md", "README.md")); /* zero directories */
  ASSERT_TRUE(tg_glob_match("**/*.md", "docs/x/y.md"));
  ASSERT_TRUE(tg_glob_match("src/**/test.c", "src/test.c"));
  ASSERT_TRUE(tg_glob_match("src/**/test.c", "src/a/b/test.c"));
  ASSERT_FALSE(tg_glob_match("src/**/test.c", "src/a/b/xtest.c"));
  ASSERT_TRUE(tg_glob_match("./src/*.c", "src/a.c"));
  /* no exponential blow-up on a pathological glob */
  char path[4001];
  memset(path, 'a', 4000);
  path[4000] = '\0';
  ASSERT_FALSE(tg_glob_match("**a**a**a**a**a**a**a**a**a**b", path));
}

TEST(glob_question_mark_and_sets) {
  ASSERT_TRUE(tg_glob_match("?.txt", "a.txt"));
  ASSERT_FALSE(tg_glob_match("?.txt", "ab.txt"));
  ASSERT_FALSE(tg_glob_match("a?b", "a/b")); /* ? is not '/' */
  ASSERT_TRUE(tg_glob_match("file[0-9].txt", "file7.txt"));
  ASSERT_FALSE(tg_glob_match("file[0-9].txt", "filex.txt"));
  ASSERT_TRUE(tg_glob_match("file[!0-9].txt", "filex.txt"));
  ASSERT_TRUE(tg_glob_match("\\*.txt", "*.txt"));
  ASSERT_FALSE(tg_glob_match("\\*.txt", "a.txt"));
  ASSERT_FALSE(tg_glob_match("[abc", "a")); /* malformed */
}

TEST(glob_brace_alternatives) {
  ASSERT_TRUE(tg_glob_match("src/*.{c,h}", "src/main.c"));
  ASSERT_TRUE(tg_glob_match("src/*.{c,h}", "src/main.h"));
  ASSERT_TRUE(!tg_glob_match("src/*.{c,h}", "src/main.o"));
  ASSERT_TRUE(!tg_glob_match("src/*.{c,h}", "src/a/main.c"));
  ASSERT_TRUE(tg_glob_match("{src,lib}/**.c", "lib/a/b.c"));
  ASSERT_TRUE(tg_glob_match("a{,.bak}", "a"));            /* an empty alternative */
  ASSERT_TRUE(tg_glob_match("a{,.bak}", "a.bak"));
  ASSERT_TRUE(tg_glob_match("x{a,b{c,d}}y", "xbdy"));     /* nested */
  ASSERT_TRUE(tg_glob_match("x{a,b{c,d}}y", "xay"));
  ASSERT_TRUE(!tg_glob_match("x{a,b{c,d}}y", "xby"));
  ASSERT_TRUE(tg_glob_match("{a,b}{c,d}", "bc"));          /* two groups */
  ASSERT_TRUE(tg_glob_match("[{]x}", "{x}"));              /* in a set: literal */
  ASSERT_TRUE(tg_glob_match("\\{a,b}", "{a,b}"));          /* quoted: literal */
  ASSERT_TRUE(!tg_glob_match("\\{a,b}", "a"));
  ASSERT_TRUE(tg_glob_match("a}b", "a}b"));                /* a lone '}' */
  ASSERT_TRUE(tg_glob_match("{a\\,b,c}", "a,b"));          /* a quoted comma */
  ASSERT_TRUE(tg_glob_match("*_file", "read_file"));
  ASSERT_TRUE(tg_glob_match("{read,write}_file", "write_file"));
}

TEST(glob_brace_errors_are_clear) {
  char err[256] = "";
  ASSERT_TRUE(tg_glob_check("src/*.{c,h", err, sizeof err) == -EINVAL);
  ASSERT_CONTAINS(err, "'{' is not closed by '}'");
  ASSERT_TRUE(!tg_glob_match("src/*.{c,h", "src/a.c"));
  ASSERT_TRUE(tg_glob_check("{[a,b}", err, sizeof err) == -EINVAL);
  ASSERT_CONTAINS(err, "'[' is not closed");
  /* 2^9 alternatives: refused, not expanded */
  ASSERT_TRUE(tg_glob_check("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", err,
                       sizeof err) == -EINVAL);
  ASSERT_CONTAINS(err, "more than 256");
  ASSERT_TRUE(tg_glob_check("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", err,
                       sizeof err) == 0);
  /* many single groups: bounded work, a clear refusal */
  char many[1025] = "";
  for (int i = 0; i < 250; i++) strcat(many, "{,}");
  ASSERT_TRUE(tg_glob_check(many, err, sizeof err) == -EINVAL);
  char deep[1025] = "";
  for (int i = 0; i < 340; i++) strcat(deep, "{a}");
  ASSERT_TRUE(tg_glob_check(deep, err, sizeof err) == 0);
}

/* ---- subscribers and events ------------------------------------------ */

typedef struct {
  char log[64][160];   /* "event:call_end:call-1", "change:a.txt:created" */
  int n;
  int changes;
  int unsub_id;        /* unsubscribe this id from inside the callback */
  tg_runtime *rt;
} journal;

static void note(journal *j, const char *fmt, const char *a, const char *b,
                 const char *c) {
  if (j->n < 64) snprintf(j->log[j->n++], sizeof j->log[0], fmt, a, b, c);
}

static void on_ev(tg_runtime *rt, const tg_event *ev, void *ud) {
  (void)rt;
  journal *j = ud;
  if (!strcmp(ev->type, "call_end") || !strcmp(ev->type, "file_change") ||
      !strcmp(ev->type, "call_start"))
    note(j, "event:%s:%s%s", ev->type, ev->call_id ? ev->call_id : "", "");
}

static void on_change(tg_runtime *rt, const tg_file_change *ch, void *ud) {
  (void)rt;
  journal *j = ud;
  j->changes++;
  note(j, "change:%s:%s:%s", ch->path, ch->type, ch->tool);
  if (j->unsub_id) {
    tg_changes_unsubscribe(j->rt, j->unsub_id);
    j->unsub_id = 0;
  }
}

static int index_of(const journal *j, const char *entry) {
  for (int i = 0; i < j->n; i++)
    if (!strcmp(j->log[i], entry)) return i;
  return -1;
}

TEST(changes_reach_subscribers_after_call_end) {
  char *dir = temp_dir();
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  journal j;
  memset(&j, 0, sizeof j);
  ASSERT_TRUE(tg_events_subscribe(rt, on_ev, &j) > 0);
  ASSERT_TRUE(tg_changes_subscribe(rt, "**.txt", on_change, &j) > 0);
  outcome o = call_write_file(rt, "notes/a.txt", "hi\n", 1);
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  int end = index_of(&j, "event:call_end:call-1");
  int ch = index_of(&j, "change:notes/a.txt:created:write_file");
  int ev = index_of(&j, "event:file_change:call-1");
  ASSERT_TRUE(end >= 0 && ch >= 0 && ev >= 0);
  ASSERT_TRUE(end < ev); /* the event comes after call_end */
  ASSERT_TRUE(end < ch); /* and so does the subscriber */
  ASSERT_INT_EQ(j.changes, 1);
  tg_runtime_free(rt);
  remove_tree(dir);
}

typedef struct {
  int n;
  cJSON *last;
} ev_copy;

static void keep_file_change(tg_runtime *rt, const tg_event *ev, void *ud) {
  (void)rt;
  ev_copy *c = ud;
  if (strcmp(ev->type, "file_change")) return;
  c->n++;
  cJSON_Delete(c->last);
  c->last = cJSON_Duplicate(ev->data, 1);
}

TEST(file_change_event_fields) {
  char *dir = temp_dir();
  put_file(dir, "a.txt", "one\n");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  ev_copy c = {0, NULL};
  tg_events_subscribe(rt, keep_file_change, &c);
  outcome o = call_write_file(rt, "a.txt", "twelve bytes", 0);
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  ASSERT_INT_EQ(c.n, 1);
  ASSERT_STR_EQ(str_at(c.last, "path"), "a.txt");
  ASSERT_STR_EQ(str_at(c.last, "type"), "file_change");
  ASSERT_STR_EQ(str_at(c.last, "change"), "modified");
  ASSERT_STR_EQ(str_at(c.last, "tool"), "write_file");
  ASSERT_STR_EQ(str_at(c.last, "call_id"), "call-1");
  ASSERT_NUM_EQ(num_at(c.last, "size"), 12);
  ASSERT_TRUE(num_at(c.last, "mtime") > 1.6e9); /* seconds since the epoch */
  char real[4096];
  ASSERT_TRUE(realpath(dir, real));
  ASSERT_STR_EQ(str_at(c.last, "root"), real);
  cJSON_Delete(c.last);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(subscribers_filter_by_glob_and_may_unsubscribe) {
  char *dir = temp_dir();
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  journal c_files, all, once;
  memset(&c_files, 0, sizeof c_files);
  memset(&all, 0, sizeof all);
  memset(&once, 0, sizeof once);
  ASSERT_TRUE(tg_changes_subscribe(rt, "src/**.c", on_change, &c_files) > 0);
  ASSERT_TRUE(tg_changes_subscribe(rt, "**", on_change, &all) > 0);
  int id = tg_changes_subscribe(rt, "*", on_change, &once);
  once.rt = rt;
  once.unsub_id = id;
  ASSERT_INT_EQ(tg_changes_subscribe(rt, "[oops", on_change, &all), -EINVAL);
  ASSERT_INT_EQ(tg_changes_subscribe(rt, "", on_change, &all), -EINVAL);
  outcome o = call_apply_patch(rt,
      "--- /dev/null\n+++ b/src/x/main.c\n@@ -0,0 +1 @@\n+int x;\n"
      "--- /dev/null\n+++ b/top.txt\n@@ -0,0 +1 @@\n+t\n"
      "--- /dev/null\n+++ b/other.txt\n@@ -0,0 +1 @@\n+o\n");
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  ASSERT_INT_EQ(c_files.changes, 1);
  ASSERT_STR_EQ(c_files.log[0], "change:src/x/main.c:created:apply_patch");
  ASSERT_INT_EQ(all.changes, 3);
  ASSERT_INT_EQ(once.changes, 1); /* unsubscribed itself after top.txt */
  ASSERT_STR_EQ(once.log[0], "change:top.txt:created:apply_patch");
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(ring_keeps_the_last_256_oldest_first) {
  char *dir = temp_dir();
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  cJSON *r = tg_changes_recent(rt, 0);
  ASSERT_INT_EQ(cJSON_GetArraySize(r), 0);
  cJSON_Delete(r);
  for (int i = 0; i < 300; i++) {
    char name[32];
    snprintf(name, sizeof name, "f%03d.txt", i);
    outcome o = call_write_file(rt, name, "x", 0);
    ASSERT_CALL_OK(o);
    outcome_free(&o);
  }
  r = tg_changes_recent(rt, 0);
  ASSERT_INT_EQ(cJSON_GetArraySize(r), 256);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(r, 0), "path"), "f044.txt");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(r, 255), "path"), "f299.txt");
  cJSON_Delete(r);
  r = tg_changes_recent(rt, 3);
  ASSERT_INT_EQ(cJSON_GetArraySize(r), 3);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(r, 0), "path"), "f297.txt");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(r, 2), "path"), "f299.txt");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(r, 2), "call_id"), "call-300");
  cJSON_Delete(r);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(failed_calls_report_nothing) {
  char *dir = temp_dir();
  put_file(dir, "a.txt", "a\n");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  journal j;
  memset(&j, 0, sizeof j);
  tg_changes_subscribe(rt, "**", on_change, &j);
  tg_events_subscribe(rt, on_ev, &j);
  outcome o = call_apply_patch(
      rt, "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-zzz\n+b\n");
  ASSERT_CALL_ERROR(o, "PATCH_CONFLICT");
  outcome_free(&o);
  o = call_write_file(rt, "../escape.txt", "x", 0);
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  ASSERT_INT_EQ(j.changes, 0);
  ASSERT_INT_EQ(index_of(&j, "event:file_change:call-1"), -1);
  cJSON *r = tg_changes_recent(rt, 0);
  ASSERT_INT_EQ(cJSON_GetArraySize(r), 0);
  cJSON_Delete(r);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* ---- policies ------------------------------------------------------------ */

static const char policy[] =
    "local tg = require \"toolgate\"\n"
    "local seen = {}\n"
    "tg.on_file_change(\"**.txt\", function(ch) error(\"boom on \" .. ch.path) end)\n"
    "tg.on_file_change(\"*.txt\", function(ch)\n"
    "  seen[#seen + 1] = ch.type .. \" \" .. ch.path .. \" by \" .. ch.tool\n"
    "end)\n"
    "tg.on_file_change(\"src/**\", function(ch) seen[#seen + 1] = \"src \" .. ch.path end)\n"
    "tg.tool { name = \"seen\", read_only = true, run = function()\n"
    "  return { seen = tg.array(seen), recent = tg.recent_changes(1) }\n"
    "end }\n";

typedef struct {
  int n;
  char where[256], error[512], call_id[64];
} herr;

static void on_handler_error(tg_runtime *rt, const tg_event *ev, void *ud) {
  (void)rt;
  herr *h = ud;
  if (strcmp(ev->type, "handler_error")) return;
  h->n++;
  snprintf(h->where, sizeof h->where, "%s", str_at(ev->data, "where"));
  snprintf(h->error, sizeof h->error, "%s", str_at(ev->data, "error"));
  snprintf(h->call_id, sizeof h->call_id, "%s", ev->call_id ? ev->call_id : "");
}

TEST(policy_on_file_change_handlers) {
  char *dir = temp_dir(), *pol = temp_dir();
  put_file(pol, "10_changes.lua", policy);
  tg_runtime *rt = runtime_in_workspace(dir, 0, pol);
  herr h;
  memset(&h, 0, sizeof h);
  tg_events_subscribe(rt, on_handler_error, &h);
  outcome o = call_write_file(rt, "a.txt", "x", 0);
  ASSERT_CALL_OK(o); /* the raising handler does not break the call */
  outcome_free(&o);
  ASSERT_INT_EQ(h.n, 1);
  ASSERT_CONTAINS(h.error, "boom on a.txt");
  ASSERT_CONTAINS(h.where, "10_changes.lua:3");
  ASSERT_STR_EQ(h.call_id, "call-1");
  o = call_write_file(rt, "src/deep/b.c", "int b;", 1);
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  ASSERT_INT_EQ(h.n, 1); /* **.txt did not match */
  o = call_tool(rt, "seen", "{}");
  ASSERT_CALL_OK(o);
  const cJSON *seen = cJSON_GetObjectItemCaseSensitive(o.result, "seen");
  ASSERT_INT_EQ(cJSON_GetArraySize(seen), 2);
  ASSERT_STR_EQ(cJSON_GetArrayItem(seen, 0)->valuestring,
                "created a.txt by write_file");
  ASSERT_STR_EQ(cJSON_GetArrayItem(seen, 1)->valuestring, "src src/deep/b.c");
  const cJSON *recent = cJSON_GetObjectItemCaseSensitive(o.result, "recent");
  ASSERT_INT_EQ(cJSON_GetArraySize(recent), 1);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(recent, 0), "path"), "src/deep/b.c");
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
  remove_tree(pol);
}

TEST(policy_on_file_change_checks_its_arguments) {
  char *dir = temp_dir(), *pol = temp_dir();
  put_file(pol, "10_bad.lua",
           "local tg = require \"toolgate\"\n"
           "tg.on_file_change(\"[x\", print)\n");
  const char *roots[] = {dir, NULL};
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.workspace_roots = roots;
  cfg.policies_dir = pol;
  char err[TG_ERRMSG] = "";
  ASSERT_NULL(tg_runtime_new(&cfg, NULL, err));
  ASSERT_CONTAINS(err, "tg.on_file_change");
  ASSERT_CONTAINS(err, "not closed");
  put_file(pol, "10_bad.lua",
           "local tg = require \"toolgate\"\ntg.tool { name = \"late\", run = "
           "function() tg.on_file_change(\"*\", print) end }\n");
  cfg.default_verdict = TG_VERDICT_ALLOW;
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  ASSERT_NOT_NULL(rt);
  outcome o = call_tool(rt, "late", "{}");
  ASSERT_STATUS(o, TG_STATUS_ERROR);
  ASSERT_CONTAINS(o.message, "only possible while the policy file loads");
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
  remove_tree(pol);
}

TEST_MAIN(TEST_ENTRY(glob_star_stays_in_a_segment),
          TEST_ENTRY(glob_double_star_crosses_segments),
          TEST_ENTRY(glob_question_mark_and_sets),
          TEST_ENTRY(glob_brace_alternatives),
          TEST_ENTRY(glob_brace_errors_are_clear),
          TEST_ENTRY(changes_reach_subscribers_after_call_end),
          TEST_ENTRY(file_change_event_fields),
          TEST_ENTRY(subscribers_filter_by_glob_and_may_unsubscribe),
          TEST_ENTRY(ring_keeps_the_last_256_oldest_first),
          TEST_ENTRY(failed_calls_report_nothing),
          TEST_ENTRY(policy_on_file_change_handlers),
          TEST_ENTRY(policy_on_file_change_checks_its_arguments))
