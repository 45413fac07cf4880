/*
 * interactive.c - the point-and-go front end: `fidx` on a terminal, `fidx scan -i`.
 *
 * Three questions, each answered on one line, validated, and asked again
 * after a wrong answer with a one-line reason, until it is right or the input
 * ends (then nothing is scanned):
 *
 *   Filesystem to scan [1-N]:   a number of the table, or a listed mount
 *                               point typed as is ("/", "/home")
 *   Worker threads [J]:         blank = J (the caller's default), or 1..1024
 *   Sub-path to scan (...):     blank = the whole filesystem, or a path
 *                               relative to the mount point or absolute;
 *                               it must exist, resolve (symlinks and ".."
 *                               included) to a place under the mount point,
 *                               and be a directory or a regular file
 *
 * The table lists the real filesystems (mounts.c says which are real) whose
 * mount point is a directory (a container's bind-mounted /etc/hosts is not a
 * filesystem to scan), one row per mount point: when mounts are stacked on
 * one point, mountinfo lists them in mount order and only the last one is
 * visible, so that one alone is listed, and only if it is real.
 *
 * Every name is printed through fidx_quote(), so a mount point with a
 * newline or invalid UTF-8 cannot break the table or a message.
 */
#include "interactive.h"

#include "diag.h"
#include "mounts.h"
#include "scan.h"
#include "sysinfo.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The drives of Windows are its mounts (platform_win.c). */
#ifdef _WIN32
#define TABLE_TITLE "Drives"
#define TARGET_HEADER "DRIVE"
#else
#define TABLE_TITLE "Mounted filesystems"
#define TARGET_HEADER "MOUNT POINT"
#endif

/* What a scan without the administrator's rights misses, said under the table. */
#ifdef _WIN32
#define NOT_PRIVILEGED "Not running as an elevated administrator: folders and files your" \
	" account may not read\n(other users' profiles, System Volume Information, some of" \
	" Windows\\) are recorded\nwith 'Access is denied.' and no digest.  Run fidx from an" \
	" administrator's prompt\nfor a complete inventory."
#else
#define NOT_PRIVILEGED "Not running as root: folders and files your user may not read" \
	" are recorded\nwith 'Permission denied' and no digest.  Run fidx as root for a" \
	" complete inventory."
#endif

/* The state of one session: the mount table and the rows of the table shown. */
struct session {
	FILE *in;                  /* where answers are read */
	FILE *out;                 /* where the table, prompts and reasons go */
	struct fidx_mount *mounts; /* the whole mount table */
	size_t nmounts;
	const struct fidx_mount **rows; /* the listed ones, in mount order */
	size_t nrows;
	char *line;                /* the last answer (getline buffer) */
	size_t linecap;
};

/* Prints "fidx: <reason>" on the session's output, as the reason to ask again. */
__attribute__((format(printf, 2, 3)))
static void say(struct session *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("fidx: ", s->out);
	vfprintf(s->out, fmt, ap);
	fputc('\n', s->out);
	fflush(s->out);
	va_end(ap);
}

/*
 * Prints the prompt and reads one answer into s->line, without its newline.
 * Returns 0, or -1 when the input ended (or failed), after saying so.
 */
static int ask(struct session *s, const char *prompt)
{
	fputs(prompt, s->out);
	fflush(s->out);
	ssize_t len = getline(&s->line, &s->linecap, s->in);
	if (len < 0) {
		fputs("\nfidx: no answer, nothing scanned\n", s->out);
		fflush(s->out);
		return -1;
	}
	/* The line's end: "\n", or "\r\n" as Windows' console (and a CRLF file) ends it. */
	if (len > 0 && s->line[len - 1] == '\n')
		s->line[--len] = '\0';
	if (len > 0 && s->line[len - 1] == '\r')
		s->line[--len] = '\0';
	return 0;
}

/* Returns s without its leading and trailing blanks (s is modified). */
static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

/*
 * Parses s as a decimal number from 1 to max (digits only, no sign).
 * Returns the number, or 0 when s is not one.
 */
static unsigned long parse_count(const char *s, unsigned long max)
{
	if (*s < '0' || *s > '9')
		return 0;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || errno || v > max)
		return 0;
	return v;
}

/* Writes n bytes as a short size in powers of 1024 ("512B", "1.5G", "16G") into buf. */
static void human(uint64_t n, char buf[16])
{
	static const char units[] = "BKMGTPE";
	double v = (double)n;
	int u = 0;
	while (v >= 1023.5 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, 16, "%uB", (unsigned)n);
	else if (v < 9.95)
		snprintf(buf, 16, "%.1f%c", v, units[u]);
	else
		snprintf(buf, 16, "%.0f%c", v, units[u]);
}

