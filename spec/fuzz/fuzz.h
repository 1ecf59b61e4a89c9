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

#endif
