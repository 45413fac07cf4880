/*
 * test_walk.c - the semantics of fidx_walk() (include/fidx/walk.h) that users
 * rely on, each checked against an independent ground truth.
 *
 * Every test builds its tree in a fresh temporary folder with *at() calls,
 * walks it, compares what the walk reported with what the test made (or with
 * what the OS says through the entry's at_fd and at_name), and removes the
 * tree.  What is checked:
 *
 *   - every entry reported exactly once, roots included, with and without
 *     FIDX_WALK_STAT; d_type right for every type; leave() exactly once per
 *     entered directory, after everything inside it; a directory's entry
 *     before its contents; descend exactly for the directories entered;
 *   - SKIP, STOP and the cancel flag: on a stop every entered directory is
 *     still left once, "stopped" when it was not finished;
 *   - errors: an unreadable directory, a directory that vanishes or is
 *     swapped for a file or a symlink between its listing and its opening,
 *     entries removed before their stat; the error callback, and its STOP;
 *   - symlinks not followed by default; with FIDX_WALK_FOLLOW an outside
 *     directory is entered and a link to an ancestor is ELOOP, not entered;
 *     FIDX_WALK_READ_LINKS gives targets byte-exact; one filesystem (XDEV);
 *     exclude globs by name and by path;
 *   - scale: 64 descriptors with 8 threads, a directory of 1M entries, a
 *     chain of 10,000 levels, and bounded memory beside 200k subdirectories;
 *   - names that are not UTF-8, and several roots of every kind.
 *
 * Small trees go through a recorder that logs every callback (entry, leave,
 * error) in one list under one lock, so that the list's order is the order
 * in which callbacks on different threads ran; the large trees use atomic
 * counters and bitmaps indexed by the number in each name.
 *
 * Tests that need a resource limit, another user or a mount namespace run in
 * a forked child: there a failed check exits the child with status 1 (77
 * means "skipped"), and the parent test fails on that status.
 *
 * `make check` builds and runs this under TSan too, which slows the walk
 * 5-15x: there the huge and the wide directory have a tenth of their entries
 * (see SCALE below); the deep chain keeps its 10,000 levels (~5 s).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fdutil.h"
#include "fidx/walk.h"

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

/*
 * The large trees; under TSan the flat ones get a tenth of the entries (the
 * walk is 5-15x slower there, and making and removing 1M files takes ~15 s).
 * The RSS bound lies between what the walk needs with parking (~6 MiB at
 * 200k subdirectories) and without it (~46 MiB).
 */
#ifdef UNDER_TSAN
#define SCALE 10
#else
#define SCALE 1
#endif
#define HUGE_DIR_FILES (1000000 / SCALE)  /* entries of the one huge directory */
#define DEEP_LEVELS 10000                 /* levels of the deep chain */
#define WIDE_SUBDIRS (200000 / SCALE)     /* subdirectories of the wide directory */
#define WIDE_RSS_BOUND_KIB (16 * 1024)    /* peak RSS growth allowed walking them */
#define LONG_LEVELS 2000                  /* levels of the chain of long names */
#define LONG_NAME 200                     /* bytes per name: paths of ~400 KB */
#define LONG_RSS_BOUND_KIB (32 * 1024)    /* peak RSS growth allowed walking it (a node
					     holding its full path would need ~400 MB) */

#define SKIP_STATUS 77 /* a child's exit status: the test cannot run here */

/* A check in a callback hook, on a walker thread, where cmocka cannot fail a test. */
#define HOOK_CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__, \
				__LINE__, #cond, strerror(errno)); \
			abort(); \
		} \
	} while (0)

/* ------------------------------------------------------------------ checks */

static bool in_child; /* in a forked child: a failed check exits, not longjmps */

/* Reports a failed check and ends the test (or the child). */
__attribute__((format(printf, 2, 3)))
static void check_failed(int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s:%d: ", __FILE__, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	if (in_child)
		exit(1);
	_fail(__FILE__, line);
}

#define CHECK(cond) \
	do { \
		if (!(cond)) \
			check_failed(__LINE__, "check failed: %s", #cond); \
	} while (0)
#define CHECK_MSG(cond, ...) \
	do { \
		if (!(cond)) \
			check_failed(__LINE__, __VA_ARGS__); \
	} while (0)
#define CHECK_EQ(a, b) \
	do { \
		long long a_ = (long long)(a), b_ = (long long)(b); \
		if (a_ != b_) \
			check_failed(__LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_); \
	} while (0)

/* The bytes of p made printable for a message, the middle of long ones elided.  Not reentrant. */
static const char *shown(const char *p, size_t len)
{
	static char buf[512];
	size_t o = 0;
	for (size_t i = 0; i < len && o < sizeof(buf) - 8; i++) {
		if (len > 200 && i == 80) {
			o += (size_t)sprintf(buf + o, "[...]");
			i = len - 81;
			continue;
		}
		unsigned char c = (unsigned char)p[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			buf[o++] = (char)c;
		else
			o += (size_t)sprintf(buf + o, "\\x%02x", c);
	}
	buf[o] = '\0';
	return buf;
}

/* Compares two byte strings as memcmp would, the shorter first on a tie. */
static int cmp_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);
	return c ? c : (alen > blen) - (alen < blen);
}

/* strcmp() that takes NULL (equal only to NULL). */
static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/*
 * Runs fn(arg) in a forked child and returns its exit status (0: passed,
 * SKIP_STATUS: could not run).  The child exits with exit(), so that TSan's
 * report of a race (status 66) reaches the parent.
 */
static int run_in_child(void (*fn)(void *arg), void *arg)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		in_child = true;
		fn(arg);
		exit(0);
	}
	int status;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK_MSG(WIFEXITED(status), "child killed by signal %d", WTERMSIG(status));
	return WEXITSTATUS(status);
}

/* Seconds since an arbitrary point, for the figures printed by the large tests. */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------ test trees */

/* The temporary folder: $TMPDIR, else /tmp. */
static const char *tmp_parent(void)
{
	const char *t = getenv("TMPDIR");
	return t && *t ? t : "/tmp";
}

/* A folder with room for n more entries: tmpfs /dev/shm when it has it, else tmp_parent(). */
static const char *big_parent(size_t n)
{
	struct statvfs sv;
	if (statvfs("/dev/shm", &sv) == 0 && sv.f_favail > 2 * n &&
	    (uint64_t)sv.f_bavail * sv.f_frsize > (1ull << 30) && access("/dev/shm", W_OK) == 0)
		return "/dev/shm";
	return tmp_parent();
}

/* Lists the directory fd (names but . and ..) into *names; returns how many, and which are dirs. */
static size_t list_dir(int fd, char ***names, bool **is_dir)
{
	int dup_fd = dup(fd);
	CHECK(dup_fd >= 0);
	DIR *d = fdopendir(dup_fd);
	CHECK(d != NULL);
	size_t n = 0, cap = 0;
	*names = NULL;
	*is_dir = NULL;
	for (struct dirent *de; (de = readdir(d));) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			*names = realloc(*names, cap * sizeof(**names));
			*is_dir = realloc(*is_dir, cap * sizeof(**is_dir));
			CHECK(*names && *is_dir);
		}
		unsigned char type = de->d_type;
		if (type == DT_UNKNOWN) {
			struct stat st;
			CHECK(fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0);
			type = IFTODT(st.st_mode);
		}
		(*names)[n] = strdup(de->d_name);
		(*is_dir)[n++] = type == DT_DIR;
	}
	closedir(d);
	return n;
}

/* A directory being removed: its subdirectories still to remove, and its own name. */
struct rm_frame {
	char **subdirs;
	size_t n;
	char *name;  /* in its parent; NULL for the top */
};

/*
 * Removes the tree at path with *at() calls only, one descriptor at a time
 * (climbing back through ".."), so that any depth and any width work, and
 * directories without permissions are opened after a chmod.
 */
static void remove_tree(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	CHECK_MSG(fd >= 0, "open %s: %s", path, strerror(errno));
	struct rm_frame *stack = NULL;
	size_t depth = 0, cap = 0;
	char *name = NULL;
	for (;;) {
		/* fd: a directory not yet emptied; remove its non-directories, stack its subdirs */
		char **names;
		bool *is_dir;
		size_t n = list_dir(fd, &names, &is_dir), dirs = 0;
		for (size_t i = 0; i < n; i++) {
			if (is_dir[i]) {
				names[dirs++] = names[i];
				continue;
			}
			CHECK_MSG(unlinkat(fd, names[i], 0) == 0, "unlink %s: %s", names[i],
				  strerror(errno));
			free(names[i]);
		}
		free(is_dir);
		if (depth == cap) {
			cap = cap ? 2 * cap : 64;
			stack = realloc(stack, cap * sizeof(*stack));
			CHECK(stack);
		}
		stack[depth++] = (struct rm_frame){.subdirs = names, .n = dirs, .name = name};
		/* Climb out of every emptied directory, then enter the next subdirectory. */
		while (stack[depth - 1].n == 0) {
			struct rm_frame *top = &stack[--depth];
			free(top->subdirs);
			if (depth == 0) {
				close(fd);
				CHECK_MSG(rmdir(path) == 0, "rmdir %s: %s", path, strerror(errno));
				free(stack);
				return;
			}
			int up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			CHECK(up >= 0);
			close(fd);
			fd = up;
			CHECK_MSG(unlinkat(fd, top->name, AT_REMOVEDIR) == 0, "rmdir %s: %s",
				  top->name, strerror(errno));
			free(top->name);
		}
		struct rm_frame *top = &stack[depth - 1];
		name = top->subdirs[--top->n];
		int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 && errno == EACCES && fchmodat(fd, name, 0700, 0) == 0)
			sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		CHECK_MSG(sub >= 0, "open %s: %s", name, strerror(errno));
		close(fd);
		fd = sub;
	}
}

/* A test tree: a fresh folder under a temporary folder, removed at the end. */
struct tree {
	char *base;  /* its path (the mkdtemp folder) */
	int fd;      /* open on base */
};

/* The trees not yet freed, which a failed test leaves to remove_leftovers(). */
static struct tree live_trees[8];

/* Makes a fresh tree under parent, mode 0755 (so that another user may walk it). */
static void tree_new(struct tree *t, const char *parent)
{
	CHECK(asprintf(&t->base, "%s/fidx-test-walk-XXXXXX", parent) >= 0);
	CHECK_MSG(mkdtemp(t->base) != NULL, "mkdtemp %s: %s", t->base, strerror(errno));
	CHECK(chmod(t->base, 0755) == 0);
	t->fd = open(t->base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(t->fd >= 0);
	size_t i = 0;
	while (i < sizeof(live_trees) / sizeof(*live_trees) && live_trees[i].base)
		i++;
	CHECK(i < sizeof(live_trees) / sizeof(*live_trees));
	live_trees[i] = *t;
}

/* Removes the tree and everything in it. */
static void tree_free(struct tree *t)
{
	for (size_t i = 0; i < sizeof(live_trees) / sizeof(*live_trees); i++)
		if (live_trees[i].base == t->base)
			live_trees[i] = (struct tree){0};
	close(t->fd);
	remove_tree(t->base);
	free(t->base);
}

/* cmocka teardown of every test: removes the trees a failed test left behind. */
static int remove_leftovers(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(live_trees) / sizeof(*live_trees); i++) {
		if (live_trees[i].base) {
			struct tree t = live_trees[i];
			tree_free(&t);
		}
	}
	return 0;
}

/* ------------------------------------------------------ expected entries */

/* One entry the walk must report, as it must report it. */
struct want {
	char *path;               /* the full path */
	size_t len;               /* its length */
	size_t name_off;          /* where its name starts */
	size_t root_index, depth;
	unsigned char d_type;     /* the target's type for a followed link */
	bool descend;             /* the entry's descend flag */
	bool followed;            /* a symlink the walk follows */
	bool no_stx;              /* its stat fails: stx NULL even with FIDX_WALK_STAT */
	bool any_stx;             /* stx may be NULL or not */
	char *link;               /* its symlink target (with FIDX_WALK_READ_LINKS), or NULL */
	int error;                /* the entry's error, and what failed */
	const char *op;
	int leave_error;          /* the error its leave() carries, and what failed */
	const char *leave_op;
};

/* A list of wanted entries. */
struct wants {
	struct want *w;
	size_t n, cap;
};

/*
 * Adds the entry at the printf-formatted path; descend is set for a
 * directory.  Returns it (valid until the next want_add()).
 */
