/*
 * fs_io.h — the file operations the tools share, all confined (every open
 * goes through tg__fs_open) and all bounded by fs->max_bytes.
 *
 * They are blocking system calls run on the loop thread. That is a choice:
 * each one is bounded (one file of at most file_max_bytes, 16 MiB by
 * default, a directory listing of at most max_entries), local disk I/O of
 * that size takes milliseconds, and doing it inline keeps the all-or-
 * nothing logic of apply_patch simple. A slow network filesystem would
 * stall the loop for as long as a call takes; move these to uv_fs_* /
 * uv_queue_work if that ever matters.
 */
#ifndef TG_FS_IO_H
#define TG_FS_IO_H

#include "fs_confine.h"

/* A growable list of strings (owned). */
typedef struct {
  char **v;
  size_t n, cap;
} tg_strlist;

int tg__strlist_push(tg_strlist *l, const char *s);
void tg__strlist_free(tg_strlist *l);

/* Reads the regular file p (resolved, existing) whole. Refuses anything
 * but a regular file (without opening FIFOs or devices) and files over
 * fs->max_bytes. *data is NUL-terminated; caller frees. st: its fstat. */
int tg__fs_read(tg_fs *fs, const tg_fs_path *p, char **data, size_t *len,
                struct stat *st, tg_fs_err *e);

/* Makes the missing parent directories of p, one component at a time
 * from the root (mkdirat + openat(O_NOFOLLOW)). Each directory made is
 * added to created (rel paths, parents first) when created is not NULL. */
int tg__fs_make_parents(tg_fs *fs, const tg_fs_path *p, tg_strlist *created,
                        tg_fs_err *e);

/* Removes the (empty) directories in created, last first. Best effort. */
void tg__fs_remove_dirs(tg_fs *fs, int root, const tg_strlist *created);

/* Replaces or creates the file p with data, atomically: a temp file
 * `.NAME.tg-XXXXXX` in the same directory, fsync, rename over, fsync the
 * directory. A crash leaves either the old file or the new one, never a
 * mix (and, at worst, the temp file). The file gets like's mode and, when
 * we may set it, owner when like is not NULL (restoring a file as it
 * was); else an existing file keeps its own, and a new one gets
 * 0666 & ~umask. out (may be NULL): the
 * new file's stat. */
int tg__fs_write_atomic(tg_fs *fs, const tg_fs_path *p, const char *data,
                        size_t len, const struct stat *like, struct stat *out,
                        tg_fs_err *e);

/* The executable bits of a file apply_patch writes (git's modes 100755
 * and 100644): KEEP leaves the mode as above; SET adds x wherever r is
 * (0644 -> 0755, 0600 -> 0700); CLEAR removes every x (and setuid/setgid,
 * which mean nothing on a file that does not run). */
typedef enum {
  TG_FS_EXEC_KEEP = -1,
  TG_FS_EXEC_CLEAR = 0,
  TG_FS_EXEC_SET = 1
} tg_fs_exec;

/* tg__fs_write_atomic, then the executable bits as exec says, set on the
 * temp file before it is renamed over: content and mode change at once. */
int tg__fs_write_atomic_exec(tg_fs *fs, const tg_fs_path *p, const char *data,
                             size_t len, const struct stat *like,
                             tg_fs_exec exec, struct stat *out, tg_fs_err *e);

/* Deletes the regular file p. */
int tg__fs_remove(tg_fs *fs, const tg_fs_path *p, tg_fs_err *e);

/* The temp-file suffix, for those who look for leftovers after a crash. */
#define TG_FS_TMP_MARK ".tg-"

#endif
