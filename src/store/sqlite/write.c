/*
 * write.c - writing scans into a SQLite store: scan rows begun, claimed,
 * resumed and ended, file rows added in batches.
 *
 * Rows go through a prepared INSERT of every column of `file` but id (or,
 * for a row whose fields after schema 3's are all NULL, most rows, one of
 * schema 3's columns: 22 NULLs fewer to bind and step through), bound from
 * the record's row (row.h) in the fields of its seal line
 * (fidx_seal_file_fields(): a time as T_ns when it fits, else T_sec and
 * T_nsec), so that what is written and what is sealed are the same values.
 * The same fields, with the id SQLite gave the row, go to the sealer
 * (seal.h), which makes the row's seal line and hands its row hash back to
 * seal.c for file_seal:
 *
 *     record ──► row ──► fields ──► INSERT INTO file ──► id ──► sealer: line, hashes
 *                                                                │ (a thread of its own)
 *     COMMIT ◄── file_seal rows inserted (fidx_sealer_sync) ◄───────┘
 *
 * so a scan's seal is ready when it ends (the end transaction adds the scan
 * row's line and writes the seal: a complete scan is never unsealed), and a
 * rolled-back batch takes its file_seal rows with it (the sealer forgets,
 * and reads the rows back when it seals).  A transaction is opened (BEGIN
 * IMMEDIATE) at the first row and committed after batch_rows rows, by
 * fidx_store_flush(), or before any scan row change.  On a failed statement
 * or commit the open transaction is rolled back (SQLite may already have
 * done so, e.g. on SQLITE_FULL), so a failure loses at most the rows of the
 * current batch and never touches committed rows or earlier scans.  The
 * secondary index file(scan_id, path) is left to fidx_store_build_indexes(),
 * after the bulk load.
 *
 * Checkpoints: a query may be reading the main file as immutable, under
 * fidx's reader lock (dbfile.h).  So the store checkpoints itself instead of
 * SQLite's automatic checkpoint (sqlite.c: at the same 1000 pages, only
 * when no reader holds the lock), and closes without a checkpoint while one
 * holds it: the WAL is then left beside the file, for the next writer to
 * fold back, and read through by the queries meanwhile.
 */
#include "sqlite.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbtime.h"
#include "pathstore.h"
#include "schema.h"
#include "sysinfo.h"

/*
 * Room kept on the database's file system for the end of a scan.  When the
 * disk fills, a failing scan still has to write the end of its row
 * ('failed', its counts), a few pages of WAL; without room the row would be
 * left 'running', as if the scan still ran.  An unnamed file (O_TMPFILE: no
 * name in the folder, nothing left behind, the folder's times unchanged) of
 * BALLAST_BYTES is allocated beside the database, and given back to the file
 * system before that write is tried again.
 */
#define BALLAST_BYTES (2 << 20)

