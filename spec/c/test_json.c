/*
 * test_json.c — src/base/json.{c,h}: what the one parser refuses and the
 * message it gives (duplicate keys with their path, numbers out of range,
 * invalid UTF-8, lone surrogates, \u0000, depth, trailing text), the same
 * rules for trees built in C (tg__json_check), and numbers and strings as
 * tg_json_print writes them; and through the C API, a call whose args
 * hold a key twice does not start (the exec tool would have run the first
 * "command", the rules judged the last).
 */
#include "helpers.h"
#include "internal.h"
#include <float.h>

/* Parses a C string; the tree, or NULL with the message in err. */
static cJSON *parse(const char *text, char *err, size_t errlen) {
  return tg_json_parse(text, strlen(text), NULL, err, errlen);
}

#define REFUSED(text, msg)                                               \
  do {                                                                   \
    char e_[512] = "";                                                   \
    cJSON *v_ = parse(text, e_, sizeof e_);                              \
    if (v_) TG_FAIL("%s should be refused", text);                       \
    ASSERT_STR_EQ(e_, msg);                                              \
  } while (0)

#define ACCEPTED(text)                                                   \
  do {                                                                   \
    char e_[512] = "";                                                   \
    cJSON *v_ = parse(text, e_, sizeof e_);                              \
    if (!v_) TG_FAIL("%s should parse, got: %s", text, e_);              \
    cJSON_Delete(v_);                                                    \
  } while (0)

/* The case: a rule would read the last "command", exec the first. */
TEST(duplicate_key_refused_with_path) {
  REFUSED("{\"command\":\"rm -f victim; echo removed\",\"command\":\"echo hi\"}",
          "$.command: duplicate key \"command\" (a key may appear once in an "
          "object) (byte 40)");
  REFUSED("{\"path\":\".env\",\"path\":\"ok.txt\"}",
          "$.path: duplicate key \"path\" (a key may appear once in an object) "
          "(byte 15)");
  REFUSED("{\"a\":[1,2,{\"command\":\"x\",\"command\":\"y\"}]}",
          "$.a[2].command: duplicate key \"command\" (a key may appear once "
          "in an object) (byte 25)");
  /* the same key written with an escape is the same key */
  REFUSED("{\"a\":1,\"\\u0061\":2}",
          "$.a: duplicate key \"a\" (a key may appear once in an object) "
          "(byte 7)");
  REFUSED("{\"not ident\":1,\"not ident\":2}",
          "$[\"not ident\"]: duplicate key \"not ident\" (a key may appear "
          "once in an object) (byte 15)");
  ACCEPTED("{\"a\":{\"a\":1},\"b\":{\"a\":2}}"); /* the same key in two objects */
}

/* Past 16 members the check sorts; it must still name the first repeat. */
TEST(duplicate_key_in_a_big_object) {
  char text[4096] = "{";
  for (int i = 0; i < 300; i++)
    snprintf(text + strlen(text), sizeof text - strlen(text), "\"k%d\":%d,",
             i, i);
  strcat(text, "\"k250\":1,\"k7\":2}");
  char err[512] = "";
  size_t at = 0;
  cJSON *v = tg_json_parse(text, strlen(text), &at, err, sizeof err);
  ASSERT_NULL(v);
  ASSERT_CONTAINS(err, "$.k250: duplicate key \"k250\"");
  ASSERT_INT_EQ(at, strstr(text, "\"k250\":1") - text);
  text[strlen(text) - strlen(",\"k250\":1,\"k7\":2}")] = '}';
  text[strlen(text) - strlen("\"k250\":1,\"k7\":2}")] = '\0';
  ACCEPTED(text);
}

