/*
 * dbfile.c - the header probe of dbfile.h.
 */
#include "dbfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads a big-endian 32-bit value. */
static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int fidx_dbfile_probe(const char *path, uint32_t *version)
{
	static const char magic[16] = "SQLite format 3";
	unsigned char h[100];
	struct stat sb;
	size_t n = 0;
	int e;

	/* O_NONBLOCK: a FIFO named as the database must not hang the open. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? FIDX_DBFILE_MISSING : -1;
	if (fstat(fd, &sb) < 0)
		goto fail;
	if (S_ISDIR(sb.st_mode)) {
		errno = EISDIR;
		goto fail;
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return FIDX_DBFILE_OTHER;
	}
	while (n < sizeof(h)) {
		ssize_t r = read(fd, h + n, sizeof(h) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	if (n == 0)
		return FIDX_DBFILE_EMPTY;
	if (n < sizeof(h) || memcmp(h, magic, sizeof(magic)) != 0)
		return FIDX_DBFILE_OTHER;
	if (be32(h + 68) != FIDX_APPLICATION_ID)
		return FIDX_DBFILE_SQLITE;
	*version = be32(h + 60);
	return FIDX_DBFILE_FIDX;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

const char *fidx_dbfile_tmpdir(void)
{
	const char *dir = getenv("TMPDIR");
	return dir && *dir ? dir : "/tmp";
}

char *fidx_dbfile_temporary(const char *prefix)
{
	char *path;
	if (asprintf(&path, "%s/%s-XXXXXX", fidx_dbfile_tmpdir(), prefix) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	int fd = mkstemp(path);
	if (fd < 0) {
		int err = errno;
		free(path);
		errno = err;
		return NULL;
	}
	close(fd);
	return path;
}

void fidx_dbfile_remove(const char *path)
{
	static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		char *p;
		if (asprintf(&p, "%s%s", path, suffixes[i]) >= 0) {
			unlink(p);
			free(p);
		}
	}
}
