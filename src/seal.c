/*
 * seal.c - sealing a scan and checking its seal (seal.h).
 *
 * Both directions stream the scan's rows once through one prepared SELECT,
 * in id order: the file rows of a scan are a range of ids (interleaved only
 * with the other roots of the same run), read as a rowid range, without an
 * index and without a sort.  Each row becomes its canonical line (formatted
 * here from the raw columns: make_line()), the line goes into the running
 * SHA-256 of the seal, and, when sealing, its own SHA-256 (truncated) goes
 * into file_seal, in id order, so SQLite appends to the table's b-tree.
 *
 *     fidx_seal_write():  rows ──► lines ──► hasher thread: seal, row hashes
 *                         (main thread)          │
 *                         file_seal ◄── INSERT ──┘ (128 rows a statement)
 *                         scan.seal ◄── the seal, at the end
 *
 *     fidx_seal_check():  pass 1  the same lines ──► computed seal
 *                         (equal to scan.seal: intact, done)
 *                         pass 2  each line's hash against file_seal:
 *                                 altered, added; then file_seal rows
 *                                 without a file row: removed; then the
 *                                 scan row's counts against its rows
 *
 * A removed row has no scan_id left to say whose it was (file_seal keeps
 * none): it is attributed by its id to the run that wrote the scan, from
 * just after the rows of the scans before to just before those of the scans
 * after (run_span()).  Only a scan whose seal differs reports it; when the
 * several roots of one run all differ, each of them lists it.
 */
#include "seal.h"

#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A column of the canonical line. */
struct seal_column {
	const char *name; /* column name */
	bool bytes;       /* TEXT or BLOB: sealed as quote(CAST(c AS BLOB)); else quote(c) */
};

/* The scan row's fields, in line order: every column of `scan` but seal. */
static const struct seal_column scan_columns[] = {
	{"id", false},         {"root", true},          {"host", true},      {"os", true},
	{"kernel", true},      {"arch", true},          {"version", true},   {"options", true},
	{"started_ns", false}, {"finished_ns", false},  {"status", true},    {"entries", false},
	{"files", false},      {"dirs", false},         {"bytes", false},    {"errors", false},
	{"reused", false},     {"hashed", false},       {"base_scan_id", false}, {"pid", false},
};
#define NSCAN_COLUMNS (sizeof(scan_columns) / sizeof(scan_columns[0]))

/* A file row's fields, in line order: every column of `file`. */
static const struct seal_column file_columns[] = {
	{"id", false},       {"scan_id", false},  {"path", true},         {"name", true},
	{"ext", true},       {"type", true},      {"size", false},        {"blocks", false},
	{"mode", false},     {"uid", false},      {"gid", false},         {"nlink", false},
	{"dev", false},      {"ino", false},      {"atime_ns", false},    {"mtime_ns", false},
	{"ctime_ns", false}, {"btime_ns", false}, {"link_target", true},  {"md5", true},
	{"sha1", true},      {"sha256", true},    {"sha512", true},       {"xxh128", true},
	{"error", true},     {"digests_from", false},
};
#define NFILE_COLUMNS (sizeof(file_columns) / sizeof(file_columns[0]))
#define FILE_PATH_COLUMN 2 /* index of "path" in file_columns */

/* Everything one pass over a scan's rows needs. */
struct sealer {
	sqlite3 *db;          /* the database read (and written by fidx_seal_write()) */
	int64_t scan_id;      /* the scan */
	sqlite3_stmt *quote;  /* SQLite's own quote() for a value of a kind fidx never writes */
	EVP_MD *sha256;       /* fetched once */
	EVP_MD_CTX *all;      /* the seal: every line */
	EVP_MD_CTX *one;      /* one row's line */
	char *line;           /* the current line (not NUL-terminated) */
	size_t len, cap;      /* its length and the buffer's size */
	char *why;            /* where a failure is described */
	size_t whylen;        /* its size */
};


