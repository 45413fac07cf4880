/*
 * findpat.c - the PATTERN of `fidx find` (findpat.h).
 *
 * Matching is the libc's (memmem, fnmatch, regexec) on the path's bytes; the
 * work here is finding the literals for the index without ever claiming one
 * that a match could lack.  The rules, for a glob:
 *
 *   '*' '?'          end the current run
 *   '[...]'          ends it; a set whose end is in doubt (a '[' or '\'
 *                    inside, no ']') stops the search for literals
 *   '\x'             the byte x, part of the run
 *
 * and for a regex (nothing at all when it holds a '|'):
 *
 *   '(' ... ')'      end the run; nothing inside a group counts (it may be
 *                    optional or repeated)
 *   '*' '?' '{m,n}'  the byte before may be absent: it leaves the run, which ends
 *   '+'              the byte before is kept, the run ends
 *   '.' '^' '$' '[...]', '\' + a letter or digit: end the run
 *   '\' + one of .[]()*+?{}|^$\   that byte, part of the run
 *
 * Runs shorter than 3 bytes are dropped (the index has trigrams only).
 */
#include "findpat.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Shorter literals give no trigram. */
#define MIN_LITERAL 3

/* A literal being collected. */
struct run {
	char *s;      /* room for the whole pattern */
	size_t len;
};

/* Adds run r to p's literals when it is long enough, and empties it.  Returns 0, or -1 (ENOMEM). */
static int commit(struct fidx_findpat *p, struct run *r)
{
	size_t n = r->len;
	r->len = 0;
	if (n < MIN_LITERAL)
		return 0;
	struct fidx_findpat_literal *l = realloc(p->lit, (p->nlit + 1) * sizeof(*l));
	if (!l)
		return -1;
	p->lit = l;
	if (!(l[p->nlit].s = malloc(n)))
		return -1;
	memcpy(l[p->nlit].s, r->s, n);
	l[p->nlit++].len = n;
	return 0;
}

/*
 * Returns the index just past the ']' that closes the set opening at g[i]
 * ('['), or 0 when that is in doubt: no ']', or a '[' (a class such as
 * [:alpha:]) or, in a glob, a '\' inside.
 */
static size_t set_end(const char *g, size_t i, bool glob)
{
	size_t j = i + 1;
	if (g[j] == '!' || g[j] == '^')
		j++;
	if (g[j] == ']')
		j++;
	for (; g[j] && g[j] != ']'; j++)
		if (g[j] == '[' || (glob && g[j] == '\\'))
			return 0;
	return g[j] ? j + 1 : 0;
}

/* Finds the literals of glob g.  Returns 0, or -1 (ENOMEM). */
static int glob_literals(struct fidx_findpat *p, const char *g, struct run *r)
{
	for (size_t i = 0; g[i];) {
		char c = g[i];
		if (c == '*' || c == '?') {
			i++;
		} else if (c == '[') {
			if (!(i = set_end(g, i, true)))
				break;
		} else if (c == '\\' && g[i + 1]) {
			r->s[r->len++] = g[i + 1];
			i += 2;
			continue;
		} else if (c == '\\') {
			break;
		} else {
			r->s[r->len++] = c;
			i++;
			continue;
		}
		if (commit(p, r) < 0)
			return -1;
	}
	return commit(p, r);
}

