/*
 * backend.h - what a store backend implements: the ops table behind store.h.
 *
 * store.c is the only caller of these functions; everything else calls
 * store.h.  A backend is one folder under src/store/ (sqlite/, postgres/) with
 * one `const struct fidx_store_ops` and one entry in store.c's list of
 * backends.  Its objects embed the bases below as their first member, so
 * that store.c can hand them back:
 *
 *     struct sqlite_store { struct fidx_store base; sqlite3 *db; ... };
 *
 * The contract is store.h's, function by function (each op has the meaning
 * and the error rules of the store.h function of the same name), and
 * tests/store/ holds the conformance suite that every backend must pass.
 * What store.c does for every backend, so that no backend does it again:
 * the dispatch by --db argument, and the copy of a row iterator's query,
 * with the columns its filters need.  A backend leaves the hidden trees out
 * before it checks a row (a damaged row the selection does not show is not
 * the query's business), and applies every other filter of the query.
 */
#ifndef FIDX_STORE_BACKEND_H
#define FIDX_STORE_BACKEND_H

#include "store.h"

/* What every store is. */
struct fidx_store {
	const struct fidx_store_ops *ops;  /* its backend */
	enum fidx_store_mode mode;         /* what it was opened for */
	int version;                       /* the schema version of its database */
};

/* What every row iterator is. */
struct fidx_rows {
	struct fidx_store *st;             /* the store it reads */
	struct fidx_rows_query q;          /* what it reads (its own copy of the arrays) */
};

/* What every path iterator is. */
struct fidx_paths {
	struct fidx_store *st;             /* the store it reads */
};

struct fidx_store_ops {
	const char *name;                  /* "sqlite" */
	/* The library it stores with and its version ("SQLite 3.40.1"). */
	const char *(*library)(void);
	/* Whether this backend opens target (the SQLite backend: any path). */
	bool (*claims)(const char *target);
	int (*probe)(const char *target, uint32_t *version);
	struct fidx_store *(*open)(const char *target, enum fidx_store_mode mode,
				   const struct fidx_store_opts *opts, struct fidx_error *err);
	int (*close)(struct fidx_store *st, struct fidx_error *err);
	const char *(*name_of)(const struct fidx_store *st);
	/* The name of target as name_of() would give it, malloc'ed; NULL op: target itself. */
	char *(*shown)(const char *target);
	const char *const *(*files)(const struct fidx_store *st);
	/* Scratch databases are local files: only the last backend (SQLite) has these. */
	char *(*scratch_new)(const char *prefix, struct fidx_error *err);
	void (*scratch_remove)(const char *name);

	/* Writing. */
	int64_t (*begin_scan)(struct fidx_store *st, const struct fidx_scan_info *info,
			      struct fidx_error *err);
	int (*claim_scan)(struct fidx_store *st, int64_t scan_id, int64_t seen_pid,
			  struct fidx_error *err);
	int (*resume_scan)(struct fidx_store *st, int64_t scan_id, struct fidx_scan_totals *so_far,
			   struct fidx_error *err);
	int (*add)(struct fidx_store *st, const struct fidx_record *rec, struct fidx_error *err);
	unsigned (*pending)(const struct fidx_store *st);
	int (*flush)(struct fidx_store *st, struct fidx_error *err);
	int (*end_scan)(struct fidx_store *st, int64_t scan_id,
			const struct fidx_scan_totals *totals, uint8_t *seal,
			struct fidx_error *err);
	int (*seal)(struct fidx_store *st, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN],
		    struct fidx_error *err);
	int (*build_indexes)(struct fidx_store *st, struct fidx_error *err);
	int (*add_digests)(struct fidx_store *st, const struct fidx_file_digest *d, size_t n,
			   struct fidx_error *err);

	/* Pushing (NULL: this backend takes no pushes). */
	int (*push_begin)(struct fidx_store *st, const struct fidx_scan_row *scan,
			  struct fidx_push_state *ps, struct fidx_error *err);
	/* NULL: this backend keeps every scan whole. */
	int (*push_delta)(struct fidx_store *st, int64_t scan_id, const char *base_uuid,
			  const void *runs, size_t len, int64_t *after, struct fidx_error *err);
	int (*push_row)(struct fidx_store *st, int64_t scan_id, const struct fidx_row *row,
			struct fidx_error *err);
	int (*push_end)(struct fidx_store *st, int64_t scan_id, const struct fidx_scan_row *scan,
			struct fidx_error *err);

	/* Dropping scans (NULL: this backend drops none). */
	int (*drop_scans)(struct fidx_store *st, const int64_t *ids, size_t n, size_t *rebuilt,
			  struct fidx_error *err);

	/* Reading. */
	int (*scans)(struct fidx_store *st, const struct fidx_scan_filter *f,
		     struct fidx_scan_list *out, struct fidx_error *err);
	/* Makes the iterator of q (store.c copies q into it afterwards). */
	struct fidx_rows *(*rows)(struct fidx_store *st, const struct fidx_rows_query *q,
				  struct fidx_error *err);
	/* The rows whose digest d is one of n (NULL: this backend has no index of digests). */
	struct fidx_rows *(*rows_by_digest)(struct fidx_store *st, const struct fidx_rows_query *q,
					    enum fidx_digest d, const uint8_t *digests, size_t n,
					    struct fidx_error *err);
	int (*rows_next)(struct fidx_rows *it, const struct fidx_row **row, struct fidx_error *err);
	void (*rows_close)(struct fidx_rows *it);
	int (*row)(struct fidx_store *st, const struct fidx_rows_query *q, int64_t id,
		   const struct fidx_row **row, struct fidx_error *err);
	struct fidx_paths *(*paths)(struct fidx_store *st, int64_t scan, const char *root,
				    const struct fidx_findpat_literal *lit, size_t nlit,
				    struct fidx_error *err);
	int (*paths_next)(struct fidx_paths *it, const struct fidx_row **entry,
			  struct fidx_error *err);
	int (*paths_row)(struct fidx_paths *it, uint64_t columns, const struct fidx_row **row,
			 struct fidx_error *err);
	void (*paths_close)(struct fidx_paths *it);
	int (*snapshot)(struct fidx_store *st, struct fidx_error *err);
	uint64_t (*count)(struct fidx_store *st, const int64_t *scans, size_t n, bool files);
	int (*verify)(struct fidx_store *st, int64_t scan_id, fidx_seal_found_fn *found, void *arg,
		      struct fidx_seal_result *r, struct fidx_error *err);
};

/* The backends (one per folder of src/store/). */
extern const struct fidx_store_ops fidx_store_postgres;
extern const struct fidx_store_ops fidx_store_sqlite;

#endif /* FIDX_STORE_BACKEND_H */
