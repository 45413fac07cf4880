/*
 * test_seal.c - the seal (seal.c) against its definition (docs/SCHEMA.md).
 *
 * Scans are written through the store, sealed with fidx_store_seal(), and
 * the seal is compared with the SHA-256 of the canonical lines as SQLite's
 * own quote() makes them (the documented SQL, run here with plain SQLite
 * calls), so the check does not go through seal.c's formatter.  The two
 * scans interleave their rows, as the roots of one run do.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <openssl/evp.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"
#include "seal.h"
#include "store.h"

/* The documented lines of scan ?1, one statement for its files, one for its row (last). */
static const char scan_sql[] =
	"SELECT quote(id)||'|'||quote(CAST(root AS BLOB))||'|'||quote(CAST(host AS BLOB))||'|'||"
	"quote(CAST(os AS BLOB))||'|'||quote(CAST(kernel AS BLOB))||'|'||quote(CAST(arch AS BLOB))"
	"||'|'||quote(CAST(version AS BLOB))||'|'||quote(CAST(options AS BLOB))||'|'||"
	"quote(started_ns)||'|'||quote(finished_ns)||'|'||quote(CAST(status AS BLOB))||'|'||"
	"quote(entries)||'|'||quote(files)||'|'||quote(dirs)||'|'||quote(bytes)||'|'||"
	"quote(errors)||'|'||quote(reused)||'|'||quote(hashed)||'|'||quote(base_scan_id)||'|'||"
	"quote(pid)||CASE WHEN run_ns IS NULL THEN '' ELSE '|'||quote(run_ns) END"
	" FROM scan WHERE id = ?1";
static const char file_sql[] =
	"SELECT quote(id)||'|'||quote(scan_id)||'|'||quote(CAST(path AS BLOB))||'|'||"
	"quote(CAST(name AS BLOB))||'|'||quote(CAST(ext AS BLOB))||'|'||quote(CAST(type AS BLOB))"
	"||'|'||quote(size)||'|'||quote(blocks)||'|'||quote(mode)||'|'||quote(uid)||'|'||"
	"quote(gid)||'|'||quote(nlink)||'|'||quote(dev)||'|'||quote(ino)||'|'||quote(atime_ns)"
	"||'|'||quote(mtime_ns)||'|'||quote(ctime_ns)||'|'||quote(btime_ns)||'|'||"
	"quote(CAST(link_target AS BLOB))||'|'||quote(CAST(md5 AS BLOB))||'|'||"
	"quote(CAST(sha1 AS BLOB))||'|'||quote(CAST(sha256 AS BLOB))||'|'||"
	"quote(CAST(sha512 AS BLOB))||'|'||quote(CAST(xxh128 AS BLOB))||'|'||"
	"quote(CAST(error AS BLOB))||'|'||quote(digests_from)||"
	"CASE WHEN coalesce(atime_sec, atime_nsec, mtime_sec, mtime_nsec, ctime_sec, ctime_nsec,"
	" btime_sec, btime_nsec) IS NULL THEN '' ELSE '|'||quote(atime_sec)||'|'||"
	"quote(atime_nsec)||'|'||quote(mtime_sec)||'|'||quote(mtime_nsec)||'|'||quote(ctime_sec)"
	"||'|'||quote(ctime_nsec)||'|'||quote(btime_sec)||'|'||quote(btime_nsec) END"
	" FROM file WHERE scan_id = ?1 ORDER BY id";

