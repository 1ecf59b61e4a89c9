/*
 * fs_write.c — write_file: replaces or creates one file atomically
 * (fs_io.c: temp file in the same directory, fsync, rename over), keeping
 * an existing file's mode, and reports the change for the call.
 */
#include <string.h>
#include "fs_io.h"
#include "fs_tools.h"

void tg__write_file_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)ud;
  tg_fs *fs = tg__fs_of(ex);
  tg_fs_err e = {0};
  tg_fs_path p;
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(args, "content");
  if (tg__fs_resolve(fs, tg__fs_str_arg(args, "path"), &p, &e) < 0) {
    tg__fs_fail(ex, &e);
    return;
  }
  /* cJSON strings stop at a NUL: JSON text cannot carry one into a file */
  const char *data = cJSON_IsString(content) ? content->valuestring : "";
  size_t len = strlen(data);
  int create_dirs = tg__fs_bool_arg(args, "create_dirs", 0);
  struct stat st;
  if (tg__fs_file_name(&e, "write_file", &p) < 0)
    ;
  else if (p.exists && !S_ISREG(p.st.st_mode))
    tg__fs_not_regular(&e, p.rel, p.st.st_mode);
  else if (len > fs->max_bytes)
    tg__fs_too_large(&e, p.rel, len, fs->max_bytes);
  else if (p.missing > 1 && !create_dirs)
    tg__fs_errf(&e, TG_E_NOT_FOUND, "cannot write '%s': its directory does not "
                "exist; pass create_dirs: true to make it", p.rel);
  else if (p.missing > 1 && tg__fs_make_parents(fs, &p, NULL, &e) < 0)
    ;
  else if (tg__fs_write_atomic(fs, &p, data, len, NULL, &st, &e) == 0)
    e.code = NULL;
  if (e.code) {
    tg__fs_fail(ex, &e);
    tg__fs_path_free(&p);
    return;
  }
  const char *type = p.exists ? "modified" : "created";
  tg__fs_report(ex, "write_file", p.root, p.rel, type, NULL, &st);
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "path", p.rel);
  cJSON_AddNumberToObject(r, "bytes", (double)len);
  cJSON_AddBoolToObject(r, "created", !p.exists);
  tg__fs_path_free(&p);
  tg_exec_finish_ok(ex, r);
}