/* Formats a failure into z->why.  Returns -1. */
__attribute__((format(printf, 2, 3)))
static int fail(struct sealer *z, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(z->why, z->whylen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Records SQLite's last error on z->db, while doing what.  Returns -1. */
static int db_fail(struct sealer *z, const char *what)
{
	return fail(z, "cannot %s scan %" PRId64 ": %s", what, z->scan_id, sqlite3_errmsg(z->db));
}

/* Prepares sql into *s.  Returns 0, or -1 with the reason set. */
static int prepare(struct sealer *z, const char *sql, sqlite3_stmt **s)
{
	if (sqlite3_prepare_v2(z->db, sql, -1, s, NULL) != SQLITE_OK)
		return db_fail(z, "read");
	sqlite3_bind_int64(*s, 1, z->scan_id);
	return 0;
}

/* Sets z up for scan scan_id of db.  Returns 0, or -1 with the reason set. */
static int sealer_open(struct sealer *z, sqlite3 *db, int64_t scan_id, char *why, size_t whylen)
{
	*z = (struct sealer){.db = db, .scan_id = scan_id, .why = why, .whylen = whylen};
	z->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	z->all = EVP_MD_CTX_new();
	z->one = EVP_MD_CTX_new();
	if (!z->sha256 || !z->all || !z->one || !EVP_DigestInit_ex2(z->all, z->sha256, NULL))
		return fail(z, "cannot set up SHA-256");
	return 0;
}

/* Frees what sealer_open() and the passes made. */
static void sealer_close(struct sealer *z)
{
	sqlite3_finalize(z->quote);
	EVP_MD_CTX_free(z->all);
	EVP_MD_CTX_free(z->one);
	EVP_MD_free(z->sha256);
	free(z->line);
}

/* Grows the line's buffer to hold n more bytes.  Returns 0, or -1 when out of memory. */
static int grow(struct sealer *z, size_t n)
{
	size_t cap = z->cap ? z->cap : 1024;
	while (cap - z->len < n)
		cap *= 2;
	char *p = realloc(z->line, cap);
	if (!p)
		return fail(z, "out of memory");
	z->line = p;
	z->cap = cap;
	return 0;
}

/* Makes room for n more bytes in the line.  Returns 0, or -1. */
static inline int reserve(struct sealer *z, size_t n)
{
	return z->cap - z->len >= n ? 0 : grow(z, n);
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

/*
 * Appends what SQLite's quote(v) (bytes: quote(CAST(v AS BLOB))) gives, for
 * the values fidx never writes: a REAL, a BLOB or TEXT in an INTEGER column,
 * a number in a TEXT or BLOB column.  Returns 0, or -1.
 */
static int append_by_sqlite(struct sealer *z, sqlite3_value *v, bool bytes)
{
	if (!z->quote && sqlite3_prepare_v2(z->db, "SELECT quote(?1), quote(CAST(?1 AS BLOB))", -1,
					    &z->quote, NULL) != SQLITE_OK)
		return db_fail(z, "read");
	int ret = -1;
	if (sqlite3_bind_value(z->quote, 1, v) != SQLITE_OK || sqlite3_step(z->quote) != SQLITE_ROW) {
		db_fail(z, "read");
	} else {
		const char *t = (const char *)sqlite3_column_text(z->quote, bytes);
		size_t n = (size_t)sqlite3_column_bytes(z->quote, bytes);
		if (!t)
			fail(z, "out of memory");
		else if (reserve(z, n) == 0) {
			memcpy(z->line + z->len, t, n);
			z->len += n;
			ret = 0;
		}
	}
	sqlite3_reset(z->quote);
	return ret;
}

/* Room made before each field: its separator and the longest integer, or NULL. */
#define FIELD_ROOM 24

/*
 * Makes the line of the current row of s from its first n columns, which
 * are cols[0..n-1]: the hot loop of sealing, one column call per NULL, two
 * per integer, three per text or blob.  Returns 0, or -1.
 */
static int make_line(struct sealer *z, sqlite3_stmt *s, const struct seal_column *cols, size_t n)
{
	z->len = 0;
	for (int c = 0; c < (int)n; c++) {
		bool bytes = cols[c].bytes;
		if (reserve(z, FIELD_ROOM) < 0)
			return -1;
		if (c)
			z->line[z->len++] = '|';
		int type = sqlite3_column_type(s, c);
		if (type == SQLITE_NULL) {
			memcpy(z->line + z->len, "NULL", 4);
			z->len += 4;
		} else if (type == SQLITE_INTEGER && !bytes) {
			z->len = (size_t)(put_int(z->line + z->len, sqlite3_column_int64(s, c)) - z->line);
		} else if ((type == SQLITE_TEXT || type == SQLITE_BLOB) && bytes) {
			/* A TEXT value's bytes as stored (fidx databases are UTF-8). */
			const unsigned char *p = sqlite3_column_blob(s, c);
			size_t len = (size_t)sqlite3_column_bytes(s, c);
			if (reserve(z, 2 * len + 3) < 0)
				return -1;
			z->len = (size_t)(put_blob(z->line + z->len, p, len) - z->line);
		} else if (append_by_sqlite(z, sqlite3_column_value(s, c), bytes) < 0) {
			return -1;
		}
	}
	return 0;
}

/* Adds the line and its '\n' to the seal.  Returns 0, or -1. */
static int seal_line(struct sealer *z)
{
	if (reserve(z, 1) < 0)
		return -1;
	z->line[z->len] = '\n';
	if (!EVP_DigestUpdate(z->all, z->line, z->len + 1))
		return fail(z, "cannot compute SHA-256");
	return 0;
}

/* Computes the row hash of the line (without its '\n').  Returns 0, or -1. */
static int row_hash(struct sealer *z, uint8_t out[FIDX_ROW_HASH_LEN])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	if (!EVP_DigestInit_ex2(z->one, z->sha256, NULL) ||
	    !EVP_DigestUpdate(z->one, z->line, z->len) || !EVP_DigestFinal_ex(z->one, md, NULL))
		return fail(z, "cannot compute SHA-256");
	memcpy(out, md, FIDX_ROW_HASH_LEN);
	return 0;
}

/* Writes "SELECT <cols>" followed by rest into buf (large enough for our SQL). */
static void select_sql(char *buf, size_t size, const struct seal_column *cols, size_t n,
		       const char *rest)
{
	size_t len = (size_t)snprintf(buf, size, "SELECT");
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s %s", i ? "," : "", cols[i].name);
	if (len < size)
		snprintf(buf + len, size - len, "%s", rest);
}

/*
 * Reads the scan row, with extra columns after the sealed ones (they
 * start at NSCAN_COLUMNS), and adds its line to the seal.  Leaves *s on the
 * row.  Returns 0, or -1 (also when there is no such scan).
 */
static int scan_line(struct sealer *z, const char *extra, sqlite3_stmt **s)
{
	char sql[1024], rest[256];
	snprintf(rest, sizeof(rest), "%s FROM scan WHERE id = ?1", extra);
	select_sql(sql, sizeof(sql), scan_columns, NSCAN_COLUMNS, rest);
	if (prepare(z, sql, s) < 0)
		return -1;
	int rc = sqlite3_step(*s);
	if (rc == SQLITE_DONE)
		return fail(z, "no scan %" PRId64, z->scan_id);
	if (rc != SQLITE_ROW)
		return db_fail(z, "read");
	return make_line(z, *s, scan_columns, NSCAN_COLUMNS) < 0 ? -1 : seal_line(z);
}

/*
 * Prepares the walk over the scan's file rows in id order, with extra
 * columns after the sealed ones (from NFILE_COLUMNS on): a rowid range
 * from the scan's first id to its last, whatever the other scans' rows
 * within.  Sets *lo and *hi to that range (0 and -1 when there is no row).
 * Returns 0, or -1.
 */
static int file_rows(struct sealer *z, const char *extra, sqlite3_stmt **s, int64_t *lo,
		     int64_t *hi)
{
	sqlite3_stmt *range;
	char sql[2048], rest[512];

	if (prepare(z, "SELECT min(id), max(id) FROM file WHERE scan_id = ?1", &range) < 0)
		return -1;
	if (sqlite3_step(range) != SQLITE_ROW) {
		db_fail(z, "read");
		sqlite3_finalize(range);
		return -1;
	}
	bool none = sqlite3_column_type(range, 0) == SQLITE_NULL;
	*lo = none ? 0 : sqlite3_column_int64(range, 0);
	*hi = none ? -1 : sqlite3_column_int64(range, 1);
	sqlite3_finalize(range);

	snprintf(rest, sizeof(rest), "%s FROM file NOT INDEXED"
		 " WHERE id BETWEEN ?2 AND ?3 AND scan_id = ?1 ORDER BY id", extra);
	select_sql(sql, sizeof(sql), file_columns, NFILE_COLUMNS, rest);
	if (prepare(z, sql, s) < 0)
		return -1;
	sqlite3_bind_int64(*s, 2, *lo);
	sqlite3_bind_int64(*s, 3, *hi);
	return 0;
}

/*
 * Sealing hashes on a second thread.  The main thread steps the rows, makes
 * their lines and inserts the file_seal rows; the hasher adds each batch of
 * lines to the seal and computes their row hashes (a third of the work,
 * measured on a million rows).  Batches of BATCH_ROWS go round a ring of
 * RING slots, in order:
 *
 *     main:    fill slot k ──► submitted = k + 1 ──► once hashed > j: insert slot j
 *     hasher:  wait until submitted > hashed ──► hash slot `hashed` ──► hashed + 1
 *
 * A slot is filled again only after it was inserted, so each side owns a
 * slot while it works on it; the counters, under the lock, hand it over.
 */
#define BATCH_ROWS 128 /* rows a batch: one INSERT of 128 rows costs a quarter of 128
			  one-row INSERTs (1.09 million rows: 0.31 s against 1.24 s) */
#define RING 4         /* batches in flight */

/* One batch of rows. */
struct slot {
	char *text;                                 /* the lines, each with its '\n' */
	size_t len, cap;                            /* bytes used and allocated */
	size_t n;                                   /* rows */
	size_t end[BATCH_ROWS];                     /* offset just past each line's '\n' */
	int64_t id[BATCH_ROWS];                     /* the rows' file ids */
	uint8_t hash[BATCH_ROWS][FIDX_ROW_HASH_LEN]; /* their row hashes (by the hasher) */
};

/* The hasher thread and the ring it shares with the main thread. */
struct hasher {
	struct sealer *z;       /* sha256 and the seal's context (the hasher's alone once started) */
	EVP_MD_CTX *one;        /* the hasher's context for row hashes */
	pthread_t tid;          /* the thread */
	pthread_mutex_t lock;   /* guards submitted, hashed, done, failed */
	pthread_cond_t cond;    /* broadcast whenever one of them changes */
	size_t submitted;       /* batches handed to the hasher */
	size_t hashed;          /* batches it finished */
	bool done;              /* no more batches will come */
	bool failed;            /* a digest call failed */
	struct slot slot[RING]; /* the ring; slot k % RING holds batch k */
};

/* Hashes batch s: its lines into the seal, each line's row hash.  Returns 0, or -1. */
static int hash_batch(struct hasher *h, struct slot *s)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	if (!EVP_DigestUpdate(h->z->all, s->text, s->len))
		return -1;
	for (size_t i = 0, start = 0; i < s->n; start = s->end[i++]) {
		if (!EVP_DigestInit_ex2(h->one, h->z->sha256, NULL) ||
		    !EVP_DigestUpdate(h->one, s->text + start, s->end[i] - 1 - start) ||
		    !EVP_DigestFinal_ex(h->one, md, NULL))
			return -1;
		memcpy(s->hash[i], md, FIDX_ROW_HASH_LEN);
	}
	return 0;
}

/* The hasher thread: hashes batches in order until done. */
static void *hasher_main(void *arg)
{
	struct hasher *h = arg;
	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (h->hashed == h->submitted && !h->done)
			pthread_cond_wait(&h->cond, &h->lock);
		if (h->hashed == h->submitted)
			break;
		struct slot *s = &h->slot[h->hashed % RING];
		pthread_mutex_unlock(&h->lock);
		bool ok = hash_batch(h, s) == 0;
		pthread_mutex_lock(&h->lock);
		h->failed |= !ok;
		h->hashed++;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/* Hands the batch just filled to the hasher. */
static void submit(struct hasher *h)
{
	pthread_mutex_lock(&h->lock);
	h->submitted++;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

/* Waits until batch k is hashed.  Returns false when hashing failed. */
static bool wait_hashed(struct hasher *h, size_t k)
{
	pthread_mutex_lock(&h->lock);
	while (h->hashed <= k)
		pthread_cond_wait(&h->cond, &h->lock);
	bool ok = !h->failed;
	pthread_mutex_unlock(&h->lock);
	return ok;
}

/* Tells the hasher that no batch will come and waits for it to end. */
static void hasher_stop(struct hasher *h)
{
	pthread_mutex_lock(&h->lock);
	h->done = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->tid, NULL);
}

/* Adds the line (z->line) of row id to slot s.  Returns 0, or -1. */
static int slot_add(struct sealer *z, struct slot *s, int64_t id)
{
	if (s->cap - s->len < z->len + 1) {
		size_t cap = s->cap ? s->cap : 64 * 1024;
		while (cap - s->len < z->len + 1)
			cap *= 2;
		char *p = realloc(s->text, cap);
		if (!p)
			return fail(z, "out of memory");
		s->text = p;
		s->cap = cap;
	}
	memcpy(s->text + s->len, z->line, z->len);
	s->len += z->len;
	s->text[s->len++] = '\n';
	s->end[s->n] = s->len;
	s->id[s->n++] = id;
	return 0;
}

/*
 * Inserts the file_seal rows of slot s, with many (BATCH_ROWS rows a
 * statement) when it is full, else one row at a time.  Empties s.
 * Returns 0, or -1.
 */
static int slot_insert(struct sealer *z, struct slot *s, sqlite3_stmt *many, sqlite3_stmt *one)
{
	sqlite3_stmt *st = s->n == BATCH_ROWS ? many : one;
	size_t per = s->n == BATCH_ROWS ? BATCH_ROWS : 1;
	for (size_t done = 0; done < s->n; done += per) {
		for (size_t i = 0; i < per; i++) {
			sqlite3_bind_int64(st, (int)(2 * i + 1), s->id[done + i]);
			sqlite3_bind_blob(st, (int)(2 * i + 2), s->hash[done + i], FIDX_ROW_HASH_LEN,
					  SQLITE_STATIC);
		}
		int rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			return db_fail(z, "seal");
	}
	s->n = s->len = 0;
	return 0;
}

/* Prepares the INSERTs of BATCH_ROWS rows and of one row.  Returns 0, or -1. */
static int prepare_inserts(struct sealer *z, sqlite3_stmt **many, sqlite3_stmt **one)
{
	static const char head[] = "INSERT INTO file_seal (file_id, row_hash) VALUES (?, ?)";
	char sql[sizeof(head) + BATCH_ROWS * 8];
	size_t len = (size_t)snprintf(sql, sizeof(sql), "%s", head);
	for (int i = 1; i < BATCH_ROWS; i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", (?, ?)");
	if (sqlite3_prepare_v2(z->db, sql, -1, many, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(z->db, head, -1, one, NULL) != SQLITE_OK)
		return db_fail(z, "seal");
	return 0;
}

/*
 * Streams the file rows through the hasher and into file_seal.
 * Returns 0 with every batch hashed and inserted, or -1.
 */
static int seal_rows(struct sealer *z, sqlite3_stmt *rows, sqlite3_stmt *many, sqlite3_stmt *one)
{
	struct hasher *h = calloc(1, sizeof(*h));
	size_t filled = 0, inserted = 0;
	int rc, ret = -1;

	if (!h)
		return fail(z, "out of memory");
	h->z = z;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	if (!(h->one = EVP_MD_CTX_new())) {
		fail(z, "cannot set up SHA-256");
		goto free;
	}
	if (pthread_create(&h->tid, NULL, hasher_main, h) != 0) {
		fail(z, "cannot start the hashing thread");
		goto free;
	}
	while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
		struct slot *s = &h->slot[filled % RING];
		if (make_line(z, rows, file_columns, NFILE_COLUMNS) < 0 ||
		    slot_add(z, s, sqlite3_column_int64(rows, 0)) < 0)
			goto stop;
		if (s->n < BATCH_ROWS)
			continue;
		submit(h);
		/* Keep a slot to fill: insert the oldest batch once the ring is full. */
		if (++filled - inserted == RING) {
			if (!wait_hashed(h, inserted))
				goto hash_failed;
			if (slot_insert(z, &h->slot[inserted++ % RING], many, one) < 0)
				goto stop;
		}
	}
	if (rc != SQLITE_DONE) {
		db_fail(z, "read");
		goto stop;
	}
	if (h->slot[filled % RING].n) {
		submit(h);
		filled++;
	}
	for (; inserted < filled; inserted++) {
		if (!wait_hashed(h, inserted))
			goto hash_failed;
		if (slot_insert(z, &h->slot[inserted % RING], many, one) < 0)
			goto stop;
	}
	ret = 0;
	goto stop;
hash_failed:
	fail(z, "cannot compute SHA-256");
stop:
	hasher_stop(h);
free:
	EVP_MD_CTX_free(h->one);
	for (int i = 0; i < RING; i++)
		free(h->slot[i].text);
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->lock);
	free(h);
	return ret;
}

int fidx_seal_write(sqlite3 *db, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN], char *why,
		    size_t whylen)
{
	struct sealer z;
	sqlite3_stmt *scan = NULL, *rows = NULL, *many = NULL, *one = NULL, *set = NULL;
	int64_t lo, hi;
	int ret = -1;

	if (sealer_open(&z, db, scan_id, why, whylen) < 0 ||
	    scan_line(&z, ", status, seal IS NOT NULL", &scan) < 0)
		goto out;
	const char *status = (const char *)sqlite3_column_text(scan, NSCAN_COLUMNS);
	if (!status || strcmp(status, "complete") != 0) {
		fail(&z, "scan %" PRId64 " is not complete: only complete scans are sealed", scan_id);
		goto out;
	}
	if (sqlite3_column_int(scan, NSCAN_COLUMNS + 1)) {
		fail(&z, "scan %" PRId64 " is sealed already", scan_id);
		goto out;
	}
	if (file_rows(&z, "", &rows, &lo, &hi) < 0 || prepare_inserts(&z, &many, &one) < 0 ||
	    seal_rows(&z, rows, many, one) < 0)
		goto out;
	if (!EVP_DigestFinal_ex(z.all, seal, NULL)) {
		fail(&z, "cannot compute SHA-256");
		goto out;
	}
	if (prepare(&z, "UPDATE scan SET seal = ?2 WHERE id = ?1", &set) < 0)
		goto out;
	sqlite3_bind_blob(set, 2, seal, FIDX_SEAL_LEN, SQLITE_STATIC);
	if (sqlite3_step(set) != SQLITE_DONE) {
		db_fail(&z, "seal");
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(scan);
	sqlite3_finalize(rows);
	sqlite3_finalize(many);
	sqlite3_finalize(one);
	sqlite3_finalize(set);
	sealer_close(&z);
	return ret;
}

/*
 * Pass 2 of a check: compares each file row's line with its file_seal row
 * and reports the rows altered or added.  Returns 0, or -1.
 */
static int check_rows(struct sealer *z, fidx_seal_found_fn *found, void *arg,
		      struct fidx_seal_result *r, int64_t *lo, int64_t *hi)
{
	sqlite3_stmt *rows;
	uint8_t hash[FIDX_ROW_HASH_LEN];
	int rc;

	if (file_rows(z, ", (SELECT row_hash FROM file_seal WHERE file_id = file.id)", &rows, lo,
		      hi) < 0)
		return -1;
	while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
		if (make_line(z, rows, file_columns, NFILE_COLUMNS) < 0 || row_hash(z, hash) < 0) {
			sqlite3_finalize(rows);
			return -1;
		}
		struct fidx_seal_finding f = {.file_id = sqlite3_column_int64(rows, 0)};
		const void *recorded = sqlite3_column_blob(rows, NFILE_COLUMNS);
		int n = sqlite3_column_bytes(rows, NFILE_COLUMNS);
		if (!recorded && sqlite3_column_type(rows, NFILE_COLUMNS) == SQLITE_NULL) {
			f.change = FIDX_SEAL_ADDED;
			r->added++;
		} else if (n != FIDX_ROW_HASH_LEN || memcmp(recorded, hash, sizeof(hash)) != 0) {
			f.change = FIDX_SEAL_ALTERED;
			r->altered++;
		} else {
			continue;
		}
		f.path = (const char *)sqlite3_column_text(rows, FILE_PATH_COLUMN);
		found(arg, &f);
	}
	if (rc != SQLITE_DONE)
		db_fail(z, "read");
	sqlite3_finalize(rows);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * Finds the span of ids of the run that wrote the scan's rows [lo, hi]: the
 * scan's range, widened by every scan whose range overlaps it (the other
 * roots of the same run), then to just after the last row of the scans
 * before and just before the first row of the scans after.  Sets *a and *b
 * (exclusive bounds).  One pass over the index of file.  Returns 0, or -1.
 */
