/*
 * mounts.h - the mounted filesystems, from /proc/self/mountinfo.
 */
#ifndef FIDX_MOUNTS_H
#define FIDX_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

struct fidx_mount {
	char *target;      /* mount point, unescaped (\040 -> ' ') */
	char *source;      /* mount source ("/dev/vda1", "tmpfs", ...) */
	char *fstype;      /* filesystem type ("ext4", ...) */
	uint64_t dev;      /* st_dev of the mount, makedev(major, minor) */
	uint64_t size;     /* total bytes (statvfs), 0 if unknown */
	uint64_t avail;    /* bytes available to unprivileged users */
	uint64_t used;     /* bytes used */
	bool real;         /* a filesystem that holds files (not proc, sysfs, cgroup, ...) */
};

/*
 * Reads the mount table of this process.  Returns 0 and sets *mounts (an
 * array the caller frees with fidx_mounts_free()) and *n, or -1 with errno set.
 */
int fidx_mounts_read(struct fidx_mount **mounts, size_t *n);

/*
 * Parses mountinfo text (the format of /proc/self/mountinfo) read from f, as
 * fidx_mounts_read() does for this process's table.  Returns 0 and sets
 * *mounts (freed with fidx_mounts_free()) and *n, or -1 with errno set:
 * EINVAL for a malformed line, ENOMEM, or the error of the read.
 */
int fidx_mounts_parse(FILE *f, struct fidx_mount **mounts, size_t *n);

/* Frees what fidx_mounts_read() returned. */
void fidx_mounts_free(struct fidx_mount *mounts, size_t n);

#endif /* FIDX_MOUNTS_H */
