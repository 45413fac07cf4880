/*
 * scanargs.h - what the commands that scan a tree (scan, dupes, check) agree
 * on, so that their scans can be compared and taken up again: the path a
 * root is recorded under, the JSON of scan.options, which reuse.h reads
 * back (the content-shaping options of `fidx scan --resume` and `fidx check`).
 */
#ifndef FIDX_SCANARGS_H
#define FIDX_SCANARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "hashio.h"

/*
 * Returns the absolute path a root stands for: the working directory
 * prepended to a relative one, empty and "." components dropped, and the
 * folders above the last component resolved with realpath(3) (so "..", and
 * symlinks above the root, are resolved as the kernel does), while the last
 * component itself is kept, so that a root symlink is recorded under its own
 * name.  Returns a malloc'ed string, or NULL with errno set.
 */
char *fidx_root_path(const char *path);

/*
 * Returns the JSON object recorded in scan.options (docs/SCHEMA.md): the
 * digests of the mask (in enum order, "none" for 0), jobs, xdev, follow,
 * follow_all (only when true),
 * stat (false with no_stat), io, drop_cache, the exclude patterns (bytes
 * that are not UTF-8 as \u00XX), and, when database is not NULL, the
 * database the scan writes (an absolute path), which the scan leaves out
 * with its -wal, -shm and -journal.  Returns a malloc'ed string, or NULL on
 * ENOMEM.
 */
char *fidx_scan_options_json(unsigned digests, unsigned jobs, bool xdev, bool follow,
			     bool follow_all, bool no_stat, enum fidx_io_mode io, bool drop_cache,
			     const char *const *excludes, size_t nexcludes, const char *database);

#endif /* FIDX_SCANARGS_H */
