/*
 * hashlist.c - reading hash lists into a digest set (hashlist.h).
 *
 * Three parts: the set (one open-addressing table per algorithm), the line
 * parser (sums, BSD tags, bare digests, hashdeep, CSV), and the loader,
 * which reads a file in 1 MiB blocks, cuts it into lines and feeds the
 * parser, so that a list of millions of lines is read at the speed of the
 * disk with no per-line allocation.
 */
#include "hashlist.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xxhash.h>

#include "error.h"

/* ---------------------------------------------------------------- the set */

/*
 * One algorithm's digests.  slots[i] is 0 when empty, else the high 32 bits
 * of the digest's XXH3 hash (the tag) over the entry's index + 1.  A digest
 * goes to the slot its hash's top bits name (then the next free one), so
 * the tag alone gives an entry's place in a table of any size: doubling the
 * table needs neither the digests nor a hash, and walks both tables in
 * order.  A look-up reads a digest only when the tags agree.
 */
struct table {
	size_t len;                 /* bytes per digest */
	size_t count;               /* entries */
	size_t cap;                 /* room in digests and locs, in entries */
	uint8_t *digests;           /* count * len bytes, in the order added */
	struct fidx_hashloc *locs;  /* where each was first seen */
	uint64_t *slots;            /* nslots slots, see above */
	size_t nslots;              /* 2^bits, or 0 before the first add */
	unsigned bits;              /* log2(nslots), at most 32 */
};

struct fidx_hashset {
	struct table t[FIDX_NDIGESTS];  /* one per algorithm */
};

#define TAG_MASK 0xffffffff00000000u
#define MIN_BITS 10
#define MIN_ENTRIES 1024
/* At most 3/4 of 2^32 slots: the tag holds 32 bits of position. */
#define MAX_ENTRIES 0xc0000000u

/*
 * Allocates n zeroed slots.  The table is read at random, so a large one
 * asks for huge pages: one TLB entry per 2 MiB instead of per 4 KiB.
 * Returns NULL (ENOMEM) on failure.
 */
static uint64_t *alloc_slots(size_t n)
{
	void *p = mmap(NULL, n * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, n * sizeof(uint64_t), MADV_HUGEPAGE);
	return p;
}

/* Frees what alloc_slots(n) returned (NULL allowed). */
static void free_slots(uint64_t *slots, size_t n)
{
	if (slots)
		munmap(slots, n * sizeof(uint64_t));
}

struct fidx_hashset *fidx_hashset_create(void)
{
	struct fidx_hashset *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		s->t[d].len = fidx_digest_len(d);
	return s;
}

void fidx_hashset_destroy(struct fidx_hashset *s)
{
	if (!s)
		return;
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		free(s->t[d].digests);
		free(s->t[d].locs);
		free_slots(s->t[d].slots, s->t[d].nslots);
	}
	free(s);
}

/* The slot where a digest whose hash has this tag starts looking. */
static inline size_t home(const struct table *t, uint64_t tag)
{
	return (size_t)(tag >> (64 - t->bits));
}

/*
 * Finds digest d (hash h) in t, which has slots.  Returns the slot holding
 * it, or the empty slot where it would go; *found says which.
 */
static size_t probe(const struct table *t, const uint8_t *d, uint64_t h, bool *found)
{
	size_t mask = t->nslots - 1;
	uint64_t tag = h & TAG_MASK;
	for (size_t i = home(t, tag);; i = (i + 1) & mask) {
		uint64_t slot = t->slots[i];
		if (!slot) {
			*found = false;
			return i;
		}
		if ((slot & TAG_MASK) == tag &&
		    memcmp(t->digests + ((slot & ~TAG_MASK) - 1) * t->len, d, t->len) == 0) {
			*found = true;
			return i;
		}
	}
}

/*
 * Doubles t's slots (or makes the first ones).  Any order of insertion gives
 * a valid table; table order, from an empty slot so that a run wrapping past
 * the end stays whole, fills the new table almost sequentially.  Returns 0,
 * or -1 (ENOMEM).
 */
