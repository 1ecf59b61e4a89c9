/*
 * options.h — the long-option parser every command shares.
 *
 * A command describes its options in a table; opt_parse fills the targets
 * and collects the positional arguments. Errors name the option and go to
 * stderr as "toolgate: CMD: ...".
 */
#ifndef TOOLGATE_CLI_OPTIONS_H
#define TOOLGATE_CLI_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

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

#endif
