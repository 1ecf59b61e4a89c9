/*
 * reqstate.c — the requestState of a 2026-07-28 input_required result.
 *
 * The server keeps nothing per pending question: everything the retry
 * needs travels with the client, so it must not be forgeable. A state is
 * 89 bytes, base64url-encoded (119 characters):
 *
 *   [0]      format version (1)
 *   [1..8]   expiry, ms of this process's monotonic clock, big-endian
 *   [9..24]  nonce (random): the state's identity, for single use
 *   [25..56] SHA-256 of purpose NUL method NUL tool NUL args (keys
 *            sorted): what it was issued for
 *
 * The purpose keeps toolgate's own question apart from the questions it
 * relays: an approval's state answers "may this call run?", an input
 * state carries an upstream's requests. Both are retries of the same
 * method and arguments, so without it a state issued for an upstream's
 * question (whose key the upstream may name "approval") would redeem as
 * the user's approval of the call.
 *   [57..88] HMAC-SHA256 of bytes 0..56 under a key made at start-up
 *
 * The key never leaves the process, so a state from another process (or
 * after a restart) fails like a tampered one. A state is redeemed once:
 * its nonce is remembered until it expires.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <uv.h>
#include "mcp.h"

#define STATE_VERSION 1
#define NONCE 16
#define BODY (1 + 8 + NONCE + TG_SHA256_SIZE)
#define STATE_BYTES (BODY + TG_SHA256_SIZE)
#define STATE_TEXT ((STATE_BYTES * 4 + 2) / 3)
#define MAX_USED 65536

typedef struct {
  uint8_t nonce[NONCE];
  uint64_t expires;
} used_state;

struct mcp_states {
  uint8_t key[32];
  uint64_t ttl_ms;
  used_state *used;
  size_t nused, capused;
};

static uint64_t now_ms(void) { return uv_hrtime() / 1000000u; }

static int fill_random(void *buf, size_t n) {
  uint8_t *p = buf;
  while (n > 0) {
    ssize_t got = getrandom(p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    p += got;
    n -= (size_t)got;
  }
  return 0;
}

mcp_states *mcp_states_new(uint64_t ttl_ms, char err[TG_ERRMSG]) {
  mcp_states *st = calloc(1, sizeof *st);
  if (!st) {
    snprintf(err, TG_ERRMSG, "out of memory");
    return NULL;
  }
  if (fill_random(st->key, sizeof st->key) < 0) {
    snprintf(err, TG_ERRMSG, "cannot get random bytes for the requestState "
             "key: %s", strerror(errno));
    free(st);
    return NULL;
  }
  st->ttl_ms = ttl_ms;
  return st;
}

void mcp_states_free(mcp_states *st) {
  if (!st) return;
  memset(st->key, 0, sizeof st->key);
  free(st->used);
  free(st);
}

/* ---- base64url, no padding ------------------------------------------------ */

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void encode(const uint8_t *in, size_t n, char *out) {
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16;
    if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
    if (i + 2 < n) v |= in[i + 2];
    out[o++] = b64[(v >> 18) & 63];
    out[o++] = b64[(v >> 12) & 63];
    if (i + 1 < n) out[o++] = b64[(v >> 6) & 63];
    if (i + 2 < n) out[o++] = b64[v & 63];
  }
  out[o] = 0;
}

static int sextet(char c) {
  const char *p = c ? strchr(b64, c) : NULL;
  return p ? (int)(p - b64) : -1;
}

/* Exactly STATE_BYTES from exactly STATE_TEXT characters, or -1. */
static int decode(const char *in, uint8_t *out) {
  if (strlen(in) != STATE_TEXT) return -1;
  uint32_t acc = 0;
  int bits = 0;
  size_t o = 0;
  for (const char *p = in; *p; p++) {
    int v = sextet(*p);
    if (v < 0) return -1;
    acc = acc << 6 | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (o == STATE_BYTES) return -1;
      out[o++] = (uint8_t)(acc >> bits);
    }
  }
  /* the bits left over must be zero: one state, one spelling */
  return o == STATE_BYTES && !(acc & ((1u << bits) - 1)) ? 0 : -1;
}

/* ---- issue and redeem ------------------------------------------------------ */

static const char *purpose_name(mcp_state_purpose purpose) {
  return purpose == MCP_STATE_APPROVAL ? "approval" : "input";
}

/* What a state is for: its purpose, method, tool and args (keys sorted).
 * -1: no memory. */
