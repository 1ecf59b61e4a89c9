/*
 * test_fs_changes.c — file-change tracking (SPEC §3): glob matching,
 * subscribers told after call_end, `file_change` events, the ring of
 * recent changes, and policy tg.on_file_change handlers.
 */
#include "test_fs.h"

/* ---- globs ----------------------------------------------------------- */

TEST(glob_star_stays_in_a_segment) {
  ASSERT(tg_glob_match("*.c", "main.c"));
  ASSERT(!tg_glob_match("*.c", "src/main.c"));
  ASSERT(tg_glob_match("src/*.c", "src/main.c"));
  ASSERT(!tg_glob_match("src/*.c", "src/a/main.c"));
  ASSERT(!tg_glob_match("src/*.c", "src/main.h"));
  ASSERT(tg_glob_match("src/*", "src/x"));
  ASSERT(!tg_glob_match("src/*", "src/x/y"));
  ASSERT(tg_glob_match("*", "file"));
  ASSERT(!tg_glob_match("*", "dir/file"));
}

TEST(glob_double_star_crosses_segments) {
  ASSERT(tg_glob_match("src/**.c", "src/main.c"));
  ASSERT(tg_glob_match("src/**.c", "src/a/b/main.c"));
  ASSERT(!tg_glob_match("src/**.c", "lib/main.c"));
  ASSERT(!tg_glob_match("src/**.c", "src/main.h"));
  ASSERT(tg_glob_match("**", "a/b/c"));
  ASSERT(tg_glob_match("**/*.md", "README.md"));     /* zero directories */
  ASSERT(tg_glob_match("**/*.md", "docs/x/y.md"));
  ASSERT(tg_glob_match("src/**/test.c", "src/test.c"));
  ASSERT(tg_glob_match("src/**/test.c", "src/a/b/test.c"));
  ASSERT(!tg_glob_match("src/**/test.c", "src/a/b/xtest.c"));
  ASSERT(tg_glob_match("./src/*.c", "src/a.c"));
  /* no exponential blow-up on a pathological glob */
  char path[4001];
  memset(path, 'a', 4000);
  path[4000] = '\0';
  ASSERT(!tg_glob_match("**a**a**a**a**a**a**a**a**a**b", path));
}

TEST(glob_question_mark_and_sets) {
  ASSERT(tg_glob_match("?.txt", "a.txt"));
  ASSERT(!tg_glob_match("?.txt", "ab.txt"));
  ASSERT(!tg_glob_match("a?b", "a/b"));               /* ? is not '/' */
  ASSERT(tg_glob_match("file[0-9].txt", "file7.txt"));
  ASSERT(!tg_glob_match("file[0-9].txt", "filex.txt"));
  ASSERT(tg_glob_match("file[!0-9].txt", "filex.txt"));
  ASSERT(tg_glob_match("\\*.txt", "*.txt"));
  ASSERT(!tg_glob_match("\\*.txt", "a.txt"));
  ASSERT(!tg_glob_match("[abc", "a"));                 /* malformed */
}

TEST(glob_brace_alternatives) {
  ASSERT(tg_glob_match("src/*.{c,h}", "src/main.c"));
  ASSERT(tg_glob_match("src/*.{c,h}", "src/main.h"));
  ASSERT(!tg_glob_match("src/*.{c,h}", "src/main.o"));
  ASSERT(!tg_glob_match("src/*.{c,h}", "src/a/main.c"));
  ASSERT(tg_glob_match("{src,lib}/**.c", "lib/a/b.c"));
  ASSERT(tg_glob_match("a{,.bak}", "a"));            /* an empty alternative */
  ASSERT(tg_glob_match("a{,.bak}", "a.bak"));
  ASSERT(tg_glob_match("x{a,b{c,d}}y", "xbdy"));     /* nested */
  ASSERT(tg_glob_match("x{a,b{c,d}}y", "xay"));
  ASSERT(!tg_glob_match("x{a,b{c,d}}y", "xby"));
  ASSERT(tg_glob_match("{a,b}{c,d}", "bc"));          /* two groups */
  ASSERT(tg_glob_match("[{]x}", "{x}"));              /* in a set: literal */
  ASSERT(tg_glob_match("\\{a,b}", "{a,b}"));          /* quoted: literal */
  ASSERT(!tg_glob_match("\\{a,b}", "a"));
  ASSERT(tg_glob_match("a}b", "a}b"));                /* a lone '}' */
  ASSERT(tg_glob_match("{a\\,b,c}", "a,b"));          /* a quoted comma */
  ASSERT(tg_glob_match("*_file", "read_file"));
  ASSERT(tg_glob_match("{read,write}_file", "write_file"));
}

