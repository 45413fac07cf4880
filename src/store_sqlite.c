/*
 * store_sqlite.c - the SQLite backend of the store (store.h).
 *
 * The database layout is the public contract of docs/SCHEMA.md: a flat
 * `file` table (one row per entry, the path stored whole), a `scan` table,
 * and the views `file_view` and `data` (their SQL: schema.c).  A flat table
 * was measured against a normalised one (directory table + names) and kept:
 * see docs/BENCHMARKS.md.
 *
 * Opening a database, without ever changing a file that is refused:
 *
 *     path ──► probe_header()        plain read() of the first 100 bytes:
 *              │                      missing or 0 bytes: new; otherwise the
 *              │                      SQLite magic and our application_id are
 *              │                      required, and a version <= 1
 *              ▼
 *              sqlite3_open_v2()      checkpoint-on-close off, so closing a
 *              │                      refused file writes nothing back;
 *              │                      hardened (store_sqlite.h)
 *              read_schema_state()    (the header may be stale under WAL:
 *              │                      the pragmas are what counts)
 *              refuse_foreign()       a schema object fidx did not create
 *              │                      (fidx_sqlite_foreign()): refused
 *              ▼  new?  BEGIN IMMEDIATE, look again, create schema, COMMIT
 *              WAL, synchronous=NORMAL, cache_size, prepared insert
 *
 * A new file gets its application_id, user_version and tables in one
 * rollback-journal transaction before it is switched to WAL, so its main
 * file always carries the header the probe checks.
 *
 * Writing: rows go through one prepared INSERT, bound from the record's
 * values (record_values(); SQLITE_STATIC: the record outlives the step).
 * The same values, with the id SQLite gave the row, go to the sealer
 * (seal.h), which makes the row's seal line and queues its file_seal row:
 *
 *     record ──► values ──► INSERT INTO file ──► id ──► sealer: line, hashes
 *                                                         │ (a thread of its own)
 *     COMMIT ◄── file_seal rows inserted (fidx_sealer_sync) ◄┘
 *
 * so a scan's seal is ready when it ends (fidx_store_end_scan() adds the
 * scan row's line and writes the seal in the transaction that marks the
 * scan complete: a complete scan is never unsealed), and a rolled-back
 * batch takes its file_seal rows with it (the sealer forgets, and reads the
 * rows back when it seals).
 * A transaction is
 * opened (BEGIN IMMEDIATE) at the first row and committed after batch_rows
 * rows, by fidx_store_flush(), or before any scan row change.  On a failed
 * statement or commit the open transaction is rolled back (SQLite may already
 * have done so, e.g. on SQLITE_FULL), so a failure loses at most the rows of
 * the current batch and never touches committed rows or earlier scans.
 * The secondary index file(scan_id, path) is left to
 * fidx_store_build_indexes(), after the bulk load.
 *
 * The connection is opened with SQLITE_OPEN_NOMUTEX: the store is used by one
 * thread at a time (the writer), so SQLite's per-call mutex is not needed.
 *
 * Checkpoints: a query may be reading the main file as immutable, under
 * fidx's reader lock (dbfile.h).  So the store checkpoints itself instead of
 * SQLite's automatic checkpoint (checkpoint_unless_read(): at the same 1000
 * pages, only when no reader holds the lock), and closes without a
 * checkpoint while one holds it: the WAL is then left beside the file, for
 * the next writer to fold back, and read through by the queries meanwhile.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dbfile.h"
#include "dbtime.h"
#include "diag.h"
#include "pathindex.h"
#include "schema.h"
#include "seal.h"
#include "sysinfo.h"
#include "store_sqlite.h"

/*
 * Defaults, from the measurement in docs/BENCHMARKS.md ("Store"): no batch
 * size from 1000 to 50000 was measurably faster than another, and 10000
 * bounds what a killed scan loses; a 32 MiB page cache was the fastest
 * (10 to 20% more rows per second than SQLite's 2 MB default).
 */
#define DEFAULT_BATCH_ROWS 10000
#define DEFAULT_CACHE_KIB 32768

/* Wait this long for another connection's lock before failing. */
#define BUSY_TIMEOUT_MS 10000

/* Checkpoint once the WAL holds this many pages: SQLite's automatic default. */
#define CHECKPOINT_PAGES 1000


const char *fidx_sqlite_why(sqlite3 *db)
{
	if (!db)
		return "out of memory";
	int code = sqlite3_errcode(db) & 0xff, sys = sqlite3_system_errno(db);
	if (code == SQLITE_FULL)
		return strerror(ENOSPC);
	if ((code == SQLITE_CANTOPEN || code == SQLITE_IOERR) && sys)
		return strerror(sys);
	return sqlite3_errmsg(db);
}

int fidx_sqlite_harden(sqlite3 *db, bool read_only)
{
	int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	if (rc == SQLITE_OK && read_only)
		rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
	return rc == SQLITE_OK ? 0 : -1;
}

/*
 * Column i of s as text; NULL for a NULL value, and NULL with *oom set when a
 * value could not be converted (out of memory).
 */
static const char *column_text(sqlite3_stmt *s, int i, bool *oom)
{
	const char *t = (const char *)sqlite3_column_text(s, i);
	if (!t && sqlite3_column_type(s, i) != SQLITE_NULL)
		*oom = true;
	return t;
}

/* Whether text begins with prefix, ignoring ASCII case. */
static bool starts_with(const char *text, const char *prefix)
{
	return text && sqlite3_strnicmp(text, prefix, (int)strlen(prefix)) == 0;
}

/* Appends "<kind> '<name>'<how>" to the list of fidx_sqlite_foreign(), cut with "...". */
static void list_object(char *list, size_t size, size_t *len, const char *kind,
			const char *name, const char *how)
{
	if (*len + 4 >= size)
		return;
	int n = snprintf(list + *len, size - *len, "%s%s '%s'%s", *len ? ", " : "", kind,
			 fidx_quote(name), how);
	if (n < 0 || (size_t)n >= size - *len) {
		snprintf(list + size - 4, 4, "...");
		*len = size;
	} else {
		*len += (size_t)n;
	}
}

/* The object named name (ignoring ASCII case, as SQLite does) of fidx's schema version. */
static const struct fidx_schema_object *expected_object(int version, const char *name)
{
	const struct fidx_schema_version *v = &fidx_schema_versions[version - 1];
	for (size_t i = 0; i < v->count; i++)
		if (sqlite3_stricmp(v->objects[i].name, name) == 0)
			return &v->objects[i];
	return NULL;
}

