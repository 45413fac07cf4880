/*
 * diff.c - the comparison of two scans (diff.h): a merge-join of two path
 * orders, the pairing of moves, and the report.
 *
 * The two SELECTs step side by side, each in byte order of path (the index
 * file_scan_path; no sort).  Per step the smaller key (path below its root)
 * advances:
 *
 *   key only OLD ─► copy the row whole into removed[]
 *   key only NEW ─► copy the row whole into added[]
 *   both         ─► compare in place (SQLite's column memory); when
 *                   something differs, keep the path, the two ids and the
 *                   bits as a changed entry
 *
 * Then removed[] is sorted by (dev, ino) and every added row, in path
 * order, takes the first removed row of its inode that is not yet taken and
 * has its type, content and birth time: a move.  What is left stays added
 * or removed.
 * Every entry is sorted by key at the end (the changed ones are in order
 * already, the moves and the rest are merged in by one qsort).
 *
 * Memory: the entries, the added and removed rows and the paths, i.e. the
 * differences; the rows that agree are never kept.  --verbose and --json
 * values are read again by id (a rowid look-up each) when printed.
 */
#include "diff.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "dbfile.h"
#include "dbtime.h"
#include "diag.h"
#include "json.h"
#include "output.h"
#include "record.h"
#include "rowcheck.h"
#include "store_sqlite.h"
#include "when.h"

/* Attribute names (--ignore) and summary letters, in enum fidx_diff_attr order. */
static const char *const attr_names[FIDX_DIFF_NATTRS] = {
	"type", "size", "perm", "owner", "group", "mtime", "ctime", "inode", "nlink",
	"target", "content", "atime", "btime", "error",
};
static const char attr_letters[FIDX_DIFF_NATTRS + 1] = "t>pugmcinlHabe";

const char *fidx_diff_attr_name(enum fidx_diff_attr a)
{
	return attr_names[a];
}

int fidx_diff_attr_parse(const char *list, unsigned *mask, const char **bad, size_t *badlen)
{
	unsigned m = 0;
	const char *p = list;
	for (;;) {
		size_t n = strcspn(p, ",");
		int a = 0;
		while (a < FIDX_DIFF_NATTRS &&
		       !(strlen(attr_names[a]) == n && memcmp(attr_names[a], p, n) == 0))
			a++;
		if (a == FIDX_DIFF_NATTRS) {
			*bad = p;
			*badlen = n;
			return -1;
		}
		m |= 1u << a;
		if (!p[n])
			break;
		p += n + 1;
	}
	*mask = m;
	return 0;
}

int fidx_diff_open_status(const char *path)
{
	uint32_t version = 0;
	if (fidx_dbfile_probe(path, &version) == FIDX_DBFILE_FIDX && version > FIDX_SCHEMA_VERSION)
		return FIDX_DIFF_EXIT_VERSION;
	return FIDX_DIFF_EXIT_READ;
}

int fidx_diff_ignore_arg(const char *arg, unsigned *mask)
{
	const char *bad;
	size_t badlen;
	unsigned m;
	if (fidx_diff_attr_parse(arg, &m, &bad, &badlen) < 0) {
		/* Both parts quoted: no raw byte reaches a terminal. */
		char part[128];
		snprintf(part, sizeof(part), "%.*s", (int)(badlen < sizeof(part) ? badlen
									: sizeof(part) - 1), bad);
		fidx_error("invalid --ignore '%s': '%s' is not an attribute (see 'fidx diff --help')",
			   fidx_quote(arg), fidx_quote(part));
		return -1;
	}
	*mask |= m;
	return 0;
}

/* The integer columns of a row, in SELECT order. */
enum { V_SIZE, V_MODE, V_UID, V_GID, V_NLINK, V_DEV, V_INO, V_ATIME, V_MTIME, V_CTIME,
       V_BTIME, NV };

/* One file row: pointing into SQLite's column memory, or copies in the arena. */
struct row {
	int64_t id;                               /* file.id */
	const char *path;                         /* file.path */
	const char *key;                          /* path below the scan's root */
	char type;                                /* type letter, 0 for NULL */
	unsigned present;                         /* bit per V_ column that is not NULL */
	int64_t v[NV];                            /* the integer columns (not the times) */
	struct fidx_time t[FIDX_NTIMES];          /* V_ATIME.. V_BTIME, in that order */
	const char *target;                       /* link_target, or NULL */
	const char *error;                        /* error, or NULL */
	unsigned dmask;                           /* bit per digest that is not NULL */
	const unsigned char *digest[FIDX_NDIGESTS];
	int dlen[FIDX_NDIGESTS];                  /* bytes of each digest */
};

/*
 * The SELECT of both the merge and the look-up by id, then the eight time
 * columns of dbtime.h.
 */
#define ROW_COLUMNS "id, path, type, size, mode, uid, gid, nlink, dev, ino, atime_ns," \
	" mtime_ns, ctime_ns, btime_ns, link_target, md5, sha1, sha256, sha512, xxh128, error," \
	" scan_id"
enum { C_ID, C_PATH, C_TYPE, C_V0, C_TARGET = C_V0 + NV, C_DIGEST0,
       C_ERROR = C_DIGEST0 + FIDX_NDIGESTS, C_SCAN, C_TIME_EXT };
