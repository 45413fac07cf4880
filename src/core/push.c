/*
 * push.c - a scan copied from one store into another, its seal checked
 * there (push.h).
 */
#include "push.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "delta.h"
#include "hash.h"
#include "row.h"
#include "sysinfo.h"

/* Ignores a finding of the check: the counts in the result tell them. */
static void count_only(void *arg, const struct fidx_seal_finding *f)
{
	(void)arg;
	(void)f;
}

/*
 * Writes into out the UUID a scan without one is known by: SHA-256 of
 * "fidx scan " and its seal, cut to 16 bytes, as RFC 9562 version 8.
 * Returns 0, or -1 with err set.
 */
static int uuid_of_seal(const uint8_t *seal, size_t len, char out[FIDX_UUID_TEXT],
			struct fidx_error *err)
{
	static const char tag[] = "fidx scan ";
	uint8_t md[FIDX_DIGEST_MAX];
	struct fidx_digester *g = fidx_digester_create(FIDX_SHA256);
	int ok = g && fidx_digester_update(g, tag, sizeof(tag) - 1) == 0 &&
		 fidx_digester_update(g, seal, len) == 0 && fidx_digester_final(g, md) == 0;
	fidx_digester_destroy(g);
	if (!ok)
		return fidx_fail(err, EIO, "cannot hash a seal into a UUID");
	md[6] = (uint8_t)((md[6] & 0x0f) | 0x80); /* version 8 */
	md[8] = (uint8_t)((md[8] & 0x3f) | 0x80); /* the RFC's variant */
	snprintf(out, FIDX_UUID_TEXT,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", md[0],
		 md[1], md[2], md[3], md[4], md[5], md[6], md[7], md[8], md[9], md[10], md[11],
		 md[12], md[13], md[14], md[15]);
	return 0;
}

/* The bytes of column c of row (path, a digest...), *n of them. */
static const char *bytes_of(const struct fidx_row *row, enum fidx_col c, size_t *n)
{
	*n = fidx_row_has(row, c) ? row->v[c].n : 0;
	return fidx_row_has(row, c) ? row->v[c].p : NULL;
}

/* Whether row has a digest (the condition the server applies a run's fill on). */
static bool has_digest(const struct fidx_row *row)
{
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (fidx_row_has(row, (enum fidx_col)(FIDX_COL_MD5 + d)))
			return true;
	return false;
}

/* Whether seal fields a and b are equal. */
static bool field_eq(const struct fidx_seal_field *a, const struct fidx_seal_field *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == FIDX_SEAL_INT)
		return a->i == b->i;
	if (a->kind == FIDX_SEAL_BYTES)
		return a->n == b->n && (!a->n || memcmp(a->p, b->p, a->n) == 0);
	return a->kind == FIDX_SEAL_NULL;
}

/* How a row of the earlier scan may be lent to the next one. */
enum lend {
	LEND_NOT,        /* it differs */
	LEND_AS_IS,      /* equal as it is, not with a fill */
	LEND_FILLED,     /* equal once its digests_from names the earlier scan */
	LEND_EITHER,     /* equal either way (no digest, or a digests_from of its own) */
};

/* How row b of scan base (id base_id) compares with row s of the next scan, but for their ids. */
static enum lend compare_rows(const struct fidx_row *b, const struct fidx_row *s, int64_t base_id)
{
	struct fidx_seal_field fb[FIDX_SEAL_FILE_FIELDS], fs[FIDX_SEAL_FILE_FIELDS];
	int df = fidx_seal_file_field(FIDX_COL_DIGESTS_FROM);
	fidx_seal_file_fields(b, fb);
	fidx_seal_file_fields(s, fs);
	for (int i = 2; i < FIDX_SEAL_FILE_FIELDS; i++)
		if (i != df && !field_eq(&fb[i], &fs[i]))
			return LEND_NOT;
	bool fills = fb[df].kind == FIDX_SEAL_NULL && has_digest(b);
	if (!fills)
		return field_eq(&fb[df], &fs[df]) ? LEND_EITHER : LEND_NOT;
	if (fs[df].kind == FIDX_SEAL_NULL)
		return LEND_AS_IS;
	return fs[df].kind == FIDX_SEAL_INT && fs[df].i == base_id ? LEND_FILLED : LEND_NOT;
}

/* A row of the earlier scan: its id, and the next scan's row it is lent as (0: none). */
struct lent {
	int64_t bid, sid;
	enum lend how;
};

