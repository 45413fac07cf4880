/*
 * test_dupes.c - `fidx dupes` over the store: the digests it keeps after a
 * scan, and the search itself.
 *
 * fidx_store_add_digests() writes what fidx dupes computed after a scan
 * (FIDX_LATER_COLUMNS beside the file rows): a later row for the same file
 * keeps what it does not set (edges, or the SHA-256), replaces what it
 * does.  Checked by reading the rows back through the store.
 * fidx_dupes_find() over a selection of the store's scans (fidx_select_default())
 * groups the files of a small tree it reads; fidx_dupes_store() keeps what
 * it computed, so that a second search reads nothing.
 *
 * What only the SQLite file shows (file_digest.read_ns, a failing batch
 * that keeps none of its rows) is tested by the SQLite backend:
 * tests/store/sqlite/test_file_digest.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dupes.h"
#include "record.h"
#include "select.h"
#include "store.h"
#include "store/fixture.h"

/*
 * Opens db with one scan of two files (open_with_two_files()); the scan into
 * *scan, the ids the store gave the files into ids[0..2), in row order.
 */
static struct fidx_store *store_with_files(const char *db, int64_t *scan, int64_t ids[2])
{
	struct fidx_store *st = open_with_two_files(db, scan);
	struct fidx_error err;
	struct fidx_rows_query q = {.scans = scan, .nscans = 1, .order = FIDX_ROWS_ID};
	struct fidx_rows *it = fidx_store_rows(st, &q, &err);
	const struct fidx_row *row;
	int n = 0;
	if (!it)
		fail_msg("fidx_store_rows: %s", err.msg);
	while (fidx_rows_next(it, &row, &err) == 1 && n < 2)
		ids[n++] = fidx_row_int(row, FIDX_COL_ID);
	fidx_rows_close(it);
	assert_int_equal(n, 2);
	return st;
}

/* The columns the later digests are read with. */
#define LATER (FIDX_COLUMN(FIDX_COL_EDGE_BLOCK) | FIDX_COLUMN(FIDX_COL_EDGES) | \
	       FIDX_COLUMN(FIDX_COL_LATER_SHA256))

/* Reads the later digests of row id (of scan) through the store, or fails the test. */
static const struct fidx_row *later(struct fidx_store *st, int64_t scan, int64_t id)
{
	struct fidx_error err;
	struct fidx_rows_query q = {.scans = &scan, .nscans = 1, .columns = LATER};
	const struct fidx_row *row;
	if (fidx_store_row(st, &q, id, &row, &err) != 1)
		fail_msg("fidx_store_row %lld: %s", (long long)id, err.msg);
	return row;
}

/* Asserts that digest column c of row holds n bytes of value byte. */
static void assert_bytes(const struct fidx_row *row, enum fidx_col c, uint8_t byte, size_t n)
{
	uint8_t want[64];
	memset(want, byte, n);
	assert_true(fidx_row_has(row, c));
	assert_int_equal(fidx_row_len(row, c), n);
	assert_memory_equal(row->v[c].p, want, n);
}

/* Edges first, the SHA-256 later: the row keeps both; new edges replace old ones. */
static void test_merge(void **state)
{
	struct fixture *f = *state;
	int64_t scan, ids[2];
	struct fidx_store *st = store_with_files(f->db, &scan, ids);
	struct fidx_file_digest d = {.file_id = ids[0], .read_ns = 5, .edge_block = 16384};
	struct fidx_error err;
	const struct fidx_row *row;

	memset(d.edges, 0xab, sizeof(d.edges));
	assert_int_equal(fidx_store_add_digests(st, &d, 1, &err), 0);
	d = (struct fidx_file_digest){.file_id = ids[0], .read_ns = 6, .has_sha256 = true};
	memset(d.sha256, 0x01, sizeof(d.sha256));
	assert_int_equal(fidx_store_add_digests(st, &d, 1, &err), 0);
	row = later(st, scan, ids[0]);
	assert_bytes(row, FIDX_COL_EDGES, 0xab, 16);
	assert_bytes(row, FIDX_COL_LATER_SHA256, 0x01, 32);
	assert_int_equal(fidx_row_int(row, FIDX_COL_EDGE_BLOCK), 16384);

	d = (struct fidx_file_digest){.file_id = ids[0], .read_ns = 7, .edge_block = 4096};
	memset(d.edges, 0xcd, sizeof(d.edges));
	assert_int_equal(fidx_store_add_digests(st, &d, 1, &err), 0);
	row = later(st, scan, ids[0]);
	assert_bytes(row, FIDX_COL_EDGES, 0xcd, 16);
	assert_int_equal(fidx_row_int(row, FIDX_COL_EDGE_BLOCK), 4096);
	assert_bytes(row, FIDX_COL_LATER_SHA256, 0x01, 32);
	/* The other file has none. */
	row = later(st, scan, ids[1]);
	assert_false(fidx_row_has(row, FIDX_COL_LATER_SHA256));
	assert_false(fidx_row_has(row, FIDX_COL_EDGES));
	assert_false(fidx_row_has(row, FIDX_COL_EDGE_BLOCK));
	must_close(st);
}

