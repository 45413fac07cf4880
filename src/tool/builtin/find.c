/*
 * find.c - `fidx find`: a locate that knows more.
 *
 * For each selected scan, in scan order, the store gives the paths in byte
 * order, narrowed by its index to those that may hold every literal of the
 * pattern (findpat.h; store.h, fidx_store_paths()); each path is checked
 * against the pattern itself, then, when a filter, -l or --json needs more
 * than the path, its whole row is read and the filters are applied:
 *
 *     PATTERN ──► findpat: matcher + literals
 *                                   │
 *     scan ──► store: paths (narrowed by the literals)
 *               │ id, path (byte order)
 *               ▼
 *          match? ──► its row (filters, -l, --json) ──► stdout
 *
 * Everything is read as of one moment (fidx_store_snapshot()), so a scan
 * being written or indexed at the same time does not move under the reads.
 */
#include "builtin.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "color.h"
#include "diag.h"
#include "findpat.h"
#include "json.h"
#include "options.h"
#include "output.h"
#include "progress.h"
#include "query.h"
#include "when.h"

/* What `fidx find --help` says around its options. */
static const struct fidx_help find_help = {
	.command = "find",
	.text = "usage: fidx find [OPTIONS] [DB] [PATTERN]\n\n"
		"List the entries whose path contains PATTERN (bytes, case-sensitive), in\n"
		"byte order of their paths within each scan.  Without PATTERN every entry\n"
		"is listed, subject to the filters; all filters must hold.  With two\n"
		"arguments the first is the database; with one, it is the database when it\n"
		"is a SQLite file.  A PATTERN that starts with '-' follows '--'.\n\n"
		"Substring and glob searches, and regexes with plain runs of three or more\n"
		"bytes, use the index that 'fidx scan' builds after each complete scan; a\n"
		"scan without one (still running, interrupted, or from an older database)\n"
		"is read whole, with the same results.\n\n",
	.footer = "\nExit status: 0 found, 1 nothing found, 2 usage or fatal error.\n",
};

/* What the filters ask for. */
struct filters {
	unsigned types;          /* fidx_type_bit() of each type; 0: any type */
	int size_cmp;            /* -1 less, 0 equal, 1 more; with has_size */
	bool has_size;
	uint64_t size;
	bool has_newer, has_older;
	struct fidx_time newer, older;
	char **ext;              /* lower-cased, without the dot */
	size_t next;
	bool has_user;
	uint32_t uid;
	unsigned char hash[128]; /* the nibbles of --hash, one per byte */
	size_t hash_len;         /* how many; 0: no --hash */
};

/* The entry types, in the order of the bits of struct filters.types (fidx_type_bit()). */
static const char TYPES[] = FIDX_TYPE_LETTERS;

/* Returns whether any filter is set. */
static bool any_filter(const struct filters *f)
{
	return f->types || f->has_size || f->has_newer || f->has_older || f->next || f->has_user ||
	       f->hash_len;
}

/* Reports an invalid option value.  Returns -1. */
static int bad_value(const char *opt, const char *val, const char *expected)
{
	fidx_error("invalid %s '%s': expected %s", opt, fidx_quote(val), expected);
	return -1;
}

/* Parses --type LIST.  Returns 0, or -1 after reporting. */
static int parse_types(const char *s, void *arg)
{
	struct filters *f = arg;
	const char *p = s;
	for (;;) {
		const char *t = *p ? strchr(TYPES, *p) : NULL;
		if (!t || (p[1] && p[1] != ','))
			return bad_value("--type", s, "letters of " FIDX_TYPE_LETTERS " separated by commas");
		f->types |= 1u << (t - TYPES);
		if (!p[1])
			return 0;
		p += 2;
	}
}

