/* pwd.h - users by name, for the Windows build: a Windows file's owner is a SID, which
 * fidx does not record (its uid is 0), so no name is known: lookups find none. */
#ifndef FIDX_COMPAT_PWD_H
#define FIDX_COMPAT_PWD_H

#include <stddef.h>

struct passwd {
	char *pw_name;
	unsigned pw_uid;
	unsigned pw_gid;
};

static inline struct passwd *getpwnam(const char *name)
{
	(void)name;
	return NULL;
}

static inline struct passwd *getpwuid(unsigned uid)
{
	(void)uid;
	return NULL;
}

#endif
