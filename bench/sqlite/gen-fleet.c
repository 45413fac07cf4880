/*
 * gen-fleet.c - one host's daily scan of a simulated fleet, written as a scan
 * writes it (`make bench-fleet-scale`, bench/fleet-scale).
 *
 *     gen-fleet [-n FILES] [-s SEED] [-k KEEP] [-q] HOST DAY DB
 *     gen-fleet [-n FILES] [-s SEED] --hunt COUNT
 *
 * Appends to DB (a fidx SQLite database, made when missing) the complete,
 * sealed scan of root / that host number HOST (named hostNN, the scan row's
 * host) would record on day DAY (1, 2, ...), through the store API as `fidx
 * scan` does: fidx_store_begin_scan(), one fidx_store_add() per entry (in one
 * transaction), fidx_store_end_scan() sealing it, fidx_store_build_indexes().
 * Then it keeps only the KEEP newest scans of DB (default 2: the previous day
 * and this one, what a host keeps to be compared with), deleting the older
 * ones' rows with SQL, as no fidx command deletes scans.  One line on stdout:
 *
 *     host03 day 7: 202,411 entries (1,612 modified, 201 added, 199 removed) 1.92 s
 *     (rows 0.81, seal+commit 0.31, index 0.52, prune 0.28), 105,420 rows/s
 *
 * The simulated host.  Day 1 holds FILES regular files (slots 0..FILES-1) in
 * FILES/50 folders under a few top-level trees (/usr/lib, /home/alice/src,
 * ...), with their folders.  Each later day k changes about 1% of the
 * entries: a live slot is modified with probability 0.8% (a new version: new
 * size, times, digest; its inode kept, or a new one for a quarter of them, as
 * an editor's save-by-rename does) or removed with probability 0.1%, and
 * FILES/1000 new slots are added.  Everything is a function of (SEED, host,
 * slot, day), so that any day of any host is made without its earlier days,
 * and the same arguments always make the same rows (the UUID and every time
 * included).  Version 0 of 70% of the slots is the same file on every host
 * (same size and digest, an installed package's file); the rest, and every
 * later version, are the host's own.  Digests: SHA-256 (fidx scan's
 * default), pseudo-random from the content key, not a hash of any content.
 *
 * --hunt COUNT prints the SHA-256 (hex, as sha256sum does) of COUNT files
 * every host has on day 1 (shared slots, version 0): the hits of a hunt.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "record.h"
#include "store.h"

#define FILES_PER_FOLDER 50
#define DAY_NS (86400LL * 1000000000LL)
#define DAY1_NS (1764554400LL * 1000000000LL) /* 2025-12-01 02:00 UTC: day 1's scans */
#define P_MODIFY 8000                          /* per million, per day */
#define P_REMOVE 1000

/* The top-level trees the folders are spread over, with their owner. */
static const struct {
	const char *path;
	uint32_t uid;
} tops[] = {
	{"/usr/lib/x86_64-linux-gnu", 0}, {"/usr/share/doc", 0},   {"/usr/share/locale", 0},
	{"/opt/app/lib", 0},              {"/var/lib/app/data", 0}, {"/srv/www/static", 33},
	{"/home/alice/src", 1000},        {"/home/bob/docs", 1001},
};
#define NTOPS (sizeof(tops) / sizeof(tops[0]))

static const char *const exts[] = {".so", ".txt", ".c", ".h", ".py", ".json", ".gz", ".png",
				   ".log", ""};
#define NEXTS (sizeof(exts) / sizeof(exts[0]))

/* The generator's settings. */
struct gen {
	uint32_t files;       /* slots on day 1 */
	uint64_t seed;        /* of every choice */
	unsigned host;        /* host number */
	unsigned day;         /* 1, 2, ... */
	unsigned keep;        /* scans DB keeps */
};

