/*
 * pathindex.c - the bytes of the substring index of a scan's paths
 * (pathindex.h): built, chosen from, read.
 *
 *   block   for each of up to FIDX_PATHINDEX_BLOCK paths, in byte order:
 *               varint shared     bytes shared with the previous path of the
 *                                 block (0 for the first)
 *               varint rest       bytes that follow
 *               rest bytes        the path's bytes from offset shared on
 *               varint zigzag(id - previous id)   file.id (previous: 0 at the
 *                                 start of the block)
 *   list    the blocks whose paths contain one trigram (ASCII letters
 *           lower-cased, so one index serves case-sensitive and -i queries):
 *           the first block number, then the gaps to the next, as varints
 *
 * Varints are LEB128: 7 bits a byte, low bits first, high bit = more.
 *
 * Building takes the paths in byte order, hands each block to the sink as
 * it fills, and keeps one growing list per trigram in an open-addressing
 * hash table; a trigram is added to a block's list once (the list remembers
 * its last block).  Paths in a block share long prefixes, and the trigrams
 * of the shared prefix were added with the previous path, so only the
 * trigrams that reach into a path's own bytes are looked at.  At the end
 * the lists go to the sink in trigram order.
 *
 *     paths ──► block buffer ──full──► sink->block
 *   (sorted)     │
 *                └─ new trigrams ──► hash table: trigram → block list
 *                                      └─ at the end, sorted ──► sink->trigram
 */
#include "pathindex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "findpat.h"

/* Initial slots of the trigram table (a power of two); it doubles at half full. */
#define TRIMAP_SLOTS (1u << 16)

/* A growing byte buffer. */
struct buf {
	unsigned char *p;  /* bytes (malloc'ed) */
	size_t len;        /* in use */
	size_t cap;        /* allocated */
};

