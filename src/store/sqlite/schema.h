/*
 * schema.h - the SQL of fidx's database layout, and what SQLite makes of it.
 *
 * schema.c holds the SQL; schema_objects.c, generated at build time by
 * schema-objects.c from that SQL, holds the objects it makes in each
 * version, which sqlite_foreign() (sqlite.h) compares a database
 * with.
 */
#ifndef FIDX_SCHEMA_H
#define FIDX_SCHEMA_H

#include <sqlite3.h>
#include <stddef.h>

#include "dbfile.h"

/* Version 1's tables and views (docs/SCHEMA.md), as one script. */
extern const char fidx_schema_sql[];

/* fidx_schema_migrations[v - 1] takes a database from version v to v + 1. */
extern const char *const fidx_schema_migrations[FIDX_SCHEMA_VERSION - 1];

/*
 * The secondary index, made once a scan's rows are loaded (a bulk load is
 * faster without it): fidx_store_build_indexes().  The only schema object
 * made outside fidx_schema_sql and fidx_schema_migrations[]; the generated
 * objects include it (another one made elsewhere must be added there too).
 */
#define FIDX_FILE_SCAN_PATH_SQL "CREATE INDEX IF NOT EXISTS file_scan_path ON file (scan_id, path)"

/*
 * The columns of the ordinary table name in db's main database, as one
 * malloc'ed string (quoted name and type, NOT NULL, quoted default, primary
 * key, hidden, of each column in order, comma-separated): how
 * sqlite_foreign() compares a table whose SQL text differs from the one
 * SQLite wrote here.  NULL when they cannot be read (out of memory).
 */
char *fidx_schema_table_columns(sqlite3 *db, const char *name);

/* An object of sqlite_schema as SQLite made it from fidx's SQL. */
struct fidx_schema_object {
	const char *type;     /* "table", "index", "view" */
	const char *name;
	const char *tbl_name;
	const char *sql;      /* NULL for an index SQLite makes itself */
	const char *columns;  /* a table's, as fidx_schema_table_columns() gives them; else NULL */
};

/* The objects of one schema version, in the order of their names. */
struct fidx_schema_version {
	const struct fidx_schema_object *objects;
	size_t count;
};

/*
 * fidx_schema_versions[v - 1]: what fidx_schema_sql, the steps up to version
 * v and FIDX_FILE_SCAN_PATH_SQL make (generated: schema_objects.c).
 */
extern const struct fidx_schema_version fidx_schema_versions[FIDX_SCHEMA_VERSION];

#endif /* FIDX_SCHEMA_H */
