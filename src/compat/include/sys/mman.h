/* sys/mman.h - anonymous private mappings for the Windows build (VirtualAlloc, win.c):
 * the only kind fidx makes. */
#ifndef FIDX_COMPAT_SYS_MMAN_H
#define FIDX_COMPAT_SYS_MMAN_H

#include <sys/types.h>

#define PROT_READ 0x1
#define PROT_WRITE 0x2
#define MAP_PRIVATE 0x02
#define MAP_ANONYMOUS 0x20
#define MAP_NORESERVE 0x4000
#define MAP_FAILED ((void *)-1)
#define MADV_HUGEPAGE 14

/* Reserves and commits n bytes of zeroes (fd -1, MAP_PRIVATE | MAP_ANONYMOUS only). */
void *mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off);
int munmap(void *p, size_t n);
static inline int madvise(void *p, size_t n, int advice)
{
	(void)p, (void)n, (void)advice;
	return 0;
}

#endif
