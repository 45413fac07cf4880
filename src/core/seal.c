/*
 * seal.c - the canonical lines of a scan's rows, their hashes, and the
 * sealer that computes seals while a scan is written (seal.h).
 *
 * Sealing (struct fidx_sealer): the store hands over each file row right
 * after it wrote it, as its fields.  The store's thread copies the fields
 * (and their bytes) into a batch; a hashing thread makes each row's line
 * (fidx_seal_line()), adds it to its scan's running SHA-256 and computes
 * the line's row hash; the store's thread then hands the batch's row hashes
 * back to the store (put), which keeps them in the transaction that holds
 * the rows (the store syncs before each commit, so a rollback drops both).
 * Making the lines on the hasher's thread takes the hex and decimal
 * formatting off the store's, which is a scan's critical path.  A row with
 * an OTHER field (read back by the store, formatted by its quote callback on
 * the store's thread) has its line made by the store's thread instead:
 *
 *     store thread:  fidx_sealer_row() ──► fields (or line) ──► slot of the ring ──┐
 *                                                                                  ▼
 *     hasher thread:     line of the fields; scan's seal += line; row hash = SHA-256(line)
 *                                                                                  │
 *     store thread:  put(ids, scans, hashes) ◄── a batch of 128 ◄──────────────────┘
 *                    (when the ring is full, and at every sync)
 *
 *     fidx_sealer_end():  sync, then the scan row's line, last ──► the seal
 *
 * The ring: batches of BATCH_ROWS lines go round RING slots, in order:
 *
 *     store:   fill slot k ──► submitted = k + 1 ──► once hashed > j: put slot j
 *     hasher:  wait until submitted > hashed ──► hash slot `hashed` ──► hashed + 1
 *
 * A slot is filled again only after it was put, so each side owns a slot
 * while it works on it; the counters, under the lock, hand it over.  A
 * scan's running SHA-256 is the hasher's while a batch of it is in flight,
 * and the store's once every batch is hashed (fidx_sealer_sync()).
 */
#include "seal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

/*
 * The file row's fields: the table's columns of schema 1-3 in order (a time
 * as T_ns), the T_sec, T_nsec schema 4 added, the columns of schema 6
 * (FIDX_IMAGE_COLUMNS, a time as T_ns) and their times' T_sec, T_nsec, then
 * the column of schema 7 (FIDX_ATTR_COLUMNS).
 */
#define FIDX_SEAL_INT_(name) {#name, false},
#define FIDX_SEAL_UINT_(name) {#name, false},
#define FIDX_SEAL_TEXT_(name) {#name, true},
#define FIDX_SEAL_TYPE_(name) {#name, true},
#define FIDX_SEAL_DIGEST_(name) {#name, true},
#define FIDX_SEAL_TIME_(name) {#name "_ns", false},
const struct fidx_seal_column fidx_seal_file_columns[FIDX_SEAL_FILE_FIELDS] = {
#define FIDX_X(NAME, name, KIND) FIDX_SEAL_##KIND##_(name)
	FIDX_FILE_COLUMNS(FIDX_X)
	{"atime_sec", false}, {"atime_nsec", false}, {"mtime_sec", false}, {"mtime_nsec", false},
	{"ctime_sec", false}, {"ctime_nsec", false}, {"btime_sec", false}, {"btime_nsec", false},
	FIDX_IMAGE_COLUMNS(FIDX_X)
#undef FIDX_X
	{"fn_atime_sec", false}, {"fn_atime_nsec", false}, {"fn_mtime_sec", false},
	{"fn_mtime_nsec", false}, {"fn_ctime_sec", false}, {"fn_ctime_nsec", false},
	{"fn_btime_sec", false}, {"fn_btime_nsec", false},
#define FIDX_X(NAME, name, KIND) FIDX_SEAL_##KIND##_(name)
	FIDX_ATTR_COLUMNS(FIDX_X)
#undef FIDX_X
};
_Static_assert(FIDX_COL_STATE == FIDX_SEAL_FILE_ALWAYS, "a field per column of schema 1-3");
_Static_assert(FIDX_SEAL_FILE_ALWAYS + 8 + (FIDX_COL_ATTRIBUTES - FIDX_COL_STATE) + 8 +
	       (FIDX_NFILE_COLUMNS - FIDX_COL_ATTRIBUTES) == FIDX_SEAL_FILE_FIELDS,
	       "the fields of schema 4, 6 and 7");

