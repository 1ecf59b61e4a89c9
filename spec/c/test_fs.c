/*
 * test_fs.c — the built-in file tools on real files: read_file,
 * list_dir, write_file, apply_patch; confinement to the workspace roots
 * (every escape we know of), atomic writes under SIGKILL, all-or-nothing
 * patches. File-change tracking is in test_fs_changes.c.
 */
#include "helpers.h"
#include "internal.h"
#include <limits.h>
#include <time.h>
#include <sys/ioctl.h>
#include <linux/fs.h>

/* Sets or clears the immutable attribute of dir/name; 0, or -1 when the
 * filesystem or our privileges do not allow it. */
static int set_immutable(const char *dir, const char *name, int on) {
  char *p = path_join(dir, name);
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

/* Names in dir that look like the file tools' temp files
 * (".NAME.tg-XXXXXX"); removes them too if remove is set. */
static int count_temp_files(const char *dir, int remove) {
  DIR *d = opendir(dir);
  ASSERT_NOT_NULL(d);
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] != '.' || !strstr(e->d_name, ".tg-")) continue;
    n++;
    if (remove) {
      char *p = path_join(dir, e->d_name);
      unlink(p);
      free(p);
    }
  }
  closedir(d);
  return n;
}

/* ---- read_file -------------------------------------------------------- */

