/*
 * pathindex.c - the substring index of a scan's paths (pathindex.h).
 *
 * Layout (the tables are created by the store's migration to version 2;
 * docs/SCHEMA.md describes them for readers):
 *
 *   path_block(key = scan_id << 32 | block, data BLOB)
 *       data = for each of up to FIDX_PATHINDEX_BLOCK paths, in byte order:
 *           varint shared     bytes shared with the previous path of the block
 *                             (0 for the first)
 *           varint rest       bytes that follow
 *           rest bytes        the path's bytes from offset shared on
 *           varint zigzag(id - previous id)   file.id (previous: 0 at the start)
 *   path_trigram(key = scan_id << 24 | trigram, blocks BLOB)
 *       blocks = the blocks whose paths contain the trigram (ASCII letters
 *       lower-cased, so one index serves case-sensitive and -i queries):
 *       the first block number, then the gaps to the next, as varints
 *   path_index(scan_id, paths, blocks, trigrams, built_ns)
 *       written last, in the same transaction: its row says the scan's
 *       index is whole
 *
 * Varints are LEB128: 7 bits a byte, low bits first, high bit = more.
 *
 * Building reads `SELECT id, path FROM file WHERE scan_id = ? ORDER BY path`
 * (the file_scan_path index gives that order without sorting), writes each
 * block as it fills, and keeps one growing posting list per trigram in an
 * open-addressing hash table; a trigram is added to a block's list once (the
 * list remembers its last block).  Paths in a block share long prefixes, and
 * the trigrams of the shared prefix were added with the previous path, so
 * only the trigrams that reach into a path's own bytes are looked at.
 *
 *     file rows ──► block buffer ──full──► INSERT path_block
 *       (sorted)     │
 *                    └─ new trigrams ──► hash table: trigram → block list
 *                                          └─ at the end, sorted ──► INSERT path_trigram
 *
 * Reading with trigrams: each trigram's list is fetched (a missing one means
 * no block can match), the shortest is decoded and intersected with the
 * others, and only those blocks are read, in order.  The caller verifies
 * every path: the index narrows, it never decides.
 */
#include "pathindex.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Initial slots of the trigram table (a power of two); it doubles at half full. */
#define TRIMAP_SLOTS (1u << 16)

/* A growing byte buffer. */
struct buf {
	unsigned char *p;  /* bytes (malloc'ed) */
	size_t len;        /* in use */
	size_t cap;        /* allocated */
};

/* Makes room for n more bytes.  Returns 0, or -1 (ENOMEM). */
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

/* One trigram's posting list while building. */
struct posting {
	uint32_t tri;      /* the trigram; 0 marks a free slot (no path holds NUL) */
	uint32_t last;     /* last block added + 1; 0 while none */
	struct buf list;   /* varints: first block, then gaps */
};

/* What a build holds. */
struct builder {
	sqlite3 *db;
	int64_t scan_id;
	struct posting *slot;   /* open addressing, linear probing */
	size_t nslots;          /* a power of two */
	size_t used;            /* trigrams in the table */
	struct buf block;       /* the block being filled */
	unsigned inblock;       /* paths in it */
	uint32_t nblock;        /* its number (blocks written before it) */
	int64_t prev_id;        /* previous file id of the block */
	struct buf prev;        /* previous path of the block (shared prefix) */
	uint64_t paths;         /* paths added */
	sqlite3_stmt *put_block;
	sqlite3_stmt *put_tri;
	struct fidx_error *err; /* why the build failed, for the caller */
};

/* Doubles the trigram table.  Returns 0, or -1 (ENOMEM). */
static int trimap_grow(struct builder *b)
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

/* Adds block b->nblock to trigram tri's list.  Returns 0, or -1 (ENOMEM). */
static int trimap_add(struct builder *b, uint32_t tri)
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

