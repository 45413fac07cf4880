/*
 * test_reuse.c - what a scan takes from earlier scans (reuse.h), and the
 * scan rows it decides that by (scanrow.h, fidx_store_scans()).
 *
 * Each test makes a database in a temporary folder through the store
 * (fidx_store_open() for WRITE, fidx_store_begin_scan(), fidx_store_add() of
 * records, fidx_store_end_scan()) and reads it back through the store, as
 * `fidx scan` does: scan rows with options written as fidx scan writes them,
 * file rows whose five compared values are varied one at a time.  The scans
 * of test_take() start at START_NS, long after their files' times.  Rows
 * fidx could never write (a digest of the wrong length) are the SQLite
 * backend's to make: tests/store/sqlite/test_damaged.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"
#include "reuse.h"
#include "scanrow.h"
#include "store.h"
#include "store/fixture.h"

/* Begins a scan of root on host started at started_ns, with options (JSON), or fails the test. */
static int64_t begin(struct fidx_store *st, const char *root, const char *host,
		     int64_t started_ns, const char *options)
{
	struct fidx_scan_info info = {.root = root, .host = host, .version = "test",
				      .options = options, .started_ns = started_ns};
	return must_begin_info(st, &info);
}

/* Bytes of table in memory that load() gives: small, the tables go to disk. */
static size_t table_memory = FIDX_REUSE_MEMORY;

/* A table of mask loaded with scan (of st), or fails the test. */
static struct fidx_reuse *load(struct fidx_store *st, const struct fidx_scan_row *scan,
			       unsigned mask)
{
	struct fidx_error err;
	struct fidx_reuse *r = fidx_reuse_new(mask, table_memory, &err);
	if (!r)
		fail_msg("fidx_reuse_new: %s", err.msg);
	if (fidx_reuse_load(r, st, scan, &err) < 0)
		fail_msg("fidx_reuse_load: %s", err.msg);
	return r;
}

#define START_NS 1000000000000

/*
 * The table takes a file whose device, inode, size, mtime and ctime are all
 * as recorded, with the digests asked for, following digests_from back; it
 * leaves out rows with an error or without a digest, files of other scans
 * until they are loaded too, and every change of one of the five values.
 */
