/*
 * commands.h — the command of the MCP front, for src/main.c's table:
 * `toolgate serve` (serve_cmd.c). It takes the words after its name and
 * returns the process exit code (kit/exit_codes.h).
 */
#ifndef TOOLGATE_MCP_COMMANDS_H
#define TOOLGATE_MCP_COMMANDS_H

#include <stdint.h>

int cmd_serve(int argc, char **argv);
/* Its usage text, for `toolgate serve --help` and `toolgate help serve`. */
extern const char cmd_serve_usage[];

/* The tools the servers of the toolgate.lua at path declare (servers.x.
 * tools), as `toolgate serve` will name them: [{name = "x__echo",
 * read_only}] (read_only from the server's read_only globs) into *out.
 * path NULL: ./toolgate.lua when there is one, else none (an empty
 * list). -1 with err when the file cannot be loaded (declared.c). main.c
 * hands it to the kit (kit/declared_tools.h) for check and test. */
struct cJSON;
int mcp_declared_tools(const char *path, struct cJSON **out, char *err,
                       size_t errlen);
/* The tools the servers of the toolgate.lua at path mark as reaching the
 * network (servers.x.network), as globs of the names toolgate judges them
 * by: ["x__*"] for network = true, ["x__fetch"] for { "fetch" } (also with
 * "__" when the separator is another: an agent's own MCP client names
 * them mcp__x__fetch, judged as x__fetch). path NULL as above. main.c
 * hands it to the runtime (tg_runtime_set_network_reader). */
int mcp_network_tools(const char *path, struct cJSON **out, char *err,
                      size_t errlen);
/* A stamp of ./toolgate.lua (inode, size, modification time), 0 when
 * there is none: a resident instance reads the marks again after a save. */
uint64_t mcp_config_stamp(void);

#endif
