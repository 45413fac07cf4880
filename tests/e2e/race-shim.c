/*
 * race-shim.c - an LD_PRELOAD library that races fidx at the moment it opens
 * or first reads a file (tests/e2e/t_races.py, t_hashio.py, t_terminal.py).
 *
 * It wraps the open family (open, open64, openat, openat64 and the
 * _FORTIFY_SOURCE entry points __open_2, __open64_2, __openat_2,
 * __openat64_2).  When the last component of the name starts with
 *
 *   "fidx-race-delete"  the file is unlinked just before the real open, as if
 *                       it vanished between the walk's stat and the hashing;
 *   "fidx-race-append"  once the real open succeeded, APPEND is appended to
 *                       the file through a second descriptor, as if a writer
 *                       grew it while fidx reads it;
 *   "fidx-race-hold"    the open waits until the file named by the variable
 *                       FIDX_RACE_RELEASE exists (at most HOLD_MAX_S
 *                       seconds), so that a test decides when a scan can end
 *                       instead of guessing how long hashing takes.
 *
 * It also wraps read() (and its _FORTIFY_SOURCE entry point __read_chk).
 * After a read that returned data from a regular file whose name (the
 * readlink of /proc/self/fd/N) starts with
 *
 *   "fidx-race-modify"   MODIFY overwrites bytes at offset 0 (already read)
 *                        and at the middle (not yet read, unless the file is
 *                        small), clipped to the file's size, so the size
 *                        stays and the mtime moves;
 *   "fidx-race-truncate" the file is cut to half its size;
 *
 * both through a second descriptor, and once per file (device and inode)
 * per process, however many threads or descriptors read it: the first read
 * of the file trips it, the content fidx hashes is then torn.
 *
 * Every other call goes straight to the next definition (dlsym RTLD_NEXT).
 * Opens for writing are left alone, so only a reader (fidx) trips the races.
 * The mode argument is variadic: it is read only when the flags need it
 * (O_CREAT, O_TMPFILE), as open(2) does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT, O_TMPFILE; the build rule does not define it */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define DELETE_PREFIX "fidx-race-delete"
#define APPEND_PREFIX "fidx-race-append"
#define APPEND "appended while fidx reads\n"
#define HOLD_PREFIX "fidx-race-hold"
#define HOLD_MAX_S 120 /* a test that never releases fails by its timeout, not a hang */
#define MODIFY_PREFIX "fidx-race-modify"
#define TRUNCATE_PREFIX "fidx-race-truncate"
#define MODIFY "MODIFIED WHILE FIDX READS"
#define MAX_RACED 256 /* files raced by read per process; later ones are left alone */

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open_2_fn)(const char *, int);
typedef int (*openat_2_fn)(int, const char *, int);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*read_chk_fn)(int, void *, size_t, size_t);

/* The files already raced by a read, guarded by raced_lock. */
static pthread_mutex_t raced_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	dev_t dev;
	ino_t ino;
} raced[MAX_RACED];
static size_t nraced;

/* Returns the last component of path (path itself when it has no '/'). */
static const char *last_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Returns whether name starts with prefix. */
static bool starts_with(const char *name, const char *prefix)
{
	return strncmp(name, prefix, strlen(prefix)) == 0;
}

/* Returns whether flags need the mode argument of open(2). */
static int needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* Returns whether the open is a read-only one (the only kind raced). */
static int is_read(int flags)
{
	return (flags & O_ACCMODE) == O_RDONLY;
}

/* Returns the next definition of name, or NULL (errno ENOSYS) if there is none. */
static void *next(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);

	if (!fn)
		errno = ENOSYS;
	return fn;
}

/* Waits until the file FIDX_RACE_RELEASE names exists, or HOLD_MAX_S seconds. */
static void hold(void)
{
	const char *release = getenv("FIDX_RACE_RELEASE");
	struct timespec tick = {0, 10000000L};

	for (int i = 0; release && i < HOLD_MAX_S * 100; i++) {
		if (access(release, F_OK) == 0)
			return;
		nanosleep(&tick, NULL);
	}
}

/*
 * Does the race asked for by name before the real open of (dirfd, path):
 * unlinks a "delete" file, holds a "hold" one.  errno is preserved.
 */
static void race_before(int dirfd, const char *path, int flags)
{
	int saved = errno;

	if (is_read(flags) && starts_with(last_name(path), DELETE_PREFIX))
		unlinkat(dirfd, path, 0);
	if (is_read(flags) && starts_with(last_name(path), HOLD_PREFIX))
		hold();
	errno = saved;
}

/*
 * Does the race asked for by name after a successful real open: appends to
 * an "append" file through its own descriptor, opened with the real openat
 * (so that this shim does not see it).  errno is preserved.
 */
static void race_after(int dirfd, const char *path, int flags)
{
	openat_fn real;
	int saved = errno, fd;

	if (!is_read(flags) || !starts_with(last_name(path), APPEND_PREFIX))
		return;
	real = (openat_fn)next("openat");
	if (real) {
		fd = real(dirfd, path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = write(fd, APPEND, sizeof(APPEND) - 1);

			(void)n; /* a failed append shows in the test as no change */
			close(fd);
		}
	}
	errno = saved;
}

/*
 * The common body of the openat-like wrappers: race, open through the next
 * fn_name (with mode, or without it for a fortified entry point), race again.
 */