/* Columns taken on a terminal by fidx_quote(s): its bytes that start a character. */
static size_t quoted_width(const char *s)
{
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)fidx_quote(s); *p; p++)
		w += (*p & 0xc0) != 0x80;
	return w;
}

/* Prints fidx_quote(s) left-aligned in a column of width columns, then two spaces. */
static void put_cell(FILE *out, const char *s, size_t width)
{
	size_t w = quoted_width(s);
	fputs(fidx_quote(s), out);
	fprintf(out, "%*s", (int)(width - w + 2), "");
}

/*
 * Chooses the rows of the table (see the file comment).  Returns 0, or -1
 * with errno ENOMEM.
 */
static int pick_rows(struct session *s)
{
	s->rows = calloc(s->nmounts ? s->nmounts : 1, sizeof(*s->rows));
	if (!s->rows)
		return -1;
	for (size_t i = 0; i < s->nmounts; i++) {
		const struct fidx_mount *m = &s->mounts[i];
		bool shadowed = false;
		struct stat st;
		for (size_t j = i + 1; j < s->nmounts && !shadowed; j++)
			shadowed = strcmp(s->mounts[j].target, m->target) == 0;
		if (m->real && !shadowed && stat(m->target, &st) == 0 && S_ISDIR(st.st_mode))
			s->rows[s->nrows++] = m;
	}
	return 0;
}

/* Prints the numbered table of the rows. */
static void print_table(struct session *s)
{
	size_t wnum = snprintf(NULL, 0, "%zu", s->nrows);
	size_t wtarget = strlen(TARGET_HEADER), wtype = strlen("TYPE"),
	       wsource = strlen("SOURCE");
	char size[16], used[16], avail[16];

	for (size_t i = 0; i < s->nrows; i++) {
		size_t w;
		if ((w = quoted_width(s->rows[i]->target)) > wtarget)
			wtarget = w;
		if ((w = quoted_width(s->rows[i]->fstype)) > wtype)
			wtype = w;
		if ((w = quoted_width(s->rows[i]->source)) > wsource)
			wsource = w;
	}
	fprintf(s->out, "%s:\n%*s  ", TABLE_TITLE, (int)wnum, "#");
	put_cell(s->out, TARGET_HEADER, wtarget);
	put_cell(s->out, "TYPE", wtype);
	put_cell(s->out, "SOURCE", wsource);
	fprintf(s->out, "%6s  %6s  %6s\n", "SIZE", "USED", "FREE");
	for (size_t i = 0; i < s->nrows; i++) {
		const struct fidx_mount *m = s->rows[i];
		fprintf(s->out, "%*zu  ", (int)wnum, i + 1);
		put_cell(s->out, m->target, wtarget);
		put_cell(s->out, m->fstype, wtype);
		put_cell(s->out, m->source, wsource);
		if (m->size) {
			human(m->size, size);
			human(m->used, used);
			human(m->avail, avail);
		} else {
			strcpy(size, "-");
			strcpy(used, "-");
			strcpy(avail, "-");
		}
		fprintf(s->out, "%6s  %6s  %6s\n", size, used, avail);
	}
	fflush(s->out);
}

/*
 * Asks which filesystem to scan.  Returns the chosen row, or NULL when the
 * input ended.
 */
static const struct fidx_mount *ask_filesystem(struct session *s)
{
	char prompt[64];
	snprintf(prompt, sizeof(prompt), "Filesystem to scan [1-%zu]: ", s->nrows);
	for (;;) {
		if (ask(s, prompt) != 0)
			return NULL;
		char *a = trim(s->line);
		if (!*a) {
			say(s, "type a number from 1 to %zu, or a listed mount point", s->nrows);
		} else if (*a >= '0' && *a <= '9') {
			unsigned long k = parse_count(a, s->nrows);
			if (k)
				return s->rows[k - 1];
			say(s, "'%s' is not a number from 1 to %zu", fidx_quote(a), s->nrows);
		} else if (*a == '/') {
			size_t n = strlen(a);
			while (n > 1 && a[n - 1] == '/')
				a[--n] = '\0';
			for (size_t i = 0; i < s->nrows; i++)
				if (strcmp(a, s->rows[i]->target) == 0)
					return s->rows[i];
			say(s, "'%s' is not the mount point of a listed filesystem", fidx_quote(a));
		} else {
			say(s, "'%s' is neither a number from 1 to %zu nor a mount point",
			    fidx_quote(a), s->nrows);
		}
	}
}

