/* glob.h — path globs for file-change subscriptions (see glob.c for the
 * syntax). tg_glob_match itself is public (toolgate.h). */
#ifndef TG_GLOB_H
#define TG_GLOB_H

#include <stddef.h>
#include "toolgate.h"

#define TG_GLOB_MAX 1024

/* 0 when glob is well formed; else -EINVAL with the reason in err. */
int tg__glob_check(const char *glob, char *err, size_t errlen);

#endif
