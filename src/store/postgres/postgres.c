/*
 * postgres.c - the PostgreSQL backend's ops table: which targets it claims,
 * connecting, opening and closing, the schema, and the SQL helpers the
 * other files share (postgres.h).
 *
 * Each connection clears its search_path, so that every name fidx uses is
 * either qualified (fidx.scan) or pg_catalog's: nothing another role made in
 * a schema of the database can stand in for a table, a function or an
 * operator of fidx's statements.
 *
 * The schema is made by the first scan written into a database, under an
 * advisory lock (so that many hosts starting at once make it once), in the
 * transaction that begins that scan: a WRITE store that begins no scan
 * leaves the database as it found it.
 */
#include "postgres.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seal.h"
#include "sysinfo.h"

/* The key of the advisory lock taken while the schema is made ("fidx" in ASCII). */
#define SCHEMA_LOCK 0x66696478

/* Rows per transaction unless told (a COPY per batch: larger batches pay off). */
#define DEFAULT_BATCH_ROWS 20000

void pg_put64(void *dst, int64_t v)
{
	uint64_t u = (uint64_t)v;
	uint32_t hi = htonl((uint32_t)(u >> 32)), lo = htonl((uint32_t)u);
	memcpy(dst, &hi, 4);
	memcpy((char *)dst + 4, &lo, 4);
}

int64_t pg_get64(const void *src)
{
	uint32_t hi, lo;
	memcpy(&hi, src, 4);
	memcpy(&lo, (const char *)src + 4, 4);
	return (int64_t)((uint64_t)ntohl(hi) << 32 | ntohl(lo));
}

void pg_param_int(struct pg_params *p, int64_t v)
{
	int i = p->n++;
	pg_put64(p->ints[i], v);
	p->values[i] = p->ints[i];
	p->lengths[i] = 8;
	p->formats[i] = 1;
	p->types[i] = PG_INT8;
}

void pg_param_bytes(struct pg_params *p, const void *v, size_t n)
{
	int i = p->n++;
	/* An empty value is not NULL: it needs a pointer all the same. */
	p->values[i] = v ? (n ? v : "") : NULL;
	p->lengths[i] = v ? (int)n : 0;
	p->formats[i] = 1;
	p->types[i] = PG_BYTEA;
}

void pg_param_text(struct pg_params *p, const char *s)
{
	int i = p->n++;
	p->values[i] = s;
	p->lengths[i] = 0;
	p->formats[i] = 0;
	p->types[i] = 0;
}

void pg_param_null(struct pg_params *p, Oid type)
{
	pg_param_bytes(p, NULL, 0);
	p->types[p->n - 1] = type;
}

void pg_param_str(struct pg_params *p, const char *s)
{
	pg_param_bytes(p, s, s ? strlen(s) : 0);
}

int64_t pg_int(const PGresult *res, int r, int c)
{
	if (PQgetisnull(res, r, c) || PQgetlength(res, r, c) != 8)
		return 0;
	return pg_get64(PQgetvalue(res, r, c));
}

const char *pg_first_line(const char *s, char *buf, size_t size)
{
	if (!s || !*s)
		return snprintf(buf, size, "unknown error"), buf;
	if (strncmp(s, "ERROR:  ", 8) == 0 || strncmp(s, "FATAL:  ", 8) == 0)
		s += 8;
	size_t n = strcspn(s, "\n");
	while (n && (s[n - 1] == '\r' || s[n - 1] == ' '))
		n--;
	snprintf(buf, size, "%.*s", (int)n, s);
	return buf;
}

const char *pg_result_why(const PGresult *res, char *buf, size_t size)
{
	pg_first_line(res ? PQresultErrorMessage(res) : NULL, buf, size);
	/* A server it could not reach on the way (postgres_fdw: "could not connect to server
	 * \"shard_b\""): where, from the first line of the detail. */
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	if (state && strncmp(state, "08", 2) == 0 && detail && *detail) {
		size_t len = strlen(buf);
		if (len + 3 < size) {
			memcpy(buf + len, ": ", 3);
			pg_first_line(detail, buf + len + 2, size - len - 2);
		}
	}
	return buf;
}

