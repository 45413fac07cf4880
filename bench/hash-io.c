/*
 * hash-io.c - measures how to get more reads in flight than there are cores
 * when hashing a tree with a cold cache: threads, fadvise hints, readers
 * separate from hashers, and io_uring (docs/BENCHMARKS.md, "Cold reads").
 *
 *	build/bench/hash-io [-c | -C] [-r RUNS] [-b BYTES] -m MODES PATH...
 *
 * Each PATH is a regular file or a directory, walked once before any timing
 * with nftw(FTW_PHYS) for its regular files and their sizes, in walk order.
 * Every mode SHA-256-hashes every file (OpenSSL EVP), reading it in blocks
 * of BYTES (default FIDX_HASH_READ_SIZE) and stopping at the size the walk
 * saw, as fidx does: a small file costs one read.  Files are opened
 * O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC|O_NOATIME, as fidx opens them.
 * The modes (MODES is a comma-separated list of them):
 *
 *   threads:N     N threads take the next file from a shared counter and
 *                 open, read, hash and close it: fidx's hash workers.
 *   seq:N         threads:N, plus posix_fadvise(POSIX_FADV_SEQUENTIAL) on
 *                 every file larger than one block (twice the readahead).
 *   fadvise:N:K   threads:N, and a thread that takes file i first opens the
 *                 files up to i + K not yet opened and asks the kernel to
 *                 read them (posix_fadvise(POSIX_FADV_WILLNEED) on their
 *                 first PREFETCH_MAX bytes), keeping each descriptor in a
 *                 slot for the thread that will take that file.  So about
 *                 K files are being read ahead while N are hashed.
 *   adapt:N:K     fadvise:N:K, but only while the cache is seen cold: every
 *                 file's first read is a preadv2(RWF_NOWAIT), and when one
 *                 fails with EAGAIN (the data was not cached) the prefetch
 *                 is on for the next ADAPT_SPAN * K files.  A warm tree
 *                 thus pays no fadvise and no descriptor hand-over.
 *   split:R:H     R reader threads open and read files into blocks (each
 *                 reader owns READER_BLOCKS of them) and H hasher threads
 *                 hash them: a file's blocks form a job, which a hasher
 *                 takes whole, in order.
 *   uring:Q:H[:S] S submitter threads (default 1), each with its own ring
 *                 and 2Q+H blocks, keep Q reads in flight each with
 *                 io_uring (liburing): a submitter claims the next file from
 *                 the shared counter, issues all of its reads (several
 *                 blocks of a large file at once), then claims the next; it
 *                 opens and closes each file itself, synchronously.  H
 *                 hasher threads as in split.
 *   uringat:Q:H[:S]  uring, but the opens go through the ring too
 *                 (IORING_OP_OPENAT, up to Q files claimed ahead of the
 *                 reads), so that an open that must read an inode from disk
 *                 does not hold up the submitter.
 *
 * In split and uring modes, blocks are the unit of memory: a job (one file)
 * is a list of blocks in file order.  A reader or a submitter appends
 * blocks to the job it is reading, a hasher takes blocks from the head of
 * the job it holds and gives each one back once hashed.  Deadlock freedom:
 * every reader or submitter has its own blocks and fills them for one file
 * at a time (a submitter issues every read of a file before the first of
 * the next), and hashers take jobs in the order they were first touched.
 * So a feeder's blocks are held by its current job, or by its earlier jobs,
 * which are complete and queued ahead of it; a hasher waiting on a job
 * therefore always gets its blocks, once the hashers ahead of it give
 * theirs back.  One mutex guards the jobs, the job queue and the free
 * lists; hashing happens outside it.
 *
 * Runs are interleaved (run 1 of every mode, then run 2 ...) so that a slow
 * spell of this shared machine hits every mode alike; each mode's median is
 * reported.  -c starts every timed run from a cold data cache: sync, then
 * drop_caches with 1 (the page cache only), so that inodes and dentries stay
 * cached as they are when fidx's walk has just stat'ed the file and only the
 * file data must come from the disk.  -C drops with 3 (page cache, dentries
 * and inodes): metadata cold too.  Without either, an untimed pass warms the
 * cache first.  Every mode must produce the same digests (the XOR of all of
 * them) and the same byte count, so a broken mode cannot win.
 *
 * Output: a line with the file and byte counts and the XOR of all the
 * digests (to check against another tool), then one Markdown table: per
 * mode the median and the fastest wall-clock seconds, MB/s and files/s (from
 * the median), the median CPU seconds (user + system of the whole process,
 * io_uring's kernel workers included) and MB per CPU second, and time
 * relative to the best mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <liburing.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "bench.h"
#include "hash.h"

#define MAX_RUNS 15
#define MAX_MODES 32
#define MAX_THREADS 64
#define MAX_QUEUE 1024
#define SHA256_LEN 32
#define BLOCK_ALIGN 4096
#define READER_BLOCKS 16                  /* blocks each split reader owns */
#define PREFETCH_MAX (1024 * 1024)        /* fadvise: bytes advised per file */
#define SLOT_EMPTY (-1)                   /* fadvise: file not opened ahead */
#define SLOT_TAKEN (-2)                   /* fadvise: file taken by its hasher */
#define ADAPT_SPAN 4                      /* adapt: prefetch on for SPAN * K files after a wait */

