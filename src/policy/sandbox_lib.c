/*
 * sandbox_lib.c — the standard library policy code sees. An allow-list,
 * like Redis: the libraries are opened, then every name that is not on the
 * list is removed from its table, in place, so nothing unsafe is left in
 * the state to be reached another way (package.loaded, string metatable).
 * Reading a removed name raises "os.execute is not available to policies
 * ..." through the table's metatable, instead of a puzzling nil.
 *
 * Replaced: print (to stderr: stdout belongs to the host's JSON output),
 * load (text only, compiled in pieces that poll the bound),
 * collectgarbage ("count" only), io.open (read modes only), io.lines
 * (files only, not stdin), require (the shipped lua/
 * library and the policy folder, Lua source only), setmetatable (no __gc)
 * and getmetatable (policy code's own metatables only). trusted_policies
 * keeps the full library; package.cpath is empty either way, and so are
 * the functions that poll the call's bound (install_bounded_functions).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sandbox.h"
#include "lua/luaweak.h"
#include "sandbox_lib.h"
#include "sandbox_pattern.h"
#include "lua_chunks.h"
#include "base/lua_dir.h"
#include "base/regular_file.h"

#define ENV_MT "toolgate.sandbox.env"

#if TG_LUA54
#define tg_load(L, r, ud, name, mode) lua_load((L), (r), (ud), (name), (mode))
#else
#define tg_load(L, r, ud, name, mode) lua_loadx((L), (r), (ud), (name), (mode))
#endif

static void push_globals(lua_State *L) {
#if TG_LUA54
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
#else
  lua_pushvalue(L, LUA_GLOBALSINDEX);
#endif
}

/* ---- environments --------------------------------------------------------- */

static void push_env(lua_State *L) {
  lua_newtable(L);
  lua_pushvalue(L, -1);
  lua_setfield(L, -2, "_G"); /* _G.x = 1 stays in the file too */
  lua_getfield(L, LUA_REGISTRYINDEX, ENV_MT);
  lua_setmetatable(L, -2);
}

/* [fn, env] -> [fn] with env as fn's environment. */
static void take_env(lua_State *L) {
  lua_pushvalue(L, -2);
  tg__setenv(L, -2); /* tg__setenv wants the function on top */
  lua_pop(L, 2);
}

void tg__sandbox_set_env(lua_State *L) {
  push_env(L);
  take_env(L);
}

/* {__index = the standard globals, __metatable = false}: shared by every
 * environment; the policy can neither read nor replace it. */
static void make_env_mt(lua_State *L) {
  lua_createtable(L, 0, 2);
  push_globals(L);
  lua_setfield(L, -2, "__index");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setfield(L, LUA_REGISTRYINDEX, ENV_MT);
}

/* The shipped library and the policy folder: both for the standard
 * require (trusted) and ours. */
static void set_package_path(lua_State *L, const char *dir) {
  const char *lib = tg__lua_dir();
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;%s/?.lua", lib, lib,
                  dir ? dir : ".");
  lua_setfield(L, -2, "path");
  lua_pushstring(L, "");
  lua_setfield(L, -2, "cpath"); /* no native modules from policies */
  lua_pop(L, 1);
}

/* ---- refusing names ------------------------------------------------------- */

static int listed(const char *const *list, const char *s) {
  for (; list && *list; list++)
    if (strcmp(*list, s) == 0) return 1;
  return 0;
}

/* __index of a restricted table; upvalues: the library's name ("" for the
 * globals) and the set of names removed from it. */
static int refused_index(lua_State *L) {
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(2));
  if (!lua_toboolean(L, -1)) return 0;
  const char *lib = lua_tostring(L, lua_upvalueindex(1));
  return luaL_error(L, "%s%s%s is not available to policies (the standard "
                       "library is restricted; trusted_policies = true opens "
                       "all of it)", lib, *lib ? "." : "", lua_tostring(L, 2));
}

/* Removes from the table on top every string key not in `keep`. The names
 * removed raise when read, except those in `hide` (and all of them when
 * refuse is 0), which just read as nil. */
static void restrict_table(lua_State *L, const char *lib,
                           const char *const *keep, const char *const *hide,
                           int refuse) {
  int t = lua_gettop(L), n = 0;
  lua_newtable(L);
  int refused = t + 1;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if (k && listed(keep, k)) continue;
    lua_pushvalue(L, -1);
    lua_pushnil(L);
    lua_rawset(L, t); /* clearing a field during traversal is allowed */
    if (k && refuse && !listed(hide, k)) {
      lua_pushvalue(L, -1);
      lua_pushboolean(L, 1);
      lua_rawset(L, refused);
      n++;
    }
  }
  if (n) {
    lua_createtable(L, 0, 2);
    lua_pushstring(L, lib);
    lua_pushvalue(L, refused);
    lua_pushcclosure(L, refused_index, 2);
    lua_setfield(L, -2, "__index");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, t);
  }
  lua_pop(L, 1);
}

/* ---- replacements --------------------------------------------------------- */

/* print(...) to stderr; upvalue: tostring. */
static int sb_print(lua_State *L) {
  int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; i++) {
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, i);
    lua_call(L, 1, 1);
    if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER)
      return luaL_error(L, "'tostring' must return a string to 'print'");
    if (i > 1) luaL_addchar(&b, '\t');
    luaL_addvalue(&b);
  }
  luaL_addchar(&b, '\n');
  luaL_pushresult(&b);
  size_t len;
  const char *s = lua_tolstring(L, -1, &len);
  fwrite(s, 1, len, stderr);
  fflush(stderr);
  return 0;
}

