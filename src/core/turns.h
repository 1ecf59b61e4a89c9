/*
 * turns.h — each session's turn number and its open chat (the model call
 * between tg_chat_begin and tg_chat_end). The chain reads a session's turn
 * for the calls it starts (tg__turn_of); the runtime's chat.c moves it.
 * Sessions are few (one per conversation), so a list searched from the
 * most recently used is enough. The TG_SESSIONS_MAX most recently used are
 * kept, and any with an open chat (then the list may grow past it): a
 * forgotten one counts its turns from 1 again and, without a database,
 * loses its agent's transcript mark (with one, both are kept there).
 * A pointer to a state is good only until the next session is added:
 * keep the name, not the state, across code that may add one (chat.c).
 */
#ifndef TG_TURNS_H
#define TG_TURNS_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

struct tg_core;

#define TG_SESSIONS_MAX 4096

typedef struct tg_session_state {
  char *session;
  int64_t turn;
  /* the open chat (chat_open), its request as given to tg_chat_begin */
  int chat_open;
  char *model, *project;
  cJSON *request;
  double chat_start_ms;        /* monotonic */
  /* an agent's transcript read up to here (a JSON mark), when no
   * database keeps it (runtime/hook_services.c) */
  char *agent_mark;
  /* its taint when no database keeps it (core/taint.c); a tainted
   * session is never forgotten, so its taint holds */
  struct tg_taint *taint;
} tg_session_state;

typedef struct tg_turns {
  tg_session_state **v;
  size_t n, cap;
} tg_turns;

/* The session's state, made on first use when create; NULL when absent
 * (or out of memory). */
tg_session_state *tg__session_state(struct tg_core *core, const char *session,
                                    int create);

/* The session's current turn (0: none begun). */
int64_t tg__turn_of(struct tg_core *core, const char *session);

/* Forgets the session's open chat. */
void tg__session_chat_clear(tg_session_state *s);

void tg__turns_free(struct tg_core *core);

#endif