/* Makes room for n more bytes.  Returns 0, or -1 (out of memory). */
static int buf_reserve(struct buf *b, size_t n)
{
	if (b->cap - b->len >= n)
		return 0;
	size_t cap = b->cap ? b->cap : 16;
	while (cap - b->len < n)
		cap *= 2;
	unsigned char *p = realloc(b->p, cap);
	if (!p)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

/* Appends v as a varint; room for 10 bytes must be reserved. */
static inline void put_varint(struct buf *b, uint64_t v)
{
	while (v >= 0x80) {
		b->p[b->len++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (unsigned char)v;
}

/* Reads a varint at *p (before end) into *v.  Returns 0, or -1 when it is cut or too long. */
static inline int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char c = *(*p)++;
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* ------------------------------------------------------------------ build -- */

/* One trigram's list while building. */
struct posting {
	uint32_t tri;      /* the trigram; 0 marks a free slot (no path holds NUL) */
	uint32_t last;     /* last block added + 1; 0 while none */
	struct buf list;   /* varints: first block, then gaps */
};

struct fidx_pathindex_builder {
	struct fidx_pathindex_sink sink;
	struct posting *slot;   /* open addressing, linear probing */
	size_t nslots;          /* a power of two */
	size_t used;            /* trigrams in the table */
	struct buf block;       /* the block being filled */
	unsigned inblock;       /* paths in it */
	uint32_t nblock;        /* its number (blocks given before it) */
	int64_t prev_id;        /* previous file id of the block */
	struct buf prev;        /* previous path of the block (shared prefix) */
	uint64_t paths;         /* paths added */
};

/* Doubles the trigram table.  Returns 0, or -1 (out of memory). */
static int trimap_grow(struct fidx_pathindex_builder *b)
{
	size_t n = b->nslots ? 2 * b->nslots : TRIMAP_SLOTS;
	struct posting *s = calloc(n, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < b->nslots; i++) {
		if (!b->slot[i].tri)
			continue;
		size_t j = (b->slot[i].tri * 2654435761u) & (n - 1);
		while (s[j].tri)
			j = (j + 1) & (n - 1);
		s[j] = b->slot[i];
	}
	free(b->slot);
	b->slot = s;
	b->nslots = n;
	return 0;
}

/* Adds block b->nblock to trigram tri's list.  Returns 0, or -1 (out of memory). */
static int trimap_add(struct fidx_pathindex_builder *b, uint32_t tri)
{
	size_t mask = b->nslots - 1, j = (tri * 2654435761u) & mask;
	while (b->slot[j].tri && b->slot[j].tri != tri)
		j = (j + 1) & mask;
	struct posting *p = &b->slot[j];
	if (!p->tri) {
		if (2 * (b->used + 1) > b->nslots) {
			if (trimap_grow(b) < 0)
				return -1;
			return trimap_add(b, tri);
		}
		p->tri = tri;
		b->used++;
	}
	if (p->last == b->nblock + 1)
		return 0;
	if (buf_reserve(&p->list, 10) < 0)
		return -1;
	put_varint(&p->list, p->last ? b->nblock + 1 - p->last : b->nblock);
	p->last = b->nblock + 1;
	return 0;
}

/* Gives the sink the block being filled (if any paths are in it).  Returns 0, or -1 with err set. */
static int flush_block(struct fidx_pathindex_builder *b, struct fidx_error *err)
{
	if (!b->inblock)
		return 0;
	if (b->sink.block(b->sink.arg, b->nblock, b->block.p, b->block.len, err) < 0)
		return -1;
	b->block.len = 0;
	b->inblock = 0;
	b->nblock++;
	return 0;
}

struct fidx_pathindex_builder *fidx_pathindex_builder_new(const struct fidx_pathindex_sink *sink,
							  struct fidx_error *err)
{
	struct fidx_pathindex_builder *b = calloc(1, sizeof(*b));
	if (!b || trimap_grow(b) < 0) {
		free(b);
		fidx_fail_nomem(err);
		return NULL;
	}
	b->sink = *sink;
	return b;
}

int fidx_pathindex_builder_add(struct fidx_pathindex_builder *b, int64_t id, const void *data,
			       size_t len, struct fidx_error *err)
{
	const unsigned char *path = data;
	if (b->inblock == FIDX_PATHINDEX_BLOCK && flush_block(b, err) < 0)
		return -1;
	size_t shared = 0;
	if (b->inblock) {
		size_t max = len < b->prev.len ? len : b->prev.len;
		while (shared < max && path[shared] == b->prev.p[shared])
			shared++;
	} else {
		b->prev_id = 0;
	}
	if (buf_reserve(&b->block, 30 + len - shared) < 0)
		return fidx_fail_nomem(err);
	put_varint(&b->block, shared);
	put_varint(&b->block, len - shared);
	memcpy(b->block.p + b->block.len, path + shared, len - shared);
	b->block.len += len - shared;
	uint64_t d = (uint64_t)(id - b->prev_id);
	put_varint(&b->block, (d << 1) ^ (uint64_t)((id - b->prev_id) >> 63));
	b->prev_id = id;

	/* The trigrams ending in the path's own bytes (those before are the block's already). */
	size_t i = shared >= 2 ? shared - 2 : 0;
	if (i + 3 <= len) {
		uint32_t t = (uint32_t)fidx_findpat_fold(path[i]) << 8 |
			     fidx_findpat_fold(path[i + 1]);
		for (i += 2; i < len; i++) {
			t = ((t << 8) | fidx_findpat_fold(path[i])) & 0xffffff;
			if (trimap_add(b, t) < 0)
				return fidx_fail_nomem(err);
		}
	}

	b->prev.len = 0;
	if (buf_reserve(&b->prev, len) < 0)
		return fidx_fail_nomem(err);
	memcpy(b->prev.p, path, len);
	b->prev.len = len;
	b->inblock++;
	b->paths++;
	return 0;
}

/* qsort() order of postings by trigram. */
static int cmp_posting(const void *a, const void *b)
{
	uint32_t x = ((const struct posting *)a)->tri, y = ((const struct posting *)b)->tri;
	return (x > y) - (x < y);
}

int fidx_pathindex_builder_end(struct fidx_pathindex_builder *b, struct fidx_pathindex_totals *t,
			       struct fidx_error *err)
{
	if (flush_block(b, err) < 0)
		return -1;
	/* Pack the used slots to the front, then sort them. */
	size_t n = 0;
	for (size_t i = 0; i < b->nslots; i++)
		if (b->slot[i].tri)
			b->slot[n++] = b->slot[i];
	for (size_t i = n; i < b->nslots; i++)
		b->slot[i] = (struct posting){0};
	qsort(b->slot, n, sizeof(*b->slot), cmp_posting);
	for (size_t i = 0; i < n; i++) {
		struct posting *p = &b->slot[i];
		if (b->sink.trigram(b->sink.arg, p->tri, p->list.p, p->list.len, err) < 0)
			return -1;
	}
	*t = (struct fidx_pathindex_totals){.paths = b->paths, .blocks = b->nblock,
					    .trigrams = b->used};
	return 0;
}

void fidx_pathindex_builder_free(struct fidx_pathindex_builder *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nslots; i++)
		free(b->slot[i].list.p);
	free(b->slot);
	free(b->block.p);
	free(b->prev.p);
	free(b);
}

/* ------------------------------------------------------------------ query -- */

/* qsort() order of uint32_t. */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

size_t fidx_pathindex_trigrams(const char *s, size_t n, uint32_t *out, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i + 3 <= n; i++)
		out[len++] = (uint32_t)fidx_findpat_fold(p[i]) << 16 |
			     (uint32_t)fidx_findpat_fold(p[i + 1]) << 8 | fidx_findpat_fold(p[i + 2]);
	qsort(out, len, sizeof(*out), cmp_u32);
	size_t k = 0;
	for (size_t i = 0; i < len; i++)
		if (k == 0 || out[k - 1] != out[i])
			out[k++] = out[i];
	return k;
}

int fidx_pathindex_literal_trigrams(const struct fidx_findpat_literal *lit, size_t nlit,
				    uint32_t **tri, size_t *ntri, struct fidx_error *err)
{
	size_t room = 1;
	for (size_t i = 0; i < nlit; i++)
		room += lit[i].len;
	*ntri = 0;
	if (!(*tri = malloc(room * sizeof(**tri))))
		return fidx_fail_nomem(err);
	for (size_t i = 0; i < nlit; i++)
		*ntri = fidx_pathindex_trigrams(lit[i].s, lit[i].len, *tri, *ntri);
	return 0;
}

/* Fails with EBADMSG: a damaged list.  Returns -1. */
static int bad_list(struct fidx_error *err)
{
	return fidx_fail(err, EBADMSG, "a trigram's block list that is damaged");
}

/*
 * Keeps in blocks[0..*n) those that are also in list l.  Returns 0, or -1
 * with err set.
 */
static int intersect(uint32_t *blocks, size_t *n, const struct fidx_pathindex_list *l,
		     struct fidx_error *err)
{
	const unsigned char *p = l->p, *end = p + l->len;
	uint64_t cur = 0, v;
	size_t k = 0, i = 0;
	bool first = true;

	while (i < *n && p < end) {
		if (get_varint(&p, end, &v) < 0 || (!first && v == 0))
			return bad_list(err);
		cur = first ? v : cur + v;
		first = false;
		while (i < *n && blocks[i] < cur)
			i++;
		if (i < *n && blocks[i] == cur)
			blocks[k++] = blocks[i++];
	}
	*n = k;
	return 0;
}

/* Decodes list l (of blocks below nblocks) into blocks, *n of them.  Returns 0, or -1 with err set. */
static int decode_list(const struct fidx_pathindex_list *l, uint64_t nblocks, uint32_t *blocks,
		       size_t *n, struct fidx_error *err)
{
	const unsigned char *p = l->p, *end = p + l->len;
	uint64_t cur = 0, v;
	size_t k = 0;

	while (p < end) {
		if (get_varint(&p, end, &v) < 0 || (k && v == 0) || (cur = k ? cur + v : v) >= nblocks)
			return bad_list(err);
		blocks[k++] = (uint32_t)cur;
	}
	*n = k;
	return 0;
}

int fidx_pathindex_choose(const struct fidx_pathindex_list *lists, size_t n, uint64_t nblocks,
			  uint32_t **blocks, size_t *count, struct fidx_error *err)
{
	*blocks = NULL;
	*count = 0;
	size_t shortest = 0;
	for (size_t i = 0; i < n; i++) {
		if (lists[i].len == 0) /* a trigram no path has: nothing can match */
			return 0;
		if (lists[i].len < lists[shortest].len)
			shortest = i;
	}
	if (n == 0)
		return 0;
	/* A list has at most one entry per byte. */
	uint32_t *b = malloc(lists[shortest].len * sizeof(*b));
	if (!b)
		return fidx_fail_nomem(err);
	size_t k = 0;
	if (decode_list(&lists[shortest], nblocks, b, &k, err) < 0)
		goto fail;
	for (size_t i = 0; i < n && k; i++)
		if (i != shortest && intersect(b, &k, &lists[i], err) < 0)
			goto fail;
	*blocks = b;
	*count = k;
	return 0;
fail:
	free(b);
	return -1;
}

/* Fails with EBADMSG: what is wrong with the block.  Returns -1. */
static int bad_block(struct fidx_error *err, const char *what)
{
	return fidx_fail(err, EBADMSG, "%s", what);
}

int fidx_pathblock_start(struct fidx_pathblock *r, const void *data, size_t len,
			 struct fidx_error *err)
{
	if (!data || len == 0)
		return bad_block(err, "a block that is empty");
	r->p = data;
	r->end = r->p + len;
	r->prev_id = 0;
	r->len = 0;
	return 0;
}

int fidx_pathblock_next(struct fidx_pathblock *r, struct fidx_pathent *e, struct fidx_error *err)
{
	uint64_t shared, rest, zid;

	if (r->p == r->end)
		return 0;
	if (get_varint(&r->p, r->end, &shared) < 0 || get_varint(&r->p, r->end, &rest) < 0 ||
	    shared > r->len || rest > (uint64_t)(r->end - r->p))
		return bad_block(err, "a path cut short");
	/*
	 * Paths are absolute and strictly ascending: a path sharing a prefix with
	 * the one before has more bytes than that prefix, and its first own byte
	 * is above the previous path's byte there.
	 */
	if (rest == 0 || (shared == 0 && r->p[0] != '/') ||
	    (shared < r->len && r->p[0] <= (unsigned char)r->path[shared]))
		return bad_block(err, "a path out of order");
	if (shared + rest + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 256;
		while (cap < shared + rest + 1)
			cap *= 2;
		char *p = realloc(r->path, cap);
		if (!p)
			return fidx_fail_nomem(err);
		r->path = p;
		r->cap = cap;
	}
	memcpy(r->path + shared, r->p, rest);
	r->len = shared + rest;
	r->path[r->len] = '\0';
	r->p += rest;
	if (get_varint(&r->p, r->end, &zid) < 0)
		return bad_block(err, "a row id cut short");
	/* In unsigned arithmetic: a hostile delta wraps instead of overflowing. */
	r->prev_id = (int64_t)((uint64_t)r->prev_id + ((zid >> 1) ^ -(zid & 1)));
	if (r->prev_id <= 0)
		return bad_block(err, "a row id out of range");
	e->id = r->prev_id;
	e->path = r->path;
	e->len = r->len;
	return 1;
}

void fidx_pathblock_free(struct fidx_pathblock *r)
{
	free(r->path);
	r->path = NULL;
	r->len = r->cap = 0;
}
