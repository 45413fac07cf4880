/*
 * scans.c - `fidx scans`: what a database holds, one line per scan.
 *
 * The smallest query command, and the pattern of the others: options from
 * one table (options.h), the database and its scans from query.h, each
 * scan row straight to the buffered output (output.h).
 */
#include "builtin.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diag.h"
#include "json.h"
#include "options.h"
#include "output.h"
#include "query.h"
#include "sysinfo.h"

/* What `fidx scans --help` says around its options. */
static const struct fidx_help scans_help = {
	.command = "scans",
	.text = "usage: fidx scans [OPTIONS] [DB]\n\n"
		"List the scans in the database (default $FIDX_DB, else ./fidx.db), oldest\n"
		"first: id, status, start (UTC), duration, entries, bytes of regular files,\n"
		"entries recorded with an error, host and root.  A scan still running shows\n"
		"'-' for what it has not finished; one recorded as running whose process is\n"
		"gone from this host (killed, or the machine stopped) shows 'dead' ('fidx\n"
		"scan --resume' continues it; --json keeps \"running\" and adds \"alive\").\n"
		"The duration leaves out the time between the runs of a resumed scan.\n"
		"Every scan is listed unless --scan names some.  With -0 each line ends\n"
		"with a NUL byte and there is no header.\n\n",
	.footer = "\nExit status: 0 listed (even none), 2 usage or fatal error.\n",
};

/* Formats ns since the epoch as "2026-11-30T10:58:29Z" into buf. */
static const char *utc_time(int64_t ns, char buf[static 32])
{
	time_t t = (time_t)(ns / 1000000000 - (ns % 1000000000 < 0));
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, 32, "?");
	return buf;
}

/*
 * The status to show: the row's, but "dead" for a 'running' scan whose
 * process is gone from this host (killed, or the machine stopped: `fidx scan
 * --resume` continues it).  Sets *alive to fidx_writer_alive() of a running
 * scan, else -1.
 */
static const char *shown_status(const struct fidx_scan_row *s, int *alive)
{
	*alive = -1;
	if (!s->status || strcmp(s->status, "running") != 0)
		return s->status ? s->status : "";
	*alive = fidx_writer_alive(s->pid, s->host);
	return *alive == 0 ? "dead" : s->status;
}

/*
 * Sets *seconds to how long scan s ran: run_ns (schema 4: every run of a
 * resumed scan, the time between them left out), else its end less its start
 * (in integers when the difference fits, else in floating point: the times
 * of a damaged row can be any).  Returns false for a scan that has not ended.
 */
static bool duration(const struct fidx_scan_row *s, double *seconds)
{
	int64_t ns;
	if (!fidx_scan_has(s, FIDX_SCOL_FINISHED_NS))
		return false;
	if (fidx_scan_has(s, FIDX_SCOL_RUN_NS))
		*seconds = (double)s->run_ns / 1e9;
	else if (__builtin_sub_overflow(s->finished_ns, s->started_ns, &ns))
		*seconds = ((double)s->finished_ns - (double)s->started_ns) / 1e9;
	else
		*seconds = (double)ns / 1e9;
	return true;
}

/* Writes one JSON member "key": integer column c of s, or null. */
static void json_int(const struct fidx_scan_row *s, const char *key, enum fidx_scol c,
		     int64_t value)
{
	if (!fidx_scan_has(s, c))
		printf(",\"%s\":null", key);
	else
		printf(",\"%s\":%" PRId64, key, value);
}

/* Writes one JSON member "key": text value, or null. */
static void json_text(const char *key, const char *value)
{
	printf(",\"%s\":", key);
	if (!value)
		fputs("null", stdout);
	else
		fidx_json_string(stdout, value);
}

