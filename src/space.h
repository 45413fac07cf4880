/*
 * space.h - what the commands that read whole scans share: fidx du and
 * fidx stats (sizes, counts), and fidx match (how to read the rows).
 *
 * They read every row of the scans they are given, and choose how the same
 * way (fidx_space_read_table()).  du and stats read the size and blocks
 * columns: a scan made with --no-stat has none (every size is NULL), and
 * summing it would print zeros that look like an answer, so both refuse it
 * by name.  Sizes are printed for people ("1.5 KiB", fidx_human_size()) or,
 * with -b, as exact bytes; their counts (du -d, stats --top) are parsed
 * alike.
 */
#ifndef FIDX_SPACE_H
#define FIDX_SPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "query.h"

/*
 * Checks that every selected scan of q recorded sizes (it was not made with
 * --no-stat).  Returns 0, or -1 after printing one line that names the scan
 * (or SQLite's failure).
 */
int fidx_space_check_scans(const struct fidx_query *q);

/*
 * Returns 1 when reading all the rows of scan (0: of every selected scan) is
 * faster as a pass over the whole file table (rowid order, every scan's rows,
 * the query saying `+scan_id` to keep SQLite off the index) than through the
 * index file(scan_id, path), that is when those scans hold at least half the
 * rows of the table; 0 otherwise (also when one is still running); -1 after
 * printing SQLite's failure.
 */
int fidx_space_read_table(const struct fidx_query *q, int64_t scan);

/*
 * Parses the count arg of option opt: decimal digits only; a count beyond
 * INT_MAX means INT_MAX (more than any scan can show).  Returns 0, or -1
 * after printing "invalid OPT 'ARG': expected a whole number, 0 or more".
 */
int fidx_space_parse_count(const char *opt, const char *arg, unsigned *count);

/*
 * Formats a size: the exact number of bytes when exact, else for people as
 * fidx_human_size() does.  Returns buf.
 */
const char *fidx_space_size(uint64_t bytes, bool exact, char buf[static 24]);

#endif /* FIDX_SPACE_H */
