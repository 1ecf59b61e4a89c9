/*
 * sandbox_pattern.c — Lua patterns for policy code, written from the
 * reference manual (5.4 §6.4.1; LuaJIT: the 5.1 rules) and matching the
 * builtin functions of the Lua toolgate is built for, results and error
 * messages alike (spec/lua/pattern_spec.lua compares them on thousands of
 * patterns). Why not the builtin ones: a backtracking pattern such as
 * ("a*"):rep(30) .. "b" takes exponential time inside one C call, where no
 * count hook runs, so one agent-controlled string could stall every call.
 *
 * The matcher is the classic backtracking one: match() walks the pattern,
 * and recurses at each choice (a repetition, an optional item, a capture),
 * trying the next alternative when the rest fails. It counts its steps
 * (every pattern item tried, and every character a repetition, %b, a back
 * reference or a plain find goes over) and calls the poll function every
 * TG_PATTERN_POLL_STEPS of them; the sandbox's poll raises once the call
 * is over its time bound. Recursion is bounded as in Lua: more than
 * MAX_DEPTH nested match() calls raise "pattern too complex".
 *
 * Where the two Luas differ (TG_LUA54 or not), each gets its own:
 *   - LuaJIT ends a pattern at its first NUL byte (but looks for specials
 *     in all of it, and a plain find uses all of it);
 *   - LuaJIT tries `*` and `-` through a recursion even when the item does
 *     not match here, so it reaches "pattern too complex" sooner;
 *   - find's init past the end: 5.4 fails, LuaJIT starts at the end;
 *   - gmatch takes an init argument in 5.4 only;
 *   - after a match, 5.4's gmatch and gsub skip an empty match ending where
 *     the last one ended; LuaJIT's step one character past an empty match;
 *   - gsub's replacement string: in 5.4 '%' must be followed by a digit or
 *     '%', in LuaJIT any other character stands for itself (a trailing '%'
 *     for a NUL);
 *   - error messages ("unbalanced pattern", "invalid capture index"
 *     without its number, argument errors without "got").
 */
#include <string.h>
#include "sandbox_pattern.h"

#define ESC '%'
#define MAX_CAPTURES 32 /* LUA_MAXCAPTURES in both Luas */
#define MAX_DEPTH 200   /* nested match() calls, as in both Luas */
#define CAP_OPEN (-1)
#define CAP_POSITION (-2)

#if TG_LUA54
#define MSG_BALANCE "malformed pattern (missing arguments to '%%b')"
#else
#define MSG_BALANCE "unbalanced pattern"
#endif

/* The poll function, in a userdata: upvalue 1 of every function here. */
typedef struct {
  tg_pattern_poll poll;
} poll_box;

typedef struct {
  const char *src, *src_end; /* the subject */
  const char *pat_end;       /* the end of the pattern */
  lua_State *L;
  tg_pattern_poll poll;
  long until_poll;           /* steps left before the next poll */
  int depth;                 /* nested match() calls */
  int ncap;                  /* captures opened so far */
  struct {
    const char *at;
    ptrdiff_t len; /* or CAP_OPEN, CAP_POSITION */
  } cap[MAX_CAPTURES];
} matcher;

/* The poll function of find, match, gmatch and gsub (upvalue 1). */
static tg_pattern_poll upvalue_poll(lua_State *L) {
  return ((const poll_box *)lua_touserdata(L, lua_upvalueindex(1)))->poll;
}

static void matcher_init(matcher *m, lua_State *L, const char *s, size_t ls,
                         const char *p, size_t lp, tg_pattern_poll poll) {
  m->src = s;
  m->src_end = s + ls;
  m->pat_end = p + lp;
  m->L = L;
  m->poll = poll;
  m->until_poll = TG_PATTERN_POLL_STEPS;
  m->depth = 0;
  m->ncap = 0;
}

static void charge(matcher *m, ptrdiff_t steps) {
  m->until_poll -= (long)steps;
  if (m->until_poll > 0) return;
  m->until_poll = TG_PATTERN_POLL_STEPS;
  m->poll(m->L);
}

