/*
 * cmd_match.c - `fidx match`: the scanned files whose digest is in hash lists
 * (known-bad hunting), or with --not in none of them (known-good filtering).
 *
 *   lists ──► hashlist.c: parse, one digest set per algorithm ──┐
 *             malformed lines: warned one by one (the first 10   │
 *             of each list, or all with --show-malformed), then  │
 *             counted with their line numbers                    │
 *   database ──► selected scans: which digests each one has ─────┤ algorithms of the lists
 *                (scan.options' "hash")                          │ that no scan has: warned,
 *                                                                │ or fatal if none is left
 *   SELECT the regular files of the scans, their digests ──► look-up ──► stdout
 *
 * A file is compared by every algorithm both the lists and its row have; a
 * file with none of them (an error, not hashed, a scan without that
 * algorithm) is not compared, and the number of such files is always told,
 * so that --not never passes an unreadable file off as unknown.
 */
#include "commands.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "hash.h"
#include "hashlist.h"
#include "json.h"
#include "output.h"
#include "progress.h"
#include "query.h"
#include "space.h"

enum {
	OPT_NOT = 256,
	OPT_ALGO,
	OPT_SHOW_MALFORMED,
	OPT_STRICT,
};

static const struct fidx_option match_options[] = {
	{{"not", no_argument, NULL, OPT_NOT}, NULL,
	 "list the regular files whose digest is in no list"},
	{{"long", no_argument, NULL, 'l'}, NULL,
	 "show the digest and the list and line it matched:\n"
	 "                       ALGO:HEX  LIST:LINE  PATH"},
	{{"algo", required_argument, NULL, OPT_ALGO}, "ALGO",
	 "the algorithm of digests without a label (bare and\n"
	 "                       sha256sum-style lines): md5, sha1, sha256, sha512 or\n"
	 "                       xxh128 (default: told by length, 32 digits md5)"},
	{{"show-malformed", no_argument, NULL, OPT_SHOW_MALFORMED}, NULL,
	 "warn about every malformed line (default: the first 10\n"
	 "                       of each list, then their count and numbers)"},
	{{"strict", no_argument, NULL, OPT_STRICT}, NULL,
	 "a malformed line is an error (exit 2)"},
	{{"quiet", no_argument, NULL, 'q'}, NULL,
	 "no summary of the lists and counts on stderr, and no\n"
	 "                       progress line (else drawn after half a second when\n"
	 "                       stderr is a terminal and stdout is not the same one)"},
	FIDX_QUERY_OPTIONS,
	{{"help", no_argument, NULL, 'h'}, NULL, "show this help"},
};
#define NOPTIONS (sizeof(match_options) / sizeof(match_options[0]))

/* Malformed lines warned one by one per list, unless --show-malformed. */
#define WARN_LINES 10
/* Ranges of malformed line numbers shown in a list's summary. */
#define RANGES_SHOWN 10

/* Prints the help of `fidx match`. */
static void match_usage(FILE *out)
{
	fputs("usage: fidx match [OPTIONS] [DB] LIST...\n\n"
	      "List the regular files of the database (default $FIDX_DB, else ./fidx.db)\n"
	      "whose digest is in one of the hash lists (LIST '-' is standard input), or\n"
	      "with --not those whose digest is in none.  A list is sha256sum/md5sum/\n"
	      "sha1sum/sha512sum output (also --tag and escaped names), a hashdeep file, a\n"
	      "CSV file whose header names its digest columns (NSRL: \"SHA-1\",\"MD5\",...),\n"
	      "or one hex digest per line.  The length of a digest tells its algorithm unless a\n"
	      "label or a header does.  Malformed lines are reported with their line\n"
	      "numbers; files without a digest to compare are counted, never listed.\n\n"
	      "Options:\n", out);
	fidx_cli_usage(out, match_options, NOPTIONS);
	fputs("\nExit status: 0 files listed, 1 none, 2 usage or fatal error (also an\n"
	      "unreadable list, lists without digests, lists whose algorithms no selected\n"
	      "scan has).  Malformed lines are warnings that leave the status as it is;\n"
	      "with --strict the first one is a fatal error.\n", out);
}

/* What the loader tells about one list's malformed lines. */
struct list_report {
	const char *path;      /* the list, for messages */
	bool all;              /* --show-malformed */
	bool strict;           /* --strict */
	uint64_t warned;       /* lines warned one by one */
	size_t nranges;        /* ranges of line numbers kept */
	bool more;             /* there were more ranges than kept */
	struct {
		uint64_t first, last;
	} range[RANGES_SHOWN]; /* the first runs of consecutive malformed lines */
};

