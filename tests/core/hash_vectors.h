/*
 * hash_vectors.h - known answers of every digest, and the ways of feeding a
 * message to the hasher, shared by the hasher's tests on every backend:
 * tests/core/test_hash.c (cmocka, OpenSSL on Linux) and
 * tests/windows/hashkat.c (standalone, CNG, run under Wine).
 *
 * The messages are the published ones: RFC 1321's suite (MD5), FIPS 180-4's
 * examples ("abc", the 448- and 896-bit messages) and FIPS 180-2's million
 * "a".  Digests not published for a message (SHA of the RFC 1321 strings, MD5
 * of the FIPS ones, every XXH128) were computed by coreutils' md5sum,
 * sha1sum, sha256sum, sha512sum and xxh128sum, never by fidx; each published
 * one was checked against the same tools.
 *
 * A message is fed in HASH_VECTOR_WAYS ways: whole, in pieces growing
 * 1, 4, 13, 40... (x3 + 1), and in pieces cut at the edges of the digests'
 * blocks (55, 56, 63, 64, 65 for MD5, SHA-1 and SHA-256's 64 bytes; 111,
 * 112, 127, 128, 129 for SHA-512's 128; 255 to 257 and 1023 to 1025 for
 * XXH3's stripes and blocks).  Everything is static inline: each test takes
 * what it needs.
 */
#ifndef FIDX_TESTS_HASH_VECTORS_H
#define FIDX_TESTS_HASH_VECTORS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

/* One known answer: text repeated times, and each digest's lower-case hex. */
struct hash_vector {
	const char *text;                /* the message, or its repeated part */
	size_t len;                      /* bytes of text */
	size_t times;                    /* how many times the message repeats text */
	const char *hex[FIDX_NDIGESTS];  /* expected digests, by enum fidx_digest */
};

/* The vectors, by name. */
enum {
	HV_EMPTY,
	HV_A,
	HV_ABC,
	HV_MESSAGE_DIGEST,
	HV_ALPHABET,
	HV_ALNUM,
	HV_DIGITS,
	HV_448,
	HV_896,
	HV_MILLION_A,
	HASH_NVECTORS
};

