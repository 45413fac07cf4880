/*
 * diff.c - `fidx diff`: what changed between two scans of a database.
 *
 *   fidx diff [DB]            the two newest complete scans of one root: the
 *                             root of the newest complete scan
 *   fidx diff [DB] OLD        scan OLD against the newest complete scan of its root
 *   fidx diff [DB] OLD NEW    those two scans (of any roots: paths compare
 *                             below each root)
 *
 * The comparison is core/diff.c's and the report diffout.c's (both shared
 * with `fidx check`); this file picks the scans among the database's scan
 * rows, maps failures to AIDE's exit codes and prints the counts on stderr.
 *
 * Exit status (AIDE's): bits 1 added, 2 removed, 4 changed (0 identical);
 * 14 output could not be written, 15 usage, 17 no such scan (or no earlier
 * one to compare), 18 the database cannot be read, 19 the database has a
 * newer schema version.
 */
#include "builtin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "diff.h"
#include "diffout.h"
#include "options.h"
#include "output.h"
#include "query.h"

/* What `fidx diff --help` says around its options. */
static const struct fidx_help diff_help = {
	.command = "diff",
	.text = "usage: fidx diff [OPTIONS] [DB] [OLD [NEW]]\n\n"
		"List what was added, removed, changed and moved between two scans OLD and\n"
		"NEW (scan ids, see 'fidx scans').  Default: the two newest complete scans\n"
		"of the root of the newest complete scan; OLD alone is compared with the\n"
		"newest complete scan of its root.  Scans of two roots compare the paths\n"
		"below each root (a copy with its original).  OLD and NEW may also be\n"
		"HOST:PATH, the newest complete scan made on HOST whose tree holds PATH, of\n"
		"which the tree of PATH is compared: how two machines of a fleet differ\n"
		"(fidx diff --db postgresql://... web1:/etc web2:/etc).\n\n"
		"One line per entry, sorted by path (bytes), the path byte for byte:\n"
		"  added   +++++++++++++++ PATH\n"
		"  removed --------------- PATH\n"
		"  changed .>...mc...H.... PATH\n"
		"  moved   ......c........ OLD -> NEW     (with -0: OLD NUL NEW NUL)\n"
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
		"  D state: a disk image's entry allocated, deleted... (fidx scan --image)\n"
		"Names for --ignore: type, size, perm, owner, group, mtime, ctime, inode,\n"
		"nlink, target, content, atime, btime, error, state.  An entry whose only changes\n"
		"are ignored is not listed; '?' alone does not list an entry.\n\n"
		"-v adds a line per attribute shown: 'NAME OLD -> NEW' (ls -l modes, ISO\n"
		"8601 UTC times, 'major:minor inode', 'sha256:HEX', quoted text).\n"
		"--json: one object per entry: kind, path, old_path (moves), summary,\n"
		"changes [names], unknown [\"content\"], and with -v old {} and new {}.\n"
		"The counts go to stderr unless -q.\n\n",
	.footer = "\nExit status (AIDE's): 0 identical, else bit 1 added, 2 removed, 4 changed\n"
		  "(a move counts as added and removed, and as changed when its summary shows\n"
		  "a change); 14 output not written, 15 usage, 17 no such scan or nothing to\n"
		  "compare with, 18 database unreadable, 19 database of a newer fidx.\n",
};

/* A scan named on the command line: by its id, or by HOST:PATH. */
struct scan_spec {
	int64_t id;            /* the scan id; 0 for HOST:PATH */
	const char *host;      /* HOST (not NUL-terminated: hostlen bytes) */
	size_t hostlen;
	const char *path;      /* PATH, absolute */
};

/*
 * Whether arg is HOST:PATH: a host name without '/', a colon, an absolute
 * path (a database named so is given as ./HOST:PATH or with --db).
 */
static bool is_host_path(const char *arg)
{
	const char *colon = strchr(arg, ':');
	return colon && colon > arg && colon[1] == '/' && !memchr(arg, '/', (size_t)(colon - arg));
}

/*
 * Parses a scan argument: an id or HOST:PATH.  Returns 0, or -1 after
 * printing why.
 */
static int parse_spec(const char *arg, struct scan_spec *spec);

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

static int parse_spec(const char *arg, struct scan_spec *spec)
{
	*spec = (struct scan_spec){0};
	if (!is_host_path(arg))
		return parse_id(arg, &spec->id);
	const char *colon = strchr(arg, ':');
	spec->host = arg;
	spec->hostlen = (size_t)(colon - arg);
	spec->path = colon + 1;
	return 0;
}

