/*
 * test_store.c — storage through the public API: the database
 * file (created 0600 in WAL mode, schema by user_version, upgraded from a
 * version 1 fixture, refused when newer, corrupt, locked, unwritable or
 * another program's; opened read-only: nothing written), the audit
 * record of a call and its commit before done, completeness after kill -9, remembered approvals across runtimes
 * (scopes, places, expiry, revoke) and no secret of theirs in the file,
 * its WAL or the list (sealed args, refused patterns, a version 4 file
 * sealed by the upgrade), the file private however its path is reached
 * (links, folders, other users' files), ":memory:" and storage off (the
 * usage ledger's sums are the conformance suite's, test_store_conformance.c). Files are real SQLite files in temp folders.
 */
#include "helpers.h"
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include "store/sqlite/sqlite_store.h"
#include "internal.h"

/* ---- helpers ------------------------------------------------------------ */

static char *db_in(const char *dir, const char *name) {
  return path_join(dir, name);
}

static tg_config db_cfg(const char *db) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.db = db;
  cfg.default_verdict = TG_VERDICT_ALLOW;
  return cfg;
}

/* What the audit tests start from: a runtime with the echo tool on a new
 * database (file name in a new folder), its events logged. */
typedef struct {
  char *dir, *path;
  tg_runtime *rt;
  event_log ev;
} echo_db;

static void echo_db_open(echo_db *t, const char *name) {
  memset(t, 0, sizeof *t);
  t->dir = temp_dir();
  t->path = db_in(t->dir, name);
  tg_config cfg = db_cfg(t->path);
  t->rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(t->rt, &d);
  tg_events_subscribe(t->rt, log_event, &t->ev);
}

/* The runtime stopped (its records all in the file); the folder stays. */
static void echo_db_stop(echo_db *t) {
  tg_runtime_free(t->rt);
  t->rt = NULL;
}

static void echo_db_close(echo_db *t) {
  echo_db_stop(t);
  event_log_free(&t->ev);
  free(t->path);
  remove_tree(t->dir);
}

/* tg_runtime_new must fail; its message is returned (static). */
static const char *new_fails(tg_config *cfg) {
  static char err[TG_ERRMSG];
  err[0] = '\0';
  tg_runtime *rt = tg_runtime_new(cfg, NULL, err);
  if (rt) TG_FAIL("tg_runtime_new succeeded on %s", cfg->db);
  ASSERT_TRUE(err[0]);
  return err;
}

static int64_t sql_int(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  ASSERT_INT_EQ(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_stmt *st = NULL;
  ASSERT_INT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  ASSERT_INT_EQ(sqlite3_step(st), SQLITE_ROW);
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

static void sql_exec(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  ASSERT_INT_EQ(sqlite3_open(path, &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 20000); /* a writer thread may be on it */
  char *msg = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
    TG_FAIL("%s: %s", sql, msg);
  sqlite3_close(db);
}

/* The audit records of a database file, read by a store of our own. */
static cJSON *audit_of(const char *path, const tg_audit_filter *f) {
  char err[TG_ERRMSG] = "";
  tg_store *st = tg_store_open(path, 0, err);
  if (!st) TG_FAIL("tg_store_open: %s", err);
  cJSON *a = tg_store_audit(st, f, err);
  if (!a) TG_FAIL("tg_store_audit: %s", err);
  tg_store_close(st);
  return a;
}

/* How many hits a search of the file gives (at most 20). */
static int hits_for(const char *path, const char *query) {
  char err[TG_ERRMSG] = "";
  tg_store *st = tg_store_open(path, 0, err);
  if (!st) TG_FAIL("tg_store_open: %s", err);
  cJSON *hits = NULL;
  tg_search_filter q = {.query = query};
  if (tg_store_search(st, &q, &hits, err) != 0)
    TG_FAIL("tg_store_search: %s", err);
  int n = cJSON_GetArraySize(hits);
  cJSON_Delete(hits);
  tg_store_close(st);
  return n;
}

static const cJSON *last_of(const cJSON *arr) {
  int n = cJSON_GetArraySize(arr);
  ASSERT_TRUE(n > 0);
  return cJSON_GetArrayItem(arr, n - 1);
}

static int64_t now_ms(void) {
  int64_t t = 0;
  ASSERT_INT_EQ(tg_time_parse("now", 0, 0, &t, NULL), 0);
  return t;
}

/* ---- the file ----------------------------------------------------------- */

TEST(schema_created_in_a_new_private_wal_file) {
  char *dir = temp_dir(), *path = db_in(dir, "new.db");
  char err[TG_ERRMSG] = "";
  tg_store *st = tg_store_open(path, 1, err);
  if (!st) TG_FAIL("%s", err);
  ASSERT_STR_EQ(tg_store_path(st), path);
  tg_store_close(st);
  struct stat s;
  ASSERT_INT_EQ(stat(path, &s), 0);
  ASSERT_INT_EQ(s.st_mode & 0777, 0600);
  ASSERT_INT_EQ(sql_int(path, "PRAGMA user_version"), TG_DB_SCHEMA_VERSION);
  ASSERT_INT_EQ(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE name IN "
                          "('calls', 'approvals', 'usage')"), 3);
  sqlite3 *db = NULL;
  ASSERT_INT_EQ(sqlite3_open(path, &db), SQLITE_OK);
  sqlite3_stmt *q = NULL;
  ASSERT_INT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, NULL), 0);
  ASSERT_INT_EQ(sqlite3_step(q), SQLITE_ROW);
  ASSERT_STR_EQ((const char *)sqlite3_column_text(q, 0), "wal");
  sqlite3_finalize(q);
  sqlite3_close(db);
  /* without create, a missing file is an error naming it */
  char *missing = db_in(dir, "missing.db");
  ASSERT_TRUE(!tg_store_open(missing, 0, err));
  ASSERT_CONTAINS(err, missing);
  ASSERT_CONTAINS(err, "no such file");
  free(missing);
  free(path);
  remove_tree(dir);
}

TEST(default_path_is_under_xdg_state_home_made_private) {
  char *dir = temp_dir();
  char state[1100], buf[1200], err[TG_ERRMSG] = "";
  snprintf(state, sizeof state, "%s/state", dir);
  setenv("XDG_STATE_HOME", state, 1);
  ASSERT_INT_EQ(tg_db_default_path(buf, sizeof buf, err), 0);
  char want[1200];
  snprintf(want, sizeof want, "%s/toolgate/toolgate.db", state);
  ASSERT_STR_EQ(buf, want);
  tg_config cfg;
  tg_config_init(&cfg); /* db NULL: the default */
  tg_runtime *rt = new_runtime(&cfg);
  ASSERT_STR_EQ(tg_store_path(tg_runtime_store(rt)), want);
  tg_runtime_free(rt);
  struct stat s;
  snprintf(buf, sizeof buf, "%s/toolgate", state);
  ASSERT_INT_EQ(stat(buf, &s), 0);
  ASSERT_INT_EQ(s.st_mode & 0777, 0700);
  /* a relative XDG_STATE_HOME is ignored (XDG spec): HOME's is used */
  setenv("XDG_STATE_HOME", "relative/state", 1);
  setenv("HOME", dir, 1);
  ASSERT_INT_EQ(tg_db_default_path(buf, sizeof buf, err), 0);
  snprintf(want, sizeof want, "%s/.local/state/toolgate/toolgate.db", dir);
  ASSERT_STR_EQ(buf, want);
  unsetenv("XDG_STATE_HOME");
  unsetenv("HOME");
  ASSERT_INT_EQ(tg_db_default_path(buf, sizeof buf, err), -ENOENT);
  ASSERT_CONTAINS(err, "--no-db");
  remove_tree(dir);
}

/* The fixture spec/fixtures/toolgate-vN.db (made by make_db_vN.sh) is
 * what steps 1 to N of the schema make, so upgrading it tests the path
 * real version N files take. */
static void fixture_matches_schema_step(int n) {
  char fixture[512], name[32];
  snprintf(fixture, sizeof fixture, "%s/spec/fixtures/toolgate-v%d.db",
           TG_SOURCE_DIR, n);
  snprintf(name, sizeof name, "v%d.db", n);
  ASSERT_INT_EQ(sql_int(fixture, "PRAGMA user_version"), n);
  char *dir = temp_dir(), *path = db_in(dir, name);
  /* a version n file made by the store's own steps (tg_store_open goes on
   * to the current version: the internal entry stops at n) */
  char err[TG_ERRMSG] = "";
  sqlite3 *mine = NULL, *theirs = NULL;
  ASSERT_INT_EQ(sqlite3_open(path, &mine), SQLITE_OK);
  if (tg__schema_ensure(mine, path, n, err) < 0) TG_FAIL("%s", err);
  ASSERT_INT_EQ(sqlite3_open_v2(fixture, &theirs, SQLITE_OPEN_READONLY, NULL), 0);
  const char *q = "SELECT group_concat(sql, ';') FROM (SELECT sql FROM "
                  "sqlite_master ORDER BY name)";
  sqlite3_stmt *a = NULL, *b = NULL;
  ASSERT_INT_EQ(sqlite3_prepare_v2(mine, q, -1, &a, NULL), 0);
  ASSERT_INT_EQ(sqlite3_prepare_v2(theirs, q, -1, &b, NULL), 0);
  ASSERT_INT_EQ(sqlite3_step(a), SQLITE_ROW);
  ASSERT_INT_EQ(sqlite3_step(b), SQLITE_ROW);
  ASSERT_STR_EQ((const char *)sqlite3_column_text(a, 0),
                (const char *)sqlite3_column_text(b, 0));
  sqlite3_finalize(a);
  sqlite3_finalize(b);
  sqlite3_close(mine);
  sqlite3_close(theirs);
  free(path);
  remove_tree(dir);
}

TEST(fixture_v1_matches_schema_step_1) { fixture_matches_schema_step(1); }

