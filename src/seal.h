/*
 * seal.h - the seal of a scan: a SHA-256 over its rows in a canonical form
 * that anyone can recompute with the sqlite3 shell and sha256sum.
 *
 * The canonical form (seal format 1; docs/SCHEMA.md, "The seal"):
 *
 *     lines 1..n    each file row of the scan, ORDER BY id: 26 fields
 *                   (seal.c, file_columns[]), scan_id among them, then the
 *                   8 fields schema 4 added (times beyond the *_ns range)
 *                   when any of them is not NULL
 *     line n+1      the scan row: 20 fields (seal.c, scan_columns[]), then
 *                   run_ns (schema 4) when it is not NULL; last, since its
 *                   totals are only known at the end
 *
 * A row written before schema 4 has NULL in the columns 4 added, so its line,
 * and the seal of a scan made before 4, is what it was: the columns a schema
 * adds extend the format without changing it.
 * Fields are separated by '|' and every line ends with '\n'.  Each field is
 * the SQL literal that SQLite's quote() writes: an INTEGER column as
 * quote(c) (decimal, or NULL), a TEXT or BLOB column as
 * quote(CAST(c AS BLOB)) (X'...' with the bytes in upper-case hex, X'' for
 * an empty value, or NULL).  Every literal ends where it ends, so the lines
 * can be split back into the values they came from: two different sets of
 * rows never give the same lines.  A line of a row fidx wrote is printable
 * ASCII, so no shell option or escaping changes it.
 *
 *     seal      = SHA-256 of all the lines
 *     row hash  = the first FIDX_ROW_HASH_LEN bytes of SHA-256 of one file
 *                 row's line, without its '\n' (table file_seal, with the
 *                 row's scan_id)
 *
 * The seal is computed while the scan is written (a fidx_sealer, driven by
 * the store): each file row's line is made from the values just bound to
 * its INSERT (struct fidx_seal_value), so nothing is read back at the end;
 * only a resumed scan reads its earlier rows back once.  `fidx verify` reads
 * the rows back (fidx_seal_check()), through the same line formatter, and
 * names what differs.  A value of a kind fidx never writes (a REAL, a TEXT
 * in an INTEGER column) is formatted by SQLite's own quote(), so the lines
 * agree with the SQL form for any content.
 */
#ifndef FIDX_SEAL_H
#define FIDX_SEAL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FIDX_SEAL_LEN 32        /* bytes of a seal (SHA-256) */
#define FIDX_ROW_HASH_LEN 8     /* bytes kept of each row's SHA-256 (file_seal.row_hash) */
#define FIDX_SEAL_FILE_FIELDS 34 /* fields of a file row: file's columns, in table order */

/*
 * One field of a line: a value as bound to a column or read from it.  A
 * file row's fields are numbered as the columns of `file` (0 id, 1 scan_id,
 * 2 path, ... 25 digests_from), which are also the parameter numbers of an
 * INSERT of every column but id.
 */
struct fidx_seal_value {
	int type;          /* SQLITE_NULL, SQLITE_INTEGER, SQLITE_TEXT or SQLITE_BLOB (both
			      sealed as their bytes); 0 for any other value, in v */
	int64_t i;         /* SQLITE_INTEGER: the value */
	const void *p;     /* SQLITE_TEXT, SQLITE_BLOB: the bytes (may be NULL when n is 0) */
	size_t n;          /* their length */
	sqlite3_value *v;  /* type 0: a value fidx never writes, formatted by SQLite's quote() */
};

/*
 * The seals of the scans a store is writing.  Used by one thread (the
 * store's); it hashes on a thread of its own.  Every function that writes
 * does so in the caller's open transaction; errors: -1, and
 * fidx_sealer_errmsg() says why in one line.
 */
struct fidx_sealer;

/* Makes a sealer writing to db.  Returns it, or NULL with the reason in why. */
struct fidx_sealer *fidx_sealer_new(sqlite3 *db, char *why, size_t whylen);

/* Starts the seal of scan scan_id, which has no file row yet.  Returns 0, or -1. */
int fidx_sealer_begin(struct fidx_sealer *z, int64_t scan_id);

/*
 * Starts the seal of scan scan_id over the file rows it has (a resumed
 * scan): reads them back in id order, and writes their file_seal rows anew
 * (the scan's earlier ones are deleted: those of rows that are gone with
 * them).  Returns 0, or -1.
 */
