/*
 * fs_patch.c — apply_patch: a unified diff over several files, all or
 * nothing.
 *
 *   1. parse the whole patch (patch.c);
 *   2. resolve every path (confined) and apply every hunk in memory, on
 *      one in-memory state per file, so a later section sees what an
 *      earlier one did; any hunk that does not apply ends the call here,
 *      before a single byte is written;
 *   3. commit: write each changed file atomically (fs_io.c), then delete;
 *      if one step fails, undo the steps already taken from the originals
 *      kept in memory (and remove directories we made), so a patch that
 *      fails half-way changes nothing. If even the undo fails, the error
 *      says ROLLBACK_FAILED and names the files left changed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fs_io.h"
#include "fs_tools.h"
#include "base/patch.h"

typedef struct {
  tg_fs_path p;
  int orig_exists;
  char *orig;
  size_t orig_len;
  struct stat orig_st;
  int cur_exists;             /* the in-memory state after the sections */
  char *cur;
  size_t cur_len;
  tg_fs_exec exec;            /* what the patch's mode asks (git's
                                 100755 / 100644), KEEP when it gives none */
  int done;                   /* commit: 1 written, 2 deleted */
  int renamed_from;           /* slot index this one was renamed from, -1 */
  struct {                    /* the last section that made it exist or not */
    size_t section, line;     /* from 1; 0: none yet */
    char what;                /* 'c' created, 'd' deleted, 't' renamed to
                                 it, 'f' renamed from it */
    long other;               /* the other slot of a rename */
  } last;
  tg_strlist made_dirs;
  struct stat st;             /* after the commit */
} slot;

typedef struct {
  tg_fs *fs;
  slot *v;
  size_t n;
  tg_fs_err e;
} plan;

static void plan_free(plan *pl) {
  for (size_t i = 0; i < pl->n; i++) {
    tg__fs_path_free(&pl->v[i].p);
    free(pl->v[i].orig);
    free(pl->v[i].cur);
    tg__strlist_free(&pl->v[i].made_dirs);
  }
  free(pl->v);
}

/* ---- in memory ---------------------------------------------------------- */

static int load_slot(plan *pl, slot *s) {
  if (!s->p.exists) return 0;
  if (tg__fs_read(pl->fs, &s->p, &s->orig, &s->orig_len, &s->orig_st, &pl->e) < 0)
    return -1;
  s->orig_exists = s->cur_exists = 1;
  s->cur = malloc(s->orig_len + 1);
  if (!s->cur) {
    tg__fs_errf(&pl->e, TG_E_IO_ERROR, "out of memory");
    return -1;
  }
  memcpy(s->cur, s->orig, s->orig_len + 1);
  s->cur_len = s->orig_len;
  return 0;
}

/* The slot of a path (one per resolved file, whatever spelling the patch
 * used), loading the file on first use. -1 with pl->e on refusal. */
static long slot_of(plan *pl, const char *path) {
  tg_fs_path p;
  if (tg__fs_resolve(pl->fs, path, &p, &pl->e) < 0) return -1;
  if (tg__fs_file_name(&pl->e, "apply_patch", &p) < 0) {
    tg__fs_path_free(&p);
    return -1;
  }
  for (size_t i = 0; i < pl->n; i++)
    if (strcmp(pl->v[i].p.abs, p.abs) == 0) {
      tg__fs_path_free(&p);
      return (long)i;
    }
  slot *v = realloc(pl->v, (pl->n + 1) * sizeof *v);
  if (!v) {
    tg__fs_path_free(&p);
    tg__fs_errf(&pl->e, TG_E_IO_ERROR, "out of memory");
    return -1;
  }
  pl->v = v;
  slot *s = &v[pl->n++];
  memset(s, 0, sizeof *s);
  s->p = p;
  s->renamed_from = -1;
  s->exec = TG_FS_EXEC_KEEP;
  if (p.exists && !S_ISREG(p.st.st_mode)) {
    tg__fs_not_regular(&pl->e, p.rel, p.st.st_mode);
    return -1;
  }
  return load_slot(pl, s) < 0 ? -1 : (long)(pl->n - 1);
}

static int apply_to(plan *pl, const tg_patch_file *f, const char *in,
                    size_t len, char **out, size_t *outlen) {
  if (tg__patch_apply(f, in, len, out, outlen, pl->e.msg, sizeof pl->e.msg) < 0) {
    tg__fs_code(&pl->e, TG_E_PATCH_CONFLICT);
    return -1;
  }
  if (*outlen > pl->fs->max_bytes) {
    free(*out);
    return tg__fs_too_large(&pl->e, tg__patch_file_name(f), *outlen,
                            pl->fs->max_bytes);
  }
  return 0;
}

