/*
 * verify.c - `fidx verify`: recompute the seal of scans and say what
 * changed since they were sealed.
 *
 * A query command (the shape of scans.c): the database is opened for
 * reading only (store.h) and nothing is written, so evidence on read-only
 * media can be checked.  The scans are those --scan names, or, chosen here
 * among every scan row of the database (scans_to_check()), the newest
 * complete one of each root (--all: every complete one) and every sealed
 * scan whose status is no longer 'complete' (an edit that would hide it).
 * For each, the store recomputes the seal from the rows as they are
 * (fidx_store_verify(), seal.h); when it differs from the recorded one, it
 * names the rows altered, added and removed and the scan-row counts the
 * rows contradict, and this file prints each finding and the verdict.
 * With --seal the rows are compared with a seal written down elsewhere,
 * which is the only comparison that someone able to rewrite the database
 * (and so to recompute the recorded seal and row hashes) cannot defeat.
 *
 * Exit status: 0 every scan is intact (equal to --seal when given), 1 some
 * scan is not (altered, not sealed, or unequal to --seal), 2 usage or fatal
 * error.
 */
#include "builtin.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "json.h"
#include "options.h"
#include "output.h"
#include "query.h"
#include "scanrow.h"
#include "seal.h"
#include "store.h"

/* What `fidx verify --help` says around its options. */
static const struct fidx_help verify_help = {
	.command = "verify",
	.text = "usage: fidx verify [OPTIONS] [DB]\n\n"
		"Recompute the seal of scans (default: the newest complete scan of each root,\n"
		"and any sealed scan whose status was changed from complete) from their\n"
		"rows, and compare it with the seal recorded when the scan completed.\n"
		"When they differ, name each row altered, added or removed (by id and\n"
		"path) and each count of the scan row its rows contradict.\n"
		"The database is only read.  Whoever can rewrite the database can also\n"
		"recompute its seal: compare with a seal kept elsewhere (--seal) to prove\n"
		"that the rows are the ones sealed.  With -0 every line ends with a NUL.\n\n",
	.footer = "\nExit status: 0 intact, 1 altered, not sealed, or unequal to --seal,\n"
		  "2 usage or fatal error.\n",
};

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
	fidx_write_hex(stdout, seal, len);
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
 * Reports, for a database of schema version (older than 3), that the scans
 * ids have no seal.  Returns the exit status (1).
 */
static int report_old(const struct verify *base, int version, const int64_t *ids, size_t nids)
{
	for (size_t i = 0; i < nids; i++) {
		if (base->qa->json) {
			printf("{\"scan_id\":%" PRId64 ",\"seal\":\"none\",\"why\":\"database"
			       " schema version %d has no seals\"}\n", ids[i], version);
		} else {
			printf("scan %" PRId64 ": no seal (database schema version %d: seals came"
			       " with version 3)", ids[i], version);
			end_line(base);
		}
	}
	return 1;
}

/* Whether scan row s says 'complete'. */
static bool is_complete(const struct fidx_scan_row *s)
{
	return s->status && strcmp(s->status, "complete") == 0;
}

/* Orders scan rows by root (bytes; no root first), then by id (qsort). */
static int by_root_then_id(const void *pa, const void *pb)
{
	const struct fidx_scan_row *a = *(const struct fidx_scan_row *const *)pa;
	const struct fidx_scan_row *b = *(const struct fidx_scan_row *const *)pb;
	if (!a->root != !b->root)
		return a->root ? 1 : -1;
	int c = a->root ? strcmp(a->root, b->root) : 0;
	if (c)
		return c;
	return (a->id > b->id) - (a->id < b->id);
}

/*
 * Marks in pick[] (one per row of all) the newest complete scan of each root:
 * the complete rows sorted by root, the last of each run of one root.
 * Returns 0, or -1 when out of memory.
 */
static int pick_newest(const struct fidx_scan_list *all, bool *pick)
{
	const struct fidx_scan_row **rows = malloc((all->n ? all->n : 1) * sizeof(*rows));
	size_t n = 0;
	if (!rows)
		return -1;
	for (size_t i = 0; i < all->n; i++)
		if (is_complete(&all->rows[i]))
			rows[n++] = &all->rows[i];
	qsort(rows, n, sizeof(*rows), by_root_then_id);
	for (size_t i = 0; i < n; i++) {
		const struct fidx_scan_row *next = i + 1 < n ? rows[i + 1] : NULL;
		bool same = next && !rows[i]->root == !next->root &&
			    (!next->root || strcmp(rows[i]->root, next->root) == 0);
		if (!same)
			pick[rows[i] - all->rows] = true;
	}
	free(rows);
	return 0;
}

