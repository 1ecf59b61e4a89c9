/*
 * test_redact.c — redaction: the built-in masks (AWS access key ids,
 * GitHub tokens, bearer tokens, PEM private keys) and what they leave
 * alone; a secret printed by a command (exec `echo AKIA...`) reaches no
 * event, no audit row and no export; the host's redactor
 * (tg_runtime_set_redactor) and the policies' (tg.redact) see every
 * string and may mask more; a redactor that raises masks the whole string;
 * an imported session is masked before it is stored.
 * A real SQLite file.
 */
#include "helpers.h"
#include "core/redact.h"
#include "internal.h"

#define AWS "AKIAIOSFODNN7EXAMPLE"
#define GH "ghp_" "1234567890abcdefghijABCDEFGHIJ123456"

static void masks(const char *in, const char *want) {
  char *got = tg__redact_builtin(in);
  if (!want) {
    if (got) TG_FAIL("'%s' was masked as '%s'", in, got);
    return;
  }
  if (!got) TG_FAIL("'%s' was not masked", in);
  ASSERT_STR_EQ(got, want);
  free(got);
}

TEST(builtin_masks_common_credential_shapes_and_nothing_else) {
  masks("key=" AWS " ok", "key=[REDACTED:aws-access-key] ok");
  masks("ASIAY34FZKBOKMUTVV7A", "[REDACTED:aws-access-key]");
  masks("token " GH, "token [REDACTED:github-token]");
  masks("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "[REDACTED:github-token]");
  masks("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc-def_123",
        "Authorization: Bearer [REDACTED]");
  masks("a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nxyz\n-----END RSA "
        "PRIVATE KEY-----\nb", "a\n[REDACTED:private-key]\nb");
  masks("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk (cut)",
        "[REDACTED:private-key]");
  masks(AWS AWS, NULL);                      /* not a key: 40 characters */
  masks("AKIA1234", NULL);                   /* too short */
  masks("XAKIAIOSFODNN7EXAMPLE", NULL);      /* inside a word */
  masks("the bearer of news", NULL);
  masks("ghp_short", NULL);
  masks("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", NULL);
  masks("", NULL);
  masks("two " AWS " and " GH " end",
        "two [REDACTED:aws-access-key] and [REDACTED:github-token] end");
}

static int holds_secret(const cJSON *v) {
  char *t = cJSON_PrintUnformatted(v);
  int found = t && (strstr(t, "AKIA") || strstr(t, "ghp_") ||
                    strstr(t, "hunter2"));
  free(t);
  return found;
}

static char *host_masks(void *ud, const char *s) {
  (*(int *)ud)++;
  const char *p = strstr(s, "hunter2");
  if (!p) return NULL;
  char *out = strdup(s);
  memcpy(out + (p - s), "*******", 7);
  return out;
}

/* tg__redact_matches answers as tg__redact_copy would, without the copy:
 * anywhere in the tree, not in its siblings; the host's redactor too. */
TEST(a_match_only_walk_answers_as_the_copy_would) {
  static const char *const docs[] = {
      "{\"a\":\"plain\",\"b\":[1,\"x\",{\"c\":\"" AWS "\"}]}",
      "{\"a\":\"plain\",\"b\":[1,true,null,{\"c\":\"Bearer x\"}]}",
      "[\"" GH "\"]", "\"-----BEGIN RSA PRIVATE KEY-----\\nx\"", "\"\"",
      "{\"pw\":\"hunter2\"}", "{}", "12"};
  int calls = 0;
  tg_redactor host = {.c_fn = host_masks, .c_ud = &calls};
  for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
    cJSON *v = cJSON_Parse(docs[i]);
    ASSERT_TRUE(v != NULL);
    for (int h = 0; h < 2; h++) {
      tg_redactor *r = h ? &host : NULL;
      cJSON *c = tg__redact_copy(r, v);
      if (tg__redact_matches(r, v) != (c != NULL))
        TG_FAIL("%s (host redactor %d): matches and copy disagree", docs[i], h);
      cJSON_Delete(c);
    }
    cJSON_Delete(v);
  }
  ASSERT_TRUE(calls > 0);
  /* a sibling is not v's */
  cJSON *arr = cJSON_Parse("[\"plain\",\"" AWS "\"]");
  ASSERT_INT_EQ(tg__redact_matches(NULL, arr->child), 0);
  ASSERT_INT_EQ(tg__redact_matches(NULL, arr->child->next), 1);
  ASSERT_INT_EQ(tg__redact_matches(NULL, NULL), 0);
  cJSON_Delete(arr);
}

