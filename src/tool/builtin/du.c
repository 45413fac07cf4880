/*
 * du.c - `fidx du`: where the space went, per directory, from the database
 * alone (the tree may be gone, or on another machine).
 *
 * What a directory's figures are: what `du -s --apparent-size -B1 DIR` and
 * `du -s -B1 DIR` report for it alone.  Every entry below it counts (the
 * directory itself, subdirectories, files, symlinks with their own size,
 * FIFOs and devices with theirs); an entry fidx could not stat has no sizes
 * and counts nothing (du skips it too, with a message); a file with several
 * hard links counts once per directory that holds one of its names, even
 * when sibling directories share it (du -d N, which walks once, gives it to
 * whichever sibling it met first; du -s of each sibling counts it in both).
 *
 * The tree is the one the selection shows (select.h): when a newer selected
 * scan's root lies in this scan's tree, the store leaves this scan's rows
 * there out (fidx_rows_query.hidden) and that scan's rows are summed
 * instead, in this scan's block; that scan gets no block of its own.
 *
 * How: one streaming pass over the store's rows of the scan at and below
 * PATH (fidx_rows_query.under), in whatever order the store gives them
 * (FIDX_ROWS_ANY: for the whole of a scan, PATH its root, the store may read
 * its table in one pass rather than an index range).  Each row is summed
 * into one *node*, the directory it counts for at the depth shown:
 *
 *     depth D = 1, PATH /P:    row /P/a/b/c/f  ──► node /P/a   (cut at D)
 *                              row /P/a        ──► node /P/a   (itself)
 *                              row /P/f        ──► node /P     (a file: its directory)
 *
 * Nodes are interned by path (intern.h); rows are never kept, so memory
 * grows with the directories shown, not with the tree.  After the pass each
 * node's sums are added to its parent's, deepest level first.  The order of
 * the rows does not matter, which is as well: neither path order ('/a-b'
 * sorts between '/a' and '/a/x') nor the order the scan wrote them (the
 * walk's) keeps a subtree together.
 *
 * Hard links: a non-directory with nlink > 1 has its (dev, ino) interned;
 * its first name's node sums it like any row.  A name met later at another
 * node is put aside, and after the sums are propagated the inode's sizes are
 * added to every node on the chains from those names up to PATH that no
 * earlier chain of the same inode covered (the union of the chains: each
 * node counted once, marked with a stamp per inode).
 */
#include "builtin.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "color.h"
#include "diag.h"
#include "intern.h"
#include "json.h"
#include "options.h"
#include "output.h"
#include "query.h"
#include "select.h"
#include "space.h"
#include "store.h"

/* What `fidx du --help` says around its options. */
static const struct fidx_help du_help = {
	.command = "du",
	.text = "usage: fidx du [OPTIONS] [DB] [PATH]\n\n"
		"Disk usage per directory, from the database: for PATH and each directory\n"
		"down to --depth levels below it, the apparent size (sum of st_size), the\n"
		"allocated size (st_blocks x 512), the entries and the entries recorded with\n"
		"an error below it.  Each line is what 'du -s --apparent-size -B1 DIR' and\n"
		"'du -s -B1 DIR' report for that directory alone: directories, symlinks\n"
		"(their own size) and special files count, a file with several hard links\n"
		"counts once in each directory that holds a name of it, and an entry that\n"
		"could not be stat'ed counts nothing (it is in ERRORS).\n\n"
		"PATH is a path as the scan recorded it (absolute; a relative one is taken\n"
		"from the working directory, '.' and '..' resolved by name, not on the\n"
		"disk).  Without PATH, each selected scan's root.  With several scans, one\n"
		"block per scan that holds PATH, by scan id.\n\n"
		"Output: a header, then per line SCAN APPARENT ALLOCATED ENTRIES ERRORS PATH;\n"
		"with --json one object per line: scan_id, path, depth, apparent, allocated,\n"
		"entries, errors (sizes in bytes).\n\n",
	.footer = "\nExit status: 0 shown, 2 usage or fatal error (also when no selected scan\n"
		  "holds PATH).\n",
};

