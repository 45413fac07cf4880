/*
 * dupes.c - the duplicate finder behind `fidx dupes` (dupes.h).
 *
 * Data.  One pass over the regular files of the selected scans reads every
 * digest recorded for them (the scan's sha256 and sha512 columns, the later
 * edges and sha256 of FIDX_LATER_COLUMNS); qsort() by size, device, inode and path
 * then turns the sizes that two inodes share into
 *
 *   rows     one per path (struct of arrays: id, mtime, path, link target)
 *   nodes    one per inode: what is read and compared; its rows are
 *            consecutive, in byte order of path
 *   spans    one per size: nodes[a, b), two inodes at least
 *
 * Paths live in an arena of large chunks.
 *
 * Stages.  A span whose nodes all have a SHA-256 (or all a SHA-512) is
 * decided without reading.  In the others (plan()):
 *
 *   small reads   threads (4 per job; 1 on an HDD) take SMALL_BATCH nodes at
 *                 a time from the work list, sorted by device and inode.  A
 *                 small node (<= FIDX_DUPES_WHOLE_MAX) is read whole: its
 *                 SHA-256 (fidx_hash_fd()); a larger one
 *                 at both ends: its edges, XXH3-128 of the first and last
 *                 FIDX_DUPES_EDGE_BLOCK bytes.  A batch whose first file is
 *                 not in the page cache (a 1-byte preadv2 RWF_NOWAIT says so
 *                 without waiting) is opened at once with POSIX_FADV_WILLNEED
 *                 on what will be read, so that many reads are in flight on a
 *                 cold cache (docs/BENCHMARKS.md, "Content hashing").
 *   regroup()     large nodes of equal edges, two at least, lacking a SHA-256
 *   whole reads   the scan's hashing stage (hashio.c) with SHA-256 only: its
 *                 readers, its cold-cache read-ahead, its streamers for big
 *                 files
 *
 * A thread writes only the nodes it took; the main thread reads them after
 * joining every thread.  Exactness: once a file was read, fstat() must
 * still show the recorded device, inode, size and mtime for its bytes to
 * count (fidx_hashio_check(), as in the whole reads), and only equal
 * SHA-256 (or recorded SHA-512) digests of equal sizes put files in one
 * group: edges only rule files out.
 */
#include "dupes.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifndef _WIN32
#include <sys/uio.h>
#endif
#include <unistd.h>

#include "arena.h"
#include "blockdev.h"
#include "fdutil.h"
#include "hash.h"
#include "queue.h"
#include "scan.h"
#include "sysinfo.h"

#define SMALL_BATCH 32          /* files a small-reads thread takes (and opens ahead) at once */
#define PREFETCH_FILES 256      /* files hashio may open ahead when cold (as scan.c) */
#define WHOLE_QUEUE_CAP 4096    /* records waiting for the hashing stage ... */
#define WHOLE_PUSH 256          /* ... handed to it this many at a time */
#define EDGES_LEN 16            /* bytes of an edge hash (XXH3-128) */

/* What is known of a node. */
enum {
	K_SHA256 = 1,      /* digest[0..32) is its SHA-256 */
	K_SHA512 = 2,      /* digest[0..64) is its SHA-512 (the scan's; no SHA-256 known) */
	K_EDGES = 4,       /* edges is its edge hash */
	K_NEW_SHA256 = 8,  /* the SHA-256 was computed now: to be stored */
	K_NEW_EDGES = 16,  /* the edges were computed now: to be stored */
	K_FAILED = 32,     /* changed or unreadable: left out (error says why) */
};

/* One inode among the candidates. */
struct node {
	uint64_t size, dev, ino;   /* as recorded (its first row) */
	uint32_t host;             /* its host: an index of the engine's hosts */
	bool in_image;             /* an entry of a disk image (fidx scan --image): never read */
	struct fidx_time mtime;    /* as recorded (its first row) */
	struct fidx_time ctime;    /* as recorded (its first row), when has_ctime */
	bool has_ctime;
	size_t row, nrows;         /* its rows: [row, row + nrows) */
	char *error;               /* K_FAILED: why ("open: Permission denied", ...) */
	uint8_t known;             /* K_* */
	uint8_t edges[EDGES_LEN];  /* K_EDGES: XXH3-128 of the first and last blocks */
	uint8_t digest[64];        /* K_SHA256 or K_SHA512: the content's digest */
};

/* The nodes of one size, and how they are decided. */
struct span {
	size_t a, b;               /* nodes[a, b) */
	enum fidx_digest algo;     /* FIDX_SHA512 when every node had only a SHA-512 */
};

/* Everything a search holds, from the rows loaded to the groups' files. */
struct fidx_dupes_engine {
	const struct fidx_dupes_opts *o;
	size_t nrows, cap_rows;
	int64_t *ids;              /* file.id of each row */
	struct fidx_time *mtimes;  /* the mtime of each row */
	char **paths;              /* each row's path, in the arena */
	char **links;              /* a followed symlink's target (the file is opened
				      through the link), else NULL */
	struct fidx_arena arena;   /* the paths and link targets */
	struct node *nodes;        /* the candidates, span by span */
	size_t nnodes, cap_nodes;
	struct span *spans;        /* one per size two inodes share, ascending */
	size_t nspans, cap_spans;
	size_t *work;              /* node indexes to read in the current stage */
	size_t nwork;
	struct fidx_queue *whole_in; /* the hashing stage's input, while it runs */
	struct fidx_dupes_file *files; /* the groups' files */
	const char **hosts;        /* the hosts of the selected scans, each once (NULL: a
				      scan with none); one host unless the store is a fleet's */
	bool *readable;            /* hosts[i] is this machine (or the only host) */
	size_t nhosts;
	atomic_bool stop;          /* a stage failed: wind down */
	pthread_mutex_t fail_lock; /* guards fail_msg */
	char *fail_msg;            /* the first fatal failure of a stage */
	uint8_t empty_sha256[32];  /* SHA-256 of no bytes (for --empty) */
};

/* ------------------------------------------------------------------ memory --- */

