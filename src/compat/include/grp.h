/* grp.h - groups by name, for the Windows build: a Windows file's owner is a SID, which
 * fidx does not record (its uid is 0), so no name is known: lookups find none. */
#ifndef FIDX_COMPAT_GRP_H
#define FIDX_COMPAT_GRP_H

#include <stddef.h>

struct group {
	char *gr_name;
	unsigned gr_gid;
};

static inline struct group *getgrnam(const char *name)
{
	(void)name;
	return NULL;
}

static inline struct group *getgrgid(unsigned gid)
{
	(void)gid;
	return NULL;
}

#endif