/* Parses --size [+-]N[KMGT].  Returns 0, or -1 after reporting. */
static int parse_size(const char *s, void *arg)
{
	struct filters *f = arg;
	const char *p = s;
	char *end;
	f->size_cmp = *p == '+' ? 1 : *p == '-' ? -1 : 0;
	if (*p == '+' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		goto bad;
	errno = 0;
	uint64_t n = strtoull(p, &end, 10);
	const char *units = "KMGT";
	const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
	if (errno || (*end && (!u || end[1])))
		goto bad;
	for (int i = u ? (int)(u - units) + 1 : 0; i > 0; i--) {
		if (n > UINT64_MAX / 1024)
			goto bad;
		n *= 1024;
	}
	f->size = n;
	f->has_size = true;
	return 0;
bad:
	return bad_value("--size", s, "[+-]N with an optional K, M, G or T, e.g. +10M");
}

/* Parses WHEN of option opt (when.h) into *t.  Returns 0, or -1 after reporting. */
static int parse_when(const char *opt, const char *s, struct fidx_time *t)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct fidx_time n = {.sec = now.tv_sec, .nsec = (uint32_t)now.tv_nsec};
	if (fidx_when_parse(s, n, t) == 0)
		return 0;
	fidx_error("invalid %s '%s': expected a date such as 2024-01-31 or 2024-01-31T12:00:00Z,"
		   " or an age such as 7d, 12h, 30m", opt, fidx_quote(s));
	return -1;
}

