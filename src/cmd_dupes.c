/*
 * cmd_dupes.c - `fidx dupes`: files with identical content, largest waste first.
 *
 *   fidx dupes [DB]          the files of the database's selected scans
 *   fidx dupes PATH...       scans the PATHs first (metadata only, as `fidx scan
 *                            --hash none`) into a temporary database, removed
 *                            afterwards, or into --db FILE, which keeps it
 *
 * then dupes.c finds the groups, reading only files that could still be
 * duplicates, and this file prints them: text (a header line per group, its
 * paths, a blank line, a total at the end) or --json (one object per group).
 * Digests computed on the way are kept in the database when it is writable
 * (not a temporary one), so a second run reads nothing it read before.
 * Exit status: 0 duplicates listed, 1 none found, 2 usage or fatal error,
 * 130 interrupted.
 */
#include "commands.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "dbfile.h"
#include "diag.h"
#include "dupes.h"
#include "fdutil.h"
#include "json.h"
#include "output.h"
#include "query.h"
#include "scan.h"
#include "scanargs.h"
#include "store.h"
#include "sysinfo.h"

enum {
	OPT_EMPTY = 256,
	OPT_IO,
};

static const struct fidx_option dupes_options[] = {
	FIDX_QUERY_OPTIONS,
	{{"empty", no_argument, NULL, OPT_EMPTY}, NULL,
	 "also list empty files (left out by default)"},
	{{"jobs", required_argument, NULL, 'j'}, "N",
	 "CPUs to hash on (default: usable CPUs), with 4 reading\n"
	 "                       threads per job"},
	{{"io", required_argument, NULL, OPT_IO}, "MODE",
	 "how files are read: ssd (many at once), hdd (one at a\n"
	 "                       time) or auto (default: hdd when a file's disk reports\n"
	 "                       itself rotational)"},
	{{"quiet", no_argument, NULL, 'q'}, NULL, "no progress line while scanning PATHs"},
	{{"help", no_argument, NULL, 'h'}, NULL, "show this help"},
};
#define NOPTIONS (sizeof(dupes_options) / sizeof(dupes_options[0]))

/* Prints the help of `fidx dupes`. */
static void dupes_usage(FILE *out)
{
	fputs("usage: fidx dupes [OPTIONS] [DB]\n"
	      "       fidx dupes [OPTIONS] PATH...\n\n"
	      "List groups of regular files with identical content, largest waste first:\n"
	      "waste = (files - 1) x size, the bytes that removing all copies but one would\n"
	      "reclaim.  Hard links (one inode under several names) are one file: never\n"
	      "duplicates of each other, listed together.  Symlinks are not followed.\n\n"
	      "With PATHs, they are scanned first (metadata only) into a temporary\n"
	      "database, removed afterwards, or into --db FILE, which keeps the scan.\n"
	      "Otherwise the files of DB (default $FIDX_DB, else ./fidx.db) are used, as\n"
	      "recorded.\n\n", out);
	fprintf(out,
		"Only files that could be duplicates are read: of the sizes two inodes\n"
		"share, files up to %d KiB whole, larger ones first at both ends (%d KiB\n"
		"each), then whole when their ends agree.  Files are duplicates when their\n"
		"SHA-256 digests are equal (computed, or recorded by the scan; a scan with\n"
		"only SHA-512 is used as such): the decision is a cryptographic digest, not a\n"
		"byte-for-byte comparison; MD5, SHA-1 and XXH128 are never trusted.\n\n",
		FIDX_DUPES_WHOLE_MAX / 1024, FIDX_DUPES_EDGE_BLOCK / 1024);
	fputs("A file read must still have the device, inode, size and mtime recorded,\n"
	      "else it is left out with a warning, as is a file that cannot be read.\n"
	      "The digests computed are kept in the database (table file_digest) when it\n"
	      "can be written, so that a second run reads nothing it read before.\n\n"
	      "Output: per group a line \"N copies of SIZE (BYTES bytes each): SIZE\n"
	      "reclaimable (BYTES bytes), sha256 HEX\", then one path per file, each\n"
	      "further name of the same file (hard link) on a line of its own starting\n"
	      "with \"= \", then an empty line; a total at the end.  With -0 every line\n"
	      "ends with NUL instead.  --json: one object per group: size, waste,\n"
	      "algorithm, digest, files [{path, dev, ino, links [{path}]}].\n\n"
	      "Options:\n", out);
	fidx_cli_usage(out, dupes_options, NOPTIONS);
	fputs("\nExit status: 0 duplicates listed, 1 none found, 2 usage or fatal error,\n"
	      "130 interrupted.\n", out);
}

