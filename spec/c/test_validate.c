/*
 * test_validate.c — the JSON Schema validator (src/base/schema*.c): each
 * keyword passing and failing with the exact message, the depth limits,
 * safe truncation, compile-time errors, regex semantics and limits, and
 * the error list.
 */
#include "helpers.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>
#include "internal.h"

/* cJSON_Parse, not tg_json_parse: the depth tests parse values deeper
 * than the chain would let in. */
static cJSON *parse_or_die(const char *text) {
  cJSON *j = cJSON_Parse(text);
  if (!j) TG_FAIL("bad JSON in test: %s", text);
  return j;
}

/* Compiles schema text; dies when it does not compile. */
static tg_schema *compile_or_die(const char *schema) {
  cJSON *s = parse_or_die(schema);
  char err[TG_ERRMSG];
  tg_schema *c = tg_schema_compile(s, err);
  cJSON_Delete(s);
  if (!c) TG_FAIL("schema does not compile: %s: %s", err, schema);
  return c;
}

/* Validates instance text against schema text; err receives the message.
 * 1 valid, 0 invalid. */
static int run(const char *schema, const char *instance, char *err,
               size_t errlen) {
  tg_schema *c = compile_or_die(schema);
  cJSON *v = parse_or_die(instance);
  int r = tg_schema_validate(c, v, err, errlen);
  if (r != 0 && r != -EINVAL) TG_FAIL("tg_schema_validate: %d", r);
  cJSON_Delete(v);
  tg_schema_free(c);
  return r == 0;
}

/* Compiles schema text: 0, or -1 with the message in err. */
static int check(const char *schema, char *err, size_t errlen) {
  cJSON *s = parse_or_die(schema);
  tg_schema *c = tg__schema_compile(s, 0, NULL, err, errlen);
  cJSON_Delete(s);
  tg_schema_free(c);
  return c ? 0 : -1;
}

#define VALID(schema, instance)                                          \
  do {                                                                   \
    char e_[512] = "";                                                   \
    if (run(schema, instance, e_, sizeof e_) != 1)                       \
      TG_FAIL("%s should be valid against %s, got: %s", instance,        \
              schema, e_);                                               \
    ASSERT_STR_EQ(e_, "");                                               \
  } while (0)

#define INVALID(schema, instance, msg)                                   \
  do {                                                                   \
    char e_[512] = "";                                                   \
    if (run(schema, instance, e_, sizeof e_) != 0)                       \
      TG_FAIL("%s should be invalid against %s", instance, schema);      \
    ASSERT_STR_EQ(e_, msg);                                              \
  } while (0)

#define CHECK_BAD(schema, msg)                                           \
  do {                                                                   \
    char e_[512] = "";                                                   \
    ASSERT_INT_EQ(check(schema, e_, sizeof e_), -1);                         \
    ASSERT_STR_EQ(e_, msg);                                              \
  } while (0)

#define ASSERT_PREFIX(s, prefix)                                         \
  do {                                                                   \
    const char *p_ = (prefix);                                           \
    if (strncmp((s), p_, strlen(p_)) != 0)                               \
      TG_FAIL("\"%s\" does not start with \"%s\"", (s), p_);             \
  } while (0)

/* Nested arrays n deep around 1: "[[[1]]]" for n = 3 (malloc'd). */
static char *nested_arrays(int n) {
  char *t = malloc((size_t)n * 2 + 2);
  ASSERT_TRUE(t);
  memset(t, '[', (size_t)n);
  t[n] = '1';
  memset(t + n + 1, ']', (size_t)n);
  t[2 * n + 1] = '\0';
  return t;
}

/* A schema of items n deep: {"items":{"items":...{}}} (malloc'd). */
static char *nested_items(int n) {
  char *t = malloc((size_t)n * 11 + 3);
  ASSERT_TRUE(t);
  char *p = t;
  for (int i = 0; i < n; i++) p += sprintf(p, "{\"items\":");
  p += sprintf(p, "{}");
  for (int i = 0; i < n; i++) *p++ = '}';
  *p = '\0';
  return t;
}

/* ---- type ---------------------------------------------------------- */

TEST(type_each_name) {
  VALID("{\"type\":\"string\"}", "\"x\"");
  VALID("{\"type\":\"number\"}", "1.5");
  VALID("{\"type\":\"integer\"}", "3");
  VALID("{\"type\":\"boolean\"}", "false");
  VALID("{\"type\":\"object\"}", "{}");
  VALID("{\"type\":\"array\"}", "[]");
  VALID("{\"type\":\"null\"}", "null");
  INVALID("{\"type\":\"string\"}", "1", "$: expected string, got number");
  INVALID("{\"type\":\"boolean\"}", "\"true\"",
          "$: expected boolean, got string");
  INVALID("{\"type\":\"object\"}", "[]", "$: expected object, got array");
  INVALID("{\"type\":\"array\"}", "{}", "$: expected array, got object");
  INVALID("{\"type\":\"null\"}", "0", "$: expected null, got number");
  INVALID("{\"type\":\"number\"}", "null", "$: expected number, got null");
}

TEST(type_integer_vs_number) {
  VALID("{\"type\":\"integer\"}", "-7");
  VALID("{\"type\":\"integer\"}", "2.0");
  VALID("{\"type\":\"integer\"}", "1e300");
  VALID("{\"type\":\"number\"}", "7");
  INVALID("{\"type\":\"integer\"}", "2.5", "$: expected integer, got number");
  INVALID("{\"type\":\"integer\"}", "\"2\"",
          "$: expected integer, got string");
}

TEST(type_array_of_names) {
  const char *s = "{\"type\":[\"string\",\"null\"]}";
  VALID(s, "\"x\"");
  VALID(s, "null");
  INVALID(s, "1", "$: expected string or null, got number");
}

/* ---- paths --------------------------------------------------------- */

TEST(path_nested_object_in_array_in_object) {
  const char *s =
      "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"object\","
      "\"properties\":{\"b\":{\"type\":\"array\",\"items\":{\"type\":"
      "\"object\",\"properties\":{\"c\":{\"type\":\"string\"}}}}}}}}";
  VALID(s, "{\"a\":{\"b\":[{\"c\":\"x\"},{\"c\":\"y\"}]}}");
  INVALID(s, "{\"a\":{\"b\":[{\"c\":\"x\"},{\"c\":5}]}}",
          "$.a.b[1].c: expected string, got number");
}

TEST(path_files_example) {
  const char *s =
      "{\"properties\":{\"files\":{\"items\":{\"properties\":{\"name\":"
      "{\"type\":\"string\"}}}}}}";
  INVALID(s, "{\"files\":[{\"name\":\"a\"},{},{\"name\":3}]}",
          "$.files[2].name: expected string, got number");
}

TEST(path_non_identifier_keys_are_bracketed) {
  INVALID("{\"properties\":{\"a b\":{\"type\":\"string\"}}}", "{\"a b\":1}",
          "$[\"a b\"]: expected string, got number");
  INVALID("{\"properties\":{\"1x\":{\"type\":\"string\"}}}", "{\"1x\":1}",
          "$[\"1x\"]: expected string, got number");
  INVALID("{\"properties\":{\"q\\\"\\n\":{\"type\":\"string\"}}}",
          "{\"q\\\"\\n\":1}", "$[\"q\\\"\\n\"]: expected string, got number");
  INVALID("{\"properties\":{\"_ok9\":{\"type\":\"string\"}}}", "{\"_ok9\":1}",
          "$._ok9: expected string, got number");
}

