/*
 * fuzz.h — what the libFuzzer harnesses (spec/fuzz/fuzz_*.c) share: a
 * failed property is reported the way a sanitizer's is (a message and
 * abort, so libFuzzer keeps the input as a crash), and the fixture
 * folders are found in the source tree (TG_SOURCE_DIR).
 */
#ifndef TG_FUZZ_H
#define TG_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "toolgate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_ASSERT(cond, ...)                                              \
  do {                                                                      \
    if (!(cond)) {                                                          \
      fprintf(stderr, "%s:%d: property failed: %s: ", __FILE__, __LINE__,  \
              #cond);                                                       \
      fprintf(stderr, __VA_ARGS__);                                         \
      fputc('\n', stderr);                                                  \
      abort();                                                              \
    }                                                                       \
  } while (0)

/* The runtime the hook, MCP and control harnesses judge with: the fuzz
 * policies (rules and Lua tools only: nothing starts a process or writes a
 * file), no database, a fixed seed; `adjust` (may be NULL) changes the
 * rest. Aborts, naming `who`, when it cannot be made. */
static inline tg_runtime *fuzz_runtime(const char *who,
                                       void (*adjust)(tg_config *)) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.policies_dir = TG_SOURCE_DIR "/spec/fuzz/policies";
  cfg.db_off = 1;
  cfg.seed = 1;
  if (adjust) adjust(&cfg);
  char err[TG_ERRMSG] = "";
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) {
    fprintf(stderr, "%s: %s\n", who, err);
    abort();
  }
  return rt;
}

#endif
