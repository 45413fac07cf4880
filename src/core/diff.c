/*
 * diff.c - the comparison of two scans (diff.h): a merge-join of two path
 * orders, the pairing of moves, and the report.
 *
 * The two row iterators step side by side, each in byte order of path.
 * Per step the smaller key (path below its root) advances:
 *
 *   key only OLD ─► copy the row whole into removed[]
 *   key only NEW ─► copy the row whole into added[]
 *   both         ─► compare in place (the store's memory); when
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
 * values are read again by id when printed (tool/diffout.c).
 */
#include "diff.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "record.h"

/* Attribute names (--ignore) and summary letters, in enum fidx_diff_attr order. */
static const char *const attr_names[FIDX_DIFF_NATTRS] = {
	"type", "size", "perm", "owner", "group", "mtime", "ctime", "inode", "nlink",
	"target", "content", "atime", "btime", "error", "state",
};
static const char attr_letters[FIDX_DIFF_NATTRS + 1] = "t>pugmcinlHabeD";

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

/* The diff row's integer column of each store column, -1 for none. */
static int v_of(enum fidx_col c)
{
	switch (c) {
	case FIDX_COL_SIZE: return FIDX_DIFF_V_SIZE;
	case FIDX_COL_MODE: return FIDX_DIFF_V_MODE;
	case FIDX_COL_UID: return FIDX_DIFF_V_UID;
	case FIDX_COL_GID: return FIDX_DIFF_V_GID;
	case FIDX_COL_NLINK: return FIDX_DIFF_V_NLINK;
	case FIDX_COL_DEV: return FIDX_DIFF_V_DEV;
	case FIDX_COL_INO: return FIDX_DIFF_V_INO;
	default: return -1;
	}
}

