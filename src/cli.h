/*
 * cli.h - what every subcommand's command line shares.
 *
 * A command declares its options once, as an array of struct fidx_option:
 * getopt_long()'s entry, the argument's name and the --help text.  From that
 * one table fidx_cli_longopts() builds getopt_long()'s list and
 * fidx_cli_usage() prints the options part of --help, so the two cannot
 * disagree.  fidx_cli_bad_option() turns getopt's ':' and '?' into the one
 * error line of diag.h.
 *
 * The query commands (find, dupes, du, stats, match, scans, export) share
 * four options, FIDX_QUERY_OPTIONS, parsed by fidx_query_option(): the
 * database and the scans (FIDX_DB_OPTIONS), --json and -0
 * (FIDX_OUTPUT_OPTIONS; export, whose formats decide the output, takes only
 * the first two).
 */
#ifndef FIDX_CLI_H
#define FIDX_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One option: what getopt_long() needs and what --help says. */
struct fidx_option {
	struct option opt;  /* name, has_arg, NULL, val (a char for a short form, >= 256 for none) */
	const char *arg;    /* argument name for --help, or NULL */
	const char *help;   /* --help text; continuation lines start with 23 spaces */
};

/*
 * Fills out[0..n] with the getopt_long() entries of opts[0..n-1] and the
 * terminating zero entry (out has n + 1 slots).
 */
void fidx_cli_longopts(const struct fidx_option *opts, size_t n, struct option *out);

/* Prints one line per option ("  -x, --name ARG       help") on out. */
void fidx_cli_usage(FILE *out, const struct fidx_option *opts, size_t n);

/*
 * Reports the option getopt_long() refused (c is ':' for a missing argument,
 * anything else for an unknown option) as one line naming the command and
 * the option as given: a letter of a cluster ('-x' of -axb), an unknown
 * long name, --name=value given to an option of opts[0..n-1] that takes no
 * value, a missing argument, or an abbreviation of several long names.
 */
void fidx_cli_bad_option(const char *command, int c, char **argv, const struct fidx_option *opts,
			 size_t n);

/*
 * The database a command uses: given (--db, -o, the positional DB) when not
 * NULL, else $FIDX_DB when set and not empty, else "fidx.db" in the working
 * directory.
 */
const char *fidx_cli_db(const char *given);

/*
 * For messages about the database at path: " (from FIDX_DB)" when
 * fidx_cli_db() took path from the environment, else "".
 */
const char *fidx_cli_db_origin(const char *path);

/* Values of the long-only options the query commands share. */
enum {
	FIDX_OPT_DB = 0x1000,
	FIDX_OPT_SCAN,
	FIDX_OPT_JSON,
};

/* The shared options of the query commands, as parsed by fidx_query_option(). */
struct fidx_query_args {
	const char *db;     /* --db FILE, or the positional DB, or NULL for fidx_cli_db(NULL) */
	const char *scan;   /* --scan ID[,ID...], or NULL for the newest complete scan per root */
	bool json;          /* --json */
	bool nul;           /* -0 */
	bool every_scan;    /* set by the command: without --scan, select every scan
			       (of any status, possibly none) instead of the default */
	unsigned digests;   /* set by the command: the default selection prefers scans
			       that computed one of these digests (1u << enum
			       fidx_digest); 0 for any scan (query.h) */
	bool raw;           /* set by the command: the selected scan rows are not
			       checked (rowcheck.h), as fidx verify reads them */
};

/* The options that choose what is read: --db and --scan. */
#define FIDX_DB_OPTION \
	{{"db", required_argument, NULL, FIDX_OPT_DB}, "FILE", \
	 "the database (default $FIDX_DB, else ./fidx.db); the\n" \
	 "                       first argument names it too when it is a SQLite file"}
#define FIDX_SCAN_OPTION \
	{{"scan", required_argument, NULL, FIDX_OPT_SCAN}, "ID", \
	 "the scans to read, e.g. 3 or 3,5 (default: the newest\n" \
	 "                       complete scan of each root, each path once: a\n" \
	 "                       root inside another's tree from the newer scan)"}
#define FIDX_DB_OPTIONS FIDX_DB_OPTION, FIDX_SCAN_OPTION

/* The options that shape the output: --json and -0. */
#define FIDX_OUTPUT_OPTIONS \
	{{"json", no_argument, NULL, FIDX_OPT_JSON}, NULL, \
	 "one JSON object per line; a path that is not UTF-8\n" \
	 "                       also comes as base64 (\"path_base64\")"}, \
	{{"null", no_argument, NULL, '0'}, NULL, \
	 "end each path with a NUL byte, not a newline"}

/* The rows of both, for a query command's option table. */
#define FIDX_QUERY_OPTIONS FIDX_DB_OPTIONS, FIDX_OUTPUT_OPTIONS

/*
 * Handles option c (with its argument arg) if it is one of FIDX_QUERY_OPTIONS.
 * Returns 1 when handled, 0 when c is not one of them.
 */
int fidx_query_option(int c, const char *arg, struct fidx_query_args *a);

#endif /* FIDX_CLI_H */
