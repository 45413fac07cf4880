/*
 * read-hash.c - read and hash throughput of one file on Windows: ReadFile in
 * 1 MiB blocks into the hasher over the CNG backend (src/core/hash.c,
 * src/core/hash_cng.c), with and without FILE_FLAG_SEQUENTIAL_SCAN.
 *
 *   read-hash.exe FILE [RUNS]
 *
 * For each open flag (none, FILE_FLAG_SEQUENTIAL_SCAN) and each digest set
 * (none: the read alone; SHA-256; all five at once), the file is read once
 * to warm the cache and then RUNS times (default 5); the best and the median
 * run are printed in MiB/s, one line each.  Built and run under Wine by
 * tests/windows/crypto-check --bench; under Wine, the numbers are Wine's (its
 * ReadFile over read(), its own bcrypt.dll), not Windows'.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "hash.h"

#define BLOCK (1024 * 1024) /* bytes a ReadFile asks for */
#define MAX_RUNS 64

/* Reads path whole with the open flags given, feeding h unless NULL.  Returns its bytes, or -1. */
static long long read_file(const char *path, DWORD flags, struct fidx_hasher *h,
			   unsigned char *buf)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	HANDLE f = CreateFileA(path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, flags,
			       NULL);
	long long total = 0;
	DWORD n;
	int ok;

	if (f == INVALID_HANDLE_VALUE)
		return -1;
	ok = !h || fidx_hasher_reset(h) == 0;
	while (ok && (ok = ReadFile(f, buf, BLOCK, &n, NULL)) && n) {
		total += n;
		ok = !h || fidx_hasher_update(h, buf, n) == 0;
	}
	ok = ok && (!h || fidx_hasher_final(h, out) == 0);
	CloseHandle(f);
	return ok ? total : -1;
}

/* Orders doubles, for qsort(). */
static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Times runs reads of path after a warm one; prints the best and median MiB/s.  Returns 0 or -1. */
static int measure(const char *path, DWORD flags, const char *flag_name, unsigned mask,
		   const char *mask_name, int runs, unsigned char *buf)
{
	struct fidx_hasher *h = mask ? fidx_hasher_create(mask) : NULL;
	double rate[MAX_RUNS];
	LARGE_INTEGER freq, t0, t1;
	long long bytes;

	if (mask && !h)
		return -1;
	QueryPerformanceFrequency(&freq);
	if (read_file(path, flags, h, buf) < 0)
		goto fail;
	for (int i = 0; i < runs; i++) {
		QueryPerformanceCounter(&t0);
		bytes = read_file(path, flags, h, buf);
		QueryPerformanceCounter(&t1);
		if (bytes < 0)
			goto fail;
		rate[i] = (double)bytes / (1024.0 * 1024.0) /
			  ((double)(t1.QuadPart - t0.QuadPart) / (double)freq.QuadPart);
	}
	qsort(rate, (size_t)runs, sizeof(rate[0]), by_value);
	printf("%-25s %-8s best %8.1f MiB/s  median %8.1f MiB/s\n", flag_name, mask_name,
	       rate[runs - 1], rate[runs / 2]);
	fidx_hasher_destroy(h);
	return 0;
fail:
	fidx_hasher_destroy(h);
	return -1;
}

/* Measures every flag and digest set on the file named. */
int main(int argc, char **argv)
{
	static const struct {
		DWORD flags;
		const char *name;
	} opens[] = {
		{FILE_ATTRIBUTE_NORMAL, "no flag"},
		{FILE_FLAG_SEQUENTIAL_SCAN, "FILE_FLAG_SEQUENTIAL_SCAN"},
	};
	static const struct {
		unsigned mask;
		const char *name;
	} sets[] = {
		{0, "read"},
		{1u << FIDX_SHA256, "sha256"},
		{(1u << FIDX_NDIGESTS) - 1, "all five"},
	};
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	unsigned char *buf = malloc(BLOCK);

	if (argc < 2 || runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr, "usage: read-hash FILE [RUNS (1-%d)]\n", MAX_RUNS);
		return 2;
	}
	if (!buf || fidx_crypto_start() < 0) {
		fprintf(stderr, "read-hash: cannot start: %s\n", strerror(errno));
		return 1;
	}
	printf("%s, %s, ReadFile of %d KiB\n", argv[1], fidx_crypto_library(), BLOCK / 1024);
	for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++)
		for (size_t o = 0; o < sizeof(opens) / sizeof(opens[0]); o++)
			if (measure(argv[1], opens[o].flags, opens[o].name, sets[s].mask,
				    sets[s].name, runs, buf) < 0) {
				fprintf(stderr, "read-hash: cannot read '%s'\n", argv[1]);
				return 1;
			}
	free(buf);
	return 0;
}