TEST(read_file_whole_and_line_window) {
  char *dir = temp_dir();
  put_file(dir, "five.txt", "one\ntwo\nthree\nfour\nfive");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_tool(rt, "read_file", "{\"path\":\"five.txt\"}");
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(str_at(o.result, "content"), "one\ntwo\nthree\nfour\nfive");
  ASSERT_STR_EQ(str_at(o.result, "path"), "five.txt");
  ASSERT_STR_EQ(str_at(o.result, "encoding"), "utf-8");
  ASSERT_NUM_EQ(num_at(o.result, "lines"), 5);
  ASSERT_NUM_EQ(num_at(o.result, "size"), 23);
  ASSERT_INT_EQ(bool_at(o.result, "truncated"), 0);
  outcome_free(&o);
  o = call_tool(rt, "read_file",
                "{\"path\":\"five.txt\",\"offset\":2,\"limit\":2}");
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(str_at(o.result, "content"), "two\nthree\n");
  ASSERT_NUM_EQ(num_at(o.result, "offset"), 2);
  ASSERT_NUM_EQ(num_at(o.result, "count"), 2);
  ASSERT_INT_EQ(bool_at(o.result, "truncated"), 1);
  outcome_free(&o);
  o = call_tool(rt, "read_file", "{\"path\":\"five.txt\",\"offset\":4}");
  ASSERT_STR_EQ(str_at(o.result, "content"), "four\nfive");
  ASSERT_INT_EQ(bool_at(o.result, "truncated"), 0);
  outcome_free(&o);
  o = call_tool(rt, "read_file", "{\"path\":\"five.txt\",\"offset\":9}");
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(str_at(o.result, "content"), "");
  ASSERT_NUM_EQ(num_at(o.result, "count"), 0);
  outcome_free(&o);
  /* the schema refuses a line number below 1 */
  o = call_tool(rt, "read_file", "{\"path\":\"five.txt\",\"offset\":0}");
  ASSERT_STATUS(o, TG_STATUS_ERROR);
  ASSERT_CONTAINS(o.message, "offset");
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(read_file_binary_comes_back_base64) {
  char *dir = temp_dir();
  char *p = path_join(dir, "bin");
  FILE *f = fopen(p, "wb");
  fwrite("\x00\x01\xff", 1, 3, f);
  fclose(f);
  free(p);
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_tool(rt, "read_file", "{\"path\":\"bin\"}");
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(str_at(o.result, "encoding"), "base64");
  ASSERT_STR_EQ(str_at(o.result, "content"), "AAH/");
  outcome_free(&o);
  o = call_tool(rt, "read_file", "{\"path\":\"bin\",\"limit\":1}");
  ASSERT_CALL_ERROR(o, "BINARY_FILE");
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(read_file_missing_and_directory) {
  char *dir = temp_dir();
  make_subdir(dir, "sub");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_tool(rt, "read_file", "{\"path\":\"nope.txt\"}");
  ASSERT_CALL_ERROR(o, "NOT_FOUND");
  ASSERT_CONTAINS(o.message, "nope.txt");
  outcome_free(&o);
  o = call_tool(rt, "read_file", "{\"path\":\"sub\"}");
  ASSERT_CALL_ERROR(o, "NOT_A_REGULAR_FILE");
  ASSERT_CONTAINS(o.message, "list_dir");
  outcome_free(&o);
  o = call_tool(rt, "read_file", "{\"path\":\"\"}");
  ASSERT_STATUS(o, TG_STATUS_ERROR); /* minLength: the schema refuses it */
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* Numbers that become C integers (issue 8, item 11): offset/limit of 1e20
 * were cast unchecked to size_t. The schema states the range, so the
 * chain refuses them before the tool runs... */
TEST(read_file_numbers_out_of_range_refused_by_the_schema) {
  char *dir = temp_dir();
  put_file(dir, "a.txt", "one\ntwo\n");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  static const char *const bad[][2] = {
      {"{\"path\":\"a.txt\",\"offset\":1e20}", "$.offset"},
      {"{\"path\":\"a.txt\",\"limit\":1e20}", "$.limit"},
      {"{\"path\":\"a.txt\",\"offset\":9007199254740992}", "$.offset"},
      {"{\"path\":\"a.txt\",\"limit\":1e300}", "$.limit"},
      {"{\"path\":\"a.txt\",\"limit\":1.5}", "$.limit"},
      {"{\"path\":\".\",\"max_entries\":1e20}", "$.max_entries"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    outcome o = call_tool(rt, i == 5 ? "list_dir" : "read_file", bad[i][0]);
    if (o.status != TG_STATUS_ERROR || strcmp(o.code, "INVALID_ARGS") != 0)
      TG_FAIL("%s: expected INVALID_ARGS, got status %d code '%s': %s",
              bad[i][0], (int)o.status, o.code, o.message);
    ASSERT_CONTAINS(o.message, bad[i][1]);
    outcome_free(&o);
  }
  /* the largest allowed offset is fine: past the end, nothing */
  outcome o = call_tool(rt, "read_file",
                        "{\"path\":\"a.txt\",\"offset\":9007199254740991}");
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(str_at(o.result, "content"), "");
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* ...and the tools check again themselves, for a caller that skips the
 * schema (a host registering the start function without one). */
TEST(read_file_numbers_out_of_range_refused_by_the_tool) {
  char *dir = temp_dir();
  put_file(dir, "a.txt", "one\ntwo\n");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  static const struct { const char *name; tg_tool_start_fn start; } raw[] = {
      {"raw_read_file", tg__read_file_start},
      {"raw_list_dir", tg__list_dir_start}};
  for (size_t i = 0; i < 2; i++) {
    tg_tool_def d;
    memset(&d, 0, sizeof d);
    d.name = raw[i].name;
    d.read_only = 1;
    d.start = raw[i].start;
    char err[TG_ERRMSG];
    ASSERT_OK(tg_tool_register(rt, &d, err), err);
  }
  static const char *const bad[][3] = {
      {"raw_read_file", "{\"path\":\"a.txt\",\"offset\":1e20}",
       "read_file: offset must be an integer from 1 to 9007199254740991, got 1e+20"},
      {"raw_read_file", "{\"path\":\"a.txt\",\"limit\":1e20}",
       "read_file: limit must be an integer from 1 to 9007199254740991, got 1e+20"},
      {"raw_read_file", "{\"path\":\"a.txt\",\"limit\":-1}", "got -1"},
      {"raw_read_file", "{\"path\":\"a.txt\",\"limit\":0.5}", "got 0.5"},
      {"raw_read_file", "{\"path\":\"a.txt\",\"offset\":0}", "got 0"},
      {"raw_read_file", "{\"path\":\"a.txt\",\"offset\":-1e300}", "got -1e+300"},
      {"raw_read_file", "{\"path\":\"a.txt\",\"offset\":\"2\"}", "got a string"},
      {"raw_list_dir", "{\"max_entries\":1e20}",
       "list_dir: max_entries must be an integer from 1 to 100000, got 1e+20"},
      {"raw_list_dir", "{\"max_entries\":-1}", "got -1"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    outcome o = call_tool(rt, bad[i][0], bad[i][1]);
    ASSERT_CALL_ERROR(o, "BAD_ARGS");
    ASSERT_CONTAINS(o.message, bad[i][2]);
    outcome_free(&o);
  }
  outcome o = call_tool(rt, "raw_read_file",
                        "{\"path\":\"a.txt\",\"offset\":2,\"limit\":null}");
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(str_at(o.result, "content"), "two\n");
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* ---- confinement -------------------------------------------------------- */

/* base/root is the workspace; base/outside holds a secret. */
typedef struct {
  char *base, *root, *outside;
} layout;

static layout make_layout(void) {
  layout l;
  l.base = temp_dir();
  make_subdir(l.base, "root");
  make_subdir(l.base, "outside");
  l.root = path_join(l.base, "root");
  l.outside = path_join(l.base, "outside");
  put_file(l.outside, "secret.txt", "secret\n");
  put_file(l.root, "in.txt", "inside\n");
  return l;
}

static void free_layout(layout *l) {
  free(l->root);
  free(l->outside);
  remove_tree(l->base);
}

TEST(confine_dotdot_escape) {
  layout l = make_layout();
  make_subdir(l.root, "sub");
  tg_runtime *rt = runtime_in_workspace(l.root, 0, NULL);
  const char *reads[] = {"../outside/secret.txt", "sub/../../outside/secret.txt",
                         "..", "sub/../.."};
  for (size_t i = 0; i < 4; i++) {
    char args[256];
    snprintf(args, sizeof args, "{\"path\":\"%s\"}", reads[i]);
    outcome o = call_tool(rt, "read_file", args);
    ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
    ASSERT_CONTAINS(o.message, "outside the workspace");
    outcome_free(&o);
  }
  outcome o = call_write_file(rt, "../outside/new.txt", "x", 0);
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  ASSERT_FALSE(file_exists(l.outside, "new.txt"));
  outcome_free(&o);
  /* `..` that comes back inside is fine */
  o = call_tool(rt, "read_file", "{\"path\":\"sub/../in.txt\"}");
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(str_at(o.result, "path"), "in.txt");
  outcome_free(&o);
  /* `..` through a directory that does not exist: out is out, and in is
   * refused rather than guessed at */
  o = call_write_file(rt, "nodir/../../outside/x.txt", "x", 1);
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  ASSERT_FALSE(file_exists(l.outside, "x.txt"));
  outcome_free(&o);
  o = call_write_file(rt, "nodir/../x.txt", "x", 1);
  ASSERT_CALL_ERROR(o, "BAD_PATH");
  ASSERT_FALSE(file_exists(l.root, "nodir"));
  outcome_free(&o);
  tg_runtime_free(rt);
  free_layout(&l);
}

TEST(confine_absolute_paths) {
  layout l = make_layout();
  tg_runtime *rt = runtime_in_workspace(l.root, 0, NULL);
  outcome o = call_tool(rt, "read_file", "{\"path\":\"/etc/passwd\"}");
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  char *secret = path_join(l.outside, "secret.txt");
  o = call_write_file(rt, secret, "overwritten", 0);
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  char *s = file_text(l.outside, "secret.txt");
  ASSERT_STR_EQ(s, "secret\n");
  free(s);
  free(secret);
  /* an absolute path inside the root is fine, and reported relative */
  char *in = path_join(l.root, "in.txt");
  cJSON *a = cJSON_CreateObject();
  cJSON_AddStringToObject(a, "path", in);
  o = call_tool_args(rt, "read_file", a);
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(str_at(o.result, "path"), "in.txt");
  outcome_free(&o);
  cJSON_Delete(a);
  free(in);
  tg_runtime_free(rt);
  free_layout(&l);
}

TEST(confine_symlink_in_the_middle) {
  layout l = make_layout();
  make_symlink(l.outside, l.root, "link");
  tg_runtime *rt = runtime_in_workspace(l.root, 0, NULL);
  outcome o = call_tool(rt, "read_file", "{\"path\":\"link/secret.txt\"}");
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  ASSERT_CONTAINS(o.message, "through a symlink");
  outcome_free(&o);
  o = call_write_file(rt, "link/planted.txt", "x", 0);
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  ASSERT_FALSE(file_exists(l.outside, "planted.txt"));
  outcome_free(&o);
  o = call_tool(rt, "list_dir", "{\"path\":\"link\"}");
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  o = call_apply_patch(rt,
                       "--- /dev/null\n+++ b/link/p.txt\n@@ -0,0 +1 @@\n+x\n");
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  ASSERT_FALSE(file_exists(l.outside, "p.txt"));
  outcome_free(&o);
  tg_runtime_free(rt);
  free_layout(&l);
}

TEST(confine_symlink_at_the_end) {
  layout l = make_layout();
  char *secret = path_join(l.outside, "secret.txt");
  char *ghost = path_join(l.outside, "ghost.txt");
  make_symlink(secret, l.root, "evil.txt");
  make_symlink(ghost, l.root, "dangling.txt");
  make_symlink("in.txt", l.root, "alias.txt"); /* stays inside: allowed */
  tg_runtime *rt = runtime_in_workspace(l.root, 0, NULL);
  outcome o = call_tool(rt, "read_file", "{\"path\":\"evil.txt\"}");
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  o = call_write_file(rt, "evil.txt", "pwned", 0);
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  char *s = file_text(l.outside, "secret.txt");
  ASSERT_STR_EQ(s, "secret\n");
  free(s);
  /* a dangling link would create its target outside: refused */
  o = call_write_file(rt, "dangling.txt", "pwned", 0);
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  ASSERT_CONTAINS(o.message, "dangling");
  ASSERT_FALSE(file_exists(l.outside, "ghost.txt"));
  outcome_free(&o);
  o = call_apply_patch(rt, "--- a/evil.txt\n+++ b/evil.txt\n@@ -1 +1 @@\n"
                           "-secret\n+pwned\n");
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  /* a symlink that stays inside resolves to its target */
  o = call_tool(rt, "read_file", "{\"path\":\"alias.txt\"}");
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(str_at(o.result, "path"), "in.txt");
  ASSERT_STR_EQ(str_at(o.result, "content"), "inside\n");
  outcome_free(&o);
  o = call_write_file(rt, "alias.txt", "changed\n", 0);
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(str_at(o.result, "path"), "in.txt");
  outcome_free(&o);
  s = file_text(l.root, "in.txt");
  ASSERT_STR_EQ(s, "changed\n");
  free(s);
  char buf[64];
  char *alias = path_join(l.root, "alias.txt");
  ssize_t k = readlink(alias, buf, sizeof buf - 1);
  ASSERT_TRUE(k > 0); /* still a symlink */
  free(alias);
  free(secret);
  free(ghost);
  tg_runtime_free(rt);
  free_layout(&l);
}

/* Paths resolve as the kernel would (issue 8, item 14): a path spelled as
 * a directory ("a.txt/", "a.txt/.") is ENOTDIR on a file, and "new/" does
 * not create a file "new" (EISDIR). These used to read or write a.txt and
 * create "new". */
TEST(paths_spelled_as_a_directory_are_not_files) {
  char *dir = temp_dir();
  put_file(dir, "a.txt", "one\n");
  make_subdir(dir, "sub");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  static const char *const reads[] = {"a.txt/", "a.txt/.", "a.txt//",
                                      "./a.txt/"};
  for (size_t i = 0; i < sizeof reads / sizeof *reads; i++) {
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "path", reads[i]);
    outcome o = call_tool_args(rt, "read_file", a);
    cJSON_Delete(a);
    ASSERT_CALL_ERROR(o, "NOT_A_DIRECTORY");
    ASSERT_CONTAINS(o.message, "'a.txt' is a regular file, not a directory");
    outcome_free(&o);
  }
  outcome o = call_tool(rt, "list_dir", "{\"path\":\"a.txt/\"}");
  ASSERT_CALL_ERROR(o, "NOT_A_DIRECTORY");
  outcome_free(&o);
  o = call_write_file(rt, "a.txt/", "pwned\n", 0);
  ASSERT_CALL_ERROR(o, "NOT_A_DIRECTORY");
  outcome_free(&o);
  o = call_write_file(rt, "new/", "x\n", 0);
  ASSERT_CALL_ERROR(o, "BAD_PATH");
  ASSERT_CONTAINS(o.message, "write_file: 'new/' ends with '/', so it names a "
                             "directory");
  outcome_free(&o);
  o = call_write_file(rt, "new/.", "x\n", 0);
  ASSERT_CALL_ERROR(o, "BAD_PATH");
  outcome_free(&o);
  o = call_write_file(rt, "d1/d2/", "x\n", 1);
  ASSERT_CALL_ERROR(o, "BAD_PATH");
  outcome_free(&o);
  o = call_apply_patch(rt, "--- /dev/null\n+++ b/new/\n@@ -0,0 +1 @@\n+x\n");
  ASSERT_CALL_ERROR(o, "BAD_PATH");
  ASSERT_CONTAINS(o.message, "apply_patch: 'new/' ends with '/'");
  outcome_free(&o);
  o = call_apply_patch(rt, "--- a/a.txt/\n+++ b/a.txt/\n@@ -1 +1 @@\n"
                           "-one\n+pwned\n");
  ASSERT_CALL_ERROR(o, "NOT_A_DIRECTORY");
  outcome_free(&o);
  ASSERT_FALSE(file_exists(dir, "new"));
  ASSERT_FALSE(file_exists(dir, "d1"));
  char *s = file_text(dir, "a.txt");
  ASSERT_STR_EQ(s, "one\n");
  free(s);
  ASSERT_INT_EQ(count_temp_files(dir, 0), 0);
  /* a directory spelled so is still a directory; files as usual */
  o = call_tool(rt, "list_dir", "{\"path\":\"sub/\"}");
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  o = call_tool(rt, "read_file", "{\"path\":\"sub/.\"}");
  ASSERT_CALL_ERROR(o, "NOT_A_REGULAR_FILE");
  outcome_free(&o);
  o = call_write_file(rt, "sub/new.txt", "x\n", 0);
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* A path through a file names that file, with the kernel's ENOTDIR (it
 * said NOT_FOUND, "a component of the path is a file"); a name longer than
 * a file name may be says so (it said "the path is too long"). */
TEST(paths_refusals_name_the_real_cause) {
  char *dir = temp_dir();
  put_file(dir, "a.txt", "one\n");
  make_subdir(dir, "sub");
  put_file(dir, "sub/f", "x\n");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_tool(rt, "read_file", "{\"path\":\"a.txt/b\"}");
  ASSERT_CALL_ERROR(o, "NOT_A_DIRECTORY");
  ASSERT_CONTAINS(o.message, "'a.txt/b': 'a.txt' is a regular file, not a "
                             "directory, so there is nothing below it");
  outcome_free(&o);
  o = call_write_file(rt, "sub/f/deeper/x.txt", "x\n", 1);
  ASSERT_CALL_ERROR(o, "NOT_A_DIRECTORY");
  ASSERT_CONTAINS(o.message, "'sub/f' is a regular file");
  outcome_free(&o);
  ASSERT_FALSE(file_exists(dir, "sub/f/deeper"));
  char name[300];
  memset(name, 'n', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  o = call_write_file(rt, name, "x\n", 0);
  ASSERT_CALL_ERROR(o, "BAD_PATH");
  ASSERT_CONTAINS(o.message, "is 299 bytes long, over the 255 a file name "
                             "may have");
  outcome_free(&o);
  char *longpath = malloc(PATH_MAX + 10);
  ASSERT_NOT_NULL(longpath);
  for (size_t i = 0; i < PATH_MAX + 8; i += 2) memcpy(longpath + i, "d/", 2);
  longpath[PATH_MAX + 8] = '\0';
  o = call_write_file(rt, longpath, "x\n", 1);
  ASSERT_CALL_ERROR(o, "BAD_PATH");
  ASSERT_CONTAINS(o.message, "over the 4095 a path may have");
  outcome_free(&o);
  free(longpath);
  ASSERT_FALSE(file_exists(dir, "d"));
  /* nothing is said of what lies outside: "/etc/passwd/x" is outside, not
   * "'/etc/passwd' is a regular file" (nor was it NOT_FOUND) */
  o = call_tool(rt, "read_file", "{\"path\":\"/etc/passwd/x\"}");
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  make_symlink("/etc/passwd", dir, "pw");
  o = call_tool(rt, "read_file", "{\"path\":\"pw/x\"}");
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  /* a symlink loop is named as one */
  make_symlink("loop2", dir, "loop1");
  make_symlink("loop1", dir, "loop2");
  o = call_tool(rt, "read_file", "{\"path\":\"loop1\"}");
  ASSERT_CALL_ERROR(o, "BAD_PATH");
  ASSERT_CONTAINS(o.message, "symlink loop");
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* A file that appears where create_dirs makes a directory (after the path
 * was resolved) is named as not a directory (it was NOT_FOUND). */
TEST(make_parents_names_what_is_in_the_way) {
  char *dir = temp_dir();
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  tg_fs_path p;
  tg_fs_err e = {0};
  ASSERT_OK(tg__fs_resolve(rt->core.fs, "x/y/z.txt", &p, &e), e.msg);
  ASSERT_INT_EQ(p.missing, 3);
  put_file(dir, "x", "in the way\n");
  ASSERT_INT_EQ(tg__fs_make_parents(rt->core.fs, &p, NULL, &e), -1);
  ASSERT_STR_EQ(e.code, "NOT_A_DIRECTORY");
  ASSERT_CONTAINS(e.msg, "cannot create 'x/y/z.txt': 'x' is in the way and is "
                         "not a directory");
  tg__fs_path_free(&p);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* /dev/stdin when stdin is a pipe: /dev/stdin -> /proc/self/fd/0 ->
 * "pipe:[N]", which realpath cannot follow, so it was called a dangling
 * symlink ("points to nothing"). It is a pipe with no path: outside the
 * workspace when /proc is not a root, not a regular file when it is. */
TEST(confine_dev_stdin_pipe_is_not_a_dangling_symlink) {
  int fds[2];
  ASSERT_OK(pipe(fds));
  ASSERT_INT_EQ(dup2(fds[0], 0), 0); /* this test runs in its own process */
  char *dir = temp_dir();
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_tool(rt, "read_file", "{\"path\":\"/dev/stdin\"}");
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  ASSERT_CONTAINS(o.message, "to a pipe that has no path in the filesystem");
  if (strstr(o.message, "dangling")) TG_FAIL("misnamed: %s", o.message);
  outcome_free(&o);
  tg_runtime_free(rt);
  const char *roots[] = {dir, "/dev", "/proc", NULL};
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.default_verdict = TG_VERDICT_ALLOW;
  cfg.workspace_roots = roots;
  char err[TG_ERRMSG];
  rt = tg_runtime_new(&cfg, NULL, err);
  ASSERT_NOT_NULL(rt);
  o = call_tool(rt, "read_file", "{\"path\":\"/dev/stdin\"}");
  ASSERT_CALL_ERROR(o, "NOT_A_REGULAR_FILE");
  ASSERT_CONTAINS(o.message, "'stdin' -> '/proc/self/fd/0' to a pipe");
  outcome_free(&o);
  o = call_write_file(rt, "/dev/stdin", "pwned", 0);
  ASSERT_CALL_ERROR(o, "NOT_A_REGULAR_FILE");
  outcome_free(&o);
  ASSERT_OK(fcntl(fds[0], F_SETFL, O_NONBLOCK));
  char c;
  ASSERT_TRUE(read(fds[0], &c, 1) < 0 && errno == EAGAIN); /* nothing written */
  tg_runtime_free(rt);
  close(fds[1]);
  remove_tree(dir);
}

/* A dangling symlink that points outside by a relative path is outside
 * the workspace (it was "points to nothing", BROKEN_SYMLINK, as if it
 * stayed inside); one that stays inside is BROKEN_SYMLINK. */
TEST(confine_relative_dangling_symlinks_classified) {
  layout l = make_layout();
  make_symlink("../outside/ghost.txt", l.root, "away.txt");
  make_symlink("nothere.txt", l.root, "near.txt");
  tg_runtime *rt = runtime_in_workspace(l.root, 0, NULL);
  outcome o = call_write_file(rt, "away.txt", "pwned", 0);
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  ASSERT_CONTAINS(o.message, "dangling");
  ASSERT_CONTAINS(o.message, "points outside the workspace");
  outcome_free(&o);
  ASSERT_FALSE(file_exists(l.outside, "ghost.txt"));
  o = call_write_file(rt, "near.txt", "x", 0);
  ASSERT_CALL_ERROR(o, "BROKEN_SYMLINK");
  ASSERT_CONTAINS(o.message, "'near.txt' -> 'nothere.txt', which is dangling");
  outcome_free(&o);
  ASSERT_FALSE(file_exists(l.root, "nothere.txt"));
  tg_runtime_free(rt);
  free_layout(&l);
}

/* /work/rootX is not inside /work/root: containment is by components. */
TEST(confine_prefix_sibling) {
  char *base = temp_dir();
  make_subdir(base, "root");
  make_subdir(base, "rootX");
  char *root = path_join(base, "root"), *sib = path_join(base, "rootX");
  put_file(sib, "f.txt", "sibling\n");
  make_symlink("../rootX", root, "s");
  tg_runtime *rt = runtime_in_workspace(root, 0, NULL);
  char *abs = path_join(sib, "f.txt");
  cJSON *a = cJSON_CreateObject();
  cJSON_AddStringToObject(a, "path", abs);
  outcome o = call_tool_args(rt, "read_file", a);
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  cJSON_Delete(a);
  o = call_tool(rt, "read_file", "{\"path\":\"../rootX/f.txt\"}");
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  o = call_tool(rt, "read_file", "{\"path\":\"s/f.txt\"}");
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  o = call_write_file(rt, "s/new.txt", "x", 0);
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  ASSERT_FALSE(file_exists(sib, "new.txt"));
  outcome_free(&o);
  free(abs);
  free(root);
  free(sib);
  tg_runtime_free(rt);
  remove_tree(base);
}

/* A device is refused without being opened (/dev as a second root). */
TEST(confine_device_refused) {
  char *dir = temp_dir();
  const char *roots[] = {dir, "/dev", NULL};
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.default_verdict = TG_VERDICT_ALLOW;
  cfg.workspace_roots = roots;
  char err[TG_ERRMSG];
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  ASSERT_NOT_NULL(rt);
  outcome o = call_tool(rt, "read_file", "{\"path\":\"/dev/null\"}");
  ASSERT_CALL_ERROR(o, "NOT_A_REGULAR_FILE");
  ASSERT_CONTAINS(o.message, "character device");
  outcome_free(&o);
  o = call_tool(rt, "read_file", "{\"path\":\"/dev/zero\"}");
  ASSERT_CALL_ERROR(o, "NOT_A_REGULAR_FILE");
  outcome_free(&o);
  o = call_write_file(rt, "/dev/null", "x", 0);
  ASSERT_CALL_ERROR(o, "NOT_A_REGULAR_FILE");
  outcome_free(&o);
  ASSERT_INT_EQ(count_temp_files("/dev", 0), 0);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* A FIFO is refused at once: no read that waits for a writer forever. */
TEST(confine_fifo_does_not_hang) {
  char *dir = temp_dir();
  char *p = path_join(dir, "pipe");
  ASSERT_OK(mkfifo(p, 0644));
  free(p);
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_tool(rt, "read_file", "{\"path\":\"pipe\"}");
  ASSERT_CALL_ERROR(o, "NOT_A_REGULAR_FILE");
  ASSERT_CONTAINS(o.message, "FIFO");
  outcome_free(&o);
  o = call_write_file(rt, "pipe", "x", 0);
  ASSERT_CALL_ERROR(o, "NOT_A_REGULAR_FILE");
  outcome_free(&o);
  o = call_apply_patch(rt, "--- a/pipe\n+++ b/pipe\n@@ -1 +1 @@\n-a\n+b\n");
  ASSERT_CALL_ERROR(o, "NOT_A_REGULAR_FILE");
  outcome_free(&o);
  o = call_tool(rt, "list_dir", "{}");
  ASSERT_CALL_OK(o);
  const cJSON *e0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o.result, "entries"), 0);
  ASSERT_STR_EQ(str_at(e0, "type"), "other");
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(confine_size_limit) {
  char *dir = temp_dir();
  char big[2001];
  memset(big, 'x', 2000);
  big[2000] = '\0';
  put_file(dir, "big.txt", big);
  put_file(dir, "small.txt", "a\n");
  tg_runtime *rt = runtime_in_workspace(dir, 1000, NULL);
  outcome o = call_tool(rt, "read_file", "{\"path\":\"big.txt\"}");
  ASSERT_CALL_ERROR(o, "TOO_LARGE");
  ASSERT_CONTAINS(o.message, "2000 bytes");
  outcome_free(&o);
  o = call_write_file(rt, "new.txt", big, 0);
  ASSERT_CALL_ERROR(o, "TOO_LARGE");
  ASSERT_FALSE(file_exists(dir, "new.txt"));
  outcome_free(&o);
  char patch[2200];
  snprintf(patch, sizeof patch,
           "--- a/small.txt\n+++ b/small.txt\n@@ -1 +1 @@\n-a\n+%s\n", big);
  o = call_apply_patch(rt, patch);
  ASSERT_CALL_ERROR(o, "TOO_LARGE");
  outcome_free(&o);
  char *s = file_text(dir, "small.txt");
  ASSERT_STR_EQ(s, "a\n");
  free(s);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* Without openat2 (old kernels, seccomp) the path-based fallback still
 * refuses every escape the resolver sees. */
TEST(confine_without_openat2) {
  layout l = make_layout();
  char *secret = path_join(l.outside, "secret.txt");
  make_symlink(secret, l.root, "evil.txt");
  make_symlink(l.outside, l.root, "link");
  tg_runtime *rt = runtime_in_workspace(l.root, 0, NULL);
  rt->core.fs->no_openat2 = 1;
  outcome o = call_tool(rt, "read_file", "{\"path\":\"in.txt\"}");
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  o = call_write_file(rt, "sub/new.txt", "n\n", 1);
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  o = call_write_file(rt, "evil.txt", "pwned", 0);
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  o = call_tool(rt, "read_file", "{\"path\":\"link/secret.txt\"}");
  ASSERT_CALL_ERROR(o, "OUTSIDE_WORKSPACE");
  outcome_free(&o);
  o = call_tool(rt, "list_dir", "{\"recursive\":true}");
  ASSERT_CALL_OK(o);
  /* evil.txt in.txt link sub sub/new.txt */
  ASSERT_NUM_EQ(num_at(o.result, "count"), 5);
  outcome_free(&o);
  char *s = file_text(l.outside, "secret.txt");
  ASSERT_STR_EQ(s, "secret\n");
  free(s);
  free(secret);
  tg_runtime_free(rt);
  free_layout(&l);
}

/* Relative paths go to the first root; any root is reachable by absolute
 * path or through a symlink from another root. */
TEST(confine_several_roots) {
  char *a = temp_dir(), *b = temp_dir();
  put_file(b, "other.txt", "in b\n");
  make_symlink(b, a, "to_b");
  const char *roots[] = {a, b, NULL};
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.default_verdict = TG_VERDICT_ALLOW;
  cfg.workspace_roots = roots;
  char err[TG_ERRMSG];
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  ASSERT_NOT_NULL(rt);
  outcome o = call_write_file(rt, "first.txt", "1", 0);
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  ASSERT_TRUE(file_exists(a, "first.txt"));
  o = call_tool(rt, "read_file", "{\"path\":\"to_b/other.txt\"}");
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(str_at(o.result, "path"), "other.txt"); /* relative to b */
  outcome_free(&o);
  char *abs = path_join(b, "new.txt");
  o = call_write_file(rt, abs, "2", 0);
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  ASSERT_TRUE(file_exists(b, "new.txt"));
  cJSON *r = tg_changes_recent(rt, 0);
  char real_b[4096];
  ASSERT_TRUE(realpath(b, real_b));
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(r, 1), "root"), real_b);
  cJSON_Delete(r);
  free(abs);
  tg_runtime_free(rt);
  remove_tree(a);
  remove_tree(b);
}

TEST(runtime_refuses_a_missing_root) {
  const char *roots[] = {"/nonexistent/tg-root", NULL};
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.workspace_roots = roots;
  char err[TG_ERRMSG] = "";
  ASSERT_NULL(tg_runtime_new(&cfg, NULL, err));
  ASSERT_CONTAINS(err, "/nonexistent/tg-root");
  const char *none[] = {NULL};
  cfg.workspace_roots = none;
  ASSERT_NULL(tg_runtime_new(&cfg, NULL, err));
  ASSERT_CONTAINS(err, "empty list");
}

/* ---- write_file ------------------------------------------------------- */

TEST(write_file_creates_modifies_keeps_mode) {
  char *dir = temp_dir();
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_write_file(rt, "a.txt", "first\n", 0);
  ASSERT_CALL_OK(o);
  ASSERT_INT_EQ(bool_at(o.result, "created"), 1);
  ASSERT_NUM_EQ(num_at(o.result, "bytes"), 6);
  outcome_free(&o);
  char *p = path_join(dir, "a.txt");
  ASSERT_OK(chmod(p, 0640));
  o = call_write_file(rt, "a.txt", "second\n", 0);
  ASSERT_CALL_OK(o);
  ASSERT_INT_EQ(bool_at(o.result, "created"), 0);
  outcome_free(&o);
  struct stat st;
  ASSERT_OK(stat(p, &st));
  ASSERT_INT_EQ(st.st_mode & 07777, 0640);
  char *s = file_text(dir, "a.txt");
  ASSERT_STR_EQ(s, "second\n");
  free(s);
  free(p);
  ASSERT_INT_EQ(count_temp_files(dir, 0), 0);
  /* missing directories: refused, unless create_dirs */
  o = call_write_file(rt, "x/y/z.txt", "deep\n", 0);
  ASSERT_CALL_ERROR(o, "NOT_FOUND");
  ASSERT_CONTAINS(o.message, "create_dirs");
  outcome_free(&o);
  o = call_write_file(rt, "x/y/z.txt", "deep\n", 1);
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(str_at(o.result, "path"), "x/y/z.txt");
  outcome_free(&o);
  s = file_text(dir, "x/y/z.txt");
  ASSERT_STR_EQ(s, "deep\n");
  free(s);
  /* a directory is not overwritten */
  o = call_write_file(rt, "x", "no", 0);
  ASSERT_CALL_ERROR(o, "NOT_A_REGULAR_FILE");
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* The child writes two big contents in turn, for ever; we SIGKILL it at
 * random moments. The file must always be one content or the other. */
static char *filled(size_t n, char c) {
  char *s = malloc(n + 1);
  ASSERT_NOT_NULL(s);
  for (size_t i = 0; i < n; i++) s[i] = (i % 64 == 63) ? '\n' : c;
  s[n] = '\0';
  return s;
}

static void writer_child(const char *dir, const char *a, const char *b,
                         int ready_fd) {
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  for (int i = 0;; i++) {
    outcome o = call_write_file(rt, "big.txt", i % 2 ? a : b, 0);
    if (o.status != TG_STATUS_OK) _exit(3);
    outcome_free(&o);
    if (i == 0 && write(ready_fd, "r", 1) != 1) _exit(4);
  }
}

TEST(write_file_is_atomic_under_sigkill) {
  char *dir = temp_dir();
  size_t na = 3u << 20, nb = 5u << 20;
  char *a = filled(na, 'a'), *b = filled(nb, 'b');
  put_file(dir, "big.txt", a);
  srand((unsigned)time(NULL));
  int leftovers = 0, saw_a = 0, saw_b = 0;
  for (int round = 0; round < 8; round++) {
    int pfd[2];
    ASSERT_OK(pipe(pfd));
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
      close(pfd[0]);
      writer_child(dir, a, b, pfd[1]);
      _exit(0);
    }
    close(pfd[1]);
    char c;
    ASSERT_INT_EQ(read(pfd[0], &c, 1), 1); /* it has written once */
    close(pfd[0]);
    usleep((useconds_t)(1000 + rand() % 60000));
    kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    ASSERT_TRUE(WIFSIGNALED(st)); /* killed mid-loop, not failed */
    char *got = file_text(dir, "big.txt");
    ASSERT_NOT_NULL(got);
    size_t n = strlen(got);
    int is_a = n == na && memcmp(got, a, na) == 0;
    int is_b = n == nb && memcmp(got, b, nb) == 0;
    if (!is_a && !is_b)
      TG_FAIL("round %d: big.txt is %zu bytes, neither content", round, n);
    saw_a += is_a;
    saw_b += is_b;
    free(got);
    /* a kill mid-write may leave the temp file, under its documented
     * name, and nothing else */
    leftovers += count_temp_files(dir, 1);
    DIR *d = opendir(dir);
    struct dirent *e;
    int others = 0;
    while ((e = readdir(d)))
      others += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
                strcmp(e->d_name, "big.txt");
    closedir(d);
    ASSERT_INT_EQ(others, 0);
  }
  printf("  (8 kills: %d left the old/new a, %d b; %d temp files left)\n",
         saw_a, saw_b, leftovers);
  free(a);
  free(b);
  remove_tree(dir);
}

/* ---- list_dir ------------------------------------------------------------ */

TEST(list_dir_sorted_recursive_bounded) {
  char *dir = temp_dir();
  make_subdir(dir, "b");
  make_subdir(dir, "b/inner");
  put_file(dir, "b/inner/deep.txt", "d");
  put_file(dir, "b/x.txt", "xx");
  put_file(dir, "a.txt", "aaa");
  put_file(dir, "c.txt", "");
  make_symlink("b", dir, "link");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_tool(rt, "list_dir", "{}");
  ASSERT_CALL_OK(o);
  const cJSON *es = cJSON_GetObjectItemCaseSensitive(o.result, "entries");
  ASSERT_INT_EQ(cJSON_GetArraySize(es), 4);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(es, 0), "path"), "a.txt");
  ASSERT_NUM_EQ(num_at(cJSON_GetArrayItem(es, 0), "size"), 3);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(es, 1), "path"), "b");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(es, 1), "type"), "dir");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(es, 3), "type"), "symlink");
  ASSERT_INT_EQ(bool_at(o.result, "truncated"), 0);
  outcome_free(&o);
  o = call_tool(rt, "list_dir", "{\"recursive\":true}");
  ASSERT_CALL_OK(o);
  es = cJSON_GetObjectItemCaseSensitive(o.result, "entries");
  const char *want[] = {"a.txt", "b", "b/inner", "b/inner/deep.txt", "b/x.txt",
                        "c.txt", "link"};
  ASSERT_INT_EQ(cJSON_GetArraySize(es), 7); /* the symlink is not followed */
  for (int i = 0; i < 7; i++)
    ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(es, i), "path"), want[i]);
  outcome_free(&o);
  o = call_tool(rt, "list_dir", "{\"recursive\":true,\"max_entries\":3}");
  ASSERT_CALL_OK(o);
  ASSERT_NUM_EQ(num_at(o.result, "count"), 3);
  ASSERT_INT_EQ(bool_at(o.result, "truncated"), 1);
  outcome_free(&o);
  o = call_tool(rt, "list_dir", "{\"path\":\"b\"}");
  ASSERT_CALL_OK(o);
  es = cJSON_GetObjectItemCaseSensitive(o.result, "entries");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(es, 0), "path"), "b/inner");
  outcome_free(&o);
  o = call_tool(rt, "list_dir", "{\"path\":\"a.txt\"}");
  ASSERT_CALL_ERROR(o, "NOT_A_DIRECTORY");
  outcome_free(&o);
  o = call_tool(rt, "list_dir", "{\"max_entries\":0}");
  ASSERT_STATUS(o, TG_STATUS_ERROR); /* schema: minimum 1 */
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* ---- apply_patch ----------------------------------------------------------- */