/* What --sort orders by. */
enum du_sort { SORT_ALLOCATED, SORT_APPARENT, SORT_PATH };

/* Sums over the rows of a node, then (after finish()) of its subtree. */
struct sums {
	uint64_t apparent;   /* st_size */
	uint64_t allocated;  /* st_blocks * 512 */
	uint64_t entries;    /* rows, a directory's own included */
	uint64_t errors;     /* rows with an error */
};

/* A directory shown: PATH or one down to the depth below it. */
struct node {
	int64_t parent;      /* the parent node; -1 for PATH */
	unsigned level;      /* levels below PATH */
	uint64_t stamp;      /* 1 + the last hard-linked inode counted here (finish()) */
	struct sums sum;
};

/* A file with several hard links. */
struct inode {
	int64_t node;        /* the node of its first name */
	uint64_t apparent;   /* its st_size */
	uint64_t allocated;  /* its st_blocks * 512 */
};

/* A later name of a hard-linked file, at another node than its first. */
struct link {
	int64_t inode;       /* index into du.inodes */
	int64_t node;        /* where this name counts */
};

/* One `fidx du` run: the options, and the aggregation of the scan at hand. */
struct du {
	unsigned depth;          /* -d */
	enum du_sort sort;       /* --sort */
	bool exact, json, nul;   /* -b, --json, -0 */

	const char *base;        /* PATH (or the scan's root) */
	size_t baselen;
	char *prefix;            /* base + "/" ("/" when base is "/") */
	size_t start;            /* its length: where a row's path goes on below base */

	struct fidx_intern *names;  /* node paths -> node index */
	struct node *nodes;
	size_t nodes_cap;
	struct fidx_intern *inos;   /* (dev, ino) of hard-linked files -> inode index */
	struct inode *inodes;
	size_t inodes_cap;
	struct link *links;
	size_t nlinks, links_cap;
};

/* Takes the argument of --depth into *(unsigned *)depth.  Returns 0, or -1 after printing why. */
static int depth_arg(const char *arg, void *depth)
{
	return fidx_space_parse_count("--depth", arg, depth);
}

/* Takes the argument of --sort into *(enum du_sort *)sort.  Returns 0, or -1 after printing why. */
static int sort_arg(const char *arg, void *sort)
{
	enum du_sort *s = sort;
	if (strcmp(arg, "allocated") == 0) {
		*s = SORT_ALLOCATED;
	} else if (strcmp(arg, "apparent") == 0) {
		*s = SORT_APPARENT;
	} else if (strcmp(arg, "path") == 0) {
		*s = SORT_PATH;
	} else {
		fidx_error("invalid --sort '%s': expected allocated, apparent or path",
			   fidx_quote(arg));
		return -1;
	}
	return 0;
}

/*
 * Returns arr grown to hold need items of size bytes (updating *cap), or
 * arr itself when it has room; NULL (ENOMEM) when it cannot grow, arr kept.
 */
static void *grow(void *arr, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return arr;
	size_t ncap = *cap ? *cap : 256;
	while (ncap < need)
		ncap *= 2;
	void *n = realloc(arr, ncap * size);
	if (!n) {
		errno = ENOMEM;
		return NULL;
	}
	*cap = ncap;
	return n;
}

/* Returns the node of path[0..len), added at level when new; -1 (ENOMEM) on failure. */
static int64_t node_at(struct du *d, const char *path, size_t len, unsigned level)
{
	int added;
	int64_t i = fidx_intern_add(d->names, path, len, &added);
	if (i < 0 || !added)
		return i;
	struct node *n = grow(d->nodes, &d->nodes_cap, (size_t)i + 1, sizeof(*n));
	if (!n)
		return -1;
	d->nodes = n;
	d->nodes[i] = (struct node){.parent = -1, .level = level};
	return i;
}

/*
 * Returns the length of the prefix of path (len bytes, at or below PATH)
 * that names the row's node, and sets *level to the node's level: the row
 * itself when it is a directory within the depth, else its directory, cut
 * at the depth.
 */
