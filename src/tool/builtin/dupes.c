/*
 * dupes.c - `fidx dupes`: files with identical content, largest waste first.
 *
 *   fidx dupes [DB]          the files of the database's selected scans
 *   fidx dupes PATH...       scans the PATHs first (metadata only, as `fidx scan
 *                            --hash none`) into a scratch store, removed
 *                            afterwards, or into --db FILE, which keeps it
 *
 * then core/dupes.c finds the groups, reading only files that could still
 * be duplicates, and this file prints them: text (a header line per group,
 * its paths, a blank line, a total at the end) or --json (one object per
 * group).  Digests computed on the way are kept in the database when it is
 * writable (not a scratch one), so a second run reads nothing it read
 * before.  Exit status: 0 duplicates listed, 1 none found, 2 usage or fatal
 * error, 130 interrupted.
 */
#include "builtin.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "color.h"
#include "diag.h"
#include "dupes.h"
#include "dupes_act.h"
#include "json.h"
#include "options.h"
#include "output.h"
#include "progress.h"
#include "query.h"
#include "scan.h"
#include "scanargs.h"
#include "signals.h"
#include "store.h"
#include "sysinfo.h"

/* Writes the part of the help that says how much is read. */
static void dupes_help_reads(FILE *out)
{
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
	      "algorithm, digest, files [{path, dev, ino, links [{path}]}].\n\n", out);
	fputs("Acting on them (--delete, --link, --reflink; files of this machine's scans):\n"
	      "the plan comes first: per group its line, then \"keep PATH\" and \"delete\n"
	      "PATH\" (\"link\", \"reflink\"; \"leave\" when no file matches --keep) for\n"
	      "every name, and a total.  Then, unless --dry-run, each file is checked\n"
	      "again just before it is touched: the kept copy and it must still have the\n"
	      "device, inode, size, mtime and ctime recorded, and their bytes must be\n"
	      "equal, compared in full (--reflink: the kernel compares them).  The last\n"
	      "copy is never removed; a name is replaced by a link atomically (a link\n"
	      "beside it exchanged with it); no symlink on a path is followed; a copy on\n"
	      "another file system than the kept one is left alone.  Each name done is\n"
	      "said on stdout (\"deleted PATH\"), each left alone on stderr with why.\n\n",
	      out);
}

/* What `fidx dupes --help` says around its options. */
static const struct fidx_help dupes_help = {
	.command = "dupes",
	.text = "usage: fidx dupes [OPTIONS] [DB]\n"
		"       fidx dupes [OPTIONS] PATH...\n\n"
		"List groups of regular files with identical content, largest waste first:\n"
		"waste = (files - 1) x size, the bytes that removing all copies but one would\n"
		"reclaim.  Hard links (one inode under several names) are one file: never\n"
		"duplicates of each other, listed together.  Symlinks are not followed.\n\n"
		"With PATHs, they are scanned first (metadata only) into a temporary\n"
		"database, removed afterwards, or into --db FILE, which keeps the scan.\n"
		"Otherwise the files of DB (default $FIDX_DB, else ./fidx.db) are used, as\n"
		"recorded.\n\n",
	.more = dupes_help_reads,
	.footer = "\nExit status: 0 duplicates listed (or every action done), 1 none found,\n"
		  "2 usage or fatal error, 3 some files left alone (said on stderr),\n"
		  "130 interrupted.\n",
};

/* Ends one line of output: '\n', or NUL with -0. */
static void end_line(bool nul)
{
	putc_unlocked(nul ? '\0' : '\n', stdout);
}

