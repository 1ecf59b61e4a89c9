/*
 * command.h — a shell command's args ({command, cwd?, env?, timeout_ms?,
 * stdin?}), parsed for the exec tool and ctx.exec alike.
 */
#ifndef TG_COMMAND_H
#define TG_COMMAND_H

#include "process.h"

#define TG_COMMAND_MAX_TIMEOUT_MS 86400000 /* one day: a bound a user controls */

/* The args, parsed: strings borrowed from the args JSON except env. */
typedef struct {
  tg_proc_opts proc;
  char **env;                 /* owned "NAME=value" strings, NULL-terminated */
  uint64_t timeout_ms;        /* 0: not given */
} tg_command;

/* Fills a from the args and the configuration's defaults (output cap,
 * kill grace). Returns 0, or -1 with what is wrong in err (then nothing
 * needs freeing). */
int tg__command_parse(const tg_config *cfg, const cJSON *args, tg_command *a,
                      char *err, size_t errlen);
void tg__command_free(tg_command *a);

#endif
