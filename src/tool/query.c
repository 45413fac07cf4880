/*
 * query.c - a database opened for a query, and its scans selected (query.h).
 */
#include "query.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"

int fidx_query_db_arg(const char *arg, struct fidx_query_args *a)
{
	int kind = fidx_store_probe(arg, NULL);
	if (a->db || (kind != FIDX_STORE_FIDX && kind != FIDX_STORE_FOREIGN))
		return 0;
	a->db = arg;
	return 1;
}

/* The store's warning (a schema holding objects fidx did not create), told once. */
static void warn(void *arg, const char *msg)
{
	(void)arg;
	fidx_warn("%s", msg);
}

/*
 * Parses "3" or "3,5,9" into ids (room for one per comma, plus one), each
 * checked to be a scan of q.  Returns how many, or -1 after printing why.
 */
static ssize_t parse_ids(const struct fidx_query *q, const char *spec, int64_t *ids)
{
	const char *p = spec;
	size_t n = 0;
	for (;;) {
		char *end;
		errno = 0;
		long long id = strtoll(p, &end, 10);
		if (errno || end == p || *p == '-' || *p == '+' || (*end && *end != ',') || id < 1) {
			fidx_error("invalid --scan '%s': expected scan ids such as 3 or 3,5",
				   fidx_quote(spec));
			return -1;
		}
		if (!fidx_scan_list_find(&q->all, id)) {
			fidx_error("database '%s' has no scan %lld ('fidx scans' lists them)",
				   fidx_quote(q->path), id);
			return -1;
		}
		ids[n++] = id;
		if (!*end)
			return (ssize_t)n;
		p = end + 1;
	}
}

/*
 * Selects spec's scans (NULL: the default selection, for digests when not
 * 0; every scan when every) and notes their ids and roots.  Returns 0, or
 * -1 after printing why.
 */
static int select_scans(struct fidx_query *q, const char *spec, bool every, unsigned digests)
{
	struct fidx_error err;
	int ret;
	if (spec) {
		size_t room = 1;
		for (const char *c = spec; *c; c++)
			room += *c == ',';
		int64_t *ids = malloc(room * sizeof(*ids));
		ssize_t n = ids ? parse_ids(q, spec, ids) : -1;
		if (!ids)
			fidx_error("out of memory");
		ret = n < 0 ? -1 : fidx_select_ids(&q->all, ids, (size_t)n, q->path, &q->sel, &err);
		free(ids);
		if (n < 0)
			return -1;
	} else if (every) {
		ret = fidx_select_ids(&q->all, NULL, 0, q->path, &q->sel, &err);
	} else {
		ret = fidx_select_default(&q->all, digests, &q->sel, &err);
	}
	if (ret < 0)
		return fidx_error("%s", err.msg), -1;
	free(q->ids);
	free(q->roots);
	q->nscans = q->sel.scans.n;
	q->ids = malloc((q->nscans ? q->nscans : 1) * sizeof(*q->ids));
	q->roots = malloc((q->nscans ? q->nscans : 1) * sizeof(*q->roots));
	if (!q->ids || !q->roots) {
		fidx_error("out of memory");
		return -1;
	}
	q->many_hosts = false;
	for (size_t i = 0; i < q->nscans; i++) {
		const struct fidx_scan_row *row = &q->sel.scans.rows[i], *first = &q->sel.scans.rows[0];
		q->ids[i] = row->id;
		q->roots[i] = row->root ? row->root : "";
		q->many_hosts |= row->host != first->host &&
				 (!row->host || !first->host || strcmp(row->host, first->host) != 0);
	}
	if (q->nscans == 0 && !every) {
		fidx_error("database '%s' has no complete scan ('fidx scans' lists its scans;"
			   " --scan ID reads one that is not complete)", fidx_quote(q->path));
		return -1;
	}
	return 0;
}

/*
 * Leaves in q->all only the scans of the hosts a->hosts match (fnmatch
 * globs), before any selection.  Returns 0, or -1 after printing why (no
 * scan of such a host).
 */
static int keep_hosts(struct fidx_query *q, const struct fidx_query_args *a)
{
	size_t kept = 0;
	for (size_t i = 0; i < q->all.n; i++) {
		struct fidx_scan_row *row = &q->all.rows[i];
		bool wanted = false;
		for (size_t k = 0; k < a->nhosts && !wanted && row->host; k++)
			wanted = fnmatch(a->hosts[k], row->host, 0) == 0;
		if (wanted)
			q->all.rows[kept++] = *row;
		else
			fidx_scan_row_free(row);
	}
	q->all.n = kept;
	if (!kept) {
		fidx_error("database '%s'%s has no scan of a host --host names ('fidx scans' lists"
			   " its hosts)", fidx_quote(q->path), q->origin);
		return -1;
	}
	return 0;
}

const char *fidx_query_host(const struct fidx_query *q, int64_t scan)
{
	if (!q->many_hosts)
		return NULL;
	const struct fidx_scan_row *row = fidx_scan_list_find(&q->sel.scans, scan);
	return row && row->host ? row->host : "";
}