enum kind { THREADS, SEQ, FADVISE, ADAPT, SPLIT, URING, URINGAT };

struct mode {
	char name[32];         /* as given with -m */
	enum kind kind;
	int a;                 /* threads N, readers R, or reads in flight Q */
	int b;                 /* files ahead K, or hashers H */
	int c;                 /* submitters S */
	double secs[MAX_RUNS]; /* wall-clock seconds of each run */
	double cpu[MAX_RUNS];  /* user + system CPU seconds of each run */
};

struct file {
	char *path;
	uint64_t size;         /* as the walk saw it */
};

/* A block of file data, in a job's list or in its owner's free list. */
struct block {
	struct block *next;    /* next block of the job, or next free one */
	struct source *owner;  /* the free list it returns to */
	unsigned char *data;   /* the bench's block size, page-aligned */
	size_t want;           /* uring: bytes asked for (and expected) */
	size_t len;            /* bytes read, valid once ready */
	bool ready;            /* the read completed */
	int job;               /* uring: index of the file */
};

/* A set of blocks owned by one reader or by the submitter. */
struct source {
	struct block *free;    /* free blocks (a stack) */
	struct block *blocks;  /* all of them, for freeing */
	unsigned char *mem;    /* their data */
	int nfree;             /* blocks on the free list */
	int low;               /* an owner out of blocks sleeps until this many are free */
	pthread_cond_t cv;     /* signalled when nfree reaches low */
	bool waiting;          /* the owner waits on cv */
};

/* One file in split and uring modes. */
struct job {
	struct block *head;    /* oldest block not yet hashed */
	struct block *tail;    /* last block appended (valid when head is not NULL) */
	pthread_cond_t *waiter; /* the hasher waiting on this job, or NULL */
	bool queued;           /* on the job queue */
	bool ended;            /* no block will be appended any more */
	int fd;                /* uring: the open file, or -1 */
	int pending;           /* uring: reads in flight (an open counts) */
};

/* The whole measurement; one run's state is reset by run_once(). */
struct bench {
	struct file *files;
	int nfiles;
	size_t block;          /* read size */
	EVP_MD *sha256;
	const struct mode *mode;
	atomic_int next;       /* threads, split: index of the next file to take */
	atomic_int ahead;      /* fadvise: files below this were opened ahead */
	atomic_int *slot;      /* fadvise: per file, a descriptor or SLOT_* */
	atomic_int cold_until; /* adapt: prefetch while taking files below this */
	/* split and uring, under lock: */
	pthread_mutex_t lock;
	pthread_cond_t queued; /* a job was queued, or every job was */
	struct job *jobs;      /* one per file */
	int *queue;            /* jobs in the order hashers take them */
	int qhead, qtail;
};

/* One thread: a worker, a reader, a hasher or the submitter. */
struct worker {
	struct bench *b;
	pthread_t tid;
	pthread_cond_t cv;       /* a hasher waits here for its job's blocks */
	struct source src;       /* a reader's or the submitter's blocks */
	uint8_t xor[SHA256_LEN]; /* XOR of every digest this thread made */
	uint64_t bytes;          /* bytes hashed */
};

/* Reads fd's next len bytes or fewer into buf, retrying EINTR; exits on error. */
static size_t read_block(int fd, const char *path, unsigned char *buf, size_t len)
{
	ssize_t n;

	while ((n = read(fd, buf, len)) < 0)
		if (errno != EINTR)
			die("cannot read '%s': %s", path, strerror(errno));
	return (size_t)n;
}

/* Exits unless a file read to its end had the size the walk saw. */
static void check_size(const struct file *f, uint64_t got)
{
	if (got != f->size)
		die("'%s' changed: %llu bytes read, %llu expected", f->path,
		    (unsigned long long)got, (unsigned long long)f->size);
}

