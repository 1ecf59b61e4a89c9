/*
 * trust_gemini.c — whether Gemini CLI trusts a folder. With folder trust
 * on, in a folder the user has not trusted Gemini CLI ignores the
 * project's .gemini/settings.json, and runs no hook from any settings
 * file, the user's included: toolgate's hooks then never run, and nothing
 * says so — the worst way for a guard to be off. `toolgate doctor` asks
 * this, and fails closed: what cannot be read is a fault, never "fine".
 *
 * As Gemini CLI documents it (google-gemini/gemini-cli, docs/cli/
 * trusted-folders.md, "Why trust matters": in an untrusted folder
 * "Workspace settings are ignored: The CLI will not load the
 * .gemini/settings.json file from the project"; and docs/reference/
 * configuration.md), and as its code reads it (packages/core/src/utils/
 * trust.ts, packages/cli/src/config/settings.ts, trustedFolders.ts; and
 * packages/core/src/hooks/hookRegistry.ts, which registers the merged
 * settings' hooks only "if (this.config.isTrustedFolder())" — "Project
 * hooks disabled because the folder is not trusted" — so a --user install
 * is no way round it):
 *
 *  - GEMINI_CLI_TRUST_WORKSPACE=true trusts the folder for the sessions
 *    started with it (documented for headless runs); =false distrusts it
 *    whatever else says (trust.ts checks it first).
 *  - security.folderTrust.enabled, from the system settings
 *    (GEMINI_CLI_SYSTEM_SETTINGS_PATH, else /etc/gemini-cli/settings.json),
 *    over the user's ($GEMINI_CLI_HOME or $HOME, /.gemini/settings.json),
 *    over the system defaults (GEMINI_CLI_SYSTEM_DEFAULTS_PATH, else
 *    system-defaults.json beside the system settings): the project's own
 *    file cannot say. Unset, it is on: the reference's default is true,
 *    and so is the code's (trusted-folders.md still says "disabled by
 *    default"; the later two are what runs).
 *  - An IDE connected to Gemini CLI answers first for its own sessions;
 *    that is not visible from here, so the file decides.
 *  - The file: GEMINI_CLI_TRUSTED_FOLDERS_PATH, else trustedFolders.json
 *    in the user's .gemini. A JSON object, path -> "TRUST_FOLDER" |
 *    "TRUST_PARENT" (the path's parent) | "DO_NOT_TRUST"; a rule covers
 *    its folder and every folder under it, both compared as real paths
 *    (symlinks resolved where they exist); the rule with the longest path
 *    wins; none, or no file: not trusted.
 *
 * Every byte of these files is hostile: each is read only when it is a
 * regular file of at most 16 MiB, with the strict parser (duplicate keys,
 * comments, a value of another type or case: the answer is UNKNOWN); keys
 * are looked up case-sensitively, as Gemini CLI's own code does.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "base/json.h"
#include "base/regular_file.h"
#include "dialect.h"

#define TRUST_FILE_MAX (16u << 20)

#ifdef __APPLE__
#define SYSTEM_SETTINGS "/Library/Application Support/GeminiCli/settings.json"
#else
#define SYSTEM_SETTINGS "/etc/gemini-cli/settings.json"
#endif

static const char *env_set(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

/* The JSON object in file: 1 (*out), 0 no file, -1 with why. */
static int read_object(const char *file, cJSON **out, char *why, size_t len) {
  const char *kind = NULL;
  struct stat st;
  *out = NULL;
  int fd = tg__open_regular(file, &kind);
  if (fd == TG_NOT_REGULAR) {
    snprintf(why, len, "%s, not a file", kind ? kind : "something else");
    return -1;
  }
  if (fd < 0) {
    /* a symbolic link to nothing is no file to Gemini CLI either */
    if (errno == ENOENT) return 0;
    snprintf(why, len, "unreadable (%s)", strerror(errno));
    return -1;
  }
  if (fstat(fd, &st) < 0 || st.st_size > (off_t)TRUST_FILE_MAX) {
    snprintf(why, len, "more than %u MiB", TRUST_FILE_MAX >> 20);
    close(fd);
    return -1;
  }
  size_t n = (size_t)st.st_size, got = 0;
  char *b = malloc(n + 1);
  while (b && got < n) {
    ssize_t r = read(fd, b + got, n - got);
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (!b || got != n) {
    snprintf(why, len, "unreadable");
    free(b);
    return -1;
  }
  char err[256] = "";
  cJSON *j = tg_json_parse(b, n, NULL, err, sizeof err);
  free(b);
  if (!cJSON_IsObject(j)) {
    snprintf(why, len, "not a JSON object (%s)", j ? "another value" : err);
    cJSON_Delete(j);
    return -1;
  }
  *out = j;
  return 1;
}

/* The user's .gemini folder, into out; -1 when no home is known. */
static int gemini_dir(char *out, size_t len) {
  const char *home = env_set("GEMINI_CLI_HOME");
  if (!home) home = env_set("HOME");
  if (!home) return -1;
  return snprintf(out, len, "%s/.gemini", home) < (int)len ? 0 : -1;
}

/* security.folderTrust.enabled as the layers say it: 1 on, 0 off, -1
 * unknown (out->file, out->why). *said: the file that decided ("" the
 * default). */
static int trust_enabled(tg_folder_trust_said *out, char *said, size_t slen) {
  char sys[PATH_MAX], user[PATH_MAX], defaults[PATH_MAX], dir[PATH_MAX];
  const char *s = env_set("GEMINI_CLI_SYSTEM_SETTINGS_PATH");
  snprintf(sys, sizeof sys, "%s", s ? s : SYSTEM_SETTINGS);
  const char *dflt = env_set("GEMINI_CLI_SYSTEM_DEFAULTS_PATH");
  if (dflt) {
    snprintf(defaults, sizeof defaults, "%s", dflt);
  } else {
    char *slash = strrchr(sys, '/');
    snprintf(defaults, sizeof defaults, "%.*s/system-defaults.json",
             slash ? (int)(slash - sys) : 1, slash ? sys : ".");
  }
  if (gemini_dir(dir, sizeof dir) < 0) {
    snprintf(out->why, sizeof out->why, "neither GEMINI_CLI_HOME nor HOME is "
             "set, so Gemini CLI's user settings cannot be found");
    return -1;
  }
  if (snprintf(user, sizeof user, "%s/settings.json", dir) >= (int)sizeof user)
    user[0] = '\0';
  const char *layers[] = {sys, user, defaults}; /* the first that says wins */
  said[0] = '\0';
  for (size_t i = 0; i < sizeof layers / sizeof *layers; i++) {
    cJSON *j;
    char why[400];
    int r = read_object(layers[i], &j, why, sizeof why);
    if (r < 0) {
      snprintf(out->file, sizeof out->file, "%s", layers[i]);
      snprintf(out->why, sizeof out->why, "whether Gemini CLI's folder trust "
               "is on cannot be told: %.900s is %.900s", layers[i], why);
      return -1;
    }
    if (!r) continue;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(j, "security"), "folderTrust"),
        "enabled");
    int has = v && !cJSON_IsNull(v), off = cJSON_IsFalse(v);
    cJSON_Delete(j);
    if (has) {
      snprintf(said, slen, "%s", layers[i]);
      return !off; /* any value but false: on, as Gemini CLI reads it */
    }
  }
  return 1;
}

