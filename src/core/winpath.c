/*
 * winpath.c - Windows names (WTF-8), paths (the stored form), times, modes
 * and exclude globs (winpath.h says what each form is and why).
 *
 * Nothing here calls Windows: it builds and is tested on every platform.
 */
#include "winpath.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Whether u is a high (leading) or a low (trailing) surrogate. */
static inline bool is_high(uint32_t u) { return u >= 0xd800 && u <= 0xdbff; }
static inline bool is_low(uint32_t u) { return u >= 0xdc00 && u <= 0xdfff; }

size_t fidx_wtf8_put(char *out, const uint16_t *w, size_t n)
{
	unsigned char *o = (unsigned char *)out;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = w[i];
		if (c < 0x80) {
			*o++ = (unsigned char)c;
		} else if (c < 0x800) {
			*o++ = (unsigned char)(0xc0 | c >> 6);
			*o++ = (unsigned char)(0x80 | (c & 0x3f));
		} else if (is_high(c) && i + 1 < n && is_low(w[i + 1])) {
			c = 0x10000 + ((c - 0xd800) << 10) + (w[++i] - 0xdc00u);
			*o++ = (unsigned char)(0xf0 | c >> 18);
			*o++ = (unsigned char)(0x80 | (c >> 12 & 0x3f));
			*o++ = (unsigned char)(0x80 | (c >> 6 & 0x3f));
			*o++ = (unsigned char)(0x80 | (c & 0x3f));
		} else { /* the rest of the BMP, an unpaired surrogate among it */
			*o++ = (unsigned char)(0xe0 | c >> 12);
			*o++ = (unsigned char)(0x80 | (c >> 6 & 0x3f));
			*o++ = (unsigned char)(0x80 | (c & 0x3f));
		}
	}
	return (size_t)(o - (unsigned char *)out);
}

char *fidx_wtf8_of_utf16(const uint16_t *w, size_t n, size_t *len)
{
	char *s = malloc(FIDX_WTF8_MAX(n) + 1);
	if (!s)
		return NULL;
	size_t k = fidx_wtf8_put(s, w, n);
	s[k] = '\0';
	if (len)
		*len = k;
	return s;
}

/*
 * Decodes the WTF-8 sequence at s (avail bytes left) into *cp.  Returns its
 * length (1..4), or 0 when s does not start one (overlong, truncated, a
 * stray continuation byte, above U+10FFFF).  Surrogates are accepted here;
 * the caller refuses a high one followed by a low one.
 */
static size_t wtf8_decode(const unsigned char *s, size_t avail, uint32_t *cp)
{
	unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
	size_t n;
	uint32_t c;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	} else if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		c = s[0] & 0x1fu;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		c = s[0] & 0x0fu;
		if (s[0] == 0xe0)
			lo = 0xa0;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		c = s[0] & 0x07u;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (avail < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3fu);
	}
	*cp = c;
	return n;
}

uint16_t *fidx_utf16_of_wtf8(const char *s, size_t n, size_t *len)
{
	/* At most one code unit per byte. */
	uint16_t *w = malloc((n + 1) * sizeof(*w));
	if (!w)
		return NULL;
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k = 0;
	bool after_high = false; /* the last sequence was a lone high surrogate */
	while (i < n) {
		uint32_t c;
		size_t m = wtf8_decode(p + i, n - i, &c);
		if (m == 0 || (after_high && is_low(c))) {
			free(w);
			errno = EILSEQ;
			return NULL;
		}
		i += m;
		if (c >= 0x10000) {
			c -= 0x10000;
			w[k++] = (uint16_t)(0xd800 + (c >> 10));
			w[k++] = (uint16_t)(0xdc00 + (c & 0x3ff));
		} else {
			w[k++] = (uint16_t)c;
		}
		after_high = is_high(c);
	}
	w[k] = 0;
	if (len)
		*len = k;
	return w;
}

/* Whether unit c separates names on input ('\\' or '/'). */
static inline bool is_sep(uint16_t c)
{
	return c == '\\' || c == '/';
}

/* Whether the n units at w begin with the ASCII string a. */
static bool starts_with(const uint16_t *w, size_t n, const char *a)
{
	size_t k = strlen(a);
	if (n < k)
		return false;
	for (size_t i = 0; i < k; i++)
		if (w[i] != (unsigned char)a[i])
			return false;
	return true;
}

