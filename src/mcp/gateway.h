/*
 * gateway.h — what the gateway's two files share: gateway.c (the
 * upstreams, their tools in the runtime, prompts, resources, relayed
 * questions, start-up), forward.c (a tools/call forwarded to an
 * upstream: progress, cancel), pass_input.c (a passed request that parks)
 * and upstream_ask.c (the input an upstream of the 2026-07-28 era asks
 * for, for a tools/call, a prompts/get or a resources/read).
 */
#ifndef TOOLGATE_MCP_GATEWAY_H
#define TOOLGATE_MCP_GATEWAY_H

#include "mcp.h"
#include "upstream.h"

typedef struct gw_tool {
  mcp_gateway *gw;
  char *name;              /* as the client sees it: server + sep + orig */
  char *orig;              /* the upstream's own name */
  mcp_upstream *up;
  cJSON *def;              /* the upstream's Tool, renamed */
  int registered;          /* in the runtime (a name taken by a Lua tool
                              is not) */
  int offered;             /* registered, and in its latest tools/list */
  int reports_progress;    /* it has sent notifications/progress */
} gw_tool;

/* A client's subscription to a resource: its updates go to that client
 * (on that stream). */
typedef struct gw_sub {
  mcp_session *ss;
  cJSON *listen;           /* the subscriptions/listen stream's id (2026-07-28),
                              or NULL: resources/subscribe (2025) */
  char *uri;
  struct gw_sub *next;
} gw_sub;

/* The input an upstream of the 2026-07-28 era asked for in an
 * input_required answer to one of our requests, being gathered from the
 * client for the next round (upstream_ask.c). */
typedef struct gw_inputs {
  mcp_gateway *gw;
  mcp_upstream *up;
  const char *method;      /* our request at the upstream (a literal);
                              NULL: one that may not ask */
  void (*ready)(struct gw_inputs *in); /* every answer is in: send the
                                          request again (gw_inputs_take) */
  int rounds;
  char *state;             /* the upstream's requestState, or NULL */
  cJSON *answers;          /* inputResponses so far */
  struct gw_ask *asks;     /* questions still open at the client */
} gw_inputs;

/* A tools/call attempt forwarded, waiting for the upstream's answer (or,
 * for a 2026-07-28 upstream that asked for input, for the user's). */
typedef struct gw_fwd gw_fwd;

/* An upstream's request of its client (elicitation/create,
 * sampling/createMessage, roots/list), relayed to ours. */
typedef struct gw_relay {
  mcp_gateway *gw;
  mcp_upstream *up;
  unsigned start;          /* which run of the upstream asked */
  cJSON *id;               /* its request id */
  mcp_pending *pending;    /* our request to the client (2025 era) */
  struct gw_relay *next;
  mcp_parked *park;        /* or: the 2026-07-28 request (a tools/call, a
                              prompts/get, ...) it was put to as
                              input_required (parked.c; it holds this
                              relay until it answers); NULL none */
} gw_relay;

/* A client's prompts/get, resources/read, completion/complete or
 * resources/(un)subscribe, passed to an upstream: until it answers, the
 * client may cancel it (the upstream is told, its answer dropped). */
typedef struct gw_pass {
  mcp_gateway *gw;
  mcp_upstream *up;
  double up_id;            /* the request at the upstream */
  struct gw_pass *next;    /* gw->passes */
  mcp_session *ss;         /* the client that asked (it may go first) */
  cJSON *id;
  int stateless;
  int cacheable;           /* resources/read: its 2026-07-28 result has a
                              ttlMs and cacheScope (the upstream's, else 0
                              and private: toolgate cannot tell) */
  int completion;          /* completion/complete: its result is checked */
  /* a 2026-07-28 client's prompts/get or resources/read: the upstream's
   * requests of the client during it are put to the client as its
   * input_required result (pass_input.c; park.kind NULL: not this one) */
  mcp_parked park;
  char *subject;           /* the prompt's name or the URI, as sent */
  cJSON *args;             /* the prompt's arguments ({} for a resource) */
  int answered;            /* input_required went out for its id: the
                              upstream's answer waits for the retry */
  cJSON *params;           /* a prompts/get's or resources/read's params
                              at a 2026-07-28 upstream, kept for another
                              round; NULL: none */
  gw_inputs inputs;        /* what that upstream asked for (up_id 0 while
                              the client answers) */
} gw_pass;

/* The digests of an upstream's prompts and of its resources (with their
 * templates) as the clients were last told of them: a restart that lists
 * the same is no list_changed. */
typedef struct {
  uint8_t prompts[TG_SHA256_SIZE], resources[TG_SHA256_SIZE];
  int have;
} gw_lists_seen;

