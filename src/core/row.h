/*
 * row.h - the rows of the inventory as every layer sees them: one list of
 * columns, and a row as a store reads it.
 *
 * FIDX_FILE_COLUMNS is the one list of the columns of a file row, in the
 * order of the table (docs/SCHEMA.md): the SQLite backend makes its INSERT
 * and its SELECTs from it, the seal its canonical lines, the query commands
 * their reads (a mask of the columns they want).  X(NAME, name, KIND):
 *
 *     INT     a 64-bit integer
 *     UINT    a 64-bit unsigned integer (a size, a device, an inode), stored
 *             as its two's complement (docs/SCHEMA.md, "Integers")
 *     TEXT    bytes, NUL-terminated (a path, a name, a link target, an error)
 *     TYPE    one type letter of FIDX_TYPE_LETTERS, as TEXT
 *     TIME    a time as the kernel gives it (timestamp.h); stored as T_ns
 *             when it fits an int64, else as T_sec and T_nsec
 *             (fidx_time_to_ns())
 *     DIGEST  the bytes of one digest of enum fidx_digest
 *
 * FIDX_LATER_COLUMNS are what `fidx dupes` computes after a scan and keeps
 * beside a file row (table file_digest): a reader asks for them like the
 * others.
 *
 * A struct fidx_row is one row read: its fields point into the store's
 * memory (valid until the reader moves on), `has` tells which columns were
 * read and are not NULL.  The pipeline's record (record.h) is turned into the
 * same row to be written (fidx_row_of_record()), so that what is written,
 * what is sealed and what is read back go through one shape.
 */
#ifndef FIDX_ROW_H
#define FIDX_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "timestamp.h"

#define FIDX_FILE_COLUMNS(X)                      \
	X(ID, id, INT)                            \
	X(SCAN_ID, scan_id, INT)                  \
	X(PATH, path, TEXT)                       \
	X(NAME, name, TEXT)                       \
	X(EXT, ext, TEXT)                         \
	X(TYPE, type, TYPE)                       \
	X(SIZE, size, UINT)                        \
	X(BLOCKS, blocks, UINT)                    \
	X(MODE, mode, INT)                        \
	X(UID, uid, INT)                          \
	X(GID, gid, INT)                          \
	X(NLINK, nlink, UINT)                      \
	X(DEV, dev, UINT)                          \
	X(INO, ino, UINT)                          \
	X(ATIME, atime, TIME)                     \
	X(MTIME, mtime, TIME)                     \
	X(CTIME, ctime, TIME)                     \
	X(BTIME, btime, TIME)                     \
	X(LINK_TARGET, link_target, TEXT)         \
	X(MD5, md5, DIGEST)                       \
	X(SHA1, sha1, DIGEST)                     \
	X(SHA256, sha256, DIGEST)                 \
	X(SHA512, sha512, DIGEST)                 \
	X(XXH128, xxh128, DIGEST)                 \
	X(ERROR, error, TEXT)                     \
	X(DIGESTS_FROM, digests_from, INT)

/*
 * Columns of schema 6, what a forensic read of a disk image knows and a
 * mounted walk cannot (NULL in a walk's rows; docs/SCHEMA.md, "Images"):
 * the entry's allocation state ("allocated", "deleted", "reallocated",
 * "orphan"), the name of an alternate data stream (the row of a stream is
 * its own, its path the file's path, ':' and the name), and NTFS's second
 * set of times, those of $FILE_NAME (the others are $STANDARD_INFORMATION's).
 */
#define FIDX_IMAGE_COLUMNS(X)                     \
	X(STATE, state, TEXT)                     \
	X(STREAM, stream, TEXT)                   \
	X(FN_ATIME, fn_atime, TIME)               \
	X(FN_MTIME, fn_mtime, TIME)               \
	X(FN_CTIME, fn_ctime, TIME)               \
	X(FN_BTIME, fn_btime, TIME)

/*
 * The column of schema 7: the entry's Windows file attributes, the
 * FILE_ATTRIBUTE_* word (read-only 0x1, hidden 0x2, system 0x4, directory
 * 0x10, archive 0x20, ...), of a Windows walk or of an NTFS image (its
 * $STANDARD_INFORMATION flags); NULL in a Linux walk's rows.
 */
