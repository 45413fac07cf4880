/*
 * test_findpat.c - the patterns of `fidx find`: what matches, and the
 * literals handed to the index.
 *
 * The literals are checked two ways: a table of patterns with the exact
 * literals expected, and a random search in which every subject that a
 * random glob or regex matches must hold each of its literals (a literal a
 * match could lack would make the index lose results).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findpat.h"

/* Compiles or fails. */
static void compile(struct fidx_findpat *p, enum fidx_findpat_kind kind, const char *pat,
		    bool icase)
{
	char err[256];
	if (fidx_findpat_compile(p, kind, pat, icase, err, sizeof(err)) != 0)
		fail_msg("compile '%s': %s", pat, err);
}

/* Returns the literals of p joined with '|'. */
static const char *joined(const struct fidx_findpat *p)
{
	static char buf[256];
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < p->nlit; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%.*s", i ? "|" : "",
				      (int)p->lit[i].len, p->lit[i].s);
	return buf;
}

static void test_literals(void **state)
{
	(void)state;
	static const struct { enum fidx_findpat_kind kind; const char *pat, *lits; } cases[] = {
		{FIDX_FINDPAT_SUBSTRING, "hello", "hello"},
		{FIDX_FINDPAT_SUBSTRING, "ab", ""},
		{FIDX_FINDPAT_GLOB, "*.txt", ".txt"},
		{FIDX_FINDPAT_GLOB, "foo*bar?baz", "foo|bar|baz"},
		{FIDX_FINDPAT_GLOB, "a[bc]def", "def"},
		{FIDX_FINDPAT_GLOB, "[]abc]def", "def"},
		{FIDX_FINDPAT_GLOB, "[!x]yzw", "yzw"},
		{FIDX_FINDPAT_GLOB, "abc[", "abc"},
		{FIDX_FINDPAT_GLOB, "abc[[:alpha:]]xyz", "abc"},
		{FIDX_FINDPAT_GLOB, "abc[\\]]xyz", "abc"},
		{FIDX_FINDPAT_GLOB, "x\\*yz", "x*yz"},
		{FIDX_FINDPAT_GLOB, "abc\\", "abc"},
		{FIDX_FINDPAT_REGEX, "foo.*bar", "foo|bar"},
		{FIDX_FINDPAT_REGEX, "colou?r", "colo"},
		{FIDX_FINDPAT_REGEX, "ab+cde", "cde"},
		{FIDX_FINDPAT_REGEX, "abc+de", "abc"},
		{FIDX_FINDPAT_REGEX, "a|bcd", ""},
		{FIDX_FINDPAT_REGEX, "(abc)def", "def"},
		{FIDX_FINDPAT_REGEX, "(ab(cd)ef)*ghi", "ghi"},
		{FIDX_FINDPAT_REGEX, "abcd{1,2}efg", "abc|efg"},
		{FIDX_FINDPAT_REGEX, "x\\.yz", "x.yz"},
		{FIDX_FINDPAT_REGEX, "\\wabc", "abc"},
		{FIDX_FINDPAT_REGEX, "[^/]abc$", "abc"},
		{FIDX_FINDPAT_REGEX, "^/usr/[a-z]+/lib", "/usr/|/lib"},
		{FIDX_FINDPAT_REGEX, "[[:digit:]]abc", ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fidx_findpat p;
		compile(&p, cases[i].kind, cases[i].pat, false);
		if (strcmp(joined(&p), cases[i].lits) != 0)
			fail_msg("'%s': literals '%s', want '%s'", cases[i].pat, joined(&p),
				 cases[i].lits);
		fidx_findpat_free(&p);
	}
}

/* Returns whether hay holds needle (n bytes), ASCII case folded when icase. */
static bool holds(const char *hay, const char *needle, size_t n, bool icase)
{
	for (const char *h = hay; strlen(h) >= n; h++)
		if (icase ? strncasecmp(h, needle, n) == 0 : strncmp(h, needle, n) == 0)
			return true;
	return false;
}

/* Random globs and regexes: every matched subject holds every literal. */
static void test_literals_are_needed(void **state)
{
	(void)state;
	static const char glob_parts[][5] = {"a", "b", "A", "/", "*", "?", "[ab]", "[!a]", "\\*",
					     "ab", "ba", "*"};
	static const char re_parts[][6] = {"a", "b", "A", "/", ".", "*", "+", "?", "(ab)", "(a|b)",
					   "[ab]", "b{2}", "\\.", "^", "a{0,1}", "(b)*"};
	static const char subject_chars[] = "abAB/.*";
	srand(3);
	size_t tried = 0, matched = 0;
	for (int k = 0; k < 3000; k++) {
		bool re = k % 2, icase = k % 3 == 0;
		char pat[64] = "";
		for (int n = 2 + rand() % 6; n > 0; n--)
			strcat(pat, re ? re_parts[rand() % 16] : glob_parts[rand() % 12]);
		struct fidx_findpat p;
		char err[128];
		if (fidx_findpat_compile(&p, re ? FIDX_FINDPAT_REGEX : FIDX_FINDPAT_GLOB, pat, icase,
					 err, sizeof(err)) != 0)
			continue;
		tried++;
		for (int s = 0; s < 200; s++) {
			char subj[24];
			int n = 1 + rand() % 16;
			for (int i = 0; i < n; i++)
				subj[i] = subject_chars[rand() % 7];
			subj[n] = '\0';
			if (fidx_findpat_match(&p, subj, (size_t)n) != 1)
				continue;
			matched++;
			for (size_t l = 0; l < p.nlit; l++)
				if (!holds(subj, p.lit[l].s, p.lit[l].len, icase))
					fail_msg("'%s' matches '%s' without literal '%.*s'", pat, subj,
						 (int)p.lit[l].len, p.lit[l].s);
		}
		fidx_findpat_free(&p);
	}
	assert_true(tried > 1000 && matched > 1000);
}

static void test_matching(void **state)
{
	(void)state;
	static const struct {
		enum fidx_findpat_kind kind;
		const char *pat;
		bool icase;
		const char *path;
		int want;
	} cases[] = {
		{FIDX_FINDPAT_SUBSTRING, "Foo", false, "/a/foo", 0},
		{FIDX_FINDPAT_SUBSTRING, "Foo", true, "/a/fOO", 1},
		{FIDX_FINDPAT_SUBSTRING, "\xc3\x9c", true, "/a/\xc3\xbc", 0}, /* Ü, ü: not folded */
		{FIDX_FINDPAT_SUBSTRING, "X\xff", true, "/a/x\xff", 1},
		{FIDX_FINDPAT_SUBSTRING, "", false, "/", 1},
		{FIDX_FINDPAT_SUBSTRING, "w\nl", false, "/a/new\nline", 1},
		{FIDX_FINDPAT_GLOB, "b*", false, "/a/bc", 1},      /* the name */
		{FIDX_FINDPAT_GLOB, "a*", false, "/a/bc", 0},
		{FIDX_FINDPAT_GLOB, "/a/*", false, "/a/b/c", 1},   /* '*' crosses '/' */
		{FIDX_FINDPAT_GLOB, "/", false, "/", 1},           /* the root's name is "/" */
		{FIDX_FINDPAT_GLOB, "*.C", true, "/x/y.c", 1},
		{FIDX_FINDPAT_GLOB, "x\\*y", false, "/x*y", 1},
		{FIDX_FINDPAT_GLOB, "x\\*y", false, "/xzy", 0},
		{FIDX_FINDPAT_GLOB, ".*", false, "/a/.hidden", 1}, /* no special leading dot */
		{FIDX_FINDPAT_REGEX, "new.line", false, "/a/new\nline", 1},
		{FIDX_FINDPAT_REGEX, "^/a$", false, "/b\n/a", 0},  /* no REG_NEWLINE */
		{FIDX_FINDPAT_REGEX, "B\\.C$", true, "/a/b.c", 1},
		{FIDX_FINDPAT_REGEX, "\xff+", false, "/a/\xff\xff", 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fidx_findpat p;
		compile(&p, cases[i].kind, cases[i].pat, cases[i].icase);
		int got = fidx_findpat_match(&p, cases[i].path, strlen(cases[i].path));
		if (got != cases[i].want)
			fail_msg("case %zu ('%s'): %d, want %d", i, cases[i].pat, got, cases[i].want);
		fidx_findpat_free(&p);
	}
}

static void test_bad_regex(void **state)
{
	(void)state;
	struct fidx_findpat p;
	char err[128] = "";
	assert_int_equal(fidx_findpat_compile(&p, FIDX_FINDPAT_REGEX, "a(b", false, err,
					      sizeof(err)), -1);
	assert_true(err[0] != '\0');
	fidx_findpat_free(&p); /* harmless after a failure */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_literals_are_needed),
		cmocka_unit_test(test_matching),
		cmocka_unit_test(test_bad_regex),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
