/*
 * test_seal.c - the store conformance suite: the seal of a scan (seal.h),
 * as every store backend must keep it, checked through store.h alone.
 *
 * Scans are written through a WRITE store, sealed when they end
 * (fidx_store_end_scan() with a seal buffer) or afterwards
 * (fidx_store_seal()), and checked by fidx_store_verify() on a READ store:
 * a sealed scan verifies with the seal it was given and names nothing; a
 * scan is sealed once and only when complete; the seal of a resumed scan
 * covers the rows kept and the rows added; rows rolled back are not sealed;
 * a store seals a scan another store wrote from its rows read back.  The
 * two scans of two_scans() interleave their rows, as the roots of one run
 * do, with paths and times that are hard to write down (a newline, '|',
 * 0xff; times before 1677 and after 2262).
 *
 * That the seal is the documented one (SHA-256 of the lines SQLite's quote()
 * makes), the row hashes kept in file_seal, and what verify names when rows
 * are altered, added or removed behind the store's back, are the SQLite
 * backend's own suite's: tests/store/sqlite/test_seal.c.
 *
 * The target comes from one place, target_new() in store/fixture.h, as in
 * test_store.c; so do the rows and scans written (seal_add(),
 * seal_two_scans()), which the SQLite backend's seal test writes too.  The
 * store hashes on a thread of its own: this test runs under TSan too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "row.h"
#include "scanrow.h"
#include "seal.h"
#include "store.h"
#include "store/fixture.h"

/* ------------------------------------------------------------- helpers --- */

/* The failure of the last store call a test makes itself (MUST()). */
static struct fidx_error err;

/*
 * Counts the rows of scans[0..n) of target whose path holds "th|ree" and
 * whose times read back as seal_add_error() wrote them (beyond the range of
 * nanoseconds in 64 bits, and a ctime of 0).
 */
static int count_far_times(const struct target *target, const int64_t *scans,
			   const char *const *roots, size_t n)
{
	struct fidx_store *st = must_open(target->name, FIDX_STORE_READ, 0);
	struct fidx_rows_query q = {.scans = scans, .roots = roots, .nscans = n,
				    .columns = FIDX_COLUMN(FIDX_COL_PATH) | FIDX_TIME_COLUMNS,
				    .order = FIDX_ROWS_ID};
	struct fidx_rows *it = fidx_store_rows(st, &q, &err);
	const struct fidx_row *row;
	struct fidx_time t;
	int rc, count = 0;
	if (!it)
		fail_msg("fidx_store_rows: %s", err.msg);
	while ((rc = fidx_rows_next(it, &row, &err)) == 1) {
		if (!strstr(fidx_row_text(row, FIDX_COL_PATH), "th|ree"))
			continue;
		assert_true(fidx_row_time(row, FIDX_COL_ATIME, &t));
		assert_true(fidx_time_eq(t, (struct fidx_time){.sec = -9300000000LL, .nsec = 5}));
		assert_true(fidx_row_time(row, FIDX_COL_MTIME, &t));
		assert_true(fidx_time_eq(t, (struct fidx_time){.sec = 13569465600LL,
								.nsec = 999999999}));
		assert_true(fidx_row_time(row, FIDX_COL_CTIME, &t));
		assert_true(fidx_time_eq(t, (struct fidx_time){0}));
		count++;
	}
	if (rc < 0)
		fail_msg("fidx_rows_next: %s", err.msg);
	fidx_rows_close(it);
	must_close(st);
	return count;
}

/* --------------------------------------------------------------- tests --- */

/*
 * A complete scan is sealed once: a second seal is refused; each verifies
 * with the seal it was given, over its four rows, naming nothing.  The
 * times beyond 64-bit nanoseconds are kept, and read back, whole.
 */
static void test_sealed_once(void **state)
{
	struct target *target = *state;
	int64_t ids[2];
	struct fidx_store *st = seal_two_scans(target->name, "complete", ids);
	uint8_t seal[2][FIDX_SEAL_LEN], again[FIDX_SEAL_LEN];
	assert_int_equal(fidx_store_seal(st, ids[0], seal[0], &err), 1);
	assert_int_equal(fidx_store_seal(st, ids[1], seal[1], &err), 1);
	assert_int_equal(fidx_store_seal(st, ids[1], again, &err), -1);
	assert_non_null(strstr(err.msg, "sealed already"));
	must_close(st);
	const char *const roots[] = {"/a", "/b\n|x"};
	assert_int_equal(count_far_times(target, ids, roots, 2), 2); /* one row of each scan */
	for (int s = 0; s < 2; s++) {
		struct found c;
		struct fidx_seal_result r = seal_check(target->name, ids[s], &c);
		assert_true(r.sealed);
		assert_int_equal(r.rows, 4);
		assert_int_equal(r.recorded_len, FIDX_SEAL_LEN);
		assert_memory_equal(r.recorded, seal[s], FIDX_SEAL_LEN);
		assert_memory_equal(r.computed, seal[s], FIDX_SEAL_LEN);
		assert_int_equal(c.n, 0);
	}
	assert_memory_not_equal(seal[0], seal[1], FIDX_SEAL_LEN);
}