static const struct hash_vector hash_vectors[HASH_NVECTORS] = {
	/* the empty message (RFC 1321, FIPS 180-4 examples) */
	[HV_EMPTY] = {"", 0, 1, {
		[FIDX_MD5] = "d41d8cd98f00b204e9800998ecf8427e",
		[FIDX_SHA1] = "da39a3ee5e6b4b0d3255bfef95601890afd80709",
		[FIDX_SHA256] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		[FIDX_SHA512] =
			"cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
			"47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
		[FIDX_XXH128] = "99aa06d3014798d86001c324468d497f",
	}},
	/* "a" (RFC 1321 A.5) */
	[HV_A] = {"a", 1, 1, {
		[FIDX_MD5] = "0cc175b9c0f1b6a831c399e269772661",
		[FIDX_SHA1] = "86f7e437faa5a7fce15d1ddcb9eaeaea377667b8",
		[FIDX_SHA256] = "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
		[FIDX_SHA512] =
			"1f40fc92da241694750979ee6cf582f2d5d7d28e18335de05abc54d0560e0f53"
			"02860c652bf08d560252aa5e74210546f369fbbbce8c12cfc7957b2652fe9a75",
		[FIDX_XXH128] = "a96faf705af16834e6c632b61e964e1f",
	}},
	/* "abc": one block (RFC 1321 A.5, FIPS 180-4 examples) */
	[HV_ABC] = {"abc", 3, 1, {
		[FIDX_MD5] = "900150983cd24fb0d6963f7d28e17f72",
		[FIDX_SHA1] = "a9993e364706816aba3e25717850c26c9cd0d89d",
		[FIDX_SHA256] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		[FIDX_SHA512] =
			"ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
			"2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
		[FIDX_XXH128] = "06b05ab6733a618578af5f94892f3950",
	}},
	/* "message digest" (RFC 1321 A.5) */
	[HV_MESSAGE_DIGEST] = {"message digest", 14, 1, {
		[FIDX_MD5] = "f96b697d7cb7938d525a2f31aaf161d0",
		[FIDX_SHA1] = "c12252ceda8be8994d5fa0290a47231c1d16aae3",
		[FIDX_SHA256] = "f7846f55cf23e14eebeab5b4e1550cad5b509e3348fbc4efa3a1413d393cb650",
		[FIDX_SHA512] =
			"107dbf389d9e9f71a3a95f6c055b9251bc5268c2be16d6c13492ea45b0199f33"
			"09e16455ab1e96118e8a905d5597b72038ddb372a89826046de66687bb420e7c",
		[FIDX_XXH128] = "34ab715d95e3b6490abfabecb8e3a424",
	}},
	/* a to z (RFC 1321 A.5) */
	[HV_ALPHABET] = {"abcdefghijklmnopqrstuvwxyz", 26, 1, {
		[FIDX_MD5] = "c3fcd3d76192e4007dfb496cca67e13b",
		[FIDX_SHA1] = "32d10c7b8cf96570ca04ce37f2a19d84240d3a89",
		[FIDX_SHA256] = "71c480df93d6ae2f1efad1447c66c9525e316218cf51fc8d9ed832f2daf18b73",
		[FIDX_SHA512] =
			"4dbff86cc2ca1bae1e16468a05cb9881c97f1753bce3619034898faa1aabe429"
			"955a1bf8ec483d7421fe3c1646613a59ed5441fb0f321389f77f48a879c7b1f1",
		[FIDX_XXH128] = "db7ca44e84843d67ebe162220154e1e6",
	}},
	/* A to Z, a to z, 0 to 9: 62 bytes (RFC 1321 A.5) */
	[HV_ALNUM] = {"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		"abcdefghijklmnopqrstuvwxyz0123456789", 62, 1, {
		[FIDX_MD5] = "d174ab98d277d9f5a5611c2c9f419d9f",
		[FIDX_SHA1] = "761c457bf73b14d27e9e9265c46f4b4dda11f940",
		[FIDX_SHA256] = "db4bfcbd4da0cd85a60c3c37d3fbd8805c77f15fc6b1fdfe614ee0a7c8fdb4c0",
		[FIDX_SHA512] =
			"1e07be23c26a86ea37ea810c8ec7809352515a970e9253c26f536cfc7a9996c4"
			"5c8370583e0a78fa4a90041d71a4ceab7423f19c71b9d5a3e01249f0bebd5894",
		[FIDX_XXH128] = "5bcb80b619500686a3c0560bd47a4ffb",
	}},
	/* 8 times "1234567890": 80 bytes (RFC 1321 A.5) */
	[HV_DIGITS] = {"1234567890", 10, 8, {
		[FIDX_MD5] = "57edf4a22be3c955ac49da2e2107b67a",
		[FIDX_SHA1] = "50abf5706a150990a08b2c5ea40fa0e585554732",
		[FIDX_SHA256] = "f371bc4a311f2b009eef952dd83ca80e2b60026c8e935592d0f9c308453c813e",
		[FIDX_SHA512] =
			"72ec1ef1124a45b047e8b7c75a932195135bb61de24ec0d1914042246e0aec3a"
			"2354e093d76f3048b456764346900cb130d2a4fd5dd16abb5e30bcb850dee843",
		[FIDX_XXH128] = "08dd22c3ddc34ce640cb8d6ac672dcb8",
	}},
	/* the 448-bit message: 56 bytes, padding in a second block (FIPS 180-4) */
	[HV_448] = {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, 1, {
		[FIDX_MD5] = "8215ef0796a20bcaaae116d3876c664a",
		[FIDX_SHA1] = "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
		[FIDX_SHA256] = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
		[FIDX_SHA512] =
			"204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c335"
			"96fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445",
		[FIDX_XXH128] = "3d62d22a5169b016c0d894fd4828a1a7",
	}},
	/* the 896-bit message: 112 bytes, SHA-512's padding in a second block (FIPS 180-4) */
	[HV_896] = {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
		"hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu", 112, 1, {
		[FIDX_MD5] = "03dd8807a93175fb062dfb55dc7d359c",
		[FIDX_SHA1] = "a49b2446a02c645bf419f995b67091253a04a259",
		[FIDX_SHA256] = "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
		[FIDX_SHA512] =
			"8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
			"501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909",
		[FIDX_XXH128] = "97d535cb0c62bf199c12d0b7e499edb8",
	}},
	/* a million "a" (FIPS 180-2's long message; MD5, XXH128 by md5sum, xxh128sum) */
	[HV_MILLION_A] = {"a", 1, 1000000, {
		[FIDX_MD5] = "7707d6ae4e027c70eea2a935c2296f21",
		[FIDX_SHA1] = "34aa973cd4c4daa4f61eeb2bdbad27316534016f",
		[FIDX_SHA256] = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
		[FIDX_SHA512] =
			"e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
			"de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b",
		[FIDX_XXH128] = "a545df8e384a9579b1fd6fae5285c4eb",
	}},
};

