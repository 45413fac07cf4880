/*
 * fdutil.h - descriptors beyond the usual limits: opening paths longer than
 * PATH_MAX, and raising the open file limit.  Used by the walk and the scan.
 */
#ifndef FIDX_FDUTIL_H
#define FIDX_FDUTIL_H

/*
 * Opens path, which may be longer than PATH_MAX, by walking it in pieces
 * with openat().  flags apply to the last component; O_CLOEXEC is added.
 * Returns a descriptor, or -1 with errno set.
 */
int fidx_open_long(const char *path, int flags);

/*
 * Raises this process's soft RLIMIT_NOFILE to its hard limit (fidx_walk()
 * does it too) and returns the soft limit now in force.
 */
unsigned long fidx_raise_nofile(void);

#endif /* FIDX_FDUTIL_H */