/*
 * The newest complete scan of q made on spec's host whose tree holds
 * spec's path, or NULL after printing why.
 */
static const struct fidx_scan_row *scan_of_host(const struct fidx_query *q,
						const struct scan_spec *spec)
{
	for (size_t i = q->all.n; i-- > 0;) {
		const struct fidx_scan_row *s = &q->all.rows[i];
		if (s->status && strcmp(s->status, "complete") == 0 && s->host && s->root &&
		    strlen(s->host) == spec->hostlen &&
		    memcmp(s->host, spec->host, spec->hostlen) == 0 &&
		    fidx_path_in_tree(spec->path, s->root))
			return s;
	}
	fidx_error("database '%s' has no complete scan made on '%s' that holds '%s' ('fidx scans'"
		   " lists them)", fidx_quote(q->path), fidx_quote(strndupa(spec->host,
		   spec->hostlen)), fidx_quote(spec->path));
	return NULL;
}

/* Whether scan row s is complete. */
static bool complete(const struct fidx_scan_row *s)
{
	return s->status && strcmp(s->status, "complete") == 0;
}

/* Whether scan rows a and b are of the same root of the same host. */
static bool same_root(const struct fidx_scan_row *a, const struct fidx_scan_row *b)
{
	return b->root_text && fidx_scan_row_of_root(a, b->root) &&
	       (a->host == b->host || (a->host && b->host && strcmp(a->host, b->host) == 0));
}

/*
 * The newest complete scan of the database (of near's root, with an id below
 * (before) or above near's, when near is not NULL), or NULL.
 */
static const struct fidx_scan_row *newest(const struct fidx_query *q,
					  const struct fidx_scan_row *near, bool before)
{
	for (size_t i = q->all.n; i-- > 0;) {
		const struct fidx_scan_row *s = &q->all.rows[i];
		if (complete(s) && (!near || (same_root(s, near) &&
					     (before ? s->id < near->id : s->id > near->id))))
			return s;
	}
	return NULL;
}

/*
 * Chooses the two scans from the arguments (nids of them, in specs), and
 * the trees of them compared into under[] (a HOST:PATH's PATH; else NULL,
 * the root's).  Returns 0, or an exit status after printing why.
 */
static int choose(const struct fidx_query *q, const struct scan_spec *specs, int nids,
		  const struct fidx_scan_row **old, const struct fidx_scan_row **new,
		  const char *under[2])
{
	under[0] = under[1] = NULL;
	if (nids && (specs[0].host || (nids == 2 && specs[1].host))) {
		if (nids != 2) {
			fidx_error("HOST:PATH names one side: give both, OLD and NEW");
			return FIDX_DIFF_EXIT_USAGE;
		}
		for (int i = 0; i < 2; i++) {
			const struct fidx_scan_row **c = i ? new : old;
			if (specs[i].host ? !(*c = scan_of_host(q, &specs[i]))
			    : !(*c = fidx_scan_list_find(&q->all, specs[i].id))) {
				if (!specs[i].host)
					fidx_error("database '%s' has no scan %lld ('fidx scans' lists"
						   " them)", fidx_quote(q->path),
						   (long long)specs[i].id);
				return FIDX_DIFF_EXIT_CONFIG;
			}
			if (specs[i].host && strcmp(specs[i].path, (*c)->root) != 0)
				under[i] = specs[i].path;
		}
		return 0;
	}
	if (nids == 0) {
		if (!(*new = newest(q, NULL, false))) {
			fidx_error("database '%s' has no complete scan ('fidx scans' lists its scans)",
				   fidx_quote(q->path));
			return FIDX_DIFF_EXIT_CONFIG;
		}
		if (!(*old = newest(q, *new, true))) {
			fidx_error("no complete scan of '%s' before scan %lld to compare it with",
				   fidx_quote((*new)->root), (long long)(*new)->id);
			return FIDX_DIFF_EXIT_CONFIG;
		}
		return 0;
	}
	for (int i = 0; i < nids; i++) {
		const struct fidx_scan_row **c = i ? new : old;
		if (!(*c = fidx_scan_list_find(&q->all, specs[i].id))) {
			fidx_error("database '%s' has no scan %lld ('fidx scans' lists them)",
				   fidx_quote(q->path), (long long)specs[i].id);
			return FIDX_DIFF_EXIT_CONFIG;
		}
	}
	if (nids == 1 && !(*new = newest(q, *old, false))) {
		fidx_error("no complete scan of '%s' after scan %lld to compare it with",
			   fidx_quote((*old)->root), (long long)(*old)->id);
		return FIDX_DIFF_EXIT_CONFIG;
	}
	for (int i = 0; i < 2; i++) {
		const struct fidx_scan_row *c = i ? *new : *old;
		if (!complete(c))
			fidx_warn("scan %lld is %s: what it did not record shows as removed or"
				  " added", (long long)c->id, c->status ? c->status : "");
	}
	return 0;
}

