/*
 * schema.c - the SQL of fidx's database layout (docs/SCHEMA.md): version 1's
 * tables and views, and the step to each later version.
 *
 * The one place the schema is written.  sqlite.c creates a database by
 * running fidx_schema_sql and then every step, and migrates an older one by
 * the steps it lacks, so that a new database equals a migrated one.  At build
 * time schema-objects.c replays the same SQL into an in-memory SQLite
 * database for each version and writes what SQLite made of it (the objects'
 * names and SQL text, each table's columns) into schema_objects.c, which
 * sqlite_foreign() compares a database with: no replay at run time (it
 * took 3 to 4 ms, more than a whole `fidx find`).
 */
#include "schema.h"

#include <stdlib.h>
#include <string.h>

#include "dbtime.h"

/*
 * SQL for an integer-nanosecond column c as ISO-8601 UTC text with nine
 * fraction digits ("2023-11-14T22:13:20.123456789Z"), NULL when c is NULL.
 * The floor division keeps times before 1970 right.
 */
#define ISO_TIME(c) \
	"strftime('%Y-%m-%dT%H:%M:%S', (" c " - (" c " % 1000000000 + 1000000000)" \
	" % 1000000000) / 1000000000, 'unixepoch')" \
	" || printf('.%09dZ', (" c " % 1000000000 + 1000000000) % 1000000000)"

/* SQL for a digest column as lower-case hex, NULL when not computed. */
#define HEX_DIGEST(c) "nullif(lower(hex(" c ")), '')"

/*
 * Schema version 1 (docs/SCHEMA.md), the base every later version adds to
 * (see fidx_schema_migrations[]).  No CHECK or UNIQUE constraints on `file`: they would
 * cost time on every row of the bulk load.
 */