/* fidx_hashlist_malformed_fn: warns about a malformed line, keeps its number. */
static int on_malformed(void *ctx, uint64_t line, const char *why)
{
	struct list_report *r = ctx;

	if (r->strict) {
		fidx_error("'%s' line %" PRIu64 ": %s (--strict)", fidx_quote(r->path), line, why);
		return 1;
	}
	if (r->all || r->warned < WARN_LINES) {
		fidx_warn("'%s' line %" PRIu64 ": %s", fidx_quote(r->path), line, why);
		r->warned++;
	}
	if (r->nranges && r->range[r->nranges - 1].last + 1 == line)
		r->range[r->nranges - 1].last = line;
	else if (r->nranges < RANGES_SHOWN) {
		r->range[r->nranges].first = r->range[r->nranges].last = line;
		r->nranges++;
	} else
		r->more = true;
	return 0;
}

/* Warns with the count and line numbers of a list's malformed lines. */
static void report_malformed(const struct list_report *r, uint64_t malformed)
{
	char lines[RANGES_SHOWN * 48 + 8];
	size_t n = 0;

	for (size_t i = 0; i < r->nranges; i++) {
		n += (size_t)snprintf(lines + n, sizeof(lines) - n, "%s%" PRIu64, i ? ", " : "",
				      r->range[i].first);
		if (r->range[i].last > r->range[i].first)
			n += (size_t)snprintf(lines + n, sizeof(lines) - n, "-%" PRIu64,
					      r->range[i].last);
	}
	fidx_warn("'%s': %" PRIu64 " malformed line%s (line%s %s%s), not read%s",
		  fidx_quote(r->path), malformed, malformed == 1 ? "" : "s",
		  malformed == 1 ? "" : "s", lines, r->more ? ", ..." : "",
		  malformed > r->warned ? "; --show-malformed lists each" : "");
}

/* Names of the algorithms in mask, separated by sep ("md5, sha256"), into buf. */
static const char *algo_names(unsigned mask, const char *sep, char buf[static 64])
{
	size_t n = 0;
	buf[0] = '\0';
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (mask & 1u << d)
			n += (size_t)snprintf(buf + n, 64 - n, "%s%s", n ? sep : "",
					      fidx_digest_name(d));
	return buf;
}

/* The lists, once read. */
struct lists {
	char **paths;                      /* as given */
	size_t n;                          /* how many */
	struct fidx_hashlist_stats *stats; /* one per list */
	struct fidx_hashset *set;          /* every digest of every list */
	unsigned mask;                     /* algorithms with at least one digest */
};

/* Reads every list.  Returns 0, or 2 after printing why it cannot go on. */
static int read_lists(struct lists *l, int algo, bool all, bool strict)
{
	if (!(l->set = fidx_hashset_create()) || !(l->stats = calloc(l->n, sizeof(*l->stats)))) {
		fidx_error("out of memory");
		return 2;
	}
	for (size_t i = 0; i < l->n; i++) {
		struct list_report r = {.path = l->paths[i], .all = all, .strict = strict};
		struct fidx_hashlist_stats *st = &l->stats[i];
		if (fidx_hashlist_load(l->set, l->paths[i], (uint32_t)i, algo, on_malformed, &r,
				       st) < 0) {
			if (errno == ECANCELED) /* --strict, already said */
				;
			else if (errno == ENOMEM)
				fidx_error("out of memory reading '%s'", fidx_quote(l->paths[i]));
			else if (errno == EOVERFLOW)
				fidx_error("cannot read '%s': more than %" PRIu32 " lines, or more"
					   " digests of one algorithm than fidx holds",
					   fidx_quote(l->paths[i]), UINT32_MAX);
			else
				fidx_error("cannot read '%s': %s", fidx_quote(l->paths[i]),
					   strerror(errno));
			return 2;
		}
		if (st->malformed)
			report_malformed(&r, st->malformed);
		unsigned mine = 0;
		for (int d = 0; d < FIDX_NDIGESTS; d++)
			if (st->digests[d])
				mine |= 1u << d;
		if (!mine)
			fidx_warn("'%s' holds no digest (%" PRIu64 " line%s)", fidx_quote(l->paths[i]),
				  st->lines, st->lines == 1 ? "" : "s");
		l->mask |= mine;
	}
	if (!l->mask) {
		fidx_error("the lists hold no digest");
		return 2;
	}
	return 0;
}

