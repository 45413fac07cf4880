/*
 * test_sqlite.c - the SQLite backend's own tests: what it makes of a store's
 * rows as a SQLite file (docs/SCHEMA.md), and the files it opens or refuses.
 *
 * Rows are written through the store API and read back with plain SQLite
 * calls, so that the check does not go through the code it checks.  Covered:
 * the file's header (user_version, application_id), the exact SQL layout of
 * every column of every row and of the scan row (storage classes, the *_ns
 * columns), the index built after the bulk load (one, however many scans),
 * the views file_view, data and metadata; refusals that leave the file as it
 * was: a newer schema (in the header or only in the WAL), a foreign schema in
 * the way of a migration, a text file, other applications' databases;
 * migration from schema version 1; an empty file made a database, a missing
 * folder and a directory named in one line; a database created and left
 * without a scan removed with its side files; a full disk (the file size
 * limit) failing a batch without harming what was committed.
 *
 * What every store must do with the same rows (each value read back through
 * store.h) is the conformance suite's: tests/store/test_store.c, whose
 * records and scan facts these tests write too (store/fixture.h).  Every
 * test works in its own temporary folder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dbfile.h"
#include "record.h"
#include "store.h"
#include "store/fixture.h"

/* The failure of the last store call a test makes itself. */
static struct fidx_error err;

/* Opens the store for writing expecting a refusal; returns the failure (message and code). */
static struct fidx_error open_refused(const char *db)
{
	struct fidx_error e = {0};
	struct fidx_store *st = fidx_store_open(db, FIDX_STORE_WRITE, NULL, &e);
	if (st) {
		fidx_store_close(st, NULL);
		fail_msg("'%s' was not refused", db);
	}
	assert_true(fidx_failed(&e));
	assert_int_not_equal(e.code, 0);
	assert_int_not_equal(e.msg[0], '\0');
	return e;
}

/*
 * Makes a fidx database at db that stays: a store that creates a database
 * and begins no scan in it removes it again when closed (store.h), so a
 * scan is begun in it.
 */
static void make_db(const char *db)
{
	struct fidx_store *st = must_open(db, FIDX_STORE_WRITE, 0);
	must_begin(st, "/made");
	must_close(st);
}

/* Opens the database with SQLite itself, bypassing the store. */
static sqlite3 *open_sqlite(const char *db)
{
	sqlite3 *h;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
		fail_msg("sqlite3_open_v2 '%s': %s", db, sqlite3_errmsg(h));
	return h;
}

/* Prepares sql or fails the test. */
static sqlite3_stmt *prepare(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("prepare '%s': %s", sql, sqlite3_errmsg(h));
	return s;
}