const char fidx_schema_sql[] =
	"CREATE TABLE scan ("
	" id INTEGER PRIMARY KEY,"
	" root TEXT NOT NULL,"
	" host TEXT, os TEXT, kernel TEXT, arch TEXT, version TEXT, options TEXT,"
	" started_ns INTEGER NOT NULL,"
	" finished_ns INTEGER,"
	" status TEXT NOT NULL"
	"  CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),"
	" entries INTEGER, files INTEGER, dirs INTEGER, bytes INTEGER, errors INTEGER);\n"
	"CREATE TABLE file ("
	" id INTEGER PRIMARY KEY,"
	" scan_id INTEGER NOT NULL REFERENCES scan(id),"
	" path TEXT NOT NULL, name TEXT NOT NULL, ext TEXT NOT NULL,"
	" type TEXT,"
	" size INTEGER, blocks INTEGER, mode INTEGER, uid INTEGER, gid INTEGER,"
	" nlink INTEGER, dev INTEGER, ino INTEGER,"
	" atime_ns INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, btime_ns INTEGER,"
	" link_target TEXT,"
	" md5 BLOB, sha1 BLOB, sha256 BLOB, sha512 BLOB, xxh128 BLOB,"
	" error TEXT);\n"
	/*
	 * permissions: the type letter is picked by the format bits
	 * (mode >> 12: 1 fifo, 2 char, 4 dir, 6 block, 8 file, 10 link,
	 * 12 socket), then r/w/x per class, where the execute letter also
	 * shows setuid/setgid (s, S) and sticky (t, T).
	 * device: glibc's major()/minor() of st_dev.
	 */
	"CREATE VIEW file_view AS SELECT"
	" id, scan_id, path, name, ext,"
	" CASE type WHEN 'f' THEN 'file' WHEN 'd' THEN 'directory'"
	"  WHEN 'l' THEN 'symlink' WHEN 'p' THEN 'fifo' WHEN 's' THEN 'socket'"
	"  WHEN 'c' THEN 'char device' WHEN 'b' THEN 'block device' END AS type,"
	" size, blocks,"
	" substr('?pc?d?b?-?l?s?\?\?', ((mode >> 12) & 15) + 1, 1)"
	"  || substr('-r', ((mode >> 8) & 1) + 1, 1)"
	"  || substr('-w', ((mode >> 7) & 1) + 1, 1)"
	"  || substr('-xSs', ((mode >> 6) & 1) + ((mode >> 10) & 2) + 1, 1)"
	"  || substr('-r', ((mode >> 5) & 1) + 1, 1)"
	"  || substr('-w', ((mode >> 4) & 1) + 1, 1)"
	"  || substr('-xSs', ((mode >> 3) & 1) + ((mode >> 9) & 2) + 1, 1)"
	"  || substr('-r', ((mode >> 2) & 1) + 1, 1)"
	"  || substr('-w', ((mode >> 1) & 1) + 1, 1)"
	"  || substr('-xTt', (mode & 1) + ((mode >> 8) & 2) + 1, 1) AS permissions,"
	" CASE WHEN mode IS NOT NULL THEN printf('%06o', mode) END AS mode,"
	" uid, gid, nlink,"
	" CASE WHEN dev IS NOT NULL THEN"
	"  printf('%d:%d', ((dev >> 8) & 0xfff) | ((dev >> 32) & 0xfffff000),"
	"  (dev & 0xff) | ((dev >> 12) & 0xffffff00)) END AS device,"
	" ino,"
	" " ISO_TIME("atime_ns") " AS atime,"
	" " ISO_TIME("mtime_ns") " AS mtime,"
	" " ISO_TIME("ctime_ns") " AS ctime,"
	" " ISO_TIME("btime_ns") " AS btime,"
	" link_target,"
	" " HEX_DIGEST("md5") " AS md5,"
	" " HEX_DIGEST("sha1") " AS sha1,"
	" " HEX_DIGEST("sha256") " AS sha256,"
	" " HEX_DIGEST("sha512") " AS sha512,"
	" " HEX_DIGEST("xxh128") " AS xxh128,"
	" error"
	" FROM file;\n"
	"CREATE VIEW data AS SELECT"
	" id, path AS full_path, name AS file_name, ext AS file_extension,"
	" " HEX_DIGEST("md5") " AS hash_md5,"
	" size AS size_bytes,"
	" " ISO_TIME("btime_ns") " AS date_creation,"
	" " ISO_TIME("mtime_ns") " AS date_last_modification"
	" FROM file WHERE type = 'f';\n";

/*
 * Version 2: digests that `fidx dupes` computes after a scan, kept beside the
 * scan's rows (which are never changed): one row per file row whose file it
 * read, after checking that the file still had the row's device, inode, size
 * and mtime.  edges is the XXH3-128 (canonical bytes) of the file's first and
 * last edge_block bytes, which rules files out but never decides; sha256 is
 * the whole content's.  Written by sqlite_add_digests() (write.c).
 */
#define FILE_DIGEST_SQL \
	"CREATE TABLE file_digest (" \
	" file_id INTEGER PRIMARY KEY REFERENCES file(id)," \
	" read_ns INTEGER NOT NULL," \
	" edge_block INTEGER," \
	" edges BLOB," \
	" sha256 BLOB);\n"

/*
 * Version 2: the substring index of `fidx find` (pathindex.c), built for each
 * complete scan by fidx_store_build_indexes().  The keys pack the scan id
 * with a block number (scan_id << 32 | block) or a trigram (scan_id << 24 |
 * trigram), so that every look-up is one rowid probe.
 */
#define PATH_INDEX_SQL \
	"CREATE TABLE path_index (" \
	" scan_id INTEGER PRIMARY KEY REFERENCES scan(id)," \
	" paths INTEGER NOT NULL, blocks INTEGER NOT NULL, trigrams INTEGER NOT NULL," \
	" built_ns INTEGER NOT NULL);\n" \
	"CREATE TABLE path_block (key INTEGER PRIMARY KEY, data BLOB NOT NULL);\n" \
	"CREATE TABLE path_trigram (key INTEGER PRIMARY KEY, blocks BLOB NOT NULL);\n"