_Static_assert(V_BTIME - V_ATIME + 1 == FIDX_NTIMES && V_BTIME == NV - 1,
	       "the times are the last integer columns, in dbtime.h's order");

/* A growable array of rows or entries. */
struct vec {
	void *items;
	size_t n, cap, size;  /* count, capacity, bytes of one item */
};

/* Returns a new zeroed slot at the end of v, or NULL (ENOMEM). */
static void *vec_push(struct vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 256;
		void *p = realloc(v->items, cap * v->size);
		if (!p)
			return NULL;
		v->items = p;
		v->cap = cap;
	}
	void *slot = (char *)v->items + v->n++ * v->size;
	memset(slot, 0, v->size);
	return slot;
}

/* Sets *errmsg to a formatted one-line message (NULL when out of memory). */
__attribute__((format(printf, 2, 3)))
static void set_error(char **errmsg, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(errmsg, fmt, ap) < 0)
		*errmsg = NULL;
	va_end(ap);
}

/* Returns the schema version of database schema as far as the times go: 4, or 3 before. */
static int times_version(sqlite3 *db, const char *schema)
{
	sqlite3_stmt *s = NULL;
	char *sql = sqlite3_mprintf("SELECT 1 FROM pragma_table_info('file', %Q)"
				    " WHERE name = 'atime_sec'", schema);
	int version = 3;
	if (sql && sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		version = 4;
	sqlite3_finalize(s);
	sqlite3_free(sql);
	return version;
}

/* Prepares "SELECT ROW_COLUMNS ... FROM schema.file <where>".  Returns NULL on failure. */
static sqlite3_stmt *prepare_rows(sqlite3 *db, const char *schema, const char *where)
{
	sqlite3_stmt *s = NULL;
	char *sql = sqlite3_mprintf("SELECT " ROW_COLUMNS "%s FROM \"%w\".file %s",
				    fidx_time_ext_sql(times_version(db, schema), NULL, FIDX_TIME_ALL),
				    schema, where);
	if (sql)
		sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	sqlite3_free(sql);
	return s;
}

/* Fills r from the current row of s (pointers valid until s steps again). */
static void row_read(sqlite3_stmt *s, struct row *r)
{
	r->id = sqlite3_column_int64(s, C_ID);
	r->path = (const char *)sqlite3_column_text(s, C_PATH);
	const char *type = (const char *)sqlite3_column_text(s, C_TYPE);
	r->type = type ? type[0] : 0;
	r->present = 0;
	for (int i = 0; i < V_ATIME; i++) {
		/* One column call, then the value's accessors: a third less time on a
		 * million rows than column_type + column_int64.  The value is
		 * unprotected, which is safe here: one thread owns the connection. */
		sqlite3_value *v = sqlite3_column_value(s, C_V0 + i);
		if (sqlite3_value_type(v) == SQLITE_NULL) {
			r->v[i] = 0;
		} else {
			r->v[i] = sqlite3_value_int64(v);
			r->present |= 1u << i;
		}
	}
	for (int k = 0; k < FIDX_NTIMES; k++)
		if (fidx_time_column(s, C_V0 + V_ATIME + k, C_TIME_EXT, (enum fidx_time_kind)k, &r->t[k]))
			r->present |= 1u << (V_ATIME + k);
	r->target = (const char *)sqlite3_column_text(s, C_TARGET);
	r->error = (const char *)sqlite3_column_text(s, C_ERROR);
	r->dmask = 0;
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		sqlite3_value *v = sqlite3_column_value(s, C_DIGEST0 + d);
		if (sqlite3_value_type(v) == SQLITE_NULL) {
			r->digest[d] = NULL;
			r->dlen[d] = 0;
		} else {
			r->digest[d] = sqlite3_value_blob(v);
			r->dlen[d] = sqlite3_value_bytes(v);
			r->dmask |= 1u << d;
		}
	}
}

/*
 * Returns the part of path below root, or NULL when path is not root or
 * below it.  The root itself is "" (also for root "/"), so that scans of two
 * roots line up.
 */
static const char *key_of(const char *path, const char *root, size_t rootlen)
{
	if (strcmp(root, "/") == 0)
		return strcmp(path, "/") == 0 ? path + 1 : path[0] == '/' ? path : NULL;
	if (strncmp(path, root, rootlen) != 0 || (path[rootlen] && path[rootlen] != '/'))
		return NULL;
	return path + rootlen;
}

/* Whether integer or time column i is equal in a and b (both NULL counts as equal). */
static bool v_eq(const struct row *a, const struct row *b, int i)
{
	bool pa = a->present >> i & 1, pb = b->present >> i & 1;
	if (pa != pb || !pa)
		return pa == pb;
	return i >= V_ATIME ? fidx_time_eq(a->t[i - V_ATIME], b->t[i - V_ATIME]) : a->v[i] == b->v[i];
}

/* Whether two nullable strings are equal. */
static bool s_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Outcomes of content_cmp(). */
enum { CONTENT_SAME, CONTENT_DIFFERS, CONTENT_UNKNOWN, CONTENT_NA };

