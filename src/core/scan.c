/*
 * scan.c - the scan pipeline.
 *
 *   source threads ──► hash queue ──► hashing stage ──┐
 *   (source.h: the  │  (records)     (hashio.c)       ▼
 *    walk, ...)     └─────────────────────────► writer queue ──► writer ──► store
 *                   records with nothing to hash   (batches)      (1 thread)
 *
 *   the caller's progress line reads the counters (struct fidx_progress_counters).
 *
 * The source (source.h; the live filesystem's walk is source_walk.c) hands
 * the pipeline one record per entry through the sink, from its own threads.
 * A record a resumed scan holds already (opts->resumed_paths) is dropped.  A
 * regular file whose digests an earlier scan offers (opts->reuse: same
 * device, inode, size, mtime and ctime), or whose digests the source
 * computed itself, goes straight to the writer.  Other regular files to hash
 * go to the hash queue 32 at a time (or sooner when they hold 8 MiB, so that
 * big files start early); everything else is gathered into a per-thread
 * batch for the writer.  The hashing stage reads and hashes the files the
 * way the device wants (hashio.c) and batches its results for the writer
 * too.  The store's own files (fidx_store_files()) and opts->leave_out are
 * the source's to leave out.
 * Both queues have a fixed capacity, which bounds the memory of the whole
 * scan: when the writer or the hashers fall behind, the source waits.
 *
 * Ending.  The source is one producer of the hash queue; when its run()
 * returns, its threads have flushed their batches and the queue is closed.
 * The writer queue's producers are the source and the hashing stage; the
 * writer ends when both are done and the queue is drained.  Any failure (the
 * store, or memory in any stage) goes through pipeline_fail(): it sets `failed` and
 * `stop` and aborts both queues, so nothing waits on a stage that stopped,
 * and the scan rows end 'failed'.  The user's cancel is different: the source
 * stops, but everything already found still reaches the store.
 *
 * Counters.  Progress counters are relaxed atomics written by many threads;
 * the per-root totals that go into the scan rows are the writer's alone.
 */
#include "scan.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fdutil.h"
#include "hashio.h"
#include "queue.h"
#include "scanargs.h"
#include "sysinfo.h"

#define BATCH_RECORDS 256   /* records per writer batch */
#define HASH_QUEUE_CAP 16384 /* records waiting to be hashed (~10 MiB at most): the
			     * source runs this far ahead, so that the totals and the ETA
			     * come early in a tree of that many files */
#define WRITE_QUEUE_CAP 64  /* batches waiting to be stored */
#define IDLE_COMMIT_NS 1000000000 /* a writer idle this long with rows pending commits them */
#define PREFETCH_FILES 256  /* files read ahead on a cold cache (docs/BENCHMARKS.md) */
#define HASH_BATCH 32       /* files a source thread hands to the hash queue at once ... */
#define HASH_BATCH_BYTES (8 << 20) /* ... or sooner, once they hold this many bytes */

struct batch {
	size_t n;                                  /* records in rec */
	struct fidx_record *rec[BATCH_RECORDS];    /* owned */
};

/* Per-root totals, kept by the writer. */
struct root_totals {
	uint64_t entries, files, dirs, bytes, errors, reused, hashed;
	uint64_t unfinished;           /* of errors: left unfinished by an interruption */
	uint64_t hashed_bytes;         /* sizes of the files hashed by this run (not a column) */
};

struct scan {
	const struct fidx_scan_opts *opts;
	struct fidx_store *store;
	size_t nroots;                 /* roots scanned, one scan row each */
	int64_t *scan_ids;             /* scan row of each root */
	struct root_totals *totals;    /* per root, committed rows; the writer's */
	struct root_totals *uncommitted; /* per root, rows of the open transaction */
	struct fidx_queue *hash_q;     /* records to hash */
	struct fidx_queue *write_q;    /* batches to store */
	struct fidx_progress_counters *counters; /* opts->counters, or own_counters */
	struct fidx_progress_counters own_counters;
	atomic_bool stop;              /* the pipeline must wind down */
	atomic_bool failed;            /* the scan failed: the rows end 'failed' */
	pthread_mutex_t fail_lock;     /* guards errmsg while the pipeline runs */
	char errmsg[FIDX_ERROR_MSG];   /* what failed first, for the user ("" while nothing
					  did): a buffer, so that a failure never depends on
					  memory to describe it */
};