static int grow_slots(struct table *t)
{
	unsigned bits = t->nslots ? t->bits + 1 : MIN_BITS;
	size_t n = (size_t)1 << bits, old = t->nslots;
	uint64_t *slots = alloc_slots(n), *from = t->slots;
	if (!slots)
		return -1;
	t->slots = slots;
	t->nslots = n;
	t->bits = bits;
	/* Start after an empty slot, so that a run that wraps is moved whole, in order. */
	size_t start = 0;
	while (start < old && from[start])
		start++;
	for (size_t k = 0; k < old; k++) {
		uint64_t slot = from[(start + k) & (old - 1)];
		if (!slot)
			continue;
		size_t i = home(t, slot & TAG_MASK);
		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = slot;
	}
	free_slots(from, old);
	return 0;
}

/* Makes room for one more entry in t's arrays.  Returns 0, or -1 (ENOMEM). */
static int grow_entries(struct table *t)
{
	if (t->count < t->cap)
		return 0;
	size_t cap = t->cap ? 2 * t->cap : MIN_ENTRIES;
	uint8_t *digests = realloc(t->digests, cap * t->len);
	if (!digests)
		return -1;
	t->digests = digests;
	struct fidx_hashloc *locs = realloc(t->locs, cap * sizeof(*locs));
	if (!locs)
		return -1;
	t->locs = locs;
	t->cap = cap;
	return 0;
}

int fidx_hashset_add(struct fidx_hashset *s, enum fidx_digest algo, const uint8_t *d,
		     struct fidx_hashloc loc)
{
	struct table *t = &s->t[algo];
	bool found;

	/* At most 3/4 full, so that a miss ends within a few slots. */
	if ((t->count + 1) * 4 > t->nslots * 3 && t->count < MAX_ENTRIES && grow_slots(t) < 0)
		return -1;
	uint64_t h = XXH3_64bits(d, t->len);
	size_t i = probe(t, d, h, &found);
	if (found)
		return 0;
	if (t->count >= MAX_ENTRIES) {
		errno = EOVERFLOW;
		return -1;
	}
	if (grow_entries(t) < 0)
		return -1;
	memcpy(t->digests + t->count * t->len, d, t->len);
	t->locs[t->count] = loc;
	t->slots[i] = (h & TAG_MASK) | (t->count + 1);
	t->count++;
	return 1;
}

const struct fidx_hashloc *fidx_hashset_find(const struct fidx_hashset *s, enum fidx_digest algo,
					     const uint8_t *d)
{
	const struct table *t = &s->t[algo];
	bool found;

	if (!t->count)
		return NULL;
	size_t i = probe(t, d, XXH3_64bits(d, t->len), &found);
	return found ? &t->locs[(t->slots[i] & ~TAG_MASK) - 1] : NULL;
}

size_t fidx_hashset_count(const struct fidx_hashset *s, enum fidx_digest algo)
{
	return s->t[algo].count;
}

const uint8_t *fidx_hashset_digests(const struct fidx_hashset *s, enum fidx_digest algo)
{
	return s->t[algo].count ? s->t[algo].digests : NULL;
}

/* ------------------------------------------------------------- the parser */

/* Each hex digit's value + 1; 0 for every other byte. */
static const uint8_t hex1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* Returns how many hex digits s[0..n) starts with. */
static size_t hex_span(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && hex1[(unsigned char)s[i]])
		i++;
	return i;
}

/* Appends the digest of algorithm algo written as hex at s (2 * its length digits) to e. */
static void put(struct fidx_hashlist_entry *e, enum fidx_digest algo, const char *s)
{
	size_t len = fidx_digest_len(algo);
	for (size_t i = 0; i < len; i++)
		e->digest[e->n][i] = (uint8_t)((hex1[(unsigned char)s[2 * i]] - 1) << 4 |
					       (hex1[(unsigned char)s[2 * i + 1]] - 1));
	e->algo[e->n++] = algo;
}

