/*
 * options.h - the command line of every command: one option parser, and
 * --help made from the same table.
 *
 * A command declares its options once, as an array of struct fidx_option
 * ended by FIDX_OPT_END, each pointing at the variable it sets (git's
 * parse-options).  fidx_parse_options() runs getopt_long() over it, sets the
 * variables, prints --help (the command's text, the options with their help
 * wrapped to 80 columns, its footer) and turns a refused option into the one
 * error line of diag.h, naming the option as given:
 *
 *     bool json = false;
 *     struct fidx_option options[] = {
 *             FIDX_OPT_FLAG('l', "long", &longfmt, "long listing: ..."),
 *             FIDX_OPT_CALL(0, "size", "[+-]N", parse_size, &filters, "size more than ..."),
 *             FIDX_OPT_QUERY(&qa),
 *             FIDX_OPT_END,
 *     };
 *     int first = fidx_parse_options(argc, argv, options, &help);
 *
 * The options several commands share are macros: the database and the
 * scans (FIDX_OPT_DB, FIDX_OPT_SCAN), --json and -0 (FIDX_OPT_OUTPUT), all
 * four (FIDX_OPT_QUERY), --jobs.  Every command has -h, --help.
 */
#ifndef FIDX_OPTIONS_H
#define FIDX_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* What an option does with its argument. */
enum fidx_opt_kind {
	FIDX_OPT_KIND_END,     /* the end of the table */
	FIDX_OPT_KIND_FLAG,    /* sets *(bool *)value */
	FIDX_OPT_KIND_STRING,  /* sets *(const char **)value to the argument (the last one given) */
	FIDX_OPT_KIND_CALL,    /* calls call(arg, value): arg NULL for an option without one */
};

/* One option of a command. */
struct fidx_option {
	enum fidx_opt_kind kind;
	int short_name;        /* its letter, or 0 */
	const char *long_name;
	const char *arg;       /* the argument's name in --help; NULL: the option takes none */
	void *value;           /* what it sets, or what call gets */
	/* FIDX_OPT_KIND_CALL: takes the argument.  Returns 0, or -1 after printing why. */
	int (*call)(const char *arg, void *value);
	const char *help;      /* one paragraph; --help wraps it */
};

#define FIDX_OPT_MAX 64 /* options one table may hold (FIDX_OPT_END aside) */

#define FIDX_OPT_FLAG(s, l, v, h) {FIDX_OPT_KIND_FLAG, (s), (l), NULL, (v), NULL, (h)}
#define FIDX_OPT_STRING(s, l, a, v, h) {FIDX_OPT_KIND_STRING, (s), (l), (a), (v), NULL, (h)}
#define FIDX_OPT_CALL(s, l, a, f, v, h) {FIDX_OPT_KIND_CALL, (s), (l), (a), (v), (f), (h)}
#define FIDX_OPT_END {FIDX_OPT_KIND_END, 0, NULL, NULL, NULL, NULL, NULL}

/*
 * The one argument that makes a command print its options for the shell
 * completions (completions/: bash, zsh, fish), one a line, fields separated
 * by tabs: "-s", "--long", the argument's name ("" when none), the first
 * clause of its help; then exit 0.  `fidx --completion-helper` lists the
 * commands ("name", tab, summary).  Not in --help: it is for the scripts.
 */
#define FIDX_COMPLETION_HELPER "--completion-helper"

/* Prints the completion lines of options (FIDX_COMPLETION_HELPER) on out. */
void fidx_options_completion(FILE *out, const struct fidx_option *options);

/* What --help says around the options of a command. */
struct fidx_help {
	const char *command;   /* its name, for messages ("find") */
	const char *text;      /* before the options: the usage lines and what it does */
	void (*more)(FILE *out); /* writes what text leaves to be generated, or NULL */
	const char *footer;    /* after the options: the exit status */
};

/* What fidx_parse_options() returns besides the index of the first argument. */
enum {
	FIDX_PARSE_HELP = 0,   /* --help was given and printed: the command exits 0 */
	FIDX_PARSE_ERROR = -1, /* an option was refused (and said why): a usage error */
};

/*
 * Parses the options of argv (argv[0] is the command's name) by the table
 * options.  Returns the index of the first argument that is not an option
 * (getopt_long() moves them after the options), FIDX_PARSE_HELP, or
 * FIDX_PARSE_ERROR.
 */
int fidx_parse_options(int argc, char **argv, const struct fidx_option *options,
		       const struct fidx_help *help);