/* p made absolute (from the working folder) and lexically normal: no
 * "//", "." or "..", no trailing slash (as Node's path.resolve). */
static int normal_path(const char *p, char *out, size_t len) {
  char cwd[PATH_MAX], buf[PATH_MAX * 2 + 2];
  if (p[0] == '/') snprintf(buf, sizeof buf, "%s", p);
  else if (getcwd(cwd, sizeof cwd) &&
           snprintf(buf, sizeof buf, "%s/%s", cwd, p) < (int)sizeof buf) ;
  else return -1;
  if (len < 2) return -1;
  size_t o = 0;
  out[o++] = '/';
  for (char *seg = buf; *seg;) {
    size_t n = strcspn(seg, "/");
    if (n == 0 || (n == 1 && seg[0] == '.')) {
      /* nothing */
    } else if (n == 2 && seg[0] == '.' && seg[1] == '.') {
      while (o > 1 && out[o - 1] != '/') o--;
      if (o > 1) o--; /* the slash before it */
    } else {
      if (o > 1) {
        if (o + 1 >= len) return -1;
        out[o++] = '/';
      }
      if (o + n >= len) return -1;
      memcpy(out + o, seg, n);
      o += n;
    }
    seg += n + (seg[n] == '/');
  }
  out[o] = '\0';
  return 0;
}

/* p's real path when it exists, else p itself (as Gemini CLI compares). */
static void real_or_same(const char *p, char *out, size_t len) {
  char r[PATH_MAX];
  if (realpath(p, r)) snprintf(out, len, "%s", r);
  else snprintf(out, len, "%s", p);
}

/* folder is under (or is) top. */
static int under(const char *top, const char *folder) {
  size_t n = strlen(top);
  if (!strcmp(top, "/")) return folder[0] == '/';
  return !strncmp(top, folder, n) && (folder[n] == '\0' || folder[n] == '/');
}