/* Whether the n units at w begin with the ASCII string a, letters in any case. */
static bool starts_with_nocase(const uint16_t *w, size_t n, const char *a)
{
	size_t k = strlen(a);
	if (n < k)
		return false;
	for (size_t i = 0; i < k; i++) {
		uint16_t c = w[i] >= 'a' && w[i] <= 'z' ? (uint16_t)(w[i] - 'a' + 'A') : w[i];
		if (c != (unsigned char)a[i])
			return false;
	}
	return true;
}

/*
 * Appends "/" and the WTF-8 form of each name of the n units at w (names
 * separated by runs of separators) at out + *k.  At most `need` names must
 * be there (the share's two: 2; else 0).  Returns 0, or -1 when a name is
 * "." or "..", holds a NUL, or fewer than need names are there.
 */
static int put_names(char *out, size_t *k, const uint16_t *w, size_t n, size_t need)
{
	size_t i = 0, names = 0;
	while (i < n) {
		while (i < n && is_sep(w[i]))
			i++;
		size_t start = i;
		while (i < n && !is_sep(w[i]))
			i++;
		size_t len = i - start;
		if (len == 0)
			break;
		if ((len == 1 && w[start] == '.') ||
		    (len == 2 && w[start] == '.' && w[start + 1] == '.'))
			return -1;
		for (size_t j = start; j < i; j++)
			if (w[j] == 0)
				return -1;
		out[(*k)++] = '/';
		*k += fidx_wtf8_put(out + *k, w + start, len);
		names++;
	}
	return names < need ? -1 : 0;
}

char *fidx_win_stored_path(const uint16_t *w, size_t n, size_t *len)
{
	bool unc;
	if (starts_with(w, n, "\\\\?\\")) {
		w += 4;
		n -= 4;
		unc = starts_with_nocase(w, n, "UNC\\");
		if (unc) {
			w += 4;
			n -= 4;
		}
	} else {
		unc = n >= 2 && is_sep(w[0]) && is_sep(w[1]);
		if (unc) {
			w += 2;
			n -= 2;
		}
	}
	bool drive = !unc && n >= 2 && w[1] == ':' &&
		     ((w[0] >= 'A' && w[0] <= 'Z') || (w[0] >= 'a' && w[0] <= 'z')) &&
		     (n == 2 || is_sep(w[2]));
	if (!unc && !drive) {
		errno = EINVAL;
		return NULL;
	}
	/* "/X:" or "/", then at most 4 bytes for each unit (a '/' and 3 bytes). */
	char *out = malloc(4 * n + 4);
	if (!out)
		return NULL;
	size_t k = 0;
	if (drive) {
		out[k++] = '/';
		out[k++] = (char)(w[0] >= 'a' ? w[0] - 'a' + 'A' : w[0]);
		out[k++] = ':';
		w += 2;
		n -= 2;
	} else {
		/* Two names (server, share) must come first: "//server/share". */
		out[k++] = '/';
	}
	if (put_names(out, &k, w, n, unc ? 2 : 0) < 0) {
		free(out);
		errno = EINVAL;
		return NULL;
	}
	out[k] = '\0';
	if (len)
		*len = k;
	return out;
}

/* Appends the ASCII string a to w at *k. */
static void put_ascii(uint16_t *w, size_t *k, const char *a)
{
	while (*a)
		w[(*k)++] = (unsigned char)*a++;
}

