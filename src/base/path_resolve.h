/*
 * path_resolve.h — where a path leads when a program opens or creates it:
 * relative to its working directory, every symlink followed (a dangling
 * one to where a create would land), `..` applied to the real parent, as
 * the kernel walks it.
 *
 * Why: a rule that reads "src/lnk/etc/cron.d/x" as text judges a file in
 * src/, while the agent's write lands in /etc/cron.d when src/lnk -> /.
 * Judges compare where an action lands, never how its path was spelled.
 * What cannot be resolved safely (a symlink loop, a component that is
 * not a directory, a /proc link that names the files of whichever
 * process opens it) is said, not guessed.
 */
#ifndef TG_PATH_RESOLVE_H
#define TG_PATH_RESOLVE_H

#include <stddef.h>
#include "toolgate.h"

/* Symlinks followed at most on one path, as Linux's own limit (ELOOP). */
#define TG_PATH_MAX_LINKS 40

/* tg_path_resolve (include/toolgate.h) is this module's one function. */

#endif
