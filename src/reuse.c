/*
 * reuse.c - recorded scan rows, the digests of an earlier scan, and the
 * paths a resumed scan already holds (reuse.h).
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
 * by the timestamp granularity is left out (SETTLED): it may have changed
 * after it was read without either time moving.
 *
 * The path set of a resumed scan keeps the XXH3-128 of each path (16 bytes
 * instead of the path), in the same kind of table.  Two different paths
 * share a hash with a probability of about n^2 / 2^129: nil for any tree.
 */
#include "reuse.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "hash.h"
#include "rowcheck.h"
#include "store_sqlite.h"

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

/* Sets *errmsg to a malloc'ed copy of the formatted message.  Returns -1. */
__attribute__((format(printf, 2, 3)))
static int fail(char **errmsg, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(errmsg, fmt, ap) < 0)
		*errmsg = NULL;
	va_end(ap);
	return -1;
}

/* Records SQLite's last error on db as "cannot read database: ...".  Returns -1. */
static int db_fail(sqlite3 *db, char **errmsg)
{
	return fail(errmsg, "cannot read database '%s': %s",
		    sqlite3_db_filename(db, "main"), fidx_sqlite_why(db));
}

/* Returns a malloc'ed copy of column col as bytes (NULL for SQL NULL). */
static char *column_dup(sqlite3_stmt *s, int col)
{
	if (sqlite3_column_type(s, col) == SQLITE_NULL)
		return NULL;
	const void *p = sqlite3_column_blob(s, col);
	int n = sqlite3_column_bytes(s, col);
	char *out = malloc(n + 1);
	if (out) {
		if (n)
			memcpy(out, p, n);
		out[n] = '\0';
	}
	return out;
}

/* Returns the value of hex digit c, or -1. */
static int hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decodes one JSON string starting at *p (at its opening quote) into a
 * malloc'ed byte string, advancing *p past it.  A \u00XX escape gives the
 * byte XX, as fidx's JSON writer uses it for bytes that are not UTF-8 (and
 * for control characters); other \u escapes give their UTF-8 encoding.
 * Returns NULL when the text is not a string (or on ENOMEM).
 */
static char *json_string_decode(const char **p)
{
	const char *s = *p;
	if (*s++ != '"')
		return NULL;
	char *out = malloc(strlen(s) + 1), *o = out;
	if (!out)
		return NULL;
	while (*s && *s != '"') {
		if (*s != '\\') {
			*o++ = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case '"': case '\\': case '/': *o++ = *s++; break;
		case 'b': *o++ = '\b'; s++; break;
		case 'f': *o++ = '\f'; s++; break;
		case 'n': *o++ = '\n'; s++; break;
		case 'r': *o++ = '\r'; s++; break;
		case 't': *o++ = '\t'; s++; break;
		case 'u': {
			unsigned cp = 0;
			for (int i = 1; i <= 4; i++) {
				int v = hex_value(s[i]);
				if (v < 0)
					goto bad;
				cp = cp << 4 | (unsigned)v;
			}
			s += 5;
			if (cp < 0x100) {
				*o++ = (char)cp;
			} else if (cp < 0x800) {
				*o++ = (char)(0xc0 | cp >> 6);
				*o++ = (char)(0x80 | (cp & 0x3f));
			} else {
				*o++ = (char)(0xe0 | cp >> 12);
				*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
				*o++ = (char)(0x80 | (cp & 0x3f));
			}
			break;
		}
		default:
			goto bad;
		}
	}
	if (*s != '"')
		goto bad;
	*o = '\0';
	*p = s + 1;
	return out;
bad:
	free(out);
	return NULL;
}

/*
 * Decodes the JSON array of strings in text (as json_extract() returns
 * '$.exclude') into row->excludes.  Returns 0, or -1 when it is not one.
 */
