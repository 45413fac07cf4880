/*
 * output.h - what the query commands print, and how.
 *
 * A command's results go to stdout through stdio with one large buffer
 * (fidx_out_begin()), written by one thread, so output is a few large
 * write()s and never interleaves.  Paths are printed byte for byte, ended by
 * '\n' or, with -0, by '\0' (the only byte a path cannot hold); the --json
 * form of a path is fidx_json_path() (json.h).  fidx_out_end() reports a
 * failed write (a full disk, a closed pipe) as one line; nothing is lost
 * silently.
 */
#ifndef FIDX_OUTPUT_H
#define FIDX_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The stdout buffer, chosen by measurement (docs/BENCHMARKS.md, "fidx export
 * and the stdout buffer"): 64 KiB, one default pipe buffer, beat 4 KiB (2x
 * the kernel time), 256 KiB and 1 MiB into a pipe and into a file.
 */
#ifndef FIDX_OUT_BUFFER
#define FIDX_OUT_BUFFER (64 * 1024)
#endif

/* Gives stdout a FIDX_OUT_BUFFER buffer, fully buffered even on a terminal. */
void fidx_out_begin(void);

/* Writes path and its terminator ('\0' when nul, else '\n') to stdout. */
static inline void fidx_out_path(const char *path, bool nul)
{
	fputs_unlocked(path, stdout);
	putc_unlocked(nul ? '\0' : '\n', stdout);
}

/*
 * Flushes stdout.  Returns 0, or -1 after printing "cannot write output:
 * <why>" when any write failed.
 */
int fidx_out_end(void);

/* Writes len bytes as lower-case hex (a digest) to out, unquoted. */
void fidx_out_hex(FILE *out, const unsigned char *p, size_t len);

/*
 * Formats st_mode as `ls -l` does (10 characters: the type letter, '?' for
 * an unknown type, then rwx with setuid/setgid s/S and sticky t/T) into buf.
 * Returns buf.
 */
const char *fidx_mode_string(uint32_t mode, char buf[static 11]);

/*
 * Formats bytes for people, in powers of 1024 with one decimal below 10
 * ("0 B", "512 B", "1.5 KiB", "23 MiB", "4.0 GiB").  Returns buf.
 */
const char *fidx_human_size(uint64_t bytes, char buf[static 16]);

#endif /* FIDX_OUTPUT_H */
