/*
 * record.h - one inventory entry as it travels through the scan pipeline.
 *
 * The walker fills a record from the directory entry and its statx() data,
 * a hash worker may add digests (or an error), and the writer hands it to the
 * store, which frees nothing: the pipeline stage that pops a record last
 * releases it with fidx_record_free().  Every field is plain data so that a
 * record can cross threads through a queue without further locking.
 */
#ifndef FIDX_RECORD_H
#define FIDX_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timestamp.h"

/* The digests fidx can compute, in the order of the database columns. */
enum fidx_digest {
	FIDX_MD5,
	FIDX_SHA1,
	FIDX_SHA256,
	FIDX_SHA512,
	FIDX_XXH128,
	FIDX_NDIGESTS
};

#define FIDX_DIGEST_MAX 64 /* bytes in the longest digest (SHA-512) */

/* Metadata of one entry, as statx() reported it. */
struct fidx_meta {
	uint64_t size;     /* st_size in bytes */
	uint64_t blocks;   /* st_blocks, 512-byte units */
	uint32_t mode;     /* st_mode: type and permission bits */
	uint32_t uid;      /* owner */
	uint32_t gid;      /* group */
	uint64_t nlink;    /* hard link count */
	uint64_t dev;      /* device number, makedev(major, minor) */
	uint64_t ino;      /* inode number */
	struct fidx_time atime; /* last access */
	struct fidx_time mtime; /* last content change */
	struct fidx_time ctime; /* last status change */
	struct fidx_time btime; /* birth time; valid only if has_btime */
	bool has_btime;    /* the filesystem reported a birth time */
};

/*
 * What a forensic read of a disk image (or a Windows walk) knows of an entry
 * beside its metadata (row.h's image columns and attributes).  The strings
 * are static or owned by the record's image (freed with it).
 */
struct fidx_image_meta {
	const char *state;         /* "allocated", "deleted", "reallocated", "orphan" (static),
				      or NULL (a live file system's entry: source_win.c) */
	char *stream;              /* an alternate data stream's name, or NULL; owned */
	unsigned no_time;          /* bit k: time k of the metadata (atime, mtime, ctime,
				      btime) is unknown (TSK's 0): NULL, not the epoch */
	bool has_fn_times;         /* NTFS: fn_time holds the $FILE_NAME times */
	struct fidx_time fn_time[4]; /* atime, mtime, ctime, btime of $FILE_NAME */
	uint32_t attributes;       /* Windows' FILE_ATTRIBUTE_* word (NTFS: $STANDARD_INFORMATION's
				      flags); valid only if has_attributes */
	bool has_attributes;       /* the source knows the entry's attributes */
};

/* One entry of the inventory. */
struct fidx_record {
	int64_t scan_id;       /* the scan row this entry belongs to */
	size_t root_index;     /* which of the scan's roots it was found under */
	char *path;            /* absolute path, byte-exact, NUL-terminated; owned */
	size_t path_len;       /* strlen(path) */
	size_t name_off;       /* offset of the last component within path */
	size_t ext_off;        /* offset of the extension within path (== path_len if none) */
	char type;             /* 'f' 'd' 'l' 'p' 's' 'c' 'b', or 0 when unknown */
	bool has_meta;         /* meta is valid (statx succeeded) */
	struct fidx_meta meta; /* the entry's metadata */
	char *link_target;     /* symlink target bytes, NUL-terminated, or NULL; owned */
	size_t link_len;       /* length of link_target */
	unsigned digest_mask;  /* bit (1u << d) set when digest[d] holds a value */
	uint8_t digest[FIDX_NDIGESTS][FIDX_DIGEST_MAX]; /* raw digests */
	char *error;           /* NULL, or what failed ("open: Permission denied"); owned */
	int64_t digests_from;  /* the scan whose read of the file gave the digests, when
				  they were reused from an earlier scan; 0: read by this one */
	struct fidx_image_meta *image; /* an entry of a disk image: what else it knows; or
				  NULL (the walk); owned */
	bool no_read;          /* its path names no file to read (an entry in an image):
				  the pipeline never reads it, whatever its digests */
};

/*
 * The errors of entries an interrupted scan met but did not finish: a
 * directory not listed, a file not hashed.  `fidx scan --resume` drops these
 * rows and does them again.
 */
#define FIDX_ERROR_NOT_READ "not read: scan interrupted"
/* The error of a symlink --follow did not follow: its target lies outside the roots. */
#define FIDX_ERROR_NOT_FOLLOWED "not followed: its target is outside the scanned roots" \
	" (--follow-all follows it)"
#define FIDX_ERROR_NOT_HASHED "not hashed: scan interrupted"


/* The digests' names and lengths (defined in hash.c, with the hasher). */

/* Returns the length in bytes of digest d. */
size_t fidx_digest_len(enum fidx_digest d);

/* Returns the lower-case name of digest d ("md5", "sha256", ...). */
const char *fidx_digest_name(enum fidx_digest d);

/*
 * Parses a digest name.  Returns the digest, or -1 if name is not one of
 * fidx_digest_name()'s results.
 */
int fidx_digest_parse(const char *name);

/*
 * The offset of the extension of the name at name_off in path (path_len
 * bytes), as Python's splitext finds it (leading dots do not count), or
 * path_len when it has none.
 */
size_t fidx_ext_offset(const char *path, size_t name_off, size_t path_len);

/* Returns the record's file type letter for a st_mode, or 0 if unknown. */
char fidx_type_of_mode(uint32_t mode);

/*
 * Sets rec->error to "op: strerror(errnum)" (or just op when errnum is 0),
 * replacing any earlier error.  Returns 0, or -1 with errno set when out of
 * memory.
 */
int fidx_record_set_error(struct fidx_record *rec, const char *op, int errnum);

/* Frees a record and everything it owns.  NULL is allowed. */
void fidx_record_free(struct fidx_record *rec);

#endif /* FIDX_RECORD_H */
