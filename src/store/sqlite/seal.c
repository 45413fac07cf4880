/*
 * seal.c - the seal in a SQLite store (seal.h has the format): row hashes
 * kept in file_seal, seals written into scan.seal, scans read back to be
 * sealed, and `fidx verify`'s check.
 *
 * The sealer (core) makes the lines and hashes them; here its row hashes
 * become file_seal rows (put_hashes(): 128 rows an INSERT), and the rows of
 * a scan are read back as fields when a seal must be made from what is
 * stored: a resumed scan, and fidx verify.  A value read back is a field of
 * its kind when fidx could have written it there, else a FIDX_SEAL_OTHER
 * field that SQLite's own quote() formats (quote_value()), so that the lines
 * agree with the SQL form of docs/SCHEMA.md for any content.
 *
 * Checking (sqlite_verify()) reads the rows back through the same lines:
 *
 *     pass 1  the lines, then the scan row's ──► computed seal
 *             (equal to scan.seal: intact, done)
 *     pass 2  each line's hash against its file_seal row: altered, added;
 *             file_seal rows of the scan without their file row: removed;
 *             then the scan row's counts against its rows
 *
 * The file rows of a scan are a range of ids (interleaved only with the
 * other roots of the same run), read as a rowid range, without an index and
 * without a sort.
 */
#include "sqlite.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_ROWS 128 /* file_seal rows an INSERT (seal.c of core batches as many) */

/* Fills err with "cannot <what> scan N: <SQLite's reason>".  Returns -1. */
static int scan_fail(struct sqlite_store *st, int64_t scan_id, const char *what,
		     struct fidx_error *err)
{
	return fidx_fail(err, EIO, "cannot %s scan %" PRId64 ": %s", what, scan_id,
			 sqlite_why(st->db));
}

/* Appends what SQLite's quote() makes of value other (a sqlite3_value). */
static int quote_value(void *arg, const void *other, bool bytes, struct fidx_seal_lines *l,
		       struct fidx_error *err)
{
	struct sqlite_store *st = arg;
	if (!st->quote && sqlite3_prepare_v2(st->db, "SELECT quote(?1), quote(CAST(?1 AS BLOB))",
					     -1, &st->quote, NULL) != SQLITE_OK)
		return fidx_fail(err, EIO, "cannot read: %s", sqlite_why(st->db));
	int ret = -1;
	if (sqlite3_bind_value(st->quote, 1, other) != SQLITE_OK ||
	    sqlite3_step(st->quote) != SQLITE_ROW) {
		fidx_fail(err, EIO, "cannot read: %s", sqlite_why(st->db));
	} else {
		const char *t = (const char *)sqlite3_column_text(st->quote, bytes);
		size_t n = (size_t)sqlite3_column_bytes(st->quote, bytes);
		if (!t)
			fidx_fail_nomem(err);
		else
			ret = fidx_seal_line_append(l, t, n, err);
	}
	sqlite3_reset(st->quote);
	return ret;
}

/*
 * Fills f with the first n columns of the current row of s, which are
 * cols[0..n-1]: an integer in an integer column, text or a blob in a bytes
 * column; a value of a kind fidx never writes there is OTHER.  The fields
 * are valid until s moves.  Returns 0, or -1 with err set (out of memory).
 */
static int row_fields(sqlite3_stmt *s, const struct fidx_seal_column *cols, size_t n,
		      struct fidx_seal_field *f, struct fidx_error *err)
{
	for (int c = 0; c < (int)n; c++) {
		int type = sqlite3_column_type(s, c);
		f[c] = (struct fidx_seal_field){.kind = FIDX_SEAL_NULL};
		if (type == SQLITE_NULL)
			continue;
		if (type == SQLITE_INTEGER && !cols[c].bytes) {
			f[c].kind = FIDX_SEAL_INT;
			f[c].i = sqlite3_column_int64(s, c);
		} else if ((type == SQLITE_TEXT || type == SQLITE_BLOB) && cols[c].bytes) {
			/* A TEXT value's bytes as stored (fidx databases are UTF-8). */
			f[c].kind = FIDX_SEAL_BYTES;
			f[c].p = sqlite3_column_blob(s, c);
			f[c].n = (size_t)sqlite3_column_bytes(s, c);
			if (!f[c].p && f[c].n)
				return fidx_fail_nomem(err);
		} else {
			f[c].kind = FIDX_SEAL_OTHER;
			f[c].other = sqlite3_column_value(s, c);
		}
	}
	return 0;
}

