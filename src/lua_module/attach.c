/*
 * attach.c — rt:attach(uv) / rt:detach(): a host's luv loop (Neovim's
 * vim.loop, luvit) turns the runtime's, and with schedule the callbacks
 * run in the host's own context. The luv side is Lua, so no C symbol of
 * luv is needed (the section comment below says how).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lua_module.h"
#include "lua/luacall.h"
#include "lua/luaraw.h"
#include <uv.h>
#include "lua/luaarg.h" /* after lauxlib: argument errors name the method */

/* ---- attaching to a host's loop (luv) ------------------------------------
 * rt:attach(uv) lets a luv loop (Neovim's vim.loop, luvit, require "luv")
 * turn the runtime's: a luv poll on rt:fd() and one luv timer re-armed
 * from rt:timeout() call rt:run_once(), and every outermost call into the
 * runtime re-arms the timer (leave -> tg__lm_rearm), since it may have started
 * timers or fds. The luv side is Lua (ATTACH_LUA, below), so no C symbol
 * of luv is needed: any luv works. The poll is ref'd only while calls are
 * pending, so it keeps a luvit script alive as rt:run() would, and never
 * an idle one. While attached, the runtime stays alive (the luv callbacks
 * hold it) until rt:detach() or rt:close().
 *
 * With schedule (Neovim: vim.schedule), on_done, on_progress, on_event,
 * on_file_change and the approver are not called inside the luv callback
 * (Neovim's "fast" context, where vim.api raises E5560) but handed to
 * schedule, in order; the approver's answer is then given with rt:answer.
 * An error they raise is raised in the host's context (prefixed as
 * always). Errors the pump catches (a callback's when nothing schedules)
 * go to on_error, else through schedule, else to stderr: a luv callback
 * must not raise (plain luv exits the process then). */

static const char ATTACH_LUA[] =
    "local busy, usage = ...\n"
    "local pcall, error, select, tostring, type =\n"
    "  pcall, error, select, tostring, type\n"
    "local unpack = table.unpack or unpack\n"
    "local stderr = io and io.stderr\n"
    "return function(rt, uv, schedule, on_error)\n"
    "  if type(uv.new_poll) ~= 'function' or type(uv.new_timer) ~= 'function'\n"
    "  then error('rt:attach: give the luv module (vim.loop in Neovim, '\n"
    "    .. 'require \"luv\"): this one has no new_poll or new_timer', 0) end\n"
    "  local run_once, timeout, answer = rt.run_once, rt.timeout, rt.answer\n"
    "  local a, pump = {}\n"
    "  local poll, err = uv.new_poll(rt:fd())\n"
    "  if not poll then error('rt:attach: uv.new_poll: ' .. tostring(err), 0) end\n"
    "  local timer, terr = uv.new_timer()\n"
    "  if not timer then poll:close()\n"
    "    error('rt:attach: uv.new_timer: ' .. tostring(terr), 0) end\n"
    "  local function report(msg)\n"
    "    msg = tostring(msg)\n"
    "    if on_error then\n"
    "      local ok, e = pcall(on_error, msg)\n"
    "      if ok then return end\n"
    "      msg = msg .. ' (and on_error raised: ' .. tostring(e) .. ')'\n"
    "    end\n"
    "    if schedule and pcall(schedule, function() error(msg, 0) end) then\n"
    "      return end\n"
    "    if stderr then stderr:write(msg, '\\n') end\n"
    "  end\n"
    "  pump = function()\n"
    "    local ok, e = pcall(run_once, rt)\n"
    "    if not ok then report(e) end\n"
    "  end\n"
    "  function a.arm()\n"
    "    local ms = timeout(rt)\n"
    "    if ms < 0 then timer:stop() else timer:start(ms, 0, pump) end\n"
    "    if busy(rt) then poll:ref() else poll:unref() end\n"
    "  end\n"
    "  function a.stop()\n"
    "    if not poll:is_closing() then poll:close() end\n"
    "    if not timer:is_closing() then timer:close() end\n"
    "  end\n"
    "  if schedule then\n"
    "    function a.defer(what, fn, ...)\n"
    "      local n, args = select('#', ...), { ... }\n"
    "      schedule(function()\n"
    "        local ok, e = pcall(fn, unpack(args, 1, n))\n"
    "        if not ok then error('toolgate: error in ' .. what ..\n"
    "          ' callback: ' .. tostring(e), 0) end\n"
    "      end)\n"
    "    end\n"
    "    function a.defer_approve(approver, req)\n"
    "      schedule(function()\n"
    "        if busy(rt) == nil then return end\n"
    "        local ok, ans, opts = pcall(approver, req)\n"
    "        local why\n"
    "        if not ok then why = 'error in approver callback: ' .. tostring(ans)\n"
    "        elseif ans == nil then return\n"
    "        elseif pcall(answer, rt, req.approval_id, ans, opts) then return\n"
    "        else why = 'the approver returned a bad answer; ' .. usage end\n"
    "        pcall(answer, rt, req.approval_id, 'reject', 'the approver failed')\n"
    "        error('toolgate: ' .. why, 0)\n"
    "      end)\n"
    "    end\n"
    "  end\n"
    "  timer:unref()\n"
    "  local ok, e = pcall(function()\n"
    "    assert(poll:start('r', function(perr)\n"
    "      if perr then report('toolgate: polling rt:fd() failed: ' ..\n"
    "        tostring(perr)) else pump() end\n"
    "    end))\n"
    "    a.arm()\n"
    "  end)\n"
    "  if not ok then a.stop(); error('rt:attach: ' .. tostring(e), 0) end\n"
    "  return a\n"
    "end\n";