/* Grows *arr (of *cap elements of size sz) to hold need.  Returns 0, or -1. */
static int grow(void **arr, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 1024;
	while (ncap < need)
		ncap *= 2;
	void *p = realloc(*arr, ncap * sz);
	if (!p)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* Makes room for one more row in every row array.  Returns 0, or -1. */
static int grow_rows(struct fidx_dupes_engine *e)
{
	if (e->nrows < e->cap_rows)
		return 0;
	size_t cap = e->cap_rows ? 2 * e->cap_rows : 4096;
	int64_t *ids = realloc(e->ids, cap * sizeof(*ids));
	if (ids)
		e->ids = ids;
	struct fidx_time *mt = realloc(e->mtimes, cap * sizeof(*mt));
	if (mt)
		e->mtimes = mt;
	char **p = realloc(e->paths, cap * sizeof(*p));
	if (p)
		e->paths = p;
	char **l = realloc(e->links, cap * sizeof(*l));
	if (l)
		e->links = l;
	if (!ids || !mt || !p || !l)
		return -1;
	e->cap_rows = cap;
	return 0;
}

/* Records the first fatal failure of a stage and makes every stage stop.  Thread-safe. */
static void engine_fail(struct fidx_dupes_engine *e, const char *msg)
{
	pthread_mutex_lock(&e->fail_lock);
	if (!e->fail_msg)
		e->fail_msg = strdup(msg);
	pthread_mutex_unlock(&e->fail_lock);
	atomic_store(&e->stop, true);
}

/* Leaves node n out, with why it failed ("op: strerror(err)", or op alone when err is 0). */
static void node_failed(struct fidx_dupes_engine *e, struct node *n, const char *op, int err)
{
	char msg[256];
	if (err)
		snprintf(msg, sizeof(msg), "%s: %s", op, strerror(err));
	else
		snprintf(msg, sizeof(msg), "%s", op);
	n->known |= K_FAILED;
	free(n->error);
	if (!(n->error = strdup(msg)))
		engine_fail(e, "out of memory");
}

/* ----------------------------------------------------------------- loading --- */

/* A regular file's row as loaded, before the candidates are picked. */
struct lrow {
	int64_t id;                /* file.id */
	uint32_t host;             /* its scan's host: an index of the engine's hosts */
	bool in_image;             /* an entry of a disk image: dev is its scan's and
				      partition's, and a stream's ino its row's id */
	struct fidx_time mtime;    /* its mtime */
	struct fidx_time ctime;    /* its ctime, when has_ctime */
	bool has_ctime;
	uint64_t size, dev, ino;   /* file.size, file.dev, file.ino */
	char *path, *link;         /* file.path, file.link_target (or NULL), in the arena */
	uint32_t dig;              /* its entry in the digest pool, or NO_DIG */
};

#define NO_DIG UINT32_MAX

/* What a row had recorded: K_SHA256, K_SHA512, K_EDGES and their values. */
struct rowdig {
	uint8_t known;             /* K_SHA256, K_SHA512, K_EDGES: which are set */
	uint8_t edges[EDGES_LEN];  /* file_digest.edges (of this build's block size) */
	uint8_t sha256[32];        /* file.sha256, else file_digest.sha256 */
	uint8_t sha512[64];        /* file.sha512 */
};

/* Everything loaded. */
struct loaded {
	struct lrow *rows;         /* every regular file's row */
	size_t n, cap;
	struct rowdig *digs;       /* the digest pool: rows with something recorded */
	size_t ndigs, capdigs;
};

/* The columns a load reads. */
#define LOAD_COLUMNS                                                                          \
	(FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_LINK_TARGET) |                     \
	 FIDX_COLUMN(FIDX_COL_SIZE) | FIDX_COLUMN(FIDX_COL_DEV) | FIDX_COLUMN(FIDX_COL_INO) |   \
	 FIDX_COLUMN(FIDX_COL_MTIME) | FIDX_COLUMN(FIDX_COL_CTIME) |                            \
	 FIDX_DIGEST_COLUMN(FIDX_SHA256) |                                                      \
	 FIDX_DIGEST_COLUMN(FIDX_SHA512) | FIDX_COLUMN(FIDX_COL_EDGE_BLOCK) |                  \
	 FIDX_COLUMN(FIDX_COL_EDGES) | FIDX_COLUMN(FIDX_COL_LATER_SHA256) |                   \
	 FIDX_COLUMN(FIDX_COL_TYPE) | FIDX_COLUMN(FIDX_COL_SCAN_ID) |                          \
	 FIDX_COLUMN(FIDX_COL_STATE) | FIDX_COLUMN(FIDX_COL_STREAM))

/* Copies digest column c of row into dst when it is exactly len bytes.  Returns whether it did. */
static bool take_blob(const struct fidx_row *row, enum fidx_col c, uint8_t *dst, size_t len)
{
	if (fidx_row_len(row, c) != len)
		return false;
	memcpy(dst, row->v[c].p, len);
	return true;
}

/* The host of each selected scan (load()). */
struct scan_hosts {
	const int64_t *scans;      /* the scan ids, ascending */
	const uint32_t *host;      /* the host of each: an index of the engine's hosts */
	size_t n;
};

/* The host index of scan (0 when it is not one of the selected: one host only then). */
static uint32_t host_of(const struct scan_hosts *sh, int64_t scan)
{
	size_t lo = 0, hi = sh->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sh->scans[mid] == scan)
			return sh->host[mid];
		if (sh->scans[mid] < scan)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/*
 * Fills the engine's hosts from the selected scans and h[i] with the host
 * of scan i.  A host's files can be read when it is this machine, or when
 * every scan is of one host (a database read where it was made, or a copy of
 * it: each file is checked against its record anyway).  Returns 0, or -1
 * (ENOMEM).
 */
