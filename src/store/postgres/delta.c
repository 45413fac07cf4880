/*
 * delta.c - scans kept as their changes on PostgreSQL, read whole.
 *
 * A scan pushed as its changes (core/push.c, write.c's pg_push_delta()) has
 * a row in fidx.scan_delta: its base (an earlier scan of its host and root,
 * itself whole or kept as changes) and the runs that lend it the base's
 * rows under new ids (core/delta.h); its own rows, those that differ, are
 * in fidx.file as any scan's.  To read scan T whole, the runs along T's
 * chain are composed here, on the client (they are few: about one per row
 * changed), into one map per scan of the chain, the owner of rows in
 * fidx.file:
 *
 *     T  (own rows)        identity                 ─┐
 *     B  = T's base        runs(T)                   ├─► pairs (owner, T, map)
 *     A  = B's base        runs(B) ∘ runs(T)        ─┘
 *
 * and the server reads the owners' rows once each: a row whose key (pair
 * number << 40 | its id in its owner) falls in an interval of its pair's map
 * (width_bucket(), a binary search over the sorted lower bounds) is T's row,
 * its id in T the key plus the interval's offset.  The maps go as array
 * literals of numbers fidx formats (no value of a user is spliced into SQL).
 * Each reading operation of the backend reads through pg_relation(), so a
 * query sees the same rows, by the same names, whichever way a scan is kept.
 *
 * find splits the chain at its bottom, the whole scan W that has a path
 * index (pg_lent_open()): the rows W lends T are found through W's index,
 * each kept when the composed map of W lends its key (its id where it was
 * made, asked of the server for the index's few candidates: the index holds
 * the server's ids) on to T (pg_lent_filter()); the rest of T's rows (T's own
 * and its chain's above W, a few per cent) through the relation of the pairs
 * above W.  A lent row keeps its owner's id in every relation, so the id of
 * W's index is the id of that row in T's relation too (fidx_paths_row()).
 *
 * A map of level k holds the runs of every level above it: at depth 8 a
 * scan's maps are megabytes of numbers.  A question that wants few rows
 * cuts them to those rows first (struct cand): a read by digest asks the
 * digest's index for the owners' rows that have one (digest_cands()), find
 * asks for the rows of the chain above W whose path holds the pattern's
 * literals (path_cands()); each map then holds one interval per such row.
 */
#include "postgres.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delta.h"
#include "seal.h"

/* The relation of no row. */
#define NO_ROWS " (SELECT f.*, f.scan_id AS owner FROM fidx.file f WHERE false) f"

/* A scan of a chain kept as changes: its base and its runs, as maps. */
struct link {
	int64_t scan, base;
	struct fidx_delta_map *runs;  /* fill: the base's id where it was made, or 0 */
	size_t nruns;
};

/* A growing string. */
struct str {
	char *p;
	size_t len, cap;
	bool nomem;
};

/* Appends printf(fmt, ...) to s (s->nomem set when out of memory). */
static void add(struct str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct str *s, const char *fmt, ...)
{
	va_list ap;
	if (s->nomem)
		return;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(s->p ? s->p + s->len : NULL, s->p ? s->cap - s->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			s->nomem = true;
			return;
		}
		if (s->p && s->len + (size_t)n < s->cap) {
			s->len += (size_t)n;
			return;
		}
		size_t cap = s->cap ? s->cap : 4096;
		while (cap <= s->len + (size_t)n)
			cap *= 2;
		char *p = realloc(s->p, cap);
		if (!p) {
			s->nomem = true;
			return;
		}
		s->p = p;
		s->cap = cap;
	}
}

/* A row a question may want: its owner (the scan whose row it is) and its key there. */
struct cand {
	int64_t owner, key;
};

/* The pairs of a relation: (owner, target) and the map of each, in order. */
struct pairs {
	struct str owners, targets, lo, hi, off, fill;
	size_t n;
	const struct cand *cand;  /* when not NULL: the only rows asked for, sorted */
	size_t ncand;
};

