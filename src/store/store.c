/*
 * store.c - the store API (store.h) over its backends (backend.h).
 *
 * The dispatch: the first backend in `backends` that claims the --db
 * argument opens it; SQLite, the embedded default, claims every path and
 * comes last.  Then each call goes to the store's ops.  A row iterator
 * keeps its own copy of what it was asked (struct fidx_rows_query), with the
 * columns its filters need added (a row is known hidden by its path, damaged
 * by its type), so that no backend does either again.
 */
#include "backend.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Every backend, the one that claims any target last. */
static const struct fidx_store_ops *const backends[] = {
	&fidx_store_postgres,
	&fidx_store_sqlite,
};
#define NBACKENDS (sizeof(backends) / sizeof(backends[0]))

/* Returns the backend that opens target. */
static const struct fidx_store_ops *backend_of(const char *target)
{
	for (size_t i = 0; i + 1 < NBACKENDS; i++)
		if (backends[i]->claims(target))
			return backends[i];
	return backends[NBACKENDS - 1];
}

const char *fidx_store_library(size_t i)
{
	return i < NBACKENDS ? backends[i]->library() : NULL;
}

const char *fidx_store_library_of(const struct fidx_store *st)
{
	return st->ops->library();
}

int fidx_store_probe(const char *target, uint32_t *version)
{
	return backend_of(target)->probe(target, version);
}

struct fidx_store *fidx_store_open(const char *target, enum fidx_store_mode mode,
				   const struct fidx_store_opts *opts, struct fidx_error *err)
{
	static const struct fidx_store_opts none = {0};
	return backend_of(target)->open(target, mode, opts ? opts : &none, err);
}

int fidx_store_close(struct fidx_store *st, struct fidx_error *err)
{
	return st ? st->ops->close(st, err) : 0;
}

const char *fidx_store_name(const struct fidx_store *st)
{
	return st->ops->name_of(st);
}

char *fidx_store_shown(const char *target)
{
	const struct fidx_store_ops *ops = backend_of(target);
	return ops->shown ? ops->shown(target) : strdup(target);
}

int fidx_store_version(const struct fidx_store *st)
{
	return st->version;
}

const char *const *fidx_store_files(const struct fidx_store *st)
{
	return st->ops->files(st);
}

char *fidx_store_scratch_new(const char *prefix, struct fidx_error *err)
{
	return backends[NBACKENDS - 1]->scratch_new(prefix, err);
}

void fidx_store_scratch_remove(const char *name)
{
	backends[NBACKENDS - 1]->scratch_remove(name);
}

int64_t fidx_store_begin_scan(struct fidx_store *st, const struct fidx_scan_info *info,
			      struct fidx_error *err)
{
	return st->ops->begin_scan(st, info, err);
}

int fidx_store_claim_scan(struct fidx_store *st, int64_t scan_id, int64_t seen_pid,
			  struct fidx_error *err)
{
	return st->ops->claim_scan(st, scan_id, seen_pid, err);
}

int fidx_store_resume_scan(struct fidx_store *st, int64_t scan_id,
			   struct fidx_scan_totals *so_far, struct fidx_error *err)
{
	return st->ops->resume_scan(st, scan_id, so_far, err);
}

int fidx_store_add(struct fidx_store *st, const struct fidx_record *rec, struct fidx_error *err)
{
	return st->ops->add(st, rec, err);
}

unsigned fidx_store_pending(const struct fidx_store *st)
{
	return st->ops->pending(st);
}

int fidx_store_flush(struct fidx_store *st, struct fidx_error *err)
{
	return st->ops->flush(st, err);
}

int fidx_store_end_scan(struct fidx_store *st, int64_t scan_id,
			const struct fidx_scan_totals *totals, uint8_t *seal,
			struct fidx_error *err)
{
	return st->ops->end_scan(st, scan_id, totals, seal, err);
}

int fidx_store_seal(struct fidx_store *st, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN],
		    struct fidx_error *err)
{
	return st->ops->seal(st, scan_id, seal, err);
}

int fidx_store_build_indexes(struct fidx_store *st, struct fidx_error *err)
{
	return st->ops->build_indexes(st, err);
}

