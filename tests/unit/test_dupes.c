/*
 * test_dupes.c - the store side of `fidx dupes`: file_digest rows.
 *
 * fidx_store_add_digests() writes what fidx dupes computed after a scan: a
 * later row for the same file keeps what it does not set (edges, or the
 * SHA-256), replaces what it does, and a failure keeps none of its rows.
 * Checked by reading the table back with SQLite.
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
#include <unistd.h>

#include "record.h"
#include "store.h"

/* One test's database: a temporary folder and dir/test.db. */
struct fixture {
	char dir[64];
	char db[128];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/fidx-test-dupes.XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->db, sizeof(f->db), "%s/test.db", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[160];
	static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", f->db, suffixes[i]);
		unlink(path);
	}
	int ret = rmdir(f->dir);
	free(f);
	return ret;
}

/* Opens the store with one scan of two files (ids 1 and 2), or fails the test. */
static struct fidx_store *store_with_files(const char *db)
{
	char *msg = NULL;
	struct fidx_store *st = fidx_store_open(db, NULL, &msg);
	if (!st)
		fail_msg("fidx_store_open: %s", msg ? msg : "(no message)");
	struct fidx_scan_info info = {.root = "/r", .started_ns = 1, .options = "{}"};
	int64_t scan = fidx_store_begin_scan(st, &info);
	assert_true(scan > 0);
	for (int i = 0; i < 2; i++) {
		struct fidx_record rec = {.scan_id = scan, .type = 'f', .has_meta = true};
		char path[16];
		snprintf(path, sizeof(path), "/r/%d", i);
		rec.path = path;
		rec.path_len = strlen(path);
		rec.name_off = 3;
		rec.ext_off = rec.path_len;
		assert_int_equal(fidx_store_add(st, &rec), 0);
	}
	assert_int_equal(fidx_store_flush(st), 0);
	return st;
}

/* Reads column col of file_digest's row for file id as SQL text (quote()). */
static void column_text(const char *db, int64_t id, const char *col, char *out, size_t size)
{
	sqlite3 *h;
	sqlite3_stmt *s;
	char sql[128];
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	snprintf(sql, sizeof(sql), "SELECT quote(%s) FROM file_digest WHERE file_id = ?", col);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK);
	sqlite3_bind_int64(s, 1, id);
	out[0] = '\0';
	if (sqlite3_step(s) == SQLITE_ROW)
		snprintf(out, size, "%s", (const char *)sqlite3_column_text(s, 0));
	else
		snprintf(out, size, "(no row)");
	sqlite3_finalize(s);
	sqlite3_close(h);
}

/* Edges first, the SHA-256 later: the row keeps both; new edges replace old ones. */
static void test_merge(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = store_with_files(f->db);
	struct fidx_file_digest d = {.file_id = 1, .read_ns = 5, .edge_block = 16384};
	char text[160];

	memset(d.edges, 0xab, sizeof(d.edges));
	assert_int_equal(fidx_store_add_digests(st, &d, 1), 0);
	d = (struct fidx_file_digest){.file_id = 1, .read_ns = 6, .has_sha256 = true};
	memset(d.sha256, 0x01, sizeof(d.sha256));
	assert_int_equal(fidx_store_add_digests(st, &d, 1), 0);
	column_text(f->db, 1, "edges", text, sizeof(text));
	assert_string_equal(text, "X'ABABABABABABABABABABABABABABABAB'");
	column_text(f->db, 1, "sha256", text, sizeof(text));
	assert_string_equal(text, "X'0101010101010101010101010101010101010101010101010101010101010101'");
	column_text(f->db, 1, "edge_block", text, sizeof(text));
	assert_string_equal(text, "16384");
	column_text(f->db, 1, "read_ns", text, sizeof(text));
	assert_string_equal(text, "6"); /* the later run's time */

	d = (struct fidx_file_digest){.file_id = 1, .read_ns = 7, .edge_block = 4096};
	memset(d.edges, 0xcd, sizeof(d.edges));
	assert_int_equal(fidx_store_add_digests(st, &d, 1), 0);
	column_text(f->db, 1, "edges", text, sizeof(text));
	assert_string_equal(text, "X'CDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCD'");
	column_text(f->db, 1, "edge_block", text, sizeof(text));
	assert_string_equal(text, "4096");
	column_text(f->db, 1, "sha256", text, sizeof(text));
	assert_string_equal(text, "X'0101010101010101010101010101010101010101010101010101010101010101'");
	column_text(f->db, 2, "sha256", text, sizeof(text));
	assert_string_equal(text, "(no row)");
	assert_int_equal(fidx_store_close(st), 0);
}

/* A failing row (no such file row) keeps none of the batch. */
static void test_failure_keeps_nothing(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = store_with_files(f->db);
	struct fidx_file_digest d[2] = {{.file_id = 2, .read_ns = 1, .has_sha256 = true},
					{.file_id = 2, .read_ns = 2, .has_sha256 = true}};
	char text[160];
	sqlite3 *h;

	/*
	 * A constraint makes the second row fail, as a full disk would (a
	 * trigger would not: fidx's connections run none, store_sqlite.h).
	 */
	assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "DROP TABLE file_digest; CREATE TABLE file_digest"
				      " (file_id INTEGER PRIMARY KEY, read_ns INTEGER NOT NULL"
				      " CHECK (read_ns < 2), edge_block INTEGER, edges BLOB,"
				      " sha256 BLOB)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	assert_int_equal(fidx_store_add_digests(st, d, 2), -1);
	assert_non_null(strstr(fidx_store_errmsg(st), "CHECK constraint failed"));
	column_text(f->db, 2, "sha256", text, sizeof(text));
	assert_string_equal(text, "(no row)");
	assert_int_equal(fidx_store_close(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_keeps_nothing, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
