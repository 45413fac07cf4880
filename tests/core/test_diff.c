/*
 * test_diff.c - the comparison engine of fidx diff and fidx check on rows
 * written through the store into two databases, the OLD side's and the NEW
 * side's (as check compares a database with a scratch one), each read back
 * through a store opened for reading: keys below two different roots ("/"
 * included), the pairing of moves among hard links (path order, content
 * decides; a recycled inode number, told by its birth time, is not a move),
 * the summary letters (size grew/shrank, '?' content that alone lists
 * nothing, a changed error), --ignore and the exit bits, a row outside its
 * scan's root refused, and the parsing of attribute lists.  A row fidx could
 * never write (a size NULL beside the other metadata) is the SQLite
 * backend's to make: tests/store/sqlite/test_damaged.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "diff.h"
#include "store.h"
#include "store/fixture.h"

/* One side's database while it is written: the store and the scan rows go to. */
struct side_db {
	const char *path;       /* the fixture's old.db or new.db */
	struct fidx_store *st;
};

/* A test's two databases, in a temporary folder: old.db and new.db. */
struct sides {
	struct fixture tmp;     /* the folder, and the two paths */
	struct side_db old, new;
	struct fidx_scan_list old_scans, new_scans; /* read back, once written */
};

/* cmocka setup: a struct sides in *state, both databases open for writing; 0, or -1 said. */
static int setup(void **state)
{
	struct sides *f = calloc(1, sizeof(*f));
	if (!f || fixture_make(&f->tmp) < 0) {
		free(f);
		return -1;
	}
	f->old = (struct side_db){f->tmp.old, must_open(f->tmp.old, FIDX_STORE_WRITE, 0)};
	f->new = (struct side_db){f->tmp.new, must_open(f->tmp.new, FIDX_STORE_WRITE, 0)};
	*state = f;
	return 0;
}

/* cmocka teardown: closes both stores, removes the folder, frees; 0, or -1 said. */
static int teardown(void **state)
{
	struct sides *f = *state;
	struct fidx_error err;
	int ret = 0;
	if (fidx_store_close(f->old.st, &err) < 0 || fidx_store_close(f->new.st, &err) < 0) {
		print_error("fidx_store_close: %s\n", err.msg);
		ret = -1;
	}
	fidx_scan_list_free(&f->old_scans);
	fidx_scan_list_free(&f->new_scans);
	if (tmpdir_remove(f->tmp.dir) < 0)
		ret = -1;
	free(f);
	return ret;
}

/* Begins a scan of root in d, or fails the test. */
static int64_t begin(struct side_db *d, const char *root)
{
	return must_begin(d->st, root);
}

/* No birth time. */
#define NO_BTIME INT64_MIN

/*
 * Adds a row to scan of d: type, size, mode, ino, mtime, ctime (ns), btime
 * (ns, or NO_BTIME), sha256 (its first byte, the others zero; 0 for none),
 * target; uid, gid 0, nlink 1, device 2049, atime 5.
 */
static void add_born(struct side_db *d, int64_t scan, const char *path, char type, uint64_t size,
		     uint32_t mode, uint64_t ino, int64_t mtime, int64_t ctime, int64_t btime,
		     uint8_t sha, const char *target)
{
	struct fidx_record rec = {.scan_id = scan, .type = type, .has_meta = true};
	rec.meta = (struct fidx_meta){
		.size = size, .mode = mode, .uid = 0, .gid = 0, .nlink = 1, .dev = 2049, .ino = ino,
		.atime = fidx_time_of_ns(5), .mtime = fidx_time_of_ns(mtime),
		.ctime = fidx_time_of_ns(ctime), .btime = fidx_time_of_ns(btime),
		.has_btime = btime != NO_BTIME,
	};
	if (target) {
		rec.link_target = (char *)target;
		rec.link_len = strlen(target);
	}
	if (sha) {
		rec.digest_mask = 1u << FIDX_SHA256;
		rec.digest[FIDX_SHA256][0] = sha;
	}
	must_put(d->st, &rec, path);
}

/* add_born() without a birth time. */
static void add(struct side_db *d, int64_t scan, const char *path, char type, uint64_t size,
		uint32_t mode, uint64_t ino, int64_t mtime, int64_t ctime, uint8_t sha,
		const char *target)
{
	add_born(d, scan, path, type, size, mode, ino, mtime, ctime, NO_BTIME, sha, target);
}

