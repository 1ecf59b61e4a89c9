/*
 * mcp.h — what the MCP front is made of, shared by its files:
 *
 *   server.c    the protocol: the server object, the method table, the
 *               handshake (initialize, server/discover, ping), each
 *               request's protocol era, log notifications, the sessions
 *   session.c   one client (one connection): its negotiated version and
 *               capabilities, its calls in flight, our requests to it,
 *               its log level; answering it through its transport
 *   transport.h how messages reach a client (send, received, closed);
 *               transport_stdio.c: stdin/stdout, the first transport
 *   tools.c     tools/list and tools/call: the tool sources
 *               (tool_source.h), calls in flight, progress,
 *               cancellation, outcomes as CallToolResults
 *   approval.c  an `ask`: elicitation/create to the client (2025 era), an
 *               input_required result (2026-07-28), or the fallback
 *   reqstate.c  the integrity-protected requestState of input_required
 *   parked.c    a 2026-07-28 client's request parked while its upstream's
 *               requests of the client go to it as input_required; the
 *               retry that answers them takes the request over
 *   call_input.c a tools/call that parks;  pass_input.c (gateway.h) a
 *               prompts/get or resources/read passed to an upstream
 *   listen.c    subscriptions/listen (2026-07-28): list changes and
 *               resource updates on a client's streams
 *   gateway.c   the upstream MCP servers' tools (a tool source),
 *               prompts and resources
 *   forward.c   a call of an upstream tool, forwarded (gateway.h)
 *   upstream.c  one upstream server: its process, era, requests
 *   jsonrpc.c   JSON-RPC messages;  framing.c  newline-delimited
 *               JSON-RPC on a pair of streams (stdio, upstream servers)
 *   config.c    toolgate.lua;  log.c  the log (stderr or a file)
 *
 * Two protocol eras share one server. The 2025 era (2025-06-18,
 * 2025-11-25) has a session: initialize negotiates the version and tells
 * the client's capabilities once (kept in its mcp_session). The stateless
 * 2026-07-28 era carries them in each request's params._meta
 * (MCP_META_VERSION, MCP_META_CAPS): a request is handled in the era it
 * says it is in. Either way a client's messages come through one
 * mcp_session, the state of its connection.
 */
#ifndef TOOLGATE_MCP_H
#define TOOLGATE_MCP_H

#include <stdint.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "jsonrpc.h"
#include "transport.h"
#include "tool_source.h"
#include "log.h"
#include "server.h"

#define MCP_STATELESS_VERSION "2026-07-28"
#define MCP_LATEST_SESSION_VERSION "2025-11-25"
/* The _meta keys of a 2026-07-28 request. */
#define MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define MCP_META_CLIENT "io.modelcontextprotocol/clientInfo"
#define MCP_META_LOG_LEVEL "io.modelcontextprotocol/logLevel"
/* The _meta key of a 2026-07-28 result that names the server. */
#define MCP_META_SERVER "io.modelcontextprotocol/serverInfo"
/* The _meta key of a notification sent on a subscriptions/listen stream. */
#define MCP_META_SUBSCRIPTION "io.modelcontextprotocol/subscriptionId"
/* The error of a request in a version this server does not speak (the
 * 2026-07-28 revision's UNSUPPORTED_PROTOCOL_VERSION). */
#define MCP_E_UNSUPPORTED_VERSION (-32022)
/* 2026-07-28: a request needs a capability its client did not declare */
#define MCP_E_MISSING_CAPABILITY (-32021)
/* toolgate's own facts about an outcome, in a CallToolResult's _meta. */
#define MCP_META_OUTCOME "toolgate/outcome"

typedef struct mcp_call mcp_call;
typedef struct mcp_pending mcp_pending;
typedef struct mcp_gateway mcp_gateway;
typedef struct mcp_states mcp_states;
typedef struct mcp_session mcp_session;
typedef struct mcp_listen mcp_listen;

/* One request as its handler sees it. */
typedef struct {
  const cJSON *id;
  const char *method;
  const cJSON *params;   /* an object or NULL */
  int stateless;         /* a 2026-07-28 request: the answer carries
                            resultType, no session is assumed */
  const cJSON *caps;     /* the client's capabilities for this request
                            (the session's, or the request's _meta) */
} mcp_req;