/* Formats why the line is malformed into p->why.  Returns -1. */
__attribute__((format(printf, 2, 3)))
static int malformed(struct fidx_hashlist_parser *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * Returns the algorithm a name stands for, ignoring case, '-', '_' and
 * spaces ("SHA-1", "sha256", "SHA2-256", "MD5"), or -1 for any other name.
 */
static int algo_of_name(const char *s, size_t n)
{
	static const struct {
		const char *name;
		enum fidx_digest algo;
	} names[] = {
		{"md5", FIDX_MD5},        {"sha1", FIDX_SHA1},      {"sha256", FIDX_SHA256},
		{"sha2256", FIDX_SHA256}, {"sha512", FIDX_SHA512},  {"sha2512", FIDX_SHA512},
		{"xxh128", FIDX_XXH128},
	};
	char norm[16];
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '-' || c == '_' || c == ' ')
			continue;
		if (k == sizeof(norm) - 1)
			return -1;
		norm[k++] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
	}
	norm[k] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(norm, names[i].name) == 0)
			return (int)names[i].algo;
	return -1;
}

/*
 * Takes the unlabelled digest of nhex hex digits at s: its algorithm is
 * p->algo, or told by its length.  Returns 1, or -1 (malformed).
 */
static int put_unlabelled(struct fidx_hashlist_parser *p, const char *s, size_t nhex,
			  struct fidx_hashlist_entry *e)
{
	int algo = p->algo;
	if (algo >= 0) {
		if (nhex != 2 * fidx_digest_len(algo))
			return malformed(p, "%zu hex %s: not a %s digest (%zu)", nhex,
					 fidx_plural(nhex, "digit", "digits"), fidx_digest_name(algo),
					 2 * fidx_digest_len(algo));
	} else {
		switch (nhex) {
		case 32: algo = FIDX_MD5; break;
		case 40: algo = FIDX_SHA1; break;
		case 64: algo = FIDX_SHA256; break;
		case 128: algo = FIDX_SHA512; break;
		default:
			return malformed(p, "%zu hex %s: no digest has that length"
					 " (32 md5, 40 sha1, 64 sha256, 128 sha512)", nhex,
					 fidx_plural(nhex, "digit", "digits"));
		}
	}
	put(e, algo, s);
	return 1;
}

/* Returns whether c may be part of a BSD tag ("SHA256", "SHA2-256", "BLAKE2b"). */
static bool is_tag_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

/*
 * Parses a BSD tag line, "TAG (name) = hex" (also openssl's "TAG(name)= hex").
 * Returns 1 (a digest), -1 (a tag line that is malformed), or 0 when s is
 * not a tag line at all.
 */
static int parse_tag_line(struct fidx_hashlist_parser *p, const char *s, size_t n,
			  struct fidx_hashlist_entry *e)
{
	size_t i = 0, j, k, q;
	while (i < n && is_tag_char(s[i]))
		i++;
	if (i == 0 || i > 16)
		return 0;
	j = i < n && s[i] == ' ' ? i + 1 : i;
	if (j >= n || s[j] != '(')
		return 0;
	/* Backwards from the end: hex digits, spaces, '=', a space, ')'. */
	for (k = n; k > j && hex1[(unsigned char)s[k - 1]]; k--)
		;
	for (q = k; q > j && s[q - 1] == ' '; q--)
		;
	if (q <= j || s[q - 1] != '=')
		return 0;
	q--;
	if (q > j && s[q - 1] == ' ')
		q--;
	if (q <= j + 1 || s[q - 1] != ')')
		return 0;
	int algo = algo_of_name(s, i);
	if (algo < 0)
		return malformed(p, "unknown algorithm '%.*s'", (int)i, s);
	if (n - k != 2 * fidx_digest_len(algo))
		return malformed(p, "%.*s digest of %zu hex %s (expected %zu)", (int)i, s, n - k,
				 fidx_plural(n - k, "digit", "digits"), 2 * fidx_digest_len(algo));
	put(e, algo, s + k);
	return 1;
}

/* One field of a CSV line at a time. */
struct csv_cursor {
	const char *s;  /* the line */
	size_t n;       /* its length */
	size_t pos;     /* where the next field starts */
	bool done;      /* the last field was taken */
};

/*
 * Takes the next field: *v and *vn get its text (inside the quotes of a
 * quoted field, doubled quotes left as written, which no digest holds).
 * Returns 1, 0 after the last field, or -1 (a broken quote; p->why set).
 */
