/*
 * platform_win.c - what the Linux-only modules of the core answer on Windows
 * (the Windows build only): mounts.h (the drives, for the interactive mode),
 * blockdev.h (whether a volume seeks), dedupe.h and source.h's image source
 * (refused, with the reason), and the live filesystem's walk as a source
 * (source_win.c's Win32 listing).
 *
 * The drives.  Each drive letter GetLogicalDrives() reports is a "mount":
 * its target the stored form of its root ("/C:", as every path of a Windows
 * scan: docs/WINDOWS.md), its source the drive's type and volume label
 * ("fixed disk", "removable, USB-STICK"), its fstype the file system
 * (GetVolumeInformationW: "NTFS", "FAT32", "ReFS"), its sizes those of
 * GetDiskFreeSpaceExW.  A drive with no medium (an empty card reader) or
 * whose volume cannot be read is listed, not real, and so never offered.
 */
#include <windows.h>
#include <winioctl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockdev.h"
#include "dedupe.h"
#include "mounts.h"
#include "source.h"

/* UTF-16 s as UTF-8, malloc'ed; NULL when out of memory. */
static char *utf8_of(const wchar_t *s)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, s, -1, NULL, 0, NULL, NULL);
	char *out = n > 0 ? malloc((size_t)n) : NULL;
	if (out && !WideCharToMultiByte(CP_UTF8, 0, s, -1, out, n, NULL, NULL)) {
		free(out);
		out = NULL;
	}
	return out;
}

/* What GetDriveTypeW's answer is called in the drive table. */
static const char *drive_type_name(UINT type)
{
	switch (type) {
	case DRIVE_FIXED: return "fixed disk";
	case DRIVE_REMOVABLE: return "removable";
	case DRIVE_REMOTE: return "network";
	case DRIVE_CDROM: return "cd-rom";
	case DRIVE_RAMDISK: return "ram disk";
	default: return "unknown";
	}
}

/* Fills m for the drive whose root is L"X:\\".  Returns 0, or -1 (ENOMEM). */
static int read_drive(const wchar_t root[4], struct fidx_mount *m)
{
	wchar_t label[MAX_PATH + 1] = L"", fs[MAX_PATH + 1] = L"";
	DWORD serial = 0;
	UINT type = GetDriveTypeW(root);
	/* No "insert a disk" box for an empty drive: an error, quietly. */
	UINT mode = SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
	bool readable = GetVolumeInformationW(root, label, MAX_PATH + 1, &serial, NULL, NULL, fs,
					      MAX_PATH + 1);
	ULARGE_INTEGER avail = {0}, total = {0}, free_bytes = {0};
	if (readable && !GetDiskFreeSpaceExW(root, &avail, &total, &free_bytes))
		total.QuadPart = 0;
	SetErrorMode(mode);

	char target[4] = {'/', (char)root[0], ':', '\0'};
	char *label8 = utf8_of(label);
	if (!label8)
		return -1;
	const char *kind = drive_type_name(type);
	int n = *label8 ? asprintf(&m->source, "%s, %s", kind, label8)
		: asprintf(&m->source, "%s", kind);
	free(label8);
	if (n < 0 || !(m->target = strdup(target)) ||
	    !(m->fstype = readable ? utf8_of(fs) : strdup("-")))
		return -1;
	m->dev = serial;
	m->size = total.QuadPart;
	m->avail = avail.QuadPart;
	m->used = total.QuadPart - free_bytes.QuadPart;
	m->real = readable && type != DRIVE_UNKNOWN && type != DRIVE_NO_ROOT_DIR;
	return 0;
}

int fidx_mounts_read(struct fidx_mount **mounts, size_t *n)
{
	DWORD drives = GetLogicalDrives();
	struct fidx_mount *list = calloc(26, sizeof(*list));
	size_t count = 0;
	*mounts = NULL;
	*n = 0;
	if (!list)
		return errno = ENOMEM, -1;
	for (int d = 0; d < 26; d++) {
		if (!(drives & (1u << d)))
			continue;
		wchar_t root[4] = {(wchar_t)(L'A' + d), L':', L'\\', L'\0'};
		if (read_drive(root, &list[count++]) < 0) {
			fidx_mounts_free(list, count);
			return errno = ENOMEM, -1;
		}
	}
	*mounts = list;
	*n = count;
	return 0;
}

int fidx_mounts_parse(FILE *f, struct fidx_mount **mounts, size_t *n)
{
	(void)f;
	*mounts = NULL;
	*n = 0;
	return errno = ENOTSUP, -1;
}

void fidx_mounts_free(struct fidx_mount *mounts, size_t n)
{
	for (size_t i = 0; mounts && i < n; i++) {
		free(mounts[i].target);
		free(mounts[i].source);
		free(mounts[i].fstype);
	}
	free(mounts);
}