/* Parses --ext LIST.  Returns 0, or -1 after reporting. */
static int parse_ext(const char *s, void *arg)
{
	struct filters *f = arg;
	const char *p = s;
	for (;;) {
		size_t n = strcspn(p, ",");
		const char *e = p;
		if (n && *e == '.') {
			e++;
			n--;
		}
		if (!n)
			return bad_value("--ext", s, "extensions separated by commas, e.g. jpg,png");
		char **list = realloc(f->ext, (f->next + 1) * sizeof(*list));
		if (!list || !(list[f->next] = strndup(e, n))) {
			if (list)
				f->ext = list;
			fidx_error("out of memory");
			return -1;
		}
		f->ext = list;
		for (char *c = f->ext[f->next]; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		f->next++;
		p += strcspn(p, ",");
		if (!*p)
			return 0;
		p++;
	}
}

/* Parses --user NAME|UID.  Returns 0, or -1 after reporting. */
static int parse_user(const char *s, void *arg)
{
	struct filters *f = arg;
	char *end;
	if (isdigit((unsigned char)*s)) {
		errno = 0;
		unsigned long long n = strtoull(s, &end, 10);
		if (!*end && !errno && n <= UINT32_MAX) {
			f->uid = (uint32_t)n;
			f->has_user = true;
			return 0;
		}
	}
	errno = 0;
	struct passwd *pw = *s ? getpwnam(s) : NULL;
	if (!pw) {
		if (errno && errno != ENOENT && errno != ESRCH)
			fidx_error("cannot look up user '%s': %s", fidx_quote(s), strerror(errno));
		else
			fidx_error("unknown user '%s' (give a name or a uid)", fidx_quote(s));
		return -1;
	}
	f->uid = pw->pw_uid;
	f->has_user = true;
	return 0;
}

/* Parses --hash HEX.  Returns 0, or -1 after reporting. */
static int parse_hash(const char *s, void *arg)
{
	struct filters *f = arg;
	size_t n = strlen(s);
	if (n == 0 || n > 128 || strspn(s, "0123456789abcdefABCDEF") != n)
		return bad_value("--hash", s, "1 to 128 hex digits");
	for (size_t i = 0; i < n; i++) {
		int c = tolower((unsigned char)s[i]);
		f->hash[i] = (unsigned char)(c <= '9' ? c - '0' : c - 'a' + 10);
	}
	f->hash_len = n;
	return 0;
}

/* Parses --newer WHEN.  Returns 0, or -1 after reporting. */
static int parse_newer(const char *s, void *arg)
{
	struct filters *f = arg;
	f->has_newer = true;
	return parse_when("--newer", s, &f->newer);
}

/* Parses --older WHEN.  Returns 0, or -1 after reporting. */
static int parse_older(const char *s, void *arg)
{
	struct filters *f = arg;
	f->has_older = true;
	return parse_when("--older", s, &f->older);
}

/* How PATTERN is read: -g and -r exclude each other. */
struct pattern_kind {
	enum fidx_findpat_kind kind;
	bool icase;
};

/* Takes -g (glob).  Returns 0, or -1 after reporting. */
static int take_kind(struct pattern_kind *k, enum fidx_findpat_kind kind)
{
	if (k->kind != FIDX_FINDPAT_SUBSTRING && k->kind != kind) {
		fidx_error("-g and -r exclude each other");
		return -1;
	}
	k->kind = kind;
	return 0;
}

/* Takes -g.  Returns 0, or -1 after reporting. */
static int take_glob(const char *s, void *arg)
{
	(void)s;
	return take_kind(arg, FIDX_FINDPAT_GLOB);
}

/* Takes -r.  Returns 0, or -1 after reporting. */
static int take_regex(const char *s, void *arg)
{
	(void)s;
	return take_kind(arg, FIDX_FINDPAT_REGEX);
}

/* The columns of a row that the filters, -l and --json read. */
#define ROW_COLUMNS                                                                             \
	(FIDX_COLUMN(FIDX_COL_TYPE) | FIDX_COLUMN(FIDX_COL_SIZE) | FIDX_COLUMN(FIDX_COL_MODE) |  \
	 FIDX_COLUMN(FIDX_COL_UID) | FIDX_COLUMN(FIDX_COL_GID) | FIDX_COLUMN(FIDX_COL_NLINK) |   \
	 FIDX_COLUMN(FIDX_COL_MTIME) | FIDX_COLUMN(FIDX_COL_EXT) |                             \
	 FIDX_COLUMN(FIDX_COL_LINK_TARGET) | FIDX_DIGEST_COLUMN(FIDX_MD5) |                     \
	 FIDX_DIGEST_COLUMN(FIDX_SHA1) | FIDX_DIGEST_COLUMN(FIDX_SHA256) |                      \
	 FIDX_DIGEST_COLUMN(FIDX_SHA512) | FIDX_DIGEST_COLUMN(FIDX_XXH128) |                    \
	 FIDX_COLUMN(FIDX_COL_ERROR))

/* Returns whether digest d of the row matches --hash. */
static bool hash_matches(const struct filters *f, const struct fidx_row *row, enum fidx_digest d)
{
	const unsigned char *b = fidx_row_digest(row, d);
	size_t n = fidx_digest_len(d);
	bool full = f->hash_len == 32 || f->hash_len == 40 || f->hash_len == 64 ||
		    f->hash_len == 128;
	if (!b || (full ? 2 * n != f->hash_len : 2 * n < f->hash_len))
		return false;
	for (size_t i = 0; i < f->hash_len; i++)
		if (((b[i / 2] >> (i % 2 ? 0 : 4)) & 15) != f->hash[i])
			return false;
	return true;
}

/* Returns whether the row passes every filter. */
static bool passes(const struct filters *f, const struct fidx_row *row)
{
	if (f->types && !(f->types & fidx_type_bit(fidx_row_type(row))))
		return false;
	if (f->has_size) {
		if (!fidx_row_has(row, FIDX_COL_SIZE))
			return false;
		uint64_t size = fidx_row_u64(row, FIDX_COL_SIZE);
		if (f->size_cmp > 0 ? size <= f->size : f->size_cmp < 0 ? size >= f->size
								  : size != f->size)
			return false;
	}
	if (f->has_newer || f->has_older) {
		struct fidx_time m;
		if (!fidx_row_time(row, FIDX_COL_MTIME, &m))
			return false;
		if ((f->has_newer && fidx_time_cmp(m, f->newer) <= 0) ||
		    (f->has_older && fidx_time_cmp(m, f->older) >= 0))
			return false;
	}
	if (f->next) {
		const char *e = fidx_row_text(row, FIDX_COL_EXT);
		size_t i = 0;
		while (e && i < f->next && strcasecmp(e, f->ext[i]) != 0)
			i++;
		if (!e || i == f->next)
			return false;
	}
	if (f->has_user && (!fidx_row_has(row, FIDX_COL_UID) ||
			    (uint32_t)fidx_row_int(row, FIDX_COL_UID) != f->uid))
		return false;
	if (f->hash_len) {
		int d = 0;
		while (d < FIDX_NDIGESTS && !hash_matches(f, row, (enum fidx_digest)d))
			d++;
		if (d == FIDX_NDIGESTS)
			return false;
	}
	return true;
}

/* A small cache of user or group names by id (a slot per id modulo its size). */
struct name_cache {
	struct { uint32_t id; bool set; char name[64]; } slot[256];
	bool group;  /* group names (else user names) */
};

/* Returns the name of user or group id, or its number when it has none. */
static const char *name_of(struct name_cache *c, uint32_t id)
{
	typeof(c->slot[0]) *s = &c->slot[id % 256];
	if (s->set && s->id == id)
		return s->name;
	const char *name = NULL;
	if (c->group) {
		struct group *g = getgrgid(id);
		name = g ? g->gr_name : NULL;
	} else {
		struct passwd *pw = getpwuid(id);
		name = pw ? pw->pw_name : NULL;
	}
	if (name && strlen(name) < sizeof(s->name))
		strcpy(s->name, name);
	else
		snprintf(s->name, sizeof(s->name), "%" PRIu32, id);
	s->id = id;
	s->set = true;
	return s->name;
}

/* What printing needs beside the row. */
struct printer {
	bool json, nul, longfmt;
	struct name_cache users, groups;
	uint64_t visited;             /* paths read from the store */
	atomic_uint_least64_t shown;  /* visited, as the progress line reads it */
};

/* Prints one entry in the -l format (its path after "host:" when host is not NULL). */
static void print_long(struct printer *pr, const struct fidx_row *row, const char *host,
		       const char *path)
{
	char perm[11], when[32];
	if (fidx_row_has(row, FIDX_COL_MODE)) {
		struct fidx_time m = {0};
		fidx_row_time(row, FIDX_COL_MTIME, &m);
		time_t t = (time_t)m.sec;
		struct tm tm;
		if (!localtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm))
			strcpy(when, "?");
		printf("%s %3" PRId64 " %-8s %-8s %10" PRId64 " %s ",
		       fidx_mode_string((uint32_t)fidx_row_int(row, FIDX_COL_MODE), perm),
		       fidx_row_int(row, FIDX_COL_NLINK),
		       name_of(&pr->users, (uint32_t)fidx_row_int(row, FIDX_COL_UID)),
		       name_of(&pr->groups, (uint32_t)fidx_row_int(row, FIDX_COL_GID)),
		       fidx_row_int(row, FIDX_COL_SIZE), when);
	} else {
		printf("%-10s %3s %-8s %-8s %10s %-16s ", "?", "?", "?", "?", "?", "?");
	}
	/* A symlink shows its target, as ls -l does. */
	const char *link = fidx_row_text(row, FIDX_COL_LINK_TARGET);
	fidx_out_host(host);
	if (link && fidx_row_type(row) == 'l') {
		fidx_out_name(stdout, path);
		fputs_unlocked(" -> ", stdout);
		fidx_out_path(link, pr->nul);
	} else {
		fidx_color_path(path, fidx_row_type(row), (uint32_t)fidx_row_int(row, FIDX_COL_MODE),
				pr->nul);
	}
}

