/*
 * read.c - reading a SQLite store: scan rows, file rows by iterator or by
 * id, counts (store.h).
 *
 * A file row is read through a reader (struct sqlite_rows): the SELECT list
 * of the columns asked for, made from row.h's column list, and for each one
 * how it is checked and put into the row:
 *
 *     columns asked ──► SELECT f.id, f.scan_id, f.path, f.size,
 *                              f.mtime_ns, f.mtime_sec, f.mtime_nsec, ...
 *                              [d.edge_block, d.edges, d.sha256]
 *     each row ──► sqlite3_column_value() once per column ──► its rule
 *                  (rowcheck.h) ──► the value, pointing into SQLite's memory
 *
 * The statement: one over every scan asked for (the table in rowid order
 * when those scans hold at least half of it: `+scan_id` keeps SQLite off the
 * index; else the index file(scan_id, path)), or one per scan when the rows
 * must come in path order or lie below a path (a range of that index).
 */
#include "sqlite.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowcheck.h"

/* How one column of the SELECT is checked and read. */
struct reader_col {
	int col;              /* its index in the SELECT */
	enum fidx_col c;      /* the row's column it fills */
	enum fidx_rowcheck_rule rule;
	int len;              /* FIDX_RULE_DIGEST: bytes */
	const char *name;     /* the SQL column, for messages */
	bool time;            /* a time: col is T_ns, col + 1 T_sec, col + 2 T_nsec */
	char names[3][16];    /* a time's: T_ns, T_sec, T_nsec */
};

struct sqlite_rows {
	struct sqlite_store *st;
	uint64_t columns;           /* FIDX_COLUMN() of the columns read */
	struct reader_col *cols;    /* the columns but id and scan_id */
	size_t ncols;
	int ncolumns;               /* columns of the SELECT */
	bool later;                 /* file_digest's columns are joined (as d) */
	const int64_t *scans;       /* the scans and their roots, for the path checks */
	const char *const *roots;
	size_t *rootlen;            /* ... and their lengths (room for capscans) */
	size_t nscans, capscans;
	size_t last;                /* the index of the last row's scan (a cache) */
	struct fidx_row row;        /* the row read last */
};

/* The SQL name of column c (file_digest's sha256 is "sha256"). */
static const char *sql_name(enum fidx_col c)
{
	return c == FIDX_COL_LATER_SHA256 ? "sha256" : fidx_columns[c].name;
}

/* The rule of column c. */
static enum fidx_rowcheck_rule rule_of(enum fidx_col c, int *len)
{
	*len = 0;
	switch (fidx_columns[c].kind) {
	case FIDX_KIND_INT:
	case FIDX_KIND_UINT:
	case FIDX_KIND_TIME:
		return FIDX_RULE_INT;
	case FIDX_KIND_TYPE:
		return FIDX_RULE_TYPE;
	case FIDX_KIND_DIGEST:
		*len = c == FIDX_COL_EDGES ? 16 : c == FIDX_COL_LATER_SHA256 ? 32
		       : (int)fidx_digest_len((enum fidx_digest)(c - FIDX_COL_MD5));
		return FIDX_RULE_DIGEST;
	default:
		return c == FIDX_COL_PATH ? FIDX_RULE_PATH
		       : c == FIDX_COL_NAME || c == FIDX_COL_EXT ? FIDX_RULE_NAME : FIDX_RULE_TEXT;
	}
}

struct sqlite_rows *sqlite_rows_reader(struct sqlite_store *st, uint64_t columns,
				       const int64_t *scans, const char *const *roots,
				       size_t nscans, struct fidx_error *err)
{
	struct sqlite_rows *r = calloc(1, sizeof(*r));
	if (!r || !(r->cols = calloc(FIDX_NCOLUMNS, sizeof(*r->cols)))) {
		sqlite_rows_free(r);
		fidx_fail_nomem(err);
		return NULL;
	}
	r->st = st;
	r->columns = columns | FIDX_COLUMN(FIDX_COL_ID) | FIDX_COLUMN(FIDX_COL_SCAN_ID);
	/* file_digest came with version 2; the columns of 4 are NULL before. */
	r->later = st->base.version >= 2 &&
		   (columns & (FIDX_COLUMN(FIDX_COL_EDGE_BLOCK) | FIDX_COLUMN(FIDX_COL_EDGES) |
			       FIDX_COLUMN(FIDX_COL_LATER_SHA256)));
	if (sqlite_rows_scope(r, scans, roots, nscans, err) < 0) {
		sqlite_rows_free(r);
		return NULL;
	}
	int col = 2;
	for (int c = FIDX_COL_SCAN_ID + 1; c < FIDX_NCOLUMNS; c++) {
		if (!(columns & FIDX_COLUMN(c)))
			continue;
		struct reader_col *k = &r->cols[r->ncols++];
		k->col = col;
		k->c = c;
		k->rule = rule_of(c, &k->len);
		k->name = sql_name(c);
		k->time = fidx_columns[c].kind == FIDX_KIND_TIME;
		if (k->time) {
			snprintf(k->names[0], sizeof(k->names[0]), "%s_ns", k->name);
			snprintf(k->names[1], sizeof(k->names[1]), "%s_sec", k->name);
			snprintf(k->names[2], sizeof(k->names[2]), "%s_nsec", k->name);
		}
		col += k->time ? 3 : 1;
	}
	r->ncolumns = col;
	return r;
}