/* Prints a group as text: its header line, its paths, an empty line. */
static void print_text(const struct fidx_dupes_group *g, bool nul)
{
	fidx_dupes_print_header(g, nul);
	for (size_t f = 0; f < g->nfiles; f++) {
		const struct fidx_dupes_file *file = &g->files[f];
		fidx_out_host(file->host);
		fidx_color_path(file->paths[0], 'f', 0, nul);
		for (size_t p = 1; p < file->npaths; p++) {
			fputs("= ", stdout);
			fidx_out_host(file->host);
			fidx_color_path(file->paths[p], 'f', 0, nul);
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
		if (file->host) {
			fidx_json_path(stdout, "host", file->host);
			putc_unlocked(',', stdout);
		}
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
	char waste[FIDX_SIZE_TEXT];
	printf("%zu %s, %llu %s: %s reclaimable (%llu %s)", d->ngroups,
	       fidx_plural(d->ngroups, "group", "groups"), (unsigned long long)d->files,
	       fidx_plural(d->files, "file", "files"), fidx_size_text(d->waste, false, waste),
	       (unsigned long long)d->waste, fidx_plural(d->waste, "byte", "bytes"));
	if (d->left_out)
		printf("; %llu %s left out (changed or unreadable)", (unsigned long long)d->left_out,
		       fidx_plural(d->left_out, "file", "files"));
	end_line(nul);
}

/*
 * Scans the roots (metadata only) into the store st and sets *scan_spec to
 * the new scans' ids ("3,4") for --scan.  Returns 0, 130 when interrupted,
 * or 2 after printing why.
 */
static int scan_paths(char **args, size_t nargs, struct fidx_store *st, bool scratch,
		      unsigned jobs, enum fidx_io_mode io, bool progress, char **scan_spec)
{
	char **roots = calloc(nargs + 1, sizeof(*roots));
	char *json = NULL;
	struct fidx_scan_result result = {0};
	struct fidx_source *src = NULL;
	struct fidx_progress_counters counters = {0};
	struct fidx_error err;
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
	/* The database is never scanned (scan.c leaves its files out); a kept one is named. */
	if (!(json = fidx_scan_options_json(0, jobs, false, false, false, false,
					    io == FIDX_IO_HDD ? FIDX_IO_HDD : FIDX_IO_SSD, false,
					    NULL, 0, scratch ? NULL : fidx_store_files(st)[0]))) {
		fidx_error("out of memory");
		goto out;
	}
	struct fidx_walk_source_opts walk = {0};
	if (!(src = fidx_walk_source_new(&walk, &err))) {
		fidx_error("%s", err.msg);
		goto out;
	}
	struct fidx_scan_opts so = {
		.digests = 0, .jobs = jobs, .io = io == FIDX_IO_HDD ? FIDX_IO_HDD : FIDX_IO_SSD,
		.counters = progress ? &counters : NULL, .options_json = json,
		.cancel = &fidx_interrupted,
	};
	struct fidx_progress *line = progress ? fidx_progress_start(&counters, false) : NULL;
	int scanned = fidx_scan(st, src, (const char *const *)roots, nroots, &so, &result, &err);
	fidx_progress_stop(line);
	if (scanned < 0) {
		fidx_error("%s", err.msg);
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
out:
	fidx_source_free(src);
	for (size_t i = 0; roots && i < nargs; i++)
		free(roots[i]);
	free(roots);
	free(json);
	free(result.scan_ids);
	free(result.seals);
	return status;
}

/*
 * PATH mode: warns of every entry the scan recorded with an error (a folder
 * not listed, a file not stat'ed): what it hid cannot be compared.  Returns
 * 0, or -1 after printing why.
 */
static int warn_scan_errors(const struct fidx_query *q)
{
	struct fidx_rows_query rq;
	struct fidx_error err;
	const struct fidx_row *row;
	int rc;

	fidx_query_rows(q, FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_ERROR), FIDX_ROWS_PATH,
			&rq);
	rq.with_error = true;
	struct fidx_rows *it = fidx_store_rows(q->st, &rq, &err);
	if (!it)
		return fidx_query_fail(q, &err), -1;
	while ((rc = fidx_rows_next(it, &row, &err)) == 1)
		fidx_warn("'%s' left out: %s", fidx_quote(fidx_row_text(row, FIDX_COL_PATH)),
			  fidx_row_text(row, FIDX_COL_ERROR));
	fidx_rows_close(it);
	if (rc < 0)
		return fidx_query_fail(q, &err), -1;
	return 0;
}

/* Keeps the digests d computed in the database at path; says once when it cannot. */
static void keep_digests(const struct fidx_dupes *d, const char *path)
{
	struct fidx_error err;
	if (fidx_dupes_computed(d) == 0)
		return;
	struct fidx_store *st = fidx_store_open(path, FIDX_STORE_WRITE, NULL, &err);
	if (!st) {
		fidx_warn("the digests computed are not kept: %s", err.msg);
		return;
	}
	if (fidx_dupes_store(d, st, &err) < 0)
		fidx_warn("the digests computed are not kept: %s", err.msg);
	if (fidx_store_close(st, &err) < 0)
		fidx_warn("the digests computed are not kept: %s", err.msg);
}

/* One run of dupes: what to read, and the store that scanned PATHs into it. */
struct dupes_run {
	struct fidx_query_args qa;    /* DB and its scans */
	struct fidx_dupes_opts o;
	bool quiet;
	bool del, link, reflink;      /* the action asked for, if any */
	struct fidx_dupes_act act;
	struct fidx_store *st;        /* PATHs: the store they were scanned into, or NULL */
	char *scratch;                /* PATHs without --db: the scratch database, or NULL */
	char *scan_spec;              /* PATHs: their scans, as --scan takes them */
};

/*
 * Parses the command line into r, *db_mode set when it reads a database
 * rather than scanning PATHs.  Returns the index of the first PATH or DB
 * argument, FIDX_PARSE_HELP or FIDX_PARSE_ERROR (after printing why).
 */
static int parse_args(int argc, char **argv, struct dupes_run *r, bool *db_mode)
{
	struct fidx_option options[] = {
		FIDX_OPT_QUERY(&r->qa),
		FIDX_OPT_COLOR,
		FIDX_OPT_FLAG(0, "empty", &r->o.empty, "also list empty files (left out by default)"),
		FIDX_OPT_CALL('j', "jobs", "N", fidx_jobs_arg, &r->o.jobs,
			      "CPUs to hash on (default: usable CPUs), with 4 reading threads per job"),
		FIDX_OPT_CALL(0, "io", "MODE", fidx_io_arg, &r->o.io,
			      "how files are read: ssd (many at once), hdd (one at a time) or auto"
			      " (default: hdd when a file's disk reports itself rotational)"),
		FIDX_OPT_FLAG('q', "quiet", &r->quiet, "no progress line while scanning PATHs"),
		FIDX_OPT_FLAG(0, "delete", &r->del, "delete every copy but the one kept"),
		FIDX_OPT_FLAG(0, "link", &r->link,
			      "replace every copy but the one kept by a hard link to it"),
		FIDX_OPT_FLAG(0, "reflink", &r->reflink,
			      "share the kept copy's extents with every other copy (btrfs, XFS)"),
		FIDX_OPT_STRING(0, "keep", "WHICH", &r->act.keep,
				"the copy kept: first (by path, the default), newest, oldest (by"
				" mtime), or a PATTERN (glob on the path: the first file matching)"),
		FIDX_OPT_FLAG('n', "dry-run", &r->act.dry_run, "print the plan, act on nothing"),
		FIDX_OPT_STRING(0, "log", "FILE", &r->act.log,
				"append a JSON line per action (done or not, and why) to FILE"),
		FIDX_OPT_END,
	};
	int first = fidx_parse_options(argc, argv, options, &dupes_help);
	if (first <= 0)
		return first;
	if (r->del + r->link + r->reflink > 1) {
		fidx_error("--delete, --link and --reflink exclude each other");
		return FIDX_PARSE_ERROR;
	}
	r->act.how = r->link ? FIDX_DEDUPE_LINK : r->reflink ? FIDX_DEDUPE_REFLINK
							     : FIDX_DEDUPE_DELETE;
	r->act.nul = r->qa.nul;
	if (!(r->del || r->link || r->reflink) && (r->act.keep || r->act.dry_run || r->act.log)) {
		fidx_error("--keep, --dry-run and --log go with --delete, --link or --reflink");
		return FIDX_PARSE_ERROR;
	}
	if ((r->del || r->link || r->reflink) && r->o.empty) {
		fidx_error("--empty lists empty files; they are never acted on (their names are"
			   " all they hold: markers such as __init__.py or .gitkeep)");
		return FIDX_PARSE_ERROR;
	}
	if ((r->del || r->link || r->reflink) && r->qa.json) {
		fidx_error("--json lists groups; the plan of --delete, --link and --reflink is text");
		return FIDX_PARSE_ERROR;
	}
	if (!r->act.keep)
		r->act.keep = "first";
	*db_mode = first == argc || fidx_query_db_arg(argv[first], &r->qa);
	if (*db_mode && first + 1 < argc) {
		fidx_error("unexpected argument '%s' after the database (see 'fidx dupes --help')",
			   fidx_quote(argv[first + 1]));
		return FIDX_PARSE_ERROR;
	}
	if (!*db_mode && r->qa.scan) {
		fidx_error("--scan reads a database: give no PATH with it");
		return FIDX_PARSE_ERROR;
	}
	return first;
}

/*
 * Scans the nargs PATHs of args into --db, else a scratch database, r->qa
 * then naming that database and those scans.  Returns 0, or an exit status
 * after printing why.
 */
static int scan_first(struct dupes_run *r, char **args, size_t nargs)
{
	struct fidx_error err;
	if (!r->qa.db && !(r->scratch = fidx_store_scratch_new("fidx-dupes", &err))) {
		fidx_error("%s", err.msg);
		return 2;
	}
	if (!(r->st = fidx_store_open(r->scratch ? r->scratch : r->qa.db,
				      r->scratch ? FIDX_STORE_SCRATCH : FIDX_STORE_WRITE, NULL,
				      &err))) {
		fidx_error("%s", err.msg);
		return 2;
	}
	int status = scan_paths(args, nargs, r->st, r->scratch != NULL, r->o.jobs, r->o.io,
				!r->quiet && isatty(STDERR_FILENO), &r->scan_spec);
	if (status != 0)
		return status;
	if (r->scratch)
		r->qa.db = r->scratch;
	r->qa.scan = r->scan_spec;
	return 0;
}

/* Prints the groups of d and their total on stdout.  Returns the exit status. */
static int print_groups(const struct fidx_dupes *d, const struct fidx_query_args *qa)
{
	fidx_out_begin();
	for (size_t i = 0; i < d->ngroups; i++) {
		if (qa->json)
			print_json(&d->groups[i]);
		else
			print_text(&d->groups[i], qa->nul);
	}
	if (!qa->json)
		print_total(d, qa->nul);
	return fidx_out_end() < 0 ? 2 : d->ngroups ? 0 : 1;
}

int cmd_dupes(int argc, char **argv, const struct fidx_command *cmd)
{
	struct dupes_run r = {
		.o = {.jobs = fidx_usable_cpus(), .io = FIDX_IO_AUTO, .cancel = &fidx_interrupted},
	};
	struct fidx_query *q = NULL;
	struct fidx_dupes *d = NULL;
	struct fidx_error err;
	bool db_mode = true;
	int status = 2;

	(void)cmd;
	int first = parse_args(argc, argv, &r, &db_mode);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 0 : 2;
	/* Never fail with EMFILE: take no more jobs than the descriptor limit allows. */
	unsigned long limit;
	r.o.jobs = fidx_jobs_fit(r.o.jobs, &limit);
	fidx_catch_signals();
	if (!db_mode && (status = scan_first(&r, argv + first, (size_t)(argc - first))) != 0)
		goto out;
	status = 2;
	/*
	 * The store that scanned is closed once the database is open for
	 * reading: the last connection to close folds the WAL back into the
	 * file, which a scratch database does not need.
	 */
	if (!(q = fidx_query_open(&r.qa, NULL)))
		goto out;
	bool acting = r.del || r.link || r.reflink;
	if (acting && fidx_dupes_act_check(q) < 0)
		goto out;
	int closed = fidx_store_close(r.st, &err);
	r.st = NULL;
	if (closed < 0) {
		fidx_error("cannot close database '%s'", fidx_quote(r.qa.db));
		goto out;
	}
	if (!db_mode && warn_scan_errors(q) < 0)
		goto out;
	if (!(d = fidx_dupes_find(q->st, &q->sel, &r.o, &err))) {
		fidx_query_fail(q, &err);
		goto out;
	}
	for (size_t i = 0; d->left && i < d->left_out; i++)
		if (d->left[i].host)
			fidx_warn("'%s:%s' left out: %s", fidx_quote(d->left[i].host),
				  fidx_quote(d->left[i].path), d->left[i].error);
		else
			fidx_warn("'%s' left out: %s", fidx_quote(d->left[i].path), d->left[i].error);
	int changed = fidx_query_close(q);
	q = NULL;
	if (changed < 0)
		goto out;
	if (!r.scratch)
		keep_digests(d, fidx_db_name(r.qa.db));
	status = d->interrupted ? 130 : acting ? fidx_dupes_act_run(d, &r.act)
					       : print_groups(d, &r.qa);
out:
	fidx_dupes_free(d);
	if (fidx_query_close(q) < 0)
		status = 2;
	fidx_store_close(r.st, NULL);
	if (r.scratch)
		fidx_store_scratch_remove(r.scratch);
	free(r.scratch);
	free(r.scan_spec);
	return status;
}
