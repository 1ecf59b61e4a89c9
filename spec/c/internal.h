/*
 * internal.h — the headers under src/ that the white-box specs reach
 * into (everything else goes through include/toolgate.h). The one place
 * a spec names a path under src/: when a source file moves, fix it here.
 *
 *   base/control.h          test_reload    tg_control_request, _path
 *   base/json.h             test_json      the parser and printer
 *   base/jsonnum.h          test_jsonnum   JSON number -> C integer
 *   base/runtime.h          test_fs        rt->fs (the confinement)
 *   chain/validate.h        test_validate  the JSON Schema subset
 *   exec/capture.h          test_exec      output capture
 *   exec/exec_tool.h        test_exec      exec's args parser
 *   exec/fs_*.h, patch.h    test_fs        resolve, raw tools, patches
 *   policy/sandbox*.h       test_pattern   bounded Lua patterns
 */
#ifndef TG_SPEC_INTERNAL_H
#define TG_SPEC_INTERNAL_H

#include "base/control.h"
#include "base/json.h"
#include "base/jsonnum.h"
#include "base/runtime.h"
#include "chain/validate.h"
#include "exec/capture.h"
#include "exec/exec_tool.h"
#include "exec/fs_confine.h"
#include "exec/fs_tools.h"
#include "exec/fs_io.h"
#include "exec/patch.h"
#include "policy/sandbox.h"
#include "policy/sandbox_pattern.h"

#endif
