/*
 * read.c - reading PostgreSQL: scan rows, row iterators, rows by id, find's
 * paths, counts.
 *
 * An iterator is a cursor fetched FETCH_ROWS rows at a time (binary).  Every row is checked before it is
 * handed out, as the SQLite backend checks its rows (store.h): the columns
 * are typed here (a bigint is always an integer), so what can be wrong is a
 * text holding a NUL byte, a path not absolute or not below its scan's
 * root, a type that is not one of the letters, a digest of the wrong length,
 * half of a time's two forms.  The filters of a query run in the server but
 * the hidden trees, which are left out here, before the check.
 */
#include "postgres.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pathindex.h"
#include "row.h"
#include "scanrow.h"
#include "select.h"

#define FETCH_ROWS 5000

/* How the columns of a SELECT are read into a struct fidx_row. */
struct pg_reader {
	uint64_t columns;               /* FIDX_COLUMN() bits read, id and scan_id among them */
	const int64_t *scans;           /* the scans read, and their roots (NULL: unchecked) */
	const char *const *roots;
	size_t nscans;
	bool later;                     /* file_digest's columns are read (joined as d) */
	struct fidx_row row;            /* the row read last */
};

/* The select list of the reader's columns into buf (f the file table, d file_digest), of a
 * database of schema version. */
static const char *select_list(struct pg_reader *rd, int version, char *buf, size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "f.id, f.scan_id");
	rd->later = false;
	for (int c = FIDX_COL_SCAN_ID + 1; c < FIDX_NCOLUMNS && len < size; c++) {
		if (!(rd->columns & FIDX_COLUMN(c)))
			continue;
		const char *name = fidx_columns[c].name;
		/* Columns a version added are NULL before it (6: the image columns, 7: attributes). */
		bool absent = (c >= FIDX_COL_STATE && c < FIDX_COL_ATTRIBUTES && version < 6) ||
			      (c == FIDX_COL_ATTRIBUTES && version < 7);
		if (absent)
			len += (size_t)snprintf(buf + len, size - len, fidx_columns[c].kind ==
						FIDX_KIND_TIME ? ", NULL, NULL, NULL" : ", NULL");
		else if (fidx_columns[c].kind == FIDX_KIND_TIME)
			len += (size_t)snprintf(buf + len, size - len, ", f.%s_ns, f.%s_sec, f.%s_nsec",
						name, name, name);
		else if (c >= FIDX_NFILE_COLUMNS) {
			rd->later = true;
			len += (size_t)snprintf(buf + len, size - len, ", d.%s",
						c == FIDX_COL_LATER_SHA256 ? "sha256" : name);
		} else
			len += (size_t)snprintf(buf + len, size - len, ", f.%s", name);
	}
	return buf;
}

/*
 * The FROM clause of a reader's SELECT of the rows of its scans, malloc'ed:
 * the relation given (not NULL), else theirs (pg_relation(), changed_from,
 * digest and digests as it takes them), joined to file_digest when its
 * columns are read.  Returns it, or NULL with err set.
 */
static char *from_clause(struct pg_store *st, const struct pg_reader *rd, int64_t changed_from,
			 const char *digest, const char *digests, const char *given,
			 struct fidx_error *err)
{
	char *rel, *from;
	if (given) {
		if (!(rel = strdup(given))) {
			fidx_fail_nomem(err);
			return NULL;
		}
	} else if (pg_relation(st, rd->scans, rd->nscans, changed_from, digest, digests, &rel,
			       err) < 0) {
		return NULL;
	}
	if (asprintf(&from, " FROM%s%s", rel, rd->later ? " LEFT JOIN fidx.file_digest d"
		     " ON d.file_id = f.id" : "") < 0) {
		from = NULL;
		fidx_fail_nomem(err);
	}
	free(rel);
	return from;
}

/* The bytes a digest column of c must hold. */
static size_t digest_len(enum fidx_col c)
{
	return c == FIDX_COL_EDGES ? 16 : c == FIDX_COL_LATER_SHA256
	       ? 32 : fidx_digest_len((enum fidx_digest)(c - FIDX_COL_MD5));
}

/* The root of scan among rd's scans, or NULL. */
static const char *root_of(const struct pg_reader *rd, int64_t scan)
{
	for (size_t i = 0; rd->roots && i < rd->nscans; i++)
		if (rd->scans[i] == scan)
			return rd->roots[i];
	return NULL;
}

/*
 * Fills err with "database 'x' is damaged: scan S, row ID: <what>" (EBADMSG).
 * Returns 0.
 */
static int damaged(struct pg_store *st, const struct fidx_row *row, struct fidx_error *err,
		   const char *what, const char *column)
{
	fidx_fail(err, EBADMSG, "database '%s'%s is damaged: scan %" PRId64 ", row %" PRId64
		  ": %s %s", fidx_quote(st->name), st->origin, row->v[FIDX_COL_SCAN_ID].i,
		  row->v[FIDX_COL_ID].i, column, what);
	return 0;
}

