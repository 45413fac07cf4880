/*
 * write.c - scans written to PostgreSQL: begun, resumed and ended, their
 * rows streamed with COPY.
 *
 * A batch is one transaction holding one COPY fidx.file FROM STDIN (FORMAT
 * binary): each row is encoded into a buffer as it is added (its seal fields
 * are the values encoded, so what is sealed is what is sent) and the buffer
 * goes to the server whenever it holds COPY_CHUNK bytes, so that the server
 * stores while the pipeline walks.  The batch ends with the row hashes of
 * its rows (fidx.seal_batch) and the scans' run times, then COMMIT.
 *
 * File ids come from the sequence fidx.file_id, which hands out blocks of
 * PG_ID_BLOCK ids: a block is taken before a batch opens its COPY (a
 * statement cannot run inside one), so a batch holds at most PG_ID_BLOCK
 * rows.  The ids
 * of one scan ascend in the order its rows were added; several writers at
 * once take blocks of their own.
 */
#include "postgres.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "row.h"
#include "seal.h"
#include "sysinfo.h"

#define COPY_CHUNK (256 * 1024) /* bytes of COPY data sent at once */
#define ANALYZE_LOCK 0x66696479 /* the advisory lock of analyze() ("fidy") */

/* The scan being written of id, or NULL. */
static struct pg_scan *scan_of(struct pg_store *st, int64_t id)
{
	for (size_t i = 0; i < st->nscans; i++)
		if (st->scans[i].id == id)
			return &st->scans[i];
	return NULL;
}

/* Forgets scan c (ended). */
static void scan_drop(struct pg_store *st, struct pg_scan *c)
{
	fidx_seal_sum_free(c->sum);
	free(c->ids);
	free(c->hashes);
	*c = st->scans[--st->nscans];
}

/* Starts following scan id of host_id, its seal begun from no line.  Returns it, or NULL with err set. */
static struct pg_scan *scan_follow(struct pg_store *st, int64_t id, int64_t host_id,
				   int64_t ran_before, struct fidx_error *err)
{
	if (!st->lines && !(st->lines = fidx_seal_lines_new(NULL, NULL, err)))
		return NULL;
	if (st->nscans == st->capscans) {
		size_t cap = st->capscans ? 2 * st->capscans : 4;
		struct pg_scan *p = realloc(st->scans, cap * sizeof(*p));
		if (!p) {
			fidx_fail_nomem(err);
			return NULL;
		}
		st->scans = p;
		st->capscans = cap;
	}
	struct pg_scan *c = &st->scans[st->nscans];
	*c = (struct pg_scan){.id = id, .sealed_id = id, .host_id = host_id,
			      .ran_before_ns = ran_before, .started_mono = fidx_monotonic_ns()};
	if (!(c->sum = fidx_seal_sum_new(err)))
		return NULL;
	st->nscans++;
	return c;
}

/* The run time of scan c: its earlier runs and this one. */
static int64_t run_ns(const struct pg_scan *c)
{
	return c->ran_before_ns + (fidx_monotonic_ns() - c->started_mono);
}

void pg_write_close(struct pg_store *st)
{
	if (st->base.mode != FIDX_STORE_READ)
		pg_rollback(st);
	while (st->nscans)
		scan_drop(st, &st->scans[0]);
	free(st->scans);
	free(st->copy);
	fidx_seal_lines_free(st->lines);
}

/*
 * The id of host name in fidx.host, the row made when there is none (in the
 * open transaction).  On a shard (docs/SCHEMA.md, "Beyond one server")
 * fidx.host is a foreign table onto the coordinator's, which alone gives
 * host ids: a host it does not know yet is refused.  Returns the id, or -1
 * with err set.
 */
static int64_t host_id_of(struct pg_store *st, const char *name, struct fidx_error *err)
{
	struct pg_params p = {0};
	pg_param_str(&p, name);
	PGresult *res = pg_exec(st, "SELECT h.id, c.relkind = 'f' FROM pg_catalog.pg_class c"
				" LEFT JOIN fidx.host h ON h.name = $1"
				" WHERE c.oid = 'fidx.host'::pg_catalog.regclass", &p, "write", err);
	if (!res)
		return -1;
	bool known = PQntuples(res) == 1 && !PQgetisnull(res, 0, 0);
	bool shard = PQntuples(res) == 1 && PQgetvalue(res, 0, 1)[0] == 1;
	int64_t id = known ? pg_int(res, 0, 0) : -1;
	PQclear(res);
	if (known)
		return id;
	if (shard)
		return fidx_fail(err, ENOENT, "cannot write database '%s'%s: it is a shard, and its"
				 " coordinator does not know host '%s' yet (fidx-pg-shard where)",
				 fidx_quote(st->name), st->origin, fidx_quote(name));
	res = pg_exec(st, "INSERT INTO fidx.host (name) VALUES ($1) ON CONFLICT (name)"
		      " DO UPDATE SET name = excluded.name RETURNING id", &p, "write", err);
	if (!res)
		return -1;
	id = pg_int(res, 0, 0);
	PQclear(res);
	return id;
}

int64_t pg_begin_scan(struct fidx_store *base, const struct fidx_scan_info *info,
		      struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	if (pg_flush(base, err) < 0 || pg_begin(st, err) < 0)
		return -1;
	if (!st->has_schema && pg_make_schema(st, err) < 0)
		goto fail;
	int64_t host_id = host_id_of(st, info->host, err);
	if (host_id < 0)
		goto fail;
	struct pg_params p = {0};
	pg_param_int(&p, host_id);
	const char *text[] = {info->root, info->host, info->os, info->kernel,
			      info->arch, info->version, info->options, "running"};
	for (int i = 0; i < 8; i++)
		pg_param_str(&p, text[i]);
	pg_param_int(&p, info->started_ns);
	pg_param_int(&p, getpid());
	pg_param_text(&p, info->uuid);
	PGresult *res = pg_exec(st, "INSERT INTO fidx.scan (host_id, root, host, os, kernel, arch,"
				" version, options, status, started_ns, pid, uuid)"
				" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::uuid)"
				" RETURNING id", &p, "write", err);
	if (!res)
		goto fail;
	int64_t id = pg_int(res, 0, 0);
	PQclear(res);
	if (pg_commit(st, err) < 0)
		return -1;
	return scan_follow(st, id, host_id, 0, err) ? id : -1;
fail:
	pg_rollback(st);
	return -1;
}