static const char two_files[] =
    "diff --git a/one.txt b/one.txt\n"
    "--- a/one.txt\n"
    "+++ b/one.txt\n"
    "@@ -1,3 +1,3 @@\n"
    " alpha\n"
    "-beta\n"
    "+BETA\n"
    " gamma\n"
    "diff --git a/two.txt b/two.txt\n"
    "--- a/two.txt\n"
    "+++ b/two.txt\n"
    "@@ -1,2 +1,3 @@\n"
    " red\n"
    "+green\n"
    " blue\n";

TEST(apply_patch_two_files) {
  char *dir = temp_dir();
  put_file(dir, "one.txt", "alpha\nbeta\ngamma\n");
  put_file(dir, "two.txt", "red\nblue\n");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_apply_patch(rt, two_files);
  ASSERT_CALL_OK(o);
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(o.result, "files");
  ASSERT_INT_EQ(cJSON_GetArraySize(files), 2);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(files, 0), "path"), "one.txt");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(files, 0), "type"), "modified");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(files, 1), "path"), "two.txt");
  outcome_free(&o);
  char *s = file_text(dir, "one.txt");
  ASSERT_STR_EQ(s, "alpha\nBETA\ngamma\n");
  free(s);
  s = file_text(dir, "two.txt");
  ASSERT_STR_EQ(s, "red\ngreen\nblue\n");
  free(s);
  ASSERT_INT_EQ(count_temp_files(dir, 0), 0);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(apply_patch_second_file_fails_nothing_changes) {
  char *dir = temp_dir();
  put_file(dir, "one.txt", "alpha\nbeta\ngamma\n");
  put_file(dir, "two.txt", "red\nyellow\n"); /* not what the patch expects */
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_apply_patch(rt, two_files);
  ASSERT_CALL_ERROR(o, "PATCH_CONFLICT");
  ASSERT_CONTAINS(o.message, "hunk 1 of 'two.txt'");
  ASSERT_CONTAINS(o.message, "@@ -1,2 +1,3 @@");
  ASSERT_CONTAINS(o.message, "blue");
  outcome_free(&o);
  char *s = file_text(dir, "one.txt");
  ASSERT_STR_EQ(s, "alpha\nbeta\ngamma\n");
  free(s);
  s = file_text(dir, "two.txt");
  ASSERT_STR_EQ(s, "red\nyellow\n");
  free(s);
  cJSON *recent = tg_changes_recent(rt, 0);
  ASSERT_INT_EQ(cJSON_GetArraySize(recent), 0);
  cJSON_Delete(recent);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(apply_patch_new_deleted_renamed) {
  char *dir = temp_dir();
  put_file(dir, "old.txt", "bye\n");
  put_file(dir, "from.txt", "keep\nthis\n");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_apply_patch(rt,
      "--- /dev/null\n"
      "+++ b/src/new.txt\n"
      "@@ -0,0 +1,2 @@\n"
      "+hello\n"
      "+world\n"
      "--- a/old.txt\n"
      "+++ /dev/null\n"
      "@@ -1 +0,0 @@\n"
      "-bye\n"
      "diff --git a/from.txt b/to.txt\n"
      "similarity index 80%\n"
      "rename from from.txt\n"
      "rename to to.txt\n"
      "--- a/from.txt\n"
      "+++ b/to.txt\n"
      "@@ -1,2 +1,2 @@\n"
      " keep\n"
      "-this\n"
      "+that\n");
  ASSERT_CALL_OK(o);
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(o.result, "files");
  ASSERT_INT_EQ(cJSON_GetArraySize(files), 3);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(files, 0), "type"), "created");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(files, 0), "path"), "src/new.txt");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(files, 1), "type"), "deleted");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(files, 2), "type"), "renamed");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(files, 2), "path"), "to.txt");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(files, 2), "old_path"), "from.txt");
  outcome_free(&o);
  char *s = file_text(dir, "src/new.txt");
  ASSERT_STR_EQ(s, "hello\nworld\n");
  free(s);
  ASSERT_FALSE(file_exists(dir, "old.txt"));
  ASSERT_FALSE(file_exists(dir, "from.txt"));
  s = file_text(dir, "to.txt");
  ASSERT_STR_EQ(s, "keep\nthat\n");
  free(s);
  /* creating what exists, deleting what does not: refused */
  o = call_apply_patch(rt, "--- /dev/null\n+++ b/to.txt\n@@ -0,0 +1 @@\n+x\n");
  ASSERT_CALL_ERROR(o, "ALREADY_EXISTS");
  outcome_free(&o);
  o = call_apply_patch(rt,
                       "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n");
  ASSERT_CALL_ERROR(o, "NOT_FOUND");
  outcome_free(&o);
  /* a deletion must remove the whole content it claims */
  o = call_apply_patch(rt,
                       "--- a/to.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-keep\n");
  ASSERT_CALL_ERROR(o, "PATCH_CONFLICT");
  ASSERT_TRUE(file_exists(dir, "to.txt"));
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(apply_patch_offsets_and_missing_newline) {
  char *dir = temp_dir();
  put_file(dir, "f.txt", "0\n1\n2\n3\n4\n5\n6\n7\n8\nlast");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  /* line numbers off by 3, context exact: applies where it matches */
  outcome o = call_apply_patch(rt, "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n"
                                   " 3\n-4\n+four\n 5\n");
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  o = call_apply_patch(rt, "--- a/f.txt\n+++ b/f.txt\n@@ -9,2 +9,2 @@\n 8\n"
                           "-last\n\\ No newline at end of file\n+LAST\n");
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  char *s = file_text(dir, "f.txt");
  ASSERT_STR_EQ(s, "0\n1\n2\n3\nfour\n5\n6\n7\n8\nLAST\n");
  free(s);
  /* context that is not in the file: refused, with the line it wanted */
  o = call_apply_patch(rt, "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n"
                           " nine\n-ten\n+TEN\n");
  ASSERT_CALL_ERROR(o, "PATCH_CONFLICT");
  ASSERT_CONTAINS(o.message, "\"nine\"");
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(apply_patch_malformed) {
  char *dir = temp_dir();
  put_file(dir, "f.txt", "a\n");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_apply_patch(rt, "just some text\n");
  ASSERT_CALL_ERROR(o, "PATCH_PARSE");
  ASSERT_CONTAINS(o.message, "no file sections");
  outcome_free(&o);
  o = call_apply_patch(rt,
                       "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\n+b\n");
  ASSERT_CALL_ERROR(o, "PATCH_PARSE");
  ASSERT_CONTAINS(o.message, "@@ counts");
  outcome_free(&o);
  o = call_apply_patch(rt, "--- a/f.txt\n+++ b/f.txt\n@@ bogus @@\n-a\n");
  ASSERT_CALL_ERROR(o, "PATCH_PARSE");
  ASSERT_CONTAINS(o.message, "malformed hunk header");
  outcome_free(&o);
  o = call_apply_patch(rt, "@@ -1 +1 @@\n-a\n+b\n");
  ASSERT_CALL_ERROR(o, "PATCH_PARSE");
  outcome_free(&o);
  char *s = file_text(dir, "f.txt");
  ASSERT_STR_EQ(s, "a\n");
  free(s);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* ---- git diffs with modes ------------------------------------------------
 * The patches are what `git diff` prints, made by running git in a temp
 * repository: the same text an agent copies from its own repository. */

/* Runs a shell command in dir; fails the test when it fails. */
static void sh_in(const char *dir, const char *cmd) {
  char buf[2048];
  snprintf(buf, sizeof buf, "cd '%s' && { %s; } >/dev/null 2>&1", dir, cmd);
  if (system(buf) != 0) TG_FAIL("command failed in %s: %s", dir, cmd);
}

/* The stdout of a shell command run in dir (malloc'd). */
static char *sh_out(const char *dir, const char *cmd) {
  char buf[2048];
  snprintf(buf, sizeof buf, "cd '%s' && %s", dir, cmd);
  FILE *f = popen(buf, "r");
  ASSERT_TRUE(f);
  size_t cap = 1 << 16, n = 0;
  char *out = malloc(cap);
  ASSERT_TRUE(out);
  while ((n += fread(out + n, 1, cap - n - 1, f)) < cap - 1 && !feof(f)) {}
  out[n] = '\0';
  ASSERT_TRUE(pclose(f) == 0);
  return out;
}

static mode_t fs_mode(const char *dir, const char *name) {
  char *p = path_join(dir, name);
  struct stat st;
  int rc = stat(p, &st);
  free(p);
  ASSERT_TRUE(rc == 0);
  return st.st_mode & 07777;
}

static const cJSON *file_entry(const outcome *o, const char *path) {
  const cJSON *f;
  cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(o->result, "files"))
    if (!strcmp(str_at(f, "path"), path)) return f;
  TG_FAIL("no entry for %s in the result", path);
  return NULL;
}

#define GIT "git -c user.name=t -c user.email=t@example.com -c core.fileMode=true "

/* A repository with script.sh (0644), tool.sh (0755), run.sh (0755) and
 * notes.txt committed; then the working tree changed as an agent would. */
static char *git_repo_with_changes(void) {
  char *repo = temp_dir();
  put_file(repo, "script.sh", "echo one\necho two\n");
  put_file(repo, "tool.sh", "echo tool\n");
  put_file(repo, "run.sh", "echo run\necho it\necho now\n");
  put_file(repo, "notes.txt", "keep\n");
  sh_in(repo, "chmod 644 script.sh notes.txt && chmod 755 tool.sh run.sh && "
              GIT "init -q . && " GIT "add -A && " GIT "commit -qm base");
  /* +x and an edit; -x alone; a new executable; an executable renamed */
  put_file(repo, "script.sh", "echo one\necho 2\n");
  put_file(repo, "new.sh", "echo new\n");
  sh_in(repo, "chmod 755 script.sh new.sh && chmod 644 tool.sh && "
              "mkdir bin && " GIT "mv run.sh bin/run.sh && " GIT "add -A");
  return repo;
}

TEST(apply_patch_git_diff_with_modes) {
  char *repo = git_repo_with_changes();
  char *diff = sh_out(repo, GIT "diff --cached -M HEAD");
  ASSERT_CONTAINS(diff, "old mode 100644\nnew mode 100755");
  ASSERT_CONTAINS(diff, "new file mode 100755");
  ASSERT_CONTAINS(diff, "rename from run.sh");
  ASSERT_CONTAINS(diff, "index ");
  /* the workspace is the repository as committed */
  char *ws = temp_dir();
  put_file(ws, "script.sh", "echo one\necho two\n");
  put_file(ws, "tool.sh", "echo tool\n");
  put_file(ws, "run.sh", "echo run\necho it\necho now\n");
  put_file(ws, "notes.txt", "keep\n");
  sh_in(ws, "chmod 644 script.sh notes.txt && chmod 755 tool.sh run.sh");
  tg_runtime *rt = runtime_in_workspace(ws, 0, NULL);
  outcome o = call_apply_patch(rt, diff);
  ASSERT_CALL_OK(o);
  /* the executable bit is applied, and the result says so */
  ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(file_entry(&o, "script.sh"),
                                          "executable")));
  ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(file_entry(&o, "tool.sh"),
                                           "executable")));
  ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(file_entry(&o, "new.sh"),
                                          "executable")));
  ASSERT_STR_EQ(str_at(file_entry(&o, "bin/run.sh"), "type"), "renamed");
  ASSERT_TRUE(!cJSON_GetObjectItemCaseSensitive(file_entry(&o, "bin/run.sh"), "executable"));
  outcome_free(&o);
  ASSERT_TRUE((fs_mode(ws, "script.sh") & 0111) == 0111);
  ASSERT_INT_EQ(fs_mode(ws, "tool.sh") & 0111, 0);
  ASSERT_TRUE(fs_mode(ws, "new.sh") & 0100);
  ASSERT_TRUE(fs_mode(ws, "bin/run.sh") & 0100);      /* kept through the rename */
  ASSERT_INT_EQ(fs_mode(ws, "notes.txt"), 0644);
  char *s = file_text(ws, "script.sh");
  ASSERT_STR_EQ(s, "echo one\necho 2\n");
  free(s);
  s = file_text(ws, "tool.sh");
  ASSERT_STR_EQ(s, "echo tool\n");              /* a mode-only section */
  free(s);
  /* the same tree as git's: nothing differs but the .git folder */
  sh_in(ws, "rm -f .*.tg-*");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "diff -r -x .git . '%s' && "
           "[ -x script.sh ] && [ ! -x tool.sh ] && [ -x bin/run.sh ]", ws);
  sh_in(repo, cmd);
  tg_runtime_free(rt);
  free(diff);
  remove_tree(ws);
  remove_tree(repo);
}

