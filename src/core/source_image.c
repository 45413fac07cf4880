/*
 * source_image.c - disk images (and block devices) as a source of records
 * (source.h), read with The Sleuth Kit: never mounted, opened read-only.
 *
 * Each root is an image: raw (one file, or a split set given by its first
 * piece), E01 (through libewf), whatever else the installed libtsk opens,
 * or a block device.  What it holds is recorded under the image's path:
 *
 *     IMAGE               the image itself: its file's metadata, the digests of
 *                         the media it holds (--image-hash; for raw the file's
 *                         bytes, for E01 the disk's), an error when an E01's
 *                         stored MD5 does not match them
 *     IMAGE/pN            the root directory of the file system of the Nth
 *                         allocated partition of its volume system (MBR, GPT...,
 *                         numbered as mmls lists them, from 1); a partition TSK
 *                         finds no file system in is a row with that error
 *     IMAGE/fs            ... of the file system of an image without a partition
 *                         table
 *     IMAGE/pN/a/b        an entry, by the path TSK gives it (fls -p)
 *     IMAGE/pN/a/b:s      an NTFS alternate data stream s of a/b, a row of its own
 *
 * Every name TSK walks is recorded (tsk_fs_dir_walk with allocated and
 * unallocated names, and TSK's $OrphanFiles), each with its state (row.h):
 * allocated; deleted (an unallocated name); reallocated (an unallocated name
 * whose metadata entry now holds another file: its metadata and content are
 * that file's, so neither is recorded); orphan (a metadata entry no name
 * points to, under $OrphanFiles); virtual (what TSK makes up: $OrphanFiles,
 * $MBR, $FAT1...).  A row's inode is the metadata address (inode, MFT entry),
 * its device the partition's number (0 for IMAGE/fs), its times TSK's (NTFS:
 * $STANDARD_INFORMATION; the $FILE_NAME set in the fn_* columns), its
 * attributes NTFS's (the flags of $STANDARD_INFORMATION, on the file's rows
 * and its streams').  A time TSK reports as 0 (a file system that keeps
 * none, FAT's change time) is 0.
 *
 * Threads.  The walk is one thread (TSK walks a file system in one); each
 * entry becomes a record, handed to the sink at once, except regular files
 * and streams, whose content is read and hashed by `workers` threads, each
 * with its own handles on the image and its file systems (TSK serialises the
 * reads of one handle behind its cache lock; docs/BENCHMARKS.md measures
 * both).  A record hashed here carries its digests (or the error that kept
 * them from it) and no_read, so the pipeline never looks for its path.  The
 * image's own digest is read by one more thread, sequentially, while the walk
 * runs (each digest computed by a thread of its own), and its row goes last.
 *
 *     walk (1) ──► records ─────────────────────────────────────► sink
 *        └──────► files ──► queue ──► workers (N, own handles) ──► sink
 *     image digest (1, own handle) ──► IMAGE's row, last ───────► sink
 */
#include "source.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <tsk/libtsk.h>
#include <libewf.h>

#include "hash.h"
#include "json.h"
#include "queue.h"

/*
 * The Sleuth Kit and libewf are loaded when an image is first read
 * (dlopen), not linked: with their own dependencies (libafflib, libcurl,
 * libstdc++, ... 30 libraries) they made every fidx command start 11 ms
 * later (17 ms to 28 ms for fidx --version), images or not.  Their functions
 * are called through lib, filled from these lists; FIDX_TSK_SONAME and
 * FIDX_EWF_SONAME are the libraries' names, as the build found them.
 */
#define TSK_FUNCS(X) \
	X(tsk_img_open_utf8_sing) \
	X(tsk_img_close) \
	X(tsk_img_read) \
	X(tsk_img_type_toname) \
	X(tsk_vs_open) \
	X(tsk_vs_close) \
	X(tsk_vs_part_get) \
	X(tsk_vs_type_toname) \
	X(tsk_fs_open_vol) \
	X(tsk_fs_open_img) \
	X(tsk_fs_close) \
	X(tsk_fs_type_toname) \
	X(tsk_fs_file_open_meta) \
	X(tsk_fs_file_close) \
	X(tsk_fs_file_attr_get) \
	X(tsk_fs_file_attr_getsize) \
	X(tsk_fs_file_attr_get_idx) \
	X(tsk_fs_file_attr_get_type) \
	X(tsk_fs_attr_read) \
	X(tsk_fs_dir_open_meta) \
	X(tsk_fs_dir_getsize) \
	X(tsk_fs_dir_get) \
	X(tsk_fs_dir_close) \
	X(tsk_error_get) \
	X(tsk_error_reset) \
	X(tsk_error_set_errno) \
	X(tsk_error_set_errstr) \
	X(tsk_version_get_str)
#define EWF_FUNCS(X) \
	X(libewf_check_file_signature) \
	X(libewf_glob) \
	X(libewf_glob_free) \
	X(libewf_handle_initialize) \
	X(libewf_handle_open) \
	X(libewf_handle_get_md5_hash) \
	X(libewf_handle_get_sha1_hash) \
	X(libewf_handle_close) \
	X(libewf_handle_free) \
	X(libewf_error_free) \
	X(libewf_error_sprint)

/* The functions of both libraries, once loaded. */
static struct {
#define FIDX_X(name) __typeof__(name) *name;
	TSK_FUNCS(FIDX_X)
	EWF_FUNCS(FIDX_X)
#undef FIDX_X
} lib;

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static char lib_error[512];     /* why they could not be loaded, or "" */

