/*
 * cmd_verify.c - `fidx verify`: recompute the seal of scans and say what
 * changed since they were sealed.
 *
 * A query command (the shape of cmd_scans.c): the database is opened
 * read-only and nothing is written, so evidence on read-only media can be
 * checked.  The scans are those --scan names, or the newest complete one
 * of each root (--all: every complete one) and every sealed scan whose
 * status is no longer 'complete' (an edit that would hide it).  For each,
 * seal.c recomputes the seal from the rows as they are; when it differs
 * from the recorded one, it names the rows altered, added and removed and
 * the scan-row counts the rows contradict.
 * With --seal the rows are compared with a seal written down elsewhere,
 * which is the only comparison that someone able to rewrite the database
 * (and so to recompute scan.seal and file_seal) cannot defeat.
 *
 * Exit status: 0 every scan is intact (equal to --seal when given), 1 some
 * scan is not (altered, not sealed, or unequal to --seal), 2 usage or fatal
 * error.
 */
#include "commands.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "json.h"
#include "output.h"
#include "query.h"
#include "seal.h"

enum { OPT_ALL = 0x2000, OPT_SEAL };

static const struct fidx_option verify_options[] = {
	FIDX_QUERY_OPTIONS,
	{{"all", no_argument, NULL, OPT_ALL}, NULL,
	 "every complete scan of the database (not only the newest\n"
	 "                       of each root), and every sealed one"},
	{{"seal", required_argument, NULL, OPT_SEAL}, "HEX",
	 "compare the rows with this seal (as the scan printed it,\n"
	 "                       sha256:... or the 64 hex digits); one scan only"},
	{{"help", no_argument, NULL, 'h'}, NULL, "show this help"},
};
#define NOPTIONS (sizeof(verify_options) / sizeof(verify_options[0]))

/* Prints the help of `fidx verify`. */
static void verify_usage(FILE *out)
{
	fputs("usage: fidx verify [OPTIONS] [DB]\n\n"
	      "Recompute the seal of scans (default: the newest complete scan of each root,\n"
	      "and any sealed scan whose status was changed from complete) from their\n"
	      "rows, and compare it with the seal recorded when the scan completed.\n"
	      "When they differ, name each row altered, added or removed (by id and\n"
	      "path) and each count of the scan row its rows contradict.\n"
	      "The database is only read.  Whoever can rewrite the database can also\n"
	      "recompute its seal: compare with a seal kept elsewhere (--seal) to prove\n"
	      "that the rows are the ones sealed.  With -0 every line ends with a NUL.\n\n"
	      "Options:\n", out);
	fidx_cli_usage(out, verify_options, NOPTIONS);
	fputs("\nExit status: 0 intact, 1 altered, not sealed, or unequal to --seal,\n"
	      "2 usage or fatal error.\n", out);
}

/* What the printers need. */
struct verify {
	const struct fidx_query_args *qa; /* --json, -0 */
	int64_t scan_id;                  /* the scan being checked */
};

/* Ends a line of text output: a newline, or a NUL with -0. */
static void end_line(const struct verify *v)
{
	putc_unlocked(v->qa->nul ? '\0' : '\n', stdout);
}

/* Writes "sha256:<hex>" of a seal of len bytes. */
static void print_seal(const uint8_t *seal, size_t len)
{
	fputs("sha256:", stdout);
	fidx_out_hex(stdout, seal, len);
}

