/*
 * query.c - opening the database for reading and choosing its scans (query.h).
 */
#include "query.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dbfile.h"
#include "diag.h"
#include "hash.h"
#include "store_sqlite.h"

/* Wait this long for a writer's lock (only a checkpoint ever takes one). */
#define BUSY_TIMEOUT_MS 10000

/* What an immutable read holds: the file, and whether its moving was told. */
struct fidx_query_hold {
	struct fidx_dbfile_hold file; /* the reader lock and what must not change */
	bool told;                    /* "changed while read" is printed (once) */
};

int fidx_query_db_arg(const char *arg, struct fidx_query_args *a)
{
	uint32_t version;
	int kind = fidx_dbfile_probe(arg, &version);
	if (a->db || (kind != FIDX_DBFILE_FIDX && kind != FIDX_DBFILE_SQLITE))
		return 0;
	a->db = arg;
	return 1;
}

/*
 * Checks the file before SQLite opens it.  Returns 0, or -1 after printing
 * why it cannot be read as a fidx database.
 */
static int check_file(const char *path, const char *origin)
{
	uint32_t version = 0;
	switch (fidx_dbfile_probe(path, &version)) {
	case FIDX_DBFILE_FIDX:
		if (version <= FIDX_SCHEMA_VERSION)
			return 0;
		fidx_error("database '%s'%s has schema version %" PRIu32 "; this fidx knows %d",
			   fidx_quote(path), origin, version, FIDX_SCHEMA_VERSION);
		return -1;
	case FIDX_DBFILE_MISSING:
		fidx_error("database '%s'%s does not exist (create it with 'fidx scan', or "
			   "give one with --db)", fidx_quote(path), origin);
		return -1;
	case FIDX_DBFILE_EMPTY:
		fidx_error("database '%s'%s is empty: it holds no scan", fidx_quote(path), origin);
		return -1;
	case FIDX_DBFILE_SQLITE:
	case FIDX_DBFILE_OTHER:
		fidx_error("'%s'%s is not a fidx database", fidx_quote(path), origin);
		return -1;
	default:
		fidx_error("cannot open database '%s'%s: %s", fidx_quote(path), origin,
			   strerror(errno));
		return -1;
	}
}

/*
 * Whether the main file q reads as immutable changed since it was taken (a
 * writer that is not fidx): says so once, and returns true.
 */
static bool moved(const struct fidx_query *q)
{
	if (!q->hold || !fidx_dbfile_moved(q->path, &q->hold->file))
		return false;
	if (!q->hold->told)
		fidx_error("database '%s' changed while it was read (written by a program other than"
			   " fidx): the answer may be wrong; run the command again",
			   fidx_quote(q->path));
	q->hold->told = true;
	return true;
}

int fidx_query_fail(const struct fidx_query *q)
{
	if (!moved(q))
		fidx_error("cannot read database '%s'%s: %s", fidx_quote(q->path), q->origin,
			   fidx_sqlite_why(q->db));
	return 2;
}

sqlite3_stmt *fidx_query_prepare(const struct fidx_query *q, const char *sql)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(q->db, sql, -1, &s, NULL) != SQLITE_OK) {
		fidx_query_fail(q);
		return NULL;
	}
	return s;
}

/*
 * Opens q->path read-only and hardened (store_sqlite.h), as an immutable file
 * when immutable is set.  Returns 0, or -1 after printing why.
 */
static int connect_read(struct fidx_query *q, bool immutable)
{
	char *uri = NULL;
	int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;

	if (immutable) {
		/* file:PATH?immutable=1, PATH percent-encoded but for unreserved bytes. */
		size_t len = strlen(q->path);
		if (!(uri = malloc(3 * len + 32))) {
			fidx_error("out of memory");
			return -1;
		}
		char *o = uri + sprintf(uri, "file:");
		for (const unsigned char *p = (const unsigned char *)q->path; *p; p++) {
			if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || strchr("/._-~", *p))
				*o++ = (char)*p;
			else
				o += sprintf(o, "%%%02X", *p);
		}
		strcpy(o, "?immutable=1");
		flags |= SQLITE_OPEN_URI;
	}
	int rc = sqlite3_open_v2(uri ? uri : q->path, &q->db, flags, NULL);
	free(uri);
	if (rc != SQLITE_OK) {
		if (q->db)
			fidx_error("cannot open database '%s'%s: %s", fidx_quote(q->path), q->origin,
				   fidx_sqlite_why(q->db));
		else
			fidx_error("cannot open database '%s'%s: out of memory", fidx_quote(q->path),
				   q->origin);
		return -1;
	}
	if (fidx_sqlite_harden(q->db, true) < 0) {
		fidx_error("cannot open database '%s': SQLite cannot turn triggers and views off",
			   fidx_quote(q->path));
		return -1;
	}
	sqlite3_busy_timeout(q->db, BUSY_TIMEOUT_MS);
	return 0;
}