/*
 * Whether the object (type, name, tbl_name, sql) of db's schema is want, the
 * one fidx makes under that name (NULL: none).  Sets *how to " changed" when
 * an object of fidx's kind and name differs, "" when the name is not fidx's.
 * Returns 1 ours, 0 not, -1 when out of memory.
 */
static int is_ours(sqlite3 *db, const struct fidx_schema_object *want, const char *type,
		   const char *name, const char *tbl, const char *sql, const char **how)
{
	*how = "";
	if (!want || strcmp(want->type, type) != 0 || strcmp(type, "trigger") == 0)
		return 0;
	*how = " changed";
	if (sqlite3_stricmp(tbl ? tbl : "", want->tbl_name ? want->tbl_name : "") != 0)
		return 0;
	if (strcmp(type, "table") != 0)
		return sql && want->sql && strcmp(sql, want->sql) == 0;
	/* A virtual table is never ours; its columns would run its module. */
	if (starts_with(sql, "CREATE VIRTUAL"))
		return 0;
	if (sql && want->sql && strcmp(sql, want->sql) == 0)
		return 1;  /* the same text: the same table (most databases) */
	/* Another text (another SQLite's ALTER TABLE, say): the same columns? */
	char *got = fidx_schema_table_columns(db, name);
	if (!got)
		return -1;
	int ours = want->columns && strcmp(got, want->columns) == 0;
	free(got);
	return ours;
}

int fidx_sqlite_foreign(sqlite3 *db, int version, char *list, size_t size)
{
	sqlite3_stmt *objects = NULL;
	size_t len = 0;
	int count = 0, rc;

	list[0] = '\0';
	if (version < 1 || version > FIDX_SCHEMA_VERSION) {
		snprintf(list, size, "unknown schema version");
		return -1;
	}
	if (sqlite3_prepare_v2(db, "SELECT type, name, tbl_name, sql FROM main.sqlite_master"
			       " WHERE name NOT LIKE 'sqlite\\_stat%' ESCAPE '\\'"
			       " AND name <> 'sqlite_sequence' ORDER BY type, name",
			       -1, &objects, NULL) != SQLITE_OK) {
		snprintf(list, size, "%s", fidx_sqlite_why(db));
		return -1;
	}
	while ((rc = sqlite3_step(objects)) == SQLITE_ROW) {
		bool oom = false;
		const char *type = column_text(objects, 0, &oom);
		const char *name = column_text(objects, 1, &oom);
		const char *tbl = column_text(objects, 2, &oom);
		const char *sql = column_text(objects, 3, &oom);
		const char *how;
		if (oom) {
			snprintf(list, size, "out of memory");
			count = -1;
			break;
		}
		if (!type || !name)
			continue;
		int ours = is_ours(db, expected_object(version, name), type, name, tbl, sql, &how);
		if (ours < 0) {
			snprintf(list, size, "out of memory");
			count = -1;
			break;
		}
		if (!ours) {
			list_object(list, size, &len, type, name, how);
			count++;
		}
	}
	if (count >= 0 && rc != SQLITE_DONE) {
		snprintf(list, size, "%s", fidx_sqlite_why(db));
		count = -1;
	}
	sqlite3_finalize(objects);
	return count;
}

/*
 * Parameters of insert_sql, in order (1-based, as SQLite numbers them): the
 * columns of `file` after id, so that parameter i is field i of the row's
 * seal line (seal.h, struct fidx_seal_value).
 */
enum {
	P_SCAN_ID = 1, P_PATH, P_NAME, P_EXT, P_TYPE,
	P_SIZE, P_BLOCKS, P_MODE, P_UID, P_GID, P_NLINK, P_DEV, P_INO,
	P_ATIME, P_MTIME, P_CTIME, P_BTIME,
	P_LINK, P_DIGEST0, P_ERROR = P_DIGEST0 + FIDX_NDIGESTS, P_DIGESTS_FROM,
	P_TIME_EXT, /* atime_sec, atime_nsec, ... btime_nsec (dbtime.h) */
	P_LAST = P_TIME_EXT + FIDX_TIME_EXT_COLUMNS - 1,
};

_Static_assert(P_LAST + 1 == FIDX_SEAL_FILE_FIELDS, "a seal field per column of file");

static const char insert_sql[] =
	"INSERT INTO file (scan_id, path, name, ext, type,"
	" size, blocks, mode, uid, gid, nlink, dev, ino,"
	" atime_ns, mtime_ns, ctime_ns, btime_ns,"
	" link_target, md5, sha1, sha256, sha512, xxh128, error, digests_from, "
	FIDX_TIME_EXT_NAMES ")"
	" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
	" ?, ?, ?, ?, ?, ?, ?, ?)";

/* A scan this store is writing (begun or resumed, not yet ended). */
struct store_scan {
	int64_t id;            /* scan.id */
	int64_t ran_before_ns; /* run_ns of its earlier runs (a resumed scan) */
	int64_t started_mono;  /* this run's start, fidx_monotonic_ns() */
	int64_t tmin, tmax;    /* the span of seconds of the times `data` shows
				  (mtime, btime, the start): local_time covers it */
};

struct fidx_store {
	sqlite3 *db;           /* the connection; NULL until opened */
	sqlite3_stmt *insert;  /* insert_sql, prepared once */
	sqlite3_stmt *run;     /* UPDATE of scan.run_ns, prepared when first used */
	struct store_scan *scans; /* the scans being written */
	size_t nscans, capscans;  /* how many, and room */
	size_t last_scan;      /* index of the scan of the last row added (a cache) */
	char *path;            /* database path as given, for messages */
	unsigned batch_rows;   /* rows per transaction */
	unsigned pending;      /* rows added in the open transaction */
	bool in_txn;           /* a batch transaction is open */
	bool scratch;          /* fidx_store_scratch(): not synced, no secondary index, no seal */
	bool accepted;         /* the schema is fidx's: closing may checkpoint */
	bool was_at_rest;      /* no -wal, -shm or -journal before it was opened */
	int lock_fd;           /* the database file, to test the reader lock (dbfile.h); -1: none */
	struct fidx_sealer *sealer; /* the seals of the scans written (seal.h); NULL when scratch */
	int ballast;           /* room kept for the end of a scan on a full disk, or -1 */
	char msg[8192];        /* the last failure, one line */
};

