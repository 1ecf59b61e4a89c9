/*
 * install.c — `toolgate hook install|uninstall` (to come).
 */
#include "hook.h"

int hook_install(int argc, char **argv, int uninstall) {
  (void)argc;
  (void)argv;
  (void)uninstall;
  hook_error("hook install: not yet");
  return HOOK_EXIT_USAGE;
}
