/*
 * generation.h — one loaded policy set: its own lua_State, the rules,
 * hooks, Lua tools and event handlers its files registered, and a number.
 * A call holds a reference to the generation it started with until it ends;
 * the generation is closed when it is no longer current and unreferenced.
 */
#ifndef TG_GENERATION_H
#define TG_GENERATION_H

#include <stdint.h>
#include <stddef.h>
#include <cjson/cJSON.h>
#include "lua/luacompat.h"
#include "toolgate.h"
#include "core/core.h"

typedef struct {
  char *name;
  int priority;
  char **tools;             /* NULL: every tool */
  size_t ntools;
  int fn_ref;
  int fail_open;
  char *where;
  size_t order;             /* registration order, breaks priority ties */
} tg_rule;

/* How a hook names its tools; the run order goes by it (tg__hook_walk). */
typedef enum {
  TG_HOOK_ANY = 0,          /* "*" */
  TG_HOOK_GLOB = 1,         /* a glob: "mcp__*", "*_file", "{read,write}_file" */
  TG_HOOK_EXACT = 2         /* one tool's name */
} tg_hook_kind;

typedef struct {
  char *tool;               /* "*", a glob or a tool name */
  tg_hook_kind kind;
  int fn_ref;
  char *where;
} tg_hook;

typedef struct {
  char *type;               /* NULL: every event */
  int fn_ref;
  char *where;
} tg_handler;

typedef struct tg_generation {
  uint64_t number;
  int refs;
  lua_State *L;
  struct tg_sandbox *sb;    /* L's limits (sandbox.h) */
  tg_core *core;            /* the runtime's shared state */
  int loading;              /* tg.rule & co. only work while loading */
  int redactor;             /* tg.redact registered one (api_redact.c):
                               without, a string costs no Lua lookup */
  /* What the policies registered, in memory from L's allocator (register.c):
   * n entries of cap allocated. */
  tg_rule *rules;   size_t nrules, caprules;   /* sorted: priority, order */
  tg_hook *before;  size_t nbefore, capbefore; /* registration order */
  tg_hook *after;   size_t nafter, capafter;
  tg_tool **tools;  size_t ntools, captools;
  tg_handler *handlers; size_t nhandlers, caphandlers;
  tg_handler *listers; size_t nlisters, caplisters; /* tg.list_tools hooks
                                                       (type unused) */
  char **files;     size_t nfiles;             /* malloc'd */
  struct tg_chat_reg *chat; /* layers, routing hooks, budgets (chat_side.h) */
  int in_handler;           /* delivering an event to on_event handlers */
  int call_keys_ref;        /* the chain's call-table field names in L's
                               registry (chain/call.c); 0 until made */
  /* a registration being committed (register.c), and why the generation
   * must not load: "" while nothing went wrong */
  const char *commit_fn;
  char commit_where[256];
  char broken[TG_ERRMSG];
} tg_generation;

/* The key of L's registry that holds its generation (light userdata):
 * the call tables' metatable (call_facts.c) reaches the runtime there. */
#define TG_GENERATION_KEY "toolgate.generation"


/* Builds a generation from the policy files of dir (tg__is_policy_file),
 * in name order. dir may be NULL (an empty generation). Returns NULL with
 * "file:line: message" in err. */
tg_generation *tg__generation_load(tg_core *core, const char *dir,
                                   uint64_t number, char *err, size_t errlen);

/* ---- the files of a policies folder (policy_files.c) ---------------------
 * One rule for which files are policies, used by the loader and the folder
 * watch alike: *.lua files that are not dot files (editor temp files and
 * backups) and not tests. Test files (toolgate test, policy_test.c) are
 * *_test.lua, beside the policies or in a tests/ folder under them. */
int tg__is_policy_file(const char *name);
int tg__is_test_file(const char *name);

