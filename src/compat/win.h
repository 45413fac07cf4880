/*
 * win.h - the POSIX that fidx's shared code uses, on Windows (MinGW-w64).
 *
 * The Windows build (mk/windows.mk) puts this header before every file it
 * compiles (-include), as git's compat/mingw.h is put before git's, so that
 * the code shared with Linux keeps calling open(), fstat(), pread(),
 * getrandom()...; src/compat/include/ holds the few POSIX headers MinGW lacks
 * (fnmatch.h, sys/random.h, sys/sysmacros.h, langinfo.h...), and win.c the
 * functions behind them.  What Windows has no counterpart for is said where it
 * is declared.  Code that differs in substance is not here but in a file of
 * its own (source_win.c, hashio_win.c, sysinfo_win.c, hash_cng.c).
 *
 * Paths.  Every path that reaches open(), stat() and the others is UTF-8 as
 * fidx stores it: a path of a Windows scan in its stored form, "/C:/a/b"
 * (docs/WINDOWS.md), or a path as the user typed it ("C:\a\b", "fidx.db",
 * converted from the console's UTF-16 at start).  fidx_win_wide() turns either
 * into the "\\?\" form of Windows' wide calls, so no path is too long.
 *
 * Modes.  st_mode keeps Linux's type bits (S_IFLNK 0120000, S_IFSOCK and
 * S_IFBLK as Linux has them), so that a mode recorded on one system reads the
 * same on the other; MinGW's S_IFBLK (0x3000) is replaced.
 */
#ifndef FIDX_COMPAT_WIN_H
#define FIDX_COMPAT_WIN_H

#ifndef _WIN32
#error "src/compat/win.h is for the Windows build (mk/windows.mk)"
#endif

#define WIN32_LEAN_AND_MEAN
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

/* open() flags Windows has no counterpart for (a handle is never inherited
 * unless asked; nothing is a terminal to be taken; no symlink is followed by
 * fidx's opens of stored paths: the walk recorded reparse points, not targets). */
#define O_CLOEXEC _O_NOINHERIT
#define O_NOCTTY 0
#define O_NONBLOCK 0
#define O_NOFOLLOW 0
#define O_NOATIME 0
#define O_DIRECTORY 0
#define O_TMPFILE 0

/* Linux's file type bits (see above). */
#undef S_IFBLK
#undef S_ISBLK
#define S_IFBLK 0060000
#define S_IFLNK 0120000
#define S_IFSOCK 0140000
#define S_ISBLK(m) (((m) & S_IFMT) == S_IFBLK)
#define S_ISLNK(m) (((m) & S_IFMT) == S_IFLNK)
#define S_ISSOCK(m) (((m) & S_IFMT) == S_IFSOCK)

/* errno values of Linux that MinGW's errno.h lacks, beyond its own. */
#ifndef ELOOP
#define ELOOP 114
#endif
#ifndef EOVERFLOW
#define EOVERFLOW 132
#endif
#ifndef ENOTSUP
#define ENOTSUP 129
#endif
#define EMEDIUMTYPE 200
#define ESTALE 201
#define EREMOTEIO 202

/* Signals Windows does not deliver: handlers for them are never called. */
#define SIGHUP 1
#define SIGPIPE 13
#define SIGUSR1 10
#define SA_RESTART 0
typedef unsigned long sigset_t;
struct sigaction {
	void (*sa_handler)(int);
	sigset_t sa_mask;
	int sa_flags;
};
#define SIG_BLOCK 0
#define SIG_UNBLOCK 1
#define SIG_SETMASK 2
/* Installs act's handler with signal() for SIGINT, SIGTERM, SIGBREAK; the
 * others are accepted and never delivered.  Returns 0. */
int sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* No signal is blocked on Windows; *old is set empty.  Returns 0. */
int sigprocmask(int how, const sigset_t *set, sigset_t *old);
static inline int sigemptyset(sigset_t *s) { *s = 0; return 0; }
static inline int sigfillset(sigset_t *s) { *s = ~0ul; return 0; }
static inline int sigaddset(sigset_t *s, int n) { *s |= 1ul << n; return 0; }