TEST(version_1_file_is_upgraded_in_place_keeping_its_calls) {
  char *dir = temp_dir(), *path = db_in(dir, "old.db");
  char cmd[2200];
  snprintf(cmd, sizeof cmd, "cp '%s/spec/fixtures/toolgate-v1.db' '%s'",
           TG_SOURCE_DIR, path);
  ASSERT_INT_EQ(system(cmd), 0);
  tg_config cfg = db_cfg(path);
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &d);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, "after-upgrade", "echo", "{\"n\":1}", &o);
  run_until(rt, &o.n, 1);
  tg_runtime_free(rt);
  ASSERT_INT_EQ(sql_int(path, "PRAGMA user_version"), TG_DB_SCHEMA_VERSION);
  cJSON *all = audit_of(path, NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(all), 4);
  const cJSON *old = cJSON_GetArrayItem(all, 1);
  ASSERT_STR_EQ(str_at(old, "call_id"), "call-2");
  ASSERT_STR_EQ(str_at(old, "status"), "denied");
  const cJSON *dec = cJSON_GetObjectItemCaseSensitive(old, "decision");
  ASSERT_STR_EQ(str_at(dec, "rule"), "no-recursive-rm");
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(dec, "where"))); /* not in v1 */
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(old, "error"), "code"), "DENIED");
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(old, "args"), "command"), "rm -rf /");
  ASSERT_STR_EQ(str_at(last_of(all), "call_id"), "after-upgrade");
  cJSON_Delete(all);
  /* --since finds its first row by the rowid (no index on ts) */
  tg_audit_filter since = {.since_ms = 1700000001000};
  all = audit_of(path, &since);
  ASSERT_INT_EQ(cJSON_GetArraySize(all), 3);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(all, 0), "call_id"), "call-2");
  cJSON_Delete(all);
  since.since_ms = 1700000001001;
  all = audit_of(path, &since);
  ASSERT_INT_EQ(cJSON_GetArraySize(all), 2);
  cJSON_Delete(all);
  outcome_free(&o);
  free(path);
  remove_tree(dir);
}

TEST(newer_schema_is_refused_naming_both_versions) {
  char *dir = temp_dir(), *path = db_in(dir, "newer.db");
  char err[TG_ERRMSG] = "", set[64], newer[64], known[64];
  int v = TG_DB_SCHEMA_VERSION + 2;
  snprintf(set, sizeof set, "PRAGMA user_version=%d", v);
  snprintf(newer, sizeof newer, "schema version %d", v);
  snprintf(known, sizeof known, "up to version %d", TG_DB_SCHEMA_VERSION);
  tg_store_close(tg_store_open(path, 1, err));
  sql_exec(path, set);
  tg_config cfg = db_cfg(path);
  const char *msg = new_fails(&cfg);
  ASSERT_CONTAINS(msg, path);
  ASSERT_CONTAINS(msg, newer);
  ASSERT_CONTAINS(msg, "newer toolgate");
  ASSERT_CONTAINS(msg, known);
  ASSERT_TRUE(!tg_store_open(path, 0, err));
  ASSERT_CONTAINS(err, newer);
  ASSERT_INT_EQ(sql_int(path, "PRAGMA user_version"), v); /* untouched */
  free(path);
  remove_tree(dir);
}

/* A store only read (explain --event's look at a session's taint): what
 * is there is read; nothing is created, upgraded or written. */
TEST(a_store_opened_read_only_reads_and_writes_nothing) {
  char *dir = temp_dir(), *path = db_in(dir, "ro.db");
  char err[TG_ERRMSG] = "", older[64];
  tg_store_close(tg_store_open(path, 1, err));
  sql_exec(path, "INSERT INTO taints (session, level, reason, call_id, tool,"
                 " ts) VALUES ('s1', 2, 'it read .env', 'hook-1', 'Read', 5)");
  tg_store *st = tg_store_open_read(path, err);
  if (!st) TG_FAIL("tg_store_open_read: %s", err);
  cJSON *t = tg_store_taint(st, "s1", err);
  ASSERT_TRUE(cJSON_IsObject(t));
  ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "tool")), "Read");
  ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "call")), "hook-1");
  cJSON_Delete(t);
  t = tg_store_taint(st, "s2", err);
  ASSERT_TRUE(cJSON_IsNull(t));
  cJSON_Delete(t);
  ASSERT_TRUE(tg_store_taint_clear(st, "s1", err) < 0); /* a write fails */
  tg_store_close(st);
  ASSERT_INT_EQ(sql_int(path, "SELECT count(*) FROM taints"), 1);
  /* a missing file is an error, and is not made */
  char *missing = db_in(dir, "missing.db");
  ASSERT_TRUE(!tg_store_open_read(missing, err));
  ASSERT_CONTAINS(err, missing);
  struct stat s;
  ASSERT_TRUE(stat(missing, &s) < 0);
  /* an older schema is refused, not upgraded */
  snprintf(older, sizeof older, "PRAGMA user_version=%d", TG_DB_SCHEMA_VERSION - 1);
  sql_exec(path, older);
  ASSERT_TRUE(!tg_store_open_read(path, err));
  ASSERT_CONTAINS(err, "older toolgate");
  ASSERT_INT_EQ(sql_int(path, "PRAGMA user_version"), TG_DB_SCHEMA_VERSION - 1);
  free(missing);
  free(path);
  remove_tree(dir);
}

TEST(corrupt_or_foreign_files_are_refused_with_a_clear_error) {
  char *dir = temp_dir(), *junk = db_in(dir, "junk.db");
  FILE *f = fopen(junk, "wb");
  ASSERT_TRUE(f);
  for (int i = 0; i < 4096; i++) fputc((i * 7919) & 0xff, f);
  fclose(f);
  tg_config cfg = db_cfg(junk);
  const char *msg = new_fails(&cfg);
  ASSERT_CONTAINS(msg, junk);
  ASSERT_CONTAINS(msg, "not a database");
  /* an SQLite file of another program is not written into */
  char *other = db_in(dir, "other.db");
  sql_exec(other, "CREATE TABLE mine (x); INSERT INTO mine VALUES (1)");
  cfg.db = other;
  msg = new_fails(&cfg);
  ASSERT_CONTAINS(msg, other);
  ASSERT_CONTAINS(msg, "another program's");
  sql_exec(other, "PRAGMA user_version=9"); /* not "newer": not ours */
  msg = new_fails(&cfg);
  ASSERT_CONTAINS(msg, "another program's");
  ASSERT_CONTAINS(msg, "user_version 9");
  ASSERT_INT_EQ(sql_int(other, "SELECT count(*) FROM sqlite_master"), 1);
  free(junk);
  free(other);
  remove_tree(dir);
}

TEST(paths_that_are_no_file_are_refused_without_hanging) {
  char *dir = temp_dir();
  tg_config cfg = db_cfg(dir); /* a directory */
  const char *msg = new_fails(&cfg);
  ASSERT_CONTAINS(msg, "not a regular file");
  char *fifo = db_in(dir, "fifo.db");
  ASSERT_INT_EQ(mkfifo(fifo, 0600), 0);
  cfg.db = fifo; /* opening it would block for ever */
  msg = new_fails(&cfg);
  ASSERT_CONTAINS(msg, fifo);
  ASSERT_CONTAINS(msg, "not a regular file");
  char *deep = db_in(dir, "no/such/folder/x.db");
  cfg.db = deep;
  msg = new_fails(&cfg);
  ASSERT_CONTAINS(msg, deep);
  ASSERT_CONTAINS(msg, "No such file or directory");
  cfg.db = "";
  msg = new_fails(&cfg);
  ASSERT_CONTAINS(msg, "empty");
  free(fifo);
  free(deep);
  remove_tree(dir);
}

TEST(unwritable_file_is_refused) {
  char *dir = temp_dir(), *path = db_in(dir, "ro.db");
  char err[TG_ERRMSG] = "";
  tg_store_close(tg_store_open(path, 1, err));
  ASSERT_INT_EQ(chmod(path, 0444), 0);
  ASSERT_INT_EQ(chmod(dir, 0755), 0);
  /* root writes anywhere: be nobody for this test (its own process), on
   * a file of nobody's (someone else's file is refused before) */
  if (geteuid() == 0) {
    ASSERT_INT_EQ(chown(path, 65534, 65534), 0);
    ASSERT_INT_EQ(setgid(65534), 0);
    ASSERT_INT_EQ(setuid(65534), 0);
  }
  tg_config cfg = db_cfg(path);
  const char *msg = new_fails(&cfg);
  ASSERT_CONTAINS(msg, path);
  ASSERT_CONTAINS(msg, "read-only");
  free(path);
  free(dir); /* nobody cannot remove root's folder: the system's tmp does */
}

/* A child holding an exclusive lock for hold_ms, then letting go; the
 * pipe says when it has the lock. */
static pid_t hold_lock(const char *path, int hold_ms) {
  int p[2];
  ASSERT_INT_EQ(pipe(p), 0);
  pid_t pid = fork();
  if (pid == 0) {
    sqlite3 *db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL) != SQLITE_OK)
      _exit(3);
    if (write(p[1], "x", 1) != 1) _exit(4);
    usleep((useconds_t)hold_ms * 1000);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
    /* not exit: under valgrind, an exit would count the parent's heap it
     * inherited as this child's leaks */
    raise(SIGKILL);
  }
  char c;
  close(p[1]);
  ASSERT_INT_EQ(read(p[0], &c, 1), 1);
  close(p[0]);
  return pid;
}

TEST(locked_file_is_waited_for_then_refused) {
  char *dir = temp_dir(), *path = db_in(dir, "locked.db");
  /* a short lock is waited out (busy timeout) */
  pid_t pid = hold_lock(path, 300);
  tg_config cfg = db_cfg(path);
  tg_runtime *rt = new_runtime(&cfg);
  tg_runtime_free(rt);
  int st;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFSIGNALED(st)); /* it held the lock and let go (above) */
  /* a fresh file locked past the timeout: refused, naming it */
  char *other = db_in(dir, "locked2.db");
  pid = hold_lock(other, 7000);
  cfg.db = other;
  const char *msg = new_fails(&cfg);
  ASSERT_CONTAINS(msg, other);
  ASSERT_CONTAINS(msg, "locked by another process");
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  free(path);
  free(other);
  remove_tree(dir);
}

/* ---- the audit record ---------------------------------------------------- */

static const char audit_policy[] =
    "local tg = require 'toolgate'\n"
    "tg.tool { name = 'say', run = function(args) return { said = args.text } end }\n"
    "tg.rule { name = 'ask-say', tools = { 'say' }, check = function(call)\n"
    "  if call.args.text == 'secret' then return tg.deny('no secrets') end\n"
    "  return tg.allow('fine') end }\n"
    "tg.before_tool('say', function(call)\n"
    "  if call.args.text == 'hi' then return tg.args({ text = 'hello' }) end end)\n"
    "tg.after_tool('say', function(call, res)\n"
    "  if res.result then return tg.result({ said = res.result.said .. '!' }) end end)\n";

