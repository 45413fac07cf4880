/*
 * cmd_check.c - `fidx check`: the live tree against its newest complete scan.
 *
 *   DB ──► baseline: the newest complete scan of PATH (default: the root of
 *   │      the newest complete scan), and the options it was made with
 *   ▼
 *   fidx_scan() of the root with the baseline's digests, --xdev, --follow,
 *   │      --no-stat and excludes, every file read again (--trust-metadata:
 *   │      the baseline's digests reused as a rescan does, reuse.h)
 *   ├─ default:  into a scratch database in $TMPDIR, ATTACHed as "live" to
 *   │            the read-only connection, removed at the end (the DB is not
 *   │            written)
 *   └─ --update: into DB itself, as a new scan (the read-only connection
 *                closed meanwhile and opened again after: see cmd_check())
 *   ▼
 *   diff.c: baseline against the live scan, reported as `fidx diff` does
 *
 * Exit status as fidx diff's (AIDE's): bits 1 added, 2 removed, 4 changed;
 * 14 output not written, 15 usage, 17 no baseline, 18 database or tree
 * unreadable, 19 database of a newer fidx; 130 interrupted (the scratch
 * database removed; with --update the scan is kept, marked 'interrupted').
 */
#include "commands.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blockdev.h"
#include "cli.h"
#include "dbfile.h"
#include "diag.h"
#include "diff.h"
#include "fdutil.h"
#include "json.h"
#include "output.h"
#include "query.h"
#include "record.h"
#include "reuse.h"
#include "scan.h"
#include "scanargs.h"
#include "store.h"
#include "store_sqlite.h"
#include "sysinfo.h"

/* Interrupted (SIGINT, SIGTERM); the errors' codes are diff.h's, AIDE's numbers. */
enum { EXIT_INTERRUPTED = 130 };

enum {
	OPT_IGNORE = 256,
	OPT_ATIME,
	OPT_UPDATE,
	OPT_TRUST,
	OPT_PROGRESS,
};

static const struct fidx_option check_options[] = {
	{{"db", required_argument, NULL, FIDX_OPT_DB}, "FILE",
	 "the database (default $FIDX_DB, else ./fidx.db), as the\n"
	 "                       first argument may name it"},
	FIDX_OUTPUT_OPTIONS,
	FIDX_DIFF_OPTIONS(OPT_IGNORE, OPT_ATIME),
	{{"update", no_argument, NULL, OPT_UPDATE}, NULL,
	 "record the live scan in DB as a new scan (the next baseline)"},
	{{"trust-metadata", no_argument, NULL, OPT_TRUST}, NULL,
	 "reuse the baseline's digests of files whose device, inode,\n"
	 "                       size, mtime and ctime are unchanged (default: read all)"},
	{{"jobs", required_argument, NULL, 'j'}, "N",
	 "CPUs to hash on (default: usable CPUs), as fidx scan"},
	{{"quiet", no_argument, NULL, 'q'}, NULL, "no progress line and no counts on stderr"},
	{{"progress", no_argument, NULL, OPT_PROGRESS}, NULL,
	 "progress line even when stderr is not a terminal"},
	{{"help", no_argument, NULL, 'h'}, NULL, "show this help"},
};
#define NOPTIONS (sizeof(check_options) / sizeof(check_options[0]))

