/*
 * race-shim.c - an LD_PRELOAD library that races fidx at the moment it opens
 * a file (tests/e2e/t_races.py).
 *
 * It wraps the open family (open, open64, openat, openat64 and the
 * _FORTIFY_SOURCE entry points __open_2, __open64_2, __openat_2,
 * __openat64_2).  When the last component of the name starts with
 *
 *   "fidx-race-delete"  the file is unlinked just before the real open, as if
 *                       it vanished between the walk's stat and the hashing;
 *   "fidx-race-append"  once the real open succeeded, APPEND is appended to
 *                       the file through a second descriptor, as if a writer
 *                       grew it while fidx reads it.
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
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DELETE_PREFIX "fidx-race-delete"
#define APPEND_PREFIX "fidx-race-append"
#define APPEND "appended while fidx reads\n"

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open_2_fn)(const char *, int);
typedef int (*openat_2_fn)(int, const char *, int);

/* Returns the last component of path (path itself when it has no '/'). */
static const char *last_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
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

/*
 * Does the race asked for by name before the real open of (dirfd, path):
 * unlinks a "delete" file.  errno is preserved.
 */
static void race_before(int dirfd, const char *path, int flags)
{
	int saved = errno;

	if (is_read(flags) && strncmp(last_name(path), DELETE_PREFIX,
				      sizeof(DELETE_PREFIX) - 1) == 0)
		unlinkat(dirfd, path, 0);
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

	if (!is_read(flags) || strncmp(last_name(path), APPEND_PREFIX,
				       sizeof(APPEND_PREFIX) - 1) != 0)
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
