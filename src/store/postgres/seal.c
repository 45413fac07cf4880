/*
 * seal.c - seals on PostgreSQL: the row hashes kept, seals written and
 * verified, in the canonical form of core/seal.h.
 *
 * The fields of a line are the columns as stored (a bigint is an INT
 * field, a bytea a BYTES one): the file table's columns are the seal's, by
 * name and order, so a row read back gives its line without conversion.
 *
 * Row hashes are kept per batch, one row of fidx.seal_batch for each scan a
 * batch wrote: the ids (8 bytes each, network order) and their hashes (8
 * bytes each).  A row deleted from fidx.file leaves its hash there, so
 * `fidx verify` names it; a row added by hand has none.
 */
#include "postgres.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seal.h"

const char *pg_seal_columns(int version, char *buf, size_t size)
{
	/* A pushed row's ids are those it had where it was made. */
	size_t len = (size_t)snprintf(buf, size, "coalesce(f.origin_id, f.id),"
				      " coalesce(s.origin_id, f.scan_id)");
	/* The columns of a later version than the table's are NULL (6: the image
	 * columns, 7: attributes); every other is there from version 5 on. */
	size_t v6 = (size_t)fidx_seal_file_field(FIDX_COL_STATE);
	size_t v7 = (size_t)fidx_seal_file_field(FIDX_COL_ATTRIBUTES);
	for (size_t i = 2; i < FIDX_SEAL_FILE_FIELDS && len < size; i++) {
		bool absent = (i >= v6 && i < v7 && version < 6) || (i >= v7 && version < 7);
		len += (size_t)snprintf(buf + len, size - len, absent ? ", NULL" : ", f.%s",
					fidx_seal_file_columns[i].name);
	}
	return buf;
}

/* Sets the n fields f from columns col.. of row r of res. */
static void fields_of(const PGresult *res, int r, int col, struct fidx_seal_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int c = col + (int)i;
		if (PQgetisnull(res, r, c))
			f[i] = (struct fidx_seal_field){.kind = FIDX_SEAL_NULL};
		else if (PQftype(res, c) == PG_INT8)
			f[i] = (struct fidx_seal_field){.kind = FIDX_SEAL_INT,
							.i = pg_int(res, r, c)};
		else
			f[i] = (struct fidx_seal_field){.kind = FIDX_SEAL_BYTES,
							.p = PQgetvalue(res, r, c),
							.n = (size_t)PQgetlength(res, r, c)};
	}
}

int pg_seal_row(struct pg_store *st, struct pg_scan *c, int64_t id, struct fidx_error *err)
{
	if (c->nhashes == c->caphashes) {
		size_t cap = c->caphashes ? 2 * c->caphashes : 1024;
		uint8_t *ids = realloc(c->ids, cap * 8);
		if (ids)
			c->ids = ids;
		uint8_t *hashes = ids ? realloc(c->hashes, cap * FIDX_ROW_HASH_LEN) : NULL;
		if (!hashes)
			return fidx_fail_nomem(err);
		c->hashes = hashes;
		c->caphashes = cap;
	}
	pg_put64(c->ids + 8 * c->nhashes, id);
	if (fidx_seal_row_hash(st->lines, c->hashes + FIDX_ROW_HASH_LEN * c->nhashes, err) < 0)
		return -1;
	c->nhashes++;
	return c->sum ? fidx_seal_sum_line(c->sum, st->lines, err) : 0;
}

/* Writes the row hashes kept for scan c.  Returns 0, or -1 with err set. */
static int put_scan(struct pg_store *st, struct pg_scan *c, struct fidx_error *err)
{
	if (!c->nhashes)
		return 0;
	struct pg_params p = {0};
	pg_param_int(&p, c->id);
	pg_param_bytes(&p, c->ids, 8 * c->nhashes);
	pg_param_bytes(&p, c->hashes, FIDX_ROW_HASH_LEN * c->nhashes);
	pg_param_int(&p, c->host_id);
	if (pg_run(st, "INSERT INTO fidx.seal_batch (scan_id, ids, hashes, host_id)"
		   " VALUES ($1, $2, $3, $4)", &p, "write", err) < 0)
		return -1;
	c->nhashes = 0;
	return 0;
}