/* Loads both libraries into lib (once, by lib_ready()). */
static void lib_load(void)
{
	void *tsk = dlopen(FIDX_TSK_SONAME, RTLD_NOW | RTLD_LOCAL);
	void *ewf = tsk ? dlopen(FIDX_EWF_SONAME, RTLD_NOW | RTLD_LOCAL) : NULL;
	const char *missing = !tsk ? FIDX_TSK_SONAME : !ewf ? FIDX_EWF_SONAME : NULL;
#define FIDX_X(name) \
	if (!missing && !(*(void **)&lib.name = dlsym(tsk, #name))) missing = #name;
	TSK_FUNCS(FIDX_X)
#undef FIDX_X
#define FIDX_X(name) \
	if (!missing && !(*(void **)&lib.name = dlsym(ewf, #name))) missing = #name;
	EWF_FUNCS(FIDX_X)
#undef FIDX_X
	if (missing) {
		const char *why = dlerror();
		snprintf(lib_error, sizeof(lib_error), "cannot load The Sleuth Kit (%s): %s; install"
			 " Debian's libtsk19 and libewf2", missing, why ? why : "not found");
	}
}

/* Whether both libraries are loaded (loading them the first time); else err says why. */
static bool lib_ready(struct fidx_error *err)
{
	pthread_once(&lib_once, lib_load);
	if (lib_error[0] && err)
		fidx_fail(err, ELIBACC, "%s", lib_error);
	return !lib_error[0];
}

#define READ_BLOCK (1 << 20) /* bytes read at once from a file in the image, or the image */
#define QUEUE_FILES 1024     /* files waiting for a worker */
#define MAX_PARTS 128        /* partitions of one image that are walked */

struct image_source {
	struct fidx_source base;
	struct fidx_image_source_opts opts;
};

/* A file system of the image being read: where it starts and what it is. */
struct part {
	TSK_OFF_T offset;             /* bytes from the start of the image */
	TSK_FS_TYPE_ENUM type;        /* as TSK detected it */
	char name[16];                /* "p1", or "fs" */
	unsigned number;              /* the device of its rows: N of pN, 0 for fs */
	char error[160];              /* what is wrong with it, on its root's row, or "" */
};

/* One root's read: what the walk, the workers and the digest thread share. */
struct image_run {
	const struct image_source *src;
	const struct fidx_sink *sink;
	const char *root;             /* the image's path */
	size_t root_len;
	size_t root_index;
	int64_t media_size;           /* bytes of the image's media (-1 until opened) */
	struct part parts[MAX_PARTS]; /* filled before any file of it is queued */
	size_t nparts;
	struct fidx_queue *files;     /* struct job, from the walk to the workers */
};

/* A file (or stream) whose content a worker reads. */
struct job {
	struct fidx_record *rec;
	size_t part;                  /* index in parts[] */
	TSK_INUM_T addr;              /* its metadata address */
	bool stream;                  /* read the attribute (type, id), not the default */
	TSK_FS_ATTR_TYPE_ENUM attr_type;
	uint16_t attr_id;
};

/* The walk of one file system. */
struct walker {
	struct image_run *run;
	void *ctx;                    /* the sink's context of the walk's thread */
	size_t part;
	TSK_FS_INFO *fs;
	bool failed;                  /* out of memory: the sink was told */
};

/* TSK's last error on this thread, on one line ("none found" when it gave none). */
static const char *tsk_why(char *buf, size_t size)
{
	const char *e = lib.tsk_error_get();
	snprintf(buf, size, "%s", e && *e ? e : "none found");
	for (char *p = buf; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	size_t n = strlen(buf);
	while (n && buf[n - 1] == ' ')
		buf[--n] = '\0';
	lib.tsk_error_reset();
	return buf;
}

/* Opens the image at path read-only.  NULL with TSK's error set. */
static TSK_IMG_INFO *open_image(const char *path)
{
	return lib.tsk_img_open_utf8_sing(path, TSK_IMG_TYPE_DETECT, 0);
}

/* A TSK time and its nanoseconds as a fidx time (nanoseconds kept within a second). */
static struct fidx_time time_of(time_t sec, int64_t nsec)
{
	if (nsec < 0 || nsec >= FIDX_NS_PER_S)
		nsec = 0;
	return (struct fidx_time){.sec = sec, .nsec = (uint32_t)nsec};
}

/* The type letter of a TSK entry (its metadata's type, else its name's). */
static char type_of(const TSK_FS_FILE *f)
{
	if (f->meta) {
		switch (f->meta->type) {
		case TSK_FS_META_TYPE_REG: case TSK_FS_META_TYPE_VIRT: return 'f';
		case TSK_FS_META_TYPE_DIR: case TSK_FS_META_TYPE_VIRT_DIR: return 'd';
		case TSK_FS_META_TYPE_FIFO: return 'p';
		case TSK_FS_META_TYPE_CHR: return 'c';
		case TSK_FS_META_TYPE_BLK: return 'b';
		case TSK_FS_META_TYPE_LNK: return 'l';
		case TSK_FS_META_TYPE_SOCK: return 's';
		default: break;
		}
	}
	switch (f->name ? f->name->type : TSK_FS_NAME_TYPE_UNDEF) {
	case TSK_FS_NAME_TYPE_REG: case TSK_FS_NAME_TYPE_VIRT: return 'f';
	case TSK_FS_NAME_TYPE_DIR: case TSK_FS_NAME_TYPE_VIRT_DIR: return 'd';
	case TSK_FS_NAME_TYPE_FIFO: return 'p';
	case TSK_FS_NAME_TYPE_CHR: return 'c';
	case TSK_FS_NAME_TYPE_BLK: return 'b';
	case TSK_FS_NAME_TYPE_LNK: return 'l';
	case TSK_FS_NAME_TYPE_SOCK: return 's';
	default: return 0;
	}
}

/* The st_mode type bits of type letter t. */
static uint32_t mode_type(char t)
{
	switch (t) {
	case 'f': return S_IFREG;
	case 'd': return S_IFDIR;
	case 'l': return S_IFLNK;
	case 'p': return S_IFIFO;
	case 's': return S_IFSOCK;
	case 'c': return S_IFCHR;
	case 'b': return S_IFBLK;
	default: return 0;
	}
}

/*
 * The state of entry f of file system fs (row.h): see the top.  Returns a
 * static string.
 */
static const char *state_of(const TSK_FS_FILE *f, const TSK_FS_INFO *fs)
{
	if (f->meta && (f->meta->type == TSK_FS_META_TYPE_VIRT ||
			f->meta->type == TSK_FS_META_TYPE_VIRT_DIR))
		return "virtual";
	/* In TSK's own $OrphanFiles, not a folder of the file system by that name. */
	if (f->name && f->name->par_addr == TSK_FS_ORPHANDIR_INUM(fs))
		return "orphan";
	if (f->name && (f->name->flags & TSK_FS_NAME_FLAG_UNALLOC))
		return f->meta && (f->meta->flags & TSK_FS_META_FLAG_ALLOC) ? "reallocated"
									    : "deleted";
	return "allocated";
}

/*
 * Makes a record at path (n bytes) for the run, with no metadata.  Returns it,
 * or NULL (out of memory).
 */
static struct fidx_record *record_new(const struct image_run *r, const char *path, size_t n,
				      const char *state)
{
	struct fidx_record *rec = calloc(1, sizeof(*rec));
	if (!rec || !(rec->path = malloc(n + 1)) ||
	    (state && !(rec->image = calloc(1, sizeof(*rec->image))))) {
		fidx_record_free(rec);
		return NULL;
	}
	memcpy(rec->path, path, n);
	rec->path[n] = '\0';
	rec->path_len = n;
	const char *slash = memrchr(rec->path, '/', n);
	rec->name_off = slash ? (size_t)(slash + 1 - rec->path) : 0;
	rec->ext_off = fidx_ext_offset(rec->path, rec->name_off, n);
	rec->root_index = r->root_index;
	rec->no_read = true;
	if (state)
		rec->image->state = state;
	return rec;
}

/* Fills rec's metadata from TSK's meta, on partition number dev. */
static void meta_of(struct fidx_record *rec, const TSK_FS_META *m, unsigned dev, bool ntfs)
{
	struct fidx_meta *o = &rec->meta;
	rec->has_meta = true;
	o->size = m->size > 0 ? (uint64_t)m->size : 0;
	o->mode = mode_type(rec->type) | ((uint32_t)m->mode & 07777);
	o->uid = m->uid;
	o->gid = m->gid;
	o->nlink = (uint64_t)m->nlink;
	o->dev = dev;
	o->ino = m->addr;
	o->atime = time_of(m->atime, m->atime_nano);
	o->mtime = time_of(m->mtime, m->mtime_nano);
	o->ctime = time_of(m->ctime, m->ctime_nano);
	o->btime = time_of(m->crtime, m->crtime_nano);
	o->has_btime = true;
	/* TSK's 0 is a time the file system does not keep (fls shows 0000-00-00). */
	const time_t secs[4] = {m->atime, m->mtime, m->ctime, m->crtime};
	const uint32_t nanos[4] = {m->atime_nano, m->mtime_nano, m->ctime_nano, m->crtime_nano};
	for (int k = 0; rec->image && k < 4; k++)
		if (secs[k] == 0 && nanos[k] == 0)
			rec->image->no_time |= 1u << k;
	if (rec->type == 'l' && m->link && !rec->link_target) {
		rec->link_len = strlen(m->link);
		rec->link_target = strdup(m->link);
	}
	const typeof(m->time2.ntfs) *fn = &m->time2.ntfs;
	if (ntfs && rec->image && (fn->fn_atime || fn->fn_mtime || fn->fn_ctime || fn->fn_crtime)) {
		rec->image->has_fn_times = true;
		rec->image->fn_time[0] = time_of(fn->fn_atime, fn->fn_atime_nano);
		rec->image->fn_time[1] = time_of(fn->fn_mtime, fn->fn_mtime_nano);
		rec->image->fn_time[2] = time_of(fn->fn_ctime, fn->fn_ctime_nano);
		rec->image->fn_time[3] = time_of(fn->fn_crtime, fn->fn_crtime_nano);
	}
}

/*
 * Whether attribute a is recorded as a stream of its file, as fls lists it: a
 * named $DATA (an alternate data stream), or a named index other than a
 * directory's ($I30), such as $Secure:$SDH.
 */
static bool is_stream(const TSK_FS_ATTR *a)
{
	if (!a->name || !*a->name)
		return false;
	if (a->type == TSK_FS_ATTR_TYPE_NTFS_DATA)
		return strcmp(a->name, "$Data") != 0;
	return a->type == TSK_FS_ATTR_TYPE_NTFS_IDXROOT && strcmp(a->name, "$I30") != 0;
}

/*
 * Reads the flags of NTFS file f's $STANDARD_INFORMATION into *flags: the
 * FILE_ATTRIBUTE_* word Windows reports (read-only 0x1, hidden 0x2, ...), 4
 * bytes little-endian at byte 32 of the attribute, as stored (NTFS keeps no
 * directory bit there).  Returns false when f has no such attribute or it is
 * too short (a damaged entry).
 */
static bool si_flags(TSK_FS_FILE *f, uint32_t *flags)
{
	unsigned char b[4];
	const TSK_FS_ATTR *a = lib.tsk_fs_file_attr_get_type(f, TSK_FS_ATTR_TYPE_NTFS_SI, 0, 0);
	bool ok = a && lib.tsk_fs_attr_read(a, 32, (char *)b, sizeof(b),
					    TSK_FS_FILE_READ_FLAG_NONE) == (ssize_t)sizeof(b);
	lib.tsk_error_reset();
	if (ok)
		*flags = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	return ok;
}

/* The 512-byte blocks the default attribute of f occupies (0 when resident or unknown). */
static uint64_t blocks_of(TSK_FS_FILE *f)
{
	const TSK_FS_ATTR *a = lib.tsk_fs_file_attr_get(f);
	lib.tsk_error_reset();
	return a && (a->flags & TSK_FS_ATTR_NONRES) && a->nrd.allocsize > 0
		       ? (uint64_t)a->nrd.allocsize / 512 : 0;
}

/* Hands rec to the sink from the walk.  Returns false when the walk must stop. */
static bool put_walked(struct walker *w, struct fidx_record *rec)
{
	const struct fidx_sink *sink = w->run->sink;
	return sink->put(w->ctx, rec) == 0 && !sink->stopping(sink->arg);
}

/* Queues rec's content for a worker.  Returns false when the walk must stop. */
static bool queue_file(struct walker *w, struct fidx_record *rec, TSK_INUM_T addr,
		       const TSK_FS_ATTR *stream)
{
	struct job *j = malloc(sizeof(*j));
	if (!j) {
		fidx_record_free(rec);
		w->failed = true;
		w->run->sink->fail(w->run->sink->arg, "out of memory");
		return false;
	}
	*j = (struct job){.rec = rec, .part = w->part, .addr = addr, .stream = stream != NULL,
			  .attr_type = stream ? stream->type : 0, .attr_id = stream ? stream->id : 0};
	if (fidx_queue_push(w->run->files, j) < 0) {
		fidx_record_free(rec);
		free(j);
		return false;
	}
	return !w->run->sink->stopping(w->run->sink->arg);
}

/* The full path of name at dir (TSK's, "a/b/" or "") in w's file system; NULL on ENOMEM. */
static char *path_of(const struct walker *w, const char *dir, const char *name, size_t *n)
{
	const struct image_run *r = w->run;
	const char *pname = r->parts[w->part].name;
	char *p = NULL;
	int len = asprintf(&p, "%.*s/%s%s%s%s", (int)r->root_len, r->root, pname, *dir || *name ? "/" : "",
			   dir, name);
	if (len < 0)
		return NULL;
	*n = (size_t)len;
	return p;
}

/*
 * Records TSK entry f named name found at dir ("a/b/", or ""; both "" for the
 * file system's root directory, recorded as IMAGE/pN) and its streams, with
 * the error note when not NULL.  Returns false when the walk must stop.
 */
static bool record_entry(struct walker *w, TSK_FS_FILE *f, const char *dir, const char *name,
			 const char *note)
{
	struct image_run *r = w->run;
	unsigned digests = r->src->opts.digests;
	size_t n;
	char *path = path_of(w, dir, name, &n);
	const char *state = state_of(f, w->fs);
	struct fidx_record *rec = path ? record_new(r, path, n, state) : NULL;
	if (!rec)
		goto nomem;
	rec->type = type_of(f);
	bool ntfs = TSK_FS_TYPE_ISNTFS(w->fs->ftype);
	bool meta = f->meta && strcmp(state, "reallocated") != 0;
	uint32_t attributes = 0;
	bool has_attributes = meta && ntfs && si_flags(f, &attributes);
	if (meta) {
		meta_of(rec, f->meta, r->parts[w->part].number, ntfs);
		rec->image->has_attributes = has_attributes;
		rec->image->attributes = attributes;
		if (rec->type == 'l' && f->meta->link && !rec->link_target)
			goto nomem;
		rec->meta.blocks = blocks_of(f);
	}
	if (note && fidx_record_set_error(rec, note, 0) < 0)
		goto nomem;
	/* A name no file system allows, which makes its path read as another's. */
	if (strchr(name, '/') &&
	    fidx_record_set_error(rec, "the name holds a '/' (the path reads as if it were"
				  " deeper)", 0) < 0)
		goto nomem;
	bool content = rec->type == 'f' && meta && digests && !rec->error;
	/* The streams are read from the file's entry: listed before the file is handed on. */
	int nattr = meta && ntfs && rec->type == 'f' ? lib.tsk_fs_file_attr_getsize(f) : 0;
	TSK_INUM_T addr = f->meta ? f->meta->addr : 0;
	if (!(content ? queue_file(w, rec, addr, NULL) : put_walked(w, rec))) {
		free(path);
		return false;
	}
	rec = NULL;
	for (int i = 0; i < nattr; i++) {
		const TSK_FS_ATTR *a = lib.tsk_fs_file_attr_get_idx(f, i);
		if (!a || !is_stream(a))
			continue;
		size_t sn;
		char *spath = NULL;
		if (asprintf(&spath, "%s:%s", path, a->name) < 0)
			goto nomem;
		sn = strlen(spath);
		struct fidx_record *s = record_new(r, spath, sn, state);
		free(spath);
		if (!s || !(s->image->stream = strdup(a->name))) {
			fidx_record_free(s);
			goto nomem;
		}
		s->type = 'f';
		meta_of(s, f->meta, r->parts[w->part].number, ntfs);
		s->image->has_attributes = has_attributes;
		s->image->attributes = attributes;
		s->meta.size = a->size > 0 ? (uint64_t)a->size : 0;
		s->meta.blocks = (a->flags & TSK_FS_ATTR_NONRES) && a->nrd.allocsize > 0
					 ? (uint64_t)a->nrd.allocsize / 512 : 0;
		if (!(digests ? queue_file(w, s, addr, a) : put_walked(w, s))) {
			free(path);
			return false;
		}
	}
	lib.tsk_error_reset();
	free(path);
	return true;
nomem:
	free(path);
	fidx_record_free(rec);
	w->failed = true;
	r->sink->fail(r->sink->arg, "out of memory");
	return false;
}

/*
 * Records a row at IMAGE/NAME with no metadata and error why (a partition
 * TSK finds no file system in).  Returns false when the read must stop.
 */
static bool record_failed(struct walker *w, const char *name, const char *why)
{
	struct image_run *r = w->run;
	char *path = NULL;
	int n = asprintf(&path, "%.*s/%s", (int)r->root_len, r->root, name);
	struct fidx_record *rec = n < 0 ? NULL : record_new(r, path, (size_t)n, "allocated");
	free(path);
	if (!rec || (rec->type = 'd', fidx_record_set_error(rec, why, 0) < 0)) {
		fidx_record_free(rec);
		w->failed = true;
		r->sink->fail(r->sink->arg, "out of memory");
		return false;
	}
	return put_walked(w, rec);
}

/*
 * The walk of a file system's folders, ours rather than tsk_fs_dir_walk():
 * TSK's keeps each path in a buffer of 4,096 bytes and stops at 128 levels,
 * and a folder whose path is 4,095 bytes long aborts the process inside it
 * (glibc's buffer overflow check; fls too).  Ours lists each folder with
 * tsk_fs_dir_open_meta(), keeps the path in a buffer that grows, and keeps
 * the open folders on a stack of its own (not the C stack: a hostile image
 * nests as deep as it likes), entering as TSK does: a folder's metadata (not
 * a reallocated name's), never a folder that is its own ancestor (a loop of
 * a damaged file system), and TSK's $OrphanFiles last, at the root only: its
 * listing is TSK's search for orphans, a walk of the whole tree with TSK's
 * limits, skipped (with an error on its row) when the tree has a path it
 * would abort on.
 */
#define MAX_LEVELS 4096   /* folders deeper than this are recorded, not entered */
#define TSK_PATH_SAFE 4000 /* a path this long makes TSK's own walk (its orphan search) abort */

/*
 * Loads the metadata of entry f when the listing gave its name alone (an
 * unallocated name: tsk_fs_dir_get() leaves its meta NULL, tsk_fs_dir_walk()
 * loads it).  Without it when it cannot be loaded.
 */
static void with_meta(TSK_FS_INFO *fs, TSK_FS_FILE *f)
{
	if (f->meta || !f->name->meta_addr)
		return;
	TSK_FS_FILE *m = lib.tsk_fs_file_open_meta(fs, NULL, f->name->meta_addr);
	if (m) {
		f->meta = m->meta; /* f owns it now: lib.tsk_fs_file_close(f) frees it */
		m->meta = NULL;
		lib.tsk_fs_file_close(m);
	}
	lib.tsk_error_reset();
}

/* A folder being listed. */
struct frame {
	TSK_FS_DIR *dir;
	size_t next, n;       /* the entry to take next, and how many there are */
	TSK_INUM_T addr;      /* its metadata address */
	size_t dir_len;       /* the length of the path of its parent's entries */
};

/* The folders being listed, the root first, and the path of the last one's entries. */
struct folders {
	struct frame *frames;
	size_t n, cap;
	char *dir;            /* "a/b/" (NUL-terminated), "" at the root */
	size_t len, dcap;
};

/* Whether addr is a folder being listed (entering it again would loop). */
static bool is_ancestor(const struct folders *fo, TSK_INUM_T addr)
{
	for (size_t i = 0; i < fo->n; i++)
		if (fo->frames[i].addr == addr)
			return true;
	return false;
}

/* Enters listed folder d at addr, named name (NULL: the root).  Returns false on ENOMEM. */
static bool push_folder(struct folders *fo, TSK_FS_DIR *d, TSK_INUM_T addr, const char *name)
{
	size_t nlen = name ? strlen(name) + 1 : 0;
	if (fo->n == fo->cap) {
		size_t cap = fo->cap ? 2 * fo->cap : 16;
		struct frame *f = realloc(fo->frames, cap * sizeof(*f));
		if (!f)
			return false;
		fo->frames = f;
		fo->cap = cap;
	}
	if (fo->len + nlen + 1 > fo->dcap) {
		size_t cap = 2 * (fo->len + nlen + 1);
		char *p = realloc(fo->dir, cap);
		if (!p)
			return false;
		fo->dir = p;
		fo->dcap = cap;
	}
	fo->frames[fo->n++] = (struct frame){.dir = d, .n = lib.tsk_fs_dir_getsize(d), .addr = addr,
					     .dir_len = fo->len};
	if (name) {
		memcpy(fo->dir + fo->len, name, nlen - 1);
		fo->len += nlen;
		fo->dir[fo->len - 1] = '/';
	}
	fo->dir[fo->len] = '\0';
	return true;
}

/* Leaves the last folder entered. */
static void pop_folder(struct folders *fo)
{
	struct frame *f = &fo->frames[--fo->n];
	lib.tsk_fs_dir_close(f->dir);
	fo->len = f->dir_len;
	fo->dir[fo->len] = '\0';
}

/* Leaves every folder entered, closes orphans (NULL allowed) and frees fo's memory. */
static void folders_free(struct folders *fo, TSK_FS_FILE *orphans)
{
	while (fo->n)
		pop_folder(fo);
	lib.tsk_fs_file_close(orphans);
	free(fo->frames);
	free(fo->dir);
}

/*
 * Whether entry f, at depth levels below the root, is a folder to enter; sets
 * *note when it is one that is not entered for a reason worth its row's error.
 */
static bool to_enter(const struct walker *w, const struct folders *fo, const TSK_FS_FILE *f,
		     const char **note)
{
	*note = NULL;
	if (!f->meta || !TSK_FS_IS_DIR_META(f->meta->type) ||
	    ((f->name->flags & TSK_FS_NAME_FLAG_UNALLOC) && (f->meta->flags & TSK_FS_META_FLAG_ALLOC)))
		return false;
	if (f->meta->addr == TSK_FS_ORPHANDIR_INUM(w->fs)) /* entered by walk_fs(), last */
		return false;
	if (is_ancestor(fo, f->meta->addr)) {
		*note = "not entered: the folder is one of its own ancestors (a damaged file system)";
		return false;
	}
	if (fo->n >= MAX_LEVELS) {
		*note = "not entered: fidx enters no folder deeper than 4096 levels";
		return false;
	}
	return true;
}

/*
 * Records entry f of the folder being listed (fo->dir) with the error note,
 * then enters sub, its listing at addr (NULL: none).  Takes f and sub.
 * Returns 1 to go on, 0 when the walk must stop, -1 when out of memory.
 */
static int record_and_enter(struct walker *w, struct folders *fo, TSK_FS_FILE *f,
			    TSK_FS_DIR *sub, TSK_INUM_T addr, const char *note)
{
	int rc = record_entry(w, f, fo->dir, f->name->name, note) ? 1 : 0;
	if (rc && sub) {
		if (push_folder(fo, sub, addr, f->name->name))
			sub = NULL; /* the stack's now */
		else
			rc = -1;
	}
	if (sub)
		lib.tsk_fs_dir_close(sub);
	lib.tsk_fs_file_close(f);
	return rc;
}

/* Walks file system fs, parts[w->part]: its root directory, then every name below. */
static bool walk_fs(struct walker *w)
{
	char why[512], msg[600];
	struct folders fo = {0};
	bool go = true, long_paths = false;
	TSK_FS_FILE *orphans = NULL;   /* the root's $OrphanFiles, listed last */
	TSK_FS_FILE *root = lib.tsk_fs_file_open_meta(w->fs, NULL, w->fs->root_inum);
	TSK_FS_DIR *d = root ? lib.tsk_fs_dir_open_meta(w->fs, w->fs->root_inum) : NULL;
	if (!d) {
		snprintf(msg, sizeof(msg), "cannot read the root directory: %s",
			 tsk_why(why, sizeof(why)));
		if (root)
			lib.tsk_fs_file_close(root);
		return record_failed(w, w->run->parts[w->part].name, msg);
	}
	const char *note = w->run->parts[w->part].error;
	go = record_entry(w, root, "", "", *note ? note : NULL);
	lib.tsk_fs_file_close(root);
	if (!go || !push_folder(&fo, d, w->fs->root_inum, NULL)) {
		lib.tsk_fs_dir_close(d);
		if (!go)
			return false;
		goto nomem;
	}
	while (go && (fo.n || orphans)) {
		if (!fo.n) {
			/* The tree is walked: now TSK's $OrphanFiles, unless its search would
			 * meet a path it cannot hold (its walk aborts the process on one). */
			note = long_paths ? "not listed: The Sleuth Kit's search for orphan files"
					    " cannot walk a file system with paths of 4,000 bytes or"
					    " more" : NULL;
			TSK_FS_DIR *od = long_paths ? NULL
					 : lib.tsk_fs_dir_open_meta(w->fs, TSK_FS_ORPHANDIR_INUM(w->fs));
			if (!long_paths && !od) {
				snprintf(msg, sizeof(msg), "cannot list the orphan files: %s",
					 tsk_why(why, sizeof(why)));
				note = msg;
			}
			int rc = record_and_enter(w, &fo, orphans, od, TSK_FS_ORPHANDIR_INUM(w->fs),
						  note);
			orphans = NULL;
			if (rc < 0)
				goto nomem;
			go = rc > 0;
			continue;
		}
		struct frame *top = &fo.frames[fo.n - 1];
		if (top->next == top->n) {
			pop_folder(&fo);
			continue;
		}
		TSK_FS_FILE *f = lib.tsk_fs_dir_get(top->dir, top->next++);
		if (!f || !f->name || TSK_FS_ISDOT(f->name->name)) {
			lib.tsk_error_reset();
			lib.tsk_fs_file_close(f);
			continue;
		}
		with_meta(w->fs, f);
		/* TSK's orphan search walks the whole tree again, with its own limits: last. */
		if (f->name->meta_addr == TSK_FS_ORPHANDIR_INUM(w->fs) && fo.n == 1 && !orphans) {
			orphans = f;
			continue;
		}
		if (strlen(fo.dir) + strlen(f->name->name) >= TSK_PATH_SAFE)
			long_paths = true;
		TSK_FS_DIR *sub = NULL;
		bool enter = to_enter(w, &fo, f, &note);
		if (enter && !(sub = lib.tsk_fs_dir_open_meta(w->fs, f->meta->addr))) {
			/* A deleted folder whose listing is gone is what deletion leaves. */
			if (!(f->name->flags & TSK_FS_NAME_FLAG_UNALLOC)) {
				snprintf(msg, sizeof(msg), "cannot list the folder: %s",
					 tsk_why(why, sizeof(why)));
				note = msg;
			}
			lib.tsk_error_reset();
		}
		int rc = record_and_enter(w, &fo, f, sub, sub ? f->meta->addr : 0, note);
		if (rc < 0)
			goto nomem;
		go = rc > 0;
	}
	folders_free(&fo, orphans);
	return go && !w->failed;
nomem:
	folders_free(&fo, orphans);
	w->failed = true;
	w->run->sink->fail(w->run->sink->arg, "out of memory");
	return false;
}

/* ---- the workers ---- */

/* A worker's handles on the image and the file systems it read from. */
struct worker {
	struct image_run *run;
	void *ctx;
	TSK_IMG_INFO *img;
	TSK_FS_INFO *fs[MAX_PARTS];
	struct fidx_hasher *hasher;
	char *buf;
};

/* The attribute of f that stream job j reads, as the walk listed it; NULL with TSK's error. */
static const TSK_FS_ATTR *stream_of(TSK_FS_FILE *f, const struct job *j)
{
	int n = lib.tsk_fs_file_attr_getsize(f);
	for (int i = 0; i < n; i++) {
		const TSK_FS_ATTR *a = lib.tsk_fs_file_attr_get_idx(f, i);
		if (a && a->type == j->attr_type && a->id == j->attr_id)
			return a;
	}
	lib.tsk_error_reset();
	lib.tsk_error_set_errno(TSK_ERR_FS_ATTR_NOTFOUND);
	lib.tsk_error_set_errstr("the stream's attribute (%d-%d) is gone", (int)j->attr_type,
			     (int)j->attr_id);
	return NULL;
}

/* Reads the content of j into its record's digests, or sets its error. */
static void read_job(struct worker *k, struct job *j)
{
	char why[512];
	struct fidx_record *rec = j->rec;
	const struct part *p = &k->run->parts[j->part];
	const char *op = "open";
	TSK_FS_FILE *f = NULL;
	if (!k->img && !(k->img = open_image(k->run->root)))
		goto fail;
	if (!k->fs[j->part] && !(k->fs[j->part] = lib.tsk_fs_open_img(k->img, p->offset, p->type)))
		goto fail;
	if (!(f = lib.tsk_fs_file_open_meta(k->fs[j->part], NULL, j->addr)))
		goto fail;
	const TSK_FS_ATTR *a = j->stream ? stream_of(f, j) : lib.tsk_fs_file_attr_get(f);
	op = "read";
	if (!a && rec->meta.size == 0)
		lib.tsk_error_reset(); /* an empty file may have no data attribute */
	else if (!a)
		goto fail;
	if (fidx_hasher_reset(k->hasher) < 0)
		goto nomem;
	for (uint64_t off = 0; a && off < rec->meta.size;) {
		size_t want = rec->meta.size - off < READ_BLOCK ? rec->meta.size - off : READ_BLOCK;
		ssize_t got = lib.tsk_fs_attr_read(a, (TSK_OFF_T)off, k->buf, want,
					       TSK_FS_FILE_READ_FLAG_NONE);
		if (got <= 0)
			goto fail;
		if (fidx_hasher_update(k->hasher, k->buf, (size_t)got) < 0)
			goto nomem;
		off += (uint64_t)got;
		if (off < rec->meta.size && k->run->sink->stopping(k->run->sink->arg)) {
			lib.tsk_fs_file_close(f);
			if (fidx_record_set_error(rec, FIDX_ERROR_NOT_HASHED, 0) < 0)
				k->run->sink->fail(k->run->sink->arg, "out of memory");
			return;
		}
	}
	if (fidx_hasher_final(k->hasher, rec->digest) < 0)
		goto nomem;
	rec->digest_mask = k->run->src->opts.digests;
	lib.tsk_fs_file_close(f);
	return;
fail:
	lib.tsk_fs_file_close(f);
	tsk_why(why, sizeof(why));
	if (fidx_record_set_error(rec, op, 0) == 0) {
		char *e = NULL;
		if (asprintf(&e, "%s: %s", op, why) >= 0) {
			free(rec->error);
			rec->error = e;
		}
	}
	return;
nomem:
	lib.tsk_fs_file_close(f);
	k->run->sink->fail(k->run->sink->arg, "out of memory");
}

/* A worker thread: reads and hashes queued files, hands their records to the sink. */
static void *worker_main(void *arg)
{
	struct worker *k = arg;
	const struct fidx_sink *sink = k->run->sink;
	k->ctx = sink->thread_start(sink->arg);
	k->hasher = fidx_hasher_create(k->run->src->opts.digests);
	k->buf = malloc(READ_BLOCK);
	bool ready = k->ctx && k->hasher && k->buf;
	if (!ready)
		sink->fail(sink->arg, "out of memory");
	struct job *j;
	while ((j = fidx_queue_pop(k->run->files))) {
		struct fidx_record *rec = j->rec;
		if (ready && !sink->stopping(sink->arg)) {
			read_job(k, j);
			if (sink->put(k->ctx, rec) < 0)
				ready = false;
		} else {
			fidx_record_free(rec);
		}
		free(j);
	}
	for (size_t i = 0; i < MAX_PARTS; i++)
		if (k->fs[i])
			lib.tsk_fs_close(k->fs[i]);
	if (k->img)
		lib.tsk_img_close(k->img);
	fidx_hasher_destroy(k->hasher);
	free(k->buf);
	if (k->ctx)
		sink->thread_end(k->ctx, sink->arg);
	return NULL;
}

/* ---- the image's own digest ---- */

/*
 * The image's own digest.  One thread reads the media in order, through a
 * handle of its own, into a ring of blocks; each digest asked for is computed
 * by a thread of its own from the same blocks (MD5, 0.7 GB/s on one core,
 * would otherwise hold up SHA-1 and SHA-256 behind it, and the read itself):
 *
 *     reader ──► ring (DIGEST_RING blocks) ──► a hasher per digest
 *
 * The reader fills block k once every hasher is done with k - DIGEST_RING;
 * a hasher takes block k once it is filled.
 */
#define DIGEST_RING 8

/* What the digest threads share. */
struct image_digest {
	struct image_run *run;
	unsigned mask;                /* the digests of the media */
	uint8_t digest[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	char error[600];              /* what kept them from it, or "" */
	bool nomem;
	pthread_mutex_t lock;
	pthread_cond_t moved;         /* a block filled, or taken by every hasher */
	char *block[DIGEST_RING];
	size_t len[DIGEST_RING];
	uint64_t filled;              /* blocks the reader filled */
	bool end;                     /* it filled its last (or failed) */
	uint64_t done[FIDX_NDIGESTS]; /* blocks each hasher is done with */
};

/* One hasher of the image's digest. */
struct digest_hasher {
	struct image_digest *d;
	enum fidx_digest which;
};

/* A hasher thread: digest `which` of every block, in order. */
static void *digest_hasher_main(void *arg)
{
	struct digest_hasher *dh = arg;
	struct image_digest *d = dh->d;
	struct fidx_hasher *h = fidx_hasher_create(1u << dh->which);
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	bool ok = h != NULL;
	pthread_mutex_lock(&d->lock);
	for (uint64_t k = 0;; k++) {
		while (d->filled <= k && !d->end)
			pthread_cond_wait(&d->moved, &d->lock);
		if (d->filled <= k)
			break;
		pthread_mutex_unlock(&d->lock);
		ok = ok && fidx_hasher_update(h, d->block[k % DIGEST_RING],
					      d->len[k % DIGEST_RING]) == 0;
		pthread_mutex_lock(&d->lock);
		d->done[dh->which] = k + 1;
		pthread_cond_broadcast(&d->moved);
	}
	pthread_mutex_unlock(&d->lock);
	ok = ok && fidx_hasher_final(h, out) == 0;
	if (ok)
		memcpy(d->digest[dh->which], out[dh->which], FIDX_DIGEST_MAX);
	else
		d->nomem = true; /* read by the reader after joining */
	fidx_hasher_destroy(h);
	return NULL;
}

/* The least number of blocks every hasher is done with. */
static uint64_t least_done(const struct image_digest *d)
{
	uint64_t least = UINT64_MAX;
	for (int x = 0; x < FIDX_NDIGESTS; x++)
		if (d->mask >> x & 1 && d->done[x] < least)
			least = d->done[x];
	return least;
}

/* Reads the media into the ring until its end, an error, or a stop. */
static void read_media(struct image_digest *d, TSK_IMG_INFO *img)
{
	char why[512];
	for (TSK_OFF_T off = 0; off < img->size;) {
		if (d->run->sink->stopping(d->run->sink->arg)) {
			snprintf(d->error, sizeof(d->error), "%s", FIDX_ERROR_NOT_HASHED);
			return;
		}
		pthread_mutex_lock(&d->lock);
		while (d->filled >= DIGEST_RING && least_done(d) <= d->filled - DIGEST_RING)
			pthread_cond_wait(&d->moved, &d->lock);
		pthread_mutex_unlock(&d->lock);
		size_t slot = d->filled % DIGEST_RING;
		size_t want = img->size - off < READ_BLOCK ? (size_t)(img->size - off) : READ_BLOCK;
		ssize_t got = lib.tsk_img_read(img, off, d->block[slot], want);
		if (got <= 0) {
			snprintf(d->error, sizeof(d->error), "read at byte %" PRId64 ": %s",
				 (int64_t)off, got < 0 ? tsk_why(why, sizeof(why))
						      : "the image ends early");
			return;
		}
		d->len[slot] = (size_t)got;
		off += got;
		pthread_mutex_lock(&d->lock);
		d->filled++;
		pthread_cond_broadcast(&d->moved);
		pthread_mutex_unlock(&d->lock);
	}
}

/* The digest thread: starts a hasher per digest, reads the media, waits for them. */
static void *digest_main(void *arg)
{
	struct image_digest *d = arg;
	char why[512];
	struct digest_hasher hs[FIDX_NDIGESTS];
	pthread_t tids[FIDX_NDIGESTS];
	int started = 0;
	bool ready = true;
	TSK_IMG_INFO *img = open_image(d->run->root);
	for (int k = 0; k < DIGEST_RING; k++)
		ready = (d->block[k] = malloc(READ_BLOCK)) != NULL && ready;
	if (!ready) {
		d->nomem = true;
	} else if (!img) {
		snprintf(d->error, sizeof(d->error), "read: %s", tsk_why(why, sizeof(why)));
	} else {
		for (int x = 0; x < FIDX_NDIGESTS; x++) {
			if (!(d->mask >> x & 1))
				continue;
			hs[started] = (struct digest_hasher){.d = d, .which = (enum fidx_digest)x};
			if (pthread_create(&tids[started], NULL, digest_hasher_main, &hs[started]) != 0) {
				snprintf(d->error, sizeof(d->error), "cannot start a thread: %s",
					 strerror(errno));
				break;
			}
			started++;
		}
		if (!d->error[0])
			read_media(d, img);
	}
	pthread_mutex_lock(&d->lock);
	d->end = true;
	pthread_cond_broadcast(&d->moved);
	pthread_mutex_unlock(&d->lock);
	for (int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	if (img)
		lib.tsk_img_close(img);
	for (int k = 0; k < DIGEST_RING; k++)
		free(d->block[k]);
	return NULL;
}

/* ---- E01's stored hashes ---- */

/*
 * Reads the MD5 and SHA-1 an E01 at path stores of its media into md5 and
 * sha1, setting *has_md5 and *has_sha1.  Returns 0 (nothing stored, or not
 * an E01: both false), or -1 when the E01's set could not be opened (a
 * segment missing), with why in why (size bytes).
 */
static int ewf_stored(const char *path, uint8_t md5[16], bool *has_md5, uint8_t sha1[20],
		      bool *has_sha1, char *why, size_t size)
{
	*has_md5 = *has_sha1 = false;
	libewf_error_t *e = NULL;
	if (lib.libewf_check_file_signature(path, &e) != 1) {
		lib.libewf_error_free(&e);
		return 0;
	}
	char **names = NULL;
	int nnames = 0, ret = -1;
	libewf_handle_t *h = NULL;
	if (lib.libewf_glob(path, strlen(path), LIBEWF_FORMAT_UNKNOWN, &names, &nnames, &e) == 1 &&
	    lib.libewf_handle_initialize(&h, &e) == 1 &&
	    lib.libewf_handle_open(h, names, nnames, LIBEWF_OPEN_READ, &e) == 1) {
		*has_md5 = lib.libewf_handle_get_md5_hash(h, md5, 16, &e) == 1;
		*has_sha1 = lib.libewf_handle_get_sha1_hash(h, sha1, 20, &e) == 1;
		lib.libewf_handle_close(h, &e);
		ret = 0;
	} else {
		char text[200] = "";
		if (e)
			lib.libewf_error_sprint(e, text, sizeof(text));
		for (char *p = text; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
		snprintf(why, size, "cannot read the hashes the E01 stores (is a segment of"
			 " its set missing?)%s%s", text[0] ? ": " : "", text);
	}
	lib.libewf_error_free(&e);
	if (h)
		lib.libewf_handle_free(&h, NULL);
	if (names)
		lib.libewf_glob_free(names, nnames, NULL);
	return ret;
}

/* ---- one image ---- */

/* The image's own row: its file's metadata, the media's digests, what went wrong. */
static struct fidx_record *image_record(struct image_run *r, const struct image_digest *d,
					const char *error)
{
	struct fidx_record *rec = record_new(r, r->root, r->root_len, NULL);
	if (!rec)
		return NULL;
	struct stat sb;
	if (stat(r->root, &sb) == 0) {
		struct fidx_meta *m = &rec->meta;
		rec->has_meta = true;
		rec->type = S_ISBLK(sb.st_mode) ? 'b' : 'f';
		/* A device's size is its media's (stat says 0). */
		m->size = S_ISBLK(sb.st_mode) && r->media_size >= 0 ? (uint64_t)r->media_size
								    : (uint64_t)sb.st_size;
		m->blocks = (uint64_t)sb.st_blocks;
		m->mode = sb.st_mode;
		m->uid = sb.st_uid;
		m->gid = sb.st_gid;
		m->nlink = sb.st_nlink;
		m->dev = sb.st_dev;
		m->ino = sb.st_ino;
		m->atime = time_of(sb.st_atim.tv_sec, sb.st_atim.tv_nsec);
		m->mtime = time_of(sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec);
		m->ctime = time_of(sb.st_ctim.tv_sec, sb.st_ctim.tv_nsec);
	} else {
		rec->type = 'f';
		error = error ? error : "stat";
	}
	if (d && !d->error[0] && !d->nomem) {
		memcpy(rec->digest, d->digest, sizeof(rec->digest));
		rec->digest_mask = d->mask & r->src->opts.image_digests;
	}
	const char *why = error ? error : d && d->error[0] ? d->error : NULL;
	if (why && fidx_record_set_error(rec, why, 0) < 0) {
		fidx_record_free(rec);
		return NULL;
	}
	return rec;
}

/*
 * Whether partition p of vs lies within what a byte offset can address, its
 * end byte then in *end (a hostile table can give any sector numbers).
 */
static bool place_of(const TSK_VS_INFO *vs, const TSK_VS_PART_INFO *p, uint64_t *end)
{
	uint64_t start, len;
	return !__builtin_mul_overflow((uint64_t)p->start, (uint64_t)vs->block_size, &start) &&
	       !__builtin_add_overflow(start, (uint64_t)vs->offset, &start) &&
	       !__builtin_mul_overflow((uint64_t)p->len, (uint64_t)vs->block_size, &len) &&
	       !__builtin_add_overflow(start, len, end) && *end <= INT64_MAX;
}

/*
 * Finds the file systems of img into r->parts: each allocated partition of
 * its volume system, or the image as one file system.  A partition without
 * one is recorded with the error through w.  Returns false when the read
 * must stop; sets *why when neither a volume system nor a file system was
 * found.
 */
static bool find_parts(struct walker *w, TSK_IMG_INFO *img, char *why, size_t size)
{
	struct image_run *r = w->run;
	char vs_why[256], fs_why[256];
	TSK_VS_INFO *vs = lib.tsk_vs_open(img, 0, TSK_VS_TYPE_DETECT);
	if (vs) {
		unsigned n = 0;
		for (TSK_PNUM_T i = 0; i < vs->part_count; i++) {
			const TSK_VS_PART_INFO *p = lib.tsk_vs_part_get(vs, i);
			if (!p || !(p->flags & TSK_VS_PART_FLAG_ALLOC))
				continue;
			n++;
			if (r->nparts == MAX_PARTS) {
				char name[16];
				snprintf(name, sizeof(name), "p%u", n);
				if (!record_failed(w, name, "not read: fidx reads the file systems of"
						   " the first 128 partitions of a table")) {
					lib.tsk_vs_close(vs);
					return false;
				}
				continue;
			}
			struct part *pt = &r->parts[r->nparts];
			*pt = (struct part){.number = n};
			snprintf(pt->name, sizeof(pt->name), "p%u", n);
			uint64_t end;
			if (!place_of(vs, p, &end)) {
				char msg[200];
				snprintf(msg, sizeof(msg), "the partition table puts it where no disk"
					 " reaches (sector %" PRIu64 ", %" PRIu64 " sectors)",
					 (uint64_t)p->start, (uint64_t)p->len);
				if (!record_failed(w, pt->name, msg)) {
					lib.tsk_vs_close(vs);
					return false;
				}
				continue;
			}
			pt->offset = (TSK_OFF_T)(p->start * vs->block_size + (uint64_t)vs->offset);
			if (end > (uint64_t)img->size)
				snprintf(pt->error, sizeof(pt->error), "the partition ends at byte %" PRId64
					 ", past the end of the image (%" PRId64 " bytes): truncated?",
					 (int64_t)end, (int64_t)img->size);
			TSK_FS_INFO *fs = lib.tsk_fs_open_vol(p, TSK_FS_TYPE_DETECT);
			if (!fs) {
				char msg[600];
				snprintf(msg, sizeof(msg), "no file system The Sleuth Kit can read (%s)%s%s",
					 tsk_why(fs_why, sizeof(fs_why)), *pt->error ? "; " : "",
					 pt->error);
				if (!record_failed(w, pt->name, msg)) {
					lib.tsk_vs_close(vs);
					return false;
				}
				continue;
			}
			pt->type = fs->ftype;
			lib.tsk_fs_close(fs);
			r->nparts++;
		}
		lib.tsk_vs_close(vs);
		return true;
	}
	tsk_why(vs_why, sizeof(vs_why));
	TSK_FS_INFO *fs = lib.tsk_fs_open_img(img, 0, TSK_FS_TYPE_DETECT);
	if (!fs) {
		snprintf(why, size, "neither a partition table (%s) nor a file system (%s) The"
			 " Sleuth Kit can read", vs_why, tsk_why(fs_why, sizeof(fs_why)));
		return true;
	}
	struct part *pt = &r->parts[r->nparts++];
	*pt = (struct part){0};
	snprintf(pt->name, sizeof(pt->name), "fs");
	pt->offset = 0;
	pt->type = fs->ftype;
	pt->number = 0;
	lib.tsk_fs_close(fs);
	return true;
}

/* Reads one image (r->root) into the sink.  Returns 0, or -1 with err set. */
static int read_image(struct image_run *r, unsigned workers, struct fidx_error *err)
{
	const struct fidx_sink *sink = r->sink;
	struct walker w = {.run = r};
	char why[512] = "", msg[600] = "";
	pthread_t *tids = NULL, digest_tid;
	struct worker *ks = NULL;
	size_t started = 0;
	bool digesting = false;
	int ret = 0;

	uint8_t md5[16], sha1[20];
	bool has_md5, has_sha1;
	struct image_digest d = {.run = r, .mask = r->src->opts.image_digests,
				 .lock = PTHREAD_MUTEX_INITIALIZER, .moved = PTHREAD_COND_INITIALIZER};
	char ewf_why[256] = "";
	if (ewf_stored(r->root, md5, &has_md5, sha1, &has_sha1, ewf_why, sizeof(ewf_why)) == 0 &&
	    d.mask) {
		d.mask |= has_md5 ? 1u << FIDX_MD5 : 0;
		d.mask |= has_sha1 ? 1u << FIDX_SHA1 : 0;
	}
	if (!(w.ctx = sink->thread_start(sink->arg)))
		return fidx_fail_nomem(err);
	TSK_IMG_INFO *img = open_image(r->root);
	if (!img) {
		snprintf(msg, sizeof(msg), "cannot open the image: %s", tsk_why(why, sizeof(why)));
		goto image_row;
	}
	r->media_size = img->size;
	if (d.mask && pthread_create(&digest_tid, NULL, digest_main, &d) == 0)
		digesting = true;
	else if (d.mask)
		snprintf(d.error, sizeof(d.error), "cannot start a thread: %s", strerror(errno));
	if (!find_parts(&w, img, why, sizeof(why)))
		goto stop;
	if (why[0])
		snprintf(msg, sizeof(msg), "%s", why);
	if (r->nparts && r->src->opts.digests) {
		if (!(r->files = fidx_queue_create(QUEUE_FILES, 1)) ||
		    !(tids = calloc(workers, sizeof(*tids))) ||
		    !(ks = calloc(workers, sizeof(*ks)))) {
			sink->fail(sink->arg, "out of memory");
			goto stop;
		}
		for (; started < workers; started++) {
			ks[started].run = r;
			if (pthread_create(&tids[started], NULL, worker_main, &ks[started]) != 0)
				break;
		}
		if (!started) {
			sink->fail(sink->arg, "cannot start a thread");
			goto stop;
		}
	}
	for (w.part = 0; w.part < r->nparts && !sink->stopping(sink->arg); w.part++) {
		const struct part *p = &r->parts[w.part];
		if (!(w.fs = lib.tsk_fs_open_img(img, p->offset, p->type))) {
			char m[600];
			snprintf(m, sizeof(m), "cannot open the file system: %s",
				 tsk_why(why, sizeof(why)));
			if (!record_failed(&w, p->name, m))
				break;
			continue;
		}
		bool go = walk_fs(&w);
		lib.tsk_fs_close(w.fs);
		w.fs = NULL;
		if (!go)
			break;
	}
stop:
	if (r->files)
		fidx_queue_done(r->files);
	for (size_t i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	if (r->files) {
		struct job *j;
		while ((j = fidx_queue_trypop(r->files))) {
			fidx_record_free(j->rec);
			free(j);
		}
		fidx_queue_destroy(r->files);
		r->files = NULL;
	}
	free(tids);
	free(ks);
	if (digesting)
		pthread_join(digest_tid, NULL);
	if (d.nomem)
		sink->fail(sink->arg, "out of memory");
	lib.tsk_img_close(img);
	bool digested = d.mask && !d.error[0] && !d.nomem;
	const char *stored = ewf_why[0] ? ewf_why
			     : digested && has_md5 && memcmp(d.digest[FIDX_MD5], md5, 16) != 0
			     ? "the MD5 the E01 stores does not match its data"
			     : digested && has_sha1 && memcmp(d.digest[FIDX_SHA1], sha1, 20) != 0
			     ? "the SHA-1 the E01 stores does not match its data" : NULL;
	if (stored) {
		size_t n = strlen(msg);
		snprintf(msg + n, sizeof(msg) - n, "%s%s", n ? "; " : "", stored);
	}
image_row:;
	struct fidx_record *rec = image_record(r, digesting ? &d : NULL, msg[0] ? msg : NULL);
	if (!rec) {
		sink->fail(sink->arg, "out of memory");
		ret = 0;
	} else if (sink->stopping(sink->arg)) {
		fidx_record_free(rec);
	} else {
		sink->put(w.ctx, rec);
	}
	sink->thread_end(w.ctx, sink->arg);
	return ret;
}

/* Reads run->roots, one image after the other, into run->sink (source.h). */
static int image_run(struct fidx_source *base, const struct fidx_source_run *run,
		     struct fidx_error *err)
{
	const struct image_source *src = (const struct image_source *)base;
	unsigned workers = src->opts.workers ? src->opts.workers : 1;
	for (size_t i = 0; i < run->nroots && !run->sink->stopping(run->sink->arg); i++) {
		struct image_run *r = calloc(1, sizeof(*r));
		if (!r)
			return fidx_fail_nomem(err);
		*r = (struct image_run){.src = src, .sink = run->sink, .root = run->roots[i],
					.root_len = strlen(run->roots[i]), .root_index = i,
					.media_size = -1};
		int rc = read_image(r, workers, err);
		free(r);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The descriptors a read holds: each worker's image and the digest thread's, a few each. */
static unsigned long image_fds(const struct fidx_source *base, unsigned threads)
{
	const struct image_source *src = (const struct image_source *)base;
	(void)threads;
	return 8ul * (src->opts.workers + 2);
}

static void image_free(struct fidx_source *src)
{
	free(src);
}

static const struct fidx_source_ops image_ops = {
	.name = "image",
	.run = image_run,
	.fds = image_fds,
	.free = image_free,
};

struct fidx_source *fidx_image_source_new(const struct fidx_image_source_opts *opts,
					  struct fidx_error *err)
{
	if (!lib_ready(err))
		return NULL;
	struct image_source *src = calloc(1, sizeof(*src));
	if (!src) {
		fidx_fail_nomem(err);
		return NULL;
	}
	src->base.ops = &image_ops;
	src->opts = *opts;
	return &src->base;
}

/* ---- what the tool asks before a scan ---- */

/* Writes JSON string s, NULL as null. */
static void json_or_null(FILE *out, const char *s)
{
	if (s)
		fidx_json_string(out, s);
	else
		fputs("null", out);
}

char *fidx_image_describe(const char *path, struct fidx_error *err)
{
	char why[512];
	if (!lib_ready(err))
		return NULL;
	TSK_IMG_INFO *img = open_image(path);
	if (!img) {
		fidx_fail(err, EMEDIUMTYPE, "cannot open '%s' as a disk image: %s", fidx_quote(path),
			  tsk_why(why, sizeof(why)));
		return NULL;
	}
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);
	if (!out) {
		lib.tsk_img_close(img);
		fidx_fail_nomem(err);
		return NULL;
	}
	fputs("{\"format\":", out);
	json_or_null(out, lib.tsk_img_type_toname(img->itype));
	fprintf(out, ",\"size\":%" PRId64 ",\"sector_size\":%u,\"pieces\":%d", (int64_t)img->size,
		img->sector_size, img->num_img);
	uint8_t md5[16], sha1[20];
	bool has_md5, has_sha1;
	char ewf_why[256];
	if (ewf_stored(path, md5, &has_md5, sha1, &has_sha1, ewf_why, sizeof(ewf_why)) == 0) {
		if (has_md5) {
			fputs(",\"stored_md5\":", out);
			fidx_json_hex(out, md5, sizeof(md5));
		}
		if (has_sha1) {
			fputs(",\"stored_sha1\":", out);
			fidx_json_hex(out, sha1, sizeof(sha1));
		}
	}
	TSK_VS_INFO *vs = lib.tsk_vs_open(img, 0, TSK_VS_TYPE_DETECT);
	fputs(",\"table\":", out);
	json_or_null(out, vs ? lib.tsk_vs_type_toname(vs->vstype) : NULL);
	if (!vs)
		lib.tsk_error_reset();
	fputs(",\"partitions\":[", out);
	unsigned n = 0;
	for (TSK_PNUM_T i = 0; vs && i < vs->part_count; i++) {
		const TSK_VS_PART_INFO *p = lib.tsk_vs_part_get(vs, i);
		if (!p || !(p->flags & TSK_VS_PART_FLAG_ALLOC))
			continue;
		TSK_FS_INFO *fs = lib.tsk_fs_open_vol(p, TSK_FS_TYPE_DETECT);
		fprintf(out, "%s{\"name\":\"p%u\",\"start\":%" PRIu64 ",\"length\":%" PRIu64
			",\"description\":", n ? "," : "", n + 1, (uint64_t)p->start, (uint64_t)p->len);
		n++;
		json_or_null(out, p->desc);
		fputs(",\"fs\":", out);
		json_or_null(out, fs ? lib.tsk_fs_type_toname(fs->ftype) : NULL);
		fputc('}', out);
		if (fs)
			lib.tsk_fs_close(fs);
		else
			lib.tsk_error_reset();
	}
	fputc(']', out);
	if (!vs) {
		TSK_FS_INFO *fs = lib.tsk_fs_open_img(img, 0, TSK_FS_TYPE_DETECT);
		fputs(",\"fs\":", out);
		json_or_null(out, fs ? lib.tsk_fs_type_toname(fs->ftype) : NULL);
		if (fs)
			lib.tsk_fs_close(fs);
		else
			lib.tsk_error_reset();
	} else {
		lib.tsk_vs_close(vs);
	}
	fputc('}', out);
	lib.tsk_img_close(img);
	if (fclose(out) != 0) {
		free(buf);
		fidx_fail_nomem(err);
		return NULL;
	}
	return buf;
}

bool fidx_image_probe(const char *path)
{
	struct stat sb;
	if (stat(path, &sb) != 0 || !(S_ISBLK(sb.st_mode) || (S_ISREG(sb.st_mode) &&
							      sb.st_size >= 512)))
		return false;
	if (S_ISBLK(sb.st_mode))
		return true;
	if (!lib_ready(NULL))
		return false;
	TSK_IMG_INFO *img = open_image(path);
	if (!img) {
		lib.tsk_error_reset();
		return false;
	}
	/* A raw file is anything: only a partition table or a file system in it says "image". */
	bool found = img->itype != TSK_IMG_TYPE_RAW;
	TSK_VS_INFO *vs = found ? NULL : lib.tsk_vs_open(img, 0, TSK_VS_TYPE_DETECT);
	TSK_FS_INFO *fs = found || vs ? NULL : lib.tsk_fs_open_img(img, 0, TSK_FS_TYPE_DETECT);
	found = found || vs || fs;
	if (vs)
		lib.tsk_vs_close(vs);
	if (fs)
		lib.tsk_fs_close(fs);
	lib.tsk_error_reset();
	lib.tsk_img_close(img);
	return found;
}

const char *fidx_image_library(void)
{
	static char text[64];
	if (!lib_ready(NULL))
		return "The Sleuth Kit: not installed (" FIDX_TSK_SONAME ")";
	snprintf(text, sizeof(text), "The Sleuth Kit %s", lib.tsk_version_get_str());
	return text;
}
