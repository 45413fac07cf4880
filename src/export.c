/*
 * export.c - the table of export formats, and the small writers they share
 * (export.h): integers, hex digests, ISO times, mode strings, strict UTF-8.
 *
 * They run once or several times per row of a database of millions, so
 * they build their text in a local buffer and hand it to stdio in one
 * fwrite_unlocked() instead of calling printf.
 */
#include "export.h"

#include "dbtime.h"

#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "output.h"
#include "record.h"
#include "rowcheck.h"
#include "utf8.h"
#include "when.h"

_Static_assert(EC_XXH128 - EC_MD5 == FIDX_XXH128 - FIDX_MD5 && EC_MD5 + FIDX_NDIGESTS == EC_ERROR,
	       "the digest columns follow enum fidx_digest");

/* The rows of the checksum lists: regular files, and rows whose type is damaged (rowcheck.h). */
#define FILES FIDX_SQL_FILE_OR_DAMAGED("type")
/* The columns a checksum list reads: the row, its path and type, and digest(s) c. */
#define COL(c) (UINT64_C(1) << (c))
#define SUM_READS(c) (COL(EC_ID) | COL(EC_SCAN_ID) | COL(EC_PATH) | COL(EC_TYPE) | (c))
#define DIGEST_COL(d) COL(EC_MD5 + (d))
#define BIT(d) (1u << (d))

const struct export_format export_formats[] = {
	{"csv", NULL, "every column, RFC 4180 (CRLF, a header row)", -1, 0,
	 export_csv_begin, export_csv_row, NULL, 0},
	{"jsonl", NULL, "every column, one JSON object per line", -1, 0,
	 NULL, export_jsonl_row, NULL, 0},
	{"sha256sum", FILES, "lines for 'sha256sum -c' (regular files)", FIDX_SHA256,
	 BIT(FIDX_SHA256), export_sums_begin, export_sums_row, export_sums_end,
	 SUM_READS(DIGEST_COL(FIDX_SHA256))},
	{"md5sum", FILES, "lines for 'md5sum -c'", FIDX_MD5, BIT(FIDX_MD5),
	 export_sums_begin, export_sums_row, export_sums_end,
	 SUM_READS(DIGEST_COL(FIDX_MD5))},
	{"sha1sum", FILES, "lines for 'sha1sum -c'", FIDX_SHA1, BIT(FIDX_SHA1),
	 export_sums_begin, export_sums_row, export_sums_end,
	 SUM_READS(DIGEST_COL(FIDX_SHA1))},
	{"sha512sum", FILES, "lines for 'sha512sum -c'", FIDX_SHA512, BIT(FIDX_SHA512),
	 export_sums_begin, export_sums_row, export_sums_end,
	 SUM_READS(DIGEST_COL(FIDX_SHA512))},
	{"hashdeep", FILES, "a known-hash file for 'hashdeep -a -k FILE'", -1,
	 BIT(FIDX_MD5) | BIT(FIDX_SHA1) | BIT(FIDX_SHA256),
	 export_hashdeep_begin, export_hashdeep_row, export_hashdeep_end,
	 SUM_READS(COL(EC_SIZE) | DIGEST_COL(FIDX_MD5) | DIGEST_COL(FIDX_SHA256))},
	{"body", NULL, "the Sleuth Kit body file, for 'mactime -b FILE'", -1, 0,
	 NULL, export_body_row, NULL, 0},
	{"dfxml", NULL, "Digital Forensics XML: one fileobject per entry", -1, 0,
	 export_dfxml_begin, export_dfxml_row, export_dfxml_end, 0},
};
const size_t export_nformats = sizeof(export_formats) / sizeof(export_formats[0]);

const struct export_format *export_format_find(const char *name)
{
	for (size_t i = 0; i < export_nformats; i++)
		if (strcmp(export_formats[i].name, name) == 0)
			return &export_formats[i];
	return NULL;
}

void export_put_u64(FILE *out, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	export_put(out, p, (size_t)(buf + sizeof(buf) - p));
}

void export_put_i64(FILE *out, int64_t v)
{
	if (v < 0) {
		putc_unlocked('-', out);
		/* -(v + 1) + 1 cannot overflow, even for INT64_MIN. */
		export_put_u64(out, (uint64_t)(-(v + 1)) + 1);
	} else {
		export_put_u64(out, (uint64_t)v);
	}
}

