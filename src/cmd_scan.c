/*
 * cmd_scan.c - `fidx scan`: the command line of the scan pipeline.
 *
 * Parses options (one table gives both getopt_long()'s list and --help),
 * checks the roots before the database is touched, opens the store, runs
 * fidx_scan() with SIGINT/SIGTERM wired to its cancel flag, and prints the
 * summary.  Exit status: 0 every entry read, 1 some entries have errors,
 * 2 usage or fatal error, 130 interrupted.
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

#include "dbfile.h"
#include "diag.h"
#include "fdutil.h"
#include "hash.h"
#include "interactive.h"
#include "blockdev.h"
#include "cli.h"
#include "json.h"
#include "output.h"
#include "progress.h"
#include "query.h"
#include "reuse.h"
#include "scan.h"
#include "scanargs.h"
#include "store.h"
#include "store_sqlite.h"
#include "sysinfo.h"

enum {
	OPT_HASH = 256,
	OPT_XDEV,
	OPT_EXCLUDE,
	OPT_FOLLOW,
	OPT_NO_STAT,
	OPT_IO,
	OPT_DROP_CACHE,
	OPT_PROGRESS,
	OPT_ERRORS,
	OPT_VERSION,
	OPT_REHASH,
	OPT_RESUME,
};

/* The options of `fidx scan`, in the order --help lists them. */
static const struct fidx_option scan_options[] = {
	{{"db", required_argument, NULL, 'o'}, "FILE",
	 "database to add the scan to (default $FIDX_DB, else\n"
	 "                       ./fidx.db)"},
	{{"hash", required_argument, NULL, OPT_HASH}, "LIST",
	 "digests: md5,sha1,sha256,sha512,xxh128 or none (default sha256;\n"
	 "                       with -i md5,sha256)"},
	{{"jobs", required_argument, NULL, 'j'}, "N",
	 "CPUs to hash on (default: usable CPUs); the walk, and the reads on an\n"
	 "                       SSD, run 4 threads per job, at most 32 unless N is larger"},
	{{"io", required_argument, NULL, OPT_IO}, "MODE",
	 "how files are read: ssd (many at once), hdd (one at a time, in on-disk\n"
	 "                       order, hashed in parallel) or auto (default: hdd when a\n"
	 "                       PATH is on a rotational disk, as /sys/block tells; a\n"
	 "                       virtio disk cannot tell and counts as ssd)"},
	{{"drop-cache", no_argument, NULL, OPT_DROP_CACHE}, NULL,
	 "drop each file's pages from the page cache once hashed, so that a scan\n"
	 "                       of a huge disk does not evict everything else"},
	{{"xdev", no_argument, NULL, OPT_XDEV}, NULL,
	 "stay on each root's filesystem (mount points are recorded, not entered)"},
	{{"exclude", required_argument, NULL, OPT_EXCLUDE}, "GLOB",
	 "leave out matching entries (repeatable); a GLOB with '/' matches the path\n"
	 "                       below the root, one without matches the name"},
	{{"follow", no_argument, NULL, OPT_FOLLOW}, NULL,
	 "follow symlinks (loops are detected and recorded as errors)"},
	{{"no-stat", no_argument, NULL, OPT_NO_STAT}, NULL,
	 "record paths and types only, from the directory listings: no metadata\n"
	 "                       and no digests (implies --hash none); the fastest inventory"},
	{{"rehash", no_argument, NULL, OPT_REHASH}, NULL,
	 "read every file; by default a file whose device, inode, size, mtime and\n"
	 "                       ctime are those the newest complete scan of the same PATH\n"
	 "                       (with the digests asked for) recorded takes its digests"},
	{{"resume", no_argument, NULL, OPT_RESUME}, NULL,
	 "continue the newest scan of each PATH (without PATH: the newest scan in the\n"
	 "                       database) that was interrupted, failed or killed, with its\n"
	 "                       own --hash, --xdev, --follow, --no-stat and --exclude: what\n"
	 "                       it recorded is kept, the rest is scanned"},
	{{"quiet", no_argument, NULL, 'q'}, NULL, "no progress line"},
	{{"progress", no_argument, NULL, OPT_PROGRESS}, NULL,
	 "progress line even when stderr is not a terminal"},
	{{"errors", no_argument, NULL, OPT_ERRORS}, NULL,
	 "after the summary, list every entry recorded with an error"},
	{{"interactive", no_argument, NULL, 'i'}, NULL,
	 "choose a mounted filesystem, workers and sub-path at prompts; digests\n"
	 "                       md5,sha256 unless --hash is given (what GDBack's\n"
	 "                       data view, hash_md5, needs)"},
	{{"help", no_argument, NULL, 'h'}, NULL, "show this help"},
	{{"version", no_argument, NULL, OPT_VERSION}, NULL, "show versions and exit"},
};
#define NOPTIONS (sizeof(scan_options) / sizeof(scan_options[0]))

