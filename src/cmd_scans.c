/*
 * cmd_scans.c - `fidx scans`: what a database holds, one line per scan.
 *
 * The smallest query command, and the pattern of the others: options from
 * one table (cli.h), the database and scans from query.h, rows straight from
 * one SELECT to the buffered output (output.h).
 */
#include "commands.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "diag.h"
#include "json.h"
#include "output.h"
#include "query.h"

static const struct fidx_option scans_options[] = {
	FIDX_QUERY_OPTIONS,
	{{"help", no_argument, NULL, 'h'}, NULL, "show this help"},
};
#define NOPTIONS (sizeof(scans_options) / sizeof(scans_options[0]))

/* Prints the help of `fidx scans`. */
static void scans_usage(FILE *out)
{
	fputs("usage: fidx scans [OPTIONS] [DB]\n\n"
	      "List the scans in the database (default ./fidx.db), oldest first: id,\n"
	      "status, start (UTC), duration, entries, bytes of regular files, entries\n"
	      "recorded with an error, host and root.  A scan still running shows '-'\n"
	      "for what it has not finished.  Every scan is listed unless --scan names\n"
	      "some.  With -0 each line ends with a NUL byte and there is no header.\n\n"
	      "Options:\n", out);
	fidx_cli_usage(out, scans_options, NOPTIONS);
	fputs("\nExit status: 0 listed (even none), 2 usage or fatal error.\n", out);
}

/* Formats ns since the epoch as "2026-11-30T10:58:29Z" into buf. */
static const char *utc_time(int64_t ns, char buf[static 32])
{
	time_t t = (time_t)(ns / 1000000000 - (ns % 1000000000 < 0));
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, 32, "?");
	return buf;
}

/* Columns of the SELECT below. */
enum { C_ID, C_ROOT, C_HOST, C_OS, C_KERNEL, C_ARCH, C_VERSION, C_OPTIONS, C_STARTED,
       C_FINISHED, C_STATUS, C_ENTRIES, C_FILES, C_DIRS, C_BYTES, C_ERRORS, C_HASHED,
       C_REUSED, C_BASE, C_SEAL };

/* Writes one JSON member "key": integer column c, or null. */
static void json_int(sqlite3_stmt *s, const char *key, int c)
{
	if (sqlite3_column_type(s, c) == SQLITE_NULL)
		printf(",\"%s\":null", key);
	else
		printf(",\"%s\":%lld", key, sqlite3_column_int64(s, c));
}

/* Writes one JSON member "key": text column c, or null. */
static void json_text(sqlite3_stmt *s, const char *key, int c)
{
	printf(",\"%s\":", key);
	if (sqlite3_column_type(s, c) == SQLITE_NULL)
		fputs("null", stdout);
	else
		fidx_json_string(stdout, (const char *)sqlite3_column_text(s, c));
}

/*
 * The seconds from the scan's start to its end: the difference in integers
 * when it fits, else in floating point (times of a damaged row can be any).
 */
static double duration_s(sqlite3_stmt *s)
{
	int64_t ns;
	if (__builtin_sub_overflow(sqlite3_column_int64(s, C_FINISHED),
				   sqlite3_column_int64(s, C_STARTED), &ns))
		return ((double)sqlite3_column_int64(s, C_FINISHED) -
			(double)sqlite3_column_int64(s, C_STARTED)) / 1e9;
	return (double)ns / 1e9;
}

/* Prints one scan as a JSON object on its own line. */
static void print_json(sqlite3_stmt *s)
{
	char when[32];
	printf("{\"id\":%lld,", sqlite3_column_int64(s, C_ID));
	fidx_json_path(stdout, "root", (const char *)sqlite3_column_text(s, C_ROOT));
	json_text(s, "status", C_STATUS);
	json_text(s, "host", C_HOST);
	json_text(s, "os", C_OS);
	json_text(s, "kernel", C_KERNEL);
	json_text(s, "arch", C_ARCH);
	json_text(s, "version", C_VERSION);
	/* options is a JSON object already (written by fidx scan). */
	const char *opts = (const char *)sqlite3_column_text(s, C_OPTIONS);
	printf(",\"options\":%s", opts && *opts == '{' ? opts : "null");
	printf(",\"started\":\"%s\"", utc_time(sqlite3_column_int64(s, C_STARTED), when));
	json_int(s, "started_ns", C_STARTED);
	json_int(s, "finished_ns", C_FINISHED);
	if (sqlite3_column_type(s, C_FINISHED) != SQLITE_NULL)
		printf(",\"duration_s\":%.3f", duration_s(s));
	else
		fputs(",\"duration_s\":null", stdout);
	json_int(s, "entries", C_ENTRIES);
	json_int(s, "files", C_FILES);
	json_int(s, "dirs", C_DIRS);
	json_int(s, "bytes", C_BYTES);
	json_int(s, "errors", C_ERRORS);
	json_int(s, "hashed", C_HASHED);
	json_int(s, "reused", C_REUSED);
	json_int(s, "base_scan_id", C_BASE);
	fputs(",\"seal\":", stdout);
	if (sqlite3_column_bytes(s, C_SEAL) > 0) {
		fidx_json_hex(stdout, sqlite3_column_blob(s, C_SEAL),
			      (size_t)sqlite3_column_bytes(s, C_SEAL));
	} else {
		fputs("null", stdout);
	}
	fputs("}\n", stdout);
}