/*
 * The field of the first column of schema 6, of the T_sec of its first time,
 * and of the first column of schema 7.
 */
#define IMAGE_FIELDS (FIDX_SEAL_FILE_ALWAYS + 8)
#define ATTR_FIELDS (FIDX_SEAL_FILE_FIELDS - (FIDX_NFILE_COLUMNS - FIDX_COL_ATTRIBUTES))
#define FN_SEC_FIELDS (ATTR_FIELDS - 8)

/* The scan row's fields: every column of scan but seal, in table order. */
const struct fidx_seal_column fidx_seal_scan_columns[FIDX_SEAL_SCAN_FIELDS] = {
	{"id", false},         {"root", true},          {"host", true},      {"os", true},
	{"kernel", true},      {"arch", true},          {"version", true},   {"options", true},
	{"started_ns", false}, {"finished_ns", false},  {"status", true},    {"entries", false},
	{"files", false},      {"dirs", false},         {"bytes", false},    {"errors", false},
	{"reused", false},     {"hashed", false},       {"base_scan_id", false}, {"pid", false},
	{"run_ns", false},
};

size_t fidx_seal_file_fields_used(const struct fidx_seal_field *f)
{
	for (size_t i = FIDX_SEAL_FILE_ALWAYS; i < FIDX_SEAL_FILE_FIELDS; i++)
		if (f[i].kind != FIDX_SEAL_NULL)
			return FIDX_SEAL_FILE_FIELDS;
	return FIDX_SEAL_FILE_ALWAYS;
}

int fidx_seal_file_field(enum fidx_col c)
{
	if (c < FIDX_COL_STATE)
		return (int)c;
	if (c < FIDX_COL_ATTRIBUTES)
		return IMAGE_FIELDS + (int)(c - FIDX_COL_STATE);
	return ATTR_FIELDS + (int)(c - FIDX_COL_ATTRIBUTES);
}

void fidx_seal_file_fields(const struct fidx_row *row, struct fidx_seal_field *f)
{
	static const struct fidx_seal_field null = {.kind = FIDX_SEAL_NULL};
	for (size_t i = 0; i < FIDX_SEAL_FILE_FIELDS; i++)
		f[i] = null;
	for (int c = 0; c < FIDX_NFILE_COLUMNS; c++) {
		if (!fidx_row_has(row, c))
			continue;
		const struct fidx_value *v = &row->v[c];
		int at = fidx_seal_file_field(c);
		switch (fidx_columns[c].kind) {
		case FIDX_KIND_INT:
		case FIDX_KIND_UINT:
			f[at] = (struct fidx_seal_field){.kind = FIDX_SEAL_INT, .i = v->i};
			break;
		case FIDX_KIND_TIME: {
			/* T_ns when it fits, else T_sec and T_nsec (docs/SCHEMA.md, "Times"). */
			int64_t ns;
			size_t sec = c >= FIDX_COL_FN_ATIME
					     ? FN_SEC_FIELDS + 2 * (size_t)(c - FIDX_COL_FN_ATIME)
					     : FIDX_SEAL_FILE_ALWAYS + 2 * (size_t)(c - FIDX_COL_ATIME);
			if (fidx_time_to_ns(v->t, &ns)) {
				f[at] = (struct fidx_seal_field){.kind = FIDX_SEAL_INT, .i = ns};
			} else {
				f[sec] = (struct fidx_seal_field){.kind = FIDX_SEAL_INT, .i = v->t.sec};
				f[sec + 1] = (struct fidx_seal_field){.kind = FIDX_SEAL_INT,
								      .i = v->t.nsec};
			}
			break;
		}
		default:
			f[at] = (struct fidx_seal_field){.kind = FIDX_SEAL_BYTES, .p = v->p, .n = v->n};
		}
	}
}