int pg_fail(struct pg_store *st, struct fidx_error *err, const char *verb, const char *why)
{
	char line[1024];
	if (!why)
		why = pg_first_line(st->conn ? PQerrorMessage(st->conn) : NULL, line, sizeof(line));
	int code = st->conn && PQstatus(st->conn) != CONNECTION_OK ? ECONNRESET : EIO;
	return fidx_fail(err, code, "cannot %s database '%s'%s: %s", verb, fidx_quote(st->name),
			 st->origin, why);
}

PGresult *pg_exec(struct pg_store *st, const char *sql, const struct pg_params *params,
		  const char *verb, struct fidx_error *err)
{
	PGresult *res;
	if (params)
		res = PQexecParams(st->conn, sql, params->n, params->types, params->values,
				   params->lengths, params->formats, 1);
	else
		res = PQexecParams(st->conn, sql, 0, NULL, NULL, NULL, NULL, 1);
	ExecStatusType s = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK)
		return res;
	char line[1024];
	const char *why = res ? PQresultErrorMessage(res) : NULL;
	pg_fail(st, err, verb, why && *why ? pg_result_why(res, line, sizeof(line)) : NULL);
	PQclear(res);
	return NULL;
}

int pg_run(struct pg_store *st, const char *sql, const struct pg_params *params,
	   const char *verb, struct fidx_error *err)
{
	PGresult *res = pg_exec(st, sql, params, verb, err);
	PQclear(res);
	return res ? 0 : -1;
}

int pg_ready(struct pg_store *st, struct fidx_error *err)
{
	return st->in_copy ? pg_flush(&st->base, err) : 0;
}

int pg_begin(struct pg_store *st, struct fidx_error *err)
{
	if (st->in_txn)
		return 0;
	if (pg_run(st, "BEGIN", NULL, "write", err) < 0)
		return -1;
	st->in_txn = true;
	return 0;
}

int pg_commit(struct pg_store *st, struct fidx_error *err)
{
	if (!st->in_txn)
		return 0;
	if (pg_run(st, "COMMIT", NULL, "write", err) < 0) {
		pg_rollback(st);
		return -1;
	}
	st->in_txn = false;
	return 0;
}

void pg_rollback(struct pg_store *st)
{
	if (st->in_copy) {
		PQputCopyEnd(st->conn, "rolled back");
		PGresult *res;
		while ((res = PQgetResult(st->conn)))
			PQclear(res);
		st->in_copy = false;
	}
	st->ncopy = 0;
	if (st->in_txn) {
		PQclear(PQexec(st->conn, "ROLLBACK"));
		st->in_txn = false;
	}
	st->pending = 0;
	/* Rows a running seal took are gone: the scans are read back when they end. */
	for (size_t i = 0; i < st->nscans; i++) {
		fidx_seal_sum_free(st->scans[i].sum);
		st->scans[i].sum = NULL;
		st->scans[i].nhashes = 0;
	}
}

int pg_cursor_open(struct pg_store *st, struct pg_cursor *c, const char *sql,
		   const struct pg_params *params, struct fidx_error *err)
{
	if (pg_ready(st, err) < 0)
		return -1;
	if (!st->in_txn) {
		const char *begin = st->base.mode == FIDX_STORE_READ ? "BEGIN READ ONLY" : "BEGIN";
		if (pg_run(st, begin, NULL, "read", err) < 0)
			return -1;
		st->in_txn = st->cursor_txn = true;
	}
	snprintf(c->name, sizeof(c->name), "fidx_cursor_%u", ++st->cursors);
	size_t n = strlen(sql) + 64;
	char *declare = malloc(n);
	if (!declare)
		return fidx_fail_nomem(err);
	snprintf(declare, n, "DECLARE %s NO SCROLL CURSOR FOR %s", c->name, sql);
	int rc = pg_run(st, declare, params, "read", err);
	free(declare);
	if (rc == 0)
		st->ncursors++;
	else if (st->cursor_txn && !st->ncursors)
		pg_rollback(st);
	return rc;
}

