/*
 * turns.c — sessions' turn numbers and open chats (turns.h).
 */
#include <stdlib.h>
#include <string.h>
#include "turns.h"
#include "core.h"
#include "taint.h"
#include "base/util.h"

static void state_free(tg_session_state *s) {
  tg__session_chat_clear(s);
  free(s->agent_mark);
  free(s->taint);
  free(s->session);
  free(s);
}

/* The state of session, moved to the end (the most recently used): the
 * sessions in use are found first, and the front holds those to forget. */
static tg_session_state *find(tg_turns *t, const char *session) {
  for (size_t i = t->n; i-- > 0;) {
    tg_session_state *s = t->v[i];
    if (strcmp(s->session, session) != 0) continue;
    memmove(&t->v[i], &t->v[i + 1], (t->n - 1 - i) * sizeof *t->v);
    t->v[t->n - 1] = s;
    return s;
  }
  return NULL;
}

/* Past TG_SESSIONS_MAX, the least recently used session without an open
 * chat is forgotten: a resident instance answering an agent's hooks for
 * months, or an agent inventing session ids, must not grow it (nor its
 * lookups) without end. */
static void forget_one(tg_turns *t) {
  for (size_t i = 0; i < t->n; i++) {
    if (t->v[i]->chat_open || t->v[i]->taint) continue;
    state_free(t->v[i]);
    memmove(&t->v[i], &t->v[i + 1], (t->n - 1 - i) * sizeof *t->v);
    t->n--;
    return;
  }
}

static tg_session_state *add(tg_turns *t, const char *session) {
  if (t->n >= TG_SESSIONS_MAX) forget_one(t);
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 8;
    tg_session_state **v = realloc(t->v, cap * sizeof *v);
    if (!v) return NULL;
    t->v = v;
    t->cap = cap;
  }
  tg_session_state *s = calloc(1, sizeof *s);
  if (s && !(s->session = tg__strdup(session))) {
    free(s);
    s = NULL;
  }
  if (s) t->v[t->n++] = s;
  return s;
}

tg_session_state *tg__session_state(tg_core *core, const char *session,
                                    int create) {
  if (!session) session = core->cfg.session;
  if (!core->turns) {
    if (!create) return NULL;
    if (!(core->turns = calloc(1, sizeof *core->turns))) return NULL;
  }
  tg_session_state *s = find(core->turns, session);
  return s || !create ? s : add(core->turns, session);
}

int64_t tg__turn_of(tg_core *core, const char *session) {
  if (!core->turns) return 0; /* no turn ever began: the common case */
  tg_session_state *s = tg__session_state(core, session, 0);
  return s ? s->turn : 0;
}

void tg__session_chat_clear(tg_session_state *s) {
  s->chat_open = 0;
  free(s->model);
  free(s->project);
  cJSON_Delete(s->request);
  s->model = s->project = NULL;
  s->request = NULL;
}

void tg__turns_free(tg_core *core) {
  tg_turns *t = core->turns;
  if (!t) return;
  for (size_t i = 0; i < t->n; i++) state_free(t->v[i]);
  free(t->v);
  free(t);
  core->turns = NULL;
}
