/*
 * report.c - `fidx report`: one self-contained HTML file that shows a scan:
 * where the space went (a zoomable treemap), the largest files, the
 * duplicates by reclaimable bytes, types and extensions, a timeline of
 * modification times, the errors, and what changed since an earlier scan.
 *
 * The file is a page of our own (src/tool/report/: report.css, report.js,
 * put into the binary at build time by report_assets.S) and the data, one
 * JSON object in a <script type="application/json"> element:
 *
 *     scan ──► tree.h (every entry, subtree sums) ──► treemap nodes: best
 *       │        first from the top, the largest first, up to --nodes; what
 *       │        is left of a directory becomes one "N more entries" node
 *       ├──► largest files, types, extensions, mtime timeline (the tree)
 *       ├──► dupes.h over this scan alone (what `fidx dupes --scan ID` finds)
 *       ├──► rows with an error (the store's with_error filter)
 *       └──► diff.h against the previous complete scan of its root (--against)
 *
 * Why no charting library: the page needs a squarified treemap, bars and a
 * few tables, ~400 lines of plain JavaScript; a library (d3-hierarchy's
 * treemap is the candidate) would add a build step on npm to every build of
 * a C tool and code to review in a file that must open offline on an
 * evidence machine, for about the same number of lines.
 *
 * Hostile names: the page never puts data into markup.  Every name reaches
 * the page as a JSON string (json_text(): '<', '>' and '&' escaped, so no
 * "</script>" can end the element; U+2028/U+2029 escaped; a byte that is not
 * UTF-8 as the lone surrogate U+DC00+byte, Python's "surrogateescape", so
 * that the page can show it as \xNN and no two names look alike), and the
 * script writes it with textContent only.  A Content-Security-Policy of
 * default-src 'none' keeps the page from loading anything: it works
 * offline, and nothing in it can reach the network.
 *
 * A new or regular file is written next to its name and renamed into place
 * when whole; a device, FIFO or symlink is written to in place (a rename
 * would replace /dev/null itself).
 */
#include "builtin.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "diff.h"
#include "dupes.h"
#include "intern.h"
#include "options.h"
#include "query.h"
#include "record.h"
#include "signals.h"
#include "space.h"
#include "sysinfo.h"
#include "tree.h"
#include "utf8.h"

/* The page, put into the binary by report_assets.S (NUL-terminated). */
extern const char fidx_report_css[], fidx_report_js[];

/* What `fidx report --help` says around its options. */
static const struct fidx_help report_help = {
	.command = "report",
	.text = "usage: fidx report [OPTIONS] [DB] [PATH]\n\n"
		"Writes one self-contained HTML file that shows a scan: a zoomable treemap of\n"
		"the space by directory (apparent and allocated), the largest files, the\n"
		"duplicate groups by reclaimable bytes, types and extensions, a timeline of\n"
		"modification times, the entries recorded with an error, and what changed\n"
		"since the previous complete scan of the same root.  The file needs no\n"
		"network and loads nothing (no fonts, no scripts from elsewhere).\n\n"
		"The scan: the selected one (--scan ID), or the newest complete scan whose\n"
		"root holds PATH; PATH (absolute, or taken from the working directory) narrows\n"
		"the treemap and the lists to its tree.  Sizes count as 'fidx du' counts them\n"
		"(hard links once per directory); duplicates are those 'fidx dupes --scan ID'\n"
		"finds in the whole scan (files whose digests were not recorded are read).\n\n",
	.footer = "\nExit status: 0 written, 2 usage or fatal error (nothing is left at FILE).\n",
};

/* Defaults of the counts. */
enum { DEFAULT_NODES = 20000, DEFAULT_TOP = 100, MAX_ERRORS = 1000, MAX_EXTS = 40,
       MAX_CHANGES = 1000 };

/* One `fidx report` run. */
struct report {
	const char *output;        /* -o */
	const char *against;       /* --against ID|none */
	bool no_dupes;             /* --no-dupes */
	unsigned nodes;            /* --nodes */
	unsigned top;              /* --top */
	struct fidx_dupes_opts dupes;

	struct fidx_query *q;
	size_t k;                  /* the scan drawn: q->ids[k] */
	const char *base;          /* its tree shown: PATH or its root */
	struct fidx_tree *t;
	FILE *out;
};

/* Takes the argument of --nodes into *(unsigned *)v.  Returns 0, or -1 after printing why. */
static int nodes_arg(const char *arg, void *v)
{
	return fidx_space_parse_count("--nodes", arg, v);
}

/* Takes the argument of --top into *(unsigned *)v.  Returns 0, or -1 after printing why. */
static int top_arg(const char *arg, void *v)
{
	return fidx_space_parse_count("--top", arg, v);
}

