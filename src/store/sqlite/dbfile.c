/*
 * dbfile.c - the header probe, the reader lock and the files' errors of dbfile.h.
 */
#include "dbfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "sysinfo.h"

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
	char p[PATH_MAX + 16];
	struct stat sb;
	if (snprintf(p, sizeof(p), "%s%s", path, suffix) >= (int)sizeof(p))
		return true; /* SQLite could not name it either: taken as there */
	return lstat(p, &sb) == 0 || errno != ENOENT;
}

bool fidx_dbfile_at_rest(const char *path)
{
	return !beside(path, "-wal") && !beside(path, "-shm") && !beside(path, "-journal");
}

#ifndef _WIN32
/* Reads SQLite's file change counter (header offset 24, big-endian) from fd into *out. */
static int change_counter(int fd, uint32_t *out)
{
	unsigned char b[4];
	if (pread(fd, b, sizeof(b), 24) != (ssize_t)sizeof(b))
		return -1;
	*out = be32(b);
	return 0;
}
#endif

#ifdef _WIN32
/*
 * Windows has no open file description locks: a database is always read as
 * SQLite reads it, under SQLite's own locks, and the WAL is checkpointed as
 * SQLite does (docs/WINDOWS.md).
 */
bool fidx_dbfile_hold(const char *path, bool at_rest, struct fidx_dbfile_hold *h)
{
	(void)path, (void)at_rest;
	h->fd = -1;
	return false;
}

bool fidx_dbfile_moved(const char *path, const struct fidx_dbfile_hold *h)
{
	(void)path, (void)h;
	return false;
}
#else
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
#endif

void fidx_dbfile_release(struct fidx_dbfile_hold *h)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
}

bool fidx_dbfile_reader_holds(int fd)
{
#ifdef _WIN32
	(void)fd;
	return false;
#else
	struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET,
			     .l_start = FIDX_DBFILE_READER_BYTE, .l_len = 1};
	return fd >= 0 && fcntl(fd, F_OFD_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
#endif
}

/* The folder of path (".", "/" or the part before its last slash) into dir. */
static void folder_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, size, ".");
	else
		snprintf(dir, size, "%.*s", (int)(slash - path) + (slash == path), path);
}

/* Whether this process may access path as mode says; else errno says why. */
static bool may(const char *path, int mode)
{
#ifdef _WIN32
	return access(path, mode) == 0;
#else
	return faccessat(AT_FDCWD, path, mode, AT_EACCESS) == 0;
#endif
}

/* Whether the header of the database at path says WAL mode (byte 18 is 2). */
static bool wal_header(const char *path)
{
	unsigned char mode = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return false;
	bool wal = pread(fd, &mode, 1, 18) == 1 && mode == 2;
	close(fd);
	return wal;
}

int fidx_dbfile_why(const char *path, bool write, int wal, struct fidx_error *err)
{
	static const char *const wal_files[] = {"-wal", "-shm", NULL};
	static const char *const journal_files[] = {"-journal", NULL};
	char dir[PATH_MAX], side[PATH_MAX + 16], quoted[PATH_MAX + 16];

	folder_of(path, dir, sizeof(dir));
	if (access(path, F_OK) != 0) {
		if (errno != ENOENT)
			return fidx_fail(err, errno, "cannot open database '%s': %s", fidx_quote(path),
					 strerror(errno));
		if (write && !may(dir, W_OK | X_OK))
			return fidx_fail(err, errno, "cannot create database '%s': %s",
					 fidx_quote(path), strerror(errno));
		return 0;
	}
	bool readable = may(path, R_OK);
	if (!readable || (write && !may(path, W_OK))) {
		return fidx_fail(err, errno, "cannot %s database '%s': %s", readable ? "write" : "read",
				 fidx_quote(path), strerror(errno));
	}
	if (wal < 0)
		wal = wal_header(path);
	for (const char *const *f = wal ? wal_files : journal_files; *f; f++) {
		snprintf(side, sizeof(side), "%s%s", path, *f);
		bool there = access(side, F_OK) == 0;
		if (there ? may(side, write ? R_OK | W_OK : R_OK) : may(dir, W_OK | X_OK))
			continue;
		int e = errno;
		snprintf(quoted, sizeof(quoted), "%s", fidx_quote(side));
		return fidx_fail(err, e, "cannot %s '%s' beside database '%s': %s",
				 there ? (write ? "write" : "read") : "create", quoted, fidx_quote(path),
				 strerror(e));
	}
	return 0;
}

/* The files of a scratch database (fidx_dbfile_temporary()), for on_broken_pipe(). */
static const char *const side_suffixes[] = {"", "-wal", "-shm", "-journal"};
static char scratch_files[4][PATH_MAX + 16];
static volatile sig_atomic_t scratch_made;

/*
 * SIGPIPE (the reader of stdout went away, `fidx dupes /usr | head`): the
 * scratch database is removed, then the process dies of the signal as it
 * would have (async-signal-safe: unlink, signal, raise).  Not armed when
 * SIGPIPE is ignored: then the write fails and the command cleans up.
 */
static void on_broken_pipe(int sig)
{
	if (scratch_made)
		for (size_t i = 0; i < 4; i++)
			unlink(scratch_files[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

char *fidx_dbfile_temporary(const char *prefix)
{
	char *path;
	if (asprintf(&path, "%s/%s-XXXXXX", fidx_tmpdir(), prefix) < 0) {
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
	bool fits = true;
	for (size_t i = 0; i < 4; i++)
		fits &= snprintf(scratch_files[i], sizeof(scratch_files[i]), "%s%s", path,
				 side_suffixes[i]) < (int)sizeof(scratch_files[i]);
	/* An ignored SIGPIPE stays ignored: the write fails with EPIPE, the caller removes. */
	struct sigaction was;
	if (fits && sigaction(SIGPIPE, NULL, &was) == 0 && was.sa_handler != SIG_IGN) {
		struct sigaction sa = {.sa_handler = on_broken_pipe};
		sigemptyset(&sa.sa_mask);
		scratch_made = 1;
		sigaction(SIGPIPE, &sa, NULL);
	}
	return path;
}

void fidx_dbfile_remove(const char *path)
{
	char p[PATH_MAX + 16];
	if (scratch_made && strcmp(path, scratch_files[0]) == 0)
		scratch_made = 0;
	for (size_t i = 0; i < sizeof(side_suffixes) / sizeof(side_suffixes[0]); i++)
		if (snprintf(p, sizeof(p), "%s%s", path, side_suffixes[i]) < (int)sizeof(p))
			unlink(p);
}
