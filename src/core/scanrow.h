/*
 * scanrow.h - a scan row as read from a store, and what its options say.
 *
 * FIDX_SCAN_COLUMNS is the one list of the columns of the `scan` table, in
 * the order of the table (docs/SCHEMA.md); X(NAME, name, KIND) with the
 * kinds of row.h (INT, TEXT, DIGEST for the seal).  The SQLite backend
 * selects them from it, the seal takes its line of the scan row from it.
 *
 * A struct fidx_scan_row is an owned copy: scans are few, and a command keeps
 * those it selected for its whole run.  Beside the columns it carries what
 * the store read out of scan.options, the JSON object `fidx scan` wrote
 * (fidx_scan_options_json(), scanargs.h), field by field;
 * fidx_scan_shape_of() turns those into the options a new scan must repeat
 * to continue or compare with it.
 */
#ifndef FIDX_SCANROW_H
#define FIDX_SCANROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "error.h"

#define FIDX_SCAN_COLUMNS(X)                      \
	X(ID, id, INT)                            \
	X(ROOT, root, TEXT)                       \
	X(HOST, host, TEXT)                       \
	X(OS, os, TEXT)                           \
	X(KERNEL, kernel, TEXT)                   \
	X(ARCH, arch, TEXT)                       \
	X(VERSION, version, TEXT)                 \
	X(OPTIONS, options, TEXT)                 \
	X(STARTED_NS, started_ns, INT)            \
	X(FINISHED_NS, finished_ns, INT)          \
	X(STATUS, status, TEXT)                   \
	X(ENTRIES, entries, INT)                  \
	X(FILES, files, INT)                      \
	X(DIRS, dirs, INT)                        \
	X(BYTES, bytes, INT)                      \
	X(ERRORS, errors, INT)                    \
	X(REUSED, reused, INT)                    \
	X(HASHED, hashed, INT)                    \
	X(BASE_SCAN_ID, base_scan_id, INT)        \
	X(PID, pid, INT)                          \
	X(SEAL, seal, DIGEST)                     \
	X(RUN_NS, run_ns, INT)                    \
	X(UUID, uuid, TEXT)

/* The columns: FIDX_SCOL_ID ... FIDX_SCOL_UUID. */
enum fidx_scol {
#define FIDX_X(NAME, name, KIND) FIDX_SCOL_##NAME,
	FIDX_SCAN_COLUMNS(FIDX_X)
#undef FIDX_X
	FIDX_NSCAN_COLUMNS
};

/* The bit of scan column c in a mask. */
#define FIDX_SCOLUMN(c) (UINT64_C(1) << (c))

/* A field of each kind, as struct fidx_scan_row holds it. */
#define FIDX_SCAN_FIELD_INT(name) int64_t name;
#define FIDX_SCAN_FIELD_TEXT(name) char *name;
#define FIDX_SCAN_FIELD_DIGEST(name) uint8_t *name; size_t name##_len;

/* A scan row: every column (owned copies), and what its options say. */
struct fidx_scan_row {
	uint64_t has;                  /* FIDX_SCOLUMN(c) of each column that is not NULL */
#define FIDX_X(NAME, name, KIND) FIDX_SCAN_FIELD_##KIND(name)
	FIDX_SCAN_COLUMNS(FIDX_X)
#undef FIDX_X
	/* scan.options as the store read it (each NULL, or -1, when the options
	 * are not a JSON object or lack it): */
	char *opt_hash;                /* "hash": the digest list, "sha256,md5" or "none" */
	int opt_xdev, opt_follow;      /* "xdev", "follow": 1 true, 0 false or absent */
	int opt_follow_all;            /* "follow_all": 1 true, 0 false or absent */
	int opt_stat;                  /* "stat": 1, 0 (made with --no-stat), -1 absent */
	char *opt_exclude;             /* "exclude": the JSON array, as text */
	char *opt_database;            /* "database": the database the scan wrote */
	bool opt_image;                /* "image": an object (a disk image's scan, fidx scan
					  --image) */
	bool root_text;                /* root was stored as text without a NUL byte: a root
					  given can equal it (fidx_scan_row_of_root()) */
	char *damage;                  /* NULL, or what makes the row one fidx could not have
					  written ("scan 2: entries holds text, not an integer"):
					  the columns then hold the values as SQL would convert them */
};

