/*
 * walk.c - the parallel tree walk behind include/fidx/walk.h.
 *
 * Design
 * ------
 * Directories are the unit of shared work.  Every walker thread runs the same
 * loop over one LIFO stack of directory nodes:
 *
 *        ┌──────────── stack of dir nodes (LIFO: depth first) ◄──────────────┐
 *        ▼                                                                    │
 *   pop node ─► open it (if new) ─► getdents64 ─► sort by inode ─► per entry: │
 *                     ▲                │          excluded? stat if needed,   │
 *                     │                │          entry(), a dir to enter? ───┘
 *                     │                ▼
 *                     └── a full batch and an idle thread: the node goes back
 *                         on the stack, so another thread reads the next batch
 *
 * No thread owns a part of the tree: a thread that finishes a directory takes
 * whatever is on top of the stack, and a directory whose listing fills the
 * buffer is handed on after each batch while a thread is idle, so even one
 * huge directory is read by several threads at once.  Depth-first order
 * keeps the stack short (depth x fan-out, not the tree).  A directory that
 * has pushed PARK_PENDING children not yet taken stops reading (it "parks",
 * keeping its descriptor and position) until they fall to RESUME_PENDING,
 * so even one directory with millions of subdirectories holds a bounded
 * number of nodes.  A node keeps only its own name, not its path (struct
 * pathbuf rebuilds paths), so memory grows with the depth, not its square.
 *
 * Stat.  An entry is stat'ed when the caller asked (FIDX_WALK_STAT) or when
 * the walk needs it: the listing gave no type, a symlink to follow, or a
 * directory whose device and inode matter (FIDX_WALK_FOLLOW, FIDX_WALK_XDEV).
 * Otherwise the listing's d_type is all there is to know.  A batch is
 * stat'ed in inode order, which on a cold cache reads the inode table in
 * order.
 *
 * Descriptors.  A directory is opened relative to its parent's descriptor when
 * that is still open, so no path is resolved from the root and trees deeper
 * than PATH_MAX work.  A parent keeps its descriptor after its listing only
 * while it has unopened subdirectories and the descriptor budget (derived
 * from RLIMIT_NOFILE) allows; otherwise children are opened by path
 * (fidx_open_long() for paths longer than PATH_MAX).  Parked directories
 * count against the same budget.  The walk never fails with EMFILE for want
 * of a cached descriptor.
 *
 * Locking and lifetime.  One mutex (walk.lock) guards the stack, the
 * `active` and `idle` counts, and each node's fd/pins/pending/readers/
 * reading/listed/queued/cached/parked fields and its error.  A child pins
 * its parent's descriptor while it uses it; the descriptor is closed by
 * whoever leaves it unused (release_fd_locked()).  The last of a node's
 * readers to finish, once its listing is over, ends its reading.  A node
 * holds one reference for its own reading and each child node holds one on
 * its parent, so a node's count falls to zero exactly when everything below
 * it is done: that is where leave() is called (true post-order), and the
 * ancestor chain used for loop detection is always valid.
 */
#include "fidx/walk.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fdutil.h"

#define GETDENTS_BUF (64 * 1024) /* bytes per getdents64() call */
#define STATX_FULL (STATX_BASIC_STATS | STATX_BTIME) /* what FIDX_WALK_STAT gives */
#define STATX_MIN (STATX_TYPE | STATX_INO) /* what the walk itself needs (and the device) */
#define PARK_PENDING 2048   /* a directory with this many untaken children parks */
#define RESUME_PENDING 512  /* ... and resumes when they fall to this many */
#define PARENT_FD_CACHE_MAX 4096 /* parent descriptors a walk caches, at most */

struct dir_node {
	struct dir_node *parent;  /* reference held; NULL for a root */
	atomic_uint refs;         /* 1 for its own reading + 1 per child node */
	uint64_t id;              /* unique in the walk, for struct pathbuf */
	char *seg;                /* what it adds to its parent's path (a root: all of it),
				     owned; only this, so nodes stay small however deep */
	size_t seg_off;           /* offset of seg in its full path */
	size_t path_len;          /* length of its full path */
	size_t name_off;          /* offset of its name in its full path */
	size_t root_index;        /* index of its root */
	size_t root_len;          /* length of its root's path, for exclude patterns */
	size_t depth;             /* 0 for a root */
	uint64_t root_dev;        /* device of its root, for xdev */
	struct statx stx;         /* its statx data (the target's, if followed): complete with
				     FIDX_WALK_STAT, else type/device/inode when the walk needed them */
	char *link_target;        /* when reached through a symlink and read_links; owned */
	int error;                /* the error leave() will carry, or 0 (walk.lock while read) */
	const char *error_op;     /* what failed, when error != 0 */
	bool followed;            /* reached through a symlink */
	/* Guarded by walk.lock: */
	int fd;                   /* open descriptor, or -1 */
	unsigned pins;            /* children using fd right now */
	unsigned pending;         /* child nodes not yet opened */
	unsigned readers;         /* threads that took it from the stack and still work on it */
	bool reading;             /* opened and not finished: fd stays open */
	bool listed;              /* getdents64 came to the end, failed, or the walk stopped */
	bool queued;              /* on the stack, for a (further) reader */
	bool cached;              /* fd counts against the cache budget */
	bool parked;              /* waits, off the stack, for its children to be taken */
	struct dir_node *next;    /* link in the stack */
};

