/*
 * win.c - the POSIX calls of win.h, on Win32 (the Windows build only).
 *
 * Each keeps the meaning fidx's shared code relies on under Linux and says
 * where Windows cannot give it.  Paths go through fidx_win_wide() (win.h:
 * stored or native UTF-8 to a "\\?\" wide path, winpath.h's conversions), and
 * a descriptor is the C runtime's, over a handle opened by CreateFileW with
 * every sharing mode, so that fidx never keeps another program from a file
 * it reads.
 */
#include <windows.h>
#include <bcrypt.h>
#include <shellapi.h>
#include <ctype.h>
#include <fnmatch.h>
#include <sys/mman.h>
#include <sys/random.h>

#include "fdutil.h"
#include "winpath.h"

#undef open
#undef stat
#undef lstat
#undef fstat
#undef unlink
#undef rename
#undef access
#undef mkdir
#undef fopen
#undef fclose
#undef getcwd

int fidx_win_errno(unsigned long e)
{
	switch (e) {
	case ERROR_FILE_NOT_FOUND: case ERROR_PATH_NOT_FOUND: case ERROR_INVALID_DRIVE:
	case ERROR_BAD_NETPATH: case ERROR_BAD_NET_NAME: case ERROR_INVALID_NAME:
	case ERROR_DIRECTORY:
		return ENOENT;
	case ERROR_ACCESS_DENIED: case ERROR_SHARING_VIOLATION: case ERROR_LOCK_VIOLATION:
	case ERROR_PRIVILEGE_NOT_HELD: case ERROR_CANT_ACCESS_FILE:
		return EACCES;
	case ERROR_FILE_EXISTS: case ERROR_ALREADY_EXISTS:
		return EEXIST;
	case ERROR_NOT_ENOUGH_MEMORY: case ERROR_OUTOFMEMORY:
		return ENOMEM;
	case ERROR_DISK_FULL: case ERROR_HANDLE_DISK_FULL:
		return ENOSPC;
	case ERROR_WRITE_PROTECT:
		return EROFS;
	case ERROR_DIR_NOT_EMPTY:
		return ENOTEMPTY;
	case ERROR_NOT_SAME_DEVICE:
		return EXDEV;
	case ERROR_TOO_MANY_OPEN_FILES:
		return EMFILE;
	case ERROR_NOT_SUPPORTED: case ERROR_INVALID_FUNCTION: case ERROR_CALL_NOT_IMPLEMENTED:
		return ENOTSUP;
	case ERROR_FILENAME_EXCED_RANGE:
		return ENAMETOOLONG;
	case ERROR_CANT_RESOLVE_FILENAME:
		return ELOOP;
	case ERROR_NO_UNICODE_TRANSLATION:
		return EILSEQ;
	case ERROR_BROKEN_PIPE: case ERROR_NO_DATA:
		return EPIPE;
	default:
		return EIO;
	}
}

/* Sets errno from GetLastError() and returns -1. */
static int fail_win(void)
{
	errno = fidx_win_errno(GetLastError());
	return -1;
}

/* Whether path is in the stored form of a Windows scan ("/C:...", "//server/share..."). */
static bool is_stored(const char *path)
{
	return path[0] == '/' && ((path[1] >= 'A' && path[1] <= 'Z' && path[2] == ':' &&
				   (path[3] == '/' || path[3] == '\0')) || path[1] == '/');
}