static int run_span(struct sealer *z, int64_t lo, int64_t hi, int64_t *a, int64_t *b)
{
	sqlite3_stmt *s;
	struct range { int64_t lo, hi; } *r = NULL;
	size_t n = 0, cap = 0;
	int rc;

	*a = 0;
	*b = INT64_MAX;
	if (hi < lo)
		return 0; /* no row left: every sealed row without its file row may be the scan's */
	if (prepare(z, "SELECT min(id), max(id) FROM file GROUP BY scan_id", &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == cap) {
			struct range *g = realloc(r, (cap = cap ? 2 * cap : 64) * sizeof(*r));
			if (!g) {
				sqlite3_finalize(s);
				free(r);
				return fail(z, "out of memory");
			}
			r = g;
		}
		r[n++] = (struct range){sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1)};
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		free(r);
		return db_fail(z, "read");
	}
	for (bool grew = true; grew;) {
		grew = false;
		for (size_t i = 0; i < n; i++)
			if (r[i].lo <= hi && r[i].hi >= lo && (r[i].lo < lo || r[i].hi > hi)) {
				lo = r[i].lo < lo ? r[i].lo : lo;
				hi = r[i].hi > hi ? r[i].hi : hi;
				grew = true;
			}
	}
	for (size_t i = 0; i < n; i++) {
		if (r[i].hi < lo && r[i].hi > *a)
			*a = r[i].hi;
		if (r[i].lo > hi && r[i].lo < *b)
			*b = r[i].lo;
	}
	free(r);
	return 0;
}

