/*
 * test_jsonnum.c — the one JSON number to C integer conversion
 * (src/base/jsonnum.c): what it accepts, what it refuses, and the message
 * that names the argument and its range.
 */
#include "helpers.h"
#include "internal.h"

TEST(integers_in_range_convert_exactly) {
  int64_t v = -7;
  ASSERT_OK(tg__int_of_double(0, 0, 10, &v));
  ASSERT_INT_EQ(v, 0);
  ASSERT_OK(tg__int_of_double(-0.0, 0, 10, &v));
  ASSERT_INT_EQ(v, 0);
  ASSERT_OK(tg__int_of_double(10, 0, 10, &v));
  ASSERT_INT_EQ(v, 10);
  ASSERT_OK(tg__int_of_double(-5, -5, 5, &v));
  ASSERT_INT_EQ(v, -5);
  ASSERT_OK(tg__int_of_double(9007199254740991.0, 1, TG_JSON_INT_MAX, &v));
  ASSERT_INT_EQ(v, TG_JSON_INT_MAX);
  ASSERT_OK(tg__int_of_double(1e15, 0, TG_JSON_INT_MAX, &v));
  ASSERT_INT_EQ(v, 1000000000000000LL);
}

TEST(everything_else_is_refused_and_out_is_untouched) {
  static const double bad[] = {NAN, INFINITY, -INFINITY, 1.5, -0.5, 11, -1,
                               1e20, -1e20, 9007199254740992.0, 1e308};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int64_t v = 42;
    if (tg__int_of_double(bad[i], 0, 10, &v) != -1)
      TG_FAIL("%g was accepted in [0, 10]", bad[i]);
    ASSERT_INT_EQ(v, 42);
  }
  int64_t v = 42;
  ASSERT_INT_EQ(
      tg__int_of_double(9007199254740992.0, 0, TG_JSON_INT_MAX, &v), -1);
}

TEST(the_message_names_the_argument_the_range_and_the_value) {
  static const struct { const char *json, *got; } cases[] = {
      {"1e20", "got 1e+20"},     {"1.5", "got 1.5"},
      {"-3", "got -3"},          {"0.1", "got 0.1"},
      {"1e999", "got infinity"}, {"\"12\"", "got a string"},
      {"true", "got true"},      {"[1]", "got an array"},
      {"{}", "got an object"},   {"null", "got null"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cJSON *j = cJSON_Parse(cases[i].json);
    ASSERT_NOT_NULL(j);
    int64_t v;
    char err[200] = "";
    ASSERT_INT_EQ(tg__json_int(j, "read_file: offset", 1, TG_JSON_INT_MAX, &v,
                               err, sizeof err),
                  -1);
    ASSERT_CONTAINS(err, "read_file: offset must be an integer from 1 to "
                         "9007199254740991, ");
    ASSERT_CONTAINS(err, cases[i].got);
    cJSON_Delete(j);
  }
}

TEST(an_optional_argument_takes_its_default_when_absent_or_null) {
  cJSON *args = cJSON_Parse("{\"a\":null,\"b\":7,\"c\":7.25}");
  int64_t v = 0;
  char err[200] = "";
  ASSERT_OK(tg__json_int_arg(args, "t", "a", 1, 10, 3, &v, err, sizeof err),
            err);
  ASSERT_INT_EQ(v, 3);
  ASSERT_OK(tg__json_int_arg(args, "t", "zz", 1, 10, 4, &v, err, sizeof err),
            err);
  ASSERT_INT_EQ(v, 4);
  ASSERT_OK(tg__json_int_arg(args, "t", "b", 1, 10, 3, &v, err, sizeof err),
            err);
  ASSERT_INT_EQ(v, 7);
  ASSERT_INT_EQ(tg__json_int_arg(args, "t", "b", 1, 5, 3, &v, err, sizeof err),
                -1);
  ASSERT_STR_EQ(err, "t: b must be an integer from 1 to 5, got 7");
  ASSERT_INT_EQ(tg__json_int_arg(args, "t", "c", 1, 10, 3, &v, err, sizeof err),
                -1);
  ASSERT_STR_EQ(err, "t: c must be an integer from 1 to 10, got 7.25");
  cJSON_Delete(args);
}

TEST_MAIN(TEST_ENTRY(integers_in_range_convert_exactly),
          TEST_ENTRY(everything_else_is_refused_and_out_is_untouched),
          TEST_ENTRY(the_message_names_the_argument_the_range_and_the_value),
          TEST_ENTRY(an_optional_argument_takes_its_default_when_absent_or_null))