/* Prints one scan as a line of the table (the root last, byte for byte). */
static void print_text(sqlite3_stmt *s, bool nul)
{
	char when[32], dur[32], entries[24], bytes[16], errors[24];
	bool done = sqlite3_column_type(s, C_FINISHED) != SQLITE_NULL;

	if (done)
		snprintf(dur, sizeof(dur), "%.1fs", duration_s(s));
	else
		strcpy(dur, "-");
	if (sqlite3_column_type(s, C_ENTRIES) == SQLITE_NULL) {
		strcpy(entries, "-");
		strcpy(bytes, "-");
		strcpy(errors, "-");
	} else {
		snprintf(entries, sizeof(entries), "%lld", sqlite3_column_int64(s, C_ENTRIES));
		fidx_human_size((uint64_t)sqlite3_column_int64(s, C_BYTES), bytes);
		snprintf(errors, sizeof(errors), "%lld", sqlite3_column_int64(s, C_ERRORS));
	}
	const char *host = (const char *)sqlite3_column_text(s, C_HOST);
	printf("%4lld  %-11s  %s  %8s  %9s  %9s  %6s  %-12s  ", sqlite3_column_int64(s, C_ID),
	       (const char *)sqlite3_column_text(s, C_STATUS),
	       utc_time(sqlite3_column_int64(s, C_STARTED), when), dur, entries, bytes, errors,
	       host ? fidx_quote(host) : "-");
	fidx_out_path((const char *)sqlite3_column_text(s, C_ROOT), nul);
}

int cmd_scans(int argc, char **argv)
{
	struct option longopts[NOPTIONS + 1];
	struct fidx_query_args qa = {.every_scan = true};
	struct fidx_query *q = NULL;
	sqlite3_stmt *s = NULL;
	int c, status = 2;

	fidx_cli_longopts(scans_options, NOPTIONS, longopts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":0h", longopts, NULL)) != -1) {
		if (fidx_query_option(c, optarg, &qa))
			continue;
		if (c == 'h') {
			scans_usage(stdout);
			return 0;
		}
		fidx_cli_bad_option("scans", c, argv);
		return 2;
	}
	if (optind < argc && !qa.db)
		qa.db = argv[optind++];
	if (optind < argc) {
		fidx_error("unexpected argument '%s' (see 'fidx scans --help')",
			   fidx_quote(argv[optind]));
		return 2;
	}
	if (!(q = fidx_query_open(&qa)))
		return 2;
	fidx_out_begin();
	/* Version 3 added the counts of incremental rescans and the seal. */
	if (!(s = fidx_query_prepare(q, q->version >= 3
					? "SELECT id, root, host, os, kernel, arch, version, options,"
					  " started_ns, finished_ns, status, entries, files, dirs,"
					  " bytes, errors, hashed, reused, base_scan_id, seal FROM scan"
					  " WHERE id IN (SELECT id FROM selected_scan) ORDER BY id"
					: "SELECT id, root, host, os, kernel, arch, version, options,"
					  " started_ns, finished_ns, status, entries, files, dirs,"
					  " bytes, errors, NULL, NULL, NULL, NULL FROM scan"
					  " WHERE id IN (SELECT id FROM selected_scan) ORDER BY id")))
		goto out;
	if (!qa.json && !qa.nul)
		printf("%4s  %-11s  %-20s  %8s  %9s  %9s  %6s  %-12s  %s\n", "ID", "STATUS",
		       "STARTED (UTC)", "DURATION", "ENTRIES", "BYTES", "ERRORS", "HOST", "ROOT");
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (qa.json)
			print_json(s);
		else
			print_text(s, qa.nul);
	}
	if (rc != SQLITE_DONE) {
		fidx_query_fail(q);
		goto out;
	}
	status = 0;
out:
	if (fidx_out_end() < 0)
		status = 2;
	sqlite3_finalize(s);
	if (fidx_query_close(q) < 0)
		status = 2;
	return status;
}