uint16_t *fidx_win_native_path(const char *s, size_t n, size_t *len)
{
	/* "\\?\UNC\" and a trailing '\', then at most one unit per byte. */
	uint16_t *w = malloc((n + 10) * sizeof(*w));
	if (!w)
		return NULL;
	size_t k = 0, i, names = 0, need;
	if (n >= 2 && s[0] == '/' && s[1] == '/') {
		put_ascii(w, &k, "\\\\?\\UNC");
		i = 1; /* at the '/' before the server */
		need = 2;
	} else if (n >= 3 && s[0] == '/' && s[1] >= 'A' && s[1] <= 'Z' && s[2] == ':') {
		put_ascii(w, &k, "\\\\?\\");
		w[k++] = (uint16_t)s[1];
		w[k++] = ':';
		i = 3;
		need = 0;
	} else {
		goto invalid;
	}
	while (i < n) {
		if (s[i] != '/')
			goto invalid;
		size_t start = ++i;
		while (i < n && s[i] != '/')
			i++;
		size_t m = i - start;
		if (m == 0 || (m == 1 && s[start] == '.') ||
		    (m == 2 && s[start] == '.' && s[start + 1] == '.') ||
		    memchr(s + start, '\0', m))
			goto invalid;
		size_t units;
		uint16_t *name = fidx_utf16_of_wtf8(s + start, m, &units);
		if (!name) {
			free(w);
			return NULL; /* errno EILSEQ or ENOMEM */
		}
		w[k++] = '\\';
		memcpy(w + k, name, units * sizeof(*w));
		k += units;
		free(name);
		names++;
	}
	if (names < need)
		goto invalid;
	if (names == need) /* a drive's or a share's root */
		w[k++] = '\\';
	w[k] = 0;
	if (len)
		*len = k;
	return w;
invalid:
	free(w);
	errno = EINVAL;
	return NULL;
}

struct fidx_time fidx_win_time(int64_t ticks)
{
	int64_t sec = ticks / FIDX_WIN_TICKS_PER_S;
	int64_t rem = ticks % FIDX_WIN_TICKS_PER_S;
	if (rem < 0) { /* before 1601: round down */
		rem += FIDX_WIN_TICKS_PER_S;
		sec--;
	}
	return (struct fidx_time){.sec = sec - FIDX_WIN_EPOCH_DELTA, .nsec = (uint32_t)rem * 100};
}

bool fidx_win_ticks(struct fidx_time t, int64_t *ticks)
{
	/* 0 .. INT64_MAX ticks: 1601-01-01 .. 30828-09-14. */
	const int64_t max_sec = INT64_MAX / FIDX_WIN_TICKS_PER_S - FIDX_WIN_EPOCH_DELTA;
	if (t.nsec % 100 || t.sec < -FIDX_WIN_EPOCH_DELTA || t.sec > max_sec)
		return false;
	int64_t v = (t.sec + FIDX_WIN_EPOCH_DELTA) * FIDX_WIN_TICKS_PER_S;
	if (t.nsec / 100 > INT64_MAX - v)
		return false;
	*ticks = v + t.nsec / 100;
	return true;
}

uint32_t fidx_win_mode(uint32_t attributes, bool is_link)
{
	if (is_link)
		return FIDX_WIN_S_IFLNK | 0777;
	if (attributes & FIDX_WIN_ATTR_DIRECTORY)
		return FIDX_WIN_S_IFDIR | 0755;
	return FIDX_WIN_S_IFREG | (attributes & FIDX_WIN_ATTR_READONLY ? 0444 : 0644);
}

/* Reparse tags (winnt.h) and the name-surrogate bit (IsReparseTagNameSurrogate). */
#define TAG_MOUNT_POINT 0xA0000003u
#define TAG_SYMLINK     0xA000000Cu
#define TAG_LX_SYMLINK  0xA000001Du
#define TAG_NAME_SURROGATE 0x20000000u

/* The little-endian 16- and 32-bit numbers at p. */
static inline uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * The WTF-8 of the name at byte offset off, len bytes, of the path buffer at
 * path (avail bytes), into out->target.  Returns 1 when it was there, 0 when
 * it lies outside or is empty, -1 when out of memory.
 */
static int take_name(const unsigned char *path, size_t avail, size_t off, size_t len,
		     struct fidx_win_reparse *out)
{
	if (len == 0 || len % 2 || off > avail || len > avail - off)
		return 0;
	uint16_t *w = malloc(len);
	if (!w)
		return -1;
	for (size_t i = 0; i < len / 2; i++)
		w[i] = le16(path + off + 2 * i);
	out->target = fidx_wtf8_of_utf16(w, len / 2, &out->target_len);
	free(w);
	return out->target ? 1 : -1;
}

