/*
 * fuzz.h - what the libFuzzer targets of tests/fuzz/ share (docs/TESTING.md).
 *
 * Each target is one file, fuzz_NAME.c, defining LLVMFuzzerTestOneInput()
 * over one parser of outside input; its corpus is tests/fuzz/corpus/NAME/.
 * Here: the input as a file on disk (the parsers that take a path), a
 * private folder per process, cutting an input into pieces, and running a
 * fidx command in-process as the binary would (main.c built as fidx_main()),
 * with its output thrown away.
 *
 * A harness never hides a finding: it returns 0 whatever the code under test
 * answers, and only the sanitizers and libFuzzer (crash, leak, timeout) judge.
 */
#ifndef FIDX_FUZZ_H
#define FIDX_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libFuzzer's entry points, defined by each target. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* main() of src/tool/main.c, renamed by the Makefile for the fuzz build. */
int fidx_main(int argc, char **argv);

/*
 * The folder of this process, made once under $TMPDIR (or /tmp) and left
 * for the system's cleaning (a fuzzer process ends by a signal as often as
 * not).  Aborts when it cannot be made: no target can run without it.
 */
static inline const char *fuzz_dir(void)
{
	static char dir[256];
	if (!dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof(dir), "%s/fidx-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			perror("fuzz: cannot make a folder");
			abort();
		}
	}
	return dir;
}

/*
 * Writes the size bytes at data to the file name of fuzz_dir(), replacing
 * what it held, and puts its path into path (size bytes).  Aborts when the
 * file cannot be written.
 */
static inline void fuzz_file(const char *name, const void *data, size_t size, char *path,
			     size_t pathsize)
{
	snprintf(path, pathsize, "%s/%s", fuzz_dir(), name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror("fuzz: cannot write an input file");
		abort();
	}
	for (size_t done = 0; done < size;) {
		ssize_t n = write(fd, (const char *)data + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			perror("fuzz: cannot write an input file");
			abort();
		}
		done += (size_t)n;
	}
	close(fd);
}

/* An input being cut into pieces: what is left of it. */
struct fuzz_input {
	const uint8_t *p;
	size_t n;
};

/* Takes one byte (0 once the input is used up). */
static inline uint8_t fuzz_byte(struct fuzz_input *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

/*
 * Takes the bytes up to the next separator sep (or the end) as a malloc'ed,
 * NUL-terminated string of *len bytes (it may hold NUL bytes before its
 * end).  Returns NULL (and *len 0) once the input is used up; aborts when
 * out of memory.
 */
static inline char *fuzz_piece(struct fuzz_input *in, uint8_t sep, size_t *len)
{
	*len = 0;
	if (!in->n)
		return NULL;
	const uint8_t *end = memchr(in->p, sep, in->n);
	size_t n = end ? (size_t)(end - in->p) : in->n;
	char *s = malloc(n + 1);
	if (!s)
		abort();
	memcpy(s, in->p, n);
	s[n] = '\0';
	in->p += n + (end != NULL);
	in->n -= n + (end != NULL);
	*len = n;
	return s;
}

/*
 * Sends stdout to /dev/null for good (a command's output is not looked at,
 * only what it does on the way).  Aborts when it cannot.
 */
static inline void fuzz_quiet_stdout(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
		perror("fuzz: cannot send stdout to /dev/null");
		abort();
	}
	close(fd);
}

/*
 * Runs `fidx ARGS...` in-process (argv NULL-terminated, without "fidx") and
 * returns its exit status; what it prints goes where stdout and stderr go.
 */
static inline int fuzz_fidx(const char *const *args)
{
	char *argv[32];
	int argc = 0;
	argv[argc++] = (char *)"fidx";
	for (; args[argc - 1] && argc < 31; argc++)
		argv[argc] = (char *)args[argc - 1];
	argv[argc] = NULL;
	optind = 0; /* getopt_long() from scratch, as in a new process */
	return fidx_main(argc, argv);
}

#endif /* FIDX_FUZZ_H */
