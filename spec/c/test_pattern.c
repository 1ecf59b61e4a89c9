/*
 * test_pattern.c — the bound of the sandbox's Lua patterns
 * (src/policy/sandbox_pattern.c): every pattern function calls its poll
 * function at least once per TG_PATTERN_POLL_STEPS steps, so a poll that
 * raises stops even an exponential pattern; and a policy state's string
 * functions (and strings' methods) are these. That results match the
 * builtin functions is spec/lua/pattern_spec.lua's job.
 */
#include "helpers.h"
#include "internal.h"

#define POLLS "test.polls"
#define POLL_LIMIT "test.poll_limit"

static lua_Integer registry_int(lua_State *L, const char *key) {
  lua_getfield(L, LUA_REGISTRYINDEX, key);
  lua_Integer n = lua_tointeger(L, -1);
  lua_pop(L, 1);
  return n;
}

static void set_registry_int(lua_State *L, const char *key, lua_Integer n) {
  lua_pushinteger(L, n);
  lua_setfield(L, LUA_REGISTRYINDEX, key);
}

/* Counts its calls; raises once it has been called POLL_LIMIT times. */
static void counting_poll(lua_State *L) {
  lua_Integer n = registry_int(L, POLLS) + 1;
  set_registry_int(L, POLLS, n);
  lua_Integer limit = registry_int(L, POLL_LIMIT);
  if (limit && n >= limit) luaL_error(L, "stopped by the poll");
}

/* A plain state whose global P has the bounded functions. */
static lua_State *pattern_state(lua_Integer limit) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_newtable(L);
  tg__pattern_register(L, counting_poll);
  lua_setglobal(L, "P");
  set_registry_int(L, POLLS, 0);
  set_registry_int(L, POLL_LIMIT, limit);
  return L;
}

/* Runs code; returns the number of polls it made. */
static lua_Integer polls_of(lua_State *L, const char *code) {
  set_registry_int(L, POLLS, 0);
  if (luaL_dostring(L, code) != 0)
    TG_FAIL("%s: %s", code, lua_tostring(L, -1));
  return registry_int(L, POLLS);
}

/* Each search below goes over at least `minimum` steps, whatever the
 * matcher does, none longer than `longest` at once (a scan over the
 * subject by a repetition or %b counts as one). A poll once the steps since
 * the last one reach TG_PATTERN_POLL_STEPS means at least
 * minimum / (TG_PATTERN_POLL_STEPS + longest) polls. */
static void assert_polls(lua_State *L, const char *code, long long minimum,
                         long long longest) {
  lua_Integer n = polls_of(L, code);
  long long expected = minimum / (TG_PATTERN_POLL_STEPS + longest);
  if (expected < 10) TG_FAIL("%s: too small a case to tell", code);
  if (n < expected)
    TG_FAIL("%s polled %lld times, less than the %lld its %lld steps need",
            code, (long long)n, expected, minimum);
}

TEST(every_function_polls_at_least_every_poll_steps) {
  lua_State *L = pattern_state(0);
  ASSERT_OK(luaL_dostring(L, "S = ('a'):rep(4000)")); /* no b anywhere */
  /* a*b at each of n starts goes over the n - i a's left: n(n+1)/2 */
  long long n = 4000, quadratic = n * (n + 1) / 2;
  assert_polls(L, "assert(P.find(S, 'a*b') == nil)", quadratic, n);
  assert_polls(L, "assert(P.match(S, 'a-b') == nil)", quadratic, 1);
  assert_polls(L, "for _ in P.gmatch(S, 'a*b') do error('no') end", quadratic, n);
  assert_polls(L, "assert(select(2, P.gsub(S, '(a*)b', 'x')) == 0)", quadratic, n);
  assert_polls(L, "assert(P.find(S, '%ba!') == nil)", quadratic, n); /* to the end */
  /* a long pattern: 999 items tried at each of the first 3001 starts */
  assert_polls(L, "assert(P.find(S, ('a'):rep(999) .. '$') == 3002)", 3001LL * 999, 1);
  /* a replacement of 2000 empty captures at each of 4001 empty matches */
  assert_polls(L, "assert(#P.gsub(S, '(x*)', ('%1'):rep(2000) .. '%0') == 4000)",
               4001LL * 2000, 1);
  /* a plain find compares the needle at each of the 4000 - 99 places */
  assert_polls(L, "assert(P.find(S, ('a'):rep(99) .. 'b', 1, true) == nil)",
               3901LL * 100, 100);
  /* and so does find without specials */
  assert_polls(L, "assert(P.find(S, ('a'):rep(99) .. 'b') == nil)", 3901LL * 100,
               100);
  lua_close(L);
}