static int decode_excludes(const char *text, struct fidx_scan_row *row)
{
	size_t cap = 1;
	for (const char *c = text; *c; c++)
		cap += *c == ',';
	if (!(row->excludes = calloc(cap + 1, sizeof(*row->excludes))))
		return -1;
	const char *p = text;
	if (*p++ != '[')
		return -1;
	while (*p == ' ')
		p++;
	if (*p == ']')
		return 0;
	for (;;) {
		char *pattern = json_string_decode(&p);
		if (!pattern || row->nexcludes == cap)
			return free(pattern), -1;
		row->excludes[row->nexcludes++] = pattern;
		while (*p == ' ')
			p++;
		if (*p == ']')
			return 0;
		if (*p++ != ',')
			return -1;
		while (*p == ' ')
			p++;
	}
}

/* Reads the scan row s points at (the columns of ROW_SQL) into *row. */
static int read_row(sqlite3_stmt *s, struct fidx_scan_row *row, char **errmsg)
{
	memset(row, 0, sizeof(*row));
	row->id = sqlite3_column_int64(s, 0);
	row->root = column_dup(s, 1);
	snprintf(row->status, sizeof(row->status), "%s",
		 (const char *)sqlite3_column_text(s, 2) ? (const char *)sqlite3_column_text(s, 2)
							  : "");
	row->pid = sqlite3_column_int64(s, 3);
	row->host = column_dup(s, 4);
	const char *hash = (const char *)sqlite3_column_text(s, 5);
	const char *excludes = (const char *)sqlite3_column_text(s, 9);
	row->xdev = sqlite3_column_int(s, 6) != 0;
	row->follow = sqlite3_column_int(s, 7) != 0;
	row->no_stat = sqlite3_column_type(s, 8) != SQLITE_NULL && sqlite3_column_int(s, 8) == 0;
	if (!row->root)
		return fail(errmsg, "out of memory");
	if (!hash || fidx_digest_list_parse(hash, &row->digests) < 0 ||
	    decode_excludes(excludes ? excludes : "[]", row) < 0)
		return fail(errmsg, "scan %" PRId64 ": cannot read the options it was made with",
			    row->id);
	return 0;
}

/* SQL for the value at a JSON path of scan.options, NULL when it is not JSON. */
#define OPTION(path) "CASE WHEN json_valid(options) THEN json_extract(options, '" path "') END"

/* The columns read_row() reads.  pid is NULL before schema version 3. */
#define ROW_SQL(pid_column)                                                      \
	"SELECT id, root, status, " pid_column ", host, " OPTION("$.hash") ", "  \
	OPTION("$.xdev") ", " OPTION("$.follow") ", " OPTION("$.stat") ", "      \
	OPTION("$.exclude") " FROM scan"

/* Returns whether the database's table has the column (schema version 3 added some). */
static bool has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *s;
	bool found = false;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", -1, &s,
			       NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, column, -1, SQLITE_STATIC);
	found = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return found;
}

/* Runs the prepared row query s; returns as fidx_scan_row_get(). */
static int step_row(sqlite3 *db, sqlite3_stmt *s, struct fidx_scan_row *row, char **errmsg)
{
	int rc = sqlite3_step(s);
	int ret;
	if (rc == SQLITE_ROW)
		ret = read_row(s, row, errmsg) < 0 ? -1 : 1;
	else if (rc == SQLITE_DONE)
		ret = 0;
	else
		ret = db_fail(db, errmsg);
	sqlite3_finalize(s);
	if (ret < 0)
		fidx_scan_row_free(row);
	return ret;
}

/* Prepares the row query with the condition cond.  Returns NULL after db_fail(). */
static sqlite3_stmt *prepare_row(sqlite3 *db, const char *cond, char **errmsg)
{
	char sql[1024];
	sqlite3_stmt *s;
	snprintf(sql, sizeof(sql), "%s %s",
		 has_column(db, "scan", "pid") ? ROW_SQL("pid") : ROW_SQL("NULL"), cond);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		db_fail(db, errmsg);
		return NULL;
	}
	return s;
}

