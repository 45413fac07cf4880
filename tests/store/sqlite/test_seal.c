/*
 * test_seal.c - the seal as the SQLite backend keeps it: against its
 * definition in SQL (docs/SCHEMA.md), with its row hashes in file_seal.
 *
 * Scans are written through the store and sealed; the seal is compared with
 * the SHA-256 of the canonical lines as SQLite's own quote() makes them (the
 * documented SQL, run here with plain SQLite calls), so the check does not
 * go through seal.c's formatter; each file row's hash in file_seal with
 * the first bytes of SHA-256 of its line; fidx_store_verify()'s recomputed
 * seal with the documented one.  Rows altered, added and removed with plain
 * SQL (as someone holding the file could) are named by verify.  The two
 * scans interleave their rows, as the roots of one run do; they, and the
 * rows of the other tests, are the conformance suite's (seal_two_scans(),
 * seal_add() of store/fixture.h), each test's database in a folder of its
 * own.
 *
 * What any store must do with the seal (sealed once and only when complete,
 * verified with the seal it gave) is the conformance suite's:
 * tests/store/test_seal.c.
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

#include "record.h"
#include "seal.h"
#include "store.h"
#include "store/fixture.h"

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
	" btime_sec, btime_nsec, state, stream, fn_atime_ns, fn_mtime_ns, fn_ctime_ns, fn_btime_ns,"
	" fn_atime_sec, fn_atime_nsec, fn_mtime_sec, fn_mtime_nsec, fn_ctime_sec, fn_ctime_nsec,"
	" fn_btime_sec, fn_btime_nsec, attributes) IS NULL THEN '' ELSE '|'||quote(atime_sec)||'|'||"
	"quote(atime_nsec)||'|'||quote(mtime_sec)||'|'||quote(mtime_nsec)||'|'||quote(ctime_sec)"
	"||'|'||quote(ctime_nsec)||'|'||quote(btime_sec)||'|'||quote(btime_nsec) END||"
	"CASE WHEN coalesce(state, stream, fn_atime_ns, fn_mtime_ns, fn_ctime_ns, fn_btime_ns,"
	" fn_atime_sec, fn_atime_nsec, fn_mtime_sec, fn_mtime_nsec, fn_ctime_sec, fn_ctime_nsec,"
	" fn_btime_sec, fn_btime_nsec, attributes) IS NULL THEN '' ELSE '|'||"
	"quote(CAST(state AS BLOB))||'|'||quote(CAST(stream AS BLOB))||'|'||quote(fn_atime_ns)||'|'||"
	"quote(fn_mtime_ns)||'|'||quote(fn_ctime_ns)||'|'||quote(fn_btime_ns)||'|'||"
	"quote(fn_atime_sec)||'|'||quote(fn_atime_nsec)||'|'||quote(fn_mtime_sec)||'|'||"
	"quote(fn_mtime_nsec)||'|'||quote(fn_ctime_sec)||'|'||quote(fn_ctime_nsec)||'|'||"
	"quote(fn_btime_sec)||'|'||quote(fn_btime_nsec) END||"
	"CASE WHEN attributes IS NULL THEN '' ELSE '|'||quote(attributes) END"
	" FROM file WHERE scan_id = ?1 ORDER BY id";

/* The failure of the last store call a test makes itself (MUST()). */
static struct fidx_error err;

/* SHA-256 of the documented lines of scan of db, made by SQLite's quote(). */
static void expected_seal(const char *db, int64_t scan, uint8_t out[32])
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
 * Checks that file_seal of db holds, for each file row of scan and for no
 * other row, the scan and the first 8 bytes of SHA-256 of its documented
 * line.  Returns how many rows it checked.
 */
static int check_row_hashes(const char *db, int64_t scan)
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