/* ---- object keywords ----------------------------------------------- */

TEST(required) {
  const char *s = "{\"type\":\"object\",\"required\":[\"path\",\"mode\"]}";
  VALID(s, "{\"path\":\"/x\",\"mode\":\"r\"}");
  INVALID(s, "{\"mode\":\"r\"}", "$: missing required property \"path\"");
  INVALID(s, "{\"path\":\"/x\"}", "$: missing required property \"mode\"");
  /* required only constrains objects */
  VALID("{\"required\":[\"a\"]}", "[1]");
}

TEST(required_nested_path) {
  INVALID("{\"properties\":{\"opts\":{\"required\":[\"x\"]}}}",
          "{\"opts\":{}}", "$.opts: missing required property \"x\"");
}

TEST(required_empty_object_from_lua_is_empty_list) {
  char e[256];
  ASSERT_INT_EQ(check("{\"required\":{}}", e, sizeof e), 0);
  VALID("{\"required\":{}}", "{}");
}

TEST(properties_only_listed_ones_checked) {
  const char *s = "{\"properties\":{\"n\":{\"type\":\"integer\"}}}";
  VALID(s, "{\"n\":1,\"other\":\"anything\"}");
  VALID(s, "{}");
  INVALID(s, "{\"other\":true,\"n\":\"1\"}", "$.n: expected integer, got string");
}

TEST(additional_properties_false) {
  const char *s =
      "{\"properties\":{\"a\":{}},\"additionalProperties\":false}";
  VALID(s, "{\"a\":1}");
  INVALID(s, "{\"a\":1,\"extra\":2}",
          "$.extra: property not allowed (additionalProperties is false)");
  INVALID(s, "{\"a b\":2}",
          "$[\"a b\"]: property not allowed (additionalProperties is false)");
}

TEST(additional_properties_schema) {
  const char *s = "{\"properties\":{\"a\":{\"type\":\"string\"}},"
                  "\"additionalProperties\":{\"type\":\"number\"}}";
  VALID(s, "{\"a\":\"x\",\"b\":1,\"c\":2.5}");
  INVALID(s, "{\"a\":\"x\",\"b\":1,\"c\":\"no\"}",
          "$.c: expected number, got string");
  INVALID(s, "{\"a\":1}", "$.a: expected string, got number");
}

/* ---- enum / const -------------------------------------------------- */

TEST(enum_strings) {
  const char *s = "{\"enum\":[\"r\",\"w\"]}";
  VALID(s, "\"r\"");
  VALID(s, "\"w\"");
  INVALID(s, "\"R\"", "$: must be one of \"r\", \"w\"");
  INVALID("{\"properties\":{\"mode\":{\"enum\":[\"r\",\"w\"]}}}",
          "{\"mode\":\"x\"}", "$.mode: must be one of \"r\", \"w\"");
}

TEST(enum_of_objects_deep_equality) {
  const char *s = "{\"enum\":[{\"a\":[1,2]},null,3]}";
  VALID(s, "{\"a\":[1,2]}");
  VALID(s, "null");
  VALID(s, "3.0");
  INVALID(s, "{\"a\":[2,1]}", "$: must be one of {\"a\":[1,2]}, null, 3");
  INVALID(s, "{\"A\":[1,2]}", "$: must be one of {\"a\":[1,2]}, null, 3");
  INVALID(s, "{\"a\":[1,2],\"b\":0}",
          "$: must be one of {\"a\":[1,2]}, null, 3");
}

TEST(const_deep_equality) {
  const char *s = "{\"const\":{\"k\":\"v\",\"n\":[true]}}";
  VALID(s, "{\"n\":[true],\"k\":\"v\"}");
  INVALID(s, "{\"k\":\"V\",\"n\":[true]}",
          "$: must equal {\"k\":\"v\",\"n\":[true]}");
  VALID("{\"const\":\"x\"}", "\"x\"");
  INVALID("{\"const\":false}", "0", "$: must equal false");
}

/* ---- numbers ------------------------------------------------------- */

TEST(minimum_maximum) {
  const char *s = "{\"properties\":{\"count\":{\"minimum\":1,\"maximum\":10}}}";
  VALID(s, "{\"count\":1}");
  VALID(s, "{\"count\":10}");
  INVALID(s, "{\"count\":12}", "$.count: 12 is above the maximum 10");
  INVALID(s, "{\"count\":0.5}", "$.count: 0.5 is below the minimum 1");
  /* numeric keywords ignore non-numbers */
  VALID(s, "{\"count\":\"12\"}");
}

TEST(exclusive_bounds) {
  const char *s = "{\"exclusiveMinimum\":0,\"exclusiveMaximum\":1}";
  VALID(s, "0.1");
  VALID(s, "0.999");
  INVALID(s, "0", "$: 0 is not above the exclusive minimum 0");
  INVALID(s, "1", "$: 1 is not below the exclusive maximum 1");
  INVALID(s, "-3.25", "$: -3.25 is not above the exclusive minimum 0");
}

/* ---- strings ------------------------------------------------------- */

TEST(min_max_length) {
  const char *s = "{\"minLength\":2,\"maxLength\":3}";
  VALID(s, "\"ab\"");
  VALID(s, "\"abc\"");
  INVALID(s, "\"a\"", "$: is 1 characters long, fewer than minLength 2");
  INVALID(s, "\"abcd\"", "$: is 4 characters long, more than maxLength 3");
  VALID(s, "5");
}

TEST(length_counts_utf8_code_points) {
  const char *s = "{\"minLength\":3,\"maxLength\":3}";
  VALID(s, "\"h\xc3\xa9\xc3\xa9\""); /* "héé": 5 bytes, 3 code points */
  VALID(s, "\"\xe2\x82\xac\xf0\x9f\x98\x80x\""); /* euro, emoji, x */
  INVALID(s, "\"\xc3\xa9\xc3\xa9\"",
          "$: is 2 characters long, fewer than minLength 3");
  INVALID(s, "\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"",
          "$: is 4 characters long, more than maxLength 3");
}

TEST(pattern_unanchored_search) {
  VALID("{\"pattern\":\"b+\"}", "\"abbbc\"");
  INVALID("{\"pattern\":\"b+\"}", "\"ac\"", "$: does not match pattern \"b+\"");
  const char *s = "{\"properties\":{\"name\":{\"pattern\":\"^[a-z]+$\"}}}";
  VALID(s, "{\"name\":\"abc\"}");
  INVALID(s, "{\"name\":\"abc1\"}",
          "$.name: does not match pattern \"^[a-z]+$\"");
  VALID(s, "{\"name\":7}");
}

/* ---- arrays -------------------------------------------------------- */

TEST(items) {
  const char *s = "{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}";
  VALID(s, "[]");
  VALID(s, "[1,2,3]");
  INVALID(s, "[1,2,\"3\"]", "$[2]: expected integer, got string");
}

TEST(min_max_items) {
  const char *s = "{\"minItems\":1,\"maxItems\":2}";
  VALID(s, "[1]");
  VALID(s, "[1,2]");
  INVALID(s, "[]", "$: has 0 items, fewer than minItems 1");
  INVALID(s, "[1,2,3]", "$: has 3 items, more than maxItems 2");
}

/* ---- combinators --------------------------------------------------- */