__attribute__((format(printf, 5, 6)))
static struct want *want_add(struct wants *ws, size_t root_index, size_t depth,
			     unsigned char d_type, const char *fmt, ...)
{
	if (ws->n == ws->cap) {
		ws->cap = ws->cap ? 2 * ws->cap : 256;
		ws->w = realloc(ws->w, ws->cap * sizeof(*ws->w));
		CHECK(ws->w);
	}
	struct want *x = &ws->w[ws->n++];
	*x = (struct want){.root_index = root_index, .depth = depth, .d_type = d_type,
			   .descend = d_type == DT_DIR};
	va_list ap;
	va_start(ap, fmt);
	int len = vasprintf(&x->path, fmt, ap);
	va_end(ap);
	CHECK(len >= 0);
	x->len = (size_t)len;
	const char *slash = memrchr(x->path, '/', x->len);
	x->name_off = slash && slash[1] ? (size_t)(slash + 1 - x->path) : 0;
	return x;
}

/* The entry at the printf-formatted path (which must be there). */
__attribute__((format(printf, 2, 3)))
static struct want *want_at(struct wants *ws, const char *fmt, ...)
{
	char *path;
	va_list ap;
	va_start(ap, fmt);
	CHECK(vasprintf(&path, fmt, ap) >= 0);
	va_end(ap);
	for (size_t i = 0; i < ws->n; i++) {
		if (strcmp(ws->w[i].path, path) == 0) {
			free(path);
			return &ws->w[i];
		}
	}
	check_failed(__LINE__, "test bug: no entry %s wanted", shown(path, strlen(path)));
	return NULL;
}

/* Appends a copy of every entry of src to dst. */
static void wants_copy(struct wants *dst, const struct wants *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct want *s = &src->w[i];
		struct want *x = want_add(dst, s->root_index, s->depth, s->d_type, "%s", s->path);
		char *path = x->path;
		*x = *s;
		x->path = path;
		x->link = s->link ? strdup(s->link) : NULL;
	}
}

/* Frees the list and its entries. */
static void wants_free(struct wants *ws)
{
	for (size_t i = 0; i < ws->n; i++) {
		free(ws->w[i].path);
		free(ws->w[i].link);
	}
	free(ws->w);
	*ws = (struct wants){0};
}

/* The tree's base as root number root_index: a wanted directory at depth 0. */
static struct want *want_root(struct wants *ws, const struct tree *t, size_t root_index)
{
	return want_add(ws, root_index, 0, DT_DIR, "%s", t->base);
}

/*
 * Makes rel (below t's base) as a directory, a file, a symlink to target, a
 * fifo or a socket; with ws, wants it as an entry of root 0 (t's base).
 * Returns the want, or NULL without ws.
 */
static struct want *make(struct tree *t, struct wants *ws, const char *rel, unsigned char type,
			 const char *target)
{
	int r;
	switch (type) {
	case DT_DIR:
		r = mkdirat(t->fd, rel, 0755);
		break;
	case DT_LNK:
		r = symlinkat(target, t->fd, rel);
		break;
	default:
		r = mknodat(t->fd, rel, 0644 | (type == DT_REG ? S_IFREG : type == DT_FIFO ? S_IFIFO
							 : S_IFSOCK), 0);
		break;
	}
	CHECK_MSG(r == 0, "make %s: %s", shown(rel, strlen(rel)), strerror(errno));
	if (!ws)
		return NULL;
	size_t depth = 1;
	for (const char *p = rel; *p; p++)
		depth += *p == '/';
	struct want *x = want_add(ws, 0, depth, type, "%s/%s", t->base, rel);
	if (type == DT_LNK)
		x->link = strdup(target);
	return x;
}

/* ------------------------------------------------------------ recorder */

enum ev_kind { EV_ENTRY, EV_LEAVE, EV_ERROR };

static const char *const kind_names[] = {"entry", "leave", "error"};

/* One callback the walk made, copied. */
struct event {
	enum ev_kind kind;
	char *path;
	size_t path_len, name_off, root_index, depth;
	unsigned char d_type;
	bool has_stx, followed, descend;
	uint16_t stx_mode;
	char *link;                   /* a copy of link_target, or NULL */
	int error;
	const char *error_op;
	enum fidx_walk_action action; /* what entry() answered */
	const char *bad;              /* what the callback found wrong with it, or NULL */
};

struct rec;

/* What a recorder's walker thread gets as its context. */
struct rec_thread {
	struct rec *rec;
	pthread_t self;
};

/* The log of one walk, and how its callbacks answer. */
struct rec {
	pthread_mutex_t lock;
	struct event *ev;              /* every callback, in the order they ran */
	size_t n, cap;
	size_t entries;                /* entry() calls so far */
	unsigned flags;                /* the walk's flags */
	unsigned threads_started, threads_ended;
	/* Behaviour, set before the walk: */
	bool check_at;                 /* stat each entry through (at_fd, at_name) */
	const char *const *skip;       /* entry() answers SKIP for these paths (NULL-terminated) */
	size_t stop_after;             /* entry() answers STOP on this entry (1-based; 0: never) */
	size_t cancel_after;           /* entry() sets the cancel flag on this one (0: never) */
	atomic_bool cancel;
	bool error_stops;              /* error() answers STOP */
	void (*hook)(struct rec *r, const struct fidx_walk_entry *e); /* run by entry() first */
	void *hook_arg;
};

/* Makes r an empty log whose callbacks just continue. */
static void rec_init(struct rec *r)
{
	*r = (struct rec){0};
	pthread_mutex_init(&r->lock, NULL);
	atomic_init(&r->cancel, false);
}

/* Frees r's log. */
static void rec_free(struct rec *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->ev[i].path);
		free(r->ev[i].link);
	}
	free(r->ev);
	pthread_mutex_destroy(&r->lock);
}

/*
 * Says what is wrong with e on its own (NULL if nothing): lengths, offsets,
 * fields that the flags rule out, and with check_at whether (at_fd, at_name)
 * reaches a file of e's type and inode.
 */
static const char *entry_fault(const struct rec *r, const struct fidx_walk_entry *e,
			       enum ev_kind kind)
{
	if (!e->path || strlen(e->path) != e->path_len)
		return "path_len is not strlen(path)";
	if (e->name_off > e->path_len)
		return "name_off beyond the path";
	if (e->depth > 0 && (e->name_off == 0 || e->path[e->name_off - 1] != '/'))
		return "name_off is not just after a '/'";
	if (e->error && !e->error_op)
		return "error without error_op";
	if (!e->error && e->error_op)
		return "error_op without error";
	if (kind == EV_ERROR)
		return e->error ? NULL : "error() called with error 0";
	if (e->stx && !(r->flags & FIDX_WALK_STAT))
		return "stx without FIDX_WALK_STAT";
	if (e->stx && e->d_type != DT_UNKNOWN && IFTODT(e->stx->stx_mode) != e->d_type)
		return "stx_mode's type is not d_type";
	if (e->link_target && !(r->flags & FIDX_WALK_READ_LINKS))
		return "link_target without FIDX_WALK_READ_LINKS";
	if (!e->at_name || (e->at_fd == AT_FDCWD ? strcmp(e->at_name, e->path)
						 : strcmp(e->at_name, e->path + e->name_off)))
		return "at_name is neither the path (at AT_FDCWD) nor the name";
	/* leave() too: past PATH_MAX with the parent's descriptor closed, the walk opens one. */
	if (r->check_at && !e->error) {
		struct stat st;
		if (fstatat(e->at_fd, e->at_name, &st, e->followed ? 0 : AT_SYMLINK_NOFOLLOW) < 0)
			return "(at_fd, at_name) cannot be stat'ed";
		if (e->d_type != DT_UNKNOWN && IFTODT(st.st_mode) != e->d_type)
			return "d_type is not the type of (at_fd, at_name)";
		if (e->stx && e->stx->stx_ino != st.st_ino)
			return "stx_ino is not the inode of (at_fd, at_name)";
	}
	return NULL;
}

/* Appends e to the log.  Lock held.  Returns the copy. */
static struct event *record(struct rec *r, enum ev_kind kind, const struct fidx_walk_entry *e,
			    const char *bad)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 1024;
		r->ev = realloc(r->ev, r->cap * sizeof(*r->ev));
		if (!r->ev)
			abort();
	}
	struct event *ev = &r->ev[r->n++];
	*ev = (struct event){
		.kind = kind, .path_len = e->path_len, .name_off = e->name_off,
		.root_index = e->root_index, .depth = e->depth, .d_type = e->d_type,
		.has_stx = e->stx != NULL, .followed = e->followed, .descend = e->descend,
		.stx_mode = e->stx ? e->stx->stx_mode : 0, .error = e->error,
		.error_op = e->error_op, .bad = bad,
	};
	ev->path = malloc(e->path_len + 1);
	if (!ev->path)
		abort();
	memcpy(ev->path, e->path, e->path_len + 1);
	if (e->link_target && !(ev->link = strdup(e->link_target)))
		abort();
	return ev;
}

/* The recorder of a walker thread's context, noting in *bad a context that is not its own. */
static struct rec *rec_of(void *thread_ctx, const char **bad)
{
	struct rec_thread *rt = thread_ctx;
	if (!pthread_equal(rt->self, pthread_self()))
		*bad = "thread_ctx of another thread";
	return rt->rec;
}

/* entry(): runs the hook, logs e, answers SKIP or STOP as told, sets cancel as told. */
static enum fidx_walk_action rec_entry(const struct fidx_walk_entry *e, void *thread_ctx)
{
	const char *ctx_bad = NULL;
	struct rec *r = rec_of(thread_ctx, &ctx_bad);
	const char *bad = entry_fault(r, e, EV_ENTRY);
	if (r->hook)
		r->hook(r, e);
	pthread_mutex_lock(&r->lock);
	struct event *ev = record(r, EV_ENTRY, e, bad ? bad : ctx_bad);
	size_t nth = ++r->entries;
	enum fidx_walk_action action = FIDX_WALK_CONTINUE;
	for (const char *const *s = r->skip; s && *s; s++)
		if (strcmp(*s, e->path) == 0)
			action = FIDX_WALK_SKIP;
	if (nth == r->stop_after)
		action = FIDX_WALK_STOP;
	if (nth == r->cancel_after)
		atomic_store(&r->cancel, true);
	ev->action = action;
	pthread_mutex_unlock(&r->lock);
	return action;
}

/* leave(): logs e. */
static void rec_leave(const struct fidx_walk_entry *e, void *thread_ctx)
{
	const char *ctx_bad = NULL;
	struct rec *r = rec_of(thread_ctx, &ctx_bad);
	const char *bad = entry_fault(r, e, EV_LEAVE);
	pthread_mutex_lock(&r->lock);
	record(r, EV_LEAVE, e, bad ? bad : ctx_bad);
	pthread_mutex_unlock(&r->lock);
}

/* error(): logs e; answers STOP if told to. */
static enum fidx_walk_action rec_error(const struct fidx_walk_entry *e, void *thread_ctx)
{
	const char *ctx_bad = NULL;
	struct rec *r = rec_of(thread_ctx, &ctx_bad);
	const char *bad = entry_fault(r, e, EV_ERROR);
	pthread_mutex_lock(&r->lock);
	record(r, EV_ERROR, e, bad ? bad : ctx_bad);
	pthread_mutex_unlock(&r->lock);
	return r->error_stops ? FIDX_WALK_STOP : FIDX_WALK_CONTINUE;
}

/* thread_start(): a context of the thread's own, counted. */
static void *rec_thread_start(void *arg)
{
	struct rec *r = arg;
	struct rec_thread *rt = malloc(sizeof(*rt));
	if (!rt)
		abort();
	*rt = (struct rec_thread){.rec = r, .self = pthread_self()};
	pthread_mutex_lock(&r->lock);
	r->threads_started++;
	pthread_mutex_unlock(&r->lock);
	return rt;
}

/* thread_end(): counts the thread if it gave back its own context, and frees it. */
static void rec_thread_end(void *thread_ctx, void *arg)
{
	struct rec_thread *rt = thread_ctx;
	struct rec *r = arg;
	pthread_mutex_lock(&r->lock);
	if (rt->rec == r && pthread_equal(rt->self, pthread_self()))
		r->threads_ended++;
	pthread_mutex_unlock(&r->lock);
	free(rt);
}

/*
 * Walks roots with threads and flags (and opts' exclude list, if any),
 * recording into r.  Checks that each thread got its own context from
 * thread_start and gave it back to thread_end.  Returns what fidx_walk()
 * returned.
 */
static int rec_walk(struct rec *r, const char *const *roots, size_t nroots, unsigned threads,
		    unsigned flags, const char *const *exclude)
{
	struct fidx_walk_opts opts = {
		.threads = threads, .flags = flags, .exclude = exclude,
		.entry = rec_entry, .leave = rec_leave, .error = rec_error,
		.thread_start = rec_thread_start, .thread_end = rec_thread_end, .arg = r,
		.cancel = r->cancel_after ? &r->cancel : NULL,
	};
	r->flags = flags;
	int ret = fidx_walk(roots, nroots, &opts);
	unsigned most = threads ? threads : fidx_walk_default_threads();
	CHECK_MSG(r->threads_started >= 1 && r->threads_started <= most,
		  "%u threads started, asked for %u", r->threads_started, most);
	CHECK_EQ(r->threads_ended, r->threads_started);
	return ret;
}

