/*
 * blockdev.c - whether a filesystem's disk spins, and where a file starts on it.
 *
 * Rotational.  The kernel tells, per request queue, whether a device seeks
 * (sysfs, /sys/dev/block/MAJ:MIN/queue/rotational, "1" or "0").  From the
 * st_dev of a filesystem to that file:
 *
 *   st_dev major 0 ──► an anonymous device (btrfs, overlay, tmpfs, NFS ...):
 *        │             the mount of that st_dev in /proc/self/mountinfo names
 *        │             its source; when the source is a block device node
 *        │             (btrfs on /dev/sdb), its st_rdev stands for the fs;
 *        │             otherwise nothing spins behind it (ENODEV)
 *        ▼
 *   /sys/dev/block/MAJ:MIN ──► symlink to the device's directory:
 *        │   .../block/sda          whole disk: queue/ is here
 *        │   .../block/sda/sda1     partition: no queue/, a "partition"
 *        │                          file; the disk's directory is ".."
 *        │   .../virtual/block/dm-0 device-mapper, md, loop, zram: a queue
 *        ▼                          of their own, which the kernel derives
 *   queue/rotational                from the devices below them
 *
 * The kernel resolves "MAJ:MIN/.." after following the symlink, so the parent
 * disk of a partition is reached without resolving the link by hand.
 *
 * A virtio disk (driver virtio_blk, the disk of most virtual machines) has
 * no way to tell the guest whether the storage behind it seeks: its queue
 * keeps the kernel's default, rotational "1", whatever backs it.  That "1"
 * says nothing, so it is answered as "cannot be told" (EOPNOTSUPP).  Measured
 * on one (docs/BENCHMARKS.md, "Cold reads"): no seek cost, and more speed with
 * more requests in flight, the opposite of a spinning disk.  The
 * sysfs root and the mount table are parameters of fidx_dev_rotational_at(),
 * so that the unit test can point them at a fake tree.
 *
 * First extent.  FS_IOC_FIEMAP maps a file's logical ranges to physical byte
 * offsets on its device.  One extent is asked for, from offset 0, without
 * FIEMAP_FLAG_SYNC (which would flush the file's dirty pages first: a scan
 * must not write).  Data not yet flushed under delayed allocation comes back
 * flagged UNKNOWN (with physical 0), inline data comes back flagged
 * DATA_INLINE (its "physical" offset is the inode's); neither is a place to
 * seek to, so both answer ENODATA, like a file without extents.
 */
#include "blockdev.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mounts.h"

/*
 * Formats a path into buf (PATH_MAX bytes).  Returns 0, or -1 with errno
 * ENAMETOOLONG.
 */
static int path_of(char *buf, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/*
 * Reads the sysfs flag file path: returns 0 or 1 for "0" or "1" (a newline
 * may follow), or -1 with errno EINVAL for other content, or the error of
 * open() or read().
 */
static int read_flag(const char *path)
{
	char buf[16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf));
	int saved = errno;
	close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	if ((n == 1 || (n == 2 && buf[1] == '\n')) && (buf[0] == '0' || buf[0] == '1'))
		return buf[0] - '0';
	errno = EINVAL;
	return -1;
}

/*
 * Finds the block device behind the anonymous device dev: the st_rdev of the
 * source of dev's mount in the mount table file mountinfo, when that source
 * is an absolute path to a block device node.  Returns 0 and sets *rdev, or
 * -1 with errno ENODEV (no such mount, or its source is no block device) or
 * the error of reading mountinfo.
 */
static int source_device(const char *mountinfo, dev_t dev, dev_t *rdev)
{
	struct fidx_mount *m;
	size_t n;
	FILE *f = fopen(mountinfo, "re");
	if (!f)
		return -1;
	int ret = fidx_mounts_parse(f, &m, &n);
	int saved = errno;
	fclose(f);
	if (ret != 0) {
		errno = saved;
		return -1;
	}
	ret = -1;
	for (size_t i = 0; i < n && ret != 0; i++) {
		struct stat st;
		if (m[i].dev == dev && m[i].source[0] == '/' &&
		    stat(m[i].source, &st) == 0 && S_ISBLK(st.st_mode)) {
			*rdev = st.st_rdev;
			ret = 0;
		}
	}
	fidx_mounts_free(m, n);
	if (ret != 0)
		errno = ENODEV;
	return ret;
}

/*
 * Reads the rotational flag of the disk whose sysfs directory is disk (path
 * is a buffer for its file name).  A "1" of a virtio disk says nothing: -1
 * with errno EOPNOTSUPP.
 */
static int disk_flag(const char *disk, char *path)
{
	char driver[PATH_MAX];
	if (path_of(path, "%s/queue/rotational", disk) != 0)
		return -1;
	int r = read_flag(path);
	if (r != 1 || path_of(path, "%s/device/driver", disk) != 0)
		return r;
	ssize_t n = readlink(path, driver, sizeof(driver) - 1);
	if (n < 0)
		return r; /* no driver link: take the flag as it is */
	driver[n] = '\0';
	const char *name = strrchr(driver, '/');
	if (strcmp(name ? name + 1 : driver, "virtio_blk") == 0) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return r;
}

int fidx_dev_rotational_at(const char *sysfs, const char *mountinfo, dev_t dev)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct stat st;

	if (major(dev) == 0 && source_device(mountinfo, dev, &dev) != 0)
		return -1;
	if (path_of(dir, "%s/dev/block/%u:%u", sysfs, major(dev), minor(dev)) != 0)
		return -1;
	if (stat(dir, &st) != 0) {
		if (errno == ENOENT)
			errno = ENODEV;
		return -1;
	}
	int r = disk_flag(dir, path);
	if (r >= 0 || errno != ENOENT)
		return r;

	/* A partition: its disk, the directory above, holds the queue. */
	if (path_of(path, "%s/partition", dir) != 0)
		return -1;
	if (access(path, F_OK) != 0) {
		errno = ENOENT;
		return -1;
	}
	if (path_of(path, "%s/..", dir) != 0)
		return -1;
	snprintf(dir, sizeof(dir), "%s", path);
	return disk_flag(dir, path);
}

int fidx_dev_rotational(dev_t dev)
{
	return fidx_dev_rotational_at("/sys", "/proc/self/mountinfo", dev);
}

int fidx_file_first_extent(int fd, uint64_t *phys)
{
	union {
		struct fiemap map;
		char raw[sizeof(struct fiemap) + sizeof(struct fiemap_extent)];
	} req;

	memset(&req, 0, sizeof(req));
	req.map.fm_start = 0;
	req.map.fm_length = FIEMAP_MAX_OFFSET;
	req.map.fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, &req.map) != 0)
		return -1;   /* EOPNOTSUPP from the VFS when the fs has no ->fiemap */
	const struct fiemap_extent *e = &req.map.fm_extents[0];
	if (req.map.fm_mapped_extents == 0 ||
	    (e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DATA_INLINE))) {
		errno = ENODATA;
		return -1;
	}
	*phys = e->fe_physical;
	return 0;
}