static void test_take(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = f->st;
	const int64_t s1 = begin(st, "/r", "h", START_NS, "{\"hash\":\"sha256,md5\"}");
	const int64_t s2 = begin(st, "/r", "h", START_NS, "{\"hash\":\"sha256\"}");
	uint8_t digest7[32];
	char path[32];

	for (size_t i = 0; i < sizeof(digest7); i++)
		digest7[i] = (uint8_t)(rand() | 1);
	for (int64_t ino = 1; ino <= 5000; ino++) { /* enough to grow the table several times */
		struct fidx_record rec = file_rec(ino, true);
		rec.scan_id = s1;
		if (ino == 7)
			memcpy(rec.digest[FIDX_SHA256], digest7, 32);
		if (ino == 9)
			rec.digests_from = 3; /* read by an earlier scan, reused by this one */
		if (ino == 11)
			rec.error = "changed during scan";
		if (ino == 13)
			rec.digest_mask &= ~(1u << FIDX_SHA256);
		snprintf(path, sizeof(path), "/r/%lld", (long long)ino);
		must_put(st, &rec, path);
	}
	struct fidx_record other = file_rec(99999, false);
	other.scan_id = s2;
	other.meta.size = 170;
	other.meta.mtime = fidx_time_of_ns(17);
	other.meta.ctime = fidx_time_of_ns(18);
	other.digest_mask = 1u << FIDX_SHA256;
	must_put(st, &other, "/r/other");
	must_end(st, s1, "complete");
	must_end(st, s2, "complete");

	struct fidx_scan_list l1 = {0}, l2 = {0};
	const struct fidx_scan_row *row1 = must_scan_row(st, s1, &l1);
	const struct fidx_scan_row *row2 = must_scan_row(st, s2, &l2);
	unsigned mask = 1u << FIDX_SHA256;
	struct fidx_reuse *r = load(st, row1, mask);
	/* All but the error row and the row without SHA-256. */
	assert_int_equal(fidx_reuse_count(r), 4998);

	struct fidx_record rec = file_rec(7, false);
	assert_true(fidx_reuse_take(r, &rec));
	assert_int_equal(rec.digest_mask, mask);
	assert_int_equal(rec.digests_from, s1);
	assert_memory_equal(rec.digest[FIDX_SHA256], digest7, 32); /* the row's own digest */

	rec = file_rec(9, false);
	assert_true(fidx_reuse_take(r, &rec));
	assert_int_equal(rec.digests_from, 3); /* the scan that read it, followed back */

	for (int64_t ino = 11; ino <= 13; ino += 2) {
		rec = file_rec(ino, false);
		assert_false(fidx_reuse_take(r, &rec));
		assert_int_equal(rec.digest_mask, 0);
	}
	/* Each of the five values, changed alone, makes the file be read. */
	for (int field = 0; field < 5; field++) {
		rec = file_rec(21, false);
		switch (field) {
		case 0: rec.meta.dev++; break;
		case 1: rec.meta.ino = 99999; break;
		case 2: rec.meta.size++; break;
		case 3: rec.meta.mtime = fidx_time_of_ns(21 - 1); break;
		case 4: rec.meta.ctime = fidx_time_of_ns(21 + 2); break;
		}
		assert_false(fidx_reuse_take(r, &rec));
		assert_int_equal(rec.digests_from, 0);
	}
	rec = file_rec(21, false);
	rec.type = 'l';
	assert_false(fidx_reuse_take(r, &rec));
	rec = file_rec(21, false);
	rec.has_meta = false;
	assert_false(fidx_reuse_take(r, &rec));
	rec = file_rec(99999, false);
	rec.meta.mtime = fidx_time_of_ns(17);
	rec.meta.ctime = fidx_time_of_ns(18);
	rec.meta.size = 170;
	assert_false(fidx_reuse_take(r, &rec)); /* scan 2's file is not in scan 1's table */
	struct fidx_error err;
	assert_int_equal(fidx_reuse_load(r, st, row2, &err), 0); /* one table, two scans */
	assert_true(fidx_reuse_take(r, &rec));
	assert_int_equal(rec.digests_from, s2);
	assert_false(fidx_reuse_take(NULL, &rec));
	fidx_reuse_free(r);

	/* A digest the earlier scan did not record: nothing to take. */
	r = load(st, row1, mask | 1u << FIDX_SHA1);
	assert_int_equal(fidx_reuse_count(r), 0);
	fidx_reuse_free(r);
	/* Two digests recorded: both copied. */
	r = load(st, row1, mask | 1u << FIDX_MD5);
	rec = file_rec(25, false);
	assert_true(fidx_reuse_take(r, &rec));
	assert_int_equal(rec.digest_mask, mask | 1u << FIDX_MD5);
	fidx_reuse_free(r);
	fidx_reuse_free(NULL);
	fidx_scan_list_free(&l1);
	fidx_scan_list_free(&l2);
}

/*
 * The same with a table too big for its memory: 5,000 files in runs of 16
 * written to $TMPDIR and merged (313 of them), a second scan's merged in.
 */
static void test_take_on_disk(void **state)
{
	table_memory = 1000;
	test_take(state);
	table_memory = FIDX_REUSE_MEMORY;
}

/*
 * A table on disk answers every look-up as one in memory does, and as the
 * rows say: 3,000 rows of 1,000 files on two devices (the others hard links
 * of them, each row with its own digest and scan), looked up with the
 * values of each row and with one value changed.  Of hard links, the first
 * row loaded gives the digests.
 */