/* Prints the help of `fidx scan`, generated from scan_options. */
static void scan_usage(FILE *out)
{
	fputs("usage: fidx scan [OPTIONS] PATH...\n"
	      "       fidx scan --resume [OPTIONS] [PATH...]\n"
	      "       fidx scan -i [OPTIONS]\n\n"
	      "Record every entry under and including each PATH (metadata, symlink targets\n"
	      "and digests of regular files) into a SQLite database, as one new scan per\n"
	      "PATH.  Earlier scans in the database are never modified (--resume continues\n"
	      "an unfinished one).  A file unchanged since the newest complete scan of its\n"
	      "PATH (same device, inode, size, mtime and ctime, the times at least 0.1 s\n"
	      "older than that scan's start, 2 s when in whole seconds) is not read again:\n"
	      "its digests are taken from that scan (see --rehash).\n\n"
	      "Options:\n", out);
	fidx_cli_usage(out, scan_options, NOPTIONS);
	fputs("\nExit status: 0 all entries read, 1 some entries recorded with errors,\n"
	      "2 usage or fatal error (also a summary that cannot be written: the scan is\n"
	      "kept), 130 interrupted (the scan is kept, marked 'interrupted'; the summary\n"
	      "counts the entries left unfinished apart from the errors, and stderr gives\n"
	      "the 'fidx scan --resume' command that continues it).\n", out);
}

static atomic_bool interrupted;

/* SIGINT/SIGTERM/SIGHUP: ask the scan to stop; a second signal kills as usual. */
static void on_signal(int sig)
{
	atomic_store(&interrupted, true);
	signal(sig, SIG_DFL);
}

/* Prints the summary of a finished scan on stdout: one line, then a line per seal. */
static void print_summary(const struct fidx_scan_result *r, const char *db, size_t nroots,
			  const char *root, bool digests)
{
	char bytes[32], rate[32];
	fidx_format_bytes(bytes, sizeof(bytes), r->bytes);
	/* The rate of what was read: a rescan that reused every digest read nothing. */
	if (r->bytes_hashed == 0)
		snprintf(rate, sizeof(rate), "nothing read");
	else
		fidx_format_bytes(rate, sizeof(rate),
				  r->seconds > 0 ? (uint64_t)(r->bytes_hashed / r->seconds) : 0);
	if (nroots == 1) {
		printf("scan %lld of '%s'", (long long)r->scan_ids[0], fidx_quote(root));
	} else {
		printf("scans");
		for (size_t i = 0; i < nroots; i++)
			printf("%s%lld", i ? ", " : " ", (long long)r->scan_ids[i]);
		printf(" (%zu roots)", nroots);
	}
	/* Entries the interruption left unfinished are not errors of the tree. */
	uint64_t errors = r->errors - r->unfinished;
	printf(" %s: %llu %s, %llu %s, %llu %s, %s, %llu %s",
	       r->interrupted ? "interrupted" : "complete", (unsigned long long)r->entries,
	       fidx_plural(r->entries, "entry", "entries"), (unsigned long long)r->files,
	       fidx_plural(r->files, "file", "files"), (unsigned long long)r->dirs,
	       fidx_plural(r->dirs, "dir", "dirs"), bytes, (unsigned long long)errors,
	       fidx_plural(errors, "error", "errors"));
	if (r->unfinished)
		printf(", %llu left unfinished", (unsigned long long)r->unfinished);
	if (digests)
		printf(", %llu hashed, %llu reused", (unsigned long long)r->hashed,
		       (unsigned long long)r->reused);
	printf(" in %.2f s (%.0f entries/s, %s%s) -> '%s'\n", r->seconds,
	       r->seconds > 0 ? r->entries / r->seconds : 0.0, rate,
	       r->bytes_hashed ? "/s read" : "", fidx_quote(db));
	/* Then each complete scan's seal, for the examiner's notes (fidx verify --seal). */
	for (size_t i = 0; r->seals && i < r->nscans; i++) {
		if (!r->seals[i].sealed)
			continue;
		printf("seal sha256:");
		for (size_t b = 0; b < sizeof(r->seals[i].sha256); b++)
			printf("%02x", r->seals[i].sha256[b]);
		printf(" (scan %lld)\n", (long long)r->scan_ids[i]);
	}
}

