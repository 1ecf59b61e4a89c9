/*
 * tool_source.h — where the tools the server lists and calls come from.
 * Every tool is in the runtime (tg_runtime_describe lists it, tg_call
 * runs it); a source says which of them are its own, whether it offers
 * one right now, what the client sees of it (the MCP Tool), and whether
 * its results are CallToolResults already. The runtime's own tools
 * (built-ins, Lua tools) are one source (tools.c), the gateway's
 * upstream tools another (gateway.c); the server asks them the same way.
 */
#ifndef TOOLGATE_MCP_TOOL_SOURCE_H
#define TOOLGATE_MCP_TOOL_SOURCE_H

#include <cjson/cJSON.h>

typedef struct mcp_tool_source {
  const char *name;       /* for the log: "runtime", "gateway" */
  /* Is the runtime tool of this name the source's? */
  int (*owns)(void *ud, const char *tool);
  /* Is it offered right now (an upstream's may have gone with a
   * restart)? NULL: always. */
  int (*offered)(void *ud, const char *tool);
  /* The MCP Tool the client sees (new), from the tool's entry in
   * tg_runtime_describe; NULL: not listed. */
  cJSON *(*describe)(void *ud, const cJSON *described);
  /* Its results are CallToolResults already (an upstream's): they go to
   * the client as they came, not wrapped. */
  int passes_results;
  void *ud;
  /* Has the tool been seen to report its own progress (an upstream's
   * notifications/progress)? Then toolgate sends none of its own for it
   * (its seconds would run ahead of the tool's counts). NULL: never. */
  int (*reports_progress)(void *ud, const char *tool);
} mcp_tool_source;

#endif
