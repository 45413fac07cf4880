/*
 * diag.h - messages for the user.
 *
 * The edge of the one error convention (error.h): inside the libraries a
 * failure is a struct fidx_error; here, one line on stderr says what failed,
 * on which path, and why, lower case, with the subject quoted (fidx_quote()):
 *
 *     fidx: cannot open 'x': Permission denied
 */
#ifndef FIDX_DIAG_H
#define FIDX_DIAG_H

#include <stdbool.h>

#include "error.h"

/* Prints "fidx: <message>\n" on stderr as one write, so lines never interleave. */
__attribute__((format(printf, 1, 2)))
void fidx_error(const char *fmt, ...);

/* Like fidx_error(), for a warning ("fidx: warning: <message>"). */
__attribute__((format(printf, 1, 2)))
void fidx_warn(const char *fmt, ...);

/*
 * Tells the message writer whether a progress line is on stderr (progress.c):
 * while one is, each message erases it first, so that no message starts in
 * the middle of the line (the line is drawn again below at the next redraw).
 */
void fidx_diag_progress_line(bool shown);

#endif /* FIDX_DIAG_H */