/* Bytes of the large files: beyond FIDX_DUPES_WHOLE_MAX, so that their edges are read first. */
#define BIG (FIDX_DUPES_WHOLE_MAX + 7232)

/* Writes n bytes of 'x' to path, with byte at (when at < n) set to 'y'. */
static void write_file(const char *path, size_t n, size_t at)
{
	static char buf[BIG];
	memset(buf, 'x', n);
	if (at < n)
		buf[at] = 'y';
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, n), (ssize_t)n);
	close(fd);
}

/* Records path (in the tree) as stat(2) sees it, as a scan without digests would. */
static void record(struct fidx_store *st, int64_t scan, const char *tree, const char *name)
{
	char path[PATH_MAX];
	struct stat sb;
	snprintf(path, sizeof(path), "%s%s%s", tree, *name ? "/" : "", name);
	assert_int_equal(lstat(path, &sb), 0);
	struct fidx_record rec = {.scan_id = scan, .type = fidx_type_of_mode(sb.st_mode),
				  .has_meta = true};
	rec.meta = (struct fidx_meta){
		.size = (uint64_t)sb.st_size, .mode = sb.st_mode, .nlink = sb.st_nlink,
		.dev = sb.st_dev, .ino = sb.st_ino,
		.mtime = {sb.st_mtim.tv_sec, (uint32_t)sb.st_mtim.tv_nsec},
		.ctime = {sb.st_ctim.tv_sec, (uint32_t)sb.st_ctim.tv_nsec},
		.atime = {sb.st_atim.tv_sec, (uint32_t)sb.st_atim.tv_nsec},
	};
	must_put(st, &rec, path);
}

/* The row id of path in scan, through the store, or fails the test. */
static int64_t id_of(struct fidx_store *st, int64_t scan, const char *path)
{
	struct fidx_error err;
	struct fidx_rows_query q = {.scans = &scan, .nscans = 1, .under = path,
				    .columns = FIDX_COLUMN(FIDX_COL_PATH)};
	struct fidx_rows *it = fidx_store_rows(st, &q, &err);
	const struct fidx_row *row;
	int64_t id = 0;
	if (!it)
		fail_msg("fidx_store_rows: %s", err.msg);
	while (fidx_rows_next(it, &row, &err) == 1)
		if (strcmp(fidx_row_text(row, FIDX_COL_PATH), path) == 0)
			id = fidx_row_int(row, FIDX_COL_ID);
	fidx_rows_close(it);
	assert_true(id > 0);
	return id;
}

