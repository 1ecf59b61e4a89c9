/* error_codes.c — the names, phases and documentation of the error codes
 * the runtime emits, from the one list in toolgate.h (TG_ERROR_CODE_MAP). */
#include <string.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

static const struct {
  const char *name, *doc;
  unsigned phases;
} codes[TG_E__COUNT] = {
    [TG_E_NONE] = {NULL, NULL, 0},
#define TG_ERROR_CODE_ROW(n, ph, d) [TG_E_##n] = {#n, d, ph},
    TG_ERROR_CODE_MAP(TG_ERROR_CODE_ROW)
#undef TG_ERROR_CODE_ROW
};

static const char *const names[TG_E__COUNT] = {
#define TG_ERROR_CODE_NAME(n, ph, d) #n,
    TG_ERROR_CODE_MAP(TG_ERROR_CODE_NAME)
#undef TG_ERROR_CODE_NAME
    NULL};

const char *tg_error_code_name(tg_error_code code) {
  return (unsigned)code < TG_E__COUNT ? codes[code].name : NULL;
}

const char *tg_error_code_doc(tg_error_code code) {
  return (unsigned)code < TG_E__COUNT ? codes[code].doc : NULL;
}

unsigned tg_error_code_phases(tg_error_code code) {
  return (unsigned)code < TG_E__COUNT ? codes[code].phases : 0;
}

tg_error_code tg_error_code_of(const char *name) {
  if (!name) return TG_E_NONE;
  for (int i = TG_E_NONE + 1; i < TG_E__COUNT; i++)
    if (strcmp(codes[i].name, name) == 0) return (tg_error_code)i;
  return TG_E_NONE;
}

const char *const *tg_error_codes(void) { return names; }
