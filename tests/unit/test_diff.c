/*
 * test_diff.c - the comparison engine of fidx diff and fidx check on rows
 * written by hand into two in-memory databases, one ATTACHed as "live" (as
 * check does): keys below two different roots ("/" included), the pairing
 * of moves among hard links (path order, content decides; a recycled inode
 * number, told by its birth time, is not a move), the summary
 * letters (size grew/shrank/unknown, '?' content that alone lists nothing),
 * --ignore and the exit bits, and the parsing of attribute lists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diff.h"

/* The columns the engine reads, in a table like the real one. */
static const char table_sql[] =
	"CREATE TABLE %s.file (id INTEGER PRIMARY KEY, scan_id INTEGER, path TEXT, type TEXT,"
	" size INTEGER, mode INTEGER, uid INTEGER, gid INTEGER, nlink INTEGER, dev INTEGER,"
	" ino INTEGER, atime_ns INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, btime_ns INTEGER,"
	" link_target TEXT, md5 BLOB, sha1 BLOB, sha256 BLOB, sha512 BLOB, xxh128 BLOB,"
	" error TEXT);"
	"CREATE INDEX %s.file_scan_path ON file (scan_id, path);";

static sqlite3 *open_pair(void)
{
	sqlite3 *db;
	char sql[1024];
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "ATTACH ':memory:' AS live", NULL, NULL, NULL), SQLITE_OK);
	snprintf(sql, sizeof(sql), table_sql, "main", "main");
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	snprintf(sql, sizeof(sql), table_sql, "live", "live");
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	return db;
}

/*
 * Adds a row: type, size, mode, ino, mtime, ctime, sha256 (an x'..' literal of a
 * few bytes, made a whole digest with zeros after them, or NULL), target.
 */
static void add(sqlite3 *db, const char *schema, int64_t scan, const char *path, const char *type,
		int64_t size, int64_t mode, int64_t ino, int64_t mtime, int64_t ctime,
		const char *sha, const char *target)
{
	char digest[2 * 32 + 4];
	if (sha) {
		size_t n = strlen(sha) - 3; /* the hex between x' and ' */
		snprintf(digest, sizeof(digest), "x'%.*s%0*d'", (int)n, sha + 2, (int)(64 - n), 0);
		sha = digest;
	}
	char *sql = sqlite3_mprintf(
		"INSERT INTO %s.file (scan_id, path, type, size, mode, uid, gid, nlink, dev, ino,"
		" atime_ns, mtime_ns, ctime_ns, btime_ns, link_target, sha256) VALUES (%lld, %Q, %Q,"
		" %lld, %lld, 0, 0, 1, 2049, %lld, 5, %lld, %lld, NULL, %Q, %s)", schema,
		(long long)scan, path, type, (long long)size, (long long)mode, (long long)ino,
		(long long)mtime, (long long)ctime, target, sha ? sha : "NULL");
	assert_non_null(sql);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_free(sql);
}

/* The entries of d as "kind summary path[ <- old]" lines. */
static char *lines(const struct fidx_diff *d)
{
	static const char *const kinds[] = {"added", "removed", "changed", "moved"};
	static char buf[4096];
	char sum[FIDX_DIFF_NATTRS + 1];
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < d->n; i++) {
		const struct fidx_diff_entry *e = &d->entries[i];
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s %s %s%s%s\n", kinds[e->kind],
				      fidx_diff_summary(e, sum), e->path, e->old_path ? " <- " : "",
				      e->old_path ? e->old_path : "");
	}
	return buf;
}

static struct fidx_diff *run(sqlite3 *db, const char *old_root, const char *new_root,
			     unsigned attrs)
{
	struct fidx_diff_side a = {"main", 1, old_root, NULL}, b = {"live", 7, new_root, NULL};
	char *err = NULL;
	struct fidx_diff *d = fidx_diff_compare(db, &a, &b, attrs, &err);
	if (!d)
		fail_msg("compare failed: %s", err ? err : "?");
	return d;
}