static void test_disk_matches_memory(void **state)
{
	struct fixture *f = *state;
	enum { ROWS = 3000, FILES = 1000 };
	const int64_t scan = begin(f->st, "/r", "h", START_NS, "{\"hash\":\"sha256\"}");
	static struct fidx_record rows[ROWS];
	static bool first[ROWS];
	char path[32];
	srand(17);
	for (int i = 0; i < ROWS; i++) {
		int64_t file = rand() % FILES + 1;
		rows[i] = file_rec(file, false);
		rows[i].scan_id = scan;
		rows[i].meta.dev = (uint64_t)(file % 2 + 1);
		rows[i].digest_mask = 1u << FIDX_SHA256;
		rows[i].digests_from = 1000 + i;
		for (int b = 0; b < 32; b++)
			rows[i].digest[FIDX_SHA256][b] = (uint8_t)rand();
		first[i] = true;
		for (int j = 0; j < i && first[i]; j++)
			first[i] = rows[j].meta.ino != rows[i].meta.ino;
		snprintf(path, sizeof(path), "/r/%d", i);
		must_put(f->st, &rows[i], path);
	}
	must_end(f->st, scan, "complete");
	struct fidx_scan_list list = {0};
	const struct fidx_scan_row *row = must_scan_row(f->st, scan, &list);
	struct fidx_reuse *mem = load(f->st, row, 1u << FIDX_SHA256);
	table_memory = 2000;
	struct fidx_reuse *disk = load(f->st, row, 1u << FIDX_SHA256);
	table_memory = FIDX_REUSE_MEMORY;
	assert_int_equal(fidx_reuse_count(mem), fidx_reuse_count(disk));
	size_t files = 0;
	for (int i = 0; i < ROWS; i++)
		files += first[i];
	assert_int_equal(fidx_reuse_count(disk), files);
	for (int i = 0; i < ROWS; i++) {
		for (int change = 0; change < 3; change++) {
			struct fidx_record a = rows[i], b = rows[i];
			a.digest_mask = b.digest_mask = 0;
			a.digests_from = b.digests_from = 0;
			memset(a.digest, 0, sizeof(a.digest));
			memset(b.digest, 0, sizeof(b.digest));
			if (change == 1)
				a.meta.dev = b.meta.dev = 3 - a.meta.dev; /* the other device */
			if (change == 2)
				a.meta.size = ++b.meta.size;
			bool took = fidx_reuse_take(mem, &a);
			assert_int_equal(took, fidx_reuse_take(disk, &b));
			assert_int_equal(took, change == 0);
			assert_int_equal(a.digests_from, b.digests_from);
			assert_memory_equal(a.digest, b.digest, sizeof(a.digest));
			if (!took)
				continue;
			/* The digests of the first row of this file. */
			int j = 0;
			while (rows[j].meta.ino != rows[i].meta.ino)
				j++;
			assert_true(first[j]);
			assert_int_equal(a.digests_from, rows[j].digests_from);
			assert_memory_equal(a.digest[FIDX_SHA256], rows[j].digest[FIDX_SHA256], 32);
		}
	}
	fidx_reuse_free(mem);
	fidx_reuse_free(disk);
	fidx_scan_list_free(&list);
}

/*
 * A table that must go to disk where no temporary file can be made fails
 * with one line naming the folder and the ways out, and is left empty.
 */
static void test_no_tmpdir(void **state)
{
	struct fixture *f = *state;
	const int64_t scan = begin(f->st, "/r", "h", START_NS, "{\"hash\":\"sha256\"}");
	char path[32];
	for (int64_t ino = 1; ino <= 100; ino++) {
		struct fidx_record rec = file_rec(ino, true);
		rec.scan_id = scan;
		snprintf(path, sizeof(path), "/r/%lld", (long long)ino);
		must_put(f->st, &rec, path);
	}
	must_end(f->st, scan, "complete");
	struct fidx_scan_list list = {0};
	const struct fidx_scan_row *row = must_scan_row(f->st, scan, &list);
	const char *was = getenv("TMPDIR");
	char *saved = was ? strdup(was) : NULL;
	setenv("TMPDIR", "/nonexistent/fidx-tmp", 1);
	struct fidx_error err;
	struct fidx_reuse *r = fidx_reuse_new(1u << FIDX_SHA256, 1000, &err);
	assert_non_null(r);
	assert_int_equal(fidx_reuse_load(r, f->st, row, &err), -1);
	assert_int_equal(err.code, EIO);
	assert_string_equal(err.msg, "cannot create a temporary file in '/nonexistent/fidx-tmp'"
			    " for the digests of the earlier scan: No such file or directory"
			    " (set TMPDIR to a folder with room, or use --rehash)");
	assert_int_equal(fidx_reuse_count(r), 0);
	struct fidx_record rec = file_rec(5, false);
	assert_false(fidx_reuse_take(r, &rec));
	fidx_reuse_free(r);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
	fidx_scan_list_free(&list);
}