/* Adds interval [lo, hi] of pair key (its number << 40), as m's. */
static void interval_add(struct pairs *p, int64_t key, int64_t lo, int64_t hi,
			 const struct fidx_delta_map *m)
{
	bool first = !p->lo.len;
	add(&p->lo, "%s%" PRId64, first ? "" : ",", key | lo);
	add(&p->hi, "%s%" PRId64, first ? "" : ",", key | hi);
	add(&p->off, "%s%" PRId64, first ? "" : ",", m->off);
	add(&p->fill, "%s%" PRId64, first ? "" : ",", m->fill);
}

/* The interval of the n sorted intervals m that holds key, or NULL. */
static const struct fidx_delta_map *interval_of(const struct fidx_delta_map *m, size_t n,
						int64_t key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m[mid].hi < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && m[lo].lo <= key ? &m[lo] : NULL;
}

/*
 * Adds pair (owner, target) of map m (n intervals); with candidates, only
 * the intervals of one id each of the candidates of owner that m holds (a
 * hunt over scans at depth 8 sent every map whole: 160 MB of SQL for 50).
 */
static void pair_add(struct pairs *p, int64_t owner, int64_t target,
		     const struct fidx_delta_map *m, size_t n)
{
	p->n++;
	add(&p->owners, "%s%" PRId64, p->n > 1 ? "," : "", owner);
	add(&p->targets, "%s%" PRId64, p->n > 1 ? "," : "", target);
	int64_t key = (int64_t)p->n << 40;
	if (!p->cand) {
		for (size_t i = 0; i < n; i++)
			interval_add(p, key, m[i].lo, m[i].hi, &m[i]);
		return;
	}
	size_t lo = 0, hi = p->ncand;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->cand[mid].owner < owner)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < p->ncand && p->cand[i].owner == owner; i++) {
		const struct fidx_delta_map *in = interval_of(m, n, p->cand[i].key);
		if (in)
			interval_add(p, key, p->cand[i].key, p->cand[i].key, in);
	}
}

static void pairs_free(struct pairs *p)
{
	free(p->owners.p);
	free(p->targets.p);
	free(p->lo.p);
	free(p->hi.p);
	free(p->off.p);
	free(p->fill.p);
}

/* Whether out of memory struck any string of p. */
static bool pairs_nomem(const struct pairs *p)
{
	return p->owners.nomem || p->targets.nomem || p->lo.nomem || p->hi.nomem ||
	       p->off.nomem || p->fill.nomem;
}

/* The link of scan among the n links, or NULL. */
static const struct link *link_of(const struct link *l, size_t n, int64_t scan)
{
	for (size_t i = 0; i < n; i++)
		if (l[i].scan == scan)
			return &l[i];
	return NULL;
}

/* Puts the database first in err's message when it says what is damaged.  Returns -1. */
static int in_database(struct pg_store *st, struct fidx_error *err)
{
	static _Thread_local char why[FIDX_ERROR_MSG];
	if (!err || err->code != EBADMSG)
		return -1;
	memcpy(why, err->msg, sizeof(why));
	return fidx_fail(err, EBADMSG, "cannot read database '%s'%s: %s", fidx_quote(st->name),
			 st->origin, why);
}

/*
 * Reads the links of the chains of the n scans into *out.  Returns how
 * many (0: every scan is kept whole), or -1 with err set (EBADMSG: a base
 * is missing or of another host or root, or changes that do not decode).
 */
