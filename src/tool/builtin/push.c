/*
 * push.c - `fidx push`: the complete scans of a database copied into a
 * server's, each seal checked there (core/push.h).
 *
 *   DB (READ) ──► each complete, sealed scan (--scan: those named)
 *        └──► fidx_push_scan() ──► TARGET (WRITE, a server's store)
 *                 found by UUID: there whole (nothing sent), cut off (taken up),
 *                 or new; then its seal recomputed from the server's rows
 *
 * One line per scan on stdout: what was sent and the seal as the server's
 * rows give it.
 */
#include "builtin.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "options.h"
#include "output.h"
#include "progress.h"
#include "push.h"
#include "query.h"

/* What `fidx push --help` says around its options. */
static const struct fidx_help push_help = {
	.command = "push",
	.text = "usage: fidx push [OPTIONS] [DB] TARGET\n\n"
		"Copy the complete scans of the database DB (default $FIDX_DB, else ./fidx.db)\n"
		"into the PostgreSQL server TARGET (a postgresql:// URI or a conninfo string),\n"
		"as they are: scans made offline, an examiner's collected databases.  A scan\n"
		"is known by its UUID: one already on the server is not sent again, and a\n"
		"push cut off halfway is taken up after the last row the server kept.\n"
		"A rescan whose earlier scan (same host, same root) the server has goes as\n"
		"its changes: the rows that differ, and runs of ids for the rows it shares\n"
		"with that scan (--full sends and keeps every row).\n"
		"After each scan sent, the server recomputes its seal from the rows it holds;\n"
		"the line printed says whether it is the seal the scan was made with.  Of a\n"
		"scan there already, the seal recorded there is compared, its rows not read\n"
		"again ('fidx verify --db TARGET' reads them).\n\n",
	.footer = "\nExit status: 0 every scan on the server with its seal intact, 1 a seal\n"
		  "that differs there, 2 usage or fatal error (the scans pushed before stay).\n",
};

/* Prints the line of one scan pushed (or found); returns whether its seal held. */
static bool report(const struct fidx_scan_row *scan, const struct fidx_push_result *r,
		   const char *target)
{
	/* One already there: the seal the server recorded, which must be the scan's. */
	const uint8_t *want = r->already ? scan->seal : r->seal.computed;
	bool intact = r->seal.sealed && r->seal.recorded_len == FIDX_SEAL_LEN &&
		      memcmp(r->seal.recorded, want, FIDX_SEAL_LEN) == 0;
	printf("scan %" PRId64, scan->id);
	if (r->already) {
		printf(": already in '%s' as scan %" PRId64 ", seal sha256:", fidx_quote(target),
		       r->id);
		for (size_t b = 0; b < FIDX_SEAL_LEN; b++)
			printf("%02x", scan->seal[b]);
		printf(intact ? " recorded there (its rows not read again: 'fidx verify' does)\n"
			      : " is not the seal recorded there: MISMATCH\n");
		return intact;
	}
	if (r->after)
		printf(" -> scan %" PRId64 " of '%s': taken up after row %" PRId64 ", %" PRIu64
		       " more %s", r->id, fidx_quote(target), r->after, r->rows,
		       fidx_plural(r->rows, "row", "rows"));
	else
		printf(" -> scan %" PRId64 " of '%s': %" PRIu64 " %s", r->id, fidx_quote(target),
		       r->rows, fidx_plural(r->rows, "row", "rows"));
	if (r->base)
		printf(" (changes from scan %" PRId64 ": %" PRIu64 " %s lent)", r->base, r->lent,
		       fidx_plural(r->lent, "row", "rows"));
	printf(", seal sha256:");
	for (size_t b = 0; b < FIDX_SEAL_LEN; b++)
		printf("%02x", r->seal.computed[b]);
	printf(intact ? " intact on the server (%" PRIu64 " rows)\n"
		      : " on the server: MISMATCH (%" PRIu64 " rows), the scan was sealed"
			" with another\n", r->seal.rows);
	return intact;
}

int cmd_push(int argc, char **argv, const struct fidx_command *cmd)
{
	struct fidx_query_args qa = {.every_scan = true, .raw = true};
	bool quiet = false, full = false;
	struct fidx_option options[] = {
		FIDX_OPT_STRING(0, "db", "DB", &qa.db,
				"the database to push from (default $FIDX_DB, else ./fidx.db), as"
				" the first of two arguments may name it"),
		FIDX_OPT_STRING(0, "scan", "ID", &qa.scan,
				"the scans to push, e.g. 3 or 3,5 (default: every complete scan)"),
		FIDX_OPT_HOST(&qa),
		FIDX_OPT_FLAG(0, "full", &full,
			      "send every row and keep each scan whole on the server, not as its"
			      " changes from the scan before it"),
		FIDX_OPT_FLAG('q', "quiet", &quiet,
			      "no progress line (else drawn on stderr when it is a terminal)"),
		FIDX_OPT_END,
	};
	struct fidx_query *q = NULL;
	struct fidx_store *to = NULL;
	struct fidx_error err;
	int status = 2;

	(void)cmd;
	int first = fidx_parse_options(argc, argv, options, &push_help);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 0 : 2;
	if (argc - first == 2 && !qa.db)
		qa.db = argv[first++];
	if (argc - first != 1) {
		fidx_error(argc - first ? "unexpected argument '%s' (see 'fidx push --help')"
			   : "push where? give the server (see 'fidx push --help')",
			   argc - first ? fidx_quote(argv[argc - 1]) : "");
		return 2;
	}
	const char *target = argv[first];
	if (!(q = fidx_query_open(&qa, NULL)))
		return 2;
	if (!(to = fidx_store_open(target, FIDX_STORE_WRITE, NULL, &err))) {
		fidx_error("%s", err.msg);
		goto out;
	}
	const char *shown = fidx_store_name(to);
	atomic_uint_least64_t sent = 0;
	struct fidx_progress *progress = fidx_progress_rows_wanted(quiet, true)
		? fidx_progress_rows_start(&sent, fidx_store_count(q->st, q->ids, q->nscans, false))
		: NULL;
	fidx_out_begin();
	status = 0;
	size_t pushed = 0;
	for (size_t i = 0; i < q->sel.scans.n && status != 2; i++) {
		const struct fidx_scan_row *scan = &q->sel.scans.rows[i];
		/* Without --scan, the complete scans; one named that is not is refused. */
		if (!qa.scan && (!scan->status || strcmp(scan->status, "complete") != 0))
			continue;
		if (scan->damage) {
			fidx_query_damaged(q, scan->damage);
			status = 2;
			break;
		}
		struct fidx_push_result r;
		if (fidx_push_scan(q->st, scan, to, full, &r, &sent, &err) < 0) {
			fidx_progress_stop(progress);
			progress = NULL;
			fidx_error("cannot push scan %" PRId64 " of '%s' into '%s': %s", scan->id,
				   fidx_quote(q->path), fidx_quote(shown), err.msg);
			status = 2;
			break;
		}
		if (!report(scan, &r, shown))
			status = 1;
		pushed++;
	}
	fidx_progress_stop(progress);
	if (status == 0 && !pushed) {
		fidx_error("database '%s' has no complete scan to push", fidx_quote(q->path));
		status = 2;
	}
	if (fidx_out_end() < 0)
		status = 2;
out:
	if (fidx_store_close(to, &err) < 0) {
		fidx_error("%s", err.msg);
		status = 2;
	}
	if (fidx_query_close(q) < 0)
		status = 2;
	return status;
}
