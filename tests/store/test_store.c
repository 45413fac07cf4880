/*
 * test_store.c - the store conformance suite: what every store backend must
 * do with scans and rows (store.h), checked through store.h alone.
 *
 * Scans are written through a WRITE store and read back through a READ
 * store: every column of every row is compared with the record it came
 * from, the scan row with the facts it began and ended with.  Covered:
 * a round trip of every kind of record (odd bytes, all digests, a link, an
 * entry without metadata); rows committed per batch and visible to a reader
 * at once, pending rows rolled back on close; two scans in one database; rows
 * in id order and in path order, whatever order they were written in; a
 * database created and left without a scan is not left behind; the columns
 * of a disk image's entries, sealed.
 *
 * The target each test opens comes from one place, target_new() in
 * store/fixture.h (with the store calls that fail the test): a new
 * temporary SQLite file today.  What the SQLite backend makes of the rows
 * (its SQL layout, header, views, schema versions, full disk) is its own
 * suite's, tests/store/sqlite/test_sqlite.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "record.h"
#include "row.h"
#include "scanrow.h"
#include "store.h"
#include "store/fixture.h"

/* ------------------------------------------------------------- helpers --- */

/* The failure of the last store call a test makes itself (MUST()). */
static struct fidx_error err;

/* Adds a file of path with nothing but its type, or fails the test. */
static void add_path(struct fidx_store *st, int64_t scan, const char *path)
{
	struct fidx_record *r = make_rec(scan, path, strlen(path), 'f');
	must_add(st, r);
	fidx_record_free(r);
}

/* Reads the scan rows into *list (every one), or fails the test. */
static void read_scans(struct fidx_store *st, struct fidx_scan_list *list)
{
	*list = (struct fidx_scan_list){0};
	MUST(fidx_store_scans(st, NULL, list, &err));
}

/* Starts reading the rows of scan (of root) in id order, columns as asked. */
static struct fidx_rows *rows_of(struct fidx_store *st, const int64_t *scan,
				 const char *const *root, uint64_t columns)
{
	struct fidx_rows_query q = {.scans = scan, .roots = root, .nscans = 1,
				    .columns = columns, .order = FIDX_ROWS_ID};
	struct fidx_rows *it = fidx_store_rows(st, &q, &err);
	if (!it)
		fail_msg("fidx_store_rows: %s", err.msg);
	return it;
}

/* The next row of it, or NULL at the end; fails the test on an error. */
static const struct fidx_row *next_row(struct fidx_rows *it)
{
	const struct fidx_row *row = NULL;
	int rc = fidx_rows_next(it, &row, &err);
	if (rc < 0)
		fail_msg("fidx_rows_next: %s", err.msg);
	return rc ? row : NULL;
}

/*
 * Counts the rows of scan (of root), and of them those whose path begins
 * with prefix (NULL: none asked) into *matching.
 */
static uint64_t count_rows(struct fidx_store *st, int64_t scan, const char *root,
			   const char *prefix, uint64_t *matching)
{
	struct fidx_rows *it = rows_of(st, &scan, &root, FIDX_COLUMN(FIDX_COL_PATH));
	const struct fidx_row *row;
	uint64_t n = 0, m = 0;
	while ((row = next_row(it))) {
		assert_int_equal(fidx_row_int(row, FIDX_COL_SCAN_ID), scan);
		const char *path = fidx_row_text(row, FIDX_COL_PATH);
		assert_non_null(path);
		if (prefix && strncmp(path, prefix, strlen(prefix)) == 0)
			m++;
		n++;
	}
	fidx_rows_close(it);
	if (matching)
		*matching = m;
	return n;
}

/* Column c of row holds no value. */
static void expect_none(const struct fidx_row *row, enum fidx_col c)
{
	if (fidx_row_has(row, c))
		fail_msg("column %s holds a value; expected none", fidx_columns[c].name);
}

/* Column c of row is the integer v. */
static void expect_int(const struct fidx_row *row, enum fidx_col c, int64_t v)
{
	if (!fidx_row_has(row, c))
		fail_msg("column %s holds no value; expected %lld", fidx_columns[c].name,
			 (long long)v);
	assert_true(fidx_row_int(row, c) == v);
}

/* Column c of row holds exactly the len bytes at p. */
static void expect_bytes(const struct fidx_row *row, enum fidx_col c, const void *p, size_t len)
{
	if (!fidx_row_has(row, c))
		fail_msg("column %s holds no value; expected %zu bytes", fidx_columns[c].name, len);
	assert_int_equal(fidx_row_len(row, c), len);
	if (len)
		assert_memory_equal(row->v[c].p, p, len);
}