TEST(audit_record_holds_the_whole_call) {
  char *dir = temp_dir(), *path = db_in(dir, "audit.db");
  put_file(dir, "10_say.lua", audit_policy);
  tg_config cfg = db_cfg(path);
  cfg.policies_dir = dir;
  cfg.session = "s-audit";
  tg_runtime *rt = new_runtime(&cfg);
  int64_t t0 = now_ms();
  outcome ok, denied;
  memset(&ok, 0, sizeof ok);
  memset(&denied, 0, sizeof denied);
  char err[TG_ERRMSG] = "";
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.id = "a1";
  req.tool = "say";
  req.args_json = "{\"text\":\"hi\"}";
  req.turn = 3;
  cJSON *meta = cJSON_Parse("{\"parent_call\":\"p0\"}");
  req.metadata = meta;
  ASSERT_INT_EQ(tg_call_start(rt, &req, record_outcome, &ok, err), 0);
  start_call(rt, "a2", "say", "{\"text\":\"secret\"}", &denied);
  run_until(rt, &ok.n, 1);
  run_until(rt, &denied.n, 1);
  tg_runtime_free(rt);
  cJSON_Delete(meta);

  cJSON *all = audit_of(path, NULL);
  ASSERT_INT_EQ(cJSON_GetArraySize(all), 2);
  const cJSON *a = cJSON_GetArrayItem(all, 0), *b = cJSON_GetArrayItem(all, 1);
  ASSERT_STR_EQ(str_at(a, "call_id"), "a1");
  ASSERT_STR_EQ(str_at(a, "session"), "s-audit");
  ASSERT_NUM_EQ(num_at(a, "turn"), 3);
  ASSERT_STR_EQ(str_at(a, "tool"), "say");
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(a, "args"), "text"), "hello");
  ASSERT_NUM_EQ(num_at(a, "args_bytes"), strlen("{\"text\":\"hello\"}"));
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(a, "decision");
  ASSERT_STR_EQ(str_at(d, "verdict"), "allow");
  ASSERT_STR_EQ(str_at(d, "rule"), "ask-say");
  ASSERT_CONTAINS(str_at(d, "where"), "10_say.lua:3");
  ASSERT_STR_EQ(str_at(d, "reason"), "fine");
  const cJSON *hooks = cJSON_GetObjectItemCaseSensitive(a, "hooks");
  ASSERT_INT_EQ(cJSON_GetArraySize(hooks), 2);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(hooks, 0), "stage"), "before");
  ASSERT_CONTAINS(str_at(cJSON_GetArrayItem(hooks, 0), "hook"), "10_say.lua:6");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(hooks, 0), "what"), "args");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(hooks, 1), "stage"), "after");
  ASSERT_CONTAINS(str_at(cJSON_GetArrayItem(hooks, 1), "hook"), "10_say.lua:8");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(hooks, 1), "what"), "result");
  ASSERT_NUM_EQ(num_at(a, "attempts"), 1);
  ASSERT_STR_EQ(str_at(a, "status"), "ok");
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(a, "error")));
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(a, "result"), "said"), "hello!");
  ASSERT_NUM_EQ(num_at(a, "result_bytes"), strlen("{\"said\":\"hello!\"}"));
  ASSERT_TRUE(num_at(a, "ts") >= (double)t0 && num_at(a, "ts") <= (double)now_ms());
  ASSERT_TRUE(num_at(a, "duration_ms") >= 0);
  ASSERT_NUM_EQ(num_at(a, "generation"), 1);
  ASSERT_STR_EQ(str_at(a, "parent_call"), "p0");

  ASSERT_STR_EQ(str_at(b, "status"), "denied");
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(b, "decision"), "verdict"), "deny");
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(b, "decision"), "reason"), "no secrets");
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(b, "error");
  ASSERT_STR_EQ(str_at(e, "phase"), "AUTHORIZE");
  ASSERT_STR_EQ(str_at(e, "code"), "DENIED");
  ASSERT_CONTAINS(str_at(e, "message"), "no secrets");
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(b, "result")));
  ASSERT_TRUE(!cJSON_GetObjectItemCaseSensitive(b, "hooks"));

  /* filters */
  tg_audit_filter f = {.status = "denied"};
  cJSON *only = audit_of(path, &f);
  ASSERT_INT_EQ(cJSON_GetArraySize(only), 1);
  cJSON_Delete(only);
  tg_audit_filter g = {.since_ms = now_ms() + 60000};
  only = audit_of(path, &g);
  ASSERT_INT_EQ(cJSON_GetArraySize(only), 0);
  cJSON_Delete(only);
  tg_audit_filter h = {.after_id = (int64_t)num_at(a, "id")};
  only = audit_of(path, &h);
  ASSERT_INT_EQ(cJSON_GetArraySize(only), 1);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(only, 0), "call_id"), "a2");
  cJSON_Delete(only);
  tg_store *st = tg_store_open(path, 0, err);
  tg_audit_filter bad = {.status = "fine"};
  ASSERT_TRUE(!tg_store_audit(st, &bad, err));
  ASSERT_CONTAINS(err, "unknown status 'fine'");
  tg_store_close(st);
  cJSON_Delete(all);
  outcome_free(&ok);
  outcome_free(&denied);
  free(path);
  remove_tree(dir);
}

/* a result of n bytes of 'é' (2 bytes each in UTF-8) */
static void big_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)ud;
  int n = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(args, "n"));
  char *s = malloc((size_t)n * 2 + 1);
  for (int i = 0; i < n; i++) memcpy(s + 2 * i, "\xc3\xa9", 2);
  s[n * 2] = '\0';
  tg_exec_finish_ok(ex, cJSON_CreateString(s));
  free(s);
}

TEST(audit_caps_args_and_result_at_a_character_boundary) {
  char *dir = temp_dir(), *path = db_in(dir, "caps.db");
  tg_config cfg = db_cfg(path);
  cfg.audit_args_max = 10;
  cfg.audit_result_max = 101;
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("big", big_start, NULL, NULL);
  register_tool(rt, &d);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, "c1", "big", "{\"n\":1000,\"pad\":\"xxxxxxxx\"}", &o);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(o.status, TG_STATUS_OK); /* the caller gets it whole */
  tg_runtime_free(rt);
  cJSON *all = audit_of(path, NULL);
  const cJSON *r = cJSON_GetArrayItem(all, 0);
  ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "args_cut")));
  ASSERT_NUM_EQ(num_at(r, "args_bytes"), 27);
  ASSERT_STR_EQ(str_at(r, "args"), "{\"n\":1000,");
  ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "result_cut")));
  ASSERT_NUM_EQ(num_at(r, "result_bytes"), 2002);
  const char *cut = str_at(r, "result");
  ASSERT_TRUE(cut);
  ASSERT_INT_EQ(strlen(cut), 101); /* '"' + 50 whole 'é' */
  cJSON_Delete(all);
  outcome_free(&o);
  free(path);
  remove_tree(dir);
}

/* done checks, from inside, that its call's record is in the file. */
typedef struct {
  const char *path;
  int n, found;
} commit_probe;

static void probe_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  (void)rt;
  commit_probe *p = ud;
  p->n++;
  tg_audit_filter f = {.call_id = o->id};
  cJSON *a = audit_of(p->path, &f); /* another connection */
  p->found += cJSON_GetArraySize(a) == 1;
  cJSON_Delete(a);
}

TEST(done_comes_after_the_record_is_committed) {
  echo_db t;
  echo_db_open(&t, "commit.db");
  commit_probe p = {t.path, 0, 0};
  char err[TG_ERRMSG];
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.tool = "echo"; /* finishes inside start */
  ASSERT_INT_EQ(tg_call_start(t.rt, &req, probe_done, &p, err), 0);
  ASSERT_INT_EQ(p.n, 0); /* not yet: the record is being written */
  req.tool = "no_such_tool"; /* refused at once: recorded all the same */
  ASSERT_INT_EQ(tg_call_start(t.rt, &req, probe_done, &p, err), 0);
  ASSERT_INT_EQ(p.n, 0);
  run_until(t.rt, &p.n, 2);
  ASSERT_INT_EQ(p.found, 2);
  echo_db_close(&t);
}

/* A lone record is committed by the loop itself when the writer thread
 * is idle, but the loop never waits for a lock: while another process
 * holds the file, the record goes to the thread, which waits; the call is
 * answered only once the lock is gone and its record is in. */
TEST(a_call_waits_for_a_lock_held_elsewhere) {
  echo_db t;
  echo_db_open(&t, "held.db");
  sqlite3 *other = NULL;
  ASSERT_INT_EQ(sqlite3_open(t.path, &other), SQLITE_OK);
  ASSERT_INT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL),
                SQLITE_OK);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(t.rt, "held", "echo", "{\"n\":1}", &o);
  run_for(t.rt, 300);
  ASSERT_INT_EQ(o.n, 0); /* and the call waits for its record */
  ASSERT_INT_EQ(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(other);
  run_until(t.rt, &o.n, 1);
  ASSERT_INT_EQ(o.status, TG_STATUS_OK);
  ASSERT_INT_EQ(sql_int(t.path, "SELECT count(*) FROM calls WHERE call_id = "
                                "'held'"), 1);
  echo_db_stop(&t);
  outcome_free(&o);
  echo_db_close(&t);
}

/* Calls answered together share a commit: each is recorded once, in the order the calls ended, searchable;
 * a record the database refuses sinks none of the others in its batch, and
 * is reported. */
