/*
 * delta.c - the runs of a scan stored as its changes: encoded, decoded and
 * composed along a chain (delta.h).
 */
#include "delta.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Appends v as a LEB128 varint at p.  Returns the bytes written (at most 10). */
static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/*
 * Reads a varint at *p (below end) into *v.  Returns false when it is cut off
 * or too long: past 10 bytes, or a 10th byte with bits past 64.
 */
static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		if (shift == 63 && b > 1)
			return false;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* Zigzag: small magnitudes of either sign to small numbers. */
static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

uint8_t *fidx_delta_encode(const struct fidx_delta_map *m, size_t n, size_t *len)
{
	uint8_t *p = malloc(10 + 30 * n), *at = p;
	if (!p)
		return NULL;
	at += put_varint(at, n);
	int64_t next = 0, off = 0;
	for (size_t i = 0; i < n; i++) {
		at += put_varint(at, (uint64_t)(m[i].lo - next));
		at += put_varint(at, (uint64_t)(m[i].hi - m[i].lo) << 1 | (m[i].fill ? 1 : 0));
		at += put_varint(at, zigzag(m[i].off - off));
		next = m[i].hi + 1;
		off = m[i].off;
	}
	*len = (size_t)(at - p);
	return p;
}

int fidx_delta_decode(const void *data, size_t len, int64_t scan, struct fidx_delta_map **out,
		      size_t *n, struct fidx_error *err)
{
	const uint8_t *p = data, *end = p + len;
	uint64_t count, a, b, c;
	*out = NULL;
	*n = 0;
	if (!get_varint(&p, end, &count) || count > len)
		goto bad;
	struct fidx_delta_map *m = calloc(count ? count : 1, sizeof(*m));
	if (!m)
		return fidx_fail_nomem(err);
	int64_t next = 0, off = 0;
	for (uint64_t i = 0; i < count; i++) {
		if (!get_varint(&p, end, &a) || !get_varint(&p, end, &b) ||
		    !get_varint(&p, end, &c) || a > FIDX_DELTA_KEY_MAX ||
		    (b >> 1) > FIDX_DELTA_KEY_MAX) {
			free(m);
			goto bad;
		}
		/* An offset lies within the keys' span, so a step between two within twice it:
		 * a larger one is damage (and would overflow). */
		int64_t step = unzigzag(c);
		if (step > 2 * FIDX_DELTA_KEY_MAX + 1 || step < -(2 * FIDX_DELTA_KEY_MAX + 1)) {
			free(m);
			goto bad;
		}
		m[i].lo = next + (int64_t)a;
		m[i].hi = m[i].lo + (int64_t)(b >> 1);
		m[i].fill = (int64_t)(b & 1);
		m[i].off = off + step;
		if (m[i].hi > FIDX_DELTA_KEY_MAX || m[i].lo + m[i].off < 0 ||
		    m[i].hi + m[i].off > FIDX_DELTA_KEY_MAX) {
			free(m);
			goto bad;
		}
		next = m[i].hi + 1;
		off = m[i].off;
	}
	if (p != end) {
		free(m);
		goto bad;
	}
	*out = m;
	*n = (size_t)count;
	return 0;
bad:
	return fidx_fail(err, EBADMSG, "the changes of scan %" PRId64 " are damaged: its runs"
			 " do not decode", scan);
}

/* Orders maps by the first id they map to. */
static int by_image(const void *a, const void *b)
{
	const struct fidx_delta_map *x = a, *y = b;
	int64_t p = x->lo + x->off, q = y->lo + y->off;
	return (p > q) - (p < q);
}

/* Orders maps by lo. */
static int by_lo(const void *a, const void *b)
{
	const struct fidx_delta_map *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

int fidx_delta_compose(const struct fidx_delta_map *inner, size_t ninner, int64_t scan,
		       const struct fidx_delta_map *outer, size_t nouter,
		       struct fidx_delta_map **out, size_t *n, struct fidx_error *err)
{
	*out = NULL;
	*n = 0;
	if (!ninner || !nouter)
		return 0;
	/* Each pair that overlaps gives one map: at most ninner + nouter of them (both are
	 * disjoint, and inner's images too, since it maps each id to another). */
	struct fidx_delta_map *in = malloc(ninner * sizeof(*in));
	struct fidx_delta_map *m = malloc((ninner + nouter) * sizeof(*m));
	if (!in || !m) {
		free(in);
		free(m);
		return fidx_fail_nomem(err);
	}
	memcpy(in, inner, ninner * sizeof(*in));
	qsort(in, ninner, sizeof(*in), by_image);
	for (size_t i = 1; i < ninner; i++)
		if (in[i].lo + in[i].off <= in[i - 1].hi + in[i - 1].off) { /* damaged runs */
			free(in);
			free(m);
			return fidx_fail(err, EBADMSG, "the changes of scan %" PRId64 " are"
					 " damaged: two of its runs give rows the same id", scan);
		}
	size_t j = 0, k = 0;
	for (size_t i = 0; i < ninner; i++) {
		int64_t a = in[i].lo + in[i].off, b = in[i].hi + in[i].off;
		while (j < nouter && outer[j].hi < a)
			j++;
		for (size_t o = j; o < nouter && outer[o].lo <= b; o++) {
			int64_t lo = outer[o].lo > a ? outer[o].lo : a;
			int64_t hi = outer[o].hi < b ? outer[o].hi : b;
			if (lo > hi)
				continue;
			m[k++] = (struct fidx_delta_map){
				.lo = lo - in[i].off, .hi = hi - in[i].off,
				.off = in[i].off + outer[o].off,
				.fill = in[i].fill ? in[i].fill : outer[o].fill};
		}
	}
	free(in);
	qsort(m, k, sizeof(*m), by_lo);
	/* Intervals that touch, of one offset and fill, are one. */
	size_t w = 0;
	for (size_t i = 0; i < k; i++) {
		if (w && m[w - 1].hi + 1 == m[i].lo && m[w - 1].off == m[i].off &&
		    m[w - 1].fill == m[i].fill)
			m[w - 1].hi = m[i].hi;
		else
			m[w++] = m[i];
	}
	k = w;
	if (!k) {
		free(m);
		m = NULL;
	}
	*out = m;
	*n = k;
	return 0;
}