/* --------------------------------------------------------- log checks */

/* Event or want indices sorted by path, for lookups. */
struct index {
	size_t *ix;
	size_t n;
};

/* The path of the i-th item of an index's array (events or wants). */
static void item_path(const void *base, bool of_wants, size_t i, const char **p, size_t *len)
{
	if (of_wants) {
		const struct want *w = base;
		*p = w[i].path;
		*len = w[i].len;
	} else {
		const struct event *e = base;
		*p = e[i].path;
		*len = e[i].path_len;
	}
}

struct sort_ctx {
	const void *base;
	bool of_wants;
};

/* qsort_r() order of index items: by path, then by position. */
static int cmp_items(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	const char *pa, *pb;
	size_t la, lb;
	item_path(c->base, c->of_wants, *(const size_t *)a, &pa, &la);
	item_path(c->base, c->of_wants, *(const size_t *)b, &pb, &lb);
	int d = cmp_bytes(pa, la, pb, lb);
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	return d ? d : (ia > ib) - (ia < ib);
}

/* Indexes the events of one kind (or, with of_wants, all wants); fails on a path seen twice. */
static struct index index_of(const void *base, size_t n, bool of_wants, enum ev_kind kind)
{
	struct index x = {.ix = malloc((n + 1) * sizeof(size_t))};
	CHECK(x.ix);
	for (size_t i = 0; i < n; i++)
		if (of_wants || ((const struct event *)base)[i].kind == kind)
			x.ix[x.n++] = i;
	struct sort_ctx c = {base, of_wants};
	qsort_r(x.ix, x.n, sizeof(size_t), cmp_items, &c);
	for (size_t i = 1; i < x.n; i++) {
		const char *pa, *pb;
		size_t la, lb;
		item_path(base, of_wants, x.ix[i - 1], &pa, &la);
		item_path(base, of_wants, x.ix[i], &pb, &lb);
		CHECK_MSG(cmp_bytes(pa, la, pb, lb) != 0, "%s %s twice: %s",
			  of_wants ? "test bug: wanted" : kind_names[kind],
			  of_wants ? "" : "reported", shown(pb, lb));
	}
	return x;
}

#define NONE SIZE_MAX

/* The item of x with path p (len bytes), or NONE. */
static size_t find(const struct index *x, const void *base, bool of_wants, const char *p,
		   size_t len)
{
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *q;
		size_t qlen;
		item_path(base, of_wants, x->ix[mid], &q, &qlen);
		int c = cmp_bytes(q, qlen, p, len);
		if (c == 0)
			return x->ix[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NONE;
}

/*
 * Checks r's log against ws.  Every wanted entry was reported once (with
 * partial, for a stopped walk: at most once, and every entry of a directory
 * left without error), as wanted; nothing else was; every directory entered
 * (descend, and entry() did not SKIP it) was left once, after its own entry,
 * after every entry inside it and after its subdirectories' leaves; every
 * entry came after its directory's entry; every error reached error() first.
 * With partial a leave may carry ECANCELED "stopped".
 */
static void check_log(struct rec *r, struct wants *ws, bool partial)
{
	const struct event *ev = r->ev;
	unsigned flags = r->flags;
	for (size_t i = 0; i < r->n; i++)
		CHECK_MSG(!ev[i].bad, "%s(%s): %s", kind_names[ev[i].kind],
			  shown(ev[i].path, ev[i].path_len), ev[i].bad);
	struct index E = index_of(ev, r->n, false, EV_ENTRY);
	struct index L = index_of(ev, r->n, false, EV_LEAVE);
	struct index W = index_of(ws->w, ws->n, true, 0);

	for (size_t k = 0; k < E.n; k++) {
		size_t i = E.ix[k];
		const struct event *e = &ev[i];
		const char *p = shown(e->path, e->path_len);
		size_t wi = find(&W, ws->w, true, e->path, e->path_len);
		CHECK_MSG(wi != NONE, "unexpected entry %s", p);
		const struct want *x = &ws->w[wi];
		CHECK_MSG(e->d_type == x->d_type, "%s: d_type %d, want %d", p, e->d_type,
			  x->d_type);
		CHECK_MSG(e->name_off == x->name_off, "%s: name_off %zu, want %zu", p, e->name_off,
			  x->name_off);
		CHECK_MSG(e->depth == x->depth, "%s: depth %zu, want %zu", p, e->depth, x->depth);
		CHECK_MSG(e->root_index == x->root_index, "%s: root_index %zu, want %zu", p,
			  e->root_index, x->root_index);
		CHECK_MSG(e->descend == x->descend, "%s: descend %d", p, e->descend);
		CHECK_MSG(e->followed == x->followed, "%s: followed %d", p, e->followed);
		CHECK_MSG(e->error == x->error && same_str(e->error_op, x->op),
			  "%s: error %d (%s), want %d (%s)", p, e->error,
			  e->error_op ? e->error_op : "-", x->error, x->op ? x->op : "-");
		bool stx = (flags & FIDX_WALK_STAT) && !x->no_stx;
		CHECK_MSG(x->any_stx || e->has_stx == stx, "%s: stx %s", p,
			  e->has_stx ? "set" : "NULL");
		const char *link = flags & FIDX_WALK_READ_LINKS ? x->link : NULL;
		CHECK_MSG(same_str(e->link, link), "%s: link_target '%s'", p,
			  e->link ? e->link : "(null)");
		bool entered = e->descend && e->action != FIDX_WALK_SKIP;
		size_t l = find(&L, ev, false, e->path, e->path_len);
		CHECK_MSG(entered == (l != NONE), "%s: %s", p,
			  entered ? "entered but never left" : "left but not entered");
		CHECK_MSG(l == NONE || i < l, "%s: left before its entry", p);
		if (e->depth == 0)
			continue;
		size_t pe = find(&E, ev, false, e->path, e->name_off - 1);
		CHECK_MSG(pe != NONE && pe < i, "%s: reported before its directory", p);
		CHECK_MSG(ev[pe].descend && ev[pe].action != FIDX_WALK_SKIP,
			  "%s: its directory was not to be entered", p);
		size_t pl = find(&L, ev, false, e->path, e->name_off - 1);
		CHECK_MSG(pl != NONE && i < pl, "%s: reported after its directory was left", p);
	}

	for (size_t k = 0; k < L.n; k++) {
		size_t l = L.ix[k];
		const struct event *e = &ev[l];
		const char *p = shown(e->path, e->path_len);
		size_t i = find(&E, ev, false, e->path, e->path_len);
		CHECK_MSG(i != NONE, "%s: left, never reported", p);
		const struct event *en = &ev[i];
		const struct want *x = &ws->w[find(&W, ws->w, true, e->path, e->path_len)];
		CHECK_MSG(e->d_type == DT_DIR && e->descend && e->depth == en->depth &&
				  e->root_index == en->root_index && e->followed == en->followed &&
				  e->name_off == en->name_off && same_str(e->link, en->link),
			  "%s: leave() differs from entry()", p);
		CHECK_MSG(e->has_stx == !!(flags & FIDX_WALK_STAT), "%s: leave() stx", p);
		if (partial && e->error == ECANCELED)
			CHECK_MSG(same_str(e->error_op, "stopped"), "%s: ECANCELED by %s", p,
				  e->error_op);
		else
			CHECK_MSG(e->error == x->leave_error && same_str(e->error_op, x->leave_op),
				  "%s: leave() error %d (%s), want %d (%s)", p, e->error,
				  e->error_op ? e->error_op : "-", x->leave_error,
				  x->leave_op ? x->leave_op : "-");
		if (e->depth == 0)
			continue;
		size_t pl = find(&L, ev, false, e->path, e->name_off - 1);
		CHECK_MSG(pl != NONE && l < pl, "%s: left after its directory", p);
	}

	for (size_t wi = 0; wi < ws->n; wi++) {
		const struct want *x = &ws->w[wi];
		if (find(&E, ev, false, x->path, x->len) != NONE)
			continue;
		const char *p = shown(x->path, x->len);
		CHECK_MSG(partial, "never reported: %s", p);
		if (x->depth == 0)
			continue;
		size_t pl = find(&L, ev, false, x->path, x->name_off - 1);
		CHECK_MSG(pl == NONE || ev[pl].error, "%s: missing, yet its directory was finished",
			  p);
	}

	/* Each error carried by an entry or leave went to error() first, once. */
	bool *used = calloc(r->n + 1, sizeof(bool));
	CHECK(used);
	for (size_t c = 0; c < r->n; c++) {
		if (ev[c].kind == EV_ERROR || !ev[c].error || ev[c].error == ECANCELED)
			continue;
		size_t j = 0;
		for (; j < c; j++)
			if (ev[j].kind == EV_ERROR && !used[j] && ev[j].error == ev[c].error &&
			    same_str(ev[j].error_op, ev[c].error_op) &&
			    cmp_bytes(ev[j].path, ev[j].path_len, ev[c].path, ev[c].path_len) == 0)
				break;
		CHECK_MSG(j < c, "%s(%s) carries error %d (%s) never passed to error() before",
			  kind_names[ev[c].kind], shown(ev[c].path, ev[c].path_len), ev[c].error,
			  ev[c].error_op);
		used[j] = true;
	}
	for (size_t j = 0; j < r->n; j++)
		CHECK_MSG(ev[j].kind != EV_ERROR || used[j], "error(%s) %d (%s) carried by nothing",
			  shown(ev[j].path, ev[j].path_len), ev[j].error, ev[j].error_op);
	free(used);
	free(E.ix);
	free(L.ix);
	free(W.ix);
}

/* Walks one root into a fresh log and checks it completely.  Returns fidx_walk()'s value. */
static int walk_and_check(const char *root, struct wants *ws, unsigned threads, unsigned flags,
			  const char *const *exclude)
{
	struct rec r;
	rec_init(&r);
	r.check_at = true;
	const char *roots[] = {root};
	int ret = rec_walk(&r, roots, 1, threads, flags, exclude);
	check_log(&r, ws, false);
	rec_free(&r);
	return ret;
}

/* Returns how many events of a kind r logged for path (and with error err, if err >= 0). */
static size_t count_events(const struct rec *r, enum ev_kind kind, const char *path, int err)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->ev[i].kind == kind && strcmp(r->ev[i].path, path) == 0 &&
		     (err < 0 || r->ev[i].error == err);
	return n;
}

/* ------------------------------------------------------------- tests */

/*
 * A tree of every file type: nested and empty directories, files, a fifo, a
 * socket, symlinks to a file, to a directory and to nothing, and a wider part.
 */
static void make_mixed_tree(struct tree *t, struct wants *ws)
{
	want_root(ws, t, 0);
	make(t, ws, "a", DT_DIR, NULL);
	make(t, ws, "a/f1", DT_REG, NULL);
	make(t, ws, "a/f2", DT_REG, NULL);
	make(t, ws, "a/b", DT_DIR, NULL);
	make(t, ws, "a/b/c", DT_DIR, NULL);
	make(t, ws, "a/b/c/d", DT_DIR, NULL);
	make(t, ws, "a/b/c/d/deep-file", DT_REG, NULL);
	make(t, ws, "empty", DT_DIR, NULL);
	make(t, ws, "fifo", DT_FIFO, NULL);
	make(t, ws, "sock", DT_SOCK, NULL);
	make(t, ws, "file", DT_REG, NULL);
	make(t, ws, "lnk-file", DT_LNK, "file");
	make(t, ws, "lnk-dir", DT_LNK, "a");
	make(t, ws, "dangling", DT_LNK, "does/not/exist");
	make(t, ws, "many", DT_DIR, NULL);
	char rel[64];
	for (int i = 0; i < 300; i++) {
		snprintf(rel, sizeof(rel), "many/m%03d", i);
		make(t, ws, rel, DT_REG, NULL);
	}
	for (int d = 0; d < 30; d++) {
		snprintf(rel, sizeof(rel), "many/s%02d", d);
		make(t, ws, rel, DT_DIR, NULL);
		for (int f = 0; f < 3; f++) {
			snprintf(rel, sizeof(rel), "many/s%02d/%c", d, 'x' + f);
			make(t, ws, rel, f == 2 ? DT_FIFO : DT_REG, NULL);
		}
	}
}