/* Appends dir/NAME for each NAME of dir that want() accepts, sorted by
 * name, to *files (malloc'd strings, *n of them; the caller frees). A
 * missing dir is an error unless missing_ok. Returns 0, or -1 with err:
 * a file left out would be a policy silently not loaded. */
int tg__list_files(const char *dir, int (*want)(const char *name),
                   int missing_ok, char ***files, size_t *n, char *err,
                   size_t errlen);

/* Runs the Lua source file at path in L under the sandbox sb, in a fresh
 * environment, leaving nres results on the stack: opened without blocking
 * (a FIFO is refused), text only, at most 4 MiB. *src (when src is not
 * NULL) receives the file's text (malloc'd, NUL-terminated). Returns 0, or
 * -1 with "file:line: message" in err (nothing left on the stack). */
int tg__run_file(lua_State *L, struct tg_sandbox *sb, const char *path,
                 int nres, char **src, char *err, size_t errlen);

void tg__generation_ref(tg_generation *g);
void tg__generation_unref(tg_generation *g);

/* For the files of the tg.* API beside api.c: the generation of a tg.*
 * function (upvalue 1) that only works while the files load (raises
 * otherwise, and after a failed commit); and "file:line" where the
 * function at idx was defined, in the generation's memory (NULL when
 * refused). */
tg_generation *tg__api_loading(lua_State *L, const char *fn);
char *tg__api_where(tg_generation *g, lua_State *L, int idx);
/* The tg.* function nearest to `name` (tg__name_distance at most 2, or
 * the same but for case), or NULL: a misspelt one's suggestion. */
const char *tg__api_nearest(const char *name);
/* err holds a policy file's load error; when it is a call of a field
 * that does not exist and whose name is near a tg.* function's
 * ("tg.rul {...}"), adds "did you mean tg.rule?" to it. */
void tg__api_suggest(char *err, size_t errlen);

/* Registers the policy-side `toolgate` module (tg.*) in g->L. */
void tg__policy_api_open(tg_generation *g);
/* Registers a `toolgate` module of the data helpers only (tg.null,
 * tg.array, tg.object, tg.json_encode, tg.json_decode, tg.version) in L:
 * what test files get. Call in a protected call, after tg__json_open. */
void tg__policy_data_api_open(lua_State *L);

/* ---- registration (register.c) --------------------------------------------
 * What a registration keeps (names, list slots, Lua tools) is allocated
 * from the generation's Lua allocator, so policy_memory_cap bounds it like
 * the data policies keep in Lua. A registration checks everything that can
 * fail for a reason of the policy's own first, then commits: between
 * tg__reg_commit_begin and _end only memory is taken, and a failure there
 * breaks the generation — it will not load, even if the policy caught the
 * error with pcall — so no partial policy set is ever loaded. */

/* Raises when the generation is broken: call it before reading what is
 * registered (a failed commit may have left an entry half made). */
void tg__reg_check(lua_State *L, tg_generation *g);
void tg__reg_commit_begin(lua_State *L, tg_generation *g, const char *fn);
void tg__reg_commit_end(tg_generation *g);
/* Records an out-of-memory of the commit in progress and raises it. */
int tg__reg_commit_fail(lua_State *L, tg_generation *g);
/* When a commit was left unfinished (its error was raised, and maybe
 * caught by the policy), says so in g->broken. Returns 1 when broken. */
int tg__reg_broken(tg_generation *g);

/* Makes room for one more entry in *arr (n used of *cap, each size bytes).
 * Returns 0, or -1 when the memory is refused. */
int tg__reg_reserve(tg_generation *g, void **arr, size_t *cap, size_t n,
                    size_t size);
void *tg__reg_alloc(tg_generation *g, size_t size);    /* zeroed */
char *tg__reg_strdup(tg_generation *g, const char *s); /* NULL for NULL */
void tg__reg_free(tg_generation *g, void *p, size_t size);
void tg__reg_strfree(tg_generation *g, char *s);
/* Frees everything registered (before the Lua state closes). */
void tg__reg_free_all(tg_generation *g);

