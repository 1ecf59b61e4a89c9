/*
 * test_reload.c — hot reload and `explain`, through the public C
 * API and the real `toolgate` binary:
 *
 *   - 200 rewrites of the policy files, valid and broken alternately,
 *     reloaded while calls run without pause: every call is judged by one
 *     complete generation (its rules, hooks and tool stamp tg.generation
 *     and a version tag, and they must agree), none is lost or ended
 *     twice, broken versions never become current;
 *   - the folder watch with real editor-style saves (temp file + rename,
 *     backup rename, delete, new file, bursts, temp files that must not
 *     count), also under load;
 *   - SIGHUP, the control socket, `toolgate reload` and `toolgate watch`
 *     end to end;
 *   - tg_explain and `toolgate explain`: rule order and answers, the
 *     deciding rule, the default, hooks listed, nothing executed.
 */
#include "helpers.h"
#include "internal.h"
#include <poll.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/un.h>

#define TOOLGATE_BIN TG_BINARY_DIR "/toolgate"

/* An editor's atomic save: a temp file beside the target, renamed over it. */
static void save_atomic(const char *dir, const char *name, const char *text) {
  char tmp[300];
  snprintf(tmp, sizeof tmp, ".%s.tmp%d", name, (int)getpid());
  put_file(dir, tmp, text);
  char *from = path_join(dir, tmp), *to = path_join(dir, name);
  if (rename(from, to) < 0) TG_FAIL("rename %s: %s", from, strerror(errno));
  free(from);
  free(to);
}

/* ---- reload events --------------------------------------------------------- */

typedef struct {
  int loaded, errors;
  double last_gen;            /* generation of the last policy_loaded */
  char last_trigger[32];
  char last_error[TG_ERRMSG];
  char last_file[512];
  double last_line;
  int bad_loaded;             /* policy_loaded without duration_ms / files */
} reloads;

static void on_reload(tg_runtime *rt, const tg_event *ev, void *ud) {
  reloads *r = ud;
  const cJSON *d = ev->data;
  if (!strcmp(ev->type, "policy_loaded")) {
    r->loaded++;
    r->last_gen = num_at(d, "generation");
    if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(d, "duration_ms")) ||
        !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(d, "files")))
      r->bad_loaded++;
  } else if (!strcmp(ev->type, "policy_error")) {
    r->errors++;
    copy_str(r->last_error, sizeof r->last_error, str_at(d, "error"));
    copy_str(r->last_file, sizeof r->last_file, str_at(d, "file"));
    r->last_line = num_at(d, "line");
  } else {
    return;
  }
  copy_str(r->last_trigger, sizeof r->last_trigger, str_at(d, "trigger"));
}

/* A runtime judged by the policies in dir (calls allowed by default),
 * watching the folder if asked, its reload events counted in r. */
static tg_runtime *reload_runtime(const char *dir, int watch, reloads *r) {
  tg_config cfg = config_allowing();
  cfg.watch_policies = watch;
  tg_runtime *rt = runtime_with_policies(&cfg, dir);
  if (r) ASSERT_TRUE(tg_events_subscribe(rt, on_reload, r) > 0);
  return rt;
}

/* ---- the stamping policy set ------------------------------------------------
 * Three files. The tool, the rule and both hooks each record tg.generation
 * and the file's version tag; the post-hook returns them all as the
 * result. A broken version has valid first files tagged "bad-K" and a last
 * file that fails at line 3, so a half-loaded generation would show. */

static void write_version(const char *dir, int k, int broken,
                          void (*save)(const char *, const char *, const char *)) {
  char v[32], buf[2048];
  snprintf(v, sizeof v, "%s%d", broken ? "bad-" : "v", k);
  snprintf(buf, sizeof buf,
           "local tg = require \"toolgate\"\n"
           "local V = \"%s\"\n"
           "tg.tool { name = \"slow\", read_only = true, run = function(args, ctx)\n"
           "  ctx.sleep(args.ms or 2); return { gen = tg.generation, v = V } end }\n"
           "tg.tool { name = \"quick\", read_only = true, run = function()\n"
           "  return { gen = tg.generation, v = V } end }\n", v);
  save(dir, "00_tools.lua", buf);
  snprintf(buf, sizeof buf,
           "local tg = require \"toolgate\"\n"
           "local V = \"%s\"\n"
           "tg.rule { name = \"stamp\", priority = 1, check = function(call)\n"
           "  call.metadata.rule_gen = tg.generation; call.metadata.rule_v = V end }\n"
           "tg.rule { name = \"allow\", priority = 2, check = function() return tg.allow() end }\n",
           v);
  save(dir, "10_rules.lua", buf);
  if (broken && k % 4 == 1)
    snprintf(buf, sizeof buf, "local tg = require \"toolgate\"\n"
                              "local V = \"%s\"\n"
                              "this is not lua\n", v);
  else if (broken)
    snprintf(buf, sizeof buf, "local tg = require \"toolgate\"\n"
                              "local V = \"%s\"\n"
                              "error(\"broken on purpose\")\n", v);
  else
    snprintf(buf, sizeof buf,
             "local tg = require \"toolgate\"\n"
             "local V = \"%s\"\n"
             "tg.before_tool(\"*\", function(call)\n"
             "  call.metadata.pre_gen = tg.generation; call.metadata.pre_v = V end)\n"
             "tg.after_tool(\"*\", function(call, res)\n"
             "  local m = call.metadata\n"
             "  return tg.result { tool = res.result, rule_gen = m.rule_gen, rule_v = m.rule_v,\n"
             "    pre_gen = m.pre_gen, pre_v = m.pre_v, post_gen = tg.generation, post_v = V }\n"
             "end)\n", v);
  save(dir, "20_hooks.lua", buf);
}

/* ---- calls under reload ---------------------------------------------------- */

#define MAX_CALLS 200000
#define MAX_GENS 4096

typedef struct {
  tg_runtime *rt;
  int started, ended, spanned;
  unsigned char *ends;            /* times each call id ended */
  char versions[MAX_GENS][16];    /* generation -> version tag it loaded */
  int slow_in_flight;
  int stop_starting;
} load;

static void check_stamps(load *l, const tg_outcome *o) {
  if (o->status != TG_STATUS_OK)
    TG_FAIL("call %s ended %s: %s", o->id, tg_status_name(o->status),
            o->error.message ? o->error.message : "");
  const cJSON *r = o->result;
  const cJSON *tool = cJSON_GetObjectItemCaseSensitive(r, "tool");
  double gens[4] = {
      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(tool, "gen")),
      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "rule_gen")),
      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "pre_gen")),
      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "post_gen"))};
  const char *vs[4] = {
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tool, "v")),
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "rule_v")),
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "pre_v")),
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "post_v"))};
  for (int i = 0; i < 4; i++) {
    if (!vs[i] || gens[i] != gens[0] || strcmp(vs[i], vs[0]))
      TG_FAIL("call %s was judged by more than one generation: stamp %d is "
              "%g/%s, stamp 0 is %g/%s", o->id, i, gens[i],
              vs[i] ? vs[i] : "(none)", gens[0], vs[0] ? vs[0] : "(none)");
  }
  int g = (int)gens[0];
  ASSERT_NUM_EQ(gens[0], g); /* a whole number */
  ASSERT_TRUE(g >= 1 && g < MAX_GENS);
  if (strncmp(vs[0], "bad-", 4) == 0)
    TG_FAIL("call %s ran on a broken version (%s)", o->id, vs[0]);
  if (strcmp(l->versions[g], vs[0]))
    TG_FAIL("call %s stamps generation %d as %s, but that generation loaded %s",
            o->id, g, vs[0], l->versions[g]);
  if ((uint64_t)g < tg_runtime_generation(l->rt)) l->spanned++;
}

static void load_done(tg_runtime *rt, const tg_outcome *o, void *ud);

static void start_one(load *l, const char *tool) {
  char id[32], err[TG_ERRMSG] = "";
  ASSERT_TRUE(l->started < MAX_CALLS);
  snprintf(id, sizeof id, "c-%d", l->started);
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.id = id;
  req.tool = tool;
  req.args_json = !strcmp(tool, "slow") ? "{\"ms\":3}" : "{}";
  if (!strcmp(tool, "slow")) l->slow_in_flight++;
  l->started++;
  if (tg_call_start(l->rt, &req, load_done, l, err) < 0)
    TG_FAIL("tg_call_start: %s", err);
}

