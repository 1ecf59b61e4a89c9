/*
 * fs_confine.c — workspace roots, path resolution and confined opens
 * (fs_confine.h).
 *
 * Resolution: realpath() on the longest prefix of the path that exists
 * (the kernel's own view: symlinks followed, `..` applied to the real
 * parent), then the missing rest appended as plain names. The result must
 * be inside a root by whole components. A dangling symlink is refused
 * rather than written through. What the kernel would refuse is refused
 * for the same reason, said plainly: a path through a file ("a.txt/b")
 * or spelled as a directory ("a.txt/") when it is a file (ENOTDIR), a
 * name over NAME_MAX. A symlink realpath cannot follow that still leads
 * somewhere (/dev/stdin -> /proc/self/fd/0 -> a pipe) is not dangling: it
 * is refused as what it leads to. A path that fails to resolve outside
 * the workspace is refused as outside, describing nothing there.
 *
 * Opening: relative to the root's descriptor with openat2(RESOLVE_BENEATH
 * | RESOLVE_NO_SYMLINKS). The resolved path has no symlinks, so one that
 * appears between the check and the open (a race with another process)
 * makes the open fail (ELOOP/EXDEV) instead of following it out.
 *
 * What remains (honestly): without openat2 (Linux < 5.6, or a seccomp
 * filter that hides it) we fall back to open(path, O_NOFOLLOW), which only
 * protects the last component: a directory swapped for a symlink between
 * the check and the open can still redirect it. Directory creation
 * (create_dirs) walks with mkdirat/openat(O_NOFOLLOW) one component at a
 * time from the root, so it is not affected.
 */
#define _GNU_SOURCE /* O_PATH, openat2's struct open_how via syscall() */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include "fs_confine.h"
#include "core/core.h"
#include "base/util.h"

#define TG_FS_DEFAULT_MAX (16u << 20)

void tg__fs_code(tg_fs_err *e, tg_error_code code) {
  e->code = tg_error_code_name(code);
}

void tg__fs_errf(tg_fs_err *e, tg_error_code code, const char *fmt, ...) {
  tg__fs_code(e, code);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
}

/* ---- roots ------------------------------------------------------------ */

static void free_fs(tg_fs *fs) {
  if (!fs) return;
  for (size_t i = 0; i < fs->nroots; i++) {
    free(fs->roots[i]);
    if (fs->root_fds[i] >= 0) close(fs->root_fds[i]);
  }
  free(fs->roots);
  free(fs->root_fds);
  free(fs);
}

static int add_root(tg_fs *fs, const char *given, char *err) {
  char *real = realpath(given, NULL);
  if (!real) {
    tg__errf(err, TG_ERRMSG, "workspace root '%s': %s", given, strerror(errno));
    return -1;
  }
  int fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    tg__errf(err, TG_ERRMSG, "workspace root '%s' is not a directory we can "
             "open: %s", given, strerror(errno));
    free(real);
    return -1;
  }
  fs->roots[fs->nroots] = real;
  fs->root_fds[fs->nroots++] = fd;
  return 0;
}

