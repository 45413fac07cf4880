/*
 * find-build.c - how long the path index of `fidx find` takes to build, and
 * how large it is (bench/find).
 *
 *     find-build DB SCAN_ID [RUNS [PATTERN...]]
 *
 * Opens DB as the store does (WAL, synchronous=NORMAL, a 32 MiB page cache),
 * then RUNS times (default 3): removes the scan's index, and times
 * fidx_pathindex_build() alone (its transaction included).  Prints one line:
 *
 *     block=32 paths=N blocks=N trigrams=N block_bytes=N trigram_bytes=N median_s=S runs=S,S,...
 *
 * Then, for each PATTERN, the index's share of a query: reading the blocks
 * its trigrams select and checking each path with memmem(), RUNS times, as
 * one line "query PATTERN blocks=N matches=N median_ms=MS".
 *
 * Block sizes other than FIDX_PATHINDEX_BLOCK are compared by building with
 * EXTRA_CFLAGS=-DFIDX_PATHINDEX_BLOCK=N (core/pathindex.h).
 */
#include <sqlite3.h>

#include "bench.h"
#include "pathstore.h"

/* Runs sql or dies. */
static void exec(sqlite3 *db, const char *sql)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		die("%s: %s", sql, sqlite3_errmsg(db));
}

/* Returns the integer the one-row query sql gives for scan (bound to ?1), or dies. */
static long long query(sqlite3 *db, const char *sql, long long scan)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		die("%s: %s", sql, sqlite3_errmsg(db));
	sqlite3_bind_int64(s, 1, scan);
	if (sqlite3_step(s) != SQLITE_ROW)
		die("%s: %s", sql, sqlite3_errmsg(db));
	long long v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* Removes the index of scan, or dies. */
static void drop_index(sqlite3 *db, long long scan)
{
	char sql[512];
	snprintf(sql, sizeof(sql),
		 "BEGIN; DELETE FROM path_index WHERE scan_id = %lld;"
		 " DELETE FROM path_block WHERE key >= %lld AND key < %lld;"
		 " DELETE FROM path_trigram WHERE key >= %lld AND key < %lld; COMMIT;"
		 " PRAGMA wal_checkpoint(TRUNCATE)",
		 scan, scan << 32, (scan + 1) << 32, scan << 24, (scan + 1) << 24);
	exec(db, sql);
}

/*
 * Reads the paths of scan that hold pattern through the index, as fidx find
 * does before printing.  Returns the seconds it took.
 */
static double time_query(sqlite3 *db, long long scan, const char *pattern, size_t *blocks,
			  long long *matches)
{
	size_t n = strlen(pattern);
	uint32_t *tri = xmalloc((n + 1) * sizeof(*tri));
	double t0 = now();
	size_t ntri = fidx_pathindex_trigrams(pattern, n, tri, 0);
	struct fidx_pathiter *it = fidx_pathiter_open(db, scan, tri, ntri);
	struct fidx_pathent e;
	int rc;

	if (!it)
		die("query '%s': %s", pattern, strerror(errno));
	*matches = 0;
	while ((rc = fidx_pathiter_next(it, &e)) == 1)
		*matches += memmem(e.path, e.len, pattern, n) != NULL;
	if (rc < 0)
		die("query '%s': %s", pattern, strerror(errno));
	*blocks = fidx_pathiter_blocks(it);
	fidx_pathiter_close(it);
	free(tri);
	return now() - t0;
}

int main(int argc, char **argv)
{
	sqlite3 *db;
	struct fidx_error err;

	if (argc < 3)
		die("usage: find-build DB SCAN_ID [RUNS [PATTERN...]]");
	long long scan = atoll(argv[2]);
	int runs = argc >= 4 ? atoi(argv[3]) : 3;
	if (scan < 1 || runs < 1)
		die("bad SCAN_ID or RUNS");
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		die("cannot open '%s': %s", argv[1], sqlite3_errmsg(db));
	exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
		 " PRAGMA cache_size = -32768");

	double *t = xmalloc((size_t)runs * sizeof(*t));
	for (int r = 0; r < runs; r++) {
		drop_index(db, scan);
		double t0 = now();
		if (fidx_pathindex_build(db, scan, &err) < 0)
			die("build: %s", err.msg);
		t[r] = now() - t0;
	}
	printf("block=%d paths=%lld blocks=%lld trigrams=%lld block_bytes=%lld trigram_bytes=%lld"
	       " median_s=%.3f runs=", FIDX_PATHINDEX_BLOCK,
	       query(db, "SELECT paths FROM path_index WHERE scan_id = ?1", scan),
	       query(db, "SELECT blocks FROM path_index WHERE scan_id = ?1", scan),
	       query(db, "SELECT trigrams FROM path_index WHERE scan_id = ?1", scan),
	       query(db, "SELECT total(length(data)) FROM path_block"
			 " WHERE key >= ?1 << 32 AND key < (?1 + 1) << 32", scan),
	       query(db, "SELECT total(length(blocks)) FROM path_trigram"
			 " WHERE key >= ?1 << 24 AND key < (?1 + 1) << 24", scan),
	       median(t, (size_t)runs));
	for (int r = 0; r < runs; r++)
		printf("%s%.3f", r ? "," : "", t[r]);
	putchar('\n');
	for (int a = 4; a < argc; a++) {
		size_t blocks = 0;
		long long matches = 0;
		for (int r = 0; r < runs; r++)
			t[r] = time_query(db, scan, argv[a], &blocks, &matches);
		printf("query %s blocks=%zu matches=%lld median_ms=%.2f\n", argv[a], blocks, matches,
		       1000 * median(t, (size_t)runs));
	}
	free(t);
	exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
	if (sqlite3_close(db) != SQLITE_OK)
		die("cannot close '%s'", argv[1]);
	return 0;
}
