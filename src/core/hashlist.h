/*
 * hashlist.h - hash lists in, a set of digests out: the reading side of
 * `fidx match`.
 *
 * A hash list is a text file of digests.  Its format is told by its first
 * line that is neither blank nor a '#' comment, and per line after that:
 *
 *   first line               format       each later line
 *   ───────────────────────  ───────────  ──────────────────────────────────
 *   %%%% HASHDEEP-1.0        hashdeep     "%%%% size,md5,...,filename" names
 *                                         the columns; "##" lines are
 *                                         comments; size,hex,...,name rows
 *   a CSV header naming a    CSV (NSRL)   one record per line (RFC 4180
 *   digest column ("SHA-1",               quotes); the digest columns are
 *   "MD5", "sha256", ...)                 read, every other column ignored
 *   anything else            sums         each line on its own: a
 *                                         sha256sum/md5sum line ("hex  name",
 *                                         "hex *name", "\hex  escaped\nname"),
 *                                         a BSD tag line ("SHA256 (name) =
 *                                         hex", as `sha256sum --tag` and
 *                                         openssl write), or one bare hex
 *                                         digest; '#' lines are comments
 *
 * Lines end with '\n' (a '\r' before it is dropped), or with '\0' when the
 * first block of the file holds a NUL byte (`sha256sum -z`).  Hex digits may
 * be upper or lower case.  A digest without a label (sums and bare lines) is
 * known by its length: 32 hex digits md5, 40 sha1, 64 sha256, 128 sha512;
 * the caller may name the algorithm instead (32 digits are also xxh128's).
 * A line that is none of these is malformed: the parser says why, and the
 * loader hands its number to the caller, never dropping it silently.
 *
 * The digests go into a fidx_hashset: per algorithm, the raw digests in one
 * array, where each was first seen (list, line) in another, and an
 * open-addressing table (linear probing, at most 3/4 full) of 64-bit slots,
 * each the entry's index and 32 bits of the digest's XXH3 hash, so that a
 * look-up that misses (the common case) mostly touches one cache line of the
 * table and no digest.  Chosen over a sorted array and over a SQLite join by
 * measurement (docs/BENCHMARKS.md, "match").
 */
#ifndef FIDX_HASHLIST_H
#define FIDX_HASHLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* Where a digest was read: the list (0 for the first) and its line (from 1). */
struct fidx_hashloc {
	uint32_t list;  /* index of the list, in the order they were loaded */
	uint32_t line;  /* line number within it */
};

/* A set of digests of every algorithm, each with where it was first seen. */
struct fidx_hashset;

/* Makes an empty set.  Returns NULL (ENOMEM) on failure. */
struct fidx_hashset *fidx_hashset_create(void);

/* Frees a set.  NULL is allowed. */
void fidx_hashset_destroy(struct fidx_hashset *s);

/*
 * Adds the digest d of algorithm algo (fidx_digest_len(algo) bytes) seen at
 * loc.  A digest already in the set keeps its first location.  Returns 1
 * when added, 0 when it was there, -1 with errno set (ENOMEM, or EOVERFLOW
 * past 3 * 2^30 digests of one algorithm).
 */
int fidx_hashset_add(struct fidx_hashset *s, enum fidx_digest algo, const uint8_t *d,
		     struct fidx_hashloc loc);

/* Returns where the digest d of algorithm algo was first seen, or NULL. */
const struct fidx_hashloc *fidx_hashset_find(const struct fidx_hashset *s, enum fidx_digest algo,
					     const uint8_t *d);

/* Returns how many distinct digests of algorithm algo the set holds. */
size_t fidx_hashset_count(const struct fidx_hashset *s, enum fidx_digest algo);

/*
 * The distinct digests of algorithm algo, fidx_hashset_count() of them one
 * after another (fidx_digest_len(algo) bytes each), in the order added;
 * valid until the next add.  NULL when there are none.
 */
const uint8_t *fidx_hashset_digests(const struct fidx_hashset *s, enum fidx_digest algo);

/* The formats of a list (see the table above). */
enum fidx_hashlist_format {
	FIDX_HASHLIST_SUMS,      /* sums, BSD tags and bare digests, told per line */
	FIDX_HASHLIST_HASHDEEP,  /* hashdeep known-hash file */
	FIDX_HASHLIST_CSV,       /* CSV with a header naming its digest columns */
};

/* The state of reading one list: its format and, for hashdeep and CSV, its columns. */
struct fidx_hashlist_parser {
	enum fidx_hashlist_format format;
	int algo;             /* the algorithm of unlabelled digests, or -1: by length */
	bool started;         /* the first line with content was seen */
	bool have_columns;    /* hashdeep/CSV: the columns are known */
	size_t nfields;       /* hashdeep/CSV: fields per row */
	size_t ncols;         /* how many of them hold digests fidx computes */
	struct {
		size_t field;           /* 0-based field number */
		enum fidx_digest algo;  /* its algorithm */
	} col[FIDX_NDIGESTS]; /* the digest columns (the first of each algorithm) */
	char why[160];        /* why the last malformed line is malformed */
};

/* The digests one line holds (a hashdeep or CSV row may hold several). */
struct fidx_hashlist_entry {
	size_t n;                                    /* how many */
	enum fidx_digest algo[FIDX_NDIGESTS];        /* algorithm of each */
	uint8_t digest[FIDX_NDIGESTS][FIDX_DIGEST_MAX]; /* raw bytes of each */
};

/*
 * Makes p ready for the first line of a list.  algo is the algorithm of
 * unlabelled digests (sums and bare lines), or -1 to tell it by length.
 */
void fidx_hashlist_parser_init(struct fidx_hashlist_parser *p, int algo);

/*
 * Parses one line of len bytes (without its terminator; it may hold any
 * byte).  Returns 1 with e filled when the line holds digests, 0 for a line
 * that holds none by design (blank, comment, header), or -1 when it is
 * malformed, with p->why saying why in a few words.
 */
int fidx_hashlist_parse_line(struct fidx_hashlist_parser *p, const char *line, size_t len,
			     struct fidx_hashlist_entry *e);

/* What loading one list found. */
struct fidx_hashlist_stats {
	enum fidx_hashlist_format format;   /* the list's format */
	uint64_t lines;                     /* lines read */
	uint64_t digests[FIDX_NDIGESTS];    /* digests read, per algorithm */
	uint64_t repeated;                  /* of them, already in the set */
	uint64_t malformed;                 /* malformed lines */
};

/* Told about each malformed line of a list, in order: its number and why. */
typedef int fidx_hashlist_malformed_fn(void *ctx, uint64_t line, const char *why);

/*
 * Reads the list at path ("-" for standard input) into set as list number
 * list, with unlabelled digests of algorithm algo (-1: by length).  Each
 * malformed line is passed to bad(ctx, ...), which returns 0 to go on.
 * Fills *st.  Returns 0, or -1 with errno set when the file cannot be read
 * (open, read), memory runs out, the list has more than 2^32 - 1 lines
 * (EOVERFLOW), or bad() returned nonzero (ECANCELED).
 */
int fidx_hashlist_load(struct fidx_hashset *set, const char *path, uint32_t list, int algo,
		       fidx_hashlist_malformed_fn *bad, void *ctx, struct fidx_hashlist_stats *st);

#endif /* FIDX_HASHLIST_H */