/*
 * Reports the sealed rows whose file row is gone and whose ids lie in the
 * span of the run that wrote the scan (run_span()).  Returns 0, or -1.
 */
static int check_removed(struct sealer *z, fidx_seal_found_fn *found, void *arg,
			 struct fidx_seal_result *r, int64_t lo, int64_t hi)
{
	sqlite3_stmt *s;
	int64_t a, b;
	int rc;

	if (run_span(z, lo, hi, &a, &b) < 0 ||
	    prepare(z, "SELECT file_id FROM file_seal WHERE file_id > ?2 AND file_id < ?3"
		       " AND NOT EXISTS (SELECT 1 FROM file WHERE id = file_seal.file_id)"
		       " ORDER BY file_id", &s) < 0)
		return -1;
	sqlite3_bind_int64(s, 2, a);
	sqlite3_bind_int64(s, 3, b);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct fidx_seal_finding f = {.change = FIDX_SEAL_REMOVED,
					      .file_id = sqlite3_column_int64(s, 0)};
		r->removed++;
		found(arg, &f);
	}
	if (rc != SQLITE_DONE)
		db_fail(z, "read");
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Reports field of the scan row when it says says and its rows say rows. */
static void report_field(fidx_seal_found_fn *found, void *arg, struct fidx_seal_result *r,
			 const char *field, const char *says, const char *rows)
{
	struct fidx_seal_finding f = {.change = FIDX_SEAL_FIELD, .field = field, .says = says,
				      .rows = rows};
	r->fields++;
	found(arg, &f);
}

