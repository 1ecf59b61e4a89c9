/*
 * state_dir.c — toolgate's folder of state (state_dir.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "state_dir.h"

int tg__state_dir(char *buf, size_t len) {
  const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
  int n;
  if (state && state[0] == '/')
    n = snprintf(buf, len, "%s/toolgate", state);
  else if (home && home[0] == '/')
    n = snprintf(buf, len, "%s/.local/state/toolgate", home);
  else
    return -ENOENT;
  return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
