/*
 * session_api.c — sessions (one conversation each), their messages and
 * the search over messages and calls, as toolgate.h offers them, and what
 * an agent's hooks keep of a session (tg__agent_*): every argument
 * checked and every stored string masked here, once for every backend,
 * then the backend's table (store.h) does the reading and writing.
 *
 * Session ids may be an agent's (hostile): checked like every session id,
 * never used as a path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "store.h"
#include "base/json.h"
#include "base/project.h"
#include "base/util.h"

static int64_t now_ms(void) { return (int64_t)tg__wall_ms(); }

/* ---- checks ----------------------------------------------------------- */

static int check_text(const char *what, const char *s, size_t max,
                      int allow_nl, char err[TG_ERRMSG]) {
  size_t n = strlen(s);
  if (n == 0 || n > max) {
    tg__errf(err, TG_ERRMSG, "a session's %s is 1 to %zu bytes, not %zu",
             what, max, n);
    return -EINVAL;
  }
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c < 0x20 && !(allow_nl && (c == '\n' || c == '\t'))) || c == 0x7f) {
      tg__errf(err, TG_ERRMSG, "a session's %s has a control character "
               "(byte %zu)", what, i);
      return -EINVAL;
    }
  }
  return 0;
}

int tg__session_id_check(const char *id, char err[TG_ERRMSG]) {
  if (!id) {
    tg__errf(err, TG_ERRMSG, "a session needs its id");
    return -EINVAL;
  }
  return check_text("id", id, TG_SESSION_ID_MAX - 1, 0, err);
}

static const char *const roles[] = {"system", "user", "assistant", "tool"};

static int known_role(const char *r) {
  for (size_t i = 0; i < sizeof roles / sizeof *roles; i++)
    if (r && strcmp(r, roles[i]) == 0) return 1;
  return 0;
}

/* A fresh id: "s-" and 16 random hex digits (urandom, else time and pid). */
void tg__session_fresh_id(char id[TG_SESSION_ID_MAX]) {
  unsigned char b[8];
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  ssize_t got = fd >= 0 ? read(fd, b, sizeof b) : -1;
  if (fd >= 0) close(fd);
  if (got != (ssize_t)sizeof b) {
    uint64_t v = (uint64_t)now_ms() * 6364136223846793005ull ^
                 (uint64_t)getpid() ^ (uint64_t)clock();
    memcpy(b, &v, sizeof b);
  }
  char *p = id;
  p += snprintf(p, 3, "s-");
  for (size_t i = 0; i < sizeof b; i++) p += snprintf(p, 3, "%02x", b[i]);
}

static int no_session(const char *id, char err[TG_ERRMSG]) {
  tg__errf(err, TG_ERRMSG, "no session '%s' (begin it first)", id);
  return -ENOENT;
}

/* ---- sessions --------------------------------------------------------- */

int tg_session_begin(tg_store *st, const tg_session_spec *s,
                     char id[TG_SESSION_ID_MAX], char err[TG_ERRMSG]) {
  static const tg_session_spec none;
  if (!s) s = &none;
  if (s->id && tg__session_id_check(s->id, err) < 0) return -EINVAL;
  if (s->title && check_text("title", s->title, 4096, 0, err) < 0)
    return -EINVAL;
  if (s->started_ms < 0) {
    tg__errf(err, TG_ERRMSG, "a session's start is a time >= 0");
    return -EINVAL;
  }
  char *project = tg__project_dir(s->project, err);
  if (!project) return -EINVAL;
  if (s->id) snprintf(id, TG_SESSION_ID_MAX, "%s", s->id);
  else tg__session_fresh_id(id);
  char *title = tg__redact_str(tg__store_redactor(st), s->title);
  tg_session_row row = {id, project, title ? title : s->title,
                        s->started_ms ? s->started_ms : now_ms()};
  int rc = st->be->session_put(st, &row, err);
  free(title);
  free(project);
  return rc < 0 ? rc : 0;
}

int tg_session_end(tg_store *st, const char *id, char err[TG_ERRMSG]) {
  if (!id || !*id) {
    tg__errf(err, TG_ERRMSG, "ending a session needs its id");
    return -EINVAL;
  }
  int rc = st->be->session_end(st, id, now_ms(), err);
  return rc == -ENOENT ? no_session(id, err) : rc;
}

