/*
 * test_scan.c - the whole pipeline (walker, hash workers, writer) on a small
 * tree, with several threads, checked against the tree it made and against
 * the database.  Run under TSan by `make check`: this is the threaded core.
 */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "scan.h"

#define DIRS 20
#define FILES 30

/* Makes DIRS folders of FILES files; file i holds i bytes.  Returns the byte total. */
static uint64_t make_tree(const char *root)
{
	uint64_t bytes = 0;
	char buf[FILES];
	memset(buf, 'x', sizeof(buf));
	for (int d = 0; d < DIRS; d++) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s/d%02d", root, d);
		assert_int_equal(mkdir(dir, 0755), 0);
		for (int f = 0; f < FILES; f++) {
			char file[PATH_MAX + 8];
			snprintf(file, sizeof(file), "%s/f%02d", dir, f);
			int fd = open(file, O_CREAT | O_WRONLY, 0644);
			assert_true(fd >= 0);
			assert_int_equal(write(fd, buf, f), f);
			close(fd);
			bytes += f;
		}
	}
	return bytes;
}

static int64_t query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *stmt;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return v;
}

static void test_pipeline_records_everything(void **state)
{
	(void)state;
	char root[] = "/tmp/fidx-test-scan-XXXXXX";
	assert_non_null(mkdtemp(root));
	uint64_t bytes = make_tree(root);
	char dbpath[PATH_MAX];
	snprintf(dbpath, sizeof(dbpath), "%s.db", root);

	char *errmsg = NULL;
	struct fidx_store *st = fidx_store_open(dbpath, NULL, &errmsg);
	assert_non_null(st);
	atomic_bool cancel = false;
	struct fidx_scan_opts opts = {
		.digests = 1u << FIDX_SHA256 | 1u << FIDX_XXH128, .jobs = 4,
		.options_json = "{}", .cancel = &cancel,
	};
	const char *roots[] = {root};
	struct fidx_scan_result r;
	assert_int_equal(fidx_scan(st, roots, 1, &opts, &r, &errmsg), 0);
	assert_int_equal(fidx_store_close(st), 0);

	uint64_t entries = 1 + DIRS + DIRS * FILES;
	assert_int_equal(r.entries, entries);
	assert_int_equal(r.files, DIRS * FILES);
	assert_int_equal(r.dirs, 1 + DIRS);
	assert_int_equal(r.bytes, bytes);
	assert_int_equal(r.errors, 0);
	assert_false(r.interrupted);
	assert_int_equal(r.nscans, 1);
	assert_true(r.scan_ids[0] > 0);
	free(r.scan_ids);

	sqlite3 *db;
	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	assert_int_equal(query_int(db, "SELECT count(*) FROM file"), entries);
	assert_int_equal(query_int(db, "SELECT count(DISTINCT path) FROM file"), entries);
	assert_int_equal(query_int(db, "SELECT count(*) FROM file WHERE type = 'f' AND "
				       "length(sha256) = 32 AND length(xxh128) = 16 AND md5 IS NULL"),
			 DIRS * FILES);
	assert_int_equal(query_int(db, "SELECT sum(size) FROM file WHERE type = 'f'"), bytes);
	assert_int_equal(query_int(db, "SELECT count(*) FROM scan WHERE status = 'complete' "
				       "AND entries = (SELECT count(*) FROM file)"), 1);
	sqlite3_close(db);

	char cmd[PATH_MAX * 4 + 64];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s-wal' '%s-shm'", root, dbpath, dbpath,
		 dbpath);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipeline_records_everything),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