int pg_claim_scan(struct fidx_store *base, int64_t scan_id, int64_t seen_pid,
		  struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	struct pg_params p = {0};
	if (pg_flush(base, err) < 0)
		return -1;
	pg_param_int(&p, getpid());
	pg_param_int(&p, scan_id);
	pg_param_int(&p, seen_pid);
	PGresult *res = pg_exec(st, "UPDATE fidx.scan SET pid = $1 WHERE id = $2"
				" AND status <> 'complete'::bytea AND coalesce(pid, 0) = $3",
				&p, "write", err);
	if (!res)
		return -1;
	int changed = atoi(PQcmdTuples(res));
	PQclear(res);
	return changed == 1;
}

int pg_resume_scan(struct fidx_store *base, int64_t scan_id, struct fidx_scan_totals *so_far,
		   struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	struct pg_params p = {0};
	PGresult *res = NULL;
	if (pg_flush(base, err) < 0 || pg_begin(st, err) < 0)
		return -1;
	pg_param_int(&p, getpid());
	pg_param_int(&p, scan_id);
	/* How long the earlier runs took: run_ns, else the end of the last one. */
	res = pg_exec(st, "UPDATE fidx.scan SET status = 'running'::bytea, finished_ns = NULL,"
		      " pid = $1 WHERE id = $2 AND status <> 'complete'::bytea"
		      " RETURNING host_id, coalesce(run_ns, finished_ns - started_ns, 0)",
		      &p, "write", err);
	if (!res)
		goto fail;
	if (PQntuples(res) != 1) {
		fidx_fail(err, EINVAL, "cannot resume scan %" PRId64 " in '%s': it is complete or gone",
			  scan_id, fidx_quote(st->name));
		goto fail;
	}
	int64_t host_id = pg_int(res, 0, 0), ran_before = pg_int(res, 0, 1);
	PQclear(res);
	/* The rows the interruption left unfinished go, with their digests and every row hash:
	 * the seal is read back from the rows kept when the scan ends. */
	p = (struct pg_params){0};
	pg_param_int(&p, scan_id);
	pg_param_str(&p, FIDX_ERROR_NOT_READ);
	pg_param_str(&p, FIDX_ERROR_NOT_HASHED);
	struct pg_params one = {0};
	pg_param_int(&one, scan_id);
	if (pg_run(st, "DELETE FROM fidx.file_digest WHERE file_id IN (SELECT id FROM fidx.file"
		   " WHERE scan_id = $1 AND error IN ($2, $3))", &p, "write", err) < 0 ||
	    pg_run(st, "DELETE FROM fidx.file WHERE scan_id = $1 AND error IN ($2, $3)", &p,
		   "write", err) < 0 ||
	    pg_run(st, "DELETE FROM fidx.seal_batch WHERE scan_id = $1", &one, "write", err) < 0)
		goto fail;
	res = pg_exec(st, "SELECT count(*), count(*) FILTER (WHERE type = 'f'::bytea),"
		      " count(*) FILTER (WHERE type = 'd'::bytea),"
		      " coalesce(sum(size) FILTER (WHERE type = 'f'::bytea), 0)::bigint,"
		      " count(error), count(digests_from),"
		      " count(*) FILTER (WHERE type = 'f'::bytea AND digests_from IS NULL AND"
		      "  coalesce(md5, sha1, sha256, sha512, xxh128) IS NOT NULL)"
		      " FROM fidx.file WHERE scan_id = $1", &one, "read", err);
	if (!res)
		goto fail;
	*so_far = (struct fidx_scan_totals){
		.entries = (uint64_t)pg_int(res, 0, 0), .files = (uint64_t)pg_int(res, 0, 1),
		.dirs = (uint64_t)pg_int(res, 0, 2), .bytes = (uint64_t)pg_int(res, 0, 3),
		.errors = (uint64_t)pg_int(res, 0, 4), .reused = (uint64_t)pg_int(res, 0, 5),
		.hashed = (uint64_t)pg_int(res, 0, 6),
	};
	PQclear(res);
	res = NULL;
	if (pg_commit(st, err) < 0)
		return -1;
	struct pg_scan *c = scan_of(st, scan_id);
	if (c)
		scan_drop(st, c);
	if (!(c = scan_follow(st, scan_id, host_id, ran_before, err)))
		return -1;
	/* Its seal is read back when it ends: the rows kept were not seen here. */
	fidx_seal_sum_free(c->sum);
	c->sum = NULL;
	return 0;
fail:
	PQclear(res);
	pg_rollback(st);
	return -1;
}

/* Makes room for n more bytes of COPY data.  Returns false when out of memory. */
static bool copy_room(struct pg_store *st, size_t n)
{
	if (st->ncopy + n <= st->capcopy)
		return true;
	size_t cap = st->capcopy ? st->capcopy : COPY_CHUNK + 4096;
	while (cap < st->ncopy + n)
		cap *= 2;
	char *p = realloc(st->copy, cap);
	if (!p)
		return false;
	st->copy = p;
	st->capcopy = cap;
	return true;
}

/* Sends the COPY data buffered.  Returns 0, or -1 with err set. */
static int copy_send(struct pg_store *st, struct fidx_error *err)
{
	if (st->ncopy && PQputCopyData(st->conn, st->copy, (int)st->ncopy) != 1)
		return pg_fail(st, err, "write", NULL);
	st->ncopy = 0;
	return 0;
}