static void set_cur(slot *s, char *buf, size_t len) {
  free(s->cur);
  s->cur = buf;
  s->cur_len = len;
  s->cur_exists = buf != NULL;
}

/* What section `at` does to a file's existence, for the history. */
typedef struct {
  size_t section;             /* from 1 */
  const tg_patch_file *f;
} at_section;

static void remember(slot *s, at_section at, char what, long other) {
  s->last.section = at.section;
  s->last.line = at.f->patch_line;
  s->last.what = what;
  s->last.other = other;
}

/* The file exists, or not, because of an earlier section of this very
 * patch: say that plainly instead of "already exists" / "does not exist",
 * which would send the agent to look at the disk. verb: what section `at`
 * does ("creates", "changes", "deletes", "renames"). 0 when no earlier
 * section touched s. */
static int clash(plan *pl, const slot *s, at_section at, const char *verb,
                 char twice) {
  if (!s->last.section) return 0;
  size_t a = s->last.section, la = s->last.line;
  const char *other = s->last.other >= 0 ? pl->v[s->last.other].p.rel : "";
  if (s->last.what == twice)
    tg__fs_errf(&pl->e, TG_E_PATCH_CONFLICT, "the patch %s '%s' twice (file "
                "sections %zu and %zu, at patch lines %zu and %zu); %s it "
                "once", verb, s->p.rel, a, at.section, la, at.f->patch_line,
                twice == 'c' ? "create" : "delete");
  else
    tg__fs_errf(&pl->e, TG_E_PATCH_CONFLICT, "file section %zu of the patch "
                "(patch line %zu) %s '%s', but section %zu (patch line %zu) "
                "already %s%s%s; the sections of a patch apply in order",
                at.section, at.f->patch_line, verb, s->p.rel, a, la,
                s->last.what == 'c' ? "created it"
                : s->last.what == 'd' ? "deleted it"
                : s->last.what == 't' ? "renamed '" : "renamed it to '",
                s->last.what == 't' || s->last.what == 'f' ? other : "",
                s->last.what == 't' ? "' to it"
                : s->last.what == 'f' ? "'" : "");
  return -1;
}

static int op_modify(plan *pl, const tg_patch_file *f, slot *s,
                     at_section at) {
  char *out;
  size_t n;
  if (!s->cur_exists) {
    if (clash(pl, s, at, "changes", 0) < 0) return -1;
    tg__fs_errf(&pl->e, TG_E_NOT_FOUND, "the patch changes '%s', which does not "
                "exist (a new file is written as --- /dev/null)", s->p.rel);
    return -1;
  }
  if (apply_to(pl, f, s->cur, s->cur_len, &out, &n) < 0) return -1;
  set_cur(s, out, n);
  return 0;
}

static int op_create(plan *pl, const tg_patch_file *f, slot *s,
                     at_section at) {
  char *out;
  size_t n;
  if (s->cur_exists) {
    if (clash(pl, s, at, "creates", 'c') < 0) return -1;
    tg__fs_errf(&pl->e, TG_E_ALREADY_EXISTS, "the patch creates '%s', which "
                "already exists; change it with a diff against its current "
                "content instead", s->p.rel);
    return -1;
  }
  if (apply_to(pl, f, "", 0, &out, &n) < 0) return -1;
  set_cur(s, out, n);
  remember(s, at, 'c', -1);
  return 0;
}

static int op_delete(plan *pl, const tg_patch_file *f, slot *s,
                     at_section at) {
  char *out = NULL;
  size_t n = s->cur_len;
  if (!s->cur_exists) {
    if (clash(pl, s, at, "deletes", 'd') < 0) return -1;
    tg__fs_errf(&pl->e, TG_E_NOT_FOUND, "the patch deletes '%s', which does not "
                "exist", s->p.rel);
    return -1;
  }
  if (f->nhunks && apply_to(pl, f, s->cur, s->cur_len, &out, &n) < 0) return -1;
  free(out);
  if (n != 0) {
    tg__fs_errf(&pl->e, TG_E_PATCH_CONFLICT, "the patch deletes '%s' but its "
                "removed lines are not the whole file; read it again and "
                "remove every line", s->p.rel);
    return -1;
  }
  set_cur(s, NULL, 0);
  remember(s, at, 'd', -1);
  return 0;
}

