/*
 * browse.c - `fidx browse`: walk a scan's tree on the terminal, as ncdu
 * does, from the database alone.
 *
 * The rows of one scan at and below PATH are loaded once into memory
 * (tree.h: every entry with its subtree's sums, hard links counted once per
 * subtree as `fidx du` counts them); everything after that is drawn from
 * the tree, so moving about a 1M-entry scan costs nothing more than its
 * load.  The screen, with ncurses:
 *
 *     line 0          scan, totals of PATH, the scan's root (reverse video)
 *     line 1          --- the directory shown ---
 *     lines 2..R-2    its entries: SIZE [BAR] PCT COUNT|DATE M NAME
 *     line R-1        the directory's totals, the sort, the size shown,
 *                     or the message of the last key       (reverse video)
 *
 * A directory's entries are its children in tree.kids, sorted in place
 * (qsort_r on the node indexes) when it is entered or the order changes:
 * a 60k-entry directory sorts in milliseconds, so nothing is cached.  The
 * selected entry is remembered by node, so a new order or a resize keeps
 * it.  Other views (help, info, duplicates) take the whole screen until a
 * key is pressed.  Duplicates are looked for only when asked for, once
 * (core/dupes.c over the selected scans: it may read files whose digests
 * were not recorded), and the result is kept for the next asks.  `b` leaves
 * curses for a shell in a directory of this machine and comes back.
 *
 * Every name reaches the terminal through fidx_visible() (visible.h):
 * escaped, cut to its columns, never obeyed.
 */
#include "builtin.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "dupes.h"
#include "options.h"
#include "output.h"
#include "query.h"
#include "row.h"
#include "space.h"
#include "store.h"
#include "sysinfo.h"
#include "tree.h"
#include "visible.h"
#include "when.h"

/* What `fidx browse --help` says around its options. */
static const struct fidx_help browse_help = {
	.command = "browse",
	.text = "usage: fidx browse [OPTIONS] [DB] [PATH]\n\n"
		"Walk the tree of a scan on the terminal, as ncdu does, from the database\n"
		"alone: each directory's entries with their sizes (apparent or allocated),\n"
		"a bar, their share of the directory and their entry counts, sorted by\n"
		"size, count, time or name.  Sizes are counted as 'fidx du' counts them: a\n"
		"file with several hard links once in each directory holding a name of it.\n\n"
		"PATH is a directory as the scan recorded it (absolute; a relative one is\n"
		"taken from the working directory, '.' and '..' resolved by name); browse\n"
		"does not go above it.  Without PATH, the selected scan's root (name one\n"
		"with --scan when several are selected).  The scan is loaded into memory\n"
		"first (about 100 MiB for a million entries).  stdin and stdout must be a\n"
		"terminal.\n\n"
		"Keys:\n"
		"  up/k down/j PgUp PgDn Home End   move\n"
		"  Enter, right, l                  open the selected directory\n"
		"  left, h, Backspace               up to the parent (not above PATH)\n"
		"  s C M n                          sort by size, count (entries below),\n"
		"                                   time (newest below) or name; the same\n"
		"                                   key again reverses the order\n"
		"  a                                apparent size / allocated size\n"
		"  i                                the selected entry's row in full\n"
		"  d                                the files with the selected file's\n"
		"                                   content (may read files: ^C stops)\n"
		"  b                                a shell ($SHELL, else /bin/sh) in the\n"
		"                                   selected directory, or the one shown\n"
		"                                   (scans of this machine only)\n"
		"  ?                                help      q  quit\n\n"
		"A line: SIZE [BAR] PERCENT COUNT M NAME.  The bar is the size against the\n"
		"largest entry of the directory, the percentage against the directory's\n"
		"total; COUNT is the entries below a directory (the newest time below\n"
		"when sorted by time).  M marks: ! an error recorded for the entry, e an\n"
		"error below it, . a directory known only from the paths below it (no\n"
		"row), H a hard-linked file's name other than its first in path order\n"
		"(its size counts at the first), ? no sizes recorded, @ a symlink or\n"
		"special file.  Names are shown escaped: \\n, \\x1b, \\xff for control\n"
		"bytes and bytes that are not UTF-8.\n\n",
	.footer = "\nExit status: 0 quit, 2 usage or fatal error (not a terminal, no selected\n"
		  "scan holds PATH).\n",
};

/* What the entries of a directory are sorted by. */
enum sort_key { BY_SIZE, BY_COUNT, BY_TIME, BY_NAME };