/* The pattern as the matcher sees it: LuaJIT stops at a NUL. */
static size_t pattern_length(const char *p, size_t lp) {
#if TG_LUA54
  (void)p;
  return lp;
#else
  const char *nul = memchr(p, '\0', lp);
  return nul ? (size_t)(nul - p) : lp;
#endif
}

/* ---- single-character classes ------------------------------------------- */

/* Character classes of the C locale, which both Luas use here (LuaJIT has
 * its own ASCII tables; Lua 5.4's ctype calls see the C locale, since
 * nothing in toolgate calls setlocale). */
static int is_lower(int c) { return c >= 'a' && c <= 'z'; }
static int is_upper(int c) { return c >= 'A' && c <= 'Z'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alpha(int c) { return is_lower(c) || is_upper(c); }
static int is_graph(int c) { return c > ' ' && c < 127; }

/* Does c belong to %cl? A letter names a class (upper case: its
 * complement); anything else stands for itself. */
static int in_class(int c, int cl) {
  int in;
  switch (is_upper(cl) ? cl + ('a' - 'A') : cl) {
  case 'a': in = is_alpha(c); break;
  case 'c': in = c < ' ' || c == 127; break;
  case 'd': in = is_digit(c); break;
  case 'g': in = is_graph(c); break;
  case 'l': in = is_lower(c); break;
  case 'p': in = is_graph(c) && !is_alpha(c) && !is_digit(c); break;
  case 's': in = c == ' ' || (c >= '\t' && c <= '\r'); break;
  case 'u': in = is_upper(c); break;
  case 'w': in = is_alpha(c) || is_digit(c); break;
  case 'x': in = is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); break;
  case 'z': in = c == 0; break; /* deprecated, but both Luas have it */
  default: return cl == c;
  }
  return is_upper(cl) ? !in : in;
}

/* Does c belong to the set "[...]" from p (its '[') to close (its ']')? */
static int in_set(const char *p, const char *close, int c) {
  int want = 1;
  p++;
  if (*p == '^') {
    want = 0;
    p++;
  }
  for (; p < close; p++) {
    if (*p == ESC) {
      p++;
      if (in_class(c, (unsigned char)*p)) return want;
    } else if (p[1] == '-' && p + 2 < close) {
      if ((unsigned char)p[0] <= c && c <= (unsigned char)p[2]) return want;
      p += 2;
    } else if ((unsigned char)*p == c) {
      return want;
    }
  }
  return !want;
}

/* Past the single-character class at p: "x", "%x" or "[set]". */
static const char *class_end(matcher *m, const char *p) {
  char c = *p++;
  if (c == ESC) {
    if (p >= m->pat_end)
      luaL_error(m->L, "malformed pattern (ends with '%%')");
    return p + 1;
  }
  if (c != '[') return p;
  if (p < m->pat_end && *p == '^') p++;
  do { /* the first character is a member even if it is ']' */
    if (p >= m->pat_end)
      luaL_error(m->L, "malformed pattern (missing ']')");
    c = *p++;
    if (c == ESC && p < m->pat_end) p++;
  } while (p >= m->pat_end || *p != ']');
  return p + 1;
}

/* Does the class from p to ep match the subject character c? */
static int class_matches(const char *p, const char *ep, int c) {
  switch (*p) {
  case '.': return 1;
  case ESC: return in_class(c, (unsigned char)p[1]);
  case '[': return in_set(p, ep - 1, c);
  default: return (unsigned char)*p == c;
  }
}

/* ---- matching ----------------------------------------------------------- */

static const char *match(matcher *m, const char *s, const char *p);

/* Is there a character at s, in the class from p to ep? */
static int single(matcher *m, const char *s, const char *p, const char *ep) {
  return s < m->src_end && class_matches(p, ep, (unsigned char)*s);
}

/* The class from p to ep as often as it matches from s, then one fewer at a
 * time until the rest of the pattern (after ep's quantifier) matches. */
static const char *match_greedy(matcher *m, const char *s, const char *p,
                                const char *ep) {
  const char *t = s;
  while (single(m, t, p, ep)) t++;
  charge(m, t - s);
  for (;; t--) {
    const char *end = match(m, t, ep + 1);
    if (end || t == s) return end;
  }
}

