/*
 * patch_files.c — tg_patch_files (include/toolgate.h): the files a diff
 * touches, as apply_patch's parser (patch.c) reads them, for judges.
 */
#include <stdio.h>
#include "json.h"
#include "patch.h"

static const char *op_name(tg_patch_op op) {
  switch (op) {
    case TG_PATCH_CREATE: return "create";
    case TG_PATCH_DELETE: return "delete";
    case TG_PATCH_RENAME: return "rename";
    default: return "modify";
  }
}

static cJSON *file_json(const tg_patch_file *f) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  const char *path = f->op == TG_PATCH_DELETE ? f->old_path : f->new_path;
  int ok = cJSON_AddStringToObject(o, "op", op_name(f->op)) &&
           cJSON_AddStringToObject(o, "path", path) &&
           (f->op != TG_PATCH_RENAME ||
            cJSON_AddStringToObject(o, "from", f->old_path)) &&
           (!f->mode || cJSON_AddNumberToObject(o, "mode", f->mode));
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

cJSON *tg_patch_files(const char *text, size_t len, char *err, size_t errlen) {
  tg_patch p;
  if (tg__patch_parse(text ? text : "", text ? len : 0, &p, err, errlen) < 0) {
    tg__patch_free(&p);
    return NULL;
  }
  cJSON *list = cJSON_CreateArray();
  for (size_t i = 0; list && i < p.nfiles; i++) {
    cJSON *f = file_json(&p.files[i]);
    if (!f) {
      cJSON_Delete(list);
      list = NULL;
    } else {
      cJSON_AddItemToArray(list, f);
    }
  }
  tg__patch_free(&p);
  if (!list) snprintf(err, errlen, "out of memory");
  return list;
}
