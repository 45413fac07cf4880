/*
 * hash_openssl.c - the crypto backend on Linux: OpenSSL's EVP interface
 * (hash.h).  The only file of src/ that includes an OpenSSL header or calls
 * OpenSSL (make layers checks it; tests may use it for expected values).
 *
 * A digester is an EVP_MD fetched once from the default provider and one
 * EVP_MD_CTX, both made in fidx_digester_create() and kept until it is
 * destroyed:
 *
 *	create   EVP_MD_fetch(name) ─► EVP_MD_CTX_new ─► EVP_DigestInit_ex2
 *	reset    EVP_DigestInit_ex2 (in place: the context is not re-made)
 *	update   EVP_DigestUpdate
 *	final    EVP_DigestFinal_ex
 *
 * These are the calls the hasher made itself before the backends were split,
 * one function call deeper; a file's cost is its blocks' digesting, which is
 * OpenSSL's own code either way.
 */
#include "hash.h"

#include <errno.h>
#include <stdlib.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

/* OpenSSL's name of each cryptographic digest (those before FIDX_XXH128). */
static const char *const evp_names[FIDX_XXH128] = {
	[FIDX_MD5] = "MD5",
	[FIDX_SHA1] = "SHA1",
	[FIDX_SHA256] = "SHA256",
	[FIDX_SHA512] = "SHA512",
};

struct fidx_digester {
	EVP_MD *md;      /* the fetched digest */
	EVP_MD_CTX *ctx; /* its context, a message started */
};

/*
 * Sets libcrypto up (hash.h): its default context, then one fetch of
 * SHA-256, which loads the default provider here rather than inside the
 * first worker's or sealer's call.
 */
int fidx_crypto_start(void)
{
	/* OpenSSL 3.0 falls back to a half-made default context when making it
	 * fails, and crashes in it: made here first, where a failure is told. */
	if (!OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL) ||
	    !OSSL_LIB_CTX_get0_global_default()) {
		errno = ENOMEM;
		return -1;
	}
	EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (!md) {
		errno = ENOMEM;
		return -1;
	}
	EVP_MD_free(md);
	return 0;
}

/* OpenSSL's version line, "OpenSSL 3.0.x <date>" (hash.h). */
const char *fidx_crypto_library(void)
{
	return OpenSSL_version(OPENSSL_VERSION);
}

/* Makes a digester of d, its message started (hash.h). */
struct fidx_digester *fidx_digester_create(enum fidx_digest d)
{
	struct fidx_digester *g;

	if ((unsigned)d >= FIDX_XXH128) {
		errno = EINVAL;
		return NULL;
	}
	if (fidx_crypto_start() < 0)
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->md = EVP_MD_fetch(NULL, evp_names[d], NULL);
	if (!g->md) {
		errno = EOPNOTSUPP;
		goto fail;
	}
	/* Initialised now so that a broken provider fails here, once. */
	g->ctx = EVP_MD_CTX_new();
	if (!g->ctx || !EVP_DigestInit_ex2(g->ctx, g->md, NULL)) {
		errno = ENOMEM;
		goto fail;
	}
	return g;

fail:
	fidx_digester_destroy(g);
	return NULL;
}

/* Frees a digester, keeping errno (hash.h). */
void fidx_digester_destroy(struct fidx_digester *g)
{
	int saved = errno;

	if (!g)
		return;
	EVP_MD_CTX_free(g->ctx);
	EVP_MD_free(g->md);
	free(g);
	errno = saved;
}

/* Starts a new message in place (hash.h). */
int fidx_digester_reset(struct fidx_digester *g)
{
	if (!EVP_DigestInit_ex2(g->ctx, g->md, NULL)) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Adds bytes to the message (hash.h). */
int fidx_digester_update(struct fidx_digester *g, const void *data, size_t len)
{
	if (!EVP_DigestUpdate(g->ctx, data, len)) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Ends the message, its digest into out (hash.h). */
int fidx_digester_final(struct fidx_digester *g, uint8_t *out)
{
	if (!EVP_DigestFinal_ex(g->ctx, out, NULL)) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}