/*
 * After an interruption: says on stderr what was left and the command that
 * continues the scan, the database (and the roots, when several) quoted
 * for a shell.
 */
static void print_resume_hint(const struct fidx_scan_result *r, const char *db, char **roots,
			      size_t nroots)
{
	char *cmd = NULL, *quoted = fidx_shell_quoted(db);
	size_t len = 0;
	FILE *f = quoted ? open_memstream(&cmd, &len) : NULL;
	if (f) {
		fprintf(f, "fidx scan --resume --db %s", quoted);
		for (size_t i = 0; nroots > 1 && i < nroots; i++) {
			fputc(' ', f);
			fidx_shell_quote(f, roots[i]);
		}
		if (fclose(f) != 0) {
			free(cmd);
			cmd = NULL;
		}
	}
	if (r->unfinished)
		fidx_error("interrupted: %llu %s left unfinished (not read or not hashed), kept"
			   " as recorded; continue the scan with: %s", (unsigned long long)r->unfinished,
			   fidx_plural(r->unfinished, "entry", "entries"),
			   cmd ? cmd : "fidx scan --resume");
	else
		fidx_error("interrupted: what was found is recorded; continue the scan with: %s",
			   cmd ? cmd : "fidx scan --resume");
	free(cmd);
	free(quoted);
}

/*
 * Flushes the summary.  When it cannot be written (a full disk, a closed
 * pipe), says so in one line that names what was kept and how to read its
 * seal again, and returns true.
 */
static bool summary_lost(const struct fidx_scan_result *r, const char *db)
{
	char ids[128] = "", *note = NULL, *quoted = fidx_shell_quoted(db);
	size_t n = 0;
	for (size_t i = 0; i < r->nscans && n < sizeof(ids); i++)
		n += (size_t)snprintf(ids + n, sizeof(ids) - n, "%s%lld", i ? "," : "",
				      (long long)r->scan_ids[i]);
	if (quoted && asprintf(&note, "scan%s %s %s kept; %s: fidx verify --db %s --scan %s",
			       r->nscans > 1 ? "s" : "", ids, r->nscans > 1 ? "are" : "is",
			       r->nscans > 1 ? "their seals" : "its seal", quoted, ids) < 0)
		note = NULL;
	bool lost = fidx_out_end_note(note ? note : "the scan is kept") < 0;
	free(note);
	free(quoted);
	return lost;
}

/* Copies the error list gathered during the scan to stdout. */
static void print_errors(FILE *list)
{
	char buf[65536];
	size_t n;
	rewind(list);
	while ((n = fread(buf, 1, sizeof(buf), list)) > 0)
		fwrite(buf, 1, n, stdout);
}

/* What --resume and the incremental rescan take from the database, per root. */
struct plan {
	int64_t *resume_ids;                 /* scan continued, 0 for a new one */
	int64_t *seen_pids;                  /* its scan.pid as read (0: none), for claim() */
	int64_t *base_ids;                   /* scan digests are reused from, 0 for none */
	struct fidx_pathset **resumed_paths; /* paths the continued scan holds */
	struct fidx_reuse *reuse;            /* NULL with --rehash or no digests */
	struct fidx_scan_row row;            /* the first root's scan --resume continues */
};

/* Frees what a plan holds. */
static void plan_free(struct plan *p, size_t nroots)
{
	for (size_t r = 0; p->resumed_paths && r < nroots; r++)
		fidx_pathset_free(p->resumed_paths[r]);
	free(p->resumed_paths);
	free(p->resume_ids);
	free(p->seen_pids);
	free(p->base_ids);
	fidx_reuse_free(p->reuse);
	fidx_scan_row_free(&p->row);
}

/*
 * Finds the scan --resume continues for root, the newest scan of it, into
 * *row and checks that it can be continued.  Prints one line and returns -1
 * when not.
 */
static int find_resumable(sqlite3 *db, const char *dbpath, const char *root,
			  struct fidx_scan_row *row)
{
	static const char *const any[] = {"running", "interrupted", "failed", "complete", NULL};
	char *errmsg = NULL;