int sqlite_rows_scope(struct sqlite_rows *r, const int64_t *scans, const char *const *roots,
		      size_t nscans, struct fidx_error *err)
{
	if (nscans > r->capscans) {
		size_t *p = realloc(r->rootlen, nscans * sizeof(*p));
		if (!p)
			return fidx_fail_nomem(err);
		r->rootlen = p;
		r->capscans = nscans;
	}
	r->scans = scans;
	r->roots = roots;
	r->nscans = nscans;
	r->last = 0;
	for (size_t i = 0; roots && i < nscans; i++)
		r->rootlen[i] = strlen(roots[i]);
	return 0;
}

const char *sqlite_rows_select(const struct sqlite_rows *r, char *buf, size_t size)
{
	/* Columns a version added are NULL before it (3: digests_from, 4: T_sec, T_nsec,
	 * 6: the image columns, 7: attributes). */
	int version = r->st->base.version;
	bool v4 = version >= 4;
	size_t len = (size_t)snprintf(buf, size, "f.id, f.scan_id");
	for (size_t i = 0; i < r->ncols && len < size; i++) {
		const struct reader_col *k = &r->cols[i];
		bool later = (k->c >= FIDX_COL_STATE && k->c < FIDX_COL_ATTRIBUTES && version < 6) ||
			     (k->c == FIDX_COL_ATTRIBUTES && version < 7);
		if (later)
			len += (size_t)snprintf(buf + len, size - len, k->time ? ", NULL, NULL, NULL"
							: ", NULL");
		else if (k->time && v4)
			len += (size_t)snprintf(buf + len, size - len, ", f.%s_ns, f.%s_sec, f.%s_nsec",
						k->name, k->name, k->name);
		else if (k->time)
			len += (size_t)snprintf(buf + len, size - len, ", f.%s_ns, NULL, NULL", k->name);
		else if (k->c == FIDX_COL_DIGESTS_FROM && r->st->base.version < 3)
			len += (size_t)snprintf(buf + len, size - len, ", NULL");
		else if ((int)k->c >= FIDX_NFILE_COLUMNS)
			len += (size_t)snprintf(buf + len, size - len, r->later ? ", d.%s" : ", NULL",
						sql_name(k->c));
		else
			len += (size_t)snprintf(buf + len, size - len, ", f.%s", k->name);
	}
	return buf;
}

bool sqlite_rows_later(const struct sqlite_rows *r)
{
	return r->later;
}

void sqlite_rows_free(struct sqlite_rows *r)
{
	if (!r)
		return;
	free(r->cols);
	free(r->rootlen);
	free(r);
}

/* The root of scan (of r's scans), or NULL (its length in *len). */
static const char *root_of(struct sqlite_rows *r, int64_t scan, size_t *len)
{
	if (!r->roots)
		return NULL;
	if (r->last < r->nscans && r->scans[r->last] == scan) {
		*len = r->rootlen[r->last];
		return r->roots[r->last];
	}
	for (size_t i = 0; i < r->nscans; i++)
		if (r->scans[i] == scan) {
			r->last = i;
			*len = r->rootlen[i];
			return r->roots[i];
		}
	return NULL;
}

/*
 * Fills err with "database 'x' is damaged: scan S, row ID: what" (EBADMSG).
 * Returns 0 (a damaged row).
 */
static int damaged(const struct sqlite_rows *r, sqlite3_stmt *s, const char *what,
		   struct fidx_error *err)
{
	fidx_fail(err, EBADMSG, "database '%s' is damaged: scan %lld, row %lld: %s",
		  fidx_quote(r->st->path), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 0),
		  what);
	return 0;
}

/*
 * Whether value v of type type is sound by rule without a closer look: the
 * common case of each rule but paths and type letters, inline (a row is many
 * values).  false only means "ask fidx_rowcheck_value()".
 */
static inline bool plainly_sound(enum fidx_rowcheck_rule rule, int len, sqlite3_value *v,
				 int type)
{
	switch (rule) {
	case FIDX_RULE_INT:
		return type == SQLITE_INTEGER || type == SQLITE_NULL;
	case FIDX_RULE_TEXT:
		return type == SQLITE_TEXT || type == SQLITE_NULL;
	case FIDX_RULE_NAME:
		return type == SQLITE_TEXT;
	case FIDX_RULE_DIGEST:
		return type == SQLITE_NULL || (type == SQLITE_BLOB && sqlite3_value_bytes(v) == len);
	default:
		return false;
	}
}