/* Prints the --help of a command: its text, "Options:" and each option, its footer. */
void fidx_options_help(FILE *out, const struct fidx_option *options, const struct fidx_help *help);

/* The values of the options the query commands share. */
#define FIDX_MAX_HOSTS 64 /* --host patterns one command takes */

struct fidx_query_args {
	const char *db;     /* --db FILE, or the positional DB, or NULL for fidx_db_name(NULL) */
	const char *scan;   /* --scan ID[,ID...], or NULL for the default selection */
	/* --host PATTERN, repeated: only the scans of hosts one of these globs matches */
	const char *hosts[FIDX_MAX_HOSTS];
	size_t nhosts;
	bool json;          /* --json */
	bool nul;           /* -0 */
	bool every_scan;    /* set by the command: without --scan, select every scan
			       (of any status, possibly none) instead of the default */
	unsigned digests;   /* set by the command: the default selection prefers scans
			       that computed one of these digests (1u << enum
			       fidx_digest); 0 for any scan (select.h) */
	bool raw;           /* set by the command: the selected scan rows are not
			       checked, as fidx verify reads them */
};

/* --db FILE, as the query commands take it. */
#define FIDX_OPT_DB(qa)                                                                        \
	FIDX_OPT_STRING(0, "db", "DB", &(qa)->db,                                                \
			"the database: a SQLite file or a PostgreSQL URI or conninfo (default "  \
			"$FIDX_DB, else ./fidx.db); the first argument names it too when it is " \
			"a SQLite file")
/* --scan ID[,ID...], as the query commands take it. */
#define FIDX_OPT_SCAN(qa)                                                                      \
	FIDX_OPT_STRING(0, "scan", "ID", &(qa)->scan,                                            \
			"the scans to read, e.g. 3 or 3,5 (default: the newest complete scan "   \
			"of each root, each path once: a root inside another's tree from the "   \
			"newer scan)")
/* --json and -0. */
#define FIDX_OPT_OUTPUT(qa)                                                                    \
	FIDX_OPT_FLAG(0, "json", &(qa)->json,                                                    \
		      "one JSON object per line; a path that is not UTF-8 also comes as "        \
		      "base64 (\"path_base64\")"),                                               \
	FIDX_OPT_FLAG('0', "null", &(qa)->nul, "end each path with a NUL byte, not a newline")
/* The four options of the query commands. */
/* --host PATTERN, as the query commands take it. */
#define FIDX_OPT_HOST(qa)                                                                      \
	FIDX_OPT_CALL(0, "host", "PATTERN", fidx_host_arg, (qa),                                  \
		      "only the scans made on hosts this glob matches (repeatable: any of them;" \
		      " a fleet's PostgreSQL store holds many hosts)")
#define FIDX_OPT_QUERY(qa) FIDX_OPT_DB(qa), FIDX_OPT_SCAN(qa), FIDX_OPT_HOST(qa), \
	FIDX_OPT_OUTPUT(qa)

/* Adds a --host pattern to the struct fidx_query_args qa.  Returns 0, or -1 after printing why. */
int fidx_host_arg(const char *arg, void *qa);

/* -b, --bytes: sizes exact, as du and stats take it. */
#define FIDX_OPT_BYTES(exact) FIDX_OPT_FLAG('b', "bytes", (exact), "exact sizes in bytes, not 1.5 KiB")

/*
 * Takes a --jobs argument (1 to FIDX_MAX_JOBS) into *(unsigned *)jobs.
 * Returns 0, or -1 after printing why.
 */
int fidx_jobs_arg(const char *arg, void *jobs);

/*
 * Takes an --io argument (ssd, hdd or auto) into *(enum fidx_io_mode *)mode.
 * Returns 0, or -1 after printing why.
 */
int fidx_io_arg(const char *arg, void *mode);

/*
 * Lowers jobs to what the open-file limit can hold (FIDX_FDS_PER_JOB a job
 * beside FIDX_FDS_RESERVED), so that a scan never fails with EMFILE.
 * Returns the jobs to take; *limit is set to the limit.
 */
unsigned fidx_jobs_fit(unsigned jobs, unsigned long *limit);

/*
 * The database a command uses: given (--db, -o, the positional DB) when not
 * NULL, else $FIDX_DB when set and not empty, else "fidx.db" in the working
 * directory.
 */
const char *fidx_db_name(const char *given);

/*
 * For messages about the database at name: " (from FIDX_DB)" when
 * fidx_db_name() took it from the environment, else "".
 */
const char *fidx_db_origin(const char *name);

#endif /* FIDX_OPTIONS_H */