/* A source or hashing thread's state. */
struct producer {
	struct scan *scan;
	struct batch *batch;           /* being filled, or NULL */
	/* Source threads: files to hash, handed to the hash queue together (one
	 * wake-up of the hashing threads for many small files). */
	struct fidx_record *to_hash[HASH_BATCH];
	size_t nto_hash;
	uint64_t to_hash_bytes;        /* their sizes */
};

/* Returns true when the source must stop: a failure, or the user's cancel. */
static bool stopping(struct scan *s)
{
	return atomic_load_explicit(&s->stop, memory_order_relaxed) ||
	       (s->opts->cancel && atomic_load_explicit(s->opts->cancel, memory_order_relaxed));
}

/* Frees a batch and its records.  NULL is allowed. */
static void batch_free(struct batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		fidx_record_free(b->rec[i]);
	free(b);
}

/*
 * Records msg as what failed unless something failed first.  Allocates
 * nothing.  Thread-safe.
 */
static void note_failure(struct scan *s, const char *msg)
{
	pthread_mutex_lock(&s->fail_lock);
	if (!s->errmsg[0])
		snprintf(s->errmsg, sizeof(s->errmsg), "%s", msg && *msg ? msg : "out of memory");
	pthread_mutex_unlock(&s->fail_lock);
}

/* Whether a failure was noted. */
static bool has_failure(struct scan *s)
{
	pthread_mutex_lock(&s->fail_lock);
	bool failed = s->errmsg[0] != '\0';
	pthread_mutex_unlock(&s->fail_lock);
	return failed;
}

/*
 * Records a failure that ends the scan (the first message wins) and makes
 * every stage stop: no stage is left waiting on another.  Thread-safe.
 */
static void pipeline_fail(struct scan *s, const char *msg)
{
	note_failure(s, msg);
	atomic_store(&s->failed, true);
	atomic_store(&s->stop, true);
	fidx_queue_abort(s->hash_q);
	fidx_queue_abort(s->write_q);
}

/* Hands the producer's batch to the writer.  Returns 0, or -1 when aborted. */
static int flush_batch(struct producer *p)
{
	struct batch *b = p->batch;
	if (!b || b->n == 0)
		return 0;
	p->batch = NULL;
	if (fidx_queue_push(p->scan->write_q, b) < 0) {
		batch_free(b);
		return -1;
	}
	return 0;
}

/*
 * Hands a source thread's files to hash to the hash queue.  Returns 0, or -1 when
 * the pipeline failed (the files not queued are freed).
 */
static int flush_to_hash(struct producer *p)
{
	size_t n = p->nto_hash;
	size_t queued = n ? fidx_queue_push_many(p->scan->hash_q, (void *const *)p->to_hash, n) : 0;
	for (size_t i = queued; i < n; i++)
		fidx_record_free(p->to_hash[i]);
	p->nto_hash = 0;
	p->to_hash_bytes = 0;
	return queued == n ? 0 : -1;
}

/* Adds a file to hash to the thread's list (taking it); returns as flush_to_hash(). */
static int queue_to_hash(struct producer *p, struct fidx_record *rec)
{
	p->to_hash[p->nto_hash++] = rec;
	p->to_hash_bytes += rec->meta.size;
	if (p->nto_hash == HASH_BATCH || p->to_hash_bytes >= HASH_BATCH_BYTES)
		return flush_to_hash(p);
	return 0;
}

/*
 * Adds rec to the producer's batch (taking ownership).  Returns 0, or -1 when
 * the pipeline failed (then it has been told to stop).
 */
static int emit(struct producer *p, struct fidx_record *rec)
{
	if (!p->batch && !(p->batch = calloc(1, sizeof(*p->batch)))) {
		fidx_record_free(rec);
		pipeline_fail(p->scan, "out of memory");
		return -1;
	}
	p->batch->rec[p->batch->n++] = rec;
	if (p->batch->n == BATCH_RECORDS)
		return flush_batch(p);
	return 0;
}

/*
 * The sink's put (source.h): takes one record from a source thread.  A
 * regular file to hash goes to the hash queue, anything else to the writer.
 * Returns -1 when the source must stop.
 */
