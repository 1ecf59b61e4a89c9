/*
 * approval_seal.c — what the database keeps of an approval of exact args
 * (the digest itself is the store's, tg__seal_args in store/store.c; the
 * key and the upgrade that seals old rows are this backend's).
 * The args may hold a credential the audit would mask (an approve-always
 * on write_file {"content": "aws=AKIA..."}), so the row never holds them:
 * it holds a keyed digest of their canonical text, which a call matches
 * when its own args digest the same (core/approval.c), and the text with
 * the audit's masks, for `toolgate approvals list`.
 *
 * The key: 32 bytes from the kernel (base/random.h), made once when the
 * schema reaches version 5 and kept in the database's `keys` table, which
 * only toolgate reads. Why in the database rather than a 0600 file beside
 * it: the key is no more exposed than the rows it keys (one private file,
 * docs/storage.md), and it travels with them — a database copied, moved
 * or restored without a second file would otherwise lose every approval
 * of exact args, and a second file is one more path to create safely. What
 * the key buys: a digest seen outside the database (a row pasted in a bug
 * report, an export) cannot be checked against guessed args; what it does
 * not: whoever reads the whole file can test guesses, as they could read
 * the audit. A credential (random, long) is not found by guessing.
 *
 * Databases from before version 5 are sealed by the upgrade: each stored
 * args text becomes its digest and masked copy, and a pattern whose text
 * the masks would change (a credential in a glob: it cannot be digested,
 * it is matched as text) is revoked and masked. Freed space is zeroed
 * (secure_delete, db.c) and the WAL truncated after (schema.c), so no copy
 * of the old text stays in the file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sqlite_store.h"
#include "base/random.h"
#include "base/util.h"

#define KEY_NAME "approval_args"

int tg__seal_key_load(sqlite3 *db, uint8_t key[TG_SHA256_SIZE]) {
  sqlite3_stmt *st = NULL;
  int ok = 0;
  if (sqlite3_prepare_v2(db, "SELECT key FROM keys WHERE name = '" KEY_NAME
                         "'", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW &&
      sqlite3_column_bytes(st, 0) == TG_SHA256_SIZE) {
    memcpy(key, sqlite3_column_blob(st, 0), TG_SHA256_SIZE);
    ok = 1;
  }
  sqlite3_finalize(st);
  return ok ? 0 : -ENOENT;
}

/* ---- the upgrade to version 5 ---------------------------------------- */

static int make_key(sqlite3 *db, uint8_t key[TG_SHA256_SIZE], char *err,
                    size_t errlen) {
  int rc = tg__random_bytes(key, TG_SHA256_SIZE);
  if (rc < 0) {
    snprintf(err, errlen, "no random bytes for the approval key: %s",
             strerror(-rc));
    return -1;
  }
  sqlite3_stmt *st = NULL;
  rc = sqlite3_prepare_v2(db, "INSERT INTO keys (name, key) VALUES ('"
                          KEY_NAME "', ?1)", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_blob(st, 1, key, TG_SHA256_SIZE, SQLITE_STATIC);
    rc = sqlite3_step(st);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    snprintf(err, errlen, "storing the approval key: %s", sqlite3_errmsg(db));
    return -1;
  }
  return 0;
}

/* Each row with args text: its digest and masked copy in place of it. */
static int seal_args_rows(sqlite3 *db, const uint8_t key[TG_SHA256_SIZE],
                          char *err, size_t errlen) {
  sqlite3_stmt *sel = NULL, *upd = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT id, args_key FROM approvals WHERE "
                              "args_key IS NOT NULL", -1, &sel, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(db, "UPDATE approvals SET args_key = NULL, "
                            "args_digest = ?2, args_preview = ?3 WHERE id = ?1",
                            -1, &upd, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
    char *digest = NULL, *preview = NULL;
    const char *text = (const char *)sqlite3_column_text(sel, 1);
    if (tg__seal_args(key, NULL, text ? text : "", &digest, &preview) < 0) {
      rc = SQLITE_NOMEM;
      break;
    }
    sqlite3_bind_int64(upd, 1, sqlite3_column_int64(sel, 0));
    tg__bind_str(upd, 2, digest);
    tg__bind_str(upd, 3, preview);
    rc = sqlite3_step(upd) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    sqlite3_reset(upd);
    free(digest);
    free(preview);
  }
  sqlite3_finalize(sel);
  sqlite3_finalize(upd);
  if (rc != SQLITE_DONE) {
    snprintf(err, errlen, "sealing the stored approvals' args: %s",
             rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(db));
    return -1;
  }
  return 0;
}

/* A pattern holding a credential: masked, and revoked (a masked glob
 * would match something else than was approved). */
static int seal_pattern_rows(sqlite3 *db, int64_t now_ms, char *err,
                             size_t errlen) {
  sqlite3_stmt *sel = NULL, *upd = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT id, arg, glob FROM approvals WHERE "
                              "arg IS NOT NULL OR glob IS NOT NULL", -1, &sel,
                              NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(db, "UPDATE approvals SET arg = coalesce(?2, arg),"
                            " glob = coalesce(?3, glob),"
                            " revoked = coalesce(revoked, ?4) WHERE id = ?1",
                            -1, &upd, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
    char *arg = tg__redact_builtin((const char *)sqlite3_column_text(sel, 1));
    char *glob = tg__redact_builtin((const char *)sqlite3_column_text(sel, 2));
    rc = SQLITE_OK;
    if (arg || glob) {
      sqlite3_bind_int64(upd, 1, sqlite3_column_int64(sel, 0));
      tg__bind_str(upd, 2, arg);
      tg__bind_str(upd, 3, glob);
      sqlite3_bind_int64(upd, 4, now_ms);
      rc = sqlite3_step(upd) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
      sqlite3_reset(upd);
    }
    free(arg);
    free(glob);
  }
  sqlite3_finalize(sel);
  sqlite3_finalize(upd);
  if (rc != SQLITE_DONE) {
    snprintf(err, errlen, "masking the stored patterns: %s",
             sqlite3_errmsg(db));
    return -1;
  }
  return 0;
}

int tg__seal_upgrade(sqlite3 *db, char *err, size_t errlen) {
  uint8_t key[TG_SHA256_SIZE];
  int rc = make_key(db, key, err, errlen);
  if (rc == 0) rc = seal_args_rows(db, key, err, errlen);
  if (rc == 0) rc = seal_pattern_rows(db, (int64_t)tg__wall_ms(), err, errlen);
  memset(key, 0, sizeof key);
  return rc;
}
