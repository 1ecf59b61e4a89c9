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

/* Stops listening, drops open connections, removes the socket file (if it
 * is still ours). Safe when not listening. */
void tg__control_stop(tg_runtime *rt);

#endif
