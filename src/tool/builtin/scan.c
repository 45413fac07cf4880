/*
 * scan.c - `fidx scan`: the command line of the scan pipeline.
 *
 * Parses options (one table gives both the parser and --help), checks the
 * roots before the database is touched, opens the store, makes the plan
 * (what --resume continues, the digests an incremental rescan reuses: read
 * through the store), runs fidx_scan() with SIGINT/SIGTERM/SIGHUP wired to
 * its cancel flag and a progress line reading its counters, and prints the
 * summary.  Exit status: 0 every entry read, 1 some entries have errors,
 * 2 usage or fatal error, 130 interrupted.
 */
#include "builtin.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blockdev.h"
#include "diag.h"
#include "hash.h"
#include "interactive.h"
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

/* What `fidx scan --help` says around its options. */
static const struct fidx_help scan_help = {
	.command = "scan",
	.text = "usage: fidx scan [OPTIONS] PATH...\n"
		"       fidx scan --resume [OPTIONS] [PATH...]\n"
		"       fidx scan -i [OPTIONS]\n\n"
		"Record every entry under and including each PATH (metadata, symlink targets\n"
		"and digests of regular files) into a SQLite database, as one new scan per\n"
		"PATH.  Earlier scans in the database are never modified (--resume continues\n"
		"an unfinished one).  A file unchanged since the newest complete scan of its\n"
		"PATH (same device, inode, size, mtime and ctime, the times at least 0.1 s\n"
		"older than that scan's start, 2 s when in whole seconds) is not read again:\n"
		"its digests are taken from that scan (see --rehash).\n\n",
	.footer = "\nExit status: 0 all entries read, 1 some entries recorded with errors,\n"
		  "2 usage or fatal error (also a summary that cannot be written: the scan is\n"
		  "kept), 130 interrupted (the scan is kept, marked 'interrupted'; the summary\n"
		  "counts the entries left unfinished apart from the errors, and stderr gives\n"
		  "the 'fidx scan --resume' command that continues it).\n",
};

/* Prints the summary of a finished scan on stdout: one line, then a line per seal. */
static void print_summary(const struct fidx_scan_result *r, const char *db, size_t nroots,
			  const char *root, bool digests)
{
	char bytes[FIDX_SIZE_TEXT], rate[FIDX_SIZE_TEXT];
	fidx_size_text(r->bytes, false, bytes);
	/* The rate of what was read: a rescan that reused every digest read nothing. */
	if (r->bytes_hashed == 0)
		snprintf(rate, sizeof(rate), "nothing read");
	else
		fidx_size_text(r->seconds > 0 ? (uint64_t)(r->bytes_hashed / r->seconds) : 0, false,
			       rate);
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
	int64_t *seen_pids;                  /* its scan.pid as read (0: none), for the claim */
	int64_t *base_ids;                   /* scan digests are reused from, 0 for none */
	struct fidx_pathset **resumed_paths; /* paths the continued scan holds */
	struct fidx_reuse *reuse;            /* NULL with --rehash or no digests */
	struct fidx_scan_shape shape;        /* the options of the scan --resume continues */
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
	fidx_scan_shape_free(&p->shape);
}

/*
 * The newest scan of root in all whose status is one of statuses (a
 * NULL-terminated list) and whose id is below before (0: any), or NULL.
 */
static const struct fidx_scan_row *newest_of(const struct fidx_scan_list *all, const char *root,
					     const char *const *statuses, int64_t before)
{
	for (size_t i = all->n; i-- > 0;) {
		const struct fidx_scan_row *s = &all->rows[i];
		if (!fidx_scan_row_of_root(s, root) || !s->status ||
		    (before > 0 && s->id >= before))
			continue;
		for (size_t k = 0; statuses[k]; k++)
			if (strcmp(s->status, statuses[k]) == 0)
				return s;
	}
	return NULL;
}

/*
 * Finds the scan --resume continues for root, the newest scan of it, and
 * checks that it can be continued: *row is set to it and *shape to its
 * options.  Prints one line and returns -1 when not.
 */