/* Owners: a Windows file has a SID, not a uid; fidx records 0. */
typedef int uid_t_compat;
#define getuid() 0
#define geteuid() 0
#define getgid() 0
#define getegid() 0

/*
 * Sets the process up as fidx expects on Windows: the console in UTF-8,
 * stdin/stdout/stderr binary, escape sequences on, and *argc, *argv the
 * command line's arguments as WTF-8 (winpath.h), so that a name with any
 * UTF-16 in it reaches fidx exactly.  main() calls it first.
 */
void fidx_win_start(int *argc, char ***argv);

/*
 * path (UTF-8: a stored path "/C:/a", "//server/share/a", or a native one,
 * relative or absolute) as a "\\?\" wide path, malloc'ed; NULL with errno set
 * (ENOMEM, EILSEQ: not UTF-8 as fidx writes it).
 */
wchar_t *fidx_win_wide(const char *path);

/*
 * path (UTF-8, as typed or stored) as a stored path: absolute
 * (GetFullPathNameW: "." and ".." resolved as Windows resolves them, no link
 * followed), malloc'ed; NULL with errno set.  A path that has no stored form
 * (a device, \\.\NUL) is given as its full path in WTF-8.
 */
char *fidx_win_stored(const char *path);

/* errno for the Win32 error e (GetLastError()). */
int fidx_win_errno(unsigned long e);

/* The POSIX calls on UTF-8 paths (see above), with Linux's meaning. */
int fidx_win_open(const char *path, int flags, ...);
/*
 * struct stat as Linux has it, where the shared code compares files by
 * device and inode: MinGW's st_ino is 16 bits.  st_dev is the volume serial,
 * st_ino the 64-bit file index (what the Windows source records as dev and
 * ino), the times exact to the 100 ns.  `struct stat` and stat() name these
 * in every file of the build (the macros below).
 */
struct fidx_win_stat {
	uint64_t st_dev;
	uint64_t st_ino;
	unsigned st_mode;
	uint64_t st_nlink;
	unsigned st_uid, st_gid;
	uint64_t st_rdev;
	int64_t st_size;
	int64_t st_blocks;
	struct timespec st_atim, st_mtim, st_ctim;
};
#define st_atime st_atim.tv_sec
#define st_mtime st_mtim.tv_sec
#define st_ctime st_ctim.tv_sec
int fidx_win_stat(const char *path, struct fidx_win_stat *st);
int fidx_win_fstat(int fd, struct fidx_win_stat *st);
int fidx_win_unlink(const char *path);
int fidx_win_rename(const char *from, const char *to);
int fidx_win_access(const char *path, int mode);
int fidx_win_mkdir(const char *path, int mode);
FILE *fidx_win_fopen(const char *path, const char *mode);
int fidx_win_fclose(FILE *f);
char *fidx_win_getcwd(char *buf, size_t size);
#define open fidx_win_open
#define stat fidx_win_stat
#define lstat fidx_win_stat
#define fstat fidx_win_fstat
#define unlink fidx_win_unlink
#define rename fidx_win_rename
#define access fidx_win_access
#define mkdir(p, m) fidx_win_mkdir(p, m)
#define fopen fidx_win_fopen
#define fclose fidx_win_fclose
#define getcwd fidx_win_getcwd

/* Reads/writes at an offset, leaving the file position alone (ReadFile with an
 * OVERLAPPED offset on the descriptor's handle). */
ssize_t pread(int fd, void *buf, size_t n, off_t off);
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off);
/* FlushFileBuffers on the descriptor's handle. */
int fsync(int fd);
#define fdatasync fsync
/* The absolute form of path (GetFullPathNameW), as UTF-8; resolved, or NULL
 * with errno set (ENOENT when it does not exist). */