PGresult *pg_cursor_fetch(struct pg_store *st, struct pg_cursor *c, int n, struct fidx_error *err)
{
	char sql[80];
	snprintf(sql, sizeof(sql), "FETCH FORWARD %d FROM %s", n, c->name);
	return pg_exec(st, sql, NULL, "read", err);
}

void pg_cursor_close(struct pg_store *st, struct pg_cursor *c)
{
	char sql[64];
	snprintf(sql, sizeof(sql), "CLOSE %s", c->name);
	PQclear(PQexec(st->conn, sql));
	if (--st->ncursors == 0 && st->cursor_txn) {
		PQclear(PQexec(st->conn, "COMMIT"));
		st->in_txn = st->cursor_txn = false;
	}
}

/* ------------------------------------------------------------- targets --- */

/* Reads a big-endian 32-bit integer. */
static uint32_t get32(const char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return ntohl(v);
}

/* Most columns a COPY read by pg_copy_out() may have. */
#define COPY_MAX_FIELDS 64

/*
 * Parses the tuples of one message of a binary COPY (the file header first
 * in the first one) into fn's calls.  Returns 1 at the trailer, 0 for more,
 * -1 with err set.
 */
static int copy_tuples(struct pg_store *st, const char *buf, size_t len, bool first,
		       int nfields, pg_tuple_fn *fn, void *arg, struct fidx_error *err)
{
	static const char signature[11] = "PGCOPY\n\377\r\n\0";
	const char *val[COPY_MAX_FIELDS];
	int32_t vlen[COPY_MAX_FIELDS];
	size_t p = 0;
	if (first) {
		if (len < 19 || memcmp(buf, signature, sizeof(signature)) != 0 ||
		    get32(buf + 15) > len - 19)
			goto bad;
		p = 19 + get32(buf + 15);
	}
	while (p + 2 <= len) {
		int16_t n = (int16_t)((uint8_t)buf[p] << 8 | (uint8_t)buf[p + 1]);
		p += 2;
		if (n == -1)
			return 1;
		if (n != nfields)
			goto bad;
		for (int c = 0; c < n; c++) {
			if (p + 4 > len)
				goto bad;
			vlen[c] = (int32_t)get32(buf + p);
			p += 4;
			val[c] = buf + p;
			if (vlen[c] < 0)
				continue;
			if ((size_t)vlen[c] > len - p)
				goto bad;
			p += (size_t)vlen[c];
		}
		if (fn(arg, n, val, vlen, err) < 0)
			return -1;
	}
	if (p == len)
		return 0;
bad:
	return fidx_fail(err, EPROTO, "cannot read database '%s'%s: a row of the COPY stream is"
			 " not what was asked for", fidx_quote(st->name), st->origin);
}

int pg_drain(struct pg_store *st, int rc, const char *verb, struct fidx_error *err)
{
	PGresult *res;
	while ((res = PQgetResult(st->conn))) {
		if (rc == 0 && PQresultStatus(res) != PGRES_COMMAND_OK) {
			char line[1024];
			rc = pg_fail(st, err, verb, pg_result_why(res, line, sizeof(line)));
		}
		PQclear(res);
	}
	return rc;
}