/* Folds a digest into a thread's XOR. */
static void fold(struct worker *w, const uint8_t *md)
{
	for (int k = 0; k < SHA256_LEN; k++)
		w->xor[k] ^= md[k];
}

/*
 * Hashes file i from fd (which it closes) into the worker's XOR, reading
 * blocks into buf until the walk's size is reached or the file ends.  With
 * probe, the first read is a preadv2(RWF_NOWAIT), which fails with EAGAIN
 * instead of waiting when the data is not in the page cache (it still
 * starts the readahead); then the read is done again, blocking.  Returns
 * true when that probe had to give up: the file was cold.
 */
static bool hash_fd(struct worker *w, EVP_MD_CTX *ctx, unsigned char *buf,
		    int i, int fd, bool probe)
{
	const struct file *f = &w->b->files[i];
	uint8_t md[SHA256_LEN];
	uint64_t total = 0;
	bool cold = false;
	size_t n;

	if (!EVP_DigestInit_ex2(ctx, w->b->sha256, NULL))
		die("EVP_DigestInit_ex2 failed");
	if (probe && f->size > 0) {
		struct iovec iov = {buf, w->b->block};
		ssize_t got = preadv2(fd, &iov, 1, -1, RWF_NOWAIT);

		if (got > 0) {
			EVP_DigestUpdate(ctx, buf, (size_t)got);
			total = (uint64_t)got;
		} else if (got < 0 && errno != EAGAIN) {
			die("cannot read '%s': %s", f->path, strerror(errno));
		}
		cold = got < 0;
	}
	while (total < f->size &&
	       (n = read_block(fd, f->path, buf, w->b->block)) > 0) {
		EVP_DigestUpdate(ctx, buf, n);
		total += n;
	}
	close(fd);
	check_size(f, total);
	EVP_DigestFinal_ex(ctx, md, NULL);
	fold(w, md);
	w->bytes += total;
	return cold;
}

/*
 * fadvise, adapt: opens the files from the prefetch cursor (or from first,
 * when the cursor is behind it) up to last (inclusive) that no thread has
 * taken yet, advises WILLNEED on each, and parks its descriptor in the
 * file's slot.  Threads share the cursor; each file is opened ahead at most
 * once.
 */
static void prefetch(struct bench *b, int first, int last)
{
	int p;

	if (last >= b->nfiles)
		last = b->nfiles - 1;
	while ((p = atomic_load(&b->ahead)) <= last) {
		int fd, empty = SLOT_EMPTY, at = p < first ? first : p;
		off_t len;

		if (!atomic_compare_exchange_weak(&b->ahead, &p, at + 1))
			continue;
		p = at;
		if (atomic_load(&b->slot[p]) != SLOT_EMPTY)
			continue;
		fd = open_file(b->files[p].path);
		len = b->files[p].size > PREFETCH_MAX ? PREFETCH_MAX : 0;
		posix_fadvise(fd, 0, len, POSIX_FADV_WILLNEED);
		if (!atomic_compare_exchange_strong(&b->slot[p], &empty, fd))
			close(fd);
	}
}

/* Raises *v to at least x. */
static void atomic_raise(atomic_int *v, int x)
{
	int cur = atomic_load(v);

	while (cur < x && !atomic_compare_exchange_weak(v, &cur, x))
		;
}

/*
 * threads, seq, fadvise and adapt: hashes files from the shared counter
 * until none is left.
 */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct bench *b = w->b;
	const struct mode *m = b->mode;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char *buf = aligned_alloc(BLOCK_ALIGN, b->block);
	int i;

	if (!ctx || !buf)
		die("out of memory");
	while ((i = atomic_fetch_add(&b->next, 1)) < b->nfiles) {
		int fd = SLOT_EMPTY;

		if (m->kind == FADVISE || m->kind == ADAPT) {
			if (m->kind == FADVISE || i < atomic_load(&b->cold_until))
				prefetch(b, i + 1, i + m->b);
			fd = atomic_exchange(&b->slot[i], SLOT_TAKEN);
		}
		if (fd < 0)
			fd = open_file(b->files[i].path);
		if (m->kind == SEQ && b->files[i].size > b->block)
			posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		if (hash_fd(w, ctx, buf, i, fd, m->kind == ADAPT))
			atomic_raise(&b->cold_until, i + ADAPT_SPAN * m->b);
	}
	EVP_MD_CTX_free(ctx);
	free(buf);
	return NULL;
}