/* Whether column c of row holds a value. */
static inline bool fidx_scan_has(const struct fidx_scan_row *row, enum fidx_scol c)
{
	return row->has >> c & 1;
}

/*
 * Whether the scan is of root, byte for byte, as a SQL comparison with the
 * stored value says: a root stored as a blob, or holding a NUL byte, is of
 * no root given (its row check names it as damage).
 */
static inline bool fidx_scan_row_of_root(const struct fidx_scan_row *row, const char *root)
{
	return row->root && row->root_text && root && strcmp(row->root, root) == 0;
}

/*
 * Sets *mask to the digests the scan computed (1u << enum fidx_digest),
 * from its options.  Returns 0, or -1 when its options do not say (mask
 * untouched).
 */
int fidx_scan_row_digests(const struct fidx_scan_row *row, unsigned *mask);

/* The digests a scan computed, every digest when its options do not say. */
unsigned fidx_scan_row_digests_or_all(const struct fidx_scan_row *row);

/* Whether the scan was made with --no-stat (it holds no sizes). */
static inline bool fidx_scan_row_no_stat(const struct fidx_scan_row *row)
{
	return row->opt_stat == 0;
}

/* The options that shape a scan's content, as a scan that continues or repeats it needs them. */
struct fidx_scan_shape {
	unsigned digests;    /* 1u << enum fidx_digest */
	bool xdev, follow, follow_all, no_stat;
	bool image;          /* a disk image read (--image), not a walk */
	char **excludes;     /* its --exclude patterns (bytes), NULL-terminated */
	size_t nexcludes;
};

/*
 * Decodes the content-shaping options of row into *shape (excludes decoded
 * from JSON, bytes that are not UTF-8 given back from \u00XX).  Returns 0, or
 * -1 with err set ("scan N: cannot read the options it was made with").
 */
int fidx_scan_shape_of(const struct fidx_scan_row *row, struct fidx_scan_shape *shape,
		       struct fidx_error *err);

/* Whether two shapes are the same. */
bool fidx_scan_shape_eq(const struct fidx_scan_shape *a, const struct fidx_scan_shape *b);

/* Frees what *shape holds (not shape itself). */
void fidx_scan_shape_free(struct fidx_scan_shape *shape);

/*
 * Fills the opt_* fields of row from row->options, for a store that cannot
 * ask its database to read JSON: "hash" and "database" decoded, "exclude"
 * as the text of its array, the booleans as 1 or 0 ("stat" -1 when absent).
 * Options that are not a JSON object leave them unset (NULL, 0, -1), a
 * value that is not what fidx writes leaves its field unset.  Returns 0, or
 * -1 when out of memory.
 */
int fidx_scan_row_read_options(struct fidx_scan_row *row);

/*
 * Copies src into *dst (every string duplicated).  Returns 0, or -1 with
 * err set when out of memory (dst then holds nothing to free).
 */
int fidx_scan_row_copy(struct fidx_scan_row *dst, const struct fidx_scan_row *src,
		       struct fidx_error *err);

/* Frees what *row holds (not row itself), and zeroes it.  A zeroed row is allowed. */
void fidx_scan_row_free(struct fidx_scan_row *row);

/* A list of scan rows, ascending ids. */
struct fidx_scan_list {
	struct fidx_scan_row *rows;
	size_t n;
};

/* Frees every row of the list and the list's array.  A zeroed list is allowed. */
void fidx_scan_list_free(struct fidx_scan_list *list);

/* Returns the row of scan id in list, or NULL. */
const struct fidx_scan_row *fidx_scan_list_find(const struct fidx_scan_list *list, int64_t id);

#endif /* FIDX_SCANROW_H */