TEST(any_of) {
  const char *s = "{\"anyOf\":[{\"type\":\"string\"},{\"minimum\":5}]}";
  VALID(s, "\"x\"");
  VALID(s, "7");
  INVALID(s, "3", "$: matches none of anyOf");
  INVALID("{\"properties\":{\"v\":{\"anyOf\":[{\"type\":\"null\"}]}}}",
          "{\"v\":1}", "$.v: matches none of anyOf");
}

TEST(one_of) {
  const char *s = "{\"oneOf\":[{\"type\":\"number\"},{\"type\":\"integer\"}]}";
  VALID(s, "1.5");
  INVALID(s, "3", "$: matches 2 of oneOf (exactly one expected)");
  INVALID(s, "\"x\"", "$: matches none of oneOf");
  INVALID("{\"oneOf\":[{},true,{\"type\":\"string\"}]}", "\"s\"",
          "$: matches 3 of oneOf (exactly one expected)");
}

TEST(all_of_reports_the_failing_branch) {
  const char *s = "{\"allOf\":[{\"type\":\"string\"},{\"maxLength\":2}]}";
  VALID(s, "\"ab\"");
  INVALID(s, "\"abc\"", "$: is 3 characters long, more than maxLength 2");
  INVALID(s, "1", "$: expected string, got number");
}

/* ---- boolean schemas ----------------------------------------------- */

TEST(boolean_schemas) {
  VALID("true", "{\"anything\":[1]}");
  INVALID("false", "null", "$: not allowed (schema is false)");
  const char *s = "{\"properties\":{\"a\":true,\"b\":false}}";
  VALID(s, "{\"a\":1}");
  INVALID(s, "{\"a\":1,\"b\":2}", "$.b: not allowed (schema is false)");
  VALID("{\"items\":false}", "[]");
  INVALID("{\"items\":false}", "[0]", "$[0]: not allowed (schema is false)");
}

TEST(unknown_keywords_ignored) {
  const char *s =
      "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
      "\"title\":\"t\",\"description\":\"d\",\"default\":3,"
      "\"x-vendor\":{\"type\":42},\"type\":\"integer\"}";
  char e[256];
  ASSERT_INT_EQ(check(s, e, sizeof e), 0);
  VALID(s, "3");
  INVALID(s, "\"3\"", "$: expected integer, got string");
}

/* ---- depth limits -------------------------------------------------- */

TEST(instance_200_deep_rejected) {
  char *deep = nested_arrays(200);
  char e[2048];
  ASSERT_INT_EQ(run("{}", deep, e, sizeof e), 0);
  ASSERT_PREFIX(e, "$[0][0][0]");
  ASSERT_CONTAINS(e, "]: value nested deeper than 128 levels");
  ASSERT_INT_EQ(run("true", deep, e, sizeof e), 0);
  free(deep);
}

TEST(instance_at_the_limit_accepted) {
  char *ok = nested_arrays(128), *over = nested_arrays(129);
  char e[2048];
  ASSERT_INT_EQ(run("{\"type\":\"array\"}", ok, e, sizeof e), 1);
  ASSERT_INT_EQ(run("{\"type\":\"array\"}", over, e, sizeof e), 0);
  ASSERT_CONTAINS(e, "nested deeper than 128 levels");
  free(ok);
  free(over);
}

/* Deeper than cJSON_Parse allows, built by hand: the walk stops early. */
TEST(instance_built_very_deep_rejected) {
  cJSON *root = cJSON_CreateArray(), *at = root;
  for (int i = 0; i < 5000; i++) {
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(at, a);
    at = a;
  }
  tg_schema *s = compile_or_die("{}");
  char e[64];
  ASSERT_INT_EQ(tg_schema_validate(s, root, e, sizeof e), -EINVAL);
  ASSERT_TRUE(strlen(e) < sizeof e);
  tg_schema_free(s);
  cJSON_Delete(root);
}

TEST(schema_100_deep_rejected) {
  char *deep = nested_items(100);
  char e[1024];
  ASSERT_INT_EQ(check(deep, e, sizeof e), -1);
  ASSERT_PREFIX(e, "schema at $.items.items.items");
  ASSERT_CONTAINS(e, ".items: schema nested deeper than 64 levels");
  free(deep);
  char *ok = nested_items(64);
  ASSERT_INT_EQ(check(ok, e, sizeof e), 0);
  free(ok);
}

/* ---- message buffer ------------------------------------------------ */

TEST(tiny_errlen_stays_terminated) {
  const char *s = "{\"properties\":{\"count\":{\"maximum\":10}}}";
  char full[256];
  ASSERT_INT_EQ(run(s, "{\"count\":12}", full, sizeof full), 0);
  ASSERT_STR_EQ(full, "$.count: 12 is above the maximum 10");
  char e[16];
  memset(e, 'x', sizeof e);
  ASSERT_INT_EQ(run(s, "{\"count\":12}", e, 8), 0);
  ASSERT_STR_EQ(e, "$.count");
  ASSERT_INT_EQ(e[8], 'x'); /* nothing written past errlen */
  ASSERT_INT_EQ(run(s, "{\"count\":12}", e, 1), 0);
  ASSERT_STR_EQ(e, "");
  e[0] = 'x';
  ASSERT_INT_EQ(run(s, "{\"count\":12}", e, 0), 0);
  ASSERT_INT_EQ(e[0], 'x');
  ASSERT_INT_EQ(run(s, "{\"count\":12}", NULL, 0), 0);
  ASSERT_INT_EQ(run(s, "{\"count\":1}", NULL, 0), 1);
}

TEST(truncation_never_splits_utf8) {
  /* $["é": the cut at 4 bytes would fall inside the 2-byte é */
  const char *s = "{\"properties\":{\"\xc3\xa9 \":{\"type\":\"string\"}}}";
  char e[16];
  ASSERT_INT_EQ(run(s, "{\"\xc3\xa9 \":1}", e, 5), 0);
  ASSERT_STR_EQ(e, "$[\"");
  ASSERT_INT_EQ(run(s, "{\"\xc3\xa9 \":1}", e, 6), 0);
  ASSERT_STR_EQ(e, "$[\"\xc3\xa9");
}

TEST(truncated_long_enum_list) {
  char e[40];
  ASSERT_INT_EQ(run("{\"enum\":[\"aaaaaaaaaa\",\"bbbbbbbbbb\",\"cccccccccc\","
                "\"dddddddddd\"]}",
                "\"z\"", e, sizeof e),
            0);
  ASSERT_INT_EQ(strlen(e), sizeof e - 1);
  ASSERT_PREFIX(e, "$: must be one of \"aaaaaaaaaa\", ");
}

/* ---- tg__schema_check ----------------------------------------------- */

TEST(check_accepts_good_schema) {
  char e[256] = "";
  ASSERT_INT_EQ(check("{\"type\":\"object\",\"required\":[\"a\"],\"properties\":{"
                  "\"a\":{\"type\":[\"string\",\"null\"],\"pattern\":\"^x\","
                  "\"minLength\":1,\"maxLength\":9},\"n\":{\"type\":"
                  "\"integer\",\"minimum\":0,\"exclusiveMaximum\":1.5},"
                  "\"l\":{\"items\":{\"enum\":[1,2]},\"minItems\":0}},"
                  "\"additionalProperties\":{\"const\":1},"
                  "\"anyOf\":[true,{}],\"oneOf\":[{}],\"allOf\":[false]}",
                  e, sizeof e),
            0);
  ASSERT_INT_EQ(check("true", e, sizeof e), 0);
  ASSERT_INT_EQ(check("false", e, sizeof e), 0);
}

