/*
 * policy_tests.h — the test files of a policies folder (toolgate test):
 * the NAME_test.lua files of DIR, then those of DIR/tests/, each folder in
 * name order. A test file is Lua run in a sandbox like a policy's (its own
 * lua_State, not the generation's: a test file is not a policy and
 * registers nothing) that returns a list of cases:
 *
 *   return {
 *     { name = "rm -rf / is denied", tool = "exec",
 *       args = { command = "rm -rf /" }, expect = "deny",
 *       rule = "shell-destructive", reason_match = "rm %-r" },
 *     ...
 *   }
 *
 * Each case is read strictly (an unknown key is an error, like tg.rule's)
 * into JSON: {name, tool, args, session?, metadata?, expect?, rule?,
 * reason_match?, expect_args?, expect_tool?, result?, error?,
 * expect_result?, expect_error_code?, file, line}. The runner is the
 * runtime's (runtime/policy_test.c).
 */
#ifndef TG_POLICY_TESTS_H
#define TG_POLICY_TESTS_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "toolgate.h"

typedef struct tg_policy_tests tg_policy_tests;

/* Loads every test file of dir under cfg's sandbox settings. NULL with
 * "file:line: message" in err when a file does not load or a case is
 * malformed, or when there is no test file. */
tg_policy_tests *tg__policy_tests_load(const tg_config *cfg, const char *dir,
                                       char *err, size_t errlen);
void tg__policy_tests_free(tg_policy_tests *t);

/* The cases, in file order then case order (a JSON array, owned by t). */
const cJSON *tg__policy_tests_cases(const tg_policy_tests *t);
/* The test files, as a JSON array of paths (owned by t). */
const cJSON *tg__policy_tests_files(const tg_policy_tests *t);

/* Does the Lua pattern match somewhere in subject (string.find, bounded
 * like the policies' own, under the time limit)? 1 yes, 0 no, -1 with
 * err when the pattern is malformed. */
int tg__policy_tests_find(tg_policy_tests *t, const char *subject,
                          const char *pattern, char *err, size_t errlen);

#endif