/* Walks the hooks that run for a call of `tool`, in run order: pre-hooks
 * ("before") from the most general to the most specific — "*" ones first,
 * then the glob hooks that match the tool, then the tool's own (exact
 * name), each group in registration order; post-hooks ("after") that list
 * backwards (own, globs, "*", each group last registered first). tool
 * NULL walks every hook of the list in the same order (toolgate check).
 * The chain, explain and check all walk this one order; it copies
 * nothing, so no number of hooks is too many. */
typedef struct {
  const tg_hook *hooks;
  size_t n, k;
  const char *tool;
  const char *const *also;
  int after, pass;
} tg_hook_walk;

/* also: the other names the call answers to (tg__tool_names_match), or
 * NULL. */
void tg__hook_walk_start(tg_hook_walk *w, const tg_generation *g, int after,
                         const char *tool, const char *const *also);
/* The next hook in run order, or NULL when there is none left. */
const tg_hook *tg__hook_walk_next(tg_hook_walk *w);
/* The same order as JSON [{tool, where}] (check and explain list it). */
cJSON *tg__hooks_describe(const tg_generation *g, int after, const char *tool,
                          const char *const *also);

/* Does a rule's tools list cover a call of `tool` (also: its other
 * names, or NULL)? Its entries match as hooks' names do
 * (tg__tool_names_match). */
int tg__rule_covers(const tg_rule *r, const char *tool,
                    const char *const *also);

/* Does any tg.on_event handler of g listen? (the scope's `listens`) */
static inline int tg__generation_listens(const tg_generation *g) {
  return g->nhandlers != 0;
}
/* Does a tool name as policies write it — in a rule's tools, as a hook's
 * tool — cover `tool`? "*" covers every tool; a name with a glob
 * character (* ? [ { \) is a glob (base/glob.c: tg_glob_match); any other
 * name covers that one tool. */
int tg__tool_name_matches(const char *name, const char *tool);
/* Does `name` cover a call of `tool` that also answers to the names in
 * `also` (NULL-terminated; NULL: none)? An agent's call is one of
 * toolgate's tools (Claude Code's Bash is exec) and answers to the
 * agent's names of it too ("Bash", Codex's "shell"): a rule may be
 * written in either's terms, and both cover it. */
int tg__tool_names_match(const char *name, const char *tool,
                         const char *const *also);
/* Is name a glob (not "*", not a plain name)? */
int tg__tool_name_is_glob(const char *name);
/* Adds to the JSON array `warnings` one line for each tool name of g's
 * rules and hooks that no known tool covers (a typo: the rule or hook
 * would never apply), naming the rule or hook and its file:line and the
 * nearest known name; and to the object agent_names (NULL: not wanted)
 * each agent's tool name they write, as {name: {toolgate tool: [agents]}}
 * ("Bash": {"exec": ["claude-code", "codex"]}) (tool_names.c). */
void tg__tool_name_warnings(const tg_generation *g, cJSON *warnings,
                            cJSON *agent_names);
/* The edit distance of a and b (a swap of two neighbours is one edit)
 * when it is at most 2, else 3: how near a typo is to a name. */
size_t tg__name_distance(const char *a, const char *b);

/* The bus scope that delivers events to a generation's tg.on_event
 * handlers (on_event.c); the runtime installs it. */
extern const tg_bus_scope tg__generation_scope;

/* The tool named `name` among g's Lua tools, or NULL. */
const tg_tool *tg__generation_find_tool(const tg_generation *g,
                                        const char *name);

/* The tool list tools (a JSON array of {name, ...}) through g's
 * tg.list_tools hooks, in order (list_tools.c): a new array; NULL when
 * out of memory. */
cJSON *tg__generation_list_tools(tg_generation *g, const cJSON *tools);

/* Describes what is registered (for `toolgate check`). */
cJSON *tg__generation_describe(const tg_generation *g);

#endif