/* Allocates the ballast beside the database, when the file system can (else none). */
static void ballast_take(struct sqlite_store *st)
{
	char *dir = strdup(st->path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	const char *folder = !dir ? NULL : !slash ? "." : slash == dir ? "/" : (*slash = '\0', dir);
	st->ballast = folder ? open(folder, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1;
	if (st->ballast >= 0 && posix_fallocate(st->ballast, 0, BALLAST_BYTES) != 0) {
		close(st->ballast);
		st->ballast = -1;
	}
	free(dir);
}

/* Gives the ballast back to the file system.  Returns whether there was one. */
static bool ballast_release(struct sqlite_store *st)
{
	if (st->ballast < 0)
		return false;
	close(st->ballast);
	st->ballast = -1;
	return true;
}

/* Fills err with "cannot seal database 'x': <what the sealer said>".  Returns -1. */
static int seal_fail(struct sqlite_store *st, struct fidx_error *err)
{
	struct fidx_error why;
	fidx_fail_copy(&why, err);
	return fidx_fail(err, why.code, "cannot seal database '%s': %s", fidx_quote(st->path),
			 why.msg);
}

/*
 * Prepares into *s the INSERT of fields 1..n-1 of a file row's seal line, the
 * columns of the same names (field i is parameter i).  Returns 0, or -1 with err set.
 */
static int prepare_insert(struct sqlite_store *st, size_t n, sqlite3_stmt **s,
			  struct fidx_error *err)
{
	char sql[2048];
	size_t len = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO file (");
	for (size_t i = 1; i < n; i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s%s", i > 1 ? ", " : "",
					fidx_seal_file_columns[i].name);
	len += (size_t)snprintf(sql + len, sizeof(sql) - len, ") VALUES (");
	for (size_t i = 1; i < n; i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s?", i > 1 ? ", " : "");
	snprintf(sql + len, sizeof(sql) - len, ")");
	if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, s, NULL) != SQLITE_OK)
		return sqlite_fail(st, err, "prepare");
	return 0;
}

int sqlite_write_setup(struct sqlite_store *st, struct fidx_error *err)
{
	/* Every column of file but id, in table order; and the columns of schema 1-3
	 * alone, for the rows (most) whose later fields are all NULL. */
	if (prepare_insert(st, FIDX_SEAL_FILE_FIELDS, &st->insert, err) < 0 ||
	    prepare_insert(st, FIDX_SEAL_FILE_ALWAYS, &st->insert_short, err) < 0)
		return -1;
	if (!st->scratch && sqlite_seal_setup(st, err) < 0)
		return -1;
	ballast_take(st);
	return 0;
}

void sqlite_write_close(struct sqlite_store *st)
{
	if (st->in_txn)
		sqlite_rollback(st);
	sqlite_seal_close(st);
	sqlite3_finalize(st->insert);
	sqlite3_finalize(st->insert_short);
	sqlite3_finalize(st->run);
	st->insert = st->insert_short = st->run = NULL;
	ballast_release(st);
}

/*
 * Starts following scan id, begun or resumed by this store, whose earlier
 * runs took ran_before_ns and whose recorded times span tmin..tmax seconds.
 * Returns 0, or -1 with err set.
 */
static int scan_follow(struct sqlite_store *st, int64_t id, int64_t ran_before_ns, int64_t tmin,
		       int64_t tmax, struct fidx_error *err)
{
	if (st->nscans == st->capscans) {
		size_t cap = st->capscans ? 2 * st->capscans : 4;
		struct sqlite_scan *p = realloc(st->scans, cap * sizeof(*p));
		if (!p)
			return fidx_fail(err, ENOMEM, "cannot write database '%s': out of memory",
					 fidx_quote(st->path));
		st->scans = p;
		st->capscans = cap;
	}
	st->scans[st->nscans++] = (struct sqlite_scan){
		.id = id, .ran_before_ns = ran_before_ns, .started_mono = fidx_monotonic_ns(),
		.tmin = tmin, .tmax = tmax,
	};
	return 0;
}

/* Returns the scan id this store is writing, or NULL. */
static struct sqlite_scan *scan_followed(struct sqlite_store *st, int64_t id)
{
	if (st->last_scan < st->nscans && st->scans[st->last_scan].id == id)
		return &st->scans[st->last_scan];
	for (size_t i = 0; i < st->nscans; i++)
		if (st->scans[i].id == id)
			return &st->scans[st->last_scan = i];
	return NULL;
}

/* Returns how long scan c has run, over all its runs, in ns. */
static int64_t scan_run_ns(const struct sqlite_scan *c)
{
	return c->ran_before_ns + (fidx_monotonic_ns() - c->started_mono);
}

/*
 * Writes run_ns of every scan being written (in the open transaction), so
 * that a killed scan keeps the time it ran until its last commit.  Returns 0,
 * or -1 with err set.
 */
static int update_run_times(struct sqlite_store *st, struct fidx_error *err)
{
	if (!st->nscans)
		return 0;
	if (!st->run && sqlite3_prepare_v3(st->db, "UPDATE scan SET run_ns = ? WHERE id = ?", -1,
					   SQLITE_PREPARE_PERSISTENT, &st->run, NULL) != SQLITE_OK)
		return sqlite_fail(st, err, "prepare");
	for (size_t i = 0; i < st->nscans; i++) {
		sqlite3_bind_int64(st->run, 1, scan_run_ns(&st->scans[i]));
		sqlite3_bind_int64(st->run, 2, st->scans[i].id);
		int rc = sqlite3_step(st->run);
		sqlite3_reset(st->run);
		if (rc != SQLITE_DONE)
			return sqlite_fail(st, err, "write");
	}
	return 0;
}

/* Widens scan c's span of times by time t. */
static inline void scan_span(struct sqlite_scan *c, const struct fidx_time *t)
{
	if (t->sec < c->tmin)
		c->tmin = t->sec;
	if (t->sec > c->tmax)
		c->tmax = t->sec;
}

/* fidx_utc_offsets()'s callback: inserts one local_time row with statement arg. */
static int put_offset(void *arg, int64_t since, long offset)
{
	sqlite3_stmt *s = arg;
	sqlite3_bind_int64(s, 2, since);
	sqlite3_bind_int64(s, 3, offset);
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * Replaces the local_time rows of scan c (in the open transaction) with the
 * host's UTC offsets over its span of times.  Returns 0, or -1 with err set.
 */
static int write_local_time(struct sqlite_store *st, const struct sqlite_scan *c,
			    struct fidx_error *err)
{
	sqlite3_stmt *s;
	char sql[96];
	snprintf(sql, sizeof(sql), "DELETE FROM local_time WHERE scan_id = %" PRId64, c->id);
	if (sqlite_exec(st, sql, "write", err) < 0)
		return -1;
	if (sqlite3_prepare_v2(st->db, "INSERT INTO local_time (scan_id, since, utc_offset)"
			       " VALUES (?, ?, ?)", -1, &s, NULL) != SQLITE_OK)
		return sqlite_fail(st, err, "prepare");
	sqlite3_bind_int64(s, 1, c->id);
	int ret = fidx_utc_offsets(c->tmin, c->tmax, put_offset, s) == 0 ? 0
		  : sqlite_fail(st, err, "write");
	sqlite3_finalize(s);
	return ret;
}

/*
 * Binds fields f[1..n-1] to INSERT s (the row's id is SQLite's to give).
 * Returns an SQLite code.
 */
static int bind_fields(sqlite3_stmt *s, const struct fidx_seal_field *f, int n)
{
	int rc = SQLITE_OK;
	for (int i = 1; i < n; i++) {
		switch (f[i].kind) {
		case FIDX_SEAL_INT:
			rc |= sqlite3_bind_int64(s, i, f[i].i);
			break;
		case FIDX_SEAL_BYTES:
			/* Digests are BLOBs; every other value of a row is TEXT (docs/SCHEMA.md). */
			if (i < FIDX_SEAL_FILE_ALWAYS && fidx_columns[i].kind == FIDX_KIND_DIGEST)
				rc |= sqlite3_bind_blob64(s, i, f[i].p, f[i].n, SQLITE_STATIC);
			else
				rc |= sqlite3_bind_text64(s, i, f[i].p, f[i].n, SQLITE_STATIC,
							  SQLITE_UTF8);
			break;
		default:
			rc |= sqlite3_bind_null(s, i);
		}
	}
	return rc;
}

int sqlite_add(struct fidx_store *base, const struct fidx_record *rec, struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	struct fidx_row row;
	struct fidx_seal_field f[FIDX_SEAL_FILE_FIELDS];

	if (!st->in_txn) {
		if (sqlite_exec(st, "BEGIN IMMEDIATE", "write", err) < 0)
			return -1;
		st->in_txn = true;
	}
	fidx_row_of_record(rec, &row);
	fidx_seal_file_fields(&row, f);
	int n = (int)fidx_seal_file_fields_used(f);
	sqlite3_stmt *ins = n == FIDX_SEAL_FILE_FIELDS ? st->insert : st->insert_short;
	int rc = bind_fields(ins, f, n);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(ins) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	if (rc != SQLITE_OK) {
		/* sqlite3_reset() returns the step's error and keeps its message. */
		sqlite3_reset(ins);
		sqlite_fail(st, err, "write");
		sqlite_rollback(st);
		return -1;
	}
	sqlite3_reset(ins);
	struct sqlite_scan *c = rec->has_meta ? scan_followed(st, rec->scan_id) : NULL;
	if (c) {
		scan_span(c, &rec->meta.mtime);
		if (rec->meta.has_btime)
			scan_span(c, &rec->meta.btime);
	}
	/* The row's seal line, from the values just bound, and its id. */
	f[0] = (struct fidx_seal_field){.kind = FIDX_SEAL_INT,
					.i = sqlite3_last_insert_rowid(st->db)};
	if (st->sealer && fidx_sealer_row(st->sealer, rec->scan_id, f, err) < 0) {
		seal_fail(st, err);
		sqlite_rollback(st);
		return -1;
	}
	if (++st->pending >= st->batch_rows)
		return sqlite_flush(base, err);
	return 0;
}

unsigned sqlite_pending(const struct fidx_store *base)
{
	return ((const struct sqlite_store *)base)->pending;
}

int sqlite_flush(struct fidx_store *base, struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	if (!st->in_txn)
		return 0;
	/* The file_seal rows of the rows added go into the same transaction, and so
	 * does the time the scans have run. */
	if ((st->sealer && fidx_sealer_sync(st->sealer, err) < 0 && seal_fail(st, err)) ||
	    update_run_times(st, err) < 0 || sqlite_exec(st, "COMMIT", "write", err) < 0) {
		sqlite_rollback(st);
		return -1;
	}
	st->in_txn = false;
	st->pending = 0;
	return 0;
}

int64_t sqlite_begin_scan(struct fidx_store *base, const struct fidx_scan_info *info,
			  struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	sqlite3_stmt *s;
	int64_t id;

	if (sqlite_flush(base, err) < 0)
		return -1;
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO scan (root, host, os, kernel, arch, version, options,"
			       " started_ns, status, pid, uuid)"
			       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
			       -1, &s, NULL) != SQLITE_OK)
		return sqlite_fail(st, err, "prepare");
	const char *text[] = {info->root, info->host, info->os, info->kernel,
			      info->arch, info->version, info->options};
	for (int i = 0; i < 7; i++)
		sqlite3_bind_text(s, i + 1, text[i], -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 8, info->started_ns);
	sqlite3_bind_int64(s, 9, getpid());
	sqlite3_bind_text(s, 10, info->uuid, -1, SQLITE_STATIC);
	if (sqlite3_step(s) != SQLITE_DONE) {
		sqlite3_reset(s);
		sqlite_fail(st, err, "write");
		sqlite3_finalize(s);
		return -1;
	}
	id = sqlite3_last_insert_rowid(st->db);
	sqlite3_finalize(s);
	st->begun = true;
	int64_t start = fidx_time_of_ns(info->started_ns).sec;
	if (scan_follow(st, id, 0, start, start, err) < 0)
		return -1;
	if (st->sealer && fidx_sealer_begin(st->sealer, id, err) < 0)
		return seal_fail(st, err);
	return id;
}

int sqlite_claim_scan(struct fidx_store *base, int64_t scan_id, int64_t seen_pid,
		      struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(st->db, "UPDATE scan SET pid = ? WHERE id = ?"
				    " AND status <> 'complete' AND pid IS ?", -1, &s, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, getpid());
		sqlite3_bind_int64(s, 2, scan_id);
		if (seen_pid > 0)
			sqlite3_bind_int64(s, 3, seen_pid);
		rc = sqlite3_step(s);
	}
	int changed = rc == SQLITE_DONE ? sqlite3_changes(st->db) : -1;
	if (changed < 0)
		sqlite_fail(st, err, "write");
	sqlite3_finalize(s);
	return changed < 0 ? -1 : changed == 1;
}

int sqlite_resume_scan(struct fidx_store *base, int64_t scan_id, struct fidx_scan_totals *so_far,
		       struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	sqlite3_stmt *s = NULL;
	char sql[256];

	if (sqlite_flush(base, err) < 0 || sqlite_exec(st, "BEGIN IMMEDIATE", "write", err) < 0)
		return -1;
	/* How long the earlier runs took: run_ns since schema 4, else the end of the last one. */
	if (sqlite3_prepare_v2(st->db, "SELECT coalesce(run_ns, finished_ns - started_ns, 0),"
			       " started_ns / 1000000000 FROM scan WHERE id = ?",
			       -1, &s, NULL) != SQLITE_OK) {
		sqlite_fail(st, err, "read");
		goto fail;
	}
	sqlite3_bind_int64(s, 1, scan_id);
	int64_t ran_before = 0, start = 0;
	if (sqlite3_step(s) == SQLITE_ROW) {
		ran_before = sqlite3_column_int64(s, 0);
		start = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	s = NULL;
	snprintf(sql, sizeof(sql), "UPDATE scan SET status = 'running', finished_ns = NULL,"
		 " pid = %d WHERE id = %" PRId64 " AND status <> 'complete'", (int)getpid(), scan_id);
	if (sqlite_exec(st, sql, "write", err) < 0)
		goto fail;
	if (sqlite3_changes(st->db) != 1) {
		fidx_fail(err, EINVAL, "cannot resume scan %" PRId64 " in '%s': it is complete or gone",
			  scan_id, fidx_quote(st->path));
		goto fail;
	}
	/* With their digests from `fidx dupes`: a new row may take a dropped row's id. */
	snprintf(sql, sizeof(sql), "DELETE FROM file_digest WHERE file_id IN (SELECT id FROM file"
		 " WHERE scan_id = %" PRId64 " AND error IN ('" FIDX_ERROR_NOT_READ "', '"
		 FIDX_ERROR_NOT_HASHED "'))", scan_id);
	if (sqlite_exec(st, sql, "write", err) < 0)
		goto fail;
	snprintf(sql, sizeof(sql), "DELETE FROM file WHERE scan_id = %" PRId64
		 " AND error IN ('" FIDX_ERROR_NOT_READ "', '" FIDX_ERROR_NOT_HASHED "')", scan_id);
	if (sqlite_exec(st, sql, "write", err) < 0)
		goto fail;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT count(*), coalesce(sum(type = 'f'), 0),"
			       " coalesce(sum(type = 'd'), 0),"
			       " coalesce(sum(CASE WHEN type = 'f' THEN size END), 0), count(error),"
			       " count(digests_from),"
			       " coalesce(sum(type = 'f' AND digests_from IS NULL AND"
			       "  coalesce(md5, sha1, sha256, sha512, xxh128) IS NOT NULL), 0),"
			       " min(" FIDX_TIME_SEC_SQL("mtime") "), max(" FIDX_TIME_SEC_SQL("mtime") "),"
			       " min(" FIDX_TIME_SEC_SQL("btime") "), max(" FIDX_TIME_SEC_SQL("btime") ")"
			       " FROM file WHERE scan_id = ?", -1, &s, NULL) != SQLITE_OK) {
		sqlite_fail(st, err, "read");
		goto fail;
	}
	sqlite3_bind_int64(s, 1, scan_id);
	if (sqlite3_step(s) != SQLITE_ROW) {
		sqlite_fail(st, err, "read");
		goto fail;
	}
	*so_far = (struct fidx_scan_totals){
		.entries = (uint64_t)sqlite3_column_int64(s, 0),
		.files = (uint64_t)sqlite3_column_int64(s, 1),
		.dirs = (uint64_t)sqlite3_column_int64(s, 2),
		.bytes = (uint64_t)sqlite3_column_int64(s, 3),
		.errors = (uint64_t)sqlite3_column_int64(s, 4),
		.reused = (uint64_t)sqlite3_column_int64(s, 5),
		.hashed = (uint64_t)sqlite3_column_int64(s, 6),
	};
	/* The span of the times the kept rows show: local_time covers them too. */
	int64_t tmin = start, tmax = start;
	for (int c = 7; c <= 10; c++) {
		if (sqlite3_column_type(s, c) == SQLITE_NULL)
			continue;
		int64_t t = sqlite3_column_int64(s, c);
		tmin = t < tmin ? t : tmin;
		tmax = t > tmax ? t : tmax;
	}
	sqlite3_finalize(s);
	s = NULL;
	if (!scan_followed(st, scan_id) && scan_follow(st, scan_id, ran_before, tmin, tmax, err) < 0)
		goto fail;
	/* The seal goes on from the rows kept, read back once (their file_seal rows anew). */
	if (st->sealer && sqlite_seal_resume(st, scan_id, err) < 0) {
		seal_fail(st, err);
		goto fail;
	}
	if (sqlite_exec(st, "COMMIT", "write", err) < 0)
		goto fail;
	st->begun = true;
	return 0;
fail:
	sqlite3_finalize(s);
	sqlite_rollback(st);
	return -1;
}

