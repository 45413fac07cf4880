/*
 * export.c - `fidx export`: the inventory in formats other tools read.
 *
 * The shape of every query command (scans.c): options from one table
 * (options.h), the database and its scans from query.h, then the store's
 * rows of the selected scans streamed to the buffered output.  The formats
 * themselves are in src/tool/export*.c (export.h).
 *
 * Rows come scan by scan (ascending ids) and by path within a scan (byte
 * order), so two exports of the same scan are identical, and all of them
 * are read as of one moment (fidx_store_snapshot()).  Several selected
 * scans (several roots, or --scan 3,5) make one export with every scan's
 * rows: the checksum formats carry absolute paths, so one list can cover
 * many roots.
 *
 * -o FILE writes to a temporary file beside FILE (FILE.XXXXXX) and renames
 * it over FILE only once the export succeeded, so a failed or interrupted
 * export never leaves a partial FILE behind, nor destroys an earlier one.
 * A FILE that exists and is not a regular file (/dev/null, a FIFO) is
 * written in place; one that is the database (or a file kept beside it,
 * fidx_store_files()) is refused.
 */
#include "builtin.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "export.h"
#include "options.h"
#include "output.h"
#include "progress.h"
#include "query.h"
#include "record.h"
#include "scanrow.h"
#include "store.h"

/* Writes the generated part of --help: the formats, and what the lists need. */
static void export_help_more(FILE *out)
{
	for (size_t i = 0; i < export_nformats; i++)
		fprintf(out, "  %-11s%s\n", export_formats[i].name, export_formats[i].summary);
	fputs("\nThe checksum lists (the *sum formats and hashdeep) list the regular files\n"
	      "that have the digest; they need scans made with it (--hash).  A name that\n"
	      "XML cannot carry is percent-encoded in DFXML, marked fidx:encoding=\n"
	      "\"percent\"; in the body file '%', '|' and control bytes are %XX, as\n"
	      "mactime decodes them.  'man fidx' describes each format.\n\n", out);
}

/* What `fidx export --help` says around its options. */
static const struct fidx_help export_help = {
	.command = "export",
	.text = "usage: fidx export [OPTIONS] [DB] --format FORMAT\n\n"
		"Write the entries of the selected scans in a format another tool reads,\n"
		"in path order, to stdout or FILE.\n\n"
		"Formats:\n",
	.more = export_help_more,
	.footer = "\nExit status: 0 every entry written, 1 written but some entries left out\n"
		  "(a warning says how many and why), 2 usage or fatal error.\n",
};

/* The temporary file of -o while it may need removing, for the signal handler. */
static char *volatile temp_path;

