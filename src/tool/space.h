/*
 * space.h - what fidx du and fidx stats share: the scans they can sum, and
 * their counts.
 *
 * Both read the size and blocks columns: a scan made with --no-stat has none
 * (every size is NULL), and summing it would print zeros that look like an
 * answer, so both refuse it by name.  Sizes are printed for people ("1.5
 * KiB") or, with -b, as exact bytes (fidx_size_text()); their counts (du -d,
 * stats --top) are parsed alike.
 */
#ifndef FIDX_SPACE_H
#define FIDX_SPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "query.h"

/*
 * Checks that every selected scan of q recorded sizes (it was not made with
 * --no-stat).  Returns 0, or -1 after printing one line that names the scan.
 */
int fidx_space_check_scans(const struct fidx_query *q);

/*
 * Takes the count arg of an option (du -d, stats --top): decimal digits
 * only; a count beyond INT_MAX means INT_MAX (more than any scan can show).
 * Returns 0, or -1 after printing "invalid OPT 'ARG': expected a whole
 * number, 0 or more".
 */
int fidx_space_parse_count(const char *opt, const char *arg, unsigned *count);

/*
 * Checks that the rows summed for the whole of a complete scan (selected
 * scan k of q) are as many as its scan row counts (du, and the tree of
 * report and browse): a row missing from what the store gives would
 * otherwise change the figures without a word.  A scan that is not
 * complete, or whose row counts nothing, passes.  Returns 0, or -1 after
 * printing why.
 */
int fidx_space_check_count(const struct fidx_query *q, size_t k, int64_t rows);

#endif /* FIDX_SPACE_H */
