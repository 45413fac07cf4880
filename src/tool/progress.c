/*
 * progress.c - one line on stderr, redrawn in place about ten times a second.
 *
 * The reporter thread only reads relaxed counters, so it costs the workers
 * nothing.  Two kinds of line share it:
 *
 *   a scan's (fidx_progress_start): before the walk ends the totals still
 *   grow, so the line shows counts found (marked '+'); once the walk is done
 *   the file and byte totals are final and the line adds an ETA from the
 *   bytes still to hash and the hashing rate of the last five seconds (the
 *   rate since the start would be skewed by a warm start or a first run of
 *   small files);
 *
 *   a query's (fidx_progress_rows_start): rows read of the rows the selected
 *   scans hold, the rate and an ETA, drawn only once the command has run for
 *   half a second (a quick query shows nothing).
 *
 * Fitting.  Each redraw asks the terminal's width (TIOCGWINSZ on stderr), so
 * a resize is followed at the next redraw, and writes "\r", the line, and
 * "\033[K" (erase to the end of the line) in one write().  The line is made
 * of parts, each with a rank: the parts that fit in width - 1 columns are
 * kept, the most useful first (files hashed, then bytes, ETA, rate,
 * entries), in their reading order, so the line never reaches the last
 * column and never wraps: every redraw overwrites the one before, and the
 * final erase leaves nothing behind.  While a line is shown, diag.c erases it
 * before writing a message (fidx_diag_progress_line()).
 */
#include "progress.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/ioctl.h>
#endif
#include <sys/stat.h>
#ifndef _WIN32
#include <termios.h>
#endif
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "output.h"

#define PROGRESS_INTERVAL_NS 100000000L /* 0.1 s between redraws */
#define RATE_WINDOW 50                   /* redraws (5 s) behind the ETA's rate */
#define ROWS_DELAY 0.5                   /* seconds before a query's line appears */
#define MAX_PARTS 6

struct fidx_progress {
	struct fidx_progress_counters *c;  /* a scan's counters (read only), or NULL */
	bool hashing;                      /* a scan: files are hashed */
	const atomic_uint_least64_t *rows; /* a query: rows read so far */
	uint64_t total;                    /* a query: rows to read (0: unknown) */
	pthread_t tid;
	pthread_mutex_t lock;              /* guards done */
	pthread_cond_t wake;               /* signalled by stop */
	bool done;                         /* stop was asked */
	bool drawn;                        /* a line is on the terminal */
	struct timespec start;             /* when the work began */
	/* The last RATE_WINDOW (seconds, amount done) samples, for a recent rate. */
	double sample_secs[RATE_WINDOW];
	uint64_t sample_done[RATE_WINDOW];
	unsigned samples;                  /* samples taken so far */
};

/* One part of the line: its text and how much it matters (0 most). */
struct part {
	char text[80];
	int rank;
};

/* Seconds since a CLOCK_MONOTONIC time. */
static double elapsed(const struct timespec *since)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) + (now.tv_nsec - since->tv_nsec) / 1e9;
}

/* The columns of the terminal on stderr; $COLUMNS, else 80, when it cannot tell. */
static unsigned term_width(void)
{
#ifdef _WIN32
	int cols = fidx_win_console_columns(STDERR_FILENO);
	if (cols > 0)
		return (unsigned)cols;
#else
	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
#endif
	const char *env = getenv("COLUMNS");
	long n = env ? strtol(env, NULL, 10) : 0;
	return n > 0 && n < 10000 ? (unsigned)n : 80;
}

/*
 * Joins into line (of size bytes) the parts that fit in width - 1 columns,
 * by rank (the most useful kept first), in their order, separated by ", ";
 * a first part too long alone is cut.  Returns the length.
 */
