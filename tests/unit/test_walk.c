/*
 * test_walk.c - the parallel walk: every entry exactly once, with any number
 * of threads; trees deeper than PATH_MAX; a low descriptor limit; symlink
 * loops in follow mode; excludes; stopping.  Also run under TSan.
 *
 * Each test builds its tree in a fresh temporary folder with the *at()
 * calls, and compares the walk's report with the list of what it made.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "walk.h"

/* What the walk reported, gathered from all threads. */
struct seen {
	pthread_mutex_t lock;
	char **paths;        /* reported paths, in arrival order */
	int *errors;         /* their error numbers */
	size_t n, cap;
	size_t stop_after;   /* return STOP after this many entries (0: never) */
};

static enum fidx_walk_action collect(const struct fidx_walk_entry *e, void *ctx)
{
	struct seen *s = ctx;
	pthread_mutex_lock(&s->lock);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->paths = realloc(s->paths, s->cap * sizeof(*s->paths));
		s->errors = realloc(s->errors, s->cap * sizeof(*s->errors));
	}
	s->paths[s->n] = strdup(e->path);
	s->errors[s->n] = e->error;
	s->n++;
	bool stop = s->stop_after && s->n >= s->stop_after;
	pthread_mutex_unlock(&s->lock);
	assert_int_equal(strlen(e->path), e->path_len);
	assert_true(e->stx != NULL || e->error != 0);
	return stop ? FIDX_WALK_STOP : FIDX_WALK_CONTINUE;
}

static void *thread_ctx(void *arg)
{
	return arg;
}

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->paths[i]);
	free(s->paths);
	free(s->errors);
	pthread_mutex_destroy(&s->lock);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Walks root with opts' threads/follow/excludes; fills s.  Returns fidx_walk's value. */
static int walk_into(const char *root, struct fidx_walk_opts *opts, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	opts->entry = collect;
	opts->thread_start = thread_ctx;
	opts->arg = s;
	const char *roots[] = {root};
	return fidx_walk(roots, 1, opts);
}

/* The expected list: paths made by the tree builders. */
struct expect {
	char **paths;
	size_t n, cap;
};

static void expect_add(struct expect *x, const char *fmt, ...)
{
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 1024;
		x->paths = realloc(x->paths, x->cap * sizeof(*x->paths));
	}
	va_list ap;
	va_start(ap, fmt);
	assert_true(vasprintf(&x->paths[x->n++], fmt, ap) >= 0);
	va_end(ap);
}

static void expect_free(struct expect *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->paths[i]);
	free(x->paths);
}

/* Asserts that s reported exactly the paths of x, each once, without errors. */
static void assert_same(struct seen *s, struct expect *x)
{
	qsort(s->paths, s->n, sizeof(*s->paths), cmp_str);
	qsort(x->paths, x->n, sizeof(*x->paths), cmp_str);
	for (size_t i = 0; i < s->n && i < x->n; i++)
		assert_string_equal(s->paths[i], x->paths[i]);
	assert_int_equal(s->n, x->n);
	for (size_t i = 0; i < s->n; i++)
		assert_int_equal(s->errors[i], 0);
}

