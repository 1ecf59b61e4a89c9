/*
 * test_export.c — a session exported and imported through the public API:
 * the JSON export is lossless (export -> import -> export gives the same
 * bytes; into a file that has the id, only the id differs); Markdown and
 * HTML show every call with its decision, rule, status, error and
 * duration, and the HTML escapes every value; hostile files (not JSON,
 * unknown format or version, wrong types, duplicate keys, huge strings)
 * are refused naming the place and change nothing. Real SQLite files.
 */
#include "helpers.h"
#include <sqlite3.h>
#include "store/sqlite/sqlite_store.h"
#include "internal.h"

static const char policy[] =
    "local tg = require 'toolgate'\n"
    "tg.rule { name = 'no-rm', tools = { 'echo' }, check = function(c)\n"
    "  if c.args.rm then return tg.deny('never') end end }\n";

static int64_t count(tg_store *st, const char *table) {
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
  sqlite3_stmt *q = NULL;
  ASSERT_INT_EQ(sqlite3_prepare_v2(tg__sq(st)->db, sql, -1, &q, NULL), SQLITE_OK);
  ASSERT_INT_EQ(sqlite3_step(q), SQLITE_ROW);
  int64_t n = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  return n;
}

/* A runtime on path with a session "conv" of messages and three calls
 * (ok, denied by a rule, an unknown tool); freed before returning. */
static void record_session(const char *dir, const char *path) {
  make_subdir(dir, "pol");
  char *pol = path_join(dir, "pol");
  put_file(pol, "10_policy.lua", policy);
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.db = path;
  cfg.session = "conv";
  cfg.policies_dir = pol;
  cfg.default_verdict = TG_VERDICT_ALLOW;
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &d);
  tg_store *st = tg_runtime_store(rt);
  char err[TG_ERRMSG] = "", id[TG_SESSION_ID_MAX];
  tg_session_spec s = {"conv", dir, "Échos & <b>bold</b>", 1700000000000};
  ASSERT_INT_EQ(tg_session_begin(st, &s, id, err), 0);
  cJSON *calls = cJSON_Parse("[{\"name\":\"echo\",\"arguments\":{\"x\":0.1,"
                             "\"big\":9007199254740991}}]");
  tg_message msgs[] = {
      {"conv", "system", "be brief", NULL, 1700000000001},
      {"conv", "user", "show me <script>alert('x')</script> & \"quotes\"\n"
                       "```\nfence\n```", NULL, 1700000000002},
      {"conv", "assistant", NULL, calls, 1700000000003},
      {"conv", "tool", "ünïcödé ✓", NULL, 1700000000004},
  };
  for (size_t i = 0; i < 4; i++)
    if (tg_message_record(st, &msgs[i], err) <= 0) TG_FAIL("%s", err);
  cJSON_Delete(calls);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, "c-ok", "echo", "{\"say\":\"<img src=x onerror=alert(1)>\"}",
             &o);
  start_call(rt, "c-denied", "echo", "{\"rm\":true}", &o);
  start_call(rt, "c-unknown", "nope", "{}", &o);
  run_until(rt, &o.n, 3);
  outcome_free(&o);
  ASSERT_INT_EQ(tg_session_end(st, "conv", err), 0);
  tg_runtime_free(rt);
  free(pol);
}

static char *export_of(tg_store *st, const char *id, tg_export_format f) {
  char err[TG_ERRMSG] = "";
  char *t = tg_store_export(st, id, f, err);
  if (!t) TG_FAIL("export %s: %s", id, err);
  return t;
}

static tg_store *open_at(const char *path) {
  char err[TG_ERRMSG] = "";
  tg_store *st = tg_store_open(path, 1, err);
  if (!st) TG_FAIL("%s", err);
  return st;
}

