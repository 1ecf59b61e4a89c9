/*
 * fuzz_paths.c — tg_path_resolve, the kernel's walk of a path that rules
 * read (call.paths, agent.paths), against the kernel itself. Input: one
 * byte choosing the cwd (the tree, or a folder in it), then the path.
 * The tree, made once: files and folders, and symlinks to /, to .., to a
 * folder, to a file, in a loop and dangling.
 *
 * Properties: a refusal says why; a result is absolute and clean (no
 * empty, "." or ".." component, no trailing '/') with no symlink left
 * on the way (realpath(3) of it is itself); and where the whole path
 * exists, realpath(3) — the kernel's own answer — is the same path
 * (/proc, /sys and /dev are left out: their links name the process that
 * reads them).
 */
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "fuzz.h"

static char tree[64] = "/tmp/tg-fuzz-paths-XXXXXX", sub[128];

static void make(const char *rel, int dir) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", tree, rel);
  if (dir) {
    FUZZ_ASSERT(mkdir(p, 0755) == 0, "mkdir %s", p);
  } else {
    FILE *f = fopen(p, "w");
    FUZZ_ASSERT(f != NULL, "create %s", p);
    fclose(f);
  }
}

static void link_to(const char *rel, const char *target) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", tree, rel);
  FUZZ_ASSERT(symlink(target, p) == 0, "symlink %s", p);
}

static void remove_tree(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tree);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tree);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  FUZZ_ASSERT(mkdtemp(tree) != NULL, "mkdtemp");
  char *real = realpath(tree, NULL); /* /tmp may itself be a link */
  FUZZ_ASSERT(real != NULL, "realpath of the tree");
  snprintf(tree, sizeof tree, "%s", real);
  free(real);
  make("a", 1);
  make("a/b", 1);
  make("a/b/f", 0);
  make("g", 0);
  link_to("root", "/");
  link_to("up", "..");
  link_to("a/b/back", "../..");
  link_to("dir", "a/b");
  link_to("file", "a/b/f");
  link_to("loop", "loop");
  link_to("dangling", "nowhere/x");
  link_to("a/abs", "/tmp");
  snprintf(sub, sizeof sub, "%s/a/b", tree);
  atexit(remove_tree);
  return 0;
}

static int component_ok(const char *s, size_t n) {
  return n > 0 && !(n == 1 && s[0] == '.') &&
         !(n == 2 && s[0] == '.' && s[1] == '.');
}

static int system_folder(const char *p) {
  static const char *const skip[] = {"/proc", "/sys", "/dev", NULL};
  for (int i = 0; skip[i]; i++) {
    size_t n = strlen(skip[i]);
    if (!strncmp(p, skip[i], n) && (p[n] == '\0' || p[n] == '/')) return 1;
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 2048 || memchr(data + 1, '\0', size - 1)) return 0;
  const char *cwd = data[0] & 1 ? sub : tree;
  char path[2049];
  memcpy(path, data + 1, size - 1);
  path[size - 1] = '\0';
  char why[PATH_MAX + 200] = "";
  char *r = tg_path_resolve(cwd, path, why, sizeof why);
  if (!r) {
    FUZZ_ASSERT(why[0] != '\0', "refused '%s' without a reason", path);
    return 0;
  }
  FUZZ_ASSERT(r[0] == '/', "'%s' resolved to '%s', not absolute", path, r);
  if (strcmp(r, "/") != 0) {
    for (const char *s = r + 1;;) {
      size_t n = strcspn(s, "/");
      FUZZ_ASSERT(component_ok(s, n), "'%s' resolved to '%s': not clean",
                  path, r);
      if (!s[n]) break;
      s += n + 1;
    }
  }
  struct stat st;
  if (!system_folder(r) && lstat(r, &st) == 0) {
    /* what the walk gives has no symlink left on the way: the kernel
     * resolves it to itself (whatever the path it came from) */
    FUZZ_ASSERT(!S_ISLNK(st.st_mode), "'%s' from %s: the walk stops at the "
                "symlink '%s'", path, cwd, r);
    char *self = realpath(r, NULL);
    if (self && !system_folder(self))
      FUZZ_ASSERT(!strcmp(self, r), "'%s' from %s: the walk says '%s', "
                  "which still goes through a symlink to '%s'", path, cwd,
                  r, self);
    free(self);
    char joined[PATH_MAX * 2];
    snprintf(joined, sizeof joined, "%s%s%s", path[0] == '/' ? "" : cwd,
             path[0] == '/' ? "" : "/", path);
    char *k = realpath(joined, NULL);
    if (k && !system_folder(k))
      FUZZ_ASSERT(!strcmp(k, r), "'%s' from %s: the walk says '%s', the "
                  "kernel '%s'", path, cwd, r, k);
    free(k);
  }
  free(r);
  return 0;
}
