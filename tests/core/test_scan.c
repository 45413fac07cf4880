/*
 * test_scan.c - the whole pipeline (the walk source, hash workers, writer)
 * on a small tree, with several threads, checked against the tree it made
 * and against what the store holds afterwards (read back through the store:
 * its rows, their digests and sizes, the scan row's status and count); and
 * the source seam (source.h) with a source of the test's own, as a disk
 * image's would be.  Run under TSan by `make check`: this is the threaded
 * core.  Each test works in a temporary folder of its own (store/fixture.h):
 * the tree it scans, and the database beside it.
 */
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "scan.h"
#include "source.h"
#include "store.h"
#include "store/fixture.h"

#define DIRS 20
#define FILES 30

/* Makes DIRS folders of FILES files; file i holds i bytes.  Returns the byte total. */
static uint64_t make_tree(const char *root)
{
	uint64_t bytes = 0;
	char buf[FILES];
	memset(buf, 'x', sizeof(buf));
	for (int d = 0; d < DIRS; d++) {
		char dir[PATH_MAX];
		assert_true(snprintf(dir, sizeof(dir), "%s/d%02d", root, d) < (int)sizeof(dir));
		assert_int_equal(mkdir(dir, 0755), 0);
		for (int f = 0; f < FILES; f++) {
			char file[PATH_MAX + 8];
			assert_true(snprintf(file, sizeof(file), "%s/f%02d", dir, f) <
				    (int)sizeof(file));
			int fd = open(file, O_CREAT | O_WRONLY, 0644);
			assert_true(fd >= 0);
			assert_int_equal(write(fd, buf, f), f);
			close(fd);
			bytes += f;
		}
	}
	return bytes;
}

/* on_error's argument: how many entries were recorded with an error (the writer thread's). */
static void count_error(void *arg, const char *path, const char *error)
{
	(void)path;
	(void)error;
	++*(int *)arg;
}

/* What the store holds of one scan, counted through fidx_store_rows(). */
struct counts {
	uint64_t rows;          /* file rows */
	uint64_t paths;         /* distinct paths among them */
	uint64_t hashed_files;  /* regular files with a SHA-256 and an XXH3-128, no MD5 */
	uint64_t file_bytes;    /* the sum of the regular files' sizes */
};

/* Counts the rows of scan in st (path order, so that repeated paths are adjacent). */
static struct counts count_rows(struct fidx_store *st, int64_t scan, const char *root)
{
	struct counts c = {0};
	struct fidx_error err;
	struct fidx_rows_query q = {
		.scans = &scan, .roots = &root, .nscans = 1, .order = FIDX_ROWS_PATH,
		.columns = FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_TYPE) |
			   FIDX_COLUMN(FIDX_COL_SIZE) | FIDX_DIGEST_COLUMN(FIDX_MD5) |
			   FIDX_DIGEST_COLUMN(FIDX_SHA256) | FIDX_DIGEST_COLUMN(FIDX_XXH128),
	};
	struct fidx_rows *it = fidx_store_rows(st, &q, &err);
	const struct fidx_row *row;
	char *last = NULL;
	int rc;
	if (!it)
		fail_msg("fidx_store_rows: %s", err.msg);
	while ((rc = fidx_rows_next(it, &row, &err)) == 1) {
		const char *path = fidx_row_text(row, FIDX_COL_PATH);
		assert_non_null(path);
		c.rows++;
		if (!last || strcmp(last, path) != 0) {
			c.paths++;
			free(last);
			last = strdup(path);
			assert_non_null(last);
		}
		if (fidx_row_type(row) != 'f')
			continue;
		c.file_bytes += fidx_row_u64(row, FIDX_COL_SIZE);
		if (fidx_row_digest(row, FIDX_SHA256) && fidx_row_digest(row, FIDX_XXH128) &&
		    !fidx_row_has(row, FIDX_COL_MD5))
			c.hashed_files++;
	}
	if (rc < 0)
		fail_msg("fidx_rows_next: %s", err.msg);
	free(last);
	fidx_rows_close(it);
	return c;
}

