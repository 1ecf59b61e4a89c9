/* project.h — the project folder approvals are remembered for. */
#ifndef TG_PROJECT_H
#define TG_PROJECT_H

#include <cjson/cJSON.h>
#include "toolgate.h"

/* The real path of dir (NULL: the current directory), malloc'd; NULL with
 * "project DIR: why" in err when it is no folder. */
char *tg__project_dir(const char *dir, char err[TG_ERRMSG]);

#endif
