/*
 * error.c - failures described for the user (error.h), and names quoted
 * safely inside a description.
 */
#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"

int fidx_fail(struct fidx_error *err, int code, const char *fmt, ...)
{
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->code = code ? code : EIO;
	return -1;
}

int fidx_fail_nomem(struct fidx_error *err)
{
	return fidx_fail(err, ENOMEM, "out of memory");
}

int fidx_fail_copy(struct fidx_error *err, const struct fidx_error *src)
{
	if (err && err != src) {
		err->code = src->code;
		memcpy(err->msg, src->msg, strnlen(src->msg, sizeof(src->msg) - 1) + 1);
	}
	return -1;
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
