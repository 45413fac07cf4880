/*
 * prune.c - `fidx prune`: the old scans of a server's hosts dropped, the
 * scans kept whole and sealed as they were (store.h's fidx_store_drop_scans()).
 *
 *   DB (WRITE) ──► its scans ──► by host and root: each complete scan kept
 *        when it is among the --keep newest, or younger than --keep-days;
 *        the newest always ──► the others dropped in one transaction (a scan
 *        kept as the changes of one dropped is rebuilt whole first)
 *
 * One line per scan dropped (or that would be, --dry-run) on stdout, then a
 * count.  Scans that are not complete (running, interrupted, failed) are
 * left alone.
 */
#include "builtin.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "options.h"
#include "output.h"
#include "sysinfo.h"

/* What `fidx prune --help` says around its options. */
static const struct fidx_help prune_help = {
	.command = "prune",
	.text = "usage: fidx prune [OPTIONS] [DB]\n\n"
		"Drop the old complete scans of the database DB (default $FIDX_DB, else\n"
		"./fidx.db), a PostgreSQL server's, for each host and root: a scan is kept\n"
		"when it is among the --keep newest, or was started less than --keep-days\n"
		"days ago (with both, when either keeps it); the newest is always kept.\n"
		"A kept scan stored as the changes of a dropped one is rebuilt whole first,\n"
		"in the same transaction: every kept scan's seal still verifies.  Scans not\n"
		"complete are left alone.  A SQLite database drops no scans.\n\n",
	.footer = "\nOne line per scan dropped ('would drop' with --dry-run), then a count.\n"
		  "Exit status: 0 done (or nothing to drop), 2 usage or fatal error (nothing\n"
		  "dropped).\n",
};

/* Parses a count of --keep or --keep-days.  Returns it, or -1 after saying why. */
static long parse_keep(const char *opt, const char *arg)
{
	char *end;
	errno = 0;
	long v = arg ? strtol(arg, &end, 10) : -1;
	if (!arg || errno || end == arg || *end || v < 0 || v > 1000000) {
		fidx_error("%s: '%s' is not a count (0 to 1000000)", opt, arg ? fidx_quote(arg) : "");
		return -1;
	}
	return v;
}

/* Whether a and b are the same text, both NULL included. */
static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Whether a scan started at started_ns was started less than days days before now (no
 * product of days and a day is made: days reach 1,000,000, past int64 nanoseconds). */
static bool younger(int64_t started_ns, int64_t now, long days)
{
	if (started_ns > now)
		return true;
	return ((uint64_t)now - (uint64_t)started_ns) / UINT64_C(86400000000000) < (uint64_t)days;
}

/* Orders scan rows newest first (by start, then id). */
static int newest_first(const void *x, const void *y)
{
	const struct fidx_scan_row *a = *(const struct fidx_scan_row *const *)x;
	const struct fidx_scan_row *b = *(const struct fidx_scan_row *const *)y;
	if (a->started_ns != b->started_ns)
		return a->started_ns < b->started_ns ? 1 : -1;
	return (a->id < b->id) - (a->id > b->id);
}

