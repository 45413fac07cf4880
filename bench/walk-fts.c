/*
 * walk-fts.c - the fts(3) baseline of `make bench-walk`.
 *
 *   build/bench/walk-fts [-s] ROOT...
 *
 * Walks the ROOTs with glibc's fts (FTS_PHYSICAL: symlinks are not followed;
 * fts changes into each directory, so paths longer than PATH_MAX work),
 * counting every entry (the roots included) once, in preorder, and the
 * regular files, and with -s also summing the files' sizes.  Prints one line
 * as examples/walk-count does: "N entries, N files, N bytes" (0 bytes
 * without -s).
 *
 * Without -s it passes FTS_NOSTAT, fts's names-only mode: fts then stats
 * only what it must to find the subdirectories (each directory, and a
 * non-directory only where the listing's d_type does not tell), and an
 * entry it did not stat comes as FTS_NSOK, its type not told to the caller.
 * So without -s the entry count is exact but the file count only holds the
 * files fts had to stat: 0 on a filesystem whose listings give types.
 *
 * An entry that cannot be read or stat'ed (FTS_DNR, FTS_NS, FTS_ERR) is
 * counted, named on stderr, and makes the exit status 1; the walk goes on.
 */
#include <errno.h>
#include <fts.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	bool sizes = false;  /* -s: stat every entry and sum the sizes of regular files */
	int opt;
	while ((opt = getopt(argc, argv, "s")) != -1) {
		if (opt != 's')
			goto usage;
		sizes = true;
	}
	if (optind == argc)
		goto usage;

	FTS *fts = fts_open(argv + optind, FTS_PHYSICAL | (sizes ? 0 : FTS_NOSTAT), NULL);
	if (fts == NULL) {
		perror("walk-fts: fts_open");
		return 1;
	}
	unsigned long entries = 0, files = 0, bytes = 0;
	int status = 0;
	FTSENT *e;
	while ((e = fts_read(fts)) != NULL) {
		switch (e->fts_info) {
		case FTS_DP:  /* a directory again, after its contents: counted in preorder */
			continue;
		case FTS_F:
			if (S_ISREG(e->fts_statp->st_mode)) {
				files++;
				bytes += sizes ? (unsigned long)e->fts_statp->st_size : 0;
			}
			break;
		case FTS_DNR:
		case FTS_NS:
		case FTS_ERR:
			fprintf(stderr, "walk-fts: %s: %s\n", e->fts_path, strerror(e->fts_errno));
			status = 1;
			break;
		}
		entries++;
	}
	if (errno != 0) {
		perror("walk-fts: fts_read");
		status = 1;
	}
	fts_close(fts);
	printf("%lu entries, %lu files, %lu bytes\n", entries, files, bytes);
	return status;
usage:
	fputs("usage: walk-fts [-s] ROOT...\n", stderr);
	return 2;
}
