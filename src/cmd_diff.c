/*
 * cmd_diff.c - `fidx diff`: what changed between two scans of a database.
 *
 *   fidx diff [DB]            the two newest complete scans of one root: the
 *                             root of the newest complete scan
 *   fidx diff [DB] OLD        scan OLD against the newest complete scan of its root
 *   fidx diff [DB] OLD NEW    those two scans (of any roots: paths compare
 *                             below each root)
 *
 * The comparison and the report are diff.c's (shared with `fidx check`);
 * this file picks the scans, maps failures to AIDE's exit codes and prints
 * the counts on stderr.
 *
 * Exit status (AIDE's): bits 1 added, 2 removed, 4 changed (0 identical);
 * 14 output could not be written, 15 usage, 17 no such scan (or no earlier
 * one to compare), 18 the database cannot be read, 19 the database has a
 * newer schema version.
 */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "diff.h"
#include "hash.h"
#include "output.h"
#include "query.h"

enum {
	OPT_IGNORE = 256,
	OPT_ATIME,
};

static const struct fidx_option diff_options[] = {
	{{"db", required_argument, NULL, FIDX_OPT_DB}, "FILE",
	 "the database (default $FIDX_DB, else ./fidx.db), as the\n"
	 "                       first argument may name it"},
	FIDX_OUTPUT_OPTIONS,
	FIDX_DIFF_OPTIONS(OPT_IGNORE, OPT_ATIME),
	{{"quiet", no_argument, NULL, 'q'}, NULL, "no counts on stderr"},
	{{"help", no_argument, NULL, 'h'}, NULL, "show this help"},
};
#define NOPTIONS (sizeof(diff_options) / sizeof(diff_options[0]))

/* Prints the help of `fidx diff`. */
static void diff_usage(FILE *out)
{
	fputs("usage: fidx diff [OPTIONS] [DB] [OLD [NEW]]\n\n"
	      "List what was added, removed, changed and moved between two scans OLD and\n"
	      "NEW (scan ids, see 'fidx scans').  Default: the two newest complete scans\n"
	      "of the root of the newest complete scan; OLD alone is compared with the\n"
	      "newest complete scan of its root.  Scans of two roots compare the paths\n"
	      "below each root (a copy with its original).\n\n"
	      "One line per entry, sorted by path (bytes), the path byte for byte:\n"
	      "  added   ++++++++++++++ PATH\n"
	      "  removed -------------- PATH\n"
	      "  changed .>...mc...H... PATH\n"
	      "  moved   ......c....... OLD -> NEW     (with -0: OLD NUL NEW NUL)\n"
	      "A moved entry is a path gone while its inode (device and inode number),\n"
	      "type and content appeared at a new path: equal digests where both rows\n"
	      "have one in common, else equal size and mtime; and the same birth time\n"
	      "where both rows know it (a new file given a freed inode number is not a\n"
	      "move).  Its summary shows what else changed (a rename changes ctime).\n"
	      "Changed and removed paths are the NEW and OLD scan's, moves are sorted\n"
	      "by their OLD path.\n\n"
	      "Summary: one position per attribute, its letter when it differs:\n"
	      "  t type            > < size grew, shrank (s: to or from unknown)\n"
	      "  p permissions     u owner (uid)      g group (gid)\n"
	      "  m mtime           c ctime            i inode (device or number)\n"
	      "  n link count      l symlink target   H content (digests; '?' cannot be\n"
	      "                                       compared: no digest in common)\n"
	      "  a atime (--atime) b birth time       e the entry's read error\n"
	      "Names for --ignore: type, size, perm, owner, group, mtime, ctime, inode,\n"
	      "nlink, target, content, atime, btime, error.  An entry whose only changes\n"
	      "are ignored is not listed; '?' alone does not list an entry.\n\n"
	      "-v adds a line per attribute shown: 'NAME OLD -> NEW' (ls -l modes, ISO\n"
	      "8601 UTC times, 'major:minor inode', 'sha256:HEX', quoted text).\n"
	      "--json: one object per entry: kind, path, old_path (moves), summary,\n"
	      "changes [names], unknown [\"content\"], and with -v old {} and new {}.\n"
	      "The counts go to stderr unless -q.\n\n"
	      "Options:\n", out);
	fidx_cli_usage(out, diff_options, NOPTIONS);
	fputs("\nExit status (AIDE's): 0 identical, else bit 1 added, 2 removed, 4 changed\n"
	      "(a move counts as added and removed, and as changed when its summary shows\n"
	      "a change); 14 output not written, 15 usage, 17 no such scan or nothing to\n"
	      "compare with, 18 database unreadable, 19 database of a newer fidx.\n", out);
}

/* A scan chosen for one side. */
struct chosen {
	int64_t id;
	char *root;        /* malloc'ed */
	char status[16];
};

/*
 * Parses a scan id argument.  Returns 0, or -1 after printing why.
 */
