/*
 * export_table.c - `fidx export --format csv | jsonl`: every column of
 * every entry, for spreadsheets, data frames and jq.
 *
 * Both carry the columns of the `file` table under their docs/SCHEMA.md
 * names, in its order, with two changes: digests are lower-case hex, and
 * the four times come twice, as integer nanoseconds (atime_ns ...) and as
 * ISO 8601 UTC text (atime ...), as in the file_view view.  size, blocks,
 * nlink, dev and ino are written unsigned (the schema stores a value above
 * 2^63 as its two's complement).  NULL is an empty cell in CSV, null in
 * JSON.
 *
 * CSV follows RFC 4180: CRLF after every record, the header first, a cell
 * quoted when it holds a comma, a double quote, CR or LF, its quotes
 * doubled.  A CSV file is bytes: a name that is not UTF-8 is written as
 * its raw bytes (a reader that wants text decodes with surrogateescape or
 * Latin-1).  --excel-safe defends a spreadsheet against formula injection
 * as OWASP advises: every text cell is quoted, and one that starts with
 * = + - @ TAB or CR gets a leading single quote, which Excel and LibreOffice
 * read as "this is text".  The guard touches only text fidx took from the
 * disk (path, name, ext, link_target, error); numbers and digests are
 * fidx's own.
 *
 * JSONL writes paths with fidx_json_path(): a name that is not UTF-8 keeps
 * an escaped reading in "path" and its exact bytes in "path_base64".
 */
#include "export.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "record.h"

/* The time columns: their ISO names follow the *_ns ones. */
static const struct {
	const char *name;
	int col;
} time_cols[] = {
	{"atime", EC_ATIME}, {"mtime", EC_MTIME}, {"ctime", EC_CTIME}, {"btime", EC_BTIME},
};

/* ---- CSV ---- */

int export_csv_begin(struct export_ctx *ctx)
{
	export_puts(ctx->out, "id,scan_id,path,name,ext,type,size,blocks,mode,uid,gid,nlink,"
			      "dev,ino,atime_ns,mtime_ns,ctime_ns,btime_ns,atime,mtime,ctime,"
			      "btime,link_target,md5,sha1,sha256,sha512,xxh128,error\r\n");
	return 0;
}

/* Writes a text cell: quoted when it must be (always with --excel-safe). */
static void csv_text(struct export_ctx *ctx, sqlite3_stmt *s, int c)
{
	if (export_null(s, c))
		return;
	const char *t = export_text(s, c);
	size_t len = (size_t)sqlite3_column_bytes(s, c);
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
				*t == '\t' || *t == '\r'))
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

/* Writes ",<integer>" (signed or unsigned), or "," for NULL. */
static void csv_int(FILE *out, sqlite3_stmt *s, int c, bool is_unsigned)
{
	putc_unlocked(',', out);
	if (export_null(s, c))
		return;
	if (is_unsigned)
		export_put_u64(out, (uint64_t)sqlite3_column_int64(s, c));
	else
		export_put_i64(out, sqlite3_column_int64(s, c));
}

void export_csv_row(struct export_ctx *ctx, sqlite3_stmt *s)
{
	FILE *out = ctx->out;

	export_put_i64(out, sqlite3_column_int64(s, EC_ID));
	csv_int(out, s, EC_SCAN_ID, false);
	for (int c = EC_PATH; c <= EC_TYPE; c++) {
		putc_unlocked(',', out);
		csv_text(ctx, s, c);
	}
	csv_int(out, s, EC_SIZE, true);
	csv_int(out, s, EC_BLOCKS, true);
	csv_int(out, s, EC_MODE, false);
	csv_int(out, s, EC_UID, false);
	csv_int(out, s, EC_GID, false);
	csv_int(out, s, EC_NLINK, true);
	csv_int(out, s, EC_DEV, true);
	csv_int(out, s, EC_INO, true);
	struct fidx_time t[4];
	bool has[4];
	for (size_t i = 0; i < 4; i++) {
		has[i] = export_time(s, time_cols[i].col, &t[i]);
		putc_unlocked(',', out);
		if (has[i])
			export_put_time_ns(out, t[i]);
	}
	for (size_t i = 0; i < 4; i++) {
		putc_unlocked(',', out);
		if (has[i])
			export_put_iso(out, t[i]);
	}
	putc_unlocked(',', out);
	csv_text(ctx, s, EC_LINK);
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		size_t len = fidx_digest_len((enum fidx_digest)d);
		const unsigned char *p = export_digest(s, EC_MD5 + d, len);
		putc_unlocked(',', out);
		if (p)
			fidx_out_hex(out, p, len);
	}
	putc_unlocked(',', out);
	csv_text(ctx, s, EC_ERROR);
	export_put(out, "\r\n", 2);
}