static void top_up(load *l) {
  if (l->stop_starting) return;
  while (l->slow_in_flight < 6) start_one(l, "slow");
  for (int i = 0; i < 16; i++) start_one(l, "quick");
}

static void load_done(tg_runtime *rt, const tg_outcome *o, void *ud) {
  load *l = ud;
  int n = atoi(o->id + 2);
  ASSERT_TRUE(n >= 0 && n < l->started);
  if (++l->ends[n] != 1) TG_FAIL("call %s ended %d times", o->id, l->ends[n]);
  l->ended++;
  if (!strcmp(o->tool, "slow")) l->slow_in_flight--;
  check_stamps(l, o);
}

static void load_init(load *l, tg_runtime *rt) {
  memset(l, 0, sizeof *l);
  l->rt = rt;
  l->ends = calloc(MAX_CALLS, 1);
  ASSERT_NOT_NULL(l->ends);
}

static void load_finish(load *l) {
  l->stop_starting = 1;
  int *ended = &l->ended;
  if (!wait_until(l->rt, ended, l->started, WAIT_MS))
    TG_FAIL("only %d of %d calls ended", l->ended, l->started);
  ASSERT_INT_EQ(l->ended, l->started);
  for (int i = 0; i < l->started; i++)
    if (l->ends[i] != 1) TG_FAIL("call c-%d ended %d times", i, l->ends[i]);
  free(l->ends);
}

/* ---- 200 reloads under load ------------------------------------------------ */

typedef struct {
  load *l;
  char *dir;
  int k;                     /* rewrites done */
  int valid, broken;
  uv_timer_t timer;
} api_driver;

static void api_tick(uv_timer_t *t) {
  api_driver *d = t->data;
  load *l = d->l;
  int broken = d->k % 2 == 1;
  uint64_t before = tg_runtime_generation(l->rt);
  write_version(d->dir, d->k + 1, broken, put_file);
  char err[TG_ERRMSG] = "";
  int rc = tg_runtime_load_policies(l->rt, NULL, err);
  uint64_t after = tg_runtime_generation(l->rt);
  if (broken) {
    if (rc != -EINVAL) TG_FAIL("broken version %d loaded (rc %d)", d->k + 1, rc);
    ASSERT_INT_EQ(after, before);
    ASSERT_CONTAINS(err, "20_hooks.lua:3:");
    d->broken++;
  } else {
    if (rc != 0) TG_FAIL("version %d did not load: %s", d->k + 1, err);
    ASSERT_INT_EQ(after, before + 1);
    snprintf(l->versions[after], sizeof l->versions[after], "v%d", d->k + 1);
    d->valid++;
  }
  if (++d->k == 200) uv_timer_stop(t);
  top_up(l);
}

TEST(reload_200_times_under_load) {
  char *dir = temp_dir();
  write_version(dir, 0, 0, put_file);
  reloads ev = {0};
  tg_runtime *rt = reload_runtime(dir, 0, &ev);
  load l;
  load_init(&l, rt);
  snprintf(l.versions[1], sizeof l.versions[1], "v0");
  api_driver d = {&l, dir, 0, 0, 0, {0}};
  uv_timer_init(tg_runtime_loop(rt), &d.timer);
  d.timer.data = &d;
  uv_timer_start(&d.timer, api_tick, 1, 1);
  top_up(&l);
  while (d.k < 200) uv_run(tg_runtime_loop(rt), UV_RUN_ONCE);
  uv_close((uv_handle_t *)&d.timer, NULL);
  load_finish(&l);
  ASSERT_INT_EQ(d.valid, 100);
  ASSERT_INT_EQ(d.broken, 100);
  ASSERT_INT_EQ(tg_runtime_generation(rt), 101); /* only valid ones count */
  ASSERT_INT_EQ(ev.loaded, 100);
  ASSERT_INT_EQ(ev.errors, 100);
  ASSERT_INT_EQ(ev.bad_loaded, 0);
  ASSERT_CONTAINS(ev.last_file, "20_hooks.lua");
  ASSERT_NUM_EQ(ev.last_line, 3);
  ASSERT_STR_EQ(ev.last_trigger, "api");
  /* the test must have exercised what it claims */
  if (l.started < 1000) TG_FAIL("only %d calls ran", l.started);
  if (l.spanned == 0) TG_FAIL("no call finished after a newer generation came");
  printf("  %d calls, %d ended on an older generation than the current one\n",
         l.started, l.spanned);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* ---- the folder watch -------------------------------------------------------- */

static const char *ver_policy =
    "local tg = require \"toolgate\"\n"
    "tg.tool { name = \"ver\", read_only = true, run = function() return \"%s\" end }\n";

static void save_ver(const char *dir, const char *v,
                     void (*save)(const char *, const char *, const char *)) {
  char buf[512];
  snprintf(buf, sizeof buf, ver_policy, v);
  save(dir, "10_ver.lua", buf);
}

/* Calls "ver" (whose result is the version string) and checks it. */
static void expect_ver(tg_runtime *rt, const char *want) {
  outcome o = call_tool(rt, "ver", NULL);
  ASSERT_CALL_OK(o);
  ASSERT_STR_EQ(cJSON_GetStringValue(o.result), want);
  outcome_free(&o);
}

static int count_rules(tg_runtime *rt) {
  cJSON *d = tg_runtime_describe(rt);
  int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "rules"));
  cJSON_Delete(d);
  return n;
}

/* Turns the loop until the current generation has n rules (a plain write
 * is create + write: a reload may come between, then another). */
static int wait_rules(tg_runtime *rt, int n) {
  for (int waited = 0; waited < WAIT_MS; waited += 20) {
    if (count_rules(rt) == n) return 1;
    run_for(rt, 20);
  }
  return count_rules(rt) == n;
}

/* vim with backupcopy=no: the original becomes the backup, a new file is
 * written, the backup is removed. */
static void save_vim_style(const char *dir, const char *name, const char *text) {
  char from[1024], to[1024];
  snprintf(from, sizeof from, "%s/%s", dir, name);
  snprintf(to, sizeof to, "%s/%s~", dir, name);
  if (rename(from, to) < 0) TG_FAIL("rename: %s", strerror(errno));
  put_file(dir, "4913", ""); /* vim's probe file */
  remove_file(dir, "4913");
  put_file(dir, name, text);
  if (unlink(to) < 0) TG_FAIL("unlink: %s", strerror(errno));
}

TEST(watch_picks_up_editor_saves) {
  char *dir = temp_dir();
  save_ver(dir, "one", put_file);
  reloads ev = {0};
  tg_runtime *rt = reload_runtime(dir, 1, &ev);
  expect_ver(rt, "one");

  save_ver(dir, "two", save_atomic); /* temp file + rename */
  if (!wait_until(rt, &ev.loaded, 1, WAIT_MS)) TG_FAIL("atomic save not seen");
  ASSERT_STR_EQ(ev.last_trigger, "watch");
  expect_ver(rt, "two");

  char buf[512];
  snprintf(buf, sizeof buf, ver_policy, "three");
  save_vim_style(dir, "10_ver.lua", buf);
  if (!wait_until(rt, &ev.loaded, 2, WAIT_MS))
    TG_FAIL("vim-style save not seen");
  run_for(rt, 200); /* the backup's removal may come as one more reload */
  expect_ver(rt, "three");

  put_file(dir, "20_extra.lua",
           "local tg = require \"toolgate\"\n"
           "tg.rule { name = \"extra\", check = function() end }\n");
  if (!wait_rules(rt, 1)) TG_FAIL("new file not seen");
  remove_file(dir, "20_extra.lua");
  if (!wait_rules(rt, 0)) TG_FAIL("deletion not seen");
  expect_ver(rt, "three");

  /* temp files, backups, other files: no reload */
  run_for(rt, 200); /* nothing of the above still pending */
  int loaded = ev.loaded;
  put_file(dir, ".10_ver.lua.swp", "junk");
  put_file(dir, "10_ver.lua~", "junk");
  put_file(dir, "#10_ver.lua#", "junk");
  put_file(dir, "notes.txt", "junk");
  put_file(dir, ".hidden.lua", "this is not lua");
  run_for(rt, 400);
  ASSERT_INT_EQ(ev.loaded, loaded);
  ASSERT_INT_EQ(ev.errors, 0);

  /* a broken save: the error names file:line, the generation stays */
  uint64_t gen = tg_runtime_generation(rt);
  save_atomic(dir, "10_ver.lua", "local tg = require \"toolgate\"\n\nlocal = 1\n");
  if (!wait_until(rt, &ev.errors, 1, WAIT_MS))
    TG_FAIL("broken save not reported");
  ASSERT_CONTAINS(ev.last_error, "10_ver.lua:3:");
  ASSERT_NUM_EQ(ev.last_line, 3);
  ASSERT_INT_EQ(tg_runtime_generation(rt), gen);
  expect_ver(rt, "three");
  loaded = ev.loaded;
  save_ver(dir, "fixed", save_atomic);
  if (!wait_until(rt, &ev.loaded, loaded + 1, WAIT_MS)) TG_FAIL("fix not seen");
  expect_ver(rt, "fixed");
  tg_runtime_free(rt);
  remove_tree(dir);
}

