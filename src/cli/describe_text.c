/*
 * describe_text.c — renders the description of a policy generation as
 * aligned sections. Every section is printed, "(none)" when empty, so a
 * reader sees at a glance that nothing is registered rather than wonder.
 */
#include <string.h>
#include "describe_text.h"
#include "kit/output.h"
#include "kit/kit.h"

static const char *str(const cJSON *o, const char *key, const char *dflt) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
  return s ? s : dflt;
}

static double num(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* The number as JSON writes it (%g would print priority 1234567 as
 * 1.23457e+06). */
static const char *num_text(const cJSON *o, const char *key,
                            char buf[TG_JSON_NUMBER_MAX]) {
  return tg_json_number_text(num(o, key), buf);
}

/* The widest value of `key` among the objects of `arr`, and at least
 * `min` (a column heading's width), for alignment. */
static int width_of(const cJSON *arr, const char *key, int min) {
  const cJSON *it;
  int w = min;
  cJSON_ArrayForEach(it, arr) {
    int n = (int)strlen(str(it, key, ""));
    if (n > w) w = n;
  }
  return w;
}

/* A heading; returns 1 when the section has items to list. */
static int heading(FILE *f, int color, const char *title, const cJSON *arr) {
  cli_sgr(f, color, "1");
  fputs(title, f);
  cli_sgr(f, color, "0");
  fputc('\n', f);
  if (cJSON_GetArraySize(arr) > 0) return 1;
  fputs("  (none)\n", f);
  return 0;
}

static void print_files(FILE *f, const cJSON *d, int color) {
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(d, "files"), *it;
  if (!heading(f, color, "files, in load order", files)) return;
  cJSON_ArrayForEach(it, files)
    fprintf(f, "  %s\n", cJSON_IsString(it) ? it->valuestring : "?");
}

/* ["a", "b"] as "a,b" ("*" when empty), cut to fit buf. */
static const char *join_names(const cJSON *arr, char *buf, size_t size) {
  const cJSON *it;
  size_t len = 0;
  buf[0] = '\0';
  cJSON_ArrayForEach(it, arr) {
    int n = snprintf(buf + len, size - len, "%s%s", len ? "," : "",
                     cJSON_IsString(it) ? it->valuestring : "?");
    if (n < 0 || (size_t)n >= size - len) break;
    len += (size_t)n;
  }
  return len ? buf : "*";
}

static int tools_width(const cJSON *rules) {
  const cJSON *r;
  char buf[256];
  int w = (int)strlen("tools");
  cJSON_ArrayForEach(r, rules) {
    int n = (int)strlen(join_names(cJSON_GetObjectItemCaseSensitive(r, "tools"), buf,
                                   sizeof buf));
    if (n > w) w = n;
  }
  return w;
}

static void print_rules(FILE *f, const cJSON *d, int color) {
  const cJSON *rules = cJSON_GetObjectItemCaseSensitive(d, "rules"), *r;
  char buf[256];
  if (!heading(f, color, "rules, in evaluation order", rules)) return;
  int wname = width_of(rules, "name", (int)strlen("name"));
  int wtools = tools_width(rules);
  fprintf(f, "  %6s  %-*s  %-*s  %-6s  %s\n", "prio", wname, "name", wtools,
          "tools", "fail", "where");
  cJSON_ArrayForEach(r, rules) {
    char prio[TG_JSON_NUMBER_MAX];
    fprintf(f, "  %6s  %-*s  %-*s  %-6s  %s\n", num_text(r, "priority", prio),
            wname,
            str(r, "name", "?"), wtools,
            join_names(cJSON_GetObjectItemCaseSensitive(r, "tools"), buf, sizeof buf),
            str(r, "fail", "closed"), str(r, "where", ""));
  }
}

static void print_hooks(FILE *f, const cJSON *hooks, const char *which,
                        const char *title, int color) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(hooks, which), *h;
  if (!heading(f, color, title, arr)) return;
  int w = width_of(arr, "tool", 1);
  cJSON_ArrayForEach(h, arr)
    fprintf(f, "  %-*s  %s\n", w, str(h, "tool", "?"), str(h, "where", ""));
}

static void print_tool(FILE *f, const cJSON *t, int w) {
  char n[TG_JSON_NUMBER_MAX];
  fprintf(f, "  %-*s  %-9s", w, str(t, "name", "?"),
          cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "read_only")) ? "read-only"
                                                            : "writes");
  if (num(t, "timeout_ms") > 0)
    fprintf(f, "  timeout=%sms", num_text(t, "timeout_ms", n));
  if (num(t, "retry_attempts") > 0)
    fprintf(f, "  retry=%s", num_text(t, "retry_attempts", n));
  if (num(t, "max_result_bytes") > 0)
    fprintf(f, "  max_result=%sB", num_text(t, "max_result_bytes", n));
  if (cJSON_GetObjectItemCaseSensitive(t, "schema")) fputs("  schema", f);
  fprintf(f, "  %s\n", str(t, "where", ""));
  const char *desc = str(t, "description", NULL);
  if (desc) fprintf(f, "  %-*s  %s\n", w, "", desc);
}

