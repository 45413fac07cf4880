/*
 * test_file_digest.c - the file_digest rows of the SQLite backend, as SQLite
 * holds them.
 *
 * fidx_store_add_digests() writes what fidx dupes computed after a scan: a
 * later row for the same file keeps what it does not set (edges, or the
 * SHA-256), replaces what it does and takes the later run's read_ns (which
 * no reader of the store returns), and a failure keeps none of its rows.
 * Checked by reading the table back with SQLite; the failure is made by
 * replacing the table with one whose CHECK constraint refuses a row.
 * tests/core/test_dupes.c checks the same merge through the store, on the
 * same two files (open_with_two_files(), store/fixture.h).
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
#include "store/fixture.h"

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

/* Edges first, the SHA-256 later: the row keeps both, with the later read_ns; new edges replace old ones. */
static void test_merge(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = open_with_two_files(f->db, NULL); /* files 1 and 2 */
	struct fidx_file_digest d = {.file_id = 1, .read_ns = 5, .edge_block = 16384};
	struct fidx_error err;
	char text[160];

	memset(d.edges, 0xab, sizeof(d.edges));
	assert_int_equal(fidx_store_add_digests(st, &d, 1, &err), 0);
	d = (struct fidx_file_digest){.file_id = 1, .read_ns = 6, .has_sha256 = true};
	memset(d.sha256, 0x01, sizeof(d.sha256));
	assert_int_equal(fidx_store_add_digests(st, &d, 1, &err), 0);
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
	assert_int_equal(fidx_store_add_digests(st, &d, 1, &err), 0);
	column_text(f->db, 1, "edges", text, sizeof(text));
	assert_string_equal(text, "X'CDCDCDCDCDCDCDCDCDCDCDCDCDCDCDCD'");
	column_text(f->db, 1, "edge_block", text, sizeof(text));
	assert_string_equal(text, "4096");
	column_text(f->db, 1, "sha256", text, sizeof(text));
	assert_string_equal(text, "X'0101010101010101010101010101010101010101010101010101010101010101'");
	column_text(f->db, 2, "sha256", text, sizeof(text));
	assert_string_equal(text, "(no row)");
	assert_int_equal(fidx_store_close(st, &err), 0);
}

/* A failing row keeps none of the batch, and the failure says SQLite's reason. */
static void test_failure_keeps_nothing(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = open_with_two_files(f->db, NULL); /* files 1 and 2 */
	struct fidx_file_digest d[2] = {{.file_id = 2, .read_ns = 1, .has_sha256 = true},
					{.file_id = 2, .read_ns = 2, .has_sha256 = true}};
	struct fidx_error err;
	char text[160];
	sqlite3 *h;

	/*
	 * A constraint makes the second row fail, as a full disk would (a
	 * trigger would not: fidx's connections run none, sqlite.h).
	 */
	assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "DROP TABLE file_digest; CREATE TABLE file_digest"
				      " (file_id INTEGER PRIMARY KEY, read_ns INTEGER NOT NULL"
				      " CHECK (read_ns < 2), edge_block INTEGER, edges BLOB,"
				      " sha256 BLOB)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	assert_int_equal(fidx_store_add_digests(st, d, 2, &err), -1);
	if (!strstr(err.msg, "CHECK constraint failed"))
		fail_msg("the reason is lost: '%s'", err.msg);
	column_text(f->db, 2, "sha256", text, sizeof(text));
	assert_string_equal(text, "(no row)");
	assert_int_equal(fidx_store_close(st, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		FIXTURE_TEST(test_merge),
		FIXTURE_TEST(test_failure_keeps_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