/*
 * Checks the scan row against its file rows (ids lo to hi, read in id
 * order): entries, files, dirs, bytes and errors are counted again (as fidx
 * scan counts them), root must be the path of one of the rows, status must be
 * 'complete' (only complete scans are sealed).  Reports each field that
 * disagrees.  Returns 0, or -1.
 */
static int check_fields(struct sealer *z, fidx_seal_found_fn *found, void *arg,
			struct fidx_seal_result *r, int64_t lo, int64_t hi)
{
	static const char *const names[] = {"entries", "files", "dirs", "bytes", "errors"};
	sqlite3_stmt *s;
	char says[32], rows[32];

	if (prepare(z, "SELECT s.entries, s.files, s.dirs, s.bytes, s.errors, c.*, s.status,"
		       " s.root FROM scan s, (SELECT count(*),"
		       " count(CASE WHEN type = 'f' THEN 1 END),"
		       " count(CASE WHEN type = 'd' THEN 1 END),"
		       " total(CASE WHEN type = 'f' THEN size END), count(error),"
		       " count(CASE WHEN path = (SELECT root FROM scan WHERE id = ?1) THEN 1 END)"
		       " FROM file NOT INDEXED WHERE id BETWEEN ?2 AND ?3 AND scan_id = ?1) c"
		       " WHERE s.id = ?1", &s) < 0)
		return -1;
	sqlite3_bind_int64(s, 2, lo);
	sqlite3_bind_int64(s, 3, hi);
	if (sqlite3_step(s) != SQLITE_ROW) {
		db_fail(z, "read");
		sqlite3_finalize(s);
		return -1;
	}
	for (int i = 0; i < 5; i++) {
		double counted = sqlite3_column_double(s, 5 + i);
		if (sqlite3_column_type(s, i) == SQLITE_INTEGER &&
		    (double)sqlite3_column_int64(s, i) == counted)
			continue;
		const char *t = (const char *)sqlite3_column_text(s, i);
		snprintf(says, sizeof(says), "%s", t ? t : "NULL");
		snprintf(rows, sizeof(rows), "%.0f", counted);
		report_field(found, arg, r, names[i], says, rows);
	}
	const char *status = (const char *)sqlite3_column_text(s, 11);
	if (!status || strcmp(status, "complete") != 0)
		report_field(found, arg, r, "status", status ? status : "NULL", "complete");
	const char *root = (const char *)sqlite3_column_text(s, 12);
	if (sqlite3_column_int64(s, 10) == 0)
		report_field(found, arg, r, "root", root ? root : "NULL", "no row has this path");
	sqlite3_finalize(s);
	return 0;
}