TEST(a_burst_of_calls_is_recorded_in_order_one_refusal_lost_not_the_batch) {
  enum { N = 40, REFUSED = 13 };
  echo_db t;
  echo_db_open(&t, "burst.db");
  sql_exec(t.path, "CREATE TRIGGER refuse_one BEFORE INSERT ON calls "
                   "WHEN new.call_id = 'burst-13' "
                   "BEGIN SELECT RAISE(ABORT, 'not this one'); END");
  outcome o[N];
  memset(o, 0, sizeof o);
  char id[N][32];
  for (int i = 0; i < N; i++) { /* each ends inside its start */
    snprintf(id[i], sizeof id[i], "burst-%d", i);
    start_call(t.rt, id[i], "echo", "{\"note\":\"the walrus sleeps\"}", &o[i]);
  }
  for (int i = 0; i < N; i++) {
    run_until(t.rt, &o[i].n, 1);
    ASSERT_INT_EQ(o[i].status, TG_STATUS_OK);
  }
  int e = find_event(&t.ev, "store_error");
  ASSERT_TRUE(e >= 0);
  ASSERT_NUM_EQ(num_at(t.ev.ev[e].data, "lost"), 1);
  ASSERT_CONTAINS(str_at(t.ev.ev[e].data, "error"), "not this one");
  tg_audit_filter f = {.limit = 1000};
  cJSON *a = audit_of(t.path, &f);
  ASSERT_INT_EQ(cJSON_GetArraySize(a), N - 1);
  for (int i = 0, k = 0; i < N; i++) {
    if (i == REFUSED) continue;
    ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(a, k++), "call_id"), id[i]);
  }
  cJSON_Delete(a);
  echo_db_stop(&t);
  ASSERT_INT_EQ(hits_for(t.path, "walrus"), N - 1 < 20 ? N - 1 : 20);
  /* the search indexed what the writer left */
  ASSERT_INT_EQ(sql_int(t.path, "SELECT count(*) FROM calls_fts "
                                "WHERE calls_fts MATCH 'walrus'"), N - 1);
  for (int i = 0; i < N; i++) outcome_free(&o[i]);
  echo_db_close(&t);
}

/* The calls' full-text index runs behind the audit (its commit holds the
 * row alone): a call the index has not reached — a crash between the two
 * — is still found by a search; deletes keep the index in step, and an id
 * a delete frees is indexed at once when reused. */
TEST(search_finds_calls_the_index_has_not_reached) {
  char *dir = temp_dir(), *path = db_in(dir, "behind.db");
  tg_config cfg = db_cfg(path);
  tg_runtime *rt = new_runtime(&cfg);
  tg_tool_def d = tool_def("echo", echo_start, NULL, NULL);
  register_tool(rt, &d);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, "indexed", "echo", "{\"note\":\"the walrus sleeps\"}", &o);
  run_until(rt, &o.n, 1);
  tg_runtime_free(rt);
  /* a row past the watermark, as a crash before its indexing leaves it */
  sql_exec(path, "INSERT INTO calls (call_id, session, tool, args, status, ts)"
                 " VALUES ('behind', 's', 'echo', '{\"note\":\"a walrus "
                 "swims\"}', 'ok', 1)");
  ASSERT_INT_EQ(sql_int(path, "SELECT count(*) FROM calls_fts "
                              "WHERE calls_fts MATCH 'swims'"), 0);
  ASSERT_INT_EQ(hits_for(path, "walrus"), 2);
  ASSERT_INT_EQ(hits_for(path, "swims"), 1);
  ASSERT_INT_EQ(sql_int(path, "SELECT count(*) FROM calls_fts "
                              "WHERE calls_fts MATCH 'swims'"), 1);
  sql_exec(path, "DELETE FROM calls WHERE call_id = 'indexed'");
  ASSERT_INT_EQ(hits_for(path, "walrus"), 1);
  sql_exec(path, "UPDATE calls SET args = '{\"note\":\"an otter\"}'");
  ASSERT_INT_EQ(hits_for(path, "walrus"), 0);
  ASSERT_INT_EQ(hits_for(path, "otter"), 1);
  /* the table emptied: the next call takes id 1, below the watermark */
  sql_exec(path, "DELETE FROM calls");
  sql_exec(path, "INSERT INTO calls (call_id, session, tool, args, status, ts)"
                 " VALUES ('reused', 's', 'echo', '{\"note\":\"a seal\"}',"
                 " 'ok', 2)");
  ASSERT_INT_EQ(sql_int(path, "SELECT count(*) FROM calls_fts "
                              "WHERE calls_fts MATCH 'seal'"), 1);
  ASSERT_INT_EQ(hits_for(path, "seal OR otter OR walrus"), 1);
  /* many left behind (more than one transaction's worth): a runtime's
   * writer indexes them all, in chunks, by the time it stops */
  sql_exec(path, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1"
                 " FROM n WHERE i < 1200) INSERT INTO calls (call_id,"
                 " session, tool, args, status, ts) SELECT 'n' || i, 's',"
                 " 'echo', '{\"note\":\"a narwhal\"}', 'ok', 3 FROM n");
  rt = new_runtime(&cfg);
  tg_runtime_free(rt);
  ASSERT_INT_EQ(sql_int(path, "SELECT count(*) FROM calls_fts "
                              "WHERE calls_fts MATCH 'narwhal'"), 1200);
  ASSERT_INT_EQ(sql_int(path, "SELECT value FROM meta WHERE key = "
                              "'calls_indexed'"),
                sql_int(path, "SELECT max(id) FROM calls"));
  outcome_free(&o);
  free(path);
  remove_tree(dir);
}

/* The database refuses writes under a running runtime: the call is still
 * answered, and a store_error event says the record was lost, and why. */
TEST(a_record_that_cannot_be_written_is_reported_not_lost_silently) {
  echo_db t;
  echo_db_open(&t, "breaks.db");
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(t.rt, "first", "echo", NULL, &o);
  run_until(t.rt, &o.n, 1);
  /* another process makes every insert fail */
  sql_exec(t.path, "CREATE TRIGGER no_more BEFORE INSERT ON calls "
                   "BEGIN SELECT RAISE(ABORT, 'the audit is closed'); END");
  outcome o2;
  memset(&o2, 0, sizeof o2);
  start_call(t.rt, "second", "echo", NULL, &o2);
  run_until(t.rt, &o2.n, 1);
  ASSERT_INT_EQ(o2.status, TG_STATUS_OK);
  int i = find_event(&t.ev, "store_error");
  ASSERT_TRUE(i >= 0);
  ASSERT_NUM_EQ(num_at(t.ev.ev[i].data, "lost"), 1);
  ASSERT_STR_EQ(str_at(t.ev.ev[i].data, "db"), t.path);
  ASSERT_CONTAINS(str_at(t.ev.ev[i].data, "error"), "the audit is closed");
  /* the event came before the call's end */
  int end = -1;
  for (int k = 0; k < t.ev.n; k++)
    if (!strcmp(t.ev.ev[k].type, "call_end") &&
        !strcmp(t.ev.ev[k].call_id, "second"))
      end = k;
  ASSERT_TRUE(end > i);
  echo_db_stop(&t);
  outcome_free(&o);
  outcome_free(&o2);
  echo_db_close(&t);
}

/* ---- the audit journal ----------------------------------------------------
 * After 32 calls a runtime's answers wait for one write() into its
 * journal beside the file, not for a commit; its writer thread loads the
 * journal into the file behind them. */

static void warm_call(tg_runtime *rt, int i) {
  outcome o;
  memset(&o, 0, sizeof o);
  char id[32];
  snprintf(id, sizeof id, "warm-%d", i);
  start_call(rt, id, "echo", NULL, &o);
  run_until(rt, &o.n, 1);
  outcome_free(&o);
}

/* 32 calls through rt, then more until its journal holds a record: the
 * writer thread makes the file, and the loop takes it up a little later
 * (on a slow machine, or under valgrind, several calls later), so the
 * file alone does not say that the next call is journaled. The calls
 * made here are warm-N; their count is returned. */
static int journal_made(tg_runtime *rt, const char *dir) {
  int n = 0;
  for (; n < 32; n++) warm_call(rt, n);
  char want[64];
  snprintf(want, sizeof want, ".db.calls.%ld.", (long)getpid());
  for (int i = 0; i < 3000; i++) {
    DIR *d = opendir(dir);
    struct dirent *e;
    off_t size = 0;
    while (d && (e = readdir(d))) {
      if (!strstr(e->d_name, want) || strstr(e->d_name, ".new")) continue;
      char path[4096];
      struct stat st;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      if (stat(path, &st) == 0 && st.st_size > size) size = st.st_size;
    }
    if (d) closedir(d);
    if (size > 0) return n;
    usleep(10000);
    warm_call(rt, n++);
  }
  TG_FAIL("no record in a journal after 30 s");
  return n;
}

/* With a journal, a lock held elsewhere holds up no answer: the record
 * reaches the file once the lock is gone, and every reader sees it. */
TEST(a_journaled_call_is_answered_while_a_lock_is_held_elsewhere) {
  echo_db t;
  echo_db_open(&t, "held.db");
  int warm = journal_made(t.rt, t.dir);
  sqlite3 *other = NULL;
  ASSERT_INT_EQ(sqlite3_open(t.path, &other), SQLITE_OK);
  sqlite3_busy_timeout(other, 20000);
  ASSERT_INT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL),
                SQLITE_OK);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(t.rt, "held", "echo", "{\"n\":1}", &o);
  run_until(t.rt, &o.n, 1); /* answered, the lock still held */
  ASSERT_INT_EQ(o.status, TG_STATUS_OK);
  ASSERT_INT_EQ(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(other);
  tg_audit_filter f = {.call_id = "held"};
  cJSON *a = audit_of(t.path, &f);
  ASSERT_INT_EQ(cJSON_GetArraySize(a), 1);
  cJSON_Delete(a);
  echo_db_stop(&t);
  ASSERT_INT_EQ(sql_int(t.path, "SELECT count(*) FROM calls"), warm + 1);
  outcome_free(&o);
  echo_db_close(&t);
}

/* A journaled record the file refuses (here a trigger) is answered first,
 * then reported in a store_error event as soon as its loading finds out;
 * the records after it are loaded. */
