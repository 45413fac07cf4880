/*
 * walk-nftw.c - the nftw(3) baseline of `make bench-walk`.
 *
 *   build/bench/walk-nftw [-s] ROOT...
 *
 * Walks each ROOT with glibc's nftw(FTW_PHYS), without following symlinks,
 * counting every entry (the roots included) and the regular files, and with
 * -s also summing the files' sizes.  Prints one line as examples/walk-count
 * does: "N entries, N files, N bytes" (0 bytes without -s).
 *
 * nftw has no names-only mode: it lstat()s every entry to hand its callback a
 * struct stat, -s or not.  So this program does the same work in both modes,
 * and the names-only comparison measures it with the stat it cannot skip.
 *
 * An entry that cannot be read or stat'ed (FTW_DNR, FTW_NS) is counted, named
 * on stderr, and makes the exit status 1; the walk goes on.  nftw's own
 * failure (a root that does not exist, ENOMEM) also gives 1.
 */
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Directories nftw may hold open at once; deeper ones are read into memory and closed. */
#define OPEN_DIRS 64

static unsigned long entries, files, bytes;
static bool sizes;   /* -s: sum the sizes of regular files */
static bool failed;  /* an entry could not be read or stat'ed */

/* Counts one entry; always lets nftw go on. */
static int count(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	entries++;
	if (flag == FTW_NS || flag == FTW_DNR) {
		fprintf(stderr, "walk-nftw: %s: cannot %s\n", path,
			flag == FTW_NS ? "stat" : "read directory");
		failed = true;
	} else if (flag == FTW_F && S_ISREG(st->st_mode)) {
		files++;
		if (sizes)
			bytes += (unsigned long)st->st_size;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int opt;
	while ((opt = getopt(argc, argv, "s")) != -1) {
		if (opt != 's')
			goto usage;
		sizes = true;
	}
	if (optind == argc)
		goto usage;
	int status = 0;
	for (int i = optind; i < argc; i++) {
		if (nftw(argv[i], count, OPEN_DIRS, FTW_PHYS) != 0) {
			fprintf(stderr, "walk-nftw: %s: %s\n", argv[i], strerror(errno));
			status = 1;
		}
	}
	printf("%lu entries, %lu files, %lu bytes\n", entries, files, bytes);
	return status || failed;
usage:
	fputs("usage: walk-nftw [-s] ROOT...\n", stderr);
	return 2;
}
