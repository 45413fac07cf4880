/* fnmatch.h - fnmatch(3) for the Windows build (src/compat/fnmatch.c). */
#ifndef FIDX_COMPAT_FNMATCH_H
#define FIDX_COMPAT_FNMATCH_H

#define FNM_NOMATCH 1
#define FNM_NOESCAPE 0x01
#define FNM_PATHNAME 0x02
#define FNM_PERIOD 0x04
#define FNM_LEADING_DIR 0x08
#define FNM_CASEFOLD 0x10

/* Whether string matches the shell pattern as glibc's fnmatch() says: 0, or FNM_NOMATCH. */
int fnmatch(const char *pattern, const char *string, int flags);

#endif
