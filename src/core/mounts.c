/*
 * mounts.c - the mounted filesystems, read from /proc/self/mountinfo.
 *
 * Each line of mountinfo (proc(5)) describes one mount, in mount order:
 *
 *   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
 *   (1)(2) (3)  (4)   (5)      (6)      (7)    (8) (9)   (10)        (11)
 *
 *   (1) mount ID          (5) mount point            (9)  filesystem type
 *   (2) parent ID         (6) per-mount options      (10) source
 *   (3) major:minor       (7) optional fields, zero  (11) super-block options
 *   (4) root in the fs        or more (shared:N ...)
 *                         (8) "-" ends the optional fields
 *
 * Fields are separated by exactly one space (a field may be empty: a mount
 * made with an empty source), so lines are split with strsep(), never by
 * runs of blanks.  The kernel writes space, tab, newline and backslash inside
 * a field as \040 \011 \012 \134; each field is unescaped after the split.
 *
 * "Real" means a filesystem that holds people's files, the ones a scan is for.
 * The rules, in order:
 *   1. a pseudo type (kernel interfaces: proc, sysfs, cgroup, ...) is not;
 *      squashfs is not either: on a desktop these are snap and AppImage
 *      packages, read-only software images by the dozen, not user data;
 *   2. tmpfs is real unless mounted at or under /dev, /proc, /run or /sys:
 *      a tmpfs /tmp (Debian 13, Fedora, Arch) holds user files, while the
 *      tmpfs mounts under those four are runtime state of the system
 *      (/run, /run/user/N, /dev/shm, /sys/fs/cgroup, container masks);
 *   3. a known type of disk, network or union filesystem (ext4, xfs, btrfs,
 *      zfs, nfs, cifs, overlay, ...) and any FUSE filesystem (fuse.sshfs,
 *      fuse.rclone, ...) not listed as pseudo in rule 1 is;
 *   4. anything else is real when its source is a block device (/dev/...).
 *
 * Sizes come from statvfs(), asked only of real filesystems: it is pointless
 * for pseudo ones, and on an autofs mount point it would trigger the mount.
 */
#include "mounts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

/* Pseudo filesystem types (rule 1), sorted. */
static const char *const pseudo_types[] = {
	"autofs", "binfmt_misc", "bpf", "cgroup", "cgroup2", "configfs",
	"debugfs", "devpts", "devtmpfs", "efivarfs", "fuse.gvfsd-fuse",
	"fuse.lxcfs", "fuse.portal", "fuse.snapfuse", "fuse.squashfuse",
	"fusectl", "hugetlbfs", "mqueue", "nfsd", "nsfs", "proc", "pstore",
	"ramfs", "rpc_pipefs", "securityfs", "selinuxfs", "squashfs", "sysfs",
	"tracefs",
};

/* Types that hold files whatever their source (rule 3), sorted. */
static const char *const file_types[] = {
	"9p", "bcachefs", "btrfs", "ceph", "cifs", "exfat", "ext2", "ext3",
	"ext4", "f2fs", "fuseblk", "hfsplus", "jfs", "nfs", "nfs4", "ntfs",
	"ntfs3", "overlay", "reiserfs", "smb3", "vfat", "virtiofs", "xfs", "zfs",
};

/* Whether s is one of the n strings of list. */
static bool listed(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

/* Whether path is dir or a path below it (dir without a trailing slash). */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Applies the rules of the file comment: whether the mount holds user files. */
static bool is_real(const char *fstype, const char *source, const char *target)
{
	if (listed(fstype, pseudo_types, sizeof(pseudo_types) / sizeof(*pseudo_types)))
		return false;
	if (strcmp(fstype, "tmpfs") == 0)
		return !under(target, "/dev") && !under(target, "/proc") &&
		       !under(target, "/run") && !under(target, "/sys");
	if (listed(fstype, file_types, sizeof(file_types) / sizeof(*file_types)) ||
	    strncmp(fstype, "fuse.", 5) == 0)
		return true;
	return strncmp(source, "/dev/", 5) == 0;
}

/* Replaces, in place, each \ooo octal escape of s by the byte it stands for. */
static void unescape(char *s)
{
	char *w = s;
	for (const char *r = s; *r;) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' &&
		    r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 | (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

/*
 * Parses one mountinfo line (without its newline; modified in place) into
 * *m, with target, source and fstype malloc'ed.  Returns 0, or -1 with errno
 * EINVAL (the line is malformed) or ENOMEM, *m then holding nothing to free.
 */
static int parse_line(char *line, struct fidx_mount *m)
{
	char *field[6], *p = line, *sep, *fstype, *source;
	unsigned major, minor;
	int used;

	for (int i = 0; i < 6; i++)
		if (!(field[i] = strsep(&p, " ")))
			goto invalid;
	do
		sep = strsep(&p, " ");
	while (sep && strcmp(sep, "-") != 0);
	fstype = strsep(&p, " ");
	source = strsep(&p, " ");
	if (!sep || !fstype || !source || field[4][0] != '/' ||
	    sscanf(field[2], "%u:%u%n", &major, &minor, &used) != 2 ||
	    field[2][used] != '\0')
		goto invalid;
	unescape(field[4]);
	unescape(fstype);
	unescape(source);

	*m = (struct fidx_mount){
		.target = strdup(field[4]),
		.source = strdup(source),
		.fstype = strdup(fstype),
		.dev = makedev(major, minor),
	};
	if (!m->target || !m->source || !m->fstype) {
		free(m->target);
		free(m->source);
		free(m->fstype);
		errno = ENOMEM;
		return -1;
	}
	m->real = is_real(m->fstype, m->source, m->target);
	return 0;
invalid:
	errno = EINVAL;
	return -1;
}

/* Fills size, avail and used of a real mount from statvfs(); leaves 0 on failure. */
static void measure(struct fidx_mount *m)
{
	struct statvfs sv;
	if (!m->real || statvfs(m->target, &sv) != 0)
		return;
	m->size = (uint64_t)sv.f_blocks * sv.f_frsize;
	m->avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	m->used = (uint64_t)(sv.f_blocks - sv.f_bfree) * sv.f_frsize;
}

int fidx_mounts_parse(FILE *f, struct fidx_mount **mounts, size_t *n)
{
	struct fidx_mount *v = NULL;
	size_t count = 0, cap = 0, linecap = 0;
	char *line = NULL;
	ssize_t len;
	int saved;

	for (;;) {
		errno = 0;
		len = getline(&line, &linecap, f);
		if (len < 0)
			break;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0)
			continue;
		if (count == cap) {
			size_t ncap = cap ? 2 * cap : 32;
			struct fidx_mount *nv = reallocarray(v, ncap, sizeof(*v));
			if (!nv)
				goto fail;
			v = nv;
			cap = ncap;
		}
		if (parse_line(line, &v[count]) != 0)
			goto fail;
		measure(&v[count]);
		count++;
	}
	if (ferror(f)) {
		if (errno == 0)
			errno = EIO;
		goto fail;
	}
	free(line);
	*mounts = v;
	*n = count;
	return 0;
fail:
	saved = errno;
	free(line);
	fidx_mounts_free(v, count);
	errno = saved;
	return -1;
}

int fidx_mounts_read(struct fidx_mount **mounts, size_t *n)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -1;
	int ret = fidx_mounts_parse(f, mounts, n);
	int saved = errno;
	fclose(f);
	errno = saved;
	return ret;
}

void fidx_mounts_free(struct fidx_mount *mounts, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(mounts[i].target);
		free(mounts[i].source);
		free(mounts[i].fstype);
	}
	free(mounts);
}