/* Gives n blocks of the bench's size to s. */
static void source_init(struct source *s, const struct bench *b, int n)
{
	s->blocks = xmalloc((size_t)n * sizeof(*s->blocks));
	s->mem = aligned_alloc(BLOCK_ALIGN, (size_t)n * b->block);
	if (!s->mem)
		die("out of memory");
	s->free = NULL;
	for (int k = 0; k < n; k++) {
		s->blocks[k].data = s->mem + (size_t)k * b->block;
		s->blocks[k].owner = s;
		s->blocks[k].next = s->free;
		s->free = &s->blocks[k];
	}
	s->nfree = n;
	s->low = n / 2 > 0 ? n / 2 : 1;
	s->waiting = false;
	pthread_cond_init(&s->cv, NULL);
}

/* Frees what source_init() made. */
static void source_free(struct source *s)
{
	free(s->blocks);
	free(s->mem);
	pthread_cond_destroy(&s->cv);
}

/* Takes a free block of s, or returns NULL.  Lock held. */
static struct block *block_try_get(struct source *s)
{
	struct block *k = s->free;

	if (k) {
		s->free = k->next;
		s->nfree--;
	}
	return k;
}

/*
 * Waits until s has a free block; when it has none, until half of them are
 * free, so that an owner faster than the hashers wakes once per batch of
 * blocks rather than once per block.  Lock held.
 */
static void source_wait(struct bench *b, struct source *s)
{
	if (s->free)
		return;
	while (s->nfree < s->low) {
		s->waiting = true;
		pthread_cond_wait(&s->cv, &b->lock);
	}
	s->waiting = false;
}

/* Gives a block back to its owner and wakes the owner if it waits.  Lock held. */
static void block_put(struct block *k)
{
	struct source *s = k->owner;

	k->next = s->free;
	s->free = k;
	if (++s->nfree == s->low && s->waiting)
		pthread_cond_signal(&s->cv);
}

/* Puts job i on the hashers' queue the first time it is touched.  Lock held. */
static void job_touch(struct bench *b, int i)
{
	struct job *j = &b->jobs[i];

	if (!j->queued) {
		j->queued = true;
		b->queue[b->qtail++] = i;
		if (b->qtail == b->nfiles)
			pthread_cond_broadcast(&b->queued);
		else
			pthread_cond_signal(&b->queued);
	}
	if (j->waiter)
		pthread_cond_signal(j->waiter);
}

/* Appends block k (ready or not) to job i.  Lock held. */
static void job_append(struct bench *b, int i, struct block *k)
{
	struct job *j = &b->jobs[i];

	k->next = NULL;
	if (j->head)
		j->tail->next = k;
	else
		j->head = k;
	j->tail = k;
	job_touch(b, i);
}

/* Says that no block will be appended to job i.  Lock held. */
static void job_end(struct bench *b, int i)
{
	b->jobs[i].ended = true;
	job_touch(b, i);
}

/*
 * split and uring: takes jobs from the queue in order and hashes each one's
 * blocks as they become ready, until every file is done.
 */
static void *hasher_main(void *arg)
{
	struct worker *w = arg;
	struct bench *b = w->b;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t md[SHA256_LEN];

	if (!ctx)
		die("out of memory");
	pthread_mutex_lock(&b->lock);
	for (;;) {
		struct job *j;
		uint64_t total = 0;
		int i;

		while (b->qhead == b->qtail && b->qhead < b->nfiles)
			pthread_cond_wait(&b->queued, &b->lock);
		if (b->qhead == b->nfiles)
			break;
		i = b->queue[b->qhead++];
		j = &b->jobs[i];
		if (!EVP_DigestInit_ex2(ctx, b->sha256, NULL))
			die("EVP_DigestInit_ex2 failed");
		for (;;) {
			struct block *k = j->head;

			if (!k && j->ended)
				break;
			if (!k || !k->ready) {
				j->waiter = &w->cv;
				pthread_cond_wait(&w->cv, &b->lock);
				j->waiter = NULL;
				continue;
			}
			j->head = k->next;
			pthread_mutex_unlock(&b->lock);
			EVP_DigestUpdate(ctx, k->data, k->len);
			total += k->len;
			pthread_mutex_lock(&b->lock);
			block_put(k);
		}
		pthread_mutex_unlock(&b->lock);
		check_size(&b->files[i], total);
		EVP_DigestFinal_ex(ctx, md, NULL);
		fold(w, md);
		w->bytes += total;
		pthread_mutex_lock(&b->lock);
	}
	pthread_mutex_unlock(&b->lock);
	EVP_MD_CTX_free(ctx);
	return NULL;
}

