/*
 * reuse.c - the digests of earlier scans, and the paths a resumed scan
 * already holds (reuse.h).
 *
 * The digest table is an array of fixed-size entries (the five values a
 * file must still have, the scan that read it, its digests) sorted by a
 * seeded hash of (device, inode), with a directory that gives the first
 * entry of each hash prefix: a look-up reads one bucket, about BUCKET_MEMORY
 * entries in memory or BUCKET_DISK on disk.  Up to `memory` bytes the
 * entries stay in memory (a rescan of /usr: ~5 MiB); beyond, the load sorts
 * them in runs of that size, writes the runs to an unnamed temporary file in
 * $TMPDIR and merges them into a second one, which look-ups read with
 * pread(): the process holds the directory only (half a byte a file), the
 * kernel's page cache holds what is read often, and a rescan of 10M files
 * needs no more memory than one of 1M (a table of 64-byte slots held all of
 * it: 893 MiB of RSS at 3.3M files).  Built once by one thread, then only
 * read: walker threads look files up without a lock.  The hash is XXH3 with
 * a seed from getrandom(), so that inode numbers chosen by a hostile file
 * system (FUSE) cannot pile every file into one bucket.
 *
 * Hard links of one file are one entry: the first row loaded wins (entries
 * sort by hash, device, inode, then load order).  A file whose mtime or
 * ctime was not yet older than the earlier scan's start by the timestamp
 * granularity is left out (settled()): it may have changed after it was read
 * without either time moving.
 *
 * The path set of a resumed scan keeps the XXH3-128 of each path (16 bytes
 * instead of the path), in an open-addressing table.  Two different paths
 * share a hash with a probability of about n^2 / 2^129: nil for any tree.
 */
#include "reuse.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <xxhash.h>

#include "fdutil.h"
#include "sysinfo.h"

#define BUCKET_MEMORY 4   /* entries a bucket holds on average, in memory */
#define BUCKET_DISK 16    /* ... on disk: one pread() of ~1.5 KiB with SHA-256 */
#define IO_BYTES (64 << 10) /* bytes a run reader or the merge's writer moves at once */
#define LOOKUP_BYTES 4096 /* bytes a look-up reads at once (on its stack) */
#define MIN_ENTRIES 16    /* entries of a run, whatever the memory allowed */

/* One file of the earlier scan: the head of an entry; its digests follow. */
struct reuse_head {
	uint64_t key;            /* seeded hash of (dev, ino): the sort order */
	uint64_t dev, ino;
	uint64_t size;
	int64_t mtime_ns, ctime_ns;
	int64_t from;            /* the scan that read the content */
	uint64_t seq;            /* load order: of hard links, the first loaded wins */
};

/* Sorted entries on disk: n of them from byte off of fd. */
struct reuse_run {
	int fd;
	off_t off;
	size_t n;
};

struct fidx_reuse {
	unsigned digests;        /* the mask the entries hold, in enum order */
	size_t digest_bytes;     /* bytes of digests an entry holds */
	size_t stride;           /* bytes of an entry: head and digests, 8-aligned */
	size_t run_cap;          /* entries held in memory at most */
	uint64_t seed;
	uint64_t seq;            /* entries loaded so far */

	/* The table, sorted: in memory (entries) or on disk (fd). */
	uint8_t *entries;
	int fd;                  /* -1: in memory */
	size_t count;
	uint64_t *dir;           /* dir[b]: the first entry whose key >> shift is >= b */
	unsigned shift;

	/* While loading: the run being gathered, and those written. */
	uint8_t *run;
	size_t run_n;
	int runs_fd;             /* -1 until the first run is written */
	off_t runs_end;
	struct reuse_run *runs;
	size_t nruns, runs_alloc;
	const char *tmpdir;      /* for messages */
};

/* Returns entry i of the entries at base. */
static inline struct reuse_head *entry_at(const struct fidx_reuse *r, uint8_t *base, size_t i)
{
	return (struct reuse_head *)(base + i * r->stride);
}

/* Returns the seeded hash of (dev, ino). */
static uint64_t key_of(const struct fidx_reuse *r, uint64_t dev, uint64_t ino)
{
	uint64_t k[2] = {dev, ino};
	return XXH3_64bits_withSeed(k, sizeof(k), r->seed);
}

