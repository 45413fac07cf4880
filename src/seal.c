/*
 * seal.c - sealing a scan while it is written, and checking its seal (seal.h).
 *
 * Sealing (struct fidx_sealer): the store hands over each file row right
 * after its INSERT, as the values it bound (and the id SQLite gave it).  The
 * store's thread makes the row's canonical line (make_line()) and puts it
 * into a batch; a hashing thread adds each line to its scan's running
 * SHA-256 and computes the line's row hash; the store's thread then inserts
 * the batch's file_seal rows, in the transaction that holds the rows (the
 * store syncs before each COMMIT, so a rollback drops both):
 *
 *     store thread:  fidx_sealer_row() ──► line ──► slot of the ring ──┐
 *                                                                      ▼
 *     hasher thread:          scan's seal += line; row hash = SHA-256(line)
 *                                                                      │
 *     store thread:  file_seal ◄── INSERT, 128 rows a statement ◄──────┘
 *                    (when the ring is full, and at every sync)
 *
 *     fidx_sealer_seal():  sync, then the scan row's line, last ──► scan.seal
 *
 * The several roots of one run are several scans whose rows interleave: each
 * scan has its own running SHA-256 (struct scan_seal), and a batch mixes
 * them.  A resumed scan, and any scan whose seal was not streamed here (or
 * was forgotten after a rollback), is read back once, in id order, through
 * the same lines and the same batches (fidx_sealer_resume()).
 *
 * Checking (fidx_seal_check(), for `fidx verify`) reads the rows back
 * through the same formatter:
 *
 *     pass 1  the lines, then the scan row's ──► computed seal
 *             (equal to scan.seal: intact, done)
 *     pass 2  each line's hash against its file_seal row: altered, added;
 *             file_seal rows of the scan without their file row: removed;
 *             then the scan row's counts against its rows
 *
 * The file rows of a scan are a range of ids (interleaved only with the
 * other roots of the same run), read as a rowid range, without an index and
 * without a sort.
 */
#include "seal.h"

#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "store_sqlite.h"

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
	{"run_ns", false},
};
#define NSCAN_COLUMNS (sizeof(scan_columns) / sizeof(scan_columns[0]))
#define NSCAN_ALWAYS 20 /* fields every scan line has; those after, only when one is not NULL */

/* A file row's fields, in line order: every column of `file`. */
static const struct seal_column file_columns[FIDX_SEAL_FILE_FIELDS] = {
	{"id", false},       {"scan_id", false},  {"path", true},         {"name", true},
	{"ext", true},       {"type", true},      {"size", false},        {"blocks", false},
	{"mode", false},     {"uid", false},      {"gid", false},         {"nlink", false},
	{"dev", false},      {"ino", false},      {"atime_ns", false},    {"mtime_ns", false},
	{"ctime_ns", false}, {"btime_ns", false}, {"link_target", true},  {"md5", true},
	{"sha1", true},      {"sha256", true},    {"sha512", true},       {"xxh128", true},
	{"error", true},     {"digests_from", false},
	{"atime_sec", false}, {"atime_nsec", false}, {"mtime_sec", false}, {"mtime_nsec", false},
	{"ctime_sec", false}, {"ctime_nsec", false}, {"btime_sec", false}, {"btime_nsec", false},
};
#define NFILE_COLUMNS FIDX_SEAL_FILE_FIELDS
#define NFILE_ALWAYS 26 /* fields every file line has; those after, only when one is not NULL */
#define FIRST_V4_FILE_COLUMN "atime_sec" /* a column that tells schema 4 from earlier */
#define FILE_PATH_COLUMN 2 /* index of "path" in file_columns */

/* What makes lines, for sealing and checking alike. */
struct lines {
	sqlite3 *db;          /* the database read (and written when sealing) */
	int64_t scan_id;      /* the scan at work, for messages */
	sqlite3_stmt *quote;  /* SQLite's own quote() for a value of a kind fidx never writes */
	EVP_MD *sha256;       /* fetched once */
	EVP_MD_CTX *one;      /* one row's hash (checking) */
	char *line;           /* the current line (not NUL-terminated) */
	size_t len, cap;      /* its length and the buffer's size */
	char *why;            /* where a failure is described */
	size_t whylen;        /* its size */
	bool v4;              /* the tables have the columns of schema 4 (else read as NULL) */
};