/*
 * Version 3: what incremental rescans, `fidx scan --resume` and the seal need.
 * scan.reused/hashed count the files whose digests were taken from
 * base_scan_id (an earlier complete scan of the root) and those read by this
 * scan; scan.pid is the process that writes a running scan (so --resume can
 * tell a killed one from a live one); scan.seal is the SHA-256 of the scan's
 * canonical rows (seal.c).  file.digests_from names the scan that read the
 * file for a reused digest (NULL: this scan read it).  file_seal keeps each
 * sealed row's hash and scan, so that `fidx verify` can name the rows that
 * changed, and those removed.
 */
#define SCAN_V3_SQL \
	"ALTER TABLE scan ADD COLUMN reused INTEGER;\n" \
	"ALTER TABLE scan ADD COLUMN hashed INTEGER;\n" \
	"ALTER TABLE scan ADD COLUMN base_scan_id INTEGER;\n" \
	"ALTER TABLE scan ADD COLUMN pid INTEGER;\n" \
	"ALTER TABLE scan ADD COLUMN seal BLOB;\n" \
	"ALTER TABLE file ADD COLUMN digests_from INTEGER;\n" \
	"CREATE TABLE file_seal (" \
	" file_id INTEGER PRIMARY KEY REFERENCES file(id)," \
	" scan_id INTEGER NOT NULL REFERENCES scan(id)," \
	" row_hash BLOB NOT NULL);\n"

/*
 * Version 4: times exact over statx's whole range (dbtime.h).  A time that
 * does not fit the *_ns column (before 1677-09-21, after 2262-04-11) is kept
 * as T_sec, T_nsec, its T_ns left NULL.  file_view shows the years SQLite's
 * date functions know, 0000 to 9999 (NULL outside).  scan.run_ns is the time the scan
 * ran, over every run of a resumed scan (the gap between runs left out).
 * local_time holds the scanning host's offset from UTC from each `since`
 * (a second) on, over the times the scan recorded: the GDBack view `data`
 * and its `metadata` show dates in the scanning host's local time, as the
 * Go tool did.  file_view shows every time, `data` follows GDBack's schema
 * (file_extension with its dot, one row per non-directory, the newest
 * complete scan of each root, a root inside another's tree shown from the
 * newer scan), `metadata` is GDBack's table of the same name: a row per
 * inventory (a shown scan whose root is not in another shown scan's tree).
 */
#define ISO_TIME_V4(t) \
	"CASE WHEN " FIDX_TIME_SEC_SQL(t) " BETWEEN -62167219200 AND 253402300799 THEN" \
	" strftime('%Y-%m-%dT%H:%M:%S', " FIDX_TIME_SEC_SQL(t) ", 'unixepoch')" \
	" || printf('.%09dZ', " FIDX_TIME_NSEC_SQL(t) ") END"

/* SQL: the UTC offset of the scanning host at second sec of the row's scan (0 when unknown). */
#define UTC_OFFSET(scan, sec) \
	"coalesce((SELECT l.utc_offset FROM local_time l WHERE l.scan_id = " scan \
	" AND l.since <= " sec " ORDER BY l.since DESC LIMIT 1), 0)"

/*
 * SQL: second sec of the row's scan as "YYYY-MM-DD HH:MM:SS" in the scanning
 * host's local time; NULL when the local date is outside the years 0000 to
 * 9999 (strftime() would print "-001-..." before year 0).
 */
#define LOCAL_DATETIME(scan, sec) \
	"(SELECT CASE WHEN v BETWEEN -62167219200 AND 253402300799 THEN" \
	" strftime('%Y-%m-%d %H:%M:%S', v, 'unixepoch') END" \
	" FROM (SELECT " sec " + " UTC_OFFSET(scan, sec) " AS v))"

