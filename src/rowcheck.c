/*
 * rowcheck.c - the row checks of rowcheck.h.
 *
 * fidx_rowcheck_new() looks each column of the statement up once, by name,
 * in the table below; checking a row is then one sqlite3_column_type() per
 * checked column (and the bytes of digests, paths and type letters).
 */
#include "rowcheck.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "record.h"

/* What a column must hold. */
enum rule {
	RULE_ID,      /* always an integer (a rowid, a column selected by): named, not checked */
	RULE_INT,     /* INTEGER, or NULL */
	RULE_TEXT,    /* TEXT, or NULL */
	RULE_NAME,    /* TEXT */
	RULE_PATH,    /* TEXT, absolute, below the scan's root when it is known */
	RULE_ROOT,    /* TEXT, absolute */
	RULE_TYPE,    /* NULL, or one of the type letters fidx writes */
	RULE_STATUS,  /* one of the four scan statuses */
	RULE_DIGEST,  /* NULL, or a BLOB of its length */
};

/* The columns of fidx's tables (file, scan, file_digest) by name, and their rules. */
static const struct {
	const char *name;
	enum rule rule;
	int digest;  /* RULE_DIGEST: an enum fidx_digest, or -1 with len */
	int len;
} rules[] = {
	/* scan_id: every query of file rows selects by it, so a row read has an integer one. */
	{"id", RULE_ID, 0, 0}, {"scan_id", RULE_ID, 0, 0}, {"size", RULE_INT, 0, 0},
	{"blocks", RULE_INT, 0, 0}, {"mode", RULE_INT, 0, 0}, {"uid", RULE_INT, 0, 0},
	{"gid", RULE_INT, 0, 0}, {"nlink", RULE_INT, 0, 0}, {"dev", RULE_INT, 0, 0},
	{"ino", RULE_INT, 0, 0}, {"atime_ns", RULE_INT, 0, 0}, {"mtime_ns", RULE_INT, 0, 0},
	{"ctime_ns", RULE_INT, 0, 0}, {"btime_ns", RULE_INT, 0, 0},
	{"digests_from", RULE_INT, 0, 0}, {"file_id", RULE_ID, 0, 0}, {"read_ns", RULE_INT, 0, 0},
	{"edge_block", RULE_INT, 0, 0}, {"started_ns", RULE_INT, 0, 0},
	{"finished_ns", RULE_INT, 0, 0}, {"entries", RULE_INT, 0, 0}, {"files", RULE_INT, 0, 0},
	{"dirs", RULE_INT, 0, 0}, {"bytes", RULE_INT, 0, 0}, {"errors", RULE_INT, 0, 0},
	{"reused", RULE_INT, 0, 0}, {"hashed", RULE_INT, 0, 0}, {"base_scan_id", RULE_INT, 0, 0},
	{"pid", RULE_INT, 0, 0}, {"run_ns", RULE_INT, 0, 0},
	/* Schema 4's times beyond the *_ns columns (dbtime.h). */
	{"atime_sec", RULE_INT, 0, 0}, {"atime_nsec", RULE_INT, 0, 0},
	{"mtime_sec", RULE_INT, 0, 0}, {"mtime_nsec", RULE_INT, 0, 0},
	{"ctime_sec", RULE_INT, 0, 0}, {"ctime_nsec", RULE_INT, 0, 0},
	{"btime_sec", RULE_INT, 0, 0}, {"btime_nsec", RULE_INT, 0, 0},
	{"name", RULE_NAME, 0, 0}, {"ext", RULE_NAME, 0, 0},
	{"link_target", RULE_TEXT, 0, 0}, {"error", RULE_TEXT, 0, 0}, {"host", RULE_TEXT, 0, 0},
	{"os", RULE_TEXT, 0, 0}, {"kernel", RULE_TEXT, 0, 0}, {"arch", RULE_TEXT, 0, 0},
	{"version", RULE_TEXT, 0, 0}, {"options", RULE_TEXT, 0, 0},
	{"path", RULE_PATH, 0, 0}, {"root", RULE_ROOT, 0, 0}, {"type", RULE_TYPE, 0, 0},
	{"status", RULE_STATUS, 0, 0},
	{"md5", RULE_DIGEST, FIDX_MD5, 0}, {"sha1", RULE_DIGEST, FIDX_SHA1, 0},
	{"sha256", RULE_DIGEST, FIDX_SHA256, 0}, {"sha512", RULE_DIGEST, FIDX_SHA512, 0},
	{"xxh128", RULE_DIGEST, FIDX_XXH128, 0},
	{"edges", RULE_DIGEST, -1, 16},  /* file_digest.edges: an XXH3-128 */
	{"seal", RULE_DIGEST, -1, 32},   /* scan.seal: a SHA-256 */
};

