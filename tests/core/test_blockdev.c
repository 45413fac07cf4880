/*
 * test_blockdev.c - the block device questions (src/core/blockdev.c).
 *
 * Rotational: fidx_dev_rotational_at() is pointed at a fake sysfs tree built
 * in a temporary folder, laid out as the kernel lays it out (symlinks in
 * dev/block/ to device directories, a partition inside its disk's directory)
 * with a whole disk, a partition of it, a device-mapper device, missing
 * files and garbage flags, and at a fake mount table whose anonymous devices
 * have a block device node, a plain file and a non-path as source.  The real
 * answer for "/" is checked against lsblk (util-linux reads sysfs on its own).
 *
 * First extent: files on /var/tmp (ext4 on the test machine; the tests skip
 * on another filesystem).  The offset of a written, synced file is checked
 * against filefrag (e2fsprogs), which parses FIEMAP's answer on its own.
 * (Reading the block device at that offset would check the kernel too, but
 * the test machine refuses to open /dev/vda even to root; bench/read-order
 * does that check on its loop device.)  /dev/shm (tmpfs) has no FIEMAP: EOPNOTSUPP on
 * Linux 6.18.  Files written but not yet flushed answer ENODATA (delayed
 * allocation) until writeback places them; any sync on the machine can end
 * that window, so the test accepts either answer but never a place at 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "blockdev.h"

#define EXT4_MAGIC 0xEF53
#define TMPFS_MAGIC 0x01021994

/* The fake sysfs root and a folder for files on /var/tmp. */
static struct {
	char sys[64];    /* fake sysfs tree and mount tables */
	char files[64];  /* files on /var/tmp */
} fx;

/* Creates dir/rel and its missing parents. */
static void mkdirs(const char *dir, const char *rel)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
}