/* Every entry once with each thread count, names only, with stat, with link targets. */
static void test_every_entry_once(void **state)
{
	(void)state;
	struct tree t;
	struct wants ws = {0};
	tree_new(&t, tmp_parent());
	make_mixed_tree(&t, &ws);
	const unsigned flag_sets[] = {0, FIDX_WALK_STAT, FIDX_WALK_STAT | FIDX_WALK_READ_LINKS,
				      FIDX_WALK_READ_LINKS};
	const unsigned thread_counts[] = {1, 2, 8, 0};
	for (size_t f = 0; f < sizeof(flag_sets) / sizeof(*flag_sets); f++) {
		for (size_t n = 0; n < sizeof(thread_counts) / sizeof(*thread_counts); n++) {
			unsigned threads = thread_counts[n];
			CHECK_EQ(walk_and_check(t.base, &ws, threads, flag_sets[f], NULL), 0);
		}
	}
	wants_free(&ws);
	tree_free(&t);
}

/* No entry callback: EINVAL, and nothing is walked. */
static void test_entry_callback_required(void **state)
{
	(void)state;
	struct fidx_walk_opts opts = {.threads = 2};
	const char *roots[] = {"/"};
	errno = 0;
	CHECK_EQ(fidx_walk(roots, 1, &opts), -1);
	CHECK_EQ(errno, EINVAL);
	/* The default thread count: four per online CPU, at most the documented cap. */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned want = cpus > 0 ? 4 * (unsigned)cpus : 4;
	CHECK_EQ(fidx_walk_default_threads(),
		 want < FIDX_WALK_MAX_DEFAULT_THREADS ? want : FIDX_WALK_MAX_DEFAULT_THREADS);
}

/* SKIP on a directory: not entered, not left, nothing inside it reported; also on a root. */
static void test_skip(void **state)
{
	(void)state;
	struct tree t;
	struct wants ws = {0};
	tree_new(&t, tmp_parent());
	want_root(&ws, &t, 0);
	make(&t, &ws, "skipme", DT_DIR, NULL);
	make(&t, NULL, "skipme/hidden", DT_REG, NULL);
	make(&t, NULL, "skipme/sub", DT_DIR, NULL);
	make(&t, NULL, "skipme/sub/deeper", DT_REG, NULL);
	make(&t, &ws, "keep", DT_DIR, NULL);
	make(&t, &ws, "keep/k", DT_REG, NULL);
	make(&t, &ws, "keep/inner", DT_DIR, NULL);
	make(&t, NULL, "keep/inner/gone", DT_REG, NULL);
	make(&t, &ws, "keep/other", DT_DIR, NULL);
	make(&t, &ws, "keep/other/o", DT_REG, NULL);
	make(&t, &ws, "file", DT_REG, NULL);
	char *skip_dir, *skip_inner, *skip_file;
	CHECK(asprintf(&skip_dir, "%s/skipme", t.base) >= 0);
	CHECK(asprintf(&skip_inner, "%s/keep/inner", t.base) >= 0);
	CHECK(asprintf(&skip_file, "%s/file", t.base) >= 0); /* SKIP on a file changes nothing */
	const char *skip[] = {skip_dir, skip_inner, skip_file, NULL};
	const char *roots[] = {t.base};
	for (unsigned threads = 1; threads <= 4; threads += 3) {
		for (unsigned flags = 0; flags <= FIDX_WALK_STAT; flags += FIDX_WALK_STAT) {
			struct rec r;
			rec_init(&r);
			r.check_at = true;
			r.skip = skip;
			CHECK_EQ(rec_walk(&r, roots, 1, threads, flags, NULL), 0);
			check_log(&r, &ws, false);
			CHECK_EQ(count_events(&r, EV_LEAVE, skip_dir, -1), 0);
			rec_free(&r);
		}
		/* SKIP on the root: it alone is reported, and not left. */
		struct rec r;
		rec_init(&r);
		const char *skip_root[] = {t.base, NULL};
		r.skip = skip_root;
		CHECK_EQ(rec_walk(&r, roots, 1, threads, 0, NULL), 0);
		CHECK_EQ(r.n, 1);
		CHECK_EQ(r.ev[0].kind, EV_ENTRY);
		CHECK(r.ev[0].descend && strcmp(r.ev[0].path, t.base) == 0);
		rec_free(&r);
	}
	free(skip_dir);
	free(skip_inner);
	free(skip_file);
	wants_free(&ws);
	tree_free(&t);
}

/* A tree of 10 directories of 5 subdirectories of 15 files and 4 files: 1,011 entries. */
static void make_stop_tree(struct tree *t, struct wants *ws)
{
	want_root(ws, t, 0);
	char rel[64];
	for (int d = 0; d < 10; d++) {
		snprintf(rel, sizeof(rel), "d%d", d);
		make(t, ws, rel, DT_DIR, NULL);
		for (int s = 0; s < 5; s++) {
			snprintf(rel, sizeof(rel), "d%d/s%d", d, s);
			make(t, ws, rel, DT_DIR, NULL);
			for (int f = 0; f < 15; f++) {
				snprintf(rel, sizeof(rel), "d%d/s%d/f%02d", d, s, f);
				make(t, ws, rel, DT_REG, NULL);
			}
		}
		for (int f = 0; f < 4; f++) {
			snprintf(rel, sizeof(rel), "d%d/g%d", d, f);
			make(t, ws, rel, DT_REG, NULL);
		}
	}
}

/*
 * STOP from entry() at various points, and the cancel flag: fidx_walk()
 * returns 1, nothing is reported twice, and every directory entered is left
 * exactly once, complete or "stopped".
 */
static void test_stop_and_cancel(void **state)
{
	(void)state;
	struct tree t;
	struct wants ws = {0};
	tree_new(&t, tmp_parent());
	make_stop_tree(&t, &ws);
	const char *roots[] = {t.base};
	const size_t points[] = {1, 2, 7, 60, 400};
	for (unsigned threads = 1; threads <= 4; threads += 3) {
		for (size_t p = 0; p < sizeof(points) / sizeof(*points); p++) {
			for (int by_cancel = 0; by_cancel < 2; by_cancel++) {
				struct rec r;
				rec_init(&r);
				r.check_at = true;
				if (by_cancel)
					r.cancel_after = points[p];
				else
					r.stop_after = points[p];
				CHECK_EQ(rec_walk(&r, roots, 1, threads, FIDX_WALK_STAT, NULL), 1);
				check_log(&r, &ws, true);
				CHECK_MSG(r.entries >= points[p] && r.entries < ws.n,
					  "%zu entries reported, stopped at %zu of %zu", r.entries,
					  points[p], ws.n);
				rec_free(&r);
			}
		}
		/* A cancel flag already set: the walk returns 1 and leaves what it entered. */
		struct rec r;
		rec_init(&r);
		r.cancel_after = SIZE_MAX;
		atomic_store(&r.cancel, true);
		CHECK_EQ(rec_walk(&r, roots, 1, threads, 0, NULL), 1);
		check_log(&r, &ws, true);
		rec_free(&r);
	}
	wants_free(&ws);
	tree_free(&t);
}

/* Arguments of the unreadable-directory walks run as another user. */
struct unreadable_args {
	struct tree *t;
	struct wants *names_only;  /* what a walk without stat reports */
	struct wants *with_stat;   /* ... and with FIDX_WALK_STAT */
};

/* Drops root (if root) to nobody, then walks the tree with an unreadable directory. */
static void unreadable_walks(void *arg)
{
	struct unreadable_args *a = arg;
	if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)) {
		fprintf(stderr, "cannot become nobody (%s): unreadable directories not tested\n",
			strerror(errno));
		exit(SKIP_STATUS);
	}
	if (access(a->t->base, R_OK | X_OK) < 0) {
		fprintf(stderr, "%s is out of reach for uid %d: unreadable directories not "
			"tested\n", a->t->base, (int)geteuid());
		exit(SKIP_STATUS);
	}
	const char *roots[] = {a->t->base};
	for (unsigned threads = 1; threads <= 3; threads += 2) {
		for (unsigned flags = 0; flags <= FIDX_WALK_STAT; flags += FIDX_WALK_STAT) {
			struct wants *ws = flags ? a->with_stat : a->names_only;
			struct rec r;
			rec_init(&r);
			CHECK_EQ(rec_walk(&r, roots, 1, threads, flags, NULL), 0);
			check_log(&r, ws, false);
			rec_free(&r);
			/* error() says stop: the walk returns 1, and leaves what it entered. */
			rec_init(&r);
			r.error_stops = true;
			CHECK_EQ(rec_walk(&r, roots, 1, threads, flags, NULL), 1);
			check_log(&r, ws, true);
			size_t errors = 0;
			for (size_t i = 0; i < r.n; i++)
				errors += r.ev[i].kind == EV_ERROR;
			CHECK(errors >= 1);
			rec_free(&r);
		}
	}
}

/*
 * A directory without permissions: error() gets "open dir" EACCES, its
 * leave() carries it, and the walk goes on.  A directory readable but not
 * searchable: its names are listed, their stat fails EACCES.  Run in a
 * child, as nobody when run as root (root reads everything).
 */
static void test_unreadable_directory(void **state)
{
	(void)state;
	struct tree t;
	struct wants ws = {0}, ws_stat = {0};
	tree_new(&t, tmp_parent());
	want_root(&ws, &t, 0);
	make(&t, &ws, "ok", DT_DIR, NULL);
	make(&t, &ws, "ok/f", DT_REG, NULL);
	struct want *x = make(&t, &ws, "locked", DT_DIR, NULL);
	x->leave_error = EACCES;
	x->leave_op = "open dir";
	make(&t, NULL, "locked/inner-file", DT_REG, NULL);
	make(&t, NULL, "locked/inner-dir", DT_DIR, NULL);
	make(&t, NULL, "locked/inner-dir/x", DT_REG, NULL);
	make(&t, &ws, "nosearch", DT_DIR, NULL);
	make(&t, &ws, "nosearch/f", DT_REG, NULL);
	x = make(&t, &ws, "nosearch/sub", DT_DIR, NULL);
	x->leave_error = EACCES;
	x->leave_op = "open dir";
	make(&t, NULL, "nosearch/sub/g", DT_REG, NULL);
	make(&t, &ws, "after", DT_DIR, NULL);
	make(&t, &ws, "after/f", DT_REG, NULL);
	CHECK(fchmodat(t.fd, "locked", 0, 0) == 0);
	CHECK(fchmodat(t.fd, "nosearch", 0444, 0) == 0);

	/* With stat, the entries of nosearch fail their stat instead. */
	wants_copy(&ws_stat, &ws);
	const char *names[] = {"f", "sub"};
	for (int i = 0; i < 2; i++) {
		x = want_at(&ws_stat, "%s/nosearch/%s", t.base, names[i]);
		*x = (struct want){.path = x->path, .len = x->len, .name_off = x->name_off,
				   .depth = 2, .d_type = i ? DT_DIR : DT_REG, .no_stx = true,
				   .error = EACCES, .op = "stat"};
	}
	struct unreadable_args a = {&t, &ws, &ws_stat};
	int status = run_in_child(unreadable_walks, &a);
	CHECK(fchmodat(t.fd, "locked", 0755, 0) == 0);
	CHECK(fchmodat(t.fd, "nosearch", 0755, 0) == 0);
	wants_free(&ws);
	wants_free(&ws_stat);
	tree_free(&t);
	if (status == SKIP_STATUS)
		skip();
	CHECK_EQ(status, 0);
}

/* The tree of the vanishing test, and what its hook has done. */
struct vanish {
	struct tree *t;
	struct tree *out;       /* outside the walk: where "moved" goes; holds secret/ */
	pthread_mutex_t lock;
	char *race_first;       /* the entry of race/ that removed its siblings */
};

/* Returns true if e is the entry rel (below the tree's base). */
static bool is_entry(const struct tree *t, const struct fidx_walk_entry *e, const char *rel)
{
	size_t blen = strlen(t->base);
	return e->path_len == blen + 1 + strlen(rel) && memcmp(e->path, t->base, blen) == 0 &&
	       strcmp(e->path + blen + 1, rel) == 0;
}

/*
 * entry() hook: as each victim directory is reported (listed, not yet
 * opened) it is removed, moved out, or replaced by a file or by a symlink to
 * a directory outside; the first entry of race/ removes its siblings, which
 * the same listing is about to report.
 */
