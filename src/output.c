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

void fidx_out_hex(FILE *out, const unsigned char *p, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char buf[2 * 64];
	while (len) {
		size_t n = len < 64 ? len : 64;
		for (size_t i = 0; i < n; i++) {
			buf[2 * i] = digits[p[i] >> 4];
			buf[2 * i + 1] = digits[p[i] & 15];
		}
		fwrite_unlocked(buf, 1, 2 * n, out);
		p += n;
		len -= n;
	}
}

const char *fidx_mode_string(uint32_t mode, char buf[static 11])
{
	/* by the format bits (mode >> 12): 1 fifo, 2 char, 4 dir, 6 block, 8 file, 10 link, 12 socket */
	static const char kind[] = "?pc?d?b?-?l?s???";
	buf[0] = kind[(mode >> 12) & 15];
	for (int i = 0; i < 3; i++) {
		unsigned bits = (mode >> (6 - 3 * i)) & 7;
		buf[1 + 3 * i] = bits & 4 ? 'r' : '-';
		buf[2 + 3 * i] = bits & 2 ? 'w' : '-';
		buf[3 + 3 * i] = bits & 1 ? 'x' : '-';
	}
	if (mode & 04000)
		buf[3] = buf[3] == 'x' ? 's' : 'S';
	if (mode & 02000)
		buf[6] = buf[6] == 'x' ? 's' : 'S';
	if (mode & 01000)
		buf[9] = buf[9] == 'x' ? 't' : 'T';
	buf[10] = '\0';
	return buf;
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