/*
 * Reads row r of res (the reader's columns) into rd->row, checked.  Returns
 * 1, or 0 when it is damaged (err set).
 */
static int read_row(struct pg_store *st, struct pg_reader *rd, const PGresult *res, int r,
		    struct fidx_error *err)
{
	struct fidx_row *row = &rd->row;
	row->has = FIDX_COLUMN(FIDX_COL_ID) | FIDX_COLUMN(FIDX_COL_SCAN_ID);
	row->v[FIDX_COL_ID].i = pg_int(res, r, 0);
	row->v[FIDX_COL_SCAN_ID].i = pg_int(res, r, 1);
	int col = 2;
	for (int c = FIDX_COL_SCAN_ID + 1; c < FIDX_NCOLUMNS; c++) {
		if (!(rd->columns & FIDX_COLUMN(c)))
			continue;
		const char *name = fidx_columns[c].name;
		struct fidx_value *v = &row->v[c];
		enum fidx_col_kind kind = fidx_columns[c].kind;
		if (kind == FIDX_KIND_TIME) {
			bool ns = !PQgetisnull(res, r, col), sec = !PQgetisnull(res, r, col + 1),
			     nsec = !PQgetisnull(res, r, col + 2);
			if (ns && !sec && !nsec) {
				v->t = fidx_time_of_ns(pg_int(res, r, col));
				row->has |= FIDX_COLUMN(c);
			} else if (!ns && sec && nsec) {
				int64_t n = pg_int(res, r, col + 2);
				if (n < 0 || n >= FIDX_NS_PER_S)
					return damaged(st, row, err, "holds nanoseconds out of range",
						       name);
				v->t = (struct fidx_time){.sec = pg_int(res, r, col + 1),
							  .nsec = (uint32_t)n};
				row->has |= FIDX_COLUMN(c);
			} else if (ns || sec || nsec) {
				return damaged(st, row, err, "holds a time in two forms at once",
					       name);
			}
			col += 3;
			continue;
		}
		if (PQgetisnull(res, r, col++)) {
			if (c == FIDX_COL_PATH || c == FIDX_COL_NAME || c == FIDX_COL_EXT)
				return damaged(st, row, err, "is NULL", name);
			continue;
		}
		int k = col - 1;
		if (kind == FIDX_KIND_INT || kind == FIDX_KIND_UINT) {
			v->i = pg_int(res, r, k);
		} else {
			v->p = PQgetvalue(res, r, k);
			v->n = (size_t)PQgetlength(res, r, k);
			if (kind == FIDX_KIND_DIGEST && v->n != digest_len(c))
				return damaged(st, row, err, "holds a digest of the wrong length",
					       name);
			if (kind != FIDX_KIND_DIGEST && memchr(v->p, '\0', v->n))
				return damaged(st, row, err, "holds a NUL byte", name);
			if (kind == FIDX_KIND_TYPE &&
			    (v->n != 1 || !strchr(FIDX_TYPE_LETTERS, ((const char *)v->p)[0])))
				return damaged(st, row, err, "holds no type letter", name);
			if (c == FIDX_COL_PATH) {
				const char *root = root_of(rd, row->v[FIDX_COL_SCAN_ID].i);
				if (((const char *)v->p)[0] != '/')
					return damaged(st, row, err, "is not absolute", name);
				if (root && !fidx_path_in_tree(v->p, root))
					return damaged(st, row, err, "is not below the scan's root",
						       name);
			}
		}
		row->has |= FIDX_COLUMN(c);
	}
	return 1;
}

char *pg_id_array(const int64_t *ids, size_t n)
{
	char *s = malloc(n * 21 + 3);
	if (!s)
		return NULL;
	size_t len = 0;
	s[len++] = '{';
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(s + len, "%s%" PRId64, i ? "," : "", ids[i]);
	memcpy(s + len, "}", 2);
	return s;
}

/* ------------------------------------------------------------ row iterator --- */

struct pg_rows {
	struct fidx_rows base;
	struct pg_reader rd;
	struct pg_cursor cur;
	bool open;                      /* cur is declared */
	PGresult *res;                  /* the rows fetched */
	int next, n;                    /* the next of them, how many */
	bool done;                      /* the cursor gave its last row */
	char *ids;                      /* the scans' array literal */
	char *under_lo, *under_hi;      /* the bounds of q.under's tree (malloc'ed) */
	char types[8];                  /* the type letters asked for */
};

/* Frees what it holds and it (its cursor closed). */
static void rows_free(struct pg_rows *it)
{
	free(it->ids);
	free(it->under_lo);
	free(it->under_hi);
	free(it);
}

/*
 * Opens the iterator of q's rows, read from rel (NULL: their relation,
 * pg_relation()); with digest (a digest column's name) only those whose
 * digest is one of the array literal digests.  Returns it, or NULL with err
 * set.
 */