void fidx_diff_row_of(const struct fidx_row *row, struct fidx_diff_row *r)
{
	static const enum fidx_col ints[] = {FIDX_COL_SIZE, FIDX_COL_MODE, FIDX_COL_UID,
					     FIDX_COL_GID, FIDX_COL_NLINK, FIDX_COL_DEV,
					     FIDX_COL_INO};
	r->id = fidx_row_int(row, FIDX_COL_ID);
	r->path = fidx_row_text(row, FIDX_COL_PATH);
	r->key = NULL;
	r->type = fidx_row_type(row);
	r->present = 0;
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		int v = v_of(ints[i]);
		r->v[v] = fidx_row_int(row, ints[i]);
		if (fidx_row_has(row, ints[i]))
			r->present |= 1u << v;
	}
	for (int k = 0; k < 4; k++)
		if (fidx_row_time(row, FIDX_COL_ATIME + k, &r->t[k]))
			r->present |= 1u << (FIDX_DIFF_V_ATIME + k);
	r->target = fidx_row_text(row, FIDX_COL_LINK_TARGET);
	r->error = fidx_row_text(row, FIDX_COL_ERROR);
	r->state = fidx_row_text(row, FIDX_COL_STATE);
	r->dmask = 0;
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		enum fidx_col c = FIDX_COL_MD5 + d;
		r->digest[d] = fidx_row_has(row, c) ? row->v[c].p : NULL;
		r->dlen[d] = (int)fidx_row_len(row, c);
		if (fidx_row_has(row, c))
			r->dmask |= 1u << d;
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
static bool v_eq(const struct fidx_diff_row *a, const struct fidx_diff_row *b, int i)
{
	bool pa = a->present >> i & 1, pb = b->present >> i & 1;
	if (pa != pb || !pa)
		return pa == pb;
	return i >= FIDX_DIFF_V_ATIME ? fidx_time_eq(a->t[i - FIDX_DIFF_V_ATIME], b->t[i - FIDX_DIFF_V_ATIME]) : a->v[i] == b->v[i];
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
static int content_cmp(const struct fidx_diff_row *a, const struct fidx_diff_row *b)
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
static unsigned compare_rows(const struct fidx_diff_row *a, const struct fidx_diff_row *b, unsigned attrs,
			     signed char *grew, bool *unknown)
{
	unsigned c = 0;
	bool pa = a->present >> FIDX_DIFF_V_MODE & 1, pb = b->present >> FIDX_DIFF_V_MODE & 1;

	if (a->type != b->type)
		c |= 1u << FIDX_DIFF_TYPE;
	if (!v_eq(a, b, FIDX_DIFF_V_SIZE))
		c |= 1u << FIDX_DIFF_SIZE;
	if (pa != pb || (pa && (a->v[FIDX_DIFF_V_MODE] & 07777) != (b->v[FIDX_DIFF_V_MODE] & 07777)))
		c |= 1u << FIDX_DIFF_PERM;
	if (!v_eq(a, b, FIDX_DIFF_V_UID))
		c |= 1u << FIDX_DIFF_OWNER;
	if (!v_eq(a, b, FIDX_DIFF_V_GID))
		c |= 1u << FIDX_DIFF_GROUP;
	if (!v_eq(a, b, FIDX_DIFF_V_MTIME))
		c |= 1u << FIDX_DIFF_MTIME;
	if (!v_eq(a, b, FIDX_DIFF_V_CTIME))
		c |= 1u << FIDX_DIFF_CTIME;
	if (!v_eq(a, b, FIDX_DIFF_V_DEV) || !v_eq(a, b, FIDX_DIFF_V_INO))
		c |= 1u << FIDX_DIFF_INODE;
	if (!v_eq(a, b, FIDX_DIFF_V_NLINK))
		c |= 1u << FIDX_DIFF_NLINK;
	if (!s_eq(a->target, b->target))
		c |= 1u << FIDX_DIFF_TARGET;
	int content = content_cmp(a, b);
	if (content == CONTENT_DIFFERS)
		c |= 1u << FIDX_DIFF_CONTENT;
	if (!v_eq(a, b, FIDX_DIFF_V_ATIME))
		c |= 1u << FIDX_DIFF_ATIME;
	if (!v_eq(a, b, FIDX_DIFF_V_BTIME))
		c |= 1u << FIDX_DIFF_BTIME;
	if (!s_eq(a->error, b->error))
		c |= 1u << FIDX_DIFF_ERROR;
	if (!s_eq(a->state, b->state))
		c |= 1u << FIDX_DIFF_STATE;
	c &= attrs;
	*grew = 0;
	if ((c >> FIDX_DIFF_SIZE & 1) && (a->present & b->present) >> FIDX_DIFF_V_SIZE & 1)
		*grew = b->v[FIDX_DIFF_V_SIZE] > a->v[FIDX_DIFF_V_SIZE] ? 1 : -1;
	*unknown = content == CONTENT_UNKNOWN && (attrs >> FIDX_DIFF_CONTENT & 1);
	return c;
}

/*
 * Whether an added row b can be where removed row a went: type, content, and
 * the birth time where both rows know it (a rename keeps it; a file made
 * after another was deleted may get its inode number again, ext4 does at
 * once, but not its birth time).
 */
static bool same_content(const struct fidx_diff_row *a, const struct fidx_diff_row *b)
{
	if (a->type != b->type)
		return false;
	if ((a->present & b->present) >> FIDX_DIFF_V_BTIME & 1 && !v_eq(a, b, FIDX_DIFF_V_BTIME))
		return false;
	if (a->type == 'f' && (a->dmask & b->dmask))
		return content_cmp(a, b) == CONTENT_SAME;
	return v_eq(a, b, FIDX_DIFF_V_SIZE) && v_eq(a, b, FIDX_DIFF_V_MTIME);
}

/*
 * Copies r's strings and digests into the arena so that it outlives the
 * statement step (key keeps its offset within path).  Returns 0, or -1
 * (ENOMEM).
 */
int fidx_diff_row_keep(struct fidx_arena *ar, struct fidx_diff_row *r)
{
	size_t off = r->key ? (size_t)(r->key - r->path) : 0;
	if (!(r->path = fidx_arena_copy(ar, r->path, strlen(r->path))))
		return -1;
	r->key = r->key ? r->path + off : NULL;
	if (r->target && !(r->target = fidx_arena_copy(ar, r->target, strlen(r->target))))
		return -1;
	if (r->state && !(r->state = fidx_arena_copy(ar, r->state, strlen(r->state))))
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
static int push_side(struct vec *entries, const struct fidx_diff_row *r, enum fidx_diff_kind kind)
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
	const struct fidx_diff_row *rem = removed->items, *add = added->items;
	struct inode_ref *refs = malloc((removed->n ? removed->n : 1) * sizeof(*refs));
	bool *taken = calloc(removed->n ? removed->n : 1, 1);
	size_t nrefs = 0;
	int ret = -1;

	if (!refs || !taken)
		goto out;
	for (size_t i = 0; i < removed->n; i++)
		if ((rem[i].present >> FIDX_DIFF_V_DEV & 1) && (rem[i].present >> FIDX_DIFF_V_INO & 1))
			refs[nrefs++] = (struct inode_ref){rem[i].v[FIDX_DIFF_V_DEV], rem[i].v[FIDX_DIFF_V_INO], i};
	qsort(refs, nrefs, sizeof(*refs), inode_ref_cmp);

	for (size_t j = 0; j < added->n; j++) {
		const struct fidx_diff_row *b = &add[j];
		bool moved = false;
		if ((b->present >> FIDX_DIFF_V_DEV & 1) && (b->present >> FIDX_DIFF_V_INO & 1)) {
			/* The first ref of b's inode, by binary search. */
			struct inode_ref want = {b->v[FIDX_DIFF_V_DEV], b->v[FIDX_DIFF_V_INO], 0};
			size_t lo = 0, hi = nrefs;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (inode_ref_cmp(&refs[mid], &want) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < nrefs && refs[lo].dev == want.dev && refs[lo].ino == want.ino; lo++) {
				const struct fidx_diff_row *a = &rem[refs[lo].index];
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

/* One side as it is read: its rows in path order, and the row at hand. */
struct reader {
	const struct fidx_diff_side *side;
	struct fidx_rows *it;
	size_t rootlen;
};

/*
 * Steps side r to its next row and fills row with it.  Returns 1 for a row,
 * 0 at the end, -1 with err set when the store failed or the row is damaged
 * (its path not below the side's root among the damages).
 */
static int side_next(struct reader *r, struct fidx_diff_row *row, struct fidx_error *err)
{
	const struct fidx_row *fr;
	int rc = fidx_rows_next(r->it, &fr, err);
	if (rc <= 0)
		return rc;
	fidx_diff_row_of(fr, row);
	const char *base = r->side->under ? r->side->under : r->side->scan->root;
	if (!row->path || !(row->key = key_of(row->path, base, r->rootlen)))
		return fidx_fail(err, EBADMSG, "scan %lld holds '%s', which is not below its root",
				 (long long)r->side->scan->id, fidx_quote(row->path ? row->path : ""));
	return 1;
}

/*
 * Starts reading side's rows into r: when other is a scan of the same store,
 * a store may leave out the rows the two hold as one (a scan kept as the
 * changes from the other, or the other from it: the comparison is composed
 * from the changes stored), which the comparison would find equal.  Returns
 * 0, or -1 with err set.
 */
static int side_open(struct reader *r, const struct fidx_diff_side *side,
		     const struct fidx_diff_side *other, struct fidx_error *err)
{
	const char *root = side->scan->root;
	struct fidx_rows_query q = {
		.scans = &side->scan->id, .roots = &root, .nscans = 1,
		.columns = FIDX_DIFF_COLUMNS, .order = FIDX_ROWS_PATH, .under = side->under,
		.changed_from = other->st == side->st ? other->scan->id : 0,
	};
	r->side = side;
	r->rootlen = strlen(side->under ? side->under : root);
	return (r->it = fidx_store_rows(side->st, &q, err)) ? 0 : -1;
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

/* The own_folder of side's scan. */
static struct own_folder database_folder(const struct fidx_diff_side *side)
{
	struct own_folder f = {0};
	struct stat sb;
	const char *path = side->scan->opt_database;
	const char *slash = path ? strrchr(path, '/') : NULL;
	if (slash)
		f.path = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (f.path && stat(f.path, &sb) == 0) {
		f.known = true;
		f.dev = (int64_t)sb.st_dev;
		f.ino = (int64_t)sb.st_ino;
	}
	return f;
}

/* Whether row r is the folder f: the same path, or the same device and inode. */
static bool is_own_folder(const struct own_folder *f, const struct fidx_diff_row *r)
{
	if (f->path && strcmp(r->path, f->path) == 0)
		return true;
	return f->known && r->type == 'd' && (r->present >> FIDX_DIFF_V_DEV & 1) &&
	       (r->present >> FIDX_DIFF_V_INO & 1) && r->v[FIDX_DIFF_V_DEV] == f->dev && r->v[FIDX_DIFF_V_INO] == f->ino;
}

/* The times a scan changes in the folder of its own database (its -wal, -shm come and go). */
#define OWN_FOLDER_TIMES \
	(1u << FIDX_DIFF_MTIME | 1u << FIDX_DIFF_CTIME | 1u << FIDX_DIFF_ATIME)

struct fidx_diff *fidx_diff_compare(const struct fidx_diff_side *old,
				    const struct fidx_diff_side *new, unsigned attrs,
				    struct fidx_error *err)
{
	struct fidx_diff *d = calloc(1, sizeof(*d));
	struct vec removed = {.size = sizeof(struct fidx_diff_row)}, added = {.size = sizeof(struct fidx_diff_row)};
	struct vec entries = {.size = sizeof(struct fidx_diff_entry)};
	struct reader ro = {0}, rn = {0};
	struct fidx_diff_row a, b;
	int ha, hb;
	/* The folders of the scans' own databases: their times moved by the scans themselves. */
	struct own_folder folder[2] = {database_folder(old), database_folder(new)};

	if (!d)
		goto nomem;
	if (side_open(&ro, old, new, err) < 0 || side_open(&rn, new, old, err) < 0)
		goto fail;
	if ((ha = side_next(&ro, &a, err)) < 0 || (hb = side_next(&rn, &b, err)) < 0)
		goto fail;
	while (ha || hb) {
		int c = !ha ? 1 : !hb ? -1 : strcmp(a.key, b.key);
		if (c < 0) {
			struct fidx_diff_row *r = vec_push(&removed);
			if (!r)
				goto nomem;
			*r = a;
			if (fidx_diff_row_keep(&d->arena, r) < 0)
				goto nomem;
		} else if (c > 0) {
			struct fidx_diff_row *r = vec_push(&added);
			if (!r)
				goto nomem;
			*r = b;
			if (fidx_diff_row_keep(&d->arena, r) < 0)
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
		if (c <= 0 && (ha = side_next(&ro, &a, err)) < 0)
			goto fail;
		if (c >= 0 && (hb = side_next(&rn, &b, err)) < 0)
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
	fidx_fail_nomem(err);
fail:
	fidx_diff_free(d);
	d = NULL;
out:
	free(folder[0].path);
	free(folder[1].path);
	fidx_rows_close(ro.it);
	fidx_rows_close(rn.it);
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

