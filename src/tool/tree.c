/*
 * tree.c - one scan's tree in memory (tree.h).
 *
 * The load keeps a map from each directory path met (a row's own, or the
 * directory of a row) to its node; a file's path is looked up only for its
 * directory, so the map holds directories alone (a 1M-file scan of 60k
 * directories: 60k keys).  Rows of one directory come in runs in either of
 * the store's orders, so the last directory looked up is kept and a run
 * costs one look-up.
 *
 * Sums are added from the leaves up in one pass over the nodes in reverse
 * order of their making (a parent is always made before its children, so
 * that is every child before its parent), and the children arrays are
 * built from counts kept as nodes are made: no pass jumps about the nodes
 * more than it must (a 1M-entry tree: 80 MiB of them).  Hard links are counted as `fidx du` counts
 * them (du.c): each inode's size is added once to every directory on the
 * union of the chains from its names' directories up to the top, a stamp
 * per inode marking the directories counted.
 */
#include "tree.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "intern.h"
#include "row.h"
#include "select.h"
#include "space.h"
#include "store.h"

/* A hard-linked file's name other than its first: the inode, its node and directory. */
struct link {
	uint32_t inode;   /* index into load.inodes */
	uint32_t node;    /* the name's node */
	uint32_t dir;     /* node of the name's directory */
};

/*
 * An inode with several names: its first name (first in byte order of the
 * paths, whatever order the store gave the rows in) and that name's
 * directory, its sizes.
 */
struct inode {
	uint32_t node;
	uint32_t dir;
	uint64_t apparent, allocated;
};

/* What the load keeps until the tree is finished. */
struct load {
	struct fidx_tree *t;
	uint32_t cap;
	const char *base;           /* the path asked for */
	size_t baselen;
	struct fidx_intern *dirs;   /* directory path -> index into dirnode */
	uint32_t *dirnode;          /* ... -> node */
	size_t dirnode_cap;
	struct fidx_intern *inos;   /* (dev, ino) -> index into inodes */
	struct inode *inodes;
	size_t inodes_cap;
	struct link *links;
	size_t nlinks, links_cap;
	uint32_t last_dir;          /* the node of the last directory looked up ... */
	const char *last_key;       /* ... and its path */
	size_t last_len;
};

/* Grows *arr (of *cap items of size bytes) to hold need.  Returns 0, or -1 (ENOMEM). */
static int grow(void *arr, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 1024;
	while (ncap < need)
		ncap *= 2;
	void *n = realloc(*(void **)arr, ncap * size);
	if (!n)
		return errno = ENOMEM, -1;
	*(void **)arr = n;
	*cap = ncap;
	return 0;
}

/* Adds a node named name[0..len) under parent.  Returns its index, or FIDX_TREE_NONE (ENOMEM, or too many). */
static uint32_t add_node(struct load *l, const char *name, size_t len, uint32_t parent)
{
	struct fidx_tree *t = l->t;
	if (t->nnodes >= FIDX_TREE_NONE - 1)
		return errno = EOVERFLOW, FIDX_TREE_NONE;
	size_t cap = l->cap;
	if (grow(&t->nodes, &cap, (size_t)t->nnodes + 1, sizeof(*t->nodes)) < 0)
		return FIDX_TREE_NONE;
	l->cap = (uint32_t)(cap < FIDX_TREE_NONE ? cap : FIDX_TREE_NONE - 1);
	const char *copy = fidx_arena_copy(&t->names, name, len);
	if (!copy)
		return FIDX_TREE_NONE;
	t->nodes[t->nnodes] = (struct fidx_tree_node){
		.name = copy, .mtime = INT64_MIN, .latest = INT64_MIN, .parent = parent,
		.flags = FIDX_TREE_NO_ROW,
	};
	if (parent != FIDX_TREE_NONE)
		t->nodes[parent].nkids++;  /* counted now, while the parent is in the cache */
	return t->nnodes++;
}

/*
 * Returns the node of directory path[0..len) (at or below the base), made
 * with the directories above it that are not known yet (FIDX_TREE_NO_ROW
 * until their rows come); FIDX_TREE_NONE on failure (errno set).
 */