/*
 * Every entry of the tree is recorded once, every regular file with the
 * digests asked for and no other, the sizes add up, the scan ends complete
 * with its count of entries; the totals, the counters and the error
 * callback agree.
 */
static void test_pipeline_records_everything(void **state)
{
	struct fixture *f = *state;
	const char *root = f->tree;
	assert_int_equal(mkdir(root, 0755), 0);
	uint64_t bytes = make_tree(root);

	struct fidx_error err;
	struct fidx_store *st = must_open(f->db, FIDX_STORE_WRITE, 0);
	atomic_bool cancel = false;
	struct fidx_progress_counters counters = {0};
	int errors = 0;
	struct fidx_scan_opts opts = {
		.digests = 1u << FIDX_SHA256 | 1u << FIDX_XXH128, .jobs = 4,
		.options_json = "{}", .cancel = &cancel, .counters = &counters,
		.on_error = count_error, .on_error_arg = &errors,
	};
	const char *roots[] = {root};
	struct fidx_scan_result r;
	struct fidx_walk_source_opts walk = {0};
	struct fidx_source *src = fidx_walk_source_new(&walk, &err);
	if (!src)
		fail_msg("fidx_walk_source_new: %s", err.msg);
	if (fidx_scan(st, src, roots, 1, &opts, &r, &err) != 0)
		fail_msg("fidx_scan: %s", err.msg);
	fidx_source_free(src);
	must_close(st);

	uint64_t entries = 1 + DIRS + DIRS * FILES;
	assert_int_equal(r.entries, entries);
	assert_int_equal(r.files, DIRS * FILES);
	assert_int_equal(r.dirs, 1 + DIRS);
	assert_int_equal(r.bytes, bytes);
	assert_int_equal(r.errors, 0);
	assert_false(r.interrupted);
	assert_int_equal(r.nscans, 1);
	assert_true(r.scan_ids[0] > 0);
	assert_int_equal(r.index_error.code, 0); /* the indexes were built */
	assert_non_null(r.seals);
	assert_true(r.seals[0].sealed);
	/* What the pipeline's threads counted, read once they are joined. */
	assert_int_equal(errors, 0);
	assert_int_equal(atomic_load(&counters.entries_found), entries);
	assert_int_equal(atomic_load(&counters.files_found), DIRS * FILES);
	assert_int_equal(atomic_load(&counters.bytes_found), bytes);
	assert_int_equal(atomic_load(&counters.entries_written), entries);
	assert_true(atomic_load(&counters.source_done));
	int64_t scan = r.scan_ids[0];
	free(r.scan_ids);
	free(r.seals);

	/* Read back as a query reads it. */
	st = must_open(f->db, FIDX_STORE_READ, 0);
	struct counts c = count_rows(st, scan, root);
	assert_int_equal(c.rows, entries);
	assert_int_equal(c.paths, entries);
	assert_int_equal(c.hashed_files, DIRS * FILES);
	assert_int_equal(c.file_bytes, bytes);
	struct fidx_scan_list all = {0};
	if (fidx_store_scans(st, NULL, &all, &err) < 0)
		fail_msg("fidx_store_scans: %s", err.msg);
	assert_int_equal(all.n, 1);
	assert_int_equal(all.rows[0].id, scan);
	assert_string_equal(all.rows[0].status, "complete");
	assert_int_equal(all.rows[0].entries, c.rows);
	fidx_scan_list_free(&all);
	must_close(st);
	/* Nothing left behind (the teardown finds nothing more to remove). */
	assert_int_equal(tmpdir_remove(f->dir), 0);
}

/* A source of the test's own: records made up on two threads, as an image's would be. */
#define MADE_UP 500       /* files under the made-up root, with their digests given */

struct list_source {
	struct fidx_source base;
	const char *real_file;            /* a file of the real root, to be hashed */
	atomic_int runs;
	atomic_bool saw_store_file;       /* run->leave_out held the store's database */
	const struct fidx_source_run *run;
};

/* One thread of the list source: thread 0 the real root's two entries, thread 1 the rest. */
struct list_thread {
	struct list_source *src;
	int which;
};