struct walk {
	const struct fidx_walk_opts *opts;
	pthread_mutex_t lock;     /* guards the fields below and the nodes' fd fields */
	pthread_cond_t wake;      /* signalled on push, and when the walk ends */
	struct dir_node *stack;   /* top of the stack of nodes to read */
	unsigned active;          /* threads reading a node */
	unsigned idle;            /* threads waiting for a node */
	unsigned cached_fds;      /* parent and parked descriptors kept open */
	unsigned fd_budget;       /* at most this many cached */
	atomic_uint_fast64_t next_id; /* for dir_node.id */
	bool stopped;             /* a callback said stop, or cancel was seen */
	/* FIDX_WALK_FOLLOW without FIDX_WALK_FOLLOW_ANY: where each root really is (its path
	 * with every link resolved, as the kernel names the open root), NULL when unknown. */
	char **root_real;
	size_t nroots;
};

/*
 * A path buffer that knows whose path it holds: ids[d] is the node whose
 * segment is in place at depth d, for d < valid.  Building a node's path
 * writes only the segments below the deepest ancestor already in place, so
 * a thread going down a tree appends one name per directory.
 */
struct pathbuf {
	char *s;                  /* the path; NUL-terminated by node_path() */
	size_t cap;               /* bytes allocated for s */
	uint64_t *ids;            /* node id in place at each depth */
	size_t ids_cap;           /* entries allocated for ids */
	size_t valid;             /* ids[0 .. valid - 1] are in place */
};

/* One walker thread's buffers. */
struct walker {
	struct walk *walk;
	void *ctx;                /* the caller's per-thread context */
	char *dents;              /* getdents64 buffer */
	struct linux_dirent64 **order; /* a batch's entries in inode order, GETDENTS_BUF / 24 */
	struct pathbuf path;      /* the directory being read, then each entry's name */
	struct pathbuf npath;     /* a directory's path for leave() and error() */
	int up_fd;                /* a directory opened by open_parent_long(), or -1 */
	uint64_t up_id;           /* the id of its node, or 0 */
	char *link;               /* readlink buffer, PATH_MAX + 1 */
	struct dir_node *born;    /* nodes made from the current batch, newest first */
	struct dir_node *born_last; /* the oldest of them */
	unsigned nborn;           /* how many */
	int pinned_fd;            /* the popped node's parent descriptor, pinned, or -1 */
};

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};
#define MIN_DIRENT 24 /* the smallest record: the header above and a name of 1 byte, aligned */

/* Makes room for len + 1 bytes in pb.  Returns 0, or -1 on ENOMEM. */
static int path_reserve(struct pathbuf *pb, size_t len)
{
	if (len + 1 <= pb->cap)
		return 0;
	size_t cap = pb->cap ? pb->cap : 4096;
	while (cap < len + 1)
		cap *= 2;
	char *p = realloc(pb->s, cap);
	if (!p)
		return -1;
	pb->s = p;
	pb->cap = cap;
	return 0;
}

/*
 * Writes node's full path into pb, NUL-terminated, with room for one more
 * byte.  Returns pb->s, or NULL on ENOMEM.  Costs the segments below the
 * deepest ancestor whose path is in place already.
 */
static char *node_path(struct pathbuf *pb, const struct dir_node *node)
{
	if (path_reserve(pb, node->path_len + 1) < 0)
		return NULL;
	if (node->depth >= pb->ids_cap) {
		size_t cap = pb->ids_cap ? 2 * pb->ids_cap : 64;
		while (cap <= node->depth)
			cap *= 2;
		uint64_t *ids = realloc(pb->ids, cap * sizeof(*ids));
		if (!ids)
			return NULL;
		pb->ids = ids;
		pb->ids_cap = cap;
	}
	for (const struct dir_node *n = node; n; n = n->parent) {
		if (n->depth < pb->valid && pb->ids[n->depth] == n->id)
			break;
		memcpy(pb->s + n->seg_off, n->seg, n->path_len - n->seg_off);
		if (n->parent && n->seg_off > n->parent->path_len)
			pb->s[n->parent->path_len] = '/';
		pb->ids[n->depth] = n->id;
	}
	pb->valid = node->depth + 1;
	pb->s[node->path_len] = '\0';
	return pb->s;
}

/* Returns true when the walk should end early. */
static bool walk_stopping(struct walk *w)
{
	if (__atomic_load_n(&w->stopped, __ATOMIC_RELAXED))
		return true;
	if (w->opts->cancel && atomic_load_explicit(w->opts->cancel, memory_order_relaxed)) {
		__atomic_store_n(&w->stopped, true, __ATOMIC_RELAXED);
		return true;
	}
	return false;
}

/* Records that a callback asked to stop. */
static void stop_if(struct walk *w, enum fidx_walk_action action)
{
	if (action == FIDX_WALK_STOP)
		__atomic_store_n(&w->stopped, true, __ATOMIC_RELAXED);
}

/* Passes an error to the error callback, which may stop the walk. */
static void report_error(struct walker *t, const struct fidx_walk_entry *e)
{
	const struct fidx_walk_opts *opts = t->walk->opts;
	if (opts->error && e->error != ECANCELED)
		stop_if(t->walk, opts->error(e, t->ctx));
}

/*
 * Delivers an entry: its error first to the error callback, then the entry
 * itself.  Returns what the entry callback answered.
 */
static enum fidx_walk_action deliver(struct walker *t, const struct fidx_walk_entry *e)
{
	if (e->error)
		report_error(t, e);
	enum fidx_walk_action action = t->walk->opts->entry(e, t->ctx);
	stop_if(t->walk, action);
	return action;
}

/* Closes node's descriptor when nobody needs it any more.  Lock held. */
static void release_fd_locked(struct walk *w, struct dir_node *node)
{
	if (node->fd < 0 || node->reading || node->pins > 0)
		return;
	if (node->pending > 0 && node->cached)
		return;
	close(node->fd);
	node->fd = -1;
	if (node->cached) {
		node->cached = false;
		w->cached_fds--;
	}
}