static void test_roots_and_kinds(void **state)
{
	(void)state;
	sqlite3 *db = open_pair();
	/* OLD: a scan of "/" ; NEW: of "/copy" holding the same names. */
	add(db, "main", 1, "/", "d", 4096, 040755, 2, 10, 10, NULL, NULL);
	add(db, "main", 1, "/a", "f", 10, 0100644, 3, 10, 10, "x'01'", NULL);
	add(db, "main", 1, "/gone", "f", 1, 0100644, 4, 10, 10, NULL, NULL);
	add(db, "main", 1, "/l", "l", 1, 0120777, 5, 10, 10, NULL, "a");
	add(db, "live", 7, "/copy", "d", 4096, 040755, 2, 10, 10, NULL, NULL);
	add(db, "live", 7, "/copy/a", "f", 12, 0100600, 3, 10, 11, "x'02'", NULL);
	add(db, "live", 7, "/copy/l", "l", 1, 0120777, 5, 10, 10, NULL, "b");
	add(db, "live", 7, "/copy/new", "f", 0, 0100644, 9, 10, 10, NULL, NULL);
	/* Rows of other scans are not read. */
	add(db, "main", 2, "/zzz", "f", 0, 0100644, 99, 1, 1, NULL, NULL);
	add(db, "live", 8, "/copy/zzz", "f", 0, 0100644, 98, 1, 1, NULL, NULL);

	struct fidx_diff *d = run(db, "/", "/copy", FIDX_DIFF_DEFAULT);
	assert_string_equal(lines(d), "changed .>p...c...H... /copy/a\n"
				      "removed -------------- /gone\n"
				      "changed .........l.... /copy/l\n"
				      "added ++++++++++++++ /copy/new\n");
	assert_int_equal(fidx_diff_status(d), 7);
	assert_int_equal(d->count[FIDX_DIFF_CHANGED], 2);
	fidx_diff_free(d);

	/* Ignored attributes list nothing; the content '?' alone lists nothing. */
	d = run(db, "/", "/copy",
		FIDX_DIFF_DEFAULT & ~(1u << FIDX_DIFF_SIZE | 1u << FIDX_DIFF_PERM |
				      1u << FIDX_DIFF_MTIME | 1u << FIDX_DIFF_CTIME |
				      1u << FIDX_DIFF_CONTENT | 1u << FIDX_DIFF_TARGET));
	assert_string_equal(lines(d), "removed -------------- /gone\n"
				      "added ++++++++++++++ /copy/new\n");
	assert_int_equal(fidx_diff_status(d), 3);
	fidx_diff_free(d);
	sqlite3_close(db);
}

static void test_moves(void **state)
{
	(void)state;
	sqlite3 *db = open_pair();
	/* Two hard links of inode 3 (content 01), both gone; three new paths of it. */
	add(db, "main", 1, "/r", "d", 4096, 040755, 2, 10, 10, NULL, NULL);
	add(db, "main", 1, "/r/h1", "f", 4, 0100644, 3, 10, 10, "x'01'", NULL);
	add(db, "main", 1, "/r/h2", "f", 4, 0100644, 3, 10, 10, "x'01'", NULL);
	/* Inode 4 reappears with other content: not a move. */
	add(db, "main", 1, "/r/x", "f", 4, 0100644, 4, 10, 10, "x'aa'", NULL);
	/* Inode 5 without digests: size and mtime decide. */
	add(db, "main", 1, "/r/y", "f", 4, 0100644, 5, 10, 10, NULL, NULL);
	/* A directory: size and mtime. */
	add(db, "main", 1, "/r/dir", "d", 4096, 040755, 6, 10, 10, NULL, NULL);
	add(db, "live", 7, "/r", "d", 4096, 040755, 2, 10, 10, NULL, NULL);
	add(db, "live", 7, "/r/a1", "f", 4, 0100644, 3, 10, 12, "x'01'", NULL);
	add(db, "live", 7, "/r/a2", "f", 4, 0100644, 3, 10, 12, "x'01'", NULL);
	add(db, "live", 7, "/r/a3", "f", 4, 0100644, 3, 10, 12, "x'01'", NULL);
	add(db, "live", 7, "/r/b", "f", 4, 0100644, 4, 10, 10, "x'bb'", NULL);
	add(db, "live", 7, "/r/c", "f", 4, 0100644, 5, 10, 10, "x'cc'", NULL);
	add(db, "live", 7, "/r/d2", "d", 4096, 040755, 6, 10, 12, NULL, NULL);

	struct fidx_diff *d = run(db, "/r", "/r", FIDX_DIFF_DEFAULT);
	assert_string_equal(lines(d), "added ++++++++++++++ /r/a3\n"
				      "added ++++++++++++++ /r/b\n"
				      "moved ......c....... /r/d2 <- /r/dir\n"
				      "moved ......c....... /r/a1 <- /r/h1\n"
				      "moved ......c....... /r/a2 <- /r/h2\n"
				      "removed -------------- /r/x\n"
				      "moved ..........?... /r/c <- /r/y\n");
	assert_int_equal(d->count[FIDX_DIFF_MOVED], 4);
	assert_int_equal(fidx_diff_status(d), 7);
	fidx_diff_free(d);
	/* Without ctime the moves show no change: added and removed bits only. */
	d = run(db, "/r", "/r", FIDX_DIFF_DEFAULT & ~(1u << FIDX_DIFF_CTIME) & ~(1u << FIDX_DIFF_CONTENT));
	assert_int_equal(d->count[FIDX_DIFF_MOVED], 4);
	assert_int_equal(fidx_diff_status(d), 3);
	fidx_diff_free(d);
	sqlite3_close(db);
}