/* Writes the block being filled (if any paths are in it).  Returns 0, or -1 (EIO). */
static int flush_block(struct builder *b)
{
	if (!b->inblock)
		return 0;
	sqlite3_bind_int64(b->put_block, 1, (b->scan_id << 32) | b->nblock);
	sqlite3_bind_blob(b->put_block, 2, b->block.p, (int)b->block.len, SQLITE_STATIC);
	int rc = sqlite3_step(b->put_block);
	sqlite3_reset(b->put_block);
	if (rc != SQLITE_DONE) {
		errno = EIO;
		return -1;
	}
	b->block.len = 0;
	b->inblock = 0;
	b->nblock++;
	return 0;
}

/* Adds one path (in byte order after the previous one).  Returns 0, or -1 with errno set. */
static int add_path(struct builder *b, int64_t id, const unsigned char *path, size_t len)
{
	if (b->inblock == FIDX_PATHINDEX_BLOCK && flush_block(b) < 0)
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
		goto nomem;
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
				goto nomem;
		}
	}

	b->prev.len = 0;
	if (buf_reserve(&b->prev, len) < 0)
		goto nomem;
	memcpy(b->prev.p, path, len);
	b->prev.len = len;
	b->inblock++;
	b->paths++;
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

/* qsort() order of postings by trigram. */
static int cmp_posting(const void *a, const void *b)
{
	uint32_t x = ((const struct posting *)a)->tri, y = ((const struct posting *)b)->tri;
	return (x > y) - (x < y);
}

/* Writes every posting list, in key order.  Returns 0, or -1 (EIO). */
static int write_trigrams(struct builder *b)
{
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
		sqlite3_bind_int64(b->put_tri, 1, (b->scan_id << 24) | p->tri);
		sqlite3_bind_blob(b->put_tri, 2, p->list.p, (int)p->list.len, SQLITE_STATIC);
		int rc = sqlite3_step(b->put_tri);
		sqlite3_reset(b->put_tri);
		if (rc != SQLITE_DONE) {
			errno = EIO;
			return -1;
		}
	}
	return 0;
}

/* Frees what a build holds. */
static void builder_free(struct builder *b)
{
	for (size_t i = 0; i < b->nslots; i++)
		free(b->slot[i].list.p);
	free(b->slot);
	free(b->block.p);
	free(b->prev.p);
	sqlite3_finalize(b->put_block);
	sqlite3_finalize(b->put_tri);
}

/* Prepares sql into *s.  Returns 0, or -1 (EIO). */
static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **s)
{
	if (sqlite3_prepare_v2(db, sql, -1, s, NULL) != SQLITE_OK) {
		errno = EIO;
		return -1;
	}
	return 0;
}

/* Fills err with why the last step failed (errno's text, or SQLite's for EIO). */
static void failure(sqlite3 *db, struct fidx_error *err)
{
	int code = errno;
	fidx_fail(err, code, "%s", code == EIO ? sqlite3_errmsg(db) : strerror(code));
}

/*
 * Reads the scan's rows into the builder and writes its tables.  Returns 0,
 * or -1 with errno set and why in b->err (taken at once: finalizing a
 * statement clears SQLite's message).
 */
static int build_rows(struct builder *b)
{
	sqlite3_stmt *rows = NULL, *done = NULL;
	int ret = -1, rc;

	if (prepare(b->db, "SELECT id, path FROM file WHERE scan_id = ? ORDER BY path", &rows) < 0 ||
	    prepare(b->db, "INSERT INTO path_block (key, data) VALUES (?, ?)", &b->put_block) < 0 ||
	    prepare(b->db, "INSERT INTO path_trigram (key, blocks) VALUES (?, ?)", &b->put_tri) < 0 ||
	    prepare(b->db, "INSERT INTO path_index (scan_id, paths, blocks, trigrams, built_ns)"
			   " VALUES (?, ?, ?, ?, ?)", &done) < 0)
		goto out;
	if (trimap_grow(b) < 0) {
		errno = ENOMEM;
		goto out;
	}
	sqlite3_bind_int64(rows, 1, b->scan_id);
	while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
		const unsigned char *path = sqlite3_column_text(rows, 1);
		if (!path) {
			errno = ENOMEM;
			goto out;
		}
		if (add_path(b, sqlite3_column_int64(rows, 0), path,
			     (size_t)sqlite3_column_bytes(rows, 1)) < 0)
			goto out;
	}
	if (rc != SQLITE_DONE) {
		errno = EIO;
		goto out;
	}
	if (flush_block(b) < 0 || write_trigrams(b) < 0)
		goto out;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	sqlite3_bind_int64(done, 1, b->scan_id);
	sqlite3_bind_int64(done, 2, (sqlite3_int64)b->paths);
	sqlite3_bind_int64(done, 3, b->nblock);
	sqlite3_bind_int64(done, 4, (sqlite3_int64)b->used);
	sqlite3_bind_int64(done, 5, (sqlite3_int64)now.tv_sec * 1000000000 + now.tv_nsec);
	if (sqlite3_step(done) != SQLITE_DONE) {
		errno = EIO;
		goto out;
	}
	ret = 0;