/* split: reads files from the shared counter into blocks for the hashers. */
static void *reader_main(void *arg)
{
	struct worker *w = arg;
	struct bench *b = w->b;
	int i;

	while ((i = atomic_fetch_add(&b->next, 1)) < b->nfiles) {
		const struct file *f = &b->files[i];
		int fd = open_file(f->path);
		uint64_t total = 0;

		while (total < f->size) {
			struct block *k;

			pthread_mutex_lock(&b->lock);
			source_wait(b, &w->src);
			k = block_try_get(&w->src);
			pthread_mutex_unlock(&b->lock);
			k->len = read_block(fd, f->path, k->data, b->block);
			k->ready = true;
			pthread_mutex_lock(&b->lock);
			if (k->len == 0)
				block_put(k);
			else
				job_append(b, i, k);
			pthread_mutex_unlock(&b->lock);
			if (k->len == 0)
				break;
			total += k->len;
		}
		close(fd);
		pthread_mutex_lock(&b->lock);
		job_end(b, i);
		pthread_mutex_unlock(&b->lock);
	}
	return NULL;
}

/*
 * One submitter's state in uring modes.  It claims files from the shared
 * counter into a small FIFO (one file with uring, up to Q ahead with
 * uringat, whose opens are issued as files are claimed) and issues the
 * reads of the oldest claimed file, in order, before those of the next.
 */
struct ring {
	struct io_uring ring;
	int inflight;          /* opens and reads submitted, not yet reaped */
	int *claim;            /* claimed files, a ring of Q entries */
	int chead, ctail;      /* claimed files: [chead, ctail) */
	bool drained;          /* the shared counter is past the last file */
	uint64_t off;          /* next offset to read in claim[chead] */
};

/* user_data of an open: odd, so that it differs from a block's address. */
#define OPEN_TAG(i) (((uint64_t)(i) << 1) | 1)

/* Returns a free submission entry; the ring never holds more than Q. */
static struct io_uring_sqe *sqe_get(struct ring *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);

	if (!sqe)
		die("io_uring submission queue full");
	return sqe;
}

/* Claims the next file into r's FIFO.  Returns false when none is left. */
static bool claim_file(struct bench *b, struct ring *r)
{
	int i;

	if (r->drained)
		return false;
	i = atomic_fetch_add(&b->next, 1);
	if (i >= b->nfiles) {
		r->drained = true;
		return false;
	}
	r->claim[r->ctail++ % b->mode->a] = i;
	return true;
}

/* Closes job i's file once its last read is reaped and no more will be issued. */
static void job_close_if_done(struct bench *b, int i)
{
	struct job *j = &b->jobs[i];

	if (j->pending == 0 && j->ended && j->fd >= 0) {
		close(j->fd);
		j->fd = -1;
	}
}

/*
 * uring: issues what the window allows, Q operations in flight at most:
 * opens of newly claimed files (uringat), then reads of the oldest claimed
 * file while free blocks last.  Returns the number of operations prepared.
 */
static int ring_fill(struct bench *b, struct worker *w, struct ring *r)
{
	const struct mode *m = b->mode;
	int q = m->a, n = 0;

	while (m->kind == URINGAT && r->ctail - r->chead < q && r->inflight < q &&
	       claim_file(b, r)) {
		int i = r->claim[(r->ctail - 1) % q];
		struct io_uring_sqe *sqe = sqe_get(r);

		io_uring_prep_openat(sqe, AT_FDCWD, b->files[i].path,
				     OPEN_FLAGS | O_NOATIME, 0);
		io_uring_sqe_set_data64(sqe, OPEN_TAG(i));
		b->jobs[i].pending++;
		r->inflight++;
		n++;
	}
	while (r->inflight < q &&
	       (r->chead < r->ctail || (m->kind == URING && claim_file(b, r)))) {
		int i = r->claim[r->chead % q];
		const struct file *f = &b->files[i];
		struct job *j = &b->jobs[i];
		struct io_uring_sqe *sqe;
		struct block *k;

		if (j->fd < 0) {
			if (m->kind == URINGAT)
				break;
			j->fd = open_file(f->path);
		}
		if (r->off >= f->size) {
			pthread_mutex_lock(&b->lock);
			job_end(b, i);
			pthread_mutex_unlock(&b->lock);
			r->chead++;
			r->off = 0;
			job_close_if_done(b, i);
			continue;
		}
		pthread_mutex_lock(&b->lock);
		k = block_try_get(&w->src);
		if (k) {
			k->ready = false;
			k->job = i;
			k->want = f->size - r->off < b->block ? f->size - r->off : b->block;
			job_append(b, i, k);
		}
		pthread_mutex_unlock(&b->lock);
		if (!k)
			break;
		sqe = sqe_get(r);
		io_uring_prep_read(sqe, j->fd, k->data, (unsigned)k->want, r->off);
		io_uring_sqe_set_data(sqe, k);
		j->pending++;
		r->off += k->want;
		r->inflight++;
		n++;
	}
	return n;
}

