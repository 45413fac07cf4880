/*
 * test_hashio.c - the hashing stage alone (src/core/hashio.c): every record taken
 * is handed back once, with the right digests, in both read modes, with one
 * and several CPUs, for sizes around the block boundaries and files read by
 * a streamer; files that are not what the walk saw, or are gone, get their
 * error; a cancel before the start settles everything as interrupted.  The
 * digests are checked against OpenSSL's one-shot EVP_Digest() over the bytes
 * the test wrote.  Run under TSan by `make check`: this is threaded core.
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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "hashio.h"

#define NSMALL 300 /* small files beside the edge sizes */

/* Sizes at the edges of the read sizes (64 KiB reads, 256 KiB blocks, the 4 MiB streaming size). */
static const size_t edge_sizes[] = {
	0, 1, 4095, 4096, 65535, 65536, 65537, 262143, 262144, 262145,
	4 * 1048576 - 1, 4 * 1048576, 9 * 1048576 + 5,
};
#define NEDGE (sizeof(edge_sizes) / sizeof(edge_sizes[0]))
#define NFILES (NEDGE + NSMALL)

struct file {
	char path[PATH_MAX];
	size_t size;
	unsigned char sha256[32], md5[16];
};

static char dir[64];             /* the files' folder */
static struct file files[NFILES];

/* What the stage handed back, gathered from its threads. */
struct outcome {
	pthread_mutex_t lock;
	struct fidx_record *recs[NFILES + 8];
	size_t n;
	int started, ended;       /* thread_start / thread_end calls */
	int failures;             /* fail() calls */
	atomic_bool cancel, stop;
	atomic_uint_least64_t bytes, files;
};

/* Fills buf with bytes that depend on seed and the offset. */
static void pattern(unsigned char *buf, size_t len, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (unsigned char)x;
	}
}

/* Writes file i of size bytes and remembers its digests. */
static void make_file(size_t i, size_t size)
{
	struct file *f = &files[i];
	unsigned char *buf = malloc(size ? size : 1);
	assert_non_null(buf);
	pattern(buf, size, (unsigned)i);
	snprintf(f->path, sizeof(f->path), "%s/f%04zu", dir, i);
	f->size = size;
	int fd = open(f->path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, size), (ssize_t)size);
	/* Written back, so that POSIX_FADV_DONTNEED can drop its pages. */
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(close(fd), 0);
	assert_int_equal(EVP_Digest(buf, size, f->sha256, NULL, EVP_sha256(), NULL), 1);
	assert_int_equal(EVP_Digest(buf, size, f->md5, NULL, EVP_md5(), NULL), 1);
	free(buf);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/fidx-test-hashio.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	for (size_t i = 0; i < NEDGE; i++)
		make_file(i, edge_sizes[i]);
	for (size_t i = NEDGE; i < NFILES; i++)
		make_file(i, (i * 7919) % 20000);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < NFILES; i++)
		unlink(files[i].path);
	return rmdir(dir);
}

/* A record of path as the walk would make it, from lstat(). */
static struct fidx_record *record_of(const char *path)
{
	struct fidx_record *rec = calloc(1, sizeof(*rec));
	struct stat st;
	assert_non_null(rec);
	assert_non_null(rec->path = strdup(path));
	rec->path_len = strlen(path);
	rec->type = 'f';
	assert_int_equal(lstat(path, &st), 0);
	rec->has_meta = true;
	rec->meta.size = (uint64_t)st.st_size;
	rec->meta.mode = st.st_mode;
	rec->meta.dev = st.st_dev;
	rec->meta.ino = st.st_ino;
	rec->meta.mtime = (struct fidx_time){.sec = st.st_mtim.tv_sec, .nsec = (uint32_t)st.st_mtim.tv_nsec};
	return rec;
}

static void *on_start(void *arg)
{
	struct outcome *o = arg;
	pthread_mutex_lock(&o->lock);
	o->started++;
	pthread_mutex_unlock(&o->lock);
	return o;
}

static int on_done(void *ctx, struct fidx_record *rec)
{
	struct outcome *o = ctx;
	pthread_mutex_lock(&o->lock);
	if (o->n < sizeof(o->recs) / sizeof(o->recs[0]))
		o->recs[o->n++] = rec;
	else
		fidx_record_free(rec); /* more than were given: the count check fails */
	pthread_mutex_unlock(&o->lock);
	return 0;
}