static ssize_t load_links(struct pg_store *st, const int64_t *scans, size_t n, struct link **out,
			  struct fidx_error *err)
{
	*out = NULL;
	if (st->base.version < 8 || !st->has_tables || !n)
		return 0;
	char *ids = pg_id_array(scans, n);
	if (!ids)
		return fidx_fail_nomem(err);
	struct pg_params p = {0};
	pg_param_text(&p, ids);
	if (pg_ready(st, err) < 0) {
		free(ids);
		return -1;
	}
	/* The chains' ids first, then their links named by the array of them: through a
	 * coordinator a join with c reads every shard's scan_delta, runs and all, once for
	 * each chain asked (find, host by host: ~9 s for 50 hosts x 25 days); an array is
	 * sent to the shards as a condition. */
	PGresult *res = pg_exec(st, "WITH RECURSIVE c(id) AS (SELECT pg_catalog.unnest($1::bigint[])"
				" UNION SELECT d.base_id FROM fidx.scan_delta d JOIN c ON d.scan_id = c.id)"
				" SELECT d.scan_id, d.base_id, d.runs, coalesce(b.origin_id, b.id),"
				" b.id, coalesce(s.host_id = b.host_id AND s.root = b.root,"
				" s.id IS NULL) FROM fidx.scan_delta d"
				" LEFT JOIN fidx.scan b ON b.id = d.base_id"
				" AND b.id = ANY(ARRAY(SELECT id FROM c))"
				" LEFT JOIN fidx.scan s ON s.id = d.scan_id"
				" AND s.id = ANY(ARRAY(SELECT id FROM c))"
				" WHERE d.scan_id = ANY(ARRAY(SELECT id FROM c))", &p, "read", err);
	free(ids);
	if (!res)
		return -1;
	int rows = PQntuples(res);
	struct link *l = rows ? calloc((size_t)rows, sizeof(*l)) : NULL;
	if (rows && !l) {
		PQclear(res);
		return fidx_fail_nomem(err);
	}
	for (int r = 0; r < rows; r++) {
		l[r].scan = pg_int(res, r, 0);
		l[r].base = pg_int(res, r, 1);
		int rc = PQgetisnull(res, r, 4)
			 ? fidx_fail(err, EBADMSG, "base scan %" PRId64 " of scan %" PRId64
				     " is missing (the scan, kept as its changes, is damaged)",
				     l[r].base, l[r].scan)
			 : PQgetvalue(res, r, 5)[0] != 1
			 ? fidx_fail(err, EBADMSG, "base scan %" PRId64 " of scan %" PRId64
				     " is of another host or root (the scan, kept as its changes,"
				     " is damaged)", l[r].base, l[r].scan)
			 : fidx_delta_decode(PQgetvalue(res, r, 2), (size_t)PQgetlength(res, r, 2),
					     l[r].scan, &l[r].runs, &l[r].nruns, err);
		if (rc < 0) {
			for (int k = 0; k < r; k++)
				free(l[k].runs);
			free(l);
			PQclear(res);
			return in_database(st, err);
		}
		int64_t fill = pg_int(res, r, 3);
		for (size_t i = 0; i < l[r].nruns; i++)
			l[r].runs[i].fill = l[r].runs[i].fill ? fill : 0;
	}
	PQclear(res);
	*out = l;
	return rows;
}

/*
 * Adds the pairs of scan target: its own rows, then those of each scan down
 * its chain, through start (nstart intervals of target's ids; the rows of
 * target outside them are left out) and not from stop down (0: to the end).
 */
static int chain_pairs(struct pairs *p, const struct link *l, size_t nl, int64_t target,
		       const struct fidx_delta_map *start, size_t nstart, int64_t stop,
		       struct fidx_error *err)
{
	struct fidx_delta_map *map = (struct fidx_delta_map *)start, *next;
	size_t nmap = nstart, nnext, steps = 0;
	int64_t owner = target;
	int rc = 0;
	if (owner == stop)
		return 0;
	pair_add(p, owner, target, map, nmap);
	const struct link *k;
	while (nmap && (k = link_of(l, nl, owner)) && k->base != stop) {
		if (++steps > nl) {
			rc = fidx_fail(err, EBADMSG, "the changes of scan %" PRId64 " are damaged:"
				       " its chain of bases loops", target);
			break;
		}
		if (fidx_delta_compose(k->runs, k->nruns, k->scan, map, nmap, &next, &nnext,
				       err) < 0) {
			rc = -1;
			break;
		}
		if (map != start)
			free(map);
		map = next;
		nmap = nnext;
		owner = k->base;
		if (nmap)
			pair_add(p, owner, target, map, nmap);
	}
	if (map != start)
		free(map);
	return rc;
}

/*
 * The map from the ids of scan from to those of scan to, a later scan whose
 * chain holds it, into *out (malloc'ed, *n intervals, sorted).  Returns 1,
 * 0 when from is not in to's chain, or -1 with err set.
 */