#define BINARY_REFUSED "load: binary chunks are not allowed in policies " \
                       "(the sandbox loads Lua source text only)"

/* Reads the pieces of a chunk from the function at 1; slot 5 keeps the
 * last piece alive while Lua reads it. *first is set until the first
 * piece has been seen. */
static const char *chunk_reader(lua_State *L, void *ud, size_t *size) {
  int *first = ud;
  /* a C reader (io.lines over a huge file) runs no Lua instruction */
  tg__sandbox_poll(L);
  luaL_checkstack(L, 2, "too many nested functions");
  lua_pushvalue(L, 1);
  lua_call(L, 0, 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    *size = 0;
    return NULL;
  }
  if (lua_type(L, -1) != LUA_TSTRING)
    luaL_error(L, "load: the reader function must return a string");
  lua_replace(L, 5);
  const char *p = lua_tolstring(L, 5, size);
  if (*first && *size > 0) {
    *first = 0;
    if (p[0] == LUA_SIGNATURE[0]) { /* the same message as for a string */
      lua_pushstring(L, BINARY_REFUSED);
      lua_error(L);
    }
  }
  return p;
}

/* lua_load's reader over a string, in pieces of LOAD_PIECE bytes with a
 * poll between them: compiling a text of tens of MB takes seconds inside
 * one C call (the parser runs no Lua instruction), so load(text) could
 * run past the time limit by that much. */
#define LOAD_PIECE ((size_t)64 << 10)

typedef struct {
  const char *s;
  size_t left;
  int started;
} text_reader;

static const char *text_piece(lua_State *L, void *ud, size_t *size) {
  text_reader *r = ud;
  if (r->started) tg__sandbox_poll(L);
  r->started = 1;
  *size = 0;
  if (r->left == 0) return NULL;
  *size = r->left < LOAD_PIECE ? r->left : LOAD_PIECE;
  const char *p = r->s;
  r->s += *size;
  r->left -= *size;
  return p;
}

/* load(chunk [, name [, mode [, env]]]): Lua source only, whatever mode
 * says; without env the chunk gets an environment of its own. */
static int sb_load(lua_State *L) {
  int has_env = lua_gettop(L) >= 4;
  if (has_env && !lua_istable(L, 4))
    return luaL_argerror(L, 4, "the environment must be a table");
  int st;
  if (lua_type(L, 1) == LUA_TSTRING) {
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    const char *name = luaL_optstring(L, 2, s);
    if (len > 0 && s[0] == LUA_SIGNATURE[0]) {
      lua_pushnil(L);
      lua_pushstring(L, BINARY_REFUSED);
      return 2;
    }
    text_reader r = {s, len, 0}; /* s stays anchored at 1 */
    st = tg_load(L, text_piece, &r, name, "t");
  } else {
    const char *name = luaL_optstring(L, 2, "=(load)");
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 5);
    int first = 1;
    st = tg_load(L, chunk_reader, &first, name, "t");
  }
  if (st != LUA_OK) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  if (has_env) lua_pushvalue(L, 4);
  else push_env(L);
  take_env(L);
  return 1;
}

/* A full collection on demand would let a policy spend seconds per
 * instruction; the runtime runs the collector. */
static int sb_collectgarbage(lua_State *L) {
  const char *opt = luaL_optstring(L, 1, "collect");
  if (strcmp(opt, "count") != 0)
    return luaL_error(L, "collectgarbage(\"%s\") is not available to "
                         "policies; only collectgarbage(\"count\") is (the "
                         "runtime runs the collector)", opt);
  lua_pushnumber(L, lua_gc(L, LUA_GCCOUNT, 0) +
                        lua_gc(L, LUA_GCCOUNTB, 0) / 1024.0);
  return 1;
}

/* ---- files ------------------------------------------------------------------ */

/* A policy's path may name a FIFO, a terminal or a device (a rule peeking
 * at io.open(call.args.path) given "/dev/stdin"): opening or reading one
 * can block the runtime for good. So policies read regular files only,
 * opened by tg__open_regular (base/regular_file.c), and what Lua reads is
 * that descriptor's file (reopened through /proc/self/fd/N, which both
 * Luas' io.open can open): a path swapped for a FIFO between check and use
 * changes nothing. */

/* After a failed tg__open_regular (r, and err = its errno): pushes io.open's
 * "path: reason" and errno, or "who: path is not a regular file (a FIFO);
 * ..." and nil. */
static void push_open_error(lua_State *L, const char *who, const char *path,
                            int r, int err, const char *kind) {
  if (r == TG_NOT_REGULAR) {
    lua_pushfstring(L, "%s: %s is not a regular file (%s); policies may read "
                       "regular files only", who, path, kind);
    lua_pushnil(L);
  } else {
    lua_pushfstring(L, "%s: %s", path, strerror(err));
    lua_pushinteger(L, err);
  }
}

/* [fn, fd, args...] -> fn("/proc/self/fd/<fd>", args...): the real
 * io.open or io.lines on the checked descriptor. Run under lua_pcall so
 * that the caller closes the descriptor whatever happens. */