TEST(glob_brace_errors_are_clear) {
  char err[256] = "";
  ASSERT(tg_glob_check("src/*.{c,h", err, sizeof err) == -EINVAL);
  ASSERT_CONTAINS(err, "'{' is not closed by '}'");
  ASSERT(!tg_glob_match("src/*.{c,h", "src/a.c"));
  ASSERT(tg_glob_check("{[a,b}", err, sizeof err) == -EINVAL);
  ASSERT_CONTAINS(err, "'[' is not closed");
  /* 2^9 alternatives: refused, not expanded */
  ASSERT(tg_glob_check("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", err,
                       sizeof err) == -EINVAL);
  ASSERT_CONTAINS(err, "more than 256");
  ASSERT(tg_glob_check("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", err,
                       sizeof err) == 0);
  /* many single groups: bounded work, a clear refusal */
  char many[1025] = "";
  for (int i = 0; i < 250; i++) strcat(many, "{,}");
  ASSERT(tg_glob_check(many, err, sizeof err) == -EINVAL);
  char deep[1025] = "";
  for (int i = 0; i < 340; i++) strcat(deep, "{a}");
  ASSERT(tg_glob_check(deep, err, sizeof err) == 0);
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
  char *dir = fs_tmpdir();
  tg_runtime *rt = fs_runtime(dir, 0, NULL);
  journal j;
  memset(&j, 0, sizeof j);
  ASSERT(tg_events_subscribe(rt, on_ev, &j) > 0);
  ASSERT(tg_changes_subscribe(rt, "**.txt", on_change, &j) > 0);
  fs_out o = fs_write(rt, "notes/a.txt", "hi\n", 1);
  ASSERT_OK(o);
  fs_out_free(&o);
  int end = index_of(&j, "event:call_end:call-1");
  int ch = index_of(&j, "change:notes/a.txt:created:write_file");
  int ev = index_of(&j, "event:file_change:call-1");
  ASSERT(end >= 0 && ch >= 0 && ev >= 0);
  ASSERT(end < ev);       /* the event comes after call_end */
  ASSERT(end < ch);       /* and so does the subscriber */
  ASSERT_EQ(j.changes, 1);
  tg_runtime_free(rt);
  fs_rmrf(dir);
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
  char *dir = fs_tmpdir();
  fs_put(dir, "a.txt", "one\n");
  tg_runtime *rt = fs_runtime(dir, 0, NULL);
  ev_copy c = {0, NULL};
  tg_events_subscribe(rt, keep_file_change, &c);
  fs_out o = fs_write(rt, "a.txt", "twelve bytes", 0);
  ASSERT_OK(o);
  fs_out_free(&o);
  ASSERT_EQ(c.n, 1);
  ASSERT_STR_EQ(fs_str(c.last, "path"), "a.txt");
  ASSERT_STR_EQ(fs_str(c.last, "type"), "file_change");
  ASSERT_STR_EQ(fs_str(c.last, "change"), "modified");
  ASSERT_STR_EQ(fs_str(c.last, "tool"), "write_file");
  ASSERT_STR_EQ(fs_str(c.last, "call_id"), "call-1");
  ASSERT_EQ(fs_num(c.last, "size"), 12);
  ASSERT(fs_num(c.last, "mtime") > 1.6e9); /* seconds since the epoch */
  char real[4096];
  ASSERT(realpath(dir, real));
  ASSERT_STR_EQ(fs_str(c.last, "root"), real);
  cJSON_Delete(c.last);
  tg_runtime_free(rt);
  fs_rmrf(dir);
}

