/*
 * internal.h — the headers under src/ that the white-box specs reach
 * into (everything else goes through include/toolgate.h). The one place
 * a spec names a path under src/: when a source file moves, fix it here.
 *
 *   control/control.h       test_reload    tg_control_request, _path
 *   base/json.h             test_json      the parser and printer
 *   base/jsonnum.h          test_jsonnum   JSON number -> C integer
 *   runtime/runtime.h       test_fs, test_exec  rt->core (fs, config)
 *   base/schema.h           test_validate  the JSON Schema validator
 *   proc/capture.h          test_exec      output capture
 *   proc/command.h          test_exec      a shell command's args parser
 *   tools/fs_*.h, patch.h   test_fs        resolve, raw tools, patches
 *   policy/sandbox*.h       test_pattern   bounded Lua patterns
 *   lua/luajson.h           test_json      Lua value == JSON value
 *   kit/kit.h               the fronts' extras: the database by path,
 *                           sessions, export, memory, explain, policy
 *                           tests, digests, JSON text (test_store, ...)
 */
#ifndef TG_SPEC_INTERNAL_H
#define TG_SPEC_INTERNAL_H

#include "base/json.h"
#include "base/jsonnum.h"
#include "base/schema.h"
#include "proc/capture.h"
#include "proc/command.h"
#include "control/control.h"
#include "runtime/runtime.h"
#include "tools/fs_confine.h"
#include "tools/fs_tools.h"
#include "tools/fs_io.h"
#include "base/patch.h"
#include "policy/sandbox.h"
#include "policy/sandbox_pattern.h"
#include "lua/luajson.h"
#include "kit/kit.h"

#endif