/* Prints one finding (fidx_seal_found_fn). */
static void print_finding(void *arg, const struct fidx_seal_finding *f)
{
	const struct verify *v = arg;
	static const char *const kinds[] = {
		[FIDX_SEAL_ALTERED] = "altered", [FIDX_SEAL_ADDED] = "added",
		[FIDX_SEAL_REMOVED] = "removed",
	};

	if (v->qa->json) {
		printf("{\"scan_id\":%" PRId64, v->scan_id);
		if (f->change == FIDX_SEAL_FIELD) {
			printf(",\"field\":\"%s\",\"scan_row\":", f->field);
			fidx_json_string(stdout, f->says);
			fputs(",\"rows\":", stdout);
			fidx_json_string(stdout, f->rows);
		} else {
			printf(",\"row\":\"%s\",\"id\":%" PRId64 ",", kinds[f->change], f->file_id);
			if (f->path)
				fidx_json_path(stdout, "path", f->path);
			else
				fputs("\"path\":null", stdout);
		}
		fputs("}\n", stdout);
		return;
	}
	printf("scan %" PRId64 ": ", v->scan_id);
	switch (f->change) {
	case FIDX_SEAL_FIELD:
		if (strcmp(f->field, "root") == 0)
			printf("the scan row says root '%s'; %s", fidx_quote(f->says), f->rows);
		else if (strcmp(f->field, "status") == 0)
			printf("the scan row says status '%s'; a sealed scan is %s",
			       fidx_quote(f->says), f->rows);
		else
			printf("the scan row says %s %s; its rows %s %s", f->field, f->says,
			       strcmp(f->field, "bytes") == 0 ? "add up to" : "count", f->rows);
		break;
	case FIDX_SEAL_REMOVED:
		printf("row %" PRId64 " removed (its path went with it)", f->file_id);
		break;
	default:
		/* The path byte for byte, last on the line. */
		printf("row %" PRId64 " %s: ", f->file_id, kinds[f->change]);
		if (f->path && fidx_out_quotes(stdout, f->path)) {
			fidx_shell_quote(stdout, f->path); /* its own quotes */
		} else {
			putc_unlocked('\'', stdout);
			fputs(f->path ? f->path : "", stdout);
			putc_unlocked('\'', stdout);
		}
	}
	end_line(v);
}

/* Why a scan has no seal, in a few words. */
static const char *unsealed_reason(const struct fidx_seal_result *r)
{
	if (r->pre_v3)
		return "made before schema version 3, which brought seals";
	if (strcmp(r->status, "complete") != 0)
		return "only complete scans are sealed";
	return "complete, yet unsealed: the seal was removed, or the scan's process"
	       " ended before sealing it";
}

/*
 * Prints the verdict on one scan in JSON.  expected is the --seal value or
 * NULL.
 */
static void print_json_verdict(const struct verify *v, const struct fidx_seal_result *r,
			       const char *verdict, const uint8_t *expected)
{
	printf("{\"scan_id\":%" PRId64 ",\"seal\":\"%s\",\"status\":", v->scan_id, verdict);
	fidx_json_string(stdout, r->status);
	fputs(",\"recorded\":", stdout);
	if (r->sealed)
		fidx_json_hex(stdout, r->recorded, r->recorded_len);
	else
		fputs("null", stdout);
	fputs(",\"computed\":", stdout);
	fidx_json_hex(stdout, r->computed, FIDX_SEAL_LEN);
	if (expected) {
		fputs(",\"expected\":", stdout);
		fidx_json_hex(stdout, expected, FIDX_SEAL_LEN);
	}
	printf(",\"rows\":%" PRIu64 ",\"altered\":%" PRIu64 ",\"added\":%" PRIu64
	       ",\"removed\":%" PRIu64 ",\"fields\":%" PRIu64,
	       r->rows, r->altered, r->added, r->removed, r->fields);
	if (!r->sealed) {
		fputs(",\"why\":", stdout);
		fidx_json_string(stdout, unsealed_reason(r));
	}
	fputs("}\n", stdout);
}

/*
 * Prints the verdict on one scan in text and returns whether its rows are
 * intact: equal to expected (--seal) when given, else to the recorded seal.
 */