int pg_copy_out(struct pg_store *st, const char *sql, int nfields, pg_tuple_fn *fn, void *arg,
		struct fidx_error *err)
{
	if (nfields > COPY_MAX_FIELDS)
		return fidx_fail(err, EINVAL, "cannot read database '%s'%s: too many columns",
				 fidx_quote(st->name), st->origin);
	if (pg_ready(st, err) < 0)
		return -1;
	PGresult *res = PQexec(st->conn, sql);
	if (!res || PQresultStatus(res) != PGRES_COPY_OUT) {
		char line[1024];
		pg_fail(st, err, "read", res ? pg_result_why(res, line, sizeof(line)) : NULL);
		PQclear(res);
		return -1;
	}
	PQclear(res);
	int rc = 0, done = 0, n;
	bool first = true;
	char *buf;
	while ((n = PQgetCopyData(st->conn, &buf, 0)) > 0) {
		if (rc == 0 && !done)
			rc = (done = copy_tuples(st, buf, (size_t)n, first, nfields, fn, arg, err)) < 0
			     ? -1 : 0;
		first = false;
		PQfreemem(buf);
	}
	if (n == -2 && rc == 0)
		rc = pg_fail(st, err, "read", NULL);
	rc = pg_drain(st, rc, "read", err);
	if (rc == 0 && done != 1)
		rc = fidx_fail(err, EPROTO, "cannot read database '%s'%s: the COPY stream ended"
			       " early", fidx_quote(st->name), st->origin);
	return rc;
}

/* Whether target starts with a libpq URI's scheme. */
static bool is_uri(const char *target)
{
	return strncmp(target, "postgresql://", 13) == 0 || strncmp(target, "postgres://", 11) == 0;
}

/*
 * Whether target is a libpq URI, or a conninfo string: "key=value" pairs of
 * libpq's keywords ("host=db1 dbname=fleet").  A file whose name looks like
 * one is named with a folder: ./dbname=x.
 */
static bool pg_claims(const char *target)
{
	if (is_uri(target))
		return true;
	if (!strchr(target, '=') || target[0] == '/' || target[0] == '.')
		return false;
	char *why = NULL;
	PQconninfoOption *o = PQconninfoParse(target, &why);
	PQfreemem(why);
	PQconninfoFree(o);
	return o != NULL;
}

/* Appends to *s (of *len bytes, malloc'ed) the string add.  Returns false when out of memory. */
static bool append(char **s, size_t *len, const char *add);

/* Appends add percent-encoded (all but [A-Za-z0-9._~-]), as a URI part.  Returns false when out of memory. */
static bool append_pct(char **s, size_t *len, const char *add)
{
	char one[4];
	for (const unsigned char *p = (const unsigned char *)add; *p; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || strchr("._~-", *p);
		snprintf(one, sizeof(one), plain ? "%c" : "%%%02X", *p);
		if (!append(s, len, one))
			return false;
	}
	return true;
}

/* Appends to *s (of *len bytes, malloc'ed) the string add.  Returns false when out of memory. */
static bool append(char **s, size_t *len, const char *add)
{
	size_t n = strlen(add);
	char *p = realloc(*s, *len + n + 1);
	if (!p)
		return false;
	memcpy(p + *len, add, n + 1);
	*s = p;
	*len += n;
	return true;
}

/*
 * The target as messages name it, without its password: a URI that opens
 * it again, "postgresql://user@host:port/dbname" (a unix socket's folder as
 * ?host=).  Returns it malloc'ed, or NULL.
 */
static char *display_name(const char *target)
{
	char *why = NULL;
	PQconninfoOption *opts = PQconninfoParse(target, &why);
	PQfreemem(why);
	if (!opts)
		return strdup(target);
	const char *user = NULL, *host = NULL, *port = NULL, *db = NULL;
	for (PQconninfoOption *o = opts; o->keyword; o++) {
		if (!o->val || !*o->val)
			continue;
		if (!strcmp(o->keyword, "user"))
			user = o->val;
		else if (!strcmp(o->keyword, "host"))
			host = o->val;
		else if (!strcmp(o->keyword, "port"))
			port = o->val;
		else if (!strcmp(o->keyword, "dbname"))
			db = o->val;
	}
	char *s = NULL;
	size_t len = 0;
	bool socket = host && host[0] == '/';
	bool ok = append(&s, &len, "postgresql://");
	if (ok && user)
		ok = append_pct(&s, &len, user) && append(&s, &len, "@");
	if (ok && host && !socket)
		ok = strchr(host, ':') ? append(&s, &len, "[") && append(&s, &len, host) &&
					 append(&s, &len, "]")
				       : append_pct(&s, &len, host);
	if (ok && port)
		ok = append(&s, &len, ":") && append_pct(&s, &len, port);
	ok = ok && append(&s, &len, "/");
	if (ok && db)
		ok = append_pct(&s, &len, db);
	if (ok && socket)
		ok = append(&s, &len, "?host=") && append_pct(&s, &len, host);
	PQconninfoFree(opts);
	if (!ok) {
		free(s);
		return NULL;
	}
	return s;
}