static char dir[64], db[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/fidx-test-seal.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(db, sizeof(db), "%s/seal.db", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char path[160];
	static const char *const suffixes[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s%s", db, suffixes[i]);
		unlink(path);
	}
	return rmdir(dir);
}

/*
 * Adds an entry of scan scan at path (type t, size) with a SHA-256 pattern
 * for files, and the error err (NULL for none).  A name holding "th|ree"
 * gets times beyond the *_ns columns (atime before 1677, mtime 2400-01-01),
 * which its row keeps in the columns of schema 4.
 */
static void add_error(struct fidx_store *st, int64_t scan, const char *path, char t, uint64_t size,
		      const char *err)
{
	struct fidx_record r = {.scan_id = scan, .path = (char *)path, .path_len = strlen(path),
				.type = t, .has_meta = true};
	r.name_off = (size_t)(strrchr(path, '/') - path) + 1;
	r.ext_off = r.path_len;
	r.meta = (struct fidx_meta){.size = size, .mode = t == 'd' ? 040755 : 0100644,
				    .nlink = 1, .ino = size + 7,
				    .mtime = fidx_time_of_ns(-5)};
	if (strstr(path, "th|ree")) {
		r.meta.atime = (struct fidx_time){.sec = -9300000000LL, .nsec = 5};
		r.meta.mtime = (struct fidx_time){.sec = 13569465600LL, .nsec = 999999999};
	}
	if (t == 'f') {
		memset(r.digest[FIDX_SHA256], (int)size, 32);
		r.digest_mask = 1u << FIDX_SHA256;
	}
	r.error = (char *)err;
	if (fidx_store_add(st, &r) < 0)
		fail_msg("fidx_store_add: %s", fidx_store_errmsg(st));
}

/* Adds an entry without an error (add_error()). */
static void add(struct fidx_store *st, int64_t scan, const char *path, char t, uint64_t size)
{
	add_error(st, scan, path, t, size, NULL);
}

/* Opens the store on db. */
static struct fidx_store *open_store(void)
{
	char *msg = NULL;
	struct fidx_store *st = fidx_store_open(db, NULL, &msg);
	if (!st)
		fail_msg("fidx_store_open: %s", msg);
	return st;
}

/* Begins a scan of root. */
static int64_t begin(struct fidx_store *st, const char *root)
{
	struct fidx_scan_info info = {.root = root, .host = "h", .os = "o", .kernel = "k",
				      .arch = "a", .version = "v", .options = "{}",
				      .started_ns = 1700000000000000000};
	int64_t id = fidx_store_begin_scan(st, &info);
	assert_true(id > 0);
	return id;
}

/* Ends scan with status and totals that match what add() wrote below. */
static void end(struct fidx_store *st, int64_t scan, const char *status)
{
	struct fidx_scan_totals t = {.finished_ns = 1700000001000000000, .status = status,
				     .entries = 4, .files = 3, .dirs = 1, .bytes = 6};
	if (fidx_store_end_scan(st, scan, &t, NULL) < 0)
		fail_msg("fidx_store_end_scan: %s", fidx_store_errmsg(st));
}

/* Two scans of four rows each, their rows interleaved; the first ended complete. */
static struct fidx_store *two_scans(const char *second_status)
{
	struct fidx_store *st = open_store();
	int64_t a = begin(st, "/a"), b = begin(st, "/b\n|x");
	add(st, a, "/a", 'd', 4096);
	add(st, b, "/b\n|x", 'd', 4096);
	static const char *const names[] = {"/one", "/tw\xffo", "/th|ree"};
	for (int i = 0; i < 3; i++) {
		char pa[32], pb[32];
		snprintf(pa, sizeof(pa), "/a%s", names[i]);
		snprintf(pb, sizeof(pb), "/b\n|x%s", names[i]);
		add(st, a, pa, 'f', (uint64_t)i + 1);
		add(st, b, pb, 'f', (uint64_t)i + 1);
	}
	end(st, a, "complete");
	end(st, b, second_status);
	return st;
}

/* SHA-256 of the documented lines of scan, made by SQLite's quote(). */
static void expected_seal(int64_t scan, uint8_t out[32])
{
	sqlite3 *h;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_true(EVP_DigestInit_ex(ctx, EVP_sha256(), NULL));
	const char *sqls[] = {file_sql, scan_sql};
	for (int i = 0; i < 2; i++) {
		sqlite3_stmt *s;
		assert_int_equal(sqlite3_prepare_v2(h, sqls[i], -1, &s, NULL), SQLITE_OK);
		sqlite3_bind_int64(s, 1, scan);
		while (sqlite3_step(s) == SQLITE_ROW) {
			EVP_DigestUpdate(ctx, sqlite3_column_text(s, 0), (size_t)sqlite3_column_bytes(s, 0));
			EVP_DigestUpdate(ctx, "\n", 1);
		}
		sqlite3_finalize(s);
	}
	assert_true(EVP_DigestFinal_ex(ctx, out, NULL));
	EVP_MD_CTX_free(ctx);
	sqlite3_close(h);
}

/*
 * Checks that file_seal holds, for each file row of scan and for no other
 * row, the scan and the first 8 bytes of SHA-256 of its documented line.
 * Returns how many rows it checked.
 */
static int check_row_hashes(int64_t scan)
{
	sqlite3 *h;
	sqlite3_stmt *s, *q;
	int n = 0;
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, file_sql, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT scan_id, row_hash FROM file_seal"
					    " WHERE file_id = ?", -1, &q, NULL), SQLITE_OK);
	sqlite3_bind_int64(s, 1, scan);
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *line = (const char *)sqlite3_column_text(s, 0);
		uint8_t md[32];
		unsigned len = 0;
		EVP_Digest(line, (size_t)sqlite3_column_bytes(s, 0), md, &len, EVP_sha256(), NULL);
		sqlite3_bind_int64(q, 1, strtoll(line, NULL, 10));
		assert_int_equal(sqlite3_step(q), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int64(q, 0), scan);
		assert_int_equal(sqlite3_column_bytes(q, 1), FIDX_ROW_HASH_LEN);
		assert_memory_equal(sqlite3_column_blob(q, 1), md, FIDX_ROW_HASH_LEN);
		sqlite3_reset(q);
		n++;
	}
	sqlite3_finalize(s);
	sqlite3_finalize(q);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT count(*) FROM file_seal WHERE scan_id = ?",
					    -1, &q, NULL), SQLITE_OK);
	sqlite3_bind_int64(q, 1, scan);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(q, 0), n);
	sqlite3_finalize(q);
	sqlite3_close(h);
	return n;
}