static bool verdict(const struct verify *v, const struct fidx_seal_result *r,
		    const uint8_t *expected)
{
	bool matches = r->sealed && r->recorded_len == FIDX_SEAL_LEN &&
		       memcmp(r->recorded, r->computed, FIDX_SEAL_LEN) == 0;
	bool as_given = expected && memcmp(expected, r->computed, FIDX_SEAL_LEN) == 0;
	bool intact = expected ? as_given : matches;
	const char *word = !r->sealed ? "none" : matches ? "intact" : "mismatch";

	if (v->qa->json) {
		print_json_verdict(v, r, word, expected);
		return intact;
	}
	printf("scan %" PRId64 ": ", v->scan_id);
	if (!r->sealed) {
		printf("no seal (%s); computed now: ", unsealed_reason(r));
		print_seal(r->computed, FIDX_SEAL_LEN);
		printf(" (%" PRIu64 " %s)", r->rows, fidx_plural(r->rows, "row", "rows"));
	} else if (matches) {
		fputs("seal ", stdout);
		print_seal(r->computed, FIDX_SEAL_LEN);
		printf(" intact (%" PRIu64 " %s)", r->rows, fidx_plural(r->rows, "row", "rows"));
	} else {
		fputs("seal MISMATCH: recorded ", stdout);
		print_seal(r->recorded, r->recorded_len);
		fputs(", computed ", stdout);
		print_seal(r->computed, FIDX_SEAL_LEN);
		printf(" (%" PRIu64 " %s: %" PRIu64 " altered, %" PRIu64 " added, %" PRIu64
		       " removed)", r->rows, fidx_plural(r->rows, "row", "rows"), r->altered, r->added,
		       r->removed);
		if (!r->altered && !r->added && !r->removed && !r->fields) {
			end_line(v);
			printf("scan %" PRId64 ": every row is as sealed: the recorded seal, a"
			       " field of the scan row that its rows do not confirm, or a row"
			       " moved to another scan explains it", v->scan_id);
		}
	}
	if (expected) {
		end_line(v);
		printf("scan %" PRId64 ": ", v->scan_id);
		if (as_given) {
			fputs("the rows match --seal: they are the rows sealed", stdout);
		} else {
			fputs("the rows do NOT match --seal ", stdout);
			print_seal(expected, FIDX_SEAL_LEN);
			if (matches)
				fputs(": the database was resealed after a change, or this is"
				      " another scan", stdout);
		}
	}
	end_line(v);
	return intact;
}

/*
 * Parses a seal as `fidx scan` prints it ("sha256:" and 64 hex digits, in
 * either case; the prefix may be left out).  Returns 0, or -1.
 */
static int parse_seal(const char *text, uint8_t out[FIDX_SEAL_LEN])
{
	if (strncmp(text, "sha256:", 7) == 0)
		text += 7;
	if (strlen(text) != 2 * FIDX_SEAL_LEN)
		return -1;
	for (size_t i = 0; i < 2 * FIDX_SEAL_LEN; i++) {
		char c = text[i];
		int d = c >= '0' && c <= '9' ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | d : d << 4);
	}
	return 0;
}

/*
 * Reports, for a database older than schema version 3, that the scans ids
 * have no seal.  Returns the exit status (1).
 */
static int report_old(const struct verify *base, const struct fidx_query *q, const int64_t *ids,
		      size_t nids)
{
	for (size_t i = 0; i < nids; i++) {
		if (base->qa->json) {
			printf("{\"scan_id\":%" PRId64 ",\"seal\":\"none\",\"why\":\"database"
			       " schema version %d has no seals\"}\n", ids[i], q->version);
		} else {
			printf("scan %" PRId64 ": no seal (database schema version %d: seals came"
			       " with version 3)", ids[i], q->version);
			end_line(base);
		}
	}
	return 1;
}

/*
 * The scans to check, ascending, into *ids (malloc'ed; *n of them): those
 * --scan named (listed); else the newest complete scan of each root, or
 * with --all every complete scan, and in a schema-3 database every sealed
 * scan whose status is not 'complete'.  Only complete scans are sealed and
 * a complete scan is never resumed, so such a status was edited, which must
 * not hide the scan behind an older one.  Returns 0, or -1 after printing why.
 */
