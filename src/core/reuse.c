/*
 * reuse.c - the digests of earlier scans, and the paths a resumed scan
 * already holds (reuse.h).
 *
 * The digest table is open addressing with linear probing over a power of
 * two at most half full, keyed by (device, inode); each slot holds the five
 * values a file must still have and an offset into one pool of digests (only
 * the digests the new scan asks for, back to back).  Built once by one
 * thread, then only read: walker threads look files up without a lock.
 * A slot is 64 bytes: 1M files with SHA-256 take 2M slots (128 MiB) and 32
 * MiB of pool, 160 MiB (a rescan of 1.03M files peaked at 243 MB of RSS,
 * against 62 MB with --hash none); just past a power of two (2^20 files),
 * twice that.  A rescan of a tree that large saves reading all its content.
 * A file whose mtime or ctime was not yet older than the earlier scan's start
 * by the timestamp granularity is left out (settled()): it may have changed
 * after it was read without either time moving.
 *
 * The path set of a resumed scan keeps the XXH3-128 of each path (16 bytes
 * instead of the path), in the same kind of table.  Two different paths
 * share a hash with a probability of about n^2 / 2^129: nil for any tree.
 */
#include "reuse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* One file of the earlier scan. */
struct reuse_slot {
	uint64_t dev, ino;       /* the key */
	uint64_t size;
	int64_t mtime_ns, ctime_ns;
	int64_t from;            /* the scan that read the content */
	size_t digest_off;       /* into pool */
	bool used;               /* false: an empty slot */
};

struct fidx_reuse {
	unsigned digests;        /* the mask the pool holds, in enum order */
	size_t digest_bytes;     /* bytes per file in pool */
	struct reuse_slot *slot; /* mask + 1 slots */
	size_t mask;
	size_t count;
	uint8_t *pool;
	size_t pool_cap;         /* files pool has room for */
};

/* Mixes a (device, inode) key into a table position. */
static size_t slot_of(uint64_t dev, uint64_t ino)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15u ^ dev * 0xc2b2ae3d27d4eb4fu;
	return (size_t)(h ^ h >> 29);
}

/* Doubles the table.  Returns 0, or -1 on ENOMEM. */
static int grow(struct fidx_reuse *r)
{
	size_t nmask = r->mask ? r->mask * 2 + 1 : 1023;
	struct reuse_slot *ns = calloc(nmask + 1, sizeof(*ns));
	if (!ns)
		return -1;
	for (size_t i = 0; r->slot && i <= r->mask; i++) {
		if (!r->slot[i].used)
			continue;
		size_t j = slot_of(r->slot[i].dev, r->slot[i].ino) & nmask;
		while (ns[j].used)
			j = (j + 1) & nmask;
		ns[j] = r->slot[i];
	}
	free(r->slot);
	r->slot = ns;
	r->mask = nmask;
	return 0;
}

/* Returns the slot of (dev, ino), or the empty slot where it would go. */
static struct reuse_slot *find_slot(const struct fidx_reuse *r, uint64_t dev, uint64_t ino)
{
	size_t j = slot_of(dev, ino) & r->mask;
	while (r->slot[j].used && (r->slot[j].dev != dev || r->slot[j].ino != ino))
		j = (j + 1) & r->mask;
	return &r->slot[j];
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
 * qualifies (reuse.h).  Returns 0, or -1 on ENOMEM.
 */
static int add_file(struct fidx_reuse *r, const struct fidx_row *row, int64_t start)
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
	if ((r->count + 1) * 2 > r->mask + 1 && grow(r) < 0)
		return -1;
	uint64_t dev = fidx_row_u64(row, FIDX_COL_DEV), ino = fidx_row_u64(row, FIDX_COL_INO);
	struct reuse_slot *slot = find_slot(r, dev, ino);
	if (slot->used)
		return 0; /* a hard link of a file already in: its content is the same */
	if (r->count == r->pool_cap) {
		size_t cap = r->pool_cap ? r->pool_cap * 2 : 1024;
		uint8_t *pool = realloc(r->pool, cap * r->digest_bytes + 1);
		if (!pool)
			return -1;
		r->pool = pool;
		r->pool_cap = cap;
	}
	uint8_t *out = r->pool + r->count * r->digest_bytes;
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		if (!(r->digests & (1u << d)))
			continue;
		memcpy(out, fidx_row_digest(row, d), fidx_digest_len(d));
		out += fidx_digest_len(d);
	}
	*slot = (struct reuse_slot){
		.dev = dev, .ino = ino, .size = fidx_row_u64(row, FIDX_COL_SIZE),
		.mtime_ns = mtime_ns, .ctime_ns = ctime_ns,
		.from = fidx_row_has(row, FIDX_COL_DIGESTS_FROM)
				? fidx_row_int(row, FIDX_COL_DIGESTS_FROM)
				: fidx_row_int(row, FIDX_COL_SCAN_ID),
		.digest_off = r->count * r->digest_bytes, .used = true,
	};
	r->count++;
	return 0;
}

struct fidx_reuse *fidx_reuse_new(unsigned digests, struct fidx_error *err)
{
	struct fidx_reuse *r = calloc(1, sizeof(*r));
	if (!r || grow(r) < 0) {
		free(r);
		fidx_fail_nomem(err);
		return NULL;
	}
	r->digests = digests;
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (digests & (1u << d))
			r->digest_bytes += fidx_digest_len(d);
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
	struct fidx_rows *it = fidx_store_rows(st, &q, err);
	const struct fidx_row *row;
	int rc;
	if (!it)
		return -1;
	while ((rc = fidx_rows_next(it, &row, err)) == 1) {
		if (add_file(r, row, scan->started_ns) < 0) {
			fidx_rows_close(it);
			return fidx_fail(err, ENOMEM, "out of memory loading the digests of scan %"
					 PRId64, scan->id);
		}
	}
	fidx_rows_close(it);
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
	const struct reuse_slot *slot = find_slot(r, m->dev, m->ino);
	if (!slot->used || slot->size != m->size || slot->mtime_ns != mtime_ns ||
	    slot->ctime_ns != ctime_ns)
		return false;
	const uint8_t *in = r->pool + slot->digest_off;
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		if (!(r->digests & (1u << d)))
			continue;
		size_t len = fidx_digest_len(d);
		memcpy(rec->digest[d], in, len);
		in += len;
	}
	rec->digest_mask = r->digests;
	rec->digests_from = slot->from;
	return true;
}

void fidx_reuse_free(struct fidx_reuse *r)
{
	if (!r)
		return;
	free(r->slot);
	free(r->pool);
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
