/*
 * fuzz_delta.c - the runs of a scan kept as changes (src/core/delta.c), as
 * a server's fidx.scan_delta hands them back: hostile bytes.
 *
 * The input is split at its first byte into two encodings A and B (the
 * first byte's value, at most the rest's length, is A's length).  Each must
 * decode into maps sorted by lo, disjoint, within the keys, or fail with
 * EBADMSG; a decoded one must encode into bytes that decode to the same
 * maps.  When both decode, composing A with B must succeed or fail with
 * EBADMSG (damaged runs), and what it gives must be sorted by lo, disjoint,
 * and map each id as A then B would.
 */
#include "fuzz.h"

#include "delta.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* Aborts unless the n maps m are sorted by lo, disjoint and within the keys. */
static void check_maps(const struct fidx_delta_map *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (m[i].lo < 0 || m[i].hi < m[i].lo || m[i].hi > FIDX_DELTA_KEY_MAX ||
		    m[i].lo + m[i].off < 0 || m[i].hi + m[i].off > FIDX_DELTA_KEY_MAX ||
		    (i && m[i].lo <= m[i - 1].hi))
			abort();
	}
}

/* Decodes len bytes at p into *m (checked), NULL when damaged; aborts on a broken promise. */
static size_t decode(const uint8_t *p, size_t len, struct fidx_delta_map **m)
{
	struct fidx_error err = {0};
	size_t n = 0;
	if (fidx_delta_decode(p, len, 1, m, &n, &err) < 0) {
		if (err.code != EBADMSG && err.code != ENOMEM)
			abort();
		*m = NULL;
		return 0;
	}
	check_maps(*m, n);
	size_t elen = 0;
	uint8_t *e = fidx_delta_encode(*m, n, &elen);
	if (!e)
		return n;
	struct fidx_delta_map *again = NULL;
	size_t nagain = 0;
	if (fidx_delta_decode(e, elen, 1, &again, &nagain, &err) < 0 || nagain != n ||
	    (n && memcmp(again, *m, n * sizeof(*again)) != 0))
		abort();
	free(again);
	free(e);
	return n;
}

/* Where map m (n of them, sorted by lo) sends id, or -1. */
static int64_t image(const struct fidx_delta_map *m, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].lo <= id && id <= m[i].hi)
			return id + m[i].off;
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t alen = data[0] < size - 1 ? data[0] : size - 1;
	const uint8_t *a = data + 1, *b = a + alen;
	size_t blen = size - 1 - alen;
	struct fidx_delta_map *ma = NULL, *mb = NULL, *mc = NULL;
	size_t na = decode(a, alen, &ma), nb = decode(b, blen, &mb), nc = 0;
	if (ma && mb) {
		struct fidx_error err = {0};
		if (fidx_delta_compose(ma, na, 1, mb, nb, &mc, &nc, &err) < 0) {
			if (err.code != EBADMSG && err.code != ENOMEM)
				abort();
		} else {
			check_maps(mc, nc);
			/* Every edge of A's maps goes where A then B send it. */
			for (size_t i = 0; i < na && i < 64; i++) {
				int64_t ids[2] = {ma[i].lo, ma[i].hi};
				for (int e = 0; e < 2; e++) {
					int64_t via = image(ma, na, ids[e]);
					int64_t want = via < 0 ? -1 : image(mb, nb, via);
					if (image(mc, nc, ids[e]) != want)
						abort();
				}
			}
		}
	}
	free(ma);
	free(mb);
	free(mc);
	return 0;
}