/* Binds a uint64 as SQLite's int64 (two's complement above INT64_MAX). */
static int bind_u64(sqlite3_stmt *s, int i, uint64_t v)
{
	return sqlite3_bind_int64(s, i, (sqlite3_int64)v);
}

/*
 * Writes the end of scan scan_id in one transaction (and, for a complete
 * scan, its local_time rows, and its seal into seal when seal is not NULL).
 * Returns 1 when sealed, 0 when ended, or -1 with err set.
 */
static int end_scan(struct sqlite_store *st, int64_t scan_id, const struct fidx_scan_totals *totals,
		    uint8_t *seal, struct fidx_error *err)
{
	sqlite3_stmt *s = NULL;
	int ended = 0;

	if (sqlite_exec(st, "BEGIN IMMEDIATE", "write", err) < 0)
		return -1;
	struct sqlite_scan *c = scan_followed(st, scan_id);
	if (sqlite3_prepare_v2(st->db,
			       "UPDATE scan SET finished_ns = ?, status = ?, entries = ?,"
			       " files = ?, dirs = ?, bytes = ?, errors = ?, reused = ?, hashed = ?,"
			       " base_scan_id = coalesce(?, base_scan_id),"
			       " run_ns = coalesce(?, run_ns) WHERE id = ?",
			       -1, &s, NULL) != SQLITE_OK) {
		sqlite_fail(st, err, "prepare");
		goto fail;
	}
	sqlite3_bind_int64(s, 1, totals->finished_ns);
	sqlite3_bind_text(s, 2, totals->status, -1, SQLITE_STATIC);
	bind_u64(s, 3, totals->entries);
	bind_u64(s, 4, totals->files);
	bind_u64(s, 5, totals->dirs);
	bind_u64(s, 6, totals->bytes);
	bind_u64(s, 7, totals->errors);
	bind_u64(s, 8, totals->reused);
	bind_u64(s, 9, totals->hashed);
	if (totals->base_scan_id > 0)
		sqlite3_bind_int64(s, 10, totals->base_scan_id);
	else
		sqlite3_bind_null(s, 10);
	if (c)
		sqlite3_bind_int64(s, 11, scan_run_ns(c));
	else
		sqlite3_bind_null(s, 11);
	sqlite3_bind_int64(s, 12, scan_id);
	if (sqlite3_step(s) != SQLITE_DONE) {
		sqlite3_reset(s);
		sqlite_fail(st, err, "write");
		goto fail;
	}
	if (sqlite3_changes(st->db) != 1) {
		fidx_fail(err, ENOENT, "cannot write database '%s': no scan %" PRId64,
			  fidx_quote(st->path), scan_id);
		goto fail;
	}
	sqlite3_finalize(s);
	s = NULL;
	/* The local dates of `data`, which shows complete scans; the end is one of its times. */
	if (c && !st->scratch && strcmp(totals->status, "complete") == 0) {
		scan_span(c, &(struct fidx_time){.sec = fidx_time_of_ns(totals->finished_ns).sec});
		if (write_local_time(st, c, err) < 0)
			goto fail;
	}
	if (seal && st->sealer && strcmp(totals->status, "complete") == 0) {
		if (sqlite_seal_scan(st, scan_id, seal, err) < 0) {
			seal_fail(st, err);
			goto fail;
		}
		ended = 1;
	}
	if (sqlite_exec(st, "COMMIT", "write", err) < 0)
		goto fail;
	if (c)
		*c = st->scans[--st->nscans];
	return ended;
fail:
	sqlite3_finalize(s);
	sqlite_rollback(st);
	return -1;
}

