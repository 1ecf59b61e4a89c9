/*
 * memory_api.c — memories as toolgate.h offers them: what a host or a
 * policy asks to keep, for one session or one project, found again by
 * relevance. Checked and masked here, for every backend; the backend's
 * table (store.h) stores and ranks. Project scope is the project's real
 * path (base/project.h), so two folders are two projects.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store.h"
#include "base/json.h"
#include "base/project.h"
#include "base/util.h"

/* "session" or "project" (NULL: session); NULL for anything else. */
static const char *scope_of(const char *s) {
  if (!s || !strcmp(s, "session")) return "session";
  return !strcmp(s, "project") ? "project" : NULL;
}

int64_t tg_memory_record(tg_store *st, const tg_memory *m,
                         char err[TG_ERRMSG]) {
  const char *scope = m ? scope_of(m->scope) : NULL;
  if (!m || !m->kind || !*m->kind || strlen(m->kind) > 256 || !m->content ||
      !*m->content) {
    tg__errf(err, TG_ERRMSG, "a memory needs its kind (1 to 256 bytes) and "
             "its content");
    return -EINVAL;
  }
  if (strlen(m->content) > TG_MESSAGE_MAX) {
    tg__errf(err, TG_ERRMSG, "a memory's content is at most %u bytes",
             TG_MESSAGE_MAX);
    return -EINVAL;
  }
  if (!scope) {
    tg__errf(err, TG_ERRMSG, "a memory's scope is \"session\" or "
             "\"project\", not '%s'", m->scope);
    return -EINVAL;
  }
  int project_scope = !strcmp(scope, "project");
  if (!project_scope && (!m->session || !*m->session)) {
    tg__errf(err, TG_ERRMSG, "a memory of a session needs the session");
    return -EINVAL;
  }
  char *project = project_scope ? tg__project_dir(m->project, err) : NULL;
  if (project_scope && !project) return -EINVAL;
  char *meta = m->metadata ? tg_json_print(m->metadata, 0) : NULL;
  int64_t rc;
  if (m->metadata && !meta) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    rc = -ENOMEM;
  } else if (meta && strlen(meta) > TG_MESSAGE_MAX) {
    tg__errf(err, TG_ERRMSG, "a memory's metadata is at most %u bytes of "
             "JSON", TG_MESSAGE_MAX);
    rc = -EINVAL;
  } else {
    tg_redactor *r = tg__store_redactor(st);
    char *content = tg__redact_str(r, m->content);
    char *meta_red = tg__redact_str(r, meta);
    tg_memory masked = *m;
    if (content) masked.content = content;
    masked.scope = scope;
    rc = st->be->memory_add(st, &masked, project, meta_red ? meta_red : meta,
                            err);
    free(content);
    free(meta_red);
  }
  free(meta);
  free(project);
  return rc;
}

cJSON *tg_memory_recall(tg_store *st, const tg_recall_filter *f,
                        char err[TG_ERRMSG]) {
  err[0] = '\0';
  if (!f || !f->query) {
    tg__errf(err, TG_ERRMSG, "recall what? (no query)");
    return NULL;
  }
  int want_s = !f->scope || !strcmp(f->scope, "session");
  int want_p = !f->scope || !strcmp(f->scope, "project");
  if (!want_s && !want_p) {
    tg__errf(err, TG_ERRMSG, "a recall's scope is \"session\" or "
             "\"project\" (or none: both), not '%s'", f->scope);
    return NULL;
  }
  if (strlen(f->query) > 65536) {
    tg__errf(err, TG_ERRMSG, "a recall query is at most 65536 bytes");
    return NULL;
  }
  char *project = want_p ? tg__project_dir(f->project, NULL) : NULL;
  cJSON *out = st->be->memory_recall(st, f, project, err);
  free(project);
  return out;
}
