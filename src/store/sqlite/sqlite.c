/*
 * sqlite.c - the SQLite backend of the store: its ops table, and opening and
 * closing a database (sqlite.h says what the other files do).
 *
 * The database layout is the public contract of docs/SCHEMA.md: a flat
 * `file` table (one row per entry, the path stored whole), a `scan` table,
 * and the views `file_view` and `data` (their SQL: schema.c).  A flat table
 * was measured against a normalised one (directory table + names) and kept:
 * see docs/BENCHMARKS.md.
 *
 * Opening for WRITE (and SCRATCH), without ever changing a file that is
 * refused:
 *
 *     path ──► probe_header()        plain read() of the first 100 bytes:
 *              │                      missing or 0 bytes: new; otherwise the
 *              │                      SQLite magic and our application_id are
 *              │                      required, and a version fidx knows
 *              ▼
 *              sqlite3_open_v2()      checkpoint-on-close off, so closing a
 *              │                      refused file writes nothing back;
 *              │                      hardened (sqlite.h)
 *              read_schema_state()    (the header may be stale under WAL:
 *              │                      the pragmas are what counts)
 *              refuse_foreign()       a schema object fidx did not create
 *              │                      (sqlite_foreign()): refused
 *              ▼  new?  page size 16 KiB, BEGIN IMMEDIATE, look again,
 *              │        create schema, COMMIT
 *              WAL, synchronous=NORMAL, cache_size, prepared insert (write.c)
 *
 * A new file gets its application_id, user_version and tables in one
 * rollback-journal transaction before it is switched to WAL, so its main
 * file always carries the header the probe checks.
 *
 * Opening for READ leaves no trace (dbfile.h): a database no connection is
 * open on (no -wal, -shm or -journal beside it) is read as an immutable file
 * under fidx's reader lock; so is a database in a folder this user cannot
 * write (read-only evidence media) when no WAL content is pending; any other
 * through SQLite's own locks, read-only.  Its version is read through SQLite
 * (the header may lag behind the WAL) and its schema compared with fidx's
 * (a warning names what fidx did not create).  Closing checks that a writer
 * that is not fidx did not change the file under an immutable read.
 *
 * The connection is opened with SQLITE_OPEN_NOMUTEX: a store is used by one
 * thread at a time, so SQLite's per-call mutex is not needed.
 */
#include "sqlite.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scanargs.h"
#include "schema.h"
#include "sysinfo.h"

/* Wait this long for another connection's lock before failing. */
#define BUSY_TIMEOUT_MS 10000

/* Checkpoint once the WAL holds this many pages: SQLite's automatic default. */
#define CHECKPOINT_PAGES 1000

/*
 * The page size of a new database (an existing one keeps its own).  16 KiB
 * against SQLite's 4 KiB: a metadata scan of /usr 1.21x faster (a quarter
 * of the pages to balance, frame in the WAL and checkpoint), a substring
 * find 0.4 ms slower; 32 and 64 KiB gained nothing more and slowed small
 * queries (docs/BENCHMARKS.md, "The store at the speed of the walk").
 */
#define PAGE_SIZE "16384"

/*
 * Defaults, from the measurement in docs/BENCHMARKS.md ("Store"): no batch
 * size from 1000 to 50000 was measurably faster than another, and 10000
 * bounds what a killed scan loses; a 32 MiB page cache was the fastest
 * (10 to 20% more rows per second than SQLite's 2 MB default).
 */
#define DEFAULT_BATCH_ROWS 10000
#define DEFAULT_CACHE_KIB 32768

const char *sqlite_why(sqlite3 *db)
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

int sqlite_harden(sqlite3 *db, bool read_only)
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

bool sqlite_has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *s;
	bool found = false;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", -1, &s,
			       NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, column, -1, SQLITE_STATIC);
	found = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return found;
}

bool sqlite_moved(struct sqlite_store *st, struct fidx_error *err)
{
	if (st->hold.fd < 0 || !fidx_dbfile_moved(st->path, &st->hold))
		return false;
	if (!st->told)
		fidx_fail(err, EIO, "database '%s' changed while it was read (written by a program"
			  " other than fidx): the answer may be wrong; run the command again",
			  fidx_quote(st->path));
	else
		fidx_fail(err, EIO, "%s", "");
	st->told = true;
	return true;
}