/* Prints the help of `fidx check`. */
static void check_usage(FILE *out)
{
	fputs("usage: fidx check [OPTIONS] [DB] [PATH]\n\n"
	      "Scan the live tree at PATH (default: the root of the newest complete scan)\n"
	      "and compare it with the newest complete scan of that root in DB (default\n"
	      "$FIDX_DB, else ./fidx.db), with the options that scan was made with\n"
	      "(digests, --xdev, --follow, --no-stat, --exclude).  Nothing is added to DB\n"
	      "unless --update: the live scan goes to a temporary database in $TMPDIR,\n"
	      "removed at the end.\n\n"
	      "Every file is read again by default: whoever can write a file can restore\n"
	      "its size and mtime.  --trust-metadata reuses the baseline's digest of a\n"
	      "file whose device, inode, size, mtime and ctime are unchanged (only the\n"
	      "kernel sets ctime), as an incremental `fidx scan` does.\n\n"
	      "The report, its summary letters, --ignore names, -v and --json are those of\n"
	      "`fidx diff` (see 'fidx diff --help'); the counts go to stderr unless -q,\n"
	      "with --update followed by the new scan's id and seal (for 'fidx verify').\n\n"
	      "Options:\n", out);
	fidx_cli_usage(out, check_options, NOPTIONS);
	fputs("\nExit status (AIDE's): 0 unchanged, else bit 1 added, 2 removed, 4 changed;\n"
	      "14 output not written, 15 usage, 17 no complete scan of the root to check\n"
	      "against, 18 database or tree unreadable, 19 database of a newer fidx,\n"
	      "130 interrupted.\n", out);
}

static atomic_bool interrupted;

/* SIGINT/SIGTERM/SIGHUP: stop the scan; a second signal kills as usual. */
static void on_signal(int sig)
{
	atomic_store(&interrupted, true);
	signal(sig, SIG_DFL);
}

/* The scratch database of a check without --update. */
struct scratch {
	char *path;     /* malloc'ed; NULL when there is none */
};

/* Makes an empty scratch database file in $TMPDIR (or /tmp).  Returns 0, or -1 after printing why. */
static int scratch_make(struct scratch *s)
{
	if (!(s->path = fidx_dbfile_temporary("fidx-check"))) {
		fidx_error("cannot make a temporary database in '%s': %s",
			   fidx_quote(fidx_dbfile_tmpdir()), strerror(errno));
		return -1;
	}
	return 0;
}

/* Removes the scratch database and the files SQLite keeps beside it. */
static void scratch_remove(struct scratch *s)
{
	if (s->path)
		fidx_dbfile_remove(s->path);
	free(s->path);
	s->path = NULL;
}

/* What the command line asked for. */
struct check_args {
	struct fidx_query_args qa;      /* --db, --json, -0 */
	struct fidx_diff_print_opts po; /* -v and the output form */
	const char *path;               /* PATH, or NULL */
	unsigned attrs;                 /* attributes compared */
	unsigned jobs;
	bool update, trust, quiet, progress;
};

/*
 * Parses the command line into a.  Returns 0, 1 after --help, or an exit
 * status after printing why.
 */
static int parse_args(int argc, char **argv, struct check_args *a)
{
	struct option longopts[NOPTIONS + 1];
	unsigned ignore = 0;
	bool atime = false;
	int c;

	fidx_cli_longopts(check_options, NOPTIONS, longopts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":0vj:qh", longopts, NULL)) != -1) {
		if (fidx_query_option(c, optarg, &a->qa))
			continue;
		switch (c) {
		case 'v': a->po.verbose = true; break;
		case 'q': a->quiet = true; break;
		case 'j':
			if (fidx_jobs_arg(optarg, &a->jobs) < 0)
				return FIDX_DIFF_EXIT_USAGE;
			break;
		case OPT_ATIME: atime = true; break;
		case OPT_UPDATE: a->update = true; break;
		case OPT_TRUST: a->trust = true; break;
		case OPT_PROGRESS: a->progress = true; break;
		case OPT_IGNORE:
			if (fidx_diff_ignore_arg(optarg, &ignore) < 0)
				return FIDX_DIFF_EXIT_USAGE;
			break;
		case 'h': check_usage(stdout); return 1;
		default:
			fidx_cli_bad_option("check", c, argv, check_options, NOPTIONS);
			return FIDX_DIFF_EXIT_USAGE;
		}
	}
	/* [DB] [PATH]: with two arguments the first is DB; one is DB when it is a SQLite file. */
	if (argc - optind == 2 && !a->qa.db)
		a->qa.db = argv[optind++];
	else if (argc - optind == 1)
		optind += fidx_query_db_arg(argv[optind], &a->qa);
	if (optind < argc)
		a->path = argv[optind++];
	if (optind < argc) {
		fidx_error("unexpected argument '%s' (see 'fidx check --help')",
			   fidx_quote(argv[optind]));
		return FIDX_DIFF_EXIT_USAGE;
	}
	a->attrs = (FIDX_DIFF_DEFAULT | (atime ? 1u << FIDX_DIFF_ATIME : 0)) & ~ignore;
	a->po.json = a->qa.json;
	a->po.nul = a->qa.nul;
	return 0;
}

