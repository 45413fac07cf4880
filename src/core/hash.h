/*
 * hash.h - every requested digest of a file in one read pass.
 *
 * A fidx_hasher is one thread's set of digest contexts and read buffer: it
 * is made once per hash worker and reused for every file, so that no context
 * or buffer is allocated per file.  Cryptographic digests use OpenSSL's EVP
 * interface, XXH128 uses libxxhash's XXH3 streaming API.
 */
#ifndef FIDX_HASH_H
#define FIDX_HASH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

/*
 * Read size for hashing, chosen by measurement (docs/BENCHMARKS.md, "read
 * size"): the smallest size within 3% of the best CPU cost per byte with a
 * warm cache, and faster than 256 KiB on cold 1 MiB files.
 */
#define FIDX_HASH_READ_SIZE (64 * 1024)

struct fidx_hasher;

/*
 * Sets libcrypto up (its default context) before anything uses it: made
 * lazily inside a later call, a failure there (out of memory) leaves OpenSSL
 * 3.0 unusable, a crash rather than an error.  Called by
 * fidx_hasher_create() and the sealer; a program calls it first.  Returns
 * 0, or -1 (ENOMEM).
 */
int fidx_crypto_start(void);

/*
 * Makes a hasher for the digests in mask (bits 1u << enum fidx_digest).
 * Returns NULL with errno set on failure.
 */
struct fidx_hasher *fidx_hasher_create(unsigned mask);

/* Frees a hasher.  NULL is allowed. */
void fidx_hasher_destroy(struct fidx_hasher *h);

/*
 * Starts a new message in every digest of h.  Returns 0, or -1 with errno
 * ENOMEM (libcrypto failed: for its built-in digests, only out of memory).
 */
int fidx_hasher_reset(struct fidx_hasher *h);

/* Adds len bytes at data to every digest of h.  Returns 0, or -1 (ENOMEM). */
int fidx_hasher_update(struct fidx_hasher *h, const void *data, size_t len);

/*
 * Writes every digest of h's mask into out[d] (the layout of struct
 * fidx_record); the message ends.  Returns 0, or -1 (ENOMEM).
 */
int fidx_hasher_final(struct fidx_hasher *h, uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX]);

/*
 * Reads fd from its current offset and computes every digest of the
 * hasher's mask into out[d].  expect is the file's size as the walk saw it
 * (UINT64_MAX when unknown): no more than expect bytes are read, and reading
 * stops there without the read that would return end of file, so the caller
 * must check the size afterwards (fstat) to know the file did not grow; a
 * file found shorter is read to its end.  *bytes receives the number of bytes read; when
 * progress is not NULL, every read's length is also added to it as the read
 * completes (for a progress line that moves within a huge file).  When cancel
 * is not NULL it is checked before every read, so that a huge file does not
 * hold up an interrupted scan.  Returns 0; -1 with errno set when a read
 * failed, or ECANCELED when cancel became true (out is then undefined); or
 * -2 when the digests could not be computed (libcrypto out of memory): no
 * fault of the file, to be treated as the caller's own failure.
 */
int fidx_hash_fd(struct fidx_hasher *h, int fd, uint64_t expect,
		 uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX], uint64_t *bytes,
		 atomic_uint_least64_t *progress, atomic_bool *cancel);

/*
 * Parses a comma-separated digest list ("md5,sha256", or "none") into a mask.
 * Returns 0 and sets *mask, or -1 when a name is unknown (errno = EINVAL).
 */
int fidx_digest_list_parse(const char *list, unsigned *mask);

#endif /* FIDX_HASH_H */
