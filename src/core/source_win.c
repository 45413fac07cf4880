/*
 * source_win.c - a live Windows file system as a source of records
 * (source.h): the Windows counterpart of source_walk.c, on the Win32 API.
 *
 * Paths.  Every record's path is in the stored form (winpath.h: /C:/Users/x,
 * //server/share/d), its names in WTF-8, exact: a name that is not valid
 * UTF-16 (an unpaired surrogate) is kept as it is and comes back.  Every file
 * is opened by its \\?\ path (winpath.h), so no length limit applies and no
 * name is trimmed.  A root may be given as a stored path or as a native one
 * (WTF-8; a relative one is made absolute by GetFullPathNameW).  A root is
 * followed when it is a link; nothing below it ever is.
 *
 * Listing.  A directory is opened with FILE_LIST_DIRECTORY and
 * FILE_FLAG_BACKUP_SEMANTICS and listed in batches of LIST_BUF bytes with
 * GetFileInformationByHandleEx(FileIdBothDirectoryInfo), which gives per
 * name what a record needs beside the link count: the four times (creation,
 * access, write, change), the 64-bit file ID, the size (EndOfFile), the
 * allocation, the attributes.  FindFirstFileExW gives neither the change
 * time nor the file ID; bench/windows/listbench.c measures both.
 *
 * One open per entry.  Each entry is then opened once, with
 * FILE_READ_ATTRIBUTES and FILE_FLAG_OPEN_REPARSE_POINT (so never through a
 * link; attribute access is granted beside any sharing mode), for what the
 * listing lacks: the link count (FILE_STANDARD_INFO), a reparse point's data
 * (FSCTL_GET_REPARSE_POINT) and the named streams (FILE_STREAM_INFO, the
 * same list FindFirstStreamW walks, without a second open).
 *
 * What a record holds (record.h):
 *
 *     type        'd' a directory, 'f' a file or a stream, 'l' a symlink, a
 *                 junction, or any name-surrogate reparse point, recorded and
 *                 never followed; a volume mount point (a junction to
 *                 \??\Volume{...}) is a 'd', entered unless xdev
 *     link_target the reparse point's print name, or its substitute name when
 *                 the print name is empty (\??\C:\x), in WTF-8, as stored
 *     size        EndOfFile; blocks AllocationSize / 512
 *     dev, ino    the volume serial number of the root's volume (of the
 *                 mounted volume below a mount point), the 64-bit file ID
 *     times       atime, mtime (last write), ctime (ChangeTime), btime
 *                 (CreationTime), exact to the 100 ns (winpath.h)
 *     mode        synthesised (winpath.h); uid, gid 0; nlink NumberOfLinks
 *     image       attributes (the FILE_ATTRIBUTE_* word), the stream's name;
 *                 state NULL
 *
 * A named stream NAME of FILE (an alternate data stream, not the default
 * ::$DATA) is a record of its own at FILE:NAME, with FILE's metadata but the
 * stream's size and allocation (as source_image.c records NTFS streams), and
 * is read by its path, which Windows opens as the stream.  A file system
 * without streams (FAT, Wine's) just has none.
 *
 * Errors.  An entry that cannot be opened or listed is recorded all the
 * same, with the error on its row ("list: Access is denied.", the system's
 * own message in English when it has one); a directory whose listing failed
 * part way is recorded with what was seen of it.  Only running out of memory
 * stops the run (sink->fail).
 *
 * Threads.  run->threads workers share one LIFO stack of directories, as the
 * walk does (src/lib/walk.c): a worker takes the top directory, lists it,
 * records its entries, pushes its subdirectories, and records the directory
 * itself once its listing is over (so a listing error lands on its row).
 * One mutex guards the stack and the count of workers busy with a directory;
 * a worker that finds the stack empty waits on the condition until another
 * pushes or the last busy one finishes.  A stop (sink->stop, a put that
 * answers -1, sink->stopping()) makes the workers finish the directory in
 * hand and record every directory still on the stack with
 * FIDX_ERROR_NOT_READ, which `fidx scan --resume` reads again.
 *
 *     roots ─► stack of directories (LIFO) ◄─────── subdirectories ───┐
 *                  │                                                   │
 *                  ▼ (workers: run->threads)                           │
 *     open ─► FileIdBothDirectoryInfo batches ─► per entry: exclude?, ─┘
 *                                                 one open, record ─► sink
 *     end of the listing ─► the directory's own record ─────────────► sink
 */
#ifndef _WIN32
#error "source_win.c is the Windows source: build it for Windows only"
#endif

#include "source.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>
#include <winioctl.h>

#include "winpath.h"

_Static_assert(sizeof(wchar_t) == sizeof(uint16_t), "Windows wide characters are 16 bits");

#define LIST_BUF (128 * 1024)     /* bytes per FileIdBothDirectoryInfo call */
#define STREAM_BUF (16 * 1024)    /* first size of the FILE_STREAM_INFO buffer */
#define REPARSE_BUF (16 * 1024)   /* MAXIMUM_REPARSE_DATA_BUFFER_SIZE */

