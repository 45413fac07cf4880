/*
 * cmd_export.c - `fidx export`: the inventory in formats other tools read.
 *
 * The shape of every query command (cmd_scans.c): options from one table,
 * the database and its scans from query.h, then one SELECT streamed to the
 * buffered output.  The formats themselves are in export*.c (export.h).
 *
 * Rows come in the order of the file_scan_path index, scan by scan and by
 * path within a scan (byte order), so the export needs no sort and two
 * exports of the same scan are identical.  Several selected scans (several
 * roots, or --scan 3,5) make one export with every scan's rows: the
 * checksum formats carry absolute paths, so one list can cover many roots.
 *
 * -o FILE writes to a temporary file beside FILE (FILE.XXXXXX) and renames
 * it over FILE only once the export succeeded, so a failed or interrupted
 * export never leaves a partial FILE behind, nor destroys an earlier one.
 * A FILE that exists and is not a regular file (/dev/null, a FIFO) is
 * written in place.
 */
#include "commands.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "dbtime.h"
#include "diag.h"
#include "export.h"
#include "hash.h"
#include "output.h"
#include "progress.h"
#include "query.h"
#include "record.h"

enum { OPT_EXCEL_SAFE = 0x2000 };

static const struct fidx_option export_options[] = {
	{{"format", required_argument, NULL, 'f'}, "FORMAT",
	 "csv, jsonl, sha256sum, md5sum, sha1sum, sha512sum,\n"
	 "                       hashdeep, body or dfxml"},
	{{"output", required_argument, NULL, 'o'}, "FILE",
	 "write to FILE, not stdout; FILE is replaced only once\n"
	 "                       the export is complete"},
	{{"excel-safe", no_argument, NULL, OPT_EXCEL_SAFE}, NULL,
	 "csv: quote every text cell, and put ' before one that\n"
	 "                       starts with = + - @ TAB or CR (formula injection)"},
	FIDX_DB_OPTIONS,
	{{"json", no_argument, NULL, FIDX_OPT_JSON}, NULL, "the same as --format jsonl"},
	{{"quiet", no_argument, NULL, 'q'}, NULL,
	 "no progress line (else drawn on stderr after half a\n"
	 "                       second, when it is a terminal the export does not go to)"},
	{{"help", no_argument, NULL, 'h'}, NULL, "show this help"},
};
#define NOPTIONS (sizeof(export_options) / sizeof(export_options[0]))

/* Prints the help of `fidx export`. */
static void export_usage(FILE *out)
{
	fputs("usage: fidx export [OPTIONS] [DB] --format FORMAT\n\n"
	      "Write the entries of the selected scans in a format another tool reads,\n"
	      "in path order, to stdout or FILE.\n\n"
	      "Formats:\n", out);
	for (size_t i = 0; i < export_nformats; i++)
		fprintf(out, "  %-11s%s\n", export_formats[i].name, export_formats[i].summary);
	fputs("\nThe checksum lists (the *sum formats and hashdeep) list the regular files\n"
	      "that have the digest; they need scans made with it (--hash).  A name that\n"
	      "XML cannot carry is percent-encoded in DFXML, marked fidx:encoding=\n"
	      "\"percent\"; in the body file '%', '|' and control bytes are %XX, as\n"
	      "mactime decodes them.  'man fidx' describes each format.\n\n"
	      "Options:\n", out);
	fidx_cli_usage(out, export_options, NOPTIONS);
	fputs("\nExit status: 0 every entry written, 1 written but some entries left out\n"
	      "(a warning says how many and why), 2 usage or fatal error.\n", out);
}

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
 * when it exists and is not a regular file.  Refuses the database and its
 * WAL files.  Returns 0, or -1 after printing why.
 */