/*
 * Fills err with why the files SQLite needs for the database cannot be had,
 * as the OS says it (fidx_dbfile_why()).  Returns -1 with err set, or 0 when
 * each is to be had (the cause is elsewhere).
 */
static int files_error(struct sqlite_store *st, struct fidx_error *err)
{
	bool write = st->base.mode != FIDX_STORE_READ;
	int wal = -1;
	if (write) {
		/* Header bytes 18-19: 2 in WAL mode.  Read through the store's own descriptor. */
		unsigned char mode[2] = {0};
		wal = st->lock_fd >= 0 && pread(st->lock_fd, mode, 2, 18) == 2 && mode[0] == 2;
	}
	return fidx_dbfile_why(st->path, write, wal, err);
}

int sqlite_fail(struct sqlite_store *st, struct fidx_error *err, const char *verb)
{
	if (sqlite_moved(st, err))
		return -1;
	int code = sqlite3_errcode(st->db) & 0xff;
	if ((code == SQLITE_CANTOPEN || code == SQLITE_READONLY || code == SQLITE_PERM ||
	     code == SQLITE_AUTH) && files_error(st, err) < 0)
		return -1;
	int kind = code == SQLITE_NOMEM ? ENOMEM : code == SQLITE_FULL ? ENOSPC : EIO;
	return fidx_fail(err, kind, "cannot %s database '%s'%s: %s", verb, fidx_quote(st->path),
			 st->origin, sqlite_why(st->db));
}

int sqlite_exec(struct sqlite_store *st, const char *sql, const char *verb,
		struct fidx_error *err)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return sqlite_fail(st, err, verb);
	return 0;
}

void sqlite_rollback(struct sqlite_store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	st->in_txn = false;
	st->pending = 0;
	if (st->sealer)
		fidx_sealer_forget(st->sealer);
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

/* Appends "<kind> '<name>'<how>" to the list of sqlite_foreign(), cut with "...". */
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

int sqlite_foreign(sqlite3 *db, int version, char *list, size_t size)
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
		snprintf(list, size, "%s", sqlite_why(db));
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
		snprintf(list, size, "%s", sqlite_why(db));
		count = -1;
	}
	sqlite3_finalize(objects);
	return count;
}

/* Fills err with "database 'x' has schema version N; this fidx knows 4".  Returns -1. */
static int wrong_version(const struct sqlite_store *st, long long version, struct fidx_error *err)
{
	/* EPROTONOSUPPORT: a newer fidx's database; below 1 it is no version fidx writes. */
	return fidx_fail(err, version > FIDX_SCHEMA_VERSION ? EPROTONOSUPPORT : EBADMSG,
			 "database '%s'%s has schema version %lld;"
			 " this fidx knows %d", fidx_quote(st->path), st->origin, version,
			 FIDX_SCHEMA_VERSION);
}

/* Fills err with "'x' is not a fidx database".  Returns -1. */
static int not_ours(const struct sqlite_store *st, struct fidx_error *err)
{
	return fidx_fail(err, EMEDIUMTYPE, "'%s'%s is not a fidx database", fidx_quote(st->path),
			 st->origin);
}

/*
 * Looks at the file's first bytes without SQLite (dbfile.h), so that nothing
 * of a foreign file is ever opened by it.  For WRITE: 0 when the file is
 * missing, empty, or a fidx database of a version we may open.  For READ,
 * the database must be there: a missing or empty one is refused too.
 * Returns 0, or -1 with err set.
 */
static int probe_header(const struct sqlite_store *st, struct fidx_error *err)
{
	bool read = st->base.mode == FIDX_STORE_READ;
	uint32_t version = 0;
	switch (fidx_dbfile_probe(st->path, &version)) {
	case FIDX_DBFILE_MISSING:
		if (!read)
			return 0;
		return fidx_fail(err, ENOENT, "database '%s'%s does not exist (create it with 'fidx"
				 " scan', or give one with --db)", fidx_quote(st->path), st->origin);
	case FIDX_DBFILE_EMPTY:
		if (!read)
			return 0;
		return fidx_fail(err, ENOENT, "database '%s'%s is empty: it holds no scan",
				 fidx_quote(st->path), st->origin);
	case FIDX_DBFILE_FIDX:
		return version > FIDX_SCHEMA_VERSION ? wrong_version(st, version, err) : 0;
	case FIDX_DBFILE_SQLITE:
	case FIDX_DBFILE_OTHER:
		return not_ours(st, err);
	default:
		return fidx_fail(err, errno, "cannot open database '%s'%s: %s", fidx_quote(st->path),
				 st->origin, strerror(errno));
	}
}