static int map_between(const struct link *l, size_t nl, int64_t from, int64_t to,
		       struct fidx_delta_map **out, size_t *n, struct fidx_error *err)
{
	struct fidx_delta_map whole = {.lo = 0, .hi = FIDX_DELTA_KEY_MAX};
	struct fidx_delta_map *map = &whole, *next;
	size_t nmap = 1, nnext, steps = 0;
	int64_t owner = to;
	const struct link *k;
	*out = NULL;
	*n = 0;
	while ((k = link_of(l, nl, owner)) && ++steps <= nl) {
		if (fidx_delta_compose(k->runs, k->nruns, k->scan, map, nmap, &next, &nnext,
				       err) < 0) {
			if (map != &whole)
				free(map);
			return -1;
		}
		if (map != &whole)
			free(map);
		map = next;
		nmap = nnext;
		owner = k->base;
		if (owner == from) {
			*out = map;
			*n = nmap;
			return 1;
		}
	}
	if (map != &whole)
		free(map);
	return 0;
}

/*
 * The ids of [0, FIDX_DELTA_KEY_MAX] outside the n sorted intervals m, as
 * identity intervals into *out (malloc'ed, *nout).  Returns 0, or -1 with
 * err set.
 */
static int complement(const struct fidx_delta_map *m, size_t n, struct fidx_delta_map **out,
		      size_t *nout, struct fidx_error *err)
{
	struct fidx_delta_map *c = malloc((n + 1) * sizeof(*c));
	size_t k = 0;
	int64_t next = 0;
	if (!c)
		return fidx_fail_nomem(err);
	for (size_t i = 0; i < n; i++) {
		if (m[i].lo > next)
			c[k++] = (struct fidx_delta_map){.lo = next, .hi = m[i].lo - 1};
		next = m[i].hi + 1;
	}
	if (next <= FIDX_DELTA_KEY_MAX)
		c[k++] = (struct fidx_delta_map){.lo = next, .hi = FIDX_DELTA_KEY_MAX};
	*out = c;
	*nout = k;
	return 0;
}

/*
 * Adds the pairs of scan target, without the rows scan other holds as one
 * with it when other is in its chain (the pairs stop above other) or it is
 * in other's (its ids that other's runs lend on are left out).
 */
static int target_pairs(struct pairs *p, const struct link *l, size_t nl, int64_t target,
			int64_t other, struct fidx_error *err)
{
	static const struct fidx_delta_map whole = {.lo = 0, .hi = FIDX_DELTA_KEY_MAX};
	struct fidx_delta_map *lent = NULL, *rest = NULL;
	size_t nlent = 0, nrest = 0;
	if (!other)
		return chain_pairs(p, l, nl, target, &whole, 1, 0, err);
	if (other == target)
		return 0;
	struct fidx_delta_map *dummy;
	size_t ndummy;
	int in = map_between(l, nl, other, target, &dummy, &ndummy, err);
	free(dummy);
	if (in < 0)
		return -1;
	if (in)
		return chain_pairs(p, l, nl, target, &whole, 1, other, err);
	if ((in = map_between(l, nl, target, other, &lent, &nlent, err)) <= 0)
		return in < 0 ? -1 : chain_pairs(p, l, nl, target, &whole, 1, 0, err);
	int rc = complement(lent, nlent, &rest, &nrest, err);
	free(lent);
	if (rc == 0)
		rc = chain_pairs(p, l, nl, target, rest, nrest, 0, err);
	free(rest);
	return rc;
}

/*
 * Makes *hosts the hosts of the owners of p, as an array literal (malloc'ed),
 * or NULL when one has no row in fidx.scan (damage: no filter by host).
 * Returns 0, or -1 with err set.
 */