static uint32_t dir_node(struct load *l, const char *path, size_t len)
{
	if (l->last_key && len == l->last_len && memcmp(path, l->last_key, len) == 0)
		return l->last_dir;
	int added;
	int64_t i = fidx_intern_add(l->dirs, path, len, &added);
	if (i < 0)
		return errno = ENOMEM, FIDX_TREE_NONE;
	if (!added) {
		l->last_dir = l->dirnode[i];
	} else {
		if (grow(&l->dirnode, &l->dirnode_cap, (size_t)i + 1, sizeof(*l->dirnode)) < 0)
			return FIDX_TREE_NONE;
		uint32_t parent = FIDX_TREE_NONE;
		const char *name = path;
		size_t nlen = len;
		if (len != l->baselen) {
			/* Below the base: its parent first (a loop, not recursion: trees are deep). */
			const char *slash = memrchr(path, '/', len);
			size_t plen = slash == path ? 1 : (size_t)(slash - path);
			if (plen < l->baselen)
				plen = l->baselen;  /* the base "/" itself */
			parent = dir_node(l, path, plen);
			if (parent == FIDX_TREE_NONE)
				return FIDX_TREE_NONE;
			name = slash + 1;
			nlen = len - (size_t)(name - path);
		}
		uint32_t n = add_node(l, name, nlen, parent);
		if (n == FIDX_TREE_NONE)
			return FIDX_TREE_NONE;
		l->t->nodes[n].type = 'd';  /* a directory, if only by the paths below it */
		l->dirnode[i] = n;
		l->last_dir = n;
	}
	l->last_key = fidx_intern_key(l->dirs, i, &l->last_len);
	return l->last_dir;
}

/* The columns a tree reads of a row (id and scan_id come too). */
#define TREE_COLUMNS                                                                             \
	(FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_TYPE) | FIDX_COLUMN(FIDX_COL_SIZE) |    \
	 FIDX_COLUMN(FIDX_COL_BLOCKS) | FIDX_COLUMN(FIDX_COL_NLINK) | FIDX_COLUMN(FIDX_COL_DEV) |   \
	 FIDX_COLUMN(FIDX_COL_INO) | FIDX_COLUMN(FIDX_COL_MTIME) | FIDX_COLUMN(FIDX_COL_ERROR))

/* Fills node n from row (a file's sizes, or the hard link it is).  Returns 0, or -1 (ENOMEM). */
static int fill(struct load *l, uint32_t n, uint32_t dir, const struct fidx_row *row)
{
	struct fidx_tree_node *v = &l->t->nodes[n];
	struct fidx_time mt;
	v->id = row->v[FIDX_COL_ID].i;
	v->type = fidx_row_type(row);
	v->flags = fidx_row_has(row, FIDX_COL_ERROR) ? FIDX_TREE_ERROR : 0;
	v->entries = 1;
	v->errors = v->flags & FIDX_TREE_ERROR ? 1 : 0;
	if (fidx_row_time(row, FIDX_COL_MTIME, &mt))
		v->mtime = v->latest = mt.sec;
	if (!fidx_row_has(row, FIDX_COL_SIZE)) {
		v->flags |= FIDX_TREE_NO_SIZE;
		return 0;
	}
	v->apparent = fidx_row_u64(row, FIDX_COL_SIZE);
	v->allocated = fidx_row_u64(row, FIDX_COL_BLOCKS) * 512;
	if (v->type == 'd') {
		l->t->dir_apparent += v->apparent;
		l->t->dir_allocated += v->allocated;
	}
	if (v->type == 'd' || fidx_row_int(row, FIDX_COL_NLINK) <= 1 || dir == FIDX_TREE_NONE)
		return 0;
	uint64_t key[2] = {fidx_row_u64(row, FIDX_COL_DEV), fidx_row_u64(row, FIDX_COL_INO)};
	int added;
	int64_t i = fidx_intern_add(l->inos, key, sizeof(key), &added);
	if (i < 0)
		return errno = ENOMEM, -1;
	if (added) {
		if (grow(&l->inodes, &l->inodes_cap, (size_t)i + 1, sizeof(*l->inodes)) < 0)
			return -1;
		l->inodes[i] = (struct inode){n, dir, v->apparent, v->allocated};
		return 0;
	}
	/* Another name: shows its size, adds nothing where the first one counted (finish()
	 * chooses which name is first). */
	v->flags |= FIDX_TREE_LINK;
	if (grow(&l->links, &l->links_cap, l->nlinks + 1, sizeof(*l->links)) < 0)
		return -1;
	l->links[l->nlinks++] = (struct link){(uint32_t)i, n, dir};
	return 0;
}