/*
 * Writes s as a JSON string safe inside a <script> element (the header's
 * rules): quotes, backslash, controls, '<' '>' '&', U+2028/9 escaped; a byte
 * that is not UTF-8 as \udcXX.
 */
static void json_text(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	putc('"', out);
	while (*p) {
		size_t n = fidx_utf8_seq_len(p);
		if (n == 0) {
			fprintf(out, "\\udc%02x", *p++);
			continue;
		}
		if (n > 1) {
			uint32_t c = n == 2 ? (p[0] & 0x1fu) << 6 | (p[1] & 0x3fu)
				   : n == 3 ? (p[0] & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu)
					    : 0;
			if (n == 2 && c < 0xa0)
				fprintf(out, "\\u%04" PRIx32, c);  /* C1 controls */
			else if (c == 0x2028 || c == 0x2029)
				fprintf(out, "\\u%04" PRIx32, c);
			else
				fwrite(p, 1, n, out);
			p += n;
			continue;
		}
		unsigned char c = *p++;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&')
			fprintf(out, "\\u%04x", c);
		else
			putc(c, out);
	}
	putc('"', out);
}

/* Writes a time in seconds as a JSON number, null when unknown. */
static void json_time(FILE *out, int64_t sec)
{
	if (sec == INT64_MIN)
		fputs("null", out);
	else
		fprintf(out, "%" PRId64, sec);
}

/*
 * A treemap candidate: a node waiting to be written, by weight(), then by
 * where its parent was written and by name: an order that does not depend
 * on the order the store gave the rows in.
 */
struct cand {
	double weight;
	int64_t parent_at;
	const char *name;
	uint32_t node;
};

/* Whether candidate a goes before b. */
static bool cand_before(const struct cand *a, const struct cand *b)
{
	if (a->weight != b->weight)
		return a->weight > b->weight;
	if (a->parent_at != b->parent_at)
		return a->parent_at < b->parent_at;
	return strcmp(a->name, b->name) < 0;
}

/* Max-heap of candidates. */
struct heap {
	struct cand *c;
	size_t n, cap;
};

