/*
 * test_fs.h — helpers for the file tool specs (test_fs.c,
 * test_fs_changes.c): real files in mkdtemp() directories, a runtime
 * confined to one of them, and synchronous tool calls (the file tools
 * finish inside their start function).
 */
#ifndef TG_TEST_FS_H
#define TG_TEST_FS_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "tg_test.h"

/* ---- files ------------------------------------------------------------ */

static inline char *fs_tmpdir(void) {
  char tmpl[] = "/tmp/tg-fs-XXXXXX";
  char *d = mkdtemp(tmpl);
  if (!d) TG_FAIL("mkdtemp: %s", strerror(errno));
  char *p = strdup(d);
  ASSERT(p);
  return p;
}

static inline char *fs_join(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char *p = malloc(n);
  ASSERT(p);
  snprintf(p, n, "%s/%s", a, b);
  return p;
}

static inline void fs_put(const char *dir, const char *name, const char *text) {
  char *p = fs_join(dir, name);
  FILE *f = fopen(p, "wb");
  if (!f) TG_FAIL("cannot write %s: %s", p, strerror(errno));
  fputs(text, f);
  fclose(f);
  free(p);
}

/* The content of dir/name (malloc'd), or NULL when it does not exist. */
static inline char *fs_get(const char *dir, const char *name) {
  char *p = fs_join(dir, name);
  FILE *f = fopen(p, "rb");
  free(p);
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  ASSERT(s);
  size_t got = fread(s, 1, (size_t)n, f);
  s[got] = '\0';
  fclose(f);
  return s;
}

static inline int fs_exists(const char *dir, const char *name) {
  char *p = fs_join(dir, name);
  struct stat st;
  int ok = lstat(p, &st) == 0;
  free(p);
  return ok;
}

static inline void fs_mkdir(const char *dir, const char *name) {
  char *p = fs_join(dir, name);
  if (mkdir(p, 0755) < 0) TG_FAIL("mkdir %s: %s", p, strerror(errno));
  free(p);
}

static inline void fs_symlink(const char *target, const char *dir,
                              const char *name) {
  char *p = fs_join(dir, name);
  if (symlink(target, p) < 0) TG_FAIL("symlink %s: %s", p, strerror(errno));
  free(p);
}

/* Sets or clears the immutable attribute; 0, or -1 when the filesystem or
 * our privileges do not allow it. */
static inline int fs_immutable(const char *dir, const char *name, int on) {
  char *p = fs_join(dir, name);
  int fd = open(p, O_RDONLY | O_NONBLOCK);
  free(p);
  if (fd < 0) return -1;
  int flags = 0, rc = ioctl(fd, FS_IOC_GETFLAGS, &flags);
  if (rc == 0) {
    flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
    rc = ioctl(fd, FS_IOC_SETFLAGS, &flags);
  }
  close(fd);
  return rc;
}

static inline int rm_one_(const char *p, const struct stat *st, int type,
                          struct FTW *ftw) {
  (void)st;
  (void)ftw;
  return type == FTW_DP ? rmdir(p) : unlink(p);
}

static inline void fs_rmrf(char *dir) {
  nftw(dir, rm_one_, 16, FTW_DEPTH | FTW_PHYS);
  free(dir);
}

/* Names in dir that look like our temp files (".NAME.tg-XXXXXX"). */
static inline int fs_count_temps(const char *dir, int remove) {
  DIR *d = opendir(dir);
  ASSERT(d);
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] != '.' || !strstr(e->d_name, ".tg-")) continue;
    n++;
    if (remove) {
      char *p = fs_join(dir, e->d_name);
      unlink(p);
      free(p);
    }
  }
  closedir(d);
  return n;
}

/* ---- runtimes and calls ------------------------------------------------ */

static inline tg_runtime *fs_runtime(const char *root, size_t max_bytes,
                                     const char *policies) {
  const char *roots[] = {root, NULL};
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.default_verdict = TG_VERDICT_ALLOW;
  cfg.workspace_roots = roots;
  cfg.file_max_bytes = max_bytes;
  cfg.policies_dir = policies;
  char err[TG_ERRMSG] = "";
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) TG_FAIL("tg_runtime_new: %s", err);
  return rt;
}

typedef struct {
  int n;
  tg_status status;
  char code[64];
  char message[2048];
  cJSON *result;
} fs_out;

static inline void fs_done_(tg_runtime *rt, const tg_outcome *o, void *ud) {
  (void)rt;
  fs_out *r = ud;
  r->n++;
  r->status = o->status;
  snprintf(r->code, sizeof r->code, "%s", o->error.code ? o->error.code : "");
  snprintf(r->message, sizeof r->message, "%s",
           o->error.message ? o->error.message : "");
  cJSON_Delete(r->result);
  r->result = o->result ? cJSON_Duplicate(o->result, 1) : NULL;
}

/* Calls tool with args (JSON text, or a cJSON when args_json is NULL)
 * and returns its outcome; the call must end before this returns. */
static inline fs_out fs_call_j(tg_runtime *rt, const char *tool,
                               const char *args_json, const cJSON *args) {
  fs_out o;
  memset(&o, 0, sizeof o);
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.tool = tool;
  req.args_json = args_json;
  req.args = args;
  char err[TG_ERRMSG] = "";
  if (tg_call_start(rt, &req, fs_done_, &o, err) != 0)
    TG_FAIL("tg_call_start(%s): %s", tool, err);
  while (o.n == 0)
    if (uv_run(tg_runtime_loop(rt), UV_RUN_ONCE) == 0 && o.n == 0)
      TG_FAIL("%s did not finish", tool);
  return o;
}

static inline fs_out fs_call(tg_runtime *rt, const char *tool,
                             const char *args_json) {
  return fs_call_j(rt, tool, args_json, NULL);
}

/* write_file / apply_patch with a string argument built here (no JSON
 * escaping by hand). */
static inline fs_out fs_write(tg_runtime *rt, const char *path,
                              const char *content, int create_dirs) {
  cJSON *a = cJSON_CreateObject();
  cJSON_AddStringToObject(a, "path", path);
  cJSON_AddStringToObject(a, "content", content);
  if (create_dirs) cJSON_AddTrueToObject(a, "create_dirs");
  fs_out o = fs_call_j(rt, "write_file", NULL, a);
  cJSON_Delete(a);
  return o;
}

static inline fs_out fs_patch(tg_runtime *rt, const char *patch) {
  cJSON *a = cJSON_CreateObject();
  cJSON_AddStringToObject(a, "patch", patch);
  fs_out o = fs_call_j(rt, "apply_patch", NULL, a);
  cJSON_Delete(a);
  return o;
}

static inline void fs_out_free(fs_out *o) {
  cJSON_Delete(o->result);
  o->result = NULL;
}

static inline const char *fs_str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static inline double fs_num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static inline int fs_bool(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsTrue(v) ? 1 : cJSON_IsFalse(v) ? 0 : -1;
}

/* Asserts the call failed in EXECUTE with this code. */
#define ASSERT_REFUSED(o, want)                                            \
  do {                                                                     \
    if ((o).status != TG_STATUS_ERROR || strcmp((o).code, (want)) != 0)    \
      TG_FAIL("expected %s, got status %d code '%s': %s", (want),          \
              (int)(o).status, (o).code, (o).message);                     \
  } while (0)

#define ASSERT_OK(o)                                                       \
  do {                                                                     \
    if ((o).status != TG_STATUS_OK)                                        \
      TG_FAIL("expected ok, got %s: %s", (o).code, (o).message);           \
  } while (0)

#endif
