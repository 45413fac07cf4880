/*
 * fixture.h - the scaffolding of the unit tests that write through the store
 * API (store.h): a temporary folder per test, the store calls that fail the
 * test when they fail, the conformance suite's targets, and the records and
 * scans that more than one of these tests writes.
 *
 * Included as "store/fixture.h" (every unit test is built with -Itests) by
 * the store conformance suite (tests/store/), the SQLite backend's tests
 * (tests/store/sqlite/) and the core's tests that make their rows through
 * the store (tests/core/: diff, dupes, reuse, scan).  It knows the store
 * through store.h and the core's headers alone, so the conformance suite
 * that includes it still knows no backend.  Everything here is static
 * inline: a test takes what it needs, and what it leaves draws no warning.
 *
 * A helper that fails fails the running test with fail_msg() and the store's
 * message (in a cmocka setup, the setup).  The cmocka setups return -1 and
 * say why on stderr instead, so that they leave nothing behind.
 */
#ifndef FIDX_TESTS_STORE_FIXTURE_H
#define FIDX_TESTS_STORE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "record.h"
#include "store.h"

/* ---------------------------------------------------------- the folder --- */

#define FIXTURE_DIR_MAX 128   /* a temporary folder's path, with its NUL */
#define FIXTURE_PATH_MAX 160  /* a path in it (the longest name below fits) */
#define FIXTURE_DB_NAME "test.db"