/*
 * Compares the content of two rows: regular files with digests in common are
 * the same when every common digest is equal; with none in common, unknown
 * if either has one; not compared (CONTENT_NA) when neither has any or one
 * is not a regular file.
 */
static int content_cmp(const struct row *a, const struct row *b)
{
	if (a->type != 'f' || b->type != 'f')
		return CONTENT_NA;
	unsigned common = a->dmask & b->dmask;
	if (!common)
		return (a->dmask | b->dmask) ? CONTENT_UNKNOWN : CONTENT_NA;
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if ((common >> d & 1) && (a->dlen[d] != b->dlen[d] ||
					  (a->dlen[d] && memcmp(a->digest[d], b->digest[d],
								(size_t)a->dlen[d]) != 0)))
			return CONTENT_DIFFERS;
	return CONTENT_SAME;
}

/*
 * Returns the attributes of attrs that differ between a (OLD) and b (NEW),
 * and sets *grew (size: 1 grew, -1 shrank, 0 not both known) and *unknown
 * (content could not be compared, when content is in attrs).
 */
static unsigned compare_rows(const struct row *a, const struct row *b, unsigned attrs,
			     signed char *grew, bool *unknown)
{
	unsigned c = 0;
	bool pa = a->present >> V_MODE & 1, pb = b->present >> V_MODE & 1;

	if (a->type != b->type)
		c |= 1u << FIDX_DIFF_TYPE;
	if (!v_eq(a, b, V_SIZE))
		c |= 1u << FIDX_DIFF_SIZE;
	if (pa != pb || (pa && (a->v[V_MODE] & 07777) != (b->v[V_MODE] & 07777)))
		c |= 1u << FIDX_DIFF_PERM;
	if (!v_eq(a, b, V_UID))
		c |= 1u << FIDX_DIFF_OWNER;
	if (!v_eq(a, b, V_GID))
		c |= 1u << FIDX_DIFF_GROUP;
	if (!v_eq(a, b, V_MTIME))
		c |= 1u << FIDX_DIFF_MTIME;
	if (!v_eq(a, b, V_CTIME))
		c |= 1u << FIDX_DIFF_CTIME;
	if (!v_eq(a, b, V_DEV) || !v_eq(a, b, V_INO))
		c |= 1u << FIDX_DIFF_INODE;
	if (!v_eq(a, b, V_NLINK))
		c |= 1u << FIDX_DIFF_NLINK;
	if (!s_eq(a->target, b->target))
		c |= 1u << FIDX_DIFF_TARGET;
	int content = content_cmp(a, b);
	if (content == CONTENT_DIFFERS)
		c |= 1u << FIDX_DIFF_CONTENT;
	if (!v_eq(a, b, V_ATIME))
		c |= 1u << FIDX_DIFF_ATIME;
	if (!v_eq(a, b, V_BTIME))
		c |= 1u << FIDX_DIFF_BTIME;
	if (!s_eq(a->error, b->error))
		c |= 1u << FIDX_DIFF_ERROR;
	c &= attrs;
	*grew = 0;
	if ((c >> FIDX_DIFF_SIZE & 1) && (a->present & b->present) >> V_SIZE & 1)
		*grew = b->v[V_SIZE] > a->v[V_SIZE] ? 1 : -1;
	*unknown = content == CONTENT_UNKNOWN && (attrs >> FIDX_DIFF_CONTENT & 1);
	return c;
}

/*
 * Whether an added row b can be where removed row a went: type, content, and
 * the birth time where both rows know it (a rename keeps it; a file made
 * after another was deleted may get its inode number again, ext4 does at
 * once, but not its birth time).
 */
static bool same_content(const struct row *a, const struct row *b)
{
	if (a->type != b->type)
		return false;
	if ((a->present & b->present) >> V_BTIME & 1 && !v_eq(a, b, V_BTIME))
		return false;
	if (a->type == 'f' && (a->dmask & b->dmask))
		return content_cmp(a, b) == CONTENT_SAME;
	return v_eq(a, b, V_SIZE) && v_eq(a, b, V_MTIME);
}

/*
 * Copies r's strings and digests into the arena so that it outlives the
 * statement step (key keeps its offset within path).  Returns 0, or -1
 * (ENOMEM).
 */
static int row_keep(struct fidx_arena *ar, struct row *r)
{
	size_t off = (size_t)(r->key - r->path);
	if (!(r->path = fidx_arena_copy(ar, r->path, strlen(r->path))))
		return -1;
	r->key = r->path + off;
	if (r->target && !(r->target = fidx_arena_copy(ar, r->target, strlen(r->target))))
		return -1;
	if (r->error && !(r->error = fidx_arena_copy(ar, r->error, strlen(r->error))))
		return -1;
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (r->digest[d] && !(r->digest[d] = (const unsigned char *)fidx_arena_copy(
					      ar, r->digest[d], (size_t)r->dlen[d])))
			return -1;
	return 0;
}

/* A removed row's inode, for the pairing of moves. */
struct inode_ref {
	int64_t dev, ino;
	size_t index;   /* in removed[] (path order) */
};

