/*
 * state_dir.h — toolgate's folder of state: ${XDG_STATE_HOME:-$HOME/.local/
 * state}/toolgate, where the default database lives (store/db.c). One place
 * computes it, so whatever else keeps state there finds the same folder,
 * and the tests that give each run its own XDG_STATE_HOME isolate it all.
 */
#ifndef TG_STATE_DIR_H
#define TG_STATE_DIR_H

#include <stddef.h>

/* The folder into buf (no trailing '/'; nothing is made). -ENOENT when
 * neither XDG_STATE_HOME nor HOME is a full path (a relative
 * XDG_STATE_HOME is invalid and ignored, as the XDG spec says),
 * -ENAMETOOLONG when it does not fit. */
int tg__state_dir(char *buf, size_t len);

#endif