static const char redact_policy[] =
    "local tg = require 'toolgate'\n"
    "tg.redact(function(s) return (s:gsub('swordfish', '[pw]')) end)\n";

TEST(a_secret_printed_by_a_command_reaches_no_event_no_audit_and_no_export) {
  char *dir = temp_dir(), *db = path_join(dir, "r.db");
  make_subdir(dir, "pol");
  char *pol = path_join(dir, "pol");
  put_file(pol, "10_redact.lua", redact_policy);
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.db = db;
  cfg.session = "leaky";
  cfg.approve_mode = TG_APPROVE_ALLOW;
  cfg.default_verdict = TG_VERDICT_ALLOW;
  cfg.policies_dir = pol;
  tg_runtime *rt = new_runtime(&cfg);
  int host_calls = 0;
  tg_runtime_set_redactor(rt, host_masks, &host_calls);
  event_log log = {0};
  tg_events_subscribe(rt, log_event, &log);
  tg_store *st = tg_runtime_store(rt);
  char err[TG_ERRMSG] = "", id[TG_SESSION_ID_MAX];
  tg_session_spec s = {"leaky", dir, "keys " GH, 0};
  ASSERT_INT_EQ(tg_session_begin(st, &s, id, err), 0);
  tg_message m = {"leaky", "assistant", "my password is hunter2, swordfish "
                  "too", NULL, 0};
  ASSERT_TRUE(tg_message_record(st, &m, err) > 0);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, "c-echo", "exec",
             "{\"command\":\"echo " AWS "; echo swordfish; echo hunter2\"}", &o);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(o.status, TG_STATUS_OK);
  /* the caller gets what the command printed */
  char *res = cJSON_PrintUnformatted(o.result);
  ASSERT_CONTAINS(res, AWS);
  free(res);
  outcome_free(&o);
  /* events */
  ASSERT_TRUE(log.n > 0);
  int masked = 0;
  for (int i = 0; i < log.n; i++) {
    if (holds_secret(log.ev[i].data))
      TG_FAIL("event %s holds a secret", log.ev[i].type);
    char *t = cJSON_PrintUnformatted(log.ev[i].data);
    /* the call's args (call_start) show the masks of all three */
    if (strstr(t, "[REDACTED:aws-access-key]") && strstr(t, "[pw]") &&
        strstr(t, "*******"))
      masked++;
    free(t);
  }
  ASSERT_TRUE(masked >= 1);
  ASSERT_TRUE(host_calls > 0);
  /* the audit row */
  tg_audit_filter f = {.session = "leaky"};
  cJSON *rows = tg_store_audit(st, &f, err);
  ASSERT_INT_EQ(cJSON_GetArraySize(rows), 1);
  ASSERT_FALSE(holds_secret(rows));
  char *t = cJSON_PrintUnformatted(rows);
  ASSERT_CONTAINS(t, "[REDACTED:aws-access-key]");
  ASSERT_NOT_CONTAINS(t, "swordfish");
  free(t);
  cJSON_Delete(rows);
  /* every export */
  tg_export_format fmts[] = {TG_EXPORT_JSON, TG_EXPORT_MARKDOWN, TG_EXPORT_HTML};
  for (int i = 0; i < 3; i++) {
    char *x = tg_store_export(st, "leaky", fmts[i], err);
    ASSERT_NOT_NULL(x);
    ASSERT_NOT_CONTAINS(x, "AKIA");
    ASSERT_NOT_CONTAINS(x, "ghp_");
    ASSERT_NOT_CONTAINS(x, "hunter2");
    ASSERT_NOT_CONTAINS(x, "swordfish");
    ASSERT_CONTAINS(x, "*******");
    free(x);
  }
  /* and the raw file */
  tg_runtime_free(rt);
  char cmd[2200];
  snprintf(cmd, sizeof cmd, "grep -a -c -e AKIA -e hunter2 -e swordfish "
           "-e ghp_ '%s' '%s-wal' 2>/dev/null | grep -v ':0$' | grep -q .",
           db, db);
  ASSERT_INT_EQ(system(cmd) == 0, 0);
  event_log_free(&log);
  free(pol);
  free(db);
  remove_tree(dir);
}

