/* gateway.c — placeholder until the upstream servers land. */
#include "mcp.h"

int mcp_gateway_start(mcp_server *s, char err[TG_ERRMSG]) { return 0; }
void mcp_gateway_stop(mcp_server *s) {}
int mcp_gateway_busy(const mcp_server *s) { return 0; }
void mcp_gateway_free(mcp_server *s) {}
int mcp_gateway_owns(const mcp_server *s, const char *tool) { return 0; }
int mcp_gateway_offered(const mcp_server *s, const char *tool) { return 1; }
cJSON *mcp_gateway_tool(mcp_server *s, const char *name) { return NULL; }
int mcp_gateway_request(mcp_server *s, const mcp_req *req) { return -1; }
void mcp_gateway_capabilities(mcp_server *s, cJSON *caps) {}