/*
 * Reads the rows of scan k of q at or below l->base into nodes.  Returns the
 * rows read, or -1 with *err set (errno-style code in err->code for ENOMEM).
 */
static int64_t read_rows(struct load *l, const struct fidx_query *q, size_t k,
			 struct fidx_error *err)
{
	struct fidx_rows_query rq;
	const struct fidx_row *row;
	int64_t rows = 0;
	int rc;
	size_t start = l->baselen == 1 ? 1 : l->baselen + 1;  /* where a path goes on below base */

	fidx_query_rows(q, TREE_COLUMNS, FIDX_ROWS_ANY, &rq);
	rq.scans = &q->ids[k];
	rq.roots = &q->roots[k];
	rq.nscans = 1;
	rq.under = l->base;
	rq.hidden = NULL;  /* one scan's tree, whole: not the selection's mix of scans */
	rq.nhidden = 0;
	struct fidx_rows *it = fidx_store_rows(q->st, &rq, err);
	if (!it)
		return -1;
	while ((rc = fidx_rows_next(it, &row, err)) == 1) {
		const char *path = fidx_row_text(row, FIDX_COL_PATH);
		size_t len = fidx_row_len(row, FIDX_COL_PATH);
		bool at_base = len == l->baselen && memcmp(path, l->base, len) == 0;
		/* The store gives rows at or below base; one that is not cannot be placed. */
		if (!at_base && (len <= start || memcmp(path, l->base, l->baselen) != 0 ||
				 path[start - 1] != '/'))
			continue;
		uint32_t n, dir = FIDX_TREE_NONE;
		if (fidx_row_type(row) == 'd' || at_base) {
			n = at_base && fidx_row_type(row) != 'd'
				    ? add_node(l, path, len, FIDX_TREE_NONE)
				    : dir_node(l, path, len);
			if (n == FIDX_TREE_NONE)
				goto fail;
			if (!(l->t->nodes[n].flags & FIDX_TREE_NO_ROW)) {
				rows++;  /* a second row of one path: in no tree (finish() tells) */
				continue;
			}
			if (at_base)
				l->t->top = n;
		} else {
			const char *slash = memrchr(path, '/', len);
			size_t dlen = (size_t)(slash - path);
			if (dlen < l->baselen)
				dlen = l->baselen;
			if ((dir = dir_node(l, path, dlen)) == FIDX_TREE_NONE ||
			    (n = add_node(l, slash + 1, len - (size_t)(slash + 1 - path), dir)) ==
				    FIDX_TREE_NONE)
				goto fail;
		}
		if (fill(l, n, dir, row) < 0)
			goto fail;
		rows++;
	}
	fidx_rows_close(it);
	return rc < 0 ? -1 : rows;
fail:;
	int e = errno;  /* before the close, which may set errno */
	fidx_rows_close(it);
	fidx_fail(err, e, "%s", e == EOVERFLOW ? "more than 4 billion entries" : "out of memory");
	return -1;
}

/*
 * Returns how the paths of nodes a and b compare (as strcmp() does), or sets
 * *nomem when a path could not be made.
 */
static int path_cmp(const struct fidx_tree *t, uint32_t a, uint32_t b, bool *nomem)
{
	char *pa = fidx_tree_path(t, a), *pb = fidx_tree_path(t, b);
	int c = 0;
	if (pa && pb)
		c = strcmp(pa, pb);
	else
		*nomem = true;
	free(pa);
	free(pb);
	return c;
}

/*
 * Makes each hard-linked file's first name the one first in byte order of
 * the paths, so that which name counts the size (and which is flagged
 * FIDX_TREE_LINK) is the same whatever order the store gave the rows in: two
 * stores, or two scans of one tree, give the same tree.  Returns 0, or -1
 * (ENOMEM).
 */
static int first_names(struct load *l)
{
	struct fidx_tree *t = l->t;
	bool nomem = false;
	for (size_t k = 0; k < l->nlinks && !nomem; k++) {
		struct link *o = &l->links[k];
		struct inode *f = &l->inodes[o->inode];
		if (path_cmp(t, o->node, f->node, &nomem) >= 0)
			continue;
		t->nodes[o->node].flags &= (uint8_t)~FIDX_TREE_LINK;
		t->nodes[f->node].flags |= FIDX_TREE_LINK;
		struct link was = {o->inode, f->node, f->dir};
		f->node = o->node;
		f->dir = o->dir;
		*o = was;
	}
	return nomem ? (errno = ENOMEM, -1) : 0;
}