/*
 * Writes "SELECT <cols>" and rest into buf; a column that is not there[i]
 * (a database of a schema before the one that added it) is NULL.
 */
static void select_sql(const bool *there, char *buf, size_t size,
		       const struct fidx_seal_column *cols, size_t n, const char *rest)
{
	size_t len = (size_t)snprintf(buf, size, "SELECT");
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s %s", i ? "," : "",
					there[i] ? cols[i].name : "NULL");
	if (len < size)
		snprintf(buf + len, size - len, "%s", rest);
}

/* Prepares sql into *s with scan_id bound to ?1.  Returns 0, or -1 with err set. */
static int prepare(struct sqlite_store *st, int64_t scan_id, const char *sql, sqlite3_stmt **s,
		   struct fidx_error *err)
{
	if (sqlite3_prepare_v2(st->db, sql, -1, s, NULL) != SQLITE_OK)
		return scan_fail(st, scan_id, "read", err);
	sqlite3_bind_int64(*s, 1, scan_id);
	return 0;
}

/*
 * Sets there[i] to whether table has column cols[i].name, for every column
 * from always on (those before are in every schema): what the lines are read
 * with, whatever user_version says (a database of an earlier schema is read
 * as it is, its missing columns NULL).  Returns 0, or -1 with err set.
 */
static int present_columns(struct sqlite_store *st, int64_t scan_id, const char *table,
			   const struct fidx_seal_column *cols, size_t n, size_t always,
			   bool *there, struct fidx_error *err)
{
	sqlite3_stmt *s;
	if (prepare(st, scan_id, "SELECT 1 FROM pragma_table_info(?2) WHERE name = ?3", &s,
		    err) < 0)
		return -1;
	sqlite3_bind_text(s, 2, table, -1, SQLITE_STATIC);
	for (size_t i = 0; i < n; i++) {
		there[i] = true;
		if (i < always)
			continue;
		sqlite3_bind_text(s, 3, cols[i].name, -1, SQLITE_STATIC);
		int rc = sqlite3_step(s);
		sqlite3_reset(s);
		/* A failed step (out of memory) is not an older schema: that would seal other lines. */
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			sqlite3_finalize(s);
			return scan_fail(st, scan_id, "read", err);
		}
		there[i] = rc == SQLITE_ROW;
	}
	sqlite3_finalize(s);
	return 0;
}

/*
 * Reads the row of scan scan_id, with extra columns after the sealed ones
 * (from FIDX_SEAL_SCAN_FIELDS on), into *s, left on the row.  Returns 0, or
 * -1 with err set (also when there is no such scan).
 */
static int scan_row(struct sqlite_store *st, int64_t scan_id, const char *extra,
		    sqlite3_stmt **s, struct fidx_error *err)
{
	char sql[1024], rest[256];
	bool there[FIDX_SEAL_SCAN_FIELDS];
	if (present_columns(st, scan_id, "scan", fidx_seal_scan_columns, FIDX_SEAL_SCAN_FIELDS,
			    FIDX_SEAL_SCAN_ALWAYS, there, err) < 0)
		return -1;
	snprintf(rest, sizeof(rest), "%s FROM scan WHERE id = ?1", extra);
	select_sql(there, sql, sizeof(sql), fidx_seal_scan_columns, FIDX_SEAL_SCAN_FIELDS, rest);
	if (prepare(st, scan_id, sql, s, err) < 0)
		return -1;
	int rc = sqlite3_step(*s);
	if (rc == SQLITE_DONE)
		return fidx_fail(err, ENOENT, "no scan %" PRId64, scan_id);
	if (rc != SQLITE_ROW)
		return scan_fail(st, scan_id, "read", err);
	return 0;
}

/*
 * Prepares the walk over the scan's file rows in id order, with extra
 * columns after the sealed ones (from FIDX_SEAL_FILE_FIELDS on): a rowid
 * range from the scan's first id to its last, whatever the other scans'
 * rows within.  Sets *lo and *hi to that range (0 and -1 when there is no
 * row).  Returns 0, or -1 with err set.
 */