/* What makes lines, for sealing and checking alike. */
struct fidx_seal_lines {
	fidx_seal_quote_fn *quote;  /* formats OTHER fields */
	void *quote_arg;
	struct fidx_digester *one;  /* one row's hash (SHA-256) */
	char *line;                 /* the current line (not NUL-terminated), room for its '\n' */
	size_t len, cap;            /* its length and the buffer's size */
};

struct fidx_seal_lines *fidx_seal_lines_new(fidx_seal_quote_fn *quote, void *arg,
					    struct fidx_error *err)
{
	struct fidx_seal_lines *l = calloc(1, sizeof(*l));
	if (!l) {
		fidx_fail_nomem(err);
		return NULL;
	}
	l->quote = quote;
	l->quote_arg = arg;
	if (!(l->one = fidx_digester_create(FIDX_SHA256))) {
		fidx_seal_lines_free(l);
		fidx_fail(err, ENOMEM, "cannot set up SHA-256: out of memory");
		return NULL;
	}
	return l;
}

void fidx_seal_lines_free(struct fidx_seal_lines *l)
{
	if (!l)
		return;
	fidx_digester_destroy(l->one);
	free(l->line);
	free(l);
}

/* Grows the line's buffer to hold n more bytes.  Returns 0, or -1 with err set. */
static int grow(struct fidx_seal_lines *l, size_t n, struct fidx_error *err)
{
	size_t cap = l->cap ? l->cap : 1024;
	while (cap - l->len < n)
		cap *= 2;
	char *p = realloc(l->line, cap);
	if (!p)
		return fidx_fail_nomem(err);
	l->line = p;
	l->cap = cap;
	return 0;
}

/* Makes room for n more bytes in the line.  Returns 0, or -1 with err set. */
static inline int reserve(struct fidx_seal_lines *l, size_t n, struct fidx_error *err)
{
	return l->cap - l->len >= n ? 0 : grow(l, n, err);
}

int fidx_seal_line_append(struct fidx_seal_lines *l, const void *p, size_t n,
			  struct fidx_error *err)
{
	if (reserve(l, n, err) < 0)
		return -1;
	memcpy(l->line + l->len, p, n);
	l->len += n;
	return 0;
}

/* "00" to "99": decimal digits two at a time. */
static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Writes v at o in decimal, as quote() writes an integer (at most 20 bytes).  Returns the end. */
static char *put_int(char *o, int64_t v)
{
	char buf[20], *b = buf + sizeof(buf);
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	while (u >= 100) {
		b -= 2;
		memcpy(b, digit_pairs + 2 * (u % 100), 2);
		u /= 100;
	}
	if (u >= 10) {
		b -= 2;
		memcpy(b, digit_pairs + 2 * u, 2);
	} else {
		*--b = (char)('0' + u);
	}
	if (v < 0)
		*o++ = '-';
	size_t n = (size_t)(buf + sizeof(buf) - b);
	memcpy(o, b, n);
	return o + n;
}

/*
 * Writes X'..' at o, the n bytes at p in upper-case hex, as quote() writes a
 * BLOB (2n + 3 bytes).  Returns the end.
 */
static char *put_blob(char *o, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789ABCDEF";
	*o++ = 'X';
	*o++ = '\'';
	for (size_t i = 0; i < n; i++) {
		o[2 * i] = digits[p[i] >> 4];
		o[2 * i + 1] = digits[p[i] & 15];
	}
	o += 2 * n;
	*o++ = '\'';
	return o;
}

/* Room made before each field: its separator and the longest integer, or NULL. */
#define FIELD_ROOM 24

