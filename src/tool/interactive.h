/*
 * interactive.h - the point-and-go front end of `fidx scan -i`.
 */
#ifndef FIDX_INTERACTIVE_H
#define FIDX_INTERACTIVE_H

#include <stdio.h>

/* What the user chose. */
struct fidx_interactive_choice {
	char *root;        /* path to scan: a mount point, or a path below it; malloc'ed */
	unsigned jobs;     /* worker threads */
};

/*
 * Lists the real mounted filesystems (with size and type) on out, asks on in
 * which one to scan, how many workers (default_jobs when blank), and an
 * optional sub-path (blank = all of it), validating each answer and asking
 * again after a wrong one.  Returns 0 and fills *choice, or -1 when input
 * ended or there is nothing to scan (a message was printed).
 */
int fidx_interactive_ask(FILE *in, FILE *out, unsigned default_jobs,
			 struct fidx_interactive_choice *choice);

#endif /* FIDX_INTERACTIVE_H */
