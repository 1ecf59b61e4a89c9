/*
 * dialect.h — a coding agent's hook protocol, as one value: everything
 * toolgate needs to speak for one agent, so that an agent is one file
 * (src/agent/dialect_<agent>.c) and one line in the registry
 * (dialects.c), and nothing else in C names it.
 *
 * The rest of the code reads one event shape, the canonical one (Claude
 * Code's: hook_event_name with toolgate's event names, tool_name,
 * tool_input, tool_response, session_id, cwd, tool_use_id, error, ...);
 * a dialect turns its agent's native event into it (to_canonical), tells
 * where the event's name comes from when the payload lacks it (the
 * installed line passes --event NAME), renders what toolgate says (a
 * tg_hook_say) in the agent's words, states what its hooks can say
 * (capabilities: what cannot be said is degraded, never dropped
 * silently), and describes its install: the settings files, their JSON
 * shape, the events with their matchers, and the form a hook that cannot
 * answer must take for the agent to block (exit 2 for most; a deny on
 * stdout where the agent treats every failing exit as "carry on").
 */
#ifndef TG_AGENT_DIALECT_H
#define TG_AGENT_DIALECT_H

#include <stddef.h>
#include <cjson/cJSON.h>

typedef struct tg_dialect tg_dialect;

typedef enum {
  TG_HOOK_EV_OTHER = 0,        /* unknown: passed over */
  TG_HOOK_EV_PRE,              /* PreToolUse */
  TG_HOOK_EV_PERMISSION,       /* PermissionRequest */
  TG_HOOK_EV_POST,             /* PostToolUse */
  TG_HOOK_EV_POST_FAILURE,     /* PostToolUseFailure */
  /* recorded, nothing to judge (record.c) */
  TG_HOOK_EV_PROMPT,           /* UserPromptSubmit */
  TG_HOOK_EV_STOP,             /* Stop, SubagentStop */
  TG_HOOK_EV_SESSION_START,    /* SessionStart */
  TG_HOOK_EV_SESSION_END       /* SessionEnd */
} tg_hook_event;

/* A tool call's event: judged (the others are recorded or passed over). */
static inline int tg__hook_judged(tg_hook_event e) {
  return e >= TG_HOOK_EV_PRE && e <= TG_HOOK_EV_POST_FAILURE;
}

typedef enum {
  TG_HOOK_NONE = 0,            /* no decision: the agent's own flow */
  TG_HOOK_ALLOW,
  TG_HOOK_DENY,
  TG_HOOK_ASK
} tg_hook_verdict;

/* What toolgate says to the agent, before it is put in the agent's words
 * (the dialect's render). */
typedef struct {
  const tg_dialect *agent;
  tg_hook_event event;
  tg_hook_verdict verdict;     /* PRE, PERMISSION */
  const char *reason;          /* deny's reason, ask's prompt, allow's why */
  const cJSON *updated_input;  /* a rewrite, in the agent's tool-input shape */
  int block;                   /* POST: block with reason */
  const char *context;         /* additionalContext */
  const cJSON *updated_mcp_output; /* POST: a post-hook's result for an MCP tool */
  const char *system_message;  /* shown to the user */
  const char *message;         /* stderr */
  int exit_code;               /* 0, or 2: a blocking error (the message
                                  says why), put in the agent's blocking
                                  form by its render */
  const cJSON *native;         /* the agent's own event (NULL: unread) */
} tg_hook_say;

/* One event name of an agent and toolgate's kind of it. */
typedef struct {
  const char *name;
  tg_hook_event kind;
} tg_dialect_event;

/* One settings file an install may write: the install flag that picks it
 * ("--project", the first is the default; "--user"; "--local"), its path
 * (from the project, or from HOME when in_home: see home_var below). */
typedef struct {
  const char *flag;
  const char *file;
  int in_home;
} tg_dialect_place;

/* One hook an install writes: the agent's event name (as in its settings),
 * the matcher (NULL: none), whether a hook that cannot answer must block
 * (tool calls, prompts) or only report (a stop or a session, where a
 * block would keep the agent from ever stopping), and whether the line
 * passes --event NAME (the agent's payload does not say which event). */
typedef struct {
  const char *event;
  const char *matcher;
  int blocks;
  int event_arg;
} tg_dialect_hook;

/* Whether the agent runs hooks in a folder: some run none (a project's
 * settings' nor the user's) in a folder the user has not trusted, and say
 * nothing of it. */
typedef enum {
  TG_FOLDER_TRUSTED = 0,       /* trusted, or trust is off */
  TG_FOLDER_TRUSTED_BY_ENV,    /* by the sessions started with this
                                  environment only: why says which */
  TG_FOLDER_UNTRUSTED,         /* no hook runs here */
  TG_FOLDER_UNKNOWN            /* cannot be told: a file it decides by is
                                  unreadable or garbled (file) */
} tg_folder_trust;

typedef struct {
  tg_folder_trust trust;
  char why[4096];              /* what decided it, in plain words */
  char file[4096];             /* the file to edit to change it; "" none */
} tg_folder_trust_said;

