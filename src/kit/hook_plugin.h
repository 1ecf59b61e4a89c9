/*
 * hook_plugin.h — toolgate's plugin for an agent that runs plugins, not
 * hook commands (OpenCode): the file the binary carries
 * (share/opencode/toolgate.js), written out with the fail-closed hook
 * line in it, and that line read back from a written file. The hook front
 * writes it (`toolgate hook install opencode`), the command line's doctor
 * reads it: two fronts, so it is the kit's.
 */
#ifndef TOOLGATE_KIT_HOOK_PLUGIN_H
#define TOOLGATE_KIT_HOOK_PLUGIN_H

/* The plugin as shipped, its command not filled in (generated from
 * share/opencode/toolgate.js by cmake/embed.cmake). */
extern const char hook_plugin_opencode[];

/* The plugin with line as its command and timeout_ms as its time limit
 * (malloc'd); NULL when out of memory or the shipped file lacks either
 * place. */
char *hook_plugin_text(const char *line, unsigned timeout_ms);

/* The command a written plugin runs (malloc'd), read from its text; NULL
 * when the text is not toolgate's plugin or names no command. */
char *hook_plugin_command(const char *text);

#endif