static void test_recycled_inode(void **state)
{
	(void)state;
	sqlite3 *db = open_pair();
	/*
	 * /r/old was deleted and /r/new created with the same content; the file
	 * system gave the new file the freed inode number (ext4 does at once).
	 * Its birth time tells it from a rename, which keeps the birth time:
	 * /r/was -> /r/now is one.  Where either birth time is unknown, the
	 * inode and content decide alone (/r/u -> /r/v).
	 */
	add(db, "main", 1, "/r", "d", 4096, 040755, 2, 10, 10, NULL, NULL);
	add(db, "main", 1, "/r/old", "f", 5, 0100644, 3, 10, 10, "x'01'", NULL);
	add(db, "main", 1, "/r/u", "f", 5, 0100644, 5, 10, 10, "x'03'", NULL);
	add(db, "main", 1, "/r/was", "f", 5, 0100644, 4, 10, 10, "x'02'", NULL);
	add(db, "live", 7, "/r", "d", 4096, 040755, 2, 10, 10, NULL, NULL);
	add(db, "live", 7, "/r/new", "f", 5, 0100644, 3, 20, 20, "x'01'", NULL);
	add(db, "live", 7, "/r/now", "f", 5, 0100644, 4, 10, 20, "x'02'", NULL);
	add(db, "live", 7, "/r/v", "f", 5, 0100644, 5, 10, 20, "x'03'", NULL);
	assert_int_equal(sqlite3_exec(db, "UPDATE main.file SET btime_ns = 10;"
					  " UPDATE live.file SET btime_ns = 10;"
					  " UPDATE live.file SET btime_ns = 20 WHERE path = '/r/new';"
					  " UPDATE main.file SET btime_ns = NULL WHERE path = '/r/u'",
				  NULL, NULL, NULL), SQLITE_OK);
	struct fidx_diff *d = run(db, "/r", "/r", FIDX_DIFF_DEFAULT);
	assert_string_equal(lines(d), "added ++++++++++++++ /r/new\n"
				      "removed -------------- /r/old\n"
				      "moved ......c.....b. /r/v <- /r/u\n"
				      "moved ......c....... /r/now <- /r/was\n");
	fidx_diff_free(d);
	sqlite3_close(db);
}

static void test_nulls_and_errors(void **state)
{
	(void)state;
	sqlite3 *db = open_pair();
	add(db, "main", 1, "/r", "d", 4096, 040755, 2, 10, 10, NULL, NULL);
	add(db, "main", 1, "/r/f", "f", 4, 0100644, 3, 10, 10, "x'01'", NULL);
	add(db, "live", 7, "/r", "d", 4096, 040755, 2, 10, 10, NULL, NULL);
	add(db, "live", 7, "/r/f", "f", 4, 0100644, 3, 10, 10, NULL, NULL);
	assert_int_equal(sqlite3_exec(db, "UPDATE live.file SET size = NULL, error = 'open: x'"
					  " WHERE path = '/r/f'", NULL, NULL, NULL), SQLITE_OK);
	struct fidx_diff *d = run(db, "/r", "/r", FIDX_DIFF_DEFAULT);
	assert_string_equal(lines(d), "changed .s........?..e /r/f\n");
	fidx_diff_free(d);

	/* A row outside its root is refused. */
	add(db, "live", 7, "/elsewhere", "f", 1, 0100644, 9, 1, 1, NULL, NULL);
	struct fidx_diff_side a = {"main", 1, "/r", NULL}, b = {"live", 7, "/r", NULL};
	char *err = NULL;
	assert_null(fidx_diff_compare(db, &a, &b, FIDX_DIFF_DEFAULT, &err));
	assert_non_null(strstr(err, "/elsewhere"));
	free(err);
	sqlite3_close(db);
}

static void test_attr_parse(void **state)
{
	(void)state;
	unsigned m;
	const char *bad;
	size_t len;
	assert_int_equal(fidx_diff_attr_parse("ctime", &m, &bad, &len), 0);
	assert_int_equal(m, 1u << FIDX_DIFF_CTIME);
	assert_int_equal(fidx_diff_attr_parse("type,size,perm,owner,group,mtime,ctime,inode,"
					      "nlink,target,content,atime,btime,error", &m, &bad,
					      &len), 0);
	assert_int_equal(m, FIDX_DIFF_ALL);
	assert_int_equal(fidx_diff_attr_parse("ctime,sizes,mtime", &m, &bad, &len), -1);
	assert_int_equal(len, 5);
	assert_memory_equal(bad, "sizes", 5);
	assert_int_equal(fidx_diff_attr_parse("ctime,", &m, &bad, &len), -1);
	assert_int_equal(len, 0);
	assert_int_equal(fidx_diff_attr_parse("", &m, &bad, &len), -1);
	for (int a = 0; a < FIDX_DIFF_NATTRS; a++)
		assert_int_equal(fidx_diff_attr_parse(fidx_diff_attr_name(a), &m, &bad, &len), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roots_and_kinds),
		cmocka_unit_test(test_moves),
		cmocka_unit_test(test_recycled_inode),
		cmocka_unit_test(test_nulls_and_errors),
		cmocka_unit_test(test_attr_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
