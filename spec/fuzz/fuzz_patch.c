/*
 * fuzz_patch.c — the unified-diff parser and the hunk applier of
 * apply_patch (src/base/patch.c: tg__patch_parse, tg__patch_apply), the
 * bytes an agent sends as a patch. Input: CONTENT NUL PATCH (no NUL: all
 * of it is the patch, the content empty). Every file section parsed is
 * applied twice: to CONTENT, and to the text the section's hunks expect
 * (their context and removed lines, in order), so the paths where hunks
 * do apply are reached too. Proves: no crash, leak or undefined
 * behaviour; a refusal says why; a result is NUL-terminated at its
 * length; a parse that fails frees cleanly.
 */
#include <string.h>
#include <cjson/cJSON.h>
#include "fuzz.h"
#include "base/patch.h"

/* The old side of f's hunks, one after another (malloc'd). */
static char *old_side(const tg_patch_file *f, size_t *len) {
  size_t n = 0;
  for (size_t h = 0; h < f->nhunks; h++)
    for (size_t i = 0; i < f->hunks[h].nlines; i++)
      if (f->hunks[h].lines[i].op != '+') n += f->hunks[h].lines[i].len;
  char *s = malloc(n + 1);
  if (!s) return NULL;
  n = 0;
  for (size_t h = 0; h < f->nhunks; h++)
    for (size_t i = 0; i < f->hunks[h].nlines; i++) {
      const tg_hunk_line *l = &f->hunks[h].lines[i];
      if (l->op == '+') continue;
      memcpy(s + n, l->text, l->len);
      n += l->len;
    }
  s[n] = '\0';
  *len = n;
  return s;
}

static void apply(const tg_patch_file *f, const char *content, size_t len) {
  char *out = NULL, err[512] = "";
  size_t outlen = 0;
  if (tg__patch_apply(f, content, len, &out, &outlen, err, sizeof err) == 0) {
    FUZZ_ASSERT(out != NULL, "applied, but no result");
    FUZZ_ASSERT(out[outlen] == '\0', "result not NUL-terminated at %zu",
                outlen);
    free(out);
  } else {
    FUZZ_ASSERT(err[0] != '\0', "not applied, and no reason");
  }
}

/* What the judge reads (tg_patch_files) is the executor's parse: refused
 * together, and one entry per file section, naming the file it leaves (a
 * delete: the one it removes) and a rename's old name. */
static void judge_reads_the_parse(const char *text, size_t size,
                                  const tg_patch *p, int parsed) {
  char err[512] = "";
  cJSON *list = tg_patch_files(text, size, err, sizeof err);
  FUZZ_ASSERT(!list == !parsed, "tg_patch_files %s what the parser %s",
              list ? "lists" : "refuses", parsed ? "takes" : "refuses");
  if (!list) return;
  FUZZ_ASSERT((size_t)cJSON_GetArraySize(list) == p->nfiles,
              "%d entries for %zu sections", cJSON_GetArraySize(list),
              p->nfiles);
  for (size_t i = 0; i < p->nfiles; i++) {
    const tg_patch_file *f = &p->files[i];
    const cJSON *e = cJSON_GetArrayItem(list, (int)i);
    const char *want = f->op == TG_PATCH_DELETE ? f->old_path : f->new_path;
    const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "path"));
    FUZZ_ASSERT(want && path && !strcmp(want, path), "entry %zu names '%s', "
                "the section '%s'", i, path ? path : "(none)",
                want ? want : "(none)");
    const char *from = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "from"));
    FUZZ_ASSERT(f->op != TG_PATCH_RENAME || (from && !strcmp(from, f->old_path)),
                "a rename's entry %zu lacks its old name", i);
  }
  cJSON_Delete(list);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data, *content = "";
  size_t clen = 0;
  const char *nul = memchr(text, '\0', size);
  if (nul) {
    content = text;
    clen = (size_t)(nul - text);
    size -= clen + 1;
    text = nul + 1;
  }
  tg_patch p;
  char err[512] = "";
  if (tg__patch_parse(text, size, &p, err, sizeof err) < 0) {
    FUZZ_ASSERT(err[0] != '\0', "refused without a reason");
    tg__patch_free(&p);
    judge_reads_the_parse(text, size, NULL, 0);
    return 0;
  }
  judge_reads_the_parse(text, size, &p, 1);
  for (size_t i = 0; i < p.nfiles; i++) {
    const tg_patch_file *f = &p.files[i];
    apply(f, content, clen);
    size_t olen = 0;
    char *old = old_side(f, &olen);
    if (old) apply(f, old, olen);
    free(old);
  }
  tg__patch_free(&p);
  return 0;
}