/* uring: handles one completion. */
static void ring_reap(struct bench *b, struct ring *r, struct io_uring_cqe *cqe)
{
	uint64_t tag = io_uring_cqe_get_data64(cqe);
	int res = cqe->res, i;

	r->inflight--;
	if (tag & 1) {
		i = (int)(tag >> 1);
		if (res < 0)
			die("cannot open '%s': %s", b->files[i].path, strerror(-res));
		b->jobs[i].fd = res;
	} else {
		struct block *k = (struct block *)(uintptr_t)tag;

		i = k->job;
		if (res < 0)
			die("cannot read '%s': %s", b->files[i].path, strerror(-res));
		if ((size_t)res != k->want)
			die("'%s' changed: short read", b->files[i].path);
		pthread_mutex_lock(&b->lock);
		k->len = (size_t)res;
		k->ready = true;
		if (b->jobs[i].waiter)
			pthread_cond_signal(b->jobs[i].waiter);
		pthread_mutex_unlock(&b->lock);
	}
	b->jobs[i].pending--;
	job_close_if_done(b, i);
}

/*
 * uring: a submitter.  Fills its ring, submits, then waits for at least one
 * completion (or, with nothing in flight, for a free block) and reaps every
 * completion there is, until no file is left to claim or to read.
 */
static void *submitter_main(void *arg)
{
	struct worker *w = arg;
	struct bench *b = w->b;
	struct ring r = {.claim = xmalloc((size_t)b->mode->a * sizeof(int))};
	int ret;

	ret = io_uring_queue_init((unsigned)b->mode->a, &r.ring, 0);
	if (ret < 0)
		die("io_uring_queue_init: %s", strerror(-ret));
	while (!r.drained || r.chead < r.ctail || r.inflight > 0) {
		struct io_uring_cqe *cqe;

		if (ring_fill(b, w, &r) > 0 && (ret = io_uring_submit(&r.ring)) < 0)
			die("io_uring_submit: %s", strerror(-ret));
		if (r.inflight == 0) {
			if (r.chead < r.ctail) {
				pthread_mutex_lock(&b->lock);
				source_wait(b, &w->src);
				pthread_mutex_unlock(&b->lock);
			}
			continue;
		}
		while ((ret = io_uring_wait_cqe(&r.ring, &cqe)) == -EINTR)
			;
		if (ret < 0)
			die("io_uring_wait_cqe: %s", strerror(-ret));
		do {
			ring_reap(b, &r, cqe);
			io_uring_cqe_seen(&r.ring, cqe);
		} while (io_uring_peek_cqe(&r.ring, &cqe) == 0);
	}
	io_uring_queue_exit(&r.ring);
	free(r.claim);
	return NULL;
}

/* User plus system CPU seconds used by this process so far. */
static double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Starts a thread running fn(w), with w->b = b. */
static void start(struct worker *w, struct bench *b, void *(*fn)(void *))
{
	int err;

	w->b = b;
	pthread_cond_init(&w->cv, NULL);
	err = pthread_create(&w->tid, NULL, fn, w);
	if (err)
		die("pthread_create: %s", strerror(err));
}

/*
 * Hashes every file once with mode m.  Returns the wall-clock seconds taken;
 * sets *cpu to the CPU seconds, *bytes and xor (the XOR of all digests).
 * Block pools, the job table and the slots are made before the clock starts.
 */