/* One `fidx browse` session. */
struct browse {
	struct fidx_query *q;          /* the database */
	size_t k;                      /* the selected scan shown (index in q) */
	const struct fidx_scan_row *scan; /* its row */
	struct fidx_tree *t;           /* its tree at and below PATH */
	bool exact;                    /* -b: sizes in bytes */
	bool allocated;                /* `a`: allocated sizes, not apparent */
	enum sort_key key;             /* the order of the entries ... */
	bool reverse;                  /* ... reversed */
	uint32_t dir;                  /* the directory shown */
	const uint32_t *list;          /* its entries (t->kids), sorted */
	uint32_t n;                    /* how many */
	uint32_t cur;                  /* the selected one (index into list) */
	uint32_t first;                /* the first one on the screen */
	char msg[512];                 /* the status line's message until the next key, or "" */
	struct fidx_dupes *dupes;      /* duplicates, once looked for; NULL before */
};

/* Set by SIGINT while duplicates are looked for: the search stops. */
static atomic_bool dupes_cancel;

/* SIGINT during the search for duplicates: ask it to stop. */
static void on_dupes_sigint(int sig)
{
	(void)sig;
	atomic_store(&dupes_cancel, true);
}

/* The size of node v shown: apparent or allocated. */
static uint64_t size_of(const struct browse *b, const struct fidx_tree_node *v)
{
	return b->allocated ? v->allocated : v->apparent;
}

/* Whether node v can be opened: a directory (with a row or known from paths below). */
static bool is_dir(const struct fidx_tree_node *v)
{
	return v->type == 'd' || (v->flags & FIDX_TREE_NO_ROW);
}

/* Three-way comparison of two unsigned or signed values. */
#define CMP3(x, y) (((x) > (y)) - ((x) < (y)))

/* qsort_r() order of node indexes by b's key: larger (newer) first, names A..Z; reversed. */
static int entry_cmp(const void *pa, const void *pb, void *arg)
{
	const struct browse *b = arg;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	const struct fidx_tree_node *x = &b->t->nodes[ia], *y = &b->t->nodes[ib];
	int c = 0;
	switch (b->key) {
	case BY_SIZE:
		c = CMP3(size_of(b, y), size_of(b, x));
		break;
	case BY_COUNT:
		c = CMP3(y->entries, x->entries);
		break;
	case BY_TIME:
		c = CMP3(y->latest, x->latest);
		break;
	case BY_NAME:
		c = strcmp(x->name, y->name);
		break;
	}
	if (b->reverse)
		c = -c;
	if (!c)
		c = strcmp(x->name, y->name);
	return c ? c : CMP3(ia, ib);
}

/* Sorts the entries of the directory shown, keeping the selected one selected. */
static void sort_entries(struct browse *b)
{
	struct fidx_tree_node *d = &b->t->nodes[b->dir];
	uint32_t *list = b->t->kids + d->kids;
	uint32_t keep = b->n ? list[b->cur] : FIDX_TREE_NONE;
	b->list = list;
	b->n = d->nkids;
	if (b->n > 1)
		qsort_r(list, b->n, sizeof(*list), entry_cmp, b);
	b->cur = 0;
	for (uint32_t i = 0; keep != FIDX_TREE_NONE && i < b->n; i++)
		if (list[i] == keep)
			b->cur = i;
}

/* Shows directory node dir with node select selected (FIDX_TREE_NONE: the first entry). */
static void enter(struct browse *b, uint32_t dir, uint32_t select)
{
	b->dir = dir;
	b->n = 0;
	b->cur = b->first = 0;
	sort_entries(b);
	for (uint32_t i = 0; select != FIDX_TREE_NONE && i < b->n; i++)
		if (b->list[i] == select)
			b->cur = i;
}

/* Sets the status line's message until the next key. */
__attribute__((format(printf, 2, 3)))
static void say(struct browse *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->msg, sizeof(b->msg), fmt, ap);
	va_end(ap);
}

/*
 * Writes name at the cursor, escaped (fidx_visible()), in at most width
 * columns, ended by "..." when cut; then suffix when it fits.  Returns the
 * columns written.
 */
static int put_name(const char *name, int width, const char *suffix)
{
	char buf[1024];
	int w = 0, sw = (int)strlen(suffix);
	if (width <= 0)
		return 0;
	size_t used = fidx_visible(name, width - sw, buf, sizeof(buf), &w);
	if (name[used]) {
		int room = width > 3 ? width - 3 : 0;
		fidx_visible(name, room, buf, sizeof(buf), &w);
		addstr(buf);
		addnstr("...", width - w);
		return w + (width - w < 3 ? width - w : 3);
	}
	addstr(buf);
	addstr(suffix);
	return w + sw;
}