/* The ways a message is fed: whole, growing pieces, pieces at block edges. */
#define HASH_VECTOR_WAYS 3

/* Pieces cut at the digests' block edges, used in turn (way 2). */
static const size_t hash_vector_edges[] = {
	55, 56, 63, 64, 65, 1, 111, 112, 127, 128, 129, 3, 255, 256, 257, 1023, 1024, 1025,
};
#define HASH_VECTOR_NEDGES (sizeof(hash_vector_edges) / sizeof(hash_vector_edges[0]))

/*
 * Returns the message of v in a new buffer (free() it), its length in *len;
 * NULL when out of memory.
 */
static inline unsigned char *hash_vector_message(const struct hash_vector *v, size_t *len)
{
	unsigned char *m = malloc(v->len * v->times + 1);

	*len = v->len * v->times;
	if (!m)
		return NULL;
	for (size_t i = 0; i < v->times; i++)
		memcpy(m + i * v->len, v->text, v->len);
	return m;
}

/*
 * Returns the length of piece k of way (*grow carries way 1's size from one
 * piece to the next: start it at 0), at most left.
 */
static inline size_t hash_vector_piece(int way, size_t k, size_t *grow, size_t left)
{
	size_t n;

	if (way == 0)
		n = left;
	else if (way == 1)
		n = *grow = *grow > 100000 ? 1 : *grow * 3 + 1;
	else
		n = hash_vector_edges[k % HASH_VECTOR_NEDGES];
	return n < left ? n : left;
}

/*
 * Feeds the len bytes at m to h the way way says, after a reset that must
 * drop the junk added before it, and ends the message into out.  Returns 0,
 * or -1 when a hasher call failed.
 */
static inline int hash_vector_hasher(struct fidx_hasher *h, int way, const unsigned char *m,
				     size_t len, uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX])
{
	size_t off = 0, grow = 0;

	if (fidx_hasher_update(h, "junk", 4) < 0 || fidx_hasher_reset(h) < 0)
		return -1;
	for (size_t k = 0; off < len; k++) {
		size_t n = hash_vector_piece(way, k, &grow, len - off);
		if (fidx_hasher_update(h, m + off, n) < 0)
			return -1;
		off += n;
	}
	return fidx_hasher_final(h, out);
}

/* As hash_vector_hasher(), for one digester: its digest into out. */
static inline int hash_vector_digester(struct fidx_digester *g, int way, const unsigned char *m,
				       size_t len, uint8_t out[FIDX_DIGEST_MAX])
{
	size_t off = 0, grow = 0;

	if (fidx_digester_update(g, "junk", 4) < 0 || fidx_digester_reset(g) < 0)
		return -1;
	for (size_t k = 0; off < len; k++) {
		size_t n = hash_vector_piece(way, k, &grow, len - off);
		if (fidx_digester_update(g, m + off, n) < 0)
			return -1;
		off += n;
	}
	return fidx_digester_final(g, out);
}

/* Writes the lower-case hex of len bytes at d into hex (2 * len + 1 bytes). */
static inline void hash_vector_hex(const uint8_t *d, size_t len, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[2 * len] = '\0';
}

#endif /* FIDX_TESTS_HASH_VECTORS_H */