TEST(check_rejects_bad_type_name) {
  CHECK_BAD("{\"properties\":{\"x\":{\"type\":\"strng\"}}}",
            "schema at $.properties.x: 'type' names an unknown type "
            "\"strng\" (known: string, number, integer, boolean, object, "
            "array, null)");
  CHECK_BAD("{\"properties\":{\"x\":{\"type\":3}}}",
            "schema at $.properties.x: 'type' must be a string or an array "
            "of strings");
  CHECK_BAD("{\"type\":[\"string\",1]}",
            "schema at $: 'type' must be a string or an array of strings");
  CHECK_BAD("{\"type\":[]}", "schema at $: 'type' must not be an empty array");
}

TEST(check_rejects_bad_pattern) {
  char e[256];
  ASSERT_INT_EQ(check("{\"properties\":{\"p\":{\"pattern\":\"(\"}}}", e, sizeof e),
            -1);
  const char *head = "schema at $.properties.p: 'pattern' \"(\" does not "
                     "compile: ";
  ASSERT_PREFIX(e, head);
  ASSERT_TRUE(strlen(e) > strlen(head)); /* the regerror text follows */
  CHECK_BAD("{\"pattern\":1}", "schema at $: 'pattern' must be a string");
}

TEST(check_rejects_required_not_array) {
  CHECK_BAD("{\"required\":\"path\"}",
            "schema at $: 'required' must be an array of strings");
  CHECK_BAD("{\"required\":[\"a\",2]}",
            "schema at $: 'required' must be an array of strings");
}

TEST(check_rejects_wrong_keyword_types) {
  CHECK_BAD("3", "schema at $: a schema must be an object or a boolean");
  CHECK_BAD("{\"properties\":[]}",
            "schema at $: 'properties' must be an object of schemas");
  CHECK_BAD("{\"properties\":{\"a\":1}}",
            "schema at $.properties.a: a schema must be an object or a "
            "boolean");
  CHECK_BAD("{\"enum\":\"r\"}", "schema at $: 'enum' must be an array");
  CHECK_BAD("{\"minimum\":\"1\"}", "schema at $: 'minimum' must be a number");
  CHECK_BAD("{\"exclusiveMaximum\":true}",
            "schema at $: 'exclusiveMaximum' must be a number");
  CHECK_BAD("{\"maxLength\":-1}",
            "schema at $: 'maxLength' must be a non-negative integer");
  CHECK_BAD("{\"minItems\":1.5}",
            "schema at $: 'minItems' must be a non-negative integer");
  CHECK_BAD("{\"items\":[{}]}",
            "schema at $: 'items' must be a schema in draft 2020-12: list "
            "the schemas of the first items in 'prefixItems', or declare "
            "\"$schema\": \"http://json-schema.org/draft-07/schema#\"");
  CHECK_BAD("{\"items\":7}",
            "schema at $.items: a schema must be an object or a boolean");
  CHECK_BAD("{\"additionalProperties\":\"no\"}",
            "schema at $.additionalProperties: a schema must be an object or "
            "a boolean");
  CHECK_BAD("{\"anyOf\":[]}",
            "schema at $: 'anyOf' must be a non-empty array of schemas");
  CHECK_BAD("{\"oneOf\":{}}",
            "schema at $: 'oneOf' must be a non-empty array of schemas");
  CHECK_BAD("{\"allOf\":[{},{\"type\":\"nope\"}]}",
            "schema at $.allOf[1]: 'type' names an unknown type \"nope\" "
            "(known: string, number, integer, boolean, object, array, "
            "null)");
  CHECK_BAD("{\"properties\":{\"a b\":{\"items\":{\"minimum\":null}}}}",
            "schema at $.properties[\"a b\"].items: 'minimum' must be a "
            "number");
}

TEST(check_tiny_errlen_and_null) {
  char e[8];
  memset(e, 'x', sizeof e);
  ASSERT_INT_EQ(check("{\"type\":1}", e, sizeof e), -1);
  ASSERT_STR_EQ(e, "schema ");
  ASSERT_TRUE(!tg__schema_compile(NULL, 1, NULL, e, sizeof e));
  ASSERT_TRUE(!tg__schema_compile(NULL, 1, NULL, NULL, 0));
  cJSON *v = cJSON_CreateNull();
  ASSERT_INT_EQ(tg_schema_validate(NULL, v, e, sizeof e), -EINVAL);
  tg_schema *s = compile_or_die("{}");
  ASSERT_INT_EQ(tg_schema_validate(s, NULL, NULL, 0), -EINVAL);
  ASSERT_TRUE(!tg_schema_errors(NULL, v, 0));
  ASSERT_TRUE(!tg_schema_errors(s, NULL, 0));
  tg_schema_free(s);
  tg_schema_free(NULL);
  cJSON_Delete(v);
}

/* ---- keywords the old subset skipped ----------------------------------- */

TEST(multiple_of) {
  INVALID("{\"multipleOf\":2}", "7", "$: 7 is not a multiple of 2");
  VALID("{\"multipleOf\":2}", "-8");
  VALID("{\"multipleOf\":0.0001}", "0.0075");
  INVALID("{\"multipleOf\":0.0001}", "0.00751",
          "$: 0.00751 is not a multiple of 0.0001");
  VALID("{\"multipleOf\":0.01}", "19.99"); /* 19.99 / 0.01 is 1998.9999... */
  VALID("{\"multipleOf\":1e-300}", "1e300");
  VALID("{\"multipleOf\":3}", "\"x\"");
}

TEST(const_is_exact_not_approximate) {
  VALID("{\"const\":1}", "1.0");
  /* cJSON_Compare calls these equal (within an epsilon); JSON Schema not */
  INVALID("{\"const\":0.1}", "0.10000000000000002", "$: must equal 0.1");
  INVALID("{\"enum\":[0.3]}", "0.30000000000000004", /* 0.1 + 0.2 */
          "$: must be one of 0.3");
}

TEST(not_keyword) {
  const char *s = "{\"not\":{\"type\":\"string\"}}";
  VALID(s, "1");
  INVALID(s, "\"x\"", "$: must not match the schema in 'not'");
}

TEST(unique_items) {
  const char *s = "{\"uniqueItems\":true}";
  VALID(s, "[1,\"1\",[1],{\"a\":1},true,false,null]");
  INVALID(s, "[1,2,1.0]", "$: items [0] and [2] are equal (uniqueItems)");
  INVALID(s, "[{\"a\":1,\"b\":[2]},3,{\"b\":[2],\"a\":1}]",
          "$: items [0] and [2] are equal (uniqueItems)");
  VALID("{\"uniqueItems\":false}", "[1,1]");
}

/* n distinct numbers and then a repeat of the first (that it is hashed, not
 * n², is measured by bench/bench_scale.c). */
TEST(unique_items_long_array) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < 50000; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(i));
  cJSON_AddItemToArray(a, cJSON_CreateNumber(0));
  tg_schema *s = compile_or_die("{\"uniqueItems\":true}");
  char e[128];
  ASSERT_INT_EQ(tg_schema_validate(s, a, e, sizeof e), -EINVAL);
  ASSERT_STR_EQ(e, "$: items [0] and [50000] are equal (uniqueItems)");
  tg_schema_free(s);
  cJSON_Delete(a);
}