static int csv_next(struct fidx_hashlist_parser *p, struct csv_cursor *c, const char **v,
		    size_t *vn)
{
	const char *s = c->s;
	size_t i = c->pos;

	if (c->done)
		return 0;
	if (i < c->n && s[i] == '"') {
		size_t start = ++i;
		for (;; i++) {
			if (i >= c->n)
				return malformed(p, "unterminated quote");
			if (s[i] == '"') {
				if (i + 1 < c->n && s[i + 1] == '"')
					i++;
				else
					break;
			}
		}
		*v = s + start;
		*vn = i - start;
		if (++i < c->n && s[i] != ',')
			return malformed(p, "text after a closing quote");
	} else {
		size_t start = i;
		while (i < c->n && s[i] != ',')
			i++;
		*v = s + start;
		*vn = i - start;
	}
	if (i < c->n)
		c->pos = i + 1;
	else
		c->done = true;
	return 1;
}

/* Drops spaces and tabs around s[0..*n). */
static const char *trim(const char *s, size_t *n)
{
	while (*n && (s[*n - 1] == ' ' || s[*n - 1] == '\t'))
		(*n)--;
	while (*n && (*s == ' ' || *s == '\t')) {
		s++;
		(*n)--;
	}
	return s;
}

/*
 * Records column `field` as a digest column of algorithm algo, unless one of
 * that algorithm is known already (the first wins).
 */
static void add_column(struct fidx_hashlist_parser *p, size_t field, int algo)
{
	for (size_t c = 0; c < p->ncols; c++)
		if (p->col[c].algo == (enum fidx_digest)algo)
			return;
	p->col[p->ncols].field = field;
	p->col[p->ncols].algo = (enum fidx_digest)algo;
	p->ncols++;
}

/*
 * Takes s as a CSV header if it has two fields or more and one of them
 * names a digest.  Returns true (columns set) or false (p unchanged).
 */
static bool csv_header(struct fidx_hashlist_parser *p, const char *s, size_t n)
{
	struct csv_cursor c = {.s = s, .n = n};
	struct fidx_hashlist_parser h = *p;
	const char *v;
	size_t vn, field = 0;
	int r;

	h.ncols = 0;
	while ((r = csv_next(&h, &c, &v, &vn)) > 0) {
		v = trim(v, &vn);
		int algo = algo_of_name(v, vn);
		if (algo >= 0)
			add_column(&h, field, algo);
		field++;
	}
	if (r < 0 || field < 2 || h.ncols == 0)
		return false;
	h.nfields = field;
	h.have_columns = true;
	h.format = FIDX_HASHLIST_CSV;
	*p = h;
	return true;
}

/* Returns the digest column that field is, or -1. */
static int column_of(const struct fidx_hashlist_parser *p, size_t field)
{
	for (size_t c = 0; c < p->ncols; c++)
		if (p->col[c].field == field)
			return (int)c;
	return -1;
}

/*
 * Takes the value v[0..vn) of digest column c into e.  Returns 1 (taken or
 * empty), 0 when it is the column's own name (a repeated header), -1 when
 * it is not a digest of the column's algorithm.
 */
static int take_column(struct fidx_hashlist_parser *p, size_t c, const char *v, size_t vn,
		       struct fidx_hashlist_entry *e)
{
	enum fidx_digest algo = p->col[c].algo;
	v = trim(v, &vn);
	if (vn == 0)
		return 1;
	if (vn == 2 * fidx_digest_len(algo) && hex_span(v, vn) == vn) {
		put(e, algo, v);
		return 1;
	}
	if (algo_of_name(v, vn) == (int)algo)
		return 0;
	return malformed(p, "field %zu: not a %s digest", p->col[c].field + 1,
			 fidx_digest_name(algo));
}

/* Parses a row of a CSV list. */
static int parse_csv_row(struct fidx_hashlist_parser *p, const char *s, size_t n,
			 struct fidx_hashlist_entry *e)
{
	struct csv_cursor c = {.s = s, .n = n};
	const char *v;
	size_t vn, field = 0;
	bool header = false, bad = false;
	char why[sizeof(p->why)];
	int r;

