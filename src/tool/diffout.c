/*
 * diffout.c - what diff and check print: each difference as a line or a JSON
 * object, with -v the old and new values, read again by id (diffout.h).
 */
#include "diffout.h"

#include <errno.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "diag.h"
#include "json.h"
#include "output.h"
#include "when.h"

int fidx_diff_ignore_arg(const char *arg, void *mask)
{
	const char *bad;
	size_t badlen;
	unsigned m;
	if (fidx_diff_attr_parse(arg, &m, &bad, &badlen) < 0) {
		/* Both parts quoted: no raw byte reaches a terminal. */
		char part[128];
		snprintf(part, sizeof(part), "%.*s", (int)(badlen < sizeof(part) ? badlen
									: sizeof(part) - 1), bad);
		fidx_error("invalid --ignore '%s': '%s' is not an attribute (see 'fidx diff --help')",
			   fidx_quote(arg), fidx_quote(part));
		return -1;
	}
	*(unsigned *)mask |= m;
	return 0;
}

int fidx_diff_open_status(const struct fidx_error *err)
{
	return err->code == EPROTONOSUPPORT ? FIDX_DIFF_EXIT_VERSION : FIDX_DIFF_EXIT_READ;
}

/* The words of each kind, as printed. */
static const char *const kind_names[FIDX_DIFF_NKINDS] = {"added", "removed", "changed", "moved"};

/* The digests shown for content, strongest first. */
static const enum fidx_digest digest_pref[FIDX_NDIGESTS] = {
	FIDX_SHA256, FIDX_SHA512, FIDX_SHA1, FIDX_XXH128, FIDX_MD5,
};

/*
 * The digest to show for the content of a (OLD) and b (NEW): the first of
 * digest_pref the two have in common and that differs; else -1 (each side
 * then shows its own first).
 */
static int shown_digest(const struct fidx_diff_row *a, const struct fidx_diff_row *b)
{
	unsigned common = a->dmask & b->dmask;
	for (int i = 0; i < FIDX_NDIGESTS; i++) {
		enum fidx_digest d = digest_pref[i];
		if ((common >> d & 1) && (a->dlen[d] != b->dlen[d] ||
					  (a->dlen[d] && memcmp(a->digest[d], b->digest[d],
								(size_t)a->dlen[d]) != 0)))
			return (int)d;
	}
	return -1;
}

/* The integer column that holds a plain integer or time attribute, or -1. */
static int attr_column(enum fidx_diff_attr a)
{
	switch (a) {
	case FIDX_DIFF_SIZE: return FIDX_DIFF_V_SIZE;
	case FIDX_DIFF_OWNER: return FIDX_DIFF_V_UID;
	case FIDX_DIFF_GROUP: return FIDX_DIFF_V_GID;
	case FIDX_DIFF_NLINK: return FIDX_DIFF_V_NLINK;
	case FIDX_DIFF_MTIME: return FIDX_DIFF_V_MTIME;
	case FIDX_DIFF_CTIME: return FIDX_DIFF_V_CTIME;
	case FIDX_DIFF_ATIME: return FIDX_DIFF_V_ATIME;
	case FIDX_DIFF_BTIME: return FIDX_DIFF_V_BTIME;
	default: return -1;
	}
}

/* Whether attribute a is a time (printed in ISO 8601). */
static bool is_time(enum fidx_diff_attr a)
{
	return a == FIDX_DIFF_MTIME || a == FIDX_DIFF_CTIME || a == FIDX_DIFF_ATIME ||
	       a == FIDX_DIFF_BTIME;
}

/*
 * Writes r's value of attribute a for people: '-' for NULL, ls -l modes, ISO
 * times, "major:minor inode", quoted text (fidx_quote: one line whatever the
 * bytes), "name:hex" for content (digest d, or r's strongest when d < 0).
 */