TEST(numbers_out_of_range_refused) {
  REFUSED("{\"n\":1e400}", "$.n: the number 1e400 is out of range (JSON "
          "numbers must fit a double: at most about 1.8e308) (byte 5)");
  REFUSED("[-1e400]", "$[0]: the number -1e400 is out of range (JSON numbers "
          "must fit a double: at most about 1.8e308) (byte 1)");
  ACCEPTED("1.7976931348623157e308");
  ACCEPTED("1e-400"); /* underflows to 0: a finite double */
  REFUSED("01", "$: a number may not start with 0 (01) (byte 0)");
  REFUSED("1.", "$: expected a digit after the decimal point, found the end "
          "of the text (byte 2)");
  REFUSED("-", "$: expected a digit, found the end of the text (byte 1)");
  REFUSED("1e+", "$: expected a digit in the exponent, found the end of the "
          "text (byte 3)");
  REFUSED(".5", "$: expected a JSON value, found '.' (byte 0)");
  REFUSED("+1", "$: expected a JSON value, found '+' (byte 0)");
  REFUSED("NaN", "$: expected a JSON value, found 'N' (byte 0)");
  REFUSED("Infinity", "$: expected a JSON value, found 'I' (byte 0)");
}

TEST(invalid_utf8_refused) {
  REFUSED("{\"s\":\"a\xff\"}",
          "$.s: a string is not valid UTF-8 (byte 0xff) (byte 7)");
  REFUSED("{\"s\":\"\xc0\x80\"}", /* overlong NUL */
          "$.s: a string is not valid UTF-8 (byte 0xc0) (byte 6)");
  REFUSED("{\"s\":\"\xed\xa0\x80\"}", /* a surrogate, encoded */
          "$.s: a string is not valid UTF-8 (byte 0xed) (byte 6)");
  REFUSED("{\"s\":\"\xe2\x82\"}", /* cut short */
          "$.s: a string is not valid UTF-8 (byte 0xe2) (byte 6)");
  REFUSED("{\"k\xff\":1}", "$: a key is not valid UTF-8 (byte 0xff) (byte 3)");
  ACCEPTED("{\"s\":\"caf\xc3\xa9 \xf0\x9f\x98\x80\"}");
}

TEST(lone_surrogates_and_nul_refused) {
  REFUSED("[\"\\ud800\"]", "$[0]: \\ud800 in a string is a high surrogate not "
          "followed by a low one (\\udc00-\\udfff) (byte 2)");
  REFUSED("[\"\\ud800\\u0041\"]", "$[0]: \\ud800 in a string is a high "
          "surrogate not followed by a low one (\\udc00-\\udfff) (byte 2)");
  REFUSED("[\"x\\udc00\"]", "$[0]: \\udc00 in a string is a lone low "
          "surrogate, not a character (byte 3)");
  REFUSED("{\"s\":\"echo hi\\u0000; rm -rf /\"}", "$.s: \\u0000 (NUL) in a "
          "string: toolgate cannot carry NUL characters (byte 13)");
  REFUSED("{\"path\\u0000x\":1}", "$: \\u0000 (NUL) in a key: toolgate cannot "
          "carry NUL characters (byte 6)");
  REFUSED("[\"\\x\"]", "$[0]: an invalid escape in a string: '\\' followed by "
          "'x' (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX) (byte 2)");
  REFUSED("[\"\\u12g4\"]", "$[0]: \\u in a string is not followed by 4 hex "
          "digits (byte 2)");
  char err[256];
  cJSON *v = parse("[\"\\ud83d\\ude00 \\u00e9\\/\"]", err, sizeof err);
  ASSERT_NOT_NULL(v);
  ASSERT_STR_EQ(v->child->valuestring, "\xf0\x9f\x98\x80 \xc3\xa9/");
  cJSON_Delete(v);
}

/* A NUL byte or a raw control character is not text JSON allows. */
TEST(control_characters_refused) {
  char err[256] = "";
  const char text[] = "{\"command\":\"echo hi\0; rm -rf /\"}";
  size_t at = 0;
  ASSERT_NULL(tg_json_parse(text, sizeof text - 1, &at, err, sizeof err));
  ASSERT_STR_EQ(err, "$.command: a raw control character (0x00) in a string: "
                "write it escaped (\\n, \\t, \\u00XX) (byte 19)");
  ASSERT_INT_EQ(at, 19);
  REFUSED("[\"a\nb\"]", "$[0]: a raw control character (0x0a) in a string: "
          "write it escaped (\\n, \\t, \\u00XX) (byte 3)");
  const char outside[] = "{\"a\":1}\0";
  ASSERT_NULL(
      tg_json_parse(outside, sizeof outside - 1, NULL, err, sizeof err));
  ASSERT_STR_EQ(err, "$: text after the JSON value: byte 0x00 (byte 7)");
}

