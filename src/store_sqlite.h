/*
 * store_sqlite.h - what the SQLite backend (store_sqlite.c) shares with the
 * code that opens SQLite connections of its own (query.c, cmd_scan.c,
 * reuse.c): hardening, the schema check, and errors worded for the user.
 *
 * A database travels between examiners, and anyone who had it could have
 * added to its schema: a trigger that rewrites sealed rows when a scan
 * inserts, a view in place of a table, a default or an index that calls a
 * function.  fidx runs none of it:
 *
 *   - every connection is hardened (fidx_sqlite_harden()): triggers off
 *     (SQLITE_DBCONFIG_ENABLE_TRIGGER), trusted_schema off (no function with
 *     side effects, no virtual table, from the schema), SQLite's defensive
 *     mode on (no writable_schema, no writes to shadow tables or pages), and
 *     on a read-only connection views off too (fidx reads only tables);
 *   - the schema is compared with the one fidx creates for the database's
 *     version (fidx_sqlite_foreign()): the store refuses to write into a
 *     database holding anything else, and a query says so once and reads.
 */
#ifndef FIDX_STORE_SQLITE_H
#define FIDX_STORE_SQLITE_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Hardens a new connection as above; read_only also turns views off.
 * Returns 0, or -1 when SQLite refused a setting (then sqlite3_errmsg()).
 */
int fidx_sqlite_harden(sqlite3 *db, bool read_only);

/*
 * SQLite's last error on db as a user should read it: the system's reason
 * (strerror) when a file could not be opened, read or written, the full
 * disk's when SQLite says the disk is full, else sqlite3_errmsg(); "out of
 * memory" for a NULL db (sqlite3_open_v2() could not allocate one).
 */
const char *fidx_sqlite_why(sqlite3 *db);

/*
 * Compares the schema of db's main database with the one fidx creates for
 * schema version (1..FIDX_SCHEMA_VERSION): what fidx_schema_sql, the steps
 * up to that version and the index made after a bulk load make, as SQLite
 * made it at build time (schema.h: fidx_schema_versions).  Tables are
 * compared by their columns (name, type, NOT NULL, default, primary key,
 * hidden) when their SQL text differs, views and indexes by their SQL text;
 * any trigger, virtual table or unknown name is foreign; objects fidx may not
 * have made yet (an index before its first scan ended) may be missing, and
 * SQLite's statistics tables (ANALYZE) are SQLite's.  Writes a list of what
 * differs ("trigger 'evil', table 'file' altered") into list, cut with "..."
 * to size bytes.  Returns how many objects differ (0: the schema is fidx's),
 * or -1 with the reason in list.
 */
int fidx_sqlite_foreign(sqlite3 *db, int version, char *list, size_t size);

#endif /* FIDX_STORE_SQLITE_H */