/* Makes a new folder $TMPDIR/fidx-PROGRAM.XXXXXX (/tmp without TMPDIR) in dir; 0, or -1 said. */
static inline int tmpdir_make(char dir[FIXTURE_DIR_MAX])
{
	const char *tmp = getenv("TMPDIR");
	int n = snprintf(dir, FIXTURE_DIR_MAX, "%s/fidx-%s.XXXXXX", tmp && *tmp ? tmp : "/tmp",
			 program_invocation_short_name);
	if (n < 0 || n >= FIXTURE_DIR_MAX) {
		print_error("no temporary folder: TMPDIR '%s' is too long\n", tmp ? tmp : "");
		return -1;
	}
	if (!mkdtemp(dir)) {
		print_error("cannot make '%s': %s\n", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* nftw()'s callback for tmpdir_remove(): removes one entry (a folder once emptied). */
static inline int tmpdir_remove_entry(const char *path, const struct stat *sb, int flag,
				      struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Removes dir and all it holds, following no link; 0 (also when dir is gone already), or -1. */
static inline int tmpdir_remove(const char *dir)
{
	if (access(dir, F_OK) != 0 && errno == ENOENT)
		return 0;
	return nftw(dir, tmpdir_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* One test's temporary folder and the paths it names there (none made but the folder). */
struct fixture {
	char dir[FIXTURE_DIR_MAX];    /* the folder, tmpdir_make()'s */
	char db[FIXTURE_PATH_MAX];    /* dir/test.db: the test's database */
	char old[FIXTURE_PATH_MAX];   /* dir/old.db: the OLD side's database of a comparison */
	char new[FIXTURE_PATH_MAX];   /* dir/new.db: the NEW side's */
	char tree[FIXTURE_PATH_MAX];  /* dir/tree: a tree the test makes, to scan */
	struct fidx_store *st;        /* fixture_setup_store(): db open for writing; else NULL */
};

/* Makes f's folder and names its paths; 0, or -1 said. */
static inline int fixture_make(struct fixture *f)
{
	if (tmpdir_make(f->dir) < 0)
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/" FIXTURE_DB_NAME, f->dir);
	snprintf(f->old, sizeof(f->old), "%s/old.db", f->dir);
	snprintf(f->new, sizeof(f->new), "%s/new.db", f->dir);
	snprintf(f->tree, sizeof(f->tree), "%s/tree", f->dir);
	f->st = NULL;
	return 0;
}

/* cmocka setup: a new struct fixture, its folder made, in *state; 0, or -1 said. */
static inline int fixture_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f || fixture_make(f) < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

/* cmocka setup: fixture_setup(), and f->db opened for writing into f->st; 0, or -1 said. */
static inline int fixture_setup_store(void **state)
{
	struct fidx_error err;
	if (fixture_setup(state) < 0)
		return -1;
	struct fixture *f = *state;
	if (!(f->st = fidx_store_open(f->db, FIDX_STORE_WRITE, NULL, &err))) {
		print_error("fidx_store_open '%s': %s\n", f->db, err.msg);
		tmpdir_remove(f->dir);
		free(f);
		return -1;
	}
	return 0;
}

/* cmocka teardown: closes f->st when open, removes the folder, frees f; 0, or -1 said. */
static inline int fixture_teardown(void **state)
{
	struct fixture *f = *state;
	struct fidx_error err;
	int ret = 0;
	if (f->st && fidx_store_close(f->st, &err) < 0) {
		print_error("fidx_store_close: %s\n", err.msg);
		ret = -1;
	}
	if (tmpdir_remove(f->dir) < 0) {
		print_error("cannot remove '%s': %s\n", f->dir, strerror(errno));
		ret = -1;
	}
	free(f);
	return ret;
}

/* A cmocka test of test in a fixture of its own (fixture_setup(), fixture_teardown()). */
#define FIXTURE_TEST(test) cmocka_unit_test_setup_teardown(test, fixture_setup, fixture_teardown)

/* A cmocka test of test in a fixture with its database open (fixture_setup_store()). */
#define FIXTURE_STORE_TEST(test)                                                                \
	cmocka_unit_test_setup_teardown(test, fixture_setup_store, fixture_teardown)

/* ---------------------------------------------- the conformance targets --- */

/*
 * The store under test in the conformance suite (tests/store/).  A target is
 * what fidx_store_open() is given: each test gets a fresh one, where no
 * database is yet, from target_new(), and gives it back to target_drop().
 * Nothing else knows what a target is.  $FIDX_TEST_STORE names the backend:
 *
 *   sqlite       (the default) a path in a new temporary folder
 *   postgresql   a new database on the server of $FIDX_TEST_PG_ADMIN (a
 *                conninfo string of a role that may create databases, as
 *                tests/pg/with-server sets it), made and dropped with psql
 */
struct target {
	char name[2048];              /* what fidx_store_open() is given */
	char dir[FIXTURE_DIR_MAX];    /* sqlite: the temporary folder that holds it */
	char db[64];                  /* postgresql: the database made for the test */
};

/* The backend under test ($FIDX_TEST_STORE, "sqlite" when unset). */
static inline const char *target_backend(void)
{
	const char *b = getenv("FIDX_TEST_STORE");
	return b && *b ? b : "sqlite";
}

/* Runs SQL (no quotes in it) through psql on the server of $FIDX_TEST_PG_ADMIN; 0, or -1 said. */
static inline int target_psql(const char *sql)
{
	const char *conninfo = getenv("FIDX_TEST_PG_ADMIN");
	char cmd[512];
	if (!conninfo || !*conninfo) {
		print_error("FIDX_TEST_STORE=postgresql needs FIDX_TEST_PG_ADMIN"
			    " (tests/pg/with-server)\n");
		return -1;
	}
	/* The conninfo goes through the environment, never the command line. */
	snprintf(cmd, sizeof(cmd),
		 "psql -X -q -v ON_ERROR_STOP=1 -d \"$FIDX_TEST_PG_ADMIN\" -c '%s'", sql);
	if (system(cmd) != 0) {
		print_error("psql failed: %s\n", sql);
		return -1;
	}
	return 0;
}

/* Makes a fresh target in *t; 0, or -1 said (a setup failure). */
static inline int target_new(struct target *t)
{
	static unsigned made;
	if (strcmp(target_backend(), "postgresql") == 0) {
		char sql[128];
		snprintf(t->db, sizeof(t->db), "fidx_conformance_%d_%u", (int)getpid(), ++made);
		snprintf(sql, sizeof(sql), "CREATE DATABASE %s", t->db);
		if (target_psql(sql) < 0)
			return -1;
		snprintf(t->name, sizeof(t->name), "%s dbname=%s", getenv("FIDX_TEST_PG_ADMIN"), t->db);
		return 0;
	}
	if (strcmp(target_backend(), "sqlite") != 0) {
		print_error("FIDX_TEST_STORE=%s: no target maker for it in %s\n", target_backend(),
			    __FILE__);
		return -1;
	}
	if (tmpdir_make(t->dir) < 0)
		return -1;
	snprintf(t->name, sizeof(t->name), "%s/" FIXTURE_DB_NAME, t->dir);
	return 0;
}

/* Drops the target and whatever the store kept for it; 0, or -1. */
static inline int target_drop(struct target *t)
{
	if (t->db[0]) {
		char sql[128];
		snprintf(sql, sizeof(sql), "DROP DATABASE %s WITH (FORCE)", t->db);
		return target_psql(sql);
	}
	return tmpdir_remove(t->dir);
}

/*
 * The schema version a store of the backend under test has: the SQLite
 * store's, or on PostgreSQL 8 (the scans kept as changes, postgres.h's
 * PG_SCHEMA_VERSION, which this suite cannot include).
 */
static inline int target_version(void)
{
	return strcmp(target_backend(), "postgresql") == 0 ? 8 : FIDX_SCHEMA_VERSION;
}

/* cmocka setup: a fresh struct target in *state; 0, or -1 said. */
static inline int target_setup(void **state)
{
	struct target *t = calloc(1, sizeof(*t));
	if (!t || target_new(t) < 0) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

/* cmocka teardown: target_drop() and free. */
static inline int target_teardown(void **state)
{
	struct target *t = *state;
	int ret = target_drop(t);
	free(t);
	return ret;
}

/* A cmocka test of test given a fresh target (target_setup(), target_teardown()). */
#define TARGET_TEST(test) cmocka_unit_test_setup_teardown(test, target_setup, target_teardown)

/* ------------------------------------------- store calls, or a failure --- */

/*
 * Fails the test with the store's message unless call (an int store call
 * given &err, a struct fidx_error in the caller's scope) succeeded.
 */
#define MUST(call)                                                      \
	do {                                                            \
		if ((call) < 0)                                         \
			fail_msg("%s: %s", #call, err.msg);             \
	} while (0)

/* Opens the store name for mode (batch_rows: WRITE's rows per commit, 0 the default), or fails. */
static inline struct fidx_store *must_open(const char *name, enum fidx_store_mode mode,
					   unsigned batch_rows)
{
	struct fidx_error err = {0};
	struct fidx_store_opts opts = {.batch_rows = batch_rows};
	struct fidx_store *st = fidx_store_open(name, mode, &opts, &err);
	if (!st)
		fail_msg("fidx_store_open '%s': %s", name, err.msg[0] ? err.msg : "(no message)");
	return st;
}

/* Closes st, or fails the test. */
static inline void must_close(struct fidx_store *st)
{
	struct fidx_error err;
	if (fidx_store_close(st, &err) < 0)
		fail_msg("fidx_store_close: %s", err.msg);
}

/* Begins the scan info describes, or fails the test; returns its id. */
static inline int64_t must_begin_info(struct fidx_store *st, const struct fidx_scan_info *info)
{
	struct fidx_error err;
	int64_t id = fidx_store_begin_scan(st, info, &err);
	if (id < 1)
		fail_msg("fidx_store_begin_scan: %s", err.msg);
	return id;
}

/* When a scan of must_begin() starts (2023-11-14T22:13:20Z), and when must_end() ends one. */
#define FIXTURE_STARTED_NS 1700000000000000000
#define FIXTURE_FINISHED_NS 1700000001000000000

/*
 * Begins a scan of root started at started_ns, with the facts test_store.c
 * and test_sqlite.c read back (host, OS, kernel, architecture, version,
 * options), or fails the test; returns its id.
 */
static inline int64_t must_begin_at(struct fidx_store *st, const char *root, int64_t started_ns)
{
	struct fidx_scan_info info = {
		.root = root, .host = "testhost", .os = "Debian GNU/Linux 12 (bookworm)",
		.kernel = "6.1.0", .arch = "x86_64", .version = "0.1.0",
		.options = "{\"hash\":[\"sha256\"]}", .started_ns = started_ns,
	};
	return must_begin_info(st, &info);
}

/* must_begin_at() at FIXTURE_STARTED_NS. */
static inline int64_t must_begin(struct fidx_store *st, const char *root)
{
	return must_begin_at(st, root, FIXTURE_STARTED_NS);
}

/* Ends scan with totals t, sealed when seal is not NULL (store.h), or fails; 1 if it sealed. */
static inline int must_end_totals(struct fidx_store *st, int64_t scan,
				  const struct fidx_scan_totals *t, uint8_t *seal)
{
	struct fidx_error err;
	int rc = fidx_store_end_scan(st, scan, t, seal, &err);
	if (rc < 0)
		fail_msg("fidx_store_end_scan: %s", err.msg);
	return rc;
}

/* Ends scan with status at FIXTURE_FINISHED_NS, totals 0, sealed if complete; or fails. */
static inline void must_end(struct fidx_store *st, int64_t scan, const char *status)
{
	struct fidx_scan_totals t = {.finished_ns = FIXTURE_FINISHED_NS, .status = status};
	uint8_t seal[FIDX_SEAL_LEN];
	must_end_totals(st, scan, &t, seal);
}

/*
 * Ends scan complete, unsealed, with entries and the totals test_store.c and
 * test_sqlite.c read back (2 files, 1 folder, 4096 bytes, 2 errors), or fails.
 */
static inline void must_end_complete(struct fidx_store *st, int64_t scan, uint64_t entries)
{
	struct fidx_scan_totals t = {
		.finished_ns = FIXTURE_FINISHED_NS, .status = "complete", .entries = entries,
		.files = 2, .dirs = 1, .bytes = 4096, .errors = 2,
	};
	must_end_totals(st, scan, &t, NULL);
}

/* Adds rec (its path set) to st, or fails the test. */
static inline void must_add(struct fidx_store *st, const struct fidx_record *rec)
{
	struct fidx_error err;
	if (fidx_store_add(st, rec, &err) < 0)
		fail_msg("fidx_store_add '%s': %s", rec->path, err.msg);
}

/* Adds rec at path (borrowed; its name after the last '/', no extension), or fails. */
static inline void must_put(struct fidx_store *st, struct fidx_record *rec, const char *path)
{
	rec->path = (char *)path;
	rec->path_len = strlen(path);
	rec->name_off = (size_t)(strrchr(path, '/') + 1 - path);
	rec->ext_off = rec->path_len;
	must_add(st, rec);
}

/* Builds the indexes left out of the bulk load, or fails the test. */
static inline void must_build_indexes(struct fidx_store *st)
{
	struct fidx_error err;
	if (fidx_store_build_indexes(st, &err) < 0)
		fail_msg("fidx_store_build_indexes: %s", err.msg);
}

/* Reads scan id's row into *list (which it replaces: zeroed or read before), or fails. */
static inline const struct fidx_scan_row *must_scan_row(struct fidx_store *st, int64_t id,
							struct fidx_scan_list *list)
{
	struct fidx_error err;
	struct fidx_scan_filter only = {.id = id};
	if (fidx_store_scans(st, &only, list, &err) < 0)
		fail_msg("fidx_store_scans: %s", err.msg);
	assert_int_equal(list->n, 1);
	assert_int_equal(list->rows[0].id, id);
	return &list->rows[0];
}

/* ------------------------------------------------------------- records --- */

/*
 * Makes a record for path (len bytes, may hold any byte but NUL): the name
 * starts after the last '/', the extension after the name's last '.' unless
 * that is its first byte.  fidx_record_free() frees it.
 */
static inline struct fidx_record *make_rec(int64_t scan, const char *path, size_t len, char type)
{
	struct fidx_record *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	r->scan_id = scan;
	r->path = malloc(len + 1);
	assert_non_null(r->path);
	memcpy(r->path, path, len);
	r->path[len] = '\0';
	r->path_len = len;
	r->name_off = (size_t)(memrchr(path, '/', len) - (void *)path) + 1;
	const char *dot = memrchr(path + r->name_off, '.', len - r->name_off);
	r->ext_off = dot && dot > path + r->name_off ? (size_t)(dot - path) + 1 : len;
	r->type = type;
	return r;
}

/* Gives r full metadata derived from seed, and a birth time if btime. */
static inline void set_meta(struct fidx_record *r, uint32_t mode, uint64_t seed, bool btime)
{
	r->has_meta = true;
	r->meta = (struct fidx_meta){
		.size = seed * 1000 + 1, .blocks = seed * 8, .mode = mode,
		.uid = 1000 + seed, .gid = 100 + seed, .nlink = 1 + seed,
		.dev = makedev(8, seed), .ino = 1000000 + seed,
		.atime = fidx_time_of_ns(1700000000123456789 + (int64_t)seed),
		.mtime = fidx_time_of_ns(1600000000000000001 + (int64_t)seed),
		.ctime = fidx_time_of_ns(1650000000999999999 + (int64_t)seed),
		.btime = fidx_time_of_ns(btime ? 1500000000000000000 + (int64_t)seed : 0),
		.has_btime = btime,
	};
}

/* Fills digest d of r with a pattern and marks it set. */
static inline void set_digest(struct fidx_record *r, enum fidx_digest d)
{
	for (size_t i = 0; i < fidx_digest_len(d); i++)
		r->digest[d][i] = (uint8_t)(d * 37 + i);
	r->digest_mask |= 1u << d;
}

/* The hostile path and link target of five_kinds(): a byte 0xff, a newline, a tab. */
#define FIXTURE_WEIRD_PATH "/r/dir/a\xff\nb.tar.gz"
#define FIXTURE_LINK_TARGET "../t\xfe\tget"

/*
 * Makes one record of each kind a scan of root "/r" writes, in r[0..4]: the
 * root directory; a file at FIXTURE_WEIRD_PATH with every digest and a birth
 * time; a symlink to FIXTURE_LINK_TARGET; an entry lstat could not read
 * (EACCES, no metadata); a file with SHA-256, XXH3-128 and the error
 * "changed during scan".  fidx_record_free() frees each.
 */
static inline void five_kinds(int64_t scan, struct fidx_record *r[5])
{
	static const char weird[] = FIXTURE_WEIRD_PATH;
	static const char target[] = FIXTURE_LINK_TARGET;
	r[0] = make_rec(scan, "/r", 2, 'd');
	set_meta(r[0], S_IFDIR | 0755, 1, true);
	r[1] = make_rec(scan, weird, sizeof(weird) - 1, 'f');
	set_meta(r[1], S_IFREG | 0644, 2, true);
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		set_digest(r[1], d);
	r[2] = make_rec(scan, "/r/dir/link", 11, 'l');
	set_meta(r[2], S_IFLNK | 0777, 3, false);
	r[2]->link_target = strdup(target);
	assert_non_null(r[2]->link_target);
	r[2]->link_len = sizeof(target) - 1;
	r[3] = make_rec(scan, "/r/dir/secret", 13, 0);
	assert_int_equal(fidx_record_set_error(r[3], "lstat", EACCES), 0);
	r[4] = make_rec(scan, "/r/dir/big.bin", 14, 'f');
	set_meta(r[4], S_IFREG | 0600, 4, false);
	set_digest(r[4], FIDX_SHA256);
	set_digest(r[4], FIDX_XXH128);
	assert_int_equal(fidx_record_set_error(r[4], "changed during scan", 0), 0);
}

/*
 * A regular file record as reuse compares it (no path, no scan): device 8,
 * inode ino, size ino * 10, mtime ino ns, ctime ino + 1 ns; with SHA-256 and
 * MD5 (all zeros) when digests.
 */
static inline struct fidx_record file_rec(int64_t ino, bool digests)
{
	struct fidx_record r = {.type = 'f', .has_meta = true};
	r.meta.dev = 8;
	r.meta.ino = (uint64_t)ino;
	r.meta.size = (uint64_t)ino * 10;
	r.meta.mtime = fidx_time_of_ns(ino);
	r.meta.ctime = fidx_time_of_ns(ino + 1);
	if (digests)
		r.digest_mask = 1u << FIDX_SHA256 | 1u << FIDX_MD5;
	return r;
}

/*
 * Opens name for writing with one scan of /r and two files in it, /r/0 and
 * /r/1 (ids 1 and 2 in a new SQLite database), committed; the scan's id in
 * *scan unless it is NULL.  Or fails the test.
 */
static inline struct fidx_store *open_with_two_files(const char *name, int64_t *scan)
{
	struct fidx_store *st = must_open(name, FIDX_STORE_WRITE, 0);
	struct fidx_error err;
	int64_t id = must_begin(st, "/r");
	if (scan)
		*scan = id;
	for (int i = 0; i < 2; i++) {
		struct fidx_record rec = {.scan_id = id, .type = 'f', .has_meta = true};
		char path[16];
		snprintf(path, sizeof(path), "/r/%d", i);
		must_put(st, &rec, path);
	}
	if (fidx_store_flush(st, &err) < 0)
		fail_msg("fidx_store_flush: %s", err.msg);
	return st;
}

/* ------------------------------------------------------------ the seal --- */

/*
 * The rows of the seal tests (tests/store/test_seal.c, what every store must
 * do; tests/store/sqlite/test_seal.c, the SQLite backend's own).
 *
 * Adds an entry of scan scan at path (type t, size) with a SHA-256 pattern
 * for files, and the error e (NULL for none), or fails the test.  A name
 * holding "th|ree" gets times beyond what nanoseconds in 64 bits reach
 * (atime before 1677, mtime 2400-01-01), which the SQLite backend keeps in
 * the columns of schema 4.
 */
static inline void seal_add_error(struct fidx_store *st, int64_t scan, const char *path, char t,
				  uint64_t size, const char *e)
{
	struct fidx_record r = {.scan_id = scan, .type = t, .has_meta = true};
	r.meta = (struct fidx_meta){.size = size, .mode = t == 'd' ? 040755 : 0100644,
				    .nlink = 1, .ino = size + 7,
				    .mtime = fidx_time_of_ns(-5)};
	if (strstr(path, "th|ree")) {
		r.meta.atime = (struct fidx_time){.sec = -9300000000LL, .nsec = 5};
		r.meta.mtime = (struct fidx_time){.sec = 13569465600LL, .nsec = 999999999};
	}
	if (t == 'f') {
		memset(r.digest[FIDX_SHA256], (int)size, 32);
		r.digest_mask = 1u << FIDX_SHA256;
	}
	r.error = (char *)e;
	must_put(st, &r, path);
}

/* Adds an entry without an error (seal_add_error()). */
static inline void seal_add(struct fidx_store *st, int64_t scan, const char *path, char t,
			    uint64_t size)
{
	seal_add_error(st, scan, path, t, size, NULL);
}

/* Ends scan with status and totals that match what seal_two_scans() wrote of it, unsealed. */
static inline void seal_end(struct fidx_store *st, int64_t scan, const char *status)
{
	struct fidx_scan_totals t = {.finished_ns = FIXTURE_FINISHED_NS, .status = status,
				     .entries = 4, .files = 3, .dirs = 1, .bytes = 6};
	must_end_totals(st, scan, &t, NULL);
}

/*
 * Opens name for writing with two scans of four rows each, /a and "/b\n|x",
 * their rows interleaved (as the roots of one run write them; names with
 * '|', 0xff and "th|ree"); the first ended complete, the second with
 * second_status; unsealed.  Their ids in ids[] unless it is NULL (they are
 * 1 and 2 in a new database).
 */
static inline struct fidx_store *seal_two_scans(const char *name, const char *second_status,
						int64_t ids[2])
{
	struct fidx_store *st = must_open(name, FIDX_STORE_WRITE, 0);
	int64_t a = must_begin(st, "/a"), b = must_begin(st, "/b\n|x");
	seal_add(st, a, "/a", 'd', 4096);
	seal_add(st, b, "/b\n|x", 'd', 4096);
	static const char *const names[] = {"/one", "/tw\xffo", "/th|ree"};
	for (int i = 0; i < 3; i++) {
		char pa[32], pb[32];
		snprintf(pa, sizeof(pa), "/a%s", names[i]);
		snprintf(pb, sizeof(pb), "/b\n|x%s", names[i]);
		seal_add(st, a, pa, 'f', (uint64_t)i + 1);
		seal_add(st, b, pb, 'f', (uint64_t)i + 1);
	}
	seal_end(st, a, "complete");
	seal_end(st, b, second_status);
	if (ids) {
		ids[0] = a;
		ids[1] = b;
	}
	return st;
}

/*
 * Opens name for writing with a scan of /a ended interrupted, two of its four
 * rows to do again (/a/two not hashed, /a/sub not read), and closes it; or
 * fails the test.  Returns the scan's id.
 */
static inline int64_t seal_interrupted(const char *name)
{
	struct fidx_store *st = must_open(name, FIDX_STORE_WRITE, 0);
	int64_t a = must_begin(st, "/a");
	seal_add(st, a, "/a", 'd', 4096);
	seal_add(st, a, "/a/one", 'f', 1);
	seal_add_error(st, a, "/a/two", 'f', 2, FIDX_ERROR_NOT_HASHED);
	seal_add_error(st, a, "/a/sub", 'd', 4096, FIDX_ERROR_NOT_READ);
	struct fidx_scan_totals t = {.finished_ns = FIXTURE_FINISHED_NS, .status = "interrupted",
				     .entries = 4, .files = 2, .dirs = 2, .bytes = 3, .errors = 2};
	must_end_totals(st, a, &t, NULL);
	must_close(st);
	return a;
}

/*
 * Opens name for writing with a scan of /a left running: /a and /a/one
 * committed, /a/lost rolled back (the store closed with its batch open); or
 * fails the test.  Returns the scan's id.
 */
static inline int64_t seal_rolled_back(const char *name)
{
	struct fidx_store *st = must_open(name, FIDX_STORE_WRITE, 0);
	struct fidx_error err;
	int64_t a = must_begin(st, "/a");
	seal_add(st, a, "/a", 'd', 4096);
	seal_add(st, a, "/a/one", 'f', 1);
	MUST(fidx_store_flush(st, &err));
	seal_add(st, a, "/a/lost", 'f', 9);
	must_close(st);
	return a;
}

/* The findings of a check, as seal_check() collects them (the first 8). */
struct found {
	int n;                            /* how many there were */
	enum fidx_seal_change change[8];  /* what each is */
	int64_t id[8];                    /* the file row each names */
};

/* fidx_store_verify()'s callback for seal_check(): notes one finding in arg, a struct found. */
static inline void found_collect(void *arg, const struct fidx_seal_finding *f)
{
	struct found *c = arg;
	if (c->n < 8) {
		c->change[c->n] = f->change;
		c->id[c->n] = f->file_id;
	}
	c->n++;
}

/* Verifies scan id of name on a READ store, or fails; returns the result, the findings in *c. */
static inline struct fidx_seal_result seal_check(const char *name, int64_t id, struct found *c)
{
	struct fidx_store *st = must_open(name, FIDX_STORE_READ, 0);
	struct fidx_seal_result r;
	struct fidx_error err;
	*c = (struct found){0};
	MUST(fidx_store_verify(st, id, found_collect, c, &r, &err));
	must_close(st);
	return r;
}

#endif
