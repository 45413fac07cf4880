/*
 * fuzz_pathindex.c - the path index of `fidx find` (src/core/pathindex.c):
 * blocks and trigram lists as a store hands them back from its database.
 *
 * The first byte picks one of two readings of the rest:
 *
 *   even  hostile bytes: a block count (2 bytes), then trigram lists, each a
 *         length byte and its bytes, until a length of 0; what follows is a
 *         block.  fidx_pathindex_choose() must give ascending blocks below
 *         the count or fail with EBADMSG; the block's paths must come out
 *         absolute, strictly ascending, with positive ids, or fail with
 *         EBADMSG.
 *   odd   a round trip: the rest's '\n'-separated pieces, sorted, are paths;
 *         the absolute ones are built into an index in memory and read back,
 *         and every path must come out of its block with its id, and every
 *         path's own block must be among those chosen for its trigrams (the
 *         first 4 KiB of the rest are read).
 */
#include "fuzz.h"

#include "pathindex.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* Reads every path of the block at p (len bytes); aborts on a broken promise. */
static void read_block(struct fidx_pathblock *r, const void *p, size_t len)
{
	struct fidx_error err = {0};
	if (fidx_pathblock_start(r, p, len, &err) < 0) {
		if (err.code != EBADMSG)
			abort();
		return;
	}
	char prev[4096];
	size_t prevlen = 0;
	bool first = true;
	struct fidx_pathent e;
	int n;
	while ((n = fidx_pathblock_next(r, &e, &err)) == 1) {
		if (e.id <= 0 || e.len == 0 || e.path[0] != '/' || e.path[e.len] != '\0')
			abort();
		if (!first) {
			size_t m = prevlen < e.len ? prevlen : e.len;
			int c = memcmp(prev, e.path, m);
			if (c > 0 || (c == 0 && prevlen >= e.len))
				abort(); /* not strictly ascending */
		}
		first = false;
		prevlen = e.len < sizeof(prev) ? e.len : sizeof(prev);
		memcpy(prev, e.path, prevlen);
	}
	if (n < 0 && err.code != EBADMSG)
		abort();
}

/* Hostile blocks and lists. */
static void hostile(struct fuzz_input *in)
{
	uint64_t nblocks = fuzz_byte(in);
	nblocks = nblocks << 8 | fuzz_byte(in);
	struct fidx_pathindex_list lists[16];
	size_t n = 0;
	for (uint8_t len; n < 16 && (len = fuzz_byte(in)) != 0;) {
		if (len > in->n)
			len = (uint8_t)in->n;
		lists[n].p = in->p;
		lists[n++].len = len;
		in->p += len;
		in->n -= len;
	}
	uint32_t *blocks = NULL;
	size_t count = 0;
	struct fidx_error err = {0};
	if (fidx_pathindex_choose(lists, n, nblocks, &blocks, &count, &err) == 0) {
		for (size_t i = 0; i < count; i++)
			if (blocks[i] >= nblocks || (i && blocks[i] <= blocks[i - 1]))
				abort();
	} else if (err.code != EBADMSG) {
		abort();
	}
	free(blocks);
	struct fidx_pathblock r = {0};
	read_block(&r, in->p, in->n);
	fidx_pathblock_free(&r);
}

/* What a build gave its sink, kept in memory. */
struct made {
	struct { void *p; size_t len; } block[512];
	uint32_t nblocks;
	struct { uint32_t tri; void *p; size_t len; } list[8192];
	size_t nlists;
};

/* Keeps block number block. */
static int keep_block(void *arg, uint32_t block, const void *data, size_t len,
		      struct fidx_error *err)
{
	struct made *m = arg;
	if (block != m->nblocks || block >= 512)
		abort();
	if (!(m->block[block].p = malloc(len ? len : 1)))
		return fidx_fail_nomem(err);
	memcpy(m->block[block].p, data, len);
	m->block[m->nblocks++].len = len;
	return 0;
}

/* Keeps the list of trigram tri. */
static int keep_list(void *arg, uint32_t tri, const void *list, size_t len,
		     struct fidx_error *err)
{
	struct made *m = arg;
	if (m->nlists == 8192 || (m->nlists && m->list[m->nlists - 1].tri >= tri))
		abort();
	if (!(m->list[m->nlists].p = malloc(len ? len : 1)))
		return fidx_fail_nomem(err);
	memcpy(m->list[m->nlists].p, list, len);
	m->list[m->nlists].tri = tri;
	m->list[m->nlists++].len = len;
	return 0;
}