int tg__fs_init(tg_core *core, char err[TG_ERRMSG]) {
  const char *const *in = core->cfg.workspace_roots;
  core->cfg.workspace_roots = NULL; /* the caller's array may not outlive us */
  if (!in && !core->cfg.builtin_tools) return 0;
  size_t n = 0;
  while (in && in[n]) n++;
  if (in && n == 0) {
    tg__errf(err, TG_ERRMSG, "workspace_roots is an empty list; give at "
             "least one directory, or NULL for the current directory");
    return -EINVAL;
  }
  tg_fs *fs = calloc(1, sizeof *fs);
  if (fs) {
    fs->roots = calloc(n + 2, sizeof *fs->roots);
    fs->root_fds = calloc(n + 1, sizeof *fs->root_fds);
  }
  if (!fs || !fs->roots || !fs->root_fds) {
    free_fs(fs);
    tg__errf(err, TG_ERRMSG, "out of memory");
    return -ENOMEM;
  }
  for (size_t i = 0; i < (in ? n : 1); i++)
    if (add_root(fs, in ? in[i] : ".", in ? err : fs->no_root) < 0 && in) {
      free_fs(fs);
      return -EINVAL;
    }
  /* The default root (the cwd) may be gone (deleted under us): the runtime
   * still starts, and the file tools say why they cannot work. */
  fs->max_bytes = core->cfg.file_max_bytes ? core->cfg.file_max_bytes
                                         : TG_FS_DEFAULT_MAX;
  core->cfg.file_max_bytes = fs->max_bytes;
  core->cfg.workspace_roots = (const char *const *)fs->roots;
  core->fs = fs;
  return 0;
}

void tg__fs_free(tg_core *core) {
  free_fs(core->fs);
  core->fs = NULL;
  core->cfg.workspace_roots = NULL;
}

/* ---- resolving -------------------------------------------------------- */

void tg__fs_path_free(tg_fs_path *p) {
  free(p->abs);
  free(p->rel);
  memset(p, 0, sizeof *p);
}

