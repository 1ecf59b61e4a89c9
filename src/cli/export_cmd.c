/*
 * export_cmd.c — `toolgate export SESSION` (JSON, Markdown or one HTML
 * page, to stdout or -o FILE) and `toolgate import FILE` (a JSON export
 * back into the database: all of it or nothing, a new id when the
 * session's is taken, what was not read reported).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "kit/kit.h"
#include "commands.h"
#include "kit/options.h"
#include "kit/output.h"

const char cmd_export_usage[] =
    "usage: toolgate export SESSION [options]\n"
    "\n"
    "Writes a session — its messages and its tool calls with their\n"
    "decision, rule, status, error and duration — as one document.\n"
    "\n"
    "options:\n"
    DB_PATH_USAGE
    "  --format F          json (default: lossless, for toolgate import),\n"
    "                      markdown, or html (one page, no script)\n"
    "  -o FILE, --output FILE\n"
    "                      write to FILE (made 0600) instead of stdout\n"
    "\n"
    "exit status: 0 written; 2 usage error, no such session, or the\n"
    "database or FILE cannot be used.\n";

const char cmd_import_usage[] =
    "usage: toolgate import FILE [options]\n"
    "\n"
    "Stores the session of a JSON export (toolgate export --format json):\n"
    "all of it in one transaction, or nothing. When the database has a\n"
    "session with its id already, it is stored under a new one. Prints the\n"
    "id, what was stored, and what was not read (unknown keys).\n"
    "\n"
    "options:\n"
    DB_PATH_USAGE
    "  --json              the report as one JSON object\n"
    "\n"
    "exit status: 0 stored; 2 usage error, a file that is not an export\n"
    "(the place and the problem are named), or the database cannot be\n"
    "used.\n";

static int parse_format(const char *s, tg_export_format *out) {
  if (!s || !strcmp(s, "json")) *out = TG_EXPORT_JSON;
  else if (!strcmp(s, "markdown") || !strcmp(s, "md")) *out = TG_EXPORT_MARKDOWN;
  else if (!strcmp(s, "html")) *out = TG_EXPORT_HTML;
  else {
    cli_error("export: option '--format' takes json, markdown or html, not "
              "'%s'", s);
    return -1;
  }
  return 0;
}

static int write_out(const char *path, const char *text) {
  size_t n = strlen(text);
  if (!path) {
    if (fwrite(text, 1, n, stdout) != n || fflush(stdout) != 0) {
      cli_error("export: writing to stdout: %s", strerror(errno));
      return -1;
    }
    return 0;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                0600);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    cli_error("export: %s: %s", path, fd < 0 ? strerror(errno)
                                             : "not a regular file");
    if (fd >= 0) close(fd);
    return -1;
  }
  const char *p = text;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      cli_error("export: writing %s: %s", path, strerror(errno));
      close(fd);
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  if (close(fd) < 0) {
    cli_error("export: writing %s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

int cmd_export(int argc, char **argv) {
  static const char *const names[] = {"SESSION"};
  const char *db = NULL, *format = NULL, *out = NULL, *pos[1] = {NULL};
  const opt_spec specs[] = {
      {"--db", OPT_VALUE, NULL, &db},
      {"--format", OPT_VALUE, NULL, &format},
      {"--output", OPT_VALUE, NULL, &out},
      {"-o", OPT_VALUE, NULL, &out},
  };
  const opt_parser p = {"export", specs, sizeof specs / sizeof *specs, pos,
                        1, 1, names, "export SESSION [options]"};
  int npos, rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_export_usage, stdout);
    return CLI_EXIT_OK;
  }
  tg_export_format fmt;
  if (rc != OPT_PARSE_OK || db_path_check("export", db) < 0 ||
      parse_format(format, &fmt) < 0)
    return CLI_EXIT_USAGE;
  if (out && !*out) {
    cli_error("export: option '-o' needs a file name");
    return CLI_EXIT_USAGE;
  }
  char err[TG_ERRMSG] = "";
  tg_store *st = tg_store_open(db, 0, err);
  char *text = st ? tg_store_export(st, pos[0], fmt, err) : NULL;
  tg_store_close(st);
  if (!text) {
    cli_error("export: %s", err);
    return CLI_EXIT_USAGE;
  }
  rc = write_out(out, text);
  free(text);
  return rc < 0 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

/* The whole regular file at path (at most TG_IMPORT_MAX bytes). */
static char *read_all(const char *path, size_t *len) {
  /* stat first (a device is never opened), then O_NONBLOCK and fstat (a
   * FIFO swapped in is refused, not waited on) */
  struct stat sb;
  int fd = stat(path, &sb) < 0 ? -1
           : !S_ISREG(sb.st_mode) ? -2
                                  : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd == -2) {
    cli_error("import: %s: %s", path, S_ISFIFO(sb.st_mode)
                                          ? "a FIFO, not a regular file"
                                          : "not a regular file");
    return NULL;
  }
  if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
    cli_error("import: %s: %s", path,
              fd < 0 ? strerror(errno)
                     : S_ISFIFO(sb.st_mode) ? "a FIFO, not a regular file"
                                            : "not a regular file");
    if (fd >= 0) close(fd);
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) break;
    if (n == cap) {
      if (cap > TG_IMPORT_MAX) {
        cli_error("import: %s: over %u bytes: not an export this toolgate "
                  "reads", path, TG_IMPORT_MAX);
        free(buf);
        buf = NULL;
        break;
      }
      char *b = realloc(buf, cap * 2);
      if (!b) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = b;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r < 0) {
      cli_error("import: reading %s: %s", path, strerror(errno));
      free(buf);
      buf = NULL;
      break;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  *len = n;
  return buf;
}