/* SQL: scan s is the newest complete scan of its root. */
#define NEWEST_COMPLETE(s) \
	s ".status = 'complete' AND " s ".id = (SELECT max(id) FROM scan" \
	" WHERE root = " s ".root AND status = 'complete')"

/*
 * SQL: path p (of a row of scan s) lies in the tree of a newer scan n that
 * is the newest complete scan of its root: the row is shown from n instead.
 */
#define COVERED_BY_NEWER(s, p) \
	"EXISTS (SELECT 1 FROM scan n WHERE n.id > " s ".id AND " NEWEST_COMPLETE("n") \
	" AND (n.root = '/' OR " p " = n.root OR (" p " > n.root || '/' AND " p " < n.root || '0')))"

/* SQL: scan s shows rows in `data`: newest of its root, not wholly in a newer one's tree. */
#define SHOWN_SCAN(s) NEWEST_COMPLETE(s) " AND NOT " COVERED_BY_NEWER(s, s ".root")

#define SCHEMA_V4_SQL \
	"ALTER TABLE file ADD COLUMN atime_sec INTEGER;\n" \
	"ALTER TABLE file ADD COLUMN atime_nsec INTEGER;\n" \
	"ALTER TABLE file ADD COLUMN mtime_sec INTEGER;\n" \
	"ALTER TABLE file ADD COLUMN mtime_nsec INTEGER;\n" \
	"ALTER TABLE file ADD COLUMN ctime_sec INTEGER;\n" \
	"ALTER TABLE file ADD COLUMN ctime_nsec INTEGER;\n" \
	"ALTER TABLE file ADD COLUMN btime_sec INTEGER;\n" \
	"ALTER TABLE file ADD COLUMN btime_nsec INTEGER;\n" \
	"ALTER TABLE scan ADD COLUMN run_ns INTEGER;\n" \
	"CREATE TABLE local_time (" \
	" scan_id INTEGER NOT NULL REFERENCES scan(id)," \
	" since INTEGER NOT NULL," \
	" utc_offset INTEGER NOT NULL," \
	" PRIMARY KEY (scan_id, since)) WITHOUT ROWID;\n" \
	"DROP VIEW IF EXISTS file_view;\n" \
	"CREATE VIEW file_view AS SELECT" \
	" id, scan_id, path, name, ext," \
	" CASE type WHEN 'f' THEN 'file' WHEN 'd' THEN 'directory'" \
	"  WHEN 'l' THEN 'symlink' WHEN 'p' THEN 'fifo' WHEN 's' THEN 'socket'" \
	"  WHEN 'c' THEN 'char device' WHEN 'b' THEN 'block device' END AS type," \
	" size, blocks," \
	" substr('?pc?d?b?-?l?s?\?\?', ((mode >> 12) & 15) + 1, 1)" \
	"  || substr('-r', ((mode >> 8) & 1) + 1, 1)" \
	"  || substr('-w', ((mode >> 7) & 1) + 1, 1)" \
	"  || substr('-xSs', ((mode >> 6) & 1) + ((mode >> 10) & 2) + 1, 1)" \
	"  || substr('-r', ((mode >> 5) & 1) + 1, 1)" \
	"  || substr('-w', ((mode >> 4) & 1) + 1, 1)" \
	"  || substr('-xSs', ((mode >> 3) & 1) + ((mode >> 9) & 2) + 1, 1)" \
	"  || substr('-r', ((mode >> 2) & 1) + 1, 1)" \
	"  || substr('-w', ((mode >> 1) & 1) + 1, 1)" \
	"  || substr('-xTt', (mode & 1) + ((mode >> 8) & 2) + 1, 1) AS permissions," \
	" CASE WHEN mode IS NOT NULL THEN printf('%06o', mode) END AS mode," \
	" uid, gid, nlink," \
	" CASE WHEN dev IS NOT NULL THEN" \
	"  printf('%d:%d', ((dev >> 8) & 0xfff) | ((dev >> 32) & 0xfffff000)," \
	"  (dev & 0xff) | ((dev >> 12) & 0xffffff00)) END AS device," \
	" ino," \
	" " ISO_TIME_V4("atime") " AS atime," \
	" " ISO_TIME_V4("mtime") " AS mtime," \
	" " ISO_TIME_V4("ctime") " AS ctime," \
	" " ISO_TIME_V4("btime") " AS btime," \
	" link_target," \
	" " HEX_DIGEST("md5") " AS md5," \
	" " HEX_DIGEST("sha1") " AS sha1," \
	" " HEX_DIGEST("sha256") " AS sha256," \
	" " HEX_DIGEST("sha512") " AS sha512," \
	" " HEX_DIGEST("xxh128") " AS xxh128," \
	" error" \
	" FROM file;\n" \
	"DROP VIEW IF EXISTS data;\n" \
	"CREATE VIEW data AS SELECT" \
	" f.id AS id, f.path AS full_path, f.name AS file_name," \
	" CASE WHEN f.ext <> '' THEN '.' || f.ext WHEN instr(f.name, '.') = 0 THEN ''" \
	"  WHEN substr(f.name, -1) = '.' THEN '.' ELSE '.' || ltrim(f.name, '.') END" \
	"  AS file_extension," \
	" " HEX_DIGEST("f.md5") " AS hash_md5," \
	" f.size AS size_bytes," \
	" " LOCAL_DATETIME("f.scan_id", FIDX_TIME_SEC_SQL("f.btime")) " AS date_creation," \
	" " LOCAL_DATETIME("f.scan_id", FIDX_TIME_SEC_SQL("f.mtime")) \
	"  AS date_last_modification" \
	" FROM scan s JOIN file f ON f.scan_id = s.id" \
	" WHERE " NEWEST_COMPLETE("s") " AND f.type IS NOT 'd'" \
	" AND NOT " COVERED_BY_NEWER("s", "f.path") ";\n" \
	"CREATE VIEW metadata AS SELECT" \
	" s.id AS id, NULL AS signature_md5, NULL AS challenge, 'linux' AS so," \
	" CASE s.arch WHEN 'x86_64' THEN 'amd64' WHEN 'aarch64' THEN 'arm64'" \
	"  WHEN 'i386' THEN '386' WHEN 'i486' THEN '386' WHEN 'i586' THEN '386'" \
	"  WHEN 'i686' THEN '386' WHEN 'armv6l' THEN 'arm' WHEN 'armv7l' THEN 'arm'" \
	"  WHEN 'ppc64le' THEN 'ppc64le' WHEN 'ppc64' THEN 'ppc64' WHEN 's390x' THEN 's390x'" \
	"  WHEN 'riscv64' THEN 'riscv64' WHEN 'mips64' THEN 'mips64'" \
	"  WHEN 'loongarch64' THEN 'loong64' ELSE s.arch END AS architecture," \
	" " LOCAL_DATETIME("s.id", "(s.started_ns / 1000000000 - (s.started_ns % 1000000000 < 0))") \
	"  AS date_db_creation" \
	" FROM scan s WHERE " SHOWN_SCAN("s") " AND NOT EXISTS (SELECT 1 FROM scan o" \
	"  WHERE o.id <> s.id AND " SHOWN_SCAN("o") " AND (o.root = '/' OR" \
	"  (s.root > o.root || '/' AND s.root < o.root || '0')));\n"

