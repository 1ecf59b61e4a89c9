/*
 * render.c — a session's export document (export.c) for people: Markdown
 * (reads as plain text in a terminal, renders on a forge: the values of
 * the calls in code blocks and table cells escaped) and one HTML page
 * (inline CSS, no script, no external asset; every value HTML-escaped).
 * Written with open_memstream: the text grows as needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "store.h"
#include "base/json.h"

static const char *str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* ms since the epoch as "2025-06-01 14:30:00 UTC" (UTC: the same page
 * wherever it is made). */
static const char *when(double ms, char buf[32]) {
  time_t t = (time_t)(ms / 1000);
  struct tm tm;
  if (ms <= 0 || !gmtime_r(&t, &tm)) return "-";
  strftime(buf, 32, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

/* A JSON member as text (strings as they are; absent: NULL). malloc'd. */
static char *value_text(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!v || cJSON_IsNull(v)) return NULL;
  if (cJSON_IsString(v)) return strdup(v->valuestring);
  return tg_json_print(v, 1);
}

/* ---- an agent's call -------------------------------------------------------- */

/* The verdict, or why there is none: "left to the agent" (toolgate said
 * nothing; the agent's own permissions decided), "-" (seen after the
 * agent ran it). */
static const char *verdict_of(const cJSON *d) {
  const char *v = str(d, "verdict"), *by = str(d, "by");
  if (v) return v;
  return by && !strcmp(by, "agent") ? "left to the agent" : "-";
}

/* Who decided: "rule NAME", "toolgate's default", "left to the agent",
 * or the word kept ("remembered", "pre-hook", "fail-safe", ...). */
static const char *decider(const cJSON *d, char buf[160]) {
  const char *by = str(d, "by");
  if (!by) return "-";
  if (!strcmp(by, "rule")) {
    snprintf(buf, 160, "rule %.120s", str(d, "rule") ? str(d, "rule") : "?");
    return buf;
  }
  if (!strcmp(by, "default")) return "toolgate's default";
  if (!strcmp(by, "agent")) return "left to the agent";
  return by;
}

/* "claude-code PreToolUse, Bash" and what came of it: the answer the
 * agent read, and whether it ran (its PostToolUse) or which judged
 * call it follows. "-" for a call that is not an agent's. */
static const char *agent_line(const cJSON *k, char buf[512]) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(k, "agent");
  if (!a) return "-";
  const cJSON *ran = cJSON_GetObjectItemCaseSensitive(a, "ran");
  int n = snprintf(buf, 512, "%.64s %.32s, %.100s; told: %.16s",
                   str(a, "name") ? str(a, "name") : "?",
                   str(a, "event") ? str(a, "event") : "?",
                   str(a, "tool") ? str(a, "tool") : "?",
                   str(a, "answer") ? str(a, "answer") : "nothing");
  if (n < 0 || n >= 512) return buf;
  if (ran)
    snprintf(buf + n, 512 - (size_t)n, "; ran: %.16s (%.64s)",
             str(ran, "ended") ? str(ran, "ended") : "?",
             str(ran, "call_id") ? str(ran, "call_id") : "?");
  else if (str(a, "judged_call"))
    snprintf(buf + n, 512 - (size_t)n, "; judged as %.64s",
             str(a, "judged_call"));
  return buf;
}

/* Closes f; its text (set by fclose, not before), or NULL. */
static char *finish(FILE *f, char **buf) {
  if (fclose(f) != 0) {
    free(*buf);
    return NULL;
  }
  return *buf;
}

/* ---- Markdown ----------------------------------------------------------- */

/* A fenced block longer than any run of backticks in s. */
static void md_code(FILE *f, const char *lang, const char *s) {
  int run = 0, longest = 0;
  for (const char *p = s; *p; p++) {
    run = *p == '`' ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  int n = longest < 3 ? 3 : longest + 1;
  for (int i = 0; i < n; i++) fputc('`', f);
  fprintf(f, "%s\n%s\n", lang, s);
  for (int i = 0; i < n; i++) fputc('`', f);
  fputs("\n\n", f);
}

/* Inline text: one line, Markdown's marks escaped, control characters as
 * spaces. */
static void md_text(FILE *f, const char *s) {
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (strchr("|\\`<>*_[]#", c) && c) fputc('\\', f), fputc(c, f);
    else fputc(c < 0x20 || c == 0x7f ? ' ' : c, f);
  }
}

static void md_cell(FILE *f, const char *s) {
  fputc(' ', f);
  md_text(f, s && *s ? s : "-");
  fputs(" |", f);
}

