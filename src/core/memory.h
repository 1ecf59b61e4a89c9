/*
 * memory.h — what a memory and a recall are (tg.memory in policies, the
 * Lua module's and the fronts' memory functions): the types the sinks
 * (core/sink.h), the policies' API and the database (store/store_api.h)
 * share, and the size a stored text may have.
 */
#ifndef TG_CORE_MEMORY_H
#define TG_CORE_MEMORY_H

#include <stddef.h>
#include "toolgate.h"

/* The longest text stored: a message's content and tool_calls, a
 * memory's content (bytes each). */
#define TG_MESSAGE_MAX (16u << 20)

/* What a host or a policy asks to keep (a fact, a preference, a summary),
 * found again by full-text relevance. A memory of scope "session" is seen
 * by that session only; one of scope "project" by every session of that
 * project (a folder, by its real path), never by another project. */
typedef struct {
  const char *kind;           /* required: "fact", "preference", ... */
  const char *content;        /* required, at most TG_MESSAGE_MAX bytes */
  const struct cJSON *metadata; /* NULL, or any JSON */
  const char *scope;          /* "session" (NULL) or "project" */
  const char *session;        /* scope session: required */
  const char *project;        /* scope project: the folder; NULL: the cwd */
} tg_memory;

typedef struct {
  const char *query;          /* words: any may match (they are taken as
                                 words, never as FTS5 syntax) */
  const char *scope;          /* NULL: both the session's and the
                                 project's; "session"; "project" */
  const char *session;        /* whose session memories (NULL: none) */
  const char *project;        /* whose project memories; NULL: the cwd */
  size_t limit;               /* 0: 10 */
  double min_score;           /* only hits scoring at least this (score =
                                 -bm25: higher is better); 0: any */
  size_t max_tokens;          /* leave out what would take the contents
                                 past about this many tokens (4 bytes
                                 each); 0: no cap */
} tg_recall_filter;

#endif
