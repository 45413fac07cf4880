/*
 * export_table.c - `fidx export --format csv | jsonl`: every column of
 * every entry, for spreadsheets, data frames and jq.
 *
 * Both carry the columns of the `file` table under their docs/SCHEMA.md
 * names, in its order (the column list of row.h, id to error), with two
 * changes: digests are lower-case hex, and the four times come twice, as
 * integer nanoseconds (atime_ns ...) and then as ISO 8601 UTC text
 * (atime ...), as in the file_view view.  The UINT columns (size, blocks,
 * nlink, dev, ino) are written unsigned (the schema stores a value above
 * 2^63 as its two's complement).  NULL is an empty cell in CSV, null in
 * JSON.
 *
 * CSV follows RFC 4180: CRLF after every record, the header first, a cell
 * quoted when it holds a comma, a double quote, CR or LF, its quotes
 * doubled.  A CSV file is bytes: a name that is not UTF-8 is written as
 * its raw bytes (a reader that wants text decodes with surrogateescape or
 * Latin-1).  By default (not with --csv-raw) the file defends a
 * spreadsheet against formula injection as OWASP advises: every text cell is
 * quoted, and one that starts with = + - @ TAB or CR gets a leading single
 * quote, which Excel and LibreOffice read as "this is text".  A cell that
 * starts with a quote gets one too, so that the guard can be undone
 * exactly: a reader drops one leading quote from every text cell that
 * starts with one.  The guard touches only text fidx took from the disk
 * (path, name, ext, link_target, error); numbers and digests are fidx's
 * own.
 *
 * JSONL writes paths with fidx_json_path(): a name that is not UTF-8 keeps
 * an escaped reading in "path" and its exact bytes in "path_base64".
 */
#include "export.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "record.h"

/* The columns exported: id to error, in the table's order (not digests_from). */
#define LAST_COLUMN FIDX_COL_ERROR

/* Whether column c is the last of a run of time columns: the ISO texts of the run follow it. */
static bool ends_times(enum fidx_col c)
{
	return fidx_columns[c].kind == FIDX_KIND_TIME &&
	       (c == LAST_COLUMN || fidx_columns[c + 1].kind != FIDX_KIND_TIME);
}

/* The first time column of the run that column c ends. */
static enum fidx_col times_start(enum fidx_col c)
{
	while (c > 0 && fidx_columns[c - 1].kind == FIDX_KIND_TIME)
		c--;
	return c;
}

/* ---- CSV ---- */

/* Writes the header row: the column names, the times twice. */
int export_csv_begin(struct export_ctx *ctx)
{
	for (enum fidx_col c = 0; c <= LAST_COLUMN; c++) {
		if (c > 0)
			putc_unlocked(',', ctx->out);
		export_puts(ctx->out, fidx_columns[c].name);
		if (fidx_columns[c].kind != FIDX_KIND_TIME)
			continue;
		export_puts(ctx->out, "_ns");
		for (enum fidx_col t = times_start(c); ends_times(c) && t <= c; t++) {
			putc_unlocked(',', ctx->out);
			export_puts(ctx->out, fidx_columns[t].name);
		}
	}
	export_put(ctx->out, "\r\n", 2);
	return 0;
}

/* Writes text column c of row as a cell: quoted when it must be (always when guarded). */
static void csv_text(struct export_ctx *ctx, const struct fidx_row *row, enum fidx_col c)
{
	if (!fidx_row_has(row, c))
		return;
	const char *t = fidx_row_text(row, c);
	size_t len = fidx_row_len(row, c);
	char *shown = export_tty_name(ctx->out, t);
	if (shown) {
		t = shown;
		len = strlen(shown);
	}
	if (!ctx->excel_safe && strcspn(t, ",\"\r\n") == len) {
		export_put(ctx->out, t, len);
		free(shown);
		return;
	}
	putc_unlocked('"', ctx->out);
	if (ctx->excel_safe && (*t == '=' || *t == '+' || *t == '-' || *t == '@' ||
				*t == '\t' || *t == '\r' || *t == '\''))
		putc_unlocked('\'', ctx->out);
	for (const char *q; (q = memchr(t, '"', len)); ) {
		export_put(ctx->out, t, (size_t)(q - t) + 1);
		putc_unlocked('"', ctx->out);
		len -= (size_t)(q - t) + 1;
		t = q + 1;
	}
	export_put(ctx->out, t, len);
	putc_unlocked('"', ctx->out);
	free(shown);
}