/* Prints one line per list that holds digests: its format and counts. */
static void print_lists(const struct lists *l)
{
	static const char *const formats[] = {
		[FIDX_HASHLIST_SUMS] = "sums", [FIDX_HASHLIST_HASHDEEP] = "hashdeep",
		[FIDX_HASHLIST_CSV] = "csv",
	};
	for (size_t i = 0; i < l->n; i++) {
		const struct fidx_hashlist_stats *st = &l->stats[i];
		char per[FIDX_NDIGESTS * 32] = "";
		uint64_t total = 0;
		size_t n = 0;
		for (int d = 0; d < FIDX_NDIGESTS; d++) {
			total += st->digests[d];
			if (st->digests[d])
				n += (size_t)snprintf(per + n, sizeof(per) - n, "%s%s %" PRIu64,
						      n ? ", " : "", fidx_digest_name(d),
						      st->digests[d]);
		}
		if (total)
			fprintf(stderr, "fidx: '%s' (%s): %" PRIu64 " digest%s (%s), %" PRIu64
				" repeated, %" PRIu64 " malformed lines\n", fidx_quote(l->paths[i]),
				formats[st->format], total, total == 1 ? "" : "s", per, st->repeated,
				st->malformed);
	}
}

/* Reads which digests scan s computed (its options' "hash"); all of them when it does not say. */
static unsigned scan_digests(sqlite3_stmt *s)
{
	const char *hash = (const char *)sqlite3_column_text(s, 2);
	unsigned mask;
	if (!hash || fidx_digest_list_parse(hash, &mask) < 0)
		return (1u << FIDX_NDIGESTS) - 1;
	return mask;
}

/*
 * Decides the algorithms to compare: those of the lists that at least one
 * selected scan computed.  Warns about list digests no scan can match and
 * about scans that lack some of them.  Returns the mask, or 0 after printing
 * that nothing can be compared.
 */
static unsigned usable_algorithms(struct fidx_query *q, const struct lists *l)
{
	sqlite3_stmt *s = fidx_query_prepare(q,
		"SELECT id, root, CASE WHEN json_valid(options) THEN"
		" json_extract(options, '$.hash') END FROM scan"
		" WHERE id IN (SELECT id FROM selected_scan) ORDER BY id");
	unsigned have = 0, usable;
	char a[64], b[64], c[64];
	int rc;

	if (!s)
		return 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		have |= scan_digests(s);
	if (rc != SQLITE_DONE) {
		fidx_query_fail(q);
		sqlite3_finalize(s);
		return 0;
	}
	usable = l->mask & have;
	if (!usable) {
		fidx_error("the lists hold %s digests, the selected scans %s: nothing to compare"
			   " (scan with --hash %s)", algo_names(l->mask, ", ", a),
			   have ? algo_names(have, ", ", b) : "none", algo_names(l->mask, ",", c));
		sqlite3_finalize(s);
		return 0;
	}
	for (size_t i = 0; i < l->n; i++)
		for (int d = 0; d < FIDX_NDIGESTS; d++)
			if (l->stats[i].digests[d] && !(have & 1u << d))
				fidx_warn("'%s': its %" PRIu64 " %s digests are not compared: no "
					  "selected scan has %s digests", fidx_quote(l->paths[i]),
					  l->stats[i].digests[d], fidx_digest_name(d),
					  fidx_digest_name(d));
	/* Scans that have some of the usable algorithms only. */
	sqlite3_reset(s);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		unsigned mine = scan_digests(s) & usable;
		if (mine == usable)
			continue;
		const char *root = fidx_quote((const char *)sqlite3_column_text(s, 1));
		if (!mine)
			fidx_warn("scan %lld ('%s') has no %s digests: none of its files is compared",
				  sqlite3_column_int64(s, 0), root, algo_names(usable, " or ", a));
		else
			fidx_warn("scan %lld ('%s') has no %s digests: its files are compared by %s"
				  " only", sqlite3_column_int64(s, 0), root,
				  algo_names(usable & ~mine, " or ", a), algo_names(mine, ", ", b));
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		fidx_query_fail(q);
		return 0;
	}
	return usable;
}