/* What read_schema_state() found. */
enum schema_state {
	SCHEMA_NEW,  /* an empty database: no application_id, version or objects */
	SCHEMA_OLD,  /* a fidx database of an earlier version: to migrate */
	SCHEMA_OURS, /* a fidx database of FIDX_SCHEMA_VERSION */
};

/*
 * Reads application_id, user_version and the number of schema objects
 * through SQLite (which sees committed WAL content the header may not have).
 * Returns 0 with *state set, or -1 with err set when the database is not a
 * fidx one, has another version, or cannot be read.
 */
static int read_schema_state(struct sqlite_store *st, enum schema_state *state,
			     long long *version_out, struct fidx_error *err)
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
		return code == SQLITE_NOTADB ? not_ours(st, err) : sqlite_fail(st, err, "read");
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
		return not_ours(st, err);
	if (version < 1 || version > FIDX_SCHEMA_VERSION)
		return wrong_version(st, version, err);
	*state = version < FIDX_SCHEMA_VERSION ? SCHEMA_OLD : SCHEMA_OURS;
	return 0;
}

/*
 * Refuses a database whose schema (of the given version) holds objects fidx
 * did not create: a trigger would run inside the scan's transactions, a view
 * or a table of the same name would take our rows.  Returns 0 when the schema
 * is fidx's, -1 with err set otherwise.
 */
static int refuse_foreign(struct sqlite_store *st, long long version, struct fidx_error *err)
{
	char list[1024];
	int n = sqlite_foreign(st->db, (int)version, list, sizeof(list));
	if (n < 0)
		return fidx_fail(err, EIO, "cannot read database '%s': %s", fidx_quote(st->path), list);
	if (n > 0)
		return fidx_fail(err, EPERM, "database '%s' holds schema objects fidx did not create"
				 " (%s); refusing to write to it", fidx_quote(st->path), list);
	return 0;
}

/*
 * Creates the schema in a new database, or migrates an older one to
 * FIDX_SCHEMA_VERSION, in one transaction that also sets user_version, so a
 * failure leaves the file as it was; does nothing when another process did
 * it first.  Returns 0, or -1 with err set.
 */
static int setup_schema(struct sqlite_store *st, struct fidx_error *err)
{
	enum schema_state state;
	long long version;

	if (sqlite_exec(st, "BEGIN IMMEDIATE", "write", err) < 0)
		return -1;
	if (read_schema_state(st, &state, &version, err) < 0 ||
	    (state != SCHEMA_NEW && refuse_foreign(st, version, err) < 0))
		goto fail;
	if (state == SCHEMA_NEW) {
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", FIDX_APPLICATION_ID);
		if (sqlite_exec(st, sql, "write", err) < 0 ||
		    sqlite_exec(st, fidx_schema_sql, "write", err) < 0)
			goto fail;
		version = 1;
	}
	if (state != SCHEMA_OURS) {
		for (long long v = version; v < FIDX_SCHEMA_VERSION; v++)
			if (sqlite_exec(st, fidx_schema_migrations[v - 1], "migrate", err) < 0)
				goto fail;
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", FIDX_SCHEMA_VERSION);
		if (sqlite_exec(st, sql, "write", err) < 0)
			goto fail;
	}
	if (sqlite_exec(st, "COMMIT", "write", err) < 0)
		goto fail;
	return 0;
fail:
	sqlite_rollback(st);
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
	const struct sqlite_store *st = arg;
	if (pages >= CHECKPOINT_PAGES && !fidx_dbfile_reader_holds(st->lock_fd))
		sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	return SQLITE_OK;
}

/*
 * Opens the connection for writing, checks or creates the schema, and sets
 * the connection up for bulk loading.  Returns 0, or -1 with err set.
 */