/* Column c of row is the string str, or holds nothing when str is NULL. */
static void expect_str(const struct fidx_row *row, enum fidx_col c, const char *str)
{
	if (!str)
		expect_none(row, c);
	else
		expect_bytes(row, c, str, strlen(str));
}

/* Time column c of row is t. */
static void expect_time(const struct fidx_row *row, enum fidx_col c, struct fidx_time t)
{
	struct fidx_time got;
	if (!fidx_row_time(row, c, &got))
		fail_msg("column %s holds no time", fidx_columns[c].name);
	if (!fidx_time_eq(got, t))
		fail_msg("column %s: %lld.%09u, expected %lld.%09u", fidx_columns[c].name,
			 (long long)got.sec, got.nsec, (long long)t.sec, t.nsec);
}

/* Checks every column of a row read (all columns) against the record it came from. */
static void expect_row(const struct fidx_row *row, const struct fidx_record *r)
{
	const struct fidx_meta *m = &r->meta;

	expect_int(row, FIDX_COL_SCAN_ID, r->scan_id);
	expect_bytes(row, FIDX_COL_PATH, r->path, r->path_len);
	expect_bytes(row, FIDX_COL_NAME, r->path + r->name_off, r->path_len - r->name_off);
	expect_bytes(row, FIDX_COL_EXT, r->path + r->ext_off, r->path_len - r->ext_off);
	if (r->type) {
		expect_bytes(row, FIDX_COL_TYPE, &r->type, 1);
		assert_int_equal(fidx_row_type(row), r->type);
	} else {
		expect_none(row, FIDX_COL_TYPE);
	}
	if (r->has_meta) {
		expect_int(row, FIDX_COL_SIZE, (int64_t)m->size);
		expect_int(row, FIDX_COL_BLOCKS, (int64_t)m->blocks);
		expect_int(row, FIDX_COL_MODE, m->mode);
		expect_int(row, FIDX_COL_UID, m->uid);
		expect_int(row, FIDX_COL_GID, m->gid);
		expect_int(row, FIDX_COL_NLINK, (int64_t)m->nlink);
		expect_int(row, FIDX_COL_DEV, (int64_t)m->dev);
		expect_int(row, FIDX_COL_INO, (int64_t)m->ino);
		assert_true(fidx_row_u64(row, FIDX_COL_DEV) == m->dev);
		expect_time(row, FIDX_COL_ATIME, m->atime);
		expect_time(row, FIDX_COL_MTIME, m->mtime);
		expect_time(row, FIDX_COL_CTIME, m->ctime);
		if (m->has_btime)
			expect_time(row, FIDX_COL_BTIME, m->btime);
		else
			expect_none(row, FIDX_COL_BTIME);
	} else {
		for (int c = FIDX_COL_SIZE; c <= FIDX_COL_BTIME; c++)
			expect_none(row, c);
	}
	if (r->link_target)
		expect_bytes(row, FIDX_COL_LINK_TARGET, r->link_target, r->link_len);
	else
		expect_none(row, FIDX_COL_LINK_TARGET);
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		if (r->digest_mask & (1u << d)) {
			expect_bytes(row, FIDX_COL_MD5 + d, r->digest[d], fidx_digest_len(d));
			assert_non_null(fidx_row_digest(row, d));
		} else {
			expect_none(row, FIDX_COL_MD5 + d);
		}
	}
	expect_str(row, FIDX_COL_ERROR, r->error);
	expect_none(row, FIDX_COL_DIGESTS_FROM);
	const struct fidx_image_meta *im = r->image;
	expect_str(row, FIDX_COL_STATE, im ? im->state : NULL);
	expect_str(row, FIDX_COL_STREAM, im ? im->stream : NULL);
	for (int k = 0; k < 4; k++) {
		if (im && im->has_fn_times)
			expect_time(row, FIDX_COL_FN_ATIME + k, im->fn_time[k]);
		else
			expect_none(row, FIDX_COL_FN_ATIME + k);
	}
	if (im && im->has_attributes)
		expect_int(row, FIDX_COL_ATTRIBUTES, im->attributes);
	else
		expect_none(row, FIDX_COL_ATTRIBUTES);
}

/* --------------------------------------------------------------- tests --- */

/*
 * A new database: every column of every kind of record, read back through
 * the iterator and by id, exactly; and the scan row.
 */
