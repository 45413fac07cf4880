/*
 * dbfile.h - recognising a fidx database file without opening it in SQLite.
 *
 * SQLite replays a hot journal and may checkpoint a WAL as soon as it opens a
 * file, so a file that may be someone else's is first looked at with a plain
 * read() of its 100-byte header: the SQLite magic at offset 0, user_version
 * (our schema version) at 60 and application_id at 68, big-endian.  Both the
 * writer (store_sqlite.c) and the readers (query.c) ask here first.
 */
#ifndef FIDX_DBFILE_H
#define FIDX_DBFILE_H

#include <stdint.h>

/* "fidx" in ASCII: PRAGMA application_id of every fidx database. */
#define FIDX_APPLICATION_ID 0x66696478
/* The schema version this code writes and reads (PRAGMA user_version). */
#define FIDX_SCHEMA_VERSION 4

/* What a path holds, as far as fidx is concerned. */
enum fidx_dbfile_kind {
	FIDX_DBFILE_MISSING,  /* no such file */
	FIDX_DBFILE_EMPTY,    /* a regular file of 0 bytes */
	FIDX_DBFILE_FIDX,     /* a SQLite file with our application_id */
	FIDX_DBFILE_SQLITE,   /* a SQLite file of another application */
	FIDX_DBFILE_OTHER,    /* anything else that is not a directory */
};

/*
 * Reads the header of the file at path.  Returns its kind, with *version set
 * to the header's user_version for FIDX_DBFILE_FIDX (the header may lag
 * behind a WAL; SQLite's PRAGMA is the final word), or -1 with errno set when
 * the file cannot be opened or read (EISDIR for a directory).
 */
int fidx_dbfile_probe(const char *path, uint32_t *version);

/* Returns the folder for scratch databases: $TMPDIR, or /tmp. */
const char *fidx_dbfile_tmpdir(void);

/*
 * Makes an empty file for a scratch database in fidx_dbfile_tmpdir(), named
 * "<prefix>-XXXXXX" (mkstemp(3)).  Returns its malloc'ed path, or NULL with
 * errno set.
 */
char *fidx_dbfile_temporary(const char *prefix);

/* Removes the database at path and the files SQLite keeps beside it. */
void fidx_dbfile_remove(const char *path);

#endif /* FIDX_DBFILE_H */
