/*
 * cmd_find.c - `fidx find`: a locate that knows more.
 *
 * For each selected scan, in scan order, the paths come in byte order from
 * the scan's path index (pathindex.h), narrowed to the blocks that hold every
 * trigram of the pattern's literals (findpat.h), or from the `file` table
 * when the scan has no index; each path is checked against the pattern
 * itself, then, when a filter, -l or --json needs more than the path, its
 * row is read by id and the filters are applied:
 *
 *     PATTERN ──► findpat: matcher + literals ──► trigrams
 *                                                   │
 *     scan ──► pathiter (index blocks, or file table) ◄┘
 *               │ id, path (byte order)
 *               ▼
 *          match? ──► row by id (filters, -l, --json) ──► stdout
 *
 * All reads run in one read transaction, so a scan being written or indexed
 * at the same time is seen as of one moment.
 */
#include "commands.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "dbtime.h"
#include "diag.h"
#include "findpat.h"
#include "json.h"
#include "output.h"
#include "pathindex.h"
#include "progress.h"
#include "query.h"
#include "when.h"

/* Values of the long-only options (FIDX_OPT_* of cli.h are below 0x2000). */
enum { OPT_SIZE = 0x2000, OPT_NEWER, OPT_OLDER, OPT_HASH };

static const struct fidx_option find_options[] = {
	{{"ignore-case", no_argument, NULL, 'i'}, NULL,
	 "PATTERN ignores case, ASCII letters only (A-Z = a-z);\n"
	 "                       other bytes, UTF-8 or not, must be equal"},
	{{"glob", no_argument, NULL, 'g'}, NULL,
	 "PATTERN is a glob (fnmatch): * ? [...] match any byte,\n"
	 "                       '/' too, \\ quotes; it must match the whole path\n"
	 "                       when it holds a '/', else the name"},
	{{"regex", no_argument, NULL, 'r'}, NULL,
	 "PATTERN is a POSIX extended regex, found anywhere in\n"
	 "                       the path (. matches any byte, newline too)"},
	{{"type", required_argument, NULL, 't'}, "LIST",
	 "entries of these types, e.g. f,d,l (f file, d directory,\n"
	 "                       l symlink, p fifo, s socket, c/b devices)"},
	{{"size", required_argument, NULL, OPT_SIZE}, "[+-]N",
	 "size more than (+), less than (-) or exactly N bytes;\n"
	 "                       K M G T multiply by 1024, 1024^2, ... (no rounding)"},
	{{"newer", required_argument, NULL, OPT_NEWER}, "WHEN",
	 "modified after WHEN: 2024-01-31, 2024-01-31T12:00[:00]\n"
	 "                       (local time; a trailing Z: UTC), or an age such as\n"
	 "                       30s, 15m, 12h, 7d, 2w (before now)"},
	{{"older", required_argument, NULL, OPT_OLDER}, "WHEN",
	 "modified before WHEN (as --newer)"},
	{{"ext", required_argument, NULL, 'e'}, "LIST",
	 "extension in LIST, e.g. jpg,png (ASCII case ignored;\n"
	 "                       a leading dot is allowed)"},
	{{"user", required_argument, NULL, 'u'}, "USER",
	 "owned by USER: a name (looked up now) or a uid"},
	{{"hash", required_argument, NULL, OPT_HASH}, "HEX",
	 "a digest: 32 hex digits match MD5 or XXH128, 40 SHA-1,\n"
	 "                       64 SHA-256, 128 SHA-512; other lengths match the\n"
	 "                       start of any digest"},
	{{"long", no_argument, NULL, 'l'}, NULL,
	 "long listing: permissions, links, user, group, size,\n"
	 "                       modification time (local), path (a symlink's\n"
	 "                       followed by ' -> ' and its target, as ls -l)"},
	FIDX_QUERY_OPTIONS,
	{{"quiet", no_argument, NULL, 'q'}, NULL,
	 "no progress line (else drawn on stderr after half a\n"
	 "                       second, when it is a terminal and stdout is not)"},
	{{"help", no_argument, NULL, 'h'}, NULL, "show this help"},
};
#define NOPTIONS (sizeof(find_options) / sizeof(find_options[0]))