TEST(syntax_errors_say_what_and_where) {
  REFUSED("", "$: expected a JSON value, found the end of the text (byte 0)");
  REFUSED("{\"a\":1} x", "$: text after the JSON value: 'x' (byte 8)");
  REFUSED("{\"a\":1}{}", "$: text after the JSON value: '{' (byte 7)");
  REFUSED("{\"a\" 1}", "$.a: expected ':' after the key, found '1' (byte 5)");
  REFUSED("{\"a\":1,}", "$: expected a key in double quotes, found '}' (byte 7)");
  REFUSED("{\"a\":[1 2]}", "$.a: expected ',' or ']' after an element, found "
          "'2' (byte 8)");
  REFUSED("{\"a\":\"x", "$.a: a string is not closed (no ending '\"') (byte 5)");
  REFUSED("[tru]", "$[0]: expected a JSON value, found 't' (byte 1)");
  REFUSED("{'a':1}", "$: expected a key in double quotes, found ''' (byte 1)");
  ACCEPTED(" \t\r\n{ \"a\" : [ true , false , null , -0.5e-3 ] } \n");
}

static char *nested(int levels) {
  char *s = malloc((size_t)levels * 2 + 1);
  for (int i = 0; i < levels; i++) {
    s[i] = '[';
    s[levels * 2 - 1 - i] = ']';
  }
  s[levels * 2] = '\0';
  return s;
}

TEST(depth_limit) {
  char *ok = nested(TG_JSON_MAX_DEPTH), *deep = nested(TG_JSON_MAX_DEPTH + 1);
  ACCEPTED(ok);
  char err[4096] = "";
  ASSERT_NULL(parse(deep, err, sizeof err));
  ASSERT_CONTAINS(err, "nested deeper than 128 levels (byte 128)");
  free(ok);
  free(deep);
}

/* A host's tree gets the parser's rules: a C host that parsed the agent's
 * text with cJSON_Parse hands over both "command" members. */
TEST(check_trees_built_in_c) {
  char err[256] = "";
  cJSON *a = cJSON_Parse("{\"command\":\"rm -f victim\",\"command\":\"echo hi\"}");
  ASSERT_INT_EQ(tg__json_check(a, err, sizeof err), -1);
  ASSERT_STR_EQ(err, "$.command: duplicate key \"command\" (a key may appear "
                "once in an object)");
  cJSON_Delete(a);
  a = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(a, "x");
  cJSON_AddItemToArray(arr, cJSON_CreateNumber(NAN));
  ASSERT_INT_EQ(tg__json_check(a, err, sizeof err), -1);
  ASSERT_STR_EQ(err, "$.x[0]: a number is not finite");
  cJSON_DeleteItemFromArray(arr, 0);
  cJSON_AddItemToArray(arr, cJSON_CreateString("a\xff"));
  ASSERT_INT_EQ(tg__json_check(a, err, sizeof err), -1);
  ASSERT_STR_EQ(err, "$.x[0]: a string is not valid UTF-8 (byte 0xff at offset 1)");
  cJSON_DeleteItemFromArray(arr, 0);
  cJSON_AddItemToArray(arr, cJSON_CreateRaw("1, \"injected\": 2"));
  ASSERT_INT_EQ(tg__json_check(a, err, sizeof err), -1);
  ASSERT_STR_EQ(err, "$.x[0]: not a JSON value (a raw or invalid cJSON node)");
  cJSON_DeleteItemFromArray(arr, 0);
  cJSON_AddItemToArray(arr, cJSON_CreateString("fine"));
  ASSERT_OK(tg__json_check(a, err, sizeof err), err);
  cJSON_Delete(a);
  char *deep = nested(TG_JSON_MAX_DEPTH + 1);
  a = cJSON_Parse(deep);
  ASSERT_INT_EQ(tg__json_check(a, err, sizeof err), -1);
  ASSERT_CONTAINS(err, "nested deeper than 128 levels");
  cJSON_Delete(a);
  free(deep);
}