int fidx_seal_line(struct fidx_seal_lines *l, const struct fidx_seal_column *cols,
		   const struct fidx_seal_field *f, size_t n, size_t always,
		   struct fidx_error *err)
{
	/* Up to the end of the last schema's fields that hold a value: a file row's
	 * schema-4 fields end where schema 6's begin (IMAGE_FIELDS), schema 6's
	 * where schema 7's begin (ATTR_FIELDS). */
	bool file = cols == fidx_seal_file_columns;
	size_t upto = always;
	for (size_t c = always; c < n; c++)
		if (f[c].kind != FIDX_SEAL_NULL)
			upto = file && c < IMAGE_FIELDS ? IMAGE_FIELDS
			     : file && c < ATTR_FIELDS ? ATTR_FIELDS : n;
	l->len = 0;
	for (size_t c = 0; c < upto; c++) {
		if (reserve(l, FIELD_ROOM, err) < 0)
			return -1;
		if (c)
			l->line[l->len++] = '|';
		switch (f[c].kind) {
		case FIDX_SEAL_NULL:
			memcpy(l->line + l->len, "NULL", 4);
			l->len += 4;
			break;
		case FIDX_SEAL_INT:
			l->len = (size_t)(put_int(l->line + l->len, f[c].i) - l->line);
			break;
		case FIDX_SEAL_BYTES:
			if (reserve(l, 2 * f[c].n + 3, err) < 0)
				return -1;
			l->len = (size_t)(put_blob(l->line + l->len, f[c].p, f[c].n) - l->line);
			break;
		case FIDX_SEAL_OTHER:
			if (!l->quote)
				return fidx_fail(err, EINVAL, "a value fidx cannot seal");
			if (l->quote(l->quote_arg, f[c].other, cols[c].bytes, l, err) < 0)
				return -1;
			break;
		}
	}
	return 0;
}

int fidx_seal_row_hash(struct fidx_seal_lines *l, uint8_t out[FIDX_ROW_HASH_LEN],
		       struct fidx_error *err)
{
	uint8_t md[FIDX_SEAL_LEN];
	if (fidx_digester_reset(l->one) < 0 || fidx_digester_update(l->one, l->line, l->len) < 0 ||
	    fidx_digester_final(l->one, md) < 0)
		return fidx_fail(err, ENOMEM, "cannot compute SHA-256");
	memcpy(out, md, FIDX_ROW_HASH_LEN);
	return 0;
}

/* A running seal. */
struct fidx_seal_sum {
	struct fidx_digester *all; /* SHA-256 of the lines so far */
};

struct fidx_seal_sum *fidx_seal_sum_new(struct fidx_error *err)
{
	struct fidx_seal_sum *sum = calloc(1, sizeof(*sum));
	if (!sum || !(sum->all = fidx_digester_create(FIDX_SHA256))) {
		fidx_seal_sum_free(sum);
		fidx_fail(err, ENOMEM, "cannot set up SHA-256: out of memory");
		return NULL;
	}
	return sum;
}

int fidx_seal_sum_line(struct fidx_seal_sum *sum, struct fidx_seal_lines *l,
		       struct fidx_error *err)
{
	if (reserve(l, 1, err) < 0)
		return -1;
	l->line[l->len] = '\n';
	if (fidx_digester_update(sum->all, l->line, l->len + 1) < 0)
		return fidx_fail(err, ENOMEM, "cannot compute SHA-256");
	return 0;
}

int fidx_seal_sum_end(struct fidx_seal_sum *sum, uint8_t seal[FIDX_SEAL_LEN],
		      struct fidx_error *err)
{
	int ok = fidx_digester_final(sum->all, seal) == 0;
	fidx_seal_sum_free(sum);
	return ok ? 0 : fidx_fail(err, ENOMEM, "cannot compute SHA-256");
}

void fidx_seal_sum_free(struct fidx_seal_sum *sum)
{
	if (!sum)
		return;
	fidx_digester_destroy(sum->all);
	free(sum);
}

#define BATCH_ROWS 128 /* rows a batch: one INSERT of 128 rows costs a quarter of 128
			  one-row INSERTs (1.09 million rows: 0.31 s against 1.24 s) */
#define RING 4         /* batches in flight */

/* The running seal of one scan. */
struct scan_seal {
	int64_t scan_id;  /* the scan */
	struct fidx_digester *all; /* SHA-256 of its lines so far */
};

/*
 * One batch of rows.  Row i is either fields (nfield[i] > 0: its fields at
 * field + i * FIDX_SEAL_FILE_FIELDS, a BYTES field's bytes at bytes + its i)
 * or a line made by the store's thread (nfield[i] == 0: in text, up to end[i]).
 */
