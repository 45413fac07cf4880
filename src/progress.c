/*
 * progress.c - one line on stderr, redrawn in place about ten times a second.
 *
 * The reporter thread only reads the pipeline's relaxed counters, so it costs
 * the workers nothing.  Before the walk ends the totals still grow, so the
 * line shows counts found (marked '+'); once the walk is done the file and
 * byte totals are final and the line adds an ETA from the bytes still to hash
 * and the hashing rate of the last five seconds (the rate since the start
 * would be skewed by a warm start or a first run of small files).
 */
#include "progress.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_INTERVAL_NS 100000000L /* 0.1 s between redraws */
#define RATE_WINDOW 50                   /* redraws (5 s) behind the ETA's rate */

struct fidx_progress {
	struct fidx_progress_counters *c;  /* read only */
	bool hashing;                      /* files are hashed */
	pthread_t tid;
	pthread_mutex_t lock;              /* guards done */
	pthread_cond_t wake;               /* signalled by stop */
	bool done;                         /* stop was asked */
	struct timespec start;             /* when the scan began */
	/* The last RATE_WINDOW (seconds, bytes hashed) samples, for a recent rate. */
	double sample_secs[RATE_WINDOW];
	uint64_t sample_bytes[RATE_WINDOW];
	unsigned samples;                  /* samples taken so far */
};

void fidx_format_bytes(char *buf, size_t size, uint64_t bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)bytes;
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, size, "%.1f %s", v, units[u]);
}

/* Seconds since a CLOCK_MONOTONIC time. */
static double elapsed(const struct timespec *since)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) + (now.tv_nsec - since->tv_nsec) / 1e9;
}

/* Draws the line once from the counters. */
static void draw(struct fidx_progress *p)
{
	struct fidx_progress_counters *c = p->c;
	uint64_t entries = atomic_load_explicit(&c->entries_found, memory_order_relaxed);
	uint64_t files = atomic_load_explicit(&c->files_found, memory_order_relaxed);
	uint64_t bytes = atomic_load_explicit(&c->bytes_found, memory_order_relaxed);
	uint64_t hashed = atomic_load_explicit(&c->files_hashed, memory_order_relaxed);
	uint64_t hbytes = atomic_load_explicit(&c->bytes_hashed, memory_order_relaxed);
	bool walked = atomic_load(&c->walk_done);
	double secs = elapsed(&p->start);
	char line[256], b1[32], b2[32], rate[32];
	int n;

	if (!p->hashing) {
		uint64_t written = atomic_load_explicit(&c->entries_written, memory_order_relaxed);
		fidx_format_bytes(b1, sizeof(b1), bytes);
		n = snprintf(line, sizeof(line), "%llu entries, %llu files, %s%s, %.0f entries/s",
			     (unsigned long long)entries, (unsigned long long)files, b1,
			     walked ? ", walk done" : "", secs > 0 ? written / secs : 0.0);
	} else {
		fidx_format_bytes(b1, sizeof(b1), hbytes);
		fidx_format_bytes(b2, sizeof(b2), bytes);
		fidx_format_bytes(rate, sizeof(rate), secs > 0 ? (uint64_t)(hbytes / secs) : 0);
		n = snprintf(line, sizeof(line), "%llu entries, %llu/%llu%s files hashed, %s/%s%s, %s/s",
			     (unsigned long long)entries, (unsigned long long)hashed,
			     (unsigned long long)files, walked ? "" : "+", b1, b2,
			     walked ? "" : "+", rate);
		unsigned slot = p->samples % RATE_WINDOW;
		unsigned oldest = p->samples >= RATE_WINDOW ? slot : 0;
		double recent = p->samples > 0 ? (hbytes - p->sample_bytes[oldest]) /
							 (secs - p->sample_secs[oldest])
					       : 0;
		p->sample_secs[slot] = secs;
		p->sample_bytes[slot] = hbytes;
		p->samples++;
		if (walked && recent > 0 && bytes > hbytes && n > 0 && (size_t)n < sizeof(line)) {
			double eta = (double)(bytes - hbytes) / recent;
			n += snprintf(line + n, sizeof(line) - n, ", ETA %d:%02d",
				      (int)eta / 60, (int)eta % 60);
		}
	}
	if (n < 0)
		return;
	char out[300];
	int len = snprintf(out, sizeof(out), "\r%s\033[K", line);
	ssize_t ignored = write(STDERR_FILENO, out, len < (int)sizeof(out) ? len : (int)sizeof(out) - 1);
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
	static const char erase[] = "\r\033[K";
	ssize_t ignored = write(STDERR_FILENO, erase, sizeof(erase) - 1);
	(void)ignored;
	return NULL;
}

struct fidx_progress *fidx_progress_start(struct fidx_progress_counters *c, bool hashing)
{
	struct fidx_progress *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->c = c;
	p->hashing = hashing;
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
