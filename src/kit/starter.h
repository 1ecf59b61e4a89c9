/*
 * starter.h — the starter policies: a commented baseline a new user gets
 * from `toolgate init` or from `toolgate hook install` with no policies
 * folder, so an agent is guarded from its first call. They are the shipped
 * policies (policies/: destructive shell commands, paths that lead
 * nowhere) and examples/starter/policies/ (secrets, the agent's own
 * settings, supply chain, git history), each with its *_test.lua.
 *
 * Installed (cmake --install) as <datadir>/toolgate/starter/policies/;
 * found, like the Lua library (base/lua_dir.h): from the source tree for
 * the build's own binary, else relative to the binary as installed, else
 * the configured prefix, else the source tree.
 */
#ifndef TOOLGATE_KIT_STARTER_H
#define TOOLGATE_KIT_STARTER_H

#include <stddef.h>

/* The line in a starter file that names the policies folder; the copy
 * gets `local POLICIES = "<the folder's absolute path>"` there. */
#define STARTER_FOLDER_MARK "-- @policies-folder"

typedef struct {
  int force;   /* write over files of the same name */
  int dry_run; /* say what would be written; write nothing */
  int quiet;   /* no line per file */
} starter_opts;

/* Writes the starter into dir (made when missing, parents too). Refuses,
 * writing nothing, when one of its files is there already and not
 * o->force. Prints a line per file on stdout (not o->quiet) and the
 * reason of a failure with cli_error. The number of files, or -1. */
int starter_write(const char *dir, const starter_opts *o);

/* Where the starter is read from: one or two folders (the source tree
 * keeps it in two), into a and b (b may be ""); -1 when none is found. */
int starter_sources(char *a, char *b, size_t len);

#endif