/*
 * Finds the baseline: the newest complete scan of PATH's root, or of the
 * newest complete scan's root.  Returns 0, or an exit status after printing
 * why.
 */
static int find_baseline(struct fidx_query *q, const char *path, struct fidx_scan_row *row)
{
	static const char *const complete[] = {"complete", NULL};
	char *root = NULL, *errmsg = NULL;
	int found;

	if (path) {
		struct stat sb;
		if (lstat(path, &sb) < 0 || !(root = fidx_root_path(path))) {
			fidx_error("cannot check '%s': %s", fidx_quote(path), strerror(errno));
			return FIDX_DIFF_EXIT_READ;
		}
	} else {
		sqlite3_stmt *s = fidx_query_prepare(q, "SELECT root FROM scan WHERE status ="
						     " 'complete' ORDER BY id DESC LIMIT 1");
		int rc = s ? sqlite3_step(s) : SQLITE_ERROR;
		if (rc == SQLITE_ROW && !(root = strdup((const char *)sqlite3_column_text(s, 0))))
			fidx_error("out of memory");
		else if (rc == SQLITE_DONE)
			fidx_error("database '%s' has no complete scan to check against",
				   fidx_quote(q->path));
		else if (rc != SQLITE_ROW && s)
			fidx_query_fail(q);
		sqlite3_finalize(s);
		if (!root)
			return rc == SQLITE_DONE ? FIDX_DIFF_EXIT_CONFIG : FIDX_DIFF_EXIT_READ;
	}
	found = fidx_scan_row_newest(q->db, root, complete, 0, row, &errmsg);
	if (found == 0)
		fidx_error("no complete scan of '%s' in the database to check against ('fidx"
			   " scan' makes one)", fidx_quote(root));
	else if (found < 0)
		fidx_error("%s", errmsg ? errmsg : "out of memory");
	free(root);
	free(errmsg);
	return found == 1 ? 0 : found == 0 ? FIDX_DIFF_EXIT_CONFIG : FIDX_DIFF_EXIT_READ;
}

/*
 * Scans the baseline's root into st as the baseline was made, taking the
 * digests in reuse (NULL: every file is read), leaving out the baseline's
 * database at dbpath (as its scan left it out; the store's own files are
 * left out anyway).  Sets *id to the new scan and *seal to its seal (sealed
 * false in a scratch database).  Returns 0, EXIT_INTERRUPTED, or
 * FIDX_DIFF_EXIT_READ after printing why.
 */
