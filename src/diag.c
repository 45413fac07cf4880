/*
 * diag.c - messages for the user: one line each, written atomically.
 */
#include "diag.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "utf8.h"

static atomic_bool progress_shown; /* a progress line is on stderr */

void fidx_diag_progress_line(bool shown)
{
	atomic_store(&progress_shown, shown);
}

/*
 * Formats prefix + message + newline into one buffer and writes it at once,
 * after erasing the progress line when one is shown.
 */
static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char buf[8192];
	int n = snprintf(buf, sizeof(buf), "%sfidx: %s",
			 atomic_load(&progress_shown) ? "\r\033[K" : "", prefix);
	int m = vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	size_t len = n + (m < 0 ? 0 : (size_t)m < sizeof(buf) - n - 1 ? (size_t)m
							      : sizeof(buf) - n - 2);
	buf[len++] = '\n';
	ssize_t ignored = write(STDERR_FILENO, buf, len);
	(void)ignored;
}

void fidx_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

void fidx_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

const char *fidx_quote(const char *s)
{
	/* A few at once, so that one message may quote several names. */
	static _Thread_local char ring[FIDX_QUOTE_AT_ONCE][4096 + 16];
	static _Thread_local unsigned next;
	char *buf = ring[next++ % FIDX_QUOTE_AT_ONCE];
	const size_t size = sizeof(ring[0]);
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;
	while (*p && o < size - 16) {
		size_t n = fidx_utf8_seq_len(p);
		if (n == 1 && *p >= 0x20 && *p != 0x7f && *p != '\\') {
			buf[o++] = *p++;
		} else if (n > 1 && !(p[0] == 0xc2 && p[1] < 0xa0)) { /* not a C1 control */
			memcpy(buf + o, p, n);
			o += n;
			p += n;
		} else {
			/* a byte, then its two-character escape (no NUL) */
			static const char esc[][3] = {"\n\\n", "\t\\t", "\r\\r", "\\\\\\"};
			size_t k = 0;
			while (k < sizeof(esc) / sizeof(esc[0]) && esc[k][0] != (char)*p)
				k++;
			if (k < sizeof(esc) / sizeof(esc[0])) {
				buf[o++] = esc[k][1];
				buf[o++] = esc[k][2];
			} else {
				o += snprintf(buf + o, 5, "\\x%02x", *p);
			}
			p++;
		}
	}
	if (*p)
		memcpy(buf + o, "...", 4);
	else
		buf[o] = '\0';
	return buf;
}