/*
 * A file whose mtime or ctime is not older than the start of the scan that
 * read it by more than the timestamp granularity could have changed after it
 * was read without either moving: it is read again.  Whole seconds count as
 * the granularity of a file system with 1 or 2 s timestamps (ext4 with
 * 128-byte inodes, FAT); finer ones as that of the kernel's clock.
 */
static void test_racy(void **state)
{
	struct fixture *f = *state;
	static const struct {
		int64_t mtime_ago, ctime_ago; /* ns before the scan's start (negative: after) */
		bool taken;
	} files[] = {
		{3000000000, 3000000000, true},   /* whole seconds, 3 s before */
		{5000000000, 1000000000, false},  /* ctime a whole second, 1 s before */
		{5000000000, 999999999, true},    /* fine ctime, 1 s before */
		{5000000000, 50000000, false},    /* fine ctime, 50 ms before */
		{1000000000, 5000000001, false},  /* mtime a whole second, 1 s before (FAT) */
		{5000000000, -1000, false},       /* changed after the scan began */
	};
	const int64_t start = 1700000000000000000;
	int64_t scan = begin(f->st, "/r", "h", start, "{\"hash\":\"sha256\"}");
	char path[32];
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct fidx_record rec = {.scan_id = scan, .type = 'f', .has_meta = true,
					  .digest_mask = 1u << FIDX_SHA256};
		rec.meta.dev = 8;
		rec.meta.ino = i + 1;
		rec.meta.size = 1;
		rec.meta.mtime = fidx_time_of_ns(start - files[i].mtime_ago);
		rec.meta.ctime = fidx_time_of_ns(start - files[i].ctime_ago);
		snprintf(path, sizeof(path), "/r/%zu", i);
		must_put(f->st, &rec, path);
	}
	must_end(f->st, scan, "complete");
	struct fidx_scan_list list = {0};
	struct fidx_reuse *r = load(f->st, must_scan_row(f->st, scan, &list), 1u << FIDX_SHA256);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct fidx_record rec = {.type = 'f', .has_meta = true};
		rec.meta.dev = 8;
		rec.meta.ino = i + 1;
		rec.meta.size = 1;
		rec.meta.mtime = fidx_time_of_ns(start - files[i].mtime_ago);
		rec.meta.ctime = fidx_time_of_ns(start - files[i].ctime_ago);
		if (fidx_reuse_take(r, &rec) != files[i].taken)
			fail_msg("file %zu: taken %d, want %d", i, !files[i].taken, files[i].taken);
	}
	fidx_reuse_free(r);
	fidx_scan_list_free(&list);
}

/*
 * The newest scan of root among those fidx_store_scans() reads with filter
 * root and statuses whose id is below before (0: any), as `fidx scan` picks
 * the scan to resume or to take digests from; NULL when there is none.
 * *list holds the rows read.
 */
static const struct fidx_scan_row *newest(struct fidx_store *st, const char *root,
					  unsigned statuses, int64_t before,
					  struct fidx_scan_list *list)
{
	struct fidx_error err;
	struct fidx_scan_filter filter = {.root = root, .statuses = statuses};
	if (fidx_store_scans(st, &filter, list, &err) < 0)
		fail_msg("fidx_store_scans: %s", err.msg);
	for (size_t i = list->n; i-- > 0;) {
		const struct fidx_scan_row *s = &list->rows[i];
		if (i + 1 < list->n)
			assert_true(s->id < list->rows[i + 1].id); /* ascending ids */
		assert_string_equal(s->root, root);              /* byte for byte */
		if (before <= 0 || s->id < before)
			return s;
	}
	return NULL;
}

