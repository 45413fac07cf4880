/*
 * source_walk.c - the live filesystem as a source of records (source.h).
 *
 * run() walks the roots with fidx_walk() (fidx/walk.h) on the pipeline's
 * threads, turns each walk entry into a record (its statx data, or the
 * listing's type alone without a stat) and hands it to the sink.  A
 * directory is recorded when the walk leaves it, with any error met reading
 * it; one the walk was stopped in carries FIDX_ERROR_NOT_READ, which
 * `fidx scan --resume` does again.
 *
 * The files of run->leave_out (the store's database, its -wal, -shm and
 * -journal, a baseline `fidx check` reads) are never recorded: they change
 * while the scan runs, and opening them in the process that writes them
 * would drop SQLite's POSIX locks (fcntl(2)).  They are known by device and
 * inode, whatever path leads to them (a root given through a symlink, a bind
 * mount, a followed link); one made after the walk began by its name and its
 * folder's device and inode; else by its path.
 */
#include "source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fidx/walk.h"

struct walk_source {
	struct fidx_source base;
	struct fidx_walk_source_opts opts;
};

/* A file the walk never records (run->leave_out). */
struct own_file {
	char *path;                    /* its absolute path, the folders resolved */
	size_t len;                    /* strlen(path) */
	const char *name;              /* its name: path after the last '/' */
	size_t name_len;               /* strlen(name) */
	dev_t dev;                     /* its device and inode, when it exists ... */
	ino_t ino;
	bool exists;                   /* ... at the start of the walk */
	dev_t dir_dev;                 /* its folder's device and inode, when ... */
	ino_t dir_ino;
	bool dir_known;                /* ... the folder could be stat'ed */
};

/* One run: what the walk's callbacks share. */
struct walk_run {
	const struct fidx_sink *sink;
	struct own_file *own;
	size_t nown;
};

/* A walker thread's state: the sink's context for it. */
struct walker {
	struct walk_run *run;
	void *ctx;                     /* the sink's thread context (NULL: none could be made) */
};

/* A statx time as it is (its seconds are signed 64-bit; nsec is 0..999,999,999). */
static struct fidx_time ts_of(const struct statx_timestamp *t)
{
	return (struct fidx_time){.sec = t->tv_sec, .nsec = t->tv_nsec % FIDX_NS_PER_S};
}

/* Fills rec's type and metadata from the statx data x. */
static void meta_of(struct fidx_record *rec, const struct statx *x)
{
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
}

/* Builds a record from a walk entry (its scan_id left 0).  Returns NULL on ENOMEM. */
static struct fidx_record *record_of(const struct fidx_walk_entry *e)
{
	static const char dtype_letter[] = {
		[DT_REG] = 'f', [DT_DIR] = 'd', [DT_LNK] = 'l', [DT_FIFO] = 'p',
		[DT_SOCK] = 's', [DT_CHR] = 'c', [DT_BLK] = 'b',
	};
	struct fidx_record *rec = calloc(1, sizeof(*rec));
	if (!rec)
		return NULL;
	if (!(rec->path = malloc(e->path_len + 1)))
		goto fail;
	memcpy(rec->path, e->path, e->path_len + 1);
	rec->path_len = e->path_len;
	rec->name_off = e->name_off;
	rec->ext_off = fidx_ext_offset(rec->path, e->name_off, e->path_len);
	rec->root_index = e->root_index;
	if (e->stx)
		meta_of(rec, e->stx);
	else
		rec->type = e->d_type < sizeof(dtype_letter) ? dtype_letter[e->d_type] : 0;
	if (e->link_target) {
		rec->link_len = strlen(e->link_target);
		if (!(rec->link_target = strdup(e->link_target)))
			goto fail;
	}
	if (e->error == ECANCELED && strcmp(e->error_op, "stopped") == 0) {
		if (fidx_record_set_error(rec, FIDX_ERROR_NOT_READ, 0) < 0)
			goto fail;
	} else if (e->error == EXDEV && strcmp(e->error_op, "follow") == 0) {
		if (fidx_record_set_error(rec, FIDX_ERROR_NOT_FOLLOWED, 0) < 0)
			goto fail;
	} else if (e->error && fidx_record_set_error(rec, e->error_op, e->error) < 0) {
		goto fail;
	}
	return rec;
fail:
	fidx_record_free(rec);
	return NULL;
}