static void vanish_hook(struct rec *r, const struct fidx_walk_entry *e)
{
	struct vanish *v = r->hook_arg;
	int fd = v->t->fd;
	if (is_entry(v->t, e, "gone")) {
		HOOK_CHECK(unlinkat(fd, "gone", AT_REMOVEDIR) == 0);
	} else if (is_entry(v->t, e, "moved")) {
		HOOK_CHECK(renameat(fd, "moved", v->out->fd, "moved") == 0);
	} else if (is_entry(v->t, e, "swapped")) {
		HOOK_CHECK(unlinkat(fd, "swapped", AT_REMOVEDIR) == 0);
		HOOK_CHECK(mknodat(fd, "swapped", S_IFREG | 0644, 0) == 0);
	} else if (is_entry(v->t, e, "linked")) {
		char *target;
		HOOK_CHECK(asprintf(&target, "%s/secret", v->out->base) >= 0);
		HOOK_CHECK(unlinkat(fd, "linked", AT_REMOVEDIR) == 0);
		HOOK_CHECK(symlinkat(target, fd, "linked") == 0);
		free(target);
	} else if (e->depth == 2 && e->name_off >= 5 &&
		   memcmp(e->path + e->name_off - 5, "race/", 5) == 0) {
		pthread_mutex_lock(&v->lock);
		if (!v->race_first) {
			v->race_first = strdup(e->path + e->name_off);
			for (int i = 0; i < 10; i++) {
				char name[8];
				snprintf(name, sizeof(name), "r%d", i);
				if (strcmp(name, v->race_first) != 0)
					HOOK_CHECK(unlinkat(e->at_fd, name, 0) == 0);
			}
		}
		pthread_mutex_unlock(&v->lock);
	}
}

/*
 * Directories that vanish, move away or turn into a file or a symlink
 * between their parent's listing and their own opening, and files removed
 * before their stat: each is reported once, with its error passed to
 * error() ("open dir" ENOENT, ENOTDIR; "stat" ENOENT), nothing is followed,
 * and nothing else is lost.
 */
static void test_vanish_mid_walk(void **state)
{
	(void)state;
	for (unsigned threads = 1; threads <= 4; threads += 3) {
		for (unsigned flags = 0; flags <= FIDX_WALK_STAT; flags += FIDX_WALK_STAT) {
			struct tree t, out;
			struct wants ws = {0};
			tree_new(&t, tmp_parent());
			tree_new(&out, tmp_parent());
			make(&out, NULL, "secret", DT_DIR, NULL);
			make(&out, NULL, "secret/never-reported", DT_REG, NULL);
			want_root(&ws, &t, 0);
			const char *victims[] = {"gone", "moved", "swapped", "linked"};
			const int errs[] = {ENOENT, ENOENT, ENOTDIR, ENOTDIR};
			for (int i = 0; i < 4; i++) {
				struct want *x = make(&t, &ws, victims[i], DT_DIR, NULL);
				x->leave_error = errs[i];
				x->leave_op = "open dir";
			}
			make(&t, NULL, "moved/a", DT_REG, NULL);
			make(&t, NULL, "moved/sub", DT_DIR, NULL);
			make(&t, NULL, "moved/sub/c", DT_REG, NULL);
			make(&t, &ws, "stay", DT_DIR, NULL);
			make(&t, &ws, "stay/x", DT_REG, NULL);
			make(&t, &ws, "stay/y", DT_DIR, NULL);
			make(&t, &ws, "stay/y/z", DT_REG, NULL);
			make(&t, &ws, "race", DT_DIR, NULL);
			for (int i = 0; i < 10; i++) {
				char rel[16];
				snprintf(rel, sizeof(rel), "race/r%d", i);
				make(&t, &ws, rel, DT_REG, NULL);
			}
			struct vanish v = {.t = &t, .out = &out};
			pthread_mutex_init(&v.lock, NULL);
			struct rec r;
			rec_init(&r);
			r.hook = vanish_hook;
			r.hook_arg = &v;
			const char *roots[] = {t.base};
			CHECK_EQ(rec_walk(&r, roots, 1, threads, flags, NULL), 0);
			CHECK(v.race_first);
			if (flags & FIDX_WALK_STAT) {
				/* The siblings the first removed were listed, then failed stat. */
				for (int i = 0; i < 10; i++) {
					struct want *x = want_at(&ws, "%s/race/r%d", t.base, i);
					if (strcmp(x->path + x->name_off, v.race_first) == 0)
						continue;
					x->error = ENOENT;
					x->op = "stat";
					x->no_stx = true;
				}
			}
			check_log(&r, &ws, false);
			rec_free(&r);
			free(v.race_first);
			pthread_mutex_destroy(&v.lock);
			wants_free(&ws);
			tree_free(&t);
			tree_free(&out);
		}
	}
}

/*
 * The symlink tree: links to a file, to a directory inside, to a directory
 * outside (which links back to the root and to itself), to ancestors, to
 * nothing, to each other in a loop, with non-UTF-8 and PATH_MAX - 1 byte
 * targets.  ws gets what a walk without following reports.
 */
static void make_link_tree(struct tree *t, struct tree *out, struct wants *ws, char **long_target)
{
	make(out, NULL, "o1", DT_REG, NULL);
	make(out, NULL, "osub", DT_DIR, NULL);
	make(out, NULL, "osub/o2", DT_REG, NULL);
	make(out, NULL, "back", DT_LNK, t->base);
	make(out, NULL, "self", DT_LNK, ".");
	want_root(ws, t, 0);
	make(t, ws, "dir", DT_DIR, NULL);
	make(t, ws, "dir/f", DT_REG, NULL);
	make(t, ws, "dir/inner", DT_DIR, NULL);
	make(t, ws, "dir/inner/g", DT_REG, NULL);
	make(t, ws, "up", DT_DIR, NULL);
	make(t, ws, "up/loop", DT_LNK, "..");
	make(t, ws, "a", DT_DIR, NULL);
	make(t, ws, "a/b", DT_DIR, NULL);
	make(t, ws, "a/b/up2", DT_LNK, "../..");
	make(t, ws, "a/b/selfl", DT_LNK, ".");
	make(t, ws, "lfile", DT_LNK, "dir/f");
	make(t, ws, "ldir", DT_LNK, "dir");
	make(t, ws, "out", DT_LNK, out->base);
	make(t, ws, "dangling", DT_LNK, "does-not-exist");
	make(t, ws, "loop1", DT_LNK, "loop2");
	make(t, ws, "loop2", DT_LNK, "loop1");
	make(t, ws, "weird", DT_LNK, "tgt\n\t\\\xff\xc3\x28 x");
	*long_target = malloc(PATH_MAX);
	CHECK(*long_target);
	for (size_t i = 0; i < PATH_MAX - 1; i++)
		(*long_target)[i] = i % 2 ? '/' : 'x';  /* "x/x/.../x": dangling */
	(*long_target)[PATH_MAX - 1] = '\0';
	make(t, ws, "long", DT_LNK, *long_target);
}

/* Turns the link at rel into one the walk follows to a target of type d_type. */
static struct want *followed(struct wants *ws, const struct tree *t, const char *rel,
			     unsigned char d_type)
{
	struct want *x = want_at(ws, "%s/%s", t->base, rel);
	x->followed = true;
	x->d_type = d_type;
	x->descend = d_type == DT_DIR;
	return x;
}

/* Makes the link at rel a followed link to an ancestor: ELOOP "follow", not entered. */
static void followed_loop(struct wants *ws, const struct tree *t, const char *rel)
{
	struct want *x = followed(ws, t, rel, DT_DIR);
	x->descend = false;
	x->error = ELOOP;
	x->op = "follow";
}

/*
 * Symlinks: by default reported as links, never entered; FIDX_WALK_READ_LINKS
 * gives their targets byte-exact; FIDX_WALK_FOLLOW enters a link to a
 * directory inside the root under the link's path and reports a link to
 * one outside as itself with EXDEV "follow" (with FIDX_WALK_FOLLOW_ANY it
 * enters that one too), reports a link to an ancestor as ELOOP "follow"
 * without entering it, a dangling link as itself, a link loop as ELOOP.
 */
static void test_symlinks(void **state)
{
	(void)state;
	struct tree t, out;
	struct wants plain = {0}, follow = {0}, inside = {0};
	char *long_target;
	tree_new(&t, tmp_parent());
	tree_new(&out, tmp_parent());
	make_link_tree(&t, &out, &plain, &long_target);

	wants_copy(&follow, &plain);
	followed(&follow, &t, "lfile", DT_REG);
	followed(&follow, &t, "ldir", DT_DIR);
	want_add(&follow, 0, 2, DT_REG, "%s/ldir/f", t.base);
	want_add(&follow, 0, 2, DT_DIR, "%s/ldir/inner", t.base);
	want_add(&follow, 0, 3, DT_REG, "%s/ldir/inner/g", t.base);
	/* FIDX_WALK_FOLLOW alone: the same, but the link to the tree outside is itself. */
	wants_copy(&inside, &follow);
	struct want *o = want_at(&inside, "%s/out", t.base);
	o->error = EXDEV;
	o->op = "follow";
	followed_loop(&inside, &t, "up/loop");
	followed_loop(&inside, &t, "a/b/up2");
	followed_loop(&inside, &t, "a/b/selfl");
	for (int i = 1; i <= 2; i++) {
		struct want *x = want_at(&inside, "%s/loop%d", t.base, i);
		x->error = ELOOP;
		x->op = "stat";
		x->any_stx = true;
	}
	followed(&follow, &t, "out", DT_DIR);
	want_add(&follow, 0, 2, DT_REG, "%s/out/o1", t.base);
	want_add(&follow, 0, 2, DT_DIR, "%s/out/osub", t.base);
	want_add(&follow, 0, 3, DT_REG, "%s/out/osub/o2", t.base);
	want_add(&follow, 0, 2, DT_LNK, "%s/out/back", t.base)->link = strdup(t.base);
	want_add(&follow, 0, 2, DT_LNK, "%s/out/self", t.base)->link = strdup(".");
	followed_loop(&follow, &t, "out/back");
	followed_loop(&follow, &t, "out/self");
	followed_loop(&follow, &t, "up/loop");
	followed_loop(&follow, &t, "a/b/up2");
	followed_loop(&follow, &t, "a/b/selfl");
	for (int i = 1; i <= 2; i++) {
		struct want *x = want_at(&follow, "%s/loop%d", t.base, i);
		x->error = ELOOP;
		x->op = "stat";
		x->any_stx = true; /* the link's own stat, or none */
	}

	const unsigned plain_flags[] = {0, FIDX_WALK_STAT, FIDX_WALK_READ_LINKS,
					FIDX_WALK_STAT | FIDX_WALK_READ_LINKS};
	for (unsigned threads = 1; threads <= 4; threads += 3) {
		for (size_t f = 0; f < 4; f++) {
			CHECK_EQ(walk_and_check(t.base, &plain, threads, plain_flags[f], NULL), 0);
			CHECK_EQ(walk_and_check(t.base, &inside, threads,
						plain_flags[f] | FIDX_WALK_FOLLOW, NULL), 0);
			CHECK_EQ(walk_and_check(t.base, &follow, threads, plain_flags[f] |
						FIDX_WALK_FOLLOW | FIDX_WALK_FOLLOW_ANY, NULL), 0);
		}
	}
	free(long_target);
	wants_free(&plain);
	wants_free(&follow);
	wants_free(&inside);
	tree_free(&t);
	tree_free(&out);
}

/*
 * In a new mount namespace, mounts a tmpfs on mnt in arg (a tree) and fills
 * it, then walks with and without FIDX_WALK_XDEV; also from the mount point
 * as a second root.
 */
static void xdev_walks(void *arg)
{
	struct tree *t = arg;
	char *mnt;
	CHECK(asprintf(&mnt, "%s/mnt", t->base) >= 0);
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", mnt, "tmpfs", 0, "size=1m") < 0) {
		fprintf(stderr, "cannot mount a tmpfs (%s): one filesystem not tested\n",
			strerror(errno));
		exit(SKIP_STATUS);
	}
	struct tree m = {.base = mnt, .fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
	CHECK(m.fd >= 0);
	struct wants across = {0}, xdev = {0}, two_roots = {0};
	want_root(&across, t, 0);
	make(t, &across, "a", DT_DIR, NULL);
	make(t, &across, "a/f", DT_REG, NULL);
	make(t, &across, "z", DT_REG, NULL);
	want_add(&across, 0, 1, DT_DIR, "%s", mnt);
	wants_copy(&xdev, &across);
	want_at(&xdev, "%s", mnt)->descend = false;
	/* The mount point as a second root, named another way so that its paths differ. */
	char *alias;
	CHECK(asprintf(&alias, "%s/a/../mnt", t->base) >= 0);
	wants_copy(&two_roots, &xdev);
	want_add(&two_roots, 1, 0, DT_DIR, "%s", alias);
	const char *in_mnt[] = {"m1", "msub", "msub/m2"};
	const unsigned char types[] = {DT_REG, DT_DIR, DT_REG};
	for (int i = 0; i < 3; i++) {
		make(&m, NULL, in_mnt[i], types[i], NULL);
		size_t depth = i == 2 ? 2 : 1;
		want_add(&across, 0, depth + 1, types[i], "%s/%s", mnt, in_mnt[i]);
		want_add(&two_roots, 1, depth, types[i], "%s/%s", alias, in_mnt[i]);
	}
	for (unsigned threads = 1; threads <= 2; threads++) {
		for (unsigned flags = 0; flags <= FIDX_WALK_STAT; flags += FIDX_WALK_STAT) {
			CHECK_EQ(walk_and_check(t->base, &across, threads, flags, NULL), 0);
			CHECK_EQ(walk_and_check(t->base, &xdev, threads, flags | FIDX_WALK_XDEV,
						NULL), 0);
			struct rec r;
			rec_init(&r);
			r.check_at = true;
			const char *roots[] = {t->base, alias};
			CHECK_EQ(rec_walk(&r, roots, 2, threads, flags | FIDX_WALK_XDEV, NULL), 0);
			check_log(&r, &two_roots, false);
			rec_free(&r);
		}
	}
	close(m.fd);
	wants_free(&across);
	wants_free(&xdev);
	wants_free(&two_roots);
	free(alias);
	free(mnt);
}