static int scan_live(struct fidx_store *st, struct fidx_reuse *reuse,
		     const struct fidx_scan_row *b, const struct check_args *a,
		     const char *dbpath, int64_t *id, struct fidx_scan_seal *seal)
{
	struct fidx_scan_result result = {0};
	char *errmsg = NULL, *json = NULL, *database = NULL;
	struct stat sb;
	int status = FIDX_DIFF_EXIT_READ;

	if (stat(b->root, &sb) < 0 && lstat(b->root, &sb) < 0) {
		fidx_error("cannot check '%s': %s", fidx_quote(b->root), strerror(errno));
		goto out;
	}
	enum fidx_io_mode io = fidx_dev_rotational(sb.st_dev) == 1 ? FIDX_IO_HDD : FIDX_IO_SSD;
	/* The database the live scan goes into (the scratch one unless --update):
	 * diff leaves out the times it moves in its folder. */
	if (!(database = realpath(fidx_store_path(st), NULL)) ||
	    !(json = fidx_scan_options_json(b->digests, a->jobs, b->xdev, b->follow, b->no_stat, io,
					    false, (const char *const *)b->excludes, b->nexcludes,
					    database))) {
		fidx_error("cannot check '%s': %s", fidx_quote(b->root), strerror(errno));
		goto out;
	}
	int64_t base_ids[1] = {b->id};
	const char *const leave_out[] = {dbpath, NULL};
	struct fidx_scan_opts so = {
		.digests = b->digests, .jobs = a->jobs, .xdev = b->xdev, .follow = b->follow,
		.no_stat = b->no_stat, .io = io, .excludes = (const char *const *)b->excludes,
		.progress = a->progress || (!a->quiet && isatty(STDERR_FILENO)),
		.options_json = json, .cancel = &interrupted,
		.reuse = reuse, .base_scan_ids = reuse ? base_ids : NULL, .leave_out = leave_out,
	};
	const char *roots[1] = {b->root};
	if (fidx_scan(st, roots, 1, &so, &result, &errmsg) < 0) {
		fidx_error("%s", errmsg ? errmsg : "out of memory");
		goto out;
	}
	if (result.interrupted) {
		status = EXIT_INTERRUPTED;
		goto out;
	}
	*id = result.scan_ids[0];
	if (result.seals)
		*seal = result.seals[0];
	status = 0;
out:
	free(result.scan_ids);
	free(result.seals);
	free(result.index_error);
	free(database);
	free(json);
	free(errmsg);
	return status;
}

/* Attaches the scratch database at path to q's connection as "live".  Returns 0, or -1 after printing why. */
static int attach_live(struct fidx_query *q, const char *path)
{
	sqlite3_stmt *s = fidx_query_prepare(q, "ATTACH ?1 AS live");
	if (!s)
		return -1;
	sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		fidx_error("cannot read the live scan '%s': %s", fidx_quote(path),
			   fidx_sqlite_why(q->db));
		return -1;
	}
	return 0;
}