/* Orders inode_refs by device, inode, then path order. */
static int inode_ref_cmp(const void *pa, const void *pb)
{
	const struct inode_ref *a = pa, *b = pb;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* Orders entries by key, in byte order. */
static int entry_cmp(const void *pa, const void *pb)
{
	const struct fidx_diff_entry *a = pa, *b = pb;
	return strcmp(a->key, b->key);
}

/* Appends an entry for an added or removed row.  Returns 0, or -1 (ENOMEM). */
static int push_side(struct vec *entries, const struct row *r, enum fidx_diff_kind kind)
{
	struct fidx_diff_entry *e = vec_push(entries);
	if (!e)
		return -1;
	e->kind = kind;
	e->key = r->key;
	e->path = r->path;
	if (kind == FIDX_DIFF_ADDED)
		e->new_id = r->id;
	else
		e->old_id = r->id;
	return 0;
}

/*
 * Pairs removed and added rows into moves (see the top of the file) and
 * appends every move, and every row left over as added or removed, to
 * entries.  Returns 0, or -1 (ENOMEM).
 */
static int pair_moves(const struct vec *removed, const struct vec *added, unsigned attrs,
		      struct vec *entries)
{
	const struct row *rem = removed->items, *add = added->items;
	struct inode_ref *refs = malloc((removed->n ? removed->n : 1) * sizeof(*refs));
	bool *taken = calloc(removed->n ? removed->n : 1, 1);
	size_t nrefs = 0;
	int ret = -1;

	if (!refs || !taken)
		goto out;
	for (size_t i = 0; i < removed->n; i++)
		if ((rem[i].present >> V_DEV & 1) && (rem[i].present >> V_INO & 1))
			refs[nrefs++] = (struct inode_ref){rem[i].v[V_DEV], rem[i].v[V_INO], i};
	qsort(refs, nrefs, sizeof(*refs), inode_ref_cmp);

	for (size_t j = 0; j < added->n; j++) {
		const struct row *b = &add[j];
		bool moved = false;
		if ((b->present >> V_DEV & 1) && (b->present >> V_INO & 1)) {
			/* The first ref of b's inode, by binary search. */
			struct inode_ref want = {b->v[V_DEV], b->v[V_INO], 0};
			size_t lo = 0, hi = nrefs;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (inode_ref_cmp(&refs[mid], &want) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < nrefs && refs[lo].dev == want.dev && refs[lo].ino == want.ino; lo++) {
				const struct row *a = &rem[refs[lo].index];
				if (taken[refs[lo].index] || !same_content(a, b))
					continue;
				struct fidx_diff_entry *e = vec_push(entries);
				if (!e)
					goto out;
				taken[refs[lo].index] = true;
				e->kind = FIDX_DIFF_MOVED;
				e->key = a->key;
				e->path = b->path;
				e->old_path = a->path;
				e->old_id = a->id;
				e->new_id = b->id;
				e->changed = compare_rows(a, b, attrs, &e->grew, &e->unknown);
				moved = true;
				break;
			}
		}
		if (!moved && push_side(entries, b, FIDX_DIFF_ADDED) < 0)
			goto out;
	}
	for (size_t i = 0; i < removed->n; i++)
		if (!taken[i] && push_side(entries, &rem[i], FIDX_DIFF_REMOVED) < 0)
			goto out;
	ret = 0;
out:
	free(refs);
	free(taken);
	return ret;
}

/*
 * Makes the row checks (rowcheck.h) of s, which reads rows of side.  Returns
 * them, or NULL (out of memory).
 */
static struct fidx_rowcheck *side_check(sqlite3_stmt *s, const struct fidx_diff_side *side)
{
	struct fidx_rowcheck *c = fidx_rowcheck_new(s, FIDX_ROWCHECK_ALL);
	if (c && fidx_rowcheck_root(c, side->scan_id, side->root) < 0) {
		fidx_rowcheck_free(c);
		c = NULL;
	}
	return c;
}

/*
 * Checks the row s is on (rowcheck.h) and fills r with it.  Returns 0, or -1
 * with "database 'x' is damaged: ..." in *errmsg.
 */
static int row_take(sqlite3_stmt *s, struct fidx_rowcheck *c, const struct fidx_diff_side *side,
		    struct row *r, char **errmsg)
{
	const char *what = fidx_rowcheck(c, s);
	if (what) {
		if (side->db)
			set_error(errmsg, "database '%s' is damaged: %s", fidx_quote(side->db), what);
		else
			set_error(errmsg, "the database is damaged: %s", what);
		return -1;
	}
	row_read(s, r);
	return 0;
}

/*
 * Steps s to its next row and fills r with it.  Returns 1 for a row, 0 at
 * the end, -1 when SQLite failed or the row is damaged (rowcheck.h, its path
 * not below the side's root: the message in *errmsg).
 */
static int side_next(sqlite3 *db, sqlite3_stmt *s, struct fidx_rowcheck *c,
		     const struct fidx_diff_side *side, struct row *r, char **errmsg)
{
	int rc = sqlite3_step(s);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW) {
		set_error(errmsg, "cannot read scan %lld: %s", (long long)side->scan_id,
			  fidx_sqlite_why(db));
		return -1;
	}
	if (row_take(s, c, side, r, errmsg) < 0)
		return -1;
	if (!r->path || !(r->key = key_of(r->path, side->root, strlen(side->root)))) {
		set_error(errmsg, "scan %lld holds '%s', which is not below its root",
			  (long long)side->scan_id, fidx_quote(r->path ? r->path : ""));
		return -1;
	}
	return 1;
}