/*
 * Opens a batch: the transaction, a block of ids when the one left is too
 * short, the COPY and its header.  Returns 0, or -1 with err set.
 */
static int copy_open(struct pg_store *st, struct fidx_error *err)
{
	static const char header[19] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";
	if (pg_begin(st, err) < 0)
		return -1;
	if (st->end_id - st->next_id < (int64_t)st->batch_rows) {
		PGresult *res = pg_exec(st, "SELECT pg_catalog.nextval('fidx.file_id')", NULL,
					"write", err);
		if (!res)
			return -1;
		st->next_id = pg_int(res, 0, 0);
		st->end_id = st->next_id + PG_ID_BLOCK;
		PQclear(res);
	}
	/* A role under row-level security (an ingest role): COPY FROM cannot check the
	 * policies, so the rows go into a table of the session's first, then INSERT ... SELECT
	 * puts them where the policies decide.  So too on a coordinator of shards (fidx.file
	 * partitioned): PostgreSQL 15 routes a COPY into foreign partitions a row per round
	 * trip, an INSERT in batches of the servers' batch_size. */
	if (st->staged < 0) {
		PGresult *res = pg_exec(st, "SELECT pg_catalog.row_security_active('fidx.file')"
					" OR c.relkind = 'p' FROM pg_catalog.pg_class c"
					" WHERE c.oid = 'fidx.file'::pg_catalog.regclass",
					NULL, "write", err);
		if (!res)
			return -1;
		st->staged = PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 1;
		PQclear(res);
		if (st->staged && pg_run(st, "CREATE TEMP TABLE IF NOT EXISTS fidx_batch (LIKE"
					 " fidx.file) ON COMMIT DELETE ROWS", NULL, "write", err) < 0)
			return -1;
	}
	char sql[1024];
	size_t len = (size_t)snprintf(sql, sizeof(sql), "COPY %s (host_id, origin_id",
				      st->staged ? "pg_temp.fidx_batch" : "fidx.file");
	for (size_t i = 0; i < FIDX_SEAL_FILE_FIELDS; i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s",
					fidx_seal_file_columns[i].name);
	snprintf(sql + len, sizeof(sql) - len, ") FROM STDIN (FORMAT binary)");
	PGresult *res = PQexec(st->conn, sql);
	if (!res || PQresultStatus(res) != PGRES_COPY_IN) {
		PQclear(res);
		return pg_fail(st, err, "write", NULL);
	}
	PQclear(res);
	st->in_copy = true;
	if (!copy_room(st, sizeof(header)))
		return fidx_fail_nomem(err);
	memcpy(st->copy + st->ncopy, header, sizeof(header));
	st->ncopy += sizeof(header);
	return 0;
}

/* Ends the COPY of the open batch.  Returns 0, or -1 with err set. */
static int copy_close(struct pg_store *st, struct fidx_error *err)
{
	if (!st->in_copy)
		return 0;
	if (!copy_room(st, 2))
		return fidx_fail_nomem(err);
	memcpy(st->copy + st->ncopy, "\377\377", 2); /* the trailer: -1 fields */
	st->ncopy += 2;
	if (copy_send(st, err) < 0)
		return -1;
	st->in_copy = false;
	if (PQputCopyEnd(st->conn, NULL) != 1)
		return pg_fail(st, err, "write", NULL);
	int rc = pg_drain(st, 0, "write", err);
	if (rc == 0 && st->staged)
		rc = pg_run(st, "INSERT INTO fidx.file SELECT * FROM pg_temp.fidx_batch", NULL,
			    "write", err);
	return rc;
}

/* Appends one field of a COPY tuple. */
static void copy_field(struct pg_store *st, const struct fidx_seal_field *f)
{
	char *p = st->copy + st->ncopy;
	if (f->kind == FIDX_SEAL_INT) {
		memcpy(p, "\0\0\0\010", 4);
		pg_put64(p + 4, f->i);
		st->ncopy += 12;
	} else if (f->kind == FIDX_SEAL_BYTES) {
		uint32_t n = htonl((uint32_t)f->n);
		memcpy(p, &n, 4);
		if (f->n)
			memcpy(p + 4, f->p, f->n);
		st->ncopy += 4 + f->n;
	} else {
		memcpy(p, "\377\377\377\377", 4);
		st->ncopy += 4;
	}
}

/*
 * Sends one file row of scan c, whose fields f are the values stored (f[0]
 * its id here, f[1] its scan here), and adds its line to c's seal: the line
 * of f, or for a pushed row (origin_id not 0) the line it had where it was
 * made, with origin_id and c->sealed_id in place of the ids here.  Commits
 * a full batch.  Returns 0, or -1 with err set (the batch rolled back).
 */
static int send_row(struct pg_store *st, struct pg_scan *c, struct fidx_seal_field *f,
		    int64_t origin_id, struct fidx_error *err)
{
	int64_t id = f[0].i;
	/* The tuple: its field count, the host, the origin's id, then the seal's fields. */
	size_t need = 2 + 2 * 12;
	for (size_t i = 0; i < FIDX_SEAL_FILE_FIELDS; i++)
		need += 12 + (f[i].kind == FIDX_SEAL_BYTES ? f[i].n : 0);
	if (!copy_room(st, need)) {
		fidx_fail_nomem(err);
		goto fail;
	}
	uint16_t nfields = htons(2 + FIDX_SEAL_FILE_FIELDS);
	memcpy(st->copy + st->ncopy, &nfields, 2);
	st->ncopy += 2;
	copy_field(st, &(struct fidx_seal_field){.kind = FIDX_SEAL_INT, .i = c->host_id});
	copy_field(st, &(struct fidx_seal_field){.kind = origin_id ? FIDX_SEAL_INT : FIDX_SEAL_NULL,
						 .i = origin_id});
	for (size_t i = 0; i < FIDX_SEAL_FILE_FIELDS; i++)
		copy_field(st, &f[i]);
	if (origin_id) {
		f[0].i = origin_id;
		f[1].i = c->sealed_id;
	}
	if (fidx_seal_line(st->lines, fidx_seal_file_columns, f, FIDX_SEAL_FILE_FIELDS,
			   FIDX_SEAL_FILE_ALWAYS, err) < 0 ||
	    pg_seal_row(st, c, id, err) < 0)
		goto fail;
	if (st->ncopy >= COPY_CHUNK && copy_send(st, err) < 0)
		goto fail;
	if (++st->pending >= st->batch_rows || st->next_id == st->end_id)
		return pg_flush(&st->base, err);
	return 0;
fail:
	pg_rollback(st);
	return -1;
}