static void print_tools(FILE *f, const cJSON *d, int color) {
  const cJSON *tools = cJSON_GetObjectItemCaseSensitive(d, "tools"), *t;
  if (!heading(f, color, "tools", tools)) return;
  int w = width_of(tools, "name", 1);
  cJSON_ArrayForEach(t, tools) print_tool(f, t, w);
}

static void print_handlers(FILE *f, const cJSON *d, int color) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(d, "event_handlers"), *h;
  if (!heading(f, color, "event handlers", arr)) return;
  int w = width_of(arr, "type", 1);
  cJSON_ArrayForEach(h, arr)
    fprintf(f, "  %-*s  %s\n", w, str(h, "type", "*"), str(h, "where", ""));
}

/* tg.list_tools hooks: a section only when a policy has one. */
static void print_list_tools(FILE *f, const cJSON *d, int color) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(d, "list_tools"), *h;
  if (cJSON_GetArraySize(arr) == 0) return;
  heading(f, color, "tool list hooks (tg.list_tools), in run order", arr);
  cJSON_ArrayForEach(h, arr) fprintf(f, "  %s\n", str(h, "where", ""));
}

/* The chat side: listed only when the policies use it. */
static void print_wheres(FILE *f, const cJSON *chat, const char *key,
                         const char *title, int color) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(chat, key), *w;
  if (!cJSON_GetArraySize(arr)) return;
  heading(f, color, title, arr);
  cJSON_ArrayForEach(w, arr)
    fprintf(f, "  %s\n", cJSON_IsString(w) ? w->valuestring : "?");
}

static void print_chat(FILE *f, const cJSON *d, int color) {
  const cJSON *chat = cJSON_GetObjectItemCaseSensitive(d, "chat"), *b;
  print_wheres(f, chat, "before_chat", "before-chat layers, in run order", color);
  print_wheres(f, chat, "after_chat", "after-chat layers, in run order", color);
  print_wheres(f, chat, "route_model", "routing hooks, in run order", color);
  const cJSON *budgets = cJSON_GetObjectItemCaseSensitive(chat, "budgets");
  if (!cJSON_GetArraySize(budgets)) return;
  heading(f, color, "budgets", budgets);
  int w = width_of(budgets, "name", 1);
  cJSON_ArrayForEach(b, budgets) {
    char lim[TG_JSON_NUMBER_MAX];
    int tokens = !strcmp(str(b, "unit", "cost"), "tokens");
    fprintf(f, "  %-*s  %s%s per %s  %s\n", w, str(b, "name", "?"),
            num_text(b, "limit", lim), tokens ? " tokens" : "",
            str(b, "period", "?"), str(b, "where", ""));
  }
}

/* The agents' tool names the policies write, and what toolgate judges
 * them as ("Bash  exec (claude-code, codex)"): a section only when they
 * write one. */
static void print_agent_names(FILE *f, const cJSON *d, int color) {
  const cJSON *names = cJSON_GetObjectItemCaseSensitive(d, "agent_names"), *n, *t, *a;
  if (!cJSON_GetArraySize(names)) return;
  heading(f, color, "agents' tool names, and the toolgate tool each is", names);
  int w = 0;
  cJSON_ArrayForEach(n, names) {
    int len = n->string ? (int)strlen(n->string) : 0;
    if (len > w) w = len;
  }
  cJSON_ArrayForEach(n, names) {
    fprintf(f, "  %-*s ", w, n->string ? n->string : "?");
    cJSON_ArrayForEach(t, n) {
      fprintf(f, " %s (", t->string ? t->string : "?");
      cJSON_ArrayForEach(a, t)
        fprintf(f, "%s%s", a == t->child ? "" : ", ",
                cJSON_IsString(a) ? a->valuestring : "?");
      fputc(')', f);
    }
    fputc('\n', f);
  }
}

static void print_warnings(FILE *f, const cJSON *d, int color) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(d, "warnings"), *w;
  if (!heading(f, color, "warnings", arr)) return;
  cJSON_ArrayForEach(w, arr)
    fprintf(f, "  %s\n", cJSON_IsString(w) ? w->valuestring : "?");
}

void describe_print(FILE *f, const cJSON *d, const char *dir, int color) {
  const cJSON *hooks = cJSON_GetObjectItemCaseSensitive(d, "hooks");
  char gen[TG_JSON_NUMBER_MAX];
  fprintf(f, "%s/: generation %s, loaded without errors\n", dir,
          num_text(d, "generation", gen));
  print_files(f, d, color);
  print_rules(f, d, color);
  print_hooks(f, hooks, "before", "before-tool hooks, in run order", color);
  print_hooks(f, hooks, "after", "after-tool hooks, in run order", color);
  print_tools(f, d, color);
  print_handlers(f, d, color);
  print_list_tools(f, d, color);

  print_chat(f, d, color);
  print_agent_names(f, d, color);
  print_warnings(f, d, color);
}
