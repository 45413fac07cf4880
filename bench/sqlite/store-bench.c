/*
 * store-bench.c - rows per second into SQLite, to choose the store's tuning.
 *
 *     store-bench [-n ROWS] [-b BATCH_ROWS] [-c CACHE_KIB] [-m flat|norm] [-s N] [-r] [-q] DB
 *
 * Inserts ROWS synthetic entries shaped like a scan of /usr/share/doc (one
 * directory row, then nine files /usr/share/doc/pkg-NNNNN/file-NNN.txt with
 * full metadata and a SHA-256), then builds the secondary index, and prints
 * one line: the insert, index and close times, rows per second over all
 * three (wall clock, and per CPU second of this process, which a busy shared
 * machine disturbs less), and the size of the database file.  DB is replaced.
 *
 *   -m flat  goes through the store API (store.h, its SQLite backend): the schema fidx uses.
 *   -m norm  the alternative, written here with plain SQLite: a `dir` table and
 *            `entry` rows holding dir_id and name, `file` a view joining them.
 *            The writer keeps the last directory's id, so it needs no lookup as
 *            long as a directory's entries arrive together: its best case (the
 *            real pipeline interleaves directories and would need a map).
 *   -s N     loads N scans of ROWS entries into the database, one after the
 *            other (flat only): from the second one on, the index built
 *            after the first is maintained during the load.
 *   -r       emits the directories in a permuted order (as a parallel walk
 *            does) rather than in path order, so that rows added to an
 *            existing index land all over it.
 *   -q       after loading, also times queries through `file`: a full scan
 *            filtering on path, and 20 look-ups of one path.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "record.h"
#include "store.h"

#define FILES_PER_DIR 9

/* The benchmark's settings. */
struct bench {
	const char *db;       /* database path (replaced) */
	unsigned long rows;   /* entries to insert */
	unsigned batch_rows;  /* rows per transaction */
	int cache_kib;        /* page cache */
	bool norm;            /* the normalised schema instead of the store */
	bool queries;         /* also time queries */
	unsigned scans;       /* scans loaded one after the other (flat only) */
	bool shuffle;         /* directories in a permuted order, not path order */
};

/* The schema of the normalised alternative. */
static const char norm_schema[] =
	"CREATE TABLE dir (id INTEGER PRIMARY KEY, scan_id INTEGER NOT NULL, path TEXT NOT NULL);"
	"CREATE TABLE entry (id INTEGER PRIMARY KEY, scan_id INTEGER NOT NULL,"
	" dir_id INTEGER NOT NULL, name TEXT NOT NULL, ext TEXT NOT NULL, type TEXT,"
	" size INTEGER, blocks INTEGER, mode INTEGER, uid INTEGER, gid INTEGER,"
	" nlink INTEGER, dev INTEGER, ino INTEGER,"
	" atime_ns INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, btime_ns INTEGER,"
	" link_target TEXT, md5 BLOB, sha1 BLOB, sha256 BLOB, sha512 BLOB, xxh128 BLOB,"
	" error TEXT);"
	"CREATE VIEW file AS SELECT e.id, e.scan_id,"
	" CASE d.path WHEN '/' THEN '/' || e.name ELSE d.path || '/' || e.name END AS path,"
	" e.name, e.ext, e.type, e.size, e.blocks, e.mode, e.uid, e.gid, e.nlink, e.dev,"
	" e.ino, e.atime_ns, e.mtime_ns, e.ctime_ns, e.btime_ns, e.link_target, e.md5,"
	" e.sha1, e.sha256, e.sha512, e.xxh128, e.error"
	" FROM entry e JOIN dir d ON d.id = e.dir_id;";

static const char norm_insert_sql[] =
	"INSERT INTO entry (scan_id, dir_id, name, ext, type, size, blocks, mode, uid, gid,"
	" nlink, dev, ino, atime_ns, mtime_ns, ctime_ns, btime_ns, link_target,"
	" md5, sha1, sha256, sha512, xxh128, error)"
	" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

static const char norm_index_sql[] =
	"CREATE INDEX dir_scan_path ON dir (scan_id, path);"
	"CREATE INDEX entry_dir_name ON entry (dir_id, name);";

