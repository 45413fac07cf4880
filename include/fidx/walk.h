/*
 * fidx/walk.h - walk directory trees in parallel: the public API of libfidx.
 *
 * fidx_walk() visits every entry under one or more roots with N threads and
 * calls your functions for each.  Directories are shared work on one stack, so
 * threads balance themselves; a directory is read with one large getdents64()
 * at a time, and each entry is stat'ed (statx) only when you ask for it, or
 * when the walk needs it: the type is taken from the listing when it gives one.
 * Entries are reached relative to their directory's descriptor, so trees
 * deeper than PATH_MAX work, and the walk lives within RLIMIT_NOFILE.
 *
 * Build against the installed library with
 *
 *     cc prog.c $(pkg-config --cflags --libs fidx)
 *
 * Example (examples/walk-count.c, built by make): counts entries, files and
 * bytes under each root.
 *
 *     // walk-count: counts entries, files and bytes under each ROOT with libfidx's parallel walk.
 *     #include <fidx/walk.h>
 *     #include <stdatomic.h>
 *     #include <stdio.h>
 *     #include <stdlib.h>
 *     #include <string.h>
 *     #include <unistd.h>
 *
 *     static atomic_ulong entries, files, bytes, errors;
 *
 *     // Called for every entry, on any walker thread.
 *     static enum fidx_walk_action count(const struct fidx_walk_entry *e, void *thread_ctx)
 *     {
 *         (void)thread_ctx;
 *         atomic_fetch_add(&entries, 1);
 *         if (e->d_type == DT_REG) {
 *             atomic_fetch_add(&files, 1);
 *             if (e->stx) // with FIDX_WALK_STAT
 *                 atomic_fetch_add(&bytes, e->stx->stx_size);
 *         }
 *         return FIDX_WALK_CONTINUE;
 *     }
 *
 *     // Called for every error: says what failed, and the walk goes on.
 *     static enum fidx_walk_action complain(const struct fidx_walk_entry *e, void *thread_ctx)
 *     {
 *         (void)thread_ctx;
 *         atomic_fetch_add(&errors, 1);
 *         fprintf(stderr, "walk-count: %s: %s: %s\n", e->path, e->error_op, strerror(e->error));
 *         return FIDX_WALK_CONTINUE;
 *     }
 *
 *     int main(int argc, char **argv)
 *     {
 *         struct fidx_walk_opts opts = {.entry = count, .error = complain};
 *         for (int c; (c = getopt(argc, argv, "j:sxL")) != -1;) {
 *             if (c == 'j')
 *                 opts.threads = (unsigned)atoi(optarg);
 *             else if (c == 's' || c == 'x' || c == 'L') // stat (sizes), one filesystem, follow
 *                 opts.flags |= c == 's' ? FIDX_WALK_STAT : c == 'x' ? FIDX_WALK_XDEV : FIDX_WALK_FOLLOW;
 *             else
 *                 return 2;
 *         }
 *         if (optind == argc)
 *             return fputs("usage: walk-count [-j THREADS] [-s] [-x] [-L] ROOT...\n", stderr), 2;
 *         if (fidx_walk((const char *const *)argv + optind, argc - optind, &opts) < 0)
 *             return perror("walk-count"), 2;
 *         printf("%lu entries, %lu files, %lu bytes\n", atomic_load(&entries), atomic_load(&files),
 *                atomic_load(&bytes));
 *         return atomic_load(&errors) ? 1 : 0;
 *     }
 *
 * Threads.  Every callback may run on any walker thread, concurrently with the
 * others: it must be thread-safe.  thread_start/thread_end give each thread its
 * own context (a buffer, a batch), passed to every callback made on that thread.
 * The calling thread is one of the walkers.  A callback that blocks holds up
 * only its own thread.
 *
 * Order.  Entries arrive in no fixed order across threads.  A directory's entry
 * comes before anything inside it; its leave, if asked for, after everything
 * inside it.
 */
#ifndef FIDX_WALK_H
#define FIDX_WALK_H

#include <dirent.h>      /* DT_* (with _DEFAULT_SOURCE, on unless -std=c17 is strict) */
#include <linux/stat.h>  /* struct statx, STATX_* (glibc's <sys/stat.h> agrees with it) */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One entry, as the walk reports it.  Valid only during the callback. */
struct fidx_walk_entry {
	const char *path;         /* root as given + "/" + names below it; NUL-terminated,
				     the bytes exactly as on disk (not necessarily UTF-8);
				     may be longer than PATH_MAX */
	size_t path_len;          /* strlen(path) */
	size_t name_off;          /* the entry's name is path + name_off */
	size_t root_index;        /* which root it is under (index into the roots array) */
	size_t depth;             /* 0 for a root, 1 for an entry of a root directory, ... */
	int at_fd;                /* (at_fd, at_name) name the entry for *at() calls, such as */
	const char *at_name;      /* openat(at_fd, at_name, ...); at_fd may be AT_FDCWD */
	unsigned char d_type;     /* DT_REG, DT_DIR, ...: from the listing, or from stat when
				     the listing did not say; the target's type when followed;
				     DT_UNKNOWN only if it could not be learnt */
	const struct statx *stx;  /* with FIDX_WALK_STAT: the entry's statx data (basic stats
				     and birth time), the target's when followed; NULL when the
				     stat failed.  Without FIDX_WALK_STAT: NULL */
	bool followed;            /* a symlink that the walk followed: stx and d_type describe
				     its target */
	bool descend;             /* a directory the walk will enter unless entry() returns
				     FIDX_WALK_SKIP; leave() is then called for it */
	const char *link_target;  /* with FIDX_WALK_READ_LINKS: a symlink's target, else NULL */
	int error;                /* 0, or the errno of what failed for this entry */
	const char *error_op;     /* what failed, when error != 0: "stat", "readlink",
				     "follow" (ELOOP: a link back to a directory above it;
				     EXDEV: a target outside the roots, not followed;
				     ESTALE at "open dir": a followed link changed since),
				     "open dir", "read dir", "walk" (ENOMEM), or "stopped"
				     (ECANCELED: leave() of a directory the walk did not
				     finish because it was stopped; not an error() call) */
};