static int parse_id(const char *arg, int64_t *id)
{
	char *end;
	errno = 0;
	long long v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || arg[0] == '+') {
		fidx_error("invalid scan id '%s': expected a number such as 3 ('fidx scans' lists"
			   " them)", fidx_quote(arg));
		return -1;
	}
	*id = v;
	return 0;
}

/*
 * Runs sql (binding id and root when given) and fills c from its first row
 * (id, root, status).  Returns 1, 0 when there is no row, or -1 after
 * printing why.
 */
static int pick(struct fidx_query *q, const char *sql, int64_t id, const char *root,
		struct chosen *c)
{
	sqlite3_stmt *s = fidx_query_prepare(q, sql);
	int ret = -1;
	if (!s)
		return -1;
	if (id)
		sqlite3_bind_int64(s, 1, id);
	if (root)
		sqlite3_bind_text(s, 2, root, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		c->id = sqlite3_column_int64(s, 0);
		const char *st = (const char *)sqlite3_column_text(s, 2);
		snprintf(c->status, sizeof(c->status), "%s", st ? st : "");
		if (!(c->root = strdup((const char *)sqlite3_column_text(s, 1))))
			fidx_error("out of memory");
		else
			ret = 1;
	} else if (rc == SQLITE_DONE) {
		ret = 0;
	} else {
		fidx_query_fail(q);
	}
	sqlite3_finalize(s);
	return ret;
}

static const char by_id_sql[] = "SELECT id, root, status FROM scan WHERE id = ?1";
static const char newest_sql[] = "SELECT id, root, status FROM scan WHERE status = 'complete'"
				 " ORDER BY id DESC LIMIT 1";
static const char before_sql[] = "SELECT id, root, status FROM scan WHERE status = 'complete'"
				 " AND root = ?2 AND id < ?1 ORDER BY id DESC LIMIT 1";
static const char after_sql[] = "SELECT id, root, status FROM scan WHERE status = 'complete'"
				" AND root = ?2 AND id > ?1 ORDER BY id DESC LIMIT 1";

/*
 * Chooses the two scans from the arguments (nids of them, in ids).  Returns
 * 0, or an exit status after printing why.
 */
static int choose(struct fidx_query *q, const int64_t *ids, int nids, struct chosen *old,
		  struct chosen *new)
{
	int rc;
	if (nids == 0) {
		if ((rc = pick(q, newest_sql, 0, NULL, new)) <= 0) {
			if (rc == 0)
				fidx_error("database '%s' has no complete scan ('fidx scans' lists"
					   " its scans)", fidx_quote(q->path));
			return rc < 0 ? FIDX_DIFF_EXIT_READ : FIDX_DIFF_EXIT_CONFIG;
		}
		if ((rc = pick(q, before_sql, new->id, new->root, old)) <= 0) {
			if (rc == 0)
				fidx_error("no complete scan of '%s' before scan %lld to compare it"
					   " with", fidx_quote(new->root), (long long)new->id);
			return rc < 0 ? FIDX_DIFF_EXIT_READ : FIDX_DIFF_EXIT_CONFIG;
		}
		return 0;
	}
	for (int i = 0; i < nids; i++) {
		struct chosen *c = i ? new : old;
		if ((rc = pick(q, by_id_sql, ids[i], NULL, c)) <= 0) {
			if (rc == 0)
				fidx_error("database '%s' has no scan %lld ('fidx scans' lists them)",
					   fidx_quote(q->path), (long long)ids[i]);
			return rc < 0 ? FIDX_DIFF_EXIT_READ : FIDX_DIFF_EXIT_CONFIG;
		}
	}
	if (nids == 1 && (rc = pick(q, after_sql, old->id, old->root, new)) <= 0) {
		if (rc == 0)
			fidx_error("no complete scan of '%s' after scan %lld to compare it with",
				   fidx_quote(old->root), (long long)old->id);
		return rc < 0 ? FIDX_DIFF_EXIT_READ : FIDX_DIFF_EXIT_CONFIG;
	}
	for (int i = 0; i < 2; i++) {
		const struct chosen *c = i ? new : old;
		if (strcmp(c->status, "complete") != 0)
			fidx_warn("scan %lld is %s: what it did not record shows as removed or"
				  " added", (long long)c->id, c->status);
	}
	return 0;
}

/*
 * Sets *mask to the digests scan id computed (its options' "hash"), or -1
 * when its options do not say.  Returns 0, or -1 after printing why the
 * database could not be read.
 */
static int scan_digests(struct fidx_query *q, int64_t id, long *mask)
{
	sqlite3_stmt *s = fidx_query_prepare(q, "SELECT CASE WHEN json_valid(options) THEN"
					     " json_extract(options, '$.hash') END FROM scan"
					     " WHERE id = ?");
	unsigned m;
	*mask = -1;
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	int rc = sqlite3_step(s);
	const char *hash = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 0) : NULL;
	if (hash && fidx_digest_list_parse(hash, &m) == 0)
		*mask = (long)m;
	bool failed = (rc != SQLITE_ROW && rc != SQLITE_DONE) ||
		      (!hash && rc == SQLITE_ROW && sqlite3_column_type(s, 0) == SQLITE_TEXT);
	if (failed)
		fidx_query_fail(q);
	sqlite3_finalize(s);
	return failed ? -1 : 0;
}

