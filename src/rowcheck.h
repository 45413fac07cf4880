/*
 * rowcheck.h - whether a row read from the database is one fidx could have
 * written.
 *
 * fidx writes each column of its tables with one SQLite type
 * (docs/SCHEMA.md): integers as INTEGER, names and paths as TEXT, digests as
 * BLOBs of their length, paths absolute and below the scan's root, one type
 * letter of seven.  SQLite hands back anything else converted (TEXT 'abc'
 * read as an integer is 0, a 1-byte "digest" is hex of one byte), so an
 * answer computed from such a value would be wrong without a word.  The
 * query commands check each row they read and stop at the first one that
 * is not sound, naming its scan, its row and the column:
 *
 *     fidx: database 'x' is damaged: scan 2, row 17: size holds text, not an integer
 *
 * The columns checked are found by their names in the statement
 * (sqlite3_column_name(): a column, or an expression given that name with
 * AS); a column of another name is not checked.  `fidx verify`, whose job is
 * to name the rows changed, reads rows without these checks.
 */
#ifndef FIDX_ROWCHECK_H
#define FIDX_ROWCHECK_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * SQL: column c (type) is a regular file's, or damaged, so that a query of
 * regular files also reads the rows whose type is damaged and sees them.
 */
#define FIDX_SQL_FILE_OR_DAMAGED(c) "(" c " = 'f' OR " c " NOT IN ('d', 'l', 'p', 's', 'c', 'b'))"

struct fidx_rowcheck;

/* All the columns of a statement, for fidx_rowcheck_new(). */
#define FIDX_ROWCHECK_ALL UINT64_MAX

/*
 * Makes the checks of the columns of s (prepared; its rows are checked with
 * fidx_rowcheck()) that columns has a bit for (1 << index; columns from 64
 * on are always checked): a caller that reads only some of the columns it
 * selects checks only those.  Returns NULL when out of memory.
 */
struct fidx_rowcheck *fidx_rowcheck_new(sqlite3_stmt *s, uint64_t columns);

/*
 * Tells c the root of scan scan_id (copied), so that a path of that scan
 * must be below it.  Returns 0, or -1 when out of memory.
 */
int fidx_rowcheck_root(struct fidx_rowcheck *c, int64_t scan_id, const char *root);

/*
 * Checks the row s is on (the statement c was made for).  Returns NULL when
 * it is sound, else what is wrong: "scan 2, row 17: size holds text, not an
 * integer" (the scan and the row as far as s has columns scan_id and id; a
 * row of the scan table, with an id and a root, is "scan 2: ..."), in a
 * buffer of c valid until the next call.
 */
const char *fidx_rowcheck(struct fidx_rowcheck *c, sqlite3_stmt *s);

/* Whether the n bytes of path are root (rootlen bytes), or below it. */
bool fidx_rowcheck_below(const char *root, size_t rootlen, const char *path, size_t n);

/* Frees c.  NULL is allowed. */
void fidx_rowcheck_free(struct fidx_rowcheck *c);

#endif /* FIDX_ROWCHECK_H */