/*
 * FIDX_WALK_XDEV: a mount point below the root is reported, not entered;
 * without it, what is mounted there is walked.  Needs root and mount(2),
 * else skipped.
 */
static void test_one_filesystem(void **state)
{
	(void)state;
	struct tree t;
	tree_new(&t, tmp_parent());
	make(&t, NULL, "mnt", DT_DIR, NULL);
	int status = run_in_child(xdev_walks, &t);
	tree_free(&t);
	if (status == SKIP_STATUS)
		skip();
	CHECK_EQ(status, 0);
}

/*
 * Exclude globs: by name at any depth, by path below the root (FNM_PATHNAME:
 * '*' does not cross '/'); excluded entries are not reported, excluded
 * directories not entered.
 */
static void test_excludes(void **state)
{
	(void)state;
	struct tree t;
	struct wants ws = {0};
	tree_new(&t, tmp_parent());
	want_root(&ws, &t, 0);
	make(&t, &ws, "main.c", DT_REG, NULL);
	make(&t, NULL, "main.o", DT_REG, NULL);
	make(&t, &ws, "src", DT_DIR, NULL);
	make(&t, &ws, "src/a.c", DT_REG, NULL);
	make(&t, NULL, "src/a.o", DT_REG, NULL);
	make(&t, NULL, "src/dir.o", DT_DIR, NULL);        /* a directory matched by name */
	make(&t, NULL, "src/dir.o/inside.c", DT_REG, NULL);
	make(&t, &ws, "src/deep", DT_DIR, NULL);
	make(&t, NULL, "src/deep/x.o", DT_REG, NULL);
	make(&t, NULL, "src/deep/y.c", DT_REG, NULL);     /* the path pattern below */
	make(&t, &ws, "src/deep/more", DT_DIR, NULL);
	make(&t, &ws, "src/deep/more/y.c", DT_REG, NULL); /* '*' does not cross '/' */
	make(&t, &ws, "build", DT_DIR, NULL);
	make(&t, NULL, "build/cache", DT_DIR, NULL);      /* "build/cache" */
	make(&t, NULL, "build/cache/c1", DT_REG, NULL);
	make(&t, &ws, "build/other", DT_DIR, NULL);
	make(&t, &ws, "build/other/o1", DT_REG, NULL);
	make(&t, &ws, "x", DT_DIR, NULL);
	make(&t, &ws, "x/build", DT_DIR, NULL);
	make(&t, &ws, "x/build/cache", DT_DIR, NULL);     /* a path pattern matches from the root */
	make(&t, &ws, "x/build/cache/k", DT_REG, NULL);
	make(&t, NULL, ".git", DT_DIR, NULL);             /* ".git", a directory */
	make(&t, NULL, ".git/objects", DT_DIR, NULL);
	make(&t, NULL, ".git/objects/ob", DT_REG, NULL);
	make(&t, &ws, "docs", DT_DIR, NULL);
	make(&t, NULL, "docs/.git", DT_REG, NULL);        /* ".git", a file */
	make(&t, &ws, "docs/.gitignore", DT_REG, NULL);
	const char *exclude[] = {"*.o", ".git", "build/cache", "src/*/y.c", NULL};
	for (unsigned threads = 1; threads <= 3; threads += 2)
		for (unsigned flags = 0; flags <= FIDX_WALK_STAT; flags += FIDX_WALK_STAT)
			CHECK_EQ(walk_and_check(t.base, &ws, threads, flags, exclude), 0);
	wants_free(&ws);
	tree_free(&t);
}

/* A name of len bytes: c repeated. */
static char *long_name(char c, size_t len)
{
	char *s = malloc(len + 1);
	CHECK(s);
	memset(s, c, len);
	s[len] = '\0';
	return s;
}

/*
 * Makes a chain of levels directories named name in the directory dfd (at
 * path base, depth depth0), each holding nfiles files, nleaf leaf
 * directories of two files each and the next level; wants all of it.
 */
static void make_chain(int dfd, const char *base, size_t depth0, const char *name, int levels,
		       int nfiles, int nleaf, struct wants *ws)
{
	int fd = dup(dfd);
	CHECK(fd >= 0);
	char *path = strdup(base);
	for (int l = 0; l < levels; l++) {
		size_t depth = depth0 + (size_t)l + 1;
		CHECK(mkdirat(fd, name, 0755) == 0);
		int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		CHECK(next >= 0);
		close(fd);
		fd = next;
		char *longer;
		CHECK(asprintf(&longer, "%s/%s", path, name) >= 0);
		free(path);
		path = longer;
		want_add(ws, 0, depth, DT_DIR, "%s", path);
		char leaf[32];
		for (int f = 0; f < nfiles; f++) {
			snprintf(leaf, sizeof(leaf), "file%d", f);
			CHECK(mknodat(fd, leaf, S_IFREG | 0644, 0) == 0);
			want_add(ws, 0, depth + 1, DT_REG, "%s/%s", path, leaf);
		}
		for (int d = 0; d < nleaf; d++) {
			snprintf(leaf, sizeof(leaf), "leaf%d", d);
			CHECK(mkdirat(fd, leaf, 0755) == 0);
			want_add(ws, 0, depth + 1, DT_DIR, "%s/%s", path, leaf);
			for (int f = 0; f < 2; f++) {
				char file[64];
				snprintf(file, sizeof(file), "%s/f%d", leaf, f);
				CHECK(mknodat(fd, file, S_IFREG | 0644, 0) == 0);
				want_add(ws, 0, depth + 2, DT_REG, "%s/%s", path, file);
			}
		}
	}
	close(fd);
	free(path);
}

/*
 * A chain whose paths outgrow PATH_MAX (30 levels of 200-byte names, a file
 * in each): every entry once, and fidx_open_long() opens the deepest file.
 */
static void test_deeper_than_path_max(void **state)
{
	(void)state;
	struct tree t;
	struct wants ws = {0};
	tree_new(&t, tmp_parent());
	want_root(&ws, &t, 0);
	char *name = long_name('n', 200);
	make_chain(t.fd, t.base, 0, name, 30, 1, 0, &ws);
	for (unsigned threads = 1; threads <= 4; threads += 3)
		for (unsigned flags = 0; flags <= FIDX_WALK_STAT; flags += FIDX_WALK_STAT)
			CHECK_EQ(walk_and_check(t.base, &ws, threads, flags, NULL), 0);
	const struct want *deepest = &ws.w[0];
	for (size_t i = 0; i < ws.n; i++)
		if (ws.w[i].len > deepest->len)
			deepest = &ws.w[i];
	CHECK(deepest->len > PATH_MAX && deepest->d_type == DT_REG);
	int fd = fidx_open_long(deepest->path, O_RDONLY);
	CHECK_MSG(fd >= 0, "fidx_open_long: %s", strerror(errno));
	struct stat st;
	CHECK(fstat(fd, &st) == 0 && S_ISREG(st.st_mode));
	close(fd);
	free(name);
	wants_free(&ws);
	tree_free(&t);
}

/* Arguments of the walks under a descriptor limit of 64. */
struct nofile_args {
	struct tree *t;
	struct wants *ws;
};

/* Sets RLIMIT_NOFILE to 64 (soft and hard), then walks with 8 threads. */
static void nofile_walks(void *arg)
{
	struct nofile_args *a = arg;
	struct rlimit rl = {64, 64};
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	for (unsigned flags = 0; flags <= FIDX_WALK_STAT; flags += FIDX_WALK_STAT)
		CHECK_EQ(walk_and_check(a->t->base, a->ws, 8, flags, NULL), 0);
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur == 64);
}

/*
 * A soft and hard RLIMIT_NOFILE of 64, 8 threads, 6 chains 40 levels deep
 * (paths beyond PATH_MAX) with files and leaf directories at every level:
 * every entry once, no error (no EMFILE).
 */
static void test_descriptor_limit_64(void **state)
{
	(void)state;
	struct tree t;
	struct wants ws = {0};
	tree_new(&t, tmp_parent());
	want_root(&ws, &t, 0);
	for (int c = 0; c < 6; c++) {
		char *name = long_name((char)('a' + c), 120);
		make_chain(t.fd, t.base, 0, name, 40, 4, 3, &ws);
		free(name);
	}
	struct nofile_args a = {&t, &ws};
	int status = run_in_child(nofile_walks, &a);
	wants_free(&ws);
	tree_free(&t);
	CHECK_EQ(status, 0);
}

/* What a walk of a flat directory of numbered entries saw, counted without locks. */
struct flat {
	const char *root;
	size_t root_len;
	size_t n;                     /* entries named <prefix><7 digits>, 0 .. n - 1 */
	char prefix;
	unsigned char type;           /* their type */
	unsigned flags;
	_Atomic uint64_t *seen;       /* bitmap of the entries reported */
	_Atomic uint64_t *left;       /* bitmap of the entries left */
	size_t stop_at;               /* entry() answers STOP on this entry (1-based; 0: never) */
	atomic_size_t calls;          /* entry() calls so far */
	atomic_size_t roots, root_leaves, left_count, dups, bad, errors;
};

/* How many entries f's seen bitmap holds. */
static size_t flat_seen_count(struct flat *f)
{
	size_t n = 0;
	for (size_t w = 0; w <= f->n / 64; w++)
		n += (size_t)__builtin_popcountll(atomic_load(&f->seen[w]));
	return n;
}

/* The number in a flat entry's name, or SIZE_MAX if the name is not one. */
static size_t flat_index(const struct flat *f, const char *name)
{
	if (name[0] != f->prefix)
		return SIZE_MAX;
	size_t i = 0;
	for (int k = 1; k <= 7; k++) {
		if (name[k] < '0' || name[k] > '9')
			return SIZE_MAX;
		i = i * 10 + (size_t)(name[k] - '0');
	}
	return name[8] == '\0' && i < f->n ? i : SIZE_MAX;
}

/* Sets bit i of map; returns true if it was set already. */
static bool set_bit(_Atomic uint64_t *map, size_t i)
{
	uint64_t bit = 1ull << (i % 64);
	return atomic_fetch_or(&map[i / 64], bit) & bit;
}

/*
 * The entry's number, if it is one of f's entries as f wants it reported
 * (leave() says descend too); else SIZE_MAX.
 */
static size_t flat_entry_index(struct flat *f, const struct fidx_walk_entry *e)
{
	/* A stopped walk leaves unfinished directories "stopped"; nothing else fails. */
	bool stopped = f->stop_at && e->error == ECANCELED && strcmp(e->error_op, "stopped") == 0;
	if (e->depth != 1 || (e->error && !stopped) || e->d_type != f->type || e->root_index != 0 ||
	    e->path_len != f->root_len + 9 || e->name_off != f->root_len + 1 ||
	    memcmp(e->path, f->root, f->root_len) != 0 || e->path[f->root_len] != '/' ||
	    !(e->stx != NULL) != !(f->flags & FIDX_WALK_STAT) ||
	    e->descend != (f->type == DT_DIR))
		return SIZE_MAX;
	return flat_index(f, e->path + e->name_off);
}

/* entry(): counts the root, marks a numbered entry seen (twice: a duplicate). */
static enum fidx_walk_action flat_entry(const struct fidx_walk_entry *e, void *ctx)
{
	struct flat *f = ctx;
	bool stop = f->stop_at && atomic_fetch_add(&f->calls, 1) + 1 == f->stop_at;
	if (e->depth == 0) {
		atomic_fetch_add(&f->roots, 1);
	} else {
		size_t i = flat_entry_index(f, e);
		if (i == SIZE_MAX)
			atomic_fetch_add(&f->bad, 1);
		else if (set_bit(f->seen, i))
			atomic_fetch_add(&f->dups, 1);
	}
	return stop ? FIDX_WALK_STOP : FIDX_WALK_CONTINUE;
}