out:
	if (ret < 0)
		failure(b->db, b->err);
	sqlite3_finalize(rows);
	sqlite3_finalize(done);
	return ret;
}

/*
 * Returns 1 when scan scan_id has its index, 0 when not, or -1 (EIO): within
 * the build's transaction, so that a scan another fidx indexed after the
 * caller looked (two scans ending together) is not indexed twice.
 */
static int indexed(sqlite3 *db, int64_t scan_id)
{
	sqlite3_stmt *s;
	if (prepare(db, "SELECT 1 FROM path_index WHERE scan_id = ?", &s) < 0)
		return -1;
	sqlite3_bind_int64(s, 1, scan_id);
	int rc = sqlite3_step(s);
	int ret = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
	if (ret < 0)
		errno = EIO;
	sqlite3_finalize(s);
	return ret;
}

int fidx_pathindex_build(sqlite3 *db, int64_t scan_id, struct fidx_error *err)
{
	struct builder b = {.db = db, .scan_id = scan_id, .err = err};
	int ret = -1;

	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		errno = EIO;
		failure(db, err);
		return -1;
	}
	int have = indexed(db, scan_id);
	if (have < 0)
		failure(db, err);
	else
		ret = have ? 0 : build_rows(&b);
	if (ret == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		errno = EIO;
		failure(db, err);
		ret = -1;
	}
	builder_free(&b);
	if (ret < 0) {
		int e = errno;
		if (!sqlite3_get_autocommit(db))
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		errno = e;
	}
	return ret;
}

int fidx_pathindex_build_missing(sqlite3 *db, struct fidx_error *err)
{
	sqlite3_stmt *s;
	int64_t *ids = NULL;
	size_t n = 0, cap = 0;
	int rc, ret = -1;

	if (prepare(db, "SELECT id FROM scan WHERE status = 'complete'"
			" AND id NOT IN (SELECT scan_id FROM path_index) ORDER BY id", &s) < 0) {
		failure(db, err);
		return -1;
	}
	/* Collected first: the builds write while nothing else reads. */
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 8;
			int64_t *p = realloc(ids, ncap * sizeof(*p));
			if (!p) {
				errno = ENOMEM;
				failure(db, err);
				goto out;
			}
			ids = p;
			cap = ncap;
		}
		ids[n++] = sqlite3_column_int64(s, 0);
	}
	if (rc != SQLITE_DONE) {
		errno = EIO;
		failure(db, err);
		goto out;
	}
	sqlite3_finalize(s);
	s = NULL;
	for (size_t i = 0; i < n; i++)
		if (fidx_pathindex_build(db, ids[i], err) < 0)
			goto out;
	ret = 0;
out:
	sqlite3_finalize(s);
	free(ids);
	return ret;
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

struct fidx_pathiter {
	sqlite3 *db;
	int64_t scan_id;
	bool indexed;              /* reading blocks (else the file table) */
	sqlite3_stmt *stmt;        /* the block look-up, or the file-table query */
	uint32_t *blocks;          /* the blocks to read, ascending; NULL: every one, 0 to nblocks - 1 */
	size_t nblocks;            /* how many */
	size_t next_block;         /* the next to read */
	const unsigned char *p;    /* the rest of the current block */
	const unsigned char *end;
	int64_t prev_id;           /* the id before, within the block */
	struct buf path;           /* the current path, NUL-terminated */
	int64_t where;             /* the block read (in the index) or the row (in the file table) */
	const char *damage;        /* what is wrong there, after an EBADMSG */
};