/* Runs sql on the database with plain SQLite. */
static void exec_sql(const char *sql)
{
	sqlite3 *h;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	if (sqlite3_exec(h, sql, NULL, NULL, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(h));
	sqlite3_close(h);
}

/* A finding, as the test collects them. */
struct found {
	int n;
	enum fidx_seal_change change[8];
	int64_t id[8];
};

static void collect(void *arg, const struct fidx_seal_finding *f)
{
	struct found *c = arg;
	if (c->n < 8) {
		c->change[c->n] = f->change;
		c->id[c->n] = f->file_id;
	}
	c->n++;
}

/* Checks scan id of db; returns the result, with the findings in *c. */
static struct fidx_seal_result check(int64_t id, struct found *c)
{
	sqlite3 *h;
	struct fidx_seal_result r;
	char why[256];
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	*c = (struct found){0};
	if (fidx_seal_check(h, id, collect, c, &r, why, sizeof(why)) < 0)
		fail_msg("fidx_seal_check: %s", why);
	sqlite3_close(h);
	return r;
}

/* A complete scan's seal is the SHA-256 of the documented lines, once. */
static void test_seal_is_documented(void **state)
{
	(void)state;
	struct fidx_store *st = two_scans("complete");
	uint8_t seal[2][32], want[32];
	assert_int_equal(fidx_store_seal(st, 1, seal[0]), 1);
	assert_int_equal(fidx_store_seal(st, 2, seal[1]), 1);
	assert_int_equal(fidx_store_seal(st, 2, seal[1]), -1);
	assert_non_null(strstr(fidx_store_errmsg(st), "sealed already"));
	assert_int_equal(fidx_store_close(st), 0);
	sqlite3 *h;
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT count(*) FROM file WHERE atime_ns IS NULL"
					    " AND atime_sec = -9300000000 AND atime_nsec = 5"
					    " AND mtime_ns IS NULL AND mtime_sec = 13569465600"
					    " AND mtime_nsec = 999999999 AND ctime_ns = 0",
					    -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(q, 0), 2); /* one row of each scan */
	sqlite3_finalize(q);
	sqlite3_close(h);
	for (int s = 0; s < 2; s++) {
		expected_seal(s + 1, want);
		assert_memory_equal(seal[s], want, 32);
		assert_int_equal(check_row_hashes(s + 1), 4);
		struct found c;
		struct fidx_seal_result r = check(s + 1, &c);
		assert_true(r.sealed);
		assert_int_equal(r.rows, 4);
		assert_memory_equal(r.computed, want, 32);
		assert_int_equal(c.n, 0);
	}
}