/* Is path equal to root or below it, by whole components? */
static int inside(const char *root, const char *path) {
  size_t n = strlen(root);
  if (n == 1 && root[0] == '/') return path[0] == '/';
  return strncmp(root, path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int root_of(const tg_fs *fs, const char *abs) {
  int best = -1;
  size_t best_len = 0;
  for (size_t i = 0; i < fs->nroots; i++)
    if (inside(fs->roots[i], abs) && strlen(fs->roots[i]) >= best_len) {
      best = (int)i;
      best_len = strlen(fs->roots[i]);
    }
  return best;
}

/* The path as given, made absolute, with '//' and './' and a trailing '/'
 * removed (`..` is left to the kernel: it depends on symlinks). */
static char *absolute(const tg_fs *fs, const char *in) {
  size_t n = strlen(fs->roots[0]) + strlen(in) + 2;
  char *raw = malloc(n), *out = malloc(n);
  if (!raw || !out) {
    free(raw);
    free(out);
    return NULL;
  }
  if (in[0] == '/') snprintf(raw, n, "%s", in);
  else snprintf(raw, n, "%s/%s", fs->roots[0], in);
  size_t k = 0;
  for (const char *s = raw; *s;) {
    while (*s == '/') s++;
    const char *e = s;
    while (*e && *e != '/') e++;
    if (e == s) break;
    if (!(e - s == 1 && s[0] == '.')) {
      out[k++] = '/';
      memcpy(out + k, s, (size_t)(e - s));
      k += (size_t)(e - s);
    }
    s = e;
  }
  if (k == 0) out[k++] = '/';
  out[k] = '\0';
  free(raw);
  return out;
}

/* Lexical normalisation (`..` pops): used only to tell, in the message,
 * whether a symlink was what led outside. */
static int lexically_inside(const tg_fs *fs, const char *abs) {
  char *buf = tg__strdup(abs);
  if (!buf) return 0;
  size_t k = 0;
  for (char *s = buf, *tok; (tok = strtok_r(s, "/", &s)) != NULL;) {
    if (strcmp(tok, "..") == 0) {
      while (k > 0 && buf[--k] != '/') {}
      continue;
    }
    buf[k++] = '/';
    memmove(buf + k, tok, strlen(tok));
    k += strlen(tok);
  }
  if (k == 0) buf[k++] = '/';
  buf[k] = '\0';
  int in = root_of(fs, buf) >= 0;
  free(buf);
  return in;
}

static const char *kind_of(mode_t m) {
  if (S_ISDIR(m)) return "directory";
  if (S_ISFIFO(m)) return "FIFO (named pipe)";
  if (S_ISSOCK(m)) return "socket";
  if (S_ISCHR(m)) return "character device";
  if (S_ISBLK(m)) return "block device";
  if (S_ISLNK(m)) return "symbolic link";
  if (S_ISREG(m)) return "regular file";
  return "special file";
}

/* realpath-free joining: real + "/" + rest ("/" not doubled). */
static char *join(const char *real, const char *rest) {
  size_t n = strlen(real) + strlen(rest) + 2;
  char *s = malloc(n);
  if (!s) return NULL;
  if (!*rest) snprintf(s, n, "%s", real);
  else snprintf(s, n, "%s%s%s", real, strcmp(real, "/") ? "/" : "", rest);
  return s;
}

/* Why the kernel refused to resolve input (err from realpath; ENOTDIR is
 * through_a_file's, which names the component). */
static int errno_refusal(tg_fs_err *e, const char *input, int err) {
  switch (err) {
    case ELOOP:
      tg__fs_errf(e, TG_E_BAD_PATH, "'%s': too many levels of symbolic links "
                  "(a symlink loop, or a chain of more than 40)", input);
      break;
    case EACCES:
      tg__fs_errf(e, TG_E_PERMISSION_DENIED, "'%s': permission denied: a "
                  "directory on the way cannot be searched", input);
      break;
    case ENAMETOOLONG:
      tg__fs_errf(e, TG_E_BAD_PATH, "'%s': the path is too long once its "
                  "symlinks are followed (over %d bytes)", input, PATH_MAX - 1);
      break;
    default:
      tg__fs_errf(e, TG_E_IO_ERROR, "'%s': %s", input, strerror(err));
  }
  return -1;
}

static int outside_refusal(const tg_fs *fs, const char *input,
                           const char *abs, const char *resolved,
                           tg_fs_err *e) {
  char roots[1024] = "";
  size_t k = 0;
  for (size_t i = 0; i < fs->nroots && k < sizeof roots; i++)
    k += (size_t)snprintf(roots + k, sizeof roots - k, "%s%s", i ? ", " : "",
                          fs->roots[i]);
  tg__fs_errf(e, TG_E_OUTSIDE_WORKSPACE,
              "'%s' resolves to '%s'%s, outside the workspace (%s); the file "
              "tools only work inside the workspace roots",
              input, resolved,
              lexically_inside(fs, abs) ? " through a symlink" : "", roots);
  return -1;
}

/* The path as the agent may see it in a message: relative to its root
 * when inside one, else as it is. */
static const char *shown_path(const tg_fs *fs, const char *abs) {
  int r = root_of(fs, abs);
  if (r < 0) return abs;
  size_t n = strcmp(fs->roots[r], "/") ? strlen(fs->roots[r]) : 0;
  return abs[n] ? abs + n + 1 : ".";
}

/* ENOTDIR: a component of abs that is not a directory has a name after
 * it ("a.txt/b"). Names that component. */
static int through_a_file(const tg_fs *fs, const char *input, const char *abs,
                          tg_fs_err *e) {
  char *cut = tg__strdup(abs);
  struct stat st;
  for (char *slash = cut ? strchr(cut + 1, '/') : NULL; slash;
       slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    int found = stat(cut, &st) == 0 && !S_ISDIR(st.st_mode);
    char *real = found ? realpath(cut, NULL) : NULL;
    if (found && (!real || root_of(fs, real) < 0)) /* say nothing of it */
      outside_refusal(fs, input, abs, real ? real : cut, e);
    else if (found)
      tg__fs_errf(e, TG_E_NOT_A_DIRECTORY, "'%s': '%s' is a %s, not a "
                  "directory, so there is nothing below it", input,
                  shown_path(fs, cut), kind_of(st.st_mode));
    free(real);
    if (found) {
      free(cut);
      return -1;
    }
    *slash = '/';
  }
  free(cut);
  tg__fs_errf(e, TG_E_NOT_A_DIRECTORY, "'%s': a component of the path is not a "
              "directory", input);
  return -1;
}

/* Names longer than the kernel takes, said as such (realpath would only
 * say ENAMETOOLONG, which reads as "the path is too long"). */
static int check_lengths(const char *input, tg_fs_err *e) {
  size_t len = strlen(input);
  if (len >= PATH_MAX) {
    tg__fs_errf(e, TG_E_BAD_PATH, "the path is %zu bytes long, over the %d a "
                "path may have", len, PATH_MAX - 1);
    return -1;
  }
  for (const char *s = input; *s;) {
    size_t n = strcspn(s, "/");
    if (n > NAME_MAX) {
      tg__fs_errf(e, TG_E_BAD_PATH, "'%.40s...': the name '%.40s...' in it is "
                  "%zu bytes long, over the %d a file name may have", input,
                  s, n, NAME_MAX);
      return -1;
    }
    s += n + (s[n] == '/');
  }
  return 0;
}

/* Does input name a directory by its spelling: a trailing '/' or a last
 * component '.' ("a.txt/" and "a.txt/." are ENOTDIR for the kernel, and
 * "new/" cannot be created as a file)? */
static int names_a_directory(const char *input) {
  size_t n = strlen(input);
  return input[n - 1] == '/' ||
         (input[n - 1] == '.' && (n == 1 || input[n - 2] == '/'));
}

/* realpath() of the longest prefix of abs that exists; *rest points at
 * what follows it in abs ("" when all of it exists). */
static char *real_prefix(char *abs, const char **rest, int *err) {
  size_t len = strlen(abs);
  char *cut = tg__strdup(abs);
  if (!cut) {
    *err = ENOMEM;
    return NULL;
  }
  for (;;) {
    char *real = realpath(cut, NULL);
    if (real || errno != ENOENT) {
      *err = real ? 0 : errno;
      size_t at = strlen(cut);
      *rest = abs + at + (at < len && abs[at] == '/');
      if (at == 1) *rest = abs + 1; /* the prefix was "/" */
      free(cut);
      return real;
    }
    char *slash = strrchr(cut, '/');
    if (slash == cut) slash[1] = '\0';
    else *slash = '\0';
  }
}

/* Where target leads, as far as it exists: realpath of its longest
 * existing prefix and the rest appended; NULL when even that fails. */
static char *leads_to(char *target) {
  const char *rest = "";
  int err = 0;
  char *real = real_prefix(target, &rest, &err);
  if (!real) return NULL;
  char *where = join(real, rest);
  free(real);
  return where;
}

/* What a symlink leads to when realpath cannot follow it to an end. */
static const char *no_path_kind(mode_t m) {
  return S_ISFIFO(m) ? "pipe" : S_ISSOCK(m) ? "socket"
         : S_ISREG(m) ? "deleted or anonymous file" : kind_of(m);
}

/* The first missing name of the path (rest[0, n) after the existing
 * directory real) may be a symlink realpath could not follow. Either it
 * is dangling (writing through it would create its target, wherever that
 * is), or it leads to something that has no path at all: a /proc magic
 * link such as /dev/stdin -> /proc/self/fd/0 when stdin is a pipe. Says
 * which, and whether it points outside the workspace. 0: not a symlink. */
static int symlink_refusal(const tg_fs *fs, const char *input,
                           const char *real, const char *rest, size_t n,
                           tg_fs_err *e) {
  char link[PATH_MAX], first[PATH_MAX];
  snprintf(first, sizeof first, "%s%s%.*s", real, strcmp(real, "/") ? "/" : "",
           (int)n, rest);
  ssize_t k = readlink(first, link, sizeof link - 1);
  if (k < 0) return 0; /* not a symlink: a plain missing name */
  link[k] = '\0';
  char *target = link[0] == '/' ? tg__strdup(link) : join(real, link);
  char *where = target ? leads_to(target) : NULL;
  int out = where ? root_of(fs, where) < 0
                  : !target || !lexically_inside(fs, target);
  free(target);
  free(where);
  const char *name = shown_path(fs, first);
  struct stat st;
  if (stat(first, &st) == 0)
    tg__fs_errf(e, out ? TG_E_OUTSIDE_WORKSPACE : S_ISREG(st.st_mode)
                                                      ? TG_E_BAD_PATH
                                                      : TG_E_NOT_A_REGULAR_FILE,
                "'%s' goes through the symlink '%s' -> '%s'%s to a %s that "
                "has no path in the filesystem%s; the file tools only work on "
                "regular files inside the workspace", input, name, link,
                out ? ", outside the workspace," : "", no_path_kind(st.st_mode),
                out ? "" : ", not a regular file");
  else
    tg__fs_errf(e, out ? TG_E_OUTSIDE_WORKSPACE : TG_E_BROKEN_SYMLINK,
                "'%s' goes through the symlink '%s' -> '%s', which is "
                "dangling (its target does not exist)%s; the file tools do "
                "not follow dangling symlinks", input, name, link,
                out ? " and points outside the workspace" : "");
  return -1;
}

/* The missing part after real: no `..` (the directories it would go up
 * from do not exist), and its first name must not be a dangling symlink
 * (writing there would create the file wherever the link points). */
static int check_missing(const tg_fs *fs, const char *input, const char *real,
                         const char *rest, int *count, tg_fs_err *e) {
  *count = 0;
  for (const char *s = rest; *s;) {
    const char *end = strchr(s, '/');
    size_t n = end ? (size_t)(end - s) : strlen(s);
    if (n == 2 && s[0] == '.' && s[1] == '.') {
      char lex[PATH_MAX];
      snprintf(lex, sizeof lex, "%s/%s", real, rest);
      if (!lexically_inside(fs, lex))
        tg__fs_errf(e, TG_E_OUTSIDE_WORKSPACE, "'%s' goes up (..) outside the "
                    "workspace; the file tools only work inside it", input);
      else
        tg__fs_errf(e, TG_E_BAD_PATH, "'%s' goes up (..) out of a directory "
                    "that does not exist", input);
      return -1;
    }
    (*count)++;
    s += n + (end != NULL);
  }
  if (!*count) return 0;
  return symlink_refusal(fs, input, real, rest, strcspn(rest, "/"), e);
}

static int finish_path(const tg_fs *fs, const char *input, char *abs,
                       tg_fs_path *p, tg_fs_err *e) {
  int r = root_of(fs, abs);
  if (r < 0) {
    free(abs);
    return -1; /* the caller fills e */
  }
  const char *root = fs->roots[r];
  size_t rl = strcmp(root, "/") ? strlen(root) : 0;
  p->abs = abs;
  p->rel = tg__strdup(abs[rl] ? abs + rl + 1 : ".");
  p->root = r;
  if (!p->rel) {
    tg__fs_errf(e, TG_E_IO_ERROR, "'%s': out of memory", input);
    return -1;
  }
  if (p->exists && lstat(abs, &p->st) < 0) p->exists = 0;
  return 0;
}

int tg__fs_resolve(const tg_fs *fs, const char *input, tg_fs_path *p,
                   tg_fs_err *e) {
  memset(p, 0, sizeof *p);
  p->root = -1;
  if (fs->nroots == 0) {
    tg__fs_errf(e, TG_E_NO_WORKSPACE, "the file tools have no workspace: %s; "
                "set workspace_roots", fs->no_root);
    return -1;
  }
  if (!input || !*input) {
    tg__fs_errf(e, TG_E_BAD_PATH, "the path is empty; give a path relative to "
                "the workspace root, such as \"src/main.c\"");
    return -1;
  }
  if (check_lengths(input, e) < 0) return -1;
  char *abs = absolute(fs, input);
  if (!abs) return errno_refusal(e, input, ENOMEM);
  const char *rest = "";
  int err = 0, missing = 0;
  char *real = real_prefix(abs, &rest, &err);
  if (!real) { /* what lies outside the workspace is not described */
    if (!lexically_inside(fs, abs)) outside_refusal(fs, input, abs, abs, e);
    else if (err == ENOTDIR) through_a_file(fs, input, abs, e);
    else errno_refusal(e, input, err);
    free(abs);
    return -1;
  }
  if (check_missing(fs, input, real, rest, &missing, e) < 0) {
    free(real);
    free(abs);
    return -1;
  }
  char *full = join(real, rest);
  free(real);
  if (!full) {
    free(abs);
    return errno_refusal(e, input, ENOMEM);
  }
  p->exists = missing == 0;
  p->missing = missing;
  if (root_of(fs, full) < 0) {
    outside_refusal(fs, input, abs, full, e);
    free(abs);
    free(full);
    return -1;
  }
  free(abs);
  if (finish_path(fs, input, full, p, e) < 0) {
    tg__fs_path_free(p);
    return -1;
  }
  p->dir_only = names_a_directory(input);
  if (p->dir_only && p->exists && !S_ISDIR(p->st.st_mode)) {
    tg__fs_errf(e, TG_E_NOT_A_DIRECTORY, "'%s': '%s' is a %s, not a directory "
                "(a path that ends in '/' or '/.' names a directory)", input,
                p->rel, kind_of(p->st.st_mode));
    tg__fs_path_free(p);
    return -1;
  }
  return 0;
}

int tg__fs_file_name(tg_fs_err *e, const char *tool, const tg_fs_path *p) {
  if (!p->dir_only || p->exists) return 0;
  tg__fs_errf(e, TG_E_BAD_PATH, "%s: '%s/' ends with '/', so it names a "
              "directory, and %s writes files; give the file's name without "
              "the trailing '/'", tool, p->rel, tool);
  return -1;
}

/* ---- opening ---------------------------------------------------------- */

int tg__fs_open(tg_fs *fs, int root, const char *rel, int flags, mode_t mode) {
  if (!fs->no_openat2) {
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (uint64_t)(flags | O_CLOEXEC);
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, fs->root_fds[root], rel, &how, sizeof how);
    if (fd >= 0) return (int)fd;
    if (errno != ENOSYS) return -errno;
    fs->no_openat2 = 1; /* remembered per runtime: one failed probe */
  }
  char path[PATH_MAX];
  const char *root_path = fs->roots[root];
  if (snprintf(path, sizeof path, "%s/%s", strcmp(root_path, "/") ? root_path : "",
               rel) >= (int)sizeof path)
    return -ENAMETOOLONG;
  int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode);
  return fd >= 0 ? fd : -errno;
}

int tg__fs_split(const char *rel, char **dir, const char **base) {
  const char *slash = strrchr(rel, '/');
  *base = slash ? slash + 1 : rel;
  *dir = slash ? strndup(rel, (size_t)(slash - rel)) : tg__strdup(".");
  return *dir ? 0 : -ENOMEM;
}

/* ---- refusals shared by the tools --------------------------------------- */

int tg__fs_not_regular(tg_fs_err *e, const char *rel, mode_t mode) {
  tg__fs_errf(e, TG_E_NOT_A_REGULAR_FILE,
              "'%s' is a %s, not a regular file; the file tools only read and "
              "write regular files%s",
              rel, kind_of(mode),
              S_ISDIR(mode) ? " (use list_dir for a directory)" : "");
  return -1;
}

int tg__fs_too_large(tg_fs_err *e, const char *rel, size_t size, size_t max) {
  tg__fs_errf(e, TG_E_TOO_LARGE,
              "'%s' is %zu bytes, over the file size limit of %zu bytes "
              "(file_max_bytes); work on a smaller file or raise the limit",
              rel, size, max);
  return -1;
}
