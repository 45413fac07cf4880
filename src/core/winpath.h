/*
 * winpath.h - Windows names, paths, times and modes as fidx stores them:
 * the portable half of the Windows source (source_win.c), pure C that
 * builds and is unit-tested on Linux too (tests/core/test_winpath.c).
 *
 * Names: WTF-8.  A Windows name is a sequence of 16-bit code units that
 * need not be valid UTF-16 (NTFS takes an unpaired surrogate in a name).
 * fidx stores it as WTF-8, generalised UTF-8: a surrogate pair becomes the
 * one 4-byte sequence of its code point, as in UTF-8, and an unpaired
 * surrogate (U+D800..U+DFFF alone) its own 3-byte sequence (ED A0..BF xx).
 * Every sequence of code units thus has exactly one WTF-8 form, and the
 * reverse accepts only such forms: a high surrogate's 3 bytes directly
 * followed by a low surrogate's 3 bytes (what CESU-8 would write for a
 * pair) is refused, as are overlong forms, stray or missing continuation
 * bytes and anything above U+10FFFF.  The mapping is a bijection between
 * code-unit sequences and the byte strings the reverse accepts.
 *
 * Paths: the stored form.  A native path is absolute, on a drive or a share;
 * its stored form starts with '/', so a Windows path never looks like a
 * relative one, and uses '/' between names (a Windows name never holds '/'
 * or '\\'):
 *
 *     native                              stored
 *     C:\  (or \\?\C:\)                   /C:            the drive's root
 *     C:\Users\x  (or \\?\C:\Users\x)     /C:/Users/x
 *     \\server\share (\\?\UNC\server\share)  //server/share  the share's root
 *     \\server\share\d                    //server/share/d
 *     C:\a\file.txt:s                     /C:/a/file.txt:s   (a stream, see source_win.c)
 *
 * The drive letter is stored in upper case; runs of separators count as one
 * and a trailing one is dropped; '/' and '\\' both separate on input.  A
 * root has no trailing '/' so that its children are root + "/" + name.
 * "." and ".." are refused rather than resolved (GetFullPathNameW resolves
 * them before; in a \\?\ path they would be names no Windows file system
 * allows).  The reverse gives a \\?\ path (\\?\C:\x, \\?\UNC\server\share\d,
 * a root with its trailing '\\': \\?\C:\), which Windows opens whatever its
 * length and without reinterpreting its names (trailing dots and spaces
 * stay); it accepts only what the forward direction writes, so each stored
 * path names one file.
 *
 * Times: a FILETIME counts 100 ns ticks since 1601-01-01T00:00:00Z; a
 * struct fidx_time (timestamp.h) seconds since 1970 and nanoseconds, the
 * seconds rounded down.  The conversion is integer arithmetic, exact both
 * ways.
 *
 * Modes: synthesised as Cygwin and Git for Windows do: the type bits, 0755
 * for a directory, 0444 for a read-only file, 0644 for any other, 0777 for a
 * link.  The S_IF* values are POSIX's (MinGW's <sys/stat.h> lacks S_IFLNK).
 *
 * Reparse data and stream names: read from the buffers Windows fills, as
 * bytes, so that their parsing is tested where Wine cannot make them.
 *
 * Excludes: fidx_win_glob_match() is fnmatch(3) without flags or with
 * FNM_PATHNAME, on bytes, for the walk's exclude patterns (fidx/walk.h) on a
 * platform that has no fnmatch.
 *
 * Code units are uint16_t here; source_win.c passes wchar_t (16 bits on
 * Windows) through these as they are.
 */
#ifndef FIDX_WINPATH_H
#define FIDX_WINPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timestamp.h"

/* POSIX type and permission bits, for the synthesised mode. */
#define FIDX_WIN_S_IFMT  0170000
#define FIDX_WIN_S_IFDIR 0040000
#define FIDX_WIN_S_IFREG 0100000
#define FIDX_WIN_S_IFLNK 0120000

/* FILE_ATTRIBUTE_READONLY and FILE_ATTRIBUTE_DIRECTORY, as <winnt.h> defines them. */
#define FIDX_WIN_ATTR_READONLY  0x1u
#define FIDX_WIN_ATTR_DIRECTORY 0x10u

/* Seconds from 1601-01-01 to 1970-01-01 (369 years, 89 of them leap years). */
#define FIDX_WIN_EPOCH_DELTA 11644473600LL
/* FILETIME ticks per second. */
#define FIDX_WIN_TICKS_PER_S 10000000

/* Most bytes fidx_wtf8_put() writes for n code units. */
#define FIDX_WTF8_MAX(n) (3 * (n))

