/*
 * stats.c - `fidx stats`: what a scan holds, in figures.
 *
 * For each selected scan (one report per scan, by id: several roots are
 * never mixed), in one streaming pass over the store's rows of it (those
 * the selection shows, in the store's fastest order, FIDX_ROWS_ANY):
 *
 *     row ──► entries, errors
 *         ──► by type: count, bytes (sum of st_size)
 *         └─► a regular file with a size:
 *               ├─► by extension (intern.h: extension -> index -> sums)
 *               ├─► histogram: bucket 0 holds size 0, bucket k >= 1 sizes
 *               │   2^(k-1) .. 2^k - 1
 *               └─► the N largest, oldest and newest (mtime): three bounded
 *                   heaps whose root is the entry that would leave first
 *
 * A row's path (which the store has checked already) is looked at, and
 * copied, only when its key could enter a heap, so the pass costs a few
 * comparisons per row.  Each name counts: a file with three hard links is
 * three entries and three times its size (fidx du counts it once).
 * Ties in a list are broken by path (byte order), so the lists are a
 * function of the rows alone.
 */
#include "builtin.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "intern.h"
#include "json.h"
#include "options.h"
#include "output.h"
#include "query.h"
#include "space.h"
#include "store.h"
#include "when.h"

/* Entries in each list (largest, oldest, newest) and extensions shown by default. */
#define DEFAULT_TOP 10

/* What `fidx stats --help` says around its options. */
static const struct fidx_help stats_help = {
	.command = "stats",
	.text = "usage: fidx stats [OPTIONS] [DB]\n\n"
		"Figures of each selected scan (one report per scan): entries and entries\n"
		"recorded with an error; count and bytes (sum of st_size) by type; then, of\n"
		"the regular files with a recorded size: count and bytes by extension (as\n"
		"recorded, case kept; the --top largest by bytes, the rest summed as\n"
		"(other)), a histogram of sizes in powers of two (each line: SIZE >= lower\n"
		"and < upper; the first holds the empty files), and the --top largest,\n"
		"oldest and newest (mtime, UTC) files, ties by path.  Every name counts: a\n"
		"file with several hard links counts once per link.\n\n"
		"With --json, one object per scan on one line: scan_id, root, entries, errors,\n"
		"types [{type, name, count, bytes}], extensions [{ext, count, bytes}],\n"
		"extensions_other {extensions, count, bytes}, histogram [{min, max, count,\n"
		"bytes}] (min and max inclusive), largest [{path, size}], oldest and newest\n"
		"[{path, mtime_ns, mtime}].  -0 ends the root and each listed path with NUL.\n\n",
	.footer = "\nExit status: 0 shown, 2 usage or fatal error.\n",
};

/* Takes the argument of --top into *(unsigned *)top.  Returns 0, or -1 after printing why. */
static int top_arg(const char *arg, void *top)
{
	return fidx_space_parse_count("--top", arg, top);
}

/* The types in the order shown (FIDX_TYPES); the last is a row without a type (not
 * stat'ed, no d_type). */
#define NTYPES (FIDX_NTYPES + 1)

/* What type i of the tallies is called. */
static const char *tally_type_name(size_t i)
{
	return i < FIDX_NTYPES ? fidx_type_name(FIDX_TYPE_LETTERS[i]) : "unknown";
}
#define NBUCKETS 65  /* size 0, then one per bit length 1..64 */

/* A count of entries and the sum of their sizes. */
struct tally {
	uint64_t count;
	uint64_t bytes;
};

/* The extensions of a report: the heaviest shown one by one, the rest summed. */
struct ext_order {
	const int64_t *order;  /* extension indexes, heaviest first */
	size_t shown;          /* how many of them are listed (at most --top) */
	size_t rest;           /* how many more there are */
	struct tally other;    /* their sum */
};

/* One kept entry of a list. */
struct top_item {
	struct fidx_time key;  /* mtime, or a size as {size, 0} */
	char *path;
};

/*
 * The first cap entries by key (larger first when dir is 1, smaller when
 * -1), then by path: a heap whose root is the entry that would leave first.
 */