static int connect_write(struct sqlite_store *st, int cache_kib, struct fidx_error *err)
{
	enum schema_state state;
	long long version;
	char pragmas[128];

	st->was_at_rest = fidx_dbfile_at_rest(st->path);
	if (sqlite3_open_v2(st->path, &st->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		if (!st->db)
			return fidx_fail(err, ENOMEM, "cannot open database '%s': out of memory",
					 fidx_quote(st->path));
		return sqlite_fail(st, err, access(st->path, F_OK) == 0 ? "open" : "create");
	}
	/* SQLite falls back on reading a file it may not write: say why now. */
	if (sqlite3_db_readonly(st->db, "main") == 1)
		return files_error(st, err) < 0 ? -1
		       : fidx_fail(err, EACCES, "cannot write database '%s': it opens read-only",
				   fidx_quote(st->path));
	/* Until the file is accepted, closing must not write to it. */
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	/* Taken by a new file when its first table is made; nothing is written now. */
	if (sqlite3_exec(st->db, "PRAGMA page_size = " PAGE_SIZE, NULL, NULL, NULL) != SQLITE_OK)
		return sqlite_fail(st, err, "set up");
	if (sqlite_harden(st->db, false) < 0)
		return fidx_fail(err, EIO, "cannot open database '%s': SQLite cannot turn triggers"
				 " off", fidx_quote(st->path));
	/* Kept open until the connection is closed: closing it would drop SQLite's locks. */
	st->lock_fd = open(st->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	sqlite3_wal_hook(st->db, checkpoint_unless_read, st);
	sqlite3_busy_timeout(st->db, BUSY_TIMEOUT_MS);
	if (read_schema_state(st, &state, &version, err) < 0 ||
	    (state != SCHEMA_NEW && refuse_foreign(st, version, err) < 0))
		return -1;
	if (state != SCHEMA_OURS && setup_schema(st, err) < 0)
		return -1;
	st->accepted = true;
	st->base.version = FIDX_SCHEMA_VERSION;
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);

	st->cache_kib = cache_kib;
	snprintf(pragmas, sizeof(pragmas),
		 "PRAGMA journal_mode = WAL; PRAGMA synchronous = %s;"
		 " PRAGMA cache_size = %d", st->scratch ? "OFF" : "NORMAL", -cache_kib);
	if (sqlite_exec(st, pragmas, "set up", err) < 0)
		return -1;
	return sqlite_write_setup(st, err);
}

/*
 * Opens st->path read-only and hardened, as an immutable file when
 * immutable is set.  Returns 0, or -1 with err set.
 */
static int connect_read(struct sqlite_store *st, bool immutable, struct fidx_error *err)
{
	char *uri = NULL;
	int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;

	if (immutable) {
		/* file:PATH?immutable=1, PATH percent-encoded but for unreserved bytes. */
		size_t len = strlen(st->path);
		if (!(uri = malloc(3 * len + 32)))
			return fidx_fail_nomem(err);
		char *o = uri + sprintf(uri, "file:");
		for (const unsigned char *p = (const unsigned char *)st->path; *p; p++) {
			if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || strchr("/._-~", *p))
				*o++ = (char)*p;
			else
				o += sprintf(o, "%%%02X", *p);
		}
		strcpy(o, "?immutable=1");
		flags |= SQLITE_OPEN_URI;
	}
	int rc = sqlite3_open_v2(uri ? uri : st->path, &st->db, flags, NULL);
	free(uri);
	if (rc != SQLITE_OK)
		return fidx_fail(err, st->db ? EIO : ENOMEM, "cannot open database '%s'%s: %s",
				 fidx_quote(st->path), st->origin,
				 st->db ? sqlite_why(st->db) : "out of memory");
	if (sqlite_harden(st->db, true) < 0)
		return fidx_fail(err, EIO, "cannot open database '%s': SQLite cannot turn triggers and"
				 " views off", fidx_quote(st->path));
	sqlite3_busy_timeout(st->db, BUSY_TIMEOUT_MS);
	return 0;
}

/*
 * Opens st->path as an immutable file under the reader lock (dbfile.h), when
 * at_rest, only if no connection is open on it.  Returns 1 when it did, 0
 * when it is to be read through SQLite's locks instead, -1 with err set.
 */