static void md_calls(FILE *f, const cJSON *calls) {
  char t[32], ms[32], by[160], ag[512];
  fputs("## Tool calls\n\n| time | tool | decision | decided by | status | "
        "error | ms |\n|---|---|---|---|---|---|---:|\n", f);
  const cJSON *k;
  cJSON_ArrayForEach(k, calls) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(k, "decision");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(k, "error");
    fputc('|', f);
    md_cell(f, when(num(k, "ts"), t));
    md_cell(f, str(k, "tool"));
    md_cell(f, verdict_of(d));
    md_cell(f, decider(d, by));
    md_cell(f, str(k, "status"));
    md_cell(f, str(e, "code"));
    snprintf(ms, sizeof ms, "%.1f", num(k, "duration_ms"));
    md_cell(f, ms);
    fputc('\n', f);
  }
  fputc('\n', f);
  cJSON_ArrayForEach(k, calls) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(k, "error");
    fputs("### ", f);
    md_text(f, str(k, "tool"));
    fputs(" (", f);
    md_text(f, str(k, "call_id"));
    fputs(")\n\n", f);
    if (cJSON_GetObjectItemCaseSensitive(k, "agent")) {
      fputs("Agent: ", f);
      md_text(f, agent_line(k, ag));
      fputs("\n\n", f);
      char *in = value_text(cJSON_GetObjectItemCaseSensitive(k, "agent"),
                            "input");
      if (in) fputs("The agent's input:\n\n", f), md_code(f, "json", in);
      free(in);
    }
    char *a = value_text(k, "args"), *r = value_text(k, "result");
    if (a) fputs("Args:\n\n", f), md_code(f, "json", a);
    if (r) fputs("Result:\n\n", f), md_code(f, "json", r);
    if (str(e, "message"))
      fputs("Error:\n\n", f), md_code(f, "", str(e, "message"));
    free(a);
    free(r);
  }
}

/* When and why the session became sensitive (the document's taint), in
 * words, into buf; NULL when it is clean. */
static const char *taint_text(const cJSON *doc, char *buf, size_t len) {
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(doc, "taint");
  if (!cJSON_IsObject(k)) return NULL;
  char t[32], cause[600] = "";
  if (str(k, "call") || str(k, "tool"))
    snprintf(cause, sizeof cause, " (%s%s%s%s)", str(k, "call") ? "call " : "",
             str(k, "call") ? str(k, "call") : "",
             str(k, "call") && str(k, "tool") ? ", " : "",
             str(k, "tool") ? str(k, "tool") : "");
  snprintf(buf, len, "since %s, level %.0f: %s%s; its network calls are "
           "refused until a person clears it", when(num(k, "at"), t),
           num(k, "level"), str(k, "reason") ? str(k, "reason") : "", cause);
  return buf;
}

char *tg__render_markdown(const cJSON *doc) {
  char *buf = NULL, t[32];
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "session");
  const char *title = str(s, "title");
  fputs("# ", f);
  md_text(f, title ? title : str(s, "id"));
  fputs("\n\n- Session: ", f);
  md_text(f, str(s, "id"));
  fputs("\n- Project: ", f);
  md_text(f, str(s, "project") ? str(s, "project") : "-");
  if (str(s, "agent")) { /* recorded by a coding agent's hooks */
    fputs("\n- Agent: ", f);
    md_text(f, str(s, "agent"));
    double n = num(s, "turn");
    fprintf(f, " (%.0f prompt%s)", n, n == 1 ? "" : "s");
  }
  fprintf(f, "\n- Started: %s\n", when(num(s, "started"), t));
  fprintf(f, "- Ended: %s\n", when(num(s, "ended"), t));
  char sens[1400];
  if (taint_text(doc, sens, sizeof sens)) {
    fputs("- Sensitive: ", f);
    md_text(f, sens);
    fputs("\n", f);
  }
  fputs("\n## Conversation\n\n", f);
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(doc, "messages")) {
    fputs("**", f);
    md_text(f, str(m, "role"));
    fprintf(f, "** · %s\n\n", when(num(m, "ts"), t));
    const char *c = str(m, "content");
    if (c) md_code(f, "text", c);
    char *calls = value_text(m, "tool_calls");
    if (calls) fputs("Tool calls asked for:\n\n", f), md_code(f, "json", calls);
    free(calls);
  }
  md_calls(f, cJSON_GetObjectItemCaseSensitive(doc, "calls"));
  return finish(f, &buf);
}

/* ---- HTML --------------------------------------------------------------- */

static void esc(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&#39;", f); break;
      default:
        fputc((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t' ? ' ' : *s,
              f);
    }
  }
}

static const char css[] =
    "body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem "
    "auto;padding:0 1rem;color:#1b1b1b;background:#fff}"
    "h1{font-size:1.6rem}dl.meta{display:grid;grid-template-columns:auto "
    "1fr;gap:.2rem 1rem}dt{color:#666}dd{margin:0}"
    ".msg{border-left:4px solid #ccc;padding:.3rem .8rem;margin:.8rem 0}"
    ".msg.user{border-color:#2b6cb0}.msg.assistant{border-color:#2f855a}"
    ".msg.tool{border-color:#b7791f}.msg.system{border-color:#718096}"
    ".role{font-weight:600}.ts{color:#777;font-size:.85em}"
    "pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;"
    "padding:.5rem;border-radius:4px;margin:.3rem 0}"
    "table{border-collapse:collapse;width:100%;font-size:.9em}"
    "th,td{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;"
    "vertical-align:top}th{background:#f0f0f0}"
    ".ok{color:#2f855a}.error,.denied,.rejected{color:#c53030}"
    ".timeout,.cancelled{color:#b7791f}td.num{text-align:right}";

