/*
 * test_reuse.c - what a scan takes from earlier scans (reuse.h).
 *
 * The database is an in-memory SQLite one made with plain SQL (the columns
 * reuse.c reads, as docs/SCHEMA.md defines them), so the store is not
 * involved: scan rows with options written as fidx scan writes them, file
 * rows whose five compared values are varied one at a time.  The scans of
 * test_take() start at START_NS, long after their files' times.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "reuse.h"

static const char schema[] =
	"CREATE TABLE scan (id INTEGER PRIMARY KEY, root TEXT, status TEXT, pid INTEGER,"
	" host TEXT, options TEXT, started_ns INTEGER);"
	"CREATE TABLE file (id INTEGER PRIMARY KEY, scan_id INTEGER, path TEXT, type TEXT,"
	" size INTEGER, dev INTEGER, ino INTEGER, mtime_ns INTEGER, ctime_ns INTEGER,"
	" md5 BLOB, sha1 BLOB, sha256 BLOB, sha512 BLOB, xxh128 BLOB, error TEXT,"
	" digests_from INTEGER);";

/* Runs SQL or fails the test. */
static void exec_sql(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("'%s': %s", sql, err);
}

/* A fresh in-memory database with the tables above. */
static sqlite3 *new_db(void)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	exec_sql(db, schema);
	return db;
}

/* Adds a regular file row of scan 1: dev 8, inode ino, size ino * 10, times ino. */
static void add_file(sqlite3 *db, int64_t ino, const char *extra_cols, const char *extra_vals)
{
	char sql[512];
	snprintf(sql, sizeof(sql),
		 "INSERT INTO file (scan_id, path, type, size, dev, ino, mtime_ns, ctime_ns,"
		 " sha256, md5%s) VALUES (1, '/r/%lld', 'f', %lld, 8, %lld, %lld, %lld,"
		 " zeroblob(32), zeroblob(16)%s)",
		 extra_cols, (long long)ino, (long long)ino * 10, (long long)ino, (long long)ino,
		 (long long)ino + 1, extra_vals);
	exec_sql(db, sql);
}

/* A record matching add_file()'s row for ino. */
static struct fidx_record rec_of(int64_t ino)
{
	struct fidx_record r = {.type = 'f', .has_meta = true};
	r.meta.dev = 8;
	r.meta.ino = (uint64_t)ino;
	r.meta.size = (uint64_t)ino * 10;
	r.meta.mtime = fidx_time_of_ns(ino);
	r.meta.ctime = fidx_time_of_ns(ino + 1);
	return r;
}

#define START_NS "1000000000000"

static void test_take(void **state)
{
	(void)state;
	sqlite3 *db = new_db();
	exec_sql(db, "BEGIN; INSERT INTO scan (id, started_ns) VALUES (1, " START_NS "),"
		     " (2, " START_NS ")");
	for (int64_t ino = 1; ino <= 5000; ino++) /* enough to grow the table several times */
		add_file(db, ino, "", "");
	exec_sql(db, "UPDATE file SET sha256 = randomblob(32) WHERE ino = 7;"
		     " UPDATE file SET digests_from = 3 WHERE ino = 9;"
		     " UPDATE file SET error = 'changed during scan' WHERE ino = 11;"
		     " UPDATE file SET sha256 = NULL WHERE ino = 13;"
		     " UPDATE file SET sha256 = x'00' WHERE ino = 15;"
		     " INSERT INTO file (scan_id, path, type, size, dev, ino, mtime_ns, ctime_ns,"
		     "  sha256) VALUES (2, '/r/other', 'f', 170, 8, 99999, 17, 18, zeroblob(32));"
		     " COMMIT");
	char *errmsg = NULL;
	unsigned mask = 1u << FIDX_SHA256;
	struct fidx_reuse *r = fidx_reuse_load(db, 1, mask, &errmsg);
	assert_non_null(r);
	/* All but the error row, the row without SHA-256 and the malformed digest. */
	assert_int_equal(fidx_reuse_count(r), 4997);

	struct fidx_record rec = rec_of(7);
	assert_true(fidx_reuse_take(r, &rec));
	assert_int_equal(rec.digest_mask, mask);
	assert_int_equal(rec.digests_from, 1);
	sqlite3_stmt *s;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT sha256 FROM file WHERE ino = 7", -1, &s,
					    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_memory_equal(rec.digest[FIDX_SHA256], sqlite3_column_blob(s, 0), 32);
	sqlite3_finalize(s);

	rec = rec_of(9);
	assert_true(fidx_reuse_take(r, &rec));
	assert_int_equal(rec.digests_from, 3); /* the scan that read it, followed back */

	for (int64_t ino = 11; ino <= 15; ino += 2) {
		rec = rec_of(ino);
		assert_false(fidx_reuse_take(r, &rec));
		assert_int_equal(rec.digest_mask, 0);
	}
	/* Each of the five values, changed alone, makes the file be read. */
	for (int field = 0; field < 5; field++) {
		rec = rec_of(21);
		switch (field) {
		case 0: rec.meta.dev++; break;
		case 1: rec.meta.ino = 99999; break;
		case 2: rec.meta.size++; break;
		case 3: rec.meta.mtime = fidx_time_of_ns(21 - 1); break;
		case 4: rec.meta.ctime = fidx_time_of_ns(21 + 2); break;
		}
		assert_false(fidx_reuse_take(r, &rec));
		assert_int_equal(rec.digests_from, 0);
	}
	rec = rec_of(21);
	rec.type = 'l';
	assert_false(fidx_reuse_take(r, &rec));
	rec = rec_of(21);
	rec.has_meta = false;
	assert_false(fidx_reuse_take(r, &rec));
	rec = rec_of(99999);
	rec.meta.mtime = fidx_time_of_ns(17);
	rec.meta.ctime = fidx_time_of_ns(18);
	rec.meta.size = 170;
	assert_false(fidx_reuse_take(r, &rec)); /* scan 2's file is not in scan 1's table */
	assert_int_equal(fidx_reuse_load_more(r, db, 2, &errmsg), 0);
	assert_true(fidx_reuse_take(r, &rec));
	assert_int_equal(rec.digests_from, 2);
	assert_false(fidx_reuse_take(NULL, &rec));
	fidx_reuse_free(r);

	/* A digest the earlier scan did not record: nothing to take. */
	r = fidx_reuse_load(db, 1, mask | 1u << FIDX_SHA1, &errmsg);
	assert_non_null(r);
	assert_int_equal(fidx_reuse_count(r), 0);
	fidx_reuse_free(r);
	/* Two digests recorded: both copied. */
	r = fidx_reuse_load(db, 1, mask | 1u << FIDX_MD5, &errmsg);
	assert_non_null(r);
	rec = rec_of(25);
	assert_true(fidx_reuse_take(r, &rec));
	assert_int_equal(rec.digest_mask, mask | 1u << FIDX_MD5);
	fidx_reuse_free(r);
	sqlite3_close(db);
}

