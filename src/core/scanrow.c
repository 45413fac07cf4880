/*
 * scanrow.c - scan rows: copies, and the options they were made with (scanrow.h).
 */
#include "scanrow.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

int fidx_scan_row_digests(const struct fidx_scan_row *row, unsigned *mask)
{
	unsigned m;
	if (!row->opt_hash || fidx_digest_list_parse(row->opt_hash, &m) < 0)
		return -1;
	*mask = m;
	return 0;
}

unsigned fidx_scan_row_digests_or_all(const struct fidx_scan_row *row)
{
	unsigned mask = (1u << FIDX_NDIGESTS) - 1;
	fidx_scan_row_digests(row, &mask);
	return mask;
}

/* Returns the value of hex digit c, or -1. */
static int hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decodes one JSON string starting at *p (at its opening quote) into a
 * malloc'ed byte string, advancing *p past it.  A \u00XX escape gives the
 * byte XX, as fidx's JSON writer uses it for bytes that are not UTF-8 (and
 * for control characters); other \u escapes give their UTF-8 encoding.
 * Returns NULL when the text is not a string (or on ENOMEM).
 */
static char *json_string_decode(const char **p)
{
	const char *s = *p;
	if (*s++ != '"')
		return NULL;
	char *out = malloc(strlen(s) + 1), *o = out;
	if (!out)
		return NULL;
	while (*s && *s != '"') {
		if (*s != '\\') {
			*o++ = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case '"': case '\\': case '/': *o++ = *s++; break;
		case 'b': *o++ = '\b'; s++; break;
		case 'f': *o++ = '\f'; s++; break;
		case 'n': *o++ = '\n'; s++; break;
		case 'r': *o++ = '\r'; s++; break;
		case 't': *o++ = '\t'; s++; break;
		case 'u': {
			unsigned cp = 0;
			for (int i = 1; i <= 4; i++) {
				int v = hex_value(s[i]);
				if (v < 0)
					goto bad;
				cp = cp << 4 | (unsigned)v;
			}
			s += 5;
			if (cp < 0x100) {
				*o++ = (char)cp;
			} else if (cp < 0x800) {
				*o++ = (char)(0xc0 | cp >> 6);
				*o++ = (char)(0x80 | (cp & 0x3f));
			} else {
				*o++ = (char)(0xe0 | cp >> 12);
				*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
				*o++ = (char)(0x80 | (cp & 0x3f));
			}
			break;
		}
		default:
			goto bad;
		}
	}
	if (*s != '"')
		goto bad;
	*o = '\0';
	*p = s + 1;
	return out;
bad:
	free(out);
	return NULL;
}

/* Skips JSON white space. */
static const char *json_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/*
 * Returns the end of the JSON value at p (a string, number, literal, array or
 * object, nested arrays and objects skipped whole), or NULL when it is none.
 */
static const char *json_skip(const char *p)
{
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && !*++p)
				return NULL;
		return *p ? p + 1 : NULL;
	}
	if (*p == '[' || *p == '{') {
		char close = *p == '[' ? ']' : '}';
		p = json_space(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				if (*p != '"' || !(p = json_skip(p)))
					return NULL;
				p = json_space(p);
				if (*p++ != ':')
					return NULL;
				p = json_space(p);
			}
			if (!(p = json_skip(p)))
				return NULL;
			p = json_space(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
			p = json_space(p);
		}
	}
	const char *start = p;
	while (*p && strchr("+-.0123456789eEtruefalsn", *p))
		p++;
	return p > start ? p : NULL;
}

int fidx_scan_row_read_options(struct fidx_scan_row *row)
{
	row->opt_stat = -1;
	const char *p = row->options ? json_space(row->options) : NULL;
	if (!p || *p++ != '{')
		return 0;
	for (p = json_space(p); *p == '"';) {
		const char *key = p, *value, *end;
		if (!(p = json_skip(p)))
			return 0;
		size_t klen = (size_t)(p - key);
		p = json_space(p);
		if (*p++ != ':')
			return 0;
		value = json_space(p);
		if (!(end = json_skip(value)))
			return 0;
#define KEY(k) (klen == sizeof(k) + 1 && memcmp(key + 1, k, sizeof(k) - 1) == 0)
		bool yes = strncmp(value, "true", 4) == 0;
		if (KEY("xdev"))
			row->opt_xdev = yes;
		else if (KEY("follow"))
			row->opt_follow = yes;
		else if (KEY("follow_all"))
			row->opt_follow_all = yes;
		else if (KEY("stat"))
			row->opt_stat = yes;
		else if ((KEY("hash") || KEY("database")) && *value == '"') {
			char **dst = KEY("hash") ? &row->opt_hash : &row->opt_database;
			const char *v = value;
			free(*dst);
			*dst = json_string_decode(&v); /* NULL: not a string fidx wrote */
		} else if (KEY("image")) {
			row->opt_image = *value == '{';
		} else if (KEY("exclude") && *value == '[') {
			free(row->opt_exclude);
			if (!(row->opt_exclude = strndup(value, (size_t)(end - value))))
				return -1;
		}
#undef KEY
		p = json_space(end);
		if (*p != ',')
			break;
		p = json_space(p + 1);
	}
	return 0;
}

