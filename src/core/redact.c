/*
 * redact.c — masking what must not leave the runtime. Every string bound
 * for an event, an audit row, a stored message or an export goes through
 * tg__redact_str: first the built-in masks of common credential shapes,
 * then the host's redactor (tg_runtime_set_redactor), then the policies'
 * (tg.redact). A redactor that fails masks the whole string (closed, not
 * open). A redactor's own events are not redacted again (no recursion).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "core/redact.h"
#include "base/util.h"

/* ---- the built-in masks ------------------------------------------------- */

static int upper_digit(int c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
static int alnum(int c) { return isalnum((unsigned char)c); }
static int token_char(int c) {
  return alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
         c == '+' || c == '/' || c == '=';
}

/* How long the credential starting at s is (0: none), and its label. */
static size_t match_at(const char *s, const char *start, const char **label) {
  size_t n;
  /* most characters start no mask: one test, not a compare per mask */
  if (s[0] != 'A' && s[0] != 'g' && s[0] != 'B' && s[0] != 'b' &&
      s[0] != '-')
    return 0;
  /* AWS access key ids: AKIA / ASIA and 16 upper-case letters or digits */
  if ((!strncmp(s, "AKIA", 4) || !strncmp(s, "ASIA", 4)) &&
      (s == start || !alnum(s[-1]))) {
    for (n = 4; n < 20 && upper_digit(s[n]); n++) {}
    if (n == 20 && !alnum(s[20])) {
      *label = "[REDACTED:aws-access-key]";
      return 20;
    }
  }
  /* GitHub tokens: ghp_ gho_ ghu_ ghs_ ghr_ and 20+, github_pat_ */
  if (s[0] == 'g' && s[1] == 'h' && strchr("pousr", s[2]) && s[2] &&
      s[3] == '_' && (s == start || !alnum(s[-1]))) {
    for (n = 4; alnum(s[n]); n++) {}
    if (n >= 24) {
      *label = "[REDACTED:github-token]";
      return n;
    }
  }
  if (!strncmp(s, "github_pat_", 11)) {
    for (n = 11; alnum(s[n]) || s[n] == '_'; n++) {}
    if (n >= 31) {
      *label = "[REDACTED:github-token]";
      return n;
    }
  }
  /* bearer tokens: "Bearer" and a token of 8+ characters */
  if ((s[0] == 'B' || s[0] == 'b') && !strncasecmp(s, "bearer", 6) &&
      (s == start || !alnum(s[-1])) && (s[6] == ' ' || s[6] == '\t')) {
    size_t t = 6;
    while (s[t] == ' ' || s[t] == '\t') t++;
    for (n = t; token_char(s[n]); n++) {}
    if (n - t >= 8) {
      *label = "Bearer [REDACTED]";
      return n;
    }
  }
  /* PEM private keys: the whole block (to its END line, or the end) */
  if (!strncmp(s, "-----BEGIN ", 11)) {
    const char *eol = strstr(s + 11, "-----");
    if (eol && eol - s < 80) {
      const char *pk = strstr(s + 11, "PRIVATE KEY");
      if (pk && pk < eol) {
        const char *end = strstr(eol + 5, "-----END ");
        const char *fin = end ? strstr(end + 9, "-----") : NULL;
        n = fin ? (size_t)(fin + 5 - s) : strlen(s);
        *label = "[REDACTED:private-key]";
        return n;
      }
    }
  }
  return 0;
}

char *tg__redact_builtin(const char *s) {
  if (!s) return NULL;
  size_t len = strlen(s);
  char *out = NULL;
  size_t o = 0, cap = 0;
  const char *copied = s; /* s[..copied) is in out */
  for (const char *p = s; *p; p++) {
    const char *label = NULL;
    size_t n = match_at(p, s, &label);
    if (!n) continue;
    size_t keep = (size_t)(p - copied), ll = strlen(label);
    if (!out) {
      cap = len + 64;
      if (!(out = malloc(cap))) return tg__strdup("[REDACTED]");
    }
    if (o + keep + ll + 1 > cap) {
      cap = (o + keep + ll + 1) * 2;
      char *b = realloc(out, cap);
      if (!b) {
        free(out);
        return tg__strdup("[REDACTED]");
      }
      out = b;
    }
    memcpy(out + o, copied, keep);
    o += keep;
    memcpy(out + o, label, ll);
    o += ll;
    p += n - 1;
    copied = p + 1;
  }
  if (!out) return NULL;
  size_t rest = strlen(copied);
  if (o + rest + 1 > cap) {
    char *b = realloc(out, o + rest + 1);
    if (!b) {
      free(out);
      return tg__strdup("[REDACTED]");
    }
    out = b;
  }
  memcpy(out + o, copied, rest + 1);
  return out;
}

/* ---- the chain of redactors --------------------------------------------- */

/* next replaces *cur (owned or borrowed from s). */
static void take(char **owned, const char **cur, char *next) {
  if (!next) return;
  free(*owned);
  *owned = next;
  *cur = next;
}

char *tg__redact_str(tg_redactor *r, const char *s) {
  if (!s) return NULL;
  char *owned = NULL;
  const char *cur = s;
  take(&owned, &cur, tg__redact_builtin(cur));
  if (r && !r->busy && (r->c_fn || r->policy)) {
    r->busy = 1; /* what a redactor emits is not redacted again */
    if (r->c_fn) take(&owned, &cur, r->c_fn(r->c_ud, cur));
    if (r->policy && r->origin && *r->origin)
      take(&owned, &cur, r->policy(*r->origin, cur));
    r->busy = 0;
  }
  if (owned && !strcmp(owned, s)) {
    free(owned);
    return NULL;
  }
  return owned;
}

int tg__redact_tree(tg_redactor *r, cJSON *v) {
  int changed = 0;
  for (; v; v = v->next) {
    if (cJSON_IsString(v) && v->valuestring) {
      char *m = tg__redact_str(r, v->valuestring);
      if (m) {
        free(v->valuestring);
        v->valuestring = m;
        changed = 1;
      }
    }
    if (v->child) changed |= tg__redact_tree(r, v->child);
  }
  return changed;
}

/* Would tg__redact_str change s? With the built-in masks alone, a scan
 * that allocates nothing; a host's or the policies' redactor is asked. */
static int str_matches(tg_redactor *r, const char *s) {
  int others = r && !r->busy &&
               (r->c_fn || (r->policy && r->origin && *r->origin));
  if (!others) {
    const char *label = NULL;
    for (const char *p = s; *p; p++)
      if (match_at(p, s, &label)) return 1;
    return 0;
  }
  char *m = tg__redact_str(r, s);
  free(m);
  return m != NULL;
}

/* v and its children; not v's siblings (as tg__redact_copy). */
static int tree_matches(tg_redactor *r, const cJSON *v, int siblings) {
  for (; v; v = siblings ? v->next : NULL) {
    if (cJSON_IsString(v) && v->valuestring && str_matches(r, v->valuestring))
      return 1;
    if (v->child && tree_matches(r, v->child, 1)) return 1;
  }
  return 0;
}

int tg__redact_matches(tg_redactor *r, const cJSON *v) {
  return v ? tree_matches(r, v, 0) : 0;
}

/* The first string of v (top: v and its children, not its siblings)
 * that a mask changes: its masked text in *m, and in *at how many strings
 * came before it, depth first as tg__redact_tree walks; 0 when none. */
static int first_masked(tg_redactor *r, const cJSON *v, int top, long *at,
                        char **m) {
  for (; v; v = top ? NULL : v->next) {
    if (cJSON_IsString(v) && v->valuestring) {
      if ((*m = tg__redact_str(r, v->valuestring))) return 1;
      (*at)++;
    }
    if (v->child && first_masked(r, v->child, 0, at, m)) return 1;
  }
  return 0;
}

/* The copy's strings from the k-th on: the k-th becomes *m (taken), the
 * rest are masked as they come. */
static void mask_from(tg_redactor *r, cJSON *v, int top, long *i, long k,
                      char **m) {
  for (; v; v = top ? NULL : v->next) {
    if (cJSON_IsString(v) && v->valuestring) {
      long at = (*i)++;
      char *x = NULL;
      if (at == k) {
        x = *m;
        *m = NULL;
      } else if (at > k) {
        x = tg__redact_str(r, v->valuestring);
      }
      if (x) {
        free(v->valuestring);
        v->valuestring = x;
      }
    }
    if (v->child) mask_from(r, v->child, 0, i, k, m);
  }
}

/* No copy of the tree unless a mask changes something (nearly every
 * audit record: the copy and its freeing were about 4 % of a gateway
 * call's instructions). Each string is masked once, in tg__redact_tree's
 * order: the originals until one changes, then the copy, made there. */
cJSON *tg__redact_copy(tg_redactor *r, const cJSON *v) {
  long k = 0, i = 0;
  char *m = NULL;
  if (!v || !first_masked(r, v, 1, &k, &m)) return NULL;
  cJSON *c = cJSON_Duplicate(v, 1);
  if (c) mask_from(r, c, 1, &i, k, &m);
  free(m); /* not taken: no copy */
  return c;
}