/*
 * fidx_store_end_scan() with a seal buffer seals a complete scan in the
 * transaction that ends it (returning 1), and leaves an interrupted one
 * unsealed (returning 0).
 */
static void test_end_seals(void **state)
{
	struct target *target = *state;
	struct fidx_store *st = must_open(target->name, FIDX_STORE_WRITE, 0);
	int64_t a = must_begin(st, "/a"), b = must_begin(st, "/b");
	seal_add(st, a, "/a", 'd', 4096);
	seal_add(st, b, "/b", 'd', 4096);
	seal_add(st, a, "/a/one", 'f', 1);
	seal_add(st, b, "/b/one", 'f', 1);
	struct fidx_scan_totals t = {.finished_ns = 1700000001000000000, .status = "complete",
				     .entries = 2, .files = 1, .dirs = 1, .bytes = 1};
	uint8_t seal[FIDX_SEAL_LEN];
	assert_int_equal(fidx_store_end_scan(st, a, &t, seal, &err), 1);
	t.status = "interrupted";
	uint8_t none[FIDX_SEAL_LEN];
	assert_int_equal(fidx_store_end_scan(st, b, &t, none, &err), 0);
	must_close(st);
	struct found c;
	struct fidx_seal_result r = seal_check(target->name, a, &c);
	assert_true(r.sealed);
	assert_memory_equal(r.recorded, seal, FIDX_SEAL_LEN);
	assert_memory_equal(r.computed, seal, FIDX_SEAL_LEN);
	assert_int_equal(r.rows, 2);
	assert_int_equal(c.n, 0);
	r = seal_check(target->name, b, &c);
	assert_false(r.sealed);
	assert_string_equal(r.status, "interrupted");
}

/* An interrupted scan is not sealed: fidx_store_seal() refuses it, verify finds no seal. */
static void test_only_complete(void **state)
{
	struct target *target = *state;
	int64_t ids[2];
	struct fidx_store *st = seal_two_scans(target->name, "interrupted", ids);
	uint8_t seal[FIDX_SEAL_LEN];
	assert_int_equal(fidx_store_seal(st, ids[1], seal, &err), -1);
	assert_non_null(strstr(err.msg, "not complete"));
	must_close(st);
	struct found c;
	struct fidx_seal_result r = seal_check(target->name, ids[1], &c);
	assert_false(r.sealed);
	assert_false(r.pre_v3);
	assert_string_equal(r.status, "interrupted");
	assert_int_equal(c.n, 0);
}

/*
 * A scan interrupted with rows to do again, then resumed by another store
 * (another process): the unfinished rows are dropped, the seal covers the
 * rows kept and the new ones, and verifies, naming nothing.
 */
static void test_resumed(void **state)
{
	struct target *target = *state;
	int64_t a = seal_interrupted(target->name);

	struct fidx_store *st = must_open(target->name, FIDX_STORE_WRITE, 0);
	struct fidx_scan_totals so_far;
	MUST(fidx_store_resume_scan(st, a, &so_far, &err));
	assert_int_equal(so_far.entries, 2);
	seal_add(st, a, "/a/two", 'f', 2);
	seal_add(st, a, "/a/sub", 'd', 4096);
	seal_add(st, a, "/a/sub/three", 'f', 3);
	seal_end(st, a, "complete");
	uint8_t seal[FIDX_SEAL_LEN];
	assert_int_equal(fidx_store_seal(st, a, seal, &err), 1);
	must_close(st);
	struct found c;
	struct fidx_seal_result r = seal_check(target->name, a, &c);
	assert_true(r.sealed);
	assert_memory_equal(r.recorded, seal, FIDX_SEAL_LEN);
	assert_memory_equal(r.computed, seal, FIDX_SEAL_LEN);
	assert_int_equal(r.rows, 5);
	assert_int_equal(c.n, 0);
}

/*
 * Rows rolled back (the store closed with a batch open) are gone, and a
 * store seals a scan that another store wrote (nothing streamed to it) from
 * its rows read back: the two kept.
 */
static void test_rolled_back_and_read_back(void **state)
{
	struct target *target = *state;
	int64_t a = seal_rolled_back(target->name);

	struct fidx_store *st = must_open(target->name, FIDX_STORE_WRITE, 0);
	struct fidx_scan_totals t = {.finished_ns = 1, .status = "complete", .entries = 2,
				     .files = 1, .dirs = 1, .bytes = 1};
	assert_int_equal(fidx_store_end_scan(st, a, &t, NULL, &err), 0);
	uint8_t seal[FIDX_SEAL_LEN];
	assert_int_equal(fidx_store_seal(st, a, seal, &err), 1);
	must_close(st);
	struct found c;
	struct fidx_seal_result r = seal_check(target->name, a, &c);
	assert_true(r.sealed);
	assert_memory_equal(r.recorded, seal, FIDX_SEAL_LEN);
	assert_memory_equal(r.computed, seal, FIDX_SEAL_LEN);
	assert_int_equal(r.rows, 2);
	assert_int_equal(c.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TARGET_TEST(test_sealed_once),
		TARGET_TEST(test_end_seals),
		TARGET_TEST(test_only_complete),
		TARGET_TEST(test_resumed),
		TARGET_TEST(test_rolled_back_and_read_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
