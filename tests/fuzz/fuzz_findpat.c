/*
 * fuzz_findpat.c - the PATTERN of `fidx find` (src/core/findpat.c) and the
 * trigrams the path index is asked for (fidx_pathindex_literal_trigrams()).
 *
 * The first byte picks the kind (substring, glob, regex) and -i; the rest up
 * to the first '\n' is the pattern (to its first NUL byte, as argv gives it),
 * and each later '\n'-separated piece a path.  For every path the pattern
 * matches, the promise the index stands on is checked: the path holds every
 * literal (ASCII case folded under -i), and every trigram asked of the index
 * is one of the path's own; else the index would hide a match.
 */
#include "fuzz.h"

#include "findpat.h"
#include "pathindex.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* Whether the n bytes at hay hold the m bytes at needle, ASCII letters folded when icase. */
static bool holds(const char *hay, size_t n, const char *needle, size_t m, bool icase)
{
	for (size_t i = 0; m <= n && i <= n - m; i++) {
		size_t j = 0;
		while (j < m && (icase ? fidx_findpat_fold((unsigned char)hay[i + j]) ==
					 fidx_findpat_fold((unsigned char)needle[j])
				       : hay[i + j] == needle[j]))
			j++;
		if (j == m)
			return true;
	}
	return false;
}

/*
 * Whether a regex stacks three repetition operators ("a+++"): glibc's
 * regcomp() copies the tree under each one, exponential in their number (a
 * 60-byte pattern of them ran past 10 s and 2 GB, docs/TESTING.md); that is
 * glibc's, reached only by a pattern the user types, so it is left out.
 */
static bool stacked(const char *s)
{
	for (int run = 0; *s; s++) {
		run = strchr("*+?}", *s) ? run + 1 : *s == ')' || *s == '(' ? run : 0;
		if (run >= 3)
			return true;
	}
	return false;
}

/* Compiles the pattern and checks it against each path. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = {data, size};
	uint8_t how = fuzz_byte(&in);
	enum fidx_findpat_kind kind = how % 3;
	bool icase = how & 4;
	size_t len;
	char *pattern = fuzz_piece(&in, '\n', &len);
	if (!pattern || strlen(pattern) > 256 || (kind == FIDX_FINDPAT_REGEX && stacked(pattern))) {
		free(pattern);
		return 0;
	}
	struct fidx_findpat p;
	char why[256];
	if (fidx_findpat_compile(&p, kind, pattern, icase, why, sizeof(why)) < 0) {
		if (!why[0])
			abort();
		free(pattern);
		return 0;
	}
	struct fidx_error err = {0};
	uint32_t *tri = NULL;
	size_t ntri = 0;
	if (fidx_pathindex_literal_trigrams(p.lit, p.nlit, &tri, &ntri, &err) < 0)
		abort();

	char *path;
	for (int paths = 0; paths < 64 && (path = fuzz_piece(&in, '\n', &len)); paths++) {
		len = strlen(path); /* a path holds no NUL byte */
		if (len > 1024) {
			free(path);
			break;
		}
		int m = fidx_findpat_match(&p, path, len);
		if (m < 0)
			abort();
		if (m == 1) {
			for (size_t i = 0; i < p.nlit; i++)
				if (!holds(path, len, p.lit[i].s, p.lit[i].len, icase))
					abort(); /* a literal a match does not hold */
			uint32_t *own = malloc((len > 2 ? len - 2 : 0) * sizeof(*own) + 1);
			if (!own)
				abort();
			size_t nown = fidx_pathindex_trigrams(path, len, own, 0);
			for (size_t i = 0, j = 0; i < ntri; i++) {
				while (j < nown && own[j] < tri[i])
					j++;
				if (j == nown || own[j] != tri[i])
					abort(); /* a trigram asked that the match lacks */
			}
			free(own);
		}
		free(path);
	}
	free(tri);
	fidx_findpat_free(&p);
	free(pattern);
	return 0;
}
