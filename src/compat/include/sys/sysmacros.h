/* sys/sysmacros.h - glibc's device numbers, for the Windows build: a device read from a
 * Linux scan splits as it would there; a Windows scan's device is a volume serial. */
#ifndef FIDX_COMPAT_SYS_SYSMACROS_H
#define FIDX_COMPAT_SYS_SYSMACROS_H

#include <stdint.h>

static inline unsigned fidx_compat_major(uint64_t d)
{
	return (unsigned)(((d >> 32) & 0xfffff000u) | ((d >> 8) & 0xfffu));
}

static inline unsigned fidx_compat_minor(uint64_t d)
{
	return (unsigned)(((d >> 12) & 0xffffff00u) | (d & 0xffu));
}

static inline uint64_t fidx_compat_makedev(unsigned ma, unsigned mi)
{
	return ((uint64_t)(ma & 0xfffff000u) << 32) | ((uint64_t)(ma & 0xfffu) << 8) |
	       ((uint64_t)(mi & 0xffffff00u) << 12) | (mi & 0xffu);
}

#define major(d) fidx_compat_major(d)
#define minor(d) fidx_compat_minor(d)
#define makedev(a, b) fidx_compat_makedev(a, b)

#endif
