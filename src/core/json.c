/*
 * json.c - JSON strings and hex (json.h).  Written with the unlocked stdio
 * calls: a stream is written by one thread at a time.
 */
#include "json.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

void fidx_json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	putc_unlocked('"', out);
	while (*p) {
		size_t n;
		if (*p == '"' || *p == '\\') {
			putc_unlocked('\\', out);
			putc_unlocked(*p++, out);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(out, "\\u%04x", *p++);
		} else if (*p < 0x80) {
			putc_unlocked(*p++, out);
		} else if ((n = fidx_utf8_seq_len(p)) == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
			/* a C1 control, which a terminal may obey: the same character, escaped */
			fprintf(out, "\\u%04x", p[1]);
			p += 2;
		} else if (n > 1) {
			fwrite_unlocked(p, 1, n, out);
			p += n;
		} else {
			fprintf(out, "\\u%04x", *p++);
		}
	}
	putc_unlocked('"', out);
}

/*
 * Writes the base64 (RFC 4648, padded) of len bytes at in into out, and a
 * NUL: (len + 2) / 3 * 4 + 1 bytes in all.
 */
static void base64(char *out, const unsigned char *in, size_t len)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (; len >= 3; in += 3, len -= 3) {
		uint32_t v = (uint32_t)in[0] << 16 | (uint32_t)in[1] << 8 | in[2];
		*out++ = alphabet[v >> 18];
		*out++ = alphabet[v >> 12 & 63];
		*out++ = alphabet[v >> 6 & 63];
		*out++ = alphabet[v & 63];
	}
	if (len) {
		uint32_t v = (uint32_t)in[0] << 16 | (len == 2 ? (uint32_t)in[1] << 8 : 0);
		*out++ = alphabet[v >> 18];
		*out++ = alphabet[v >> 12 & 63];
		*out++ = len == 2 ? alphabet[v >> 6 & 63] : '=';
		*out++ = '=';
	}
	*out = '\0';
}

/* Returns whether s is valid UTF-8 throughout. */
static int valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t n = fidx_utf8_seq_len(p);
		if (!n)
			return 0;
		p += n;
	}
	return 1;
}

void fidx_json_path(FILE *out, const char *key, const char *path)
{
	fidx_json_string(out, key);
	putc_unlocked(':', out);
	fidx_json_string(out, path);
	if (valid_utf8(path))
		return;
	size_t len = strlen(path);
	/* base64 writes 4 bytes per 3 and a NUL. */
	char small[1024], *b64 = small;
	size_t need = (len + 2) / 3 * 4 + 1;
	if (need > sizeof(small) && !(b64 = malloc(need))) {
		/* Cannot happen for a name the kernel gave; keep the output valid JSON. */
		fprintf(out, ",\"%s_base64\":null", key);
		return;
	}
	base64(b64, (const unsigned char *)path, len);
	fprintf(out, ",\"%s_base64\":\"%s\"", key, b64);
	if (b64 != small)
		free(b64);
}

void fidx_json_hex(FILE *out, const unsigned char *p, size_t len)
{
	putc_unlocked('"', out);
	fidx_write_hex(out, p, len);
	putc_unlocked('"', out);
}

void fidx_write_hex(FILE *out, const unsigned char *p, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char buf[2 * 64];
	while (len) {
		size_t n = len < 64 ? len : 64;
		for (size_t i = 0; i < n; i++) {
			buf[2 * i] = digits[p[i] >> 4];
			buf[2 * i + 1] = digits[p[i] & 15];
		}
		fwrite_unlocked(buf, 1, 2 * n, out);
		p += n;
		len -= n;
	}
}
