/*
 * findpat.h - the PATTERN of `fidx find`: what matches, and which literal
 * pieces every match must contain (for the trigram index, pathindex.h).
 *
 *   substring  the pattern's bytes anywhere in the path (memmem)
 *   glob       fnmatch(3) without flags: '*' and '?' match any byte, '/'
 *              included, '[...]' a set, '\' quotes; against the whole path
 *              when the pattern holds a '/', else against the name (the last
 *              component)
 *   regex      POSIX extended (regcomp(3)), found anywhere in the path
 *
 * Case-insensitive (-i) folds ASCII letters only (A-Z = a-z); every other
 * byte, UTF-8 or not, must be equal.  fidx runs in the C locale, so glob and
 * regex see bytes, never characters: a path that is not valid UTF-8 matches
 * like any other.
 *
 * The literals are pieces of bytes that any matching path contains, as the
 * pattern writes them (the index folds them): the substring itself; the runs between the
 * wildcards of a glob; for a regex, the runs of plain characters outside
 * groups, when it has no '|'.  They are found conservatively: what cannot be
 * read with certainty yields fewer literals (a wider search), never a wrong
 * one.
 */
#ifndef FIDX_FINDPAT_H
#define FIDX_FINDPAT_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The one case folding of fidx find: ASCII letters to lower case, every
 * other byte as it is.  -i matching compares by it, and a store's path index
 * keys its trigrams by it, so that the index never misses an -i match.
 */
static inline unsigned char fidx_findpat_fold(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* How the pattern is read. */
enum fidx_findpat_kind {
	FIDX_FINDPAT_SUBSTRING,
	FIDX_FINDPAT_GLOB,
	FIDX_FINDPAT_REGEX,
};

/* A literal piece every match contains. */
struct fidx_findpat_literal {
	char *s;     /* its bytes (malloc'ed) */
	size_t len;  /* how many */
};

/* A compiled pattern. */
struct fidx_findpat {
	enum fidx_findpat_kind kind;
	bool icase;          /* ASCII letters fold */
	bool on_name;        /* a glob without '/': matched against the name */
	char *text;          /* the pattern (lower-cased for a case-insensitive substring) */
	size_t len;          /* its length */
	regex_t re;          /* the compiled regex (kind REGEX) */
	bool has_re;         /* re is compiled (to be freed) */
	char *folded;        /* scratch for a folded path (case-insensitive substring) */
	size_t folded_cap;
	struct fidx_findpat_literal *lit; /* the literals */
	size_t nlit;
};

/*
 * Compiles pattern.  Returns 0, or -1 with a one-line reason in err (errsz
 * bytes: the regex error, or "out of memory").
 */
int fidx_findpat_compile(struct fidx_findpat *p, enum fidx_findpat_kind kind, const char *pattern,
			 bool icase, char *err, size_t errsz);

/*
 * Returns 1 when the path (len bytes, NUL-terminated) matches, 0 when not,
 * -1 when out of memory (a case-insensitive substring folds into scratch).
 */
int fidx_findpat_match(struct fidx_findpat *p, const char *path, size_t len);

/* Frees what p holds.  A zeroed p is allowed. */
void fidx_findpat_free(struct fidx_findpat *p);

#endif /* FIDX_FINDPAT_H */
