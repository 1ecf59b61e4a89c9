/*
 * fs_tools.h — the built-in file tools (read_file, list_dir, write_file,
 * apply_patch): their start functions and what they share. Registered by
 * tg__fs_tools_register (from builtin.c) when cfg.builtin_tools is on.
 */
#ifndef TG_FS_TOOLS_H
#define TG_FS_TOOLS_H

#include <cjson/cJSON.h>
#include "fs_confine.h"

int tg__fs_tools_register(tg_core *core, char err[TG_ERRMSG]);

/* list_dir's max_entries: the default and the most (schema and tool). */
#define TG_LIST_DEFAULT_ENTRIES 1000
#define TG_LIST_MAX_ENTRIES 100000

/* The start functions (fs_read.c, fs_write.c, fs_patch.c). */
void tg__read_file_start(tg_exec *ex, const cJSON *args, void *ud);
void tg__list_dir_start(tg_exec *ex, const cJSON *args, void *ud);
void tg__write_file_start(tg_exec *ex, const cJSON *args, void *ud);
void tg__apply_patch_start(tg_exec *ex, const cJSON *args, void *ud);

/* ---- shared by the tools ----------------------------------------------- */

tg_fs *tg__fs_of(tg_exec *ex);

/* Ends the attempt with e (phase EXECUTE, not retryable). */
void tg__fs_fail(tg_exec *ex, const tg_fs_err *e);

/* Queues a change for the call (delivered when it ends). st: the file
 * after the change (NULL for a deletion). */
void tg__fs_report(tg_exec *ex, const char *tool, int root, const char *rel,
                   const char *type, const char *old_rel,
                   const struct stat *st);

/* Integer argument k of tool's args, in [min, max] (jsonnum.h); dflt when
 * absent or null. -1 with e (BAD_ARGS) for anything else: the schema
 * refuses it first, this is for callers that skip the schema. */
int tg__fs_int_arg(const cJSON *args, const char *tool, const char *k,
                   int64_t min, int64_t max, int64_t dflt, int64_t *out,
                   tg_fs_err *e);
int tg__fs_bool_arg(const cJSON *args, const char *k, int dflt);
const char *tg__fs_str_arg(const cJSON *args, const char *k);

#endif