int sqlite_end_scan(struct fidx_store *base, int64_t scan_id, const struct fidx_scan_totals *totals,
		    uint8_t *seal, struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	struct fidx_error first;
	/* Rows still pending are committed first; a full disk may refuse them. */
	int flushed = sqlite_flush(base, err), ended;
	if (flushed == 0 && (ended = end_scan(st, scan_id, totals, seal, err)) >= 0)
		return ended;
	/*
	 * The disk may be full: with the ballast given back, the end fits.  (A
	 * seal that failed is read back from the rows: the rollback forgot it.)
	 */
	fidx_fail_copy(&first, err);
	ballast_release(st);
	if (flushed == 0 && (ended = end_scan(st, scan_id, totals, seal, err)) >= 0)
		return ended;
	/* Rows lost, or the end refused even so: the scan did not complete. */
	if (strcmp(totals->status, "failed") != 0) {
		struct fidx_scan_totals failed = *totals;
		failed.status = "failed";
		end_scan(st, scan_id, &failed, NULL, NULL);
	}
	return fidx_fail_copy(err, &first);
}

int sqlite_seal(struct fidx_store *base, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN],
		struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	if (!st->sealer)
		return 0;
	if (sqlite_flush(base, err) < 0 || sqlite_exec(st, "BEGIN IMMEDIATE", "write", err) < 0)
		return -1;
	if ((sqlite_seal_scan(st, scan_id, seal, err) < 0 && seal_fail(st, err)) ||
	    sqlite_exec(st, "COMMIT", "write", err) < 0) {
		sqlite_rollback(st);
		return -1;
	}
	return 1;
}