/*
 * A file whose mtime or ctime is not older than the start of the scan that
 * read it by more than the timestamp granularity could have changed after it
 * was read without either moving: it is read again.  Whole seconds count as
 * the granularity of a file system with 1 or 2 s timestamps (ext4 with
 * 128-byte inodes, FAT); finer ones as that of the kernel's clock.
 */
static void test_racy(void **state)
{
	(void)state;
	static const struct {
		int64_t mtime_ago, ctime_ago; /* ns before the scan's start (negative: after) */
		bool taken;
	} files[] = {
		{3000000000, 3000000000, true},   /* whole seconds, 3 s before */
		{5000000000, 1000000000, false},  /* ctime a whole second, 1 s before */
		{5000000000, 999999999, true},    /* fine ctime, 1 s before */
		{5000000000, 50000000, false},    /* fine ctime, 50 ms before */
		{1000000000, 5000000001, false},  /* mtime a whole second, 1 s before (FAT) */
		{5000000000, -1000, false},       /* changed after the scan began */
	};
	const int64_t start = 1700000000000000000;
	char sql[512];
	sqlite3 *db = new_db();
	snprintf(sql, sizeof(sql), "INSERT INTO scan (id, started_ns) VALUES (1, %lld)",
		 (long long)start);
	exec_sql(db, sql);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO file (scan_id, path, type, size, dev, ino, mtime_ns, ctime_ns,"
			 " sha256) VALUES (1, '/r/%zu', 'f', 1, 8, %zu, %lld, %lld, zeroblob(32))",
			 i, i + 1, (long long)(start - files[i].mtime_ago),
			 (long long)(start - files[i].ctime_ago));
		exec_sql(db, sql);
	}
	char *errmsg = NULL;
	struct fidx_reuse *r = fidx_reuse_load(db, 1, 1u << FIDX_SHA256, &errmsg);
	assert_non_null(r);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct fidx_record rec = {.type = 'f', .has_meta = true};
		rec.meta.dev = 8;
		rec.meta.ino = i + 1;
		rec.meta.size = 1;
		rec.meta.mtime = fidx_time_of_ns(start - files[i].mtime_ago);
		rec.meta.ctime = fidx_time_of_ns(start - files[i].ctime_ago);
		if (fidx_reuse_take(r, &rec) != files[i].taken)
			fail_msg("file %zu: taken %d, want %d", i, !files[i].taken, files[i].taken);
	}
	fidx_reuse_free(r);
	sqlite3_close(db);
}

/* The start of an INSERT of a scan row test_scan_row() reads. */
#define INSERT_SCAN "INSERT INTO scan (id, root, status, pid, host, options) VALUES "