/*
 * Opens q->path as an immutable file under the reader lock (dbfile.h), when
 * at_rest, only if no connection is open on it.  Returns 1 when it did, 0
 * when it is to be read through SQLite's locks instead, -1 after printing
 * why it cannot be opened.
 */
static int connect_still(struct fidx_query *q, bool at_rest)
{
	struct fidx_query_hold *h = calloc(1, sizeof(*h));
	if (!h) {
		fidx_error("out of memory");
		return -1;
	}
	if (!fidx_dbfile_hold(q->path, at_rest, &h->file)) {
		free(h);
		return 0;
	}
	q->hold = h;
	return connect_read(q, true) < 0 ? -1 : 1;
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
 * Whether SQLite's failure to read q's database is that it could not make
 * the WAL's shared-memory file beside it: a folder this user cannot write
 * (READONLY_DIRECTORY), or a read-only mount (plain CANTOPEN, with the
 * folder not writable).
 */
static bool cannot_share(const struct fidx_query *q)
{
	int ext = sqlite3_extended_errcode(q->db);
	if (ext == SQLITE_READONLY_DIRECTORY)
		return true;
	if ((ext & 0xff) != SQLITE_CANTOPEN)
		return false;
	char dir[PATH_MAX];
	const char *slash = strrchr(q->path, '/');
	if (!slash)
		return access(".", W_OK) != 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - q->path) + (slash == q->path), q->path);
	return access(dir, W_OK) != 0;
}

/*
 * Reads application_id and user_version through SQLite (the header may lag
 * behind the WAL) and checks them.  A WAL database in a folder this user
 * cannot write (evidence on read-only media, another user's database) cannot
 * create its shared-memory file: when no WAL content is pending, it is read
 * as an immutable file instead (under the reader lock, when it can be had).
 * Returns 0, or -1 after printing why.
 */