/* Runs a query of one integer. */
static int64_t query_int(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *s = prepare(h, sql);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* Runs SQL without results, or fails the test. */
static void exec_sql(sqlite3 *h, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(h, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("'%s': %s", sql, err);
}

static void expect_null(sqlite3_stmt *s, int col)
{
	assert_int_equal(sqlite3_column_type(s, col), SQLITE_NULL);
}

static void expect_int(sqlite3_stmt *s, int col, int64_t v)
{
	assert_int_equal(sqlite3_column_type(s, col), SQLITE_INTEGER);
	assert_true(sqlite3_column_int64(s, col) == v);
}

/* The column is TEXT holding exactly len bytes at p. */
static void expect_text(sqlite3_stmt *s, int col, const void *p, size_t len)
{
	assert_int_equal(sqlite3_column_type(s, col), SQLITE_TEXT);
	const void *got = sqlite3_column_blob(s, col);
	assert_int_equal(sqlite3_column_bytes(s, col), len);
	if (len)
		assert_memory_equal(got, p, len);
}

/* The column is TEXT equal to the string str, or NULL when str is. */
static void expect_str(sqlite3_stmt *s, int col, const char *str)
{
	if (!str)
		expect_null(s, col);
	else
		expect_text(s, col, str, strlen(str));
}

static void expect_blob(sqlite3_stmt *s, int col, const void *p, size_t len)
{
	assert_int_equal(sqlite3_column_type(s, col), SQLITE_BLOB);
	assert_int_equal(sqlite3_column_bytes(s, col), len);
	assert_memory_equal(sqlite3_column_blob(s, col), p, len);
}

/* Checks every column of file row id against the record it came from. */
static void check_file_row(sqlite3 *h, int64_t id, const struct fidx_record *r)
{
	sqlite3_stmt *s = prepare(h,
		"SELECT scan_id, path, name, ext, type, size, blocks, mode, uid, gid, nlink,"
		" dev, ino, atime_ns, mtime_ns, ctime_ns, btime_ns, link_target,"
		" md5, sha1, sha256, sha512, xxh128, error FROM file WHERE id = ?");
	const struct fidx_meta *m = &r->meta;

	sqlite3_bind_int64(s, 1, id);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	expect_int(s, 0, r->scan_id);
	expect_text(s, 1, r->path, r->path_len);
	expect_text(s, 2, r->path + r->name_off, r->path_len - r->name_off);
	expect_text(s, 3, r->path + r->ext_off, r->path_len - r->ext_off);
	if (r->type)
		expect_text(s, 4, &r->type, 1);
	else
		expect_null(s, 4);
	if (r->has_meta) {
		expect_int(s, 5, (int64_t)m->size);
		expect_int(s, 6, (int64_t)m->blocks);
		expect_int(s, 7, m->mode);
		expect_int(s, 8, m->uid);
		expect_int(s, 9, m->gid);
		expect_int(s, 10, (int64_t)m->nlink);
		expect_int(s, 11, (int64_t)m->dev);
		expect_int(s, 12, (int64_t)m->ino);
		int64_t ns = 0;
		assert_true(fidx_time_to_ns(m->atime, &ns));
		expect_int(s, 13, ns);
		assert_true(fidx_time_to_ns(m->mtime, &ns));
		expect_int(s, 14, ns);
		assert_true(fidx_time_to_ns(m->ctime, &ns));
		expect_int(s, 15, ns);
		if (m->has_btime && fidx_time_to_ns(m->btime, &ns))
			expect_int(s, 16, ns);
		else
			expect_null(s, 16);
	} else {
		for (int col = 5; col <= 16; col++)
			expect_null(s, col);
	}
	if (r->link_target)
		expect_text(s, 17, r->link_target, r->link_len);
	else
		expect_null(s, 17);
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		if (r->digest_mask & (1u << d))
			expect_blob(s, 18 + d, r->digest[d], fidx_digest_len(d));
		else
			expect_null(s, 18 + d);
	}
	expect_str(s, 23, r->error);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
}

/* Reads a whole file (at most 1 MiB); *len receives its size. */
static char *slurp(const char *path, size_t *len)
{
	char *buf = malloc(1 << 20);
	int fd = open(path, O_RDONLY);
	assert_non_null(buf);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, 1 << 20);
	assert_true(n >= 0);
	close(fd);
	*len = (size_t)n;
	return buf;
}

/* Asserts that path has the given content and that SQLite left no side files. */
static void assert_unchanged(const char *path, const char *before, size_t len)
{
	const char *side[] = {"-wal", "-shm", "-journal"};
	size_t n;
	char *now = slurp(path, &n);
	assert_int_equal(n, len);
	assert_memory_equal(now, before, len);
	free(now);
	for (size_t i = 0; i < sizeof(side) / sizeof(side[0]); i++) {
		char p[256];
		snprintf(p, sizeof(p), "%s%s", path, side[i]);
		assert_int_equal(access(p, F_OK), -1);
	}
}

/*
 * A new database as SQLite holds it: its header, the index, every column of
 * every kind of record in its storage class (TEXT, BLOB, INTEGER, the *_ns
 * columns), the ids SQLite gave (from 1), and the scan row.
 */
