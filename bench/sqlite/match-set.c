/*
 * match-set.c - which structure `fidx match` keeps a hash list in, measured.
 *
 *     build/bench/match-set DB N HITS [RUNS]
 *
 * Reads the SHA-256 digests of the regular files of scan 1 of DB (the
 * files to compare), makes a list of N digests of which HITS are taken from
 * the DB and the rest are random, and times three ways to find which files
 * are in the list:
 *
 *   hashset  fidx_hashset (src/core/hashlist.c): N adds, then one look-up per file
 *   sorted   an array of (digest, line) sorted with qsort, then bsearch per file
 *   sqlite   a TEMP table (digest BLOB PRIMARY KEY) WITHOUT ROWID filled in one
 *            transaction, then one JOIN with the file table
 *
 * Build and look-up are timed apart (median of RUNS, default 3; sqlite runs
 * once, it is the slow one).  The three hit counts must agree: at least HITS,
 * more when a sampled digest is shared by several files.  "stream" is the time to read the digests from SQLite alone, which the
 * hashset and sorted look-ups add to in `fidx match`.  One line per way on
 * stdout: "way build_s lookup_s hits".
 */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdint.h>

#include "bench.h"
#include "hashlist.h"

#define LEN 32

/* splitmix64: the random digests of the list. */
static uint64_t next_random(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* One entry of the sorted array. */
struct entry {
	uint8_t d[LEN];
	uint32_t line;
};

/* qsort() and bsearch() order of entries (and of a bare digest as the key). */
static int cmp_entry(const void *a, const void *b)
{
	return memcmp(a, b, LEN);
}

/* The files' digests, read from the database: files * LEN bytes. */
static uint8_t *read_files(sqlite3 *db, size_t *files, double *stream_s)
{
	sqlite3_stmt *s;
	size_t cap = 1 << 20, n = 0;
	uint8_t *out = xmalloc(cap * LEN);
	double t0 = now();

	if (sqlite3_prepare_v2(db, "SELECT sha256 FROM file WHERE scan_id = 1 AND type = 'f'"
			       " AND sha256 IS NOT NULL", -1, &s, NULL) != SQLITE_OK)
		die("%s", sqlite3_errmsg(db));
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (sqlite3_column_bytes(s, 0) != LEN)
			continue;
		if (n == cap && !(out = realloc(out, (cap *= 2) * LEN)))
			die("out of memory");
		memcpy(out + n * LEN, sqlite3_column_blob(s, 0), LEN);
		n++;
	}
	*stream_s = now() - t0;
	sqlite3_finalize(s);
	*files = n;
	return out;
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5)
		die("usage: match-set DB N HITS [RUNS]");
	size_t n = strtoull(argv[2], NULL, 10), hits = strtoull(argv[3], NULL, 10);
	int runs = argc == 5 ? atoi(argv[4]) : 3;
	sqlite3 *db;
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		die("cannot open %s", argv[1]);

	size_t files;
	double stream_s;
	uint8_t *fd = read_files(db, &files, &stream_s);
	if (hits > files || hits > n)
		die("HITS must not exceed the files (%zu) nor N", files);

	/* The list: HITS digests of files spread evenly, the rest random. */
	uint8_t *list = xmalloc(n * LEN);
	uint64_t seed = 42;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < LEN; k += 8) {
			uint64_t r = next_random(&seed);
			memcpy(list + i * LEN + k, &r, 8);
		}
	for (size_t h = 0; h < hits; h++)
		memcpy(list + (h * (n / hits)) * LEN, fd + (h * (files / hits)) * LEN, LEN);

	double *build = xmalloc(runs * sizeof(double)), *look = xmalloc(runs * sizeof(double));
	size_t got = 0;

	printf("stream %.3f 0 %zu\n", stream_s, files);
	for (int r = 0; r < runs; r++) {
		double t0 = now();
		struct fidx_hashset *set = fidx_hashset_create();
		for (size_t i = 0; i < n; i++)
			if (fidx_hashset_add(set, FIDX_SHA256, list + i * LEN,
					     (struct fidx_hashloc){0, (uint32_t)i + 1}) < 0)
				die("out of memory");
		double t1 = now();
		got = 0;
		for (size_t f = 0; f < files; f++)
			got += fidx_hashset_find(set, FIDX_SHA256, fd + f * LEN) != NULL;
		double t2 = now();
		build[r] = t1 - t0;
		look[r] = t2 - t1;
		fidx_hashset_destroy(set);
	}
	printf("hashset %.3f %.3f %zu\n", median(build, runs), median(look, runs), got);

	for (int r = 0; r < runs; r++) {
		double t0 = now();
		struct entry *e = xmalloc(n * sizeof(*e));
		for (size_t i = 0; i < n; i++) {
			memcpy(e[i].d, list + i * LEN, LEN);
			e[i].line = (uint32_t)i + 1;
		}
		qsort(e, n, sizeof(*e), cmp_entry);
		double t1 = now();
		got = 0;
		for (size_t f = 0; f < files; f++)
			got += bsearch(fd + f * LEN, e, n, sizeof(*e), cmp_entry) != NULL;
		double t2 = now();
		build[r] = t1 - t0;
		look[r] = t2 - t1;
		free(e);
	}
	printf("sorted %.3f %.3f %zu\n", median(build, runs), median(look, runs), got);

	sqlite3_stmt *ins, *join;
	double t0 = now();
	if (sqlite3_exec(db, "PRAGMA temp_store = MEMORY; CREATE TEMP TABLE list (d BLOB PRIMARY KEY,"
			 " line INTEGER) WITHOUT ROWID; BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO list VALUES (?, ?)", -1, &ins, NULL) !=
		    SQLITE_OK)
		die("%s", sqlite3_errmsg(db));
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_blob(ins, 1, list + i * LEN, LEN, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 2, (int64_t)i + 1);
		if (sqlite3_step(ins) != SQLITE_DONE)
			die("%s", sqlite3_errmsg(db));
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		die("%s", sqlite3_errmsg(db));
	double t1 = now();
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM file JOIN temp.list ON list.d = file.sha256"
			       " WHERE file.scan_id = 1 AND file.type = 'f'", -1, &join, NULL) !=
		    SQLITE_OK ||
	    sqlite3_step(join) != SQLITE_ROW)
		die("%s", sqlite3_errmsg(db));
	got = (size_t)sqlite3_column_int64(join, 0);
	double t2 = now();
	sqlite3_finalize(join);
	printf("sqlite %.3f %.3f %zu\n", t1 - t0, t2 - t1, got);
	sqlite3_close(db);
	free(build);
	free(look);
	free(list);
	free(fd);
	return 0;
}