TEST(subscribers_filter_by_glob_and_may_unsubscribe) {
  char *dir = fs_tmpdir();
  tg_runtime *rt = fs_runtime(dir, 0, NULL);
  journal c_files, all, once;
  memset(&c_files, 0, sizeof c_files);
  memset(&all, 0, sizeof all);
  memset(&once, 0, sizeof once);
  ASSERT(tg_changes_subscribe(rt, "src/**.c", on_change, &c_files) > 0);
  ASSERT(tg_changes_subscribe(rt, "**", on_change, &all) > 0);
  int id = tg_changes_subscribe(rt, "*", on_change, &once);
  once.rt = rt;
  once.unsub_id = id;
  ASSERT_EQ(tg_changes_subscribe(rt, "[oops", on_change, &all), -EINVAL);
  ASSERT_EQ(tg_changes_subscribe(rt, "", on_change, &all), -EINVAL);
  fs_out o = fs_patch(rt,
      "--- /dev/null\n+++ b/src/x/main.c\n@@ -0,0 +1 @@\n+int x;\n"
      "--- /dev/null\n+++ b/top.txt\n@@ -0,0 +1 @@\n+t\n"
      "--- /dev/null\n+++ b/other.txt\n@@ -0,0 +1 @@\n+o\n");
  ASSERT_OK(o);
  fs_out_free(&o);
  ASSERT_EQ(c_files.changes, 1);
  ASSERT_STR_EQ(c_files.log[0], "change:src/x/main.c:created:apply_patch");
  ASSERT_EQ(all.changes, 3);
  ASSERT_EQ(once.changes, 1); /* unsubscribed itself after top.txt */
  ASSERT_STR_EQ(once.log[0], "change:top.txt:created:apply_patch");
  tg_runtime_free(rt);
  fs_rmrf(dir);
}

TEST(ring_keeps_the_last_256_oldest_first) {
  char *dir = fs_tmpdir();
  tg_runtime *rt = fs_runtime(dir, 0, NULL);
  cJSON *r = tg_changes_recent(rt, 0);
  ASSERT_EQ(cJSON_GetArraySize(r), 0);
  cJSON_Delete(r);
  for (int i = 0; i < 300; i++) {
    char name[32];
    snprintf(name, sizeof name, "f%03d.txt", i);
    fs_out o = fs_write(rt, name, "x", 0);
    ASSERT_OK(o);
    fs_out_free(&o);
  }
  r = tg_changes_recent(rt, 0);
  ASSERT_EQ(cJSON_GetArraySize(r), 256);
  ASSERT_STR_EQ(fs_str(cJSON_GetArrayItem(r, 0), "path"), "f044.txt");
  ASSERT_STR_EQ(fs_str(cJSON_GetArrayItem(r, 255), "path"), "f299.txt");
  cJSON_Delete(r);
  r = tg_changes_recent(rt, 3);
  ASSERT_EQ(cJSON_GetArraySize(r), 3);
  ASSERT_STR_EQ(fs_str(cJSON_GetArrayItem(r, 0), "path"), "f297.txt");
  ASSERT_STR_EQ(fs_str(cJSON_GetArrayItem(r, 2), "path"), "f299.txt");
  ASSERT_STR_EQ(fs_str(cJSON_GetArrayItem(r, 2), "call_id"), "call-300");
  cJSON_Delete(r);
  tg_runtime_free(rt);
  fs_rmrf(dir);
}