/* Adds c to the heap.  Returns 0, or -1 (ENOMEM). */
static int heap_push(struct heap *h, struct cand c)
{
	if (h->n == h->cap) {
		size_t ncap = h->cap ? 2 * h->cap : 1024;
		struct cand *n = realloc(h->c, ncap * sizeof(*n));
		if (!n)
			return -1;
		h->c = n;
		h->cap = ncap;
	}
	size_t i = h->n++;
	while (i > 0 && cand_before(&c, &h->c[(i - 1) / 2])) {
		h->c[i] = h->c[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->c[i] = c;
	return 0;
}

/* Removes and returns the heaviest candidate (the heap must not be empty). */
static struct cand heap_pop(struct heap *h)
{
	struct cand top = h->c[0], last = h->c[--h->n];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, big = i;
		struct cand *at = &last;
		if (l < h->n && cand_before(&h->c[l], at))
			big = l, at = &h->c[l];
		if (l + 1 < h->n && cand_before(&h->c[l + 1], at))
			big = l + 1;
		if (big == i)
			break;
		h->c[i] = h->c[big];
		i = big;
	}
	if (h->n)
		h->c[i] = last;
	return top;
}

/* The share of the top's sizes that node v holds (the larger of apparent and allocated). */
static double weight(const struct fidx_tree *t, const struct fidx_tree_node *v)
{
	const struct fidx_tree_node *top = &t->nodes[t->top];
	double a = top->apparent ? (double)v->apparent / (double)top->apparent : 0;
	double b = top->allocated ? (double)v->allocated / (double)top->allocated : 0;
	double e = (double)v->entries / (double)top->entries;
	return (a > b ? a : b) + e * 1e-3;  /* entries break ties among empty files */
}

/* Writes one treemap node: [parent, name, type, apparent, allocated, entries, errors, latest, flags]. */
static void put_node(FILE *out, bool *first, int64_t parent, const char *name, char type,
		     const struct fidx_tree_node *v, uint64_t more)
{
	fputs(*first ? "\n[" : ",\n[", out);
	*first = false;
	fprintf(out, "%" PRId64 ",", parent);
	json_text(out, name);
	fprintf(out, ",\"%c\",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", type ? type : '?',
		v->apparent, v->allocated, v->entries, v->errors);
	json_time(out, v->latest);
	fprintf(out, ",%u,%" PRIu64 "]", v->flags, more);
}

/*
 * Writes "tree": the nodes of the treemap, chosen best first over the whole
 * tree until --nodes are written: every entry waits in one heap by its
 * share of the top's size, the heaviest is written next (its parent always
 * came before it: a child is never heavier), and when it is a directory its
 * children join the heap.  Entries too small to see (under a quarter of a
 * node's share of the budget) are not written one by one.  A directory
 * whose children are not all written gets one more node after the others
 * (type '+', its last field the number of entries it stands for) that sums
 * the rest; a slot is kept for it when the directory is opened, so that
 * never more than --nodes are written in all.  Returns 0, or -1 (ENOMEM).
 */
static int put_tree(struct report *r)
{
	const struct fidx_tree *t = r->t;
	FILE *out = r->out;
	struct heap h = {0};
	int64_t written = 0, reserved = 0, budget = r->nodes ? r->nodes : 1;
	bool first = true;
	int ret = -1;
	double least = 0.25 / (double)budget;
	/* Per tree node: its index among the nodes written (-1: not written), and for an
	 * opened directory the children not written yet. */
	int64_t *at = malloc((size_t)t->nnodes * sizeof(*at));
	uint32_t *left = calloc(t->nnodes, sizeof(*left));
	/* The nodes written, in order: no more than the budget, nor than the tree has. */
	uint32_t *order = malloc((size_t)(budget < t->nnodes ? budget : t->nnodes) * sizeof(*order));

	fputs("\"tree\":[", out);
	if (!at || !left || !order)
		goto out;
	for (uint32_t i = 0; i < t->nnodes; i++)
		at[i] = -1;
	uint32_t v = t->top;
	for (;;) {
		/* Write v, and open it when it has children and a slot is left for its rest. */
		const struct fidx_tree_node *n = &t->nodes[v];
		uint32_t p = n->parent;
		bool freed = v != t->top && left[p] == 1;
		put_node(out, &first, v == t->top ? -1 : at[p], n->name, n->type, n, 0);
		order[written] = v;
		at[v] = written++;
		if (v != t->top) {
			left[p]--;
			reserved -= freed;
		}
		if (n->nkids && written + reserved + 1 <= budget) {
			left[v] = n->nkids;
			reserved++;
			for (uint32_t c = 0; c < n->nkids; c++) {
				uint32_t k = t->kids[n->kids + c];
				struct cand c = {weight(t, &t->nodes[k]), at[v], t->nodes[k].name, k};
				if (heap_push(&h, c) < 0)
					goto out;
			}
		}
		/* The next: the heaviest waiting, when it is large enough and fits. */
		if (!h.n)
			break;
		struct cand c = heap_pop(&h);
		uint32_t cp = t->nodes[c.node].parent;
		if (c.weight < least || written + 1 + reserved - (left[cp] == 1) > budget)
			break;
		v = c.node;
	}
	/* The rest of each directory opened whose children were not all written. */
	for (int64_t o = 0; o < written; o++) {
		uint32_t d = order[o];
		if (!left[d])
			continue;
		const struct fidx_tree_node *n = &t->nodes[d];
		struct fidx_tree_node rest = {.latest = INT64_MIN};
		for (uint32_t c = 0; c < n->nkids; c++) {
			const struct fidx_tree_node *k = &t->nodes[t->kids[n->kids + c]];
			if (at[t->kids[n->kids + c]] >= 0)
				continue;
			if (!(k->flags & FIDX_TREE_LINK)) {
				rest.apparent += k->apparent;
				rest.allocated += k->allocated;
			}
			rest.entries += k->entries;
			rest.errors += k->errors;
			if (k->latest > rest.latest)
				rest.latest = k->latest;
		}
		put_node(out, &first, at[d], "", '+', &rest, left[d]);
	}
	ret = 0;
out:
	fputs("]", out);
	free(h.c);
	free(at);
	free(left);
	free(order);
	return ret;
}

/* Writes one entry of a list: [path, type, apparent, allocated, mtime, flags]. */
static int put_entry(FILE *out, const struct fidx_tree *t, uint32_t i, bool first)
{
	const struct fidx_tree_node *v = &t->nodes[i];
	char *path = fidx_tree_path(t, i);
	if (!path)
		return -1;
	fputs(first ? "\n[" : ",\n[", out);
	json_text(out, path);
	fprintf(out, ",\"%c\",%" PRIu64 ",%" PRIu64 ",", v->type ? v->type : '?', v->apparent,
		v->allocated);
	json_time(out, v->mtime);
	fprintf(out, ",%u]", v->flags);
	free(path);
	return 0;
}

/* A year or month of the timeline, and an extension's sums. */
struct tally {
	int64_t key;
	uint64_t count, bytes;
};

/* qsort() order of tallies: by key. */
static int tally_key_cmp(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

/* qsort() order of tallies: the most bytes first, then the most files. */
static int tally_bytes_cmp(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return (x->count < y->count) - (x->count > y->count);
}

/*
 * Adds a file of bytes to the tally of key in *tab (interned by in), whose
 * sort key is k (-1: the key's index in in).  Returns 0, or -1 (ENOMEM).
 */
static int tally_add(struct fidx_intern *in, struct tally **tab, size_t *cap, const void *key,
		     size_t len, int64_t k, uint64_t bytes)
{
	int added;
	int64_t i = fidx_intern_add(in, key, len, &added);
	if (i < 0)
		return -1;
	if ((size_t)i >= *cap) {
		size_t ncap = *cap ? 2 * *cap : 256;
		struct tally *n = realloc(*tab, ncap * sizeof(*n));
		if (!n)
			return -1;
		*tab = n;
		*cap = ncap;
	}
	if (added)
		(*tab)[i] = (struct tally){.key = k < 0 ? i : k};
	(*tab)[i].count++;
	(*tab)[i].bytes += bytes;
	return 0;
}

/* Month index (year * 12 + month - 1) of a time, false when gmtime cannot say. */
static bool month_of(int64_t sec, int64_t *month)
{
	time_t tt = (time_t)sec;
	struct tm tm;
	if ((int64_t)tt != sec || !gmtime_r(&tt, &tm))
		return false;
	*month = ((int64_t)tm.tm_year + 1900) * 12 + tm.tm_mon;
	return true;
}

/*
 * Whether file a comes before file b among the largest: larger, or as large
 * and first by name, then by path (the same in every store, whatever order
 * it gave the rows in).  Sets *nomem when a path could not be made (the
 * answer is then no order to write: the caller fails).
 */
static bool larger(const struct fidx_tree *t, uint32_t a, uint32_t b, bool *nomem)
{
	const struct fidx_tree_node *x = &t->nodes[a], *y = &t->nodes[b];
	if (x->apparent != y->apparent)
		return x->apparent > y->apparent;
	int c = strcmp(x->name, y->name);
	if (c)
		return c < 0;
	char *pa = fidx_tree_path(t, a), *pb = fidx_tree_path(t, b);
	if (!pa || !pb)
		*nomem = true;
	c = pa && pb ? strcmp(pa, pb) : 0;
	free(pa);
	free(pb);
	return c ? c < 0 : a < b;
}

/*
 * Writes "largest", "types", "exts" and "timeline", in one pass over the
 * tree's nodes at and below the top.  Returns 0, or -1 (ENOMEM).
 */
static int put_tallies(struct report *r)
{
	const struct fidx_tree *t = r->t;
	FILE *out = r->out;
	struct {
		uint64_t count, apparent, allocated;
	} types[128] = {0};
	struct fidx_intern *exts = fidx_intern_new(), *months = fidx_intern_new();
	struct tally *ext = NULL, *month = NULL;
	size_t ext_cap = 0, month_cap = 0;
	uint32_t *top = calloc(r->top ? r->top : 1, sizeof(*top));
	size_t ntop = 0;
	uint64_t undated = 0, undated_bytes = 0;
	bool nomem = false;  /* a path of the largest files' order could not be made */
	int ret = -1;

	if (!exts || !months || !top)
		goto out;
	/* The nodes below the top are those reached from it: walk them with a stack. */
	uint32_t *stack = malloc((size_t)t->nnodes * sizeof(*stack));
	size_t sp = 0;
	if (!stack)
		goto out;
	stack[sp++] = t->top;
	while (sp) {
		uint32_t i = stack[--sp];
		const struct fidx_tree_node *v = &t->nodes[i];
		for (uint32_t c = 0; c < v->nkids; c++)
			stack[sp++] = t->kids[v->kids + c];
		if (v->flags & FIDX_TREE_NO_ROW)
			continue;
		unsigned char ty = (unsigned char)(v->type ? v->type : '?') & 127;
		types[ty].count++;
		if (v->type != 'd') {  /* every name counts, as in fidx stats */
			types[ty].apparent += v->apparent;
			types[ty].allocated += v->allocated;
		}
		if (i == t->top && v->type == 'd') {  /* directories: their own sizes */
			types['d'].apparent = t->dir_apparent;
			types['d'].allocated = t->dir_allocated;
		}
		if (v->type != 'f' || (v->flags & FIDX_TREE_NO_SIZE))
			continue;
		/* The largest files: a sorted array of r->top, the smallest last. */
		if (r->top && (ntop < r->top || larger(t, i, top[ntop - 1], &nomem))) {
			size_t at = ntop < r->top ? ntop++ : ntop - 1;
			while (at > 0 && larger(t, i, top[at - 1], &nomem)) {
				top[at] = top[at - 1];
				at--;
			}
			top[at] = i;
		}
		if (nomem)
			goto fail;
		size_t len = strlen(v->name), off = fidx_ext_offset(v->name, 0, len);
		if (tally_add(exts, &ext, &ext_cap, v->name + off, len - off, -1, v->apparent) < 0)
			goto fail;
		int64_t m;
		if (v->mtime != INT64_MIN && month_of(v->mtime, &m)) {
			if (tally_add(months, &month, &month_cap, &m, sizeof(m), m, v->apparent) < 0)
				goto fail;
		} else {
			undated++;
			undated_bytes += v->apparent;
		}
	}
	free(stack);
	stack = NULL;

	fputs(",\"largest\":[", out);
	for (size_t i = 0; i < ntop; i++)
		if (put_entry(out, t, top[i], i == 0) < 0)
			goto out;
	fputs("],\"types\":[", out);
	bool first = true;
	for (int c = 0; c < 128; c++) {
		if (!types[c].count)
			continue;
		fprintf(out, "%s[\"%c\",", first ? "" : ",", c);
		json_text(out, fidx_type_name((char)c) ? fidx_type_name((char)c) : "unknown");
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", types[c].count,
			types[c].apparent, types[c].allocated);
		first = false;
	}
	size_t next = fidx_intern_count(exts);
	if (next)
		qsort(ext, next, sizeof(*ext), tally_bytes_cmp);
	fputs("],\"exts\":[", out);
	for (size_t i = 0; i < next; i++) {
		if (i == MAX_EXTS) {
			uint64_t count = 0, bytes = 0;
			for (size_t j = i; j < next; j++)
				count += ext[j].count, bytes += ext[j].bytes;
			fprintf(out, ",[null,%" PRIu64 ",%" PRIu64 ",%zu]", count, bytes, next - i);
			break;
		}
		/* The extension is the interned key: find it again by the tally's index. */
		fputs(i ? ",[" : "[", out);
		json_text(out, fidx_intern_key(exts, ext[i].key, NULL));
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",1]", ext[i].count, ext[i].bytes);
	}
	size_t nmonth = fidx_intern_count(months);
	if (nmonth)
		qsort(month, nmonth, sizeof(*month), tally_key_cmp);
	fputs("],\"timeline\":{\"months\":[", out);
	for (size_t i = 0; i < nmonth; i++)
		fprintf(out, "%s[%" PRId64 ",%" PRIu64 ",%" PRIu64 "]", i ? "," : "",
			month[i].key, month[i].count, month[i].bytes);
	fprintf(out, "],\"undated\":[%" PRIu64 ",%" PRIu64 "]}", undated, undated_bytes);
	ret = 0;
	goto out;
fail:
	free(stack);
out:
	fidx_intern_free(exts);
	fidx_intern_free(months);
	free(ext);
	free(month);
	free(top);
	return ret;
}