/*
 * The folder of the database a scan was written into (its options'
 * "database", docs/SCHEMA.md): its path, and its device and inode as it is
 * now, so that the folder is known by any path a scan met it by (a root
 * given through a symlink, a bind mount, a followed link).
 */
struct own_folder {
	char *path;    /* malloc'ed; NULL when the scan does not say (made before
			  fidx recorded it) or on ENOMEM */
	bool known;    /* dev and ino hold the folder's, stat(2) now */
	int64_t dev, ino;
};

/* Reads the own_folder of the scan side->scan_id. */
static struct own_folder database_folder(sqlite3 *db, const struct fidx_diff_side *side)
{
	sqlite3_stmt *s = NULL;
	struct own_folder f = {0};
	struct stat sb;
	char *sql = sqlite3_mprintf("SELECT CASE WHEN json_valid(options) THEN"
				    " json_extract(options, '$.database') END FROM \"%w\".scan"
				    " WHERE id = ?", side->schema);
	if (sql && sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, side->scan_id);
		const char *path = sqlite3_step(s) == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 0)
								 : NULL;
		const char *slash = path ? strrchr(path, '/') : NULL;
		if (slash)
			f.path = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	}
	sqlite3_finalize(s);
	sqlite3_free(sql);
	if (f.path && stat(f.path, &sb) == 0) {
		f.known = true;
		f.dev = (int64_t)sb.st_dev;
		f.ino = (int64_t)sb.st_ino;
	}
	return f;
}

/* Whether row r is the folder f: the same path, or the same device and inode. */
static bool is_own_folder(const struct own_folder *f, const struct row *r)
{
	if (f->path && strcmp(r->path, f->path) == 0)
		return true;
	return f->known && r->type == 'd' && (r->present >> V_DEV & 1) &&
	       (r->present >> V_INO & 1) && r->v[V_DEV] == f->dev && r->v[V_INO] == f->ino;
}

/* The times a scan changes in the folder of its own database (its -wal, -shm come and go). */
#define OWN_FOLDER_TIMES \
	(1u << FIDX_DIFF_MTIME | 1u << FIDX_DIFF_CTIME | 1u << FIDX_DIFF_ATIME)

struct fidx_diff *fidx_diff_compare(sqlite3 *db, const struct fidx_diff_side *old,
				    const struct fidx_diff_side *new, unsigned attrs,
				    char **errmsg)
{
	struct fidx_diff *d = calloc(1, sizeof(*d));
	struct vec removed = {.size = sizeof(struct row)}, added = {.size = sizeof(struct row)};
	struct vec entries = {.size = sizeof(struct fidx_diff_entry)};
	sqlite3_stmt *so = prepare_rows(db, old->schema, "WHERE scan_id = ? ORDER BY path");
	sqlite3_stmt *sn = prepare_rows(db, new->schema, "WHERE scan_id = ? ORDER BY path");
	struct fidx_rowcheck *co = NULL, *cn = NULL;
	struct row a, b;
	int ha, hb;
	/* The folders of the scans' own databases: their times moved by the scans themselves. */
	struct own_folder folder[2] = {database_folder(db, old), database_folder(db, new)};

	*errmsg = NULL;
	if (!d)
		goto nomem;
	if (!so || !sn) {
		set_error(errmsg, "cannot read the scans: %s", fidx_sqlite_why(db));
		goto fail;
	}
	if (!(co = side_check(so, old)) || !(cn = side_check(sn, new)))
		goto nomem;
	sqlite3_bind_int64(so, 1, old->scan_id);
	sqlite3_bind_int64(sn, 1, new->scan_id);
	if ((ha = side_next(db, so, co, old, &a, errmsg)) < 0 ||
	    (hb = side_next(db, sn, cn, new, &b, errmsg)) < 0)
		goto fail;
	while (ha || hb) {
		int c = !ha ? 1 : !hb ? -1 : strcmp(a.key, b.key);
		if (c < 0) {
			struct row *r = vec_push(&removed);
			if (!r)
				goto nomem;
			*r = a;
			if (row_keep(&d->arena, r) < 0)
				goto nomem;
		} else if (c > 0) {
			struct row *r = vec_push(&added);
			if (!r)
				goto nomem;
			*r = b;
			if (row_keep(&d->arena, r) < 0)
				goto nomem;
		} else {
			signed char grew;
			bool unknown;
			unsigned changed = compare_rows(&a, &b, attrs, &grew, &unknown);
			if (is_own_folder(&folder[0], &a) || is_own_folder(&folder[1], &b))
				changed &= ~OWN_FOLDER_TIMES;
			if (changed) {
				struct fidx_diff_entry *e = vec_push(&entries);
				char *path;
				if (!e || !(path = fidx_arena_copy(&d->arena, b.path, strlen(b.path))))
					goto nomem;
				*e = (struct fidx_diff_entry){
					.kind = FIDX_DIFF_CHANGED, .path = path,
					.key = path + (b.key - b.path), .old_id = a.id,
					.new_id = b.id, .changed = changed, .grew = grew,
					.unknown = unknown,
				};
			}
		}
		if (c <= 0 && (ha = side_next(db, so, co, old, &a, errmsg)) < 0)
			goto fail;
		if (c >= 0 && (hb = side_next(db, sn, cn, new, &b, errmsg)) < 0)
			goto fail;
	}
	if (pair_moves(&removed, &added, attrs, &entries) < 0)
		goto nomem;
	if (entries.n)
		qsort(entries.items, entries.n, entries.size, entry_cmp);
	d->entries = entries.items;
	d->n = entries.n;
	entries.items = NULL;
	for (size_t i = 0; i < d->n; i++)
		d->count[d->entries[i].kind]++;
	goto out;
nomem:
	set_error(errmsg, "out of memory");
fail:
	fidx_diff_free(d);
	d = NULL;
out:
	free(folder[0].path);
	free(folder[1].path);
	fidx_rowcheck_free(co);
	fidx_rowcheck_free(cn);
	sqlite3_finalize(so);
	sqlite3_finalize(sn);
	free(removed.items);
	free(added.items);
	free(entries.items);
	return d;
}