/* How an install writes the agent's settings. */
typedef struct {
  const tg_dialect_place *places;  /* ends with a NULL flag */
  /* the agent's own home folder, when this environment variable names
   * one (COPILOT_HOME, CODEX_HOME, GEMINI_CLI_HOME): the in_home places
   * are home_file under it, and the agent reads no file of HOME's */
  const char *home_var, *home_file;
  const tg_dialect_hook *hooks;    /* ends with a NULL event */
  /* hooks.EVENT is [{"matcher"?, "hooks": [HOOK]}] (grouped), or [HOOK]
   * (flat: the matcher, if any, in the hook) */
  int flat;
  const char *command_key;         /* HOOK's command: "command", "bash" */
  const char *timeout_key;         /* "timeout", "timeoutSec" */
  unsigned timeout_scale;          /* 1: seconds; 1000: milliseconds */
  /* keys the file must hold at its top ({"version": 1}), as JSON; NULL */
  const char *top;
  /* the environment variable naming the project, when the agent sets one
   * for its hooks: a project's shared settings name the policies from it
   * (NULL: the policies' absolute path) */
  const char *project_var;
  /* the agent reads exit 2 as a block: toolgate's own answers exit 0 or
   * 2 and the installed line lets both through; 0: they exit 0 only (a
   * block is said on stdout) and any other exit is a failure */
  int exit_2_blocks;
  /* sh text, after the reason went to stderr, for a hook that could not
   * answer (exit $rc): the form that blocks ("exit 2"), and the one that
   * only reports ("exit 1"); one line, no single quote */
  const char *fail_block, *fail_report;
  /* the agent's native event of a harmless shell call (`true`) in cwd,
   * for the check an install and `toolgate doctor` run; the name of its
   * event is check_event */
  cJSON *(*check_event)(const char *cwd);
  const char *check_event_name;
  /* the key that makes the agent itself block when the hook fails (a
   * crash, its own timeout), set true on the hooks that block: Cursor's
   * failClosed; NULL: none */
  const char *fail_closed_key;
  /* the agent runs no hook commands but a plugin file: the place is that
   * file, written whole from toolgate's plugin (src/hook/plugin.c) with
   * the line of hooks[0] in it */
  int plugin;
  /* a key of its settings that, true, makes the agent run no hook at all
   * (Claude Code's "disableAllHooks"), toolgate's included: `toolgate
   * doctor` says so; NULL: none known */
  const char *off_switch;
  /* the agent runs hooks only in a folder the user trusts (Gemini CLI's
   * folder trust): whether it trusts folder (a path), into *out, from
   * the agent's own files and environment; NULL: it runs them anywhere */
  void (*folder_trust)(const char *folder, tg_folder_trust_said *out);
} tg_dialect_install;

struct tg_dialect {
  const char *name;                /* "claude-code": the canonical name */
  const char *const *aliases;      /* other names it answers to; NULL-ended */
  const char *title;               /* "Claude Code", in messages */
  const char *program;             /* the agent's own command (doctor) */
  /* what its hooks can say (0: toolgate degrades it, see reply.c) */
  int pre_allow_plain;             /* a pre-tool "allow" without a rewrite */
  int pre_ask;                     /* a pre-tool "ask" */
  int pre_rewrite;                 /* a pre-tool rewrite of the input */
  int permission_rewrite;          /* a permission request's rewrite */
  int pre_context, post_context;   /* text for the model: before the
                                      tool, after it ran */
  int failure_context;             /* ... after it failed */
  int post_block;                  /* a post-tool block (the next step) */
  const tg_dialect_event *events;  /* its event names; NULL name ends */
  int events_and_canonical;        /* ... and the canonical names too */
  /* its transcript (transcript_path) is read at a stop for the model's
   * token usage (transcript.c knows Claude Code's and Codex's) */
  int transcript_usage;
  /* the payload has no event name: it comes from --event NAME */
  int event_from_arg;
  /* The canonical event of native (the agent's, read strictly), named
   * name (from the payload or --event): a new object, or native itself
   * when it already is one. NULL with why for a malformed event. NULL
   * function: the native event is the canonical one. */
  cJSON *(*to_canonical)(cJSON *native, const char *name,
                         tg_hook_event kind, char *why, size_t len);
  /* say in the agent's words: the JSON object its hook writes on stdout
   * (out, empty: nothing), and the exit code (*exit_code, say's already) */
  void (*render)(const tg_hook_say *say, cJSON *out, int *exit_code);
  const char *ask_degraded;        /* how an ask is said when it cannot
                                      be ("a Codex hook cannot ask") */
  tg_dialect_install install;
  /* the agent reads a hook that prints nothing as a failed one: every
   * answer with exit 0 is a JSON object, {} for nothing */
  int answer_always;
  /* the agent takes any tool's result as the post-hooks left it, before
   * its model reads it (said in updated_mcp_output, whatever the tool) */
  int post_replace;
};

/* ---- the registry (dialects.c) ------------------------------------------ */

