/*
 * stdout-buffer.c - a preload for bench/export: when fidx sets up stdout
 * (setvbuf(3), in fidx_out_begin()), it gets a buffer of
 * $FIDX_BENCH_STDOUT_BUFFER bytes instead, so that one binary measures
 * every size of FIDX_OUT_BUFFER.
 *
 * The buffer is allocated here and passed to the real setvbuf(): glibc
 * ignores the size when the buffer is NULL and allocates st_blksize bytes
 * (4 KiB on a pipe, /dev/null or ext4).  Other streams, and stdout when the
 * variable is unset, are left as asked.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int setvbuf(FILE *stream, char *buf, int mode, size_t size)
{
	int (*real)(FILE *, char *, int, size_t) =
		(int (*)(FILE *, char *, int, size_t))dlsym(RTLD_NEXT, "setvbuf");
	const char *want = getenv("FIDX_BENCH_STDOUT_BUFFER");
	if (stream == stdout && want && *want) {
		size = strtoul(want, NULL, 10);
		/* Lives as long as stdout: never freed. */
		if (!(buf = malloc(size)))
			return -1;
	}
	return real(stream, buf, mode, size);
}