static int call_on_fd(lua_State *L) {
  int fd = (int)lua_tointeger(L, 2);
  lua_pushfstring(L, "/proc/self/fd/%d", fd);
  lua_replace(L, 2);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/* Calls the real io function (upvalue 1) as fn(path, args from `from`
 * on) on the regular file at path, or fails: returns -1 with the message
 * and errno (nil: not a regular file) pushed. Otherwise leaves fn's results
 * on top of the stack and returns their number. */
static int open_and_call(lua_State *L, const char *who, int from) {
  const char *path = luaL_checkstring(L, 1);
  int top = lua_gettop(L), nargs = top >= from ? top - from + 1 : 0;
  luaL_checkstack(L, nargs + 8, "too many arguments");
  /* everything that can raise (allocate) comes before the open */
  lua_pushcfunction(L, call_on_fd);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushnil(L); /* the descriptor, below */
  for (int i = from; i <= top; i++) lua_pushvalue(L, i);
  const char *kind = NULL;
  int fd = tg__open_regular(path, &kind), err = errno;
  if (fd < 0) {
    lua_settop(L, top);
    push_open_error(L, who, path, fd, err, kind);
    return -1;
  }
  lua_pushinteger(L, fd);
  lua_replace(L, top + 3);
  int st = lua_pcall(L, nargs + 2, LUA_MULTRET, 0);
  close(fd); /* what Lua reads is its own reopened file */
  if (st != LUA_OK) lua_error(L);
  return lua_gettop(L) - top;
}

/* io.open(name [, mode]): a regular file, for reading; upvalue: the real
 * io.open. Fails as io.open does: nil, message, errno. */
static int sb_io_open(lua_State *L) {
  luaL_checkstring(L, 1);
  const char *mode = luaL_optstring(L, 2, "r");
  int binary = strcmp(mode, "rb") == 0;
  if (!binary && strcmp(mode, "r") != 0)
    return luaL_error(L, "io.open: policies may open files for reading only "
                         "(mode \"r\" or \"rb\"), not \"%s\"", mode);
  lua_settop(L, 1);
  lua_pushstring(L, binary ? "rb" : "r");
  int n = open_and_call(L, "io.open", 2);
  if (n >= 0) return n;
  n = lua_isnil(L, -1) ? 2 : 3; /* nil, message[, errno] */
  if (n == 2) lua_pop(L, 1);
  lua_pushnil(L);
  lua_insert(L, -n);
  return n;
}

/* io.lines(name, ...): a regular file; standard input belongs to the host.
 * Raises when the file cannot be read, as io.lines does. */
static int sb_io_lines(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING)
    return luaL_error(L, "io.lines: give a file name; policies cannot read "
                         "the host's standard input");
  int n = open_and_call(L, "io.lines", 2);
  if (n >= 0) return n;
  lua_pop(L, 1);
  return lua_error(L);
}

/* os.date([format [, time]]) with a format of at most OS_DATE_MAX bytes:
 * the builtin (upvalue 1) converts the format in one C call, slowly per
 * byte on 5.4 (a 40 MB format of "%n" took 1.6 s, past any time limit,
 * allocating only what the cap allowed). No date needs a longer format. */
#define OS_DATE_MAX 4096

static int sb_os_date(lua_State *L) {
  size_t n = 0;
  if (lua_type(L, 1) == LUA_TSTRING) lua_tolstring(L, 1, &n);
  if (n > OS_DATE_MAX)
    return luaL_error(L, "os.date: the format is %d bytes long, over the "
                      "%d a date may take; format the pieces one by one",
                      (int)(n > INT_MAX ? INT_MAX : n), OS_DATE_MAX);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

#if TG_LUA54
#define MOVE_PIECE 1024

/* table.move's check of a table argument: a table, or a value whose
 * metatable has the field the move needs (__index to read from it,
 * __newindex to write to it). Done here, so that the builtin, called from
 * C, never raises an argument error: it would name no function and no
 * line. */
static void check_movable(lua_State *L, int arg, const char *field) {
  if (lua_type(L, arg) == LUA_TTABLE) return;
  if (lua_getmetatable(L, arg)) {
    lua_pushstring(L, field);
    int has = lua_rawget(L, -2) != LUA_TNIL;
    lua_pop(L, 2);
    if (has) return;
  }
  luaL_checktype(L, arg, LUA_TTABLE);
}

/* table.move(a1, f, e, t [, a2]) in pieces of MOVE_PIECE elements with a
 * poll between them: the builtin loops over any range inside one C call
 * (table.move({}, 1, 2^40, 1) runs for days without allocating a byte).
 * The pieces go in the order that keeps an overlapping move right, so the
 * result is the builtin's; so are the errors, checked here in its order.
 * Upvalue: the builtin. (LuaJIT's table.move is Lua bytecode: the hook
 * counts it.) */
static int sb_table_move(lua_State *L) {
  lua_Integer f = luaL_checkinteger(L, 2), e = luaL_checkinteger(L, 3);
  lua_Integer t = luaL_checkinteger(L, 4);
  int dest = lua_isnoneornil(L, 5) ? 1 : 5;
  check_movable(L, 1, "__index");
  check_movable(L, dest, "__newindex");
  lua_Integer n = 0;
  if (e >= f) {
    luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3,
                  "too many elements to move");
    n = e - f + 1;
    luaL_argcheck(L, t <= LUA_MAXINTEGER - n + 1, 4,
                  "destination wrap around");
  }
  int backwards = t > f && t <= e &&
                  (dest == 1 || lua_compare(L, 1, dest, LUA_OPEQ));
  for (lua_Integer done = 0; done < n; done += MOVE_PIECE) {
    lua_Integer k = n - done < MOVE_PIECE ? n - done : MOVE_PIECE;
    lua_Integer from = backwards ? e - done - k + 1 : f + done;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    lua_pushinteger(L, from);
    lua_pushinteger(L, from + k - 1);
    lua_pushinteger(L, t + (from - f));
    lua_pushvalue(L, dest);
    lua_call(L, 5, 0);
    if (done + k < n) tg__sandbox_poll(L);
  }
  lua_pushvalue(L, dest);
  return 1;
}