/*
 * Links children to parents (kids[]), adds sums from the leaves up, counts
 * hard links once per subtree, and sets *reached to the rows in the top's
 * tree (fewer than were read when a row is in no tree: a second row of one
 * path, a top that is not a directory above other rows).  Returns 0, or -1
 * (ENOMEM).
 *
 * A node is always made after its parent (dir_node() makes the parent
 * first, a file's directory is made before it), so every parent has a
 * smaller index than its children: the nodes in reverse order are every
 * child before its parent, and the sums need no traversal; in order, every
 * parent before its children, so that whether a node is in the top's tree
 * is its parent's answer.  Each node's children were counted as they were
 * made (add_node()).
 */
static int finish(struct load *l, int64_t *reached)
{
	struct fidx_tree *t = l->t;
	uint32_t n = t->nnodes;
	if (first_names(l) < 0)
		return -1;
	uint64_t *stamp = l->nlinks ? calloc(n, sizeof(*stamp)) : NULL;
	if (!(t->kids = malloc((size_t)(n ? n : 1) * sizeof(*t->kids))) || (l->nlinks && !stamp)) {
		free(stamp);
		return errno = ENOMEM, -1;
	}
	/* Children contiguous: offsets from the counts, then placed. */
	uint32_t at = 0;
	for (uint32_t i = 0; i < n; i++) {
		t->nodes[i].kids = at;
		at += t->nodes[i].nkids;
		t->nodes[i].nkids = 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = t->nodes[i].parent;
		if (p != FIDX_TREE_NONE)
			t->kids[t->nodes[p].kids + t->nodes[p].nkids++] = i;
	}
	/* In the top's tree: the top, and every node whose parent is. */
	uint8_t *in = calloc(n ? n : 1, 1);
	if (!in) {
		free(stamp);
		return errno = ENOMEM, -1;
	}
	*reached = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = t->nodes[i].parent;
		in[i] = i == t->top || (p != FIDX_TREE_NONE && in[p]);
		*reached += in[i] && !(t->nodes[i].flags & FIDX_TREE_NO_ROW);
	}
	free(in);
	/* Summed in reverse order of the nodes: every child before its parent. */
	for (uint32_t i = n; i-- > 0;) {
		const struct fidx_tree_node *c = &t->nodes[i];
		if (c->parent == FIDX_TREE_NONE)
			continue;
		struct fidx_tree_node *p = &t->nodes[c->parent];
		if (!(c->flags & FIDX_TREE_LINK)) {
			p->apparent += c->apparent;
			p->allocated += c->allocated;
		}
		p->entries += c->entries;
		p->errors += c->errors;
		if (c->latest > p->latest)
			p->latest = c->latest;
	}
	/* Each hard-linked file once more in every directory its later names reach first. */
	for (size_t k = 0; k < l->nlinks; k++) {
		const struct inode *f = &l->inodes[l->links[k].inode];
		uint64_t s = (uint64_t)l->links[k].inode + 1;
		if (stamp[f->dir] != s)
			for (uint32_t v = f->dir; v != FIDX_TREE_NONE && stamp[v] != s;
			     v = t->nodes[v].parent)
				stamp[v] = s;
		for (uint32_t v = l->links[k].dir; v != FIDX_TREE_NONE && stamp[v] != s;
		     v = t->nodes[v].parent) {
			stamp[v] = s;
			t->nodes[v].apparent += f->apparent;
			t->nodes[v].allocated += f->allocated;
		}
	}
	free(stamp);
	return 0;
}

/* qsort() order of links: by inode, so that one inode's stamps are consecutive. */
static int link_cmp(const void *a, const void *b)
{
	const struct link *x = a, *y = b;
	return (x->inode > y->inode) - (x->inode < y->inode);
}

