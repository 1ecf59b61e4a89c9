/* glob.h — path globs for file-change subscriptions (see glob.c for the
 * syntax). */
#ifndef TG_GLOB_H
#define TG_GLOB_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

#define TG_GLOB_MAX 1024

/* 1 when path matches glob (the syntax of tg_changes_subscribe in
 * toolgate.h), else 0 (also for a malformed glob). */
int tg_glob_match(const char *glob, const char *path);
/* 0 when glob is well formed, else -EINVAL with what is wrong in err
 * (may be NULL). */
int tg_glob_check(const char *glob, char *err, size_t errlen);

#endif
