/*
 * lua_dir.h — where the shipped Lua library is (lua/ in the source tree:
 * toolgate/shell.lua, ...), which policies reach with require.
 *
 * Found once per process, from the file this code was loaded from (the
 * toolgate command, a program linked with libtoolgate.a, libtoolgate.so or
 * the Lua module toolgate.so: /proc/self/exe for the main program, dladdr
 * for a shared object), in this order:
 *   1. that file is one the build made, where the build put it (the build
 *      folder, its lua/ for the module): the source tree's lua/;
 *   2. relative to that file, as installed (<bindir>/../share/toolgate/lua,
 *      the same from <libdir> and from the Lua module's folder): so an
 *      installed tree works wherever it is moved;
 *   3. the install prefix configured at build time (a program linked with
 *      libtoolgate.a lives anywhere);
 *   4. the source tree's lua/, if it is still there.
 * When none exists, the installed path of 3, so that "module not found"
 * names where it was looked for.
 */
#ifndef TG_LUA_DIR_H
#define TG_LUA_DIR_H

/* The folder (no trailing '/'); never NULL, valid for the process. */
const char *tg__lua_dir(void);

#endif
