/*
 * postgres.h - what the files of the PostgreSQL backend share: the store, its
 * connection, the SQL helpers.  Nothing outside src/store/postgres/ includes
 * it (or <libpq-fe.h>).
 *
 *     postgres.c     the ops table; targets, connecting, opening, the schema
 *     write.c        scans begun, resumed and ended; rows streamed with COPY
 *     read.c         scan rows, row iterators (cursors), rows by id, paths
 *     seal.c         row hashes kept, seals written and verified
 *     delta.c        scans kept as their changes (schema 8) read whole: the FROM
 *                    item every read goes through; split for find's path index
 *     pathstore.c    the path index of find: built after a scan, read by find
 *
 * A target is a libpq URI (postgresql://...) or a conninfo string
 * ("host=... dbname=..."); libpq's PG* variables fill what it leaves out.
 * fidx keeps everything in the schema `fidx` of that database
 * (docs/SCHEMA.md, "PostgreSQL"): the columns of the SQLite tables, each
 * integer a bigint and each text or blob a bytea (so that every byte of a
 * name round-trips), the file rows keyed by their host, scans by a UUID.
 *
 * Every statement is sent with its values as parameters (binary, never
 * spliced into SQL text), and results are read in binary: a bigint is 8
 * bytes in network order, a bytea its bytes.
 *
 * Writing: file rows go to the server with COPY ... FROM STDIN in binary,
 * one COPY and one transaction per batch; the seal of each scan is computed
 * as its rows are added (the lines are the values sent), and the row hashes
 * of a batch are kept in one row of fidx.seal_batch in the same transaction.
 * Reading: iterators are cursors, in a transaction begun for them (READ
 * ONLY in a READ store) that the last one closed commits, so each query sees
 * what was committed when it began; fidx_store_snapshot() begins one
 * REPEATABLE READ transaction that lasts until close, so every query sees
 * one moment.
 */
#ifndef FIDX_STORE_POSTGRES_H
#define FIDX_STORE_POSTGRES_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"

/*
 * The schema version of fidx on PostgreSQL: the SQLite store's
 * (FIDX_SCHEMA_VERSION, whose file columns it shares) and 8, the scans kept
 * as their changes (fidx.scan_delta), which only the server has.
 */
#define PG_SCHEMA_VERSION 8

/* The longest chain of scans kept as changes: the next push of a host is kept whole
 * (docs/BENCHMARKS.md, "Rescans kept as changes", measures it; a build may set it). */
#ifndef PG_DELTA_DEPTH
#define PG_DELTA_DEPTH 8
#endif

/* File ids per nextval('fidx.file_id'): its INCREMENT BY (write.c). */
#define PG_ID_BLOCK 1048576

/* The most parameters a statement of this backend takes. */
#define PG_MAX_PARAMS 24

/* A scan this store is writing (begun or resumed, not yet ended). */
struct pg_scan {
	int64_t id;                 /* scan.id */
	int64_t sealed_id;          /* the id its seal gives it: where it was made (a pushed
				       scan's origin_id), else id */
	int64_t host_id;            /* host.id of its host */
	int64_t ran_before_ns;      /* run_ns of its earlier runs (a resumed scan) */
	int64_t started_mono;       /* this run's start, fidx_monotonic_ns() */
	struct fidx_seal_sum *sum;  /* its running seal; NULL when it must be read back */
	/* The row hashes of the open batch (fidx.seal_batch): ids, then hashes. */
	uint8_t *ids, *hashes;
	size_t nhashes, caphashes;
};