/* Formats a failure into l->why.  Returns -1. */
__attribute__((format(printf, 2, 3)))
static int fail(struct lines *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->why, l->whylen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Records SQLite's last error on l->db, while doing what.  Returns -1. */
static int db_fail(struct lines *l, const char *what)
{
	return fail(l, "cannot %s scan %" PRId64 ": %s", what, l->scan_id, fidx_sqlite_why(l->db));
}

/* Prepares sql into *s, with l->scan_id bound to ?1.  Returns 0, or -1 with the reason set. */
static int prepare(struct lines *l, const char *sql, sqlite3_stmt **s)
{
	if (sqlite3_prepare_v2(l->db, sql, -1, s, NULL) != SQLITE_OK)
		return db_fail(l, "read");
	sqlite3_bind_int64(*s, 1, l->scan_id);
	return 0;
}

/* Sets l up on db, failures described in why.  Returns 0, or -1 with the reason set. */
static int lines_open(struct lines *l, sqlite3 *db, char *why, size_t whylen)
{
	sqlite3_stmt *s;
	*l = (struct lines){.db = db, .why = why, .whylen = whylen};
	if (fidx_crypto_start() < 0)
		return fail(l, "cannot set up SHA-256: out of memory");
	l->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	l->one = EVP_MD_CTX_new();
	if (!l->sha256 || !l->one)
		return fail(l, "cannot set up SHA-256");
	/* A database of an earlier schema is read as is: its missing columns are NULL. */
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('file') WHERE name = '"
			       FIRST_V4_FILE_COLUMN "'", -1, &s, NULL) != SQLITE_OK)
		return fail(l, "cannot read the schema: %s", fidx_sqlite_why(db));
	int rc = sqlite3_step(s);
	l->v4 = rc == SQLITE_ROW;
	sqlite3_finalize(s);
	/* A failed step (out of memory) is not an older schema: that would seal other lines. */
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail(l, "cannot read the schema: %s", fidx_sqlite_why(db));
	return 0;
}

/* Frees what lines_open() and make_line() made. */
static void lines_close(struct lines *l)
{
	sqlite3_finalize(l->quote);
	EVP_MD_CTX_free(l->one);
	EVP_MD_free(l->sha256);
	free(l->line);
}

/* Grows the line's buffer to hold n more bytes.  Returns 0, or -1 when out of memory. */
static int grow(struct lines *l, size_t n)
{
	size_t cap = l->cap ? l->cap : 1024;
	while (cap - l->len < n)
		cap *= 2;
	char *p = realloc(l->line, cap);
	if (!p)
		return fail(l, "out of memory");
	l->line = p;
	l->cap = cap;
	return 0;
}