char *realpath(const char *path, char *resolved);
/* A memory stream: fclose() (fidx_win_fclose) leaves the bytes written in
 * *buf (NUL-terminated, malloc'ed) and their count in *size. */
FILE *open_memstream(char **buf, size_t *size);
ssize_t getline(char **line, size_t *cap, FILE *f);
ssize_t getdelim(char **line, size_t *cap, int delim, FILE *f);
char *strndup(const char *s, size_t n);
#define strndupa(s, n) ({ const char *s_ = (s); size_t n_ = strnlen(s_, (n)); \
	char *d_ = __builtin_alloca(n_ + 1); memcpy(d_, s_, n_); d_[n_] = '\0'; d_; })
void *memmem(const void *hay, size_t hn, const void *needle, size_t nn);
void *reallocarray(void *p, size_t n, size_t size);
#define timegm _mkgmtime
/* Hard links (CreateHardLinkW); symlinks are refused (ENOTSUP): fidx makes none. */
int link(const char *from, const char *to);
int fchmod(int fd, mode_t mode);
int fchown(int fd, uid_t_compat uid, uid_t_compat gid);
/* Advice on a file's reading: Windows takes it when the file is opened
 * (FILE_FLAG_SEQUENTIAL_SCAN, hashio_win.c), not after. */
#define POSIX_FADV_NORMAL 0
#define POSIX_FADV_SEQUENTIAL 2
#define POSIX_FADV_WILLNEED 3
#define POSIX_FADV_DONTNEED 4
static inline int posix_fadvise(int fd, off_t off, off_t len, int advice)
{
	(void)fd, (void)off, (void)len, (void)advice;
	return 0;
}

/* A printable character, for output.c's iswprint_l() in C.UTF-8: Windows'
 * character types (GetStringTypeW) for the BMP, and beyond it every
 * character but noncharacters and tags. */
bool fidx_win_iswprint(unsigned c);
typedef int locale_t;
#define LC_CTYPE_MASK 1
#define newlocale(mask, name, base) 1
#define iswprint_l(c, loc) ((void)(loc), fidx_win_iswprint(c))

/* stdio without its lock (the CRT's _nolock calls), as glibc's _unlocked. */
#define fwrite_unlocked fwrite
#define fputs_unlocked fputs
#define putc_unlocked _putc_nolock
#define fputc_unlocked _fputc_nolock
#define getc_unlocked _getc_nolock
#define fflush_unlocked _fflush_nolock
#define flockfile _lock_file
#define funlockfile _unlock_file

char *strchrnul(const char *s, int c);
#define ferror_unlocked ferror
/* glibc's qsort_r (cmp(a, b, arg)), over the CRT's qsort_s. */
void qsort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
	     void *arg);
/* A new file from template ("...XXXXXX", the X's replaced), opened O_RDWR |
 * O_CREAT | O_EXCL | flags.  Returns its descriptor, or -1 with errno set. */
int mkostemp(char *template, int flags);
#define mkstemp(t) mkostemp(t, 0)
/* The computer's DNS host name (GetComputerNameExW), as UTF-8. */
int gethostname(char *name, size_t size);
/* Makes the file at least off + len bytes long, its space allocated. */
int posix_fallocate(int fd, off_t off, off_t len);
/* A descriptor is a terminal when it is the console. */
#define STDIN_FILENO 0
#define STDOUT_FILENO 1
#define STDERR_FILENO 2

/* Memory freed with free(): malloc's 16-byte alignment, all that Windows'
 * reads need (fidx asks for more only for Linux's O_DIRECT). */
#define aligned_alloc(align, size) ((void)(align), malloc(size))

void *memrchr(const void *s, int c, size_t n);
/* Columns the character c takes in a terminal: 0 for combining marks, 2 for
 * East Asian wide and emoji, -1 for controls, else 1. */
int wcwidth(unsigned c);

/* The terminal's size (the console's window), for progress lines. */
int fidx_win_console_columns(int fd);

#endif /* FIDX_COMPAT_WIN_H */
