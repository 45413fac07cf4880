/*
 * scan.c - the scan pipeline.
 *
 *   walker threads ──► hash queue ──► hashing stage ──┐
 *   (fidx_walk)   │    (records)     (hashio.c)       ▼
 *                 └───────────────────────────► writer queue ──► writer ──► store
 *                   entries with nothing to hash   (batches)      (1 thread)
 *
 *   progress thread: reads the counters, draws one line on stderr.
 *
 * The walker callback turns each walk entry into a record, unless a resumed
 * scan holds its path already (opts->resumed_paths).  A regular file whose
 * digests an earlier scan offers (opts->reuse: same device, inode, size,
 * mtime and ctime) takes them and goes straight to the writer.  The store's
 * own files (the database, its -wal, -shm and -journal), and those of the
 * databases in opts->leave_out, are never recorded: they change while the
 * scan runs, and opening them in the process that writes them would drop
 * SQLite's POSIX locks (fcntl(2)).  Other regular files
 * to hash go to the hash queue 32 at a time (or sooner when they hold 8 MiB,
 * so that big files start early); everything else is gathered into a
 * per-thread batch for the writer.  The hashing stage reads and hashes the
 * files the way the device wants (hashio.c) and batches its results for the
 * writer too.
 * Both queues have a fixed capacity, which bounds the memory of the whole
 * scan: when the writer or the hashers fall behind, the walk waits.
 *
 * Ending.  The walk is one producer of the hash queue; when fidx_walk()
 * returns, its threads have flushed their batches and the queue is closed.
 * The writer queue's producers are the walk and the hashing stage; the
 * writer ends when both are done and the queue is drained.  Any failure (the
 * store, or memory in any stage) goes through pipeline_fail(): it sets `failed` and
 * `stop` and aborts both queues, so nothing waits on a stage that stopped,
 * and the scan rows end 'failed'.  The user's cancel is different: the walk
 * stops, but everything already found still reaches the store.
 *
 * Counters.  Progress counters are relaxed atomics written by many threads;
 * the per-root totals that go into the scan rows are the writer's alone.
 */
#include "scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "fdutil.h"
#include "fidx/walk.h"
#include "hashio.h"
#include "progress.h"
#include "queue.h"
#include "scanargs.h"
#include "sysinfo.h"

#define BATCH_RECORDS 256   /* records per writer batch */
#define HASH_QUEUE_CAP 65536 /* records waiting to be hashed (~40 MiB at most): the
			     * walk runs this far ahead, so totals and the ETA come early */
#define WRITE_QUEUE_CAP 64  /* batches waiting to be stored */
#define PREFETCH_FILES 256  /* files read ahead on a cold cache (docs/BENCHMARKS.md) */
#define HASH_BATCH 32       /* files a walker hands to the hash queue at once ... */
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
	struct fidx_progress_counters counters;
	struct own_file *own;          /* the files never recorded (note_own_files()) */
	size_t nown;
	atomic_bool stop;              /* the pipeline must wind down */
	atomic_bool failed;            /* the scan failed: the rows end 'failed' */
	pthread_mutex_t fail_lock;     /* guards errmsg while the pipeline runs */
	char errmsg[1024];             /* what failed first, for the user ("" while nothing
					  did): a buffer, so that a failure never depends on
					  memory to describe it */
};

/* A file the scan never records: a database's file, -wal, -shm or -journal. */
struct own_file {
	char *path;                    /* its absolute path, the folders resolved */
	size_t len;                    /* strlen(path) */
	const char *name;              /* its name: path after the last '/' */
	size_t name_len;               /* strlen(name) */
	dev_t dev;                     /* its device and inode, when it exists ... */
	ino_t ino;
	bool exists;                   /* ... at the start of the scan */
	dev_t dir_dev;                 /* its folder's device and inode, when ... */
	ino_t dir_ino;
	bool dir_known;                /* ... the folder could be stat'ed */
};

/* A walker or hashing thread's state. */
struct producer {
	struct scan *scan;
	struct batch *batch;           /* being filled, or NULL */
	/* Walkers: files to hash, handed to the hash queue together (one
	 * wake-up of the hashing threads for many small files). */
	struct fidx_record *to_hash[HASH_BATCH];
	size_t nto_hash;
	uint64_t to_hash_bytes;        /* their sizes */
};

/* Returns true when the walk must stop: a failure, or the user's cancel. */
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
 * Hands the walker's files to hash to the hash queue.  Returns 0, or -1 when
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

/* Adds a file to hash to the walker's list (taking it); returns as flush_to_hash(). */
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

