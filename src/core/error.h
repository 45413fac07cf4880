/*
 * error.h - the one error convention of fidx's libraries.
 *
 * Three layers, three rules (docs/ARCHITECTURE.md, "Errors"):
 *
 *   src/lib/    the walker, a public library: libc's convention, -1 or NULL
 *               with errno set (include/fidx/walk.h says which).
 *
 *   src/core/,  a function that can fail takes `struct fidx_error *err` as
 *   src/store/  its last argument; on failure it fills it and returns -1 (or
 *               NULL, or another value its comment names):
 *
 *                   err->code   an errno value saying what kind of failure:
 *                               ENOMEM, EIO (a database or file could not be
 *                               read or written), ENOENT (no such database,
 *                               scan or row), EBADMSG (damaged data: a row
 *                               fidx could not have written), EINVAL (a
 *                               request refused), ...
 *                   err->msg    one line for the user: what failed, on which
 *                               path or database, and why, lower case, names
 *                               quoted with fidx_quote() ("cannot read
 *                               database 'x.db': disk I/O error")
 *
 *               The buffer is the caller's, usually on its stack: describing a
 *               failure allocates nothing, so that running out of memory is
 *               described like any other failure.  These layers never print
 *               and never exit; a warning goes to a callback the caller gave.
 *
 *   src/tool/   the edge: err->msg becomes the one line on stderr
 *               (fidx_error("%s", err.msg)) and err->code picks the exit status.
 *
 * The usual shape:
 *
 *     if (!(p = malloc(n)))
 *             return fidx_fail_nomem(err);
 *     if (read(fd, buf, n) < 0)
 *             return fidx_fail(err, errno, "cannot read '%s': %s", fidx_quote(path),
 *                              strerror(errno));
 */
#ifndef FIDX_ERROR_H
#define FIDX_ERROR_H

#include <stdbool.h>

/* Bytes of a message: room for two names quoted by fidx_quote() (~4 KiB each at most). */
#define FIDX_ERROR_MSG 8448

/* A failure: what kind (an errno value) and one line for the user. */
struct fidx_error {
	int code;                  /* errno value; 0 while nothing failed */
	char msg[FIDX_ERROR_MSG];  /* one line, no newline; "" while nothing failed */
};

/*
 * Fills err (when not NULL) with code and the formatted message (cut to
 * fit).  Returns -1, so that a failing path is `return fidx_fail(...)`.
 */
__attribute__((format(printf, 3, 4)))
int fidx_fail(struct fidx_error *err, int code, const char *fmt, ...);

/* fidx_fail(err, ENOMEM, "out of memory").  Returns -1. */
int fidx_fail_nomem(struct fidx_error *err);

/* Copies src into err (when not NULL and not src).  Returns -1. */
int fidx_fail_copy(struct fidx_error *err, const struct fidx_error *src);

/* Clears err: nothing failed. */
static inline void fidx_error_clear(struct fidx_error *err)
{
	err->code = 0;
	err->msg[0] = '\0';
}

/* Whether err holds a failure. */
static inline bool fidx_failed(const struct fidx_error *err)
{
	return err->code != 0 || err->msg[0] != '\0';
}

/*
 * Quotes bytes for a message: returns a static per-thread string of at most
 * ~4 KiB in which control characters (C0, DEL, and C1 in UTF-8) and invalid
 * UTF-8 are escaped (\n, \x1b, \xc2\x9b, \x80), so a hostile name can
 * neither break the one-line rule nor drive a terminal.  The string stays
 * valid for the next FIDX_QUOTE_AT_ONCE - 1 calls of the thread.
 */
const char *fidx_quote(const char *s);

/* Returns one when n is 1, else many, for counts in text: "1 file", "2 files". */
static inline const char *fidx_plural(unsigned long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* How many results of fidx_quote() stay valid at once (one message may quote that many). */
#define FIDX_QUOTE_AT_ONCE 4

#endif /* FIDX_ERROR_H */
