/*
 * dedupe.c - acting on duplicate files, each checked again just before it
 * is touched (dedupe.h has the picture).
 *
 * Names are reached through their folder's descriptor: the folder is opened
 * from / one component at a time with O_NOFOLLOW (any length; a symlink
 * swapped in for a folder since the scan fails the walk, never leads
 * elsewhere), the name looked at with fstatat() and changed with unlinkat(),
 * linkat() and renameat2() in that folder, so that the check and the change
 * are about the same directory entry.  A hard
 * link of the kept file is made from its open descriptor (linkat() with
 * AT_EMPTY_PATH, or /proc/self/fd when that needs a privilege this process
 * lacks), never from its name, which could have been replaced.
 */
#include "dedupe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdutil.h"
#include "timestamp.h"

#define COMPARE_BLOCK (256 * 1024)   /* bytes of each file compared at once */
#define SHARE_CHUNK (16 * 1024 * 1024) /* bytes a FIDEDUPERANGE call asks for (btrfs's most) */
#define TEMP_TRIES 16                /* temporary names tried before giving up */

/* The time of a stat field as struct fidx_time. */
static struct fidx_time time_of(struct timespec ts)
{
	return (struct fidx_time){.sec = ts.tv_sec, .nsec = (uint32_t)ts.tv_nsec};
}

/*
 * Checks that st is file's inode as recorded (a regular file of size bytes
 * with its device, inode, mtime and, when ctime, its ctime).  Returns 0, or
 * -1 with err saying which differs.
 */
static int still_recorded(const struct stat *st, const struct fidx_dupes_file *file,
			  uint64_t size, bool ctime, struct fidx_error *err)
{
	const char *what = !S_ISREG(st->st_mode) ? "no longer a regular file"
			   : (uint64_t)st->st_dev != file->dev || (uint64_t)st->st_ino != file->ino
				   ? "another file now (device or inode)"
			   : (uint64_t)st->st_size != size ? "its size"
			   : !fidx_time_eq(time_of(st->st_mtim), file->mtime) ? "its mtime"
			   : ctime && file->has_ctime && !fidx_time_eq(time_of(st->st_ctim), file->ctime)
				   ? "its ctime"
				   : NULL;
	if (!what)
		return 0;
	return fidx_fail(err, ESTALE, "changed since it was scanned (%s)", what);
}

/*
 * Opens the folder that holds the last component of path, walking it from /
 * one folder at a time with O_NOFOLLOW, so that no symlink anywhere on the
 * path is followed (the path may be longer than PATH_MAX; a folder needs only
 * search permission).  Sets *name to the last component.  Returns an O_PATH
 * descriptor, or -1 with errno set (ELOOP: a folder on the path is a symlink
 * now; EINVAL: not a plain absolute path).
 */