/*
 * Version 5: each scan's UUID, its identity across stores (a scan pushed to a
 * server twice is stored once).  Scans made before get a random one (version
 * 4, RFC 9562) when the database is migrated.  The UUID is not sealed: a
 * sealed scan keeps its seal through the migration.
 */
#define RANDOM_HEX(bytes) "lower(hex(randomblob(" #bytes ")))"
#define SCHEMA_V5_SQL \
	"ALTER TABLE scan ADD COLUMN uuid TEXT;\n" \
	"UPDATE scan SET uuid = " RANDOM_HEX(4) " || '-' || " RANDOM_HEX(2) " || '-4'" \
	" || substr(" RANDOM_HEX(2) ", 2) || '-' || substr('89ab', abs(random() % 4) + 1, 1)" \
	" || substr(" RANDOM_HEX(2) ", 2) || '-' || " RANDOM_HEX(6) ";\n" \
	"CREATE UNIQUE INDEX scan_uuid ON scan (uuid);\n"

/*
 * Version 6: what a forensic read of a disk image knows (row.h's
 * FIDX_IMAGE_COLUMNS; NULL in a walk's rows): the allocation state, an
 * alternate data stream's name, and NTFS's $FILE_NAME times, each as T_ns
 * or beyond its range T_sec, T_nsec (dbtime.h), as the other four times.
 */