/* Notes what is wrong where the iterator reads.  Returns -1 with errno EBADMSG. */
static int damaged(struct fidx_pathiter *it, const char *what)
{
	it->damage = what;
	errno = EBADMSG;
	return -1;
}

/* Fetches the block list of one trigram into *list (NULL when none).  Returns 0, or -1 (EIO, ENOMEM). */
static int fetch_list(sqlite3_stmt *s, int64_t key, struct buf *list)
{
	sqlite3_bind_int64(s, 1, key);
	int rc = sqlite3_step(s);
	int ret = 0;
	list->len = 0;
	if (rc == SQLITE_ROW) {
		const void *p = sqlite3_column_blob(s, 0);
		size_t n = (size_t)sqlite3_column_bytes(s, 0);
		if (buf_reserve(list, n + 1) < 0) {
			errno = ENOMEM;
			ret = -1;
		} else {
			if (n)
				memcpy(list->p, p, n);
			list->len = n;
		}
	} else if (rc != SQLITE_DONE) {
		errno = EIO;
		ret = -1;
	}
	sqlite3_reset(s);
	return ret;
}

/*
 * Keeps in blocks[0..*n) those that are also in the varint list l.  Returns 0,
 * or -1 (EBADMSG) when the list is damaged.
 */
static int intersect(uint32_t *blocks, size_t *n, const struct buf *l)
{
	const unsigned char *p = l->p, *end = l->p + l->len;
	uint64_t cur = 0, v;
	size_t k = 0, i = 0;
	bool first = true;

	while (i < *n && p < end) {
		if (get_varint(&p, end, &v) < 0 || (!first && v == 0))
			goto bad;
		cur = first ? v : cur + v;
		first = false;
		while (i < *n && blocks[i] < cur)
			i++;
		if (i < *n && blocks[i] == cur)
			blocks[k++] = blocks[i++];
	}
	*n = k;
	return 0;
bad:
	errno = EBADMSG;
	return -1;
}

/* Decodes the varint list l into it->blocks.  Returns 0, or -1 (ENOMEM, EBADMSG). */
static int decode_list(struct fidx_pathiter *it, const struct buf *l, uint64_t nblocks)
{
	const unsigned char *p = l->p, *end = l->p + l->len;
	uint64_t cur = 0, v;
	size_t n = 0;

	/* A list has at most one entry per byte. */
	if (!(it->blocks = malloc((l->len ? l->len : 1) * sizeof(*it->blocks)))) {
		errno = ENOMEM;
		return -1;
	}
	while (p < end) {
		if (get_varint(&p, end, &v) < 0 || (n && v == 0) || (cur = n ? cur + v : v) >= nblocks) {
			errno = EBADMSG;
			return -1;
		}
		it->blocks[n++] = (uint32_t)cur;
	}
	it->nblocks = n;
	return 0;
}

/* The list sizes, for choosing the shortest first. */
struct sized { size_t i, len; };

/* qsort() order by length. */
static int cmp_sized(const void *a, const void *b)
{
	size_t x = ((const struct sized *)a)->len, y = ((const struct sized *)b)->len;
	return (x > y) - (x < y);
}

/*
 * Fills it->blocks with the blocks that hold every trigram; when ntri is 0,
 * all nblocks of them, without a list (it->blocks NULL: the count comes from
 * the path_index row, which may be damaged, and a block that is not there
 * is found when it is read).  Returns 0, or -1 with errno set.
 */