struct win_source {
	struct fidx_source base;
	struct fidx_win_source_opts opts;
};

/* A directory to list, on the stack or in a worker's hands. */
struct dir_job {
	struct dir_job *next;         /* link in the stack */
	struct fidx_record *rec;      /* its record (path: stored form), put once listed;
					 NULL for a root not yet looked at */
	wchar_t *native;              /* its \\?\ path, NUL-terminated; owned */
	size_t native_len;            /* wcslen(native) */
	const char *root;             /* a root not yet looked at: as it was given */
	size_t root_index;
	size_t root_len;              /* bytes of its root's stored path (for excludes) */
	uint32_t dev;                 /* the volume serial number of its entries */
	bool mount;                   /* a volume mount point: its serial is read when opened */
};

/* A file the run never records (run->leave_out). */
struct own_file {
	char *path;                   /* its stored path */
	size_t len;
	uint32_t dev;                 /* its volume serial and file ID, when ... */
	uint64_t ino;
	bool exists;                  /* ... it existed at the start */
};

/* One run: what the workers share. */
struct win_run {
	const struct win_source *src;
	const struct fidx_sink *sink;
	pthread_mutex_t lock;         /* guards stack and busy */
	pthread_cond_t wake;          /* signalled on a push, and when the last busy worker ends */
	struct dir_job *stack;        /* top of the stack of directories to list */
	unsigned busy;                /* workers holding a directory */
	atomic_bool stopped;          /* a stop was seen: list nothing more */
	struct own_file *own;
	size_t nown;
};

/* A worker's state. */
struct worker {
	struct win_run *run;
	void *ctx;                    /* the sink's context for the thread */
	void *list;                   /* LIST_BUF bytes, 8-aligned */
	void *streams;                /* FILE_STREAM_INFO buffer ... */
	size_t streams_size;          /* ... of this many bytes */
	void *reparse;                /* REPARSE_BUF bytes: FSCTL_GET_REPARSE_POINT's answer */
	char *path;                   /* a child's stored path ... */
	size_t path_cap;              /* ... bytes allocated */
	wchar_t *native;              /* a child's native path ... */
	size_t native_cap;            /* ... units allocated */
};

/* Whether the run must stop: already stopped, or the sink says so (then noted). */
static bool run_stopping(struct win_run *r)
{
	if (atomic_load_explicit(&r->stopped, memory_order_relaxed))
		return true;
	if ((r->sink->stop && atomic_load_explicit(r->sink->stop, memory_order_relaxed)) ||
	    r->sink->stopping(r->sink->arg)) {
		atomic_store_explicit(&r->stopped, true, memory_order_relaxed);
		return true;
	}
	return false;
}

/* Hands rec to the sink; notes a stop when the sink answers one.  Returns put's answer. */
static int put(struct worker *t, struct fidx_record *rec)
{
	if (t->run->sink->put(t->ctx, rec) < 0) {
		atomic_store_explicit(&t->run->stopped, true, memory_order_relaxed);
		return -1;
	}
	return 0;
}

/* The run fails for want of memory: the sink is told, the workers stop.  Returns -1. */
static int out_of_memory(struct win_run *r)
{
	r->sink->fail(r->sink->arg, "out of memory");
	atomic_store_explicit(&r->stopped, true, memory_order_relaxed);
	return -1;
}

/* Win32's words for the errors a listing meets most, where the system has none (Wine). */
static const struct {
	DWORD code;
	const char *text;
} common_errors[] = {
	{ERROR_FILE_NOT_FOUND, "The system cannot find the file specified."},
	{ERROR_PATH_NOT_FOUND, "The system cannot find the path specified."},
	{ERROR_ACCESS_DENIED, "Access is denied."},
	{ERROR_SHARING_VIOLATION, "The process cannot access the file because it is being used"
				  " by another process."},
	{ERROR_INVALID_PARAMETER, "The parameter is incorrect."},
	{ERROR_INVALID_NAME, "The filename, directory name, or volume label syntax is"
			     " incorrect."},
	{ERROR_DIRECTORY, "The directory name is invalid."},
	{ERROR_CANT_ACCESS_FILE, "The file cannot be accessed by the system."},
	{ERROR_NOT_A_REPARSE_POINT, "The file or directory is not a reparse point."},
	{ERROR_CANT_RESOLVE_FILENAME, "The name of the file cannot be resolved by the system."},
};

/*
 * Writes the system's message for Win32 error code (English when the system
 * has it, without its line end) into buf (size bytes, WTF-8); else one of
 * common_errors, else "error N".
 */