static int file_rows(struct sqlite_store *st, int64_t scan_id, const char *extra,
		     sqlite3_stmt **s, int64_t *lo, int64_t *hi, struct fidx_error *err)
{
	sqlite3_stmt *range;
	char sql[4096], rest[512];

	if (prepare(st, scan_id, "SELECT min(id), max(id) FROM file WHERE scan_id = ?1", &range,
		    err) < 0)
		return -1;
	if (sqlite3_step(range) != SQLITE_ROW) {
		scan_fail(st, scan_id, "read", err);
		sqlite3_finalize(range);
		return -1;
	}
	bool none = sqlite3_column_type(range, 0) == SQLITE_NULL;
	*lo = none ? 0 : sqlite3_column_int64(range, 0);
	*hi = none ? -1 : sqlite3_column_int64(range, 1);
	sqlite3_finalize(range);

	bool there[FIDX_SEAL_FILE_FIELDS];
	if (present_columns(st, scan_id, "file", fidx_seal_file_columns, FIDX_SEAL_FILE_FIELDS,
			    FIDX_SEAL_FILE_ALWAYS, there, err) < 0)
		return -1;
	snprintf(rest, sizeof(rest), "%s FROM file NOT INDEXED"
		 " WHERE id BETWEEN ?2 AND ?3 AND scan_id = ?1 ORDER BY id", extra);
	select_sql(there, sql, sizeof(sql), fidx_seal_file_columns, FIDX_SEAL_FILE_FIELDS, rest);
	if (prepare(st, scan_id, sql, s, err) < 0)
		return -1;
	sqlite3_bind_int64(*s, 2, *lo);
	sqlite3_bind_int64(*s, 3, *hi);
	return 0;
}

/* Prepares the INSERTs of BATCH_ROWS file_seal rows and of one.  Returns 0, or -1 with err set. */
static int prepare_inserts(struct sqlite_store *st, int64_t scan_id, struct fidx_error *err)
{
	static const char head[] =
		"INSERT INTO file_seal (file_id, scan_id, row_hash) VALUES (?, ?, ?)";
	char sql[sizeof(head) + BATCH_ROWS * 12];
	size_t len = (size_t)snprintf(sql, sizeof(sql), "%s", head);
	for (int i = 1; i < BATCH_ROWS; i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", (?, ?, ?)");
	if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st->seal_many, NULL) !=
		    SQLITE_OK ||
	    sqlite3_prepare_v3(st->db, head, -1, SQLITE_PREPARE_PERSISTENT, &st->seal_one, NULL) !=
		    SQLITE_OK)
		return scan_fail(st, scan_id, "seal", err);
	return 0;
}

/*
 * The sealer's put: inserts the file_seal rows of a batch, with one
 * statement when it is full, else one row at a time.  Returns 0, or -1 with
 * err set.
 */
static int put_hashes(void *arg, const int64_t *file_ids, const int64_t *scan_ids,
		      const uint8_t (*hashes)[FIDX_ROW_HASH_LEN], size_t n, struct fidx_error *err)
{
	struct sqlite_store *st = arg;
	if (n && !st->seal_many && prepare_inserts(st, scan_ids[0], err) < 0)
		return -1;
	sqlite3_stmt *s = n == BATCH_ROWS ? st->seal_many : st->seal_one;
	size_t per = n == BATCH_ROWS ? BATCH_ROWS : 1;
	for (size_t done = 0; done < n; done += per) {
		for (size_t i = 0; i < per; i++) {
			sqlite3_bind_int64(s, (int)(3 * i + 1), file_ids[done + i]);
			sqlite3_bind_int64(s, (int)(3 * i + 2), scan_ids[done + i]);
			sqlite3_bind_blob(s, (int)(3 * i + 3), hashes[done + i], FIDX_ROW_HASH_LEN,
					  SQLITE_STATIC);
		}
		int rc = sqlite3_step(s);
		sqlite3_reset(s);
		if (rc != SQLITE_DONE)
			return scan_fail(st, scan_ids[done], "seal", err);
	}
	return 0;
}

int sqlite_seal_setup(struct sqlite_store *st, struct fidx_error *err)
{
	struct fidx_error why;
	if (!(st->sealer = fidx_sealer_new(put_hashes, st, &why)))
		return fidx_fail(err, why.code, "cannot open database '%s': %s", fidx_quote(st->path),
				 why.msg);
	fidx_sealer_quote(st->sealer, quote_value, st);
	return 0;
}

void sqlite_seal_close(struct sqlite_store *st)
{
	fidx_sealer_free(st->sealer);
	st->sealer = NULL;
	sqlite3_finalize(st->seal_many);
	sqlite3_finalize(st->seal_one);
	sqlite3_finalize(st->quote);
	st->seal_many = st->seal_one = st->quote = NULL;
}

