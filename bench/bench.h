/*
 * bench.h - what the measurement programs of bench/ share: dying with a
 * one-line message, allocating or dying, the median of a set of runs.
 *
 * Each program is a single .c file built by the Makefile's bench rule, so
 * these are static functions in a header rather than a library; a program
 * that does not use one of them gets no warning for it.
 */
#ifndef FIDX_BENCH_H
#define FIDX_BENCH_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#endif /* FIDX_BENCH_H */
