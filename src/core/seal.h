/*
 * seal.h - the seal of a scan: a SHA-256 over its rows in a canonical form
 * that anyone can recompute with the sqlite3 shell and sha256sum.
 *
 * The canonical form (seal format 1; docs/SCHEMA.md, "The seal"):
 *
 *     lines 1..n    each file row of the scan, by ascending id: the 26
 *                   fields of fidx_seal_file_columns[] (the file table's
 *                   columns, a time as its T_ns), then the 8 fields schema
 *                   4 added (T_sec, T_nsec of a time beyond T_ns) when any
 *                   of them or of schema 6's is not NULL, then the 14
 *                   fields schema 6 added (state, stream, the four
 *                   $FILE_NAME times as T_ns, then their T_sec, T_nsec)
 *                   when any of them or of schema 7's is not NULL, then
 *                   the field schema 7 added (attributes) when it is not
 *                   NULL
 *     line n+1      the scan row: the 20 fields of fidx_seal_scan_columns[],
 *                   then run_ns (schema 4) when it is not NULL; last, since
 *                   its totals are only known at the end
 *
 * A row written before schema 4 has NULL in the columns 4 added (and one
 * written before 7 in the column 7 added), so its line, and the seal of a
 * scan made before 4 (or 7), is what it was: the columns a
 * schema adds extend the format without changing it.  Fields are separated
 * by '|' and every line ends with '\n'.  Each field is the SQL literal that
 * SQLite's quote() writes: an integer column as quote(c) (decimal, or
 * NULL), a text or blob column as quote(CAST(c AS BLOB)) (X'...' with the
 * bytes in upper-case hex, X'' for an empty value, or NULL).  Every literal
 * ends where it ends, so the lines can be split back into the values they
 * came from: two different sets of rows never give the same lines.
 *
 *     seal      = SHA-256 of all the lines
 *     row hash  = the first FIDX_ROW_HASH_LEN bytes of SHA-256 of one file
 *                 row's line, without its '\n' (kept beside the row, with
 *                 its scan, so that `fidx verify` can name the rows changed)
 *
 * This file is the format and the arithmetic; the store supplies the
 * fields.  A row being written gives its fields from its values
 * (fidx_seal_file_fields()); a row read back (a resumed scan, fidx verify)
 * from the values stored, where a value of a kind fidx never writes (a real
 * number, text in an integer column) is a FIDX_SEAL_OTHER field that the
 * store formats as quote() would (struct fidx_seal_lines' quote callback).
 *
 * The sealer computes seals while a scan is written: the store hands it each
 * row just written; it makes the line, and a thread of its own adds the line
 * to its scan's running SHA-256 and computes the row hash, which it hands
 * back to the store in batches to keep beside the rows (put_hashes), in the
 * transaction that holds them.  The several roots of one run are several
 * scans whose rows interleave: each has its own running SHA-256.
 */
#ifndef FIDX_SEAL_H
#define FIDX_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "row.h"

#define FIDX_SEAL_LEN 32          /* bytes of a seal (SHA-256) */
#define FIDX_ROW_HASH_LEN 8       /* bytes kept of each row's SHA-256 */
#define FIDX_SEAL_FILE_FIELDS 49  /* fields of a file row's line, at most */
#define FIDX_SEAL_FILE_ALWAYS 26  /* ... of which every line has these */
#define FIDX_SEAL_SCAN_FIELDS 21  /* fields of the scan row's line, at most */
#define FIDX_SEAL_SCAN_ALWAYS 20  /* ... of which every line has these */

/* A column of a line: its name in the table, and whether it is sealed as bytes. */
struct fidx_seal_column {
	const char *name;
	bool bytes;       /* TEXT or BLOB: quote(CAST(c AS BLOB)); else quote(c) */
};

/* The fields of a file row's line, and of the scan row's, in line order. */
extern const struct fidx_seal_column fidx_seal_file_columns[FIDX_SEAL_FILE_FIELDS];
extern const struct fidx_seal_column fidx_seal_scan_columns[FIDX_SEAL_SCAN_FIELDS];

/* The kinds of field. */
enum fidx_seal_kind {
	FIDX_SEAL_NULL,
	FIDX_SEAL_INT,
	FIDX_SEAL_BYTES,    /* TEXT or BLOB: sealed as their bytes */
	FIDX_SEAL_OTHER,    /* a value fidx never writes, formatted by the store */
};

/* One field of a line. */
struct fidx_seal_field {
	enum fidx_seal_kind kind;
	int64_t i;          /* INT */
	const void *p;      /* BYTES: the bytes (NULL allowed when n is 0) */
	size_t n;           /* their length */
	const void *other;  /* OTHER: the store's value, for its quote callback */
};

/*
 * Sets f[0..FIDX_SEAL_FILE_FIELDS) to the fields of a file row that is to
 * be written (id included: the row's id must be set), from its values.
 */
void fidx_seal_file_fields(const struct fidx_row *row, struct fidx_seal_field *f);

/*
 * Returns how many of a file row's fields f hold what its line shows: all
 * (FIDX_SEAL_FILE_FIELDS), or FIDX_SEAL_FILE_ALWAYS when every later one is NULL.
 */
size_t fidx_seal_file_fields_used(const struct fidx_seal_field *f);

/* The field of a file row's line that holds column c (a time's T_ns). */
int fidx_seal_file_field(enum fidx_col c);

/* Makes lines and hashes them: one per thread that formats lines. */
struct fidx_seal_lines;

/*
 * Appends to buf (fidx_seal_line_append()) what quote(v) writes, or with
 * bytes quote(CAST(v AS BLOB)), for the value other of an OTHER field.
 * Returns 0, or -1 with err set.
 */