static int find_resumable(const struct fidx_scan_list *all, const char *dbpath, const char *root,
			  const struct fidx_scan_row **row, struct fidx_scan_shape *shape)
{
	static const char *const any[] = {"running", "interrupted", "failed", "complete", NULL};
	struct fidx_error err;

	if (!(*row = newest_of(all, root, any, 0))) {
		fidx_error("nothing to resume: database '%s' holds no scan of '%s'",
			   fidx_quote(dbpath), fidx_quote(root));
		return -1;
	}
	if (fidx_scan_shape_of(*row, shape, &err) < 0) {
		fidx_error("%s", err.msg);
		return -1;
	}
	if (strcmp((*row)->status, "complete") == 0)
		fidx_error("nothing to resume: the newest scan of '%s' (scan %lld) is complete",
			   fidx_quote((*row)->root), (long long)(*row)->id);
	else if (shape->image)
		fidx_error("cannot resume scan %lld of '%s': a disk image is read whole; scan it"
			   " again with fidx scan --image", (long long)(*row)->id,
			   fidx_quote((*row)->root));
	else if (fidx_writer_alive((*row)->pid, (*row)->host) == 1)
		fidx_error("cannot resume scan %lld of '%s': process %lld is %s it",
			   (long long)(*row)->id, fidx_quote((*row)->root), (long long)(*row)->pid,
			   strcmp((*row)->status, "running") == 0 ? "still writing" : "taking up");
	else
		return 0;
	fidx_scan_shape_free(shape);
	return -1;
}

/*
 * Sets *root to the root of the newest scan in the database at dbpath (what
 * --resume without PATH continues; origin follows the path in messages).
 * Prints one line and returns -1 when there is none or the file is not a
 * fidx database.
 */