static void test_roundtrip(void **state)
{
	struct target *t = *state;
	static const char weird[] = FIXTURE_WEIRD_PATH;
	static const char target[] = FIXTURE_LINK_TARGET;
	struct fidx_record *r[5];

	struct fidx_store *st = must_open(t->name, FIDX_STORE_WRITE, 2);
	int64_t scan = must_begin(st, "/r");

	five_kinds(scan, r);
	for (int i = 0; i < 5; i++)
		must_add(st, r[i]);
	must_end_complete(st, scan, 5);
	MUST(fidx_store_build_indexes(st, &err));
	must_close(st);

	st = must_open(t->name, FIDX_STORE_READ, 0);
	assert_int_equal(fidx_store_version(st), target_version());
	assert_int_equal(fidx_store_count(st, &scan, 1, false), 5);
	assert_int_equal(fidx_store_count(st, &scan, 1, true), 2);  /* as its scan row says */

	/* Every row, in the order written, every column. */
	const char *root = "/r";
	struct fidx_rows *it = rows_of(st, &scan, &root, FIDX_FILE_ALL);
	const struct fidx_row *row;
	int64_t ids[5], last = 0;
	int n = 0;
	while ((row = next_row(it))) {
		assert_true(n < 5);
		ids[n] = fidx_row_int(row, FIDX_COL_ID);
		assert_true(ids[n] > last);
		last = ids[n];
		expect_row(row, r[n]);
		n++;
	}
	fidx_rows_close(it);
	assert_int_equal(n, 5);

	/* Each row again by its id; the literal bytes of names, extensions, targets, errors. */
	struct fidx_rows_query q = {.scans = &scan, .roots = &root, .nscans = 1,
				    .columns = FIDX_FILE_ALL};
	for (int i = 0; i < 5; i++) {
		assert_int_equal(fidx_store_row(st, &q, ids[i], &row, &err), 1);
		expect_int(row, FIDX_COL_ID, ids[i]);
		expect_row(row, r[i]);
		switch (i) {
		case 1:
			expect_bytes(row, FIDX_COL_NAME, "a\xff\nb.tar.gz", 11);
			expect_str(row, FIDX_COL_EXT, "gz");
			expect_bytes(row, FIDX_COL_PATH, weird, sizeof(weird) - 1);
			break;
		case 2:
			expect_str(row, FIDX_COL_EXT, "");
			expect_bytes(row, FIDX_COL_LINK_TARGET, target, sizeof(target) - 1);
			break;
		case 3:
			expect_str(row, FIDX_COL_ERROR, "lstat: Permission denied");
			break;
		}
	}

	/* The scan row: what it began and ended with. */
	struct fidx_scan_list list;
	read_scans(st, &list);
	assert_int_equal(list.n, 1);
	const struct fidx_scan_row *s = &list.rows[0];
	assert_null(s->damage);
	assert_int_equal(s->id, scan);
	assert_string_equal(s->root, "/r");
	assert_string_equal(s->host, "testhost");
	assert_string_equal(s->os, "Debian GNU/Linux 12 (bookworm)");
	assert_string_equal(s->kernel, "6.1.0");
	assert_string_equal(s->arch, "x86_64");
	assert_string_equal(s->version, "0.1.0");
	assert_string_equal(s->options, "{\"hash\":[\"sha256\"]}");
	assert_true(s->started_ns == 1700000000000000000);
	assert_true(s->has & FIDX_SCOLUMN(FIDX_SCOL_FINISHED_NS));
	assert_true(s->finished_ns == 1700000001000000000);
	assert_string_equal(s->status, "complete");
	assert_int_equal(s->entries, 5);
	assert_int_equal(s->files, 2);
	assert_int_equal(s->dirs, 1);
	assert_int_equal(s->bytes, 4096);
	assert_int_equal(s->errors, 2);
	fidx_scan_list_free(&list);
	must_close(st);
	for (int i = 0; i < 5; i++)
		fidx_record_free(r[i]);
}

/*
 * The scan row is visible to a reader at once; rows are committed per batch
 * (and by fidx_store_flush()); closing rolls back the rows pending.
 */