int sqlite_seal_resume(struct sqlite_store *st, int64_t scan_id, struct fidx_error *err)
{
	sqlite3_stmt *s = NULL;
	struct fidx_seal_field f[FIDX_SEAL_FILE_FIELDS];
	int64_t lo, hi;
	int rc;

	if (fidx_sealer_sync(st->sealer, err) < 0 || fidx_sealer_begin(st->sealer, scan_id, err) < 0)
		return -1;
	if (prepare(st, scan_id, "DELETE FROM file_seal WHERE scan_id = ?1", &s, err) < 0)
		return -1;
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return scan_fail(st, scan_id, "seal", err);
	if (file_rows(st, scan_id, "", &s, &lo, &hi, err) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (row_fields(s, fidx_seal_file_columns, FIDX_SEAL_FILE_FIELDS, f, err) < 0 ||
		    fidx_sealer_row(st->sealer, scan_id, f, err) < 0)
			break;
	sqlite3_finalize(s);
	if (rc == SQLITE_ROW)
		return -1;
	if (rc != SQLITE_DONE)
		return scan_fail(st, scan_id, "read", err);
	return fidx_sealer_sync(st->sealer, err);
}

int sqlite_seal_scan(struct sqlite_store *st, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN],
		     struct fidx_error *err)
{
	struct fidx_seal_field f[FIDX_SEAL_SCAN_FIELDS];
	sqlite3_stmt *scan = NULL, *set = NULL;
	int ret = -1;