static atomic_bool interrupted;

/* SIGINT/SIGTERM/SIGHUP: stop reading; a second signal kills as usual. */
static void on_signal(int sig)
{
	atomic_store(&interrupted, true);
	signal(sig, SIG_DFL);
}

/* Ends one line of output: '\n', or NUL with -0. */
static void end_line(bool nul)
{
	putc_unlocked(nul ? '\0' : '\n', stdout);
}

/* Prints a group as text: its header line, its paths, an empty line. */
static void print_text(const struct fidx_dupes_group *g, bool nul)
{
	char each[16], waste[16];
	printf("%zu copies of %s (%llu %s each): %s reclaimable (%llu %s), %s ", g->nfiles,
	       fidx_human_size(g->size, each), (unsigned long long)g->size,
	       fidx_plural(g->size, "byte", "bytes"), fidx_human_size(g->waste, waste),
	       (unsigned long long)g->waste, fidx_plural(g->waste, "byte", "bytes"),
	       fidx_digest_name(g->algo));
	for (size_t i = 0; i < fidx_digest_len(g->algo); i++)
		printf("%02x", g->digest[i]);
	end_line(nul);
	for (size_t f = 0; f < g->nfiles; f++) {
		const struct fidx_dupes_file *file = &g->files[f];
		fidx_out_path(file->paths[0], nul);
		for (size_t p = 1; p < file->npaths; p++) {
			fputs("= ", stdout);
			fidx_out_path(file->paths[p], nul);
		}
	}
	end_line(nul);
}

/* Prints a group as one JSON object on its own line. */
static void print_json(const struct fidx_dupes_group *g)
{
	printf("{\"size\":%llu,\"waste\":%llu,\"algorithm\":\"%s\",\"digest\":",
	       (unsigned long long)g->size, (unsigned long long)g->waste, fidx_digest_name(g->algo));
	fidx_json_hex(stdout, g->digest, fidx_digest_len(g->algo));
	fputs(",\"files\":[", stdout);
	for (size_t f = 0; f < g->nfiles; f++) {
		const struct fidx_dupes_file *file = &g->files[f];
		fputs(f ? ",{" : "{", stdout);
		fidx_json_path(stdout, "path", file->paths[0]);
		printf(",\"dev\":%llu,\"ino\":%llu,\"links\":[", (unsigned long long)file->dev,
		       (unsigned long long)file->ino);
		for (size_t p = 1; p < file->npaths; p++) {
			fputs(p > 1 ? ",{" : "{", stdout);
			fidx_json_path(stdout, "path", file->paths[p]);
			putc_unlocked('}', stdout);
		}
		fputs("]}", stdout);
	}
	fputs("]}\n", stdout);
}

/* Prints the total line of the text output. */
static void print_total(const struct fidx_dupes *d, bool nul)
{
	char waste[16];
	printf("%zu %s, %llu %s: %s reclaimable (%llu %s)", d->ngroups,
	       fidx_plural(d->ngroups, "group", "groups"), (unsigned long long)d->files,
	       fidx_plural(d->files, "file", "files"), fidx_human_size(d->waste, waste),
	       (unsigned long long)d->waste, fidx_plural(d->waste, "byte", "bytes"));
	if (d->left_out)
		printf("; %llu %s left out (changed or unreadable)", (unsigned long long)d->left_out,
		       fidx_plural(d->left_out, "file", "files"));
	end_line(nul);
}

/* The database of the PATH mode: --db FILE, or a temporary file. */
struct scan_db {
	char *path;     /* its path (malloc'ed) */
	bool temporary; /* made here: removed at the end, with its -wal and -shm */
};

/* Makes an empty temporary database file in $TMPDIR (or /tmp).  Returns 0, or -1 after printing why. */
static int make_temporary(struct scan_db *sdb)
{
	if (!(sdb->path = fidx_dbfile_temporary("fidx-dupes"))) {
		fidx_error("cannot make a temporary database in '%s': %s",
			   fidx_quote(fidx_dbfile_tmpdir()), strerror(errno));
		return -1;
	}
	sdb->temporary = true;
	return 0;
}

/* Removes a temporary database and the files SQLite keeps beside it. */
static void remove_temporary(const struct scan_db *sdb)
{
	if (sdb->temporary)
		fidx_dbfile_remove(sdb->path);
}

