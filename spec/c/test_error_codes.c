/*
 * test_error_codes.c — the one list of error codes (TG_ERROR_CODE_MAP in
 * include/toolgate.h): the functions made from it agree with each other,
 * docs/errors.md (the error codes table) says what the list says (same codes,
 * same order, same phases, same meaning once the table's backticks are
 * dropped), and a code the runtime emits is looked up in it.
 */
#include "helpers.h"
#include <ctype.h>
#include "toolgate.h"

static const char *const phase_names[] = {
#define PHASE_NAME(name) #name,
    TG_PHASE_MAP(PHASE_NAME)
#undef PHASE_NAME
};

TEST(the_functions_agree_with_the_list) {
  const char *const *all = tg_error_codes();
  ASSERT_TRUE(TG_E__COUNT > 1);
  ASSERT_TRUE(tg_error_code_name(TG_E_NONE) == NULL);
  ASSERT_TRUE(tg_error_code_doc(TG_E_NONE) == NULL);
  ASSERT_INT_EQ(tg_error_code_phases(TG_E_NONE), 0);
  ASSERT_TRUE(tg_error_code_name(TG_E__COUNT) == NULL);
  ASSERT_TRUE(tg_error_code_name((tg_error_code)-1) == NULL);
  ASSERT_INT_EQ(tg_error_code_of(NULL), TG_E_NONE);
  ASSERT_INT_EQ(tg_error_code_of(""), TG_E_NONE);
  ASSERT_INT_EQ(tg_error_code_of("FLAKY"), TG_E_NONE); /* a tool's own */
  ASSERT_INT_EQ(tg_error_code_of("unknown_tool"), TG_E_NONE);
  for (int i = TG_E_NONE + 1; i < TG_E__COUNT; i++) {
    tg_error_code c = (tg_error_code)i;
    const char *name = tg_error_code_name(c), *doc = tg_error_code_doc(c);
    ASSERT_TRUE(name && doc);
    ASSERT_STR_EQ(all[i - 1], name);
    ASSERT_INT_EQ(tg_error_code_of(name), c);
    for (const char *p = name; *p; p++)
      if (!isupper((unsigned char)*p) && *p != '_')
        TG_FAIL("code %s: names are UPPER_CASE", name);
    /* one line, and one cell of a markdown table */
    if (!*doc || strchr(doc, '\n') || strchr(doc, '|') || strchr(doc, '`'))
      TG_FAIL("code %s: its doc must be one line without | or `", name);
    unsigned ph = tg_error_code_phases(c);
    if (ph == 0 || (ph & TG_PHASE_BIT(NONE)) ||
        (ph >> TG_PHASE__COUNT) != 0)
      TG_FAIL("code %s: phases 0x%x are not a set of real phases", name, ph);
  }
  ASSERT_TRUE(all[TG_E__COUNT - 1] == NULL);
  ASSERT_STR_EQ(tg_error_code_name(TG_E_UNKNOWN_TOOL), "UNKNOWN_TOOL");
}

/* ---- the docs/errors.md table ------------------------------------------- */

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) TG_FAIL("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  ASSERT_TRUE(s && fread(s, 1, (size_t)n, f) == (size_t)n);
  s[n] = '\0';
  fclose(f);
  return s;
}

/* The n-th cell (from 0) of the table row `line` ("| a | b | c |"), without
 * backticks, into out; empty when the row has fewer cells. */
static void cell(const char *line, int n, char *out, size_t len) {
  const char *eol = strchr(line, '\n');
  if (!eol) eol = line + strlen(line);
  const char *s = line + 2; /* past "| " */
  for (; n > 0 && s < eol; n--) {
    const char *bar = strstr(s, " | ");
    s = bar && bar < eol ? bar + 3 : eol;
  }
  const char *end = strstr(s, " |");
  if (!end || end > eol) end = eol;
  size_t k = 0;
  for (; s < end && k + 1 < len; s++)
    if (*s != '`') out[k++] = *s;
  out[k] = '\0';
}