static int check_version(struct fidx_query *q)
{
	static const char sql[] = "SELECT (SELECT application_id FROM pragma_application_id),"
				  " (SELECT user_version FROM pragma_user_version)";
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(q->db, sql, -1, &s, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && !q->hold && cannot_share(q) && no_wal(q->path)) {
		sqlite3_finalize(s);
		sqlite3_close(q->db);
		q->db = NULL;
		int held = connect_still(q, false);
		if (held < 0 || (held == 0 && connect_read(q, true) < 0))
			return -1;
		rc = sqlite3_prepare_v2(q->db, sql, -1, &s, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(s);
	}
	if (rc != SQLITE_ROW) {
		char why[8192];
		int code = sqlite3_errcode(q->db) & 0xff;
		if ((code == SQLITE_CANTOPEN || code == SQLITE_READONLY || code == SQLITE_PERM) &&
		    fidx_dbfile_why(q->path, false, -1, why, sizeof(why)) < 0)
			fidx_error("%s", why);
		else
			fidx_query_fail(q);
		sqlite3_finalize(s);
		return -1;
	}
	long long app = sqlite3_column_int64(s, 0), version = sqlite3_column_int64(s, 1);
	sqlite3_finalize(s);
	if (app != FIDX_APPLICATION_ID) {
		fidx_error("'%s'%s is not a fidx database", fidx_quote(q->path), q->origin);
		return -1;
	}
	if (version < 1 || version > FIDX_SCHEMA_VERSION) {
		fidx_error("database '%s'%s has schema version %lld; this fidx knows %d",
			   fidx_quote(q->path), q->origin, version, FIDX_SCHEMA_VERSION);
		return -1;
	}
	q->version = (int)version;
	return 0;
}

/*
 * Says once when the schema holds objects fidx did not create: they are read
 * around, never run (views and triggers are off on this connection).
 * Returns 0, or -1 after printing why the schema cannot be read.
 */
static int check_schema(struct fidx_query *q)
{
	char list[1024];
	int n = fidx_sqlite_foreign(q->db, q->version, list, sizeof(list));
	if (n < 0) {
		if (!moved(q))
			fidx_error("cannot read database '%s': %s", fidx_quote(q->path), list);
		return -1;
	}
	if (n > 0)
		fidx_warn("database '%s' holds schema objects fidx did not create (%s); reading it"
			  " without running them", fidx_quote(q->path), list);
	return 0;
}

/*
 * Parses "3" or "3,5,9" into the TEMP table, checking that each scan exists.
 * Returns 0, or -1 after printing why.
 */
static int select_listed(struct fidx_query *q, const char *spec, sqlite3_stmt *add)
{
	sqlite3_stmt *find = fidx_query_prepare(q, "SELECT root FROM scan WHERE id = ?");
	const char *p = spec;
	int ret = -1;

	if (!find)
		return -1;
	for (;;) {
		char *end;
		errno = 0;
		long long id = strtoll(p, &end, 10);
		if (errno || end == p || *p == '-' || *p == '+' || (*end && *end != ',') || id < 1) {
			fidx_error("invalid --scan '%s': expected scan ids such as 3 or 3,5",
				   fidx_quote(spec));
			goto out;
		}
		sqlite3_bind_int64(find, 1, id);
		int rc = sqlite3_step(find);
		if (rc == SQLITE_DONE) {
			fidx_error("database '%s' has no scan %lld ('fidx scans' lists them)",
				   fidx_quote(q->path), id);
			goto out;
		}
		if (rc != SQLITE_ROW) {
			fidx_query_fail(q);
			goto out;
		}
		sqlite3_bind_int64(add, 1, id);
		sqlite3_bind_value(add, 2, sqlite3_column_value(find, 0));
		rc = sqlite3_step(add);
		if (rc != SQLITE_DONE) {
			fidx_query_fail(q);
			goto out;
		}
		sqlite3_reset(add);
		sqlite3_reset(find);
		if (!*end)
			break;
		p = end + 1;
	}
	ret = 0;
out:
	sqlite3_finalize(find);
	return ret;
}

/* A complete scan, as the default selection weighs it. */
struct candidate {
	int64_t id;
	char *root;           /* scan.root (bytes) */
	unsigned digests;     /* the digests it computed (all, when its options do not say) */
	bool chosen;          /* selected */
};

/* Whether path lies in the tree of root (is root, or below it). */
static bool in_tree(const char *path, const char *root)
{
	size_t n = strlen(root);
	if (strcmp(root, "/") == 0)
		return true;
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/*
 * Reads every complete scan of q into *out (ascending ids).  Returns the
 * count, or -1 after printing why.
 */
static ssize_t read_candidates(struct fidx_query *q, struct candidate **out)
{
	sqlite3_stmt *s = fidx_query_prepare(q, "SELECT id, root, CASE WHEN json_valid(options)"
					     " THEN json_extract(options, '$.hash') END FROM scan"
					     " WHERE status = 'complete' ORDER BY id");
	struct candidate *c = NULL;
	size_t n = 0, cap = 0;
	int rc;
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			struct candidate *p = realloc(c, ncap * sizeof(*p));
			if (!p)
				goto nomem;
			c = p;
			cap = ncap;
		}
		const char *hash = (const char *)sqlite3_column_text(s, 2);
		unsigned mask;
		if (!hash || fidx_digest_list_parse(hash, &mask) < 0)
			mask = (1u << FIDX_NDIGESTS) - 1;
		c[n] = (struct candidate){.id = sqlite3_column_int64(s, 0), .digests = mask,
					  .root = strdup((const char *)sqlite3_column_text(s, 1))};
		if (!c[n++].root)
			goto nomem;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		fidx_query_fail(q);
		goto fail;
	}
	*out = c;
	return (ssize_t)n;
nomem:
	sqlite3_finalize(s);
	fidx_error("out of memory");
fail:
	for (size_t i = 0; i < n; i++)
		free(c[i].root);
	free(c);
	return -1;
}

