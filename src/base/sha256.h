/*
 * sha256.h — SHA-256 and HMAC-SHA256. The one-shot forms (tg_sha256,
 * tg_hmac_sha256, tg_digest_equal) are for the fronts too (src/kit/kit.h);
 * the incremental context is for code inside the library that hashes
 * pieces.
 */
#ifndef TG_SHA256_H
#define TG_SHA256_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for fronts that hand out
 * tokens they must recognise when they come back (the MCP server's
 * requestState; src/kit/kit.h) and for the approvals of exact args. */
#define TG_SHA256_SIZE 32
void tg_sha256(const void *data, size_t len,
               uint8_t out[TG_SHA256_SIZE]);
void tg_hmac_sha256(const void *key, size_t keylen, const void *data,
                    size_t len, uint8_t out[TG_SHA256_SIZE]);
/* 1 when the n bytes at a and b are equal, in time that does not depend
 * on where they differ (compare MACs with this, not memcmp). */
int tg_digest_equal(const uint8_t *a, const uint8_t *b, size_t n);

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