int pg_add(struct fidx_store *base, const struct fidx_record *rec, struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	struct pg_scan *c = scan_of(st, rec->scan_id);
	struct fidx_seal_field f[FIDX_SEAL_FILE_FIELDS];
	struct fidx_row row;

	if (!c)
		return fidx_fail(err, EINVAL, "cannot write database '%s': scan %" PRId64
				 " is not being written", fidx_quote(st->name), rec->scan_id);
	if (!st->in_copy && copy_open(st, err) < 0) {
		pg_rollback(st);
		return -1;
	}
	fidx_row_of_record(rec, &row);
	row.v[FIDX_COL_ID].i = st->next_id++;
	row.has |= FIDX_COLUMN(FIDX_COL_ID);
	fidx_seal_file_fields(&row, f);
	return send_row(st, c, f, 0, err);
}

unsigned pg_pending(const struct fidx_store *base)
{
	return ((const struct pg_store *)base)->pending;
}

/* Records the run time of every scan being written, in the open transaction. */
static int update_run_times(struct pg_store *st, struct fidx_error *err)
{
	for (size_t i = 0; i < st->nscans; i++) {
		struct pg_params p = {0};
		pg_param_int(&p, run_ns(&st->scans[i]));
		pg_param_int(&p, st->scans[i].id);
		if (pg_run(st, "UPDATE fidx.scan SET run_ns = $1 WHERE id = $2", &p, "write",
			   err) < 0)
			return -1;
	}
	return 0;
}

int pg_flush(struct fidx_store *base, struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	if (!st->in_copy && !st->in_txn)
		return 0;
	if (copy_close(st, err) < 0 || pg_seal_put(st, err) < 0 ||
	    update_run_times(st, err) < 0 || pg_commit(st, err) < 0) {
		pg_rollback(st);
		return -1;
	}
	st->pending = 0;
	return 0;
}

/* Ends scan scan_id in one transaction (sealed when seal is not NULL).  As pg_end_scan(). */
static int end_scan(struct pg_store *st, int64_t scan_id, const struct fidx_scan_totals *totals,
		    uint8_t *seal, struct fidx_error *err)
{
	struct pg_scan *c = scan_of(st, scan_id);
	struct pg_params p = {0};
	int ended = 0;
	if (pg_begin(st, err) < 0)
		return -1;
	pg_param_int(&p, totals->finished_ns);
	pg_param_str(&p, totals->status);
	pg_param_int(&p, (int64_t)totals->entries);
	pg_param_int(&p, (int64_t)totals->files);
	pg_param_int(&p, (int64_t)totals->dirs);
	pg_param_int(&p, (int64_t)totals->bytes);
	pg_param_int(&p, (int64_t)totals->errors);
	pg_param_int(&p, (int64_t)totals->reused);
	pg_param_int(&p, (int64_t)totals->hashed);
	if (totals->base_scan_id > 0)
		pg_param_int(&p, totals->base_scan_id);
	else
		pg_param_null(&p, PG_INT8);
	if (c)
		pg_param_int(&p, run_ns(c));
	else
		pg_param_null(&p, PG_INT8);
	pg_param_int(&p, scan_id);
	PGresult *res = pg_exec(st, "UPDATE fidx.scan SET finished_ns = $1, status = $2,"
				" entries = $3, files = $4, dirs = $5, bytes = $6, errors = $7,"
				" reused = $8, hashed = $9, base_scan_id = coalesce($10, base_scan_id),"
				" run_ns = coalesce($11, run_ns) WHERE id = $12", &p, "write", err);
	if (!res)
		goto fail;
	int changed = atoi(PQcmdTuples(res));
	PQclear(res);
	if (changed != 1) {
		fidx_fail(err, ENOENT, "cannot write database '%s': no scan %" PRId64,
			  fidx_quote(st->name), scan_id);
		goto fail;
	}
	if (seal && strcmp(totals->status, "complete") == 0) {
		if (pg_seal_scan(st, scan_id, seal, err) < 0 ||
		    pg_pathindex_build(st, scan_id, err) < 0)
			goto fail;
		ended = 1;
	}
	if (pg_commit(st, err) < 0)
		return -1;
	if ((c = scan_of(st, scan_id)))
		scan_drop(st, c);
	return ended;
fail:
	pg_rollback(st);
	return -1;
}

int pg_end_scan(struct fidx_store *base, int64_t scan_id, const struct fidx_scan_totals *totals,
		uint8_t *seal, struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	struct fidx_error first;
	int ended;
	if (pg_flush(base, err) == 0 && (ended = end_scan(st, scan_id, totals, seal, err)) >= 0)
		return ended;
	/* Rows lost, or the end refused: the scan did not complete (when the server still listens). */
	fidx_fail_copy(&first, err);
	if (strcmp(totals->status, "failed") != 0) {
		struct fidx_scan_totals failed = *totals;
		failed.status = "failed";
		end_scan(st, scan_id, &failed, NULL, NULL);
	}
	return fidx_fail_copy(err, &first);
}

int pg_seal(struct fidx_store *base, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN],
	    struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	if (pg_flush(base, err) < 0 || pg_begin(st, err) < 0)
		return -1;
	if (pg_seal_scan(st, scan_id, seal, err) < 0 || pg_commit(st, err) < 0) {
		pg_rollback(st);
		return -1;
	}
	return 1;
}