/* leave(): a subdirectory after its entry, once; the root after every subdirectory. */
static void flat_leave(const struct fidx_walk_entry *e, void *ctx)
{
	struct flat *f = ctx;
	if (e->depth == 0) {
		atomic_fetch_add(&f->root_leaves, 1);
		size_t seen = flat_seen_count(f);
		size_t subdirs = f->type != DT_DIR ? 0 : f->stop_at ? seen : f->n;
		if (atomic_load(&f->left_count) != subdirs || (e->error && !f->stop_at))
			atomic_fetch_add(&f->bad, 1);
		/* A directory not seen whole must say so when it is left. */
		if (seen < f->n && !(e->error == ECANCELED && strcmp(e->error_op, "stopped") == 0))
			atomic_fetch_add(&f->bad, 1);
		return;
	}
	size_t i = flat_entry_index(f, e);
	if (i == SIZE_MAX || !(atomic_load(&f->seen[i / 64]) & (1ull << (i % 64))))
		atomic_fetch_add(&f->bad, 1);
	else if (set_bit(f->left, i))
		atomic_fetch_add(&f->dups, 1);
	atomic_fetch_add(&f->left_count, 1);
}

/* error(): counts it (the flat walks have none). */
static enum fidx_walk_action flat_error(const struct fidx_walk_entry *e, void *ctx)
{
	(void)e;
	atomic_fetch_add(&((struct flat *)ctx)->errors, 1);
	return FIDX_WALK_CONTINUE;
}

/* thread_start(): every thread shares arg (the counters are atomic). */
static void *flat_thread_start(void *arg)
{
	return arg;
}

/* Makes the directory root/<prefix>NNNNNNN for 0 .. n - 1, entries of type type. */
static void make_flat(struct tree *t, char prefix, size_t n, unsigned char type)
{
	for (size_t i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%c%07zu", prefix, i);
		int r = type == DT_DIR ? mkdirat(t->fd, name, 0755)
				       : mknodat(t->fd, name, S_IFREG | 0644, 0);
		CHECK_MSG(r == 0, "make %s: %s", name, strerror(errno));
	}
}

/* Walks the flat directory; returns false (with a message) if anything was wrong. */
static bool flat_walk(struct flat *f, unsigned threads, unsigned flags)
{
	size_t words = f->n / 64 + 1;
	f->seen = calloc(words, sizeof(*f->seen));
	f->left = calloc(words, sizeof(*f->left));
	CHECK(f->seen && f->left);
	f->flags = flags;
	atomic_init(&f->calls, 0);
	atomic_init(&f->roots, 0);
	atomic_init(&f->root_leaves, 0);
	atomic_init(&f->left_count, 0);
	atomic_init(&f->dups, 0);
	atomic_init(&f->bad, 0);
	atomic_init(&f->errors, 0);
	struct fidx_walk_opts opts = {
		.threads = threads, .flags = flags, .entry = flat_entry, .leave = flat_leave,
		.error = flat_error, .thread_start = flat_thread_start, .arg = f,
	};
	const char *roots[] = {f->root};
	int ret = fidx_walk(roots, 1, &opts);
	size_t missing = 0, unleft = 0;
	for (size_t i = 0; i < f->n; i++) {
		bool seen = atomic_load(&f->seen[i / 64]) & (1ull << (i % 64));
		missing += !seen;
		unleft += seen && !(atomic_load(&f->left[i / 64]) & (1ull << (i % 64)));
	}
	if (f->type != DT_DIR)
		unleft = 0;
	if (f->stop_at) /* stopped: not all seen, but every directory seen is left */
		missing = flat_seen_count(f) < f->stop_at - 1 || flat_seen_count(f) == f->n;
	bool ok = ret == (f->stop_at ? 1 : 0) && missing == 0 && unleft == 0 &&
		  atomic_load(&f->roots) == 1 &&
		  atomic_load(&f->root_leaves) == 1 && atomic_load(&f->dups) == 0 &&
		  atomic_load(&f->bad) == 0 && atomic_load(&f->errors) == 0;
	if (!ok)
		fprintf(stderr, "flat walk, %u threads, flags %u: returned %d; %zu missing, "
			"%zu not left, %zu roots, %zu root leaves, %zu twice, %zu wrong, "
			"%zu errors\n",
			threads, flags, ret, missing, unleft, atomic_load(&f->roots),
			atomic_load(&f->root_leaves), atomic_load(&f->dups), atomic_load(&f->bad),
			atomic_load(&f->errors));
	free(f->seen);
	free(f->left);
	return ok;
}

/*
 * One directory of HUGE_DIR_FILES empty files: every entry once, with 1 and 4 threads;
 * stopped near its end with 8 threads, it is left "stopped" (not all of it was seen).
 */
static void test_huge_directory(void **state)
{
	(void)state;
	struct tree t;
	const char *where = big_parent(HUGE_DIR_FILES);
	tree_new(&t, where);
	double t0 = now();
	make_flat(&t, 'f', HUGE_DIR_FILES, DT_REG);
	double t1 = now();
	struct flat f = {.root = t.base, .root_len = strlen(t.base), .n = HUGE_DIR_FILES,
			 .prefix = 'f', .type = DT_REG};
	CHECK(flat_walk(&f, 1, 0));
	double t2 = now();
	CHECK(flat_walk(&f, 4, FIDX_WALK_STAT));
	double t3 = now();
	/* Stopped near the end while several threads read it: left as "stopped". */
	f.stop_at = HUGE_DIR_FILES - 1000;
	CHECK(flat_walk(&f, 8, FIDX_WALK_STAT));
	tree_free(&t);
	print_message("%d files in %s: made in %.2f s, walked in %.2f s (1 thread, names) and "
		      "%.2f s (4 threads, stat), removed in %.2f s\n", HUGE_DIR_FILES, where,
		      t1 - t0, t2 - t1, t3 - t2, now() - t3);
}

/* What the walk of the deep chain saw, per level: the order of its callbacks. */
struct deep {
	const char *root;
	size_t root_len;
	size_t levels;
	const char *chain;            /* "/d" repeated levels times */
	atomic_size_t seq;            /* the next callback's number (from 1) */
	atomic_size_t *dir_entry, *dir_leave, *file_entry; /* per level: its number, or 0 */
	atomic_size_t dups, bad, errors;
};

/*
 * The level of e in the chain (dir "d" at level k has depth k; its file "f"
 * has depth k + 1), checking its path byte by byte; SIZE_MAX if wrong.
 */
static size_t deep_level(const struct deep *d, const struct fidx_walk_entry *e,
			 bool *is_file)
{
	*is_file = e->depth > 0 && e->path_len >= 2 && strcmp(e->path + e->path_len - 2, "/f") == 0;
	size_t level = *is_file ? e->depth - 1 : e->depth;
	if (level > d->levels || e->error || e->root_index != 0 ||
	    e->path_len != d->root_len + 2 * e->depth ||
	    memcmp(e->path, d->root, d->root_len) != 0 ||
	    memcmp(e->path + d->root_len, d->chain, 2 * level) != 0 ||
	    (e->depth > 0 && e->name_off != e->path_len - 1) ||
	    e->d_type != (*is_file ? DT_REG : DT_DIR) || e->descend != !*is_file)
		return SIZE_MAX;
	return level;
}

/* Stores the next callback number at slot; counts a second store as a duplicate. */
static void deep_mark(struct deep *d, atomic_size_t *slot)
{
	size_t s = atomic_fetch_add(&d->seq, 1);
	if (atomic_exchange(slot, s) != 0)
		atomic_fetch_add(&d->dups, 1);
}

/* entry(): numbers a level's directory or file in callback order. */
static enum fidx_walk_action deep_entry(const struct fidx_walk_entry *e, void *ctx)
{
	struct deep *d = ctx;
	bool is_file;
	size_t level = deep_level(d, e, &is_file);
	if (level == SIZE_MAX)
		atomic_fetch_add(&d->bad, 1);
	else
		deep_mark(d, is_file ? &d->file_entry[level] : &d->dir_entry[level]);
	return FIDX_WALK_CONTINUE;
}

/* leave(): numbers a level's directory's leave in callback order. */
static void deep_leave(const struct fidx_walk_entry *e, void *ctx)
{
	struct deep *d = ctx;
	bool is_file;
	size_t level = deep_level(d, e, &is_file);
	if (level == SIZE_MAX || is_file)
		atomic_fetch_add(&d->bad, 1);
	else
		deep_mark(d, &d->dir_leave[level]);
}

/* error(): counts it (the chain has none). */
static enum fidx_walk_action deep_error(const struct fidx_walk_entry *e, void *ctx)
{
	(void)e;
	atomic_fetch_add(&((struct deep *)ctx)->errors, 1);
	return FIDX_WALK_CONTINUE;
}

/*
 * A chain of DEEP_LEVELS directories "d" (paths far beyond PATH_MAX), a file
 * "f" in each: every level reported once at the right depth, each directory
 * before its file and its subdirectory, left after them and after the
 * subdirectory's leave.
 */
static void test_ten_thousand_levels(void **state)
{
	(void)state;
	struct tree t;
	tree_new(&t, big_parent(2 * DEEP_LEVELS));
	double t0 = now();
	int fd = dup(t.fd);
	CHECK(fd >= 0);
	for (size_t l = 0; l <= DEEP_LEVELS; l++) {
		CHECK(mknodat(fd, "f", S_IFREG | 0644, 0) == 0);
		if (l == DEEP_LEVELS)
			break;
		CHECK(mkdirat(fd, "d", 0755) == 0);
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		CHECK(next >= 0);
		close(fd);
		fd = next;
	}
	close(fd);
	char *chain = malloc(2 * DEEP_LEVELS + 1);
	CHECK(chain);
	for (size_t l = 0; l < DEEP_LEVELS; l++)
		memcpy(chain + 2 * l, "/d", 2);
	chain[2 * DEEP_LEVELS] = '\0';
	double t1 = now();
	for (unsigned threads = 1; threads <= 4; threads += 3) {
		struct deep d = {.root = t.base, .root_len = strlen(t.base), .levels = DEEP_LEVELS,
				 .chain = chain};
		atomic_init(&d.seq, 1);
		d.dir_entry = calloc(DEEP_LEVELS + 1, sizeof(atomic_size_t));
		d.dir_leave = calloc(DEEP_LEVELS + 1, sizeof(atomic_size_t));
		d.file_entry = calloc(DEEP_LEVELS + 1, sizeof(atomic_size_t));
		CHECK(d.dir_entry && d.dir_leave && d.file_entry);
		struct fidx_walk_opts opts = {
			.threads = threads, .entry = deep_entry, .leave = deep_leave,
			.error = deep_error, .thread_start = flat_thread_start, .arg = &d,
		};
		const char *roots[] = {t.base};
		CHECK_EQ(fidx_walk(roots, 1, &opts), 0);
		CHECK_EQ(atomic_load(&d.dups), 0);
		CHECK_EQ(atomic_load(&d.bad), 0);
		CHECK_EQ(atomic_load(&d.errors), 0);
		for (size_t l = 0; l <= DEEP_LEVELS; l++) {
			size_t de = atomic_load(&d.dir_entry[l]), dl = atomic_load(&d.dir_leave[l]);
			size_t fe = atomic_load(&d.file_entry[l]);
			CHECK_MSG(de && dl && fe, "level %zu: entry %zu, leave %zu, file %zu", l,
				  de, dl, fe);
			CHECK_MSG(de < fe && fe < dl, "level %zu: file outside its directory", l);
			if (l < DEEP_LEVELS) {
				CHECK_MSG(de < atomic_load(&d.dir_entry[l + 1]),
					  "level %zu: reported after its subdirectory", l);
				CHECK_MSG(atomic_load(&d.dir_leave[l + 1]) < dl,
					  "level %zu: left before its subdirectory", l);
			}
		}
		CHECK_EQ(atomic_load(&d.seq), 3 * (DEEP_LEVELS + 1) + 1);
		free(d.dir_entry);
		free(d.dir_leave);
		free(d.file_entry);
	}
	double t2 = now();
	free(chain);
	tree_free(&t);
	print_message("%d levels: made in %.2f s, walked twice in %.2f s, removed in %.2f s\n",
		      DEEP_LEVELS, t1 - t0, t2 - t1, now() - t2);
}

/* The peak RSS of this process so far, in KiB. */
static long peak_rss_kib(void)
{
	struct rusage ru;
	CHECK(getrusage(RUSAGE_SELF, &ru) == 0);
	return ru.ru_maxrss;
}

/*
 * Trims the heap and resets this process's peak RSS (/proc/self/clear_refs),
 * so that a later peak_rss_kib() measures what came after.  Returns the
 * peak now; *reset says whether the reset worked.
 */
static long reset_peak_rss(bool *reset)
{
	malloc_trim(0);
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	*reset = fd >= 0 && write(fd, "5", 1) == 1;
	if (fd >= 0)
		close(fd);
	return peak_rss_kib();
}

/*
 * Prints what the peak RSS grew by since reset_peak_rss() returned before,
 * and checks it against bound_kib, except under TSan (its shadow memory
 * grows with every allocation: no bound there).
 */