/* print, then parse again: the very same double, sign of zero included. */
static void round_trip(double d, const char *want) {
  char buf[TG_JSON_NUMBER_MAX], err[256];
  ASSERT_STR_EQ(tg_json_number_text(d, buf), want);
  cJSON *n = cJSON_CreateNumber(d);
  char *text = tg_json_print(n, 0);
  ASSERT_STR_EQ(text, want);
  cJSON *back = tg_json_parse(text, strlen(text), NULL, err, sizeof err);
  if (!back) TG_FAIL("%s does not parse: %s", text, err);
  if (memcmp(&back->valuedouble, &d, sizeof d) != 0)
    TG_FAIL("%s read back as %.17g, not %.17g", text, back->valuedouble, d);
  cJSON_Delete(back);
  cJSON_Delete(n);
  free(text);
}

TEST(numbers_print_exactly) {
  round_trip(9007199254740991.0, "9007199254740991");
  round_trip(-9007199254740991.0, "-9007199254740991");
  round_trip(0.1, "0.1");
  round_trip(-0.0, "-0");
  round_trip(0.0, "0");
  round_trip(1e300, "1e+300");
  round_trip(1.0000000000000002, "1.0000000000000002");
  round_trip(0.1 + 0.2, "0.30000000000000004");
  round_trip(123456789012.0, "123456789012");
  round_trip(5e-324, "4.94065645841247e-324"); /* the smallest denormal */
  round_trip(DBL_MAX, "1.7976931348623157e+308");
  round_trip(1.5, "1.5");
  round_trip(-42.0, "-42");                      /* integers: the fast path */
  round_trip(999999999999999.0, "999999999999999");
  round_trip(1e15, "1e+15");                      /* 16 digits: as %.15g has it */
  char buf[TG_JSON_NUMBER_MAX];
  ASSERT_STR_EQ(tg_json_number_text(INFINITY, buf), "null");
  ASSERT_STR_EQ(tg_json_number_text(NAN, buf), "null");
}

TEST(strings_print_as_valid_utf8) {
  cJSON *a = cJSON_CreateArray();
  cJSON_AddItemToArray(a, cJSON_CreateString("q\" b\\ \n\t\x01 caf\xc3\xa9"));
  cJSON_AddItemToArray(a, cJSON_CreateString("bad \xff\xfe end \xe2\x82"));
  char *s = tg_json_print(a, 0);
  ASSERT_STR_EQ(s, "[\"q\\\" b\\\\ \\n\\t\\u0001 caf\xc3\xa9\","
                   "\"bad \xef\xbf\xbd\xef\xbf\xbd end \xef\xbf\xbd\xef\xbf\xbd\"]");
  ASSERT_INT_EQ(tg__utf8_invalid_at(s, strlen(s)), strlen(s));
  free(s);
  cJSON_Delete(a);
}

/* What a writer gathering messages does: each appended to one buffer,
 * the same text as tg_json_print gives, escapes and all. */
TEST(print_append_gathers_the_same_text) {
  cJSON *a = cJSON_Parse("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":"
                         "[{\"type\":\"text\",\"text\":\"a b\\\"\\\\\\n~\\u007f\"}]}}");
  cJSON *b = cJSON_CreateString("caf\xc3\xa9 \xff");
  ASSERT_TRUE(a != NULL);
  char *ta = tg_json_print(a, 0), *tb = tg_json_print(b, 0);
  char *buf = NULL;
  size_t len = 0, cap = 0;
  ASSERT_INT_EQ(tg_json_print_append(a, &buf, &len, &cap), 0);
  ASSERT_INT_EQ(len, strlen(ta));
  for (int i = 0; i < 200; i++) /* past the first sizes it grows through */
    ASSERT_INT_EQ(tg_json_print_append(b, &buf, &len, &cap), 0);
  ASSERT_INT_EQ(len, strlen(ta) + 200 * strlen(tb));
  ASSERT_INT_EQ(strncmp(buf, ta, strlen(ta)), 0);
  ASSERT_STR_EQ(buf + len - strlen(tb), tb);
  ASSERT_INT_EQ(strlen(buf), len);
  ASSERT_INT_EQ(tg_json_print_append(NULL, &buf, &len, &cap), -1);
  ASSERT_STR_EQ(ta, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":"
                    "[{\"type\":\"text\",\"text\":\"a b\\\"\\\\\\n~\x7f\"}]}}");
  free(buf), free(ta), free(tb);
  cJSON_Delete(a), cJSON_Delete(b);
}

