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
#include "sysinfo.h"

static const struct fidx_option scans_options[] = {
	FIDX_DB_OPTION,
	{{"scan", required_argument, NULL, FIDX_OPT_SCAN}, "ID",
	 "the scans to list, e.g. 3 or 3,5 (default: every scan,\n"
	 "                       whatever its status)"},
	FIDX_OUTPUT_OPTIONS,
	{{"help", no_argument, NULL, 'h'}, NULL, "show this help"},
};
#define NOPTIONS (sizeof(scans_options) / sizeof(scans_options[0]))

/* Prints the help of `fidx scans`. */
static void scans_usage(FILE *out)
{
	fputs("usage: fidx scans [OPTIONS] [DB]\n\n"
	      "List the scans in the database (default $FIDX_DB, else ./fidx.db), oldest\n"
	      "first: id, status, start (UTC), duration, entries, bytes of regular files,\n"
	      "entries recorded with an error, host and root.  A scan still running shows\n"
	      "'-' for what it has not finished; one recorded as running whose process is\n"
	      "gone from this host (killed, or the machine stopped) shows 'dead' ('fidx\n"
	      "scan --resume' continues it; --json keeps \"running\" and adds \"alive\").\n"
	      "The duration leaves out the time between the runs of a resumed scan.\n"
	      "Every scan is listed unless --scan names some.  With -0 each line ends\n"
	      "with a NUL byte and there is no header.\n\n"
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
       C_REUSED, C_BASE, C_SEAL, C_RUN, C_PID };

/*
 * The status to show: the row's, but "dead" for a 'running' scan whose
 * process is gone from this host (killed, or the machine stopped: `fidx scan
 * --resume` continues it).  Sets *alive to fidx_writer_alive() of a running
 * scan, else -1.
 */
static const char *shown_status(sqlite3_stmt *s, int *alive)
{
	const char *status = (const char *)sqlite3_column_text(s, C_STATUS);
	*alive = -1;
	if (!status || strcmp(status, "running") != 0)
		return status ? status : "";
	*alive = fidx_writer_alive(sqlite3_column_int64(s, C_PID),
				   (const char *)sqlite3_column_text(s, C_HOST));
	return *alive == 0 ? "dead" : status;
}

/*
 * Sets *seconds to how long scan s ran: run_ns (schema 4: every run of a
 * resumed scan, the time between them left out), else its end less its start
 * (in integers when the difference fits, else in floating point: the times
 * of a damaged row can be any).  Returns false for a scan that has not ended.
 */
static bool duration(sqlite3_stmt *s, double *seconds)
{
	int64_t ns;
	if (sqlite3_column_type(s, C_FINISHED) == SQLITE_NULL)
		return false;
	if (sqlite3_column_type(s, C_RUN) != SQLITE_NULL)
		*seconds = (double)sqlite3_column_int64(s, C_RUN) / 1e9;
	else if (__builtin_sub_overflow(sqlite3_column_int64(s, C_FINISHED),
					sqlite3_column_int64(s, C_STARTED), &ns))
		*seconds = ((double)sqlite3_column_int64(s, C_FINISHED) -
			    (double)sqlite3_column_int64(s, C_STARTED)) / 1e9;
	else
		*seconds = (double)ns / 1e9;
	return true;
}

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

/* Prints one scan as a JSON object on its own line. */
static void print_json(sqlite3_stmt *s)
{
	char when[32];
	printf("{\"id\":%lld,", sqlite3_column_int64(s, C_ID));
	fidx_json_path(stdout, "root", (const char *)sqlite3_column_text(s, C_ROOT));
	/* The status as recorded; "alive" says whether a running scan's process is. */
	int alive;
	json_text(s, "status", C_STATUS);
	shown_status(s, &alive);
	if (alive >= 0)
		printf(",\"alive\":%s", alive ? "true" : "false");
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
	double seconds;
	if (duration(s, &seconds))
		printf(",\"duration_s\":%.3f", seconds);
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
	double seconds;

	if (duration(s, &seconds))
		snprintf(dur, sizeof(dur), "%.1fs", seconds);
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
	int alive;
	printf("%4lld  %-11s  %s  %8s  %9s  %9s  %6s  %-12s  ", sqlite3_column_int64(s, C_ID),
	       shown_status(s, &alive),
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
		fidx_cli_bad_option("scans", c, argv, scans_options, NOPTIONS);
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
	/* Version 3 added the counts of incremental rescans, the seal and pid, 4 the run time. */
	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT id, root, host, os, kernel, arch, version, options,"
		 " started_ns, finished_ns, status, entries, files, dirs, bytes, errors, %s, %s, %s"
		 " FROM scan WHERE id IN (SELECT id FROM selected_scan) ORDER BY id",
		 q->version >= 3 ? "hashed, reused, base_scan_id, seal" : "NULL, NULL, NULL, NULL",
		 q->version >= 4 ? "run_ns" : "NULL", q->version >= 3 ? "pid" : "NULL");
	if (!(s = fidx_query_prepare(q, sql)))
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