/* A statx time as it is (its seconds are signed 64-bit; nsec is 0..999,999,999). */
static struct fidx_time ts_of(const struct statx_timestamp *t)
{
	return (struct fidx_time){.sec = t->tv_sec, .nsec = t->tv_nsec % FIDX_NS_PER_S};
}

/* Offset of the extension in name (Python's splitext: leading dots do not count). */
static size_t ext_offset(const char *path, size_t name_off, size_t path_len)
{
	const char *name = path + name_off;
	size_t i = 0;
	while (name[i] == '.')
		i++;
	const char *dot = memrchr(name + i, '.', path_len - name_off - i);
	return dot ? (size_t)(dot + 1 - path) : path_len;
}

/* Builds a record from a walk entry.  Returns NULL on ENOMEM. */
static struct fidx_record *record_of(struct scan *s, const struct fidx_walk_entry *e)
{
	struct fidx_record *rec = calloc(1, sizeof(*rec));
	if (!rec)
		return NULL;
	rec->path = malloc(e->path_len + 1);
	if (!rec->path)
		goto fail;
	memcpy(rec->path, e->path, e->path_len + 1);
	rec->path_len = e->path_len;
	rec->name_off = e->name_off;
	rec->ext_off = ext_offset(rec->path, e->name_off, e->path_len);
	rec->root_index = e->root_index;
	rec->scan_id = s->scan_ids[e->root_index];
	if (e->stx) {
		const struct statx *x = e->stx;
		struct fidx_meta *m = &rec->meta;
		rec->has_meta = true;
		rec->type = fidx_type_of_mode(x->stx_mode);
		m->size = x->stx_size;
		m->blocks = x->stx_blocks;
		m->mode = x->stx_mode;
		m->uid = x->stx_uid;
		m->gid = x->stx_gid;
		m->nlink = x->stx_nlink;
		m->dev = makedev(x->stx_dev_major, x->stx_dev_minor);
		m->ino = x->stx_ino;
		m->atime = ts_of(&x->stx_atime);
		m->mtime = ts_of(&x->stx_mtime);
		m->ctime = ts_of(&x->stx_ctime);
		/* A birth time of exactly 0 is what some filesystems report when they
		 * keep none (coreutils' stat reads it as unknown too). */
		m->has_btime = (x->stx_mask & STATX_BTIME) &&
			       (x->stx_btime.tv_sec != 0 || x->stx_btime.tv_nsec != 0);
		if (m->has_btime)
			m->btime = ts_of(&x->stx_btime);
	} else {
		static const char dtype_letter[] = {
			[DT_REG] = 'f', [DT_DIR] = 'd', [DT_LNK] = 'l', [DT_FIFO] = 'p',
			[DT_SOCK] = 's', [DT_CHR] = 'c', [DT_BLK] = 'b',
		};
		rec->type = e->d_type < sizeof(dtype_letter) ? dtype_letter[e->d_type] : 0;
	}
	if (e->link_target) {
		rec->link_len = strlen(e->link_target);
		if (!(rec->link_target = strdup(e->link_target)))
			goto fail;
	}
	if (e->error == ECANCELED && strcmp(e->error_op, "stopped") == 0) {
		if (fidx_record_set_error(rec, FIDX_ERROR_NOT_READ, 0) < 0)
			goto fail;
	} else if (e->error && fidx_record_set_error(rec, e->error_op, e->error) < 0) {
		goto fail;
	}
	return rec;
fail:
	fidx_record_free(rec);
	return NULL;
}

/*
 * Whether walk entry e is one of the files the scan never records, whatever
 * path leads to it (a root given through a symlink, a bind mount, a followed
 * link): by device and inode, from the entry's stat or, without one, from
 * fstatat() of an entry of the same name; a file made after the scan began
 * by its name and its folder's device and inode; else by its path.
 */