static int connect_still(struct sqlite_store *st, bool at_rest, struct fidx_error *err)
{
	if (!fidx_dbfile_hold(st->path, at_rest, &st->hold))
		return 0;
	return connect_read(st, true, err) < 0 ? -1 : 1;
}

/*
 * Returns whether the database has no write-ahead log beside it (none, or an
 * empty one): then its main file holds every committed row.
 */
static bool no_wal(const char *path)
{
	char wal[PATH_MAX + 8];
	struct stat sb;
	if (snprintf(wal, sizeof(wal), "%s-wal", path) >= (int)sizeof(wal))
		return false;
	return stat(wal, &sb) < 0 ? errno == ENOENT : sb.st_size == 0;
}

/*
 * Whether SQLite's failure to read st's database is that it could not make
 * the WAL's shared-memory file beside it: a folder this user cannot write
 * (READONLY_DIRECTORY), or a read-only mount (plain CANTOPEN, with the
 * folder not writable).
 */
static bool cannot_share(const struct sqlite_store *st)
{
	int ext = sqlite3_extended_errcode(st->db);
	if (ext == SQLITE_READONLY_DIRECTORY)
		return true;
	if ((ext & 0xff) != SQLITE_CANTOPEN)
		return false;
	char dir[PATH_MAX];
	const char *slash = strrchr(st->path, '/');
	if (!slash)
		return access(".", W_OK) != 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - st->path) + (slash == st->path), st->path);
	return access(dir, W_OK) != 0;
}

/*
 * Reads application_id and user_version through SQLite (the header may lag
 * behind the WAL) and checks them.  A WAL database in a folder this user
 * cannot write (evidence on read-only media, another user's database) cannot
 * create its shared-memory file: when no WAL content is pending, it is read
 * as an immutable file instead (under the reader lock, when it can be had).
 * Returns 0, or -1 with err set.
 */
static int check_version(struct sqlite_store *st, struct fidx_error *err)
{
	static const char sql[] = "SELECT (SELECT application_id FROM pragma_application_id),"
				  " (SELECT user_version FROM pragma_user_version)";
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && st->hold.fd < 0 && cannot_share(st) && no_wal(st->path)) {
		sqlite3_finalize(s);
		sqlite3_close(st->db);
		st->db = NULL;
		int held = connect_still(st, false, err);
		if (held < 0 || (held == 0 && connect_read(st, true, err) < 0))
			return -1;
		rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(s);
	}
	if (rc != SQLITE_ROW) {
		sqlite_fail(st, err, "read");
		sqlite3_finalize(s);
		return -1;
	}
	long long app = sqlite3_column_int64(s, 0), version = sqlite3_column_int64(s, 1);
	sqlite3_finalize(s);
	if (app != FIDX_APPLICATION_ID)
		return not_ours(st, err);
	if (version < 1 || version > FIDX_SCHEMA_VERSION)
		return wrong_version(st, version, err);
	st->base.version = (int)version;
	return 0;
}

/*
 * Tells once (through the caller's warn) when the schema holds objects fidx
 * did not create: they are read around, never run (views and triggers are
 * off on this connection).  Returns 0, or -1 with err set when the schema
 * cannot be read.
 */
static int check_schema(struct sqlite_store *st, const struct fidx_store_opts *opts,
			struct fidx_error *err)
{
	char list[1024];
	int n = sqlite_foreign(st->db, st->base.version, list, sizeof(list));
	if (n < 0) {
		if (!sqlite_moved(st, err))
			fidx_fail(err, EIO, "cannot read database '%s': %s", fidx_quote(st->path), list);
		return -1;
	}
	if (n > 0 && opts->warn) {
		char msg[1400];
		snprintf(msg, sizeof(msg), "database '%s' holds schema objects fidx did not create"
			 " (%s); reading it without running them", fidx_quote(st->path), list);
		opts->warn(opts->warn_arg, msg);
	}
	return 0;
}

/* Frees st (its connection already closed). */
static void store_free(struct sqlite_store *st)
{
	fidx_dbfile_release(&st->hold);
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	free(st->scans);
	for (size_t i = 0; i < 4; i++)
		free(st->files[i]);
	free(st->origin);
	free(st->path);
	free(st);
}