/* Pushes a node on the stack and wakes a waiting thread.  Lock held. */
static void push_locked(struct walk *w, struct dir_node *node)
{
	node->next = w->stack;
	w->stack = node;
	pthread_cond_signal(&w->wake);
}

/*
 * Counts one child of parent as opened (or dropped), resuming the parent if
 * it parked and few enough children are left, or, once the walk is
 * stopping, none.  Lock held.
 */
static void child_taken_locked(struct walk *w, struct dir_node *parent)
{
	parent->pending--;
	if (parent->parked &&
	    (parent->pending == 0 || (parent->pending <= RESUME_PENDING && !walk_stopping(w)))) {
		parent->parked = false;
		parent->queued = true;
		push_locked(w, parent);
	}
	release_fd_locked(w, parent);
}

/*
 * Returns node's parent's open descriptor, pinned so that it stays open until
 * unpin_parent_fd(), or -1 when there is none (a root, or a closed descriptor).
 */
static int pin_parent_fd(struct walk *w, struct dir_node *node)
{
	struct dir_node *parent = node->parent;
	int pfd = -1;
	if (!parent)
		return -1;
	pthread_mutex_lock(&w->lock);
	if (parent->fd >= 0) {
		pfd = parent->fd;
		parent->pins++;
	}
	pthread_mutex_unlock(&w->lock);
	return pfd;
}

/* Releases a pin of pin_parent_fd() (pfd may be -1). */
static void unpin_parent_fd(struct walk *w, struct dir_node *node, int pfd)
{
	if (pfd < 0)
		return;
	pthread_mutex_lock(&w->lock);
	node->parent->pins--;
	release_fd_locked(w, node->parent);
	pthread_mutex_unlock(&w->lock);
}

/*
 * Opens (O_PATH) node's parent, past PATH_MAX and with its descriptor closed,
 * so that a callback about node gets a working (at_fd, at_name).  leave()
 * climbs a deep chain one level at a time, so the parent is first sought as
 * ".." of the directory opened for the call before, when that was node
 * itself (and checked against the parent's inode when it was stat'ed); else
 * it is opened piece by piece from its path.  The walker keeps the
 * descriptor for the next call.  Returns it, or -1.
 */