TEST(pretty_print) {
  char err[256];
  cJSON *v = parse("{\"a\":1,\"b\":[1,2],\"c\":{},\"d\":[],\"e\":[{\"f\":null}]}",
                   err, sizeof err);
  ASSERT_NOT_NULL(v);
  char *s = tg_json_print(v, 1);
  ASSERT_STR_EQ(s, "{\n  \"a\": 1,\n  \"b\": [1, 2],\n  \"c\": {},\n  \"d\": [],\n"
                   "  \"e\": [\n    {\n      \"f\": null\n    }\n  ]\n}");
  free(s);
  s = tg_json_print(v, 0);
  ASSERT_STR_EQ(s, "{\"a\":1,\"b\":[1,2],\"c\":{},\"d\":[],\"e\":[{\"f\":null}]}");
  free(s);
  cJSON_Delete(v);
}

/* Whatever parses prints back to the same text (compact input). */
TEST(parse_print_round_trip) {
  const char *texts[] = {
      "{\"a\":[1,-0,0.1,1e+300,9007199254740991,true,false,null],\"b\":\"\"}",
      "[\"\xf0\x9f\x98\x80\",\"\\\"\\\\\\n\",{}]", "\"x\"", "-2.5e-10"};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    char err[256];
    cJSON *v = parse(texts[i], err, sizeof err);
    if (!v) TG_FAIL("%s: %s", texts[i], err);
    char *s = tg_json_print(v, 0);
    ASSERT_STR_EQ(s, texts[i]);
    free(s);
    cJSON_Delete(v);
  }
}

/* Messages never end in half a character nor carry raw control bytes. */
TEST(messages_are_clean_text) {
  char q[16], err[64] = "";
  ASSERT_STR_EQ(tg__json_quote("a\nb", 3, q, sizeof q), "\"a\\nb\"");
  ASSERT_STR_EQ(tg__json_quote("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 12, q,
                              sizeof q), "\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...\"");
  ASSERT_STR_EQ(tg__json_quote("abcdefghij\n", 11, q, sizeof q), "\"abcdefghij...\"");
  char cut[] = "ab\xc3\xa9\xe2\x82";
  tg__utf8_trim(cut);
  ASSERT_STR_EQ(cut, "ab\xc3\xa9");
  char whole[] = "ab\xc3\xa9";
  tg__utf8_trim(whole);
  ASSERT_STR_EQ(whole, "ab\xc3\xa9");
  REFUSED("{\"a\\nb\":1,\"a\\nb\":2}", "$[\"a\\nb\"]: duplicate key \"a\\nb\" (a "
          "key may appear once in an object) (byte 10)");
  /* a message cut by a small buffer */
  const char *t = "{\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                  "\xc3\xa9\":1,\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\":2}";
  for (size_t n = 20; n < sizeof err; n++) {
    ASSERT_NULL(tg_json_parse(t, strlen(t), NULL, err, n));
    ASSERT_INT_EQ(tg__utf8_invalid_at(err, strlen(err)), strlen(err));
  }
}

