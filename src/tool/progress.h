/*
 * progress.h - the progress line of a scan, and of a long query.
 *
 * One line on stderr, fitted to the terminal's width at every redraw (a
 * resize is followed), redrawn in place and erased at the end, so that it
 * never wraps and leaves nothing behind (progress.c).
 */
#ifndef FIDX_PROGRESS_H
#define FIDX_PROGRESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scan.h"

struct fidx_progress;

/*
 * Starts a thread that redraws one line on stderr about ten times a second
 * from c (which must outlive it).  hashing says whether files are hashed.
 * Returns NULL (and the scan goes on without progress) if it cannot start.
 */
struct fidx_progress *fidx_progress_start(struct fidx_progress_counters *c, bool hashing);

/*
 * Whether a query command draws its progress line: stderr is a terminal,
 * -q was not given, and the results (on stdout, when to_stdout) do not go
 * to that same terminal (there they show the progress themselves, and a
 * line would only get in their way).
 */
bool fidx_progress_rows_wanted(bool quiet, bool to_stdout);

/*
 * Starts the line of a query reading rows: *rows (bumped by the caller as it
 * steps, relaxed) of total (0: unknown), the rate and an ETA, drawn once
 * half a second has passed.  Returns NULL (and the query goes on without it)
 * if the thread cannot start.
 */
struct fidx_progress *fidx_progress_rows_start(const atomic_uint_least64_t *rows, uint64_t total);

/* Stops the thread and erases the line.  NULL is allowed. */
void fidx_progress_stop(struct fidx_progress *p);

#endif /* FIDX_PROGRESS_H */