int fidx_store_add_digests(struct fidx_store *st, const struct fidx_file_digest *d, size_t n,
			   struct fidx_error *err)
{
	return st->ops->add_digests(st, d, n, err);
}

int fidx_store_push_begin(struct fidx_store *st, const struct fidx_scan_row *scan,
			  struct fidx_push_state *ps, struct fidx_error *err)
{
	if (!st->ops->push_begin)
		return fidx_fail(err, EOPNOTSUPP, "cannot push into '%s': a scan is pushed to a"
				 " server (postgresql://...), not to a %s store",
				 fidx_quote(fidx_store_name(st)), st->ops->name);
	return st->ops->push_begin(st, scan, ps, err);
}

int fidx_store_push_delta(struct fidx_store *st, int64_t scan_id, const char *base_uuid,
			  const void *runs, size_t len, int64_t *after, struct fidx_error *err)
{
	if (!st->ops->push_delta)
		return 0;
	return st->ops->push_delta(st, scan_id, base_uuid, runs, len, after, err);
}

int fidx_store_drop_scans(struct fidx_store *st, const int64_t *ids, size_t n, size_t *rebuilt,
			  struct fidx_error *err)
{
	*rebuilt = 0;
	if (!st->ops->drop_scans)
		return fidx_fail(err, EOPNOTSUPP, "cannot drop scans of '%s': a %s store keeps"
				 " every scan (fidx prune is for a server's store)",
				 fidx_quote(fidx_store_name(st)), st->ops->name);
	return st->ops->drop_scans(st, ids, n, rebuilt, err);
}

int fidx_store_push_row(struct fidx_store *st, int64_t scan_id, const struct fidx_row *row,
			struct fidx_error *err)
{
	return st->ops->push_row(st, scan_id, row, err);
}

int fidx_store_push_end(struct fidx_store *st, int64_t scan_id, const struct fidx_scan_row *scan,
			struct fidx_error *err)
{
	return st->ops->push_end(st, scan_id, scan, err);
}

int fidx_store_scans(struct fidx_store *st, const struct fidx_scan_filter *f,
		     struct fidx_scan_list *out, struct fidx_error *err)
{
	static const struct fidx_scan_filter every = {0};
	return st->ops->scans(st, f ? f : &every, out, err);
}

/* Frees the arrays of the iterator's copy of its query. */
static void query_free(struct fidx_rows_query *q)
{
	free((void *)q->scans);
	if (q->roots)
		for (size_t i = 0; i < q->nscans; i++)
			free((void *)q->roots[i]);
	free((void *)q->roots);
	free((void *)q->under);
	for (size_t i = 0; q->hidden && i < q->nhidden; i++)
		free(q->hidden[i].root);
	free((void *)q->hidden);
}

/* Copies q's arrays into *copy, which holds q's fields.  Returns 0, or -1 with err set. */
static int query_copy(struct fidx_rows_query *copy, const struct fidx_rows_query *q,
		      struct fidx_error *err)
{
	int64_t *scans = malloc((q->nscans ? q->nscans : 1) * sizeof(*scans));
	char **roots = q->roots ? calloc(q->nscans ? q->nscans : 1, sizeof(*roots)) : NULL;
	struct fidx_hidden *hidden = q->nhidden ? calloc(q->nhidden, sizeof(*hidden)) : NULL;
	bool ok = scans && (roots || !q->roots) && (hidden || !q->nhidden);

	*copy = *q;
	copy->scans = scans;
	copy->roots = (const char *const *)roots;
	copy->hidden = hidden;
	copy->under = q->under && ok ? strdup(q->under) : NULL;
	ok &= copy->under || !q->under;
	for (size_t i = 0; ok && i < q->nscans; i++) {
		scans[i] = q->scans[i];
		if (roots)
			ok &= (roots[i] = strdup(q->roots[i])) != NULL;
	}
	for (size_t i = 0; ok && i < q->nhidden; i++) {
		hidden[i].scan_id = q->hidden[i].scan_id;
		ok &= (hidden[i].root = strdup(q->hidden[i].root)) != NULL;
	}
	if (!ok) {
		copy->nhidden = hidden ? q->nhidden : 0;
		query_free(copy);
		return fidx_fail_nomem(err);
	}
	return 0;
}

