/* glob.h — path globs for file-change subscriptions (see glob.c for the
 * syntax). */
#ifndef TG_GLOB_H
#define TG_GLOB_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

#define TG_GLOB_MAX 1024

/* tg_glob_match and tg_glob_check are public (toolgate.h). */

#endif
