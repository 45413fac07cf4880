/*
 * visible.c - a name as a screen shows it (visible.h).
 *
 * One pass over the name, one unit at a time: each unit's text and columns
 * are worked out first, then written only when they fit both the columns
 * asked for and the buffer, so that a name is never cut inside an escape or
 * a character.
 */
#include "visible.h"

#include <langinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "utf8.h"

bool fidx_visible_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);
	return cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
}

/* The code point of the valid UTF-8 sequence of n bytes at s. */
static uint32_t decode(const unsigned char *s, size_t n)
{
	static const unsigned char lead[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	uint32_t c = s[0] & lead[n];
	for (size_t i = 1; i < n; i++)
		c = c << 6 | (s[i] & 0x3f);
	return c;
}

/* Whether c is a format character that reorders or hides text (bidi controls, zero widths). */
static bool format_char(uint32_t c)
{
	return (c >= 0x200b && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x2060 && c <= 0x2069) || c == 0xfeff || c == 0x061c;
}

size_t fidx_visible(const char *s, int maxwidth, char *out, size_t size, int *width)
{
	const unsigned char *p = (const unsigned char *)s;
	bool utf8 = fidx_visible_utf8();
	bool after_char = false;  /* the last unit was a character shown as itself */
	size_t o = 0;
	int cols = 0;
	while (*p) {
		char unit[FIDX_VISIBLE_UNIT];
		size_t ulen, used = 1;
		int w;
		size_t n = utf8 && *p >= 0x80 ? fidx_utf8_seq_len(p) : (*p < 0x80);
		uint32_t c = n ? decode(p, n) : 0;
		int cw = n > 1 ? wcwidth((wchar_t)c) : 0;
		if (n == 1 && *p >= 0x20 && *p < 0x7f && *p != '\\') {
			unit[0] = (char)*p;
			ulen = 1, w = 1;
		} else if (n == 1 && strchr("\\\n\t\r", *p)) {
			static const char *const esc[] = {"\\\\", "\\n", "\\t", "\\r"};
			memcpy(unit, esc[strchr("\\\n\t\r", *p) - "\\\n\t\r"], 2);
			ulen = 2, w = 2;
		} else if (n > 1 && format_char(c)) {
			ulen = (size_t)snprintf(unit, sizeof(unit), "\\u{%x}", c);
			w = (int)ulen, used = n;
		} else if (n > 1 && (cw > 0 || (cw == 0 && after_char))) {
			memcpy(unit, p, n);
			ulen = n, w = cw, used = n;
		} else {
			ulen = (size_t)snprintf(unit, sizeof(unit), "\\x%02x", *p);
			w = 4;
		}
		if (cols + w > maxwidth || o + ulen + 1 > size)
			break;
		memcpy(out + o, unit, ulen);
		o += ulen;
		cols += w;
		after_char = ulen == used && w >= 0 && *p >= 0x20 && *p != 0x7f;
		p += used;
	}
	if (size)
		out[o] = '\0';
	if (width)
		*width = cols;
	return (size_t)((const char *)p - s);
}

int fidx_visible_width(const char *s)
{
	char buf[256];
	int total = 0, w;
	while (*s) {
		size_t used = fidx_visible(s, 1 << 30, buf, sizeof(buf), &w);
		total += w;
		s += used;
	}
	return total;
}
