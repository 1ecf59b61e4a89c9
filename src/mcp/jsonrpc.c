/*
 * jsonrpc.c — JSON-RPC 2.0 messages (jsonrpc.h): sorting what came in,
 * making what goes out. No bytes and no streams here: the framing is
 * framing.c's, the transports' (transport.h).
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "jsonrpc.h"
/* ---- messages -------------------------------------------------------------- */

/* A usable id: a string, or an integer a double holds exactly (the id goes
 * back as it came, and 2^53 + 1 would not). */
static int id_ok(const cJSON *id) {
  if (cJSON_IsString(id)) return 1;
  if (!cJSON_IsNumber(id)) return 0;
  double d = id->valuedouble;
  return d == floor(d) && fabs(d) <= 9007199254740991.0;
}

int jrpc_error_code(const cJSON *error, int dflt) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(error, "code");
  if (!cJSON_IsNumber(c)) return dflt;
  double d = c->valuedouble;
  return d == floor(d) && d >= INT_MIN && d <= INT_MAX ? (int)d : dflt;
}

static void invalid(jrpc_msg *m, const char *why) {
  m->kind = JRPC_INVALID;
  m->why = why;
}

static void classify_call(const cJSON *msg, const cJSON *method,
                          const cJSON *id, jrpc_msg *m) {
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
  if (!cJSON_IsString(method))
    return invalid(m, "\"method\" must be a string");
  m->method = method->valuestring;
  if (params && !cJSON_IsObject(params))
    return invalid(m, "\"params\" must be an object (MCP names its params)");
  m->params = params;
  m->kind = id ? JRPC_REQUEST : JRPC_NOTIFICATION;
}

void jrpc_classify(const cJSON *msg, jrpc_msg *m) {
  memset(m, 0, sizeof *m);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
  if (id && !id_ok(id))
    return invalid(m, "\"id\" must be a string or an integer (not null, "
                      "not a fraction, within ±2^53)");
  m->id = id;
  if (!cJSON_IsString(v) || strcmp(v->valuestring, "2.0") != 0)
    return invalid(m, "\"jsonrpc\" must be \"2.0\"");
  if (method) return classify_call(msg, method, id, m);
  m->result = cJSON_GetObjectItemCaseSensitive(msg, "result");
  m->error = cJSON_GetObjectItemCaseSensitive(msg, "error");
  if (!id) return invalid(m, "no \"method\" and no \"id\": neither a call "
                             "nor a response");
  if (!m->result == !m->error)
    return invalid(m, "a response has exactly one of \"result\" and "
                      "\"error\"");
  if (m->error && !cJSON_IsObject(m->error))
    return invalid(m, "\"error\" must be an object");
  m->kind = JRPC_RESPONSE;
}

/* Every message has these: constant keys and "2.0" are referenced, not
 * copied (two messages a tool call, each freed once printed). */
static int add_version(cJSON *m) {
  cJSON *v = cJSON_CreateStringReference("2.0");
  if (v && cJSON_AddItemToObjectCS(m, "jsonrpc", v)) return 1;
  cJSON_Delete(v);
  return 0;
}

static int add_cs(cJSON *m, const char *key, cJSON *item) {
  if (item && cJSON_AddItemToObjectCS(m, key, item)) return 1;
  cJSON_Delete(item);
  return 0;
}

static cJSON *envelope(const cJSON *id) {
  cJSON *m = cJSON_CreateObject();
  if (!m) return NULL;
  if (!add_version(m) ||
      !add_cs(m, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull())) {
    cJSON_Delete(m);
    return NULL;
  }
  return m;
}

cJSON *jrpc_result(const cJSON *id, cJSON *result) {
  cJSON *m = envelope(id);
  if (!m) {
    cJSON_Delete(result);
    return NULL;
  }
  add_cs(m, "result", result ? result : cJSON_CreateObject());
  return m;
}

cJSON *jrpc_error(const cJSON *id, int code, const char *message,
                  cJSON *data) {
  cJSON *e = cJSON_CreateObject();
  if (!e) {
    cJSON_Delete(data);
    return NULL;
  }
  cJSON_AddNumberToObject(e, "code", code);
  cJSON_AddStringToObject(e, "message", message);
  if (data) cJSON_AddItemToObject(e, "data", data);
  return jrpc_error_response(id, e);
}

cJSON *jrpc_error_response(const cJSON *id, cJSON *error) {
  cJSON *m = envelope(id);
  if (!m) {
    cJSON_Delete(error);
    return NULL;
  }
  cJSON_AddItemToObject(m, "error", error);
  return m;
}

cJSON *jrpc_notification(const char *method, cJSON *params) {
  cJSON *m = cJSON_CreateObject();
  if (!m || !add_version(m)) {
    cJSON_Delete(m);
    cJSON_Delete(params);
    return NULL;
  }
  cJSON_AddStringToObject(m, "method", method);
  if (params) add_cs(m, "params", params);
  return m;
}

cJSON *jrpc_request(double id, const char *method, cJSON *params) {
  cJSON *m = jrpc_notification(method, params);
  if (m) add_cs(m, "id", cJSON_CreateNumber(id));
  return m;
}
