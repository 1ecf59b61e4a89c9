/*
 * approval.c — the one rule for what a remembered approval covers
 * (approval.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "approval.h"
#include "base/util.h"
#include "base/json.h"
#include "base/glob.h"

static int same(const char *a, const char *b) {
  return a && b && strcmp(a, b) == 0;
}

void tg__args_digest(const uint8_t key[TG_SHA256_SIZE], const char *text,
                     char hex[2 * TG_SHA256_SIZE + 1]) {
  static const char digits[] = "0123456789abcdef";
  uint8_t mac[TG_SHA256_SIZE];
  tg_hmac_sha256(key, TG_SHA256_SIZE, text, strlen(text), mac);
  for (int i = 0; i < TG_SHA256_SIZE; i++) {
    hex[2 * i] = digits[mac[i] >> 4];
    hex[2 * i + 1] = digits[mac[i] & 15];
  }
  hex[2 * TG_SHA256_SIZE] = '\0';
}

/* A stored approval (digest) is matched by the digest of the call's
 * canonical args under the same key; one in memory by the text. */
static int args_match(const tg_approval *a, tg_approval_query *q) {
  if (!q->args_key && !q->nomem) {
    q->args_key = tg_json_print_sorted(q->args);
    q->nomem = !q->args_key;
  }
  if (!q->args_key) return 0; /* out of memory: not covered */
  if (!a->args_digest) return same(a->args_key, q->args_key);
  if (!q->digest_key || strlen(a->args_digest) != 2 * TG_SHA256_SIZE)
    return 0;
  if (!q->args_digest[0]) tg__args_digest(q->digest_key, q->args_key,
                                          q->args_digest);
  return tg_digest_equal((const uint8_t *)a->args_digest,
                         (const uint8_t *)q->args_digest,
                         2 * TG_SHA256_SIZE);
}

static int pattern_match(const tg_approval *a, const tg_approval_query *q) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(q->args, a->arg);
  return a->glob && cJSON_IsString(v) && tg_glob_match(a->glob, v->valuestring);
}

int tg__approval_covers(const tg_approval *a, tg_approval_query *q) {
  if (!same(a->tool, q->tool)) return 0;
  if (a->until_ms && q->now_ms >= a->until_ms) return 0;
  if (a->where == TG_WHERE_PROJECT ? !same(a->project, q->project)
                                   : !same(a->session, q->session))
    return 0;
  switch (a->scope) {
    case TG_SCOPE_TOOL: return 1;
    case TG_SCOPE_ARGS: return args_match(a, q);
    case TG_SCOPE_PATTERN: return a->arg && pattern_match(a, q);
  }
  return 0;
}

void tg__approval_query_done(tg_approval_query *q) {
  free(q->args_key);
  q->args_key = NULL;
}

static const char *const scope_names[] = {"tool", "args", "pattern"};
static const char *const where_names[] = {"session", "project"};

const char *tg__scope_name(tg_always_scope s) {
  return (unsigned)s < 3 ? scope_names[s] : "?";
}

const char *tg__where_name(tg_always_where w) {
  return (unsigned)w < 2 ? where_names[w] : "?";
}

int tg__scope_of(const char *name) {
  for (int i = 0; name && i < 3; i++)
    if (strcmp(name, scope_names[i]) == 0) return i;
  return -1;
}

int tg__where_of(const char *name) {
  for (int i = 0; name && i < 2; i++)
    if (strcmp(name, where_names[i]) == 0) return i;
  return -1;
}

/* Would the redactors mask text? Then it holds a credential. */
static int holds_secret(tg_redactor *r, const char *text) {
  char *masked = text ? tg__redact_str(r, text) : NULL;
  free(masked);
  return masked != NULL;
}

int tg__always_spec_check(const tg_always_spec *s, tg_redactor *r,
                          int64_t now_ms, char err[TG_ERRMSG]) {
  char why[TG_ERRMSG];
  if (!s || (unsigned)s->scope > TG_SCOPE_PATTERN ||
      (unsigned)s->where > TG_WHERE_PROJECT) {
    tg__errf(err, TG_ERRMSG, "approve-always: the scope is tool, args or "
             "pattern, and where is session or project");
    return -EINVAL;
  }
  if (s->scope == TG_SCOPE_PATTERN && (!s->arg || !*s->arg || !s->glob)) {
    tg__errf(err, TG_ERRMSG, "approve-always with a pattern needs the "
             "argument's name and a glob (like command = \"npm test*\")");
    return -EINVAL;
  }
  if (s->scope == TG_SCOPE_PATTERN &&
      tg_glob_check(s->glob, why, sizeof why) < 0) {
    tg__errf(err, TG_ERRMSG, "approve-always: the glob for '%s' is not "
             "valid: %s", s->arg, why);
    return -EINVAL;
  }
  if (s->scope == TG_SCOPE_PATTERN &&
      (holds_secret(r, s->arg) || holds_secret(r, s->glob))) {
    /* not echoed: the message may reach a log */
    tg__errf(err, TG_ERRMSG, "approve-always: the pattern (its argument "
             "name or glob) holds what the audit masks as a credential (a "
             "key, a token); a pattern is stored as text to be matched, so "
             "it is not remembered. Approve these exact args instead (stored "
             "as a keyed digest), or write the glob without the secret (like "
             "'Bearer *')");
    return -EINVAL;
  }
  if (s->until_ms < 0 || (s->until_ms && s->until_ms <= now_ms)) {
    tg__errf(err, TG_ERRMSG, "approve-always: 'until' is already past; "
             "use 0 for forever or a time to come");
    return -EINVAL;
  }
  return 0;
}