/* What read_schema_state() found. */
enum schema_state {
	SCHEMA_NEW,  /* an empty database: no application_id, version or objects */
	SCHEMA_OLD,  /* a fidx database of an earlier version: to migrate */
	SCHEMA_OURS, /* a fidx database of FIDX_SCHEMA_VERSION */
};

/* Formats the last failure into st->msg.  Returns -1. */
__attribute__((format(printf, 2, 3)))
static int set_error(struct fidx_store *st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->msg, sizeof(st->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * Records why the files SQLite needs for the database cannot be had, as the
 * OS says it (fidx_dbfile_why()).  Returns -1 with the message set, or 0 when
 * each is to be had (the cause is elsewhere).
 */
static int files_error(struct fidx_store *st)
{
	/* Header bytes 18-19: 2 in WAL mode.  Read through the store's own descriptor. */
	unsigned char mode[2] = {0};
	bool wal = st->lock_fd >= 0 && pread(st->lock_fd, mode, 2, 18) == 2 && mode[0] == 2;
	return fidx_dbfile_why(st->path, true, wal, st->msg, sizeof(st->msg));
}

/*
 * Records "cannot <verb> database 'path': <why>" for SQLite's last failure:
 * when a file could not be opened or written, the OS's reason for the file
 * at fault (files_error()); a full disk as the OS says it; otherwise
 * SQLite's message (the errno text when it could not open a file).
 * Returns -1.
 */
static int sqlite_error(struct fidx_store *st, const char *verb)
{
	int code = sqlite3_errcode(st->db) & 0xff;
	if ((code == SQLITE_CANTOPEN || code == SQLITE_READONLY || code == SQLITE_PERM ||
	     code == SQLITE_AUTH) && files_error(st) < 0)
		return -1;
	return set_error(st, "cannot %s database '%s': %s", verb, fidx_quote(st->path),
			 fidx_sqlite_why(st->db));
}

/* Records "cannot seal database 'path': <the sealer's reason>".  Returns -1. */
static int seal_error(struct fidx_store *st)
{
	return set_error(st, "cannot seal database '%s': %s", fidx_quote(st->path),
			 fidx_sealer_errmsg(st->sealer));
}

/* Records that the file is someone else's.  Returns -1. */
static int not_ours(struct fidx_store *st)
{
	return set_error(st, "'%s' is not a fidx database", fidx_quote(st->path));
}

/* Records that the schema version is not ours.  Returns -1. */
static int wrong_version(struct fidx_store *st, long long version)
{
	return set_error(st, "database '%s' has schema version %lld; this fidx knows %d",
			 fidx_quote(st->path), version, FIDX_SCHEMA_VERSION);
}

/*
 * Looks at the file's first bytes without SQLite (dbfile.h), so that nothing
 * of a foreign file is ever opened by it.  Returns 0 when the file is
 * missing, empty, or a fidx database of a version we may open; -1 with the
 * message set otherwise.
 */
static int probe_header(struct fidx_store *st)
{
	uint32_t version = 0;
	switch (fidx_dbfile_probe(st->path, &version)) {
	case FIDX_DBFILE_MISSING:
	case FIDX_DBFILE_EMPTY:
		return 0;
	case FIDX_DBFILE_FIDX:
		return version > FIDX_SCHEMA_VERSION ? wrong_version(st, version) : 0;
	case FIDX_DBFILE_SQLITE:
	case FIDX_DBFILE_OTHER:
		return not_ours(st);
	default:
		return set_error(st, "cannot open database '%s': %s", fidx_quote(st->path),
				 strerror(errno));
	}
}

/*
 * Refuses a database whose schema (of the given version) holds objects fidx
 * did not create: a trigger would run inside the scan's transactions, a view
 * or a table of the same name would take our rows.  Returns 0 when the schema
 * is fidx's, -1 with the message set otherwise.
 */
static int refuse_foreign(struct fidx_store *st, long long version)
{
	char list[1024];
	int n = fidx_sqlite_foreign(st->db, (int)version, list, sizeof(list));
	if (n < 0)
		return set_error(st, "cannot read database '%s': %s", fidx_quote(st->path), list);
	if (n > 0)
		return set_error(st, "database '%s' holds schema objects fidx did not create (%s);"
				 " refusing to write to it", fidx_quote(st->path), list);
	return 0;
}

/*
 * Reads application_id, user_version and the number of schema objects
 * through SQLite (which sees committed WAL content the header may not have).
 * Returns 0 with *state set, or -1 with the message set when the database is
 * not a fidx one, has another version, or cannot be read.
 */
static int read_schema_state(struct fidx_store *st, enum schema_state *state,
			     long long *version_out)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(st->db,
				    "SELECT (SELECT application_id FROM pragma_application_id),"
				    " (SELECT user_version FROM pragma_user_version),"
				    " (SELECT count(*) FROM sqlite_master)",
				    -1, &s, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		int code = sqlite3_errcode(st->db) & 0xff;
		sqlite3_finalize(s);
		return code == SQLITE_NOTADB ? not_ours(st) : sqlite_error(st, "read");
	}
	long long app = sqlite3_column_int64(s, 0);
	long long version = sqlite3_column_int64(s, 1);
	long long objects = sqlite3_column_int64(s, 2);
	sqlite3_finalize(s);

	*version_out = version;
	if (app == 0 && version == 0 && objects == 0) {
		*state = SCHEMA_NEW;
		return 0;
	}
	if (app != FIDX_APPLICATION_ID)
		return not_ours(st);
	if (version < 1 || version > FIDX_SCHEMA_VERSION)
		return wrong_version(st, version);
	*state = version < FIDX_SCHEMA_VERSION ? SCHEMA_OLD : SCHEMA_OURS;
	return 0;
}

/* Runs SQL without results.  Returns 0, or -1 with "cannot <verb> ..." set. */
static int exec(struct fidx_store *st, const char *sql, const char *verb)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return sqlite_error(st, verb);
	return 0;
}

/*
 * Rolls back the open transaction, if SQLite has not already done so, and
 * makes the sealer forget the rows it held (a seal then reads them back).
 */
static void rollback(struct fidx_store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	st->in_txn = false;
	st->pending = 0;
	if (st->sealer)
		fidx_sealer_forget(st->sealer);
}

/*
 * Room kept on the database's file system for the end of a scan.  When the
 * disk fills, a failing scan still has to write the end of its row
 * ('failed', its counts), a few pages of WAL; without room the row would be
 * left 'running', as if the scan still ran.  An unnamed file (O_TMPFILE: no
 * name in the folder, nothing left behind, the folder's times unchanged) of
 * BALLAST_BYTES is allocated beside the database, and given back to the file
 * system before that write is tried again.
 */