struct top {
	struct top_item *items;  /* the heap, grown as it fills */
	size_t n, size;          /* entries kept, slots allocated */
	size_t cap;              /* entries kept at most (--top) */
	int dir;                 /* 1: larger keys first, -1: smaller */
};

/* Whether (ka, pa) comes before (kb, pb) in the list t. */
static bool before(const struct top *t, struct fidx_time ka, const char *pa,
		   struct fidx_time kb, const char *pb)
{
	int c = fidx_time_cmp(ka, kb);
	if (c)
		return t->dir > 0 ? c > 0 : c < 0;
	return strcmp(pa, pb) < 0;
}

/* Whether an entry with key could enter t (its path then decides). */
static bool top_wants(const struct top *t, struct fidx_time key)
{
	if (t->n < t->cap)
		return true;
	if (t->cap == 0)
		return false;
	int c = fidx_time_cmp(key, t->items[0].key);
	return c == 0 || (t->dir > 0 ? c > 0 : c < 0);
}

/* Moves the item at i down until neither child would leave after it. */
static void sift_down(struct top *t, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		/* The root must be the last in list order: swap with a child that comes after. */
		if (l < t->n && before(t, t->items[m].key, t->items[m].path, t->items[l].key,
				       t->items[l].path))
			m = l;
		if (r < t->n && before(t, t->items[m].key, t->items[m].path, t->items[r].key,
				       t->items[r].path))
			m = r;
		if (m == i)
			return;
		struct top_item x = t->items[i];
		t->items[i] = t->items[m];
		t->items[m] = x;
		i = m;
	}
}

/* Adds (key, a copy of path) to t when it belongs there.  Returns 0, or -1 (ENOMEM). */
static int top_add(struct top *t, struct fidx_time key, const char *path)
{
	if (t->n == t->cap) {
		struct top_item *root = &t->items[0];
		if (!before(t, key, path, root->key, root->path))
			return 0;
		char *copy = strdup(path);
		if (!copy)
			return -1;
		free(root->path);
		*root = (struct top_item){key, copy};
		sift_down(t, 0);
		return 0;
	}
	if (t->n == t->size) {
		size_t nsize = t->size ? 2 * t->size : 16;
		if (nsize > t->cap)
			nsize = t->cap;
		struct top_item *n = realloc(t->items, nsize * sizeof(*n));
		if (!n)
			return -1;
		t->items = n;
		t->size = nsize;
	}
	char *copy = strdup(path);
	if (!copy)
		return -1;
	size_t i = t->n++;
	t->items[i] = (struct top_item){key, copy};
	/* Up while the parent comes before: the root stays the last. */
	while (i > 0) {
		size_t p = (i - 1) / 2;
		struct top_item *up = &t->items[p], *it = &t->items[i];
		if (!before(t, up->key, up->path, it->key, it->path))
			break;
		struct top_item x = t->items[i];
		t->items[i] = t->items[p];
		t->items[p] = x;
		i = p;
	}
	return 0;
}

/* qsort_r() order of a list's items. */
static int top_cmp(const void *a, const void *b, void *arg)
{
	const struct top_item *x = a, *y = b;
	if (before(arg, x->key, x->path, y->key, y->path))
		return -1;
	return before(arg, y->key, y->path, x->key, x->path) ? 1 : 0;
}

/* The figures of one scan. */
struct stats {
	unsigned top;                      /* --top */
	bool exact, json, nul;             /* -b, --json, -0 */

	uint64_t entries, errors;          /* rows, and rows with an error */
	struct tally types[NTYPES];        /* by type, in FIDX_TYPES order, unknown last */
	struct fidx_intern *exts;          /* extension -> index into ext[] */
	struct tally *ext;                 /* by extension (regular files with a size) */
	size_t ext_cap;                    /* slots of ext[] */
	struct tally hist[NBUCKETS];       /* by size bucket (bucket_of()) */
	struct top largest, oldest, newest;  /* by size, mtime ascending, mtime descending */
};

/* Returns the histogram bucket of a size: 0 for 0, else its bit length. */
static unsigned bucket_of(uint64_t size)
{
	return size ? 64 - (unsigned)__builtin_clzll(size) : 0;
}