static int choose_blocks(struct fidx_pathiter *it, uint64_t nblocks, const uint32_t *tri,
			 size_t ntri)
{
	sqlite3_stmt *s = NULL;
	struct buf *lists = NULL;
	struct sized *order = NULL;
	int ret = -1;

	if (ntri == 0) {
		it->nblocks = nblocks;
		return 0;
	}
	if (prepare(it->db, "SELECT blocks FROM path_trigram WHERE key = ?", &s) < 0)
		return -1;
	if (!(lists = calloc(ntri, sizeof(*lists))) || !(order = calloc(ntri, sizeof(*order)))) {
		errno = ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ntri; i++) {
		if (fetch_list(s, (it->scan_id << 24) | tri[i], &lists[i]) < 0)
			goto out;
		if (lists[i].len == 0) { /* a trigram no path has: nothing can match */
			ret = 0;
			goto out;
		}
		order[i] = (struct sized){i, lists[i].len};
	}
	qsort(order, ntri, sizeof(*order), cmp_sized);
	if (decode_list(it, &lists[order[0].i], nblocks) < 0)
		goto out;
	for (size_t i = 1; i < ntri && it->nblocks; i++)
		if (intersect(it->blocks, &it->nblocks, &lists[order[i].i]) < 0)
			goto out;
	ret = 0;
out:
	for (size_t i = 0; lists && i < ntri; i++)
		free(lists[i].p);
	free(lists);
	free(order);
	sqlite3_finalize(s);
	return ret;
}

/*
 * Looks up the scan's index: sets *nblocks and returns 1 when it has one, 0
 * when not (no row, or no path_index table: schema version 1).  Returns -1
 * (EIO) on failure.
 */
static int find_index(sqlite3 *db, int64_t scan_id, uint64_t *nblocks)
{
	sqlite3_stmt *s;
	int rc, ret = -1;

	if (prepare(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
			" AND name IN ('path_index', 'path_block', 'path_trigram')", &s) < 0)
		return -1;
	rc = sqlite3_step(s);
	long long tables = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW) {
		errno = EIO;
		return -1;
	}
	if (tables != 3)
		return 0;
	if (prepare(db, "SELECT blocks FROM path_index WHERE scan_id = ?", &s) < 0)
		return -1;
	sqlite3_bind_int64(s, 1, scan_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		sqlite3_int64 n = sqlite3_column_int64(s, 0);
		if (n < 0 || n > UINT32_MAX) {
			errno = EBADMSG;
		} else {
			*nblocks = (uint64_t)n;
			ret = 1;
		}
	} else if (rc == SQLITE_DONE) {
		ret = 0;
	} else {
		errno = EIO;
	}
	sqlite3_finalize(s);
	return ret;
}

struct fidx_pathiter *fidx_pathiter_open(sqlite3 *db, int64_t scan_id, const uint32_t *tri,
					 size_t ntri)
{
	struct fidx_pathiter *it = calloc(1, sizeof(*it));
	uint64_t nblocks = 0;
	int found;

	if (!it) {
		errno = ENOMEM;
		return NULL;
	}
	it->db = db;
	it->scan_id = scan_id;
	if ((found = find_index(db, scan_id, &nblocks)) < 0)
		goto fail;
	it->indexed = found;
	if (it->indexed) {
		if (choose_blocks(it, nblocks, tri, ntri) < 0 ||
		    prepare(db, "SELECT data FROM path_block WHERE key = ?", &it->stmt) < 0)
			goto fail;
	} else {
		if (prepare(db, "SELECT id, path FROM file WHERE scan_id = ? ORDER BY path",
			    &it->stmt) < 0)
			goto fail;
		sqlite3_bind_int64(it->stmt, 1, scan_id);
	}
	return it;
fail:;
	int err = errno;
	fidx_pathiter_close(it);
	errno = err;
	return NULL;
}

bool fidx_pathiter_indexed(const struct fidx_pathiter *it)
{
	return it->indexed;
}

size_t fidx_pathiter_blocks(const struct fidx_pathiter *it)
{
	return it->indexed ? it->nblocks : 0;
}

/* Sets the iterator's path to the n bytes at p.  Returns 0, or -1 (ENOMEM). */
static int set_path(struct fidx_pathiter *it, const void *p, size_t n, size_t keep)
{
	it->path.len = keep;
	if (buf_reserve(&it->path, n + 1) < 0) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(it->path.p + keep, p, n);
	it->path.len = keep + n;
	it->path.p[it->path.len] = '\0';
	return 0;
}