/*
 * Scans the roots (metadata only) into sdb->path and sets *scan_spec to the
 * new scans' ids ("3,4") for --scan.  The store is left open in *stp (the
 * caller closes it once it reads the database: the last connection to close
 * folds the WAL back into the file, which a temporary database does not
 * need).  Returns 0, 130 when interrupted, or 2 after printing why.
 */
static int scan_paths(char **args, size_t nargs, const struct scan_db *sdb, unsigned jobs,
		      enum fidx_io_mode io, bool progress, char **scan_spec, struct fidx_store **stp)
{
	char **roots = calloc(nargs + 1, sizeof(*roots));
	char *json = NULL, *errmsg = NULL, *database = NULL;
	struct fidx_store *st = NULL;
	struct fidx_scan_result result = {0};
	int status = 2;

	if (!roots) {
		fidx_error("out of memory");
		goto out;
	}
	size_t nroots = 0;
	for (size_t i = 0; i < nargs; i++) {
		if (!(roots[nroots] = realpath(args[i], NULL))) {
			fidx_error("cannot scan '%s': %s", fidx_quote(args[i]), strerror(errno));
			goto out;
		}
		/* The same folder given twice ("a ./a") is one scan, as with fidx scan. */
		bool again = false;
		for (size_t k = 0; k < nroots && !again; k++)
			again = strcmp(roots[k], roots[nroots]) == 0;
		if (again)
			free(roots[nroots]);
		else
			nroots++;
		roots[nroots] = NULL;
	}
	if (!(st = fidx_store_open(sdb->path, NULL, &errmsg))) {
		fidx_error("%s", errmsg ? errmsg : "out of memory");
		goto out;
	}
	if (sdb->temporary && fidx_store_scratch(st) < 0) {
		fidx_error("%s", fidx_store_errmsg(st));
		goto out;
	}
	/* The database is never scanned (scan.c leaves its files out); a kept one is named. */
	if ((!sdb->temporary && !(database = realpath(sdb->path, NULL))) ||
	    !(json = fidx_scan_options_json(0, jobs, false, false, false,
					    io == FIDX_IO_HDD ? FIDX_IO_HDD : FIDX_IO_SSD, false,
					    NULL, 0, database))) {
		fidx_error("out of memory");
		goto out;
	}
	struct fidx_scan_opts so = {
		.digests = 0, .jobs = jobs, .io = io == FIDX_IO_HDD ? FIDX_IO_HDD : FIDX_IO_SSD,
		.progress = progress, .options_json = json, .cancel = &interrupted,
	};
	if (fidx_scan(st, (const char *const *)roots, nroots, &so, &result, &errmsg) < 0) {
		fidx_error("%s", errmsg ? errmsg : "out of memory");
		goto out;
	}
	if (result.interrupted) {
		status = 130;
		goto out;
	}
	size_t len = 0, cap = 24 * result.nscans + 1;
	if (!(*scan_spec = malloc(cap))) {
		fidx_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < result.nscans; i++)
		len += snprintf(*scan_spec + len, cap - len, "%s%lld", i ? "," : "",
				(long long)result.scan_ids[i]);
	status = 0;
	*stp = st;
	st = NULL;
out:
	fidx_store_close(st);
	for (size_t i = 0; roots && i < nargs; i++)
		free(roots[i]);
	free(roots);
	free(database);
	free(json);
	free(errmsg);
	free(result.scan_ids);
	free(result.seals);
	free(result.index_error);
	return status;
}

/*
 * PATH mode: warns of every entry the scan recorded with an error (a folder
 * not listed, a file not stat'ed): what it hid cannot be compared.  Returns
 * 0, or -1 after printing why.
 */
static int warn_scan_errors(const struct fidx_query *q)
{
	char sql[1024];
	snprintf(sql, sizeof(sql), "SELECT path, error FROM file WHERE scan_id IN (SELECT id FROM"
		 " selected_scan) AND error IS NOT NULL AND %s ORDER BY path",
		 fidx_query_shown(q, "file"));
	sqlite3_stmt *s = fidx_query_prepare(q, sql);
	int rc;
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		fidx_warn("'%s' left out: %s", fidx_quote((const char *)sqlite3_column_text(s, 0)),
			  (const char *)sqlite3_column_text(s, 1));
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return fidx_query_fail(q), -1;
	return 0;
}

