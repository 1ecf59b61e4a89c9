-- toolgate.shell — splits a POSIX shell command line into the simple
-- commands it would run, with their argv, so a policy rule can judge
-- `npm test && curl … | sh` command by command instead of matching
-- patterns against the whole string.
--
--   local shell = require "toolgate.shell"
--   local cmds, err = shell.split("cd src && sudo rm -rf $(pwd)")
--   -- cmds[i] = { argv = {...}, assigns = {{name=, value=}...},
--   --             redirects = {{fd=, op=, target=, body=?}...},
--   --             depth = n, wrapper = "sudo" | "sh -c" | ... | nil }
--
-- What it understands: quotes ('…', "…" with backslash escapes, $'…' with
-- its escapes, $"…"), backslashes, `;` `&&` `||` `|` `|&` `&` and newlines,
-- comments, subshells ( … ), groups { …; }, $( … ), backquotes, <( … ),
-- ${ … }, $(( … )), brace expansion {a,b} {1..3}, redirections (kept apart
-- from argv), here-documents, leading NAME=value assignments, the compound
-- commands (if/while/until/for/case/select, functions, [[ … ]], (( … ))),
-- and wrappers that run another command: sh/bash/… -c 'string', eval,
-- env, sudo, exec, command, nohup, time, nice, timeout, xargs, find -exec,
-- busybox, watch, su -c, flock and friends (the wrapper's own command is
-- listed, then the command it runs, one level deeper).
--
-- What it cannot know: the values of variables, the output of command
-- substitutions, globs, aliases and functions defined elsewhere, what a
-- script on disk or an interpreter (python -c) does. A word that contains
-- a substitution keeps its source text ("$(pwd)"); the commands inside the
-- substitution are listed on their own.
--
-- Pure Lua (5.1, 5.4, LuaJIT), no globals, no I/O: policies load it with
-- require "toolgate.shell" inside their sandbox.

local M = {}