static int owners_hosts(struct pg_store *st, const struct pairs *p, char **hosts,
			struct fidx_error *err)
{
	struct pg_params q = {0};
	*hosts = NULL;
	char *owners = malloc(p->owners.len + 3);
	if (!owners)
		return fidx_fail_nomem(err);
	snprintf(owners, p->owners.len + 3, "{%s}", p->owners.p);
	pg_param_text(&q, owners);
	PGresult *res = pg_exec(st, "SELECT pg_catalog.array_agg(DISTINCT s.host_id)::text,"
				" bool_and(s.host_id IS NOT NULL) FROM pg_catalog.unnest($1::bigint[])"
				" o(id) LEFT JOIN fidx.scan s ON s.id = o.id", &q, "read", err);
	free(owners);
	if (!res)
		return -1;
	int rc = 0;
	/* The server's text of a bigint[]: nothing but digits, signs, commas and braces. */
	const char *v = PQntuples(res) == 1 && !PQgetisnull(res, 0, 0) &&
			PQgetvalue(res, 0, 1)[0] == 1 ? PQgetvalue(res, 0, 0) : "";
	if (*v && v[strspn(v, "{}0123456789,-")] == '\0' && !(*hosts = strdup(v)))
		rc = fidx_fail_nomem(err);
	PQclear(res);
	return rc;
}

/*
 * Makes *rel (malloc'ed) the derived table of the rows of the pairs p (at
 * least one interval), and frees p.  The owners' rows are asked for by
 * constants the planner can use: their scans (an index's lookup, shipped to
 * a shard by postgres_fdw: a join with the pairs alone was shipped as no
 * condition, every row of every shard read through the coordinator) and,
 * when hosts (an array literal) is given, their hosts (partition pruning:
 * the shards of other hosts are not asked).  The pairs are a lateral
 * function of each row read, so the rows are read once (the planner, which
 * cannot tell how many rows a shard returns, read them once a pair).
 * Returns 0, or -1 with err set.
 */
static int relation_sql(struct pairs *p, const char *hosts, char **rel, struct fidx_error *err)
{
	struct str s = {0};
	/* The columns of fidx.file but those the scan gives: scan_id, digests_from, origin_id. */
	add(&s, " (SELECT f.id, p.t AS scan_id");
	for (size_t i = 2; i < FIDX_SEAL_FILE_FIELDS; i++) {
		const char *name = fidx_seal_file_columns[i].name;
		if (strcmp(name, "digests_from") == 0)
			add(&s, ", CASE WHEN ('{%s}'::bigint[])[k.b] <> 0 AND f.digests_from IS NULL"
			    " AND coalesce(f.md5, f.sha1, f.sha256, f.sha512, f.xxh128) IS NOT NULL"
			    " THEN ('{%s}'::bigint[])[k.b] ELSE f.digests_from END AS digests_from",
			    p->fill.p, p->fill.p);
		else
			add(&s, ", f.%s", name);
	}
	add(&s, ", f.host_id, k.k - (p.n << 40) + ('{%s}'::bigint[])[k.b] AS origin_id,"
	    " p.o AS owner FROM fidx.file f CROSS JOIN LATERAL (SELECT p.o, p.t, p.n FROM"
	    " ROWS FROM (pg_catalog.unnest('{%s}'::bigint[]), pg_catalog.unnest('{%s}'::bigint[]))"
	    " WITH ORDINALITY p(o, t, n) WHERE p.o = f.scan_id) p"
	    " CROSS JOIN LATERAL (SELECT (p.n << 40) | coalesce(f.origin_id, f.id) AS k) k0"
	    " CROSS JOIN LATERAL (SELECT k0.k, pg_catalog.width_bucket(k0.k, '{%s}'::bigint[])"
	    " AS b) k WHERE f.scan_id = ANY('{%s}'::bigint[])",
	    p->off.p, p->owners.p, p->targets.p, p->lo.p, p->owners.p);
	if (hosts)
		add(&s, " AND f.host_id = ANY('%s'::bigint[])", hosts);
	add(&s, " AND k.b > 0 AND k.k <= ('{%s}'::bigint[])[k.b]) f", p->hi.p);
	pairs_free(p);
	if (s.nomem) {
		free(s.p);
		return fidx_fail_nomem(err);
	}
	*rel = s.p;
	return 0;
}