static const char failing_policy[] =
    "local tg = require 'toolgate'\n"
    "tg.redact(function(s) if s:find('boom') then error('no') end end)\n";

TEST(a_redactor_that_fails_masks_the_whole_string) {
  char *dir = temp_dir();
  make_subdir(dir, "pol");
  char *pol = path_join(dir, "pol");
  put_file(pol, "10_redact.lua", failing_policy);
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.db = ":memory:";
  cfg.default_verdict = TG_VERDICT_ALLOW;
  cfg.policies_dir = pol;
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &d);
  event_log log = {0};
  tg_events_subscribe(rt, log_event, &log);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, "c1", "echo", "{\"say\":\"boom secret\"}", &o);
  run_until(rt, &o.n, 1);
  outcome_free(&o);
  int i = find_event(&log, "call_start");
  ASSERT_TRUE(i >= 0);
  char *t = cJSON_PrintUnformatted(log.ev[i].data);
  ASSERT_NOT_CONTAINS(t, "boom secret");
  ASSERT_CONTAINS(t, "[REDACTED: the redactor failed]");
  free(t);
  event_log_free(&log);
  tg_runtime_free(rt);
  free(pol);
  remove_tree(dir);
}

/* An import file from elsewhere holding credentials (hand-made, or from a
 * toolgate with other redactors) is masked before it is stored: neither
 * the database nor its WAL holds them. */
TEST(an_imported_session_is_masked_before_it_is_stored) {
  char *dir = temp_dir(), *db = path_join(dir, "imp.db");
  char err[TG_ERRMSG] = "";
  tg_store *st = tg_store_open(db, 1, err);
  if (!st) TG_FAIL("%s", err);
  static const char doc[] =
      "{\"format\":\"toolgate-session\",\"version\":1,\"session\":{\"id\":"
      "\"imp\",\"title\":\"key " AWS "\",\"started\":1},"
      "\"messages\":[{\"role\":\"user\",\"content\":\"use " GH "\",\"ts\":1}],"
      "\"calls\":[{\"call_id\":\"c\",\"tool\":\"sh\",\"status\":\"ok\","
      "\"ts\":1,\"args\":{\"h\":\"Authorization: Bearer swordfish.123\"},"
      "\"result\":{\"out\":\"" AWS "\"}}]}";
  tg_import_report rep;
  ASSERT_INT_EQ(tg_store_import(st, doc, strlen(doc), &rep, err), 0);
  cJSON_Delete(rep.skipped);
  char *x = tg_store_export(st, "imp", TG_EXPORT_JSON, err);
  ASSERT_NOT_NULL(x);
  ASSERT_CONTAINS(x, "[REDACTED:aws-access-key]");
  ASSERT_CONTAINS(x, "[REDACTED:github-token]");
  ASSERT_CONTAINS(x, "Bearer [REDACTED]");
  free(x);
  char cmd[2200];
  snprintf(cmd, sizeof cmd, "grep -a -c -e AKIA -e swordfish -e ghp_ '%s' "
           "'%s-wal' 2>/dev/null | grep -v ':0$' | grep -q .", db, db);
  ASSERT_INT_EQ(system(cmd) == 0, 0); /* with the WAL in use */
  tg_store_close(st);
  ASSERT_INT_EQ(system(cmd) == 0, 0);
  free(db);
  remove_tree(dir);
}

TEST_MAIN(TEST_ENTRY(builtin_masks_common_credential_shapes_and_nothing_else),
          TEST_ENTRY(a_match_only_walk_answers_as_the_copy_would),
          TEST_ENTRY(an_imported_session_is_masked_before_it_is_stored),
          TEST_ENTRY(a_secret_printed_by_a_command_reaches_no_event_no_audit_and_no_export),
          TEST_ENTRY(a_redactor_that_fails_masks_the_whole_string))