/*
 * The default selection (docs/SCHEMA.md, "The scans shown"): per root, its
 * newest complete scan (with digests, the newest that computed one of them;
 * a root without such a scan is passed over when it lies in the tree of one
 * chosen, else its newest is taken, for the command to say what it lacks);
 * then a chosen scan whose root lies in the tree of a newer chosen one is
 * dropped (the newer one shows its paths).  Marks the chosen in c.
 */
static void choose_default(struct candidate *c, size_t n, unsigned digests)
{
	for (size_t i = 0; i < n; i++) {
		/* Whether a scan of this root computed the digests asked for. */
		bool any_usable = false;
		for (size_t k = 0; k < n && digests; k++)
			any_usable |= strcmp(c[k].root, c[i].root) == 0 && (c[k].digests & digests);
		bool counts = !digests || !any_usable || (c[i].digests & digests);
		bool newer = false;
		for (size_t k = i + 1; k < n && counts && !newer; k++)
			newer = strcmp(c[k].root, c[i].root) == 0 &&
				(!digests || !any_usable || (c[k].digests & digests));
		c[i].chosen = counts && !newer;
	}
	/* A root lacking the digests, in the tree of a chosen scan that has them: that one's. */
	for (size_t i = 0; digests && i < n; i++) {
		if (!c[i].chosen || (c[i].digests & digests))
			continue;
		for (size_t k = 0; k < n; k++)
			if (c[k].chosen && (c[k].digests & digests) && in_tree(c[i].root, c[k].root)) {
				c[i].chosen = false;
				break;
			}
	}
	/* A chosen scan inside a newer chosen one's tree is shown from that one. */
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n && c[i].chosen; k++)
			if (c[k].chosen && in_tree(c[i].root, c[k].root))
				c[i].chosen = false;
}

/*
 * Notes, for each selected scan, the roots of the newer selected scans in
 * its tree: paths there are shown from those (TEMP table hidden_tree and
 * q->hidden).  Returns 0, or -1 after printing why.
 */
static int note_hidden(struct fidx_query *q, struct candidate *c, size_t n)
{
	sqlite3_stmt *add = NULL;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = i + 1; c[i].chosen && k < n; k++) {
			if (!c[k].chosen || !in_tree(c[k].root, c[i].root))
				continue;
			struct fidx_query_hidden *h = realloc(q->hidden, (q->nhidden + 1) * sizeof(*h));
			if (!h) {
				fidx_error("out of memory");
				goto fail;
			}
			q->hidden = h;
			h[q->nhidden] = (struct fidx_query_hidden){c[i].id, strdup(c[k].root)};
			if (!h[q->nhidden++].root) {
				fidx_error("out of memory");
				goto fail;
			}
			if (!add && !(add = fidx_query_prepare(q, "INSERT OR IGNORE INTO hidden_tree"
							     " VALUES (?, ?)")))
				goto fail;
			sqlite3_bind_int64(add, 1, c[i].id);
			sqlite3_bind_text(add, 2, c[k].root, -1, SQLITE_STATIC);
			if (sqlite3_step(add) != SQLITE_DONE) {
				fidx_query_fail(q);
				goto fail;
			}
			sqlite3_reset(add);
		}
	}
	sqlite3_finalize(add);
	return 0;
fail:
	sqlite3_finalize(add);
	return -1;
}

/*
 * Fills the TEMP tables selected_scan (and hidden_tree) and q->scans from
 * spec (NULL: the default selection, for digests when not 0; every scan
 * when every).  Returns 0, or -1 after printing why.
 */
