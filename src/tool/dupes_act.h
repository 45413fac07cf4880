/*
 * dupes_act.h - `fidx dupes --delete | --link | --reflink`: the plan (which
 * copy each group keeps, what happens to the others), printed first, then
 * the actions (core/dedupe.h), each said on stdout and, with --log, kept as
 * a JSON line.
 */
#ifndef FIDX_DUPES_ACT_H
#define FIDX_DUPES_ACT_H

#include <stdbool.h>

#include "dedupe.h"
#include "dupes.h"
#include "query.h"

/* What the user asked for. */
struct fidx_dupes_act {
	enum fidx_dedupe_how how;
	const char *keep;     /* "first", "newest", "oldest", or a glob on the path */
	bool dry_run;         /* the plan alone */
	const char *log;      /* a file to append a JSON line per action to, or NULL */
	bool nul;             /* -0: lines end with NUL */
};

/*
 * Prints the line that heads group g: "N copies of SIZE (BYTES bytes each):
 * SIZE reclaimable (BYTES bytes), sha256 HEX", ended by NUL when nul.
 */
void fidx_dupes_print_header(const struct fidx_dupes_group *g, bool nul);

/*
 * Whether the selected scans of q are of files this machine can act on:
 * made here (the scan's host is this machine's name), on one host, and not
 * of a disk image.  Returns 0, or -1 after printing why.
 */
int fidx_dupes_act_check(const struct fidx_query *q);

/*
 * Prints the plan for the groups of d, then, unless a->dry_run, carries it
 * out.  Returns the exit status: 0 all done (or the plan shown), 1 no
 * duplicates, 2 the log cannot be written, 3 some files left alone (each
 * said on stderr), 130 interrupted.
 */
int fidx_dupes_act_run(const struct fidx_dupes *d, const struct fidx_dupes_act *a);

#endif /* FIDX_DUPES_ACT_H */
