/*
 * queue.c - a bounded, blocking MPMC queue of pointers.
 *
 * A ring buffer under one mutex, with two condition variables:
 *
 *     push ──► [ head ... tail ) ──► pop
 *              waits on not_full      waits on not_empty
 *
 * The mutex guards every field.  Items are batches or records, so one lock
 * round trip moves many entries and contention stays low; a lock-free ring
 * was not worth its complexity at these rates.  `producers` counts the
 * producers still running: when it reaches 0 the queue is closed, pops drain
 * it and then return NULL.  `aborted` makes everything return at once.
 */
#include "queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

struct fidx_queue {
	pthread_mutex_t lock;     /* guards everything below */
	pthread_cond_t not_full;  /* signalled when an item is removed */
	pthread_cond_t not_empty; /* signalled when an item is added or the queue closes */
	pthread_cond_t filled;    /* signalled when len reaches fill_want, or on close */
	size_t fill_want;         /* items the filling popper waits for, 0 if none */
	void **items;             /* ring of capacity slots */
	size_t capacity;          /* slots in items */
	size_t head;              /* index of the oldest item */
	size_t len;               /* items in the ring */
	unsigned producers;       /* producers not yet done */
	bool aborted;             /* fidx_queue_abort() was called */
};

struct fidx_queue *fidx_queue_create(size_t capacity, unsigned producers)
{
	if (capacity == 0) {
		errno = EINVAL;
		return NULL;
	}
	struct fidx_queue *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->items = calloc(capacity, sizeof(*q->items));
	if (!q->items) {
		free(q);
		return NULL;
	}
	q->capacity = capacity;
	q->producers = producers;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->not_full, NULL);
	pthread_cond_init(&q->not_empty, NULL);
	pthread_cond_init(&q->filled, NULL);
	return q;
}

void fidx_queue_destroy(struct fidx_queue *q)
{
	if (!q)
		return;
	pthread_cond_destroy(&q->filled);
	pthread_cond_destroy(&q->not_empty);
	pthread_cond_destroy(&q->not_full);
	pthread_mutex_destroy(&q->lock);
	free(q->items);
	free(q);
}

int fidx_queue_push(struct fidx_queue *q, void *item)
{
	return fidx_queue_push_many(q, &item, 1) == 1 ? 0 : -1;
}

size_t fidx_queue_push_many(struct fidx_queue *q, void *const *items, size_t n)
{
	size_t done = 0;
	pthread_mutex_lock(&q->lock);
	while (done < n) {
		while (q->len == q->capacity && !q->aborted)
			pthread_cond_wait(&q->not_full, &q->lock);
		if (q->aborted) {
			errno = EPIPE;
			break;
		}
		size_t added = 0;
		while (done < n && q->len < q->capacity) {
			q->items[(q->head + q->len) % q->capacity] = items[done++];
			q->len++;
			added++;
		}
		if (added > 1)
			pthread_cond_broadcast(&q->not_empty);
		else
			pthread_cond_signal(&q->not_empty);
		if (q->fill_want && q->len >= q->fill_want)
			pthread_cond_signal(&q->filled);
	}
	pthread_mutex_unlock(&q->lock);
	return done;
}

/* Takes the oldest item; the lock is held and the queue is not empty. */
static void *take_locked(struct fidx_queue *q)
{
	void *item = q->items[q->head];
	q->head = (q->head + 1) % q->capacity;
	q->len--;
	pthread_cond_signal(&q->not_full);
	return item;
}

void *fidx_queue_pop(struct fidx_queue *q)
{
	void *item = NULL;
	fidx_queue_pop_many(q, &item, 1, false);
	return item;
}

void *fidx_queue_pop_wait(struct fidx_queue *q, int64_t wait_ns, bool *timed_out)
{
	struct timespec until;
	void *item = NULL;
	clock_gettime(CLOCK_REALTIME, &until); /* the condition variables' clock */
	until.tv_sec += (time_t)(wait_ns / 1000000000);
	until.tv_nsec += (long)(wait_ns % 1000000000);
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&q->lock);
	while (q->len == 0 && q->producers > 0 && !q->aborted)
		if (pthread_cond_timedwait(&q->not_empty, &q->lock, &until) == ETIMEDOUT)
			break;
	if (q->len > 0 && !q->aborted)
		item = take_locked(q);
	*timed_out = !item && q->producers > 0 && !q->aborted;
	pthread_mutex_unlock(&q->lock);
	return item;
}

size_t fidx_queue_pop_many(struct fidx_queue *q, void **items, size_t max, bool fill)
{
	size_t n = 0;
	pthread_mutex_lock(&q->lock);
	if (fill) {
		if (max > q->capacity)
			max = q->capacity;
		q->fill_want = max;
		while (q->len < max && q->producers > 0 && !q->aborted)
			pthread_cond_wait(&q->filled, &q->lock);
		q->fill_want = 0;
	}
	while (q->len == 0 && q->producers > 0 && !q->aborted)
		pthread_cond_wait(&q->not_empty, &q->lock);
	while (n < max && q->len > 0 && !q->aborted)
		items[n++] = take_locked(q);
	pthread_mutex_unlock(&q->lock);
	return n;
}

void *fidx_queue_trypop(struct fidx_queue *q)
{
	void *item = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->len > 0)
		item = take_locked(q);
	pthread_mutex_unlock(&q->lock);
	return item;
}

void fidx_queue_done(struct fidx_queue *q)
{
	pthread_mutex_lock(&q->lock);
	if (q->producers > 0 && --q->producers == 0) {
		pthread_cond_broadcast(&q->not_empty);
		pthread_cond_broadcast(&q->filled);
	}
	pthread_mutex_unlock(&q->lock);
}

void fidx_queue_abort(struct fidx_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->aborted = true;
	pthread_cond_broadcast(&q->not_empty);
	pthread_cond_broadcast(&q->filled);
	pthread_cond_broadcast(&q->not_full);
	pthread_mutex_unlock(&q->lock);
}

size_t fidx_queue_len(struct fidx_queue *q)
{
	pthread_mutex_lock(&q->lock);
	size_t len = q->len;
	pthread_mutex_unlock(&q->lock);
	return len;
}