static size_t node_prefix(const struct du *d, const char *path, size_t len, bool dir,
			  unsigned *level)
{
	if (len == d->baselen) {  /* PATH itself */
		*level = 0;
		return len;
	}
	const char *p = path + d->start, *end = path + len, *slash = NULL;
	unsigned n = 0;
	while (n < d->depth) {
		const char *s = memchr(p, '/', (size_t)(end - p));
		if (!s)
			break;
		slash = s;
		p = s + 1;
		n++;
	}
	if (n < d->depth && dir) {  /* a directory n + 1 <= depth levels down */
		*level = n + 1;
		return len;
	}
	*level = n;
	return n ? (size_t)(slash - path) : d->baselen;
}

/* The columns du reads of a row (id and scan_id come too, and name a damaged row). */
#define DU_COLUMNS                                                                             \
	(FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_TYPE) | FIDX_COLUMN(FIDX_COL_SIZE) |  \
	 FIDX_COLUMN(FIDX_COL_BLOCKS) | FIDX_COLUMN(FIDX_COL_NLINK) | FIDX_COLUMN(FIDX_COL_DEV) | \
	 FIDX_COLUMN(FIDX_COL_INO) | FIDX_COLUMN(FIDX_COL_ERROR))

/*
 * Sums the rows the selection shows of selected scan k of q at and below
 * from (d->base, or the root of a newer scan in d->base's tree) into nodes,
 * in one pass over the store's rows; whole says that from is the scan's
 * root (then the rows summed are checked against the scan row's count).  Returns
 * the rows summed, or -1 after printing why.
 */
static int64_t aggregate(struct du *d, const struct fidx_query *q, size_t k, const char *from,
			 bool whole)
{
	struct fidx_rows_query rq;
	struct fidx_error err;
	const struct fidx_row *row;
	int64_t rows = 0, last = -1;
	const char *last_key = NULL;
	size_t last_len = 0;
	int rc;

	fidx_query_rows(q, DU_COLUMNS, FIDX_ROWS_ANY, &rq);
	rq.scans = &q->ids[k];
	rq.roots = &q->roots[k];
	rq.nscans = 1;
	rq.under = from;
	struct fidx_rows *it = fidx_store_rows(q->st, &rq, &err);
	if (!it)
		return fidx_query_fail(q, &err), -1;
	while ((rc = fidx_rows_next(it, &row, &err)) == 1) {
		const char *path = fidx_row_text(row, FIDX_COL_PATH);
		size_t len = fidx_row_len(row, FIDX_COL_PATH);
		/* The store gives rows at or below from; one not below base cannot be placed. */
		if (len == d->baselen ? memcmp(path, d->base, len) != 0
				      : len <= d->start || memcmp(path, d->prefix, d->start) != 0)
			continue;
		bool dir = fidx_row_type(row) == 'd';
		unsigned level;
		size_t klen = node_prefix(d, path, len, dir, &level);
		/* Rows come in runs of one directory: no look-up when the node is the last one. */
		if (last < 0 || klen != last_len || memcmp(path, last_key, klen) != 0) {
			if ((last = node_at(d, path, klen, level)) < 0)
				goto nomem;
			last_key = fidx_intern_key(d->names, last, &last_len);
		}
		struct sums *sum = &d->nodes[last].sum;
		rows++;
		sum->entries++;
		sum->errors += fidx_row_has(row, FIDX_COL_ERROR);
		if (!fidx_row_has(row, FIDX_COL_SIZE))
			continue;  /* not stat'ed: no sizes, as du counts nothing for it */
		uint64_t apparent = fidx_row_u64(row, FIDX_COL_SIZE);
		uint64_t allocated = fidx_row_u64(row, FIDX_COL_BLOCKS) * 512;
		if (!dir && fidx_row_int(row, FIDX_COL_NLINK) > 1) {
			uint64_t key[2] = {fidx_row_u64(row, FIDX_COL_DEV),
					   fidx_row_u64(row, FIDX_COL_INO)};
			int added;
			int64_t i = fidx_intern_add(d->inos, key, sizeof(key), &added);
			if (i < 0)
				goto nomem;
			if (!added) {
				/* Counted at its first node already; another node: see finish(). */
				if (d->inodes[i].node != last) {
					struct link *l = grow(d->links, &d->links_cap,
							      d->nlinks + 1, sizeof(*l));
					if (!l)
						goto nomem;
					d->links = l;
					d->links[d->nlinks++] = (struct link){i, last};
				}
				continue;
			}
			struct inode *f = grow(d->inodes, &d->inodes_cap, (size_t)i + 1,
					       sizeof(*f));
			if (!f)
				goto nomem;
			d->inodes = f;
			d->inodes[i] = (struct inode){last, apparent, allocated};
		}
		sum->apparent += apparent;
		sum->allocated += allocated;
	}
	fidx_rows_close(it);
	if (rc < 0)
		return fidx_query_fail(q, &err), -1;
	if (whole && !fidx_selection_hides(&q->sel, q->ids[k]) && fidx_space_check_count(q, k, rows) < 0)
		return -1;
	return rows;
nomem:
	fidx_rows_close(it);
	fidx_error("out of memory");
	return -1;
}