wchar_t *fidx_win_wide(const char *path)
{
	if (is_stored(path))
		return (wchar_t *)fidx_win_native_path(path, strlen(path), NULL);
	/* A path as typed: absolute through GetFullPathNameW, then as a \\?\ path. */
	uint16_t *typed = fidx_utf16_of_wtf8(path, strlen(path), NULL);
	if (!typed)
		return NULL;
	DWORD n = GetFullPathNameW((wchar_t *)typed, 0, NULL, NULL);
	wchar_t *full = n ? malloc((size_t)n * sizeof(wchar_t)) : NULL;
	if (!full || !GetFullPathNameW((wchar_t *)typed, n, full, NULL)) {
		free(typed);
		free(full);
		errno = n ? ENOMEM : fidx_win_errno(GetLastError());
		return NULL;
	}
	free(typed);
	/* A device (\\.\NUL, CON) or a path already \\?\ is used as it is. */
	char *stored = fidx_win_stored_path(full, wcslen(full), NULL);
	if (!stored)
		return full;
	wchar_t *w = (wchar_t *)fidx_win_native_path(stored, strlen(stored), NULL);
	free(stored);
	free(full);
	return w;
}

/* The stored form of the native path w, else its WTF-8 as it is; NULL with errno set. */
static char *utf8_of_native(const wchar_t *w)
{
	char *s = fidx_win_stored_path(w, wcslen(w), NULL);
	if (!s && errno == EINVAL)
		s = fidx_wtf8_of_utf16(w, wcslen(w), NULL);
	return s;
}

char *fidx_win_stored(const char *path)
{
	if (is_stored(path))
		return strdup(path);
	wchar_t *w = fidx_win_wide(path);
	if (!w)
		return NULL;
	char *s = utf8_of_native(w);
	free(w);
	return s;
}

/* The CreateFileW arguments for open()'s flags. */
static void create_args(int flags, DWORD *access, DWORD *disposition)
{
	switch (flags & O_ACCMODE) {
	case O_WRONLY: *access = GENERIC_WRITE; break;
	case O_RDWR: *access = GENERIC_READ | GENERIC_WRITE; break;
	default: *access = GENERIC_READ; break;
	}
	if (flags & O_APPEND)
		*access = (*access & ~GENERIC_WRITE) | FILE_APPEND_DATA;
	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		*disposition = CREATE_NEW;
	else if ((flags & (O_CREAT | O_TRUNC)) == (O_CREAT | O_TRUNC))
		*disposition = CREATE_ALWAYS;
	else if (flags & O_CREAT)
		*disposition = OPEN_ALWAYS;
	else if (flags & O_TRUNC)
		*disposition = TRUNCATE_EXISTING;
	else
		*disposition = OPEN_EXISTING;
}

/* A CRT descriptor over h (closed on failure); -1 with errno set. */
static int descriptor_of(HANDLE h, int flags)
{
	int fd = _open_osfhandle((intptr_t)h, (flags & (O_ACCMODE | O_APPEND)) | O_BINARY);
	if (fd < 0) {
		CloseHandle(h);
		errno = EMFILE;
	}
	return fd;
}

/* An unnamed file in folder dir (O_TMPFILE): a unique name, deleted on close. */
static int open_unnamed(const char *dir, int flags)
{
	unsigned char r[8];
	char *path = NULL;
	if (getrandom(r, sizeof(r), 0) < 0 ||
	    asprintf(&path, "%s/.fidx-tmp-%02x%02x%02x%02x%02x%02x%02x%02x", dir, r[0], r[1],
		     r[2], r[3], r[4], r[5], r[6], r[7]) < 0)
		return -1;
	wchar_t *w = fidx_win_wide(path);
	free(path);
	if (!w)
		return -1;
	HANDLE h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE,
			       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			       CREATE_NEW, FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return fail_win();
	return descriptor_of(h, (flags & ~O_ACCMODE) | O_RDWR);
}

