/*
 * json.c - JSON string escaping for the options recorded in a scan row.
 */
#include "json.h"

#include <stddef.h>

#include "utf8.h"

void fidx_json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	putc('"', out);
	while (*p) {
		size_t n;
		if (*p == '"' || *p == '\\') {
			fprintf(out, "\\%c", *p++);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(out, "\\u%04x", *p++);
		} else if (*p < 0x80) {
			putc(*p++, out);
		} else if ((n = fidx_utf8_seq_len(p)) > 1) {
			fwrite(p, 1, n, out);
			p += n;
		} else {
			fprintf(out, "\\u%04x", *p++);
		}
	}
	putc('"', out);
}
