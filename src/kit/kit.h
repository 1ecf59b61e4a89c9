/*
 * kit.h — the one internal header of the fronts: what the command line,
 * the agent hooks, the MCP server and the Lua module need beyond the
 * embedder's API (include/toolgate.h). Not installed, and libtoolgate.so
 * does not export it: the fronts link these from the static core library.
 *
 * The declarations live in the layer that defines them, since the core
 * uses them too and a layer includes nothing above it; this header is the
 * list of what a front may use, and the only way a front reaches them:
 *
 *   base/json.h          JSON text: tg_json_parse, tg_json_print(_sorted),
 *                        tg_json_digest, tg_json_equal, tg_json_number_text
 *   base/glob.h          tg_glob_match, tg_glob_check
 *   base/timeparse.h     tg_time_parse ("10m", "2025-06-01")
 *   base/sha256.h        tg_sha256, tg_hmac_sha256, tg_digest_equal
 *   policy/last_good.h   the last policies that loaded, kept for a hook
 *                        answering in-process when a file is half-saved
 *   store/store_api.h    a database by path: the audit trail, approvals,
 *                        usage, sessions and search, export/import, memory
 *   runtime/front_api.h  tg_explain, tg_policy_test, tg_runtime_store,
 *                        the runtime's memory, tg_runtime_set_redactor
 */
#ifndef TOOLGATE_KIT_H
#define TOOLGATE_KIT_H

#include "toolgate.h"
#include "base/glob.h"
#include "base/json.h"
#include "base/sha256.h"
#include "base/timeparse.h"
#include "policy/last_good.h"
#include "policy/api_taint.h" /* a session's taint as Lua reads it */
#include "runtime/front_api.h"
#include "store/store_api.h"
#include "agent/protocol.h"   /* the hook front reads and answers events */
#include "control/control.h"  /* fronts find and ask a running instance */

#endif