typedef struct {
  char *dir;
  int i, n;
  uv_timer_t timer;
} burst;

static void burst_tick(uv_timer_t *t) {
  burst *b = t->data;
  char v[32];
  snprintf(v, sizeof v, "burst-%d", b->i);
  save_ver(b->dir, v, put_file); /* in place, as many editors do */
  if (++b->i == b->n) uv_timer_stop(t);
}

TEST(watch_debounces_a_burst_of_saves) {
  char *dir = temp_dir();
  save_ver(dir, "start", put_file);
  reloads ev = {0};
  tg_runtime *rt = reload_runtime(dir, 1, &ev);
  burst b = {dir, 0, 20, {0}};
  uv_timer_init(tg_runtime_loop(rt), &b.timer);
  b.timer.data = &b;
  uv_timer_start(&b.timer, burst_tick, 5, 5); /* 20 saves, 5 ms apart */
  while (b.i < b.n) uv_run(tg_runtime_loop(rt), UV_RUN_ONCE);
  uv_close((uv_handle_t *)&b.timer, NULL);
  if (!wait_until(rt, &ev.loaded, 1, WAIT_MS)) TG_FAIL("burst not seen");
  run_for(rt, 300);
  /* about one reload (more only if the machine paused for 75 ms between
   * two saves); never one per save */
  if (ev.loaded >= 10) TG_FAIL("20 saves caused %d reloads", ev.loaded);
  expect_ver(rt, "burst-19");
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* Calls run without pause while 20 editor-style saves, valid and broken
 * alternately, are picked up by the watch. */
typedef struct {
  load *l;
  reloads *ev;
  char *dir;
  int k, seen;               /* saves made, reload events seen for them */
  uv_timer_t timer;
} watch_driver;

static void watch_tick(uv_timer_t *t) {
  watch_driver *d = t->data;
  load *l = d->l;
  top_up(l);
  int events = d->ev->loaded + d->ev->errors;
  if (d->k > d->seen && events == d->seen) return; /* still waiting */
  if (d->k > d->seen) {
    d->seen = events;
    int was_broken = (d->k - 1) % 2 == 1;
    if (was_broken) ASSERT_CONTAINS(d->ev->last_error, "20_hooks.lua:3:");
    else ASSERT_NUM_EQ(d->ev->last_gen, tg_runtime_generation(l->rt));
    ASSERT_STR_EQ(d->ev->last_trigger, "watch");
  }
  if (d->k == 20) {
    uv_timer_stop(t);
    return;
  }
  d->k++; /* saves 1, 3, 5, ... are valid; 2, 4, ... broken */
  write_version(d->dir, d->k, (d->k - 1) % 2 == 1, save_atomic);
}

/* Records which save a new generation loaded, before any call can run on
 * it (events are delivered inside the reload). */
static void record_version(tg_runtime *rt, const tg_event *ev, void *ud) {
  watch_driver *d = ud;
  if (strcmp(ev->type, "policy_loaded")) return;
  double gen = num_at(ev->data, "generation");
  int g = (int)gen;
  ASSERT_NUM_EQ(gen, g); /* a whole number */
  ASSERT_TRUE(g > 0 && g < MAX_GENS);
  snprintf(d->l->versions[g], sizeof d->l->versions[g], "v%d", d->k);
}

TEST(watch_reloads_under_load) {
  char *dir = temp_dir();
  write_version(dir, 0, 0, put_file);
  reloads ev = {0};
  tg_runtime *rt = reload_runtime(dir, 1, &ev);
  load l;
  load_init(&l, rt);
  snprintf(l.versions[1], sizeof l.versions[1], "v0");
  watch_driver d = {&l, &ev, dir, 0, 0, {0}};
  ASSERT_TRUE(tg_events_subscribe(rt, record_version, &d) > 0);
  uv_timer_init(tg_runtime_loop(rt), &d.timer);
  d.timer.data = &d;
  uv_timer_start(&d.timer, watch_tick, 2, 2);
  uv_update_time(tg_runtime_loop(rt));
  uint64_t end = uv_now(tg_runtime_loop(rt)) + (tg_test_timeout_s() - 5) * 1000;
  while (uv_is_active((uv_handle_t *)&d.timer)) {
    uv_run(tg_runtime_loop(rt), UV_RUN_ONCE);
    if (uv_now(tg_runtime_loop(rt)) > end)
      TG_FAIL("the watch saw %d of 20 saves", d.seen);
  }
  uv_close((uv_handle_t *)&d.timer, NULL);
  load_finish(&l);
  ASSERT_INT_EQ(ev.loaded, 10);
  ASSERT_INT_EQ(ev.errors, 10);
  ASSERT_INT_EQ(tg_runtime_generation(rt), 11);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* ---- SIGHUP -------------------------------------------------------------- */

static int sighup_is_default(void) {
  struct sigaction sa;
  sigaction(SIGHUP, NULL, &sa);
  return sa.sa_handler == SIG_DFL;
}

TEST(sighup_reloads_only_when_asked) {
  /* as a shell leaves it (nohup would have it ignored: not ours either) */
  signal(SIGHUP, SIG_DFL);
  char *dir = temp_dir();
  save_ver(dir, "one", put_file);
  reloads ev = {0};
  tg_runtime *rt = reload_runtime(dir, 1, &ev);
  /* watching, listening: still no signal handler of our own */
  char sock[300], err[TG_ERRMSG] = "";
  snprintf(sock, sizeof sock, "%s/control.sock", dir);
  ASSERT_OK(tg_runtime_listen(rt, sock, err), err);
  ASSERT_TRUE(sighup_is_default());
  ASSERT_OK(tg_runtime_reload_on_signal(rt, SIGHUP, err), err);
  ASSERT_FALSE(sighup_is_default());
  tg_runtime_watch(rt, 0, err); /* only the signal may reload now */
  put_file(dir, "10_ver.lua", "local tg = require \"toolgate\"\n"
           "tg.tool { name = \"ver\", read_only = true, run = function() return \"two\" end }\n");
  run_for(rt, 200);
  ASSERT_INT_EQ(ev.loaded, 0);
  kill(getpid(), SIGHUP);
  if (!wait_until(rt, &ev.loaded, 1, WAIT_MS)) TG_FAIL("SIGHUP did not reload");
  ASSERT_STR_EQ(ev.last_trigger, "signal");
  expect_ver(rt, "two");
  ASSERT_OK(tg_runtime_reload_on_signal(rt, 0, err), err);
  run_for(rt, 10);
  tg_runtime_free(rt);
  ASSERT_TRUE(sighup_is_default()); /* given back on free */
  remove_tree(dir);
}

/* ---- the control socket -------------------------------------------------- */

/* Runs argv with stdout/stderr into files under dir while the loop of rt
 * (if any) keeps turning, so an in-process server can answer. Returns the
 * exit status; *out / *err hold what it printed (caller frees). */
static int run_cmd(tg_runtime *rt, const char *dir, char *const argv[],
                   char **out, char **errout) {
  char op[1024], ep[1024];
  snprintf(op, sizeof op, "%s/cmd.out", dir);
  snprintf(ep, sizeof ep, "%s/cmd.err", dir);
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(op, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(ep, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int n = open("/dev/null", O_RDONLY);
    dup2(o, 1);
    dup2(e, 2);
    dup2(n, 0);
    execv(argv[0], argv);
    _exit(127);
  }
  int st = 0;
  for (;;) {
    pid_t w = waitpid(pid, &st, rt ? WNOHANG : 0);
    if (w == pid) break;
    if (w < 0) TG_FAIL("waitpid: %s", strerror(errno));
    run_for(rt, 2);
  }
  if (out && !(*out = read_text(op))) TG_FAIL("%s was not written", op);
  if (errout && !(*errout = read_text(ep))) TG_FAIL("%s was not written", ep);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A bound socket file nobody listens on, as a crash leaves behind. */
static void make_stale_socket(const char *path) {
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_TRUE(fd >= 0);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0)
    TG_FAIL("bind %s: %s", path, strerror(errno));
  close(fd);
}

static int n_paths;
static int count_path(const char *path, void *ud) {
  (void)path;
  (*(int *)ud)++;
  return 0;
}

TEST(control_socket_reload_and_errors) {
  char *dir = temp_dir();
  save_ver(dir, "one", put_file);
  reloads ev = {0};
  tg_runtime *rt = reload_runtime(dir, 0, &ev);
  char sock[300], err[TG_ERRMSG] = "";
  snprintf(sock, sizeof sock, "%s/control.sock", dir);
  make_stale_socket(sock);
  ASSERT_OK(tg_runtime_listen(rt, sock, err), err); /* the stale one goes */
  ASSERT_STR_EQ(tg_runtime_control_path(rt), sock);
  struct stat st;
  ASSERT_OK(stat(sock, &st));
  ASSERT_INT_EQ(st.st_mode & 0777, 0600);

  /* a second listener on a live socket is refused */
  tg_runtime *rt2 = reload_runtime(dir, 0, NULL);
  ASSERT_INT_EQ(tg_runtime_listen(rt2, sock, err), -EADDRINUSE);
  ASSERT_CONTAINS(err, "already listening");
  char notsock[300];
  snprintf(notsock, sizeof notsock, "%s/plain", dir);
  put_file(dir, "plain", "x");
  ASSERT_INT_EQ(tg_runtime_listen(rt2, notsock, err), -EEXIST);
  ASSERT_CONTAINS(err, "not a socket");
  tg_runtime_free(rt2);

  save_ver(dir, "two", put_file);
  char *out, *errs;
  char *reload_json[] = {TOOLGATE_BIN, "reload", "--socket", sock, "--json", NULL};
  ASSERT_INT_EQ(run_cmd(rt, dir, reload_json, &out, &errs), 0);
  cJSON *r = cJSON_Parse(out);
  ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "ok")));
  ASSERT_NUM_EQ(num_at(r, "generation"), 2);
  ASSERT_NUM_EQ(num_at(r, "files"), 1);
  ASSERT_TRUE(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(r, "duration_ms")));
  cJSON_Delete(r);
  free(out);
  free(errs);
  ASSERT_STR_EQ(ev.last_trigger, "control");
  expect_ver(rt, "two");

  save_atomic(dir, "10_ver.lua", "local tg = require \"toolgate\"\ntg.rule {\n");
  char *reload_human[] = {TOOLGATE_BIN, "reload", "--socket", sock, NULL};
  ASSERT_INT_EQ(run_cmd(rt, dir, reload_human, &out, &errs), 1);
  ASSERT_CONTAINS(errs, "reload failed; generation 2 stays");
  ASSERT_CONTAINS(errs, "10_ver.lua:3:");
  free(out);
  free(errs);
  ASSERT_INT_EQ(tg_runtime_generation(rt), 2);
  expect_ver(rt, "two");

  tg_runtime_free(rt);
  ASSERT_TRUE(stat(sock, &st) < 0); /* removed with the runtime */
  ASSERT_INT_EQ(run_cmd(NULL, dir, reload_human, &out, &errs), 2);
  ASSERT_CONTAINS(errs, "no toolgate instance is running");
  free(out);
  free(errs);
  remove_tree(dir);
}