/* Makes room for n more bytes in the line.  Returns 0, or -1. */
static inline int reserve(struct lines *l, size_t n)
{
	return l->cap - l->len >= n ? 0 : grow(l, n);
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
static int append_by_sqlite(struct lines *l, sqlite3_value *v, bool bytes)
{
	if (!l->quote && sqlite3_prepare_v2(l->db, "SELECT quote(?1), quote(CAST(?1 AS BLOB))", -1,
					    &l->quote, NULL) != SQLITE_OK)
		return db_fail(l, "read");
	int ret = -1;
	if (sqlite3_bind_value(l->quote, 1, v) != SQLITE_OK || sqlite3_step(l->quote) != SQLITE_ROW) {
		db_fail(l, "read");
	} else {
		const char *t = (const char *)sqlite3_column_text(l->quote, bytes);
		size_t n = (size_t)sqlite3_column_bytes(l->quote, bytes);
		if (!t)
			fail(l, "out of memory");
		else if (reserve(l, n) == 0) {
			memcpy(l->line + l->len, t, n);
			l->len += n;
			ret = 0;
		}
	}
	sqlite3_reset(l->quote);
	return ret;
}

/* Room made before each field: its separator and the longest integer, or NULL. */
#define FIELD_ROOM 24

/*
 * Makes the line of the n values v of columns cols (the hot loop of
 * sealing): the single formatter of lines, whether the values come from a
 * record being written or from a row read back.  The fields from always on
 * (those a later schema added) are written only when one of them is not
 * NULL.  Returns 0, or -1.
 */
static int make_line(struct lines *l, const struct seal_column *cols,
		     const struct fidx_seal_value *v, size_t n, size_t always)
{
	size_t upto = always;
	for (size_t c = always; c < n; c++)
		if (v[c].type != SQLITE_NULL)
			upto = n;
	l->len = 0;
	for (size_t c = 0; c < upto; c++) {
		if (reserve(l, FIELD_ROOM) < 0)
			return -1;
		if (c)
			l->line[l->len++] = '|';
		switch (v[c].type) {
		case SQLITE_NULL:
			memcpy(l->line + l->len, "NULL", 4);
			l->len += 4;
			break;
		case SQLITE_INTEGER:
			l->len = (size_t)(put_int(l->line + l->len, v[c].i) - l->line);
			break;
		case SQLITE_TEXT:
		case SQLITE_BLOB:
			if (reserve(l, 2 * v[c].n + 3) < 0)
				return -1;
			l->len = (size_t)(put_blob(l->line + l->len, v[c].p, v[c].n) - l->line);
			break;
		default:
			if (append_by_sqlite(l, v[c].v, cols[c].bytes) < 0)
				return -1;
		}
	}
	return 0;
}

/*
 * Fills v with the first n columns of the current row of s, which are
 * cols[0..n-1]: one column call per NULL, two per integer, three per text
 * or blob.  A value of a kind fidx never writes in that column gets type 0.
 * The values are valid until s moves.  Returns 0, or -1 when out of memory.
 */
static int row_values(struct lines *l, sqlite3_stmt *s, const struct seal_column *cols,
		      size_t n, struct fidx_seal_value *v)
{
	for (int c = 0; c < (int)n; c++) {
		int type = sqlite3_column_type(s, c);
		v[c].type = type;
		if (type == SQLITE_NULL)
			continue;
		if (type == SQLITE_INTEGER && !cols[c].bytes) {
			v[c].i = sqlite3_column_int64(s, c);
		} else if ((type == SQLITE_TEXT || type == SQLITE_BLOB) && cols[c].bytes) {
			/* A TEXT value's bytes as stored (fidx databases are UTF-8). */
			v[c].p = sqlite3_column_blob(s, c);
			v[c].n = (size_t)sqlite3_column_bytes(s, c);
			if (!v[c].p && v[c].n)
				return fail(l, "out of memory");
		} else {
			v[c].type = 0;
			v[c].v = sqlite3_column_value(s, c);
		}
	}
	return 0;
}

/* Adds the line and its '\n' to the seal ctx.  Returns 0, or -1. */
static int seal_line(struct lines *l, EVP_MD_CTX *ctx)
{
	if (reserve(l, 1) < 0)
		return -1;
	l->line[l->len] = '\n';
	if (!EVP_DigestUpdate(ctx, l->line, l->len + 1))
		return fail(l, "cannot compute SHA-256");
	return 0;
}

/* Computes the row hash of the line (without its '\n').  Returns 0, or -1. */
static int row_hash(struct lines *l, uint8_t out[FIDX_ROW_HASH_LEN])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	if (!EVP_DigestInit_ex2(l->one, l->sha256, NULL) ||
	    !EVP_DigestUpdate(l->one, l->line, l->len) || !EVP_DigestFinal_ex(l->one, md, NULL))
		return fail(l, "cannot compute SHA-256");
	memcpy(out, md, FIDX_ROW_HASH_LEN);
	return 0;
}

/*
 * Writes "SELECT <cols>" followed by rest into buf (large enough for our SQL);
 * without l->v4, the columns from always on are NULL.
 */
static void select_sql(const struct lines *l, char *buf, size_t size,
		       const struct seal_column *cols, size_t n, size_t always, const char *rest)
{
	size_t len = (size_t)snprintf(buf, size, "SELECT");
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s %s", i ? "," : "",
					i < always || l->v4 ? cols[i].name : "NULL");
	if (len < size)
		snprintf(buf + len, size - len, "%s", rest);
}

/*
 * Reads the row of scan l->scan_id, with extra columns after the sealed
 * ones (they start at NSCAN_COLUMNS), into *s, left on the row.  Returns 0,
 * or -1 (also when there is no such scan).
 */