/* ---- messages --------------------------------------------------------- */

int64_t tg_message_record(tg_store *st, const tg_message *m,
                          char err[TG_ERRMSG]) {
  if (!m || !m->session || !*m->session) {
    tg__errf(err, TG_ERRMSG, "a message needs its session");
    return -EINVAL;
  }
  if (!known_role(m->role)) {
    tg__errf(err, TG_ERRMSG, "a message's role is system, user, assistant "
             "or tool, not '%s'", m->role ? m->role : "(none)");
    return -EINVAL;
  }
  if (m->ts_ms < 0) {
    tg__errf(err, TG_ERRMSG, "a message's time is >= 0");
    return -EINVAL;
  }
  if (m->content && strlen(m->content) > TG_MESSAGE_MAX) {
    tg__errf(err, TG_ERRMSG, "a message's content is at most %u bytes",
             TG_MESSAGE_MAX);
    return -EINVAL;
  }
  char *calls = m->tool_calls ? tg_json_print(m->tool_calls, 0) : NULL;
  if (m->tool_calls && !calls) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  if (calls && strlen(calls) > TG_MESSAGE_MAX) {
    free(calls);
    tg__errf(err, TG_ERRMSG, "a message's tool calls are at most %u bytes "
             "of JSON", TG_MESSAGE_MAX);
    return -EINVAL;
  }
  /* what is stored leaves the runtime: masked first (core/redact.h) */
  tg_redactor *r = tg__store_redactor(st);
  char *content = tg__redact_str(r, m->content);
  char *calls_red = tg__redact_str(r, calls);
  tg_message masked = *m;
  if (content) masked.content = content;
  if (!masked.ts_ms) masked.ts_ms = now_ms();
  int64_t id = st->be->message_add(st, &masked, calls_red ? calls_red : calls,
                                   err);
  if (id == -ENOENT) no_session(m->session, err);
  free(content);
  free(calls_red);
  free(calls);
  return id;
}

/* ---- reading ---------------------------------------------------------- */

cJSON *tg_store_session(tg_store *st, const char *id, char err[TG_ERRMSG]) {
  if (!id) {
    tg__errf(err, TG_ERRMSG, "which session? (no id)");
    return NULL;
  }
  int missing = 0;
  cJSON *s = st->be->session_read(st, id, &missing, err);
  if (!s && missing) no_session(id, err);
  return s;
}

cJSON *tg_store_sessions(tg_store *st, size_t limit, char err[TG_ERRMSG]) {
  return st->be->sessions_read(st, limit ? limit : 100, err);
}

int tg_store_search(tg_store *st, const tg_search_filter *f, cJSON **out,
                    char err[TG_ERRMSG]) {
  *out = NULL;
  if (!f || !f->query || !*f->query) {
    tg__errf(err, TG_ERRMSG, "search for what? (an empty query)");
    return -EINVAL;
  }
  if (strlen(f->query) > 4096) {
    tg__errf(err, TG_ERRMSG, "a search query is at most 4096 bytes");
    return -EINVAL;
  }
  tg_search_filter g = *f;
  if (!g.limit) g.limit = 20;
  return st->be->search(st, &g, out, err);
}

/* ---- what an agent's hooks keep of a session --------------------------- */

int64_t tg__agent_session(tg_store *st, const char *id, const char *agent,
                          const char *project, tg_agent_op op,
                          char err[TG_ERRMSG]) {
  if (tg__session_id_check(id, err) < 0) return -EINVAL;
  return st->be->agent_session(st, id, agent, project, op, err);
}

int tg__agent_read(tg_store *st, const char *id, int64_t *turn, char **mark,
                   char err[TG_ERRMSG]) {
  if (turn) *turn = 0;
  if (mark) *mark = NULL;
  if (tg__session_id_check(id, err) < 0) return -EINVAL;
  return st->be->agent_read(st, id, turn, mark, err);
}

int tg__agent_stop(tg_store *st, const char *id, const char *agent,
                   const char *project, const char *old_mark,
                   const char *new_mark, const tg_usage *u, size_t n,
                   char err[TG_ERRMSG]) {
  if (tg__session_id_check(id, err) < 0) return -EINVAL;
  return st->be->agent_stop(st, id, agent, project, old_mark, new_mark, u, n,
                            err);
}
