/*
 * export.c - the table of export formats, and the small writers they share
 * (export.h): integers, hex digests, ISO times, mode strings, strict UTF-8.
 *
 * They run once or several times per row of a database of millions, so
 * they build their text in a local buffer and hand it to stdio in one
 * fwrite_unlocked() instead of calling printf.
 */
#include "export.h"

#include <string.h>

#include "diag.h"
#include "output.h"
#include "record.h"
#include "utf8.h"

_Static_assert(EC_XXH128 - EC_MD5 == FIDX_XXH128 - FIDX_MD5 && EC_MD5 + FIDX_NDIGESTS == EC_ERROR,
	       "the digest columns follow enum fidx_digest");

const struct export_format export_formats[] = {
	{"csv", NULL, "every column, RFC 4180 (CRLF, a header row)", -1,
	 export_csv_begin, export_csv_row, NULL},
	{"jsonl", NULL, "every column, one JSON object per line", -1,
	 NULL, export_jsonl_row, NULL},
	{"sha256sum", "type = 'f'", "lines for 'sha256sum -c' (regular files)", FIDX_SHA256,
	 export_sums_begin, export_sums_row, export_sums_end},
	{"md5sum", "type = 'f'", "lines for 'md5sum -c'", FIDX_MD5,
	 export_sums_begin, export_sums_row, export_sums_end},
	{"sha1sum", "type = 'f'", "lines for 'sha1sum -c'", FIDX_SHA1,
	 export_sums_begin, export_sums_row, export_sums_end},
	{"sha512sum", "type = 'f'", "lines for 'sha512sum -c'", FIDX_SHA512,
	 export_sums_begin, export_sums_row, export_sums_end},
	{"hashdeep", "type = 'f'", "a known-hash file for 'hashdeep -a -k FILE'", -1,
	 export_hashdeep_begin, export_hashdeep_row, export_hashdeep_end},
	{"body", NULL, "the Sleuth Kit body file, for 'mactime -b FILE'", -1,
	 NULL, export_body_row, NULL},
	{"dfxml", NULL, "Digital Forensics XML: one fileobject per entry", -1,
	 export_dfxml_begin, export_dfxml_row, export_dfxml_end},
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

/* Writes the n-digit zero-padded decimal v at p. */
static void digits(char *p, unsigned v, int n)
{
	while (n--) {
		p[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

/*
 * Sets "YYYY-MM-DD" for days since 1970-01-01 (proleptic Gregorian): the
 * civil-from-days computation over 400-year eras of 146,097 days, with the
 * year starting on March 1 so that the leap day is its last.
 */
static void civil_date(int64_t days, char out[10])
{
	int64_t z = days + 719468; /* days since 0000-03-01 */
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);                          /* [0, 146096] */
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
	unsigned mp = (5 * doy + 2) / 153;                                    /* March = 0 */
	unsigned day = doy - (153 * mp + 2) / 5 + 1;
	unsigned month = mp < 10 ? mp + 3 : mp - 9;
	int64_t year = (int64_t)yoe + era * 400 + (month <= 2);
	/* int64 nanoseconds reach 1677..2262: always four digits. */
	digits(out, (unsigned)year, 4);
	out[4] = '-';
	digits(out + 5, month, 2);
	out[7] = '-';
	digits(out + 8, day, 2);
}

void export_put_iso(FILE *out, int64_t ns)
{
	/* Rows of one tree share few days: remember the last one. */
	static int64_t cached_day = INT64_MIN;
	static char date[10];
	char buf[31];
	int64_t sec = export_seconds(ns);
	int64_t rem = ns % 1000000000;
	unsigned frac = (unsigned)(rem < 0 ? rem + 1000000000 : rem);
	int64_t day = sec / 86400 - (sec % 86400 < 0);
	unsigned tod = (unsigned)(sec - day * 86400);

	if (day != cached_day) {
		civil_date(day, date);
		cached_day = day;
	}
	memcpy(buf, date, 10);
	buf[10] = 'T';
	digits(buf + 11, tod / 3600, 2);
	buf[13] = ':';
	digits(buf + 14, tod / 60 % 60, 2);
	buf[16] = ':';
	digits(buf + 17, tod % 60, 2);
	buf[19] = '.';
	digits(buf + 20, frac, 9);
	buf[29] = 'Z';
	export_put(out, buf, 30);
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
		fidx_error("scan %lld has no %s digests (it was made with --hash %s): --format %s"
			   " needs a scan made with --hash %s", (long long)ctx->q->scans[i],
			   fidx_digest_name((enum fidx_digest)d), *list ? list : "none", format,
			   fidx_digest_name((enum fidx_digest)d));
		return -1;
	}
	return 0;
}