static int scan_row(struct lines *l, const char *extra, sqlite3_stmt **s)
{
	char sql[1024], rest[256];
	snprintf(rest, sizeof(rest), "%s FROM scan WHERE id = ?1", extra);
	select_sql(l, sql, sizeof(sql), scan_columns, NSCAN_COLUMNS, NSCAN_ALWAYS, rest);
	if (prepare(l, sql, s) < 0)
		return -1;
	int rc = sqlite3_step(*s);
	if (rc == SQLITE_DONE)
		return fail(l, "no scan %" PRId64, l->scan_id);
	if (rc != SQLITE_ROW)
		return db_fail(l, "read");
	return 0;
}

/* Adds the line of the scan row s is on (scan_row()) to the seal ctx.  Returns 0, or -1. */
static int seal_scan_line(struct lines *l, sqlite3_stmt *s, EVP_MD_CTX *ctx)
{
	struct fidx_seal_value v[NSCAN_COLUMNS];
	if (row_values(l, s, scan_columns, NSCAN_COLUMNS, v) < 0 ||
	    make_line(l, scan_columns, v, NSCAN_COLUMNS, NSCAN_ALWAYS) < 0)
		return -1;
	return seal_line(l, ctx);
}

/*
 * Prepares the walk over the scan's file rows in id order, with extra
 * columns after the sealed ones (from NFILE_COLUMNS on): a rowid range
 * from the scan's first id to its last, whatever the other scans' rows
 * within.  Sets *lo and *hi to that range (0 and -1 when there is no row).
 * Returns 0, or -1.
 */
static int file_rows(struct lines *l, const char *extra, sqlite3_stmt **s, int64_t *lo,
		     int64_t *hi)
{
	sqlite3_stmt *range;
	char sql[2048], rest[512];

	if (prepare(l, "SELECT min(id), max(id) FROM file WHERE scan_id = ?1", &range) < 0)
		return -1;
	if (sqlite3_step(range) != SQLITE_ROW) {
		db_fail(l, "read");
		sqlite3_finalize(range);
		return -1;
	}
	bool none = sqlite3_column_type(range, 0) == SQLITE_NULL;
	*lo = none ? 0 : sqlite3_column_int64(range, 0);
	*hi = none ? -1 : sqlite3_column_int64(range, 1);
	sqlite3_finalize(range);

	snprintf(rest, sizeof(rest), "%s FROM file NOT INDEXED"
		 " WHERE id BETWEEN ?2 AND ?3 AND scan_id = ?1 ORDER BY id", extra);
	select_sql(l, sql, sizeof(sql), file_columns, NFILE_COLUMNS, NFILE_ALWAYS, rest);
	if (prepare(l, sql, s) < 0)
		return -1;
	sqlite3_bind_int64(*s, 2, *lo);
	sqlite3_bind_int64(*s, 3, *hi);
	return 0;
}

/*
 * The ring between the store's thread and the hasher.  Batches of
 * BATCH_ROWS lines go round RING slots, in order:
 *
 *     store:   fill slot k ──► submitted = k + 1 ──► once hashed > j: insert slot j
 *     hasher:  wait until submitted > hashed ──► hash slot `hashed` ──► hashed + 1
 *
 * A slot is filled again only after it was inserted, so each side owns a
 * slot while it works on it; the counters, under the lock, hand it over.  A
 * scan's running SHA-256 is the hasher's while a batch of it is in flight,
 * and the store's once every batch is hashed (fidx_sealer_sync()).
 */
#define BATCH_ROWS 128 /* rows a batch: one INSERT of 128 rows costs a quarter of 128
			  one-row INSERTs (1.09 million rows: 0.31 s against 1.24 s) */
#define RING 4         /* batches in flight */

/* The running seal of one scan. */
struct scan_seal {
	int64_t scan_id;  /* the scan */
	EVP_MD_CTX *all;  /* SHA-256 of its lines so far */
};

/* One batch of rows. */
struct slot {
	char *text;                                  /* the lines, each with its '\n' */
	size_t len, cap;                             /* bytes used and allocated */
	size_t n;                                    /* rows in the batch */
	size_t end[BATCH_ROWS];                      /* where each row's line ends (after '\n') */
	int64_t id[BATCH_ROWS];                      /* the rows' file ids */
	struct scan_seal *scan[BATCH_ROWS];          /* their scans */
	uint8_t hash[BATCH_ROWS][FIDX_ROW_HASH_LEN]; /* their row hashes (by the hasher) */
};