/* Frees what st holds for one scan and clears it for the next. */
static void stats_reset(struct stats *st)
{
	struct top *lists[] = {&st->largest, &st->oldest, &st->newest};
	for (size_t l = 0; l < 3; l++) {
		for (size_t i = 0; i < lists[l]->n; i++)
			free(lists[l]->items[i].path);
		free(lists[l]->items);
	}
	fidx_intern_free(st->exts);
	free(st->ext);
	*st = (struct stats){.top = st->top, .exact = st->exact, .json = st->json, .nul = st->nul};
}

/* Sets up st's lists and table for a scan.  Returns 0, or -1 (ENOMEM). */
static int stats_init(struct stats *st)
{
	st->largest.dir = 1;
	st->oldest.dir = -1;
	st->newest.dir = 1;
	st->largest.cap = st->oldest.cap = st->newest.cap = st->top;
	return (st->exts = fidx_intern_new()) ? 0 : -1;
}

/* The columns stats reads of a row (id and scan_id come too, and name a damaged row). */
#define STATS_COLUMNS                                                                          \
	(FIDX_COLUMN(FIDX_COL_TYPE) | FIDX_COLUMN(FIDX_COL_SIZE) | FIDX_COLUMN(FIDX_COL_EXT) |   \
	 FIDX_COLUMN(FIDX_COL_MTIME) | FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_ERROR))

/*
 * Adds row, a regular file with a size, to the extension table, histogram
 * and lists; its path is looked at only when it could enter a list.
 * Returns 0, or -1 (ENOMEM).
 */
static int add_file(struct stats *st, const struct fidx_row *row, uint64_t size)
{
	const char *ext = fidx_row_text(row, FIDX_COL_EXT);
	size_t elen = fidx_row_len(row, FIDX_COL_EXT);
	int64_t e = fidx_intern_add(st->exts, ext ? ext : "", elen, NULL);
	if (e < 0)
		return -1;
	if ((size_t)e >= st->ext_cap) {
		size_t ncap = st->ext_cap ? 2 * st->ext_cap : 256;
		struct tally *n = realloc(st->ext, ncap * sizeof(*n));
		if (!n)
			return -1;
		memset(n + st->ext_cap, 0, (ncap - st->ext_cap) * sizeof(*n));
		st->ext = n;
		st->ext_cap = ncap;
	}
	st->ext[e].count++;
	st->ext[e].bytes += size;
	st->hist[bucket_of(size)].count++;
	st->hist[bucket_of(size)].bytes += size;

	const char *path = NULL;
	struct fidx_time key = {.sec = (int64_t)size};
	if (top_wants(&st->largest, key)) {
		path = fidx_row_text(row, FIDX_COL_PATH);
		if (top_add(&st->largest, key, path) < 0)
			return -1;
	}
	struct fidx_time mtime;
	if (!fidx_row_time(row, FIDX_COL_MTIME, &mtime))
		return 0;
	struct top *lists[] = {&st->oldest, &st->newest};
	for (size_t l = 0; l < 2; l++) {
		if (!top_wants(lists[l], mtime))
			continue;
		if (!path)
			path = fidx_row_text(row, FIDX_COL_PATH);
		if (top_add(lists[l], mtime, path) < 0)
			return -1;
	}
	return 0;
}

/*
 * Reads the store's rows of selected scan k of q (those the selection shows)
 * into st, in one pass.  Returns 0, or -1 after printing why.
 */