/* Keeps the digests d computed in the database at path; says once when it cannot. */
static void keep_digests(const struct fidx_dupes *d, const char *path)
{
	char *errmsg = NULL;
	const char *why;
	if (fidx_dupes_computed(d) == 0)
		return;
	struct fidx_store *st = fidx_store_open(path, NULL, &errmsg);
	if (!st) {
		fidx_warn("the digests computed are not kept: %s", errmsg ? errmsg : "out of memory");
		free(errmsg);
		return;
	}
	if (fidx_dupes_store(d, st, &why) < 0)
		fidx_warn("the digests computed are not kept: %s", why);
	if (fidx_store_close(st) < 0)
		fidx_warn("the digests computed are not kept: cannot close database '%s'",
			  fidx_quote(path));
}

int cmd_dupes(int argc, char **argv)
{
	struct option longopts[NOPTIONS + 1];
	struct fidx_query_args qa = {0};
	struct fidx_dupes_opts o = {.jobs = fidx_usable_cpus(), .io = FIDX_IO_AUTO,
				    .cancel = &interrupted};
	struct scan_db sdb = {0};
	struct fidx_query *q = NULL;
	struct fidx_dupes *d = NULL;
	struct fidx_store *st = NULL;
	char *scan_spec = NULL;
	bool quiet = false;
	int c, status = 2;

	fidx_cli_longopts(dupes_options, NOPTIONS, longopts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":0j:qh", longopts, NULL)) != -1) {
		if (fidx_query_option(c, optarg, &qa))
			continue;
		switch (c) {
		case OPT_EMPTY: o.empty = true; break;
		case 'j':
			if (fidx_jobs_arg(optarg, &o.jobs) < 0)
				return 2;
			break;
		case OPT_IO:
			if (fidx_io_mode_parse(optarg, &o.io) < 0) {
				fidx_error("invalid --io '%s': expected ssd, hdd or auto",
					   fidx_quote(optarg));
				return 2;
			}
			break;
		case 'q': quiet = true; break;
		case 'h': dupes_usage(stdout); return 0;
		default:
			fidx_cli_bad_option("dupes", c, argv, dupes_options, NOPTIONS);
			return 2;
		}
	}
	bool db_mode = optind == argc || fidx_query_db_arg(argv[optind], &qa);
	if (db_mode && optind + 1 < argc) {
		fidx_error("unexpected argument '%s' after the database (see 'fidx dupes --help')",
			   fidx_quote(argv[optind + 1]));
		return 2;
	}
	if (!db_mode && qa.scan) {
		fidx_error("--scan reads a database: give no PATH with it");
		return 2;
	}
	/* Never fail with EMFILE: take no more jobs than the descriptor limit allows. */
	unsigned long nofile = fidx_raise_nofile();
	unsigned long fit = nofile > FIDX_FDS_RESERVED + FIDX_FDS_PER_JOB
				    ? (nofile - FIDX_FDS_RESERVED) / FIDX_FDS_PER_JOB : 1;
	if (o.jobs > fit)
		o.jobs = (unsigned)fit;

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (!db_mode) {
		if (qa.db) {
			if (!(sdb.path = strdup(qa.db))) {
				fidx_error("out of memory");
				goto out;
			}
		} else if (make_temporary(&sdb) < 0) {
			goto out;
		}
		status = scan_paths(argv + optind, (size_t)(argc - optind), &sdb, o.jobs, o.io,
				    !quiet && isatty(STDERR_FILENO), &scan_spec, &st);
		if (status != 0)
			goto out;
		status = 2;
		qa.db = sdb.path;
		qa.scan = scan_spec;
	}
	if (!(q = fidx_query_open(&qa)))
		goto out;
	if (st && fidx_store_close(st) < 0) {
		st = NULL;
		fidx_error("cannot close database '%s'", fidx_quote(sdb.path));
		goto out;
	}
	st = NULL;
	if (!db_mode && warn_scan_errors(q) < 0)
		goto out;
	if (!(d = fidx_dupes_find(q, &o)))
		goto out;
	int changed = fidx_query_close(q);
	q = NULL;
	if (changed < 0)
		goto out;
	if (!sdb.temporary)
		keep_digests(d, fidx_cli_db(qa.db));
	if (d->interrupted) {
		status = 130;
		goto out;
	}

	fidx_out_begin();
	for (size_t i = 0; i < d->ngroups; i++) {
		if (qa.json)
			print_json(&d->groups[i]);
		else
			print_text(&d->groups[i], qa.nul);
	}
	if (!qa.json)
		print_total(d, qa.nul);
	status = fidx_out_end() < 0 ? 2 : d->ngroups ? 0 : 1;
out:
	fidx_dupes_free(d);
	if (fidx_query_close(q) < 0)
		status = 2;
	fidx_store_close(st);
	remove_temporary(&sdb);
	free(sdb.path);
	free(scan_spec);
	return status;
}
