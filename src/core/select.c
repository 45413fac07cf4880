/*
 * select.c - the scans a query reads (select.h).
 */
#include "select.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

bool fidx_path_in_tree(const char *path, const char *root)
{
	size_t n = strlen(root);
	if (strcmp(root, "/") == 0)
		return true;
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* A complete scan, as the default selection weighs it. */
struct candidate {
	const struct fidx_scan_row *row;
	unsigned digests;     /* the digests it computed (all, when its options do not say) */
	bool chosen;          /* selected */
};

/* Whether scans a and b were made on one host (a fleet's stores hold many). */
static bool same_host(const struct fidx_scan_row *a, const struct fidx_scan_row *b)
{
	return a->host == b->host || (a->host && b->host && strcmp(a->host, b->host) == 0);
}

/* Whether scans a and b are of one root of one host. */
static bool same_root(const struct fidx_scan_row *a, const struct fidx_scan_row *b)
{
	return same_host(a, b) && strcmp(a->root, b->root) == 0;
}

/* Whether scan a's root lies in the tree of scan b, on one host. */
static bool in_tree_of(const struct fidx_scan_row *a, const struct fidx_scan_row *b)
{
	return same_host(a, b) && fidx_path_in_tree(a->root, b->root);
}

/*
 * The default selection (docs/SCHEMA.md, "The scans shown"): per root of each
 * host, its
 * newest complete scan (with digests, the newest that computed one of them;
 * a root without such a scan is passed over when it lies in the tree of one
 * chosen, else its newest is taken, for the command to say what it lacks);
 * then a chosen scan whose root lies in the tree of a newer chosen one is
 * dropped (the newer one shows its paths).  Marks the chosen in c.
 */
static void choose_default(struct candidate *c, size_t n, unsigned digests)
{
	for (size_t i = 0; i < n; i++) {
		/* Whether a scan of this root computed the digests asked for. */
		bool any_usable = false;
		for (size_t k = 0; k < n && digests; k++)
			any_usable |= same_root(c[k].row, c[i].row) && (c[k].digests & digests);
		bool counts = !digests || !any_usable || (c[i].digests & digests);
		bool newer = false;
		for (size_t k = i + 1; k < n && counts && !newer; k++)
			newer = same_root(c[k].row, c[i].row) &&
				(!digests || !any_usable || (c[k].digests & digests));
		c[i].chosen = counts && !newer;
	}
	/* A root lacking the digests, in the tree of a chosen scan that has them: that one's. */
	for (size_t i = 0; digests && i < n; i++) {
		if (!c[i].chosen || (c[i].digests & digests))
			continue;
		for (size_t k = 0; k < n; k++)
			if (c[k].chosen && (c[k].digests & digests) && in_tree_of(c[i].row, c[k].row)) {
				c[i].chosen = false;
				break;
			}
	}
	/* A chosen scan inside a newer chosen one's tree is shown from that one. */
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n && c[i].chosen; k++)
			if (c[k].chosen && in_tree_of(c[i].row, c[k].row))
				c[i].chosen = false;
}

/* Adds a copy of row to sel's scans.  Returns 0, or -1 with err set. */
static int add_scan(struct fidx_selection *sel, const struct fidx_scan_row *row,
		    struct fidx_error *err)
{
	struct fidx_scan_row *rows = realloc(sel->scans.rows, (sel->scans.n + 1) * sizeof(*rows));
	if (!rows)
		return fidx_fail_nomem(err);
	sel->scans.rows = rows;
	if (fidx_scan_row_copy(&rows[sel->scans.n], row, err) < 0)
		return -1;
	sel->scans.n++;
	return 0;
}

/*
 * Notes, for each chosen scan, the roots of the newer chosen scans in its
 * tree: paths there are shown from those.  Returns 0, or -1 with err set.
 */
static int note_hidden(struct fidx_selection *sel, const struct candidate *c, size_t n,
		       struct fidx_error *err)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = i + 1; c[i].chosen && k < n; k++) {
			if (!c[k].chosen || !in_tree_of(c[k].row, c[i].row))
				continue;
			/* Once per (scan, root), as a set of them. */
			bool known = false;
			for (size_t h = 0; h < sel->nhidden && !known; h++)
				known = sel->hidden[h].scan_id == c[i].row->id &&
					strcmp(sel->hidden[h].root, c[k].row->root) == 0;
			if (known)
				continue;
			struct fidx_hidden *h = realloc(sel->hidden, (sel->nhidden + 1) * sizeof(*h));
			if (!h)
				return fidx_fail_nomem(err);
			sel->hidden = h;
			h[sel->nhidden] = (struct fidx_hidden){c[i].row->id, strdup(c[k].row->root)};
			if (!h[sel->nhidden++].root)
				return fidx_fail_nomem(err);
		}
	}
	return 0;
}

int fidx_select_default(const struct fidx_scan_list *all, unsigned digests,
			struct fidx_selection *sel, struct fidx_error *err)
{
	struct candidate *c = calloc(all->n ? all->n : 1, sizeof(*c));
	size_t n = 0;
	int ret = -1;

	fidx_selection_free(sel);
	sel->by_default = true;
	if (!c)
		return fidx_fail_nomem(err);
	for (size_t i = 0; i < all->n; i++)
		if (all->rows[i].status && strcmp(all->rows[i].status, "complete") == 0 &&
		    all->rows[i].root)
			c[n++] = (struct candidate){.row = &all->rows[i],
						    .digests = fidx_scan_row_digests_or_all(&all->rows[i])};
	choose_default(c, n, digests);
	for (size_t i = 0; i < n; i++)
		if (c[i].chosen && add_scan(sel, c[i].row, err) < 0)
			goto out;
	ret = note_hidden(sel, c, n, err);
out:
	free(c);
	return ret;
}

int fidx_select_ids(const struct fidx_scan_list *all, const int64_t *ids, size_t n,
		    const char *name, struct fidx_selection *sel, struct fidx_error *err)
{
	fidx_selection_free(sel);
	for (size_t i = 0; ids && i < n; i++)
		if (!fidx_scan_list_find(all, ids[i]))
			return fidx_fail(err, ENOENT, "database '%s' has no scan %" PRId64
					 " ('fidx scans' lists them)", fidx_quote(name), ids[i]);
	for (size_t i = 0; i < all->n; i++) {
		bool wanted = !ids;
		for (size_t k = 0; ids && k < n && !wanted; k++)
			wanted = ids[k] == all->rows[i].id;
		if (wanted && add_scan(sel, &all->rows[i], err) < 0)
			return -1;
	}
	return 0;
}

bool fidx_selection_shown(const struct fidx_selection *sel, int64_t scan, const char *path)
{
	for (size_t i = 0; i < sel->nhidden; i++)
		if (sel->hidden[i].scan_id == scan && fidx_path_in_tree(path, sel->hidden[i].root))
			return false;
	return true;
}

bool fidx_selection_hides(const struct fidx_selection *sel, int64_t scan)
{
	for (size_t i = 0; i < sel->nhidden; i++)
		if (sel->hidden[i].scan_id == scan)
			return true;
	return false;
}

void fidx_selection_ids(const struct fidx_selection *sel, int64_t *ids)
{
	for (size_t i = 0; i < sel->scans.n; i++)
		ids[i] = sel->scans.rows[i].id;
}

void fidx_selection_free(struct fidx_selection *sel)
{
	fidx_scan_list_free(&sel->scans);
	for (size_t i = 0; i < sel->nhidden; i++)
		free(sel->hidden[i].root);
	free(sel->hidden);
	*sel = (struct fidx_selection){0};
}
