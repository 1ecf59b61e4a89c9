/*
 * test_lua_cache.c — the shipped Lua library compiled once
 * (policy/lua_cache.c): a generation that requires toolgate.shell leaves
 * its bytecode in the state folder, the next loads it, errors inside a
 * cached module still name its file:line, and a cache file that is
 * damaged — or a state folder that cannot be written — changes nothing
 * but the time.
 */
#include "helpers.h"
#include <dirent.h>
#include <sys/stat.h>

static const char policy[] =
    "local tg = require 'toolgate'\n"
    "local shell = require 'toolgate.shell'\n"
    "tg.tool { name = 'words', read_only = true,\n"
    "  run = function(args) return { n = #shell.split(args.cmd)[1].argv } end }\n"
    "tg.tool { name = 'oops', read_only = true,\n"
    "  run = function() return shell.has_flag(nil, 'f') end }\n";

/* The cache files under XDG_STATE_HOME: how many; the first's path. */
static int cache_files(char *first, size_t len) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/toolgate/lua-cache", getenv("XDG_STATE_HOME"));
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t l = strlen(e->d_name);
    if (l < 6 || strcmp(e->d_name + l - 5, ".luac")) continue;
    if (!n++ && first) snprintf(first, len, "%s/%s", dir, e->d_name);
  }
  if (d) closedir(d);
  return n;
}

/* A runtime on the policy; its two tools answer as they should. */
static void load_and_use(void) {
  char *dir = temp_dir();
  put_file(dir, "10_p.lua", policy);
  tg_config cfg = config_allowing();
  cfg.db_off = 1;
  tg_runtime *rt = runtime_with_policies(&cfg, dir);
  outcome o = call_tool(rt, "words", "{\"cmd\":\"git push -f origin\"}");
  ASSERT_CALL_OK(o);
  ASSERT_NUM_EQ(num_at(o.result, "n"), 4);
  outcome_free(&o);
  o = call_tool(rt, "oops", NULL);
  ASSERT_STATUS(o, TG_STATUS_ERROR);
  ASSERT_CONTAINS(o.message, "toolgate/shell.lua:"); /* line info kept */
  ASSERT_CONTAINS(o.message, "attempt to get length of "); /* both Luas */
  outcome_free(&o);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(the_shipped_library_is_compiled_once_and_loaded_from_the_cache) {
  ASSERT_INT_EQ(cache_files(NULL, 0), 0);
  load_and_use();
  char first[1024];
  int n = cache_files(first, sizeof first);
  ASSERT_TRUE(n >= 1);
  struct stat a, b;
  ASSERT_OK(stat(first, &a));
  ASSERT_INT_EQ(a.st_mode & 0777, 0600);
  load_and_use(); /* from the cache: the same files, not written again */
  ASSERT_INT_EQ(cache_files(NULL, 0), n);
  ASSERT_OK(stat(first, &b));
  ASSERT_TRUE(a.st_ino == b.st_ino && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
              a.st_mtime == b.st_mtime);
}

/* Does the cache file check out: its first 32 bytes the SHA-256 of the
 * rest? (The bytecode itself differs from one compile to the next on
 * LuaJIT.) */
static int checks_out(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  static unsigned char b[16 << 20];
  size_t n = fread(b, 1, sizeof b, f);
  fclose(f);
  unsigned char sum[TG_SHA256_SIZE];
  if (n <= TG_SHA256_SIZE) return 0;
  tg_sha256(b + TG_SHA256_SIZE, n - TG_SHA256_SIZE, sum);
  return memcmp(sum, b, TG_SHA256_SIZE) == 0;
}

TEST(a_damaged_cache_file_is_compiled_again) {
  load_and_use();
  char first[1024];
  struct stat st;
  ASSERT_TRUE(cache_files(first, sizeof first) >= 1);
  ASSERT_TRUE(checks_out(first));
  ASSERT_OK(stat(first, &st));
  long len = (long)st.st_size;
  FILE *f = fopen(first, "r+b"); /* one byte of the bytecode flipped */
  ASSERT_NOT_NULL(f);
  fseek(f, len / 2, SEEK_SET);
  int c = fgetc(f);
  fseek(f, len / 2, SEEK_SET);
  fputc(c ^ 0x5a, f);
  fclose(f);
  ASSERT_FALSE(checks_out(first));
  load_and_use(); /* not taken: compiled again, and written again whole */
  ASSERT_TRUE(checks_out(first));
  /* cut short, and a folder where a file should be */
  ASSERT_OK(truncate(first, 10));
  load_and_use();
  ASSERT_TRUE(checks_out(first));
  ASSERT_OK(unlink(first));
  ASSERT_OK(mkdir(first, 0700));
  load_and_use();
  ASSERT_OK(rmdir(first));
}

TEST(no_state_folder_to_write_changes_nothing) {
  setenv("XDG_STATE_HOME", "/proc/no-such-place", 1);
  load_and_use();
  unsetenv("XDG_STATE_HOME");
  setenv("HOME", "relative", 1); /* nowhere at all */
  load_and_use();
}

TEST_MAIN(TEST_ENTRY(the_shipped_library_is_compiled_once_and_loaded_from_the_cache),
          TEST_ENTRY(a_damaged_cache_file_is_compiled_again),
          TEST_ENTRY(no_state_folder_to_write_changes_nothing))