/* The class as seldom as possible: one more each time the rest fails. */
static const char *match_lazy(matcher *m, const char *s, const char *p,
                              const char *ep) {
  for (;;) {
    const char *end = match(m, s, ep + 1);
    if (end) return end;
    if (!single(m, s, p, ep)) return NULL;
    s++;
  }
}

static const char *open_capture(matcher *m, const char *s, const char *p,
                                ptrdiff_t kind) {
  if (m->ncap >= MAX_CAPTURES) luaL_error(m->L, "too many captures");
  m->cap[m->ncap].at = s;
  m->cap[m->ncap].len = kind;
  m->ncap++;
  const char *end = match(m, s, p);
  if (!end) m->ncap--;
  return end;
}

static const char *close_capture(matcher *m, const char *s, const char *p) {
  int i = m->ncap - 1;
  while (i >= 0 && m->cap[i].len != CAP_OPEN) i--;
  if (i < 0) luaL_error(m->L, "invalid pattern capture");
  m->cap[i].len = s - m->cap[i].at;
  const char *end = match(m, s, p);
  if (!end) m->cap[i].len = CAP_OPEN;
  return end;
}

static int capture_index_error(matcher *m, int i) {
#if TG_LUA54
  return luaL_error(m->L, "invalid capture index %%%d", i + 1);
#else
  (void)i;
  return luaL_error(m->L, "invalid capture index");
#endif
}

/* %1..%9 in a pattern: the text capture digit matched, again. */
static const char *match_backref(matcher *m, const char *s, int digit) {
  int i = digit - '1';
  if (i < 0 || i >= m->ncap || m->cap[i].len == CAP_OPEN)
    capture_index_error(m, i);
  size_t len = (size_t)m->cap[i].len; /* a position capture: never fits */
  if ((size_t)(m->src_end - s) < len || memcmp(m->cap[i].at, s, len) != 0)
    return NULL;
  charge(m, (ptrdiff_t)len);
  return s + len;
}

/* %bxy at p (p: "xy..."): from an x at s to the y that balances it. */
static const char *match_balance(matcher *m, const char *s, const char *p) {
  if (p + 1 >= m->pat_end) luaL_error(m->L, MSG_BALANCE);
  if (s >= m->src_end || *s != p[0]) return NULL;
  long open = 1;
  const char *t = s;
  while (++t < m->src_end) {
    if (*t == p[1]) {
      if (--open == 0) break;
    } else if (*t == p[0]) {
      open++;
    }
  }
  charge(m, t - s);
  return t < m->src_end ? t + 1 : NULL;
}

/* %f[set] at p (p: "[set]..."): between a character not in the set and
 * one in it (the subject's edges count as NUL). Returns the pattern after
 * it, or NULL. */
static const char *match_frontier(matcher *m, const char *s, const char *p) {
  if (p >= m->pat_end || *p != '[')
    luaL_error(m->L, "missing '[' after '%%f' in pattern");
  const char *ep = class_end(m, p);
  int before = s > m->src ? (unsigned char)s[-1] : 0;
  int here = s < m->src_end ? (unsigned char)*s : 0;
  return !in_set(p, ep - 1, before) && in_set(p, ep - 1, here) ? ep : NULL;
}

/* The body of match: the end of the match of pattern p at s, or NULL.
 * Items that cannot backtrack loop here; choices recurse. */