static void test_batches(void **state)
{
	struct target *t = *state;
	struct fidx_store *st = must_open(t->name, FIDX_STORE_WRITE, 3);
	int64_t scan = must_begin(st, "/b");
	struct fidx_store *rd = must_open(t->name, FIDX_STORE_READ, 0);
	struct fidx_scan_list list;
	char path[32];

	read_scans(rd, &list);
	assert_int_equal(list.n, 1);
	assert_string_equal(list.rows[0].status, "running");
	assert_false(list.rows[0].has & FIDX_SCOLUMN(FIDX_SCOL_FINISHED_NS));
	fidx_scan_list_free(&list);
	for (int i = 0; i < 7; i++) {
		snprintf(path, sizeof(path), "/b/f%d", i);
		add_path(st, scan, path);
	}
	assert_int_equal(fidx_store_pending(st), 1);
	assert_int_equal(count_rows(rd, scan, "/b", NULL, NULL), 6);
	assert_int_equal(fidx_store_count(rd, &scan, 1, false), 6);
	MUST(fidx_store_flush(st, &err));
	assert_int_equal(fidx_store_pending(st), 0);
	assert_int_equal(count_rows(rd, scan, "/b", NULL, NULL), 7);
	add_path(st, scan, "/b/lost");
	must_close(st);
	assert_int_equal(count_rows(rd, scan, "/b", NULL, NULL), 7);
	read_scans(rd, &list);
	assert_int_equal(list.n, 1);
	assert_string_equal(list.rows[0].status, "running");
	fidx_scan_list_free(&list);
	must_close(rd);
}

/* Two scans into one database, by two stores: separate rows, earlier scan untouched. */
static void test_two_scans(void **state)
{
	struct target *t = *state;
	int64_t scans[2];

	for (int n = 1; n <= 2; n++) {
		struct fidx_store *st = must_open(t->name, FIDX_STORE_WRITE, 0);
		int64_t scan = must_begin(st, n == 1 ? "/one" : "/two");
		assert_true(n == 1 || scan > scans[0]);
		scans[n - 1] = scan;
		for (int i = 0; i < 2 + n; i++) {
			char path[32];
			snprintf(path, sizeof(path), "/%s/f%d", n == 1 ? "one" : "two", i);
			add_path(st, scan, path);
		}
		must_end_complete(st, scan, 2 + n);
		MUST(fidx_store_build_indexes(st, &err));
		must_close(st);
	}
	struct fidx_store *st = must_open(t->name, FIDX_STORE_READ, 0);
	uint64_t below;
	assert_int_equal(count_rows(st, scans[0], "/one", "/one/", &below), 3);
	assert_int_equal(below, 3);
	assert_int_equal(count_rows(st, scans[1], "/two", "/two/", &below), 4);
	assert_int_equal(below, 4);
	struct fidx_scan_list list = {0};
	struct fidx_scan_filter complete = {.statuses = FIDX_STATUS_COMPLETE};
	MUST(fidx_store_scans(st, &complete, &list, &err));
	assert_int_equal(list.n, 2);
	assert_int_equal(list.rows[0].id, scans[0]);
	assert_int_equal(list.rows[1].id, scans[1]);
	fidx_scan_list_free(&list);
	must_close(st);
}

/*
 * FIDX_ROWS_ID gives ascending ids and FIDX_ROWS_PATH byte order of paths,
 * whatever the order the rows were written in (here the reverse of both).
 */
static void test_orders(void **state)
{
	struct target *t = *state;
	struct fidx_store *st = must_open(t->name, FIDX_STORE_WRITE, 0);
	char path[32];
	/* Another scan first, larger: a store may read a small scan by an index of paths. */
	int64_t other = must_begin(st, "/p");
	for (int i = 0; i < 400; i++) {
		snprintf(path, sizeof(path), "/p/f%03d", i);
		add_path(st, other, path);
	}
	must_end_complete(st, other, 400);
	int64_t scan = must_begin(st, "/o");
	for (int i = 40; i-- > 0;) {
		snprintf(path, sizeof(path), "/o/f%02d", i);
		add_path(st, scan, path);
	}
	must_end_complete(st, scan, 40);
	must_build_indexes(st);
	const char *root = "/o";
	for (int order = FIDX_ROWS_PATH; order <= FIDX_ROWS_ID; order++) {
		struct fidx_rows_query q = {.scans = &scan, .roots = &root, .nscans = 1,
					    .columns = FIDX_COLUMN(FIDX_COL_PATH), .order = order};
		struct fidx_rows *it = fidx_store_rows(st, &q, &err);
		if (!it)
			fail_msg("fidx_store_rows: %s", err.msg);
		const struct fidx_row *row;
		int64_t last_id = INT64_MIN;
		char last_path[32] = "";
		int n = 0;
		while ((row = next_row(it))) {
			const char *p = fidx_row_text(row, FIDX_COL_PATH);
			if (order == FIDX_ROWS_ID)
				assert_true(fidx_row_int(row, FIDX_COL_ID) > last_id);
			else
				assert_true(strcmp(p, last_path) > 0);
			last_id = fidx_row_int(row, FIDX_COL_ID);
			snprintf(last_path, sizeof(last_path), "%s", p);
			n++;
		}
		assert_int_equal(n, 40);
		fidx_rows_close(it);
	}
	must_close(st);
}