/* Fills the rest of line y from the cursor with spaces (for reverse-video bars). */
static void pad_line(int y)
{
	int cy, cx;
	getyx(stdscr, cy, cx);
	if (cy != y)
		return;
	for (int x = cx; x < COLS; x++)
		addch(' ');
}

/* A count in at most 7 columns: exact below ten million, else 12.3M. */
static const char *count_text(uint64_t n, char buf[static 16])
{
	if (n < 10000000)
		snprintf(buf, 16, "%" PRIu64, n);
	else if (n < 10000000000ULL)
		snprintf(buf, 16, "%.1fM", (double)n / 1e6);
	else
		snprintf(buf, 16, "%.1fG", (double)n / 1e9);
	return buf;
}

/* A time's date (UTC), "2024-01-31", or "-" when unknown. */
static const char *date_text(int64_t sec, char buf[static FIDX_WHEN_ISO])
{
	if (sec == INT64_MIN)
		return "-";
	fidx_when_iso((struct fidx_time){.sec = sec}, buf);
	char *t = strchr(buf + 1, 'T');
	if (t)
		*t = '\0';
	return buf;
}

/* The marker of an entry (see --help), or ' '. */
static char marker(const struct fidx_tree_node *v)
{
	if (v->flags & FIDX_TREE_ERROR)
		return '!';
	if (v->flags & FIDX_TREE_NO_ROW)
		return '.';
	if (v->flags & FIDX_TREE_LINK)
		return 'H';
	if (v->flags & FIDX_TREE_NO_SIZE)
		return '?';
	if (v->errors)
		return 'e';
	if (v->type && v->type != 'f' && v->type != 'd')
		return '@';
	return ' ';
}

/* The name of the order, for the status line. */
static const char *sort_name(const struct browse *b)
{
	static const char *const names[][2] = {
		[BY_SIZE] = {"size, largest first", "size, smallest first"},
		[BY_COUNT] = {"count, most first", "count, fewest first"},
		[BY_TIME] = {"time, newest first", "time, oldest first"},
		[BY_NAME] = {"name, A-Z", "name, Z-A"},
	};
	return names[b->key][b->reverse];
}

/* Rows of the list on the screen. */
static int list_rows(void)
{
	return LINES > 3 ? LINES - 3 : 0;
}

/* Draws entry i of the list on line y. */
static void draw_entry(const struct browse *b, uint32_t i, int y, uint64_t largest,
		       uint64_t total)
{
	const struct fidx_tree_node *v = &b->t->nodes[b->list[i]];
	char size[FIDX_SIZE_TEXT], count[FIDX_WHEN_ISO], bar[16];
	uint64_t s = size_of(b, v);
	int sw = b->exact ? 15 : 10;
	bool wide = COLS >= 60;

	if (i == b->cur)
		attron(A_REVERSE);
	move(y, 0);
	printw("%*s ", sw, v->flags & FIDX_TREE_NO_SIZE ? "-" : fidx_size_text(s, b->exact, size));
	if (wide) {
		int fill = largest ? (int)((unsigned __int128)s * 10 / largest) : 0;
		memset(bar, '#', 10);
		memset(bar + fill, ' ', (size_t)(10 - fill));
		bar[10] = '\0';
		printw("[%s] ", bar);
	}
	printw("%5.1f%% ", total ? (double)s * 100.0 / (double)total : 0.0);
	if (b->key == BY_TIME)
		printw("%10s ", date_text(v->latest, count));
	else
		printw("%7s ", is_dir(v) ? count_text(v->entries - 1, count) : "");
	printw("%c ", marker(v));
	int x = getcurx(stdscr);
	put_name(v->name, COLS - x, is_dir(v) ? "/" : "");
	if (i == b->cur) {
		pad_line(y);
		attroff(A_REVERSE);
	}
}