int fidx_scan_row_newest(sqlite3 *db, const char *root, const char *const *statuses,
			 int64_t before, struct fidx_scan_row *row, char **errmsg)
{
	char cond[512];
	size_t len = snprintf(cond, sizeof(cond), "WHERE root = CAST(? AS TEXT) AND id < ? AND status IN (");
	for (size_t i = 0; statuses[i] && len < sizeof(cond) - 64; i++)
		len += snprintf(cond + len, sizeof(cond) - len, "%s?", i ? ", " : "");
	snprintf(cond + len, sizeof(cond) - len, ") ORDER BY id DESC LIMIT 1");
	memset(row, 0, sizeof(*row));
	sqlite3_stmt *s = prepare_row(db, cond, errmsg);
	if (!s)
		return -1;
	sqlite3_bind_blob(s, 1, root, (int)strlen(root), SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, before > 0 ? before : INT64_MAX);
	for (int i = 0; statuses[i]; i++)
		sqlite3_bind_text(s, 3 + i, statuses[i], -1, SQLITE_STATIC);
	return step_row(db, s, row, errmsg);
}

void fidx_scan_row_free(struct fidx_scan_row *row)
{
	free(row->root);
	free(row->host);
	for (size_t i = 0; i < row->nexcludes; i++)
		free(row->excludes[i]);
	free(row->excludes);
	memset(row, 0, sizeof(*row));
}

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

/* Adds the file row s points at (the columns of the load query).  Returns 0 or -1. */
static int add_file(struct fidx_reuse *r, sqlite3_stmt *s)
{
	if ((r->count + 1) * 2 > r->mask + 1 && grow(r) < 0)
		return -1;
	uint64_t dev = (uint64_t)sqlite3_column_int64(s, 0);
	uint64_t ino = (uint64_t)sqlite3_column_int64(s, 1);
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
		size_t len = fidx_digest_len(d);
		if ((size_t)sqlite3_column_bytes(s, 6 + d) != len)
			return 0; /* not a digest of ours: read the file again */
		memcpy(out, sqlite3_column_blob(s, 6 + d), len);
		out += len;
	}
	*slot = (struct reuse_slot){
		.dev = dev, .ino = ino, .size = (uint64_t)sqlite3_column_int64(s, 2),
		.mtime_ns = sqlite3_column_int64(s, 3), .ctime_ns = sqlite3_column_int64(s, 4),
		.from = sqlite3_column_int64(s, 5), .digest_off = r->count * r->digest_bytes,
		.used = true,
	};
	r->count++;
	return 0;
}

/*
 * SQL: timestamp column c is older than the start of scan ?1 by more than
 * its granularity, so that a change after the scan read the file moved it
 * (git's "racily clean" files).  A whole second is taken for a file system
 * with 1 or 2 s timestamps (ext4 with 128-byte inodes, FAT): 2 s; finer ones
 * for the kernel's clock, which ticks at most every 10 ms: 0.1 s.
 */
#define SETTLED(c)                                                                 \
	" AND " c " < (SELECT started_ns FROM scan WHERE id = ?1) - CASE WHEN " c \
	" / 1000000000 * 1000000000 = " c " THEN 2000000000 ELSE 100000000 END"