int fidx_win_open(const char *path, int flags, ...)
{
	if (flags & O_TMPFILE)
		return open_unnamed(path, flags);
	DWORD access, disposition;
	create_args(flags, &access, &disposition);
	wchar_t *w = fidx_win_wide(path);
	if (!w)
		return -1;
	/* Folders open too (FILE_FLAG_BACKUP_SEMANTICS), as open(O_RDONLY) does on Linux. */
	HANDLE h = CreateFileW(w, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
			       NULL, disposition,
			       FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return fail_win();
	return descriptor_of(h, flags);
}

/* A FILETIME as a timespec (winpath.h's exact conversion). */
static struct timespec timespec_of(FILETIME ft)
{
	struct fidx_time t = fidx_win_time((int64_t)(((uint64_t)ft.dwHighDateTime << 32) |
						     ft.dwLowDateTime));
	return (struct timespec){.tv_sec = (time_t)t.sec, .tv_nsec = t.nsec};
}

/* st from what the handle h says. */
static int stat_handle(HANDLE h, struct fidx_win_stat *st)
{
	BY_HANDLE_FILE_INFORMATION fi;
	FILE_STANDARD_INFO std;
	if (!GetFileInformationByHandle(h, &fi))
		return fail_win();
	memset(st, 0, sizeof(*st));
	bool dir = fi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY;
	st->st_mode = fidx_win_mode(fi.dwFileAttributes, false);
	st->st_size = (int64_t)(((uint64_t)fi.nFileSizeHigh << 32) | fi.nFileSizeLow);
	if (!dir && GetFileInformationByHandleEx(h, FileStandardInfo, &std, sizeof(std)))
		st->st_blocks = (std.AllocationSize.QuadPart + 511) / 512;
	st->st_nlink = fi.nNumberOfLinks;
	st->st_dev = fi.dwVolumeSerialNumber;
	st->st_ino = ((uint64_t)fi.nFileIndexHigh << 32) | fi.nFileIndexLow;
	st->st_mtim = timespec_of(fi.ftLastWriteTime);
	st->st_atim = timespec_of(fi.ftLastAccessTime);
	st->st_ctim = timespec_of(fi.ftCreationTime);
	return 0;
}

int fidx_win_fstat(int fd, struct fidx_win_stat *st)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	if (h == INVALID_HANDLE_VALUE) {
		errno = EBADF;
		return -1;
	}
	DWORD type = GetFileType(h);
	if (type == FILE_TYPE_PIPE || type == FILE_TYPE_CHAR) {
		memset(st, 0, sizeof(*st));
		st->st_mode = type == FILE_TYPE_PIPE ? S_IFIFO : S_IFCHR;
		return 0;
	}
	return stat_handle(h, st);
}

int fidx_win_stat(const char *path, struct fidx_win_stat *st)
{
	wchar_t *w = fidx_win_wide(path);
	if (!w)
		return -1;
	HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES,
			       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			       OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return fail_win();
	int rc = stat_handle(h, st);
	CloseHandle(h);
	return rc;
}

int fidx_win_unlink(const char *path)
{
	wchar_t *w = fidx_win_wide(path);
	if (!w)
		return -1;
	BOOL ok = DeleteFileW(w);
	free(w);
	return ok ? 0 : fail_win();
}

int fidx_win_rename(const char *from, const char *to)
{
	wchar_t *wf = fidx_win_wide(from), *wt = wf ? fidx_win_wide(to) : NULL;
	BOOL ok = wt && MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
	int rc = ok ? 0 : wt ? fail_win() : -1;
	free(wf);
	free(wt);
	return rc;
}

