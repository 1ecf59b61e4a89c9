-- The defaults of the switchable rule sets. Edit and save: a running
-- toolgate (watch = true, `toolgate watch`, `toolgate reload`) picks the
-- change up at once. A session may override them with the set_mode tool
-- (asked each time), and a host per call with call metadata
-- {mode = ..., template = ...} (say, the mode its UI shows).
return {
  -- "normal": the rules below decide; "plan": only reading and
  -- present_plan (every write is denied until the plan is approved);
  -- "yolo": every call that reaches it is allowed without asking.
  mode = "normal",

  -- Tools the user has told us to stop asking about ({ "exec" }: every
  -- command goes without asking, bar what an earlier rule denies).
  ignore = {},

  -- The active template, by name (nil: none). A template allows its tools
  -- without asking: what a task needs, and nothing more.
  template = nil,
  templates = {
    ["docs-writer"] = { "read_file", "list_dir", "write_file" },
    ["test-runner"] = { "read_file", "list_dir", "exec" },
  },

  -- What plan mode lets through besides present_plan and set_mode: tools
  -- that only read.
  plan_tools = { "read_file", "list_dir" },
}
