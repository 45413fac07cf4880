// walk-count: counts entries, files and bytes under each ROOT with libfidx's parallel walk.
#include <fidx/walk.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_ulong entries, files, bytes, errors;

// Called for every entry, on any walker thread.
static enum fidx_walk_action count(const struct fidx_walk_entry *e, void *thread_ctx)
{
	(void)thread_ctx;
	atomic_fetch_add(&entries, 1);
	if (e->d_type == DT_REG) {
		atomic_fetch_add(&files, 1);
		if (e->stx) // with FIDX_WALK_STAT
			atomic_fetch_add(&bytes, e->stx->stx_size);
	}
	return FIDX_WALK_CONTINUE;
}

// Called for every error: says what failed, and the walk goes on.
static enum fidx_walk_action complain(const struct fidx_walk_entry *e, void *thread_ctx)
{
	(void)thread_ctx;
	atomic_fetch_add(&errors, 1);
	fprintf(stderr, "walk-count: %s: %s: %s\n", e->path, e->error_op, strerror(e->error));
	return FIDX_WALK_CONTINUE;
}

int main(int argc, char **argv)
{
	struct fidx_walk_opts opts = {.entry = count, .error = complain};
	for (int c; (c = getopt(argc, argv, "j:sxL")) != -1;) {
		if (c == 'j')
			opts.threads = (unsigned)atoi(optarg);
		else if (c == 's' || c == 'x' || c == 'L') // stat (sizes), one filesystem, follow
			opts.flags |= c == 's' ? FIDX_WALK_STAT : c == 'x' ? FIDX_WALK_XDEV : FIDX_WALK_FOLLOW;
		else
			return 2;
	}
	if (optind == argc)
		return fputs("usage: walk-count [-j THREADS] [-s] [-x] [-L] ROOT...\n", stderr), 2;
	if (fidx_walk((const char *const *)argv + optind, argc - optind, &opts) < 0)
		return perror("walk-count"), 2;
	printf("%lu entries, %lu files, %lu bytes\n", atomic_load(&entries), atomic_load(&files),
	       atomic_load(&bytes));
	return atomic_load(&errors) ? 1 : 0;
}