static struct fidx_rows *rows_open(struct pg_store *st, const struct fidx_rows_query *q,
				   const char *rel, const char *digest, const char *digests,
				   struct fidx_error *err)
{
	struct pg_rows *it = calloc(1, sizeof(*it));
	char cols[1400], *sql = NULL, *from = NULL;
	struct pg_params p = {0};
	if (!it || !(it->ids = pg_id_array(q->scans, q->nscans))) {
		if (it)
			free(it);
		fidx_fail_nomem(err);
		return NULL;
	}
	it->rd = (struct pg_reader){.columns = q->columns | FIDX_COLUMN(FIDX_COL_ID) |
				 FIDX_COLUMN(FIDX_COL_SCAN_ID), .scans = q->scans,
				 .roots = q->roots, .nscans = q->nscans};
	select_list(&it->rd, st->base.version, cols, sizeof(cols));
	size_t cap = 0;
	if (!(from = from_clause(st, &it->rd, q->changed_from, digest, digests, rel, err)) ||
	    !(sql = malloc(cap = strlen(from) + strlen(cols) + 4096))) {
		if (from)
			fidx_fail_nomem(err);
		free(from);
		rows_free(it);
		return NULL;
	}
	size_t len = (size_t)snprintf(sql, cap, "SELECT %s%s WHERE f.scan_id = ANY($1::bigint[])",
				      cols, from);
	free(from);
	pg_param_text(&p, it->ids);
	if (q->under) {
		/* The tree of under: itself, and what sorts from "under/" to "under0". */
		size_t n = strlen(q->under);
		if (!(it->under_lo = malloc(n + 2)) || !(it->under_hi = malloc(n + 2))) {
			free(sql);
			rows_free(it);
			fidx_fail_nomem(err);
			return NULL;
		}
		memcpy(it->under_lo, q->under, n);
		if (!n || it->under_lo[n - 1] != '/')
			it->under_lo[n++] = '/';
		memcpy(it->under_hi, it->under_lo, n);
		it->under_hi[n - 1] = '0';
		pg_param_str(&p, q->under);
		pg_param_bytes(&p, it->under_lo, n);
		pg_param_bytes(&p, it->under_hi, n);
		len += (size_t)snprintf(sql + len, cap - len,
					" AND (f.path = $2 OR (f.path >= $3 AND f.path < $4))");
	}
	if (q->types) {
		/* The letters asked for, and those of damaged types (the check stops there). */
		static const char all[] = FIDX_TYPE_LETTERS;
		size_t n = 0;
		for (size_t i = 0; all[i]; i++)
			if (q->types & fidx_type_bit(all[i]))
				it->types[n++] = all[i];
		pg_param_bytes(&p, it->types, n);
		len += (size_t)snprintf(sql + len, cap - len,
					" AND f.type IS NOT NULL AND (length(f.type) <> 1"
					" OR position(f.type IN $%d) > 0"
					" OR position(f.type IN '" FIDX_TYPE_LETTERS "'::bytea) = 0)", p.n);
	}
	if (q->with_error)
		len += (size_t)snprintf(sql + len, cap - len, " AND f.error IS NOT NULL");
	if (digest) {
		pg_param_text(&p, digests);
		len += (size_t)snprintf(sql + len, cap - len, " AND f.%s = ANY($%d::bytea[])",
					digest, p.n);
	}
	if (q->order == FIDX_ROWS_ID)
		snprintf(sql + len, cap - len, " ORDER BY f.id");
	else if (q->order == FIDX_ROWS_PATH)
		snprintf(sql + len, cap - len,
			 " ORDER BY array_position($1::bigint[], f.scan_id), f.path");
	int rc = pg_cursor_open(st, &it->cur, sql, &p, err);
	free(sql);
	if (rc < 0) {
		rows_free(it);
		return NULL;
	}
	it->open = true;
	return &it->base;
}

struct fidx_rows *pg_rows(struct fidx_store *base, const struct fidx_rows_query *q,
			  struct fidx_error *err)
{
	return rows_open(pg_of(base), q, NULL, NULL, NULL, err);
}

struct fidx_rows *pg_rows_by_digest(struct fidx_store *base, const struct fidx_rows_query *q,
				    enum fidx_digest d, const uint8_t *digests, size_t n,
				    struct fidx_error *err)
{
	/* The digests as an array literal of bytea: {\\xHEX,...}. */
	size_t len = fidx_digest_len(d), at = 0;
	char *lit = malloc(n * (2 * len + 4) + 3);
	if (!lit) {
		fidx_fail_nomem(err);
		return NULL;
	}
	lit[at++] = '{';
	for (size_t i = 0; i < n; i++) {
		at += (size_t)sprintf(lit + at, "%s\\\\x", i ? "," : "");
		for (size_t b = 0; b < len; b++)
			at += (size_t)sprintf(lit + at, "%02x", digests[i * len + b]);
	}
	memcpy(lit + at, "}", 2);
	struct fidx_rows *it = rows_open(pg_of(base), q, NULL, fidx_columns[FIDX_COL_MD5 + d].name,
					 lit, err);
	free(lit);
	return it;
}

