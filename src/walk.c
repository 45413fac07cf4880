/*
 * walk.c - the parallel tree walk.
 *
 * Design
 * ------
 * Directories are the unit of shared work.  Every walker thread runs the same
 * loop over one LIFO stack of directory nodes:
 *
 *        ┌──────────── stack of dir nodes (LIFO: depth first) ◄──────────┐
 *        ▼                                                                │
 *   pop node ─► open it ─► getdents64 ─► per entry: exclude? statx ─► dir? push
 *                                           │                   └─► else report
 *                                           ▼
 *                               report the node itself (with any open/read error)
 *
 * No thread owns a part of the tree: a thread that finishes a directory takes
 * whatever is on top of the stack, so a huge directory never holds up the rest.
 * Depth-first order keeps the stack short (bounded by depth x fan-out, not by
 * the tree) and visits neighbouring inodes together.
 *
 * Descriptors.  A directory is opened relative to its parent's descriptor when
 * that is still open, so no path is resolved from the root and trees deeper
 * than PATH_MAX work.  A parent keeps its descriptor after its listing only
 * while it has unopened subdirectories and the descriptor budget (derived
 * from RLIMIT_NOFILE) allows; otherwise children are opened by path
 * (fidx_open_long() for paths longer than PATH_MAX).  The walk never fails
 * with EMFILE for want of a cached descriptor.
 *
 * Locking.  One mutex (walk.lock) guards the stack, the `active` count, and
 * each node's fd/pins/pending/reading fields.  A child pins its parent's
 * descriptor while it uses it; the descriptor is closed by whoever leaves it
 * unused (release_fd_locked()).  Node lifetime is a reference count: a node
 * holds one reference on its parent, so the ancestor chain used for loop
 * detection in follow mode is always valid.
 */
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define GETDENTS_BUF (64 * 1024) /* bytes per getdents64() call */
#define STATX_WANT (STATX_BASIC_STATS | STATX_BTIME)

struct dir_node {
	struct dir_node *parent;  /* reference held; NULL for a root */
	atomic_uint refs;         /* 1 for its own processing + 1 per child node */
	char *path;               /* full path; owned */
	size_t path_len;          /* strlen(path) */
	size_t name_off;          /* offset of the last component in path */
	size_t root_index;        /* index of its root */
	size_t root_len;          /* length of its root's path, for exclude patterns */
	size_t depth;             /* 0 for a root */
	uint64_t root_dev;        /* device of its root, for xdev */
	struct statx stx;         /* its statx data (followed, if it was a link) */
	char *link_target;        /* when reached through a symlink and read_links; owned */
	unsigned char d_type;     /* DT_* from the parent's listing */
	bool followed;            /* reached through a symlink */
	/* Guarded by walk.lock: */
	int fd;                   /* open descriptor, or -1 */
	unsigned pins;            /* children using fd right now */
	unsigned pending;         /* child nodes not yet opened */
	bool reading;             /* its listing is being read */
	bool cached;              /* fd counts against the cache budget */
	struct dir_node *next;    /* link in the stack */
};

struct walk {
	const struct fidx_walk_opts *opts;
	pthread_mutex_t lock;     /* guards the fields below and the nodes' fd fields */
	pthread_cond_t wake;      /* signalled on push, and when the walk ends */
	struct dir_node *stack;   /* top of the stack of nodes to read */
	unsigned active;          /* threads reading a node */
	unsigned cached_fds;      /* parent descriptors kept open */
	unsigned fd_budget;       /* at most this many cached */
	bool stopped;             /* a callback said stop, or cancel was seen */
};