static void win_message(DWORD code, char *buf, size_t size)
{
	wchar_t w[512];
	DWORD flags = FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS;
	DWORD n = FormatMessageW(flags, NULL, code, MAKELANGID(LANG_ENGLISH, SUBLANG_ENGLISH_US),
				 w, sizeof(w) / sizeof(w[0]), NULL);
	if (n == 0)
		n = FormatMessageW(flags, NULL, code, 0, w, sizeof(w) / sizeof(w[0]), NULL);
	while (n > 0 && (w[n - 1] == '\r' || w[n - 1] == '\n' || w[n - 1] == ' '))
		n--;
	if (n == 0 || FIDX_WTF8_MAX(n) >= size) {
		for (size_t i = 0; i < sizeof(common_errors) / sizeof(common_errors[0]); i++)
			if (common_errors[i].code == code) {
				snprintf(buf, size, "%s", common_errors[i].text);
				return;
			}
		snprintf(buf, size, "error %lu", (unsigned long)code);
		return;
	}
	buf[fidx_wtf8_put(buf, (const uint16_t *)w, n)] = '\0';
}

/*
 * Sets rec->error to "op: " and the system's message for code, replacing any
 * earlier error.  Returns 0, or -1 when out of memory.
 */
static int set_win_error(struct fidx_record *rec, const char *op, DWORD code)
{
	char msg[FIDX_WTF8_MAX(512) + 16];
	win_message(code, msg, sizeof(msg));
	size_t n = strlen(op) + 2 + strlen(msg) + 1;
	char *text = malloc(n);
	if (!text)
		return -1;
	snprintf(text, n, "%s: %s", op, msg);
	free(rec->error);
	rec->error = text;
	return 0;
}

/* A FILETIME (a LARGE_INTEGER of the listing) as a time. */
static inline struct fidx_time time_of(LARGE_INTEGER t)
{
	return fidx_win_time(t.QuadPart);
}

/*
 * Makes a record at the stored path s (n bytes) for root root_index, with an
 * image part (attributes to come).  Returns it, or NULL when out of memory.
 */
static struct fidx_record *record_new(const char *s, size_t n, size_t root_index)
{
	struct fidx_record *rec = calloc(1, sizeof(*rec));
	if (!rec || !(rec->path = malloc(n + 1)) || !(rec->image = calloc(1, sizeof(*rec->image)))) {
		fidx_record_free(rec);
		return NULL;
	}
	memcpy(rec->path, s, n);
	rec->path[n] = '\0';
	rec->path_len = n;
	size_t name_off = n;
	while (name_off > 0 && s[name_off - 1] != '/')
		name_off--;
	rec->name_off = name_off;
	rec->ext_off = fidx_ext_offset(rec->path, rec->name_off, n);
	rec->root_index = root_index;
	return rec;
}

/* Fills rec's metadata from a listing entry's fields, on volume dev. */
static void meta_of_listing(struct fidx_record *rec, const FILE_ID_BOTH_DIR_INFO *e, uint32_t dev)
{
	struct fidx_meta *m = &rec->meta;
	rec->has_meta = true;
	m->size = (uint64_t)e->EndOfFile.QuadPart;
	m->blocks = (uint64_t)e->AllocationSize.QuadPart / 512;
	m->nlink = 1; /* until FILE_STANDARD_INFO says */
	m->dev = dev;
	m->ino = (uint64_t)e->FileId.QuadPart;
	m->atime = time_of(e->LastAccessTime);
	m->mtime = time_of(e->LastWriteTime);
	m->ctime = time_of(e->ChangeTime);
	m->btime = time_of(e->CreationTime);
	m->has_btime = true;
	rec->image->attributes = e->FileAttributes;
	rec->image->has_attributes = true;
}

/* Grows *buf (*cap elements of size each) to hold at least need.  Returns 0, or -1 (ENOMEM). */
static int reserve(void **buf, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 256;
	while (n < need)
		n *= 2;
	void *p = realloc(*buf, n * size);
	if (!p)
		return -1;
	*buf = p;
	*cap = n;
	return 0;
}

/*
 * Reads the named streams of the open entry h into t->streams.  Returns the
 * bytes filled (0: none, or a file system without streams), or -1 with the
 * Win32 error in *code.
 */
static long read_streams(struct worker *t, HANDLE h, DWORD *code)
{
	for (;;) {
		if (GetFileInformationByHandleEx(h, FileStreamInfo, t->streams,
						 (DWORD)t->streams_size))
			return (long)t->streams_size;
		DWORD e = GetLastError();
		if (e == ERROR_HANDLE_EOF || e == ERROR_INVALID_PARAMETER ||
		    e == ERROR_INVALID_FUNCTION || e == ERROR_NOT_SUPPORTED ||
		    e == ERROR_CALL_NOT_IMPLEMENTED || e == ERROR_INVALID_LEVEL)
			return 0; /* no streams, or a file system that keeps none */
		if (e != ERROR_MORE_DATA && e != ERROR_INSUFFICIENT_BUFFER) {
			*code = e;
			return -1;
		}
		if (t->streams_size >= (64u << 20)) {
			*code = e;
			return -1;
		}
		void *bigger = realloc(t->streams, t->streams_size * 2);
		if (!bigger) {
			*code = ERROR_NOT_ENOUGH_MEMORY;
			return -1;
		}
		t->streams = bigger;
		t->streams_size *= 2;
	}
}