int cmd_prune(int argc, char **argv, const struct fidx_command *cmd)
{
	struct fidx_query_args qa = {0};
	const char *keep_arg = NULL, *days_arg = NULL;
	bool dry = false;
	struct fidx_option options[] = {
		FIDX_OPT_STRING(0, "db", "DB", &qa.db,
				"the database: a PostgreSQL URI or conninfo (default $FIDX_DB, else"
				" ./fidx.db), as the argument may name it"),
		FIDX_OPT_FLAG('n', "dry-run", &dry, "say what would be dropped, drop nothing"),
		FIDX_OPT_HOST(&qa),
		FIDX_OPT_STRING(0, "keep", "N", &keep_arg,
				"keep the N newest complete scans of each host and root"),
		FIDX_OPT_STRING(0, "keep-days", "N", &days_arg,
				"keep the scans started less than N days ago"),
		FIDX_OPT_END,
	};
	struct fidx_store *st = NULL;
	struct fidx_scan_list list = {0};
	struct fidx_scan_row **rows = NULL;
	const struct fidx_scan_row **gone = NULL;
	int64_t *drop = NULL;
	struct fidx_error err;
	char *shown = NULL;
	int status = 2;

	(void)cmd;
	int first = fidx_parse_options(argc, argv, options, &prune_help);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 0 : 2;
	if (argc - first == 1 && !qa.db)
		qa.db = argv[first++];
	if (argc - first) {
		fidx_error("unexpected argument '%s' (see 'fidx prune --help')",
			   fidx_quote(argv[first]));
		return 2;
	}
	if (!keep_arg && !days_arg) {
		fidx_error("prune how much? give --keep N or --keep-days N (see 'fidx prune --help')");
		return 2;
	}
	long keep = keep_arg ? parse_keep("--keep", keep_arg) : 0;
	long days = days_arg ? parse_keep("--keep-days", days_arg) : 0;
	if (keep < 0 || days < 0)
		return 2;
	const char *name = fidx_db_name(qa.db);
	/* Read first: a database that is not there is not made by a prune. */
	if (!(st = fidx_store_open(name, FIDX_STORE_READ, NULL, &err))) {
		fidx_error("%s", err.msg);
		return 2;
	}
	if (!(shown = strdup(fidx_store_name(st)))) {
		fidx_error("out of memory");
		goto out;
	}
	struct fidx_scan_filter complete = {.statuses = FIDX_STATUS_COMPLETE};
	if (fidx_store_scans(st, &complete, &list, &err) < 0) {
		fidx_error("%s", err.msg);
		goto out;
	}
	if (!(rows = calloc(list.n + 1, sizeof(*rows))) ||
	    !(gone = calloc(list.n + 1, sizeof(*gone))) ||
	    !(drop = calloc(list.n + 1, sizeof(*drop)))) {
		fidx_error("out of memory");
		goto out;
	}
	size_t n = 0, ndrop = 0;
	for (size_t i = 0; i < list.n; i++) {
		const struct fidx_scan_row *s = &list.rows[i];
		bool wanted = !qa.nhosts;
		for (size_t k = 0; k < qa.nhosts && !wanted && s->host; k++)
			wanted = fnmatch(qa.hosts[k], s->host, 0) == 0;
		if (wanted && !s->damage)
			rows[n++] = &list.rows[i];
	}
	qsort(rows, n, sizeof(*rows), newest_first);
	int64_t now = fidx_now_ns();
	fidx_out_begin();
	for (size_t i = 0; i < n; i++) {
		const struct fidx_scan_row *s = rows[i];
		long rank = 0;  /* newer scans of its host and root */
		for (size_t k = 0; k < i; k++)
			rank += same(rows[k]->host, s->host) && same(rows[k]->root, s->root);
		bool kept = rank == 0 || (keep_arg && rank < keep) ||
			    (days_arg && younger(s->started_ns, now, days));
		if (kept)
			continue;
		gone[ndrop] = s;
		drop[ndrop++] = s->id;
	}
	size_t rebuilt = 0;
	if (!dry && ndrop) {
		/* The drop, in a store opened to write now that there is something to drop. */
		int rc = fidx_store_close(st, &err);
		st = NULL;
		if (rc < 0 || !(st = fidx_store_open(name, FIDX_STORE_WRITE, NULL, &err)) ||
		    fidx_store_drop_scans(st, drop, ndrop, &rebuilt, &err) < 0) {
			fidx_out_end();
			fidx_error("%s", err.msg);
			goto out;
		}
	}
	for (size_t i = 0; i < ndrop; i++)
		printf("%s scan %" PRId64 " of host '%s', '%s'\n", dry ? "would drop" : "dropped",
		       gone[i]->id, fidx_quote(gone[i]->host ? gone[i]->host : ""),
		       fidx_quote(gone[i]->root));
	printf("%s %zu %s of '%s', %zu kept", dry ? "would drop" : "dropped", ndrop,
	       fidx_plural(ndrop, "scan", "scans"), fidx_quote(shown), n - ndrop);
	if (rebuilt)
		printf(" (%zu rebuilt whole: %s the changes of a scan dropped)", rebuilt,
		       rebuilt == 1 ? "it was" : "they were");
	printf("\n");
	status = fidx_out_end() < 0 ? 2 : 0;
out:
	free(shown);
	free(rows);
	free(gone);
	free(drop);
	fidx_scan_list_free(&list);
	if (fidx_store_close(st, &err) < 0) {
		fidx_error("%s", err.msg);
		status = 2;
	}
	return status;
}