/* libpq's version, as --version shows it. */
static const char *pg_library(void)
{
	static char buf[32];
	int v = PQlibVersion();
	snprintf(buf, sizeof(buf), "libpq %d.%d", v / 10000, v % 10000);
	return buf;
}

/* Drops a notice of the server ("relation already exists, skipping"). */
static void no_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/*
 * The seconds connect_timeout of conn's parameters allows a connection (0:
 * no limit).  libpq counts it per host and at least 2 s; here it bounds the
 * whole attempt, at least 2 s too.
 */
static int connect_seconds(PGconn *conn)
{
	PQconninfoOption *opts = PQconninfo(conn);
	int seconds = 0;
	for (PQconninfoOption *o = opts; o && o->keyword; o++)
		if (strcmp(o->keyword, "connect_timeout") == 0 && o->val)
			seconds = atoi(o->val);
	PQconninfoFree(opts);
	return seconds <= 0 ? 0 : seconds < 2 ? 2 : seconds;
}

/*
 * Drives the connection libpq started until it is made or has failed,
 * waiting on its socket, within connect_timeout.  Returns whether it was
 * made; a timeout leaves a message for connect_to().
 */
static bool finish_connect(PGconn *conn, const char **timed_out)
{
	int seconds = connect_seconds(conn);
	int64_t deadline = fidx_monotonic_ns() + (int64_t)seconds * 1000000000;
	PostgresPollingStatusType ps = PGRES_POLLING_WRITING;
	while (ps != PGRES_POLLING_OK && ps != PGRES_POLLING_FAILED) {
		struct pollfd pfd = {.fd = PQsocket(conn),
				     .events = ps == PGRES_POLLING_READING ? POLLIN : POLLOUT};
		int64_t left = seconds ? deadline - fidx_monotonic_ns() : -1;
		if (seconds && left <= 0) {
			*timed_out = "timeout expired";
			return false;
		}
		int rc = pfd.fd < 0 ? 0 : poll(&pfd, 1, seconds ? (int)(left / 1000000) + 1 : -1);
		if (rc < 0 && errno != EINTR)
			return false;
		if (rc != 0 || pfd.fd < 0)
			ps = PQconnectPoll(conn);
	}
	return ps == PGRES_POLLING_OK;
}

/*
 * Connects to target, quietly (no notices on stderr, from the first message
 * of the server on: a server that dies while it starts a session sends its
 * FATAL as a notice), with an empty search_path.  Returns the connection, or
 * NULL with err set.
 */
static PGconn *connect_to(struct pg_store *st, struct fidx_error *err)
{
	static const char *const keys[] = {"dbname", "fallback_application_name", NULL};
	const char *values[] = {st->target, "fidx", NULL};
	const char *timed_out = NULL;
	st->conn = PQconnectStartParams(keys, values, 1);
	if (!st->conn) {
		fidx_fail_nomem(err);
		return NULL;
	}
	PQsetNoticeProcessor(st->conn, no_notice, NULL);
	if (PQstatus(st->conn) == CONNECTION_BAD || !finish_connect(st->conn, &timed_out) ||
	    PQstatus(st->conn) != CONNECTION_OK) {
		char line[1024];
		pg_first_line(timed_out ? timed_out : PQerrorMessage(st->conn), line, sizeof(line));
		fidx_fail(err, ECONNREFUSED, "cannot open database '%s'%s: %s", fidx_quote(st->name),
			  st->origin, line);
		return NULL;
	}
	/* No schema but those named, and no JIT: fidx's queries are plain reads of many rows,
	 * for which compiling their expressions costs more than it saves (fidx verify of a
	 * million rows: 1.85 s with it, 1.58 s without). */
	if (pg_run(st, "SELECT pg_catalog.set_config('search_path', '', false),"
		   " pg_catalog.set_config('jit', 'off', false)", NULL, "open",
		   err) < 0)
		return NULL;
	return st->conn;
}