/* Requests the server must refuse politely, from a child process (the
 * client blocks; the server is on this process's loop). */
static char *child_request(tg_runtime *rt, const char *sock, const char *req) {
  char path[300];
  snprintf(path, sizeof path, "%s.reply", sock);
  pid_t pid = fork();
  if (pid == 0) {
    char *reply = NULL, err[TG_ERRMSG];
    FILE *f = fopen(path, "wb");
    if (tg_control_request(sock, req, &reply, 5000, err) == 0) fputs(reply, f);
    else fprintf(f, "ERROR %s", err);
    fclose(f);
    _exit(0);
  }
  int st;
  while (waitpid(pid, &st, WNOHANG) == 0) run_for(rt, 2);
  char *reply = read_text(path);
  if (!reply) TG_FAIL("the client wrote no %s", path);
  return reply;
}

TEST(control_socket_protocol) {
  char *dir = temp_dir();
  save_ver(dir, "one", put_file);
  tg_runtime *rt = reload_runtime(dir, 0, NULL);
  char sock[300], err[TG_ERRMSG];
  snprintf(sock, sizeof sock, "%s/c.sock", dir);
  ASSERT_OK(tg_runtime_listen(rt, sock, err), err);
  char *s = child_request(rt, sock, "{\"cmd\":\"status\"}");
  cJSON *j = cJSON_Parse(s);
  ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok")));
  ASSERT_NUM_EQ(num_at(j, "pid"), getpid());
  ASSERT_STR_EQ(str_at(j, "policies"), dir);
  cJSON_Delete(j);
  free(s);
  s = child_request(rt, sock, "{\"cmd\":\"fly\"}");
  ASSERT_CONTAINS(s, "\"ok\":false");
  ASSERT_CONTAINS(s, "unknown command 'fly' (known: reload, status, hook)");
  free(s);
  s = child_request(rt, sock, "reload please");
  ASSERT_CONTAINS(s, "\"ok\":false");
  ASSERT_CONTAINS(s, "{\\\"cmd\\\":\\\"reload\\\"}");
  free(s);
  ASSERT_INT_EQ(tg_runtime_generation(rt), 1);
  /* the default path: per policies folder, in a private folder */
  char xdg[300], p1[512], p2[512];
  snprintf(xdg, sizeof xdg, "%s/xdg", dir);
  mkdir(xdg, 0700);
  setenv("XDG_RUNTIME_DIR", xdg, 1);
  ASSERT_OK(tg_control_path(dir, p1, sizeof p1, err), err);
  ASSERT_STARTS_WITH(p1, xdg);
  char other[300];
  snprintf(other, sizeof other, "%s/xdg/..", dir); /* the same folder */
  ASSERT_OK(tg_control_path(other, p2, sizeof p2, err), err);
  ASSERT_STR_EQ(p1, p2);
  ASSERT_TRUE(tg_control_path("/nonexistent/policies", p2, sizeof p2, err) < 0);
  ASSERT_CONTAINS(err, "cannot find the policies folder");
  tg_runtime *rt2 = reload_runtime(dir, 0, NULL);
  ASSERT_OK(tg_runtime_listen(rt2, NULL, err), err);
  ASSERT_STR_EQ(tg_runtime_control_path(rt2), p1);
  struct stat st;
  char sockdir[400];
  snprintf(sockdir, sizeof sockdir, "%s/toolgate", xdg);
  ASSERT_OK(stat(sockdir, &st));
  ASSERT_INT_EQ(st.st_mode & 0777, 0700);
  /* another instance on the folder: a socket of its own beside it, which
   * tg_control_paths lists with the first; the socket of an instance that
   * is gone (a pid no process has) is not listed, and the next one to
   * start removes it */
  char gone[600];
  snprintf(gone, sizeof gone, "%.*s.999999999.0.sock",
           (int)(strlen(p1) - strlen(".sock")), p1);
  make_stale_socket(gone);
  ASSERT_INT_EQ(tg_control_paths(dir, count_path, &n_paths, err), 1);
  tg_runtime *rt3 = reload_runtime(dir, 0, NULL);
  ASSERT_OK(tg_runtime_listen(rt3, NULL, err), err);
  const char *beside = tg_runtime_control_path(rt3);
  ASSERT_TRUE(strcmp(beside, p1) != 0);
  ASSERT_STARTS_WITH(beside, sockdir);
  ASSERT_TRUE(stat(gone, &st) < 0);
  n_paths = 0;
  ASSERT_INT_EQ(tg_control_paths(dir, count_path, &n_paths, err), 2);
  ASSERT_INT_EQ(n_paths, 2);
  char *s3 = child_request(rt3, beside, "{\"cmd\":\"reload\"}");
  ASSERT_CONTAINS(s3, "\"ok\":true");
  ASSERT_INT_EQ(tg_runtime_generation(rt3), 2);
  free(s3);
  /* the first one goes: the one beside it moves to the folder's path (it
   * checks every second), its own socket file goes */
  char was[600];
  snprintf(was, sizeof was, "%s", beside);
  tg_runtime_free(rt2);
  for (int waited = 0; waited < 30000 &&
       strcmp(tg_runtime_control_path(rt3), p1); waited += 50)
    run_for(rt3, 50);
  ASSERT_STR_EQ(tg_runtime_control_path(rt3), p1);
  ASSERT_TRUE(stat(was, &st) < 0);
  s3 = child_request(rt3, p1, "{\"cmd\":\"reload\"}");
  ASSERT_CONTAINS(s3, "\"ok\":true");
  free(s3);
  /* a new one now goes beside it, and moves when it goes */
  tg_runtime *rt4 = reload_runtime(dir, 0, NULL);
  ASSERT_OK(tg_runtime_listen(rt4, NULL, err), err);
  ASSERT_TRUE(strcmp(tg_runtime_control_path(rt4), p1) != 0);
  run_for(rt3, 50);
  ASSERT_STR_EQ(tg_runtime_control_path(rt3), p1); /* it stays */
  tg_runtime_free(rt3);
  for (int waited = 0; waited < 30000 &&
       strcmp(tg_runtime_control_path(rt4), p1); waited += 50)
    run_for(rt4, 50);
  ASSERT_STR_EQ(tg_runtime_control_path(rt4), p1);
  n_paths = 0;
  ASSERT_INT_EQ(tg_control_paths(dir, count_path, &n_paths, err), 1);
  tg_runtime_free(rt4);
  n_paths = 0;
  ASSERT_INT_EQ(tg_control_paths(dir, count_path, &n_paths, err), 0);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* ---- the control socket under a flood of idle connections ------------------ */

static int count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n - 1; /* the one opendir holds */
}