TEST(contains_and_counts) {
  const char *s = "{\"contains\":{\"type\":\"integer\"}}";
  VALID(s, "[\"a\",2]");
  INVALID(s, "[\"a\",\"b\"]", "$: has no item that matches 'contains'");
  INVALID(s, "[]", "$: has no item that matches 'contains'");
  const char *k = "{\"contains\":{\"const\":1},\"minContains\":2,"
                  "\"maxContains\":3}";
  INVALID(k, "[1,2]",
          "$: has 1 items that match 'contains', fewer than minContains 2");
  INVALID(k, "[1,1,1,1]",
          "$: has 4 items that match 'contains', more than maxContains 3");
  VALID(k, "[1,1,2]");
}

TEST(prefix_items_and_items_false) {
  const char *s =
      "{\"prefixItems\":[{\"type\":\"string\"},{\"type\":\"integer\"}],"
      "\"items\":false}";
  VALID(s, "[\"a\",1]");
  INVALID(s, "[\"a\",\"b\"]", "$[1]: expected integer, got string");
  INVALID(s, "[\"a\",1,null]", "$[2]: item not allowed (items is false)");
}

TEST(draft07_items_array_and_additional_items) {
  const char *s =
      "{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
      "\"items\":[{\"type\":\"string\"}],\"additionalItems\":false}";
  VALID(s, "[\"a\"]");
  INVALID(s, "[\"a\",2]", "$[1]: item not allowed (additionalItems is false)");
  /* additionalItems means nothing beside items as a schema */
  VALID("{\"$schema\":\"http://json-schema.org/draft-07/schema\","
        "\"items\":{},\"additionalItems\":false}",
        "[1,2]");
}

TEST(pattern_properties_and_property_names) {
  const char *s = "{\"patternProperties\":{\"^x\\\\d$\":{\"type\":\"integer\"}},"
                  "\"additionalProperties\":false}";
  VALID(s, "{\"x1\":1,\"x2\":2}");
  INVALID(s, "{\"x1\":\"a\"}", "$.x1: expected integer, got string");
  INVALID(s, "{\"x12\":1}",
          "$.x12: property not allowed (additionalProperties is false)");
  const char *n = "{\"propertyNames\":{\"pattern\":\"^[a-z]+$\","
                  "\"maxLength\":3}}";
  VALID(n, "{\"ab\":1}");
  INVALID(n, "{\"ab\":1,\"Foo\":2}",
          "$.Foo: property name does not match pattern \"^[a-z]+$\"");
  INVALID(n, "{\"abcd\":1}",
          "$.abcd: property name is 4 characters long, more than maxLength 3");
  INVALID("{\"propertyNames\":false}", "{\"a\":1}",
          "$.a: property name not allowed (schema is false)");
}

TEST(min_max_properties) {
  const char *s = "{\"minProperties\":1,\"maxProperties\":2}";
  INVALID(s, "{}", "$: has 0 properties, fewer than minProperties 1");
  INVALID(s, "{\"a\":1,\"b\":2,\"c\":3}",
          "$: has 3 properties, more than maxProperties 2");
  VALID(s, "{\"a\":1}");
}

TEST(dependent_required_and_dependencies) {
  const char *s = "{\"dependentRequired\":{\"credit_card\":[\"billing\"]}}";
  VALID(s, "{\"billing\":\"x\"}");
  VALID(s, "{\"credit_card\":1,\"billing\":\"x\"}");
  INVALID(s, "{\"credit_card\":1}",
          "$: missing property \"billing\", required when \"credit_card\" is "
          "present");
  const char *d = "{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
                  "\"dependencies\":{\"a\":[\"b\"],\"c\":{\"required\":[\"d\"]}}}";
  INVALID(d, "{\"a\":1}",
          "$: missing property \"b\", required when \"a\" is present");
  INVALID(d, "{\"c\":1}", "$: missing required property \"d\"");
  VALID(d, "{\"a\":1,\"b\":1,\"c\":1,\"d\":1}");
}

TEST(dependent_schemas) {
  const char *s = "{\"dependentSchemas\":{\"a\":{\"properties\":{\"b\":"
                  "{\"type\":\"string\"}}}}}";
  VALID(s, "{\"b\":1}");
  INVALID(s, "{\"a\":0,\"b\":1}", "$.b: expected string, got number");
}

TEST(if_then_else) {
  const char *s =
      "{\"if\":{\"properties\":{\"kind\":{\"const\":\"file\"}}},"
      "\"then\":{\"required\":[\"path\"]},\"else\":{\"required\":[\"url\"]}}";
  VALID(s, "{\"kind\":\"file\",\"path\":\"/x\"}");
  INVALID(s, "{\"kind\":\"file\"}", "$: missing required property \"path\"");
  INVALID(s, "{\"kind\":\"web\"}", "$: missing required property \"url\"");
  VALID("{\"then\":false}", "1"); /* then without if means nothing */
}

TEST(unevaluated_properties_and_items) {
  const char *s = "{\"allOf\":[{\"properties\":{\"a\":true}}],"
                  "\"properties\":{\"b\":true},\"unevaluatedProperties\":false}";
  VALID(s, "{\"a\":1,\"b\":2}");
  INVALID(s, "{\"a\":1,\"extra\":2}",
          "$.extra: property not allowed (unevaluatedProperties is false)");
  const char *i = "{\"prefixItems\":[true],\"unevaluatedItems\":false}";
  VALID(i, "[1]");
  INVALID(i, "[1,2]", "$[1]: item not allowed (unevaluatedItems is false)");
}

TEST(ref_reports_the_value_path) {
  const char *s = "{\"$defs\":{\"n\":{\"type\":\"integer\"}},"
                  "\"properties\":{\"a\":{\"items\":{\"$ref\":\"#/$defs/n\"}}}}";
  VALID(s, "{\"a\":[1,2]}");
  INVALID(s, "{\"a\":[1,\"x\"]}", "$.a[1]: expected integer, got string");
}

/* A $dynamicRef that loops in place is stopped by the depth bound. */
TEST(dynamic_ref_recursion_is_bounded) {
  const char *s = "{\"$dynamicAnchor\":\"x\",\"$dynamicRef\":\"#x\"}";
  char e[256];
  ASSERT_INT_EQ(run(s, "1", e, sizeof e), 0);
  ASSERT_STR_EQ(e, "$: schema recursion deeper than 400 levels");
}

/* ---- patterns: ECMA-262 as PCRE2 runs it --------------------------------- */

TEST(pattern_is_ecma262) {
  VALID("{\"pattern\":\"^\\\\d{3}$\"}", "\"123\""); /* POSIX regex said no */
  INVALID("{\"pattern\":\"^\\\\d{3}$\"}", "\"\xd9\xa1\xd9\xa2\xd9\xa3\"",
          "$: does not match pattern \"^\\\\d{3}$\"");
  INVALID("{\"pattern\":\"^abc$\"}", "\"abc\\n\"",
          "$: does not match pattern \"^abc$\"");
  VALID("{\"pattern\":\"^\\\\s$\"}", "\"\xc2\xa0\""); /* no-break space */
  INVALID("{\"pattern\":\"^.$\"}", "\"\\r\"", "$: does not match pattern \"^.$\"");
  VALID("{\"pattern\":\"^.$\"}", "\"\xf0\x9f\x98\x80\""); /* one code point */
  VALID("{\"pattern\":\"^\\\\p{Lu}\\\\u00e9$\"}", "\"A\xc3\xa9\"");
  VALID("{\"pattern\":\"(?<year>\\\\d{4})-\\\\k<year>\"}", "\"2024-2024\"");
  VALID("{\"pattern\":\"^[^]$\"}", "\"\\n\"");
}

