/*
 * builtin.h - the commands of fidx, one file each in src/tool/builtin/.
 *
 * To add a command (`fidx tally`, say):
 *
 *   1. write src/tool/builtin/tally.c with
 *
 *          int cmd_tally(int argc, char **argv, const struct fidx_command *cmd)
 *
 *      which parses its options with fidx_parse_options() (options.h), opens
 *      the database with fidx_query_open() (query.h) when it reads one, reads
 *      rows through store.h and prints them (output.h); argv[0] is the
 *      command's name and the return value its exit status;
 *   2. add one line for it to FIDX_COMMANDS below: its name, its one-line
 *      summary, its exit statuses for output it cannot write and for a start
 *      it cannot make, and the set-up it needs (FIDX_CMD_CRYPTO).  That line
 *      declares cmd_tally(), puts it in main.c's table and in fidx --help;
 *   3. add its tests as tests/e2e/t_tally.py, and document it in man/fidx.1.
 *
 * The Makefile builds every file of src/tool/builtin/ into build/fidx.
 */
#ifndef FIDX_BUILTIN_H
#define FIDX_BUILTIN_H

#include <stdbool.h>

#include "diffout.h"  /* FIDX_DIFF_EXIT_*, the exit statuses of diff and check */

/* Set-up a command asks of the dispatcher before it runs. */
enum {
	FIDX_CMD_CRYPTO = 1,  /* hashes or seals: libcrypto set up first, in one thread */
};

/* A command of the table (FIDX_COMMANDS), as main.c holds it. */
struct fidx_command {
	const char *name;     /* as typed */
	int (*run)(int argc, char **argv, const struct fidx_command *cmd); /* the exit status */
	const char *summary;  /* one line for fidx --help */
	int write_failed;     /* the exit status when stdout cannot be written */
	int failed;           /* ... and when it cannot start (out of memory) */
	unsigned setup;       /* FIDX_CMD_* */
};

/*
 * The command table, in the order fidx --help lists the commands: one line
 * per command, X(NAME, SUMMARY, WRITE_FAILED, FAILED, SETUP) -- its name as
 * typed (cmd_NAME is its function), its line for fidx --help, its exit
 * statuses when stdout cannot be written and when it cannot start (out of
 * memory), and the FIDX_CMD_* set-up it needs.
 */
#define FIDX_COMMANDS(X) \
	X(scan, "record a folder or disk into the database", 2, 2, FIDX_CMD_CRYPTO) \
	X(scans, "list the scans a database holds", 2, 2, 0) \
	X(find, "entries by path substring, glob or regex, with filters", 2, 2, 0) \
	X(dupes, "groups of files with identical content, largest waste first", 2, 2, \
	  FIDX_CMD_CRYPTO) \
	X(du, "disk usage per directory (apparent and allocated)", 2, 2, 0) \
	X(browse, "walk a scan's tree on the terminal, as ncdu does (sizes, counts, duplicates)", \
	  2, 2, FIDX_CMD_CRYPTO) \
	X(stats, "totals by type and extension, size histogram, largest, oldest", 2, 2, 0) \
	X(report, "one HTML page that shows a scan: treemap, duplicates, types, times, errors", \
	  2, 2, FIDX_CMD_CRYPTO) \
	X(match, "files whose digest is (--not: is not) in hash lists", 2, 2, 0) \
	X(export, "write the inventory as csv, jsonl, sha256sum, hashdeep, body, dfxml", 2, 2, 0) \
	X(diff, "what was added, removed, changed and moved between two scans", \
	  FIDX_DIFF_EXIT_WRITE, FIDX_DIFF_EXIT_READ, 0) \
	X(check, "the live tree against its newest complete scan, as diff reports", \
	  FIDX_DIFF_EXIT_WRITE, FIDX_DIFF_EXIT_READ, FIDX_CMD_CRYPTO) \
	X(verify, "recompute the seal of scans; name rows altered, added, removed", 2, 2, \
	  FIDX_CMD_CRYPTO) \
	X(push, "copy complete scans into a PostgreSQL server, seals checked there", 2, 2, \
	  FIDX_CMD_CRYPTO) \
	X(prune, "drop a server's old scans of each host, the kept ones whole and sealed", 2, 2, \
	  FIDX_CMD_CRYPTO)

/* int cmd_NAME(argc, argv, cmd): runs the command (argv[0] is its name); returns its exit status. */
#define FIDX_DECLARE_COMMAND(name, ...) \
	int cmd_##name(int argc, char **argv, const struct fidx_command *cmd);
FIDX_COMMANDS(FIDX_DECLARE_COMMAND)
#undef FIDX_DECLARE_COMMAND

/* Prints fidx's version and the versions of the libraries it runs with (main.c). */
void fidx_print_version(void);

#endif /* FIDX_BUILTIN_H */