/*
 * Writes the WTF-8 form of the n code units at w to out (room for
 * FIDX_WTF8_MAX(n) bytes; no NUL added).  Returns the bytes written.
 */
size_t fidx_wtf8_put(char *out, const uint16_t *w, size_t n);

/*
 * The WTF-8 form of the n code units at w, malloc'ed and NUL-terminated, its
 * length in *len (when not NULL).  Returns NULL with errno ENOMEM.
 */
char *fidx_wtf8_of_utf16(const uint16_t *w, size_t n, size_t *len);

/*
 * The code units whose WTF-8 form is the n bytes at s (see the top), malloc'ed
 * and terminated by a 0 unit, their count in *len (when not NULL).  Returns
 * NULL with errno EILSEQ when s is not such a form, ENOMEM when out of memory.
 */
uint16_t *fidx_utf16_of_wtf8(const char *s, size_t n, size_t *len);

/*
 * The stored form of the absolute native path at w (n code units): a drive
 * path, a UNC path, or either behind \\?\ (see the top).  Returns it
 * malloc'ed and NUL-terminated, its length in *len (when not NULL), or NULL
 * with errno EINVAL (not such a path: relative, no share, a "." or ".."
 * name, a NUL) or ENOMEM.
 */
char *fidx_win_stored_path(const uint16_t *w, size_t n, size_t *len);

/*
 * The \\?\ native path of the stored path at s (n bytes), malloc'ed and
 * terminated by a 0 unit, its count in *len (when not NULL).  Returns NULL
 * with errno EINVAL (not a stored path fidx_win_stored_path() writes: no
 * leading '/', a lower-case drive, an empty, "." or ".." name, a trailing
 * '/'), EILSEQ (a name not WTF-8) or ENOMEM.
 */
uint16_t *fidx_win_native_path(const char *s, size_t n, size_t *len);

/*
 * Returns the time ticks 100 ns ticks after 1601-01-01T00:00:00Z (a
 * FILETIME read as a signed 64-bit number), exactly.
 */
struct fidx_time fidx_win_time(int64_t ticks);

/*
 * Returns the ticks of time t, and true, when t is a FILETIME (from 1601 to
 * 30828, in whole 100 ns); false otherwise, *ticks untouched.
 */
bool fidx_win_ticks(struct fidx_time t, int64_t *ticks);

/*
 * Returns the mode of an entry with the FILE_ATTRIBUTE_* word attributes:
 * a link (is_link) S_IFLNK|0777, a directory S_IFDIR|0755, a file
 * S_IFREG|0644, or S_IFREG|0444 when FILE_ATTRIBUTE_READONLY is set.
 */
uint32_t fidx_win_mode(uint32_t attributes, bool is_link);

/* What a reparse point's data (FSCTL_GET_REPARSE_POINT's answer) says. */
struct fidx_win_reparse {
	uint32_t tag;             /* IO_REPARSE_TAG_* */
	bool name_surrogate;      /* the tag stands for another name: a link of some kind */
	bool volume;              /* a mount point whose substitute name is \??\Volume{...} */
	char *target;             /* the print name, else the substitute name, in WTF-8
				     (malloc'ed); NULL for a tag without a known target */
	size_t target_len;        /* strlen(target) */
};

/*
 * Reads the n bytes at data, a REPARSE_DATA_BUFFER as FSCTL_GET_REPARSE_POINT
 * returns it (little-endian), into *out: a symlink's or a mount point's
 * (junction's) names, WSL's symlink's UTF-8 target; any other tag gives no
 * target.  A name that lies outside the data is ignored.  Returns 0, or -1
 * with errno EINVAL (shorter than its header) or ENOMEM.
 */
int fidx_win_reparse_parse(const void *data, size_t n, struct fidx_win_reparse *out);

/*
 * Whether the n units at name, a stream's name as FILE_STREAM_INFO and
 * FindFirstStreamW give it (":NAME:$DATA"), name an alternate data stream:
 * then NAME is the *len units at name + 1.  The default stream ("::$DATA")
 * and any other type are not.
 */
bool fidx_win_stream_name(const uint16_t *name, size_t n, size_t *len);

/*
 * Whether string matches the glob pattern as fnmatch(3) decides with no flags
 * (pathname false) or FNM_PATHNAME (true: '*', '?' and brackets never match
 * '/'): '*', '?', "[a-z]", "[!x]" and "[^x]", '\\' quoting the next byte.
 * Bytes, not characters.  A malformed bracket matches itself.
 */
bool fidx_win_glob_match(const char *pattern, const char *string, bool pathname);

#endif /* FIDX_WINPATH_H */