TEST(pattern_refuses_what_ecma262_lacks) {
  CHECK_BAD("{\"pattern\":\"^a\\\\Z\"}",
            "schema at $: 'pattern' \"^a\\\\Z\" does not compile: \\Z is not an "
            "ECMA-262 escape");
  CHECK_BAD("{\"pattern\":\"(?i)abc\"}",
            "schema at $: 'pattern' \"(?i)abc\" does not compile: \"(?i\" at "
            "offset 0 is not ECMA-262 syntax");
  CHECK_BAD("{\"pattern\":\"(*UCP)a\"}",
            "schema at $: 'pattern' \"(*UCP)a\" does not compile: \"(*U\" at "
            "offset 0 is not ECMA-262 syntax");
  CHECK_BAD("{\"pattern\":\"a(b\"}",
            "schema at $: 'pattern' \"a(b\" does not compile: missing closing "
            "parenthesis (at offset 3)");
  CHECK_BAD("{\"properties\":{\"p\":{\"patternProperties\":{\"[a-\":{}}}}}",
            "schema at $.properties.p: 'patternProperties' key \"[a-\" does "
            "not compile: missing terminating ] for character class (at "
            "offset 3)");
}

/* A pattern that ends in \p or \P (no {Name}) is refused by PCRE2; the
 * rewrite of property names once looked for the '}' from past the end of
 * the string (found by spec/fuzz/fuzz_schema; caught under ASan and
 * valgrind). */
TEST(pattern_ending_in_backslash_p) {
  const char *bad[] = {"{\"pattern\":\"^if\\\\p\"}", "{\"pattern\":\"\\\\P\"}",
                       "{\"pattern\":\"[\\\\p\"}", "{\"pattern\":\"\\\\p{\"}"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char e[512] = "";
    ASSERT_INT_EQ(check(bad[k], e, sizeof e), -1);
    ASSERT_CONTAINS(e, "does not compile");
  }
}

/* Agents supply the strings: a catastrophic pattern is stopped by the
 * match limit, and says so. */
TEST(pattern_catastrophic_backtracking_is_bounded) {
  char value[4096];
  value[0] = '"';
  memset(value + 1, 'a', 4000);
  strcpy(value + 4001, "!\"");
  const char *s = "{\"properties\":{\"v\":{\"pattern\":\"^(a|aa)+$\"}}}";
  char *inst = malloc(strlen(value) + 16);
  sprintf(inst, "{\"v\":%s}", value);
  char e[256];
  clock_t t0 = clock();
  ASSERT_INT_EQ(run(s, inst, e, sizeof e), 0);
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  ASSERT_STR_EQ(e, "$.v: is too costly to match against pattern "
                   "\"^(a|aa)+$\" (the match limit stops runaway "
                   "backtracking)");
  printf("       catastrophic pattern stopped after %.1f ms\n", secs * 1e3);
  free(inst);
}

/* Many matches just under the limit add up: one validation's matching has
 * a budget. contains tries every item quietly; the budget is told anyway. */
TEST(pattern_time_budget_per_validation) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < 4000; i++)
    cJSON_AddItemToArray(a, cJSON_CreateString("aaaaaaaaaaaaaaaaaaaa!"));
  tg_schema *s = compile_or_die("{\"contains\":{\"pattern\":\"^(a|aa)+$\"}}");
  char e[256];
  clock_t t0 = clock();
  ASSERT_INT_EQ(tg_schema_validate(s, a, e, sizeof e), -EINVAL);
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  ASSERT_PREFIX(e, "$[");
  ASSERT_CONTAINS(e, "]: matching patterns took over 500 ms on this value "
                     "in all; validation stopped here");
  printf("       stopped after %.0f ms\n", secs * 1e3);
  cJSON *list = tg_schema_errors(s, a, 0);
  ASSERT_INT_EQ(cJSON_GetArraySize(list), 1);
  cJSON_Delete(list);
  tg_schema_free(s);
  cJSON_Delete(a);
}

/* A long value with an ordinary pattern stays well within the limits. */
TEST(pattern_long_value_ordinary_pattern) {
  size_t n = 1 << 20;
  char *big = malloc(n + 3);
  big[0] = '"';
  memset(big + 1, 'x', n);
  strcpy(big + n + 1, "\"");
  VALID("{\"pattern\":\"^[a-z0-9._-]+$\"}", big);
  VALID("{\"pattern\":\"x{5}$\"}", big);
  free(big);
}

/* A C host can build a string that is not UTF-8; PCRE2 would refuse it. */
TEST(pattern_on_invalid_utf8_fails_cleanly) {
  tg_schema *s = compile_or_die("{\"pattern\":\"a\"}");
  cJSON *v = cJSON_CreateString("a\xff");
  char e[256];
  ASSERT_INT_EQ(tg_schema_validate(s, v, e, sizeof e), -EINVAL);
  ASSERT_STR_EQ(e, "$: is not valid UTF-8, so it cannot be matched against "
                   "pattern \"a\"");
  cJSON_Delete(v);
  tg_schema_free(s);
}

/* ---- refused when the schema compiles ----------------------------------- */

TEST(check_refuses_remote_refs) {
  CHECK_BAD("{\"$ref\":\"https://example.com/s.json\"}",
            "schema at $: '$ref' \"https://example.com/s.json\" points "
            "outside this schema: remote references are not supported (only "
            "the schema's own $id, $anchor and #/json/pointer places, and the "
            "draft-07 meta-schema)");
  char e[512];
  ASSERT_INT_EQ(check("{\"properties\":{\"a\":{\"$ref\":\"other.json#/x\"}}}", e,
                  sizeof e), -1);
  ASSERT_PREFIX(e, "schema at $.properties.a: '$ref' \"other.json#/x\" points "
                   "outside this schema");
  ASSERT_INT_EQ(check("{\"$dynamicRef\":\"http://x.test/y\"}", e, sizeof e), -1);
  ASSERT_PREFIX(e, "schema at $: '$dynamicRef' \"http://x.test/y\" points "
                   "outside");
  /* built in: the draft-07 meta-schema */
  VALID("{\"$ref\":\"http://json-schema.org/draft-07/schema#\"}",
        "{\"type\":\"string\"}");
  INVALID("{\"$ref\":\"http://json-schema.org/draft-07/schema#\"}",
          "{\"minLength\":-1}", "$.minLength: -1 is below the minimum 0");
}

TEST(check_refuses_dangling_refs) {
  CHECK_BAD("{\"$ref\":\"#/$defs/missing\"}",
            "schema at $: '$ref' \"#/$defs/missing\" points at nothing in the "
            "schema");
  CHECK_BAD("{\"items\":{\"$ref\":\"#nope\"}}",
            "schema at $.items: '$ref' \"#nope\" names an anchor the schema "
            "does not define");
  CHECK_BAD("{\"$defs\":{\"a\":[1]},\"$ref\":\"#/$defs/a\"}",
            "schema at $[\"$defs\"].a: a schema must be an object or a boolean");
  CHECK_BAD("{\"x\":{\"y\":3},\"$ref\":\"#/x/y\"}",
            "schema at $.x.y: a schema must be an object or a boolean");
  CHECK_BAD("{\"$ref\":1}", "schema at $: '$ref' must be a string");
}

