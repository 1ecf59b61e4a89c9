/* lua_dir.c — see lua_dir.h. The paths come from CMakeLists.txt. */
#define _GNU_SOURCE /* dladdr, dl_iterate_phdr */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <uv.h>
#include "lua_dir.h"

#ifndef TOOLGATE_SOURCE_LUA_DIR
#define TOOLGATE_SOURCE_LUA_DIR ""
#endif
#ifndef TOOLGATE_BUILD_DIR
#define TOOLGATE_BUILD_DIR ""
#endif
#ifndef TOOLGATE_INSTALL_LUA_DIR
#define TOOLGATE_INSTALL_LUA_DIR ""
#endif
#ifndef TOOLGATE_LUA_RELDIRS /* ':'-separated, relative to the loaded file */
#define TOOLGATE_LUA_RELDIRS ""
#endif

static char lua_dir[PATH_MAX];
static uv_once_t lua_dir_once = UV_ONCE_INIT;
static const char marker; /* an address inside the file this code is in */

static int is_dir(const char *path) {
  struct stat st;
  return path[0] && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether `marker` is in the main program (the first object listed). */
static int in_main_program(struct dl_phdr_info *info, size_t size, void *ud) {
  uintptr_t addr = (uintptr_t)&marker;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && addr >= start && addr - start < ph->p_memsz)
      *(int *)ud = 1;
  }
  return 1; /* stop after the first */
}

/* The real path of the folder of the file this code was loaded from. */
static int own_folder(char out[PATH_MAX]) {
  int main_program = 0;
  dl_iterate_phdr(in_main_program, &main_program);
  const char *file = NULL;
  Dl_info info;
  if (main_program) /* dladdr would give argv[0] */
    file = "/proc/self/exe";
  else if (dladdr(&marker, &info) && info.dli_fname && info.dli_fname[0])
    file = info.dli_fname;
  if (!file || !realpath(file, out)) return 0;
  char *slash = strrchr(out, '/');
  if (!slash) return 0;
  *slash = '\0';
  if (!out[0]) strcpy(out, "/");
  return 1;
}

/* dir is where the build puts the command, the libraries and test programs
 * (the build folder) or the Lua module (its lua/). */
static int build_output(const char *dir) {
  char real[PATH_MAX];
  if (!TOOLGATE_BUILD_DIR[0] || !realpath(TOOLGATE_BUILD_DIR, real)) return 0;
  size_t n = strlen(real);
  return strncmp(dir, real, n) == 0 &&
         (dir[n] == '\0' || strcmp(dir + n, "/lua") == 0);
}

static int take(const char *path) {
  char real[PATH_MAX];
  if (!is_dir(path) || !realpath(path, real)) return 0;
  snprintf(lua_dir, sizeof lua_dir, "%s", real);
  return 1;
}

static void find_lua_dir(void) {
  char own[PATH_MAX];
  int have_own = own_folder(own);
  if (have_own && build_output(own) &&
      take(TOOLGATE_SOURCE_LUA_DIR))
    return;
  if (have_own) {
    const char *rel = TOOLGATE_LUA_RELDIRS;
    while (*rel) {
      size_t n = strcspn(rel, ":");
      char path[PATH_MAX * 2];
      snprintf(path, sizeof path, "%s/%.*s", own, (int)n, rel);
      if (n && take(path)) return;
      rel += n + (rel[n] == ':');
    }
  }
  if (take(TOOLGATE_INSTALL_LUA_DIR) || take(TOOLGATE_SOURCE_LUA_DIR)) return;
  snprintf(lua_dir, sizeof lua_dir, "%s", TOOLGATE_INSTALL_LUA_DIR);
}

const char *tg__lua_dir(void) {
  uv_once(&lua_dir_once, find_lua_dir);
  return lua_dir;
}
