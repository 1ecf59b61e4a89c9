/*
 * fuzz_schema.c — JSON Schema compiled and applied (src/base/schema*.c:
 * tg_schema_compile, tg_schema_validate, tg_schema_errors), as a policy's
 * or an upstream MCP server's tool schema is compiled and an agent's args
 * are checked against it. Input: SCHEMA NUL INSTANCE, each JSON text read
 * by the strict parser (no NUL: the schema is its own instance). Proves:
 * no crash, leak, hang or undefined behaviour ($ref cycles, deep
 * nesting, `pattern`'s regular expressions, numbers at the edges);
 * validate and errors agree (valid exactly when the list of failures is
 * empty); a refusal says why.
 */
#include <errno.h>
#include <string.h>
#include "fuzz.h"
#include "base/json.h"
#include "base/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data, *inst = text;
  size_t slen = size, ilen = size;
  const char *nul = memchr(text, '\0', size);
  if (nul) {
    slen = (size_t)(nul - text);
    inst = nul + 1;
    ilen = size - slen - 1;
  }
  char err[TG_ERRMSG] = "";
  cJSON *doc = tg_json_parse(text, slen, NULL, err, sizeof err);
  if (!doc) return 0;
  cJSON *value = tg_json_parse(inst, ilen, NULL, err, sizeof err);
  if (!value) {
    cJSON_Delete(doc);
    return 0;
  }
  /* draft-07 too, when the schema names none: the other reading */
  tg__schema_opts o = {.draft7 = slen > 0 && text[slen - 1] == ' '};
  tg_schema *s = tg__schema_compile(doc, 1, &o, err, sizeof err);
  cJSON_Delete(doc);
  if (!s) {
    FUZZ_ASSERT(err[0] != '\0', "schema refused without a reason");
  } else {
    err[0] = '\0';
    int rc = tg_schema_validate(s, value, err, sizeof err);
    FUZZ_ASSERT(rc == 0 || rc == -EINVAL || rc == -ENOMEM,
                "tg_schema_validate gave %d", rc);
    if (rc == -EINVAL) FUZZ_ASSERT(err[0] != '\0', "invalid, no reason");
    cJSON *errs = tg_schema_errors(s, value, 0);
    if (errs && rc != -ENOMEM) {
      FUZZ_ASSERT(cJSON_IsArray(errs), "tg_schema_errors: not an array");
      int n = cJSON_GetArraySize(errs);
      FUZZ_ASSERT((rc == 0) == (n == 0),
                  "validate says %s, errors lists %d failure(s): %s",
                  rc == 0 ? "valid" : "invalid", n, err);
    }
    cJSON_Delete(errs);
    tg_schema_free(s);
  }
  cJSON_Delete(value);
  return 0;
}