/* A PostgreSQL store. */
struct pg_store {
	struct fidx_store base;
	PGconn *conn;
	char *target;               /* as given to open */
	char *name;                 /* for messages: the target without its password */
	char *origin;               /* said after the name in messages */
	bool in_txn;                /* a transaction is open */
	bool has_schema;            /* the schema fidx of this version exists in the database
				       (else the first write makes it, or brings it up to it) */
	bool has_tables;            /* the schema fidx exists, of this version or an earlier
				       one (whose columns it lacks read as NULL) */
	/* WRITE. */
	unsigned batch_rows;        /* rows per transaction */
	unsigned pending;           /* rows sent in the open transaction */
	bool in_copy;               /* a COPY of file rows is open */
	int staged;                 /* rows go through pg_temp.fidx_batch (row-level security
				       applies to this role: COPY cannot check it); -1: not known */
	char *copy;                 /* COPY data not yet sent */
	size_t ncopy, capcopy;
	int64_t next_id, end_id;    /* the block of file ids reserved, [next, end) */
	struct pg_scan *scans;      /* the scans being written */
	size_t nscans, capscans;
	struct fidx_seal_lines *lines; /* the line maker of the seals */
	/* Reading. */
	unsigned cursors;           /* cursors made: each gets a name of its own */
	unsigned ncursors;          /* cursors open */
	bool cursor_txn;            /* the open transaction was begun for the cursors */
	PGresult *by_id;            /* the result fidx_store_row() read last */
	struct pg_reader *by_id_reader; /* ... and how it was read (read.c) */
};

/* The store st is. */
static inline struct pg_store *pg_of(struct fidx_store *st)
{
	return (struct pg_store *)st;
}

/* Parameters of a statement, in binary. */
struct pg_params {
	int n;
	const char *values[PG_MAX_PARAMS];
	int lengths[PG_MAX_PARAMS];
	int formats[PG_MAX_PARAMS];
	Oid types[PG_MAX_PARAMS];
	char ints[PG_MAX_PARAMS][8];
};

/* Adds a bigint parameter. */
void pg_param_int(struct pg_params *p, int64_t v);

/* Adds a bytea parameter of the n bytes at v (NULL: SQL NULL). */
void pg_param_bytes(struct pg_params *p, const void *v, size_t n);

/* Adds a bytea parameter of the string s (NULL: SQL NULL). */
void pg_param_str(struct pg_params *p, const char *s);

/* Adds a text parameter that the server parses (an array literal, a UUID; NULL: SQL NULL). */
void pg_param_text(struct pg_params *p, const char *s);

/* Adds a NULL parameter of type (20: bigint, 17: bytea). */
void pg_param_null(struct pg_params *p, Oid type);

/* The type of the bigint and bytea parameters and columns. */
#define PG_INT8 20
#define PG_BYTEA 17

/* Writes v as 8 bytes in network order. */
void pg_put64(void *dst, int64_t v);

/* Reads 8 bytes in network order. */
int64_t pg_get64(const void *src);

/*
 * Runs sql with params (NULL: none), results in binary.  Returns the result
 * (PGRES_COMMAND_OK or PGRES_TUPLES_OK), or NULL with err set ("cannot
 * <verb> database 'x': <the server's reason>").
 */
PGresult *pg_exec(struct pg_store *st, const char *sql, const struct pg_params *params,
		  const char *verb, struct fidx_error *err);

/* pg_exec() of a statement whose result is not needed.  Returns 0, or -1 with err set. */
int pg_run(struct pg_store *st, const char *sql, const struct pg_params *params,
	   const char *verb, struct fidx_error *err);

/*
 * Fills err with "cannot <verb> database 'x': why" (why: the connection's
 * last error, first line, when NULL).  Returns -1.
 */
int pg_fail(struct pg_store *st, struct fidx_error *err, const char *verb, const char *why);

/*
 * The first line of a message of the server or libpq into buf, without
 * "ERROR:  " or "FATAL:  " and its line end.  Returns buf ("unknown error"
 * for none).
 */
const char *pg_first_line(const char *msg, char *buf, size_t size);

/*
 * The first line of the error of res, into buf (size bytes): for an error of
 * connection (SQLSTATE class 08, as postgres_fdw's to a shard that is down)
 * followed by the first line of its detail, which says where.  Returns buf.
 */
const char *pg_result_why(const PGresult *res, char *buf, size_t size);

/* Bigint column c of row r of res (0 when NULL). */
int64_t pg_int(const PGresult *res, int r, int c);

/*
 * Makes the connection ready for a query: a COPY of rows open is ended and
 * its batch committed first (no statement can run inside a COPY); an open
 * transaction otherwise stays.  Returns 0, or -1 with err set.
 */
int pg_ready(struct pg_store *st, struct fidx_error *err);

