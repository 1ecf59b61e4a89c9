/*
 * output.c — messages, colour and the readable outcome of `toolgate call`.
 * The human rendering reads the same JSON that --json prints, so the two
 * can never disagree.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "output.h"
#include "kit.h"

#define LABEL_WIDTH 10

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("toolgate: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int cli_color_wanted(FILE *f) {
  const char *no = getenv("NO_COLOR");
  return isatty(fileno(f)) && !(no && *no);
}

void cli_sgr(FILE *f, int color, const char *code) {
  if (color) fprintf(f, "\033[%sm", code);
}

/* tg_json_print, not cJSON_Print: numbers that read back exactly
 * (9007199254740991, not 9.00719925474099e+15) and valid UTF-8 only. */
void cli_print_json_line(FILE *f, const cJSON *v) {
  char *s = tg_json_print(v, 0);
  if (!s) return;
  fputs(s, f);
  fputc('\n', f);
  free(s);
}

static void label(FILE *f, int color, const char *name) {
  cli_sgr(f, color, "2");
  fprintf(f, "%-*s", LABEL_WIDTH, name);
  cli_sgr(f, color, "0");
}

static const char *status_color(const char *status) {
  if (strcmp(status, "ok") == 0) return "32";
  if (strcmp(status, "error") == 0 || strcmp(status, "denied") == 0)
    return "31";
  return "33"; /* rejected, cancelled, timeout: nothing broke */
}

static const char *text_of(const cJSON *obj, const char *key) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));
  return s ? s : "";
}

static void print_status(FILE *f, const cJSON *o, int color) {
  const char *status = text_of(o, "status");
  label(f, color, "status");
  cli_sgr(f, color, "1");
  cli_sgr(f, color, status_color(status));
  fputs(status, f);
  cli_sgr(f, color, "0");
  fprintf(f, "  %s (%s)\n", text_of(o, "tool"), text_of(o, "id"));
}

/* A value that fits on a line goes after the label; a longer one below it,
 * unindented, so it can be copied as it is. */
static void print_result(FILE *f, const cJSON *o, int color) {
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "result");
  int ok = strcmp(text_of(o, "status"), "ok") == 0;
  if (!r || cJSON_IsNull(r)) {
    if (ok) {
      label(f, color, "result");
      fputs("(none)\n", f);
    }
    return;
  }
  char *s = cJSON_IsString(r) ? NULL : tg_json_print(r, 1);
  const char *text = s ? s : r->valuestring;
  if (!text) return; /* out of memory */
  const char *name = ok ? "result" : "partial";
  if (strchr(text, '\n')) {
    cli_sgr(f, color, "2");
    fputs(name, f);
    cli_sgr(f, color, "0");
    fputc('\n', f);
  } else {
    label(f, color, name);
  }
  fputs(text, f);
  if (!*text || text[strlen(text) - 1] != '\n') fputc('\n', f);
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "truncated")))
    fprintf(f, "%*s(cut by the tool's result limit)\n", LABEL_WIDTH, "");
  free(s);
}

static void print_error(FILE *f, const cJSON *o, int color) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
  if (!cJSON_IsObject(e)) return;
  label(f, color, "error");
  cli_sgr(f, color, "1");
  fprintf(f, "%s %s", text_of(e, "phase"), text_of(e, "code"));
  cli_sgr(f, color, "0");
  fprintf(f, ": %s\n", text_of(e, "message"));
  const char *sugg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "suggestion"));
  if (sugg) fprintf(f, "%*ssuggestion: %s\n", LABEL_WIDTH, "", sugg);
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "retryable")))
    fprintf(f, "%*s(retryable)\n", LABEL_WIDTH, "");
}

static void print_decision(FILE *f, const cJSON *o, int color) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "decision");
  const char *rule = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "rule"));
  const char *code = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "error"), "code"));
  const char *word = tg_decision_word(text_of(d, "verdict"), code);
  label(f, color, "decision");
  fputs(word, f);
  if (rule && !strcmp(word, "error"))
    fprintf(f, ": rule '%s' failed closed (the call is denied)\n", rule);
  else if (rule) fprintf(f, " by rule '%s'\n", rule);
  else fputs(" (default, no rule answered)\n", f);
}

static void print_attempts(FILE *f, const cJSON *o, int color) {
  /* printed as the double it is, not cast (see explain_cmd.c) */
  double attempts = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "attempts"));
  double ms = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "duration_ms"));
  label(f, color, "attempts");
  fprintf(f, "%.0f\n", attempts);
  label(f, color, "duration");
  if (ms < 10) fprintf(f, "%.2f ms\n", ms);
  else if (ms < 1000) fprintf(f, "%.1f ms\n", ms);
  else fprintf(f, "%.2f s\n", ms / 1000);
}

void cli_print_outcome(FILE *f, const cJSON *outcome, int color) {
  print_status(f, outcome, color);
  print_result(f, outcome, color);
  print_error(f, outcome, color);
  print_decision(f, outcome, color);
  print_attempts(f, outcome, color);
}