/* Is fd readable now? */
static int readable(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

typedef struct {
  int busy_events;
  double dropped, limit;
} busy_seen;

static void on_busy(tg_runtime *rt, const tg_event *ev, void *ud) {
  busy_seen *b = ud;
  if (strcmp(ev->type, "control_busy") != 0) return;
  b->busy_events++;
  b->dropped += num_at(ev->data, "dropped");
  b->limit = num_at(ev->data, "limit");
}

/* The child of control_socket_flood, forked before the runtime is made:
 * waits for a byte on `go`, opens n connections that say nothing, tells
 * the parent (a byte on `ready`), and at the next byte on `go` writes
 * what its first connection received to `out`. */
static void flood_child(const char *sock, int n, int ready, int go,
                        const char *out) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  if (strlen(sock) >= sizeof a.sun_path) _exit(1);
  memcpy(a.sun_path, sock, strlen(sock) + 1);
  char b;
  if (read(go, &b, 1) != 1) _exit(1);
  int *fds = calloc((size_t)n, sizeof *fds), opened = 0;
  for (; fds && opened < n; opened++) {
    fds[opened] = socket(AF_UNIX, SOCK_STREAM, 0); /* blocks while the */
    if (fds[opened] < 0 ||                         /* backlog is full */
        connect(fds[opened], (struct sockaddr *)&a, sizeof a) < 0)
      break;
  }
  b = opened == n ? 'y' : 'n';
  if (write(ready, &b, 1) != 1 || read(go, &b, 1) != 1) _exit(1);
  FILE *f = fopen(out, "wb");
  char buf[512] = "";
  struct pollfd p = {opened > 0 ? fds[0] : -1, POLLIN, 0};
  if (poll(&p, 1, 5000) > 0) {
    ssize_t r = recv(fds[0], buf, sizeof buf - 1, 0);
    if (r > 0) buf[r] = '\0';
  }
  fprintf(f, "opened %d of %d\n%s", opened, n, buf);
  fclose(f);
  free(fds);
  _exit(0);
}

TEST(control_socket_flood) {
  char *dir = temp_dir();
  char sock[300], out_path[300], err[TG_ERRMSG];
  snprintf(sock, sizeof sock, "%s/c.sock", dir);
  snprintf(out_path, sizeof out_path, "%s/flood.out", dir);
  int ready[2], go[2];
  ASSERT_OK(pipe(ready));
  ASSERT_OK(pipe(go));
  pid_t pid = fork();
  if (pid == 0) flood_child(sock, 2000, ready[1], go[0], out_path);
  save_ver(dir, "one", put_file);
  tg_runtime *rt = reload_runtime(dir, 0, NULL);
  busy_seen busy = {0, 0, 0};
  ASSERT_TRUE(tg_events_subscribe(rt, on_busy, &busy) > 0);
  ASSERT_OK(tg_runtime_listen(rt, sock, err), err);
  int base = count_fds();
  ASSERT_INT_EQ(write(go[1], "s", 1), 1);
  /* accept while the child connects; watch the descriptors we hold */
  int most = 0;
  uint64_t t0 = uv_hrtime();
  while (!readable(ready[0])) {
    run_for(rt, 2);
    int n = count_fds();
    if (n > most) most = n;
    if (uv_hrtime() - t0 > (tg_test_timeout_s() - 10) * 1000000000ull)
      TG_FAIL("the flood did not end");
  }
  char b = 0;
  ASSERT_INT_EQ(read(ready[0], &b, 1), 1);
  ASSERT_INT_EQ(b, 'y'); /* all 2000 connected: the excess was accepted */
  run_for(rt, 20);
  int n = count_fds();
  if (n > most) most = n;
  if (most > base + TG_CONTROL_MAX_CONNS + 2)
    TG_FAIL("%d descriptors open during the flood (%d before): connections "
            "are not capped", most, base);

  /* a real reload gets through, the 2000 still connected */
  save_ver(dir, "two", put_file);
  char *rout, *rerr;
  char *reload_json[] = {TOOLGATE_BIN, "reload", "--socket", sock, "--json",
                         "--timeout-ms", "30000", NULL};
  ASSERT_INT_EQ(run_cmd(rt, dir, reload_json, &rout, &rerr), 0);
  ASSERT_CONTAINS(rout, "\"ok\":true");
  ASSERT_CONTAINS(rout, "\"generation\":2");
  free(rout);
  free(rerr);
  expect_ver(rt, "two");

  /* the first connection lost its slot and was told why */
  ASSERT_INT_EQ(write(go[1], "g", 1), 1);
  int st;
  while (waitpid(pid, &st, WNOHANG) == 0) run_for(rt, 2);
  char *said = read_text(out_path);
  ASSERT_CONTAINS(said, "opened 2000 of 2000");
  ASSERT_CONTAINS(said, "\"ok\":false");
  ASSERT_CONTAINS(said, "too many control connections (32 open)");
  free(said);
  /* and the log says so, not once per connection */
  ASSERT_TRUE(busy.busy_events >= 1);
  ASSERT_TRUE(busy.busy_events <=
              2 + (int)((uv_hrtime() - t0) / 1000000000ull));
  ASSERT_NUM_EQ(busy.limit, TG_CONTROL_MAX_CONNS);
  ASSERT_TRUE(busy.dropped >= 1);
  char *s = child_request(rt, sock, "{\"cmd\":\"status\"}");
  ASSERT_CONTAINS(s, "\"ok\":true");
  free(s);
  close(ready[0]);
  close(ready[1]);
  close(go[0]);
  close(go[1]);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* A NUL in a request, raw or escaped, is refused: the parser would decode
 * "reload\u0000x" and C would read "reload". */
TEST(control_socket_refuses_nul) {
  char *dir = temp_dir();
  save_ver(dir, "one", put_file);
  reloads ev = {0};
  tg_runtime *rt = reload_runtime(dir, 0, &ev);
  char sock[300], err[TG_ERRMSG];
  snprintf(sock, sizeof sock, "%s/c.sock", dir);
  ASSERT_OK(tg_runtime_listen(rt, sock, err), err);
  const char *bad[] = {"{\"cmd\":\"reload\\u0000x\"}",
                       "{\"cmd\\u0000\":\"reload\",\"cmd\":\"reload\"}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *s = child_request(rt, sock, bad[i]);
    ASSERT_CONTAINS(s, "\"ok\":false");
    ASSERT_CONTAINS(s, "NUL");
    free(s);
  }
  /* a backslash before u0000 is escaped itself: plain text, no NUL */
  char *s = child_request(rt, sock, "{\"x\":\"\\\\u0000\",\"cmd\":\"status\"}");
  ASSERT_CONTAINS(s, "\"ok\":true");
  free(s);
  ASSERT_INT_EQ(ev.loaded, 0);
  ASSERT_INT_EQ(tg_runtime_generation(rt), 1);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* A hook request whose line ends at EOF, with no newline (found by
 * spec/fuzz/fuzz_control): the event it announces can no longer come, so
 * the connection closes at once — it was held until the idle timeout
 * (10 s), after copying from a NULL "rest of the input" (undefined
 * behaviour; UBSan stops there). From a child: connect, send the line,
 * shut the sending side, time the close. */
TEST(control_socket_hook_line_at_eof) {
  char *dir = temp_dir();
  char sock[300], path[320], err[TG_ERRMSG];
  snprintf(sock, sizeof sock, "%s/c.sock", dir);
  snprintf(path, sizeof path, "%s.took", sock);
  /* the client forked before the runtime is made, as flood_child is: a
   * child forked after it would hold (and, under valgrind, leak) its
   * memory */
  int go[2];
  ASSERT_OK(pipe(go));
  pid_t pid = fork();
  if (pid == 0) {
    static const char line[] = "{\"cmd\":\"hook\",\"agent\":\"codex\",\"bytes\":5}";
    char b;
    free(dir);
    close(go[1]);
    if (read(go[0], &b, 1) != 1) _exit(3);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, sock, strlen(sock) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) _exit(1);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (write(fd, line, sizeof line - 1) != (ssize_t)(sizeof line - 1)) _exit(2);
    shutdown(fd, SHUT_WR);
    char buf[512];
    ssize_t n, got = 0;
    while ((n = read(fd, buf, sizeof buf)) > 0) got += n;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    FILE *f = fopen(path, "w");
    fprintf(f, "%ld %zd", (long)((t1.tv_sec - t0.tv_sec) * 1000 +
                                 (t1.tv_nsec - t0.tv_nsec) / 1000000), got);
    fclose(f);
    _exit(0);
  }
  close(go[0]);
  save_ver(dir, "one", put_file);
  tg_runtime *rt = reload_runtime(dir, 0, NULL);
  ASSERT_OK(tg_runtime_listen(rt, sock, err), err);
  ASSERT_INT_EQ(write(go[1], "s", 1), 1);
  close(go[1]);
  int st;
  while (waitpid(pid, &st, WNOHANG) == 0) run_for(rt, 2);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  char *took = read_text(path);
  ASSERT_NOT_NULL(took);
  long ms = -1, bytes = -1;
  ASSERT_INT_EQ(sscanf(took, "%ld %ld", &ms, &bytes), 2);
  /* closed at EOF, not at the 10 s idle timeout (TG_CONTROL_IDLE_MS): 8 s
   * leaves room for valgrind on a loaded machine */
  if (ms > 8000) TG_FAIL("the connection was held %ld ms after EOF", ms);
  ASSERT_INT_EQ(bytes, 0); /* closed: the client has left */
  free(took);
  tg_runtime_free(rt);
  remove_tree(dir);
}

/* A server that answers each of `n` connections with replies[i], in a
 * child; `dir` is the test's, freed in the child's copy of the heap. */
static pid_t fake_instance(char *dir, const char *sock,
                           const char *const *replies, int n) {
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  ASSERT_TRUE(strlen(sock) < sizeof a.sun_path);
  memcpy(a.sun_path, sock, strlen(sock) + 1);
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_TRUE(s >= 0);
  if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 4) < 0)
    TG_FAIL("fake instance on %s: %s", sock, strerror(errno));
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < n; i++) {
      int c = accept(s, NULL, NULL);
      char ch = 0;
      while (c >= 0 && ch != '\n')
        if (recv(c, &ch, 1, 0) != 1) _exit(1);
      if (send(c, replies[i], strlen(replies[i]), MSG_NOSIGNAL) < 0) _exit(1);
      close(c);
    }
    free(dir);
    _exit(0);
  }
  close(s);
  return pid;
}