/* Whether row lies in a hidden tree of the query. */
static bool hidden(const struct fidx_rows_query *q, const PGresult *res, int r, int path_col)
{
	if (!q->nhidden || path_col < 0 || PQgetisnull(res, r, path_col))
		return false;
	int64_t scan = pg_int(res, r, 1);
	const char *path = PQgetvalue(res, r, path_col);
	for (size_t i = 0; i < q->nhidden; i++)
		if (q->hidden[i].scan_id == scan && fidx_path_in_tree(path, q->hidden[i].root))
			return true;
	return false;
}

int pg_rows_next(struct fidx_rows *base, const struct fidx_row **row, struct fidx_error *err)
{
	struct pg_rows *it = (struct pg_rows *)base;
	struct pg_store *st = pg_of(base->st);
	/* The path is the third column when it is read (store.c adds it for hidden trees). */
	int path_col = it->rd.columns & FIDX_COLUMN(FIDX_COL_PATH) ? 2 : -1;
	for (;;) {
		if (it->next == it->n) {
			if (it->done)
				return 0;
			PQclear(it->res);
			it->next = it->n = 0;
			if (!(it->res = pg_cursor_fetch(st, &it->cur, FETCH_ROWS, err)))
				return -1;
			it->n = PQntuples(it->res);
			it->done = it->n < FETCH_ROWS;
			continue;
		}
		int r = it->next++;
		if (hidden(&base->q, it->res, r, path_col))
			continue;
		if (read_row(st, &it->rd, it->res, r, err)) {
			*row = &it->rd.row;
			return 1;
		}
		if (base->q.damage == FIDX_ROWS_STOP)
			return -1;
	}
}

void pg_rows_close(struct fidx_rows *base)
{
	struct pg_rows *it = (struct pg_rows *)base;
	PQclear(it->res);
	if (it->open)
		pg_cursor_close(pg_of(base->st), &it->cur);
	rows_free(it);
}

/*
 * Reads the row of id among scans (columns) into *row: 1, 0 when there is
 * none, -1 with err set (damaged: EBADMSG).  rel: the scans' relation
 * (pg_relation()) when the caller keeps it, or NULL to read it here.
 */
static int row_by_id(struct pg_store *st, struct pg_reader *rd, int64_t id, const char *rel,
		     const struct fidx_row **row, struct fidx_error *err)
{
	char cols[1400], *sql, *from;
	struct pg_params p = {0};
	char *ids = pg_id_array(rd->scans, rd->nscans);
	if (!ids)
		return fidx_fail_nomem(err);
	select_list(rd, st->base.version, cols, sizeof(cols));
	if (!(from = from_clause(st, rd, 0, NULL, NULL, rel, err))) {
		free(ids);
		return -1;
	}
	/* A row lent to several of the scans is the first one's. */
	if (asprintf(&sql, "SELECT %s%s WHERE f.id = $1 AND f.scan_id = ANY($2::bigint[])"
		     " ORDER BY pg_catalog.array_position($2::bigint[], f.scan_id) LIMIT 1",
		     cols, from) < 0) {
		free(from);
		free(ids);
		return fidx_fail_nomem(err);
	}
	free(from);
	pg_param_int(&p, id);
	pg_param_text(&p, ids);
	if (pg_ready(st, err) < 0) {
		free(sql);
		free(ids);
		return -1;
	}
	PQclear(st->by_id);
	st->by_id = pg_exec(st, sql, &p, "read", err);
	free(sql);
	free(ids);
	if (!st->by_id)
		return -1;
	if (PQntuples(st->by_id) != 1)
		return 0;
	if (!read_row(st, rd, st->by_id, 0, err))
		return -1;
	*row = &rd->row;
	return 1;
}

int pg_row(struct fidx_store *base, const struct fidx_rows_query *q, int64_t id,
	   const struct fidx_row **row, struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	if (!st->by_id_reader && !(st->by_id_reader = malloc(sizeof(*st->by_id_reader))))
		return fidx_fail_nomem(err);
	*st->by_id_reader = (struct pg_reader){
		.columns = q->columns | FIDX_COLUMN(FIDX_COL_ID) | FIDX_COLUMN(FIDX_COL_SCAN_ID),
		.scans = q->scans, .roots = q->roots, .nscans = q->nscans};
	return row_by_id(st, st->by_id_reader, id, NULL, row, err);
}

/* ----------------------------------------------------------------- paths --- */