static const char *match_here(matcher *m, const char *s, const char *p) {
  for (;;) {
    charge(m, 1); /* a long pattern is work too */
    if (p >= m->pat_end) return s;
    switch (*p) {
    case '(':
      if (p + 1 < m->pat_end && p[1] == ')')
        return open_capture(m, s, p + 2, CAP_POSITION);
      return open_capture(m, s, p + 1, CAP_OPEN);
    case ')':
      return close_capture(m, s, p + 1);
    case '$':
      if (p + 1 == m->pat_end) return s == m->src_end ? s : NULL;
      break; /* elsewhere, '$' is an ordinary character */
    case ESC:
      if (p + 1 >= m->pat_end) break; /* class_end reports it */
      if (p[1] == 'b') {
        if (!(s = match_balance(m, s, p + 2))) return NULL;
        p += 4;
        continue;
      }
      if (p[1] == 'f') {
        if (!(p = match_frontier(m, s, p + 2))) return NULL;
        continue;
      }
      if (is_digit((unsigned char)p[1])) {
        if (!(s = match_backref(m, s, (unsigned char)p[1]))) return NULL;
        p += 2;
        continue;
      }
      break;
    }
    const char *ep = class_end(m, p);
    int hit = single(m, s, p, ep);
    switch (ep < m->pat_end ? *ep : '\0') {
    case '?':
      if (hit) {
        const char *end = match(m, s + 1, ep + 1);
        if (end) return end;
      }
      p = ep + 1;
      continue;
    case '+':
      return hit ? match_greedy(m, s + 1, p, ep) : NULL;
    case '*':
    case '-':
#if TG_LUA54
      if (!hit) { /* zero times: no choice to remember */
        p = ep + 1;
        continue;
      }
#endif
      return *ep == '*' ? match_greedy(m, s, p, ep) : match_lazy(m, s, p, ep);
    default:
      if (!hit) return NULL;
      s++;
      p = ep;
    }
  }
}

static const char *match(matcher *m, const char *s, const char *p) {
  if (m->depth >= MAX_DEPTH) luaL_error(m->L, "pattern too complex");
  m->depth++;
  const char *end = match_here(m, s, p);
  m->depth--;
  return end;
}

/* ---- captures -------------------------------------------------------------- */

/* Pushes capture i of the match from s to e (without captures, capture 0
 * is the whole match). */
static void push_capture(matcher *m, int i, const char *s, const char *e) {
  if (i >= m->ncap) {
    if (i != 0) capture_index_error(m, i);
    lua_pushlstring(m->L, s, (size_t)(e - s));
    return;
  }
  ptrdiff_t len = m->cap[i].len;
  if (len == CAP_OPEN) luaL_error(m->L, "unfinished capture");
  if (len == CAP_POSITION)
    lua_pushinteger(m->L, (lua_Integer)(m->cap[i].at - m->src) + 1);
  else
    lua_pushlstring(m->L, m->cap[i].at, (size_t)len);
}

/* Pushes every capture (s NULL: none for a match without captures).
 * Returns how many. */
static int push_captures(matcher *m, const char *s, const char *e) {
  int n = m->ncap == 0 && s ? 1 : m->ncap;
  luaL_checkstack(m->L, n, "too many captures");
  for (int i = 0; i < n; i++) push_capture(m, i, s, e);
  return n;
}

/* ---- find and match ---------------------------------------------------------- */

/* Does the pattern need the matcher? */
static int has_specials(const char *p, size_t lp) {
  for (size_t i = 0; i < lp; i++) {
    switch (p[i]) {
    case '^': case '$': case '*': case '+': case '?': case '.': case '(':
    case '[': case '%': case '-':
      return 1;
    }
  }
  return 0;
}

/* Where p (lp bytes) first occurs in s (ls bytes), or NULL. */
static const char *find_plain(matcher *m, const char *s, size_t ls,
                              const char *p, size_t lp) {
  if (lp == 0) return s;
  if (lp > ls) return NULL;
  const char *last = s + (ls - lp); /* the last place p can start */
  while (s <= last) {
    const char *at = memchr(s, p[0], (size_t)(last - s) + 1);
    if (!at) return NULL;
    charge(m, (ptrdiff_t)lp);
    if (memcmp(at + 1, p + 1, lp - 1) == 0) return at;
    s = at + 1;
  }
  return NULL;
}

/* find's and match's init (1-based, negative from the end) as an offset
 * into s; past ls: nothing can be found (5.4) — LuaJIT starts at the end. */
