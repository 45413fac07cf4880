/*
 * walk-only.c - the walk alone, for measuring what the scan's store costs.
 *
 *   make build/bench/walk-only
 *   build/bench/walk-only THREADS ROOT...
 *
 * Runs fidx_walk() with THREADS threads and read_links on, as `fidx scan`
 * does, with a callback that only counts: the whole walk (getdents64 and
 * statx per entry, readlinkat per symlink) with no records, queues or SQLite.
 * Prints the entries seen and the walk's return value.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "walk.h"

static atomic_ulong entries;

/* Counts one entry. */
static enum fidx_walk_action count(const struct fidx_walk_entry *e, void *ctx)
{
	(void)e;
	(void)ctx;
	atomic_fetch_add_explicit(&entries, 1, memory_order_relaxed);
	return FIDX_WALK_CONTINUE;
}

int main(int argc, char **argv)
{
	if (argc < 3 || atoi(argv[1]) < 1) {
		fputs("usage: walk-only THREADS ROOT...\n", stderr);
		return 2;
	}
	struct fidx_walk_opts opts = {
		.threads = (unsigned)atoi(argv[1]), .read_links = true, .entry = count,
	};
	int ret = fidx_walk((const char *const *)argv + 2, (size_t)argc - 2, &opts);
	printf("%lu entries, walk returned %d\n", (unsigned long)atomic_load(&entries), ret);
	return ret == 0 ? 0 : 1;
}