/*
 * find's paths of scan T, in byte order, come from one of three places:
 *
 *   T whole, with a path index:  the chosen blocks of its index (pathstore.c)
 *   T kept as changes, its chain ending in a whole scan W with an index:
 *        W's chosen blocks ─► the paths holding every literal, BATCH at a time
 *            ─► kept when W lends the row on to T (pg_lent_filter()) ─┐
 *        T's other rows (its own, its chain's above W), byte order ───┴─► merged
 *   else (no trigram, no index):  every row of T, in byte order
 *
 * A lent row has W's id in T's relation too, so fidx_paths_row() reads it by
 * the id W's index gives.
 */

/* Candidates of W's index checked with one statement. */
#define BATCH 4096

/* A batch of W's paths that may match, and which of them T holds. */
struct batch {
	int64_t id[BATCH];
	size_t at[BATCH], len[BATCH];   /* each path: where it begins in bytes, its length */
	bool keep[BATCH];               /* T holds it */
	char *bytes;                    /* the paths, each NUL-terminated */
	size_t used, cap;
	size_t n, next;                 /* how many; the next to look at */
	bool end;                       /* W's index gave its last */
};

struct pg_paths {
	struct fidx_paths base;
	struct pg_pathindex *index;     /* blocks of the literals' trigrams (T's, W's), or NULL */
	struct pg_rows *rows;           /* every path of T, or with batch T's rows not W's */
	struct pg_lent lent;            /* T kept as changes, read through W's index: W, its map */
	struct batch *batch;            /* then: W's candidates */
	const struct fidx_row *own;     /* then: the next of rows, not given yet (NULL: to read) */
	bool own_end;                   /* then: rows gave its last */
	struct pg_literals lits;        /* then: the literals */
	int64_t scan;
	char *root;
	struct fidx_row entry;          /* the entry given last */
	struct pg_reader whole;         /* its whole row (fidx_paths_row()) */
	char *rel;                      /* the scan's relation (pg_relation()), read at the first
					 * whole row and kept: find reads in one snapshot, and a
					 * round trip per row was half of find -l's time */
};

/* Fills err with "the path index of scan S ... is damaged: what" (EBADMSG).  Returns -1. */
static int index_damaged(struct pg_store *st, int64_t scan, const char *what,
			 struct fidx_error *err)
{
	return fidx_fail(err, EBADMSG, "the path index of scan %" PRId64 " in database '%s'%s is"
			 " damaged: %s", scan, fidx_quote(st->name), st->origin, what);
}

/* Keeps the nlit literals lit in it, folded.  Returns 0, or -1 with err set. */
static int fold_literals(struct pg_paths *it, const struct fidx_findpat_literal *lit,
			 size_t nlit, struct fidx_error *err)
{
	struct pg_literals *l = &it->lits;
	size_t total = 0;
	for (size_t i = 0; i < nlit; i++)
		total += lit[i].len;
	l->s = malloc(total + 1);
	l->len = malloc((nlit + 1) * sizeof(*l->len));
	if (!l->s || !l->len)
		return fidx_fail_nomem(err);
	char *at = l->s;
	for (size_t i = 0; i < nlit; i++) {
		for (size_t k = 0; k < lit[i].len; k++)
			*at++ = (char)fidx_findpat_fold((unsigned char)lit[i].s[k]);
		l->len[i] = lit[i].len;
	}
	l->n = nlit;
	return 0;
}

bool pg_literals_held(const struct pg_literals *lits, const char *path, size_t len)
{
	const char *l = lits->s;
	for (size_t i = 0; i < lits->n; l += lits->len[i++]) {
		size_t n = lits->len[i], k = 0;
		for (size_t at = 0; k < n && at + n <= len; at++)
			for (k = 0; k < n && fidx_findpat_fold((unsigned char)path[at + k]) ==
					     (unsigned char)l[k]; k++)
				;
		if (k < n)
			return false;
	}
	return true;
}

/*
 * Refills it's batch: the next BATCH paths of W's index that hold every
 * literal, each marked with whether T holds it.  Returns 0, or -1 with err
 * set.
 */
static int batch_fill(struct pg_store *st, struct pg_paths *it, struct fidx_error *err)
{
	struct batch *b = it->batch;
	struct fidx_pathent e;
	int rc = 1;
	b->n = b->next = b->used = 0;
	while (b->n < BATCH && (rc = pg_pathindex_next(it->index, &e, err)) == 1) {
		if (!fidx_path_in_tree(e.path, it->root))
			return index_damaged(st, it->lent.base, "a path outside the scan's root",
					     err);
		if (!pg_literals_held(&it->lits, e.path, e.len))
			continue;
		if (b->cap - b->used <= e.len) {
			size_t cap = b->cap ? b->cap : 65536;
			while (cap - b->used <= e.len)
				cap *= 2;
			char *p = realloc(b->bytes, cap);
			if (!p)
				return fidx_fail_nomem(err);
			b->bytes = p;
			b->cap = cap;
		}
		memcpy(b->bytes + b->used, e.path, e.len + 1);
		b->id[b->n] = e.id;
		b->at[b->n] = b->used;
		b->len[b->n++] = e.len;
		b->used += e.len + 1;
	}
	if (rc < 0)
		return -1;
	b->end = rc == 0;
	if (!b->n)
		return 0;
	int found = pg_lent_filter(st, &it->lent, b->id, b->n, b->keep, err);
	if (found < 0)
		return -1;
	if ((size_t)found != b->n)
		return index_damaged(st, it->lent.base, "a row it names is missing", err);
	return 0;
}