static int gather(struct stats *st, const struct fidx_query *q, size_t k)
{
	struct fidx_rows_query rq;
	struct fidx_error err;
	const struct fidx_row *row;
	int rc;

	fidx_query_rows(q, STATS_COLUMNS, FIDX_ROWS_ANY, &rq);
	rq.scans = &q->ids[k];
	rq.roots = &q->roots[k];
	rq.nscans = 1;
	struct fidx_rows *it = fidx_store_rows(q->st, &rq, &err);
	if (!it)
		return fidx_query_fail(q, &err), -1;
	while ((rc = fidx_rows_next(it, &row, &err)) == 1) {
		char type = fidx_row_type(row);
		const char *t = type ? strchr(FIDX_TYPE_LETTERS, type) : NULL;
		struct tally *ty = &st->types[t ? (size_t)(t - FIDX_TYPE_LETTERS) : NTYPES - 1];
		st->entries++;
		st->errors += fidx_row_has(row, FIDX_COL_ERROR);
		ty->count++;
		if (!fidx_row_has(row, FIDX_COL_SIZE))
			continue;
		uint64_t size = fidx_row_u64(row, FIDX_COL_SIZE);
		ty->bytes += size;
		if (t && *t == 'f' && add_file(st, row, size) < 0) {
			fidx_rows_close(it);
			fidx_error("out of memory");
			return -1;
		}
	}
	fidx_rows_close(it);
	if (rc < 0)
		return fidx_query_fail(q, &err), -1;
	return 0;
}

/* qsort_r() order of extensions: bytes, then count (larger first), then name (bytes). */
static int ext_cmp(const void *a, const void *b, void *arg)
{
	const struct stats *st = arg;
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	const struct tally *tx = &st->ext[x], *ty = &st->ext[y];
	if (tx->bytes != ty->bytes)
		return tx->bytes < ty->bytes ? 1 : -1;
	if (tx->count != ty->count)
		return tx->count < ty->count ? 1 : -1;
	size_t lx, ly;
	const char *kx = fidx_intern_key(st->exts, x, &lx), *ky = fidx_intern_key(st->exts, y, &ly);
	int c = memcmp(kx, ky, lx < ly ? lx : ly);
	return c ? c : (lx > ly) - (lx < ly);
}

/* Formats 2^k bytes exactly ("512 B", "1 KiB", "16 EiB" for k = 64), or as a number (-b). */
static const char *power_label(unsigned k, bool exact, char buf[static FIDX_SIZE_TEXT])
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	if (exact) {
		if (k == 64)
			snprintf(buf, FIDX_SIZE_TEXT, "18446744073709551616");
		else
			snprintf(buf, FIDX_SIZE_TEXT, "%" PRIu64, (uint64_t)1 << k);
	} else {
		snprintf(buf, FIDX_SIZE_TEXT, "%" PRIu64 " %s", (uint64_t)1 << (k % 10),
			 units[k / 10]);
	}
	return buf;
}

/* Range of buckets to show: the first to the last non-empty one (*lo > *hi when none). */
static void hist_range(const struct stats *st, unsigned *lo, unsigned *hi)
{
	*lo = 1;
	*hi = 0;
	for (unsigned k = 0; k < NBUCKETS; k++) {
		if (!st->hist[k].count)
			continue;
		if (*lo > *hi)
			*lo = k;
		*hi = k;
	}
}

/* Prints one JSON member "key":[...] of a list, sizes or times by kind. */
static void json_list(const struct top *t, const char *key, bool time)
{
	char when[FIDX_WHEN_ISO];
	printf(",\"%s\":[", key);
	for (size_t i = 0; i < t->n; i++) {
		const struct top_item *it = &t->items[i];
		printf("%s{", i ? "," : "");
		fidx_json_path(stdout, "path", it->path);
		if (time) {
			char ns[FIDX_TIME_NS_MAX + 1];
			*fidx_time_put_ns(ns, it->key) = '\0';
			printf(",\"mtime_ns\":%s,\"mtime\":\"%s\"}", ns, fidx_when_iso(it->key, when));
		} else {
			printf(",\"size\":%" PRIu64 "}", (uint64_t)it->key.sec);
		}
	}
	putchar(']');
}