/*
 * Puts one record per named stream listed in t->streams (filled bytes) of the
 * entry file (its record, already handed on or not: only its path and
 * metadata are read, from copies).  Returns 0, or -1 when the run must stop.
 */
static int put_streams(struct worker *t, const struct fidx_record *file, long filled)
{
	const BYTE *p = t->streams, *end = p + filled;
	for (;;) {
		const FILE_STREAM_INFO *s = (const FILE_STREAM_INFO *)p;
		if ((const BYTE *)s->StreamName > end ||
		    (const BYTE *)s->StreamName + s->StreamNameLength > end)
			break;
		/* ":NAME:$DATA"; the default stream is "::$DATA". */
		const uint16_t *name = (const uint16_t *)s->StreamName;
		size_t units;
		if (fidx_win_stream_name(name, s->StreamNameLength / 2, &units)) {
			size_t nlen;
			char *sname = fidx_wtf8_of_utf16(name + 1, units, &nlen);
			size_t plen = file->path_len + 1 + nlen;
			if (!sname || reserve((void **)&t->path, &t->path_cap, plen + 1, 1) < 0) {
				free(sname);
				return out_of_memory(t->run);
			}
			memcpy(t->path, file->path, file->path_len);
			t->path[file->path_len] = ':';
			memcpy(t->path + file->path_len + 1, sname, nlen);
			struct fidx_record *rec = record_new(t->path, plen, file->root_index);
			if (!rec) {
				free(sname);
				return out_of_memory(t->run);
			}
			rec->image->stream = sname;
			rec->image->attributes = file->image->attributes;
			rec->image->has_attributes = file->image->has_attributes;
			rec->type = 'f';
			rec->has_meta = file->has_meta;
			rec->meta = file->meta;
			rec->meta.mode = fidx_win_mode(file->image->attributes & ~FIDX_WIN_ATTR_DIRECTORY,
						       false);
			rec->meta.size = (uint64_t)s->StreamSize.QuadPart;
			rec->meta.blocks = (uint64_t)s->StreamAllocationSize.QuadPart / 512;
			if (put(t, rec) < 0)
				return -1;
		}
		if (!s->NextEntryOffset)
			break;
		p += s->NextEntryOffset;
		if (p >= end)
			break;
	}
	return 0;
}

/* Whether the entry at the stored path (dev, ino known when has_id) is one of the run's own files. */
static bool is_own_file(const struct win_run *r, const char *path, size_t len, uint32_t dev,
			uint64_t ino)
{
	for (size_t i = 0; i < r->nown; i++) {
		const struct own_file *o = &r->own[i];
		if (o->exists ? o->dev == dev && o->ino == ino
			      : o->len == len && _strnicmp(o->path, path, len) == 0)
			return true;
	}
	return false;
}

/* Whether the run's excludes leave out the entry at path (its root's path root_len bytes). */
static bool excluded(const struct win_run *r, const char *path, size_t root_len, size_t name_off)
{
	const char *const *ex = r->src->opts.excludes;
	if (!ex)
		return false;
	const char *rel = path + root_len;
	while (*rel == '/')
		rel++;
	for (; *ex; ex++)
		if (strchr(*ex, '/') ? fidx_win_glob_match(*ex, rel, true)
				     : fidx_win_glob_match(*ex, path + name_off, false))
			return true;
	return false;
}

/* Pushes job onto the run's stack and wakes a waiting worker. */
static void push(struct win_run *r, struct dir_job *job)
{
	pthread_mutex_lock(&r->lock);
	job->next = r->stack;
	r->stack = job;
	pthread_cond_signal(&r->wake);
	pthread_mutex_unlock(&r->lock);
}

/* Frees a job and what it owns (its record too, when still held). */
static void job_free(struct dir_job *job)
{
	if (!job)
		return;
	fidx_record_free(job->rec);
	free(job->native);
	free(job);
}

/*
 * Opens the entry at native path w for the per-entry questions (see the top):
 * fills rec's link count, its link target and type when it is a reparse
 * point, and t->streams with its streams (*streams bytes).  Sets *enter when
 * rec is a directory to list (a volume mount point: *mount).  Returns 0, or
 * -1 when out of memory; a failure of Windows is rec's error.
 */