struct fidx_sealer {
	struct lines l;             /* lines and messages (into msg) */
	char msg[1024];             /* the last failure */
	struct scan_seal **scan;    /* the scans being sealed (each allocated alone: a slot points to it) */
	size_t nscan, capscan;      /* how many, and room */
	size_t last;                /* index of the scan of the last row (a look-up cache) */
	sqlite3_stmt *many, *one;   /* INSERTs of BATCH_ROWS file_seal rows and of one */
	size_t filled;              /* batches submitted (the store's count) */
	size_t inserted;            /* batches inserted */
	struct slot slot[RING];     /* the ring; slot k % RING holds batch k */
	/* The hasher thread. */
	bool started;               /* it runs */
	pthread_t tid;              /* the thread */
	EVP_MD_CTX *hone;           /* its context for row hashes */
	pthread_mutex_t lock;       /* guards submitted, hashed, done, failed */
	pthread_cond_t cond;        /* broadcast whenever one of them changes */
	size_t submitted;           /* batches handed to the hasher */
	size_t hashed;              /* batches it finished */
	bool done;                  /* no more batches will come */
	bool failed;                /* a digest call failed */
};

/* Hashes batch s: each line into its scan's seal, and its row hash.  Returns 0, or -1. */
static int hash_batch(struct fidx_sealer *z, struct slot *s)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	for (size_t i = 0, start = 0; i < s->n; start = s->end[i++]) {
		if (!EVP_DigestUpdate(s->scan[i]->all, s->text + start, s->end[i] - start) ||
		    !EVP_DigestInit_ex2(z->hone, z->l.sha256, NULL) ||
		    !EVP_DigestUpdate(z->hone, s->text + start, s->end[i] - 1 - start) ||
		    !EVP_DigestFinal_ex(z->hone, md, NULL))
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

/* Prepares the INSERTs of BATCH_ROWS file_seal rows and of one.  Returns 0, or -1. */
static int prepare_inserts(struct fidx_sealer *z)
{
	static const char head[] =
		"INSERT INTO file_seal (file_id, scan_id, row_hash) VALUES (?, ?, ?)";
	char sql[sizeof(head) + BATCH_ROWS * 12];
	size_t len = (size_t)snprintf(sql, sizeof(sql), "%s", head);
	for (int i = 1; i < BATCH_ROWS; i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", (?, ?, ?)");
	if (sqlite3_prepare_v3(z->l.db, sql, -1, SQLITE_PREPARE_PERSISTENT, &z->many, NULL) !=
		    SQLITE_OK ||
	    sqlite3_prepare_v3(z->l.db, head, -1, SQLITE_PREPARE_PERSISTENT, &z->one, NULL) !=
		    SQLITE_OK)
		return db_fail(&z->l, "seal");
	return 0;
}

/*
 * Inserts the file_seal rows of the oldest batch not inserted, once hashed,
 * with one statement when it is full, else one row at a time.  Empties its
 * slot.  Returns 0, or -1.
 */
static int insert_batch(struct fidx_sealer *z)
{
	struct slot *s = &z->slot[z->inserted % RING];
	if (!wait_hashed(z, z->inserted))
		return fail(&z->l, "cannot compute SHA-256");
	if (!z->many && prepare_inserts(z) < 0)
		return -1;
	sqlite3_stmt *st = s->n == BATCH_ROWS ? z->many : z->one;
	size_t per = s->n == BATCH_ROWS ? BATCH_ROWS : 1;
	for (size_t done = 0; done < s->n; done += per) {
		for (size_t i = 0; i < per; i++) {
			sqlite3_bind_int64(st, (int)(3 * i + 1), s->id[done + i]);
			sqlite3_bind_int64(st, (int)(3 * i + 2), s->scan[done + i]->scan_id);
			sqlite3_bind_blob(st, (int)(3 * i + 3), s->hash[done + i], FIDX_ROW_HASH_LEN,
					  SQLITE_STATIC);
		}
		int rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE) {
			z->l.scan_id = s->scan[done]->scan_id;
			return db_fail(&z->l, "seal");
		}
	}
	s->n = s->len = 0;
	z->inserted++;
	return 0;
}

