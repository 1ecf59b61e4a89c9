-- `toolgate test examples/modes`: each rule set, switched per call by the
-- host's metadata (the mode its UI shows). settings.lua's defaults: mode
-- normal, an empty ignore list, no template. The specs switch sessions
-- with set_mode and the ignore list.
local PLAN, YOLO = { mode = "plan" }, { mode = "yolo" }

return {
  { name = "normal: reading is allowed", tool = "read_file", args = { path = "a" },
    expect = "allow", rule = "read-only" },
  { name = "normal: a write is asked", tool = "write_file", args = { path = "a", content = "" },
    expect = "ask", rule = false },
  { name = "normal: exec is asked", tool = "exec", args = { command = "make" },
    expect = "ask", rule = false },

  { name = "plan: reading is allowed", tool = "read_file", args = { path = "a" },
    metadata = PLAN, expect = "allow", rule = "read-only" },
  { name = "plan: a write is denied", tool = "write_file", args = { path = "a", content = "" },
    metadata = PLAN, expect = "deny", rule = "plan-mode", reason_match = "until the plan is approved" },
  { name = "plan: exec is denied", tool = "exec", args = { command = "ls" },
    metadata = PLAN, expect = "deny", rule = "plan-mode" },
  { name = "plan: the plan is shown to the user", tool = "present_plan",
    args = { plan = "1. read\n2. fix" }, metadata = PLAN, expect = "ask",
    rule = "switches-are-asked", reason_match = "1%. read" },

  { name = "yolo: a write is allowed", tool = "write_file", args = { path = "a", content = "" },
    metadata = YOLO, expect = "allow", rule = "yolo" },
  { name = "yolo: switching is still asked", tool = "set_mode", args = { mode = "normal" },
    metadata = YOLO, expect = "ask", rule = "switches-are-asked", reason_match = "mode normal" },


  { name = "template: its tools are allowed", tool = "exec", args = { command = "make test" },
    metadata = { template = "test-runner" }, expect = "allow", rule = "template-allow-list",
    reason_match = "test%-runner" },
  { name = "template: other tools are asked", tool = "write_file", args = { path = "a", content = "" },
    metadata = { template = "test-runner" }, expect = "ask", rule = false },
  { name = "plan mode beats a template", tool = "exec", args = { command = "make test" },
    metadata = { mode = "plan", template = "test-runner" }, expect = "deny", rule = "plan-mode" },

  { name = "set_mode refuses an unknown mode", tool = "set_mode", args = { mode = "turbo" },
    expect_error_code = "INVALID_ARGS" },
}