int pg_seal_put(struct pg_store *st, struct fidx_error *err)
{
	for (size_t i = 0; i < st->nscans; i++)
		if (put_scan(st, &st->scans[i], err) < 0)
			return -1;
	return 0;
}

/*
 * Called for each row of a scan read back: f its seal fields, id its id
 * here, path its path (path_len bytes, not NUL-terminated), lent whether it
 * is another scan's row that a scan kept as changes holds (delta.c).
 * Returns 0, or -1 with err set (the read stops).
 */
typedef int row_fn(void *arg, struct fidx_seal_field *f, int64_t id, const char *path,
		   size_t path_len, bool lent, struct fidx_error *err);

/* A read of a scan's rows (each_row()). */
struct each {
	struct pg_store *st;
	int64_t scan_id;
	row_fn *fn;
	void *arg;
};

/* pg_copy_out()'s tuple: the seal fields and the id, checked, to each_row()'s fn. */
static int each_tuple(void *arg, int n, const char *const *val, const int32_t *len,
		      struct fidx_error *err)
{
	struct each *e = arg;
	struct fidx_seal_field f[FIDX_SEAL_FILE_FIELDS];
	(void)n;
	for (int c = 0; c <= FIDX_SEAL_FILE_FIELDS; c++) {
		bool bytes = c >= 2 && c < FIDX_SEAL_FILE_FIELDS && fidx_seal_file_columns[c].bytes;
		if (len[c] < 0 && c < FIDX_SEAL_FILE_FIELDS)
			f[c] = (struct fidx_seal_field){.kind = FIDX_SEAL_NULL};
		else if (len[c] < 0 || (!bytes && len[c] != 8))
			return fidx_fail(err, EPROTO, "cannot read database '%s'%s: a row of the"
					 " COPY stream is not what was asked for",
					 fidx_quote(e->st->name), e->st->origin);
		else if (bytes)
			f[c] = (struct fidx_seal_field){.kind = FIDX_SEAL_BYTES, .p = val[c],
							.n = (size_t)len[c]};
		else if (c < FIDX_SEAL_FILE_FIELDS)
			f[c] = (struct fidx_seal_field){.kind = FIDX_SEAL_INT, .i = pg_get64(val[c])};
	}
	if (len[FIDX_SEAL_FILE_FIELDS + 1] != 8)
		return fidx_fail(err, EPROTO, "cannot read database '%s'%s: a row of the COPY stream"
				 " is not what was asked for", fidx_quote(e->st->name), e->st->origin);
	return e->fn(e->arg, f, pg_get64(val[FIDX_SEAL_FILE_FIELDS]), len[2] < 0 ? "" : val[2],
		     len[2] < 0 ? 0 : (size_t)len[2],
		     pg_get64(val[FIDX_SEAL_FILE_FIELDS + 1]) != e->scan_id, err);
}

/*
 * Reads scan_id's rows back, in the order of their ids (that of the ids
 * sealed: a pushed scan's were written in the order of its ids where it was
 * made), calling fn with each one's seal fields: one COPY ... TO STDOUT in
 * binary, which streams the rows without a result to build per value.
 * Returns 0, or -1 with err set.
 */
static int each_row(struct pg_store *st, int64_t scan_id, row_fn *fn, void *arg,
		    struct fidx_error *err)
{
	char cols[1024], *rel, *sql;
	/* COPY takes no parameters: the scan id is a number fidx formats, and so are the maps
	 * of a scan kept as changes (its rows in the order of their ids in it). */
	int derived = pg_relation(st, &scan_id, 1, 0, NULL, NULL, &rel, err);
	if (derived < 0)
		return -1;
	int n = asprintf(&sql, "COPY (SELECT %s, f.id, %s FROM%s JOIN fidx.scan s"
			 " ON s.id = f.scan_id WHERE f.scan_id = %" PRId64 " ORDER BY f.scan_id, %s)"
			 " TO STDOUT (FORMAT binary)",
			 pg_seal_columns(st->base.version, cols, sizeof(cols)),
			 derived ? "f.owner" : "f.scan_id", rel, scan_id,
			 derived ? "f.origin_id" : "f.id");
	free(rel);
	if (n < 0)
		return fidx_fail_nomem(err);
	struct each e = {st, scan_id, fn, arg};
	int rc = pg_copy_out(st, sql, FIDX_SEAL_FILE_FIELDS + 2, each_tuple, &e, err);
	free(sql);
	return rc;
}