/*
 * Names the files the database is kept in: its path, absolute with the
 * folders resolved as a walk of them makes its paths (symlinks followed, as
 * SQLite follows them to name the -wal beside the file it opens), and the
 * files beside it (a path that does not resolve, such as a database not yet
 * made, is named as given, made absolute).  Returns 0, or -1 with err set.
 */
static int name_files(struct sqlite_store *st, struct fidx_error *err)
{
	static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
	char *abs = realpath(st->path, NULL);
	if (!abs && errno == ENOMEM) /* not a path to keep as given: no memory to resolve it */
		return fidx_fail_nomem(err);
	if (!abs && !(abs = fidx_root_path(st->path)) && !(abs = strdup(st->path)))
		return fidx_fail_nomem(err);
	for (size_t i = 0; i < 4; i++)
		if (asprintf(&st->files[i], "%s%s", abs, suffix[i]) < 0) {
			st->files[i] = NULL;
			free(abs);
			return fidx_fail_nomem(err);
		}
	free(abs);
	return 0;
}

static int sqlite_close(struct fidx_store *base, struct fidx_error *err);

/*
 * The open op (store.h's fidx_store_open()): the header probed first, then a
 * connection for the mode; a file this failed open made is not left behind.
 */
static struct fidx_store *sqlite_open(const char *target, enum fidx_store_mode mode,
				      const struct fidx_store_opts *opts, struct fidx_error *err)
{
	struct sqlite_store *st = calloc(1, sizeof(*st));
	if (!st || !(st->path = strdup(target)) ||
	    !(st->origin = strdup(mode == FIDX_STORE_READ && opts->origin ? opts->origin : ""))) {
		if (st)
			free(st->path);
		free(st);
		fidx_fail_nomem(err);
		return NULL;
	}
	st->base = (struct fidx_store){.ops = &fidx_store_sqlite, .mode = mode};
	st->lock_fd = -1;
	st->hold.fd = -1;
	st->ballast = -1;
	st->scratch = mode == FIDX_STORE_SCRATCH;
	st->batch_rows = opts->batch_rows ? opts->batch_rows : DEFAULT_BATCH_ROWS;
	if (probe_header(st, err) < 0)
		goto fail;
	if (mode == FIDX_STORE_READ) {
		int held = connect_still(st, true, err);
		if (held < 0 || (held == 0 && connect_read(st, false, err) < 0) ||
		    check_version(st, err) < 0 || check_schema(st, opts, err) < 0 ||
		    name_files(st, err) < 0)
			goto fail;
		return &st->base;
	}
	st->made = access(target, F_OK) != 0 && errno == ENOENT;
	if (connect_write(st, opts->cache_kib > 0 ? opts->cache_kib : DEFAULT_CACHE_KIB, err) < 0 ||
	    name_files(st, err) < 0)
		goto fail;
	return &st->base;
fail:
	{
		bool made = st->made;
		sqlite_close(&st->base, NULL);
		/* A file made by this failed open (a full disk) holds nothing: not left behind. */
		struct stat sb;
		if (made && stat(target, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0 &&
		    fidx_dbfile_at_rest(target))
			unlink(target);
	}
	return NULL;
}

/*
 * The close op: the write side ended, a checkpoint only when no reader holds
 * the reader lock, a READ store's database checked for a change under the
 * read, a database made but never begun removed.
 */
static int sqlite_close(struct fidx_store *base, struct fidx_error *err)
{
	struct sqlite_store *st = sqlite_of(base);
	int ret = 0;

	if (!st)
		return 0;
	sqlite_rows_free(st->by_id_rows);
	sqlite3_finalize(st->by_id);
	sqlite3_finalize(st->quote);
	st->quote = NULL;
	if (st->db && st->base.mode != FIDX_STORE_READ) {
		sqlite_write_close(st);
		/*
		 * A query reading the main file as immutable: no checkpoint (the WAL
		 * stays for the next writer).  A refused file that had no WAL: the
		 * empty one this connection made is removed by the checkpoint, which
		 * has nothing to write back.
		 */
		bool checkpoint = (st->accepted || st->was_at_rest) &&
				  !fidx_dbfile_reader_holds(st->lock_fd);
		sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, !checkpoint, NULL);
	}
	if (st->db && sqlite3_close(st->db) != SQLITE_OK) {
		ret = fidx_fail(err, EIO, "cannot close database '%s'", fidx_quote(st->path));
		st->db = NULL;
	}
	st->db = NULL;
	if (st->base.mode == FIDX_STORE_READ && sqlite_moved(st, err))
		ret = -1;
	/*
	 * A database this store made but never began a scan in (a full disk)
	 * holds nothing: not left behind, unless another connection may be
	 * writing it (its WAL holds something).
	 */
	if (st->made && st->accepted && !st->begun && no_wal(st->path))
		fidx_dbfile_remove(st->path);
	store_free(st);
	return ret;
}