TEST(a_journaled_record_the_file_refuses_is_reported) {
  echo_db t;
  echo_db_open(&t, "refuses.db");
  journal_made(t.rt, t.dir);
  sql_exec(t.path, "CREATE TRIGGER refuse_one BEFORE INSERT ON calls "
                   "WHEN new.call_id = 'refused' "
                   "BEGIN SELECT RAISE(ABORT, 'not this one'); END");
  outcome o[2];
  memset(o, 0, sizeof o);
  start_call(t.rt, "refused", "echo", NULL, &o[0]);
  run_until(t.rt, &o[0].n, 1);
  start_call(t.rt, "kept", "echo", NULL, &o[1]);
  run_until(t.rt, &o[1].n, 1);
  ASSERT_INT_EQ(o[0].status, TG_STATUS_OK);
  int e = -1;
  for (int i = 0; i < 300 && (e = find_event(&t.ev, "store_error")) < 0; i++)
    run_for(t.rt, 100); /* the thread loads it at its next idle tick */
  ASSERT_TRUE(e >= 0);
  ASSERT_NUM_EQ(num_at(t.ev.ev[e].data, "lost"), 1);
  ASSERT_CONTAINS(str_at(t.ev.ev[e].data, "error"), "not this one");
  tg_audit_filter f = {.call_id = "kept"};
  cJSON *a = audit_of(t.path, &f);
  ASSERT_INT_EQ(cJSON_GetArraySize(a), 1);
  cJSON_Delete(a);
  echo_db_stop(&t);
  ASSERT_INT_EQ(sql_int(t.path, "SELECT count(*) FROM calls WHERE call_id = "
                                "'refused'"), 0);
  outcome_free(&o[0]);
  outcome_free(&o[1]);
  echo_db_close(&t);
}

/* ---- kill -9 ------------------------------------------------------------- */

/* A C tool that finishes on a timer of 0-2 ms (some at once). */
typedef struct {
  uv_timer_t t;
  tg_exec *ex;
} jiffy;

static void jiffy_closed(uv_handle_t *h) { free(h->data); }
static void jiffy_fire(uv_timer_t *t) {
  jiffy *j = t->data;
  tg_exec_finish_ok(j->ex, cJSON_CreateTrue());
  uv_close((uv_handle_t *)&j->t, jiffy_closed);
}

static void jiffy_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)args;
  unsigned *rng = ud;
  *rng = *rng * 1103515245u + 12345u;
  unsigned ms = (*rng >> 16) % 4;
  if (ms == 3) {
    tg_exec_finish_ok(ex, cJSON_CreateFalse());
    return;
  }
  jiffy *j = malloc(sizeof *j);
  j->ex = ex;
  uv_timer_init(tg_runtime_loop(tg_exec_runtime(ex)), &j->t);
  j->t.data = j;
  uv_timer_start(&j->t, jiffy_fire, ms, 0);
}

typedef struct {
  tg_runtime *rt;
  int fd;          /* answers go here, one id a line, from done only */
  int round;
  long next;
  int in_flight;
} answerer;

static void answer_next(answerer *a);

static void answered(tg_runtime *rt, const tg_outcome *o, void *ud) {
  (void)rt;
  answerer *a = ud;
  char line[80];
  int n = snprintf(line, sizeof line, "%s\n", o->id);
  if (write(a->fd, line, (size_t)n) != n) _exit(5);
  a->in_flight--;
  answer_next(a);
}

static void answer_next(answerer *a) {
  while (a->in_flight < 16) {
    char id[64], err[TG_ERRMSG];
    snprintf(id, sizeof id, "r%d-%ld", a->round, a->next++);
    tg_call_request req;
    memset(&req, 0, sizeof req);
    req.id = id;
    req.tool = "jiffy";
    req.args_json = "{\"what\":\"a call answered before the kill\"}";
    a->in_flight++;
    if (tg_call_start(a->rt, &req, answered, a, err) < 0) _exit(6);
  }
}

/* The child: answers calls until it is killed. */
static void answer_forever(const char *path, int fd, int round) {
  tg_config cfg = db_cfg(path);
  char err[TG_ERRMSG];
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) _exit(7);
  unsigned rng = (unsigned)round * 2654435761u;
  tg_tool_def d = tool_def("jiffy", jiffy_start, NULL, &rng);
  if (tg_tool_register(rt, &d, err) < 0) _exit(8);
  answerer a = {rt, fd, round, 0, 0};
  answer_next(&a);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  _exit(9); /* never: calls keep coming */
}

/* Reads what the child wrote (whole lines) into ids; returns the count. */
static int read_answers(int fd, char ***ids, int *n, int *cap) {
  static char buf[1 << 16];
  static size_t have;
  ssize_t r;
  while ((r = read(fd, buf + have, sizeof buf - have - 1)) > 0) {
    have += (size_t)r;
    char *start = buf, *nl;
    while ((nl = memchr(start, '\n', (size_t)(buf + have - start)))) {
      *nl = '\0';
      if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        *ids = realloc(*ids, (size_t)*cap * sizeof **ids);
      }
      (*ids)[(*n)++] = strdup(start);
      start = nl + 1;
    }
    have = (size_t)(buf + have - start);
    memmove(buf, start, have);
  }
  if (r == 0) have = 0; /* a line cut by the kill was never answered */
  return *n;
}

TEST(every_answered_call_is_in_the_audit_after_kill_9) {
  char *dir = temp_dir(), *path = db_in(dir, "kill.db");
  int rounds = 30, total = 0;
  char err[TG_ERRMSG];
  tg_store_close(tg_store_open(path, 1, err)); /* made once, not raced */
  srand((unsigned)getpid());
  for (int round = 0; round < rounds; round++) {
    int p[2];
    ASSERT_INT_EQ(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
      close(p[0]);
      answer_forever(path, p[1], round);
    }
    close(p[1]);
    int flags = fcntl(p[0], F_GETFL);
    fcntl(p[0], F_SETFL, flags | O_NONBLOCK);
    char **ids = NULL;
    int n = 0, cap = 0;
    /* once it answers (starting takes long under valgrind), let it go
     * on for a random 0 to 80 ms, reading as it goes */
    int64_t start = now_ms();
    while (n == 0 && now_ms() < start + 20000) {
      read_answers(p[0], &ids, &n, &cap);
      usleep(1000);
    }
    int64_t until = now_ms() + rand() % 81;
    while (now_ms() < until) {
      read_answers(p[0], &ids, &n, &cap);
      usleep(1000);
    }
    ASSERT_INT_EQ(kill(pid, SIGKILL), 0);
    int st;
    waitpid(pid, &st, 0);
    ASSERT_TRUE(WIFSIGNALED(st));
    fcntl(p[0], F_SETFL, flags); /* the rest of what it wrote, then EOF */
    read_answers(p[0], &ids, &n, &cap);
    close(p[0]);
    /* the next toolgate to read the file first loads what the killed
     * one's journal holds (after 32 calls its answers wait for a write()
     * into it, not for a commit) */
    tg_store *reader = tg_store_open(path, 0, err);
    ASSERT_NOT_NULL(reader);
    tg_audit_filter one = {.limit = 1};
    cJSON_Delete(tg_store_audit(reader, &one, err));
    tg_store_close(reader);
    sqlite3 *db = NULL;
    ASSERT_INT_EQ(sqlite3_open(path, &db), SQLITE_OK); /* recovers the WAL */
    sqlite3_stmt *q = NULL;
    ASSERT_INT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM calls WHERE "
                                     "call_id = ?", -1, &q, NULL), 0);
    for (int i = 0; i < n; i++) {
      sqlite3_bind_text(q, 1, ids[i], -1, SQLITE_STATIC);
      ASSERT_INT_EQ(sqlite3_step(q), SQLITE_ROW);
      if (sqlite3_column_int(q, 0) != 1)
        TG_FAIL("round %d: call %s was answered but is not in the audit",
                round, ids[i]);
      sqlite3_reset(q);
      free(ids[i]);
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    free(ids);
    total += n;
  }
  printf("  %d calls answered before %d kills, all in the audit\n", total,
         rounds);
  ASSERT_TRUE(total > rounds); /* the children did answer calls */
  free(path);
  remove_tree(dir);
}

/* ---- remembered approvals ------------------------------------------------ */

static const char ask_policy[] =
    "local tg = require 'toolgate'\n"
    "tg.tool { name = 'sh', run = function(args) return { ran = args.command } end }\n"
    "tg.rule { name = 'ask-sh', tools = { 'sh' }, check = function(call)\n"
    "  if call.args.command == 'rm -rf /' then return tg.deny('never') end\n"
    "  return tg.ask('run it?') end }\n";

/* An approver that answers with an always spec, or rejects. */
typedef struct {
  int n;
  const tg_always_spec *spec; /* NULL: reject */
} always_approver;

static void always_cb(tg_runtime *rt, const tg_approval_request *q, void *ud) {
  always_approver *a = ud;
  char err[TG_ERRMSG] = "";
  a->n++;
  if (!a->spec) {
    ASSERT_INT_EQ(tg_approval_answer(rt, q->approval_id, TG_ANSWER_REJECT,
                                 TG_SCOPE_TOOL, NULL), 0);
    return;
  }
  if (tg_approval_answer_always(rt, q->approval_id, a->spec, err) < 0)
    TG_FAIL("tg_approval_answer_always: %s", err);
}

static tg_runtime *ask_rt(const char *dir, const char *db, const char *session,
                          const char *project, always_approver *a) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.policies_dir = dir;
  cfg.db = db;
  cfg.session = session;
  cfg.project = project;
  tg_runtime *rt = new_runtime(&cfg);
  tg_runtime_set_approver(rt, always_cb, a);
  return rt;
}

/* Runs sh {command} on rt; returns the status. */
static tg_status run_sh(tg_runtime *rt, const char *command) {
  char args[512];
  snprintf(args, sizeof args, "{\"command\":\"%s\"}", command);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, NULL, "sh", args, &o);
  run_until(rt, &o.n, 1);
  tg_status st = o.status;
  outcome_free(&o);
  return st;
}