/*
 * Gives in *entry the next path of T kept as changes: of W's that T holds
 * and of T's other rows, the first in byte order.  Returns 1, 0 at the end,
 * or -1 with err set.
 */
static int merge_next(struct pg_store *st, struct pg_paths *it, const struct fidx_row **entry,
		      struct fidx_error *err)
{
	struct batch *b = it->batch;
	for (;;) {
		while (b->next < b->n && !b->keep[b->next])
			b->next++;
		if (b->next < b->n || b->end)
			break;
		if (batch_fill(st, it, err) < 0)
			return -1;
	}
	if (!it->own && !it->own_end) {
		int rc = pg_rows_next(&it->rows->base, &it->own, err);
		if (rc < 0)
			return -1;
		it->own_end = rc == 0;
	}
	bool lent = b->next < b->n;
	if (!lent && !it->own)
		return 0;
	if (lent && it->own) {
		size_t n = b->len[b->next], m = fidx_row_len(it->own, FIDX_COL_PATH);
		int c = memcmp(b->bytes + b->at[b->next], fidx_row_text(it->own, FIDX_COL_PATH),
			       n < m ? n : m);
		lent = c < 0 || (c == 0 && n < m);
	}
	if (lent) {
		it->entry.has = FIDX_COLUMN(FIDX_COL_ID) | FIDX_COLUMN(FIDX_COL_SCAN_ID) |
				FIDX_COLUMN(FIDX_COL_PATH);
		it->entry.v[FIDX_COL_ID].i = b->id[b->next];
		it->entry.v[FIDX_COL_SCAN_ID].i = it->scan;
		it->entry.v[FIDX_COL_PATH].p = b->bytes + b->at[b->next];
		it->entry.v[FIDX_COL_PATH].n = b->len[b->next++];
	} else {
		it->entry = *it->own;
		it->own = NULL;
	}
	*entry = &it->entry;
	return 1;
}

/*
 * Opens the path index that narrows it->scan to the trigrams of the nlit
 * literals: its own (returns 1), or when it is kept as changes that of the
 * whole scan its chain ends in (returns 2: it->lent and the batch set).
 * Returns 0 when neither can be read (no trigram, or no index), or -1 with
 * err set.
 */
static int paths_index(struct pg_store *st, struct pg_paths *it,
		       const struct fidx_findpat_literal *lit, size_t nlit, struct fidx_error *err)
{
	uint32_t *tri;
	size_t ntri;
	if (fidx_pathindex_literal_trigrams(lit, nlit, &tri, &ntri, err) < 0)
		return -1;
	int rc = ntri ? pg_pathindex_open(st, it->scan, tri, ntri, &it->index, err) : 0;
	/* The chain's other rows: only those that hold every literal (the maps sent cut to
	 * them; whole, a scan at depth 8 sent ~3 MB of numbers). */
	if (rc == 0 && ntri && (rc = fold_literals(it, lit, nlit, err)) == 0 &&
	    (rc = pg_lent_open(st, it->scan, &it->lits, &it->lent, err)) == 1) {
		rc = pg_pathindex_open(st, it->lent.base, tri, ntri, &it->index, err);
		if (rc == 1)
			rc = (it->batch = calloc(1, sizeof(*it->batch))) ? 2 : fidx_fail_nomem(err);
		else
			pg_lent_free(&it->lent);
	}
	free(tri);
	return rc;
}

struct fidx_paths *pg_paths(struct fidx_store *base, int64_t scan, const char *root,
			    const struct fidx_findpat_literal *lit, size_t nlit,
			    struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	struct pg_paths *it = calloc(1, sizeof(*it));
	if (!it || !(it->root = strdup(root))) {
		free(it);
		fidx_fail_nomem(err);
		return NULL;
	}
	it->scan = scan;
	int indexed = paths_index(st, it, lit, nlit, err);
	if (indexed < 0)
		goto fail;
	if (indexed == 1)
		return &it->base;
	/* Every row of T, or (indexed 2) those W does not lend it. */
	struct fidx_rows_query q = {.scans = &it->scan, .roots = (const char *const *)&it->root,
				    .nscans = 1, .columns = FIDX_COLUMN(FIDX_COL_PATH),
				    .order = FIDX_ROWS_PATH};
	if (!(it->rows = (struct pg_rows *)rows_open(st, &q, it->lent.rel, NULL, NULL, err)))
		goto fail;
	it->rows->base.st = base;
	it->rows->base.q = q;
	return &it->base;
fail:
	pg_paths_close(&it->base);
	return NULL;
}