/* Draws the whole screen: header, path, entries, status line. */
static void draw(struct browse *b)
{
	const struct fidx_tree_node *top = &b->t->nodes[b->t->top], *d = &b->t->nodes[b->dir];
	char a[FIDX_SIZE_TEXT], c[FIDX_SIZE_TEXT], n[16];
	int rows = list_rows();

	erase();
	attron(A_REVERSE);
	move(0, 0);
	printw("scan %" PRId64 ": apparent %s, allocated %s, %" PRIu64 " entries", b->t->scan,
	       fidx_size_text(top->apparent, b->exact, a),
	       fidx_size_text(top->allocated, b->exact, c), top->entries);
	if (top->errors)
		printw(", %" PRIu64 " errors", top->errors);
	addstr("  ");
	put_name(b->scan->root ? b->scan->root : "?", COLS - getcurx(stdscr), "");
	pad_line(0);
	attroff(A_REVERSE);

	if (LINES > 1) {
		move(1, 0);
		addstr("--- ");
		char *path = fidx_tree_path(b->t, b->dir);
		put_name(path ? path : d->name, COLS - 8, " ");
		free(path);
		while (getcury(stdscr) == 1 && getcurx(stdscr) < COLS - 1)
			addch('-');
	}

	/* The list: the selected entry in view. */
	if (b->cur < b->first)
		b->first = b->cur;
	if (rows > 0 && b->cur >= b->first + (uint32_t)rows)
		b->first = b->cur - (uint32_t)rows + 1;
	uint64_t largest = 0;
	for (uint32_t i = 0; i < b->n; i++) {
		uint64_t s = size_of(b, &b->t->nodes[b->list[i]]);
		if (s > largest)
			largest = s;
	}
	for (int r = 0; r < rows && b->first + (uint32_t)r < b->n; r++)
		draw_entry(b, b->first + (uint32_t)r, 2 + r, largest, size_of(b, d));
	if (!b->n && rows > 0)
		mvaddstr(2, 0, "   (empty directory)");

	if (LINES > 2) {
		attron(A_REVERSE);
		move(LINES - 1, 0);
		if (b->msg[0]) {
			put_name(b->msg, COLS, "");
		} else {
			printw(" %s %s  %s entries  sort: %s  ? help",
			       b->allocated ? "allocated" : "apparent",
			       fidx_size_text(size_of(b, d), b->exact, a),
			       count_text(d->entries - 1, n), sort_name(b));
			if (b->n)
				printw("  %" PRIu32 "/%" PRIu32, b->cur + 1, b->n);
		}
		pad_line(LINES - 1);
		attroff(A_REVERSE);
	}
	refresh();
}

/* Shows lines (NULL-ended; each escaped) on the whole screen under title; returns the key that closed it. */
static int page(const char *title, const char *const *lines, size_t nlines)
{
	size_t first = 0;
	for (;;) {
		int rows = LINES > 2 ? LINES - 2 : 1;
		erase();
		attron(A_REVERSE);
		move(0, 0);
		put_name(title, COLS, "");
		pad_line(0);
		attroff(A_REVERSE);
		for (int r = 0; r < rows && first + (size_t)r < nlines; r++) {
			move(1 + r, 0);
			put_name(lines[first + (size_t)r], COLS, "");
		}
		if (LINES > 2) {
			attron(A_REVERSE);
			move(LINES - 1, 0);
			addstr(nlines > (size_t)rows ? " up/down scroll, any other key: back"
						     : " any key: back");
			pad_line(LINES - 1);
			attroff(A_REVERSE);
		}
		refresh();
		int ch = getch();
		if (ch == KEY_RESIZE)
			continue;
		if ((ch == KEY_DOWN || ch == 'j') && first + (size_t)rows < nlines)
			first++;
		else if ((ch == KEY_UP || ch == 'k') && first > 0)
			first--;
		else if (ch != KEY_DOWN && ch != KEY_UP && ch != 'j' && ch != 'k')
			return ch;
	}
}

/* Lines of a page, grown as they are added; each owned. */
struct lines {
	char **v;
	size_t n, cap;
	bool failed;     /* out of memory: the page is incomplete */
};

/* Adds a formatted line (a name in it is escaped when the page is drawn). */
__attribute__((format(printf, 2, 3)))
static void add_line(struct lines *l, const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	int r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0) {
		l->failed = true;
		return;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			free(s);
			l->failed = true;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = s;
}

/*
 * Adds "label" then text, the text cut into lines of the screen's width
 * (escaped as it will be drawn), so that a long path is shown whole.
 */
