/*
 * redact.h — masking credentials in what leaves the runtime (redact.c):
 * events, audit rows, stored messages, exports. The core holds one
 * tg_redactor; the store and the CLI, without a runtime, use the built-in
 * masks alone (r NULL).
 */
#ifndef TG_REDACT_H
#define TG_REDACT_H

#include <cjson/cJSON.h>
#include "toolgate.h"

/* Every string about to leave the runtime — events, audit rows, stored
 * messages and memories, exports — first goes through the built-in masks
 * (AWS access key ids AKIA..., GitHub tokens ghp_..., bearer tokens,
 * -----BEGIN ... PRIVATE KEY----- blocks), then the host's redactor
 * (tg_runtime_set_redactor, runtime/front_api.h), then the policies'
 * (tg.redact). A redactor returns NULL to keep s, or a malloc'd
 * replacement the runtime frees. On the loop thread. */
typedef char *(*tg_redactor_fn)(void *ud, const char *s);

typedef struct tg_redactor {
  tg_redactor_fn c_fn;       /* the host's (tg_runtime_set_redactor) */
  void *c_ud;
  /* the policies' (tg.redact), called with *origin: the current
   * generation (the policy layer fills it in; the core never looks) */
  char *(*policy)(void *origin, const char *s);
  void **origin;
  int busy;                  /* a redactor runs: no recursion */
} tg_redactor;

/* s with the built-in masks applied (AWS access key ids, GitHub tokens,
 * bearer tokens, PEM private keys), malloc'd; NULL when none matched. */
char *tg__redact_builtin(const char *s);
/* s through every redactor (r may be NULL: the built-in ones); malloc'd,
 * or NULL when it is unchanged. */
char *tg__redact_str(tg_redactor *r, const char *s);
/* Every string value in the tree v (and its siblings) redacted in place;
 * 1 when something changed. */
int tg__redact_tree(tg_redactor *r, cJSON *v);
/* A redacted copy of v, or NULL when nothing in it needs masking (or v is
 * NULL). */
cJSON *tg__redact_copy(tg_redactor *r, const cJSON *v);
/* Would tg__redact_copy(r, v) mask anything? The same answer without the
 * copy: for whoever needs only to know (a session's taint). */
int tg__redact_matches(tg_redactor *r, const cJSON *v);

#endif
