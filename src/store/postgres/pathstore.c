/*
 * pathstore.c - where the PostgreSQL store keeps the path index of its scans
 * (the bytes are core/pathindex.c's, as in a SQLite database):
 *
 *   fidx.path_block(scan_id, block, data)      one block of sorted paths
 *   fidx.path_trigram(scan_id, tri, blocks)    one trigram's list of blocks
 *   fidx.path_index(scan_id, paths, ...)       written last: the index is whole
 *
 * Why not pg_trgm: a GIN trigram index on the paths made each scan written
 * 3.5 times slower on the server (docs/BENCHMARKS.md, "fidx on PostgreSQL"),
 * and the server is the one machine a fleet shares.  This index is built by
 * the writer, on the host that scanned, and is small (a block of 32 paths is
 * front-coded): the server only stores it.
 *
 * Building: the scan's (id, path) come back in byte order with one binary
 * COPY TO (the file_scan_path index gives that order); no statement can run
 * while a COPY streams, so blocks and lists are encoded as the tuples of a
 * binary COPY FROM into buffers, sent when the reading is done: straight
 * into the tables, or for a role under row-level security (an ingest role)
 * into tables of the session and put in place with INSERT ... SELECT, which
 * the policies check (as the file rows' staging does); all in the
 * transaction that ends the scan.
 *
 * Reading: the lists of the query's trigrams in one statement, the chosen
 * blocks in statements of up to FETCH_BLOCKS, decoded by the core.
 */
#include "postgres.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pathindex.h"

/* Blocks read per statement. */
#define FETCH_BLOCKS 256

/* A growing buffer of COPY data. */
struct copybuf {
	char *p;
	size_t len, cap;
};

/* Appends n bytes.  Returns 0, or -1 (out of memory). */
static int put_bytes(struct copybuf *b, const void *v, size_t n)
{
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 65536;
		while (cap - b->len < n)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, v, n);
	b->len += n;
	return 0;
}

/* Appends a big-endian 32-bit integer. */
static int put32(struct copybuf *b, uint32_t v)
{
	v = htonl(v);
	return put_bytes(b, &v, 4);
}

/* Appends a big-endian 64-bit integer. */
static int put64(struct copybuf *b, int64_t v)
{
	char x[8];
	pg_put64(x, v);
	return put_bytes(b, x, 8);
}

/* A build (pg_pathindex_build()). */
struct build {
	struct pg_store *st;
	struct fidx_pathindex_builder *pb;
	int64_t scan, host;          /* the scan indexed and its host */
	struct copybuf blocks, tris; /* the rows of path_block and path_trigram, as COPY tuples */
};

/*
 * Appends one row (scan_id, n, data, host_id: bigint, integer, bytea,
 * bigint) of path_block or path_trigram to c.  Returns 0, or -1 with err set.
 */
static int put_row(struct build *b, struct copybuf *c, uint32_t n, const void *data, size_t len,
		   struct fidx_error *err)
{
	static const char four[2] = {0, 4};
	if (put_bytes(c, four, 2) < 0 || put32(c, 8) < 0 || put64(c, b->scan) < 0 ||
	    put32(c, 4) < 0 || put32(c, n) < 0 || put32(c, (uint32_t)len) < 0 ||
	    put_bytes(c, data, len) < 0 || put32(c, 8) < 0 || put64(c, b->host) < 0)
		return fidx_fail_nomem(err);
	return 0;
}

/* The builder's sink: a block. */
static int sink_block(void *arg, uint32_t block, const void *data, size_t len,
		      struct fidx_error *err)
{
	struct build *b = arg;
	return put_row(b, &b->blocks, block, data, len, err);
}

/* The builder's sink: a trigram's list. */
static int sink_trigram(void *arg, uint32_t tri, const void *list, size_t len,
			struct fidx_error *err)
{
	struct build *b = arg;
	return put_row(b, &b->tris, tri, list, len, err);
}

/* pg_copy_out()'s tuple: (id, path) into the builder. */
static int build_tuple(void *arg, int n, const char *const *val, const int32_t *len,
		       struct fidx_error *err)
{
	struct build *b = arg;
	(void)n;
	if (len[0] != 8 || len[1] < 1 || val[1][0] != '/')
		return fidx_fail(err, EBADMSG, "database '%s'%s is damaged: a path that is not"
				 " absolute", fidx_quote(b->st->name), b->st->origin);
	return fidx_pathindex_builder_add(b->pb, pg_get64(val[0]), val[1], (size_t)len[1], err);
}