static void add_wrapped(struct lines *l, const char *label, const char *text)
{
	int width = COLS - (int)strlen(label) - 1;
	if (width < 12)
		width = 12;
	char buf[1024];
	bool first = true;
	do {
		size_t used = fidx_visible(text, width, buf, sizeof(buf), NULL);
		if (!used && *text)
			break;  /* no unit fits: cannot happen at 12 columns */
		/* The piece again, raw, so that the page escapes it as it draws. */
		add_line(l, "%s %.*s", first ? label : "", (int)used, text);
		if (!first) {
			/* align continuation lines under the text */
			char *s = l->v[l->n - 1];
			memset(s, ' ', strlen(label));
		}
		first = false;
		text += used;
	} while (*text);
}

/* Frees the lines. */
static void free_lines(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* Shows the help screen. */
static void show_help(void)
{
	struct lines l = {0};
	const char *p = strstr(browse_help.text, "Keys:\n");
	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		add_line(&l, "%.*s", (int)len, p);
		p += len + (e != NULL);
	}
	if (!l.failed)
		page("fidx browse - help", (const char *const *)l.v, l.n);
	free_lines(&l);
}

/* The columns info reads of the selected row. */
#define INFO_COLUMNS                                                                           \
	(FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_MODE) | FIDX_COLUMN(FIDX_COL_UID) |    \
	 FIDX_COLUMN(FIDX_COL_GID) | FIDX_COLUMN(FIDX_COL_NLINK) | FIDX_COLUMN(FIDX_COL_MTIME) |  \
	 FIDX_COLUMN(FIDX_COL_LINK_TARGET) | FIDX_COLUMN(FIDX_COL_ERROR) |                        \
	 FIDX_COLUMN(FIDX_COL_INO) | FIDX_COLUMN(FIDX_COL_DEV))

/* Shows the selected entry in full: its path, type, sizes, time, row (read again), error. */
static void show_info(struct browse *b)
{
	if (!b->n)
		return say(b, "nothing selected");
	uint32_t i = b->list[b->cur];
	const struct fidx_tree_node *v = &b->t->nodes[i];
	struct lines l = {0};
	char s1[FIDX_SIZE_TEXT], s2[FIDX_SIZE_TEXT], iso[FIDX_WHEN_ISO];
	char *path = fidx_tree_path(b->t, i);
	if (!path)
		return say(b, "out of memory");
	add_wrapped(&l, "path     ", path);
	const char *tn = v->type ? fidx_type_name(v->type) : NULL;
	add_line(&l, "type      %s", tn ? tn : v->flags & FIDX_TREE_NO_ROW ? "directory (no row)"
								: "unknown");
	if (v->flags & FIDX_TREE_NO_SIZE) {
		add_line(&l, "sizes     none recorded");
	} else {
		add_line(&l, "apparent  %" PRIu64 " bytes (%s)%s", v->apparent,
			 fidx_size_text(v->apparent, false, s1), is_dir(v) ? " with all below" : "");
		add_line(&l, "allocated %" PRIu64 " bytes (%s)", v->allocated,
			 fidx_size_text(v->allocated, false, s2));
	}
	if (is_dir(v))
		add_line(&l, "entries   %" PRIu64 " below, %" PRIu64 " with an error", v->entries - 1,
			 v->errors - (v->flags & FIDX_TREE_ERROR ? 1 : 0));
	if (v->flags & FIDX_TREE_LINK)
		add_line(&l, "hard link not the file's first name in path order: its size counts there");
	if (v->id) {
		struct fidx_rows_query rq;
		struct fidx_error err;
		const struct fidx_row *row = NULL;
		fidx_query_rows(b->q, INFO_COLUMNS, FIDX_ROWS_ANY, &rq);
		rq.scans = &b->q->ids[b->k];
		rq.roots = &b->q->roots[b->k];
		rq.nscans = 1;
		int r = fidx_store_row(b->q->st, &rq, v->id, &row, &err);
		struct fidx_time mt;
		if (r < 0) {
			add_line(&l, "row       cannot be read: %s", err.msg);
		} else if (r == 0) {
			add_line(&l, "row       %" PRId64 " is gone from scan %" PRId64, v->id, b->t->scan);
		} else {
			char mode[11];
			if (fidx_row_time(row, FIDX_COL_MTIME, &mt))
				add_line(&l, "mtime     %s (UTC)", fidx_when_iso(mt, iso));
			if (fidx_row_has(row, FIDX_COL_MODE))
				add_line(&l, "mode      %s  uid %" PRId64 "  gid %" PRId64 "  links %" PRIu64,
					 fidx_mode_string((uint32_t)fidx_row_int(row, FIDX_COL_MODE), mode),
					 fidx_row_int(row, FIDX_COL_UID), fidx_row_int(row, FIDX_COL_GID),
					 fidx_row_u64(row, FIDX_COL_NLINK));
			if (fidx_row_has(row, FIDX_COL_INO))
				add_line(&l, "inode     %" PRIu64 " on device %" PRIu64,
					 fidx_row_u64(row, FIDX_COL_INO), fidx_row_u64(row, FIDX_COL_DEV));
			if (fidx_row_has(row, FIDX_COL_LINK_TARGET))
				add_wrapped(&l, "target   ", fidx_row_text(row, FIDX_COL_LINK_TARGET));
			add_line(&l, "row id    %" PRId64 " of scan %" PRId64, v->id, b->t->scan);
			if (fidx_row_has(row, FIDX_COL_ERROR))
				add_wrapped(&l, "error    ", fidx_row_text(row, FIDX_COL_ERROR));
		}
	} else {
		add_line(&l, "row id    none: a directory known only from the paths below it");
	}
	if (is_dir(v) && v->latest != INT64_MIN)
		add_line(&l, "newest    %s (UTC), below", fidx_when_iso((struct fidx_time){.sec = v->latest},
								     iso));
	if (l.failed)
		say(b, "out of memory");
	else
		page("fidx browse - info", (const char *const *)l.v, l.n);
	free_lines(&l);
	free(path);
}