/*
 * Decodes the JSON array of strings in text (as the store read "exclude")
 * into shape->excludes.  Returns 0, or -1 when it is not one.
 */
static int decode_excludes(const char *text, struct fidx_scan_shape *shape)
{
	size_t cap = 1;
	for (const char *c = text; *c; c++)
		cap += *c == ',';
	if (!(shape->excludes = calloc(cap + 1, sizeof(*shape->excludes))))
		return -1;
	const char *p = text;
	if (*p++ != '[')
		return -1;
	while (*p == ' ')
		p++;
	if (*p == ']')
		return 0;
	for (;;) {
		char *pattern = json_string_decode(&p);
		if (!pattern || shape->nexcludes == cap)
			return free(pattern), -1;
		shape->excludes[shape->nexcludes++] = pattern;
		while (*p == ' ')
			p++;
		if (*p == ']')
			return 0;
		if (*p++ != ',')
			return -1;
		while (*p == ' ')
			p++;
	}
}

int fidx_scan_shape_of(const struct fidx_scan_row *row, struct fidx_scan_shape *shape,
		       struct fidx_error *err)
{
	memset(shape, 0, sizeof(*shape));
	shape->xdev = row->opt_xdev > 0;
	shape->follow = row->opt_follow > 0;
	shape->follow_all = row->opt_follow_all > 0;
	shape->no_stat = row->opt_stat == 0;
	shape->image = row->opt_image;
	if (fidx_scan_row_digests(row, &shape->digests) < 0 ||
	    decode_excludes(row->opt_exclude ? row->opt_exclude : "[]", shape) < 0) {
		fidx_scan_shape_free(shape);
		return fidx_fail(err, EINVAL, "scan %" PRId64 ": cannot read the options it was"
				 " made with", row->id);
	}
	return 0;
}

bool fidx_scan_shape_eq(const struct fidx_scan_shape *a, const struct fidx_scan_shape *b)
{
	if (a->digests != b->digests || a->xdev != b->xdev || a->follow != b->follow ||
	    a->follow_all != b->follow_all ||
	    a->no_stat != b->no_stat || a->image != b->image || a->nexcludes != b->nexcludes)
		return false;
	for (size_t i = 0; i < a->nexcludes; i++)
		if (strcmp(a->excludes[i], b->excludes[i]) != 0)
			return false;
	return true;
}

void fidx_scan_shape_free(struct fidx_scan_shape *shape)
{
	for (size_t i = 0; i < shape->nexcludes; i++)
		free(shape->excludes[i]);
	free(shape->excludes);
	memset(shape, 0, sizeof(*shape));
}

/* Sets *dst to a copy of the NUL-terminated src (NULL for NULL).  Returns false on ENOMEM. */
static bool dup_text(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return !src || *dst;
}

int fidx_scan_row_copy(struct fidx_scan_row *dst, const struct fidx_scan_row *src,
		       struct fidx_error *err)
{
	bool ok = true;
	*dst = *src;
#define FIDX_COPY_INT(name)
#define FIDX_COPY_TEXT(name) ok &= dup_text(&dst->name, src->name);
#define FIDX_COPY_DIGEST(name)                                                        \
	if ((dst->name = src->name ? malloc(src->name##_len ? src->name##_len : 1) : NULL)) \
		memcpy(dst->name, src->name, src->name##_len);                         \
	else                                                                           \
		ok &= !src->name;
#define FIDX_X(NAME, name, KIND) FIDX_COPY_##KIND(name)
	FIDX_SCAN_COLUMNS(FIDX_X)
#undef FIDX_X
	ok &= dup_text(&dst->opt_hash, src->opt_hash);
	ok &= dup_text(&dst->opt_exclude, src->opt_exclude);
	ok &= dup_text(&dst->opt_database, src->opt_database);
	ok &= dup_text(&dst->damage, src->damage);
	if (!ok) {
		fidx_scan_row_free(dst);
		return fidx_fail_nomem(err);
	}
	return 0;
}

void fidx_scan_row_free(struct fidx_scan_row *row)
{
#define FIDX_FREE_INT(name)
#define FIDX_FREE_TEXT(name) free(row->name);
#define FIDX_FREE_DIGEST(name) free(row->name);
#define FIDX_X(NAME, name, KIND) FIDX_FREE_##KIND(name)
	FIDX_SCAN_COLUMNS(FIDX_X)
#undef FIDX_X
	free(row->opt_hash);
	free(row->opt_exclude);
	free(row->opt_database);
	free(row->damage);
	memset(row, 0, sizeof(*row));
}

void fidx_scan_list_free(struct fidx_scan_list *list)
{
	for (size_t i = 0; i < list->n; i++)
		fidx_scan_row_free(&list->rows[i]);
	free(list->rows);
	list->rows = NULL;
	list->n = 0;
}

const struct fidx_scan_row *fidx_scan_list_find(const struct fidx_scan_list *list, int64_t id)
{
	for (size_t i = 0; i < list->n; i++)
		if (list->rows[i].id == id)
			return &list->rows[i];
	return NULL;
}
