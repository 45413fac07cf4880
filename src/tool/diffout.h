/*
 * diffout.h - what `fidx diff` and `fidx check` share at the command line:
 * their exit statuses, their options, and the report of a comparison.
 */
#ifndef FIDX_DIFFOUT_H
#define FIDX_DIFFOUT_H

#include <stdbool.h>
#include <stdio.h>

#include "diff.h"
#include "error.h"
#include "options.h"

/* The exit codes of diff's and check's errors: AIDE's numbers. */
enum fidx_diff_exit {
	FIDX_DIFF_EXIT_WRITE = 14,    /* output could not be written */
	FIDX_DIFF_EXIT_USAGE = 15,    /* invalid argument */
	FIDX_DIFF_EXIT_CONFIG = 17,   /* no such scan, nothing to compare with */
	FIDX_DIFF_EXIT_READ = 18,     /* the database cannot be read */
	FIDX_DIFF_EXIT_VERSION = 19,  /* the database has a newer schema */
};

/*
 * The exit status for a database that could not be opened (err, from
 * fidx_query_open()): VERSION for a fidx database of a newer schema, READ
 * otherwise.
 */
int fidx_diff_open_status(const struct fidx_error *err);

/*
 * Adds the attributes of an --ignore argument to *(unsigned *)mask.  Returns
 * 0, or -1 after printing which name is unknown.
 */
int fidx_diff_ignore_arg(const char *arg, void *mask);

/* The options that diff and check share: -v, --ignore ATTRS and --atime. */
#define FIDX_OPT_DIFF(verbose, ignore, atime)                                                 \
	FIDX_OPT_FLAG('v', "verbose", (verbose),                                                \
		      "old and new values of each attribute that changed"),                     \
	FIDX_OPT_CALL(0, "ignore", "ATTRS", fidx_diff_ignore_arg, (ignore),                     \
		      "leave these attributes out of the comparison, e.g. ctime,mtime"),        \
	FIDX_OPT_FLAG(0, "atime", (atime),                                                      \
		      "also compare access times (left out by default: reads move them)")

/* How fidx_diff_print() writes. */
struct fidx_diff_print_opts {
	bool json;     /* one JSON object per entry */
	bool nul;      /* end every line with NUL, not '\n' (text) */
	bool verbose;  /* old and new values of each changed attribute */
};

/*
 * Prints d on out (text or JSON lines, see `fidx diff --help`).  With
 * verbose, the two rows of each entry are read again by id from their
 * sides' stores.  Returns 0, or -1 with err set when a store cannot be read
 * (a failed write is out's error flag, for the caller).
 */
int fidx_diff_print(const struct fidx_diff *d, const struct fidx_diff_side *old,
		    const struct fidx_diff_side *new, const struct fidx_diff_print_opts *o,
		    FILE *out, struct fidx_error *err);

#endif /* FIDX_DIFFOUT_H */