static int scans_to_check(const struct fidx_query *q, bool listed, bool all, int64_t **ids,
			  size_t *n)
{
	static const char *const sql[2][2] = {
		{"SELECT max(id) FROM scan WHERE status = 'complete' GROUP BY root ORDER BY 1",
		 "SELECT id FROM scan WHERE status = 'complete' ORDER BY id"},
		{"SELECT id FROM scan WHERE id IN (SELECT max(id) FROM scan WHERE status ="
		 " 'complete' GROUP BY root) OR (seal IS NOT NULL AND status IS NOT 'complete')"
		 " ORDER BY id",
		 "SELECT id FROM scan WHERE status = 'complete' OR seal IS NOT NULL ORDER BY id"},
	};
	sqlite3_stmt *s = NULL;
	size_t cap = q->nscans + 1;
	int rc;

	*n = 0;
	if (!(*ids = malloc(cap * sizeof(**ids)))) {
		fidx_error("out of memory");
		return -1;
	}
	if (listed) {
		memcpy(*ids, q->scans, q->nscans * sizeof(**ids));
		*n = q->nscans;
		return 0;
	}
	if (!(s = fidx_query_prepare(q, sql[q->version >= 3][all])))
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			int64_t *p = realloc(*ids, 2 * cap * sizeof(**ids));
			if (!p) {
				sqlite3_finalize(s);
				fidx_error("out of memory");
				return -1;
			}
			*ids = p;
			cap *= 2;
		}
		(*ids)[(*n)++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		fidx_query_fail(q);
		return -1;
	}
	if (*n == 0) {
		fidx_error("database '%s' has no complete scan ('fidx scans' lists its scans;"
			   " --scan ID reads one that is not complete)", fidx_quote(q->path));
		return -1;
	}
	return 0;
}

int cmd_verify(int argc, char **argv)
{
	struct option longopts[NOPTIONS + 1];
	struct fidx_query_args qa = {0};
	struct fidx_query *q = NULL;
	int64_t *ids = NULL;
	size_t nids = 0;
	uint8_t expected[FIDX_SEAL_LEN];
	const char *seal_arg = NULL;
	bool all = false;
	int c, status = 2;

	fidx_cli_longopts(verify_options, NOPTIONS, longopts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":0h", longopts, NULL)) != -1) {
		if (fidx_query_option(c, optarg, &qa))
			continue;
		switch (c) {
		case OPT_ALL:
			all = true;
			break;
		case OPT_SEAL:
			seal_arg = optarg;
			break;
		case 'h':
			verify_usage(stdout);
			return 0;
		default:
			fidx_cli_bad_option("verify", c, argv, verify_options, NOPTIONS);
			return 2;
		}
	}
	if (optind < argc && !qa.db)
		qa.db = argv[optind++];
	if (optind < argc) {
		fidx_error("unexpected argument '%s' (see 'fidx verify --help')",
			   fidx_quote(argv[optind]));
		return 2;
	}
	if (all && qa.scan) {
		fidx_error("--all and --scan choose scans both: give one of them");
		return 2;
	}
	if (seal_arg && parse_seal(seal_arg, expected) < 0) {
		fidx_error("invalid --seal '%s': expected sha256: and 64 hex digits, as"
			   " 'fidx scan' printed it", fidx_quote(seal_arg));
		return 2;
	}
	/* Without --scan, scans_to_check() chooses among every scan. */
	qa.every_scan = true;
	qa.raw = true;  /* damaged rows are what verify names */
	if (!(q = fidx_query_open(&qa)) || scans_to_check(q, qa.scan != NULL, all, &ids, &nids) < 0)
		goto out_closed;
	if (seal_arg && nids != 1) {
		fidx_error("--seal compares one scan, and %zu are selected: name it with --scan ID",
			   nids);
		goto out_closed;
	}

	struct verify v = {.qa = &qa};
	fidx_out_begin();
	if (q->version < 3) {
		status = report_old(&v, q, ids, nids);
		goto out;
	}
	status = 0;
	for (size_t i = 0; i < nids; i++) {
		struct fidx_seal_result r;
		char why[1024];
		v.scan_id = ids[i];
		if (fidx_seal_check(q->db, v.scan_id, print_finding, &v, &r, why, sizeof(why)) < 0) {
			fidx_error("cannot verify database '%s': %s", fidx_quote(q->path), why);
			status = 2;
			goto out;
		}
		if (!verdict(&v, &r, seal_arg ? expected : NULL))
			status = 1;
	}
out:
	if (fidx_out_end() < 0)
		status = 2;
out_closed:
	free(ids);
	if (fidx_query_close(q) < 0)
		status = 2;
	return status;
}
