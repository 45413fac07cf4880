/*
 * hashkat.c - the hasher's known answers on Windows: the shared hasher
 * (src/core/hash.c) over the CNG backend (src/core/hash_cng.c), built with
 * MinGW-w64 and run under Wine or Windows, where there is no cmocka.
 *
 *   hashkat.exe           every vector of tests/core/hash_vectors.h (the ones
 *                         tests/core/test_hash.c checks on Linux), every way
 *                         of feeding it, through the hasher (all digests at
 *                         once) and through each digester alone; prints one
 *                         line per mismatch and a summary, exits 1 on any
 *   hashkat.exe FILE...   each file's digests, read as a Windows reader reads
 *                         (CreateFile, ReadFile in 1 MiB blocks, the hasher's
 *                         reset/update/final), one line per file:
 *                         "md5 sha1 sha256 sha512 xxh128 FILE"; exits 1 when a
 *                         file cannot be read
 *
 * tests/windows/crypto-check builds it, runs both forms and compares the second with
 * coreutils' md5sum ... sha512sum and xxhsum -H2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "core/hash_vectors.h"
#include "hash.h"

#define ALL_DIGESTS ((1u << FIDX_NDIGESTS) - 1)
#define BLOCK (1024 * 1024) /* bytes a ReadFile asks for */

/* Compares digest d of a vector with its known answer; prints a mismatch.  Returns 0 or 1. */
static int check(int v, int way, const char *api, enum fidx_digest d, const uint8_t *got)
{
	char hex[2 * FIDX_DIGEST_MAX + 1];

	hash_vector_hex(got, fidx_digest_len(d), hex);
	if (strcmp(hex, hash_vectors[v].hex[d]) == 0)
		return 0;
	printf("not ok - vector %d, way %d, %s %s: %s, expected %s\n", v, way, api,
	       fidx_digest_name(d), hex, hash_vectors[v].hex[d]);
	return 1;
}

/* Checks every vector, every way, through the hasher and the digesters.  Returns the failures. */
static int known_answers(void)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	struct fidx_hasher *h = fidx_hasher_create(ALL_DIGESTS);
	struct fidx_digester *g[FIDX_XXH128] = {0};
	int failed = 0, checked = 0;

	if (!h) {
		printf("not ok - fidx_hasher_create: %s\n", strerror(errno));
		return 1;
	}
	for (int d = 0; d < FIDX_XXH128; d++)
		if (!(g[d] = fidx_digester_create(d))) {
			printf("not ok - fidx_digester_create(%s): %s\n", fidx_digest_name(d),
			       strerror(errno));
			return 1;
		}
	for (int v = 0; v < HASH_NVECTORS; v++) {
		size_t len;
		unsigned char *m = hash_vector_message(&hash_vectors[v], &len);

		if (!m) {
			printf("not ok - out of memory\n");
			return 1;
		}
		for (int way = 0; way < HASH_VECTOR_WAYS; way++) {
			if (hash_vector_hasher(h, way, m, len, out) < 0) {
				printf("not ok - vector %d, way %d: hasher: %s\n", v, way,
				       strerror(errno));
				failed++;
				continue;
			}
			for (int d = 0; d < FIDX_NDIGESTS; d++, checked++)
				failed += check(v, way, "hasher", d, out[d]);
			for (int d = 0; d < FIDX_XXH128; d++, checked++) {
				if (hash_vector_digester(g[d], way, m, len, out[d]) < 0) {
					printf("not ok - vector %d, way %d: digester: %s\n", v, way,
					       strerror(errno));
					failed++;
					continue;
				}
				failed += check(v, way, "digester", d, out[d]);
			}
		}
		free(m);
	}
	/* A reset right after a final, nothing added: the empty message. */
	for (int d = 0; d < FIDX_XXH128; d++, checked++) {
		if (fidx_digester_final(g[d], out[d]) < 0 || fidx_digester_reset(g[d]) < 0 ||
		    fidx_digester_final(g[d], out[d]) < 0) {
			printf("not ok - %s: reset after final: %s\n", fidx_digest_name(d),
			       strerror(errno));
			failed++;
			continue;
		}
		failed += check(HV_EMPTY, 0, "digester reset after final", d, out[d]);
	}
	for (int d = 0; d < FIDX_XXH128; d++)
		fidx_digester_destroy(g[d]);
	fidx_hasher_destroy(h);
	printf("%s - %d digests of %d vectors in %d ways, on %s\n", failed ? "not ok" : "ok",
	       checked, HASH_NVECTORS, HASH_VECTOR_WAYS, fidx_crypto_library());
	return failed;
}

/* Hashes the file at path with h, reading 1 MiB blocks, and prints its line.  Returns 0, or -1. */
static int hash_file(struct fidx_hasher *h, unsigned char *buf, const char *path)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	char hex[2 * FIDX_DIGEST_MAX + 1];
	HANDLE f = CreateFileA(path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
			       FILE_FLAG_SEQUENTIAL_SCAN, NULL);
	DWORD n;
	int ok;

	if (f == INVALID_HANDLE_VALUE) {
		fprintf(stderr, "hashkat: cannot open '%s': error %lu\n", path, GetLastError());
		return -1;
	}
	ok = fidx_hasher_reset(h) == 0;
	while (ok && (ok = ReadFile(f, buf, BLOCK, &n, NULL)) && n)
		ok = fidx_hasher_update(h, buf, n) == 0;
	ok = ok && fidx_hasher_final(h, out) == 0;
	CloseHandle(f);
	if (!ok) {
		fprintf(stderr, "hashkat: cannot hash '%s'\n", path);
		return -1;
	}
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		hash_vector_hex(out[d], fidx_digest_len(d), hex);
		printf("%s ", hex);
	}
	printf("%s\n", path);
	return 0;
}

/* Checks the known answers, or hashes the files named. */
int main(int argc, char **argv)
{
	struct fidx_hasher *h;
	unsigned char *buf;
	int status = 0;

	if (fidx_crypto_start() < 0) {
		printf("not ok - fidx_crypto_start: %s\n", strerror(errno));
		return 1;
	}
	if (argc < 2)
		return known_answers() ? 1 : 0;
	h = fidx_hasher_create(ALL_DIGESTS);
	buf = malloc(BLOCK);
	if (!h || !buf) {
		fprintf(stderr, "hashkat: out of memory\n");
		return 1;
	}
	for (int i = 1; i < argc; i++)
		if (hash_file(h, buf, argv[i]) < 0)
			status = 1;
	free(buf);
	fidx_hasher_destroy(h);
	return status;
}
