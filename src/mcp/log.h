/*
 * log.h — the MCP front's log: one line per entry on stderr or in a file,
 * never on stdout (stdout carries the protocol). Levels are MCP's (RFC
 * 5424's): the same names a client gives logging/setLevel.
 */
#ifndef TOOLGATE_MCP_LOG_H
#define TOOLGATE_MCP_LOG_H

#include <stdio.h>

typedef enum {
  MCP_LOG_DEBUG, MCP_LOG_INFO, MCP_LOG_NOTICE, MCP_LOG_WARNING,
  MCP_LOG_ERROR, MCP_LOG_CRITICAL, MCP_LOG_ALERT, MCP_LOG_EMERGENCY
} mcp_log_level;

typedef struct mcp_log mcp_log;

/* Opens the log: path NULL means stderr; a file is appended to. NULL with
 * a message in err when the file cannot be opened. */
mcp_log *mcp_log_open(const char *path, mcp_log_level level, char *err,
                      size_t errlen);
void mcp_log_close(mcp_log *log);

/* "2026-01-02T03:04:05.678Z toolgate[pid] warning: ..." when level is at
 * least the log's. */
void mcp_logf(mcp_log *log, mcp_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The level's MCP name ("warning"), and the level named name (-1: none). */
const char *mcp_log_level_name(mcp_log_level level);
int mcp_log_level_of(const char *name);

#endif
