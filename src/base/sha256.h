/*
 * sha256.h — SHA-256 and HMAC-SHA256. The one-shot forms are public
 * (toolgate.h: tg_sha256, tg_hmac_sha256, tg_digest_equal); the
 * incremental context is for code inside the library that hashes pieces.
 */
#ifndef TG_SHA256_H
#define TG_SHA256_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

typedef struct {
  uint32_t h[8];
  uint64_t len;    /* bytes hashed so far */
  uint8_t buf[64]; /* the partial block */
  size_t used;
} tg_sha256_ctx;

void tg__sha256_init(tg_sha256_ctx *c);
void tg__sha256_update(tg_sha256_ctx *c, const void *data, size_t n);
/* Writes the digest and wipes the context. */
void tg__sha256_final(tg_sha256_ctx *c, uint8_t out[TG_SHA256_SIZE]);

#endif