/* Searches the default selection of st's scans, or fails the test. */
static struct fidx_dupes *find(struct fidx_store *st)
{
	struct fidx_error err;
	struct fidx_scan_list all = {0};
	struct fidx_selection sel = {0};
	struct fidx_dupes_opts o = {.jobs = 2, .io = FIDX_IO_SSD};
	if (fidx_store_scans(st, NULL, &all, &err) < 0 ||
	    fidx_select_default(&all, 0, &sel, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(sel.scans.n, 1);
	struct fidx_dupes *d = fidx_dupes_find(st, &sel, &o, &err);
	if (!d)
		fail_msg("fidx_dupes_find: %s", err.msg);
	fidx_selection_free(&sel);
	fidx_scan_list_free(&all);
	return d;
}

/* Asserts what find() gives for the tree of test_find_and_store(). */
static void check_groups(const struct fidx_dupes *d, const char *tree)
{
	char path[PATH_MAX];
	assert_false(d->interrupted);
	assert_int_equal(d->left_out, 0);
	assert_int_equal(d->ngroups, 2);
	assert_int_equal(d->files, 4);
	assert_int_equal(d->waste, BIG + 5);
	/* The largest waste first: big1 and big2 (big3 differs inside, big4 at an edge). */
	const struct fidx_dupes_group *g = &d->groups[0];
	assert_int_equal(g->size, BIG);
	assert_int_equal(g->algo, FIDX_SHA256);
	assert_int_equal(g->nfiles, 2);
	assert_int_equal(g->waste, BIG);
	snprintf(path, sizeof(path), "%s/big1", tree);
	assert_int_equal(g->files[0].npaths, 1);
	assert_string_equal(g->files[0].paths[0], path);
	snprintf(path, sizeof(path), "%s/big2", tree);
	assert_string_equal(g->files[1].paths[0], path);
	/* a and its hard link h are one file, with b; c (as large) is not one of them. */
	g = &d->groups[1];
	assert_int_equal(g->size, 5);
	assert_int_equal(g->nfiles, 2);
	assert_int_equal(g->waste, 5);
	assert_int_equal(g->files[0].npaths, 2);
	snprintf(path, sizeof(path), "%s/a", tree);
	assert_string_equal(g->files[0].paths[0], path);
	snprintf(path, sizeof(path), "%s/h", tree);
	assert_string_equal(g->files[0].paths[1], path);
	assert_int_equal(g->files[1].npaths, 1);
	snprintf(path, sizeof(path), "%s/b", tree);
	assert_string_equal(g->files[1].paths[0], path);
}

/*
 * The search reads what it must (small files whole; large ones at their
 * edges, then whole where the edges agree), groups equal content (hard links
 * as one file, empty files left out), and fidx_dupes_store() keeps each
 * digest beside its row: a second search computes nothing and finds the
 * same groups.
 */
static void test_find_and_store(void **state)
{
	struct fixture *f = *state;
	static const char *const names[] = {"", "a", "b", "c", "h", "e1", "e2",
					    "big1", "big2", "big3", "big4"};
	char path[PATH_MAX], hard[PATH_MAX];
	struct fidx_error err;

	assert_int_equal(mkdir(f->tree, 0755), 0);
	snprintf(path, sizeof(path), "%s/a", f->tree);
	write_file(path, 5, 0);         /* "yxxxx" */
	snprintf(hard, sizeof(hard), "%s/h", f->tree);
	assert_int_equal(link(path, hard), 0);
	snprintf(path, sizeof(path), "%s/b", f->tree);
	write_file(path, 5, 0);
	snprintf(path, sizeof(path), "%s/c", f->tree);
	write_file(path, 5, 4);         /* "xxxxy" */
	snprintf(path, sizeof(path), "%s/e1", f->tree);
	write_file(path, 0, 0);
	snprintf(path, sizeof(path), "%s/e2", f->tree);
	write_file(path, 0, 0);
	snprintf(path, sizeof(path), "%s/big1", f->tree);
	write_file(path, BIG, BIG);
	snprintf(path, sizeof(path), "%s/big2", f->tree);
	write_file(path, BIG, BIG);
	snprintf(path, sizeof(path), "%s/big3", f->tree);
	write_file(path, BIG, BIG / 2); /* its edges are big1's */
	snprintf(path, sizeof(path), "%s/big4", f->tree);
	write_file(path, BIG, 0);

	struct fidx_store *st = must_open(f->db, FIDX_STORE_WRITE, 0);
	int64_t scan = must_begin(st, f->tree);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		record(st, scan, f->tree, names[i]);
	must_end(st, scan, "complete");

	struct fidx_dupes *d = find(st);
	check_groups(d, f->tree);
	/* a, h, b and c read whole; the four large files' edges; big1 to big3 whole. */
	assert_int_equal(fidx_dupes_computed(d), 8);
	uint8_t digest[32];
	memcpy(digest, d->groups[0].digest, 32);
	assert_int_equal(fidx_dupes_store(d, st, &err), 0);
	fidx_dupes_free(d);

	/* Kept beside the rows: big1's SHA-256 is the group's, big4 has its edges only. */
	snprintf(path, sizeof(path), "%s/big1", f->tree);
	const struct fidx_row *row = later(st, scan, id_of(st, scan, path));
	assert_int_equal(fidx_row_int(row, FIDX_COL_EDGE_BLOCK), FIDX_DUPES_EDGE_BLOCK);
	assert_int_equal(fidx_row_len(row, FIDX_COL_EDGES), 16);
	assert_int_equal(fidx_row_len(row, FIDX_COL_LATER_SHA256), 32);
	assert_memory_equal(row->v[FIDX_COL_LATER_SHA256].p, digest, 32);
	snprintf(path, sizeof(path), "%s/big4", f->tree);
	row = later(st, scan, id_of(st, scan, path));
	assert_int_equal(fidx_row_len(row, FIDX_COL_EDGES), 16);
	assert_false(fidx_row_has(row, FIDX_COL_LATER_SHA256));
	snprintf(path, sizeof(path), "%s/h", f->tree);
	row = later(st, scan, id_of(st, scan, path));
	assert_int_equal(fidx_row_len(row, FIDX_COL_LATER_SHA256), 32);

	/* A second search reads nothing and finds the same. */
	d = find(st);
	check_groups(d, f->tree);
	assert_int_equal(fidx_dupes_computed(d), 0);
	assert_memory_equal(d->groups[0].digest, digest, 32);
	assert_int_equal(fidx_dupes_store(d, st, &err), 0);
	fidx_dupes_free(d);
	fidx_dupes_free(NULL);
	must_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		FIXTURE_TEST(test_merge),
		FIXTURE_TEST(test_find_and_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
