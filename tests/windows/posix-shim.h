/*
 * posix-shim.h - what record.c needs of POSIX and MinGW-w64's C library lacks,
 * forced into each file of srcdump (-include) until the Windows port of the
 * core gives it its own; srcdump.c defines memrchr().
 */
#ifndef FIDX_POSIX_SHIM_H
#define FIDX_POSIX_SHIM_H

#include <stddef.h>

#ifndef S_IFLNK
#define S_IFLNK 0120000
#endif
#ifndef S_IFSOCK
#define S_IFSOCK 0140000
#endif

void *memrchr(const void *s, int c, size_t n);

#endif