/*
 * Scan rows as fidx_store_scans() reads them (by root and status), and the
 * options they were made with as fidx_scan_shape_of() decodes them: the
 * digest list, xdev, follow, --no-stat, the --exclude patterns (a \u00XX
 * escape gives the byte), and options that are not JSON refused, naming
 * the scan.
 */
static void test_scan_row(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = f->st;
	const unsigned complete = FIDX_STATUS_COMPLETE;
	const unsigned unfinished = FIDX_STATUS_RUNNING | FIDX_STATUS_INTERRUPTED |
				    FIDX_STATUS_FAILED;
	const unsigned any = unfinished | FIDX_STATUS_COMPLETE;
	int64_t s1 = begin(st, "/data", "h", 1,
			   "{\"hash\":\"md5,sha256\",\"jobs\":2,\"xdev\":true,\"follow\":false,"
			   "\"stat\":true,\"io\":\"ssd\",\"drop_cache\":false,"
			   "\"exclude\":[\"*.skip\",\"a\\u00ffb\",\"q\\\"x, y\\\\\",\"caf\xc3\xa9\"]}");
	int64_t s2 = begin(st, "/data", "h", 2,
			   "{\"hash\":\"none\",\"xdev\":false,\"follow\":true,\"stat\":false,"
			   "\"exclude\":[]}");
	int64_t s3 = begin(st, "/other", NULL, 3, "{\"hash\":\"sha256\",\"exclude\":[]}");
	int64_t s4 = begin(st, "/data", "h", 4, "not json");
	must_end(st, s1, "complete");
	must_end(st, s2, "interrupted");
	must_end(st, s3, "complete");
	must_end(st, s4, "complete");

	struct fidx_scan_list list = {0};
	struct fidx_scan_shape shape;
	struct fidx_error err;
	const struct fidx_scan_row *row = newest(st, "/data", complete, s4, &list);
	assert_non_null(row);
	assert_int_equal(row->id, s1);
	assert_null(row->damage);
	assert_string_equal(row->root, "/data");
	assert_string_equal(row->status, "complete");
	assert_int_equal(row->pid, getpid()); /* the process that wrote it */
	assert_string_equal(row->host, "h");
	assert_int_equal(fidx_scan_shape_of(row, &shape, &err), 0);
	assert_int_equal(shape.digests, 1u << FIDX_MD5 | 1u << FIDX_SHA256);
	assert_true(shape.xdev);
	assert_false(shape.follow);
	assert_false(shape.no_stat);
	assert_int_equal(shape.nexcludes, 4);
	assert_string_equal(shape.excludes[0], "*.skip");
	assert_string_equal(shape.excludes[1], "a\xff" "b"); /* the byte, not U+00FF */
	assert_string_equal(shape.excludes[2], "q\"x, y\\");
	assert_string_equal(shape.excludes[3], "caf\xc3\xa9");
	assert_null(shape.excludes[4]);
	fidx_scan_shape_free(&shape);

	row = newest(st, "/data", unfinished, 0, &list);
	assert_non_null(row);
	assert_int_equal(row->id, s2);
	assert_int_equal(fidx_scan_shape_of(row, &shape, &err), 0);
	assert_int_equal(shape.digests, 0);
	assert_true(shape.follow);
	assert_true(shape.no_stat);
	assert_int_equal(shape.nexcludes, 0);
	fidx_scan_shape_free(&shape);

	assert_null(newest(st, "/nowhere", any, 0, &list));
	row = newest(st, "/data", any, 0, &list);
	assert_non_null(row);
	assert_int_equal(row->id, s4);
	assert_int_equal(fidx_scan_shape_of(row, &shape, &err), -1);
	assert_non_null(strstr(err.msg, "scan 4"));
	assert_int_equal(err.code, EINVAL);

	row = newest(st, "/data", complete, s4, &list);
	assert_non_null(row);
	assert_int_equal(row->id, s1);
	assert_null(newest(st, "/data", complete, s1, &list));
	assert_null(newest(st, "/dat", complete, 0, &list)); /* a root is not a prefix */
	fidx_scan_list_free(&list);
}