static int put_record(void *ctx, struct fidx_record *rec)
{
	struct producer *p = ctx;
	if (!p) { /* producer_start could not allocate; the scan fails */
		fidx_record_free(rec);
		return -1;
	}
	struct scan *s = p->scan;
	struct fidx_progress_counters *c = s->counters;
	if (atomic_load_explicit(&s->failed, memory_order_relaxed)) {
		fidx_record_free(rec);
		return -1;
	}
	const struct fidx_pathset *done =
		s->opts->resumed_paths ? s->opts->resumed_paths[rec->root_index] : NULL;
	if (done && fidx_pathset_has(done, rec->path, rec->path_len)) {
		fidx_record_free(rec);
		return stopping(s) ? -1 : 0;
	}
	rec->scan_id = s->scan_ids[rec->root_index];
	atomic_fetch_add_explicit(&c->entries_found, 1, memory_order_relaxed);
	if (rec->type == 'f') {
		atomic_fetch_add_explicit(&c->files_found, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->bytes_found, rec->meta.size, memory_order_relaxed);
	}
	int ret;
	if (rec->type == 'f' && s->opts->digests && !rec->error && !rec->digest_mask &&
	    !rec->no_read &&
	    !fidx_reuse_take(s->opts->reuse, rec)) {
		ret = queue_to_hash(p, rec);
	} else {
		if (rec->digests_from || rec->digest_mask) { /* reused, or hashed by the source */
			atomic_fetch_add_explicit(&c->files_hashed, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&c->bytes_hashed, rec->meta.size,
						  memory_order_relaxed);
		}
		ret = emit(p, rec);
	}
	return ret < 0 || stopping(s) ? -1 : 0;
}

/* The sink's stopping (source.h). */
static bool sink_stopping(void *arg)
{
	return stopping(arg);
}

/* The sink's fail (source.h): the source cannot go on. */
static void sink_fail(void *arg, const char *why)
{
	pipeline_fail(arg, why);
}

/*
 * Makes a source or hashing thread's producer state; on ENOMEM fails the
 * scan and returns NULL.
 */
static void *producer_start(void *arg)
{
	struct producer *p = calloc(1, sizeof(*p));
	if (p)
		p->scan = arg;
	else
		pipeline_fail(arg, "out of memory");
	return p;
}

/* Hands a thread's last batch to the writer and frees its producer state. */
static void producer_end(void *ctx, void *arg)
{
	(void)arg;
	struct producer *p = ctx;
	if (!p)
		return;
	flush_to_hash(p);
	flush_batch(p);
	free(p);
}

/*
 * Takes a record the hashing stage finished.  Returns -1 when the pipeline
 * failed (the record is then freed).
 */
static int hashed(void *ctx, struct fidx_record *rec)
{
	struct producer *p = ctx;
	if (!p) {
		fidx_record_free(rec);
		return -1;
	}
	return emit(p, rec);
}

/* The hashing stage cannot go on: the scan fails. */
static void hashio_failed(void *arg, const char *msg)
{
	pipeline_fail(arg, msg);
}

/* Accounts one stored record in its root's open totals and in the error list. */
static void account(struct scan *s, size_t root, const struct fidx_record *rec)
{
	struct root_totals *t = &s->uncommitted[root];
	t->entries++;
	if (rec->type == 'f') {
		t->files++;
		t->bytes += rec->meta.size;
		if (rec->digests_from)
			t->reused++;
		else if (rec->digest_mask) {
			t->hashed++;
			t->hashed_bytes += rec->meta.size;
		}
	} else if (rec->type == 'd') {
		t->dirs++;
	}
	if (rec->error) {
		t->errors++;
		if (strcmp(rec->error, FIDX_ERROR_NOT_READ) == 0 ||
		    strcmp(rec->error, FIDX_ERROR_NOT_HASHED) == 0)
			t->unfinished++;
		if (s->opts->on_error)
			s->opts->on_error(s->opts->on_error_arg, rec->path, rec->error);
	}
}

/*
 * Moves the open totals into the committed ones once the store committed,
 * so that a scan row never counts rows a failed commit rolled back.
 */
static void commit_totals(struct scan *s, size_t nroots)
{
	for (size_t r = 0; r < nroots; r++) {
		struct root_totals *t = &s->totals[r], *u = &s->uncommitted[r];
		t->entries += u->entries;
		t->files += u->files;
		t->dirs += u->dirs;
		t->bytes += u->bytes;
		t->errors += u->errors;
		t->reused += u->reused;
		t->hashed += u->hashed;
		t->hashed_bytes += u->hashed_bytes;
		t->unfinished += u->unfinished;
		*u = (struct root_totals){0};
	}
}

