-- The modes example through the host module: a session switched with
-- set_mode (asked each time), plan mode left by an approved present_plan,
-- the ignore list, the host's per-call metadata, and the defaults changed
-- by editing settings.lua with the runtime running (a reload).
local H = require "spec.lua.helpers"

-- A copy of the example, so a spec may edit its settings.
local function copy_example()
  local dir = H.tmpdir()
  assert(os.execute("cp -R examples/modes/. " .. dir .. "/"))
  return dir
end

local function runtime(answers, dir)
  local asked = {}
  local rt = H.runtime(nil, {
    policies = dir or "examples/modes", workspace = H.tmpdir(),
    approve = function(req)
      asked[#asked + 1] = req.tool .. ": " .. (req.prompt or "")
      local a = answers[req.tool]
      if type(a) == "table" then return table.remove(a, 1) or "reject" end
      return a or "reject"
    end })
  return rt, asked
end

local function status(rt, tool, args, opts)
  return H.call(rt, tool, args, opts).status
end

describe("the modes example", function()
  after_each(H.cleanup)

  it("switches a session into plan mode, and out of it with an approved plan", function()
    local rt, asked = runtime { set_mode = "approve", present_plan = { "reject", "approve" } }
    assert.are.equal("ok", status(rt, "set_mode", { mode = "plan" }, { session = "s" }))
    assert.are.equal("set_mode: switch this session: mode plan?", asked[1])
    assert.are.equal("ok", status(rt, "list_dir", { path = "." }, { session = "s" }))
    local out = H.call(rt, "write_file", { path = "x", content = "" }, { session = "s" })
    assert.are.equal("denied", out.status)
    assert.is_truthy(H.has(out.error.message, "call present_plan with your plan"))
    -- other sessions are not in plan mode
    assert.are.equal("rejected", status(rt, "write_file", { path = "x", content = "" }, { session = "t" }))
    -- a rejected plan keeps plan mode; an approved one leaves it
    assert.are.equal("rejected", status(rt, "present_plan", { plan = "1. write x" }, { session = "s" }))
    assert.are.equal("denied", status(rt, "exec", { command = "true" }, { session = "s" }))
    assert.are.equal("ok", status(rt, "present_plan", { plan = "1. write x" }, { session = "s" }))
    assert.are.equal("rejected", status(rt, "write_file", { path = "x", content = "" }, { session = "s" }))
  end)

  it("refuses a template that does not exist, once the switch is approved", function()
    local rt = runtime { set_mode = "approve" }
    local out = H.call(rt, "set_mode", { template = "nope" })
    assert.are.equal("error", out.status)
    assert.are.equal("UNKNOWN_TEMPLATE", out.error.code)
    assert.are.equal("ok", status(rt, "set_mode", { template = "docs-writer" }))
    assert.are.equal("ok", status(rt, "write_file", { path = "d.md", content = "# D" }))
  end)

  it("lets nothing through yolo mode unasked but the switch back", function()
    local rt, asked = runtime { set_mode = "approve" }
    assert.are.equal("ok", status(rt, "set_mode", { mode = "yolo" }))
    assert.are.equal("ok", status(rt, "write_file", { path = "y", content = "1" }))
    assert.are.equal("ok", status(rt, "exec", { command = "true" }))
    assert.are.equal(1, #asked)
    assert.are.equal("ok", status(rt, "set_mode", { mode = "normal" }))
    assert.are.equal(2, #asked) -- even in yolo mode, switching is asked
    assert.are.equal("rejected", status(rt, "exec", { command = "true" }))
  end)

  it("never lets the agent switch without the user", function()
    local rt = runtime {}
    assert.are.equal("rejected", status(rt, "set_mode", { mode = "yolo" }))
    assert.are.equal("rejected", status(rt, "exec", { command = "true" }))
  end)

  it("stops asking about the tools on the ignore list", function()
    local rt, asked = runtime { set_mode = "approve" }
    assert.are.equal("rejected", status(rt, "exec", { command = "true" }))
    assert.are.equal("ok", status(rt, "set_mode", { ignore = { "exec" } }))
    assert.are.equal("ok", status(rt, "exec", { command = "true" }))
    assert.are.equal("set_mode: switch this session: stop asking about exec?", asked[2])
    assert.are.equal(2, #asked)
  end)

  it("follows the host's metadata per call", function()
    local rt = runtime {}
    assert.are.equal("denied", status(rt, "exec", { command = "true" }, { metadata = { mode = "plan" } }))
    assert.are.equal("ok", status(rt, "exec", { command = "true" }, { metadata = { template = "test-runner" } }))
    assert.are.equal("rejected", status(rt, "exec", { command = "true" }))
  end)

  it("takes new defaults when settings.lua is saved", function()
    local dir = copy_example()
    local rt = runtime({}, dir)
    assert.are.equal("rejected", status(rt, "exec", { command = "true" }))
    local path = dir .. "/modes/settings.lua"
    H.write(path, (H.read(path):gsub('mode = "normal"', 'mode = "plan"')))
    assert(rt:reload())
    assert.are.equal("denied", status(rt, "exec", { command = "true" }))
    assert.are.equal("ok", status(rt, "list_dir", { path = "." })) -- reading goes on
  end)
end)