/*
 * Warns when the two scans have no digest in common: content is then not
 * compared.
 */
static void warn_digests(const struct fidx_scan_row *old, const struct fidx_scan_row *new)
{
	unsigned a, b;
	if (fidx_scan_row_digests(old, &a) == 0 && fidx_scan_row_digests(new, &b) == 0 &&
	    !(a & b) && (a | b) != 0)
		fidx_warn("scans %lld and %lld have no digest in common: content is not compared"
			  " (shown as '?')", (long long)old->id, (long long)new->id);
}

int cmd_diff(int argc, char **argv, const struct fidx_command *cmd)
{
	struct fidx_query_args qa = {.every_scan = true, .raw = true};
	struct fidx_diff_print_opts po = {0};
	const struct fidx_scan_row *old = NULL, *new = NULL;
	struct fidx_query *q = NULL;
	struct fidx_diff *d = NULL;
	struct fidx_error err;
	unsigned attrs = FIDX_DIFF_DEFAULT, ignore = 0;
	bool atime = false, quiet = false;
	struct scan_spec specs[2];
	int nids = 0, status = FIDX_DIFF_EXIT_USAGE;
	struct fidx_option options[] = {
		FIDX_OPT_STRING(0, "db", "DB", &qa.db,
				"the database: a SQLite file or a PostgreSQL URI or conninfo (default"
				" $FIDX_DB, else ./fidx.db), as the first argument may name it"),
		FIDX_OPT_HOST(&qa),
		FIDX_OPT_OUTPUT(&qa),
		FIDX_OPT_DIFF(&po.verbose, &ignore, &atime),
		FIDX_OPT_FLAG('q', "quiet", &quiet, "no counts on stderr"),
		FIDX_OPT_END,
	};

	(void)cmd;
	int first = fidx_parse_options(argc, argv, options, &diff_help);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 0 : FIDX_DIFF_EXIT_USAGE;
	/* A first argument that is neither a number nor HOST:PATH is the database. */
	if (first < argc && strspn(argv[first], "0123456789") != strlen(argv[first]) &&
	    !is_host_path(argv[first]) && !qa.db)
		qa.db = argv[first++];
	for (; first < argc; first++) {
		if (nids == 2) {
			fidx_error("unexpected argument '%s' (see 'fidx diff --help')",
				   fidx_quote(argv[first]));
			return FIDX_DIFF_EXIT_USAGE;
		}
		if (parse_spec(argv[first], &specs[nids++]) < 0)
			return FIDX_DIFF_EXIT_USAGE;
	}
	if (atime)
		attrs |= 1u << FIDX_DIFF_ATIME;
	attrs &= ~ignore;
	po.json = qa.json;
	po.nul = qa.nul;

	if (!(q = fidx_query_open(&qa, &err)))
		return fidx_diff_open_status(&err);
	const char *under[2];
	if ((status = choose(q, specs, nids, &old, &new, under)) != 0)
		goto out;
	status = FIDX_DIFF_EXIT_READ;
	/* The two scans' rows, not every scan's (diff selects them all). */
	if (old->damage || new->damage) {
		fidx_query_damaged(q, old->damage ? old->damage : new->damage);
		goto out;
	}
	if (attrs >> FIDX_DIFF_CONTENT & 1)
		warn_digests(old, new);
	struct fidx_diff_side so = {q->st, old, under[0]}, sn = {q->st, new, under[1]};
	if (!(d = fidx_diff_compare(&so, &sn, attrs, &err))) {
		fidx_query_fail(q, &err);
		goto out;
	}
	fidx_out_begin();
	if (fidx_diff_print(d, &so, &sn, &po, stdout, &err) < 0) {
		fidx_out_end();
		fidx_query_fail(q, &err);
		goto out;
	}
	if (fidx_out_end() < 0) {
		status = FIDX_DIFF_EXIT_WRITE;
		goto out;
	}
	if (!quiet) {
		char counts[128];
		fprintf(stderr, "scan %lld -> scan %lld: %s\n", (long long)old->id, (long long)new->id,
			fidx_diff_counts(d, counts));
	}
	status = fidx_diff_status(d);
out:
	fidx_diff_free(d);
	if (fidx_query_close(q) < 0)
		status = FIDX_DIFF_EXIT_READ;
	return status;
}
