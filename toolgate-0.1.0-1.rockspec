-- toolgate-0.1.0-1.rockspec — builds and installs the Lua module (toolgate.so)
-- and the shipped Lua library (toolgate.shell) with luarocks:
--   luarocks install toolgate-0.1.0-1.rockspec      (the tagged release, fetched)
--   luarocks make                                   (a clone, Lua 5.4)
--   luarocks --lua-version=5.1 make LUA_INCDIR=/usr/include/luajit-2.1   (LuaJIT)
-- The version here is project(VERSION) in CMakeLists.txt, and the source is
-- that version's tag (.ci/luarocks-test checks both). The build needs cmake,
-- a C11 compiler, pkg-config, libuv, libcjson, PCRE2 and SQLite >= 3.35 with
-- FTS5 (Debian: build-essential cmake pkg-config libuv1-dev libcjson-dev
-- libpcre2-dev libsqlite3-dev; or `.ci/deps build` in a clone).
rockspec_format = "3.0"
package = "toolgate"
version = "0.1.0-1"
source = {
  -- the release archive GitHub makes of tag v0.1.0 (the folder in it is
  -- toolgate-0.1.0); `luarocks make` builds the folder it is run in instead
  url = "https://github.com/OWNER/toolgate/archive/refs/tags/v0.1.0.tar.gz",
  dir = "toolgate-0.1.0",
}
description = {
  summary = "A runtime between an AI agent and the tools it calls, scripted in Lua",
  detailed = [[
Every tool call passes through one chain — authorization rules, pre/post
hooks, JSON Schema validation, human approval, result limits, retry,
per-attempt timeouts, progress, cancellation, events — and every decision in
that chain is a Lua function in a policies folder, hot-reloaded. This rock is
the in-process Lua module (require "toolgate") for Lua 5.4 and LuaJIT, and
the Lua library policies use (require "toolgate.shell").
]],
  license = "MIT",
  labels = { "agent", "tools", "policy", "sandbox", "libuv" },
}
dependencies = {
  "lua >= 5.1", -- Lua 5.4 or LuaJIT: the build refuses 5.1 proper, 5.2 and 5.3
}
-- What luarocks checks before building; cmake finds them with pkg-config,
-- and refuses an SQLite older than 3.35 (UPDATE ... RETURNING).
external_dependencies = {
  LIBUV = { header = "uv.h" },
  LIBCJSON = { header = "cjson/cJSON.h" },
  PCRE2 = { header = "pcre2.h" },   -- JSON Schema's `pattern`
  SQLITE = { header = "sqlite3.h" }, -- storage: >= 3.35, with FTS5
}
build = {
  type = "command",
  -- Only the module: its Lua symbols come from the interpreter. Policies
  -- find toolgate.shell in a copy inside the rock's own folder (luarocks
  -- moves what it installs under lua/ into the tree, and removes the rock's
  -- folder with the rock).
  build_command = [[
cmake -S . -B build.luarocks -DCMAKE_BUILD_TYPE=Release -DTOOLGATE_WERROR=OFF -DTOOLGATE_TESTS=OFF "-DTOOLGATE_LUA_INCDIR=$(LUA_INCDIR)" "-DTOOLGATE_INSTALL_LUADIR=$(PREFIX)/policy-lua" && cmake --build build.luarocks --target toolgate_lua
]],
  install_command = "cmake --install build.luarocks --component lua_lib",
  install = {
    lib = { toolgate = "build.luarocks/lua/toolgate.so" },
    lua = {
      ["toolgate.shell"] = "lua/toolgate/shell.lua",
      ["toolgate.secrets"] = "lua/toolgate/secrets.lua",
      -- the agent hooks' mapping (policies find their own copy, as above)
      ["toolgate.agent"] = "lua/toolgate/agent.lua",
      ["toolgate.agents.common"] = "lua/toolgate/agents/common.lua",
      ["toolgate.agents.claude_code"] = "lua/toolgate/agents/claude_code.lua",
      ["toolgate.agents.codex"] = "lua/toolgate/agents/codex.lua",
    },
  },
}