int fidx_sealer_resume(struct fidx_sealer *z, int64_t scan_id);

/*
 * Adds file row v (v[0] is its id) of scan scan_id, just inserted, to its
 * scan's seal; its file_seal row is inserted by the next fidx_sealer_sync()
 * at the latest.  A scan that is not being sealed (not begun or resumed
 * here, or forgotten) is left alone.  The values are copied.  Returns 0, or -1.
 */
int fidx_sealer_row(struct fidx_sealer *z, int64_t scan_id,
		    const struct fidx_seal_value v[FIDX_SEAL_FILE_FIELDS]);

/* Inserts the file_seal rows of every row added so far.  Returns 0, or -1. */
int fidx_sealer_sync(struct fidx_sealer *z);

/*
 * Forgets every scan's seal and the rows not yet inserted, after the
 * caller's transaction was rolled back: a later fidx_sealer_seal() reads
 * the rows back instead.
 */
void fidx_sealer_forget(struct fidx_sealer *z);

/*
 * Seals complete scan scan_id: inserts its remaining file_seal rows, adds
 * the scan row's line, writes scan.seal and copies it into seal.  A scan
 * whose seal was not streamed here (or was forgotten) is read back first.
 * Returns 0, or -1 (a scan that is not complete, or sealed already, is
 * refused).
 */
int fidx_sealer_seal(struct fidx_sealer *z, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN]);

/* Returns the last failure as one line. */
const char *fidx_sealer_errmsg(const struct fidx_sealer *z);

/* Stops the hashing thread and frees z (rows not inserted are dropped).  NULL is allowed. */
void fidx_sealer_free(struct fidx_sealer *z);

/* What fidx_seal_check() reports, one call per finding. */
enum fidx_seal_change {
	FIDX_SEAL_ALTERED,  /* a file row whose line no longer has its recorded row hash */
	FIDX_SEAL_ADDED,    /* a file row of the scan that was not sealed (no file_seal row) */
	FIDX_SEAL_REMOVED,  /* a sealed row gone from the scan (named by its id) */
	FIDX_SEAL_FIELD,    /* a field of the scan row that its file rows contradict */
};

/* One finding. */
struct fidx_seal_finding {
	enum fidx_seal_change change;
	int64_t file_id;     /* the file row (file.id); 0 for FIDX_SEAL_FIELD */
	const char *path;    /* its path (bytes) while it exists; NULL when removed */
	const char *field;   /* FIDX_SEAL_FIELD: the scan column ("entries", "root", ...) */
	const char *says;    /* FIDX_SEAL_FIELD: what the scan row says, as text */
	const char *rows;    /* FIDX_SEAL_FIELD: what its rows say, as text */
};

/* The verdict on one scan. */
struct fidx_seal_result {
	bool sealed;                     /* scan.seal holds a value */
	size_t recorded_len;             /* its length (FIDX_SEAL_LEN unless altered) */
	uint8_t recorded[64];            /* scan.seal (its first 64 bytes) */
	uint8_t computed[FIDX_SEAL_LEN]; /* the seal of the rows as they are now */
	bool pre_v3;                     /* the scan row has no pid: written before schema 3 */
	char status[16];                 /* scan.status (truncated) */
	uint64_t rows;                   /* file rows of the scan now */
	uint64_t altered, added, removed, fields; /* findings of each kind */
};

/* Called by fidx_seal_check() for each finding; f is valid during the call. */
typedef void fidx_seal_found_fn(void *arg, const struct fidx_seal_finding *f);

/*
 * Recomputes the seal of scan scan_id of db (any schema-3 database; only
 * read) into r.  When the scan is sealed and the seal differs, also finds
 * what changed, calling found for each: file rows altered or added (in id
 * order), sealed rows removed (or moved to another scan), and scan-row
 * fields that contradict the rows (entries, files, dirs, bytes, errors,
 * root, status).  A scan that is not sealed is only recomputed.  Returns 0,
 * or -1 with a one-line reason in why.
 */
int fidx_seal_check(sqlite3 *db, int64_t scan_id, fidx_seal_found_fn *found, void *arg,
		    struct fidx_seal_result *r, char *why, size_t whylen);

#endif /* FIDX_SEAL_H */