TEST(path_text) {
  char buf[64];
  tg_json_seg a = {NULL, "a", 1, 0}, i = {&a, NULL, 0, 2},
              odd = {&i, "x y\"\xff", 5, 0};
  ASSERT_STR_EQ(tg__json_path_text(NULL, buf, sizeof buf), "$");
  ASSERT_STR_EQ(tg__json_path_text(&i, buf, sizeof buf), "$.a[2]");
  ASSERT_STR_EQ(tg__json_path_text(&odd, buf, sizeof buf),
                "$.a[2][\"x y\\\"\xef\xbf\xbd\"]");
  char small[12];
  tg_json_seg u = {NULL, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10, 0};
  /* cut where it does not fit, never inside a character */
  ASSERT_STR_EQ(tg__json_path_text(&u, small, sizeof small),
                "$[\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
}


/* The C API: args as text, and as a tree a host built with cJSON_Parse,
 * are held to the same rules. Text (the agent's) ends the call VALIDATE
 * INVALID_ARGS; a tree (the host's) is refused; nothing runs. */
static void no_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  (void)rt;
  if (o->status == TG_STATUS_ERROR && o->error.phase == TG_PHASE_VALIDATE &&
      strcmp(o->error.code, "INVALID_ARGS") == 0 &&
      strstr(o->error.message, "$.command: duplicate key \"command\""))
    ++*(int *)ud;
  else
    *(int *)ud += 1000;
}

TEST(c_api_refuses_duplicate_keys) {
  char *dir = temp_dir(), victim[1100], cmd[1300], err[TG_ERRMSG] = "";
  snprintf(victim, sizeof victim, "%s/victim", dir);
  put_file(dir, "victim", "still here");
  snprintf(cmd, sizeof cmd, "{\"command\":\"rm -f %s\",\"command\":\"echo hi\"}",
           victim);
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.default_verdict = TG_VERDICT_ALLOW;
  tg_runtime *rt = new_runtime(&cfg);
  int done = 0;
  tg_call_request req = {.tool = "exec", .args_json = cmd};
  ASSERT_OK(tg_call_start(rt, &req, no_done, &done, err), err);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(done, 1); /* VALIDATE INVALID_ARGS naming the key */
  done = 0;
  cJSON *tree = cJSON_Parse(cmd); /* cJSON keeps both members */
  ASSERT_NOT_NULL(tree);
  tg_call_request req2 = {.tool = "exec", .args = tree};
  err[0] = '\0';
  ASSERT_INT_EQ(tg_call_start(rt, &req2, no_done, &done, err), -EINVAL);
  ASSERT_CONTAINS(err, "$.command: duplicate key \"command\"");
  cJSON_Delete(tree);
  tree = cJSON_CreateObject();
  cJSON_AddItemToObject(tree, "command", cJSON_CreateRaw("\"rm -f x\""));
  tg_call_request req3 = {.tool = "exec", .args = tree};
  ASSERT_INT_EQ(tg_call_start(rt, &req3, no_done, &done, err), -EINVAL);
  ASSERT_CONTAINS(err, "$.command: not a JSON value (a raw or invalid cJSON node)");
  cJSON_Delete(tree);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(done, 0);
  ASSERT_OK(access(victim, F_OK));
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* tg__json_equal_lua: is a Lua value (the call's args after policy code
 * had them) still the JSON value it was made from? `change` is the body
 * of a Lua function of t that may change the pushed value; a wrong "equal"
 * would let the rules judge one thing and the tool run another. */
static int still_equal(lua_State *L, const char *json, const char *change) {
  char err[256];
  cJSON *j = parse(json, err, sizeof err);
  if (!j) TG_FAIL("%s: %s", json, err);
  char src[512];
  snprintf(src, sizeof src, "return function(t) %s end", change);
  if (luaL_dostring(L, src) != LUA_OK) TG_FAIL("%s", lua_tostring(L, -1));
  ASSERT_INT_EQ(tg__json_push(L, j), 0);
  lua_pushvalue(L, -1);
  lua_insert(L, -3); /* t, fn, t */
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) TG_FAIL("%s", lua_tostring(L, -1));
  int eq = tg__json_equal_lua(L, -1, j);
  lua_pop(L, 1);
  cJSON_Delete(j);
  return eq;
}

