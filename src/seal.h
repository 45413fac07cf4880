/*
 * seal.h - the seal of a scan: a SHA-256 over its rows in a canonical form
 * that anyone can recompute with the sqlite3 shell and sha256sum.
 *
 * The canonical form (seal format 1; docs/SCHEMA.md, "The seal"):
 *
 *     line 1        the scan row: 20 fields (seal.c, scan_columns[])
 *     lines 2..n+1  each file row of the scan, ORDER BY id: 26 fields
 *                   (seal.c, file_columns[]), scan_id among them
 *
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
 *                 row's line, without its '\n' (table file_seal)
 *
 * The seal is written once, when the scan completes (fidx_seal_write()),
 * and checked by `fidx verify` (fidx_seal_check()), which recomputes both and
 * names what differs.  The lines are formatted here in C from the raw
 * columns (the SQL form is 5 to 10 times slower); a value of a kind fidx
 * never writes (a REAL, a TEXT in an INTEGER column) is formatted by SQLite's
 * own quote(), so the two forms agree for any content.
 */
#ifndef FIDX_SEAL_H
#define FIDX_SEAL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FIDX_SEAL_LEN 32     /* bytes of a seal (SHA-256) */
#define FIDX_ROW_HASH_LEN 8  /* bytes kept of each row's SHA-256 (file_seal.row_hash) */

/*
 * Seals scan scan_id: computes its seal, writes one file_seal row per file
 * row and scan.seal, and copies the seal into seal.  The caller holds a
 * write transaction on db (so the seal and its rows land together) and
 * commits it.  Returns 0, or -1 with a one-line reason in why.
 */
int fidx_seal_write(sqlite3 *db, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN], char *why,
		    size_t whylen);

/* What fidx_seal_check() reports, one call per finding. */
enum fidx_seal_change {
	FIDX_SEAL_ALTERED,  /* a file row whose line no longer has its recorded row hash */
	FIDX_SEAL_ADDED,    /* a file row of the scan that was not sealed (no file_seal row) */
	FIDX_SEAL_REMOVED,  /* a sealed row whose file row is gone (named by its id) */
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
 * order), sealed rows removed, and scan-row fields that contradict the rows
 * (entries, files, dirs, bytes, errors, root, status).  A scan that is not
 * sealed is only recomputed.  Returns 0, or -1 with a one-line reason in why.
 */
int fidx_seal_check(sqlite3 *db, int64_t scan_id, fidx_seal_found_fn *found, void *arg,
		    struct fidx_seal_result *r, char *why, size_t whylen);

#endif /* FIDX_SEAL_H */