static size_t start_offset(lua_Integer init, size_t ls) {
  if (init > 0) {
#if TG_LUA54
    return (size_t)init - 1;
#else
    return (size_t)init - 1 > ls ? ls : (size_t)init - 1;
#endif
  }
  if (init == 0 || init < -(lua_Integer)ls) return 0;
  return ls + (size_t)init; /* init negative: ls + init + 1, minus one */
}

static int find_or_match(lua_State *L, int find) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  size_t init = start_offset(luaL_optinteger(L, 3, 1), ls);
  matcher m;
  if (init > ls) {
    lua_pushnil(L);
    return 1;
  }
  if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
    matcher_init(&m, L, s, ls, p, lp, upvalue_poll(L));
    const char *at = find_plain(&m, s + init, ls - init, p, lp);
    if (!at) {
      lua_pushnil(L);
      return 1;
    }
    lua_pushinteger(L, (lua_Integer)(at - s) + 1);
    lua_pushinteger(L, (lua_Integer)(at - s + (ptrdiff_t)lp));
    return 2;
  }
  lp = pattern_length(p, lp);
  int anchor = lp > 0 && *p == '^';
  if (anchor) p++, lp--;
  matcher_init(&m, L, s, ls, p, lp, upvalue_poll(L));
  const char *at = s + init;
  do {
    m.ncap = 0;
    const char *end = match(&m, at, p);
    if (end && find) {
      lua_pushinteger(L, (lua_Integer)(at - s) + 1);
      lua_pushinteger(L, (lua_Integer)(end - s));
      return push_captures(&m, NULL, NULL) + 2;
    }
    if (end) return push_captures(&m, at, end);
  } while (at++ < m.src_end && !anchor);
  lua_pushnil(L);
  return 1;
}

static int sb_find(lua_State *L) { return find_or_match(L, 1); }
static int sb_match(lua_State *L) { return find_or_match(L, 0); }

/* ---- gmatch --------------------------------------------------------------------- */

/* What the iterator goes on from: a userdata, upvalue 1 of the iterator
 * (the subject and the pattern, upvalues 2 and 3, keep s and p alive). */
typedef struct {
  const char *s, *p;
  size_t ls, lp;
  size_t from;          /* offset to go on from */
  ptrdiff_t last;       /* 5.4: where the last match ended (-1: none) */
  tg_pattern_poll poll;
} gmatch_state;

static int gmatch_next(lua_State *L) {
  gmatch_state *g = lua_touserdata(L, lua_upvalueindex(1));
  matcher m;
  matcher_init(&m, L, g->s, g->ls, g->p, g->lp, g->poll);
  for (const char *at = g->s + g->from; at <= m.src_end; at++) {
    m.ncap = 0;
    const char *end = match(&m, at, g->p);
#if TG_LUA54
    if (!end || end - g->s == g->last) continue;
    g->from = (size_t)(end - g->s);
    g->last = end - g->s;
#else
    if (!end) continue;
    g->from = (size_t)(end - g->s) + (end == at); /* past an empty match */
#endif
    return push_captures(&m, at, end);
  }
  return 0;
}

static int sb_gmatch(lua_State *L) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
#if TG_LUA54
  size_t from = start_offset(luaL_optinteger(L, 3, 1), ls);
  if (from > ls) from = ls + 1; /* nothing to find */
#else
  size_t from = 0; /* LuaJIT's gmatch has no init argument */
#endif
  tg_pattern_poll poll = upvalue_poll(L);
  lua_settop(L, 2);
  gmatch_state *g = lua_newuserdatauv(L, sizeof *g, 0);
  g->s = s;
  g->ls = ls;
  g->p = p;
  g->lp = pattern_length(p, lp);
  g->from = from;
  g->last = -1;
  g->poll = poll;
  lua_insert(L, 1);
  lua_pushcclosure(L, gmatch_next, 3);
  return 1;
}

/* ---- gsub ------------------------------------------------------------------------- */