#define BALLAST_BYTES (2 << 20)

/* Allocates the ballast beside the database, when the file system can (else none). */
static void ballast_take(struct fidx_store *st)
{
	char *dir = strdup(st->path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	const char *folder = !dir ? NULL : !slash ? "." : slash == dir ? "/" : (*slash = '\0', dir);
	st->ballast = folder ? open(folder, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1;
	if (st->ballast >= 0 && posix_fallocate(st->ballast, 0, BALLAST_BYTES) != 0) {
		close(st->ballast);
		st->ballast = -1;
	}
	free(dir);
}

/* Gives the ballast back to the file system.  Returns whether there was one. */
static bool ballast_release(struct fidx_store *st)
{
	if (st->ballast < 0)
		return false;
	close(st->ballast);
	st->ballast = -1;
	return true;
}

/*
 * Starts following scan id, begun or resumed by this store, whose earlier
 * runs took ran_before_ns and whose recorded times span tmin..tmax seconds.
 * Returns 0, or -1 with the message set.
 */
static int scan_follow(struct fidx_store *st, int64_t id, int64_t ran_before_ns, int64_t tmin,
		       int64_t tmax)
{
	if (st->nscans == st->capscans) {
		size_t cap = st->capscans ? 2 * st->capscans : 4;
		struct store_scan *p = realloc(st->scans, cap * sizeof(*p));
		if (!p)
			return set_error(st, "cannot write database '%s': out of memory",
					 fidx_quote(st->path));
		st->scans = p;
		st->capscans = cap;
	}
	st->scans[st->nscans++] = (struct store_scan){
		.id = id, .ran_before_ns = ran_before_ns, .started_mono = fidx_monotonic_ns(),
		.tmin = tmin, .tmax = tmax,
	};
	return 0;
}

/* Returns the scan id this store is writing, or NULL. */
static struct store_scan *scan_followed(struct fidx_store *st, int64_t id)
{
	if (st->last_scan < st->nscans && st->scans[st->last_scan].id == id)
		return &st->scans[st->last_scan];
	for (size_t i = 0; i < st->nscans; i++)
		if (st->scans[i].id == id)
			return &st->scans[st->last_scan = i];
	return NULL;
}

/* Returns how long scan c has run, over all its runs, in ns. */
static int64_t scan_run_ns(const struct store_scan *c)
{
	return c->ran_before_ns + (fidx_monotonic_ns() - c->started_mono);
}

/*
 * Writes run_ns of every scan being written (in the open transaction), so
 * that a killed scan keeps the time it ran until its last commit.  Returns 0,
 * or -1 with the message set.
 */
static int update_run_times(struct fidx_store *st)
{
	if (!st->nscans)
		return 0;
	if (!st->run && sqlite3_prepare_v3(st->db, "UPDATE scan SET run_ns = ? WHERE id = ?", -1,
					   SQLITE_PREPARE_PERSISTENT, &st->run, NULL) != SQLITE_OK)
		return sqlite_error(st, "prepare");
	for (size_t i = 0; i < st->nscans; i++) {
		sqlite3_bind_int64(st->run, 1, scan_run_ns(&st->scans[i]));
		sqlite3_bind_int64(st->run, 2, st->scans[i].id);
		int rc = sqlite3_step(st->run);
		sqlite3_reset(st->run);
		if (rc != SQLITE_DONE)
			return sqlite_error(st, "write");
	}
	return 0;
}

/* Widens scan c's span of times by time t. */
static inline void scan_span(struct store_scan *c, const struct fidx_time *t)
{
	if (t->sec < c->tmin)
		c->tmin = t->sec;
	if (t->sec > c->tmax)
		c->tmax = t->sec;
}

/* fidx_utc_offsets()'s callback: inserts one local_time row with statement arg. */
static int put_offset(void *arg, int64_t since, long offset)
{
	sqlite3_stmt *s = arg;
	sqlite3_bind_int64(s, 2, since);
	sqlite3_bind_int64(s, 3, offset);
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * Replaces the local_time rows of scan c (in the open transaction) with the
 * host's UTC offsets over its span of times.  Returns 0, or -1 with the
 * message set.
 */
static int write_local_time(struct fidx_store *st, const struct store_scan *c)
{
	sqlite3_stmt *s;
	char sql[96];
	snprintf(sql, sizeof(sql), "DELETE FROM local_time WHERE scan_id = %" PRId64, c->id);
	if (exec(st, sql, "write") < 0)
		return -1;
	if (sqlite3_prepare_v2(st->db, "INSERT INTO local_time (scan_id, since, utc_offset)"
			       " VALUES (?, ?, ?)", -1, &s, NULL) != SQLITE_OK)
		return sqlite_error(st, "prepare");
	sqlite3_bind_int64(s, 1, c->id);
	int ret = fidx_utc_offsets(c->tmin, c->tmax, put_offset, s) == 0 ? 0
		  : sqlite_error(st, "write");
	sqlite3_finalize(s);
	return ret;
}

/*
 * Creates the schema in a new database, or migrates an older one to
 * FIDX_SCHEMA_VERSION, in one transaction that also sets user_version, so a
 * failure leaves the file as it was; does nothing when another process did
 * it first.  Returns 0, or -1 with the message set.
 */
static int setup_schema(struct fidx_store *st)
{
	enum schema_state state;
	long long version;

	if (exec(st, "BEGIN IMMEDIATE", "write") < 0)
		return -1;
	if (read_schema_state(st, &state, &version) < 0 ||
	    (state != SCHEMA_NEW && refuse_foreign(st, version) < 0))
		goto fail;
	if (state == SCHEMA_NEW) {
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", FIDX_APPLICATION_ID);
		if (exec(st, sql, "write") < 0 || exec(st, fidx_schema_sql, "write") < 0)
			goto fail;
		version = 1;
	}
	if (state != SCHEMA_OURS) {
		for (long long v = version; v < FIDX_SCHEMA_VERSION; v++)
			if (exec(st, fidx_schema_migrations[v - 1], "migrate") < 0)
				goto fail;
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", FIDX_SCHEMA_VERSION);
		if (exec(st, sql, "write") < 0)
			goto fail;
	}
	if (exec(st, "COMMIT", "write") < 0)
		goto fail;
	return 0;
fail:
	rollback(st);
	return -1;
}

/*
 * SQLite's wal hook, after each commit: checkpoints (PASSIVE, as SQLite's
 * automatic checkpoint does) once the WAL holds CHECKPOINT_PAGES pages,
 * unless a query holds the reader lock and reads the main file as immutable.
 * Returns SQLITE_OK: a checkpoint that cannot run now runs after a later one.
 */
static int checkpoint_unless_read(void *arg, sqlite3 *db, const char *name, int pages)
{
	const struct fidx_store *st = arg;
	if (pages >= CHECKPOINT_PAGES && !fidx_dbfile_reader_holds(st->lock_fd))
		sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	return SQLITE_OK;
}

/*
 * Opens the connection, checks or creates the schema, and sets the
 * connection up for bulk loading.  Returns 0, or -1 with the message set.
 */
static int connect_db(struct fidx_store *st, int cache_kib)
{
	enum schema_state state;
	long long version;
	char pragmas[128], why[256];

	st->was_at_rest = fidx_dbfile_at_rest(st->path);
	if (sqlite3_open_v2(st->path, &st->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		if (!st->db)
			return set_error(st, "cannot open database '%s': out of memory",
					 fidx_quote(st->path));
		return sqlite_error(st, access(st->path, F_OK) == 0 ? "open" : "create");
	}
	/* SQLite falls back on reading a file it may not write: say why now. */
	if (sqlite3_db_readonly(st->db, "main") == 1)
		return files_error(st) < 0 ? -1
		       : set_error(st, "cannot write database '%s': it opens read-only",
				   fidx_quote(st->path));
	/* Until the file is accepted, closing must not write to it. */
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	if (fidx_sqlite_harden(st->db, false) < 0)
		return set_error(st, "cannot open database '%s': SQLite cannot turn triggers off",
				 fidx_quote(st->path));
	/* Kept open until the connection is closed: closing it would drop SQLite's locks. */
	st->lock_fd = open(st->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	sqlite3_wal_hook(st->db, checkpoint_unless_read, st);
	sqlite3_busy_timeout(st->db, BUSY_TIMEOUT_MS);
	if (read_schema_state(st, &state, &version) < 0 ||
	    (state != SCHEMA_NEW && refuse_foreign(st, version) < 0))
		return -1;
	if (state != SCHEMA_OURS && setup_schema(st) < 0)
		return -1;
	st->accepted = true;
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);

	snprintf(pragmas, sizeof(pragmas),
		 "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
		 " PRAGMA cache_size = %d", -cache_kib);
	if (exec(st, pragmas, "set up") < 0)
		return -1;
	if (sqlite3_prepare_v3(st->db, insert_sql, -1, SQLITE_PREPARE_PERSISTENT, &st->insert,
			       NULL) != SQLITE_OK)
		return sqlite_error(st, "prepare");
	if (!(st->sealer = fidx_sealer_new(st->db, why, sizeof(why))))
		return set_error(st, "cannot open database '%s': %s", fidx_quote(st->path), why);
	return 0;
}

struct fidx_store *fidx_store_open(const char *path, const struct fidx_store_opts *opts,
				   char **errmsg)
{
	struct fidx_store *st = calloc(1, sizeof(*st));
	if (!st || !(st->path = strdup(path))) {
		free(st);
		*errmsg = strdup("out of memory");
		return NULL;
	}
	st->lock_fd = -1;
	st->batch_rows = opts && opts->batch_rows ? opts->batch_rows : DEFAULT_BATCH_ROWS;
	st->ballast = -1;
	int cache_kib = opts && opts->cache_kib > 0 ? opts->cache_kib : DEFAULT_CACHE_KIB;

	bool missing = access(path, F_OK) != 0 && errno == ENOENT;
	if (probe_header(st) < 0 || connect_db(st, cache_kib) < 0) {
		*errmsg = strdup(st->msg);
		fidx_store_close(st);
		/* A file made by this failed open (a full disk) holds nothing: not left behind. */
		struct stat sb;
		if (missing && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0 &&
		    fidx_dbfile_at_rest(path))
			unlink(path);
		return NULL;
	}
	ballast_take(st);
	return st;
}

/* Binds a uint64 as SQLite's int64 (two's complement above INT64_MAX). */
static int bind_u64(sqlite3_stmt *s, int i, uint64_t v)
{
	return sqlite3_bind_int64(s, i, (sqlite3_int64)v);
}

/* A field of a row: an integer. */
static inline struct fidx_seal_value int_value(int64_t i)
{
	return (struct fidx_seal_value){.type = SQLITE_INTEGER, .i = i};
}

/* A field of a row: n bytes at p as TEXT, byte for byte (NULL when p is NULL). */
static inline struct fidx_seal_value text_value(const char *p, size_t n)
{
	return p ? (struct fidx_seal_value){.type = SQLITE_TEXT, .p = p, .n = n}
		 : (struct fidx_seal_value){.type = SQLITE_NULL};
}

/*
 * Sets the fields of time t (kind k): its T_ns when it fits, else T_sec and
 * T_nsec (dbtime.h); the other form NULL.
 */
static void time_values(struct fidx_seal_value *v, enum fidx_time_kind k, struct fidx_time t)
{
	static const struct fidx_seal_value null = {.type = SQLITE_NULL};
	int64_t ns;
	if (fidx_time_to_ns(t, &ns)) {
		v[P_ATIME + k] = int_value(ns);
		v[P_TIME_EXT + 2 * k] = v[P_TIME_EXT + 2 * k + 1] = null;
	} else {
		v[P_ATIME + k] = null;
		v[P_TIME_EXT + 2 * k] = int_value(t.sec);
		v[P_TIME_EXT + 2 * k + 1] = int_value(t.nsec);
	}
}

/*
 * Fills v[1..] with the values of rec's row, field i for the column bound to
 * parameter i (v[0], the id, is SQLite's to give).  They point into rec.
 */
static void record_values(const struct fidx_record *rec, struct fidx_seal_value *v)
{
	static const struct fidx_seal_value null = {.type = SQLITE_NULL};
	const struct fidx_meta *m = &rec->meta;

	for (int i = P_TIME_EXT; i <= P_LAST; i++)
		v[i] = null;

	v[P_SCAN_ID] = int_value(rec->scan_id);
	v[P_PATH] = text_value(rec->path, rec->path_len);
	v[P_NAME] = text_value(rec->path + rec->name_off, rec->path_len - rec->name_off);
	v[P_EXT] = text_value(rec->path + rec->ext_off, rec->path_len - rec->ext_off);
	v[P_TYPE] = rec->type ? text_value(&rec->type, 1) : null;
	if (rec->has_meta) {
		/* uint64 values as SQLite's int64 (two's complement above INT64_MAX). */
		v[P_SIZE] = int_value((int64_t)m->size);
		v[P_BLOCKS] = int_value((int64_t)m->blocks);
		v[P_MODE] = int_value(m->mode);
		v[P_UID] = int_value(m->uid);
		v[P_GID] = int_value(m->gid);
		v[P_NLINK] = int_value((int64_t)m->nlink);
		v[P_DEV] = int_value((int64_t)m->dev);
		v[P_INO] = int_value((int64_t)m->ino);
		time_values(v, FIDX_ATIME, m->atime);
		time_values(v, FIDX_MTIME, m->mtime);
		time_values(v, FIDX_CTIME, m->ctime);
		if (m->has_btime)
			time_values(v, FIDX_BTIME, m->btime);
		else
			v[P_BTIME] = null;
	} else {
		for (int i = P_SIZE; i <= P_BTIME; i++)
			v[i] = null;
	}
	v[P_LINK] = text_value(rec->link_target, rec->link_len);
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		v[P_DIGEST0 + d] = rec->digest_mask & (1u << d)
					   ? (struct fidx_seal_value){.type = SQLITE_BLOB,
								      .p = rec->digest[d],
								      .n = fidx_digest_len(d)}
					   : null;
	v[P_ERROR] = text_value(rec->error, rec->error ? strlen(rec->error) : 0);
	v[P_DIGESTS_FROM] = rec->digests_from ? int_value(rec->digests_from) : null;
}

/* Binds v[1..P_LAST] to the insert statement.  Returns an SQLite code. */
static int bind_values(sqlite3_stmt *s, const struct fidx_seal_value *v)
{
	int rc = SQLITE_OK;
	for (int i = P_SCAN_ID; i <= P_LAST; i++) {
		switch (v[i].type) {
		case SQLITE_INTEGER:
			rc |= sqlite3_bind_int64(s, i, v[i].i);
			break;
		case SQLITE_TEXT:
			rc |= sqlite3_bind_text64(s, i, v[i].p, v[i].n, SQLITE_STATIC, SQLITE_UTF8);
			break;
		case SQLITE_BLOB:
			rc |= sqlite3_bind_blob64(s, i, v[i].p, v[i].n, SQLITE_STATIC);
			break;
		default:
			rc |= sqlite3_bind_null(s, i);
		}
	}
	return rc;
}

int fidx_store_add(struct fidx_store *st, const struct fidx_record *rec)
{
	struct fidx_seal_value v[FIDX_SEAL_FILE_FIELDS];

	if (!st->in_txn) {
		if (exec(st, "BEGIN IMMEDIATE", "write") < 0)
			return -1;
		st->in_txn = true;
	}
	record_values(rec, v);
	int rc = bind_values(st->insert, v);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st->insert) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	if (rc != SQLITE_OK) {
		/* sqlite3_reset() returns the step's error and keeps its message. */
		sqlite3_reset(st->insert);
		sqlite_error(st, "write");
		rollback(st);
		return -1;
	}
	sqlite3_reset(st->insert);
	struct store_scan *c = rec->has_meta ? scan_followed(st, rec->scan_id) : NULL;
	if (c) {
		scan_span(c, &rec->meta.mtime);
		if (rec->meta.has_btime)
			scan_span(c, &rec->meta.btime);
	}
	/* The row's seal line, from the values just bound, and its id. */
	v[0] = int_value(sqlite3_last_insert_rowid(st->db));
	if (st->sealer && fidx_sealer_row(st->sealer, rec->scan_id, v) < 0) {
		seal_error(st);
		rollback(st);
		return -1;
	}
	if (++st->pending >= st->batch_rows)
		return fidx_store_flush(st);
	return 0;
}

unsigned fidx_store_pending(const struct fidx_store *st)
{
	return st->pending;
}

int fidx_store_flush(struct fidx_store *st)
{
	if (!st->in_txn)
		return 0;
	/* The file_seal rows of the rows added go into the same transaction, and so
	 * does the time the scans have run. */
	if (st->sealer && fidx_sealer_sync(st->sealer) < 0) {
		seal_error(st);
		rollback(st);
		return -1;
	}
	if (update_run_times(st) < 0) {
		rollback(st);
		return -1;
	}
	if (exec(st, "COMMIT", "write") < 0) {
		rollback(st);
		return -1;
	}
	st->in_txn = false;
	st->pending = 0;
	return 0;
}

int64_t fidx_store_begin_scan(struct fidx_store *st, const struct fidx_scan_info *info)
{
	sqlite3_stmt *s;
	int64_t id;

	if (fidx_store_flush(st) < 0)
		return -1;
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO scan (root, host, os, kernel, arch, version, options,"
			       " started_ns, status, pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)",
			       -1, &s, NULL) != SQLITE_OK)
		return sqlite_error(st, "prepare");
	const char *text[] = {info->root, info->host, info->os, info->kernel,
			      info->arch, info->version, info->options};
	for (int i = 0; i < 7; i++)
		sqlite3_bind_text(s, i + 1, text[i], -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 8, info->started_ns);
	sqlite3_bind_int64(s, 9, getpid());
	if (sqlite3_step(s) != SQLITE_DONE) {
		sqlite3_reset(s);
		sqlite_error(st, "write");
		sqlite3_finalize(s);
		return -1;
	}
	id = sqlite3_last_insert_rowid(st->db);
	sqlite3_finalize(s);
	int64_t start = fidx_time_of_ns(info->started_ns).sec;
	if (scan_follow(st, id, 0, start, start) < 0)
		return -1;
	if (st->sealer && fidx_sealer_begin(st->sealer, id) < 0)
		return seal_error(st);
	return id;
}

int fidx_store_resume_scan(struct fidx_store *st, int64_t scan_id,
			   struct fidx_scan_totals *so_far)
{
	sqlite3_stmt *s = NULL;
	char sql[256];

	if (fidx_store_flush(st) < 0 || exec(st, "BEGIN IMMEDIATE", "write") < 0)
		return -1;
	/* How long the earlier runs took: run_ns since schema 4, else the end of the last one. */
	if (sqlite3_prepare_v2(st->db, "SELECT coalesce(run_ns, finished_ns - started_ns, 0),"
			       " started_ns / 1000000000 FROM scan WHERE id = ?",
			       -1, &s, NULL) != SQLITE_OK) {
		sqlite_error(st, "read");
		goto fail;
	}
	sqlite3_bind_int64(s, 1, scan_id);
	int64_t ran_before = 0, start = 0;
	if (sqlite3_step(s) == SQLITE_ROW) {
		ran_before = sqlite3_column_int64(s, 0);
		start = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	s = NULL;
	snprintf(sql, sizeof(sql), "UPDATE scan SET status = 'running', finished_ns = NULL,"
		 " pid = %d WHERE id = %" PRId64 " AND status <> 'complete'", (int)getpid(), scan_id);
	if (exec(st, sql, "write") < 0)
		goto fail;
	if (sqlite3_changes(st->db) != 1) {
		set_error(st, "cannot resume scan %" PRId64 " in '%s': it is complete or gone",
			  scan_id, fidx_quote(st->path));
		goto fail;
	}
	/* With their digests from `fidx dupes`: a new row may take a dropped row's id. */
	snprintf(sql, sizeof(sql), "DELETE FROM file_digest WHERE file_id IN (SELECT id FROM file"
		 " WHERE scan_id = %" PRId64 " AND error IN ('" FIDX_ERROR_NOT_READ "', '"
		 FIDX_ERROR_NOT_HASHED "'))", scan_id);
	if (exec(st, sql, "write") < 0)
		goto fail;
	snprintf(sql, sizeof(sql), "DELETE FROM file WHERE scan_id = %" PRId64
		 " AND error IN ('" FIDX_ERROR_NOT_READ "', '" FIDX_ERROR_NOT_HASHED "')", scan_id);
	if (exec(st, sql, "write") < 0)
		goto fail;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT count(*), coalesce(sum(type = 'f'), 0),"
			       " coalesce(sum(type = 'd'), 0),"
			       " coalesce(sum(CASE WHEN type = 'f' THEN size END), 0), count(error),"
			       " count(digests_from),"
			       " coalesce(sum(type = 'f' AND digests_from IS NULL AND"
			       "  coalesce(md5, sha1, sha256, sha512, xxh128) IS NOT NULL), 0),"
			       " min(" FIDX_TIME_SEC_SQL("mtime") "), max(" FIDX_TIME_SEC_SQL("mtime") "),"
			       " min(" FIDX_TIME_SEC_SQL("btime") "), max(" FIDX_TIME_SEC_SQL("btime") ")"
			       " FROM file WHERE scan_id = ?", -1, &s, NULL) != SQLITE_OK) {
		sqlite_error(st, "read");
		goto fail;
	}
	sqlite3_bind_int64(s, 1, scan_id);
	if (sqlite3_step(s) != SQLITE_ROW) {
		sqlite_error(st, "read");
		goto fail;
	}
	*so_far = (struct fidx_scan_totals){
		.entries = (uint64_t)sqlite3_column_int64(s, 0),
		.files = (uint64_t)sqlite3_column_int64(s, 1),
		.dirs = (uint64_t)sqlite3_column_int64(s, 2),
		.bytes = (uint64_t)sqlite3_column_int64(s, 3),
		.errors = (uint64_t)sqlite3_column_int64(s, 4),
		.reused = (uint64_t)sqlite3_column_int64(s, 5),
		.hashed = (uint64_t)sqlite3_column_int64(s, 6),
	};
	/* The span of the times the kept rows show: local_time covers them too. */
	int64_t tmin = start, tmax = start;
	for (int c = 7; c <= 10; c++) {
		if (sqlite3_column_type(s, c) == SQLITE_NULL)
			continue;
		int64_t t = sqlite3_column_int64(s, c);
		tmin = t < tmin ? t : tmin;
		tmax = t > tmax ? t : tmax;
	}
	sqlite3_finalize(s);
	s = NULL;
	if (!scan_followed(st, scan_id) && scan_follow(st, scan_id, ran_before, tmin, tmax) < 0)
		goto fail;
	/* The seal goes on from the rows kept, read back once (their file_seal rows anew). */
	if (st->sealer && fidx_sealer_resume(st->sealer, scan_id) < 0) {
		seal_error(st);
		goto fail;
	}
	if (exec(st, "COMMIT", "write") < 0)
		goto fail;
	return 0;
fail:
	sqlite3_finalize(s);
	rollback(st);
	return -1;
}

/*
 * Writes the end of scan scan_id in one transaction (and, for a complete
 * scan, its local_time rows, and its seal into seal when seal is not NULL).
 * Returns 1 when sealed, 0 when ended, or -1 with the message set.
 */
static int end_scan(struct fidx_store *st, int64_t scan_id, const struct fidx_scan_totals *totals,
		    uint8_t *seal)
{
	sqlite3_stmt *s = NULL;
	int ended = 0;

	if (exec(st, "BEGIN IMMEDIATE", "write") < 0)
		return -1;
	struct store_scan *c = scan_followed(st, scan_id);
	if (sqlite3_prepare_v2(st->db,
			       "UPDATE scan SET finished_ns = ?, status = ?, entries = ?,"
			       " files = ?, dirs = ?, bytes = ?, errors = ?, reused = ?, hashed = ?,"
			       " base_scan_id = coalesce(?, base_scan_id),"
			       " run_ns = coalesce(?, run_ns) WHERE id = ?",
			       -1, &s, NULL) != SQLITE_OK) {
		sqlite_error(st, "prepare");
		goto fail;
	}
	sqlite3_bind_int64(s, 1, totals->finished_ns);
	sqlite3_bind_text(s, 2, totals->status, -1, SQLITE_STATIC);
	bind_u64(s, 3, totals->entries);
	bind_u64(s, 4, totals->files);
	bind_u64(s, 5, totals->dirs);
	bind_u64(s, 6, totals->bytes);
	bind_u64(s, 7, totals->errors);
	bind_u64(s, 8, totals->reused);
	bind_u64(s, 9, totals->hashed);
	if (totals->base_scan_id > 0)
		sqlite3_bind_int64(s, 10, totals->base_scan_id);
	else
		sqlite3_bind_null(s, 10);
	if (c)
		sqlite3_bind_int64(s, 11, scan_run_ns(c));
	else
		sqlite3_bind_null(s, 11);
	sqlite3_bind_int64(s, 12, scan_id);
	if (sqlite3_step(s) != SQLITE_DONE) {
		sqlite3_reset(s);
		sqlite_error(st, "write");
		goto fail;
	}
	if (sqlite3_changes(st->db) != 1) {
		set_error(st, "cannot write database '%s': no scan %" PRId64, fidx_quote(st->path),
			  scan_id);
		goto fail;
	}
	sqlite3_finalize(s);
	s = NULL;
	/* The local dates of `data`, which shows complete scans; the end is one of its times. */
	if (c && !st->scratch && strcmp(totals->status, "complete") == 0) {
		scan_span(c, &(struct fidx_time){.sec = fidx_time_of_ns(totals->finished_ns).sec});
		if (write_local_time(st, c) < 0)
			goto fail;
	}
	if (seal && st->sealer && strcmp(totals->status, "complete") == 0) {
		if (fidx_sealer_seal(st->sealer, scan_id, seal) < 0) {
			seal_error(st);
			goto fail;
		}
		ended = 1;
	}
	if (exec(st, "COMMIT", "write") < 0)
		goto fail;
	if (c)
		*c = st->scans[--st->nscans];
	return ended;
fail:
	sqlite3_finalize(s);
	rollback(st);
	return -1;
}

int fidx_store_end_scan(struct fidx_store *st, int64_t scan_id,
			const struct fidx_scan_totals *totals, uint8_t *seal)
{
	/* Rows still pending are committed first; a full disk may refuse them. */
	int flushed = fidx_store_flush(st), ended;
	if (flushed == 0 && (ended = end_scan(st, scan_id, totals, seal)) >= 0)
		return ended;
	/*
	 * The disk may be full: with the ballast given back, the end fits.  (A
	 * seal that failed is read back from the rows: the rollback forgot it.)
	 */
	char first[sizeof(st->msg)];
	memcpy(first, st->msg, sizeof(first));
	ballast_release(st);
	if (flushed == 0 && (ended = end_scan(st, scan_id, totals, seal)) >= 0)
		return ended;
	/* Rows lost, or the end refused even so: the scan did not complete. */
	if (strcmp(totals->status, "failed") != 0) {
		struct fidx_scan_totals failed = *totals;
		failed.status = "failed";
		end_scan(st, scan_id, &failed, NULL);
	}
	memcpy(st->msg, first, sizeof(first));
	return -1;
}

int fidx_store_build_indexes(struct fidx_store *st)
{
	char why[1024];

	if (st->scratch)
		return fidx_store_flush(st);
	if (fidx_store_flush(st) < 0 || exec(st, FIDX_FILE_SCAN_PATH_SQL, "index") < 0)
		return -1;
	if (fidx_pathindex_build_missing(st->db, why, sizeof(why)) < 0)
		return set_error(st, "cannot index database '%s': %s", fidx_quote(st->path), why);
	return 0;
}

const char *fidx_store_path(const struct fidx_store *st)
{
	return st->path;
}

const char *fidx_store_errmsg(const struct fidx_store *st)
{
	return st->msg;
}

int fidx_store_close(struct fidx_store *st)
{
	int ret = 0;

	if (!st)
		return 0;
	if (st->db) {
		if (st->in_txn)
			rollback(st);
		fidx_sealer_free(st->sealer);
		sqlite3_finalize(st->insert);
		sqlite3_finalize(st->run);
		/*
		 * A query reading the main file as immutable: no checkpoint (the WAL
		 * stays for the next writer).  A refused file that had no WAL: the
		 * empty one this connection made is removed by the checkpoint, which
		 * has nothing to write back.
		 */
		bool checkpoint = (st->accepted || st->was_at_rest) &&
				  !fidx_dbfile_reader_holds(st->lock_fd);
		sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, !checkpoint, NULL);
		if (sqlite3_close(st->db) != SQLITE_OK)
			ret = -1;
	}
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	ballast_release(st);
	free(st->scans);
	free(st->path);
	free(st);
	return ret;
}