/* Writes text into the file dir/rel, creating its folders. */
static void put(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX], parent[PATH_MAX];
	snprintf(parent, sizeof(parent), "%s", rel);
	char *slash = strrchr(parent, '/');
	if (slash) {
		*slash = '\0';
		mkdirs(dir, parent);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* Makes the sysfs link dev/block/MAJ:MIN to devices/<target>. */
static void link_dev(unsigned maj, unsigned min, const char *target)
{
	char path[PATH_MAX], to[PATH_MAX];
	mkdirs(fx.sys, "dev/block");
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u", fx.sys, maj, min);
	snprintf(to, sizeof(to), "../../devices/%s", target);
	assert_int_equal(symlink(to, path), 0);
}

/* Makes devices/<disk>/device/driver a symlink to the fake tree's <driver>. */
static void driver_link(const char *disk, const char *driver)
{
	char path[PATH_MAX], to[PATH_MAX];
	snprintf(path, sizeof(path), "devices/%s/device", disk);
	mkdirs(fx.sys, path);
	snprintf(path, sizeof(path), "%s/devices/%s/device/driver", fx.sys, disk);
	snprintf(to, sizeof(to), "%s/%s", fx.sys, driver);
	assert_int_equal(symlink(to, path), 0);
}

/* fidx_dev_rotational_at() on the fake tree, with the fake mount table. */
static int rot(unsigned maj, unsigned min)
{
	char mountinfo[PATH_MAX];
	snprintf(mountinfo, sizeof(mountinfo), "%s/mountinfo", fx.sys);
	errno = 0;
	return fidx_dev_rotational_at(fx.sys, mountinfo, makedev(maj, min));
}

/* Asserts that rot(maj, min) fails with errno err. */
static void rot_fails(unsigned maj, unsigned min, int err)
{
	assert_int_equal(rot(maj, min), -1);
	assert_int_equal(errno, err);
}

/*
 * Builds the fake sysfs tree:
 *   8:0  sda         whole disk, rotational "1\n"
 *   8:1  sda/sda1    its partition (no queue/)
 *   259:0 nvme0n1    whole disk, "0\n";  259:1 its partition nvme0n1p1
 *   253:0 dm-0       device-mapper, "0" without newline
 *   8:16 sdb         rotational "yes\n";  8:32 sdc  empty;  8:48 sdd  "10\n"
 *   8:64 sde         no queue/ at all, not a partition
 *   8:81 sdf/sdf1    a partition whose disk has no queue/
 *   252:0 vda        a virtio disk, "1\n" (the kernel's default), driver virtio_blk;
 *   252:1 vda/vda1   its partition
 *   8:96 sdg         "1\n", driver sd: a disk that says it spins
 * and dev/block/9:9 is absent.
 */
static int group_setup(void **state)
{
	(void)state;
	snprintf(fx.sys, sizeof(fx.sys), "/tmp/fidx-test-blockdev.XXXXXX");
	snprintf(fx.files, sizeof(fx.files), "/var/tmp/fidx-test-blockdev.XXXXXX");
	if (!mkdtemp(fx.sys) || !mkdtemp(fx.files))
		return -1;

	put(fx.sys, "devices/pci/block/sda/queue/rotational", "1\n");
	put(fx.sys, "devices/pci/block/sda/sda1/partition", "1\n");
	put(fx.sys, "devices/pci/nvme/block/nvme0n1/queue/rotational", "0\n");
	put(fx.sys, "devices/pci/nvme/block/nvme0n1/nvme0n1p1/partition", "1\n");
	put(fx.sys, "devices/virtual/block/dm-0/queue/rotational", "0");
	put(fx.sys, "devices/pci/block/sdb/queue/rotational", "yes\n");
	put(fx.sys, "devices/pci/block/sdc/queue/rotational", "");
	put(fx.sys, "devices/pci/block/sdd/queue/rotational", "10\n");
	put(fx.sys, "devices/pci/block/sde/size", "0\n");
	put(fx.sys, "devices/pci/block/sdf/sdf1/partition", "1\n");
	link_dev(8, 0, "pci/block/sda");
	link_dev(8, 1, "pci/block/sda/sda1");
	link_dev(259, 0, "pci/nvme/block/nvme0n1");
	link_dev(259, 1, "pci/nvme/block/nvme0n1/nvme0n1p1");
	link_dev(253, 0, "virtual/block/dm-0");
	link_dev(8, 16, "pci/block/sdb");
	link_dev(8, 32, "pci/block/sdc");
	link_dev(8, 48, "pci/block/sdd");
	link_dev(8, 64, "pci/block/sde");
	link_dev(8, 81, "pci/block/sdf/sdf1");
	put(fx.sys, "devices/pci/virtio1/block/vda/queue/rotational", "1\n");
	put(fx.sys, "devices/pci/virtio1/block/vda/vda1/partition", "1\n");
	driver_link("pci/virtio1/block/vda", "bus/virtio/drivers/virtio_blk");
	link_dev(252, 0, "pci/virtio1/block/vda");
	link_dev(252, 1, "pci/virtio1/block/vda/vda1");
	put(fx.sys, "devices/pci/block/sdg/queue/rotational", "1\n");
	driver_link("pci/block/sdg", "bus/scsi/drivers/sd");
	link_dev(8, 96, "pci/block/sdg");
	return 0;
}

/* nftw() callback removing one entry of a fixture folder. */
static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Removes both fixture folders. */
static int group_teardown(void **state)
{
	(void)state;
	int a = nftw(fx.sys, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	int b = nftw(fx.files, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return a == 0 && b == 0 ? 0 : -1;
}

static void test_rotational_fake_tree(void **state)
{
	(void)state;
	assert_int_equal(rot(8, 0), 1);
	assert_int_equal(rot(8, 1), 1);      /* partition: its disk's queue */
	assert_int_equal(rot(259, 0), 0);
	assert_int_equal(rot(259, 1), 0);
	assert_int_equal(rot(253, 0), 0);    /* no newline */
	rot_fails(8, 16, EINVAL);
	rot_fails(8, 32, EINVAL);
	rot_fails(8, 48, EINVAL);
	rot_fails(8, 64, ENOENT);            /* not a partition: ".." is not looked at */
	rot_fails(8, 81, ENOENT);            /* partition of a disk without queue/ */
	rot_fails(9, 9, ENODEV);             /* no sysfs entry */
	rot_fails(252, 0, EOPNOTSUPP);       /* virtio: its "1" says nothing */
	rot_fails(252, 1, EOPNOTSUPP);       /* ... nor for its partitions */
	assert_int_equal(rot(8, 96), 1);     /* another driver: the flag stands */

	/* A sysfs root that does not exist: nothing can be told. */
	errno = 0;
	assert_int_equal(fidx_dev_rotational_at("/nonexistent-sysfs", "/nonexistent", makedev(8, 0)), -1);
	assert_int_equal(errno, ENODEV);
}

/*
 * Anonymous devices (major 0) through the fake mount table: 0:99 is a btrfs
 * on a block device node made here (8:1, the fake sda1), 0:98 a tmpfs, 0:97
 * an overlay whose source is an absolute path that is no device, 0:96 is
 * not mounted.  Making the node needs CAP_MKNOD: skipped without it.
 */
static void test_rotational_anonymous(void **state)
{
	(void)state;
	char node[PATH_MAX], table[2 * PATH_MAX];
	snprintf(node, sizeof(node), "%s/sda1", fx.sys);
	if (mknod(node, S_IFBLK | 0600, makedev(8, 1)) != 0) {
		assert_true(errno == EPERM);
		skip();
	}
	snprintf(table, sizeof(table),
		 "22 27 0:98 / /tmp rw - tmpfs tmpfs rw\n"
		 "23 27 0:99 /@home /home rw,relatime - btrfs %s rw,subvolid=257\n"
		 "24 27 0:97 / /merged rw - overlay /etc/passwd rw,lowerdir=/a\n",
		 node);
	put(fx.sys, "mountinfo", table);

	assert_int_equal(rot(0, 99), 1);
	rot_fails(0, 98, ENODEV);
	rot_fails(0, 97, ENODEV);
	rot_fails(0, 96, ENODEV);

	/* An unreadable mount table: its error. */
	errno = 0;
	assert_int_equal(fidx_dev_rotational_at(fx.sys, "/nonexistent/mountinfo", makedev(0, 99)), -1);
	assert_int_equal(errno, ENOENT);
}

/*
 * The real answer for "/", against lsblk's ROTA column for the source of "/"
 * (util-linux's findmnt and lsblk): when lsblk tells, fidx must agree; when
 * it cannot (an overlay root in a container), fidx must fail too.
 */
static void test_rotational_real_root(void **state)
{
	(void)state;
	struct stat st;
	char out[16] = "";
	assert_int_equal(stat("/", &st), 0);
	FILE *p = popen("lsblk -dno ROTA \"$(findmnt -nvo SOURCE /)\" 2>/dev/null", "r");
	assert_non_null(p);
	if (!fgets(out, sizeof(out), p))
		out[0] = '\0';
	pclose(p);

	/* The driver of /'s disk (a partition's parent, PKNAME, else itself). */
	char driver[64] = "";
	p = popen("src=$(findmnt -nvo SOURCE /); d=$(lsblk -dno PKNAME \"$src\" 2>/dev/null); "
		  "[ -n \"$d\" ] || d=$(basename \"$src\"); "
		  "basename \"$(readlink /sys/block/$d/device/driver)\" 2>/dev/null", "r");
	assert_non_null(p);
	if (!fgets(driver, sizeof(driver), p))
		driver[0] = '\0';
	pclose(p);
	driver[strcspn(driver, "\n")] = '\0';

	int want = -1;
	sscanf(out, "%d", &want);
	errno = 0;
	int got = fidx_dev_rotational(st.st_dev);
	printf("    / is %u:%u, lsblk ROTA '%.*s', driver '%s', fidx %d\n", major(st.st_dev),
	       minor(st.st_dev), (int)strcspn(out, "\n"), out, driver, got);
	if (want == 1 && strcmp(driver, "virtio_blk") == 0) {
		/* The kernel's default "1" of a virtio disk says nothing. */
		assert_int_equal(got, -1);
		assert_int_equal(errno, EOPNOTSUPP);
	} else {
		assert_int_equal(got, want);
	}

	/* /proc has no block device. */
	assert_int_equal(stat("/proc/self", &st), 0);
	errno = 0;
	assert_int_equal(fidx_dev_rotational(st.st_dev), -1);
	assert_int_equal(errno, ENODEV);
}

/* Skips the test unless path is on a filesystem of type magic. */
static void require_fs(const char *path, long magic)
{
	struct statfs sf;
	assert_int_equal(statfs(path, &sf), 0);
	if (sf.f_type != magic)
		skip();
}

/* The block size of the filesystem holding path. */
static uint64_t block_size(const char *path)
{
	struct statfs sf;
	assert_int_equal(statfs(path, &sf), 0);
	return (uint64_t)sf.f_bsize;
}

/* Creates fx.files/name holding len bytes of data at offset off; returns an O_RDONLY fd. */
static int make_file(const char *name, const void *data, size_t len, off_t off, off_t size)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", fx.files, name);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	if (len > 0)
		assert_int_equal(pwrite(fd, data, len, off), (ssize_t)len);
	assert_int_equal(ftruncate(fd, size), 0);
	assert_int_equal(fsync(fd), 0);
	return fd;
}

/*
 * Checks phys against e2fsprogs' filefrag, which asks FIEMAP on its own and
 * prints the first extent's physical range in bytes with -b1.  Skips when
 * filefrag is not installed.
 */
static void assert_filefrag(const char *name, uint64_t phys)
{
	char cmd[PATH_MAX + 64], line[256];
	unsigned long long start = 0;
	bool found = false;
	snprintf(cmd, sizeof(cmd), "filefrag -v -b1 '%s/%s' 2>/dev/null", fx.files, name);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (!found && sscanf(line, " 0: %*u.. %*u: %llu..", &start) == 1)
			found = true;
	int status = pclose(p);
	if (status != 0 && !found)
		skip();
	assert_true(found);
	assert_int_equal(start, phys);
}

static void test_extent_written_file(void **state)
{
	(void)state;
	require_fs("/var/tmp", EXT4_MAGIC);
	static unsigned char data[65536];
	memset(data, 'w', sizeof(data));
	int fd = make_file("written", data, sizeof(data), 0, sizeof(data));
	uint64_t phys = 0;
	assert_int_equal(fidx_file_first_extent(fd, &phys), 0);
	assert_true(phys > 0);
	assert_int_equal(phys % block_size("/var/tmp"), 0);
	assert_filefrag("written", phys);
	close(fd);
}

/* A file whose first MiB is a hole: the first extent is where the data is. */
static void test_extent_after_hole(void **state)
{
	(void)state;
	require_fs("/var/tmp", EXT4_MAGIC);
	static unsigned char data[8192];
	memset(data, 'h', sizeof(data));
	int fd = make_file("holey", data, sizeof(data), 1 << 20, (1 << 20) + sizeof(data));
	uint64_t phys = 0;
	assert_int_equal(fidx_file_first_extent(fd, &phys), 0);
	assert_true(phys > 0);
	assert_filefrag("holey", phys);
	close(fd);
}

static void test_extent_none(void **state)
{
	(void)state;
	require_fs("/var/tmp", EXT4_MAGIC);
	uint64_t phys = 77;

	int fd = make_file("empty", NULL, 0, 0, 0);
	errno = 0;
	assert_int_equal(fidx_file_first_extent(fd, &phys), -1);
	assert_int_equal(errno, ENODATA);
	close(fd);

	fd = make_file("sparse", NULL, 0, 0, 1 << 20);
	errno = 0;
	assert_int_equal(fidx_file_first_extent(fd, &phys), -1);
	assert_int_equal(errno, ENODATA);
	close(fd);
	assert_int_equal(phys, 77);

	errno = 0;
	assert_int_equal(fidx_file_first_extent(-1, &phys), -1);
	assert_int_equal(errno, EBADF);
}

/*
 * Data written and not flushed: ext4's delayed allocation has not placed it
 * yet, FIEMAP says UNKNOWN at physical 0, and that is no place (ENODATA).
 * Writeback (any sync on the machine) may place it before the question; then
 * the answer is a real offset, never 0.
 */
static void test_extent_unflushed(void **state)
{
	(void)state;
	require_fs("/var/tmp", EXT4_MAGIC);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/unflushed", fx.files);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	static unsigned char data[16384];
	memset(data, 'u', sizeof(data));
	assert_int_equal(write(fd, data, sizeof(data)), (ssize_t)sizeof(data));
	uint64_t phys = 0;
	errno = 0;
	if (fidx_file_first_extent(fd, &phys) == 0)
		assert_true(phys > 0);
	else
		assert_int_equal(errno, ENODATA);
	close(fd);
}

/* tmpfs has no FIEMAP (EOPNOTSUPP from the kernel on Linux 6.18). */
static void test_extent_tmpfs(void **state)
{
	(void)state;
	require_fs("/dev/shm", TMPFS_MAGIC);
	char path[] = "/dev/shm/fidx-test-blockdev.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(write(fd, "data", 4), 4);
	uint64_t phys;
	errno = 0;
	assert_int_equal(fidx_file_first_extent(fd, &phys), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rotational_fake_tree),
		cmocka_unit_test(test_rotational_anonymous),
		cmocka_unit_test(test_rotational_real_root),
		cmocka_unit_test(test_extent_written_file),
		cmocka_unit_test(test_extent_after_hole),
		cmocka_unit_test(test_extent_none),
		cmocka_unit_test(test_extent_unflushed),
		cmocka_unit_test(test_extent_tmpfs),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