/* each_error's argument: the rows with an error that the set keeps. */
struct errors {
	int n;
	char path[64], error[64];
};

/* Notes a row kept with an error. */
static void each_error(void *arg, const char *path, const char *error)
{
	struct errors *e = arg;
	e->n++;
	snprintf(e->path, sizeof(e->path), "%s", path);
	snprintf(e->error, sizeof(e->error), "%s", error);
}

/*
 * The paths of one scan that `fidx scan --resume` does not record again:
 * byte-exact (a newline, a byte that is not UTF-8), those of an entry with
 * an error too, but not those an interruption left unfinished; other scans'
 * paths are not in it.
 */
static void test_pathset(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = f->st;
	int64_t s1 = begin(st, "/r", "h", 1, "{}"), s2 = begin(st, "/r", "h", 1, "{}");
	char path[32];
	for (int i = 0; i < 3000; i++) {
		struct fidx_record rec = {.scan_id = i % 3 ? s1 : s2};
		snprintf(path, sizeof(path), "/r/%d", i);
		must_put(st, &rec, path);
	}
	struct fidx_record odd = {.scan_id = s1};
	must_put(st, &odd, "/r/\n\xff");
	struct fidx_record dir = {.scan_id = s1, .type = 'd', .error = FIDX_ERROR_NOT_READ};
	must_put(st, &dir, "/r/dir");
	struct fidx_record file = {.scan_id = s1, .type = 'f', .error = FIDX_ERROR_NOT_HASHED};
	must_put(st, &file, "/r/file");
	struct fidx_record denied = {.scan_id = s1, .type = 'f',
				     .error = "open: Permission denied"};
	must_put(st, &denied, "/r/denied");
	must_end(st, s1, "interrupted");
	must_end(st, s2, "interrupted");

	struct fidx_scan_list list = {0};
	struct fidx_error err;
	struct errors errors = {0};
	struct fidx_pathset *set = fidx_pathset_load(st, must_scan_row(st, s1, &list), each_error,
						     &errors, &err);
	if (!set)
		fail_msg("fidx_pathset_load: %s", err.msg);
	assert_int_equal(fidx_pathset_count(set), 2000 + 2);
	assert_true(fidx_pathset_has(set, "/r/1", 4));
	assert_false(fidx_pathset_has(set, "/r/3", 4)); /* scan 2's */
	assert_true(fidx_pathset_has(set, "/r/\n\xff", 5));
	assert_false(fidx_pathset_has(set, "/r/\n", 4));
	assert_true(fidx_pathset_has(set, "/r/denied", 9));
	assert_false(fidx_pathset_has(set, "/r/dir", 6));  /* done again on resume */
	assert_false(fidx_pathset_has(set, "/r/file", 7));
	/* The one row kept with an error is told. */
	assert_int_equal(errors.n, 1);
	assert_string_equal(errors.path, "/r/denied");
	assert_string_equal(errors.error, "open: Permission denied");
	fidx_pathset_free(set);
	fidx_pathset_free(NULL);
	fidx_scan_list_free(&list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		FIXTURE_STORE_TEST(test_take),
		FIXTURE_STORE_TEST(test_take_on_disk),
		FIXTURE_STORE_TEST(test_disk_matches_memory),
		FIXTURE_STORE_TEST(test_no_tmpdir),
		FIXTURE_STORE_TEST(test_racy),
		FIXTURE_STORE_TEST(test_scan_row),
		FIXTURE_STORE_TEST(test_pathset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