struct slot {
	char *text;                                  /* the lines made, each with its '\n' */
	size_t len, cap;                             /* bytes used and allocated */
	struct fidx_seal_field *field;               /* the rows' fields (allocated once) */
	unsigned char *bytes;                        /* the bytes of their BYTES fields */
	size_t blen, bcap;                           /* bytes used and allocated */
	size_t n;                                    /* rows in the batch */
	uint8_t nfield[BATCH_ROWS];                  /* each row's fields, or 0 for a line */
	size_t end[BATCH_ROWS];                      /* where a row's line ends (after '\n') */
	int64_t id[BATCH_ROWS];                      /* the rows' file ids */
	int64_t scan_id[BATCH_ROWS];                 /* their scans' ids */
	struct scan_seal *scan[BATCH_ROWS];          /* their scans */
	uint8_t hash[BATCH_ROWS][FIDX_ROW_HASH_LEN]; /* their row hashes (by the hasher) */
};

struct fidx_sealer {
	struct fidx_seal_lines *l;  /* lines made by the store's thread */
	struct fidx_seal_lines *hl; /* lines made by the hasher thread */
	fidx_seal_put_fn *put;      /* where row hashes go */
	void *put_arg;
	struct scan_seal **scan;    /* the scans being sealed (each allocated alone: a slot points to it) */
	size_t nscan, capscan;      /* how many, and room */
	size_t last;                /* index of the scan of the last row (a look-up cache) */
	size_t filled;              /* batches submitted (the store's count) */
	size_t put_done;            /* batches handed to put */
	struct slot slot[RING];     /* the ring; slot k % RING holds batch k */
	/* The hasher thread. */
	bool started;               /* it runs */
	pthread_t tid;              /* the thread */
	struct fidx_digester *hone; /* its SHA-256 for row hashes */
	pthread_mutex_t lock;       /* guards submitted, hashed, done, failed */
	pthread_cond_t cond;        /* broadcast whenever one of them changes */
	size_t submitted;           /* batches handed to the hasher */
	size_t hashed;              /* batches it finished */
	bool done;                  /* no more batches will come */
	bool failed;                /* a digest call failed */
};

/*
 * Hashes batch s: makes the lines of the rows kept as fields, and adds each
 * line to its scan's seal and computes its row hash.  Returns 0, or -1.
 */
static int hash_batch(struct fidx_sealer *z, struct slot *s)
{
	uint8_t md[FIDX_SEAL_LEN];
	struct fidx_error err;
	size_t start = 0;
	for (size_t i = 0; i < s->n; i++) {
		const char *line;
		size_t len;
		if (s->nfield[i]) {
			struct fidx_seal_field *f = s->field + i * FIDX_SEAL_FILE_FIELDS;
			for (size_t c = 0; c < s->nfield[i]; c++)
				if (f[c].kind == FIDX_SEAL_BYTES)
					f[c].p = s->bytes + f[c].i;
			if (fidx_seal_line(z->hl, fidx_seal_file_columns, f, s->nfield[i],
					   FIDX_SEAL_FILE_ALWAYS, &err) < 0 ||
			    reserve(z->hl, 1, &err) < 0)
				return -1;
			z->hl->line[z->hl->len] = '\n';
			line = z->hl->line;
			len = z->hl->len + 1;
		} else {
			line = s->text + start;
			len = s->end[i] - start;
			start = s->end[i];
		}
		if (fidx_digester_update(s->scan[i]->all, line, len) < 0 ||
		    fidx_digester_reset(z->hone) < 0 ||
		    fidx_digester_update(z->hone, line, len - 1) < 0 ||
		    fidx_digester_final(z->hone, md) < 0)
			return -1;
		memcpy(s->hash[i], md, FIDX_ROW_HASH_LEN);
	}
	return 0;
}