static int open_parent_long(struct walker *t, struct dir_node *node)
{
	struct dir_node *parent = node->parent;
	if (t->up_fd >= 0 && t->up_id == parent->id)
		return t->up_fd;
	int fd = -1;
	if (t->up_fd >= 0 && t->up_id == node->id) {
		fd = openat(t->up_fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct stat st;
		if (fd >= 0 && parent->stx.stx_ino &&
		    (fstat(fd, &st) < 0 || st.st_ino != parent->stx.stx_ino ||
		     major(st.st_dev) != parent->stx.stx_dev_major ||
		     minor(st.st_dev) != parent->stx.stx_dev_minor)) {
			close(fd);
			fd = -1;
		}
	}
	const char *path;
	if (fd < 0 && (path = node_path(&t->npath, parent)))
		fd = fidx_open_long(path, O_PATH | O_DIRECTORY);
	if (t->up_fd >= 0)
		close(t->up_fd);
	t->up_fd = fd;
	t->up_id = fd >= 0 ? parent->id : 0;
	return fd;
}

/*
 * Calls fn (leave, or the error callback) with node's entry, carrying error
 * and op.  The entry is
 * named for *at() calls relative to its parent's descriptor: the open one
 * if there is, else, past PATH_MAX, open_parent_long()'s.
 */
static void call_with_node(struct walker *t, struct dir_node *node, int error, const char *op,
			   void (*fn)(struct walker *t, const struct fidx_walk_entry *e))
{
	struct walk *w = t->walk;
	struct fidx_walk_entry e = {
		.path_len = node->path_len, .name_off = node->name_off,
		.root_index = node->root_index, .depth = node->depth, .at_fd = AT_FDCWD,
		.d_type = DT_DIR, .stx = (w->opts->flags & FIDX_WALK_STAT) ? &node->stx : NULL,
		.followed = node->followed, .descend = true, .link_target = node->link_target,
		.error = error, .error_op = op,
	};
	int pfd = pin_parent_fd(w, node), up_fd = -1;
	if (pfd < 0 && node->parent && node->path_len >= PATH_MAX)
		up_fd = open_parent_long(t, node);
	e.path = node_path(&t->npath, node);
	e.at_name = e.path;
	if (pfd >= 0 || up_fd >= 0) {
		e.at_fd = pfd >= 0 ? pfd : up_fd;
		e.at_name = e.path + node->name_off;
	}
	if (!e.path) {
		/*
		 * No memory for the path: name the directory by what the node
		 * holds (its name; a root's whole path), and make *at() calls
		 * fail (EBADF) rather than reach another file by that name.
		 */
		e.path = e.at_name = node->seg;
		e.path_len = strlen(node->seg);
		e.name_off = 0;
		if (node->parent && pfd < 0 && up_fd < 0)
			e.at_fd = -1;
		e.error = ENOMEM;
		e.error_op = "walk";
		if (fn != report_error)
			report_error(t, &e);
	}
	fn(t, &e);
	unpin_parent_fd(w, node, pfd);
}

/* call_with_node() helper: the leave callback. */
static void call_leave(struct walker *t, const struct fidx_walk_entry *e)
{
	t->walk->opts->leave(e, t->ctx);
}

/*
 * Reports an error met reading a directory node to the error callback and
 * keeps it for leave(): it replaces an error about the entry itself (a
 * readlink), since what was not read matters more.
 */
static void node_error(struct walker *t, struct dir_node *node, int error, const char *op)
{
	pthread_mutex_lock(&t->walk->lock);
	node->error = error;
	node->error_op = op;
	pthread_mutex_unlock(&t->walk->lock);
	call_with_node(t, node, error, op, report_error);
}

/* Marks node "stopped" unless its whole listing was read. */
static void stop_node(struct walker *t, struct dir_node *node)
{
	pthread_mutex_lock(&t->walk->lock);
	bool listed = node->listed;
	pthread_mutex_unlock(&t->walk->lock);
	if (!listed)
		node_error(t, node, ECANCELED, "stopped");
}

/*
 * Drops one reference to node.  When the last goes, everything below it is
 * done: it is left (leave()), freed, and its parent loses a reference in turn.
 */
static void node_unref(struct walker *t, struct dir_node *node)
{
	while (node && atomic_fetch_sub(&node->refs, 1) == 1) {
		struct dir_node *parent = node->parent;
		if (t->walk->opts->leave) /* the last reference: nobody else sees node */
			call_with_node(t, node, node->error, node->error_op, call_leave);
		free(node->seg);
		free(node->link_target);
		free(node);
		node = parent;
	}
}

/* Returns true if the exclude list excludes the entry at path (below its root at root_len). */
static bool excluded(const struct fidx_walk_opts *opts, const char *path, size_t root_len,
		     const char *name)
{
	const char *rel = path + root_len;
	while (*rel == '/')
		rel++;
	for (const char *const *g = opts->exclude; *g; g++) {
		if (strchr(*g, '/') ? fnmatch(*g, rel, FNM_PATHNAME) == 0 : fnmatch(*g, name, 0) == 0)
			return true;
	}
	return false;
}

/*
 * Reads the target of the symlink at (fd, name) into the walker's buffer.
 * Returns the buffer, or NULL with errno set.
 */
static const char *read_link(struct walker *t, int fd, const char *name)
{
	ssize_t n = readlinkat(fd, name, t->link, PATH_MAX);
	if (n < 0)
		return NULL;
	t->link[n] = '\0';
	return t->link;
}

/* The device of a statx result as one number, for comparing devices. */
static uint64_t stx_dev(const struct statx *stx)
{
	return ((uint64_t)stx->stx_dev_major << 32) | stx->stx_dev_minor;
}

/* Returns true if a node in the chain from node up has the same device and inode. */
static bool is_ancestor(const struct dir_node *node, const struct statx *stx)
{
	for (; node; node = node->parent)
		if (node->stx.stx_ino == stx->stx_ino && stx_dev(&node->stx) == stx_dev(stx))
			return true;
	return false;
}

/*
 * Makes a node for the directory e found in parent (NULL for a root), with
 * stx its stat data (NULL when it was not stat'ed: not a root, and neither
 * follow nor xdev needs it), taking a reference on parent.  Returns NULL on
 * ENOMEM.
 */
static struct dir_node *node_new(struct walk *w, struct dir_node *parent,
				 const struct fidx_walk_entry *e, const struct statx *stx)
{
	struct dir_node *node = calloc(1, sizeof(*node));
	if (!node)
		return NULL;
	node->seg_off = parent ? e->name_off : 0;
	node->seg = strdup(e->path + node->seg_off);
	if (!node->seg || (e->link_target && !(node->link_target = strdup(e->link_target)))) {
		free(node->seg);
		free(node);
		return NULL;
	}
	node->id = atomic_fetch_add_explicit(&w->next_id, 1, memory_order_relaxed) + 1;
	node->path_len = e->path_len;
	node->name_off = e->name_off;
	if (stx)
		node->stx = *stx;
	node->followed = e->followed;
	node->error = e->error;
	node->error_op = e->error_op;
	node->root_index = e->root_index;
	node->depth = e->depth;
	node->fd = -1;
	atomic_init(&node->refs, 1);
	if (parent) {
		atomic_fetch_add(&parent->refs, 1);
		node->parent = parent;
		node->root_dev = parent->root_dev;
		node->root_len = parent->root_len;
	} else {
		node->root_dev = stx_dev(stx);
		node->root_len = e->path_len;
	}
	return node;
}

/*
 * Makes a node for the directory e (found in parent, or a root), whose entry
 * was delivered with descend, and keeps it for push_born().  Without memory
 * for a node, the directory is reported as an error and left unread.
 */
static void push_dir(struct walker *t, struct dir_node *parent, struct fidx_walk_entry *e,
		     const struct statx *stx)
{
	struct walk *w = t->walk;
	struct dir_node *node = node_new(w, parent, e, stx);
	if (!node) {
		e->error = ENOMEM;
		e->error_op = "walk";
		report_error(t, e);
		if (w->opts->leave)
			w->opts->leave(e, t->ctx);
		return;
	}
	node->next = t->born;
	if (!t->born)
		t->born_last = node;
	t->born = node;
	t->nborn++;
}

/*
 * Pushes the nodes kept by push_dir() (children of parent, or roots) in one
 * go, as if one by one: the last made ends on top.  Lock held.
 */
static void push_born_locked(struct walker *t, struct dir_node *parent)
{
	struct walk *w = t->walk;
	if (!t->born)
		return;
	/*
	 * Wake a thread for each node but one: this thread takes one itself
	 * soon, so a chain of single subdirectories stays on one thread
	 * instead of waking another at every level.
	 */
	unsigned wake = t->nborn - 1 + (w->stack != NULL);
	t->born_last->next = w->stack;
	w->stack = t->born;
	if (parent)
		parent->pending += t->nborn;
	if (wake > 1)
		pthread_cond_broadcast(&w->wake);
	else if (wake == 1)
		pthread_cond_signal(&w->wake);
	t->born = t->born_last = NULL;
	t->nborn = 0;
}

/*
 * Sets buf (size bytes) to the path the kernel gives the object open as fd
 * (/proc/self/fd: every link resolved, whatever happens to the names since).
 * Returns its length, or -1 when it cannot be told (no /proc, a path too
 * long for buf, an object outside this process's root).
 */
static ssize_t real_path_of(int fd, char *buf, size_t size)
{
	char proc[32];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(proc, buf, size);
	if (n < 0 || (size_t)n >= size || buf[0] != '/')
		return -1;
	buf[n] = '\0';
	return n;
}

/*
 * Whether the object open as fd lies at or below one of the roots (its real
 * path at or below a root's real path).  False when that cannot be told.
 */
static bool inside_roots(const struct walk *w, int fd)
{
	char real[PATH_MAX + 1];  /* (not the walker's link buffer: it may hold the target read) */
	ssize_t n = real_path_of(fd, real, sizeof(real));
	for (size_t r = 0; n >= 0 && r < w->nroots; r++) {
		const char *root = w->root_real[r];
		size_t len = root ? strlen(root) : 0;
		if (root && (len == 1 || ((size_t)n >= len && memcmp(real, root, len) == 0 &&
					  (real[len] == '/' || real[len] == '\0'))))
			return true;
	}
	return false;
}

/*
 * Stats the target of the symlink (dfd, name) into *target, following it
 * when it may be followed: anywhere with FIDX_WALK_FOLLOW_ANY, else only
 * when the target lies inside the roots (checked on the object opened, so
 * that a link changed meanwhile cannot send the walk elsewhere).  Returns
 * 0 (followed), or -1 with errno set: EXDEV for a target outside the roots,
 * else what opening or stat'ing it failed with.
 */
static int follow_link(struct walker *t, int dfd, const char *name, unsigned mask,
		       struct statx *target)
{
	int fd = openat(dfd, name, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int ret = statx(fd, "", AT_EMPTY_PATH | AT_NO_AUTOMOUNT, mask, target);
	int saved = errno;
	if (ret == 0 && !(t->walk->opts->flags & FIDX_WALK_FOLLOW_ANY) && !inside_roots(t->walk, fd)) {
		ret = -1;
		saved = EXDEV;
	}
	close(fd);
	errno = saved;
	return ret;
}

/*
 * Handles one entry of a listing: stats it if needed, reports it, and pushes
 * a node for a directory to enter.  t->path.s holds its full path.
 */
static void visit_entry(struct walker *t, struct dir_node *dir, int dfd, const char *name,
			size_t path_len, size_t name_off, unsigned char d_type)
{
	struct walk *w = t->walk;
	unsigned flags = w->opts->flags;
	bool follow = flags & FIDX_WALK_FOLLOW;
	struct statx stx;
	struct fidx_walk_entry e = {
		.path = t->path.s, .path_len = path_len, .name_off = name_off,
		.root_index = dir->root_index, .depth = dir->depth + 1,
		.at_fd = dfd, .at_name = name, .d_type = d_type,
	};

	unsigned mask = (flags & FIDX_WALK_STAT) ? STATX_FULL : STATX_MIN;
	bool need_stat = (flags & FIDX_WALK_STAT) || d_type == DT_UNKNOWN ||
			 (d_type == DT_LNK && follow) ||
			 (d_type == DT_DIR && (flags & (FIDX_WALK_FOLLOW | FIDX_WALK_XDEV)));
	if (need_stat) {
		if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, mask, &stx) < 0) {
			e.error = errno;
			e.error_op = "stat";
			deliver(t, &e);
			return;
		}
		e.d_type = IFTODT(stx.stx_mode);
	}
	if (e.d_type == DT_LNK) {
		if ((flags & FIDX_WALK_READ_LINKS) && !(e.link_target = read_link(t, dfd, name))) {
			e.error = errno;
			e.error_op = "readlink";
		}
		struct statx target;
		if (follow && follow_link(t, dfd, name, mask, &target) == 0) {
			stx = target;
			e.followed = true;
			e.d_type = IFTODT(stx.stx_mode);
		} else if (follow && errno == EXDEV && !e.error) {
			/* Outside the roots: the link itself, said not followed. */
			e.error = EXDEV;
			e.error_op = "follow";
		} else if (follow && errno != ENOENT && !e.error) {
			/* A loop of links, or an unreachable target: report the link itself. */
			e.error = errno;
			e.error_op = "stat";
		}
	}
	if (flags & FIDX_WALK_STAT)
		e.stx = &stx;
	if (e.d_type == DT_DIR && e.followed && is_ancestor(dir, &stx)) {
		e.error = ELOOP;
		e.error_op = "follow";
	} else if (e.d_type == DT_DIR && !((flags & FIDX_WALK_XDEV) && stx_dev(&stx) != dir->root_dev)) {
		e.descend = true; /* not a mount point that xdev keeps us out of */
	}
	if (deliver(t, &e) == FIDX_WALK_SKIP || !e.descend)
		return;
	push_dir(t, dir, &e, need_stat ? &stx : NULL);
}