/* Begins a transaction unless one is open.  Returns 0, or -1 with err set. */
int pg_begin(struct pg_store *st, struct fidx_error *err);

/* Commits the open transaction.  Returns 0, or -1 with err set (then rolled back). */
int pg_commit(struct pg_store *st, struct fidx_error *err);

/* Rolls back the open transaction (and any COPY), forgetting the running seals. */
void pg_rollback(struct pg_store *st);

/* The schema's script (schema.sql, generated into build/gen/pg_schema.c). */
extern const char fidx_pg_schema_sql[];

/*
 * Makes the schema fidx unless there is one (another process may have made
 * it meanwhile), in the open transaction.  Returns 0, or -1 with err set.
 */
int pg_make_schema(struct pg_store *st, struct fidx_error *err);

/* A cursor: the rows of one query, fetched in batches. */
struct pg_cursor {
	char name[32];
};

/*
 * Declares cursor c of sql (with params) in the open transaction, or in
 * one it begins for the cursors (pg_ready() first), which the last of them
 * to close commits.  Returns 0,
 * or -1 with err set.
 */
int pg_cursor_open(struct pg_store *st, struct pg_cursor *c, const char *sql,
		   const struct pg_params *params, struct fidx_error *err);

/* Fetches the next n rows of c (binary).  Returns them (none at the end), or NULL with err set. */
PGresult *pg_cursor_fetch(struct pg_store *st, struct pg_cursor *c, int n, struct fidx_error *err);

/* Closes c (and the transaction it began). */
void pg_cursor_close(struct pg_store *st, struct pg_cursor *c);

/*
 * Reads the results left after a COPY (or another command sent without
 * waiting), so that the connection is ready again; when rc is 0 and one of
 * them failed, fills err with "cannot <verb> database ...: <the server's
 * reason>".  Returns rc, or -1 then.
 */
int pg_drain(struct pg_store *st, int rc, const char *verb, struct fidx_error *err);

/*
 * Called for each tuple of a binary COPY ... TO STDOUT: n fields, field i
 * the len[i] bytes at val[i] (len[i] < 0: NULL).  Returns 0, or -1 with err
 * set (the read stops).
 */
typedef int pg_tuple_fn(void *arg, int n, const char *const *val, const int32_t *len,
			struct fidx_error *err);

/*
 * Runs sql, a COPY (...) TO STDOUT (FORMAT binary) of nfields columns (COPY
 * takes no parameters: its values are numbers fidx formats), and gives each
 * tuple to fn.  Returns 0, or -1 with err set ("cannot read database ...").
 */
int pg_copy_out(struct pg_store *st, const char *sql, int nfields, pg_tuple_fn *fn, void *arg,
		struct fidx_error *err);

/* ---- write.c ---- */

/* Frees what writing holds (rolls back an open batch). */
void pg_write_close(struct pg_store *st);

int64_t pg_begin_scan(struct fidx_store *st, const struct fidx_scan_info *info,
		      struct fidx_error *err);
int pg_claim_scan(struct fidx_store *st, int64_t scan_id, int64_t seen_pid,
		  struct fidx_error *err);
int pg_resume_scan(struct fidx_store *st, int64_t scan_id, struct fidx_scan_totals *so_far,
		   struct fidx_error *err);
int pg_add(struct fidx_store *st, const struct fidx_record *rec, struct fidx_error *err);
unsigned pg_pending(const struct fidx_store *st);
int pg_flush(struct fidx_store *st, struct fidx_error *err);
int pg_end_scan(struct fidx_store *st, int64_t scan_id, const struct fidx_scan_totals *totals,
		uint8_t *seal, struct fidx_error *err);
int pg_seal(struct fidx_store *st, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN],
	    struct fidx_error *err);
int pg_build_indexes(struct fidx_store *st, struct fidx_error *err);
int pg_add_digests(struct fidx_store *st, const struct fidx_file_digest *d, size_t n,
		   struct fidx_error *err);
int pg_push_begin(struct fidx_store *st, const struct fidx_scan_row *scan,
		  struct fidx_push_state *ps, struct fidx_error *err);