static bool is_own_file(const struct scan *s, const struct fidx_walk_entry *e)
{
	const char *name = e->path + e->name_off;
	size_t name_len = e->path_len - e->name_off;
	for (size_t i = 0; i < s->nown; i++) {
		const struct own_file *o = &s->own[i];
		struct stat sb;
		if (e->stx && o->exists) {
			if (o->ino == e->stx->stx_ino &&
			    o->dev == makedev(e->stx->stx_dev_major, e->stx->stx_dev_minor))
				return true;
			continue;
		}
		if (e->path_len == o->len && memcmp(e->path, o->path, o->len) == 0)
			return true;
		if (name_len != o->name_len || memcmp(name, o->name, name_len) != 0)
			continue;
		if (o->exists) {
			if (fstatat(e->at_fd, e->at_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
			    sb.st_dev == o->dev && sb.st_ino == o->ino)
				return true;
		} else if (o->dir_known && e->at_fd != AT_FDCWD && fstat(e->at_fd, &sb) == 0 &&
			   sb.st_dev == o->dir_dev && sb.st_ino == o->dir_ino) {
			return true;
		}
	}
	return false;
}

/*
 * Notes the files the scan leaves out: the store's database (whose files
 * exist once a scan row was committed) and those of opts->leave_out, each
 * with its -wal, -shm and -journal.  Returns 0, or -1 on ENOMEM.
 */
static int note_own_files(struct scan *s)
{
	static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
	size_t ndb = 1;
	while (s->opts->leave_out && s->opts->leave_out[ndb - 1])
		ndb++;
	if (!(s->own = calloc(4 * ndb, sizeof(*s->own))))
		return -1;
	for (size_t d = 0; d < ndb; d++) {
		const char *db = d == 0 ? fidx_store_path(s->store) : s->opts->leave_out[d - 1];
		/* The absolute path the walk would make: the folders resolved, as roots are. */
		char *abs = realpath(db, NULL);
		if (!abs && !(abs = fidx_root_path(db)))
			continue;
		struct stat dir;
		char *slash = strrchr(abs, '/');
		bool dir_known = false;
		if (slash) {
			char keep = slash[1];
			slash[1] = '\0';
			dir_known = stat(abs, &dir) == 0;
			slash[1] = keep;
		}
		for (size_t i = 0; i < 4; i++) {
			struct own_file *o = &s->own[s->nown];
			struct stat sb;
			if (asprintf(&o->path, "%s%s", abs, suffix[i]) < 0) {
				o->path = NULL;
				free(abs);
				return -1;
			}
			o->len = strlen(o->path);
			o->name = strrchr(o->path, '/') ? strrchr(o->path, '/') + 1 : o->path;
			o->name_len = strlen(o->name);
			if (stat(o->path, &sb) == 0) {
				o->dev = sb.st_dev;
				o->ino = sb.st_ino;
				o->exists = true;
			}
			if (dir_known) {
				o->dir_dev = dir.st_dev;
				o->dir_ino = dir.st_ino;
				o->dir_known = true;
			}
			s->nown++;
		}
		free(abs);
	}
	return 0;
}

/*
 * Records one walk entry: a regular file to hash goes to the hash queue,
 * anything else to the writer.  Returns STOP when the scan must end.
 */
static enum fidx_walk_action record_entry(struct producer *p, const struct fidx_walk_entry *e)
{
	if (!p) /* producer_start could not allocate; the scan fails */
		return FIDX_WALK_STOP;
	struct scan *s = p->scan;
	struct fidx_progress_counters *c = &s->counters;
	if (atomic_load_explicit(&s->failed, memory_order_relaxed))
		return FIDX_WALK_STOP;
	const struct fidx_pathset *done =
		s->opts->resumed_paths ? s->opts->resumed_paths[e->root_index] : NULL;
	if ((done && fidx_pathset_has(done, e->path, e->path_len)) || is_own_file(s, e))
		return stopping(s) ? FIDX_WALK_STOP : FIDX_WALK_CONTINUE;
	struct fidx_record *rec = record_of(s, e);
	if (!rec) {
		pipeline_fail(s, "out of memory");
		return FIDX_WALK_STOP;
	}
	atomic_fetch_add_explicit(&c->entries_found, 1, memory_order_relaxed);
	if (rec->type == 'f') {
		atomic_fetch_add_explicit(&c->files_found, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->bytes_found, rec->meta.size, memory_order_relaxed);
	}
	int ret;
	if (rec->type == 'f' && s->opts->digests && !rec->error &&
	    !fidx_reuse_take(s->opts->reuse, rec)) {
		ret = queue_to_hash(p, rec);
	} else {
		if (rec->digests_from) { /* done without reading: as if hashed */
			atomic_fetch_add_explicit(&c->files_hashed, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&c->bytes_hashed, rec->meta.size,
						  memory_order_relaxed);
		}
		ret = emit(p, rec);
	}
	return ret < 0 || stopping(s) ? FIDX_WALK_STOP : FIDX_WALK_CONTINUE;
}

/*
 * The walk's entry callback (on every walker thread).  A directory the walk
 * enters is recorded when it is left, with any error met reading it.
 */
static enum fidx_walk_action on_entry(const struct fidx_walk_entry *e, void *ctx)
{
	struct producer *p = ctx;
	if (e->descend)
		return !p || stopping(p->scan) ? FIDX_WALK_STOP : FIDX_WALK_CONTINUE;
	return record_entry(p, e);
}

/* The walk's leave callback: records a directory once everything in it was seen. */
static void on_leave(const struct fidx_walk_entry *e, void *ctx)
{
	record_entry(ctx, e);
}

/*
 * Makes a walker or hashing thread's producer state; on ENOMEM fails the
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
		if (s->opts->error_list)
			fprintf(s->opts->error_list, "%s: %s\n", fidx_quote(rec->path), rec->error);
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

/* The writer thread: the only user of the store while the scan runs. */
static void *writer(void *arg)
{
	struct scan *s = arg;
	struct batch *b;
	while ((b = fidx_queue_pop(s->write_q))) {
		for (size_t i = 0; i < b->n && !atomic_load(&s->failed); i++) {
			const struct fidx_record *rec = b->rec[i];
			if (fidx_store_add(s->store, rec) < 0) {
				pipeline_fail(s, fidx_store_errmsg(s->store));
				break;
			}
			account(s, rec->root_index, rec);
			if (fidx_store_pending(s->store) == 0)
				commit_totals(s, s->nroots);
			atomic_fetch_add_explicit(&s->counters.entries_written, 1,
						  memory_order_relaxed);
		}
		batch_free(b);
	}
	if (!atomic_load(&s->failed)) {
		if (fidx_store_flush(s->store) < 0)
			pipeline_fail(s, fidx_store_errmsg(s->store));
		else
			commit_totals(s, s->nroots);
	}
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
		int ended = fidx_store_end_scan(s->store, s->scan_ids[r], &end, seal.sha256);
		if (ended < 0) {
			note_failure(s, fidx_store_errmsg(s->store));
			ret = -1;
		} else if (ended) {
			result->seals[r] = seal;
		}
	}
	return ret;
}