/*
 * Ends every scan begun in both databases, closes them and opens them again
 * for reading (as diff and check read), with their scan rows in
 * f->old_scans and f->new_scans; or fails the test.
 */
static void finish(struct sides *f)
{
	struct side_db *sides[2] = {&f->old, &f->new};
	struct fidx_scan_list *lists[2] = {&f->old_scans, &f->new_scans};
	struct fidx_error err;
	for (int s = 0; s < 2; s++) {
		struct fidx_scan_list begun = {0};
		if (fidx_store_scans(sides[s]->st, NULL, &begun, &err) < 0)
			fail_msg("fidx_store_scans: %s", err.msg);
		for (size_t i = 0; i < begun.n; i++)
			must_end(sides[s]->st, begun.rows[i].id, "complete");
		fidx_scan_list_free(&begun);
		must_close(sides[s]->st);
		sides[s]->st = must_open(sides[s]->path, FIDX_STORE_READ, 0);
		if (fidx_store_scans(sides[s]->st, NULL, lists[s], &err) < 0)
			fail_msg("fidx_store_scans: %s", err.msg);
	}
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

/*
 * Compares scan old_id of the OLD database with scan new_id of the NEW one
 * (after finish()): returns the differences, NULL with *err set.
 */
static struct fidx_diff *compare(struct sides *f, int64_t old_id, int64_t new_id,
				 unsigned attrs, struct fidx_error *err)
{
	const struct fidx_scan_row *o = fidx_scan_list_find(&f->old_scans, old_id);
	const struct fidx_scan_row *n = fidx_scan_list_find(&f->new_scans, new_id);
	assert_non_null(o);
	assert_non_null(n);
	struct fidx_diff_side a = {.st = f->old.st, .scan = o}, b = {.st = f->new.st, .scan = n};
	return fidx_diff_compare(&a, &b, attrs, err);
}

/* compare(), or fails the test. */
static struct fidx_diff *run(struct sides *f, int64_t old_id, int64_t new_id, unsigned attrs)
{
	struct fidx_error err;
	struct fidx_diff *d = compare(f, old_id, new_id, attrs, &err);
	if (!d)
		fail_msg("compare failed: %s", err.msg);
	return d;
}

/*
 * A scan of "/" against one of "/copy" holding the same names: changed,
 * removed and added entries, in key order, their summaries and exit bits;
 * rows of other scans are not read; ignored attributes list nothing.
 */
static void test_roots_and_kinds(void **state)
{
	struct sides *f = *state;
	int64_t o = begin(&f->old, "/"), o2 = begin(&f->old, "/");
	int64_t n = begin(&f->new, "/copy"), n2 = begin(&f->new, "/copy");
	/* OLD: a scan of "/" ; NEW: of "/copy" holding the same names. */
	add(&f->old, o, "/", 'd', 4096, 040755, 2, 10, 10, 0, NULL);
	add(&f->old, o, "/a", 'f', 10, 0100644, 3, 10, 10, 0x01, NULL);
	add(&f->old, o, "/gone", 'f', 1, 0100644, 4, 10, 10, 0, NULL);
	add(&f->old, o, "/l", 'l', 1, 0120777, 5, 10, 10, 0, "a");
	add(&f->new, n, "/copy", 'd', 4096, 040755, 2, 10, 10, 0, NULL);
	add(&f->new, n, "/copy/a", 'f', 12, 0100600, 3, 10, 11, 0x02, NULL);
	add(&f->new, n, "/copy/l", 'l', 1, 0120777, 5, 10, 10, 0, "b");
	add(&f->new, n, "/copy/new", 'f', 0, 0100644, 9, 10, 10, 0, NULL);
	/* Rows of other scans are not read. */
	add(&f->old, o2, "/zzz", 'f', 0, 0100644, 99, 1, 1, 0, NULL);
	add(&f->new, n2, "/copy/zzz", 'f', 0, 0100644, 98, 1, 1, 0, NULL);
	finish(f);

	struct fidx_diff *d = run(f, o, n, FIDX_DIFF_DEFAULT);
	assert_string_equal(lines(d), "changed .>p...c...H.... /copy/a\n"
				      "removed --------------- /gone\n"
				      "changed .........l..... /copy/l\n"
				      "added +++++++++++++++ /copy/new\n");
	assert_int_equal(fidx_diff_status(d), 7);
	assert_int_equal(d->count[FIDX_DIFF_CHANGED], 2);
	fidx_diff_free(d);

	/* Ignored attributes list nothing; the content '?' alone lists nothing. */
	d = run(f, o, n,
		FIDX_DIFF_DEFAULT & ~(1u << FIDX_DIFF_SIZE | 1u << FIDX_DIFF_PERM |
				      1u << FIDX_DIFF_MTIME | 1u << FIDX_DIFF_CTIME |
				      1u << FIDX_DIFF_CONTENT | 1u << FIDX_DIFF_TARGET));
	assert_string_equal(lines(d), "removed --------------- /gone\n"
				      "added +++++++++++++++ /copy/new\n");
	assert_int_equal(fidx_diff_status(d), 3);
	fidx_diff_free(d);
}

/*
 * Moves: hard links pair with new paths of their inode in path order, when
 * the content agrees (digests, else size and mtime); an inode that comes
 * back with other content is added and removed.
 */
static void test_moves(void **state)
{
	struct sides *f = *state;
	int64_t o = begin(&f->old, "/r"), n = begin(&f->new, "/r");
	/* Two hard links of inode 3 (content 01), both gone; three new paths of it. */
	add(&f->old, o, "/r", 'd', 4096, 040755, 2, 10, 10, 0, NULL);
	add(&f->old, o, "/r/h1", 'f', 4, 0100644, 3, 10, 10, 0x01, NULL);
	add(&f->old, o, "/r/h2", 'f', 4, 0100644, 3, 10, 10, 0x01, NULL);
	/* Inode 4 reappears with other content: not a move. */
	add(&f->old, o, "/r/x", 'f', 4, 0100644, 4, 10, 10, 0xaa, NULL);
	/* Inode 5 without digests: size and mtime decide. */
	add(&f->old, o, "/r/y", 'f', 4, 0100644, 5, 10, 10, 0, NULL);
	/* A directory: size and mtime. */
	add(&f->old, o, "/r/dir", 'd', 4096, 040755, 6, 10, 10, 0, NULL);
	add(&f->new, n, "/r", 'd', 4096, 040755, 2, 10, 10, 0, NULL);
	add(&f->new, n, "/r/a1", 'f', 4, 0100644, 3, 10, 12, 0x01, NULL);
	add(&f->new, n, "/r/a2", 'f', 4, 0100644, 3, 10, 12, 0x01, NULL);
	add(&f->new, n, "/r/a3", 'f', 4, 0100644, 3, 10, 12, 0x01, NULL);
	add(&f->new, n, "/r/b", 'f', 4, 0100644, 4, 10, 10, 0xbb, NULL);
	add(&f->new, n, "/r/c", 'f', 4, 0100644, 5, 10, 10, 0xcc, NULL);
	add(&f->new, n, "/r/d2", 'd', 4096, 040755, 6, 10, 12, 0, NULL);
	finish(f);

	struct fidx_diff *d = run(f, o, n, FIDX_DIFF_DEFAULT);
	assert_string_equal(lines(d), "added +++++++++++++++ /r/a3\n"
				      "added +++++++++++++++ /r/b\n"
				      "moved ......c........ /r/d2 <- /r/dir\n"
				      "moved ......c........ /r/a1 <- /r/h1\n"
				      "moved ......c........ /r/a2 <- /r/h2\n"
				      "removed --------------- /r/x\n"
				      "moved ..........?.... /r/c <- /r/y\n");
	assert_int_equal(d->count[FIDX_DIFF_MOVED], 4);
	assert_int_equal(fidx_diff_status(d), 7);
	fidx_diff_free(d);
	/* Without ctime the moves show no change: added and removed bits only. */
	d = run(f, o, n, FIDX_DIFF_DEFAULT & ~(1u << FIDX_DIFF_CTIME) & ~(1u << FIDX_DIFF_CONTENT));
	assert_int_equal(d->count[FIDX_DIFF_MOVED], 4);
	assert_int_equal(fidx_diff_status(d), 3);
	fidx_diff_free(d);
}

/* An inode number given again to a new file is not a move: its birth time tells. */
static void test_recycled_inode(void **state)
{
	struct sides *f = *state;
	int64_t o = begin(&f->old, "/r"), n = begin(&f->new, "/r");
	/*
	 * /r/old was deleted and /r/new created with the same content; the file
	 * system gave the new file the freed inode number (ext4 does at once).
	 * Its birth time tells it from a rename, which keeps the birth time:
	 * /r/was -> /r/now is one.  Where either birth time is unknown, the
	 * inode and content decide alone (/r/u -> /r/v).
	 */
	add_born(&f->old, o, "/r", 'd', 4096, 040755, 2, 10, 10, 10, 0, NULL);
	add_born(&f->old, o, "/r/old", 'f', 5, 0100644, 3, 10, 10, 10, 0x01, NULL);
	add_born(&f->old, o, "/r/u", 'f', 5, 0100644, 5, 10, 10, NO_BTIME, 0x03, NULL);
	add_born(&f->old, o, "/r/was", 'f', 5, 0100644, 4, 10, 10, 10, 0x02, NULL);
	add_born(&f->new, n, "/r", 'd', 4096, 040755, 2, 10, 10, 10, 0, NULL);
	add_born(&f->new, n, "/r/new", 'f', 5, 0100644, 3, 20, 20, 20, 0x01, NULL);
	add_born(&f->new, n, "/r/now", 'f', 5, 0100644, 4, 10, 20, 10, 0x02, NULL);
	add_born(&f->new, n, "/r/v", 'f', 5, 0100644, 5, 10, 20, 10, 0x03, NULL);
	finish(f);

	struct fidx_diff *d = run(f, o, n, FIDX_DIFF_DEFAULT);
	assert_string_equal(lines(d), "added +++++++++++++++ /r/new\n"
				      "removed --------------- /r/old\n"
				      "moved ......c.....b.. /r/v <- /r/u\n"
				      "moved ......c........ /r/now <- /r/was\n");
	fidx_diff_free(d);
}

/*
 * A file that could not be read (an error, no digest) against the row that
 * had one: content '?' and error 'e'; and a row outside its scan's root is
 * refused, naming it.
 */
static void test_nulls_and_errors(void **state)
{
	struct sides *f = *state;
	struct fidx_error err;
	int64_t o = begin(&f->old, "/r"), n = begin(&f->new, "/r"), n2 = begin(&f->new, "/r");
	add(&f->old, o, "/r", 'd', 4096, 040755, 2, 10, 10, 0, NULL);
	add(&f->old, o, "/r/f", 'f', 4, 0100644, 3, 10, 10, 0x01, NULL);
	for (int64_t s = n; s <= n2; s++) {
		add(&f->new, s, "/r", 'd', 4096, 040755, 2, 10, 10, 0, NULL);
		struct fidx_record rec = {.scan_id = s, .type = 'f', .has_meta = true,
					  .path = "/r/f", .path_len = 4, .name_off = 3,
					  .ext_off = 4, .error = "open: x"};
		rec.meta = (struct fidx_meta){
			.size = 4, .mode = 0100644, .nlink = 1, .dev = 2049, .ino = 3,
			.atime = fidx_time_of_ns(5), .mtime = fidx_time_of_ns(10),
			.ctime = fidx_time_of_ns(10),
		};
		if (fidx_store_add(f->new.st, &rec, &err) < 0)
			fail_msg("fidx_store_add: %s", err.msg);
	}
	/* A row outside its root, in the second NEW scan. */
	add(&f->new, n2, "/elsewhere", 'f', 1, 0100644, 9, 1, 1, 0, NULL);
	finish(f);

	struct fidx_diff *d = run(f, o, n, FIDX_DIFF_DEFAULT);
	assert_string_equal(lines(d), "changed ..........?..e. /r/f\n");
	fidx_diff_free(d);

	/* A row outside its root is refused. */
	assert_null(compare(f, o, n2, FIDX_DIFF_DEFAULT, &err));
	assert_non_null(strstr(err.msg, "/elsewhere"));
	assert_int_equal(err.code, EBADMSG);
}

/* --ignore lists: every name, a name misspelled, an empty one. */
static void test_attr_parse(void **state)
{
	(void)state;
	unsigned m;
	const char *bad;
	size_t len;
	assert_int_equal(fidx_diff_attr_parse("ctime", &m, &bad, &len), 0);
	assert_int_equal(m, 1u << FIDX_DIFF_CTIME);
	assert_int_equal(fidx_diff_attr_parse("type,size,perm,owner,group,mtime,ctime,inode,"
					      "nlink,target,content,atime,btime,error,state", &m, &bad,
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
		cmocka_unit_test_setup_teardown(test_roots_and_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_moves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recycled_inode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nulls_and_errors, setup, teardown),
		cmocka_unit_test(test_attr_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
