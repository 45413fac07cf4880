/*
 * fdutil.c - opening paths longer than PATH_MAX, and the open file limit.
 *
 * The kernel refuses a path of PATH_MAX bytes or more in one call, but a tree
 * can be deeper than that.  fidx_open_long() cuts such a path at slashes into
 * pieces shorter than PATH_MAX and opens each relative to the one before.
 */
#include "fdutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int fidx_open_long(const char *path, int flags)
{
	size_t len = strlen(path);
	if (len < PATH_MAX)
		return open(path, flags | O_CLOEXEC);

	/* Open successive pieces shorter than PATH_MAX, each relative to the last. */
	int dirfd = path[0] == '/' ? open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : AT_FDCWD;
	if (path[0] == '/' && dirfd < 0)
		return -1;
	const char *p = path;
	while (*p == '/')
		p++;
	char piece[PATH_MAX];
	for (;;) {
		size_t rest = strlen(p);
		if (rest < PATH_MAX) {
			int fd = openat(dirfd, p, flags | O_CLOEXEC);
			int saved = errno;
			if (dirfd >= 0)
				close(dirfd);
			errno = saved;
			return fd;
		}
		/* Cut at the last '/' that keeps the piece shorter than PATH_MAX. */
		const char *cut = memrchr(p, '/', PATH_MAX - 1);
		if (!cut || cut == p) {
			if (dirfd >= 0)
				close(dirfd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(piece, p, cut - p);
		piece[cut - p] = '\0';
		int next = openat(dirfd, piece, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int saved = errno;
		if (dirfd >= 0)
			close(dirfd);
		if (next < 0) {
			errno = saved;
			return -1;
		}
		dirfd = next;
		p = cut;
		while (*p == '/')
			p++;
	}
}

unsigned long fidx_raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 64;
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit up = {rl.rlim_max, rl.rlim_max};
		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl.rlim_cur = rl.rlim_max;
	}
	return rl.rlim_cur;
}

ssize_t fidx_read_full(int fd, void *buf, size_t n, off_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = off < 0 ? read(fd, (char *)buf + got, n - got)
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