/* Appends the replacement string (argument 3) for the match s..e. */
static void add_replacement_string(matcher *m, luaL_Buffer *b, const char *s,
                                   const char *e) {
  size_t len;
  const char *r = lua_tolstring(m->L, 3, &len), *end = r + len;
  while (r < end) {
    const char *esc = memchr(r, ESC, (size_t)(end - r));
    if (!esc) {
      luaL_addlstring(b, r, (size_t)(end - r));
      return;
    }
    luaL_addlstring(b, r, (size_t)(esc - r));
    charge(m, 1); /* "%1" of an empty capture adds nothing, and costs */
    int c = esc + 1 < end ? (unsigned char)esc[1] : '\0';
    if (c == '0') {
      luaL_addlstring(b, s, (size_t)(e - s));
    } else if (is_digit(c)) {
      push_capture(m, c - '1', s, e);
      luaL_addvalue(b); /* a position capture adds its number */
    } else {
#if TG_LUA54
      if (c != ESC)
        luaL_error(m->L, "invalid use of '%c' in replacement string", ESC);
#endif
      luaL_addchar(b, (char)c); /* LuaJIT: "%x" is x, a final '%' a NUL */
    }
    r = esc + 2;
  }
}

/* Appends what replaces the match s..e; repl_type: argument 3's type. */
static void add_replacement(matcher *m, luaL_Buffer *b, const char *s,
                            const char *e, int repl_type) {
  lua_State *L = m->L;
  if (repl_type == LUA_TFUNCTION) {
    lua_pushvalue(L, 3);
    lua_call(L, push_captures(m, s, e), 1);
  } else if (repl_type == LUA_TTABLE) {
    push_capture(m, 0, s, e);
    lua_gettable(L, 3);
  } else {
    add_replacement_string(m, b, s, e);
    return;
  }
  if (!lua_toboolean(L, -1)) { /* nil or false: keep the match */
    lua_pop(L, 1);
    luaL_addlstring(b, s, (size_t)(e - s));
  } else if (!lua_isstring(L, -1)) {
    luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  } else {
    luaL_addvalue(b);
  }
}

static int sb_gsub(lua_State *L) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  int repl_type = lua_type(L, 3);
#if TG_LUA54
  lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
  if (repl_type != LUA_TNUMBER && repl_type != LUA_TSTRING &&
      repl_type != LUA_TFUNCTION && repl_type != LUA_TTABLE)
    return luaL_typeerror(L, 3, "string/function/table");
#else
  int max = (int)luaL_optinteger(L, 4, (int)(ls + 1)); /* luaL_optint */
  if (repl_type != LUA_TNUMBER && repl_type != LUA_TSTRING &&
      repl_type != LUA_TFUNCTION && repl_type != LUA_TTABLE)
    return luaL_argerror(L, 3, "string/function/table expected");
#endif
  lp = pattern_length(p, lp);
  int anchor = lp > 0 && *p == '^';
  if (anchor) p++, lp--;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  matcher m;
  matcher_init(&m, L, s, ls, p, lp, upvalue_poll(L));
  const char *at = s, *last = NULL;
  lua_Integer n = 0;
  while (n < max) {
    m.ncap = 0;
    const char *end = match(&m, at, p);
#if TG_LUA54
    if (end && end != last) { /* not empty right after the last match */
      n++;
      add_replacement(&m, &b, at, end, repl_type);
      at = last = end;
    } else if (at < m.src_end) {
      luaL_addchar(&b, *at++);
    } else {
      break;
    }
#else
    (void)last;
    if (end) {
      n++;
      add_replacement(&m, &b, at, end, repl_type);
    }
    if (end && end > at) at = end;
    else if (at < m.src_end) luaL_addchar(&b, *at++);
    else break;
#endif
    if (anchor) break;
  }
  luaL_addlstring(&b, at, (size_t)(m.src_end - at));
  luaL_pushresult(&b);
  lua_pushinteger(L, n);
  return 2;
}

void tg__pattern_register(lua_State *L, tg_pattern_poll poll) {
  static const luaL_Reg fns[] = {{"find", sb_find},
                                 {"match", sb_match},
                                 {"gmatch", sb_gmatch},
                                 {"gsub", sb_gsub},
                                 {NULL, NULL}};
  poll_box *box = lua_newuserdatauv(L, sizeof *box, 0);
  box->poll = poll;
  luaL_setfuncs(L, fns, 1);
}