/* A record of path (under root root_index) of type type, size size. */
static struct fidx_record *made_up(const char *path, size_t root_index, char type, uint64_t size)
{
	struct fidx_record *rec = calloc(1, sizeof(*rec));
	assert_non_null(rec);
	assert_non_null(rec->path = strdup(path));
	rec->path_len = strlen(path);
	rec->name_off = (size_t)(strrchr(path, '/') + 1 - path);
	rec->ext_off = rec->path_len;
	rec->root_index = root_index;
	rec->type = type;
	rec->has_meta = true;
	rec->meta.size = size;
	rec->meta.mode = (type == 'd' ? S_IFDIR | 0755 : S_IFREG | 0644);
	rec->meta.nlink = 1;
	return rec;
}

/* Hands rec to the sink through ctx; fails the test if the sink asks to stop. */
static void put(const struct fidx_sink *sink, void *ctx, struct fidx_record *rec)
{
	assert_int_equal(sink->put(ctx, rec), 0);
}

/* A thread of the list source: puts its records through the sink. */
static void *list_thread(void *arg)
{
	struct list_thread *t = arg;
	const struct fidx_source_run *run = t->src->run;
	const struct fidx_sink *sink = run->sink;
	void *ctx = sink->thread_start(sink->arg);
	assert_non_null(ctx);
	if (t->which == 0) {
		put(sink, ctx, made_up(run->roots[0], 0, 'd', 0));
		/* The real file as stat says it is: the hashing stage checks it is still that file. */
		struct fidx_record *rec = made_up(t->src->real_file, 0, 'f', 3);
		struct stat sb;
		assert_int_equal(lstat(t->src->real_file, &sb), 0);
		rec->meta.dev = sb.st_dev;
		rec->meta.ino = sb.st_ino;
		rec->meta.mtime = (struct fidx_time){sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec};
		rec->meta.ctime = (struct fidx_time){sb.st_ctim.tv_sec, sb.st_ctim.tv_nsec};
		put(sink, ctx, rec);
	} else {
		put(sink, ctx, made_up(run->roots[1], 1, 'd', 0));
		for (int i = 0; i < MADE_UP; i++) {
			char path[PATH_MAX];
			snprintf(path, sizeof(path), "%s/f%03d", run->roots[1], i);
			struct fidx_record *rec = made_up(path, 1, 'f', 3);
			/* Digests the source computed itself: the pipeline must not read. */
			memset(rec->digest[FIDX_SHA256], i & 0xff, 32);
			rec->digest_mask = 1u << FIDX_SHA256;
			put(sink, ctx, rec);
		}
	}
	sink->thread_end(ctx, sink->arg);
	return NULL;
}