/* Adds the files of scan scan_id to r.  Returns 0, or -1 with *errmsg set. */
static int load_scan(struct fidx_reuse *r, sqlite3 *db, int64_t scan_id, char **errmsg)
{
	char sql[1024];
	size_t len = snprintf(sql, sizeof(sql),
			      "SELECT dev, ino, size, mtime_ns, ctime_ns, %s,"
			      " md5, sha1, sha256, sha512, xxh128 FROM file"
			      " WHERE scan_id = ?1 AND type = 'f' AND error IS NULL"
			      " AND dev IS NOT NULL AND ino IS NOT NULL AND size IS NOT NULL"
			      " AND mtime_ns IS NOT NULL AND ctime_ns IS NOT NULL"
			      SETTLED("mtime_ns") SETTLED("ctime_ns"),
			      has_column(db, "file", "digests_from") ? "coalesce(digests_from, scan_id)"
								     : "scan_id");
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (r->digests & (1u << d))
			len += snprintf(sql + len, sizeof(sql) - len, " AND %s IS NOT NULL",
					fidx_digest_name(d));
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_fail(db, errmsg);
	struct fidx_rowcheck *check = fidx_rowcheck_new(s, FIDX_ROWCHECK_ALL);
	if (!check) {
		sqlite3_finalize(s);
		return fail(errmsg, "out of memory loading the digests of scan %" PRId64, scan_id);
	}
	sqlite3_bind_int64(s, 1, scan_id);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		/* A damaged row (rowcheck.h) gives nothing: its file is read again. */
		if (!fidx_rowcheck(check, s) && add_file(r, s) < 0) {
			fidx_rowcheck_free(check);
			sqlite3_finalize(s);
			return fail(errmsg, "out of memory loading the digests of scan %" PRId64,
				    scan_id);
		}
	}
	fidx_rowcheck_free(check);
	if (rc != SQLITE_DONE) {
		db_fail(db, errmsg);
		sqlite3_finalize(s);
		return -1;
	}
	sqlite3_finalize(s);
	return 0;
}

struct fidx_reuse *fidx_reuse_load(sqlite3 *db, int64_t scan_id, unsigned digests,
				   char **errmsg)
{
	struct fidx_reuse *r = calloc(1, sizeof(*r));
	if (!r || grow(r) < 0) {
		free(r);
		fail(errmsg, "out of memory");
		return NULL;
	}
	r->digests = digests;
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (digests & (1u << d))
			r->digest_bytes += fidx_digest_len(d);
	if (digests && load_scan(r, db, scan_id, errmsg) < 0) {
		fidx_reuse_free(r);
		return NULL;
	}
	return r;
}

int fidx_reuse_load_more(struct fidx_reuse *r, sqlite3 *db, int64_t scan_id, char **errmsg)
{
	return r->digests ? load_scan(r, db, scan_id, errmsg) : 0;
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

struct fidx_pathset *fidx_pathset_load(sqlite3 *db, int64_t scan_id, char **errmsg)
{
	struct fidx_pathset *set = calloc(1, sizeof(*set));
	sqlite3_stmt *s = NULL;
	int rc;
	if (!set || pathset_grow(set) < 0)
		goto nomem;
	/* Entries the interruption left unfinished are done again. */
	if (sqlite3_prepare_v2(db, "SELECT path FROM file WHERE scan_id = ? AND (error IS NULL OR"
			       " error NOT IN ('" FIDX_ERROR_NOT_READ "', '" FIDX_ERROR_NOT_HASHED "'))",
			       -1, &s, NULL) != SQLITE_OK)
		goto dbfail;
	sqlite3_bind_int64(s, 1, scan_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if ((set->count + 1) * 2 > set->mask + 1 && pathset_grow(set) < 0)
			goto nomem;
		XXH128_hash_t h = path_hash(sqlite3_column_blob(s, 0),
					    (size_t)sqlite3_column_bytes(s, 0));
		XXH128_hash_t *slot = pathset_slot(set, h);
		if (!slot->low64 && !slot->high64) {
			*slot = h;
			set->count++;
		}
	}
	if (rc != SQLITE_DONE)
		goto dbfail;
	sqlite3_finalize(s);
	return set;
nomem:
	fail(errmsg, "out of memory loading the paths of scan %" PRId64, scan_id);
	goto out;
dbfail:
	db_fail(db, errmsg);
out:
	sqlite3_finalize(s);
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