int fidx_win_access(const char *path, int mode)
{
	wchar_t *w = fidx_win_wide(path);
	if (!w)
		return -1;
	DWORD a = GetFileAttributesW(w);
	free(w);
	if (a == INVALID_FILE_ATTRIBUTES)
		return fail_win();
	if ((mode & W_OK) && (a & FILE_ATTRIBUTE_READONLY) && !(a & FILE_ATTRIBUTE_DIRECTORY)) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

int fidx_win_mkdir(const char *path, int mode)
{
	(void)mode;
	wchar_t *w = fidx_win_wide(path);
	if (!w)
		return -1;
	BOOL ok = CreateDirectoryW(w, NULL);
	free(w);
	return ok ? 0 : fail_win();
}

/* The memory streams open (open_memstream), found again by fclose(). */
struct memstream {
	FILE *f;
	char **buf;
	size_t *size;
	struct memstream *next;
};
static struct memstream *memstreams;
static SRWLOCK memstreams_lock = SRWLOCK_INIT;

FILE *fidx_win_fopen(const char *path, const char *mode)
{
	int flags = strchr(mode, '+') ? O_RDWR : mode[0] == 'r' ? O_RDONLY : O_WRONLY;
	if (mode[0] == 'w')
		flags |= O_CREAT | O_TRUNC;
	else if (mode[0] == 'a')
		flags |= O_CREAT | O_APPEND;
	int fd = fidx_win_open(path, flags);
	if (fd < 0)
		return NULL;
	char m[4] = {mode[0], strchr(mode, '+') ? '+' : 'b', strchr(mode, '+') ? 'b' : '\0', '\0'};
	FILE *f = _fdopen(fd, m);
	if (!f)
		_close(fd);
	return f;
}

FILE *open_memstream(char **buf, size_t *size)
{
	struct memstream *m = malloc(sizeof(*m));
	if (!m)
		return NULL;
	if (!(m->f = tmpfile())) {
		free(m);
		return NULL;
	}
	m->buf = buf;
	m->size = size;
	*buf = NULL;
	*size = 0;
	AcquireSRWLockExclusive(&memstreams_lock);
	m->next = memstreams;
	memstreams = m;
	ReleaseSRWLockExclusive(&memstreams_lock);
	return m->f;
}

/* Copies what memory stream m holds into its buffer.  Returns 0, or EOF. */
static int memstream_take(struct memstream *m)
{
	if (fflush(m->f) != 0)
		return EOF;
	long n = ftell(m->f);
	char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (!b)
		return EOF;
	rewind(m->f);
	if (fread(b, 1, (size_t)n, m->f) != (size_t)n) {
		free(b);
		return EOF;
	}
	b[n] = '\0';
	*m->buf = b;
	*m->size = (size_t)n;
	return 0;
}

int fidx_win_fclose(FILE *f)
{
	AcquireSRWLockExclusive(&memstreams_lock);
	struct memstream **at = &memstreams;
	while (*at && (*at)->f != f)
		at = &(*at)->next;
	struct memstream *m = *at;
	if (m)
		*at = m->next;
	ReleaseSRWLockExclusive(&memstreams_lock);
	int rc = m ? memstream_take(m) : 0;
	if (fclose(f) != 0)
		rc = EOF;
	free(m);
	return rc;
}

char *fidx_win_getcwd(char *buf, size_t size)
{
	DWORD n = GetCurrentDirectoryW(0, NULL);
	wchar_t *w = n ? malloc(n * sizeof(wchar_t)) : NULL;
	if (!w || !GetCurrentDirectoryW(n, w)) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	char *s = utf8_of_native(w);
	free(w);
	if (!s)
		return NULL;
	if (!buf)
		return s;
	if (strlen(s) >= size) {
		free(s);
		errno = ERANGE;
		return NULL;
	}
	strcpy(buf, s);
	free(s);
	return buf;
}

char *realpath(const char *path, char *resolved)
{
	wchar_t *w = fidx_win_wide(path);
	if (!w)
		return NULL;
	DWORD a = GetFileAttributesW(w);
	char *s = a == INVALID_FILE_ATTRIBUTES ? (fail_win(), NULL) : utf8_of_native(w);
	free(w);
	if (!s || !resolved)
		return s;
	snprintf(resolved, PATH_MAX, "%s", s);
	free(s);
	return resolved;
}

/* The OVERLAPPED of offset off. */
static OVERLAPPED at_offset(off_t off)
{
	OVERLAPPED o = {0};
	o.Offset = (DWORD)((uint64_t)off & 0xffffffffu);
	o.OffsetHigh = (DWORD)((uint64_t)off >> 32);
	return o;
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	OVERLAPPED o = at_offset(off);
	DWORD got = 0;
	if (n > 1u << 30)
		n = 1u << 30;
	if (!ReadFile(h, buf, (DWORD)n, &got, &o))
		return GetLastError() == ERROR_HANDLE_EOF ? 0 : fail_win();
	return got;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	OVERLAPPED o = at_offset(off);
	DWORD put = 0;
	if (n > 1u << 30)
		n = 1u << 30;
	return WriteFile(h, buf, (DWORD)n, &put, &o) ? (ssize_t)put : fail_win();
}

int fsync(int fd)
{
	return FlushFileBuffers((HANDLE)_get_osfhandle(fd)) ? 0 : fail_win();
}

ssize_t getrandom(void *buf, size_t n, unsigned flags)
{
	(void)flags;
	if (n > ULONG_MAX)
		n = ULONG_MAX;
	if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, buf, (ULONG)n, BCRYPT_USE_SYSTEM_PREFERRED_RNG))) {
		errno = EIO;
		return -1;
	}
	return (ssize_t)n;
}