/*
 * Reads the scan row of scan_id: its seal fields, then seal and status.
 * Returns the result (one row), or NULL with err set (ENOENT: none).
 */
static PGresult *scan_row(struct pg_store *st, int64_t scan_id, struct fidx_error *err)
{
	char sql[1024];
	/* A pushed scan's id is the one it had where it was made. */
	size_t len = (size_t)snprintf(sql, sizeof(sql), "SELECT coalesce(origin_id, id)");
	for (size_t i = 1; i < FIDX_SEAL_SCAN_FIELDS; i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s",
					fidx_seal_scan_columns[i].name);
	snprintf(sql + len, sizeof(sql) - len, ", seal, status FROM fidx.scan WHERE id = $1");
	struct pg_params p = {0};
	pg_param_int(&p, scan_id);
	PGresult *res = pg_exec(st, sql, &p, "read", err);
	if (res && PQntuples(res) != 1) {
		PQclear(res);
		fidx_fail(err, ENOENT, "database '%s'%s has no scan %" PRId64, fidx_quote(st->name),
			  st->origin, scan_id);
		return NULL;
	}
	return res;
}

/* A scan read back into its seal (read_back()). */
struct reading {
	struct pg_store *st;
	struct pg_scan *c;
};

/* read_back()'s row: its line into the running seal of its scan, its row hash kept. */
static int read_back_row(void *arg, struct fidx_seal_field *f, int64_t id, const char *path,
			 size_t path_len, bool lent, struct fidx_error *err)
{
	(void)lent;
	struct reading *rd = arg;
	(void)path;
	(void)path_len;
	if (fidx_seal_line(rd->st->lines, fidx_seal_file_columns, f, FIDX_SEAL_FILE_FIELDS,
			   FIDX_SEAL_FILE_ALWAYS, err) < 0)
		return -1;
	return pg_seal_row(rd->st, rd->c, id, err);
}

/*
 * Reads the rows of scan c back in id order into a new running seal, and
 * their row hashes anew (one seal_batch row).  Returns 0, or -1 with err set.
 */
static int read_back(struct pg_store *st, struct pg_scan *c, struct fidx_error *err)
{
	struct pg_params p = {0};
	pg_param_int(&p, c->id);
	if (pg_run(st, "DELETE FROM fidx.seal_batch WHERE scan_id = $1", &p, "write", err) < 0)
		return -1;
	fidx_seal_sum_free(c->sum);
	c->nhashes = 0;
	struct reading rd = {st, c};
	if (!(c->sum = fidx_seal_sum_new(err)) || each_row(st, c->id, read_back_row, &rd, err) < 0)
		return -1;
	return put_scan(st, c, err);
}

int pg_seal_rehash(struct pg_store *st, int64_t scan_id, int64_t host_id, struct fidx_error *err)
{
	struct pg_scan c = {.id = scan_id, .host_id = host_id};
	if (!st->lines && !(st->lines = fidx_seal_lines_new(NULL, NULL, err)))
		return -1;
	int rc = read_back(st, &c, err);
	fidx_seal_sum_free(c.sum);
	free(c.ids);
	free(c.hashes);
	return rc;
}

