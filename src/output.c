/*
 * output.c - buffered results on stdout (output.h).
 */
#include "output.h"

#include <errno.h>
#include <string.h>

#include "diag.h"

void fidx_out_begin(void)
{
	/* Our own buffer: given NULL, glibc ignores the size and takes 4 KiB. */
	static char buf[FIDX_OUT_BUFFER];
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
}

int fidx_out_end(void)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	fidx_error("cannot write output: %s", errno ? strerror(errno) : "write error");
	return -1;
}

const char *fidx_human_size(uint64_t bytes, char buf[static 16])
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)bytes;
	unsigned u = 0;

	if (bytes < 1024) {
		snprintf(buf, 16, "%u B", (unsigned)bytes);
		return buf;
	}
	while (v >= 1024 && u < sizeof(units) / sizeof(units[0]) - 1) {
		v /= 1024;
		u++;
	}
	/* Round first, so that 9.96 KiB prints as "10 KiB", not "10.0 KiB". */
	if (v < 9.95)
		snprintf(buf, 16, "%.1f %s", v, units[u]);
	else
		snprintf(buf, 16, "%.0f %s", v, units[u]);
	return buf;
}