int sqlite_rows_read(struct sqlite_rows *r, sqlite3_stmt *s, const struct fidx_row **out,
		     struct fidx_error *err)
{
	struct fidx_row *row = &r->row;
	char what[FIDX_ROWCHECK_MSG];

	row->has = FIDX_COLUMN(FIDX_COL_ID) | FIDX_COLUMN(FIDX_COL_SCAN_ID);
	row->v[FIDX_COL_ID].i = sqlite3_column_int64(s, 0);
	row->v[FIDX_COL_SCAN_ID].i = sqlite3_column_int64(s, 1);
	for (size_t i = 0; i < r->ncols; i++) {
		const struct reader_col *k = &r->cols[i];
		sqlite3_value *v = sqlite3_column_value(s, k->col);
		int type = sqlite3_value_type(v);
		if (k->time) {
			/* T_ns, or T_sec and T_nsec beyond its range (dbtime.h). */
			sqlite3_value *sec = sqlite3_column_value(s, k->col + 1);
			sqlite3_value *nsec = sqlite3_column_value(s, k->col + 2);
			int sec_type = sqlite3_value_type(sec), nsec_type = sqlite3_value_type(nsec);
			if (!(plainly_sound(FIDX_RULE_INT, 0, v, type) &&
			      plainly_sound(FIDX_RULE_INT, 0, sec, sec_type) &&
			      plainly_sound(FIDX_RULE_INT, 0, nsec, nsec_type)) &&
			    (fidx_rowcheck_value(FIDX_RULE_INT, 0, k->names[0], v, NULL, 0, what,
						 sizeof(what)) ||
			     fidx_rowcheck_value(FIDX_RULE_INT, 0, k->names[1], sec, NULL, 0, what,
						 sizeof(what)) ||
			     fidx_rowcheck_value(FIDX_RULE_INT, 0, k->names[2], nsec, NULL, 0, what,
						 sizeof(what))))
				return damaged(r, s, what, err);
			if (type != SQLITE_NULL) {
				row->v[k->c].t = fidx_time_of_ns(sqlite3_value_int64(v));
			} else if (sec_type != SQLITE_NULL) {
				/* A hostile value out of range reads as the nearest one the kernel gives. */
				int64_t ns = sqlite3_value_int64(nsec);
				row->v[k->c].t = (struct fidx_time){
					.sec = sqlite3_value_int64(sec),
					.nsec = (uint32_t)(ns < 0 ? 0 : ns > 999999999 ? 999999999 : ns)};
			} else {
				continue;
			}
			row->has |= FIDX_COLUMN(k->c);
			continue;
		}
		if (!plainly_sound(k->rule, k->len, v, type)) {
			size_t rootlen = 0;
			const char *root = k->rule == FIDX_RULE_PATH
						   ? root_of(r, row->v[FIDX_COL_SCAN_ID].i, &rootlen)
						   : NULL;
			if (fidx_rowcheck_value(k->rule, k->len, k->name, v, root, rootlen, what,
						sizeof(what)))
				return damaged(r, s, what, err);
		}
		if (type == SQLITE_NULL)
			continue;
		struct fidx_value *out = &row->v[k->c];
		if (k->rule == FIDX_RULE_INT) {
			out->i = sqlite3_value_int64(v);
		} else if (k->rule == FIDX_RULE_DIGEST) {
			out->p = sqlite3_value_blob(v);
			out->n = (size_t)sqlite3_value_bytes(v);
		} else {
			out->p = sqlite3_value_text(v);
			out->n = (size_t)sqlite3_value_bytes(v);
			if (!out->p)
				return fidx_fail_nomem(err);
		}
		row->has |= FIDX_COLUMN(k->c);
	}
	*out = row;
	return 1;
}

/*
 * Returns "1, 5, 9", the n ids, malloc'ed (to be freed), or NULL with err
 * set: the list of an IN (...), as long as it takes.
 */
