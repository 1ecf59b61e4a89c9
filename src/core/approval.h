/*
 * approval.h — what a remembered approve-always covers (SPEC §1): these
 * exact args, a glob on one named argument, or the whole tool; in one
 * session or in one project; until a time or forever. The chain keeps
 * approvals in memory (storage off, or not yet stored), the store keeps
 * them in the database; both ask tg__approval_covers, so the rule is
 * written once.
 */
#ifndef TG_APPROVAL_H
#define TG_APPROVAL_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

/* One approval; the strings are borrowed (their owner keeps them). */
typedef struct {
  int64_t id;                /* the database row; 0: in memory only */
  tg_always_scope scope;
  const char *tool;
  const char *args_key;      /* ARGS: canonical JSON (tg_json_print_sorted) */
  const char *arg, *glob;    /* PATTERN: args[arg] is a string glob matches */
  tg_always_where where;
  const char *session;       /* where SESSION */
  const char *project;       /* where PROJECT */
  int64_t until_ms;          /* 0: forever; else it covers while now < it */
} tg_approval;

/* The call an approval may cover. args_key starts NULL and is made on
 * first need (free it with tg__approval_query_done). */
typedef struct {
  const char *tool, *session, *project;
  const cJSON *args;
  int64_t now_ms;
  char *args_key;
  int nomem;                 /* the key could not be made */
} tg_approval_query;

int tg__approval_covers(const tg_approval *a, tg_approval_query *q);
void tg__approval_query_done(tg_approval_query *q);

/* "tool", "args", "pattern"; "session", "project" — as stored and shown. */
const char *tg__scope_name(tg_always_scope s);
const char *tg__where_name(tg_always_where w);
/* The reverse; -1 for a name that is none. */
int tg__scope_of(const char *name);
int tg__where_of(const char *name);

/* Checks what a spec asks to remember (scope, arg and glob, where, until)
 * before anything is remembered. -EINVAL with what is wrong in err. */
int tg__always_spec_check(const tg_always_spec *s, int64_t now_ms,
                          char err[TG_ERRMSG]);

#endif