int pg_push_delta(struct fidx_store *st, int64_t scan_id, const char *base_uuid,
		  const void *runs, size_t len, int64_t *after, struct fidx_error *err);
int pg_push_row(struct fidx_store *st, int64_t scan_id, const struct fidx_row *row,
		struct fidx_error *err);
int pg_drop_scans(struct fidx_store *st, const int64_t *ids, size_t n, size_t *rebuilt,
		  struct fidx_error *err);
int pg_push_end(struct fidx_store *st, int64_t scan_id, const struct fidx_scan_row *scan,
		struct fidx_error *err);

/* ---- delta.c ---- */

/*
 * Makes *rel (malloc'ed) the FROM item, named f, of the file rows of the n
 * scans: " fidx.file f" when each is kept whole; else a derived table of
 * the columns of fidx.file (scan_id the scan asked for, origin_id the id
 * the row has in it, digests_from as it has it) and owner (the scan whose
 * row it is in fidx.file), the rows of each scan kept as changes read from
 * the scans down its chain through the composed runs.  With changed_from
 * (not 0, one scan asked for), the rows that scan holds as one with it are
 * left out: the pairs stop above it when it is down the scan's chain, and
 * the ids its runs lend on are left out when the scan is down its chain
 * (fidx_rows_query's changed_from).  With digest (a digest column's name;
 * changed_from 0), a question that reads only the rows whose digest is one
 * of the array literal digests: the maps hold those rows alone (asked of
 * the server first by the digest's index), not every run of every chain.
 * Returns 1 for the derived table, 0 for fidx.file, or -1 with err set.
 */
int pg_relation(struct pg_store *st, const int64_t *scans, size_t n, int64_t changed_from,
		const char *digest, const char *digests, char **rel, struct fidx_error *err);

struct fidx_delta_map;

/* The rows of a scan kept as changes split for find at the whole scan its chain ends in. */
struct pg_lent {
	int64_t base;                 /* that whole scan */
	struct fidx_delta_map *map;   /* its ids where they were made lent to the scan, sorted */
	size_t n;                     /* how many intervals (0: none) */
	char *rel;                    /* the FROM item of the scan's other rows (pg_relation's) */
};

/* The literals every path a reader looks for holds, ASCII letters folded (fidx_findpat_fold()). */
struct pg_literals {
	char *s;        /* one after the other (malloc'ed) */
	size_t *len;    /* their lengths (malloc'ed) */
	size_t n;
};

/* Whether path (len bytes) holds every literal of lits, ASCII letters folded. */
bool pg_literals_held(const struct pg_literals *lits, const char *path, size_t len);

/*
 * Fills *out for scan: 1 when it is kept as changes, 0 (out emptied) when
 * it is kept whole, or -1 with err set.  With lits (not NULL), out->rel
 * holds only the rows whose path holds every literal: the server drops most
 * others, and the maps go to it for those rows alone.  pg_lent_free() frees
 * it.
 */
int pg_lent_open(struct pg_store *st, int64_t scan, const struct pg_literals *lits,
		 struct pg_lent *out, struct fidx_error *err);

/*
 * Sets keep[i] to whether the row of id ids[i] (n ids, each a row of
 * l->base) is lent on to l's scan.  Returns how many of the ids are rows of
 * l->base (fewer than n: a damaged index named them), or -1 with err set.
 */
int pg_lent_filter(struct pg_store *st, const struct pg_lent *l, const int64_t *ids, size_t n,
		   bool *keep, struct fidx_error *err);

/* Frees what l holds and empties it. */
void pg_lent_free(struct pg_lent *l);

/* Whether scan_id is kept as changes.  Returns 1, 0, or -1 with err set. */
int pg_is_delta(struct pg_store *st, int64_t scan_id, struct fidx_error *err);

/* ---- pathstore.c ---- */

/*
 * Builds the path index of scan scan_id from its rows, in the open
 * transaction (that of the scan's end, so that a complete scan has its
 * index), unless it has one.  Returns 0, or -1 with err set.
 */
int pg_pathindex_build(struct pg_store *st, int64_t scan_id, struct fidx_error *err);

struct pg_pathindex;
struct fidx_pathent;