/*
 * Reads the schema version of the database into *version (0: no schema
 * fidx).  Returns 0, or -1 with err set.
 */
static int read_version(struct pg_store *st, int *version, struct fidx_error *err)
{
	*version = 0;
	/* A query of the catalog, not to_regclass(): its snapshot is the statement's, so
	 * a schema another process committed while this one waited for the lock is seen. */
	PGresult *res = pg_exec(st, "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c"
				" JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
				" WHERE n.nspname = 'fidx' AND c.relname = 'meta')", NULL, "read", err);
	if (!res)
		return -1;
	bool there = PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 1;
	PQclear(res);
	if (!there)
		return 0;
	res = pg_exec(st, "SELECT value FROM fidx.meta WHERE key = 'version'", NULL, "read", err);
	if (!res)
		return -1;
	int v = PQntuples(res) == 1 ? atoi(PQgetvalue(res, 0, 0)) : 0;
	PQclear(res);
	if (v < 1)
		return fidx_fail(err, EBADMSG, "database '%s'%s is damaged: its schema fidx has no"
				 " version", fidx_quote(st->name), st->origin);
	*version = v;
	return 0;
}

/* Frees st and closes its connection. */
static void store_free(struct pg_store *st)
{
	PQclear(st->by_id);
	free(st->by_id_reader);
	PQfinish(st->conn);
	free(st->target);
	free(st->name);
	free(st->origin);
	free(st);
}

static int pg_probe(const char *target, uint32_t *version)
{
	struct fidx_error err;
	struct pg_store *st = calloc(1, sizeof(*st));
	int v = 0, kind = -1;
	if (!st || !(st->target = strdup(target)) || !(st->name = strdup(target)) ||
	    !(st->origin = strdup(""))) {
		errno = ENOMEM;
	} else if (!connect_to(st, &err) || read_version(st, &v, &err) < 0) {
		errno = err.code ? err.code : EIO;
	} else {
		kind = v ? FIDX_STORE_FIDX : FIDX_STORE_NONE;
		if (version)
			*version = (uint32_t)v;
	}
	if (st)
		store_free(st);
	return kind;
}

static struct fidx_store *pg_open(const char *target, enum fidx_store_mode mode,
				  const struct fidx_store_opts *opts, struct fidx_error *err)
{
	struct pg_store *st = calloc(1, sizeof(*st));
	if (!st || !(st->target = strdup(target)) || !(st->name = display_name(target)) ||
	    !(st->origin = strdup(opts->origin ? opts->origin : ""))) {
		if (st)
			store_free(st);
		fidx_fail_nomem(err);
		return NULL;
	}
	st->base.ops = &fidx_store_postgres;
	st->base.mode = mode;
	st->batch_rows = opts->batch_rows ? opts->batch_rows : DEFAULT_BATCH_ROWS;
	st->staged = -1;
	int version = 0;
	if (mode == FIDX_STORE_SCRATCH) {
		fidx_fail(err, EINVAL, "database '%s': a scratch database is a local file, not a"
			  " server", fidx_quote(st->name));
		goto fail;
	}
	if (!connect_to(st, err) || read_version(st, &version, err) < 0)
		goto fail;
	if (version > PG_SCHEMA_VERSION) {
		fidx_fail(err, EPROTONOSUPPORT, "database '%s'%s has schema version %d, newer than"
			  " this fidx knows (%d): use a newer fidx", fidx_quote(st->name), st->origin,
			  version, PG_SCHEMA_VERSION);
		goto fail;
	}
	/* A schema of an earlier version is brought up to this one by the first write. */
	st->has_schema = version == PG_SCHEMA_VERSION;
	st->has_tables = version != 0;
	st->base.version = version ? version : PG_SCHEMA_VERSION;
	if (mode == FIDX_STORE_READ) {
		if (!version) {
			fidx_fail(err, ENOENT, "database '%s'%s holds no fidx inventory (no scan was"
				  " written to it)", fidx_quote(st->name), st->origin);
			goto fail;
		}
	}
	return &st->base;
fail:
	store_free(st);
	return NULL;
}