static int op_rename(plan *pl, const tg_patch_file *f, long from, long to,
                     at_section at) {
  slot *a = &pl->v[from], *b = &pl->v[to];
  char *out;
  size_t n;
  if (from == to) return op_modify(pl, f, a, at);
  if ((!a->cur_exists && clash(pl, a, at, "renames", 0) < 0) ||
      (b->cur_exists && clash(pl, b, at, "renames a file to", 0) < 0))
    return -1;
  if (!a->cur_exists || b->cur_exists) {
    tg__fs_errf(&pl->e, a->cur_exists ? TG_E_ALREADY_EXISTS : TG_E_NOT_FOUND,
                "the patch renames '%s' to '%s', but %s", a->p.rel, b->p.rel,
                a->cur_exists ? "the new name is taken" : "the file does not exist");
    return -1;
  }
  if (apply_to(pl, f, a->cur, a->cur_len, &out, &n) < 0) return -1;
  set_cur(b, out, n);
  set_cur(a, NULL, 0);
  b->renamed_from = (int)from;
  remember(a, at, 'f', to);
  remember(b, at, 't', from);
  return 0;
}

static int run_section(plan *pl, const tg_patch_file *f, size_t section) {
  at_section at = {section, f};
  long a = -1, b = -1;
  if (f->op == TG_PATCH_DELETE || f->op == TG_PATCH_RENAME)
    if ((a = slot_of(pl, f->old_path)) < 0) return -1;
  if (f->op != TG_PATCH_DELETE)
    if ((b = slot_of(pl, f->new_path)) < 0) return -1;
  int rc = -1;
  switch (f->op) {
    case TG_PATCH_MODIFY: rc = op_modify(pl, f, &pl->v[b], at); break;
    case TG_PATCH_CREATE: rc = op_create(pl, f, &pl->v[b], at); break;
    case TG_PATCH_DELETE: rc = op_delete(pl, f, &pl->v[a], at); break;
    case TG_PATCH_RENAME: rc = op_rename(pl, f, a, b, at); break;
  }
  if (rc == 0 && f->mode) /* git's 100755 / 100644: the executable bit */
    pl->v[b].exec = (f->mode & 0111) ? TG_FS_EXEC_SET : TG_FS_EXEC_CLEAR;
  return rc;
}

/* ---- commit and undo --------------------------------------------------- */

/* Would writing s with its exec change the original's mode? Executable
 * means the owner may run it, as for git. */
static int mode_changes(const slot *s) {
  if (s->exec == TG_FS_EXEC_KEEP || !s->orig_exists) return 0;
  return !!(s->orig_st.st_mode & S_IXUSR) != (s->exec == TG_FS_EXEC_SET);
}

static int changed(const slot *s) {
  if (s->orig_exists != s->cur_exists) return 1;
  return s->cur_exists && (s->cur_len != s->orig_len || mode_changes(s) ||
                           memcmp(s->cur, s->orig, s->cur_len) != 0);
}

/* Puts slot s back as it was. Returns 0 or -1 (then it stays changed). */
static int undo(plan *pl, slot *s) {
  tg_fs_err e;
  int rc = 0;
  if (s->orig_exists)
    rc = tg__fs_write_atomic(pl->fs, &s->p, s->orig, s->orig_len, &s->orig_st,
                             NULL, &e);
  else if (s->done == 1)
    rc = tg__fs_remove(pl->fs, &s->p, &e);
  tg__fs_remove_dirs(pl->fs, s->p.root, &s->made_dirs);
  if (rc == 0) s->done = 0;
  return rc;
}

static void rollback(plan *pl) {
  char left[TG_ERRMSG] = "";
  size_t k = 0;
  for (size_t i = pl->n; i > 0; i--) {
    slot *s = &pl->v[i - 1];
    if (s->done && undo(pl, s) < 0 && k < sizeof left)
      k += (size_t)snprintf(left + k, sizeof left - k, "%s'%s'", k ? ", " : "",
                            s->p.rel);
  }
  size_t m = strlen(pl->e.msg);
  if (k) {
    tg__fs_code(&pl->e, TG_E_ROLLBACK_FAILED);
    snprintf(pl->e.msg + m, sizeof pl->e.msg - m, "; undoing the files "
             "already written failed too, these are left changed: %s", left);
  } else {
    snprintf(pl->e.msg + m, sizeof pl->e.msg - m, "; the files already "
             "written were restored, nothing was changed");
  }
}