static int newest_root(const char *dbpath, const char *origin, char **root)
{
	int kind = fidx_store_probe(dbpath, NULL);

	if (kind == FIDX_STORE_NONE) {
		fidx_error("nothing to resume: no database '%s'%s", fidx_quote(dbpath), origin);
		return -1;
	}
	if (kind != FIDX_STORE_FIDX) {
		if (kind < 0)
			fidx_error("cannot open database '%s'%s: %s", fidx_quote(dbpath), origin,
				   strerror(errno));
		else
			fidx_error("'%s'%s is not a fidx database", fidx_quote(dbpath), origin);
		return -1;
	}
	/* Read as queries read (query.h): a database at rest is left as it was. */
	struct fidx_query_args a = {.db = dbpath, .every_scan = true, .raw = true};
	struct fidx_query *q = fidx_query_open(&a, NULL);
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

/* Writes "PATH: ERROR" to the error list (arg), as --errors lists an entry. */
static void list_error(void *arg, const char *path, const char *error)
{
	fprintf(arg, "%s: %s\n", fidx_quote(path), error);
}

/*
 * Fills the plan for roots from the scans of st: with --resume, the scan
 * each one continues (its paths recorded so far; its errors written to
 * error_list, when not NULL); unless rehash, the digests of the newest
 * complete scan of each root before it that recorded every digest asked for
 * (a quick `--hash none` scan in between does not make the next one read
 * all).  With --resume, then claims the scans.  Prints one line and returns
 * -1 on failure.
 */
static int make_plan(struct fidx_store *st, const char *dbpath, char **roots, size_t nroots,
		     bool resume, bool rehash, unsigned digests, FILE *error_list, struct plan *p)
{
	static const char *const complete[] = {"complete", NULL};
	struct fidx_scan_list all = {0};
	struct fidx_error err;
	int ret = -1;

	p->resume_ids = calloc(nroots, sizeof(*p->resume_ids));
	p->seen_pids = calloc(nroots, sizeof(*p->seen_pids));
	p->base_ids = calloc(nroots, sizeof(*p->base_ids));
	p->resumed_paths = calloc(nroots, sizeof(*p->resumed_paths));
	if (!p->resume_ids || !p->seen_pids || !p->base_ids || !p->resumed_paths) {
		fidx_error("out of memory");
		return -1;
	}
	if (fidx_store_scans(st, NULL, &all, &err) < 0)
		goto fail;
	for (size_t r = 0; r < nroots; r++) {
		if (resume) {
			const struct fidx_scan_row *row;
			struct fidx_scan_shape shape;
			if (find_resumable(&all, dbpath, roots[r], &row, &shape) < 0)
				goto out;
			p->resume_ids[r] = row->id;
			p->seen_pids[r] = row->pid;
			if (r == 0) {
				p->shape = shape;
				digests = shape.digests;
			} else {
				bool same = fidx_scan_shape_eq(&p->shape, &shape);
				fidx_scan_shape_free(&shape);
				if (!same) {
					fidx_error("cannot resume scans %lld and %lld together: they were"
						   " made with different options; resume them one at a time",
						   (long long)p->resume_ids[0], (long long)p->resume_ids[r]);
					goto out;
				}
			}
			if (!(p->resumed_paths[r] = fidx_pathset_load(st, row, error_list ? list_error
									   : NULL, error_list, &err)))
				goto fail;
		}
		if (rehash || !digests)
			continue;
		/* The newest complete scan of the root that recorded these digests. */
		const struct fidx_scan_row *base;
		int64_t before = p->resume_ids[r];
		struct fidx_scan_shape shape = {0};
		while ((base = newest_of(&all, roots[r], complete, before))) {
			if (fidx_scan_shape_of(base, &shape, &err) < 0)
				goto fail;
			bool has = (shape.digests & digests) == digests;
			fidx_scan_shape_free(&shape);
			if (has)
				break;
			before = base->id;
		}
		if (!base)
			continue;
		p->base_ids[r] = base->id;
		if ((!p->reuse && !(p->reuse = fidx_reuse_new(digests, FIDX_REUSE_MEMORY, &err))) ||
		    fidx_reuse_load(p->reuse, st, base, &err) < 0)
			goto fail;
	}
	for (size_t r = 0; resume && r < nroots; r++) {
		int claimed = fidx_store_claim_scan(st, p->resume_ids[r], p->seen_pids[r], &err);
		if (claimed < 0)
			goto fail;
		if (claimed == 0) {
			fidx_error("cannot resume scan %lld of '%s': another fidx took it up first",
				   (long long)p->resume_ids[r], fidx_quote(roots[r]));
			goto out;
		}
	}
	ret = 0;
	goto out;
fail:
	fidx_error("%s", err.msg);
out:
	fidx_scan_list_free(&all);
	return ret;
}

/* Adds an --exclude GLOB to the list (arg). */
static int take_exclude(const char *glob, void *arg)
{
	const char **list = arg;
	while (*list)
		list++;
	*list = glob;
	return 0;
}

/* The options of a scan, as the command line gave them. */
struct scan_args {
	const char *db, *hash;
	unsigned jobs;
	bool xdev, follow, follow_all, no_stat, quiet, force_progress, drop_cache, rehash, resume;
	bool list_errors, interactive, version, image;
	const char *spool;       /* --spool FILE */
	const char *image_hash;  /* --image-hash LIST */
	enum fidx_io_mode io;
	const char **excludes;   /* NULL-terminated */
	size_t nexcludes;
};

/*
 * Parses the command line into a.  Returns the index of the first PATH,
 * FIDX_PARSE_HELP or FIDX_PARSE_ERROR.
 */
static int parse_args(int argc, char **argv, struct scan_args *a)
{
	struct fidx_option options[] = {
		FIDX_OPT_STRING('o', "db", "DB", &a->db,
				"database to add the scan to: a SQLite file or a PostgreSQL URI or"
				" conninfo (default $FIDX_DB, else ./fidx.db)"),
		FIDX_OPT_STRING(0, "spool", "FILE", &a->spool,
				"when the database is a server that cannot be reached, scan into the"
				" SQLite file FILE instead (send it later with fidx push FILE DB)"),
		FIDX_OPT_STRING(0, "hash", "LIST", &a->hash,
				"digests: md5,sha1,sha256,sha512,xxh128 or none (default sha256; with"
				" -i md5,sha256)"),
		FIDX_OPT_CALL('j', "jobs", "N", fidx_jobs_arg, &a->jobs,
			      "CPUs to hash on (default: usable CPUs); the walk, and the reads on an"
			      " SSD, run 4 threads per job, at most 32 unless N is larger"),
		FIDX_OPT_CALL(0, "io", "MODE", fidx_io_arg, &a->io,
			      "how files are read: ssd (many at once), hdd (one at a time, in on-disk"
			      " order, hashed in parallel) or auto (default: hdd when a PATH is on a"
			      " rotational disk, as /sys/block tells; a virtio disk cannot tell and"
			      " counts as ssd)"),
		FIDX_OPT_FLAG(0, "image", &a->image,
			      "each PATH is a disk image (raw, split raw by its first piece, E01, or"
			      " what else The Sleuth Kit opens) or a block device: record what its"
			      " partitions' file systems hold, deleted and orphan entries and NTFS"
			      " streams included, read-only, under PATH/pN/... (PATH/fs/... without a"
			      " partition table)"),
		FIDX_OPT_STRING(0, "image-hash", "LIST",  &a->image_hash,
				"with --image, the digests of each image's own data, in PATH's row"
				" (default: those of --hash; none to skip the read); an E01's stored"
				" MD5 and SHA-1 are then checked"),
		FIDX_OPT_FLAG(0, "drop-cache", &a->drop_cache,
			      "drop each file's pages from the page cache once hashed, so that a scan"
			      " of a huge disk does not evict everything else"),
		FIDX_OPT_FLAG(0, "xdev", &a->xdev,
			      "stay on each root's filesystem (mount points are recorded, not entered)"),
		FIDX_OPT_CALL(0, "exclude", "GLOB", take_exclude, a->excludes,
			      "leave out matching entries (repeatable); a GLOB with '/' matches the"
			      " path below the root, one without matches the name"),
		FIDX_OPT_FLAG(0, "follow", &a->follow,
			      "follow symlinks whose targets lie inside the PATHs (a link to elsewhere"
			      " is recorded as a link, with an error that says so; loops are"
			      " recorded as errors)"),
		FIDX_OPT_FLAG(0, "follow-all", &a->follow_all,
			      "follow symlinks wherever they lead, outside the PATHs too (never on"
			      " an untrusted tree: a planted link reads any file of this machine)"),
		FIDX_OPT_FLAG(0, "no-stat", &a->no_stat,
			      "record paths and types only, from the directory listings: no metadata"
			      " and no digests (implies --hash none); the fastest inventory"),
		FIDX_OPT_FLAG(0, "rehash", &a->rehash,
			      "read every file; by default a file whose device, inode, size, mtime and"
			      " ctime are those the newest complete scan of the same PATH (with the"
			      " digests asked for) recorded takes its digests"),
		FIDX_OPT_FLAG(0, "resume", &a->resume,
			      "continue the newest scan of each PATH (without PATH: the newest scan in"
			      " the database) that was interrupted, failed or killed, with its own"
			      " --hash, --xdev, --follow, --no-stat and --exclude: what it recorded is"
			      " kept, the rest is scanned"),
		FIDX_OPT_FLAG('q', "quiet", &a->quiet, "no progress line"),
		FIDX_OPT_FLAG(0, "progress", &a->force_progress,
			      "progress line even when stderr is not a terminal"),
		FIDX_OPT_FLAG(0, "errors", &a->list_errors,
			      "after the summary, list every entry recorded with an error"),
		FIDX_OPT_FLAG('i', "interactive", &a->interactive,
			      "choose a mounted filesystem, workers and sub-path at prompts; digests"
			      " md5,sha256 unless --hash is given (what GDBack's data view, hash_md5,"
			      " needs)"),
		FIDX_OPT_FLAG(0, "version", &a->version, "show versions and exit"),
		FIDX_OPT_END,
	};
	int first = fidx_parse_options(argc, argv, options, &scan_help);
	for (const char **e = a->excludes; first > 0 && *e; e++)
		a->nexcludes++;
	return first;
}

/* A scan as its arguments settle it: what cmd_scan() runs. */
struct scan_job {
	struct scan_args a;
	const char *db, *origin;   /* the database, and where its name came from */
	char *shown;               /* the database as the store names it (no password) */
	const char *hash;          /* the --hash list in force */
	unsigned digests, jobs;
	unsigned image_digests;    /* --image: the digests of each image's own data */
	char **root_options;       /* --image: each root's options, with what the image is */
	enum fidx_io_mode io;
	bool xdev, follow, follow_all, no_stat, show_progress;
	char **roots;              /* absolute, each once */
	size_t nroots;
	char *resume_root;         /* --resume without PATH: the newest scan's root */
	struct fidx_interactive_choice choice; /* -i: what was chosen */
	FILE *error_list;          /* --errors: the entries recorded with an error */
};

/*
 * Settles the digests, the jobs and the -i choice from the arguments, the
 * first PATH at argv[first].  Returns 0, or -1 after printing why.
 */
static int settle(struct scan_job *j, int first, int argc)
{
	const struct scan_args *a = &j->a;
	bool hash_given = a->hash != NULL;
	/* The options --resume takes from the scan it continues. */
	bool shape_given = hash_given || a->xdev || a->follow || a->follow_all || a->no_stat ||
			   a->nexcludes;
	j->hash = a->hash ? a->hash : "sha256";
	/* The interactive flow is GDBack's point-and-go: MD5 too, for its `data` view. */
	if (a->interactive && !hash_given)
		j->hash = "md5,sha256";
	if (j->no_stat) {
		if (hash_given && strcmp(j->hash, "none") != 0) {
			fidx_error("--no-stat records no digests: drop --hash '%s' or --no-stat",
				   fidx_quote(j->hash));
			return -1;
		}
		j->hash = "none";
	}
	if (fidx_digest_list_parse(j->hash, &j->digests) < 0) {
		fidx_error("invalid --hash '%s': expected md5, sha1, sha256, sha512, xxh128 "
			   "(comma-separated) or none", fidx_quote(j->hash));
		return -1;
	}
	if (a->resume && (shape_given || a->interactive)) {
		fidx_error("--resume continues a scan with the options it was made with: drop %s",
			   a->interactive ? "-i"
			   : "--hash, --xdev, --follow, --follow-all, --no-stat and --exclude");
		return -1;
	}
	if (a->image && (a->xdev || a->follow || a->follow_all || a->no_stat || a->nexcludes ||
			 a->resume ||
			 a->interactive || a->drop_cache)) {
		fidx_error("--image reads disk images whole: drop %s",
			   a->resume ? "--resume (scan the image again)"
			   : a->interactive ? "-i"
			   : "--xdev, --follow, --follow-all, --no-stat, --exclude and --drop-cache");
		return -1;
	}
	j->image_digests = j->digests;
	if (a->image_hash && (!a->image ||
			      fidx_digest_list_parse(a->image_hash, &j->image_digests) < 0)) {
		if (!a->image)
			fidx_error("--image-hash goes with --image");
		else
			fidx_error("invalid --image-hash '%s': expected md5, sha1, sha256, sha512,"
				   " xxh128 (comma-separated) or none", fidx_quote(a->image_hash));
		return -1;
	}
	if (a->resume && a->spool) {
		fidx_error("--resume continues a scan in the database that holds it: drop --spool");
		return -1;
	}
	if (a->interactive) {
		if (first < argc) {
			fidx_error("-i chooses the path itself: give no PATH with it");
			return -1;
		}
		if (!isatty(STDIN_FILENO)) {
			fidx_error("-i needs a terminal on standard input");
			return -1;
		}
		if (fidx_interactive_ask(stdin, stderr, j->jobs, &j->choice) < 0)
			return -1;
		j->jobs = j->choice.jobs;
		j->xdev = true; /* a filesystem was chosen: stay on it */
	} else if (first == argc && !a->resume) {
		fidx_error("no PATH to scan (see 'fidx scan --help')");
		return -1;
	}
	/* Never fail with EMFILE: take no more jobs than the descriptor limit allows. */
	unsigned long nofile;
	unsigned fit = fidx_jobs_fit(j->jobs, &nofile);
	if (fit < j->jobs) {
		fidx_warn("--jobs %u lowered to %u: the open file limit (%lu) has room for no more",
			  j->jobs, fit, nofile);
		j->jobs = fit;
	}
	return 0;
}

/*
 * Takes the roots (the PATHs from argv[first], the -i choice, or the root of
 * the newest scan for --resume alone), each checked before the database is
 * created or touched, and settles --io auto from their disks.  Returns 0, or
 * -1 after printing why.
 */
static int take_roots(struct scan_job *j, int argc, char **argv, int first)
{
	/* --resume without PATH continues the newest scan: its root is the PATH. */
	if (j->a.resume && first == argc && newest_root(j->db, j->origin, &j->resume_root) < 0)
		return -1;
	size_t given = j->a.interactive || j->resume_root ? 1 : (size_t)(argc - first);
	if (!(j->roots = calloc(given, sizeof(*j->roots))) ||
	    !(j->root_options = calloc(given, sizeof(*j->root_options)))) {
		fidx_error("out of memory");
		return -1;
	}
	bool warned = false, spinning = false, untold = false;
	for (size_t i = 0; i < given; i++) {
		const char *arg = j->a.interactive ? j->choice.root
				  : j->resume_root ? j->resume_root : argv[first + i];
		struct stat sb;
		if ((stat(arg, &sb) < 0 && lstat(arg, &sb) < 0) ||
		    !(j->roots[j->nroots++] = fidx_root_path(arg))) {
			fidx_error("cannot scan '%s': %s", fidx_quote(arg), strerror(errno));
			return -1;
		}
		/* The same root given twice ("small ./small") is one scan. */
		bool again = false;
		for (size_t k = 0; k + 1 < j->nroots && !again; k++)
			again = strcmp(j->roots[k], j->roots[j->nroots - 1]) == 0;
		if (again) {
			free(j->roots[--j->nroots]);
			continue;
		}
		const char *root = j->roots[j->nroots - 1];
		if (j->a.image) {
			struct fidx_error err;
			if (!(j->root_options[j->nroots - 1] = fidx_image_describe(root, &err))) {
				fidx_error("%s", err.msg);
				return -1;
			}
			continue;
		}
		if (!S_ISDIR(sb.st_mode) && fidx_image_probe(root))
			fidx_warn("'%s' %s: it is recorded as one file; fidx scan --image reads the"
				  " file systems inside it", fidx_quote(root),
				  S_ISBLK(sb.st_mode) ? "is a block device" : "looks like a disk image");
		/* A device that cannot be told (tmpfs, NFS, virtio...) is taken not to spin. */
		if (j->io == FIDX_IO_AUTO) {
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
	if (j->io == FIDX_IO_AUTO) {
		j->io = spinning ? FIDX_IO_HDD : FIDX_IO_SSD;
		/* Whoever watches should know how files are read, and why. */
		if (spinning && j->digests && j->show_progress)
			fprintf(stderr, "fidx: a path is on a disk that reports itself rotational: "
					"files are read one at a time, in on-disk order "
					"(--io=ssd reads many at once)\n");
		else if (untold && j->digests && j->show_progress)
			fprintf(stderr, "fidx: a path is on a virtual (virtio) disk, which cannot tell "
					"whether it spins: files are read many at once (--io=hdd reads "
					"one at a time, in on-disk order)\n");
	}
	return 0;
}

/* Tells whoever watches what the plan does not read again, and why. */
static void announce_plan(const struct scan_job *j, const struct plan *plan)
{
	for (size_t r = 0; j->show_progress && r < j->nroots; r++) {
		if (!plan->resume_ids[r])
			continue;
		size_t kept = fidx_pathset_count(plan->resumed_paths[r]);
		fprintf(stderr, "fidx: resuming scan %lld of '%s': %zu %s recorded before %s kept\n",
			(long long)plan->resume_ids[r], fidx_quote(j->roots[r]), kept,
			fidx_plural(kept, "entry", "entries"), fidx_plural(kept, "is", "are"));
	}
	size_t reusable = plan->reuse ? fidx_reuse_count(plan->reuse) : 0;
	if (j->show_progress && reusable)
		fprintf(stderr, "fidx: %zu %s of the previous scan %s not read again if %s"
			" device, inode, size, mtime and ctime are unchanged (--rehash reads all)\n",
			reusable, fidx_plural(reusable, "file", "files"),
			fidx_plural(reusable, "is", "are"), fidx_plural(reusable, "its", "their"));
}

/*
 * Runs the scan of j's roots into st with plan, a progress line when asked
 * for, SIGINT/SIGTERM/SIGHUP wired to its cancel.  Returns 0, or -1 after
 * printing why.
 */
static int run_scan(struct scan_job *j, struct fidx_store *st, const struct plan *plan,
		    struct fidx_scan_result *result)
{
	struct fidx_walk_source_opts walk = {
		.xdev = j->xdev, .follow = j->follow, .follow_all = j->follow_all,
		.no_stat = j->no_stat,
		.excludes = j->a.excludes,
	};
	struct fidx_progress_counters counters = {0};
	struct fidx_source *src = NULL;
	struct fidx_error err;
	char *json = NULL;
	int ret = -1;

	/* The database is never scanned (the source leaves its files out): the row says
	 * where it was. */
	if (!(json = fidx_scan_options_json(j->digests, j->jobs, j->xdev, j->follow,
					    j->follow_all, j->no_stat,
					    j->io, j->a.drop_cache, j->a.excludes, j->a.nexcludes,
					    fidx_store_files(st)[0]))) {
		fidx_error("cannot scan into '%s': %s", fidx_quote(j->shown), strerror(ENOMEM));
		return -1;
	}
	announce_plan(j, plan);
	if (j->a.resume) { /* the continued scan's own options */
		j->digests = plan->shape.digests;
		walk = (struct fidx_walk_source_opts){
			.xdev = plan->shape.xdev, .follow = plan->shape.follow,
			.follow_all = plan->shape.follow_all,
			.no_stat = plan->shape.no_stat,
			.excludes = (const char *const *)plan->shape.excludes,
		};
	}
	/* An image's scan says what the image is: its options end with "image": {...}. */
	for (size_t r = 0; j->a.image && r < j->nroots; r++) {
		char *full = NULL;
		if (asprintf(&full, "%.*s,\"image\":%s}", (int)strlen(json) - 1, json,
			     j->root_options[r]) < 0) {
			fidx_error("out of memory");
			goto out;
		}
		free(j->root_options[r]);
		j->root_options[r] = full;
	}
	fidx_catch_signals();
	struct fidx_image_source_opts image = {
		.digests = j->digests, .image_digests = j->image_digests, .workers = j->jobs,
	};
	src = j->a.image ? fidx_image_source_new(&image, &err) : fidx_walk_source_new(&walk, &err);
	if (!src) {
		fidx_error("%s", err.msg);
		goto out;
	}
	struct fidx_scan_opts opts = {
		.digests = j->digests, .jobs = j->jobs, .io = j->io, .drop_cache = j->a.drop_cache,
		.counters = j->show_progress ? &counters : NULL, .options_json = json,
		.root_options = j->a.image ? (const char *const *)j->root_options : NULL,
		.on_error = j->error_list ? list_error : NULL, .on_error_arg = j->error_list,
		.cancel = &fidx_interrupted, .reuse = plan->reuse, .base_scan_ids = plan->base_ids,
		.resume_ids = plan->resume_ids,
		.resumed_paths = (const struct fidx_pathset *const *)plan->resumed_paths,
	};
	struct fidx_progress *progress =
		j->show_progress ? fidx_progress_start(&counters, j->digests != 0) : NULL;
	ret = fidx_scan(st, src, (const char *const *)j->roots, j->nroots, &opts, result, &err);
	fidx_progress_stop(progress);
	if (ret < 0)
		fidx_error("%s", err.msg);
out:
	fidx_source_free(src);
	free(json);
	return ret;
}

/*
 * After the database could not be opened (err says why): when it is a
 * server that cannot be reached and --spool names a file, says so in one
 * line with the command that sends the scan later, and opens the file
 * instead (j->db and j->shown become its).  Returns the store, or NULL after
 * printing why there is none.
 */
static struct fidx_store *open_spool(struct scan_job *j, struct fidx_error *err)
{
	if (!j->a.spool || err->code != ECONNREFUSED) {
		fidx_error("%s%s", err->msg, j->origin);
		return NULL;
	}
	char *spool = fidx_store_shown(j->a.spool);
	char *qspool = spool ? fidx_shell_quoted(spool) : NULL;
	char *qdb = fidx_shell_quoted(j->shown);
	if (!qspool || !qdb) {
		fidx_error("out of memory");
		goto fail;
	}
	fidx_warn("%s%s; scanning into '%s' instead: send it later with fidx push %s %s", err->msg,
		  j->origin, fidx_quote(spool), qspool, qdb);
	struct fidx_store *st = fidx_store_open(j->a.spool, FIDX_STORE_WRITE, NULL, err);
	if (!st) {
		fidx_error("%s", err->msg);
		goto fail;
	}
	free(qspool);
	free(qdb);
	free(j->shown);
	j->shown = spool;
	j->db = j->a.spool;
	j->origin = "";
	return st;
fail:
	free(spool);
	free(qspool);
	free(qdb);
	return NULL;
}

/* Prints what the scan did (summary, index warning, --errors, resume hint); returns the
 * exit status. */
static int report(const struct scan_job *j, struct fidx_scan_result *result)
{
	print_summary(result, j->shown, j->nroots, j->roots[0], j->digests != 0);
	if (result->index_error.code)
		fidx_warn("%s; the scan is whole and sealed, queries of it are slower until a later"
			  " scan into the database builds its indexes", result->index_error.msg);
	if (j->error_list)
		print_errors(j->error_list);
	if (result->interrupted && j->a.image)
		fidx_error("interrupted: what was found is recorded, the scan marked 'interrupted'; a"
			   " disk image is read whole: scan it again with fidx scan --image");
	else if (result->interrupted)
		print_resume_hint(result, j->shown, j->roots, j->nroots);
	if (summary_lost(result, j->shown))
		return 2;
	return result->interrupted ? 130 : result->errors ? 1 : 0;
}

int cmd_scan(int argc, char **argv, const struct fidx_command *cmd)
{
	struct scan_job j = {.a = {.jobs = fidx_usable_cpus(), .io = FIDX_IO_AUTO}};
	struct fidx_scan_result result = {0};
	struct fidx_store *st = NULL;
	struct fidx_error err;
	struct plan plan = {0};
	int status = 2;

	(void)cmd;
	if (!(j.a.excludes = calloc((size_t)argc + 1, sizeof(*j.a.excludes)))) {
		fidx_error("out of memory");
		return 2;
	}
	int first = parse_args(argc, argv, &j.a);
	if (first <= 0) {
		status = first == FIDX_PARSE_HELP ? 0 : 2;
		goto out;
	}
	if (j.a.version) {
		fidx_print_version();
		status = 0;
		goto out;
	}
	j.db = fidx_db_name(j.a.db);
	j.origin = fidx_db_origin(j.db);
	j.xdev = j.a.xdev;
	j.follow = j.a.follow || j.a.follow_all;
	j.follow_all = j.a.follow_all;
	j.no_stat = j.a.no_stat;
	j.jobs = j.a.jobs;
	j.io = j.a.io;
	j.show_progress = j.a.force_progress || (!j.a.quiet && isatty(STDERR_FILENO));
	if (settle(&j, first, argc) < 0 || take_roots(&j, argc, argv, first) < 0)
		goto out;
	if (j.a.list_errors && !(j.error_list = tmpfile())) {
		fidx_error("cannot make a temporary file for --errors: %s", strerror(errno));
		goto out;
	}
	if (!(j.shown = fidx_store_shown(j.db))) {
		fidx_error("out of memory");
		goto out;
	}
	int kind = j.a.resume && !j.resume_root ? fidx_store_probe(j.db, NULL) : FIDX_STORE_FIDX;
	if (kind == FIDX_STORE_NONE || (kind < 0 && errno == ENOENT)) {
		fidx_error("nothing to resume: no database '%s'%s", fidx_quote(j.shown), j.origin);
		goto out;
	}
	if (!(st = fidx_store_open(j.db, FIDX_STORE_WRITE, NULL, &err)) &&
	    !(st = open_spool(&j, &err)))
		goto out;
	if (make_plan(st, j.db, j.roots, j.nroots, j.a.resume, j.a.rehash || j.a.image, j.digests,
		      j.error_list, &plan) < 0 ||
	    run_scan(&j, st, &plan, &result) < 0)
		goto out;
	int closed = fidx_store_close(st, &err);
	st = NULL;
	if (closed < 0) {
		fidx_error("cannot close database '%s'", fidx_quote(j.shown));
		goto out;
	}
	status = report(&j, &result);
out:
	fidx_store_close(st, NULL);
	if (j.error_list)
		fclose(j.error_list);
	for (size_t i = 0; i < j.nroots; i++) {
		free(j.roots[i]);
		free(j.root_options[i]);
	}
	free(j.roots);
	free(j.root_options);
	free(j.a.excludes);
	free(j.choice.root);
	free(j.shown);
	free(result.scan_ids);
	free(result.seals);
	plan_free(&plan, j.nroots);
	free(j.resume_root);
	return status;
}
