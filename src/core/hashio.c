/*
 * hashio.c - the hashing stage: reading files and computing their digests.
 *
 * Solid-state mode (FIDX_IO_SSD), the default:
 *
 *   in ──► workers (opts.readers of them) ───────────────────────► done()
 *           │ small file: open, read, hash, fstat, close, in one thread
 *           │ cold cache: its batch opened at once, POSIX_FADV_WILLNEED
 *           │ large file: ──► stream queue ──► streamers ──┐
 *           ◄──────────── blocks of the file, in order ◄───┘
 *
 * A worker reads and hashes a small file itself: nothing crosses threads but
 * the record.  There are more workers than CPUs (fidx_scan_io_threads()), so
 * that with a cold cache more reads are in flight than there are cores.  A
 * file of STREAM_MIN bytes or more is read by a streamer thread while the
 * worker hashes the blocks already read: one huge file then runs at the
 * digest's speed, because the copy out of the page cache (or the wait on the
 * disk) happens on another core.  There is one streamer per worker, so a
 * worker never waits for a streamer to be free.  With a cold cache, threads
 * alone keep too few reads in flight: a worker opens the small files of its
 * batch (up to PREFETCH_MAX) and asks the kernel for them ahead (prefetch()),
 * so that a few hundred files are being read at once.
 *
 * Spinning mode (FIDX_IO_HDD):
 *
 *   in ──► workers (jobs) ── file wholly in the page cache: hashed here, a
 *           │                 large one with a streamer, as above ──────► done()
 *           │ not cached
 *           ▼
 *          cold queue ──► reader (1) ──► job queue ──► hashers (jobs) ──► done()
 *                         windows of up to HDD_WINDOW files, sorted by the
 *                         disk offset of their first extent (FIEMAP), else
 *                         by inode number
 *
 * One reader reads one file at a time, so the disk head moves forward
 * instead of between many files; the hashers hash in parallel what it read.
 * The reader waits for a full window (or the end of the walk) so that the
 * order covers many files.  A file the page cache holds needs no disk:
 * cachestat(2) tells without starting I/O, and the workers hash such files
 * at once, so a warm scan (or a virtual disk that only claims to spin) costs
 * what SSD mode costs.
 *
 * Blocks.  A file read by another thread travels as a job: its record and a
 * list of blocks (BLOCK_SIZE each, from a fixed pool).  The reader appends
 * blocks, at most AHEAD ahead of the hasher (then it waits until the hasher
 * is AHEAD / 2 behind: one wake-up per few blocks), and ends the job with the
 * result of reading (error, or the fstat() check that the file did not
 * change); the hasher takes the blocks in order and returns them to the
 * pool.  A reader never abandons a job it started and a hasher never
 * abandons one it took, so neither can wait forever on the other; on a stop
 * or cancel the reader ends its jobs at once with an error.  In HDD mode a
 * job is handed to the hashers when it ends or before its second block is
 * read; the reader works on one file at a time, so every job handed over
 * before the current one is complete, every block but the current file's
 * first belongs to a job a hasher will take, and the reader's wait for a
 * free block always ends.
 *
 * What is checked.  Reading stops at the size the walk saw; then fstat()
 * must show the same regular file (device, inode), the same size and the
 * same modification time, else the record gets "changed during scan" and no
 * digest.  A small file thus costs openat, read, fstat and close (and in
 * HDD mode a cachestat).  --drop-cache adds POSIX_FADV_DONTNEED before the
 * close.
 */
#include "hashio.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "blockdev.h"
#include "fdutil.h"
#include "hash.h"