/* One slot as it stands on the day made. */
struct slot {
	uint32_t id;          /* slot number */
	uint32_t folder;      /* its folder */
	uint16_t version;     /* 0 as born, +1 per modification */
	uint16_t born;        /* the day it appeared (1 for the first day's) */
	uint16_t changed;     /* the day of its last modification (born when none) */
};

/* splitmix64's finaliser: a well-mixed 64-bit function of x. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* A function of four values and the seed. */
static uint64_t key4(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
	return mix(mix(mix(seed ^ mix(a)) ^ b) ^ c);
}

/* The folder of a slot: the same on every host (one software layout). */
static uint32_t folder_of(const struct gen *g, uint32_t id)
{
	uint32_t nfolders = g->files / FILES_PER_FOLDER ? g->files / FILES_PER_FOLDER : 1;
	return (uint32_t)(key4(g->seed, 1, id, 0) % nfolders);
}

/* Whether version 0 of a slot is the same file on every host. */
static bool shared(const struct gen *g, uint32_t id)
{
	return id < g->files && key4(g->seed, 2, id, 0) % 10 < 7;
}

/* The key of a version's content: what its size and digest derive from. */
static uint64_t content_key(const struct gen *g, uint32_t id, unsigned version)
{
	if (version == 0 && shared(g, id))
		return key4(g->seed, 3, id, 0);
	return key4(g->seed, 4 + ((uint64_t)g->host << 8), id, version);
}

/* Fills d (32 bytes) with a version's SHA-256. */
static void digest_of(uint64_t ck, uint8_t *d)
{
	for (int i = 0; i < 4; i++) {
		uint64_t r = mix(ck + (uint64_t)i * 0x632be59bd9b4e019ULL);
		memcpy(d + 8 * i, &r, 8);
	}
}

/* A size from a content key: mostly small, a few large (1 B .. ~64 MiB). */
static uint64_t size_of(uint64_t ck)
{
	unsigned bits = (unsigned)(ck % 27);
	if (bits > 14)
		bits = (bits - 14) / 2 + 14;  /* fewer large ones */
	return (1ULL << bits) + (ck >> 32) % (1ULL << bits);
}

/* New slots of day k (k >= 2): FILES/1000, numbered after those of earlier days. */
static uint32_t added_per_day(const struct gen *g)
{
	return g->files / 1000 ? g->files / 1000 : 1;
}

/*
 * Fills *s with slot id as it stands on g's day, counting into the counters
 * the change it went through on that very day.  Returns 1 when it exists
 * that day, 0 when it is not added yet, -1 when it was removed (s->changed:
 * the day it was).
 */
static int slot_state(const struct gen *g, uint32_t id, struct slot *s, unsigned *modified,
		       unsigned *removed)
{
	unsigned born = 1;
	if (id >= g->files)
		born = 2 + (id - g->files) / added_per_day(g);
	if (born > g->day)
		return 0;
	*s = (struct slot){.id = id, .folder = folder_of(g, id), .born = (uint16_t)born,
			   .changed = (uint16_t)born};
	for (unsigned k = born + 1; k <= g->day; k++) {
		uint64_t r = key4(g->seed, 5 + ((uint64_t)g->host << 8), id, k) % 1000000;
		if (r < P_MODIFY) {
			s->version++;
			s->changed = (uint16_t)k;
			if (k == g->day)
				++*modified;
		} else if (r < P_MODIFY + P_REMOVE) {
			if (k == g->day)
				++*removed;
			s->changed = (uint16_t)k;
			return -1;
		}
	}
	return 1;
}

/* A time of day k: its scan's start less up to a day, from a key (ns). */
static int64_t time_of_day(unsigned k, uint64_t key)
{
	return DAY1_NS + (int64_t)(k - 1) * DAY_NS - 600LL * 1000000000LL -
	       (int64_t)(key % (uint64_t)(DAY_NS - 3600LL * 1000000000LL));
}