/* qsort() order of links: by inode. */
static int link_cmp(const void *a, const void *b)
{
	const struct link *x = a, *y = b;
	return (x->inode > y->inode) - (x->inode < y->inode);
}

/*
 * Turns each node's own sums into its subtree's: links every node to its
 * parent (adding the directories between that no row named, as in a scan
 * still running), adds sums upwards deepest level first, then counts each
 * hard-linked file once more in the nodes only its later names reach.
 * Fills order[] with the nodes, deepest first.  Returns the number of
 * nodes, or -1 after printing why.
 */
static int64_t finish(struct du *d, int64_t **order)
{
	unsigned maxlevel = 0;
	*order = NULL;
	for (size_t i = 0; i < fidx_intern_count(d->names); i++) {
		unsigned level = d->nodes[i].level;
		if (level > maxlevel)
			maxlevel = level;
		if (level == 0)
			continue;
		size_t len;
		const char *key = fidx_intern_key(d->names, (int64_t)i, &len);
		const char *up = level == 1 ? key + d->baselen : memrchr(key, '/', len);
		int64_t p = node_at(d, key, (size_t)(up - key), level - 1);
		if (p < 0)
			goto nomem;
		d->nodes[i].parent = p;
	}

	/* Deepest first, by counting the nodes of each level. */
	size_t n = fidx_intern_count(d->names);
	size_t *at = calloc((size_t)maxlevel + 2, sizeof(*at));
	if (!at || !(*order = malloc(n * sizeof(**order)))) {
		free(at);
		goto nomem;
	}
	for (size_t i = 0; i < n; i++)
		at[maxlevel - d->nodes[i].level + 1]++;
	for (unsigned l = 1; l <= maxlevel + 1; l++)
		at[l] += at[l - 1];
	for (size_t i = 0; i < n; i++)
		(*order)[at[maxlevel - d->nodes[i].level]++] = (int64_t)i;
	free(at);
	for (size_t k = 0; k < n; k++) {
		const struct node *c = &d->nodes[(*order)[k]];
		if (c->parent < 0)
			continue;
		struct sums *p = &d->nodes[c->parent].sum;
		p->apparent += c->sum.apparent;
		p->allocated += c->sum.allocated;
		p->entries += c->sum.entries;
		p->errors += c->sum.errors;
	}

	/* Each hard-linked file: once more in every node its later names reach first. */
	if (d->nlinks)  /* (qsort's array must not be NULL, even empty) */
		qsort(d->links, d->nlinks, sizeof(*d->links), link_cmp);
	for (size_t k = 0; k < d->nlinks; k++) {
		const struct inode *f = &d->inodes[d->links[k].inode];
		uint64_t stamp = (uint64_t)d->links[k].inode + 1;
		if (k == 0 || d->links[k - 1].inode != d->links[k].inode)
			for (int64_t v = f->node; v >= 0 && d->nodes[v].stamp != stamp;
			     v = d->nodes[v].parent)
				d->nodes[v].stamp = stamp;
		for (int64_t v = d->links[k].node; v >= 0 && d->nodes[v].stamp != stamp;
		     v = d->nodes[v].parent) {
			d->nodes[v].stamp = stamp;
			d->nodes[v].sum.apparent += f->apparent;
			d->nodes[v].sum.allocated += f->allocated;
		}
	}
	return (int64_t)n;
nomem:
	fidx_error("out of memory");
	return -1;
}