#define BLOCK_SIZE (256 * 1024)       /* bytes per block a streamer or reader reads */
#define AHEAD 8                       /* blocks a reader may be ahead of the hasher */
#define STREAM_MIN (4 * 1024 * 1024)  /* files this large are read by a streamer */
#define WORKER_BATCH 8                /* records a worker takes at once ... */
#define PREFETCH_MAX 32               /* ... or, prefetching, at most this many */
#define PREFETCH_BYTES (1024 * 1024)  /* bytes of a file asked for ahead (WILLNEED) */
#define HDD_WINDOW 8192               /* files the HDD reader orders at once */
#define HDD_BLOCKS 64                 /* blocks in the HDD pool (16 MiB) */
#define HDD_BATCH 8                   /* jobs an HDD hasher takes at once */
#define JOB_QUEUE_CAP 1024            /* HDD: jobs read, waiting for a hasher */

/* cachestat(2), Linux 6.5; the number is the same on every architecture. */
#ifdef SYS_cachestat
#define FIDX_NR_CACHESTAT SYS_cachestat
#else
#define FIDX_NR_CACHESTAT 451
#endif

struct block {
	struct block *next;   /* next block of the job, or of the free list */
	size_t len;           /* bytes in data */
	unsigned char *data;  /* BLOCK_SIZE bytes */
};

/* A fixed set of blocks shared by the readers. */
struct pool {
	pthread_mutex_t lock;
	pthread_cond_t freed;  /* a block came back */
	struct block *free;    /* free list */
	struct block *blocks;  /* all of them, for freeing */
	unsigned char *mem;    /* their data */
};

/* A file on its way from a reader to a hasher. */
struct job {
	struct fidx_record *rec;
	pthread_mutex_t lock;
	pthread_cond_t cond;      /* a block was added or taken, or the job ended */
	struct block *head;       /* blocks read and not yet hashed, oldest first */
	struct block **tailp;     /* where the next block goes */
	unsigned pending;         /* blocks in the list */
	bool reader_waits;        /* the reader waits for pending to fall to AHEAD / 2 */
	bool hasher_waits;        /* the hasher waits for a block or the end */
	bool ended;               /* the reader is done with the file */
	bool for_hashers;         /* HDD reader's job: handed to the hashers as it is read */
	bool published;           /* ... and it has been */
	const char *error_op;     /* when reading failed: what failed, with error */
	int error;                /* its errno, or 0 */
	uint64_t bytes;           /* bytes read */
};

/* A record and the key that orders it for reading (HDD). */
struct ordered {
	uint64_t key;
	struct fidx_record *rec;
};

/* What a thread of the stage does. */
enum role { WORKER, STREAMER, READER, HASHER };

struct fidx_hashio {
	struct fidx_hashio_opts o;
	struct pool pool;
	struct fidx_queue *stream_q;  /* large files the workers hand to the streamers */
	struct fidx_queue *jobs_q;    /* HDD: jobs the reader hands to the hashers */
	struct fidx_queue *cold_q;    /* HDD: records the workers found not cached, for the reader */
	struct thread *threads;       /* nthreads_max of them */
	unsigned nthreads_max;        /* threads of the stage */
	unsigned nthreads;            /* threads started */
	size_t prefetch;              /* SSD: files a worker opens ahead when cold, 0 or >= 2 */
	void **window;                /* HDD: the reader's window of records */
	struct ordered *order;        /* HDD: and its sort keys */
};

/* One thread of the stage. */
struct thread {
	struct fidx_hashio *io;
	enum role role;
	pthread_t tid;
	struct fidx_hasher *hasher;   /* workers and hashers */
};

