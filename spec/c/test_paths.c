/*
 * test_paths.c — what a judge reads of a file-touching action, from the
 * code that acts: tg_patch_files (apply_patch's parser) and
 * tg_path_resolve (the kernel's walk). Each case is a way a rule was, or
 * could be, walked around: a name read one way by the rule and another
 * by the tool or the kernel.
 */
#include "helpers.h"

/* The "op path [from]" lines of a patch's files, or "ERR: why". */
static char *files_of(const char *patch) {
  char err[512];
  cJSON *list = tg_patch_files(patch, strlen(patch), err, sizeof err);
  static char out[2048];
  if (!list) {
    snprintf(out, sizeof out, "ERR: %s", err);
    return out;
  }
  size_t k = 0;
  out[0] = '\0';
  const cJSON *f;
  cJSON_ArrayForEach(f, list) {
    const cJSON *from = cJSON_GetObjectItemCaseSensitive(f, "from");
    k += (size_t)snprintf(out + k, sizeof out - k, "%s%s %s%s%s", k ? "; " : "",
                          cJSON_GetObjectItemCaseSensitive(f, "op")->valuestring,
                          cJSON_GetObjectItemCaseSensitive(f, "path")->valuestring,
                          from ? " from " : "", from ? from->valuestring : "");
  }
  cJSON_Delete(list);
  return out;
}

TEST(patch_files_are_what_apply_patch_touches) {
  ASSERT_STR_EQ(files_of("--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n"), "modify x.c");
  /* a git rename: both names, whatever ---/+++ there are not */
  ASSERT_STR_EQ(files_of("diff --git a/src/ok.c b/policies/evil.lua\n"
                         "similarity index 100%\nrename from src/ok.c\n"
                         "rename to policies/evil.lua\n"),
                "rename policies/evil.lua from src/ok.c");
  /* a new empty file has only its diff --git line to name it */
  ASSERT_STR_EQ(files_of("diff --git a/new.txt b/new.txt\nnew file mode 100644\n"),
                "create new.txt");
  ASSERT_STR_EQ(files_of("diff --git a/a b c b/a b c\nnew file mode 100644\n"),
                "create a b c");
  ASSERT_STR_EQ(files_of("diff --git a/gone b/gone\ndeleted file mode 100644\n"),
                "delete gone");
  /* quoted names, with git's C escapes decoded (é is \303\251) */
  ASSERT_STR_EQ(files_of("--- \"a/x\\303\\251\"\n+++ \"b/x\\303\\251\"\n"
                         "@@ -1 +1 @@\n-a\n+b\n"), "modify x\xc3\xa9");
  ASSERT_STR_EQ(files_of("diff --git \"a/t\\tb\" \"b/t\\tb\"\nnew file mode 100644\n"),
                "create t\tb");
  /* the file a section with differing names changes is the +++ one */
  ASSERT_STR_EQ(files_of("--- a/x.c\n+++ b/y.c\n@@ -1 +1 @@\n-a\n+b\n"), "modify y.c");
}

TEST(patch_names_the_parser_cannot_describe_are_refused) {
  ASSERT_CONTAINS(files_of("--- \"a/x\\q\"\n+++ \"b/x\"\n@@ -1 +1 @@\n-a\n+b\n"),
                  "an escape git does not write");
  ASSERT_CONTAINS(files_of("--- \"a/x\"\n+++ \"b/x\\000y\"\n@@ -1 +1 @@\n-a\n+b\n"),
                  "NUL byte");
  ASSERT_CONTAINS(files_of("--- \"a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"),
                  "no closing");
  ASSERT_CONTAINS(files_of("--- \"a/x\" junk\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"),
                  "followed by more than");
  /* half a rename, two of one half, and ---/+++ that disagree with it */
  ASSERT_CONTAINS(files_of("diff --git a/a b/b\nrename from a\n"),
                  "only one of them");
  ASSERT_CONTAINS(files_of("diff --git a/a b/b\nrename from a\nrename from c\n"
                           "rename to b\n"), "a second 'rename from'");
  ASSERT_CONTAINS(files_of("diff --git a/a b/b\nrename from a\nrename to b\n"
                           "--- a/a\n+++ b/policies/x.lua\n@@ -1 +1 @@\n-a\n+b\n"),
                  "differ from its 'rename from'");
  /* a diff --git line that splits two ways names no file */
  ASSERT_CONTAINS(files_of("diff --git a/x b/y b/z\nnew file mode 100644\n"),
                  "needs a name");
}

