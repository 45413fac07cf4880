/*
 * fuzz_rowcheck.c - the row checks (src/store/sqlite/rowcheck.c): whether a
 * value SQLite hands back is one fidx could have written.
 *
 * The input picks a rule, a digest length, the value's SQLite type and its
 * bytes, and a scan root; the value is made by SQLite itself (bound to
 * `SELECT ?1` and read back), as a reader gets it from a row.  What the
 * check says is compared with the rule as docs/SCHEMA.md states it, byte
 * for byte: a value judged sound must be of the column's one type, a digest
 * of its length, a path absolute and below the root, a type one letter of
 * FIDX_TYPES, a status exactly one of the four; one judged unsound must say
 * why.
 */
#include <sqlite3.h>

#include "fuzz/fuzz.h"
#include "row.h"
#include "rowcheck.h"

static sqlite3 *db;
static sqlite3_stmt *select_value;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT ?1", -1, &select_value, NULL) != SQLITE_OK)
		abort();
	return 0;
}

/* Whether the n bytes at s are exactly the string w. */
static bool is(const unsigned char *s, size_t n, const char *w)
{
	return n == strlen(w) && memcmp(s, w, n) == 0;
}

/* Makes a value from the input, checks it, and holds the answer to the rule. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = {data, size};
	enum fidx_rowcheck_rule rule = fuzz_byte(&in) % (FIDX_RULE_DIGEST + 1);
	int len = fuzz_byte(&in) % 70;
	int type = fuzz_byte(&in) % 5 + 1; /* SQLITE_INTEGER ... SQLITE_NULL */
	size_t rootlen;
	char *root = fuzz_piece(&in, '\n', &rootlen);
	const uint8_t *bytes = in.p;
	size_t n = in.n;

	sqlite3_reset(select_value);
	int64_t i = 0;
	memcpy(&i, bytes, n < 8 ? n : 8);
	double f = (double)i / 3.0;
	switch (type) {
	case SQLITE_INTEGER:
		sqlite3_bind_int64(select_value, 1, i);
		break;
	case SQLITE_FLOAT:
		sqlite3_bind_double(select_value, 1, f);
		break;
	case SQLITE_TEXT:
		sqlite3_bind_text(select_value, 1, (const char *)bytes, (int)n, SQLITE_STATIC);
		break;
	case SQLITE_BLOB:
		sqlite3_bind_blob(select_value, 1, bytes, (int)n, SQLITE_STATIC);
		break;
	default:
		sqlite3_bind_null(select_value, 1);
	}
	if (sqlite3_step(select_value) != SQLITE_ROW)
		abort();
	sqlite3_value *v = sqlite3_column_value(select_value, 0);
	if (sqlite3_value_type(v) != type)
		abort();
	char why[FIDX_ROWCHECK_MSG] = "";
	bool unsound = fidx_rowcheck_value(rule, len, "col", v, root, root ? rootlen : 0, why,
					   sizeof(why));
	if (unsound && !why[0])
		abort();
	if (!unsound) {
		const unsigned char *t = type == SQLITE_TEXT ? sqlite3_value_text(v) : NULL;
		size_t tn = (size_t)sqlite3_value_bytes(v);
		bool ok = false;
		switch (rule) {
		case FIDX_RULE_INT:
			ok = type == SQLITE_INTEGER || type == SQLITE_NULL;
			break;
		case FIDX_RULE_TEXT:
			ok = type == SQLITE_TEXT || type == SQLITE_NULL;
			break;
		case FIDX_RULE_NAME:
			ok = type == SQLITE_TEXT;
			break;
		case FIDX_RULE_PATH:
		case FIDX_RULE_ROOT:
			ok = t && tn && t[0] == '/' &&
			     (!root || fidx_rowcheck_below(root, rootlen, (const char *)t, tn));
			break;
		case FIDX_RULE_TYPE:
			ok = type == SQLITE_NULL || (t && tn == 1 && fidx_type_bit((char)t[0]));
			break;
		case FIDX_RULE_STATUS:
			ok = t && (is(t, tn, "running") || is(t, tn, "complete") ||
				   is(t, tn, "interrupted") || is(t, tn, "failed"));
			break;
		case FIDX_RULE_DIGEST:
			ok = type == SQLITE_NULL || (type == SQLITE_BLOB && tn == (size_t)len);
			break;
		}
		if (!ok)
			abort(); /* judged sound, yet not what the rule allows */
	}
	/* Below: the root itself, or a path that goes on with '/' after it. */
	if (root && n && fidx_rowcheck_below(root, rootlen, (const char *)bytes, n) &&
	    !(rootlen == 1 && root[0] == '/' ? bytes[0] == '/'
	      : n >= rootlen && memcmp(bytes, root, rootlen) == 0))
		abort();
	free(root);
	return 0;
}