	size_t content = n;
	trim(s, &content);
	if (content == 0)
		return 0;
	while ((r = csv_next(p, &c, &v, &vn)) > 0) {
		int col = column_of(p, field++);
		if (col < 0 || bad)
			continue;
		r = take_column(p, (size_t)col, v, vn, e);
		if (r == 0)
			header = true;
		else if (r < 0) {
			bad = true;
			memcpy(why, p->why, sizeof(why));
		}
	}
	if (r < 0)
		return -1;
	/* A wrong field count says more than a wrong value it causes. */
	if (field != p->nfields)
		return malformed(p, "%zu %s, the header has %zu", field,
				 fidx_plural(field, "field", "fields"), p->nfields);
	if (bad) {
		memcpy(p->why, why, sizeof(why));
		return -1;
	}
	if (header)
		return 0;
	if (e->n == 0)
		return malformed(p, "no digest in the digest columns");
	return 1;
}

/* Returns whether s[0..n) starts with the string prefix. */
static bool starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);
	return n >= k && memcmp(s, prefix, k) == 0;
}

/* Reads hashdeep's "%%%% size,md5,sha256,filename" line (s after "%%%% "). */
static int hashdeep_columns(struct fidx_hashlist_parser *p, const char *s, size_t n)
{
	size_t field = 0, start = 0;
	p->ncols = 0;
	p->have_columns = false;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != ',')
			continue;
		int algo = algo_of_name(s + start, i - start);
		if (algo >= 0)
			add_column(p, field, algo);
		if (i == n && !(i - start == 8 && memcmp(s + start, "filename", 8) == 0))
			return malformed(p, "the column line does not end with 'filename'");
		field++;
		start = i + 1;
	}
	if (p->ncols == 0)
		return malformed(p, "the column line names no digest fidx reads"
				 " (md5, sha1, sha256, sha512)");
	p->nfields = field;
	p->have_columns = true;
	return 0;
}

/* Parses a line of a hashdeep file. */
static int parse_hashdeep(struct fidx_hashlist_parser *p, const char *s, size_t n,
			  struct fidx_hashlist_entry *e)
{
	if (n == 0 || starts(s, n, "##"))
		return 0;
	if (starts(s, n, "%%%% HASHDEEP-")) {
		p->have_columns = false;
		return 0;
	}
	if (starts(s, n, "%%%% "))
		return hashdeep_columns(p, s + 5, n - 5);
	if (!p->have_columns)
		return malformed(p, "no '%%%%%%%% size,...,filename' line before this entry");
	/* size,d1,d2,...,filename: the name is the rest, commas and all. */
	size_t field = 0, start = 0, i;
	for (i = 0; i < n && field + 1 < p->nfields; i++) {
		if (s[i] != ',')
			continue;
		int c = column_of(p, field);
		if (c >= 0) {
			enum fidx_digest algo = p->col[c].algo;
			size_t len = i - start;
			if (len != 2 * fidx_digest_len(algo) || hex_span(s + start, len) != len)
				return malformed(p, "field %zu: not a %s digest", field + 1,
						 fidx_digest_name(algo));
			put(e, algo, s + start);
		}
		field++;
		start = i + 1;
	}
	if (field + 1 < p->nfields)
		return malformed(p, "%zu %s, the column line has %zu", field + 1,
				 fidx_plural(field + 1, "field", "fields"), p->nfields);
	return 1;
}

/* Parses a line of a sums list: a sums line, a BSD tag line, or a bare digest. */
static int parse_sums(struct fidx_hashlist_parser *p, const char *s, size_t n,
		      struct fidx_hashlist_entry *e)
{
	bool first;
	int r;

	s = trim(s, &n);
	if (n == 0 || s[0] == '#')
		return 0;
	first = !p->started;
	p->started = true;
	if (first && starts(s, n, "%%%% HASHDEEP-")) {
		p->format = FIDX_HASHLIST_HASHDEEP;
		return 0;
	}
	/* coreutils marks a line whose name it escaped with a leading '\'. */
	const char *t = s[0] == '\\' ? s + 1 : s;
	size_t m = n - (size_t)(t - s);
	size_t h = hex_span(t, m);
	if (h > 0 && (h == m || t[h] == ' ' || t[h] == '\t'))
		r = put_unlabelled(p, t, h, e);
	else if (!(r = parse_tag_line(p, t, m, e)))
		r = malformed(p, "not a digest line");
	if (r < 0 && first && csv_header(p, s, n))
		return 0;
	return r;
}

