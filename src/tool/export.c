/*
 * export.c - the table of export formats, and the small writers they share
 * (export.h): integers, hex digests, ISO times, mode strings, strict UTF-8.
 *
 * They run once or several times per row of a database of millions, so
 * they build their text in a local buffer and hand it to stdio in one
 * fwrite_unlocked() instead of calling printf.
 */
#include "export.h"

#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "output.h"
#include "record.h"
#include "scanrow.h"
#include "utf8.h"
#include "when.h"

/*
 * The entries of the checksum lists: regular files.  The store also hands
 * out the rows whose type is damaged, and its check of their type stops the
 * export there.
 */
#define FILES FIDX_TYPE_FILE
/* What csv, jsonl, body and dfxml read: every column of the file table but
   digests_from, so that the store checks each value of every row. */
#define EVERY_COLUMN (FIDX_FILE_ALL & ~FIDX_COLUMN(FIDX_COL_DIGESTS_FROM))
/* The columns a checksum list reads: the row, its path and type (checked,
   see FILES), and digest(s) c. */
#define SUM_READS(c) (FIDX_COLUMN(FIDX_COL_ID) | FIDX_COLUMN(FIDX_COL_SCAN_ID) | \
		      FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_TYPE) | (c))
#define BIT(d) (1u << (d))

const struct export_format export_formats[] = {
	{"csv", 0, "every column, RFC 4180 (CRLF, a header row)", -1, 0,
	 export_csv_begin, export_csv_row, NULL, EVERY_COLUMN},
	{"jsonl", 0, "every column, one JSON object per line", -1, 0,
	 NULL, export_jsonl_row, NULL, EVERY_COLUMN},
	{"sha256sum", FILES, "lines for 'sha256sum -c' (regular files)", FIDX_SHA256,
	 BIT(FIDX_SHA256), export_sums_begin, export_sums_row, export_sums_end,
	 SUM_READS(FIDX_DIGEST_COLUMN(FIDX_SHA256))},
	{"md5sum", FILES, "lines for 'md5sum -c'", FIDX_MD5, BIT(FIDX_MD5),
	 export_sums_begin, export_sums_row, export_sums_end,
	 SUM_READS(FIDX_DIGEST_COLUMN(FIDX_MD5))},
	{"sha1sum", FILES, "lines for 'sha1sum -c'", FIDX_SHA1, BIT(FIDX_SHA1),
	 export_sums_begin, export_sums_row, export_sums_end,
	 SUM_READS(FIDX_DIGEST_COLUMN(FIDX_SHA1))},
	{"sha512sum", FILES, "lines for 'sha512sum -c'", FIDX_SHA512, BIT(FIDX_SHA512),
	 export_sums_begin, export_sums_row, export_sums_end,
	 SUM_READS(FIDX_DIGEST_COLUMN(FIDX_SHA512))},
	{"hashdeep", FILES, "a known-hash file for 'hashdeep -a -k FILE'", -1,
	 BIT(FIDX_MD5) | BIT(FIDX_SHA1) | BIT(FIDX_SHA256),
	 export_hashdeep_begin, export_hashdeep_row, export_hashdeep_end,
	 SUM_READS(FIDX_COLUMN(FIDX_COL_SIZE) | FIDX_DIGEST_COLUMN(FIDX_MD5) |
		   FIDX_DIGEST_COLUMN(FIDX_SHA1) | FIDX_DIGEST_COLUMN(FIDX_SHA256))},
	{"body", 0, "the Sleuth Kit body file, for 'mactime -b FILE'", -1, 0,
	 NULL, export_body_row, NULL, EVERY_COLUMN},
	{"dfxml", 0, "Digital Forensics XML: one fileobject per entry", -1, 0,
	 export_dfxml_begin, export_dfxml_row, export_dfxml_end, EVERY_COLUMN},
};
const size_t export_nformats = sizeof(export_formats) / sizeof(export_formats[0]);

/* Returns the format called name, or NULL (a walk of the short table). */
const struct export_format *export_format_find(const char *name)
{
	for (size_t i = 0; i < export_nformats; i++)
		if (strcmp(export_formats[i].name, name) == 0)
			return &export_formats[i];
	return NULL;
}

/* Writes v in decimal, its digits built backwards in a local buffer. */
void export_put_u64(FILE *out, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	export_put(out, p, (size_t)(buf + sizeof(buf) - p));
}

