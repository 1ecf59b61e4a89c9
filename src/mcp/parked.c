/*
 * parked.c — a request of a 2026-07-28 client parked while the upstream
 * server that runs it asks its client for something (elicitation/create,
 * sampling/createMessage, roots/list). That era has no requests of the
 * client during a request, only the request's input_required result: the
 * request is answered input_required, holding the upstream's requests
 * (inputRequests) and a requestState; the client sends the same request
 * again with inputResponses and the requestState, and each answer goes to
 * the upstream as the answer to its request. Meanwhile the request stays
 * in flight, waiting at the upstream (an upstream of the 2025 era cannot
 * be asked to start again); the retry takes it over (its id is the one
 * answered when the request ends).
 *
 * Two kinds of request park here, each with its own mcp_parked_kind: a
 * tools/call (call_input.c) and a prompts/get or resources/read passed
 * through to an upstream (pass_input.c). What they share is here, once:
 * the keys, the gathering, the requestState, the retry's checks.
 *
 * Keys: the revision leaves them to the server, and the server here is
 * the upstream: a request's key in inputRequests is its JSON-RPC id at
 * the upstream (a string id of at most 64 letters, digits and "_-.:/" as
 * it is, an integer id in decimal), or one toolgate makes ("input-N")
 * when the id is none of those or already a key of the request.
 *
 * Several at once: a server of the 2025 era that wants several answers
 * sends several requests, one after the other; those that come within
 * GATHER_MS of the first go out in one input_required result. One that
 * comes while a result is out waits for the retry: the retry that
 * answers some but not all (or brings the answers and the upstream asks
 * more) is answered input_required with those still waiting, under a new
 * requestState; a retry that answers none gets them all again.
 *
 * A request the client's capabilities (in its request's _meta) do not
 * cover is refused to the upstream, which may do without it (ask another
 * way); the kind may say what was missing when the request then fails.
 *
 * The requestState (reqstate.c) is bound to the request's method, its
 * subject (the tool, prompt name or resource URI) and its arguments, good
 * once, for the state's ttl: a tools/call's state does not answer a
 * prompts/get, nor the other way round.
 */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mcp.h"

#define GATHER_MS 50    /* how long the first request waits for others */
#define MAX_INPUTS 16   /* requests waiting on the client in one request */
#define MAX_KEY 64      /* an upstream's id longer than this is not a key */

struct mcp_input {
  char *key;            /* in inputRequests and inputResponses */
  cJSON *request;       /* {method, params} as put */
  mcp_input_fn fn;
  void *ud;
  mcp_input *next;
};

void mcp_parked_init(mcp_parked *pk, const mcp_parked_kind *kind,
                     mcp_server *s, const mcp_req *req, const char *method,
                     const char *label) {
  memset(pk, 0, sizeof *pk);
  pk->kind = kind;
  pk->s = s;
  pk->method = method;
  pk->label = label;
  mcp_parked_read_caps(pk, req);
}

void mcp_parked_read_caps(mcp_parked *pk, const mcp_req *req) {
  pk->can_elicit = mcp_can_elicit(req);
  pk->can_sample = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(req->caps, "sampling"));
  pk->can_roots = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(req->caps, "roots"));
}

static int may_ask(const mcp_parked *pk, const char *method) {
  if (!strcmp(method, "elicitation/create")) return pk->can_elicit;
  if (!strcmp(method, "sampling/createMessage")) return pk->can_sample;
  if (!strcmp(method, "roots/list")) return pk->can_roots;
  return 0;
}

static void free_input(mcp_input *in) {
  free(in->key);
  cJSON_Delete(in->request);
  free(in);
}

static int key_taken(const mcp_parked *pk, const char *key) {
  for (const mcp_input *in = pk->inputs; in; in = in->next)
    if (!strcmp(in->key, key)) return 1;
  return 0;
}

/* The upstream's id as a key, if it makes a fair one: keys come back in
 * the client's retry, and a client may well keep them as the names of an
 * object's members, so plain ones only, and none an object has already —
 * nor the key of toolgate's own approval question, which an upstream must
 * not be able to pose (its requestState differs too: reqstate.c). */