/* Finds the literals of regex x.  Returns 0, or -1 (ENOMEM). */
static int regex_literals(struct fidx_findpat *p, const char *x, struct run *r)
{
	unsigned depth = 0;

	if (strchr(x, '|'))
		return 0;
	for (size_t i = 0; x[i];) {
		char c = x[i];
		if (c == '\\') {
			if (!x[i + 1])
				break;
			if (depth == 0 && strchr(".[]()*+?{}|^$\\", x[i + 1])) {
				r->s[r->len++] = x[i + 1];
				i += 2;
				continue;
			}
			i += 2;
		} else if (c == '[') {
			if (!(i = set_end(x, i, false)))
				break;
		} else if (c == '(' || c == ')') {
			if (c == '(')
				depth++;
			else if (depth)
				depth--;
			i++;
		} else if (depth > 0) {
			i++;
			continue;
		} else if (c == '*' || c == '?' || c == '{') {
			if (r->len)
				r->len--;
			if (c == '{') {
				const char *close = strchr(x + i, '}');
				if (!close)
					break;
				i = (size_t)(close - x);
			}
			i++;
		} else if (c == '+' || c == '.' || c == '^' || c == '$') {
			i++;
		} else {
			r->s[r->len++] = c;
			i++;
			continue;
		}
		if (commit(p, r) < 0)
			return -1;
	}
	return commit(p, r);
}

int fidx_findpat_compile(struct fidx_findpat *p, enum fidx_findpat_kind kind, const char *pattern,
			 bool icase, char *err, size_t errsz)
{
	struct run r = {0};
	int rc;

	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->icase = icase;
	p->len = strlen(pattern);
	if (!(p->text = strdup(pattern)) || !(r.s = malloc(p->len + 1)))
		goto nomem;
	switch (kind) {
	case FIDX_FINDPAT_SUBSTRING:
		if (icase)
			for (size_t i = 0; i < p->len; i++)
				p->text[i] = (char)fidx_findpat_fold((unsigned char)p->text[i]);
		memcpy(r.s, p->text, p->len);
		r.len = p->len;
		rc = commit(p, &r);
		break;
	case FIDX_FINDPAT_GLOB:
		p->on_name = !strchr(pattern, '/');
		rc = glob_literals(p, pattern, &r);
		break;
	default:
		if ((rc = regcomp(&p->re, pattern,
				  REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0))) != 0) {
			regerror(rc, &p->re, err, errsz);
			free(r.s);
			fidx_findpat_free(p);
			return -1;
		}
		p->has_re = true;
		rc = regex_literals(p, pattern, &r);
		break;
	}
	free(r.s);
	if (rc < 0)
		goto nomem_freed;
	return 0;
nomem:
	free(r.s);
nomem_freed:
	fidx_findpat_free(p);
	snprintf(err, errsz, "out of memory");
	errno = ENOMEM;
	return -1;
}

/* Returns the name (last component) of path; the root "/" is its own name. */
static const char *name_of(const char *path, size_t len)
{
	const char *slash = memrchr(path, '/', len);
	return slash && slash[1] ? slash + 1 : path;
}

int fidx_findpat_match(struct fidx_findpat *p, const char *path, size_t len)
{
	switch (p->kind) {
	case FIDX_FINDPAT_SUBSTRING:
		if (len < p->len)
			return 0;
		if (p->len == 0)
			return 1;
		if (!p->icase)
			return memmem(path, len, p->text, p->len) != NULL;
		if (len > p->folded_cap) {
			size_t cap = len > 2 * p->folded_cap ? len : 2 * p->folded_cap;
			char *f = realloc(p->folded, cap);
			if (!f)
				return -1;
			p->folded = f;
			p->folded_cap = cap;
		}
		for (size_t i = 0; i < len; i++)
			p->folded[i] = (char)fidx_findpat_fold((unsigned char)path[i]);
		return memmem(p->folded, len, p->text, p->len) != NULL;
	case FIDX_FINDPAT_GLOB:
		return fnmatch(p->text, p->on_name ? name_of(path, len) : path,
			       p->icase ? FNM_CASEFOLD : 0) == 0;
	default:
		return regexec(&p->re, path, 0, NULL, 0) == 0;
	}
}

void fidx_findpat_free(struct fidx_findpat *p)
{
	if (p->has_re)
		regfree(&p->re);
	for (size_t i = 0; i < p->nlit; i++)
		free(p->lit[i].s);
	free(p->lit);
	free(p->text);
	free(p->folded);
	memset(p, 0, sizeof(*p));
}