/* Writes v in decimal: a sign, then its magnitude as export_put_u64(). */
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

/* Writes t as ISO 8601 UTC with nanoseconds (fidx_when_iso(), no printf). */
void export_put_iso(FILE *out, struct fidx_time t)
{
	char buf[FIDX_WHEN_ISO];
	export_puts(out, fidx_when_iso(t, buf));
}

/* Writes t as the exact nanoseconds since the epoch (fidx_time_put_ns()). */
void export_put_time_ns(FILE *out, struct fidx_time t)
{
	char buf[FIDX_TIME_NS_MAX];
	export_put(out, buf, (size_t)(fidx_time_put_ns(buf, t) - buf));
}

/* Returns the length of the XML character at p (1..4), or 0 (export.h). */
size_t export_utf8_char(const unsigned char *p)
{
	size_t n = fidx_utf8_seq_len(p);
	/* U+FFFE and U+FFFF (EF BF BE, EF BF BF) are not XML characters. */
	if (n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe)
		return 0;
	return n;
}

/* Writes ls -l's mode string of mode with type_letter in place of its own. */
void export_put_perms(FILE *out, char type_letter, uint32_t mode)
{
	char b[11];
	fidx_mode_string(mode, b);
	b[0] = type_letter;
	export_put(out, b, 10);
}

/*
 * Writes "fidx" and the arguments of ctx, each through put, the database as
 * the store names it (a server's password is not written down).  Returns 0,
 * or -1 after printing "out of memory".
 */
int export_put_command(FILE *out, const struct export_ctx *ctx,
			void (*put)(FILE *out, const char *s))
{
	/* argv[0] is the subcommand's name: the program's comes first. */
	export_puts(out, "fidx");
	for (int i = 0; i < ctx->argc; i++) {
		const char *a = ctx->argv[i], *db = ctx->db_arg;
		putc_unlocked(' ', out);
		if (!db || !ctx->db_shown || db < a || db > a + strlen(a)) {
			put(out, a);
			continue;
		}
		/* "--db=TARGET" or "TARGET": what comes before it, then the name. */
		char *arg = NULL;
		if (asprintf(&arg, "%.*s%s", (int)(db - a), a, ctx->db_shown) < 0) {
			fidx_error("out of memory");
			return -1;
		}
		put(out, arg);
		free(arg);
	}
	return 0;
}

/*
 * Checks digest d against the digests each selected scan's options say it
 * computed (fidx_scan_row_digests_or_all()); the first scan without it is
 * named, with what it has and what to do.  Returns 0, or -1 after printing.
 */
int export_need_digest(const struct export_ctx *ctx, int d, const char *format)
{
	const struct fidx_query *q = ctx->q;
	const char *name = fidx_digest_name((enum fidx_digest)d);
	for (size_t i = 0; i < q->nscans; i++) {
		const struct fidx_scan_row *scan = &q->sel.scans.rows[i];
		unsigned has = fidx_scan_row_digests_or_all(scan);
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
		for (size_t k = 0; k < q->nscans && len < sizeof(others) - 24; k++)
			if (fidx_scan_row_digests_or_all(&q->sel.scans.rows[k]) & (1u << d))
				len += (size_t)snprintf(others + len, sizeof(others) - len, "%s%lld",
							len ? "," : "", (long long)q->ids[k]);
		const char *root = scan->root ? fidx_quote(scan->root) : "?";
		if (q->sel.by_default)
			fidx_error("no complete scan of '%s' has %s digests (scan %lld, the newest,"
				   " was made with --hash %s): --format %s needs them; %s%s%sor scan"
				   " '%s' again with --hash %s", root, name, (long long)q->ids[i],
				   *list ? list : "none", format,
				   *others ? "export the scans that have them with --scan " : "",
				   others, *others ? ", " : "", root, name);
		else
			fidx_error("scan %lld of '%s' has no %s digests (it was made with --hash %s):"
				   " --format %s needs a scan made with --hash %s",
				   (long long)q->ids[i], root, name, *list ? list : "none", format, name);
		return -1;
	}
	return 0;
}

/* Returns s quoted for the terminal out is (malloc'ed), or NULL to write s as is. */
char *export_tty_name(FILE *out, const char *s)
{
	return fidx_out_quotes(out, s) ? fidx_shell_quoted(s) : NULL;
}
