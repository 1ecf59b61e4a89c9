/*
 * fs_confine.h — keeping the file tools inside the workspace roots
 * (cfg.workspace_roots; NULL: the current directory at runtime creation).
 *
 * A path is resolved the way the kernel would (symlinks followed, `..`
 * applied to the real parent) and must land inside a root, judged by whole
 * path components (/work/rootX is not inside /work/root). Files are then
 * opened relative to the root with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), so a symlink swapped in after the check fails the
 * open instead of leading out (see fs_confine.c for the fallback and the
 * limits that remain).
 */
#ifndef TG_FS_CONFINE_H
#define TG_FS_CONFINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "core/core.h"

typedef struct tg_fs {
  char **roots;          /* resolved (realpath) roots, NULL-terminated */
  int *root_fds;         /* O_PATH descriptors of the roots */
  size_t nroots;
  size_t max_bytes;      /* largest file read or written */
  int no_openat2;        /* the kernel refused openat2: path-based fallback */
  uint64_t tmp_counter;  /* for temp file names */
  char no_root[TG_ERRMSG]; /* why the default root (the cwd) is missing */
} tg_fs;

/* What went wrong, for tg_exec_finish_error: a code's name such as
 * "OUTSIDE_WORKSPACE" (set from the list: tg__fs_errf, tg__fs_code) and a
 * message saying what to do instead. */
typedef struct {
  const char *code;
  char msg[TG_ERRMSG];
} tg_fs_err;

/* A resolved path. */
typedef struct {
  char *abs;             /* absolute, no symlinks in the part that exists */
  char *rel;             /* relative to its root, "." for the root itself */
  int root;              /* index into fs->roots */
  int exists;            /* the final component exists */
  int missing;           /* how many trailing components do not exist */
  int dir_only;          /* spelled as a directory: "x/" or "x/." */
  struct stat st;        /* lstat of abs when it exists */
} tg_fs_path;

/* Resolves the roots (realpath) into core->fs. Runs when the built-in tools
 * are on or roots were given; a root that is missing or not a directory
 * fails runtime creation. Sets rt->cfg.workspace_roots to our copy. */
int tg__fs_init(tg_core *core, char err[TG_ERRMSG]);
void tg__fs_free(tg_core *core);

/* Resolves a path an agent gave (relative paths are relative to the first
 * root). Refuses: empty or over-long paths and names, `..` past a missing
 * directory, anything that resolves outside every root (`..`, absolute
 * paths, symlinks at any component, dangling symlinks), a path through a
 * file ("a.txt/b") and a path spelled as a directory ("a.txt/") that is
 * not one, as the kernel would (ENOTDIR). Returns 0, or -1 with e filled.
 * Free p with tg__fs_path_free. */
int tg__fs_resolve(const tg_fs *fs, const char *input, tg_fs_path *p,
                   tg_fs_err *e);

/* For the tools that create files: refuses a missing path spelled as a
 * directory ("new/" must not create the file "new"; the kernel says
 * EISDIR). 0 when p may name a file. */
int tg__fs_file_name(tg_fs_err *e, const char *tool, const tg_fs_path *p);
void tg__fs_path_free(tg_fs_path *p);

/* Opens rel (relative to root `root`) without following any symlink and
 * without leaving the root. flags as open(2). Returns an fd or -errno. */
int tg__fs_open(tg_fs *fs, int root, const char *rel, int flags, mode_t mode);

/* The directory part and the last component of rel ("a/b/c" -> "a/b",
 * "c"; "c" -> ".", "c"). Caller frees *dir. */
int tg__fs_split(const char *rel, char **dir, const char **base);

/* Fills e; tg__fs_code sets only the code (the message is written). */
void tg__fs_errf(tg_fs_err *e, tg_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tg__fs_code(tg_fs_err *e, tg_error_code code);

/* Refusals shared by the tools, with the message an agent can act on. */
int tg__fs_not_regular(tg_fs_err *e, const char *rel, mode_t mode);
int tg__fs_too_large(tg_fs_err *e, const char *rel, size_t size, size_t max);

#endif