/* Prints the report of one scan as one JSON object on one line. */
static void print_json(const struct stats *st, int64_t scan, const char *root,
		       const struct ext_order *x)
{
	printf("{\"scan_id\":%" PRId64 ",", scan);
	fidx_json_path(stdout, "root", root);
	printf(",\"entries\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"types\":[", st->entries,
	       st->errors);
	bool first = true;
	for (size_t i = 0; i < NTYPES; i++) {
		if (!st->types[i].count)
			continue;
		if (i < NTYPES - 1)
			printf("%s{\"type\":\"%c\"", first ? "" : ",", FIDX_TYPE_LETTERS[i]);
		else
			printf("%s{\"type\":null", first ? "" : ",");
		printf(",\"name\":\"%s\",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
		       tally_type_name(i), st->types[i].count, st->types[i].bytes);
		first = false;
	}
	fputs("],\"extensions\":[", stdout);
	for (size_t i = 0; i < x->shown; i++) {
		const struct tally *e = &st->ext[x->order[i]];
		printf("%s{", i ? "," : "");
		fidx_json_path(stdout, "ext", fidx_intern_key(st->exts, x->order[i], NULL));
		printf(",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", e->count, e->bytes);
	}
	printf("],\"extensions_other\":{\"extensions\":%zu,\"count\":%" PRIu64
	       ",\"bytes\":%" PRIu64 "},\"histogram\":[",
	       x->rest, x->other.count, x->other.bytes);
	unsigned lo, hi;
	hist_range(st, &lo, &hi);
	for (unsigned k = lo; k <= hi; k++) {
		uint64_t min = k ? (uint64_t)1 << (k - 1) : 0;
		uint64_t max = k ? (k == 64 ? UINT64_MAX : ((uint64_t)1 << k) - 1) : 0;
		printf("%s{\"min\":%" PRIu64 ",\"max\":%" PRIu64 ",\"count\":%" PRIu64
		       ",\"bytes\":%" PRIu64 "}", k > lo ? "," : "", min, max, st->hist[k].count,
		       st->hist[k].bytes);
	}
	putchar(']');
	json_list(&st->largest, "largest", false);
	json_list(&st->oldest, "oldest", true);
	json_list(&st->newest, "newest", true);
	fputs("}\n", stdout);
}

/* Prints the report of one scan for people. */
static void print_text(const struct stats *st, int64_t scan, const char *root,
		       const struct ext_order *x, bool first)
{
	char a[FIDX_SIZE_TEXT], b[FIDX_SIZE_TEXT], when[FIDX_WHEN_ISO];
	int w = st->exact ? 15 : 10;

	printf("%sscan %" PRId64 ": ", first ? "" : "\n", scan);
	fidx_out_path(root, st->nul);
	printf("entries %" PRIu64 ", with an error %" PRIu64 "\n\n", st->entries, st->errors);

	printf("%-16s  %10s  %*s\n", "TYPE", "COUNT", w, "BYTES");
	for (size_t i = 0; i < NTYPES; i++)
		if (st->types[i].count)
			printf("%-16s  %10" PRIu64 "  %*s\n", tally_type_name(i), st->types[i].count, w,
			       fidx_size_text(st->types[i].bytes, st->exact, a));

	printf("\n%-16s  %10s  %*s   (regular files)\n", "EXTENSION", "COUNT", w, "BYTES");
	for (size_t i = 0; i < x->shown; i++) {
		const struct tally *e = &st->ext[x->order[i]];
		const char *name = fidx_intern_key(st->exts, x->order[i], NULL);
		/* Escaped as in messages; the dot keeps "(none)" apart from an extension. */
		if (*name)
			printf(".%-15s  ", fidx_quote(name));
		else
			printf("%-16s  ", "(none)");
		printf("%10" PRIu64 "  %*s\n", e->count, w,
		       fidx_size_text(e->bytes, st->exact, a));
	}
	if (x->rest) {
		char label[32];
		snprintf(label, sizeof(label), "(other: %zu)", x->rest);
		printf("%-16s  %10" PRIu64 "  %*s\n", label, x->other.count, w,
		       fidx_size_text(x->other.bytes, st->exact, a));
	}

	printf("\n%*s  %*s  %10s  %*s   (regular files)\n", w, "SIZE >=", w, "SIZE <", "COUNT", w,
	       "BYTES");
	unsigned lo, hi;
	hist_range(st, &lo, &hi);
	for (unsigned k = lo; k <= hi; k++) {
		char c[FIDX_SIZE_TEXT];
		printf("%*s  %*s  %10" PRIu64 "  %*s\n", w,
		       k ? power_label(k - 1, st->exact, a) : st->exact ? "0" : "0 B", w,
		       power_label(k, st->exact, b), st->hist[k].count, w,
		       fidx_size_text(st->hist[k].bytes, st->exact, c));
	}

	printf("\n%*s  %s\n", w, "LARGEST", "PATH");
	for (size_t i = 0; i < st->largest.n; i++) {
		const struct top_item *it = &st->largest.items[i];
		printf("%*s  ", w, fidx_size_text((uint64_t)it->key.sec, st->exact, a));
		fidx_out_path(it->path, st->nul);
	}
	const struct top *lists[] = {&st->oldest, &st->newest};
	const char *titles[] = {"OLDEST (MTIME, UTC)", "NEWEST (MTIME, UTC)"};
	for (size_t l = 0; l < 2; l++) {
		printf("\n%-30s  %s\n", titles[l], "PATH");
		for (size_t i = 0; i < lists[l]->n; i++) {
			printf("%-30s  ", fidx_when_iso(lists[l]->items[i].key, when));
			fidx_out_path(lists[l]->items[i].path, st->nul);
		}
	}
}

