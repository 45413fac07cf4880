/*
 * blockdev.h - what the block device under a file says about reading it: whether
 * the disk spins, and where a file's data starts on it.  Used by the scan to
 * choose its I/O strategy (--io=auto) and, on a spinning disk, to read files in
 * on-disk order.
 */
#ifndef FIDX_BLOCKDEV_H
#define FIDX_BLOCKDEV_H

#include <stdint.h>
#include <sys/types.h>

/*
 * Whether the block device behind the filesystem whose st_dev is dev spins,
 * from sysfs (queue/rotational).  Returns 1 (rotational), 0 (not), or -1 with
 * errno set when it cannot be told:
 *   ENODEV  no block device is behind dev (tmpfs, NFS, overlay, FUSE ...), or
 *           sysfs has no entry for it (sysfs not mounted);
 *   ENOENT  the device has an entry but no queue/rotational (nor its disk);
 *   EOPNOTSUPP  a virtio disk, whose "1" is the kernel's default: the device
 *           cannot say what backs it;
 *   EINVAL  queue/rotational holds neither 0 nor 1;
 *   or the error of reading sysfs or /proc/self/mountinfo.
 */
int fidx_dev_rotational(dev_t dev);

/*
 * fidx_dev_rotational() with the sysfs root (normally "/sys") and the mount
 * table (normally "/proc/self/mountinfo") as parameters, for the unit test.
 */
int fidx_dev_rotational_at(const char *sysfs, const char *mountinfo, dev_t dev);

/*
 * The physical byte offset on its device of the first extent of the open file
 * fd (FS_IOC_FIEMAP asked for one extent, without syncing the file), to sort
 * files by on-disk position.  Returns 0 and sets *phys, or -1 with errno set:
 *   EOPNOTSUPP  the filesystem does not map extents (tmpfs, NFS, ...);
 *   ENODATA     the file has no extent with a known place on disk: it is
 *               empty or all holes, its data lives in the inode (inline), or
 *               it has not been placed yet (delayed allocation of data
 *               written but not yet flushed, which is still in memory);
 *   or the error of the ioctl (EBADF ...).
 */
int fidx_file_first_extent(int fd, uint64_t *phys);

#endif /* FIDX_BLOCKDEV_H */