static int select_scans(struct fidx_query *q, const char *spec, bool every, unsigned digests)
{
	sqlite3_stmt *s;
	int ret = -1;

	if (sqlite3_exec(q->db, "DROP TABLE IF EXISTS temp.selected_scan;"
				" DROP TABLE IF EXISTS temp.hidden_tree;"
				" CREATE TEMP TABLE selected_scan (id INTEGER PRIMARY KEY,"
				" root TEXT NOT NULL);"
				" CREATE TEMP TABLE hidden_tree (scan_id INTEGER NOT NULL,"
				" root TEXT NOT NULL, PRIMARY KEY (scan_id, root))",
			 NULL, NULL, NULL) != SQLITE_OK)
		return fidx_query_fail(q), -1;
	for (size_t i = 0; i < q->nhidden; i++)
		free(q->hidden[i].root);
	free(q->hidden);
	q->hidden = NULL;
	for (size_t i = 0; i < q->nscans; i++)
		free(q->roots[i]);
	free(q->roots);
	free(q->scans);
	q->roots = NULL;
	q->scans = NULL;
	q->nhidden = q->nscans = 0;
	q->by_default = !spec && !every;
	if (spec) {
		/* OR IGNORE: a repeated id is kept once. */
		if (!(s = fidx_query_prepare(q, "INSERT OR IGNORE INTO selected_scan VALUES (?, ?)")))
			return -1;
		ret = select_listed(q, spec, s);
		sqlite3_finalize(s);
		if (ret < 0)
			return -1;
	} else if (every) {
		if (sqlite3_exec(q->db, "INSERT INTO selected_scan SELECT id, root FROM scan", NULL,
				 NULL, NULL) != SQLITE_OK)
			return fidx_query_fail(q), -1;
	} else {
		struct candidate *c = NULL;
		ssize_t n = read_candidates(q, &c);
		if (n < 0)
			return -1;
		choose_default(c, (size_t)n, digests);
		s = fidx_query_prepare(q, "INSERT INTO selected_scan VALUES (?, ?)");
		for (ssize_t i = 0; s && i < n; i++) {
			if (!c[i].chosen)
				continue;
			sqlite3_bind_int64(s, 1, c[i].id);
			sqlite3_bind_text(s, 2, c[i].root, -1, SQLITE_STATIC);
			if (sqlite3_step(s) != SQLITE_DONE) {
				fidx_query_fail(q);
				sqlite3_finalize(s);
				s = NULL;
				break;
			}
			sqlite3_reset(s);
		}
		int hidden = s ? note_hidden(q, c, (size_t)n) : -1;
		sqlite3_finalize(s);
		for (ssize_t i = 0; i < n; i++)
			free(c[i].root);
		free(c);
		if (!s || hidden < 0)
			return -1;
	}

	if (!(s = fidx_query_prepare(q, "SELECT id, root FROM selected_scan ORDER BY id")))
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (q->nscans == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			int64_t *n = realloc(q->scans, ncap * sizeof(*n));
			char **r = n ? realloc(q->roots, ncap * sizeof(*r)) : NULL;
			if (n)
				q->scans = n;
			if (!r) {
				fidx_error("out of memory");
				goto out;
			}
			q->roots = r;
			cap = ncap;
		}
		const char *root = (const char *)sqlite3_column_text(s, 1);
		if (!(q->roots[q->nscans] = strdup(root ? root : ""))) {
			fidx_error("out of memory");
			goto out;
		}
		q->scans[q->nscans++] = sqlite3_column_int64(s, 0);
	}
	if (rc != SQLITE_DONE) {
		fidx_query_fail(q);
		goto out;
	}
	if (q->nscans == 0 && !every) {
		fidx_error("database '%s' has no complete scan ('fidx scans' lists its scans;"
			   " --scan ID reads one that is not complete)", fidx_quote(q->path));
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(s);
	return ret;
}

int fidx_query_select_digests(struct fidx_query *q, const struct fidx_query_args *a,
			      unsigned digests)
{
	if (a->scan || a->every_scan)
		return 0;
	return select_scans(q, NULL, false, digests);
}

const char *fidx_query_shown(const struct fidx_query *q, const char *alias)
{
	static _Thread_local char buf[512];
	if (!q->nhidden)
		return "1";
	snprintf(buf, sizeof(buf), "NOT EXISTS (SELECT 1 FROM hidden_tree h WHERE h.scan_id ="
		 " %1$s.scan_id AND (%1$s.path = h.root OR (%1$s.path > h.root || '/' AND"
		 " %1$s.path < h.root || '0')))", alias);
	return buf;
}

bool fidx_query_path_shown(const struct fidx_query *q, int64_t scan, const char *path)
{
	for (size_t i = 0; i < q->nhidden; i++)
		if (q->hidden[i].scan_id == scan && in_tree(path, q->hidden[i].root))
			return false;
	return true;
}

