/*
 * wincheck.c - the Win32 API's own view of a tree, to check the Windows
 * source (src/core/source_win.c) against, and the hostile tree to check it
 * on.  Built with MinGW-w64, run under Wine or on Windows; it shares no code
 * with fidx (tests/windows/run compares fidx.exe's rows with its lines).
 *
 *   wincheck list ROOT     one line per entry under ROOT (native path),
 *                          ROOT included, and per named stream
 *   wincheck mktree DIR    makes the hostile tree in DIR (which must not
 *                          exist); says on stderr what the system refused
 *
 * A line, fields separated by one space:
 *
 *   PATH TYPE size=N attr=HEX ino=HEX dev=HEX btime=T atime=T mtime=T ctime=T
 *        nlink=N target=HEX stream=HEX
 *
 * PATH is the stored form (/C:/x, //server/share/x) in WTF-8, written in hex
 * so that any name (a newline, an unpaired surrogate) stays on its line;
 * TYPE d, f or l; T a FILETIME as its raw count of 100 ns ticks; target and
 * stream the link target and the stream's name in hex ("-": none).  Here
 * the listing is FindFirstFileW's, the metadata GetFileInformationByHandle's
 * (and FILE_BASIC_INFO's ChangeTime), the streams FindFirstStreamW's, where
 * fidx uses FileIdBothDirectoryInfo and FILE_STREAM_INFO.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>
#include <winioctl.h>

#define TAG_MOUNT_POINT 0xA0000003u
#define TAG_SYMLINK     0xA000000Cu

/* FSCTL_GET_REPARSE_POINT's answer for the two tags read here. */
struct reparse {
	ULONG tag;
	USHORT len, reserved;
	USHORT sub_off, sub_len, print_off, print_len;
	ULONG flags_or_path; /* a symlink's flags; a mount point's path starts here */
	WCHAR path[8192];
};

/* Appends the UTF-8 of the n units at w to out in hex, an unpaired surrogate as 3 bytes. */
static void hex_utf8(FILE *out, const WCHAR *w, size_t n)
{
	if (n == 0) {
		fputc('-', out);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned long c = w[i];
		unsigned char b[4];
		int k;
		if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && w[i + 1] >= 0xdc00 && w[i + 1] <= 0xdfff)
			c = 0x10000 + ((c - 0xd800) << 10) + (w[++i] - 0xdc00);
		if (c < 0x80) {
			b[0] = (unsigned char)c, k = 1;
		} else if (c < 0x800) {
			b[0] = 0xc0 | c >> 6, b[1] = 0x80 | (c & 63), k = 2;
		} else if (c < 0x10000) {
			b[0] = 0xe0 | c >> 12, b[1] = 0x80 | (c >> 6 & 63), b[2] = 0x80 | (c & 63), k = 3;
		} else {
			b[0] = 0xf0 | c >> 18, b[1] = 0x80 | (c >> 12 & 63);
			b[2] = 0x80 | (c >> 6 & 63), b[3] = 0x80 | (c & 63), k = 4;
		}
		for (int j = 0; j < k; j++)
			fprintf(out, "%02x", b[j]);
	}
}

/*
 * Writes the stored form of the native path w: "\\?\" dropped, C:\x as
 * /C:/x, \\?\UNC\s\sh\x and \\s\sh\x as //s/sh/x, '\' as '/', a trailing
 * '\' dropped.  (A simple copy of winpath.h's rule, for this checker alone.)
 */
static void stored_path(FILE *out, const WCHAR *w)
{
	WCHAR buf[40000];
	size_t k = 0;
	if (wcsncmp(w, L"\\\\?\\UNC\\", 8) == 0)
		w += 7;          /* at the '\' before the server */
	else if (wcsncmp(w, L"\\\\?\\", 4) == 0)
		w += 4;
	else if (w[0] == '\\' && w[1] == '\\')
		w += 1;
	buf[k++] = '/';
	if (w[1] == ':') {
		buf[k++] = towupper(w[0]);
		buf[k++] = ':';
		w += 2;
	}
	for (; *w; w++)
		if (!(*w == '\\' && (w[1] == 0 || w[1] == '\\')))
			buf[k++] = *w == '\\' ? '/' : *w;
	hex_utf8(out, buf, k);
}

