/*
 * spinner.c — see spinner.h. One uv_timer redraws the line every 100 ms;
 * the line never wraps (it is cut to the terminal's width) so "\r" plus
 * "erase to end of line" always clears it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "spinner.h"

#define FIRST_DRAW_MS 200
#define REDRAW_MS 100
#define LINE_MAX_BYTES 512

struct cli_spinner {
  uv_timer_t timer;          /* timer.data points back here */
  char tool[64];
  char line[LINE_MAX_BYTES]; /* printable, one line */
  uint64_t start;            /* uv_now when the tool started; 0: not yet */
  unsigned frame;
  int drawn;                 /* our line is on the screen */
  int utf8;                  /* the terminal takes UTF-8 frames */
};

static const char *const UTF8_FRAMES[] = {"⠋", "⠙", "⠹", "⠸", "⠼",
                                          "⠴", "⠦", "⠧", "⠇", "⠏"};
static const char *const ASCII_FRAMES[] = {"|", "/", "-", "\\"};

static int locale_is_utf8(void) {
  const char *vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
  for (size_t i = 0; i < 3; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) return strstr(v, "UTF-8") || strstr(v, "utf8") ||
                        strstr(v, "UTF8") || strstr(v, "utf-8");
  }
  return 0;
}

static int term_columns(void) {
  struct winsize ws;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
    return ws.ws_col;
  return 80;
}

/* Appends at most `cols` columns of s to out (room for LINE_MAX_BYTES):
 * UTF-8 sequences count one column each and are never split. */
static size_t fit(char *out, size_t o, const char *s, int cols) {
  for (size_t i = 0; s[i] && cols > 0;) {
    size_t k = 1;
    while (((unsigned char)s[i + k] & 0xC0) == 0x80) k++;
    if (o + k >= LINE_MAX_BYTES) break;
    memcpy(out + o, s + i, k);
    o += k;
    i += k;
    cols--;
  }
  out[o] = '\0';
  return o;
}

static void draw(cli_spinner *s) {
  char buf[LINE_MAX_BYTES + 64], head[128];
  double secs = (double)(uv_now(s->timer.loop) - s->start) / 1000.0;
  const char *frame = s->utf8 ? UTF8_FRAMES[s->frame % 10]
                              : ASCII_FRAMES[s->frame % 4];
  s->frame++;
  int n = snprintf(head, sizeof head, "%s %s %.1fs", frame, s->tool, secs);
  int cols = term_columns() - 1 - (n > 0 ? n : 0); /* never the last column */
  size_t o = 0;
  if (*s->line && cols > 4) {
    buf[o++] = ' ';
    buf[o++] = ' ';
    o = fit(buf, o, s->line, cols - 2);
  }
  buf[o] = '\0';
  fprintf(stderr, "\r\033[K%s\033[2m%s\033[0m", head, buf);
  fflush(stderr);
  s->drawn = 1;
}

static void tick_cb(uv_timer_t *t) { draw(t->data); }

cli_spinner *cli_spinner_new(uv_loop_t *loop, const char *tool) {
  if (!isatty(STDERR_FILENO)) return NULL;
  cli_spinner *s = calloc(1, sizeof *s);
  if (!s) return NULL; /* no spinner is no failure */
  if (uv_timer_init(loop, &s->timer) < 0) {
    free(s);
    return NULL;
  }
  s->timer.data = s;
  uv_unref((uv_handle_t *)&s->timer); /* it must not keep the loop alive */
  snprintf(s->tool, sizeof s->tool, "%s", tool ? tool : "");
  s->utf8 = locale_is_utf8();
  return s;
}

void cli_spinner_start(cli_spinner *s) {
  if (!s || uv_is_active((uv_handle_t *)&s->timer)) return;
  uv_update_time(s->timer.loop);
  if (!s->start) s->start = uv_now(s->timer.loop);
  uv_timer_start(&s->timer, tick_cb, FIRST_DRAW_MS, REDRAW_MS);
}

/* Keeps what a terminal shows as one line: control characters become
 * spaces and escape sequences (colours, cursor moves) are dropped. */
void cli_spinner_set_line(cli_spinner *s, const char *line) {
  if (!s || !line) return;
  size_t o = 0;
  for (size_t i = 0; line[i] && o < sizeof s->line - 1; i++) {
    unsigned char c = (unsigned char)line[i];
    if (c == 0x1B) { /* ESC [ params letter, or ESC and one byte */
      if (line[i + 1] == '[') {
        i += 2;
        while (line[i] && !(line[i] >= '@' && line[i] <= '~')) i++;
      } else if (line[i + 1]) {
        i++;
      }
      if (!line[i]) break;
      continue;
    }
    s->line[o++] = c < 0x20 || c == 0x7F ? ' ' : (char)c;
  }
  s->line[o] = '\0';
}

void cli_spinner_clear(cli_spinner *s) {
  if (!s || !s->drawn) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  s->drawn = 0;
}

void cli_spinner_stop(cli_spinner *s) {
  if (!s) return;
  uv_timer_stop(&s->timer);
  if (s->drawn) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
    s->drawn = 0;
  }
}

static void closed_cb(uv_handle_t *h) { free(h->data); }

void cli_spinner_close(cli_spinner *s) {
  if (!s) return;
  cli_spinner_stop(s);
  uv_close((uv_handle_t *)&s->timer, closed_cb);
}
