/*
 * call_input.c — the requests an upstream server makes of its client
 * while it runs a tool call of a 2026-07-28 client (elicitation/create,
 * sampling/createMessage, roots/list), put to that client the only way
 * its era has: the tools/call is answered with an input_required result
 * holding the requests (inputRequests) and a requestState; the client
 * sends the same tools/call again with inputResponses and the
 * requestState, and each answer goes to the upstream as the answer to
 * its request. Meanwhile the call stays in flight, waiting at the
 * upstream (an upstream of the 2025 era cannot be asked to start again);
 * the retry takes the call over (its id is the one answered when the
 * call ends).
 *
 * Keys: the revision leaves them to the server, and the server here is
 * the upstream: a request's key in inputRequests is its JSON-RPC id at
 * the upstream (a string id of at most 64 letters, digits and "_-.:/" as
 * it is, an integer id in decimal), or one toolgate makes ("input-N")
 * when the id is none of those or already a key of the call.
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
 * way); if the call then fails, the client gets -32021, the revision's
 * MissingRequiredClientCapability, naming what was missing (tools.c).
 *
 * The requestState is the one toolgate's own approvals use (reqstate.c):
 * bound to tools/call, the tool and the arguments, good once, for
 * request_state_ttl_ms; a retry whose state names no call waiting here
 * (the call ended meanwhile) is handled as a fresh call would be.
 *
 * Kept apart from tools.c: it is the one place that parks a call and
 * takes it over; tools.c calls it at the start of tools/call and when a
 * call is freed.
 */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mcp.h"

#define GATHER_MS 50    /* how long the first request waits for others */
#define MAX_INPUTS 16   /* requests waiting on the client in one call */
#define MAX_KEY 64      /* an upstream's id longer than this is not a key */

struct mcp_input {
  char *key;            /* in inputRequests and inputResponses */
  cJSON *request;       /* {method, params} as put */
  mcp_input_fn fn;
  void *ud;
  mcp_input *next;
};

int mcp_call_is_stateless(mcp_server *s, const char *call_id) {
  mcp_call *c = mcp_call_find(s, call_id);
  return c && c->stateless;
}

static int may_ask(const mcp_call *c, const char *method) {
  if (!strcmp(method, "elicitation/create")) return c->can_elicit;
  if (!strcmp(method, "sampling/createMessage")) return c->can_sample;
  if (!strcmp(method, "roots/list")) return c->can_roots;
  return 0;
}

static void free_input(mcp_input *in) {
  free(in->key);
  cJSON_Delete(in->request);
  free(in);
}

static int key_taken(const mcp_call *c, const char *key) {
  for (const mcp_input *in = c->inputs; in; in = in->next)
    if (!strcmp(in->key, key)) return 1;
  return 0;
}

/* The upstream's id as a key, if it makes a fair one: keys come back in
 * the client's retry, and a client may well keep them as the names of an
 * object's members, so plain ones only, and none an object has already. */
static int key_of_id(const cJSON *id, char *key, size_t len) {
  static const char *const inherited[] = {"__proto__", "constructor",
                                          "prototype", NULL};
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

static char *make_key(mcp_call *c, const cJSON *upstream_id) {
  char key[MAX_KEY + 1];
  if (!key_of_id(upstream_id, key, sizeof key) || key_taken(c, key))
    do snprintf(key, sizeof key, "input-%u", ++c->input_keys);
    while (key_taken(c, key));
  return strdup(key);
}

static size_t count_inputs(const mcp_call *c) {
  size_t n = 0;
  for (const mcp_input *in = c->inputs; in; in = in->next) n++;
  return n;
}

/* Answers the call's request (c->id) with input_required for every
 * request waiting, under a new requestState. 0, or -1 when out of
 * memory. */
static int pose(mcp_server *s, mcp_call *c) {
  char *state = mcp_state_issue(s->states, "tools/call", c->tool, c->args);
  if (!state) return -1;
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "resultType", "input_required");
  cJSON *reqs = cJSON_AddObjectToObject(res, "inputRequests");
  for (const mcp_input *in = c->inputs; in; in = in->next)
    cJSON_AddItemToObject(reqs, in->key, cJSON_Duplicate(in->request, 1));
  cJSON_AddStringToObject(res, "requestState", state);
  free(c->input_state);
  c->input_state = state;
  mcp_req req = {c->id, "tools/call", NULL, 1, NULL};
  mcp_reply(c->ss, &req, res);
  c->answered = 1;
  return 0;
}