int fidx_store_add_digests(struct fidx_store *st, const struct fidx_file_digest *d, size_t n)
{
	sqlite3_stmt *s;

	if (fidx_store_flush(st) < 0)
		return -1;
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO file_digest (file_id, read_ns, edge_block, edges, sha256)"
			       " VALUES (?, ?, ?, ?, ?) ON CONFLICT (file_id) DO UPDATE SET"
			       " read_ns = excluded.read_ns,"
			       " edge_block = coalesce(excluded.edge_block, edge_block),"
			       " edges = coalesce(excluded.edges, edges),"
			       " sha256 = coalesce(excluded.sha256, sha256)",
			       -1, &s, NULL) != SQLITE_OK)
		return sqlite_error(st, "prepare");
	if (exec(st, "BEGIN IMMEDIATE", "write") < 0) {
		sqlite3_finalize(s);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int rc = sqlite3_bind_int64(s, 1, d[i].file_id);
		rc |= sqlite3_bind_int64(s, 2, d[i].read_ns);
		if (d[i].edge_block) {
			rc |= sqlite3_bind_int64(s, 3, d[i].edge_block);
			rc |= sqlite3_bind_blob(s, 4, d[i].edges, sizeof(d[i].edges), SQLITE_STATIC);
		} else {
			rc |= sqlite3_bind_null(s, 3);
			rc |= sqlite3_bind_null(s, 4);
		}
		rc |= d[i].has_sha256
			      ? sqlite3_bind_blob(s, 5, d[i].sha256, sizeof(d[i].sha256), SQLITE_STATIC)
			      : sqlite3_bind_null(s, 5);
		if (rc != SQLITE_OK || sqlite3_step(s) != SQLITE_DONE) {
			sqlite3_reset(s);
			sqlite_error(st, "write");
			sqlite3_finalize(s);
			rollback(st);
			return -1;
		}
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	if (exec(st, "COMMIT", "write") < 0) {
		rollback(st);
		return -1;
	}
	return 0;
}

int fidx_store_scratch(struct fidx_store *st)
{
	st->scratch = true;
	fidx_sealer_free(st->sealer);
	st->sealer = NULL;
	return exec(st, "PRAGMA synchronous = OFF", "set up");
}

int fidx_store_seal(struct fidx_store *st, int64_t scan_id, uint8_t seal[32])
{
	if (!st->sealer)
		return 0;
	if (fidx_store_flush(st) < 0 || exec(st, "BEGIN IMMEDIATE", "write") < 0)
		return -1;
	if (fidx_sealer_seal(st->sealer, scan_id, seal) < 0) {
		seal_error(st);
		rollback(st);
		return -1;
	}
	if (exec(st, "COMMIT", "write") < 0) {
		rollback(st);
		return -1;
	}
	return 1;
}