/*
 * Writes "errors": the rows at and below the base that hold an error (the
 * first MAX_ERRORS by path, and their number).  Returns 0, or -1 after
 * printing why.
 */
static int put_errors(struct report *r)
{
	const struct fidx_query *q = r->q;
	struct fidx_rows_query rq;
	struct fidx_error err;
	const struct fidx_row *row;
	uint64_t n = 0;
	int rc;

	if (r->t->nodes[r->t->top].errors == 0) {  /* the tree counted none: nothing to read */
		fputs(",\"errors\":{\"list\":[],\"total\":0}", r->out);
		return 0;
	}
	fidx_query_rows(q, FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_ERROR),
			FIDX_ROWS_PATH, &rq);
	rq.scans = &q->ids[r->k];
	rq.roots = &q->roots[r->k];
	rq.nscans = 1;
	rq.under = r->base;
	rq.with_error = true;
	rq.hidden = NULL;
	rq.nhidden = 0;
	struct fidx_rows *it = fidx_store_rows(q->st, &rq, &err);
	if (!it)
		return fidx_query_fail(q, &err), -1;
	fputs(",\"errors\":{\"list\":[", r->out);
	while ((rc = fidx_rows_next(it, &row, &err)) == 1) {
		if (n++ >= MAX_ERRORS)
			continue;
		fputs(n > 1 ? ",\n[" : "\n[", r->out);
		json_text(r->out, fidx_row_text(row, FIDX_COL_PATH));
		putc(',', r->out);
		json_text(r->out, fidx_row_has(row, FIDX_COL_ERROR)
					  ? fidx_row_text(row, FIDX_COL_ERROR) : "");
		putc(']', r->out);
	}
	fidx_rows_close(it);
	if (rc < 0)
		return fidx_query_fail(q, &err), -1;
	fprintf(r->out, "],\"total\":%" PRIu64 "}", n);
	return 0;
}

