/*
 * test_pathindex.c - the path index against brute force.
 *
 * A database made by the store (so the schema is the real one), with three
 * scans the store began and ended (1 and 2 complete, 3 running), gets rows of
 * random paths (bytes from a small alphabet with upper and lower case, '/',
 * 0xff and newline, so that prefixes are shared and trigrams repeat) inserted
 * with plain SQL, their ids out of path order; fidx_pathindex_build_missing()
 * indexes the complete scans.
 * Then every read must give, in (path, id) order, exactly what a scan of the
 * rows in C gives: all paths, and for random patterns every path that holds
 * the pattern (ASCII case folded) among those read (the index may add
 * candidates, never lose one).  A damaged block or list is EBADMSG, never a
 * crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pathstore.h"
#include "schema.h"
#include "store.h"
#include "store/fixture.h"

#define NSCANS 3      /* 1 and 2 complete, 3 running */
#define MAX_PATH 64

/* One row as inserted. */
struct row {
	int64_t id;
	int64_t scan;
	char path[MAX_PATH];
	size_t len;
};

/* One test's database, in a temporary folder, and the rows inserted into it. */
struct sample {
	struct fixture tmp;   /* the folder; tmp.db the database */
	sqlite3 *h;           /* tmp.db, opened with SQLite */
	struct row *rows;     /* in (path, id) order */
	size_t nrows;
};

/* (path, id) order, as the index reads. */
static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->path, y->path, n);
	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* Runs sql or fails. */