static void text_value(FILE *out, const struct fidx_diff_row *r, enum fidx_diff_attr a, int d)
{
	int col = attr_column(a);
	char buf[FIDX_WHEN_ISO];

	if (col >= 0) {
		if (!(r->present >> col & 1))
			fputs("-", out);
		else if (is_time(a))
			fputs(fidx_when_iso(r->t[col - FIDX_DIFF_V_ATIME], buf), out);
		else
			fprintf(out, "%lld", (long long)r->v[col]);
		return;
	}
	switch (a) {
	case FIDX_DIFF_TYPE:
		fputs(fidx_type_name(r->type) ? fidx_type_name(r->type) : "-", out);
		break;
	case FIDX_DIFF_PERM:
		if (r->present >> FIDX_DIFF_V_MODE & 1)
			fputs(fidx_mode_string((uint32_t)r->v[FIDX_DIFF_V_MODE], buf), out);
		else
			fputs("-", out);
		break;
	case FIDX_DIFF_INODE:
		if ((r->present >> FIDX_DIFF_V_DEV & 1) && (r->present >> FIDX_DIFF_V_INO & 1))
			fprintf(out, "%u:%u %llu", major((dev_t)r->v[FIDX_DIFF_V_DEV]), minor((dev_t)r->v[FIDX_DIFF_V_DEV]),
				(unsigned long long)r->v[FIDX_DIFF_V_INO]);
		else
			fputs("-", out);
		break;
	case FIDX_DIFF_TARGET:
	case FIDX_DIFF_ERROR:
	case FIDX_DIFF_STATE: {
		const char *s = a == FIDX_DIFF_TARGET ? r->target
				: a == FIDX_DIFF_ERROR ? r->error : r->state;
		if (s)
			fprintf(out, "'%s'", fidx_quote(s));
		else
			fputs("-", out);
		break;
	}
	case FIDX_DIFF_CONTENT:
		for (int i = 0; d < 0 && i < FIDX_NDIGESTS; i++)
			if (r->dmask >> digest_pref[i] & 1)
				d = (int)digest_pref[i];
		if (d >= 0 && (r->dmask >> d & 1)) {
			fprintf(out, "%s:", fidx_digest_name((enum fidx_digest)d));
			fidx_write_hex(out, r->digest[d], (size_t)r->dlen[d]);
		} else {
			fputs("-", out);
		}
		break;
	default:
		break;
	}
}

/* Writes r's value of attribute a as a JSON value (null for NULL). */
static void json_value(FILE *out, const struct fidx_diff_row *r, enum fidx_diff_attr a)
{
	int col = attr_column(a);
	char buf[FIDX_WHEN_ISO];

	if (col >= 0) {
		if (!(r->present >> col & 1))
			fputs("null", out);
		else if (is_time(a))
			fprintf(out, "\"%s\"", fidx_when_iso(r->t[col - FIDX_DIFF_V_ATIME], buf));
		else
			fprintf(out, "%lld", (long long)r->v[col]);
		return;
	}
	switch (a) {
	case FIDX_DIFF_TYPE:
		if (fidx_type_name(r->type))
			fprintf(out, "\"%s\"", fidx_type_name(r->type));
		else
			fputs("null", out);
		break;
	case FIDX_DIFF_PERM:
		if (r->present >> FIDX_DIFF_V_MODE & 1)
			fprintf(out, "\"%s\"", fidx_mode_string((uint32_t)r->v[FIDX_DIFF_V_MODE], buf));
		else
			fputs("null", out);
		break;
	case FIDX_DIFF_INODE:
		if ((r->present >> FIDX_DIFF_V_DEV & 1) && (r->present >> FIDX_DIFF_V_INO & 1))
			fprintf(out, "{\"dev\":%llu,\"ino\":%llu}", (unsigned long long)r->v[FIDX_DIFF_V_DEV],
				(unsigned long long)r->v[FIDX_DIFF_V_INO]);
		else
			fputs("null", out);
		break;
	case FIDX_DIFF_TARGET:
	case FIDX_DIFF_ERROR:
	case FIDX_DIFF_STATE: {
		const char *s = a == FIDX_DIFF_TARGET ? r->target
				: a == FIDX_DIFF_ERROR ? r->error : r->state;
		if (s)
			fidx_json_string(out, s);
		else
			fputs("null", out);
		break;
	}
	case FIDX_DIFF_CONTENT:
		putc('{', out);
		for (int d = 0, n = 0; d < FIDX_NDIGESTS; d++) {
			if (!(r->dmask >> d & 1))
				continue;
			fprintf(out, "%s\"%s\":", n++ ? "," : "", fidx_digest_name((enum fidx_digest)d));
			fidx_json_hex(out, r->digest[d], (size_t)r->dlen[d]);
		}
		putc('}', out);
		break;
	default:
		break;
	}
}

/* Whether e shows attribute a: it changed, or content could not be compared. */
static bool shows(const struct fidx_diff_entry *e, int a)
{
	return (e->changed >> a & 1) || (a == FIDX_DIFF_CONTENT && e->unknown);
}

/*
 * Writes the object "key":{...} of r's values of the attributes e shows (a
 * link target as fidx_json_path() writes a path).
 */
static void json_values(FILE *out, const char *key, const struct fidx_diff_entry *e,
			const struct fidx_diff_row *r)
{
	int n = 0;
	fprintf(out, ",\"%s\":{", key);
	for (int a = 0; a < FIDX_DIFF_NATTRS; a++) {
		if (!shows(e, a))
			continue;
		if (n++)
			putc(',', out);
		if (a == FIDX_DIFF_TARGET && r->target) {
			fidx_json_path(out, "target", r->target);
		} else {
			fprintf(out, "\"%s\":", fidx_diff_attr_name((enum fidx_diff_attr)a));
			json_value(out, r, (enum fidx_diff_attr)a);
		}
	}
	putc('}', out);
}