/*
 * fidx_store_end_scan() with a seal buffer seals a complete scan in the
 * transaction that ends it (the seal of the documented lines), and leaves
 * an interrupted one unsealed.
 */
static void test_end_seals(void **state)
{
	(void)state;
	struct fidx_store *st = open_store();
	int64_t a = begin(st, "/a"), b = begin(st, "/b");
	add(st, a, "/a", 'd', 4096);
	add(st, b, "/b", 'd', 4096);
	add(st, a, "/a/one", 'f', 1);
	add(st, b, "/b/one", 'f', 1);
	struct fidx_scan_totals t = {.finished_ns = 1700000001000000000, .status = "complete",
				     .entries = 2, .files = 1, .dirs = 1, .bytes = 1};
	uint8_t seal[32], want[32];
	assert_int_equal(fidx_store_end_scan(st, a, &t, seal), 1);
	t.status = "interrupted";
	assert_int_equal(fidx_store_end_scan(st, b, &t, seal), 0);
	assert_int_equal(fidx_store_close(st), 0);
	expected_seal(a, want);
	assert_memory_equal(seal, want, 32);
	struct found c;
	struct fidx_seal_result r = check(a, &c);
	assert_true(r.sealed);
	assert_memory_equal(r.recorded, want, 32);
	assert_int_equal(c.n, 0);
	r = check(b, &c);
	assert_false(r.sealed);
}

/* An interrupted scan is not sealed: no seal, no file_seal row. */
static void test_only_complete(void **state)
{
	(void)state;
	struct fidx_store *st = two_scans("interrupted");
	uint8_t seal[32];
	assert_int_equal(fidx_store_seal(st, 2, seal), -1);
	assert_non_null(strstr(fidx_store_errmsg(st), "not complete"));
	assert_int_equal(fidx_store_close(st), 0);
	struct found c;
	struct fidx_seal_result r = check(2, &c);
	assert_false(r.sealed);
	assert_false(r.pre_v3);
	assert_string_equal(r.status, "interrupted");
	assert_int_equal(c.n, 0);
}

/*
 * Edits of the second scan are named there: its first row removed (in the
 * gap before the first scan's rows), one altered, one added; the first
 * scan, whose rows surround them, stays intact and names nothing.
 */
static void test_findings(void **state)
{
	(void)state;
	struct fidx_store *st = two_scans("complete");
	uint8_t seal[32];
	assert_int_equal(fidx_store_seal(st, 1, seal), 1);
	assert_int_equal(fidx_store_seal(st, 2, seal), 1);
	assert_int_equal(fidx_store_close(st), 0);
	/* Rows: 1 /a, 2 /b, 3 /a/one, 4 /b/one, ... (scan 2 has 2, 4, 6, 8). */
	exec_sql("DELETE FROM file WHERE id = 2; UPDATE file SET ino = 99 WHERE id = 6;"
		 " INSERT INTO file (scan_id, path, name, ext) VALUES (2, '/b/new', 'new', '')");
	struct found c;
	struct fidx_seal_result r = check(1, &c);
	assert_true(r.sealed);
	assert_memory_equal(r.recorded, r.computed, 32);
	assert_int_equal(c.n, 0);
	r = check(2, &c);
	assert_int_not_equal(memcmp(r.recorded, r.computed, 32), 0);
	assert_int_equal(r.altered, 1);
	assert_int_equal(r.added, 1);
	assert_int_equal(r.removed, 1);
	/* Rows in id order, then the removed one (the root's row). */
	assert_int_equal(c.change[0], FIDX_SEAL_ALTERED);
	assert_int_equal(c.id[0], 6);
	assert_int_equal(c.change[1], FIDX_SEAL_ADDED);
	assert_int_equal(c.id[1], 9);
	assert_int_equal(c.change[2], FIDX_SEAL_REMOVED);
	assert_int_equal(c.id[2], 2);
	/* The scan row's dirs (1, its rows 0) and root (no row has its path). */
	assert_int_equal(c.change[3], FIDX_SEAL_FIELD);
	assert_int_equal(c.change[4], FIDX_SEAL_FIELD);
	assert_int_equal(c.n, 5);
}