/* What waits on the call, gone; each fn gets error e (when e). */
static void fail_inputs(mcp_call *c, const cJSON *e) {
  mcp_input *list = c->inputs;
  c->inputs = NULL;
  free(c->input_state);
  c->input_state = NULL;
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

/* The gathering is over: what came goes to the client at once. */
static void gathered(uv_timer_t *t) {
  mcp_call *c = t->data;
  if (!c || c->answered || !c->inputs) return;
  mcp_server *s = c->ss ? c->ss->s : NULL;
  if (s && !c->cancelled && pose(s, c) == 0) {
    mcp_logf(s->log, MCP_LOG_INFO, "%s %s: %zu request(s) of the upstream "
             "put to the client (input_required)", c->call_id, c->tool,
             count_inputs(c));
    return;
  }
  cJSON *e = internal_error(s && !c->cancelled ? "out of memory"
                                               : "the tool call has ended");
  fail_inputs(c, e);
  cJSON_Delete(e);
}

static int gather(mcp_server *s, mcp_call *c) {
  if (!c->input_gather) {
    c->input_gather = malloc(sizeof *c->input_gather);
    if (!c->input_gather || uv_timer_init(s->loop, c->input_gather) != 0) {
      free(c->input_gather);
      c->input_gather = NULL;
      return -1;
    }
    c->input_gather->data = c;
  }
  if (uv_is_active((uv_handle_t *)c->input_gather)) return 0;
  return uv_timer_start(c->input_gather, gathered, GATHER_MS, 0) == 0 ? 0 : -1;
}

mcp_call *mcp_call_ask_input(mcp_server *s, const char *call_id,
                             const cJSON *upstream_id, const char *method,
                             cJSON *params, mcp_input_fn fn, void *ud,
                             char *why, size_t len) {
  mcp_call *c = mcp_call_find(s, call_id);
  const char *cap = !strcmp(method, "sampling/createMessage") ? "sampling"
                    : !strcmp(method, "roots/list")           ? "roots"
                                                              : "elicitation";
  mcp_input *in = NULL;
  if (!c || !c->ss || !c->stateless || c->cancelled) {
    snprintf(why, len, "the tool call it belongs to has ended");
  } else if (count_inputs(c) >= MAX_INPUTS) {
    snprintf(why, len, "%d requests of this tool call wait on the client "
             "already", MAX_INPUTS);
  } else if (!may_ask(c, method)) {
    c->missing_cap = cap; /* the upstream may do without; if it fails, -32021 */
    snprintf(why, len, "toolgate's client cannot answer %s (its request "
             "declared no %s capability)", method, cap);
  } else if (!(in = calloc(1, sizeof *in)) ||
             !(in->key = make_key(c, upstream_id)) ||
             !(in->request = cJSON_CreateObject())) {
    snprintf(why, len, "out of memory");
  } else {
    cJSON_AddStringToObject(in->request, "method", method);
    cJSON_AddItemToObject(in->request, "params", params);
    params = NULL;
    in->fn = fn;
    in->ud = ud;
    mcp_input **tail = &c->inputs;
    while (*tail) tail = &(*tail)->next;
    *tail = in;
    /* a result out already: it waits for the retry; else for the others */
    if (c->answered || gather(s, c) == 0) {
      mcp_logf(s->log, MCP_LOG_DEBUG, "%s %s: the upstream's %s (%s) waits "
               "to go to the client", c->call_id, c->tool, method, in->key);
      return c;
    }
    *tail = NULL;
    snprintf(why, len, "out of memory");
  }
  if (in) free_input(in);
  cJSON_Delete(params);
  return NULL;
}

static void stop_gathering(mcp_call *c) {
  if (c->input_gather && uv_is_active((uv_handle_t *)c->input_gather))
    uv_timer_stop(c->input_gather);
}

void mcp_call_input_withdraw(mcp_call *c, void *ud) {
  if (!c) return;
  for (mcp_input **pp = &c->inputs; *pp; pp = &(*pp)->next)
    if ((*pp)->ud == ud) {
      mcp_input *in = *pp;
      *pp = in->next;
      free_input(in);
      break;
    }
  if (!c->inputs) { /* none left: a retry is a call as any */
    stop_gathering(c);
    free(c->input_state);
    c->input_state = NULL;
  }
}

static void close_freed(uv_handle_t *h) { free(h); }

void mcp_call_input_drop(mcp_call *c, const char *why) {
  if (c->input_gather) { /* the call goes: its timer with it */
    c->input_gather->data = NULL;
    uv_close((uv_handle_t *)c->input_gather, close_freed);
    c->input_gather = NULL;
  }
  cJSON *e = c->inputs ? internal_error(why) : NULL;
  fail_inputs(c, e);
  cJSON_Delete(e);
}

static mcp_call *waiting_with(mcp_session *ss, const char *state) {
  for (mcp_call *c = ss->calls; c; c = c->next)
    if (c->inputs && c->answered && c->input_state &&
        !strcmp(c->input_state, state))
      return c;
  return NULL;
}

/* The retry takes the call over: its id is answered when the call ends,
 * its progress token and capabilities are the ones now. */
static int take_over(mcp_call *c, const mcp_req *req) {
  cJSON *id = cJSON_Duplicate(req->id, 1);
  const cJSON *token = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(req->params, "_meta"), "progressToken");
  cJSON *tok = cJSON_IsString(token) || cJSON_IsNumber(token)
                   ? cJSON_Duplicate(token, 1) : NULL;
  if (!id || ((cJSON_IsString(token) || cJSON_IsNumber(token)) && !tok)) {
    cJSON_Delete(id);
    cJSON_Delete(tok);
    return -1;
  }
  cJSON_Delete(c->id);
  c->id = id;
  cJSON_Delete(c->progress_token);
  c->progress_token = tok;
  c->last_progress = -HUGE_VAL;
  c->can_elicit = mcp_can_elicit(req);
  c->can_sample = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(req->caps, "sampling"));
  c->can_roots = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(req->caps, "roots"));
  c->answered = 0;
  return 0;
}