static void test_scan_row(void **state)
{
	(void)state;
	sqlite3 *db = new_db();
	exec_sql(db,
		 INSERT_SCAN "(1, '/data', 'complete', 10, 'h',"
		 " '{\"hash\":\"md5,sha256\",\"jobs\":2,\"xdev\":true,\"follow\":false,"
		 "\"stat\":true,\"io\":\"ssd\",\"drop_cache\":false,"
		 "\"exclude\":[\"*.skip\",\"a\\u00ffb\",\"q\\\"x, y\\\\\",\"caf\xc3\xa9\"]}');"
		 INSERT_SCAN "(2, '/data', 'interrupted', 11, 'h',"
		 " '{\"hash\":\"none\",\"xdev\":false,\"follow\":true,\"stat\":false,\"exclude\":[]}');"
		 INSERT_SCAN "(3, '/other', 'complete', NULL, NULL,"
		 " '{\"hash\":\"sha256\",\"exclude\":[]}');"
		 INSERT_SCAN "(4, '/data', 'complete', 12, 'h', 'not json');");
	static const char *const complete[] = {"complete", NULL};
	static const char *const unfinished[] = {"running", "interrupted", "failed", NULL};
	static const char *const any[] = {"running", "interrupted", "failed", "complete", NULL};
	struct fidx_scan_row row;
	char *errmsg = NULL;
	assert_int_equal(fidx_scan_row_newest(db, "/data", complete, 4, &row, &errmsg), 1);
	assert_int_equal(row.id, 1);
	assert_string_equal(row.root, "/data");
	assert_string_equal(row.status, "complete");
	assert_int_equal(row.pid, 10);
	assert_int_equal(row.digests, 1u << FIDX_MD5 | 1u << FIDX_SHA256);
	assert_true(row.xdev);
	assert_false(row.follow);
	assert_false(row.no_stat);
	assert_int_equal(row.nexcludes, 4);
	assert_string_equal(row.excludes[0], "*.skip");
	assert_string_equal(row.excludes[1], "a\xff" "b"); /* the byte, not U+00FF */
	assert_string_equal(row.excludes[2], "q\"x, y\\");
	assert_string_equal(row.excludes[3], "caf\xc3\xa9");
	assert_null(row.excludes[4]);
	fidx_scan_row_free(&row);

	assert_int_equal(fidx_scan_row_newest(db, "/data", unfinished, 0, &row, &errmsg), 1);
	assert_int_equal(row.id, 2);
	assert_int_equal(row.digests, 0);
	assert_true(row.follow);
	assert_true(row.no_stat);
	assert_int_equal(row.nexcludes, 0);
	fidx_scan_row_free(&row);

	assert_int_equal(fidx_scan_row_newest(db, "/nowhere", any, 0, &row, &errmsg), 0);
	assert_int_equal(fidx_scan_row_newest(db, "/data", any, 0, &row, &errmsg), -1);
	assert_non_null(strstr(errmsg, "scan 4"));
	free(errmsg);
	errmsg = NULL;

	assert_int_equal(fidx_scan_row_newest(db, "/data", complete, 4, &row, &errmsg), 1);
	assert_int_equal(row.id, 1);
	fidx_scan_row_free(&row);
	assert_int_equal(fidx_scan_row_newest(db, "/data", complete, 1, &row, &errmsg), 0);
	assert_int_equal(fidx_scan_row_newest(db, "/dat", complete, 0, &row, &errmsg), 0);
	sqlite3_close(db);
}

static void test_pathset(void **state)
{
	(void)state;
	sqlite3 *db = new_db();
	exec_sql(db, "BEGIN");
	char sql[256];
	for (int i = 0; i < 3000; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO file (scan_id, path) VALUES (%d, '/r/%d')",
			 i % 3 ? 1 : 2, i);
		exec_sql(db, sql);
	}
	exec_sql(db, "INSERT INTO file (scan_id, path, error) VALUES"
		     " (1, CAST(x'2f722f0aff' AS TEXT), NULL),"
		     " (1, '/r/dir', '" FIDX_ERROR_NOT_READ "'),"
		     " (1, '/r/file', '" FIDX_ERROR_NOT_HASHED "'),"
		     " (1, '/r/denied', 'open: Permission denied'); COMMIT");
	char *errmsg = NULL;
	struct fidx_pathset *set = fidx_pathset_load(db, 1, &errmsg);
	assert_non_null(set);
	assert_int_equal(fidx_pathset_count(set), 2000 + 2);
	assert_true(fidx_pathset_has(set, "/r/1", 4));
	assert_false(fidx_pathset_has(set, "/r/3", 4)); /* scan 2's */
	assert_true(fidx_pathset_has(set, "/r/\n\xff", 5));
	assert_false(fidx_pathset_has(set, "/r/\n", 4));
	assert_true(fidx_pathset_has(set, "/r/denied", 9));
	assert_false(fidx_pathset_has(set, "/r/dir", 6));  /* done again on resume */
	assert_false(fidx_pathset_has(set, "/r/file", 7));
	fidx_pathset_free(set);
	fidx_pathset_free(NULL);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take),
		cmocka_unit_test(test_racy),
		cmocka_unit_test(test_scan_row),
		cmocka_unit_test(test_pathset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
