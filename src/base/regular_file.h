/*
 * regular_file.h — opening a file that must be a regular file, without
 * ever blocking on one that is not.
 *
 * Why: open(2) on a FIFO with no writer blocks, and so does reading a
 * terminal or some devices; a path given by a policy (io.open) or found in
 * the policy folder (a FIFO named 20_x.lua) must not hang the runtime. The
 * path is stat'ed first (devices are never opened: opening some has
 * effects), opened O_NONBLOCK, and checked again on the descriptor, so a
 * path swapped between check and open changes nothing.
 */
#ifndef TG_REGULAR_FILE_H
#define TG_REGULAR_FILE_H

#define TG_NOT_REGULAR (-2)

/* A descriptor (O_CLOEXEC, still O_NONBLOCK: harmless on regular files)
 * open for reading on the regular file at path; -1 with errno set when it
 * cannot be opened; TG_NOT_REGULAR with *kind ("a FIFO", "a directory",
 * ...) when it is something else. */
int tg__open_regular(const char *path, const char **kind);

#endif