static double run_once(struct bench *b, const struct mode *m, double *cpu,
		       uint64_t *bytes, uint8_t xor[SHA256_LEN])
{
	static struct worker w[2 * MAX_THREADS + 1];
	int nhash = 0, nfeed = 0;
	double t0, t1, c0;

	memset(w, 0, sizeof(w));
	atomic_store(&b->next, 0);
	atomic_store(&b->ahead, 0);
	atomic_store(&b->cold_until, 0);
	b->mode = m;
	b->qhead = b->qtail = 0;
	for (int i = 0; i < b->nfiles; i++) {
		atomic_store(&b->slot[i], SLOT_EMPTY);
		b->jobs[i] = (struct job){.fd = -1};
	}
	switch (m->kind) {
	case THREADS: case SEQ: case FADVISE: case ADAPT:
		nhash = m->a;
		break;
	case SPLIT:
		nhash = m->b;
		nfeed = m->a;
		for (int t = 0; t < nfeed; t++)
			source_init(&w[nhash + t].src, b, READER_BLOCKS);
		break;
	case URING: case URINGAT:
		nhash = m->b;
		nfeed = m->c;
		for (int t = 0; t < nfeed; t++)
			source_init(&w[nhash + t].src, b, 2 * m->a + m->b);
		break;
	}
	c0 = cpu_now();
	t0 = now();
	for (int t = 0; t < nhash; t++)
		start(&w[t], b, m->kind <= ADAPT ? worker_main : hasher_main);
	for (int t = nhash; t < nhash + nfeed; t++)
		start(&w[t], b, m->kind == SPLIT ? reader_main : submitter_main);
	for (int t = 0; t < nhash + nfeed; t++)
		pthread_join(w[t].tid, NULL);
	t1 = now();
	*cpu = cpu_now() - c0;
	*bytes = 0;
	memset(xor, 0, SHA256_LEN);
	for (int t = 0; t < nhash + nfeed; t++) {
		*bytes += w[t].bytes;
		for (int k = 0; k < SHA256_LEN; k++)
			xor[k] ^= w[t].xor[k];
		pthread_cond_destroy(&w[t].cv);
		if (t >= nhash)
			source_free(&w[t].src);
	}
	return t1 - t0;
}

/* Parses a -m item such as "threads:4", "split:8:2" or "uring:64:2:1". */
static void parse_mode(const char *s, struct mode *m)
{
	static const struct {
		const char *name;
		enum kind kind;
		int nargs;
	} kinds[] = {
		{"threads", THREADS, 1}, {"seq", SEQ, 1}, {"fadvise", FADVISE, 2},
		{"adapt", ADAPT, 2},
		{"split", SPLIT, 2}, {"uring", URING, 2}, {"uringat", URINGAT, 2},
	};
	char name[16];
	int n;

	memset(m, 0, sizeof(*m));
	if (strlen(s) >= sizeof(m->name))
		die("bad mode '%s'", s);
	strcpy(m->name, s);
	m->c = 1;
	n = sscanf(s, "%15[a-z]:%d:%d:%d", name, &m->a, &m->b, &m->c);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		bool ring;

		if (strcmp(name, kinds[k].name) != 0)
			continue;
		ring = kinds[k].kind == URING || kinds[k].kind == URINGAT;
		if ((n != 1 + kinds[k].nargs && !(ring && n == 4)) || m->a < 1 ||
		    (kinds[k].nargs == 2 && m->b < 1) || m->c < 1)
			break;
		m->kind = kinds[k].kind;
		if (ring ? m->a > MAX_QUEUE || m->b > MAX_THREADS || m->c > MAX_THREADS :
		    m->a > MAX_THREADS ||
		    m->b > (m->kind == FADVISE || m->kind == ADAPT ? MAX_QUEUE : MAX_THREADS))
			die("mode '%s': too many threads or reads", s);
		return;
	}
	die("bad mode '%s'", s);
}

/* The file list being built by the walk. */
static struct file *walk_files;
static int walk_n, walk_cap;

/* Adds a regular file to the list. */
static void add_file(const char *path, const struct stat *st)
{
	if (walk_n == walk_cap) {
		walk_cap = walk_cap ? 2 * walk_cap : 1024;
		walk_files = realloc(walk_files, (size_t)walk_cap * sizeof(*walk_files));
		if (!walk_files)
			die("out of memory");
	}
	walk_files[walk_n].path = strdup(path);
	if (!walk_files[walk_n].path)
		die("out of memory");
	walk_files[walk_n++].size = (uint64_t)st->st_size;
}

/* nftw() callback: keeps regular files, fails on what cannot be read. */
static int walk_entry(const char *path, const struct stat *st, int type,
		      struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_DNR || type == FTW_NS)
		die("cannot walk '%s'", path);
	if (type == FTW_F && S_ISREG(st->st_mode))
		add_file(path, st);
	return 0;
}