/*
 * Makes the iterator of q (copied, with the columns its filters need) through
 * the backend: rows_by_digest when digests is not NULL (order and filters
 * other than the hidden trees then do not count), else rows.  Returns it,
 * or NULL with err set.
 */
static struct fidx_rows *rows_open(struct fidx_store *st, const struct fidx_rows_query *q,
				   enum fidx_digest d, const uint8_t *digests, size_t n,
				   struct fidx_error *err)
{
	struct fidx_rows_query copy;
	if (query_copy(&copy, q, err) < 0)
		return NULL;
	if (digests) {
		copy.order = FIDX_ROWS_ANY;
		free((char *)copy.under);
		copy.under = NULL;
		copy.types = 0;
		copy.with_error = false;
	}
	/* A hidden tree is known by the path; a damaged type, by the type. */
	if (copy.nhidden)
		copy.columns |= FIDX_COLUMN(FIDX_COL_PATH);
	if (copy.types)
		copy.columns |= FIDX_COLUMN(FIDX_COL_TYPE);
	struct fidx_rows *it = digests ? st->ops->rows_by_digest(st, &copy, d, digests, n, err)
				       : st->ops->rows(st, &copy, err);
	if (!it) {
		query_free(&copy);
		return NULL;
	}
	it->st = st;
	it->q = copy;
	return it;
}

struct fidx_rows *fidx_store_rows(struct fidx_store *st, const struct fidx_rows_query *q,
				  struct fidx_error *err)
{
	return rows_open(st, q, FIDX_MD5, NULL, 0, err);
}

struct fidx_rows *fidx_store_rows_by_digest(struct fidx_store *st, const struct fidx_rows_query *q,
					    enum fidx_digest d, const uint8_t *digests, size_t n,
					    struct fidx_error *err)
{
	static const uint8_t none;
	if (!st->ops->rows_by_digest) {
		fidx_fail(err, EOPNOTSUPP, "a %s store keeps no index of digests", st->ops->name);
		return NULL;
	}
	return rows_open(st, q, d, digests ? digests : &none, n, err);
}

int fidx_rows_next(struct fidx_rows *it, const struct fidx_row **row, struct fidx_error *err)
{
	return it->st->ops->rows_next(it, row, err);
}

void fidx_rows_close(struct fidx_rows *it)
{
	if (!it)
		return;
	struct fidx_rows_query q = it->q;
	it->st->ops->rows_close(it);
	query_free(&q);
}

int fidx_store_row(struct fidx_store *st, const struct fidx_rows_query *q, int64_t id,
		   const struct fidx_row **row, struct fidx_error *err)
{
	return st->ops->row(st, q, id, row, err);
}

struct fidx_paths *fidx_store_paths(struct fidx_store *st, int64_t scan, const char *root,
				    const struct fidx_findpat_literal *lit, size_t nlit,
				    struct fidx_error *err)
{
	struct fidx_paths *it = st->ops->paths(st, scan, root, lit, nlit, err);
	if (it)
		it->st = st;
	return it;
}

int fidx_paths_next(struct fidx_paths *it, const struct fidx_row **entry,
		    struct fidx_error *err)
{
	return it->st->ops->paths_next(it, entry, err);
}

int fidx_paths_row(struct fidx_paths *it, uint64_t columns, const struct fidx_row **row,
		   struct fidx_error *err)
{
	return it->st->ops->paths_row(it, columns, row, err);
}

void fidx_paths_close(struct fidx_paths *it)
{
	if (it)
		it->st->ops->paths_close(it);
}

int fidx_store_snapshot(struct fidx_store *st, struct fidx_error *err)
{
	return st->ops->snapshot(st, err);
}

uint64_t fidx_store_count(struct fidx_store *st, const int64_t *scans, size_t n, bool files)
{
	return st->ops->count(st, scans, n, files);
}

int fidx_store_verify(struct fidx_store *st, int64_t scan_id, fidx_seal_found_fn *found,
		      void *arg, struct fidx_seal_result *r, struct fidx_error *err)
{
	return st->ops->verify(st, scan_id, found, arg, r, err);
}