/* Asks how many workers.  Returns 1..FIDX_MAX_JOBS (or default_jobs), or 0 when the input ended. */
static unsigned ask_jobs(struct session *s, unsigned default_jobs)
{
	char prompt[64];
	snprintf(prompt, sizeof(prompt), "Worker threads [%u]: ", default_jobs);
	for (;;) {
		if (ask(s, prompt) != 0)
			return 0;
		char *a = trim(s->line);
		if (!*a)
			return default_jobs;
		unsigned long k = parse_count(a, FIDX_MAX_JOBS);
		if (k)
			return (unsigned)k;
		say(s, "'%s' is not a number of workers from 1 to %d", fidx_quote(a), FIDX_MAX_JOBS);
	}
}

/*
 * Checks one sub-path answer a for the mount m: resolves it (relative to the
 * mount point unless absolute).  Returns 0 and sets *root to the resolved
 * path (malloc'ed); 1 when the answer is wrong (it said why); -1 when memory
 * ran out (it said so).
 */
static int check_subpath(struct session *s, const struct fidx_mount *m, const char *a,
			 char **root)
{
	char *path, *real;
	struct stat st, top;
	size_t n = strlen(m->target);

#ifdef _WIN32
	/* C:\x or \\server\share: absolute as typed (stored: /C:/x). */
	bool absolute = *a == '/' || *a == '\\' || (a[0] && a[1] == ':');
#else
	bool absolute = *a == '/';
#endif
	if (absolute)
		path = strdup(a);
	else if (asprintf(&path, "%s/%s", m->target, a) < 0)
		path = NULL;
	if (!path) {
		say(s, "out of memory");
		return -1;
	}
	real = realpath(path, NULL);
	free(path);
	if (!real) {
		if (errno == ENOMEM) {
			say(s, "out of memory");
			return -1;
		}
		say(s, "cannot use '%s': %s", fidx_quote(a), strerror(errno));
		return 1;
	}
	if (strcmp(m->target, "/") != 0 &&
	    (strncmp(real, m->target, n) != 0 || (real[n] != '\0' && real[n] != '/')))
		say(s, "'%s' is outside the chosen filesystem", fidx_quote(a));
	else if (lstat(real, &st) != 0)
		say(s, "cannot use '%s': %s", fidx_quote(a), strerror(errno));
	else if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		say(s, "'%s' is neither a directory nor a regular file", fidx_quote(a));
	else if (S_ISDIR(st.st_mode) && stat(m->target, &top) == 0 && top.st_dev != st.st_dev)
		/* The scan stays on one filesystem: this folder's, not the chosen one. */
		say(s, "'%s' is on another filesystem mounted below '%s'", fidx_quote(a),
		    fidx_quote(m->target));
	else {
		*root = real;
		return 0;
	}
	free(real);
	return 1;
}

/*
 * Asks which part of m to scan.  Returns the path (malloc'ed), or NULL when
 * the input ended or memory ran out (a message was printed).
 */
static char *ask_subpath(struct session *s, const struct fidx_mount *m)
{
	for (;;) {
		char *root = NULL;
		if (ask(s, "Sub-path to scan (blank = all of it): ") != 0)
			return NULL;
		if (!s->line[strspn(s->line, " \t")]) {
			if (!(root = strdup(m->target)))
				say(s, "out of memory");
			return root;
		}
		switch (check_subpath(s, m, s->line, &root)) {
		case 0:
			return root;
		case -1:
			return NULL;
		}
	}
}

int fidx_interactive_ask(FILE *in, FILE *out, unsigned default_jobs,
			 struct fidx_interactive_choice *choice)
{
	struct session s = {.in = in, .out = out};
	const struct fidx_mount *m;
	unsigned jobs;
	char *root;
	int ret = -1;

	if (default_jobs < 1)
		default_jobs = 1;
	if (fidx_mounts_read(&s.mounts, &s.nmounts) != 0) {
		say(&s, "cannot read the mount table: %s", strerror(errno));
		return -1;
	}
	if (pick_rows(&s) != 0) {
		say(&s, "out of memory");
		goto out;
	}
	if (s.nrows == 0) {
		say(&s, "no filesystem holding files is mounted, nothing to scan");
		goto out;
	}
	print_table(&s);
	if (!fidx_privileged())
		fprintf(s.out, "%s\n", NOT_PRIVILEGED);
	if (!(m = ask_filesystem(&s)) || !(jobs = ask_jobs(&s, default_jobs)) ||
	    !(root = ask_subpath(&s, m)))
		goto out;
	choice->root = root;
	choice->jobs = jobs;
	ret = 0;
out:
	free(s.line);
	free(s.rows);
	fidx_mounts_free(s.mounts, s.nmounts);
	return ret;
}
