/*
 * schema_uri.c — what $id and $ref need of URIs: resolving a reference
 * against a base (RFC 3986, section 5.2), the fragment, percent-decoded,
 * and JSON pointers (RFC 6901) into a document.
 */
#include <stdlib.h>
#include <string.h>
#include "schema_int.h"

typedef struct {
  const char *s;
  size_t n;
  int has;
} part;

typedef struct {
  part scheme, auth, path, query, frag;
} uri;

static int scheme_char(char c, int first) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return 1;
  return !first && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.');
}

static part take(const char **p, const char *stops) {
  part r = {*p, strcspn(*p, stops), 1};
  *p += r.n;
  return r;
}

static uri parse(const char *s) {
  uri u;
  memset(&u, 0, sizeof u);
  size_t k = 0;
  while (scheme_char(s[k], k == 0)) k++;
  if (k && s[k] == ':') {
    u.scheme = (part){s, k, 1};
    s += k + 1;
  }
  if (s[0] == '/' && s[1] == '/') {
    s += 2;
    u.auth = take(&s, "/?#");
  }
  u.path = take(&s, "?#");
  if (*s == '?') {
    s++;
    u.query = take(&s, "#");
  }
  if (*s == '#') {
    s++;
    u.frag = take(&s, "");
  }
  return u;
}

/* RFC 3986 5.2.4, in place on a NUL-terminated path. */
static void remove_dots(char *in) {
  char *out = in, *r = in;
  while (*r) {
    if (!strncmp(r, "../", 3)) r += 3;
    else if (!strncmp(r, "./", 2)) r += 2;
    else if (!strncmp(r, "/./", 3)) r += 2;
    else if (!strcmp(r, "/.")) r[1] = '\0';
    else if (!strncmp(r, "/../", 4) || !strcmp(r, "/..")) {
      r += 3;
      if (!*r) *--r = '/'; /* "/.." -> "/" */
      while (out > in && *--out != '/') {}
    } else if (!strcmp(r, ".") || !strcmp(r, "..")) {
      break;
    } else {
      do *out++ = *r++; while (*r && *r != '/');
    }
  }
  *out = '\0';
}

static void cat(char **w, const char *s, size_t n) {
  memcpy(*w, s, n);
  *w += n;
}

/* The target path of reference r against base b (5.2.2 and 5.2.3),
 * dots not yet removed, written at w. */
static void target_path(char **w, const uri *b, const uri *r) {
  if (r->path.n && r->path.s[0] == '/') {
    cat(w, r->path.s, r->path.n);
  } else if (b->auth.has && !b->path.n) {
    cat(w, "/", 1);
    cat(w, r->path.s, r->path.n);
  } else {
    size_t keep = b->path.n;
    while (keep && b->path.s[keep - 1] != '/') keep--;
    cat(w, b->path.s, keep);
    cat(w, r->path.s, r->path.n);
  }
}

char *tg__sc_uri_resolve(sc_arena *a, const char *base, const char *ref) {
  uri b = parse(base), r = parse(ref);
  char *buf = malloc(strlen(base) + strlen(ref) + 8), *w = buf;
  if (!buf) return NULL;
  const uri *from = r.scheme.has ? &r : &b;
  if (from->scheme.has) {
    cat(&w, from->scheme.s, from->scheme.n);
    cat(&w, ":", 1);
  }
  const uri *auth = r.scheme.has || r.auth.has ? &r : &b;
  if (auth->auth.has) {
    cat(&w, "//", 2);
    cat(&w, auth->auth.s, auth->auth.n);
  }
  char *path = w;
  const part *query = &r.query;
  if (r.scheme.has || r.auth.has) {
    cat(&w, r.path.s, r.path.n);
  } else if (!r.path.n) {
    cat(&w, b.path.s, b.path.n);
    if (!r.query.has) query = &b.query;
  } else {
    target_path(&w, &b, &r);
  }
  *w = '\0';
  remove_dots(path);
  w = path + strlen(path);
  if (query->has) {
    cat(&w, "?", 1);
    cat(&w, query->s, query->n);
  }
  if (r.frag.has) {
    cat(&w, "#", 1);
    cat(&w, r.frag.s, r.frag.n);
  }
  *w = '\0';
  char *out = tg__sc_strdup(a, buf);
  free(buf);
  return out;
}