/* The hasher thread: hashes batches in order until done. */
static void *hasher_main(void *arg)
{
	struct fidx_sealer *z = arg;
	pthread_mutex_lock(&z->lock);
	for (;;) {
		while (z->hashed == z->submitted && !z->done)
			pthread_cond_wait(&z->cond, &z->lock);
		if (z->hashed == z->submitted)
			break;
		struct slot *s = &z->slot[z->hashed % RING];
		pthread_mutex_unlock(&z->lock);
		bool ok = hash_batch(z, s) == 0;
		pthread_mutex_lock(&z->lock);
		z->failed |= !ok;
		z->hashed++;
		pthread_cond_broadcast(&z->cond);
	}
	pthread_mutex_unlock(&z->lock);
	return NULL;
}

/* Hands the batch being filled to the hasher. */
static void submit(struct fidx_sealer *z)
{
	pthread_mutex_lock(&z->lock);
	z->submitted++;
	pthread_cond_broadcast(&z->cond);
	pthread_mutex_unlock(&z->lock);
	z->filled++;
}

/* Waits until every batch up to k is hashed.  Returns false when hashing failed. */
static bool wait_hashed(struct fidx_sealer *z, size_t k)
{
	pthread_mutex_lock(&z->lock);
	while (z->hashed <= k)
		pthread_cond_wait(&z->cond, &z->lock);
	bool ok = !z->failed;
	pthread_mutex_unlock(&z->lock);
	return ok;
}

/*
 * Hands the row hashes of the oldest batch not handed over, once hashed, to
 * put, and empties its slot.  Returns 0, or -1 with err set.
 */
static int put_batch(struct fidx_sealer *z, struct fidx_error *err)
{
	struct slot *s = &z->slot[z->put_done % RING];
	if (!wait_hashed(z, z->put_done))
		return fidx_fail(err, ENOMEM, "cannot make or hash the rows' lines: out of memory");
	if (z->put(z->put_arg, s->id, s->scan_id, (const uint8_t (*)[FIDX_ROW_HASH_LEN])s->hash,
		   s->n, err) < 0)
		return -1;
	s->n = s->len = s->blen = 0;
	z->put_done++;
	return 0;
}

/*
 * Records row id of scan c as the next of the batch being filled (its line or
 * fields already there), and hands the batch over when full.  Returns 0, or
 * -1 with err set.
 */
static int add_row(struct fidx_sealer *z, struct slot *s, struct scan_seal *c, int64_t id,
		   struct fidx_error *err)
{
	s->id[s->n] = id;
	s->scan_id[s->n] = c->scan_id;
	s->scan[s->n++] = c;
	if (s->n < BATCH_ROWS)
		return 0;
	submit(z);
	/* Keep a slot to fill: hand the oldest batch over once the ring is full. */
	return z->filled - z->put_done == RING ? put_batch(z, err) : 0;
}

/* Adds the line made (z->l) of row id of scan c to the ring.  Returns 0, or -1 with err set. */
static int add_line(struct fidx_sealer *z, struct scan_seal *c, int64_t id,
		    struct fidx_error *err)
{
	struct slot *s = &z->slot[z->filled % RING];
	size_t need = z->l->len + 1;
	if (s->cap - s->len < need) {
		size_t cap = s->cap ? s->cap : 64 * 1024;
		while (cap - s->len < need)
			cap *= 2;
		char *p = realloc(s->text, cap);
		if (!p)
			return fidx_fail_nomem(err);
		s->text = p;
		s->cap = cap;
	}
	memcpy(s->text + s->len, z->l->line, z->l->len);
	s->len += z->l->len;
	s->text[s->len++] = '\n';
	s->end[s->n] = s->len;
	s->nfield[s->n] = 0;
	return add_row(z, s, c, id, err);
}

/*
 * Adds the first n of row id's fields f (of scan c; none OTHER) to the ring,
 * their bytes copied, for the hasher to make its line.  Returns 0, or -1 with
 * err set.
 */
