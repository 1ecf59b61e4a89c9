-- toolgate.shell — reads a POSIX shell command line and lists every simple
-- command the shell would run, with its argv, so a policy rule can judge
-- `npm test && curl … | sh` command by command instead of matching
-- patterns against the whole string.
--
--   local shell = require "toolgate.shell"
--   local cmds, err = shell.analyze(call.args.command,
--     { env = call.args.env, stdin = call.args.stdin })
--   -- cmds[i] = { argv = {...}, assigns = {{name=, value=}...},
--   --             redirects = {{fd=, op=, target=, body=?}...}, depth = n,
--   --             wrapper = "sh -c" | nil (the innermost, as before),
--   --             wrappers = { "sudo", "sh -c" } (outermost first),
--   --             opaque = nil | "why the analysis cannot see what runs",
--   --             unresolved = nil | { k, … } (argv words holding an
--   --               expansion not resolved: "$1", "$(pwd)", a glob) }
--   -- shell.split(line) is analyze without an env.
--
-- What it promises: every program the shell would start, and every
-- builtin it would run, is in the list — or a command in the list is
-- opaque (policies ask then), or analyze returns nil and an error (it could
-- not parse the line, or a bound was hit). spec/lua/shell_oracle_spec.lua
-- checks this against a real bash and dash. It follows:
-- - quotes ('…', "…", $'…', $"…"), backslashes, `;` `&&` `||` `|` `|&` `&`,
--   newlines, comments, brace expansion {a,b} {1..3}, redirections (kept
--   apart from argv), leading NAME=value assignments;
-- - subshells, groups, $( … ), backquotes, <( … ) and >( … ), ${ … },
--   $(( … )), if/while/until/for/case/select bodies, `!`, `&`, [[ … ]],
--   (( … )), function bodies (listed where defined: a function named like
--   a command, `ls() { rm …; }`, shows its rm), coproc (both forms);
-- - code handed to a shell: sh/bash/dash/zsh/ksh -c STRING, eval (and its
--   --), trap 'STRING' SIGS, alias values, env -S, watch, su/flock -c,
--   variables some program runs as a command (GIT_PAGER, EDITOR, …);
-- - input fed to a shell reading it (sh, sh -s, sh -, bash -s -- args,
--   sudo -s, su): here-strings, here-documents (an unquoted one with its
--   expansions made), a pipe from echo/printf/cat of literal text, the exec
--   tool's stdin, a redirection after a compound command around the shell;
-- - wrappers: env, sudo/doas/pkexec/run0, exec (-a), command (-p),
--   builtin, nice, nohup, timeout, time, setsid, stdbuf, chroot, xargs,
--   find -exec/-execdir/-ok, busybox, watch, flock, ionice, chrt, taskset,
--   unshare, nsenter, strace, … (the wrapper is listed, then the command it
--   runs, one level deeper);
-- - variables: $X or ${X} (quoted or not) whose value is known — from the
--   exec tool's env or from an assignment on the line (X=…, declare/
--   export/local X=…) — stands for the words that value splits into, every
--   value X may hold on the line counted (as the command name; after it,
--   when X has one value); in code (eval "$X", sh -c "…$X…", an unquoted
--   here-document) the value is code and is parsed. A variable that
--   nothing on the line nor the exec env sets comes from toolgate's own
--   environment, which the agent cannot set: in code it stays a word.
--
-- What it marks opaque, and why (the reason is in the user's terms):
-- - a command name it cannot resolve: $(…), `…`, ${X:-…}, "${a[@]}", $1,
--   $@, a variable not set on the line nor in the env, or set by read,
--   for, printf -v, mapfile, ${X:=…}, declare -n, or split by a changed
--   IFS; a command name that is a glob (/bin/r?);
-- - code it cannot read: eval/sh -c/trap/a here-document or here-string
--   whose text holds such an expansion (its value is code), a shell fed
--   by a pipe from anything but literal echo/printf/cat (curl … | sh), a
--   shell or source running a script file, bash -l/-i (startup scripts),
--   exec < … (what later commands read), a shell in a function body, in
--   >( … ) or a coprocess reading its input;
-- - interpreters given code: python -c, node -e/-p, perl -e/-E, ruby -e,
--   php -r, lua -e, or reading their program from their input; awk
--   programs with system(), a pipe or @load; sed with its e command or
--   s///e; tar --to-command, rsync -e, ssh -o ProxyCommand, vim -c, gdb
--   -ex, mapfile/compgen -C, git -c pager/alias/…, hash -p, enable -f, fc;
-- - find/xargs names ({}, -I R) in a command name or a shell's code,
--   xargs adding its input to a wrapper (xargs env, xargs sh -c);
-- - variables that load code: LD_PRELOAD, BASH_ENV, ENV, BASH_FUNC_*,
--   PS4, NODE_OPTIONS, PYTHONPATH, …; ${X@P}; array subscripts holding
--   $( … ) where bash evaluates them.
--
-- What it does not promise: what a program on disk does (./build.sh, a
-- Makefile, python script.py), the arguments xargs appends, words after
-- the command name that hold expansions (they keep their source text,
-- "$(pwd)"; the commands inside substitutions are listed on their own).
-- Bounds (MAX_LENGTH, MAX_DEPTH, MAX_COMMANDS, MAX_BRACE_WORDS,
-- MAX_READ_FACTOR) keep every path finite; hitting one is an error.
--
-- Pure Lua (5.1, 5.4, LuaJIT), no globals, no I/O: policies load it with
-- require "toolgate.shell" inside their sandbox.

local M = {}

M.MAX_LENGTH = 65536   -- bytes of command line split at most
M.MAX_DEPTH = 16       -- nesting of ( ) { } $( ) ` ` and wrappers
M.MAX_COMMANDS = 4096  -- simple commands in one command line
M.MAX_BRACE_WORDS = 1024 -- words one brace expansion may make
-- Readings of ambiguous input ($(( and (( are read two ways) tried in one
-- pass, at most: the longest command line plus this. A plain line tries
-- each at most twice per three bytes; nesting them multiplies the readings
-- (2^n for n levels), which this bounds (found by spec/fuzz/fuzz_shell).
M.ATTEMPTS_SLACK = 256
M.MAX_READ_FACTOR = 4    -- bytes of code read in all, in MAX_LENGTHs

local sub, find, match, gsub, gmatch = string.sub, string.find, string.match,
  string.gsub, string.gmatch
local format, rep, char, byte = string.format, string.rep, string.char, string.byte
local concat = table.concat
local floor = math.floor

-- Parse errors are tables with this metatable, so split() can tell them
-- from a bug or from the runtime stopping a policy (budget, memory).
local ParseError = {}

local function fail(p, fmt, ...)
  error(setmetatable({ msg = format(fmt, ...) .. p.where }, ParseError), 0)
end

-- A bound was hit: no other reading of the input may hide it.
local function fail_limit(p, fmt, ...)
  error(setmetatable({ msg = format(fmt, ...) .. p.where, limit = true },
    ParseError), 0)
end


---------------------------------------------------------------------------
-- Parser state: one per string parsed (the command line, a backquoted
-- command, the string of `sh -c`), sharing one context (output, limits).

local Parser = {}
Parser.__index = Parser

-- wrappers: the list of wrappers around what s holds, outermost first;
-- stdin: what its commands read from (see the stdin section below).
local function new_parser(ctx, s, depth, wrappers, where, stdin)
  wrappers = wrappers or {}
  local p = setmetatable({
    ctx = ctx, s = s, n = #s, i = 1, la = nil,
    depth = depth, wrappers = wrappers, wrapper = wrappers[#wrappers],
    where = where or "", heredocs = {}, test_mode = false, stdin = stdin,
    in_function = 0, scopes = {},
  }, Parser)
  -- ${X=v} and ${X:=v} assign X wherever they sit
  for name in s:gmatch("%${([%a_][%w_]*):?=") do ctx.found.dynamic[name] = true end
  return p
end

-- A new simple command of parser p.
local function new_cmd(p, argv, wrappers)
  wrappers = wrappers or p.wrappers
  local list = {}
  for k, w in ipairs(wrappers) do list[k] = w end
  return { argv = argv or {}, assigns = {}, redirects = {}, depth = p.depth,
    wrapper = list[#list], wrappers = list, info = {} }
end

local function enter(p)
  p.depth = p.depth + 1
  if p.depth > p.ctx.max_depth then
    fail_limit(p, "the command nests deeper than %d levels (subshells, substitutions, "
      .. "sh -c and other wrappers); simplify it", p.ctx.max_depth)
  end
end

local function leave(p) p.depth = p.depth - 1 end

-- Runs fn(p, ...) as one reading of ambiguous input. On a parse error
-- (not a bound) everything it did is undone and false, err is returned.
local function attempt(p, fn, ...)
  local ctx = p.ctx
  ctx.attempts = ctx.attempts + 1
  if ctx.attempts > ctx.max_attempts then
    fail_limit(p, "the command is too ambiguous to read: more than %d readings of "
      .. "$(( and (( tried; simplify it", ctx.max_attempts)
  end
  local out = ctx.out
  local n_out, i, la, depth, nhd = #out, p.i, p.la, p.depth, #p.heredocs
  local stdin = p.stdin
  local ok, res = pcall(fn, p, ...)
  if ok then return true, res end
  if getmetatable(res) ~= ParseError or res.limit then error(res, 0) end
  for k = #out, n_out + 1, -1 do out[k] = nil end
  for k = #p.heredocs, nhd + 1, -1 do p.heredocs[k] = nil end
  p.i, p.la, p.depth, p.stdin = i, la, depth, stdin
  return false, res
end

local function emit(p, c)
  local out = p.ctx.out
  if #out >= p.ctx.max_commands then
    fail_limit(p, "the command line holds more than %d simple commands",
      p.ctx.max_commands)
  end
  out[#out + 1] = c
end

local parse_list, sub_split, unwrap, lex_target -- forward declarations

-- Strings given to sh -c and eval, and variables' values put in words and
-- code, are read again: one bound on all the bytes read and made.
local function charge(p, n)
  p.ctx.budget = p.ctx.budget - n
  if p.ctx.budget < 0 then
    fail_limit(p, "the command line makes more than %d bytes of shell code to "
      .. "read (strings given to sh -c, eval, variables' values)", p.ctx.max_read)
  end
end

---------------------------------------------------------------------------
-- Lexing. A word is collected as pieces of text, each with a mask of the
-- same length: "u" for characters that were unquoted (brace expansion and
-- keywords only apply to those), "q" for the rest.

local function add(parts, masks, text, m)
  if text ~= "" then
    parts[#parts + 1] = text
    masks[#masks + 1] = rep(m, #text)
    parts.len = (parts.len or 0) + #text
  end
end

-- An expansion ($X, ${…}, $( … ), `…`, $(( … )), <( … )) added to a word:
-- its text is kept as written and its place recorded in parts.exps, with
-- the variable's name when it is a plain $NAME or ${NAME}, so that the
-- analysis can put a known value there or call the word opaque.
local function add_exp(parts, masks, text, name, quoted)
  local from = (parts.len or 0) + 1
  add(parts, masks, text, "q")
  local exps = parts.exps or {}
  parts.exps = exps
  exps[#exps + 1] = { a = from, b = from + #text - 1, var = name, q = quoted }
end

local dq_scan, dollar, backquote -- mutually recursive scanners

-- $'…': returns the index after the closing quote.
local ANSI = { n = "\n", t = "\t", r = "\r", a = "\a", b = "\b", f = "\f",
  v = "\v", e = "\27", E = "\27", ["\\"] = "\\", ["'"] = "'", ['"'] = '"',
  ["?"] = "?" }

local function utf8_char(cp)
  if cp < 0x80 then return char(cp) end
  if cp < 0x800 then
    return char(0xC0 + floor(cp / 0x40), 0x80 + cp % 0x40)
  end
  if cp < 0x10000 then
    return char(0xE0 + floor(cp / 0x1000), 0x80 + floor(cp / 0x40) % 0x40,
      0x80 + cp % 0x40)
  end
  if cp < 0x110000 then
    return char(0xF0 + floor(cp / 0x40000), 0x80 + floor(cp / 0x1000) % 0x40,
      0x80 + floor(cp / 0x40) % 0x40, 0x80 + cp % 0x40)
  end
  return "?"
end

local function ansi_c(p, i, parts, masks)
  local s, j, open = p.s, i + 2, i
  while true do
    local a, b = find(s, "^[^'\\]+", j)
    if a then add(parts, masks, sub(s, a, b), "q"); j = b + 1 end
    local c = sub(s, j, j)
    if c == "" then
      fail(p, "unterminated $' quote (opened at character %d)", open)
    elseif c == "'" then
      return j + 1
    end
    -- a backslash escape
    local d = sub(s, j + 1, j + 1)
    local hex = d == "x" and match(s, "^%x%x?", j + 2)
    local uni = (d == "u" and match(s, "^%x%x?%x?%x?", j + 2))
      or (d == "U" and match(s, "^%x%x?%x?%x?%x?%x?%x?%x?", j + 2))
    local oct = match(s, "^[0-7][0-7]?[0-7]?", j + 1)
    if ANSI[d] then
      add(parts, masks, ANSI[d], "q"); j = j + 2
    elseif hex then
      add(parts, masks, char(tonumber(hex, 16)), "q"); j = j + 2 + #hex
    elseif uni then
      add(parts, masks, utf8_char(tonumber(uni, 16)), "q"); j = j + 2 + #uni
    elseif oct then
      add(parts, masks, char(tonumber(oct, 8) % 256), "q"); j = j + 1 + #oct
    elseif d == "c" and sub(s, j + 2, j + 2) ~= "" then
      add(parts, masks, char(byte(s, j + 2) % 32), "q"); j = j + 3
    elseif d == "" then
      fail(p, "unterminated $' quote (opened at character %d)", open)
    else
      add(parts, masks, "\\" .. d, "q"); j = j + 2
    end
  end
end

-- The inside of "…" (term = '"') or of an unquoted here-document body
-- (term = nil: runs to the end of p.s). Returns the index after it.
function dq_scan(p, i, parts, masks, term)
  local s, j = p.s, i
  local plain = term and '^[^"\\$`]+' or "^[^\\$`]+"
  while true do
    local a, b = find(s, plain, j)
    if a then add(parts, masks, sub(s, a, b), "q"); j = b + 1 end
    local c = sub(s, j, j)
    if c == "" then
      if term then
        fail(p, "unterminated double quote (opened at character %d)", i - 1)
      end
      return j
    elseif c == term then
      return j + 1
    elseif c == "\\" then
      local d = sub(s, j + 1, j + 1)
      if d == "\n" then
        j = j + 2
      elseif d == "$" or d == "`" or d == "\\" or (term and d == '"') then
        add(parts, masks, d, "q"); j = j + 2
      else
        add(parts, masks, "\\", "q"); j = j + 1
      end
    elseif c == "$" then
      j = dollar(p, j, parts, masks, true)
    else -- backquote
      j = backquote(p, j, parts, masks, true)
    end
  end
end

-- Inside $(( … )) and ${ … }: steps over the quoted or substituted
-- piece that starts at j with character c (one of \ ' " $ `), splitting
-- any command substitution in it; returns the index after it.
local function skip_quoted(p, j, c)
  local s, junk_p, junk_m = p.s, {}, {}
  if c == "\\" then return j + 2 end
  if c == "'" then
    local e = find(s, "'", j + 1, true)
    if not e then fail(p, "unterminated single quote (opened at character %d)", j) end
    return e + 1
  end
  if c == '"' then return dq_scan(p, j + 1, junk_p, junk_m, '"') end
  if c == "$" then return dollar(p, j, junk_p, junk_m, true) end
  return backquote(p, j, junk_p, junk_m, true)
end

-- $(( … )) and (( … )): from i (after the two parens) to the index after
-- the closing "))"; substitutions inside are split.
local function arith(p, i, open)
  local s, j, depth = p.s, i, 0
  while true do
    local a, b = find(s, "^[^()\\'\"$`]+", j)
    if a then j = b + 1 end
    local c = sub(s, j, j)
    if c == "" then
      fail(p, "unterminated arithmetic (( (opened at character %d)", open)
    elseif c == "(" then
      depth = depth + 1; j = j + 1
    elseif c == ")" then
      if depth > 0 then
        depth = depth - 1; j = j + 1
      elseif sub(s, j + 1, j + 1) == ")" then
        return j + 2
      else
        fail(p, "arithmetic (( opened at character %d closes with a single )",
          open)
      end
    else
      j = skip_quoted(p, j, c)
    end
  end
end

-- ${ … }: from i (after "${") to the index after the first "}" that is
-- not quoted or inside a nested substitution (a plain "{" does not nest:
-- ${x:-{a} is "{a").
local function param(p, i)
  local s, j = p.s, i
  while true do
    local a, b = find(s, "^[^}\\'\"$`]+", j)
    if a then j = b + 1 end
    local c = sub(s, j, j)
    if c == "" then
      fail(p, "unterminated ${ (opened at character %d)", i - 2)
    elseif c == "}" then
      return j + 1
    else
      j = skip_quoted(p, j, c)
    end
  end
end

-- $( … ), <( … ), >( … ): parses the inside as a command list with this
-- parser, one level deeper. i is just after the "(". Returns the index
-- after the ")".
local function paren_subst(p, i, what, open)
  enter(p)
  p.i, p.la = i, nil
  local t = parse_list(p, function(tok) return tok.t == "op" and tok.v == ")" end)
  if t.t ~= "op" then
    fail(p, "unterminated %s (opened at character %d): no matching )", what, open)
  end
  p:take()
  leave(p)
  return p.i
end

-- A "$" at s[i]. Returns the index after what it starts.
function dollar(p, i, parts, masks, in_dq)
  local s = p.s
  local d = sub(s, i + 1, i + 1)
  local j
  if d == "(" then
    if sub(s, i + 2, i + 2) == "(" then
      -- $(( is arithmetic when it closes with )); else, as in bash, a
      -- command substitution that starts with a subshell: $((a) | b)
      local ok, res = attempt(p, arith, i + 3, i)
      if ok then
        j = res
      else
        local ok2, res2 = attempt(p, paren_subst, i + 2, "$(", i)
        if not ok2 then error(res, 0) end
        j = res2
      end
    else
      j = paren_subst(p, i + 2, "$(", i)
    end
  elseif d == "{" then
    j = param(p, i + 2)
    local text = sub(s, i, j - 1)
    add_exp(parts, masks, text, match(text, "^%${([%a_][%w_]*)}$"), in_dq)
    -- ${X@P} expands X as a prompt: the $( … ) in its value run
    if find(text, "@P}$") then parts.exps[#parts.exps].runs = true end
    return j
  elseif d == "'" and not in_dq then
    return ansi_c(p, i, parts, masks)
  elseif d == '"' and not in_dq then
    return dq_scan(p, i + 2, parts, masks, '"')
  elseif d ~= "" and find("$#?!@*-0123456789", d, 1, true) then
    add_exp(parts, masks, "$" .. d, nil, in_dq) -- $$, $?, $1 …: "$${" is $$ then {
    -- $$ $? $# $! $- are numbers and flags, never code
    if find("$#?!-", d, 1, true) then parts.exps[#parts.exps].inert = true end
    if find("@*0123456789", d, 1, true) then parts.exps[#parts.exps].pos = d end
    return i + 2
  elseif match(d, "^[%a_]") then
    local name = match(s, "^[%a_][%w_]*", i + 1)
    add_exp(parts, masks, "$" .. name, name, in_dq)
    return i + 1 + #name
  else
    add(parts, masks, "$", "q")
    return i + 1
  end
  add_exp(parts, masks, sub(s, i, j - 1), nil, in_dq)
  return j
end

-- A backquote at s[i]: the inside (with \` \\ \$ undone) is split as its
-- own command line, one level deeper. Returns the index after it.
function backquote(p, i, parts, masks, in_dq)
  local s, j, buf = p.s, i + 1, {}
  while true do
    local a, b = find(s, "^[^`\\]+", j)
    if a then buf[#buf + 1] = sub(s, a, b); j = b + 1 end
    local c = sub(s, j, j)
    if c == "" then
      fail(p, "unterminated backquote (opened at character %d)", i)
    elseif c == "`" then
      break
    end
    local d = sub(s, j + 1, j + 1)
    if d == "`" or d == "\\" or d == "$" or (in_dq and d == '"') then
      buf[#buf + 1] = d; j = j + 2
    else
      buf[#buf + 1] = "\\"; j = j + 1
    end
  end
  sub_split(p, concat(buf), nil, " in a `…` command")
  add_exp(parts, masks, sub(s, i, j), nil, in_dq)
  return j + 1
end

local ASSIGN_START = "^[%a_][%w_]*%+?="

-- Whether an unquoted * ? or [ is in text: the shell would match it
-- against file names.
local function has_glob(text, mask)
  for k = 1, #text do
    if find("*?[", sub(text, k, k), 1, true) and sub(mask, k, k) == "u" then
      return true
    end
  end
  return false
end

-- Reads one word starting at p.i; returns a word token.
local function lex_word(p)
  local s, n = p.s, p.n
  local start, i = p.i, p.i
  local parts, masks = {}, {}
  -- <( … ) and >( … ) start a word
  local c0 = sub(s, i, i)
  if (c0 == "<" or c0 == ">") and sub(s, i + 1, i + 1) == "(" then
    -- what runs in >( … ) reads what another command writes to it
    local outer = p.stdin
    if c0 == ">" then p.stdin = { unknown = "what a command writes into >( … )" } end
    i = paren_subst(p, i + 2, c0 .. "(", i)
    p.stdin = outer
    add_exp(parts, masks, sub(s, start, i - 1), nil, false)
  end
  while i <= n do
    local a, b = find(s, "^[^ \t\n|&;()<>\\'\"$`]+", i)
    if a then add(parts, masks, sub(s, a, b), "u"); i = b + 1 end
    local c = sub(s, i, i)
    if c == "" then
      break
    elseif c == "\\" then
      local d = sub(s, i + 1, i + 1)
      if d == "\n" then
        i = i + 2
      elseif d == "" then
        i = i + 1 -- a backslash at the very end is dropped, as bash does
      else
        add(parts, masks, d, "q"); i = i + 2
      end
    elseif c == "'" then
      local e = find(s, "'", i + 1, true)
      if not e then fail(p, "unterminated single quote (opened at character %d)", i) end
      add(parts, masks, sub(s, i + 1, e - 1), "q")
      i = e + 1
    elseif c == '"' then
      i = dq_scan(p, i + 1, parts, masks, '"')
    elseif c == "$" then
      i = dollar(p, i, parts, masks, false)
    elseif c == "`" then
      i = backquote(p, i, parts, masks, false)
    elseif c == "(" and match(sub(s, start, i - 1), ASSIGN_START .. "$") then
      -- name=( … ): an array assignment; its words are read and kept.
      local words = {}
      p.i, p.la = i + 1, nil
      while true do
        local t = p:take()
        if t.t == "op" and t.v == ")" then break end
        if t.t == "op" and t.v == "\n" then -- newlines are allowed inside
        elseif t.t ~= "word" then
          fail(p, "unterminated array assignment (opened at character %d)", i)
        else
          words[#words + 1] = t.text
        end
      end
      add(parts, masks, "(" .. concat(words, " ") .. ")", "q")
      i = p.i
    else
      break -- a metacharacter ends the word
    end
  end
  p.i = i
  local text = concat(parts)
  local raw = sub(s, start, i - 1)
  local mask = concat(masks)
  return { t = "word", text = text, mask = mask, raw = raw,
    plain = raw == text, pos = start, exps = parts.exps,
    glob = find(text, "[*?[]") and has_glob(text, mask) or false }
end

local function read_heredocs(p)
  local s, n = p.s, p.n
  for _, h in ipairs(p.heredocs) do
    local body = {}
    while p.i <= n do
      local e = find(s, "\n", p.i, true)
      local line = sub(s, p.i, (e or n + 1) - 1)
      p.i = e and e + 1 or n + 1
      if h.strip then line = gsub(line, "^\t+", "") end
      if line == h.delim then break end
      body[#body + 1] = line
    end
    h.r.body = #body > 0 and concat(body, "\n") .. "\n" or ""
    h.r.text = h.r.body
    if not h.literal and find(h.r.body, "[$`\\]") then
      -- what the shell feeds: \$ \` \\ undone, expansions kept and split
      local q = new_parser(p.ctx, h.r.body, p.depth, p.wrappers,
        " in a here-document")
      local parts = {}
      dq_scan(q, 1, parts, {}, nil)
      h.r.text, h.r.exps = concat(parts), parts.exps
    end
    for _, fn in ipairs(h.r.pending or {}) do fn() end
    h.r.pending = nil
  end
  p.heredocs = {}
end

local REDIR_OPS = { "<<<", "<<-", "&>>", "<<", "<>", "<&", ">>", ">&", ">|",
  "&>", "<", ">" }
local DEFAULT_FD = { ["<<<"] = 0, ["<<-"] = 0, ["<<"] = 0, ["<>"] = 0,
  ["<&"] = 0, ["<"] = 0, [">>"] = 1, [">&"] = 1, [">|"] = 1, [">"] = 1 }

local function skip_blanks(p)
  local s = p.s
  while true do
    local _, b = find(s, "^[ \t]+", p.i)
    if b then p.i = b + 1 end
    local c = sub(s, p.i, p.i)
    local d = c == "\\" and sub(s, p.i + 1, p.i + 1)
    if d == "\n" then
      p.i = p.i + 2
    elseif d == "" then -- a backslash at the very end is dropped
      p.i = p.i + 1
    elseif c == "#" then
      p.i = find(s, "\n", p.i, true) or p.n + 1
    else
      return
    end
  end
end

local function next_token(p)
  skip_blanks(p)
  local s, i = p.s, p.i
  local c = sub(s, i, i)
  if c == "" then return { t = "eof", pos = i } end
  if p.test_mode and find(c, "^[<>()&|]") then
    local op = match(s, "^&&", i) or match(s, "^||", i) or c
    p.i = i + #op
    return { t = "word", text = op, mask = rep("q", #op), raw = op,
      plain = true, pos = i }
  end
  if c == "\n" then
    p.i = i + 1
    if #p.heredocs > 0 then read_heredocs(p) end
    return { t = "op", v = "\n", pos = i }
  end
  if c == ";" or c == "|" or c == "(" or c == ")" or
      (c == "&" and sub(s, i + 1, i + 1) ~= ">") then
    local op = match(s, "^;;&", i) or match(s, "^;;", i) or match(s, "^;&", i)
      or match(s, "^&&", i) or match(s, "^||", i) or match(s, "^|&", i) or c
    p.i = i + #op
    return { t = "op", v = op, pos = i }
  end
  local fd, rest = match(s, "^(%d*)()[<>&]", i)
  if fd and not ((c == "<" or c == ">") and sub(s, i + 1, i + 1) == "(") then
    for _, op in ipairs(REDIR_OPS) do
      if sub(s, rest, rest + #op - 1) == op and (fd == "" or sub(op, 1, 1) ~= "&") then
        p.i = rest + #op
        return { t = "redir", op = op, pos = i,
          fd = fd ~= "" and tonumber(fd) or DEFAULT_FD[op] }
      end
    end
  end
  return lex_word(p)
end

-- The word after a redirection operator: a word even when it is all
-- digits followed by < or > (`>&12>&1` is `>&` `12`, then `>&1`).
function lex_target(p)
  if p.la then return p:take() end
  skip_blanks(p)
  local c = sub(p.s, p.i, p.i)
  if c ~= "" and not find(c, "^[ \t\n|&;()<>]") then return lex_word(p) end
  return p:take()
end

function Parser:peek()
  local t = self.la
  if not t then
    t = next_token(self)
    self.la = t
  end
  return t
end

function Parser:take()
  local t = self:peek()
  self.la = nil
  return t
end

local function describe(t)
  if t.t == "eof" then return "the end of the command" end
  if t.t == "op" then return t.v == "\n" and "a newline" or "`" .. t.v .. "`" end
  if t.t == "redir" then return "`" .. t.op .. "`" end
  return "`" .. t.text .. "`"
end

local function is_kw(t, w)
  return t.t == "word" and t.plain and t.text == w
end

local function skip_newlines(p)
  while true do
    local t = p:peek()
    if t.t == "op" and t.v == "\n" then p:take() else return end
  end
end

---------------------------------------------------------------------------
-- Brace expansion: a{b,c}d -> abd acd, {1..3} -> 1 2 3, on unquoted
-- characters only, left to right like bash.

local function seq_words(inner, limit)
  local a, b, step = match(inner, "^(%-?%d+)%.%.(%-?%d+)$")
  if not a then a, b, step = match(inner, "^(%-?%d+)%.%.(%-?%d+)%.%.(%-?%d+)$") end
  local out = {}
  if a then
    local x, y = tonumber(a), tonumber(b)
    local st = math.abs(tonumber(step or "1"))
    if st == 0 then st = 1 end
    if math.abs(y - x) / st >= limit then return "too many" end
    local width = 0
    if match(a, "^%-?0%d") or match(b, "^%-?0%d") then width = math.max(#a, #b) end
    local dir = y >= x and st or -st
    for v = x, y, dir do
      local w = tostring(v)
      if #w < width then
        w = v < 0 and "-" .. rep("0", width - #w) .. w:sub(2) or rep("0", width - #w) .. w
      end
      out[#out + 1] = w
    end
    return out
  end
  local ca, cb, cst = match(inner, "^(%a)%.%.(%a)$")
  if not ca then ca, cb, cst = match(inner, "^(%a)%.%.(%a)%.%.(%-?%d+)$") end
  if ca then
    local x, y = byte(ca), byte(cb)
    local st = math.abs(tonumber(cst or "1"))
    if st == 0 then st = 1 end
    for v = x, y, y >= x and st or -st do out[#out + 1] = char(v) end
    return out
  end
  return nil
end

-- The first expandable {…} of text: returns the list of its alternatives
-- (each {text, mask}) with the prefix and suffix in place, or nil.
local function expand_first(p, tok, text, mask, limit)
  local n, a = #text, 1
  while true do
    a = find(text, "{", a, true)
    if not a then return nil end
    if sub(mask, a, a) == "u" then
      local depth, cuts, j = 1, { a }, a + 1
      while j <= n do
        local ch = sub(text, j, j)
        if sub(mask, j, j) == "u" then
          if ch == "{" then depth = depth + 1
          elseif ch == "}" then
            depth = depth - 1
            if depth == 0 then break end
          elseif ch == "," and depth == 1 then cuts[#cuts + 1] = j end
        end
        j = j + 1
      end
      if j <= n then
        local pre, prem = sub(text, 1, a - 1), sub(mask, 1, a - 1)
        local suf, sufm = sub(text, j + 1), sub(mask, j + 1)
        local out = {}
        if #cuts > 1 then
          cuts[#cuts + 1] = j
          for k = 1, #cuts - 1 do
            local x, y = cuts[k] + 1, cuts[k + 1] - 1
            out[k] = { pre .. sub(text, x, y) .. suf, prem .. sub(mask, x, y) .. sufm }
          end
          return out
        end
        local inner = sub(text, a + 1, j - 1)
        if not find(sub(mask, a + 1, j - 1), "q", 1, true) then
          local words = seq_words(inner, limit)
          if words == "too many" then
            fail_limit(p, "the brace expansion in `%s` makes more than %d words",
              tok.raw, limit)
          end
          if words then
            for k, w in ipairs(words) do
              out[k] = { pre .. w .. suf, prem .. rep("q", #w) .. sufm }
            end
            return out
          end
        end
      end
    end
    a = a + 1
  end
end

local MAX_BRACE_PASSES = 64

local function brace_expand(p, tok, into)
  if not find(tok.text, "{", 1, true) then
    into[#into + 1] = tok.text
    return
  end
  local limit = p.ctx.max_brace
  local items, passes = { { tok.text, tok.mask } }, 0
  while true do
    local nxt, changed = {}, false
    for _, it in ipairs(items) do
      local alts = expand_first(p, tok, it[1], it[2], limit)
      if alts then
        changed = true
        for _, alt in ipairs(alts) do nxt[#nxt + 1] = alt end
      else
        nxt[#nxt + 1] = it
      end
      if #nxt > limit then
        fail_limit(p, "the brace expansion in `%s` makes more than %d words",
          tok.raw, limit)
      end
    end
    items = nxt
    if not changed then break end
    passes = passes + 1
    if passes > MAX_BRACE_PASSES then
      fail_limit(p, "`%s` holds more than %d brace expansions", tok.raw, MAX_BRACE_PASSES)
    end
  end
  for _, it in ipairs(items) do into[#into + 1] = it[1] end
end

---------------------------------------------------------------------------
-- Parsing.

local function read_redirect(p, t, list)
  local target = lex_target(p)
  if target.t ~= "word" then
    fail(p, "the redirection `%s` (character %d) has no target; found %s",
      t.op, t.pos, describe(target))
  end
  local r = { fd = t.fd, op = t.op, target = target.text, exps = target.exps }
  list[#list + 1] = r
  if t.op == "<<" or t.op == "<<-" then
    p.heredocs[#p.heredocs + 1] = { r = r, delim = target.text,
      strip = t.op == "<<-", literal = not target.plain }
  end
end

-- Redirections after a compound command (`} > f`, `done < list`) are
-- listed as a command with an empty argv.
local refeed -- forward declaration

-- Redirections after a compound command (`} > f`, `done < list`) are
-- listed as a command with an empty argv. n0: the number of commands
-- listed before the compound began; those inside it that read their
-- input read what a redirection of 0 gives.
local function trailing_redirects(p, n0)
  local list = {}
  while p:peek().t == "redir" do read_redirect(p, p:take(), list) end
  if #list > 0 then
    local c = new_cmd(p)
    c.redirects = list
    emit(p, c)
    if n0 then refeed(p, c, n0) end
  end
end

local parse_command, parse_coproc_compound

local function parse_subshell(p)
  local n0 = #p.ctx.out
  local open = p:take()
  enter(p)
  local t = parse_list(p, function(tok) return tok.t == "op" and tok.v == ")" end)
  if t.t ~= "op" then
    fail(p, "unterminated subshell: the ( at character %d has no matching )", open.pos)
  end
  p:take()
  leave(p)
  trailing_redirects(p, n0)
end

-- "((": an arithmetic command in bash, two nested subshells in dash. Both
-- readings are tried, the subshell first (a command is worth knowing of).
local function parse_dparen(p, open)
  if attempt(p, parse_subshell) then return end
  p.la = nil
  p.i = arith(p, open.pos + 2, open.pos)
  trailing_redirects(p)
end

local function parse_group(p)
  local n0 = #p.ctx.out
  local open = p:take()
  enter(p)
  local t = parse_list(p, function(tok) return is_kw(tok, "}") end)
  if t.t == "eof" then
    fail(p, "unterminated group: the { at character %d has no matching }", open.pos)
  end
  p:take()
  leave(p)
  trailing_redirects(p, n0)
end

local function parse_for(p)
  local kw = p:take()
  local t = p:peek()
  if t.t == "op" and t.v == "(" and sub(p.s, t.pos, t.pos + 1) == "((" then
    p.la = nil
    p.i = arith(p, t.pos + 2, t.pos)
    return
  end
  local var = p:take()
  if var.t ~= "word" then
    fail(p, "`%s` at character %d needs a variable name", kw.text, kw.pos)
  end
  p.ctx.found.dynamic[var.text] = true -- set by the loop
  skip_newlines(p)
  if is_kw(p:peek(), "in") then
    p:take()
    while p:peek().t == "word" do p:take() end -- substitutions in it are split
  end
end

local function parse_case(p)
  local n0 = #p.ctx.out
  local kw = p:take()
  if p:take().t ~= "word" then
    fail(p, "`case` at character %d needs a word", kw.pos)
  end
  skip_newlines(p)
  if not is_kw(p:take(), "in") then
    fail(p, "`case` at character %d needs `in` after its word", kw.pos)
  end
  local function item_end(tok)
    return (tok.t == "op" and (tok.v == ";;" or tok.v == ";&" or tok.v == ";;&"))
      or is_kw(tok, "esac")
  end
  while true do
    skip_newlines(p)
    local t = p:peek()
    if is_kw(t, "esac") then
      p:take()
      trailing_redirects(p, n0)
      return
    end
    if t.t == "eof" then
      fail(p, "unterminated case (character %d): no `esac`", kw.pos)
    end
    if t.t == "op" and t.v == "(" then p:take() end
    while true do -- patterns: a | b )
      local w = p:take()
      if w.t ~= "word" then
        fail(p, "a case pattern was expected, found %s", describe(w))
      end
      local sep = p:take()
      if sep.t == "op" and sep.v == ")" then break end
      if not (sep.t == "op" and sep.v == "|") then
        fail(p, "a case pattern must end with `)`, found %s", describe(sep))
      end
    end
    local stop = parse_list(p, item_end)
    if stop.t == "eof" then
      fail(p, "unterminated case (character %d): no `esac`", kw.pos)
    end
    if stop.t == "op" then p:take() end
  end
end

-- A function's body: what it reads is the input of each call, unknown
-- here (p.in_function says so to commands that read their input).
local function parse_body(p, name)
  skip_newlines(p)
  p.in_function = p.in_function + 1
  if not parse_command(p) then
    fail(p, "the function `%s` has no body", name)
  end
  p.in_function = p.in_function - 1
end

local function parse_function(p)
  p:take()
  local name = p:take()
  if name.t ~= "word" then fail(p, "`function` needs a name, found %s", describe(name)) end
  local t = p:peek()
  if t.t == "op" and t.v == "(" then
    p:take()
    if not (p:peek().t == "op" and p:peek().v == ")") then
      fail(p, "`function %s (` must be followed by `)`", name.text)
    end
    p:take()
  end
  parse_body(p, name.text)
end

local function parse_test(p)
  local c = new_cmd(p, { "[[" })
  p.test_mode = true
  local open = p:take()
  while true do
    local t = p:take()
    if t.t == "eof" then
      p.test_mode = false
      fail(p, "unterminated [[ (character %d): no ]]", open.pos)
    end
    if t.t == "word" then
      c.argv[#c.argv + 1] = t.text
      if is_kw(t, "]]") then break end
      if not t.exps and find(t.text, "%[.*[%$`]") then
        c.opaque = "`" .. t.text .. "` names an array element whose subscript runs a command"
      end
    elseif not (t.t == "op" and t.v == "\n") then
      p.test_mode = false
      fail(p, "unexpected %s inside [[ ]]", describe(t))
    end
  end
  p.test_mode = false
  emit(p, c)
  trailing_redirects(p)
end

local COMPOUND_START = { ["{"] = true, ["if"] = true, ["while"] = true,
  ["until"] = true, ["for"] = true, ["select"] = true, ["case"] = true,
  ["[["] = true, ["!"] = true, ["function"] = true }

-- `time` and `time -p` before a compound command are the keyword.
local function only_time(c)
  if #c.assigns > 0 or #c.redirects > 0 or c.argv[1] ~= "time" then return false end
  return #c.argv == 1 or (#c.argv == 2 and c.argv[2] == "-p")
end

local finish -- forward declaration

-- Adds the words of token t to c.argv, with what the analysis needs to
-- know of each (its expansions, an unquoted glob) in c.info.
local function add_words(p, c, t)
  local n = #c.argv
  brace_expand(p, t, c.argv)
  if #c.argv == n + 1 then
    if t.exps or t.glob then c.info[n + 1] = { exps = t.exps, glob = t.glob } end
  elseif t.exps or t.glob then -- braces around expansions: not followed
    for k = n + 1, #c.argv do
      c.info[k] = { exps = t.exps and { { a = 1, b = 0 } }, glob = t.glob }
    end
  end
end

local function parse_simple(p)
  local c = new_cmd(p)
  while true do
    local t = p:peek()
    if t.t == "redir" then
      read_redirect(p, p:take(), c.redirects)
    elseif t.t == "word" then
      if #c.argv == 0 and match(t.raw, ASSIGN_START) then
        p:take()
        local name, plus = match(t.raw, "^([%a_][%w_]*)(%+?)=")
        -- X+=…, X=( … ) and values made by expansions are not followed
        c.assigns[#c.assigns + 1] = { name = name,
          value = sub(t.text, #name + #plus + 2), append = plus == "+" or nil,
          dynamic = (t.exps or plus == "+" or find(t.raw, "=(", 1, true)) and true or nil }
      elseif #c.argv == 0 and match(t.raw, "^[%a_][%w_]*%[[^%]]*%]%+?=") then
        -- X[i]=…: an element of the array X ($X is its first)
        p:take()
        local name = match(t.raw, "^([%a_][%w_]*)")
        c.assigns[#c.assigns + 1] = { name = name, dynamic = true, element = true,
          value = match(t.text, "%]%+?=(.*)$") or "" }
      elseif t.plain and COMPOUND_START[t.text] and only_time(c) then
        return parse_command(p)
      else
        p:take()
        add_words(p, c, t)
      end
    elseif t.t == "op" and t.v == "(" then
      if only_time(c) then return parse_command(p) end
      if #c.argv ~= 1 or #c.assigns > 0 or #c.redirects > 0 then
        fail(p, "unexpected ( at character %d", t.pos)
      end
      p:take() -- name ( ) body: a function definition
      local close = p:take()
      if not (close.t == "op" and close.v == ")") then
        fail(p, "unexpected ( at character %d", t.pos)
      end
      return parse_body(p, c.argv[1])
    else
      break
    end
  end
  finish(p, c)
  return c
end

local COPROC_BODY = { ["{"] = true, ["if"] = true, ["while"] = true,
  ["until"] = true, ["for"] = true, ["select"] = true, ["case"] = true,
  ["[["] = true }

local function starts_compound(t)
  return (t.t == "op" and t.v == "(") or (t.t == "word" and t.plain and COPROC_BODY[t.text])
end

-- `coproc { …; }`, `coproc NAME { …; }`, `coproc NAME ( … )`: a compound
-- command run in the background. Fails (undone by attempt) when what
-- follows is a simple command: `coproc cmd args` is read as one.
function parse_coproc_compound(p)
  if not starts_compound(p:peek()) then
    if p:take().t ~= "word" or not starts_compound(p:peek()) then
      fail(p, "not a compound coproc")
    end
  end
  parse_command(p)
end

local PREFIX = { ["if"] = true, ["then"] = true, ["elif"] = true,
  ["else"] = true, ["while"] = true, ["until"] = true, ["do"] = true,
  ["!"] = true }
local CLOSER = { fi = true, done = true, esac = true }
local OPENER = { ["if"] = true, ["while"] = true, ["until"] = true }

-- One command (simple or compound). Keywords that only join commands
-- (if, then, do, …) are stepped over: a rule wants the commands, not the
-- control flow. Returns whether anything was read.
function parse_command(p)
  local consumed = false
  while true do
    local t = p:peek()
    if t.t == "word" and t.plain and PREFIX[t.text] then
      p:take()
      consumed = true
      if OPENER[t.text] then p.scopes[#p.scopes + 1] = #p.ctx.out end
    else
      break
    end
  end
  local t = p:peek()
  if t.t == "op" and t.v == "(" then
    if sub(p.s, t.pos, t.pos + 1) == "((" then parse_dparen(p, t) else parse_subshell(p) end
    return true
  end
  if t.t == "word" and t.plain then
    local w = t.text
    if w == "{" then parse_group(p); return true end
    if w == "}" then fail(p, "unexpected } at character %d: no { to close", t.pos) end
    if CLOSER[w] then
      p:take()
      local n0 = p.scopes[#p.scopes]
      p.scopes[#p.scopes] = nil
      trailing_redirects(p, n0)
      return true
    end
    if w == "for" or w == "select" then
      p.scopes[#p.scopes + 1] = #p.ctx.out
      parse_for(p)
      return true
    end
    if w == "case" then parse_case(p); return true end
    if w == "function" then parse_function(p); return true end
    if w == "[[" then parse_test(p); return true end
  end
  if t.t == "word" and t.plain and t.text == "coproc" then
    -- a coprocess reads what the script later writes to it
    p:take()
    local outer = p.stdin
    p.stdin = { unknown = "what the script writes to the coprocess" }
    local ok = attempt(p, parse_coproc_compound)
    if not ok and p:peek().t ~= "word" then
      fail(p, "`coproc` at character %d needs a command", t.pos)
    end
    if not ok then parse_simple(p) end
    p.stdin = outer
    return true
  end
  if t.t == "word" or t.t == "redir" then
    local c = parse_simple(p)
    return true, type(c) == "table" and c or nil
  end
  if t.t == "op" and t.v == ")" then
    fail(p, "unexpected ) at character %d: no ( to close", t.pos)
  end
  return consumed
end

local function needs_before(p, t)
  fail(p, "`%s` at character %d needs a command before it", t.v, t.pos)
end

-- Each command after a | reads what the one before it writes: p.stdin
-- says so while it is parsed (a shell reading it runs it).
local function parse_pipeline(p)
  local outer = p.stdin
  local got, c = parse_command(p)
  while true do
    local t = p:peek()
    if not (t.t == "op" and (t.v == "|" or t.v == "|&")) then
      p.stdin = outer
      return got
    end
    if not got then needs_before(p, t) end
    p:take()
    skip_newlines(p)
    p.stdin = { producer = c, stderr = t.v == "|&" }
    got, c = parse_command(p)
    if not got then
      fail(p, "`%s` at character %d needs a command after it", t.v, t.pos)
    end
  end
end

local function parse_and_or(p)
  local got = parse_pipeline(p)
  while true do
    local t = p:peek()
    if not (t.t == "op" and (t.v == "&&" or t.v == "||")) then return end
    if not got then needs_before(p, t) end
    p:take()
    skip_newlines(p)
    if not parse_pipeline(p) then
      fail(p, "`%s` at character %d needs a command after it", t.v, t.pos)
    end
  end
end

-- Commands separated by ; & and newlines, up to a token for which
-- stop(tok) is true (left unread) or the end. Returns that token.
function parse_list(p, stop)
  while true do
    local t = p:peek()
    if t.t == "eof" then return t end
    if stop and stop(t) then return t end
    if t.t == "op" and (t.v == "\n" or t.v == ";" or t.v == "&") then
      p:take()
    else
      parse_and_or(p)
      local t2 = p:peek()
      if t2.t == "op" and (t2.v == ";" or t2.v == "&" or t2.v == "\n") then
        p:take()
      elseif not (t2.t == "eof" or (stop and stop(t2))) then
        fail(p, "unexpected %s at character %d%s", describe(t2), t2.pos,
          (t2.t == "op" and t2.v == ")") and ": no ( to close" or "")
      end
    end
  end
end

-- Splits str (the inside of a backquote, the string of sh -c, …) one
-- level deeper than p. label: the wrapper it runs in, added to wrappers
-- (default p's); stdin: what its commands read (nil: nothing).
function sub_split(p, str, label, where, stdin, wrappers, positional)
  enter(p) -- checks the bound
  leave(p)
  charge(p, #str)
  wrappers = wrappers or p.wrappers
  if label then
    local list = {}
    for k, w in ipairs(wrappers) do list[k] = w end
    list[#list + 1] = label
    wrappers = list
  end
  local q = new_parser(p.ctx, str, p.depth + 1, wrappers, where, stdin)
  q.in_function, q.positional = p.in_function, positional
  parse_list(q, nil)
end

local function set_opaque(c, reason)
  c.opaque = c.opaque or reason
end

---------------------------------------------------------------------------
-- Variables. The analysis runs in passes (see M.analyze): each pass uses
-- the facts the passes before it found (ctx.facts) and records what it
-- finds (ctx.found): the literal values each name is given anywhere on the
-- line, the names set in ways it does not follow (read, for, printf -v,
-- ${X:=…}: "dynamic"), and declare -n. ctx.env holds the exec tool's env;
-- ctx.seen the names assigned so far in this pass, in the order the shell
-- meets them.

local MAX_VALUES = 8 -- values one variable may take before it is unknown

local function new_facts()
  return { values = {}, dynamic = {}, nameref = false }
end

local function add_value(facts, name, value)
  local v = facts.values[name]
  if not v then v = { list = {}, set = {} }; facts.values[name] = v end
  if not v.set[value] then
    v.set[value] = true
    v.list[#v.list + 1] = value
  end
end

-- The values $name may hold where it is used | nil, why not.
local function var_values(p, name)
  local ctx = p.ctx
  local facts = ctx.facts
  if facts.all_unknown then
    return nil, "the value of $" .. name .. " depends on how the command line runs"
  end
  if facts.nameref then
    return nil, "the command line uses name references (declare -n), so $"
      .. name .. " may hold anything"
  end
  if facts.dynamic[name] then
    return nil, "$" .. name .. " is set in a way the analysis does not follow "
      .. "(read, for, printf -v, X+=, an array, …)"
  end
  local list, seen = {}, {}
  local env = ctx.env[name]
  if env then
    list[1], seen[env] = env, true
  elseif not ctx.seen[name] then
    return nil, "the value of $" .. name .. " is not known (neither set earlier "
      .. "in the command line nor in the exec tool's env)"
  end
  local v = facts.values[name]
  for _, value in ipairs(v and v.list or {}) do
    if not seen[value] then list[#list + 1], seen[value] = value, true end
  end
  if #list == 0 then return nil, "the value of $" .. name .. " is not known yet" end
  if #list > MAX_VALUES then
    return nil, "$" .. name .. " takes more than " .. MAX_VALUES .. " values"
  end
  return list
end

-- Whether IFS may differ from blank, tab, newline (field splitting then
-- cuts elsewhere).
local function ifs_changed(ctx)
  return ctx.env.IFS ~= nil or ctx.facts.values.IFS ~= nil
    or ctx.facts.dynamic.IFS or ctx.facts.nameref
end

-- text with its expansions (exps, from the lexer) replaced by the values
-- they may take: the list of texts the shell may get | nil, why not.
local MAX_TEXTS = 16

-- Whether nothing on the line nor in the exec env sets $name: its value
-- comes from toolgate's own environment, which the agent cannot set.
local function from_runtime_env(p, name)
  local ctx = p.ctx
  local facts = ctx.facts
  return not (facts.all_unknown or facts.nameref or facts.dynamic[name] or
    facts.values[name] or ctx.env[name] or ctx.found.dynamic[name] or
    ctx.found.values[name] or ctx.seen[name] or ctx.found.nameref)
end

local function materialize(p, text, exps)
  if not exps or #exps == 0 then return { text } end
  local out, pos = { "" }, 1
  for _, e in ipairs(exps) do
    local lit = sub(text, pos, e.a - 1)
    local src = sub(text, e.a, e.b)
    local vals, why
    if e.inert or (e.var and not e.runs and from_runtime_env(p, e.var)) then
      -- kept as an expansion: the code that reads it sees a word, not code
      vals = { src }
    elseif not e.var or e.runs then
      return nil, (src ~= "" and "`" .. src .. "`" or "an expansion")
        .. " stands for text the analysis cannot know"
    else
      vals, why = var_values(p, e.var)
    end
    if not vals then return nil, why end
    local nxt = {}
    for _, o in ipairs(out) do
      for _, v in ipairs(vals) do
        if not e.q and find(v, "[*?[]") and v ~= src then
          return nil, "$" .. e.var .. " holds a file name pattern"
        end
        nxt[#nxt + 1] = o .. lit .. v
        charge(p, #nxt[#nxt])
      end
    end
    if #nxt > MAX_TEXTS then return nil, "its variables take too many values" end
    out, pos = nxt, e.b + 1
  end
  local tail = sub(text, pos)
  for k = 1, #out do out[k] = out[k] .. tail end
  return out
end

-- argv[k .. last] joined by blanks (as eval and watch do), with the
-- expansions' places moved along: text, exps, whether a word is a glob.
local function join_words(c, k, last)
  local parts, exps, glob, len = {}, {}, false, 0
  for j = k, last or #c.argv do
    if j > k then parts[#parts + 1] = " "; len = len + 1 end
    local w, info = c.argv[j], c.info[j]
    if info then
      glob = glob or info.glob
      for _, e in ipairs(info.exps or {}) do
        exps[#exps + 1] = { a = e.a + len, b = e.b + len, var = e.var, q = e.q }
      end
    end
    parts[#parts + 1] = w
    len = len + #w
  end
  return concat(parts), exps, glob
end

---------------------------------------------------------------------------
-- Standard input: what a shell with no -c reads its commands from. A
-- source is nil (nothing), { text =, exps = } (a here-string, literal
-- output), { redirect = r } (a here-document, its body maybe not read
-- yet), { producer = c, stderr = } (the command before a |) or
-- { unknown = "what" }.

local function command_stdin(p, c)
  local src = p.stdin
  c.inherits_stdin = true
  for _, r in ipairs(c.redirects) do
    if r.fd == 0 then
      c.inherits_stdin = nil
      if r.op == "<<<" then
        src = { text = r.target .. "\n", exps = r.exps }
      elseif r.op == "<<" or r.op == "<<-" then
        src = { redirect = r }
      elseif r.op == "<&" and r.target == "-" then
        src = nil
      elseif r.op == "<&" and match(r.target, "^%d+$") then
        src = { unknown = "file descriptor " .. r.target }
      else
        src = { unknown = "the file " .. r.target, file = r.target }
      end
    end
  end
  return src
end

local output_of -- forward declaration

-- Calls fn(t) with the text src stands for (nil, { text =, exps = } or
-- { unknown = }), now or, for a here-document not read yet, once it is.
local function with_text(p, src, fn)
  if src == nil or src.text or src.unknown then return fn(src) end
  if src.redirect then
    local r = src.redirect
    local function go() return fn({ text = r.text, exps = r.exps }) end
    if r.body then return go() end
    r.pending = r.pending or {}
    r.pending[#r.pending + 1] = go
    return
  end
  return output_of(p, src.producer, src.stderr, fn)
end

-- What echo writes, when its words are known (bash's echo and dash's
-- differ on backslashes and -e: those are not followed).
local function echo_text(c)
  local k = 2
  while c.argv[k] == "-n" do k = k + 1 end
  if c.argv[k] and match(c.argv[k], "^%-[neE]+$") then return nil end
  for j = k, #c.argv do
    if find(c.argv[j], "\\", 1, true) then return nil end
  end
  local text, exps, glob = join_words(c, k, #c.argv)
  if glob then return nil end
  return { text = text .. "\n", exps = exps }
end

-- What printf writes, for a literal format with no conversion.
local PRINTF_ESC = { n = "\n", t = "\t", ["\\"] = "\\", ['"'] = '"', ["'"] = "'" }

local function printf_text(c)
  local k = c.argv[2] == "--" and 3 or 2
  local fmt = c.argv[k]
  if not fmt or c.info[k] or sub(fmt, 1, 1) == "-" then return nil end
  local out, i = {}, 1
  while i <= #fmt do
    local ch, nx = sub(fmt, i, i), sub(fmt, i + 1, i + 1)
    if ch == "%" then
      if nx ~= "%" then return nil end
      out[#out + 1] = "%"; i = i + 2
    elseif ch == "\\" then
      if not PRINTF_ESC[nx] then return nil end
      out[#out + 1] = PRINTF_ESC[nx]; i = i + 2
    else
      out[#out + 1] = ch; i = i + 1
    end
  end
  return { text = concat(out) }
end

function output_of(p, c, stderr, fn)
  if not c then return fn({ unknown = "the output of a compound command" }) end
  local shown = "`" .. M.join(c.argv) .. "`"
  if stderr then return fn({ unknown = "the error output of " .. shown }) end
  local name = c.info[1] and "" or M.basename(c.argv[1])
  local t
  if c.opaque then
    t = nil
  elseif name == "echo" then
    t = echo_text(c)
  elseif name == "printf" then
    t = printf_text(c)
  elseif name == "cat" then
    for k = 2, #c.argv do
      if c.argv[k] ~= "-" then return fn({ unknown = "the output of " .. shown }) end
    end
    return with_text(p, c.stdin, fn)
  end
  return fn(t or { unknown = "the output of " .. shown })
end

---------------------------------------------------------------------------
-- Code: text a wrapper hands to a shell (sh -c, eval, trap, a here-string
-- fed to bash, …). Its expansions are made first, so their values are
-- code too: each possible text is parsed, or the command is opaque.

local function inner_text(p, c, text, exps, label, glob, positional)
  if glob then
    return set_opaque(c, label .. " runs code made from a file name pattern")
  end
  if p.placeholder and find(text, p.placeholder, 1, true) then
    return set_opaque(c, label .. " runs code made from " .. p.placeholder_from
      .. " (" .. p.placeholder .. ")")
  end
  local texts, why = materialize(p, text, exps)
  if not texts then
    return set_opaque(c, label .. " runs code the analysis cannot see: " .. why)
  end
  for _, t in ipairs(texts) do
    -- set and shift change $1 …: then they are not known
    local pos = positional and not find(t, "set", 1, true) and not find(t, "shift", 1, true)
      and positional or nil
    sub_split(p, t, label, " in the `" .. label .. "` string", c.stdin, c.wrappers, pos)
  end
end

-- argv[k] of c as code; positional: its $0, $1 … when known.
local function inner_word(p, c, k, label, positional)
  local info = c.info[k] or {}
  return inner_text(p, c, c.argv[k], info.exps, label, info.glob, positional)
end

-- sh -c STRING NAME ARGS…: $0 is NAME, $1 … the ARGS, when all are known.
local function shell_positional(c, k)
  local pos = { [0] = c.argv[k] or "sh" }
  for j = k, #c.argv do
    if c.info[j] then return nil end
    if j > k then pos[#pos + 1] = c.argv[j] end
  end
  return pos
end

-- A shell reading its commands from its standard input.
local function shell_reads(p, c, name)
  if c.inherits_stdin then
    -- a redirection after the compound around it may feed it: refeed
    c.reads_stdin = function(q, d) return shell_reads(q, d, name) end
  end
  if c.stdin == nil and p.in_function > 0 then
    return set_opaque(c, name .. " runs commands from the input its function "
      .. "is called with")
  end
  with_text(p, c.stdin, function(t)
    if t == nil then return end
    if t.unknown then
      if t.file then
        return set_opaque(c, name .. " runs the script file " .. t.file
          .. ": the analysis does not read files")
      end
      return set_opaque(c, name .. " runs commands it reads from " .. t.unknown
        .. ", which the analysis cannot see")
    end
    local texts, why = materialize(p, t.text, t.exps)
    if not texts then
      return set_opaque(c, name .. " runs commands from its input that the "
        .. "analysis cannot see: " .. why)
    end
    for _, text in ipairs(texts) do
      sub_split(p, text, name .. " (stdin)", " in the input of `" .. name .. "`",
        nil, c.wrappers)
    end
  end)
end

-- A compound command with a redirection of 0 (c) ends: the commands in it
-- since n0 that read the input they inherit read what c gives too.
function refeed(p, c, n0)
  local src
  for _, r in ipairs(c.redirects) do
    if r.fd == 0 then src = command_stdin(p, c) end
  end
  if not src then return end
  local out = p.ctx.out
  for k = n0 + 1, #out - 1 do
    local d = out[k]
    if d.reads_stdin then
      d.stdin, d.inherits_stdin = src, nil
      d.reads_stdin(p, d)
    end
  end
end

---------------------------------------------------------------------------
-- Wrappers: commands that run another command given in their arguments.

-- Index of the first operand of argv from k on, skipping options. spec.arg:
-- short options that take an argument; spec.long_arg: long ones.
local function skip_opts(argv, k, spec)
  while k <= #argv do
    local w = argv[k]
    if w == "--" then return k + 1 end
    if sub(w, 1, 1) ~= "-" or w == "-" then return k end
    if sub(w, 1, 2) == "--" then
      local name = match(w, "^%-%-([^=]*)")
      if spec.long_arg and spec.long_arg[name] and not find(w, "=", 1, true) then
        k = k + 1
      end
    elseif spec.arg then
      for j = 2, #w do
        if find(spec.arg, sub(w, j, j), 1, true) then
          if j == #w then k = k + 1 end
          break
        end
      end
    end
    k = k + 1
  end
  return k
end

-- The command c runs from argv[k] (to o.last), one level deeper, tagged
-- label. o.assigns: its environment; o.open: xargs adds words to it.
-- Returns whether there was one.
local function inner_argv(p, c, k, label, o)
  o = o or {}
  local last = o.last or #c.argv
  if k > last then return false end
  local wrappers = {}
  for j, w in ipairs(c.wrappers) do wrappers[j] = w end
  wrappers[#wrappers + 1] = label
  local inner = new_cmd(p, {}, wrappers)
  for j = k, last do
    local n = #inner.argv + 1
    inner.argv[n], inner.info[n] = c.argv[j], c.info[j]
  end
  inner.assigns = o.assigns or {}
  inner.stdin, inner.has_stdin, inner.open = c.stdin, true, o.open
  inner.inherits_stdin = c.inherits_stdin
  enter(p)
  inner.depth = p.depth
  finish(p, inner)
  leave(p)
  return true
end

local function take_assigns(c, k)
  local argv, assigns = c.argv, {}
  -- env and sudo take any word with a = as NAME=value (BASH_FUNC_f%%=…)
  while argv[k] and match(argv[k], "^[^=-][^=]*=") do
    local name = match(argv[k], "^([^=]+)=")
    assigns[#assigns + 1] = { name = name, value = sub(argv[k], #name + 2),
      dynamic = c.info[k] and true or nil }
    k = k + 1
  end
  return assigns, k
end

local function opts_then_argv(spec)
  return function(p, argv, name, c)
    local k = skip_opts(argv, 2, spec)
    inner_argv(p, c, k + (spec.operands or 0), name)
  end
end

local has_shell_flag -- forward declaration

local function shq(w) return "'" .. gsub(w, "'", "'\\''") .. "'" end

local W = {}

-- sh -c STRING runs the string; sh -s, sh - and a bare sh read their
-- input; sh FILE runs a script on disk.
local SHELLS = { "sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "ash",
  "yash", "posh", "fish", "rbash", "csh", "tcsh", "elvish", "nu" }
for _, sh in ipairs(SHELLS) do
  W[sh] = function(p, argv, name, c)
    local k, has_c, from_stdin = 2, false, false
    while k <= #argv do
      local w = argv[k]
      if w == "--" or w == "-" then k = k + 1; break end
      local cmd = match(w, "^%-%-command=(.*)")
      if cmd then return inner_text(p, c, cmd, nil, name .. " -c") end
      local lead = sub(w, 1, 1)
      if (lead ~= "-" and lead ~= "+") or #w < 2 then break end
      if sub(w, 1, 2) == "--" then
        if w == "--command" then has_c = true
        elseif w == "--rcfile" or w == "--init-file" then
          set_opaque(c, name .. " " .. w .. " runs a script file")
          k = k + 1
        elseif w == "--login" or w == "--interactive" then
          set_opaque(c, name .. " " .. w .. " first runs its startup scripts "
            .. "(/etc/profile, ~/.profile, ~/.bashrc)")
        end
      else
        if find(w, "c", 2, true) then has_c = true end
        if find(w, "[il]", 2) and lead == "-" then
          set_opaque(c, name .. " " .. w .. " first runs its startup scripts "
            .. "(/etc/profile, ~/.profile, ~/.bashrc)")
        end
        if find(w, "s", 2, true) and lead == "-" then from_stdin = true end
        if find(w, "[oO]", 2) then k = k + 1 end -- -o option takes a name
      end
      k = k + 1
    end
    if has_c then
      if argv[k] then inner_word(p, c, k, name .. " -c", shell_positional(c, k + 1)) end
    elseif from_stdin or not argv[k] then
      shell_reads(p, c, name)
    else
      set_opaque(c, name .. " runs the script file " .. argv[k]
        .. ": the analysis does not read files")
    end
  end
end

-- eval joins its words and runs them; `--` may end its options (bash).
W.eval = function(p, argv, _, c)
  local k = argv[2] == "--" and 3 or 2
  if #argv >= k then
    local text, exps, glob = join_words(c, k, #argv)
    inner_text(p, c, text, exps, "eval", glob)
  end
end

-- trap 'STRING' SIGNALS: the string runs when a signal comes or the shell
-- exits. `trap - SIG`, `trap SIG` and trap -p/-l run nothing.
W.trap = function(p, argv, _, c)
  local k = argv[2] == "--" and 3 or 2
  local action = argv[k]
  if action and argv[k + 1] and action ~= "-" and sub(action, 1, 1) ~= "-" then
    inner_word(p, c, k, "trap")
  end
end

local function runs_file(p, argv, name, c)
  set_opaque(c, name .. " runs the script file " .. (argv[2] or "(none named)")
    .. ": the analysis does not read files")
end
W.source = runs_file
W["."] = runs_file

-- alias NAME=VALUE: the value runs where the name is used (dash expands
-- aliases in scripts; bash with expand_aliases).
W.alias = function(p, argv, _, c)
  for k = 2, #argv do
    local value = match(argv[k], "^[^=]+=(.*)")
    if value then
      if c.info[k] then
        set_opaque(c, "alias " .. argv[k] .. " is made from an expansion")
      else
        inner_text(p, c, value, nil, "alias")
      end
    end
  end
end

-- A builtin whose short option `letter` makes later command names run
-- code it was not given as a command: opaque, with `reason`.
local function opaque_with_flag(letter, reason)
  return function(_, argv, _, c)
    for k = 2, #argv do
      if sub(argv[k], 1, 1) == "-" and find(argv[k], letter, 2, true) then
        return set_opaque(c, reason)
      end
    end
  end
end
W.hash = opaque_with_flag("p", "hash -p makes a command name run another program")
W.enable = opaque_with_flag("f", "enable -f loads a builtin command from a library file")

W.fc = function(_, _, _, c)
  set_opaque(c, "fc runs commands again from the shell's history")
end

W.coproc = function(p, argv, name, c)
  inner_argv(p, c, 2, name)
end

W.sudo = function(p, argv, name, c)
  local k = skip_opts(argv, 2, { arg = "CDghpRrTtUu", long_arg = {
    ["close-from"] = true, chdir = true, group = true, host = true,
    prompt = true, chroot = true, role = true, type = true,
    ["command-timeout"] = true, ["other-user"] = true, user = true } })
  local assigns
  assigns, k = take_assigns(c, k)
  if not inner_argv(p, c, k, name, { assigns = assigns }) and has_shell_flag(argv, k) then
    shell_reads(p, c, name .. " -s") -- sudo -s, sudo -i: a shell on its input
  end
end
W.doas = function(p, argv, name, c)
  local k = skip_opts(argv, 2, { arg = "uC" })
  if not inner_argv(p, c, k, name) and has_shell_flag(argv, k) then
    shell_reads(p, c, name .. " -s")
  end
end
W.pkexec = opts_then_argv({ long_arg = { user = true } })
W.run0 = opts_then_argv({ arg = "uDg", long_arg = { user = true,
  group = true, chdir = true, machine = true, description = true,
  ["slice"] = true, property = true, nice = true, setenv = true } })

-- Whether the options before argv[k] hold -s or -i (sudo, doas: run a shell).
function has_shell_flag(argv, k)
  for j = 2, math.min(k - 1, #argv) do
    local w = argv[j]
    if w == "--shell" or w == "--login" or (sub(w, 1, 1) == "-" and sub(w, 2, 2) ~= "-"
        and find(w, "[si]", 2)) then
      return true
    end
  end
  return false
end

-- su -c STRING, runuser -c STRING; runuser -u USER cmd …; else a shell
-- that reads its input.
local function su_like(p, argv, name, c)
  local k = 2
  while k <= #argv do
    local w = argv[k]
    local cmd = match(w, "^%-%-command=(.*)")
    if cmd then return inner_text(p, c, cmd, nil, name .. " -c") end
    if w == "--command" or match(w, "^%-[^-]*c$") then -- -c, -lc
      if argv[k + 1] then inner_word(p, c, k + 1, name .. " -c") end
      return
    end
    if w == "--" and name == "runuser" then return inner_argv(p, c, k + 1, name) end
    if w == "-s" or w == "--shell" or w == "-g" or w == "--group" or
        (name == "runuser" and (w == "-u" or w == "--user")) then
      k = k + 1
    end
    k = k + 1
  end
  shell_reads(p, c, name)
end
W.su = su_like
W.runuser = su_like

W.env = function(p, argv, name, c)
  local k, split, split_k = 2, nil, nil
  while k <= #argv do
    local w = argv[k]
    if w == "--" then k = k + 1; break end
    if w == "-" then
      k = k + 1
    elseif sub(w, 1, 2) == "--" then
      local long, val = match(w, "^%-%-([^=]*)=?(.*)")
      local has_val = find(w, "=", 1, true) ~= nil
      if long == "split-string" then
        if has_val then split, split_k = val, k
        else split, split_k = argv[k + 1], k + 1; k = k + 1 end
      elseif (long == "unset" or long == "chdir") and not has_val then
        k = k + 1
      end
      k = k + 1
    elseif sub(w, 1, 1) == "-" then
      for j = 2, #w do
        local ch = sub(w, j, j)
        if ch == "u" or ch == "C" or ch == "S" or ch == "P" then
          local val, at = sub(w, j + 1), k
          if val == "" then val, at = argv[k + 1], k + 1; k = k + 1 end
          if ch == "S" then split, split_k = val, at end
          break
        end
      end
      k = k + 1
    else
      break
    end
  end
  local assigns
  assigns, k = take_assigns(c, k)
  if split then
    -- env -S splits its string into words; the rest follow as they are.
    if c.info[split_k] then
      return set_opaque(c, "env -S splits a string made by an expansion")
    end
    local rest = {}
    for j = k, #argv do rest[#rest + 1] = shq(argv[j]) end
    return inner_text(p, c, split .. " " .. concat(rest, " "), nil, "env -S")
  end
  inner_argv(p, c, k, name, { assigns = assigns })
end

-- exec with only redirections changes what the rest of the script reads.
W.exec = function(p, argv, name, c)
  local k = skip_opts(argv, 2, { arg = "a" })
  if k > #argv then
    for _, r in ipairs(c.redirects) do
      if r.fd == 0 then
        return set_opaque(c, "exec " .. r.op .. " " .. r.target .. " changes what "
          .. "the commands after it read; the analysis does not follow it")
      end
    end
  end
  inner_argv(p, c, k, name)
end
W.builtin = opts_then_argv({})
W.nohup = opts_then_argv({})
W.unbuffer = opts_then_argv({})
W.setsid = opts_then_argv({})
W.time = opts_then_argv({ arg = "fo", long_arg = { format = true, output = true } })
W.nice = opts_then_argv({ arg = "n", long_arg = { adjustment = true } })
W.ionice = opts_then_argv({ arg = "cnp", long_arg = { class = true,
  classdata = true, pid = true, pgid = true, uid = true } })
W.chrt = opts_then_argv({ operands = 1 })
W.taskset = opts_then_argv({ operands = 1 })
W.timeout = opts_then_argv({ arg = "sk", long_arg = { signal = true,
  ["kill-after"] = true }, operands = 1 })
W.stdbuf = opts_then_argv({ arg = "ioe", long_arg = { input = true,
  output = true, error = true } })
W.chroot = opts_then_argv({ long_arg = { userspec = true, groups = true },
  operands = 1 })
W.unshare = opts_then_argv({ long_arg = { propagation = true, setgroups = true } })
W.nsenter = opts_then_argv({ arg = "tSG", long_arg = { target = true } })
W.setpriv = opts_then_argv({ long_arg = { reuid = true, regid = true,
  groups = true, ["inh-caps"] = true, ["ambient-caps"] = true,
  ["bounding-set"] = true, securebits = true, ["selinux-label"] = true,
  ["apparmor-profile"] = true } })
W.strace = opts_then_argv({ arg = "abeEIoOpPsSuUX" })
W.ltrace = opts_then_argv({ arg = "aAeflnopsuw" })
W.valgrind = opts_then_argv({})
W.catchsegv = opts_then_argv({})
W.firejail = opts_then_argv({})

-- xargs runs its command with words from its input: appended (the
-- command is "open": a wrapper left without its command gets it from
-- the input) or, with -I R, put in place of R.
W.xargs = function(p, argv, name, c)
  local k, replace = 2, nil
  local takes = "adEeILlnPs"
  while k <= #argv do
    local w = argv[k]
    if w == "--" then k = k + 1; break end
    if sub(w, 1, 1) ~= "-" or w == "-" then break end
    if sub(w, 1, 2) == "--" then
      local long, val = match(w, "^%-%-([^=]*)=?(.*)")
      if long == "replace" then replace = val ~= "" and val or "{}" end
      if ({ ["arg-file"] = 1, delimiter = 1, ["max-args"] = 1, ["max-procs"] = 1,
          ["max-chars"] = 1, ["process-slot-var"] = 1, ["max-lines"] = 0,
          eof = 0 })[long] == 1 and not find(w, "=", 1, true) then
        k = k + 1
      end
    else
      for j = 2, #w do
        local ch = sub(w, j, j)
        if ch == "i" then replace = sub(w, j + 1) ~= "" and sub(w, j + 1) or "{}"; break end
        if find(takes, ch, 1, true) then
          local val = sub(w, j + 1)
          if val == "" and ch ~= "e" and ch ~= "l" then val = argv[k + 1]; k = k + 1 end
          if ch == "I" then replace = val end
          break
        end
      end
    end
    k = k + 1
  end
  if k > #argv then return end -- echo
  if replace then
    local old, from = p.placeholder, p.placeholder_from
    p.placeholder, p.placeholder_from = replace, "the words xargs reads from its input"
    inner_argv(p, c, k, name)
    p.placeholder, p.placeholder_from = old, from
  else
    inner_argv(p, c, k, name, { open = true })
  end
end

W.command = function(p, argv, name, c)
  for k = 2, #argv do
    local w = argv[k]
    if sub(w, 1, 1) ~= "-" or w == "--" then break end
    if find(w, "[vV]") then return end -- command -v only looks the name up
  end
  inner_argv(p, c, skip_opts(argv, 2, {}), name)
end

W.busybox = function(p, argv, name, c)
  if argv[2] and sub(argv[2], 1, 1) ~= "-" then inner_argv(p, c, 2, name) end
end
W.toybox = W.busybox

W.watch = function(p, argv, name, c)
  local exec_mode = false
  local k = 2
  while k <= #argv do
    local w = argv[k]
    if w == "--" then k = k + 1; break end
    if sub(w, 1, 1) ~= "-" then break end
    if w == "-x" or w == "--exec" then exec_mode = true
    elseif w == "-n" or w == "--interval" or w == "-q" or w == "--equexit" then
      k = k + 1
    end
    k = k + 1
  end
  if k > #argv then return end
  if exec_mode then return inner_argv(p, c, k, name) end
  local text, exps, glob = join_words(c, k, #argv)
  inner_text(p, c, text, exps, name, glob)
end

W.flock = function(p, argv, name, c)
  local k, operand = 2, nil
  while k <= #argv do
    local w = argv[k]
    local cmd = match(w, "^%-%-command=(.*)")
    if cmd then return inner_text(p, c, cmd, nil, name .. " -c") end
    if w == "-c" or w == "--command" then
      if argv[k + 1] then inner_word(p, c, k + 1, name .. " -c") end
      return
    end
    if sub(w, 1, 1) == "-" and w ~= "-" then
      if w == "-w" or w == "--wait" or w == "--timeout" or w == "-E"
        or w == "--conflict-exit-code" then k = k + 1 end
    elseif not operand then
      operand = k
    else
      return inner_argv(p, c, k, name)
    end
    k = k + 1
  end
end

W.script = function(p, argv, name, c)
  for k = 2, #argv do
    local cmd = match(argv[k], "^%-%-command=(.*)")
    if cmd then return inner_text(p, c, cmd, nil, name .. " -c") end
    if (argv[k] == "--command" or match(argv[k], "^%-[^-]*c$")) and argv[k + 1] then
      return inner_word(p, c, k + 1, name .. " -c") -- -c, -qc
    end
  end
end


W.parallel = function(_, _, _, c)
  set_opaque(c, "parallel builds its commands from its arguments and input")
end

-- at and batch read commands from their input, to run later.
local function at_like(p, _, name, c) shell_reads(p, c, name) end
W.at = at_like
W.batch = at_like

local FIND_EXEC = { ["-exec"] = true, ["-execdir"] = true, ["-ok"] = true,
  ["-okdir"] = true }

W.find = function(p, argv, _, c)
  local k = 2
  while k <= #argv do
    local w = argv[k]
    if FIND_EXEC[w] then
      local j = k + 1
      while j <= #argv and argv[j] ~= ";" and
        not (argv[j] == "+" and argv[j - 1] == "{}") do
        j = j + 1
      end
      local old, from = p.placeholder, p.placeholder_from
      p.placeholder, p.placeholder_from = "{}", "the file names find finds"
      inner_argv(p, c, k + 1, "find " .. w, { last = j - 1 })
      p.placeholder, p.placeholder_from = old, from
      k = j
    end
    k = k + 1
  end
end

---------------------------------------------------------------------------
-- Interpreters given code: their program is not shell, so it is not read.

local STDIN_FILE = { ["-"] = true, ["/dev/stdin"] = true, ["/dev/fd/0"] = true,
  ["/proc/self/fd/0"] = true }

-- code: short options (letters) or long ones that take a program text.
-- takes: short options that take an argument (the next word).
local function interpreter(code, long, takes)
  takes = takes or ""
  return function(_, argv, name, c)
    local operand, k = nil, 2
    while k <= #argv do -- every word: python script.py -c x asks, so be it
      local w = argv[k]
      if w == "--" then operand = operand or argv[k + 1] or false; break end
      if sub(w, 1, 2) == "--" then
        local l = match(w, "^%-%-([^=]*)")
        if long and long[l] then
          return set_opaque(c, name .. " " .. w .. " runs code the analysis does not read")
        end
        if l == "version" or l == "help" then operand = operand or w end
      elseif sub(w, 1, 1) == "-" and #w > 1 then
        if code ~= "" and find(sub(w, 2), "[" .. code .. "]") then
          return set_opaque(c, name .. " " .. w .. " runs code the analysis does not read")
        end
        if find(w, "^%-[mVh]") then operand = operand or w end
        if #w == 2 and find(takes, sub(w, 2, 2), 1, true) then k = k + 1 end
      else
        operand = operand or w
      end
      k = k + 1
    end
    if not operand or STDIN_FILE[operand] then
      if c.stdin then return set_opaque(c, name .. " reads its program from its input") end
      if c.inherits_stdin then
        c.reads_stdin = function(_, d)
          set_opaque(d, name .. " reads its program from its input")
        end
      end
    end
  end
end

local INTERPRETERS = {
  python = interpreter("c", nil, "WXQ"), pypy = interpreter("c", nil, "WXQ"),
  node = interpreter("ep", { eval = true, print = true }, "r"),
  perl = interpreter("eE", nil, "IMmx"), ruby = interpreter("e", nil, "Ir"),
  php = interpreter("r", { run = true }, "cdz"),
  lua = interpreter("e", nil, "l"), luajit = interpreter("e", nil, "lbj"),
  tclsh = interpreter(""), Rscript = interpreter("e"), R = interpreter("e"),
  osascript = interpreter("e"), pwsh = interpreter("cC", { command = true }),
  expect = interpreter("c"), wish = interpreter(""),
}
INTERPRETERS.nodejs = INTERPRETERS.node

local function interpreter_of(name)
  local base = match(name, "^(%a+)[%d.]*$") -- python3.12, lua5.4, pypy3
  return base and INTERPRETERS[base]
end

-- awk: its program may run commands (system(), print | "cmd", "cmd" |
-- getline); those programs are opaque.
local function awk_w(_, argv, name, c)
  local k = 2
  while k <= #argv do
    local w = argv[k]
    if w == "--" then k = k + 1; break end
    if sub(w, 1, 1) ~= "-" or w == "-" then break end
    if w == "-f" or w == "-E" or w == "-l" or find(w, "^%-%-file") or find(w, "^%-%-exec") or
        find(w, "^%-%-load") or find(w, "^%-%-include") or w == "-i" then
      return set_opaque(c, name .. " " .. w .. " runs a program file the analysis does not read")
    end
    if w == "-e" or w == "--source" then
      if argv[k + 1] and (c.info[k + 1] or find(argv[k + 1], "system") or
          find(argv[k + 1], "|", 1, true) or find(argv[k + 1], "@")) then
        return set_opaque(c, name .. " runs a program that may run commands")
      end
      k = k + 1
    elseif w == "-F" or w == "-v" then
      k = k + 1
    end
    k = k + 1
  end
  local prog = argv[k]
  if not prog then return end
  if c.info[k] then
    return set_opaque(c, name .. "'s program is made from an expansion")
  end
  if find(prog, "system") or find(prog, "|", 1, true) or find(prog, "@", 1, true) then
    set_opaque(c, name .. "'s program may run commands (system(), a pipe)")
  end
end
for _, n in ipairs { "awk", "gawk", "mawk", "nawk", "busybox-awk" } do W[n] = awk_w end

-- sed: the `e` command and the s///e flag run a command (GNU sed).
local function sed_skip_re(s, i, d)
  while i <= #s do
    local ch = sub(s, i, i)
    if ch == "\\" then i = i + 2
    elseif ch == d then return i + 1
    else i = i + 1 end
  end
  return nil
end

local function sed_address(s, i)
  while i <= #s do
    local ch = sub(s, i, i)
    if find(ch, "[%d$,~+!%s]") then
      i = i + 1
    elseif ch == "/" then
      i = sed_skip_re(s, i + 1, "/"); if not i then return nil end
      local _, b = find(s, "^[IM]*", i); i = b + 1
    elseif ch == "\\" then
      i = sed_skip_re(s, i + 2, sub(s, i + 1, i + 1)); if not i then return nil end
    else
      return i
    end
  end
  return i
end

local function sed_runs(s)
  local i = 1
  while i <= #s do
    local _, b = find(s, "^[%s;{}]+", i)
    if b then i = b + 1 end
    if i > #s then return false end
    i = sed_address(s, i)
    if not i then return true end
    local ch = sub(s, i, i)
    if ch == "e" then return true end
    if ch == "s" or ch == "y" then
      local d = sub(s, i + 1, i + 1)
      if d == "" or d == "\n" or d == "\\" then return true end
      i = sed_skip_re(s, i + 2, d)
      i = i and sed_skip_re(s, i, d)
      if not i then return true end
      local flags = match(s, "^[^;\n}]*", i)
      local wpos = find(flags, "w", 1, true)
      if ch == "s" and find(wpos and sub(flags, 1, wpos - 1) or flags, "e", 1, true) then
        return true
      end
      i = wpos and ((find(s, "\n", i, true) or #s) + 1) or i + #flags
    elseif find(ch, "[aicrRwWbtT:]") then
      i = (find(s, "\n", i, true) or #s) + 1
    else
      i = i + 1
    end
  end
  return false
end

local function sed_w(_, argv, name, c)
  local scripts, k, given = {}, 2, false
  while k <= #argv do
    local w = argv[k]
    if w == "--" then k = k + 1; break end
    if sub(w, 1, 1) ~= "-" or w == "-" then break end
    local long, val = match(w, "^%-%-([^=]*)=?(.*)")
    if w == "-f" or long == "file" or (not long and find(w, "^%-[^-]*f")) then
      return set_opaque(c, name .. " " .. w .. " runs a script file the analysis does not read")
    elseif w == "-e" or (long == "expression" and not find(w, "=", 1, true)) then
      scripts[#scripts + 1] = k + 1; given = true; k = k + 1
    elseif long == "expression" then
      if sed_runs(val) then return set_opaque(c, name .. " runs commands (its e command)") end
      given = true
    elseif find(w, "^%-[nrEsuz]*e") then
      scripts[#scripts + 1] = k + 1; given = true; k = k + 1
    elseif w == "-l" then
      k = k + 1
    end
    k = k + 1
  end
  if not given then scripts[#scripts + 1] = k end
  for _, j in ipairs(scripts) do
    if argv[j] then
      if c.info[j] then return set_opaque(c, name .. "'s script is made from an expansion") end
      if sed_runs(argv[j]) then
        return set_opaque(c, name .. " runs commands (its e command or s///e)")
      end
    end
  end
end
W.sed = sed_w
W.gsed = sed_w

-- Options with which a program runs a command given in them (tar
-- --to-command=…, rsync -e …, vim -c …): the command is opaque.
local RUN_OPTS = {
  tar = { "--to-command", "--checkpoint-action", "-I", "--use-compress-program",
    "--rsh-command", "--info-script", "-F", "--new-volume-script" },
  rsync = { "-e", "--rsh", "--rsync-path" },
  ssh = { "-oProxyCommand", "-oLocalCommand", "-oKnownHostsCommand",
    "-oPermitLocalCommand" },
  scp = { "-S", "-oProxyCommand" }, sftp = { "-S", "-oProxyCommand" },
  vim = { "-c", "+", "--cmd", "-S" }, vi = { "-c", "+", "--cmd", "-S" },
  nvim = { "-c", "+", "--cmd", "-S" }, ex = { "-c", "+", "-S" },
  gdb = { "-ex", "-x", "--command", "--eval-command", "-iex" },
  zip = { "-TT", "--unzip-command" }, man = { "-P", "--pager", "-H", "--html" },
  less = { "+!" }, nmap = { "--script" },
  emacs = { "--eval", "-eval", "-l", "--load", "-f", "--funcall", "-x", "--script" }, mapfile = { "-C" }, readarray = { "-C" },
  compgen = { "-C" }, complete = { "-C" }, ["git-upload-pack"] = {},
}

local function run_opts_w(p, argv, name, c)
  local list = RUN_OPTS[name]
  for k = 2, #argv do
    -- ssh -o ProxyCommand=…: join the two words
    local w = argv[k] == "-o" and argv[k + 1] and "-o" .. argv[k + 1] or argv[k]
    for _, opt in ipairs(list) do
      if sub(w, 1, #opt) == opt and (sub(opt, 1, 1) ~= "-" or #w == #opt or
          find(sub(w, #opt + 1, #opt + 1), "[=%w ]") or #opt <= 2) then
        return set_opaque(c, name .. " " .. w .. " makes " .. name .. " run a command")
      end
    end
  end
end
for name in pairs(RUN_OPTS) do W[name] = run_opts_w end

-- git -c may set a command git runs (a pager, an editor, an alias with !).
W.git = function(_, argv, _, c)
  for k = 2, #argv - 1 do
    if argv[k] == "-c" then
      local key = string.lower(match(argv[k + 1], "^[^=]*"))
      if find(key, "pager") or find(key, "editor") or find(key, "command") or
          find(key, "^alias%.") or find(key, "program") or find(key, "fsmonitor") or
          find(key, "hookspath") or find(key, "textconv") or find(key, "^filter%.") or
          find(key, "askpass") or find(key, "helper") or find(key, "external") or
          find(key, "proxy") or find(key, "cmd") then
        return set_opaque(c, "git -c " .. argv[k + 1] .. " may make git run a command")
      end
    elseif sub(argv[k], 1, 1) ~= "-" then
      return
    end
  end
end

---------------------------------------------------------------------------
-- Each simple command found goes through finish: what it assigns is
-- recorded, a command name that is an expansion is resolved (or the
-- command marked opaque), then it is listed and unwrapped.

-- Variables whose value is a command line some program runs.
local CODE_ENV = { PAGER = true, GIT_PAGER = true, MANPAGER = true,
  EDITOR = true, VISUAL = true, GIT_EDITOR = true, GIT_SSH_COMMAND = true,
  GIT_SSH = true, GIT_PROXY_COMMAND = true, GIT_EXTERNAL_DIFF = true,
  GIT_ASKPASS = true, SSH_ASKPASS = true, SUDO_ASKPASS = true,
  LESSOPEN = true, LESSCLOSE = true, BROWSER = true, PROMPT_COMMAND = true,
  SYSTEMD_PAGER = true }
-- Variables that make programs load code from elsewhere.
local LOAD_ENV = { LD_PRELOAD = true, LD_LIBRARY_PATH = true, LD_AUDIT = true,
  GCONV_PATH = true, BASH_ENV = true, ENV = true, NODE_OPTIONS = true,
  PYTHONPATH = true, PYTHONSTARTUP = true, PYTHONHOME = true, PERL5OPT = true,
  PERL5LIB = true, PERLLIB = true, RUBYOPT = true, RUBYLIB = true, PS0 = true,
  PS1 = true, PS2 = true, PS4 = true, SHELLOPTS = true, BASHOPTS = true }

-- An assignment NAME=value (dynamic: made from an expansion) in c.
local function check_env(p, c, name, value, dynamic)
  if LOAD_ENV[name] or match(name, "^BASH_FUNC_") then
    return set_opaque(c, name .. "=… makes programs load code the analysis cannot see")
  end
  if CODE_ENV[name] then
    if dynamic then
      return set_opaque(c, name .. " holds a command made from an expansion")
    end
    inner_text(p, c, value, nil, name)
  end
end

-- a[$(cmd)]: bash runs cmd when it reads the subscript, in arithmetic
-- or where a builtin takes a variable name.
local function runs_subscript(text)
  return find(text, "%[.*[%$`]") ~= nil
end

local function note_assign(p, c, name, value, dynamic)
  local ctx = p.ctx
  ctx.seen[name] = true
  if runs_subscript(value) then
    set_opaque(c, "the value of " .. name .. " holds an array subscript with a "
      .. "command in it; bash runs it where " .. name .. " is read as a number")
  end
  if dynamic then ctx.found.dynamic[name] = true
  else add_value(ctx.found, name, value) end
  check_env(p, c, name, value, dynamic)
end

local DECLARE = { declare = true, typeset = true, ["local"] = true,
  export = true, readonly = true }
-- Builtins that set the variables named in their arguments.
local VAR_SINK = { read = true, mapfile = true, readarray = true,
  printf = true, getopts = true, unset = true, let = true, wait = true }

local SUBSCRIPT_BUILTINS = { read = true, printf = true, mapfile = true,
  readarray = true, declare = true, typeset = true, ["local"] = true,
  export = true, readonly = true, unset = true, let = true, test = true,
  ["["] = true, wait = true, getopts = true, ["[["] = true }

local function note_builtin(p, c, name)
  local found = p.ctx.found
  if SUBSCRIPT_BUILTINS[name] then
    for k = 2, #c.argv do
      if not c.info[k] and runs_subscript(c.argv[k]) then
        set_opaque(c, "`" .. c.argv[k] .. "` names an array element whose "
          .. "subscript runs a command")
      end
    end
  end
  if DECLARE[name] then
    for k = 2, #c.argv do
      local w = c.argv[k]
      if sub(w, 1, 1) == "-" or sub(w, 1, 1) == "+" then
        if find(w, "n", 2, true) then found.nameref = true end
      else
        local n, plus, v = match(w, "^([%a_][%w_]*)(%+?)=(.*)")
        if n then
          note_assign(p, c, n, v, (plus ~= "" or c.info[k]) and true or nil)
        elseif match(w, "^[%a_][%w_]*$") then
          p.ctx.seen[w] = true
          add_value(found, w, "") -- local X, declare X: empty
        else
          found.nameref = true -- declare "$x=…": any name
        end
      end
    end
  elseif VAR_SINK[name] then
    for k = 2, #c.argv do
      local n = match(c.argv[k], "^[%a_][%w_]*")
      if n then found.dynamic[n] = true end
      if c.info[k] and (name == "read" or name == "printf" or name == "mapfile"
          or name == "readarray" or name == "unset") then
        found.nameref = true -- read "$name": any variable
      end
    end
  end
end

-- A copy of c with argv[1] replaced by words.
local function with_head(c, words)
  local d = {}
  for key, v in pairs(c) do d[key] = v end
  d.argv, d.info = {}, {}
  for _, w in ipairs(words) do d.argv[#d.argv + 1] = w end
  for k = 2, #c.argv do
    local n = #d.argv + 1
    d.argv[n], d.info[n] = c.argv[k], c.info[k]
  end
  return d
end

-- Field splitting of one word: literal text is never split; the value of
-- an unquoted expansion is, on blanks, tabs and newlines (IFS as the shell
-- sets it; a line that changes IFS is not followed).
local function split_fields(text, exps, values)
  local fields, cur, pos = {}, nil, 1
  local function push() if cur then fields[#fields + 1] = cur; cur = nil end end
  for i, e in ipairs(exps) do
    if e.a > pos then cur = (cur or "") .. sub(text, pos, e.a - 1) end
    local v = values[i]
    if e.q then
      cur = (cur or "") .. v
    else
      if find(v, "^[ \t\n]") then push() end
      local first = true
      for w in gmatch(v, "[^ \t\n]+") do
        if not first then push() end
        cur, first = (cur or "") .. w, false
      end
      if find(v, "[ \t\n]$") then push() end
    end
    pos = e.b + 1
  end
  if pos <= #text then cur = (cur or "") .. sub(text, pos) end
  push()
  return fields
end

-- The ways a word with expansions may come out: a list of field lists |
-- nil, why not. Every expansion must be a variable whose values are known.
local function expand_word(p, word, info)
  local exps = info.exps
  local choices, n = {}, 1
  for i, e in ipairs(exps) do
    local vals, why
    local pos = e.pos and p.in_function == 0 and p.positional
    if pos and e.pos == "@" and e.q and #exps == 1 and e.a == 1 and e.b == #word then
      -- "$@": one word per argument
      local fields = {}
      for j = 1, #pos do fields[j] = pos[j] end
      return { fields }
    elseif pos and (e.pos == "@" or e.pos == "*") and not (e.q and e.pos == "@") then
      vals = { concat(pos, " ") }
    elseif pos and e.pos ~= "@" and e.pos ~= "*" then
      vals = { pos[tonumber(e.pos)] or "" }
    elseif e.var and not e.runs then
      if e.var == "IFS" and not ifs_changed(p.ctx) then
        vals = { " \t\n" }
      else
        vals, why = var_values(p, e.var)
      end
    end
    if not vals then
      return nil, why or ("`" .. sub(word, e.a, e.b) .. "` stands for text the "
        .. "analysis cannot know")
    end
    local shown = sub(word, e.a, e.b)
    if not e.q and ifs_changed(p.ctx) then
      return nil, "IFS is changed, so " .. shown .. " splits in unknown places"
    end
    for _, v in ipairs(vals) do
      if not e.q and find(v, "[*?[]") then
        return nil, shown .. " holds a file name pattern"
      end
    end
    choices[i], n = vals, n * #vals
    if n > MAX_TEXTS then return nil, "its variables take too many values" end
  end
  local out = {}
  for k = 0, n - 1 do -- each combination of values
    local values, rest = {}, k
    for i, vals in ipairs(choices) do
      values[i] = vals[rest % #vals + 1]
      rest = floor(rest / #vals)
    end
    out[#out + 1] = split_fields(word, exps, values)
    for _, f in ipairs(out[#out]) do charge(p, #f + 1) end
  end
  return out
end

-- The command name argv[1] holds expansions: the list of commands it
-- stands for | nil, why not.
local function resolve_head(p, c)
  local info = c.info[1]
  local alts, why = expand_word(p, c.argv[1], info)
  if not alts then
    local e = info.exps[1]
    if #info.exps == 1 and e.var and e.a == 1 and e.b == #c.argv[1] then
      return nil, why -- $X: what is not known of X
    end
    return nil, "the command name `" .. c.argv[1] .. "` comes from an expansion "
      .. "the analysis cannot resolve"
  end
  local out = {}
  for _, words in ipairs(alts) do
    if info.glob or (words[1] and find(words[1], "[*?[]")) then
      return nil, "the command name `" .. c.argv[1] .. "` is a file name pattern"
    end
    out[#out + 1] = with_head(c, words)
  end
  return out
end

local emit_one

-- Words after the command name whose expansions have one known value each
-- are put in their place, split as the shell splits them (rm $F /x with
-- F=-rf is rm -rf /x); the others keep their source text.
local function resolve_args(p, c)
  local argv, info, changed = { c.argv[1] }, { c.info[1] }, false
  for k = 2, #c.argv do
    local wi = c.info[k]
    local alts = wi and wi.exps and not wi.glob and expand_word(p, c.argv[k], wi)
    local words = alts and #alts == 1 and alts[1]
    if words then
      changed = true
      for _, w in ipairs(words) do argv[#argv + 1] = w end
    else
      argv[#argv + 1] = c.argv[k]
      info[#argv] = c.info[k]
    end
  end
  if changed then c.argv, c.info = argv, info end
end

function finish(p, c)
  if not c.has_stdin then c.stdin, c.has_stdin = command_stdin(p, c), true end
  if not c.noted then
    c.noted = true
    for _, a in ipairs(c.assigns) do note_assign(p, c, a.name, a.value, a.dynamic) end
    if c.argv[1] ~= nil then resolve_args(p, c) end
  end
  if c.argv[1] == nil then return emit(p, c) end
  local info = c.info[1]
  if info and info.exps then
    local list, why = resolve_head(p, c)
    if not list then
      set_opaque(c, why)
      return emit(p, c)
    end
    for _, d in ipairs(list) do
      if d.argv[1] == nil then emit(p, d) else finish(p, d) end
    end
    return
  end
  emit_one(p, c)
end

function emit_one(p, c)
  local name = M.basename(c.argv[1])
  local info = c.info[1]
  for _, i in pairs(c.info) do
    for _, e in ipairs(i.exps or {}) do
      if e.runs then set_opaque(c, "${…@P} runs the commands in a variable's value") end
    end
  end
  if info and info.glob then
    set_opaque(c, "the command name `" .. c.argv[1] .. "` is a pattern the shell "
      .. "matches against file names")
  end
  if p.placeholder and find(c.argv[1], p.placeholder, 1, true) then
    set_opaque(c, "the command name comes from " .. p.placeholder_from
      .. " (" .. p.placeholder .. ")")
  end
  note_builtin(p, c, name)
  emit(p, c)
  local n_out = #p.ctx.out
  unwrap(p, c)
  if c.open and W[name] and #p.ctx.out == n_out then
    set_opaque(c, "xargs adds words from its input to `" .. M.join(c.argv)
      .. "`: the command it runs comes from that input")
  end
end

-- ssh HOST COMMAND…: the words after the host are joined and run by the
-- remote shell (localhost is this machine).
W.ssh = function(p, argv, name, c)
  run_opts_w(p, argv, name, c)
  local k = skip_opts(argv, 2, { arg = "BbcDEeFIiJLlmOoPpQRSWw" })
  if argv[k] and argv[k + 1] then
    local text, exps, glob = join_words(c, k + 1, #argv)
    inner_text(p, c, text, exps, name, glob)
  end
end

-- sg GROUP -c CMD, sg GROUP CMD…: run by /bin/sh -c.
W.sg = function(p, argv, name, c)
  local k = 3
  if argv[k] == "-c" then k = k + 1 end
  if argv[k] then
    local text, exps, glob = join_words(c, k, #argv)
    inner_text(p, c, text, exps, name, glob)
  end
end

-- capsh … -- ARGS: runs bash ARGS.
W.capsh = function(p, argv, name, c)
  for k = 2, #argv do
    if argv[k] == "--" then
      local d = with_head(c, { "bash" })
      d.argv, d.info = { "bash" }, {}
      for j = k + 1, #argv do
        d.argv[#d.argv + 1], d.info[#d.argv + 1] = argv[j], c.info[j]
      end
      return W.bash(p, d.argv, name .. " --", d)
    end
  end
end

W["systemd-run"] = opts_then_argv({ arg = "pEuMHG", long_arg = { unit = true,
  property = true, setenv = true, uid = true, gid = true, machine = true,
  host = true, description = true, slice = true, ["working-directory"] = true,
  nice = true, ["service-type"] = true, ["on-calendar"] = true,
  ["on-active"] = true, ["timer-property"] = true, ["path-property"] = true,
  ["socket-property"] = true } })

-- the dynamic loader run as a program runs the program it is given
local function ldso_w(p, argv, name, c)
  local k = 2
  while k <= #argv do
    local w = argv[k]
    if w == "--preload" or w == "--audit" then
      return set_opaque(c, name .. " " .. w .. " loads a library into the program")
    end
    if w == "--library-path" or w == "--argv0" or w == "--inhibit-rpath" then
      k = k + 2
    elseif sub(w, 1, 2) == "--" then
      k = k + 1
    else
      break
    end
  end
  inner_argv(p, c, k, name)
end

-- tmux and screen run commands in sessions: those that start one are opaque.
local TMUX_RUNS = { ["new-session"] = true, new = true, ["split-window"] = true,
  splitw = true, ["new-window"] = true, neww = true, ["send-keys"] = true,
  send = true, ["run-shell"] = true, run = true, ["respawn-pane"] = true,
  respawnp = true, ["respawn-window"] = true, respawnw = true,
  ["display-popup"] = true, popup = true, ["if-shell"] = true, ["if"] = true,
  ["source-file"] = true, source = true, ["pipe-pane"] = true, pipep = true }
W.tmux = function(_, argv, name, c)
  for k = 2, #argv do
    if TMUX_RUNS[argv[k]] then
      return set_opaque(c, name .. " " .. argv[k] .. " runs commands in a session "
        .. "the analysis does not follow")
    end
  end
end
W.screen = function(_, argv, name, c)
  for k = 2, #argv do
    if sub(argv[k], 1, 1) ~= "-" or argv[k] == "-X" then
      return set_opaque(c, name .. " runs commands in a session the analysis does "
        .. "not follow")
    end
  end
end

-- make -f - (or /dev/stdin), --eval: recipes from text the analysis does
-- not read as make.
W.make = function(_, argv, name, c)
  for k = 2, #argv do
    local w = argv[k]
    if (w == "-f" or w == "--file" or w == "--makefile") and STDIN_FILE[argv[k + 1] or ""]
        or find(w, "^%-%-eval") or w == "-E" then
      return set_opaque(c, name .. " runs recipes the analysis does not read")
    end
  end
end
W.gmake = W.make

function unwrap(p, c)
  local name = M.basename(c.argv[1])
  local w = W[name] or interpreter_of(name)
    or (match(name, "^ld[%-.].*%.so") and ldso_w)
  if w then w(p, c.argv, name, c) end
end

---------------------------------------------------------------------------
-- Public API.

-- The options of split and analyze, with their defaults.
local function new_ctx(opts)
  local max_read = M.MAX_READ_FACTOR * (opts.max_length or M.MAX_LENGTH)
  return { out = {}, max_depth = opts.max_depth or M.MAX_DEPTH,
    budget = max_read, max_read = max_read,
    max_commands = opts.max_commands or M.MAX_COMMANDS,
    max_brace = opts.max_brace_words or M.MAX_BRACE_WORDS,
    attempts = 0, max_attempts = opts.max_attempts or M.ATTEMPTS_SLACK,
    env = {}, facts = new_facts(), found = new_facts(), seen = {} }
end

-- opts.env: a table NAME -> value (the exec tool's env), or a list of
-- "NAME=value" strings. Non-string entries are ignored.
local function read_env(env, max_len)
  local out = {}
  if type(env) ~= "table" then return out end
  for k, v in pairs(env) do
    if type(v) == "string" and #v > max_len then v = nil end -- then unknown
    if type(k) == "string" and type(v) == "string" then
      if match(k, "^[%a_][%w_]*$") then out[k] = v end
    elseif type(k) == "number" and type(v) == "string" then
      local n, val = match(v, "^([%a_][%w_]*)=(.*)$")
      if n then out[n] = val end
    end
  end
  return out
end

-- Whether pass facts `found` hold anything `facts` does not.
local function grew(facts, found)
  if found.nameref and not facts.nameref then return true end
  for n in pairs(found.dynamic) do
    if not facts.dynamic[n] then return true end
  end
  for n, v in pairs(found.values) do
    local have = facts.values[n]
    for _, value in ipairs(v.list) do
      if not (have and have.set[value]) then return true end
    end
  end
  return false
end

local function merge(facts, found)
  facts.nameref = facts.nameref or found.nameref
  for n in pairs(found.dynamic) do facts.dynamic[n] = true end
  for n, v in pairs(found.values) do
    for _, value in ipairs(v.list) do add_value(facts, n, value) end
  end
end

-- One pass over the line with the facts known so far.
local function run_pass(cmdline, opts, env, facts, stdin)
  local ctx = new_ctx(opts)
  ctx.max_attempts = opts.max_attempts or #cmdline + M.ATTEMPTS_SLACK
  ctx.env, ctx.facts = env, facts
  local top = new_parser(ctx, "", 0, {}, "", nil)
  local names = {}
  for n in pairs(env) do names[#names + 1] = n end
  table.sort(names)
  for _, n in ipairs(names) do -- the exec tool's env, as if set first
    local c = new_cmd(top)
    c.assigns = { { name = n, value = env[n] } }
    c.has_stdin = true
    local n0 = #ctx.out
    check_env(top, c, n, env[n], nil)
    if c.opaque or #ctx.out > n0 then table.insert(ctx.out, n0 + 1, c) end
  end
  local p = new_parser(ctx, cmdline, 0, {}, "", stdin)
  parse_list(p, nil)
  return ctx
end

local MAX_PASSES = 4

-- Drops the analysis' own fields from the commands it returns, and lists
-- in c.unresolved the argv indexes of words that hold an expansion it did
-- not resolve (or a glob): their text is not what the program gets.
local function clean(out)
  for _, c in ipairs(out) do
    local list = {}
    for k = 1, #c.argv do
      local info = c.info and c.info[k]
      if info and (info.exps or info.glob) then list[#list + 1] = k end
    end
    c.unresolved = #list > 0 and list or nil
    c.info, c.stdin, c.has_stdin, c.open, c.noted = nil, nil, nil, nil, nil
    c.inherits_stdin, c.reads_stdin = nil, nil
    for _, r in ipairs(c.redirects) do r.text, r.exps, r.pending = nil, nil, nil end
  end
  return out
end

local function analyze(cmdline, opts)
  if type(cmdline) ~= "string" then
    return nil, "the command must be a string (got " .. type(cmdline) .. ")"
  end
  if type(opts) ~= "table" then opts = {} end
  local max_len = opts.max_length or M.MAX_LENGTH
  if #cmdline > max_len then
    return nil, format("the command is %d bytes long; the splitter reads at most %d",
      #cmdline, max_len)
  end
  local env = read_env(opts.env, max_len)
  local stdin = type(opts.stdin) == "string" and opts.stdin ~= ""
    and { text = opts.stdin } or nil
  local facts = new_facts()
  for pass = 1, MAX_PASSES + 1 do
    if pass > MAX_PASSES then facts.all_unknown = true end
    local ok, ctx = pcall(run_pass, cmdline, opts, env, facts, stdin)
    if not ok then
      if getmetatable(ctx) == ParseError then return nil, ctx.msg end
      error(ctx, 0)
    end
    if facts.all_unknown or not grew(facts, ctx.found) then return clean(ctx.out) end
    merge(facts, ctx.found)
  end
end

-- shell.analyze(line [, opts]) -> list of simple commands | nil, message
-- Every simple command the shell would run for line, through wrappers,
-- strings given to shells, input fed to shells and variables whose value
-- is known. opts.env: the exec tool's env (NAME -> value); opts.stdin:
-- the text given to the command's input; and the bounds of split.
M.analyze = analyze

-- shell.split(cmdline [, opts]) -> list of simple commands | nil, message
-- analyze without an env. opts: max_length, max_depth, max_commands,
-- max_brace_words.
function M.split(cmdline, opts)
  local o = {}
  for k, v in pairs(type(opts) == "table" and opts or {}) do o[k] = v end
  o.env = nil
  return analyze(cmdline, o)
end

-- "/usr/bin/rm" -> "rm"; nil -> "".
function M.basename(argv0)
  if type(argv0) ~= "string" then return "" end
  return match(argv0, "([^/]+)/*$") or argv0
end

-- Whether argv (from argv[2] on) holds one of the short flags in `short`
-- (a string of letters: "rR") or one of the long flags `long` (a name or a
-- list of names, without "--"). Understands -rf, -r -f, --recursive,
-- --recursive=x, and `--` ending the options. opts.abbrev = n also accepts
-- a long flag cut to n or more letters (GNU getopt takes --rec for
-- --recursive); opts.takes_arg = "ef": short options whose argument must
-- not be read as flags. Returns true and the word that matched, or false.
function M.has_flag(argv, short, long, opts)
  opts = opts or {}
  local longs = type(long) == "table" and long or { long }
  local takes = opts.takes_arg or ""
  local k = opts.start or 2
  while k <= #argv do
    local w = argv[k]
    if w == "--" then return false end
    if sub(w, 1, 2) == "--" then
      local name = match(w, "^%-%-([^=]*)")
      for _, l in ipairs(longs) do
        if name == l or (opts.abbrev and #name >= opts.abbrev and
            #name < #l and sub(l, 1, #name) == name) then
          return true, w
        end
      end
    elseif sub(w, 1, 1) == "-" and #w > 1 then
      for j = 2, #w do
        local ch = sub(w, j, j)
        if short and find(short, ch, 1, true) then return true, w end
        if find(takes, ch, 1, true) then
          if j == #w then k = k + 1 end
          break
        end
      end
    end
    k = k + 1
  end
  return false
end

-- The operands of argv (words that are not options), for commands whose
-- options take no argument: {"-R", "--", "-x", "/"} -> {"-x", "/"}.
function M.operands(argv)
  local out, opts_done = {}, false
  for k = 2, #argv do
    local w = argv[k]
    if not opts_done and w == "--" then
      opts_done = true
    elseif opts_done or sub(w, 1, 1) ~= "-" or w == "-" then
      out[#out + 1] = w
    end
  end
  return out
end

-- argv back to a command line, quoting words that need it (for messages).
function M.join(argv)
  local out = {}
  for k, w in ipairs(argv) do
    out[k] = (w ~= "" and not find(w, "[^%w%-_./=:,+@%%]")) and w or shq(w)
  end
  return concat(out, " ")
end

return M