/*
 * Starts reading the paths of scan that lie in the blocks holding every
 * one of the ntri (>= 1) trigrams of tri (sorted, fidx_pathindex_trigrams()).
 * Returns 1 with *out set, 0 when the scan has no index, or -1 with err set.
 */
int pg_pathindex_open(struct pg_store *st, int64_t scan, const uint32_t *tri, size_t ntri,
		      struct pg_pathindex **out, struct fidx_error *err);

/* Gives the next path in *e (byte order).  Returns 1, 0 at the end, or -1 with err set. */
int pg_pathindex_next(struct pg_pathindex *it, struct fidx_pathent *e, struct fidx_error *err);

/* Ends the reading.  NULL is allowed. */
void pg_pathindex_close(struct pg_pathindex *it);

/* ---- read.c ---- */

/* The ids as a SQL array literal ("{1,2}"), malloc'ed, or NULL (out of memory). */
char *pg_id_array(const int64_t *ids, size_t n);

int pg_scans(struct fidx_store *st, const struct fidx_scan_filter *f,
	     struct fidx_scan_list *out, struct fidx_error *err);
struct fidx_rows *pg_rows(struct fidx_store *st, const struct fidx_rows_query *q,
			  struct fidx_error *err);
struct fidx_rows *pg_rows_by_digest(struct fidx_store *st, const struct fidx_rows_query *q,
				    enum fidx_digest d, const uint8_t *digests, size_t n,
				    struct fidx_error *err);
int pg_rows_next(struct fidx_rows *it, const struct fidx_row **row, struct fidx_error *err);
void pg_rows_close(struct fidx_rows *it);
int pg_row(struct fidx_store *st, const struct fidx_rows_query *q, int64_t id,
	   const struct fidx_row **row, struct fidx_error *err);
struct fidx_paths *pg_paths(struct fidx_store *st, int64_t scan, const char *root,
			    const struct fidx_findpat_literal *lit, size_t nlit,
			    struct fidx_error *err);
int pg_paths_next(struct fidx_paths *it, const struct fidx_row **entry, struct fidx_error *err);
int pg_paths_row(struct fidx_paths *it, uint64_t columns, const struct fidx_row **row,
		 struct fidx_error *err);
void pg_paths_close(struct fidx_paths *it);
int pg_snapshot(struct fidx_store *st, struct fidx_error *err);
uint64_t pg_count(struct fidx_store *st, const int64_t *scans, size_t n, bool files);

/* ---- seal.c ---- */

/*
 * Writes into buf (size bytes) the select list of a file row's seal fields,
 * in line order (the columns of fidx_seal_file_columns[], with the table
 * alias f; NULL for a column the table of schema version has not).  Returns buf.
 */
const char *pg_seal_columns(int version, char *buf, size_t size);

/*
 * Keeps the row hash of the line made last (st->lines) for file id of scan
 * c, and adds the line to c's seal when it is being computed.  Returns 0,
 * or -1 with err set.
 */
int pg_seal_row(struct pg_store *st, struct pg_scan *c, int64_t id, struct fidx_error *err);

/* Writes the row hashes kept for each scan into fidx.seal_batch.  Returns 0, or -1 with err set. */
int pg_seal_put(struct pg_store *st, struct fidx_error *err);

/*
 * Seals complete scan scan_id in the open transaction (its running seal,
 * or its rows read back in id order, and the scan row's line), writing
 * scan.seal and copying it into seal.  Returns 0, or -1 with err set.
 */
int pg_seal_scan(struct pg_store *st, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN],
		 struct fidx_error *err);

/*
 * Writes the row hashes of complete scan scan_id (of host host_id) anew from
 * its rows, in the open transaction (a scan rebuilt whole).  Returns 0, or
 * -1 with err set.
 */
int pg_seal_rehash(struct pg_store *st, int64_t scan_id, int64_t host_id, struct fidx_error *err);

int pg_verify(struct fidx_store *st, int64_t scan_id, fidx_seal_found_fn *found, void *arg,
	      struct fidx_seal_result *r, struct fidx_error *err);

#endif /* FIDX_STORE_POSTGRES_H */