void *mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off)
{
	(void)addr, (void)prot, (void)off;
	if (fd != -1 || !(flags & MAP_ANONYMOUS)) {
		errno = ENOTSUP;
		return MAP_FAILED;
	}
	void *p = VirtualAlloc(NULL, n, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
	if (!p) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return p;
}

int munmap(void *p, size_t n)
{
	(void)n;
	return VirtualFree(p, 0, MEM_RELEASE) ? 0 : fail_win();
}

ssize_t getdelim(char **line, size_t *cap, int delim, FILE *f)
{
	size_t n = 0;
	int c;
	if (!*line || *cap == 0) {
		char *b = realloc(*line, 128);
		if (!b)
			return -1;
		*line = b;
		*cap = 128;
	}
	while ((c = getc(f)) != EOF) {
		if (n + 2 > *cap) {
			char *b = realloc(*line, *cap * 2);
			if (!b) {
				errno = ENOMEM;
				return -1;
			}
			*line = b;
			*cap *= 2;
		}
		(*line)[n++] = (char)c;
		if (c == delim)
			break;
	}
	(*line)[n] = '\0';
	return n ? (ssize_t)n : -1;
}

ssize_t getline(char **line, size_t *cap, FILE *f)
{
	return getdelim(line, cap, '\n', f);
}

char *strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *d = malloc(len + 1);
	if (d) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

void *memmem(const void *hay, size_t hn, const void *needle, size_t nn)
{
	if (nn == 0)
		return (void *)hay;
	const unsigned char *h = hay, *end = h + hn;
	while (hn >= nn && (h = memchr(h, *(const unsigned char *)needle, hn - nn + 1))) {
		if (memcmp(h, needle, nn) == 0)
			return (void *)h;
		h++;
		hn = (size_t)(end - h);
	}
	return NULL;
}

void *reallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n * size);
}

int link(const char *from, const char *to)
{
	wchar_t *wf = fidx_win_wide(from), *wt = wf ? fidx_win_wide(to) : NULL;
	BOOL ok = wt && CreateHardLinkW(wt, wf, NULL);
	int rc = ok ? 0 : wt ? fail_win() : -1;
	free(wf);
	free(wt);
	return rc;
}

int fchmod(int fd, mode_t mode)
{
	FILE_BASIC_INFO bi;
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	if (!GetFileInformationByHandleEx(h, FileBasicInfo, &bi, sizeof(bi)))
		return fail_win();
	if (mode & 0200)
		bi.FileAttributes &= ~(DWORD)FILE_ATTRIBUTE_READONLY;
	else
		bi.FileAttributes |= FILE_ATTRIBUTE_READONLY;
	return SetFileInformationByHandle(h, FileBasicInfo, &bi, sizeof(bi)) ? 0 : fail_win();
}

int fchown(int fd, uid_t_compat uid, uid_t_compat gid)
{
	(void)fd, (void)uid, (void)gid;
	return 0;
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (old)
		*old = (struct sigaction){.sa_handler = SIG_DFL};
	if (act && (sig == SIGINT || sig == SIGTERM || sig == SIGBREAK))
		signal(sig, act->sa_handler);
	if (act && sig == SIGINT)
		signal(SIGBREAK, act->sa_handler);
	return 0;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	(void)how, (void)set;
	if (old)
		*old = 0;
	return 0;
}