/* Writes one entry as a JSON object on its own line. */
static void print_json(FILE *out, const struct fidx_diff_entry *e, const struct fidx_diff_row *a,
		       const struct fidx_diff_row *b)
{
	char summary[FIDX_DIFF_NATTRS + 1];
	fprintf(out, "{\"kind\":\"%s\",", kind_names[e->kind]);
	fidx_json_path(out, "path", e->path);
	if (e->old_path) {
		putc(',', out);
		fidx_json_path(out, "old_path", e->old_path);
	}
	if (e->kind == FIDX_DIFF_CHANGED || e->kind == FIDX_DIFF_MOVED) {
		fprintf(out, ",\"summary\":\"%s\",\"changes\":[", fidx_diff_summary(e, summary));
		for (int x = 0, n = 0; x < FIDX_DIFF_NATTRS; x++)
			if (e->changed >> x & 1)
				fprintf(out, "%s\"%s\"", n++ ? "," : "", fidx_diff_attr_name((enum fidx_diff_attr)x));
		putc(']', out);
		if (e->unknown)
			fputs(",\"unknown\":[\"content\"]", out);
		if (a && b) {
			json_values(out, "old", e, a);
			json_values(out, "new", e, b);
		}
	}
	fputs("}\n", out);
}

/* Writes one entry as text: its line, then with a and b one line per attribute shown. */
static void print_text(FILE *out, const struct fidx_diff_entry *e, const struct fidx_diff_row *a,
		       const struct fidx_diff_row *b, bool nul)
{
	char summary[FIDX_DIFF_NATTRS + 1];
	int end = nul ? '\0' : '\n';
	fprintf(out, "%-7s %s ", kind_names[e->kind], fidx_diff_summary(e, summary));
	if (e->old_path) {
		fidx_out_name(out, e->old_path);
		if (nul)
			putc('\0', out);
		else
			fputs(" -> ", out);
	}
	fidx_out_name(out, e->path);
	putc(end, out);
	if (!a || !b)
		return;
	int d = shown_digest(a, b);
	for (int x = 0; x < FIDX_DIFF_NATTRS; x++) {
		if (!shows(e, x))
			continue;
		fprintf(out, "%8s%-8s ", "", fidx_diff_attr_name((enum fidx_diff_attr)x));
		text_value(out, a, (enum fidx_diff_attr)x, d);
		fputs(" -> ", out);
		text_value(out, b, (enum fidx_diff_attr)x, d);
		putc(end, out);
	}
}

/*
 * Reads the row id of side into r, kept in ar (the store's memory moves on
 * with the next read).  Returns 0, or -1 with err set.
 */
static int fetch(const struct fidx_diff_side *side, int64_t id, struct fidx_arena *ar,
		 struct fidx_diff_row *r, struct fidx_error *err)
{
	const char *root = side->scan->root;
	struct fidx_rows_query q = {.scans = &side->scan->id, .roots = &root, .nscans = 1,
				    .columns = FIDX_DIFF_COLUMNS};
	const struct fidx_row *row;
	int rc = fidx_store_row(side->st, &q, id, &row, err);
	if (rc < 0)
		return -1;
	if (rc == 0)
		return fidx_fail(err, ENOENT, "file row %lld vanished from the database",
				 (long long)id);
	fidx_diff_row_of(row, r);
	if (fidx_diff_row_keep(ar, r) < 0)
		return fidx_fail_nomem(err);
	return 0;
}

int fidx_diff_print(const struct fidx_diff *d, const struct fidx_diff_side *old,
		    const struct fidx_diff_side *new, const struct fidx_diff_print_opts *o,
		    FILE *out, struct fidx_error *err)
{
	struct fidx_arena ar = {0};
	int ret = -1;

	for (size_t i = 0; i < d->n; i++) {
		const struct fidx_diff_entry *e = &d->entries[i];
		struct fidx_diff_row a, b;
		bool values = o->verbose && (e->kind == FIDX_DIFF_CHANGED || e->kind == FIDX_DIFF_MOVED);
		if (values && (fetch(old, e->old_id, &ar, &a, err) < 0 ||
			       fetch(new, e->new_id, &ar, &b, err) < 0))
			goto out;
		if (o->json)
			print_json(out, e, values ? &a : NULL, values ? &b : NULL);
		else
			print_text(out, e, values ? &a : NULL, values ? &b : NULL, o->nul);
	}
	ret = 0;
out:
	fidx_arena_free(&ar);
	return ret;
}
