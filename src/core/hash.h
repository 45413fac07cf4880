/*
 * hash.h - every requested digest of a file in one read pass, and the one
 * seam between fidx and a cryptographic library.
 *
 * Two levels:
 *
 *   fidx_digester   one cryptographic digest (MD5, SHA-1, SHA-256, SHA-512)
 *                   computed incrementally: the crypto backend.  The seal,
 *                   push's UUIDs and the hasher below use it, and nothing else
 *                   in fidx names a crypto library.
 *   fidx_hasher     one thread's set of digests and read buffer: every digest
 *                   of a mask (XXH128 too) updated from each block.  It is made
 *                   once per hash worker and reused for every file, so that no
 *                   context or buffer is allocated per file (hash.c).
 *
 * The backend is one file, chosen by the build:
 *
 *   hash_openssl.c  Linux: OpenSSL's EVP interface (libcrypto)
 *   hash_cng.c      Windows: CNG (bcrypt.dll), providers opened once
 *
 * XXH128 is libxxhash's XXH3 streaming API in both (header-only on Windows).
 * A reader needs only create, reset, update and final: fidx_hash_fd() is the
 * POSIX one (a descriptor); a Windows reader feeds its own blocks.
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
struct fidx_digester;

/*
 * Sets the crypto library up before anything uses it, in one thread, and
 * makes SHA-256 ready.  OpenSSL: its default context and the default
 * provider (made lazily inside a later call, a failure there leaves OpenSSL
 * 3.0 unusable, a crash rather than an error).  CNG: the algorithm providers
 * of the four digests, opened once for the life of the process.  Called
 * again by fidx_digester_create(); a program calls it first.  Returns 0, or
 * -1 with errno ENOMEM (or EOPNOTSUPP: CNG lacks an algorithm).
 */
int fidx_crypto_start(void);

/* The crypto library's name and version, for --version (a static string). */
const char *fidx_crypto_library(void);

/*
 * Makes a digester of the cryptographic digest d (FIDX_MD5 ... FIDX_SHA512),
 * its message started.  Returns NULL with errno EINVAL (d is XXH128 or no
 * digest), EOPNOTSUPP (the library does not provide d: a FIPS-only OpenSSL
 * without MD5, for example) or ENOMEM.
 */
struct fidx_digester *fidx_digester_create(enum fidx_digest d);

/* Frees a digester, keeping errno.  NULL is allowed. */
void fidx_digester_destroy(struct fidx_digester *g);

/* Starts a new message, also in the middle of one.  Returns 0, or -1 (ENOMEM). */
int fidx_digester_reset(struct fidx_digester *g);

/* Adds len bytes at data to the message.  Returns 0, or -1 (ENOMEM). */
int fidx_digester_update(struct fidx_digester *g, const void *data, size_t len);

/*
 * Writes the digest of the message into out (fidx_digest_len() bytes); the
 * message ends, and the next one needs fidx_digester_reset().  Returns 0, or
 * -1 (ENOMEM).
 */
int fidx_digester_final(struct fidx_digester *g, uint8_t *out);

/*
 * Makes a hasher for the digests in mask (bits 1u << enum fidx_digest).
 * Returns NULL with errno set on failure (fidx_digester_create()'s, or
 * EINVAL for a bit that names no digest).
 */
struct fidx_hasher *fidx_hasher_create(unsigned mask);

/* Frees a hasher.  NULL is allowed. */
void fidx_hasher_destroy(struct fidx_hasher *h);

/*
 * Starts a new message in every digest of h.  Returns 0, or -1 with errno
 * ENOMEM (the crypto library failed: for its built-in digests, only out of
 * memory).
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
 * -2 when the digests could not be computed (the crypto library out of
 * memory): no fault of the file, to be treated as the caller's own failure.
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