/* What a push as changes sends: the runs, and the rows no run covers. */
struct plan {
	struct lent *base;           /* every row of the earlier scan */
	size_t nbase, capbase;
	int64_t *own;                /* the ids of the rows to send, ascending */
	size_t nown, capown;
	struct fidx_delta_map *runs;
	size_t nruns;
	uint64_t rows;               /* rows of the scan */
};

/* Frees what p holds and empties it, so that a second call frees nothing. */
static void plan_free(struct plan *p)
{
	free(p->base);
	free(p->own);
	free(p->runs);
	*p = (struct plan){0};
}

/* Appends a row of the earlier scan.  Returns false when out of memory. */
static bool plan_base(struct plan *p, int64_t bid, int64_t sid, enum lend how)
{
	if (p->nbase == p->capbase) {
		size_t cap = p->capbase ? 2 * p->capbase : 4096;
		struct lent *n = realloc(p->base, cap * sizeof(*n));
		if (!n)
			return false;
		p->base = n;
		p->capbase = cap;
	}
	p->base[p->nbase++] = (struct lent){bid, sid, how};
	return true;
}

/* Appends a row to send.  Returns false when out of memory. */
static bool plan_own(struct plan *p, int64_t sid)
{
	if (p->nown == p->capown) {
		size_t cap = p->capown ? 2 * p->capown : 1024;
		int64_t *n = realloc(p->own, cap * sizeof(*n));
		if (!n)
			return false;
		p->own = n;
		p->capown = cap;
	}
	p->own[p->nown++] = sid;
	return true;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_lent(const void *a, const void *b)
{
	return cmp_i64(&((const struct lent *)a)->bid, &((const struct lent *)b)->bid);
}

/* Cuts the rows of the earlier scan, in id order, into runs.  Returns false when out of memory. */
static bool plan_runs(struct plan *p)
{
	qsort(p->base, p->nbase, sizeof(*p->base), cmp_lent);
	qsort(p->own, p->nown, sizeof(*p->own), cmp_i64);
	if (!(p->runs = malloc((p->nbase ? p->nbase : 1) * sizeof(*p->runs))))
		return false;
	struct fidx_delta_map *run = NULL;
	enum lend how = LEND_EITHER;
	for (size_t i = 0; i < p->nbase; i++) {
		const struct lent *e = &p->base[i];
		if (!e->sid) {
			run = NULL;
			continue;
		}
		int64_t off = e->sid - e->bid;
		bool fits = run && run->off == off &&
			    (e->how == LEND_EITHER || how == LEND_EITHER || e->how == how);
		if (!fits) {
			run = &p->runs[p->nruns++];
			*run = (struct fidx_delta_map){.lo = e->bid, .off = off};
			how = LEND_EITHER;
		}
		run->hi = e->bid;
		if (e->how != LEND_EITHER)
			how = e->how;
		run->fill = how == LEND_FILLED;
	}
	return true;
}

/* Orders two paths as the rows are ordered (bytes). */
static int path_cmp(const char *a, size_t na, const char *b, size_t nb)
{
	int c = memcmp(a, b, na < nb ? na : nb);
	return c ? c : (na > nb) - (na < nb);
}

/*
 * Plans scan as its changes from base (an earlier complete scan of the same
 * root in from): both read in path order and merged; a row of scan equal
 * to base's of the same path but for its ids is lent, any other is sent.
 * Returns 1 with *p filled, 0 when scan cannot be sent so (a path twice, an
 * id out of the keys' range), or -1 with err set.
 */
static int plan_delta(struct fidx_store *from, const struct fidx_scan_row *base,
		      const struct fidx_scan_row *scan, struct plan *p, struct fidx_error *err)
{
	const char *broot = base->root, *sroot = scan->root;
	struct fidx_rows_query qb = {.scans = &base->id, .roots = &broot, .nscans = 1,
				     .columns = FIDX_FILE_ALL, .order = FIDX_ROWS_PATH,
				     .damage = FIDX_ROWS_STOP};
	struct fidx_rows_query qs = qb;
	qs.scans = &scan->id;
	qs.roots = &sroot;
	struct fidx_rows *ib = fidx_store_rows(from, &qb, err), *is = NULL;
	const struct fidx_row *rb = NULL, *rs = NULL;
	char *last[2] = {NULL, NULL};
	size_t nlast[2] = {0, 0};
	int rc = -1, gb = 0, gs = 0;
	*p = (struct plan){0};
	if (!ib || !(is = fidx_store_rows(from, &qs, err)))
		goto out;
	gb = fidx_rows_next(ib, &rb, err);
	gs = fidx_rows_next(is, &rs, err);
	while (gb == 1 || gs == 1) {
		size_t nb = 0, ns = 0;
		const char *pb = gb == 1 ? bytes_of(rb, FIDX_COL_PATH, &nb) : NULL;
		const char *ps = gs == 1 ? bytes_of(rs, FIDX_COL_PATH, &ns) : NULL;
		int c = gb != 1 ? 1 : gs != 1 ? -1 : path_cmp(pb, nb, ps, ns);
		/* A path twice in a scan (or an id out of range) cannot be merged: sent whole. */
		for (int side = 0; side < 2; side++) {
			const struct fidx_row *r = side ? rs : rb;
			const char *path = side ? ps : pb;
			size_t n = side ? ns : nb;
			if ((side ? c < 0 : c > 0) || !path)
				continue;
			if ((last[side] && path_cmp(last[side], nlast[side], path, n) == 0) ||
			    fidx_row_int(r, FIDX_COL_ID) <= 0 ||
			    fidx_row_int(r, FIDX_COL_ID) > FIDX_DELTA_KEY_MAX) {
				rc = 0;
				goto out;
			}
			char *copy = realloc(last[side], n ? n : 1);
			if (!copy) {
				fidx_fail_nomem(err);
				goto out;
			}
			memcpy(copy, path, n);
			last[side] = copy;
			nlast[side] = n;
		}
		bool ok = true;
		if (c < 0) {
			ok = plan_base(p, fidx_row_int(rb, FIDX_COL_ID), 0, LEND_NOT);
		} else if (c > 0) {
			ok = plan_own(p, fidx_row_int(rs, FIDX_COL_ID));
			p->rows++;
		} else {
			enum lend how = compare_rows(rb, rs, base->id);
			int64_t sid = fidx_row_int(rs, FIDX_COL_ID);
			ok = plan_base(p, fidx_row_int(rb, FIDX_COL_ID), how ? sid : 0, how) &&
			     (how || plan_own(p, sid));
			p->rows++;
		}
		if (!ok) {
			fidx_fail_nomem(err);
			goto out;
		}
		if (c <= 0)
			gb = fidx_rows_next(ib, &rb, err);
		if (c >= 0)
			gs = fidx_rows_next(is, &rs, err);
		if (gb < 0 || gs < 0)
			goto out;
	}
	if (gb < 0 || gs < 0)
		goto out;
	if (!plan_runs(p)) {
		fidx_fail_nomem(err);
		goto out;
	}
	rc = 1;
out:
	fidx_rows_close(ib);
	fidx_rows_close(is);
	free(last[0]);
	free(last[1]);
	if (rc != 1)
		plan_free(p);
	return rc;
}

/*
 * The scan of from that scan is pushed as the changes from: the newest
 * earlier complete, sealed scan of the same host and root.  Returns 1 with
 * *base filled (free it), 0 when there is none, or -1 with err set.
 */
static int base_of(struct fidx_store *from, const struct fidx_scan_row *scan,
		   struct fidx_scan_row *base, struct fidx_error *err)
{
	struct fidx_scan_list list = {0};
	struct fidx_scan_filter f = {.root = scan->root, .statuses = FIDX_STATUS_COMPLETE};
	if (fidx_store_scans(from, &f, &list, err) < 0)
		return -1;
	ssize_t pick = -1;
	for (size_t i = 0; i < list.n; i++) {
		const struct fidx_scan_row *s = &list.rows[i];
		bool same_host = (!s->host && !scan->host) ||
				 (s->host && scan->host && strcmp(s->host, scan->host) == 0);
		if (s->id < scan->id && same_host && !s->damage && s->seal_len == FIDX_SEAL_LEN &&
		    (pick < 0 || s->id > list.rows[pick].id))
			pick = (ssize_t)i;
	}
	if (pick >= 0) {
		*base = list.rows[pick];
		list.rows[pick] = list.rows[--list.n];
	}
	fidx_scan_list_free(&list);
	return pick >= 0;
}

/*
 * Decides how scan goes to `to`: as its changes from an earlier scan there
 * when there is one and that is smaller (fewer rows sent), else whole; tells
 * `to` (its *after updated).  Returns 1 with *p holding the rows to send,
 * 0 for every row, or -1 with err set.
 */
static int choose(struct fidx_store *from, const struct fidx_scan_row *scan,
		  struct fidx_store *to, int64_t scan_id, bool whole, struct plan *p,
		  int64_t *after, int64_t *base_id, struct fidx_error *err)
{
	struct fidx_scan_row base;
	char uuid[FIDX_UUID_TEXT];
	int rc = whole ? 0 : base_of(from, scan, &base, err);
	if (rc < 0)
		return -1;
	if (rc == 1) {
		const char *base_uuid = base.uuid;
		rc = -1;
		if (!base_uuid && uuid_of_seal(base.seal, base.seal_len, uuid, err) == 0)
			base_uuid = uuid;
		if (base_uuid)
			rc = plan_delta(from, &base, scan, p, err);
		/* A damaged row (of the earlier scan: then the scan goes whole; of this one: the
		 * whole push says so). */
		if (rc < 0 && err->code == EBADMSG)
			rc = 0;
		if (rc == 1 && p->nown + p->nruns >= p->rows) {
			plan_free(p);
			rc = 0;
		}
		if (rc == 1) {
			size_t len;
			uint8_t *runs = fidx_delta_encode(p->runs, p->nruns, &len);
			rc = runs ? fidx_store_push_delta(to, scan_id, base_uuid, runs, len, after, err)
				  : fidx_fail_nomem(err);
			free(runs);
			if (rc != 1)
				plan_free(p);
			else
				*base_id = base.id;
		}
		fidx_scan_row_free(&base);
		if (rc != 0)
			return rc;
	}
	return fidx_store_push_delta(to, scan_id, NULL, NULL, 0, after, err);
}

int fidx_push_scan(struct fidx_store *from, const struct fidx_scan_row *scan,
		   struct fidx_store *to, bool whole, struct fidx_push_result *r,
		   atomic_uint_least64_t *sent, struct fidx_error *err)
{
	struct fidx_push_state ps;
	struct fidx_scan_row named = *scan;
	char uuid[FIDX_UUID_TEXT];

	*r = (struct fidx_push_result){0};
	if (!scan->status || strcmp(scan->status, "complete") != 0 ||
	    scan->seal_len != FIDX_SEAL_LEN)
		return fidx_fail(err, EINVAL, "scan %" PRId64 " is not complete and sealed: a push"
				 " takes complete scans ('fidx scans' lists them)", scan->id);
	if (!scan->uuid) {
		if (uuid_of_seal(scan->seal, scan->seal_len, uuid, err) < 0)
			return -1;
		named.uuid = uuid;
	}
	if (fidx_store_push_begin(to, &named, &ps, err) < 0)
		return -1;
	r->id = ps.scan_id;
	r->already = ps.complete;
	if (!ps.complete) {
		struct plan p = {0};
		int delta = choose(from, scan, to, ps.scan_id, whole, &p, &ps.after, &r->base, err);
		if (delta < 0)
			return -1;
		if (delta)
			r->lent = p.rows - p.nown;
		r->after = ps.after;
		const char *root = scan->root;
		struct fidx_rows_query q = {.scans = &scan->id, .roots = &root, .nscans = 1,
					    .columns = FIDX_FILE_ALL, .order = FIDX_ROWS_ID,
					    .damage = FIDX_ROWS_STOP};
		struct fidx_rows *it = fidx_store_rows(from, &q, err);
		const struct fidx_row *row;
		int rc;
		if (!it) {
			plan_free(&p);
			return -1;
		}
		while ((rc = fidx_rows_next(it, &row, err)) == 1) {
			int64_t id = fidx_row_int(row, FIDX_COL_ID);
			if (id <= ps.after ||
			    (delta && !bsearch(&id, p.own, p.nown, sizeof(*p.own), cmp_i64)))
				continue;
			if ((rc = fidx_store_push_row(to, ps.scan_id, row, err)) < 0)
				break;
			r->rows++;
			if (sent)
				atomic_fetch_add_explicit(sent, 1, memory_order_relaxed);
		}
		fidx_rows_close(it);
		plan_free(&p);
		if (rc < 0 || fidx_store_push_end(to, ps.scan_id, scan, err) < 0)
			return -1;
	} else {
		/* Read back when it was pushed: re-reading every scan of a host's history at
		 * each push would make a push's cost grow with the history. */
		r->seal.sealed = ps.seal_len > 0;
		r->seal.recorded_len = ps.seal_len;
		memcpy(r->seal.recorded, ps.seal, sizeof(r->seal.recorded));
		return 0;
	}
	return fidx_store_verify(to, ps.scan_id, count_only, NULL, &r->seal, err);
}