/* SIGINT/SIGTERM/SIGHUP during -o: remove the partial file, then die of sig. */
static void on_signal(int sig)
{
	char *p = temp_path;
	if (p)
		unlink(p);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Where the export goes with -o. */
struct output {
	const char *path;   /* FILE as given */
	char *temp;         /* the temporary file, or NULL when FILE is written in place */
};

/* Returns whether path names the file of st (same device and inode). */
static bool same_file(const char *path, const struct stat *st)
{
	struct stat o;
	return stat(path, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino;
}

/*
 * Ends -o: when ok, gives the temporary file the mode a new file gets (0666
 * less the umask) and renames it over FILE; otherwise removes it.  Returns
 * 0, or -1 when ok was false (the caller printed why) or the rename failed
 * (printed here).
 */
static int output_close(struct output *o, bool ok)
{
	if (!o->temp)
		return ok ? 0 : -1;
	if (ok) {
		mode_t mask = umask(0);
		umask(mask);
		if (fchmod(STDOUT_FILENO, 0666 & ~mask) < 0 || rename(o->temp, o->path) < 0) {
			fidx_error("cannot write to '%s': %s", fidx_quote(o->path), strerror(errno));
			ok = false;
		}
	}
	temp_path = NULL;
	if (!ok)
		unlink(o->temp);
	free(o->temp);
	o->temp = NULL;
	return ok ? 0 : -1;
}

/*
 * Points stdout at -o FILE: a new temporary file beside it, or FILE itself
 * when it exists and is not a regular file.  Refuses the database and the
 * files kept beside it (db_files, NULL-terminated: fidx_store_files()).
 * Returns 0, or -1 after printing why.
 */
static int output_open(struct output *o, const char *const *db_files)
{
	struct stat st;
	int fd;

	if (stat(o->path, &st) == 0) {
		for (size_t i = 0; db_files && db_files[i]; i++)
			if (same_file(db_files[i], &st)) {
				fidx_error("cannot write to '%s': it is the database", fidx_quote(o->path));
				return -1;
			}
		if (S_ISDIR(st.st_mode)) {
			fidx_error("cannot write to '%s': %s", fidx_quote(o->path), strerror(EISDIR));
			return -1;
		}
		if (!S_ISREG(st.st_mode)) {
			if ((fd = open(o->path, O_WRONLY | O_CLOEXEC)) < 0) {
				fidx_error("cannot open '%s': %s", fidx_quote(o->path), strerror(errno));
				return -1;
			}
			goto ready;
		}
	}
	size_t len = strlen(o->path);
	if (!(o->temp = malloc(len + 8))) {
		fidx_error("out of memory");
		return -1;
	}
	memcpy(o->temp, o->path, len);
	memcpy(o->temp + len, ".XXXXXX", 8);
	/* No signal between the file's creation and its handler knowing it. */
	struct sigaction sa = {.sa_handler = on_signal};
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	if ((fd = mkostemp(o->temp, O_CLOEXEC)) >= 0) {
		temp_path = o->temp;
		sa.sa_mask = block;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	int err = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		fidx_error("cannot create a file beside '%s': %s", fidx_quote(o->path),
			   strerror(err));
		free(o->temp);
		o->temp = NULL;
		return -1;
	}
ready:
	if (dup2(fd, STDOUT_FILENO) < 0) {
		fidx_error("cannot write to '%s': %s", fidx_quote(o->path), strerror(errno));
		close(fd);
		output_close(o, false);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * Returns the digests every selected scan of q computed, as the hash option
 * each recorded says (a scan whose options do not say counts as having
 * every digest: its rows decide).
 */
static unsigned common_digests(const struct fidx_query *q)
{
	unsigned digests = (1u << FIDX_NDIGESTS) - 1;
	for (size_t i = 0; i < q->nscans; i++)
		digests &= fidx_scan_row_digests_or_all(&q->sel.scans.rows[i]);
	return digests;
}

/* Rows between checks for a failed write (a full disk stops the export). */
#define CHECK_EVERY 4096

/*
 * Writes the export of fmt from the open query ctx->q to stdout: the
 * columns fmt->reads of the rows of fmt->types, scan by scan and in path
 * order, counting the rows read in *rows (for the progress line).  Returns
 * 0, or -1 after printing why (a damaged row: the store's message names it).
 */
static int run_export(struct export_ctx *ctx, const struct export_format *fmt,
		      atomic_uint_least64_t *rows)
{
	const struct fidx_query *q = ctx->q;
	struct fidx_rows_query rq;
	struct fidx_error err;
	const struct fidx_row *row;
	uint64_t n = 0;
	int rc;

	/* One read transaction: every scan is read as of the same moment. */
	if (fidx_store_snapshot(q->st, &err) < 0)
		return fidx_query_fail(q, &err), -1;
	fidx_query_rows(q, fmt->reads, FIDX_ROWS_PATH, &rq);
	rq.types = fmt->types;
	struct fidx_rows *it = fidx_store_rows(q->st, &rq, &err);
	if (!it)
		return fidx_query_fail(q, &err), -1;
	if (fmt->begin && fmt->begin(ctx) < 0) {
		fidx_rows_close(it);
		return -1;
	}
	while ((rc = fidx_rows_next(it, &row, &err)) == 1) {
		fmt->row(ctx, row);
		if (++n % CHECK_EVERY == 0) {
			atomic_store_explicit(rows, n, memory_order_relaxed);
			if (ferror_unlocked(ctx->out))
				break;
		}
	}
	fidx_rows_close(it);
	if (rc < 0)
		return fidx_query_fail(q, &err), -1;
	/* A failed write stopped the rows: fidx_out_end() tells it, no trailer is written. */
	if (rc == 0 && fmt->end)
		fmt->end(ctx);
	return 0;
}

/* `fidx export`: parses the options, opens the scans, writes the export. */
int cmd_export(int argc, char **argv, const struct fidx_command *cmd)
{
	struct fidx_query_args qa = {0};
	struct export_ctx ctx = {.out = stdout, .argc = argc, .argv = argv};
	struct output o = {0};
	const char *format = NULL;
	bool quiet = false, csv_raw = false, excel_safe_given = false;
	struct fidx_option options[] = {
		FIDX_OPT_STRING('f', "format", "FORMAT", &format,
				"csv, jsonl, sha256sum, md5sum, sha1sum, sha512sum, hashdeep, body"
				" or dfxml"),
		FIDX_OPT_STRING('o', "output", "FILE", &o.path,
				"write to FILE, not stdout; FILE is replaced only once the export is"
				" complete"),
		FIDX_OPT_FLAG(0, "csv-raw", &csv_raw,
			      "csv: write every text cell as recorded, even one a spreadsheet would"
			      " run as a formula (by default one that starts with = + - @ ' TAB or CR"
			      " gets a leading ')"),
		FIDX_OPT_FLAG(0, "excel-safe", &excel_safe_given,
			      "csv: the default guard against formula injection (kept for scripts)"),
		FIDX_OPT_DB(&qa),
		FIDX_OPT_SCAN(&qa),
		FIDX_OPT_HOST(&qa),
		FIDX_OPT_FLAG(0, "json", &qa.json, "the same as --format jsonl"),
		FIDX_OPT_FLAG('q', "quiet", &quiet,
			      "no progress line (else drawn on stderr after half a second, when it"
			      " is a terminal the export does not go to)"),
		FIDX_OPT_END,
	};

	(void)cmd;
	int first = fidx_parse_options(argc, argv, options, &export_help);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 0 : 2;
	if (first < argc && !qa.db)
		qa.db = argv[first++];
	if (first < argc) {
		fidx_error("unexpected argument '%s' (see 'fidx export --help')",
			   fidx_quote(argv[first]));
		return 2;
	}
	if (qa.json && format && strcmp(format, "jsonl") != 0) {
		fidx_error("--json is --format jsonl: it cannot go with --format %s",
			   fidx_quote(format));
		return 2;
	}
	if (qa.json)
		format = "jsonl";
	if (!format) {
		fidx_error("which format? give --format (see 'fidx export --help')");
		return 2;
	}
	const struct export_format *fmt = ctx.fmt = export_format_find(format);
	if (!fmt) {
		fidx_error("unknown format '%s': csv, jsonl, sha256sum, md5sum, sha1sum, sha512sum,"
			   " hashdeep, body or dfxml", fidx_quote(format));
		return 2;
	}
	if ((excel_safe_given || csv_raw) && strcmp(fmt->name, "csv") != 0) {
		fidx_error("--%s is for --format csv, not %s", csv_raw ? "csv-raw" : "excel-safe",
			   fmt->name);
		return 2;
	}
	if (excel_safe_given && csv_raw) {
		fidx_error("--excel-safe and --csv-raw cannot go together");
		return 2;
	}
	/* A name is the attacker's text and a CSV file is opened in spreadsheets: guarded
	 * unless asked (the man page says why). */
	ctx.excel_safe = !csv_raw;
	if (o.path && !*o.path) {
		fidx_error("--output needs a file name");
		return 2;
	}

	qa.digests = fmt->needs;
	struct fidx_query *q = fidx_query_open(&qa, NULL);
	if (!q)
		return 2;
	ctx.q = q;
	ctx.db_arg = qa.db;
	ctx.db_shown = fidx_store_name(q->st);
	ctx.digests = common_digests(q);
	int status = 2;
	if (o.path && strcmp(o.path, "-") != 0 && output_open(&o, fidx_store_files(q->st)) < 0)
		goto out;
	fidx_out_begin();
	atomic_uint_least64_t rows = 0;
	bool to_stdout = !o.path || strcmp(o.path, "-") == 0;
	struct fidx_progress *progress =
		fidx_progress_rows_wanted(quiet, to_stdout)
			? fidx_progress_rows_start(&rows, fidx_query_count(q, fmt->types != 0))
			: NULL;
	bool ok = run_export(&ctx, fmt, &rows) == 0;
	fidx_progress_stop(progress);
	ok = fidx_out_end() == 0 && ok;
	/* A database changed while it was read (the close says so) is no export to keep. */
	ok = fidx_query_close(q) == 0 && ok;
	q = NULL;
	if (output_close(&o, ok) < 0)
		goto out;
	status = ctx.no_digest || ctx.bad_name ? 1 : 0;
out:
	if (q && fidx_query_close(q) < 0)
		status = 2;
	return status;
}