/* Sends the rows of c with the COPY FROM STDIN of sql.  Returns 0, or -1 with err set. */
static int send_copy(struct pg_store *st, const char *sql, const struct copybuf *c,
		     struct fidx_error *err)
{
	static const char header[19] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";
	PGresult *res = PQexec(st->conn, sql);
	if (!res || PQresultStatus(res) != PGRES_COPY_IN) {
		PQclear(res);
		return pg_fail(st, err, "write", NULL);
	}
	PQclear(res);
	int rc = PQputCopyData(st->conn, header, sizeof(header)) == 1 &&
		 (c->len == 0 || PQputCopyData(st->conn, c->p, (int)c->len) == 1) &&
		 PQputCopyData(st->conn, "\377\377", 2) == 1 && PQputCopyEnd(st->conn, NULL) == 1
		 ? 0 : pg_fail(st, err, "write", NULL);
	return pg_drain(st, rc, "write", err);
}

/*
 * Puts the rows built into path_block and path_trigram: with COPY, or, for
 * a role under row-level security (which COPY FROM cannot check; st->staged
 * not 0), through tables of the session and INSERT ... SELECT.  Those are
 * emptied first: they are emptied at commit only, and one transaction may
 * build several indexes (fidx prune rebuilding scans whole).  Returns 0, or
 * -1 with err set.
 */
static int send_rows(struct build *b, struct fidx_error *err)
{
	struct pg_store *st = b->st;
	if (st->staged == 0)
		return send_copy(st, "COPY fidx.path_block (scan_id, block, data, host_id) FROM STDIN"
				 " (FORMAT binary)", &b->blocks, err) < 0 ||
		       send_copy(st, "COPY fidx.path_trigram (scan_id, tri, blocks, host_id) FROM"
				 " STDIN (FORMAT binary)", &b->tris, err) < 0 ? -1 : 0;
	return pg_run(st, "CREATE TEMP TABLE IF NOT EXISTS fidx_pblock (LIKE fidx.path_block)"
		      " ON COMMIT DELETE ROWS", NULL, "write", err) < 0 ||
	       pg_run(st, "CREATE TEMP TABLE IF NOT EXISTS fidx_ptri (LIKE fidx.path_trigram)"
		      " ON COMMIT DELETE ROWS", NULL, "write", err) < 0 ||
	       pg_run(st, "TRUNCATE pg_temp.fidx_pblock, pg_temp.fidx_ptri", NULL, "write",
		      err) < 0 ||
	       send_copy(st, "COPY pg_temp.fidx_pblock (scan_id, block, data, host_id) FROM STDIN"
			 " (FORMAT binary)", &b->blocks, err) < 0 ||
	       send_copy(st, "COPY pg_temp.fidx_ptri (scan_id, tri, blocks, host_id) FROM STDIN"
			 " (FORMAT binary)", &b->tris, err) < 0 ||
	       pg_run(st, "INSERT INTO fidx.path_block SELECT * FROM pg_temp.fidx_pblock", NULL,
		      "write", err) < 0 ||
	       pg_run(st, "INSERT INTO fidx.path_trigram SELECT * FROM pg_temp.fidx_ptri", NULL,
		      "write", err) < 0 ? -1 : 0;
}