	int found = fidx_scan_row_newest(db, root, any, 0, row, &errmsg);
	if (found < 0) {
		fidx_error("%s", errmsg ? errmsg : "out of memory");
		free(errmsg);
		return -1;
	}
	if (found == 0) {
		fidx_error("nothing to resume: database '%s' holds no scan of '%s'",
			   fidx_quote(dbpath), fidx_quote(root));
		return -1;
	}
	if (strcmp(row->status, "complete") == 0)
		fidx_error("nothing to resume: the newest scan of '%s' (scan %lld) is complete",
			   fidx_quote(row->root), (long long)row->id);
	else if (fidx_writer_alive(row->pid, row->host) == 1)
		fidx_error("cannot resume scan %lld of '%s': process %lld is %s it",
			   (long long)row->id, fidx_quote(row->root), (long long)row->pid,
			   strcmp(row->status, "running") == 0 ? "still writing" : "taking up");
	else
		return 0;
	fidx_scan_row_free(row);
	return -1;
}

/*
 * Takes scan id (of root) up for this process before anything is written to
 * it: sets its pid to this process, provided it is still seen_pid (0: none),
 * as read, so that of two `fidx scan --resume` started at once only one
 * continues it (the other finds the pid alive, or its own claim refused).
 * The status stays as it was until the store takes the scan up
 * (fidx_store_resume_scan() sets it 'running'): a run that fails before
 * leaves it as it was.  Prints one line and returns -1 when not.
 */
static int claim(sqlite3 *db, const char *dbpath, const char *root, int64_t id,
		 int64_t seen_pid)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(db, "UPDATE scan SET pid = ? WHERE id = ?"
				    " AND status <> 'complete' AND pid IS ?", -1, &s, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, getpid());
		sqlite3_bind_int64(s, 2, id);
		if (seen_pid > 0)
			sqlite3_bind_int64(s, 3, seen_pid);
		rc = sqlite3_step(s);
	}
	int changed = rc == SQLITE_DONE ? sqlite3_changes(db) : -1;
	if (changed < 0)
		fidx_error("cannot write database '%s': %s", fidx_quote(dbpath), fidx_sqlite_why(db));
	else if (changed == 0)
		fidx_error("cannot resume scan %lld of '%s': another fidx took it up first",
			   (long long)id, fidx_quote(root));
	sqlite3_finalize(s);
	return changed == 1 ? 0 : -1;
}

/*
 * Sets *root to the root of the newest scan in the database at dbpath (what
 * --resume without PATH continues; origin follows the path in messages).
 * Prints one line and returns -1 when there is none or the file is not a
 * fidx database.
 */
static int newest_root(const char *dbpath, const char *origin, char **root)
{
	uint32_t version;
	int kind = fidx_dbfile_probe(dbpath, &version);

	if (kind == FIDX_DBFILE_MISSING || kind == FIDX_DBFILE_EMPTY) {
		fidx_error("nothing to resume: no database '%s'%s", fidx_quote(dbpath), origin);
		return -1;
	}
	if (kind != FIDX_DBFILE_FIDX) {
		if (kind < 0)
			fidx_error("cannot open database '%s'%s: %s", fidx_quote(dbpath), origin,
				   strerror(errno));
		else
			fidx_error("'%s'%s is not a fidx database", fidx_quote(dbpath), origin);
		return -1;
	}
	/* Read as queries read (query.h): a database at rest is left as it was. */
	struct fidx_query_args a = {.db = dbpath, .every_scan = true, .raw = true};
	struct fidx_query *q = fidx_query_open(&a);
	if (!q)
		return -1;
	if (q->nscans == 0)
		fidx_error("nothing to resume: database '%s'%s holds no scan", fidx_quote(dbpath),
			   origin);
	else if (!(*root = strdup(q->roots[q->nscans - 1])))
		fidx_error("out of memory");
	fidx_query_close(q);
	return *root ? 0 : -1;
}

/*
 * Writes "PATH: ERROR" to list for each row with an error that scan id keeps
 * when resumed, as the scan writes those it records, so that --errors lists
 * every error the scan row counts.  Prints one line and returns -1 on failure.
 */
