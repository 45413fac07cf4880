/*
 * wrap.c - allocation failure by call site, for the build that
 * tests/e2e/t_allocsites.py drives (the Makefile's $(BUILD)/allocfail/fidx).
 *
 * Design.  That binary is fidx's own objects linked with -Wl,--wrap=F for
 * every allocating function F of libc that fidx's code calls (ALLOC_WRAP in
 * the Makefile: malloc, calloc, realloc, reallocarray, strdup, strndup,
 * asprintf, vasprintf, posix_memalign, aligned_alloc, open_memstream,
 * realpath and getcwd with a NULL buffer, and __getdelim, which getline(3)
 * becomes).
 * The linker sends each call from fidx's objects to __wrap_F here, which
 * forwards to __real_F (libc's).  Calls from inside shared libraries
 * (SQLite, libcrypto, libpq, and libc's own strdup calling malloc) are not
 * redirected, so only fidx's own call sites are seen: the count-based
 * fail-shim of t_failures.py covers the libraries' allocations.
 *
 * A site is the return address of the call (__builtin_return_address(0))
 * as an offset from __executable_start, the first byte of the executable's
 * image: the same for every run of one binary, whatever ASLR does, and for a
 * position-independent executable the address addr2line takes.
 *
 *   FIDX_ALLOC_SITES=FILE        at exit, FILE gets one line per site seen,
 *                                "OFFSET COUNT FUNCTION" (OFFSET in hex), and
 *                                a line "fired OFFSET NTH" when a failure
 *                                below was injected
 *   FIDX_ALLOC_FAIL_SITE=OFF[:N] the Nth call (default the first) from the
 *                                site at offset OFF fails as libc fails for
 *                                want of memory: NULL (or -1, or ENOMEM)
 *                                with errno ENOMEM; every other call succeeds
 *
 * The table of sites is a fixed array of SITE_SLOTS slots, open addressing,
 * each slot claimed with a compare-and-swap and counted with an atomic add:
 * any thread may allocate, nothing here allocates or takes a lock.  Sites
 * beyond the table's room are counted in `lost` and reported, never dropped
 * silently.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

extern const char __executable_start[];

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_reallocarray(void *p, size_t n, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_vasprintf(char **out, const char *fmt, va_list ap);
int __real_posix_memalign(void **out, size_t align, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
FILE *__real_open_memstream(char **buf, size_t *len);
char *__real_realpath(const char *path, char *resolved);
char *__real_getcwd(char *buf, size_t size);
ssize_t __real___getdelim(char **line, size_t *cap, int delim, FILE *f);

#define SITE_SLOTS 8192	/* room for sites: a power of two, far above fidx's ~500 */

struct site {
	_Atomic uintptr_t off;		/* offset of the return address, 0: slot free */
	atomic_ulong calls;		/* calls from it so far */
	const char *fn;			/* the wrapped function's name (set by the claimer) */
};

static struct site sites[SITE_SLOTS];	/* the table, open addressing */
static atomic_ulong lost;		/* calls from sites the table had no room for */
static const char *sites_file;		/* FIDX_ALLOC_SITES, or NULL */
static uintptr_t fail_off;		/* FIDX_ALLOC_FAIL_SITE's offset, 0: none */
static unsigned long fail_nth = 1;	/* which call from it fails (from 1) */
static atomic_int fired;		/* whether the failure was injected */

/* Reads the settings once, before main(); getenv and strtoull allocate nothing. */
__attribute__((constructor)) static void setup(void)
{
	sites_file = getenv("FIDX_ALLOC_SITES");
	const char *s = getenv("FIDX_ALLOC_FAIL_SITE");
	if (s) {
		char *end;
		fail_off = (uintptr_t)strtoull(s, &end, 0);
		if (*end == ':')
			fail_nth = strtoul(end + 1, NULL, 10);
	}
}

