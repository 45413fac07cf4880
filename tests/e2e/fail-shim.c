/*
 * fail-shim.c - a test-only LD_PRELOAD that makes fidx run out of memory at
 * a chosen point, for tests/e2e/t_failures.py.
 *
 *   FIDX_FAIL_ALLOC=N[:K]   allocations number N .. N+K-1 (counted from 1 over
 *                           every thread) return NULL with errno ENOMEM; K
 *                           defaults to "all the rest" (memory gone for good)
 *   FIDX_FAIL_COUNT=FILE    at exit, write the number of allocations to FILE
 *
 * It interposes malloc, calloc, realloc, posix_memalign, aligned_alloc and
 * memalign (glibc's strdup and the rest call malloc through the same symbol,
 * and so do SQLite and OpenSSL) and hands the others to glibc's own
 * __libc_* functions, so it needs no dlsym (which allocates).  free is not
 * touched: every block still comes from glibc's allocator.  It cannot run
 * with ASan, which has its own allocator.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);

static atomic_ulong count;          /* allocations so far */
static unsigned long fail_from;     /* the first to fail, 0: none */
static unsigned long fail_upto;     /* the last to fail */
static const char *count_file;      /* FIDX_FAIL_COUNT */

/* Reads the settings once, before main(). */
__attribute__((constructor)) static void setup(void)
{
	const char *s = getenv("FIDX_FAIL_ALLOC");
	if (s) {
		char *end;
		fail_from = strtoul(s, &end, 10);
		fail_upto = *end == ':' ? fail_from + strtoul(end + 1, NULL, 10) - 1 : (unsigned long)-1;
	}
	count_file = getenv("FIDX_FAIL_COUNT");
}

/* Writes the count at exit, when asked. */
__attribute__((destructor)) static void report(void)
{
	if (!count_file)
		return;
	FILE *f = fopen(count_file, "w");
	if (f) {
		fprintf(f, "%lu\n", atomic_load(&count));
		fclose(f);
	}
}

/* Counts one allocation; returns whether it must fail. */
static int failing(void)
{
	unsigned long n = atomic_fetch_add(&count, 1) + 1;
	if (fail_from && n >= fail_from && n <= fail_upto) {
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

void *malloc(size_t size)
{
	return failing() ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	return failing() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	return failing() ? NULL : __libc_realloc(p, size);
}

void *memalign(size_t align, size_t size)
{
	return failing() ? NULL : __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size)
{
	return failing() ? NULL : __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	if (failing())
		return ENOMEM;
	void *p = __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}