/* How to print a file. */
struct printer {
	const struct lists *lists;
	bool json, nul, lng;
};

/*
 * Prints one file: its path, and with -l or --json the digest of algo it was
 * compared by and where the lists hold it (loc, NULL for --not).
 */
static void print_file(const struct printer *pr, const char *path, int64_t scan_id,
		       enum fidx_digest algo, const uint8_t *digest,
		       const struct fidx_hashloc *loc)
{
	size_t len = fidx_digest_len(algo);
	if (pr->json) {
		fputc('{', stdout);
		fidx_json_path(stdout, "path", path);
		printf(",\"scan_id\":%" PRId64 ",\"algorithm\":\"%s\",\"digest\":", scan_id,
		       fidx_digest_name(algo));
		fidx_json_hex(stdout, digest, len);
		if (loc) {
			fputc(',', stdout);
			fidx_json_path(stdout, "list", pr->lists->paths[loc->list]);
			printf(",\"line\":%" PRIu32 "}\n", loc->line);
		} else {
			fputs(",\"list\":null,\"line\":null}\n", stdout);
		}
		return;
	}
	if (pr->lng) {
		fputs(fidx_digest_name(algo), stdout);
		putc_unlocked(':', stdout);
		fidx_out_hex(stdout, digest, len);
		if (loc)
			printf("  %s:%" PRIu32 "  ", fidx_quote(pr->lists->paths[loc->list]),
			       loc->line);
		else
			fputs("  -  ", stdout);
	}
	fidx_out_path(path, pr->nul);
}

/* What the comparison counted. */
struct counts {
	uint64_t compared;    /* files with a digest to compare */
	uint64_t listed;      /* files printed */
	uint64_t incomparable; /* files without one */
};

/*
 * Streams the regular files of the selected scans, compares each by the
 * algorithms in usable and prints the hits (or with invert the misses); the
 * rows read are counted in *rows (for the progress line).  Returns 0, or -1
 * after printing a database error.
 */
