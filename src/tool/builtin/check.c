/*
 * check.c - `fidx check`: the live tree against its newest complete scan.
 *
 *   DB ──► baseline: the newest complete scan of PATH (default: the root of
 *   │      the newest complete scan), and the options it was made with
 *   ▼
 *   fidx_scan() of the root with the baseline's digests, --xdev, --follow,
 *   │      --no-stat and excludes, every file read again (--trust-metadata:
 *   │      the baseline's digests reused as a rescan does, reuse.h)
 *   ├─ default:  into a scratch store in $TMPDIR, read back beside DB and
 *   │            removed at the end (DB is not written)
 *   └─ --update: into DB itself, as a new scan (DB's reading store closed
 *                meanwhile and opened again after: see cmd_check())
 *   ▼
 *   diff.c: baseline against the live scan, reported as `fidx diff` does
 *
 * Exit status as fidx diff's (AIDE's): bits 1 added, 2 removed, 4 changed;
 * 14 output not written, 15 usage, 17 no baseline, 18 database or tree
 * unreadable, 19 database of a newer fidx; 130 interrupted (the scratch
 * database removed; with --update the scan is kept, marked 'interrupted').
 */
#include "builtin.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blockdev.h"
#include "diag.h"
#include "diff.h"
#include "diffout.h"
#include "options.h"
#include "output.h"
#include "progress.h"
#include "query.h"
#include "reuse.h"
#include "scan.h"
#include "scanargs.h"
#include "signals.h"
#include "store.h"
#include "sysinfo.h"

/* Interrupted (SIGINT, SIGTERM); the errors' codes are diffout.h's, AIDE's numbers. */
enum { EXIT_INTERRUPTED = 130 };

/* What `fidx check --help` says around its options. */
static const struct fidx_help check_help = {
	.command = "check",
	.text = "usage: fidx check [OPTIONS] [DB] [PATH]\n\n"
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
		"with --update followed by the new scan's id and seal (for 'fidx verify').\n\n",
	.footer = "\nExit status (AIDE's): 0 unchanged, else bit 1 added, 2 removed, 4 changed;\n"
		  "14 output not written, 15 usage, 17 no complete scan of the root to check\n"
		  "against, 18 database or tree unreadable, 19 database of a newer fidx,\n"
		  "130 interrupted.\n",
};

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
	unsigned ignore = 0;
	bool atime = false;
	struct fidx_option options[] = {
		FIDX_OPT_STRING(0, "db", "DB", &a->qa.db,
				"the database: a SQLite file or a PostgreSQL URI or conninfo (default"
				" $FIDX_DB, else ./fidx.db), as the first argument may name it"),
		FIDX_OPT_HOST(&a->qa),
		FIDX_OPT_OUTPUT(&a->qa),
		FIDX_OPT_DIFF(&a->po.verbose, &ignore, &atime),
		FIDX_OPT_FLAG(0, "update", &a->update,
			      "record the live scan in DB as a new scan (the next baseline)"),
		FIDX_OPT_FLAG(0, "trust-metadata", &a->trust,
			      "reuse the baseline's digests of files whose device, inode, size, mtime"
			      " and ctime are unchanged (default: read all)"),
		FIDX_OPT_CALL('j', "jobs", "N", fidx_jobs_arg, &a->jobs,
			      "CPUs to hash on (default: usable CPUs), as fidx scan"),
		FIDX_OPT_FLAG('q', "quiet", &a->quiet, "no progress line and no counts on stderr"),
		FIDX_OPT_FLAG(0, "progress", &a->progress,
			      "progress line even when stderr is not a terminal"),
		FIDX_OPT_END,
	};

	int first = fidx_parse_options(argc, argv, options, &check_help);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 1 : FIDX_DIFF_EXIT_USAGE;
	/* [DB] [PATH]: with two arguments the first is DB; one is DB when it is a SQLite file. */
	if (argc - first == 2 && !a->qa.db)
		a->qa.db = argv[first++];
	else if (argc - first == 1)
		first += fidx_query_db_arg(argv[first], &a->qa);
	if (first < argc)
		a->path = argv[first++];
	if (first < argc) {
		fidx_error("unexpected argument '%s' (see 'fidx check --help')",
			   fidx_quote(argv[first]));
		return FIDX_DIFF_EXIT_USAGE;
	}
	a->attrs = (FIDX_DIFF_DEFAULT | (atime ? 1u << FIDX_DIFF_ATIME : 0)) & ~ignore;
	a->po.json = a->qa.json;
	a->po.nul = a->qa.nul;
	return 0;
}

