/*
 * approval.h — what a remembered approve-always covers: these
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
#include "base/sha256.h"
#include "core/redact.h"

/* One approval; the strings are borrowed (their owner keeps them). */
typedef struct {
  int64_t id;                /* the database row; 0: in memory only */
  tg_always_scope scope;
  const char *tool;
  const char *args_key;      /* ARGS, in memory: canonical JSON
                                (tg_json_print_sorted) */
  /* ARGS, as the database keeps it: never the args themselves (they may
   * hold a credential), but the keyed digest of args_key (hex
   * HMAC-SHA256 under the database's key, store/approval_seal.c), and
   * args_key with the audit's masks for people to read (approvals list) */
  const char *args_digest;
  const char *args_preview;
  const char *arg, *glob;    /* PATTERN: args[arg] is a string glob matches */
  tg_always_where where;
  const char *session;       /* where SESSION */
  const char *project;       /* where PROJECT */
  int64_t until_ms;          /* 0: forever; else it covers while now < it */
} tg_approval;

/* The call an approval may cover. args_key starts NULL and is made on
 * first need (free it with tg__approval_query_done); so is args_digest,
 * under digest_key (set by whoever holds digested approvals: the store). */
typedef struct {
  const char *tool, *session, *project;
  const cJSON *args;
  int64_t now_ms;
  char *args_key;
  int nomem;                 /* the key could not be made */
  const uint8_t *digest_key; /* TG_SHA256_SIZE bytes, or NULL */
  char args_digest[2 * TG_SHA256_SIZE + 1]; /* "" until made */
} tg_approval_query;

int tg__approval_covers(const tg_approval *a, tg_approval_query *q);
/* The keyed digest of canonical args text, as stored: lowercase hex of
 * HMAC-SHA256(key, text), into hex. */
void tg__args_digest(const uint8_t key[TG_SHA256_SIZE], const char *text,
                     char hex[2 * TG_SHA256_SIZE + 1]);
void tg__approval_query_done(tg_approval_query *q);

/* "tool", "args", "pattern"; "session", "project" — as stored and shown. */
const char *tg__scope_name(tg_always_scope s);
const char *tg__where_name(tg_always_where w);
/* The reverse; -1 for a name that is none. */
int tg__scope_of(const char *name);
int tg__where_of(const char *name);

/* Checks what a spec asks to remember (scope, arg and glob, where, until)
 * before anything is remembered. A pattern is kept as text (it is matched
 * as a glob, so it cannot be digested): one the redactors r (NULL: the
 * built-in masks) would mask holds a credential and is refused. -EINVAL
 * with what is wrong in err. */
int tg__always_spec_check(const tg_always_spec *s, tg_redactor *r,
                          int64_t now_ms, char err[TG_ERRMSG]);

#endif
