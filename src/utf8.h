/*
 * utf8.h - recognising valid UTF-8 in names that may hold any bytes.
 */
#ifndef FIDX_UTF8_H
#define FIDX_UTF8_H

#include <stddef.h>

/*
 * Returns the length (1..4) of the valid UTF-8 sequence that starts at s, or
 * 0 when s does not start one (a stray continuation byte, an overlong lead,
 * a truncated sequence).  s must be NUL-terminated.
 */
static inline size_t fidx_utf8_seq_len(const unsigned char *s)
{
	size_t n;
	if (s[0] < 0x80)
		return 1;
	else if ((s[0] & 0xe0) == 0xc0 && s[0] >= 0xc2)
		n = 2;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3;
	else if ((s[0] & 0xf8) == 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

#endif /* FIDX_UTF8_H */