int fidx_win_console_columns(int fd)
{
	CONSOLE_SCREEN_BUFFER_INFO info;
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	if (!GetConsoleScreenBufferInfo(h, &info))
		return 0;
	return info.srWindow.Right - info.srWindow.Left + 1;
}

bool fidx_win_iswprint(unsigned c)
{
	if (c >= 0x10000)
		return (c & 0xfffe) != 0xfffe && !(c >= 0xe0000 && c < 0xe1000);
	WORD type = 0;
	wchar_t w = (wchar_t)c;
	if (!GetStringTypeW(CT_CTYPE1, &w, 1, &type))
		return false;
	return (type & (C1_DEFINED)) && !(type & C1_CNTRL);
}

void *memrchr(const void *s, int c, size_t n)
{
	const unsigned char *p = (const unsigned char *)s + n;
	while (p > (const unsigned char *)s)
		if (*--p == (unsigned char)c)
			return (void *)p;
	return NULL;
}

int wcwidth(unsigned c)
{
	static const unsigned wide[][2] = {
		{0x1100, 0x115f}, {0x231a, 0x231b}, {0x2329, 0x232a}, {0x23e9, 0x23ec},
		{0x25fd, 0x25fe}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x26aa, 0x26ab},
		{0x2e80, 0x303e}, {0x3041, 0x33ff}, {0x3400, 0x4dbf}, {0x4e00, 0x9fff},
		{0xa000, 0xa4cf}, {0xa960, 0xa97f}, {0xac00, 0xd7a3}, {0xf900, 0xfaff},
		{0xfe10, 0xfe19}, {0xfe30, 0xfe6f}, {0xff00, 0xff60}, {0xffe0, 0xffe6},
		{0x16fe0, 0x18d08}, {0x1b000, 0x1b2fb}, {0x1f004, 0x1f004}, {0x1f0cf, 0x1f0cf},
		{0x1f18e, 0x1f18e}, {0x1f191, 0x1f19a}, {0x1f200, 0x1f265}, {0x1f300, 0x1f64f},
		{0x1f680, 0x1f6ff}, {0x1f7e0, 0x1f7eb}, {0x1f90c, 0x1f9ff}, {0x1fa70, 0x1faff},
		{0x20000, 0x2fffd}, {0x30000, 0x3fffd},
	};
	if (c == 0)
		return 0;
	if (c < 0x20 || (c >= 0x7f && c < 0xa0))
		return -1;
	for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
		if (c >= wide[i][0] && c <= wide[i][1])
			return 2;
	if (c < 0x10000) {
		WORD type = 0;
		wchar_t w = (wchar_t)c;
		if (GetStringTypeW(CT_CTYPE3, &w, 1, &type) && (type & C3_NONSPACING))
			return 0;
	}
	return 1;
}

char *strchrnul(const char *s, int c)
{
	while (*s && *s != (char)c)
		s++;
	return (char *)s;
}

/* qsort_r's comparison and its argument, for the trampoline. */
struct sort_with {
	int (*cmp)(const void *, const void *, void *);
	void *arg;
};

/* qsort_s's order of arguments to glibc's. */
static int sort_trampoline(void *ctx, const void *a, const void *b)
{
	const struct sort_with *w = ctx;
	return w->cmp(a, b, w->arg);
}

void qsort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
	     void *arg)
{
	struct sort_with w = {cmp, arg};
	qsort_s(base, n, size, sort_trampoline, &w);
}