int pg_seal_scan(struct pg_store *st, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN],
		 struct fidx_error *err)
{
	struct fidx_seal_field f[FIDX_SEAL_SCAN_FIELDS];
	struct pg_scan *c = NULL, lone = {.id = scan_id};
	for (size_t i = 0; i < st->nscans; i++)
		if (st->scans[i].id == scan_id)
			c = &st->scans[i];
	if (!st->lines && !(st->lines = fidx_seal_lines_new(NULL, NULL, err)))
		return -1;
	PGresult *res = scan_row(st, scan_id, err);
	if (!res)
		return -1;
	int ret = -1;
	const char *status = PQgetvalue(res, 0, FIDX_SEAL_SCAN_FIELDS + 1);
	if (PQgetisnull(res, 0, FIDX_SEAL_SCAN_FIELDS + 1) || strcmp(status, "complete") != 0 ||
	    !PQgetisnull(res, 0, FIDX_SEAL_SCAN_FIELDS)) {
		fidx_fail(err, EINVAL, "cannot seal scan %" PRId64 " of '%s': it is %s", scan_id,
			  fidx_quote(st->name), PQgetisnull(res, 0, FIDX_SEAL_SCAN_FIELDS)
			  ? "not complete" : "sealed already");
		goto out;
	}
	if (!c)
		c = &lone;
	if (!c->sum && read_back(st, c, err) < 0)
		goto out;
	fields_of(res, 0, 0, f, FIDX_SEAL_SCAN_FIELDS);
	if (fidx_seal_line(st->lines, fidx_seal_scan_columns, f, FIDX_SEAL_SCAN_FIELDS,
			   FIDX_SEAL_SCAN_ALWAYS, err) < 0 ||
	    fidx_seal_sum_line(c->sum, st->lines, err) < 0)
		goto out;
	int rc = fidx_seal_sum_end(c->sum, seal, err);
	c->sum = NULL;
	if (rc < 0)
		goto out;
	struct pg_params p = {0};
	pg_param_bytes(&p, seal, FIDX_SEAL_LEN);
	pg_param_int(&p, scan_id);
	ret = pg_run(st, "UPDATE fidx.scan SET seal = $1 WHERE id = $2", &p, "write", err);
out:
	PQclear(res);
	if (c == &lone) {
		fidx_seal_sum_free(lone.sum);
		free(lone.ids);
		free(lone.hashes);
	}
	return ret;
}

/* ---------------------------------------------------------------- verify --- */

/* A sealed row: its id and row hash. */
struct sealed {
	int64_t id;
	uint8_t hash[FIDX_ROW_HASH_LEN];
	bool seen;
};

/* Orders sealed rows by id. */
static int by_id(const void *a, const void *b)
{
	int64_t x = ((const struct sealed *)a)->id, y = ((const struct sealed *)b)->id;
	return (x > y) - (x < y);
}

/* Reads the row hashes kept for scan_id into *out (sorted by id).  Returns how many, or -1. */
static ssize_t load_sealed(struct pg_store *st, int64_t scan_id, struct sealed **out,
			   struct fidx_error *err)
{
	struct pg_params p = {0};
	pg_param_int(&p, scan_id);
	*out = NULL;
	PGresult *res = pg_exec(st, "SELECT ids, hashes FROM fidx.seal_batch WHERE scan_id = $1",
				&p, "read", err);
	if (!res)
		return -1;
	size_t n = 0;
	for (int r = 0; r < PQntuples(res); r++)
		n += (size_t)PQgetlength(res, r, 0) / 8;
	struct sealed *s = calloc(n ? n : 1, sizeof(*s));
	if (!s) {
		PQclear(res);
		return fidx_fail_nomem(err);
	}
	n = 0;
	for (int r = 0; r < PQntuples(res); r++) {
		size_t k = (size_t)PQgetlength(res, r, 0) / 8;
		if ((size_t)PQgetlength(res, r, 1) != k * FIDX_ROW_HASH_LEN)
			k = (size_t)PQgetlength(res, r, 1) / FIDX_ROW_HASH_LEN < k
			    ? (size_t)PQgetlength(res, r, 1) / FIDX_ROW_HASH_LEN : k;
		const char *ids = PQgetvalue(res, r, 0), *hashes = PQgetvalue(res, r, 1);
		for (size_t i = 0; i < k; i++, n++) {
			s[n].id = pg_get64(ids + 8 * i);
			memcpy(s[n].hash, hashes + FIDX_ROW_HASH_LEN * i, FIDX_ROW_HASH_LEN);
		}
	}
	PQclear(res);
	qsort(s, n, sizeof(*s), by_id);
	*out = s;
	return (ssize_t)n;
}

/* Reports a field of the scan row its rows contradict. */
static void report_field(fidx_seal_found_fn *found, void *arg, struct fidx_seal_result *r,
			 const char *field, const char *says, const char *rows)
{
	r->fields++;
	found(arg, &(struct fidx_seal_finding){.change = FIDX_SEAL_FIELD, .field = field,
					       .says = says, .rows = rows});
}