int pg_paths_next(struct fidx_paths *base, const struct fidx_row **entry, struct fidx_error *err)
{
	struct pg_paths *it = (struct pg_paths *)base;
	struct pg_store *st = pg_of(base->st);
	const struct fidx_row *row;
	if (it->batch)
		return merge_next(st, it, entry, err);
	if (it->index) {
		struct fidx_pathent e;
		int rc = pg_pathindex_next(it->index, &e, err);
		if (rc <= 0)
			return rc;
		if (!fidx_path_in_tree(e.path, it->root))
			return index_damaged(st, it->scan, "a path outside the scan's root", err);
		it->entry.has = FIDX_COLUMN(FIDX_COL_ID) | FIDX_COLUMN(FIDX_COL_SCAN_ID) |
				FIDX_COLUMN(FIDX_COL_PATH);
		it->entry.v[FIDX_COL_ID].i = e.id;
		it->entry.v[FIDX_COL_SCAN_ID].i = it->scan;
		it->entry.v[FIDX_COL_PATH].p = e.path;
		it->entry.v[FIDX_COL_PATH].n = e.len;
		*entry = &it->entry;
		return 1;
	}
	int rc = pg_rows_next(&it->rows->base, &row, err);
	if (rc == 1) {
		it->entry = *row;
		*entry = &it->entry;
	}
	return rc;
}

int pg_paths_row(struct fidx_paths *base, uint64_t columns, const struct fidx_row **row,
		 struct fidx_error *err)
{
	struct pg_paths *it = (struct pg_paths *)base;
	struct pg_store *st = pg_of(base->st);
	it->whole = (struct pg_reader){.columns = columns | FIDX_COLUMN(FIDX_COL_ID) |
				    FIDX_COLUMN(FIDX_COL_SCAN_ID) | FIDX_COLUMN(FIDX_COL_PATH),
				    .scans = &it->scan, .roots = (const char *const *)&it->root,
				    .nscans = 1};
	if (!it->rel && pg_relation(st, &it->scan, 1, 0, NULL, NULL, &it->rel, err) < 0)
		return -1;
	int rc = row_by_id(st, &it->whole, it->entry.v[FIDX_COL_ID].i, it->rel, row, err);
	if (rc == 1 && strcmp(fidx_row_text(*row, FIDX_COL_PATH),
			      fidx_row_text(&it->entry, FIDX_COL_PATH)) == 0)
		return 1;
	if (rc < 0)
		return -1;
	return fidx_fail(err, EBADMSG, "database '%s'%s is damaged: scan %" PRId64 ", row %" PRId64
			 " changed while it was read", fidx_quote(st->name), st->origin, it->scan,
			 it->entry.v[FIDX_COL_ID].i);
}

void pg_paths_close(struct fidx_paths *base)
{
	struct pg_paths *it = (struct pg_paths *)base;
	if (!it)
		return;
	if (it->rows)
		pg_rows_close(&it->rows->base);
	pg_pathindex_close(it->index);
	pg_lent_free(&it->lent);
	if (it->batch)
		free(it->batch->bytes);
	free(it->batch);
	free(it->lits.s);
	free(it->lits.len);
	free(it->rel);
	free(it->root);
	free(it);
}

/* ----------------------------------------------------------- scan rows --- */

static const char *const statuses[] = {"running", "complete", "interrupted", "failed"};

/* The FIDX_STATUS_* bit of status, or 0. */
static unsigned status_bit(const char *status)
{
	for (unsigned i = 0; status && i < 4; i++)
		if (strcmp(status, statuses[i]) == 0)
			return 1u << i;
	return 0;
}

/* Copies the bytes of column c of row r into *dst, NUL-terminated.  Returns false when out of memory. */
static bool take_bytes(const PGresult *res, int r, int c, char **dst, size_t *len)
{
	*dst = NULL;
	if (len)
		*len = 0;
	if (PQgetisnull(res, r, c))
		return true;
	size_t n = (size_t)PQgetlength(res, r, c);
	if (!(*dst = malloc(n + 1)))
		return false;
	memcpy(*dst, PQgetvalue(res, r, c), n);
	(*dst)[n] = '\0';
	if (len)
		*len = n;
	return true;
}