/*
 * Writes "dupes": what `fidx dupes --scan ID` finds in the scan drawn (null
 * with --no-dupes): totals, the first --top groups, the files left out.
 * Returns 0, or -1 after printing why.
 */
static int put_dupes(struct report *r)
{
	const struct fidx_query *q = r->q;
	struct fidx_selection sel = {0};
	struct fidx_error err;
	struct fidx_dupes *d = NULL;
	FILE *out = r->out;

	if (r->no_dupes) {
		fputs(",\"dupes\":null", out);
		return 0;
	}
	if (fidx_select_ids(&q->all, &q->ids[r->k], 1, q->path, &sel, &err) < 0 ||
	    !(d = fidx_dupes_find(q->st, &sel, &r->dupes, &err))) {
		fidx_selection_free(&sel);
		return fidx_query_fail(q, &err), -1;
	}
	fidx_selection_free(&sel);
	if (d->interrupted) {
		fidx_dupes_free(d);
		fidx_error("interrupted while finding duplicates: no report written");
		return -1;
	}
	fprintf(out, ",\"dupes\":{\"groups\":%zu,\"files\":%" PRIu64 ",\"waste\":%" PRIu64
		     ",\"left_out\":%" PRIu64 ",\"list\":[", d->ngroups, d->files, d->waste,
		d->left_out);
	for (size_t g = 0; g < d->ngroups && g < r->top; g++) {
		const struct fidx_dupes_group *grp = &d->groups[g];
		fprintf(out, "%s\n[%" PRIu64 ",%" PRIu64 ",[", g ? "," : "", grp->size, grp->waste);
		for (size_t f = 0; f < grp->nfiles; f++) {
			fputs(f ? ",[" : "[", out);
			for (size_t p = 0; p < grp->files[f].npaths; p++) {
				if (p)
					putc(',', out);
				json_text(out, grp->files[f].paths[p]);
			}
			putc(']', out);
		}
		fputs("]]", out);
	}
	fputs("],\"left\":[", out);
	for (size_t i = 0; d->left && i < d->left_out && i < MAX_ERRORS; i++) {
		fputs(i ? ",\n[" : "\n[", out);
		json_text(out, d->left[i].path);
		putc(',', out);
		json_text(out, d->left[i].error);
		putc(']', out);
	}
	fputs("]}", out);
	fidx_dupes_free(d);
	return 0;
}

