/*
 * export.h - `fidx export`: the formats, and what their writers share.
 *
 * Every format reads the same stream of rows: one SELECT of every column of
 * `file` for the selected scans, stepped row by row, each row written at once
 * and forgotten, so an export of any database runs in constant memory.
 *
 *     cmd_export.c ── options, scans, -o ──► SELECT ... ORDER BY scan_id, path
 *                                              │ (the file_scan_path index:
 *                                              │  no sort, rows stream)
 *                         fmt->begin() ◄───────┤ header, checks the digests
 *                         fmt->row()   ◄───────┤ once per row
 *                         fmt->end()   ◄───────┘ trailer, warnings
 *
 * A format is a row of export_formats[] (export.c): its name, a condition
 * added to the WHERE clause (the checksum formats read regular files only),
 * and three callbacks that write to ctx->out.  The writers are in
 * export_table.c (csv, jsonl), export_sums.c (sha256sum and its kin, hashdeep),
 * export_body.c (the Sleuth Kit body file) and export_dfxml.c (DFXML).
 *
 * Output goes through stdio with putc_unlocked()/fwrite_unlocked() into the
 * big buffer of output.h; the helpers below format integers, digests and
 * times without printf, which would cost more than everything else.
 */
#ifndef FIDX_EXPORT_H
#define FIDX_EXPORT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "output.h"
#include "query.h"
#include "timestamp.h"

/*
 * Columns of the SELECT every format reads, in the order of docs/SCHEMA.md,
 * then the eight time columns of dbtime.h (read with export_time()).  The
 * digest columns follow enum fidx_digest: EC_MD5 + d holds digest d.
 */
enum export_col {
	EC_ID, EC_SCAN_ID, EC_PATH, EC_NAME, EC_EXT, EC_TYPE,
	EC_SIZE, EC_BLOCKS, EC_MODE, EC_UID, EC_GID, EC_NLINK, EC_DEV, EC_INO,
	EC_ATIME, EC_MTIME, EC_CTIME, EC_BTIME,
	EC_LINK, EC_MD5, EC_SHA1, EC_SHA256, EC_SHA512, EC_XXH128, EC_ERROR,
	EC_TIME_EXT,
};

/* The SQL list of the columns up to EC_ERROR, for the SELECT (fidx_time_ext_sql() follows). */
#define EXPORT_COLUMNS_SQL \
	"id, scan_id, path, name, ext, type, size, blocks, mode, uid, gid, nlink, dev," \
	" ino, atime_ns, mtime_ns, ctime_ns, btime_ns, link_target," \
	" md5, sha1, sha256, sha512, xxh128, error"

/* What a writer knows while it writes. */
struct export_ctx {
	const struct export_format *fmt; /* the format being written */
	FILE *out;                    /* where the export goes (stdout) */
	const struct fidx_query *q;   /* the database and the selected scans */
	unsigned digests;             /* digests every selected scan computed
					 (bits 1u << enum fidx_digest) */
	unsigned *scan_digests;       /* the same per scan, as q->scans */
	bool excel_safe;              /* csv: --excel-safe */
	int argc;                     /* the command line, for the provenance */
	char **argv;                  /*   lines of hashdeep and DFXML */
	uint64_t no_digest;           /* rows left out: a regular file without
					 the digest the format needs */
	uint64_t bad_name;            /* rows left out: a name the format
					 cannot carry (hashdeep: a newline) */
};

/* One export format. */
struct export_format {
	const char *name;     /* as given to --format */
	const char *filter;   /* SQL condition on the row, or NULL for every entry */
	const char *summary;  /* one line for --help */
	int digest;           /* the enum fidx_digest a checksum list writes, else -1 */
	unsigned needs;       /* digests it needs one of (1u << enum fidx_digest), 0 for
				 none: the scans selected by default are those with one */
	/* Writes the header (NULL: none).  Returns 0, or -1 after printing why
	   the format cannot be written from these scans (a digest they lack). */
	int (*begin)(struct export_ctx *ctx);
	/* Writes one row (columns as enum export_col), or counts it in
	   ctx->no_digest or ctx->bad_name when the format cannot carry it. */
	void (*row)(struct export_ctx *ctx, sqlite3_stmt *s);
	/* Writes the trailer and warns about what was left out (NULL: none). */
	void (*end)(struct export_ctx *ctx);
	/* The columns row() reads (1 << enum export_col), the only ones checked
	   (rowcheck.h); 0: every one. */
	uint64_t reads;
};