/* A server-to-client request waiting for its answer (elicitation). */
typedef void (*mcp_answer_fn)(mcp_session *ss, const cJSON *result,
                              const cJSON *error, void *ud);
struct mcp_pending {
  mcp_session *ss;       /* the client asked */
  cJSON *related;        /* the id of the client's request it asks for,
                            or NULL (transport.h: send) */
  double id;
  mcp_answer_fn fn;      /* NULL: withdrawn, the answer is dropped */
  void *ud;
  mcp_pending *next;
};

/* The client's answer to an upstream's request put to it during a
 * request (parked.c): its result, or an error when it will not come. */
typedef void (*mcp_input_fn)(const cJSON *result, const cJSON *error, void *ud);
/* One such request, waiting (parked.c). */
typedef struct mcp_input mcp_input;
typedef struct mcp_parked mcp_parked;

/* What parks (parked.c): a tools/call (call_input.c), a prompts/get or
 * resources/read passed to an upstream (pass_input.c). */
typedef struct {
  /* may the request still be asked: its client is there, it goes on */
  int (*open)(const mcp_parked *pk);
  /* answers the request (its id now) with result (taken) */
  void (*reply)(mcp_parked *pk, cJSON *result);
  /* the retry req takes the request over: its id is the one answered
   * from now on (answers: it brings some; when 0, only the id changes).
   * 0, or -1 when out of memory */
  int (*take_over)(mcp_parked *pk, const mcp_req *req, int answers);
} mcp_parked_kind;

/* A 2026-07-28 client's request whose upstream asks the client for
 * something (parked.c), part of the request it belongs to. */
struct mcp_parked {
  const mcp_parked_kind *kind; /* NULL: this request does not park */
  mcp_server *s;
  /* what its requestState is bound to: the request's method, subject
   * (the tool, prompt name or resource URI) and arguments (the owner's) */
  const char *method;
  const char *subject;
  const cJSON *args;
  const char *label;     /* its name in the log ("mcp-3", "prompts/get") */
  uint64_t wait_ms;      /* how long the retry is awaited, then what
                            waits fails; 0: as long as the request runs */
  int can_elicit, can_sample, can_roots; /* the capabilities its client
                            declared (the request's _meta) */
  const char *missing_cap; /* what was asked of the client that it had
                            not declared ("sampling", ...); NULL none */
  int posed;             /* an input_required result is out: the retry
                            is awaited */
  mcp_input *inputs;     /* waiting on the client's answers, oldest first */
  char *state;           /* the requestState the retry must bring */
  uv_timer_t *timer;     /* the gathering, then the wait on the retry */
  unsigned keys;         /* keys toolgate made so far */
};

/* A tools/call in flight. */
struct mcp_call {
  mcp_session *ss;       /* NULL: orphaned (the server has gone) */
  mcp_call *prev, *next;
  cJSON *id;             /* the request's id (a copy) */
  char call_id[48];      /* the chain's call id: "mcp-N" */
  char *tool;
  int passes_results;    /* its tool's source gives CallToolResults
                            (an upstream's): decided when it starts */
  cJSON *args;           /* as the client sent them, for a 2026-07-28
                            request (a requestState binds them); NULL in
                            a session */
  cJSON *progress_token; /* _meta.progressToken, or NULL */
  double last_progress;  /* progress must grow: what was last sent;
                            -HUGE_VAL before the first (which may be 0) */
  int own_progress;      /* its tool reports progress (an upstream's,
                            relayed as it comes): no heartbeat of ours */
  cJSON *held_progress;  /* the latest notice while the client does not
                            read (sent when it does): one per call */
  int log_level;         /* a 2026-07-28 request's _meta logLevel: the log
                            messages of its upstream while it runs; -1 */
  int stateless;         /* a 2026-07-28 request */
  int can_elicit;        /* its client accepts elicitation/create */
  int cancelled;         /* notifications/cancelled: nothing more is sent */
  int answered;          /* its answer went out before the call ended
                            (input_required) */
  int preset;            /* the user's answer came with the request (the
                            retry of an input_required): a tg_answer, 0 none */
  tg_always_scope preset_scope;
  char *preset_guidance;
  uint64_t approval_id;  /* an ask waiting on the client's answer */
  mcp_pending *elicit;   /* the elicitation/create it waits on */
  /* an upstream's requests put to a 2026-07-28 client (call_input.c):
   * park.missing_cap, what it asked of the client and the client had not
   * declared ("sampling", ...), makes a failed call -32021 naming it */
  mcp_parked park;
};