TEST(apply_patch_git_modes_refused_or_rolled_back) {
  char *repo = temp_dir();
  sh_in(repo, GIT "init -q . && echo a > a.txt && " GIT "add -A && "
              GIT "commit -qm base && ln -s a.txt link && " GIT "add -A");
  char *diff = sh_out(repo, GIT "diff --cached HEAD");
  ASSERT_CONTAINS(diff, "new file mode 120000");
  char *ws = temp_dir();
  put_file(ws, "a.txt", "a\n");
  tg_runtime *rt = runtime_in_workspace(ws, 0, NULL);
  outcome o = call_apply_patch(rt, diff);
  ASSERT_CALL_ERROR(o, "PATCH_PARSE");
  ASSERT_CONTAINS(o.message, "symlink");
  ASSERT_TRUE(!file_exists(ws, "link"));
  outcome_free(&o);
  o = call_apply_patch(rt, "diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 1x0755\n");
  ASSERT_CALL_ERROR(o, "PATCH_PARSE");
  ASSERT_CONTAINS(o.message, "octal file mode");
  outcome_free(&o);
  /* a mode that is already the file's changes nothing */
  sh_in(ws, "chmod 644 a.txt");
  o = call_apply_patch(rt, "diff --git a/a.txt b/a.txt\nold mode 100755\nnew mode 100644\n");
  ASSERT_CALL_OK(o);
  ASSERT_INT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o.result, "files")), 0);
  outcome_free(&o);
  /* a patch that fails changes no mode either */
  o = call_apply_patch(rt, "diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 100755\n"
                   "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"
                   "--- a/missing.txt\n+++ b/missing.txt\n@@ -1 +1 @@\n-a\n+b\n");
  ASSERT_CALL_ERROR(o, "NOT_FOUND");
  outcome_free(&o);
  ASSERT_INT_EQ(fs_mode(ws, "a.txt"), 0644);
  tg_runtime_free(rt);
  free(diff);
  remove_tree(ws);
  remove_tree(repo);
}