void fidx_diff_free(struct fidx_diff *d)
{
	if (!d)
		return;
	free(d->entries);
	fidx_arena_free(&d->arena);
	free(d);
}

const char *fidx_diff_summary(const struct fidx_diff_entry *e, char buf[static FIDX_DIFF_NATTRS + 1])
{
	for (int a = 0; a < FIDX_DIFF_NATTRS; a++) {
		if (e->kind == FIDX_DIFF_ADDED || e->kind == FIDX_DIFF_REMOVED)
			buf[a] = e->kind == FIDX_DIFF_ADDED ? '+' : '-';
		else if (a == FIDX_DIFF_SIZE && (e->changed >> a & 1))
			buf[a] = e->grew < 0 ? '<' : e->grew > 0 ? '>' : 's';
		else if (a == FIDX_DIFF_CONTENT && e->unknown)
			buf[a] = '?';
		else
			buf[a] = e->changed >> a & 1 ? attr_letters[a] : '.';
	}
	buf[FIDX_DIFF_NATTRS] = '\0';
	return buf;
}

int fidx_diff_status(const struct fidx_diff *d)
{
	int status = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct fidx_diff_entry *e = &d->entries[i];
		switch (e->kind) {
		case FIDX_DIFF_ADDED: status |= 1; break;
		case FIDX_DIFF_REMOVED: status |= 2; break;
		case FIDX_DIFF_CHANGED: status |= 4; break;
		default: status |= 3 | (e->changed ? 4 : 0); break;
		}
	}
	return status;
}

const char *fidx_diff_counts(const struct fidx_diff *d, char buf[static 128])
{
	if (d->n == 0)
		snprintf(buf, 128, "identical");
	else
		snprintf(buf, 128, "%zu added, %zu removed, %zu changed, %zu moved",
			 d->count[FIDX_DIFF_ADDED], d->count[FIDX_DIFF_REMOVED],
			 d->count[FIDX_DIFF_CHANGED], d->count[FIDX_DIFF_MOVED]);
	return buf;
}

/* The words of each kind, as printed. */
static const char *const kind_names[FIDX_DIFF_NKINDS] = {"added", "removed", "changed", "moved"};

/* The digests shown for content, strongest first. */
static const enum fidx_digest digest_pref[FIDX_NDIGESTS] = {
	FIDX_SHA256, FIDX_SHA512, FIDX_SHA1, FIDX_XXH128, FIDX_MD5,
};

/*
 * The digest to show for the content of a (OLD) and b (NEW): the first of
 * digest_pref the two have in common and that differs; else -1 (each side
 * then shows its own first).
 */
static int shown_digest(const struct row *a, const struct row *b)
{
	unsigned common = a->dmask & b->dmask;
	for (int i = 0; i < FIDX_NDIGESTS; i++) {
		enum fidx_digest d = digest_pref[i];
		if ((common >> d & 1) && (a->dlen[d] != b->dlen[d] ||
					  (a->dlen[d] && memcmp(a->digest[d], b->digest[d],
								(size_t)a->dlen[d]) != 0)))
			return (int)d;
	}
	return -1;
}

/* The name of a type letter, as file_view says it, or NULL when unknown. */
static const char *type_name(char t)
{
	switch (t) {
	case 'f': return "file";
	case 'd': return "directory";
	case 'l': return "symlink";
	case 'p': return "fifo";
	case 's': return "socket";
	case 'c': return "char device";
	case 'b': return "block device";
	default: return NULL;
	}
}

/* The integer column that holds a plain integer or time attribute, or -1. */
static int attr_column(enum fidx_diff_attr a)
{
	switch (a) {
	case FIDX_DIFF_SIZE: return V_SIZE;
	case FIDX_DIFF_OWNER: return V_UID;
	case FIDX_DIFF_GROUP: return V_GID;
	case FIDX_DIFF_NLINK: return V_NLINK;
	case FIDX_DIFF_MTIME: return V_MTIME;
	case FIDX_DIFF_CTIME: return V_CTIME;
	case FIDX_DIFF_ATIME: return V_ATIME;
	case FIDX_DIFF_BTIME: return V_BTIME;
	default: return -1;
	}
}