static int inspect(struct worker *t, const wchar_t *w, struct fidx_record *rec, uint32_t tag,
		   long *streams, bool *enter, bool *mount)
{
	const struct win_source *src = t->run->src;
	uint32_t attrs = rec->image->attributes;
	bool reparse = attrs & FILE_ATTRIBUTE_REPARSE_POINT, volume = false;
	*streams = 0;
	*mount = false;
	/* Until the reparse data says otherwise, from the listing's tag. */
	bool link = reparse && (tag == 0 || (tag & 0x20000000u)); /* IsReparseTagNameSurrogate */
	rec->type = link ? 'l' : attrs & FILE_ATTRIBUTE_DIRECTORY ? 'd' : 'f';
	HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES,
			       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			       OPEN_EXISTING,
			       FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	int ret = 0;
	if (h == INVALID_HANDLE_VALUE) {
		ret = set_win_error(rec, "open", GetLastError());
		goto done;
	}
	FILE_STANDARD_INFO std;
	if (GetFileInformationByHandleEx(h, FileStandardInfo, &std, sizeof(std)))
		rec->meta.nlink = std.NumberOfLinks;
	else if ((ret = set_win_error(rec, "stat", GetLastError())) < 0)
		goto done;
	if (reparse) {
		DWORD got = 0;
		if (!DeviceIoControl(h, FSCTL_GET_REPARSE_POINT, NULL, 0, t->reparse, REPARSE_BUF,
				     &got, NULL)) {
			ret = set_win_error(rec, "readlink", GetLastError());
			goto done;
		}
		struct fidx_win_reparse rp;
		if (fidx_win_reparse_parse(t->reparse, got, &rp) < 0) {
			if (errno == ENOMEM) {
				ret = -1;
				goto done;
			}
			rp = (struct fidx_win_reparse){0}; /* too short to say: a link without target */
			rp.name_surrogate = true;
		}
		volume = rp.volume;
		/* A volume mounted here is a folder; a reparse point that is not a
		 * name surrogate (dedup, cloud files) stands for itself. */
		link = rp.name_surrogate && !volume;
		if (link) {
			rec->link_target = rp.target;
			rec->link_len = rp.target_len;
		} else {
			free(rp.target);
		}
		*mount = volume && !src->opts.xdev;
		rec->type = link ? 'l' : attrs & FILE_ATTRIBUTE_DIRECTORY ? 'd' : 'f';
	}
	if (src->opts.streams && rec->type != 'l') {
		DWORD code;
		if ((*streams = read_streams(t, h, &code)) < 0) {
			*streams = 0;
			if (code == ERROR_NOT_ENOUGH_MEMORY)
				ret = -1;
			else
				ret = set_win_error(rec, "streams", code);
		}
	}
done:
	if (h != INVALID_HANDLE_VALUE)
		CloseHandle(h);
	rec->meta.mode = fidx_win_mode(attrs, rec->type == 'l');
	/* A directory is entered, a volume mounted on it only without xdev. */
	*enter = rec->type == 'd' && (!volume || *mount);
	return ret;
}

/*
 * Records the listing entry e of directory dir: excluded or one of the run's
 * own files, nothing; a directory to enter, a job pushed (its record put
 * once listed); anything else, its record and its streams' put.  Returns 0,
 * or -1 when the run must stop.
 */