/* The reparse point's target (print name, else substitute name) into *n units at *t. */
static DWORD read_target(HANDLE h, struct reparse *rp, const WCHAR **t, size_t *n, DWORD *tag)
{
	DWORD got;
	*n = 0;
	*tag = 0;
	if (!DeviceIoControl(h, FSCTL_GET_REPARSE_POINT, NULL, 0, rp, sizeof(*rp), &got, NULL))
		return GetLastError();
	*tag = rp->tag;
	const BYTE *base;
	if (rp->tag == TAG_SYMLINK)
		base = (const BYTE *)rp->path;
	else if (rp->tag == TAG_MOUNT_POINT)
		base = (const BYTE *)&rp->flags_or_path;
	else
		return 0;
	if (rp->print_len) {
		*t = (const WCHAR *)(base + rp->print_off);
		*n = rp->print_len / 2;
	} else {
		*t = (const WCHAR *)(base + rp->sub_off);
		*n = rp->sub_len / 2;
	}
	return 0;
}

/* Writes the lines of the entry at path w (and of its named streams); says whether to enter it. */
static int list_one(const WCHAR *w, int *is_dir)
{
	static struct reparse rp;
	*is_dir = 0;
	HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES,
			       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			       OPEN_EXISTING,
			       FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	BY_HANDLE_FILE_INFORMATION bh;
	FILE_BASIC_INFO bi;
	if (h == INVALID_HANDLE_VALUE || !GetFileInformationByHandle(h, &bh) ||
	    !GetFileInformationByHandleEx(h, FileBasicInfo, &bi, sizeof(bi))) {
		stored_path(stdout, w);
		printf(" ? error=%lu\n", (unsigned long)GetLastError());
		if (h != INVALID_HANDLE_VALUE)
			CloseHandle(h);
		return -1;
	}
	const WCHAR *target = NULL;
	size_t tn = 0;
	DWORD tag = 0;
	char type = bh.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY ? 'd' : 'f';
	if (bh.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) {
		DWORD e = read_target(h, &rp, &target, &tn, &tag);
		if (e)
			fprintf(stderr, "wincheck: reparse point without data (error %lu)\n",
				(unsigned long)e);
		if (e || (tag & 0x20000000u))
			type = 'l';
	}
	CloseHandle(h);
	*is_dir = type == 'd';
	uint64_t size = (uint64_t)bh.nFileSizeHigh << 32 | bh.nFileSizeLow;
	uint64_t ino = (uint64_t)bh.nFileIndexHigh << 32 | bh.nFileIndexLow;
#define TICKS(ft) ((long long)((uint64_t)(ft).dwHighDateTime << 32 | (ft).dwLowDateTime))
	char rest[512];
	snprintf(rest, sizeof(rest), " attr=%lx ino=%llx dev=%lx btime=%lld atime=%lld mtime=%lld"
		 " ctime=%lld nlink=%lu", (unsigned long)bh.dwFileAttributes,
		 (unsigned long long)ino, (unsigned long)bh.dwVolumeSerialNumber,
		 TICKS(bh.ftCreationTime), TICKS(bh.ftLastAccessTime), TICKS(bh.ftLastWriteTime),
		 (long long)bi.ChangeTime.QuadPart, (unsigned long)bh.nNumberOfLinks);
	stored_path(stdout, w);
	printf(" %c size=%llu%s target=", type, (unsigned long long)size, rest);
	hex_utf8(stdout, target, tn);
	printf(" stream=-\n");
	if (type == 'l')
		return 0;
	WIN32_FIND_STREAM_DATA sd;
	HANDLE fs = FindFirstStreamW(w, FindStreamInfoStandard, &sd, 0);
	if (fs == INVALID_HANDLE_VALUE) {
		DWORD e = GetLastError();
		if (e != ERROR_HANDLE_EOF)
			fprintf(stderr, "wincheck: FindFirstStreamW: error %lu\n", (unsigned long)e);
		return 0;
	}
	do {
		/* ":NAME:$DATA"; "::$DATA" is the file's own content. */
		size_t n = wcslen(sd.cStreamName);
		if (n <= 7 || wcscmp(sd.cStreamName + n - 6, L":$DATA") != 0)
			continue;
		WCHAR full[40000];
		swprintf(full, sizeof(full) / sizeof(full[0]), L"%ls:%.*ls", w, (int)(n - 7),
			 sd.cStreamName + 1);
		stored_path(stdout, full);
		printf(" f size=%llu%s target=- stream=", (unsigned long long)sd.StreamSize.QuadPart,
		       rest);
		hex_utf8(stdout, sd.cStreamName + 1, n - 7);
		printf("\n");
	} while (FindNextStreamW(fs, &sd));
	FindClose(fs);
	return 0;
}