/* Names the fields of the scan row that its rows contradict.  Returns 0, or -1 with err set. */
static int check_fields(struct pg_store *st, int64_t scan_id, fidx_seal_found_fn *found,
			void *arg, struct fidx_seal_result *r, struct fidx_error *err)
{
	static const char *const names[] = {"entries", "files", "dirs", "bytes", "errors"};
	struct pg_params p = {0};
	char *rel, *sql;
	pg_param_int(&p, scan_id);
	if (pg_relation(st, &scan_id, 1, 0, NULL, NULL, &rel, err) < 0)
		return -1;
	int n = asprintf(&sql, "SELECT s.entries, s.files, s.dirs, s.bytes, s.errors,"
			 " c.n, c.f, c.d, c.b, c.e, c.r, s.status, s.root FROM fidx.scan s,"
			 " (SELECT count(*) AS n, count(*) FILTER (WHERE f.type = 'f'::bytea) AS f,"
			 "  count(*) FILTER (WHERE f.type = 'd'::bytea) AS d,"
			 "  coalesce(sum(f.size) FILTER (WHERE f.type = 'f'::bytea), 0)::bigint AS b,"
			 "  count(f.error) AS e, count(*) FILTER (WHERE f.path ="
			 "   (SELECT root FROM fidx.scan WHERE id = $1)) AS r"
			 "  FROM%s WHERE f.scan_id = $1) c WHERE s.id = $1", rel);
	free(rel);
	if (n < 0)
		return fidx_fail_nomem(err);
	PGresult *res = pg_exec(st, sql, &p, "read", err);
	free(sql);
	if (!res)
		return -1;
	char says[32], rows[32];
	for (int i = 0; i < 5 && PQntuples(res) == 1; i++) {
		int64_t counted = pg_int(res, 0, 5 + i);
		if (!PQgetisnull(res, 0, i) && pg_int(res, 0, i) == counted)
			continue;
		if (PQgetisnull(res, 0, i))
			snprintf(says, sizeof(says), "NULL");
		else
			snprintf(says, sizeof(says), "%" PRId64, pg_int(res, 0, i));
		snprintf(rows, sizeof(rows), "%" PRId64, counted);
		report_field(found, arg, r, names[i], says, rows);
	}
	if (PQntuples(res) == 1) {
		const char *status = PQgetisnull(res, 0, 11) ? NULL : PQgetvalue(res, 0, 11);
		if (!status || strcmp(status, "complete") != 0)
			report_field(found, arg, r, "status", status ? status : "NULL", "complete");
		if (pg_int(res, 0, 10) == 0)
			report_field(found, arg, r, "root", PQgetisnull(res, 0, 12) ? "NULL"
				     : PQgetvalue(res, 0, 12), "no row has this path");
	}
	PQclear(res);
	return 0;
}

/* A row of a scan down a chain that its own row hashes do not vouch for. */
struct unsealed {
	int64_t id;
	bool altered;  /* its hash kept differs (else none is kept: added) */
};

/* What pass 2 of a verify holds while it reads the rows. */
struct check {
	struct pg_store *st;
	struct fidx_seal_sum *sum;    /* pass 1: the seal being recomputed */
	struct sealed *kept;          /* the row hashes kept, by id */
	size_t nkept;
	struct unsealed *bad;         /* the rows of the scans down its chain that their row
					 hashes do not vouch for, by id (lent rows to name) */
	size_t nbad, cap;
	fidx_seal_found_fn *found;
	void *arg;
	struct fidx_seal_result *r;
};

/* Orders unsealed rows by id. */
static int by_bad_id(const void *a, const void *b)
{
	int64_t x = ((const struct unsealed *)a)->id, y = ((const struct unsealed *)b)->id;
	return (x > y) - (x < y);
}

/*
 * Hashes a row's line: *s the hash kept for its id (NULL: none, else marked
 * seen), *same whether they agree (a second row of an id does not).  Returns
 * 0, or -1 with err set.
 */