static int cmp_slot(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	if (x->folder != y->folder)
		return x->folder < y->folder ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The path of folder f. */
static int folder_path(char *buf, size_t size, uint32_t f)
{
	return snprintf(buf, size, "%s/m%02u/d%05u", tops[f % NTOPS].path, (unsigned)((f / NTOPS) % 64), f);
}

/* What a scan of the day writes, and its totals. */
struct writer {
	struct fidx_store *st;
	struct fidx_record rec;
	struct fidx_scan_totals totals;
	char path[4096];
};

static void put(struct writer *w)
{
	struct fidx_error err;
	w->rec.has_meta = true;
	w->rec.path_len = strlen(w->path);
	w->rec.name_off = strrchr(w->path, '/') - w->path + 1;
	if (w->rec.path_len == 1)
		w->rec.name_off = 1;
	w->rec.ext_off = fidx_ext_offset(w->path, w->rec.name_off, w->rec.path_len);
	if (fidx_store_add(w->st, &w->rec, &err) < 0)
		die("%s", err.msg);
	w->totals.entries++;
	if (w->rec.type == 'f') {
		w->totals.files++;
		w->totals.bytes += w->rec.meta.size;
	} else {
		w->totals.dirs++;
	}
}

/* Adds a directory row whose last entry came or went at time mtime (ns). */
static void put_dir(struct writer *w, const char *path, int64_t mtime, uint64_t ino)
{
	snprintf(w->path, sizeof(w->path), "%s", path);
	struct fidx_record *r = &w->rec;
	r->type = 'd';
	r->digest_mask = 0;
	r->meta = (struct fidx_meta){.size = 4096, .blocks = 8, .mode = 040755, .nlink = 2,
				     .dev = 0x10302, .ino = ino, .has_btime = true};
	r->meta.mtime = r->meta.ctime = fidx_time_of_ns(mtime);
	r->meta.atime = fidx_time_of_ns(mtime + 3600LL * 1000000000LL);
	r->meta.btime = fidx_time_of_ns(DAY1_NS - 400 * DAY_NS);
	put(w);
}

/* Adds the row of slot s (its folder's path in dir). */
static void put_file(struct writer *w, const struct gen *g, const struct slot *s, const char *dir)
{
	uint64_t ck = content_key(g, s->id, s->version);
	struct fidx_record *r = &w->rec;
	const char *ext = exts[key4(g->seed, 6, s->id, 0) % NEXTS];
	snprintf(w->path, sizeof(w->path), "%s/f%07u%s", dir, s->id, ext);
	r->type = 'f';
	r->meta = (struct fidx_meta){.size = size_of(ck), .nlink = 1, .dev = 0x10302,
				     .uid = tops[s->folder % NTOPS].uid,
				     .has_btime = true};
	r->meta.gid = r->meta.uid;
	r->meta.mode = *ext == '\0' || strcmp(ext, ".so") == 0 ? 0100755 : 0100644;
	r->meta.blocks = (r->meta.size + 4095) / 4096 * 8;
	/* Version 0 of a day-1 slot is older than the simulation; later ones are of their day. */
	uint64_t bk = key4(g->seed, 7, s->id, 0);
	int64_t born = s->born == 1 ? DAY1_NS - DAY_NS - (int64_t)(bk % (1000 * (uint64_t)DAY_NS))
				    : time_of_day(s->born, bk);
	int64_t mtime = s->version == 0 ? born : time_of_day(s->changed, ck);
	uint64_t ino = 1000000 + s->id;
	if (s->version > 0 && ck % 4 == 0)
		ino = 100000000 + (uint64_t)s->id * 64 + s->version % 64;
	r->meta.ino = ino;
	r->meta.mtime = r->meta.ctime = fidx_time_of_ns(mtime);
	r->meta.btime = fidx_time_of_ns(ino >= 100000000 ? mtime : born);
	r->meta.atime = fidx_time_of_ns(mtime + (int64_t)(ck >> 40) % (3600LL * 1000000000LL));
	digest_of(ck, r->digest[FIDX_SHA256]);
	r->digest_mask = 1u << FIDX_SHA256;
	put(w);
}

/* Runs sql on db or dies. */
static void exec_or_die(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		die("%s: %s", sql, msg ? msg : sqlite3_errmsg(db));
}

/*
 * Deletes every scan of db but the keep newest, with its rows, digests, seal
 * rows, path index and local times, in one transaction.  The freed pages are
 * reused by the next day's scan (the file does not grow past two scans).
 */
static void prune(const char *path, unsigned keep)
{
	sqlite3 *db;
	char sql[1024];
	int64_t ids[64];
	int n = 0;
	sqlite3_stmt *s;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		die("cannot open '%s'", path);
	sqlite3_busy_timeout(db, 10000);
	snprintf(sql, sizeof(sql), "SELECT id FROM scan ORDER BY id DESC LIMIT -1 OFFSET %u", keep);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		die("%s: %s", sql, sqlite3_errmsg(db));
	while (sqlite3_step(s) == SQLITE_ROW && n < 64)
		ids[n++] = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (n == 0) {
		sqlite3_close(db);
		return;
	}
	exec_or_die(db, "BEGIN IMMEDIATE");
	for (int i = 0; i < n; i++) {
		int64_t id = ids[i];
		snprintf(sql, sizeof(sql),
			 "DELETE FROM file_digest WHERE file_id IN"
			 " (SELECT id FROM file WHERE scan_id = %1$" PRId64 ");"
			 "DELETE FROM file_seal WHERE scan_id = %1$" PRId64 ";"
			 "DELETE FROM file WHERE scan_id = %1$" PRId64 ";"
			 "DELETE FROM path_block WHERE key BETWEEN %2$" PRId64 " AND %3$" PRId64 ";"
			 "DELETE FROM path_trigram WHERE key BETWEEN %4$" PRId64 " AND %5$" PRId64 ";"
			 "DELETE FROM path_index WHERE scan_id = %1$" PRId64 ";"
			 "DELETE FROM local_time WHERE scan_id = %1$" PRId64 ";"
			 "DELETE FROM scan WHERE id = %1$" PRId64 ";",
			 id, id << 32, (int64_t)((id << 32) | 0xffffffff), id << 24, (int64_t)((id << 24) | 0xffffff));
		exec_or_die(db, sql);
	}
	exec_or_die(db, "COMMIT");
	if (sqlite3_close(db) != SQLITE_OK)
		die("cannot close '%s'", path);
}

/* Prints the SHA-256 of count files every host has on day 1. */
static void hunt(const struct gen *g, unsigned count)
{
	uint8_t d[32];
	for (uint32_t id = 0; id < g->files && count > 0; id += 97) {
		if (!shared(g, id))
			continue;
		digest_of(content_key(g, id, 0), d);
		for (int i = 0; i < 32; i++)
			printf("%02x", d[i]);
		printf("  f%07u\n", id);
		count--;
	}
}

static void usage(void)
{
	fputs("usage: gen-fleet [-n FILES] [-s SEED] [-k KEEP] [-q] HOST DAY DB\n"
	      "       gen-fleet [-n FILES] [-s SEED] --hunt COUNT\n", stderr);
	exit(2);
}

/* Prints n with thousands separators into a static buffer (one of four). */
static const char *commas(uint64_t n)
{
	static char bufs[4][32];
	static int next;
	char tmp[32], *out = bufs[next++ % 4];
	int len = snprintf(tmp, sizeof(tmp), "%" PRIu64, n), o = 0;
	for (int i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = tmp[i];
	}
	out[o] = '\0';
	return out;
}

int main(int argc, char **argv)
{
	struct gen g = {.files = 200000, .seed = 1, .keep = 2};
	long hunt_count = -1;
	bool quiet = false;
	static const struct option longs[] = {{"hunt", required_argument, NULL, 'H'}, {0}};
	int c;

	while ((c = getopt_long(argc, argv, "n:s:k:q", longs, NULL)) != -1) {
		switch (c) {
		case 'n': g.files = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 's': g.seed = strtoull(optarg, NULL, 10); break;
		case 'k': g.keep = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'q': quiet = true; break;
		case 'H': hunt_count = strtol(optarg, NULL, 10); break;
		default: usage();
		}
	}
	if (g.files < 1000 || g.files > 100000000)
		die("-n: from 1000 to 100000000 files");
	if (hunt_count >= 0) {
		hunt(&g, (unsigned)hunt_count);
		return 0;
	}
	if (argc - optind != 3 || g.keep < 1)
		usage();
	g.host = (unsigned)strtoul(argv[optind], NULL, 10);
	g.day = (unsigned)strtoul(argv[optind + 1], NULL, 10);
	const char *dbpath = argv[optind + 2];
	if (g.day < 1 || g.day > 10000)
		die("DAY: from 1");

	double t0 = now();
	/* The day's slots, by folder. */
	uint32_t nslots = g.files + (g.day - 1) * added_per_day(&g);
	struct slot *slots = xmalloc(nslots * sizeof(*slots));
	uint32_t nfolders = g.files / FILES_PER_FOLDER ? g.files / FILES_PER_FOLDER : 1;
	int64_t *dir_mtime = xmalloc(nfolders * sizeof(*dir_mtime));
	unsigned modified = 0, removed = 0, added = g.day > 1 ? added_per_day(&g) : 0;
	size_t n = 0;
	for (uint32_t f = 0; f < nfolders; f++)
		dir_mtime[f] = DAY1_NS - 30 * DAY_NS - (int64_t)(key4(g.seed, 8, f, 0) % (300 *
						     (uint64_t)DAY_NS));
	for (uint32_t id = 0; id < nslots; id++) {
		struct slot s;
		int state = slot_state(&g, id, &s, &modified, &removed);
		int64_t t = 0;
		if (state > 0) {
			slots[n++] = s;
			if (s.born > 1)  /* its folder's mtime is the newest addition's */
				t = time_of_day(s.born, key4(g.seed, 7, id, 0));
		} else if (state < 0) {  /* ... or removal's */
			t = time_of_day(s.changed, key4(g.seed, 9, id, 0));
		}
		if (state != 0 && t > dir_mtime[s.folder])
			dir_mtime[s.folder] = t;
	}
	qsort(slots, n, sizeof(*slots), cmp_slot);
	size_t *first = xmalloc((nfolders + 1) * sizeof(*first));  /* folder f: first[f] .. first[f + 1] */
	for (uint32_t f = 0, k = 0; f <= nfolders; f++) {
		while (k < n && slots[k].folder < f)
			k++;
		first[f] = k;
	}

	/* The folders and their ancestors, each once, sorted. */
	size_t ndirs = 0, cap = (size_t)nfolders * 8 + 64;
	char **dirs = xmalloc(cap * sizeof(*dirs));
	char buf[4096];
	for (uint32_t f = 0; f < nfolders; f++) {
		folder_path(buf, sizeof(buf), f);
		for (char *p = buf + 1;; p++) {
			if (*p == '/' || *p == '\0') {
				char save = *p;
				*p = '\0';
				dirs[ndirs++] = strdup(buf);
				*p = save;
				if (!save)
					break;
			}
		}
		if (ndirs + 16 > cap)
			die("too many folders");
	}
	qsort(dirs, ndirs, sizeof(*dirs), cmp_str);
	size_t u = 0;
	for (size_t i = 0; i < ndirs; i++) {
		if (u && strcmp(dirs[u - 1], dirs[i]) == 0)
			free(dirs[i]);
		else
			dirs[u++] = dirs[i];
	}
	ndirs = u;

	/* The scan. */
	struct fidx_error err;
	struct fidx_store_opts opts = {.batch_rows = 0xffffffffu};
	struct writer w = {0};
	w.rec.path = w.path;
	w.st = fidx_store_open(dbpath, FIDX_STORE_WRITE, &opts, &err);
	if (!w.st)
		die("%s", err.msg);
	char host[32], uuid[40];
	snprintf(host, sizeof(host), "host%02u", g.host);
	uint64_t u1 = key4(g.seed, 10, g.host, g.day), u2 = key4(g.seed, 11, g.host, g.day);
	snprintf(uuid, sizeof(uuid), "%08x-%04x-4%03x-%04x-%012" PRIx64, (unsigned)(u1 >> 32),
		 (unsigned)(u1 >> 16) & 0xffff, (unsigned)u1 & 0xfff,
		 0x8000 | ((unsigned)(u2 >> 48) & 0x3fff), (uint64_t)(u2 & 0xffffffffffff));
	int64_t started = DAY1_NS + (int64_t)(g.day - 1) * DAY_NS + (int64_t)g.host * 60000000000LL;
	struct fidx_scan_info info = {
		.root = "/", .host = host, .os = "Debian GNU/Linux 12 (bookworm)",
		.kernel = "6.1.0-28-amd64", .arch = "x86_64", .version = FIDX_VERSION,
		.options = "{\"hash\":\"sha256\",\"jobs\":8,\"xdev\":false,\"follow\":false,"
			   "\"stat\":true,\"io\":\"auto\",\"drop_cache\":false,\"exclude\":[]}",
		.started_ns = started, .uuid = uuid,
	};
	w.rec.scan_id = fidx_store_begin_scan(w.st, &info, &err);
	if (w.rec.scan_id < 0)
		die("%s", err.msg);
	double t1 = now();
	put_dir(&w, "/", DAY1_NS - 400 * DAY_NS, 2);
	for (size_t i = 0; i < ndirs; i++) {
		/* A leaf folder ends with /dNNNNN: its files follow it. */
		const char *leaf = strrchr(dirs[i], '/');
		bool is_leaf = leaf[1] == 'd' && strlen(leaf) == 7 && leaf[2] >= '0' && leaf[2] <= '9';
		uint32_t f = is_leaf ? (uint32_t)strtoul(leaf + 2, NULL, 10) : 0;
		put_dir(&w, dirs[i], is_leaf ? dir_mtime[f] : DAY1_NS - 300 * DAY_NS, 10 + i);
		if (!is_leaf)
			continue;
		for (size_t k = first[f]; k < first[f + 1]; k++)
			put_file(&w, &g, &slots[k], dirs[i]);
	}
	double t2 = now();
	w.totals.finished_ns = started + 90LL * 1000000000LL;
	w.totals.status = "complete";
	uint8_t seal[FIDX_SEAL_LEN];
	if (fidx_store_end_scan(w.st, w.rec.scan_id, &w.totals, seal, &err) != 1)
		die("cannot end the scan: %s", err.msg);
	double t3 = now();
	if (fidx_store_build_indexes(w.st, &err) < 0)
		die("%s", err.msg);
	if (fidx_store_close(w.st, &err) < 0)
		die("%s", err.msg);
	double t4 = now();
	prune(dbpath, g.keep);
	double t5 = now();
	if (!quiet)
		printf("%s day %u: %s entries (%u modified, %u added, %u removed) %.2f s (slots %.2f,"
		       " rows %.2f, seal+commit %.2f, index %.2f, prune %.2f), %s rows/s\n", host,
		       g.day, commas(w.totals.entries), modified, added, removed, t5 - t0, t1 - t0,
		       t2 - t1, t3 - t2, t4 - t3, t5 - t4,
		       commas((uint64_t)(w.totals.entries / (t5 - t0))));
	for (size_t i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	free(slots);
	free(first);
	free(dir_mtime);
	return 0;
}