/* The client's tools as last listed: names, sorted, and which are hidden. */
typedef struct {
  cJSON *list;           /* the tools/list "tools" array (MCP Tool objects) */
  uint64_t generation;   /* the policy generation it was made from */
  unsigned version;      /* s->tools_version it was made at */
  uint8_t digest[TG_SHA256_SIZE]; /* of list: did a reload change it? */
  int have_digest;
} mcp_tool_cache;

/* One client: what it negotiated and what is in flight with it. The
 * protocol state of a connection; the bytes are its transport's. */
struct mcp_session {
  mcp_server *s;
  mcp_session *next;     /* s->sessions */
  mcp_transport *t;
  int ended;             /* the client has gone (its transport closed) */
  /* the 2025-era session */
  int initialized;       /* initialize was answered */
  char version[16];      /* the negotiated version */
  cJSON *caps;           /* the client's capabilities (initialize) */
  cJSON *meta_session, *meta_stateless; /* call.metadata of each era */
  char client_name[64];
  int log_level;         /* logging/setLevel; notifications at or above */
  int saw_stateless;     /* a 2026-07-28 request came */
  /* calls in flight and server-to-client requests */
  mcp_call *calls;
  size_t ncalls;
  mcp_pending *pending;
  double next_request;
  cJSON *held;           /* requests that came while the gateway settled
                            (an array of the messages) */
  mcp_listen *listens;   /* its open subscriptions/listen streams */
  /* while the client does not read (the transport is congested): the
   * list_changed notices owed to it (bits of session.c's `owed`), and
   * how many progress and log notifications were dropped */
  unsigned owed;
  uint64_t dropped;
};

struct mcp_server {
  tg_runtime *rt;
  uv_loop_t *loop;
  mcp_options opt;
  mcp_log *log;
  int stopping;
  mcp_session *sessions; /* one per connected client */
  uint64_t next_call;
  /* tools */
  mcp_tool_cache tools;
  unsigned tools_version; /* bumped when the C tools change (gateway) */
  const mcp_tool_source *sources[4]; /* besides the runtime's own tools */
  size_t nsources;
  int subscription;
  mcp_states *states;    /* requestState key and the used ones */
  mcp_gateway *gw;       /* NULL: no upstream servers */
};

/* ---- server.c ------------------------------------------------------------ */

/* A new session for a client that connected on t: t's events go to it
 * from now on (transport.h). NULL when out of memory. */
mcp_session *mcp_server_connect(mcp_server *s, mcp_transport *t);
/* The client of ss has gone for good (a transport of many sessions: it
 * ended the session, or the session expired): its calls are cancelled
 * (those still running end unanswered), our requests to it fail, and ss
 * and its transport are freed. */
void mcp_server_disconnect(mcp_server *s, mcp_session *ss);
/* Starts the upstream servers (the gateway). */
int mcp_server_start_upstreams(mcp_server *s, char err[TG_ERRMSG]);
/* One message from the session's client: checked, then handled. */
void mcp_server_handle(mcp_session *ss, cJSON *msg);
/* The requests held while the gateway settled are handled now, in the
 * order they came. */
void mcp_release_held(mcp_server *s);
/* Does this request's client accept elicitation/create (form mode)? */
int mcp_can_elicit(const mcp_req *req);
/* The session to put a question to that no request of a client caused
 * (an upstream server's elicitation, its input_required): an initialized
 * one whose client accepts elicitation, or NULL. */
mcp_session *mcp_server_asker(mcp_server *s);
/* The same for another capability of the client's ("sampling", "roots";
 * "elicitation" is mcp_server_asker's). */
mcp_session *mcp_server_asker_with(mcp_server *s, const char *capability);
/* A log line, and the same as a notifications/message to each 2025-era
 * client that wants that level. */
