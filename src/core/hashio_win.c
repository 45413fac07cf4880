/*
 * hashio_win.c - the hashing stage (hashio.h) on Windows (the Windows build
 * only; hashio.c is Linux's).
 *
 *   in ──► workers (opts.readers, else opts.jobs, of them) ──► done()
 *           open (CreateFileW, FILE_FLAG_SEQUENTIAL_SCAN), ReadFile in
 *           READ_SIZE blocks, hash, check, close: one file in one thread
 *
 * Windows' cache manager reads a file opened for sequential access ahead of
 * the reader on its own threads, so a worker that hashes a block finds the
 * next one read: the streamers of Linux's stage, which overlap reading and
 * hashing of one large file, have no work here, and neither has the
 * spinning-disk mode's reader (no FIEMAP: FIDX_IO_HDD reads as SSD does).
 * docs/WINDOWS.md has the measurements.
 *
 * What is checked is what Linux's stage checks: once the size the walk saw
 * is read, the handle must show the same file (volume serial and file ID,
 * the source's device and inode), the same size and the same last write
 * time, else "changed during scan".  A file is opened with every sharing
 * mode, so a scan never keeps another program from writing, renaming or
 * deleting it.
 */
#include "hashio.h"

#include <windows.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "winpath.h"

#define READ_SIZE (1024 * 1024) /* bytes per ReadFile */
#define WORKER_BATCH 8          /* records a worker takes at once */

struct fidx_hashio {
	struct fidx_hashio_opts o;
	pthread_t *threads;
	unsigned nthreads;        /* started */
	unsigned nthreads_max;
};

int fidx_io_mode_parse(const char *name, enum fidx_io_mode *mode)
{
	if (strcmp(name, "auto") == 0)
		*mode = FIDX_IO_AUTO;
	else if (strcmp(name, "ssd") == 0)
		*mode = FIDX_IO_SSD;
	else if (strcmp(name, "hdd") == 0)
		*mode = FIDX_IO_HDD;
	else
		return errno = EINVAL, -1;
	return 0;
}

const char *fidx_io_mode_name(enum fidx_io_mode mode)
{
	return mode == FIDX_IO_SSD ? "ssd" : mode == FIDX_IO_HDD ? "hdd" : "auto";
}

/* Opens path (stored form) for a sequential read; INVALID_HANDLE_VALUE with errno set. */
static HANDLE open_sequential(const char *path)
{
	wchar_t *w = fidx_win_wide(path);
	if (!w)
		return INVALID_HANDLE_VALUE;
	/* A reparse point is opened itself, never its target: the walk recorded it as a link. */
	HANDLE h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE |
			       FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
			       FILE_FLAG_SEQUENTIAL_SCAN | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	if (h == INVALID_HANDLE_VALUE)
		errno = fidx_win_errno(GetLastError());
	free(w);
	return h;
}

int fidx_hashio_open(const char *path, bool follow)
{
	(void)follow;
	HANDLE h = open_sequential(path);
	if (h == INVALID_HANDLE_VALUE)
		return -1;
	int fd = _open_osfhandle((intptr_t)h, O_RDONLY | O_BINARY);
	if (fd < 0) {
		CloseHandle(h);
		errno = EMFILE;
	}
	return fd;
}

/* Whether handle h is still the file m describes, bytes of it read (see the top). */
static const char *check_handle(HANDLE h, const struct fidx_meta *m, uint64_t bytes)
{
	FILE_BASIC_INFO basic;
	FILE_STANDARD_INFO std;
	BY_HANDLE_FILE_INFORMATION fi;
	/* The 32-bit volume serial and the 64-bit file index, as the source records them
	 * (FileIdInfo's serial is NTFS's 64-bit one, another number). */
	if (!GetFileInformationByHandleEx(h, FileBasicInfo, &basic, sizeof(basic)) ||
	    !GetFileInformationByHandleEx(h, FileStandardInfo, &std, sizeof(std)) ||
	    !GetFileInformationByHandle(h, &fi)) {
		errno = fidx_win_errno(GetLastError());
		return "stat";
	}
	uint64_t file_id = ((uint64_t)fi.nFileIndexHigh << 32) | fi.nFileIndexLow;
	uint64_t volume = fi.dwVolumeSerialNumber;
	struct fidx_time mtime = fidx_win_time(basic.LastWriteTime.QuadPart);
	errno = 0;
	if (std.Directory || file_id != m->ino || volume != m->dev ||
	    (uint64_t)std.EndOfFile.QuadPart != m->size || bytes != m->size ||
	    mtime.sec != m->mtime.sec || mtime.nsec != m->mtime.nsec)
		return "changed during scan";
	return NULL;
}

const char *fidx_hashio_check(int fd, const struct fidx_meta *m, uint64_t bytes)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	if (h == INVALID_HANDLE_VALUE) {
		errno = EBADF;
		return "stat";
	}
	return check_handle(h, m, bytes);
}