static char *make_tmpdir(void)
{
	char *dir = strdup("/tmp/fidx-test-walk-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void remove_tree(const char *dir)
{
	char *cmd;
	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) >= 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

/* A tree of ndirs folders of nfiles files each, plus a symlink, under root. */
static void make_wide_tree(const char *root, int ndirs, int nfiles, struct expect *x)
{
	expect_add(x, "%s", root);
	for (int d = 0; d < ndirs; d++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/d%03d", root, d);
		assert_int_equal(mkdir(path, 0755), 0);
		expect_add(x, "%s", path);
		for (int f = 0; f < nfiles; f++) {
			char file[PATH_MAX + 16];
			snprintf(file, sizeof(file), "%s/f%03d", path, f);
			int fd = open(file, O_CREAT | O_WRONLY, 0644);
			assert_true(fd >= 0);
			close(fd);
			expect_add(x, "%s", file);
		}
		snprintf(path, sizeof(path), "%s/d%03d/sub", root, d);
		assert_int_equal(mkdir(path, 0755), 0);
		expect_add(x, "%s", path);
	}
	char link[PATH_MAX];
	snprintf(link, sizeof(link), "%s/link", root);
	assert_int_equal(symlink("d000", link), 0);
	expect_add(x, "%s", link);
}

static void test_every_entry_once(void **state)
{
	(void)state;
	char *root = make_tmpdir();
	struct expect x = {0};
	make_wide_tree(root, 50, 20, &x);
	for (unsigned threads = 1; threads <= 8; threads *= 2) {
		struct seen s;
		struct fidx_walk_opts opts = {.threads = threads};
		assert_int_equal(walk_into(root, &opts, &s), 0);
		assert_same(&s, &x);
		seen_free(&s);
	}
	expect_free(&x);
	remove_tree(root);
	free(root);
}

/* A chain of directories whose full path is longer than PATH_MAX. */
static void make_deep_tree(const char *root, int levels, struct expect *x)
{
	char name[201];
	memset(name, 'n', 200);
	name[200] = '\0';
	int fd = open(root, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	char *path = strdup(root);
	expect_add(x, "%s", root);
	for (int i = 0; i < levels; i++) {
		assert_int_equal(mkdirat(fd, name, 0755), 0);
		int next = openat(fd, name, O_RDONLY | O_DIRECTORY);
		assert_true(next >= 0);
		close(fd);
		fd = next;
		char *longer;
		assert_true(asprintf(&longer, "%s/%s", path, name) >= 0);
		free(path);
		path = longer;
		expect_add(x, "%s", path);
		int f = openat(fd, "file", O_CREAT | O_WRONLY, 0644);
		assert_true(f >= 0);
		close(f);
		expect_add(x, "%s/file", path);
	}
	assert_true(strlen(path) > PATH_MAX);
	close(fd);
	free(path);
}

static void test_deeper_than_path_max(void **state)
{
	(void)state;
	char *root = make_tmpdir();
	struct expect x = {0};
	make_deep_tree(root, 30, &x);
	struct seen s;
	struct fidx_walk_opts opts = {.threads = 2};
	assert_int_equal(walk_into(root, &opts, &s), 0);
	assert_same(&s, &x);
	/* fidx_open_long reaches the deepest file by path. */
	char *deepest = NULL;
	for (size_t i = 0; i < s.n; i++)
		if (!deepest || strlen(s.paths[i]) > strlen(deepest))
			deepest = s.paths[i];
	assert_true(strlen(deepest) > PATH_MAX);
	int fd = fidx_open_long(deepest, O_RDONLY);
	assert_true(fd >= 0);
	close(fd);
	seen_free(&s);
	expect_free(&x);
	remove_tree(root);
	free(root);
}

static void test_low_descriptor_limit(void **state)
{
	(void)state;
	char *root = make_tmpdir();
	struct expect x = {0};
	make_wide_tree(root, 200, 2, &x);
	char deep[PATH_MAX];
	snprintf(deep, sizeof(deep), "%s/deep", root);
	assert_int_equal(mkdir(deep, 0755), 0);
	make_deep_tree(deep, 25, &x);
	/* In a child, since the hard limit cannot be raised again. */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = {64, 64};
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(3);
		struct seen s;
		struct fidx_walk_opts opts = {.threads = 4};
		if (walk_into(root, &opts, &s) != 0)
			_exit(4);
		qsort(s.paths, s.n, sizeof(*s.paths), cmp_str);
		qsort(x.paths, x.n, sizeof(*x.paths), cmp_str);
		if (s.n != x.n)
			_exit(5);
		for (size_t i = 0; i < s.n; i++)
			if (s.errors[i] || strcmp(s.paths[i], x.paths[i]) != 0)
				_exit(6);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	expect_free(&x);
	remove_tree(root);
	free(root);
}

static void test_follow_loop(void **state)
{
	(void)state;
	char *root = make_tmpdir();
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/a", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/a/up", root);
	assert_int_equal(symlink("..", path), 0);

	/* Not following: the link is one entry like any other. */
	struct seen s;
	struct fidx_walk_opts opts = {.threads = 2};
	assert_int_equal(walk_into(root, &opts, &s), 0);
	assert_int_equal(s.n, 3);
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(s.errors[i], 0);
	seen_free(&s);

	/* Following: the link leads back to an ancestor, reported as ELOOP, not entered. */
	opts.follow = true;
	assert_int_equal(walk_into(root, &opts, &s), 0);
	assert_int_equal(s.n, 3);
	int loops = 0;
	for (size_t i = 0; i < s.n; i++)
		if (s.errors[i] == ELOOP) {
			assert_string_equal(s.paths[i], path);
			loops++;
		}
	assert_int_equal(loops, 1);
	seen_free(&s);
	remove_tree(root);
	free(root);
}

static void test_excludes(void **state)
{
	(void)state;
	char *root = make_tmpdir();
	struct expect x = {0};
	make_wide_tree(root, 3, 2, &x);
	const char *globs[] = {"f001", "d002", "d000/sub", NULL};
	struct seen s;
	struct fidx_walk_opts opts = {.threads = 2, .excludes = globs};
	assert_int_equal(walk_into(root, &opts, &s), 0);
	size_t kept = 0;
	for (size_t i = 0; i < x.n; i++) {
		const char *rel = x.paths[i] + strlen(root);
		bool out = strstr(rel, "/f001") || strstr(rel, "/d002") ||
			   strcmp(rel, "/d000/sub") == 0;
		kept += !out;
		for (size_t j = 0; out && j < s.n; j++)
			assert_string_not_equal(s.paths[j], x.paths[i]);
	}
	assert_int_equal(s.n, kept);
	seen_free(&s);
	expect_free(&x);
	remove_tree(root);
	free(root);
}

static void test_stop_from_callback(void **state)
{
	(void)state;
	char *root = make_tmpdir();
	struct expect x = {0};
	make_wide_tree(root, 20, 20, &x);
	struct seen s;
	struct fidx_walk_opts opts = {.threads = 4};
	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.lock, NULL);
	s.stop_after = 10;
	opts.entry = collect;
	opts.thread_start = thread_ctx;
	opts.arg = &s;
	const char *roots[] = {root};
	assert_int_equal(fidx_walk(roots, 1, &opts), 1);
	assert_true(s.n >= 10 && s.n < x.n);
	seen_free(&s);
	expect_free(&x);
	remove_tree(root);
	free(root);
}

static void test_missing_root_is_reported(void **state)
{
	(void)state;
	struct seen s;
	struct fidx_walk_opts opts = {.threads = 2};
	assert_int_equal(walk_into("/nonexistent/fidx/root", &opts, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.errors[0], ENOENT);
	seen_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_entry_once),
		cmocka_unit_test(test_deeper_than_path_max),
		cmocka_unit_test(test_low_descriptor_limit),
		cmocka_unit_test(test_follow_loop),
		cmocka_unit_test(test_excludes),
		cmocka_unit_test(test_stop_from_callback),
		cmocka_unit_test(test_missing_root_is_reported),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