static void on_end(void *ctx, void *arg)
{
	struct outcome *o = arg;
	pthread_mutex_lock(&o->lock);
	if (ctx == o) /* else the count check fails */
		o->ended++;
	pthread_mutex_unlock(&o->lock);
}

static void on_fail(void *arg, const char *msg)
{
	struct outcome *o = arg;
	(void)msg;
	pthread_mutex_lock(&o->lock);
	o->failures++;
	pthread_mutex_unlock(&o->lock);
}

/*
 * Runs the stage over recs (n of them, owned by the queue then the stage)
 * and gathers what comes back into o; with cancelled, the user's cancel is
 * raised before the stage starts.
 */
static void run_stage(struct outcome *o, enum fidx_io_mode mode, unsigned jobs, bool drop_cache,
		      bool cancelled, struct fidx_record **recs, size_t n)
{
	memset(o, 0, sizeof(*o));
	pthread_mutex_init(&o->lock, NULL);
	atomic_store(&o->cancel, cancelled);
	struct fidx_queue *q = fidx_queue_create(n, 1);
	assert_non_null(q);
	struct fidx_hashio_opts opts = {
		.digests = 1u << FIDX_SHA256 | 1u << FIDX_MD5, .mode = mode, .jobs = jobs,
		.readers = 4 * jobs, .prefetch = 64,
		.drop_cache = drop_cache, .in = q, .cancel = &o->cancel, .stop = &o->stop,
		.bytes_hashed = &o->bytes, .files_hashed = &o->files, .thread_start = on_start,
		.done = on_done, .thread_end = on_end, .fail = on_fail, .arg = o,
	};
	struct fidx_hashio *io = fidx_hashio_start(&opts);
	assert_non_null(io);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(fidx_queue_push(q, recs[i]), 0);
	fidx_queue_done(q);
	fidx_hashio_finish(io);
	fidx_queue_destroy(q);
	pthread_mutex_destroy(&o->lock);
	assert_int_equal(o->n, n);
	assert_int_equal(o->started, o->ended);
	assert_true(o->started >= 1);
	assert_int_equal(o->failures, 0);
	assert_int_equal(atomic_load(&o->files), n);
}

/* The file of fx a record stands for. */
static const struct file *file_of(const struct fidx_record *rec)
{
	for (size_t i = 0; i < NFILES; i++)
		if (strcmp(files[i].path, rec->path) == 0)
			return &files[i];
	fail_msg("record of an unknown file %s", rec->path);
	return NULL;
}

/* Every file of fx, in every mode: right digests, each record once, bytes all counted. */
static void check_mode(enum fidx_io_mode mode, unsigned jobs, bool drop_cache)
{
	struct fidx_record *recs[NFILES];
	struct outcome o;
	uint64_t total = 0;
	for (size_t i = 0; i < NFILES; i++) {
		recs[i] = record_of(files[i].path);
		total += files[i].size;
	}
	run_stage(&o, mode, jobs, drop_cache, false, recs, NFILES);
	assert_int_equal(atomic_load(&o.bytes), total);
	bool seen[NFILES] = {false};
	for (size_t i = 0; i < o.n; i++) {
		struct fidx_record *rec = o.recs[i];
		const struct file *f = file_of(rec);
		size_t k = (size_t)(f - files);
		if (rec->error)
			fail_msg("%s (%zu bytes): %s", rec->path, f->size, rec->error);
		assert_false(seen[k]);
		seen[k] = true;
		assert_int_equal(rec->digest_mask, 1u << FIDX_SHA256 | 1u << FIDX_MD5);
		assert_memory_equal(rec->digest[FIDX_SHA256], f->sha256, 32);
		assert_memory_equal(rec->digest[FIDX_MD5], f->md5, 16);
		fidx_record_free(rec);
	}
}

static void test_ssd_one_cpu(void **state)
{
	(void)state;
	check_mode(FIDX_IO_SSD, 1, false);
}

static void test_ssd_three_cpus(void **state)
{
	(void)state;
	check_mode(FIDX_IO_SSD, 3, false);
}

static void test_hdd_one_cpu(void **state)
{
	(void)state;
	check_mode(FIDX_IO_HDD, 1, false);
}

static void test_hdd_three_cpus(void **state)
{
	(void)state;
	check_mode(FIDX_IO_HDD, 3, false);
}

/*
 * Dropping the cache after each file: each run after one with --drop-cache
 * finds no file cached, so the SSD workers open files ahead (WILLNEED), and
 * the HDD reader reads every file, in disk order (the runs after one without
 * it find them cached: the HDD workers hash them).
 */