/* Writes the value of column c of row as a cell (nothing for NULL). */
static void csv_cell(struct export_ctx *ctx, const struct fidx_row *row, enum fidx_col c)
{
	FILE *out = ctx->out;
	struct fidx_time t;
	const uint8_t *digest;
	switch (fidx_columns[c].kind) {
	case FIDX_KIND_INT:
		if (fidx_row_has(row, c))
			export_put_i64(out, fidx_row_int(row, c));
		break;
	case FIDX_KIND_UINT:
		if (fidx_row_has(row, c))
			export_put_u64(out, fidx_row_u64(row, c));
		break;
	case FIDX_KIND_TIME:
		if (fidx_row_time(row, c, &t))
			export_put_time_ns(out, t);
		for (enum fidx_col k = times_start(c); ends_times(c) && k <= c; k++) {
			putc_unlocked(',', out);
			if (fidx_row_time(row, k, &t))
				export_put_iso(out, t);
		}
		break;
	case FIDX_KIND_DIGEST:
		if ((digest = fidx_row_digest(row, (enum fidx_digest)(c - FIDX_COL_MD5))))
			fidx_write_hex(out, digest, fidx_digest_len((enum fidx_digest)(c - FIDX_COL_MD5)));
		break;
	default:
		csv_text(ctx, row, c);
	}
}

/* Writes one record: every column in the header's order, then CRLF. */
void export_csv_row(struct export_ctx *ctx, const struct fidx_row *row)
{
	for (enum fidx_col c = 0; c <= LAST_COLUMN; c++) {
		if (c > 0)
			putc_unlocked(',', ctx->out);
		csv_cell(ctx, row, c);
	}
	export_put(ctx->out, "\r\n", 2);
}

/* ---- JSONL ---- */

/* Writes "name[suffix]": */
static void json_key(FILE *out, const char *name, const char *suffix)
{
	putc_unlocked('"', out);
	export_puts(out, name);
	export_puts(out, suffix);
	export_put(out, "\":", 2);
}

/* Writes time column c of row as its ISO 8601 string, or null. */
static void json_iso(FILE *out, const struct fidx_row *row, enum fidx_col c)
{
	struct fidx_time t;
	if (!fidx_row_time(row, c, &t)) {
		export_puts(out, "null");
		return;
	}
	putc_unlocked('"', out);
	export_put_iso(out, t);
	putc_unlocked('"', out);
}

/*
 * Writes column c of row as "name":value, or "name":null.  Text from the
 * disk (paths, names, link targets) goes through fidx_json_path(); the
 * error, fidx's own text, is a plain string.
 */
static void json_member(FILE *out, const struct fidx_row *row, enum fidx_col c)
{
	const char *name = fidx_columns[c].name;
	enum fidx_col_kind kind = fidx_columns[c].kind;
	struct fidx_time t;
	const uint8_t *digest;
	if (kind == FIDX_KIND_TEXT && c != FIDX_COL_ERROR && fidx_row_has(row, c)) {
		fidx_json_path(out, name, fidx_row_text(row, c));
		return;
	}
	json_key(out, name, kind == FIDX_KIND_TIME ? "_ns" : "");
	if (!fidx_row_has(row, c) && kind != FIDX_KIND_TIME) {
		export_puts(out, "null");
		return;
	}
	switch (kind) {
	case FIDX_KIND_INT:
		export_put_i64(out, fidx_row_int(row, c));
		break;
	case FIDX_KIND_UINT:
		export_put_u64(out, fidx_row_u64(row, c));
		break;
	case FIDX_KIND_TIME:
		if (fidx_row_time(row, c, &t))
			export_put_time_ns(out, t);
		else
			export_puts(out, "null");
		for (enum fidx_col k = times_start(c); ends_times(c) && k <= c; k++) {
			putc_unlocked(',', out);
			json_key(out, fidx_columns[k].name, "");
			json_iso(out, row, k);
		}
		break;
	case FIDX_KIND_DIGEST:
		if ((digest = fidx_row_digest(row, (enum fidx_digest)(c - FIDX_COL_MD5)))) {
			putc_unlocked('"', out);
			fidx_write_hex(out, digest, fidx_digest_len((enum fidx_digest)(c - FIDX_COL_MD5)));
			putc_unlocked('"', out);
		} else {
			export_puts(out, "null");
		}
		break;
	default:
		fidx_json_string(out, fidx_row_text(row, c));
	}
}

/* Writes one JSON object on its line: every column, the times twice. */
void export_jsonl_row(struct export_ctx *ctx, const struct fidx_row *row)
{
	putc_unlocked('{', ctx->out);
	for (enum fidx_col c = 0; c <= LAST_COLUMN; c++) {
		if (c > 0)
			putc_unlocked(',', ctx->out);
		json_member(ctx->out, row, c);
	}
	export_put(ctx->out, "}\n", 2);
}