static int commit_one(plan *pl, slot *s, int deleting) {
  if (deleting) {
    if (tg__fs_remove(pl->fs, &s->p, &pl->e) < 0) return -1;
    s->done = 2;
    return 0;
  }
  if (s->p.missing > 1 && !s->p.exists &&
      tg__fs_make_parents(pl->fs, &s->p, &s->made_dirs, &pl->e) < 0)
    return -1;
  /* a renamed file keeps the mode it had under its old name */
  const slot *from = s->renamed_from >= 0 ? &pl->v[s->renamed_from] : NULL;
  const struct stat *like = from && from->orig_exists ? &from->orig_st : NULL;
  if (tg__fs_write_atomic_exec(pl->fs, &s->p, s->cur, s->cur_len, like,
                               s->exec, &s->st, &pl->e) < 0) {
    tg__fs_remove_dirs(pl->fs, s->p.root, &s->made_dirs);
    return -1;
  }
  s->done = 1;
  return 0;
}

/* Writes first, deletions last: a rename's new file exists before the old
 * one goes. */
static int commit(plan *pl) {
  for (int deleting = 0; deleting < 2; deleting++)
    for (size_t i = 0; i < pl->n; i++) {
      slot *s = &pl->v[i];
      if (!changed(s) || s->cur_exists == deleting) continue;
      if (commit_one(pl, s, deleting) < 0) {
        rollback(pl);
        return -1;
      }
    }
  return 0;
}

/* ---- the tool ------------------------------------------------------------- */

/* executable: what the patch's mode made of the file (the mode is
 * applied, never ignored), absent when the patch gave none. */
static void add_file(cJSON *files, const char *path, const char *type,
                     const char *old, tg_fs_exec exec) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "path", path);
  cJSON_AddStringToObject(o, "type", type);
  if (old) cJSON_AddStringToObject(o, "old_path", old);
  if (exec != TG_FS_EXEC_KEEP)
    cJSON_AddBoolToObject(o, "executable", exec == TG_FS_EXEC_SET);
  cJSON_AddItemToArray(files, o);
}

/* The result, and one change report per file, in first-touched order. */
static cJSON *report(tg_exec *ex, plan *pl) {
  cJSON *r = cJSON_CreateObject();
  cJSON *files = cJSON_AddArrayToObject(r, "files");
  for (size_t i = 0; i < pl->n; i++) {
    slot *s = &pl->v[i];
    int from = s->renamed_from;
    if (from >= 0 && s->cur_exists && !pl->v[from].cur_exists) {
      const char *old = pl->v[from].p.rel;
      add_file(files, s->p.rel, "renamed", old, s->exec);
      tg__fs_report(ex, "apply_patch", s->p.root, s->p.rel, "renamed", old, &s->st);
      continue;
    }
    int is_rename_source = 0;
    for (size_t k = 0; k < pl->n; k++)
      is_rename_source |= pl->v[k].renamed_from == (int)i && pl->v[k].cur_exists;
    if (!s->done || is_rename_source) continue;
    const char *type = s->done == 2 ? "deleted" : s->orig_exists ? "modified"
                                                                 : "created";
    add_file(files, s->p.rel, type, NULL, s->done == 2 ? TG_FS_EXEC_KEEP : s->exec);
    tg__fs_report(ex, "apply_patch", s->p.root, s->p.rel, type, NULL,
                  s->done == 2 ? NULL : &s->st);
  }
  cJSON_AddNumberToObject(r, "count", cJSON_GetArraySize(files));
  return r;
}

void tg__apply_patch_start(tg_exec *ex, const cJSON *args, void *ud) {
  (void)ud;
  plan pl;
  memset(&pl, 0, sizeof pl);
  pl.fs = tg__fs_of(ex);
  const char *text = tg__fs_str_arg(args, "patch");
  tg_patch patch;
  if (tg__patch_parse(text ? text : "", text ? strlen(text) : 0, &patch,
                      pl.e.msg, sizeof pl.e.msg) < 0) {
    tg__fs_code(&pl.e, TG_E_PATCH_PARSE);
    tg__patch_free(&patch);
    tg__fs_fail(ex, &pl.e);
    return;
  }
  int rc = 0;
  for (size_t i = 0; i < patch.nfiles && rc == 0; i++)
    rc = run_section(&pl, &patch.files[i], i + 1);
  if (rc == 0) rc = commit(&pl);
  tg__patch_free(&patch);
  if (rc < 0) tg__fs_fail(ex, &pl.e);
  else tg_exec_finish_ok(ex, report(ex, &pl));
  plan_free(&pl);
}
