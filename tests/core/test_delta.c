/*
 * test_delta.c - the runs of a scan kept as its changes (core/delta.h):
 * encoded and decoded back exactly, damaged bytes refused, and composition
 * along a chain against a brute-force map of every id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "delta.h"

/* A run of lo..hi to id + off, fill f. */
#define RUN(l, h, o, f) {.lo = (l), .hi = (h), .off = (o), .fill = (f)}

static void test_roundtrip(void **state)
{
	(void)state;
	struct fidx_delta_map m[] = {RUN(1, 100, 1000, 1), RUN(102, 102, 999, 0),
				     RUN(200, 5000, -150, 1), RUN(FIDX_DELTA_KEY_MAX - 5,
				     FIDX_DELTA_KEY_MAX - 1, 1, 0)};
	size_t n = sizeof(m) / sizeof(m[0]), len, got_n;
	uint8_t *p = fidx_delta_encode(m, n, &len);
	struct fidx_delta_map *got;
	struct fidx_error err;
	assert_non_null(p);
	assert_true(len < 40);  /* a few bytes a run */
	assert_int_equal(fidx_delta_decode(p, len, 7, &got, &got_n, &err), 0);
	assert_int_equal(got_n, n);
	assert_memory_equal(got, m, sizeof(m));
	free(got);
	/* Cut short, or one byte more: refused, and the scan named. */
	assert_int_equal(fidx_delta_decode(p, len - 1, 7, &got, &got_n, &err), -1);
	assert_int_equal(err.code, EBADMSG);
	assert_non_null(strstr(err.msg, "scan 7"));
	uint8_t *more = malloc(len + 1);
	memcpy(more, p, len);
	more[len] = 0;
	assert_int_equal(fidx_delta_decode(more, len + 1, 7, &got, &got_n, &err), -1);
	free(more);
	/* A 10th byte of a varint with bits past 64 (here, a run's start read as 0): refused. */
	static const uint8_t overlong[] = {1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					   0x80, 0x02, 0, 0};
	assert_int_equal(fidx_delta_decode(overlong, sizeof(overlong), 7, &got, &got_n, &err), -1);
	assert_int_equal(err.code, EBADMSG);
	free(p);
	p = fidx_delta_encode(NULL, 0, &len);
	assert_int_equal(fidx_delta_decode(p, len, 1, &got, &got_n, &err), 0);
	assert_int_equal(got_n, 0);
	free(got);
	free(p);
}

/* Where map m sends id x (-1: nowhere), and the fill it gives. */
static int64_t apply(const struct fidx_delta_map *m, size_t n, int64_t x, int64_t *fill)
{
	for (size_t i = 0; i < n; i++)
		if (x >= m[i].lo && x <= m[i].hi) {
			*fill = m[i].fill;
			return x + m[i].off;
		}
	return -1;
}

static void test_compose(void **state)
{
	(void)state;
	struct fidx_error err;
	srand(1);
	for (int round = 0; round < 200; round++) {
		/* Two random injective piecewise maps of ids 1..300. */
		struct fidx_delta_map a[20], b[20];
		size_t na = 0, nb = 0;
		int64_t at = 1 + rand() % 5;
		while (na < 20 && at < 300) {
			int64_t len = 1 + rand() % 30;
			a[na] = (struct fidx_delta_map)RUN(at, at + len - 1, rand() % 40 - 10 + 400 * (int64_t)na, rand() % 3 == 0 ? 5 : 0);
			at += len + rand() % 4;
			na++;
		}
		at = 300;
		while (nb < 20 && at < 10000) {
			int64_t len = 1 + rand() % 400;
			b[nb] = (struct fidx_delta_map)RUN(at, at + len - 1, 20000 + 500 * (int64_t)nb, rand() % 2 ? 9 : 0);
			at += len + rand() % 50;
			nb++;
		}
		struct fidx_delta_map *c;
		size_t nc;
		assert_int_equal(fidx_delta_compose(a, na, 3, b, nb, &c, &nc, &err), 0);
		for (size_t i = 1; i < nc; i++)
			assert_true(c[i - 1].hi < c[i].lo);
		for (int64_t x = 0; x < 320; x++) {
			int64_t fa = 0, fb = 0, fc = 0;
			int64_t y = apply(a, na, x, &fa);
			int64_t z = y < 0 ? -1 : apply(b, nb, y, &fb);
			int64_t got = apply(c, nc, x, &fc);
			assert_int_equal(got, z);
			if (z >= 0)
				assert_int_equal(fc, fa ? fa : fb);
		}
		free(c);
	}
}

/* Runs of a scan that give two rows one id: refused, the scan named. */
static void test_compose_damaged(void **state)
{
	(void)state;
	struct fidx_delta_map a[] = {RUN(0, 10, 100, 0), RUN(20, 30, 85, 0)};
	struct fidx_delta_map b[] = {RUN(0, FIDX_DELTA_KEY_MAX, 0, 0)};
	struct fidx_delta_map *c = NULL;
	size_t nc = 0;
	struct fidx_error err;
	assert_int_equal(fidx_delta_compose(a, 2, 42, b, 1, &c, &nc, &err), -1);
	assert_int_equal(err.code, EBADMSG);
	assert_non_null(strstr(err.msg, "the changes of scan 42 are damaged"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_compose),
		cmocka_unit_test(test_compose_damaged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
