/*
 * utf8.h - recognising valid UTF-8 in names that may hold any bytes.
 */
#ifndef FIDX_UTF8_H
#define FIDX_UTF8_H

#include <stddef.h>

/*
 * Returns the length (1..4) of the valid UTF-8 sequence that starts at s, or
 * 0 when s does not start one: a stray continuation byte, a truncated
 * sequence, an overlong form (C0, C1, E0 80-9F, F0 80-8F), a surrogate (ED
 * A0-BF) or a value above U+10FFFF (F4 90-BF, F5-FF), as RFC 3629 says.
 * s must be NUL-terminated.
 */
static inline size_t fidx_utf8_seq_len(const unsigned char *s)
{
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
	if (s[0] < 0x80)
		return 1;
	else if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

#endif /* FIDX_UTF8_H */
