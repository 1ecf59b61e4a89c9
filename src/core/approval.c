/*
 * approval.c — the one rule for what a remembered approval covers
 * (approval.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "approval.h"
#include "base/util.h"

static int same(const char *a, const char *b) {
  return a && b && strcmp(a, b) == 0;
}

static int args_match(const tg_approval *a, tg_approval_query *q) {
  if (!q->args_key && !q->nomem) {
    q->args_key = tg_json_print_sorted(q->args);
    q->nomem = !q->args_key;
  }
  return same(a->args_key, q->args_key); /* out of memory: not covered */
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

int tg__always_spec_check(const tg_always_spec *s, int64_t now_ms,
                          char err[TG_ERRMSG]) {
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
  if (s->until_ms < 0 || (s->until_ms && s->until_ms <= now_ms)) {
    tg__errf(err, TG_ERRMSG, "approve-always: 'until' is already past; "
             "use 0 for forever or a time to come");
    return -EINVAL;
  }
  return 0;
}