TEST(approvals_by_pattern_are_honoured_by_a_second_runtime_until_revoked) {
  char *dir = temp_dir(), *path = db_in(dir, "appr.db");
  put_file(dir, "10_ask.lua", ask_policy);
  tg_always_spec spec = {.scope = TG_SCOPE_PATTERN, .arg = "command",
                         .glob = "npm test*", .where = TG_WHERE_PROJECT};
  always_approver grants = {0, &spec}, rejects = {0, NULL};
  tg_runtime *a = ask_rt(dir, path, "s-a", dir, &grants);
  tg_runtime *b = ask_rt(dir, path, "s-b", dir, &rejects);
  ASSERT_INT_EQ(run_sh(a, "npm test --watch"), TG_STATUS_OK);
  ASSERT_INT_EQ(grants.n, 1);
  /* in force at once in a (before the store has it) and then in b */
  ASSERT_INT_EQ(run_sh(a, "npm test"), TG_STATUS_OK);
  ASSERT_INT_EQ(grants.n, 1);
  /* b sees what another connection stored within its poll (100 ms) */
  run_for(b, 300);
  ASSERT_INT_EQ(run_sh(b, "npm test -- --grep x"), TG_STATUS_OK);
  ASSERT_INT_EQ(rejects.n, 0);
  /* what the glob does not match is asked; '*' stops at '/' */
  ASSERT_INT_EQ(run_sh(b, "npm run build"), TG_STATUS_REJECTED);
  ASSERT_INT_EQ(run_sh(b, "npm test src/x"), TG_STATUS_REJECTED);
  ASSERT_INT_EQ(rejects.n, 2);
  /* a deny rule still denies */
  ASSERT_INT_EQ(run_sh(b, "rm -rf /"), TG_STATUS_DENIED);
  /* the audit names the approval that covered b's call */
  tg_store *sb = tg_runtime_store(b);
  char err[TG_ERRMSG] = "";
  cJSON *list = tg_store_approvals(sb, 0, err);
  ASSERT_INT_EQ(cJSON_GetArraySize(list), 1);
  const cJSON *ap = cJSON_GetArrayItem(list, 0);
  int64_t id = (int64_t)num_at(ap, "id");
  ASSERT_STR_EQ(str_at(ap, "scope"), "pattern");
  ASSERT_STR_EQ(str_at(ap, "arg"), "command");
  ASSERT_STR_EQ(str_at(ap, "glob"), "npm test*");
  ASSERT_STR_EQ(str_at(ap, "where"), "project");
  ASSERT_TRUE(str_at(ap, "by"));
  cJSON_Delete(list);
  tg_audit_filter f = {.session = "s-b", .status = "ok"};
  cJSON *recs = tg_store_audit(sb, &f, err);
  const cJSON *dec = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(recs, 0), "decision");
  ASSERT_STR_EQ(str_at(dec, "approval"), "remembered");
  ASSERT_NUM_EQ(num_at(dec, "approval_id"), (double)id);
  cJSON_Delete(recs);
  /* revoked from a third connection: both ask again */
  tg_store *admin = tg_store_open(path, 0, err);
  ASSERT_INT_EQ(tg_store_revoke(admin, id, err), 0);
  ASSERT_INT_EQ(tg_store_revoke(admin, id, err), -ENOENT);
  ASSERT_CONTAINS(err, "no approval in force");
  tg_store_close(admin);
  run_for(b, 300); /* b notices by polling; a when its host reads */
  ASSERT_INT_EQ(run_sh(b, "npm test"), TG_STATUS_REJECTED);
  cJSON_Delete(tg_store_approvals(tg_runtime_store(a), 0, err));
  ASSERT_INT_EQ(run_sh(a, "npm test"), TG_STATUS_OK);
  ASSERT_INT_EQ(grants.n, 2); /* asked again (and granted again) */
  tg_runtime_free(a);
  tg_runtime_free(b);
  free(path);
  remove_tree(dir);
}

TEST(approvals_keep_to_their_session_or_project) {
  char *dir = temp_dir(), *path = db_in(dir, "where.db");
  char *other = temp_dir();
  put_file(dir, "10_ask.lua", ask_policy);
  tg_always_spec session_args = {.scope = TG_SCOPE_ARGS};
  always_approver grants = {0, &session_args}, rejects = {0, NULL};
  tg_runtime *a = ask_rt(dir, path, "s1", dir, &grants);
  ASSERT_INT_EQ(run_sh(a, "ls"), TG_STATUS_OK);
  ASSERT_INT_EQ(run_sh(a, "ls"), TG_STATUS_OK);
  ASSERT_INT_EQ(grants.n, 1);
  ASSERT_INT_EQ(run_sh(a, "ls -l"), TG_STATUS_OK); /* other args: asked */
  ASSERT_INT_EQ(grants.n, 2);
  tg_runtime *same = ask_rt(dir, path, "s1", other, &rejects);
  tg_runtime *diff = ask_rt(dir, path, "s2", dir, &rejects);
  ASSERT_INT_EQ(run_sh(same, "ls"), TG_STATUS_OK);      /* same session */
  ASSERT_INT_EQ(run_sh(diff, "ls"), TG_STATUS_REJECTED); /* another session */
  /* a project grant covers every session in that project, no other */
  char err[TG_ERRMSG] = "";
  tg_always_spec g = {.scope = TG_SCOPE_TOOL, .where = TG_WHERE_PROJECT,
                      .tool = "sh", .project = dir};
  ASSERT_TRUE(tg_store_grant(tg_runtime_store(diff), &g, err) > 0);
  ASSERT_INT_EQ(run_sh(diff, "anything"), TG_STATUS_OK);
  ASSERT_INT_EQ(run_sh(same, "anything"), TG_STATUS_REJECTED); /* other project */
  tg_runtime_free(a);
  tg_runtime_free(same);
  tg_runtime_free(diff);
  free(path);
  remove_tree(dir);
  remove_tree(other);
}

TEST(approvals_expire) {
  char *dir = temp_dir(), *path = db_in(dir, "exp.db");
  put_file(dir, "10_ask.lua", ask_policy);
  always_approver rejects = {0, NULL};
  tg_runtime *rt = ask_rt(dir, path, "s", dir, &rejects);
  char err[TG_ERRMSG] = "";
  tg_always_spec g = {.scope = TG_SCOPE_TOOL, .where = TG_WHERE_SESSION,
                      .tool = "sh", .session = "s",
                      .until_ms = now_ms() + 3000};
  tg_store *st = tg_store_open(path, 0, err);
  ASSERT_TRUE(tg_store_grant(st, &g, err) > 0);
  cJSON_Delete(tg_store_approvals(tg_runtime_store(rt), 0, err)); /* in */
  /* the store's expiry reads the system clock, not the runtime's: a
   * grant of 3 s leaves the first call room under valgrind on a loaded
   * machine (400 ms did not) */
  ASSERT_INT_EQ(run_sh(rt, "ls"), TG_STATUS_OK);
  while (now_ms() <= g.until_ms) usleep(50 * 1000);
  ASSERT_INT_EQ(run_sh(rt, "ls"), TG_STATUS_REJECTED);
  cJSON *in_force = tg_store_approvals(st, 0, err);
  cJSON *all = tg_store_approvals(st, 1, err);
  ASSERT_INT_EQ(cJSON_GetArraySize(in_force), 0);
  ASSERT_INT_EQ(cJSON_GetArraySize(all), 1);
  ASSERT_TRUE(num_at(cJSON_GetArrayItem(all, 0), "until") > 0);
  cJSON_Delete(in_force);
  cJSON_Delete(all);
  /* an until already past, a pattern without a glob, a bad glob: refused */
  g.until_ms = now_ms() - 1000;
  ASSERT_INT_EQ(tg_store_grant(st, &g, err), -EINVAL);
  ASSERT_CONTAINS(err, "already past");
  tg_always_spec p = {.scope = TG_SCOPE_PATTERN, .arg = "command",
                      .where = TG_WHERE_SESSION, .tool = "sh", .session = "s"};
  ASSERT_INT_EQ(tg_store_grant(st, &p, err), -EINVAL);
  ASSERT_CONTAINS(err, "glob");
  p.glob = "[unclosed";
  ASSERT_INT_EQ(tg_store_grant(st, &p, err), -EINVAL);
  ASSERT_CONTAINS(err, "not valid");
  tg_always_spec noproject = {.scope = TG_SCOPE_TOOL, .tool = "sh",
                              .where = TG_WHERE_PROJECT,
                              .project = "/no/such/project"};
  ASSERT_INT_EQ(tg_store_grant(st, &noproject, err), -EINVAL);
  ASSERT_CONTAINS(err, "/no/such/project");
  tg_store_close(st);
  tg_runtime_free(rt);
  free(path);
  remove_tree(dir);
}

TEST(approvals_stay_in_memory_with_storage_off) {
  char *dir = temp_dir();
  put_file(dir, "10_ask.lua", ask_policy);
  tg_always_spec spec = {.scope = TG_SCOPE_PATTERN, .arg = "command",
                         .glob = "git *", .where = TG_WHERE_SESSION};
  always_approver grants = {0, &spec};
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.policies_dir = dir;
  cfg.db_off = 1;
  tg_runtime *rt = new_runtime(&cfg);
  ASSERT_TRUE(!tg_runtime_store(rt));
  tg_runtime_set_approver(rt, always_cb, &grants);
  ASSERT_INT_EQ(run_sh(rt, "git status"), TG_STATUS_OK);
  ASSERT_INT_EQ(run_sh(rt, "git log"), TG_STATUS_OK);
  ASSERT_INT_EQ(grants.n, 1);
  ASSERT_INT_EQ(run_sh(rt, "make"), TG_STATUS_OK);
  ASSERT_INT_EQ(grants.n, 2);
  char err[TG_ERRMSG];
  /* usage still reaches the budgets (kept in memory for this runtime) */
  tg_usage u = {.model = "m"};
  ASSERT_OK(tg_record_usage(rt, &u, err), err);
  tg_usage bad = {.model = NULL};
  ASSERT_INT_EQ(tg_record_usage(rt, &bad, err), -EINVAL);
  ASSERT_CONTAINS(err, "model");
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* A runtime on dir whose ask policy has a call of sh with args_json
 * waiting for its approver (ap), storage in memory; o gets the outcome. */
static tg_runtime *asked_in_memory(const char *dir, const char *args_json,
                                   approver *ap, outcome *o) {
  put_file(dir, "10_ask.lua", ask_policy);
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.policies_dir = dir;
  cfg.db = ":memory:";
  tg_runtime *rt = new_runtime(&cfg);
  tg_runtime_set_approver(rt, approver_cb, ap);
  memset(o, 0, sizeof *o);
  start_call(rt, NULL, "sh", args_json, o);
  run_until(rt, &ap->n, 1);
  return rt;
}

TEST(answer_always_checks_its_spec) {
  char *dir = temp_dir();
  approver ap = {0};
  outcome o;
  tg_runtime *rt = asked_in_memory(dir, "{\"command\":\"x\"}", &ap, &o);
  char err[TG_ERRMSG] = "";
  tg_always_spec bad = {.scope = TG_SCOPE_PATTERN, .arg = "command",
                        .glob = "[x"};
  ASSERT_INT_EQ(tg_approval_answer_always(rt, ap.last_id, &bad, err), -EINVAL);
  ASSERT_CONTAINS(err, "not valid");
  ASSERT_INT_EQ(tg_approval_answer(rt, ap.last_id, TG_ANSWER_ALWAYS,
                               TG_SCOPE_PATTERN, NULL), -EINVAL);
  ASSERT_INT_EQ(o.n, 0); /* still waiting for a good answer */
  tg_always_spec good = {.scope = TG_SCOPE_ARGS, .until_ms = now_ms() + 60000};
  ASSERT_INT_EQ(tg_approval_answer_always(rt, ap.last_id, &good, err), 0);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(o.status, TG_STATUS_OK);
  ASSERT_INT_EQ(tg_approval_answer_always(rt, ap.last_id, &good, err), -ENOENT);
  /* ":memory:": the runtime's own database, readable through its store */
  cJSON *list = tg_store_approvals(tg_runtime_store(rt), 0, err);
  ASSERT_INT_EQ(cJSON_GetArraySize(list), 1);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(list, 0), "scope"), "args");
  ASSERT_STR_EQ(tg_store_path(tg_runtime_store(rt)), ":memory:");
  cJSON_Delete(list);
  cJSON *recs = tg_store_audit(tg_runtime_store(rt), NULL, err);
  ASSERT_INT_EQ(cJSON_GetArraySize(recs), 1);
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(recs, 0),
                                           "decision"), "approval"), "always");
  cJSON_Delete(recs);
  outcome_free(&o);
  approver_free(&ap);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* ---- nothing secret is stored raw ------------------------------------- */