int fidx_seal_check(sqlite3 *db, int64_t scan_id, fidx_seal_found_fn *found, void *arg,
		    struct fidx_seal_result *r, char *why, size_t whylen)
{
	struct sealer z;
	sqlite3_stmt *scan = NULL, *rows = NULL;
	int64_t lo, hi;
	int rc, ret = -1;

	*r = (struct fidx_seal_result){0};
	if (sealer_open(&z, db, scan_id, why, whylen) < 0 ||
	    scan_line(&z, ", seal, status, pid IS NULL", &scan) < 0)
		goto out;
	const void *seal = sqlite3_column_blob(scan, NSCAN_COLUMNS);
	r->sealed = sqlite3_column_type(scan, NSCAN_COLUMNS) != SQLITE_NULL;
	r->recorded_len = (size_t)sqlite3_column_bytes(scan, NSCAN_COLUMNS);
	if (r->recorded_len > sizeof(r->recorded))
		r->recorded_len = sizeof(r->recorded);
	if (seal)
		memcpy(r->recorded, seal, r->recorded_len);
	const char *status = (const char *)sqlite3_column_text(scan, NSCAN_COLUMNS + 1);
	snprintf(r->status, sizeof(r->status), "%s", status ? status : "");
	r->pre_v3 = sqlite3_column_int(scan, NSCAN_COLUMNS + 2);

	/* Pass 1: the seal. */
	if (file_rows(&z, "", &rows, &lo, &hi) < 0)
		goto out;
	while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
		if (make_line(&z, rows, file_columns, NFILE_COLUMNS) < 0 || seal_line(&z) < 0)
			goto out;
		r->rows++;
	}
	if (rc != SQLITE_DONE) {
		db_fail(&z, "read");
		goto out;
	}
	if (!EVP_DigestFinal_ex(z.all, r->computed, NULL)) {
		fail(&z, "cannot compute SHA-256");
		goto out;
	}
	ret = 0;
	if (!r->sealed || (r->recorded_len == FIDX_SEAL_LEN &&
			   memcmp(r->recorded, r->computed, FIDX_SEAL_LEN) == 0))
		goto out;

	/* Pass 2: the seal differs; name what changed. */
	if (check_rows(&z, found, arg, r, &lo, &hi) < 0 ||
	    check_removed(&z, found, arg, r, lo, hi) < 0 || check_fields(&z, found, arg, r, lo, hi) < 0)
		ret = -1;
out:
	sqlite3_finalize(scan);
	sqlite3_finalize(rows);
	sealer_close(&z);
	return ret;
}