/*
 * The scans to check, ascending, into *ids (malloc'ed; *n of them): those
 * --scan named (listed); else, among every scan row of the database, the
 * newest complete scan of each root, or with --all every complete scan, and
 * in a database of schema version 3 or later every sealed scan whose status
 * is not 'complete'.  Only complete scans are sealed and a complete scan is
 * never resumed, so such a status was edited, which must not hide the scan
 * behind an older one.  Returns 0, or -1 after printing why.
 */
static int scans_to_check(const struct fidx_query *q, bool listed, bool all, int64_t **ids,
			  size_t *n)
{
	const struct fidx_scan_list *scans = &q->all;
	bool sealed = fidx_store_version(q->st) >= 3;
	bool *pick = NULL;

	*n = 0;
	if (listed) {
		if (!(*ids = malloc((q->nscans ? q->nscans : 1) * sizeof(**ids)))) {
			fidx_error("out of memory");
			return -1;
		}
		memcpy(*ids, q->ids, q->nscans * sizeof(**ids));
		*n = q->nscans;
		return 0;
	}
	if (!(*ids = malloc((scans->n ? scans->n : 1) * sizeof(**ids))) ||
	    !(pick = calloc(scans->n ? scans->n : 1, sizeof(*pick))) ||
	    (!all && pick_newest(scans, pick) < 0)) {
		free(pick);
		fidx_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < scans->n; i++) {
		const struct fidx_scan_row *s = &scans->rows[i];
		bool complete = is_complete(s);
		if ((all && complete) || pick[i] ||
		    (sealed && !complete && fidx_scan_has(s, FIDX_SCOL_SEAL)))
			(*ids)[(*n)++] = s->id;
	}
	free(pick);
	if (*n == 0) {
		fidx_error("database '%s' has no complete scan ('fidx scans' lists its scans;"
			   " --scan ID reads one that is not complete)", fidx_quote(q->path));
		return -1;
	}
	return 0;
}

/* fidx verify: options, the scans to check, then each one's seal recomputed and judged. */
int cmd_verify(int argc, char **argv, const struct fidx_command *cmd)
{
	struct fidx_query_args qa = {0};
	struct fidx_query *q = NULL;
	int64_t *ids = NULL;
	size_t nids = 0;
	uint8_t expected[FIDX_SEAL_LEN];
	const char *seal_arg = NULL;
	bool all = false;
	int status = 2;
	/* --seal is parsed after the other checks, as it always was (the last one given). */
	struct fidx_option options[] = {
		FIDX_OPT_QUERY(&qa),
		FIDX_OPT_FLAG(0, "all", &all,
			      "every complete scan of the database (not only the newest"
			      " of each root), and every sealed one"),
		FIDX_OPT_STRING(0, "seal", "HEX", &seal_arg,
				"compare the rows with this seal (as the scan printed it,"
				" sha256:... or the 64 hex digits); one scan only"),
		FIDX_OPT_END,
	};

	(void)cmd;
	int first = fidx_parse_options(argc, argv, options, &verify_help);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 0 : 2;
	if (first < argc && !qa.db)
		qa.db = argv[first++];
	if (first < argc) {
		fidx_error("unexpected argument '%s' (see 'fidx verify --help')",
			   fidx_quote(argv[first]));
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
	if (!(q = fidx_query_open(&qa, NULL)) ||
	    scans_to_check(q, qa.scan != NULL, all, &ids, &nids) < 0)
		goto out_closed;
	if (seal_arg && nids != 1) {
		fidx_error("--seal compares one scan, and %zu are selected: name it with --scan ID",
			   nids);
		goto out_closed;
	}

	struct verify v = {.qa = &qa};
	int version = fidx_store_version(q->st);
	fidx_out_begin();
	if (version < 3) {
		status = report_old(&v, version, ids, nids);
		goto out;
	}
	status = 0;
	for (size_t i = 0; i < nids; i++) {
		struct fidx_seal_result r;
		struct fidx_error err;
		v.scan_id = ids[i];
		if (fidx_store_verify(q->st, v.scan_id, print_finding, &v, &r, &err) < 0) {
			fidx_error("cannot verify database '%s': %s", fidx_quote(q->path), err.msg);
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
