/*
 * hash.c - every requested digest of a file in one read pass (hash.h): the
 * hasher, shared by both crypto backends.
 *
 * A hasher holds, for one hash worker, everything that hashing a file needs,
 * made once in fidx_hasher_create() and reused for every file:
 *
 *	mask       which digests to compute (bits 1u << enum fidx_digest)
 *	dg[d]      one digester per selected cryptographic digest: the crypto
 *	           backend's (hash_openssl.c, EVP; hash_cng.c, CNG)
 *	xxh        one XXH3 streaming state, when XXH128 is selected
 *	buf        the read buffer: FIDX_HASH_READ_SIZE bytes, page-aligned
 *
 * Hashing a file re-initialises each digest in place (fidx_digester_reset(),
 * XXH3_128bits_reset()), then reads the file block by block and feeds every
 * block to every selected digest while the block is still in cache.  The
 * size the walk saw ends the reading: a small file costs one read(), not a
 * second one to meet end of file (the caller's fstat() afterwards tells
 * whether the file grew).  The reset/update/final steps are public too, for
 * blocks that another thread read (hashio.c) or that a Windows reader read
 * from a handle.  fidx allocates nothing per file.  (OpenSSL 3.0 itself
 * frees and re-allocates a digest's small provider state at every reset;
 * reset, one-byte update and final together measured ~130 ns per digest,
 * against several microseconds for the open, read and close of a file.)
 * The read size is the one measured in docs/BENCHMARKS.md (section "read
 * size").
 *
 * XXH128 is stored in its canonical form (big-endian bytes), the form that
 * `xxh128sum` prints, so hex(xxh128) in the database matches that tool.
 * Windows has no libxxhash: there the header is compiled in (XXH_INLINE_ALL).
 *
 * The digests' names and lengths (record.h) and digest lists are here too,
 * so that hashing, this file and its backend, needs nothing else of fidx.
 */
#include "hash.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h> /* on Windows the whole library (XXH_INLINE_ALL, mk/windows.mk) */

/* Alignment of the read buffer: a page, so reads can be served page by page. */
#define READ_ALIGN 4096

/* The cryptographic digests are the ones before FIDX_XXH128. */
#define NCRYPTO FIDX_XXH128

struct fidx_hasher {
	unsigned mask;                     /* digests computed, bits 1u << enum fidx_digest */
	struct fidx_digester *dg[NCRYPTO]; /* each digest's state, NULL when not in mask */
	XXH3_state_t *xxh;                 /* XXH3 state, NULL when XXH128 is not in mask */
	unsigned char *buf;                /* read buffer, FIDX_HASH_READ_SIZE bytes */
};

/* Allocates the page-aligned read buffer.  Returns NULL (ENOMEM) on failure. */
static unsigned char *buf_alloc(void)
{
#ifdef _WIN32
	return _aligned_malloc(FIDX_HASH_READ_SIZE, READ_ALIGN); /* no C11 aligned_alloc */
#else
	return aligned_alloc(READ_ALIGN, FIDX_HASH_READ_SIZE);
#endif
}

/* Frees what buf_alloc() returned.  NULL is allowed. */
static void buf_free(unsigned char *buf)
{
#ifdef _WIN32
	_aligned_free(buf);
#else
	free(buf);
#endif
}

/*
 * Makes a hasher for mask.  Returns NULL with errno EINVAL for a bit that
 * names no digest, else fidx_digester_create()'s errno (EOPNOTSUPP, ENOMEM).
 */
struct fidx_hasher *fidx_hasher_create(unsigned mask)
{
	struct fidx_hasher *h;

	if (mask >> FIDX_NDIGESTS) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->mask = mask;
	h->buf = buf_alloc();
	if (!h->buf)
		goto fail;
	for (int d = 0; d < NCRYPTO; d++)
		if ((mask & (1u << d)) && !(h->dg[d] = fidx_digester_create(d)))
			goto fail;
	if (mask & (1u << FIDX_XXH128)) {
		h->xxh = XXH3_createState();
		if (!h->xxh) {
			errno = ENOMEM;
			goto fail;
		}
	}
	return h;

fail:
	fidx_hasher_destroy(h);
	return NULL;
}

/* Frees a hasher and everything it holds, keeping errno.  NULL is allowed. */
void fidx_hasher_destroy(struct fidx_hasher *h)
{
	int saved = errno;

	if (!h)
		return;
	for (int d = 0; d < NCRYPTO; d++)
		fidx_digester_destroy(h->dg[d]);
	XXH3_freeState(h->xxh);
	buf_free(h->buf);
	free(h);
	errno = saved;
}

