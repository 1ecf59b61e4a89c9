/*
 * jsonrpc.h — JSON-RPC 2.0 messages: what a peer sent, sorted
 * (jrpc_classify), and the messages we make. Only JSON here: how the
 * messages travel is a transport's business (transport.h), and the
 * newline-delimited framing of stdio is framing.h's.
 */
#ifndef TOOLGATE_MCP_JSONRPC_H
#define TOOLGATE_MCP_JSONRPC_H

#include <cjson/cJSON.h>

/* The standard codes (JSON-RPC 2.0 §5.1). */
enum {
  JRPC_PARSE_ERROR = -32700,
  JRPC_INVALID_REQUEST = -32600,
  JRPC_METHOD_NOT_FOUND = -32601,
  JRPC_INVALID_PARAMS = -32602,
  JRPC_INTERNAL_ERROR = -32603
};

/* ---- messages ------------------------------------------------------------ */

typedef enum {
  JRPC_REQUEST,      /* method + id */
  JRPC_NOTIFICATION, /* method, no id */
  JRPC_RESPONSE,     /* id + result or error */
  JRPC_INVALID       /* why says what is wrong; id if one was readable */
} jrpc_kind;

typedef struct {
  jrpc_kind kind;
  const char *method;
  const cJSON *id;     /* a string or an integer within ±2^53 */
  const cJSON *params; /* an object, or NULL */
  const cJSON *result; /* responses: one of result / error */
  const cJSON *error;
  const char *why;
} jrpc_msg;

/* Sorts msg into a jrpc_msg (pointers into msg). */
void jrpc_classify(const cJSON *msg, jrpc_msg *out);

/* The code of a peer's error object: an integer an int holds, else dflt.
 * A peer (an upstream server) may send 1e300 or 1.5, and a double cast to
 * int out of its range is undefined behaviour. (A front cannot use
 * base/jsonnum.h: this is the MCP front's one such conversion.) */
int jrpc_error_code(const cJSON *error, int dflt);

/* New messages (caller frees with cJSON_Delete). Each takes ownership of
 * its result / params / data; id is copied (NULL: null). */
cJSON *jrpc_result(const cJSON *id, cJSON *result);
cJSON *jrpc_error(const cJSON *id, int code, const char *message,
                  cJSON *data);
/* An error response with error, an {code, message, data?} object (taken). */
cJSON *jrpc_error_response(const cJSON *id, cJSON *error);
cJSON *jrpc_notification(const char *method, cJSON *params);
cJSON *jrpc_request(double id, const char *method, cJSON *params);

#endif