static int key_of_id(const cJSON *id, char *key, size_t len) {
  static const char *const inherited[] = {"__proto__", "constructor",
                                          "prototype", MCP_APPROVAL_KEY, NULL};
  if (cJSON_IsString(id)) {
    size_t n = strlen(id->valuestring);
    if (n == 0 || n > MAX_KEY || n >= len) return 0;
    for (size_t i = 0; i < n; i++) {
      char ch = id->valuestring[i];
      if (!(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z') &&
          !(ch >= '0' && ch <= '9') && !strchr("_-.:/", ch))
        return 0;
    }
    for (size_t i = 0; inherited[i]; i++)
      if (!strcmp(id->valuestring, inherited[i])) return 0;
    memcpy(key, id->valuestring, n + 1);
    return 1;
  }
  if (cJSON_IsNumber(id)) {
    double v = id->valuedouble;
    if (v != floor(v) || fabs(v) > 9007199254740991.0) return 0;
    snprintf(key, len, "%.0f", v);
    return 1;
  }
  return 0;
}

static char *make_key(mcp_parked *pk, const cJSON *upstream_id) {
  char key[MAX_KEY + 1];
  if (!key_of_id(upstream_id, key, sizeof key) || key_taken(pk, key))
    do snprintf(key, sizeof key, "input-%u", ++pk->keys);
    while (key_taken(pk, key));
  return strdup(key);
}

static size_t count_inputs(const mcp_parked *pk) {
  size_t n = 0;
  for (const mcp_input *in = pk->inputs; in; in = in->next) n++;
  return n;
}

static void timer_fired(uv_timer_t *t);

/* (Re)starts the request's one timer: the gathering, or the wait on the
 * retry. 0, or -1 when out of memory. */
static int start_timer(mcp_parked *pk, uint64_t ms) {
  if (!pk->timer) {
    pk->timer = malloc(sizeof *pk->timer);
    if (!pk->timer || uv_timer_init(pk->s->loop, pk->timer) != 0) {
      free(pk->timer);
      pk->timer = NULL;
      return -1;
    }
    pk->timer->data = pk;
  }
  return uv_timer_start(pk->timer, timer_fired, ms, 0) == 0 ? 0 : -1;
}

static void stop_timer(mcp_parked *pk) {
  if (pk->timer && uv_is_active((uv_handle_t *)pk->timer))
    uv_timer_stop(pk->timer);
}

/* Answers the request (its id now) with input_required for every request
 * waiting, under a new requestState. 0, or -1 when out of memory. */
static int pose(mcp_parked *pk) {
  char *state = mcp_state_issue(pk->s->states, MCP_STATE_INPUT, pk->method,
                                pk->subject, pk->args);
  if (!state) return -1;
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "resultType", "input_required");
  cJSON *reqs = cJSON_AddObjectToObject(res, "inputRequests");
  for (const mcp_input *in = pk->inputs; in; in = in->next)
    cJSON_AddItemToObject(reqs, in->key, cJSON_Duplicate(in->request, 1));
  cJSON_AddStringToObject(res, "requestState", state);
  free(pk->state);
  pk->state = state;
  pk->posed = 1;
  stop_timer(pk);
  /* the retry is awaited no longer than its state is good */
  if (pk->wait_ms) start_timer(pk, pk->wait_ms);
  pk->kind->reply(pk, res);
  return 0;
}

/* What waits on the request, gone; each fn gets error e (when e). */
static void fail_inputs(mcp_parked *pk, const cJSON *e) {
  mcp_input *list = pk->inputs;
  pk->inputs = NULL;
  free(pk->state);
  pk->state = NULL;
  pk->posed = 0;
  stop_timer(pk);
  while (list) {
    mcp_input *in = list;
    list = in->next;
    if (e && in->fn) in->fn(NULL, e, in->ud);
    free_input(in);
  }
}

static cJSON *internal_error(const char *why) {
  cJSON *e = cJSON_CreateObject();
  cJSON_AddNumberToObject(e, "code", JRPC_INTERNAL_ERROR);
  cJSON_AddStringToObject(e, "message", why);
  return e;
}

/* The gathering is over: what came goes to the client at once. Or the
 * client has not sent the request again in time: what waits fails. */