/* Adds the line made (z->l.line) of row id of scan c to the ring.  Returns 0, or -1. */
static int add_line(struct fidx_sealer *z, struct scan_seal *c, int64_t id)
{
	struct slot *s = &z->slot[z->filled % RING];
	size_t need = z->l.len + 1;
	if (s->cap - s->len < need) {
		size_t cap = s->cap ? s->cap : 64 * 1024;
		while (cap - s->len < need)
			cap *= 2;
		char *p = realloc(s->text, cap);
		if (!p)
			return fail(&z->l, "out of memory");
		s->text = p;
		s->cap = cap;
	}
	memcpy(s->text + s->len, z->l.line, z->l.len);
	s->len += z->l.len;
	s->text[s->len++] = '\n';
	s->end[s->n] = s->len;
	s->id[s->n] = id;
	s->scan[s->n++] = c;
	if (s->n < BATCH_ROWS)
		return 0;
	submit(z);
	/* Keep a slot to fill: insert the oldest batch once the ring is full. */
	return z->filled - z->inserted == RING ? insert_batch(z) : 0;
}

int fidx_sealer_sync(struct fidx_sealer *z)
{
	if (z->slot[z->filled % RING].n)
		submit(z);
	while (z->inserted < z->filled)
		if (insert_batch(z) < 0)
			return -1;
	return 0;
}

struct fidx_sealer *fidx_sealer_new(sqlite3 *db, char *why, size_t whylen)
{
	struct fidx_sealer *z = calloc(1, sizeof(*z));
	if (!z) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	if (lines_open(&z->l, db, z->msg, sizeof(z->msg)) < 0 || !(z->hone = EVP_MD_CTX_new())) {
		snprintf(why, whylen, "%s", z->msg[0] ? z->msg : "out of memory");
		lines_close(&z->l);
		free(z);
		return NULL;
	}
	pthread_mutex_init(&z->lock, NULL);
	pthread_cond_init(&z->cond, NULL);
	return z;
}

/* Returns the seal of scan scan_id being computed, or NULL. */
static struct scan_seal *find_scan(struct fidx_sealer *z, int64_t scan_id)
{
	if (z->last < z->nscan && z->scan[z->last]->scan_id == scan_id)
		return z->scan[z->last];
	for (size_t i = 0; i < z->nscan; i++)
		if (z->scan[i]->scan_id == scan_id)
			return z->scan[z->last = i];
	return NULL;
}

/* Drops the seal of scan i (no batch of it in flight). */
static void drop_scan(struct fidx_sealer *z, size_t i)
{
	EVP_MD_CTX_free(z->scan[i]->all);
	free(z->scan[i]);
	z->scan[i] = z->scan[--z->nscan];
}

int fidx_sealer_begin(struct fidx_sealer *z, int64_t scan_id)
{
	struct scan_seal *c;

	z->l.scan_id = scan_id;
	if (find_scan(z, scan_id))
		return fail(&z->l, "scan %" PRId64 " is being sealed already", scan_id);
	if (!z->started) {
		if (pthread_create(&z->tid, NULL, hasher_main, z) != 0)
			return fail(&z->l, "cannot start the hashing thread");
		z->started = true;
	}
	if (z->nscan == z->capscan) {
		size_t cap = z->capscan ? 2 * z->capscan : 4;
		struct scan_seal **p = realloc(z->scan, cap * sizeof(*p));
		if (!p)
			return fail(&z->l, "out of memory");
		z->scan = p;
		z->capscan = cap;
	}
	if (!(c = calloc(1, sizeof(*c))) || !(c->all = EVP_MD_CTX_new()) ||
	    !EVP_DigestInit_ex2(c->all, z->l.sha256, NULL)) {
		if (c)
			EVP_MD_CTX_free(c->all);
		free(c);
		return fail(&z->l, "cannot set up SHA-256");
	}
	c->scan_id = scan_id;
	z->scan[z->nscan++] = c;
	return 0;
}

/* Makes the line of file row v and adds it to scan c's seal.  Returns 0, or -1. */
static int add_row(struct fidx_sealer *z, struct scan_seal *c, const struct fidx_seal_value *v)
{
	if (make_line(&z->l, file_columns, v, NFILE_COLUMNS, NFILE_ALWAYS) < 0)
		return -1;
	return add_line(z, c, v[0].i);
}

int fidx_sealer_row(struct fidx_sealer *z, int64_t scan_id,
		    const struct fidx_seal_value v[FIDX_SEAL_FILE_FIELDS])
{
	struct scan_seal *c = find_scan(z, scan_id);
	return c ? add_row(z, c, v) : 0;
}

