/*
 * nearest.h — "did you mean": the known name nearest to a misspelt one,
 * for the fronts' own names (toolgate.lua's keys), measured as the
 * policies' did-you-mean measures (a typo or two, a swap of neighbours).
 */
#ifndef TG_KIT_NEAREST_H
#define TG_KIT_NEAREST_H

/* The name of names (NULL-terminated) nearest to name, at most two typos
 * away, or NULL. */
const char *kit_nearest_name(const char *name, const char *const *names);

#endif