static void test_layout(void **state)
{
	struct fixture *f = *state;
	static const char weird[] = FIXTURE_WEIRD_PATH;
	static const char target[] = FIXTURE_LINK_TARGET;
	struct fidx_record *r[5];

	struct fidx_store *st = must_open(f->db, FIDX_STORE_WRITE, 2);
	int64_t scan = must_begin(st, "/r");
	assert_int_equal(scan, 1);

	five_kinds(scan, r);
	for (int i = 0; i < 5; i++)
		must_add(st, r[i]);
	must_end_complete(st, scan, 5);
	must_build_indexes(st);
	must_close(st);

	sqlite3 *h = open_sqlite(f->db);
	assert_int_equal(query_int(h, "PRAGMA user_version"), FIDX_SCHEMA_VERSION);
	assert_int_equal(query_int(h, "PRAGMA application_id"), 0x66696478);
	assert_int_equal(query_int(h, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
				      " AND name = 'file_scan_path'"), 1);
	assert_int_equal(query_int(h, "SELECT count(*) FROM file"), 5);
	for (int i = 0; i < 5; i++)
		check_file_row(h, i + 1, r[i]);

	/* The literal bytes, and the way docs/SCHEMA.md says to get them. */
	sqlite3_stmt *s = prepare(h, "SELECT name, ext, CAST(path AS BLOB), typeof(path)"
				     " FROM file WHERE id = 2");
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	expect_text(s, 0, "a\xff\nb.tar.gz", 11);
	expect_str(s, 1, "gz");
	expect_blob(s, 2, weird, sizeof(weird) - 1);
	expect_str(s, 3, "text");
	sqlite3_finalize(s);
	s = prepare(h, "SELECT ext, link_target, error FROM file WHERE id IN (3, 4) ORDER BY id");
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	expect_str(s, 0, "");
	expect_text(s, 1, target, sizeof(target) - 1);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	expect_str(s, 2, "lstat: Permission denied");
	sqlite3_finalize(s);

	s = prepare(h, "SELECT id, root, host, os, kernel, arch, version, options, started_ns,"
		       " finished_ns, status, entries, files, dirs, bytes, errors FROM scan");
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	expect_int(s, 0, 1);
	expect_str(s, 1, "/r");
	expect_str(s, 2, "testhost");
	expect_str(s, 3, "Debian GNU/Linux 12 (bookworm)");
	expect_str(s, 4, "6.1.0");
	expect_str(s, 5, "x86_64");
	expect_str(s, 6, "0.1.0");
	expect_str(s, 7, "{\"hash\":[\"sha256\"]}");
	expect_int(s, 8, 1700000000000000000);
	expect_int(s, 9, 1700000001000000000);
	expect_str(s, 10, "complete");
	expect_int(s, 11, 5);
	expect_int(s, 12, 2);
	expect_int(s, 13, 1);
	expect_int(s, 14, 4096);
	expect_int(s, 15, 2);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
	assert_int_equal(sqlite3_close(h), SQLITE_OK);
	for (int i = 0; i < 5; i++)
		fidx_record_free(r[i]);
}

/*
 * Two scans into one database, by two stores: ids 1 and 2, separate rows,
 * and one index however many times it is built.
 */