TEST(check_refuses_ref_loops) {
  CHECK_BAD("{\"$ref\":\"#\"}",
            "schema at $: '$ref' \"#\" leads back to itself without looking "
            "into the value: validating would never end");
  CHECK_BAD("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"anyOf\":"
            "[{\"type\":\"null\"},{\"$ref\":\"#/$defs/a\"}]}}}",
            "schema at $[\"$defs\"].a: '$ref' \"#/$defs/b\" leads back to itself "
            "without looking into the value: validating would never end");
  /* through a property it is recursion, not a loop */
  char e[256];
  ASSERT_INT_EQ(check("{\"properties\":{\"next\":{\"$ref\":\"#\"}}}", e, sizeof e),
            0);
}

TEST(check_refuses_unknown_drafts) {
  CHECK_BAD("{\"$schema\":\"http://json-schema.org/draft-04/schema#\"}",
            "schema at $: '$schema' \"http://json-schema.org/draft-04/schema#\""
            " is not a draft toolgate knows (draft 2020-12: "
            "https://json-schema.org/draft/2020-12/schema, draft-07: "
            "http://json-schema.org/draft-07/schema#)");
  char e[512];
  ASSERT_INT_EQ(check("{\"$schema\":\"https://json-schema.org/draft/2019-09/"
                  "schema\"}", e, sizeof e), -1);
  ASSERT_INT_EQ(check("{\"$recursiveRef\":\"#\"}", e, sizeof e), -1);
  ASSERT_STR_EQ(e, "schema at $: '$recursiveRef' is a draft 2019-09 keyword; "
                   "toolgate validates draft 2020-12 (use $dynamicRef / "
                   "$dynamicAnchor) and draft-07");
  ASSERT_INT_EQ(check("{\"$schema\":\"https://json-schema.org/draft/2020-12/"
                  "schema\",\"type\":\"string\"}", e, sizeof e), 0);
}

TEST(check_refuses_keywords_of_the_other_draft) {
  CHECK_BAD("{\"additionalItems\":false}",
            "schema at $: 'additionalItems' is a draft-07 keyword; in draft "
            "2020-12 (the default) write 'items' (it applies after "
            "'prefixItems'), or declare \"$schema\": "
            "\"http://json-schema.org/draft-07/schema#\"");
  CHECK_BAD("{\"properties\":{\"a\":{\"dependencies\":{}}}}",
            "schema at $.properties.a: 'dependencies' is a draft-07 keyword; "
            "in draft 2020-12 (the default) write 'dependentRequired' (lists "
            "of names) and 'dependentSchemas' (schemas), or declare "
            "\"$schema\": \"http://json-schema.org/draft-07/schema#\"");
  CHECK_BAD("{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
            "\"prefixItems\":[{}]}",
            "schema at $: 'prefixItems' is a draft 2020-12 keyword, but this "
            "schema is draft-07 (its $schema)");
}

TEST(check_refuses_bad_identifiers) {
  CHECK_BAD("{\"$id\":\"http://x.test/a#frag\"}",
            "schema at $: '$id' must not have a fragment in draft 2020-12 "
            "(name the place with $anchor)");
  CHECK_BAD("{\"$anchor\":\"1abc\"}",
            "schema at $: '$anchor' \"1abc\" is not a valid anchor name (a "
            "letter or _, then letters, digits, - _ . :)");
  CHECK_BAD("{\"$defs\":{\"a\":{\"$anchor\":\"x\"},\"b\":{\"$anchor\":\"x\"}}}",
            "schema at $[\"$defs\"].b: anchor \"x\" is defined twice in the same "
            "schema resource");
  CHECK_BAD("{\"$defs\":{\"a\":{\"$id\":\"http://x.test/a\"},\"b\":{\"$id\":"
            "\"http://x.test/a\"}}}",
            "schema at $[\"$defs\"].b: '$id' \"http://x.test/a\" names two schemas");
}

TEST(check_new_keyword_types) {
  CHECK_BAD("{\"multipleOf\":0}",
            "schema at $: 'multipleOf' must be a number above 0");
  CHECK_BAD("{\"uniqueItems\":1}", "schema at $: 'uniqueItems' must be a boolean");
  CHECK_BAD("{\"maxContains\":-1}",
            "schema at $: 'maxContains' must be a non-negative integer");
  CHECK_BAD("{\"dependentRequired\":{\"a\":\"b\"}}",
            "schema at $: 'dependentRequired' must be an object of arrays of "
            "strings");
  CHECK_BAD("{\"prefixItems\":[]}",
            "schema at $: 'prefixItems' must be a non-empty array of schemas");
  CHECK_BAD("{\"contains\":[]}",
            "schema at $.contains: a schema must be an object or a boolean");
  CHECK_BAD("{\"not\":{\"unevaluatedItems\":3}}",
            "schema at $.not.unevaluatedItems: a schema must be an object or a "
            "boolean");
  CHECK_BAD("{\"format\":1}", "schema at $: 'format' must be a string");
  CHECK_BAD("{\"$defs\":{\"a\":{\"type\":\"x\"}}}",
            "schema at $[\"$defs\"].a: 'type' names an unknown type \"x\" (known: "
            "string, number, integer, boolean, object, array, null)");
}

/* ---- the error list ------------------------------------------------------ */

static char *errors_text(const char *schema, const char *instance,
                         size_t max) {
  tg_schema *s = compile_or_die(schema);
  cJSON *v = parse_or_die(instance);
  cJSON *list = tg_schema_errors(s, v, max);
  ASSERT_TRUE(list);
  char *text = tg_json_print(list, 0);
  cJSON_Delete(list);
  cJSON_Delete(v);
  tg_schema_free(s);
  return text;
}

TEST(errors_lists_every_failure) {
  const char *s =
      "{\"type\":\"object\",\"required\":[\"a\",\"b\"],\"properties\":{"
      "\"c\":{\"type\":\"string\"},\"d\":{\"maximum\":1,\"multipleOf\":2}},"
      "\"anyOf\":[{\"required\":[\"x\"]},{\"required\":[\"y\"]}]}";
  char *t = errors_text(s, "{\"c\":1,\"d\":5}", 0);
  ASSERT_STR_EQ(t,
      "[{\"path\":\"$\",\"keyword\":\"required\",\"message\":\"missing "
      "required property \\\"a\\\"\"},"
      "{\"path\":\"$\",\"keyword\":\"required\",\"message\":\"missing "
      "required property \\\"b\\\"\"},"
      "{\"path\":\"$.c\",\"keyword\":\"type\",\"message\":\"expected "
      "string, got number\"},"
      "{\"path\":\"$.d\",\"keyword\":\"maximum\",\"message\":\"5 is above "
      "the maximum 1\"},"
      "{\"path\":\"$.d\",\"keyword\":\"multipleOf\",\"message\":\"5 is not "
      "a multiple of 2\"},"
      "{\"path\":\"$\",\"keyword\":\"anyOf\",\"message\":\"matches none of "
      "anyOf\"}]");
  free(t);
  t = errors_text(s, "{\"c\":1,\"d\":5}", 2);
  ASSERT_CONTAINS(t, "\"b\\\"\"}]");
  ASSERT_TRUE(!strstr(t, "$.c"));
  free(t);
  t = errors_text(s, "{\"a\":1,\"b\":2,\"x\":3}", 0);
  ASSERT_STR_EQ(t, "[]");
  free(t);
  t = errors_text("{\"items\":{\"type\":\"integer\"}}", "[1,\"a\",true]", 0);
  ASSERT_STR_EQ(t,
      "[{\"path\":\"$[1]\",\"keyword\":\"type\",\"message\":\"expected "
      "integer, got string\"},{\"path\":\"$[2]\",\"keyword\":\"type\","
      "\"message\":\"expected integer, got boolean\"}]");
  free(t);
}