int fidx_io_mode_parse(const char *name, enum fidx_io_mode *mode)
{
	static const char *const names[] = {"auto", "ssd", "hdd"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(name, names[i]) == 0) {
			*mode = (enum fidx_io_mode)i;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

const char *fidx_io_mode_name(enum fidx_io_mode mode)
{
	return mode == FIDX_IO_HDD ? "hdd" : mode == FIDX_IO_SSD ? "ssd" : "auto";
}

/* True when files not yet read must not be: a failure or the user's cancel. */
static bool stopping(const struct fidx_hashio *io)
{
	return atomic_load_explicit(io->o.stop, memory_order_relaxed) ||
	       (io->o.cancel && atomic_load_explicit(io->o.cancel, memory_order_relaxed));
}

/* Makes n blocks.  Returns 0, or -1 (ENOMEM). */
static int pool_init(struct pool *p, unsigned n)
{
	p->blocks = calloc(n, sizeof(*p->blocks));
	p->mem = aligned_alloc(4096, (size_t)n * BLOCK_SIZE);
	if (!p->blocks || !p->mem) {
		free(p->blocks);
		free(p->mem);
		p->blocks = NULL; /* stage_free() then leaves the pool alone */
		p->mem = NULL;
		errno = ENOMEM;
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		p->blocks[i].data = p->mem + (size_t)i * BLOCK_SIZE;
		p->blocks[i].next = i + 1 < n ? &p->blocks[i + 1] : NULL;
	}
	p->free = &p->blocks[0];
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->freed, NULL);
	return 0;
}

/* Frees the pool (every block back in it). */
static void pool_destroy(struct pool *p)
{
	pthread_cond_destroy(&p->freed);
	pthread_mutex_destroy(&p->lock);
	free(p->blocks);
	free(p->mem);
}

/* Takes a free block, waiting for one (see the header: the wait ends). */
static struct block *pool_get(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	while (!p->free)
		pthread_cond_wait(&p->freed, &p->lock);
	struct block *b = p->free;
	p->free = b->next;
	pthread_mutex_unlock(&p->lock);
	b->next = NULL;
	return b;
}

/* Gives block b back, waking one thread waiting for a block. */
static void pool_put(struct pool *p, struct block *b)
{
	pthread_mutex_lock(&p->lock);
	b->next = p->free;
	p->free = b;
	pthread_cond_signal(&p->freed);
	pthread_mutex_unlock(&p->lock);
}

/* Makes a job for rec.  Returns NULL on ENOMEM. */
static struct job *job_new(struct fidx_record *rec)
{
	struct job *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->rec = rec;
	j->tailp = &j->head;
	pthread_mutex_init(&j->lock, NULL);
	pthread_cond_init(&j->cond, NULL);
	return j;
}

/* Frees a job whose blocks were all taken. */
static void job_free(struct job *j)
{
	pthread_cond_destroy(&j->cond);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

/*
 * Appends a block.  When the hasher is AHEAD blocks behind, waits until it
 * has caught up by half of that, so that the two threads wake each other
 * once per AHEAD / 2 blocks rather than once per block.
 */
static void job_add(struct job *j, struct block *b)
{
	pthread_mutex_lock(&j->lock);
	while (j->pending >= AHEAD) {
		j->reader_waits = true;
		pthread_cond_wait(&j->cond, &j->lock);
	}
	*j->tailp = b;
	j->tailp = &b->next;
	j->pending++;
	if (j->hasher_waits)
		pthread_cond_signal(&j->cond);
	pthread_mutex_unlock(&j->lock);
}

/* Ends the job (the reader's last touch of it). */
static void job_end(struct job *j)
{
	pthread_mutex_lock(&j->lock);
	j->ended = true;
	if (j->hasher_waits)
		pthread_cond_signal(&j->cond);
	pthread_mutex_unlock(&j->lock);
}

/* Takes the job's next block, waiting for it; NULL once the job ended. */
static struct block *job_take(struct job *j)
{
	pthread_mutex_lock(&j->lock);
	while (!j->head && !j->ended) {
		j->hasher_waits = true;
		pthread_cond_wait(&j->cond, &j->lock);
	}
	j->hasher_waits = false;
	struct block *b = j->head;
	if (b) {
		j->head = b->next;
		if (!j->head)
			j->tailp = &j->head;
		j->pending--;
		if (j->reader_waits && j->pending <= AHEAD / 2) {
			j->reader_waits = false;
			pthread_cond_signal(&j->cond);
		}
	}
	pthread_mutex_unlock(&j->lock);
	return b;
}

int fidx_hashio_open(const char *path, bool follow)
{
	int flags = O_RDONLY | O_NONBLOCK | O_NOATIME | O_CLOEXEC;
	if (!follow)
		flags |= O_NOFOLLOW;
	int fd = fidx_open_long(path, flags);
	if (fd < 0 && errno == EPERM) /* O_NOATIME needs ownership or CAP_FOWNER */
		fd = fidx_open_long(path, flags & ~O_NOATIME);
	return fd;
}

/* Opens a record's file for reading: never follows a link it did not follow. */
static int open_for_hash(const struct fidx_record *rec)
{
	return fidx_hashio_open(rec->path, rec->link_target != NULL);
}

const char *fidx_hashio_check(int fd, const struct fidx_meta *m, uint64_t bytes)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return "stat";
	errno = 0;
	if (!S_ISREG(st.st_mode) || st.st_ino != m->ino || st.st_dev != m->dev ||
	    (uint64_t)st.st_size != m->size || bytes != m->size ||
	    (int64_t)st.st_mtim.tv_sec != m->mtime.sec ||
	    (uint32_t)st.st_mtim.tv_nsec != m->mtime.nsec)
		return "changed during scan";
	return NULL;
}

/* Closes fd, first dropping its pages from the cache when asked. */
static void close_file(const struct fidx_hashio *io, int fd)
{
	if (io->o.drop_cache)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

/*
 * Sets the record's outcome: the error of reading (op and errnum, or an
 * interrupted read), or the digests.
 */
static void settle(const struct fidx_hashio *io, struct fidx_record *rec, const char *op,
		   int errnum, uint64_t bytes)
{
	int ret = 0;
	if (op && errnum == ECANCELED)
		ret = fidx_record_set_error(rec, FIDX_ERROR_NOT_HASHED, 0);
	else if (op)
		ret = fidx_record_set_error(rec, op, errnum);
	else
		rec->digest_mask = io->o.digests;
	/* A record without its error would pass for one without a digest. */
	if (ret < 0)
		io->o.fail(io->o.arg, "out of memory");
	/* Bytes of a file that changed or failed were not all hashed: count the
	 * difference (modulo 2^64, so a file that grew counts less), so that the
	 * progress total stays the sum of the sizes the walk saw. */
	if (bytes != rec->meta.size)
		atomic_fetch_add_explicit(io->o.bytes_hashed, rec->meta.size - bytes,
					  memory_order_relaxed);
}

/*
 * Whether the page cache holds every page of fd's first size bytes, as
 * cachestat(2) (Linux 6.5) tells without starting any I/O.  False when the
 * kernel cannot tell.
 */
static bool all_cached(int fd, uint64_t size)
{
	struct {
		uint64_t off, len;
	} range = {0, size};
	struct {
		uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
	} cs;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	if (size == 0)
		return true;
	if (syscall(FIDX_NR_CACHESTAT, fd, &range, &cs, 0) < 0)
		return false;
	return cs.nr_cache >= (size + page - 1) / page;
}

/*
 * Reads and hashes a file in the calling thread and settles its record; fd
 * is the file already open (it is closed), or -1.  With only_cached, a file
 * not wholly in the page cache is left for the HDD reader: then it returns
 * false and the record is untouched.
 */
static bool hash_here(struct fidx_hashio *io, struct fidx_hasher *h, struct fidx_record *rec,
		      int fd, bool only_cached)
{
	uint64_t bytes = 0;
	const char *op = NULL;
	if (fd < 0)
		fd = open_for_hash(rec);
	if (fd < 0) {
		settle(io, rec, "open", errno, 0);
		return true;
	}
	if (only_cached && !all_cached(fd, rec->meta.size)) {
		close(fd);
		return false;
	}
	int hashed = fidx_hash_fd(h, fd, rec->meta.size, rec->digest, &bytes, io->o.bytes_hashed,
				  io->o.cancel);
	if (hashed == -2) {
		/* Not the file's fault: the scan fails, the file left not hashed. */
		io->o.fail(io->o.arg, "cannot compute digests: out of memory");
		errno = ECANCELED;
		op = "hash";
	} else if (hashed < 0) {
		op = errno == ECANCELED ? "interrupted" : "read";
	} else {
		op = fidx_hashio_check(fd, &rec->meta, bytes);
	}
	int err = errno;
	close_file(io, fd);
	settle(io, rec, op, err, bytes);
	return true;
}

/* HDD: hands a job of the reader to the hashers. */
static void publish(struct fidx_hashio *io, struct job *j)
{
	j->published = true;
	if (fidx_queue_push(io->jobs_q, j) < 0)
		abort(); /* jobs_q is never aborted */
}

/*
 * Reads a job's file into blocks (the reader's or a streamer's side).  Ends
 * the job; a job for the hashers is handed to them after its first block.
 */
static void read_job(struct fidx_hashio *io, struct job *j)
{
	const struct fidx_record *rec = j->rec;
	int fd = -1;
	if (stopping(io)) {
		j->error_op = "interrupted";
		j->error = ECANCELED;
		goto end;
	}
	fd = open_for_hash(rec);
	if (fd < 0) {
		j->error_op = "open";
		j->error = errno;
		goto end;
	}
	if (rec->meta.size > BLOCK_SIZE)
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	while (j->bytes < rec->meta.size) {
		if (stopping(io)) {
			j->error_op = "interrupted";
			j->error = ECANCELED;
			goto end;
		}
		struct block *b = pool_get(&io->pool);
		ssize_t n;
		/* Never past the walk's size: a file that grew is not read on. */
		uint64_t left = rec->meta.size - j->bytes;
		do
			n = read(fd, b->data, left < BLOCK_SIZE ? (size_t)left : BLOCK_SIZE);
		while (n < 0 && errno == EINTR);
		if (n <= 0) {
			pool_put(&io->pool, b);
			if (n < 0) {
				j->error_op = "read";
				j->error = errno;
				goto end;
			}
			break;
		}
		/* HDD: a file of one block is handed over when it ends, a longer
		 * one before its second block, so that its hasher starts. */
		if (j->for_hashers && !j->published && j->bytes > 0)
			publish(io, j);
		b->len = (size_t)n;
		j->bytes += (uint64_t)n;
		job_add(j, b);
	}
	j->error_op = fidx_hashio_check(fd, &rec->meta, j->bytes);
	j->error = errno;
end:
	if (fd >= 0)
		close_file(io, fd);
	bool unpublished = j->for_hashers && !j->published;
	job_end(j);
	if (unpublished)
		publish(io, j);
}

/*
 * Hashes a job's blocks as they come (the hasher's side), then settles its
 * record and frees the job.  Returns the record.
 */
static struct fidx_record *hash_job(struct fidx_hashio *io, struct fidx_hasher *h, struct job *j)
{
	struct fidx_record *rec = j->rec;
	bool ok = fidx_hasher_reset(h) == 0;
	uint64_t hashed = 0;
	struct block *b;
	while ((b = job_take(j))) {
		if (ok) {
			ok = fidx_hasher_update(h, b->data, b->len) == 0;
			hashed += b->len;
			atomic_fetch_add_explicit(io->o.bytes_hashed, b->len, memory_order_relaxed);
		}
		pool_put(&io->pool, b);
	}
	/* The job ended: its fields are the reader's last writes, seen through
	 * the job's lock in job_take(). */
	if (j->error_op) {
		settle(io, rec, j->error_op, j->error, hashed);
	} else if (!ok || fidx_hasher_final(h, rec->digest) < 0) {
		/* Not the file's fault: the scan fails, the file left not hashed. */
		io->o.fail(io->o.arg, "cannot compute digests: out of memory");
		settle(io, rec, "hash", ECANCELED, hashed);
	} else {
		settle(io, rec, NULL, 0, hashed);
	}
	job_free(j);
	return rec;
}

/* Hands a finished record on; after a failure of done(), records are only freed. */
static void finish_record(struct fidx_hashio *io, void *ctx, struct fidx_record *rec)
{
	atomic_fetch_add_explicit(io->o.files_hashed, 1, memory_order_relaxed);
	io->o.done(ctx, rec);
}

/*
 * Whether the page cache holds all of rec's file (HDD: such a file is not the
 * reader's).  False when it cannot be opened: hash_here() then records why.
 */
static bool cached_whole(const struct fidx_record *rec)
{
	int fd = open_for_hash(rec);
	if (fd < 0)
		return false;
	bool cached = all_cached(fd, rec->meta.size);
	close(fd);
	return cached;
}

/*
 * SSD, a cold cache: asks the kernel to start reading the small files of a
 * worker's batch at once (POSIX_FADV_WILLNEED on their first PREFETCH_BYTES),
 * so that many more reads are in flight than there are workers; the worker
 * then hashes them one by one with the descriptors opened here (fds[i], -1
 * where none).  The first file opened decides: when the page cache holds it
 * whole, the batch is taken as warm and nothing more is opened ahead.
 */
static void prefetch(struct fidx_record **batch, size_t n, int *fds)
{
	bool decided = false;
	for (size_t i = 0; i < n; i++)
		fds[i] = -1;
	for (size_t i = 0; i < n; i++) {
		const struct fidx_record *rec = batch[i];
		if (rec->meta.size == 0 || rec->meta.size >= STREAM_MIN)
			continue; /* nothing to read, or a streamer's */
		/* A failed open is left to hash_here(), which records why. */
		if ((fds[i] = open_for_hash(rec)) < 0)
			continue;
		if (!decided) {
			decided = true;
			if (all_cached(fds[i], rec->meta.size))
				return;
		}
		posix_fadvise(fds[i], 0, rec->meta.size < PREFETCH_BYTES ? (off_t)rec->meta.size
									 : PREFETCH_BYTES,
			      POSIX_FADV_WILLNEED);
	}
}

/*
 * A worker: hashes small files itself, and large ones while a streamer reads
 * them.  HDD: only files the page cache holds; it hands the others to the
 * reader, which reads them in disk order.
 */
static void run_worker(struct fidx_hashio *io, struct fidx_hasher *h, void *ctx)
{
	bool hdd = io->o.mode == FIDX_IO_HDD;
	size_t take = io->prefetch > 1 ? io->prefetch : WORKER_BATCH;
	struct fidx_record *batch[PREFETCH_MAX > WORKER_BATCH ? PREFETCH_MAX : WORKER_BATCH];
	int fds[sizeof(batch) / sizeof(batch[0])];
	size_t n;
	while ((n = fidx_queue_pop_many(io->o.in, (void **)batch, take, false)) > 0) {
		if (io->prefetch > 1 && !stopping(io))
			prefetch(batch, n, fds);
		else
			for (size_t i = 0; i < n; i++)
				fds[i] = -1;
		for (size_t i = 0; i < n; i++) {
			struct fidx_record *rec = batch[i];
			struct job *j;
			if (stopping(io)) {
				if (fds[i] >= 0)
					close(fds[i]);
				settle(io, rec, "interrupted", ECANCELED, 0);
			} else if (rec->meta.size >= STREAM_MIN && (!hdd || cached_whole(rec)) &&
				   (j = job_new(rec))) {
				if (fidx_queue_push(io->stream_q, j) < 0)
					abort(); /* stream_q is never aborted */
				rec = hash_job(io, h, j);
			} else if (!hash_here(io, h, rec, fds[i], hdd)) {
				if (fidx_queue_push(io->cold_q, rec) < 0)
					abort(); /* cold_q is never aborted */
				continue;
			}
			finish_record(io, ctx, rec);
		}
	}
	/* The last worker out lets the streamers, and the reader, end. */
	fidx_queue_done(io->stream_q);
	if (hdd)
		fidx_queue_done(io->cold_q);
}

/* A streamer: reads the large files the workers hand it. */
static void run_streamer(struct fidx_hashio *io)
{
	struct job *j;
	while ((j = fidx_queue_pop(io->stream_q)))
		read_job(io, j);
}


/* Compares two keys, for qsort(). */
static int cmp_ordered(const void *a, const void *b)
{
	const struct ordered *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

/*
 * Sorts a window of records into the order to read them: by inode first
 * (cheap, and it makes the opens below walk the inode tables in order), then
 * by the physical offset of each file's first extent, where the filesystem
 * tells it.  Files without an extent (empty, or data inline in the inode)
 * come first: they need no seek of their own.
 */
static void order_window(struct fidx_hashio *io, void **win, size_t n, struct ordered *ord)
{
	bool fiemap = true;
	for (size_t i = 0; i < n; i++) {
		ord[i].rec = win[i];
		ord[i].key = ord[i].rec->meta.ino;
	}
	qsort(ord, n, sizeof(*ord), cmp_ordered);
	for (size_t i = 0; i < n && fiemap && !stopping(io); i++) {
		uint64_t phys = 0;
		int fd = open_for_hash(ord[i].rec);
		if (fd < 0)
			continue; /* the read will record why */
		if (fidx_file_first_extent(fd, &phys) < 0 && errno != ENODATA)
			fiemap = false; /* no FIEMAP here: keep inode order */
		close(fd);
		ord[i].key = phys;
	}
	if (fiemap)
		qsort(ord, n, sizeof(*ord), cmp_ordered);
	else
		for (size_t i = 0; i < n; i++)
			ord[i].key = ord[i].rec->meta.ino;
	for (size_t i = 0; i < n; i++)
		win[i] = ord[i].rec;
}

/*
 * The HDD reader: windows of files, in disk order, one at a time.  It calls
 * done() only for a record it could make no job for (out of memory).
 */
static void run_reader(struct fidx_hashio *io, void *ctx)
{
	size_t n;
	while ((n = fidx_queue_pop_many(io->cold_q, io->window, HDD_WINDOW, true)) > 0) {
		order_window(io, io->window, n, io->order);
		for (size_t i = 0; i < n; i++) {
			struct fidx_record *rec = io->window[i];
			struct job *j = job_new(rec);
			if (j) {
				j->for_hashers = true;
				read_job(io, j);
				continue;
			}
			io->o.fail(io->o.arg, "out of memory");
			settle(io, rec, "interrupted", ECANCELED, 0);
			finish_record(io, ctx, rec);
		}
	}
	fidx_queue_done(io->jobs_q);
}

/* An HDD hasher: hashes the jobs the reader publishes. */
static void run_hasher(struct fidx_hashio *io, struct fidx_hasher *h, void *ctx)
{
	void *batch[HDD_BATCH];
	size_t n;
	/* Every job published before the newest is complete, so a batch never
	 * waits on a job behind it. */
	while ((n = fidx_queue_pop_many(io->jobs_q, batch, HDD_BATCH, false)) > 0)
		for (size_t i = 0; i < n; i++)
			finish_record(io, ctx, hash_job(io, h, batch[i]));
}

/* A thread of the stage. */
static void *stage_thread(void *arg)
{
	struct thread *t = arg;
	struct fidx_hashio *io = t->io;
	if (t->role == STREAMER) {
		run_streamer(io);
		return NULL;
	}
	void *ctx = io->o.thread_start(io->o.arg);
	switch (t->role) {
	case WORKER:
		run_worker(io, t->hasher, ctx);
		break;
	case READER:
		run_reader(io, ctx);
		break;
	default:
		run_hasher(io, t->hasher, ctx);
		break;
	}
	io->o.thread_end(ctx, io->o.arg);
	return NULL;
}

/* Frees what fidx_hashio_start() made; the threads have ended. */
static void stage_free(struct fidx_hashio *io)
{
	for (unsigned i = 0; io->threads && i < io->nthreads_max; i++)
		fidx_hasher_destroy(io->threads[i].hasher);
	free(io->threads);
	fidx_queue_destroy(io->stream_q);
	fidx_queue_destroy(io->jobs_q);
	fidx_queue_destroy(io->cold_q);
	if (io->pool.blocks)
		pool_destroy(&io->pool);
	free(io->window);
	free(io->order);
	free(io);
}

struct fidx_hashio *fidx_hashio_start(const struct fidx_hashio_opts *opts)
{
	struct fidx_hashio *io = calloc(1, sizeof(*io));
	if (!io)
		return NULL;
	io->o = *opts;
	bool hdd = opts->mode == FIDX_IO_HDD;
	unsigned workers = hdd ? opts->jobs : opts->readers ? opts->readers : opts->jobs;
	if (!hdd && opts->prefetch / workers >= 2)
		io->prefetch = opts->prefetch / workers < PREFETCH_MAX ? opts->prefetch / workers
								     : PREFETCH_MAX;
	/* A streamer per worker; HDD: also the hashers and the reader. */
	io->nthreads_max = hdd ? 3 * workers + 1 : 2 * workers;
	io->threads = calloc(io->nthreads_max, sizeof(*io->threads));
	io->stream_q = fidx_queue_create(workers, workers);
	if (!io->threads || !io->stream_q ||
	    pool_init(&io->pool, AHEAD * workers + (hdd ? HDD_BLOCKS : 0)) < 0)
		goto fail;
	if (hdd && (!(io->jobs_q = fidx_queue_create(JOB_QUEUE_CAP, 1)) ||
		    !(io->cold_q = fidx_queue_create(HDD_WINDOW, workers)) ||
		    !(io->window = malloc(HDD_WINDOW * sizeof(*io->window))) ||
		    !(io->order = malloc(HDD_WINDOW * sizeof(*io->order)))))
		goto fail;
	for (unsigned i = 0; i < io->nthreads_max; i++) {
		struct thread *t = &io->threads[i];
		t->io = io;
		/* Consumers start before their producers (see fail_running). */
		if (hdd)
			t->role = i < workers ? HASHER : i == workers ? READER
					: i <= 2 * workers ? STREAMER : WORKER;
		else
			t->role = i < workers ? STREAMER : WORKER;
		if ((t->role == WORKER || t->role == HASHER) &&
		    !(t->hasher = fidx_hasher_create(opts->digests)))
			goto fail;
	}
	for (; io->nthreads < io->nthreads_max; io->nthreads++) {
		struct thread *t = &io->threads[io->nthreads];
		int err = pthread_create(&t->tid, NULL, stage_thread, t);
		if (err) {
			errno = err;
			goto fail_running;
		}
	}
	return io;

fail_running:
	/* The threads that run end once the input queue is aborted (fail()
	 * does it) and the inner queues are closed: the roles that never
	 * started close theirs for themselves.  Consumers were started before
	 * their producers, so no producer waits on one that does not exist. */
	{
		int saved = errno;
		for (unsigned i = io->nthreads; i < io->nthreads_max; i++) {
			enum role role = io->threads[i].role;
			if (role == READER) {
				fidx_queue_done(io->jobs_q);
			} else if (role == WORKER) {
				fidx_queue_done(io->stream_q);
				if (hdd)
					fidx_queue_done(io->cold_q);
			}
		}
		io->o.fail(io->o.arg, "cannot start the hashing threads");
		fidx_hashio_finish(io);
		errno = saved;
		return NULL;
	}
fail:
	stage_free(io);
	if (!errno)
		errno = ENOMEM;
	return NULL;
}

void fidx_hashio_finish(struct fidx_hashio *io)
{
	if (!io)
		return;
	for (unsigned i = 0; i < io->nthreads; i++)
		pthread_join(io->threads[i].tid, NULL);
	stage_free(io);
}