/* Frees q (its store closed).  NULL is allowed. */
static void query_free(struct fidx_query *q)
{
	if (!q)
		return;
	fidx_scan_list_free(&q->all);
	fidx_selection_free(&q->sel);
	free(q->ids);
	free(q->roots);
	free(q);
}

struct fidx_query *fidx_query_open(const struct fidx_query_args *a, struct fidx_error *err)
{
	struct fidx_error own;
	struct fidx_query *q = calloc(1, sizeof(*q));

	if (!err)
		err = &own;
	fidx_error_clear(err);
	if (!q) {
		fidx_fail_nomem(err);
		fidx_error("out of memory");
		return NULL;
	}
	q->path = fidx_db_name(a->db);
	q->origin = fidx_db_origin(q->path);
	struct fidx_store_opts opts = {.origin = q->origin, .warn = warn};
	if (!(q->st = fidx_store_open(q->path, FIDX_STORE_READ, &opts, err)) ||
	    fidx_store_scans(q->st, NULL, &q->all, err) < 0) {
		if (err->msg[0])
			fidx_error("%s", err->msg);
		goto fail;
	}
	/* Named from now on as the store names it (a server without its password). */
	q->path = fidx_store_name(q->st);
	if (a->nhosts && keep_hosts(q, a) < 0)
		goto fail;
	if (select_scans(q, a->scan, a->every_scan, a->digests) < 0)
		goto fail;
	for (size_t i = 0; !a->raw && i < q->nscans; i++)
		if (q->sel.scans.rows[i].damage) {
			fidx_query_damaged(q, q->sel.scans.rows[i].damage);
			goto fail;
		}
	return q;
fail:
	fidx_store_close(q->st, NULL);
	query_free(q);
	return NULL;
}

int fidx_query_select_digests(struct fidx_query *q, const struct fidx_query_args *a,
			      unsigned digests)
{
	if (a->scan || a->every_scan)
		return 0;
	if (select_scans(q, NULL, false, digests) < 0)
		return -1;
	for (size_t i = 0; !a->raw && i < q->nscans; i++)
		if (q->sel.scans.rows[i].damage)
			return fidx_query_damaged(q, q->sel.scans.rows[i].damage), -1;
	return 0;
}

void fidx_query_rows(const struct fidx_query *q, uint64_t columns, enum fidx_rows_order order,
		     struct fidx_rows_query *rq)
{
	*rq = (struct fidx_rows_query){
		.scans = q->ids, .roots = q->roots, .nscans = q->nscans, .columns = columns,
		.order = order, .hidden = q->sel.hidden, .nhidden = q->sel.nhidden,
	};
}

int fidx_query_fail(const struct fidx_query *q, const struct fidx_error *err)
{
	(void)q;
	if (err->msg[0])
		fidx_error("%s", err->msg);
	return 2;
}

int fidx_query_damaged(const struct fidx_query *q, const char *what)
{
	fidx_error("database '%s' is damaged: %s", fidx_quote(q->path), what);
	return 2;
}

uint64_t fidx_query_count(const struct fidx_query *q, bool files)
{
	return fidx_store_count(q->st, q->ids, q->nscans, files);
}

int fidx_query_close(struct fidx_query *q)
{
	struct fidx_error err;
	if (!q)
		return 0;
	int ret = fidx_store_close(q->st, &err);
	if (ret < 0 && err.msg[0])
		fidx_error("%s", err.msg);
	query_free(q);
	return ret;
}

char *fidx_query_abspath(const char *arg)
{
#ifdef _WIN32
	return fidx_win_stored(arg);
#endif
	char *cwd = NULL, *buf;
	if (arg[0] != '/' && !(cwd = getcwd(NULL, 0)))
		return NULL;
	size_t size = (cwd ? strlen(cwd) + 1 : 0) + strlen(arg) + 2;
	if (!(buf = malloc(size))) {
		free(cwd);
		return NULL;
	}
	snprintf(buf, size, "%s/%s", cwd ? cwd : "", arg);
	free(cwd);

	/* Copy component by component; out is always shorter than in. */
	size_t o = 0;
	for (const char *p = buf; *p;) {
		while (*p == '/')
			p++;
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && buf[--o] != '/')
				;
		} else if (n && !(n == 1 && p[0] == '.')) {
			buf[o++] = '/';
			memmove(buf + o, p, n);
			o += n;
		}
		p = e;
	}
	if (o == 0)
		buf[o++] = '/';
	buf[o] = '\0';
	return buf;
}

int fidx_query_db_path_args(int argc, char **argv, int first, const char *command,
			    struct fidx_query_args *a, char **path)
{
	const char *arg = NULL;
	int nargs = argc - first;
	*path = NULL;
	if (nargs == 2 && !a->db) {
		a->db = argv[first];
		arg = argv[first + 1];
	} else if (nargs == 1) {
		if (!fidx_query_db_arg(argv[first], a))
			arg = argv[first];
	} else if (nargs > 0) {
		fidx_error("unexpected argument '%s' (see 'fidx %s --help')",
			   fidx_quote(argv[argc - 1]), command);
		return -1;
	}
	if (arg && !(*path = fidx_query_abspath(arg))) {
		fidx_error("cannot use path '%s': %s", fidx_quote(arg), strerror(errno));
		return -1;
	}
	return 0;
}
