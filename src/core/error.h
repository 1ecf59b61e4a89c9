/*
 * error.h — an owned copy of a structured error ({phase, code, message,
 * suggestion, retryable}): what an attempt or a call ends with.
 */
#ifndef TG_ERROR_H
#define TG_ERROR_H

#include <cjson/cJSON.h>
#include "toolgate.h"

typedef struct {
  tg_phase phase;
  char *code, *message, *suggestion;
  int retryable;
} tg_err;

/* Frees the strings and zeroes e (TG_PHASE_NONE: no error). */
void tg__err_clear(tg_err *e);

#endif