/* `toolgate reload` reads the instance's reply as a peer's word: missing
 * fields are said to be missing, not printed as "(null)" or "nan". */
TEST(toolgate_reload_odd_replies) {
  char *dir = temp_dir();
  char sock[300];
  snprintf(sock, sizeof sock, "%s/fake.sock", dir);
  const char *replies[] = {"{\"ok\":false}\n", "{\"ok\":true}\n",
                           "{\"ok\":false,\"error\":7,\"generation\":\"x\"}\n"};
  pid_t pid = fake_instance(dir, sock, replies, 3);
  char *argv[] = {TOOLGATE_BIN, "reload", "--socket", sock, NULL};
  char *out, *errs;
  ASSERT_INT_EQ(run_cmd(NULL, dir, argv, &out, &errs), 1);
  ASSERT_CONTAINS(errs, "reload failed: (the instance gave no reason)");
  free(out);
  free(errs);
  ASSERT_INT_EQ(run_cmd(NULL, dir, argv, &out, &errs), 0);
  ASSERT_CONTAINS(out, "reloaded (the instance did not say which generation)");
  ASSERT_NOT_CONTAINS(out, "nan");
  free(out);
  free(errs);
  ASSERT_INT_EQ(run_cmd(NULL, dir, argv, &out, &errs), 1);
  ASSERT_CONTAINS(errs, "reload failed: (the instance gave no reason)");
  free(out);
  free(errs);
  int st;
  ASSERT_INT_EQ(waitpid(pid, &st, 0), pid);
  remove_tree(dir);
}

/* ---- `toolgate watch` end to end -------------------------------------------- */

/* Waits until the file has a line containing text (the watcher's output). */
static int wait_line(const char *path, const char *text, int ms) {
  for (int waited = 0; waited < ms; waited += 20) {
    char *s = read_text(path); /* NULL until the child has made it */
    int hit = s && strstr(s, text) != NULL;
    free(s);
    if (hit) return 1;
    usleep(20000);
  }
  return 0;
}

/* How many times text occurs in s. */
static int count_of(const char *s, const char *text) {
  int n = 0;
  for (const char *p = s; p && (p = strstr(p, text)); p += strlen(text)) n++;
  return n;
}

static pid_t spawn_watch(const char *dir, const char *out_path) {
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM); /* a failing test leaves no instance */
    int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int n = open("/dev/null", O_RDONLY);
    dup2(o, 1);
    dup2(o, 2);
    dup2(n, 0);
    execl(TOOLGATE_BIN, TOOLGATE_BIN, "watch", "--policies", dir, "--json",
          (char *)NULL);
    _exit(127);
  }
  return pid;
}