/* Reads scan row r of res into *row, its damage told.  Returns 0, or -1 with err set. */
static int read_scan(const PGresult *res, int r, struct fidx_scan_row *row, struct fidx_error *err)
{
	bool ok = true;
	size_t rootlen = 0;
	*row = (struct fidx_scan_row){0};
	for (int c = 0; c < FIDX_NSCAN_COLUMNS; c++)
		if (!PQgetisnull(res, r, c))
			row->has |= FIDX_SCOLUMN(c);
#define FIDX_READ_INT(name, c) row->name = pg_int(res, r, c);
#define FIDX_READ_TEXT(name, c) \
	ok &= take_bytes(res, r, c, &row->name, c == FIDX_SCOL_ROOT ? &rootlen : NULL);
#define FIDX_READ_DIGEST(name, c) \
	ok &= take_bytes(res, r, c, (char **)&row->name, &row->name##_len);
#define FIDX_X(NAME, name, KIND) FIDX_READ_##KIND(name, FIDX_SCOL_##NAME)
	FIDX_SCAN_COLUMNS(FIDX_X)
#undef FIDX_X
#undef FIDX_READ_INT
#undef FIDX_READ_TEXT
#undef FIDX_READ_DIGEST
	if (!ok || fidx_scan_row_read_options(row) < 0)
		goto nomem;
	row->root_text = row->root && strlen(row->root) == rootlen;
	const char *what = NULL;
	if (!row->root_text || row->root[0] != '/')
		what = "root is not an absolute path";
	else if (!status_bit(row->status) ||
		 strlen(row->status) != (size_t)PQgetlength(res, r, FIDX_SCOL_STATUS))
		what = "status holds no status";
	if (what && asprintf(&row->damage, "scan %" PRId64 ": %s", row->id, what) < 0) {
		row->damage = NULL;
		goto nomem;
	}
	/* A status that is not one is no status at all: it equals none asked for. */
	if (!status_bit(row->status)) {
		free(row->status);
		row->status = NULL;
	}
	return 0;
nomem:
	fidx_scan_row_free(row);
	return fidx_fail_nomem(err);
}

int pg_scans(struct fidx_store *base, const struct fidx_scan_filter *f,
	     struct fidx_scan_list *out, struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	static const struct fidx_scan_filter every = {0};
	char sql[1024];
	struct pg_params p = {0};
	fidx_scan_list_free(out);
	if (!f)
		f = &every;
	if (!st->has_tables)
		return 0;
	size_t len = (size_t)snprintf(sql, sizeof(sql), "SELECT");
	/* The UUID as its text: the scan rows hold it as fidx writes it. */
#define FIDX_X(NAME, name, KIND) \
	len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s %s", FIDX_SCOL_##NAME ? "," : "", \
				FIDX_SCOL_##NAME == FIDX_SCOL_UUID ? "convert_to(uuid::text, 'UTF8')" \
				: #name);
	FIDX_SCAN_COLUMNS(FIDX_X)
#undef FIDX_X
	pg_param_int(&p, f->id);
	pg_param_str(&p, f->root);
	snprintf(sql + len, sizeof(sql) - len, " FROM fidx.scan WHERE ($1 = 0 OR id = $1)"
		 " AND ($2::bytea IS NULL OR root = $2) ORDER BY id");
	if (pg_ready(st, err) < 0)
		return -1;
	PGresult *res = pg_exec(st, sql, &p, "read", err);
	if (!res)
		return -1;
	int n = PQntuples(res);
	if (n && !(out->rows = calloc((size_t)n, sizeof(*out->rows)))) {
		PQclear(res);
		return fidx_fail_nomem(err);
	}
	for (int r = 0; r < n; r++) {
		struct fidx_scan_row *row = &out->rows[out->n];
		if (read_scan(res, r, row, err) < 0) {
			PQclear(res);
			fidx_scan_list_free(out);
			return -1;
		}
		if (f->statuses && !(f->statuses & status_bit(row->status)))
			fidx_scan_row_free(row);
		else
			out->n++;
	}
	PQclear(res);
	return 0;
}

int pg_snapshot(struct fidx_store *base, struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	if (base->mode != FIDX_STORE_READ)
		return pg_flush(base, err);
	if (st->in_txn)
		return 0;
	if (pg_run(st, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", NULL, "read", err) < 0)
		return -1;
	st->in_txn = true;
	return 0;
}

uint64_t pg_count(struct fidx_store *base, const int64_t *scans, size_t n, bool files)
{
	struct pg_store *st = pg_of(base);
	struct fidx_error err;
	struct pg_params p = {0};
	char *ids = pg_id_array(scans, n);
	uint64_t count = 0;
	if (!ids || !n)
		goto out;
	pg_param_text(&p, ids);
	PGresult *res = pg_exec(st, files
				? "SELECT sum(coalesce(s.files, (SELECT count(*) FROM fidx.file f"
				  " WHERE f.scan_id = s.id AND f.type = 'f'::bytea)))::bigint"
				  " FROM fidx.scan s WHERE s.id = ANY($1::bigint[])"
				: "SELECT sum(coalesce(s.entries, (SELECT count(*) FROM fidx.file f"
				  " WHERE f.scan_id = s.id)))::bigint FROM fidx.scan s"
				  " WHERE s.id = ANY($1::bigint[])", &p, "read", &err);
	if (res && PQntuples(res) == 1 && pg_int(res, 0, 0) > 0)
		count = (uint64_t)pg_int(res, 0, 0);
	PQclear(res);
out:
	free(ids);
	return count;
}