/* Whether the trusted-folders file trusts project (a real path). */
static void trust_file(const char *project, tg_folder_trust_said *out) {
  char file[PATH_MAX], dir[PATH_MAX], why[400];
  const char *envf = env_set("GEMINI_CLI_TRUSTED_FOLDERS_PATH");
  if (envf) {
    snprintf(file, sizeof file, "%s", envf);
  } else if (gemini_dir(dir, sizeof dir) < 0 ||
             snprintf(file, sizeof file, "%s/trustedFolders.json", dir) >=
                 (int)sizeof file) {
    out->trust = TG_FOLDER_UNKNOWN;
    snprintf(out->why, sizeof out->why, "neither GEMINI_CLI_HOME nor HOME is "
             "set, so Gemini CLI's trusted folders cannot be found");
    return;
  }
  snprintf(out->file, sizeof out->file, "%s", file);
  cJSON *j;
  int r = read_object(file, &j, why, sizeof why);
  if (r < 0) {
    out->trust = TG_FOLDER_UNKNOWN;
    snprintf(out->why, sizeof out->why, "whether this folder is trusted "
             "cannot be told: %.900s is %.900s", file, why);
    return;
  }
  if (!r) {
    out->trust = TG_FOLDER_UNTRUSTED;
    snprintf(out->why, sizeof out->why, "there is no %.900s, so no folder is "
             "trusted yet", file);
    return;
  }
  const cJSON *rule;
  const char *best = NULL, *best_level = NULL;
  size_t best_len = 0;
  int found = 0;
  cJSON_ArrayForEach(rule, j) {
    const char *level = cJSON_GetStringValue(rule);
    int parent = level && !strcmp(level, "TRUST_PARENT");
    if (!level || (!parent && strcmp(level, "TRUST_FOLDER") &&
                   strcmp(level, "DO_NOT_TRUST"))) {
      out->trust = TG_FOLDER_UNKNOWN;
      snprintf(out->why, sizeof out->why, "whether this folder is trusted "
               "cannot be told: in %.900s, %.200s is not TRUST_FOLDER, "
               "TRUST_PARENT or DO_NOT_TRUST (Gemini CLI refuses to start "
               "with it)", file, rule->string);
      cJSON_Delete(j);
      return;
    }
    char key[PATH_MAX], top[PATH_MAX];
    if (normal_path(rule->string, key, sizeof key) < 0) continue;
    size_t klen = strlen(key);
    if (parent) { /* the rule's parent folder */
      char *slash = strrchr(key, '/');
      if (slash == key) key[1] = '\0';
      else if (slash) *slash = '\0';
    }
    real_or_same(key, top, sizeof top);
    if (!under(top, project)) continue;
    /* the longest rule wins; two as long that differ: the distrust */
    if (!found || klen > best_len ||
        (klen == best_len && !strcmp(level, "DO_NOT_TRUST"))) {
      best = rule->string;
      best_level = level;
      best_len = klen;
      found = 1;
    }
  }
  if (!found) {
    out->trust = TG_FOLDER_UNTRUSTED;
    snprintf(out->why, sizeof out->why, "no rule in %.900s covers this folder",
             file);
  } else if (!strcmp(best_level, "DO_NOT_TRUST")) {
    out->trust = TG_FOLDER_UNTRUSTED;
    snprintf(out->why, sizeof out->why, "%.900s marks %.300s DO_NOT_TRUST", file,
             best);
  } else {
    out->trust = TG_FOLDER_TRUSTED;
    snprintf(out->why, sizeof out->why, "%.900s trusts it (%.300s: %.900s)", file,
             best, best_level);
  }
  cJSON_Delete(j);
}

void tg__gemini_folder_trust(const char *project, tg_folder_trust_said *out) {
  memset(out, 0, sizeof *out);
  const char *env = getenv("GEMINI_CLI_TRUST_WORKSPACE");
  if (env && !strcmp(env, "false")) {
    out->trust = TG_FOLDER_UNTRUSTED;
    snprintf(out->why, sizeof out->why, "GEMINI_CLI_TRUST_WORKSPACE=false "
             "distrusts every folder");
    return;
  }
  char real[PATH_MAX];
  if (!realpath(project, real)) {
    out->trust = TG_FOLDER_UNKNOWN;
    snprintf(out->why, sizeof out->why, "the project folder %.300s cannot "
             "be resolved: %.900s", project, strerror(errno));
    return;
  }
  char said[PATH_MAX];
  int on = trust_enabled(out, said, sizeof said);
  if (on < 0) {
    out->trust = TG_FOLDER_UNKNOWN;
    return;
  }
  if (!on) {
    out->trust = TG_FOLDER_TRUSTED;
    snprintf(out->why, sizeof out->why, "folder trust is off (%.900s sets "
             "security.folderTrust.enabled: false)", said);
    return;
  }
  if (env && !strcmp(env, "true")) {
    out->trust = TG_FOLDER_TRUSTED_BY_ENV;
    snprintf(out->why, sizeof out->why, "GEMINI_CLI_TRUST_WORKSPACE=true "
             "trusts it, for the sessions started with it only");
    return;
  }
  trust_file(real, out);
  if (out->trust == TG_FOLDER_UNTRUSTED) {
    char tail[sizeof out->why];
    snprintf(tail, sizeof tail, "%s", out->why);
    snprintf(out->why, sizeof out->why, "folder trust is on (%.900s) and %.2000s",
             said[0] ? said : "Gemini CLI's default", tail);
  }
}