void export_put_iso(FILE *out, struct fidx_time t)
{
	char buf[FIDX_WHEN_ISO];
	export_puts(out, fidx_when_iso(t, buf));
}

void export_put_time_ns(FILE *out, struct fidx_time t)
{
	char buf[FIDX_TIME_NS_MAX];
	export_put(out, buf, (size_t)(fidx_time_put_ns(buf, t) - buf));
}

bool export_time(sqlite3_stmt *s, int c, struct fidx_time *t)
{
	return fidx_time_column(s, c, EC_TIME_EXT, (enum fidx_time_kind)(c - EC_ATIME), t);
}

const unsigned char *export_digest(sqlite3_stmt *s, int c, size_t len)
{
	if (sqlite3_column_type(s, c) != SQLITE_BLOB)
		return NULL;
	const unsigned char *p = sqlite3_column_blob(s, c);
	return (size_t)sqlite3_column_bytes(s, c) == len ? p : NULL;
}

size_t export_utf8_char(const unsigned char *p)
{
	size_t n = fidx_utf8_seq_len(p);
	/* U+FFFE and U+FFFF (EF BF BE, EF BF BF) are not XML characters. */
	if (n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe)
		return 0;
	return n;
}

void export_put_perms(FILE *out, char type_letter, uint32_t mode)
{
	char b[11];
	fidx_mode_string(mode, b);
	b[0] = type_letter;
	export_put(out, b, 10);
}

void export_put_command(FILE *out, const struct export_ctx *ctx,
			void (*put)(FILE *out, const char *s))
{
	/* argv[0] is the subcommand's name: the program's comes first. */
	export_puts(out, "fidx");
	for (int i = 0; i < ctx->argc; i++) {
		putc_unlocked(' ', out);
		put(out, ctx->argv[i]);
	}
}

int export_need_digest(const struct export_ctx *ctx, int d, const char *format)
{
	for (size_t i = 0; i < ctx->q->nscans; i++) {
		unsigned has = ctx->scan_digests[i];
		if (has & (1u << d))
			continue;
		char list[64] = "";
		for (int k = 0; k < FIDX_NDIGESTS; k++)
			if (has & (1u << k)) {
				if (*list)
					strcat(list, ",");
				strcat(list, fidx_digest_name((enum fidx_digest)k));
			}
		/* Which selected scans have it: those the user can name. */
		char others[256] = "";
		size_t len = 0;
		for (size_t k = 0; k < ctx->q->nscans && len < sizeof(others) - 24; k++)
			if (ctx->scan_digests[k] & (1u << d))
				len += (size_t)snprintf(others + len, sizeof(others) - len, "%s%lld",
							len ? "," : "", (long long)ctx->q->scans[k]);
		sqlite3_stmt *s = fidx_query_prepare(ctx->q, "SELECT root FROM scan WHERE id = ?");
		char *root = NULL;
		if (s) {
			sqlite3_bind_int64(s, 1, ctx->q->scans[i]);
			if (sqlite3_step(s) == SQLITE_ROW)
				root = strdup(fidx_quote((const char *)sqlite3_column_text(s, 0)));
			sqlite3_finalize(s);
		}
		if (ctx->q->by_default)
			fidx_error("no complete scan of '%s' has %s digests (scan %lld, the newest,"
				   " was made with --hash %s): --format %s needs them; %s%s%sor scan"
				   " '%s' again with --hash %s", root ? root : "?",
				   fidx_digest_name((enum fidx_digest)d), (long long)ctx->q->scans[i],
				   *list ? list : "none", format,
				   *others ? "export the scans that have them with --scan " : "",
				   others, *others ? ", " : "", root ? root : "?",
				   fidx_digest_name((enum fidx_digest)d));
		else
			fidx_error("scan %lld of '%s' has no %s digests (it was made with --hash %s):"
				   " --format %s needs a scan made with --hash %s",
				   (long long)ctx->q->scans[i], root ? root : "?",
				   fidx_digest_name((enum fidx_digest)d), *list ? list : "none", format,
				   fidx_digest_name((enum fidx_digest)d));
		free(root);
		return -1;
	}
	return 0;
}

char *export_tty_name(FILE *out, const char *s)
{
	return fidx_out_quotes(out, s) ? fidx_shell_quoted(s) : NULL;
}