/* qsort_r() order of the lines: by --sort, then by path. */
static int line_cmp(const void *a, const void *b, void *arg)
{
	const struct du *d = arg;
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	const struct sums *sx = &d->nodes[x].sum, *sy = &d->nodes[y].sum;
	uint64_t vx = 0, vy = 0;
	if (d->sort == SORT_ALLOCATED) {
		vx = sx->allocated;
		vy = sy->allocated;
	} else if (d->sort == SORT_APPARENT) {
		vx = sx->apparent;
		vy = sy->apparent;
	}
	if (vx != vy)
		return vx < vy ? 1 : -1;
	return strcmp(fidx_intern_key(d->names, x, NULL), fidx_intern_key(d->names, y, NULL));
}

/* Prints one node as a line of text or a JSON object. */
static void print_node(const struct du *d, int64_t scan, int64_t i)
{
	const struct node *v = &d->nodes[i];
	const char *path = fidx_intern_key(d->names, i, NULL);
	if (d->json) {
		printf("{\"scan_id\":%" PRId64 ",", scan);
		fidx_json_path(stdout, "path", path);
		printf(",\"depth\":%u,\"apparent\":%" PRIu64 ",\"allocated\":%" PRIu64
		       ",\"entries\":%" PRIu64 ",\"errors\":%" PRIu64 "}\n",
		       v->level, v->sum.apparent, v->sum.allocated, v->sum.entries, v->sum.errors);
		return;
	}
	char app[FIDX_SIZE_TEXT], alloc[FIDX_SIZE_TEXT];
	int w = d->exact ? 15 : 10;
	printf("%4" PRId64 "  %*s  %*s  %9" PRIu64 "  %6" PRIu64 "  ", scan, w,
	       fidx_size_text(v->sum.apparent, d->exact, app), w,
	       fidx_size_text(v->sum.allocated, d->exact, alloc), v->sum.entries, v->sum.errors);
	fidx_color_path(path, 'd', 0, d->nul);
}

/* Frees what one scan's aggregation holds and readies d for the next. */
static void reset(struct du *d)
{
	fidx_intern_free(d->names);
	fidx_intern_free(d->inos);
	free(d->nodes);
	free(d->inodes);
	free(d->links);
	free(d->prefix);
	d->prefix = NULL;
	d->names = d->inos = NULL;
	d->nodes = NULL;
	d->inodes = NULL;
	d->links = NULL;
	d->nodes_cap = d->inodes_cap = d->nlinks = d->links_cap = 0;
}

/*
 * Shows base in selected scan k of q (whole: base is the scan's root): sums,
 * sorts and prints its lines, after the header when it is the first block.
 * The rows of the newer selected scans in its tree (a root inside its tree:
 * the selection shows those paths from them, select.h) count too, so that a
 * directory's figures are those of the tree as the selection shows it.
 * Returns 1 when printed, 0 when no row lies at or below base, -1 after
 * printing why it failed.
 */
