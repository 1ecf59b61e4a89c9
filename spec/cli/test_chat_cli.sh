#!/usr/bin/env bash
# test_chat_cli.sh — the chat side on the command line:
# `toolgate route` (like explain, for model requests), notifications on
# stderr, and what `toolgate check` lists of layers, routing hooks and
# budgets.
#
#   spec/cli/test_chat_cli.sh PATH/TO/toolgate
. "$(dirname "$0")/harness.sh" chat-cli "$@"

mkdir -p "$WORK/pol"
cat >"$WORK/pol/10-route.lua" <<'EOF'
local tg = require "toolgate"
tg.route_model(function(d)
  if (d.context.tokens or 0) > 100000 then
    d.selected_model = "big"; d.reason = "long context" end end)
tg.route_model(function(d) d.model = "typo" end)
tg.budget { name = "daily", limit = 5, period = "day" }
tg.before_chat(function(ctx) end)
tg.rule { name = "loud", check = function(call)
  tg.notify("warning", "Heads up", "a call of " .. call.tool); return tg.allow() end }
tg.tool { name = "echo", read_only = true, run = function(args) return args end }
EOF
cat >"$WORK/models.json" <<'EOF'
{"routes": {"light": "small", "heavy": "big"}, "default": "mid",
 "fallback": {"big": ["big-eu", "mid"], "*": ["mid"]}}
EOF
P=(--policies "$WORK/pol" --models "$WORK/models.json")

run route '{"task_weight":"light"}' "${P[@]}"
expect "route: the routing table decides" 0 "model     small" stdout
expect "route: the baseline is shown" 0 "baseline  small: routing table: task_weight 'light'" stdout
expect "route: a failing hook is shown, skipped" 0 "error, skipped: the decision has no field 'model'" stdout

run route '{"task_weight":"light","context":{"tokens":200000}}' "${P[@]}"
expect "route: a hook changes it, with its reason" 0 "small -> big: long context" stdout

run route --json '{"requested_model":"x","task_weight":"heavy"}' "${P[@]}" --unavailable big
json_ok "route --json: the fallback around an unavailable model" \
  'objs[0]["selected_model"] == "big-eu" and objs[0]["fallback"]["from"] == "big"
   and objs[0]["requested_model"] == "x" and objs[0]["available"] is True
   and objs[0]["hooks_run"] == 2 and len(objs[0]["errors"]) == 1'

run route --json '{"task_weight":"heavy"}' "${P[@]}" --unavailable big,big-eu,mid
json_ok "route --json: nothing to fall back to" \
  'objs[0]["selected_model"] == "big" and objs[0]["available"] is False
   and objs[0]["fallback"]["to"] is None'

run route '{}' --policies "$WORK/pol"
expect "route: no model at all exits 2" 2 "no model selected"
run route '{"modle":"x"}' "${P[@]}"
expect "route: an unknown key exits 2, named" 2 "unknown key 'modle'"
run route '{"task_weight":' "${P[@]}"
expect "route: bad JSON exits 2" 2 "not valid JSON"
echo '{"routes": {"light": 1}}' >"$WORK/bad-models.json"
run route '{}' --models "$WORK/bad-models.json"
expect "route: a bad models file exits 2, naming it" 2 "routes['light'] must be a model name"
run route '{}' --models "$WORK/nope.json"
expect "route: a missing models file exits 2" 2 "nope.json"

run call echo '{"a":1}' --policies "$WORK/pol"
expect "call: a notification is printed on stderr" 0 "toolgate: warning: Heads up: a call of echo"
if grep -q "Heads up" "$WORK/stdout"; then
  fail "call: notifications stay off stdout" "$OUT"
else
  pass "call: notifications stay off stdout"
fi

run check "$WORK/pol"
expect "check lists routing hooks" 0 "routing hooks, in run order" stdout
expect "check lists budgets" 0 "daily  5 per day" stdout
expect "check lists chat layers" 0 "before-chat layers, in run order" stdout

finish