/*
 * Descriptors the hashing stage may hold to read files ahead: what the
 * open-file limit leaves beside the walk (fidx_walk_max_fds()), less a
 * reserve for SQLite and stdio, at most PREFETCH_FILES.
 */
static unsigned prefetch_budget(unsigned walkers)
{
	unsigned long walk = fidx_walk_max_fds(walkers);
	unsigned long limit = fidx_raise_nofile();
	unsigned long caller = limit > walk ? limit - walk : 0;
	unsigned long budget = caller > FIDX_FDS_RESERVED ? caller - FIDX_FDS_RESERVED : 0;
	return budget < PREFETCH_FILES ? (unsigned)budget : PREFETCH_FILES;
}

unsigned fidx_scan_io_threads(unsigned jobs)
{
	if (jobs >= 32)
		return jobs;
	return 4 * jobs < 32 ? 4 * jobs : 32;
}

int fidx_scan(struct fidx_store *st, const char *const *roots, size_t nroots,
	      const struct fidx_scan_opts *opts, struct fidx_scan_result *result, char **errmsg)
{
	struct scan s = {.opts = opts, .store = st, .fail_lock = PTHREAD_MUTEX_INITIALIZER};
	struct fidx_sysinfo sys;
	struct timespec t0, t1;
	unsigned jobs = opts->jobs ? opts->jobs : 1;
	struct fidx_hashio *hashio = NULL;
	pthread_t writer_tid;
	struct fidx_progress *progress = NULL;
	int ret = -1;

	memset(result, 0, sizeof(*result));
	*errmsg = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fidx_sysinfo_read(&sys);
	s.scan_ids = calloc(nroots, sizeof(*s.scan_ids));
	result->seals = calloc(nroots, sizeof(*result->seals));
	s.nroots = nroots;
	s.totals = calloc(nroots, sizeof(*s.totals));
	s.uncommitted = calloc(nroots, sizeof(*s.uncommitted));
	s.hash_q = fidx_queue_create(HASH_QUEUE_CAP, 1);
	/* Producers: the walk and the hashing stage (done for it when there is none). */
	s.write_q = fidx_queue_create(WRITE_QUEUE_CAP, 2);
	if (!s.scan_ids || !result->seals || !s.totals || !s.uncommitted || !s.hash_q || !s.write_q) {
		note_failure(&s, "out of memory");
		goto out;
	}

	for (size_t r = 0; r < nroots; r++) {
		if (opts->resume_ids && opts->resume_ids[r]) {
			struct fidx_scan_totals so_far;
			if (fidx_store_resume_scan(st, opts->resume_ids[r], &so_far) < 0) {
				note_failure(&s, fidx_store_errmsg(st));
				goto fail_setup;
			}
			s.scan_ids[r] = opts->resume_ids[r];
			s.totals[r] = (struct root_totals){
				.entries = so_far.entries, .files = so_far.files, .dirs = so_far.dirs,
				.bytes = so_far.bytes, .errors = so_far.errors,
				.reused = so_far.reused, .hashed = so_far.hashed,
			};
			result->nscans = r + 1;
			continue;
		}
		struct fidx_scan_info info = {
			.root = roots[r], .host = sys.host, .os = sys.os, .kernel = sys.kernel,
			.arch = sys.arch, .version = FIDX_VERSION, .options = opts->options_json,
			.started_ns = fidx_now_ns(),
		};
		s.scan_ids[r] = fidx_store_begin_scan(st, &info);
		if (s.scan_ids[r] < 0) {
			note_failure(&s, fidx_store_errmsg(st));
			goto fail_setup;
		}
		result->nscans = r + 1;
	}
	if (note_own_files(&s) < 0) {
		note_failure(&s, "out of memory");
		goto fail_setup;
	}

	if (pthread_create(&writer_tid, NULL, writer, &s) != 0) {
		note_failure(&s, "cannot start the writer thread");
		goto fail_setup;
	}
	if (opts->digests) {
		struct fidx_hashio_opts hopts = {
			.digests = opts->digests, .mode = opts->io, .jobs = jobs,
			.readers = fidx_scan_io_threads(jobs),
			.prefetch = prefetch_budget(fidx_scan_io_threads(jobs)),
			.drop_cache = opts->drop_cache, .in = s.hash_q, .cancel = opts->cancel,
			.stop = &s.stop, .bytes_hashed = &s.counters.bytes_hashed,
			.files_hashed = &s.counters.files_hashed, .thread_start = producer_start,
			.done = hashed, .thread_end = producer_end, .fail = hashio_failed, .arg = &s,
		};
		if (!(hashio = fidx_hashio_start(&hopts)) && !atomic_load(&s.failed)) {
			char msg[128];
			snprintf(msg, sizeof(msg), "cannot set up hashing: %s", strerror(errno));
			pipeline_fail(&s, msg);
		}
	}
	if (opts->progress)
		progress = fidx_progress_start(&s.counters, opts->digests != 0);

	struct fidx_walk_opts wopts = {
		.threads = fidx_scan_io_threads(jobs),
		.flags = FIDX_WALK_READ_LINKS | (opts->no_stat ? 0 : FIDX_WALK_STAT) |
			 (opts->follow ? FIDX_WALK_FOLLOW : 0) | (opts->xdev ? FIDX_WALK_XDEV : 0),
		.exclude = opts->excludes, .entry = on_entry, .leave = on_leave,
		.thread_start = producer_start, .thread_end = producer_end, .arg = &s, .cancel = &s.stop,
	};
	if (!atomic_load(&s.stop) && fidx_walk(roots, nroots, &wopts) < 0)
		pipeline_fail(&s, "cannot start the walk: out of memory");
	atomic_store(&s.counters.walk_done, true);
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
	if (ended && !atomic_load(&s.failed) && fidx_store_build_indexes(st) < 0 &&
	    !(result->index_error = strdup(fidx_store_errmsg(st))))
		note_failure(&s, "out of memory");
	for (size_t r = 0; r < nroots; r++) {
		result->entries += s.totals[r].entries;
		result->files += s.totals[r].files;
		result->dirs += s.totals[r].dirs;
		result->bytes += s.totals[r].bytes;
		result->errors += s.totals[r].errors;
		result->reused += s.totals[r].reused;
		result->hashed += s.totals[r].hashed;
		result->bytes_hashed += s.totals[r].hashed_bytes;
		result->unfinished += s.totals[r].unfinished;
	}
	/* Failed is failed, whether or not the failure could be described. */
	if (!has_failure(&s) && !atomic_load(&s.failed))
		ret = 0;
	goto out;
fail_setup:
	/* Before any thread ran: end the rows begun so far as failed. */
	atomic_store(&s.failed, true);
	end_scans(&s, result->nscans, false, result);
out:
	fidx_progress_stop(progress);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	result->seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (s.hash_q && s.write_q)
		drain(&s);
	fidx_queue_destroy(s.hash_q);
	fidx_queue_destroy(s.write_q);
	result->scan_ids = s.scan_ids;
	for (size_t i = 0; i < s.nown; i++)
		free(s.own[i].path);
	free(s.own);
	free(s.totals);
	free(s.uncommitted);
	if (ret < 0) /* NULL when out of memory: the caller then says so */
		*errmsg = strdup(s.errmsg[0] ? s.errmsg : "out of memory");
	return ret;
}