/* What a callback tells the walk to do. */
enum fidx_walk_action {
	FIDX_WALK_CONTINUE,       /* go on */
	FIDX_WALK_SKIP,           /* from entry() for a directory: do not enter it */
	FIDX_WALK_STOP,           /* end the whole walk as soon as possible */
};

/* Flags of fidx_walk_opts.flags. */
enum fidx_walk_flag {
	FIDX_WALK_STAT = 1 << 0,       /* statx() every entry and pass it as entry.stx */
	FIDX_WALK_FOLLOW = 1 << 1,     /* follow symlinks below the roots while their targets
					  lie inside the roots (checked on the object opened:
					  a link to elsewhere is reported as itself, error
					  EXDEV at "follow"); a link to a directory above it
					  is an ELOOP error, not entered */
	FIDX_WALK_FOLLOW_ANY = 1 << 4, /* with FIDX_WALK_FOLLOW: wherever the targets lie */
	FIDX_WALK_XDEV = 1 << 2,       /* stay on each root's filesystem: a mount point is
					  reported, not entered */
	FIDX_WALK_READ_LINKS = 1 << 3, /* read every symlink's target into entry.link_target */
};

struct fidx_walk_opts {
	unsigned threads;         /* walker threads; 0: fidx_walk_default_threads() */
	unsigned flags;           /* FIDX_WALK_* */
	/*
	 * NULL-terminated list of fnmatch(3) patterns, or NULL.  An entry that
	 * matches is not reported and, if a directory, not entered.  A pattern
	 * with a '/' is matched (FNM_PATHNAME) against the path below the root
	 * ("build/cache"), one without against the name ("*.o", ".git").
	 */
	const char *const *exclude;
	/*
	 * Required.  Called once for every entry, roots included, unless
	 * excluded.  For a directory with e->descend it may return
	 * FIDX_WALK_SKIP so that the walk does not enter it.
	 */
	enum fidx_walk_action (*entry)(const struct fidx_walk_entry *e, void *thread_ctx);
	/*
	 * Optional.  Called once for every directory the walk entered, after
	 * everything in it was reported (post-order).  e is the directory's
	 * entry again, with error set if opening or reading it failed (then
	 * not all of it was seen) or if the walk stopped before finishing it
	 * ("stopped"): every directory entered is left, even on a stop.  Such
	 * an error replaces one its entry() carried (a readlink failure).
	 * Should there be no memory to rebuild its path, e is left with
	 * error ENOMEM ("walk"), path is the directory's name alone and at_fd
	 * is -1.
	 */
	void (*leave)(const struct fidx_walk_entry *e, void *thread_ctx);
	/*
	 * Optional.  Called for every error, before the entry() or leave()
	 * call that carries the same error; returns FIDX_WALK_CONTINUE to go
	 * on or FIDX_WALK_STOP.  NULL: go on after every error.
	 */
	enum fidx_walk_action (*error)(const struct fidx_walk_entry *e, void *thread_ctx);
	void *(*thread_start)(void *arg);                /* optional: a thread's context */
	void (*thread_end)(void *thread_ctx, void *arg); /* optional: as a thread ends */
	void *arg;                /* passed to thread_start and thread_end */
	atomic_bool *cancel;      /* optional: set it (from anywhere) to stop the walk */
};

/*
 * Walks the nroots paths (absolute, or relative to the working directory).  A
 * root that is a symlink is followed when its target exists, as find -H does.
 * Raises the soft RLIMIT_NOFILE to the hard limit and keeps its descriptors
 * within fidx_walk_max_fds(): the rest of the limit is the caller's.
 *
 * Returns 0 when the walk ran to its end (errors on entries go to the
 * callbacks, not here), 1 when a callback or cancel stopped it, or -1 with
 * errno set when it could not start (EINVAL: no entry callback; ENOMEM).
 */
int fidx_walk(const char *const *roots, size_t nroots, const struct fidx_walk_opts *opts);

/*
 * The walker threads fidx_walk() uses when opts.threads is 0: four per
 * online CPU, at most FIDX_WALK_MAX_DEFAULT_THREADS.  A walk spends its
 * time in the kernel and, on a cold cache, waiting for the disk: more
 * threads than CPUs cost little on a warm cache and gain much on a cold
 * one (on 2 CPUs, /usr cold: 2 threads 2.1 s, 8 threads 1.2 s; warm: within
 * 10%; docs/BENCHMARKS.md).
 */
#define FIDX_WALK_MAX_DEFAULT_THREADS 32
unsigned fidx_walk_default_threads(void);

/*
 * The most descriptors fidx_walk() with threads threads (0: the default)
 * holds at once, under the open-file limit it raises to: 32 plus 4 per
 * thread (which also covers one descriptor per thread that a callback may
 * hold), plus a cache of parent directories in half of what remains, at most
 * 4096.  Raises the soft RLIMIT_NOFILE to the hard limit, as fidx_walk() does.
 */
unsigned long fidx_walk_max_fds(unsigned threads);

#ifdef __cplusplus
}
#endif

#endif /* FIDX_WALK_H */
