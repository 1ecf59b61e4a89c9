/*
 * text.c — the texts of an agent's answer: the context policies
 * added, a value shown in a message, and JSON that came back from Lua put
 * in a stable key order (the same answer whoever gives it).
 */
#include <stdint.h>
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
 * ones sorted, so the answer is the same whoever gave it. Both come from
 * the agent (a tool's result may have many thousands of keys), so the
 * work is n log n: like's keys are sorted once per object and searched. */

/* One of like's keys: where like has it first. */
typedef struct {
  const char *key;
  const cJSON *item;
  size_t at;
} like_key;

static int by_key(const void *a, const void *b) {
  const like_key *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : x->at < y->at ? -1 : x->at > y->at;
}

/* like's keys sorted (the first of a key twice first); NULL with *n 0
 * when like is no object or has none, or out of memory. */
static like_key *like_keys(const cJSON *like, size_t *n) {
  size_t k = 0;
  *n = 0;
  if (!cJSON_IsObject(like)) return NULL;
  for (const cJSON *c = like->child; c; c = c->next) k += c->string != NULL;
  like_key *t = k ? malloc(k * sizeof *t) : NULL;
  if (!t) return NULL;
  size_t i = 0, at = 0;
  for (const cJSON *c = like->child; c; c = c->next, at++)
    if (c->string) t[i++] = (like_key){c->string, c, at};
  qsort(t, k, sizeof *t, by_key);
  *n = k;
  return t;
}

/* The first of like's keys named key; NULL. */
static const like_key *find_key(const like_key *t, size_t n, const char *key) {
  size_t lo = 0, hi = n;
  while (lo < hi) { /* the first not below key */
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(t[mid].key, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && !strcmp(t[lo].key, key) ? &t[lo] : NULL;
}

/* One of v's keys, with where like has it (SIZE_MAX: not there) and
 * where v has it (ties keep v's order). */
typedef struct {
  cJSON *item;
  size_t like_at, at;
} own_key;

static int in_order(const void *a, const void *b) {
  const own_key *x = a, *y = b;
  if (x->like_at != y->like_at) return x->like_at < y->like_at ? -1 : 1;
  if (x->like_at == SIZE_MAX) {
    int c = strcmp(x->item->string ? x->item->string : "",
                   y->item->string ? y->item->string : "");
    if (c) return c;
  }
  return x->at < y->at ? -1 : x->at > y->at;
}

void tg__hook_order_like(cJSON *v, const cJSON *like, int depth) {
  if (!v || depth > TG_JSON_MAX_DEPTH) return;
  int object = cJSON_IsObject(v);
  size_t n = 0, nlike = 0;
  for (cJSON *c = v->child; c; c = c->next) n++;
  like_key *keys = object ? like_keys(like, &nlike) : NULL;
  /* an object of two keys or more is put in order (none when out of
   * memory: its values still are) */
  own_key *items = object && n >= 2 ? malloc(n * sizeof *items) : NULL;
  const cJSON *like_item = cJSON_IsArray(v) && cJSON_IsArray(like)
                               ? like->child : NULL;
  n = 0;
  for (cJSON *c = v->child; c; c = c->next, n++) {
    const cJSON *sub = NULL;
    if (object) {
      const like_key *k = c->string ? find_key(keys, nlike, c->string) : NULL;
      sub = k ? k->item : NULL;
      if (items) items[n] = (own_key){c, k ? k->at : SIZE_MAX, n};
    } else if (like_item) { /* arrays: item by item */
      sub = like_item;
      like_item = like_item->next;
    }
    tg__hook_order_like(c, sub, depth + 1);
  }
  free(keys);
  if (!items) return;
  qsort(items, n, sizeof *items, in_order);
  for (size_t i = 0; i < n; i++) { /* cJSON's head->prev is the tail */
    items[i].item->next = i + 1 < n ? items[i + 1].item : NULL;
    items[i].item->prev = items[i > 0 ? i - 1 : n - 1].item;
  }
  v->child = items[0].item;
  free(items);
}

/* JSON text of v for a message, a string as itself, cut. */
char *tg__hook_shown(const cJSON *v) {
  char *s = cJSON_IsString(v) ? tg__strdup(v->valuestring) : tg_json_print(v, 0);
  if (s && strlen(s) > HOOK_MAX_SHOWN) strcpy(s + HOOK_MAX_SHOWN - 7, " [cut]");
  return s;
}