/* Whether walk entry e is one of the files the run never records (see the top). */
static bool is_own_file(const struct walk_run *r, const struct fidx_walk_entry *e)
{
	const char *name = e->path + e->name_off;
	size_t name_len = e->path_len - e->name_off;
	for (size_t i = 0; i < r->nown; i++) {
		const struct own_file *o = &r->own[i];
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

/* Frees the own files of r. */
static void own_files_free(struct walk_run *r)
{
	for (size_t i = 0; i < r->nown; i++)
		free(r->own[i].path);
	free(r->own);
}

/* Notes the files of leave_out (NULL-terminated, or NULL).  Returns 0, or -1 on ENOMEM. */
static int note_own_files(struct walk_run *r, const char *const *leave_out)
{
	size_t n = 0;
	while (leave_out && leave_out[n])
		n++;
	if (!(r->own = calloc(n ? n : 1, sizeof(*r->own))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct own_file *o = &r->own[r->nown];
		struct stat sb;
		if (!(o->path = strdup(leave_out[i])))
			return -1;
		r->nown++;
		o->len = strlen(o->path);
		char *slash = strrchr(o->path, '/');
		o->name = slash ? slash + 1 : o->path;
		o->name_len = strlen(o->name);
		if (stat(o->path, &sb) == 0) {
			o->dev = sb.st_dev;
			o->ino = sb.st_ino;
			o->exists = true;
		}
		if (slash) {
			/* Its folder: the path cut after the slash. */
			char keep = slash[1];
			slash[1] = '\0';
			o->dir_known = stat(o->path, &sb) == 0;
			slash[1] = keep;
			o->dir_dev = sb.st_dev;
			o->dir_ino = sb.st_ino;
		}
	}
	return 0;
}

/* The walk's action once a record went to the sink (put returned put_rc). */
static enum fidx_walk_action go_on(const struct walk_run *r, int put_rc)
{
	return put_rc < 0 || r->sink->stopping(r->sink->arg) ? FIDX_WALK_STOP : FIDX_WALK_CONTINUE;
}

/*
 * Records one walk entry through the sink, unless it is one of the run's own
 * files.  An entry whose error is ENOMEM (the walk had no memory to read a
 * directory, or the kernel none to list it) is not a fact about the entry:
 * the scan fails, so that a tree left unread is never a complete scan.
 */
static enum fidx_walk_action record_entry(struct walker *w, const struct fidx_walk_entry *e)
{
	if (!w) /* walker_start could not allocate; the scan fails */
		return FIDX_WALK_STOP;
	const struct fidx_sink *sink = w->run->sink;
	if (e->error == ENOMEM) {
		sink->fail(sink->arg, "out of memory");
		return FIDX_WALK_STOP;
	}
	if (is_own_file(w->run, e))
		return go_on(w->run, 0);
	struct fidx_record *rec = record_of(e);
	if (!rec) {
		sink->fail(sink->arg, "out of memory");
		return FIDX_WALK_STOP;
	}
	return go_on(w->run, sink->put(w->ctx, rec));
}

/*
 * The walk's entry callback (on every walker thread).  A directory the walk
 * enters is recorded when it is left, with any error met reading it.
 */
static enum fidx_walk_action on_entry(const struct fidx_walk_entry *e, void *ctx)
{
	struct walker *w = ctx;
	if (e->descend)
		return !w ? FIDX_WALK_STOP : go_on(w->run, 0);
	return record_entry(w, e);
}

/* The walk's leave callback: records a directory once everything in it was seen. */
static void on_leave(const struct fidx_walk_entry *e, void *ctx)
{
	record_entry(ctx, e);
}

/* A walker thread's start: its state and the sink's context, or NULL on ENOMEM. */
static void *walker_start(void *arg)
{
	struct walk_run *r = arg;
	struct walker *w = malloc(sizeof(*w));
	void *ctx = r->sink->thread_start(r->sink->arg);
	if (!w || !ctx) {
		if (ctx)
			r->sink->thread_end(ctx, r->sink->arg);
		if (!w)
			r->sink->fail(r->sink->arg, "out of memory");
		free(w);
		return NULL;
	}
	*w = (struct walker){.run = r, .ctx = ctx};
	return w;
}

/* A walker thread's end: the sink's context ended, the state freed. */
static void walker_end(void *ctx, void *arg)
{
	struct walk_run *r = arg;
	struct walker *w = ctx;
	if (!w)
		return;
	r->sink->thread_end(w->ctx, r->sink->arg);
	free(w);
}

/* Walks run->roots into run->sink (source.h). */
static int walk_run(struct fidx_source *base, const struct fidx_source_run *run,
		    struct fidx_error *err)
{
	const struct walk_source *src = (const struct walk_source *)base;
	struct walk_run r = {.sink = run->sink};
	if (note_own_files(&r, run->leave_out) < 0) {
		own_files_free(&r);
		return fidx_fail_nomem(err);
	}
	struct fidx_walk_opts wopts = {
		.threads = run->threads,
		.flags = FIDX_WALK_READ_LINKS | (src->opts.no_stat ? 0 : FIDX_WALK_STAT) |
			 (src->opts.follow ? FIDX_WALK_FOLLOW : 0) |
			 (src->opts.follow_all ? FIDX_WALK_FOLLOW_ANY : 0) |
			 (src->opts.xdev ? FIDX_WALK_XDEV : 0),
		.exclude = src->opts.excludes, .entry = on_entry, .leave = on_leave,
		.thread_start = walker_start, .thread_end = walker_end, .arg = &r,
		.cancel = run->sink->stop,
	};
	int walked = fidx_walk(run->roots, run->nroots, &wopts);
	own_files_free(&r);
	if (walked < 0)
		return errno == ENOMEM ? fidx_fail(err, ENOMEM, "cannot start the walk: out of memory")
				       : fidx_fail(err, errno, "cannot start the walk: %s",
						   strerror(errno));
	return 0;
}

/* The descriptors a walk with threads threads holds at most. */
static unsigned long walk_fds(const struct fidx_source *src, unsigned threads)
{
	(void)src;
	return fidx_walk_max_fds(threads);
}

/* Frees the walk source. */
static void walk_free(struct fidx_source *src)
{
	free(src);
}

static const struct fidx_source_ops walk_ops = {
	.name = "walk",
	.run = walk_run,
	.fds = walk_fds,
	.free = walk_free,
};

struct fidx_source *fidx_walk_source_new(const struct fidx_walk_source_opts *opts,
					 struct fidx_error *err)
{
	struct walk_source *src = calloc(1, sizeof(*src));
	if (!src) {
		fidx_fail_nomem(err);
		return NULL;
	}
	src->base.ops = &walk_ops;
	src->opts = *opts;
	return &src->base;
}