/* One credential of each shape the audit masks (core/redact.c), and the
 * part of each that must never be found in the file. */
#define SECRET_CMD                                                        \
  "echo AKIAQWERTYUIOPASDF12 ghp_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8 "   \
  "github_pat_11ABCDEFG0123456789_abcdefghijklmnop Bearer sEcReTtOkEn.12345 " \
  "-----BEGIN RSA PRIVATE KEY-----\\nMIIEsecretpemBODYxyz\\n"            \
  "-----END RSA PRIVATE KEY-----"
static const char *const secret_parts[] = {
    "AKIAQWERTYUIOPASDF12", "ghp_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8",
    "github_pat_11ABCDEFG0123456789", "sEcReTtOkEn.12345",
    "MIIEsecretpemBODYxyz", NULL};

/* Fails when file (if it exists) holds any secret part. */
static void file_has_no_secret(const char *file) {
  FILE *f = fopen(file, "rb");
  if (!f) return;
  size_t cap = 1 << 16, n = 0, r;
  char *buf = malloc(cap);
  while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  for (int i = 0; secret_parts[i]; i++)
    if (memmem(buf, n, secret_parts[i], strlen(secret_parts[i])))
      TG_FAIL("%s holds '%s'", file, secret_parts[i]);
  free(buf);
}

static void db_files_have_no_secret(const char *path) {
  char side[4096];
  file_has_no_secret(path);
  snprintf(side, sizeof side, "%s-wal", path);
  file_has_no_secret(side);
  snprintf(side, sizeof side, "%s-journal", path);
  file_has_no_secret(side);
}

static void text_has_no_secret(const char *text) {
  for (int i = 0; secret_parts[i]; i++)
    if (strstr(text, secret_parts[i]))
      TG_FAIL("'%s' in: %s", secret_parts[i], text);
}

/* The approvals list (all) as text: no secret, the masks in it. */
static void list_is_masked(tg_store *st) {
  char err[TG_ERRMSG] = "";
  cJSON *all = tg_store_approvals(st, 1, err);
  if (!all) TG_FAIL("%s", err);
  char *text = tg_json_print(all, 0);
  text_has_no_secret(text);
  ASSERT_CONTAINS(text, "[REDACTED:aws-access-key]");
  ASSERT_CONTAINS(text, "Bearer [REDACTED]");
  free(text);
  cJSON_Delete(all);
}

TEST(approvals_of_args_keep_no_secret_in_the_file_its_wal_or_the_list) {
  char *dir = temp_dir(), *path = db_in(dir, "sealed.db");
  put_file(dir, "10_ask.lua", ask_policy);
  tg_always_spec args = {.scope = TG_SCOPE_ARGS};
  always_approver grants = {0, &args}, rejects = {0, NULL};
  tg_runtime *a = ask_rt(dir, path, "s", dir, &grants);
  ASSERT_INT_EQ(run_sh(a, SECRET_CMD), TG_STATUS_OK);
  ASSERT_INT_EQ(grants.n, 1);
  char err[TG_ERRMSG] = "";
  cJSON_Delete(tg_store_approvals(tg_runtime_store(a), 0, err)); /* stored */
  /* the stored digest covers the same args (the in-memory copy is gone
   * once stored), and nothing else */
  ASSERT_INT_EQ(run_sh(a, SECRET_CMD), TG_STATUS_OK);
  ASSERT_INT_EQ(grants.n, 1);
  ASSERT_INT_EQ(run_sh(a, "echo AKIAQWERTYUIOPASDF13"), TG_STATUS_OK);
  ASSERT_INT_EQ(grants.n, 2);
  /* another runtime on the file matches it too */
  tg_runtime *b = ask_rt(dir, path, "s", dir, &rejects);
  ASSERT_INT_EQ(run_sh(b, SECRET_CMD), TG_STATUS_OK);
  ASSERT_INT_EQ(rejects.n, 0);
  /* a grant of exact args: sealed as well; a pattern with a secret: refused */
  tg_store *admin = tg_store_open(path, 0, err);
  cJSON *gargs = cJSON_CreateObject();
  cJSON_AddStringToObject(gargs, "command", "curl -H 'Authorization: Bearer "
                          "sEcReTtOkEn.12345' AKIAQWERTYUIOPASDF12");
  tg_always_spec g = {.scope = TG_SCOPE_ARGS, .tool = "sh", .args = gargs,
                      .where = TG_WHERE_SESSION, .session = "s"};
  ASSERT_TRUE(tg_store_grant(admin, &g, err) > 0);
  tg_always_spec pat = {.scope = TG_SCOPE_PATTERN, .tool = "sh",
                        .arg = "command", .glob = "curl *Bearer sEcReTtOkEn.12345*",
                        .where = TG_WHERE_SESSION, .session = "s"};
  ASSERT_INT_EQ(tg_store_grant(admin, &pat, err), -EINVAL);
  ASSERT_CONTAINS(err, "credential");
  ASSERT_CONTAINS(err, "exact args");
  text_has_no_secret(err);
  pat.glob = "curl *Bearer *"; /* without the secret: taken */
  ASSERT_TRUE(tg_store_grant(admin, &pat, err) > 0);
  list_is_masked(admin);
  db_files_have_no_secret(path); /* with the WAL in use */
  tg_store_close(admin);
  cJSON_Delete(gargs);
  tg_runtime_free(a);
  tg_runtime_free(b);
  db_files_have_no_secret(path);
  free(path);
  remove_tree(dir);
}

