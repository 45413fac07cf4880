/*
 * export_body.c - `fidx export --format body`: the Sleuth Kit body file
 * (TSK 3.x and later), which `mactime -b FILE` turns into a timeline.
 *
 * One line per entry, eleven fields separated by '|':
 *
 *     MD5|name|inode|mode_as_string|UID|GID|size|atime|mtime|ctime|crtime
 *
 *   MD5     the hex MD5 when the scan computed it, else 0 (TSK's "not known")
 *   name    the path; a symlink's is "path -> target", as fls writes it
 *   mode    fls's form: the type letter, '/', then ls -l's ten letters with
 *           TSK's type letter first: r/rrw-r--r--, d/drwxr-xr-x,
 *           l/lrwxrwxrwx, p/, s/, c/, b/; -/---------- when unknown
 *   times   whole seconds since the epoch (rounded down); 0 when unknown
 *           (a birth time the filesystem does not keep), as TSK writes it
 * Entries that could not be stat'ed have 0 for every number.
 *
 * Names.  TSK's fls replaces control characters with '^' and writes '|'
 * as is, which breaks the line; mactime, the reader, percent-decodes every
 * field (%XX, any case) after splitting at '|'.  So this writer
 * percent-encodes '%', '|' and the control bytes (below 0x20, and 0x7f):
 * mactime shows every name byte for byte.  mactime's own limit: it leaves
 * out of its timeline a name holding a newline (its sort key is matched
 * line by line), though the body file carries it (%0A).  Bytes that are
 * not UTF-8 are written raw: mactime reads bytes.
 */
#include "export.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "record.h"

/* Writes s with '%', '|' and control bytes as %XX. */
static void put_field(FILE *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *shown = export_tty_name(out, s);
	for (const unsigned char *p = (const unsigned char *)(shown ? shown : s); *p; ) {
		const unsigned char *start = p;
		while (*p >= 0x20 && *p != 0x7f && *p != '%' && *p != '|')
			p++;
		export_put(out, start, (size_t)(p - start));
		if (!*p)
			break;
		char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
		export_put(out, esc, 3);
		p++;
	}
	free(shown);
}

/* TSK's letter for a type column value ('-' when unknown). */
static char body_type_letter(const char *type)
{
	switch (*type) {
	case 'f': return 'r';
	case 'd': case 'l': case 'p': case 's': case 'c': case 'b': return *type;
	default: return '-';
	}
}

/* Writes "|<integer column c, or 0>". */
static void put_num(FILE *out, const struct fidx_row *row, enum fidx_col c)
{
	putc_unlocked('|', out);
	export_put_u64(out, fidx_row_u64(row, c)); /* NULL reads 0 */
}

/* Writes "|<whole seconds of time column c, or 0>". */
static void put_time(FILE *out, const struct fidx_row *row, enum fidx_col c)
{
	struct fidx_time t;
	putc_unlocked('|', out);
	if (!fidx_row_time(row, c, &t))
		putc_unlocked('0', out);
	else
		export_put_i64(out, t.sec);
}

/*
 * Writes one body line of row: its path followed by suffix (" (deleted)",
 * " ($FILE_NAME)" or ""), its times those of the columns from t0 on (atime,
 * mtime, ctime, btime, as the body format orders them).
 */
static void body_line(FILE *out, const struct fidx_row *row, const char *suffix, enum fidx_col t0)
{
	const uint8_t *md5 = fidx_row_digest(row, FIDX_MD5);
	const char *type = export_text(row, FIDX_COL_TYPE);
	char t = body_type_letter(type);

	if (md5)
		fidx_write_hex(out, md5, 16);
	else
		putc_unlocked('0', out);
	putc_unlocked('|', out);
	put_field(out, export_text(row, FIDX_COL_PATH));
	if (*type == 'l' && fidx_row_has(row, FIDX_COL_LINK_TARGET)) {
		export_puts(out, " -> ");
		put_field(out, fidx_row_text(row, FIDX_COL_LINK_TARGET));
	}
	export_puts(out, suffix);
	put_num(out, row, FIDX_COL_INO);
	putc_unlocked('|', out);
	putc_unlocked(t, out);
	putc_unlocked('/', out);
	if (!fidx_row_has(row, FIDX_COL_MODE))
		export_puts(out, "----------");
	else
		export_put_perms(out, t, (uint32_t)fidx_row_int(row, FIDX_COL_MODE));
	put_num(out, row, FIDX_COL_UID);
	put_num(out, row, FIDX_COL_GID);
	put_num(out, row, FIDX_COL_SIZE);
	for (int k = 0; k < 4; k++)
		put_time(out, row, (enum fidx_col)(t0 + k));
	putc_unlocked('\n', out);
}

/*
 * Writes the body file's lines of one entry: one, and for an NTFS entry of a
 * disk image a second with its $FILE_NAME times, as fls -m does; an entry
 * whose name is deleted (or an orphan) says so after its name, as fls does
 * (" (deleted)", " (deleted-realloc)").
 */
void export_body_row(struct export_ctx *ctx, const struct fidx_row *row)
{
	const char *state = fidx_row_text(row, FIDX_COL_STATE);
	const char *suffix = !state ? ""
			     : strcmp(state, "deleted") == 0 || strcmp(state, "orphan") == 0
			     ? " (deleted)"
			     : strcmp(state, "reallocated") == 0 ? " (deleted-realloc)" : "";
	body_line(ctx->out, row, suffix, FIDX_COL_ATIME);
	if (fidx_row_has(row, FIDX_COL_FN_MTIME)) {
		char fn[64];
		snprintf(fn, sizeof(fn), " ($FILE_NAME)%s", suffix);
		body_line(ctx->out, row, fn, FIDX_COL_FN_ATIME);
	}
}