/*
 * A scan interrupted with rows to do again, then resumed by another store
 * (another process): the seal covers the rows kept (read back) and the new
 * ones, in id order; the dropped rows' file_seal rows are gone, and the new
 * rows that take their ids have their own.
 */
static void test_resumed(void **state)
{
	(void)state;
	struct fidx_store *st = open_store();
	int64_t a = begin(st, "/a");
	add(st, a, "/a", 'd', 4096);
	add(st, a, "/a/one", 'f', 1);
	add_error(st, a, "/a/two", 'f', 2, FIDX_ERROR_NOT_HASHED);
	add_error(st, a, "/a/sub", 'd', 4096, FIDX_ERROR_NOT_READ);
	struct fidx_scan_totals t = {.finished_ns = 1700000001000000000, .status = "interrupted",
				     .entries = 4, .files = 2, .dirs = 2, .bytes = 3, .errors = 2};
	if (fidx_store_end_scan(st, a, &t, NULL) < 0)
		fail_msg("fidx_store_end_scan: %s", fidx_store_errmsg(st));
	assert_int_equal(fidx_store_close(st), 0);
	assert_int_equal(check_row_hashes(a), 4);

	st = open_store();
	struct fidx_scan_totals so_far;
	if (fidx_store_resume_scan(st, a, &so_far) < 0)
		fail_msg("fidx_store_resume_scan: %s", fidx_store_errmsg(st));
	assert_int_equal(so_far.entries, 2);
	add(st, a, "/a/two", 'f', 2);
	add(st, a, "/a/sub", 'd', 4096);
	add(st, a, "/a/sub/three", 'f', 3);
	end(st, a, "complete");
	uint8_t seal[32], want[32];
	assert_int_equal(fidx_store_seal(st, a, seal), 1);
	assert_int_equal(fidx_store_close(st), 0);
	expected_seal(a, want);
	assert_memory_equal(seal, want, 32);
	assert_int_equal(check_row_hashes(a), 5);
	struct found c;
	struct fidx_seal_result r = check(a, &c);
	assert_memory_equal(r.computed, want, 32);
	assert_int_equal(c.n, 0);
}

/*
 * The file_seal rows go with their rows: rows rolled back (the store closed
 * with a batch open) leave none, and the seal of a scan that another store
 * wrote (nothing streamed here) is made from its rows read back.
 */
static void test_rolled_back_and_read_back(void **state)
{
	(void)state;
	struct fidx_store *st = open_store();
	int64_t a = begin(st, "/a");
	add(st, a, "/a", 'd', 4096);
	add(st, a, "/a/one", 'f', 1);
	assert_int_equal(fidx_store_flush(st), 0);
	add(st, a, "/a/lost", 'f', 9);
	assert_int_equal(fidx_store_close(st), 0);
	assert_int_equal(check_row_hashes(a), 2);

	st = open_store();
	exec_sql("UPDATE scan SET status = 'complete', finished_ns = 1, entries = 2");
	uint8_t seal[32], want[32];
	assert_int_equal(fidx_store_seal(st, a, seal), 1);
	assert_int_equal(fidx_store_close(st), 0);
	expected_seal(a, want);
	assert_memory_equal(seal, want, 32);
	assert_int_equal(check_row_hashes(a), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_seal_is_documented, setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_seals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_complete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_findings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resumed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rolled_back_and_read_back, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
