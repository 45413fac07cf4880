/*
 * paths.c - the paths of one scan for `fidx find` (store.h, fidx_store_paths()).
 *
 * The paths come in byte order from the scan's path index (pathindex.h),
 * narrowed to the blocks that hold every trigram of the literals, or from
 * the file table when the scan has no index; the whole row of a path is
 * then read by id, and must be the entry's (its scan, its path), since the
 * index only narrows and the table decides:
 *
 *     literals ──► trigrams ──► pathiter (index blocks, or file table)
 *                                  │ id, path (byte order)
 *                                  ▼
 *                  caller: match? ──► fidx_paths_row(): the row by id, checked
 */
#include "sqlite.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pathstore.h"
#include "rowcheck.h"

/* A path iterator of a SQLite store. */
struct sqlite_paths {
	struct fidx_paths base;
	struct sqlite_store *st;
	struct fidx_pathiter *it;   /* the paths */
	int64_t scan;               /* the scan read */
	char *root;                 /* its root: each path must lie below it */
	size_t rootlen;
	struct fidx_pathent e;      /* the entry given last */
	struct fidx_row entry;      /* ... as a row */
	struct fidx_rows_query q;   /* the look-up by id: this scan, its root */
};

/*
 * Fills err with what a failed read of the index or the file table of the
 * scan means (it: NULL before it could be opened; damage: what is wrong,
 * unless the iterator says).  Returns -1.
 */
static int read_failed(struct sqlite_paths *p, const struct fidx_pathiter *it, const char *damage,
		       int e, struct fidx_error *err)
{
	const char *found = "unreadable";
	int64_t where = it ? fidx_pathiter_where(it, &found) : 0;
	if (!damage)
		damage = found;
	if (e == EBADMSG && it && fidx_pathiter_indexed(it))
		return fidx_fail(err, EBADMSG, "the path index of scan %" PRId64 " in database '%s'"
				 " is damaged (block %" PRId64 ": %s)", p->scan,
				 fidx_quote(p->st->path), where, damage);
	if (e == EBADMSG && it)
		return fidx_fail(err, EBADMSG, "database '%s' is damaged: scan %" PRId64 ", row %"
				 PRId64 ": %s", fidx_quote(p->st->path), p->scan, where, damage);
	if (e == EBADMSG)
		return fidx_fail(err, EBADMSG, "the path index of scan %" PRId64 " in database '%s'"
				 " is damaged", p->scan, fidx_quote(p->st->path));
	if (e == ENOMEM)
		return fidx_fail_nomem(err);
	return sqlite_fail(p->st, err, "read");
}

struct fidx_paths *sqlite_paths(struct fidx_store *base, int64_t scan, const char *root,
				const struct fidx_findpat_literal *lit, size_t nlit,
				struct fidx_error *err)
{
	struct sqlite_paths *p = calloc(1, sizeof(*p));
	uint32_t *tri = NULL;
	size_t ntri = 0;

	if (!p || !(p->root = strdup(root))) {
		free(p);
		fidx_fail_nomem(err);
		return NULL;
	}
	p->st = sqlite_of(base);
	p->scan = scan;
	p->rootlen = strlen(root);
	p->q = (struct fidx_rows_query){.scans = &p->scan, .roots = (const char *const *)&p->root,
					.nscans = 1};
	/* The trigrams every literal holds, as the index keys them. */
	if (fidx_pathindex_literal_trigrams(lit, nlit, &tri, &ntri, err) < 0)
		goto fail;
	if (!(p->it = fidx_pathiter_open(p->st->db, scan, tri, ntri))) {
		read_failed(p, NULL, NULL, errno, err);
		goto fail;
	}
	free(tri);
	return &p->base;
fail:
	free(tri);
	free(p->root);
	free(p);
	return NULL;
}

int sqlite_paths_next(struct fidx_paths *base, const struct fidx_row **entry,
		      struct fidx_error *err)
{
	struct sqlite_paths *p = (struct sqlite_paths *)base;
	int rc = fidx_pathiter_next(p->it, &p->e);
	if (rc < 0)
		return read_failed(p, p->it, NULL, errno, err);
	if (rc == 0)
		return 0;
	if (!fidx_rowcheck_below(p->root, p->rootlen, p->e.path, p->e.len)) {
		if (!fidx_pathiter_indexed(p->it)) {
			char quoted[4200];
			snprintf(quoted, sizeof(quoted), "%s", fidx_quote(p->root));
			return fidx_fail(err, EBADMSG, "database '%s' is damaged: scan %" PRId64 ", row %"
					 PRId64 ": path '%s' is not below the scan's root '%s'",
					 fidx_quote(p->st->path), p->scan, p->e.id,
					 fidx_quote(p->e.path), quoted);
		}
		return read_failed(p, p->it, "a path outside the scan's root", EBADMSG, err);
	}
	p->entry.has = FIDX_COLUMN(FIDX_COL_ID) | FIDX_COLUMN(FIDX_COL_SCAN_ID) |
		       FIDX_COLUMN(FIDX_COL_PATH);
	p->entry.v[FIDX_COL_ID].i = p->e.id;
	p->entry.v[FIDX_COL_SCAN_ID].i = p->scan;
	p->entry.v[FIDX_COL_PATH].p = p->e.path;
	p->entry.v[FIDX_COL_PATH].n = p->e.len;
	*entry = &p->entry;
	return 1;
}

int sqlite_paths_row(struct fidx_paths *base, uint64_t columns, const struct fidx_row **row,
		     struct fidx_error *err)
{
	struct sqlite_paths *p = (struct sqlite_paths *)base;
	char mismatch[96];

	/* The scan and the path too: the index narrows, the file table decides. */
	p->q.columns = columns | FIDX_COLUMN(FIDX_COL_PATH);
	int rc = sqlite_row_any(p->st, &p->q, p->e.id, &p->entry, row, err);
	if (rc < 0 || rc == 1)
		return rc;
	snprintf(mismatch, sizeof(mismatch), "the row of an entry, %" PRId64 ", is %s", p->e.id,
		 rc ? "another path's" : "not in the database");
	return read_failed(p, p->it, mismatch, EBADMSG, err);
}

void sqlite_paths_close(struct fidx_paths *base)
{
	struct sqlite_paths *p = (struct sqlite_paths *)base;
	if (!p)
		return;
	fidx_pathiter_close(p->it);
	free(p->root);
	free(p);
}