TEST(json_export_import_export_is_byte_identical) {
  char *dir = temp_dir(), *a = path_join(dir, "a.db"), *b = path_join(dir, "b.db");
  record_session(dir, a);
  tg_store *sa = open_at(a), *sb = open_at(b);
  char *first = export_of(sa, "conv", TG_EXPORT_JSON);
  ASSERT_CONTAINS(first, "\"format\": \"toolgate-session\"");
  ASSERT_CONTAINS(first, "no-rm");
  char err[TG_ERRMSG] = "";
  tg_import_report rep;
  ASSERT_INT_EQ(tg_store_import(sb, first, strlen(first), &rep, err), 0);
  ASSERT_STR_EQ(rep.session, "conv");
  ASSERT_INT_EQ(rep.renamed, 0);
  ASSERT_INT_EQ(rep.messages, 4);
  ASSERT_INT_EQ(rep.calls, 3);
  ASSERT_INT_EQ(cJSON_GetArraySize(rep.skipped), 0);
  cJSON_Delete(rep.skipped);
  char *second = export_of(sb, "conv", TG_EXPORT_JSON);
  ASSERT_STR_EQ(second, first);
  /* into the file that has it: a new id, nothing else changes */
  ASSERT_INT_EQ(tg_store_import(sa, first, strlen(first), &rep, err), 0);
  ASSERT_INT_EQ(rep.renamed, 1);
  ASSERT_STARTS_WITH(rep.session, "s-");
  cJSON_Delete(rep.skipped);
  char *third = export_of(sa, rep.session, TG_EXPORT_JSON);
  cJSON *x = cJSON_Parse(first), *y = cJSON_Parse(third);
  cJSON *ys = cJSON_GetObjectItemCaseSensitive(y, "session");
  ASSERT_STR_EQ(str_at(ys, "id"), rep.session);
  cJSON_ReplaceItemInObjectCaseSensitive(ys, "id", cJSON_CreateString("conv"));
  ASSERT_TRUE(cJSON_Compare(x, y, 1));
  cJSON_Delete(x);
  cJSON_Delete(y);
  /* the imported calls are searchable like recorded ones */
  cJSON *hits = NULL;
  tg_search_filter f = {"onerror", "conv", 0};
  ASSERT_INT_EQ(tg_store_search(sb, &f, &hits, err), 0);
  ASSERT_INT_EQ(cJSON_GetArraySize(hits), 1);
  cJSON_Delete(hits);
  free(first);
  free(second);
  free(third);
  tg_store_close(sa);
  tg_store_close(sb);
  free(a);
  free(b);
  remove_tree(dir);
}

