/*
 * declared_tools.h — tools a configuration declares that no running
 * process registers: the tools of toolgate.lua's upstream MCP servers
 * (servers.x.tools), named as `toolgate serve` names them. `toolgate
 * check` knows their names and `toolgate test` judges them as stand-ins,
 * without starting the servers. The MCP front reads its configuration;
 * src/main.c hands its reader to the kit here, so that the CLI front
 * asks the kit and never includes another front.
 */
#ifndef TG_KIT_DECLARED_TOOLS_H
#define TG_KIT_DECLARED_TOOLS_H

#include <stddef.h>
#include <stdint.h>

struct cJSON;

/* Reads the tools the config at path declares (NULL: the default file, if
 * there is one) into *out: [{name, read_only}]. -1 with err. */
typedef int (*kit_declared_tools_fn)(const char *path, struct cJSON **out,
                                     char *err, size_t errlen);

void kit_set_declared_tools(kit_declared_tools_fn fn);
/* The reader main.c set: 0 with *out (an empty list when none is set), or
 * -1 with err. */
int kit_declared_tools(const char *path, struct cJSON **out, char *err,
                       size_t errlen);

/* The reader of the tools a config marks as reaching the network (same
 * form; *out: an array of globs), handed to the runtime: a runtime no
 * front declared them to (the hook's) reads the default file with it
 * when a rule first reads call.network, and again when stamp (the
 * default file's; 0: none) changes. */
void kit_set_network_tools(kit_declared_tools_fn fn, uint64_t (*stamp)(void));
/* With it: 0 with *out (empty when none is set), or -1 with err. */
int kit_network_tools(const char *path, struct cJSON **out, char *err,
                      size_t errlen);

#endif
