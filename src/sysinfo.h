/*
 * sysinfo.h - what a scan row says about the machine it ran on, and the
 * CPUs and clock fidx runs with.
 */
#ifndef FIDX_SYSINFO_H
#define FIDX_SYSINFO_H

#include <stdint.h>

struct fidx_sysinfo {
	char host[256];     /* gethostname() */
	char os[256];       /* PRETTY_NAME from /etc/os-release, else uname's sysname */
	char kernel[256];   /* uname's release */
	char arch[256];     /* uname's machine */
};

/* Fills *info; fields that cannot be read are left empty. */
void fidx_sysinfo_read(struct fidx_sysinfo *info);

/* Returns the number of CPUs this process may run on (its affinity mask). */
unsigned fidx_usable_cpus(void);

/* Returns the wall-clock time in ns since the epoch (UTC). */
int64_t fidx_now_ns(void);

#endif /* FIDX_SYSINFO_H */