static int pg_close(struct fidx_store *base, struct fidx_error *err)
{
	struct pg_store *st = pg_of(base);
	int rc = 0;
	if (base->mode == FIDX_STORE_READ && st->in_txn && !st->cursor_txn) {
		rc = pg_run(st, "COMMIT", NULL, "read", err);
		st->in_txn = false;
	}
	pg_write_close(st);
	store_free(st);
	return rc;
}

static const char *pg_name_of(const struct fidx_store *base)
{
	return ((const struct pg_store *)base)->name;
}

/* A server's database is kept in no file of this machine. */
static const char *const *pg_files(const struct fidx_store *base)
{
	static const char *const none[] = {NULL};
	(void)base;
	return none;
}

/* Version 5 to 6: the image columns (row.h), as the SQLite store's step 6 adds them. */
#define FN_TIME(t) "ADD COLUMN " t "_ns bigint,"
#define FN_TIME_REST(t) "ADD COLUMN " t "_sec bigint, ADD COLUMN " t "_nsec bigint"
#define SCHEMA_V6_SQL \
	"ALTER TABLE fidx.file ADD COLUMN state bytea, ADD COLUMN stream bytea," \
	FN_TIME("fn_atime") FN_TIME("fn_mtime") FN_TIME("fn_ctime") FN_TIME("fn_btime") \
	FN_TIME_REST("fn_atime") "," FN_TIME_REST("fn_mtime") "," \
	FN_TIME_REST("fn_ctime") "," FN_TIME_REST("fn_btime") ";" \
	"UPDATE fidx.meta SET value = '6' WHERE key = 'version'"

/* Version 6 to 7: the attributes (row.h), as the SQLite store's step 7 adds them. */
#define SCHEMA_V7_SQL \
	"ALTER TABLE fidx.file ADD COLUMN attributes bigint;" \
	"UPDATE fidx.meta SET value = '7' WHERE key = 'version'"

/* Version 7 to 8: scans kept as their changes (fidx.scan_delta, as schema.sql makes it,
 * its policies when the roles exist). */
#define SCHEMA_V8_SQL \
	"CREATE TABLE fidx.scan_delta (scan_id bigint PRIMARY KEY, base_id bigint NOT NULL," \
	" depth integer NOT NULL, runs bytea NOT NULL, host_id bigint NOT NULL);" \
	"CREATE INDEX scan_delta_base ON fidx.scan_delta (base_id);" \
	"ALTER TABLE fidx.scan_delta ENABLE ROW LEVEL SECURITY;" \
	"CREATE FUNCTION fidx.scan_of(scan bigint, host bigint) RETURNS boolean" \
	" LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp" \
	" AS $f$ SELECT EXISTS (SELECT 1 FROM fidx.scan s WHERE s.id = $1" \
	" AND s.host_id = $2) $f$;" \
	"REVOKE ALL ON FUNCTION fidx.scan_of(bigint, bigint) FROM PUBLIC;" \
	"DO $$ BEGIN" \
	" IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'fidx_analyst') THEN" \
	"  GRANT SELECT ON fidx.scan_delta TO fidx_analyst;" \
	"  CREATE POLICY analyst_reads ON fidx.scan_delta FOR SELECT TO fidx_analyst" \
	"   USING (true);" \
	" END IF;" \
	" IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'fidx_ingest') THEN" \
	"  GRANT SELECT, INSERT, UPDATE, DELETE ON fidx.scan_delta TO fidx_ingest;" \
	"  GRANT EXECUTE ON FUNCTION fidx.scan_of(bigint, bigint) TO fidx_ingest;" \
	"  CREATE POLICY ingest_own ON fidx.scan_delta TO fidx_ingest" \
	"   USING (host_id IN (SELECT fidx.my_hosts()))" \
	"   WITH CHECK (host_id IN (SELECT fidx.my_hosts())" \
	"    AND fidx.scan_of(scan_id, host_id) AND fidx.scan_of(base_id, host_id));" \
	" END IF;" \
	" END $$;" \
	"UPDATE fidx.meta SET value = '8' WHERE key = 'version'"