/* ---- JSONL ---- */

/* Writes ,"key":<integer> or ,"key":null. */
static void json_int(FILE *out, const char *key, sqlite3_stmt *s, int c, bool is_unsigned)
{
	putc_unlocked(',', out);
	putc_unlocked('"', out);
	export_puts(out, key);
	export_put(out, "\":", 2);
	if (export_null(s, c))
		export_puts(out, "null");
	else if (is_unsigned)
		export_put_u64(out, (uint64_t)sqlite3_column_int64(s, c));
	else
		export_put_i64(out, sqlite3_column_int64(s, c));
}

/* Writes ,"key":<path as fidx_json_path() writes it> or ,"key":null. */
static void json_path(FILE *out, const char *key, sqlite3_stmt *s, int c)
{
	putc_unlocked(',', out);
	if (export_null(s, c)) {
		putc_unlocked('"', out);
		export_puts(out, key);
		export_puts(out, "\":null");
	} else {
		fidx_json_path(out, key, export_text(s, c));
	}
}

/* Writes ,"key":"text" (escaped) or ,"key":null. */
static void json_text(FILE *out, const char *key, sqlite3_stmt *s, int c)
{
	putc_unlocked(',', out);
	putc_unlocked('"', out);
	export_puts(out, key);
	export_put(out, "\":", 2);
	if (export_null(s, c))
		export_puts(out, "null");
	else
		fidx_json_string(out, export_text(s, c));
}

void export_jsonl_row(struct export_ctx *ctx, sqlite3_stmt *s)
{
	FILE *out = ctx->out;

	export_puts(out, "{\"id\":");
	export_put_i64(out, sqlite3_column_int64(s, EC_ID));
	json_int(out, "scan_id", s, EC_SCAN_ID, false);
	json_path(out, "path", s, EC_PATH);
	json_path(out, "name", s, EC_NAME);
	json_path(out, "ext", s, EC_EXT);
	json_text(out, "type", s, EC_TYPE);
	json_int(out, "size", s, EC_SIZE, true);
	json_int(out, "blocks", s, EC_BLOCKS, true);
	json_int(out, "mode", s, EC_MODE, false);
	json_int(out, "uid", s, EC_UID, false);
	json_int(out, "gid", s, EC_GID, false);
	json_int(out, "nlink", s, EC_NLINK, true);
	json_int(out, "dev", s, EC_DEV, true);
	json_int(out, "ino", s, EC_INO, true);
	struct fidx_time t[4];
	bool has[4];
	for (size_t i = 0; i < 4; i++) {
		has[i] = export_time(s, time_cols[i].col, &t[i]);
		putc_unlocked(',', out);
		putc_unlocked('"', out);
		export_puts(out, time_cols[i].name);
		export_put(out, "_ns\":", 5);
		if (has[i])
			export_put_time_ns(out, t[i]);
		else
			export_puts(out, "null");
	}
	for (size_t i = 0; i < 4; i++) {
		putc_unlocked(',', out);
		putc_unlocked('"', out);
		export_puts(out, time_cols[i].name);
		export_put(out, "\":", 2);
		if (!has[i]) {
			export_puts(out, "null");
		} else {
			putc_unlocked('"', out);
			export_put_iso(out, t[i]);
			putc_unlocked('"', out);
		}
	}
	json_path(out, "link_target", s, EC_LINK);
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		size_t len = fidx_digest_len((enum fidx_digest)d);
		const unsigned char *p = export_digest(s, EC_MD5 + d, len);
		putc_unlocked(',', out);
		putc_unlocked('"', out);
		export_puts(out, fidx_digest_name((enum fidx_digest)d));
		export_put(out, "\":", 2);
		if (p) {
			putc_unlocked('"', out);
			fidx_out_hex(out, p, len);
			putc_unlocked('"', out);
		} else {
			export_puts(out, "null");
		}
	}
	json_text(out, "error", s, EC_ERROR);
	export_put(out, "}\n", 2);
}