int mkostemp(char *template, int flags)
{
	size_t len = strlen(template);
	if (len < 6 || strcmp(template + len - 6, "XXXXXX") != 0) {
		errno = EINVAL;
		return -1;
	}
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned char r[6];
		if (getrandom(r, sizeof(r), 0) < 0)
			return -1;
		for (int i = 0; i < 6; i++)
			template[len - 6 + i] = letters[r[i] % (sizeof(letters) - 1)];
		int fd = fidx_win_open(template, O_RDWR | O_CREAT | O_EXCL | flags, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

int gethostname(char *name, size_t size)
{
	wchar_t w[256];
	DWORD n = sizeof(w) / sizeof(w[0]);
	if (!GetComputerNameExW(ComputerNameDnsHostname, w, &n))
		return fail_win();
	if (!WideCharToMultiByte(CP_UTF8, 0, w, -1, name, (int)(size > INT_MAX ? INT_MAX : size),
				 NULL, NULL))
		return fail_win();
	return 0;
}

int posix_fallocate(int fd, off_t off, off_t len)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	LARGE_INTEGER size, want = {.QuadPart = off + len};
	if (!GetFileSizeEx(h, &size))
		return fidx_win_errno(GetLastError());
	if (size.QuadPart >= want.QuadPart)
		return 0;
	FILE_ALLOCATION_INFO alloc = {.AllocationSize = want};
	FILE_END_OF_FILE_INFO end = {.EndOfFile = want};
	if (!SetFileInformationByHandle(h, FileAllocationInfo, &alloc, sizeof(alloc)) ||
	    !SetFileInformationByHandle(h, FileEndOfFileInfo, &end, sizeof(end)))
		return fidx_win_errno(GetLastError());
	return 0;
}

void fidx_win_start(int *argc, char ***argv)
{
	/* UTF-8 on the console both ways; no \n turned into \r\n in what fidx writes. */
	SetConsoleOutputCP(CP_UTF8);
	SetConsoleCP(CP_UTF8);
	_setmode(_fileno(stdin), _O_BINARY);
	_setmode(_fileno(stdout), _O_BINARY);
	_setmode(_fileno(stderr), _O_BINARY);
	HANDLE err = GetStdHandle(STD_ERROR_HANDLE);
	DWORD mode;
	if (GetConsoleMode(err, &mode))
		SetConsoleMode(err, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING);

	/* The arguments as typed (UTF-16, unpaired surrogates too), as WTF-8. */
	int n = 0;
	wchar_t **wide = CommandLineToArgvW(GetCommandLineW(), &n);
	char **args = wide ? calloc((size_t)n + 1, sizeof(char *)) : NULL;
	for (int i = 0; args && i < n; i++)
		if (!(args[i] = fidx_wtf8_of_utf16(wide[i], wcslen(wide[i]), NULL)))
			args = NULL; /* out of memory at start: keep the CRT's */
	if (wide)
		LocalFree(wide);
	if (args) {
		*argc = n;
		*argv = args;
	}
}

int fnmatch(const char *pattern, const char *string, int flags)
{
	if (!(flags & FNM_CASEFOLD))
		return fidx_win_glob_match(pattern, string, flags & FNM_PATHNAME) ? 0 : FNM_NOMATCH;
	/* Case folded as glibc's C locale folds: ASCII letters, on both sides. */
	char *p = strdup(pattern), *s = strdup(string);
	int rc = FNM_NOMATCH;
	if (p && s) {
		for (char *c = p; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		for (char *c = s; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		rc = fidx_win_glob_match(p, s, flags & FNM_PATHNAME) ? 0 : FNM_NOMATCH;
	}
	free(p);
	free(s);
	return rc;
}

/* fdutil.h (src/lib, Linux's walker) on Windows: what the shared code calls of it. */
ssize_t fidx_read_full(int fd, void *buf, size_t n, off_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = off < 0 ? read(fd, (char *)buf + got, (unsigned)(n - got > 1u << 30 ?
									    1u << 30 : n - got))
			    : pread(fd, (char *)buf + got, n - got, off + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

unsigned long fidx_raise_nofile(void)
{
	/* The C runtime's descriptors: 512 unless raised, 8192 at most. */
	int n = _setmaxstdio(8192);
	return n > 0 ? (unsigned long)n : 512;
}
