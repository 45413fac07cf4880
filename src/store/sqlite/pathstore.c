/*
 * pathstore.c - where the SQLite store keeps the path index of its scans
 * (pathstore.h; the bytes are core/pathindex.c's).
 *
 * Tables (created by the store's migration to version 2; docs/SCHEMA.md
 * describes them for readers):
 *
 *   path_block(key = scan_id << 32 | block, data BLOB)       one block
 *   path_trigram(key = scan_id << 24 | trigram, blocks BLOB) one trigram's list
 *   path_index(scan_id, paths, blocks, trigrams, built_ns)
 *       written last, in the same transaction: its row says the scan's
 *       index is whole
 *
 * Building reads `SELECT id, path FROM file WHERE scan_id = ? ORDER BY path`
 * (the file_scan_path index gives that order without sorting) into the
 * builder, whose sink inserts each block and list.
 */
#include "pathstore.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What a build holds. */
struct builder {
	sqlite3 *db;
	int64_t scan_id;
	sqlite3_stmt *put_block;
	sqlite3_stmt *put_tri;
};

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

/* Runs stmt s with key and the n bytes at data.  Returns 0, or -1 with err set. */
static int put(sqlite3 *db, sqlite3_stmt *s, int64_t key, const void *data, size_t n,
	       struct fidx_error *err)
{
	sqlite3_bind_int64(s, 1, key);
	sqlite3_bind_blob(s, 2, n ? data : "", (int)n, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	if (rc != SQLITE_DONE) {
		errno = EIO;
		failure(db, err);
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The builder's sink: a block. */
static int put_block(void *arg, uint32_t block, const void *data, size_t len,
		     struct fidx_error *err)
{
	struct builder *b = arg;
	return put(b->db, b->put_block, (b->scan_id << 32) | block, data, len, err);
}

/* The builder's sink: a trigram's list. */
static int put_trigram(void *arg, uint32_t tri, const void *list, size_t len,
		       struct fidx_error *err)
{
	struct builder *b = arg;
	return put(b->db, b->put_tri, (b->scan_id << 24) | tri, list, len, err);
}

/*
 * Reads the scan's rows into a builder and writes its tables.  Returns 0,
 * or -1 with err set (taken at once: finalizing a statement clears SQLite's
 * message).
 */
static int build_rows(struct builder *b, struct fidx_error *err)
{
	sqlite3_stmt *rows = NULL, *done = NULL;
	struct fidx_pathindex_builder *pb = NULL;
	struct fidx_pathindex_totals t;
	int ret = -1, rc;

	if (prepare(b->db, "SELECT id, path FROM file WHERE scan_id = ? ORDER BY path", &rows) < 0 ||
	    prepare(b->db, "INSERT INTO path_block (key, data) VALUES (?, ?)", &b->put_block) < 0 ||
	    prepare(b->db, "INSERT INTO path_trigram (key, blocks) VALUES (?, ?)", &b->put_tri) < 0 ||
	    prepare(b->db, "INSERT INTO path_index (scan_id, paths, blocks, trigrams, built_ns)"
			   " VALUES (?, ?, ?, ?, ?)", &done) < 0) {
		failure(b->db, err);
		goto out;
	}
	struct fidx_pathindex_sink sink = {.block = put_block, .trigram = put_trigram, .arg = b};
	if (!(pb = fidx_pathindex_builder_new(&sink, err)))
		goto out;
	sqlite3_bind_int64(rows, 1, b->scan_id);
	while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
		const unsigned char *path = sqlite3_column_text(rows, 1);
		if (!path) {
			fidx_fail_nomem(err);
			goto out;
		}
		if (fidx_pathindex_builder_add(pb, sqlite3_column_int64(rows, 0), path,
					       (size_t)sqlite3_column_bytes(rows, 1), err) < 0)
			goto out;
	}
	if (rc != SQLITE_DONE) {
		errno = EIO;
		failure(b->db, err);
		goto out;
	}
	if (fidx_pathindex_builder_end(pb, &t, err) < 0)
		goto out;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	sqlite3_bind_int64(done, 1, b->scan_id);
	sqlite3_bind_int64(done, 2, (sqlite3_int64)t.paths);
	sqlite3_bind_int64(done, 3, t.blocks);
	sqlite3_bind_int64(done, 4, (sqlite3_int64)t.trigrams);
	sqlite3_bind_int64(done, 5, (sqlite3_int64)now.tv_sec * 1000000000 + now.tv_nsec);
	if (sqlite3_step(done) != SQLITE_DONE) {
		errno = EIO;
		failure(b->db, err);
		goto out;
	}
	ret = 0;
out:
	fidx_pathindex_builder_free(pb);
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
	struct builder b = {.db = db, .scan_id = scan_id};
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
		ret = have ? 0 : build_rows(&b, err);
	if (ret == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		errno = EIO;
		failure(db, err);
		ret = -1;
	}
	sqlite3_finalize(b.put_block);
	sqlite3_finalize(b.put_tri);
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

struct fidx_pathiter {
	sqlite3 *db;
	int64_t scan_id;
	bool indexed;              /* reading blocks (else the file table) */
	sqlite3_stmt *stmt;        /* the block look-up, or the file-table query */
	uint32_t *blocks;          /* the blocks to read, ascending; NULL: every one, 0 to nblocks - 1 */
	size_t nblocks;            /* how many */
	size_t next_block;         /* the next to read */
	struct fidx_pathblock block; /* the block being read */
	bool in_block;             /* one is */
	int64_t where;             /* the block read (in the index) or the row (in the file table) */
	char damage[128];          /* what is wrong there, after an EBADMSG */
};

/* Notes what is wrong where the iterator reads.  Returns -1 with errno EBADMSG. */
static int damaged(struct fidx_pathiter *it, const char *what)
{
	snprintf(it->damage, sizeof(it->damage), "%.127s", what);
	errno = EBADMSG;
	return -1;
}

/* Sets errno from a failure of the core (its message is the damage).  Returns -1. */
static int core_failed(struct fidx_pathiter *it, const struct fidx_error *err)
{
	if (err->code == EBADMSG)
		return damaged(it, err->msg);
	errno = err->code;
	return -1;
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
	struct fidx_pathindex_list *lists = NULL;
	struct fidx_error err;
	int ret = -1, rc;

	if (ntri == 0) {
		it->nblocks = nblocks;
		return 0;
	}
	if (prepare(it->db, "SELECT blocks FROM path_trigram WHERE key = ?", &s) < 0)
		return -1;
	if (!(lists = calloc(ntri, sizeof(*lists)))) {
		errno = ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ntri; i++) {
		sqlite3_bind_int64(s, 1, (it->scan_id << 24) | tri[i]);
		if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			size_t n = (size_t)sqlite3_column_bytes(s, 0);
			void *p = malloc(n ? n : 1);
			if (!p) {
				errno = ENOMEM;
				goto out;
			}
			if (n)
				memcpy(p, sqlite3_column_blob(s, 0), n);
			lists[i] = (struct fidx_pathindex_list){p, n};
		} else if (rc != SQLITE_DONE) {
			errno = EIO;
			goto out;
		}
		sqlite3_reset(s);
		if (!lists[i].len) /* a trigram no path has: nothing can match */
			break;
	}
	if (fidx_pathindex_choose(lists, ntri, nblocks, &it->blocks, &it->nblocks, &err) < 0) {
		core_failed(it, &err);
		goto out;
	}
	if (!it->blocks)
		it->nblocks = 0;
	ret = 0;
out:
	for (size_t i = 0; lists && i < ntri; i++)
		free((void *)lists[i].p);
	free(lists);
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
	struct fidx_error err;
	if (it->next_block == it->nblocks)
		return 0;
	sqlite3_reset(it->stmt);
	it->in_block = false;
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
	if (sqlite3_column_type(it->stmt, 0) != SQLITE_BLOB)
		return damaged(it, "a block that is not a blob");
	if (fidx_pathblock_start(&it->block, sqlite3_column_blob(it->stmt, 0),
				 (size_t)sqlite3_column_bytes(it->stmt, 0), &err) < 0)
		return core_failed(it, &err);
	it->in_block = true;
	return 1;
}

int fidx_pathiter_next(struct fidx_pathiter *it, struct fidx_pathent *e)
{
	struct fidx_error err;
	if (!it->indexed)
		return next_row(it, e);
	for (;;) {
		if (it->in_block) {
			int rc = fidx_pathblock_next(&it->block, e, &err);
			if (rc != 0)
				return rc < 0 ? core_failed(it, &err) : 1;
			it->in_block = false;
		}
		int rc = load_block(it);
		if (rc <= 0)
			return rc;
	}
}

int64_t fidx_pathiter_where(const struct fidx_pathiter *it, const char **damage)
{
	*damage = it->damage[0] ? it->damage : "unreadable";
	return it->where;
}

void fidx_pathiter_close(struct fidx_pathiter *it)
{
	if (!it)
		return;
	sqlite3_finalize(it->stmt);
	free(it->blocks);
	fidx_pathblock_free(&it->block);
	free(it);
}