/*
 * Finds the baseline: the newest complete scan of PATH's root, or of the
 * newest complete scan's root, made on this host (or on the one host that
 * scanned it), into *base (a copy) and the options it was made with into
 * *shape.  Returns 0, or an exit status after printing why.
 */
static int find_baseline(const struct fidx_query *q, const char *path, struct fidx_scan_row *base,
			 struct fidx_scan_shape *shape)
{
	const struct fidx_scan_row *found = NULL;
	struct fidx_error err;
	char *root = NULL;

	if (path) {
		struct stat sb;
		if (lstat(path, &sb) < 0 || !(root = fidx_root_path(path))) {
			fidx_error("cannot check '%s': %s", fidx_quote(path), strerror(errno));
			return FIDX_DIFF_EXIT_READ;
		}
	} else {
		for (size_t i = q->all.n; i-- > 0 && !root;)
			if (q->all.rows[i].status && strcmp(q->all.rows[i].status, "complete") == 0 &&
			    !(root = strdup(q->all.rows[i].root ? q->all.rows[i].root : ""))) {
				fidx_error("out of memory");
				return FIDX_DIFF_EXIT_READ;
			}
		if (!root) {
			fidx_error("database '%s' has no complete scan to check against",
				   fidx_quote(q->path));
			return FIDX_DIFF_EXIT_CONFIG;
		}
	}
	/* The newest of this host's scans of the root; another host's only when every scan
	 * of it is that one host's (a database made elsewhere, a disk checked here). */
	char here[256] = "";
	if (gethostname(here, sizeof(here) - 1) < 0)
		here[0] = '\0';
	const struct fidx_scan_row *newest = NULL;
	bool hosts_differ = false;
	for (size_t i = q->all.n; i-- > 0 && !found;) {
		const struct fidx_scan_row *s = &q->all.rows[i];
		if (!s->status || strcmp(s->status, "complete") != 0 || !fidx_scan_row_of_root(s, root))
			continue;
		/* A damaged row's host cannot be trusted: it is taken, for its damage to be told. */
		if (s->damage || (s->host && strcmp(s->host, here) == 0))
			found = s;
		else if (!newest)
			newest = s;
		else if (!s->host || !newest->host || strcmp(s->host, newest->host) != 0)
			hosts_differ = true;
	}
	if (!found && newest && hosts_differ) {
		fidx_error("no complete scan of '%s' made on this host ('%s'), and several hosts"
			   " have one: name the one to check against with --host", fidx_quote(root),
			   fidx_quote(here));
		free(root);
		return FIDX_DIFF_EXIT_CONFIG;
	}
	if (!found)
		found = newest;
	if (!found) {
		fidx_error("no complete scan of '%s' in the database to check against ('fidx"
			   " scan' makes one)", fidx_quote(root));
		free(root);
		return FIDX_DIFF_EXIT_CONFIG;
	}
	free(root);
	if (fidx_scan_row_copy(base, found, &err) < 0 || fidx_scan_shape_of(base, shape, &err) < 0) {
		fidx_error("%s", err.msg);
		return FIDX_DIFF_EXIT_READ;
	}
	return 0;
}