static void test_two_scans(void **state)
{
	struct fixture *f = *state;

	for (int n = 1; n <= 2; n++) {
		struct fidx_store *st = must_open(f->db, FIDX_STORE_WRITE, 0);
		int64_t scan = must_begin(st, n == 1 ? "/one" : "/two");
		assert_int_equal(scan, n);
		for (int i = 0; i < 2 + n; i++) {
			char path[32];
			snprintf(path, sizeof(path), "/%s/f%d", n == 1 ? "one" : "two", i);
			struct fidx_record *r = make_rec(scan, path, strlen(path), 'f');
			must_add(st, r);
			fidx_record_free(r);
		}
		must_end_complete(st, scan, 2 + n);
		must_build_indexes(st);
		must_close(st);
	}
	sqlite3 *h = open_sqlite(f->db);
	assert_int_equal(query_int(h, "SELECT count(*) FROM file WHERE scan_id = 1"
				      " AND path LIKE '/one/%'"), 3);
	assert_int_equal(query_int(h, "SELECT count(*) FROM file WHERE scan_id = 2"
				      " AND path LIKE '/two/%'"), 4);
	assert_int_equal(query_int(h, "SELECT count(*) FROM scan WHERE status = 'complete'"), 2);
	/* scan_uuid (schema 5) and file_scan_path (after the load). */
	assert_int_equal(query_int(h, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"),
			 2);
	assert_int_equal(sqlite3_close(h), SQLITE_OK);
}

/* The views, on records whose strings are known. */
static void test_views(void **state)
{
	static const struct {
		uint32_t mode;
		const char *perms;
	} modes[] = {
		{S_IFREG | 0755, "-rwxr-xr-x"},  {S_IFREG | 04755, "-rwsr-xr-x"},
		{S_IFREG | 06644, "-rwSr-Sr--"}, {S_IFREG | 02755, "-rwxr-sr-x"},
		{S_IFDIR | 01777, "drwxrwxrwt"}, {S_IFDIR | 01776, "drwxrwxrwT"},
		{S_IFLNK | 0777, "lrwxrwxrwx"},  {S_IFIFO | 0644, "prw-r--r--"},
		{S_IFSOCK | 0755, "srwxr-xr-x"}, {S_IFCHR | 0620, "crw--w----"},
		{S_IFBLK | 0660, "brw-rw----"},  {S_IFREG | 0, "----------"},
	};
	static const uint8_t md5_empty[16] = {0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04,
					      0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e};
	const size_t nmodes = sizeof(modes) / sizeof(modes[0]);
	struct fixture *f = *state;
	struct fidx_store *st = must_open(f->db, FIDX_STORE_WRITE, 0);
	int64_t scan = must_begin(st, "/v");

	/* Row 1: a file with known times, device and MD5. */
	struct fidx_record *r = make_rec(scan, "/v/run.sh", 9, 'f');
	set_meta(r, S_IFREG | 0755, 0, true);
	r->meta.size = 42;
	r->meta.dev = makedev(259, 65537);
	r->meta.atime = fidx_time_of_ns(0);
	r->meta.mtime = fidx_time_of_ns(1700000000123456789);
	r->meta.ctime = fidx_time_of_ns(1);
	r->meta.btime = fidx_time_of_ns(-1);
	memcpy(r->digest[FIDX_MD5], md5_empty, 16);
	r->digest_mask = 1u << FIDX_MD5;
	must_add(st, r);
	fidx_record_free(r);
	/* Row 2: no metadata at all. */
	r = make_rec(scan, "/v/gone", 7, 0);
	must_add(st, r);
	fidx_record_free(r);
	/* Rows 3..: one per mode. */
	for (size_t i = 0; i < nmodes; i++) {
		r = make_rec(scan, "/v/m", 4, fidx_type_of_mode(modes[i].mode));
		set_meta(r, modes[i].mode, i, false);
		must_add(st, r);
		fidx_record_free(r);
	}
	/* Names whose extension GDBack's Go (filepath.Ext) writes with its dot, and a
	 * file of July 2400, beyond the *_ns columns, in summer time. */
	static const struct { const char *name, *ext; } names[] = {
		{"/v/.bashrc", ".bashrc"}, {"/v/dot.", "."}, {"/v/a.tar.gz", ".gz"},
		{"/v/..x", ".x"}, {"/v/README", ""},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		r = make_rec(scan, names[i].name, strlen(names[i].name), 'f');
		set_meta(r, S_IFREG | 0644, 50 + i, false);
		if (i == 0)
			r->meta.mtime = (struct fidx_time){.sec = 13581950400LL, .nsec = 5};
		must_add(st, r);
		fidx_record_free(r);
	}
	/* The dates of data are in the scanning host's zone: central Europe, by rule. */
	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	tzset();
	must_end_complete(st, scan, 2 + nmodes + 5);
	must_close(st);

	sqlite3 *h = open_sqlite(f->db);
	sqlite3_stmt *s = prepare(h,
		"SELECT type, permissions, mode, device, atime, mtime, ctime, btime, md5, sha256,"
		" size FROM file_view WHERE id = 1");
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	expect_str(s, 0, "file");
	expect_str(s, 1, "-rwxr-xr-x");
	expect_str(s, 2, "100755");
	expect_str(s, 3, "259:65537");
	expect_str(s, 4, "1970-01-01T00:00:00.000000000Z");
	expect_str(s, 5, "2023-11-14T22:13:20.123456789Z");
	expect_str(s, 6, "1970-01-01T00:00:00.000000001Z");
	expect_str(s, 7, "1969-12-31T23:59:59.999999999Z");
	expect_str(s, 8, "d41d8cd98f00b204e9800998ecf8427e");
	expect_null(s, 9);
	expect_int(s, 10, 42);
	sqlite3_finalize(s);

	s = prepare(h, "SELECT type, permissions, mode, device, atime, btime, md5 FROM file_view"
		       " WHERE id = 2");
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	for (int col = 0; col < 7; col++)
		expect_null(s, col);
	sqlite3_finalize(s);

	s = prepare(h, "SELECT permissions, type FROM file_view WHERE id >= 3 ORDER BY id");
	for (size_t i = 0; i < nmodes; i++) {
		assert_int_equal(sqlite3_step(s), SQLITE_ROW);
		expect_str(s, 0, modes[i].perms);
		assert_non_null(sqlite3_column_text(s, 1));
	}
	sqlite3_finalize(s);
	s = prepare(h, "SELECT group_concat(type, ',') FROM (SELECT DISTINCT type FROM file_view"
		       " WHERE id >= 3 ORDER BY type)");
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	expect_str(s, 0, "block device,char device,directory,fifo,file,socket,symlink");
	sqlite3_finalize(s);

	/* file_view: a time beyond 2262. */
	s = prepare(h, "SELECT mtime FROM file_view WHERE path = '/v/.bashrc'");
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	expect_str(s, 0, "2400-05-24T12:00:00.000000005Z");
	sqlite3_finalize(s);

	/* data: every entry but directories, in the Go tool's column names and forms. */
	assert_int_equal(query_int(h, "SELECT count(*) FROM data"), 2 + nmodes - 2 + 5);
	assert_int_equal(query_int(h, "SELECT count(*) FROM data d JOIN file f ON f.id = d.id"
				      " WHERE f.type = 'd'"), 0);
	s = prepare(h, "SELECT id, full_path, file_name, file_extension, hash_md5, size_bytes,"
		       " date_creation, date_last_modification FROM data ORDER BY id LIMIT 2");
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	expect_int(s, 0, 1);
	expect_str(s, 1, "/v/run.sh");
	expect_str(s, 2, "run.sh");
	expect_str(s, 3, ".sh");
	expect_str(s, 4, "d41d8cd98f00b204e9800998ecf8427e");
	expect_int(s, 5, 42);
	expect_str(s, 6, "1970-01-01 00:59:59");     /* -1 ns UTC, in winter time */
	expect_str(s, 7, "2023-11-14 23:13:20");     /* 22:13:20.123456789Z */
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	expect_int(s, 0, 2);                         /* an entry of unknown type */
	expect_null(s, 4);
	expect_null(s, 6);
	sqlite3_finalize(s);
	s = prepare(h, "SELECT file_extension, date_last_modification FROM data"
		       " WHERE full_path = ?");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		sqlite3_bind_text(s, 1, names[i].name, -1, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(s), SQLITE_ROW);
		expect_str(s, 0, names[i].ext);
		if (i == 0)
			expect_str(s, 1, "2400-05-24 14:00:00"); /* 12:00Z, summer time */
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);

	/* metadata: GDBack's table, one row per scan data shows. */
	s = prepare(h, "SELECT id, signature_md5, challenge, so, architecture, date_db_creation"
		       " FROM metadata");
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	expect_int(s, 0, scan);
	expect_null(s, 1);
	expect_null(s, 2);
	expect_str(s, 3, "linux");
	expect_str(s, 4, "amd64");
	expect_str(s, 5, "2023-11-14 23:13:20");     /* started 22:13:20Z */
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
	assert_int_equal(sqlite3_close(h), SQLITE_OK);
	unsetenv("TZ");
	tzset();
}