/*
 * Fresh statistics of the file table for the planner (ANALYZE: a sample of
 * its rows): after a load the planner would otherwise think a scan holds a
 * handful of rows and read all of them where an index of digests finds the
 * few asked for (a hunt: 590 ms instead of 70).  A role that does not own the
 * table (an ingest role) is skipped by the server with a warning, and the
 * server's autovacuum analyzes the table later.  Returns 0, or -1 with err set.
 */
static int analyze(struct pg_store *st, struct fidx_error *err)
{
	/* One writer analyzes at a time; the others, finding it busy, leave it to it (20
	 * hosts pushing at once took 31 s with an ANALYZE each, waiting for one another). */
	PGresult *res = NULL;
	struct pg_params p = {0};
	pg_param_int(&p, ANALYZE_LOCK);
	int rc = pg_begin(st, err);
	/* Not on a coordinator of shards (fidx.file partitioned): each shard analyzes its own
	 * rows, and sampling all of them would fail while one is down. */
	if (rc == 0 && !(res = pg_exec(st, "SELECT c.relkind <> 'p' AND"
				       " pg_catalog.pg_try_advisory_xact_lock($1)"
				       " FROM pg_catalog.pg_class c"
				       " WHERE c.oid = 'fidx.file'::pg_catalog.regclass", &p,
				       "analyze", err)))
		rc = -1;
	if (rc == 0 && PQgetvalue(res, 0, 0)[0] == 1)
		rc = pg_run(st, "ANALYZE fidx.file", NULL, "analyze", err);
	PQclear(res);
	if (rc < 0) {
		pg_rollback(st);
		return -1;
	}
	return pg_commit(st, err);
}

/* The indexes are made with the schema (schema.sql): the rows are committed, then analyzed. */
int pg_build_indexes(struct fidx_store *base, struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	if (pg_flush(base, err) < 0)
		return -1;
	return st->has_schema ? analyze(st, err) : 0;
}