#define FIDX_ATTR_COLUMNS(X)                      \
	X(ATTRIBUTES, attributes, INT)

/* file_digest's columns (schema 2): edges of FIDX_DUPES_EDGE_BLOCK bytes, a later SHA-256. */
#define FIDX_LATER_COLUMNS(X)                     \
	X(EDGE_BLOCK, edge_block, INT)            \
	X(EDGES, edges, DIGEST)                   \
	X(LATER_SHA256, later_sha256, DIGEST)

/* The kinds of column. */
enum fidx_col_kind { FIDX_KIND_INT, FIDX_KIND_UINT, FIDX_KIND_TEXT, FIDX_KIND_TYPE,
		     FIDX_KIND_TIME, FIDX_KIND_DIGEST };

/*
 * The columns: FIDX_COL_ID ... FIDX_COL_DIGESTS_FROM, the image ones, the
 * attributes, then the later ones.
 */
enum fidx_col {
#define FIDX_X(NAME, name, KIND) FIDX_COL_##NAME,
	FIDX_FILE_COLUMNS(FIDX_X)
	FIDX_IMAGE_COLUMNS(FIDX_X)
	FIDX_ATTR_COLUMNS(FIDX_X)
	FIDX_LATER_COLUMNS(FIDX_X)
#undef FIDX_X
	FIDX_NCOLUMNS
};

/* How many columns the file table has: the later ones follow them. */
enum { FIDX_NFILE_COLUMNS = FIDX_COL_EDGE_BLOCK };

_Static_assert(FIDX_COL_XXH128 - FIDX_COL_MD5 == FIDX_XXH128 - FIDX_MD5 &&
	       FIDX_COL_MD5 + FIDX_NDIGESTS == FIDX_COL_ERROR,
	       "the digest columns follow enum fidx_digest");
_Static_assert(FIDX_NCOLUMNS <= 64, "a column mask is 64 bits");

/* The bit of column c in a mask of columns. */
#define FIDX_COLUMN(c) (UINT64_C(1) << (c))
/* Every column of the file table. */
#define FIDX_FILE_ALL (FIDX_COLUMN(FIDX_NFILE_COLUMNS) - 1)
/* The bit of digest d's column. */
#define FIDX_DIGEST_COLUMN(d) FIDX_COLUMN(FIDX_COL_MD5 + (d))
/* The columns of schema 6 (NULL in a walk's rows). */
#define FIDX_IMAGE_ALL (FIDX_COLUMN(FIDX_COL_ATTRIBUTES) - FIDX_COLUMN(FIDX_COL_STATE))
/* The four times, in the order of their columns. */
#define FIDX_TIME_COLUMNS (FIDX_COLUMN(FIDX_COL_ATIME) | FIDX_COLUMN(FIDX_COL_MTIME) | \
			   FIDX_COLUMN(FIDX_COL_CTIME) | FIDX_COLUMN(FIDX_COL_BTIME))
/* The four $FILE_NAME times, in the same order. */
#define FIDX_FN_TIME_COLUMNS (FIDX_COLUMN(FIDX_COL_FN_ATIME) | FIDX_COLUMN(FIDX_COL_FN_MTIME) | \
			      FIDX_COLUMN(FIDX_COL_FN_CTIME) | FIDX_COLUMN(FIDX_COL_FN_BTIME))

/* A column of the list: its name (as in the table) and kind. */
struct fidx_column {
	const char *name;
	enum fidx_col_kind kind;
};

/* Every column, by enum fidx_col. */
extern const struct fidx_column fidx_columns[FIDX_NCOLUMNS];

/* One value: an INT (or UINT), a TIME, or bytes (TEXT, TYPE, DIGEST). */
struct fidx_value {
	int64_t i;            /* INT, UINT */
	struct fidx_time t;   /* TIME */
	const void *p;        /* TEXT, TYPE (NUL-terminated), DIGEST: the bytes */
	size_t n;             /* their length */
};

/* One file row as read (or to be written): the columns of `has` hold values. */
struct fidx_row {
	uint64_t has;                     /* FIDX_COLUMN(c) for each column that holds a value */
	struct fidx_value v[FIDX_NCOLUMNS];
};