/* A patch that contradicts itself says so (issue 8, item 14): creating a
 * file twice was "already exists", deleting twice "does not exist", which
 * sent the agent to the disk for a fault in the patch. */
TEST(apply_patch_names_its_own_clashes) {
  char *dir = temp_dir();
  put_file(dir, "a.txt", "one\n");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  static const char *const bad[][2] = {
      {"--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n"
       "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n"
       "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+y\n",
       "the patch creates 'n.txt' twice (file sections 1 and 3, at patch "
       "lines 1 and 10); create it once"},
      {"--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n"
       "--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n",
       "the patch deletes 'a.txt' twice (file sections 1 and 2, at patch "
       "lines 1 and 5); delete it once"},
      {"--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n"
       "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n",
       "file section 2 of the patch (patch line 5) changes 'a.txt', but "
       "section 1 (patch line 1) already deleted it"},
      {"diff --git a/a.txt b/c.txt\nrename from a.txt\nrename to c.txt\n"
       "diff --git a/c.txt b/c.txt\nnew file mode 100644\n--- /dev/null\n"
       "+++ b/c.txt\n@@ -0,0 +1 @@\n+x\n",
       "file section 2 of the patch (patch line 4) creates 'c.txt', but "
       "section 1 (patch line 1) already renamed 'a.txt' to it"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    outcome o = call_apply_patch(rt, bad[i][0]);
    ASSERT_CALL_ERROR(o, "PATCH_CONFLICT");
    ASSERT_CONTAINS(o.message, bad[i][1]);
    outcome_free(&o);
  }
  char *s = file_text(dir, "a.txt");
  ASSERT_STR_EQ(s, "one\n");
  free(s);
  ASSERT_FALSE(file_exists(dir, "n.txt"));
  ASSERT_FALSE(file_exists(dir, "c.txt"));
  /* what exists on disk is still named as such */
  outcome o = call_apply_patch(
      rt, "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n");
  ASSERT_CALL_ERROR(o, "ALREADY_EXISTS");
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* Hunk header counts are checked against the patch before anything is
 * sized from them (issue 8, item 12): `@@ -1,99999999999` made a calloc
 * of ~2 TB (ASan aborts), a count near LONG_MAX overflowed a sum, and a
 * doubled "\ No newline" marker took a line's length below zero (a memcpy
 * of SIZE_MAX bytes). Each is a PATCH_PARSE error that names the line;
 * nothing is written and the next patch applies. */
TEST(apply_patch_hunk_counts_checked_before_allocating) {
  char *dir = temp_dir();
  put_file(dir, "f.txt", "one\ntwo\n");
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  static const char *const bad[][2] = {
      {"--- a/f.txt\n+++ b/f.txt\n@@ -1,99999999999 +1,2 @@\n one\n",
       "patch line 3: malformed hunk header '@@ -1,99999999999 +1,2 @@' "
       "(expected @@ -START,COUNT +START,COUNT @@, numbers of at most "
       "1000000000)"},
      {"--- a/f.txt\n+++ b/f.txt\n@@ -1,9223372036854775807 +1,3 @@\n one\n",
       "malformed hunk header"},
      {"--- a/f.txt\n+++ b/f.txt\n@@ -1,999999999 +1,2 @@\n one\n",
       "patch line 3: hunk @@ -1,999999999 +1,2 @@ of 'b/f.txt' promises "
       "999999999 old and 2 new lines, but the patch has only 1 line after it"},
      {"--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,999999999 @@\n one\n two\n",
       "promises 2 old and 999999999 new lines, but the patch has only 2 lines"},
      {"--- a/f.txt\n+++ b/f.txt\n@@ -1,+2 +1,2 @@\n one\n two\n",
       "malformed hunk header"},
      {"--- a/f.txt\n+++ b/f.txt\n@@ -1,0 +1,0 @@\n",
       "has no lines"},
      {"--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,3 @@\n one\n+\n"
       "\\ No newline at end of file\n\\ No newline at end of file\n two\n",
       "patch line 7: '\\ No newline at end of file' must follow a hunk line, "
       "once"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    outcome o = call_apply_patch(rt, bad[i][0]);
    ASSERT_CALL_ERROR(o, "PATCH_PARSE");
    ASSERT_CONTAINS(o.message, bad[i][1]);
    outcome_free(&o);
  }
  char *s = file_text(dir, "f.txt");
  ASSERT_STR_EQ(s, "one\ntwo\n");
  free(s);
  ASSERT_INT_EQ(count_temp_files(dir, 0), 0);
  outcome o = call_apply_patch(rt, "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n"
                                   " one\n-two\n+TWO\n");
  ASSERT_CALL_OK(o);
  outcome_free(&o);
  s = file_text(dir, "f.txt");
  ASSERT_STR_EQ(s, "one\nTWO\n");
  free(s);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* A small deterministic fuzz of the patch parser and applier: random
 * mutations (bytes changed, cut, and tokens that matter to the parser
 * inserted) of valid patches. Under ASan/UBSan this is where the two
 * defects above showed; here it must end with every patch either parsed
 * and applied within bounds or refused with a message. */
static uint64_t fuzz_next(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

static size_t fuzz_mutate(uint64_t *x, char *buf, size_t n, size_t size) {
  static const char *const seeds[] = {
      "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
      "diff --git a/x b/y\nrename from x\nrename to y\n--- a/x\n+++ b/y\n"
      "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+\n"
      "\\ No newline at end of file\n",
      "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+x\n+\n--- a/g\n+++ "
      "/dev/null\n@@ -1 +0,0 @@\n-q\n",
      "--- a/f.txt\n+++ b/f.txt\n@@ -2,2 +2,3 @@\n two\n+ins\n three\n"
      "@@ -5 +6 @@\n-five\n+FIVE\n"};
  static const char *const toks[] = {
      "@@ ", " @@", "-", "+", " ", "\n", "\\ No newline at end of file\n",
      ",", "0", "1", "99999999999", "-1", "\\", "\"", "--- ", "+++ ",
      "diff --git a/q b/q\n", "rename to ", "/dev/null", "\r", "+\n",
      "1000000000", "9223372036854775807", "18446744073709551616"};
  if (n == 0) {
    const char *seed = seeds[fuzz_next(x) % 4];
    n = strlen(seed);
    memcpy(buf, seed, n);
  }
  size_t at = fuzz_next(x) % (n + 1);
  switch (fuzz_next(x) % 3) {
    case 0:
      if (n) buf[fuzz_next(x) % n] = (char)(fuzz_next(x) & 0xff);
      break;
    case 1: {
      size_t k = 1 + fuzz_next(x) % 8;
      if (at + k > n) k = n - at;
      memmove(buf + at, buf + at + k, n - at - k);
      n -= k;
      break;
    }
    default: {
      const char *t = toks[fuzz_next(x) % (sizeof toks / sizeof *toks)];
      size_t k = strlen(t);
      if (n + k >= size) break;
      memmove(buf + at + k, buf + at, n - at);
      memcpy(buf + at, t, k);
      n += k;
    }
  }
  return n;
}

TEST(patch_parser_survives_random_mutations) {
  static const char content[] = "one\ntwo\nthree\nfour\nfive\nsix";
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  char buf[2048];
  size_t parsed = 0, applied = 0;
  for (int it = 0; it < 4000; it++) {
    size_t n = 0;
    int muts = 1 + (int)(fuzz_next(&x) % 6);
    for (int m = 0; m < muts; m++) n = fuzz_mutate(&x, buf, n, sizeof buf);
    tg_patch p;
    char err[512] = "";
    if (tg__patch_parse(buf, n, &p, err, sizeof err) == 0) {
      parsed++;
      for (size_t i = 0; i < p.nfiles; i++) {
        char *out = NULL;
        size_t len = 0;
        err[0] = '\0';
        if (tg__patch_apply(&p.files[i], content, sizeof content - 1, &out,
                            &len, err, sizeof err) == 0) {
          applied++;
          ASSERT_TRUE(len <= sizeof content - 1 + n);
          ASSERT_INT_EQ(strlen(out), len);
          free(out);
        } else {
          ASSERT_TRUE(err[0]);
        }
      }
    } else {
      ASSERT_TRUE(err[0]);
    }
    tg__patch_free(&p);
  }
  /* the mutations reach the applier */
  ASSERT_TRUE(parsed > 100 && applied > 50);
}

/* A write that fails half-way (the second file is immutable: rename over
 * it fails with EPERM even for root) is undone: the first file, already
 * replaced, is restored. */
TEST(apply_patch_rolls_back_a_failed_write) {
  char *dir = temp_dir();
  put_file(dir, "one.txt", "alpha\nbeta\ngamma\n");
  put_file(dir, "two.txt", "red\nblue\n");
  char *one = path_join(dir, "one.txt");
  ASSERT_OK(chmod(one, 0604));
  if (set_immutable(dir, "two.txt", 1) < 0) {
    printf("  (skipped: cannot set the immutable attribute here)\n");
    free(one);
    remove_tree(dir);
    return;
  }
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_apply_patch(rt, two_files);
  set_immutable(dir, "two.txt", 0);
  ASSERT_CALL_ERROR(o, "PERMISSION_DENIED");
  ASSERT_CONTAINS(o.message, "two.txt");
  ASSERT_CONTAINS(o.message, "restored, nothing was changed");
  outcome_free(&o);
  char *s = file_text(dir, "one.txt");
  ASSERT_STR_EQ(s, "alpha\nbeta\ngamma\n");
  free(s);
  struct stat st;
  ASSERT_OK(stat(one, &st));
  ASSERT_INT_EQ(st.st_mode & 07777, 0604);
  s = file_text(dir, "two.txt");
  ASSERT_STR_EQ(s, "red\nblue\n");
  free(s);
  ASSERT_INT_EQ(count_temp_files(dir, 0), 0);
  cJSON *recent = tg_changes_recent(rt, 0);
  ASSERT_INT_EQ(cJSON_GetArraySize(recent), 0);
  cJSON_Delete(recent);
  free(one);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* A new file in a new directory, then a failure: the directory goes too. */
TEST(apply_patch_rollback_removes_new_dirs) {
  char *dir = temp_dir();
  put_file(dir, "two.txt", "red\nblue\n");
  if (set_immutable(dir, "two.txt", 1) < 0) {
    printf("  (skipped: cannot set the immutable attribute here)\n");
    remove_tree(dir);
    return;
  }
  tg_runtime *rt = runtime_in_workspace(dir, 0, NULL);
  outcome o = call_apply_patch(rt,
      "--- /dev/null\n+++ b/n1/n2/new.txt\n@@ -0,0 +1 @@\n+x\n"
      "--- a/two.txt\n+++ b/two.txt\n@@ -1,2 +1,2 @@\n red\n-blue\n+BLUE\n");
  set_immutable(dir, "two.txt", 0);
  ASSERT_CALL_ERROR(o, "PERMISSION_DENIED");
  outcome_free(&o);
  ASSERT_FALSE(file_exists(dir, "n1"));
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST_MAIN(TEST_ENTRY(read_file_whole_and_line_window),
          TEST_ENTRY(read_file_binary_comes_back_base64),
          TEST_ENTRY(read_file_missing_and_directory),
          TEST_ENTRY(read_file_numbers_out_of_range_refused_by_the_schema),
          TEST_ENTRY(read_file_numbers_out_of_range_refused_by_the_tool),
          TEST_ENTRY(confine_dotdot_escape),
          TEST_ENTRY(confine_absolute_paths),
          TEST_ENTRY(confine_symlink_in_the_middle),
          TEST_ENTRY(confine_symlink_at_the_end),
          TEST_ENTRY(confine_prefix_sibling),
          TEST_ENTRY(paths_spelled_as_a_directory_are_not_files),
          TEST_ENTRY(paths_refusals_name_the_real_cause),
          TEST_ENTRY(make_parents_names_what_is_in_the_way),
          TEST_ENTRY(confine_dev_stdin_pipe_is_not_a_dangling_symlink),
          TEST_ENTRY(confine_relative_dangling_symlinks_classified),
          TEST_ENTRY(confine_device_refused),
          TEST_ENTRY(confine_fifo_does_not_hang),
          TEST_ENTRY(confine_size_limit),
          TEST_ENTRY(confine_without_openat2),
          TEST_ENTRY(confine_several_roots),
          TEST_ENTRY(runtime_refuses_a_missing_root),
          TEST_ENTRY(write_file_creates_modifies_keeps_mode),
          TEST_ENTRY(write_file_is_atomic_under_sigkill),
          TEST_ENTRY(list_dir_sorted_recursive_bounded),
          TEST_ENTRY(apply_patch_two_files),
          TEST_ENTRY(apply_patch_second_file_fails_nothing_changes),
          TEST_ENTRY(apply_patch_new_deleted_renamed),
          TEST_ENTRY(apply_patch_offsets_and_missing_newline),
          TEST_ENTRY(apply_patch_malformed),
          TEST_ENTRY(apply_patch_git_diff_with_modes),
          TEST_ENTRY(apply_patch_git_modes_refused_or_rolled_back),
          TEST_ENTRY(apply_patch_names_its_own_clashes),
          TEST_ENTRY(apply_patch_hunk_counts_checked_before_allocating),
          TEST_ENTRY(patch_parser_survives_random_mutations),
          TEST_ENTRY(apply_patch_rolls_back_a_failed_write),
          TEST_ENTRY(apply_patch_rollback_removes_new_dirs))