static int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char *tg__sc_uri_fragment(sc_arena *a, const char *u, size_t *len) {
  const char *h = strchr(u, '#');
  *len = h ? (size_t)(h - u) : strlen(u);
  if (!h) return NULL;
  char *f = tg__sc_strdup(a, h + 1), *w = f;
  if (!f) return NULL;
  for (const char *r = f; *r; r++) {
    if (*r == '%' && hex(r[1]) >= 0 && hex(r[2]) >= 0) {
      char c = (char)(hex(r[1]) * 16 + hex(r[2]));
      if (c) { /* %00 would cut the string: kept as written */
        *w++ = c;
        r += 2;
        continue;
      }
    }
    *w++ = *r;
  }
  *w = '\0';
  return f;
}

/* ---- JSON pointers ----------------------------------------------------- */

/* The next token of pointer *p (after its '/') unescaped into tok (as
 * long as the pointer). Returns 0 at the end. */
static int next_token(const char **p, char *tok) {
  if (**p != '/') return 0;
  const char *r = *p + 1;
  for (; *r && *r != '/'; r++) {
    if (*r == '~' && (r[1] == '0' || r[1] == '1')) {
      *tok++ = r[1] == '0' ? '~' : '/';
      r++;
    } else {
      *tok++ = *r;
    }
  }
  *tok = '\0';
  *p = r;
  return 1;
}

/* The array element named by tok ("0", "12"; no sign, no leading 0). */
static const cJSON *element(const cJSON *a, const char *tok) {
  if (!*tok || (tok[0] == '0' && tok[1])) return NULL;
  size_t i = 0;
  for (const char *t = tok; *t; t++) {
    if (*t < '0' || *t > '9' || i > (SIZE_MAX - 9) / 10) return NULL;
    i = i * 10 + (size_t)(*t - '0');
  }
  const cJSON *e = a->child;
  while (e && i--) e = e->next;
  return e;
}

static const cJSON *step(const cJSON *j, const char *tok) {
  if (cJSON_IsObject(j)) return cJSON_GetObjectItemCaseSensitive(j, tok);
  if (cJSON_IsArray(j)) return element(j, tok);
  return NULL;
}

const cJSON *tg__sc_pointer(const cJSON *root, const char *p,
                            const sc_map *m, sc_node **last_seen) {
  char *tok = malloc(strlen(p) + 1);
  if (!tok) return NULL;
  const cJSON *j = root;
  do {
    sc_node *n = m ? tg__sc_map_get(m, j) : NULL;
    if (n && last_seen) *last_seen = n;
  } while (next_token(&p, tok) && (j = step(j, tok)));
  free(tok);
  return *p ? NULL : j;
}

void tg__sc_pointer_path(sc_out *o, const cJSON *root, const char *p) {
  size_t n = 0;
  for (const char *q = p; *q; q++) n += *q == '/';
  seg *segs = malloc((n ? n : 1) * sizeof *segs);
  char *tok = malloc(strlen(p) + 1), *toks = malloc(strlen(p) + n + 1);
  const seg *at = NULL;
  const cJSON *j = root;
  char *w = toks;
  for (size_t i = 0; segs && tok && toks && next_token(&p, tok); i++) {
    strcpy(w, tok);
    segs[i] = cJSON_IsArray(j) ? tg__sc_index(at, (size_t)atol(tok))
                               : tg__sc_key(at, w);
    at = &segs[i];
    w += strlen(tok) + 1;
    j = j ? step(j, tok) : NULL;
  }
  tg__sc_path(o, at);
  free(segs);
  free(tok);
  free(toks);
}