/* Orders C strings by their bytes. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Builds an index of the input's paths and reads it back. */
static void round_trip(struct fuzz_input *in)
{
	char *paths[1024];
	size_t n = 0, len;
	if (in->n > 4096)
		in->n = 4096; /* at most 4,094 trigrams: the lists fit struct made */
	char *s;
	while (n < 1024 && (s = fuzz_piece(in, '\n', &len))) {
		if (len && s[0] == '/' && strlen(s) == len)
			paths[n++] = s;
		else
			free(s);
	}
	qsort(paths, n, sizeof(*paths), cmp_str);
	size_t u = 0;
	for (size_t i = 0; i < n; i++) {
		if (u && strcmp(paths[u - 1], paths[i]) == 0)
			free(paths[i]);
		else
			paths[u++] = paths[i];
	}
	n = u;

	static struct made m;
	memset(&m, 0, sizeof(m));
	struct fidx_pathindex_sink sink = {keep_block, keep_list, &m};
	struct fidx_error err = {0};
	struct fidx_pathindex_builder *b = fidx_pathindex_builder_new(&sink, &err);
	if (!b)
		abort();
	for (size_t i = 0; i < n; i++)
		if (fidx_pathindex_builder_add(b, (int64_t)i * 3 + 1, paths[i], strlen(paths[i]),
					       &err) < 0)
			abort();
	struct fidx_pathindex_totals t;
	if (fidx_pathindex_builder_end(b, &t, &err) < 0 || t.paths != n || t.blocks != m.nblocks)
		abort();
	fidx_pathindex_builder_free(b);

	/* Every path back, in order, with its id. */
	struct fidx_pathblock r = {0};
	size_t next = 0;
	for (uint32_t k = 0; k < m.nblocks; k++) {
		if (fidx_pathblock_start(&r, m.block[k].p, m.block[k].len, &err) < 0)
			abort();
		struct fidx_pathent e;
		int got;
		while ((got = fidx_pathblock_next(&r, &e, &err)) == 1) {
			if (next >= n || e.id != (int64_t)next * 3 + 1 || strcmp(e.path, paths[next]))
				abort();
			next++;
		}
		if (got < 0)
			abort();
	}
	if (next != n)
		abort();
	fidx_pathblock_free(&r);

	/* Each path as a literal: its own block must be among those chosen. */
	for (size_t i = 0; i < n; i += 7) {
		struct fidx_findpat_literal lit = {paths[i], strlen(paths[i])};
		uint32_t *tri = NULL;
		size_t ntri = 0;
		if (fidx_pathindex_literal_trigrams(&lit, 1, &tri, &ntri, &err) < 0)
			abort();
		struct fidx_pathindex_list *lists = calloc(ntri + 1, sizeof(*lists));
		if (!lists)
			abort();
		size_t nl = 0;
		for (size_t j = 0; j < ntri; j++)
			for (size_t k = 0; k < m.nlists; k++)
				if (m.list[k].tri == tri[j]) {
					lists[nl].p = m.list[k].p;
					lists[nl++].len = m.list[k].len;
				}
		if (nl != ntri)
			abort(); /* a trigram of an indexed path with no list */
		uint32_t *blocks = NULL;
		size_t count = 0;
		if (nl && fidx_pathindex_choose(lists, nl, m.nblocks, &blocks, &count, &err) < 0)
			abort();
		uint32_t own = (uint32_t)(i / FIDX_PATHINDEX_BLOCK);
		bool found = !nl;
		for (size_t j = 0; j < count; j++)
			found |= blocks[j] == own;
		if (!found)
			abort();
		free(blocks);
		free(lists);
		free(tri);
	}
	for (uint32_t k = 0; k < m.nblocks; k++)
		free(m.block[k].p);
	for (size_t k = 0; k < m.nlists; k++)
		free(m.list[k].p);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
}

/* One input: hostile bytes, or a round trip (its first byte says). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = {data, size};
	if (fuzz_byte(&in) & 1)
		round_trip(&in);
	else
		hostile(&in);
	return 0;
}
