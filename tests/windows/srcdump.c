/*
 * srcdump.c - the Windows source (src/core/source_win.c) run on its own,
 * each record written as wincheck.c writes the Win32 API's view, so that
 * tests/windows/try-source can diff the two.  Until the Windows port of the
 * pipeline (scan.c) lands, this is the source's driver: a sink that prints.
 *
 *   srcdump [-j THREADS] [--no-streams] [--xdev] [--count] [--stop-after N]
 *           [-x GLOB]... ROOT...
 *
 * Lines on stdout (wincheck.c describes them); a record's error on stderr,
 * "error PATH: TEXT" (PATH in hex); --count prints only how many records
 * came and how long the run took; --stop-after N sets the sink's stop once N
 * records came, as a cancelled scan does.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <windows.h>

#include "source.h"
#include "winpath.h"

/*
 * memrchr(), which record.c (fidx_ext_offset) calls and MinGW's C library
 * lacks: here until the Windows port gives the core its own.
 */
void *memrchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;
	while (n-- > 0)
		if (p[n] == (unsigned char)c)
			return (void *)(p + n);
	return NULL;
}

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_ulong records;
static atomic_bool stop;
static bool count_only;
static unsigned long stop_after; /* --stop-after N: stop once N records came (0: never) */

/* Writes the n bytes at s in hex, or "-" when there are none. */
static void put_hex(const char *s, size_t n)
{
	if (!s || n == 0) {
		fputc('-', stdout);
		return;
	}
	for (size_t i = 0; i < n; i++)
		printf("%02x", (unsigned char)s[i]);
}

/* Writes time t as FILETIME ticks, or "notticks" when it is none. */
static void put_ticks(const char *label, struct fidx_time t)
{
	int64_t ticks;
	if (fidx_win_ticks(t, &ticks))
		printf(" %s=%lld", label, (long long)ticks);
	else
		printf(" %s=notticks", label);
}

/* The sink's put: one line per record. */
static int dump_put(void *ctx, struct fidx_record *rec)
{
	(void)ctx;
	if (atomic_fetch_add(&records, 1) + 1 == stop_after)
		atomic_store(&stop, true);
	if (count_only) {
		fidx_record_free(rec);
		return 0;
	}
	const struct fidx_meta *m = &rec->meta;
	pthread_mutex_lock(&out_lock);
	put_hex(rec->path, rec->path_len);
	if (rec->has_meta) {
		printf(" %c size=%llu attr=%lx ino=%llx dev=%lx", rec->type ? rec->type : '?',
		       (unsigned long long)m->size,
		       (unsigned long)(rec->image && rec->image->has_attributes
					       ? rec->image->attributes : 0xffffffffu),
		       (unsigned long long)m->ino, (unsigned long)m->dev);
		put_ticks("btime", m->btime);
		put_ticks("atime", m->atime);
		put_ticks("mtime", m->mtime);
		put_ticks("ctime", m->ctime);
		printf(" nlink=%llu target=", (unsigned long long)m->nlink);
		put_hex(rec->link_target, rec->link_len);
		printf(" stream=");
		const char *s = rec->image ? rec->image->stream : NULL;
		put_hex(s, s ? strlen(s) : 0);
	} else {
		printf(" ? nometa");
	}
	printf("\n");
	if (rec->error) {
		fprintf(stderr, "error ");
		for (size_t i = 0; i < rec->path_len; i++)
			fprintf(stderr, "%02x", (unsigned char)rec->path[i]);
		fprintf(stderr, ": %s\n", rec->error);
	}
	pthread_mutex_unlock(&out_lock);
	fidx_record_free(rec);
	return atomic_load(&stop) ? -1 : 0; /* as scan.c's put answers a stop */
}

/* The sink's thread_start: any non-NULL context. */
static void *dump_thread_start(void *arg)
{
	(void)arg;
	return &records;
}

/* The sink's thread_end: nothing to free. */
static void dump_thread_end(void *ctx, void *arg)
{
	(void)ctx;
	(void)arg;
}

/* The sink's stopping: never asked to stop here. */
static bool dump_stopping(void *arg)
{
	(void)arg;
	return atomic_load(&stop);
}

/* The sink's fail: says why and stops. */
static void dump_fail(void *arg, const char *why)
{
	(void)arg;
	fprintf(stderr, "srcdump: the source failed: %s\n", why);
	atomic_store(&stop, true);
}

int main(int argc, char **argv)
{
	struct fidx_win_source_opts opts = {.streams = true};
	const char *excludes[64];
	size_t nex = 0;
	unsigned threads = 4;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-j") == 0 && i + 1 < argc)
			threads = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--no-streams") == 0)
			opts.streams = false;
		else if (strcmp(argv[i], "--xdev") == 0)
			opts.xdev = true;
		else if (strcmp(argv[i], "--count") == 0)
			count_only = true;
		else if (strcmp(argv[i], "--stop-after") == 0 && i + 1 < argc)
			stop_after = strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-x") == 0 && i + 1 < argc && nex < 63)
			excludes[nex++] = argv[++i];
		else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: srcdump [-j THREADS] [--no-streams] [--xdev] [--count] "
			"[--stop-after N] [-x GLOB]... ROOT...\n");
		return 2;
	}
	excludes[nex] = NULL;
	opts.excludes = nex ? excludes : NULL;
	struct fidx_error err;
	fidx_error_clear(&err);
	struct fidx_source *src = fidx_win_source_new(&opts, &err);
	if (!src) {
		fprintf(stderr, "srcdump: %s\n", err.msg);
		return 1;
	}
	struct fidx_sink sink = {
		.thread_start = dump_thread_start, .thread_end = dump_thread_end, .put = dump_put,
		.stopping = dump_stopping, .fail = dump_fail, .stop = &stop, .arg = NULL,
	};
	struct fidx_source_run run = {
		.roots = (const char *const *)argv + i, .nroots = (size_t)(argc - i),
		.threads = threads, .sink = &sink,
	};
	LARGE_INTEGER f, t0, t1;
	QueryPerformanceFrequency(&f);
	QueryPerformanceCounter(&t0);
	int rc = src->ops->run(src, &run, &err);
	QueryPerformanceCounter(&t1);
	if (rc < 0)
		fprintf(stderr, "srcdump: %s\n", err.msg);
	if (count_only)
		printf("%lu records in %.3f s with %u threads\n", (unsigned long)atomic_load(&records),
		       (double)(t1.QuadPart - t0.QuadPart) / (double)f.QuadPart, threads);
	src->ops->free(src); /* fidx_source_free() is source_walk.c's, not built here */
	return rc < 0 || (atomic_load(&stop) && !stop_after) ? 1 : 0;
}