TEST(markdown_and_html_show_the_calls_and_html_escapes_every_value) {
  char *dir = temp_dir(), *a = path_join(dir, "a.db");
  record_session(dir, a);
  tg_store *st = open_at(a);
  char *md = export_of(st, "conv", TG_EXPORT_MARKDOWN);
  ASSERT_CONTAINS(md, "| time | tool | decision | decided by | status | error | ms |");
  ASSERT_CONTAINS(md, "| deny | rule no-rm | denied | DENIED |");
  ASSERT_CONTAINS(md, "UNKNOWN\\_TOOL");
  ASSERT_CONTAINS(md, "````text\n"); /* longer than the ``` inside */
  char *html = export_of(st, "conv", TG_EXPORT_HTML);
  ASSERT_STARTS_WITH(html, "<!DOCTYPE html>");
  ASSERT_CONTAINS(html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
  ASSERT_CONTAINS(html, "&lt;img src=x onerror=alert(1)&gt;");
  ASSERT_CONTAINS(html, "Échos &amp; &lt;b&gt;bold&lt;/b&gt;");
  ASSERT_NOT_CONTAINS(html, "<script");
  ASSERT_NOT_CONTAINS(html, "<img");
  ASSERT_NOT_CONTAINS(html, "src=\"");
  ASSERT_NOT_CONTAINS(html, "href=");
  ASSERT_CONTAINS(html, "<td class=\"rule\">rule no-rm</td>");
  ASSERT_CONTAINS(html, "<td class=\"status denied\">denied</td>");
  char err[TG_ERRMSG] = "";
  ASSERT_NULL(tg_store_export(st, "nobody", TG_EXPORT_HTML, err));
  ASSERT_CONTAINS(err, "no session 'nobody'");
  free(md);
  free(html);
  tg_store_close(st);
  free(a);
  remove_tree(dir);
}

static const char good_head[] =
    "{\"format\":\"toolgate-session\",\"version\":1,\"session\":{\"id\":"
    "\"imp\",\"started\":1},";

TEST(hostile_imports_are_refused_naming_the_place_and_change_nothing) {
  char *dir = temp_dir(), *a = path_join(dir, "a.db");
  tg_store *st = open_at(a);
  char err[TG_ERRMSG] = "";
  tg_import_report rep;
  static const struct {
    const char *text, *says;
  } bad[] = {
      {"", "not JSON"},
      {"[1,2]", "not a toolgate export"},
      {"{\"format\":\"other\",\"version\":1}", "not a toolgate export"},
      {"{\"format\":\"toolgate-session\",\"version\":2}", "version 2 is not known"},
      {"{\"format\":\"toolgate-session\",\"version\":\"1\"}", "is not known"},
      {"{\"format\":\"toolgate-session\",\"version\":1,\"version\":1}",
       "duplicate key"},
      {"{\"format\":\"toolgate-session\",\"version\":1,\"session\":[]}",
       "$.session"},
      {"{\"format\":\"toolgate-session\",\"version\":1,\"session\":{\"id\":5,"
       "\"started\":1}}", "$.session.id: must be a string"},
      {"{\"format\":\"toolgate-session\",\"version\":1,\"session\":{\"id\":"
       "\"a\\nb\",\"started\":1}}", "control character"},
      {"{\"format\":\"toolgate-session\",\"version\":1,\"session\":{\"id\":"
       "\"x\",\"started\":-1}}", "$.session.started"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err[0] = 0;
    int rc = tg_store_import(st, bad[i].text, strlen(bad[i].text), &rep, err);
    if (rc != -EINVAL) TG_FAIL("%s: gave %d", bad[i].text, rc);
    ASSERT_CONTAINS(err, bad[i].says);
  }
  /* the last item wrong: nothing before it is stored either */
  static const char *const tails[] = {
      "\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"ts\":1},"
      "{\"role\":\"robot\",\"ts\":1}]}",
      "\"messages\":{}}",
      "\"messages\":[{\"role\":\"user\",\"ts\":1.5}]}",
      "\"calls\":[{\"call_id\":\"c\",\"tool\":\"t\",\"status\":\"ok\",\"ts\":1},"
      "{\"call_id\":\"c\",\"tool\":\"t\",\"status\":\"weird\",\"ts\":1}]}",
      "\"calls\":[{\"call_id\":\"c\",\"tool\":\"t\",\"status\":\"ok\",\"ts\":1,"
      "\"args_cut\":true,\"args\":{}}]}",
      "\"calls\":[{\"call_id\":\"c\",\"tool\":\"t\",\"status\":\"ok\",\"ts\":1,"
      "\"decision\":{\"rule\":7}}]}",
      "\"calls\":[{\"call_id\":\"c\",\"tool\":\"t\",\"status\":\"ok\",\"ts\":1,"
      "\"duration_ms\":\"fast\"}]}",
  };
  for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
    char text[1024];
    snprintf(text, sizeof text, "%s%s", good_head, tails[i]);
    err[0] = 0;
    if (tg_store_import(st, text, strlen(text), &rep, err) != -EINVAL)
      TG_FAIL("%s was taken", text);
    ASSERT_CONTAINS(err, "$.");
  }
  /* a huge string */
  size_t n = TG_MESSAGE_MAX + 100;
  char *huge = malloc(n + 200);
  int k = snprintf(huge, 200, "%s\"messages\":[{\"role\":\"user\",\"ts\":1,"
                   "\"content\":\"", good_head);
  memset(huge + k, 'a', n);
  strcpy(huge + k + n, "\"}]}");
  ASSERT_INT_EQ(tg_store_import(st, huge, strlen(huge), &rep, err), -EINVAL);
  ASSERT_CONTAINS(err, "$.messages[0].content: is too long");
  free(huge);
  ASSERT_INT_EQ(count(st, "sessions"), 0);
  ASSERT_INT_EQ(count(st, "messages"), 0);
  ASSERT_INT_EQ(count(st, "calls"), 0);
  /* unknown keys are skipped and reported */
  char text[512];
  snprintf(text, sizeof text, "%s\"extra\":1,\"messages\":[{\"role\":\"user\","
           "\"ts\":1,\"mood\":\"happy\"}]}", good_head);
  ASSERT_INT_EQ(tg_store_import(st, text, strlen(text), &rep, err), 0);
  ASSERT_INT_EQ(cJSON_GetArraySize(rep.skipped), 2);
  char *sk = cJSON_PrintUnformatted(rep.skipped);
  ASSERT_CONTAINS(sk, "$.extra (unknown key)");
  ASSERT_CONTAINS(sk, "$.messages[0].mood (unknown key)");
  free(sk);
  cJSON_Delete(rep.skipped);
  ASSERT_INT_EQ(count(st, "sessions"), 1);
  tg_store_close(st);
  free(a);
  remove_tree(dir);
}

TEST_MAIN(TEST_ENTRY(json_export_import_export_is_byte_identical),
          TEST_ENTRY(markdown_and_html_show_the_calls_and_html_escapes_every_value),
          TEST_ENTRY(hostile_imports_are_refused_naming_the_place_and_change_nothing))
