/*
 * export.h - `fidx export`: the formats, and what their writers share.
 *
 * Every format reads the same stream: the store's rows of the selected scans
 * (store.h), scan by scan and in byte order of path within a scan, each row
 * written at once and forgotten, so an export of any database runs in
 * constant memory.
 *
 *     builtin/export.c ── options, scans, -o ──► fidx_store_rows(FIDX_ROWS_PATH)
 *                                                  │ (the columns fmt->reads,
 *                                                  │  the rows of fmt->types)
 *                            fmt->begin() ◄────────┤ header, checks the digests
 *                            fmt->row()   ◄────────┤ once per row
 *                            fmt->end()   ◄────────┘ trailer, warnings
 *
 * A format is a row of export_formats[] (export.c): its name, the types of
 * the entries it lists (the checksum formats: regular files only), the
 * columns it reads, and three callbacks that write to ctx->out.  The store
 * checks every value of the columns read and stops the export at the first
 * damaged one, so a writer takes the row as it comes.  The writers are in
 * export_table.c (csv, jsonl), export_sums.c (sha256sum and its kin,
 * hashdeep), export_body.c (the Sleuth Kit body file) and export_dfxml.c
 * (DFXML).
 *
 * Output goes through stdio with putc_unlocked()/fwrite_unlocked() into the
 * big buffer of output.h; the helpers below format integers, digests and
 * times without printf, which would cost more than everything else.
 */
#ifndef FIDX_EXPORT_H
#define FIDX_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "output.h"
#include "query.h"
#include "row.h"
#include "timestamp.h"

/* What a writer knows while it writes. */
struct export_ctx {
	const struct export_format *fmt; /* the format being written */
	FILE *out;                    /* where the export goes (stdout) */
	const struct fidx_query *q;   /* the database and the selected scans */
	unsigned digests;             /* digests every selected scan computed
					 (bits 1u << enum fidx_digest) */
	bool excel_safe;              /* csv: the formula guard (the default; not --csv-raw) */
	int argc;                     /* the command line, for the provenance */
	char **argv;                  /*   lines of hashdeep and DFXML */
	const char *db_arg;           /* the database as argv gives it (NULL: not there), */
	const char *db_shown;         /*   and as the store names it (no password) */
	uint64_t no_digest;           /* rows left out: a regular file without
					 the digest the format needs */
	uint64_t bad_name;            /* rows left out: a name the format
					 cannot carry (hashdeep: a newline) */
};

/* One export format. */
struct export_format {
	const char *name;     /* as given to --format */
	unsigned types;       /* the types of the entries it lists (fidx_type_bit()),
				 0 for every entry */
	const char *summary;  /* one line for --help */
	int digest;           /* the enum fidx_digest a checksum list writes, else -1 */
	unsigned needs;       /* digests it needs one of (1u << enum fidx_digest), 0 for
				 none: the scans selected by default are those with one */
	/* Writes the header (NULL: none).  Returns 0, or -1 after printing why
	   the format cannot be written from these scans (a digest they lack). */
	int (*begin)(struct export_ctx *ctx);
	/* Writes one row, or counts it in ctx->no_digest or ctx->bad_name when
	   the format cannot carry it. */
	void (*row)(struct export_ctx *ctx, const struct fidx_row *row);
	/* Writes the trailer and warns about what was left out (NULL: none). */
	void (*end)(struct export_ctx *ctx);
	/* The columns it reads (FIDX_COLUMN()), the only ones the store checks:
	   a checksum list reads those row() writes; the formats of every entry
	   read every column but digests_from, so that a damaged value anywhere
	   in a row stops them. */
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
void export_csv_row(struct export_ctx *ctx, const struct fidx_row *row);
void export_jsonl_row(struct export_ctx *ctx, const struct fidx_row *row);
int export_sums_begin(struct export_ctx *ctx);
void export_sums_row(struct export_ctx *ctx, const struct fidx_row *row);
void export_sums_end(struct export_ctx *ctx);
int export_hashdeep_begin(struct export_ctx *ctx);
void export_hashdeep_row(struct export_ctx *ctx, const struct fidx_row *row);
void export_hashdeep_end(struct export_ctx *ctx);
void export_body_row(struct export_ctx *ctx, const struct fidx_row *row);
int export_dfxml_begin(struct export_ctx *ctx);
void export_dfxml_row(struct export_ctx *ctx, const struct fidx_row *row);
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

/*
 * On a terminal, a name that could drive it (fidx_out_quotes(), output.h)
 * is shown as fidx_shell_quote() quotes it, and the writer encodes that form
 * as it encodes a name: returns it, malloc'ed, or NULL when s is written as
 * it is (into a file or a pipe, always).
 */
char *export_tty_name(FILE *out, const char *s);

/* Returns text column c of row ("" when NULL). */
static inline const char *export_text(const struct fidx_row *row, enum fidx_col c)
{
	const char *t = fidx_row_text(row, c);
	return t ? t : "";
}

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
 * as its options say (a scan whose options do not say counts as having
 * every digest: its rows decide), else -1 after printing which scan did
 * not, what it has, and what to do.
 */
int export_need_digest(const struct export_ctx *ctx, int d, const char *format);

/*
 * Writes the command line of ctx (arguments joined by spaces, as given).
 * Returns 0, or -1 (ENOMEM: part of it may be written) after printing
 * "out of memory": a header is never written with an argument left out.
 */
int export_put_command(FILE *out, const struct export_ctx *ctx,
			void (*put)(FILE *out, const char *s));

#endif /* FIDX_EXPORT_H */