int pg_pathindex_build(struct pg_store *st, int64_t scan_id, struct fidx_error *err)
{
	struct fidx_pathindex_sink sink = {.block = sink_block, .trigram = sink_trigram};
	struct build b = {.st = st, .scan = scan_id};
	struct fidx_pathindex_totals t;
	struct pg_params p = {0};
	char sql[256];
	int rc = -1;

	sink.arg = &b;
	pg_param_int(&p, scan_id);
	PGresult *res = pg_exec(st, "SELECT s.host_id, i.scan_id FROM fidx.scan s LEFT JOIN"
				" fidx.path_index i ON i.scan_id = s.id WHERE s.id = $1", &p,
				"write", err);
	if (!res)
		return -1;
	bool found = PQntuples(res) == 1, have = found && !PQgetisnull(res, 0, 1);
	b.host = found ? pg_int(res, 0, 0) : 0;
	PQclear(res);
	if (!found)
		return fidx_fail(err, ENOENT, "cannot write database '%s'%s: no scan %" PRId64,
				 fidx_quote(st->name), st->origin, scan_id);
	if (have)
		return 0;
	if (!(b.pb = fidx_pathindex_builder_new(&sink, err)))
		return -1;
	/* COPY takes no parameters: the scan id is a number fidx formats. */
	snprintf(sql, sizeof(sql), "COPY (SELECT id, path FROM fidx.file WHERE scan_id = %" PRId64
		 " ORDER BY scan_id, path) TO STDOUT (FORMAT binary)", scan_id);
	if (pg_copy_out(st, sql, 2, build_tuple, &b, err) < 0 ||
	    fidx_pathindex_builder_end(b.pb, &t, err) < 0 || send_rows(&b, err) < 0)
		goto out;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	pg_param_int(&p, b.host);
	pg_param_int(&p, (int64_t)t.paths);
	pg_param_int(&p, t.blocks);
	pg_param_int(&p, (int64_t)t.trigrams);
	pg_param_int(&p, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
	if (pg_run(st, "INSERT INTO fidx.path_index (scan_id, host_id, paths, blocks, trigrams,"
		   " built_ns) VALUES ($1, $2, $3, $4, $5, $6)", &p, "write", err) < 0)
		goto out;
	rc = 0;
out:
	fidx_pathindex_builder_free(b.pb);
	free(b.blocks.p);
	free(b.tris.p);
	return rc;
}

/* ---------------------------------------------------------------- reading -- */

struct pg_pathindex {
	struct pg_store *st;
	int64_t scan;
	uint32_t *blocks;             /* the blocks to read, ascending */
	size_t nblocks, next;         /* how many; the next to fetch */
	PGresult *fetched;            /* the blocks fetched last */
	int row;                      /* the next of them to read */
	struct fidx_pathblock block;  /* the one being read */
	bool in_block;
	int64_t where;                /* its number */
};

/* Fills err with "the path index of scan N ... is damaged (what)".  Returns -1. */
static int damaged(struct pg_pathindex *it, const char *what, struct fidx_error *err)
{
	char why[160];
	snprintf(why, sizeof(why), "%.150s", what);
	return fidx_fail(err, EBADMSG, "the path index of scan %" PRId64 " in database '%s'%s is"
			 " damaged (block %" PRId64 ": %s)", it->scan, fidx_quote(it->st->name),
			 it->st->origin, it->where, why);
}

/* Writes the numbers n[0..count) as an array literal into s (room for 11 bytes each + 3). */
static void int_array(char *s, const uint32_t *n, size_t count)
{
	size_t len = 0;
	s[len++] = '{';
	for (size_t i = 0; i < count; i++)
		len += (size_t)sprintf(s + len, "%s%" PRIu32, i ? "," : "", n[i]);
	s[len++] = '}';
	s[len] = '\0';
}

/*
 * Chooses the blocks of it that hold every trigram of tri (nblocks in all).
 * Returns 0, or -1 with err set.
 */
static int choose(struct pg_pathindex *it, uint64_t nblocks, const uint32_t *tri, size_t ntri,
		  struct fidx_error *err)
{
	struct fidx_pathindex_list *lists = calloc(ntri, sizeof(*lists));
	char *array = malloc(ntri * 11 + 3);
	PGresult *res = NULL;
	struct pg_params p = {0};
	int rc = -1;

	if (!lists || !array) {
		fidx_fail_nomem(err);
		goto out;
	}
	int_array(array, tri, ntri);
	pg_param_int(&p, it->scan);
	pg_param_text(&p, array);
	if (!(res = pg_exec(it->st, "SELECT tri, blocks FROM fidx.path_trigram WHERE scan_id = $1"
			    " AND tri = ANY($2::integer[])", &p, "read", err)))
		goto out;
	for (int r = 0; r < PQntuples(res); r++) {
		uint32_t t;
		if (PQgetlength(res, r, 0) != 4) {
			rc = damaged(it, "a trigram that is not a number", err);
			goto out;
		}
		memcpy(&t, PQgetvalue(res, r, 0), 4);
		t = ntohl(t);
		for (size_t i = 0; i < ntri; i++)
			if (tri[i] == t)
				lists[i] = (struct fidx_pathindex_list){PQgetvalue(res, r, 1),
									(size_t)PQgetlength(res, r, 1)};
	}
	struct fidx_error why;
	if (fidx_pathindex_choose(lists, ntri, nblocks, &it->blocks, &it->nblocks, &why) < 0) {
		rc = why.code == EBADMSG ? damaged(it, why.msg, err) : fidx_fail_copy(err, &why);
		goto out;
	}
	rc = 0;
out:
	PQclear(res);
	free(array);
	free(lists);
	return rc;
}

int pg_pathindex_open(struct pg_store *st, int64_t scan, const uint32_t *tri, size_t ntri,
		      struct pg_pathindex **out, struct fidx_error *err)
{
	struct pg_params p = {0};
	*out = NULL;
	if (pg_ready(st, err) < 0)
		return -1;
	pg_param_int(&p, scan);
	PGresult *res = pg_exec(st, "SELECT blocks FROM fidx.path_index WHERE scan_id = $1", &p,
				"read", err);
	if (!res)
		return -1;
	bool found = PQntuples(res) == 1;
	int64_t nblocks = found ? pg_int(res, 0, 0) : 0;
	PQclear(res);
	if (!found)
		return 0;
	struct pg_pathindex *it = calloc(1, sizeof(*it));
	if (!it)
		return fidx_fail_nomem(err);
	it->st = st;
	it->scan = scan;
	if (nblocks < 0 || nblocks > UINT32_MAX) {
		damaged(it, "a count of blocks out of range", err);
		goto fail;
	}
	if (choose(it, (uint64_t)nblocks, tri, ntri, err) < 0)
		goto fail;
	*out = it;
	return 1;
fail:
	pg_pathindex_close(it);
	return -1;
}

/* Fetches the next FETCH_BLOCKS chosen blocks.  Returns 1, 0 when none is left, or -1. */
static int fetch(struct pg_pathindex *it, struct fidx_error *err)
{
	if (it->next == it->nblocks)
		return 0;
	size_t n = it->nblocks - it->next < FETCH_BLOCKS ? it->nblocks - it->next : FETCH_BLOCKS;
	char array[FETCH_BLOCKS * 11 + 3];
	struct pg_params p = {0};
	int_array(array, it->blocks + it->next, n);
	pg_param_int(&p, it->scan);
	pg_param_text(&p, array);
	PQclear(it->fetched);
	it->fetched = pg_exec(it->st, "SELECT block, data FROM fidx.path_block WHERE scan_id = $1"
			      " AND block = ANY($2::integer[]) ORDER BY block", &p, "read", err);
	if (!it->fetched)
		return -1;
	/* Each block asked for, once, in order. */
	if ((size_t)PQntuples(it->fetched) != n) {
		it->where = it->blocks[it->next];
		return damaged(it, "a block that is missing", err);
	}
	it->row = 0;
	return 1;
}

int pg_pathindex_next(struct pg_pathindex *it, struct fidx_pathent *e, struct fidx_error *err)
{
	struct fidx_error why;
	for (;;) {
		if (it->in_block) {
			int rc = fidx_pathblock_next(&it->block, e, &why);
			if (rc > 0)
				return 1;
			if (rc < 0)
				return why.code == EBADMSG ? damaged(it, why.msg, err)
							   : fidx_fail_copy(err, &why);
			it->in_block = false;
		}
		if (!it->fetched || it->row == PQntuples(it->fetched)) {
			int rc = fetch(it, err);
			if (rc <= 0)
				return rc;
		}
		uint32_t b;
		int r = it->row++;
		it->where = it->blocks[it->next++];
		if (PQgetlength(it->fetched, r, 0) != 4)
			return damaged(it, "a block number that is not one", err);
		memcpy(&b, PQgetvalue(it->fetched, r, 0), 4);
		if (ntohl(b) != it->where)
			return damaged(it, "a block that is missing", err);
		if (fidx_pathblock_start(&it->block, PQgetvalue(it->fetched, r, 1),
					 (size_t)PQgetlength(it->fetched, r, 1), &why) < 0)
			return damaged(it, why.msg, err);
		it->in_block = true;
	}
}

void pg_pathindex_close(struct pg_pathindex *it)
{
	if (!it)
		return;
	PQclear(it->fetched);
	free(it->blocks);
	fidx_pathblock_free(&it->block);
	free(it);
}
