/*
 * fs_tools.c — registering the built-in file tools with their JSON
 * Schemas, and the helpers they share (errors, change reports, args).
 *
 * Every tool resolves its paths through fs_confine.c and does its I/O
 * through fs_io.c, synchronously on the loop thread (bounded; see
 * fs_io.h), and finishes inside its start function.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fs_tools.h"
#include "exec/exec.h"
#include "core/changes.h"
#include "base/jsonnum.h"
#include "base/util.h"

tg_fs *tg__fs_of(tg_exec *ex) { return ex->core->fs; }

void tg__fs_fail(tg_exec *ex, const tg_fs_err *e) {
  if (e->code) tg_exec_finish_error(ex, NULL, e->code, e->msg, 0);
  else tg__exec_fail(ex, NULL, TG_E_IO_ERROR, e->msg, 0);
}

void tg__fs_report(tg_exec *ex, const char *tool, int root, const char *rel,
                   const char *type, const char *old_rel,
                   const struct stat *st) {
  tg_change_rec ch = {ex->core->fs->roots[root], rel, type, old_rel, 0, 0};
  if (st) {
    ch.size = (int64_t)st->st_size;
    ch.mtime = (double)st->st_mtim.tv_sec + (double)st->st_mtim.tv_nsec / 1e9;
  }
  /* out of memory here loses the report, not the change itself */
  (void)tg__changes_record(ex->core, tg_exec_call_id(ex), tool, &ch);
}

int tg__fs_int_arg(const cJSON *args, const char *tool, const char *k,
                   int64_t min, int64_t max, int64_t dflt, int64_t *out,
                   tg_fs_err *e) {
  if (tg__json_int_arg(args, tool, k, min, max, dflt, out, e->msg,
                       sizeof e->msg) == 0)
    return 0;
  tg__fs_code(e, TG_E_BAD_ARGS);
  return -1;
}

int tg__fs_bool_arg(const cJSON *args, const char *k, int dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, k);
  return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

const char *tg__fs_str_arg(const cJSON *args, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---- registration ---------------------------------------------------- */

#define PATH_PROP                                                          \
  "\"path\":{\"type\":\"string\",\"minLength\":1,\"description\":\"relative " \
  "to the workspace root, or absolute inside it\"}"

static const char read_file_schema[] =
    "{\"type\":\"object\",\"properties\":{" PATH_PROP ","
    "\"offset\":{\"type\":\"integer\",\"minimum\":1,"
    "\"maximum\":" TG_NUM_TEXT(TG_JSON_INT_MAX) ",\"description\":\"first "
    "line to return, counting from 1\"},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,"
    "\"maximum\":" TG_NUM_TEXT(TG_JSON_INT_MAX) ",\"description\":\"most "
    "lines to return\"}},"
    "\"required\":[\"path\"],\"additionalProperties\":false}";

static const char list_dir_schema[] =
    "{\"type\":\"object\",\"properties\":{" PATH_PROP ","
    "\"recursive\":{\"type\":\"boolean\"},"
    "\"max_entries\":{\"type\":\"integer\",\"minimum\":1,"
    "\"maximum\":" TG_NUM_TEXT(TG_LIST_MAX_ENTRIES) "}},"
    "\"additionalProperties\":false}";

static const char write_file_schema[] =
    "{\"type\":\"object\",\"properties\":{" PATH_PROP ","
    "\"content\":{\"type\":\"string\"},"
    "\"create_dirs\":{\"type\":\"boolean\",\"description\":\"make missing "
    "parent directories\"}},"
    "\"required\":[\"path\",\"content\"],\"additionalProperties\":false}";

static const char apply_patch_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"patch\":{\"type\":\"string\",\"minLength\":1,\"description\":\"a "
    "unified diff; several files, --- /dev/null for new files, +++ "
    "/dev/null for deleted ones, git rename from/to, git old mode/new "
    "mode (the executable bit)\"}},"
    "\"required\":[\"patch\"],\"additionalProperties\":false}";

typedef struct {
  const char *name, *description, *schema;
  int read_only;
  tg_tool_start_fn start;
} fs_tool;

static const fs_tool tools[] = {
    {"read_file",
     "Read a text file of the workspace, whole or a window of lines "
     "(offset: first line, from 1; limit: number of lines). Binary files "
     "come back base64-encoded.",
     read_file_schema, 1, tg__read_file_start},
    {"list_dir",
     "List a directory of the workspace (default: its root), optionally "
     "recursively; entries are sorted, directories followed by their "
     "contents. Symlinks are listed, not followed.",
     list_dir_schema, 1, tg__list_dir_start},
    {"write_file",
     "Write a whole file of the workspace, atomically (the old content or "
     "the new, never a mix). create_dirs makes missing parent directories.",
     write_file_schema, 0, tg__write_file_start},
    {"apply_patch",
     "Apply a unified diff to files of the workspace, all or nothing: if "
     "any hunk does not apply exactly, no file is changed.",
     apply_patch_schema, 0, tg__apply_patch_start},
};

int tg__fs_tools_register(tg_core *core, char err[TG_ERRMSG]) {
  if (!core->fs) {
    tg__errf(err, TG_ERRMSG, "the file tools need the workspace roots "
             "(tg__fs_init did not run)");
    return -EINVAL;
  }
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
    tg_tool_def d;
    memset(&d, 0, sizeof d);
    d.name = tools[i].name;
    d.description = tools[i].description;
    d.read_only = tools[i].read_only;
    d.start = tools[i].start;
    cJSON *schema = cJSON_Parse(tools[i].schema);
    d.schema = schema;
    int rc = schema ? tg__core_add_tool(core, &d, err) : -ENOMEM;
    cJSON_Delete(schema);
    if (rc < 0) {
      if (!schema) tg__errf(err, TG_ERRMSG, "out of memory");
      return rc;
    }
  }
  return 0;
}