/* Commits the rows the store holds, and their totals; a failure fails the pipeline. */
static void commit_rows(struct scan *s)
{
	struct fidx_error err;
	if (fidx_store_flush(s->store, &err) < 0)
		pipeline_fail(s, err.msg);
	else
		commit_totals(s, s->nroots);
}

/* The writer thread: the only user of the store while the scan runs. */
static void *writer(void *arg)
{
	struct scan *s = arg;
	struct fidx_error err;
	struct batch *b;
	for (;;) {
		/* Rows pending and nothing more for IDLE_COMMIT_NS (a slow or hung file
		 * holds the rest): commit them, and give the write lock back meanwhile. */
		bool idle = false;
		b = fidx_store_pending(s->store) ? fidx_queue_pop_wait(s->write_q, IDLE_COMMIT_NS,
									&idle)
						 : fidx_queue_pop(s->write_q);
		if (idle) {
			commit_rows(s);
			continue;
		}
		if (!b)
			break;
		for (size_t i = 0; i < b->n && !atomic_load(&s->failed); i++) {
			const struct fidx_record *rec = b->rec[i];
			if (fidx_store_add(s->store, rec, &err) < 0) {
				pipeline_fail(s, err.msg);
				break;
			}
			account(s, rec->root_index, rec);
			if (fidx_store_pending(s->store) == 0)
				commit_totals(s, s->nroots);
			atomic_fetch_add_explicit(&s->counters->entries_written, 1,
						  memory_order_relaxed);
		}
		batch_free(b);
	}
	if (!atomic_load(&s->failed))
		commit_rows(s);
	return NULL;
}

/* Frees whatever an aborted pipeline left in its queues. */
static void drain(struct scan *s)
{
	void *item;
	while ((item = fidx_queue_trypop(s->hash_q)))
		fidx_record_free(item);
	while ((item = fidx_queue_trypop(s->write_q)))
		batch_free(item);
}

/*
 * Writes the end of every scan row, a complete one sealed in the same
 * transaction (its seal into result->seals).  Returns 0 or -1 (message noted).
 */
static int end_scans(struct scan *s, size_t nroots, bool interrupted,
		     struct fidx_scan_result *result)
{
	const char *status = atomic_load(&s->failed) || has_failure(s) ? "failed"
			     : interrupted			      ? "interrupted"
								      : "complete";
	int ret = 0;
	for (size_t r = 0; r < nroots; r++) {
		const struct root_totals *t = &s->totals[r];
		struct fidx_scan_totals end = {
			.finished_ns = fidx_now_ns(), .status = status, .entries = t->entries,
			.files = t->files, .dirs = t->dirs, .bytes = t->bytes, .errors = t->errors,
			.reused = t->reused, .hashed = t->hashed,
			.base_scan_id = s->opts->base_scan_ids ? s->opts->base_scan_ids[r] : 0,
		};
		struct fidx_scan_seal seal = {.sealed = true};
		struct fidx_error err;
		int ended = fidx_store_end_scan(s->store, s->scan_ids[r], &end, seal.sha256, &err);
		if (ended < 0) {
			note_failure(s, err.msg);
			ret = -1;
		} else if (ended) {
			result->seals[r] = seal;
		}
	}
	return ret;
}

/*
 * Descriptors the hashing stage may hold to read files ahead: what the
 * open-file limit leaves beside the source's (its fds() with threads
 * threads), less a reserve for the store and stdio, at most PREFETCH_FILES.
 */
static unsigned prefetch_budget(const struct fidx_source *src, unsigned threads)
{
	unsigned long held = src->ops->fds(src, threads);
	unsigned long limit = fidx_raise_nofile();
	unsigned long caller = limit > held ? limit - held : 0;
	unsigned long budget = caller > FIDX_FDS_RESERVED ? caller - FIDX_FDS_RESERVED : 0;
	return budget < PREFETCH_FILES ? (unsigned)budget : PREFETCH_FILES;
}

/*
 * The files the source leaves out: the store's own (fidx_store_files()) and
 * opts->leave_out, as one NULL-terminated list (the strings borrowed).
 * Returns it, or NULL on ENOMEM.
 */