/*
 * A fidx database of a newer schema is refused (EPROTONOSUPPORT) and left as
 * it was, also when the version is newer only in the WAL.
 */
static void test_newer_version(void **state)
{
	struct fixture *f = *state;
	size_t len;
	char expect[256];

	make_db(f->db);
	sqlite3 *h = open_sqlite(f->db);
	exec_sql(h, "PRAGMA user_version = 99");
	assert_int_equal(sqlite3_close(h), SQLITE_OK);

	char *before = slurp(f->db, &len);
	struct fidx_error e = open_refused(f->db);
	snprintf(expect, sizeof(expect), "database '%s' has schema version 99; this fidx knows %d",
		 f->db, FIDX_SCHEMA_VERSION);
	assert_string_equal(e.msg, expect);
	assert_int_equal(e.code, EPROTONOSUPPORT);
	assert_unchanged(f->db, before, len);

	/* The same when the version is newer only in the WAL, not in the header. */
	h = open_sqlite(f->db);
	exec_sql(h, "PRAGMA journal_mode = DELETE; PRAGMA user_version = 1;"
		    " PRAGMA journal_mode = WAL");
	/* (version 1 here only so the header is not the newer one; never opened as such) */
	sqlite3 *h2 = open_sqlite(f->db);
	exec_sql(h2, "PRAGMA wal_autocheckpoint = 0; PRAGMA user_version = 99");
	assert_int_equal(sqlite3_close(h), SQLITE_OK);
	free(before);
	before = slurp(f->db, &len);
	e = open_refused(f->db);
	snprintf(expect, sizeof(expect), "database '%s' has schema version 99; this fidx knows %d",
		 f->db, FIDX_SCHEMA_VERSION);
	assert_string_equal(e.msg, expect);
	assert_int_equal(e.code, EPROTONOSUPPORT);
	size_t n;
	char *now = slurp(f->db, &n);
	assert_int_equal(n, len);
	assert_memory_equal(now, before, len);
	assert_int_equal(sqlite3_close(h2), SQLITE_OK);
	free(now);
	free(before);
}