void fidx_hashlist_parser_init(struct fidx_hashlist_parser *p, int algo)
{
	memset(p, 0, sizeof(*p));
	p->format = FIDX_HASHLIST_SUMS;
	p->algo = algo;
}

int fidx_hashlist_parse_line(struct fidx_hashlist_parser *p, const char *line, size_t len,
			     struct fidx_hashlist_entry *e)
{
	e->n = 0;
	if (len && line[len - 1] == '\r')
		len--;
	switch (p->format) {
	case FIDX_HASHLIST_HASHDEEP: return parse_hashdeep(p, line, len, e);
	case FIDX_HASHLIST_CSV: return parse_csv_row(p, line, len, e);
	default: return parse_sums(p, line, len, e);
	}
}

/* ------------------------------------------------------------- the loader */

/* Read size; a longer line grows the buffer. */
#define LOAD_BLOCK (1 << 20)

/* What the loader carries from line to line. */
struct load {
	struct fidx_hashset *set;
	uint32_t list;
	struct fidx_hashlist_parser parser;
	struct fidx_hashlist_entry entry;
	fidx_hashlist_malformed_fn *bad;
	void *ctx;
	struct fidx_hashlist_stats *st;
};

/* Handles one line.  Returns 0, or -1 with errno set. */
static int load_line(struct load *l, const char *line, size_t len)
{
	struct fidx_hashlist_stats *st = l->st;

	if (st->lines == UINT32_MAX) {
		errno = EOVERFLOW;
		return -1;
	}
	if (++st->lines == 1 && starts(line, len, "\xef\xbb\xbf")) { /* a UTF-8 BOM */
		line += 3;
		len -= 3;
	}
	int r = fidx_hashlist_parse_line(&l->parser, line, len, &l->entry);
	if (r < 0) {
		st->malformed++;
		if (l->bad(l->ctx, st->lines, l->parser.why)) {
			errno = ECANCELED;
			return -1;
		}
		return 0;
	}
	struct fidx_hashloc loc = {l->list, (uint32_t)st->lines};
	for (size_t i = 0; r > 0 && i < l->entry.n; i++) {
		int added = fidx_hashset_add(l->set, l->entry.algo[i], l->entry.digest[i], loc);
		if (added < 0)
			return -1;
		st->digests[l->entry.algo[i]]++;
		st->repeated += !added;
	}
	return 0;
}

int fidx_hashlist_load(struct fidx_hashset *set, const char *path, uint32_t list, int algo,
		       fidx_hashlist_malformed_fn *bad, void *ctx, struct fidx_hashlist_stats *st)
{
	struct load l = {.set = set, .list = list, .bad = bad, .ctx = ctx, .st = st};
	bool stdin_ = strcmp(path, "-") == 0;
	int fd = stdin_ ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = LOAD_BLOCK, have = 0;
	char *buf = NULL;
	int term = -1, ret = -1;

	memset(st, 0, sizeof(*st));
	fidx_hashlist_parser_init(&l.parser, algo);
	if (fd < 0)
		return -1;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (!(buf = malloc(cap)))
		goto out;
	for (;;) {
		if (have == cap) { /* a line longer than the buffer */
			char *b = realloc(buf, 2 * cap);
			if (!b)
				goto out;
			buf = b;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + have, cap - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto out;
		if (r == 0)
			break;
		/* A NUL in the first block: lines end with NUL (sha256sum -z). */
		if (term < 0)
			term = memchr(buf, '\0', (size_t)r) ? '\0' : '\n';
		size_t end = have + (size_t)r, pos = 0;
		const char *nl;
		/* Only the new bytes can hold the terminator. */
		size_t from = have;
		while ((nl = memchr(buf + from, term, end - from))) {
			if (load_line(&l, buf + pos, (size_t)(nl - (buf + pos))) < 0)
				goto out;
			pos = from = (size_t)(nl - buf) + 1;
		}
		memmove(buf, buf + pos, end - pos);
		have = end - pos;
	}
	if (have && load_line(&l, buf, have) < 0)
		goto out;
	st->format = l.parser.format;
	ret = 0;
out:;
	int e = errno;
	free(buf);
	if (!stdin_)
		close(fd);
	errno = e;
	return ret;
}