/*
 * Gathers and prints the report of selected scan k of q (first: the first
 * report printed).  Returns 0, or -1 after printing why.
 */
static int stats_scan(struct stats *st, const struct fidx_query *q, size_t k, bool first)
{
	int64_t scan = q->ids[k];
	const char *root = q->roots[k];
	int64_t *order = NULL;
	int ret = -1;

	if (stats_init(st) < 0) {
		fidx_error("out of memory");
		goto out;
	}
	if (gather(st, q, k) < 0)
		goto out;
	size_t nexts = fidx_intern_count(st->exts);
	if (nexts && !(order = malloc(nexts * sizeof(*order)))) {
		fidx_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < nexts; i++)
		order[i] = (int64_t)i;
	/* (qsort_r's array must not be NULL, even empty) */
	if (nexts)
		qsort_r(order, nexts, sizeof(*order), ext_cmp, st);
	struct top *lists[] = {&st->largest, &st->oldest, &st->newest};
	for (size_t l = 0; l < 3; l++)
		if (lists[l]->n)
			qsort_r(lists[l]->items, lists[l]->n, sizeof(struct top_item), top_cmp,
				lists[l]);
	struct ext_order x = {.order = order, .shown = nexts < st->top ? nexts : st->top};
	x.rest = nexts - x.shown;
	for (size_t i = x.shown; i < nexts; i++) {
		x.other.count += st->ext[order[i]].count;
		x.other.bytes += st->ext[order[i]].bytes;
	}
	if (st->json)
		print_json(st, scan, root, &x);
	else
		print_text(st, scan, root, &x, first);
	ret = 0;
out:
	free(order);
	stats_reset(st);
	return ret;
}

/* fidx stats (builtin.h): the options, the database, then one report per selected scan. */
int cmd_stats(int argc, char **argv, const struct fidx_command *cmd)
{
	struct fidx_query_args qa = {0};
	struct stats st = {.top = DEFAULT_TOP};
	struct fidx_option options[] = {
		FIDX_OPT_CALL(0, "top", "N", top_arg, &st.top,
			      "extensions, largest, oldest and newest files shown (default 10; the"
			      " other extensions are summed)"),
		FIDX_OPT_BYTES(&st.exact),
		FIDX_OPT_QUERY(&qa),
		FIDX_OPT_END,
	};
	struct fidx_query *q = NULL;
	int status = 2;

	(void)cmd;
	int first = fidx_parse_options(argc, argv, options, &stats_help);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 0 : 2;
	st.json = qa.json;
	st.nul = qa.nul;
	if (first < argc && !qa.db)
		qa.db = argv[first++];
	if (first < argc) {
		fidx_error("unexpected argument '%s' (see 'fidx stats --help')",
			   fidx_quote(argv[first]));
		return 2;
	}

	if (!(q = fidx_query_open(&qa, NULL)) || fidx_space_check_scans(q) < 0)
		goto out;
	fidx_out_begin();
	for (size_t i = 0; i < q->nscans; i++)
		if (stats_scan(&st, q, i, i == 0) < 0)
			goto out;
	status = 0;
out:
	if (q && fidx_out_end() < 0)
		status = 2;
	if (fidx_query_close(q) < 0)
		status = 2;
	return status;
}