/* Looks for duplicates among the selected scans, once: Returns 0, or -1 with b->msg set. */
static int find_dupes(struct browse *b)
{
	if (b->dupes)
		return 0;
	say(b, "looking for duplicates among the files of the selected scans (reading those"
	       " without a recorded digest; ^C stops)...");
	draw(b);
	struct fidx_dupes_opts o = {
		.jobs = fidx_usable_cpus(), .io = FIDX_IO_AUTO, .cancel = &dupes_cancel,
	};
	struct sigaction sa = {.sa_handler = on_dupes_sigint}, old;
	struct fidx_error err;
	atomic_store(&dupes_cancel, false);
	sigaction(SIGINT, &sa, &old);
	struct fidx_dupes *d = fidx_dupes_find(b->q->st, &b->q->sel, &o, &err);
	sigaction(SIGINT, &old, NULL);
	if (!d) {
		say(b, "cannot look for duplicates: %s", err.msg);
		return -1;
	}
	if (d->interrupted) {
		fidx_dupes_free(d);
		say(b, "the search for duplicates was stopped");
		return -1;
	}
	b->dupes = d;
	b->msg[0] = '\0';
	return 0;
}

/* Whether file f of the duplicates is of the scan shown (its host, when there are several). */
static bool same_host(const struct browse *b, const struct fidx_dupes_file *f)
{
	return !f->host || !b->scan->host || strcmp(f->host, b->scan->host) == 0;
}

/* Shows the other files with the selected file's content (`d`). */
static void show_dupes(struct browse *b)
{
	if (!b->n)
		return say(b, "nothing selected");
	uint32_t i = b->list[b->cur];
	const struct fidx_tree_node *v = &b->t->nodes[i];
	if (v->type != 'f')
		return say(b, "duplicates are of regular files: the selected entry is not one");
	if (v->apparent == 0)
		return say(b, "an empty file: every empty file has its content");
	char *path = fidx_tree_path(b->t, i);
	if (!path)
		return say(b, "out of memory");
	if (find_dupes(b) < 0)
		return free(path);
	const struct fidx_dupes *d = b->dupes;
	const struct fidx_dupes_group *g = NULL;
	const struct fidx_dupes_file *mine = NULL;
	for (size_t gi = 0; gi < d->ngroups && !g; gi++)
		for (size_t fi = 0; fi < d->groups[gi].nfiles && !g; fi++) {
			const struct fidx_dupes_file *f = &d->groups[gi].files[fi];
			for (size_t p = 0; p < f->npaths && same_host(b, f); p++)
				if (strcmp(f->paths[p], path) == 0) {
					g = &d->groups[gi];
					mine = f;
					break;
				}
		}
	if (!g) {
		const char *why = NULL;
		for (size_t li = 0; d->left && li < d->left_out; li++)
			if (strcmp(d->left[li].path, path) == 0)
				why = d->left[li].error;
		if (why)
			say(b, "left out of the search for duplicates: %s", why);
		else
			say(b, "no other file of the selected scans has this content");
		return free(path);
	}
	struct lines l = {0};
	char sz[FIDX_SIZE_TEXT];
	add_line(&l, "%zu files of %s (%" PRIu64 " bytes) have this content:", g->nfiles,
		 fidx_size_text(g->size, false, sz), g->size);
	for (size_t p = 0; p < mine->npaths; p++)
		if (strcmp(mine->paths[p], path) != 0)
			add_line(&l, "  = %s  (the same file: a hard link)", mine->paths[p]);
	for (size_t fi = 0; fi < g->nfiles; fi++) {
		const struct fidx_dupes_file *f = &g->files[fi];
		if (f == mine)
			continue;
		for (size_t p = 0; p < f->npaths; p++)
			add_line(&l, "  %s%s%s%s", p ? "= " : "", f->host ? f->host : "",
				 f->host ? ":" : "", f->paths[p]);
	}
	if (l.failed) {
		say(b, "out of memory");
	} else {
		struct lines t = {0};
		add_line(&t, "fidx browse - duplicates of %s", path);
		if (!t.failed)
			page(t.v[0], (const char *const *)l.v, l.n);
		free_lines(&t);
	}
	free_lines(&l);
	free(path);
}