static size_t fit(char *line, size_t size, const struct part *parts, size_t n, unsigned width)
{
	size_t budget = width > 1 ? width - 1 : 1, used = 0;
	bool keep[MAX_PARTS] = {false};
	size_t kept = 0;
	for (int rank = 0; rank < MAX_PARTS; rank++) {
		for (size_t i = 0; i < n; i++) {
			if (parts[i].rank != rank)
				continue;
			size_t need = strlen(parts[i].text) + (kept ? 2 : 0);
			if (used + need <= budget) {
				keep[i] = true;
				used += need;
				kept++;
			}
		}
	}
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		if (!keep[i])
			continue;
		len += (size_t)snprintf(line + len, size - len, "%s%s", len ? ", " : "", parts[i].text);
		if (len >= size)
			len = size - 1;
	}
	if (!kept) { /* not even the most useful part fits: as much of it as does */
		const struct part *best = &parts[0];
		for (size_t i = 1; i < n; i++)
			if (parts[i].rank < best->rank)
				best = &parts[i];
		len = strlen(best->text) < budget ? strlen(best->text) : budget;
		memcpy(line, best->text, len);
		line[len] = '\0';
	}
	return len;
}

/*
 * Takes a sample of the amount done at secs and returns the rate over the
 * last RATE_WINDOW samples (0 before the second).
 */
static double recent_rate(struct fidx_progress *p, double secs, uint64_t done)
{
	unsigned slot = p->samples % RATE_WINDOW;
	unsigned oldest = p->samples >= RATE_WINDOW ? slot : 0;
	double rate = p->samples > 0 && secs > p->sample_secs[oldest]
			      ? (done - p->sample_done[oldest]) / (secs - p->sample_secs[oldest])
			      : 0;
	p->sample_secs[slot] = secs;
	p->sample_done[slot] = done;
	p->samples++;
	return rate;
}

/* Formats seconds as "ETA m:ss" (or "ETA h:mm:ss") into buf. */
static void format_eta(char *buf, size_t size, double eta)
{
	long s = eta > 359999 ? 359999 : (long)eta;
	if (s >= 3600)
		snprintf(buf, size, "ETA %ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, size, "ETA %ld:%02ld", s / 60, s % 60);
}

/* Fills the parts of a scan's line; returns how many. */
static size_t scan_parts(struct fidx_progress *p, double secs, struct part *parts)
{
	struct fidx_progress_counters *c = p->c;
	uint64_t entries = atomic_load_explicit(&c->entries_found, memory_order_relaxed);
	uint64_t files = atomic_load_explicit(&c->files_found, memory_order_relaxed);
	uint64_t bytes = atomic_load_explicit(&c->bytes_found, memory_order_relaxed);
	uint64_t hashed = atomic_load_explicit(&c->files_hashed, memory_order_relaxed);
	uint64_t hbytes = atomic_load_explicit(&c->bytes_hashed, memory_order_relaxed);
	bool walked = atomic_load(&c->source_done);
	char b1[32], b2[32];
	size_t n = 0;

	if (!p->hashing) {
		uint64_t written = atomic_load_explicit(&c->entries_written, memory_order_relaxed);
		fidx_size_text(bytes, false, b1);
		snprintf(parts[n].text, sizeof(parts[n].text), "%llu %s", (unsigned long long)entries,
			 fidx_plural(entries, "entry", "entries"));
		parts[n++].rank = 0;
		snprintf(parts[n].text, sizeof(parts[n].text), "%llu %s", (unsigned long long)files,
			 fidx_plural(files, "file", "files"));
		parts[n++].rank = 2;
		snprintf(parts[n].text, sizeof(parts[n].text), "%s", b1);
		parts[n++].rank = 3;
		if (walked) {
			snprintf(parts[n].text, sizeof(parts[n].text), "walk done");
			parts[n++].rank = 4;
		}
		snprintf(parts[n].text, sizeof(parts[n].text), "%.0f entries/s",
			 secs > 0 ? written / secs : 0.0);
		parts[n++].rank = 1;
		return n;
	}
	snprintf(parts[n].text, sizeof(parts[n].text), "%llu %s", (unsigned long long)entries,
		 fidx_plural(entries, "entry", "entries"));
	parts[n++].rank = 4;
	snprintf(parts[n].text, sizeof(parts[n].text), "%llu/%llu%s files hashed",
		 (unsigned long long)hashed, (unsigned long long)files, walked ? "" : "+");
	parts[n++].rank = 0;
	fidx_size_text(hbytes, false, b1);
	fidx_size_text(bytes, false, b2);
	snprintf(parts[n].text, sizeof(parts[n].text), "%s/%s%s", b1, b2, walked ? "" : "+");
	parts[n++].rank = 1;
	fidx_size_text(secs > 0 ? (uint64_t)(hbytes / secs) : 0, false, b1);
	snprintf(parts[n].text, sizeof(parts[n].text), "%s/s", b1);
	parts[n++].rank = 3;
	double recent = recent_rate(p, secs, hbytes);
	if (walked && recent > 0 && bytes > hbytes) {
		format_eta(parts[n].text, sizeof(parts[n].text), (double)(bytes - hbytes) / recent);
		parts[n++].rank = 2;
	}
	return n;
}

/* Fills the parts of a query's line; returns how many. */
static size_t rows_parts(struct fidx_progress *p, double secs, struct part *parts)
{
	uint64_t done = atomic_load_explicit(p->rows, memory_order_relaxed);
	size_t n = 0;
	if (p->total) {
		snprintf(parts[n].text, sizeof(parts[n].text), "%llu/%llu rows read (%.0f%%)",
			 (unsigned long long)done, (unsigned long long)p->total,
			 done >= p->total ? 100.0 : 100.0 * done / p->total);
	} else {
		snprintf(parts[n].text, sizeof(parts[n].text), "%llu %s read",
			 (unsigned long long)done, fidx_plural(done, "row", "rows"));
	}
	parts[n++].rank = 0;
	snprintf(parts[n].text, sizeof(parts[n].text), "%.0f rows/s", secs > 0 ? done / secs : 0.0);
	parts[n++].rank = 2;
	double recent = recent_rate(p, secs, done);
	if (p->total > done && recent > 0) {
		format_eta(parts[n].text, sizeof(parts[n].text), (double)(p->total - done) / recent);
		parts[n++].rank = 1;
	}
	return n;
}

/* Draws the line once, fitted to the terminal's width as it is now. */
static void draw(struct fidx_progress *p)
{
	struct part parts[MAX_PARTS];
	double secs = elapsed(&p->start);
	if (!p->c && secs < ROWS_DELAY)
		return;
	size_t n = p->c ? scan_parts(p, secs, parts) : rows_parts(p, secs, parts);
	char out[512];
	out[0] = '\r';
	size_t len = 1 + fit(out + 1, sizeof(out) - 8, parts, n, term_width());
	memcpy(out + len, "\033[K", 3);
	len += 3;
	p->drawn = true;
	fidx_diag_progress_line(true);
	ssize_t ignored = write(STDERR_FILENO, out, len);
	(void)ignored;
}

/* The reporter thread: redraws every PROGRESS_INTERVAL_NS until stopped, then erases. */
static void *progress_main(void *arg)
{
	struct fidx_progress *p = arg;
	pthread_mutex_lock(&p->lock);
	while (!p->done) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += PROGRESS_INTERVAL_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->wake, &p->lock, &until);
		if (!p->done)
			draw(p);
	}
	pthread_mutex_unlock(&p->lock);
	if (p->drawn) {
		static const char erase[] = "\r\033[K";
		ssize_t ignored = write(STDERR_FILENO, erase, sizeof(erase) - 1);
		(void)ignored;
		fidx_diag_progress_line(false);
	}
	return NULL;
}