static const char **leave_out_list(const struct scan *s)
{
	const char *const *lists[] = {fidx_store_files(s->store), s->opts->leave_out};
	size_t n = 0;
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; lists[l] && lists[l][i]; i++)
			n++;
	const char **all = calloc(n + 1, sizeof(*all));
	if (!all)
		return NULL;
	n = 0;
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; lists[l] && lists[l][i]; i++)
			all[n++] = lists[l][i];
	return all;
}

unsigned fidx_scan_io_threads(unsigned jobs)
{
	if (jobs >= 32)
		return jobs;
	return 4 * jobs < 32 ? 4 * jobs : 32;
}

/*
 * Begins a scan row per root (or resumes the one opts->resume_ids names,
 * its totals so far taken), s->scan_ids and result->nscans kept up to date.
 * Returns 0, or -1 with the failure noted.
 */
static int begin_scans(struct scan *s, const char *const *roots, struct fidx_scan_result *result)
{
	const struct fidx_scan_opts *opts = s->opts;
	struct fidx_sysinfo sys;
	struct fidx_error err;
	fidx_sysinfo_read(&sys);
	for (size_t r = 0; r < s->nroots; r++) {
		if (opts->resume_ids && opts->resume_ids[r]) {
			struct fidx_scan_totals so_far;
			if (fidx_store_resume_scan(s->store, opts->resume_ids[r], &so_far, &err) < 0) {
				note_failure(s, err.msg);
				return -1;
			}
			s->scan_ids[r] = opts->resume_ids[r];
			s->totals[r] = (struct root_totals){
				.entries = so_far.entries, .files = so_far.files, .dirs = so_far.dirs,
				.bytes = so_far.bytes, .errors = so_far.errors,
				.reused = so_far.reused, .hashed = so_far.hashed,
			};
		} else {
			char uuid[FIDX_UUID_TEXT];
			if (fidx_uuid_new(uuid) < 0) {
				fidx_fail(&err, errno, "cannot make the scan's UUID: %s",
					  strerror(errno));
				note_failure(s, err.msg);
				return -1;
			}
			struct fidx_scan_info info = {
				.root = roots[r], .host = sys.host, .os = sys.os, .kernel = sys.kernel,
				.arch = sys.arch, .version = FIDX_VERSION,
				.options = opts->root_options ? opts->root_options[r]
									: opts->options_json,
				.started_ns = fidx_now_ns(), .uuid = uuid,
			};
			if ((s->scan_ids[r] = fidx_store_begin_scan(s->store, &info, &err)) < 0) {
				note_failure(s, err.msg);
				return -1;
			}
		}
		result->nscans = r + 1;
	}
	return 0;
}

/*
 * Starts the hashing stage of s with jobs jobs, reading ahead within what
 * src leaves of the descriptors.  Returns it, or NULL with the pipeline
 * failed.
 */
static struct fidx_hashio *start_hashing(struct scan *s, const struct fidx_source *src,
					 unsigned jobs)
{
	const struct fidx_scan_opts *opts = s->opts;
	struct fidx_hashio_opts hopts = {
		.digests = opts->digests, .mode = opts->io, .jobs = jobs,
		.readers = fidx_scan_io_threads(jobs),
		.prefetch = prefetch_budget(src, fidx_scan_io_threads(jobs)),
		.drop_cache = opts->drop_cache, .in = s->hash_q, .cancel = opts->cancel,
		.stop = &s->stop, .bytes_hashed = &s->counters->bytes_hashed,
		.files_hashed = &s->counters->files_hashed, .thread_start = producer_start,
		.done = hashed, .thread_end = producer_end, .fail = hashio_failed, .arg = s,
	};
	struct fidx_hashio *hashio = fidx_hashio_start(&hopts);
	if (!hashio && !atomic_load(&s->failed)) {
		char msg[128];
		snprintf(msg, sizeof(msg), "cannot set up hashing: %s", strerror(errno));
		pipeline_fail(s, msg);
	}
	return hashio;
}

/* Adds up the committed totals of every root into result. */
static void sum_totals(const struct scan *s, struct fidx_scan_result *result)
{
	for (size_t r = 0; r < s->nroots; r++) {
		const struct root_totals *t = &s->totals[r];
		result->entries += t->entries;
		result->files += t->files;
		result->dirs += t->dirs;
		result->bytes += t->bytes;
		result->errors += t->errors;
		result->reused += t->reused;
		result->hashed += t->hashed;
		result->bytes_hashed += t->hashed_bytes;
		result->unfinished += t->unfinished;
	}
}

