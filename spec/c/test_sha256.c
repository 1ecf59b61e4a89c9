/*
 * test_sha256.c — SHA-256 and HMAC-SHA256 (src/base/sha256.c) against the
 * published vectors: FIPS 180-4's examples (via NIST's CSRC pages) and
 * RFC 4231's HMAC-SHA256 test cases; and the constant-time compare.
 */
#include "helpers.h"
#include "internal.h"

static void hex(const uint8_t *d, size_t n, char *out) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", d[i]);
}

static void unhex(const char *s, uint8_t *out, size_t *n) {
  *n = strlen(s) / 2;
  for (size_t i = 0; i < *n; i++) sscanf(s + 2 * i, "%2hhx", &out[i]);
}

static void check_sha(const void *data, size_t len, const char *want) {
  uint8_t d[TG_SHA256_SIZE];
  char got[2 * TG_SHA256_SIZE + 1];
  tg_sha256(data, len, d);
  hex(d, sizeof d, got);
  ASSERT_STR_EQ(got, want);
}

TEST(sha256_matches_the_fips_180_examples) {
  check_sha("", 0,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  check_sha("abc", 3,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  check_sha(two, strlen(two),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const char *four = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                     "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
  check_sha(four, strlen(four),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  char *million = malloc(1000000);
  memset(million, 'a', 1000000);
  check_sha(million, 1000000,
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(million);
}

TEST(every_length_around_the_block_edges_hashes_like_one_piece) {
  /* 55, 56, 63, 64, 65 bytes: the padding's corner cases */
  static const struct { size_t n; const char *want; } cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"}};
  char buf[65];
  memset(buf, 'a', sizeof buf);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    check_sha(buf, cases[i].n, cases[i].want);
}

static void check_hmac(const char *key_hex, const char *data_hex,
                       const char *want, size_t truncate) {
  uint8_t key[200], data[200], mac[TG_SHA256_SIZE];
  size_t nk, nd;
  char got[2 * TG_SHA256_SIZE + 1];
  unhex(key_hex, key, &nk);
  unhex(data_hex, data, &nd);
  tg_hmac_sha256(key, nk, data, nd, mac);
  hex(mac, truncate ? truncate : sizeof mac, got);
  ASSERT_STR_EQ(got, want);
}

TEST(hmac_sha256_matches_rfc_4231) {
  /* 1: a 20-byte key */
  check_hmac("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
             0);
  /* 2: a key shorter than the output ("Jefe") */
  check_hmac("4a656665",
             "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
             0);
  /* 3: 50 bytes of 0xdd */
  check_hmac("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
             "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
             "dddddddddddddddddddddddddddddddddddd",
             "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
             0);
  /* 4: a 25-byte key */
  check_hmac("0102030405060708090a0b0c0d0e0f10111213141516171819",
             "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
             "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
             "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
             0);
  /* 5: output truncated to 128 bits */
  check_hmac("0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c",
             "546573742057697468205472756e636174696f6e",
             "a3b6167473100ee06e0c796c2955552b", 16);
  /* 6 and 7: a 131-byte key, hashed first */
  char key[263];
  memset(key, 'a', 262);
  key[262] = 0;
  check_hmac(key,
             "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a"
             "65204b6579202d2048617368204b6579204669727374",
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
             0);
  check_hmac(key,
             "5468697320697320612074657374207573696e672061206c6172676572207468"
             "616e20626c6f636b2d73697a65206b657920616e642061206c61726765722074"
             "68616e20626c6f636b2d73697a6520646174612e20546865206b6579206e6565"
             "647320746f20626520686173686564206265666f7265206265696e6720757365"
             "642062792074686520484d414320616c676f726974686d2e",
             "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
             0);
}

TEST(digest_equal_compares_every_byte) {
  uint8_t a[32] = {0}, b[32] = {0};
  ASSERT_INT_EQ(tg_digest_equal(a, b, 32), 1);
  b[31] = 1;
  ASSERT_INT_EQ(tg_digest_equal(a, b, 32), 0);
  b[31] = 0;
  b[0] = 0x80;
  ASSERT_INT_EQ(tg_digest_equal(a, b, 32), 0);
  ASSERT_INT_EQ(tg_digest_equal(a, b, 0), 1);
}

TEST_MAIN(TEST_ENTRY(sha256_matches_the_fips_180_examples),
          TEST_ENTRY(every_length_around_the_block_edges_hashes_like_one_piece),
          TEST_ENTRY(hmac_sha256_matches_rfc_4231),
          TEST_ENTRY(digest_equal_compares_every_byte))
