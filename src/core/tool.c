/* tool.c — C tools: made from a tg_tool_def, found by name, freed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "base/schema.h"
#include "base/util.h"
#include "lua/luacompat.h"

static int copy_retry(tg_retry *r, const tg_tool_def *def, char *err) {
  r->attempts = def->retry_attempts > 0 ? def->retry_attempts : 1;
  r->initial_ms = def->retry_initial_ms ? def->retry_initial_ms : 200;
  r->max_ms = def->retry_max_ms ? def->retry_max_ms : 10000;
  r->multiplier = def->retry_multiplier > 0 ? def->retry_multiplier : 2.0;
  r->jitter = def->retry_jitter;
  if (r->jitter < 0 || r->jitter > 1) {
    tg__errf(err, TG_ERRMSG, "tool '%s': retry jitter must be within 0..1",
             def->name);
    return -EINVAL;
  }
  return 0;
}

tg_tool *tg__tool_new(const tg_tool_def *def, char err[TG_ERRMSG]) {
  tg_tool *t = calloc(1, sizeof *t);
  if (!t) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return NULL;
  }
  if (copy_retry(&t->retry, def, err) < 0) {
    free(t);
    return NULL;
  }
  t->name = tg__strdup(def->name);
  t->description = tg__strdup(def->description);
  t->group = tg__strdup(def->group);
  t->schema = def->schema ? cJSON_Duplicate(def->schema, 1) : NULL;
  t->where = tg__strdup("C");
  if (!t->name || (def->description && !t->description) ||
      (def->group && !t->group) ||
      (def->schema && !t->schema) || !t->where) {
    tg__tool_free(t);
    tg__errf(err, TG_ERRMSG, "out of memory");
    return NULL;
  }
  /* compiled once here, not walked again on every call */
  char why[TG_ERRMSG];
  if (t->schema && !(t->validator = tg__schema_compile(t->schema, 0, NULL,
                                                      why, sizeof why))) {
    tg__errf(err, TG_ERRMSG, "tool '%s': %s", def->name, why);
    tg__tool_free(t);
    return NULL;
  }
  t->read_only = def->read_only;
  t->timeout_ms = def->timeout_ms;
  t->max_result_bytes = def->max_result_bytes;
  t->kind = TG_TOOL_C;
  t->start = def->start;
  t->cancel = def->cancel;
  t->ud = def->ud;
  t->run_ref = t->retryable_ref = LUA_NOREF;
  return t;
}

void tg__tool_free(tg_tool *t) {
  if (!t) return;
  free(t->name);
  free(t->description);
  free(t->group);
  free(t->where);
  tg_schema_free(t->validator);
  cJSON_Delete(t->schema);
  free(t);
}

const tg_tool *tg__core_find_ctool(const tg_core *core, const char *name) {
  for (size_t i = 0; i < core->nctools; i++)
    if (strcmp(core->ctools[i]->name, name) == 0) return core->ctools[i];
  return NULL;
}

int tg__core_add_tool(tg_core *core, const tg_tool_def *def,
                      char err[TG_ERRMSG]) {
  if (tg__core_find_ctool(core, def->name)) {
    tg__errf(err, TG_ERRMSG, "tool '%s' is already registered", def->name);
    return -EEXIST;
  }
  tg_tool **grown = realloc(core->ctools, (core->nctools + 1) * sizeof *grown);
  if (!grown) {
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  core->ctools = grown;
  tg_tool *t = tg__tool_new(def, err);
  if (!t) return -EINVAL;
  core->ctools[core->nctools++] = t;
  return 0;
}

cJSON *tg__tool_describe(const tg_tool *t) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", t->name);
  if (t->description) cJSON_AddStringToObject(o, "description", t->description);
  cJSON_AddBoolToObject(o, "read_only", t->read_only);
  if (t->timeout_ms) cJSON_AddNumberToObject(o, "timeout_ms", (double)t->timeout_ms);
  if (t->retry.attempts > 1)
    cJSON_AddNumberToObject(o, "retry_attempts", t->retry.attempts);
  if (t->max_result_bytes)
    cJSON_AddNumberToObject(o, "max_result_bytes", (double)t->max_result_bytes);
  if (t->schema) cJSON_AddItemToObject(o, "schema", cJSON_Duplicate(t->schema, 1));
  if (t->group) cJSON_AddStringToObject(o, "group", t->group);
  cJSON_AddStringToObject(o, "where", t->where);
  return o;
}