int fidx_scan(struct fidx_store *st, struct fidx_source *src, const char *const *roots,
	      size_t nroots, const struct fidx_scan_opts *opts, struct fidx_scan_result *result,
	      struct fidx_error *err)
{
	const char **leave_out = NULL;
	struct scan s = {.opts = opts, .store = st, .fail_lock = PTHREAD_MUTEX_INITIALIZER};
	struct timespec t0, t1;
	unsigned jobs = opts->jobs ? opts->jobs : 1;
	struct fidx_hashio *hashio = NULL;
	pthread_t writer_tid;
	int ret = -1;

	memset(result, 0, sizeof(*result));
	s.counters = opts->counters ? opts->counters : &s.own_counters;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	s.scan_ids = calloc(nroots, sizeof(*s.scan_ids));
	result->seals = calloc(nroots, sizeof(*result->seals));
	s.nroots = nroots;
	s.totals = calloc(nroots, sizeof(*s.totals));
	s.uncommitted = calloc(nroots, sizeof(*s.uncommitted));
	s.hash_q = fidx_queue_create(HASH_QUEUE_CAP, 1);
	/* Producers: the source and the hashing stage (done for it when there is none). */
	s.write_q = fidx_queue_create(WRITE_QUEUE_CAP, 2);
	if (!s.scan_ids || !result->seals || !s.totals || !s.uncommitted || !s.hash_q || !s.write_q) {
		note_failure(&s, "out of memory");
		goto out;
	}

	if (begin_scans(&s, roots, result) < 0)
		goto fail_setup;
	if (!(leave_out = leave_out_list(&s))) {
		note_failure(&s, "out of memory");
		goto fail_setup;
	}

	if (pthread_create(&writer_tid, NULL, writer, &s) != 0) {
		note_failure(&s, "cannot start the writer thread");
		goto fail_setup;
	}
	if (opts->digests)
		hashio = start_hashing(&s, src, jobs);
	struct fidx_sink sink = {
		.thread_start = producer_start, .thread_end = producer_end, .put = put_record,
		.stopping = sink_stopping, .fail = sink_fail, .stop = &s.stop, .arg = &s,
	};
	struct fidx_source_run run = {
		.roots = roots, .nroots = nroots, .threads = fidx_scan_io_threads(jobs),
		.leave_out = leave_out, .sink = &sink,
	};
	struct fidx_error why;
	if (!atomic_load(&s.stop) && src->ops->run(src, &run, &why) < 0)
		pipeline_fail(&s, why.msg);
	atomic_store(&s.counters->source_done, true);
	fidx_queue_done(s.hash_q);
	fidx_queue_done(s.write_q);

	fidx_hashio_finish(hashio);
	fidx_queue_done(s.write_q); /* the hashing stage's share */
	/* What was found is all recorded or on its way: a later signal interrupts nothing. */
	result->interrupted = opts->cancel && atomic_load(opts->cancel);
	pthread_join(writer_tid, NULL);

	/* Complete scans are sealed (seal.h); an interrupted one is when resumed to its end. */
	bool ended = end_scans(&s, nroots, result->interrupted, result) == 0;
	/* Then the indexes, which only speed queries up: without them the scans stand. */
	if (ended && !atomic_load(&s.failed))
		fidx_store_build_indexes(st, &result->index_error);
	sum_totals(&s, result);
	/* Failed is failed, whether or not the failure could be described. */
	if (!has_failure(&s) && !atomic_load(&s.failed))
		ret = 0;
	goto out;
fail_setup:
	/* Before any thread ran: end the rows begun so far as failed. */
	atomic_store(&s.failed, true);
	end_scans(&s, result->nscans, false, result);
out:
	clock_gettime(CLOCK_MONOTONIC, &t1);
	result->seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (s.hash_q && s.write_q)
		drain(&s);
	fidx_queue_destroy(s.hash_q);
	fidx_queue_destroy(s.write_q);
	result->scan_ids = s.scan_ids;
	free(leave_out);
	free(s.totals);
	free(s.uncommitted);
	if (ret < 0)
		fidx_fail(err, !s.errmsg[0] || strcmp(s.errmsg, "out of memory") == 0 ? ENOMEM : EIO,
			  "%s", s.errmsg[0] ? s.errmsg : "out of memory");
	return ret;
}

void fidx_source_free(struct fidx_source *src)
{
	if (src)
		src->ops->free(src);
}