/* A checked column of the statement. */
struct column {
	int col;             /* its index in the statement */
	enum rule rule;
	int len;             /* RULE_DIGEST: bytes */
	const char *name;    /* for the message */
};

/* A scan's root, for RULE_PATH. */
struct root {
	int64_t scan;
	char *root;
	size_t len;
};

struct fidx_rowcheck {
	struct column *cols;   /* the checked columns */
	size_t ncols;
	int id_col, scan_col;  /* the columns id and scan_id, -1 when absent */
	bool scan_row;         /* a row of scan: an id and a root, no scan_id */
	struct root *roots;    /* the roots told (fidx_rowcheck_root()) */
	size_t nroots;
	char msg[640];         /* the last message */
};

struct fidx_rowcheck *fidx_rowcheck_new(sqlite3_stmt *s, uint64_t columns)
{
	int n = sqlite3_column_count(s);
	struct fidx_rowcheck *c = calloc(1, sizeof(*c));
	if (!c || !(c->cols = calloc(n ? (size_t)n : 1, sizeof(*c->cols)))) {
		free(c);
		return NULL;
	}
	c->id_col = c->scan_col = -1;
	for (int i = 0; i < n; i++) {
		const char *name = sqlite3_column_name(s, i);
		if (i < 64 && !(columns >> i & 1))
			name = NULL;
		for (size_t r = 0; name && r < sizeof(rules) / sizeof(rules[0]); r++) {
			if (strcmp(name, rules[r].name) != 0)
				continue;
			int len = rules[r].rule != RULE_DIGEST ? 0
				  : rules[r].digest >= 0 ? (int)fidx_digest_len(rules[r].digest)
				  : rules[r].len;
			if (strcmp(name, "id") == 0)
				c->id_col = i;
			else if (strcmp(name, "scan_id") == 0)
				c->scan_col = i;
			if (rules[r].rule != RULE_ID)
				c->cols[c->ncols++] = (struct column){i, rules[r].rule, len,
								      rules[r].name};
			break;
		}
	}
	for (size_t i = 0; i < c->ncols; i++)
		c->scan_row |= c->cols[i].rule == RULE_ROOT && c->id_col >= 0 && c->scan_col < 0;
	return c;
}

int fidx_rowcheck_root(struct fidx_rowcheck *c, int64_t scan_id, const char *root)
{
	struct root *r = realloc(c->roots, (c->nroots + 1) * sizeof(*r));
	if (!r)
		return -1;
	c->roots = r;
	r += c->nroots;
	if (!(r->root = strdup(root)))
		return -1;
	r->scan = scan_id;
	r->len = strlen(root);
	c->nroots++;
	return 0;
}

/* The root of scan (the only one told when the statement has no scan_id), or NULL. */
static const struct root *root_of(const struct fidx_rowcheck *c, sqlite3_stmt *s)
{
	if (c->scan_col < 0)
		return c->nroots == 1 ? &c->roots[0] : NULL;
	int64_t scan = sqlite3_column_int64(s, c->scan_col);
	for (size_t i = 0; i < c->nroots; i++)
		if (c->roots[i].scan == scan)
			return &c->roots[i];
	return NULL;
}

bool fidx_rowcheck_below(const char *root, size_t rootlen, const char *path, size_t n)
{
	if (rootlen == 1 && root[0] == '/')
		return n >= 1 && path[0] == '/';
	return n >= rootlen && memcmp(path, root, rootlen) == 0 &&
	       (n == rootlen || path[rootlen] == '/');
}

/* The name of an SQLite type, for a message. */
static const char *type_name(int type)
{
	switch (type) {
	case SQLITE_INTEGER: return "an integer";
	case SQLITE_FLOAT: return "a real number";
	case SQLITE_TEXT: return "text";
	case SQLITE_BLOB: return "a blob";
	default: return "NULL";
	}
}

/*
 * What is wrong with the value of column k of the row, or NULL when nothing.
 * Through the column's value: its accessors cost less than the column calls
 * (one thread owns the connection, so an unprotected value is safe here).
 */
