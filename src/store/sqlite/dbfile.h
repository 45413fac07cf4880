/*
 * dbfile.h - a fidx database as files, without opening it in SQLite.
 *
 * SQLite replays a hot journal and may checkpoint a WAL as soon as it opens a
 * file, so a file that may be someone else's is first looked at with a plain
 * read() of its 100-byte header: the SQLite magic at offset 0, user_version
 * (our schema version, FIDX_SCHEMA_VERSION of store.h) at 60 and
 * application_id at 68, big-endian.  Both the writer and the readers
 * (sqlite.c opens both) ask here first.
 *
 * Reading evidence without a trace.  A WAL database read through SQLite gets
 * a -wal and a -shm file beside it, which a read-only connection cannot
 * remove.  But while no connection is open on a database, it has neither
 * (the last connection to close checkpoints the WAL whole and deletes both),
 * and its main file holds every committed row: it can then be read as an
 * immutable file, which SQLite never writes, locks or adds files beside.
 * What keeps it immutable is a lock of fidx's own on one byte of the file:
 *
 *     reader (READ store)                   writer (WRITE store)
 *     no -wal, -shm, -journal?              opens: -wal, -shm appear
 *     F_OFD_SETLK F_RDLCK on the byte       after each commit, >= 1000 pages
 *     none appeared since?                    in the WAL: checkpoint only when
 *     ──► immutable read of the main file     F_OFD_GETLK finds no reader
 *     (else: an ordinary WAL read)          closing: no checkpoint while a
 *     size, mtime, ctime, change counter      reader holds it (the WAL is left
 *     the same at the end? (a writer that     for the next writer; readers
 *     is not fidx knows nothing of the        read through it meanwhile)
 *     lock: the query then fails)
 *
 * A writer that opened the database before the reader looked left a -wal, so
 * the reader reads through the WAL as usual; one that opens it after the
 * reader looked sees the lock before it writes the main file.  The lock is an
 * open file description lock (fcntl(2)): it is tied to the descriptor, not
 * the process, so it never touches SQLite's own POSIX locks, and it is
 * dropped by the kernel when the reader dies.
 */
#ifndef FIDX_DBFILE_H
#define FIDX_DBFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "store.h"

/* "fidx" in ASCII: PRAGMA application_id of every fidx database. */
#define FIDX_APPLICATION_ID 0x66696478

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

/*
 * The byte of a database file that a reader holds a read lock on while it
 * reads the main file as immutable.  SQLite's own locks take the bytes
 * 0x40000000 to 0x400001FF (pending, reserved, 510 shared); this one is past
 * them, so SQLite never takes it, and no lock ever covers data it reads.
 */
#define FIDX_DBFILE_READER_BYTE 0x40000400

/* A database file held still for a reader (fidx_dbfile_hold()). */
struct fidx_dbfile_hold {
	int fd;                    /* holds the read lock; -1 when nothing is held */
	dev_t dev;                 /* the file held ... */
	ino_t ino;
	off_t size;                /* ... and what must not change while it is read */
	struct timespec mtime;
	struct timespec ctime;
	uint32_t change_counter;   /* SQLite's file change counter (header offset 24) */
};

/*
 * Whether no -wal, -shm or -journal file lies beside the database at path:
 * then no SQLite connection is open on it and its main file holds every
 * committed row.
 */
bool fidx_dbfile_at_rest(const char *path);

/*
 * Takes the reader lock on the database at path and notes what the file is,
 * when at_rest is false, or when it is true and the database is at rest both
 * before and after the lock is taken.  Returns true with h filled (h->fd is
 * the lock), or false with h->fd = -1 (not at rest, or no lock to be had,
 * e.g. a file system without them): the caller then reads through SQLite's
 * own locks.
 */
bool fidx_dbfile_hold(const char *path, bool at_rest, struct fidx_dbfile_hold *h);

/*
 * Whether the file h holds changed since it was taken (size, mtime, ctime,
 * change counter), or path no longer names it.  False when nothing is held.
 */
bool fidx_dbfile_moved(const char *path, const struct fidx_dbfile_hold *h);

/* Drops the lock of h, if any (h->fd = -1 afterwards). */
void fidx_dbfile_release(struct fidx_dbfile_hold *h);

/*
 * Whether some reader holds the reader lock of the database file open at fd
 * (a descriptor of the writer's own).  False when fd is -1 or the lock
 * cannot be tested.
 */
bool fidx_dbfile_reader_holds(int fd);

/*
 * Works out why the files SQLite needs for the database at path cannot be
 * had, as the OS says it (access(2) with the effective ids): the database
 * file, to create in its folder (when write), to read, to write (when
 * write); the journal beside it (the -wal and -shm files in WAL mode, else
 * the -journal file), to open or to create in the folder.  wal: 1 or 0, or
 * -1 to read it from the file's header.  Returns -1 with err filled ("cannot
 * create 'x.db-wal' beside database 'x.db': Permission denied", the errno),
 * or 0 when every file is to be had (the cause lies elsewhere).
 */
int fidx_dbfile_why(const char *path, bool write, int wal, struct fidx_error *err);

/*
 * Makes an empty file for a scratch database in fidx_tmpdir() (sysinfo.h), named
 * "<prefix>-XXXXXX" (mkstemp(3)).  Until fidx_dbfile_remove() removes it,
 * a SIGPIPE (stdout's reader gone: `fidx dupes /usr | head`) removes it and
 * its -wal, -shm and -journal before the process dies of the signal (when
 * SIGPIPE is not ignored; ignored, the write fails and the caller removes; one
 * scratch database per process).  Returns its malloc'ed path, or NULL with
 * errno set.
 */
char *fidx_dbfile_temporary(const char *prefix);

/* Removes the database at path and the files SQLite keeps beside it. */
void fidx_dbfile_remove(const char *path);

#endif /* FIDX_DBFILE_H */