static int row_sealed(struct check *k, struct fidx_seal_field *f, int64_t id,
		      struct sealed **s, bool *same, struct fidx_error *err)
{
	uint8_t hash[FIDX_ROW_HASH_LEN];
	if (fidx_seal_line(k->st->lines, fidx_seal_file_columns, f, FIDX_SEAL_FILE_FIELDS,
			   FIDX_SEAL_FILE_ALWAYS, err) < 0 ||
	    fidx_seal_row_hash(k->st->lines, hash, err) < 0)
		return -1;
	struct sealed key = {.id = id};
	*s = bsearch(&key, k->kept, k->nkept, sizeof(*k->kept), by_id);
	*same = *s && !(*s)->seen && memcmp((*s)->hash, hash, sizeof(hash)) == 0;
	if (*s)
		(*s)->seen = true;
	return 0;
}

/*
 * A row of a scan down the chain: kept in k->bad when its line has no hash
 * kept by its scan or another.  Its own lent rows are its base's to judge.
 */
static int owner_row(void *arg, struct fidx_seal_field *f, int64_t id, const char *path,
		     size_t path_len, bool lent, struct fidx_error *err)
{
	struct check *k = arg;
	struct sealed *s;
	bool same;
	(void)path;
	(void)path_len;
	if (lent)
		return 0;
	if (row_sealed(k, f, id, &s, &same, err) < 0)
		return -1;
	if (same)
		return 0;
	if (k->nbad == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 64;
		struct unsealed *b = realloc(k->bad, cap * sizeof(*b));
		if (!b)
			return fidx_fail_nomem(err);
		k->bad = b;
		k->cap = cap;
	}
	k->bad[k->nbad++] = (struct unsealed){.id = id, .altered = s != NULL};
	return 0;
}

/*
 * Pass 2's row: named when its line has no hash kept (added) or another
 * (altered).  A lent row has none kept for this scan: named when the scan
 * whose row it is does not vouch for it (as that scan's verify names it).
 */
static int check_row(void *arg, struct fidx_seal_field *f, int64_t id, const char *path,
		     size_t path_len, bool lent, struct fidx_error *err)
{
	struct check *k = arg;
	struct sealed *s;
	bool same;
	if (row_sealed(k, f, id, &s, &same, err) < 0)
		return -1;
	if (same)
		return 0;
	bool altered = s != NULL;
	if (lent && !s) {
		struct unsealed key = {.id = id};
		struct unsealed *b = bsearch(&key, k->bad, k->nbad, sizeof(*k->bad), by_bad_id);
		if (!b)
			return 0;
		altered = b->altered;
	}
	char *name = strndup(path, path_len);
	if (!name)
		return fidx_fail_nomem(err);
	(altered ? &k->r->altered : &k->r->added)[0]++;
	k->found(k->arg, &(struct fidx_seal_finding){
		.change = altered ? FIDX_SEAL_ALTERED : FIDX_SEAL_ADDED, .file_id = id,
		.path = name});
	free(name);
	return 0;
}

/*
 * The rows of the scans down scan_id's chain (kept as changes) that their own
 * row hashes do not vouch for, into k->bad (sorted).  Returns 0, or -1 with
 * err set.
 */
static int chain_unsealed(struct pg_store *st, int64_t scan_id, struct check *k,
			  struct fidx_error *err)
{
	struct pg_params p = {0};
	pg_param_int(&p, scan_id);
	PGresult *res = pg_exec(st, "WITH RECURSIVE c(id) AS (SELECT base_id FROM fidx.scan_delta"
				" WHERE scan_id = $1 UNION SELECT d.base_id FROM fidx.scan_delta d"
				" JOIN c ON d.scan_id = c.id) SELECT id FROM c", &p, "read", err);
	if (!res)
		return -1;
	int rc = 0;
	for (int r = 0; r < PQntuples(res) && rc == 0; r++) {
		struct check o = {.st = st, .bad = k->bad, .nbad = k->nbad, .cap = k->cap};
		ssize_t n = load_sealed(st, pg_int(res, r, 0), &o.kept, err);
		o.nkept = n < 0 ? 0 : (size_t)n;
		rc = n < 0 ? -1 : each_row(st, pg_int(res, r, 0), owner_row, &o, err);
		free(o.kept);
		k->bad = o.bad;
		k->nbad = o.nbad;
		k->cap = o.cap;
	}
	PQclear(res);
	if (k->nbad)
		qsort(k->bad, k->nbad, sizeof(*k->bad), by_bad_id);
	return rc;
}