/* Gives the next row of the file-table query.  Returns 1, 0 at the end, or -1. */
static int next_row(struct fidx_pathiter *it, struct fidx_pathent *e)
{
	int rc = sqlite3_step(it->stmt);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW) {
		errno = EIO;
		return -1;
	}
	it->where = sqlite3_column_int64(it->stmt, 0);
	int type = sqlite3_column_type(it->stmt, 1);
	const unsigned char *path = sqlite3_column_text(it->stmt, 1);
	if (type != SQLITE_TEXT || !path || path[0] != '/') {
		if (type == SQLITE_TEXT && !path) {
			errno = ENOMEM;
			return -1;
		}
		return damaged(it, type == SQLITE_TEXT ? "a path that is not absolute"
				   : "a path that is not text");
	}
	e->id = it->where;
	e->path = (const char *)path;
	e->len = (size_t)sqlite3_column_bytes(it->stmt, 1);
	return 1;
}

/* Reads the next chosen block.  Returns 1, 0 when none is left, or -1. */
static int load_block(struct fidx_pathiter *it)
{
	if (it->next_block == it->nblocks)
		return 0;
	sqlite3_reset(it->stmt);
	it->where = it->blocks ? it->blocks[it->next_block] : it->next_block;
	it->next_block++;
	sqlite3_bind_int64(it->stmt, 1, (it->scan_id << 32) | it->where);
	int rc = sqlite3_step(it->stmt);
	if (rc == SQLITE_DONE)
		return damaged(it, "a block that is missing");
	if (rc != SQLITE_ROW) {
		errno = EIO;
		return -1;
	}
	it->p = sqlite3_column_blob(it->stmt, 0);
	int n = sqlite3_column_bytes(it->stmt, 0);
	if (sqlite3_column_type(it->stmt, 0) != SQLITE_BLOB || !it->p || n == 0)
		return damaged(it, "a block that is empty or not a blob");
	it->end = it->p + n;
	it->prev_id = 0;
	it->path.len = 0;
	return 1;
}

int fidx_pathiter_next(struct fidx_pathiter *it, struct fidx_pathent *e)
{
	uint64_t shared, rest, zid;

	if (!it->indexed)
		return next_row(it, e);
	if (it->p == it->end) {
		int rc = load_block(it);
		if (rc <= 0)
			return rc;
	}
	if (get_varint(&it->p, it->end, &shared) < 0 || get_varint(&it->p, it->end, &rest) < 0 ||
	    shared > it->path.len || rest > (uint64_t)(it->end - it->p))
		return damaged(it, "a path cut short");
	/*
	 * Paths are absolute and strictly ascending: a path sharing a prefix with
	 * the one before has more bytes than that prefix, and its first own byte
	 * is above the previous path's byte there.
	 */
	if (rest == 0 || (shared == 0 && it->p[0] != '/') ||
	    (shared < it->path.len && it->p[0] <= it->path.p[shared]))
		return damaged(it, "a path out of order");
	if (set_path(it, it->p, rest, shared) < 0)
		return -1;
	it->p += rest;
	if (get_varint(&it->p, it->end, &zid) < 0)
		return damaged(it, "a row id cut short");
	/* In unsigned arithmetic: a hostile delta wraps instead of overflowing. */
	it->prev_id = (int64_t)((uint64_t)it->prev_id + ((zid >> 1) ^ -(zid & 1)));
	if (it->prev_id <= 0)
		return damaged(it, "a row id out of range");
	e->id = it->prev_id;
	e->path = (const char *)it->path.p;
	e->len = it->path.len;
	return 1;
}

int64_t fidx_pathiter_where(const struct fidx_pathiter *it, const char **damage)
{
	*damage = it->damage ? it->damage : "unreadable";
	return it->where;
}

void fidx_pathiter_close(struct fidx_pathiter *it)
{
	if (!it)
		return;
	sqlite3_finalize(it->stmt);
	free(it->blocks);
	free(it->path.p);
	free(it);
}