M.MAX_LENGTH = 65536   -- bytes of command line split at most
M.MAX_DEPTH = 16       -- nesting of ( ) { } $( ) ` ` and wrappers
M.MAX_COMMANDS = 4096  -- simple commands in one command line
M.MAX_BRACE_WORDS = 1024 -- words one brace expansion may make
-- Readings of ambiguous input ($(( and (( are read two ways) tried in one
-- split, at most: the length of the command line plus this. A plain line
-- tries each at most twice per three bytes; nesting them multiplies the
-- readings (2^n for n levels), which this bounds.
M.ATTEMPTS_SLACK = 256

local sub, find, match, gsub = string.sub, string.find, string.match, string.gsub
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

local function new_parser(ctx, s, depth, wrapper, where)
  return setmetatable({
    ctx = ctx, s = s, n = #s, i = 1, la = nil,
    depth = depth, wrapper = wrapper, where = where or "",
    heredocs = {}, test_mode = false,
  }, Parser)
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
  local ok, res = pcall(fn, p, ...)
  if ok then return true, res end
  if getmetatable(res) ~= ParseError or res.limit then error(res, 0) end
  for k = #out, n_out + 1, -1 do out[k] = nil end
  for k = #p.heredocs, nhd + 1, -1 do p.heredocs[k] = nil end
  p.i, p.la, p.depth = i, la, depth
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

---------------------------------------------------------------------------
-- Lexing. A word is collected as pieces of text, each with a mask of the
-- same length: "u" for characters that were unquoted (brace expansion and
-- keywords only apply to those), "q" for the rest.

local function add(parts, masks, text, m)
  if text ~= "" then
    parts[#parts + 1] = text
    masks[#masks + 1] = rep(m, #text)
  end
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
  elseif d == "'" and not in_dq then
    return ansi_c(p, i, parts, masks)
  elseif d == '"' and not in_dq then
    return dq_scan(p, i + 2, parts, masks, '"')
  elseif d ~= "" and find("$#?!@*-0123456789", d, 1, true) then
    add(parts, masks, "$" .. d, "q") -- $$, $?, $1 …: "$${" is $$ then {
    return i + 2
  else
    add(parts, masks, "$", "q")
    return i + 1
  end
  add(parts, masks, sub(s, i, j - 1), "q")
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
  sub_split(p, concat(buf), p.wrapper, " in a `…` command")
  add(parts, masks, sub(s, i, j), "q")
  return j + 1
end

local ASSIGN_START = "^[%a_][%w_]*%+?="

-- Reads one word starting at p.i; returns a word token.
local function lex_word(p)
  local s, n = p.s, p.n
  local start, i = p.i, p.i
  local parts, masks = {}, {}
  -- <( … ) and >( … ) start a word
  local c0 = sub(s, i, i)
  if (c0 == "<" or c0 == ">") and sub(s, i + 1, i + 1) == "(" then
    i = paren_subst(p, i + 2, c0 .. "(", i)
    add(parts, masks, sub(s, start, i - 1), "q")
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
  return { t = "word", text = text, mask = concat(masks), raw = raw,
    plain = raw == text, pos = start }
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
    if not h.literal and find(h.r.body, "[$`]") then
      local q = new_parser(p.ctx, h.r.body, p.depth, p.wrapper,
        " in a here-document")
      dq_scan(q, 1, {}, {}, nil)
    end
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
  local r = { fd = t.fd, op = t.op, target = target.text }
  list[#list + 1] = r
  if t.op == "<<" or t.op == "<<-" then
    p.heredocs[#p.heredocs + 1] = { r = r, delim = target.text,
      strip = t.op == "<<-", literal = not target.plain }
  end
end

-- Redirections after a compound command (`} > f`, `done < list`) are
-- listed as a command with an empty argv.
local function trailing_redirects(p)
  local list = {}
  while p:peek().t == "redir" do read_redirect(p, p:take(), list) end
  if #list > 0 then
    emit(p, { argv = {}, assigns = {}, redirects = list, depth = p.depth,
      wrapper = p.wrapper })
  end
end

local parse_command

local function parse_subshell(p)
  local open = p:take()
  enter(p)
  local t = parse_list(p, function(tok) return tok.t == "op" and tok.v == ")" end)
  if t.t ~= "op" then
    fail(p, "unterminated subshell: the ( at character %d has no matching )", open.pos)
  end
  p:take()
  leave(p)
  trailing_redirects(p)
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
  local open = p:take()
  enter(p)
  local t = parse_list(p, function(tok) return is_kw(tok, "}") end)
  if t.t == "eof" then
    fail(p, "unterminated group: the { at character %d has no matching }", open.pos)
  end
  p:take()
  leave(p)
  trailing_redirects(p)
end

local function parse_for(p)
  local kw = p:take()
  local t = p:peek()
  if t.t == "op" and t.v == "(" and sub(p.s, t.pos, t.pos + 1) == "((" then
    p.la = nil
    p.i = arith(p, t.pos + 2, t.pos)
    return
  end
  if p:take().t ~= "word" then
    fail(p, "`%s` at character %d needs a variable name", kw.text, kw.pos)
  end
  skip_newlines(p)
  if is_kw(p:peek(), "in") then
    p:take()
    while p:peek().t == "word" do p:take() end -- substitutions in it are split
  end
end

local function parse_case(p)
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
      trailing_redirects(p)
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

local function parse_body(p, name)
  skip_newlines(p)
  if not parse_command(p) then
    fail(p, "the function `%s` has no body", name)
  end
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
  local c = { argv = { "[[" }, assigns = {}, redirects = {}, depth = p.depth,
    wrapper = p.wrapper }
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

local function parse_simple(p)
  local c = { argv = {}, assigns = {}, redirects = {}, depth = p.depth,
    wrapper = p.wrapper }
  while true do
    local t = p:peek()
    if t.t == "redir" then
      read_redirect(p, p:take(), c.redirects)
    elseif t.t == "word" then
      if #c.argv == 0 and match(t.raw, ASSIGN_START) then
        p:take()
        local name, plus = match(t.raw, "^([%a_][%w_]*)(%+?)=")
        c.assigns[#c.assigns + 1] = { name = name,
          value = sub(t.text, #name + #plus + 2), append = plus == "+" or nil }
      elseif t.plain and COMPOUND_START[t.text] and only_time(c) then
        return parse_command(p)
      else
        p:take()
        brace_expand(p, t, c.argv)
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
  emit(p, c)
  unwrap(p, c)
end

local PREFIX = { ["if"] = true, ["then"] = true, ["elif"] = true,
  ["else"] = true, ["while"] = true, ["until"] = true, ["do"] = true,
  ["!"] = true }
local CLOSER = { fi = true, done = true, esac = true }

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
    if CLOSER[w] then p:take(); trailing_redirects(p); return true end
    if w == "for" or w == "select" then parse_for(p); return true end
    if w == "case" then parse_case(p); return true end
    if w == "function" then parse_function(p); return true end
    if w == "[[" then parse_test(p); return true end
  end
  if t.t == "word" or t.t == "redir" then
    parse_simple(p)
    return true
  end
  if t.t == "op" and t.v == ")" then
    fail(p, "unexpected ) at character %d: no ( to close", t.pos)
  end
  return consumed
end

local function needs_before(p, t)
  fail(p, "`%s` at character %d needs a command before it", t.v, t.pos)
end

local function parse_pipeline(p)
  local got = parse_command(p)
  while true do
    local t = p:peek()
    if not (t.t == "op" and (t.v == "|" or t.v == "|&")) then return got end
    if not got then needs_before(p, t) end
    p:take()
    skip_newlines(p)
    if not parse_command(p) then
      fail(p, "`%s` at character %d needs a command after it", t.v, t.pos)
    end
    got = true
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
-- level deeper than p, its commands tagged with wrapper.
function sub_split(p, str, wrapper, where)
  enter(p) -- checks the bound
  leave(p)
  local q = new_parser(p.ctx, str, p.depth + 1, wrapper, where)
  parse_list(q, nil)
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

local function inner_argv(p, argv, k, label, assigns)
  if k > #argv then return end
  local inner = {}
  for j = k, #argv do inner[#inner + 1] = argv[j] end
  enter(p)
  local c = { argv = inner, assigns = assigns or {}, redirects = {},
    depth = p.depth, wrapper = label }
  emit(p, c)
  unwrap(p, c)
  leave(p)
end

local function inner_string(p, str, label)
  sub_split(p, str, label, " in the `" .. label .. "` string")
end

local function take_assigns(argv, k)
  local assigns = {}
  while argv[k] and match(argv[k], "^[%a_][%w_]*=") do
    local name = match(argv[k], "^([%a_][%w_]*)=")
    assigns[#assigns + 1] = { name = name, value = sub(argv[k], #name + 2) }
    k = k + 1
  end
  return assigns, k
end

local function opts_then_argv(spec)
  return function(p, argv, name)
    local k = skip_opts(argv, 2, spec)
    inner_argv(p, argv, k + (spec.operands or 0), name)
  end
end

local function shq(w) return "'" .. gsub(w, "'", "'\\''") .. "'" end

local W = {}

local SHELLS = { "sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "ash",
  "yash", "posh", "fish" }
for _, sh in ipairs(SHELLS) do
  W[sh] = function(p, argv, name)
    local k, has_c = 2, false
    while k <= #argv do
      local w = argv[k]
      if w == "--" or w == "-" then k = k + 1; break end
      local cmd = match(w, "^%-%-command=(.*)")
      if cmd then return inner_string(p, cmd, name .. " -c") end
      local lead = sub(w, 1, 1)
      if (lead ~= "-" and lead ~= "+") or #w < 2 then break end
      if sub(w, 1, 2) == "--" then
        if w == "--command" then has_c = true
        elseif w == "--rcfile" or w == "--init-file" then k = k + 1 end
      else
        if find(w, "c", 2, true) then has_c = true end
        if find(w, "[oO]", 2) then k = k + 1 end -- -o option takes a name
      end
      k = k + 1
    end
    if has_c and argv[k] then inner_string(p, argv[k], name .. " -c") end
  end
end

W.eval = function(p, argv)
  if #argv >= 2 then inner_string(p, concat(argv, " ", 2), "eval") end
end

W.sudo = function(p, argv, name)
  local k = skip_opts(argv, 2, { arg = "CDghpRrTtUu", long_arg = {
    ["close-from"] = true, chdir = true, group = true, host = true,
    prompt = true, chroot = true, role = true, type = true,
    ["command-timeout"] = true, ["other-user"] = true, user = true } })
  local assigns
  assigns, k = take_assigns(argv, k)
  inner_argv(p, argv, k, name, assigns)
end
W.doas = opts_then_argv({ arg = "uC" })
W.pkexec = opts_then_argv({ long_arg = { user = true } })
W.run0 = opts_then_argv({ arg = "uDg", long_arg = { user = true,
  group = true, chdir = true, machine = true, description = true,
  ["slice"] = true, property = true, nice = true, setenv = true } })

W.su = function(p, argv, name)
  local k = 2
  while k <= #argv do
    local w = argv[k]
    local cmd = match(w, "^%-%-command=(.*)")
    if cmd then return inner_string(p, cmd, name .. " -c") end
    if w == "-c" or w == "--command" then
      if argv[k + 1] then inner_string(p, argv[k + 1], name .. " -c") end
      return
    end
    if w == "-s" or w == "--shell" or w == "-g" or w == "--group" then k = k + 1 end
    k = k + 1
  end
end

W.env = function(p, argv, name)
  local k, split = 2, nil
  while k <= #argv do
    local w = argv[k]
    if w == "--" then k = k + 1; break end
    if w == "-" then
      k = k + 1
    elseif sub(w, 1, 2) == "--" then
      local long, val = match(w, "^%-%-([^=]*)=?(.*)")
      local has_val = find(w, "=", 1, true) ~= nil
      if long == "split-string" then
        if has_val then split = val else split = argv[k + 1]; k = k + 1 end
      elseif (long == "unset" or long == "chdir") and not has_val then
        k = k + 1
      end
      k = k + 1
    elseif sub(w, 1, 1) == "-" then
      for j = 2, #w do
        local ch = sub(w, j, j)
        if ch == "u" or ch == "C" or ch == "S" or ch == "P" then
          local val = sub(w, j + 1)
          if val == "" then val = argv[k + 1]; k = k + 1 end
          if ch == "S" then split = val end
          break
        end
      end
      k = k + 1
    else
      break
    end
  end
  local assigns
  assigns, k = take_assigns(argv, k)
  if split then
    -- env -S splits its string into words; the rest follow as they are.
    local rest = {}
    for j = k, #argv do rest[#rest + 1] = shq(argv[j]) end
    return inner_string(p, split .. " " .. concat(rest, " "), "env -S")
  end
  inner_argv(p, argv, k, name, assigns)
end

W.exec = opts_then_argv({ arg = "a" })
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
W.xargs = opts_then_argv({ arg = "adEILnPs", long_arg = { ["arg-file"] = true,
  delimiter = true, ["max-args"] = true, ["max-procs"] = true,
  ["max-chars"] = true, ["process-slot-var"] = true } })

W.command = function(p, argv, name)
  for k = 2, #argv do
    local w = argv[k]
    if sub(w, 1, 1) ~= "-" or w == "--" then break end
    if find(w, "[vV]") then return end -- command -v only looks the name up
  end
  inner_argv(p, argv, skip_opts(argv, 2, {}), name)
end

W.busybox = function(p, argv, name)
  if argv[2] and sub(argv[2], 1, 1) ~= "-" then inner_argv(p, argv, 2, name) end
end
W.toybox = W.busybox

W.watch = function(p, argv, name)
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
  if exec_mode then return inner_argv(p, argv, k, name) end
  inner_string(p, concat(argv, " ", k), name)
end

W.flock = function(p, argv, name)
  local k, operand = 2, nil
  while k <= #argv do
    local w = argv[k]
    local cmd = match(w, "^%-%-command=(.*)")
    if cmd then return inner_string(p, cmd, name .. " -c") end
    if w == "-c" or w == "--command" then
      if argv[k + 1] then inner_string(p, argv[k + 1], name .. " -c") end
      return
    end
    if sub(w, 1, 1) == "-" and w ~= "-" then
      if w == "-w" or w == "--wait" or w == "--timeout" or w == "-E"
        or w == "--conflict-exit-code" then k = k + 1 end
    elseif not operand then
      operand = k
    else
      return inner_argv(p, argv, k, name)
    end
    k = k + 1
  end
end

local FIND_EXEC = { ["-exec"] = true, ["-execdir"] = true, ["-ok"] = true,
  ["-okdir"] = true }

W.find = function(p, argv)
  local k = 2
  while k <= #argv do
    local w = argv[k]
    if FIND_EXEC[w] then
      local inner, j = {}, k + 1
      while j <= #argv and argv[j] ~= ";" and
        not (argv[j] == "+" and argv[j - 1] == "{}") do
        inner[#inner + 1] = argv[j]
        j = j + 1
      end
      if #inner > 0 then inner_argv(p, inner, 1, "find " .. w) end
      k = j
    end
    k = k + 1
  end
end

function unwrap(p, c)
  local name = M.basename(c.argv[1])
  local w = W[name]
  if w then w(p, c.argv, name) end
end

---------------------------------------------------------------------------
-- Public API.

-- shell.split(cmdline [, opts]) -> list of simple commands | nil, message
-- opts: max_length, max_depth, max_commands, max_brace_words, max_attempts.
function M.split(cmdline, opts)
  if type(cmdline) ~= "string" then
    return nil, "the command must be a string (got " .. type(cmdline) .. ")"
  end
  opts = opts or {}
  local max_len = opts.max_length or M.MAX_LENGTH
  if #cmdline > max_len then
    return nil, format("the command is %d bytes long; the splitter reads at most %d",
      #cmdline, max_len)
  end
  local ctx = { out = {}, max_depth = opts.max_depth or M.MAX_DEPTH,
    max_commands = opts.max_commands or M.MAX_COMMANDS,
    max_brace = opts.max_brace_words or M.MAX_BRACE_WORDS,
    attempts = 0, max_attempts = opts.max_attempts or #cmdline + M.ATTEMPTS_SLACK }
  local p = new_parser(ctx, cmdline, 0, nil, "")
  local ok, err = pcall(parse_list, p, nil)
  if not ok then
    if getmetatable(err) == ParseError then return nil, err.msg end
    error(err, 0)
  end
  return ctx.out
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
