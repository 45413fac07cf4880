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
 * binary COPY FROM into a buffer, sent when the reading is done into a table
 * of the session, and put in place with INSERT ... SELECT (which row-level
 * security checks, as the file rows' staging does), all in one transaction.
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

/* Appends one tuple (kind, n, data: integer, integer, bytea).  Returns 0, or -1. */
static int put_tuple(struct copybuf *b, uint32_t kind, uint32_t n, const void *data, size_t len)
{
	static const char three[2] = {0, 3};
	return put_bytes(b, three, 2) < 0 || put32(b, 4) < 0 || put32(b, kind) < 0 ||
	       put32(b, 4) < 0 || put32(b, n) < 0 || put32(b, (uint32_t)len) < 0 ||
	       put_bytes(b, data, len) < 0 ? -1 : 0;
}

/* A build (pg_pathindex_build()). */
struct build {
	struct pg_store *st;
	struct fidx_pathindex_builder *pb;
	struct copybuf copy;   /* the tuples of pg_temp.fidx_pindex */
};

/* The builder's sink: a block (kind 0). */
static int sink_block(void *arg, uint32_t block, const void *data, size_t len,
		      struct fidx_error *err)
{
	struct build *b = arg;
	return put_tuple(&b->copy, 0, block, data, len) < 0 ? fidx_fail_nomem(err) : 0;
}

/* The builder's sink: a trigram's list (kind 1). */
static int sink_trigram(void *arg, uint32_t tri, const void *list, size_t len,
			struct fidx_error *err)
{
	struct build *b = arg;
	return put_tuple(&b->copy, 1, tri, list, len) < 0 ? fidx_fail_nomem(err) : 0;
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

/* Sends the tuples buffered into pg_temp.fidx_pindex.  Returns 0, or -1 with err set. */
static int send_copy(struct pg_store *st, struct copybuf *b, struct fidx_error *err)
{
	static const char header[19] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";
	if (pg_run(st, "CREATE TEMP TABLE IF NOT EXISTS fidx_pindex (kind integer, n integer,"
		   " data bytea) ON COMMIT DELETE ROWS", NULL, "write", err) < 0)
		return -1;
	PGresult *res = PQexec(st->conn, "COPY pg_temp.fidx_pindex FROM STDIN (FORMAT binary)");
	if (!res || PQresultStatus(res) != PGRES_COPY_IN) {
		PQclear(res);
		return pg_fail(st, err, "write", NULL);
	}
	PQclear(res);
	int rc = PQputCopyData(st->conn, header, sizeof(header)) == 1 &&
		 (b->len == 0 || PQputCopyData(st->conn, b->p, (int)b->len) == 1) &&
		 PQputCopyData(st->conn, "\377\377", 2) == 1 && PQputCopyEnd(st->conn, NULL) == 1
		 ? 0 : pg_fail(st, err, "write", NULL);
	while ((res = PQgetResult(st->conn))) {
		if (rc == 0 && PQresultStatus(res) != PGRES_COMMAND_OK) {
			char why[1024];
			rc = pg_fail(st, err, "write", pg_first_line(PQresultErrorMessage(res), why,
								     sizeof(why)));
		}
		PQclear(res);
	}
	return rc;
}

int pg_pathindex_build(struct pg_store *st, int64_t scan_id, struct fidx_error *err)
{
	struct fidx_pathindex_sink sink = {.block = sink_block, .trigram = sink_trigram};
	struct build b = {.st = st};
	struct fidx_pathindex_totals t;
	struct pg_params p = {0};
	char sql[256];
	int rc = -1;

	sink.arg = &b;
	pg_param_int(&p, scan_id);
	PGresult *res = pg_exec(st, "SELECT 1 FROM fidx.path_index WHERE scan_id = $1", &p,
				"write", err);
	if (!res)
		return -1;
	bool have = PQntuples(res) > 0;
	PQclear(res);
	if (have)
		return 0;
	if (!(b.pb = fidx_pathindex_builder_new(&sink, err)))
		return -1;
	/* COPY takes no parameters: the scan id is a number fidx formats. */
	snprintf(sql, sizeof(sql), "COPY (SELECT id, path FROM fidx.file WHERE scan_id = %" PRId64
		 " ORDER BY scan_id, path) TO STDOUT (FORMAT binary)", scan_id);
	if (pg_copy_out(st, sql, 2, build_tuple, &b, err) < 0 ||
	    fidx_pathindex_builder_end(b.pb, &t, err) < 0 || send_copy(st, &b.copy, err) < 0)
		goto out;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	pg_param_int(&p, (int64_t)t.paths);
	pg_param_int(&p, t.blocks);
	pg_param_int(&p, (int64_t)t.trigrams);
	pg_param_int(&p, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
	if (pg_run(st, "INSERT INTO fidx.path_block (scan_id, block, data, host_id)"
		   " SELECT $1, n, data, (SELECT host_id FROM fidx.scan WHERE id = $1)"
		   " FROM pg_temp.fidx_pindex WHERE kind = 0", &p, "write",
		   err) < 0 ||
	    pg_run(st, "INSERT INTO fidx.path_trigram (scan_id, tri, blocks, host_id)"
		   " SELECT $1, n, data, (SELECT host_id FROM fidx.scan WHERE id = $1)"
		   " FROM pg_temp.fidx_pindex WHERE kind = 1", &p, "write",
		   err) < 0 ||
	    pg_run(st, "INSERT INTO fidx.path_index (scan_id, host_id, paths, blocks, trigrams,"
		   " built_ns) SELECT $1, host_id, $2, $3, $4, $5 FROM fidx.scan WHERE id = $1", &p,
		   "write", err) < 0)
		goto out;
	rc = 0;
out:
	fidx_pathindex_builder_free(b.pb);
	free(b.copy.p);
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