/* busy(rt) -> true while calls are pending, false when idle, nil when the
 * runtime is closed (for ATTACH_LUA). */
static int l_busy(lua_State *L) {
  lrt_box *b = luaL_checkudata(L, 1, RT_MT);
  if (!b->r) return 0;
  lua_pushboolean(L, uv_loop_alive(tg_runtime_loop(b->r->rt)));
  return 1;
}

/* Calls state.attach[fn] protected; 0, or -1 with the error on top. */
static int call_attached(lrt *r, lua_State *L, const char *fn) {
  if (!lua_checkstack(L, 4)) return 0;
  tg__lm_state(L, r, "attach"); /* our plain tables: nothing here raises */
  lua_getfield(L, -1, fn);
  lua_remove(L, -2);
  if (lua_pcall(L, 0, 0, 0) == LUA_OK) return 0;
  return -1;
}

/* After an outermost call into the runtime: the host's timer follows
 * rt:timeout() again. A failure (luv raised) is raised by tg__lm_leave(). */
void tg__lm_rearm(lrt *r, lua_State *L) {
  if (r->attached && call_attached(r, L, "arm") < 0) tg__lm_keep_error(r, L);
}

/* Stops and closes the luv handles; the runtime is left as before attach. */
void tg__lm_detach_now(lrt *r, lua_State *L) {
  if (!r->attached) return;
  if (call_attached(r, L, "stop") < 0) lua_pop(L, 1); /* closing anyway */
  r->attached = r->deferring = 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, r->state_ref);
  lua_pushnil(L);
  lua_setfield(L, -2, "attach"); /* an existing key: no allocation */
  lua_pop(L, 1);
}

/* tg__lm_callback() with schedule: fn and its nargs arguments on top become
 * defer(what, fn, ...), which hands them to schedule. */
int tg__lm_defer_callback(lrt *r, lua_State *L, int nargs, const char *what) {
  int fn = lua_gettop(L) - nargs;
  tg__lm_state(L, r, "attach");
  lua_getfield(L, -1, "defer");
  lua_remove(L, -2);
  lua_insert(L, fn);
  lua_pushstring(L, what);
  lua_insert(L, fn + 1);
  if (lua_pcall(L, nargs + 2, 0, 0) == LUA_OK) return 0;
  lua_pushfstring(L, "toolgate: cannot schedule the %s callback: %s", what,
                  tg__lua_error_text(L, -1, "(non-string error)"));
  lua_remove(L, -2);
  tg__lm_keep_error(r, L);
  return -1;
}

/* approver_cb with schedule: the approver runs later, from the host's
 * context, and answers with rt:answer; a raise here (schedule failed)
 * rejects at once. */
int tg__lm_defer_approver_body(lua_State *L) {
  approver_arg *a = lua_touserdata(L, 1);
  tg__lm_state(L, a->r, "attach");
  lua_getfield(L, -1, "defer_approve");
  tg__lm_state(L, a->r, "approver");
  tg__lm_push_request(L, a->q);
  lua_call(L, 2, 0);
  return 0;
}

static const char *const attach_opt_names[] = {"schedule", "on_error", NULL};

/* Pushes opts[k], which must be a function or nil. */
static void opt_fn(lua_State *L, int o, const char *k) {
  int ty = tg__lm_get_opt(L, o, k);
  if (ty != LUA_TNIL && ty != LUA_TFUNCTION)
    luaL_error(L, "rt:attach: '%s' must be a function (got %s)", k,
               luaL_typename(L, -1));
}

/* rt:attach(uv, {schedule = fn, on_error = fn}) -> rt */
static int l_attach(lua_State *L) {
  lrt *r = tg__lm_check_rt(L, 1);
  if (lua_type(L, 2) != LUA_TTABLE && lua_type(L, 2) != LUA_TUSERDATA)
    return luaL_error(L, "rt:attach: give the luv module (vim.loop in "
                         "Neovim, require \"luv\"), not %s",
                      luaL_typename(L, 2));
  int o = tg__lm_copy_opts(L, 3, "rt:attach", attach_opt_names);
  if (r->attached)
    return luaL_error(L, "rt:attach: already attached; rt:detach() first");
  lua_pushvalue(L, lua_upvalueindex(1)); /* the ATTACH_LUA factory */
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  opt_fn(L, o, "schedule");
  int deferring = lua_isfunction(L, -1);
  opt_fn(L, o, "on_error");
  lua_call(L, 4, 1); /* raises when luv refuses: nothing is kept then */
  lua_rawgeti(L, LUA_REGISTRYINDEX, r->state_ref);
  lua_insert(L, -2);
  lua_setfield(L, -2, "attach");
  r->attached = 1;
  r->deferring = deferring;
  lua_settop(L, 1);
  return 1;
}

/* rt:detach(): the host's loop no longer turns the runtime. */
static int l_detach(lua_State *L) {
  tg__lm_detach_now(tg__lm_check_rt(L, 1), L);
  return 0;
}

/* Adds attach and detach to the methods table on top; attach's upvalue is
 * the factory ATTACH_LUA returns. */
void tg__lm_add_attach_methods(lua_State *L) {
  if (luaL_loadbuffer(L, ATTACH_LUA, sizeof ATTACH_LUA - 1, "=toolgate.attach"))
    lua_error(L);
  lua_pushcfunction(L, l_busy);
  lua_pushstring(L, tg__lm_answer_usage);
  lua_call(L, 2, 1);
  lua_pushcclosure(L, l_attach, 1);
  lua_setfield(L, -2, "attach");
  lua_pushcfunction(L, l_detach);
  lua_setfield(L, -2, "detach");
}
