/*
 * dbfile.c - the header probe and the reader lock of dbfile.h.
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

/* Whether path + suffix exists (an error other than ENOENT counts as yes). */
static bool beside(const char *path, const char *suffix)
{
	char *p;
	struct stat sb;
	if (asprintf(&p, "%s%s", path, suffix) < 0)
		return true;
	bool there = lstat(p, &sb) == 0 || errno != ENOENT;
	free(p);
	return there;
}

bool fidx_dbfile_at_rest(const char *path)
{
	return !beside(path, "-wal") && !beside(path, "-shm") && !beside(path, "-journal");
}

/* Reads SQLite's file change counter (header offset 24, big-endian) from fd into *out. */
static int change_counter(int fd, uint32_t *out)
{
	unsigned char b[4];
	if (pread(fd, b, sizeof(b), 24) != (ssize_t)sizeof(b))
		return -1;
	*out = be32(b);
	return 0;
}

bool fidx_dbfile_hold(const char *path, bool at_rest, struct fidx_dbfile_hold *h)
{
	struct flock lock = {.l_type = F_RDLCK, .l_whence = SEEK_SET,
			     .l_start = FIDX_DBFILE_READER_BYTE, .l_len = 1};
	struct stat sb;

	h->fd = -1;
	if (at_rest && !fidx_dbfile_at_rest(path))
		return false;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return false;
	/* Looked at again once locked: a writer that came in between left its -wal. */
	if (fcntl(fd, F_OFD_SETLK, &lock) < 0 || (at_rest && !fidx_dbfile_at_rest(path)) ||
	    fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || change_counter(fd, &h->change_counter) < 0) {
		close(fd);
		return false;
	}
	h->fd = fd;
	h->dev = sb.st_dev;
	h->ino = sb.st_ino;
	h->size = sb.st_size;
	h->mtime = sb.st_mtim;
	h->ctime = sb.st_ctim;
	return true;
}

bool fidx_dbfile_moved(const char *path, const struct fidx_dbfile_hold *h)
{
	struct stat now, named;
	uint32_t counter;
	if (h->fd < 0)
		return false;
	if (fstat(h->fd, &now) < 0 || stat(path, &named) < 0 ||
	    change_counter(h->fd, &counter) < 0)
		return true;
	return now.st_size != h->size || now.st_mtim.tv_sec != h->mtime.tv_sec ||
	       now.st_mtim.tv_nsec != h->mtime.tv_nsec || now.st_ctim.tv_sec != h->ctime.tv_sec ||
	       now.st_ctim.tv_nsec != h->ctime.tv_nsec || counter != h->change_counter ||
	       named.st_dev != h->dev || named.st_ino != h->ino;
}

void fidx_dbfile_release(struct fidx_dbfile_hold *h)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
}

bool fidx_dbfile_reader_holds(int fd)
{
	struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET,
			     .l_start = FIDX_DBFILE_READER_BYTE, .l_len = 1};
	return fd >= 0 && fcntl(fd, F_OFD_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
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
