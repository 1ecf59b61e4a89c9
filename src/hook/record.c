/*
 * record.c — the one seam between the hook front and storage. Until the
 * storage issue lands (SQLite sessions, the usage ledger tg_record_usage,
 * the chat side's turn counter), what the hooks learn is kept here, in a
 * folder of the user's (0700):
 *
 *   sessions/<hash>.json  one per session: its turn, where its transcript
 *                         was read up to; rewritten whole under the lock
 *                         of sessions/<hash>.json.lock
 *   turns.jsonl           {time, agent, session, turn} per user prompt
 *   usage.jsonl           {time, agent, session, model, input_tokens,
 *                         output_tokens, cache_creation_input_tokens,
 *                         cache_read_input_tokens, messages} per model
 *                         and Stop: the usage ledger budgets will read
 *   sessions.jsonl        {time, agent, session, event: start|end, ...}
 *
 * At merge the lead replaces the bodies of the hook_record_* and
 * hook_session_* functions with calls into storage; nothing else in the
 * front writes these files. Session ids are the agent's (hostile): they
 * name files only through a hash, and are stored, never trusted as paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "hook.h"

#define STATE_MAX (64 * 1024) /* a session's state file, at most */

static int mkdirs(const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (n >= sizeof buf) return -ENAMETOOLONG;
  memcpy(buf, path, n + 1);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0700) < 0 && errno != EEXIST) return -errno;
    *p = '/';
  }
  if (mkdir(buf, 0700) < 0 && errno != EEXIST) return -errno;
  return 0;
}

int hook_record_open(hook_record *r, const char *dir, char err[TG_ERRMSG]) {
  const char *env = getenv("TOOLGATE_STATE_DIR");
  const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
  int n;
  if (dir) n = snprintf(r->dir, sizeof r->dir, "%s", dir);
  else if (env && *env) n = snprintf(r->dir, sizeof r->dir, "%s", env);
  else if (xdg && *xdg == '/')
    n = snprintf(r->dir, sizeof r->dir, "%s/toolgate/hooks", xdg);
  else if (home && *home == '/')
    n = snprintf(r->dir, sizeof r->dir, "%s/.local/state/toolgate/hooks", home);
  else {
    snprintf(err, TG_ERRMSG, "no folder to keep hook records in: set "
             "TOOLGATE_STATE_DIR, XDG_STATE_HOME or HOME");
    return -ENOENT;
  }
  if (n < 0 || (size_t)n >= sizeof r->dir - 64) {
    snprintf(err, TG_ERRMSG, "the hook records folder's path is too long");
    return -ENAMETOOLONG;
  }
  return 0;
}

static int ensure(hook_record *r, const char *sub, char *err) {
  char p[4200];
  snprintf(p, sizeof p, "%s%s%s", r->dir, sub ? "/" : "", sub ? sub : "");
  int rc = mkdirs(p);
  if (rc < 0)
    snprintf(err, TG_ERRMSG, "cannot make '%.300s': %s", p, strerror(-rc));
  return rc;
}

static void now_iso(char buf[32]) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  size_t n = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, 32 - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

/* Appends j (taken) as one line to dir/name: one write(2) with O_APPEND,
 * so lines of concurrent hooks do not interleave. */
static int append(hook_record *r, const char *name, cJSON *j, char *err) {
  char path[4200], t[32];
  now_iso(t);
  cJSON_AddItemToObject(j, "time", cJSON_CreateString(t));
  char *s = tg_json_print(j, 0);
  cJSON_Delete(j);
  int rc = s ? ensure(r, NULL, err) : -ENOMEM;
  if (rc < 0) {
    free(s);
    return rc;
  }
  snprintf(path, sizeof path, "%s/%s", r->dir, name);
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                0600);
  if (fd < 0) {
    rc = -errno;
    snprintf(err, TG_ERRMSG, "cannot open '%.300s': %s", path, strerror(errno));
    free(s);
    return rc;
  }
  size_t n = strlen(s);
  s[n] = '\n'; /* the NUL becomes the newline: n + 1 bytes */
  ssize_t w = write(fd, s, n + 1);
  if (w != (ssize_t)(n + 1)) {
    rc = w < 0 ? -errno : -EIO;
    snprintf(err, TG_ERRMSG, "cannot write '%.300s': %s", path,
             w < 0 ? strerror(errno) : "short write");
  }
  close(fd);
  free(s);
  return rc;
}