/* Starts the reporter thread of p (calloc'ed, fields set).  Returns p, or NULL. */
static struct fidx_progress *start(struct fidx_progress *p)
{
	clock_gettime(CLOCK_MONOTONIC, &p->start);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	if (pthread_create(&p->tid, NULL, progress_main, p) != 0) {
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	return p;
}

struct fidx_progress *fidx_progress_start(struct fidx_progress_counters *c, bool hashing)
{
	struct fidx_progress *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->c = c;
	p->hashing = hashing;
	return start(p);
}

bool fidx_progress_rows_wanted(bool quiet, bool to_stdout)
{
	struct stat out, err;
	if (quiet || !isatty(STDERR_FILENO))
		return false;
	/* Results on the same terminal are the progress: a line would only get in their way. */
	return !(to_stdout && isatty(STDOUT_FILENO) && fstat(STDOUT_FILENO, &out) == 0 &&
		 fstat(STDERR_FILENO, &err) == 0 && out.st_rdev == err.st_rdev);
}

struct fidx_progress *fidx_progress_rows_start(const atomic_uint_least64_t *rows, uint64_t total)
{
	struct fidx_progress *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->rows = rows;
	p->total = total;
	return start(p);
}

void fidx_progress_stop(struct fidx_progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->done = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->tid, NULL);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
