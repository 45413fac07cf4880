/*
 * match.c - `fidx match`: the scanned files whose digest is in hash lists
 * (known-bad hunting), or with --not in none of them (known-good filtering).
 *
 *   lists ──► hashlist.c: parse, one digest set per algorithm ──┐
 *             malformed lines: warned one by one (the first 10   │
 *             of each list, or all with --show-malformed), then  │
 *             counted with their line numbers                    │
 *   database ──► the selected scan rows: which digests each ─────┤ algorithms of the lists
 *                computed (its options' "hash"; query.h)         │ that no scan has: warned,
 *                                                                │ or fatal if none is left
 *   the store's rows of the scans' regular files, with those digests ──► look-up ──► stdout
 *
 * A file is compared by every algorithm both the lists and its row have; a
 * file with none of them (an error, not hashed, a scan without that
 * algorithm) is not compared, and the number of such files is always told,
 * so that --not never passes an unreadable file off as unknown.  The store
 * checks every row it hands out (a damaged one stops the command with one
 * line naming it); a row costs no allocation here: its values point into the
 * store's memory, the hash set is only looked up.
 */
#include "builtin.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "color.h"
#include "diag.h"
#include "hashlist.h"
#include "json.h"
#include "options.h"
#include "output.h"
#include "progress.h"
#include "query.h"
#include "row.h"
#include "scanrow.h"
#include "store.h"

/* Malformed lines warned one by one per list, unless --show-malformed. */
#define WARN_LINES 10
/* Ranges of malformed line numbers shown in a list's summary. */
#define RANGES_SHOWN 10

/* What `fidx match --help` says around its options. */
static const struct fidx_help match_help = {
	.command = "match",
	.text = "usage: fidx match [OPTIONS] [DB] LIST...\n\n"
		"List the regular files of the database (default $FIDX_DB, else ./fidx.db)\n"
		"whose digest is in one of the hash lists (LIST '-' is standard input), or\n"
		"with --not those whose digest is in none.  A list is sha256sum/md5sum/\n"
		"sha1sum/sha512sum output (also --tag and escaped names), a hashdeep file, a\n"
		"CSV file whose header names its digest columns (NSRL: \"SHA-1\",\"MD5\",...),\n"
		"or one hex digest per line.  The length of a digest tells its algorithm unless a\n"
		"label or a header does.  Malformed lines are reported with their line\n"
		"numbers; files without a digest to compare are counted, never listed.\n\n",
	.footer = "\nExit status: 0 files listed, 1 none, 2 usage or fatal error (also an\n"
		  "unreadable list, lists without digests, lists whose algorithms no selected\n"
		  "scan has).  Malformed lines are warnings that leave the status as it is;\n"
		  "with --strict the first one is a fatal error.\n",
};