static int wait_exit(pid_t pid, int ms) {
  int st = 0;
  for (int waited = 0; waited < ms; waited += 10) {
    if (waitpid(pid, &st, WNOHANG) == pid)
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  return -1;
}

TEST(toolgate_watch_end_to_end) {
  char *dir = temp_dir();
  char xdg[300], out_path[300], out2[300];
  snprintf(xdg, sizeof xdg, "%s/run", dir);
  mkdir(xdg, 0700);
  setenv("XDG_RUNTIME_DIR", xdg, 1); /* the children's well-known place */
  char pol[300];
  snprintf(pol, sizeof pol, "%s/policies", dir);
  mkdir(pol, 0700);
  snprintf(out_path, sizeof out_path, "%s/watch.out", dir);
  snprintf(out2, sizeof out2, "%s/watch2.out", dir);
  save_ver(pol, "one", put_file);
  char *out, *errs;
  char *reload[] = {TOOLGATE_BIN, "reload", "--policies", pol, "--json", NULL};
  ASSERT_INT_EQ(run_cmd(NULL, dir, reload, &out, &errs), 2); /* none yet */
  ASSERT_CONTAINS(errs, "no toolgate instance is running");
  ASSERT_CONTAINS(errs, "toolgate watch");
  free(out);
  free(errs);

  pid_t pid = spawn_watch(pol, out_path);
  if (!wait_line(out_path, "\"type\":\"watching\"", WAIT_MS))
    TG_FAIL("toolgate watch did not start");
  char sock[512], err[TG_ERRMSG];
  ASSERT_OK(tg_control_path(pol, sock, sizeof sock, err), err);
  struct stat st;
  ASSERT_OK(stat(sock, &st));

  save_ver(pol, "two", save_atomic); /* the folder watch */
  if (!wait_line(out_path, "\"generation\":2", WAIT_MS))
    TG_FAIL("the save was not reloaded");
  ASSERT_TRUE(wait_line(out_path, "\"trigger\":\"watch\"", 100));

  kill(pid, SIGHUP);
  if (!wait_line(out_path, "\"trigger\":\"signal\"", WAIT_MS))
    TG_FAIL("SIGHUP did not reload");

  ASSERT_INT_EQ(run_cmd(NULL, dir, reload, &out, &errs), 0);
  ASSERT_CONTAINS(out, "\"ok\":true");
  ASSERT_CONTAINS(out, "\"generation\":4");
  free(out);
  free(errs);
  ASSERT_TRUE(wait_line(out_path, "\"trigger\":\"control\"", WAIT_MS));

  /* a broken file: reload exits 1 naming file:line, the watcher says so */
  save_atomic(pol, "20_bad.lua", "local tg = require \"toolgate\"\n\nthis is not lua\n");
  ASSERT_TRUE(wait_line(out_path, "\"type\":\"policy_error\"", WAIT_MS));
  char *human[] = {TOOLGATE_BIN, "reload", "--policies", pol, NULL};
  ASSERT_INT_EQ(run_cmd(NULL, dir, human, &out, &errs), 1);
  ASSERT_CONTAINS(errs, "20_bad.lua:3:");
  ASSERT_CONTAINS(errs, "generation 4 stays");
  free(out);
  free(errs);
  remove_file(pol, "20_bad.lua");
  ASSERT_TRUE(wait_line(out_path, "\"generation\":5", WAIT_MS));

  /* a second instance for the same folder runs beside the first, on a
   * socket of its own; `toolgate reload` reaches both */
  pid_t pid2 = spawn_watch(pol, out2);
  if (!wait_line(out2, "\"type\":\"watching\"", WAIT_MS))
    TG_FAIL("a second toolgate watch did not start beside the first");
  char *said = read_text(out2);
  ASSERT_TRUE(said && !strstr(said, sock)); /* not the first one's socket */
  free(said);
  ASSERT_INT_EQ(run_cmd(NULL, dir, reload, &out, &errs), 0);
  ASSERT_INT_EQ(count_of(out, "\"ok\":true"), 2); /* a line each */
  free(out);
  free(errs);
  ASSERT_TRUE(wait_line(out_path, "\"generation\":6", WAIT_MS));
  ASSERT_TRUE(wait_line(out2, "\"trigger\":\"control\"", WAIT_MS));
  kill(pid2, SIGTERM);
  ASSERT_INT_EQ(wait_exit(pid2, WAIT_MS), 0);
  unlink(out2);

  kill(pid, SIGINT);
  ASSERT_INT_EQ(wait_exit(pid, WAIT_MS), 0);
  ASSERT_TRUE(stat(sock, &st) < 0); /* the socket went with it */
  ASSERT_INT_EQ(run_cmd(NULL, dir, reload, &out, &errs), 2);
  free(out);
  free(errs);

  /* a crash leaves a socket behind: the next start replaces it */
  make_stale_socket(sock);
  pid = spawn_watch(pol, out2); /* out2: a fresh file, not the old output */
  if (!wait_line(out2, "\"type\":\"watching\"", WAIT_MS))
    TG_FAIL("toolgate watch did not start over a stale socket");
  ASSERT_INT_EQ(run_cmd(NULL, dir, reload, &out, &errs), 0);
  free(out);
  free(errs);
  kill(pid, SIGTERM);
  ASSERT_INT_EQ(wait_exit(pid, WAIT_MS), 0);
  remove_tree(dir);
}

/* ---- explain ------------------------------------------------------------- */

static const char *explain_policy =
    "local tg = require \"toolgate\"\n"
    "local rule_runs, hook_runs, dry = 0, 0, nil\n"
    "tg.rule { name = \"for-exec\", priority = 10, tools = { \"exec\" },\n"
    "  check = function() return tg.deny(\"no\") end }\n"
    "tg.rule { name = \"looks\", priority = 20, check = function(call)\n"
    "  rule_runs = rule_runs + 1; dry = call.dry_run end }\n"
    "tg.rule { name = \"shaky\", priority = 30, fail = \"open\", check = function(call)\n"
    "  if call.tool == \"side\" then error(\"shaky rule\") end end }\n"
    "tg.rule { name = \"ask-side\", priority = 40, tools = { \"side\" },\n"
    "  check = function(call) return tg.ask(\"write \" .. call.args.path .. \"?\") end }\n"
    "tg.rule { name = \"deny-all\", priority = 50, tools = { \"side\", \"gone\" },\n"
    "  check = function() return tg.deny(\"late\") end }\n"
    "tg.rule { name = \"strict\", priority = 60, tools = { \"broken\" },\n"
    "  check = function() error(\"strict rule failed\") end }\n"
    "tg.before_tool(\"side\", function() hook_runs = hook_runs + 1 end)\n"
    "tg.before_tool(\"*\", function() end)\n"
    "tg.after_tool(\"*\", function() end)\n"
    "tg.after_tool(\"side\", function() hook_runs = hook_runs + 1 end)\n"
    "tg.tool { name = \"gone\", run = function() return 1 end }\n"
    "tg.tool { name = \"broken\", run = function() return 1 end }\n"
    "tg.tool { name = \"counts\", read_only = true, run = function()\n"
    "  return { rules = rule_runs, hooks = hook_runs, dry = dry } end }\n";

/* A C tool with a side effect on a file: it must not run. */
static void side_start(tg_exec *ex, const cJSON *args, void *ud) {
  FILE *f = fopen((const char *)ud, "wb");
  if (f) fclose(f);
  tg_exec_finish_ok(ex, cJSON_CreateString("written"));
}

static int n_events;
static void count_event(tg_runtime *rt, const tg_event *ev, void *ud) {
  n_events++;
}

static const cJSON *rule_at(const cJSON *j, int i) {
  return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "rules"), i);
}

static cJSON *explain_ok(tg_runtime *rt, const char *tool, const char *args) {
  char err[TG_ERRMSG] = "";
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.tool = tool;
  req.args_json = args;
  cJSON *j = tg_explain(rt, &req, err);
  if (!j) TG_FAIL("tg_explain(%s): %s", tool, err);
  return j;
}

static tg_runtime *explain_rt(char *dir, char *marker) {
  put_file(dir, "10_explain.lua", explain_policy);
  tg_runtime *rt = reload_runtime(dir, 0, NULL);
  tg_runtime_set_approve_mode(rt, TG_APPROVE_DENY);
  char err[TG_ERRMSG];
  cJSON *schema = cJSON_Parse("{\"type\":\"object\",\"required\":[\"path\"]}");
  tg_tool_def def = {.name = "side", .schema = schema, .start = side_start,
                     .ud = marker};
  ASSERT_OK(tg_tool_register(rt, &def, err), err);
  cJSON_Delete(schema);
  return rt;
}

