/*
 * rowcheck.c - the value checks of rowcheck.h: one sqlite3_value_type() per
 * value, and the bytes of digests, paths and type letters.
 */
#include "rowcheck.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "row.h"

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

bool fidx_rowcheck_value(enum fidx_rowcheck_rule rule, int len, const char *name,
			 sqlite3_value *v, const char *root, size_t rootlen, char *buf,
			 size_t size)
{
	int type = sqlite3_value_type(v);
	const unsigned char *text;
	size_t n;

	switch (rule) {
	case FIDX_RULE_INT:
		if (type == SQLITE_INTEGER || type == SQLITE_NULL)
			return false;
		snprintf(buf, size, "%s holds %s, not an integer", name, type_name(type));
		return true;
	case FIDX_RULE_TEXT:
	case FIDX_RULE_NAME:
		if (type == SQLITE_TEXT || (type == SQLITE_NULL && rule == FIDX_RULE_TEXT))
			return false;
		snprintf(buf, size, "%s holds %s, not text", name, type_name(type));
		return true;
	case FIDX_RULE_PATH:
	case FIDX_RULE_ROOT:
		if (type != SQLITE_TEXT) {
			snprintf(buf, size, "%s holds %s, not text", name, type_name(type));
			return true;
		}
		text = sqlite3_value_text(v);
		n = (size_t)sqlite3_value_bytes(v);
		if (!text || n == 0 || text[0] != '/') {
			snprintf(buf, size, "%s '%s' is not absolute", name,
				 fidx_quote(text ? (const char *)text : ""));
			return true;
		}
		if (root && !fidx_rowcheck_below(root, rootlen, (const char *)text, n)) {
			char quoted[300];
			snprintf(quoted, sizeof(quoted), "%s", fidx_quote(root));
			snprintf(buf, size, "path '%s' is not below the scan's root '%s'",
				 fidx_quote((const char *)text), quoted);
			return true;
		}
		return false;
	case FIDX_RULE_TYPE:
		if (type == SQLITE_NULL)
			return false;
		text = sqlite3_value_text(v);
		if (type == SQLITE_TEXT && sqlite3_value_bytes(v) == 1 && text &&
		    fidx_type_bit((char)text[0]))
			return false;
		snprintf(buf, size, "type holds %s, not a type letter fidx writes",
			 type == SQLITE_TEXT ? "another text" : type_name(type));
		return true;
	case FIDX_RULE_STATUS:
		text = sqlite3_value_text(v);
		if (type == SQLITE_TEXT && text &&
		    (strcmp((const char *)text, "running") == 0 ||
		     strcmp((const char *)text, "complete") == 0 ||
		     strcmp((const char *)text, "interrupted") == 0 ||
		     strcmp((const char *)text, "failed") == 0))
			return false;
		snprintf(buf, size, "status holds %s, not a scan status",
			 type == SQLITE_TEXT ? "another text" : type_name(type));
		return true;
	case FIDX_RULE_DIGEST:
		if (type == SQLITE_NULL || (type == SQLITE_BLOB && sqlite3_value_bytes(v) == len))
			return false;
		if (type == SQLITE_BLOB)
			snprintf(buf, size, "%s holds %d byte%s, not %d", name, sqlite3_value_bytes(v),
				 sqlite3_value_bytes(v) == 1 ? "" : "s", len);
		else
			snprintf(buf, size, "%s holds %s, not a blob", name, type_name(type));
		return true;
	}
	return false;
}