/*
 * The scan to compare with: --against ID, or the newest complete scan of
 * the same root and host before the one drawn; NULL for none (--against
 * none, or no earlier scan).  Sets *bad after printing why --against is wrong.
 */
static const struct fidx_scan_row *against_scan(const struct report *r, bool *bad)
{
	const struct fidx_query *q = r->q;
	const struct fidx_scan_row *drawn = &q->sel.scans.rows[r->k];
	*bad = false;
	if (r->against && strcmp(r->against, "none") == 0)
		return NULL;
	if (r->against) {
		char *end;
		errno = 0;
		long long id = strtoll(r->against, &end, 10);
		for (size_t i = 0; !errno && *end == '\0' && end != r->against && i < q->all.n; i++)
			if (q->all.rows[i].id == id)
				return &q->all.rows[i];
		fidx_error("invalid --against '%s': no such scan in database '%s' (a scan id, or"
			   " none)", fidx_quote(r->against), fidx_quote(q->path));
		*bad = true;
		return NULL;
	}
	for (size_t i = q->all.n; i-- > 0;) {
		const struct fidx_scan_row *s = &q->all.rows[i];
		if (s->id < drawn->id && s->status && strcmp(s->status, "complete") == 0 &&
		    s->root_text && fidx_scan_row_of_root(s, drawn->root) &&
		    (s->host == drawn->host ||
		     (s->host && drawn->host && strcmp(s->host, drawn->host) == 0)))
			return s;
	}
	return NULL;
}

/*
 * Writes "diff": the differences from the scan against_scan() chooses to
 * the one drawn (null when none): counts, and the first MAX_CHANGES.
 * Returns 0, or -1 after printing why.
 */
static int put_diff(struct report *r)
{
	const struct fidx_query *q = r->q;
	struct fidx_error err;
	bool bad;
	const struct fidx_scan_row *old = against_scan(r, &bad);
	if (bad)
		return -1;
	if (!old) {
		fputs(",\"diff\":null", r->out);
		return 0;
	}
	/* PATH narrows the comparison to its tree, in both scans (of one root). */
	const char *under = strcmp(r->base, q->roots[r->k]) == 0 ? NULL : r->base;
	struct fidx_diff_side so = {q->st, old, under}, sn = {q->st, &q->sel.scans.rows[r->k], under};
	struct fidx_diff *d = fidx_diff_compare(&so, &sn, FIDX_DIFF_DEFAULT, &err);
	if (!d)
		return fidx_query_fail(q, &err), -1;
	static const char *const kind[FIDX_DIFF_NKINDS] = {"added", "removed", "changed", "moved"};
	fprintf(r->out, ",\"diff\":{\"old\":%" PRId64 ",\"new\":%" PRId64, old->id, sn.scan->id);
	for (int k = 0; k < FIDX_DIFF_NKINDS; k++)
		fprintf(r->out, ",\"%s\":%zu", kind[k], d->count[k]);
	fputs(",\"list\":[", r->out);
	for (size_t i = 0; i < d->n && i < MAX_CHANGES; i++) {
		const struct fidx_diff_entry *e = &d->entries[i];
		char sum[FIDX_DIFF_NATTRS + 1];
		fprintf(r->out, "%s\n[\"%s\",\"%s\",", i ? "," : "", kind[e->kind],
			fidx_diff_summary(e, sum));
		json_text(r->out, e->path);
		putc(',', r->out);
		if (e->old_path)
			json_text(r->out, e->old_path);
		else
			fputs("null", r->out);
		putc(']', r->out);
	}
	fputs("]}", r->out);
	fidx_diff_free(d);
	return 0;
}