int fidx_win_reparse_parse(const void *data, size_t n, struct fidx_win_reparse *out)
{
	const unsigned char *d = data;
	*out = (struct fidx_win_reparse){0};
	if (n < 8) {
		errno = EINVAL;
		return -1;
	}
	out->tag = le32(d);
	out->name_surrogate = out->tag & TAG_NAME_SURROGATE;
	/* The data's own length, within what was read. */
	size_t end = 8 + (size_t)le16(d + 4);
	if (end > n)
		end = n;
	if (out->tag == TAG_LX_SYMLINK) {
		/* A version (4 bytes, 2), then the target in UTF-8 to the end. */
		if (end <= 12)
			return 0;
		size_t k = end - 12;
		if (!(out->target = malloc(k + 1)))
			return -1;
		memcpy(out->target, d + 12, k);
		out->target[k] = '\0';
		out->target_len = k;
		return 0;
	}
	/* Four 16-bit numbers (substitute offset, length, print offset, length), a
	 * symlink's 32-bit flags, then the names' buffer. */
	size_t path_at = out->tag == TAG_SYMLINK ? 20 : out->tag == TAG_MOUNT_POINT ? 16 : 0;
	if (!path_at || end < path_at)
		return 0;
	size_t sub_off = le16(d + 8), sub_len = le16(d + 10);
	size_t print_off = le16(d + 12), print_len = le16(d + 14);
	const unsigned char *path = d + path_at;
	size_t avail = end - path_at;
	static const char volume_prefix[] = "\\??\\Volume{";
	size_t vp = sizeof(volume_prefix) - 1;
	if (out->tag == TAG_MOUNT_POINT && sub_len >= 2 * vp && sub_off <= avail &&
	    sub_len <= avail - sub_off) {
		out->volume = true;
		for (size_t i = 0; i < vp && out->volume; i++)
			out->volume = le16(path + sub_off + 2 * i) == (unsigned char)volume_prefix[i];
	}
	int took = take_name(path, avail, print_off, print_len, out);
	if (took == 0)
		took = take_name(path, avail, sub_off, sub_len, out);
	return took < 0 ? -1 : 0;
}

bool fidx_win_stream_name(const uint16_t *name, size_t n, size_t *len)
{
	static const uint16_t data_suffix[] = {':', '$', 'D', 'A', 'T', 'A'};
	const size_t k = sizeof(data_suffix) / sizeof(data_suffix[0]);
	if (n < 1 + 1 + k || name[0] != ':' ||
	    memcmp(name + n - k, data_suffix, sizeof(data_suffix)) != 0)
		return false;
	*len = n - 1 - k;
	for (size_t i = 0; i < *len; i++) /* a stream's name holds no ':' */
		if (name[1 + i] == ':')
			return false;
	return true;
}

/*
 * Matches the bracket expression at p (just after its '[') against byte c.
 * Returns the pattern after its ']' and sets *hit, or NULL when the bracket
 * is not closed (then '[' is an ordinary byte).
 */
static const char *bracket(const char *p, unsigned char c, bool *hit)
{
	bool negate = *p == '!' || *p == '^';
	if (negate)
		p++;
	bool found = false, first = true;
	while (*p && (*p != ']' || first)) {
		first = false;
		unsigned char lo = (unsigned char)*p;
		if (lo == '\\' && p[1])
			lo = (unsigned char)*++p;
		p++;
		unsigned char hi = lo;
		if (p[0] == '-' && p[1] && p[1] != ']') {
			p++;
			if (*p == '\\' && p[1])
				p++;
			hi = (unsigned char)*p++;
		}
		if (c >= lo && c <= hi)
			found = true;
	}
	if (*p != ']')
		return NULL;
	*hit = found != negate;
	return p + 1;
}

bool fidx_win_glob_match(const char *pattern, const char *string, bool pathname)
{
	const char *p = pattern, *s = string;
	const char *star_p = NULL, *star_s = NULL; /* where to retry after the last '*' */
	while (*s) {
		const char *next;
		bool hit;
		if (*p == '*') {
			while (*p == '*')
				p++;
			star_p = p;
			star_s = s;
			continue;
		}
		if (*p == '?' && !(pathname && *s == '/')) {
			p++;
			s++;
			continue;
		}
		if (*p == '[' && (next = bracket(p + 1, (unsigned char)*s, &hit))) {
			if (hit && !(pathname && *s == '/')) {
				p = next;
				s++;
				continue;
			}
		} else if (*p && *p != '?') {
			const char *lit = *p == '\\' && p[1] ? p + 1 : p;
			if (*lit == *s) {
				p = lit + 1;
				s++;
				continue;
			}
		}
		/* A mismatch: let the last '*' take one byte more (never a '/' with pathname). */
		if (!star_p || (pathname && *star_s == '/'))
			return false;
		p = star_p;
		s = ++star_s;
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}