TEST(a_poll_that_raises_stops_an_exponential_pattern) {
  lua_State *L = pattern_state(50);
  const char *code[] = {
      "return P.find(('a'):rep(30), ('a*'):rep(30) .. 'b')",
      "return P.match(('a'):rep(30), ('a-'):rep(30) .. 'b')",
      "return P.gsub(('a'):rep(30), ('(a*)'):rep(16) .. 'b', '')",
      "for _ in P.gmatch(('a'):rep(30), ('a?'):rep(30) .. 'b') do end"};
  for (size_t i = 0; i < sizeof code / sizeof *code; i++) {
    set_registry_int(L, POLLS, 0);
    ASSERT_OK(luaL_loadstring(L, code[i]));
    ASSERT_INT_EQ(lua_pcall(L, 0, 0, 0), LUA_ERRRUN);
    ASSERT_CONTAINS(lua_tostring(L, -1), "stopped by the poll");
    lua_pop(L, 1);
    ASSERT_INT_EQ(registry_int(L, POLLS), 50);
  }
  /* the state is fine afterwards */
  ASSERT_OK(luaL_dostring(L, "assert(P.find('hello', 'l+') == 3)"));
  lua_close(L);
}

TEST(too_deep_a_pattern_raises_pattern_too_complex) {
  lua_State *L = pattern_state(0);
  ASSERT_OK(
      luaL_loadstring(L, "return P.find(('a'):rep(300), ('a?'):rep(300))"));
  ASSERT_INT_EQ(lua_pcall(L, 0, 0, 0), LUA_ERRRUN);
  ASSERT_CONTAINS(lua_tostring(L, -1), "pattern too complex");
  lua_close(L);
}

/* Is t[name] (t on top) one of the bounded functions: a C closure whose
 * first upvalue is the poll box? */
static int is_bounded(lua_State *L, const char *name) {
  lua_getfield(L, -1, name);
  int bounded = lua_iscfunction(L, -1) && lua_getupvalue(L, -1, 1) &&
                lua_type(L, -1) == LUA_TUSERDATA;
  lua_settop(L, lua_gettop(L) - (bounded ? 2 : 1));
  return bounded;
}

TEST(policy_states_use_the_bounded_functions) {
  for (int trusted = 0; trusted <= 1; trusted++) {
    tg_config cfg;
    tg_config_init(&cfg);
    cfg.trusted_policies = trusted;
    tg_sandbox *sb = NULL;
    char err[256];
    lua_State *L = tg__sandbox_new(&cfg, NULL, &sb, err, sizeof err);
    ASSERT_NOT_NULL(L);
    const char *names[] = {"find", "match", "gmatch", "gsub"};
    lua_getglobal(L, "string");
    for (int i = 0; i < 4; i++) ASSERT_TRUE(is_bounded(L, names[i]));
    lua_pop(L, 1);
    lua_pushliteral(L, ""); /* strings' methods: the same table */
    ASSERT_TRUE(lua_getmetatable(L, -1));
    lua_getfield(L, -1, "__index");
    for (int i = 0; i < 4; i++) ASSERT_TRUE(is_bounded(L, names[i]));
    lua_pop(L, 3);
    tg__sandbox_close(L, sb);
  }
}

TEST_MAIN(TEST_ENTRY(every_function_polls_at_least_every_poll_steps),
          TEST_ENTRY(a_poll_that_raises_stops_an_exponential_pattern),
          TEST_ENTRY(too_deep_a_pattern_raises_pattern_too_complex),
          TEST_ENTRY(policy_states_use_the_bounded_functions))
