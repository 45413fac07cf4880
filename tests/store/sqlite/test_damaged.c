/*
 * test_damaged.c - what the core makes of rows fidx could never write, in a
 * SQLite database the store wrote and SQLite then changed.
 *
 * The core's tests (tests/core/) write their rows through the store, which
 * writes only sound ones; these cases need a value no fidx writes, so they
 * are made here, with SQL, and read back through the store:
 *
 *   - reuse: a digest of the wrong length is a damaged row, which the
 *     digest table passes over (its file is read again) without failing
 *     the load (tests/core/test_reuse.c, test_take);
 *   - diff: a row with its size NULL beside the rest of its metadata (a
 *     file fidx could stat but not size) compares the NULL as a value: 's'
 *     (tests/core/test_diff.c, test_nulls_and_errors).
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

#include "diff.h"
#include "record.h"
#include "reuse.h"
#include "store.h"
#include "store/fixture.h"

/* Runs sql on db with SQLite, or fails the test. */
static void exec_sql(const char *db, const char *sql)
{
	sqlite3 *h;
	char *msg = NULL;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("'%s': %s", sql, msg);
	sqlite3_close(h);
}

/*
 * A SHA-256 of one byte (x'00') is not a digest fidx wrote: the row gives
 * the table nothing and its file is read again, while the load goes on and
 * takes the sound rows around it.
 */
static void test_reuse_malformed_digest(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = must_open(f->old, FIDX_STORE_WRITE, 0);
	int64_t scan = must_begin_at(st, "/r", 1000000000000);
	char path[32];
	for (int64_t ino = 1; ino <= 20; ino++) {
		struct fidx_record rec = file_rec(ino, false);
		rec.scan_id = scan;
		rec.digest_mask = 1u << FIDX_SHA256;
		snprintf(path, sizeof(path), "/r/%lld", (long long)ino);
		must_put(st, &rec, path);
	}
	must_end(st, scan, "complete");
	must_close(st);
	exec_sql(f->old, "UPDATE file SET sha256 = x'00' WHERE ino = 15");

	st = must_open(f->old, FIDX_STORE_WRITE, 0);
	struct fidx_scan_list list = {0};
	struct fidx_error err;
	struct fidx_reuse *r = fidx_reuse_new(1u << FIDX_SHA256, FIDX_REUSE_MEMORY, &err);
	assert_non_null(r);
	if (fidx_reuse_load(r, st, must_scan_row(st, scan, &list), &err) < 0)
		fail_msg("fidx_reuse_load: %s", err.msg);
	assert_int_equal(fidx_reuse_count(r), 19); /* all but the malformed digest */
	struct fidx_record rec = file_rec(15, false);
	assert_false(fidx_reuse_take(r, &rec));
	assert_int_equal(rec.digest_mask, 0);
	rec = file_rec(16, false);
	assert_true(fidx_reuse_take(r, &rec));
	fidx_reuse_free(r);
	fidx_scan_list_free(&list);
	must_close(st);
}

/* Adds /r and /r/f (size 4, the SHA-256 01 00 ... when sha) to a new scan of /r in st. */
static int64_t scan_of_f(struct fidx_store *st, bool sha, const char *error)
{
	int64_t scan = must_begin_at(st, "/r", 1000);
	struct fidx_record dir = {.scan_id = scan, .type = 'd', .has_meta = true};
	dir.meta = (struct fidx_meta){.size = 4096, .mode = 040755, .nlink = 1, .dev = 2049,
				      .ino = 2, .atime = fidx_time_of_ns(5),
				      .mtime = fidx_time_of_ns(10), .ctime = fidx_time_of_ns(10)};
	must_put(st, &dir, "/r");
	struct fidx_record file = {.scan_id = scan, .type = 'f', .has_meta = true,
				   .error = (char *)error};
	file.meta = (struct fidx_meta){.size = 4, .mode = 0100644, .nlink = 1, .dev = 2049,
				       .ino = 3, .atime = fidx_time_of_ns(5),
				       .mtime = fidx_time_of_ns(10), .ctime = fidx_time_of_ns(10)};
	if (sha) {
		file.digest_mask = 1u << FIDX_SHA256;
		file.digest[FIDX_SHA256][0] = 0x01;
	}
	must_put(st, &file, "/r/f");
	must_end(st, scan, "complete");
	return scan;
}

/*
 * A size NULL beside the rest of the metadata (and an error, no digest)
 * against the row that had them all: size unknown 's', content '?', error
 * 'e', and nothing else.
 */
static void test_diff_null_size(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = must_open(f->old, FIDX_STORE_WRITE, 0);
	int64_t o = scan_of_f(st, true, NULL);
	must_close(st);
	st = must_open(f->new, FIDX_STORE_WRITE, 0);
	int64_t n = scan_of_f(st, false, "open: x");
	must_close(st);
	exec_sql(f->new, "UPDATE file SET size = NULL WHERE path = '/r/f'");

	struct fidx_store *old = must_open(f->old, FIDX_STORE_READ, 0);
	struct fidx_store *new = must_open(f->new, FIDX_STORE_READ, 0);
	struct fidx_scan_list lo = {0}, ln = {0};
	struct fidx_diff_side a = {.st = old, .scan = must_scan_row(old, o, &lo)};
	struct fidx_diff_side b = {.st = new, .scan = must_scan_row(new, n, &ln)};
	struct fidx_error err;
	struct fidx_diff *d = fidx_diff_compare(&a, &b, FIDX_DIFF_DEFAULT, &err);
	if (!d)
		fail_msg("compare failed: %s", err.msg);
	assert_int_equal(d->n, 1);
	char sum[FIDX_DIFF_NATTRS + 1];
	assert_int_equal(d->entries[0].kind, FIDX_DIFF_CHANGED);
	assert_string_equal(d->entries[0].path, "/r/f");
	assert_string_equal(fidx_diff_summary(&d->entries[0], sum), ".s........?..e.");
	fidx_diff_free(d);
	fidx_scan_list_free(&lo);
	fidx_scan_list_free(&ln);
	must_close(old);
	must_close(new);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		FIXTURE_TEST(test_reuse_malformed_digest),
		FIXTURE_TEST(test_diff_null_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