static int du_scan(struct du *d, const struct fidx_query *q, size_t k, const char *base,
		   bool whole, bool *header)
{
	int64_t scan = q->ids[k];
	int64_t *order = NULL;
	int ret = -1;

	d->base = base;
	d->baselen = strlen(base);
	if (asprintf(&d->prefix, "%s/", d->baselen == 1 ? "" : base) < 0)
		d->prefix = NULL;
	d->start = d->baselen == 1 ? 1 : d->baselen + 1;
	if (!d->prefix || !(d->names = fidx_intern_new()) || !(d->inos = fidx_intern_new())) {
		fidx_error("out of memory");
		goto out;
	}
	int64_t rows = aggregate(d, q, k, base, whole);
	for (size_t h = 0; rows >= 0 && h < q->sel.nhidden; h++) {
		if (q->sel.hidden[h].scan_id != scan)
			continue;
		const char *inner = q->sel.hidden[h].root;
		for (size_t i = 0; rows >= 0 && i < q->nscans; i++) {
			if (strcmp(q->roots[i], inner) != 0 || q->ids[i] == scan)
				continue;
			int64_t more = 0;
			if (fidx_path_in_tree(inner, base))
				more = aggregate(d, q, i, inner, true);
			else if (fidx_path_in_tree(base, inner))
				more = aggregate(d, q, i, base, false);
			rows = more < 0 ? -1 : rows + more;
		}
	}
	if (rows <= 0) {
		ret = rows < 0 ? -1 : 0;
		goto out;
	}
	int64_t n = finish(d, &order);
	if (n < 0)
		goto out;
	qsort_r(order, (size_t)n, sizeof(*order), line_cmp, d);
	if (!*header && !d->json) {
		int w = d->exact ? 15 : 10;
		printf("%4s  %*s  %*s  %9s  %6s  %s\n", "SCAN", w, "APPARENT", w, "ALLOCATED",
		       "ENTRIES", "ERRORS", "PATH");
		*header = true;
	}
	for (int64_t i = 0; i < n; i++)
		print_node(d, scan, order[i]);
	ret = 1;
out:
	free(order);
	reset(d);
	return ret;
}

/* fidx du (builtin.h): the options, PATH, the database, then one block per scan holding PATH. */
int cmd_du(int argc, char **argv, const struct fidx_command *cmd)
{
	struct fidx_query_args qa = {0};
	struct du d = {.depth = 1, .sort = SORT_ALLOCATED};
	struct fidx_option options[] = {
		FIDX_OPT_CALL('d', "depth", "N", depth_arg, &d.depth,
			      "show directories down to N levels below PATH (default 1; 0 shows"
			      " PATH alone, as du -s)"),
		FIDX_OPT_BYTES(&d.exact),
		FIDX_OPT_CALL(0, "sort", "KEY", sort_arg, &d.sort,
			      "allocated (default: largest first), apparent (largest first) or"
			      " path (byte order)"),
		FIDX_OPT_QUERY(&qa),
		FIDX_OPT_COLOR,
		FIDX_OPT_END,
	};
	struct fidx_query *q = NULL;
	char *path = NULL;
	int status = 2;

	(void)cmd;
	int first = fidx_parse_options(argc, argv, options, &du_help);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 0 : 2;
	d.json = qa.json;
	d.nul = qa.nul;
	if (fidx_query_db_path_args(argc, argv, first, "du", &qa, &path) < 0)
		return 2;

	if (!(q = fidx_query_open(&qa, NULL)) || fidx_space_check_scans(q) < 0)
		goto out;
	fidx_out_begin();
	bool header = false;
	int shown = 0;
	for (size_t i = 0; i < q->nscans; i++) {
		const char *root = q->roots[i];
		/* A scan whose root lies in an older one's tree is counted in that one's block. */
		bool nested = false;
		for (size_t h = 0; h < q->sel.nhidden && !nested; h++)
			nested = strcmp(q->sel.hidden[h].root, root) == 0;
		if (nested || (path && !fidx_path_in_tree(path, root)))
			continue;
		int r = du_scan(&d, q, i, path ? path : root, !path || strcmp(path, root) == 0,
				&header);
		if (r < 0)
			goto out;
		shown += r;
	}
	if (path && !shown) {
		fidx_error("no selected scan holds '%s' ('fidx scans' lists the scans and their"
			   " roots)", fidx_quote(path));
		goto out;
	}
	status = 0;
out:
	if (q && fidx_out_end() < 0)
		status = 2;
	if (fidx_query_close(q) < 0)
		status = 2;
	free(path);
	return status;
}