static int compare(struct fidx_query *q, const struct printer *pr, unsigned usable, bool invert,
		   struct counts *c, atomic_uint_least64_t *rows)
{
	enum fidx_digest algos[FIDX_NDIGESTS];
	size_t nalgos = 0;
	char sql[1024];
	size_t n = (size_t)snprintf(sql, sizeof(sql), "SELECT path, scan_id");

	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (usable & 1u << d) {
			algos[nalgos++] = d;
			n += (size_t)snprintf(sql + n, sizeof(sql) - n, ", %s", fidx_digest_name(d));
		}
	/* All the selected rows: maybe faster as a pass over the table ("+scan_id"). */
	int whole = fidx_space_read_table(q, 0);
	if (whole < 0)
		return -1;
	snprintf(sql + n, sizeof(sql) - n, ", id, type FROM file WHERE %sscan_id IN"
		 " (SELECT id FROM selected_scan) AND " FIDX_SQL_FILE_OR_DAMAGED("type") " AND %s",
		 whole ? "+" : "", fidx_query_shown(q, "file"));
	sqlite3_stmt *s = fidx_query_prepare(q, sql);
	struct fidx_rowcheck *check = s ? fidx_query_rowcheck(q, s, FIDX_ROWCHECK_ALL) : NULL;
	const char *damage = NULL;
	if (!check) {
		sqlite3_finalize(s);
		return -1;
	}
	int rc;
	uint64_t nrows = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (++nrows % 1024 == 0)
			atomic_store_explicit(rows, nrows, memory_order_relaxed);
		if ((damage = fidx_rowcheck(check, s))) {
			fidx_query_damaged(q, damage);
			break;
		}
		const struct fidx_hashloc *best = NULL;
		const uint8_t *best_digest = NULL, *first = NULL;
		enum fidx_digest best_algo = FIDX_MD5, first_algo = FIDX_MD5;
		for (size_t i = 0; i < nalgos; i++) {
			const uint8_t *d = sqlite3_column_blob(s, 2 + (int)i);
			if (!d || (size_t)sqlite3_column_bytes(s, 2 + (int)i) != fidx_digest_len(algos[i]))
				continue;
			if (!first)
				first = d, first_algo = algos[i];
			const struct fidx_hashloc *loc = fidx_hashset_find(pr->lists->set, algos[i], d);
			/* Several matches: the first list, the first line. */
			if (loc && (!best || loc->list < best->list ||
				    (loc->list == best->list && loc->line < best->line)))
				best = loc, best_digest = d, best_algo = algos[i];
		}
		if (!first) {
			c->incomparable++;
			continue;
		}
		c->compared++;
		const char *path = (const char *)sqlite3_column_text(s, 0);
		if (!invert && best) {
			print_file(pr, path, sqlite3_column_int64(s, 1), best_algo, best_digest, best);
			c->listed++;
		} else if (invert && !best) {
			print_file(pr, path, sqlite3_column_int64(s, 1), first_algo, first, NULL);
			c->listed++;
		}
		/* A failed write (a full disk, a closed pipe): stop; fidx_out_end() tells. */
		if (ferror_unlocked(stdout)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	if (!damage && rc != SQLITE_DONE)
		fidx_query_fail(q);
	fidx_rowcheck_free(check);
	sqlite3_finalize(s);
	return !damage && rc == SQLITE_DONE ? 0 : -1;
}

int cmd_match(int argc, char **argv)
{
	struct option longopts[NOPTIONS + 1];
	struct fidx_query_args qa = {0};
	struct fidx_query *q = NULL;
	struct lists l = {0};
	struct counts c = {0};
	struct printer pr = {.lists = &l};
	bool invert = false, all = false, strict = false, quiet = false;
	int ch, algo = -1, status = 2;
	char a[64];

	fidx_cli_longopts(match_options, NOPTIONS, longopts);
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":0hlq", longopts, NULL)) != -1) {
		if (fidx_query_option(ch, optarg, &qa))
			continue;
		switch (ch) {
		case OPT_NOT: invert = true; break;
		case 'l': pr.lng = true; break;
		case 'q': quiet = true; break;
		case OPT_SHOW_MALFORMED: all = true; break;
		case OPT_STRICT: strict = true; break;
		case OPT_ALGO:
			if ((algo = fidx_digest_parse(optarg)) < 0) {
				fidx_error("unknown algorithm '%s' (md5, sha1, sha256, sha512, xxh128)",
					   fidx_quote(optarg));
				return 2;
			}
			break;
		case 'h':
			match_usage(stdout);
			return 0;
		default:
			fidx_cli_bad_option("match", ch, argv, match_options, NOPTIONS);
			return 2;
		}
	}
	pr.json = qa.json;
	pr.nul = qa.nul;
	if (optind < argc && fidx_query_db_arg(argv[optind], &qa))
		optind++;
	if (optind == argc) {
		fidx_error("no hash list given (see 'fidx match --help')");
		return 2;
	}
	l.paths = argv + optind;
	l.n = (size_t)(argc - optind);
	if (l.n > UINT32_MAX) {
		fidx_error("too many lists");
		return 2;
	}
	/* The database first: a wrong one fails before a long list is read. */
	if (!(q = fidx_query_open(&qa)))
		return 2;
	if ((status = read_lists(&l, algo, all, strict)) != 0)
		goto out;
	status = 2;
	/* By default, the scans that computed the lists' digests (query.h). */
	if (fidx_query_select_digests(q, &qa, l.mask) < 0)
		goto out;
	unsigned usable = usable_algorithms(q, &l);
	if (!usable)
		goto out;
	fidx_out_begin();
	atomic_uint_least64_t rows = 0;
	struct fidx_progress *progress =
		fidx_progress_rows_wanted(quiet, true)
			? fidx_progress_rows_start(&rows, fidx_query_rows(q, true)) : NULL;
	int r = compare(q, &pr, usable, invert, &c, &rows);
	fidx_progress_stop(progress);
	if (fidx_out_end() < 0 || r < 0)
		goto out;
	if (c.incomparable)
		fidx_warn("%" PRIu64 " regular %s not compared: no %s digest (read errors, or"
			  " not hashed)", c.incomparable, fidx_plural(c.incomparable, "file", "files"),
			  algo_names(usable, " or ", a));
	if (!quiet) {
		print_lists(&l);
		fprintf(stderr, "fidx: %" PRIu64 " %s compared in %zu scan%s: %" PRIu64 " %s\n",
			c.compared, fidx_plural(c.compared, "file", "files"), q->nscans,
			q->nscans == 1 ? "" : "s", c.listed, invert ? "in no list" : "in the lists");
	}
	status = c.listed ? 0 : 1;
out:
	if (fidx_query_close(q) < 0)
		status = 2;
	fidx_hashset_destroy(l.set);
	free(l.stats);
	return status;
}