/* Lists the tree at w (a \\?\ path, in a buffer of 40000 units) recursively. */
static void list_tree(WCHAR *w)
{
	int is_dir;
	if (list_one(w, &is_dir) < 0 || !is_dir)
		return;
	size_t n = wcslen(w);
	int root = w[n - 1] == '\\';
	wcscpy(w + n, root ? L"*" : L"\\*");
	WIN32_FIND_DATAW fd;
	HANDLE f = FindFirstFileW(w, &fd);
	w[n] = 0;
	if (f == INVALID_HANDLE_VALUE)
		return;
	do {
		if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0)
			continue;
		swprintf(w + n, 40000 - n, root ? L"%ls" : L"\\%ls", fd.cFileName);
		list_tree(w);
		w[n] = 0;
	} while (FindNextFileW(f, &fd));
	FindClose(f);
}

/* Says on stderr whether step what succeeded (ok), with the system's error if not. */
static void said(const char *what, BOOL ok)
{
	if (ok)
		fprintf(stderr, "mktree: %s: ok\n", what);
	else
		fprintf(stderr, "mktree: %s: FAILED (error %lu)\n", what, (unsigned long)GetLastError());
}

/* Makes file path (n bytes of content "x...") and says so. */
static BOOL make_file(const WCHAR *path, const char *what, DWORD n)
{
	HANDLE h = CreateFileW(path, GENERIC_WRITE, 0, NULL, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
	BOOL ok = h != INVALID_HANDLE_VALUE;
	if (ok) {
		char buf[4096];
		memset(buf, 'x', sizeof(buf));
		DWORD done;
		while (ok && n > 0) {
			DWORD k = n < sizeof(buf) ? n : sizeof(buf);
			ok = WriteFile(h, buf, k, &done, NULL);
			n -= k;
		}
		CloseHandle(h);
	}
	if (what)
		said(what, ok);
	return ok;
}

/* The FILETIME of ticks. */
static FILETIME ft(long long ticks)
{
	return (FILETIME){.dwLowDateTime = (DWORD)ticks, .dwHighDateTime = (DWORD)(ticks >> 32)};
}

/* Sets the creation, access and write times of path. */
static void set_times(const WCHAR *path, const char *what, long long c, long long a, long long m)
{
	HANDLE h = CreateFileW(path, FILE_WRITE_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
			       OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
			       NULL);
	FILETIME fc = ft(c), fa = ft(a), fm = ft(m);
	BOOL ok = h != INVALID_HANDLE_VALUE && SetFileTime(h, &fc, &fa, &fm);
	said(what, ok);
	if (h != INVALID_HANDLE_VALUE)
		CloseHandle(h);
}

/* Makes a junction at link (a new folder) to the absolute native target (C:\x). */
static BOOL make_junction(const WCHAR *link, const WCHAR *target)
{
	if (!CreateDirectoryW(link, NULL))
		return FALSE;
	HANDLE h = CreateFileW(link, GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
			       FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return FALSE;
	static struct reparse rp;
	size_t tn = wcslen(target);
	memset(&rp, 0, sizeof(rp));
	WCHAR *p = (WCHAR *)&rp.flags_or_path;
	/* substitute name \??\TARGET, NUL, print name TARGET, NUL */
	wcscpy(p, L"\\??\\");
	wcscpy(p + 4, target);
	wcscpy(p + 4 + tn + 1, target);
	rp.tag = TAG_MOUNT_POINT;
	rp.sub_off = 0;
	rp.sub_len = (USHORT)((4 + tn) * 2);
	rp.print_off = (USHORT)((4 + tn + 1) * 2);
	rp.print_len = (USHORT)(tn * 2);
	rp.len = (USHORT)(8 + (4 + tn + 1 + tn + 1) * 2);
	DWORD got;
	BOOL ok = DeviceIoControl(h, FSCTL_SET_REPARSE_POINT, &rp, 8 + rp.len, NULL, 0, &got, NULL);
	CloseHandle(h);
	return ok;
}

/* Makes the hostile tree under dir (a native absolute path). */
static int mktree(const WCHAR *dir)
{
	WCHAR base[40000], p[40000], q[40000];
	swprintf(base, 40000, L"\\\\?\\%ls", dir);
	if (!CreateDirectoryW(base, NULL)) {
		said("the tree's folder", FALSE);
		return 1;
	}
#define AT(buf, name) swprintf(buf, 40000, L"%ls\\%ls", base, name)
	AT(p, L"plain.txt");
	make_file(p, "plain file", 1000);
	AT(p, L"smile-\xd83d\xde00.txt");
	make_file(p, "U+1F600 name", 10);
	AT(p, L"lone-high-\xd800");
	make_file(p, "lone high surrogate name", 11);
	AT(p, L"lone-low-\xdc00");
	make_file(p, "lone low surrogate name", 12);
	AT(p, L"\xdc00\xd800-reversed");
	make_file(p, "low then high surrogate name", 13);
	AT(p, L"with space");
	make_file(p, "name with a space", 14);
	AT(p, L" leading space");
	make_file(p, "leading space", 15);
	AT(p, L"trailing space ");
	make_file(p, "trailing space (\\\\?\\ only)", 16);
	AT(p, L"trailing dot.");
	make_file(p, "trailing dot (\\\\?\\ only)", 17);
	AT(p, L"a.b.c");
	make_file(p, "dots", 18);
	AT(p, L"new\nline");
	make_file(p, "newline in a name", 19);
	AT(p, L"readonly.txt");
	make_file(p, NULL, 20);
	said("read-only file", SetFileAttributesW(p, FILE_ATTRIBUTE_READONLY));
	AT(p, L"hidden.txt");
	make_file(p, NULL, 21);
	said("hidden file", SetFileAttributesW(p, FILE_ATTRIBUTE_HIDDEN));
	AT(p, L"sub");
	said("folder", CreateDirectoryW(p, NULL));
	AT(p, L"sub\\inner.txt");
	make_file(p, "file in a folder", 22);
	AT(q, L"hardlink.txt");
	said("hard link", CreateHardLinkW(q, p, NULL));
	/* Times: 1900-01-01 + 123.4567 ms, 1601-01-01 + 1 tick; 2300-01-01, 2400-01-01 + ticks. */
	AT(p, L"old.txt");
	make_file(p, NULL, 1);
	set_times(p, "times before 1970", 94354848001234567LL, 1LL, 94354848009999999LL);
	AT(p, L"future.txt");
	make_file(p, NULL, 1);
	set_times(p, "times after 2262", 220582656000000001LL, 252139392000000002LL,
		  252139392000000003LL);
	AT(p, L"oldfolder");
	CreateDirectoryW(p, NULL);
	set_times(p, "folder times before 1970", 94354848000000000LL, 94354848000000000LL,
		  94354848000000000LL);
	/* Links: a file symlink (relative), a folder symlink, a junction. */
	AT(p, L"link-to-plain");
	said("file symlink (unprivileged flag)",
	     CreateSymbolicLinkW(p, L"plain.txt", SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE));
	AT(p, L"dirlink-to-sub");
	said("folder symlink", CreateSymbolicLinkW(p, L"sub", SYMBOLIC_LINK_FLAG_DIRECTORY |
					       SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE));
	AT(p, L"junction-to-sub");
	AT(q, L"sub");
	said("junction (FSCTL_SET_REPARSE_POINT)", make_junction(p, q + 4));
	/* A stream (NTFS only). */
	AT(p, L"plain.txt:stream1");
	make_file(p, "alternate data stream", 5);
	/* Long paths: folders of 100 units down to > 260 and > 1,000 units. */
	AT(p, L"deep");
	CreateDirectoryW(p, NULL);
	size_t n = wcslen(p);
	BOOL ok = TRUE;
	int level = 0;
	while (ok && n < 1200) {
		swprintf(p + n, 40000 - n, L"\\%03d-%ls", level++,
			 L"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
			 L"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrs");
		n = wcslen(p);
		ok = CreateDirectoryW(p, NULL);
		if (n > 260 && n < 370) {
			swprintf(q, 40000, L"%ls\\over-260.txt", p);
			make_file(q, "file at a path over 260 units", 260);
		}
	}
	swprintf(q, 40000, L"%ls\\over-1000.txt", p);
	said("folders past 1,000 units", ok);
	make_file(q, "file at a path over 1,000 units", 1000);
	/* A folder of 3,000 files: several listing batches. */
	AT(p, L"many");
	CreateDirectoryW(p, NULL);
	for (int i = 0; i < 3000 && ok; i++) {
		swprintf(q, 40000, L"%ls\\file-%04d-with-a-longer-name-to-fill-the-buffer", p, i);
		ok = make_file(q, NULL, (DWORD)(i % 7));
	}
	said("3,000 files in one folder", ok);
	return 0;
}

int wmain(int argc, WCHAR **argv)
{
	if (argc == 3 && wcscmp(argv[1], L"mktree") == 0)
		return mktree(argv[2]);
	if (argc == 3 && wcscmp(argv[1], L"list") == 0) {
		static WCHAR w[40000];
		DWORD n = GetFullPathNameW(argv[2], 40000 - 4, w + 4, NULL);
		if (n == 0)
			return 2;
		memcpy(w, L"\\\\?\\", 8);
		list_tree(w);
		return 0;
	}
	fprintf(stderr, "usage: wincheck list ROOT | wincheck mktree DIR\n");
	return 2;
}