typedef int fidx_seal_quote_fn(void *arg, const void *other, bool bytes,
			       struct fidx_seal_lines *l, struct fidx_error *err);

/* Makes a line maker; quote formats OTHER fields (NULL: none come).  NULL with err set. */
struct fidx_seal_lines *fidx_seal_lines_new(fidx_seal_quote_fn *quote, void *arg,
					    struct fidx_error *err);

/*
 * Makes the line of the n fields f of columns cols (the fields from always
 * on only when one of them is not NULL).  Returns 0, or -1 with err set.
 */
int fidx_seal_line(struct fidx_seal_lines *l, const struct fidx_seal_column *cols,
		   const struct fidx_seal_field *f, size_t n, size_t always,
		   struct fidx_error *err);

/* Appends n bytes to the line being made (a quote callback's).  Returns 0, or -1 with err set. */
int fidx_seal_line_append(struct fidx_seal_lines *l, const void *p, size_t n,
			  struct fidx_error *err);

/* The row hash of the line made last.  Returns 0, or -1 with err set. */
int fidx_seal_row_hash(struct fidx_seal_lines *l, uint8_t out[FIDX_ROW_HASH_LEN],
		       struct fidx_error *err);

/* A running seal (SHA-256 of lines). */
struct fidx_seal_sum;

/* Starts a seal.  Returns it, or NULL with err set. */
struct fidx_seal_sum *fidx_seal_sum_new(struct fidx_error *err);

/* Adds the line made last, and its '\n', to sum.  Returns 0, or -1 with err set. */
int fidx_seal_sum_line(struct fidx_seal_sum *sum, struct fidx_seal_lines *l,
		       struct fidx_error *err);

/* Ends sum into seal and frees it.  Returns 0, or -1 with err set (sum freed too). */
int fidx_seal_sum_end(struct fidx_seal_sum *sum, uint8_t seal[FIDX_SEAL_LEN],
		      struct fidx_error *err);

/* Frees a sum not ended.  NULL is allowed. */
void fidx_seal_sum_free(struct fidx_seal_sum *sum);

/* Frees l.  NULL is allowed. */
void fidx_seal_lines_free(struct fidx_seal_lines *l);

/*
 * The row hashes of a batch of rows, handed to the store to keep beside the
 * rows (in the transaction that holds them).  Returns 0, or -1 with err set.
 */
typedef int fidx_seal_put_fn(void *arg, const int64_t *file_ids, const int64_t *scan_ids,
			     const uint8_t (*hashes)[FIDX_ROW_HASH_LEN], size_t n,
			     struct fidx_error *err);

/*
 * The seals of the scans a store is writing.  Used by one thread (the
 * store's); it hashes on a thread of its own.
 */
struct fidx_sealer;

/* Makes a sealer that hands row hashes to put.  Returns it, or NULL with err set. */
struct fidx_sealer *fidx_sealer_new(fidx_seal_put_fn *put, void *arg, struct fidx_error *err);

/*
 * Starts the seal of scan scan_id from no line, dropping one being computed
 * (a resumed scan is begun again and its rows given back in id order).
 * Returns 0, or -1 with err set.
 */
int fidx_sealer_begin(struct fidx_sealer *z, int64_t scan_id, struct fidx_error *err);

/* Whether the seal of scan_id is being computed (begun and not forgotten). */
bool fidx_sealer_sealing(const struct fidx_sealer *z, int64_t scan_id);

/*
 * Adds the file row of fields f (f[0] its id) of scan scan_id to its scan's
 * seal, when that is being computed (else nothing); its row hash is handed
 * to put by the next fidx_sealer_sync() at the latest.  The fields are
 * copied.  Returns 0, or -1 with err set.
 */
int fidx_sealer_row(struct fidx_sealer *z, int64_t scan_id, const struct fidx_seal_field *f,
		    struct fidx_error *err);

/* Hands every row hash computed so far to put.  Returns 0, or -1 with err set. */
int fidx_sealer_sync(struct fidx_sealer *z, struct fidx_error *err);

/*
 * Ends the seal of scan scan_id: syncs, adds the scan row's line (its
 * FIDX_SEAL_SCAN_FIELDS fields f), and writes the seal into seal.  Returns
 * 0, or -1 with err set.
 */
int fidx_sealer_end(struct fidx_sealer *z, int64_t scan_id, const struct fidx_seal_field *f,
		    uint8_t seal[FIDX_SEAL_LEN], struct fidx_error *err);

/*
 * Forgets every scan's seal and the row hashes not yet handed over, after the
 * store's transaction was rolled back: such a scan is read back before it is
 * sealed.
 */
void fidx_sealer_forget(struct fidx_sealer *z);

/* The line maker of the sealer, for rows read back through the store's quote (NULL: none). */
void fidx_sealer_quote(struct fidx_sealer *z, fidx_seal_quote_fn *quote, void *arg);

/* Stops the hashing thread and frees z (row hashes not handed over are dropped).  NULL is allowed. */
void fidx_sealer_free(struct fidx_sealer *z);

/* What fidx_store_verify() reports, one call per finding. */
enum fidx_seal_change {
	FIDX_SEAL_ALTERED,  /* a file row whose line no longer has its recorded row hash */
	FIDX_SEAL_ADDED,    /* a file row of the scan that was not sealed (no row hash) */
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

/* Called for each finding; f is valid during the call. */
typedef void fidx_seal_found_fn(void *arg, const struct fidx_seal_finding *f);

#endif /* FIDX_SEAL_H */