static void timer_fired(uv_timer_t *t) {
  mcp_parked *pk = t->data;
  if (!pk || !pk->inputs) return;
  const char *why;
  if (pk->posed) {
    why = "the client did not send the request again with the answer in time";
    mcp_logf(pk->s->log, MCP_LOG_INFO, "%s %s: %s", pk->label, pk->subject, why);
  } else if (pk->kind->open(pk) && pose(pk) == 0) {
    mcp_logf(pk->s->log, MCP_LOG_INFO, "%s %s: %zu request(s) of the upstream "
             "put to the client (input_required)", pk->label, pk->subject,
             count_inputs(pk));
    return;
  } else {
    why = pk->kind->open(pk) ? "out of memory" : "the request has ended";
  }
  cJSON *e = internal_error(why);
  fail_inputs(pk, e);
  cJSON_Delete(e);
}

int mcp_parked_ask(mcp_parked *pk, const cJSON *upstream_id,
                   const char *method, cJSON *params, mcp_input_fn fn,
                   void *ud, char *why, size_t len) {
  const char *cap = !strcmp(method, "sampling/createMessage") ? "sampling"
                    : !strcmp(method, "roots/list")           ? "roots"
                                                              : "elicitation";
  mcp_input *in = NULL;
  if (!pk->kind->open(pk)) {
    snprintf(why, len, "the request it belongs to has ended");
  } else if (count_inputs(pk) >= MAX_INPUTS) {
    snprintf(why, len, "%d requests of this %s wait on the client already",
             MAX_INPUTS, pk->method);
  } else if (!may_ask(pk, method)) {
    pk->missing_cap = cap; /* the upstream may do without; if it fails, said */
    snprintf(why, len, "toolgate's client cannot answer %s (its request "
             "declared no %s capability)", method, cap);
  } else if (!(in = calloc(1, sizeof *in)) ||
             !(in->key = make_key(pk, upstream_id)) ||
             !(in->request = cJSON_CreateObject())) {
    snprintf(why, len, "out of memory");
  } else {
    cJSON_AddStringToObject(in->request, "method", method);
    cJSON_AddItemToObject(in->request, "params", params);
    params = NULL;
    in->fn = fn;
    in->ud = ud;
    mcp_input **tail = &pk->inputs;
    while (*tail) tail = &(*tail)->next;
    *tail = in;
    /* a result out already: it waits for the retry; else for the others */
    if (pk->posed ||
        (pk->timer && uv_is_active((uv_handle_t *)pk->timer)) ||
        start_timer(pk, GATHER_MS) == 0) {
      mcp_logf(pk->s->log, MCP_LOG_DEBUG, "%s %s: the upstream's %s (%s) "
               "waits to go to the client", pk->label, pk->subject, method,
               in->key);
      return 0;
    }
    *tail = NULL;
    snprintf(why, len, "out of memory");
  }
  if (in) free_input(in);
  cJSON_Delete(params);
  return -1;
}

void mcp_parked_withdraw(mcp_parked *pk, void *ud) {
  for (mcp_input **pp = &pk->inputs; *pp; pp = &(*pp)->next)
    if ((*pp)->ud == ud) {
      mcp_input *in = *pp;
      *pp = in->next;
      free_input(in);
      break;
    }
  if (!pk->inputs) { /* none left: a retry is a request as any */
    stop_timer(pk);
    free(pk->state);
    pk->state = NULL;
    pk->posed = 0;
  }
}

static void close_freed(uv_handle_t *h) { free(h); }

void mcp_parked_drop(mcp_parked *pk, const char *why) {
  if (pk->timer) { /* the request goes: its timer with it */
    pk->timer->data = NULL;
    uv_close((uv_handle_t *)pk->timer, close_freed);
    pk->timer = NULL;
  }
  cJSON *e = pk->inputs ? internal_error(why) : NULL;
  fail_inputs(pk, e);
  cJSON_Delete(e);
}

int mcp_parked_holds(const mcp_parked *pk, const char *state) {
  return pk->kind && pk->inputs && pk->posed && pk->state &&
         !strcmp(pk->state, state);
}

/* What is wrong with the retry's inputResponses, in bad; 0 when nothing.
 * An answer to a key of ours must be an object; other keys are ignored
 * (the revision says to ignore what is not needed). */
