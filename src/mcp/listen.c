/*
 * listen.c — subscriptions/listen, how a client of the 2026-07-28 era
 * hears what no request of its asked about: the tool, prompt and resource
 * lists changing, and resources it names being updated. The client opens
 * a stream with a filter; toolgate acknowledges what it honours
 * (notifications/subscriptions/acknowledged, the first message carrying
 * the stream's id), then sends those notifications with the stream's id
 * in _meta, until the client cancels it (notifications/cancelled naming
 * the listen request). The request is never answered otherwise: an
 * abrupt end of the connection ends it. A 2025-era session gets the list
 * notices unasked and subscribes with resources/subscribe (gateway.c);
 * the resource part of a listen goes through the gateway the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mcp.h"

#define MAX_LISTENS 16       /* open streams per client */
#define MAX_LISTEN_URIS 256  /* resources named by one stream */

/* The filter's list kinds, in the order of the owed bits (session.c). */
static const char *const kinds[] = {"toolsListChanged", "promptsListChanged",
                                    "resourcesListChanged"};
static const char *const notices[] = {"notifications/tools/list_changed",
                                      "notifications/prompts/list_changed",
                                      "notifications/resources/list_changed"};
#define NKINDS (sizeof kinds / sizeof *kinds)

struct mcp_listen {
  cJSON *id;               /* the listen request's id: the stream's */
  unsigned kinds;          /* bits of kinds[] it asked for and got */
  mcp_listen *next;
};

static cJSON *stream_meta(const cJSON *id) {
  cJSON *m = cJSON_CreateObject();
  cJSON_AddItemToObject(m, MCP_META_SUBSCRIPTION, cJSON_Duplicate(id, 1));
  return m;
}

cJSON *mcp_listen_params(const cJSON *id) {
  cJSON *p = cJSON_CreateObject();
  cJSON_AddItemToObject(p, "_meta", stream_meta(id));
  return p;
}

static mcp_listen *find(mcp_session *ss, const cJSON *id) {
  for (mcp_listen *l = ss->listens; l; l = l->next)
    if (tg_json_equal(l->id, id)) return l;
  return NULL;
}

static void bad(mcp_session *ss, const cJSON *id, const char *why) {
  char msg[300];
  snprintf(msg, sizeof msg, "subscriptions/listen: %s", why);
  mcp_reply_error(ss, id, JRPC_INVALID_PARAMS, msg, NULL);
}

/* Checks the filter. NULL, or why it is refused. */
static const char *check_filter(const cJSON *f) {
  if (!cJSON_IsObject(f)) return "params.notifications must be an object";
  for (size_t i = 0; i < NKINDS; i++) {
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(f, kinds[i]);
    if (k && !cJSON_IsBool(k)) return "a list kind of the filter must be true or false";
  }
  const cJSON *uris = cJSON_GetObjectItemCaseSensitive(f, "resourceSubscriptions");
  const cJSON *u;
  if (!uris) return NULL;
  if (!cJSON_IsArray(uris)) return "resourceSubscriptions must be an array of URIs";
  if (cJSON_GetArraySize(uris) > MAX_LISTEN_URIS) return "too many resourceSubscriptions";
  cJSON_ArrayForEach(u, uris) if (!cJSON_IsString(u)) return "resourceSubscriptions must be URIs";
  return NULL;
}

void mcp_listen_open(mcp_session *ss, const mcp_req *req) {
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(req->params, "notifications");
  const char *why = check_filter(f);
  size_t n = 0;
  for (mcp_listen *l = ss->listens; l; l = l->next) n++;
  if (!req->stateless)
    why = "a request of the " MCP_STATELESS_VERSION " era (a 2025 session "
          "gets list changes unasked, and subscribes with resources/subscribe)";
  else if (!why && find(ss, req->id))
    why = "a stream with this request id is open already";
  else if (!why && n >= MAX_LISTENS)
    why = "too many streams are open already: close one";
  if (why) return bad(ss, req->id, why);
  mcp_listen *l = calloc(1, sizeof *l);
  if (l) l->id = cJSON_Duplicate(req->id, 1);
  if (!l || !l->id) {
    free(l);
    mcp_reply_error(ss, req->id, JRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  /* what toolgate honours: the tool list always; prompts and resources
   * with upstream servers; each resource an upstream lists and lets one
   * subscribe to */
  cJSON *honoured = cJSON_CreateObject();
  for (size_t i = 0; i < NKINDS; i++) {
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, kinds[i]))) continue;
    if (i > 0 && !ss->s->gw) continue;
    l->kinds |= 1u << i;
    cJSON_AddTrueToObject(honoured, kinds[i]);
  }
  l->next = ss->listens;
  ss->listens = l;
  const cJSON *u;
  cJSON *taken = NULL;
  cJSON_ArrayForEach(u, cJSON_GetObjectItemCaseSensitive(f, "resourceSubscriptions")) {
    if (mcp_gateway_listen_uri(ss, l->id, u->valuestring) < 0) continue;
    if (!taken) taken = cJSON_AddArrayToObject(honoured, "resourceSubscriptions");
    cJSON_AddItemToArray(taken, cJSON_CreateString(u->valuestring));
  }
  cJSON *p = cJSON_CreateObject();
  cJSON_AddItemToObject(p, "notifications", honoured);
  cJSON_AddItemToObject(p, "_meta", stream_meta(l->id));
  mcp_notify(ss, l->id, "notifications/subscriptions/acknowledged", p);
}

int mcp_listen_cancel(mcp_session *ss, const cJSON *id) {
  if (!id) return 0;
  mcp_listen **pp = &ss->listens;
  while (*pp && !tg_json_equal((*pp)->id, id)) pp = &(*pp)->next;
  mcp_listen *l = *pp;
  if (!l) return 0;
  *pp = l->next;
  mcp_gateway_listen_gone(ss->s, ss, l->id);
  cJSON_Delete(l->id);
  free(l);
  return 1;
}

void mcp_listens_free(mcp_session *ss) {
  while (ss->listens) {
    mcp_listen *l = ss->listens;
    ss->listens = l->next;
    cJSON_Delete(l->id);
    free(l);
  }
}

void mcp_listens_notify(mcp_session *ss, unsigned kind) {
  for (mcp_listen *l = ss->listens; l; l = l->next)
    if (kind < NKINDS && (l->kinds & (1u << kind)))
      mcp_notify(ss, l->id, notices[kind], mcp_listen_params(l->id));
}

int mcp_listen_kind(const char *method) {
  for (size_t i = 0; i < NKINDS; i++)
    if (!strcmp(method, notices[i])) return (int)i;
  return -1;
}
