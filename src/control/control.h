/*
 * control.h — the control socket: a Unix socket on the runtime's loop that
 * a running instance listens on, so `toolgate reload` (or any program) can
 * ask it to reload. One JSON line in, one JSON line out, then the
 * connection closes:
 *
 *   {"cmd":"reload"} -> {"ok":true,"generation":N,"files":n,"duration_ms":x}
 *                     | {"ok":false,"error":"file:line: message","generation":N}
 *   {"cmd":"status"} -> {"ok":true,"generation":N,"policies":"DIR","pid":P}
 *
 * Where it lives (tg_control_path): $XDG_RUNTIME_DIR/toolgate/<hash>.sock,
 * or /tmp/toolgate-<uid>/<hash>.sock without XDG_RUNTIME_DIR, where <hash>
 * is the FNV-1a 64 of realpath(policies folder): every program working on
 * the same folder finds the same socket, and nothing is written into the
 * user's project. The folder is made 0700 and must be ours; the socket is
 * 0600. A socket nobody listens on (left by a crash) is removed on start.
 */
#ifndef TG_CONTROL_H
#define TG_CONTROL_H

#include <cjson/cJSON.h>
#include "toolgate.h"
#include "base/closer.h"
#include "base/json.h"
#include "base/util.h"
#include "runtime/control_services.h"
#include "agent/protocol.h" /* hook events answered for a client */

/* The longest request line read; longer ones get an error reply. */
#define TG_CONTROL_MAX_LINE 4096
/* A client that sends no full line within this is dropped. */
#define TG_CONTROL_IDLE_MS 10000
/* At most this many connections are open at once, so clients that connect
 * and say nothing cannot use up the process's file descriptors. One more
 * takes the slot of the connection idle longest, which is sent
 * {"ok":false,"error":"too many control connections ..."} and closed: a
 * flood of idle connections cannot keep a real request out, and each
 * client that loses its slot is told why. A `control_busy` event
 * {dropped, limit} says so, at most once a second (dropped: connections
 * closed that way since the previous one). */
#define TG_CONTROL_MAX_CONNS 32

/* At most this many requests (hook events) are being answered at once;
 * one more is told to try again. */
#define TG_CONTROL_MAX_ANSWERING 64

/* Stops listening, drops open connections, removes the socket file (if it
 * is still ours). Safe when not listening. */
void tg__control_stop(tg_runtime *rt);

/* ---- the hook request (issue 14) ---------------------------------------
 *
 *   {"cmd":"hook","agent":"claude-code","on_error":"deny",
 *    "toolgate_defaults":false,"turn":N,"bytes":LEN}\n  + LEN bytes: the event
 *   -> {"ok":true,"exit_code":0,"stdout_bytes":n,"stderr_bytes":m}\n
 *      + n bytes of stdout + m bytes of stderr
 *    | {"ok":false,"error":"..."}
 *
 * The event and the answer go as raw bytes after their line, so what the
 * instance judges is what the agent wrote and what the client prints is
 * what tg_hook_answer gave, byte for byte. */
typedef struct tg_conn tg_conn;

/* hook_request.c: answers the request head (with its body) on c; calls
 * tg__control_answer_hook or _error once, now or later. */
void tg__control_hook(tg_runtime *rt, tg_conn *c, const cJSON *head,
                      const char *body, size_t len);
/* server.c: the answer goes out and the connection closes. */
void tg__control_answer_hook(tg_conn *c, const tg_hook_result *res);
void tg__control_answer_error(tg_conn *c, const char *msg);

/* server.c: the address of the socket at path; -ENAMETOOLONG with err
 * when it does not fit. */
struct sockaddr_un;
int tg__control_addr(struct sockaddr_un *a, const char *path, char *err);

/* client.c: connects to path, sends req, reads the reply up
 * to EOF (at most max bytes) before the deadline. reply is malloc'd and
 * NUL-terminated. */
int tg__control_exchange(const char *path, const char *req, size_t len,
                         char **reply, size_t *reply_len, size_t max,
                         uint64_t timeout_ms, char err[TG_ERRMSG]);

#endif