#define INDEX_CACHE_KIB 2048 /* page cache while the indexes are built */

/*
 * Sets the page cache to kib KiB.  SQLite's sorter (CREATE INDEX) takes as
 * much memory as the cache before it spills sorted runs to temporary files.
 */
static int set_cache(struct sqlite_store *st, int kib, struct fidx_error *err)
{
	char pragma[48];
	snprintf(pragma, sizeof(pragma), "PRAGMA cache_size = %d", -kib);
	return sqlite_exec(st, pragma, "index", err);
}

int sqlite_build_indexes(struct fidx_store *base, struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	struct fidx_error why;
	int ret = -1;

	if (st->scratch)
		return sqlite_flush(base, err);
	/*
	 * With a small cache, the cache's pages are given back and the sort of
	 * CREATE INDEX stays small (runs that fit the CPU's caches, merged from
	 * temporary files): 2 MiB built the 1M tree's index faster than 32 MiB
	 * and took 40 MiB off the scan's peak RSS (docs/BENCHMARKS.md).
	 */
	if (sqlite_flush(base, err) < 0 || set_cache(st, INDEX_CACHE_KIB, err) < 0)
		return -1;
	if (sqlite_exec(st, FIDX_FILE_SCAN_PATH_SQL, "index", err) < 0)
		goto out;
	if (fidx_pathindex_build_missing(st->db, &why) < 0) {
		fidx_fail(err, why.code, "cannot index database '%s': %s", fidx_quote(st->path),
			  why.msg);
		goto out;
	}
	ret = 0;
out:
	if (set_cache(st, st->cache_kib, ret < 0 ? NULL : err) < 0)
		ret = -1;
	return ret;
}