/* The steps from a version of the schema on PostgreSQL (5, the first) to the next. */
static const char *const schema_steps[PG_SCHEMA_VERSION] = {
	[5] = SCHEMA_V6_SQL,
	[6] = SCHEMA_V7_SQL,
	[7] = SCHEMA_V8_SQL,
};

int pg_make_schema(struct pg_store *st, struct fidx_error *err)
{
	struct pg_params p = {0};
	int version;
	pg_param_int(&p, SCHEMA_LOCK);
	if (pg_run(st, "SELECT pg_catalog.pg_advisory_xact_lock($1)", &p, "write", err) < 0 ||
	    read_version(st, &version, err) < 0)
		return -1;
	if (version == PG_SCHEMA_VERSION) {
		st->has_schema = st->has_tables = true;
		st->base.version = PG_SCHEMA_VERSION;
		return 0;
	}
	/* Simple-query protocol: several statements in one string, none with values.  A
	 * schema of an earlier version (5, the first on PostgreSQL, or later) gets the
	 * columns of each next one, which its owner alone may add (fidx-pg-setup, or a
	 * first scan by the owner). */
	for (int v = version; v < PG_SCHEMA_VERSION; v++) {
		if (v && !schema_steps[v])
			return fidx_fail(err, EPROTO, "database '%s'%s has schema version %d, which"
					 " this fidx cannot bring up to %d", fidx_quote(st->name),
					 st->origin, v, PG_SCHEMA_VERSION);
		PGresult *res = PQexec(st->conn, v ? schema_steps[v] : fidx_pg_schema_sql);
		if (!res || PQresultStatus(res) != PGRES_COMMAND_OK) {
			char line[1024];
			pg_fail(st, err, "make the schema fidx in", res ? pg_first_line(
					PQresultErrorMessage(res), line, sizeof(line)) : NULL);
			PQclear(res);
			return -1;
		}
		PQclear(res);
		if (!v)
			break;
	}
	if (read_version(st, &version, err) < 0)
		return -1;
	if (version != PG_SCHEMA_VERSION)
		return fidx_fail(err, EPROTO, "schema.sql made version %d, not %d: fidx is built"
				 " wrong", version, PG_SCHEMA_VERSION);
	st->has_schema = st->has_tables = true;
	st->base.version = PG_SCHEMA_VERSION;
	return 0;
}

const struct fidx_store_ops fidx_store_postgres = {
	.name = "postgresql",
	.library = pg_library,
	.claims = pg_claims,
	.probe = pg_probe,
	.open = pg_open,
	.close = pg_close,
	.name_of = pg_name_of,
	.shown = display_name,
	.files = pg_files,
	.begin_scan = pg_begin_scan,
	.claim_scan = pg_claim_scan,
	.resume_scan = pg_resume_scan,
	.add = pg_add,
	.pending = pg_pending,
	.flush = pg_flush,
	.end_scan = pg_end_scan,
	.seal = pg_seal,
	.build_indexes = pg_build_indexes,
	.add_digests = pg_add_digests,
	.push_begin = pg_push_begin,
	.push_delta = pg_push_delta,
	.drop_scans = pg_drop_scans,
	.push_row = pg_push_row,
	.push_end = pg_push_end,
	.scans = pg_scans,
	.rows = pg_rows,
	.rows_by_digest = pg_rows_by_digest,
	.rows_next = pg_rows_next,
	.rows_close = pg_rows_close,
	.row = pg_row,
	.paths = pg_paths,
	.paths_next = pg_paths_next,
	.paths_row = pg_paths_row,
	.paths_close = pg_paths_close,
	.snapshot = pg_snapshot,
	.count = pg_count,
	.verify = pg_verify,
};