/* The dialect named name or one of its aliases; NULL. */
const tg_dialect *tg__dialect(const char *name);
/* The i-th dialect (registry order); NULL past the last. */
const tg_dialect *tg__dialect_at(size_t i);
/* "claude-code, codex, ..." (static). */
const char *tg__dialect_names(void);

/* ---- Gemini CLI's folder trust (trust_gemini.c) --------------------------- */

void tg__gemini_folder_trust(const char *folder, tg_folder_trust_said *out);

/* ---- shared by dialects (dialect_common.c) -------------------------------- */

/* Where place pl of install in is, into out: "" and -1 when it is under a
 * HOME that is not set (not absolute), or under the agent's home variable
 * (home_var) set to a path that is not absolute. */
int tg__dialect_place_path(const tg_dialect_install *in,
                           const tg_dialect_place *pl, char *out, size_t len);
/* toolgate's (the canonical) event names and kinds, Claude Code's own:
 * the events table of an agent that names its events so. */
extern const tg_dialect_event tg__hook_canonical_events[];
/* The kind of an agent's event name; TG_HOOK_EV_OTHER. */
tg_hook_event tg__dialect_kind(const tg_dialect *d, const char *name);
/* toolgate's (the canonical) name of kind; NULL for OTHER. */
const char *tg__hook_kind_name(tg_hook_event kind);
/* The canonical kind of a canonical name (PreToolUse, ...). */
tg_hook_event tg__hook_event_kind(const char *name);
/* say, after the agent's limits: the verdict a pre-tool or permission
 * answer becomes (an ask it cannot say: deny; a plain allow it cannot
 * say: none; a permission rewrite it cannot take: none). */
tg_hook_verdict tg__hook_said_verdict(const tg_hook_say *say);
/* The reason of an ask said as a deny, in buf; or say->reason. */
const char *tg__hook_said_reason(const tg_hook_say *say, char *buf,
                                 size_t len);
/* Agents refuse an empty reason: s, or dflt. */
const char *tg__hook_some(const char *s, const char *dflt);
const char *tg__hook_verdict_word(tg_hook_verdict v);

/* {"decision": word, "reason": reason, or dflt when it has none}: how
 * Gemini CLI and OpenCode take a decision, and Claude Code a post-tool
 * block. */
void tg__hook_add_decision(cJSON *out, const char *word, const char *reason,
                           const char *dflt);

/* The install of an agent whose hooks are {"command", "timeout"} and
 * read exit 2 as a block: a hook that cannot answer exits 2 where it must
 * block, 1 where it only reports. */
#define TG_DIALECT_EXIT_2_COMMAND                                       \
  .command_key = "command", .timeout_key = "timeout", .exit_2_blocks = 1, \
  .fail_block = "exit 2", .fail_report = "exit 1"

/* A copy of native to make a canonical event of: every key but
 * hook_event_name (the caller names it). NULL: out of memory. */
cJSON *tg__dialect_copy_event(const cJSON *native);
/* An install check's event in the canonical shape: session_id, cwd,
 * hook_event_name event, tool_name tool (the agent's shell), tool_input
 * {"command": "true"}. */
cJSON *tg__dialect_shell_check_event(const char *cwd, const char *event,
                                     const char *tool);
/* The strict parser's object of the JSON text s (an agent's arguments
 * given as a string); NULL with why (what names them) when it is not
 * one. */
cJSON *tg__dialect_object_of(const char *s, const char *what, char *why,
                             size_t len);

/* Claude Code's wire format, which Codex shares (dialect_claude_shape.c):
 * hookSpecificOutput with permissionDecision, PermissionRequest's
 * decision, PostToolUse's decision "block", additionalContext,
 * updatedMCPToolOutput, systemMessage; exit 2 blocks. */
void tg__claude_shape_render(const tg_hook_say *say, cJSON *out,
                             int *exit_code);
/* Its check event: a PreToolUse of Bash `true` in cwd. */
cJSON *tg__claude_shape_check_event(const char *cwd);
/* permissionDecision v and permissionDecisionReason (reason, or dflt when
 * it has none) into o: Claude Code's pre-tool decision, which Copilot CLI
 * reads at the top of its answer. */
void tg__claude_shape_decision(cJSON *o, tg_hook_verdict v, const char *reason,
                               const char *dflt);
/* A dialect of the Claude shape, beyond its capabilities: the canonical
 * events, a transcript with the model's usage (transcript.c), its answers
 * ... */
#define TG_CLAUDE_SHAPE                                          \
  .events = tg__hook_canonical_events, .transcript_usage = 1,    \
  .render = tg__claude_shape_render
/* ... and its install: {"command", "timeout" (s)}, exit 2 blocks, checked
 * with a PreToolUse of Bash. */
#define TG_CLAUDE_SHAPE_INSTALL                                        \
  TG_DIALECT_EXIT_2_COMMAND, .timeout_scale = 1,                       \
  .check_event = tg__claude_shape_check_event,                         \
  .check_event_name = "PreToolUse"

#endif