/*
 * Opens $SHELL (else /bin/sh) in the selected directory, or the one shown,
 * when the scan was made on this machine, of its file systems (not a disk
 * image), and the directory is still one: curses is left first and taken
 * up again after.  Otherwise says why on the status line.
 */
static void open_shell(struct browse *b)
{
	uint32_t target = b->dir;
	if (b->n && is_dir(&b->t->nodes[b->list[b->cur]]))
		target = b->list[b->cur];
	if (b->scan->opt_image)
		return say(b, "no shell: scan %" PRId64 " is of a disk image, its paths are not"
			      " on this machine", b->t->scan);
	struct fidx_sysinfo si;
	fidx_sysinfo_read(&si);
	if (!b->scan->host || strcmp(b->scan->host, si.host) != 0)
		return say(b, "no shell: scan %" PRId64 " was made on host %s, this is %s",
			   b->t->scan, b->scan->host ? b->scan->host : "(unknown)", si.host);
	char *path = fidx_tree_path(b->t, target);
	if (!path)
		return say(b, "out of memory");
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		say(b, "no shell: cannot enter %s: %s", path, strerror(errno));
		return free(path);
	}
	const char *shell = getenv("SHELL");
	if (!shell || !*shell)
		shell = "/bin/sh";
	def_prog_mode();
	endwin();
	printf("fidx browse: %s in '%s'; exit it to come back\n", fidx_quote(shell),
	       fidx_quote(path));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (fchdir(fd) < 0) {
			fidx_error("cannot enter '%s': %s", fidx_quote(path), strerror(errno));
			_exit(126);
		}
		setenv("PWD", path, 1);
		execl(shell, shell, (char *)NULL);
		fidx_error("cannot run '%s': %s", fidx_quote(shell), strerror(errno));
		_exit(127);
	}
	int wstatus = 0, saved = errno;
	if (pid > 0) {
		/* As system(): the shell's ^C is its own. */
		struct sigaction ign = {.sa_handler = SIG_IGN}, oint, oquit;
		sigaction(SIGINT, &ign, &oint);
		sigaction(SIGQUIT, &ign, &oquit);
		while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
			;
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
	}
	close(fd);
	reset_prog_mode();
	clearok(stdscr, TRUE);
	if (pid < 0)
		say(b, "no shell: cannot start a process: %s", strerror(saved));
	else if (WIFEXITED(wstatus))
		say(b, "back from the shell (exit status %d)", WEXITSTATUS(wstatus));
	else
		say(b, "back from the shell (killed by signal %d)", WTERMSIG(wstatus));
	free(path);
}

/* Orders the entries by key; the same key again reverses the order. */
static void set_sort(struct browse *b, enum sort_key key)
{
	b->reverse = b->key == key ? !b->reverse : false;
	b->key = key;
	sort_entries(b);
}