/* Every format, in the order --help lists them; export_nformats of them. */
extern const struct export_format export_formats[];
extern const size_t export_nformats;

/* Returns the format called name, or NULL. */
const struct export_format *export_format_find(const char *name);

/* The formats' callbacks (export_table.c, export_sums.c, export_body.c,
   export_dfxml.c). */
int export_csv_begin(struct export_ctx *ctx);
void export_csv_row(struct export_ctx *ctx, sqlite3_stmt *s);
void export_jsonl_row(struct export_ctx *ctx, sqlite3_stmt *s);
int export_sums_begin(struct export_ctx *ctx);
void export_sums_row(struct export_ctx *ctx, sqlite3_stmt *s);
void export_sums_end(struct export_ctx *ctx);
int export_hashdeep_begin(struct export_ctx *ctx);
void export_hashdeep_row(struct export_ctx *ctx, sqlite3_stmt *s);
void export_hashdeep_end(struct export_ctx *ctx);
void export_body_row(struct export_ctx *ctx, sqlite3_stmt *s);
int export_dfxml_begin(struct export_ctx *ctx);
void export_dfxml_row(struct export_ctx *ctx, sqlite3_stmt *s);
void export_dfxml_end(struct export_ctx *ctx);

/* ---- helpers shared by the writers (export.c) ---- */

/* Writes the len bytes at p. */
static inline void export_put(FILE *out, const void *p, size_t len)
{
	fwrite_unlocked(p, 1, len, out);
}

/* Writes the NUL-terminated string s. */
static inline void export_puts(FILE *out, const char *s)
{
	fputs_unlocked(s, out);
}

/* Writes v in decimal. */
void export_put_i64(FILE *out, int64_t v);

/* Writes v in decimal, as unsigned (the schema's reading of a negative
   size, dev or ino: its two's complement). */
void export_put_u64(FILE *out, uint64_t v);

/* Writes t as ISO 8601 UTC with nanoseconds, "2023-11-14T22:13:20.123456789Z"
   (times before 1970 and after 9999 too: when.h). */
void export_put_iso(FILE *out, struct fidx_time t);

/* Writes t as the exact number of nanoseconds since the epoch (timestamp.h). */
void export_put_time_ns(FILE *out, struct fidx_time t);

/* Reads time column c (EC_ATIME .. EC_BTIME) of s into *t.  Returns false when NULL. */
bool export_time(sqlite3_stmt *s, int c, struct fidx_time *t);

/*
 * On a terminal, a name that could drive it (fidx_out_quotes(), output.h)
 * is shown as fidx_shell_quote() quotes it, and the writer encodes that form
 * as it encodes a name: returns it, malloc'ed, or NULL when s is written as
 * it is (into a file or a pipe, always).
 */
char *export_tty_name(FILE *out, const char *s);

/* Returns whether column c of s is NULL. */
static inline bool export_null(sqlite3_stmt *s, int c)
{
	return sqlite3_column_type(s, c) == SQLITE_NULL;
}

/* Returns text column c of s ("" when NULL). */
static inline const char *export_text(sqlite3_stmt *s, int c)
{
	const unsigned char *t = sqlite3_column_text(s, c);
	return t ? (const char *)t : "";
}

/* Returns the digest column c of s when it holds len bytes, else NULL. */
const unsigned char *export_digest(sqlite3_stmt *s, int c, size_t len);

/*
 * Returns the length (1..4) of the UTF-8 sequence at p that is a character
 * XML 1.0 can carry (valid UTF-8 as fidx_utf8_seq_len() reads it, and not
 * U+FFFE or U+FFFF), or 0.  For bytes below 0x80 it returns 1 whatever the
 * byte: the caller decides about controls.  p must be NUL-terminated.
 */
size_t export_utf8_char(const unsigned char *p);

/*
 * Writes ls -l's ten-letter mode string for st_mode ("-rwsr-xr-x"), with the
 * type letter given by the caller (the formats disagree on it).
 */
void export_put_perms(FILE *out, char type_letter, uint32_t mode);

/*
 * Returns 0 when every selected scan computed digest d (enum fidx_digest),
 * else -1 after printing which scan did not, what it has, and what to do.
 */
int export_need_digest(const struct export_ctx *ctx, int d, const char *format);

/* Writes the command line of ctx (arguments joined by spaces, as given). */
void export_put_command(FILE *out, const struct export_ctx *ctx,
			void (*put)(FILE *out, const char *s));

#endif /* FIDX_EXPORT_H */