/*
 * Sets the record's outcome: the error of reading (op and errnum, or an
 * interrupted read), or the digests; counts the bytes not hashed as hashed,
 * so that the progress total stays the sum of the sizes the walk saw.
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
	if (ret < 0)
		io->o.fail(io->o.arg, "out of memory");
	if (bytes != rec->meta.size)
		atomic_fetch_add_explicit(io->o.bytes_hashed, rec->meta.size - bytes,
					  memory_order_relaxed);
}

/* Whether the stage must stop reading: the user's interrupt or the pipeline's failure. */
static bool stopping(const struct fidx_hashio *io)
{
	return atomic_load_explicit(io->o.cancel, memory_order_relaxed) ||
	       atomic_load_explicit(io->o.stop, memory_order_relaxed);
}

/* Reads and hashes rec's file with h into buf's READ_SIZE bytes, and settles the record. */
static void hash_file(struct fidx_hashio *io, struct fidx_hasher *h, unsigned char *buf,
		      struct fidx_record *rec)
{
	uint64_t bytes = 0;
	const char *op = NULL;
	int err = 0;
	HANDLE f = open_sequential(rec->path);
	if (f == INVALID_HANDLE_VALUE) {
		settle(io, rec, "open", errno, 0);
		return;
	}
	if (fidx_hasher_reset(h) < 0) {
		io->o.fail(io->o.arg, "cannot compute digests: out of memory");
		op = "hash", err = ECANCELED;
	}
	/* Read to the size the walk saw, and one byte beyond: a file that grew has changed. */
	while (!op && bytes <= rec->meta.size) {
		if (stopping(io)) {
			op = "interrupted", err = ECANCELED;
			break;
		}
		DWORD got = 0;
		uint64_t left = rec->meta.size - bytes + 1;
		DWORD want = left < READ_SIZE ? (DWORD)left : READ_SIZE;
		if (!ReadFile(f, buf, want, &got, NULL)) {
			op = "read", err = fidx_win_errno(GetLastError());
			break;
		}
		if (got == 0)
			break;
		uint64_t use = bytes + got > rec->meta.size ? rec->meta.size - bytes : got;
		if (use && fidx_hasher_update(h, buf, use) < 0) {
			io->o.fail(io->o.arg, "cannot compute digests: out of memory");
			op = "hash", err = ECANCELED;
			break;
		}
		bytes += got;
		atomic_fetch_add_explicit(io->o.bytes_hashed, use, memory_order_relaxed);
	}
	if (!op && bytes == rec->meta.size && fidx_hasher_final(h, rec->digest) < 0) {
		io->o.fail(io->o.arg, "cannot compute digests: out of memory");
		op = "hash", err = ECANCELED;
	}
	if (!op) {
		op = check_handle(f, &rec->meta, bytes);
		err = errno;
	}
	CloseHandle(f);
	settle(io, rec, op, err, bytes > rec->meta.size ? rec->meta.size : bytes);
}

/* A worker: takes records, hashes each, hands it on. */
static void *worker(void *arg)
{
	struct fidx_hashio *io = arg;
	void *ctx = io->o.thread_start(io->o.arg);
	struct fidx_hasher *h = fidx_hasher_create(io->o.digests);
	unsigned char *buf = malloc(READ_SIZE);
	if (!h || !buf)
		io->o.fail(io->o.arg, "out of memory");
	struct fidx_record *batch[WORKER_BATCH];
	size_t n;
	while ((n = fidx_queue_pop_many(io->o.in, (void **)batch, WORKER_BATCH, false)) > 0) {
		for (size_t i = 0; i < n; i++) {
			if (!h || !buf || stopping(io))
				settle(io, batch[i], "interrupted", ECANCELED, 0);
			else
				hash_file(io, h, buf, batch[i]);
			atomic_fetch_add_explicit(io->o.files_hashed, 1, memory_order_relaxed);
			io->o.done(ctx, batch[i]);
		}
	}
	free(buf);
	fidx_hasher_destroy(h);
	io->o.thread_end(ctx, io->o.arg);
	return NULL;
}

struct fidx_hashio *fidx_hashio_start(const struct fidx_hashio_opts *opts)
{
	struct fidx_hashio *io = calloc(1, sizeof(*io));
	if (!io)
		return NULL;
	io->o = *opts;
	io->nthreads_max = opts->mode != FIDX_IO_HDD && opts->readers ? opts->readers : opts->jobs;
	if (!(io->threads = calloc(io->nthreads_max, sizeof(*io->threads)))) {
		free(io);
		errno = ENOMEM;
		return NULL;
	}
	for (; io->nthreads < io->nthreads_max; io->nthreads++) {
		int err = pthread_create(&io->threads[io->nthreads], NULL, worker, io);
		if (err) {
			/* Those that run end once fail() has aborted the input queue. */
			io->o.fail(io->o.arg, "cannot start the hashing threads");
			fidx_hashio_finish(io);
			errno = err;
			return NULL;
		}
	}
	return io;
}

void fidx_hashio_finish(struct fidx_hashio *io)
{
	if (!io)
		return;
	for (unsigned i = 0; i < io->nthreads; i++)
		pthread_join(io->threads[i], NULL);
	free(io->threads);
	free(io);
}