/*
 * Scans the baseline's root into st as the baseline was made, taking the
 * digests in reuse (NULL: every file is read), leaving out the files of
 * leave_out (the baseline's database, as its scan left it out; the store's
 * own files are left out anyway).  Sets *id to the new scan and *seal to its
 * seal (sealed false in a scratch store).  Returns 0, EXIT_INTERRUPTED, or
 * FIDX_DIFF_EXIT_READ after printing why.
 */
static int scan_live(struct fidx_store *st, struct fidx_reuse *reuse,
		     const struct fidx_scan_row *b, const struct fidx_scan_shape *shape,
		     const struct check_args *a, const char *const *leave_out, int64_t *id,
		     struct fidx_scan_seal *seal)
{
	struct fidx_scan_result result = {0};
	struct fidx_progress_counters counters = {0};
	struct fidx_progress *progress = NULL;
	struct fidx_error err;
	struct fidx_source *src = NULL;
	char *json = NULL;
	struct stat sb;
	int status = FIDX_DIFF_EXIT_READ;

	if (stat(b->root, &sb) < 0 && lstat(b->root, &sb) < 0) {
		fidx_error("cannot check '%s': %s", fidx_quote(b->root), strerror(errno));
		goto out;
	}
	enum fidx_io_mode io = fidx_dev_rotational(sb.st_dev) == 1 ? FIDX_IO_HDD : FIDX_IO_SSD;
	/* The database the live scan goes into (the scratch one unless --update):
	 * diff leaves out the times it moves in its folder. */
	if (!(json = fidx_scan_options_json(shape->digests, a->jobs, shape->xdev, shape->follow,
					    shape->follow_all,
					    shape->no_stat, io, false,
					    (const char *const *)shape->excludes, shape->nexcludes,
					    fidx_store_files(st)[0]))) {
		fidx_error("cannot check '%s': %s", fidx_quote(b->root), strerror(ENOMEM));
		goto out;
	}
	struct fidx_walk_source_opts walk = {
		.xdev = shape->xdev, .follow = shape->follow, .follow_all = shape->follow_all,
		.no_stat = shape->no_stat,
		.excludes = (const char *const *)shape->excludes,
	};
	/* A disk image's baseline is checked by reading the image again, as it was read. */
	struct fidx_image_source_opts image = {
		.digests = shape->digests, .image_digests = shape->digests, .workers = a->jobs,
	};
	if (shape->image) {
		char *what = fidx_image_describe(b->root, &err), *full = NULL;
		if (!what || asprintf(&full, "%.*s,\"image\":%s}", (int)strlen(json) - 1, json,
				      what) < 0) {
			fidx_error("cannot check '%s': %s", fidx_quote(b->root),
				   what ? strerror(ENOMEM) : err.msg);
			free(what);
			goto out;
		}
		free(what);
		free(json);
		json = full;
	}
	src = shape->image ? fidx_image_source_new(&image, &err) : fidx_walk_source_new(&walk, &err);
	if (!src) {
		fidx_error("cannot check '%s': %s", fidx_quote(b->root), err.msg);
		goto out;
	}
	int64_t base_ids[1] = {b->id};
	struct fidx_scan_opts so = {
		.digests = shape->digests, .jobs = a->jobs, .io = io, .options_json = json,
		.cancel = &fidx_interrupted, .reuse = reuse, .base_scan_ids = reuse ? base_ids : NULL,
		.leave_out = leave_out,
	};
	if (a->progress || (!a->quiet && isatty(STDERR_FILENO))) {
		so.counters = &counters;
		progress = fidx_progress_start(&counters, shape->digests != 0);
	}
	const char *roots[1] = {b->root};
	int scanned = fidx_scan(st, src, roots, 1, &so, &result, &err);
	fidx_progress_stop(progress);
	if (scanned < 0) {
		fidx_error("%s", err.msg);
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
	fidx_source_free(src);
	free(result.scan_ids);
	free(result.seals);
	free(json);
	return status;
}

/* One check: the baseline, the live scan, and where each is read from. */
struct check_run {
	struct check_args a;
	const char *dbpath;
	struct fidx_query *q;           /* DB, open for reading (closed while --update writes) */
	struct fidx_scan_row base;      /* the baseline */
	struct fidx_scan_shape shape;   /* the options it was made with */
	struct fidx_reuse *reuse;       /* --trust-metadata: its digests, else NULL */
	char *scratch;                  /* without --update: the scratch database, else NULL */
	struct fidx_store *live;        /* the scratch database, open for reading, or NULL */
	struct fidx_scan_list live_scan; /* the live scan's row */
	struct fidx_scan_seal seal;     /* its seal (sealed false in a scratch store) */
};

/*
 * Scans the live tree into the scratch database (into DB with --update) and
 * reads its scan row back into c->live_scan, c->live (or c->q with --update)
 * open to read its rows.  Returns 0, or an exit status after printing why.
 */
static int record_live(struct check_run *c)
{
	struct fidx_store *st = NULL;
	struct fidx_error err;
	int64_t live_id = 0;
	int status = FIDX_DIFF_EXIT_READ;
	/*
	 * --update writes DB through a second connection.  Opening it reads the
	 * file's header through a descriptor of its own, and closing that drops
	 * every POSIX lock this process holds on the file, the read connection's
	 * too: another process closing the database would then take this one
	 * for gone, checkpoint and delete the WAL under the writing store, and
	 * the new scan would be lost.  So the two stores never overlap.
	 */
	if (c->a.update) {
		int changed = fidx_query_close(c->q);
		c->q = NULL;
		if (changed < 0)
			return status;
	} else if (!(c->scratch = fidx_store_scratch_new("fidx-check", &err))) {
		fidx_error("%s", err.msg);
		return status;
	}
	const char *into = c->a.update ? c->dbpath : c->scratch;
	if (!(st = fidx_store_open(into, c->a.update ? FIDX_STORE_WRITE : FIDX_STORE_SCRATCH, NULL,
				   &err))) {
		fidx_error("%s%s", err.msg, c->a.update ? fidx_db_origin(c->dbpath) : "");
		return status;
	}
	int scanned = scan_live(st, c->reuse, &c->base, &c->shape, &c->a,
				c->q ? fidx_store_files(c->q->st) : NULL, &live_id, &c->seal);
	/* Closed first: the live rows are then all in the file, the WAL folded back. */
	int closed = fidx_store_close(st, &err);
	if (scanned)
		return scanned;
	if (closed < 0) {
		fidx_error("cannot close database '%s'", fidx_quote(into));
		return status;
	}
	if (c->a.update && !(c->q = fidx_query_open(&c->a.qa, &err)))
		return fidx_diff_open_status(&err);
	if (!c->a.update && !(c->live = fidx_store_open(c->scratch, FIDX_STORE_READ, NULL, &err))) {
		fidx_error("%s", err.msg);
		return status;
	}
	struct fidx_scan_filter only = {.id = live_id};
	if (fidx_store_scans(c->live ? c->live : c->q->st, &only, &c->live_scan, &err) < 0) {
		fidx_error("%s", err.msg);
		return status;
	}
	if (c->live_scan.n != 1) {
		fidx_error("cannot read the live scan %lld of '%s'", (long long)live_id,
			   fidx_quote(into));
		return status;
	}
	return 0;
}

/*
 * Prints the report of d on stdout and, unless -q, its counts on stderr
 * (with --update, the new scan and its seal).  Returns the exit status.
 */
static int report(const struct check_run *c, const struct fidx_diff *d,
		  const struct fidx_diff_side *old, const struct fidx_diff_side *new)
{
	struct fidx_error err;
	fidx_out_begin();
	if (fidx_diff_print(d, old, new, &c->a.po, stdout, &err) < 0) {
		fidx_out_end();
		fidx_error("%s", err.msg);
		return FIDX_DIFF_EXIT_READ;
	}
	if (fidx_out_end() < 0)
		return FIDX_DIFF_EXIT_WRITE;
	if (c->a.quiet)
		return fidx_diff_status(d);
	char counts[128];
	fidx_diff_counts(d, counts);
	if (c->a.update) {
		/* The seal, as `fidx scan` prints it, for the examiner's notes. */
		char hex[2 * sizeof(c->seal.sha256) + 1] = "";
		for (size_t i = 0; c->seal.sealed && i < sizeof(c->seal.sha256); i++)
			snprintf(hex + 2 * i, 3, "%02x", c->seal.sha256[i]);
		fprintf(stderr, "check of '%s' against scan %lld: %s; recorded as scan %lld%s%s\n",
			fidx_quote(c->base.root), (long long)c->base.id, counts,
			(long long)new->scan->id, c->seal.sealed ? ", seal sha256:" : "", hex);
	} else {
		fprintf(stderr, "check of '%s' against scan %lld: %s\n", fidx_quote(c->base.root),
			(long long)c->base.id, counts);
	}
	return fidx_diff_status(d);
}

int cmd_check(int argc, char **argv, const struct fidx_command *cmd)
{
	struct check_run c = {.a = {.jobs = fidx_usable_cpus()}};
	struct fidx_diff *d = NULL;
	struct fidx_error err;
	int status = parse_args(argc, argv, &c.a);

	(void)cmd;
	if (status)
		return status == 1 ? 0 : status;
	c.a.qa.every_scan = true;
	c.a.qa.raw = true;  /* the baseline's rows are checked, not every scan's */
	c.dbpath = fidx_db_name(c.a.qa.db);
	if (!(c.q = fidx_query_open(&c.a.qa, &err)))
		return fidx_diff_open_status(&err);
	if ((status = find_baseline(c.q, c.a.path, &c.base, &c.shape)) != 0)
		goto out;
	status = FIDX_DIFF_EXIT_READ;
	if (c.base.damage) {
		fidx_query_damaged(c.q, c.base.damage);
		goto out;
	}
	/* Never fail with EMFILE: take no more jobs than the descriptor limit allows. */
	unsigned long limit;
	c.a.jobs = fidx_jobs_fit(c.a.jobs, &limit);
	fidx_catch_signals();
	if (c.a.trust && c.shape.digests &&
	    (!(c.reuse = fidx_reuse_new(c.shape.digests, FIDX_REUSE_MEMORY, &err)) ||
	     fidx_reuse_load(c.reuse, c.q->st, &c.base, &err) < 0)) {
		fidx_error("%s", err.msg);
		goto out;
	}
	if ((status = record_live(&c)) != 0)
		goto out;
	status = FIDX_DIFF_EXIT_READ;
	struct fidx_diff_side old = {.st = c.q->st, .scan = &c.base};
	struct fidx_diff_side new = {.st = c.live ? c.live : c.q->st, .scan = &c.live_scan.rows[0]};
	if (!(d = fidx_diff_compare(&old, &new, c.a.attrs, &err))) {
		fidx_error("%s", err.msg);
		goto out;
	}
	status = atomic_load(&fidx_interrupted) ? EXIT_INTERRUPTED : report(&c, d, &old, &new);
out:
	fidx_diff_free(d);
	fidx_reuse_free(c.reuse);
	if (c.live && fidx_store_close(c.live, &err) < 0 && err.msg[0]) {
		fidx_error("%s", err.msg);
		status = FIDX_DIFF_EXIT_READ;
	}
	if (fidx_query_close(c.q) < 0)
		status = FIDX_DIFF_EXIT_READ;
	if (c.scratch)
		fidx_store_scratch_remove(c.scratch);
	free(c.scratch);
	fidx_scan_list_free(&c.live_scan);
	fidx_scan_shape_free(&c.shape);
	fidx_scan_row_free(&c.base);
	return status;
}