/* Writes the member ,"key": integer column c, or null. */
static void json_int(const struct fidx_row *row, const char *key, enum fidx_col c)
{
	if (!fidx_row_has(row, c))
		printf(",\"%s\":null", key);
	else
		printf(",\"%s\":%" PRId64, key, fidx_row_int(row, c));
}

/* Prints one entry (of host, when not NULL) as a JSON object on its own line. */
static void print_json(const struct fidx_row *row, int64_t scan, int64_t id, const char *host,
		       const char *path)
{
	printf("{\"scan_id\":%" PRId64 ",\"id\":%" PRId64 ",", scan, id);
	if (host) {
		fidx_json_path(stdout, "host", host);
		putc_unlocked(',', stdout);
	}
	fidx_json_path(stdout, "path", path);
	const char *type = fidx_row_text(row, FIDX_COL_TYPE);
	fputs(",\"type\":", stdout);
	if (type)
		fidx_json_string(stdout, type);
	else
		fputs("null", stdout);
	json_int(row, "size", FIDX_COL_SIZE);
	if (!fidx_row_has(row, FIDX_COL_MODE)) {
		fputs(",\"mode\":null,\"permissions\":null", stdout);
	} else {
		char perm[11];
		uint32_t mode = (uint32_t)fidx_row_int(row, FIDX_COL_MODE);
		printf(",\"mode\":%" PRIu32 ",\"permissions\":\"%s\"", mode,
		       fidx_mode_string(mode, perm));
	}
	json_int(row, "uid", FIDX_COL_UID);
	json_int(row, "gid", FIDX_COL_GID);
	json_int(row, "nlink", FIDX_COL_NLINK);
	struct fidx_time m;
	if (!fidx_row_time(row, FIDX_COL_MTIME, &m)) {
		fputs(",\"mtime\":null,\"mtime_ns\":null", stdout);
	} else {
		char when[FIDX_WHEN_ISO], ns[FIDX_TIME_NS_MAX + 1];
		*fidx_time_put_ns(ns, m) = '\0';
		printf(",\"mtime\":\"%s\",\"mtime_ns\":%s", fidx_when_iso(m, when), ns);
	}
	const char *link = fidx_row_text(row, FIDX_COL_LINK_TARGET);
	if (link) {
		putchar(',');
		fidx_json_path(stdout, "link_target", link);
	} else {
		fputs(",\"link_target\":null", stdout);
	}
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		const unsigned char *b = fidx_row_digest(row, (enum fidx_digest)d);
		printf(",\"%s\":", fidx_digest_name((enum fidx_digest)d));
		if (b)
			fidx_json_hex(stdout, b, fidx_digest_len((enum fidx_digest)d));
		else
			fputs("null", stdout);
	}
	const char *err = fidx_row_text(row, FIDX_COL_ERROR);
	fputs(",\"error\":", stdout);
	if (err)
		fidx_json_string(stdout, err);
	else
		fputs("null", stdout);
	fputs("}\n", stdout);
}

