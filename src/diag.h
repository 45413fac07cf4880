/*
 * diag.h - messages for the user.
 *
 * The one error convention of fidx: inside the code, functions return -1 or
 * NULL with errno set (or an error string for the store); at the edge, one
 * line on stderr says what failed, on which path, and why, lower case, with
 * the subject quoted:  fidx: cannot open 'x': Permission denied
 */
#ifndef FIDX_DIAG_H
#define FIDX_DIAG_H

#include <stdbool.h>

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

/* Returns one when n is 1, else many, for counts in text: "1 file", "2 files". */
static inline const char *fidx_plural(unsigned long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* How many results of fidx_quote() stay valid at once (one message may quote that many). */
#define FIDX_QUOTE_AT_ONCE 4

/*
 * Quotes bytes for a message: returns a static per-thread string of at most
 * ~4 KiB in which control characters (C0, DEL, and C1 in UTF-8) and invalid
 * UTF-8 are escaped (\n, \x1b, \xc2\x9b, \x80), so a hostile name can
 * neither break the one-line rule nor drive a terminal.  The string stays
 * valid for the next FIDX_QUOTE_AT_ONCE - 1 calls of the thread.
 */
const char *fidx_quote(const char *s);

#endif /* FIDX_DIAG_H */