/*
 * Pass 2 of a seal that differs: each row whose line has no hash kept
 * (added) or another (altered), each hash kept whose row is gone (removed).
 */
static int check_rows(struct pg_store *st, int64_t scan_id, fidx_seal_found_fn *found,
		      void *arg, struct fidx_seal_result *r, struct fidx_error *err)
{
	struct check k = {.st = st, .found = found, .arg = arg, .r = r};
	ssize_t nkept = load_sealed(st, scan_id, &k.kept, err);
	if (nkept < 0)
		return -1;
	k.nkept = (size_t)nkept;
	int rc = chain_unsealed(st, scan_id, &k, err);
	if (rc == 0)
		rc = each_row(st, scan_id, check_row, &k, err);
	for (size_t i = 0; rc == 0 && i < k.nkept; i++) {
		if (k.kept[i].seen)
			continue;
		r->removed++;
		found(arg, &(struct fidx_seal_finding){.change = FIDX_SEAL_REMOVED,
						       .file_id = k.kept[i].id});
	}
	free(k.kept);
	free(k.bad);
	return rc;
}

/* Pass 1's row: its line into the seal being recomputed. */
static int sum_row(void *arg, struct fidx_seal_field *f, int64_t id, const char *path,
		   size_t path_len, bool lent, struct fidx_error *err)
{
	(void)lent;
	struct check *k = arg;
	(void)id;
	(void)path;
	(void)path_len;
	k->r->rows++;
	return fidx_seal_line(k->st->lines, fidx_seal_file_columns, f, FIDX_SEAL_FILE_FIELDS,
			      FIDX_SEAL_FILE_ALWAYS, err) < 0 ||
	       fidx_seal_sum_line(k->sum, k->st->lines, err) < 0 ? -1 : 0;
}

int pg_verify(struct fidx_store *base, int64_t scan_id, fidx_seal_found_fn *found, void *arg,
	      struct fidx_seal_result *r, struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	struct fidx_seal_field f[FIDX_SEAL_FILE_FIELDS];
	struct fidx_seal_sum *all = NULL;
	int ret = -1, n;

	*r = (struct fidx_seal_result){0};
	if (!st->lines && !(st->lines = fidx_seal_lines_new(NULL, NULL, err)))
		return -1;
	PGresult *scan = scan_row(st, scan_id, err);
	if (!scan || !(all = fidx_seal_sum_new(err)))
		goto out;
	r->sealed = !PQgetisnull(scan, 0, FIDX_SEAL_SCAN_FIELDS);
	r->recorded_len = (size_t)PQgetlength(scan, 0, FIDX_SEAL_SCAN_FIELDS);
	if (r->recorded_len > sizeof(r->recorded))
		r->recorded_len = sizeof(r->recorded);
	memcpy(r->recorded, PQgetvalue(scan, 0, FIDX_SEAL_SCAN_FIELDS), r->recorded_len);
	snprintf(r->status, sizeof(r->status), "%s", PQgetvalue(scan, 0, FIDX_SEAL_SCAN_FIELDS + 1));

	/* Pass 1: the seal, the scan row's line last. */
	struct check k = {.st = st, .sum = all, .r = r};
	if (each_row(st, scan_id, sum_row, &k, err) < 0)
		goto out;
	fields_of(scan, 0, 0, f, FIDX_SEAL_SCAN_FIELDS);
	if (fidx_seal_line(st->lines, fidx_seal_scan_columns, f, FIDX_SEAL_SCAN_FIELDS,
			   FIDX_SEAL_SCAN_ALWAYS, err) < 0 ||
	    fidx_seal_sum_line(all, st->lines, err) < 0)
		goto out;
	n = fidx_seal_sum_end(all, r->computed, err);
	all = NULL;
	if (n < 0)
		goto out;
	ret = 0;
	if (!r->sealed || (r->recorded_len == FIDX_SEAL_LEN &&
			   memcmp(r->recorded, r->computed, FIDX_SEAL_LEN) == 0))
		goto out;
	/* Pass 2: the seal differs; name what changed. */
	if (check_rows(st, scan_id, found, arg, r, err) < 0 ||
	    check_fields(st, scan_id, found, arg, r, err) < 0)
		ret = -1;
out:
	PQclear(scan);
	fidx_seal_sum_free(all);
	return ret;
}
