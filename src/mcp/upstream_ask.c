/*
 * upstream_ask.c — the input an upstream of the 2026-07-28 era asks for
 * when it answers one of our requests (a tools/call: forward.c; a
 * prompts/get or resources/read passed through: gateway.c) with
 * input_required: {inputRequests: {key: {method, params}}, requestState}.
 * It wants the same request sent again with inputResponses (the answers
 * under its keys) and its requestState. Each of its requests goes to our
 * client: a 2025-era client as a request of its session (a question's
 * message naming the server), a 2026-07-28 client through its own
 * request's input_required result (parked.c: keys of toolgate's, the
 * answers mapped back to the upstream's keys here). When every answer is
 * in, the owner sends its request again (ready).
 *
 * Every byte of it is the upstream's: the shape is checked before anything
 * is asked (an object of at most MAX_ASKS requests under distinct keys of
 * at most MAX_KEY bytes, each elicitation/create, sampling/createMessage
 * or roots/list; a requestState that is a string of at most MAX_STATE
 * bytes), and one request goes at most MAX_ROUNDS rounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gateway.h"

#define MAX_ROUNDS 8       /* input_required answers to one request */
#define MAX_ASKS 16        /* requests in one input_required */
#define MAX_KEY 256        /* bytes of one of its keys */
#define MAX_STATE 65536    /* bytes of its requestState */

/* One question open at the client: a request of a 2025-era client's
 * session, or, for a 2026-07-28 client, in its request's own
 * input_required result. */
typedef struct gw_ask {
  gw_inputs *in;
  char *key;               /* its key in the upstream's inputRequests */
  mcp_pending *pending;    /* asked in a session, or */
  mcp_parked *park;        /* asked through the request's result */
  struct gw_ask *next;
} gw_ask;

void gw_inputs_drop(gw_inputs *in, const char *why) {
  while (in->asks) {
    gw_ask *a = in->asks;
    in->asks = a->next;
    if (a->park) mcp_parked_withdraw(a->park, a);
    else if (a->pending) mcp_withdraw(a->pending, why);
    free(a->key);
    free(a);
  }
  cJSON_Delete(in->answers);
  in->answers = NULL;
  free(in->state);
  in->state = NULL;
}

void gw_inputs_take(gw_inputs *in, cJSON *params) {
  if (!in->answers) return;
  cJSON_AddItemToObject(params, "inputResponses", in->answers);
  in->answers = NULL;
  if (in->state) cJSON_AddStringToObject(params, "requestState", in->state);
}

/* The client's answer (or, when it has none, a cancel); the last one
 * sends the request again — ready may free the owner, so nothing after. */
static void on_answer(const cJSON *result, gw_ask *a) {
  gw_inputs *in = a->in;
  gw_ask **pp = &in->asks;
  while (*pp && *pp != a) pp = &(*pp)->next;
  if (*pp) *pp = a->next;
  cJSON *answer = result ? cJSON_Duplicate(result, 1)
                         : cJSON_Parse("{\"action\":\"cancel\"}");
  if (answer && in->answers) cJSON_AddItemToObject(in->answers, a->key, answer);
  else cJSON_Delete(answer);
  free(a->key);
  free(a);
  if (!in->asks) in->ready(in);
}

static void on_session_answer(mcp_session *ss, const cJSON *result,
                              const cJSON *error, void *ud) {
  (void)ss;
  (void)error;
  on_answer(result, ud);
}

static void on_parked_answer(const cJSON *result, const cJSON *error,
                             void *ud) {
  (void)error;
  on_answer(result, ud);
}

static int relayable(const char *m) {
  return m && (!strcmp(m, "elicitation/create") ||
               !strcmp(m, "sampling/createMessage") || !strcmp(m, "roots/list"));
}

