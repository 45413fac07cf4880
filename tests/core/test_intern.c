/*
 * test_intern.c - the key table of fidx du and fidx stats: dense indexes in
 * order of first appearance, keys with any bytes (NULs included) kept
 * exactly and NUL-ended, growth past many doublings, keys longer than an
 * arena chunk.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "intern.h"

static void test_indexes_in_order(void **state)
{
	(void)state;
	struct fidx_intern *t = fidx_intern_new();
	int added;
	assert_non_null(t);
	assert_int_equal(fidx_intern_count(t), 0);
	assert_int_equal(fidx_intern_find(t, "a", 1), -1);
	assert_int_equal(fidx_intern_add(t, "a", 1, &added), 0);
	assert_true(added);
	assert_int_equal(fidx_intern_add(t, "b", 1, &added), 1);
	assert_true(added);
	assert_int_equal(fidx_intern_add(t, "a", 1, &added), 0);
	assert_false(added);
	/* A prefix and the empty key are keys of their own. */
	assert_int_equal(fidx_intern_add(t, "ab", 1, NULL), 0);
	assert_int_equal(fidx_intern_add(t, "ab", 2, &added), 2);
	assert_true(added);
	assert_int_equal(fidx_intern_add(t, "", 0, &added), 3);
	assert_true(added);
	assert_int_equal(fidx_intern_find(t, "", 0), 3);
	assert_int_equal(fidx_intern_count(t), 4);
	size_t len;
	assert_string_equal(fidx_intern_key(t, 2, &len), "ab");
	assert_int_equal(len, 2);
	fidx_intern_free(t);
}

static void test_binary_keys(void **state)
{
	(void)state;
	struct fidx_intern *t = fidx_intern_new();
	const unsigned char k1[] = {0, 1, 0, 2}, k2[] = {0, 1, 0, 3}, k3[] = {0, 1, 0};
	assert_int_equal(fidx_intern_add(t, k1, sizeof(k1), NULL), 0);
	assert_int_equal(fidx_intern_add(t, k2, sizeof(k2), NULL), 1);
	assert_int_equal(fidx_intern_add(t, k3, sizeof(k3), NULL), 2);
	size_t len;
	const char *k = fidx_intern_key(t, 1, &len);
	assert_int_equal(len, 4);
	assert_memory_equal(k, k2, 4);
	assert_int_equal(k[4], '\0');
	assert_int_equal(fidx_intern_find(t, k1, sizeof(k1)), 0);
	fidx_intern_free(t);
}

static void test_many_keys(void **state)
{
	(void)state;
	struct fidx_intern *t = fidx_intern_new();
	enum { N = 300000 };
	char key[32];
	for (int i = 0; i < N; i++) {
		int n = snprintf(key, sizeof(key), "/some/dir/%d", i);
		assert_int_equal(fidx_intern_add(t, key, (size_t)n, NULL), i);
	}
	assert_int_equal(fidx_intern_count(t), N);
	/* Every key is still found, at its index, with its bytes. */
	for (int i = 0; i < N; i += 7) {
		int n = snprintf(key, sizeof(key), "/some/dir/%d", i);
		assert_int_equal(fidx_intern_find(t, key, (size_t)n), i);
		assert_string_equal(fidx_intern_key(t, i, NULL), key);
	}
	assert_int_equal(fidx_intern_find(t, "/some/dir/-1", 12), -1);
	fidx_intern_free(t);
}

static void test_long_key(void **state)
{
	(void)state;
	struct fidx_intern *t = fidx_intern_new();
	size_t n = 3u << 20; /* longer than an arena chunk */
	char *big = malloc(n);
	assert_non_null(big);
	memset(big, 'x', n);
	assert_int_equal(fidx_intern_add(t, "small", 5, NULL), 0);
	assert_int_equal(fidx_intern_add(t, big, n, NULL), 1);
	assert_int_equal(fidx_intern_add(t, "after", 5, NULL), 2);
	size_t len;
	assert_memory_equal(fidx_intern_key(t, 1, &len), big, n);
	assert_int_equal(len, n);
	assert_string_equal(fidx_intern_key(t, 0, NULL), "small");
	assert_string_equal(fidx_intern_key(t, 2, NULL), "after");
	free(big);
	fidx_intern_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_indexes_in_order),
		cmocka_unit_test(test_binary_keys),
		cmocka_unit_test(test_many_keys),
		cmocka_unit_test(test_long_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