TEST(failed_calls_report_nothing) {
  char *dir = fs_tmpdir();
  fs_put(dir, "a.txt", "a\n");
  tg_runtime *rt = fs_runtime(dir, 0, NULL);
  journal j;
  memset(&j, 0, sizeof j);
  tg_changes_subscribe(rt, "**", on_change, &j);
  tg_events_subscribe(rt, on_ev, &j);
  fs_out o = fs_patch(rt, "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-zzz\n+b\n");
  ASSERT_REFUSED(o, "PATCH_CONFLICT");
  fs_out_free(&o);
  o = fs_write(rt, "../escape.txt", "x", 0);
  ASSERT_REFUSED(o, "OUTSIDE_WORKSPACE");
  fs_out_free(&o);
  ASSERT_EQ(j.changes, 0);
  ASSERT_EQ(index_of(&j, "event:file_change:call-1"), -1);
  cJSON *r = tg_changes_recent(rt, 0);
  ASSERT_EQ(cJSON_GetArraySize(r), 0);
  cJSON_Delete(r);
  tg_runtime_free(rt);
  fs_rmrf(dir);
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
  snprintf(h->where, sizeof h->where, "%s", fs_str(ev->data, "where"));
  snprintf(h->error, sizeof h->error, "%s", fs_str(ev->data, "error"));
  snprintf(h->call_id, sizeof h->call_id, "%s", ev->call_id ? ev->call_id : "");
}

TEST(policy_on_file_change_handlers) {
  char *dir = fs_tmpdir(), *pol = fs_tmpdir();
  fs_put(pol, "10_changes.lua", policy);
  tg_runtime *rt = fs_runtime(dir, 0, pol);
  herr h;
  memset(&h, 0, sizeof h);
  tg_events_subscribe(rt, on_handler_error, &h);
  fs_out o = fs_write(rt, "a.txt", "x", 0);
  ASSERT_OK(o); /* the raising handler does not break the call */
  fs_out_free(&o);
  ASSERT_EQ(h.n, 1);
  ASSERT_CONTAINS(h.error, "boom on a.txt");
  ASSERT_CONTAINS(h.where, "10_changes.lua:3");
  ASSERT_STR_EQ(h.call_id, "call-1");
  o = fs_write(rt, "src/deep/b.c", "int b;", 1);
  ASSERT_OK(o);
  fs_out_free(&o);
  ASSERT_EQ(h.n, 1); /* **.txt did not match */
  o = fs_call(rt, "seen", "{}");
  ASSERT_OK(o);
  const cJSON *seen = cJSON_GetObjectItem(o.result, "seen");
  ASSERT_EQ(cJSON_GetArraySize(seen), 2);
  ASSERT_STR_EQ(cJSON_GetArrayItem(seen, 0)->valuestring,
                "created a.txt by write_file");
  ASSERT_STR_EQ(cJSON_GetArrayItem(seen, 1)->valuestring, "src src/deep/b.c");
  const cJSON *recent = cJSON_GetObjectItem(o.result, "recent");
  ASSERT_EQ(cJSON_GetArraySize(recent), 1);
  ASSERT_STR_EQ(fs_str(cJSON_GetArrayItem(recent, 0), "path"), "src/deep/b.c");
  fs_out_free(&o);
  tg_runtime_free(rt);
  fs_rmrf(dir);
  fs_rmrf(pol);
}

TEST(policy_on_file_change_checks_its_arguments) {
  char *dir = fs_tmpdir(), *pol = fs_tmpdir();
  fs_put(pol, "10_bad.lua",
         "local tg = require \"toolgate\"\ntg.on_file_change(\"[x\", print)\n");
  const char *roots[] = {dir, NULL};
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.workspace_roots = roots;
  cfg.policies_dir = pol;
  char err[TG_ERRMSG] = "";
  ASSERT(tg_runtime_new(&cfg, NULL, err) == NULL);
  ASSERT_CONTAINS(err, "tg.on_file_change");
  ASSERT_CONTAINS(err, "not closed");
  fs_put(pol, "10_bad.lua",
         "local tg = require \"toolgate\"\ntg.tool { name = \"late\", run = "
         "function() tg.on_file_change(\"*\", print) end }\n");
  cfg.default_verdict = TG_VERDICT_ALLOW;
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  ASSERT(rt);
  fs_out o = fs_call(rt, "late", "{}");
  ASSERT_EQ(o.status, TG_STATUS_ERROR);
  ASSERT_CONTAINS(o.message, "only possible while the policy file loads");
  fs_out_free(&o);
  tg_runtime_free(rt);
  fs_rmrf(dir);
  fs_rmrf(pol);
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