/* string.rep(s, n [, sep]) that returns "" at once when the result is
 * empty: the builtin copies zero bytes n times, so string.rep("", 2^62)
 * runs for ages inside one C call that neither runs a Lua instruction nor
 * allocates a byte — no limit could stop it. Any other result is built by
 * the builtin (upvalue 1), whose work is the result's size: bounded by the
 * memory cap. The arguments and the size are checked here, as the builtin
 * checks them, so that the builtin, called from C, raises no error of its
 * own but running out of memory (it would name no line). (LuaJIT's
 * string.rep copies nothing when the result is empty: it stays.) */
static int sb_string_rep(lua_State *L) {
  size_t l, lsep;
  luaL_checklstring(L, 1, &l);
  lua_Integer n = luaL_checkinteger(L, 2);
  luaL_optlstring(L, 3, "", &lsep);
  if (n <= 0 || (l == 0 && (lsep == 0 || n == 1))) {
    lua_pushliteral(L, "");
    return 1;
  }
  /* the builtin's own check (MAXSIZE), here so that the error names the
   * caller's line */
  if (l + lsep < l || l + lsep > (size_t)INT_MAX / (lua_Unsigned)n)
    return luaL_error(L, "resulting string too large");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

/* The length table.insert and table.remove shift over: of a table, or of a
 * value with __index, __newindex and __len (the builtin's checks). A __len
 * can say anything: the shifts below poll every MOVE_PIECE elements. */
static lua_Integer shifted_length(lua_State *L) {
  check_movable(L, 1, "__index");
  check_movable(L, 1, "__newindex");
  check_movable(L, 1, "__len");
  return luaL_len(L, 1);
}

/* table.insert(t, [pos,] v), as the builtin's, polling while it shifts. */
static int sb_table_insert(lua_State *L) {
  lua_Integer e = (lua_Integer)((lua_Unsigned)shifted_length(L) + 1u);
  lua_Integer pos = e; /* the first empty element */
  switch (lua_gettop(L)) {
  case 2:
    break;
  case 3:
    pos = luaL_checkinteger(L, 2);
    luaL_argcheck(L, (lua_Unsigned)pos - 1u < (lua_Unsigned)e, 2,
                  "position out of bounds");
    for (lua_Integer i = e; i > pos; i--) {
      lua_geti(L, 1, i - 1);
      lua_seti(L, 1, i);
      if ((e - i) % MOVE_PIECE == MOVE_PIECE - 1) tg__sandbox_poll(L);
    }
    break;
  default:
    return luaL_error(L, "wrong number of arguments to 'insert'");
  }
  lua_seti(L, 1, pos);
  return 0;
}

/* table.remove(t [, pos]), as the builtin's, polling while it shifts. */
static int sb_table_remove(lua_State *L) {
  lua_Integer size = shifted_length(L);
  lua_Integer pos = luaL_optinteger(L, 2, size);
  if (pos != size)
    luaL_argcheck(L, (lua_Unsigned)pos - 1u <= (lua_Unsigned)size, 2,
                  "position out of bounds");
  lua_geti(L, 1, pos); /* the result */
  for (lua_Integer start = pos; pos < size; pos++) {
    lua_geti(L, 1, pos + 1);
    lua_seti(L, 1, pos);
    if ((pos - start) % MOVE_PIECE == MOVE_PIECE - 1) tg__sandbox_poll(L);
  }
  lua_pushnil(L);
  lua_seti(L, 1, pos);
  return 1;
}
#endif

#if !TG_LUA54
#define SORT_POLL_EVERY 1000

/* The comparator LuaJIT's table.sort gets when given none: a < b, the
 * comparison the builtin makes itself, plus a poll every SORT_POLL_EVERY
 * calls. LuaJIT sorts with 5.1's quicksort (median of three, no random
 * pivot), which takes quadratic time on inputs an adversary can build
 * (McIlroy's antiqsort): 200,000 agent-supplied numbers sort for over a
 * minute inside one C call. (Lua 5.4 picks random pivots.) Upvalue: the
 * number of calls, in a userdata. */
static int sort_less(lua_State *L) {
  unsigned *calls = lua_touserdata(L, lua_upvalueindex(1));
  if (++*calls % SORT_POLL_EVERY == 0) tg__sandbox_poll(L);
  lua_pushboolean(L, lua_lessthan(L, 1, 2));
  return 1;
}

/* table.sort(t [, comp]); upvalues: the builtin and sort_less. Its
 * arguments are checked here, so that the builtin, called from C, raises
 * no argument error (it would name no function and no line). */
static int sb_table_sort(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  if (!lua_isnil(L, 2)) {
    luaL_checktype(L, 2, LUA_TFUNCTION);
  } else {
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_replace(L, 2);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 2, 0);
  return 0;
}
#endif

#if !TG_LUA54
/* LuaJIT reads a line with fgets and measures what it got with strlen: a
 * run of NUL bytes adds nothing, so the buffer never grows and reading a
 * line of a file of zeros loops inside one C call for as long as the file
 * lasts, allocating nothing. /proc/self/pagemap, a regular file anyone
 * can read, holds hundreds of GB of them: f:read("l") on it hung the
 * runtime. Lines are read here instead, in Lua (where the time limit
 * reaches): pieces of the builtin read(n), which uses fread, up to the
 * newline, and a seek back over what followed it. Installed on the file
 * handles' method table (read, lines) and as io.lines, so that every way
 * to read a line goes through it. */
static const char LINES[] =
    "local read, seek, open, close, find, sub, concat, type, select, error,\n"
    "  iotype = ...\n"
    "local unpack = unpack\n"
    "local function check(f)\n" /* the builtin's message, without a place */
    "  if iotype(f) == 'closed file' then\n"
    "    error('attempt to use a closed file', 0)\n"
    "  end\n"
    "end\n"
    "local function line(f, keep)\n"
    "  local parts, size = {}, 128\n"
    "  while true do\n"
    "    local piece = read(f, size)\n"
    "    if not piece then\n"
    "      if #parts == 0 then return nil end\n"
    "      return concat(parts)\n"
    "    end\n"
    "    local nl = find(piece, '\\n', 1, true)\n"
    "    if nl then\n"
    "      if nl < #piece then seek(f, 'cur', nl - #piece) end\n"
    "      parts[#parts + 1] = sub(piece, 1, keep and nl or nl - 1)\n"
    "      return concat(parts)\n"
    "    end\n"
    "    parts[#parts + 1] = piece\n"
    "    if size < 65536 then size = size * 2 end\n"
    "  end\n"
    "end\n"
    "local function one(f, fmt)\n"
    "  if type(fmt) == 'string' then\n"
    "    local c = sub(fmt, 1, 1) == '*' and sub(fmt, 2, 2) or sub(fmt, 1, 1)\n"
    "    if c == 'l' then return line(f, false) end\n"
    "    if c == 'L' then return line(f, true) end\n"
    "  end\n"
    "  return read(f, fmt)\n"
    "end\n"
    "local function readall(f, n, fmt, ...)\n"
    "  local v = one(f, fmt)\n"
    "  if v == nil or n <= 1 then return v end\n"
    "  return v, readall(f, n - 1, ...)\n"
    "end\n"
    "local function fread(f, ...)\n"
    "  check(f)\n"
    "  local n = select('#', ...)\n"
    "  if n == 0 then return line(f, false) end\n"
    "  return readall(f, n, ...)\n"
    "end\n"
    "local function iterate(f, closing, ...)\n"
    "  local n, fmts = select('#', ...), { ... }\n"
    "  local function finish(v, ...)\n"
    "    if v == nil and closing then close(f) end\n"
    "    return v, ...\n"
    "  end\n"
    "  return function()\n"
    "    if n == 0 then return finish(fread(f)) end\n"
    "    return finish(fread(f, unpack(fmts, 1, n)))\n"
    "  end\n"
    "end\n"
    "local function flines(f, ...)\n"
    "  check(f)\n"
    "  read(f, 0)\n" /* raises on what is not a file, as lines does */
    "  return iterate(f, false, ...)\n"
    "end\n"
    "local function io_lines(path, ...)\n"
    "  if path == nil then error('io.lines: give a file name', 2) end\n"
    "  local f, err = open(path, 'r')\n"
    "  if not f then error(err, 2) end\n"
    "  return iterate(f, true, ...)\n"
    "end\n"
    "return fread, flines, io_lines\n";

/* Replaces the file methods read and lines, and io.lines (trusted
 * policies' too: io.lines(nil) reads standard input with the builtin). */
static void install_line_reading(lua_State *L) {
  int top = lua_gettop(L);
  lua_getglobal(L, "io");
  lua_getfield(L, -1, "stderr");
  int ok = lua_getmetatable(L, -1);
  if (ok) lua_getfield(L, -1, "__index");
  if (!ok || !lua_istable(L, -1) ||
      luaL_loadbuffer(L, LINES, sizeof LINES - 1,
                      TG_SANDBOX_CHUNK "io") != LUA_OK) {
    lua_settop(L, top); /* only out of memory */
    return;
  }
  int methods = lua_gettop(L) - 1, io = methods - 3;
  lua_getfield(L, methods, "read");
  lua_getfield(L, methods, "seek");
  lua_getfield(L, io, "open");
  lua_getfield(L, methods, "close");
  lua_getglobal(L, "string");
  lua_getfield(L, -1, "find");
  lua_getfield(L, -2, "sub");
  lua_remove(L, -3);
  lua_getglobal(L, "table");
  lua_getfield(L, -1, "concat");
  lua_remove(L, -2);
  lua_getglobal(L, "type");
  lua_getglobal(L, "select");
  lua_getglobal(L, "error");
  lua_getfield(L, io, "type");
  lua_call(L, 11, 3);
  lua_setfield(L, io, "lines");
  lua_setfield(L, methods, "lines");
  lua_setfield(L, methods, "read");
  lua_settop(L, top);
}
#endif

/* ---- require ---------------------------------------------------------------- */

/* "lib.shell", "my-helpers": names, not paths. */
static int module_name_ok(const char *s) {
  if (!*s || *s == '.') return 0;
  for (const char *p = s; *p; p++) {
    int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
             (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.';
    if (!ok || (*p == '.' && (p[1] == '.' || p[1] == '\0'))) return 0;
  }
  return 1;
}

/* Looks for name along path ("a/?.lua;b/?.lua"). Returns a descriptor on
 * the regular file found (tg__open_regular: a FIFO there cannot block require)
 * with its chunk name ("@file") on top; or -1 with the list of files tried
 * on top. Nothing that can raise runs while the descriptor is open. */
static int find_module(lua_State *L, const char *name, const char *path) {
  const char *fname = luaL_gsub(L, name, ".", "/");
  int base = lua_gettop(L);
  lua_pushliteral(L, "");
  for (const char *p = path; *p;) {
    const char *end = strchr(p, ';');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    lua_pushlstring(L, p, len);
    lua_pushliteral(L, "@");
    luaL_gsub(L, lua_tostring(L, -2), "?", fname);
    lua_concat(L, 2);
    lua_remove(L, -2);
    const char *file = lua_tostring(L, -1) + 1, *kind = NULL;
    int fd = len ? tg__open_regular(file, &kind) : -1;
    if (fd >= 0) {
      lua_replace(L, base);
      lua_settop(L, base);
      return fd;
    }
    if (fd == TG_NOT_REGULAR)
      lua_pushfstring(L, "\n\tno file '%s' (it is %s, not a regular file)",
                      file, kind);
    else
      lua_pushfstring(L, "\n\tno file '%s'", file);
    lua_remove(L, -2);
    lua_concat(L, 2);
    p += len + (end ? 1 : 0);
  }
  lua_replace(L, base);
  return -1;
}

/* lua_load's reader over a module file. */
typedef struct {
  FILE *f;
  const char *start; /* what the header check left in buf */
  size_t n;
  char buf[BUFSIZ];
} file_reader;

/* Skips what luaL_loadfile skips: a UTF-8 byte order mark, and a first line
 * starting with '#' (a shebang; its newline stays, and so line numbers). */
static void skip_header(file_reader *r) {
  r->n = fread(r->buf, 1, sizeof r->buf, r->f);
  r->start = r->buf;
  if (r->n >= 3 && memcmp(r->buf, "\xEF\xBB\xBF", 3) == 0) {
    r->start += 3;
    r->n -= 3;
  }
  if (r->n == 0 || *r->start != '#') return;
  for (;;) {
    const char *nl = memchr(r->start, '\n', r->n);
    if (nl) {
      r->n -= (size_t)(nl - r->start);
      r->start = nl;
      return;
    }
    r->start = r->buf;
    r->n = fread(r->buf, 1, sizeof r->buf, r->f);
    if (r->n == 0) return;
  }
}

static const char *read_module(lua_State *L, void *ud, size_t *size) {
  file_reader *r = ud;
  tg__sandbox_poll(L); /* a huge module must not stall the runtime either */
  if (r->n) {
    *size = r->n;
    r->n = 0;
    return r->start;
  }
  *size = fread(r->buf, 1, sizeof r->buf, r->f);
  return *size ? r->buf : NULL;
}

/* Loads the Lua source on fd (closed here, whatever happens) as the chunk
 * named by the string on top. Returns lua_load's status. */
static int load_module(lua_State *L, int fd) {
  file_reader r;
  r.f = fdopen(fd, "r");
  if (!r.f) {
    int err = errno;
    close(fd);
    lua_pushfstring(L, "cannot read %s: %s", lua_tostring(L, -1) + 1,
                    strerror(err));
    return LUA_ERRFILE;
  }
  skip_header(&r);
  int st = tg_load(L, read_module, &r, lua_tostring(L, -1), "t");
  fclose(r.f);
  return st;
}

/* ---- the shipped library, precompiled -------------------------------------- */

/* The embedded chunk of module `name` when `file` is where the shipped
 * library has it (the module would come from that file's source: same
 * name, same behaviour); NULL for any other file, which is loaded from
 * its source. Allocates nothing (a descriptor is open). */
static const tg_lua_chunk *shipped_chunk(const char *name, const char *file) {
  const char *dir = tg__lua_dir();
  size_t dlen = strlen(dir);
  if (strncmp(file, dir, dlen) || file[dlen] != '/') return NULL;
  const char *f = file + dlen + 1, *n = name;
  for (; *n; n++, f++)
    if (*f != (*n == '.' ? '/' : *n)) return NULL;
  return strcmp(f, ".lua") ? NULL : tg__lua_chunk(name);
}


/* ---- the read-only module ---------------------------------------------------- */

#define READONLY "toolgate.readonly" /* weak set of the read-only views */

static int readonly_newindex(lua_State *L) {
  return luaL_error(L, "the toolgate module cannot be changed (field '%s'): "
                       "keep your own functions in a local table",
                    lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "?");
}

static int is_readonly(lua_State *L, int idx) {
  if (!lua_istable(L, idx)) return 0;
  idx = lua_absindex(L, idx);
  lua_getfield(L, LUA_REGISTRYINDEX, READONLY);
  int hit = 0;
  if (lua_istable(L, -1)) {
    lua_pushvalue(L, idx);
    lua_rawget(L, -2);
    hit = !lua_isnil(L, -1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return hit;
}

void tg__sandbox_readonly(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_newtable(L);                   /* the view: empty, reads go through */
  lua_createtable(L, 0, 3);
  lua_pushvalue(L, idx);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, readonly_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  tg__push_weak_registry(L, READONLY);
  lua_pushvalue(L, -2);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

/* next over a view's table (upvalue 1), never handing the table out. */
static int view_next(lua_State *L) {
  lua_settop(L, 2);
  if (lua_next(L, lua_upvalueindex(1))) return 2;
  lua_pushnil(L);
  return 1;
}

/* pairs(t): a view's fields as the table's (policy code that lists tg's
 * functions keeps working, on LuaJIT too), else the real pairs.
 * Upvalue 1: the real pairs. */
static int sb_pairs(lua_State *L) {
  if (is_readonly(L, 1) && lua_getmetatable(L, 1)) {
    lua_getfield(L, -1, "__index");
    lua_pushcclosure(L, view_next, 1);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/* rawset that refuses the read-only views. Upvalue 1: the real rawset. */
static int sb_rawset(lua_State *L) {
  if (is_readonly(L, 1))
    return luaL_error(L, "rawset: the toolgate module cannot be changed");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/* require(name); upvalues: package.loaded and the path, fixed when the
 * generation was made (package.path is only informational). The toolgate
 * module is the runtime's own, whatever policy code put in
 * package.loaded. */
static int sb_require(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  lua_settop(L, 1);
  if (!strcmp(name, "toolgate")) {
    lua_getfield(L, LUA_REGISTRYINDEX, TG_SANDBOX_MODULE);
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 1);
  }
  lua_pushvalue(L, 1);
  lua_rawget(L, lua_upvalueindex(1));
  if (!lua_isnil(L, -1)) return 1;
  lua_pop(L, 1);
  if (!module_name_ok(name))
    return luaL_error(L, "require: '%s' is not a module name; policies "
                         "require modules by name, like \"toolgate.shell\", "
                         "not by path", name);
  int fd = find_module(L, name, lua_tostring(L, lua_upvalueindex(2)));
  if (fd < 0)
    return luaL_error(L, "module '%s' not found: policies can require Lua "
                         "modules of the shipped library and of the policy "
                         "folder only (C modules are not available):%s",
                      name, lua_tostring(L, -1));
  /* a shipped module comes precompiled; should the binary's copy not
   * load (it was made for this Lua: it does), its source is read */
  const tg_lua_chunk *c = shipped_chunk(name, lua_tostring(L, -1) + 1);
  if (c && tg__lua_chunk_load(L, c, lua_tostring(L, -1)) == LUA_OK)
    close(fd);
  else {
    if (c) lua_pop(L, 1);
    if (load_module(L, fd) != LUA_OK) return lua_error(L);
  }
  tg__sandbox_set_env(L);
  lua_pushvalue(L, 1);
  lua_pushstring(L, lua_tostring(L, 2) + 1);
  lua_call(L, 2, 1);             /* module(name, file) */
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
  }
  lua_pushvalue(L, 1);
  lua_pushvalue(L, -2);
  lua_rawset(L, lua_upvalueindex(1));
  return 1;
}

/* ---- metatables ------------------------------------------------------------ */

/* Metatables are where finalizers live, and Lua runs a __gc finalizer with
 * hooks off: outside any time limit, and at close or reload, when nothing can
 * stop it (and past the memory cap, which only holds while policy code
 * runs). So policy code may neither attach a __gc nor reach a metatable the
 * runtime set (strings', file handles', the library tables', tg.array's
 * JSON marks): through one of those it could also change how every string
 * or file behaves. Upvalue 2 of both functions below: a weak-keyed set of
 * the tables policy code has passed to setmetatable, the only metatables
 * getmetatable shows. */

/* setmetatable without finalizers. Upvalue 1: the real setmetatable. */
static int sb_setmetatable(lua_State *L) {
  if (lua_istable(L, 2)) {
    lua_pushstring(L, "__gc");
    lua_rawget(L, 2);
    int has_gc = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (has_gc)
      return luaL_error(L, "setmetatable: __gc finalizers are not available "
                           "to policies (they run outside the "
                           "time limit); trusted_policies = true allows them");
    /* the policy has this table already: recording it shows nothing new,
     * even when the real setmetatable refuses it */
    lua_pushvalue(L, 2);
    lua_pushboolean(L, 1);
    lua_rawset(L, lua_upvalueindex(2));
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/* getmetatable(x): a __metatable field if the metatable has one, as in
 * plain Lua; the metatable if policy code set it; false (a protected
 * metatable) if the runtime did. */
static int sb_getmetatable(lua_State *L) {
  luaL_checkany(L, 1);
  if (!lua_getmetatable(L, 1)) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushstring(L, "__metatable");
  lua_rawget(L, -2);
  if (!lua_isnil(L, -1)) return 1;
  lua_pop(L, 1);
  lua_pushvalue(L, -1);
  lua_rawget(L, lua_upvalueindex(2));
  int policys = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (!policys) lua_pushboolean(L, 0);
  return 1;
}

static void install_metatable_functions(lua_State *L) {
  lua_newtable(L); /* the set of policy code's metatables */
  lua_createtable(L, 0, 1);
  lua_pushstring(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_getglobal(L, "setmetatable");
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, sb_setmetatable, 2);
  lua_setglobal(L, "setmetatable");
  lua_pushnil(L); /* no upvalue 1: getmetatable reads the raw metatable */
  lua_insert(L, -2);
  lua_pushcclosure(L, sb_getmetatable, 2);
  lua_setglobal(L, "getmetatable");
}

/* ---- the allow-lists ---------------------------------------------------------- */

static const char *const base_keep[] = {
    "_G", "_VERSION", "assert", "error", "getmetatable", "ipairs", "next",
    "pairs", "pcall", "rawequal", "rawget", "rawlen", "rawset", "select",
    "setmetatable", "tonumber", "tostring", "type", "unpack", "xpcall",
    "bit", "coroutine", "math", "string", "table", "utf8", "os", "io",
    "package", "debug", "print", "load", "loadstring", "collectgarbage",
    "require", NULL};
/* `if jit then` must keep working: jit (jit.on() would undo the time limit) is
 * absent rather than refused. */
static const char *const base_hide[] = {"jit", "arg", NULL};
static const char *const os_keep[] = {"clock", "date", "difftime", "getenv",
                                      "time", NULL};
static const char *const io_keep[] = {"open", "lines", "type", NULL};
static const char *const package_keep[] = {"config", "loaded", "path", NULL};
static const char *const debug_keep[] = {"traceback", NULL};
static const char *const string_keep[] = {
    "byte", "char", "find", "format", "gmatch", "gsub", "len", "lower",
    "match", "pack", "packsize", "rep", "reverse", "sub", "unpack", "upper",
    NULL};
static const char *const loaded_keep[] = {
    "_G", "bit", "coroutine", "debug", "io", "math", "os", "package",
    "string", "table", "utf8", NULL};

static void restrict_global(lua_State *L, const char *lib,
                            const char *const *keep) {
  lua_getglobal(L, lib);
  if (lua_istable(L, -1)) restrict_table(L, lib, keep, NULL, 1);
  lua_pop(L, 1);
}

/* Sets t[name] = C closure with the field `orig` of t as its upvalue. */
static void wrap_field(lua_State *L, const char *lib, const char *name,
                       lua_CFunction fn) {
  lua_getglobal(L, lib);
  lua_getfield(L, -1, name);
  lua_pushcclosure(L, fn, 1);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

static void install_replacements(lua_State *L, const char *path) {
  lua_getglobal(L, "tostring");
  lua_pushcclosure(L, sb_print, 1);
  lua_setglobal(L, "print");
  lua_pushcfunction(L, sb_load);
  lua_setglobal(L, "load");
#if !TG_LUA54
  lua_pushcfunction(L, sb_load); /* 5.1 code says loadstring */
  lua_setglobal(L, "loadstring");
#endif
  lua_pushcfunction(L, sb_collectgarbage);
  lua_setglobal(L, "collectgarbage");
  lua_getglobal(L, "rawset");
  lua_pushcclosure(L, sb_rawset, 1);
  lua_setglobal(L, "rawset");
  lua_getglobal(L, "pairs");
  lua_pushcclosure(L, sb_pairs, 1);
  lua_setglobal(L, "pairs");
  install_metatable_functions(L);
  wrap_field(L, "io", "open", sb_io_open);
  wrap_field(L, "io", "lines", sb_io_lines);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "loaded");
  lua_pushstring(L, path);
  lua_pushcclosure(L, sb_require, 2);
  lua_setglobal(L, "require");
  lua_pop(L, 1);
}

static void restrict_library(lua_State *L) {
  restrict_global(L, "os", os_keep);
  restrict_global(L, "io", io_keep);
  restrict_global(L, "debug", debug_keep);
  restrict_global(L, "string", string_keep);
  restrict_global(L, "package", package_keep);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "loaded");
  restrict_table(L, "package.loaded", loaded_keep, NULL, 0);
  lua_pop(L, 2);
  push_globals(L);
  restrict_table(L, "", base_keep, base_hide, 1);
  lua_pop(L, 1);
}

/* The functions that could run long inside one C call, made to poll:
 * string.find, match, gmatch and gsub (sandbox_pattern.c; also the
 * strings' methods, whose __index is the string table), os.date (its
 * format's length), string.rep,
 * table.move, insert and remove (5.4: LuaJIT's take the raw length,
 * bounded by memory, or are bytecode; LuaJIT's string.rep does no work
 * for an empty result), table.sort (LuaJIT) and reading lines (LuaJIT:
 * file:read, file:lines, io.lines). What C functions do by calling
 * functions (metamethods, comparators) is stopped by the stop hook,
 * which is a call hook too (sandbox.c). Trusted policies get them too:
 * the bound is a limit, like the time limit, not a restriction. */
static void install_bounded_functions(lua_State *L) {
  lua_getglobal(L, "string");
  tg__pattern_register(L, tg__sandbox_poll);
  lua_pop(L, 1);
  wrap_field(L, "os", "date", sb_os_date);
#if TG_LUA54
  wrap_field(L, "string", "rep", sb_string_rep);
  wrap_field(L, "table", "move", sb_table_move);
  lua_getglobal(L, "table");
  lua_pushcfunction(L, sb_table_insert);
  lua_setfield(L, -2, "insert");
  lua_pushcfunction(L, sb_table_remove);
  lua_setfield(L, -2, "remove");
  lua_pop(L, 1);
#else
  install_line_reading(L);
  lua_getglobal(L, "table");
  lua_getfield(L, -1, "sort");
  *(unsigned *)lua_newuserdata(L, sizeof(unsigned)) = 0;
  lua_pushcclosure(L, sort_less, 1);
  lua_pushcclosure(L, sb_table_sort, 2);
  lua_setfield(L, -2, "sort");
  lua_pop(L, 1);
#endif
}

void tg__sandbox_lib_open(lua_State *L, const char *policy_dir, int trusted) {
  set_package_path(L, policy_dir);
  make_env_mt(L);
  install_bounded_functions(L);
  if (trusted) return;
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  const char *path = lua_tostring(L, -1); /* anchored until the pop below */
  restrict_library(L);
  install_replacements(L, path);
  lua_pop(L, 2);
}
