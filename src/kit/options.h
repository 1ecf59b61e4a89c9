/*
 * options.h — the long-option parser every command shares.
 *
 * A command describes its options in a table; opt_parse fills the targets
 * and collects the positional arguments. Errors name the option and go to
 * stderr as "toolgate: CMD: ...".
 */
#ifndef TOOLGATE_KIT_OPTIONS_H
#define TOOLGATE_KIT_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

typedef enum {
  OPT_FLAG,  /* --name: sets *flag to 1 */
  OPT_VALUE  /* --name=V or --name V: sets *value to V */
} opt_kind;

typedef struct {
  const char *name; /* with the dashes: "--json" */
  opt_kind kind;
  int *flag;
  const char **value;
} opt_spec;

typedef struct {
  const char *command;    /* for messages: "call" */
  const opt_spec *specs;
  size_t nspecs;
  const char **positional; /* filled in order */
  int min_positional, max_positional;
  const char *const *positional_names; /* max_positional names: "TOOL" */
  const char *usage;       /* one line: "call TOOL JSON [options]" */
} opt_parser;

enum {
  OPT_PARSE_OK = 0,
  OPT_PARSE_HELP = 1,   /* --help or -h was given */
  OPT_PARSE_ERROR = -1  /* a message was printed */
};

/* Parses argv[0..argc) (the words after the command name). On OPT_PARSE_OK
 * *npos holds the number of positional arguments. */
int opt_parse(const opt_parser *p, int argc, char **argv, int *npos);

/* Parses a positive whole number of milliseconds for option `name`;
 * prints an error naming the option and returns -1 when `text` is not one. */
int opt_millis(const char *command, const char *name, const char *text,
               uint64_t *out);

/* Parses a positive byte count, with an optional K, M or G suffix (powers
 * of 1024): "65536", "64K", "1M". Prints an error and returns -1 otherwise. */
int opt_bytes(const char *command, const char *name, const char *text,
              uint64_t *out);

/* The policy sandbox options of every command that loads policies: put
 * SANDBOX_OPT_SPECS(&o) in the command's table, SANDBOX_OPT_USAGE in its
 * help, and call sandbox_options_apply before tg_runtime_new. */
typedef struct {
  int trusted;                /* --trusted-policies */
  const char *time_limit;     /* --policy-time-limit MS */
  const char *memory_cap;     /* --policy-memory-cap BYTES */
} sandbox_options;

#define SANDBOX_OPT_SPECS(o)                                   \
  {"--trusted-policies", OPT_FLAG, &(o)->trusted, NULL},       \
  {"--policy-time-limit", OPT_VALUE, NULL, &(o)->time_limit},  \
  {"--policy-memory-cap", OPT_VALUE, NULL, &(o)->memory_cap}

#define SANDBOX_OPT_USAGE                                                    \
  "  --trusted-policies  give policies the full Lua standard library\n"      \
  "                      (os.execute, io.popen, debug, ...)\n"               \
  "  --policy-time-limit MS\n"                                             \
  "                      time per call into policy code, in ms\n"          \
  "                      (default 500)\n"                                   \
  "  --policy-memory-cap BYTES\n"                                           \
  "                      memory of the loaded policies (default 64M;\n"     \
  "                      K, M, G suffixes)\n"

/* Checks the values (an error is printed) and sets them in cfg. */
int sandbox_options_apply(const char *command, const sandbox_options *o,
                          tg_config *cfg);

/* The database options of the commands that run calls (call, explain):
 * DB_OPT_SPECS(&o) in the table, DB_OPT_USAGE in the help,
 * db_options_apply before tg_runtime_new. The commands that read the
 * database (log, approvals) take --db alone: DB_PATH_USAGE. */
typedef struct {
  const char *db;             /* --db PATH */
  int no_db;                  /* --no-db */
} db_options;

#define DB_OPT_SPECS(o)                                \
  {"--db", OPT_VALUE, NULL, &(o)->db},                 \
  {"--no-db", OPT_FLAG, &(o)->no_db, NULL}

#define DB_PATH_USAGE                                                        \
  "  --db PATH           the database (default:\n"                           \
  "                      ${XDG_STATE_HOME:-~/.local/state}/toolgate/\n"      \
  "                      toolgate.db)\n"

#define DB_OPT_USAGE                                                         \
  DB_PATH_USAGE                                                              \
  "  --no-db             no database: no audit trail, approve-always\n"      \
  "                      remembered for this run only\n"

int db_options_apply(const char *command, const db_options *o,
                     tg_config *cfg);
/* --db's value checked (not empty). */
int db_path_check(const char *command, const char *db);

#endif