	if (scan_row(st, scan_id, ", status, seal IS NOT NULL", &scan, err) < 0)
		goto out;
	const char *status = (const char *)sqlite3_column_text(scan, FIDX_SEAL_SCAN_FIELDS);
	if (!status || strcmp(status, "complete") != 0) {
		fidx_fail(err, EINVAL, "scan %" PRId64 " is not complete: only complete scans are"
			  " sealed", scan_id);
		goto out;
	}
	if (sqlite3_column_int(scan, FIDX_SEAL_SCAN_FIELDS + 1)) {
		fidx_fail(err, EINVAL, "scan %" PRId64 " is sealed already", scan_id);
		goto out;
	}
	if (!fidx_sealer_sealing(st->sealer, scan_id) && sqlite_seal_resume(st, scan_id, err) < 0)
		goto out;
	if (row_fields(scan, fidx_seal_scan_columns, FIDX_SEAL_SCAN_FIELDS, f, err) < 0 ||
	    fidx_sealer_end(st->sealer, scan_id, f, seal, err) < 0)
		goto out;
	if (prepare(st, scan_id, "UPDATE scan SET seal = ?2 WHERE id = ?1", &set, err) < 0)
		goto out;
	sqlite3_bind_blob(set, 2, seal, FIDX_SEAL_LEN, SQLITE_STATIC);
	if (sqlite3_step(set) != SQLITE_DONE) {
		scan_fail(st, scan_id, "seal", err);
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(scan);
	sqlite3_finalize(set);
	return ret;
}

/*
 * Pass 2 of a check: compares each file row's line with its file_seal row
 * (the one of the same scan) and reports the rows altered or added.
 * Returns 0, or -1 with err set.
 */
static int check_rows(struct sqlite_store *st, int64_t scan_id, struct fidx_seal_lines *l,
		      fidx_seal_found_fn *found, void *arg, struct fidx_seal_result *r,
		      int64_t *lo, int64_t *hi, struct fidx_error *err)
{
	sqlite3_stmt *rows;
	struct fidx_seal_field f[FIDX_SEAL_FILE_FIELDS];
	uint8_t hash[FIDX_ROW_HASH_LEN];
	int rc;

	if (file_rows(st, scan_id, ", (SELECT row_hash FROM file_seal WHERE file_id = file.id"
		      " AND scan_id = file.scan_id)", &rows, lo, hi, err) < 0)
		return -1;
	while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
		if (row_fields(rows, fidx_seal_file_columns, FIDX_SEAL_FILE_FIELDS, f, err) < 0 ||
		    fidx_seal_line(l, fidx_seal_file_columns, f, FIDX_SEAL_FILE_FIELDS,
				   FIDX_SEAL_FILE_ALWAYS, err) < 0 ||
		    fidx_seal_row_hash(l, hash, err) < 0) {
			sqlite3_finalize(rows);
			return -1;
		}
		struct fidx_seal_finding finding = {.file_id = sqlite3_column_int64(rows, 0)};
		const void *recorded = sqlite3_column_blob(rows, FIDX_SEAL_FILE_FIELDS);
		int n = sqlite3_column_bytes(rows, FIDX_SEAL_FILE_FIELDS);
		if (!recorded && sqlite3_column_type(rows, FIDX_SEAL_FILE_FIELDS) == SQLITE_NULL) {
			finding.change = FIDX_SEAL_ADDED;
			r->added++;
		} else if (n != FIDX_ROW_HASH_LEN || memcmp(recorded, hash, sizeof(hash)) != 0) {
			finding.change = FIDX_SEAL_ALTERED;
			r->altered++;
		} else {
			continue;
		}
		finding.path = (const char *)sqlite3_column_text(rows, FIDX_COL_PATH);
		found(arg, &finding);
	}
	if (rc != SQLITE_DONE)
		scan_fail(st, scan_id, "read", err);
	sqlite3_finalize(rows);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * Reports the sealed rows of the scan (file_seal rows with its scan_id)
 * whose file row is gone or now belongs to another scan.  Returns 0, or -1
 * with err set.
 */
static int check_removed(struct sqlite_store *st, int64_t scan_id, fidx_seal_found_fn *found,
			 void *arg, struct fidx_seal_result *r, struct fidx_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if (prepare(st, scan_id, "SELECT file_id FROM file_seal WHERE scan_id = ?1 AND NOT EXISTS"
		    " (SELECT 1 FROM file WHERE id = file_seal.file_id AND scan_id = ?1)"
		    " ORDER BY file_id", &s, err) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct fidx_seal_finding f = {.change = FIDX_SEAL_REMOVED,
					      .file_id = sqlite3_column_int64(s, 0)};
		r->removed++;
		found(arg, &f);
	}
	if (rc != SQLITE_DONE)
		scan_fail(st, scan_id, "read", err);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Reports field of the scan row when it says says and its rows say rows. */
static void report_field(fidx_seal_found_fn *found, void *arg, struct fidx_seal_result *r,
			 const char *field, const char *says, const char *rows)
{
	struct fidx_seal_finding f = {.change = FIDX_SEAL_FIELD, .field = field, .says = says,
				      .rows = rows};
	r->fields++;
	found(arg, &f);
}

/*
 * Checks the scan row against its file rows (ids lo to hi, read in id
 * order): entries, files, dirs, bytes and errors are counted again (as fidx
 * scan counts them), root must be the path of one of the rows, status must be
 * 'complete' (only complete scans are sealed).  Reports each field that
 * disagrees.  Returns 0, or -1 with err set.
 */
static int check_fields(struct sqlite_store *st, int64_t scan_id, fidx_seal_found_fn *found,
			void *arg, struct fidx_seal_result *r, int64_t lo, int64_t hi,
			struct fidx_error *err)
{
	static const char *const names[] = {"entries", "files", "dirs", "bytes", "errors"};
	sqlite3_stmt *s;
	char says[32], rows[32];

	if (prepare(st, scan_id, "SELECT s.entries, s.files, s.dirs, s.bytes, s.errors, c.*,"
		    " s.status, s.root FROM scan s, (SELECT count(*),"
		    " count(CASE WHEN type = 'f' THEN 1 END),"
		    " count(CASE WHEN type = 'd' THEN 1 END),"
		    " total(CASE WHEN type = 'f' THEN size END), count(error),"
		    " count(CASE WHEN path = (SELECT root FROM scan WHERE id = ?1) THEN 1 END)"
		    " FROM file NOT INDEXED WHERE id BETWEEN ?2 AND ?3 AND scan_id = ?1) c"
		    " WHERE s.id = ?1", &s, err) < 0)
		return -1;
	sqlite3_bind_int64(s, 2, lo);
	sqlite3_bind_int64(s, 3, hi);
	if (sqlite3_step(s) != SQLITE_ROW) {
		scan_fail(st, scan_id, "read", err);
		sqlite3_finalize(s);
		return -1;
	}
	for (int i = 0; i < 5; i++) {
		double counted = sqlite3_column_double(s, 5 + i);
		if (sqlite3_column_type(s, i) == SQLITE_INTEGER &&
		    (double)sqlite3_column_int64(s, i) == counted)
			continue;
		const char *t = (const char *)sqlite3_column_text(s, i);
		snprintf(says, sizeof(says), "%s", t ? t : "NULL");
		snprintf(rows, sizeof(rows), "%.0f", counted);
		report_field(found, arg, r, names[i], says, rows);
	}
	const char *status = (const char *)sqlite3_column_text(s, 11);
	if (!status || strcmp(status, "complete") != 0)
		report_field(found, arg, r, "status", status ? status : "NULL", "complete");
	const char *root = (const char *)sqlite3_column_text(s, 12);
	if (sqlite3_column_int64(s, 10) == 0)
		report_field(found, arg, r, "root", root ? root : "NULL", "no row has this path");
	sqlite3_finalize(s);
	return 0;
}

int sqlite_verify(struct fidx_store *base, int64_t scan_id, fidx_seal_found_fn *found, void *arg,
		  struct fidx_seal_result *r, struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	struct fidx_seal_field f[FIDX_SEAL_FILE_FIELDS];
	struct fidx_seal_lines *l = NULL;
	struct fidx_seal_sum *all = NULL;
	sqlite3_stmt *scan = NULL, *rows = NULL;
	int64_t lo, hi;
	int rc, ret = -1;

	*r = (struct fidx_seal_result){0};
	if (!(l = fidx_seal_lines_new(quote_value, st, err)) || !(all = fidx_seal_sum_new(err)))
		goto out;
	if (scan_row(st, scan_id, ", seal, status, pid IS NULL", &scan, err) < 0)
		goto out;
	const void *seal = sqlite3_column_blob(scan, FIDX_SEAL_SCAN_FIELDS);
	r->sealed = sqlite3_column_type(scan, FIDX_SEAL_SCAN_FIELDS) != SQLITE_NULL;
	r->recorded_len = (size_t)sqlite3_column_bytes(scan, FIDX_SEAL_SCAN_FIELDS);
	if (r->recorded_len > sizeof(r->recorded))
		r->recorded_len = sizeof(r->recorded);
	if (seal)
		memcpy(r->recorded, seal, r->recorded_len);
	const char *status = (const char *)sqlite3_column_text(scan, FIDX_SEAL_SCAN_FIELDS + 1);
	snprintf(r->status, sizeof(r->status), "%s", status ? status : "");
	r->pre_v3 = sqlite3_column_int(scan, FIDX_SEAL_SCAN_FIELDS + 2);

	/* Pass 1: the seal, the scan row's line last. */
	if (file_rows(st, scan_id, "", &rows, &lo, &hi, err) < 0)
		goto out;
	while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
		if (row_fields(rows, fidx_seal_file_columns, FIDX_SEAL_FILE_FIELDS, f, err) < 0 ||
		    fidx_seal_line(l, fidx_seal_file_columns, f, FIDX_SEAL_FILE_FIELDS,
				   FIDX_SEAL_FILE_ALWAYS, err) < 0 ||
		    fidx_seal_sum_line(all, l, err) < 0)
			goto out;
		r->rows++;
	}
	if (rc != SQLITE_DONE) {
		scan_fail(st, scan_id, "read", err);
		goto out;
	}
	if (row_fields(scan, fidx_seal_scan_columns, FIDX_SEAL_SCAN_FIELDS, f, err) < 0 ||
	    fidx_seal_line(l, fidx_seal_scan_columns, f, FIDX_SEAL_SCAN_FIELDS,
			   FIDX_SEAL_SCAN_ALWAYS, err) < 0 ||
	    fidx_seal_sum_line(all, l, err) < 0)
		goto out;
	rc = fidx_seal_sum_end(all, r->computed, err);
	all = NULL;
	if (rc < 0)
		goto out;
	ret = 0;
	if (!r->sealed || (r->recorded_len == FIDX_SEAL_LEN &&
			   memcmp(r->recorded, r->computed, FIDX_SEAL_LEN) == 0))
		goto out;

	/* Pass 2: the seal differs; name what changed. */
	if (check_rows(st, scan_id, l, found, arg, r, &lo, &hi, err) < 0 ||
	    check_removed(st, scan_id, found, arg, r, err) < 0 ||
	    check_fields(st, scan_id, found, arg, r, lo, hi, err) < 0)
		ret = -1;
out:
	sqlite3_finalize(scan);
	sqlite3_finalize(rows);
	fidx_seal_sum_free(all);
	fidx_seal_lines_free(l);
	return ret;
}
