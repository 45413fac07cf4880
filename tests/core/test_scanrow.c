/*
 * test_scanrow.c - what a scan row's options say (scanrow.h): the JSON
 * object `fidx scan` writes, read back in C by fidx_scan_row_read_options()
 * for a store whose database cannot read JSON (PostgreSQL's backend).
 *
 * The options fidx_scan_options_json() writes come back field by field and
 * give the shape they were made with; text that is not what fidx writes
 * (not JSON, a value of another kind, nesting, a cut-off object) leaves the
 * fields unset and never reads past the text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "scanargs.h"
#include "scanrow.h"

/* Reads the options text into a fresh row (owned by the caller). */
static struct fidx_scan_row read_options(const char *text)
{
	struct fidx_scan_row row = {0};
	row.options = text ? strdup(text) : NULL;
	assert_int_equal(fidx_scan_row_read_options(&row), 0);
	return row;
}

/* What fidx writes comes back, and gives the shape it was made with. */
static void test_round_trip(void **state)
{
	(void)state;
	const char *excludes[] = {"*.tmp", "a\"b\\c", "\xff\x01 name"};
	char *json = fidx_scan_options_json(1u << FIDX_SHA256 | 1u << FIDX_MD5, 4, true, false, false,
					    true, FIDX_IO_SSD, false, excludes, 3, "/cases/x.db");
	assert_non_null(json);
	struct fidx_scan_row row = read_options(json);
	assert_non_null(row.opt_hash);
	assert_true(strstr(row.opt_hash, "sha256") && strstr(row.opt_hash, "md5"));
	assert_int_equal(row.opt_xdev, 1);
	assert_int_equal(row.opt_follow, 0);
	assert_int_equal(row.opt_stat, 0);
	assert_string_equal(row.opt_database, "/cases/x.db");
	assert_non_null(row.opt_exclude);
	assert_int_equal(row.opt_exclude[0], '[');
	struct fidx_scan_shape shape = {0};
	struct fidx_error err;
	assert_int_equal(fidx_scan_shape_of(&row, &shape, &err), 0);
	assert_int_equal(shape.nexcludes, 3);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(shape.excludes[i], excludes[i]);
	assert_true(shape.xdev && shape.no_stat && !shape.follow);
	fidx_scan_shape_free(&shape);
	fidx_scan_row_free(&row);
	free(json);

	/* --follow-all comes back, and makes another shape than --follow's. */
	json = fidx_scan_options_json(0, 1, false, true, true, false, FIDX_IO_SSD, false, NULL, 0,
				      NULL);
	assert_non_null(json);
	row = read_options(json);
	assert_int_equal(row.opt_follow, 1);
	assert_int_equal(row.opt_follow_all, 1);
	struct fidx_scan_shape all = {0}, inside = {0};
	assert_int_equal(fidx_scan_shape_of(&row, &all, &err), 0);
	assert_true(all.follow && all.follow_all);
	inside = all;
	inside.follow_all = false;
	assert_false(fidx_scan_shape_eq(&all, &inside));
	fidx_scan_shape_free(&all);
	fidx_scan_row_free(&row);
	free(json);
}

/* Text that is not what fidx writes leaves the fields unset. */
static void test_not_fidx(void **state)
{
	(void)state;
	static const char *const texts[] = {
		NULL, "", "not json", "[1, 2]", "{", "{\"hash\"", "{\"hash\":", "{\"hash\":\"md5",
		"{\"hash\": 5, \"database\": [\"x\"], \"exclude\": \"*\"}",
		"{\"hash\":\"\\u12\"}", "{\"a\":{\"b\":[1,{\"c\":\"}\"}]},\"stat\":true",
		"{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct fidx_scan_row row = read_options(texts[i]);
		assert_null(row.opt_hash);
		assert_null(row.opt_database);
		assert_null(row.opt_exclude);
		assert_int_equal(row.opt_xdev, 0);
		fidx_scan_row_free(&row);
	}
	/* Nesting is skipped whole: a later key is still read. */
	struct fidx_scan_row row = read_options(" { \"a\" : {\"b\":[1,{\"c\":\"}\"}]} , \"stat\" :"
						" true , \"hash\" : \"xxh128\" } ");
	assert_int_equal(row.opt_stat, 1);
	assert_string_equal(row.opt_hash, "xxh128");
	fidx_scan_row_free(&row);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_not_fidx),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
