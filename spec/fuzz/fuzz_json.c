/*
 * fuzz_json.c — the strict JSON parser every untrusted byte goes through
 * (tg_json_parse, src/base/json.c: cJSON plus toolgate's own checks for
 * duplicate names, numbers that are not finite doubles, UTF-8, NUL, the
 * depth limit). Proves, for any bytes: no crash, leak or undefined
 * behaviour; a value it accepts passes tg__json_check, prints (plain and
 * sorted) as valid UTF-8 that parses back to an equal value, and is equal
 * to itself; a refusal says why, at a byte offset within the text.
 */
#include <string.h>
#include "fuzz.h"
#include "base/json.h"

static void round_trip(const cJSON *v, char *text) {
  FUZZ_ASSERT(text != NULL, "tg_json_print gave NULL");
  size_t n = strlen(text);
  FUZZ_ASSERT(tg__utf8_invalid_at(text, n) == n, "printed text is not UTF-8");
  char err[256] = "";
  cJSON *back = tg_json_parse(text, n, NULL, err, sizeof err);
  FUZZ_ASSERT(back != NULL, "printed text does not parse: %s: %s", err, text);
  FUZZ_ASSERT(tg_json_equal(v, back), "printed text reads back different: %s",
              text);
  cJSON_Delete(back);
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[256] = "";
  const char *text = (const char *)data;
  size_t at = (size_t)-1;
  cJSON *v = tg_json_parse(text, size, &at, err, sizeof err);
  if (!v) {
    FUZZ_ASSERT(err[0] != '\0', "refused without a reason");
    FUZZ_ASSERT(at <= size, "error at %zu, past the text's %zu bytes", at,
                size);
  } else {
    char why[256] = "";
    FUZZ_ASSERT(tg__json_check(v, why, sizeof why) == 0,
                "accepted, but tg__json_check refuses it: %s", why);
    FUZZ_ASSERT(tg_json_equal(v, v), "not equal to itself");
    round_trip(v, tg_json_print(v, 0));
    round_trip(v, tg_json_print(v, 1));
    round_trip(v, tg_json_print_sorted(v));
    cJSON_Delete(v);
  }
  return 0;
}