/* The letter of the drive whose volume serial is dev; 0 when none has it. */
static wchar_t drive_of_serial(uint64_t dev)
{
	DWORD drives = GetLogicalDrives();
	UINT mode = SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
	wchar_t found = 0;
	for (int d = 0; d < 26 && !found; d++) {
		wchar_t root[4] = {(wchar_t)(L'A' + d), L':', L'\\', L'\0'};
		DWORD serial;
		if ((drives & (1u << d)) &&
		    GetVolumeInformationW(root, NULL, 0, &serial, NULL, NULL, NULL, 0) &&
		    serial == dev)
			found = root[0];
	}
	SetErrorMode(mode);
	return found;
}

/* Whether the volume of dev seeks (IOCTL_STORAGE_QUERY_PROPERTY's seek penalty). */
int fidx_dev_rotational(dev_t dev)
{
	wchar_t letter = drive_of_serial((uint64_t)dev);
	if (!letter)
		return errno = ENODEV, -1;
	wchar_t volume[] = {L'\\', L'\\', L'.', L'\\', letter, L':', L'\0'};
	HANDLE h = CreateFileW(volume, 0, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
			       0, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return errno = fidx_win_errno(GetLastError()), -1;
	STORAGE_PROPERTY_QUERY q = {.PropertyId = StorageDeviceSeekPenaltyProperty,
				    .QueryType = PropertyStandardQuery};
	DEVICE_SEEK_PENALTY_DESCRIPTOR d = {0};
	DWORD got = 0;
	BOOL ok = DeviceIoControl(h, IOCTL_STORAGE_QUERY_PROPERTY, &q, sizeof(q), &d, sizeof(d),
				  &got, NULL);
	DWORD e = GetLastError();
	CloseHandle(h);
	if (!ok || got < sizeof(d))
		return errno = ok ? ENOENT : fidx_win_errno(e), -1;
	return d.IncursSeekPenalty ? 1 : 0;
}

int fidx_dev_rotational_at(const char *sysfs, const char *mountinfo, dev_t dev)
{
	(void)sysfs, (void)mountinfo, (void)dev;
	return errno = ENOTSUP, -1;
}

int fidx_file_first_extent(int fd, uint64_t *phys)
{
	(void)fd, (void)phys;
	return errno = ENOTSUP, -1;
}

/* Why the Windows build does not act on duplicates. */
#define NO_DEDUPE "acting on duplicates (--delete, --link, --reflink) is not in the Windows" \
	" build: list them with fidx dupes and act on Linux, or by hand"

int fidx_dedupe_keep_open(struct fidx_dedupe_keep *k, const struct fidx_dupes_file *file,
			  uint64_t size, struct fidx_error *err)
{
	k->file = file;
	k->size = size;
	k->fd = -1;
	fidx_fail(err, ENOTSUP, "%s", NO_DEDUPE);
	return -1;
}

void fidx_dedupe_keep_close(struct fidx_dedupe_keep *k)
{
	k->fd = -1;
}

size_t fidx_dedupe_file(const struct fidx_dedupe_keep *k, const struct fidx_dupes_file *dup,
			enum fidx_dedupe_how how,
			void (*report)(void *arg, const char *path, const struct fidx_error *why),
			void *arg, uint64_t *other_names)
{
	(void)k, (void)dup, (void)how, (void)report, (void)arg;
	*other_names = 0;
	return 0;
}

/* Why the Windows build reads no disk image. */
#define NO_IMAGES "disk images are read by the Linux build (The Sleuth Kit, which has no" \
	" Windows build in Debian)"

struct fidx_source *fidx_image_source_new(const struct fidx_image_source_opts *opts,
					  struct fidx_error *err)
{
	(void)opts;
	fidx_fail(err, ENOTSUP, "%s", NO_IMAGES);
	return NULL;
}

char *fidx_image_describe(const char *path, struct fidx_error *err)
{
	fidx_fail(err, ENOTSUP, "%s: %s", path, NO_IMAGES);
	return NULL;
}

bool fidx_image_probe(const char *path)
{
	(void)path;
	return false;
}

const char *fidx_image_library(void)
{
	return "disk images: none (read by the Linux build)";
}

/*
 * The live file system's walk, on Windows: source_win.c's listing.  What
 * Windows' listing cannot do is refused with the reason: following links
 * (a Windows scan records reparse points and never follows them) and
 * --no-stat (the listing gives the metadata with the names: there is
 * nothing to save).
 */
struct fidx_source *fidx_walk_source_new(const struct fidx_walk_source_opts *opts,
					 struct fidx_error *err)
{
	if (opts->follow || opts->follow_all) {
		fidx_fail(err, ENOTSUP, "--follow: a Windows scan records symlinks and junctions"
			  " and never follows them");
		return NULL;
	}
	if (opts->no_stat) {
		fidx_fail(err, ENOTSUP, "--no-stat: a Windows listing gives the metadata with the"
			  " names, so the Windows build always records it");
		return NULL;
	}
	struct fidx_win_source_opts w = {.xdev = opts->xdev, .streams = true,
					 .excludes = opts->excludes};
	return fidx_win_source_new(&w, err);
}