/* Prints the help of `fidx find`. */
static void find_usage(FILE *out)
{
	fputs("usage: fidx find [OPTIONS] [DB] [PATTERN]\n\n"
	      "List the entries whose path contains PATTERN (bytes, case-sensitive), in\n"
	      "byte order of their paths within each scan.  Without PATTERN every entry\n"
	      "is listed, subject to the filters; all filters must hold.  With two\n"
	      "arguments the first is the database; with one, it is the database when it\n"
	      "is a SQLite file.  A PATTERN that starts with '-' follows '--'.\n\n"
	      "Substring and glob searches, and regexes with plain runs of three or more\n"
	      "bytes, use the index that 'fidx scan' builds after each complete scan; a\n"
	      "scan without one (still running, interrupted, or from an older database)\n"
	      "is read whole, with the same results.\n\n"
	      "Options:\n", out);
	fidx_cli_usage(out, find_options, NOPTIONS);
	fputs("\nExit status: 0 found, 1 nothing found, 2 usage or fatal error.\n", out);
}

/* What the filters ask for. */
struct filters {
	unsigned types;          /* bits 1 << index in TYPES; 0: any type */
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

/* The entry types, in the order of the bits of struct filters.types. */
static const char TYPES[] = "fdlpscb";

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
static int parse_types(const char *s, struct filters *f)
{
	const char *p = s;
	for (;;) {
		const char *t = *p ? strchr(TYPES, *p) : NULL;
		if (!t || (p[1] && p[1] != ','))
			return bad_value("--type", s, "letters of fdlpscb separated by commas");
		f->types |= 1u << (t - TYPES);
		if (!p[1])
			return 0;
		p += 2;
	}
}

/* Parses --size [+-]N[KMGT].  Returns 0, or -1 after reporting. */
static int parse_size(const char *s, struct filters *f)
{
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

/* Parses WHEN of option opt (when.h).  Returns 0, or -1 after reporting. */
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
static int parse_ext(const char *s, struct filters *f)
{
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
static int parse_user(const char *s, struct filters *f)
{
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
static int parse_hash(const char *s, struct filters *f)
{
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

/* Columns of the row query (by id): the row, whose scan, path and id check it is the index entry's, then the eight of dbtime.h. */
enum { R_TYPE, R_SIZE, R_MODE, R_UID, R_GID, R_NLINK, R_MTIME, R_EXT, R_LINK, R_DIGEST0,
       R_ERROR = R_DIGEST0 + 5, R_SCAN, R_PATH, R_ID, R_TIME_EXT };

/* Writes the row query of a database of schema version into buf. */
static void row_sql(char *buf, size_t size, int version)
{
	snprintf(buf, size, "SELECT type, size, mode, uid, gid, nlink, mtime_ns, ext, link_target,"
		 " md5, sha1, sha256, sha512, xxh128, error, scan_id, path, id%s FROM file"
		 " WHERE id = ?", fidx_time_ext_sql(version, NULL, 1u << FIDX_MTIME));
}

/* Reads the mtime of the row into *t.  Returns false when it has none. */
static bool row_mtime(sqlite3_stmt *row, struct fidx_time *t)
{
	return fidx_time_column(row, R_MTIME, R_TIME_EXT, FIDX_MTIME, t);
}

static const char *const digest_names[] = {"md5", "sha1", "sha256", "sha512", "xxh128"};

/* Returns whether digest column c (bytes) matches --hash. */
static bool hash_matches(const struct filters *f, sqlite3_stmt *row, int c)
{
	const unsigned char *d = sqlite3_column_blob(row, c);
	size_t n = (size_t)sqlite3_column_bytes(row, c);
	bool full = f->hash_len == 32 || f->hash_len == 40 || f->hash_len == 64 ||
		    f->hash_len == 128;
	if (!d || (full ? 2 * n != f->hash_len : 2 * n < f->hash_len))
		return false;
	for (size_t i = 0; i < f->hash_len; i++)
		if (((d[i / 2] >> (i % 2 ? 0 : 4)) & 15) != f->hash[i])
			return false;
	return true;
}

/* Returns whether the row passes every filter. */
static bool passes(const struct filters *f, sqlite3_stmt *row)
{
	if (f->types) {
		const char *t = (const char *)sqlite3_column_text(row, R_TYPE);
		const char *in = t && t[0] && !t[1] ? strchr(TYPES, t[0]) : NULL;
		if (!in || !(f->types & (1u << (in - TYPES))))
			return false;
	}
	if (f->has_size) {
		if (sqlite3_column_type(row, R_SIZE) == SQLITE_NULL)
			return false;
		uint64_t size = (uint64_t)sqlite3_column_int64(row, R_SIZE);
		if (f->size_cmp > 0 ? size <= f->size : f->size_cmp < 0 ? size >= f->size
								  : size != f->size)
			return false;
	}
	if (f->has_newer || f->has_older) {
		struct fidx_time m;
		if (!row_mtime(row, &m))
			return false;
		if ((f->has_newer && fidx_time_cmp(m, f->newer) <= 0) ||
		    (f->has_older && fidx_time_cmp(m, f->older) >= 0))
			return false;
	}
	if (f->next) {
		const char *e = (const char *)sqlite3_column_text(row, R_EXT);
		size_t i = 0;
		while (e && i < f->next && strcasecmp(e, f->ext[i]) != 0)
			i++;
		if (!e || i == f->next)
			return false;
	}
	if (f->has_user && (sqlite3_column_type(row, R_UID) == SQLITE_NULL ||
			    (uint32_t)sqlite3_column_int64(row, R_UID) != f->uid))
		return false;
	if (f->hash_len) {
		int d = 0;
		while (d < 5 && !hash_matches(f, row, R_DIGEST0 + d))
			d++;
		if (d == 5)
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
	uint64_t visited;             /* paths read from the index or the table */
	atomic_uint_least64_t shown;  /* visited, as the progress line reads it */
};

/* Prints one entry in the -l format. */
static void print_long(struct printer *pr, sqlite3_stmt *row, const char *path)
{
	char perm[11], when[32];
	bool stat = sqlite3_column_type(row, R_MODE) != SQLITE_NULL;
	if (stat) {
		struct fidx_time m = {0};
		row_mtime(row, &m);
		time_t t = (time_t)m.sec;
		struct tm tm;
		if (!localtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm))
			strcpy(when, "?");
		printf("%s %3lld %-8s %-8s %10lld %s ",
		       fidx_mode_string((uint32_t)sqlite3_column_int64(row, R_MODE), perm),
		       sqlite3_column_int64(row, R_NLINK),
		       name_of(&pr->users, (uint32_t)sqlite3_column_int64(row, R_UID)),
		       name_of(&pr->groups, (uint32_t)sqlite3_column_int64(row, R_GID)),
		       sqlite3_column_int64(row, R_SIZE), when);
	} else {
		printf("%-10s %3s %-8s %-8s %10s %-16s ", "?", "?", "?", "?", "?", "?");
	}
	/* A symlink shows its target, as ls -l does. */
	const char *link = (const char *)sqlite3_column_text(row, R_LINK);
	const char *type = (const char *)sqlite3_column_text(row, R_TYPE);
	if (link && type && strcmp(type, "l") == 0) {
		fidx_out_name(stdout, path);
		fputs_unlocked(" -> ", stdout);
		fidx_out_path(link, pr->nul);
	} else {
		fidx_out_path(path, pr->nul);
	}
}

/* Writes the member ,"key": integer column c, or null. */
static void json_int(sqlite3_stmt *row, const char *key, int c)
{
	if (sqlite3_column_type(row, c) == SQLITE_NULL)
		printf(",\"%s\":null", key);
	else
		printf(",\"%s\":%lld", key, sqlite3_column_int64(row, c));
}

/* Prints one entry as a JSON object on its own line. */
static void print_json(sqlite3_stmt *row, int64_t scan, int64_t id, const char *path)
{
	printf("{\"scan_id\":%" PRId64 ",\"id\":%" PRId64 ",", scan, id);
	fidx_json_path(stdout, "path", path);
	const char *type = (const char *)sqlite3_column_text(row, R_TYPE);
	fputs(",\"type\":", stdout);
	if (type)
		fidx_json_string(stdout, type);
	else
		fputs("null", stdout);
	json_int(row, "size", R_SIZE);
	if (sqlite3_column_type(row, R_MODE) == SQLITE_NULL) {
		fputs(",\"mode\":null,\"permissions\":null", stdout);
	} else {
		char perm[11];
		uint32_t mode = (uint32_t)sqlite3_column_int64(row, R_MODE);
		printf(",\"mode\":%" PRIu32 ",\"permissions\":\"%s\"", mode,
		       fidx_mode_string(mode, perm));
	}
	json_int(row, "uid", R_UID);
	json_int(row, "gid", R_GID);
	json_int(row, "nlink", R_NLINK);
	struct fidx_time m;
	if (!row_mtime(row, &m)) {
		fputs(",\"mtime\":null,\"mtime_ns\":null", stdout);
	} else {
		char when[FIDX_WHEN_ISO], ns[FIDX_TIME_NS_MAX + 1];
		*fidx_time_put_ns(ns, m) = '\0';
		printf(",\"mtime\":\"%s\",\"mtime_ns\":%s", fidx_when_iso(m, when), ns);
	}
	const char *link = (const char *)sqlite3_column_text(row, R_LINK);
	if (link) {
		putchar(',');
		fidx_json_path(stdout, "link_target", link);
	} else {
		fputs(",\"link_target\":null", stdout);
	}
	for (int d = 0; d < 5; d++) {
		const unsigned char *b = sqlite3_column_blob(row, R_DIGEST0 + d);
		printf(",\"%s\":", digest_names[d]);
		if (b)
			fidx_json_hex(stdout, b, (size_t)sqlite3_column_bytes(row, R_DIGEST0 + d));
		else
			fputs("null", stdout);
	}
	const char *err = (const char *)sqlite3_column_text(row, R_ERROR);
	fputs(",\"error\":", stdout);
	if (err)
		fidx_json_string(stdout, err);
	else
		fputs("null", stdout);
	fputs("}\n", stdout);
}

/*
 * Reports a failed read of the index or the file table of scan (where it
 * failed: it, NULL before it could be opened; what is wrong: the iterator's
 * word, unless damage says).  Returns 2.
 */
static int read_failed(const struct fidx_query *q, int64_t scan, const struct fidx_pathiter *it,
		       const char *damage)
{
	const char *found = "unreadable";
	int64_t where = it ? fidx_pathiter_where(it, &found) : 0;
	if (!damage)
		damage = found;
	if (errno == EBADMSG && it && fidx_pathiter_indexed(it))
		fidx_error("the path index of scan %" PRId64 " in database '%s' is damaged (block %"
			   PRId64 ": %s)", scan, fidx_quote(q->path), where, damage);
	else if (errno == EBADMSG && it)
		fidx_error("database '%s' is damaged: scan %" PRId64 ", row %" PRId64 ": %s",
			   fidx_quote(q->path), scan, where, damage);
	else if (errno == EBADMSG)
		fidx_error("the path index of scan %" PRId64 " in database '%s' is damaged", scan,
			   fidx_quote(q->path));
	else if (errno == ENOMEM)
		fidx_error("out of memory");
	else
		fidx_query_fail(q);
	return 2;
}

/*
 * Whether the file row fetched for an index entry (row_sql) is the entry's:
 * of the scan, with the same path, byte for byte.
 */
static bool row_is(sqlite3_stmt *row, int64_t scan, const struct fidx_pathent *e)
{
	return sqlite3_column_int64(row, R_SCAN) == scan &&
	       sqlite3_column_type(row, R_PATH) == SQLITE_TEXT &&
	       (size_t)sqlite3_column_bytes(row, R_PATH) == e->len &&
	       memcmp(sqlite3_column_blob(row, R_PATH), e->path, e->len) == 0;
}

/*
 * Lists the matching entries of one scan.  Returns 0 (with *found counted
 * up), or 2 after reporting a failure.
 */
static int find_in_scan(const struct fidx_query *q, size_t k, struct fidx_findpat *pat,
			const uint32_t *tri, size_t ntri, const struct filters *f,
			struct printer *pr, sqlite3_stmt *row, struct fidx_rowcheck *check,
			uint64_t *found)
{
	int64_t scan = q->scans[k];
	const char *root = q->roots[k];
	size_t rootlen = strlen(root);
	struct fidx_pathiter *it = fidx_pathiter_open(q->db, scan, tri, ntri);
	struct fidx_pathent e;
	const char *damage = NULL;
	char mismatch[96];
	int rc;

	if (!it)
		return read_failed(q, scan, NULL, NULL);
	while ((rc = fidx_pathiter_next(it, &e)) == 1) {
		if (++pr->visited % 1024 == 0)
			atomic_store_explicit(&pr->shown, pr->visited, memory_order_relaxed);
		if (!fidx_rowcheck_below(root, rootlen, e.path, e.len)) {
			if (!fidx_pathiter_indexed(it)) {
				char msg[8192], quoted[4200];
				snprintf(quoted, sizeof(quoted), "%s", fidx_quote(root));
				snprintf(msg, sizeof(msg), "scan %" PRId64 ", row %" PRId64 ": path '%s'"
					 " is not below the scan's root '%s'", scan, e.id,
					 fidx_quote(e.path), quoted);
				fidx_pathiter_close(it);
				return fidx_query_damaged(q, msg);
			}
			damage = "a path outside the scan's root";
			errno = EBADMSG;
			rc = -1;
			break;
		}
		if (pat) {
			int m = fidx_findpat_match(pat, e.path, e.len);
			if (m < 0) {
				errno = ENOMEM;
				break;
			}
			if (!m)
				continue;
		}
		/* A path a newer selected scan shows is shown from that one (query.h). */
		if (q->nhidden && !fidx_query_path_shown(q, scan, e.path))
			continue;
		if (row) {
			sqlite3_reset(row);
			sqlite3_bind_int64(row, 1, e.id);
			/* The index narrows, the file table decides. */
			if ((rc = sqlite3_step(row)) != SQLITE_ROW || !row_is(row, scan, &e)) {
				if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
					snprintf(mismatch, sizeof(mismatch), "the row of an entry, %"
						 PRId64 ", is %s", e.id, rc == SQLITE_ROW
						 ? "another path's" : "not in the database");
					damage = mismatch;
				}
				errno = damage ? EBADMSG : EIO;
				break;
			}
			const char *what = fidx_rowcheck(check, row);
			if (what) {
				fidx_pathiter_close(it);
				return fidx_query_damaged(q, what);
			}
			if (!passes(f, row))
				continue;
		}
		(*found)++;
		if (pr->json)
			print_json(row, scan, e.id, e.path);
		else if (pr->longfmt)
			print_long(pr, row, e.path);
		else
			fidx_out_path(e.path, pr->nul);
		/* A failed write (a full disk, a closed pipe): stop; fidx_out_end() tells. */
		if (ferror_unlocked(stdout)) {
			rc = 0;
			break;
		}
	}
	int status = rc == 0 ? 0 : read_failed(q, scan, it, damage);
	fidx_pathiter_close(it);
	return status;
}

/*
 * Collects the trigrams of the pattern's literals into *tri (malloc'ed).
 * Returns their number, or (size_t)-1 when out of memory.
 */
static size_t pattern_trigrams(const struct fidx_findpat *pat, uint32_t **tri)
{
	size_t room = 1, n = 0;
	for (size_t i = 0; i < pat->nlit; i++)
		room += pat->lit[i].len;
	if (!(*tri = malloc(room * sizeof(**tri))))
		return (size_t)-1;
	for (size_t i = 0; i < pat->nlit; i++)
		n = fidx_pathindex_trigrams(pat->lit[i].s, pat->lit[i].len, *tri, n);
	return n;
}

/* Frees what the filters hold. */
static void filters_free(struct filters *f)
{
	for (size_t i = 0; i < f->next; i++)
		free(f->ext[i]);
	free(f->ext);
}

int cmd_find(int argc, char **argv)
{
	struct option longopts[NOPTIONS + 1];
	struct fidx_query_args qa = {0};
	struct fidx_query *q = NULL;
	struct fidx_findpat pat = {0};
	struct filters f = {0};
	struct printer *pr = NULL;
	sqlite3_stmt *row = NULL;
	struct fidx_rowcheck *check = NULL;
	uint32_t *tri = NULL;
	enum fidx_findpat_kind kind = FIDX_FINDPAT_SUBSTRING;
	bool icase = false, longfmt = false, has_pat = false, quiet = false;
	int c, status = 2;
	char err[256];

	fidx_cli_longopts(find_options, NOPTIONS, longopts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":igrt:e:u:l0qh", longopts, NULL)) != -1) {
		if (fidx_query_option(c, optarg, &qa))
			continue;
		switch (c) {
		case 'i': icase = true; continue;
		case 'g':
		case 'r':
			if (kind != FIDX_FINDPAT_SUBSTRING &&
			    kind != (c == 'g' ? FIDX_FINDPAT_GLOB : FIDX_FINDPAT_REGEX)) {
				fidx_error("-g and -r exclude each other");
				goto out;
			}
			kind = c == 'g' ? FIDX_FINDPAT_GLOB : FIDX_FINDPAT_REGEX;
			continue;
		case 't': if (parse_types(optarg, &f) < 0) goto out; continue;
		case OPT_SIZE: if (parse_size(optarg, &f) < 0) goto out; continue;
		case OPT_NEWER:
			if (parse_when("--newer", optarg, &f.newer) < 0)
				goto out;
			f.has_newer = true;
			continue;
		case OPT_OLDER:
			if (parse_when("--older", optarg, &f.older) < 0)
				goto out;
			f.has_older = true;
			continue;
		case 'e': if (parse_ext(optarg, &f) < 0) goto out; continue;
		case 'u': if (parse_user(optarg, &f) < 0) goto out; continue;
		case OPT_HASH: if (parse_hash(optarg, &f) < 0) goto out; continue;
		case 'l': longfmt = true; continue;
		case 'q': quiet = true; continue;
		case 'h':
			find_usage(stdout);
			status = 0;
			goto out;
		default:
			fidx_cli_bad_option("find", c, argv, find_options, NOPTIONS);
			goto out;
		}
	}
	if (argc - optind == 2 && !qa.db)
		qa.db = argv[optind++];
	else if (argc - optind == 1)
		optind += fidx_query_db_arg(argv[optind], &qa);
	if (optind < argc) {
		has_pat = true;
		if (fidx_findpat_compile(&pat, kind, argv[optind++], icase, err, sizeof(err)) < 0) {
			fidx_error("invalid %s '%s': %s",
				   kind == FIDX_FINDPAT_REGEX ? "regex" : "pattern",
				   fidx_quote(argv[optind - 1]), err);
			goto out;
		}
	} else if (kind != FIDX_FINDPAT_SUBSTRING || icase) {
		fidx_error("%s needs a PATTERN (see 'fidx find --help')",
			   icase ? "-i" : kind == FIDX_FINDPAT_GLOB ? "-g" : "-r");
		goto out;
	}
	if (optind < argc) {
		fidx_error("unexpected argument '%s' (see 'fidx find --help')",
			   fidx_quote(argv[optind]));
		goto out;
	}
	size_t ntri = has_pat ? pattern_trigrams(&pat, &tri) : 0;
	if (ntri == (size_t)-1 || !(pr = calloc(1, sizeof(*pr)))) {
		fidx_error("out of memory");
		goto out;
	}
	pr->json = qa.json;
	pr->nul = qa.nul;
	pr->longfmt = longfmt;
	pr->groups.group = true;

	if (!(q = fidx_query_open(&qa)))
		goto out;
	/* One read transaction: every scan is read as of the same moment. */
	if (sqlite3_exec(q->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		fidx_query_fail(q);
		goto out;
	}
	char sql[512];
	row_sql(sql, sizeof(sql), q->version);
	if ((any_filter(&f) || longfmt || qa.json) &&
	    (!(row = fidx_query_prepare(q, sql)) ||
	     !(check = fidx_query_rowcheck(q, row, FIDX_ROWCHECK_ALL))))
		goto out;
	fidx_out_begin();
	uint64_t found = 0;
	status = 0;
	struct fidx_progress *progress =
		fidx_progress_rows_wanted(quiet, true)
			? fidx_progress_rows_start(&pr->shown, fidx_query_rows(q, false)) : NULL;
	for (size_t i = 0; i < q->nscans && status == 0; i++)
		status = find_in_scan(q, i, has_pat ? &pat : NULL, tri, ntri, &f, pr, row, check,
				      &found);
	fidx_progress_stop(progress);
	if (fidx_out_end() < 0)
		status = 2;
	if (status == 0 && !found)
		status = 1;
out:
	fidx_rowcheck_free(check);
	sqlite3_finalize(row);
	if (fidx_query_close(q) < 0)
		status = 2;
	fidx_findpat_free(&pat);
	filters_free(&f);
	free(tri);
	free(pr);
	return status;
}