static int shim_openat(const char *fn_name, bool fortified, int dirfd, const char *path,
		       int flags, mode_t mode)
{
	void *real = next(fn_name);
	int fd;

	if (!real)
		return -1;
	race_before(dirfd, path, flags);
	if (fortified)
		fd = ((openat_2_fn)real)(dirfd, path, flags);
	else
		fd = ((openat_fn)real)(dirfd, path, flags, mode);
	if (fd >= 0)
		race_after(dirfd, path, flags);
	return fd;
}

/* Like shim_openat() for the functions without a directory argument. */
static int shim_open(const char *fn_name, bool fortified, const char *path, int flags,
		     mode_t mode)
{
	void *real = next(fn_name);
	int fd;

	if (!real)
		return -1;
	race_before(AT_FDCWD, path, flags);
	if (fortified)
		fd = ((open_2_fn)real)(path, flags);
	else
		fd = ((open_fn)real)(path, flags, mode);
	if (fd >= 0)
		race_after(AT_FDCWD, path, flags);
	return fd;
}

/* Reads the optional mode argument that follows flags. */
#define MODE_ARG(flags, mode)                        \
	do {                                         \
		va_list ap;                          \
		va_start(ap, flags);                 \
		mode = needs_mode(flags) ? (mode_t)va_arg(ap, int) : 0; \
		va_end(ap);                          \
	} while (0)

/* open(2), raced. */
int open(const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return shim_open("open", false, path, flags, mode);
}

/* open64(), raced. */
int open64(const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return shim_open("open64", false, path, flags, mode);
}

/* openat(2), raced. */
int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return shim_openat("openat", false, dirfd, path, flags, mode);
}

/* openat64(), raced. */
int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return shim_openat("openat64", false, dirfd, path, flags, mode);
}

/* The _FORTIFY_SOURCE entry points take no mode (they reject O_CREAT). */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/* __open_2(), raced. */
int __open_2(const char *path, int flags)
{
	return shim_open("__open_2", true, path, flags, 0);
}

/* __open64_2(), raced. */
int __open64_2(const char *path, int flags)
{
	return shim_open("__open64_2", true, path, flags, 0);
}

/* __openat_2(), raced. */
int __openat_2(int dirfd, const char *path, int flags)
{
	return shim_openat("__openat_2", true, dirfd, path, flags, 0);
}

/* __openat64_2(), raced. */
int __openat64_2(int dirfd, const char *path, int flags)
{
	return shim_openat("__openat64_2", true, dirfd, path, flags, 0);
}

/*
 * Marks the file st as raced; returns false when it already was (or when the
 * table is full).  The caller holds raced_lock.
 */
static bool mark_raced(const struct stat *st)
{
	for (size_t i = 0; i < nraced; i++)
		if (raced[i].dev == st->st_dev && raced[i].ino == st->st_ino)
			return false;
	if (nraced == MAX_RACED)
		return false;
	raced[nraced].dev = st->st_dev;
	raced[nraced].ino = st->st_ino;
	nraced++;
	return true;
}

/* Overwrites MODIFY at offset off of the file wfd of size bytes, clipped to its end. */
static void overwrite(int wfd, off_t off, off_t size)
{
	size_t n = sizeof(MODIFY) - 1;

	if (off >= size)
		return;
	if ((off_t)n > size - off)
		n = (size_t)(size - off);
	ssize_t w = pwrite(wfd, MODIFY, n, off);
	(void)w; /* a failed write shows in the test as no change */
}

/*
 * Does the race asked for by the name of fd after a read returned data from
 * it: overwrites a "modify" file or halves a "truncate" file, through a
 * descriptor of its own (opened with the real openat on /proc/self/fd/N, so
 * that this shim does not see it), once per file.
 */
static void race_fd(int fd)
{
	char link[64], path[PATH_MAX];
	struct stat st;
	ssize_t len;
	bool modify;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, sizeof(path) - 1);
	if (len <= 0)
		return;
	path[len] = '\0';
	modify = starts_with(last_name(path), MODIFY_PREFIX);
	if (!modify && !starts_with(last_name(path), TRUNCATE_PREFIX))
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	openat_fn real = (openat_fn)next("openat");
	if (!real)
		return;
	pthread_mutex_lock(&raced_lock);
	if (mark_raced(&st)) {
		int wfd = real(AT_FDCWD, link, O_WRONLY | O_CLOEXEC);

		if (wfd >= 0) {
			if (modify) {
				overwrite(wfd, 0, st.st_size);
				overwrite(wfd, st.st_size / 2, st.st_size);
			} else {
				int r = ftruncate(wfd, st.st_size / 2);

				(void)r; /* a failed truncation shows in the test as no change */
			}
			close(wfd);
		}
	}
	pthread_mutex_unlock(&raced_lock);
}

/* race_fd() with errno preserved, for the read wrappers. */
static void race_read(int fd)
{
	int saved = errno;

	race_fd(fd);
	errno = saved;
}

/* read(2), raced after it returned data. */
ssize_t read(int fd, void *buf, size_t count)
{
	read_fn real = (read_fn)next("read");
	ssize_t n;

	if (!real)
		return -1;
	n = real(fd, buf, count);
	if (n > 0)
		race_read(fd);
	return n;
}

/* The _FORTIFY_SOURCE entry point of read(). */
ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen);

/* __read_chk(), raced after it returned data. */
ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen)
{
	read_chk_fn real = (read_chk_fn)next("__read_chk");
	ssize_t n;

	if (!real)
		return -1;
	n = real(fd, buf, count, buflen);
	if (n > 0)
		race_read(fd);
	return n;
}