static int add_fields(struct fidx_sealer *z, struct scan_seal *c, int64_t id,
		      const struct fidx_seal_field *f, size_t n, struct fidx_error *err)
{
	struct slot *s = &z->slot[z->filled % RING];
	size_t need = 0;
	for (size_t i = 0; i < n; i++)
		if (f[i].kind == FIDX_SEAL_BYTES)
			need += f[i].n;
	if (!s->field &&
	    !(s->field = malloc(BATCH_ROWS * FIDX_SEAL_FILE_FIELDS * sizeof(*s->field))))
		return fidx_fail_nomem(err);
	if (s->bcap - s->blen < need) {
		size_t cap = s->bcap ? s->bcap : 64 * 1024;
		while (cap - s->blen < need)
			cap *= 2;
		unsigned char *p = realloc(s->bytes, cap);
		if (!p)
			return fidx_fail_nomem(err);
		s->bytes = p;
		s->bcap = cap;
	}
	struct fidx_seal_field *to = s->field + s->n * FIDX_SEAL_FILE_FIELDS;
	memcpy(to, f, n * sizeof(*f));
	for (size_t i = 0; i < n; i++) {
		if (f[i].kind != FIDX_SEAL_BYTES)
			continue;
		/* Where the bytes are in the slot (it may move until handed over). */
		to[i].i = (int64_t)s->blen;
		to[i].p = NULL;
		if (f[i].n)
			memcpy(s->bytes + s->blen, f[i].p, f[i].n);
		s->blen += f[i].n;
	}
	s->nfield[s->n] = (uint8_t)n;
	return add_row(z, s, c, id, err);
}

int fidx_sealer_sync(struct fidx_sealer *z, struct fidx_error *err)
{
	if (z->slot[z->filled % RING].n)
		submit(z);
	while (z->put_done < z->filled)
		if (put_batch(z, err) < 0)
			return -1;
	return 0;
}

struct fidx_sealer *fidx_sealer_new(fidx_seal_put_fn *put, void *arg, struct fidx_error *err)
{
	struct fidx_sealer *z = calloc(1, sizeof(*z));
	if (!z) {
		fidx_fail_nomem(err);
		return NULL;
	}
	z->put = put;
	z->put_arg = arg;
	if (!(z->l = fidx_seal_lines_new(NULL, NULL, err))) {
		free(z);
		return NULL;
	}
	if (!(z->hl = fidx_seal_lines_new(NULL, NULL, err))) {
		fidx_seal_lines_free(z->l);
		free(z);
		return NULL;
	}
	if (!(z->hone = fidx_digester_create(FIDX_SHA256))) {
		fidx_seal_lines_free(z->hl);
		fidx_seal_lines_free(z->l);
		free(z);
		fidx_fail(err, ENOMEM, "cannot set up SHA-256: out of memory");
		return NULL;
	}
	pthread_mutex_init(&z->lock, NULL);
	pthread_cond_init(&z->cond, NULL);
	return z;
}

void fidx_sealer_quote(struct fidx_sealer *z, fidx_seal_quote_fn *quote, void *arg)
{
	z->l->quote = quote;
	z->l->quote_arg = arg;
}

/* Returns the index of the seal of scan scan_id being computed, or -1. */
static ssize_t find_scan(const struct fidx_sealer *z, int64_t scan_id)
{
	if (z->last < z->nscan && z->scan[z->last]->scan_id == scan_id)
		return (ssize_t)z->last;
	for (size_t i = 0; i < z->nscan; i++)
		if (z->scan[i]->scan_id == scan_id)
			return (ssize_t)i;
	return -1;
}

/* Drops the seal of scan i (no batch of it in flight). */
static void drop_scan(struct fidx_sealer *z, size_t i)
{
	fidx_digester_destroy(z->scan[i]->all);
	free(z->scan[i]);
	z->scan[i] = z->scan[--z->nscan];
}

bool fidx_sealer_sealing(const struct fidx_sealer *z, int64_t scan_id)
{
	return find_scan(z, scan_id) >= 0;
}