static void check_rss_growth(const char *what, long before, bool reset, long bound_kib)
{
	long growth = peak_rss_kib() - before;
	fprintf(stderr, "[          ] %s: peak RSS %ld KiB before, grew by %ld KiB%s\n", what,
		before, growth, reset ? "" : " (peak not reset: clear_refs unavailable)");
#ifdef UNDER_TSAN
	(void)bound_kib;
#else
	CHECK_MSG(growth < bound_kib, "%s: peak RSS grew by %ld KiB", what, growth);
#endif
}

/*
 * Walks the wide directory (arg, a tree) with 4 threads and checks its peak
 * RSS growth: the heap is trimmed and the peak reset (/proc/self/clear_refs)
 * first, so that the peak after the walk is the walk's own.
 */
static void wide_walk(void *arg)
{
	struct tree *t = arg;
	struct flat f = {.root = t->base, .root_len = strlen(t->base), .n = WIDE_SUBDIRS,
			 .prefix = 'd', .type = DT_DIR};
	bool reset;
	long before = reset_peak_rss(&reset);
	CHECK(flat_walk(&f, 4, 0));
	char what[64];
	snprintf(what, sizeof(what), "walking %d subdirectories", WIDE_SUBDIRS);
	check_rss_growth(what, before, reset, WIDE_RSS_BOUND_KIB);
}

/*
 * One directory of WIDE_SUBDIRS empty subdirectories: each reported once
 * and left once, and the walk's memory stays bounded (it parks the
 * directory instead of holding a node for every subdirectory).  Stopped a
 * third of the way: every subdirectory reported is still left once, after
 * its entry, and the root after them.
 */
static void test_wide_tree_bounded_memory(void **state)
{
	(void)state;
	struct tree t;
	tree_new(&t, big_parent(WIDE_SUBDIRS));
	make_flat(&t, 'd', WIDE_SUBDIRS, DT_DIR);
	int status = run_in_child(wide_walk, &t);
	/* Stopped in the middle, while several threads read the one directory. */
	struct flat f = {.root = t.base, .root_len = strlen(t.base), .n = WIDE_SUBDIRS,
			 .prefix = 'd', .type = DT_DIR, .stop_at = WIDE_SUBDIRS / 3};
	CHECK(flat_walk(&f, 4, FIDX_WALK_STAT));
	tree_free(&t);
	CHECK_EQ(status, 0);
}

/* What the walk of the long chain saw. */
struct long_chain {
	size_t root_len;
	atomic_size_t entries, leaves, bad, errors;
};

/* Checks the length of e's path against its depth; counts e as bad if wrong. */
static void long_check(struct long_chain *c, const struct fidx_walk_entry *e)
{
	if (e->path_len != c->root_len + e->depth * (LONG_NAME + 1) || strlen(e->path) != e->path_len)
		atomic_fetch_add(&c->bad, 1);
}

/* entry() of the long chain. */
static enum fidx_walk_action long_entry(const struct fidx_walk_entry *e, void *ctx)
{
	struct long_chain *c = ctx;
	long_check(c, e);
	atomic_fetch_add(&c->entries, 1);
	return FIDX_WALK_CONTINUE;
}

/* leave() of the long chain. */
static void long_leave(const struct fidx_walk_entry *e, void *ctx)
{
	struct long_chain *c = ctx;
	long_check(c, e);
	atomic_fetch_add(&c->leaves, 1);
}

/* error() of the long chain: counts it (there should be none). */
static enum fidx_walk_action long_error(const struct fidx_walk_entry *e, void *ctx)
{
	(void)e;
	atomic_fetch_add(&((struct long_chain *)ctx)->errors, 1);
	return FIDX_WALK_CONTINUE;
}

/* Walks the long chain (arg, a tree) with 2 threads and checks its peak RSS growth. */
static void long_walk(void *arg)
{
	struct tree *t = arg;
	struct long_chain c = {.root_len = strlen(t->base)};
	bool reset;
	long before = reset_peak_rss(&reset);
	struct fidx_walk_opts opts = {
		.threads = 2, .flags = FIDX_WALK_STAT, .entry = long_entry, .leave = long_leave,
		.error = long_error, .thread_start = flat_thread_start, .arg = &c,
	};
	const char *roots[] = {t->base};
	CHECK_EQ(fidx_walk(roots, 1, &opts), 0);
	char what[64];
	snprintf(what, sizeof(what), "walking %d levels of %d-byte names", LONG_LEVELS, LONG_NAME);
	check_rss_growth(what, before, reset, LONG_RSS_BOUND_KIB);
	CHECK_EQ(atomic_load(&c.bad), 0);
	CHECK_EQ(atomic_load(&c.errors), 0);
	CHECK_EQ(atomic_load(&c.entries), LONG_LEVELS + 1);
	CHECK_EQ(atomic_load(&c.leaves), LONG_LEVELS + 1);
}

/*
 * A chain of LONG_LEVELS directories with LONG_NAME-byte names: memory
 * grows with the depth, not with depth x path length (a node keeps its own
 * name, not its path).
 */
static void test_deep_long_names_bounded_memory(void **state)
{
	(void)state;
	struct tree t;
	tree_new(&t, big_parent(LONG_LEVELS));
	char name[LONG_NAME + 1];
	memset(name, 'n', LONG_NAME);
	name[LONG_NAME] = '\0';
	int fd = dup(t.fd);
	CHECK(fd >= 0);
	for (size_t l = 0; l < LONG_LEVELS; l++) {
		CHECK(mkdirat(fd, name, 0755) == 0);
		int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		CHECK(next >= 0);
		close(fd);
		fd = next;
	}
	close(fd);
	int status = run_in_child(long_walk, &t);
	tree_free(&t);
	CHECK_EQ(status, 0);
}

/*
 * Names that are not UTF-8 or hold newlines, tabs, backslashes, leading
 * dashes and spaces, glob characters, 255 bytes: passed byte-exact, as the
 * path and at name_off, and as a symlink's target.
 */
static void test_names_byte_exact(void **state)
{
	(void)state;
	struct tree t;
	struct wants ws = {0};
	tree_new(&t, tmp_parent());
	want_root(&ws, &t, 0);
	const char *names[] = {"new\nline", "tab\there", "back\\slash", "\xff", "\xc3\x28",
			       "-leading", " spaces  ", "*?[glob]", "caf\xc3\xa9", "...", ".hidden",
			       "'quote\"", "\x01\x7f", "\xed\xa0\x80", NULL};
	make(&t, &ws, "dir\n\xfe", DT_DIR, NULL);
	for (const char *const *n = names; *n; n++) {
		make(&t, &ws, *n, DT_REG, NULL);
		char rel[64];
		snprintf(rel, sizeof(rel), "dir\n\xfe/%s", *n);
		make(&t, &ws, rel, DT_DIR, NULL);
		snprintf(rel, sizeof(rel), "dir\n\xfe/%s/%s", *n, *n);
		make(&t, &ws, rel, DT_LNK, *n);
	}
	char *longest = long_name('\xe9', NAME_MAX);
	make(&t, &ws, longest, DT_REG, NULL);
	free(longest);
	for (unsigned threads = 1; threads <= 3; threads += 2) {
		CHECK_EQ(walk_and_check(t.base, &ws, threads, FIDX_WALK_READ_LINKS, NULL), 0);
		CHECK_EQ(walk_and_check(t.base, &ws, threads, FIDX_WALK_READ_LINKS | FIDX_WALK_STAT,
					NULL), 0);
	}
	wants_free(&ws);
	tree_free(&t);
}

/*
 * Several roots of every kind: directories (their entries carry their
 * root_index), a file, a missing path (error() gets "stat" ENOENT, entry()
 * gets it with stx NULL), a symlink to a directory (followed), a dangling
 * symlink (reported as itself), a relative path.
 */
static void test_roots(void **state)
{
	(void)state;
	struct tree a, b, c;
	struct wants ws = {0};
	tree_new(&a, tmp_parent());
	tree_new(&b, tmp_parent());
	tree_new(&c, tmp_parent());
	want_root(&ws, &a, 0);
	make(&a, &ws, "x", DT_DIR, NULL);
	make(&a, &ws, "x/y", DT_REG, NULL);
	make(&a, &ws, "z", DT_REG, NULL);
	make(&b, NULL, "file.txt", DT_REG, NULL);
	want_add(&ws, 1, 0, DT_REG, "%s/file.txt", b.base);
	struct want *x = want_add(&ws, 2, 0, DT_UNKNOWN, "%s/missing/sub", b.base);
	x->error = ENOENT;
	x->op = "stat";
	x->no_stx = true;
	x->descend = false;
	char *target;
	CHECK(asprintf(&target, "%s/x", a.base) >= 0);
	make(&b, NULL, "link", DT_LNK, target);
	x = want_add(&ws, 3, 0, DT_DIR, "%s/link", b.base);
	x->followed = true;
	x->link = target;
	want_add(&ws, 3, 1, DT_REG, "%s/link/y", b.base);
	want_root(&ws, &c, 4);
	make(&c, NULL, "n1", DT_DIR, NULL);
	make(&c, NULL, "n1/n2", DT_DIR, NULL);
	make(&c, NULL, "n1/n2/n3", DT_REG, NULL);
	want_add(&ws, 4, 1, DT_DIR, "%s/n1", c.base);
	want_add(&ws, 4, 2, DT_DIR, "%s/n1/n2", c.base);
	want_add(&ws, 4, 3, DT_REG, "%s/n1/n2/n3", c.base);
	make(&b, NULL, "dangle", DT_LNK, "nowhere");
	want_add(&ws, 5, 0, DT_LNK, "%s/dangle", b.base)->link = strdup("nowhere");
	make(&b, NULL, "rel", DT_DIR, NULL);
	make(&b, NULL, "rel/q", DT_REG, NULL);
	want_add(&ws, 6, 0, DT_DIR, "rel");
	want_add(&ws, 6, 1, DT_REG, "rel/q");

	char *roots_s[5];
	CHECK(asprintf(&roots_s[0], "%s/file.txt", b.base) >= 0);
	CHECK(asprintf(&roots_s[1], "%s/missing/sub", b.base) >= 0);
	CHECK(asprintf(&roots_s[2], "%s/link", b.base) >= 0);
	CHECK(asprintf(&roots_s[3], "%s/dangle", b.base) >= 0);
	const char *roots[] = {a.base, roots_s[0], roots_s[1], roots_s[2], c.base, roots_s[3],
			       "rel"};
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(cwd >= 0 && fchdir(b.fd) == 0);
	const unsigned flag_sets[] = {0, FIDX_WALK_STAT, FIDX_WALK_STAT | FIDX_WALK_READ_LINKS};
	for (unsigned threads = 1; threads <= 4; threads += 3) {
		for (size_t f = 0; f < 3; f++) {
			unsigned flags = flag_sets[f];
			struct rec r;
			rec_init(&r);
			r.check_at = true;
			CHECK_EQ(rec_walk(&r, roots, 7, threads, flags, NULL), 0);
			check_log(&r, &ws, false);
			CHECK_EQ(count_events(&r, EV_ERROR, roots_s[1], ENOENT), 1);
			rec_free(&r);
		}
	}
	CHECK(fchdir(cwd) == 0);
	close(cwd);
	for (int i = 0; i < 4; i++)
		free(roots_s[i]);
	wants_free(&ws);
	tree_free(&a);
	tree_free(&b);
	tree_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_every_entry_once, remove_leftovers),
		cmocka_unit_test_teardown(test_entry_callback_required, remove_leftovers),
		cmocka_unit_test_teardown(test_skip, remove_leftovers),
		cmocka_unit_test_teardown(test_stop_and_cancel, remove_leftovers),
		cmocka_unit_test_teardown(test_unreadable_directory, remove_leftovers),
		cmocka_unit_test_teardown(test_vanish_mid_walk, remove_leftovers),
		cmocka_unit_test_teardown(test_symlinks, remove_leftovers),
		cmocka_unit_test_teardown(test_one_filesystem, remove_leftovers),
		cmocka_unit_test_teardown(test_excludes, remove_leftovers),
		cmocka_unit_test_teardown(test_names_byte_exact, remove_leftovers),
		cmocka_unit_test_teardown(test_roots, remove_leftovers),
		cmocka_unit_test_teardown(test_deeper_than_path_max, remove_leftovers),
		cmocka_unit_test_teardown(test_descriptor_limit_64, remove_leftovers),
		cmocka_unit_test_teardown(test_wide_tree_bounded_memory, remove_leftovers),
		cmocka_unit_test_teardown(test_ten_thousand_levels, remove_leftovers),
		cmocka_unit_test_teardown(test_deep_long_names_bounded_memory, remove_leftovers),
		cmocka_unit_test_teardown(test_huge_directory, remove_leftovers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