static cJSON *line(const char *agent, const char *session) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "agent", agent);
  cJSON_AddStringToObject(j, "session", session);
  return j;
}

/* ---- a session's state file ------------------------------------------- */

static void state_path(hook_record *r, const char *session, char *buf,
                       size_t len) {
  uint64_t h = 1469598103934665603ull;
  for (const char *s = session; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  snprintf(buf, len, "%s/sessions/%016llx.json", r->dir, (unsigned long long)h);
}

/* The state in fd, or a fresh {session_id} when there is none, it is not
 * ours (a hash collision) or it is unreadable. */
static cJSON *read_state(int fd, const char *session) {
  char buf[STATE_MAX];
  ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf, 0) : -1;
  cJSON *j = n > 0 ? tg_json_parse(buf, (size_t)n, NULL, NULL, 0) : NULL;
  const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(j, "session_id"));
  if (!cJSON_IsObject(j) || !id || strcmp(id, session)) {
    cJSON_Delete(j);
    j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "session_id", session);
  }
  return j;
}

typedef int (*state_fn)(cJSON *state, void *ud);

/* Runs fn on the session's state under its lock (a .lock file beside
 * it), and writes it back whole: a temporary file renamed over it, so a
 * reader without the lock (the turn a tool call carries) never sees it
 * half written. */
static int with_state(hook_record *r, const char *session, state_fn fn,
                      void *ud, char *err) {
  char path[4200], lock[4210], tmp[4220];
  int rc = ensure(r, "sessions", err);
  if (rc < 0) return rc;
  state_path(r, session, path, sizeof path);
  snprintf(lock, sizeof lock, "%s.lock", path);
  int lk = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lk < 0 || flock(lk, LOCK_EX) < 0) {
    rc = -errno;
    snprintf(err, TG_ERRMSG, "cannot lock '%.300s': %s", lock, strerror(errno));
    if (lk >= 0) close(lk);
    return rc;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  cJSON *st = read_state(fd, session);
  if (fd >= 0) close(fd);
  rc = fn(st, ud);
  char *s = rc >= 0 ? tg_json_print(st, 0) : NULL;
  if (s && strlen(s) < STATE_MAX) {
    snprintf(tmp, sizeof tmp, "%s.tmp", path); /* ours: we hold the lock */
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                   0600);
    size_t n = strlen(s);
    int ok = out >= 0 && write(out, s, n) == (ssize_t)n;
    if (out >= 0 && close(out) < 0) ok = 0;
    if (!ok || rename(tmp, path) < 0) {
      rc = -EIO;
      snprintf(err, TG_ERRMSG, "cannot write '%.300s'", path);
      unlink(tmp);
    }
  }
  free(s);
  cJSON_Delete(st);
  close(lk); /* and the lock with it */
  return rc;
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItem(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void set_num(cJSON *o, const char *k, double v) {
  cJSON_DeleteItemFromObject(o, k);
  cJSON_AddNumberToObject(o, k, v);
}

static void set_str(cJSON *o, const char *k, const char *v) {
  cJSON_DeleteItemFromObject(o, k);
  if (v) cJSON_AddStringToObject(o, k, v);
}

/* ---- turns ------------------------------------------------------------- */

typedef struct {
  const char *agent;
  int64_t turn;
} turn_run;

static int next_turn(cJSON *st, void *ud) {
  turn_run *t = ud;
  t->turn = (int64_t)num(st, "turn") + 1;
  set_num(st, "turn", (double)t->turn);
  set_str(st, "agent", t->agent);
  return 0;
}

int64_t hook_record_turn(hook_record *r, const char *agent,
                         const char *session, char err[TG_ERRMSG]) {
  turn_run t = {agent, 0};
  if (with_state(r, session, next_turn, &t, err) < 0) return -1;
  cJSON *j = line(agent, session);
  cJSON_AddNumberToObject(j, "turn", (double)t.turn);
  if (append(r, "turns.jsonl", j, err) < 0) return -1;
  return t.turn;
}

int64_t hook_record_current_turn(hook_record *r, const char *session) {
  char path[4200];
  state_path(r, session, path, sizeof path);
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return 0;
  cJSON *st = read_state(fd, session);
  close(fd);
  double t = num(st, "turn");
  cJSON_Delete(st);
  return t > 0 && t < 9e15 ? (int64_t)t : 0;
}

/* ---- usage --------------------------------------------------------------- */

int hook_record_usage(hook_record *r, const char *agent, const char *session,
                      const hook_usage *u, char err[TG_ERRMSG]) {
  cJSON *j = line(agent, session);
  cJSON_AddStringToObject(j, "model", u->model[0] ? u->model : "unknown");
  cJSON_AddNumberToObject(j, "input_tokens", (double)u->input_tokens);
  cJSON_AddNumberToObject(j, "output_tokens", (double)u->output_tokens);
  cJSON_AddNumberToObject(j, "cache_creation_input_tokens",
                          (double)u->cache_creation_input_tokens);
  cJSON_AddNumberToObject(j, "cache_read_input_tokens",
                          (double)u->cache_read_input_tokens);
  cJSON_AddNumberToObject(j, "messages", (double)u->messages);
  cJSON_AddStringToObject(j, "source", "transcript");
  return append(r, "usage.jsonl", j, err);
}

/* The transcript mark lives in the session's state, under its lock. */
typedef struct {
  int (*fn)(hook_transcript_mark *m, void *ud);
  void *ud;
} mark_run;

static int with_mark(cJSON *st, void *ud) {
  mark_run *mr = ud;
  hook_transcript_mark m;
  memset(&m, 0, sizeof m);
  const cJSON *t = cJSON_GetObjectItem(st, "transcript");
  m.offset = (uint64_t)num(t, "offset");
  m.dev = (uint64_t)num(t, "dev");
  m.ino = (uint64_t)num(t, "ino");
  m.last_total = num(t, "last_total");
  const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(t, "last_id"));
  snprintf(m.last_id, sizeof m.last_id, "%s", id ? id : "");
  int rc = mr->fn(&m, mr->ud);
  if (rc < 0) return rc;
  cJSON *nt = cJSON_CreateObject();
  cJSON_AddNumberToObject(nt, "offset", (double)m.offset);
  cJSON_AddNumberToObject(nt, "dev", (double)m.dev);
  cJSON_AddNumberToObject(nt, "ino", (double)m.ino);
  cJSON_AddNumberToObject(nt, "last_total", m.last_total);
  cJSON_AddStringToObject(nt, "last_id", m.last_id);
  cJSON_DeleteItemFromObject(st, "transcript");
  cJSON_AddItemToObject(st, "transcript", nt);
  return rc;
}