#define FN_TIME_COLUMNS(t) \
	"ALTER TABLE file ADD COLUMN " t "_sec INTEGER;\n" \
	"ALTER TABLE file ADD COLUMN " t "_nsec INTEGER;\n"
#define SCHEMA_V6_SQL \
	"ALTER TABLE file ADD COLUMN state TEXT;\n" \
	"ALTER TABLE file ADD COLUMN stream TEXT;\n" \
	"ALTER TABLE file ADD COLUMN fn_atime_ns INTEGER;\n" \
	"ALTER TABLE file ADD COLUMN fn_mtime_ns INTEGER;\n" \
	"ALTER TABLE file ADD COLUMN fn_ctime_ns INTEGER;\n" \
	"ALTER TABLE file ADD COLUMN fn_btime_ns INTEGER;\n" \
	FN_TIME_COLUMNS("fn_atime") FN_TIME_COLUMNS("fn_mtime") \
	FN_TIME_COLUMNS("fn_ctime") FN_TIME_COLUMNS("fn_btime")

/*
 * Version 7: the entry's Windows file attributes (row.h's
 * FIDX_ATTR_COLUMNS): a Windows walk's, or an NTFS image's
 * $STANDARD_INFORMATION flags; NULL in a Linux walk's rows and in the rows
 * already there, whose seals stay as they were.
 */
#define SCHEMA_V7_SQL \
	"ALTER TABLE file ADD COLUMN attributes INTEGER;\n"

/*
 * fidx_schema_migrations[v - 1] takes a database from version v to v + 1.  A
 * new database gets fidx_schema_sql and then every step, so that each addition is
 * written once and a new database equals a migrated one.  Steps only add
 * (tables, indexes, views; columns with defaults): what a query of an earlier
 * version reads keeps its meaning.
 */
const char *const fidx_schema_migrations[FIDX_SCHEMA_VERSION - 1] = {
	/* 1 -> 2 */
	FILE_DIGEST_SQL PATH_INDEX_SQL,
	/* 2 -> 3 */
	SCAN_V3_SQL,
	/* 3 -> 4 */
	SCHEMA_V4_SQL,
	/* 4 -> 5 */
	SCHEMA_V5_SQL,
	/* 5 -> 6 */
	SCHEMA_V6_SQL,
	/* 6 -> 7 */
	SCHEMA_V7_SQL,
};

char *fidx_schema_table_columns(sqlite3 *db, const char *name)
{
	sqlite3_stmt *s;
	char *out = NULL;
	if (sqlite3_prepare_v2(db, "SELECT group_concat(c, ', ') FROM (SELECT quote(name) || ' '"
			       " || quote(type) || ' ' || \"notnull\" || ' ' || quote(dflt_value) || ' '"
			       " || pk || ' ' || hidden AS c FROM pragma_table_xinfo(?1, 'main')"
			       " ORDER BY cid)", -1, &s, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW)
		out = strdup(sqlite3_column_text(s, 0) ? (const char *)sqlite3_column_text(s, 0) : "");
	sqlite3_finalize(s);
	return out;
}