struct mcp_gateway {
  mcp_server *s;
  mcp_upstream **ups;
  unsigned *starts;        /* per upstream: runs seen (for relays) */
  int *first_done;         /* per upstream: its first start is over */
  unsigned *listed_start;  /* per upstream: starts + 1 when that run was
                              first listed (0: never) */
  gw_lists_seen *seen;     /* per upstream: its prompts and resources as
                              last told to the clients */
  size_t nups;
  gw_tool **tools;
  size_t ntools;
  gw_fwd *fwds;
  gw_pass *passes;
  gw_relay *relays;
  gw_sub *subs;
  int log_level;           /* told the upstreams that log; -1: not yet */
  double next_token;
  mcp_tool_source src;     /* its tools, to the server (tool_source.h) */
  uv_timer_t startup;
  int startup_open, settled, stopped;
};

/* ---- pass_input.c ---- */

/* method as a literal when a request of it passed to an upstream may be
 * asked for input and sent again (it parks for a 2026-07-28 client, and
 * takes a 2026-07-28 upstream's input_required): "prompts/get",
 * "resources/read"; else NULL. */
const char *gw_pass_asking_method(const char *method);

/* Sets up the park of a client's request passed to an upstream (method:
 * "prompts/get", "resources/read"; others do not park), for a
 * 2026-07-28 request. 0, or -1 when out of memory. */
int gw_pass_park_init(gw_pass *p, const mcp_req *req, const char *method);
/* A 2026-07-28 prompts/get or resources/read (subject: its name or URI)
 * that brings a requestState: the retry of a request waiting on the
 * client's answers (handled, 1), or of one that has ended meanwhile
 * (its state redeemed: 0, to be handled as a fresh request), or one
 * whose state is bad (answered with the error, 1). 0 also when it
 * brings none. */
int gw_pass_resume(mcp_session *ss, const mcp_req *req, const char *subject);

/* ---- upstream_ask.c ---- */

/* The upstream's input_required answer (result) to in's request: its
 * requests go to the client — through park (a 2026-07-28 client's
 * request), else to prefer (the session whose request it is) or, with
 * none, the session that declared the capability — and in->ready runs
 * when every answer is in. 0, or -1 with why (then gw_inputs_drop). */
int gw_inputs_ask(gw_inputs *in, const cJSON *result, mcp_parked *park,
                  mcp_session *prefer, char *why, size_t len);
/* Moves the answers and the upstream's requestState into params (the
 * next round's); nothing when none were gathered. */
void gw_inputs_take(gw_inputs *in, cJSON *params);
/* Withdraws the questions still open at the client and frees what was
 * gathered (the request ends, or asks anew). */
void gw_inputs_drop(gw_inputs *in, const char *why);

/* An upstream's elicitation/create params, for the user: a copy whose
 * message starts "[server] ", so the user knows who asks. NULL: no memory. */
cJSON *gw_question(const mcp_upstream *u, const cJSON *params);

/* A notifications/message's params: level, logger, data (a copy). */
cJSON *gw_log_params(int level, const char *logger, const cJSON *data);

/* The client capability a request relayed from an upstream needs
 * ("sampling", "roots", else "elicitation"). */
const char *gw_capability_for(const char *method);

/* gateway_starting.c: the first upstream that has not listed yet in any
 * run (a URI may be its; bare_only: one of prefix = false, whose names
 * have no prefix), or NULL. */
mcp_upstream *gw_first_starting(const mcp_gateway *gw, int bare_only);
/* Answers req (prompts/get, resources/read, completion/complete,
 * resources/subscribe) aimed at u, which is not up, with a retryable
 * -32603 whose data is the outcome a tool call would carry (code
 * UPSTREAM_UNAVAILABLE); what: the name or URI asked for, quoted. */
void gw_reply_unavailable(mcp_session *ss, const mcp_req *req,
                          const mcp_upstream *u, const char *what);

/* The upstream's index in gw->ups (gw->nups when it is not there). */
size_t gw_index_of(const mcp_gateway *gw, const mcp_upstream *u);

/* forward.c: the runtime's start and cancel functions of an upstream
 * tool (ud: its gw_tool), the upstream's progress, and the forwards left
 * when the gateway goes. */
void gw_tool_start(tg_exec *ex, const cJSON *args, void *ud);
void gw_tool_cancel(tg_exec *ex, void *ud);
void gw_progress(mcp_gateway *gw, mcp_upstream *u, const cJSON *params);
void gw_fwds_free(mcp_gateway *gw);
/* How many tool calls are forwarded to u now; *one: the call id (the
 * chain's) of one of them. */
size_t gw_calls_at(const mcp_gateway *gw, const mcp_upstream *u,
                   const char **one);
/* An upstream's log message, to the calls forwarded to it that asked for
 * log messages (a 2026-07-28 request's _meta logLevel). */
void gw_fwds_log(mcp_gateway *gw, mcp_upstream *u, int level,
                 const char *logger, const cJSON *data);

#endif