/*
 * The seal of a resumed scan, or of one not streamed here: deletes its
 * file_seal rows, then reads its rows back in id order into a new seal and
 * new file_seal rows.
 */
int fidx_sealer_resume(struct fidx_sealer *z, int64_t scan_id)
{
	sqlite3_stmt *s = NULL;
	struct fidx_seal_value v[NFILE_COLUMNS];
	int64_t lo, hi;
	int rc;

	if (fidx_sealer_sync(z) < 0)
		return -1;
	struct scan_seal *c = find_scan(z, scan_id);
	if (c)
		drop_scan(z, z->last);
	if (fidx_sealer_begin(z, scan_id) < 0 || !(c = find_scan(z, scan_id)))
		return -1;
	if (prepare(&z->l, "DELETE FROM file_seal WHERE scan_id = ?1", &s) < 0)
		return -1;
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_fail(&z->l, "seal");
	if (file_rows(&z->l, "", &s, &lo, &hi) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (row_values(&z->l, s, file_columns, NFILE_COLUMNS, v) < 0 || add_row(z, c, v) < 0)
			break;
	sqlite3_finalize(s);
	if (rc == SQLITE_ROW)
		return -1;
	if (rc != SQLITE_DONE)
		return db_fail(&z->l, "read");
	return fidx_sealer_sync(z);
}

void fidx_sealer_forget(struct fidx_sealer *z)
{
	if (z->filled > z->inserted)
		wait_hashed(z, z->filled - 1);
	for (int i = 0; i < RING; i++)
		z->slot[i].n = z->slot[i].len = 0;
	z->inserted = z->filled;
	pthread_mutex_lock(&z->lock);
	z->failed = false;
	pthread_mutex_unlock(&z->lock);
	while (z->nscan)
		drop_scan(z, 0);
}

int fidx_sealer_seal(struct fidx_sealer *z, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN])
{
	sqlite3_stmt *scan = NULL, *set = NULL;
	int ret = -1;

	z->l.scan_id = scan_id;
	if (scan_row(&z->l, ", status, seal IS NOT NULL", &scan) < 0)
		goto out;
	const char *status = (const char *)sqlite3_column_text(scan, NSCAN_COLUMNS);
	if (!status || strcmp(status, "complete") != 0) {
		fail(&z->l, "scan %" PRId64 " is not complete: only complete scans are sealed",
		     scan_id);
		goto out;
	}
	if (sqlite3_column_int(scan, NSCAN_COLUMNS + 1)) {
		fail(&z->l, "scan %" PRId64 " is sealed already", scan_id);
		goto out;
	}
	if (!find_scan(z, scan_id) && fidx_sealer_resume(z, scan_id) < 0)
		goto out;
	if (fidx_sealer_sync(z) < 0)
		goto out;
	struct scan_seal *c = find_scan(z, scan_id);
	z->l.scan_id = scan_id;
	if (seal_scan_line(&z->l, scan, c->all) < 0)
		goto out;
	if (!EVP_DigestFinal_ex(c->all, seal, NULL)) {
		fail(&z->l, "cannot compute SHA-256");
		goto out;
	}
	drop_scan(z, z->last);
	if (prepare(&z->l, "UPDATE scan SET seal = ?2 WHERE id = ?1", &set) < 0)
		goto out;
	sqlite3_bind_blob(set, 2, seal, FIDX_SEAL_LEN, SQLITE_STATIC);
	if (sqlite3_step(set) != SQLITE_DONE) {
		db_fail(&z->l, "seal");
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(scan);
	sqlite3_finalize(set);
	return ret;
}

const char *fidx_sealer_errmsg(const struct fidx_sealer *z)
{
	return z->msg;
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
	for (int i = 0; i < RING; i++)
		free(z->slot[i].text);
	sqlite3_finalize(z->many);
	sqlite3_finalize(z->one);
	EVP_MD_CTX_free(z->hone);
	pthread_cond_destroy(&z->cond);
	pthread_mutex_destroy(&z->lock);
	lines_close(&z->l);
	free(z);
}

/*
 * Pass 2 of a check: compares each file row's line with its file_seal row
 * (the one of the same scan) and reports the rows altered or added.
 * Returns 0, or -1.
 */
static int check_rows(struct lines *l, fidx_seal_found_fn *found, void *arg,
		      struct fidx_seal_result *r, int64_t *lo, int64_t *hi)
{
	sqlite3_stmt *rows;
	struct fidx_seal_value v[NFILE_COLUMNS];
	uint8_t hash[FIDX_ROW_HASH_LEN];
	int rc;

	if (file_rows(l, ", (SELECT row_hash FROM file_seal WHERE file_id = file.id"
		      " AND scan_id = file.scan_id)", &rows, lo, hi) < 0)
		return -1;
	while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
		if (row_values(l, rows, file_columns, NFILE_COLUMNS, v) < 0 ||
		    make_line(l, file_columns, v, NFILE_COLUMNS, NFILE_ALWAYS) < 0 ||
		    row_hash(l, hash) < 0) {
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
		db_fail(l, "read");
	sqlite3_finalize(rows);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * Reports the sealed rows of the scan (file_seal rows with its scan_id)
 * whose file row is gone or now belongs to another scan.  Returns 0, or -1.
 */
static int check_removed(struct lines *l, fidx_seal_found_fn *found, void *arg,
			 struct fidx_seal_result *r)
{
	sqlite3_stmt *s;
	int rc;

	if (prepare(l, "SELECT file_id FROM file_seal WHERE scan_id = ?1 AND NOT EXISTS"
		       " (SELECT 1 FROM file WHERE id = file_seal.file_id AND scan_id = ?1)"
		       " ORDER BY file_id", &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct fidx_seal_finding f = {.change = FIDX_SEAL_REMOVED,
					      .file_id = sqlite3_column_int64(s, 0)};
		r->removed++;
		found(arg, &f);
	}
	if (rc != SQLITE_DONE)
		db_fail(l, "read");
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
static int check_fields(struct lines *l, fidx_seal_found_fn *found, void *arg,
			struct fidx_seal_result *r, int64_t lo, int64_t hi)
{
	static const char *const names[] = {"entries", "files", "dirs", "bytes", "errors"};
	sqlite3_stmt *s;
	char says[32], rows[32];

	if (prepare(l, "SELECT s.entries, s.files, s.dirs, s.bytes, s.errors, c.*, s.status,"
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
		db_fail(l, "read");
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
	struct lines l;
	struct fidx_seal_value v[NFILE_COLUMNS];
	sqlite3_stmt *scan = NULL, *rows = NULL;
	EVP_MD_CTX *all = NULL;
	int64_t lo, hi;
	int rc, ret = -1;

	*r = (struct fidx_seal_result){0};
	if (lines_open(&l, db, why, whylen) < 0)
		goto out;
	l.scan_id = scan_id;
	if (!(all = EVP_MD_CTX_new()) || !EVP_DigestInit_ex2(all, l.sha256, NULL)) {
		fail(&l, "cannot set up SHA-256");
		goto out;
	}
	if (scan_row(&l, ", seal, status, pid IS NULL", &scan) < 0)
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

	/* Pass 1: the seal, the scan row's line last. */
	if (file_rows(&l, "", &rows, &lo, &hi) < 0)
		goto out;
	while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
		if (row_values(&l, rows, file_columns, NFILE_COLUMNS, v) < 0 ||
		    make_line(&l, file_columns, v, NFILE_COLUMNS, NFILE_ALWAYS) < 0 ||
		    seal_line(&l, all) < 0)
			goto out;
		r->rows++;
	}
	if (rc != SQLITE_DONE) {
		db_fail(&l, "read");
		goto out;
	}
	if (seal_scan_line(&l, scan, all) < 0)
		goto out;
	if (!EVP_DigestFinal_ex(all, r->computed, NULL)) {
		fail(&l, "cannot compute SHA-256");
		goto out;
	}
	ret = 0;
	if (!r->sealed || (r->recorded_len == FIDX_SEAL_LEN &&
			   memcmp(r->recorded, r->computed, FIDX_SEAL_LEN) == 0))
		goto out;

	/* Pass 2: the seal differs; name what changed. */
	if (check_rows(&l, found, arg, r, &lo, &hi) < 0 || check_removed(&l, found, arg, r) < 0 ||
	    check_fields(&l, found, arg, r, lo, hi) < 0)
		ret = -1;
out:
	sqlite3_finalize(scan);
	sqlite3_finalize(rows);
	EVP_MD_CTX_free(all);
	lines_close(&l);
	return ret;
}