static int list_kept_errors(sqlite3 *db, const char *dbpath, int64_t id, FILE *list)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(db, "SELECT path, error FROM file WHERE scan_id = ?"
				    " AND error NOT IN ('" FIDX_ERROR_NOT_READ "', '"
				    FIDX_ERROR_NOT_HASHED "')", -1, &s, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, id);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW)
			fprintf(list, "%s: %s\n", fidx_quote((const char *)sqlite3_column_text(s, 0)),
				(const char *)sqlite3_column_text(s, 1));
	}
	if (rc != SQLITE_DONE)
		fidx_error("cannot read database '%s': %s", fidx_quote(dbpath), fidx_sqlite_why(db));
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Whether two scans were made with the same content-shaping options. */
static bool same_shape(const struct fidx_scan_row *a, const struct fidx_scan_row *b)
{
	if (a->digests != b->digests || a->xdev != b->xdev || a->follow != b->follow ||
	    a->no_stat != b->no_stat || a->nexcludes != b->nexcludes)
		return false;
	for (size_t i = 0; i < a->nexcludes; i++)
		if (strcmp(a->excludes[i], b->excludes[i]) != 0)
			return false;
	return true;
}

/*
 * Fills the plan for roots: with --resume, the scan each one continues (its
 * paths recorded so far; its errors written to error_list, when not NULL);
 * unless rehash, the digests of the newest complete scan of each root before
 * it that recorded every digest asked for (a quick `--hash none` scan in
 * between does not make the next one read all).  Reads the database with a
 * connection of its own, which with --resume then claims the scans.  Prints
 * one line and returns -1 on failure.
 */
static int make_plan(const char *dbpath, char **roots, size_t nroots, bool resume, bool rehash,
		     unsigned digests, FILE *error_list, struct plan *p)
{
	static const char *const complete[] = {"complete", NULL};
	sqlite3 *db = NULL;
	char *errmsg = NULL;
	int ret = -1;

	p->resume_ids = calloc(nroots, sizeof(*p->resume_ids));
	p->seen_pids = calloc(nroots, sizeof(*p->seen_pids));
	p->base_ids = calloc(nroots, sizeof(*p->base_ids));
	p->resumed_paths = calloc(nroots, sizeof(*p->resumed_paths));
	if (!p->resume_ids || !p->seen_pids || !p->base_ids || !p->resumed_paths) {
		fidx_error("out of memory");
		return -1;
	}
	if (sqlite3_open_v2(dbpath, &db, resume ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY,
			    NULL) != SQLITE_OK || fidx_sqlite_harden(db, !resume) < 0) {
		fidx_error("cannot read database '%s': %s", fidx_quote(dbpath),
			   fidx_sqlite_why(db));
		goto out;
	}
	/* The store's connection checkpoints, minding the readers (store_sqlite.c). */
	sqlite3_wal_autocheckpoint(db, 0);
	sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_busy_timeout(db, 10000);
	for (size_t r = 0; r < nroots; r++) {
		if (resume) {
			struct fidx_scan_row row;
			if (find_resumable(db, dbpath, roots[r], &row) < 0)
				goto out;
			p->resume_ids[r] = row.id;
			p->seen_pids[r] = row.pid;
			if (r == 0) {
				p->row = row;
				digests = row.digests;
			} else {
				bool same = same_shape(&p->row, &row);
				fidx_scan_row_free(&row);
				if (!same) {
					fidx_error("cannot resume scans %lld and %lld together: they were"
						   " made with different options; resume them one at a time",
						   (long long)p->resume_ids[0], (long long)p->resume_ids[r]);
					goto out;
				}
			}
			if (!(p->resumed_paths[r] = fidx_pathset_load(db, p->resume_ids[r], &errmsg)))
				goto fail;
			if (error_list && list_kept_errors(db, dbpath, p->resume_ids[r], error_list) < 0)
				goto out;
		}
		if (rehash || !digests)
			continue;
		/* The newest complete scan of the root that recorded these digests. */
		struct fidx_scan_row base;
		int64_t before = p->resume_ids[r];
		int found;
		while ((found = fidx_scan_row_newest(db, roots[r], complete, before, &base,
						     &errmsg)) == 1 &&
		       (base.digests & digests) != digests) {
			before = base.id;
			fidx_scan_row_free(&base);
		}
		if (found < 0)
			goto fail;
		if (found == 0)
			continue;
		p->base_ids[r] = base.id;
		fidx_scan_row_free(&base);
		if (p->reuse ? fidx_reuse_load_more(p->reuse, db, p->base_ids[r], &errmsg) < 0
			     : !(p->reuse = fidx_reuse_load(db, p->base_ids[r], digests, &errmsg)))
			goto fail;
	}
	for (size_t r = 0; resume && r < nroots; r++)
		if (claim(db, dbpath, roots[r], p->resume_ids[r], p->seen_pids[r]) < 0)
			goto out;
	ret = 0;
	goto out;
fail:
	fidx_error("%s", errmsg ? errmsg : "out of memory");
	free(errmsg);
out:
	sqlite3_close(db);
	return ret;
}