/* tree: src/ok.c, .env, src/lnk -> /, src/up -> .., src/cfg -> ../.env,
 * src/loop -> loop, src/dangling -> ../made/here.c */
static char *make_tree(void) {
  char *t = temp_dir(), *real = realpath(t, NULL), p[600];
  ASSERT_NOT_NULL(real);
  snprintf(p, sizeof p, "%s/src", real);
  ASSERT_INT_EQ(mkdir(p, 0755), 0);
  put_file(real, "src/ok.c", "x\n");
  put_file(real, ".env", "K=1\n");
  static const char *const links[][2] = {
      {"src/lnk", "/"}, {"src/up", ".."}, {"src/cfg", "../.env"},
      {"src/loop", "loop"}, {"src/dangling", "../made/here.c"}};
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", real, links[i][0]);
    ASSERT_INT_EQ(symlink(links[i][1], p), 0);
  }
  free(t);
  return real;
}

/* Where path leads from cwd, relative to the tree when inside it; or
 * "ERR: why". */
static const char *lands(const char *tree, const char *cwd, const char *path) {
  static char out[1200];
  char why[600];
  char *r = tg_path_resolve(cwd, path, why, sizeof why);
  if (!r) {
    snprintf(out, sizeof out, "ERR: %s", why);
    return out;
  }
  size_t n = strlen(tree);
  snprintf(out, sizeof out, "%s", !strncmp(r, tree, n) && r[n] == '/' ? r + n + 1 : r);
  free(r);
  return out;
}

TEST(paths_lead_where_the_kernel_goes) {
  char *t = make_tree();
  ASSERT_STR_EQ(lands(t, t, "src/ok.c"), "src/ok.c");
  ASSERT_STR_EQ(lands(t, t, "src/new/dir/x.c"), "src/new/dir/x.c");
  ASSERT_STR_EQ(lands(t, t, "./src//./ok.c"), "src/ok.c");
  /* inside -> outside, and .. after a symlink from its target */
  ASSERT_STR_EQ(lands(t, t, "src/lnk/etc/cron.d/x"), "/etc/cron.d/x");
  ASSERT_STR_EQ(lands(t, t, "src/lnk/../x"), "/x");
  ASSERT_STR_EQ(lands(t, t, "src/up/.env"), ".env");
  ASSERT_STR_EQ(lands(t, t, "src/cfg"), ".env");
  /* below a missing folder names are as written, until a .. climbs back
   * to what exists: once `new` is made, new/../src/lnk is the symlink */
  ASSERT_STR_EQ(lands(t, t, "new/../src/lnk/etc/hosts"), "/etc/hosts");
  ASSERT_STR_EQ(lands(t, t, "new/a/../../src/up/.env"), ".env");
  ASSERT_STR_EQ(lands(t, t, "new/a/../b"), "new/b");
  /* a dangling symlink: where a create through it lands */
  ASSERT_STR_EQ(lands(t, t, "src/dangling"), "made/here.c");
  /* absolute paths ignore cwd; relative ones need one */
  ASSERT_STR_EQ(lands(t, "/nowhere", "/etc/../etc/hosts"), "/etc/hosts");
  ASSERT_CONTAINS(lands(t, NULL, "x"), "is relative");
  ASSERT_CONTAINS(lands(t, t, ""), "empty");
  /* what cannot be resolved is said */
  ASSERT_CONTAINS(lands(t, t, "src/loop/x"), "too many levels of symbolic links");
  ASSERT_CONTAINS(lands(t, t, "src/ok.c/x"), "not a directory");
  ASSERT_CONTAINS(lands(t, t, "src/ok.c/"), "not a directory");
  ASSERT_CONTAINS(lands(t, t, "/proc/self/cwd/x"), "/proc/self");
  ASSERT_CONTAINS(lands(t, t, "/dev/stdin"), "/proc/self");
  remove_tree(t);
}

TEST_MAIN(TEST_ENTRY(patch_files_are_what_apply_patch_touches),
          TEST_ENTRY(patch_names_the_parser_cannot_describe_are_refused),
          TEST_ENTRY(paths_lead_where_the_kernel_goes))