static int find_hosts(struct fidx_dupes_engine *e, const struct fidx_selection *sel, uint32_t *h)
{
	size_t n = sel->scans.n;
	char here[256] = "";
	if (!(e->hosts = calloc(n ? n : 1, sizeof(*e->hosts))) ||
	    !(e->readable = calloc(n ? n : 1, sizeof(*e->readable))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *name = sel->scans.rows[i].host;
		size_t k = 0;
		while (k < e->nhosts && !(e->hosts[k] == name ||
					  (e->hosts[k] && name && strcmp(e->hosts[k], name) == 0)))
			k++;
		if (k == e->nhosts) {
			/* Copied: the groups outlive the selection. */
			if (name && !(name = fidx_arena_copy(&e->arena, name, strlen(name))))
				return -1;
			e->hosts[e->nhosts++] = name;
		}
		h[i] = (uint32_t)k;
	}
	if (gethostname(here, sizeof(here) - 1) < 0)
		here[0] = '\0';
	for (size_t k = 0; k < e->nhosts; k++)
		e->readable[k] = e->nhosts == 1 || (e->hosts[k] && strcmp(e->hosts[k], here) == 0);
	return 0;
}

/*
 * Reads one row into l when it is a candidate (a size of at least min, a
 * device, an inode and an mtime: a hostile row may lack them): its
 * metadata, its path and link target into the arena, and its recorded
 * digests into the pool.  Returns 0, or -1 (ENOMEM).
 */
static int read_row(struct fidx_dupes_engine *e, struct loaded *l, const struct fidx_row *row,
		    uint64_t min, const struct scan_hosts *sh)
{
	const char *path = fidx_row_text(row, FIDX_COL_PATH);
	const char *link = fidx_row_text(row, FIDX_COL_LINK_TARGET);
	struct rowdig dg = {0};
	struct fidx_time mtime;

	if (!fidx_row_has(row, FIDX_COL_SIZE) || fidx_row_u64(row, FIDX_COL_SIZE) < min ||
	    !fidx_row_has(row, FIDX_COL_DEV) || !fidx_row_has(row, FIDX_COL_INO) ||
	    !fidx_row_time(row, FIDX_COL_MTIME, &mtime))
		return 0;
	if (grow((void **)&l->rows, &l->cap, l->n + 1, sizeof(*l->rows)) < 0)
		return -1;
	struct lrow *r = &l->rows[l->n];
	*r = (struct lrow){
		.id = fidx_row_int(row, FIDX_COL_ID), .mtime = mtime,
		.size = fidx_row_u64(row, FIDX_COL_SIZE), .dev = fidx_row_u64(row, FIDX_COL_DEV),
		.ino = fidx_row_u64(row, FIDX_COL_INO), .dig = NO_DIG,
		.host = host_of(sh, fidx_row_int(row, FIDX_COL_SCAN_ID)),
	};
	r->has_ctime = fidx_row_time(row, FIDX_COL_CTIME, &r->ctime);
	/* An image's entry: its inode is one of its partition in its scan (two images hold
	 * the same numbers), a stream a file of its own beside the file it belongs to. */
	if (fidx_row_has(row, FIDX_COL_STATE)) {
		r->in_image = true;
		r->dev = (uint64_t)fidx_row_int(row, FIDX_COL_SCAN_ID) << 32 | (r->dev & 0xffffffff);
		if (fidx_row_has(row, FIDX_COL_STREAM))
			r->ino = (uint64_t)r->id | UINT64_C(1) << 63;
	}
	if (!path ||
	    !(r->path = fidx_arena_copy(&e->arena, path, fidx_row_len(row, FIDX_COL_PATH))) ||
	    (link && !(r->link = fidx_arena_copy(&e->arena, link,
						 fidx_row_len(row, FIDX_COL_LINK_TARGET)))))
		return -1;
	if (take_blob(row, FIDX_COL_SHA256, dg.sha256, 32) ||
	    take_blob(row, FIDX_COL_LATER_SHA256, dg.sha256, 32))
		dg.known |= K_SHA256;
	if (take_blob(row, FIDX_COL_SHA512, dg.sha512, 64))
		dg.known |= K_SHA512;
	if (fidx_row_int(row, FIDX_COL_EDGE_BLOCK) == FIDX_DUPES_EDGE_BLOCK &&
	    take_blob(row, FIDX_COL_EDGES, dg.edges, EDGES_LEN))
		dg.known |= K_EDGES;
	if (dg.known) {
		if (l->ndigs >= NO_DIG ||
		    grow((void **)&l->digs, &l->capdigs, l->ndigs + 1, sizeof(*l->digs)) < 0)
			return -1;
		l->digs[l->ndigs] = dg;
		r->dig = (uint32_t)l->ndigs++;
	}
	l->n++;
	return 0;
}

/* Orders rows by host and path, the newest (highest id) first among equal paths. */
static int cmp_path_newest(const void *a, const void *b)
{
	const struct lrow *x = a, *y = b;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	int c = strcmp(x->path, y->path);
	if (c)
		return c;
	return x->id > y->id ? -1 : x->id < y->id;
}

/*
 * Orders rows by size, host, device, inode, then path (a node's rows in byte
 * order): two hosts' files are never one inode.
 */
static int cmp_candidate(const void *a, const void *b)
{
	const struct lrow *x = a, *y = b;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return strcmp(x->path, y->path);
}

/*
 * Keeps a path recorded by several selected scans of a host once, from the
 * newest scan (the highest row id): the same path twice is one file, not two.
 */
static void drop_repeated_paths(struct loaded *l)
{
	size_t out = 0;
	qsort(l->rows, l->n, sizeof(*l->rows), cmp_path_newest);
	for (size_t i = 0; i < l->n; i++)
		if (out == 0 || l->rows[out - 1].host != l->rows[i].host ||
		    strcmp(l->rows[out - 1].path, l->rows[i].path) != 0)
			l->rows[out++] = l->rows[i];
	l->n = out;
}

/* Adds what row r had recorded to node n, when r describes n as it was read. */
static void take_digests(struct node *n, const struct lrow *r, const struct loaded *l)
{
	/* A row of the same inode with another mtime is another version of it. */
	if (r->dig == NO_DIG || !fidx_time_eq(r->mtime, n->mtime))
		return;
	const struct rowdig *dg = &l->digs[r->dig];
	if (!(n->known & K_SHA256) && (dg->known & K_SHA256)) {
		memcpy(n->digest, dg->sha256, 32);
		n->known = (n->known & ~K_SHA512) | K_SHA256;
	}
	if (!(n->known & (K_SHA256 | K_SHA512)) && (dg->known & K_SHA512)) {
		memcpy(n->digest, dg->sha512, 64);
		n->known |= K_SHA512;
	}
	if (!(n->known & K_EDGES) && (dg->known & K_EDGES)) {
		memcpy(n->edges, dg->edges, EDGES_LEN);
		n->known |= K_EDGES;
	}
}

/*
 * Turns the sorted rows of one size, l->rows[a, b), into nodes (one per
 * inode) and the engine's rows, when they hold two inodes at least; else
 * they are dropped.  Returns 0, or -1 (ENOMEM).
 */
static int add_span(struct fidx_dupes_engine *e, const struct loaded *l, size_t a, size_t b)
{
	const struct lrow *rows = l->rows;
	size_t inodes = 1;
	for (size_t i = a + 1; i < b; i++)
		inodes += rows[i].host != rows[i - 1].host || rows[i].dev != rows[i - 1].dev ||
			  rows[i].ino != rows[i - 1].ino;
	if (inodes < 2)
		return 0;
	if (grow((void **)&e->nodes, &e->cap_nodes, e->nnodes + inodes, sizeof(*e->nodes)) < 0 ||
	    grow((void **)&e->spans, &e->cap_spans, e->nspans + 1, sizeof(*e->spans)) < 0)
		return -1;
	e->spans[e->nspans++] = (struct span){.a = e->nnodes, .b = e->nnodes + inodes,
					      .algo = FIDX_SHA256};
	struct node *n = NULL;
	for (size_t i = a; i < b; i++) {
		const struct lrow *r = &rows[i];
		if (!n || r->host != n->host || r->dev != n->dev || r->ino != n->ino) {
			n = &e->nodes[e->nnodes++];
			*n = (struct node){.size = r->size, .dev = r->dev, .ino = r->ino, .host = r->host,
					   .in_image = r->in_image, .mtime = r->mtime,
					   .ctime = r->ctime, .has_ctime = r->has_ctime,
					   .row = e->nrows};
		}
		if (grow_rows(e) < 0)
			return -1;
		e->ids[e->nrows] = r->id;
		e->mtimes[e->nrows] = r->mtime;
		e->paths[e->nrows] = r->path;
		e->links[e->nrows] = r->link;
		e->nrows++;
		n->nrows++;
		take_digests(n, r, l);
	}
	return 0;
}

/*
 * Loads the regular files of the selected scans and keeps as candidates the
 * sizes with two inodes at least: their rows, nodes and spans.  Returns 0,
 * or -1 with err set.
 */
static int load(struct fidx_dupes_engine *e, struct fidx_store *st,
		const struct fidx_selection *sel, struct fidx_error *err)
{
	struct loaded l = {0};
	size_t nscans = sel->scans.n;
	int64_t *scans = calloc(nscans ? nscans : 1, sizeof(*scans));
	const char **roots = calloc(nscans ? nscans : 1, sizeof(*roots));
	uint32_t *hosts = calloc(nscans ? nscans : 1, sizeof(*hosts));
	struct fidx_rows *it = NULL;
	const struct fidx_row *row;
	int rc, ret = -1;

	if (!scans || !roots || !hosts || find_hosts(e, sel, hosts) < 0)
		goto nomem;
	struct scan_hosts sh = {scans, hosts, nscans};
	for (size_t i = 0; i < nscans; i++) {
		scans[i] = sel->scans.rows[i].id;
		roots[i] = sel->scans.rows[i].root;
	}
	struct fidx_rows_query q = {
		.scans = scans, .roots = roots, .nscans = nscans, .columns = LOAD_COLUMNS,
		.order = FIDX_ROWS_ANY, .types = FIDX_TYPE_FILE, .hidden = sel->hidden,
		.nhidden = sel->nhidden,
	};
	if (!(it = fidx_store_rows(st, &q, err)))
		goto out;
	while ((rc = fidx_rows_next(it, &row, err)) == 1)
		if (read_row(e, &l, row, e->o->empty ? 0 : 1, &sh) < 0)
			goto nomem;
	if (rc < 0)
		goto out;
	if (l.n && nscans > 1)
		drop_repeated_paths(&l);
	if (l.n)
		qsort(l.rows, l.n, sizeof(*l.rows), cmp_candidate);
	for (size_t a = 0, b; a < l.n; a = b) {
		for (b = a + 1; b < l.n && l.rows[b].size == l.rows[a].size; b++)
			;
		if (add_span(e, &l, a, b) < 0)
			goto nomem;
	}
	ret = 0;
	goto out;
nomem:
	fidx_fail_nomem(err);
out:
	fidx_rows_close(it);
	free(scans);
	free(roots);
	free(hosts);
	free(l.rows);
	free(l.digs);
	return ret;
}

/* ---------------------------------------------------------------- planning --- */

/*
 * Adds node i to the current stage's work; a file of another machine (a
 * fleet's store) cannot be read here and is left out.  Returns 0, or -1
 * (ENOMEM).
 */
static int want(struct fidx_dupes_engine *e, size_t *cap, size_t i)
{
	if (!e->readable[e->nodes[i].host] || e->nodes[i].in_image) {
		node_failed(e, &e->nodes[i], e->nodes[i].in_image
			    ? "inside a disk image, with no SHA-256 recorded (scan it with --hash"
			      " sha256 to compare it)"
			    : "on another host, with no SHA-256 recorded (scan it with --hash sha256"
			      " to compare it)", 0);
		return 0;
	}
	if (grow((void **)&e->work, cap, e->nwork + 1, sizeof(*e->work)) < 0)
		return -1;
	e->work[e->nwork++] = i;
	return 0;
}

/* Whether span sp needs no reading: every node has a SHA-256, or every one a SHA-512. */
static bool decided(struct fidx_dupes_engine *e, struct span *sp)
{
	bool all256 = true, all512 = true;
	for (size_t i = sp->a; i < sp->b; i++) {
		all256 &= (e->nodes[i].known & K_SHA256) != 0;
		all512 &= (e->nodes[i].known & K_SHA512) != 0;
	}
	if (!all256 && all512)
		sp->algo = FIDX_SHA512;
	return all256 || all512;
}

/*
 * Fills the work list of the first stage, the small reads: in each span not
 * decided, every small node (at most FIDX_DUPES_WHOLE_MAX bytes) without a
 * SHA-256, to read whole, and every larger node without edges.  Empty files
 * need nothing: their digest is known.  Returns 0, or -1 (ENOMEM).
 */
static int plan(struct fidx_dupes_engine *e)
{
	size_t cap = 0;
	e->nwork = 0;
	for (size_t s = 0; s < e->nspans; s++) {
		struct span *sp = &e->spans[s];
		uint64_t size = e->nodes[sp->a].size;
		if (size == 0) {
			for (size_t i = sp->a; i < sp->b; i++) {
				memcpy(e->nodes[i].digest, e->empty_sha256, 32);
				e->nodes[i].known = (e->nodes[i].known & ~K_SHA512) | K_SHA256;
			}
			continue;
		}
		if (decided(e, sp))
			continue;
		uint8_t need = size <= FIDX_DUPES_WHOLE_MAX ? K_SHA256 : K_EDGES;
		for (size_t i = sp->a; i < sp->b; i++)
			if (!(e->nodes[i].known & need) && want(e, &cap, i) < 0)
				return -1;
	}
	return 0;
}

/* Orders nodes: left-out ones last, then by edge hash. */
static int cmp_edges(const void *a, const void *b)
{
	const struct node *x = a, *y = b;
	int fx = (x->known & K_FAILED) != 0, fy = (y->known & K_FAILED) != 0;
	if (fx != fy)
		return fx - fy;
	return memcmp(x->edges, y->edges, EDGES_LEN);
}

/*
 * After the small reads: in each undecided span of large files, sorts the
 * nodes by edges and puts the nodes without a SHA-256 of every run of two or
 * more equal edges into the work list, to be read whole.  Returns 0, or -1
 * (ENOMEM).
 */
static int regroup(struct fidx_dupes_engine *e)
{
	size_t cap = 0;
	e->nwork = 0;
	for (size_t s = 0; s < e->nspans; s++) {
		struct span *sp = &e->spans[s];
		if (e->nodes[sp->a].size <= FIDX_DUPES_WHOLE_MAX || decided(e, sp))
			continue;
		qsort(e->nodes + sp->a, sp->b - sp->a, sizeof(*e->nodes), cmp_edges);
		for (size_t i = sp->a; i < sp->b;) {
			size_t j = i + 1;
			if (e->nodes[i].known & K_FAILED)
				break;
			while (j < sp->b && !(e->nodes[j].known & K_FAILED) &&
			       memcmp(e->nodes[i].edges, e->nodes[j].edges, EDGES_LEN) == 0)
				j++;
			for (size_t k = i; j - i >= 2 && k < j; k++)
				if (!(e->nodes[k].known & K_SHA256) && want(e, &cap, k) < 0)
					return -1;
			i = j;
		}
	}
	return 0;
}

/* Orders node indexes by device and inode: the order to read them in. */
static int cmp_inode(const void *a, const void *b, void *arg)
{
	const struct node *nodes = arg;
	const struct node *x = &nodes[*(const size_t *)a], *y = &nodes[*(const size_t *)b];
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/*
 * Resolves FIDX_IO_AUTO for the work list: FIDX_IO_HDD when the device of a
 * file to read reports itself rotational (blockdev.h), else FIDX_IO_SSD.
 */
static enum fidx_io_mode io_mode(const struct fidx_dupes_engine *e)
{
	if (e->o->io != FIDX_IO_AUTO)
		return e->o->io;
	uint64_t last = 0;
	for (size_t i = 0; i < e->nwork; i++) {
		uint64_t dev = e->nodes[e->work[i]].dev;
		if (i > 0 && dev == last)
			continue; /* the list is sorted by device */
		last = dev;
		if (fidx_dev_rotational((dev_t)dev) == 1)
			return FIDX_IO_HDD;
	}
	return FIDX_IO_SSD;
}

/* ------------------------------------------------------------ small reads --- */

/*
 * The first reading stage: a few blocks per file.  A small file is read
 * whole (SHA-256, fidx_hash_fd()), a larger one at both ends (edges).
 */
struct small_stage {
	struct fidx_dupes_engine *e; /* the nodes, the work list */
	atomic_size_t next;        /* next index of e->work to take */
	size_t batch;              /* indexes taken at once, <= SMALL_BATCH */
};

/* Opens node n's file for reading, as the scan's hashing does (hashio.h). */
static int open_node(const struct fidx_dupes_engine *e, const struct node *n)
{
	return fidx_hashio_open(e->paths[n->row], e->links[n->row] != NULL);
}

/*
 * Whether fd, from which bytes were read, is still node n's file as recorded
 * and unchanged (fidx_hashio_check()).  Returns NULL, or what failed: "stat"
 * (errno set) or "changed since the scan" (errno 0).
 */
static const char *check_node(int fd, const struct node *n, uint64_t bytes)
{
	const struct fidx_meta m = {.size = n->size, .dev = n->dev, .ino = n->ino,
				    .mtime = n->mtime};
	const char *op = fidx_hashio_check(fd, &m, bytes);
	return op && errno == 0 ? "changed since the scan" : op;
}

/* Whether the first byte of fd is not in the page cache (reading it would wait). */
static bool is_cold(int fd)
{
#ifdef _WIN32
	(void)fd; /* Windows cannot tell without reading: as if cached */
	return false;
#else
	char byte;
	struct iovec iov = {&byte, 1};
	return preadv2(fd, &iov, 1, 0, RWF_NOWAIT) < 0 && errno == EAGAIN;
#endif
}

/* Asks the kernel to start reading what read_small() will read of node n's open file fd. */
static void prefetch_small(int fd, const struct node *n)
{
	const off_t B = FIDX_DUPES_EDGE_BLOCK;
	if (n->size <= FIDX_DUPES_WHOLE_MAX) {
		posix_fadvise(fd, 0, (off_t)n->size, POSIX_FADV_WILLNEED);
	} else {
		posix_fadvise(fd, 0, B, POSIX_FADV_WILLNEED);
		posix_fadvise(fd, (off_t)n->size - B, B, POSIX_FADV_WILLNEED);
	}
}

/* Per-thread state of the small reads. */
struct small_reader {
	struct fidx_hasher *sha256;  /* whole small files */
	struct fidx_hasher *edges;   /* XXH3-128 of the two edge blocks */
	unsigned char *buf;          /* two edge blocks */
};

/*
 * Reads node n from its open file fd (-1: open it here) after checking it is
 * still the file recorded: a small file whole into n->digest (SHA-256), a
 * larger one's edges into n->edges; or leaves n out with why.  Closes fd.
 */
static void read_small(struct fidx_dupes_engine *e, struct small_reader *r, struct node *n,
		       int fd)
{
	const size_t B = FIDX_DUPES_EDGE_BLOCK;
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	const char *op;

	if (fd < 0 && (fd = open_node(e, n)) < 0) {
		node_failed(e, n, "open", errno);
		return;
	}
	/* Checked after reading: the bytes hashed must be the file recorded. */
	if (n->size <= FIDX_DUPES_WHOLE_MAX) {
		uint64_t bytes = 0;
		int hashed = fidx_hash_fd(r->sha256, fd, n->size, out, &bytes, NULL, e->o->cancel);
		if (hashed == -2)
			engine_fail(e, "cannot compute SHA-256: out of memory");
		else if (hashed < 0)
			node_failed(e, n, errno == ECANCELED ? "interrupted" : "read", errno);
		else if ((op = check_node(fd, n, bytes)))
			node_failed(e, n, op, errno);
		else {
			memcpy(n->digest, out[FIDX_SHA256], 32);
			n->known = (n->known & ~K_SHA512) | K_SHA256 | K_NEW_SHA256;
		}
	} else {
		ssize_t first = fidx_read_full(fd, r->buf, B, 0);
		ssize_t last = first == (ssize_t)B
				       ? fidx_read_full(fd, r->buf + B, B, (off_t)(n->size - B)) : 0;
		bool whole = first == (ssize_t)B && last == (ssize_t)B; /* else it shrank */
		if (first < 0 || last < 0)
			node_failed(e, n, "read", errno);
		else if ((op = check_node(fd, n, whole ? n->size : 0)))
			node_failed(e, n, op, errno);
		else if (fidx_hasher_reset(r->edges) < 0 || fidx_hasher_update(r->edges, r->buf, 2 * B) < 0 ||
			 fidx_hasher_final(r->edges, out) < 0)
			engine_fail(e, "cannot compute the edge digests: out of memory");
		else {
			memcpy(n->edges, out[FIDX_XXH128], EDGES_LEN);
			n->known |= K_EDGES | K_NEW_EDGES;
		}
	}
	close(fd);
}

/*
 * A small-reads thread: batches of the work list until it is done, cancelled
 * or failed.  A batch whose first file is not in the page cache is opened at
 * once and asked for ahead (prefetch_small()), so that many reads are in
 * flight on a cold cache.
 */
static void *small_thread(void *arg)
{
	struct small_stage *st = arg;
	struct fidx_dupes_engine *e = st->e;
	struct small_reader r = {
		.sha256 = fidx_hasher_create(1u << FIDX_SHA256),
		.edges = fidx_hasher_create(1u << FIDX_XXH128),
		.buf = aligned_alloc(4096, 2 * FIDX_DUPES_EDGE_BLOCK),
	};
	int fds[SMALL_BATCH];

	if (!r.sha256 || !r.edges || !r.buf) {
		engine_fail(e, "out of memory");
		goto out;
	}
	for (;;) {
		size_t start = atomic_fetch_add(&st->next, st->batch);
		if (start >= e->nwork || atomic_load_explicit(&e->stop, memory_order_relaxed) ||
		    (e->o->cancel && atomic_load_explicit(e->o->cancel, memory_order_relaxed)))
			break;
		size_t n = e->nwork - start < st->batch ? e->nwork - start : st->batch;
		struct node *first = &e->nodes[e->work[start]];
		for (size_t i = 0; i < n; i++)
			fds[i] = -1;
		/* A failed open is left to read_small(), which records why. */
		fds[0] = open_node(e, first);
		if (fds[0] >= 0 && n > 1 && is_cold(fds[0])) {
			prefetch_small(fds[0], first);
			for (size_t i = 1; i < n; i++) {
				struct node *nd = &e->nodes[e->work[start + i]];
				if ((fds[i] = open_node(e, nd)) >= 0)
					prefetch_small(fds[i], nd);
			}
		}
		for (size_t i = 0; i < n; i++)
			read_small(e, &r, &e->nodes[e->work[start + i]], fds[i]);
	}
out:
	fidx_hasher_destroy(r.sha256);
	fidx_hasher_destroy(r.edges);
	free(r.buf);
	return NULL;
}

/*
 * Descriptors a stage may hold: what the open-file limit (raised to its hard
 * limit) leaves after the reserve of scan.h (SQLite, stdio); at least 1.
 */
static size_t fd_room(void)
{
	unsigned long limit = fidx_raise_nofile();
	return limit > FIDX_FDS_RESERVED + 1 ? limit - FIDX_FDS_RESERVED : 1;
}

/* Runs the small reads over the work list.  Returns 0, or -1 (the stage failed). */
static int small_stage(struct fidx_dupes_engine *e, enum fidx_io_mode mode)
{
	unsigned nthreads = mode == FIDX_IO_HDD ? 1 : fidx_scan_io_threads(e->o->jobs);
	struct small_stage st = {.e = e};
	pthread_t tids[FIDX_MAX_JOBS];
	unsigned started = 0;

	if (nthreads > e->nwork)
		nthreads = e->nwork ? (unsigned)e->nwork : 1;
	st.batch = fd_room() / nthreads;
	st.batch = st.batch < 1 ? 1 : st.batch > SMALL_BATCH ? SMALL_BATCH : st.batch;
	for (; started < nthreads; started++)
		if (pthread_create(&tids[started], NULL, small_thread, &st) != 0)
			break;
	if (started == 0)
		small_thread(&st); /* no thread could start: read here */
	for (unsigned i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	return atomic_load(&e->stop) ? -1 : 0;
}

/* ------------------------------------------------------------ whole stage --- */

/* A hashing-stage record that knows its node. */
struct whole_rec {
	struct fidx_record rec;    /* first: hashio hands back &rec */
	size_t node;               /* its node's index */
};

/* hashio: each thread's context is the engine. */
static void *whole_start(void *arg)
{
	return arg;
}

/* hashio: a thread has no more records. */
static void whole_end(void *ctx, void *arg)
{
	(void)ctx;
	(void)arg;
}

/* hashio: the stage cannot go on; its input closes so that no thread waits on it. */
static void whole_failed(void *arg, const char *msg)
{
	struct fidx_dupes_engine *e = arg;
	engine_fail(e, msg);
	fidx_queue_abort(e->whole_in);
}

/* hashio: a file was read (or not); its digest or error goes to its node. */
static int whole_done(void *ctx, struct fidx_record *rec)
{
	struct fidx_dupes_engine *e = ctx;
	struct node *n = &e->nodes[((struct whole_rec *)rec)->node];
	if (rec->error) {
		/* The scan's wording; here the file changed after the scan. */
		bool changed = strcmp(rec->error, "changed during scan") == 0;
		node_failed(e, n, changed ? "changed since the scan" : rec->error, 0);
	} else {
		memcpy(n->digest, rec->digest[FIDX_SHA256], 32);
		n->known = (n->known & ~K_SHA512) | K_SHA256 | K_NEW_SHA256;
	}
	fidx_record_free(rec);
	return 0;
}

/* Makes the hashing-stage record of node i.  Returns NULL on ENOMEM. */
static struct fidx_record *whole_record(struct fidx_dupes_engine *e, size_t i)
{
	const struct node *n = &e->nodes[i];
	struct whole_rec *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->node = i;
	w->rec.type = 'f';
	w->rec.has_meta = true;
	w->rec.meta = (struct fidx_meta){.size = n->size, .dev = n->dev, .ino = n->ino,
					 .mtime = n->mtime, .mode = S_IFREG};
	w->rec.path = strdup(e->paths[n->row]);
	w->rec.path_len = w->rec.path ? strlen(w->rec.path) : 0;
	if (e->links[n->row])
		w->rec.link_target = strdup(e->links[n->row]);
	if (!w->rec.path || (e->links[n->row] && !w->rec.link_target)) {
		fidx_record_free(&w->rec);
		return NULL;
	}
	return &w->rec;
}

/* Reads and hashes (SHA-256) every node of the work list whole.  Returns 0, or -1. */
static int whole_stage(struct fidx_dupes_engine *e, enum fidx_io_mode mode)
{
	atomic_uint_least64_t bytes = 0, files = 0;
	unsigned readers = fidx_scan_io_threads(e->o->jobs);
	/* Each reader and its streamer hold a descriptor; the rest may read ahead. */
	size_t room = fd_room(), own = 2 * (size_t)readers;
	struct fidx_record *batch[WHOLE_PUSH];
	if (!(e->whole_in = fidx_queue_create(WHOLE_QUEUE_CAP, 1))) {
		engine_fail(e, "out of memory");
		return -1;
	}
	struct fidx_hashio_opts ho = {
		.digests = 1u << FIDX_SHA256, .mode = mode, .jobs = e->o->jobs, .readers = readers,
		.prefetch = room > own + PREFETCH_FILES ? PREFETCH_FILES
			    : room > own ? (unsigned)(room - own) : 0,
		.in = e->whole_in, .cancel = e->o->cancel, .stop = &e->stop, .bytes_hashed = &bytes,
		.files_hashed = &files, .thread_start = whole_start, .done = whole_done,
		.thread_end = whole_end, .fail = whole_failed, .arg = e,
	};
	struct fidx_hashio *io = fidx_hashio_start(&ho);
	if (!io) {
		engine_fail(e, "cannot start the hashing threads");
		fidx_queue_destroy(e->whole_in);
		e->whole_in = NULL;
		return -1;
	}
	for (size_t i = 0; i < e->nwork && !atomic_load(&e->stop);) {
		size_t n = 0, pushed;
		while (n < WHOLE_PUSH && i < e->nwork) {
			if (!(batch[n] = whole_record(e, e->work[i]))) {
				engine_fail(e, "out of memory");
				fidx_queue_abort(e->whole_in);
				break;
			}
			n++;
			i++;
		}
		pushed = fidx_queue_push_many(e->whole_in, (void *const *)batch, n);
		for (size_t k = pushed; k < n; k++)
			fidx_record_free(batch[k]);
	}
	fidx_queue_done(e->whole_in);
	fidx_hashio_finish(io);
	/* After an abort, records still queued were never handed to done(). */
	struct fidx_record *rec;
	while ((rec = fidx_queue_trypop(e->whole_in)))
		fidx_record_free(rec);
	fidx_queue_destroy(e->whole_in);
	e->whole_in = NULL;
	return atomic_load(&e->stop) ? -1 : 0;
}

/* Runs one reading stage over the work list, in inode order.  Returns 0, or -1. */
static int read_stage(struct fidx_dupes_engine *e, bool whole)
{
	if (e->nwork == 0)
		return 0;
	qsort_r(e->work, e->nwork, sizeof(*e->work), cmp_inode, e->nodes);
	enum fidx_io_mode mode = io_mode(e);
	return whole ? whole_stage(e, mode) : small_stage(e, mode);
}

/* ---------------------------------------------------------------- grouping --- */

/* The digest length of a span's algorithm. */
static size_t digest_len(const struct span *sp)
{
	return sp->algo == FIDX_SHA512 ? 64 : 32;
}

/* Orders nodes: those with the span's digest first, by digest (arg: the span). */
static int cmp_digest(const void *a, const void *b, void *arg)
{
	const struct span *sp = arg;
	const struct node *x = a, *y = b;
	uint8_t need = sp->algo == FIDX_SHA512 ? K_SHA512 : K_SHA256;
	int hx = (x->known & need) && !(x->known & K_FAILED);
	int hy = (y->known & need) && !(y->known & K_FAILED);
	if (hx != hy)
		return hy - hx;
	return memcmp(x->digest, y->digest, digest_len(sp));
}

/* Orders hosts j and k by name (bytes; a host with no name first): equal paths of two hosts. */
static int cmp_hosts(const struct fidx_dupes_engine *e, uint32_t j, uint32_t k)
{
	return strcmp(e->hosts[j] ? e->hosts[j] : "", e->hosts[k] ? e->hosts[k] : "");
}

/* Orders nodes by their first path, then host (arg: the engine). */
static int cmp_first_path(const void *a, const void *b, void *arg)
{
	const struct fidx_dupes_engine *e = arg;
	const struct node *x = a, *y = b;
	int c = strcmp(e->paths[x->row], e->paths[y->row]);
	return c ? c : cmp_hosts(e, x->host, y->host);
}

/* Orders groups: most waste first, then larger files, then by first path. */
static int cmp_group(const void *a, const void *b)
{
	const struct fidx_dupes_group *x = a, *y = b;
	if (x->waste != y->waste)
		return x->waste > y->waste ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	int c = strcmp(x->files[0].paths[0], y->files[0].paths[0]);
	return c ? c : strcmp(x->files[0].host ? x->files[0].host : "",
			      y->files[0].host ? y->files[0].host : "");
}

/* The name of host k to show beside its paths: NULL when every scan is of one host. */
static const char *host_name(const struct fidx_dupes_engine *e, uint32_t k)
{
	if (e->nhosts < 2)
		return NULL;
	return e->hosts[k] ? e->hosts[k] : "";
}

/*
 * Makes the groups: in each span, runs of two or more nodes with one digest.
 * Returns 0, or -1 (ENOMEM).
 */
static int make_groups(struct fidx_dupes *d)
{
	struct fidx_dupes_engine *e = d->engine;
	size_t cap = 0, nfiles = 0, ncap = 0;

	/* First pass: order each span and count, so that files never moves. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t s = 0; s < e->nspans; s++) {
			struct span *sp = &e->spans[s];
			size_t len = digest_len(sp);
			uint8_t need = sp->algo == FIDX_SHA512 ? K_SHA512 : K_SHA256;
			if (pass == 0)
				qsort_r(e->nodes + sp->a, sp->b - sp->a, sizeof(*e->nodes), cmp_digest, sp);
			for (size_t i = sp->a; i < sp->b;) {
				const struct node *n = &e->nodes[i];
				if (!(n->known & need) || (n->known & K_FAILED))
					break;
				size_t j = i + 1;
				while (j < sp->b && (e->nodes[j].known & need) &&
				       !(e->nodes[j].known & K_FAILED) &&
				       memcmp(e->nodes[j].digest, n->digest, len) == 0)
					j++;
				if (j - i >= 2 && pass == 0) {
					qsort_r(e->nodes + i, j - i, sizeof(*e->nodes), cmp_first_path, e);
					ncap += j - i;
				} else if (j - i >= 2) {
					if (grow((void **)&d->groups, &cap, d->ngroups + 1,
						 sizeof(*d->groups)) < 0)
						return -1;
					struct fidx_dupes_file *f = e->files + nfiles;
					for (size_t k = i; k < j; k++, nfiles++)
						e->files[nfiles] = (struct fidx_dupes_file){
							.host = host_name(e, e->nodes[k].host),
							.dev = e->nodes[k].dev, .ino = e->nodes[k].ino,
							.mtime = e->nodes[k].mtime,
							.ctime = e->nodes[k].ctime,
							.has_ctime = e->nodes[k].has_ctime,
							.in_image = e->nodes[k].in_image,
							.npaths = e->nodes[k].nrows,
							.paths = (const char *const *)&e->paths[e->nodes[k].row],
						};
					d->groups[d->ngroups++] = (struct fidx_dupes_group){
						.size = n->size, .algo = sp->algo, .digest = n->digest,
						.nfiles = j - i, .files = f, .waste = (j - i - 1) * n->size,
					};
					d->files += j - i;
					d->waste += (j - i - 1) * n->size;
				}
				i = j;
			}
		}
		if (pass == 0 && ncap && !(e->files = malloc(ncap * sizeof(*e->files))))
			return -1;
	}
	if (d->ngroups)
		qsort(d->groups, d->ngroups, sizeof(*d->groups), cmp_group);
	return 0;
}

/* Orders left-out nodes by their first path, then host (arg: the engine). */
static int cmp_failed(const void *a, const void *b, void *arg)
{
	const struct fidx_dupes_engine *e = arg;
	const struct node *x = *(const struct node *const *)a, *y = *(const struct node *const *)b;
	int c = strcmp(e->paths[x->row], e->paths[y->row]);
	return c ? c : cmp_hosts(e, x->host, y->host);
}

/*
 * Lists the files left out, by path, in d->left (an interrupted search
 * lists none: its files were not all looked at) and counts them.  Returns 0,
 * or -1 (ENOMEM).
 */
static int list_left_out(struct fidx_dupes *d)
{
	struct fidx_dupes_engine *e = d->engine;
	const struct node **failed = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < e->nnodes; i++) {
		if (!(e->nodes[i].known & K_FAILED))
			continue;
		if (grow((void **)&failed, &cap, n + 1, sizeof(*failed)) < 0)
			return -1;
		failed[n++] = &e->nodes[i];
	}
	if (n)
		qsort_r(failed, n, sizeof(*failed), cmp_failed, e);
	d->left_out = n;
	if (n && !d->interrupted && !(d->left = calloc(n, sizeof(*d->left)))) {
		free(failed);
		return -1;
	}
	for (size_t i = 0; i < n && d->left; i++)
		d->left[i] = (struct fidx_dupes_left){host_name(e, failed[i]->host),
						      e->paths[failed[i]->row], failed[i]->error};
	free(failed);
	return 0;
}

/* ----------------------------------------------------------------- public --- */

/* Frees the engine.  NULL is allowed. */
static void engine_free(struct fidx_dupes_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nnodes; i++)
		free(e->nodes[i].error);
	fidx_arena_free(&e->arena);
	free(e->ids);
	free(e->mtimes);
	free(e->paths);
	free(e->links);
	free(e->nodes);
	free(e->spans);
	free(e->work);
	free(e->files);
	free(e->hosts);
	free(e->readable);
	free(e->fail_msg);
	pthread_mutex_destroy(&e->fail_lock);
	free(e);
}

struct fidx_dupes *fidx_dupes_find(struct fidx_store *st, const struct fidx_selection *sel,
				   const struct fidx_dupes_opts *o, struct fidx_error *err)
{
	struct fidx_dupes *d = calloc(1, sizeof(*d));
	struct fidx_dupes_engine *e = calloc(1, sizeof(*e));
	struct fidx_hasher *h = fidx_hasher_create(1u << FIDX_SHA256);
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	bool cancelled;

	if (!d || !e || !h || fidx_hasher_reset(h) < 0 || fidx_hasher_final(h, out) < 0) {
		fidx_fail_nomem(err);
		fidx_hasher_destroy(h);
		free(d);
		free(e);
		return NULL;
	}
	fidx_hasher_destroy(h);
	pthread_mutex_init(&e->fail_lock, NULL);
	memcpy(e->empty_sha256, out[FIDX_SHA256], 32);
	e->o = o;
	d->engine = e;

	if (load(e, st, sel, err) < 0)
		goto fail;
	/* Small reads (small files whole, larger ones' edges), then large files whole. */
	if (plan(e) < 0)
		goto stage_failed;
	if (read_stage(e, false) < 0)
		goto stage_failed;
	if (regroup(e) < 0 || read_stage(e, true) < 0)
		goto stage_failed;
	cancelled = o->cancel && atomic_load(o->cancel);
	d->interrupted = cancelled;
	if (list_left_out(d) < 0 || (!cancelled && make_groups(d) < 0)) {
		fidx_fail_nomem(err);
		goto fail;
	}
	return d;
stage_failed:
	fidx_fail(err, e->fail_msg ? EIO : ENOMEM, "%s", e->fail_msg ? e->fail_msg : "out of memory");
fail:
	fidx_dupes_free(d);
	return NULL;
}

/*
 * Counts the file rows whose digests were computed now (rows of a node read
 * that describe the version read), and fills out[] with them unless out is
 * NULL.  Returns the count.
 */
static size_t each_computed(const struct fidx_dupes_engine *e, struct fidx_file_digest *out,
			    int64_t now)
{
	size_t n = 0;
	for (size_t i = 0; i < e->nnodes; i++) {
		const struct node *nd = &e->nodes[i];
		if (!(nd->known & (K_NEW_EDGES | K_NEW_SHA256)) || (nd->known & K_FAILED))
			continue;
		for (size_t r = nd->row; r < nd->row + nd->nrows; r++) {
			/* Only rows that describe the version of the file that was read. */
			if (!fidx_time_eq(e->mtimes[r], nd->mtime))
				continue;
			if (out) {
				struct fidx_file_digest *f = &out[n];
				*f = (struct fidx_file_digest){.file_id = e->ids[r], .read_ns = now};
				if (nd->known & K_EDGES) {
					f->edge_block = FIDX_DUPES_EDGE_BLOCK;
					memcpy(f->edges, nd->edges, EDGES_LEN);
				}
				if (nd->known & K_SHA256) {
					f->has_sha256 = true;
					memcpy(f->sha256, nd->digest, 32);
				}
			}
			n++;
		}
	}
	return n;
}

size_t fidx_dupes_computed(const struct fidx_dupes *d)
{
	return each_computed(d->engine, NULL, 0);
}

int fidx_dupes_store(const struct fidx_dupes *d, struct fidx_store *st, struct fidx_error *err)
{
	size_t n = fidx_dupes_computed(d);
	struct fidx_file_digest *rows = n ? malloc(n * sizeof(*rows)) : NULL;
	if (n && !rows)
		return fidx_fail_nomem(err);
	each_computed(d->engine, rows, fidx_now_ns());
	int ret = n ? fidx_store_add_digests(st, rows, n, err) : 0;
	free(rows);
	return ret;
}

void fidx_dupes_free(struct fidx_dupes *d)
{
	if (!d)
		return;
	engine_free(d->engine);
	free(d->groups);
	free(d->left);
	free(d);
}