/*
 * A WRITE store that creates its database and begins no scan in it leaves
 * nothing behind; one that begins a scan leaves the database, with its scan.
 */
static void test_unused_removed(void **state)
{
	struct target *t = *state;

	must_close(must_open(t->name, FIDX_STORE_WRITE, 0));
	assert_int_equal(fidx_store_probe(t->name, NULL), FIDX_STORE_NONE);
	assert_null(fidx_store_open(t->name, FIDX_STORE_READ, NULL, &err));
	assert_int_equal(err.code, ENOENT);

	struct fidx_store *st = must_open(t->name, FIDX_STORE_WRITE, 0);
	must_begin(st, "/u");
	must_close(st);
	uint32_t version = 0;
	assert_int_equal(fidx_store_probe(t->name, &version), FIDX_STORE_FIDX);
	assert_int_equal(version, (uint32_t)target_version());
	st = must_open(t->name, FIDX_STORE_READ, 0);
	struct fidx_scan_list list;
	read_scans(st, &list);
	assert_int_equal(list.n, 1);
	assert_string_equal(list.rows[0].root, "/u");
	fidx_scan_list_free(&list);
	must_close(st);
}

/*
 * Entries of a disk image (schema 6): the state, a stream's name, the
 * $FILE_NAME times (two beyond the int64 nanoseconds: 1601 and 30828, as
 * NTFS allows), a time TSK does not know, read back exactly; the scan's seal
 * covers them and verifies.
 */
static void test_image_rows(void **state)
{
	struct target *t = *state;
	struct fidx_store *st = must_open(t->name, FIDX_STORE_WRITE, 0);
	int64_t scan = must_begin(st, "/img");
	struct fidx_record *r[3];
	static const char *const paths[] = {"/img/p1/a.txt", "/img/p1/a.txt:zone", "/img/p1/gone"};
	static const char *const states[] = {"allocated", "allocated", "deleted"};
	for (int i = 0; i < 3; i++) {
		r[i] = make_rec(scan, paths[i], strlen(paths[i]), 'f');
		r[i]->has_meta = true;
		r[i]->meta = (struct fidx_meta){.size = 10u + i, .mode = 0100644, .nlink = 1,
						.dev = 1, .ino = 64, .has_btime = true,
						.mtime = {.sec = 1600000000, .nsec = 1234500}};
		r[i]->no_read = true;
		assert_non_null(r[i]->image = calloc(1, sizeof(*r[i]->image)));
		r[i]->image->state = states[i];
	}
	assert_non_null(r[1]->image->stream = strdup("zone"));
	r[0]->image->has_fn_times = true;
	r[0]->image->fn_time[0] = (struct fidx_time){.sec = -11644473600, .nsec = 100};
	r[0]->image->fn_time[1] = (struct fidx_time){.sec = 1600000000, .nsec = 700};
	r[0]->image->fn_time[2] = (struct fidx_time){.sec = 910692730085, .nsec = 477580700};
	r[0]->image->fn_time[3] = (struct fidx_time){.sec = 0, .nsec = 0};
	r[2]->image->no_time = 1u << 2; /* no ctime */
	r[0]->image->has_attributes = true; /* NTFS: $STANDARD_INFORMATION's flags */
	r[0]->image->attributes = 0x2 | 0x20;
	for (int i = 0; i < 3; i++)
		must_add(st, r[i]);
	uint8_t seal[FIDX_SEAL_LEN];
	struct fidx_scan_totals totals = {.finished_ns = FIXTURE_FINISHED_NS, .status = "complete",
					  .entries = 3, .files = 3};
	assert_int_equal(must_end_totals(st, scan, &totals, seal), 1);
	must_close(st);

	st = must_open(t->name, FIDX_STORE_READ, 0);
	const char *root = "/img";
	struct fidx_rows *it = rows_of(st, &scan, &root, FIDX_FILE_ALL);
	const struct fidx_row *row;
	int n = 0;
	while ((row = next_row(it))) {
		assert_true(n < 3);
		if (n == 2) { /* the unknown ctime is NULL, not the epoch */
			expect_none(row, FIDX_COL_CTIME);
			r[2]->meta.ctime = (struct fidx_time){0};
			expect_str(row, FIDX_COL_STATE, "deleted");
		} else {
			expect_row(row, r[n]);
		}
		n++;
	}
	fidx_rows_close(it);
	assert_int_equal(n, 3);
	struct fidx_seal_result res;
	MUST(fidx_store_verify(st, scan, NULL, NULL, &res, &err));
	assert_true(res.sealed);
	assert_int_equal(res.rows, 3);
	assert_memory_equal(res.recorded, res.computed, FIDX_SEAL_LEN);
	assert_memory_equal(seal, res.computed, FIDX_SEAL_LEN);
	must_close(st);
	for (int i = 0; i < 3; i++)
		fidx_record_free(r[i]);
}