/* One walker thread's buffers. */
struct walker {
	struct walk *walk;
	void *ctx;                /* the caller's per-thread context */
	char *dents;              /* getdents64 buffer */
	char *path;               /* path of the entry being built */
	size_t path_cap;          /* bytes allocated for path */
	char *link;               /* readlink buffer, PATH_MAX + 1 */
};

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* Drops one reference to node, freeing it and, in turn, unreferenced parents. */
static void node_unref(struct dir_node *node)
{
	while (node && atomic_fetch_sub(&node->refs, 1) == 1) {
		struct dir_node *parent = node->parent;
		free(node->path);
		free(node->link_target);
		free(node);
		node = parent;
	}
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

/* Delivers an entry to the callback and records a stop request. */
static void report(struct walker *t, const struct fidx_walk_entry *e)
{
	if (t->walk->opts->entry(e, t->ctx) == FIDX_WALK_STOP)
		__atomic_store_n(&t->walk->stopped, true, __ATOMIC_RELAXED);
}

int fidx_open_long(const char *path, int flags)
{
	size_t len = strlen(path);
	if (len < PATH_MAX)
		return open(path, flags | O_CLOEXEC);

	/* Open successive pieces shorter than PATH_MAX, each relative to the last. */
	int dirfd = path[0] == '/' ? open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : AT_FDCWD;
	if (path[0] == '/' && dirfd < 0)
		return -1;
	const char *p = path;
	while (*p == '/')
		p++;
	char piece[PATH_MAX];
	for (;;) {
		size_t rest = strlen(p);
		if (rest < PATH_MAX) {
			int fd = openat(dirfd, p, flags | O_CLOEXEC);
			int saved = errno;
			if (dirfd >= 0)
				close(dirfd);
			errno = saved;
			return fd;
		}
		/* Cut at the last '/' that keeps the piece shorter than PATH_MAX. */
		const char *cut = memrchr(p, '/', PATH_MAX - 1);
		if (!cut || cut == p) {
			if (dirfd >= 0)
				close(dirfd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(piece, p, cut - p);
		piece[cut - p] = '\0';
		int next = openat(dirfd, piece, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int saved = errno;
		if (dirfd >= 0)
			close(dirfd);
		if (next < 0) {
			errno = saved;
			return -1;
		}
		dirfd = next;
		p = cut;
		while (*p == '/')
			p++;
	}
}

/* Returns true if pattern list excludes the entry at path (below root at root_len). */
static bool excluded(const struct fidx_walk_opts *opts, const char *path, size_t root_len,
		     const char *name)
{
	if (!opts->excludes)
		return false;
	const char *rel = path + root_len;
	while (*rel == '/')
		rel++;
	for (const char *const *g = opts->excludes; *g; g++) {
		if (strchr(*g, '/') ? fnmatch(*g, rel, FNM_PATHNAME) == 0 : fnmatch(*g, name, 0) == 0)
			return true;
	}
	return false;
}

/* Makes room for len + 1 bytes in the walker's path buffer.  Returns 0 or -1. */
static int path_reserve(struct walker *t, size_t len)
{
	if (len + 1 <= t->path_cap)
		return 0;
	size_t cap = t->path_cap ? t->path_cap : 4096;
	while (cap < len + 1)
		cap *= 2;
	char *p = realloc(t->path, cap);
	if (!p)
		return -1;
	t->path = p;
	t->path_cap = cap;
	return 0;
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

/* Returns true if a node in the chain from node up has the same device and inode. */
static bool is_ancestor(const struct dir_node *node, const struct statx *stx)
{
	for (; node; node = node->parent)
		if (node->stx.stx_ino == stx->stx_ino && node->stx.stx_dev_major == stx->stx_dev_major &&
		    node->stx.stx_dev_minor == stx->stx_dev_minor)
			return true;
	return false;
}

/* The device of a statx result as one number, for comparing devices. */
static uint64_t stx_dev(const struct statx *stx)
{
	return ((uint64_t)stx->stx_dev_major << 32) | stx->stx_dev_minor;
}

/* Pushes a node on the stack and wakes a waiting thread.  Lock held. */
static void push_locked(struct walk *w, struct dir_node *node)
{
	node->next = w->stack;
	w->stack = node;
	pthread_cond_signal(&w->wake);
}

/*
 * Makes a node for the directory e found in parent (NULL for a root), copying
 * what it needs from e and taking a reference on parent.  Returns NULL on
 * ENOMEM.
 */
static struct dir_node *node_new(struct dir_node *parent, const struct fidx_walk_entry *e)
{
	struct dir_node *node = calloc(1, sizeof(*node));
	if (!node)
		return NULL;
	node->path = malloc(e->path_len + 1);
	if (!node->path || (e->link_target && !(node->link_target = strdup(e->link_target)))) {
		free(node->path);
		free(node);
		return NULL;
	}
	memcpy(node->path, e->path, e->path_len + 1);
	node->path_len = e->path_len;
	node->name_off = e->name_off;
	node->stx = *e->stx;
	node->d_type = e->d_type;
	node->followed = e->followed;
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
		node->root_dev = stx_dev(e->stx);
		node->root_len = e->path_len;
	}
	return node;
}

/*
 * Pushes a node for the directory e (found in parent, or a root) so that a
 * walker reads it; reports e with ENOMEM when no node can be made.
 */
static void push_dir(struct walker *t, struct dir_node *parent, struct fidx_walk_entry *e)
{
	struct walk *w = t->walk;
	struct dir_node *node = node_new(parent, e);
	if (!node) {
		e->error = ENOMEM;
		e->error_op = "walk";
		report(t, e);
		return;
	}
	pthread_mutex_lock(&w->lock);
	if (parent)
		parent->pending++;
	push_locked(w, node);
	pthread_mutex_unlock(&w->lock);
}

/*
 * Stats one entry of a listing and either reports it or, for a directory to
 * enter, pushes a node for it.  t->path holds its full path.
 */
static void visit_entry(struct walker *t, struct dir_node *dir, int dfd, const char *name,
			size_t path_len, size_t name_off, unsigned char d_type)
{
	struct walk *w = t->walk;
	const struct fidx_walk_opts *opts = w->opts;
	struct statx stx;
	struct fidx_walk_entry e = {
		.path = t->path, .path_len = path_len, .name_off = name_off,
		.root_index = dir->root_index, .depth = dir->depth + 1,
		.at_fd = dfd, .at_name = name, .d_type = d_type,
	};

	if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_WANT, &stx) < 0) {
		e.error = errno;
		e.error_op = "stat";
		report(t, &e);
		return;
	}
	e.stx = &stx;
	bool is_link = S_ISLNK(stx.stx_mode);
	if (is_link && opts->read_links) {
		e.link_target = read_link(t, dfd, name);
		if (!e.link_target) {
			e.error = errno;
			e.error_op = "readlink";
		}
	}
	if (is_link && opts->follow) {
		struct statx target;
		if (statx(dfd, name, AT_NO_AUTOMOUNT, STATX_WANT, &target) == 0) {
			stx = target;
			e.followed = true;
		} else if (errno != ENOENT) {
			/* A loop of links, or an unreadable target: report the link itself. */
			e.error = errno;
			e.error_op = "stat";
		}
	}
	if (!S_ISDIR(stx.stx_mode) || e.error) {
		report(t, &e);
		return;
	}
	if (opts->xdev && stx_dev(&stx) != dir->root_dev) {
		report(t, &e); /* a mount point: recorded, not entered */
		return;
	}
	if (e.followed && is_ancestor(dir, &stx)) {
		e.error = ELOOP;
		e.error_op = "follow";
		report(t, &e);
		return;
	}
	push_dir(t, dir, &e);
}

/*
 * Returns node's parent's open descriptor, pinned so that it stays open until
 * unpin_parent_fd(), or -1 when there is none (a root, or a parent whose
 * descriptor was closed).
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

/*
 * Releases what pin_parent_fd() returned (pfd may be -1).  opened: node has
 * now been opened, so its parent has one unopened child less.
 */
static void unpin_parent_fd(struct walk *w, struct dir_node *node, int pfd, bool opened)
{
	struct dir_node *parent = node->parent;
	pthread_mutex_lock(&w->lock);
	if (pfd >= 0)
		parent->pins--;
	if (opened)
		parent->pending--;
	release_fd_locked(w, parent);
	pthread_mutex_unlock(&w->lock);
}

/*
 * Opens node's directory, relative to its parent's descriptor when that is
 * open.  Returns the descriptor, or -1 with errno set.  Accounts the parent's
 * pending count either way.
 */
static int open_node(struct walk *w, struct dir_node *node)
{
	int flags = O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC;
	if (!node->followed)
		flags |= O_NOFOLLOW;
	struct dir_node *parent = node->parent;
	int pfd = pin_parent_fd(w, node);
	/* O_NOATIME: a scan must not change access times (it needs ownership or CAP_FOWNER). */
	int fd = pfd >= 0 ? openat(pfd, node->path + node->name_off, flags | O_NOATIME)
			  : fidx_open_long(node->path, flags | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = pfd >= 0 ? openat(pfd, node->path + node->name_off, flags)
			      : fidx_open_long(node->path, flags);
	int saved = errno;
	if (parent)
		unpin_parent_fd(w, node, pfd, true);
	errno = saved;
	return fd;
}

/*
 * Reads one directory: reports its entries, pushes its subdirectories, then
 * reports the directory itself with any error met opening or reading it.
 */
static void read_node(struct walker *t, struct dir_node *node)
{
	struct walk *w = t->walk;
	struct fidx_walk_entry e = {
		.path = node->path, .path_len = node->path_len, .name_off = node->name_off,
		.root_index = node->root_index, .depth = node->depth, .d_type = node->d_type,
		.stx = &node->stx, .followed = node->followed, .link_target = node->link_target,
	};
	size_t root_len = node->root_len;

	int fd = open_node(w, node);
	if (fd < 0) {
		e.error = errno;
		e.error_op = "open dir";
	} else {
		pthread_mutex_lock(&w->lock);
		node->fd = fd;
		node->reading = true;
		pthread_mutex_unlock(&w->lock);

		if (path_reserve(t, node->path_len + 2) < 0) {
			e.error = ENOMEM;
			e.error_op = "walk";
		}
		if (!e.error) {
			memcpy(t->path, node->path, node->path_len);
		}
		size_t base = node->path_len;
		if (!e.error && (base == 0 || t->path[base - 1] != '/'))
			t->path[base++] = '/';
		while (!e.error && !walk_stopping(w)) {
			long n = syscall(SYS_getdents64, fd, t->dents, GETDENTS_BUF);
			if (n <= 0) {
				if (n < 0) {
					e.error = errno;
					e.error_op = "read dir";
				}
				break;
			}
			for (long off = 0; off < n && !walk_stopping(w);) {
				struct linux_dirent64 *d = (struct linux_dirent64 *)(t->dents + off);
				off += d->d_reclen;
				const char *name = d->d_name;
				if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
					continue;
				size_t nlen = strlen(name);
				if (path_reserve(t, base + nlen) < 0) {
					e.error = ENOMEM;
					e.error_op = "walk";
					break;
				}
				memcpy(t->path + base, name, nlen + 1);
				if (excluded(w->opts, t->path, root_len, name))
					continue;
				visit_entry(t, node, fd, name, base + nlen, base, d->d_type);
			}
		}
	}

	/* Report the directory itself, relative to its parent when we can. */
	int pfd = pin_parent_fd(w, node);
	e.at_fd = pfd >= 0 ? pfd : AT_FDCWD;
	e.at_name = pfd >= 0 ? node->path + node->name_off : node->path;
	report(t, &e);
	if (pfd >= 0)
		unpin_parent_fd(w, node, pfd, false);

	pthread_mutex_lock(&w->lock);
	if (fd >= 0) {
		node->reading = false;
		if (node->pending > 0 && w->cached_fds < w->fd_budget) {
			node->cached = true;
			w->cached_fds++;
		}
		release_fd_locked(w, node);
	}
	pthread_mutex_unlock(&w->lock);
}

/* Takes the next node, waiting while others may still push some.  NULL at the end. */
static struct dir_node *pop_node(struct walk *w)
{
	pthread_mutex_lock(&w->lock);
	while (!w->stack && w->active > 0 && !walk_stopping(w))
		pthread_cond_wait(&w->wake, &w->lock);
	struct dir_node *node = NULL;
	if (w->stack && !walk_stopping(w)) {
		node = w->stack;
		w->stack = node->next;
		w->active++;
	} else {
		pthread_cond_broadcast(&w->wake); /* the end: wake the others */
	}
	pthread_mutex_unlock(&w->lock);
	return node;
}

/* Marks the end of one node's processing. */
static void node_done(struct walk *w, struct dir_node *node)
{
	pthread_mutex_lock(&w->lock);
	w->active--;
	if (w->active == 0 && (!w->stack || walk_stopping(w)))
		pthread_cond_broadcast(&w->wake);
	pthread_mutex_unlock(&w->lock);
	node_unref(node);
}

/* A walker thread's main loop. */
static void *walker_main(void *arg)
{
	struct walker *t = arg;
	struct walk *w = t->walk;
	if (w->opts->thread_start)
		t->ctx = w->opts->thread_start(w->opts->arg);
	struct dir_node *node;
	while ((node = pop_node(w)))
		read_node(t, node), node_done(w, node);
	if (w->opts->thread_end)
		w->opts->thread_end(t->ctx, w->opts->arg);
	return NULL;
}

/*
 * Stats a root and reports it, or pushes it when it is a directory.  A root
 * that is a symlink is followed when its target exists.  Runs on walker 0
 * before the other threads start.
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
	if (statx(AT_FDCWD, root, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_WANT, &stx) < 0) {
		e.error = errno;
		e.error_op = "stat";
		report(t, &e);
		return;
	}
	e.stx = &stx;
	if (S_ISLNK(stx.stx_mode)) {
		if (w->opts->read_links && !(e.link_target = read_link(t, AT_FDCWD, root))) {
			e.error = errno;
			e.error_op = "readlink";
		}
		struct statx target;
		if (statx(AT_FDCWD, root, AT_NO_AUTOMOUNT, STATX_WANT, &target) == 0) {
			stx = target;
			e.followed = true;
		}
	}
	if (!S_ISDIR(stx.stx_mode) || e.error) {
		report(t, &e);
		return;
	}
	e.d_type = DT_DIR;
	push_dir(t, NULL, &e);
}

unsigned long fidx_raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 64;
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit up = {rl.rlim_max, rl.rlim_max};
		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl.rlim_cur = rl.rlim_max;
	}
	return rl.rlim_cur;
}

int fidx_walk(const char *const *roots, size_t nroots, const struct fidx_walk_opts *opts)
{
	unsigned n = opts->threads ? opts->threads : 1;
	struct walk w = {.opts = opts};
	/*
	 * Leave room for what the caller and every thread may hold at once (its
	 * listing, a pinned parent, a long-path open, a hashed file), then cache
	 * parent descriptors in half of what remains.
	 */
	rlim_t limit = fidx_raise_nofile();
	rlim_t reserve = 32 + 4 * (rlim_t)n;
	rlim_t budget = limit > reserve ? (limit - reserve) / 2 : 0;
	w.fd_budget = budget > 4096 ? 4096 : (unsigned)budget;
	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.wake, NULL);

	struct walker *ts = calloc(n, sizeof(*ts));
	pthread_t *tids = calloc(n, sizeof(*tids));
	int ret = -1;
	if (!ts || !tids)
		goto out;
	for (unsigned i = 0; i < n; i++) {
		ts[i].walk = &w;
		ts[i].dents = malloc(GETDENTS_BUF);
		ts[i].link = malloc(PATH_MAX + 1);
		if (!ts[i].dents || !ts[i].link)
			goto out;
	}

	/* Thread 0 is this thread: it reports the roots, then walks with the others. */
	if (opts->thread_start)
		ts[0].ctx = opts->thread_start(opts->arg);
	for (size_t r = 0; r < nroots && !walk_stopping(&w); r++)
		start_root(&ts[0], roots[r], r);
	unsigned started = 1;
	for (; started < n; started++) {
		if (pthread_create(&tids[started], NULL, walker_main, &ts[started]) != 0)
			break; /* fewer threads: the walk still completes */
	}
	struct dir_node *node;
	while ((node = pop_node(&w)))
		read_node(&ts[0], node), node_done(&w, node);
	if (opts->thread_end)
		opts->thread_end(ts[0].ctx, opts->arg);
	for (unsigned i = 1; i < started; i++)
		pthread_join(tids[i], NULL);

	/* Nodes left by a stopped walk. */
	while (w.stack) {
		node = w.stack;
		w.stack = node->next;
		if (node->parent) {
			node->parent->pending--;
			release_fd_locked(&w, node->parent);
		}
		node_unref(node);
	}
	ret = w.stopped ? 1 : 0;
out:
	if (ts) {
		for (unsigned i = 0; i < n; i++) {
			free(ts[i].dents);
			free(ts[i].path);
			free(ts[i].link);
		}
	}
	free(ts);
	free(tids);
	pthread_cond_destroy(&w.wake);
	pthread_mutex_destroy(&w.lock);
	return ret;
}