/* Orders entries by key, device, inode, then load order. */
static int compare_entries(const void *pa, const void *pb)
{
	const struct reuse_head *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Whether two entries are the same file (hard links of it). */
static bool same_file(const struct reuse_head *a, const struct reuse_head *b)
{
	return a->key == b->key && a->dev == b->dev && a->ino == b->ino;
}

/* Fails err for a temporary file of r that could not be made or written. */
static int fail_tmp(const struct fidx_reuse *r, int errnum, const char *what,
		    struct fidx_error *err)
{
	return fidx_fail(err, EIO, "cannot %s a temporary file in '%s' for the digests of the earlier scan:"
			 " %s (set TMPDIR to a folder with room, or use --rehash)",
			 what, fidx_quote(r->tmpdir), strerror(errnum));
}

/* Opens an unnamed read-write file in r->tmpdir.  Returns its descriptor, or -1 with err set. */
static int open_tmp(struct fidx_reuse *r, struct fidx_error *err)
{
	int fd = open(r->tmpdir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return fail_tmp(r, errno, "create", err);
	/* A file system without O_TMPFILE: a name, removed at once. */
	char path[4096];
	if (snprintf(path, sizeof(path), "%s/fidx-reuse-XXXXXX", r->tmpdir) >= (int)sizeof(path))
		return fail_tmp(r, ENAMETOOLONG, "create", err);
	if ((fd = mkostemp(path, O_CLOEXEC)) < 0)
		return fail_tmp(r, errno, "create", err);
	unlink(path);
	return fd;
}

/* Writes n bytes of buf at off of fd.  Returns 0, or -1 with err set. */
static int write_at(struct fidx_reuse *r, int fd, const void *buf, size_t n, off_t off,
		    struct fidx_error *err)
{
	while (n) {
		ssize_t w = pwrite(fd, buf, n, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return fail_tmp(r, w < 0 ? errno : ENOSPC, "write", err);
		buf = (const uint8_t *)buf + w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

/* Reads n bytes at off of fd into buf.  Returns 0, or -1 with errno set. */
static int read_at(int fd, void *buf, size_t n, off_t off)
{
	ssize_t got = fidx_read_full(fd, buf, n, off);
	if (got >= 0 && (size_t)got < n)
		errno = EIO; /* our own file, shorter than written */
	return got >= 0 && (size_t)got == n ? 0 : -1;
}

/* Sorts the entries at base (n of them) and drops later hard links; returns how many are left. */
static size_t sort_unique(const struct fidx_reuse *r, uint8_t *base, size_t n)
{
	if (!n)
		return 0;
	qsort(base, n, r->stride, compare_entries);
	size_t kept = 1;
	for (size_t i = 1; i < n; i++) {
		if (same_file(entry_at(r, base, i), entry_at(r, base, kept - 1)))
			continue;
		if (i != kept)
			memcpy(entry_at(r, base, kept), entry_at(r, base, i), r->stride);
		kept++;
	}
	return kept;
}

/* Adds a run to the list of those to merge.  Returns 0, or -1 with err set. */
static int add_run(struct fidx_reuse *r, struct reuse_run run, struct fidx_error *err)
{
	if (r->nruns == r->runs_alloc) {
		size_t alloc = r->runs_alloc ? r->runs_alloc * 2 : 16;
		struct reuse_run *runs = realloc(r->runs, alloc * sizeof(*runs));
		if (!runs)
			return fidx_fail_nomem(err);
		r->runs = runs;
		r->runs_alloc = alloc;
	}
	r->runs[r->nruns++] = run;
	return 0;
}

/* Sorts the run gathered in memory and writes it out.  Returns 0, or -1 with err set. */
static int flush_run(struct fidx_reuse *r, struct fidx_error *err)
{
	size_t n = sort_unique(r, r->run, r->run_n);
	if (r->runs_fd < 0 && (r->runs_fd = open_tmp(r, err)) < 0)
		return -1;
	if (write_at(r, r->runs_fd, r->run, n * r->stride, r->runs_end, err) < 0 ||
	    add_run(r, (struct reuse_run){.fd = r->runs_fd, .off = r->runs_end, .n = n}, err) < 0)
		return -1;
	r->runs_end += (off_t)(n * r->stride);
	r->run_n = 0;
	return 0;
}

/* Adds one entry (stride bytes) to the run, writing the run out when full. */
static int append(struct fidx_reuse *r, const void *entry, struct fidx_error *err)
{
	if (!r->run && !(r->run = malloc(r->run_cap * r->stride)))
		return fidx_fail_nomem(err);
	if (r->run_n == r->run_cap && flush_run(r, err) < 0)
		return -1;
	memcpy(entry_at(r, r->run, r->run_n++), entry, r->stride);
	return 0;
}

/* Sets up r->dir for count entries, about per_bucket of them a bucket.  Returns 0 or -1. */
static int dir_alloc(struct fidx_reuse *r, size_t count, size_t per_bucket)
{
	unsigned bits = 1; /* at least two buckets: a shift by 64 is undefined */
	while (bits < 40 && ((size_t)1 << bits) * per_bucket < count)
		bits++;
	free(r->dir);
	if (!(r->dir = malloc((((size_t)1 << bits) + 1) * sizeof(*r->dir))))
		return -1;
	r->shift = 64 - bits;
	return 0;
}

/* Fills the directory entries of the buckets up to that of key (entry i has it). */
static void dir_mark(struct fidx_reuse *r, size_t *next_bucket, uint64_t key, size_t i)
{
	size_t b = (size_t)(key >> r->shift);
	while (*next_bucket <= b)
		r->dir[(*next_bucket)++] = i;
}

/* Ends the directory: the buckets after the last entry start at count. */
static void dir_end(struct fidx_reuse *r, size_t next_bucket)
{
	size_t nb = ((size_t)1 << (64 - r->shift)) + 1;
	while (next_bucket < nb)
		r->dir[next_bucket++] = r->count;
}

/* One run being merged: a window of its entries. */
struct run_reader {
	const struct reuse_run *run;
	size_t done;             /* entries of the run consumed */
	uint8_t *buf;
	size_t have, pos;        /* entries in buf, and the next one */
};

/* The reader's current entry. */
static const struct reuse_head *reader_head(const struct fidx_reuse *r,
					    const struct run_reader *rd)
{
	return entry_at(r, rd->buf, rd->pos);
}

/* Moves rd to its next entry.  Returns 1, 0 at the end of its run, -1 with err set. */
static int reader_next(struct fidx_reuse *r, struct run_reader *rd, size_t window,
		       struct fidx_error *err)
{
	if (rd->have && ++rd->pos < rd->have)
		return 1;
	rd->done += rd->have;
	size_t n = rd->run->n - rd->done < window ? rd->run->n - rd->done : window;
	rd->have = n;
	rd->pos = 0;
	if (!n)
		return 0;
	if (read_at(rd->run->fd, rd->buf, n * r->stride,
		    rd->run->off + (off_t)(rd->done * r->stride)) < 0)
		return fail_tmp(r, errno, "read", err);
	return 1;
}

/* Restores the heap order of readers (by current entry) below slot i of n. */
static void sift_down(const struct fidx_reuse *r, struct run_reader **heap, size_t n, size_t i)
{
	for (;;) {
		size_t least = i, c = 2 * i + 1;
		for (size_t k = c; k < c + 2 && k < n; k++)
			if (compare_entries(reader_head(r, heap[k]), reader_head(r, heap[least])) < 0)
				least = k;
		if (least == i)
			return;
		struct run_reader *t = heap[i];
		heap[i] = heap[least];
		heap[least] = t;
		i = least;
	}
}

/*
 * Merges the runs into one sorted file without hard links repeated, and its
 * directory.  Returns 0, or -1 with err set.
 */
static int merge_runs(struct fidx_reuse *r, struct fidx_error *err)
{
	size_t total = 0, window = IO_BYTES / r->stride ? IO_BYTES / r->stride : 1;
	for (size_t i = 0; i < r->nruns; i++)
		total += r->runs[i].n;
	struct run_reader *rd = calloc(r->nruns, sizeof(*rd));
	struct run_reader **heap = calloc(r->nruns, sizeof(*heap));
	uint8_t *out = malloc(window * r->stride);
	int fd = -1, ret = -1;
	size_t n = 0, out_n = 0, next_bucket = 0;
	off_t end = 0;
	uint8_t *last = NULL;

	if (!rd || !heap || !out || dir_alloc(r, total, BUCKET_DISK) < 0) {
		fidx_fail_nomem(err);
		goto out;
	}
	if ((fd = open_tmp(r, err)) < 0)
		goto out;
	for (size_t i = 0; i < r->nruns; i++) {
		rd[i].run = &r->runs[i];
		if (!(rd[i].buf = malloc(window * r->stride))) {
			fidx_fail_nomem(err);
			goto out;
		}
		int rc = reader_next(r, &rd[i], window, err);
		if (rc < 0)
			goto out;
		if (rc)
			heap[n++] = &rd[i];
	}
	for (size_t i = n / 2; i-- > 0;)
		sift_down(r, heap, n, i);
	r->count = 0;
	while (n) {
		const struct reuse_head *h = reader_head(r, heap[0]);
		if (!last || !same_file(h, (const struct reuse_head *)last)) {
			if (out_n == window) {
				if (write_at(r, fd, out, out_n * r->stride, end, err) < 0)
					goto out;
				end += (off_t)(out_n * r->stride);
				out_n = 0;
			}
			last = (uint8_t *)entry_at(r, out, out_n++);
			memcpy(last, h, r->stride);
			dir_mark(r, &next_bucket, h->key, r->count++);
		}
		int rc = reader_next(r, heap[0], window, err);
		if (rc < 0)
			goto out;
		if (!rc)
			heap[0] = heap[--n];
		sift_down(r, heap, n, 0);
	}
	if (write_at(r, fd, out, out_n * r->stride, end, err) < 0)
		goto out;
	dir_end(r, next_bucket);
	r->fd = fd;
	fd = -1;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	for (size_t i = 0; rd && i < r->nruns; i++)
		free(rd[i].buf);
	free(rd);
	free(heap);
	free(out);
	return ret;
}

static void end_load(struct fidx_reuse *r);

/*
 * Makes the table of what the load gathered: in memory when it fit, else
 * merged on disk.  Returns 0, or -1 with err set and the table empty.
 */
static int finish_load(struct fidx_reuse *r, struct fidx_error *err)
{
	int ret = 0;
	if (!r->nruns) {
		r->count = sort_unique(r, r->run, r->run_n);
		if (r->count && dir_alloc(r, r->count, BUCKET_MEMORY) < 0) {
			ret = fidx_fail_nomem(err);
		} else if (r->count) {
			size_t next_bucket = 0;
			for (size_t i = 0; i < r->count; i++)
				dir_mark(r, &next_bucket, entry_at(r, r->run, i)->key, i);
			dir_end(r, next_bucket);
			uint8_t *fit = realloc(r->run, r->count * r->stride);
			r->entries = fit ? fit : r->run; /* a failed shrink keeps the bigger block */
			r->run = NULL;
		}
	} else if ((r->run_n && flush_run(r, err) < 0) || merge_runs(r, err) < 0) {
		ret = -1;
	}
	if (ret < 0)
		r->count = 0;
	end_load(r);
	return ret;
}

/* Frees what a load gathered but the table: the run in memory, the files of the runs. */
static void end_load(struct fidx_reuse *r)
{
	free(r->run);
	r->run = NULL;
	r->run_n = 0;
	/* The files the runs were in: the one written by this load, an earlier table's. */
	for (size_t i = 0; i < r->nruns; i++)
		if (r->runs[i].fd != r->runs_fd && r->runs[i].fd != r->fd)
			close(r->runs[i].fd);
	if (r->runs_fd >= 0)
		close(r->runs_fd);
	r->runs_fd = -1;
	r->runs_end = 0;
	r->nruns = 0;
}

/*
 * Puts the table an earlier load made back into the load: entries in memory
 * go to the run, a table on disk becomes a run of its own.  Returns 0, or -1
 * with err set.
 */
static int reopen_load(struct fidx_reuse *r, struct fidx_error *err)
{
	if (r->fd >= 0) {
		int fd = r->fd;
		r->fd = -1;
		if (add_run(r, (struct reuse_run){.fd = fd, .off = 0, .n = r->count}, err) < 0) {
			close(fd);
			r->count = 0;
			return -1;
		}
	} else {
		for (size_t i = 0; i < r->count; i++)
			if (append(r, entry_at(r, r->entries, i), err) < 0)
				return -1;
		free(r->entries);
		r->entries = NULL;
	}
	r->count = 0;
	return 0;
}

/*
 * Whether time t (ns) of a file is older than start (ns, the start of the
 * scan that read it) by more than its granularity, so that a change after
 * the scan read the file moved it (git's "racily clean" files).  A whole
 * second is taken for a file system with 1 or 2 s timestamps (ext4 with
 * 128-byte inodes, FAT): 2 s; finer ones for the kernel's clock, which
 * ticks at most every 10 ms: 0.1 s.
 */
static bool settled(int64_t t, int64_t start)
{
	int64_t granularity = t / 1000000000 * 1000000000 == t ? 2000000000 : 100000000;
	/* A start too early to subtract from (a damaged row) settles nothing. */
	return start >= INT64_MIN + granularity && t < start - granularity;
}

/*
 * Adds the file of row (of a scan that started at start, ns) when it
 * qualifies (reuse.h).  Returns 0, or -1 with err set.
 */
static int add_file(struct fidx_reuse *r, const struct fidx_row *row, int64_t start,
		    uint8_t *entry, struct fidx_error *err)
{
	struct fidx_time mtime, ctime;
	int64_t mtime_ns, ctime_ns;
	if (fidx_row_type(row) != 'f' || fidx_row_has(row, FIDX_COL_ERROR) ||
	    !fidx_row_has(row, FIDX_COL_DEV) || !fidx_row_has(row, FIDX_COL_INO) ||
	    !fidx_row_has(row, FIDX_COL_SIZE) || !fidx_row_time(row, FIDX_COL_MTIME, &mtime) ||
	    !fidx_row_time(row, FIDX_COL_CTIME, &ctime) || !fidx_time_to_ns(mtime, &mtime_ns) ||
	    !fidx_time_to_ns(ctime, &ctime_ns) || !settled(mtime_ns, start) ||
	    !settled(ctime_ns, start))
		return 0;
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if ((r->digests & (1u << d)) && !fidx_row_digest(row, d))
			return 0;
	uint64_t dev = fidx_row_u64(row, FIDX_COL_DEV), ino = fidx_row_u64(row, FIDX_COL_INO);
	*(struct reuse_head *)entry = (struct reuse_head){
		.key = key_of(r, dev, ino), .dev = dev, .ino = ino,
		.size = fidx_row_u64(row, FIDX_COL_SIZE),
		.mtime_ns = mtime_ns, .ctime_ns = ctime_ns,
		.from = fidx_row_has(row, FIDX_COL_DIGESTS_FROM)
				? fidx_row_int(row, FIDX_COL_DIGESTS_FROM)
				: fidx_row_int(row, FIDX_COL_SCAN_ID),
		.seq = r->seq++,
	};
	uint8_t *out = entry + sizeof(struct reuse_head);
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		if (!(r->digests & (1u << d)))
			continue;
		memcpy(out, fidx_row_digest(row, d), fidx_digest_len(d));
		out += fidx_digest_len(d);
	}
	return append(r, entry, err);
}

struct fidx_reuse *fidx_reuse_new(unsigned digests, size_t memory, struct fidx_error *err)
{
	struct fidx_reuse *r = calloc(1, sizeof(*r));
	if (!r) {
		fidx_fail_nomem(err);
		return NULL;
	}
	r->digests = digests;
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (digests & (1u << d))
			r->digest_bytes += fidx_digest_len(d);
	r->stride = (sizeof(struct reuse_head) + r->digest_bytes + 7) & ~(size_t)7;
	r->run_cap = memory / r->stride > MIN_ENTRIES ? memory / r->stride : MIN_ENTRIES;
	r->fd = r->runs_fd = -1;
	r->tmpdir = fidx_tmpdir();
	if (getrandom(&r->seed, sizeof(r->seed), GRND_NONBLOCK) != sizeof(r->seed))
		r->seed = (uint64_t)fidx_monotonic_ns() ^ (uint64_t)(uintptr_t)r;
	return r;
}

int fidx_reuse_load(struct fidx_reuse *r, struct fidx_store *st,
		    const struct fidx_scan_row *scan, struct fidx_error *err)
{
	uint64_t columns = FIDX_COLUMN(FIDX_COL_TYPE) | FIDX_COLUMN(FIDX_COL_ERROR) |
			   FIDX_COLUMN(FIDX_COL_DEV) | FIDX_COLUMN(FIDX_COL_INO) |
			   FIDX_COLUMN(FIDX_COL_SIZE) | FIDX_COLUMN(FIDX_COL_MTIME) |
			   FIDX_COLUMN(FIDX_COL_CTIME) | FIDX_COLUMN(FIDX_COL_DIGESTS_FROM);
	/* Every digest column, those not taken too: a row damaged in any gives nothing. */
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		columns |= FIDX_DIGEST_COLUMN(d);
	if (!r->digests || !fidx_scan_has(scan, FIDX_SCOL_STARTED_NS))
		return 0;
	/* A damaged row (store.h) gives nothing: its file is read again. */
	struct fidx_rows_query q = {
		.scans = &scan->id, .nscans = 1, .columns = columns, .order = FIDX_ROWS_ANY,
		.types = FIDX_TYPE_FILE, .damage = FIDX_ROWS_SKIP,
	};
	uint8_t *entry = malloc(r->stride);
	struct fidx_rows *it = NULL;
	const struct fidx_row *row;
	int rc = -1;
	if (!entry) {
		fidx_fail_nomem(err);
		goto out;
	}
	if (reopen_load(r, err) < 0 || !(it = fidx_store_rows(st, &q, err)))
		goto out;
	while ((rc = fidx_rows_next(it, &row, err)) == 1)
		if (add_file(r, row, scan->started_ns, entry, err) < 0) {
			rc = -1;
			break;
		}
out:
	fidx_rows_close(it);
	free(entry);
	if (rc < 0) {
		end_load(r); /* the table is left empty */
		r->count = 0;
	} else if (finish_load(r, err) < 0) {
		rc = -1;
	}
	if (rc < 0 && err->code == ENOMEM)
		fidx_fail(err, ENOMEM, "out of memory loading the digests of scan %" PRId64,
			  scan->id);
	return rc;
}

size_t fidx_reuse_count(const struct fidx_reuse *r)
{
	return r->count;
}

bool fidx_reuse_take(const struct fidx_reuse *r, struct fidx_record *rec)
{
	if (!r || !r->count || rec->type != 'f' || !rec->has_meta)
		return false;
	const struct fidx_meta *m = &rec->meta;
	int64_t mtime_ns, ctime_ns;
	/* The table holds rows whose times fit *_ns: a file dated beyond is read. */
	if (!fidx_time_to_ns(m->mtime, &mtime_ns) || !fidx_time_to_ns(m->ctime, &ctime_ns))
		return false;
	uint64_t key = key_of(r, m->dev, m->ino);
	size_t b = (size_t)(key >> r->shift), lo = r->dir[b], hi = r->dir[b + 1];
	uint8_t window[LOOKUP_BYTES];
	size_t per_read = sizeof(window) / r->stride;
	const struct reuse_head *h = NULL;
	while (lo < hi && !h) {
		const uint8_t *base;
		size_t n = hi - lo;
		if (r->fd < 0) {
			base = r->entries + lo * r->stride;
		} else {
			n = n < per_read ? n : per_read;
			/* A failed read of our own file costs a read of the user's file, nothing else. */
			if (read_at(r->fd, window, n * r->stride, (off_t)(lo * r->stride)) < 0)
				return false;
			base = window;
		}
		for (size_t i = 0; i < n && !h; i++) {
			const struct reuse_head *e = (const void *)(base + i * r->stride);
			if (e->key == key && e->dev == m->dev && e->ino == m->ino)
				h = e;
		}
		lo += n;
	}
	if (!h || h->size != m->size || h->mtime_ns != mtime_ns || h->ctime_ns != ctime_ns)
		return false;
	const uint8_t *in = (const uint8_t *)h + sizeof(*h);
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		if (!(r->digests & (1u << d)))
			continue;
		size_t len = fidx_digest_len(d);
		memcpy(rec->digest[d], in, len);
		in += len;
	}
	rec->digest_mask = r->digests;
	rec->digests_from = h->from;
	return true;
}

void fidx_reuse_free(struct fidx_reuse *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->entries);
	free(r->dir);
	free(r->runs);
	free(r);
}

/* The paths a resumed scan already recorded, as XXH3-128 hashes. */
struct fidx_pathset {
	XXH128_hash_t *slot;     /* mask + 1 slots; {0, 0} is empty */
	size_t mask;
	size_t count;
};

/* Hashes a path; never {0, 0}, which marks an empty slot. */
static XXH128_hash_t path_hash(const char *path, size_t len)
{
	XXH128_hash_t h = XXH3_128bits(path, len);
	if (h.low64 == 0 && h.high64 == 0)
		h.low64 = 1;
	return h;
}

/* Returns the slot of h in set, or the empty one where it would go. */
static XXH128_hash_t *pathset_slot(const struct fidx_pathset *set, XXH128_hash_t h)
{
	size_t j = (size_t)h.low64 & set->mask;
	while ((set->slot[j].low64 || set->slot[j].high64) &&
	       (set->slot[j].low64 != h.low64 || set->slot[j].high64 != h.high64))
		j = (j + 1) & set->mask;
	return &set->slot[j];
}

/* Doubles the path set.  Returns 0, or -1 on ENOMEM. */
static int pathset_grow(struct fidx_pathset *set)
{
	struct fidx_pathset bigger = {.mask = set->mask ? set->mask * 2 + 1 : 1023};
	if (!(bigger.slot = calloc(bigger.mask + 1, sizeof(*bigger.slot))))
		return -1;
	for (size_t i = 0; set->slot && i <= set->mask; i++)
		if (set->slot[i].low64 || set->slot[i].high64)
			*pathset_slot(&bigger, set->slot[i]) = set->slot[i];
	free(set->slot);
	set->slot = bigger.slot;
	set->mask = bigger.mask;
	return 0;
}

struct fidx_pathset *fidx_pathset_load(struct fidx_store *st, const struct fidx_scan_row *scan,
				       void (*each_error)(void *arg, const char *path,
							  const char *error),
				       void *arg, struct fidx_error *err)
{
	struct fidx_pathset *set = calloc(1, sizeof(*set));
	struct fidx_rows *it = NULL;
	const struct fidx_row *row;
	int rc;

	if (!set || pathset_grow(set) < 0)
		goto nomem;
	struct fidx_rows_query q = {
		.scans = &scan->id, .nscans = 1, .order = FIDX_ROWS_PATH,
		.columns = FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_ERROR),
	};
	if (!(it = fidx_store_rows(st, &q, err)))
		goto fail;
	while ((rc = fidx_rows_next(it, &row, err)) == 1) {
		const char *error = fidx_row_text(row, FIDX_COL_ERROR);
		/* Entries the interruption left unfinished are done again. */
		if (error && (strcmp(error, FIDX_ERROR_NOT_READ) == 0 ||
			      strcmp(error, FIDX_ERROR_NOT_HASHED) == 0))
			continue;
		if ((set->count + 1) * 2 > set->mask + 1 && pathset_grow(set) < 0)
			goto nomem;
		XXH128_hash_t h = path_hash(fidx_row_text(row, FIDX_COL_PATH),
					    fidx_row_len(row, FIDX_COL_PATH));
		XXH128_hash_t *slot = pathset_slot(set, h);
		if (!slot->low64 && !slot->high64) {
			*slot = h;
			set->count++;
		}
		if (error && each_error)
			each_error(arg, fidx_row_text(row, FIDX_COL_PATH), error);
	}
	if (rc < 0)
		goto fail;
	fidx_rows_close(it);
	return set;
nomem:
	fidx_fail(err, ENOMEM, "out of memory loading the paths of scan %" PRId64, scan->id);
fail:
	fidx_rows_close(it);
	fidx_pathset_free(set);
	return NULL;
}

size_t fidx_pathset_count(const struct fidx_pathset *set)
{
	return set->count;
}

bool fidx_pathset_has(const struct fidx_pathset *set, const char *path, size_t len)
{
	XXH128_hash_t *slot = pathset_slot(set, path_hash(path, len));
	return slot->low64 || slot->high64;
}

void fidx_pathset_free(struct fidx_pathset *set)
{
	if (!set)
		return;
	free(set->slot);
	free(set);
}