/* Prints one scan as a JSON object on its own line. */
static void print_json(const struct fidx_scan_row *s)
{
	char when[32];
	printf("{\"id\":%" PRId64, s->id);
	json_text("uuid", s->uuid);
	putc_unlocked(',', stdout);
	fidx_json_path(stdout, "root", s->root ? s->root : "");
	/* The status as recorded; "alive" says whether a running scan's process is. */
	int alive;
	json_text("status", s->status);
	shown_status(s, &alive);
	if (alive >= 0)
		printf(",\"alive\":%s", alive ? "true" : "false");
	json_text("host", s->host);
	json_text("os", s->os);
	json_text("kernel", s->kernel);
	json_text("arch", s->arch);
	json_text("version", s->version);
	/* options is a JSON object already (written by fidx scan). */
	printf(",\"options\":%s", s->options && *s->options == '{' ? s->options : "null");
	printf(",\"started\":\"%s\"", utc_time(s->started_ns, when));
	json_int(s, "started_ns", FIDX_SCOL_STARTED_NS, s->started_ns);
	json_int(s, "finished_ns", FIDX_SCOL_FINISHED_NS, s->finished_ns);
	double seconds;
	if (duration(s, &seconds))
		printf(",\"duration_s\":%.3f", seconds);
	else
		fputs(",\"duration_s\":null", stdout);
	json_int(s, "entries", FIDX_SCOL_ENTRIES, s->entries);
	json_int(s, "files", FIDX_SCOL_FILES, s->files);
	json_int(s, "dirs", FIDX_SCOL_DIRS, s->dirs);
	json_int(s, "bytes", FIDX_SCOL_BYTES, s->bytes);
	json_int(s, "errors", FIDX_SCOL_ERRORS, s->errors);
	json_int(s, "hashed", FIDX_SCOL_HASHED, s->hashed);
	json_int(s, "reused", FIDX_SCOL_REUSED, s->reused);
	json_int(s, "base_scan_id", FIDX_SCOL_BASE_SCAN_ID, s->base_scan_id);
	fputs(",\"seal\":", stdout);
	if (s->seal && s->seal_len > 0)
		fidx_json_hex(stdout, s->seal, s->seal_len);
	else
		fputs("null", stdout);
	fputs("}\n", stdout);
}

/* Prints one scan as a line of the table (the root last, byte for byte). */
static void print_text(const struct fidx_scan_row *s, bool nul)
{
	char when[32], dur[32], entries[24], bytes[FIDX_SIZE_TEXT], errors[24];
	double seconds;

	if (duration(s, &seconds))
		snprintf(dur, sizeof(dur), "%.1fs", seconds);
	else
		strcpy(dur, "-");
	if (!fidx_scan_has(s, FIDX_SCOL_ENTRIES)) {
		strcpy(entries, "-");
		strcpy(bytes, "-");
		strcpy(errors, "-");
	} else {
		snprintf(entries, sizeof(entries), "%" PRId64, s->entries);
		fidx_size_text((uint64_t)s->bytes, false, bytes);
		snprintf(errors, sizeof(errors), "%" PRId64, s->errors);
	}
	int alive;
	printf("%4" PRId64 "  %-11s  %s  %8s  %9s  %9s  %6s  %-12s  ", s->id, shown_status(s, &alive),
	       utc_time(s->started_ns, when), dur, entries, bytes, errors,
	       s->host ? fidx_quote(s->host) : "-");
	fidx_out_path(s->root ? s->root : "", nul);
}

int cmd_scans(int argc, char **argv, const struct fidx_command *cmd)
{
	struct fidx_query_args qa = {.every_scan = true};
	struct fidx_option options[] = {
		FIDX_OPT_DB(&qa),
		FIDX_OPT_HOST(&qa),
		FIDX_OPT_STRING(0, "scan", "ID", &qa.scan,
				"the scans to list, e.g. 3 or 3,5 (default: every scan, whatever its"
				" status)"),
		FIDX_OPT_OUTPUT(&qa),
		FIDX_OPT_END,
	};
	struct fidx_query *q = NULL;
	int status = 2;

	(void)cmd;
	int first = fidx_parse_options(argc, argv, options, &scans_help);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 0 : 2;
	if (first < argc && !qa.db)
		qa.db = argv[first++];
	if (first < argc) {
		fidx_error("unexpected argument '%s' (see 'fidx scans --help')",
			   fidx_quote(argv[first]));
		return 2;
	}
	if (!(q = fidx_query_open(&qa, NULL)))
		return 2;
	fidx_out_begin();
	if (!qa.json && !qa.nul)
		printf("%4s  %-11s  %-20s  %8s  %9s  %9s  %6s  %-12s  %s\n", "ID", "STATUS",
		       "STARTED (UTC)", "DURATION", "ENTRIES", "BYTES", "ERRORS", "HOST", "ROOT");
	for (size_t i = 0; i < q->sel.scans.n; i++) {
		if (qa.json)
			print_json(&q->sel.scans.rows[i]);
		else
			print_text(&q->sel.scans.rows[i], qa.nul);
	}
	status = 0;
	if (fidx_out_end() < 0)
		status = 2;
	if (fidx_query_close(q) < 0)
		status = 2;
	return status;
}