static char *id_list(const int64_t *ids, size_t n, struct fidx_error *err)
{
	char *list = malloc(24 * (n ? n : 1) + 1);
	size_t len = 0;
	if (!list) {
		fidx_fail_nomem(err);
		return NULL;
	}
	list[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(list + len, "%s%" PRId64, i ? ", " : "", ids[i]);
	return list;
}

/* Where column c is in the SELECT of r, or -1 when r does not read it. */
static int column_of(const struct sqlite_rows *r, enum fidx_col c)
{
	for (size_t i = 0; i < r->ncols; i++)
		if (r->cols[i].c == c)
			return r->cols[i].col;
	return -1;
}

/* The iterator of a SQLite store. */
struct sqlite_iter {
	struct fidx_rows base;
	struct sqlite_rows *r;      /* how rows are read */
	sqlite3_stmt *s;            /* the statement of the scan at hand (or of all) */
	size_t next;                /* the next scan to read (per-scan statements) */
	bool per_scan;              /* a statement per scan (else one for all) */
	char *lower, *upper;        /* the bounds of the paths below q.under */
	int path_col;               /* where the path is in the SELECT (for the hidden trees) */
};

/*
 * Returns 1 when reading every row of the scans is faster as a pass over the
 * whole file table (rowid order, every scan's rows, `+scan_id` keeping SQLite
 * off the index) than through the index file(scan_id, path), that is when
 * those scans hold at least half the rows of the table; 0 otherwise (also
 * when one is still running); -1 with err set.
 *
 * Measured on a database of one scan of 1.1 million rows: the table in
 * rowid order 0.55 s, the index range (rows fetched in path order) 1.13 s;
 * so the table wins while the scans read hold at least half of it.
 * max(id) is the row count, near enough (rows are only ever appended).
 */
static int read_table(struct sqlite_store *st, const char *ids, struct fidx_error *err)
{
	sqlite3_stmt *s;
	char *sql;
	if (asprintf(&sql, "SELECT count(*) = count(entries) AND 2 * sum(entries) >="
		     " (SELECT max(id) FROM file) FROM scan WHERE id IN (%s)", ids) < 0)
		return fidx_fail_nomem(err);
	int prepared = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	free(sql);
	if (prepared != SQLITE_OK)
		return sqlite_fail(st, err, "read");
	int rc = sqlite3_step(s), ret = -1;
	if (rc == SQLITE_ROW)
		ret = sqlite3_column_int(s, 0) != 0;
	else if (rc == SQLITE_DONE)
		ret = 0;
	else
		sqlite_fail(st, err, "read");
	sqlite3_finalize(s);
	return ret;
}

/* Appends the SQL of the filters of q (types, errors) to buf at *len. */
static void filters_sql(const struct fidx_rows_query *q, char *buf, size_t size, size_t *len)
{
	if (q->types && q->types != (1u << (sizeof(FIDX_TYPE_LETTERS) - 1)) - 1) {
		/* These types, and those of no type letter (damaged: the check stops there). */
		char in[32] = "", out[32] = "";
		for (size_t t = 0; t < sizeof(FIDX_TYPE_LETTERS) - 1; t++) {
			char *list = q->types >> t & 1 ? in : out;
			size_t n = strlen(list);
			snprintf(list + n, sizeof(in) - n, "%s'%c'", n ? ", " : "", FIDX_TYPE_LETTERS[t]);
		}
		*len += (size_t)snprintf(buf + *len, size - *len, " AND (f.type IN (%s) OR f.type"
					 " NOT IN (%s))", in, out);
	}
	if (q->with_error)
		*len += (size_t)snprintf(buf + *len, size - *len, " AND f.error IS NOT NULL");
}

/*
 * Whether the next scan of it, read below its own root in no order, is
 * better read as a pass over the table (read_table()): 1, 0, or -1 with err
 * set.
 */
static int whole_scan(const struct sqlite_iter *it, struct fidx_error *err)
{
	const struct fidx_rows_query *q = &it->base.q;
	if (q->order != FIDX_ROWS_ANY || !q->roots || strcmp(q->under, q->roots[it->next]) != 0)
		return 0;
	char *id = id_list(&q->scans[it->next], 1, err);
	int table = id ? read_table(sqlite_of(it->base.st), id, err) : -1;
	free(id);
	return table;
}

/* Prepares the statement of it: of every scan, or (per scan) of the next one.  Returns 0, or -1. */
static int prepare_next(struct sqlite_iter *it, struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(it->base.st);
	const struct fidx_rows_query *q = &it->base.q;
	char cols[2048], where[512] = "", *sql = NULL, *ids = NULL;
	size_t wlen = 0;
	int n = -1, whole = 0;

	sqlite_rows_select(it->r, cols, sizeof(cols));
	filters_sql(q, where, sizeof(where), &wlen);
	const char *join = sqlite_rows_later(it->r) ? " LEFT JOIN file_digest d ON d.file_id = f.id"
						    : "";
	sqlite3_finalize(it->s);
	it->s = NULL;
	if (!it->per_scan) {
		/* One statement over every scan: a pass over the table when they hold most of it. */
		if (!(ids = id_list(q->scans, q->nscans, err)))
			return -1;
		int table = read_table(st, ids, err);
		if (table >= 0)
			n = asprintf(&sql, "SELECT %s FROM file f%s WHERE %sf.scan_id IN (%s)%s%s", cols,
				     join, table ? "+" : "", ids, where,
				     q->order == FIDX_ROWS_ID ? " ORDER BY f.id" : "");
		free(ids);
		if (table < 0)
			return -1;
	} else if (q->under && !(whole = whole_scan(it, err))) {
		/* The path itself, then the range of the index that holds the paths below it:
		 * (path + "/", path + "0"), as '/' is the byte just below '0'. */
		n = asprintf(&sql, "SELECT %1$s FROM file f%2$s WHERE f.scan_id = ?1 AND"
			     " f.path = ?2%3$s UNION ALL SELECT %1$s FROM file f%2$s WHERE f.scan_id = ?1"
			     " AND f.path > ?3 AND f.path < ?4%3$s%4$s", cols, join, where,
			     q->order == FIDX_ROWS_ID ? " ORDER BY 1" : "");
	} else if (whole > 0) {
		/* A whole scan that holds most of the table: a pass over the table. */
		n = asprintf(&sql, "SELECT %s FROM file f%s WHERE +f.scan_id = ?1%s", cols, join,
			     where);
	} else if (whole < 0) {
		return -1;
	} else {
		n = asprintf(&sql, "SELECT %s FROM file f%s WHERE f.scan_id = ?1%s%s", cols, join, where,
			     q->order == FIDX_ROWS_PATH ? " ORDER BY f.path"
			     : q->order == FIDX_ROWS_ID ? " ORDER BY f.id" : "");
	}
	if (n < 0)
		return fidx_fail_nomem(err);
	int prepared = sqlite3_prepare_v2(st->db, sql, -1, &it->s, NULL);
	free(sql);
	if (prepared != SQLITE_OK)
		return sqlite_fail(st, err, "read");
	if (it->per_scan) {
		sqlite3_bind_int64(it->s, 1, q->scans[it->next++]);
		if (q->under && !whole) {
			sqlite3_bind_text(it->s, 2, q->under, -1, SQLITE_STATIC);
			sqlite3_bind_text(it->s, 3, it->lower, -1, SQLITE_STATIC);
			sqlite3_bind_text(it->s, 4, it->upper, -1, SQLITE_STATIC);
		}
	}
	return 0;
}

/*
 * Whether the row s is on lies in a tree the query hides (select.h): read
 * before the row is checked, as the selection does not show it.  A path
 * that is not text is not tested (its check fails it).
 */
static bool hidden(const struct sqlite_iter *it, sqlite3_stmt *s)
{
	const struct fidx_rows_query *q = &it->base.q;
	if (!q->nhidden || it->path_col < 0 || sqlite3_column_type(s, it->path_col) != SQLITE_TEXT)
		return false;
	int64_t scan = sqlite3_column_int64(s, 1);
	const char *path = (const char *)sqlite3_column_text(s, it->path_col);
	for (size_t i = 0; path && i < q->nhidden; i++)
		if (q->hidden[i].scan_id == scan && fidx_path_in_tree(path, q->hidden[i].root))
			return true;
	return false;
}

struct fidx_rows *sqlite_rows(struct fidx_store *base, const struct fidx_rows_query *q,
			      struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	struct sqlite_iter *it = calloc(1, sizeof(*it));
	if (!it) {
		fidx_fail_nomem(err);
		return NULL;
	}
	/* The arrays of q are store.c's copy, which it keeps in it->base.q. */
	it->base.q = *q;
	it->per_scan = q->order == FIDX_ROWS_PATH || q->under;
	if (q->under) {
		bool slash = strcmp(q->under, "/") == 0;
		if (asprintf(&it->lower, "%s/", slash ? "" : q->under) < 0 ||
		    asprintf(&it->upper, "%s0", slash ? "" : q->under) < 0) {
			it->lower = it->upper = NULL;
			goto nomem;
		}
	}
	if (!(it->r = sqlite_rows_reader(st, q->columns, q->scans, q->roots, q->nscans, err)))
		goto fail;
	it->path_col = column_of(it->r, FIDX_COL_PATH);
	it->base.st = base;
	if (prepare_next(it, err) < 0)
		goto fail;
	return &it->base;
nomem:
	fidx_fail_nomem(err);
fail:
	sqlite3_finalize(it->s);
	sqlite_rows_free(it->r);
	free(it->lower);
	free(it->upper);
	free(it);
	return NULL;
}

int sqlite_rows_next(struct fidx_rows *base, const struct fidx_row **row, struct fidx_error *err)
{
	struct sqlite_iter *it = (struct sqlite_iter *)base;
	struct sqlite_store *st = sqlite_of(base->st);
	for (;;) {
		int rc = sqlite3_step(it->s);
		if (rc == SQLITE_ROW && hidden(it, it->s))
			continue;
		if (rc == SQLITE_ROW) {
			int ok = sqlite_rows_read(it->r, it->s, row, err);
			if (ok != 0)
				return ok;
			if (base->q.damage == FIDX_ROWS_STOP)
				return -1;
			continue;  /* FIDX_ROWS_SKIP: a damaged row gives nothing */
		}
		if (rc != SQLITE_DONE)
			return sqlite_fail(st, err, "read");
		if (!it->per_scan || it->next >= base->q.nscans)
			return 0;
		if (prepare_next(it, err) < 0)
			return -1;
	}
}

void sqlite_rows_close(struct fidx_rows *base)
{
	struct sqlite_iter *it = (struct sqlite_iter *)base;
	if (!it)
		return;
	sqlite3_finalize(it->s);
	sqlite_rows_free(it->r);
	free(it->lower);
	free(it->upper);
	free(it);
}

/* Whether the row s is on is expect's: the same scan id and the same path bytes. */
static bool row_is(const struct sqlite_rows *r, sqlite3_stmt *s, const struct fidx_row *expect)
{
	int path = column_of(r, FIDX_COL_PATH);
	if (sqlite3_column_int64(s, 1) != fidx_row_int(expect, FIDX_COL_SCAN_ID) || path < 0 ||
	    sqlite3_column_type(s, path) != SQLITE_TEXT)
		return false;
	const void *bytes = sqlite3_column_text(s, path);
	size_t len = (size_t)sqlite3_column_bytes(s, path);
	return bytes && len == fidx_row_len(expect, FIDX_COL_PATH) &&
	       memcmp(bytes, fidx_row_text(expect, FIDX_COL_PATH), len) == 0;
}

int sqlite_row_any(struct sqlite_store *st, const struct fidx_rows_query *q, int64_t id,
		   const struct fidx_row *expect, const struct fidx_row **row,
		   struct fidx_error *err)
{
	uint64_t columns = q->columns | FIDX_COLUMN(FIDX_COL_ID) | FIDX_COLUMN(FIDX_COL_SCAN_ID);
	if (!st->by_id || st->by_id_columns != columns) {
		char cols[2048], sql[2600];
		sqlite3_finalize(st->by_id);
		sqlite_rows_free(st->by_id_rows);
		st->by_id = NULL;
		if (!(st->by_id_rows = sqlite_rows_reader(st, columns, q->scans, q->roots, q->nscans,
							  err)))
			return -1;
		snprintf(sql, sizeof(sql), "SELECT %s FROM file f%s WHERE f.id = ?",
			 sqlite_rows_select(st->by_id_rows, cols, sizeof(cols)),
			 sqlite_rows_later(st->by_id_rows)
				 ? " LEFT JOIN file_digest d ON d.file_id = f.id" : "");
		if (sqlite3_prepare_v2(st->db, sql, -1, &st->by_id, NULL) != SQLITE_OK)
			return sqlite_fail(st, err, "read");
		st->by_id_columns = columns;
	}
	if (sqlite_rows_scope(st->by_id_rows, q->scans, q->roots, q->nscans, err) < 0)
		return -1;
	sqlite3_reset(st->by_id);
	sqlite3_bind_int64(st->by_id, 1, id);
	int rc = sqlite3_step(st->by_id);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return sqlite_fail(st, err, "read");
	if (expect && !row_is(st->by_id_rows, st->by_id, expect))
		return 2;
	return sqlite_rows_read(st->by_id_rows, st->by_id, row, err) == 1 ? 1 : -1;
}

int sqlite_row(struct fidx_store *base, const struct fidx_rows_query *q, int64_t id,
	       const struct fidx_row **row, struct fidx_error *err)
{
	int rc = sqlite_row_any(sqlite_of(base), q, id, NULL, row, err);
	if (rc <= 0)
		return rc;
	/* Only a row of the scans asked for. */
	int64_t scan = fidx_row_int(*row, FIDX_COL_SCAN_ID);
	for (size_t i = 0; i < q->nscans; i++)
		if (q->scans[i] == scan)
			return 1;
	return 0;
}

int sqlite_snapshot(struct fidx_store *base, struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	if (st->in_read)
		return 0;
	if (sqlite_exec(st, "BEGIN", "read", err) < 0)
		return -1;
	st->in_read = true;
	return 0;
}

uint64_t sqlite_count(struct fidx_store *base, const int64_t *scans, size_t n, bool files)
{
	struct sqlite_store *st = sqlite_of(base);
	sqlite3_stmt *s = NULL;
	uint64_t count = 0;
	char *ids = id_list(scans, n, NULL), *sql = NULL;
	if (!ids || asprintf(&sql, files
			     ? "SELECT sum(coalesce(s.files, (SELECT count(*) FROM file f WHERE"
			       " f.scan_id = s.id AND f.type = 'f'))) FROM scan s WHERE s.id IN (%s)"
			     : "SELECT sum(coalesce(s.entries, (SELECT count(*) FROM file f WHERE"
			       " f.scan_id = s.id))) FROM scan s WHERE s.id IN (%s)", ids) < 0)
		sql = NULL;
	if (sql && n && sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int64(s, 0) > 0)
		count = (uint64_t)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	free(sql);
	free(ids);
	return count;
}

/* ------------------------------------------------------------ scan rows --- */

/* SQL for the value at a JSON path of scan.options, NULL when it is not JSON. */
#define OPTION(path) "CASE WHEN json_valid(options) THEN json_extract(options, '" path "') END"

/*
 * Copies text column c of s into *dst (NULL for NULL).  With exact (the
 * status, which the commands select scans by), a value that is not text, or
 * a text holding a NUL byte, is no value at all, so that it equals no status
 * asked for, as in SQL (its row check names it as damage).  type is the
 * column's type as stored, taken before any conversion (a check reading a
 * blob as text makes SQLite call it text after).  Returns false when out of
 * memory.
 */
static bool take_text(sqlite3_stmt *s, int c, char **dst, bool exact, int type)
{
	*dst = NULL;
	if (type == SQLITE_NULL || (exact && type != SQLITE_TEXT))
		return true;
	const unsigned char *t = sqlite3_column_text(s, c);
	if (exact && t && strlen((const char *)t) != (size_t)sqlite3_column_bytes(s, c))
		return true;
	return t && (*dst = strdup((const char *)t));
}

/* Copies blob column c of s into *dst, its length into *len.  Returns false when out of memory. */
static bool take_blob(sqlite3_stmt *s, int c, uint8_t **dst, size_t *len)
{
	*dst = NULL;
	*len = 0;
	if (sqlite3_column_type(s, c) == SQLITE_NULL)
		return true;
	const void *p = sqlite3_column_blob(s, c);
	int n = sqlite3_column_bytes(s, c);
	if (!p && n)
		return false;
	if (!(*dst = malloc(n ? (size_t)n : 1)))
		return false;
	if (n)
		memcpy(*dst, p, (size_t)n);
	*len = (size_t)n;
	return true;
}

/* The rule of scan column c. */
static enum fidx_rowcheck_rule scan_rule(enum fidx_scol c, int *len)
{
	*len = 0;
	switch (c) {
	case FIDX_SCOL_ROOT: return FIDX_RULE_ROOT;
	case FIDX_SCOL_STATUS: return FIDX_RULE_STATUS;
	case FIDX_SCOL_SEAL: *len = FIDX_SEAL_LEN; return FIDX_RULE_DIGEST;
	case FIDX_SCOL_HOST: case FIDX_SCOL_OS: case FIDX_SCOL_KERNEL: case FIDX_SCOL_ARCH:
	case FIDX_SCOL_VERSION: case FIDX_SCOL_OPTIONS: case FIDX_SCOL_UUID:
		return FIDX_RULE_TEXT;
	default: return FIDX_RULE_INT;
	}
}

/* The names of the scan columns, in order. */
static const char *const scan_names[FIDX_NSCAN_COLUMNS] = {
#define FIDX_X(NAME, name, KIND) #name,
	FIDX_SCAN_COLUMNS(FIDX_X)
#undef FIDX_X
};

/* The columns after the scan columns: the options read out of scan.options; then how many. */
enum { OPT_HASH = FIDX_NSCAN_COLUMNS, OPT_XDEV, OPT_FOLLOW, OPT_STAT, OPT_EXCLUDE,
       OPT_DATABASE, OPT_IMAGE, OPT_FOLLOW_ALL, SCAN_SELECTED };

/*
 * Reads the scan row s is on into *row, with its damage told.  Returns 0,
 * or -1 with err set (out of memory).
 */
static int read_scan(sqlite3_stmt *s, struct fidx_scan_row *row, struct fidx_error *err)
{
	char what[FIDX_ROWCHECK_MSG];
	bool ok = true;

	int type[SCAN_SELECTED];
	memset(row, 0, sizeof(*row));
	for (int c = 0; c < SCAN_SELECTED; c++)
		type[c] = sqlite3_column_type(s, c);
	for (int c = 0; c < FIDX_NSCAN_COLUMNS; c++) {
		sqlite3_value *v = sqlite3_column_value(s, c);
		int len;
		enum fidx_rowcheck_rule rule = scan_rule(c, &len);
		if (!row->damage && c != FIDX_SCOL_ID &&
		    fidx_rowcheck_value(rule, len, scan_names[c], v, NULL, 0, what, sizeof(what))) {
			if (asprintf(&row->damage, "scan %lld: %s", sqlite3_column_int64(s, 0),
				     what) < 0) {
				row->damage = NULL;
				ok = false;
			}
		}
		if (type[c] != SQLITE_NULL)
			row->has |= FIDX_SCOLUMN(c);
	}
#define FIDX_READ_INT(name, c) row->name = sqlite3_column_int64(s, c);
#define FIDX_READ_TEXT(name, c) ok &= take_text(s, c, &row->name, c == FIDX_SCOL_STATUS, type[c]);
#define FIDX_READ_DIGEST(name, c) ok &= take_blob(s, c, &row->name, &row->name##_len);
#define FIDX_X(NAME, name, KIND) FIDX_READ_##KIND(name, FIDX_SCOL_##NAME)
	FIDX_SCAN_COLUMNS(FIDX_X)
#undef FIDX_X
	row->root_text = type[FIDX_SCOL_ROOT] == SQLITE_TEXT && row->root &&
			 strlen(row->root) == (size_t)sqlite3_column_bytes(s, FIDX_SCOL_ROOT);
	ok &= take_text(s, OPT_HASH, &row->opt_hash, false, type[OPT_HASH]);
	row->opt_xdev = sqlite3_column_int(s, OPT_XDEV) != 0;
	row->opt_follow = sqlite3_column_int(s, OPT_FOLLOW) != 0;
	row->opt_follow_all = sqlite3_column_int(s, OPT_FOLLOW_ALL) != 0;
	row->opt_stat = type[OPT_STAT] == SQLITE_NULL ? -1
			: sqlite3_column_int(s, OPT_STAT) != 0;
	ok &= take_text(s, OPT_EXCLUDE, &row->opt_exclude, false, type[OPT_EXCLUDE]);
	ok &= take_text(s, OPT_DATABASE, &row->opt_database, false, type[OPT_DATABASE]);
	row->opt_image = sqlite3_column_int(s, OPT_IMAGE) != 0;
	if (!ok) {
		fidx_scan_row_free(row);
		return fidx_fail_nomem(err);
	}
	return 0;
}

int sqlite_scans(struct fidx_store *base, const struct fidx_scan_filter *f,
		 struct fidx_scan_list *out, struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	char sql[2048], where[512] = "";
	size_t len = 0, wlen = 0;
	sqlite3_stmt *s = NULL;
	int rc;

	fidx_scan_list_free(out);
	/* Columns a version added are NULL before it (3: reused ... seal, 4: run_ns, 5: uuid). */
	len = (size_t)snprintf(sql, sizeof(sql), "SELECT");
	for (int c = 0; c < FIDX_NSCAN_COLUMNS; c++) {
		bool there = (c < FIDX_SCOL_REUSED || st->base.version >= 3) &&
			     (c != FIDX_SCOL_RUN_NS || st->base.version >= 4) &&
			     (c != FIDX_SCOL_UUID || st->base.version >= 5);
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s %s", c ? "," : "",
					there ? scan_names[c] : "NULL");
	}
	len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s, %s, %s, %s, %s, %s,"
				" coalesce(%s = 'object', 0), %s FROM scan",
				OPTION("$.hash"), OPTION("$.xdev"), OPTION("$.follow"),
				OPTION("$.stat"), OPTION("$.exclude"), OPTION("$.database"),
				"CASE WHEN json_valid(options) THEN json_type(options, '$.image') END",
				OPTION("$.follow_all"));
	if (f->id)
		wlen += (size_t)snprintf(where + wlen, sizeof(where) - wlen, " AND id = ?1");
	if (f->root)
		wlen += (size_t)snprintf(where + wlen, sizeof(where) - wlen,
					 " AND root = CAST(?2 AS TEXT)");
	if (f->statuses) {
		static const char *const names[] = {"running", "complete", "interrupted", "failed"};
		wlen += (size_t)snprintf(where + wlen, sizeof(where) - wlen, " AND status IN (");
		for (int i = 0, n = 0; i < 4; i++)
			if (f->statuses >> i & 1)
				wlen += (size_t)snprintf(where + wlen, sizeof(where) - wlen, "%s'%s'",
							 n++ ? ", " : "", names[i]);
		wlen += (size_t)snprintf(where + wlen, sizeof(where) - wlen, ")");
	}
	snprintf(sql + len, sizeof(sql) - len, "%s%s ORDER BY id", wlen ? " WHERE 1" : "", where);
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return sqlite_fail(st, err, "read");
	if (f->id)
		sqlite3_bind_int64(s, 1, f->id);
	if (f->root)
		sqlite3_bind_blob(s, 2, f->root, (int)strlen(f->root), SQLITE_STATIC);
	size_t cap = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (out->n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			struct fidx_scan_row *p = realloc(out->rows, ncap * sizeof(*p));
			if (!p) {
				sqlite3_finalize(s);
				fidx_scan_list_free(out);
				return fidx_fail_nomem(err);
			}
			out->rows = p;
			cap = ncap;
		}
		if (read_scan(s, &out->rows[out->n], err) < 0) {
			sqlite3_finalize(s);
			fidx_scan_list_free(out);
			return -1;
		}
		out->n++;
	}
	if (rc != SQLITE_DONE) {
		sqlite_fail(st, err, "read");
		sqlite3_finalize(s);
		fidx_scan_list_free(out);
		return -1;
	}
	sqlite3_finalize(s);
	return 0;
}