static int record_entry(struct worker *t, const struct dir_job *dir, const FILE_ID_BOTH_DIR_INFO *e)
{
	struct win_run *r = t->run;
	const uint16_t *name = (const uint16_t *)e->FileName;
	size_t n = e->FileNameLength / 2;
	if ((n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.') || n == 0)
		return 0;
	/* The stored path: the directory's, '/', the name in WTF-8. */
	const struct fidx_record *drec = dir->rec;
	size_t need = drec->path_len + 1 + FIDX_WTF8_MAX(n) + 1;
	if (reserve((void **)&t->path, &t->path_cap, need, 1) < 0)
		return out_of_memory(r);
	memcpy(t->path, drec->path, drec->path_len);
	t->path[drec->path_len] = '/';
	size_t len = drec->path_len + 1 + fidx_wtf8_put(t->path + drec->path_len + 1, name, n);
	t->path[len] = '\0';
	if (excluded(r, t->path, dir->root_len, drec->path_len + 1))
		return 0;
	if (is_own_file(r, t->path, len, dir->dev, (uint64_t)e->FileId.QuadPart))
		return 0;
	/* The native path: the directory's (a root's ends in '\'), '\', the name. */
	size_t dn = dir->native_len - (dir->native[dir->native_len - 1] == '\\');
	if (reserve((void **)&t->native, &t->native_cap, dn + 1 + n + 1, sizeof(wchar_t)) < 0)
		return out_of_memory(r);
	memcpy(t->native, dir->native, dn * sizeof(wchar_t));
	t->native[dn] = '\\';
	memcpy(t->native + dn + 1, name, n * sizeof(wchar_t));
	t->native[dn + 1 + n] = 0;

	struct fidx_record *rec = record_new(t->path, len, dir->root_index);
	if (!rec)
		return out_of_memory(r);
	meta_of_listing(rec, e, dir->dev);
	/* For a reparse point the listing's EaSize holds its tag. */
	uint32_t tag = e->FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT ? e->EaSize : 0;
	long streams;
	bool enter, mount;
	if (inspect(t, t->native, rec, tag, &streams, &enter, &mount) < 0) {
		fidx_record_free(rec);
		return out_of_memory(r);
	}
	if (enter) {
		struct dir_job *job = calloc(1, sizeof(*job));
		wchar_t *copy = malloc((dn + 1 + n + 1) * sizeof(wchar_t));
		if (!job || !copy) {
			free(job);
			free(copy);
			fidx_record_free(rec);
			return out_of_memory(r);
		}
		memcpy(copy, t->native, (dn + 1 + n + 1) * sizeof(wchar_t));
		*job = (struct dir_job){.rec = rec, .native = copy, .native_len = dn + 1 + n,
					.root_index = dir->root_index, .root_len = dir->root_len,
					.dev = dir->dev, .mount = mount};
		/* Its streams first: once pushed, another worker may put and free it. */
		if (streams > 0 && put_streams(t, rec, streams) < 0) {
			job_free(job);
			return -1;
		}
		push(r, job);
		return 0;
	}
	/* The streams are copied from the file's record before it goes. */
	if (streams > 0 && put_streams(t, rec, streams) < 0) {
		fidx_record_free(rec);
		return -1;
	}
	return put(t, rec);
}

/*
 * Lists directory job (its record holds the error of a failed listing, or
 * FIDX_ERROR_NOT_READ when the run stopped before the listing's end) and
 * records its entries.  Returns 0, or -1 when the run must stop.
 */
static int list_dir(struct worker *t, struct dir_job *job)
{
	struct win_run *r = t->run;
	DWORD flags = FILE_FLAG_BACKUP_SEMANTICS | (job->mount ? 0 : FILE_FLAG_OPEN_REPARSE_POINT);
	HANDLE h = CreateFileW(job->native, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES,
			       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			       OPEN_EXISTING, flags, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return set_win_error(job->rec, "list", GetLastError()) < 0 ? out_of_memory(r) : 0;
	if (job->mount) { /* the entries below are on the volume mounted here */
		DWORD serial;
		if (GetVolumeInformationByHandleW(h, NULL, 0, &serial, NULL, NULL, NULL, 0))
			job->dev = serial;
	}
	int ret = 0;
	for (;;) {
		if (run_stopping(r)) {
			ret = -1;
			break;
		}
		if (!GetFileInformationByHandleEx(h, FileIdBothDirectoryInfo, t->list, LIST_BUF)) {
			DWORD e = GetLastError();
			if (e != ERROR_NO_MORE_FILES && set_win_error(job->rec, "list", e) < 0)
				ret = out_of_memory(r);
			break;
		}
		const BYTE *p = t->list;
		for (;;) {
			const FILE_ID_BOTH_DIR_INFO *e = (const FILE_ID_BOTH_DIR_INFO *)p;
			if (atomic_load_explicit(&r->stopped, memory_order_relaxed) ||
			    record_entry(t, job, e) < 0) {
				ret = -1;
				goto out;
			}
			if (!e->NextEntryOffset)
				break;
			p += e->NextEntryOffset;
		}
	}
out:
	CloseHandle(h);
	/* Stopped part way (or before it began): `fidx scan --resume` lists it again. */
	if (ret < 0 && fidx_record_set_error(job->rec, FIDX_ERROR_NOT_READ, 0) < 0)
		out_of_memory(r);
	return ret;
}

/*
 * Looks at root job (given as job->root): makes its record from the open
 * root (followed when a link), and its stored and native paths.  Returns 1
 * when it is a directory to list, 0 when its record went to the sink (a
 * file, or a root that cannot be opened), -1 when the run must stop.
 */
static int look_at_root(struct worker *t, struct dir_job *job)
{
	struct win_run *r = t->run;
	const char *given = job->root;
	size_t glen = strlen(given);
	wchar_t *native = NULL;
	char *stored = NULL;
	size_t slen = 0, nlen = 0;
	DWORD code = 0;
	/* A stored path as it is; anything else as a native path, made absolute. */
	if (given[0] == '/')
		native = (wchar_t *)fidx_win_native_path(given, glen, &nlen);
	if (!native) {
		size_t wn;
		wchar_t *w = (wchar_t *)fidx_utf16_of_wtf8(given, glen, &wn);
		if (!w && errno == ENOMEM)
			return out_of_memory(r);
		/* A stored path written loosely ("/c:/x/"): C:\x, or \\server\share. */
		wchar_t *from = w;
		if (w && given[0] == '/') {
			for (size_t i = 0; i < wn; i++)
				w[i] = w[i] == '/' ? '\\' : w[i];
			if (wn >= 3 && w[2] == ':')
				from = w + 1;
		}
		if (w && wcsncmp(from, L"\\\\?\\", 4) == 0) {
			native = w;
			nlen = wcslen(w);
			w = NULL;
		} else if (w) {
			DWORD need = GetFullPathNameW(from, 0, NULL, NULL);
			if (need && (native = malloc(need * sizeof(wchar_t))))
				nlen = GetFullPathNameW(from, need, native, NULL);
			if (!need)
				code = GetLastError();
			else if (!native) {
				free(w);
				return out_of_memory(r);
			}
		}
		free(w);
	}
	if (native)
		stored = fidx_win_stored_path((const uint16_t *)native, nlen, &slen);
	if (native && !stored && errno == ENOMEM) {
		free(native);
		return out_of_memory(r);
	}
	/* Canonical again: the \\?\ path of the stored one. */
	free(native);
	native = stored ? (wchar_t *)fidx_win_native_path(stored, slen, &nlen) : NULL;
	if (stored && !native && errno == ENOMEM) {
		free(stored);
		return out_of_memory(r);
	}
	struct fidx_record *rec = native ? record_new(stored, slen, job->root_index)
					 : record_new(given, glen, job->root_index);
	free(stored);
	if (!rec) {
		free(native);
		return out_of_memory(r);
	}
	job->rec = rec;
	job->native = native;
	job->native_len = nlen;
	job->root_len = rec->path_len;
	if (!native) {
		if (code ? set_win_error(rec, "path", code) < 0
			 : fidx_record_set_error(rec, "path: not a Windows path", 0) < 0)
			return out_of_memory(r);
		job->rec = NULL;
		return put(t, rec) < 0 ? -1 : 0;
	}
	HANDLE h = CreateFileW(native, FILE_READ_ATTRIBUTES,
			       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			       OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
	BY_HANDLE_FILE_INFORMATION bh;
	FILE_BASIC_INFO basic;
	FILE_STANDARD_INFO std;
	if (h == INVALID_HANDLE_VALUE || !GetFileInformationByHandle(h, &bh) ||
	    !GetFileInformationByHandleEx(h, FileBasicInfo, &basic, sizeof(basic)) ||
	    !GetFileInformationByHandleEx(h, FileStandardInfo, &std, sizeof(std))) {
		int failed = set_win_error(rec, "open", GetLastError());
		if (h != INVALID_HANDLE_VALUE)
			CloseHandle(h);
		if (failed < 0)
			return out_of_memory(r);
		job->rec = NULL;
		return put(t, rec) < 0 ? -1 : 0;
	}
	struct fidx_meta *m = &rec->meta;
	rec->has_meta = true;
	rec->type = std.Directory ? 'd' : 'f';
	m->size = (uint64_t)std.EndOfFile.QuadPart;
	m->blocks = (uint64_t)std.AllocationSize.QuadPart / 512;
	m->nlink = std.NumberOfLinks;
	m->dev = job->dev = bh.dwVolumeSerialNumber;
	m->ino = (uint64_t)bh.nFileIndexHigh << 32 | bh.nFileIndexLow;
	m->atime = time_of(basic.LastAccessTime);
	m->mtime = time_of(basic.LastWriteTime);
	m->ctime = time_of(basic.ChangeTime);
	m->btime = time_of(basic.CreationTime);
	m->has_btime = true;
	m->mode = fidx_win_mode(basic.FileAttributes, false);
	rec->image->attributes = basic.FileAttributes;
	rec->image->has_attributes = true;
	long streams = 0;
	if (r->src->opts.streams && (streams = read_streams(t, h, &code)) < 0) {
		streams = 0;
		if (set_win_error(rec, "streams", code) < 0) {
			CloseHandle(h);
			return out_of_memory(r);
		}
	}
	CloseHandle(h);
	if (streams > 0 && put_streams(t, rec, streams) < 0)
		return -1;
	if (rec->type == 'd')
		return 1;
	job->rec = NULL;
	return put(t, rec) < 0 ? -1 : 0;
}

/*
 * Does job: looks at it when a root, lists it when a directory and the run
 * goes on (else marks it not read), puts its record.  Frees it.
 */
static void do_job(struct worker *t, struct dir_job *job)
{
	struct win_run *r = t->run;
	int go = 1;
	if (job->root && !run_stopping(r))
		go = look_at_root(t, job);
	if (go == 1 && job->rec) {
		if (run_stopping(r)) {
			if (fidx_record_set_error(job->rec, FIDX_ERROR_NOT_READ, 0) < 0)
				out_of_memory(r);
		} else {
			list_dir(t, job);
		}
		struct fidx_record *rec = job->rec;
		job->rec = NULL;
		put(t, rec);
	}
	job_free(job);
}

/* A worker: takes directories from the stack until none is left and none is busy. */
static void *worker_main(void *arg)
{
	struct worker *t = arg;
	struct win_run *r = t->run;
	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->stack && r->busy > 0)
			pthread_cond_wait(&r->wake, &r->lock);
		if (!r->stack)
			break;
		struct dir_job *job = r->stack;
		r->stack = job->next;
		r->busy++;
		pthread_mutex_unlock(&r->lock);
		do_job(t, job);
		pthread_mutex_lock(&r->lock);
		r->busy--;
		if (r->busy == 0 && !r->stack)
			pthread_cond_broadcast(&r->wake);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* Frees a worker's buffers (and ends its sink context). */
static void worker_free(struct worker *t)
{
	if (t->ctx)
		t->run->sink->thread_end(t->ctx, t->run->sink->arg);
	free(t->list);
	free(t->streams);
	free(t->reparse);
	free(t->path);
	free(t->native);
}

/* Notes the run's own files (leave_out).  Returns 0, or -1 when out of memory. */
static int note_own_files(struct win_run *r, const char *const *leave_out)
{
	size_t n = 0;
	while (leave_out && leave_out[n])
		n++;
	if (!(r->own = calloc(n ? n : 1, sizeof(*r->own))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *p = leave_out[i];
		size_t plen = strlen(p), wn = 0;
		wchar_t *w = p[0] == '/' ? (wchar_t *)fidx_win_native_path(p, plen, &wn)
					 : (wchar_t *)fidx_utf16_of_wtf8(p, plen, &wn);
		char *stored = w ? fidx_win_stored_path((const uint16_t *)w, wn, NULL) : NULL;
		if (!stored) { /* not a path this source reads: nothing of it is recorded */
			free(w);
			if (errno == ENOMEM)
				return -1;
			continue;
		}
		struct own_file *o = &r->own[r->nown++];
		o->path = stored;
		o->len = strlen(stored);
		free(w);
		wchar_t *native = (wchar_t *)fidx_win_native_path(stored, o->len, NULL);
		if (!native)
			return -1;
		HANDLE h = CreateFileW(native, FILE_READ_ATTRIBUTES,
				       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
				       OPEN_EXISTING,
				       FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
		free(native);
		BY_HANDLE_FILE_INFORMATION bh;
		if (h != INVALID_HANDLE_VALUE && GetFileInformationByHandle(h, &bh)) {
			o->dev = bh.dwVolumeSerialNumber;
			o->ino = (uint64_t)bh.nFileIndexHigh << 32 | bh.nFileIndexLow;
			o->exists = true;
		}
		if (h != INVALID_HANDLE_VALUE)
			CloseHandle(h);
	}
	return 0;
}

/* Lists run->roots into run->sink (source.h) on run->threads workers. */
static int win_run(struct fidx_source *base, const struct fidx_source_run *run,
		   struct fidx_error *err)
{
	struct win_run r = {.src = (const struct win_source *)base, .sink = run->sink};
	unsigned nthreads = run->threads ? run->threads : 1;
	struct worker *workers = calloc(nthreads, sizeof(*workers));
	pthread_t *tids = calloc(nthreads, sizeof(*tids));
	int ret = 0;
	if (!workers || !tids || note_own_files(&r, run->leave_out) < 0) {
		ret = fidx_fail_nomem(err);
		goto out;
	}
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.wake, NULL);
	/* The roots, the first on top. */
	for (size_t i = run->nroots; i-- > 0;) {
		struct dir_job *job = calloc(1, sizeof(*job));
		if (!job) {
			ret = fidx_fail_nomem(err);
			goto unwind;
		}
		job->root = run->roots[i];
		job->root_index = i;
		job->next = r.stack;
		r.stack = job;
	}
	unsigned started = 0;
	for (unsigned i = 0; i < nthreads; i++) {
		struct worker *t = &workers[i];
		t->run = &r;
		t->streams_size = STREAM_BUF;
		t->list = malloc(LIST_BUF); /* malloc's alignment (16) suits the listing */
		t->streams = malloc(STREAM_BUF);
		t->reparse = malloc(REPARSE_BUF);
		if (!t->list || !t->streams || !t->reparse) {
			worker_free(t);
			out_of_memory(&r);
			break;
		}
		if (!(t->ctx = run->sink->thread_start(run->sink->arg))) {
			worker_free(t);
			atomic_store(&r.stopped, true);
			break;
		}
		if (pthread_create(&tids[i], NULL, worker_main, t) != 0) {
			worker_free(t);
			run->sink->fail(run->sink->arg, "cannot start a thread");
			atomic_store(&r.stopped, true);
			break;
		}
		started++;
	}
	for (unsigned i = 0; i < started; i++) {
		pthread_join(tids[i], NULL);
		worker_free(&workers[i]);
	}
unwind:
	/* Nothing runs now; what no worker took (none started) is dropped. */
	while (r.stack) {
		struct dir_job *job = r.stack;
		r.stack = job->next;
		job_free(job);
	}
	pthread_cond_destroy(&r.wake);
	pthread_mutex_destroy(&r.lock);
out:
	for (size_t i = 0; i < r.nown; i++)
		free(r.own[i].path);
	free(r.own);
	free(workers);
	free(tids);
	return ret;
}

/* The handles a run holds at most: a directory and an entry per worker. */
static unsigned long win_fds(const struct fidx_source *src, unsigned threads)
{
	(void)src;
	return 2ul * threads;
}

/* Frees the source. */
static void win_free(struct fidx_source *src)
{
	free(src);
}

static const struct fidx_source_ops win_ops = {
	.name = "windows",
	.run = win_run,
	.fds = win_fds,
	.free = win_free,
};

struct fidx_source *fidx_win_source_new(const struct fidx_win_source_opts *opts,
					struct fidx_error *err)
{
	struct win_source *src = calloc(1, sizeof(*src));
	if (!src) {
		fidx_fail_nomem(err);
		return NULL;
	}
	src->base.ops = &win_ops;
	src->opts = *opts;
	return &src->base;
}