/* tg_tool_register compiles the schema: refused there, used per call. */
TEST(tool_register_compiles_the_schema) {
  tg_config cfg;
  tg_config_init(&cfg);
  tg_runtime *rt = new_runtime(&cfg);
  cJSON *bad = parse_or_die("{\"properties\":{\"a\":{\"$ref\":"
                            "\"https://x.test/a.json\"}}}");
  tg_tool_def d = tool_def("bad", echo_start, NULL, NULL);
  d.schema = bad;
  char err[TG_ERRMSG];
  ASSERT_INT_EQ(tg_tool_register(rt, &d, err), -EINVAL);
  ASSERT_PREFIX(err, "tool 'bad': schema at $.properties.a: '$ref' "
                     "\"https://x.test/a.json\" points outside this schema");
  cJSON *good = parse_or_die("{\"type\":\"object\",\"properties\":{\"n\":"
                             "{\"type\":\"string\",\"pattern\":\"^\\\\d+$\"}}}");
  d = tool_def("digits", echo_start, NULL, NULL);
  d.schema = good;
  register_tool(rt, &d);
  cJSON_Delete(good); /* the tool keeps a copy */
  cJSON_Delete(bad);
  outcome o;
  memset(&o, 0, sizeof o);
  start_call(rt, "c1", "digits", "{\"n\":\"123\"}", &o);
  run_until(rt, &o.n, 1); /* with storage on, done follows the audit record */
  ASSERT_INT_EQ(o.status, TG_STATUS_OK);
  start_call(rt, "c2", "digits", "{\"n\":\"12a\"}", &o);
  run_until(rt, &o.n, 2);
  ASSERT_INT_EQ(o.status, TG_STATUS_ERROR);
  ASSERT_STR_EQ(o.code, "INVALID_ARGS");
  ASSERT_STR_EQ(o.message, "invalid arguments for 'digits': $.n: does not "
                           "match pattern \"^\\\\d+$\"");
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  outcome_free(&o);
  tg_runtime_free(rt);
}

/* The compiled schema does not depend on the JSON it came from. */
TEST(compile_copies_the_schema) {
  cJSON *j = parse_or_die("{\"properties\":{\"a\":{\"enum\":[\"x\"]}},"
                          "\"required\":[\"a\"]}");
  char err[TG_ERRMSG];
  tg_schema *s = tg_schema_compile(j, err);
  ASSERT_TRUE(s);
  cJSON_Delete(j);
  cJSON *v = parse_or_die("{\"a\":\"y\"}");
  char e[128];
  ASSERT_INT_EQ(tg_schema_validate(s, v, e, sizeof e), -EINVAL);
  ASSERT_STR_EQ(e, "$.a: must be one of \"x\"");
  cJSON_Delete(v);
  tg_schema_free(s);
}

TEST_MAIN(TEST_ENTRY(type_each_name), TEST_ENTRY(type_integer_vs_number),
          TEST_ENTRY(type_array_of_names),
          TEST_ENTRY(path_nested_object_in_array_in_object),
          TEST_ENTRY(path_files_example),
          TEST_ENTRY(path_non_identifier_keys_are_bracketed),
          TEST_ENTRY(required), TEST_ENTRY(required_nested_path),
          TEST_ENTRY(required_empty_object_from_lua_is_empty_list),
          TEST_ENTRY(properties_only_listed_ones_checked),
          TEST_ENTRY(additional_properties_false),
          TEST_ENTRY(additional_properties_schema), TEST_ENTRY(enum_strings),
          TEST_ENTRY(enum_of_objects_deep_equality),
          TEST_ENTRY(const_deep_equality), TEST_ENTRY(minimum_maximum),
          TEST_ENTRY(exclusive_bounds), TEST_ENTRY(min_max_length),
          TEST_ENTRY(length_counts_utf8_code_points),
          TEST_ENTRY(pattern_unanchored_search), TEST_ENTRY(items),
          TEST_ENTRY(min_max_items), TEST_ENTRY(any_of), TEST_ENTRY(one_of),
          TEST_ENTRY(all_of_reports_the_failing_branch),
          TEST_ENTRY(boolean_schemas), TEST_ENTRY(unknown_keywords_ignored),
          TEST_ENTRY(instance_200_deep_rejected),
          TEST_ENTRY(instance_at_the_limit_accepted),
          TEST_ENTRY(instance_built_very_deep_rejected),
          TEST_ENTRY(schema_100_deep_rejected),
          TEST_ENTRY(tiny_errlen_stays_terminated),
          TEST_ENTRY(truncation_never_splits_utf8),
          TEST_ENTRY(truncated_long_enum_list),
          TEST_ENTRY(check_accepts_good_schema),
          TEST_ENTRY(check_rejects_bad_type_name),
          TEST_ENTRY(check_rejects_bad_pattern),
          TEST_ENTRY(check_rejects_required_not_array),
          TEST_ENTRY(check_rejects_wrong_keyword_types),
          TEST_ENTRY(check_tiny_errlen_and_null), TEST_ENTRY(multiple_of),
          TEST_ENTRY(const_is_exact_not_approximate), TEST_ENTRY(not_keyword),
          TEST_ENTRY(unique_items),
          TEST_ENTRY(unique_items_long_array),
          TEST_ENTRY(contains_and_counts),
          TEST_ENTRY(prefix_items_and_items_false),
          TEST_ENTRY(draft07_items_array_and_additional_items),
          TEST_ENTRY(pattern_properties_and_property_names),
          TEST_ENTRY(min_max_properties),
          TEST_ENTRY(dependent_required_and_dependencies),
          TEST_ENTRY(dependent_schemas), TEST_ENTRY(if_then_else),
          TEST_ENTRY(unevaluated_properties_and_items),
          TEST_ENTRY(ref_reports_the_value_path),
          TEST_ENTRY(dynamic_ref_recursion_is_bounded),
          TEST_ENTRY(pattern_is_ecma262),
          TEST_ENTRY(pattern_refuses_what_ecma262_lacks),
          TEST_ENTRY(pattern_ending_in_backslash_p),
          TEST_ENTRY(pattern_catastrophic_backtracking_is_bounded),
          TEST_ENTRY(pattern_time_budget_per_validation),
          TEST_ENTRY(pattern_long_value_ordinary_pattern),
          TEST_ENTRY(pattern_on_invalid_utf8_fails_cleanly),
          TEST_ENTRY(check_refuses_remote_refs),
          TEST_ENTRY(check_refuses_dangling_refs),
          TEST_ENTRY(check_refuses_ref_loops),
          TEST_ENTRY(check_refuses_unknown_drafts),
          TEST_ENTRY(check_refuses_keywords_of_the_other_draft),
          TEST_ENTRY(check_refuses_bad_identifiers),
          TEST_ENTRY(check_new_keyword_types),
          TEST_ENTRY(errors_lists_every_failure),
          TEST_ENTRY(tool_register_compiles_the_schema),
          TEST_ENTRY(compile_copies_the_schema))