static void html_pre(FILE *f, const char *label, const char *s) {
  if (!s) return;
  fprintf(f, "<div><span class=\"ts\">%s</span><pre>", label);
  esc(f, s);
  fputs("</pre></div>", f);
}

static void html_td(FILE *f, const char *cls, const char *s) {
  fprintf(f, "<td class=\"%s\">", cls);
  esc(f, s && *s ? s : "-");
  fputs("</td>", f);
}

static void html_calls(FILE *f, const cJSON *calls) {
  char t[32], ms[32], by[160], ag[512];
  fputs("<h2>Tool calls</h2>\n<table>\n<tr><th>time</th><th>tool</th>"
        "<th>call</th><th>decision</th><th>decided by</th><th>status</th>"
        "<th>error</th><th>ms</th></tr>\n", f);
  const cJSON *k;
  cJSON_ArrayForEach(k, calls) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(k, "decision");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(k, "error");
    const char *st = str(k, "status");
    fputs("<tr class=\"call\">", f);
    html_td(f, "ts", when(num(k, "ts"), t));
    html_td(f, "tool", str(k, "tool"));
    html_td(f, "id", str(k, "call_id"));
    html_td(f, "verdict", verdict_of(d));
    html_td(f, "rule", decider(d, by));
    /* the class is one of the known statuses, or none */
    fprintf(f, "<td class=\"status %s\">", st && strspn(st, "abcdefghijklmnopqrstuvwxyz") == strlen(st) ? st : "");
    esc(f, st ? st : "-");
    fputs("</td>", f);
    fputs(str(e, "code") ? "<td class=\"error\">" : "<td>", f);
    esc(f, str(e, "code") ? str(e, "code") : "-");
    if (str(e, "message")) fputs(": ", f), esc(f, str(e, "message"));
    fputs("</td>", f);
    snprintf(ms, sizeof ms, "%.1f", num(k, "duration_ms"));
    html_td(f, "num", ms);
    fputs("</tr>\n<tr><td colspan=\"8\">", f);
    char *a = value_text(k, "args"), *r = value_text(k, "result");
    const cJSON *agent = cJSON_GetObjectItemCaseSensitive(k, "agent");
    if (agent) {
      char *in = value_text(agent, "input");
      html_pre(f, "agent", agent_line(k, ag));
      html_pre(f, "the agent's input", in);
      free(in);
    }
    html_pre(f, "args", a);
    html_pre(f, "result", r);
    free(a);
    free(r);
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n", f);
}

char *tg__render_html(const cJSON *doc) {
  char *buf = NULL, t[32];
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "session");
  const char *title = str(s, "title") ? str(s, "title") : str(s, "id");
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
        "'none'; style-src 'unsafe-inline'\"><title>", f);
  esc(f, title);
  fprintf(f, "</title><style>%s</style></head>\n<body>\n<h1>", css);
  esc(f, title);
  fputs("</h1>\n<dl class=\"meta\"><dt>session</dt><dd>", f);
  esc(f, str(s, "id"));
  fputs("</dd><dt>project</dt><dd>", f);
  esc(f, str(s, "project") ? str(s, "project") : "-");
  if (str(s, "agent")) {
    char prompts[48];
    double n = num(s, "turn");
    snprintf(prompts, sizeof prompts, " (%.0f prompt%s)", n, n == 1 ? "" : "s");
    fputs("</dd><dt>agent</dt><dd>", f);
    esc(f, str(s, "agent"));
    esc(f, prompts);
  }
  fputs("</dd><dt>started</dt><dd>", f);
  esc(f, when(num(s, "started"), t));
  fputs("</dd><dt>ended</dt><dd>", f);
  esc(f, when(num(s, "ended"), t));
  char sens[1400];
  if (taint_text(doc, sens, sizeof sens)) {
    fputs("</dd><dt>sensitive</dt><dd>", f);
    esc(f, sens);
  }
  fputs("</dd></dl>\n<h2>Conversation</h2>\n", f);
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(doc, "messages")) {
    const char *role = str(m, "role");
    /* roles are checked on the way in: one of four words */
    fprintf(f, "<div class=\"msg %s\"><span class=\"role\">",
            role && strspn(role, "abcdefghijklmnopqrstuvwxyz") == strlen(role)
                ? role : "");
    esc(f, role);
    fputs("</span> <span class=\"ts\">", f);
    esc(f, when(num(m, "ts"), t));
    fputs("</span>", f);
    if (str(m, "content")) {
      fputs("<pre class=\"content\">", f);
      esc(f, str(m, "content"));
      fputs("</pre>", f);
    }
    char *calls = value_text(m, "tool_calls");
    html_pre(f, "tool calls", calls);
    free(calls);
    fputs("</div>\n", f);
  }
  html_calls(f, cJSON_GetObjectItemCaseSensitive(doc, "calls"));
  fputs("</body></html>\n", f);
  return finish(f, &buf);
}