/* The tables and indexes of schema version 1, the base every migration adds to. */
#define V1_OBJECTS "('scan', 'file', 'file_scan_path')"

/*
 * Turns the fidx database at db back into a version 1 database: drops what
 * later versions added, sets user_version 1.  The views go too (version 1's
 * file_view and data, which version 4 makes anew, and those of later
 * versions): they name columns and tables that are dropped.  Returns the
 * number of objects dropped, for a check that there were some.
 */
static int make_version_1(const char *db)
{
	sqlite3 *h = open_sqlite(db);
	int dropped = 0;
	/* Virtual tables first: dropping one drops its shadow tables. */
	const char *kinds[] = {"table' AND sql LIKE 'CREATE VIRTUAL%", "view", "index", "table"};
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (;;) {
			char sql[512], name[256];
			snprintf(sql, sizeof(sql), "SELECT name FROM sqlite_master WHERE type = '%s'"
				 " AND name NOT IN " V1_OBJECTS " AND name NOT LIKE 'sqlite_%%'"
				 " LIMIT 1", kinds[k]);
			sqlite3_stmt *s = prepare(h, sql);
			if (sqlite3_step(s) != SQLITE_ROW) {
				sqlite3_finalize(s);
				break;
			}
			snprintf(name, sizeof(name), "%s", (const char *)sqlite3_column_text(s, 0));
			sqlite3_finalize(s);
			snprintf(sql, sizeof(sql), "DROP %s \"%s\"",
				 k == 0 ? "TABLE" : kinds[k], name);
			exec_sql(h, sql);
			dropped++;
		}
	}
	/* Columns later versions added (version 1: 16 in scan, 25 in file). */
	const char *const tables[][2] = {{"scan", "16"}, {"file", "25"}};
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		for (;;) {
			char sql[512], name[256];
			snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info('%s')"
				 " WHERE cid >= %s ORDER BY cid DESC LIMIT 1", tables[t][0], tables[t][1]);
			sqlite3_stmt *s = prepare(h, sql);
			if (sqlite3_step(s) != SQLITE_ROW) {
				sqlite3_finalize(s);
				break;
			}
			snprintf(name, sizeof(name), "%s", (const char *)sqlite3_column_text(s, 0));
			sqlite3_finalize(s);
			snprintf(sql, sizeof(sql), "ALTER TABLE %s DROP COLUMN \"%s\"", tables[t][0], name);
			exec_sql(h, sql);
			dropped++;
		}
	}
	exec_sql(h, "PRAGMA user_version = 1");
	assert_int_equal(sqlite3_close(h), SQLITE_OK);
	return dropped;
}

/* Returns the schema's SQL text, sorted, as one malloc'ed string. */
static char *schema_text(const char *db)
{
	sqlite3 *h = open_sqlite(db);
	sqlite3_stmt *s = prepare(h, "SELECT group_concat(sql, ';') FROM"
				     " (SELECT sql FROM sqlite_master ORDER BY name)");
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	char *text = strdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	assert_int_equal(sqlite3_close(h), SQLITE_OK);
	return text;
}

/*
 * A version 1 database is migrated when opened for writing: it ends with the
 * same schema as a new one and keeps its rows; one with a table of its own
 * in the way is refused (EPERM) and left at version 1, as it was.
 */