int sqlite_add_digests(struct fidx_store *base, const struct fidx_file_digest *d, size_t n,
		       struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	sqlite3_stmt *s;

	if (sqlite_flush(base, err) < 0)
		return -1;
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO file_digest (file_id, read_ns, edge_block, edges, sha256)"
			       " VALUES (?, ?, ?, ?, ?) ON CONFLICT (file_id) DO UPDATE SET"
			       " read_ns = excluded.read_ns,"
			       " edge_block = coalesce(excluded.edge_block, edge_block),"
			       " edges = coalesce(excluded.edges, edges),"
			       " sha256 = coalesce(excluded.sha256, sha256)",
			       -1, &s, NULL) != SQLITE_OK)
		return sqlite_fail(st, err, "prepare");
	if (sqlite_exec(st, "BEGIN IMMEDIATE", "write", err) < 0) {
		sqlite3_finalize(s);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int rc = sqlite3_bind_int64(s, 1, d[i].file_id);
		rc |= sqlite3_bind_int64(s, 2, d[i].read_ns);
		if (d[i].edge_block) {
			rc |= sqlite3_bind_int64(s, 3, d[i].edge_block);
			rc |= sqlite3_bind_blob(s, 4, d[i].edges, sizeof(d[i].edges), SQLITE_STATIC);
		} else {
			rc |= sqlite3_bind_null(s, 3);
			rc |= sqlite3_bind_null(s, 4);
		}
		rc |= d[i].has_sha256
			      ? sqlite3_bind_blob(s, 5, d[i].sha256, sizeof(d[i].sha256), SQLITE_STATIC)
			      : sqlite3_bind_null(s, 5);
		if (rc != SQLITE_OK || sqlite3_step(s) != SQLITE_DONE) {
			sqlite3_reset(s);
			sqlite_fail(st, err, "write");
			sqlite3_finalize(s);
			sqlite_rollback(st);
			return -1;
		}
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	if (sqlite_exec(st, "COMMIT", "write", err) < 0) {
		sqlite_rollback(st);
		return -1;
	}
	return 0;
}