/* Whether attribute a is a time (printed in ISO 8601). */
static bool is_time(enum fidx_diff_attr a)
{
	return a == FIDX_DIFF_MTIME || a == FIDX_DIFF_CTIME || a == FIDX_DIFF_ATIME ||
	       a == FIDX_DIFF_BTIME;
}

/*
 * Writes r's value of attribute a for people: '-' for NULL, ls -l modes, ISO
 * times, "major:minor inode", quoted text (fidx_quote: one line whatever the
 * bytes), "name:hex" for content (digest d, or r's strongest when d < 0).
 */
static void text_value(FILE *out, const struct row *r, enum fidx_diff_attr a, int d)
{
	int col = attr_column(a);
	char buf[FIDX_WHEN_ISO];

	if (col >= 0) {
		if (!(r->present >> col & 1))
			fputs("-", out);
		else if (is_time(a))
			fputs(fidx_when_iso(r->t[col - V_ATIME], buf), out);
		else
			fprintf(out, "%lld", (long long)r->v[col]);
		return;
	}
	switch (a) {
	case FIDX_DIFF_TYPE:
		fputs(type_name(r->type) ? type_name(r->type) : "-", out);
		break;
	case FIDX_DIFF_PERM:
		if (r->present >> V_MODE & 1)
			fputs(fidx_mode_string((uint32_t)r->v[V_MODE], buf), out);
		else
			fputs("-", out);
		break;
	case FIDX_DIFF_INODE:
		if ((r->present >> V_DEV & 1) && (r->present >> V_INO & 1))
			fprintf(out, "%u:%u %llu", major((dev_t)r->v[V_DEV]), minor((dev_t)r->v[V_DEV]),
				(unsigned long long)r->v[V_INO]);
		else
			fputs("-", out);
		break;
	case FIDX_DIFF_TARGET:
	case FIDX_DIFF_ERROR: {
		const char *s = a == FIDX_DIFF_TARGET ? r->target : r->error;
		if (s)
			fprintf(out, "'%s'", fidx_quote(s));
		else
			fputs("-", out);
		break;
	}
	case FIDX_DIFF_CONTENT:
		for (int i = 0; d < 0 && i < FIDX_NDIGESTS; i++)
			if (r->dmask >> digest_pref[i] & 1)
				d = (int)digest_pref[i];
		if (d >= 0 && (r->dmask >> d & 1)) {
			fprintf(out, "%s:", fidx_digest_name((enum fidx_digest)d));
			fidx_out_hex(out, r->digest[d], (size_t)r->dlen[d]);
		} else {
			fputs("-", out);
		}
		break;
	default:
		break;
	}
}

/* Writes r's value of attribute a as a JSON value (null for NULL). */
static void json_value(FILE *out, const struct row *r, enum fidx_diff_attr a)
{
	int col = attr_column(a);
	char buf[FIDX_WHEN_ISO];

	if (col >= 0) {
		if (!(r->present >> col & 1))
			fputs("null", out);
		else if (is_time(a))
			fprintf(out, "\"%s\"", fidx_when_iso(r->t[col - V_ATIME], buf));
		else
			fprintf(out, "%lld", (long long)r->v[col]);
		return;
	}
	switch (a) {
	case FIDX_DIFF_TYPE:
		if (type_name(r->type))
			fprintf(out, "\"%s\"", type_name(r->type));
		else
			fputs("null", out);
		break;
	case FIDX_DIFF_PERM:
		if (r->present >> V_MODE & 1)
			fprintf(out, "\"%s\"", fidx_mode_string((uint32_t)r->v[V_MODE], buf));
		else
			fputs("null", out);
		break;
	case FIDX_DIFF_INODE:
		if ((r->present >> V_DEV & 1) && (r->present >> V_INO & 1))
			fprintf(out, "{\"dev\":%llu,\"ino\":%llu}", (unsigned long long)r->v[V_DEV],
				(unsigned long long)r->v[V_INO]);
		else
			fputs("null", out);
		break;
	case FIDX_DIFF_TARGET:
	case FIDX_DIFF_ERROR: {
		const char *s = a == FIDX_DIFF_TARGET ? r->target : r->error;
		if (s)
			fidx_json_string(out, s);
		else
			fputs("null", out);
		break;
	}
	case FIDX_DIFF_CONTENT:
		putc('{', out);
		for (int d = 0, n = 0; d < FIDX_NDIGESTS; d++) {
			if (!(r->dmask >> d & 1))
				continue;
			fprintf(out, "%s\"%s\":", n++ ? "," : "", fidx_digest_name((enum fidx_digest)d));
			fidx_json_hex(out, r->digest[d], (size_t)r->dlen[d]);
		}
		putc('}', out);
		break;
	default:
		break;
	}
}

/* Whether e shows attribute a: it changed, or content could not be compared. */
static bool shows(const struct fidx_diff_entry *e, int a)
{
	return (e->changed >> a & 1) || (a == FIDX_DIFF_CONTENT && e->unknown);
}

/*
 * Writes the object "key":{...} of r's values of the attributes e shows (a
 * link target as fidx_json_path() writes a path).
 */