/* relation_sql() with the hosts of p's owners asked of the server; frees p. */
static int relation_of(struct pg_store *st, struct pairs *p, char **rel, struct fidx_error *err)
{
	char *hosts;
	if (owners_hosts(st, p, &hosts, err) < 0) {
		pairs_free(p);
		return -1;
	}
	int rc = relation_sql(p, hosts, rel, err);
	free(hosts);
	return rc;
}

/* Orders candidates by owner, then key. */
static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	return (x->key > y->key) - (x->key < y->key);
}

/*
 * Puts in owners (room for nl + 1) scan and the bases down its chain (links
 * l), stopping before stop (0: down to the bottom, included).  Returns how
 * many it put.
 */
static size_t chain_owners(const struct link *l, size_t nl, int64_t scan, int64_t stop,
			   int64_t *owners)
{
	size_t no = 0;
	const struct link *k = NULL;
	for (int64_t o = scan; o != stop; o = k->base) {
		owners[no++] = o;
		if (no > nl || !(k = link_of(l, nl, o)))
			break;
	}
	return no;
}

/*
 * The rows sql returns as (owner, key[, path]) for q's parameters: every
 * row, or with lits those whose path holds every literal, as candidates
 * into *out (malloc'ed, sorted, *nout).  Returns 0, or -1 with err set.
 */
static int cands_of(struct pg_store *st, const char *sql, const struct pg_params *q,
		    const struct pg_literals *lits, struct cand **out, size_t *nout,
		    struct fidx_error *err)
{
	PGresult *res = pg_exec(st, sql, q, "read", err);
	if (!res)
		return -1;
	size_t rows = (size_t)PQntuples(res), n = 0;
	struct cand *c = malloc((rows + 1) * sizeof(*c));
	if (!c) {
		PQclear(res);
		return fidx_fail_nomem(err);
	}
	for (size_t r = 0; r < rows; r++)
		if (!lits || pg_literals_held(lits, PQgetvalue(res, (int)r, 2),
					      (size_t)PQgetlength(res, (int)r, 2)))
			c[n++] = (struct cand){.owner = pg_int(res, (int)r, 0),
					       .key = pg_int(res, (int)r, 1)};
	PQclear(res);
	qsort(c, n, sizeof(*c), cmp_cand);
	*out = c;
	*nout = n;
	return 0;
}

/*
 * The rows of the owners of the n scans' chains (links l) whose column
 * digest is one of the array literal digests, as candidates into *out
 * (malloc'ed, sorted, *nout).  Returns 0, or -1 with err set.
 */
static int digest_cands(struct pg_store *st, const int64_t *scans, size_t n,
			const struct link *l, size_t nl, const char *digest, const char *digests,
			struct cand **out, size_t *nout, struct fidx_error *err)
{
	int64_t *owners = malloc((n + 1) * (nl + 1) * sizeof(*owners));
	size_t no = 0;
	if (!owners)
		return fidx_fail_nomem(err);
	for (size_t i = 0; i < n; i++)
		no += chain_owners(l, nl, scans[i], 0, owners + no);
	char *ids = pg_id_array(owners, no);
	free(owners);
	if (!ids)
		return fidx_fail_nomem(err);
	char sql[256];
	snprintf(sql, sizeof(sql), "SELECT DISTINCT f.scan_id, coalesce(f.origin_id, f.id) FROM"
		 " fidx.file f WHERE f.scan_id = ANY($1::bigint[]) AND f.%s = ANY($2::bytea[])",
		 digest);
	struct pg_params q = {0};
	pg_param_text(&q, ids);
	pg_param_text(&q, digests);
	int rc = cands_of(st, sql, &q, NULL, out, nout, err);
	free(ids);
	return rc;
}