/* What is wrong with the retry's params, in bad; 0 when nothing. An
 * answer to a key of ours must be an object; other keys are ignored (the
 * revision says to ignore what is not needed). */
static int check_retry(const mcp_call *c, const cJSON *params, char *bad,
                       size_t len) {
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(params, "inputResponses");
  if (!cJSON_IsString(name))
    snprintf(bad, len, "tools/call: params.name must be a string");
  else if (args && !cJSON_IsObject(args) && !cJSON_IsNull(args))
    snprintf(bad, len, "tools/call: params.arguments must be an object");
  else if (in && !cJSON_IsObject(in))
    snprintf(bad, len, "tools/call: params.inputResponses must be an object");
  else {
    for (const mcp_input *x = c->inputs; x; x = x->next) {
      const cJSON *a = cJSON_GetObjectItemCaseSensitive(in, x->key);
      if (a && !cJSON_IsObject(a)) {
        snprintf(bad, len, "tools/call: params.inputResponses.%s must be "
                 "the client's answer to the request (an object)", x->key);
        return -1;
      }
    }
    return 0;
  }
  return -1;
}

int mcp_call_resume(mcp_session *ss, const mcp_req *req) {
  mcp_server *s = ss->s;
  const cJSON *state = cJSON_GetObjectItemCaseSensitive(req->params, "requestState");
  if (!req->stateless || !cJSON_IsString(state)) return 0;
  mcp_call *c = waiting_with(ss, state->valuestring);
  if (!c) return 0; /* an approval's, or its call ended: a call as any */
  char bad[200];
  if (check_retry(c, req->params, bad, sizeof bad) < 0) {
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, bad, NULL);
    return 1;
  }
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(req->params, "name");
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(req->params, "arguments");
  const cJSON *resp = cJSON_GetObjectItemCaseSensitive(req->params, "inputResponses");
  cJSON *none = cJSON_IsObject(args) ? NULL : cJSON_CreateObject();
  char why[512];
  const char *reason = NULL;
  int rc = mcp_state_redeem(s->states, state->valuestring, "tools/call",
                            name->valuestring, none ? none : args, why,
                            sizeof why, &reason);
  cJSON_Delete(none);
  if (rc < 0) {
    cJSON *data = cJSON_CreateObject();
    cJSON_AddStringToObject(data, "reason", reason);
    mcp_logf(s->log, MCP_LOG_WARNING, "tools/call %s refused: %s", c->tool, why);
    mcp_reply_error(ss, req->id, JRPC_INVALID_PARAMS, why, data);
    return 1;
  }
  /* the answered ones leave the call; the others wait on */
  mcp_input *answered = NULL, **tail = &answered;
  for (mcp_input **pp = &c->inputs; *pp;) {
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
    cJSON *id = cJSON_Duplicate(req->id, 1);
    if (id) {
      cJSON_Delete(c->id);
      c->id = id;
    }
    mcp_logf(s->log, MCP_LOG_INFO, "%s %s: sent again without the answers "
             "to the upstream's requests: asking again", c->call_id, c->tool);
    if (!id || pose(s, c) < 0)
      mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, "out of memory", NULL);
    return 1;
  }
  int ok = take_over(c, req) == 0;
  free(c->input_state);
  c->input_state = NULL;
  if (!ok) {
    mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, "out of memory", NULL);
  } else if (c->inputs) { /* some are not answered: asked for again */
    mcp_logf(s->log, MCP_LOG_INFO, "%s %s: the client answered some of the "
             "upstream's requests: asking for %zu more", c->call_id, c->tool,
             count_inputs(c));
    if (pose(s, c) < 0)
      mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, "out of memory", NULL);
  } else {
    mcp_logf(s->log, MCP_LOG_INFO, "%s %s: the client answered the upstream's "
             "requests: the call goes on", c->call_id, c->tool);
  }
  cJSON *e = ok ? NULL : internal_error("out of memory");
  while (answered) { /* each fn may end the call (and free c): not touched */
    mcp_input *x = answered;
    answered = x->next;
    if (x->fn)
      x->fn(ok ? cJSON_GetObjectItemCaseSensitive(resp, x->key) : NULL, e, x->ud);
    free_input(x);
  }
  cJSON_Delete(e);
  return 1;
}
