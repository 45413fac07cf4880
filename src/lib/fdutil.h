/*
 * fdutil.h - descriptors beyond the usual limits: opening paths longer than
 * PATH_MAX, reading all that was asked for, and raising the open file limit.
 * Used by the walk, the scan, dupes and the rescan's table.
 */
#ifndef FIDX_FDUTIL_H
#define FIDX_FDUTIL_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Opens path, which may be longer than PATH_MAX, by walking it in pieces
 * with openat().  flags apply to the last component; O_CLOEXEC is added.
 * Returns a descriptor, or -1 with errno set.
 */
int fidx_open_long(const char *path, int flags);

/*
 * Reads up to n bytes of fd into buf: at off (pread), or at the file's
 * offset when off is -1 (read), retrying short reads and EINTR until n bytes
 * or the end of the file.  Returns the bytes read, or -1 with errno set.
 */
ssize_t fidx_read_full(int fd, void *buf, size_t n, off_t off);

/*
 * Raises this process's soft RLIMIT_NOFILE to its hard limit (fidx_walk()
 * does it too) and returns the soft limit now in force.
 */
unsigned long fidx_raise_nofile(void);

#endif /* FIDX_FDUTIL_H */