static void json_values(FILE *out, const char *key, const struct fidx_diff_entry *e,
			const struct row *r)
{
	int n = 0;
	fprintf(out, ",\"%s\":{", key);
	for (int a = 0; a < FIDX_DIFF_NATTRS; a++) {
		if (!shows(e, a))
			continue;
		if (n++)
			putc(',', out);
		if (a == FIDX_DIFF_TARGET && r->target) {
			fidx_json_path(out, "target", r->target);
		} else {
			fprintf(out, "\"%s\":", attr_names[a]);
			json_value(out, r, (enum fidx_diff_attr)a);
		}
	}
	putc('}', out);
}

/* Writes one entry as a JSON object on its own line. */
static void print_json(FILE *out, const struct fidx_diff_entry *e, const struct row *a,
		       const struct row *b)
{
	char summary[FIDX_DIFF_NATTRS + 1];
	fprintf(out, "{\"kind\":\"%s\",", kind_names[e->kind]);
	fidx_json_path(out, "path", e->path);
	if (e->old_path) {
		putc(',', out);
		fidx_json_path(out, "old_path", e->old_path);
	}
	if (e->kind == FIDX_DIFF_CHANGED || e->kind == FIDX_DIFF_MOVED) {
		fprintf(out, ",\"summary\":\"%s\",\"changes\":[", fidx_diff_summary(e, summary));
		for (int x = 0, n = 0; x < FIDX_DIFF_NATTRS; x++)
			if (e->changed >> x & 1)
				fprintf(out, "%s\"%s\"", n++ ? "," : "", attr_names[x]);
		putc(']', out);
		if (e->unknown)
			fputs(",\"unknown\":[\"content\"]", out);
		if (a && b) {
			json_values(out, "old", e, a);
			json_values(out, "new", e, b);
		}
	}
	fputs("}\n", out);
}

/* Writes one entry as text: its line, then with a and b one line per attribute shown. */
static void print_text(FILE *out, const struct fidx_diff_entry *e, const struct row *a,
		       const struct row *b, bool nul)
{
	char summary[FIDX_DIFF_NATTRS + 1];
	int end = nul ? '\0' : '\n';
	fprintf(out, "%-7s %s ", kind_names[e->kind], fidx_diff_summary(e, summary));
	if (e->old_path) {
		fidx_out_name(out, e->old_path);
		if (nul)
			putc('\0', out);
		else
			fputs(" -> ", out);
	}
	fidx_out_name(out, e->path);
	putc(end, out);
	if (!a || !b)
		return;
	int d = shown_digest(a, b);
	for (int x = 0; x < FIDX_DIFF_NATTRS; x++) {
		if (!shows(e, x))
			continue;
		fprintf(out, "%8s%-8s ", "", attr_names[x]);
		text_value(out, a, (enum fidx_diff_attr)x, d);
		fputs(" -> ", out);
		text_value(out, b, (enum fidx_diff_attr)x, d);
		putc(end, out);
	}
}

/*
 * Reads the row id of the prepared look-up s into r.  Returns 0, or -1
 * with the message in *errmsg.
 */
static int fetch(sqlite3 *db, sqlite3_stmt *s, struct fidx_rowcheck *c,
		 const struct fidx_diff_side *side, int64_t id, struct row *r, char **errmsg)
{
	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, id);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		return row_take(s, c, side, r, errmsg);
	if (rc == SQLITE_DONE)
		set_error(errmsg, "file row %lld vanished from the database", (long long)id);
	else
		set_error(errmsg, "cannot read file row %lld: %s", (long long)id, fidx_sqlite_why(db));
	return -1;
}

int fidx_diff_print(const struct fidx_diff *d, sqlite3 *db, const struct fidx_diff_side *old,
		    const struct fidx_diff_side *new, const struct fidx_diff_print_opts *o,
		    FILE *out, char **errmsg)
{
	sqlite3_stmt *so = NULL, *sn = NULL;
	struct fidx_rowcheck *co = NULL, *cn = NULL;
	int ret = -1;

	*errmsg = NULL;
	if (o->verbose && (!(so = prepare_rows(db, old->schema, "WHERE id = ?")) ||
			   !(sn = prepare_rows(db, new->schema, "WHERE id = ?")))) {
		set_error(errmsg, "cannot read the scans: %s", fidx_sqlite_why(db));
		goto out;
	}
	if (o->verbose && (!(co = side_check(so, old)) || !(cn = side_check(sn, new)))) {
		set_error(errmsg, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < d->n; i++) {
		const struct fidx_diff_entry *e = &d->entries[i];
		struct row a, b;
		bool values = o->verbose && (e->kind == FIDX_DIFF_CHANGED || e->kind == FIDX_DIFF_MOVED);
		if (values && (fetch(db, so, co, old, e->old_id, &a, errmsg) < 0 ||
			       fetch(db, sn, cn, new, e->new_id, &b, errmsg) < 0))
			goto out;
		if (o->json)
			print_json(out, e, values ? &a : NULL, values ? &b : NULL);
		else
			print_text(out, e, values ? &a : NULL, values ? &b : NULL, o->nul);
	}
	ret = 0;
out:
	fidx_rowcheck_free(co);
	fidx_rowcheck_free(cn);
	sqlite3_finalize(so);
	sqlite3_finalize(sn);
	return ret;
}