/*
 * The attributes (schema 7) of a Windows walk's entries, with no other image
 * column: every bit of the word, none (0, not NULL), and a record without
 * them (NULL), through the iterator and by id; the scan's seal covers them
 * and verifies, and a changed word is a changed row.
 */
static void test_attributes(void **state)
{
	struct target *t = *state;
	struct fidx_store *st = must_open(t->name, FIDX_STORE_WRITE, 0);
	int64_t scan = must_begin(st, "/w");
	static const char *const paths[] = {"/w", "/w/hidden.txt", "/w/every", "/w/none",
					    "/w/unknown"};
	static const char types[] = "dfff";
	static const uint32_t words[] = {0x10, 0x2 | 0x20, UINT32_MAX, 0};
	struct fidx_record *r[5];
	for (int i = 0; i < 5; i++) {
		r[i] = make_rec(scan, paths[i], strlen(paths[i]), i < 4 ? types[i] : 'f');
		set_meta(r[i], i ? 0100644 : 040755, (uint64_t)i, true);
		if (i == 4)
			continue; /* a record no source gave attributes: NULL */
		assert_non_null(r[i]->image = calloc(1, sizeof(*r[i]->image)));
		r[i]->image->has_attributes = true;
		r[i]->image->attributes = words[i];
	}
	for (int i = 0; i < 5; i++)
		must_add(st, r[i]);
	uint8_t seal[FIDX_SEAL_LEN];
	struct fidx_scan_totals totals = {.finished_ns = FIXTURE_FINISHED_NS, .status = "complete",
					  .entries = 5, .files = 4, .dirs = 1};
	assert_int_equal(must_end_totals(st, scan, &totals, seal), 1);
	must_close(st);

	st = must_open(t->name, FIDX_STORE_READ, 0);
	const char *root = "/w";
	struct fidx_rows *it = rows_of(st, &scan, &root, FIDX_FILE_ALL);
	const struct fidx_row *row;
	int64_t ids[5];
	int n = 0;
	while ((row = next_row(it))) {
		assert_true(n < 5);
		ids[n] = fidx_row_int(row, FIDX_COL_ID);
		expect_row(row, r[n]);
		n++;
	}
	fidx_rows_close(it);
	assert_int_equal(n, 5);
	/* Each row again by its id, the attributes alone asked for. */
	struct fidx_rows_query q = {.scans = &scan, .roots = &root, .nscans = 1,
				    .columns = FIDX_COLUMN(FIDX_COL_ATTRIBUTES)};
	for (int i = 0; i < 5; i++) {
		assert_int_equal(fidx_store_row(st, &q, ids[i], &row, &err), 1);
		if (i < 4)
			assert_true((uint64_t)fidx_row_int(row, FIDX_COL_ATTRIBUTES) == words[i]);
		else
			expect_none(row, FIDX_COL_ATTRIBUTES);
	}
	struct fidx_seal_result res;
	MUST(fidx_store_verify(st, scan, NULL, NULL, &res, &err));
	assert_true(res.sealed);
	assert_int_equal(res.rows, 5);
	assert_int_equal(res.altered, 0);
	assert_memory_equal(res.recorded, res.computed, FIDX_SEAL_LEN);
	assert_memory_equal(seal, res.computed, FIDX_SEAL_LEN);
	must_close(st);
	for (int i = 0; i < 5; i++)
		fidx_record_free(r[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TARGET_TEST(test_roundtrip),
		TARGET_TEST(test_batches),
		TARGET_TEST(test_two_scans),
		TARGET_TEST(test_orders),
		TARGET_TEST(test_unused_removed),
		TARGET_TEST(test_image_rows),
		TARGET_TEST(test_attributes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