int cmd_import(int argc, char **argv) {
  static const char *const names[] = {"FILE"};
  const char *db = NULL, *pos[1] = {NULL};
  int json = 0;
  const opt_spec specs[] = {
      {"--db", OPT_VALUE, NULL, &db},
      {"--json", OPT_FLAG, &json, NULL},
  };
  const opt_parser p = {"import", specs, sizeof specs / sizeof *specs, pos,
                        1, 1, names, "import FILE [options]"};
  int npos, rc = opt_parse(&p, argc, argv, &npos);
  if (rc == OPT_PARSE_HELP) {
    fputs(cmd_import_usage, stdout);
    return CLI_EXIT_OK;
  }
  if (rc != OPT_PARSE_OK || db_path_check("import", db) < 0)
    return CLI_EXIT_USAGE;
  size_t len = 0;
  char *text = read_all(pos[0], &len);
  if (!text) return CLI_EXIT_USAGE;
  char err[TG_ERRMSG] = "";
  tg_import_report rep;
  memset(&rep, 0, sizeof rep);
  tg_store *st = tg_store_open(db, 1, err);
  rc = st ? tg_store_import(st, text, len, &rep, err) : -1;
  tg_store_close(st);
  free(text);
  if (rc < 0) {
    cli_error("import: %s: %s (nothing was stored)", pos[0], err);
    return CLI_EXIT_USAGE;
  }
  if (json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "session", rep.session);
    cJSON_AddBoolToObject(o, "renamed", rep.renamed);
    cJSON_AddNumberToObject(o, "messages", (double)rep.messages);
    cJSON_AddNumberToObject(o, "calls", (double)rep.calls);
    cJSON_AddItemToObject(o, "skipped", rep.skipped);
    rep.skipped = NULL;
    cli_print_json_line(stdout, o);
    cJSON_Delete(o);
  } else {
    printf("imported session %s%s: %lld messages, %lld calls\n", rep.session,
           rep.renamed ? " (a new id: the database had the file's)" : "",
           (long long)rep.messages, (long long)rep.calls);
    const cJSON *s;
    cJSON_ArrayForEach(s, rep.skipped) printf("skipped %s\n", s->valuestring);
  }
  cJSON_Delete(rep.skipped);
  return CLI_EXIT_OK;
}