/*
 * Counts a new node as taken from its parent (no longer pending there) and
 * releases pfd, the parent's descriptor pop_node() pinned, if not -1.
 */
static void taken_from_parent(struct walk *w, struct dir_node *node, int pfd)
{
	if (!node->parent)
		return;
	pthread_mutex_lock(&w->lock);
	if (pfd >= 0)
		node->parent->pins--;
	child_taken_locked(w, node->parent);
	pthread_mutex_unlock(&w->lock);
}

/*
 * Opens node's directory (whose full path is path), relative to pfd (its
 * parent's descriptor, pinned by pop_node()) when that is not -1, else by
 * path.  Then unpins pfd and counts the node as taken from its parent.
 * Returns the descriptor, or -1 with errno set.
 */
static int open_node(struct walk *w, struct dir_node *node, const char *path, int pfd)
{
	int flags = O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC;
	if (!node->followed)
		flags |= O_NOFOLLOW;
	const char *name = pfd >= 0 ? path + node->name_off : path;
	/* O_NOATIME: a walk must not change access times (it needs ownership or CAP_FOWNER). */
	int fd = pfd >= 0 ? openat(pfd, name, flags | O_NOATIME)
			  : fidx_open_long(name, flags | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = pfd >= 0 ? openat(pfd, name, flags) : fidx_open_long(name, flags);
	/* A followed link opened again: it must still lead to the directory checked. */
	struct stat st;
	if (fd >= 0 && node->followed && node->stx.stx_ino &&
	    (fstat(fd, &st) < 0 || st.st_ino != node->stx.stx_ino ||
	     major(st.st_dev) != node->stx.stx_dev_major ||
	     minor(st.st_dev) != node->stx.stx_dev_minor)) {
		close(fd);
		fd = -1;
		errno = ESTALE;
	}
	int saved = errno;
	taken_from_parent(w, node, pfd);
	/* No lock: until node has children, no other thread looks at these. */
	if (fd >= 0) {
		node->fd = fd;
		node->reading = true;
	}
	errno = saved;
	return fd;
}

/*
 * Ends the reading of node: its descriptor is kept for its children while
 * the budget allows, else closed.  Lock held.
 */
static void end_reading_locked(struct walk *w, struct dir_node *node)
{
	if (node->fd < 0)
		return;
	node->reading = false;
	if (!node->cached && node->pending > 0 && w->cached_fds < w->fd_budget) {
		node->cached = true;
		w->cached_fds++;
	}
	release_fd_locked(w, node);
}

/*
 * Puts node back on the stack for an idle thread to read its next batch
 * while this one handles the current one: a huge directory is read by
 * several threads at once.  Returns true if it did.
 */
static bool hand_on(struct walk *w, struct dir_node *node)
{
	bool handed = false;
	pthread_mutex_lock(&w->lock);
	if (w->idle > 0 && !node->queued && !node->listed && !node->parked &&
	    node->pending < PARK_PENDING) {
		node->queued = handed = true;
		push_locked(w, node);
	}
	pthread_mutex_unlock(&w->lock);
	return handed;
}

/*
 * After a batch: pushes the subdirectories it found, then tells whether this
 * thread is done with node: it handed the next batch on, or node parks
 * (off the stack, descriptor and position kept) because it has too many
 * untaken children and the descriptor budget allows.
 */
static bool end_batch(struct walker *t, struct dir_node *node, bool handed)
{
	struct walk *w = t->walk;
	pthread_mutex_lock(&w->lock);
	push_born_locked(t, node);
	bool done = handed || node->parked;
	if (!done && !node->queued && !node->listed && node->pending >= PARK_PENDING &&
	    w->cached_fds < w->fd_budget) {
		node->parked = done = true;
		if (!node->cached) {
			node->cached = true;
			w->cached_fds++;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return done;
}

/* qsort() order of directory entries: by inode number. */
static int by_inode(const void *a, const void *b)
{
	uint64_t x = (*(struct linux_dirent64 *const *)a)->d_ino;
	uint64_t y = (*(struct linux_dirent64 *const *)b)->d_ino;
	return (x > y) - (x < y);
}

/*
 * Lists the n bytes of entries in t->dents into t->order, without "." and
 * "..", sorted by inode number when they will be stat'ed: neighbouring inodes
 * share inode-table blocks, so a cold cache reads each block once, in order,
 * with the filesystem's read-ahead.  Returns how many.
 */
static size_t order_batch(struct walker *t, long n, bool sorted)
{
	size_t count = 0;
	for (long off = 0; off < n;) {
		struct linux_dirent64 *d = (struct linux_dirent64 *)(t->dents + off);
		off += d->d_reclen;
		const char *name = d->d_name;
		if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
			continue;
		t->order[count++] = d;
	}
	if (sorted)
		qsort(t->order, count, sizeof(*t->order), by_inode);
	return count;
}

/*
 * Reads batches of one directory, opening it first if it is new: reports
 * their entries and pushes their subdirectories.  pfd: as for open_node().
 * Returns true when its listing is over (the end, an error, or a stop), false
 * when this thread left the rest to others (handed on, or parked).
 */
static bool read_node(struct walker *t, struct dir_node *node, int pfd)
{
	struct walk *w = t->walk;
	char *path = node_path(&t->path, node);
	int fd = node->fd; /* open unless new; nobody changes it while it is read */
	if (!path) {
		if (fd < 0) /* not opened, but taken all the same */
			taken_from_parent(w, node, pfd);
		node_error(t, node, ENOMEM, "walk");
		return true;
	}
	if (fd < 0 && (fd = open_node(w, node, path, pfd)) < 0) {
		node_error(t, node, errno, "open dir");
		return true;
	}
	size_t base = node->path_len;
	if (base == 0 || path[base - 1] != '/')
		path[base++] = '/';

	const char *const *exclude = w->opts->exclude;
	bool sorted = w->opts->flags & FIDX_WALK_STAT;
	for (;;) {
		if (walk_stopping(w)) {
			stop_node(t, node);
			return true;
		}
		long n = syscall(SYS_getdents64, fd, t->dents, GETDENTS_BUF);
		if (n <= 0) {
			if (n < 0)
				node_error(t, node, errno, "read dir");
			return true;
		}
		/* A full buffer: more is likely to follow, which an idle thread may read. */
		bool handed = n >= GETDENTS_BUF - 512 && hand_on(w, node);
		size_t count = order_batch(t, n, sorted), i;
		for (i = 0; i < count && !__atomic_load_n(&w->stopped, __ATOMIC_RELAXED); i++) {
			struct linux_dirent64 *d = t->order[i];
			const char *name = d->d_name;
			size_t nlen = strlen(name);
			if (path_reserve(&t->path, base + nlen) < 0) {
				node_error(t, node, ENOMEM, "walk");
				return true;
			}
			memcpy(t->path.s + base, name, nlen + 1);
			if (exclude && excluded(w->opts, t->path.s, node->root_len, name))
				continue;
			visit_entry(t, node, fd, name, base + nlen, base, d->d_type);
		}
		if (i < count) { /* stopped within the batch: part of it was never seen */
			node_error(t, node, ECANCELED, "stopped");
			return true;
		}
		if (end_batch(t, node, handed))
			return false;
	}
}

/*
 * Takes the next node, waiting while others may still push some, and pins
 * its parent's descriptor into t->pinned_fd (-1 if none) for opening it.
 * NULL at the end.
 */
static struct dir_node *pop_node(struct walker *t)
{
	struct walk *w = t->walk;
	pthread_mutex_lock(&w->lock);
	while (!w->stack && w->active > 0 && !walk_stopping(w)) {
		w->idle++;
		pthread_cond_wait(&w->wake, &w->lock);
		w->idle--;
	}
	struct dir_node *node = NULL;
	t->pinned_fd = -1;
	if (w->stack && !walk_stopping(w)) {
		node = w->stack;
		w->stack = node->next;
		node->queued = false;
		node->readers++;
		w->active++;
		if (node->fd < 0 && node->parent && node->parent->fd >= 0) {
			t->pinned_fd = node->parent->fd;
			node->parent->pins++;
		}
	} else {
		pthread_cond_broadcast(&w->wake); /* the end: wake the others */
	}
	pthread_mutex_unlock(&w->lock);
	return node;
}

/*
 * Reads the nodes of the stack until the walk ends.  The last reader of a
 * node whose listing is over finishes it: closes or caches its descriptor
 * and drops its reading reference.
 */
static void walk_loop(struct walker *t)
{
	struct walk *w = t->walk;
	struct dir_node *node;
	while ((node = pop_node(t))) {
		bool over = read_node(t, node, t->pinned_fd);
		pthread_mutex_lock(&w->lock);
		push_born_locked(t, node); /* what a failed batch had found */
		if (over)
			node->listed = true;
		bool finished = --node->readers == 0 && node->listed && !node->queued &&
				!node->parked;
		if (finished)
			end_reading_locked(w, node);
		w->active--;
		if (w->active == 0 && (!w->stack || walk_stopping(w)))
			pthread_cond_broadcast(&w->wake);
		pthread_mutex_unlock(&w->lock);
		if (finished)
			node_unref(t, node);
	}
}

/* A walker thread's main function. */
static void *walker_main(void *arg)
{
	struct walker *t = arg;
	struct walk *w = t->walk;
	if (w->opts->thread_start)
		t->ctx = w->opts->thread_start(w->opts->arg);
	walk_loop(t);
	if (w->opts->thread_end)
		w->opts->thread_end(t->ctx, w->opts->arg);
	return NULL;
}

/*
 * After a stop, once the other threads are gone: ends every directory still
 * on the stack or parked, so that each entered directory is left once.
 */
static void drain_stopped(struct walker *t)
{
	struct walk *w = t->walk;
	for (;;) {
		pthread_mutex_lock(&w->lock);
		struct dir_node *node = w->stack;
		if (!node) {
			pthread_mutex_unlock(&w->lock);
			return;
		}
		w->stack = node->next;
		node->queued = false;
		bool opened = node->fd >= 0; /* parked or handed on, put back by the drain */
		if (!opened && node->parent)
			child_taken_locked(w, node->parent);
		pthread_mutex_unlock(&w->lock);
		stop_node(t, node);
		if (opened) {
			pthread_mutex_lock(&w->lock);
			end_reading_locked(w, node);
			pthread_mutex_unlock(&w->lock);
		}
		node_unref(t, node);
	}
}

/*
 * Stats a root and reports it; pushes it when it is a directory to enter.  A
 * root that is a symlink is followed when its target exists.  Runs on walker
 * 0 before the other threads start.
 */
static void start_root(struct walker *t, const char *root, size_t index)
{
	struct walk *w = t->walk;
	size_t len = strlen(root);
	const char *slash = memrchr(root, '/', len);
	size_t name_off = slash && slash[1] ? (size_t)(slash + 1 - root) : 0;
	struct statx stx;
	struct fidx_walk_entry e = {
		.path = root, .path_len = len, .name_off = name_off, .root_index = index,
		.at_fd = AT_FDCWD, .at_name = root,
	};
	if (statx(AT_FDCWD, root, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_FULL, &stx) < 0) {
		e.error = errno;
		e.error_op = "stat";
		deliver(t, &e);
		return;
	}
	e.d_type = IFTODT(stx.stx_mode);
	if (S_ISLNK(stx.stx_mode)) {
		if ((w->opts->flags & FIDX_WALK_READ_LINKS) &&
		    !(e.link_target = read_link(t, AT_FDCWD, root))) {
			e.error = errno;
			e.error_op = "readlink";
		}
		struct statx target;
		if (statx(AT_FDCWD, root, AT_NO_AUTOMOUNT, STATX_FULL, &target) == 0) {
			stx = target;
			e.followed = true;
			e.d_type = IFTODT(stx.stx_mode);
		}
	}
	if (w->opts->flags & FIDX_WALK_STAT)
		e.stx = &stx;
	e.descend = e.d_type == DT_DIR;
	if (deliver(t, &e) == FIDX_WALK_SKIP || !e.descend)
		return;
	push_dir(t, NULL, &e, &stx);
}

unsigned fidx_walk_default_threads(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = cpus > 0 ? 4 * (unsigned)cpus : 4;
	return n < FIDX_WALK_MAX_DEFAULT_THREADS ? n : FIDX_WALK_MAX_DEFAULT_THREADS;
}

/* What fidx_walk() with n threads may hold beside its parent-descriptor cache. */
static unsigned long fd_reserve(unsigned n)
{
	/* Per thread: its listing, a pinned parent, a long-path open, and one
	 * descriptor of the caller's (a hashed file). */
	return 32 + 4 * (unsigned long)n;
}

/*
 * The parent descriptors a walk of n threads caches under an open-file limit:
 * half of what the reserve leaves, at most PARENT_FD_CACHE_MAX.
 */
static unsigned parent_fd_budget(unsigned long limit, unsigned n)
{
	unsigned long reserve = fd_reserve(n);
	unsigned long budget = limit > reserve ? (limit - reserve) / 2 : 0;
	return budget > PARENT_FD_CACHE_MAX ? PARENT_FD_CACHE_MAX : (unsigned)budget;
}

unsigned long fidx_walk_max_fds(unsigned threads)
{
	unsigned n = threads ? threads : fidx_walk_default_threads();
	return fd_reserve(n) + parent_fd_budget(fidx_raise_nofile(), n);
}

int fidx_walk(const char *const *roots, size_t nroots, const struct fidx_walk_opts *opts)
{
	if (!opts->entry) {
		errno = EINVAL;
		return -1;
	}
	unsigned n = opts->threads ? opts->threads : fidx_walk_default_threads();
	struct walk w = {.opts = opts, .fd_budget = parent_fd_budget(fidx_raise_nofile(), n)};

	struct walker *ts = calloc(n, sizeof(*ts));
	pthread_t *tids = calloc(n, sizeof(*tids));
	int ret = -1;
	if (!ts || !tids)
		goto out;
	for (unsigned i = 0; i < n; i++)
		ts[i].up_fd = -1;
	for (unsigned i = 0; i < n; i++) {
		ts[i].walk = &w;
		ts[i].dents = malloc(GETDENTS_BUF);
		ts[i].order = malloc(GETDENTS_BUF / MIN_DIRENT * sizeof(*ts[i].order));
		ts[i].link = malloc(PATH_MAX + 1);
		if (!ts[i].dents || !ts[i].order || !ts[i].link)
			goto out;
	}
	/* Adaptive: the lock is held for a few instructions, so spin a little before sleeping. */
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&w.lock, &attr);
	pthread_mutexattr_destroy(&attr);
	pthread_cond_init(&w.wake, NULL);

	/* Where each root really is, for following links only inside them. */
	if ((opts->flags & FIDX_WALK_FOLLOW) && !(opts->flags & FIDX_WALK_FOLLOW_ANY)) {
		if (!(w.root_real = calloc(nroots ? nroots : 1, sizeof(*w.root_real))))
			goto out;
		w.nroots = nroots;
		for (size_t r = 0; r < nroots; r++) {
			int fd = fidx_open_long(roots[r], O_PATH);
			if (fd >= 0 && real_path_of(fd, ts[0].link, PATH_MAX + 1) >= 0 &&
			    !(w.root_real[r] = strdup(ts[0].link))) {
				close(fd);
				goto out;
			}
			if (fd >= 0)
				close(fd);
		}
	}
	/* Thread 0 is this thread: it reports the roots, then walks with the others. */
	if (opts->thread_start)
		ts[0].ctx = opts->thread_start(opts->arg);
	for (size_t r = 0; r < nroots && !walk_stopping(&w); r++)
		start_root(&ts[0], roots[r], r);
	pthread_mutex_lock(&w.lock);
	push_born_locked(&ts[0], NULL);
	pthread_mutex_unlock(&w.lock);
	unsigned started = 1;
	for (; started < n; started++) {
		if (pthread_create(&tids[started], NULL, walker_main, &ts[started]) != 0)
			break; /* fewer threads: the walk still completes */
	}
	walk_loop(&ts[0]);
	for (unsigned i = 1; i < started; i++)
		pthread_join(tids[i], NULL);
	drain_stopped(&ts[0]);
	if (opts->thread_end)
		opts->thread_end(ts[0].ctx, opts->arg);
	ret = w.stopped ? 1 : 0;
	pthread_cond_destroy(&w.wake);
	pthread_mutex_destroy(&w.lock);
out:
	if (ts) {
		for (unsigned i = 0; i < n; i++) {
			free(ts[i].dents);
			free(ts[i].order);
			if (ts[i].up_fd >= 0)
				close(ts[i].up_fd);
			free(ts[i].path.s);
			free(ts[i].path.ids);
			free(ts[i].npath.s);
			free(ts[i].npath.ids);
			free(ts[i].link);
		}
	}
	free(ts);
	free(tids);
	for (size_t r = 0; r < w.nroots; r++)
		free(w.root_real[r]);
	free(w.root_real);
	if (ret < 0)
		errno = ENOMEM; /* after the cleanup, which may change errno */
	return ret;
}