int pg_add_digests(struct fidx_store *base, const struct fidx_file_digest *d, size_t n,
		   struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	if (pg_flush(base, err) < 0 || pg_begin(st, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct pg_params p = {0};
		pg_param_int(&p, d[i].file_id);
		pg_param_int(&p, d[i].read_ns);
		if (d[i].edge_block) {
			pg_param_int(&p, d[i].edge_block);
			pg_param_bytes(&p, d[i].edges, sizeof(d[i].edges));
		} else {
			pg_param_null(&p, PG_INT8);
			pg_param_null(&p, PG_BYTEA);
		}
		pg_param_bytes(&p, d[i].has_sha256 ? d[i].sha256 : NULL, sizeof(d[i].sha256));
		/* Keyed by the host of its file row, as every row of a host is. */
		if (pg_run(st, "INSERT INTO fidx.file_digest (file_id, read_ns, edge_block, edges,"
			   " sha256, host_id) SELECT $1, $2, $3, $4, $5, f.host_id FROM fidx.file f"
			   " WHERE f.id = $1 ON CONFLICT (file_id) DO UPDATE SET"
			   " read_ns = excluded.read_ns,"
			   " edge_block = coalesce(excluded.edge_block, fidx.file_digest.edge_block),"
			   " edges = coalesce(excluded.edges, fidx.file_digest.edges),"
			   " sha256 = coalesce(excluded.sha256, fidx.file_digest.sha256)",
			   &p, "write", err) < 0) {
			pg_rollback(st);
			return -1;
		}
	}
	if (pg_commit(st, err) < 0)
		return -1;
	return 0;
}

/* ---------------------------------------------------------------- pushing --- */

/*
 * Takes up scan_id of host_id, whose seal gives it sealed_id, to push rows
 * into: its running seal is left out (read back at the end, as a resumed
 * scan's).  Returns 0, or -1 with err set.
 */
static int push_follow(struct pg_store *st, int64_t scan_id, int64_t host_id, int64_t sealed_id,
		       struct fidx_error *err)
{
	struct pg_scan *c = scan_of(st, scan_id);
	if (c)
		scan_drop(st, c);
	if (!(c = scan_follow(st, scan_id, host_id, 0, err)))
		return -1;
	c->sealed_id = sealed_id;
	fidx_seal_sum_free(c->sum);
	c->sum = NULL;
	return 0;
}

int pg_push_begin(struct fidx_store *base, const struct fidx_scan_row *scan,
		  struct fidx_push_state *ps, struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	struct pg_params p = {0};
	PGresult *res = NULL;
	*ps = (struct fidx_push_state){0};
	if (!scan->uuid)
		return fidx_fail(err, EINVAL, "cannot push scan %" PRId64 ": it has no UUID",
				 scan->id);
	if (pg_flush(base, err) < 0 || pg_begin(st, err) < 0)
		return -1;
	if (!st->has_schema && pg_make_schema(st, err) < 0)
		goto fail;
	/* A scan of that UUID: there whole, or cut off (its rows are counted by origin id). */
	pg_param_text(&p, scan->uuid);
	if (!(res = pg_exec(st, "SELECT s.id, s.host_id, s.status = 'complete'::bytea,"
			    " coalesce(s.origin_id, s.id), CASE WHEN s.status IS DISTINCT FROM"
			    " 'complete'::bytea THEN (SELECT coalesce(max(f.origin_id), 0)"
			    " FROM fidx.file f WHERE f.scan_id = s.id AND f.host_id = s.host_id)"
			    " ELSE 0 END, s.seal FROM fidx.scan s WHERE s.uuid = $1::uuid", &p,
			    "read", err)))
		goto fail;
	if (PQntuples(res) == 1) {
		*ps = (struct fidx_push_state){.scan_id = pg_int(res, 0, 0),
					       .complete = PQgetvalue(res, 0, 2)[0] == 1,
					       .after = pg_int(res, 0, 4)};
		if (ps->complete && !PQgetisnull(res, 0, 5)) {
			size_t n = (size_t)PQgetlength(res, 0, 5);
			ps->seal_len = n;
			memcpy(ps->seal, PQgetvalue(res, 0, 5), n < sizeof(ps->seal) ? n
										: sizeof(ps->seal));
		}
		int64_t host_id = pg_int(res, 0, 1), sealed = pg_int(res, 0, 3);
		PQclear(res);
		if (pg_commit(st, err) < 0)
			return -1;
		return ps->complete ? 0 : push_follow(st, ps->scan_id, host_id, sealed, err);
	}
	PQclear(res);
	res = NULL;
	int64_t host_id = host_id_of(st, scan->host ? scan->host : "", err);
	if (host_id < 0)
		goto fail;
	/* The scan row as it was made, but running until the push ends. */
	p = (struct pg_params){0};
	pg_param_int(&p, host_id);
	pg_param_text(&p, scan->uuid);
	pg_param_int(&p, scan->id);
	const char *text[] = {scan->root, scan->host, scan->os, scan->kernel, scan->arch,
			      scan->version, scan->options};
	for (int i = 0; i < 7; i++)
		pg_param_str(&p, text[i]);
	const struct {
		enum fidx_scol c;
		int64_t v;
	} ints[] = {{FIDX_SCOL_STARTED_NS, scan->started_ns}, {FIDX_SCOL_PID, scan->pid}};
	for (size_t i = 0; i < 2; i++)
		if (fidx_scan_has(scan, ints[i].c))
			pg_param_int(&p, ints[i].v);
		else
			pg_param_null(&p, PG_INT8);
	if (!(res = pg_exec(st, "INSERT INTO fidx.scan (host_id, uuid, origin_id, root, host, os,"
			    " kernel, arch, version, options, started_ns, pid, status)"
			    " VALUES ($1, $2::uuid, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,"
			    " 'running'::bytea) RETURNING id", &p, "write", err)))
		goto fail;
	ps->scan_id = pg_int(res, 0, 0);
	PQclear(res);
	if (pg_commit(st, err) < 0)
		return -1;
	return push_follow(st, ps->scan_id, host_id, scan->id, err);
fail:
	pg_rollback(st);
	return -1;
}

/*
 * Drops what a push cut off left of scan_id (its rows, their digests and row
 * hashes, its changes), in the open transaction.  Returns 0, or -1 with err set.
 */
static int push_forget(struct pg_store *st, int64_t scan_id, struct fidx_error *err)
{
	struct pg_params p = {0};
	pg_param_int(&p, scan_id);
	return pg_run(st, "DELETE FROM fidx.file_digest WHERE file_id IN (SELECT id FROM fidx.file"
		      " WHERE scan_id = $1)", &p, "write", err) < 0 ||
	       pg_run(st, "DELETE FROM fidx.file WHERE scan_id = $1", &p, "write", err) < 0 ||
	       pg_run(st, "DELETE FROM fidx.seal_batch WHERE scan_id = $1", &p, "write", err) < 0 ||
	       pg_run(st, "DELETE FROM fidx.scan_delta WHERE scan_id = $1", &p, "write", err) < 0
	       ? -1 : 0;
}

int pg_push_delta(struct fidx_store *base, int64_t scan_id, const char *base_uuid,
		  const void *runs, size_t len, int64_t *after, struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	struct pg_params p = {0};
	PGresult *res = NULL;
	int64_t base_id = 0, depth = 0;
	if (pg_flush(base, err) < 0 || pg_begin(st, err) < 0)
		return -1;
	/* The base: complete and sealed here, of the same host and root, its chain not at its
	 * longest (then this scan is kept whole, and the next ones build on it).  Locked until
	 * the changes are there: a prune that drops it first waits, then finds them (one that
	 * dropped it already leaves no row, and the scan is kept whole). */
	if (base_uuid) {
		pg_param_text(&p, base_uuid);
		pg_param_int(&p, scan_id);
		if (!(res = pg_exec(st, "SELECT b.id, coalesce(d.depth, 0)::bigint FROM fidx.scan b"
				    " JOIN fidx.scan s ON s.id = $2 AND s.host_id = b.host_id"
				    " AND s.root = b.root AND s.id <> b.id"
				    " LEFT JOIN fidx.scan_delta d ON d.scan_id = b.id"
				    " WHERE b.uuid = $1::uuid AND b.status = 'complete'::bytea"
				    " AND b.seal IS NOT NULL FOR KEY SHARE OF b", &p, "read", err)))
			goto fail;
		if (PQntuples(res) == 1 && pg_int(res, 0, 1) + 1 <= PG_DELTA_DEPTH) {
			base_id = pg_int(res, 0, 0);
			depth = pg_int(res, 0, 1) + 1;
		}
		PQclear(res);
	}
	/* What a push cut off kept: the same changes go on; anything else begins anew. */
	p = (struct pg_params){0};
	pg_param_int(&p, scan_id);
	if (!(res = pg_exec(st, "SELECT base_id, runs FROM fidx.scan_delta WHERE scan_id = $1", &p,
			    "read", err)))
		goto fail;
	bool had = PQntuples(res) == 1;
	bool same = had ? base_id && pg_int(res, 0, 0) == base_id &&
			  (size_t)PQgetlength(res, 0, 1) == len &&
			  memcmp(PQgetvalue(res, 0, 1), runs, len) == 0
			: !base_id;
	PQclear(res);
	res = NULL;
	if (!same) {
		if (push_forget(st, scan_id, err) < 0)
			goto fail;
		*after = 0;
	}
	if (base_id && !(had && same)) {
		p = (struct pg_params){0};
		pg_param_int(&p, scan_id);
		pg_param_int(&p, base_id);
		pg_param_int(&p, depth);
		pg_param_bytes(&p, runs, len);
		if (pg_run(st, "INSERT INTO fidx.scan_delta (scan_id, base_id, depth, runs, host_id)"
			   " SELECT $1, $2, $3, $4, host_id FROM fidx.scan WHERE id = $1", &p,
			   "write", err) < 0)
			goto fail;
	}
	if (pg_commit(st, err) < 0)
		return -1;
	return base_id != 0;
fail:
	pg_rollback(st);
	return -1;
}

int pg_push_row(struct fidx_store *base, int64_t scan_id, const struct fidx_row *row,
		struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	struct pg_scan *c = scan_of(st, scan_id);
	struct fidx_seal_field f[FIDX_SEAL_FILE_FIELDS];
	if (!c)
		return fidx_fail(err, EINVAL, "cannot write database '%s': scan %" PRId64
				 " is not being pushed", fidx_quote(st->name), scan_id);
	if (!st->in_copy && copy_open(st, err) < 0) {
		pg_rollback(st);
		return -1;
	}
	/* Its fields where it was made; stored under an id and the scan of this store. */
	fidx_seal_file_fields(row, f);
	int64_t origin_id = f[0].i;
	f[0] = (struct fidx_seal_field){.kind = FIDX_SEAL_INT, .i = st->next_id++};
	f[1] = (struct fidx_seal_field){.kind = FIDX_SEAL_INT, .i = scan_id};
	return send_row(st, c, f, origin_id, err);
}

int pg_push_end(struct fidx_store *base, int64_t scan_id, const struct fidx_scan_row *scan,
		struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	struct pg_params p = {0};
	int delta = 0;
	if (pg_flush(base, err) < 0 || pg_begin(st, err) < 0)
		return -1;
	/* The rest of the scan row as it was made (a column it has no value of stays NULL). */
	const struct {
		enum fidx_scol c;
		int64_t v;
	} ints[] = {
		{FIDX_SCOL_FINISHED_NS, scan->finished_ns}, {FIDX_SCOL_ENTRIES, scan->entries},
		{FIDX_SCOL_FILES, scan->files}, {FIDX_SCOL_DIRS, scan->dirs},
		{FIDX_SCOL_BYTES, scan->bytes}, {FIDX_SCOL_ERRORS, scan->errors},
		{FIDX_SCOL_REUSED, scan->reused}, {FIDX_SCOL_HASHED, scan->hashed},
		{FIDX_SCOL_BASE_SCAN_ID, scan->base_scan_id}, {FIDX_SCOL_RUN_NS, scan->run_ns},
	};
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (fidx_scan_has(scan, ints[i].c))
			pg_param_int(&p, ints[i].v);
		else
			pg_param_null(&p, PG_INT8);
	pg_param_str(&p, scan->status);
	pg_param_bytes(&p, scan->seal, scan->seal_len);
	pg_param_int(&p, scan_id);
	if (pg_run(st, "UPDATE fidx.scan SET finished_ns = $1, entries = $2, files = $3, dirs = $4,"
		   " bytes = $5, errors = $6, reused = $7, hashed = $8, base_scan_id = $9,"
		   " run_ns = $10, status = $11, seal = $12 WHERE id = $13", &p, "write", err) < 0 ||
	    (delta = pg_is_delta(st, scan_id, err)) < 0 ||
	    (!delta && pg_pathindex_build(st, scan_id, err) < 0) || pg_commit(st, err) < 0) {
		pg_rollback(st);
		return -1;
	}
	struct pg_scan *c = scan_of(st, scan_id);
	if (c)
		scan_drop(st, c);
	/* A scan of changes adds a few per cent of a scan's rows: the statistics stay true
	 * (an ANALYZE took 0.4 s a push on a fleet of 10M rows); the server's autovacuum
	 * analyzes the table when enough has changed. */
	return delta ? 0 : analyze(st, err);
}

/* --------------------------------------------------------------- dropping --- */

/*
 * Rebuilds scan scan_id (kept as changes, of host host_id) whole, in the open
 * transaction: every row it has, read through its chain once into a table of
 * this session, its old rows (exactly those: ids here need not ascend, a shard
 * hands out its own) and its changes dropped, then the rows written anew as its
 * own in the order of its ids where it was made (so that the ids here ascend
 * as a pushed scan's do), its row hashes and path index made.  Its seal stays.
 * Returns 0, or -1 with err set.
 */
static int rebuild_whole(struct pg_store *st, int64_t scan_id, int64_t host_id,
			 struct fidx_error *err)
{
	char *rel = NULL, *sql = NULL, cols[1024];
	int rc = -1;
	if (pg_relation(st, &scan_id, 1, 0, NULL, NULL, &rel, err) < 0)
		return -1;
	size_t len = 0;
	for (size_t i = 2; i < FIDX_SEAL_FILE_FIELDS; i++)
		len += (size_t)snprintf(cols + len, sizeof(cols) - len, ", %s",
					fidx_seal_file_columns[i].name);
	struct pg_params one = {0};
	pg_param_int(&one, scan_id);
	PGresult *res;
	/* Its rows, numbered in the order of their ids where it was made. */
	if (asprintf(&sql, "CREATE TEMP TABLE fidx_rebuild ON COMMIT DROP AS SELECT f.scan_id%s,"
		     " f.host_id, f.origin_id, pg_catalog.row_number() OVER (ORDER BY f.origin_id)"
		     " AS rn FROM%s WHERE f.scan_id = %" PRId64, cols, rel, scan_id) < 0) {
		sql = NULL;
		fidx_fail_nomem(err);
		goto out;
	}
	if (pg_run(st, "DROP TABLE IF EXISTS pg_temp.fidx_rebuild", NULL, "write", err) < 0 ||
	    !(res = pg_exec(st, sql, NULL, "write", err)))
		goto out;
	int64_t rows = atoll(PQcmdTuples(res));
	PQclear(res);
	if (pg_run(st, "DELETE FROM fidx.file_digest WHERE file_id IN (SELECT id FROM fidx.file"
		   " WHERE scan_id = $1)", &one, "write", err) < 0 ||
	    pg_run(st, "DELETE FROM fidx.file WHERE scan_id = $1", &one, "write", err) < 0 ||
	    pg_run(st, "DELETE FROM fidx.scan_delta WHERE scan_id = $1", &one, "write", err) < 0)
		goto out;
	/* The rows in blocks of the sequence: one block holds PG_ID_BLOCK ids. */
	for (int64_t done = 0; done < rows; done += PG_ID_BLOCK) {
		if (!(res = pg_exec(st, "SELECT pg_catalog.nextval('fidx.file_id')", NULL, "write",
				    err)))
			goto out;
		int64_t start = pg_int(res, 0, 0);
		PQclear(res);
		free(sql);
		if (asprintf(&sql, "INSERT INTO fidx.file (id, scan_id%s, host_id, origin_id)"
			     " SELECT %" PRId64 " + rn - 1 - %" PRId64 ", scan_id%s, host_id,"
			     " origin_id FROM pg_temp.fidx_rebuild WHERE rn > %" PRId64
			     " AND rn <= %" PRId64, cols, start, done, cols, done,
			     done + PG_ID_BLOCK) < 0) {
			sql = NULL;
			fidx_fail_nomem(err);
			goto out;
		}
		if (pg_run(st, sql, NULL, "write", err) < 0)
			goto out;
	}
	if (pg_run(st, "DROP TABLE pg_temp.fidx_rebuild", NULL, "write", err) < 0 ||
	    pg_seal_rehash(st, scan_id, host_id, err) < 0 ||
	    pg_pathindex_build(st, scan_id, err) < 0)
		goto out;
	rc = 0;
out:
	free(sql);
	free(rel);
	return rc;
}

int pg_drop_scans(struct fidx_store *base, const int64_t *ids, size_t n, size_t *rebuilt,
		  struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	struct pg_params p = {0};
	PGresult *res = NULL;
	char *list = NULL;
	size_t len = 0;
	*rebuilt = 0;
	if (!n)
		return 0;
	if (!(list = malloc(n * 21 + 3)))
		return fidx_fail_nomem(err);
	list[len++] = '{';
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(list + len, "%s%" PRId64, i ? "," : "", ids[i]);
	memcpy(list + len, "}", 2);
	if (pg_flush(base, err) < 0 || pg_begin(st, err) < 0) {
		free(list);
		return -1;
	}
	if (!st->has_schema && pg_make_schema(st, err) < 0)
		goto fail;
	pg_param_text(&p, list);
	/* The scans dropped locked first: a push building on one waits, or has put its changes
	 * there before they are listed. */
	if (pg_run(st, "SELECT id FROM fidx.scan WHERE id = ANY($1::bigint[]) ORDER BY id"
		   " FOR UPDATE", &p, "write", err) < 0)
		goto fail;
	/* Each scan kept that is the changes of one dropped is rebuilt whole first, while
	 * every chain is there; a scan kept as changes of it then has a whole base. */
	if (!(res = pg_exec(st, "SELECT d.scan_id, d.host_id, s.status = 'complete'::bytea,"
			    " d.base_id, coalesce(s.host, ''::bytea),"
			    " coalesce(pg_catalog.to_char(pg_catalog.to_timestamp(s.started_ns / 1e9)"
			    " AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC', 'at a time unknown')"
			    " FROM fidx.scan_delta d JOIN fidx.scan s ON s.id = d.scan_id"
			    " WHERE d.base_id = ANY($1::bigint[]) AND NOT d.scan_id = ANY($1::bigint[])"
			    " ORDER BY d.scan_id FOR UPDATE OF d", &p, "read", err)))
		goto fail;
	/* A push of changes of one of them under way, or cut off and never taken up: its rows
	 * are not all there to rebuild.  Only that push can end it (prune drops no such scan). */
	for (int r = 0; r < PQntuples(res); r++)
		if (PQgetvalue(res, r, 2)[0] != 1) {
			fidx_fail(err, EBUSY, "cannot drop scan %" PRId64 " of '%s': scan %" PRId64
				  " of host '%s', started %s, is its changes and not complete (a"
				  " push under way, or cut off): push that host's database again"
				  " to finish it, then prune (fidx has no other way to end it)",
				  pg_int(res, r, 3), fidx_quote(st->name), pg_int(res, r, 0),
				  fidx_quote(PQgetvalue(res, r, 4)), PQgetvalue(res, r, 5));
			goto fail;
		}
	for (int r = 0; r < PQntuples(res); r++) {
		if (rebuild_whole(st, pg_int(res, r, 0), pg_int(res, r, 1), err) < 0)
			goto fail;
		(*rebuilt)++;
	}
	PQclear(res);
	res = NULL;
	static const char *const drops[] = {
		("DELETE FROM fidx.file_digest WHERE file_id IN (SELECT id FROM fidx.file"
		 " WHERE scan_id = ANY($1::bigint[]))"),
		"DELETE FROM fidx.file WHERE scan_id = ANY($1::bigint[])",
		"DELETE FROM fidx.seal_batch WHERE scan_id = ANY($1::bigint[])",
		"DELETE FROM fidx.path_index WHERE scan_id = ANY($1::bigint[])",
		"DELETE FROM fidx.path_block WHERE scan_id = ANY($1::bigint[])",
		"DELETE FROM fidx.path_trigram WHERE scan_id = ANY($1::bigint[])",
		"DELETE FROM fidx.scan_delta WHERE scan_id = ANY($1::bigint[])",
		"DELETE FROM fidx.scan WHERE id = ANY($1::bigint[])",
	};
	for (size_t i = 0; i < sizeof(drops) / sizeof(drops[0]); i++)
		if (pg_run(st, drops[i], &p, "write", err) < 0)
			goto fail;
	free(list);
	return pg_commit(st, err);
fail:
	PQclear(res);
	free(list);
	pg_rollback(st);
	return -1;
}