/* The library op: "SQLite 3.x.y", the version linked. */
static const char *sqlite_library(void)
{
	static char version[64];
	snprintf(version, sizeof(version), "SQLite %s", sqlite3_libversion());
	return version;
}

/* The claims op: any target is a path, SQLite's (the fallback backend). */
static bool sqlite_claims(const char *target)
{
	(void)target;
	return true;
}

/* The probe op: what the file's header says, without SQLite (dbfile.h). */
static int sqlite_probe(const char *target, uint32_t *version)
{
	uint32_t v = 0;
	int kind = fidx_dbfile_probe(target, &v);
	if (version)
		*version = v;
	switch (kind) {
	case FIDX_DBFILE_MISSING:
	case FIDX_DBFILE_EMPTY:
		return FIDX_STORE_NONE;
	case FIDX_DBFILE_FIDX:
		return FIDX_STORE_FIDX;
	case FIDX_DBFILE_SQLITE:
		return FIDX_STORE_FOREIGN;
	case FIDX_DBFILE_OTHER:
		return FIDX_STORE_OTHER;
	default:
		return -1;
	}
}

/* The name_of op: the path given. */
static const char *sqlite_name(const struct fidx_store *base)
{
	return ((const struct sqlite_store *)base)->path;
}

/* The files op: the database and its -wal, -shm and -journal, their folders resolved. */
static const char *const *sqlite_files(const struct fidx_store *base)
{
	return (const char *const *)((const struct sqlite_store *)base)->files;
}

/* The scratch_new op: an empty file in $TMPDIR, removed on any exit (dbfile.h). */
static char *sqlite_scratch_new(const char *prefix, struct fidx_error *err)
{
	char *path = fidx_dbfile_temporary(prefix);
	if (!path)
		fidx_fail(err, errno, "cannot make a temporary database in '%s': %s",
			  fidx_quote(fidx_tmpdir()), strerror(errno));
	return path;
}

/* The scratch_remove op: the file and whatever SQLite left beside it. */
static void sqlite_scratch_remove(const char *name)
{
	fidx_dbfile_remove(name);
}

const struct fidx_store_ops fidx_store_sqlite = {
	.name = "sqlite",
	.library = sqlite_library,
	.claims = sqlite_claims,
	.probe = sqlite_probe,
	.open = sqlite_open,
	.close = sqlite_close,
	.name_of = sqlite_name,
	.files = sqlite_files,
	.scratch_new = sqlite_scratch_new,
	.scratch_remove = sqlite_scratch_remove,
	.begin_scan = sqlite_begin_scan,
	.claim_scan = sqlite_claim_scan,
	.resume_scan = sqlite_resume_scan,
	.add = sqlite_add,
	.pending = sqlite_pending,
	.flush = sqlite_flush,
	.end_scan = sqlite_end_scan,
	.seal = sqlite_seal,
	.build_indexes = sqlite_build_indexes,
	.add_digests = sqlite_add_digests,
	.scans = sqlite_scans,
	.rows = sqlite_rows,
	.rows_next = sqlite_rows_next,
	.rows_close = sqlite_rows_close,
	.row = sqlite_row,
	.paths = sqlite_paths,
	.paths_next = sqlite_paths_next,
	.paths_row = sqlite_paths_row,
	.paths_close = sqlite_paths_close,
	.snapshot = sqlite_snapshot,
	.count = sqlite_count,
	.verify = sqlite_verify,
};