static int binding(mcp_state_purpose purpose, const char *method,
                   const char *tool, const cJSON *args,
                   uint8_t out[TG_SHA256_SIZE]) {
  char *a = tg_json_print_sorted(args);
  if (!a) return -1;
  const char *pu = purpose_name(purpose);
  size_t np = strlen(pu), nm = strlen(method), nt = strlen(tool),
         na = strlen(a);
  char *buf = malloc(np + nm + nt + na + 3);
  if (!buf) {
    free(a);
    return -1;
  }
  /* the NULs keep the parts apart */
  char *at = memcpy(buf, pu, np + 1);
  at = memcpy(at + np + 1, method, nm + 1);
  at = memcpy(at + nm + 1, tool, nt + 1);
  memcpy(at + nt + 1, a, na);
  tg_sha256(buf, np + nm + nt + na + 3, out);
  free(buf);
  free(a);
  return 0;
}

char *mcp_state_issue(mcp_states *st, mcp_state_purpose purpose,
                      const char *method, const char *tool,
                      const cJSON *args) {
  uint8_t b[STATE_BYTES];
  uint64_t expires = now_ms() + st->ttl_ms;
  b[0] = STATE_VERSION;
  for (int i = 0; i < 8; i++) b[1 + i] = (uint8_t)(expires >> (56 - 8 * i));
  if (fill_random(b + 9, NONCE) < 0 ||
      binding(purpose, method, tool, args, b + 9 + NONCE) < 0)
    return NULL;
  tg_hmac_sha256(st->key, sizeof st->key, b, BODY, b + BODY);
  char *text = malloc(STATE_TEXT + 1);
  if (text) encode(b, sizeof b, text);
  return text;
}

/* Forgets the used states that have expired (an expired state is refused
 * for that already). */
static void purge(mcp_states *st, uint64_t now) {
  size_t k = 0;
  for (size_t i = 0; i < st->nused; i++)
    if (st->used[i].expires > now) st->used[k++] = st->used[i];
  st->nused = k;
}

static int was_used(const mcp_states *st, const uint8_t *nonce) {
  for (size_t i = 0; i < st->nused; i++)
    if (!memcmp(st->used[i].nonce, nonce, NONCE)) return 1;
  return 0;
}

static int mark_used(mcp_states *st, const uint8_t *nonce, uint64_t expires,
                     uint64_t now) {
  if (st->nused == st->capused) purge(st, now);
  if (st->nused == st->capused) {
    if (st->capused >= MAX_USED) return -1;
    size_t cap = st->capused ? st->capused * 2 : 64;
    used_state *u = realloc(st->used, cap * sizeof *u);
    if (!u) return -1;
    st->used = u;
    st->capused = cap;
  }
  memcpy(st->used[st->nused].nonce, nonce, NONCE);
  st->used[st->nused++].expires = expires;
  return 0;
}

static int refuse(char *why, size_t len, const char **reason, const char *r,
                  const char *text) {
  snprintf(why, len, "requestState %s: %s", r, text);
  *reason = r;
  return -1;
}

int mcp_state_redeem(mcp_states *st, const char *state,
                     mcp_state_purpose purpose, const char *method,
                     const char *tool, const cJSON *args, char *why,
                     size_t whylen, const char **reason) {
  uint8_t b[STATE_BYTES], mac[TG_SHA256_SIZE], want[TG_SHA256_SIZE];
  uint64_t now = now_ms(), expires = 0;
  if (decode(state, b) < 0 || b[0] != STATE_VERSION)
    return refuse(why, whylen, reason, "tampered", "it is not a state this "
                  "server issued; send the call again without it to be asked "
                  "anew");
  tg_hmac_sha256(st->key, sizeof st->key, b, BODY, mac);
  if (!tg_digest_equal(mac, b + BODY, sizeof mac))
    return refuse(why, whylen, reason, "tampered", "its integrity check "
                  "failed (changed, or issued by another process); send the "
                  "call again without it to be asked anew");
  for (int i = 0; i < 8; i++) expires = expires << 8 | b[1 + i];
  if (was_used(st, b + 9))
    return refuse(why, whylen, reason, "replayed", "it was used already; "
                  "each answer runs one call: send the call again without it "
                  "to be asked anew");
  if (now >= expires)
    return refuse(why, whylen, reason, "expired", "the question timed out; "
                  "send the call again without it to be asked anew");
  if (binding(purpose, method, tool, args, want) < 0)
    return refuse(why, whylen, reason, "tampered", "out of memory");
  if (!tg_digest_equal(want, b + 9 + NONCE, sizeof want))
    return refuse(why, whylen, reason, "mismatch", "it was issued for "
                  "another request (method, tool, arguments, or the kind of "
                  "question differ): the answer covers only the request it "
                  "was asked for");
  if (mark_used(st, b + 9, expires, now) < 0)
    return refuse(why, whylen, reason, "busy", "too many answered questions "
                  "are remembered; try again later");
  return 0;
}