int fidx_sealer_begin(struct fidx_sealer *z, int64_t scan_id, struct fidx_error *err)
{
	struct scan_seal *c;
	ssize_t i = find_scan(z, scan_id);

	if (i >= 0) {
		/* Begun again: no batch of its old seal may be in flight. */
		if (fidx_sealer_sync(z, err) < 0)
			return -1;
		drop_scan(z, (size_t)i);
	}
	if (!z->started) {
		if (pthread_create(&z->tid, NULL, hasher_main, z) != 0)
			return fidx_fail(err, EAGAIN, "cannot start the hashing thread");
		z->started = true;
	}
	if (z->nscan == z->capscan) {
		size_t cap = z->capscan ? 2 * z->capscan : 4;
		struct scan_seal **p = realloc(z->scan, cap * sizeof(*p));
		if (!p)
			return fidx_fail_nomem(err);
		z->scan = p;
		z->capscan = cap;
	}
	if (!(c = calloc(1, sizeof(*c))) || !(c->all = fidx_digester_create(FIDX_SHA256))) {
		free(c);
		return fidx_fail(err, ENOMEM, "cannot set up SHA-256: out of memory");
	}
	c->scan_id = scan_id;
	z->scan[z->nscan++] = c;
	return 0;
}

int fidx_sealer_row(struct fidx_sealer *z, int64_t scan_id, const struct fidx_seal_field *f,
		    struct fidx_error *err)
{
	ssize_t i = find_scan(z, scan_id);
	if (i < 0)
		return 0;
	z->last = (size_t)i;
	size_t n = fidx_seal_file_fields_used(f);
	bool other = false;
	for (size_t c = 0; c < n; c++)
		other |= f[c].kind == FIDX_SEAL_OTHER;
	if (!other)
		return add_fields(z, z->scan[i], f[0].i, f, n, err);
	if (fidx_seal_line(z->l, fidx_seal_file_columns, f, FIDX_SEAL_FILE_FIELDS,
			   FIDX_SEAL_FILE_ALWAYS, err) < 0)
		return -1;
	return add_line(z, z->scan[i], f[0].i, err);
}

void fidx_sealer_forget(struct fidx_sealer *z)
{
	if (z->filled > z->put_done)
		wait_hashed(z, z->filled - 1);
	for (int i = 0; i < RING; i++)
		z->slot[i].n = z->slot[i].len = z->slot[i].blen = 0;
	z->put_done = z->filled;
	pthread_mutex_lock(&z->lock);
	z->failed = false;
	pthread_mutex_unlock(&z->lock);
	while (z->nscan)
		drop_scan(z, 0);
}

int fidx_sealer_end(struct fidx_sealer *z, int64_t scan_id, const struct fidx_seal_field *f,
		    uint8_t seal[FIDX_SEAL_LEN], struct fidx_error *err)
{
	if (fidx_sealer_sync(z, err) < 0)
		return -1;
	ssize_t i = find_scan(z, scan_id);
	if (i < 0)
		return fidx_fail(err, EINVAL, "scan %" PRId64 " is not being sealed", scan_id);
	struct scan_seal *c = z->scan[i];
	if (fidx_seal_line(z->l, fidx_seal_scan_columns, f, FIDX_SEAL_SCAN_FIELDS,
			   FIDX_SEAL_SCAN_ALWAYS, err) < 0)
		return -1;
	if (reserve(z->l, 1, err) < 0)
		return -1;
	z->l->line[z->l->len] = '\n';
	if (fidx_digester_update(c->all, z->l->line, z->l->len + 1) < 0 ||
	    fidx_digester_final(c->all, seal) < 0)
		return fidx_fail(err, ENOMEM, "cannot compute SHA-256");
	drop_scan(z, (size_t)i);
	return 0;
}

void fidx_sealer_free(struct fidx_sealer *z)
{
	if (!z)
		return;
	if (z->started) {
		pthread_mutex_lock(&z->lock);
		z->done = true;
		pthread_cond_broadcast(&z->cond);
		pthread_mutex_unlock(&z->lock);
		pthread_join(z->tid, NULL);
	}
	while (z->nscan)
		drop_scan(z, 0);
	free(z->scan);
	for (int i = 0; i < RING; i++) {
		free(z->slot[i].text);
		free(z->slot[i].field);
		free(z->slot[i].bytes);
	}
	fidx_digester_destroy(z->hone);
	pthread_cond_destroy(&z->cond);
	pthread_mutex_destroy(&z->lock);
	fidx_seal_lines_free(z->hl);
	fidx_seal_lines_free(z->l);
	free(z);
}
