/* A C program against an installed toolgate (spec/pkg/test_install.sh):
 * a runtime with a policy folder and no C tools, one call to the Lua tool
 * "split", its outcome printed as JSON. Exit 0 when the call succeeded.
 * Usage: prog POLICY_DIR */
#include <stdio.h>
#include <cjson/cJSON.h>
#include <toolgate.h>

static void done(tg_runtime *rt, const tg_outcome *out, void *ud) {
  (void)rt;
  cJSON *json = tg_outcome_to_json(out);
  char *text = json ? cJSON_PrintUnformatted(json) : NULL;
  printf("%s\n", text ? text : "(no outcome)");
  cJSON_free(text);
  cJSON_Delete(json);
  *(int *)ud = out->status == TG_STATUS_OK ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s POLICY_DIR\n", argv[0]);
    return 2;
  }
  char err[TG_ERRMSG];
  tg_config cfg;
  tg_config_init(&cfg);
  cfg.policies_dir = argv[1];
  cfg.builtin_tools = 0;
  tg_runtime *rt = tg_runtime_new(&cfg, NULL, err);
  if (!rt) {
    fprintf(stderr, "tg_runtime_new: %s\n", err);
    return 2;
  }
  tg_call_request req = {0};
  req.tool = "split";
  req.args_json = "{\"line\":\"ls -l | wc -l\"}";
  int rc = 2;
  if (tg_call_start(rt, &req, done, &rc, err) != 0)
    fprintf(stderr, "tg_call_start: %s\n", err);
  else
    tg_runtime_run(rt, TG_RUN_DEFAULT);
  tg_runtime_free(rt);
  return rc;
}