/* Runs the session until `q` (or stdin ends). */
static void session(struct browse *b)
{
	enter(b, b->t->top, FIDX_TREE_NONE);
	for (;;) {
		draw(b);
		errno = 0;  /* ERR with EINTR is a signal; any other ERR, stdin gone */
		int ch = getch();
		int rows = list_rows() > 1 ? list_rows() : 1;
		b->msg[0] = '\0';
		if (ch == ERR) {
			if (errno == EINTR)
				continue;
			return;
		}
		switch (ch) {
		case 'q':
			return;
		case KEY_UP:
		case 'k':
			if (b->cur > 0)
				b->cur--;
			break;
		case KEY_DOWN:
		case 'j':
			if (b->cur + 1 < b->n)
				b->cur++;
			break;
		case KEY_PPAGE:
			b->cur = b->cur > (uint32_t)rows ? b->cur - (uint32_t)rows : 0;
			break;
		case KEY_NPAGE:
			b->cur = b->n && b->n - 1 - b->cur > (uint32_t)rows ? b->cur + (uint32_t)rows
									     : (b->n ? b->n - 1 : 0);
			break;
		case KEY_HOME:
		case 'g':
			b->cur = 0;
			break;
		case KEY_END:
		case 'G':
			b->cur = b->n ? b->n - 1 : 0;
			break;
		case '\n':
		case '\r':
		case KEY_ENTER:
		case KEY_RIGHT:
		case 'l':
			if (b->n && is_dir(&b->t->nodes[b->list[b->cur]]))
				enter(b, b->list[b->cur], FIDX_TREE_NONE);
			else
				say(b, b->n ? "not a directory" : "nothing selected");
			break;
		case KEY_LEFT:
		case 'h':
		case KEY_BACKSPACE:
		case 127:
		case 8:
			if (b->dir != b->t->top)
				enter(b, b->t->nodes[b->dir].parent, b->dir);
			else
				say(b, "at the top: browse does not go above the path it started at");
			break;
		case 's':
			set_sort(b, BY_SIZE);
			break;
		case 'C':
			set_sort(b, BY_COUNT);
			break;
		case 'M':
			set_sort(b, BY_TIME);
			break;
		case 'n':
			set_sort(b, BY_NAME);
			break;
		case 'a':
			b->allocated = !b->allocated;
			if (b->key == BY_SIZE)
				sort_entries(b);
			break;
		case '?':
			show_help();
			break;
		case 'i':
			show_info(b);
			break;
		case 'd':
			show_dupes(b);
			break;
		case 'b':
			open_shell(b);
			break;
		case KEY_RESIZE:
			break;
		default:
			say(b, "unknown key: ? shows the keys");
			break;
		}
	}
}

/* fidx browse (builtin.h): the options, DB and PATH, the tree loaded, then the session. */
int cmd_browse(int argc, char **argv, const struct fidx_command *cmd)
{
	struct fidx_query_args qa = {0};
	struct browse b = {.key = BY_SIZE};
	struct fidx_option options[] = {
		FIDX_OPT_BYTES(&b.exact),
		FIDX_OPT_DB(&qa),
		FIDX_OPT_SCAN(&qa),
		FIDX_OPT_HOST(&qa),
		FIDX_OPT_END,
	};
	char *path = NULL;
	int status = 2;

	(void)cmd;
	int first = fidx_parse_options(argc, argv, options, &browse_help);
	if (first <= 0)
		return first == FIDX_PARSE_HELP ? 0 : 2;
	if (fidx_query_db_path_args(argc, argv, first, "browse", &qa, &path) < 0)
		return 2;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fidx_error("browse needs a terminal: its %s not one ('fidx du' prints sizes for"
			   " a program)", !isatty(STDIN_FILENO) ? "stdin is" : "stdout is");
		return 2;
	}

	if (!(b.q = fidx_query_open(&qa, NULL)) || fidx_space_check_scans(b.q) < 0)
		goto out;
	int64_t k = fidx_tree_pick_scan(b.q, path);
	if (k < 0)
		goto out;
	b.k = (size_t)k;
	b.scan = &b.q->sel.scans.rows[k];
	if (!(b.t = fidx_tree_load(b.q, b.k, path)))
		goto out;
	if (!is_dir(&b.t->nodes[b.t->top])) {
		fidx_error("'%s' is not a directory in scan %" PRId64 " ('fidx find' shows an"
			   " entry)", fidx_quote(b.t->nodes[b.t->top].name), b.t->scan);
		goto out;
	}

	setlocale(LC_CTYPE, "");
	const char *term = getenv("TERM");
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		fidx_error("cannot drive the terminal: TERM is '%s', which terminfo does not know",
			   fidx_quote(term ? term : ""));
		goto out;
	}
	set_term(scr);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	session(&b);
	endwin();
	delscreen(scr);
	status = 0;
out:
	fidx_dupes_free(b.dupes);
	fidx_tree_free(b.t);
	if (fidx_query_close(b.q) < 0)
		status = 2;
	free(path);
	return status;
}
