/*
 * patch.h — unified diffs: parsing (several files; new files from
 * /dev/null, deleted files to /dev/null, git's `rename from`/`rename to`,
 * `new file mode`/`deleted file mode`, `old mode`/`new mode` (a section
 * may change only the mode), `\ No newline at end of file`) and
 * applying hunks to a buffer in memory. No file I/O here: apply_patch
 * (tools/fs_patch.c) does that, all or nothing. In base/ because the
 * judge reads the same parse as the executor: tg_patch_files
 * (patch_files.c) gives rules the files apply_patch will touch.
 *
 * Matching is exact: every context and removed line must match the file
 * byte for byte (newline included). A hunk may land at another line than
 * its header says (the closest exact match after the previous hunk wins),
 * as with patch(1); it never applies with fuzz.
 */
#ifndef TG_PATCH_H
#define TG_PATCH_H

#include <stddef.h>

typedef struct {
  char op;                /* ' ' context, '-' removed, '+' added */
  const char *text;       /* into the patch buffer; includes the '\n' */
  size_t len;             /* unless marked "\ No newline at end of file" */
} tg_hunk_line;

typedef struct {
  long old_start, old_count, new_start, new_count;
  char header[96];        /* "@@ -1,3 +1,4 @@", for messages */
  tg_hunk_line *lines;
  size_t nlines;
  size_t patch_line;      /* where the hunk starts in the patch text */
} tg_hunk;

typedef enum {
  TG_PATCH_MODIFY,
  TG_PATCH_CREATE,        /* --- /dev/null, or git's new file mode */
  TG_PATCH_DELETE,        /* +++ /dev/null, or git's deleted file mode */
  TG_PATCH_RENAME         /* rename from / rename to (hunks optional) */
} tg_patch_op;

typedef struct {
  tg_patch_op op;
  char *old_path;         /* with a/ stripped; NULL for /dev/null */
  char *new_path;         /* with b/ stripped; NULL for /dev/null */
  tg_hunk *hunks;
  size_t nhunks;
  size_t patch_line;      /* where this file's section starts */
  unsigned mode;          /* git's mode for the file after the section
                             (new file mode / new mode): 0100644 or
                             0100755; 0 when the patch gives none */
} tg_patch_file;

typedef struct {
  tg_patch_file *files;
  size_t nfiles;
  char *buf;              /* our copy of the text; hunk lines point in */
} tg_patch;

/* Parses text. Returns 0, or -1 with "patch line N: what is wrong" in
 * err. Free with tg__patch_free (also after a failure). */
int tg__patch_parse(const char *text, size_t len, tg_patch *p, char *err,
                    size_t errlen);
void tg__patch_free(tg_patch *p);

/* The path a file section is about, for messages (new, else old). */
const char *tg__patch_file_name(const tg_patch_file *f);

/* Applies f's hunks to content (len bytes; may be "" for a new file).
 * Returns 0 with a malloc'd result in *out (NUL-terminated, *outlen bytes),
 * or -1 with err naming the file and the hunk that did not apply. */
int tg__patch_apply(const tg_patch_file *f, const char *content, size_t len,
                    char **out, size_t *outlen, char *err, size_t errlen);

#endif
