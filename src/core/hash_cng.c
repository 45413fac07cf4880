/*
 * hash_cng.c - the crypto backend on Windows: CNG, the Cryptography API:
 * Next Generation of bcrypt.dll (hash.h; link -lbcrypt).  The only file of
 * src/ that includes <bcrypt.h> or calls BCrypt* (make layers checks it).
 *
 * Providers: one algorithm handle per digest, all four opened by the first
 * fidx_crypto_start() and kept for the life of the process (a CNG algorithm
 * handle may be shared by threads; closing them at exit would buy nothing).
 * The lock only orders their opening; after it, every thread reads them.
 *
 * A digester is one reusable hash object (BCRYPT_HASH_REUSABLE_FLAG,
 * Windows 8 and later), whose memory CNG allocates:
 *
 *	create   BCryptCreateHash(provider, REUSABLE): a message started
 *	update   BCryptHashData, in pieces of at most ULONG_MAX bytes
 *	final    BCryptFinishHash, which also starts the next message
 *	reset    nothing after a final; in the middle of a message (dirty), a
 *	         BCryptFinishHash into a scratch buffer drops what was added
 *
 * So hashing a file makes and frees nothing: the object is made once per
 * worker, as the OpenSSL backend's context is.  Failures: STATUS_NO_MEMORY
 * is ENOMEM; anything else CNG says is EIO (its built-in digests fail on
 * nothing else than memory).
 */
#include "hash.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

#include <windows.h>
#include <bcrypt.h>

/* The cryptographic digests are the ones before FIDX_XXH128. */
#define NCRYPTO FIDX_XXH128

/* CNG's name of each cryptographic digest. */
static const LPCWSTR cng_names[NCRYPTO] = {
	[FIDX_MD5] = BCRYPT_MD5_ALGORITHM,
	[FIDX_SHA1] = BCRYPT_SHA1_ALGORITHM,
	[FIDX_SHA256] = BCRYPT_SHA256_ALGORITHM,
	[FIDX_SHA512] = BCRYPT_SHA512_ALGORITHM,
};

static SRWLOCK providers_lock = SRWLOCK_INIT; /* orders the opening of providers[] */
static BCRYPT_ALG_HANDLE providers[NCRYPTO];  /* each digest's, NULL until opened */

struct fidx_digester {
	BCRYPT_HASH_HANDLE hash; /* the reusable hash object */
	ULONG len;               /* bytes of the digest */
	bool dirty;              /* bytes added since the last finish */
};

/* Sets errno from a failed CNG call's status; returns -1. */
static int cng_fail(NTSTATUS status)
{
	errno = status == (NTSTATUS)STATUS_NO_MEMORY ? ENOMEM : EIO;
	return -1;
}

/* Opens the provider of every digest not yet opened (hash.h). */
int fidx_crypto_start(void)
{
	NTSTATUS status = 0;

	AcquireSRWLockExclusive(&providers_lock);
	for (int d = 0; d < NCRYPTO && BCRYPT_SUCCESS(status); d++)
		if (!providers[d])
			status = BCryptOpenAlgorithmProvider(&providers[d], cng_names[d], NULL,
							     BCRYPT_HASH_REUSABLE_FLAG);
	ReleaseSRWLockExclusive(&providers_lock);
	if (BCRYPT_SUCCESS(status))
		return 0;
	errno = status == (NTSTATUS)STATUS_NO_MEMORY ? ENOMEM : EOPNOTSUPP;
	return -1;
}

/* The library's name, for --version (hash.h). */
const char *fidx_crypto_library(void)
{
	return "Windows CNG (bcrypt.dll)";
}

/* Makes a digester of d: a reusable hash object, its message started (hash.h). */
struct fidx_digester *fidx_digester_create(enum fidx_digest d)
{
	struct fidx_digester *g;
	NTSTATUS status;

	if ((unsigned)d >= NCRYPTO) {
		errno = EINVAL;
		return NULL;
	}
	if (fidx_crypto_start() < 0)
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->len = (ULONG)fidx_digest_len(d);
	status = BCryptCreateHash(providers[d], &g->hash, NULL, 0, NULL, 0,
				  BCRYPT_HASH_REUSABLE_FLAG);
	if (!BCRYPT_SUCCESS(status)) {
		free(g);
		cng_fail(status);
		return NULL;
	}
	return g;
}

/* Frees a digester and its hash object, keeping errno (hash.h). */
void fidx_digester_destroy(struct fidx_digester *g)
{
	int saved = errno;

	if (!g)
		return;
	BCryptDestroyHash(g->hash);
	free(g);
	errno = saved;
}

/* Starts a new message: drops what was added since the last finish (hash.h). */
int fidx_digester_reset(struct fidx_digester *g)
{
	UCHAR scratch[FIDX_DIGEST_MAX];
	NTSTATUS status;

	if (!g->dirty)
		return 0;
	status = BCryptFinishHash(g->hash, scratch, g->len, 0);
	if (!BCRYPT_SUCCESS(status))
		return cng_fail(status);
	g->dirty = false;
	return 0;
}

/* Adds bytes to the message, in pieces CNG's ULONG lengths can take (hash.h). */
int fidx_digester_update(struct fidx_digester *g, const void *data, size_t len)
{
	const UCHAR *p = data;

	while (len) {
		ULONG n = len > ULONG_MAX ? ULONG_MAX : (ULONG)len;
		/* BCryptHashData only reads its input, which it declares non-const. */
		NTSTATUS status = BCryptHashData(g->hash, (PUCHAR)p, n, 0);
		if (!BCRYPT_SUCCESS(status))
			return cng_fail(status);
		g->dirty = true;
		p += n;
		len -= n;
	}
	return 0;
}

/* Ends the message, its digest into out; the object is ready for the next (hash.h). */
int fidx_digester_final(struct fidx_digester *g, uint8_t *out)
{
	NTSTATUS status = BCryptFinishHash(g->hash, out, g->len, 0);

	if (!BCRYPT_SUCCESS(status))
		return cng_fail(status);
	g->dirty = false;
	return 0;
}
