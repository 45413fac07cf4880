/*
 * rowcheck.h - whether a value read from the database is one fidx could
 * have written.
 *
 * fidx writes each column of its tables with one SQLite type
 * (docs/SCHEMA.md): integers as INTEGER, names and paths as TEXT, digests as
 * BLOBs of their length, paths absolute and below the scan's root, one type
 * letter of seven.  SQLite hands back anything else converted (TEXT 'abc'
 * read as an integer is 0, a 1-byte "digest" is hex of one byte), so an
 * answer computed from such a value would be wrong without a word.  The
 * readers (read.c, paths.c) check every value of every row they read, and
 * a query stops at the first one that is not sound, naming its scan, its
 * row and the column:
 *
 *     fidx: database 'x' is damaged: scan 2, row 17: size holds text, not an integer
 *
 * `fidx verify`, whose job is to name the rows changed, reads rows without
 * these checks.
 */
#ifndef FIDX_ROWCHECK_H
#define FIDX_ROWCHECK_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

/* What a column must hold. */
enum fidx_rowcheck_rule {
	FIDX_RULE_INT,      /* INTEGER, or NULL */
	FIDX_RULE_TEXT,     /* TEXT, or NULL */
	FIDX_RULE_NAME,     /* TEXT */
	FIDX_RULE_PATH,     /* TEXT, absolute, below the scan's root when it is known */
	FIDX_RULE_ROOT,     /* TEXT, absolute */
	FIDX_RULE_TYPE,     /* NULL, or one of the type letters fidx writes */
	FIDX_RULE_STATUS,   /* one of the four scan statuses */
	FIDX_RULE_DIGEST,   /* NULL, or a BLOB of its length */
};

/* Bytes of a message of fidx_rowcheck_value(). */
#define FIDX_ROWCHECK_MSG 640

/*
 * Checks value v of the column name (a digest of len bytes for
 * FIDX_RULE_DIGEST; a path below root, of rootlen bytes, when root is not
 * NULL).  Returns false when it is sound, else true with what is wrong in
 * buf ("size holds text, not an integer").
 */
bool fidx_rowcheck_value(enum fidx_rowcheck_rule rule, int len, const char *name,
			 sqlite3_value *v, const char *root, size_t rootlen, char *buf,
			 size_t size);

/* Whether the n bytes of path are root (rootlen bytes), or below it. */
bool fidx_rowcheck_below(const char *root, size_t rootlen, const char *path, size_t n);

#endif /* FIDX_ROWCHECK_H */