/*
 * Warns when the two scans have no digest in common: content is then not
 * compared.  Returns 0, or -1 after printing why the database could not be read.
 */
static int warn_digests(struct fidx_query *q, const struct chosen *old, const struct chosen *new)
{
	long a, b;
	if (scan_digests(q, old->id, &a) < 0 || scan_digests(q, new->id, &b) < 0)
		return -1;
	if (a >= 0 && b >= 0 && !(a & b) && (a | b) != 0)
		fidx_warn("scans %lld and %lld have no digest in common: content is not compared"
			  " (shown as '?')", (long long)old->id, (long long)new->id);
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	struct option longopts[NOPTIONS + 1];
	struct fidx_query_args qa = {.every_scan = true, .raw = true};
	struct fidx_diff_print_opts po = {0};
	struct chosen old = {0}, new = {0};
	struct fidx_query *q = NULL;
	struct fidx_diff *d = NULL;
	unsigned attrs = FIDX_DIFF_DEFAULT, ignore = 0;
	bool atime = false, quiet = false;
	int64_t ids[2];
	int nids = 0, c, status = FIDX_DIFF_EXIT_USAGE;
	char *errmsg = NULL;

	fidx_cli_longopts(diff_options, NOPTIONS, longopts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":0vqh", longopts, NULL)) != -1) {
		if (fidx_query_option(c, optarg, &qa))
			continue;
		switch (c) {
		case 'v': po.verbose = true; break;
		case 'q': quiet = true; break;
		case OPT_ATIME: atime = true; break;
		case OPT_IGNORE:
			if (fidx_diff_ignore_arg(optarg, &ignore) < 0)
				return FIDX_DIFF_EXIT_USAGE;
			break;
		case 'h': diff_usage(stdout); return 0;
		default:
			fidx_cli_bad_option("diff", c, argv, diff_options, NOPTIONS);
			return FIDX_DIFF_EXIT_USAGE;
		}
	}
	/* A first argument that is not a number is the database. */
	if (optind < argc && strspn(argv[optind], "0123456789") != strlen(argv[optind]) &&
	    !qa.db)
		qa.db = argv[optind++];
	for (; optind < argc; optind++) {
		if (nids == 2) {
			fidx_error("unexpected argument '%s' (see 'fidx diff --help')",
				   fidx_quote(argv[optind]));
			return FIDX_DIFF_EXIT_USAGE;
		}
		if (parse_id(argv[optind], &ids[nids++]) < 0)
			return FIDX_DIFF_EXIT_USAGE;
	}
	if (atime)
		attrs |= 1u << FIDX_DIFF_ATIME;
	attrs &= ~ignore;
	po.json = qa.json;
	po.nul = qa.nul;

	if (!(q = fidx_query_open(&qa)))
		return fidx_diff_open_status(fidx_cli_db(qa.db));
	if ((status = choose(q, ids, nids, &old, &new)) != 0)
		goto out;
	status = FIDX_DIFF_EXIT_READ;
	/* The two scans' rows, not every scan's (diff selects them all). */
	if (fidx_query_check_scan(q, old.id) < 0 || fidx_query_check_scan(q, new.id) < 0)
		goto out;
	if ((attrs >> FIDX_DIFF_CONTENT & 1) && warn_digests(q, &old, &new) < 0)
		goto out;
	struct fidx_diff_side so = {"main", old.id, old.root, q->path},
			      sn = {"main", new.id, new.root, q->path};
	status = FIDX_DIFF_EXIT_READ;
	if (!(d = fidx_diff_compare(q->db, &so, &sn, attrs, &errmsg))) {
		fidx_error("%s", errmsg ? errmsg : "out of memory");
		goto out;
	}
	fidx_out_begin();
	if (fidx_diff_print(d, q->db, &so, &sn, &po, stdout, &errmsg) < 0) {
		fidx_out_end();
		fidx_error("%s", errmsg ? errmsg : "out of memory");
		goto out;
	}
	if (fidx_out_end() < 0) {
		status = FIDX_DIFF_EXIT_WRITE;
		goto out;
	}
	if (!quiet) {
		char counts[128];
		fprintf(stderr, "scan %lld -> scan %lld: %s\n", (long long)old.id, (long long)new.id,
			fidx_diff_counts(d, counts));
	}
	status = fidx_diff_status(d);
out:
	free(errmsg);
	fidx_diff_free(d);
	free(old.root);
	free(new.root);
	if (fidx_query_close(q) < 0)
		status = FIDX_DIFF_EXIT_READ;
	return status;
}