int cmd_check(int argc, char **argv)
{
	struct check_args a = {.jobs = fidx_usable_cpus()};
	struct fidx_scan_row base = {0};
	struct scratch scratch = {0};
	struct fidx_query *q = NULL;
	struct fidx_store *st = NULL;
	struct fidx_reuse *reuse = NULL;
	struct fidx_diff *d = NULL;
	char *errmsg = NULL;
	struct fidx_scan_seal seal = {0};
	int64_t live_id = 0;
	int status = parse_args(argc, argv, &a);

	if (status)
		return status == 1 ? 0 : status;
	a.qa.every_scan = true;
	a.qa.raw = true;  /* the baseline's rows are checked, not every scan's */
	const char *dbpath = fidx_cli_db(a.qa.db);
	if (!(q = fidx_query_open(&a.qa)))
		return fidx_diff_open_status(dbpath);
	if ((status = find_baseline(q, a.path, &base)) != 0)
		goto out;
	status = FIDX_DIFF_EXIT_READ;
	if (fidx_query_check_scan(q, base.id) < 0)
		goto out;

	/* Never fail with EMFILE: take no more jobs than the descriptor limit allows. */
	unsigned long nofile = fidx_raise_nofile();
	unsigned long fit = nofile > FIDX_FDS_RESERVED + FIDX_FDS_PER_JOB
				    ? (nofile - FIDX_FDS_RESERVED) / FIDX_FDS_PER_JOB : 1;
	if (a.jobs > fit)
		a.jobs = (unsigned)fit;
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (a.trust && base.digests &&
	    !(reuse = fidx_reuse_load(q->db, base.id, base.digests, &errmsg))) {
		fidx_error("%s", errmsg ? errmsg : "out of memory");
		goto out;
	}
	/*
	 * --update writes DB through a second connection.  Opening it reads the
	 * file's header through a descriptor of its own, and closing that drops
	 * every POSIX lock this process holds on the file, the read connection's
	 * too: another process closing the database would then take this one
	 * for gone, checkpoint and delete the WAL under the writing store, and
	 * the new scan would be lost.  So the two connections never overlap.
	 */
	if (a.update) {
		int changed = fidx_query_close(q);
		q = NULL;
		if (changed < 0)
			goto out;
	}
	if (!a.update && scratch_make(&scratch) < 0)
		goto out;
	if (!(st = fidx_store_open(a.update ? dbpath : scratch.path, NULL, &errmsg))) {
		fidx_error("%s%s", errmsg ? errmsg : "out of memory",
			   a.update ? fidx_cli_db_origin(dbpath) : "");
		goto out;
	}
	if (!a.update && fidx_store_scratch(st) < 0) {
		fidx_error("%s", fidx_store_errmsg(st));
		goto out;
	}
	if ((status = scan_live(st, reuse, &base, &a, dbpath, &live_id, &seal)) != 0)
		goto out;
	status = FIDX_DIFF_EXIT_READ;
	/* Closed first: the live rows are then all in the file, the WAL folded back. */
	int closed = fidx_store_close(st);
	st = NULL;
	if (closed < 0) {
		fidx_error("cannot close database '%s'", fidx_quote(a.update ? dbpath : scratch.path));
		goto out;
	}
	if (a.update && !(q = fidx_query_open(&a.qa))) {
		status = fidx_diff_open_status(dbpath);
		goto out;
	}
	if (!a.update && attach_live(q, scratch.path) < 0)
		goto out;

	struct fidx_diff_side old = {"main", base.id, base.root, dbpath};
	struct fidx_diff_side new = {a.update ? "main" : "live", live_id, base.root, dbpath};
	if (!(d = fidx_diff_compare(q->db, &old, &new, a.attrs, &errmsg))) {
		fidx_error("%s", errmsg ? errmsg : "out of memory");
		goto out;
	}
	if (atomic_load(&interrupted)) {
		status = EXIT_INTERRUPTED;
		goto out;
	}
	fidx_out_begin();
	if (fidx_diff_print(d, q->db, &old, &new, &a.po, stdout, &errmsg) < 0) {
		fidx_out_end();
		fidx_error("%s", errmsg ? errmsg : "out of memory");
		goto out;
	}
	if (fidx_out_end() < 0) {
		status = FIDX_DIFF_EXIT_WRITE;
		goto out;
	}
	if (!a.quiet) {
		char counts[128];
		if (a.update) {
			/* The seal, as `fidx scan` prints it, for the examiner's notes. */
			char hex[2 * sizeof(seal.sha256) + 1] = "";
			for (size_t i = 0; seal.sealed && i < sizeof(seal.sha256); i++)
				snprintf(hex + 2 * i, 3, "%02x", seal.sha256[i]);
			fprintf(stderr, "check of '%s' against scan %lld: %s; recorded as scan %lld%s%s\n",
				fidx_quote(base.root), (long long)base.id, fidx_diff_counts(d, counts),
				(long long)live_id, seal.sealed ? ", seal sha256:" : "", hex);
		} else {
			fprintf(stderr, "check of '%s' against scan %lld: %s\n", fidx_quote(base.root),
				(long long)base.id, fidx_diff_counts(d, counts));
		}
	}
	status = fidx_diff_status(d);
out:
	fidx_diff_free(d);
	fidx_reuse_free(reuse);
	fidx_store_close(st);
	if (fidx_query_close(q) < 0)
		status = FIDX_DIFF_EXIT_READ;
	scratch_remove(&scratch);
	fidx_scan_row_free(&base);
	free(errmsg);
	return status;
}