/* Whether column c holds a value (was read and is not NULL). */
static inline bool fidx_row_has(const struct fidx_row *r, enum fidx_col c)
{
	return r->has >> c & 1;
}

/* Column c as an integer (0 when NULL). */
static inline int64_t fidx_row_int(const struct fidx_row *r, enum fidx_col c)
{
	return fidx_row_has(r, c) ? r->v[c].i : 0;
}

/* Column c as an unsigned integer: a size, a device, an inode (docs/SCHEMA.md, "Integers"). */
static inline uint64_t fidx_row_u64(const struct fidx_row *r, enum fidx_col c)
{
	return (uint64_t)fidx_row_int(r, c);
}

/* Column c's bytes, NUL-terminated for TEXT; NULL when NULL. */
static inline const char *fidx_row_text(const struct fidx_row *r, enum fidx_col c)
{
	return fidx_row_has(r, c) ? (const char *)r->v[c].p : NULL;
}

/* The length of column c's bytes (0 when NULL). */
static inline size_t fidx_row_len(const struct fidx_row *r, enum fidx_col c)
{
	return fidx_row_has(r, c) ? r->v[c].n : 0;
}

/* Sets *t to time column c.  Returns false when it is NULL. */
static inline bool fidx_row_time(const struct fidx_row *r, enum fidx_col c, struct fidx_time *t)
{
	if (!fidx_row_has(r, c))
		return false;
	*t = r->v[c].t;
	return true;
}

/* The type letter of the row, 0 when NULL (or not one letter). */
static inline char fidx_row_type(const struct fidx_row *r)
{
	return fidx_row_has(r, FIDX_COL_TYPE) && r->v[FIDX_COL_TYPE].n == 1
		       ? ((const char *)r->v[FIDX_COL_TYPE].p)[0] : 0;
}

/* Digest d of the row when it holds one of its length, else NULL. */
static inline const uint8_t *fidx_row_digest(const struct fidx_row *r, enum fidx_digest d)
{
	enum fidx_col c = (enum fidx_col)(FIDX_COL_MD5 + d);
	return fidx_row_has(r, c) && r->v[c].n == fidx_digest_len(d) ? r->v[c].p : NULL;
}

/*
 * The types of entries: X(NAME, LETTER, WORDS) -- FIDX_TYPE_NAME, its bit in a
 * mask of types, the letter the type column holds, and what fidx calls it.
 * The order is the order of the bits and of every list of types shown.
 */
#define FIDX_TYPES(X) \
	X(FILE, "f", "file") \
	X(DIR, "d", "directory") \
	X(LINK, "l", "symlink") \
	X(FIFO, "p", "fifo") \
	X(SOCKET, "s", "socket") \
	X(CHAR, "c", "char device") \
	X(BLOCK, "b", "block device")

/* The type letters fidx writes, in the order of their bits: "fdlpscb". */
#define FIDX_TYPE_LETTER_OF(NAME, letter, words) letter
#define FIDX_TYPE_LETTERS FIDX_TYPES(FIDX_TYPE_LETTER_OF)

/* The bits of the types in a mask of types (FIDX_TYPE_FILE, ...). */
enum {
#define FIDX_TYPE_INDEX_OF(NAME, letter, words) FIDX_TYPE_INDEX_##NAME,
	FIDX_TYPES(FIDX_TYPE_INDEX_OF)
#undef FIDX_TYPE_INDEX_OF
	FIDX_NTYPES
};
enum {
#define FIDX_TYPE_BIT_OF(NAME, letter, words) FIDX_TYPE_##NAME = 1u << FIDX_TYPE_INDEX_##NAME,
	FIDX_TYPES(FIDX_TYPE_BIT_OF)
#undef FIDX_TYPE_BIT_OF
};

/* What fidx calls type letter t ("file", "char device"), or NULL for a letter it never writes. */
const char *fidx_type_name(char t);

/* The bit of type letter t in a mask of types (0 for a letter fidx never writes). */
unsigned fidx_type_bit(char t);

/*
 * Sets *row to the values of rec as a file row of its scan (every column of
 * the table but id; a record without metadata has no sizes, owner or times).
 * The row points into rec.
 */
void fidx_row_of_record(const struct fidx_record *rec, struct fidx_row *row);

#endif /* FIDX_ROW_H */