TEST(lua_value_still_equal_to_its_json) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  tg__json_open(L);
  const char *args = "{\"path\":\"src/main.c\",\"mode\":\"read\",\"limit\":200,"
                     "\"\":\"empty key\",\"tags\":[\"a\",\"b\",[1,{\"x\":null}]]}";
  ASSERT_TRUE(still_equal(L, args, ""));
  ASSERT_TRUE(still_equal(L, args, "t.path = 'src/' .. 'main.c'"));
  ASSERT_FALSE(still_equal(L, args, "t.path = 'src/main.h'"));
  ASSERT_FALSE(still_equal(L, args, "t.path = 'src/main.c\\0'"));
  ASSERT_FALSE(still_equal(L, args, "t.path = 'src/main'"));
  ASSERT_FALSE(still_equal(L, args, "t.path = nil"));
  ASSERT_FALSE(still_equal(L, args, "t.extra = 1"));
  ASSERT_FALSE(still_equal(L, args, "t[''] = nil; t['\\0'] = 'empty key'"));
  ASSERT_FALSE(still_equal(L, args, "t.mode = nil; t['mode\\0'] = 'read'"));
  ASSERT_FALSE(still_equal(L, args, "t.limit = 200.5"));
  ASSERT_FALSE(still_equal(L, args, "t.limit = '200'"));
  ASSERT_FALSE(still_equal(L, args, "t.tags[3][2].x = false"));
  ASSERT_FALSE(still_equal(L, args, "t.tags[4] = 'd'"));
  ASSERT_FALSE(still_equal(L, args, "setmetatable(t.tags, nil)"));
  ASSERT_FALSE(still_equal(L, args, "t.tags[3][2] = {x = 1}"));
  ASSERT_TRUE(still_equal(L, args, "local p = t.path; t.path = nil; t.path = p"));
  /* keys found in any order, each once */
  ASSERT_TRUE(still_equal(L, "{\"a\":1,\"b\":2,\"c\":3,\"ab\":4}",
                          "local a = t.a; t.a = nil; t.zz = 0; t.zz = nil; t.a = a"));
  ASSERT_FALSE(still_equal(L, "{\"a\":1,\"b\":2}", "t.a = nil; t.c = 1"));
  ASSERT_TRUE(still_equal(L, "{}", ""));
  ASSERT_FALSE(still_equal(L, "{}", "t[1] = 1"));
  ASSERT_TRUE(still_equal(L, "[]", ""));
  ASSERT_FALSE(still_equal(L, "[]", "t[1] = 'x'"));
  ASSERT_FALSE(still_equal(L, "{\"n\":0}", "t.n = -0.0"));
  /* an array whose keys live in the hash part, with one more key stored
   * before the slot of its last element (review): seen, not "equal" */
  for (int i = 0; i < 64; i++) { /* where a key lands depends on its hash */
    char change[400];
    snprintf(change, sizeof change,
             "local u = setmetatable({}, getmetatable(t.a)) "
             "for i = 1, 16 do u['x' .. i] = 1 end "
             "for i = 1, 16 do u['x' .. i] = nil end "
             "u[1] = 'a'; u[2] = 'b'; u.k%d = 'evil'; t.a = u", i);
    ASSERT_FALSE(still_equal(L, "{\"a\":[\"a\",\"b\"]}", change));
  }
  lua_close(L);
}


/* tg_json_equal: the same value, exactly (cJSON_Compare is not: numbers
 * within an epsilon were equal). */
static int same(const char *a, const char *b) {
  char err[256];
  cJSON *x = parse(a, err, sizeof err), *y = parse(b, err, sizeof err);
  if (!x || !y) TG_FAIL("%s / %s: %s", a, b, err);
  int eq = tg_json_equal(x, y);
  ASSERT_INT_EQ(tg_json_equal(y, x), eq);
  cJSON_Delete(x);
  cJSON_Delete(y);
  return eq;
}