/* Runs sql on db with plain SQLite. */
static void exec_sql(const char *db, const char *sql)
{
	sqlite3 *h;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	if (sqlite3_exec(h, sql, NULL, NULL, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(h));
	sqlite3_close(h);
}

/*
 * A complete scan's seal is the SHA-256 of the documented lines, once; its
 * times beyond the *_ns columns are in the columns of schema 4; file_seal
 * holds each row's hash; verify recomputes the documented seal.
 */
static void test_seal_is_documented(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = seal_two_scans(f->db, "complete", NULL);
	uint8_t seal[2][32], want[32];
	assert_int_equal(fidx_store_seal(st, 1, seal[0], &err), 1);
	assert_int_equal(fidx_store_seal(st, 2, seal[1], &err), 1);
	assert_int_equal(fidx_store_seal(st, 2, seal[1], &err), -1);
	assert_non_null(strstr(err.msg, "sealed already"));
	must_close(st);
	sqlite3 *h;
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_open_v2(f->db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
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
		expected_seal(f->db, s + 1, want);
		assert_memory_equal(seal[s], want, 32);
		assert_int_equal(check_row_hashes(f->db, s + 1), 4);
		struct found c;
		struct fidx_seal_result r = seal_check(f->db, s + 1, &c);
		assert_true(r.sealed);
		assert_int_equal(r.rows, 4);
		assert_memory_equal(r.computed, want, 32);
		assert_int_equal(c.n, 0);
	}
}

/*
 * fidx_store_end_scan() with a seal buffer seals a complete scan in the
 * transaction that ends it with the seal of the documented lines, and
 * leaves an interrupted one unsealed.
 */
static void test_end_seals(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = must_open(f->db, FIDX_STORE_WRITE, 0);
	int64_t a = must_begin(st, "/a"), b = must_begin(st, "/b");
	seal_add(st, a, "/a", 'd', 4096);
	seal_add(st, b, "/b", 'd', 4096);
	seal_add(st, a, "/a/one", 'f', 1);
	seal_add(st, b, "/b/one", 'f', 1);
	struct fidx_scan_totals t = {.finished_ns = 1700000001000000000, .status = "complete",
				     .entries = 2, .files = 1, .dirs = 1, .bytes = 1};
	uint8_t seal[32], want[32];
	assert_int_equal(fidx_store_end_scan(st, a, &t, seal, &err), 1);
	t.status = "interrupted";
	assert_int_equal(fidx_store_end_scan(st, b, &t, seal, &err), 0);
	must_close(st);
	expected_seal(f->db, a, want);
	assert_memory_equal(seal, want, 32);
	struct found c;
	struct fidx_seal_result r = seal_check(f->db, a, &c);
	assert_true(r.sealed);
	assert_memory_equal(r.recorded, want, 32);
	assert_int_equal(c.n, 0);
	r = seal_check(f->db, b, &c);
	assert_false(r.sealed);
}

/*
 * Edits of the second scan with plain SQL are named there: its first row
 * removed (in the gap before the first scan's rows), one altered, one added;
 * the first scan, whose rows surround them, stays intact and names nothing.
 */
static void test_findings(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = seal_two_scans(f->db, "complete", NULL);
	uint8_t seal[32];
	assert_int_equal(fidx_store_seal(st, 1, seal, &err), 1);
	assert_int_equal(fidx_store_seal(st, 2, seal, &err), 1);
	must_close(st);
	/* Rows: 1 /a, 2 /b, 3 /a/one, 4 /b/one, ... (scan 2 has 2, 4, 6, 8). */
	exec_sql(f->db, "DELETE FROM file WHERE id = 2; UPDATE file SET ino = 99 WHERE id = 6;"
		 " INSERT INTO file (scan_id, path, name, ext) VALUES (2, '/b/new', 'new', '')");
	struct found c;
	struct fidx_seal_result r = seal_check(f->db, 1, &c);
	assert_true(r.sealed);
	assert_memory_equal(r.recorded, r.computed, 32);
	assert_int_equal(c.n, 0);
	r = seal_check(f->db, 2, &c);
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
 * (another process): the seal is the documented one over the rows kept
 * (read back) and the new ones, in id order; the dropped rows' file_seal
 * rows are gone, and the new rows that take their ids have their own.
 */
static void test_resumed(void **state)
{
	struct fixture *f = *state;
	int64_t a = seal_interrupted(f->db);
	assert_int_equal(check_row_hashes(f->db, a), 4);

	struct fidx_store *st = must_open(f->db, FIDX_STORE_WRITE, 0);
	struct fidx_scan_totals so_far;
	MUST(fidx_store_resume_scan(st, a, &so_far, &err));
	assert_int_equal(so_far.entries, 2);
	seal_add(st, a, "/a/two", 'f', 2);
	seal_add(st, a, "/a/sub", 'd', 4096);
	seal_add(st, a, "/a/sub/three", 'f', 3);
	seal_end(st, a, "complete");
	uint8_t seal[32], want[32];
	assert_int_equal(fidx_store_seal(st, a, seal, &err), 1);
	must_close(st);
	expected_seal(f->db, a, want);
	assert_memory_equal(seal, want, 32);
	assert_int_equal(check_row_hashes(f->db, a), 5);
	struct found c;
	struct fidx_seal_result r = seal_check(f->db, a, &c);
	assert_memory_equal(r.computed, want, 32);
	assert_int_equal(c.n, 0);
}

/*
 * The file_seal rows go with their rows: rows rolled back (the store closed
 * with a batch open) leave none, and the seal of a scan that another store
 * wrote (nothing streamed here; made complete with plain SQL) is the
 * documented one, made from its rows read back.
 */
static void test_rolled_back_and_read_back(void **state)
{
	struct fixture *f = *state;
	int64_t a = seal_rolled_back(f->db);
	assert_int_equal(check_row_hashes(f->db, a), 2);

	struct fidx_store *st = must_open(f->db, FIDX_STORE_WRITE, 0);
	exec_sql(f->db, "UPDATE scan SET status = 'complete', finished_ns = 1, entries = 2");
	uint8_t seal[32], want[32];
	assert_int_equal(fidx_store_seal(st, a, seal, &err), 1);
	must_close(st);
	expected_seal(f->db, a, want);
	assert_memory_equal(seal, want, 32);
	assert_int_equal(check_row_hashes(f->db, a), 2);
}

/*
 * Scans sealed in a database of schema 6 (the attributes column dropped and
 * user_version set back, as a fidx of schema 6 leaves it: rows with times in
 * the columns of schema 4, an image row with the columns of 6) verify as they
 * are, and again once a write migrated the database to 7 (the column there,
 * NULL in their rows).  A scan written then, with attributes (a Windows
 * walk's: no other image column), is sealed over them with the documented
 * lines, and a word changed by SQL is an altered row.
 */
static void test_sealed_before_7(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = seal_two_scans(f->db, "complete", NULL);
	uint8_t seal[4][32], want[32];
	assert_int_equal(fidx_store_seal(st, 1, seal[0], &err), 1);
	assert_int_equal(fidx_store_seal(st, 2, seal[1], &err), 1);
	int64_t img = must_begin(st, "/img");
	struct fidx_record *r = make_rec(img, "/img/p1/gone", 12, 'f');
	set_meta(r, 0100644, 3, true);
	assert_non_null(r->image = calloc(1, sizeof(*r->image)));
	r->image->state = "deleted";
	r->image->has_fn_times = true;
	r->image->fn_time[3] = (struct fidx_time){.sec = -11644473600, .nsec = 100};
	must_add(st, r);
	struct fidx_scan_totals t = {.finished_ns = FIXTURE_FINISHED_NS, .status = "complete",
				     .entries = 1, .files = 1, .bytes = r->meta.size};
	assert_int_equal(must_end_totals(st, img, &t, seal[2]), 1);
	must_close(st);
	fidx_record_free(r);
	for (int64_t s = 1; s <= 3; s++) {
		expected_seal(f->db, s, want);
		assert_memory_equal(seal[s - 1], want, 32);
	}
	exec_sql(f->db, "ALTER TABLE file DROP COLUMN attributes; PRAGMA user_version = 6");

	for (int pass = 0; pass < 2; pass++) {
		st = must_open(f->db, FIDX_STORE_READ, 0);
		assert_int_equal(fidx_store_version(st), pass ? FIDX_SCHEMA_VERSION : 6);
		must_close(st);
		for (int64_t s = 1; s <= 3; s++) {
			struct found c;
			struct fidx_seal_result res = seal_check(f->db, s, &c);
			assert_true(res.sealed);
			assert_memory_equal(res.recorded, seal[s - 1], 32);
			assert_memory_equal(res.computed, seal[s - 1], 32);
			assert_int_equal(c.n, 0);
		}
		must_close(must_open(f->db, FIDX_STORE_WRITE, 0)); /* migrates it, once */
	}

	st = must_open(f->db, FIDX_STORE_WRITE, 0);
	int64_t w = must_begin(st, "/w");
	struct fidx_record *wr[2] = {make_rec(w, "/w", 2, 'd'), make_rec(w, "/w/hidden.txt", 13, 'f')};
	for (int i = 0; i < 2; i++) {
		set_meta(wr[i], i ? 0100644 : 040755, 4, true);
		assert_non_null(wr[i]->image = calloc(1, sizeof(*wr[i]->image)));
		wr[i]->image->has_attributes = true;
		wr[i]->image->attributes = i ? 0x2 | 0x20 : 0x10;
		must_add(st, wr[i]);
	}
	t = (struct fidx_scan_totals){.finished_ns = FIXTURE_FINISHED_NS, .status = "complete",
				      .entries = 2, .files = 1, .dirs = 1, .bytes = wr[1]->meta.size};
	assert_int_equal(must_end_totals(st, w, &t, seal[3]), 1);
	must_close(st);
	for (int i = 0; i < 2; i++)
		fidx_record_free(wr[i]);
	expected_seal(f->db, w, want);
	assert_memory_equal(seal[3], want, 32);
	assert_int_equal(check_row_hashes(f->db, w), 2);
	struct found c;
	struct fidx_seal_result res = seal_check(f->db, w, &c);
	assert_memory_equal(res.computed, want, 32);
	assert_int_equal(c.n, 0);
	exec_sql(f->db, "UPDATE file SET attributes = 0x23 WHERE path = '/w/hidden.txt'");
	res = seal_check(f->db, w, &c);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.change[0], FIDX_SEAL_ALTERED);
	assert_int_equal(res.altered, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		FIXTURE_TEST(test_seal_is_documented),
		FIXTURE_TEST(test_end_seals),
		FIXTURE_TEST(test_findings),
		FIXTURE_TEST(test_resumed),
		FIXTURE_TEST(test_rolled_back_and_read_back),
		FIXTURE_TEST(test_sealed_before_7),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