struct fidx_tree *fidx_tree_load(const struct fidx_query *q, size_t k, const char *path)
{
	struct fidx_error err;
	struct load l = {.base = path ? path : q->roots[k]};
	l.baselen = strlen(l.base);
	if (!(l.t = calloc(1, sizeof(*l.t))) || !(l.dirs = fidx_intern_new()) ||
	    !(l.inos = fidx_intern_new())) {
		fidx_error("out of memory");
		goto fail;
	}
	l.t->scan = q->ids[k];
	l.t->top = FIDX_TREE_NONE;
	int64_t rows = read_rows(&l, q, k, &err);
	if (rows < 0) {
		if (err.code == ENOMEM || err.code == EOVERFLOW)
			fidx_error("cannot load scan %" PRId64 ": %s", q->ids[k], err.msg);
		else
			fidx_query_fail(q, &err);
		goto fail;
	}
	/* The whole of a complete scan: as many rows as its scan row counts, or it is damaged. */
	if (strcmp(l.base, q->roots[k]) == 0 && fidx_space_check_count(q, k, rows) < 0)
		goto fail;
	if (l.t->top == FIDX_TREE_NONE) {
		/* No row of base itself: its directory was made from the paths below it, or none. */
		int64_t i = fidx_intern_find(l.dirs, l.base, l.baselen);
		if (i < 0) {
			fidx_error("no entry '%s' in scan %" PRId64 " ('fidx scans' lists the scans"
				   " and their roots)", fidx_quote(l.base), q->ids[k]);
			goto fail;
		}
		l.t->top = l.dirnode[i];
	}
	if (l.nlinks)
		qsort(l.links, l.nlinks, sizeof(*l.links), link_cmp);
	int64_t reached;
	if (finish(&l, &reached) < 0) {
		fidx_error("cannot load scan %" PRId64 ": out of memory", q->ids[k]);
		goto fail;
	}
	if (reached != rows) {
		char what[200];
		snprintf(what, sizeof(what), "scan %" PRId64 ": %" PRId64 " of its rows at or below"
			 " '%s' are in no tree (a second row of one path, or rows below one that"
			 " is not a directory)", q->ids[k], rows - reached, fidx_quote(l.base));
		fidx_query_damaged(q, what);
		goto fail;
	}
	fidx_intern_free(l.dirs);
	fidx_intern_free(l.inos);
	free(l.dirnode);
	free(l.inodes);
	free(l.links);
	return l.t;
fail:
	fidx_intern_free(l.dirs);
	fidx_intern_free(l.inos);
	free(l.dirnode);
	free(l.inodes);
	free(l.links);
	fidx_tree_free(l.t);
	return NULL;
}

char *fidx_tree_path(const struct fidx_tree *t, uint32_t i)
{
	size_t len = 0;
	for (uint32_t v = i; v != FIDX_TREE_NONE; v = t->nodes[v].parent)
		len += strlen(t->nodes[v].name) + 1;
	char *buf = malloc(len + 1);
	if (!buf)
		return NULL;
	char *end = buf + len;
	*end = '\0';
	for (uint32_t v = i; v != FIDX_TREE_NONE; v = t->nodes[v].parent) {
		size_t n = strlen(t->nodes[v].name);
		end -= n;
		memcpy(end, t->nodes[v].name, n);
		if (t->nodes[v].parent != FIDX_TREE_NONE) {
			/* "/" as the top has its own slash: no second one. */
			const char *top = t->nodes[t->nodes[v].parent].name;
			if (!(t->nodes[v].parent == t->top && strcmp(top, "/") == 0))
				*--end = '/';
		}
	}
	if (end != buf)
		memmove(buf, end, strlen(end) + 1);
	return buf;
}

void fidx_tree_free(struct fidx_tree *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->kids);
	fidx_arena_free(&t->names);
	free(t);
}

int64_t fidx_tree_pick_scan(const struct fidx_query *q, const char *path)
{
	int64_t pick = -1;
	if (!path) {
		if (q->nscans == 1)
			return 0;
		fidx_error("the selected scans have %zu roots: choose one with --scan ID, or name a"
			   " PATH ('fidx scans' lists them)", q->nscans);
		return -1;
	}
	for (size_t i = 0; i < q->nscans; i++)
		if (fidx_path_in_tree(path, q->roots[i]))
			pick = (int64_t)i;  /* ascending ids: the last is the newest */
	if (pick < 0)
		fidx_error("no selected scan holds '%s' ('fidx scans' lists the scans and their"
			   " roots)", fidx_quote(path));
	return pick;
}