TEST(an_answer_always_with_a_secret_pattern_is_refused) {
  char *dir = temp_dir();
  approver ap = {0};
  outcome o;
  tg_runtime *rt = asked_in_memory(dir, "{\"command\":\"echo ghp_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8\"}", &ap, &o);
  char err[TG_ERRMSG] = "";
  tg_always_spec secret = {.scope = TG_SCOPE_PATTERN, .arg = "command",
                           .glob = "echo ghp_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8"};
  ASSERT_INT_EQ(tg_approval_answer_always(rt, ap.last_id, &secret, err), -EINVAL);
  ASSERT_CONTAINS(err, "credential");
  text_has_no_secret(err);
  ASSERT_INT_EQ(o.n, 0); /* still waiting for a good answer */
  tg_always_spec good = {.scope = TG_SCOPE_ARGS};
  ASSERT_INT_EQ(tg_approval_answer_always(rt, ap.last_id, &good, err), 0);
  run_until(rt, &o.n, 1);
  ASSERT_INT_EQ(o.status, TG_STATUS_OK);
  outcome_free(&o);
  approver_free(&ap);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(fixture_v4_matches_schema_step_4) { fixture_matches_schema_step(4); }

/* The version 4 fixture's approvals hold args and a pattern in clear (as
 * toolgate wrote them before version 5): sealed by the upgrade. */
TEST(version_4_approvals_are_sealed_by_the_upgrade) {
  char *dir = temp_dir(), *path = db_in(dir, "v4.db");
  put_file(dir, "10_ask.lua", ask_policy);
  char cmd[2200], err[TG_ERRMSG] = "";
  snprintf(cmd, sizeof cmd, "cp '%s/spec/fixtures/toolgate-v4.db' '%s' && "
           "chmod 600 '%s'", TG_SOURCE_DIR, path, path);
  ASSERT_INT_EQ(system(cmd), 0);
  tg_store *s = tg_store_open(path, 0, err);
  if (!s) TG_FAIL("%s", err);
  ASSERT_INT_EQ(sql_int(path, "PRAGMA user_version"), TG_DB_SCHEMA_VERSION);
  ASSERT_INT_EQ(sql_int(path, "SELECT count(*) FROM approvals WHERE "
                        "args_key IS NOT NULL"), 0);
  ASSERT_INT_EQ(sql_int(path, "SELECT length(args_digest) FROM approvals "
                        "WHERE scope = 'args'"), 64);
  /* the pattern with a credential: masked and revoked; the other stays */
  ASSERT_INT_EQ(sql_int(path, "SELECT revoked IS NOT NULL FROM approvals "
                        "WHERE id = 2"), 1);
  ASSERT_INT_EQ(sql_int(path, "SELECT revoked IS NULL FROM approvals "
                        "WHERE id = 3"), 1);
  list_is_masked(s);
  tg_store_close(s);
  db_files_have_no_secret(path);
  /* the sealed row still covers those args: the digest is of the same
   * canonical text the old row held */
  always_approver rejects = {0, NULL};
  tg_runtime *rt = ask_rt(dir, path, "s", dir, &rejects);
  ASSERT_INT_EQ(run_sh(rt, "deploy AKIAQWERTYUIOPASDF12 "
                           "ghp_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8 "
                           "github_pat_11ABCDEFG0123456789_abcdefghijklmnop "
                           "Bearer sEcReTtOkEn.12345 "
                           "-----BEGIN RSA PRIVATE KEY-----\\nMIIEsecretpemBODYxyz"
                           "\\n-----END RSA PRIVATE KEY-----"),
                TG_STATUS_OK);
  ASSERT_INT_EQ(rejects.n, 0);
  ASSERT_INT_EQ(run_sh(rt, "npm test"), TG_STATUS_OK); /* the plain pattern */
  ASSERT_INT_EQ(run_sh(rt, "curl -H Bearer sEcReTtOkEn.12345 x"),
                TG_STATUS_REJECTED); /* the revoked one */
  tg_runtime_free(rt);
  db_files_have_no_secret(path);
  free(path);
  remove_tree(dir);
}

/* ---- the file is private however its path is reached ------------------ */

static void mode_is(const char *file, unsigned mode) {
  struct stat s;
  if (stat(file, &s) < 0) TG_FAIL("%s: %s", file, strerror(errno));
  if ((s.st_mode & 0777) != mode)
    TG_FAIL("%s: mode %03o, not %03o", file, s.st_mode & 0777, mode);
}

TEST(a_dangling_symlink_is_refused_not_followed) {
  char *dir = temp_dir(), *link = db_in(dir, "link.db");
  char *target = db_in(dir, "target.db");
  ASSERT_INT_EQ(symlink(target, link), 0);
  char err[TG_ERRMSG] = "";
  ASSERT_TRUE(!tg_store_open(link, 1, err));
  ASSERT_CONTAINS(err, "symbolic link");
  ASSERT_CONTAINS(err, target);
  struct stat s;
  ASSERT_INT_EQ(lstat(target, &s), -1); /* nothing made there */
  /* a link to an existing database of ours is followed, and it and its
   * -wal (beside the target, where SQLite keeps it) are 0600 */
  tg_store_close(tg_store_open(target, 1, err));
  ASSERT_INT_EQ(chmod(target, 0644), 0); /* as an older toolgate left it */
  tg_store *st = tg_store_open(link, 0, err);
  if (!st) TG_FAIL("%s", err);
  mode_is(target, 0600);
  char wal[4096];
  snprintf(wal, sizeof wal, "%s-wal", target);
  mode_is(wal, 0600);
  tg_store_close(st);
  free(link);
  free(target);
  remove_tree(dir);
}

TEST(a_database_through_a_symlinked_folder_is_private_with_its_wal_and_shm) {
  char *dir = temp_dir(), *real = db_in(dir, "real"), *via = db_in(dir, "via");
  ASSERT_INT_EQ(mkdir(real, 0755), 0);
  ASSERT_INT_EQ(symlink(real, via), 0);
  char *path = db_in(via, "x.db");
  mode_t old = umask(0); /* the worst umask: SQLite would make 0666 */
  char err[TG_ERRMSG] = "";
  tg_config cfg = db_cfg(path);
  tg_runtime *rt = new_runtime(&cfg);
  umask(old);
  static const char *const names[] = {"x.db", "x.db-wal", "x.db-shm"};
  for (int i = 0; i < 3; i++) {
    char *f = db_in(real, names[i]);
    mode_is(f, 0600);
    free(f);
  }
  tg_runtime_free(rt);
  (void)err;
  free(path);
  free(real);
  free(via);
  remove_tree(dir);
}

TEST(files_of_another_user_or_a_folder_open_to_all_are_refused) {
  if (geteuid() != 0) {
    printf("  skipped: needs root (to give a file to another user)\n");
    return;
  }
  char *dir = temp_dir(), *path = db_in(dir, "theirs.db");
  char err[TG_ERRMSG] = "";
  /* a file planted by another user (say in a shared /tmp) */
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
  ASSERT_TRUE(fd >= 0);
  close(fd);
  ASSERT_INT_EQ(chown(path, 65534, 65534), 0);
  ASSERT_TRUE(!tg_store_open(path, 1, err));
  ASSERT_CONTAINS(err, "belongs to another user");
  ASSERT_INT_EQ(unlink(path), 0);
  /* our file, but a -wal planted beside it by another user */
  tg_store_close(tg_store_open(path, 1, err));
  char wal[4096];
  snprintf(wal, sizeof wal, "%s-wal", path);
  fd = open(wal, O_WRONLY | O_CREAT | O_EXCL, 0666);
  ASSERT_TRUE(fd >= 0);
  close(fd);
  ASSERT_INT_EQ(chown(wal, 65534, 65534), 0);
  ASSERT_TRUE(!tg_store_open(path, 0, err));
  ASSERT_CONTAINS(err, "-wal belongs to another user");
  ASSERT_INT_EQ(unlink(wal), 0);
  /* a -shm that is a link */
  char shm[4096];
  snprintf(shm, sizeof shm, "%s-shm", path);
  ASSERT_INT_EQ(symlink("/tmp/elsewhere", shm), 0);
  ASSERT_TRUE(!tg_store_open(path, 0, err));
  ASSERT_CONTAINS(err, "not a regular file");
  ASSERT_INT_EQ(unlink(shm), 0);
  /* a folder another user owns, or everyone may write without the sticky bit */
  char *sub = db_in(dir, "sub"), *in_sub = db_in(sub, "x.db");
  ASSERT_INT_EQ(mkdir(sub, 0777), 0);
  ASSERT_INT_EQ(chmod(sub, 0777), 0);
  ASSERT_TRUE(!tg_store_open(in_sub, 1, err));
  ASSERT_CONTAINS(err, "writable by everyone");
  ASSERT_INT_EQ(chmod(sub, 0755), 0);
  ASSERT_INT_EQ(chown(sub, 65534, 65534), 0);
  ASSERT_TRUE(!tg_store_open(in_sub, 1, err));
  ASSERT_CONTAINS(err, "belongs to another user");
  ASSERT_INT_EQ(chmod(sub, 01777), 0); /* like /tmp: sticky is fine... */
  ASSERT_INT_EQ(chown(sub, 0, 0), 0);
  tg_store *st = tg_store_open(in_sub, 1, err);
  if (!st) TG_FAIL("%s", err);
  mode_is(in_sub, 0600);
  tg_store_close(st);
  /* ... and the file is still ours: someone else's copy is refused */
  free(sub);
  free(in_sub);
  free(path);
  remove_tree(dir);
}

/* ---- usage ---------------------------------------------------------------- */


TEST(time_parse_takes_durations_and_dates_and_refuses_the_rest) {
  int64_t now = 1750000000000, t = 0;
  char err[TG_ERRMSG] = "";
  ASSERT_INT_EQ(tg_time_parse("10m", now, -1, &t, err), 0);
  ASSERT_INT_EQ(t, now - 600000);
  ASSERT_INT_EQ(tg_time_parse("2h", now, 1, &t, err), 0);
  ASSERT_INT_EQ(t, now + 7200000);
  ASSERT_INT_EQ(tg_time_parse("1w", now, -1, &t, err), 0);
  ASSERT_INT_EQ(t, now - 604800000);
  ASSERT_INT_EQ(tg_time_parse("2025-06-01T12:30:00Z", now, 1, &t, err), 0);
  ASSERT_INT_EQ(t, 1748781000000);
  ASSERT_INT_EQ(tg_time_parse("2025-06-01", now, 1, &t, err), 0);
  ASSERT_INT_EQ(tg_time_parse("2025-06-01 12:30", now, 1, &t, err), 0);
  static const char *const bad[] = {"", "10", "10x", " 10m", "+10m", "10mm",
                                    "-5m", "2025-13-01", "2025-02-30",
                                    "2025-06-01T25:00", "2025-06-01Tx",
                                    "yesterday", "99999999999999999999s"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    if (tg_time_parse(bad[i], now, -1, &t, err) != -EINVAL)
      TG_FAIL("'%s' was taken as a time", bad[i]);
  }
  ASSERT_CONTAINS(err, "is not a time");
}

TEST_MAIN(TEST_ENTRY(schema_created_in_a_new_private_wal_file),
          TEST_ENTRY(default_path_is_under_xdg_state_home_made_private),
          TEST_ENTRY(fixture_v1_matches_schema_step_1),
          TEST_ENTRY(version_1_file_is_upgraded_in_place_keeping_its_calls),
          TEST_ENTRY(newer_schema_is_refused_naming_both_versions),
          TEST_ENTRY(a_store_opened_read_only_reads_and_writes_nothing),
          TEST_ENTRY(corrupt_or_foreign_files_are_refused_with_a_clear_error),
          TEST_ENTRY(paths_that_are_no_file_are_refused_without_hanging),
          TEST_ENTRY(unwritable_file_is_refused),
          TEST_ENTRY(locked_file_is_waited_for_then_refused),
          TEST_ENTRY(audit_record_holds_the_whole_call),
          TEST_ENTRY(audit_caps_args_and_result_at_a_character_boundary),
          TEST_ENTRY(done_comes_after_the_record_is_committed),
          TEST_ENTRY(a_call_waits_for_a_lock_held_elsewhere),
          TEST_ENTRY(a_record_that_cannot_be_written_is_reported_not_lost_silently),
          TEST_ENTRY(a_journaled_call_is_answered_while_a_lock_is_held_elsewhere),
          TEST_ENTRY(a_journaled_record_the_file_refuses_is_reported),
          TEST_ENTRY(a_burst_of_calls_is_recorded_in_order_one_refusal_lost_not_the_batch),
          TEST_ENTRY(every_answered_call_is_in_the_audit_after_kill_9),
          TEST_ENTRY(search_finds_calls_the_index_has_not_reached),
          TEST_ENTRY(approvals_by_pattern_are_honoured_by_a_second_runtime_until_revoked),
          TEST_ENTRY(approvals_keep_to_their_session_or_project),
          TEST_ENTRY(approvals_expire),
          TEST_ENTRY(approvals_stay_in_memory_with_storage_off),
          TEST_ENTRY(answer_always_checks_its_spec),
          TEST_ENTRY(approvals_of_args_keep_no_secret_in_the_file_its_wal_or_the_list),
          TEST_ENTRY(an_answer_always_with_a_secret_pattern_is_refused),
          TEST_ENTRY(fixture_v4_matches_schema_step_4),
          TEST_ENTRY(version_4_approvals_are_sealed_by_the_upgrade),
          TEST_ENTRY(a_dangling_symlink_is_refused_not_followed),
          TEST_ENTRY(a_database_through_a_symlinked_folder_is_private_with_its_wal_and_shm),
          TEST_ENTRY(files_of_another_user_or_a_folder_open_to_all_are_refused),
          TEST_ENTRY(time_parse_takes_durations_and_dates_and_refuses_the_rest))