static int output_open(struct output *o, const char *db)
{
	struct stat st;
	int fd;

	if (stat(o->path, &st) == 0) {
		static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
		for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
			char name[4096];
			if ((size_t)snprintf(name, sizeof(name), "%s%s", db, suffixes[i]) <
				    sizeof(name) && same_file(name, &st)) {
				fidx_error("cannot write to '%s': it is the database", fidx_quote(o->path));
				return -1;
			}
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
 * Fills ctx->scan_digests and ctx->digests from the hash option each
 * selected scan recorded (a scan whose options do not say counts as having
 * every digest: its rows decide).  Returns 0, or -1 after printing why.
 */
static int scan_digests(struct export_ctx *ctx)
{
	const struct fidx_query *q = ctx->q;
	sqlite3_stmt *s = fidx_query_prepare(q, "SELECT CASE WHEN json_valid(options) THEN"
						" json_extract(options, '$.hash') END"
						" FROM scan WHERE id = ?");
	if (!s)
		return -1;
	if (!(ctx->scan_digests = calloc(q->nscans ? q->nscans : 1, sizeof(unsigned)))) {
		sqlite3_finalize(s);
		fidx_error("out of memory");
		return -1;
	}
	ctx->digests = (1u << FIDX_NDIGESTS) - 1;
	for (size_t i = 0; i < q->nscans; i++) {
		unsigned mask = (1u << FIDX_NDIGESTS) - 1;
		sqlite3_bind_int64(s, 1, q->scans[i]);
		if (sqlite3_step(s) != SQLITE_ROW) {
			fidx_query_fail(q);
			sqlite3_finalize(s);
			return -1;
		}
		const unsigned char *hash = sqlite3_column_text(s, 0);
		if (hash && fidx_digest_list_parse((const char *)hash, &mask) < 0)
			mask = (1u << FIDX_NDIGESTS) - 1;
		ctx->scan_digests[i] = mask;
		ctx->digests &= mask;
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	return 0;
}

/* Rows between checks for a failed write (a full disk stops the export). */
#define CHECK_EVERY 4096

/*
 * Writes the export of fmt from the open query ctx->q to stdout, counting
 * the rows read in *rows (for the progress line).  Returns 0, or -1 after
 * printing why.
 */
static int run_export(struct export_ctx *ctx, const struct export_format *fmt,
		      atomic_uint_least64_t *rows)
{
	char sql[1024];
	sqlite3_stmt *s;
	int rc;
	unsigned long n = 0;

	snprintf(sql, sizeof(sql), "SELECT " EXPORT_COLUMNS_SQL "%s FROM file"
		 " WHERE scan_id IN (SELECT id FROM selected_scan) AND %s%s%s ORDER BY scan_id, path",
		 fidx_time_ext_sql(ctx->q->version, NULL, FIDX_TIME_ALL),
		 fidx_query_shown(ctx->q, "file"),
		 fmt->filter ? " AND " : "", fmt->filter ? fmt->filter : "");
	if (!(s = fidx_query_prepare(ctx->q, sql)))
		return -1;
	struct fidx_rowcheck *check = fidx_query_rowcheck(ctx->q, s,
							  fmt->reads ? fmt->reads : FIDX_ROWCHECK_ALL);
	if (!check || (fmt->begin && fmt->begin(ctx) < 0)) {
		fidx_rowcheck_free(check);
		sqlite3_finalize(s);
		return -1;
	}
	const char *damage = NULL;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if ((damage = fidx_rowcheck(check, s)))
			break;
		fmt->row(ctx, s);
		if (++n % CHECK_EVERY == 0) {
			atomic_store_explicit(rows, n, memory_order_relaxed);
			if (ferror_unlocked(ctx->out))
				break;
		}
	}
	if (damage || (rc != SQLITE_ROW && rc != SQLITE_DONE)) {
		if (damage)
			fidx_query_damaged(ctx->q, damage);
		else
			fidx_query_fail(ctx->q);
		fidx_rowcheck_free(check);
		sqlite3_finalize(s);
		return -1;
	}
	fidx_rowcheck_free(check);
	sqlite3_finalize(s);
	if (rc == SQLITE_DONE && fmt->end)
		fmt->end(ctx);
	return 0;
}

int cmd_export(int argc, char **argv)
{
	struct option longopts[NOPTIONS + 1];
	struct fidx_query_args qa = {0};
	struct export_ctx ctx = {.out = stdout, .argc = argc, .argv = argv};
	struct output o = {0};
	const char *format = NULL;
	bool quiet = false;
	int c;

	fidx_cli_longopts(export_options, NOPTIONS, longopts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; continue;
		case 'o': o.path = optarg; continue;
		case 'q': quiet = true; continue;
		case OPT_EXCEL_SAFE: ctx.excel_safe = true; continue;
		case 'h': export_usage(stdout); return 0;
		case FIDX_OPT_DB: case FIDX_OPT_SCAN: case FIDX_OPT_JSON:
			fidx_query_option(c, optarg, &qa);
			continue;
		}
		fidx_cli_bad_option("export", c, argv, export_options, NOPTIONS);
		return 2;
	}
	if (optind < argc && !qa.db)
		qa.db = argv[optind++];
	if (optind < argc) {
		fidx_error("unexpected argument '%s' (see 'fidx export --help')",
			   fidx_quote(argv[optind]));
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
	if (ctx.excel_safe && strcmp(fmt->name, "csv") != 0) {
		fidx_error("--excel-safe is for --format csv, not %s", fmt->name);
		return 2;
	}
	if (o.path && !*o.path) {
		fidx_error("--output needs a file name");
		return 2;
	}

	qa.digests = fmt->needs;
	struct fidx_query *q = fidx_query_open(&qa);
	if (!q)
		return 2;
	ctx.q = q;
	int status = 2;
	if (scan_digests(&ctx) < 0)
		goto out;
	if (o.path && strcmp(o.path, "-") != 0 && output_open(&o, q->path) < 0)
		goto out;
	fidx_out_begin();
	atomic_uint_least64_t rows = 0;
	bool to_stdout = !o.path || strcmp(o.path, "-") == 0;
	struct fidx_progress *progress =
		fidx_progress_rows_wanted(quiet, to_stdout)
			? fidx_progress_rows_start(&rows, fidx_query_rows(q, fmt->filter != NULL))
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
	free(ctx.scan_digests);
	if (q && fidx_query_close(q) < 0)
		status = 2;
	return status;
}