int pg_relation(struct pg_store *st, const int64_t *scans, size_t n, int64_t changed_from,
		const char *digest, const char *digests, char **rel, struct fidx_error *err)
{
	struct link *l;
	struct pairs p = {0};
	struct cand *cand = NULL;
	int64_t two[2];
	*rel = NULL;
	if (n != 1)
		changed_from = 0;
	if (changed_from) {
		two[0] = scans[0];
		two[1] = changed_from;
	}
	ssize_t nl = load_links(st, changed_from ? two : scans, changed_from ? 2 : n, &l, err);
	if (nl < 0)
		return -1;
	if (nl == 0) {
		if (!(*rel = strdup(" fidx.file f")))
			return fidx_fail_nomem(err);
		return 0;
	}
	int rc = 0;
	if (digest && !changed_from) {
		rc = digest_cands(st, scans, n, l, (size_t)nl, digest, digests, &cand, &p.ncand, err);
		p.cand = cand;
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = target_pairs(&p, l, (size_t)nl, scans[i], changed_from, err);
	for (ssize_t i = 0; i < nl; i++)
		free(l[i].runs);
	free(l);
	free(cand);
	p.cand = NULL;
	if (rc == 0 && pairs_nomem(&p))
		rc = fidx_fail_nomem(err);
	if (rc < 0) {
		pairs_free(&p);
		return in_database(st, err);
	}
	if (!p.lo.len) {
		/* Nothing to read (a scan against itself, or no row with a digest asked for). */
		pairs_free(&p);
		if (!(*rel = strdup(NO_ROWS)))
			return fidx_fail_nomem(err);
		return 1;
	}
	return relation_of(st, &p, rel, err) < 0 ? -1 : 1;
}

int pg_is_delta(struct pg_store *st, int64_t scan_id, struct fidx_error *err)
{
	if (st->base.version < 8 || !st->has_tables)
		return 0;
	struct pg_params p = {0};
	pg_param_int(&p, scan_id);
	PGresult *res = pg_exec(st, "SELECT 1 FROM fidx.scan_delta WHERE scan_id = $1", &p, "read",
				err);
	if (!res)
		return -1;
	int rc = PQntuples(res) > 0;
	PQclear(res);
	return rc;
}

/* The most literals the server is asked to look for in a path (the others: on the client). */
#define SERVER_LITERALS 8

/* Sets *at and *n to the longest run of the len bytes at l with no ASCII letter. */
static void letterless_run(const char *l, size_t len, const char **at, size_t *n)
{
	*at = l;
	*n = 0;
	for (size_t i = 0, start = 0; i <= len; i++) {
		if (i == len || (l[i] >= 'a' && l[i] <= 'z') || (l[i] >= 'A' && l[i] <= 'Z')) {
			if (i - start > *n) {
				*at = l + start;
				*n = i - start;
			}
			start = i + 1;
		}
	}
}

/*
 * The rows of the owners from scan down its chain, above base, whose path
 * holds every literal of lits, as candidates into *out (malloc'ed, sorted,
 * *nout).  The server drops first the rows without the longest run of
 * bytes of each literal that holds no ASCII letter (the same bytes in any
 * case; up to SERVER_LITERALS of them, by position() on the path: letters
 * folded in SQL, translate() of encode(), made the server 3x slower), so
 * that few rows come back (through a coordinator, ~17,000 paths a host at
 * depth 8).  Returns 0, or -1 with err set.
 */
static int path_cands(struct pg_store *st, int64_t scan, int64_t base, const struct link *l,
		      size_t nl, const struct pg_literals *lits, struct cand **out,
		      size_t *nout, struct fidx_error *err)
{
	int64_t *owners = malloc((nl + 1) * sizeof(*owners));
	if (!owners)
		return fidx_fail_nomem(err);
	char *ids = pg_id_array(owners, chain_owners(l, nl, scan, base, owners));
	free(owners);
	struct str sql = {0};
	struct pg_params q = {0};
	add(&sql, "SELECT f.scan_id, coalesce(f.origin_id, f.id), f.path FROM fidx.file f"
	    " WHERE f.scan_id = ANY($1::bigint[])");
	pg_param_text(&q, ids);
	const char *lit = lits->s, *run;
	size_t n;
	for (size_t i = 0; i < lits->n && q.n <= SERVER_LITERALS; lit += lits->len[i++]) {
		letterless_run(lit, lits->len[i], &run, &n);
		if (n >= 2) {
			pg_param_bytes(&q, run, n);
			add(&sql, " AND pg_catalog.position(f.path, $%d) > 0", q.n);
		}
	}
	int rc = !ids || sql.nomem ? fidx_fail_nomem(err)
				   : cands_of(st, sql.p, &q, lits, out, nout, err);
	free(sql.p);
	free(ids);
	return rc;
}

int pg_lent_open(struct pg_store *st, int64_t scan, const struct pg_literals *lits,
		 struct pg_lent *out, struct fidx_error *err)
{
	static const struct fidx_delta_map whole = {.lo = 0, .hi = FIDX_DELTA_KEY_MAX};
	struct link *l;
	struct pairs p = {0};
	*out = (struct pg_lent){0};
	ssize_t nl = load_links(st, &scan, 1, &l, err);
	if (nl <= 0)
		return (int)nl;
	/* The bottom of the chain: the scan no link names as kept as changes. */
	int64_t base = scan;
	const struct link *k;
	size_t steps = 0;
	while ((k = link_of(l, (size_t)nl, base)) && ++steps <= (size_t)nl)
		base = k->base;
	int rc = k ? fidx_fail(err, EBADMSG, "the changes of scan %" PRId64 " are damaged:"
			       " its chain of bases loops", scan) : 0;
	if (rc == 0 && map_between(l, (size_t)nl, base, scan, &out->map, &out->n, err) < 0)
		rc = -1;
	struct cand *cand = NULL;
	if (rc == 0 && lits) {
		rc = path_cands(st, scan, base, l, (size_t)nl, lits, &cand, &p.ncand, err);
		p.cand = cand;
	}
	if (rc == 0)
		rc = chain_pairs(&p, l, (size_t)nl, scan, &whole, 1, base, err);
	for (ssize_t i = 0; i < nl; i++)
		free(l[i].runs);
	free(l);
	free(cand);
	p.cand = NULL;
	if (rc == 0 && pairs_nomem(&p))
		rc = fidx_fail_nomem(err);
	if (rc == 0 && !p.lo.len) {
		/* None of the scan's other rows is kept. */
		pairs_free(&p);
		out->base = base;
		if ((out->rel = strdup(NO_ROWS)))
			return 1;
		pg_lent_free(out);
		return fidx_fail_nomem(err);
	}
	if (rc == 0)
		return relation_of(st, &p, &out->rel, err) < 0 ? (pg_lent_free(out), -1)
							    : (out->base = base, 1);
	pairs_free(&p);
	pg_lent_free(out);
	return -1;
}

/* Whether key lies in one of the n sorted intervals of m. */
static bool in_map(const struct fidx_delta_map *m, size_t n, int64_t key)
{
	return interval_of(m, n, key) != NULL;
}

/* Orders ids. */
static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int pg_lent_filter(struct pg_store *st, const struct pg_lent *l, const int64_t *ids, size_t n,
		   bool *keep, struct fidx_error *err)
{
	struct pg_params p = {0};
	char *list = pg_id_array(ids, n);
	if (!list)
		return fidx_fail_nomem(err);
	pg_param_int(&p, l->base);
	pg_param_text(&p, list);
	PGresult *res = pg_exec(st, "SELECT id, coalesce(origin_id, id) FROM fidx.file"
				" WHERE scan_id = $1 AND id = ANY($2::bigint[])", &p, "read", err);
	free(list);
	if (!res)
		return -1;
	int rows = PQntuples(res);
	int64_t *lent = malloc(((size_t)rows + 1) * sizeof(*lent));
	if (!lent) {
		PQclear(res);
		return fidx_fail_nomem(err);
	}
	size_t nlent = 0;
	for (int r = 0; r < rows; r++)
		if (in_map(l->map, l->n, pg_int(res, r, 1)))
			lent[nlent++] = pg_int(res, r, 0);
	PQclear(res);
	qsort(lent, nlent, sizeof(*lent), cmp_id);
	for (size_t i = 0; i < n; i++)
		keep[i] = bsearch(&ids[i], lent, nlent, sizeof(*lent), cmp_id) != NULL;
	free(lent);
	return rows;
}

void pg_lent_free(struct pg_lent *l)
{
	free(l->map);
	free(l->rel);
	*l = (struct pg_lent){0};
}