static const char *column_fault(const struct fidx_rowcheck *c, const struct column *k,
				sqlite3_stmt *s, char *buf, size_t size)
{
	sqlite3_value *v = sqlite3_column_value(s, k->col);
	int type = sqlite3_value_type(v);
	const unsigned char *text;
	size_t n;

	switch (k->rule) {
	case RULE_ID:
		return NULL;
	case RULE_INT:
		if (type == SQLITE_INTEGER || type == SQLITE_NULL)
			return NULL;
		snprintf(buf, size, "%s holds %s, not an integer", k->name, type_name(type));
		return buf;
	case RULE_TEXT:
	case RULE_NAME:
		if (type == SQLITE_TEXT || (type == SQLITE_NULL && k->rule == RULE_TEXT))
			return NULL;
		snprintf(buf, size, "%s holds %s, not text", k->name, type_name(type));
		return buf;
	case RULE_PATH:
	case RULE_ROOT:
		if (type != SQLITE_TEXT) {
			snprintf(buf, size, "%s holds %s, not text", k->name, type_name(type));
			return buf;
		}
		text = sqlite3_value_text(v);
		n = (size_t)sqlite3_value_bytes(v);
		if (!text || n == 0 || text[0] != '/') {
			snprintf(buf, size, "%s '%s' is not absolute", k->name,
				 fidx_quote(text ? (const char *)text : ""));
			return buf;
		}
		if (k->rule == RULE_PATH) {
			const struct root *r = root_of(c, s);
			if (r && !fidx_rowcheck_below(r->root, r->len, (const char *)text, n)) {
				char quoted[300];
				snprintf(quoted, sizeof(quoted), "%s", fidx_quote(r->root));
				snprintf(buf, size, "path '%s' is not below the scan's root '%s'",
					 fidx_quote((const char *)text), quoted);
				return buf;
			}
		}
		return NULL;
	case RULE_TYPE:
		if (type == SQLITE_NULL)
			return NULL;
		text = sqlite3_value_text(v);
		if (type == SQLITE_TEXT && sqlite3_value_bytes(v) == 1 && text &&
		    strchr("fdlpscb", text[0]))
			return NULL;
		snprintf(buf, size, "type holds %s, not a type letter fidx writes",
			 type == SQLITE_TEXT ? "another text" : type_name(type));
		return buf;
	case RULE_STATUS:
		text = sqlite3_value_text(v);
		if (type == SQLITE_TEXT && text &&
		    (strcmp((const char *)text, "running") == 0 ||
		     strcmp((const char *)text, "complete") == 0 ||
		     strcmp((const char *)text, "interrupted") == 0 ||
		     strcmp((const char *)text, "failed") == 0))
			return NULL;
		snprintf(buf, size, "status holds %s, not a scan status",
			 type == SQLITE_TEXT ? "another text" : type_name(type));
		return buf;
	case RULE_DIGEST:
		if (type == SQLITE_NULL ||
		    (type == SQLITE_BLOB && sqlite3_value_bytes(v) == k->len))
			return NULL;
		if (type == SQLITE_BLOB)
			snprintf(buf, size, "%s holds %d byte%s, not %d", k->name,
				 sqlite3_value_bytes(v),
				 sqlite3_value_bytes(v) == 1 ? "" : "s", k->len);
		else
			snprintf(buf, size, "%s holds %s, not a blob", k->name, type_name(type));
		return buf;
	}
	return NULL;
}

const char *fidx_rowcheck(struct fidx_rowcheck *c, sqlite3_stmt *s)
{
	char what[512], where[64] = "";
	for (size_t i = 0; i < c->ncols; i++) {
		if (!column_fault(c, &c->cols[i], s, what, sizeof(what)))
			continue;
		long long scan = c->scan_col >= 0 ? sqlite3_column_int64(s, c->scan_col) : 0;
		long long id = c->id_col >= 0 ? sqlite3_column_int64(s, c->id_col) : 0;
		if (c->scan_row)
			snprintf(where, sizeof(where), "scan %lld: ", id);
		else if (c->scan_col >= 0 && c->id_col >= 0)
			snprintf(where, sizeof(where), "scan %lld, row %lld: ", scan, id);
		else if (c->scan_col >= 0)
			snprintf(where, sizeof(where), "scan %lld: ", scan);
		else if (c->id_col >= 0)
			snprintf(where, sizeof(where), "row %lld: ", id);
		snprintf(c->msg, sizeof(c->msg), "%s%s", where, what);
		return c->msg;
	}
	return NULL;
}

void fidx_rowcheck_free(struct fidx_rowcheck *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nroots; i++)
		free(c->roots[i].root);
	free(c->roots);
	free(c->cols);
	free(c);
}