static void test_migration(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = must_open(f->db, FIDX_STORE_WRITE, 0);
	int64_t scan = must_begin(st, "/r");
	struct fidx_record *r = make_rec(scan, "/r", 2, 'd');
	must_add(st, r);
	must_end_complete(st, scan, 1);
	must_build_indexes(st);
	must_close(st);
	char *fresh = schema_text(f->db);

	assert_true(make_version_1(f->db) > 0);
	st = must_open(f->db, FIDX_STORE_WRITE, 0);
	must_close(st);
	char *migrated = schema_text(f->db);
	assert_string_equal(migrated, fresh);
	sqlite3 *h = open_sqlite(f->db);
	assert_int_equal(query_int(h, "PRAGMA user_version"), FIDX_SCHEMA_VERSION);
	assert_int_equal(query_int(h, "SELECT count(*) FROM file WHERE path = '/r'"), 1);

	/* From version 6 (fidx before the attributes), the one step: the same schema again. */
	exec_sql(h, "ALTER TABLE file DROP COLUMN attributes; PRAGMA user_version = 6");
	assert_int_equal(sqlite3_close(h), SQLITE_OK);
	must_close(must_open(f->db, FIDX_STORE_WRITE, 0));
	free(migrated);
	migrated = schema_text(f->db);
	assert_string_equal(migrated, fresh);
	h = open_sqlite(f->db);
	assert_int_equal(query_int(h, "PRAGMA user_version"), FIDX_SCHEMA_VERSION);
	assert_int_equal(query_int(h, "SELECT count(*) FROM file WHERE attributes IS NULL"), 1);
	assert_int_equal(sqlite3_close(h), SQLITE_OK);

	/*
	 * A table in the way of the migration: not fidx's, so refused before
	 * anything is written (the file still version 1, byte for byte).
	 */
	make_version_1(f->db);
	h = open_sqlite(f->db);
	exec_sql(h, "CREATE TABLE file_digest (x)");
	exec_sql(h, "PRAGMA journal_mode = DELETE");
	assert_int_equal(sqlite3_close(h), SQLITE_OK);
	size_t len;
	char *before = slurp(f->db, &len);
	struct fidx_error e = open_refused(f->db);
	assert_non_null(strstr(e.msg, "holds schema objects fidx did not create (table 'file_digest');"
				 " refusing to write to it"));
	assert_int_equal(e.code, EPERM);
	assert_unchanged(f->db, before, len);
	h = open_sqlite(f->db);
	assert_int_equal(query_int(h, "PRAGMA user_version"), 1);
	assert_int_equal(sqlite3_close(h), SQLITE_OK);
	free(before);
	free(fresh);
	free(migrated);
	fidx_record_free(r);
}

/* A text file, and SQLite files of other applications, are refused (EMEDIUMTYPE) untouched. */
static void test_foreign_files(void **state)
{
	static const char text[] = "hello, this is not a database\n";
	struct fixture *f = *state;
	char expect[256];
	size_t len;

	snprintf(expect, sizeof(expect), "'%s' is not a fidx database", f->db);
	int fd = open(f->db, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), sizeof(text) - 1);
	close(fd);
	struct fidx_error e = open_refused(f->db);
	assert_string_equal(e.msg, expect);
	assert_int_equal(e.code, EMEDIUMTYPE);
	assert_unchanged(f->db, text, sizeof(text) - 1);

	const char *setups[] = {
		"CREATE TABLE file (path TEXT); INSERT INTO file VALUES ('x')",
		"PRAGMA application_id = 42; CREATE TABLE t (x)",
		"PRAGMA user_version = 1",
	};
	for (size_t i = 0; i < sizeof(setups) / sizeof(setups[0]); i++) {
		unlink(f->db);
		sqlite3 *h = open_sqlite(f->db);
		exec_sql(h, setups[i]);
		assert_int_equal(sqlite3_close(h), SQLITE_OK);
		char *before = slurp(f->db, &len);
		e = open_refused(f->db);
		assert_string_equal(e.msg, expect);
		assert_int_equal(e.code, EMEDIUMTYPE);
		assert_unchanged(f->db, before, len);
		free(before);
	}
}

/*
 * An empty file becomes a database (and stays one: the store did not create
 * the file, so closing it without a scan does not remove it); a missing
 * folder, and a directory, are a clear error.
 */