TEST(json_equal_is_exact) {
  ASSERT_TRUE(same("{\"a\":1,\"b\":[1,2,{\"c\":null}]}", "{\"b\":[1,2,{\"c\":null}],\"a\":1}"));
  ASSERT_TRUE(same("1", "1.0"));
  ASSERT_TRUE(same("0.1", "1e-1"));
  ASSERT_FALSE(same("0.1", "0.10000000000000002"));
  ASSERT_TRUE(same("9007199254740992", "9007199254740993")); /* one double */
  ASSERT_FALSE(same("9007199254740992", "9007199254740994"));
  ASSERT_FALSE(same("0", "-0"));
  ASSERT_FALSE(same("[1,2]", "[2,1]"));
  ASSERT_FALSE(same("[1,2]", "[1,2,3]"));
  ASSERT_FALSE(same("{\"a\":1}", "{\"a\":1,\"b\":1}"));
  ASSERT_FALSE(same("{\"a\":1}", "{\"A\":1}"));
  ASSERT_FALSE(same("\"x\"", "\"x \""));
  ASSERT_FALSE(same("true", "1"));
  ASSERT_FALSE(same("null", "false"));
  ASSERT_FALSE(same("{}", "[]"));
  ASSERT_TRUE(tg_json_equal(NULL, NULL));
  cJSON *n = cJSON_CreateNull();
  ASSERT_FALSE(tg_json_equal(n, NULL));
  cJSON_Delete(n);
}

/* Objects with many members (hostile args) are compared through a sorted
 * index: equal whatever the order, any difference seen, and a million
 * keys do not cost a million squared steps. */
static char *object_text(int n, int shuffle) {
  char *s = malloc((size_t)n * 24 + 16), *p = s;
  *p++ = '{';
  for (int i = 0; i < n; i++) {
    int k = shuffle ? (int)(((long long)i * 7919) % n) : i;
    p += sprintf(p, "%s\"k%d\":%d", i ? "," : "", k, k);
  }
  strcpy(p, "}");
  return s;
}

/* How fast big objects compare (it must not be a search per member) is
 * bench/bench_scale.c's; here, that 20,000 members compare exactly. */
TEST(big_objects_compare_exactly) {
  char *a = object_text(100, 0), *b = object_text(100, 1);
  ASSERT_TRUE(same(a, b));
  char *c = object_text(100, 1);
  char *k = strstr(c, "\"k42\":42");
  k[6] = '3'; /* "k42":43 */
  ASSERT_FALSE(same(a, c));
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  tg__json_open(L);
  ASSERT_TRUE(still_equal(L, b, ""));
  ASSERT_FALSE(still_equal(L, b, "t.k7 = 8"));
  ASSERT_FALSE(still_equal(L, b, "t.k7 = nil; t.k100 = 7"));
  ASSERT_FALSE(still_equal(L, b, "t.extra = 1"));
  free(a), free(b), free(c);
  a = object_text(20000, 0);
  b = object_text(20000, 1);
  ASSERT_TRUE(same(a, b));
  ASSERT_TRUE(still_equal(L, b, ""));
  ASSERT_FALSE(still_equal(L, b, "t.k19999 = 0"));
  ASSERT_FALSE(still_equal(L, b, "t.k0 = nil; t.k20000 = 0"));
  free(a), free(b);
  lua_close(L);
}

TEST_MAIN(TEST_ENTRY(duplicate_key_refused_with_path),
          TEST_ENTRY(duplicate_key_in_a_big_object),
          TEST_ENTRY(numbers_out_of_range_refused),
          TEST_ENTRY(invalid_utf8_refused),
          TEST_ENTRY(lone_surrogates_and_nul_refused),
          TEST_ENTRY(control_characters_refused),
          TEST_ENTRY(syntax_errors_say_what_and_where),
          TEST_ENTRY(depth_limit),
          TEST_ENTRY(check_trees_built_in_c),
          TEST_ENTRY(numbers_print_exactly),
          TEST_ENTRY(strings_print_as_valid_utf8),
          TEST_ENTRY(print_append_gathers_the_same_text),
          TEST_ENTRY(pretty_print),
          TEST_ENTRY(parse_print_round_trip),
          TEST_ENTRY(messages_are_clean_text),
          TEST_ENTRY(path_text),
          TEST_ENTRY(c_api_refuses_duplicate_keys),
          TEST_ENTRY(lua_value_still_equal_to_its_json),
          TEST_ENTRY(json_equal_is_exact),
          TEST_ENTRY(big_objects_compare_exactly))