/*
 * Lists the matching entries of the scan of index k of q's selection.
 * Returns 0 (with *found counted up), or 2 after reporting a failure.
 */
static int find_in_scan(const struct fidx_query *q, size_t k, struct fidx_findpat *pat,
			const struct filters *f, struct printer *pr, bool rows, uint64_t *found)
{
	int64_t scan = q->ids[k];
	struct fidx_error err;
	struct fidx_paths *it = fidx_store_paths(q->st, scan, q->roots[k], pat ? pat->lit : NULL,
						 pat ? pat->nlit : 0, &err);
	const struct fidx_row *e, *row = NULL;
	int rc;

	if (!it)
		return fidx_query_fail(q, &err);
	while ((rc = fidx_paths_next(it, &e, &err)) == 1) {
		const char *path = fidx_row_text(e, FIDX_COL_PATH);
		size_t len = fidx_row_len(e, FIDX_COL_PATH);
		if (++pr->visited % 1024 == 0)
			atomic_store_explicit(&pr->shown, pr->visited, memory_order_relaxed);
		if (pat) {
			int m = fidx_findpat_match(pat, path, len);
			if (m < 0) {
				rc = fidx_fail_nomem(&err);
				break;
			}
			if (!m)
				continue;
		}
		/* A path a newer selected scan shows is shown from that one (select.h). */
		if (q->sel.nhidden && !fidx_selection_shown(&q->sel, scan, path))
			continue;
		if (rows) {
			/* The index narrows, the file table decides. */
			if ((rc = fidx_paths_row(it, ROW_COLUMNS, &row, &err)) < 0)
				break;
			if (!passes(f, row))
				continue;
		}
		(*found)++;
		const char *host = fidx_query_host(q, scan);
		if (pr->json) {
			print_json(row, scan, fidx_row_int(e, FIDX_COL_ID), host, path);
		} else if (pr->longfmt) {
			print_long(pr, row, host, path);
		} else {
			fidx_out_host(host);
			fidx_color_path(path, row ? fidx_row_type(row) : 0,
					row ? (uint32_t)fidx_row_int(row, FIDX_COL_MODE) : 0, pr->nul);
		}
		/* A failed write (a full disk, a closed pipe): stop; fidx_out_end() tells. */
		if (ferror_unlocked(stdout)) {
			rc = 0;
			break;
		}
	}
	fidx_paths_close(it);
	return rc < 0 ? fidx_query_fail(q, &err) : 0;
}

