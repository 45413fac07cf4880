/*
 * fuzz_hashlist.c - the hash lists of `fidx match` (src/core/hashlist.c).
 *
 * The input's first byte picks the algorithm of unlabelled digests (by
 * length, or one named); the rest is a hash list.  It is read twice: whole,
 * through fidx_hashlist_load() from a file (the format sniffed from its first
 * line, NUL-terminated lines when the first block holds a NUL), and line by
 * line through fidx_hashlist_parse_line() into a set of its own.  Every
 * digest a line gave must then be found in that set where it was first seen,
 * and the set must count what was added.
 */
#include "fuzz.h"

#include "hashlist.h"

/* Counts malformed lines; always goes on. */
static int on_malformed(void *ctx, uint64_t line, const char *why)
{
	(void)line;
	if (!why || !*why)
		abort(); /* a malformed line is always told why */
	++*(uint64_t *)ctx;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_dir();
	return 0;
}

/* Loads the input as a list, then parses it line by line and checks the set it makes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = {data, size};
	unsigned pick = fuzz_byte(&in) % (FIDX_NDIGESTS + 1);
	int algo = pick == FIDX_NDIGESTS ? -1 : (int)pick;

	char path[512];
	fuzz_file("list", in.p, in.n, path, sizeof(path));
	struct fidx_hashset *set = fidx_hashset_create();
	if (!set)
		abort();
	struct fidx_hashlist_stats st;
	uint64_t bad = 0;
	if (fidx_hashlist_load(set, path, 0, algo, on_malformed, &bad, &st) == 0 &&
	    bad != st.malformed)
		abort();
	fidx_hashset_destroy(set);

	/* Line by line, '\n' ends (the loader's NUL mode is its own business). */
	if (!(set = fidx_hashset_create()))
		abort();
	struct fidx_hashlist_parser p;
	fidx_hashlist_parser_init(&p, algo);
	uint32_t lineno = 0;
	size_t added[FIDX_NDIGESTS] = {0};
	char *line;
	size_t len;
	while ((line = fuzz_piece(&in, '\n', &len))) {
		lineno++;
		struct fidx_hashlist_entry e;
		int r = fidx_hashlist_parse_line(&p, line, len, &e);
		if (r < 0 && !p.why[0])
			abort();
		for (size_t i = 0; r == 1 && i < e.n; i++) {
			struct fidx_hashloc loc = {0, lineno};
			int a = fidx_hashset_add(set, e.algo[i], e.digest[i], loc);
			if (a < 0)
				abort();
			added[e.algo[i]] += (size_t)a;
			const struct fidx_hashloc *at = fidx_hashset_find(set, e.algo[i], e.digest[i]);
			if (!at || at->line > lineno || (a == 1 && at->line != lineno))
				abort();
		}
		free(line);
	}
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (fidx_hashset_count(set, d) != added[d])
			abort();
	fidx_hashset_destroy(set);
	return 0;
}