/* Writes the table to FIDX_ALLOC_SITES at exit (after main() returns or exit()). */
__attribute__((destructor)) static void report(void)
{
	if (!sites_file)
		return;
	int fd = open(sites_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	for (size_t i = 0; i < SITE_SLOTS; i++) {
		uintptr_t off = atomic_load(&sites[i].off);
		if (off)
			dprintf(fd, "%#jx %lu %s\n", (uintmax_t)off, atomic_load(&sites[i].calls),
				sites[i].fn ? sites[i].fn : "?");
	}
	if (atomic_load(&lost))
		dprintf(fd, "lost %lu\n", atomic_load(&lost));
	if (atomic_load(&fired))
		dprintf(fd, "fired %#jx %lu\n", (uintmax_t)fail_off, fail_nth);
	close(fd);
}

/*
 * Counts one call of fn returning to ret; returns whether this call must fail
 * (errno is then ENOMEM).  Claims a slot for a new site with a CAS; a slot
 * whose name is not yet set by its claimer is still counted.
 */
static int failing(const void *ret, const char *fn)
{
	uintptr_t off = (uintptr_t)ret - (uintptr_t)__executable_start;
	size_t i = (size_t)((off * 0x9e3779b97f4a7c15u) >> 32) & (SITE_SLOTS - 1);
	unsigned long n = 0;
	for (size_t probe = 0; probe < SITE_SLOTS; probe++, i = (i + 1) & (SITE_SLOTS - 1)) {
		uintptr_t seen = atomic_load(&sites[i].off);
		if (!seen) {
			uintptr_t empty = 0;
			if (atomic_compare_exchange_strong(&sites[i].off, &empty, off)) {
				sites[i].fn = fn;
				seen = off;
			} else {
				seen = empty;
			}
		}
		if (seen == off) {
			n = atomic_fetch_add(&sites[i].calls, 1) + 1;
			break;
		}
	}
	if (!n)
		atomic_fetch_add(&lost, 1);
	if (fail_off && off == fail_off && n == fail_nth) {
		atomic_store(&fired, 1);
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

#define SITE __builtin_return_address(0)

/* The wrappers: each fails as its libc function does without memory, or forwards. */

void *__wrap_malloc(size_t size)
{
	return failing(SITE, "malloc") ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return failing(SITE, "calloc") ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return failing(SITE, "realloc") ? NULL : __real_realloc(p, size);
}

void *__wrap_reallocarray(void *p, size_t n, size_t size)
{
	return failing(SITE, "reallocarray") ? NULL : __real_reallocarray(p, n, size);
}

char *__wrap_strdup(const char *s)
{
	return failing(SITE, "strdup") ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return failing(SITE, "strndup") ? NULL : __real_strndup(s, n);
}

int __wrap_vasprintf(char **out, const char *fmt, va_list ap)
{
	return failing(SITE, "vasprintf") ? -1 : __real_vasprintf(out, fmt, ap);
}

int __wrap_asprintf(char **out, const char *fmt, ...)
{
	if (failing(SITE, "asprintf"))
		return -1;
	va_list ap;
	va_start(ap, fmt);
	int r = __real_vasprintf(out, fmt, ap);
	va_end(ap);
	return r;
}

int __wrap_posix_memalign(void **out, size_t align, size_t size)
{
	return failing(SITE, "posix_memalign") ? ENOMEM : __real_posix_memalign(out, align, size);
}

void *__wrap_aligned_alloc(size_t align, size_t size)
{
	return failing(SITE, "aligned_alloc") ? NULL : __real_aligned_alloc(align, size);
}

FILE *__wrap_open_memstream(char **buf, size_t *len)
{
	return failing(SITE, "open_memstream") ? NULL : __real_open_memstream(buf, len);
}

/* realpath allocates only when given no buffer; only that call is a site. */
char *__wrap_realpath(const char *path, char *resolved)
{
	if (!resolved && failing(SITE, "realpath"))
		return NULL;
	return __real_realpath(path, resolved);
}

/* getcwd allocates only when given no buffer; only that call is a site. */
char *__wrap_getcwd(char *buf, size_t size)
{
	if (!buf && failing(SITE, "getcwd"))
		return NULL;
	return __real_getcwd(buf, size);
}

/* getline(3) and getdelim(3) grow the caller's buffer: a site each call. */
ssize_t __wrap___getdelim(char **line, size_t *cap, int delim, FILE *f)
{
	return failing(SITE, "getline") ? -1 : __real___getdelim(line, cap, delim, f);
}