/* Takes --algo's argument into *(int *)algo (FIDX_OPT_CALL).  Returns 0, or -1 after saying why. */
static int algo_arg(const char *arg, void *algo)
{
	int d = fidx_digest_parse(arg);
	if (d < 0) {
		fidx_error("unknown algorithm '%s' (md5, sha1, sha256, sha512, xxh128)",
			   fidx_quote(arg));
		return -1;
	}
	*(int *)algo = d;
	return 0;
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

/*
 * Decides the algorithms to compare: those of the lists that at least one
 * selected scan computed (its options' "hash"; every digest when they do
 * not say).  Warns about list digests no scan can match and about scans
 * that lack some of them.  Returns the mask, or 0 after printing that
 * nothing can be compared.
 */
static unsigned usable_algorithms(const struct fidx_query *q, const struct lists *l)
{
	const struct fidx_scan_list *scans = &q->sel.scans;
	unsigned have = 0, usable;
	char a[64], b[64], c[64];

	for (size_t i = 0; i < scans->n; i++)
		have |= fidx_scan_row_digests_or_all(&scans->rows[i]);
	usable = l->mask & have;
	if (!usable) {
		fidx_error("the lists hold %s digests, the selected scans %s: nothing to compare"
			   " (scan with --hash %s)", algo_names(l->mask, ", ", a),
			   have ? algo_names(have, ", ", b) : "none", algo_names(l->mask, ",", c));
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
	for (size_t i = 0; i < scans->n; i++) {
		const struct fidx_scan_row *s = &scans->rows[i];
		unsigned mine = fidx_scan_row_digests_or_all(s) & usable;
		if (mine == usable)
			continue;
		const char *root = fidx_quote(s->root ? s->root : "");
		if (!mine)
			fidx_warn("scan %" PRId64 " ('%s') has no %s digests: none of its files is"
				  " compared", s->id, root, algo_names(usable, " or ", a));
		else
			fidx_warn("scan %" PRId64 " ('%s') has no %s digests: its files are compared"
				  " by %s only", s->id, root, algo_names(usable & ~mine, " or ", a),
				  algo_names(mine, ", ", b));
	}
	return usable;
}

/* How to print a file. */
struct printer {
	const struct lists *lists;
	bool json, nul, lng;
};

/*
 * Prints one file: its path (after "host:" when host is not NULL), and with
 * -l or --json the digest of algo it was compared by and where the lists
 * hold it (loc, NULL for --not).
 */
static void print_file(const struct printer *pr, const char *host, const char *path,
		       int64_t scan_id, enum fidx_digest algo, const uint8_t *digest,
		       const struct fidx_hashloc *loc)
{
	size_t len = fidx_digest_len(algo);
	if (pr->json) {
		fputc('{', stdout);
		if (host) {
			fidx_json_path(stdout, "host", host);
			putc_unlocked(',', stdout);
		}
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
		fidx_write_hex(stdout, digest, len);
		if (loc)
			printf("  %s:%" PRIu32 "  ", fidx_quote(pr->lists->paths[loc->list]),
			       loc->line);
		else
			fputs("  -  ", stdout);
	}
	fidx_out_host(host);
	fidx_color_path(path, 'f', 0, pr->nul);
}

/* What the comparison counted. */
struct counts {
	uint64_t compared;    /* files with a digest to compare */
	uint64_t listed;      /* files printed */
	uint64_t incomparable; /* files without one */
	int indexed;          /* the store's index of this digest found the files (-1: none;
				 compared and incomparable are then not counted) */
};

/*
 * With one algorithm, asks the store for the files whose digest is in the
 * lists (a server keeps an index of digests: a hunt over a fleet reads no
 * other row) and prints them.  Returns 1 when the store answered (c->indexed
 * set), 0 when it keeps no such index (the caller reads every row), -1
 * after printing why the read failed.
 */
static int look_up(const struct fidx_query *q, const struct printer *pr, enum fidx_digest d,
		   struct counts *c, atomic_uint_least64_t *rows)
{
	struct fidx_rows_query rq;
	struct fidx_error err;
	const struct fidx_row *row;
	int rc;
	fidx_query_rows(q, FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_TYPE) |
			FIDX_DIGEST_COLUMN(d), FIDX_ROWS_ANY, &rq);
	struct fidx_rows *it = fidx_store_rows_by_digest(q->st, &rq, d,
							 fidx_hashset_digests(pr->lists->set, d),
							 fidx_hashset_count(pr->lists->set, d), &err);
	if (!it) {
		if (err.code == EOPNOTSUPP)
			return 0;
		fidx_query_fail(q, &err);
		return -1;
	}
	c->indexed = (int)d;
	while ((rc = fidx_rows_next(it, &row, &err)) == 1) {
		atomic_fetch_add_explicit(rows, 1, memory_order_relaxed);
		const uint8_t *digest = fidx_row_digest(row, d);
		const struct fidx_hashloc *loc = digest ? fidx_hashset_find(pr->lists->set, d, digest)
					       : NULL;
		/* Regular files only, as the full comparison reads them. */
		if (!loc || fidx_row_type(row) != 'f')
			continue;
		int64_t scan_id = fidx_row_int(row, FIDX_COL_SCAN_ID);
		print_file(pr, fidx_query_host(q, scan_id), fidx_row_text(row, FIDX_COL_PATH),
			   scan_id, d, digest, loc);
		c->listed++;
		if (ferror_unlocked(stdout)) {
			rc = 0;
			break;
		}
	}
	fidx_rows_close(it);
	if (rc < 0) {
		fidx_query_fail(q, &err);
		return -1;
	}
	return 1;
}

/*
 * Streams the store's rows of the selected scans' regular files (their
 * hidden trees left out) with the digests of usable, compares each by those
 * algorithms and prints the hits (or with invert the misses); the rows read
 * are counted in *rows (for the progress line).  Returns 0, or -1 after
 * printing what the read failed with (a damaged row named by the store).
 */
static int compare(const struct fidx_query *q, const struct printer *pr, unsigned usable,
		   bool invert, struct counts *c, atomic_uint_least64_t *rows)
{
	enum fidx_digest algos[FIDX_NDIGESTS];
	size_t nalgos = 0;
	/* The type too, so that a row whose type is damaged (which the filter lets
	 * through) is checked and named rather than compared. */
	uint64_t columns = FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_TYPE);

	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (usable & 1u << d) {
			algos[nalgos++] = d;
			columns |= FIDX_DIGEST_COLUMN(d);
		}
	struct fidx_rows_query rq;
	fidx_query_rows(q, columns, FIDX_ROWS_ANY, &rq);
	rq.types = FIDX_TYPE_FILE;
	struct fidx_error err;
	struct fidx_rows *it = fidx_store_rows(q->st, &rq, &err);
	if (!it) {
		fidx_query_fail(q, &err);
		return -1;
	}
	const struct fidx_row *row;
	uint64_t nrows = 0;
	int rc;
	while ((rc = fidx_rows_next(it, &row, &err)) == 1) {
		if (++nrows % 1024 == 0)
			atomic_store_explicit(rows, nrows, memory_order_relaxed);
		const struct fidx_hashloc *best = NULL;
		const uint8_t *best_digest = NULL, *first = NULL;
		enum fidx_digest best_algo = FIDX_MD5, first_algo = FIDX_MD5;
		for (size_t i = 0; i < nalgos; i++) {
			const uint8_t *d = fidx_row_digest(row, algos[i]);
			if (!d)
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
		const char *path = fidx_row_text(row, FIDX_COL_PATH);
		int64_t scan_id = fidx_row_int(row, FIDX_COL_SCAN_ID);
		if (!invert && best) {
			print_file(pr, fidx_query_host(q, scan_id), path, scan_id, best_algo,
				   best_digest, best);
			c->listed++;
		} else if (invert && !best) {
			print_file(pr, fidx_query_host(q, scan_id), path, scan_id, first_algo, first,
				   NULL);
			c->listed++;
		}
		/* A failed write (a full disk, a closed pipe): stop; fidx_out_end() tells. */
		if (ferror_unlocked(stdout)) {
			rc = 0;
			break;
		}
	}
	fidx_rows_close(it);
	if (rc < 0) {
		fidx_query_fail(q, &err);
		return -1;
	}
	return 0;
}

/* fidx match: options, the database, the lists, then one pass over the rows. */
int cmd_match(int argc, char **argv, const struct fidx_command *cmd)
{
	struct fidx_query_args qa = {0};
	struct fidx_query *q = NULL;
	struct lists l = {0};
	struct counts c = {0};
	struct printer pr = {.lists = &l};
	bool invert = false, all = false, strict = false, quiet = false;
	int algo = -1, status = 2;
	char a[64];
	struct fidx_option options[] = {
		FIDX_OPT_FLAG(0, "not", &invert, "list the regular files whose digest is in no list"),
		FIDX_OPT_FLAG('l', "long", &pr.lng,
			      "show the digest and the list and line it matched:"
			      " ALGO:HEX  LIST:LINE  PATH"),
		FIDX_OPT_CALL(0, "algo", "ALGO", algo_arg, &algo,
			      "the algorithm of digests without a label (bare and"
			      " sha256sum-style lines): md5, sha1, sha256, sha512 or"
			      " xxh128 (default: told by length, 32 digits md5)"),
		FIDX_OPT_FLAG(0, "show-malformed", &all,
			      "warn about every malformed line (default: the first 10"
			      " of each list, then their count and numbers)"),
		FIDX_OPT_FLAG(0, "strict", &strict, "a malformed line is an error (exit 2)"),
		FIDX_OPT_FLAG('q', "quiet", &quiet,
			      "no summary of the lists and counts on stderr, and no"
			      " progress line (else drawn after half a second when"
			      " stderr is a terminal and stdout is not the same one)"),
		FIDX_OPT_QUERY(&qa),
		FIDX_OPT_COLOR,
		FIDX_OPT_END,
	};

	(void)cmd;
	int first = fidx_parse_options(argc, argv, options, &match_help);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 0 : 2;
	pr.json = qa.json;
	pr.nul = qa.nul;
	if (first < argc && fidx_query_db_arg(argv[first], &qa))
		first++;
	if (first == argc) {
		fidx_error("no hash list given (see 'fidx match --help')");
		return 2;
	}
	l.paths = argv + first;
	l.n = (size_t)(argc - first);
	if (l.n > UINT32_MAX) {
		fidx_error("too many lists");
		return 2;
	}
	/* The database first: a wrong one fails before a long list is read. */
	if (!(q = fidx_query_open(&qa, NULL)))
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
			? fidx_progress_rows_start(&rows, fidx_query_count(q, true)) : NULL;
	/* One algorithm: the store's index of it, when it keeps one; else every row. */
	c.indexed = -1;
	int r = !invert && __builtin_popcount(usable) == 1
		? look_up(q, &pr, (enum fidx_digest)__builtin_ctz(usable), &c, &rows) : 0;
	if (r == 0)
		r = compare(q, &pr, usable, invert, &c, &rows);
	fidx_progress_stop(progress);
	if (fidx_out_end() < 0 || r < 0)
		goto out;
	if (c.incomparable)
		fidx_warn("%" PRIu64 " regular %s not compared: no %s digest (read errors, or"
			  " not hashed)", c.incomparable, fidx_plural(c.incomparable, "file", "files"),
			  algo_names(usable, " or ", a));
	if (!quiet) {
		print_lists(&l);
		if (c.indexed >= 0)
			fprintf(stderr, "fidx: %" PRIu64 " %s in the lists, found by the database's"
				" index of %s in %zu scan%s\n", c.listed,
				fidx_plural(c.listed, "file", "files"),
				fidx_digest_name((enum fidx_digest)c.indexed), q->nscans,
				q->nscans == 1 ? "" : "s");
		else
			fprintf(stderr, "fidx: %" PRIu64 " %s compared in %zu scan%s: %" PRIu64
				" %s\n", c.compared, fidx_plural(c.compared, "file", "files"),
				q->nscans, q->nscans == 1 ? "" : "s", c.listed,
				invert ? "in no list" : "in the lists");
	}
	status = c.listed ? 0 : 1;
out:
	if (fidx_query_close(q) < 0)
		status = 2;
	fidx_hashset_destroy(l.set);
	free(l.stats);
	return status;
}