static void test_drop_cache(void **state)
{
	(void)state;
	check_mode(FIDX_IO_SSD, 2, true);
	check_mode(FIDX_IO_SSD, 2, false);
	check_mode(FIDX_IO_HDD, 2, true);
	check_mode(FIDX_IO_HDD, 2, false);
}

/*
 * Records that do not match their file: a wrong mtime or size (the file
 * changed after the walk), a file gone, a directory; each gets its error and
 * no digest, in both modes, while a good record beside them is hashed.
 */
static void test_mismatches(void **state)
{
	(void)state;
	static const enum fidx_io_mode modes[] = {FIDX_IO_SSD, FIDX_IO_HDD};
	for (size_t m = 0; m < 2; m++) {
		size_t big = NEDGE - 1; /* streamed in SSD mode */
		struct fidx_record *recs[6] = {
			record_of(files[NEDGE].path), record_of(files[big].path),
			record_of(files[3].path), record_of(files[NEDGE + 1].path),
			record_of(files[NEDGE + 2].path), record_of(dir),
		};
		recs[1]->meta.mtime.nsec ^= 1; /* changed since the walk (streamed) */
		recs[2]->meta.size += 10;      /* shorter than the walk saw */
		recs[3]->meta.ino += 1;        /* another file now */
		free(recs[4]->path);           /* gone */
		assert_non_null(recs[4]->path = strdup("/nonexistent/fidx-test-gone"));
		struct outcome o;
		run_stage(&o, modes[m], 2, false, false, recs, 6);
		for (size_t i = 0; i < o.n; i++) {
			struct fidx_record *rec = o.recs[i];
			if (strcmp(rec->path, files[NEDGE].path) == 0) {
				assert_null(rec->error);
				assert_memory_equal(rec->digest[FIDX_SHA256], files[NEDGE].sha256, 32);
			} else if (strcmp(rec->path, "/nonexistent/fidx-test-gone") == 0) {
				assert_string_equal(rec->error, "open: No such file or directory");
				assert_int_equal(rec->digest_mask, 0);
			} else if (strcmp(rec->path, dir) == 0) {
				/* O_RDONLY opens a directory; its read fails. */
				assert_string_equal(rec->error, "read: Is a directory");
				assert_int_equal(rec->digest_mask, 0);
			} else {
				assert_non_null(rec->error);
				assert_string_equal(rec->error, "changed during scan");
				assert_int_equal(rec->digest_mask, 0);
			}
			fidx_record_free(rec);
		}
	}
}

/* A cancel before the start: every record comes back, none read. */
static void test_cancelled(void **state)
{
	(void)state;
	static const enum fidx_io_mode modes[] = {FIDX_IO_SSD, FIDX_IO_HDD};
	for (size_t m = 0; m < 2; m++) {
		struct fidx_record *recs[NEDGE];
		struct outcome o;
		for (size_t i = 0; i < NEDGE; i++)
			recs[i] = record_of(files[i].path);
		run_stage(&o, modes[m], 2, false, true, recs, NEDGE);
		assert_int_equal(o.n, NEDGE);
		for (size_t i = 0; i < o.n; i++) {
			assert_string_equal(o.recs[i]->error, "not hashed: scan interrupted");
			assert_int_equal(o.recs[i]->digest_mask, 0);
			fidx_record_free(o.recs[i]);
		}
	}
}

static void test_mode_names(void **state)
{
	(void)state;
	enum fidx_io_mode m;
	assert_int_equal(fidx_io_mode_parse("hdd", &m), 0);
	assert_int_equal(m, FIDX_IO_HDD);
	assert_string_equal(fidx_io_mode_name(m), "hdd");
	assert_int_equal(fidx_io_mode_parse("ssd", &m), 0);
	assert_string_equal(fidx_io_mode_name(m), "ssd");
	assert_int_equal(fidx_io_mode_parse("auto", &m), 0);
	assert_string_equal(fidx_io_mode_name(m), "auto");
	errno = 0;
	assert_int_equal(fidx_io_mode_parse("HDD", &m), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fidx_io_mode_parse("", &m), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ssd_one_cpu),
		cmocka_unit_test(test_ssd_three_cpus),
		cmocka_unit_test(test_hdd_one_cpu),
		cmocka_unit_test(test_hdd_three_cpus),
		cmocka_unit_test(test_drop_cache),
		cmocka_unit_test(test_mismatches),
		cmocka_unit_test(test_cancelled),
		cmocka_unit_test(test_mode_names),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