/* Frees what the filters hold. */
static void filters_free(struct filters *f)
{
	for (size_t i = 0; i < f->next; i++)
		free(f->ext[i]);
	free(f->ext);
}

/* What the command line asked for. */
struct find_args {
	struct fidx_query_args qa;    /* DB, --scan, --json, -0 */
	struct pattern_kind kind;     /* -g, -r, -i */
	struct fidx_findpat pat;      /* PATTERN compiled, when has_pat */
	bool has_pat;
	struct filters f;             /* --type, --size, ... */
	bool longfmt, quiet;
};

/*
 * Parses the command line into a, PATTERN compiled.  Returns 0, 1 after
 * --help, or -1 after printing why.
 */
static int parse_args(int argc, char **argv, struct find_args *a)
{
	char err[256];
	struct fidx_option options[] = {
		FIDX_OPT_FLAG('i', "ignore-case", &a->kind.icase,
			      "PATTERN ignores case, ASCII letters only (A-Z = a-z); other bytes,"
			      " UTF-8 or not, must be equal"),
		FIDX_OPT_CALL('g', "glob", NULL, take_glob, &a->kind,
			      "PATTERN is a glob (fnmatch): * ? [...] match any byte, '/' too, \\"
			      " quotes; it must match the whole path when it holds a '/', else the"
			      " name"),
		FIDX_OPT_CALL('r', "regex", NULL, take_regex, &a->kind,
			      "PATTERN is a POSIX extended regex, found anywhere in the path (."
			      " matches any byte, newline too)"),
		FIDX_OPT_CALL('t', "type", "LIST", parse_types, &a->f,
			      "entries of these types, e.g. f,d,l (f file, d directory, l symlink,"
			      " p fifo, s socket, c/b devices)"),
		FIDX_OPT_CALL(0, "size", "[+-]N", parse_size, &a->f,
			      "size more than (+), less than (-) or exactly N bytes; K M G T multiply"
			      " by 1024, 1024^2, ... (no rounding)"),
		FIDX_OPT_CALL(0, "newer", "WHEN", parse_newer, &a->f,
			      "modified after WHEN: 2024-01-31, 2024-01-31T12:00[:00] (local time; a"
			      " trailing Z: UTC), or an age such as 30s, 15m, 12h, 7d, 2w (before"
			      " now)"),
		FIDX_OPT_CALL(0, "older", "WHEN", parse_older, &a->f, "modified before WHEN (as --newer)"),
		FIDX_OPT_CALL('e', "ext", "LIST", parse_ext, &a->f,
			      "extension in LIST, e.g. jpg,png (ASCII case ignored; a leading dot is"
			      " allowed)"),
		FIDX_OPT_CALL('u', "user", "USER", parse_user, &a->f,
			      "owned by USER: a name (looked up now) or a uid"),
		FIDX_OPT_CALL(0, "hash", "HEX", parse_hash, &a->f,
			      "a digest: 32 hex digits match MD5 or XXH128, 40 SHA-1, 64 SHA-256, 128"
			      " SHA-512; other lengths match the start of any digest"),
		FIDX_OPT_FLAG('l', "long", &a->longfmt,
			      "long listing: permissions, links, user, group, size, modification time"
			      " (local), path (a symlink's followed by ' -> ' and its target, as ls"
			      " -l)"),
		FIDX_OPT_QUERY(&a->qa),
		FIDX_OPT_COLOR,
		FIDX_OPT_FLAG('q', "quiet", &a->quiet,
			      "no progress line (else drawn on stderr after half a second, when it is"
			      " a terminal and stdout is not)"),
		FIDX_OPT_END,
	};

	int first = fidx_parse_options(argc, argv, options, &find_help);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 1 : -1;
	if (argc - first == 2 && !a->qa.db)
		a->qa.db = argv[first++];
	else if (argc - first == 1)
		first += fidx_query_db_arg(argv[first], &a->qa);
	if (first < argc) {
		a->has_pat = true;
		if (fidx_findpat_compile(&a->pat, a->kind.kind, argv[first++], a->kind.icase, err,
					 sizeof(err)) < 0) {
			fidx_error("invalid %s '%s': %s",
				   a->kind.kind == FIDX_FINDPAT_REGEX ? "regex" : "pattern",
				   fidx_quote(argv[first - 1]), err);
			return -1;
		}
	} else if (a->kind.kind != FIDX_FINDPAT_SUBSTRING || a->kind.icase) {
		fidx_error("%s needs a PATTERN (see 'fidx find --help')",
			   a->kind.icase ? "-i" : a->kind.kind == FIDX_FINDPAT_GLOB ? "-g" : "-r");
		return -1;
	}
	if (first < argc) {
		fidx_error("unexpected argument '%s' (see 'fidx find --help')",
			   fidx_quote(argv[first]));
		return -1;
	}
	return 0;
}

