/*
 * lua_cache.c — the shipped Lua library (lua/toolgate/...) compiled once,
 * not once per generation: compiling toolgate.shell alone takes over a
 * millisecond, and a hook process (one per tool call of a coding agent)
 * loads a generation to answer one event.
 *
 * What Lua's dump gives for a module is kept in the state folder
 * (${XDG_STATE_HOME:-~/.local/state}/toolgate/lua-cache/), one file per
 * module, named by the SHA-256 of the Lua it is for, the file's path and
 * its text: an edited, moved or other-Lua module is compiled anew. A file
 * starts with the SHA-256 of the bytecode after it, and is written to a
 * temporary name then renamed into place (two processes writing the same
 * one write the same bytes); one that does not check out is ignored and
 * written again. Nothing here fails a load: no state folder, a full disk,
 * a bad file — the module is compiled from its text as before.
 *
 * Only the shipped library goes through here. Policy files and the
 * modules of a policy folder are loaded as text only, as ever: bytecode
 * is not checked by Lua and a crafted one can break the VM, so it is only
 * taken from toolgate's own folder, made by toolgate from a source it
 * trusts, and checked against its hash.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lua_cache.h"
#include "base/sha256.h"
#include "base/state_dir.h"

#if TG_LUA54
#define cache_load(L, r, ud, name, mode) lua_load((L), (r), (ud), (name), (mode))
#define cache_dump(L, w, ud) lua_dump((L), (w), (ud), 0)
#define LUA_ID LUA_RELEASE
#else
#include <luajit.h>
#define cache_load(L, r, ud, name, mode) lua_loadx((L), (r), (ud), (name), (mode))
#define cache_dump(L, w, ud) lua_dump((L), (w), (ud))
#define LUA_ID LUAJIT_VERSION
#endif

#define CACHE_MAX (8u << 20) /* a module's bytecode, at most */

typedef struct {
  const char *p;
  size_t n;
} chunk;

static const char *read_chunk(lua_State *L, void *ud, size_t *size) {
  (void)L;
  chunk *c = ud;
  *size = c->n;
  c->n = 0;
  return *size ? c->p : NULL;
}

typedef struct {
  char *p;
  size_t n, cap;
  int failed;
} buffer;

static int write_buf(lua_State *L, const void *p, size_t n, void *ud) {
  (void)L;
  buffer *b = ud;
  if (b->failed || b->n + n > CACHE_MAX) return b->failed = 1;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 64 * 1024;
    while (cap < b->n + n) cap *= 2;
    char *q = realloc(b->p, cap);
    if (!q) return b->failed = 1;
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
  return 0;
}

/* <state>/lua-cache/<hex key>.luac into path (the folder made when make).
 * -1 when there is no state folder. */
static int cache_path(const char *name, const char *text, size_t n, int make,
                      char *path, size_t len) {
  char dir[4096];
  if (tg__state_dir(dir, sizeof dir) < 0) return -1;
  uint8_t key[TG_SHA256_SIZE];
  tg_sha256_ctx c;
  tg__sha256_init(&c);
  static const char id[] = LUA_ID;
  size_t sizes[2] = {sizeof(lua_Number), sizeof(void *)};
  tg__sha256_update(&c, id, sizeof id);
  tg__sha256_update(&c, sizes, sizeof sizes);
  tg__sha256_update(&c, name, strlen(name) + 1);
  tg__sha256_update(&c, text, n);
  tg__sha256_final(&c, key);
  size_t dn = strlen(dir);
  snprintf(dir + dn, sizeof dir - dn, "/lua-cache");
  /* mkdir -p, 0700 as the database's folder */
  for (char *p = strchr(dir + 1, '/'); make; p = strchr(p + 1, '/')) {
    if (p) *p = '\0';
    int bad = mkdir(dir, 0700) < 0 && errno != EEXIST;
    if (p) *p = '/';
    if (bad) return -1;
    if (!p) break;
  }
  char hex[2 * TG_SHA256_SIZE + 1];
  for (size_t i = 0; i < TG_SHA256_SIZE; i++)
    snprintf(hex + 2 * i, 3, "%02x", key[i]);
  int w = snprintf(path, len, "%s/%s.luac", dir, hex);
  return w < 0 || (size_t)w >= len ? -1 : 0;
}

/* The cached bytecode for the module, checked; NULL when there is none
 * that checks out. *n its size. */
static char *cached(const char *path, size_t *n) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  char *b = NULL;
  if (fd < 0) return NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      st.st_size > TG_SHA256_SIZE && st.st_size <= CACHE_MAX + TG_SHA256_SIZE &&
      (b = malloc((size_t)st.st_size)) &&
      read(fd, b, (size_t)st.st_size) == st.st_size) {
    uint8_t sum[TG_SHA256_SIZE];
    tg_sha256_ctx c;
    *n = (size_t)st.st_size - TG_SHA256_SIZE;
    tg__sha256_init(&c);
    tg__sha256_update(&c, b + TG_SHA256_SIZE, *n);
    tg__sha256_final(&c, sum);
    if (memcmp(sum, b, TG_SHA256_SIZE) == 0) {
      close(fd);
      return b;
    }
  }
  free(b);
  close(fd);
  return NULL;
}

/* Writes the bytecode of the function on top of L (left there) to path. */
static void store(lua_State *L, const char *path) {
  buffer b = {0};
  uint8_t sum[TG_SHA256_SIZE] = {0};
  char tmp[4300];
  write_buf(L, sum, sizeof sum, &b); /* room for the hash, filled below */
  if (cache_dump(L, write_buf, &b) != 0 || b.failed) {
    free(b.p);
    return;
  }
  tg_sha256_ctx c;
  tg__sha256_init(&c);
  tg__sha256_update(&c, b.p + TG_SHA256_SIZE, b.n - TG_SHA256_SIZE);
  tg__sha256_final(&c, (uint8_t *)b.p);
  if (snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >=
      (int)sizeof tmp) {
    free(b.p);
    return;
  }
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  int ok = fd >= 0 && write(fd, b.p, b.n) == (ssize_t)b.n;
  if (fd >= 0 && close(fd) < 0) ok = 0;
  if (!ok || rename(tmp, path) < 0) unlink(tmp);
  free(b.p);
}

int tg__lua_cache_load(lua_State *L, const char *text, size_t n,
                       const char *name) {
  char path[4200];
  int have_path = cache_path(name, text, n, 0, path, sizeof path) == 0;
  size_t bn = 0;
  char *bc = have_path ? cached(path, &bn) : NULL;
  if (bc) {
    chunk c = {bc + TG_SHA256_SIZE, bn};
    int st = cache_load(L, read_chunk, &c, name, "b");
    free(bc);
    if (st == LUA_OK) return st;
    lua_pop(L, 1); /* a Lua that does not take it: compile it again */
  }
  chunk c = {text, n};
  int st = cache_load(L, read_chunk, &c, name, "t");
  if (st == LUA_OK && cache_path(name, text, n, 1, path, sizeof path) == 0)
    store(L, path);
  return st;
}