static int check_responses(const mcp_parked *pk, const cJSON *in, char *bad,
                           size_t len) {
  if (in && !cJSON_IsObject(in)) {
    snprintf(bad, len, "%s: params.inputResponses must be an object",
             pk->method);
    return -1;
  }
  for (const mcp_input *x = pk->inputs; x; x = x->next) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(in, x->key);
    if (a && !cJSON_IsObject(a)) {
      snprintf(bad, len, "%s: params.inputResponses.%s must be the client's "
               "answer to the request (an object)", pk->method, x->key);
      return -1;
    }
  }
  return 0;
}

void mcp_parked_resume(mcp_parked *pk, mcp_session *ss, const mcp_req *req,
                       const char *subject, const cJSON *args) {
  mcp_server *s = pk->s;
  const cJSON *resp = cJSON_GetObjectItemCaseSensitive(req->params, "inputResponses");
  char bad[200];
  if (check_responses(pk, resp, bad, sizeof bad) < 0) {
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, bad, NULL);
    return;
  }
  if (mcp_parked_redeem(s, ss, req, pk->method, subject, args) < 0) return;
  /* the answered ones leave the request; the others wait on */
  mcp_input *answered = NULL, **tail = &answered;
  for (mcp_input **pp = &pk->inputs; *pp;) {
    mcp_input *x = *pp;
    if (cJSON_GetObjectItemCaseSensitive(resp, x->key)) {
      *pp = x->next;
      x->next = NULL;
      *tail = x;
      tail = &x->next;
    } else {
      pp = &x->next;
    }
  }
  if (!answered) { /* sent again without an answer: the requests are put again */
    int ok = pk->kind->take_over(pk, req, 0) == 0;
    mcp_logf(s->log, MCP_LOG_INFO, "%s %s: sent again without the answers "
             "to the upstream's requests: asking again", pk->label, pk->subject);
    if (!ok || pose(pk) < 0)
      mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  int ok = pk->kind->take_over(pk, req, 1) == 0;
  if (ok) mcp_parked_read_caps(pk, req);
  free(pk->state);
  pk->state = NULL;
  pk->posed = 0;
  stop_timer(pk);
  if (!ok) {
    mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, "out of memory", NULL);
  } else if (pk->inputs) { /* some are not answered: asked for again */
    mcp_logf(s->log, MCP_LOG_INFO, "%s %s: the client answered some of the "
             "upstream's requests: asking for %zu more", pk->label,
             pk->subject, count_inputs(pk));
    if (pose(pk) < 0)
      mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, "out of memory", NULL);
  } else {
    mcp_logf(s->log, MCP_LOG_INFO, "%s %s: the client answered the upstream's "
             "requests: the request goes on", pk->label, pk->subject);
  }
  cJSON *e = ok ? NULL : internal_error("out of memory");
  while (answered) { /* each fn may end the request (and free pk): not touched */
    mcp_input *x = answered;
    answered = x->next;
    if (x->fn)
      x->fn(ok ? cJSON_GetObjectItemCaseSensitive(resp, x->key) : NULL, e, x->ud);
    free_input(x);
  }
  cJSON_Delete(e);
}

int mcp_parked_redeem(mcp_server *s, mcp_session *ss, const mcp_req *req,
                      const char *method, const char *subject,
                      const cJSON *args) {
  const cJSON *state = cJSON_GetObjectItemCaseSensitive(req->params, "requestState");
  if (!cJSON_IsString(state)) {
    char bad[160];
    snprintf(bad, sizeof bad, "%s: params.requestState must be the string "
             "of the input_required result", method);
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, bad, NULL);
    return -1;
  }
  cJSON *none = cJSON_IsObject(args) ? NULL : cJSON_CreateObject();
  char why[512];
  const char *reason = NULL;
  int rc = mcp_state_redeem(s->states, state->valuestring, MCP_STATE_INPUT,
                            method, subject, none ? none : args, why,
                            sizeof why, &reason);
  cJSON_Delete(none);
  if (rc == 0) return 0;
  cJSON *data = cJSON_CreateObject();
  cJSON_AddStringToObject(data, "reason", reason);
  mcp_logf(s->log, MCP_LOG_WARNING, "%s %.200s refused: %s", method, subject,
           why);
  mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, why, data);
  return -1;
}