static void exec_sql(sqlite3 *h, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(h, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
}

static int setup(void **state)
{
	static const char alphabet[] = "aAbBcC/.\xff\n";
	struct sample *f = calloc(1, sizeof(*f));
	struct fidx_error err;

	if (!f || fixture_make(&f->tmp) < 0) {
		free(f);
		return -1;
	}
	/* The store makes the database and its scans: 1 and 2 complete, 3 running. */
	struct fidx_store *st = must_open(f->tmp.db, FIDX_STORE_WRITE, 0);
	for (int64_t s = 1; s <= NSCANS; s++)
		if (must_begin(st, "/r") != s)
			return -1;
	for (int64_t s = 1; s <= 2; s++)
		must_end(st, s, "complete");
	must_close(st);
	if (sqlite3_open(f->tmp.db, &f->h) != SQLITE_OK)
		return -1;
	exec_sql(f->h, FIDX_FILE_SCAN_PATH_SQL "; BEGIN");
	sqlite3_stmt *ins;
	if (sqlite3_prepare_v2(f->h, "INSERT INTO file (id, scan_id, path, name, ext)"
				     " VALUES (?, ?, ?, '', '')", -1, &ins, NULL) != SQLITE_OK)
		return -1;
	srand(7);
	f->rows = calloc(5000, sizeof(*f->rows));
	for (size_t i = 0; i < 5000; i++) {
		struct row *r = &f->rows[f->nrows++];
		r->scan = i < 3500 ? 1 : i < 4800 ? 2 : 3;
		/* Ids out of path order, as a parallel walk makes them. */
		r->id = (int64_t)((i * 7919) % 5000) + 1;
		int n = snprintf(r->path, MAX_PATH, "/r/");
		for (int k = rand() % 24; k > 0; k--)
			r->path[n++] = alphabet[rand() % (sizeof(alphabet) - 1)];
		n += snprintf(r->path + n, MAX_PATH - n, "#%zu", i);
		r->len = (size_t)n;
		sqlite3_bind_int64(ins, 1, r->id);
		sqlite3_bind_int64(ins, 2, r->scan);
		sqlite3_bind_text(ins, 3, r->path, n, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE)
			return -1;
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	exec_sql(f->h, "COMMIT");
	qsort(f->rows, f->nrows, sizeof(*f->rows), cmp_row);
	if (fidx_pathindex_build_missing(f->h, &err) != 0)
		fail_msg("build: %s", err.msg);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct sample *f = *state;
	sqlite3_close(f->h);
	int ret = tmpdir_remove(f->tmp.dir);
	free(f->rows);
	free(f);
	return ret;
}

/* Returns whether the n bytes of hay hold the m bytes of needle, ASCII case folded. */
static bool holds(const char *hay, size_t n, const char *needle, size_t m)
{
	for (size_t i = 0; i + m <= n; i++) {
		size_t k = 0;
		while (k < m && (hay[i + k] | (hay[i + k] >= 'A' && hay[i + k] <= 'Z' ? 0x20 : 0)) ==
				(needle[k] | (needle[k] >= 'A' && needle[k] <= 'Z' ? 0x20 : 0)))
			k++;
		if (k == m)
			return true;
	}
	return false;
}

/*
 * Reads scan with the trigrams of pattern (none: every path) and checks that
 * the paths holding pattern are exactly the brute-force ones, in order.
 */
static void check_read(struct sample *f, int64_t scan, const char *pat, size_t plen,
		       bool indexed)
{
	uint32_t tri[MAX_PATH];
	size_t ntri = pat ? fidx_pathindex_trigrams(pat, plen, tri, 0) : 0;
	struct fidx_pathiter *it = fidx_pathiter_open(f->h, scan, tri, ntri);
	struct fidx_pathent e;
	size_t i = 0, read = 0;
	int rc;

	assert_non_null(it);
	assert_int_equal(fidx_pathiter_indexed(it), indexed);
	while ((rc = fidx_pathiter_next(it, &e)) == 1) {
		read++;
		assert_int_equal(strlen(e.path), e.len);
		if (pat && !holds(e.path, e.len, pat, plen))
			continue;
		while (i < f->nrows && (f->rows[i].scan != scan ||
					(pat && !holds(f->rows[i].path, f->rows[i].len, pat, plen))))
			i++;
		assert_true(i < f->nrows);
		assert_int_equal(e.id, f->rows[i].id);
		assert_int_equal(e.len, f->rows[i].len);
		assert_memory_equal(e.path, f->rows[i].path, e.len);
		i++;
	}
	assert_int_equal(rc, 0);
	while (i < f->nrows && (f->rows[i].scan != scan ||
				(pat && !holds(f->rows[i].path, f->rows[i].len, pat, plen))))
		i++;
	assert_int_equal(i, f->nrows); /* nothing missed */
	if (!pat) {
		size_t n = 0;
		for (size_t k = 0; k < f->nrows; k++)
			n += f->rows[k].scan == scan;
		assert_int_equal(read, n);
	}
	fidx_pathiter_close(it);
}

/* Every path of each scan, in order; the running scan from the file table. */
static void test_all_paths(void **state)
{
	struct sample *f = *state;
	for (int64_t s = 1; s <= NSCANS; s++)
		check_read(f, s, NULL, 0, s != 3);
}

/* Random pieces of real paths and random strings: no path lost, none invented. */
static void test_patterns(void **state)
{
	static const char alphabet[] = "aAbBcC/.\xff\n#0123";
	struct sample *f = *state;
	char pat[8];
	srand(11);
	for (int k = 0; k < 400; k++) {
		size_t n = 1 + (size_t)(rand() % 6);
		if (k % 2) {
			const struct row *r = &f->rows[rand() % f->nrows];
			if (r->len < n)
				continue;
			memcpy(pat, r->path + rand() % (int)(r->len - n + 1), n);
		} else {
			for (size_t i = 0; i < n; i++)
				pat[i] = alphabet[rand() % (sizeof(alphabet) - 1)];
		}
		for (int64_t s = 1; s <= NSCANS; s++)
			check_read(f, s, pat, n, s != 3);
	}
}

/* The index narrows: a rare piece reads few blocks. */
static void test_narrows(void **state)
{
	struct sample *f = *state;
	uint32_t tri[8];
	size_t n = fidx_pathindex_trigrams("#3456", 5, tri, 0);
	struct fidx_pathiter *it = fidx_pathiter_open(f->h, 1, tri, n);
	assert_non_null(it);
	/* "456" is in #456, #1456, #2456 and #3456 only. */
	assert_true(fidx_pathiter_blocks(it) >= 1 && fidx_pathiter_blocks(it) <= 4);
	fidx_pathiter_close(it);
	n = fidx_pathindex_trigrams("zzz", 3, tri, 0);
	it = fidx_pathiter_open(f->h, 1, tri, n);
	assert_non_null(it);
	assert_int_equal(fidx_pathiter_blocks(it), 0);
	struct fidx_pathent e;
	assert_int_equal(fidx_pathiter_next(it, &e), 0);
	fidx_pathiter_close(it);
}

/* Trigrams: ASCII folded, sorted, without repeats; none below 3 bytes. */
static void test_trigrams(void **state)
{
	(void)state;
	uint32_t t[8];
	assert_int_equal(fidx_pathindex_trigrams("AbCd", 4, t, 0), 2);
	assert_int_equal(t[0], ('a' << 16) | ('b' << 8) | 'c');
	assert_int_equal(t[1], ('b' << 16) | ('c' << 8) | 'd');
	assert_int_equal(fidx_pathindex_trigrams("aaaaaa", 6, t, 0), 1);
	assert_int_equal(fidx_pathindex_trigrams("ab", 2, t, 0), 0);
	t[0] = 0xffffff;
	assert_int_equal(fidx_pathindex_trigrams("\xc3\x9c" "A", 3, t, 1), 2);
	assert_int_equal(t[0], (0xc3u << 16) | (0x9cu << 8) | 'a');
	assert_int_equal(t[1], 0xffffff);
}

/* A damaged block, or a damaged list, is EBADMSG. */
static void test_damaged(void **state)
{
	struct sample *f = *state;
	struct fidx_pathent e;
	int rc;
	exec_sql(f->h, "UPDATE path_block SET data = x'05ff' WHERE key = (2 << 32)");
	struct fidx_pathiter *it = fidx_pathiter_open(f->h, 2, NULL, 0);
	assert_non_null(it);
	while ((rc = fidx_pathiter_next(it, &e)) == 1)
		;
	assert_int_equal(rc, -1);
	assert_int_equal(errno, EBADMSG);
	fidx_pathiter_close(it);

	exec_sql(f->h, "UPDATE path_trigram SET blocks = x'0000'"
		       " WHERE key = (1 << 24) | (unicode('#') << 16) | (unicode('1') << 8) | unicode('2')");
	uint32_t tri[4];
	size_t n = fidx_pathindex_trigrams("#12", 3, tri, 0);
	errno = 0;
	assert_null(fidx_pathiter_open(f->h, 1, tri, n));
	assert_int_equal(errno, EBADMSG);
}

/* Returns the integer that sql selects. */
static long long query_int(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW)
		fail_msg("%s: %s", sql, sqlite3_errmsg(h));
	long long v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/*
 * A scan indexed meanwhile (two scans into one database ending together,
 * each listing the other's scan as missing) is left alone, not indexed
 * twice into a constraint failure; a build that does fail says SQLite's
 * reason (it used to say "not an error") and leaves nothing behind.
 */
static void test_build_once(void **state)
{
	struct sample *f = *state;
	static const char *const counts[] = {"SELECT count(*) FROM path_index",
		"SELECT count(*) FROM path_block", "SELECT count(*) FROM path_trigram"};
	long long before[3];
	struct fidx_error err = {0};
	for (int i = 0; i < 3; i++)
		before[i] = query_int(f->h, counts[i]);
	assert_int_equal(fidx_pathindex_build(f->h, 1, &err), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(query_int(f->h, counts[i]), before[i]);
	assert_true(sqlite3_get_autocommit(f->h));

	exec_sql(f->h, "UPDATE scan SET status = 'complete' WHERE id = 3;"
		       " INSERT INTO path_block VALUES ((3 << 32) | 0, x'00')");
	errno = 0;
	assert_int_equal(fidx_pathindex_build(f->h, 3, &err), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(err.code, EIO);
	if (!strstr(err.msg, "UNIQUE"))
		fail_msg("the reason is lost: '%s'", err.msg);
	assert_true(sqlite3_get_autocommit(f->h));
	assert_int_equal(query_int(f->h, "SELECT count(*) FROM path_index WHERE scan_id = 3"), 0);
	assert_int_equal(query_int(f->h, "SELECT count(*) FROM path_block WHERE key >> 32 = 3"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trigrams),
		cmocka_unit_test_setup_teardown(test_all_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_patterns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_narrows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_once, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