/* Writes "scan": the scan drawn, its row's figures, and the path shown. */
static void put_scan(struct report *r)
{
	const struct fidx_scan_row *s = &r->q->sel.scans.rows[r->k];
	FILE *out = r->out;
	fprintf(out, "\"scan\":{\"id\":%" PRId64 ",\"root\":", s->id);
	json_text(out, s->root ? s->root : "");
	fputs(",\"base\":", out);
	json_text(out, r->base);
	fputs(",\"host\":", out);
	json_text(out, s->host ? s->host : "");
	fputs(",\"status\":", out);
	json_text(out, s->status ? s->status : "");
	fputs(",\"hash\":", out);
	json_text(out, s->opt_hash ? s->opt_hash : "");
	fprintf(out, ",\"started\":%" PRId64 ",\"finished\":", s->started_ns / 1000000000);
	if (fidx_scan_has(s, FIDX_SCOL_FINISHED_NS))
		fprintf(out, "%" PRId64, s->finished_ns / 1000000000);
	else
		fputs("null", out);
	fputs(",\"database\":", out);
	json_text(out, r->q->path);
	fprintf(out, ",\"generated\":%lld,\"version\":", (long long)time(NULL));
	json_text(out, FIDX_VERSION);
	fputs("}", out);
}

/* Writes the page: the markup, the CSS, the data, the script.  Returns 0, or -1 after printing why. */
static int put_page(struct report *r)
{
	FILE *out = r->out;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>fidx report</title>\n<style>\n", out);
	fputs(fidx_report_css, out);
	fputs("</style>\n</head>\n<body>\n<noscript>This report draws itself with JavaScript;"
	      " its data is in the element fidx-data, as JSON.</noscript>\n"
	      "<script type=\"application/json\" id=\"fidx-data\">{", out);
	put_scan(r);
	const struct fidx_tree_node *top = &r->t->nodes[r->t->top];
	fprintf(out, ",\"totals\":{\"apparent\":\"%" PRIu64 "\",\"allocated\":\"%" PRIu64
		     "\",\"entries\":\"%" PRIu64 "\",\"errors\":\"%" PRIu64 "\"},",
		top->apparent, top->allocated, top->entries, top->errors);
	if (put_tree(r) < 0 || put_tallies(r) < 0) {
		fidx_error("cannot write the report: out of memory");
		return -1;
	}
	if (put_errors(r) < 0 || put_dupes(r) < 0 || put_diff(r) < 0)
		return -1;
	fputs("}</script>\n<script>\n", out);
	fputs(fidx_report_js, out);
	fputs("</script>\n</body>\n</html>\n", out);
	return 0;
}

/*
 * Opens where the report goes: stdout for "-"; a new file beside output,
 * renamed over it by finish_output(), when output is missing or a regular
 * file of one name (the new file takes its mode and owner); else (a device
 * such as /dev/null or /dev/stdout, a FIFO, a symlink, a file with other
 * hard links) output itself, written in place, since a rename would
 * replace the device, the link or one name instead of writing to it.
 * Returns 0, or -1 after printing why.
 */
static int open_output(struct report *r, char **tmp)
{
	struct stat st;
	*tmp = NULL;
	if (strcmp(r->output, "-") == 0) {
		r->out = stdout;
		return 0;
	}
	bool exists = lstat(r->output, &st) == 0;
	/* A regular file with other names is written in place too: a rename would part them. */
	if (exists && (!S_ISREG(st.st_mode) || st.st_nlink > 1)) {
		if (S_ISDIR(st.st_mode)) {
			fidx_error("cannot write report '%s': Is a directory", fidx_quote(r->output));
			return -1;
		}
		if (!(r->out = fopen(r->output, "we"))) {
			fidx_error("cannot write report '%s': %s", fidx_quote(r->output),
				   strerror(errno));
			return -1;
		}
		return 0;
	}
	/* The new file beside it, by a short name (output's own may be as long as a name can be). */
	const char *slash = strrchr(r->output, '/');
	int dirlen = slash ? (int)(slash - r->output) + 1 : 0;
	if (asprintf(tmp, "%.*s.fidx-report-XXXXXX", dirlen, r->output) < 0) {
		*tmp = NULL;
		fidx_error("out of memory");
		return -1;
	}
	int fd = mkostemp(*tmp, O_CLOEXEC);
	/* The mode of the file it replaces (a private report stays private), or a new file's. */
	mode_t mask = umask(022);
	umask(mask);
	mode_t mode = exists ? st.st_mode & 07777 : 0666 & ~mask;
	if (fd >= 0 && exists && geteuid() == 0 && fchown(fd, st.st_uid, st.st_gid) < 0)
		mode &= 0777;  /* no set-id bits on a file of another owner */
	if (fd < 0 || fchmod(fd, mode) < 0 || !(r->out = fdopen(fd, "w"))) {
		fidx_error("cannot write report '%s': %s", fidx_quote(r->output), strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(*tmp);
		}
		free(*tmp);
		*tmp = NULL;
		return -1;
	}
	return 0;
}