/* Is the upstream's input_required well formed? 0, or -1 with why. */
static int check(const gw_inputs *in, const cJSON *requests,
                 const cJSON *state, char *why, size_t len) {
  const char *server = up_name(in->up);
  size_t n = 0;
  if (!cJSON_IsObject(requests) || !requests->child) {
    snprintf(why, len, "upstream server '%s' answered %s with input_required "
             "without inputRequests (an object of requests)", server, in->method);
    return -1;
  }
  if (state && (!cJSON_IsString(state) || strlen(state->valuestring) > MAX_STATE)) {
    snprintf(why, len, "upstream server '%s' answered %s with input_required "
             "whose requestState is not a string (of at most %d bytes)",
             server, in->method, MAX_STATE);
    return -1;
  }
  for (const cJSON *q = requests->child; q; q = q->next) {
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "method"));
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(q, "params");
    if (++n > MAX_ASKS || !q->string || !*q->string ||
        strlen(q->string) > MAX_KEY) {
      snprintf(why, len, "upstream server '%s' answered %s with input_required "
               "toolgate does not relay: at most %d inputRequests, under keys "
               "of 1 to %d bytes", server, in->method, MAX_ASKS, MAX_KEY);
      return -1;
    }
    for (const cJSON *o = requests->child; o != q; o = o->next)
      if (!strcmp(o->string, q->string)) {
        snprintf(why, len, "upstream server '%s' answered %s with "
                 "input_required whose inputRequests repeat a key", server,
                 in->method);
        return -1;
      }
    if (!cJSON_IsObject(q) || !relayable(m) || (params && !cJSON_IsObject(params))) {
      snprintf(why, len, "upstream server '%s' asks for input toolgate cannot "
               "relay (%.60s): elicitation/create, sampling/createMessage and "
               "roots/list ({method, params}) are", server, m ? m : "?");
      return -1;
    }
  }
  return 0;
}

/* May ss be asked for cap (it declared it)? */
static int declares(mcp_session *ss, const char *cap) {
  mcp_req session = {NULL, NULL, NULL, 0, ss->caps};
  return !strcmp(cap, "elicitation")
             ? mcp_can_elicit(&session)
             : cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(ss->caps, cap));
}

/* One of the upstream's requests, to the client. 0, or -1 with why. */
static int ask_one(gw_inputs *in, const cJSON *q, mcp_parked *park,
                   mcp_session *prefer, char *why, size_t len) {
  const char *server = up_name(in->up);
  const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "method"));
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(q, "params");
  const char *cap = gw_capability_for(m);
  mcp_session *asker = NULL;
  if (!park)
    asker = prefer ? (declares(prefer, cap) ? prefer : NULL)
                   : mcp_server_asker_with(in->gw->s, cap);
  if (!park && !asker) {
    snprintf(why, len, "upstream server '%s' asks for input (%s), and this "
             "MCP client cannot give it (no %s capability)", server, m, cap);
    return -1;
  }
  gw_ask *a = calloc(1, sizeof *a);
  cJSON *p = !strcmp(cap, "elicitation") ? gw_question(in->up, params)
             : params                    ? cJSON_Duplicate(params, 1)
                                         : cJSON_CreateObject();
  if (!a || !p || !(a->key = strdup(q->string))) {
    if (a) free(a->key);
    free(a);
    cJSON_Delete(p);
    snprintf(why, len, "out of memory");
    return -1;
  }
  a->in = in;
  if (park) {
    char inner[200] = "out of memory";
    cJSON *key = cJSON_CreateString(q->string); /* p is taken, either way */
    int rc = key ? mcp_parked_ask(park, key, m, p, on_parked_answer, a, inner,
                                  sizeof inner)
                 : -1;
    if (!key) cJSON_Delete(p);
    cJSON_Delete(key);
    if (rc < 0) {
      snprintf(why, len, "upstream server '%s' asks for input (%s), and "
               "toolgate cannot put it to the client: %.150s", server, m, inner);
      free(a->key);
      free(a);
      return -1;
    }
    a->park = park;
    a->next = in->asks;
    in->asks = a;
    return 0;
  }
  a->next = in->asks;
  in->asks = a;
  a->pending = mcp_ask_client(asker, NULL, m, p, on_session_answer, a);
  if (!a->pending) {
    snprintf(why, len, "the client's stream is closed");
    return -1;
  }
  return 0;
}

int gw_inputs_ask(gw_inputs *in, const cJSON *result, mcp_parked *park,
                  mcp_session *prefer, char *why, size_t len) {
  const cJSON *requests = cJSON_GetObjectItemCaseSensitive(result, "inputRequests");
  const cJSON *state = cJSON_GetObjectItemCaseSensitive(result, "requestState");
  if (check(in, requests, state, why, len) < 0) return -1;
  if (++in->rounds > MAX_ROUNDS) {
    snprintf(why, len, "upstream server '%s' asks the client for input, and "
             "has done so too many times (%d) for one %s", up_name(in->up),
             MAX_ROUNDS, in->method);
    return -1;
  }
  gw_inputs_drop(in, "the upstream asks anew");
  in->state = state ? strdup(state->valuestring) : NULL;
  in->answers = cJSON_CreateObject();
  if ((state && !in->state) || !in->answers) {
    snprintf(why, len, "out of memory");
    return -1;
  }
  for (const cJSON *q = requests->child; q; q = q->next)
    if (ask_one(in, q, park, prefer, why, len) < 0) return -1;
  return 0;
}
