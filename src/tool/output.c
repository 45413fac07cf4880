/*
 * output.c - buffered results on stdout (output.h).
 */
#include "output.h"

#include <inttypes.h>

#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wctype.h>

#include "diag.h"
#include "utf8.h"

void fidx_out_begin(void)
{
	/* Our own buffer: given NULL, glibc ignores the size and takes 4 KiB. */
	static char buf[FIDX_OUT_BUFFER];
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
}

bool fidx_out_tty(void)
{
	static int tty = -1;
	if (tty < 0)
		tty = isatty(STDOUT_FILENO);
	return tty;
}

bool fidx_name_unsafe(const char *name)
{
	for (const unsigned char *p = (const unsigned char *)name; *p;) {
		size_t n = fidx_utf8_seq_len(p);
		if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f)) || (p[0] == 0xc2 && p[1] < 0xa0))
			return true;
		p += n;
	}
	return false;
}

/* The C.UTF-8 locale, for iswprint_l(); (locale_t)0 when the system has none. */
static locale_t utf8_locale(void)
{
	static bool tried;
	static locale_t loc;
	if (!tried) {
		loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
		tried = true;
	}
	return loc;
}

/*
 * Whether the n bytes at p (n from fidx_utf8_seq_len(), 0 for a byte that
 * is not UTF-8) are a character shown as it is inside quotes.
 */
static bool printable(const unsigned char *p, size_t n)
{
	if (n <= 1)
		return n == 1 && *p >= 0x20 && *p != 0x7f;
	if (p[0] == 0xc2 && p[1] < 0xa0)
		return false; /* C1 */
	locale_t loc = utf8_locale();
	if (loc == (locale_t)0)
		return true;
	wint_t c = p[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++)
		c = (c << 6) | (p[i] & 0x3f);
	return iswprint_l(c, loc);
}

void fidx_shell_quote(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	bool quote = false, last_printable = true;

	for (const unsigned char *q = p; *q;) {
		size_t n = fidx_utf8_seq_len(q);
		quote |= *q == '\'';
		last_printable = printable(q, n);
		q += n ? n : 1;
	}
	/*
	 * Inside $'...'.  ls quotes a name holding a quote twice, and the second
	 * pass starts in the state where the first ended: after an unprintable
	 * last character, a printable first one is preceded by '' ('''a...),
	 * which a shell reads as nothing.  That is kept, so the form is ls's;
	 * an unprintable first one still opens $'...' (ls would not: its form
	 * then reads back as other bytes).
	 */
	bool dollar = quote && !last_printable;

	putc_unlocked('\'', out);
	while (*p) {
		size_t n = fidx_utf8_seq_len(p);
		if (*p == '\'') {
			fputs_unlocked("'\\''", out); /* close, a quoted quote, open */
			dollar = false;
			p++;
		} else if (printable(p, n)) {
			if (dollar)
				fputs_unlocked("''", out); /* close $'...', open '...' */
			dollar = false;
			fwrite_unlocked(p, 1, n, out);
			p += n;
		} else {
			if (!dollar || p == (const unsigned char *)s)
				fputs_unlocked("'$'", out);
			dollar = true;
			for (size_t i = 0; i < (n ? n : 1); i++, p++) {
				if (*p >= '\a' && *p <= '\r')
					fprintf(out, "\\%c", "abtnvfr"[*p - '\a']);
				else
					fprintf(out, "\\%03o", *p);
			}
		}
	}
	putc_unlocked('\'', out);
}

char *fidx_shell_quoted(const char *s)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fidx_shell_quote(f, s);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int fidx_out_end_note(const char *note)
{
	static bool reported; /* the failure was told already: once is enough */
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	if (!reported)
		fidx_error("cannot write output: %s%s%s%s", errno ? strerror(errno) : "write error",
			   note ? " (" : "", note ? note : "", note ? ")" : "");
	reported = true;
	return -1;
}

int fidx_out_end(void)
{
	return fidx_out_end_note(NULL);
}

const char *fidx_mode_string(uint32_t mode, char buf[static 11])
{
	/* by the format bits (mode >> 12): 1 fifo, 2 char, 4 dir, 6 block, 8 file, 10 link, 12 socket */
	static const char kind[] = "?pc?d?b?-?l?s???";
	buf[0] = kind[(mode >> 12) & 15];
	for (int i = 0; i < 3; i++) {
		unsigned bits = (mode >> (6 - 3 * i)) & 7;
		buf[1 + 3 * i] = bits & 4 ? 'r' : '-';
		buf[2 + 3 * i] = bits & 2 ? 'w' : '-';
		buf[3 + 3 * i] = bits & 1 ? 'x' : '-';
	}
	if (mode & 04000)
		buf[3] = buf[3] == 'x' ? 's' : 'S';
	if (mode & 02000)
		buf[6] = buf[6] == 'x' ? 's' : 'S';
	if (mode & 01000)
		buf[9] = buf[9] == 'x' ? 't' : 'T';
	buf[10] = '\0';
	return buf;
}

const char *fidx_size_text(uint64_t bytes, bool exact, char buf[static FIDX_SIZE_TEXT])
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)bytes;
	unsigned u = 0;

	if (exact || bytes < 1024) {
		snprintf(buf, FIDX_SIZE_TEXT, exact ? "%" PRIu64 : "%" PRIu64 " B", bytes);
		return buf;
	}
	while (v >= 1024 && u < sizeof(units) / sizeof(units[0]) - 1) {
		v /= 1024;
		u++;
	}
	/* Round first, so that 9.96 KiB prints as "10 KiB", not "10.0 KiB". */
	if (v < 9.95)
		snprintf(buf, FIDX_SIZE_TEXT, "%.1f %s", v, units[u]);
	else
		snprintf(buf, FIDX_SIZE_TEXT, "%.0f %s", v, units[u]);
	return buf;
}