static unsigned phases_of(const char *cell, const char *code) {
  unsigned bits = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", cell);
  for (char *tok = strtok(buf, ", "); tok; tok = strtok(NULL, ", ")) {
    int found = -1;
    for (int p = 0; p < TG_PHASE__COUNT; p++)
      if (strcmp(phase_names[p], tok) == 0) found = p;
    if (found < 0) TG_FAIL("docs/errors.md, code %s: '%s' is not a phase", code, tok);
    bits |= 1u << found;
  }
  return bits;
}

TEST(the_docs_table_says_what_the_list_says) {
  char *readme = read_all(TG_SOURCE_DIR "/docs/errors.md");
  const char *head = "\n| code | phase | meaning |\n| --- | --- | --- |\n";
  const char *p = strstr(readme, head);
  if (!p) TG_FAIL("docs/errors.md has no table headed '| code | phase | meaning |'");
  ASSERT_TRUE(strstr(p + 1, head) == NULL); /* one table, not two to pick from */
  p += strlen(head);
  int i = TG_E_NONE + 1;
  for (; strncmp(p, "| ", 2) == 0; i++) {
    char code[64], phase[256], meaning[1024];
    cell(p, 0, code, sizeof code);
    cell(p, 1, phase, sizeof phase);
    cell(p, 2, meaning, sizeof meaning);
    p = strchr(p, '\n');
    p = p ? p + 1 : "";
    if (i >= TG_E__COUNT)
      TG_FAIL("docs/errors.md lists %s, which is not in TG_ERROR_CODE_MAP", code);
    tg_error_code c = (tg_error_code)i;
    if (strcmp(code, tg_error_code_name(c)) != 0)
      TG_FAIL("docs/errors.md row %d is %s; the list has %s there (same codes, same "
              "order)", i, code, tg_error_code_name(c));
    if (phases_of(phase, code) != tg_error_code_phases(c))
      TG_FAIL("docs/errors.md, code %s: phases '%s' differ from the list's", code,
              phase);
    if (strcmp(meaning, tg_error_code_doc(c)) != 0)
      TG_FAIL("docs/errors.md, code %s: the meaning\n  '%s'\ndiffers from the list's"
              "\n  '%s'", code, meaning, tg_error_code_doc(c));
  }
  if (i != TG_E__COUNT)
    TG_FAIL("docs/errors.md lists %d codes; TG_ERROR_CODE_MAP has %d (the first "
            "missing: %s)", i - 1, TG_E__COUNT - 1, tg_error_code_name(i));
  free(readme);
}

/* ---- an emitted code is a listed one ------------------------------------- */

static void on_done(tg_runtime *rt, const tg_outcome *out, void *ud) {
  tg_error_code *c = ud;
  ASSERT_TRUE(out->error.phase != TG_PHASE_NONE);
  *c = tg_error_code_of(out->error.code);
  ASSERT_TRUE(tg_error_code_phases(*c) & (1u << out->error.phase));
}

TEST(an_unknown_tool_ends_with_the_listed_code) {
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.builtin_tools = 0;
  char err[TG_ERRMSG];
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) TG_FAIL("%s", err);
  tg_error_code got = TG_E_NONE;
  tg_call_request req = {.tool = "no_such_tool"};
  ASSERT_INT_EQ(tg_call_start(rt, &req, on_done, &got, err), 0);
  tg_runtime_run(rt, TG_RUN_DEFAULT);
  ASSERT_INT_EQ(got, TG_E_UNKNOWN_TOOL);
  tg_runtime_free(rt);
}

TEST_MAIN(TEST_ENTRY(the_functions_agree_with_the_list),
          TEST_ENTRY(the_docs_table_says_what_the_list_says),
          TEST_ENTRY(an_unknown_tool_ends_with_the_listed_code))