/* The list source's run: two threads, joined before it returns. */
static int list_run(struct fidx_source *base, const struct fidx_source_run *run,
		    struct fidx_error *err)
{
	(void)err;
	struct list_source *src = (struct list_source *)base;
	atomic_fetch_add(&src->runs, 1);
	assert_int_equal(run->nroots, 2);
	assert_true(run->threads >= 1);
	for (size_t i = 0; run->leave_out && run->leave_out[i]; i++)
		if (strcmp(strrchr(run->leave_out[i], '/'), "/" FIXTURE_DB_NAME) == 0)
			atomic_store(&src->saw_store_file, true);
	src->run = run;
	pthread_t tid[2];
	struct list_thread t[2] = {{src, 0}, {src, 1}};
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&tid[i], NULL, list_thread, &t[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	return 0;
}

/* The list source holds no descriptors. */
static unsigned long list_fds(const struct fidx_source *src, unsigned threads)
{
	(void)src;
	(void)threads;
	return 0;
}

/* The list source is the test's: nothing to free. */
static void list_free(struct fidx_source *src)
{
	(void)src;
}

static const struct fidx_source_ops list_ops = {
	.name = "list", .run = list_run, .fds = list_fds, .free = list_free,
};

/*
 * A source other than the walk feeds the same pipeline: its records are
 * stored under their roots' scans, a file it gave digests for is not read
 * (its path does not exist, and its digest is the one given), a file without
 * is read and hashed, and the source is told the store's files to leave out.
 */
static void test_another_source(void **state)
{
	struct fixture *f = *state;
	const char *root = f->tree;
	assert_int_equal(mkdir(root, 0755), 0);
	char file[PATH_MAX], image_root[PATH_MAX];
	snprintf(file, sizeof(file), "%s/abc", root);
	snprintf(image_root, sizeof(image_root), "%s-image", root);  /* never made */
	int fd = open(file, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);

	struct fidx_error err;
	struct fidx_store *st = must_open(f->db, FIDX_STORE_WRITE, 0);
	struct list_source src = {.base = {.ops = &list_ops}, .real_file = file};
	atomic_bool cancel = false;
	struct fidx_progress_counters counters = {0};
	struct fidx_scan_opts opts = {
		.digests = 1u << FIDX_SHA256, .jobs = 2, .options_json = "{}", .cancel = &cancel,
		.counters = &counters,
	};
	const char *roots[] = {root, image_root};
	struct fidx_scan_result r;
	if (fidx_scan(st, &src.base, roots, 2, &opts, &r, &err) != 0)
		fail_msg("fidx_scan: %s", err.msg);
	must_close(st);
	assert_int_equal(atomic_load(&src.runs), 1);
	assert_true(atomic_load(&src.saw_store_file));
	assert_int_equal(r.nscans, 2);
	assert_int_equal(r.entries, 2 + 1 + MADE_UP);
	assert_int_equal(r.files, 1 + MADE_UP);
	assert_int_equal(r.errors, 0);
	/* Hashed in this run: the real file by the pipeline, the others by the source
	 * (had the pipeline read them, their paths would have failed, and their digests
	 * differ from those checked below). */
	assert_int_equal(r.hashed, 1 + MADE_UP);
	assert_int_equal(atomic_load(&counters.files_hashed), 1 + MADE_UP);
	assert_int_equal(atomic_load(&counters.entries_written), 2 + 1 + MADE_UP);
	assert_true(r.seals[0].sealed && r.seals[1].sealed);

	st = must_open(f->db, FIDX_STORE_READ, 0);
	static const uint8_t abc_sha256[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae,
		0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61,
		0xf2, 0x00, 0x15, 0xad,
	};
	for (int k = 0; k < 2; k++) {
		struct fidx_rows_query q = {
			.scans = &r.scan_ids[k], .roots = &roots[k], .nscans = 1,
			.order = FIDX_ROWS_PATH,
			.columns = FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_TYPE) |
				   FIDX_DIGEST_COLUMN(FIDX_SHA256) | FIDX_COLUMN(FIDX_COL_ERROR),
		};
		struct fidx_rows *it = fidx_store_rows(st, &q, &err);
		const struct fidx_row *row;
		int rc, n = 0;
		if (!it)
			fail_msg("fidx_store_rows: %s", err.msg);
		while ((rc = fidx_rows_next(it, &row, &err)) == 1) {
			const char *path = fidx_row_text(row, FIDX_COL_PATH);
			assert_false(fidx_row_has(row, FIDX_COL_ERROR));
			if (fidx_row_type(row) == 'f' && k == 0) {
				assert_string_equal(path, file);
				assert_memory_equal(fidx_row_digest(row, FIDX_SHA256), abc_sha256, 32);
			} else if (fidx_row_type(row) == 'f') {
				uint8_t want[32];
				memset(want, atoi(strrchr(path, '/') + 2) & 0xff, sizeof(want));
				assert_memory_equal(fidx_row_digest(row, FIDX_SHA256), want, 32);
			}
			n++;
		}
		if (rc < 0)
			fail_msg("fidx_rows_next: %s", err.msg);
		fidx_rows_close(it);
		assert_int_equal(n, k == 0 ? 2 : 1 + MADE_UP);
	}
	must_close(st);
	free(r.scan_ids);
	free(r.seals);
	/* Nothing left behind (the teardown finds nothing more to remove). */
	assert_int_equal(tmpdir_remove(f->dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		FIXTURE_TEST(test_pipeline_records_everything),
		FIXTURE_TEST(test_another_source),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