/* Ends the output: flushed, closed, renamed into place (ok), or removed.  Returns 0, or -1 after printing why. */
static int finish_output(struct report *r, char *tmp, bool ok)
{
	if (!r->out)
		return ok ? 0 : -1;
	int err = 0;
	if (fflush(r->out) != 0 || ferror(r->out))
		err = errno ? errno : EIO;
	if (tmp && fsync(fileno(r->out)) < 0 && !err)
		err = errno;
	if (r->out != stdout && fclose(r->out) != 0 && !err)
		err = errno;
	r->out = NULL;
	if (ok && !err && tmp && rename(tmp, r->output) < 0)
		err = errno;
	if (tmp && (!ok || err))
		unlink(tmp);
	free(tmp);
	if (ok && err) {
		fidx_error("cannot write report '%s': %s",
			   fidx_quote(strcmp(r->output, "-") == 0 ? "stdout" : r->output),
			   strerror(err));
		return -1;
	}
	return ok ? 0 : -1;
}

/* fidx report (builtin.h): the options, the scan and its tree, then the page. */
int cmd_report(int argc, char **argv, const struct fidx_command *cmd)
{
	struct fidx_query_args qa = {0};
	struct report r = {
		.output = "report.html",
		.nodes = DEFAULT_NODES,
		.top = DEFAULT_TOP,
		.dupes = {.jobs = fidx_usable_cpus(), .io = FIDX_IO_AUTO, .cancel = &fidx_interrupted},
	};
	struct fidx_option options[] = {
		FIDX_OPT_STRING('o', "output", "FILE", &r.output,
				"where the page goes (default report.html; - for stdout)"),
		FIDX_OPT_STRING(0, "against", "ID", &r.against,
				"the scan whose differences are shown (default: the previous complete"
				" scan of the same root; none for no comparison)"),
		FIDX_OPT_FLAG(0, "no-dupes", &r.no_dupes,
			      "leave duplicates out (nothing is read from the disk)"),
		FIDX_OPT_CALL(0, "nodes", "N", nodes_arg, &r.nodes,
			      "boxes in the treemap at most (default 20000; smaller entries are shown"
			      " together)"),
		FIDX_OPT_CALL(0, "top", "N", top_arg, &r.top,
			      "entries in the lists of largest files and duplicate groups (default"
			      " 100)"),
		FIDX_OPT_CALL('j', "jobs", "N", fidx_jobs_arg, &r.dupes.jobs,
			      "CPUs to read files on when duplicates need reading (default: all)"),
		FIDX_OPT_DB(&qa),
		FIDX_OPT_SCAN(&qa),
		FIDX_OPT_HOST(&qa),
		FIDX_OPT_END,
	};
	char *path = NULL, *tmp = NULL;
	int status = 2;

	(void)cmd;
	int first = fidx_parse_options(argc, argv, options, &report_help);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 0 : 2;
	if (fidx_query_db_path_args(argc, argv, first, "report", &qa, &path) < 0)
		return 2;
	unsigned long limit;
	r.dupes.jobs = fidx_jobs_fit(r.dupes.jobs, &limit);
	fidx_catch_signals();

	if (!(r.q = fidx_query_open(&qa, NULL)) || fidx_space_check_scans(r.q) < 0)
		goto out;
	int64_t k = fidx_tree_pick_scan(r.q, path);
	if (k < 0)
		goto out;
	r.k = (size_t)k;
	r.base = path ? path : r.q->roots[k];
	if (!(r.t = fidx_tree_load(r.q, r.k, r.base)) || open_output(&r, &tmp) < 0)
		goto out;
	int written = put_page(&r);
	if (finish_output(&r, tmp, written == 0) == 0)
		status = 0;
	tmp = NULL;
out:
	fidx_tree_free(r.t);
	if (fidx_query_close(r.q) < 0)
		status = 2;
	free(path);
	return status;
}