/* Whether the WAL beside the database at path is missing or empty. */
static bool wal_empty(const char *path)
{
	char *wal;
	struct stat sb;
	if (asprintf(&wal, "%s-wal", path) < 0)
		return false;
	bool empty = stat(wal, &sb) < 0 ? errno == ENOENT : sb.st_size == 0;
	free(wal);
	return empty;
}

int cmd_scan(int argc, char **argv)
{
	struct option longopts[NOPTIONS + 1];
	fidx_cli_longopts(scan_options, NOPTIONS, longopts);

	const char *db = NULL, *hash = "sha256";
	unsigned jobs = fidx_usable_cpus(), digests = 0;
	bool xdev = false, follow = false, no_stat = false, quiet = false, force_progress = false;
	bool hash_given = false, drop_cache = false, rehash = false, resume = false;
	bool shape_given = false; /* an option --resume takes from the scan it continues */
	enum fidx_io_mode io = FIDX_IO_AUTO;
	bool list_errors = false, interactive = false;
	char **excludes = calloc(argc + 1, sizeof(*excludes));
	size_t nexcludes = 0;
	char **roots = NULL;
	size_t nroots = 0;
	struct fidx_store *st = NULL;
	char *json = NULL, *errmsg = NULL, *database = NULL;
	FILE *error_list = NULL;
	struct fidx_interactive_choice choice = {0};
	struct fidx_scan_result result = {0};
	struct plan plan = {0};
	char *resume_root = NULL;
	int status = 2;
	bool made_db = false; /* the database is made by this run */

	if (!excludes) {
		fidx_error("out of memory");
		return 2;
	}
	optind = 1;
	opterr = 0; /* our own one-line messages */
	int c;
	while ((c = getopt_long(argc, argv, ":o:j:qih", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': db = optarg; break;
		case OPT_HASH: hash = optarg; hash_given = shape_given = true; break;
		case 'j':
			if (fidx_jobs_arg(optarg, &jobs) < 0)
				goto out;
			break;
		case OPT_XDEV: xdev = shape_given = true; break;
		case OPT_EXCLUDE: excludes[nexcludes++] = optarg; shape_given = true; break;
		case OPT_FOLLOW: follow = shape_given = true; break;
		case OPT_NO_STAT: no_stat = shape_given = true; break;
		case OPT_REHASH: rehash = true; break;
		case OPT_RESUME: resume = true; break;
		case OPT_IO:
			if (fidx_io_mode_parse(optarg, &io) < 0) {
				fidx_error("invalid --io '%s': expected ssd, hdd or auto",
					   fidx_quote(optarg));
				goto out;
			}
			break;
		case OPT_DROP_CACHE: drop_cache = true; break;
		case 'q': quiet = true; break;
		case OPT_PROGRESS: force_progress = true; break;
		case OPT_ERRORS: list_errors = true; break;
		case 'i': interactive = true; break;
		case 'h': scan_usage(stdout); status = 0; goto out;
		case OPT_VERSION: print_version(); status = 0; goto out;
		default:
			fidx_cli_bad_option("scan", c, argv, scan_options, NOPTIONS);
			goto out;
		}
	}
	/* The interactive flow is GDBack's point-and-go: MD5 too, for its `data` view. */
	if (interactive && !hash_given)
		hash = "md5,sha256";
	db = fidx_cli_db(db);
	const char *origin = fidx_cli_db_origin(db);
	if (no_stat) {
		if (hash_given && strcmp(hash, "none") != 0) {
			fidx_error("--no-stat records no digests: drop --hash '%s' or --no-stat",
				   fidx_quote(hash));
			goto out;
		}
		hash = "none";
	}
	if (fidx_digest_list_parse(hash, &digests) < 0) {
		fidx_error("invalid --hash '%s': expected md5, sha1, sha256, sha512, xxh128 "
			   "(comma-separated) or none", fidx_quote(hash));
		goto out;
	}

	if (resume && (shape_given || interactive)) {
		fidx_error("--resume continues a scan with the options it was made with: drop %s",
			   interactive ? "-i" : "--hash, --xdev, --follow, --no-stat and --exclude");
		goto out;
	}
	if (interactive) {
		if (optind < argc) {
			fidx_error("-i chooses the path itself: give no PATH with it");
			goto out;
		}
		if (!isatty(STDIN_FILENO)) {
			fidx_error("-i needs a terminal on standard input");
			goto out;
		}
		if (fidx_interactive_ask(stdin, stderr, jobs, &choice) < 0)
			goto out;
		jobs = choice.jobs;
		xdev = true; /* a filesystem was chosen: stay on it */
	} else if (optind == argc && !resume) {
		fidx_error("no PATH to scan (see 'fidx scan --help')");
		goto out;
	}

	/* Never fail with EMFILE: take no more jobs than the descriptor limit allows. */
	unsigned long nofile = fidx_raise_nofile();
	unsigned long fit = nofile > FIDX_FDS_RESERVED + FIDX_FDS_PER_JOB
				    ? (nofile - FIDX_FDS_RESERVED) / FIDX_FDS_PER_JOB
				    : 1;
	if (jobs > fit) {
		fidx_warn("--jobs %u lowered to %lu: the open file limit (%lu) has room for no more",
			  jobs, fit, nofile);
		jobs = fit;
	}
	/* --resume without PATH continues the newest scan: its root is the PATH. */
	if (resume && optind == argc && newest_root(db, origin, &resume_root) < 0)
		goto out;
	/* Check every root before the database is created or touched. */
	size_t given = interactive || resume_root ? 1 : (size_t)(argc - optind);
	roots = calloc(given, sizeof(*roots));
	if (!roots) {
		fidx_error("out of memory");
		goto out;
	}
	bool warned = false, spinning = false, untold = false;
	for (size_t i = 0; i < given; i++) {
		const char *arg = interactive ? choice.root : resume_root ? resume_root : argv[optind + i];
		struct stat sb;
		if (stat(arg, &sb) < 0 && lstat(arg, &sb) < 0) {
			fidx_error("cannot scan '%s': %s", fidx_quote(arg), strerror(errno));
			goto out;
		}
		if (!(roots[nroots++] = fidx_root_path(arg))) {
			fidx_error("cannot scan '%s': %s", fidx_quote(arg), strerror(errno));
			goto out;
		}
		/* The same root given twice ("small ./small") is one scan. */
		bool again = false;
		for (size_t k = 0; k + 1 < nroots && !again; k++)
			again = strcmp(roots[k], roots[nroots - 1]) == 0;
		if (again) {
			free(roots[--nroots]);
			continue;
		}
		/* A device that cannot be told (tmpfs, NFS, virtio...) is taken not to spin. */
		if (io == FIDX_IO_AUTO) {
			int rot = fidx_dev_rotational(sb.st_dev);
			spinning |= rot == 1;
			untold |= rot < 0 && errno == EOPNOTSUPP;
		}
		if (!warned && geteuid() != 0 && (sb.st_uid != geteuid() || !S_ISDIR(sb.st_mode) ||
						  access(arg, R_OK | X_OK) != 0)) {
			fidx_warn("not running as root: entries this user cannot read will be "
				  "recorded with their error");
			warned = true;
		}
	}

	bool show_progress = force_progress || (!quiet && isatty(STDERR_FILENO));
	if (io == FIDX_IO_AUTO) {
		io = spinning ? FIDX_IO_HDD : FIDX_IO_SSD;
		/* Whoever watches should know how files are read, and why. */
		if (spinning && digests && show_progress)
			fprintf(stderr, "fidx: a path is on a disk that reports itself rotational: "
					"files are read one at a time, in on-disk order "
					"(--io=ssd reads many at once)\n");
		else if (untold && digests && show_progress)
			fprintf(stderr, "fidx: a path is on a virtual (virtio) disk, which cannot tell "
					"whether it spins: files are read many at once (--io=hdd reads "
					"one at a time, in on-disk order)\n");
	}
	if (list_errors && !(error_list = tmpfile())) {
		fidx_error("cannot make a temporary file for --errors: %s", strerror(errno));
		goto out;
	}
	if (resume && !resume_root && access(db, F_OK) != 0) {
		fidx_error("nothing to resume: no database '%s'%s", fidx_quote(db), origin);
		goto out;
	}
	struct fidx_store_opts sopts = {0};
	made_db = access(db, F_OK) != 0 && errno == ENOENT;
	if (!(st = fidx_store_open(db, &sopts, &errmsg))) {
		fidx_error("%s%s", errmsg ? errmsg : "out of memory", origin);
		goto out;
	}
	if (make_plan(db, roots, nroots, resume, rehash, digests, error_list, &plan) < 0)
		goto out;
	/* The database is never scanned (scan.c leaves its files out): the row says where it was. */
	if (!(database = realpath(db, NULL)) ||
	    !(json = fidx_scan_options_json(digests, jobs, xdev, follow, no_stat, io, drop_cache,
					    (const char *const *)excludes, nexcludes, database))) {
		fidx_error("cannot scan into '%s': %s", fidx_quote(db), strerror(errno));
		goto out;
	}
	/* Whoever watches should know what is not read again, and why. */
	for (size_t r = 0; show_progress && r < nroots; r++)
		if (plan.resume_ids[r])
			fprintf(stderr, "fidx: resuming scan %lld of '%s': %zu %s recorded before"
				" %s kept\n", (long long)plan.resume_ids[r], fidx_quote(roots[r]),
				fidx_pathset_count(plan.resumed_paths[r]),
				fidx_plural(fidx_pathset_count(plan.resumed_paths[r]), "entry",
					    "entries"),
				fidx_plural(fidx_pathset_count(plan.resumed_paths[r]), "is", "are"));
	if (show_progress && plan.reuse && fidx_reuse_count(plan.reuse))
		fprintf(stderr, "fidx: %zu %s of the previous scan %s not read again if %s"
			" device, inode, size, mtime and ctime are unchanged (--rehash reads all)\n",
			fidx_reuse_count(plan.reuse),
			fidx_plural(fidx_reuse_count(plan.reuse), "file", "files"),
			fidx_plural(fidx_reuse_count(plan.reuse), "is", "are"),
			fidx_plural(fidx_reuse_count(plan.reuse), "its", "their"));
	const char *const *shape_excludes = (const char *const *)excludes;
	if (resume) { /* the continued scan's own options */
		digests = plan.row.digests;
		xdev = plan.row.xdev;
		follow = plan.row.follow;
		no_stat = plan.row.no_stat;
		shape_excludes = (const char *const *)plan.row.excludes;
	}

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	struct fidx_scan_opts opts = {
		.digests = digests, .jobs = jobs, .xdev = xdev, .follow = follow, .no_stat = no_stat,
		.io = io, .drop_cache = drop_cache, .excludes = shape_excludes,
		.progress = show_progress,
		.options_json = json, .error_list = error_list, .cancel = &interrupted,
		.reuse = plan.reuse, .base_scan_ids = plan.base_ids, .resume_ids = plan.resume_ids,
		.resumed_paths = (const struct fidx_pathset *const *)plan.resumed_paths,
	};
	int ret = fidx_scan(st, (const char *const *)roots, nroots, &opts, &result, &errmsg);
	if (ret < 0) {
		fidx_error("%s", errmsg ? errmsg : "out of memory");
		goto out;
	}
	if (fidx_store_close(st) < 0) {
		st = NULL;
		fidx_error("cannot close database '%s'", fidx_quote(db));
		goto out;
	}
	st = NULL;
	print_summary(&result, db, nroots, roots[0], digests != 0);
	if (result.index_error)
		fidx_warn("%s; the scan is whole and sealed, queries of it are slower until a later"
			  " scan into the database builds its indexes", result.index_error);
	if (error_list)
		print_errors(error_list);
	if (result.interrupted)
		print_resume_hint(&result, db, roots, nroots);
	status = result.interrupted ? 130 : result.errors ? 1 : 0;
	if (summary_lost(&result, db))
		status = 2;
out:
	if (st)
		fidx_store_close(st);
	/*
	 * A database this run made but never began a scan in (a full disk)
	 * holds nothing: not left behind, unless another connection may be
	 * writing it (its WAL holds something).
	 */
	if (made_db && result.nscans == 0 && wal_empty(db))
		fidx_dbfile_remove(db);
	if (error_list)
		fclose(error_list);
	for (size_t i = 0; i < nroots; i++)
		free(roots[i]);
	free(roots);
	free(excludes);
	free(json);
	free(database);
	free(errmsg);
	free(choice.root);
	free(result.scan_ids);
	free(result.seals);
	free(result.index_error);
	plan_free(&plan, nroots);
	free(resume_root);
	return status;
}