/* Prints the usage and exits with status 2. */
static void usage(void)
{
	fputs("usage: hash-io [-c | -C] [-r RUNS] [-b BYTES] -m MODES PATH...\n"
	      "  -c  cold data: drop the page cache before every timed run (root)\n"
	      "  -C  cold data and metadata: drop page, dentry and inode caches (root)\n"
	      "  -r  runs per mode, median reported (default 3, at most 15)\n"
	      "  -b  read size in bytes (default FIDX_HASH_READ_SIZE)\n"
	      "  -m  modes, comma-separated: threads:N seq:N fadvise:N:K adapt:N:K split:R:H\n"
	      "      uring:Q:H[:S] uringat:Q:H[:S]\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	struct mode modes[MAX_MODES];
	struct bench b = {.block = FIDX_HASH_READ_SIZE};
	char *mode_list = NULL;
	int nmodes = 0, runs = 3, cold = 0, opt;
	bool have_ref = false;
	uint8_t ref[SHA256_LEN];
	uint64_t bytes = 0;
	double best = 0;

	while ((opt = getopt(argc, argv, "cCr:b:m:")) != -1) {
		switch (opt) {
		case 'c': case 'C': cold = opt; break;
		case 'r': runs = atoi(optarg); break;
		case 'b': b.block = (size_t)strtoul(optarg, NULL, 10); break;
		case 'm': mode_list = optarg; break;
		default: usage();
		}
	}
	if (optind == argc || !mode_list || runs < 1 || runs > MAX_RUNS ||
	    b.block < 512 || b.block > (1u << 30) || b.block % 512)
		usage();
	for (char *s = strtok(mode_list, ","); s; s = strtok(NULL, ",")) {
		if (nmodes == MAX_MODES)
			die("too many modes");
		parse_mode(s, &modes[nmodes++]);
	}
	for (int i = optind; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) < 0)
			die("cannot stat '%s': %s", argv[i], strerror(errno));
		if (S_ISDIR(st.st_mode)) {
			if (nftw(argv[i], walk_entry, 64, FTW_PHYS) != 0)
				die("cannot walk '%s': %s", argv[i], strerror(errno));
		} else if (S_ISREG(st.st_mode)) {
			add_file(argv[i], &st);
		}
	}
	if (walk_n == 0)
		die("no regular file to hash");
	b.files = walk_files;
	b.nfiles = walk_n;
	b.sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (!b.sha256)
		die("libcrypto has no SHA256");
	b.slot = xmalloc((size_t)b.nfiles * sizeof(*b.slot));
	b.jobs = xmalloc((size_t)b.nfiles * sizeof(*b.jobs));
	b.queue = xmalloc((size_t)b.nfiles * sizeof(*b.queue));
	pthread_mutex_init(&b.lock, NULL);
	pthread_cond_init(&b.queued, NULL);
	{
		struct rlimit rl;

		/* uringat and fadvise keep up to Q or K files open at once. */
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}

	if (!cold) {
		uint8_t x[SHA256_LEN];
		double c;

		run_once(&b, &modes[0], &c, &bytes, x);
	}
	for (int r = 0; r < runs; r++) {
		for (int i = 0; i < nmodes; i++) {
			uint8_t x[SHA256_LEN];
			uint64_t n;

			if (cold)
				drop_caches(cold == 'c' ? "1" : "3");
			modes[i].secs[r] = run_once(&b, &modes[i], &modes[i].cpu[r], &n, x);
			if (!have_ref) {
				memcpy(ref, x, sizeof(ref));
				bytes = n;
				have_ref = true;
			} else if (memcmp(ref, x, sizeof(ref)) != 0 || n != bytes) {
				die("mode '%s' disagrees with mode '%s'",
				    modes[i].name, modes[0].name);
			}
		}
	}

	for (int i = 0; i < nmodes; i++) {
		double m = median(modes[i].secs, runs);

		if (i == 0 || m < best)
			best = m;
	}
	printf("%d files, %llu bytes, %s, median of %d runs, read size %zu, "
	       "XOR of the SHA-256 digests ",
	       b.nfiles, (unsigned long long)bytes,
	       cold == 'c' ? "cold data (metadata cached)" :
	       cold == 'C' ? "cold data and metadata" : "warm cache",
	       runs, b.block);
	for (int k = 0; k < SHA256_LEN; k++)
		printf("%02x", ref[k]);
	printf("\n\n");
	printf("| mode | median s | min s | MB/s | files/s | CPU s | MB per CPU s "
	       "| time vs best |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int i = 0; i < nmodes; i++) {
		double m = median(modes[i].secs, runs);
		double c = median(modes[i].cpu, runs);
		double lo = modes[i].secs[0];

		for (int r = 1; r < runs; r++)
			if (modes[i].secs[r] < lo)
				lo = modes[i].secs[r];
		printf("| %s | %.3f | %.3f | %.0f | %.0f | %.3f | %.0f | %.2f |\n",
		       modes[i].name, m, lo, (double)bytes / m / 1e6,
		       b.nfiles / m, c, (double)bytes / c / 1e6, m / best);
	}
	EVP_MD_free(b.sha256);
	return 0;
}