static int open_parent(const char *path, const char **name)
{
	if (path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	const char *p = path;
	while (dir >= 0) {
		while (*p == '/')
			p++;
		const char *end = strchr(p, '/');
		if (!end) {
			*name = p;
			if (!*p || strcmp(p, ".") == 0 || strcmp(p, "..") == 0)
				break;
			return dir;
		}
		size_t len = (size_t)(end - p);
		char part[NAME_MAX + 1];
		if (len > NAME_MAX || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			break;
		memcpy(part, p, len);
		part[len] = '\0';
		int next = openat(dir, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		close(dir);
		if (next < 0) {
			/* O_PATH | O_NOFOLLOW opens a symlink itself, which O_DIRECTORY refuses */
			errno = saved == ENOTDIR ? ELOOP : saved;
			return -1;
		}
		dir = next;
		p = end;
	}
	if (dir >= 0)
		close(dir);
	errno = EINVAL;
	return -1;
}

/*
 * Opens path read-only, following no symlink on it, and only when it is a
 * regular file: it is looked at first through an O_PATH descriptor, which
 * opens nothing (a device node or FIFO swapped in since the scan is never
 * opened), then opened through /proc/self/fd, which names that very inode.
 * Without /proc, it is opened by name (O_NONBLOCK: a FIFO does not wait).
 * Returns an fd, or -1 with err set.
 */
static int open_file(const char *path, struct fidx_error *err)
{
	const char *name;
	struct stat st;
	int dir = open_parent(path, &name), at = -1, fd = -1;
	if (dir >= 0 && (at = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) >= 0 &&
	    fstat(at, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			close(at);
			close(dir);
			return fidx_fail(err, ESTALE, S_ISLNK(st.st_mode)
					 ? "cannot open: it, or a folder on its path, is a symlink now"
					 : "changed since it was scanned (no longer a regular file)");
		}
		char proc[64];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", at);
		fd = open(proc, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	}
	int saved = errno;
	if (at >= 0)
		close(at);
	if (dir >= 0)
		close(dir);
	if (fd < 0)
		return fidx_fail(err, saved, "cannot open: %s",
				 saved == ELOOP ? "it, or a folder on its path, is a symlink now"
						: strerror(saved));
	return fd;
}

int fidx_dedupe_keep_open(struct fidx_dedupe_keep *k, const struct fidx_dupes_file *file,
			  uint64_t size, struct fidx_error *err)
{
	struct stat st;
	*k = (struct fidx_dedupe_keep){.file = file, .size = size, .fd = -1};
	if (file->in_image)
		return fidx_fail(err, EINVAL, "an entry of a disk image, not a file of this machine");
	if ((k->fd = open_file(file->paths[0], err)) < 0)
		return -1;
	if (fstat(k->fd, &st) < 0 || still_recorded(&st, file, size, true, err) < 0) {
		if (!fidx_failed(err))
			fidx_fail(err, errno, "cannot stat: %s", strerror(errno));
		fidx_dedupe_keep_close(k);
		return -1;
	}
	return 0;
}

void fidx_dedupe_keep_close(struct fidx_dedupe_keep *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

/*
 * Compares all size bytes of the kept file and fd (just opened: read from
 * its start in order, as the race shim of the tests sees a reader).  Returns
 * 0 when equal, or -1 with err set (they differ, or one cannot be read).
 */
static int same_bytes(const struct fidx_dedupe_keep *k, int fd, struct fidx_error *err)
{
	char *a = malloc(COMPARE_BLOCK), *b = malloc(COMPARE_BLOCK);
	int ret = -1;
	if (!a || !b) {
		fidx_fail_nomem(err);
		goto out;
	}
	for (uint64_t off = 0;;) {
		ssize_t na = fidx_read_full(k->fd, a, COMPARE_BLOCK, (off_t)off);
		ssize_t nb = fidx_read_full(fd, b, COMPARE_BLOCK, -1);
		if (na < 0 || nb < 0) {
			fidx_fail(err, errno, "cannot read %s: %s", na < 0 ? "the kept copy" : "it",
				  strerror(errno));
			goto out;
		}
		if (na != nb || memcmp(a, b, (size_t)na) != 0) {
			fidx_fail(err, ESTALE, "its bytes differ from the kept copy's now");
			goto out;
		}
		off += (uint64_t)na;
		if (na == 0) {
			ret = off == k->size ? 0
					     : fidx_fail(err, ESTALE, "changed since it was scanned (its size)");
			goto out;
		}
	}
out:
	free(a);
	free(b);
	return ret;
}

/*
 * Shares the extents of fd's bytes with the kept file's (FIDEDUPERANGE: the
 * kernel compares them, locked, and shares only what is equal).  Returns 0,
 * or -1 with err set.
 */
static int share_extents(const struct fidx_dedupe_keep *k, int fd, struct fidx_error *err)
{
	struct {
		struct file_dedupe_range range;
		struct file_dedupe_range_info info;
	} req;
	for (uint64_t off = 0; off < k->size;) {
		uint64_t len = k->size - off < SHARE_CHUNK ? k->size - off : SHARE_CHUNK;
		memset(&req, 0, sizeof(req));
		req.range.src_offset = off;
		req.range.src_length = len;
		req.range.dest_count = 1;
		req.info.dest_fd = fd;
		req.info.dest_offset = off;
		if (ioctl(k->fd, FIDEDUPERANGE, &req.range) < 0) {
			int e = errno;
			if (e == EOPNOTSUPP || e == ENOTTY || e == EINVAL || e == EXDEV)
				return fidx_fail(err, EOPNOTSUPP, "its file system cannot share extents"
						 " with the kept copy's (btrfs and XFS can): %s",
						 strerror(e));
			return fidx_fail(err, e, "cannot share extents: %s", strerror(e));
		}
		if (req.info.status == FILE_DEDUPE_RANGE_DIFFERS)
			return fidx_fail(err, ESTALE, "its bytes differ from the kept copy's now");
		if (req.info.status < 0)
			return fidx_fail(err, -req.info.status, "cannot share extents: %s",
					 strerror(-req.info.status));
		if (!req.info.bytes_deduped)
			return fidx_fail(err, EIO, "cannot share extents: the file system shared"
					 " nothing at offset %llu", (unsigned long long)off);
		off += req.info.bytes_deduped;
	}
	return 0;
}

/* A name's folder, open, and the name's last component in it. */
struct entry {
	int dir;              /* O_PATH descriptor of the folder, or -1 */
	const char *name;     /* within the path given */
};

/* Opens the folder of path into e.  Returns 0, or -1 with err set. */
static int open_entry(struct entry *e, const char *path, struct fidx_error *err)
{
	if ((e->dir = open_parent(path, &e->name)) < 0)
		return fidx_fail(err, errno, "cannot open its folder: %s",
				 errno == ELOOP ? "a folder on its path is a symlink now"
						: strerror(errno));
	return 0;
}

/*
 * Whether name in folder dir is still the inode (dev, ino), its stat in *st
 * (when not NULL).  Else err says so.
 */
static bool names_inode(int dir, const char *name, uint64_t dev, uint64_t ino, const char *who,
			struct stat *st, struct fidx_error *err)
{
	struct stat own;
	if (!st)
		st = &own;
	if (fstatat(dir, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		fidx_fail(err, errno, "cannot stat %s: %s", who, strerror(errno));
		return false;
	}
	if ((uint64_t)st->st_dev != dev || (uint64_t)st->st_ino != ino) {
		fidx_fail(err, ESTALE, "%s is another file now", who);
		return false;
	}
	return true;
}

/* Whether the kept file still has its first name (its last copy is never removed). */
static bool keep_still_named(const struct fidx_dedupe_keep *k, struct fidx_error *err)
{
	struct entry e;
	struct stat st;
	if (fstat(k->fd, &st) < 0 || st.st_nlink == 0) {
		fidx_fail(err, ESTALE, "the kept copy was removed");
		return false;
	}
	if (open_entry(&e, k->file->paths[0], err) < 0) {
		fidx_fail(err, ESTALE, "the kept copy's folder cannot be opened");
		return false;
	}
	bool ok = names_inode(e.dir, e.name, k->file->dev, k->file->ino, "the kept copy's name", NULL,
			       err);
	close(e.dir);
	return ok;
}

/* Makes a hard link of the kept file named tmp in folder dir.  Returns 0 or -1 (errno). */
static int link_kept(const struct fidx_dedupe_keep *k, int dir, const char *tmp)
{
	if (linkat(k->fd, "", dir, tmp, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != ENOENT && errno != EPERM)
		return -1;
	/* Without CAP_DAC_READ_SEARCH: through /proc, still the open file, not its name. */
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", k->fd);
	return linkat(AT_FDCWD, proc, dir, tmp, AT_SYMLINK_FOLLOW);
}

/*
 * Whether this process may replace or remove name (owned by uid) in folder
 * dir: in a sticky folder (mode +t), only the owner of the folder or of the
 * entry may, or a process with CAP_FOWNER (root).  Else err says so.
 */
static bool may_replace(int dir, uid_t uid, struct fidx_error *err)
{
	struct stat st;
	if (fstat(dir, &st) < 0 || !(st.st_mode & S_ISVTX) || geteuid() == 0 ||
	    geteuid() == st.st_uid || geteuid() == uid)
		return true;
	fidx_fail(err, EPERM, "in a sticky folder (mode +t), owned by neither this user nor"
		  " the folder's owner");
	return false;
}

/*
 * Replaces name in folder dir (the inode dup) by a hard link of the kept
 * file: linked to a temporary name beside it, exchanged with name
 * (renameat2 RENAME_EXCHANGE: name names one of the two files at every
 * moment), then the temporary name, which now names what name did, removed
 * once it is seen to be dup (else exchanged back).  Returns 0, or -1 with
 * err set (name as it was).
 */
static int replace_by_link(const struct fidx_dedupe_keep *k, int dir, const char *name,
			   const struct fidx_dupes_file *dup, struct fidx_error *err)
{
	char tmp[32];
	int tries = 0;
	for (;;) {
		uint64_t r = 0;
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) < 0)
			r ^= (uint64_t)(uintptr_t)&r ^ (uint64_t)tries;
		snprintf(tmp, sizeof(tmp), ".fidx-link-%016llx", (unsigned long long)r);
		if (link_kept(k, dir, tmp) == 0)
			break;
		if (errno != EEXIST || ++tries == TEMP_TRIES)
			return fidx_fail(err, errno, "cannot link the kept copy beside it: %s",
					 errno == EXDEV ? "another file system" : strerror(errno));
	}
	if (!names_inode(dir, tmp, k->file->dev, k->file->ino, "the new link", NULL, err) ||
	    !names_inode(dir, name, dup->dev, dup->ino, "its name", NULL, err))
		goto remove_tmp;
	if (renameat2(dir, tmp, dir, name, RENAME_EXCHANGE) < 0) {
		/* A file system without the exchange: a plain rename over it (checked just above). */
		if ((errno == EINVAL || errno == ENOSYS) && renameat(dir, tmp, dir, name) == 0)
			return 0;
		fidx_fail(err, errno, "cannot put the link in its place: %s", strerror(errno));
		goto remove_tmp;
	}
	/* tmp names what name named a moment ago: the copy, unless it was swapped meanwhile. */
	if (!names_inode(dir, tmp, dup->dev, dup->ino, "its name", NULL, err)) {
		if (renameat2(dir, tmp, dir, name, RENAME_EXCHANGE) == 0)
			goto remove_tmp;
		return fidx_fail(err, ESTALE, "its name changed while it was replaced; what was"
				 " there is now named '%s' beside it", tmp);
	}
	if (unlinkat(dir, tmp, 0) == 0)
		return 0;
	return fidx_fail(err, errno, "linked, but its old name, moved to '%s' beside it, cannot"
			 " be removed: %s", tmp, strerror(errno));
remove_tmp:
	if (unlinkat(dir, tmp, 0) < 0 && errno != ENOENT) {
		int e = errno;
		char why[512];
		snprintf(why, sizeof(why), "%.400s", err->msg);
		fidx_fail(err, e, "%s; the temporary link '%s' beside it cannot be removed: %s", why,
			  tmp, strerror(e));
	}
	return -1;
}

/* Acts on one name of dup (delete or link).  Returns 0, or -1 with err set. */
static int act_on_name(const struct fidx_dedupe_keep *k, const struct fidx_dupes_file *dup,
		       const char *path, enum fidx_dedupe_how how, struct fidx_error *err)
{
	struct entry e;
	int ret = -1;
	if (open_entry(&e, path, err) < 0)
		return -1;
	struct stat st;
	if (!names_inode(e.dir, e.name, dup->dev, dup->ino, "its name", &st, err) ||
	    !keep_still_named(k, err) || !may_replace(e.dir, st.st_uid, err))
		goto out;
	if (how == FIDX_DEDUPE_LINK) {
		ret = replace_by_link(k, e.dir, e.name, dup, err);
	} else if (unlinkat(e.dir, e.name, 0) < 0) {
		fidx_fail(err, errno, "cannot delete: %s", strerror(errno));
	} else {
		ret = 0;
	}
out:
	close(e.dir);
	return ret;
}

/*
 * Opens dup by its first name and checks it (recorded values; for delete
 * and link its bytes against the kept file's, and nothing moved meanwhile).
 * Returns its descriptor, or -1 with err set.
 */
static int open_checked(const struct fidx_dedupe_keep *k, const struct fidx_dupes_file *dup,
			enum fidx_dedupe_how how, struct fidx_error *err)
{
	struct stat before, after;
	int fd;
	if (dup->in_image)
		return fidx_fail(err, EINVAL, "an entry of a disk image, not a file of this machine");
	if (dup->dev == k->file->dev && dup->ino == k->file->ino)
		return fidx_fail(err, EINVAL, "the kept copy itself");
	/* Another device may be the same file seen through an overlay, NFS or FUSE mount. */
	if (dup->dev != k->file->dev)
		return fidx_fail(err, EXDEV, "on another file system than the kept copy");
	if ((fd = open_file(dup->paths[0], err)) < 0)
		return -1;
	if (fstat(fd, &before) < 0) {
		fidx_fail(err, errno, "cannot stat: %s", strerror(errno));
		goto fail;
	}
	if (still_recorded(&before, dup, k->size, true, err) < 0)
		goto fail;
	if (how == FIDX_DEDUPE_REFLINK)
		return fd;
	if (same_bytes(k, fd, err) < 0)
		goto fail;
	if (fstat(fd, &after) < 0 || !fidx_time_eq(time_of(after.st_mtim), time_of(before.st_mtim)) ||
	    !fidx_time_eq(time_of(after.st_ctim), time_of(before.st_ctim)) ||
	    after.st_size != before.st_size) {
		fidx_fail(err, ESTALE, "changed while it was compared");
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

size_t fidx_dedupe_file(const struct fidx_dedupe_keep *k, const struct fidx_dupes_file *dup,
			enum fidx_dedupe_how how,
			void (*report)(void *arg, const char *path, const struct fidx_error *why),
			void *arg, uint64_t *other_names)
{
	struct fidx_error err;
	struct stat st;
	size_t done = 0;
	fidx_error_clear(&err);
	*other_names = 0;
	int fd = open_checked(k, dup, how, &err);
	if (fd >= 0 && how == FIDX_DEDUPE_REFLINK && share_extents(k, fd, &err) < 0) {
		close(fd);
		fd = -1;
	}
	for (size_t i = 0; i < dup->npaths; i++) {
		struct fidx_error why;
		fidx_error_clear(&why);
		if (fd < 0)
			why = err;
		else if (how != FIDX_DEDUPE_REFLINK)
			act_on_name(k, dup, dup->paths[i], how, &why);
		done += !fidx_failed(&why);
		report(arg, dup->paths[i], fidx_failed(&why) ? &why : NULL);
	}
	/* Names the scans did not record (outside their trees) still hold its bytes. */
	if (fd >= 0 && how != FIDX_DEDUPE_REFLINK && done == dup->npaths && fstat(fd, &st) == 0)
		*other_names = (uint64_t)st.st_nlink;
	if (fd >= 0)
		close(fd);
	return done;
}