/* Seconds on the monotonic clock. */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU seconds (user + system) this process has used. */
static double cpu_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* A small fast PRNG (xorshift64*), so that digests do not compress. */
static uint64_t next_random(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* Prints a message and exits with status 2. */
__attribute__((noreturn, format(printf, 1, 2)))
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("store-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/*
 * Fills rec (whose path buffer holds 4096 bytes) with entry i of the
 * synthetic scan: a directory every FILES_PER_DIR + 1 rows, files between;
 * directories in path order, or permuted with -r.
 */
static void make_entry(const struct bench *b, struct fidx_record *rec, unsigned long i,
		       uint64_t *rnd)
{
	unsigned long pkg = i / (FILES_PER_DIR + 1), k = i % (FILES_PER_DIR + 1);
	unsigned long npkg = (b->rows + FILES_PER_DIR) / (FILES_PER_DIR + 1);

	/* A multiplier prime and above npkg permutes the directories. */
	if (b->shuffle)
		pkg = pkg * 1000003 % npkg;
	int n;

	if (k == 0) {
		n = sprintf(rec->path, "/usr/share/doc/pkg-%05lu", pkg);
		rec->type = 'd';
		rec->meta.mode = 040755;
		rec->meta.size = 4096;
		rec->digest_mask = 0;
		rec->ext_off = n;
	} else {
		n = sprintf(rec->path, "/usr/share/doc/pkg-%05lu/file-%03lu.txt", pkg, k);
		rec->type = 'f';
		rec->meta.mode = 0100644;
		rec->meta.size = next_random(rnd) % 100000;
		for (int b = 0; b < 32; b += 8) {
			uint64_t r = next_random(rnd);
			memcpy(rec->digest[FIDX_SHA256] + b, &r, 8);
		}
		rec->digest_mask = 1u << FIDX_SHA256;
		rec->ext_off = n - 3;
	}
	rec->path_len = n;
	rec->name_off = strrchr(rec->path, '/') - rec->path + 1;
	rec->has_meta = true;
	rec->meta.blocks = (rec->meta.size + 511) / 512;
	rec->meta.uid = 0;
	rec->meta.gid = 0;
	rec->meta.nlink = rec->type == 'd' ? 2 : 1;
	rec->meta.dev = 0x801;
	rec->meta.ino = 100000 + i;
	int64_t atime_ns = 1700000000000000000 + (int64_t)(next_random(rnd) % 1000000000000000);
	rec->meta.atime = fidx_time_of_ns(atime_ns);
	rec->meta.mtime = fidx_time_of_ns(atime_ns - 1000000);
	rec->meta.ctime = rec->meta.mtime;
	rec->meta.btime = rec->meta.mtime;
	rec->meta.has_btime = true;
}

/*
 * Loads b->scans scans through the store API, each followed by the index
 * build as fidx does (from the second one on, the index exists during the
 * load).  Returns the insert time of all scans; *last_s receives the last
 * scan's, *index_s and *close_s the index builds' and the close's.
 */
static double load_flat(const struct bench *b, double *last_s, double *index_s,
			double *close_s)
{
	struct fidx_store_opts opts = {.batch_rows = b->batch_rows, .cache_kib = b->cache_kib};
	struct fidx_scan_info info = {.root = "/usr/share/doc", .started_ns = 1};
	struct fidx_scan_totals totals = {.finished_ns = 2, .status = "complete"};
	struct fidx_record rec = {0};
	double insert_s = 0;
	char path[4096];
	uint64_t rnd = 42;
	struct fidx_error err;

	*index_s = 0;
	double t0 = now();
	struct fidx_store *st = fidx_store_open(b->db, FIDX_STORE_WRITE, &opts, &err);
	if (!st)
		die("%s", err.msg);
	rec.path = path;
	for (unsigned scan = 0; scan < b->scans; scan++) {
		rec.scan_id = fidx_store_begin_scan(st, &info, &err);
		if (rec.scan_id < 0)
			die("%s", err.msg);
		for (unsigned long i = 0; i < b->rows; i++) {
			make_entry(b, &rec, i, &rnd);
			if (fidx_store_add(st, &rec, &err) < 0)
				die("%s", err.msg);
		}
		totals.entries = b->rows;
		if (fidx_store_end_scan(st, rec.scan_id, &totals, NULL, &err) < 0)
			die("%s", err.msg);
		double t1 = now();
		if (fidx_store_build_indexes(st, &err) < 0)
			die("%s", err.msg);
		double t2 = now();
		*last_s = t1 - t0;
		insert_s += t1 - t0;
		*index_s += t2 - t1;
		t0 = t2;
	}
	if (fidx_store_close(st, &err) < 0)
		die("cannot close '%s': %s", b->db, err.msg);
	*close_s = now() - t0;
	return insert_s;
}

/* Runs SQL or exits. */
static void exec_or_die(sqlite3 *db, const char *sql)
{
	char *err;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		die("%s: %s", sql, err);
}

/* Loads the normalised schema with plain SQLite, the way the store would. */
static double load_norm(const struct bench *b, double *index_s, double *close_s)
{
	struct fidx_record rec = {0};
	sqlite3_stmt *ins, *ins_dir;
	char path[4096], last_dir[4096] = "";
	char pragmas[128];
	int64_t dir_id = 0;
	unsigned pending = 0;
	uint64_t rnd = 42;
	sqlite3 *db;

	double t0 = now();
	if (sqlite3_open_v2(b->db, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		die("cannot open '%s'", b->db);
	exec_or_die(db, norm_schema);
	snprintf(pragmas, sizeof(pragmas), "PRAGMA journal_mode = WAL;"
		 " PRAGMA synchronous = NORMAL; PRAGMA cache_size = %d", -b->cache_kib);
	exec_or_die(db, pragmas);
	if (sqlite3_prepare_v2(db, norm_insert_sql, -1, &ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO dir (scan_id, path) VALUES (1, ?)", -1,
			       &ins_dir, NULL) != SQLITE_OK)
		die("prepare: %s", sqlite3_errmsg(db));
	rec.path = path;
	for (unsigned long i = 0; i < b->rows; i++) {
		make_entry(b, &rec, i, &rnd);
		size_t dlen = rec.name_off > 1 ? rec.name_off - 1 : 1;
		if (pending == 0)
			exec_or_die(db, "BEGIN IMMEDIATE");
		if (strlen(last_dir) != dlen || memcmp(last_dir, path, dlen) != 0) {
			memcpy(last_dir, path, dlen);
			last_dir[dlen] = '\0';
			sqlite3_bind_text(ins_dir, 1, last_dir, (int)dlen, SQLITE_STATIC);
			if (sqlite3_step(ins_dir) != SQLITE_DONE)
				die("insert: %s", sqlite3_errmsg(db));
			sqlite3_reset(ins_dir);
			dir_id = sqlite3_last_insert_rowid(db);
		}
		const struct fidx_meta *m = &rec.meta;
		sqlite3_bind_int64(ins, 1, 1);
		sqlite3_bind_int64(ins, 2, dir_id);
		sqlite3_bind_text(ins, 3, path + rec.name_off, rec.path_len - rec.name_off,
				  SQLITE_STATIC);
		sqlite3_bind_text(ins, 4, path + rec.ext_off, rec.path_len - rec.ext_off,
				  SQLITE_STATIC);
		sqlite3_bind_text(ins, 5, &rec.type, 1, SQLITE_STATIC);
		int64_t ns[4] = {0};
		fidx_time_to_ns(m->atime, &ns[0]);
		fidx_time_to_ns(m->mtime, &ns[1]);
		fidx_time_to_ns(m->ctime, &ns[2]);
		fidx_time_to_ns(m->btime, &ns[3]);
		int64_t v[] = {m->size, m->blocks, m->mode, m->uid, m->gid, m->nlink, m->dev,
			       m->ino, ns[0], ns[1], ns[2], ns[3]};
		for (int k = 0; k < 12; k++)
			sqlite3_bind_int64(ins, 6 + k, v[k]);
		sqlite3_bind_null(ins, 18);
		for (int d = 0; d < FIDX_NDIGESTS; d++) {
			if (rec.digest_mask & (1u << d))
				sqlite3_bind_blob(ins, 19 + d, rec.digest[d],
						  (int)fidx_digest_len(d), SQLITE_STATIC);
			else
				sqlite3_bind_null(ins, 19 + d);
		}
		sqlite3_bind_null(ins, 24);
		if (sqlite3_step(ins) != SQLITE_DONE)
			die("insert: %s", sqlite3_errmsg(db));
		sqlite3_reset(ins);
		if (++pending >= b->batch_rows) {
			exec_or_die(db, "COMMIT");
			pending = 0;
		}
	}
	if (pending)
		exec_or_die(db, "COMMIT");
	double t1 = now();
	exec_or_die(db, norm_index_sql);
	double t2 = now();
	sqlite3_finalize(ins);
	sqlite3_finalize(ins_dir);
	if (sqlite3_close(db) != SQLITE_OK)
		die("cannot close '%s'", b->db);
	*index_s = t2 - t1;
	*close_s = now() - t2;
	return t1 - t0;
}

/* Times a full scan on path and 20 look-ups of a path through `file`. */
static void time_queries(const struct bench *b)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	char path[128];
	int64_t found = 0;

	if (sqlite3_open_v2(b->db, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		die("cannot open '%s'", b->db);
	double t0 = now();
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM file WHERE path LIKE '%/file-001.txt'",
			       -1, &s, NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW)
		die("query: %s", sqlite3_errmsg(db));
	found = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	double t1 = now();
	if (sqlite3_prepare_v2(db, "SELECT size FROM file WHERE scan_id = 1 AND path = ?",
			       -1, &s, NULL) != SQLITE_OK)
		die("query: %s", sqlite3_errmsg(db));
	for (unsigned long k = 0; k < 20; k++) {
		unsigned long pkg = (k * 7919) % (b->rows / (FILES_PER_DIR + 1));
		snprintf(path, sizeof(path), "/usr/share/doc/pkg-%05lu/file-005.txt", pkg);
		sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
		if (sqlite3_step(s) != SQLITE_ROW)
			die("'%s' not found", path);
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	double t2 = now();
	sqlite3_close(db);
	printf(" like_scan_s=%.3f like_rows=%" PRId64 " lookup_ms=%.3f", t1 - t0, found,
	       (t2 - t1) * 1000 / 20);
}

/* Removes the database and its side files. */
static void remove_db(const char *db)
{
	const char *suffix[] = {"", "-wal", "-shm", "-journal"};
	char p[4200];
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s%s", db, suffix[i]);
		if (unlink(p) < 0 && errno != ENOENT)
			die("cannot remove '%s': %s", p, strerror(errno));
	}
}

int main(int argc, char **argv)
{
	static const char usage[] =
		"usage: store-bench [-n ROWS] [-b BATCH] [-c KIB] [-m flat|norm] [-s N] [-r] [-q] DB";
	struct bench b = {.rows = 1000000, .batch_rows = 10000, .cache_kib = 2000, .scans = 1};
	double index_s, close_s, insert_s, last_s;
	struct stat sb;
	int opt;

	while ((opt = getopt(argc, argv, "n:b:c:m:s:rq")) != -1) {
		switch (opt) {
		case 'n': b.rows = strtoul(optarg, NULL, 10); break;
		case 'b': b.batch_rows = strtoul(optarg, NULL, 10); break;
		case 'c': b.cache_kib = atoi(optarg); break;
		case 'm': b.norm = strcmp(optarg, "norm") == 0; break;
		case 's': b.scans = strtoul(optarg, NULL, 10); break;
		case 'r': b.shuffle = true; break;
		case 'q': b.queries = true; break;
		default: die("%s", usage);
		}
	}
	if (optind != argc - 1 || b.rows < FILES_PER_DIR + 1 || b.rows > 10000000 || b.batch_rows == 0 ||
	    b.cache_kib <= 0 || b.scans == 0 || (b.norm && b.scans != 1))
		die("%s", usage);
	b.db = argv[optind];
	remove_db(b.db);

	double cpu0 = cpu_now();
	insert_s = b.norm ? load_norm(&b, &index_s, &close_s)
			  : load_flat(&b, &last_s, &index_s, &close_s);
	if (b.norm)
		last_s = insert_s;
	double cpu_s = cpu_now() - cpu0;
	if (stat(b.db, &sb) < 0)
		die("cannot stat '%s': %s", b.db, strerror(errno));
	double total = insert_s + index_s + close_s;
	double rows = (double)b.rows * b.scans;
	printf("mode=%s rows=%lu scans=%u batch=%u cache_kib=%d insert_s=%.3f last_insert_s=%.3f"
	       " index_s=%.3f close_s=%.3f rows_per_s=%.0f cpu_s=%.3f rows_per_cpu_s=%.0f"
	       " db_mib=%.1f",
	       b.norm ? "norm" : "flat", b.rows, b.scans, b.batch_rows, b.cache_kib, insert_s,
	       last_s, index_s, close_s, rows / total, cpu_s, rows / cpu_s,
	       sb.st_size / 1048576.0);
	if (b.queries)
		time_queries(&b);
	putchar('\n');
	remove_db(b.db);
	return 0;
}