/* Starts a new message in every digest of h (hash.h). */
int fidx_hasher_reset(struct fidx_hasher *h)
{
	for (int d = 0; d < NCRYPTO; d++)
		if (h->dg[d] && fidx_digester_reset(h->dg[d]) < 0)
			return -1;
	if (h->xxh && XXH3_128bits_reset(h->xxh) != XXH_OK) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Adds a block to every digest of h (hash.h). */
int fidx_hasher_update(struct fidx_hasher *h, const void *data, size_t len)
{
	for (int d = 0; d < NCRYPTO; d++)
		if (h->dg[d] && fidx_digester_update(h->dg[d], data, len) < 0)
			return -1;
	if (h->xxh && XXH3_128bits_update(h->xxh, data, len) != XXH_OK) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Writes every digest of h's mask into out[d] (hash.h). */
int fidx_hasher_final(struct fidx_hasher *h, uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX])
{
	for (int d = 0; d < NCRYPTO; d++)
		if (h->dg[d] && fidx_digester_final(h->dg[d], out[d]) < 0)
			return -1;
	if (h->xxh) {
		XXH128_canonical_t canon;

		XXH128_canonicalFromHash(&canon, XXH3_128bits_digest(h->xxh));
		memcpy(out[FIDX_XXH128], canon.digest, sizeof(canon.digest));
	}
	return 0;
}

/*
 * Hashes fd (see hash.h).  read() is retried on EINTR; a short read is simply
 * a smaller block.  *bytes is set on failure too, to the bytes read before
 * it.  Digests outside the mask are not written.  Returns 0, -1 with the
 * read's errno, or -2 when the crypto library failed (out of memory: its
 * built-in digests fail on nothing else), which is no property of the file.
 */
int fidx_hash_fd(struct fidx_hasher *h, int fd, uint64_t expect,
		 uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX], uint64_t *bytes,
		 atomic_uint_least64_t *progress, atomic_bool *cancel)
{
	uint64_t total = 0;
	int ret = -1;
	ssize_t n;

	if (fidx_hasher_reset(h) < 0)
		goto hasher_fail;
	while (total < expect) {
		uint64_t left = expect - total;
		if (cancel && atomic_load_explicit(cancel, memory_order_relaxed)) {
			errno = ECANCELED;
			goto out;
		}
		n = read(fd, h->buf, left < FIDX_HASH_READ_SIZE ? (size_t)left : FIDX_HASH_READ_SIZE);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto out;
		}
		if (n == 0)
			break;
		if (fidx_hasher_update(h, h->buf, (size_t)n) < 0)
			goto hasher_fail;
		total += (uint64_t)n;
		if (progress)
			atomic_fetch_add_explicit(progress, (uint64_t)n, memory_order_relaxed);
	}
	if (fidx_hasher_final(h, out) < 0)
		goto hasher_fail;
	ret = 0;
	goto out;
hasher_fail:
	ret = -2;
out:
	*bytes = total;
	return ret;
}

/* Each digest's name and length (record.h). */
static const struct {
	const char *name; /* lower case, as the database's column */
	size_t len;       /* bytes */
} digests[FIDX_NDIGESTS] = {
	[FIDX_MD5] = {"md5", 16},
	[FIDX_SHA1] = {"sha1", 20},
	[FIDX_SHA256] = {"sha256", 32},
	[FIDX_SHA512] = {"sha512", 64},
	[FIDX_XXH128] = {"xxh128", 16},
};

/* Returns the length in bytes of digest d. */
size_t fidx_digest_len(enum fidx_digest d)
{
	return digests[d].len;
}

/* Returns the lower-case name of digest d. */
const char *fidx_digest_name(enum fidx_digest d)
{
	return digests[d].name;
}

/* Returns the digest called name, or -1. */
int fidx_digest_parse(const char *name)
{
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (strcmp(name, digests[d].name) == 0)
			return d;
	return -1;
}

/*
 * Parses "none" or a comma-separated list of digest names (duplicates
 * allowed).  Returns 0 and sets *mask, or -1 with errno EINVAL for an unknown
 * name or an empty item ("", "md5,", "md5,,sha1"); *mask is then unchanged.
 */
int fidx_digest_list_parse(const char *list, unsigned *mask)
{
	unsigned m = 0;
	char name[8]; /* longer than every digest name */

	if (strcmp(list, "none") == 0) {
		*mask = 0;
		return 0;
	}
	for (const char *p = list;; p++) {
		size_t len = strcspn(p, ",");
		int d;

		if (len == 0 || len >= sizeof(name))
			goto invalid;
		memcpy(name, p, len);
		name[len] = '\0';
		d = fidx_digest_parse(name);
		if (d < 0)
			goto invalid;
		m |= 1u << d;
		p += len;
		if (*p == '\0')
			break;
	}
	*mask = m;
	return 0;

invalid:
	errno = EINVAL;
	return -1;
}