static void test_empty_and_missing(void **state)
{
	struct fixture *f = *state;
	char path[256], expect[512];

	int fd = open(f->db, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	close(fd);
	must_close(must_open(f->db, FIDX_STORE_WRITE, 0));
	sqlite3 *h = open_sqlite(f->db);
	assert_int_equal(query_int(h, "PRAGMA user_version"), FIDX_SCHEMA_VERSION);
	assert_int_equal(query_int(h, "SELECT count(*) FROM sqlite_master WHERE name = 'data'"),
			 1);
	assert_int_equal(sqlite3_close(h), SQLITE_OK);

	snprintf(path, sizeof(path), "%s/no/such.db", f->dir);
	struct fidx_error e = open_refused(path);
	snprintf(expect, sizeof(expect), "cannot create database '%s': No such file or directory",
		 path);
	assert_string_equal(e.msg, expect);
	assert_int_equal(e.code, ENOENT);
	e = open_refused(f->dir);
	snprintf(expect, sizeof(expect), "cannot open database '%s': Is a directory", f->dir);
	assert_string_equal(e.msg, expect);
	assert_int_equal(e.code, EISDIR);
}

/*
 * A database the store creates and begins no scan in is removed when the
 * store is closed, with every file SQLite kept beside it: the folder is left
 * empty.  One that a scan was begun in stays, as a fidx database.
 */
static void test_unused_leaves_nothing(void **state)
{
	static const char *const side[] = {"", "-wal", "-shm", "-journal"};
	struct fixture *f = *state;
	char p[256];

	must_close(must_open(f->db, FIDX_STORE_WRITE, 0));
	for (size_t i = 0; i < sizeof(side) / sizeof(side[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", f->db, side[i]);
		assert_int_equal(access(p, F_OK), -1);
	}
	assert_int_equal(rmdir(f->dir), 0);  /* empty */
	assert_int_equal(mkdir(f->dir, 0700), 0);

	make_db(f->db);
	uint32_t version = 0;
	assert_int_equal(fidx_dbfile_probe(f->db, &version), FIDX_DBFILE_FIDX);
	assert_int_equal(version, FIDX_SCHEMA_VERSION);
	sqlite3 *h = open_sqlite(f->db);
	assert_int_equal(query_int(h, "SELECT count(*) FROM scan WHERE root = '/made'"), 1);
	assert_int_equal(sqlite3_close(h), SQLITE_OK);
}

/*
 * A write that fails (here: the file size limit, as a full disk would) is
 * reported in one line, its batch is rolled back, and the earlier scan and
 * the database stay intact.
 */
static void test_write_failure(void **state)
{
	struct fixture *f = *state;
	struct fidx_store *st = must_open(f->db, FIDX_STORE_WRITE, 1000);
	char wal[256], prefix[256];
	struct rlimit old, lim;
	struct stat sb;
	int64_t scan = must_begin(st, "/a");
	char *target = malloc(4000);

	assert_non_null(target);
	memset(target, 'x', 3999);
	target[3999] = '\0';
	for (int i = 0; i < 100; i++) {
		struct fidx_record *r = make_rec(scan, "/a/f", 4, 'f');
		must_add(st, r);
		fidx_record_free(r);
	}
	must_end_complete(st, scan, 100);

	snprintf(wal, sizeof(wal), "%s-wal", f->db);
	off_t limit = 0;
	if (stat(f->db, &sb) == 0)
		limit = sb.st_size;
	if (stat(wal, &sb) == 0 && sb.st_size > limit)
		limit = sb.st_size;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)limit + 65536;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

	scan = must_begin(st, "/b");
	int rc = 0;
	for (int i = 0; i < 5000 && rc == 0; i++) {
		struct fidx_record *r = make_rec(scan, "/b/l", 4, 'l');
		r->link_target = target;
		r->link_len = 3999;
		rc = fidx_store_add(st, r, &err);
		r->link_target = NULL;
		fidx_record_free(r);
	}
	assert_int_equal(rc, -1);
	snprintf(prefix, sizeof(prefix), "cannot write database '%s': ", f->db);
	assert_memory_equal(err.msg, prefix, strlen(prefix));
	assert_null(strchr(err.msg, '\n'));
	assert_int_not_equal(err.code, 0);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	fidx_store_close(st, NULL);
	free(target);

	sqlite3 *h = open_sqlite(f->db);
	sqlite3_stmt *s = prepare(h, "PRAGMA integrity_check");
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	expect_str(s, 0, "ok");
	sqlite3_finalize(s);
	assert_int_equal(query_int(h, "SELECT count(*) FROM file WHERE scan_id = 1"), 100);
	assert_int_equal(query_int(h, "SELECT count(*) FROM file WHERE scan_id = 2"), 0);
	assert_int_equal(query_int(h, "SELECT count(*) FROM scan WHERE status = 'complete'"), 1);
	assert_int_equal(sqlite3_close(h), SQLITE_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		FIXTURE_TEST(test_layout),
		FIXTURE_TEST(test_two_scans),
		FIXTURE_TEST(test_views),
		FIXTURE_TEST(test_newer_version),
		FIXTURE_TEST(test_migration),
		FIXTURE_TEST(test_foreign_files),
		FIXTURE_TEST(test_empty_and_missing),
		FIXTURE_TEST(test_unused_leaves_nothing),
		FIXTURE_TEST(test_write_failure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
