/*
 * events_file.h — `--events FILE`: every runtime event as one JSON line,
 * appended and flushed as it happens ("-" writes to stderr).
 */
#ifndef TOOLGATE_CLI_EVENTS_FILE_H
#define TOOLGATE_CLI_EVENTS_FILE_H

#include <cjson/cJSON.h>
#include "toolgate.h"

typedef struct events_file events_file;

/* Opens FILE for appending; NULL after printing why it could not. */
events_file *events_file_open(const char *path);

/* Writes one event; write errors are remembered for events_file_close. */
void events_file_write(events_file *ef, const tg_event *ev);

/* Closes (stderr stays open) and frees. Returns 0, or -1 after printing
 * that some events could not be written. Safe with NULL. */
int events_file_close(events_file *ef);

#endif
