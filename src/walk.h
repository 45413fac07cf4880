/*
 * walk.h - a parallel walk of one or more directory trees.
 *
 * Directories are shared work: every walker thread takes the next directory
 * from one stack (depth first, for locality and bounded memory), reads it
 * with getdents64(), stats each entry relative to the directory's descriptor
 * with statx(), reports it, and pushes the subdirectories it found.  No path
 * is resolved from the root per entry, so trees deeper than PATH_MAX work.
 *
 * Callbacks run on any walker thread, concurrently; each thread has its own
 * context pointer, made by thread_start and ended by thread_end.
 */
#ifndef FIDX_WALK_H
#define FIDX_WALK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* What the walk reports about one entry. */
struct fidx_walk_entry {
	const char *path;         /* full path from the root as given, NUL-terminated */
	size_t path_len;          /* strlen(path) */
	size_t name_off;          /* offset of the entry's name within path */
	size_t root_index;        /* which root (index into the roots array) */
	size_t depth;             /* 0 for a root */
	int at_fd;                /* directory fd for *at() calls with at_name */
	const char *at_name;      /* name relative to at_fd */
	unsigned char d_type;     /* DT_* as the directory listing gave it (DT_UNKNOWN if none) */
	const struct statx *stx;  /* the entry's statx data, or NULL if stat failed;
				     may be set together with an error (a directory that
				     could not be read, a link whose target could not be) */
	bool followed;            /* stx describes a symlink's target (follow mode, or a root) */
	const char *link_target;  /* with opts.read_links: a symlink's target, else NULL */
	int error;                /* 0, or the errno of what failed */
	const char *error_op;     /* "stat", "open dir", "read dir", "readlink",
				     "follow" (a link back to an ancestor) when error != 0 */
};

/* What an entry callback tells the walk to do. */
enum fidx_walk_action {
	FIDX_WALK_CONTINUE,       /* go on */
	FIDX_WALK_STOP,           /* end the whole walk as soon as possible */
};

struct fidx_walk_opts {
	unsigned threads;         /* walker threads, >= 1 */
	bool follow;              /* follow symlinks below the roots (loop-safe) */
	bool xdev;                /* do not enter directories on another device than their root */
	bool read_links;          /* read every symlink's target into entry.link_target */
	const char *const *excludes; /* NULL-terminated glob list, or NULL; see fidx_walk() */
	/*
	 * Called once for every entry, roots included.  A directory is reported
	 * after its listing was read, so that an error opening or reading it is in
	 * its own report.  Must be thread-safe.
	 */
	enum fidx_walk_action (*entry)(const struct fidx_walk_entry *e, void *thread_ctx);
	void *(*thread_start)(void *arg); /* optional: per-thread context made at thread start */
	void (*thread_end)(void *thread_ctx, void *arg); /* optional: called as the thread ends */
	void *arg;                /* passed to thread_start and thread_end */
	atomic_bool *cancel;      /* optional: when it becomes true, the walk stops early */
};

/*
 * Walks the roots (nroots paths, absolute or relative to the working
 * directory).  A root that is a symlink is followed when its target exists,
 * as find -H does (the entry keeps the link's target text in link_target).  An exclude pattern containing '/' is matched with
 * fnmatch(FNM_PATHNAME) against the path below its root (for example "build/cache"),
 * one without '/' against the entry's name; an excluded entry is not reported
 * and an excluded directory is not entered.
 *
 * Returns 0 when the walk ran to its end (errors on entries are reported
 * through the callback, not here), 1 when it was stopped by a callback or by
 * cancel, or -1 with errno set when it could not start.
 */
int fidx_walk(const char *const *roots, size_t nroots, const struct fidx_walk_opts *opts);

/*
 * Opens path, which may be longer than PATH_MAX, by walking it in pieces
 * with openat().  flags apply to the last component.  Returns a descriptor, or
 * -1 with errno set.
 */
int fidx_open_long(const char *path, int flags);

/*
 * Raises this process's soft RLIMIT_NOFILE to its hard limit (fidx_walk()
 * does it too) and returns the soft limit now in force.
 */
unsigned long fidx_raise_nofile(void);

#endif /* FIDX_WALK_H */