int hook_record_with_mark(hook_record *r, const char *session,
                          int (*fn)(hook_transcript_mark *m, void *ud),
                          void *ud, char err[TG_ERRMSG]) {
  mark_run mr = {fn, ud};
  return with_state(r, session, with_mark, &mr, err);
}

/* ---- sessions ------------------------------------------------------------ */

typedef struct {
  const char *key, *agent;
} session_run;

static int mark_session(cJSON *st, void *ud) {
  session_run *s = ud;
  char t[32];
  now_iso(t);
  set_str(st, s->key, t);
  set_str(st, "agent", s->agent);
  return 0;
}

static int session_event(hook_record *r, const char *agent,
                         const char *session, const char *event,
                         const char *k, const char *v, const char *cwd,
                         char *err) {
  session_run s = {!strcmp(event, "start") ? "started" : "ended", agent};
  if (with_state(r, session, mark_session, &s, err) < 0) return -1;
  cJSON *j = line(agent, session);
  cJSON_AddStringToObject(j, "event", event);
  if (v) cJSON_AddStringToObject(j, k, v);
  if (cwd) cJSON_AddStringToObject(j, "cwd", cwd);
  return append(r, "sessions.jsonl", j, err);
}

int hook_session_start(hook_record *r, const char *agent, const char *session,
                       const char *source, const char *cwd,
                       char err[TG_ERRMSG]) {
  return session_event(r, agent, session, "start", "source", source, cwd, err);
}

int hook_session_end(hook_record *r, const char *agent, const char *session,
                     const char *reason, char err[TG_ERRMSG]) {
  return session_event(r, agent, session, "end", "reason", reason, NULL, err);
}
