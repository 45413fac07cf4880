/*
 * bench.h - what the measurement programs of bench/ share: dying with a
 * one-line message, allocating or dying, the median of a set of runs, the
 * monotonic clock, dropping the page cache, opening a file as a hash worker
 * does.
 *
 * Each program is a single .c file built by the Makefile's bench rule, so
 * these are static functions in a header rather than a library; a program
 * that does not use one of them gets no warning for it.
 */
#ifndef FIDX_BENCH_H
#define FIDX_BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Prints "PROGRAM: <message>" on stderr and exits with status 2. */
__attribute__((noreturn, format(printf, 1, 2), unused))
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* malloc() that dies on failure (a size of 0 allocates a byte). */
__attribute__((unused))
static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory");
	return p;
}

/* qsort() order of doubles, ascending. */
__attribute__((unused))
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Returns the median of the n (>= 1) values of v, which it leaves as they are. */
__attribute__((unused))
static double median(const double *v, size_t n)
{
	double *s = xmalloc(n * sizeof(*s));
	double m;

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

/* The flags a hash worker opens a file with (src/core/hashio.c), but O_NOATIME. */
#define OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/* Opens path as a hash worker does (O_NOATIME when the kernel allows it), or dies. */
__attribute__((unused))
static int open_file(const char *path)
{
	int fd = open(path, OPEN_FLAGS | O_NOATIME);

	if (fd < 0 && errno == EPERM)
		fd = open(path, OPEN_FLAGS);
	if (fd < 0)
		die("cannot open '%s': %s", path, strerror(errno));
	return fd;
}

/* Seconds of the monotonic clock. */
__attribute__((unused))
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Writes every dirty page out, then drops the caches that what names ("1":
 * the page cache, "3": dentries and inodes too).  Root only: dies otherwise.
 */
__attribute__((unused))
static void drop_caches(const char *what)
{
	size_t len = strlen(what);
	int fd;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, what, len) != (ssize_t)len)
		die("cannot drop caches (run as root): %s", strerror(errno));
	close(fd);
}

#endif /* FIDX_BENCH_H */