void mcp_log_client(mcp_server *s, mcp_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A list_changed notification: to each initialized 2025-era client (no
 * params), and on each subscriptions/listen stream that asked for it. */
void mcp_notify_sessions(mcp_server *s, const char *method);
/* Does the session's client want log messages of this level (its
 * logging/setLevel, in either era)? */
int mcp_session_wants_log(const mcp_session *ss, mcp_log_level level);
/* toolgate's Implementation object ({name, title, version}). */
cJSON *mcp_server_info(void);
/* For a 2026-07-28 request: ttlMs and cacheScope on a cacheable result
 * (lists, resources/read), unless it carries valid ones already. */
void mcp_cacheable(const mcp_req *req, cJSON *result, uint64_t ttl_ms,
                   const char *scope);

/* ---- session.c ----------------------------------------------------------- */

mcp_session *mcp_session_new(mcp_server *s, mcp_transport *t);
/* Frees the session: its calls still running are orphaned, its
 * transport closed. */
void mcp_session_free(mcp_session *ss);
/* Answers req with result (taken): resultType "complete" is added for a
 * 2026-07-28 request that has none. */
void mcp_reply(mcp_session *ss, const mcp_req *req, cJSON *result);
void mcp_reply_error(mcp_session *ss, const cJSON *id, int code,
                     const char *message, cJSON *data);
/* A notification to the client (params taken); related: the id of the
 * client's request it is about, or NULL (transport.h: send). */
void mcp_notify(mcp_session *ss, const cJSON *related, const char *method,
                cJSON *params);
/* Sends a request to the client, for its request related (or NULL); fn
 * gets its answer. Returns the pending entry (to withdraw with
 * mcp_withdraw), or NULL when it could not be sent. */
mcp_pending *mcp_ask_client(mcp_session *ss, const cJSON *related,
                            const char *method, cJSON *params,
                            mcp_answer_fn fn, void *ud);
/* The answer will not be wanted: it is dropped when it comes, and the
 * client is told (notifications/cancelled). */
void mcp_withdraw(mcp_pending *p, const char *reason);
/* Our requests still waiting on the client are answered with an error
 * saying why (the client has gone): their owners let go of them. */
void mcp_session_fail_pending(mcp_session *ss, const char *why);
/* A response from the client to one of our requests. */
void mcp_session_response(mcp_session *ss, const jrpc_msg *m);

/* ---- tools.c ------------------------------------------------------------- */

void mcp_tools_list(mcp_session *ss, const mcp_req *req);
void mcp_tools_call(mcp_session *ss, const mcp_req *req);
void mcp_cancelled(mcp_session *ss, const cJSON *params);
/* Is name a tool the client may call (listed after the expose filter)? */
int mcp_tool_exposed(mcp_server *s, const char *name);
/* Does the expose filter hide name? */
int mcp_tool_hidden(const mcp_server *s, const char *name);
/* The tools as the client sees them (refreshed when the generation or the
 * C tools changed). */
const cJSON *mcp_tool_list(mcp_server *s);
/* After a reload or an upstream change: tells a 2025-era client
 * notifications/tools/list_changed if the list it would get changed. */
void mcp_tools_maybe_changed(mcp_server *s);
/* A source of tools (tool_source.h), asked before the runtime's own
 * tools; src must outlive its registration. -1 when there are too many. */
int mcp_tools_add_source(mcp_server *s, const mcp_tool_source *src);
void mcp_tools_remove_source(mcp_server *s, const mcp_tool_source *src);
/* Cancels every call of the session in flight (stop). */
void mcp_calls_cancel_all(mcp_session *ss);
/* Orphans the session's calls still running (their done frees them). */
void mcp_calls_free(mcp_session *ss);
/* A progress notice the tool of call call_id gave itself (an upstream's
 * notifications/progress): to the client at once when it asked for
 * progress (and the value grew). */
void mcp_call_own_progress(mcp_server *s, const char *call_id,
                           const cJSON *params);
/* A log message of the upstream running call call_id (params taken):
 * to a 2026-07-28 client that asked for that level in the call's _meta
 * (log messages are request-scoped there), unless it has them already
 * from its logging/setLevel. */
void mcp_call_log(mcp_server *s, const char *call_id, mcp_log_level level,
                  cJSON *params);
/* The client reads again: each call's held progress notice goes out. */
void mcp_calls_flush_progress(mcp_session *ss);
/* The call of that chain call id, in any session, or NULL. */
mcp_call *mcp_call_find(mcp_server *s, const char *call_id);

/* ---- parked.c ------------------------------------------------------------ */

/* Sets pk up for a request req of method (a literal), not parked yet;
 * subject, args and wait_ms are the owner's to set. */
void mcp_parked_init(mcp_parked *pk, const mcp_parked_kind *kind,
                     mcp_server *s, const mcp_req *req, const char *method,
                     const char *label);
/* The capabilities the client declared in req, as pk's. */
void mcp_parked_read_caps(mcp_parked *pk, const mcp_req *req);
/* An upstream's request (its id upstream_id; method, params taken) made
 * while it runs pk's request: the request is answered input_required
 * (with the other requests that come with it), and fn gets the client's
 * answer when it sends the request again (or an error when the request
 * ends first, or the retry does not come in time). 0, or -1 with why (fn
 * not called). */
int mcp_parked_ask(mcp_parked *pk, const cJSON *upstream_id,
                   const char *method, cJSON *params, mcp_input_fn fn,
                   void *ud, char *why, size_t len);
/* The upstream withdrew its request (the one of ud; or toolgate stops)
 * before fn ran: fn will not be called. */
void mcp_parked_withdraw(mcp_parked *pk, void *ud);
/* The request is freed: a request still waiting is answered with an
 * error (why), through its fn. */
void mcp_parked_drop(mcp_parked *pk, const char *why);
/* Is pk's request waiting on the retry that brings state? */
int mcp_parked_holds(const mcp_parked *pk, const char *state);
/* The retry req of pk's request (it holds req's requestState), with the
 * subject and arguments it names: checked, and the answers go on, or the
 * requests are put again. req is always answered or taken over. */
void mcp_parked_resume(mcp_parked *pk, mcp_session *ss, const mcp_req *req,
                       const char *subject, const cJSON *args);
/* Redeems req's requestState for method, subject and args (NULL: {}): 0,
 * or -1 when it answered req with the error (tampered, replayed,
 * expired, issued for another request). */
int mcp_parked_redeem(mcp_server *s, mcp_session *ss, const mcp_req *req,
                      const char *method, const char *subject,
                      const cJSON *args);

/* ---- call_input.c -------------------------------------------------------- */

/* Where an upstream's requests during call call_id wait (parked.c), or
 * NULL when there is no such call or it is not of a 2026-07-28 request
 * (a 2025-era client is asked in its session). */
mcp_parked *mcp_call_park(mcp_server *s, const char *call_id);
/* Sets up the park of a new call (req its request). */
void mcp_call_park_init(mcp_call *c, const mcp_req *req);
/* A tools/call that brings the requestState of a call waiting on the
 * client: handled (the answer goes on, or the request is put again) and
 * 1; 0 when it is no such retry. */
int mcp_call_resume(mcp_session *ss, const mcp_req *req);

/* ---- approval.c ---------------------------------------------------------- */

/* The runtime's approver (tg_runtime_set_approver(rt, mcp_approver, s)):
 * it hears only the calls that no client made (a tool's own), and answers
 * with the fallback. */
void mcp_approver(tg_runtime *rt, const tg_approval_request *req, void *ud);
/* The approver of a client's call (ud: its mcp_call), given to the
 * runtime when the call starts (tg_call_start_approved). */
void mcp_call_approver(tg_runtime *rt, const tg_approval_request *req,
                       void *ud);
/* A call ends or is cancelled while its ask waits on the client. */
void mcp_approval_drop(mcp_call *c);
/* The user's answer a retried 2026-07-28 tools/call carries with its
 * requestState (inputResponses), checked and set as c's preset answer
 * (a requestState without the answer: none, and the question is put
 * again).
 * 0 (also when there is none), or -1 when it has answered the request
 * with an error. */
int mcp_read_input_response(mcp_session *ss, const mcp_req *req,
                            mcp_call *c);

/* ---- listen.c ------------------------------------------------------------ */

/* subscriptions/listen: a stream opened (acknowledged, never answered). */
void mcp_listen_open(mcp_session *ss, const mcp_req *req);
/* notifications/cancelled for request id: 1 when it closed a stream. */
int mcp_listen_cancel(mcp_session *ss, const cJSON *id);
void mcp_listens_free(mcp_session *ss);
/* A list changed (kind: mcp_listen_kind of its notice): each stream of
 * the session that asked for it is told. */
void mcp_listens_notify(mcp_session *ss, unsigned kind);
int mcp_listen_kind(const char *method);
/* A notification's params with the stream's id in _meta (new). */
cJSON *mcp_listen_params(const cJSON *id);

/* ---- reqstate.c ---------------------------------------------------------- */

mcp_states *mcp_states_new(uint64_t ttl_ms, char err[TG_ERRMSG]);
void mcp_states_free(mcp_states *st);
/* The key of toolgate's own question (may this call run?) in an
 * input_required result's inputRequests; a relayed request never gets it. */
#define MCP_APPROVAL_KEY "approval"
/* What a requestState answers: toolgate's own approval question, or the
 * requests an upstream made (relayed). A state of one never redeems as
 * the other. */
typedef enum { MCP_STATE_APPROVAL, MCP_STATE_INPUT } mcp_state_purpose;
/* A new requestState for a request of method on tool (a prompt's name, a
 * URI) with args, for purpose (base64url text, malloc'd), or NULL when
 * out of memory. */
char *mcp_state_issue(mcp_states *st, mcp_state_purpose purpose,
                      const char *method, const char *tool,
                      const cJSON *args);
/* Checks a requestState that came back with a retried request: the MAC,
 * the expiry, that it was issued for this purpose, method, tool and args,
 * and that it was not used before — then marks it used. 0, or -1 with why (a
 * sentence for the client) and reason ("tampered", "expired", "mismatch",
 * "replayed"). */
int mcp_state_redeem(mcp_states *st, const char *state,
                     mcp_state_purpose purpose, const char *method,
                     const char *tool, const cJSON *args, char *why,
                     size_t whylen, const char **reason);

/* ---- gateway.c ----------------------------------------------------------- */

int mcp_gateway_start(mcp_server *s, char err[TG_ERRMSG]);
void mcp_gateway_stop(mcp_server *s);
int mcp_gateway_busy(const mcp_server *s);
void mcp_gateway_free(mcp_server *s);
/* The prompts and resources methods: forwarded to the upstream that owns the
 * name; 0 when the gateway handled the method, -1 when it has none. */
int mcp_gateway_request(mcp_session *ss, const mcp_req *req);
/* notifications/cancelled for a request the gateway passed to an
 * upstream (prompts/get, resources/read, ...): the upstream is told
 * (with its own id for it) and its answer dropped. 1 when it was one. */
int mcp_gateway_cancel(mcp_session *ss, const cJSON *id);
/* The capabilities the gateway adds (prompts, resources, completions) to
 * cap. */
void mcp_gateway_capabilities(mcp_server *s, cJSON *caps);
/* A client set its log level: the upstreams that log are told the lowest
 * level any client wants. */
void mcp_gateway_log_level(mcp_server *s);
/* The client's roots changed: the 2025-era upstreams are told (they ask
 * roots/list again, relayed to the client). */
void mcp_gateway_roots_changed(mcp_server *s);
/* A resource a subscriptions/listen stream names: subscribed to at the
 * upstream that lists it. 0, or -1 when no upstream can take it. */
int mcp_gateway_listen_uri(mcp_session *ss, const cJSON *listen,
                           const char *uri);
/* The stream has closed: its resources are unsubscribed (at the upstream
 * when no one else is subscribed). */
void mcp_gateway_listen_gone(mcp_server *s, mcp_session *ss,
                             const cJSON *listen);
/* The session has gone: its resource subscriptions go with it. */
void mcp_gateway_session_gone(mcp_server *s, mcp_session *ss);
/* Are upstream servers still having their first go at starting? The
 * server holds the client's requests meanwhile. */
int mcp_gateway_settling(const mcp_server *s);

/* ---- gateway_starting.c ----------------------------------------------------- */

/* A tools/call of a name that is no listed tool: when the name's prefix is
 * an upstream server that has not listed its tools yet, answers a
 * retryable UPSTREAM_UNAVAILABLE result and returns 1; else 0 (the name
 * is unknown). */
int mcp_gateway_answer_starting(mcp_session *ss, const mcp_req *req,
                                const char *name);

#endif
