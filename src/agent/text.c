/*
 * text.c — the texts of an agent's answer: the context policies
 * added, a value shown in a message, and JSON that came back from Lua put
 * in a stable key order (the same answer whoever gives it).
 */
#include <stdlib.h>
#include <string.h>
#include "protocol.h"

/* Text for the model, at most this much in all (agent.context adds up). */
#define HOOK_MAX_CONTEXT 100000
/* A pre-hook's result or a rewritten result shown as text, cut here. */
#define HOOK_MAX_SHOWN 16384

/* The texts agent.context added, in order, as one. NULL: none. */
char *tg__hook_context_text(const cJSON *meta) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(meta, "agent_context");
  if (cJSON_IsString(c)) return tg__strdup(c->valuestring);
  if (!cJSON_IsArray(c)) return NULL;
  size_t len = 0, cap = 0;
  char *out = NULL;
  const cJSON *e;
  cJSON_ArrayForEach(e, c) {
    if (!cJSON_IsString(e) || !*e->valuestring) continue;
    size_t n = strlen(e->valuestring), sep = len ? 2 : 0;
    if (len + sep + n > HOOK_MAX_CONTEXT) n = HOOK_MAX_CONTEXT - len - sep;
    if (len + sep + n + 8 > cap) {
      cap = len + sep + n + 64;
      char *g = realloc(out, cap);
      if (!g) break;
      out = g;
    }
    memcpy(out + len, "\n\n", sep);
    memcpy(out + len + sep, e->valuestring, n);
    len += sep + n;
    out[len] = '\0';
    if (len + 2 >= HOOK_MAX_CONTEXT) {
      memcpy(out + len, "\n[cut]", 7);
      break;
    }
  }
  return out;
}

/* Values that came back from Lua have their keys in the order of a Lua
 * table, which differs from one process to the next: put each object's
 * keys in the order `like` (the agent's own value) has them, then the new
 * ones sorted, so the answer is the same whoever gave it. */
static int key_order(const cJSON *like, const char *k) {
  int i = 0;
  for (const cJSON *c = like ? like->child : NULL; c; c = c->next, i++)
    if (c->string && !strcmp(c->string, k)) return i;
  return -1;
}

/* Which of x and y comes first: -1, 1 (keys differ). */
static int before(const cJSON *like, const cJSON *x, const cJSON *y) {
  int i = key_order(like, x->string), k = key_order(like, y->string);
  if (i >= 0 && k >= 0) return i - k;
  if (i >= 0 || k >= 0) return i >= 0 ? -1 : 1;
  return strcmp(x->string, y->string);
}

void tg__hook_order_like(cJSON *v, const cJSON *like, int depth) {
  if (!v || depth > TG_JSON_MAX_DEPTH) return;
  size_t n = 0;
  for (cJSON *c = v->child; c; c = c->next) {
    const cJSON *sub = NULL;
    if (cJSON_IsObject(v) && cJSON_IsObject(like))
      sub = cJSON_GetObjectItemCaseSensitive(like, c->string);
    else if (cJSON_IsArray(v) && cJSON_IsArray(like))
      sub = cJSON_GetArrayItem(like, (int)n);
    tg__hook_order_like(c, sub, depth + 1);
    n++;
  }
  if (!cJSON_IsObject(v) || n < 2) return;
  cJSON **items = malloc(n * sizeof *items);
  if (!items) return;
  n = 0;
  for (cJSON *c = v->child; c; c = c->next) items[n++] = c;
  if (!cJSON_IsObject(like)) like = NULL;
  for (size_t i = 1; i < n; i++) /* insertion sort: objects are small */
    for (size_t k = i; k > 0 && before(like, items[k - 1], items[k]) > 0; k--) {
      cJSON *t = items[k];
      items[k] = items[k - 1];
      items[k - 1] = t;
    }
  for (size_t i = 0; i < n; i++) { /* cJSON's head->prev is the tail */
    items[i]->next = i + 1 < n ? items[i + 1] : NULL;
    items[i]->prev = i > 0 ? items[i - 1] : items[n - 1];
  }
  v->child = items[0];
  free(items);
}

/* JSON text of v for a message, a string as itself, cut. */
char *tg__hook_shown(const cJSON *v) {
  char *s = cJSON_IsString(v) ? tg__strdup(v->valuestring) : tg_json_print(v, 0);
  if (s && strlen(s) > HOOK_MAX_SHOWN) strcpy(s + HOOK_MAX_SHOWN - 7, " [cut]");
  return s;
}

