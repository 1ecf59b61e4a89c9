/*
 * embed.h — driving the runtime's own loop from a host's loop (an editor,
 * luv, a GUI toolkit): the backend fd, the next timeout and a non-blocking
 * turn of include/toolgate.h's "embedding in a host's loop" section.
 */
#ifndef TG_EMBED_H
#define TG_EMBED_H

#include <cjson/cJSON.h>
#include "toolgate.h"

typedef struct tg_embed tg_embed;

/* Closes the pump handle (tg_runtime_free). Safe when there is none. */
void tg__embed_stop(tg_runtime *rt);

#endif
