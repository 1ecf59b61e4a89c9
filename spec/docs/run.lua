-- spec/docs/run.lua — keeps README.md and docs/*.md true to the build.
--
-- Usage: INTERP spec/docs/run.lua SOURCE_DIR TOOLGATE LUA_MODULE_DIR [SANITIZE]
-- (the ctest `docs`; INTERP is the Lua the module was built for).
--
-- Four checks, each reported by file and line:
--   1. Runnable blocks. A fenced block preceded by the line `<!-- run -->`
--      runs: ```sh with bash -e, ```lua with INTERP and the built module on
--      LUA_CPATH. The blocks of one file run in order in one temp folder
--      (a later block may use what an earlier one made), with `toolgate` on
--      PATH and HOME, XDG_STATE_HOME and XDG_RUNTIME_DIR inside that folder.
--      When the next block is preceded by `<!-- output -->`, it is the
--      block's stdout, compared exactly (trailing blanks of each line and
--      trailing empty lines aside).
--   2. Flags. Every `--flag` written after `toolgate COMMAND` (in one inline
--      code span, or one line of a code block) is in `toolgate COMMAND
--      --help`; every inline span that starts with `--flag` names a flag
--      some command's --help has (flags of other programs are listed in
--      OTHER_FLAGS below).
--   3. Error codes. docs/errors.md lists exactly the codes of the code's
--      table (TG_ERROR_CODE_MAP, made into src/core/error_codes.c).
--   4. Links. Every relative link of README.md, docs/*.md and lua/README.md
--      names a file of the repository, and its #fragment a heading there.
-- Exit 0 when all hold, 1 with every failure listed.
local src, toolgate, moddir, sanitize = arg[1], arg[2], arg[3], arg[4]
if not (src and toolgate and moddir) then
  io.stderr:write("usage: run.lua SOURCE_DIR TOOLGATE LUA_MODULE_DIR [SANITIZE]\n")
  os.exit(2)
end
local interp = arg[-1] or "lua5.4"
local failures = {}
local function fail(where, msg) failures[#failures + 1] = where .. ": " .. msg end

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a"); f:close(); return s
end
local function write(path, s)
  local f = assert(io.open(path, "wb")); f:write(s); f:close()
end
local function capture(cmd)
  local p = assert(io.popen(cmd, "r"))
  local s = p:read("*a"); p:close(); return s
end
local function run_ok(cmd) -- true when cmd exits 0 (Lua 5.1 and 5.4)
  local a, _, c = os.execute(cmd)
  if type(a) == "number" then return a == 0 end
  return a == true and c == 0
end

-- The documents: README.md and docs/*.md.
local docs = { "README.md" }
for name in capture("ls " .. q(src .. "/docs") .. " 2>/dev/null"):gmatch("[^\n]+") do
  if name:match("%.md$") then docs[#docs + 1] = "docs/" .. name end
end

-- A document's fenced blocks: {lang, info, body, line, mark}, where mark is
-- the HTML comment just before the fence ("run", "output" or nil).
local function blocks_of(text)
  local lines, out = {}, {}
  for l in (text .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l end
  local i = 1
  while i <= #lines do
    local indent, fence, info = lines[i]:match("^(%s*)(```+)(.*)$")
    if fence then
      local body, j = {}, i + 1
      while j <= #lines and not lines[j]:match("^%s*" .. fence .. "%s*$") do
        body[#body + 1] = lines[j]:sub(#indent + 1); j = j + 1
      end
      local k, mark = i - 1, nil
      while k >= 1 and lines[k]:match("^%s*$") do k = k - 1 end
      if k >= 1 then mark = lines[k]:match("^%s*<!%-%- (%a+) %-%->%s*$") end
      out[#out + 1] = { lang = info:match("^(%w*)"), body = table.concat(body, "\n") .. "\n",
        line = i, mark = mark }
      i = j + 1
    else
      i = i + 1
    end
  end
  return out, lines
end

local function normalize(s)
  s = s:gsub("[ \t]+\n", "\n"):gsub("[ \t]+$", "")
  return (s:gsub("\n+$", ""))
end

-- ---- 1. runnable blocks ---------------------------------------------------
local bindir = toolgate:match("^(.*)/[^/]*$") or "."
local asan = sanitize == "ON" or sanitize == "on" or sanitize == "1" or sanitize == "TRUE"
for _, doc in ipairs(docs) do
  local blocks = blocks_of(read(src .. "/" .. doc) or "")
  local dir
  for n, b in ipairs(blocks) do
    if b.mark == "run" then
      if not dir then
        dir = capture("mktemp -d " .. q((os.getenv("TMPDIR") or "/tmp") .. "/toolgate-docs.XXXXXX")):gsub("%s+$", "")
        run_ok("mkdir -p -m 700 " .. q(dir .. "/.home") .. " " .. q(dir .. "/.state") .. " " .. q(dir .. "/.run"))
      end
      local env = "cd " .. q(dir) .. " && PATH=" .. q(bindir) .. ":\"$PATH\" HOME=" .. q(dir .. "/.home") ..
        " XDG_STATE_HOME=" .. q(dir .. "/.state") .. " XDG_RUNTIME_DIR=" .. q(dir .. "/.run") ..
        " LUA_CPATH=" .. q(moddir .. "/?.so;;") .. " LC_ALL=C.UTF-8 "
      local script, cmd = dir .. "/.block", nil
      write(script, b.body)
      if b.lang == "sh" or b.lang == "bash" then
        cmd = env .. "timeout 20 bash -e .block"
      elseif b.lang == "lua" then
        if asan then goto next_block end -- the interpreter is not instrumented
        cmd = env .. "timeout 20 " .. q(interp) .. " .block"
      else
        fail(doc .. ":" .. b.line, "a block marked run must be ```sh or ```lua, not ```" .. b.lang)
        goto next_block
      end
      local out = capture(cmd .. " 2>.stderr; echo \"exit=$?\"")
      local status = out:match("exit=(%d+)\n?$")
      out = out:gsub("exit=%d+\n?$", "")
      if status ~= "0" then
        fail(doc .. ":" .. b.line, "the block exits " .. tostring(status) .. "\n--- stdout\n" .. out ..
          "--- stderr\n" .. (read(dir .. "/.stderr") or ""))
      end
      local want = blocks[n + 1]
      if want and want.mark == "output" and normalize(want.body) ~= normalize(out) then
        fail(doc .. ":" .. b.line, "the output differs from the block at line " .. want.line ..
          "\n--- documented\n" .. want.body .. "--- got\n" .. out ..
          "--- stderr\n" .. (read(dir .. "/.stderr") or ""))
      end
    end
    ::next_block::
  end
  if dir then run_ok("rm -rf " .. q(dir)) end
end

-- ---- 2. flags -------------------------------------------------------------
local helps, all_flags = {}, {}
local commands = {}
for name in capture(q(toolgate) .. " --help 2>&1"):gmatch("\n  (%l+) +%S") do commands[#commands + 1] = name end
if #commands == 0 then fail("toolgate --help", "lists no commands") end
local function flags_in(text, into)
  for f in text:gmatch("%-%-[%a][%w%-]*") do into[f] = true end
  return into
end
for _, c in ipairs(commands) do
  helps[c] = flags_in(capture(q(toolgate) .. " " .. c .. " --help 2>&1"), { ["--help"] = true })
  flags_in(capture(q(toolgate) .. " " .. c .. " --help 2>&1"), all_flags)
end
all_flags["--help"], all_flags["--version"] = true, true
-- Flags the docs name that belong to other programs (cmake, git, rm, ...).
local OTHER_FLAGS = {}
for f in ([[--build --install --prefix --config --target --output-on-failure
  --cflags --libs --static --lua-version --force --force-with-lease --recursive
  --rec --ro-bind --bind --rm --toggle-collect --delete --no-audit --no-fund
  --loglevel]]):gmatch("%S+") do OTHER_FLAGS[f] = true end

local function check_span(doc, line, span, bare_ok)
  for cmd, rest in span:gmatch("toolgate%s+(%l+)([^`]*)") do
    if helps[cmd] then
      local upto = rest:match("^(.-)%f[%w]toolgate%s") or rest -- up to the next toolgate command
      upto = upto:gsub("%s[|;&]+%s.*$", "")                  -- not the next command of a pipe
      for f in upto:gmatch("%f[%w%-]%-%-[%a][%w%-]*") do
        if not helps[cmd][f] then
          fail(doc .. ":" .. line, "`toolgate " .. cmd .. "` has no option " .. f ..
            " (toolgate " .. cmd .. " --help)")
        end
      end
    end
  end
  if bare_ok then
    local f = span:match("^(%-%-[%a][%w%-]*)")
    if f and not all_flags[f] and not OTHER_FLAGS[f] then
      fail(doc .. ":" .. line, "no toolgate command has the option " .. f)
    end
  end
end

for _, doc in ipairs(docs) do
  local text = read(src .. "/" .. doc) or ""
  local blocks, lines = blocks_of(text)
  local in_block = {}
  for _, b in ipairs(blocks) do
    local n = 0
    for l in b.body:gmatch("([^\n]*)\n") do
      n = n + 1; in_block[b.line + n] = true
      if b.lang == "sh" or b.lang == "" or b.lang == "json" or b.lang == "toml" then
        check_span(doc, b.line + n, l, false)
      end
    end
    in_block[b.line] = true; in_block[b.line + n + 1] = true
  end
  -- inline code spans, joined over line breaks within a paragraph
  local para, start = {}, 1
  local function flush()
    local p = table.concat(para, " ")
    for span in p:gmatch("`([^`]+)`") do check_span(doc, start, span, true) end
    para = {}
  end
  for i, l in ipairs(lines) do
    if in_block[i] or l:match("^%s*$") then flush(); start = i + 1
    else if #para == 0 then start = i end; para[#para + 1] = l end
  end
  flush()
end

-- ---- 3. error codes -------------------------------------------------------
local code_names = {}
for _, f in ipairs { "include/toolgate.h", "src/core/error_codes.c" } do
  local text = read(src .. "/" .. f) or ""
  local map = text:match("#define TG_ERROR_CODE_MAP%(X%)(.-)\n[^\n]*[^\\]\n") or ""
  for name in map:gmatch("X%((%u[%u_]+)%s*,") do code_names[name] = true end
end
local documented = {}
for name in (read(src .. "/docs/errors.md") or ""):gmatch("\n| `(%u[%u_]+)` |") do
  documented[name] = true
  if not code_names[name] then
    fail("docs/errors.md", name .. " is not in the code's table (TG_ERROR_CODE_MAP)")
  end
end
if next(code_names) == nil then fail("TG_ERROR_CODE_MAP", "not found in include/toolgate.h or src/core/error_codes.c") end
for name in pairs(code_names) do
  if not documented[name] then fail("docs/errors.md", "does not list " .. name) end
end

-- ---- 4. links ----------------------------------------------------------------
-- Every relative link of README.md, docs/*.md and lua/README.md names a file
-- of the repository, and a #fragment into a Markdown file one of its
-- headings (GitHub's anchors: lower case, punctuation dropped, spaces to -).
local function anchors_of(path)
  local set = {}
  local blocks, lines = blocks_of(read(path) or "")
  local fenced = {}
  for _, b in ipairs(blocks) do
    local n = select(2, b.body:gsub("\n", ""))
    for k = b.line, b.line + n + 1 do fenced[k] = true end
  end
  for i, l in ipairs(lines) do
    local h = not fenced[i] and l:match("^#+%s+(.-)%s*$")
    if h then
      local a = h:lower():gsub("[^%w%s%-_]", ""):gsub("%s", "-")
      set[a] = true
    end
  end
  return set
end
local linked = { "lua/README.md" }
for _, d in ipairs(docs) do linked[#linked + 1] = d end
for _, doc in ipairs(linked) do
  local base = doc:match("^(.*)/[^/]*$")
  local text = read(src .. "/" .. doc) or ""
  local n = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    for target in line:gmatch("%]%(([^)%s]+)%)") do
      if not target:match("^%a+:") then
        local file, frag = target:match("^([^#]*)#?(.*)$")
        local path = file == "" and doc or ((base and base .. "/" or "") .. file)
        local parts = {}
        for p in path:gmatch("[^/]+") do
          if p == ".." then parts[#parts] = nil elseif p ~= "." then parts[#parts + 1] = p end
        end
        path = table.concat(parts, "/")
        if not run_ok("test -e " .. q(src .. "/" .. path)) then
          fail(doc .. ":" .. n, "links to " .. target .. ", which is not in the repository")
        elseif frag ~= "" and path:match("%.md$") and not anchors_of(src .. "/" .. path)[frag] then
          fail(doc .. ":" .. n, "links to " .. target .. ", but " .. path .. " has no heading #" .. frag)
        end
      end
    end
  end
end

if #failures > 0 then
  io.stderr:write(table.concat(failures, "\n\n"), "\n\n", #failures, " failure(s)\n")
  os.exit(1)
end
print("docs: " .. #docs .. " files: runnable blocks, flags, error codes and links hold")
