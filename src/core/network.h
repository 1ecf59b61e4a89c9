/*
 * network.h — which tools reach the network whatever their input. A
 * configuration marks them (toolgate.lua's servers.NAME.network), as
 * globs over toolgate's tool names (github__* for a server's every tool);
 * a policy reads the answer as call.network (policy/call_facts.c), so
 * that "no network for a sensitive session" needs no list in the policy.
 *
 * A front that loaded the configuration declares the globs itself
 * (toolgate serve, test, explain); a runtime that was given none asks the
 * process's reader once, when a rule first reads call.network (the hook:
 * toolgate.lua in its folder; again after the file is saved). main.c
 * sets the reader; without one (the Lua module, an embedder) nothing is
 * marked unless declared.
 */
#ifndef TG_CORE_NETWORK_H
#define TG_CORE_NETWORK_H

#include <stddef.h>
#include <stdint.h>
#include "toolgate.h"

struct tg_core;
struct cJSON;

/* Reads the globs of the configuration at path (NULL: the default file,
 * if there is one) into *out: an array of strings. -1 with err. */
typedef int (*tg_network_reader)(const char *path, struct cJSON **out,
                                 char *err, size_t errlen);

/* A stamp of the default file (its inode, size and modification time;
 * 0: there is none), so that a long-lived runtime reads it again after a
 * save. */
typedef uint64_t (*tg_network_stamp)(void);

/* The process's reader and stamp (one per process: main.c sets them at
 * start; stamp may be NULL: the file is read once). */
void tg__network_set_reader(tg_network_reader fn, tg_network_stamp stamp);

/* Replaces the runtime's globs with a copy of globs (NULL: none): the
 * reader is not asked afterwards. */
void tg__network_declare(struct tg_core *core, const struct cJSON *globs);

/* Whether tool reaches the network: 1, 0, or -1 with err (the
 * configuration cannot be read: the caller fails closed). */
int tg__network_of(struct tg_core *core, const char *tool,
                   char err[TG_ERRMSG]);

/* Marks one tool name as reaching the network, beside the globs
 * (`toolgate test`'s case says network = true). 0, or -1 out of memory. */
int tg__network_mark(struct tg_core *core, const char *tool);

void tg__network_free(struct tg_core *core);

#endif