/* Closes the connection, drops the reader lock and frees q.  NULL is allowed. */
static void query_free(struct fidx_query *q)
{
	if (!q)
		return;
	sqlite3_close(q->db);
	if (q->hold)
		fidx_dbfile_release(&q->hold->file);
	free(q->hold);
	for (size_t i = 0; i < q->nscans; i++)
		free(q->roots[i]);
	free(q->roots);
	for (size_t i = 0; i < q->nhidden; i++)
		free(q->hidden[i].root);
	free(q->hidden);
	free(q->scans);
	free(q->path);
	free(q);
}

struct fidx_rowcheck *fidx_query_rowcheck(const struct fidx_query *q, sqlite3_stmt *s,
					  uint64_t columns)
{
	struct fidx_rowcheck *c = fidx_rowcheck_new(s, columns);
	for (size_t i = 0; c && i < q->nscans; i++) {
		if (fidx_rowcheck_root(c, q->scans[i], q->roots[i]) < 0) {
			fidx_rowcheck_free(c);
			c = NULL;
		}
	}
	if (!c)
		fidx_error("out of memory");
	return c;
}

int fidx_query_damaged(const struct fidx_query *q, const char *what)
{
	fidx_error("database '%s' is damaged: %s", fidx_quote(q->path), what);
	return 2;
}

int fidx_query_check_scan(const struct fidx_query *q, int64_t id)
{
	sqlite3_stmt *s = fidx_query_prepare(q, id ? "SELECT * FROM scan WHERE id = ?"
						   : "SELECT * FROM scan WHERE id IN"
						     " (SELECT id FROM selected_scan) ORDER BY id");
	if (s)
		sqlite3_bind_int64(s, 1, id);
	struct fidx_rowcheck *c = s ? fidx_query_rowcheck(q, s, FIDX_ROWCHECK_ALL) : NULL;
	const char *what = NULL;
	int rc = SQLITE_DONE;
	while (c && !what && (rc = sqlite3_step(s)) == SQLITE_ROW)
		what = fidx_rowcheck(c, s);
	if (what)
		fidx_query_damaged(q, what);
	else if (c && rc != SQLITE_DONE)
		fidx_query_fail(q);
	fidx_rowcheck_free(c);
	sqlite3_finalize(s);
	return c && !what && rc == SQLITE_DONE ? 0 : -1;
}

struct fidx_query *fidx_query_open(const struct fidx_query_args *a)
{
	const char *path = fidx_cli_db(a->db);
	struct fidx_query *q;

	if (check_file(path, fidx_cli_db_origin(path)) < 0)
		return NULL;
	if (!(q = calloc(1, sizeof(*q))) || !(q->path = strdup(path))) {
		free(q);
		fidx_error("out of memory");
		return NULL;
	}
	q->origin = fidx_cli_db_origin(path);
	int held = connect_still(q, true);
	if (held < 0 || (held == 0 && connect_read(q, false) < 0) || check_version(q) < 0 ||
	    check_schema(q) < 0 || select_scans(q, a->scan, a->every_scan, a->digests) < 0 ||
	    (!a->raw && fidx_query_check_scan(q, 0) < 0))
		goto fail;
	return q;
fail:
	query_free(q);
	return NULL;
}

int fidx_query_close(struct fidx_query *q)
{
	if (!q)
		return 0;
	sqlite3_close(q->db);
	q->db = NULL;
	bool changed = moved(q);
	query_free(q);
	return changed ? -1 : 0;
}

uint64_t fidx_query_rows(const struct fidx_query *q, bool files)
{
	sqlite3_stmt *s = NULL;
	uint64_t n = 0;
	const char *sql = files ? "SELECT sum(coalesce(s.files, (SELECT count(*) FROM file f"
				  " WHERE f.scan_id = s.id AND f.type = 'f'))) FROM scan s"
				  " WHERE s.id IN (SELECT id FROM selected_scan)"
				: "SELECT sum(coalesce(s.entries, (SELECT count(*) FROM file f"
				  " WHERE f.scan_id = s.id))) FROM scan s"
				  " WHERE s.id IN (SELECT id FROM selected_scan)";
	if (sqlite3_prepare_v2(q->db, sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int64(s, 0) > 0)
		n = (uint64_t)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}
