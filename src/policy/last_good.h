/*
 * last_good.h — the last content of a policies folder that loaded, kept
 * in toolgate's state folder, so that a process that has no generation of
 * its own to fall back on (a `toolgate hook` answering in-process, with no
 * resident instance) is not left with nothing when a file is half-saved:
 * it answers with the last policies that loaded, and says so.
 *
 * Kept under ${XDG_STATE_HOME:-~/.local/state}/toolgate/last-good/, keyed
 * by the SHA-256 of the folder's real path: KEY is a symlink to KEY.DIGEST/
 * (the copy of every *.lua below the folder but tests, and a DIGEST file),
 * replaced by a rename, so a reader sees the old copy or the new one whole;
 * KEY.log lists the times it was used. Only a load error falls back: a
 * folder that loads is what answers, a deleted rule included.
 */
#ifndef TG_LAST_GOOD_H
#define TG_LAST_GOOD_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "toolgate.h"
#include "base/sha256.h"

/* The digest of the folder's policy content: every *.lua below dir (not
 * *_test.lua, not in tests/ or a dot-folder), names and bytes, in name
 * order. -errno; -EFBIG past the bounds (files, bytes, depth). */
int tg__policies_digest(const char *dir, uint8_t out[TG_SHA256_SIZE]);

/* After dir loaded with content `loaded` (its digest taken before the
 * load): keeps that content as dir's last good copy, unless the copy is
 * already that, or dir changed since (then the copy would not be what
 * loaded: nothing is kept). With loaded NULL (the content that loaded is
 * not known: a resident instance's reload), the copy is kept when
 * loads(copy folder, ud) says it loads (returns 0). 0 or -errno, with
 * err. */
int tg__last_good_keep(const char *dir, const uint8_t loaded[TG_SHA256_SIZE],
                       int (*loads)(const char *copy, void *ud), void *ud,
                       char err[TG_ERRMSG]);

/* dir's last good copy: the folder to load (into out) and when it was
 * kept; -ENOENT when there is none. */
int tg__last_good_find(const char *dir, char *out, size_t len, time_t *when);

/* Appends a line (a time and text) to the copy's log, KEY.log. */
void tg__last_good_log(const char *dir, const char *text);

#endif