/*
 * Prints the entries of q's scans that a asks for, through pr, in one read
 * transaction.  Returns the exit status.
 */
static int search(struct find_args *a, struct fidx_query *q, struct printer *pr)
{
	struct fidx_error e;
	/* One read transaction: every scan is read as of the same moment. */
	if (fidx_store_snapshot(q->st, &e) < 0) {
		fidx_query_fail(q, &e);
		return 2;
	}
	fidx_out_begin();
	uint64_t found = 0;
	int status = 0;
	struct fidx_progress *progress =
		fidx_progress_rows_wanted(a->quiet, true)
			? fidx_progress_rows_start(&pr->shown, fidx_query_count(q, false)) : NULL;
	/* Colours need each entry's type: its row is read then (a terminal's worth of lines). */
	bool rows = any_filter(&a->f) || a->longfmt || a->qa.json || fidx_color_on();
	for (size_t i = 0; i < q->nscans && status == 0; i++)
		status = find_in_scan(q, i, a->has_pat ? &a->pat : NULL, &a->f, pr, rows, &found);
	fidx_progress_stop(progress);
	if (fidx_out_end() < 0)
		status = 2;
	return status == 0 && !found ? 1 : status;
}

int cmd_find(int argc, char **argv, const struct fidx_command *cmd)
{
	struct find_args a = {.kind = {FIDX_FINDPAT_SUBSTRING, false}};
	struct fidx_query *q = NULL;
	struct printer *pr = NULL;
	int status = 2;

	(void)cmd;
	int parsed = parse_args(argc, argv, &a);
	if (parsed != 0) {
		status = parsed > 0 ? 0 : 2;
		goto out;
	}
	if (!(pr = calloc(1, sizeof(*pr)))) {
		fidx_error("out of memory");
		goto out;
	}
	pr->json = a.qa.json;
	pr->nul = a.qa.nul;
	pr->longfmt = a.longfmt;
	pr->groups.group = true;
	if ((q = fidx_query_open(&a.qa, NULL)))
		status = search(&a, q, pr);
out:
	if (fidx_query_close(q) < 0)
		status = 2;
	fidx_findpat_free(&a.pat);
	filters_free(&a.f);
	free(pr);
	return status;
}