TEST(explain_shows_rules_hooks_and_the_decider) {
  char *dir = temp_dir();
  char marker[300];
  snprintf(marker, sizeof marker, "%s/side-effect", dir);
  tg_runtime *rt = explain_rt(dir, marker);
  ASSERT_TRUE(tg_events_subscribe(rt, count_event, NULL) > 0);

  cJSON *j = explain_ok(rt, "side", "{\"path\":\"a.txt\"}");
  ASSERT_INT_EQ(n_events, 0); /* a dry run is not a call */
  ASSERT_FALSE(file_exists(dir, "side-effect")); /* the tool did not run */
  ASSERT_INT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "rules")), 6);
  const char *names[] = {"for-exec", "looks", "shaky", "ask-side", "deny-all", "strict"};
  const char *status[] = {"skipped", "no answer", "error", "answered",
                          "not reached", "skipped"};
  for (int i = 0; i < 6; i++) {
    ASSERT_STR_EQ(str_at(rule_at(j, i), "name"), names[i]);
    ASSERT_STR_EQ(str_at(rule_at(j, i), "status"), status[i]);
  }
  ASSERT_CONTAINS(str_at(rule_at(j, 0), "why"), "applies to: exec");
  ASSERT_CONTAINS(str_at(rule_at(j, 2), "error"), "shaky rule");
  ASSERT_STR_EQ(str_at(rule_at(j, 2), "fail"), "open");
  ASSERT_STR_EQ(str_at(rule_at(j, 3), "answer"), "ask");
  ASSERT_STR_EQ(str_at(rule_at(j, 3), "reason"), "write a.txt?");
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "decision");
  ASSERT_STR_EQ(str_at(d, "verdict"), "ask");
  ASSERT_STR_EQ(str_at(d, "rule"), "ask-side");
  ASSERT_CONTAINS(str_at(d, "where"), "10_explain.lua:10");
  ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(d, "by_default")));
  ASSERT_CONTAINS(str_at(j, "approval"), "rejected without asking");
  ASSERT_INT_EQ(bool_at(cJSON_GetObjectItemCaseSensitive(j, "validation"), "ok"), 1);
  /* hooks in run order: "*" first; post-hooks backwards */
  const cJSON *pre = cJSON_GetObjectItemCaseSensitive(j, "pre_hooks");
  const cJSON *post = cJSON_GetObjectItemCaseSensitive(j, "post_hooks");
  ASSERT_INT_EQ(cJSON_GetArraySize(pre), 2);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(pre, 0), "tool"), "*");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(pre, 1), "tool"), "side");
  ASSERT_INT_EQ(cJSON_GetArraySize(post), 2);
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(post, 0), "tool"), "side");
  ASSERT_STR_EQ(str_at(cJSON_GetArrayItem(post, 1), "tool"), "*");
  ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "hooks_run")));
  cJSON_Delete(j);

  /* "counts" is read-only and no rule answers for it: allowed by default */
  j = explain_ok(rt, "counts", "{}");
  d = cJSON_GetObjectItemCaseSensitive(j, "decision");
  ASSERT_STR_EQ(str_at(d, "verdict"), "allow");
  ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "by_default")));
  ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(d, "rule")));
  ASSERT_CONTAINS(str_at(d, "why"), "read-only");
  cJSON_Delete(j);
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(explain_runs_rules_but_not_hooks_or_tools) {
  char *dir = temp_dir();
  char marker[300];
  snprintf(marker, sizeof marker, "%s/side-effect", dir);
  tg_runtime *rt = explain_rt(dir, marker);
  cJSON_Delete(explain_ok(rt, "side", "{\"path\":\"a.txt\"}"));
  outcome o = call_tool(rt, "counts", NULL);
  ASSERT_CALL_OK(o);
  /* the explain ran "looks" once, and so did this call; no hook of "side" ran */
  ASSERT_NUM_EQ(num_at(o.result, "rules"), 2);
  ASSERT_NUM_EQ(num_at(o.result, "hooks"), 0);
  ASSERT_TRUE(bool_at(o.result, "dry") != 1); /* this call is real */
  outcome_free(&o);
  ASSERT_FALSE(file_exists(dir, "side-effect"));
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(explain_default_deny_errors_and_bad_requests) {
  char *dir = temp_dir();
  char marker[300];
  snprintf(marker, sizeof marker, "%s/side-effect", dir);
  tg_runtime *rt = explain_rt(dir, marker);
  /* "gone": "deny-all" answers; a deny ends the call before any hook */
  cJSON *j = explain_ok(rt, "gone", "{}");
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "decision");
  ASSERT_STR_EQ(str_at(d, "verdict"), "deny");
  ASSERT_STR_EQ(str_at(d, "rule"), "deny-all");
  ASSERT_STR_EQ(str_at(d, "reason"), "late");
  ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "hooks_run")));
  ASSERT_NULL(cJSON_GetObjectItemCaseSensitive(j, "approval"));
  cJSON_Delete(j);
  /* a rule failing closed decides: a POLICY error */
  j = explain_ok(rt, "broken", "{}");
  d = cJSON_GetObjectItemCaseSensitive(j, "decision");
  ASSERT_STR_EQ(str_at(d, "rule"), "strict");
  ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "policy_error")));
  ASSERT_STR_EQ(str_at(rule_at(j, 5), "status"), "error");
  ASSERT_STR_EQ(str_at(rule_at(j, 5), "fail"), "closed");
  cJSON_Delete(j);
  /* the schema check is shown, not enforced */
  j = explain_ok(rt, "side", "{}");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "validation");
  ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(v, "ok")));
  ASSERT_CONTAINS(str_at(v, "error"), "path");
  cJSON_Delete(j);
  /* no rule answers, not read-only: the configured default */
  put_file(dir, "10_explain.lua",
           "local tg = require \"toolgate\"\n"
           "tg.tool { name = \"w\", run = function() return 1 end }\n");
  char err[TG_ERRMSG] = "";
  ASSERT_OK(tg_runtime_load_policies(rt, NULL, err), err);
  j = explain_ok(rt, "w", "{}");
  d = cJSON_GetObjectItemCaseSensitive(j, "decision");
  ASSERT_STR_EQ(str_at(d, "verdict"), "allow"); /* the runtime's default */
  ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "by_default")));
  ASSERT_CONTAINS(str_at(d, "why"), "default_verdict");
  cJSON_Delete(j);
  /* bad requests */
  tg_call_request req;
  memset(&req, 0, sizeof req);
  req.tool = "nope";
  ASSERT_NULL(tg_explain(rt, &req, err));
  ASSERT_CONTAINS(err, "unknown tool 'nope' (registered:");
  ASSERT_CONTAINS(err, "side");
  req.tool = "w";
  req.args_json = "{\"a\":";
  ASSERT_NULL(tg_explain(rt, &req, err));
  ASSERT_CONTAINS(err, "not valid JSON");
  req.args_json = "[1]";
  ASSERT_NULL(tg_explain(rt, &req, err));
  ASSERT_CONTAINS(err, "must be a JSON object");
  tg_runtime_free(rt);
  remove_tree(dir);
}

TEST(toolgate_explain_cli) {
  char *dir = temp_dir();
  put_file(dir, "10_explain.lua", explain_policy);
  char *out, *errs;
  char *human[] = {TOOLGATE_BIN, "explain", "gone", "{}", "--policies", dir, NULL};
  ASSERT_INT_EQ(run_cmd(NULL, dir, human, &out, &errs), 0);
  ASSERT_CONTAINS(out, "rules, in evaluation order:");
  char *a = strstr(out, "for-exec"), *b = strstr(out, "looks");
  char *c = strstr(out, "deny-all");
  ASSERT_TRUE(a && b && c && a < b && b < c);
  ASSERT_CONTAINS(out, "skipped (applies to: exec)");
  ASSERT_CONTAINS(out, "deny: late   <- decides");
  ASSERT_CONTAINS(out, "verdict   deny, by rule 'deny-all'");
  ASSERT_CONTAINS(out, "would not run");
  free(out);
  free(errs);
  char *json[] = {TOOLGATE_BIN, "explain", "gone", "{}", "--policies", dir,
                  "--json", NULL};
  ASSERT_INT_EQ(run_cmd(NULL, dir, json, &out, &errs), 0);
  cJSON *j = cJSON_Parse(out);
  ASSERT_NOT_NULL(j);
  ASSERT_STR_EQ(str_at(cJSON_GetObjectItemCaseSensitive(j, "decision"), "rule"), "deny-all");
  cJSON_Delete(j);
  free(out);
  free(errs);
  char *unknown[] = {TOOLGATE_BIN, "explain", "nope", "{}", "--policies", dir, NULL};
  ASSERT_INT_EQ(run_cmd(NULL, dir, unknown, &out, &errs), 2);
  ASSERT_CONTAINS(errs, "unknown tool 'nope'");
  free(out);
  free(errs);
  char *badjson[] = {TOOLGATE_BIN, "explain", "gone", "{x", "--policies", dir, NULL};
  ASSERT_INT_EQ(run_cmd(NULL, dir, badjson, &out, &errs), 2);
  free(out);
  free(errs);
  put_file(dir, "20_broken.lua", "local x = \n");
  ASSERT_INT_EQ(run_cmd(NULL, dir, human, &out, &errs), 2);
  ASSERT_CONTAINS(errs, "20_broken.lua:");
  free(out);
  free(errs);
  remove_tree(dir);
}

TEST_MAIN(TEST_ENTRY(reload_200_times_under_load),
          TEST_ENTRY(watch_picks_up_editor_saves),
          TEST_ENTRY(watch_debounces_a_burst_of_saves),
          TEST_ENTRY(watch_reloads_under_load),
          TEST_ENTRY(sighup_reloads_only_when_asked),
          TEST_ENTRY(control_socket_reload_and_errors),
          TEST_ENTRY(control_socket_protocol),
          TEST_ENTRY(control_socket_flood),
          TEST_ENTRY(control_socket_refuses_nul),
          TEST_ENTRY(control_socket_hook_line_at_eof),
          TEST_ENTRY(toolgate_reload_odd_replies),
          TEST_ENTRY(toolgate_watch_end_to_end),
          TEST_ENTRY(explain_shows_rules_hooks_and_the_decider),
          TEST_ENTRY(explain_runs_rules_but_not_hooks_or_tools),
          TEST_ENTRY(explain_default_deny_errors_and_bad_requests),
          TEST_ENTRY(toolgate_explain_cli))
