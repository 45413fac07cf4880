/*
 * queue.h - a bounded, blocking, multi-producer multi-consumer queue of
 * pointers.
 *
 * The stages of the scan pipeline are joined by these queues.  Their fixed
 * capacity is what bounds the pipeline's memory: a producer that finds the
 * queue full waits.  A queue knows how many producers feed it; when the last
 * one calls fidx_queue_done(), consumers drain what is left and then get NULL.
 */
#ifndef FIDX_QUEUE_H
#define FIDX_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fidx_queue;

/*
 * Creates a queue holding at most capacity items, fed by producers threads.
 * Returns NULL with errno set on failure.
 */
struct fidx_queue *fidx_queue_create(size_t capacity, unsigned producers);

/* Frees the queue.  Items still in it are not freed. */
void fidx_queue_destroy(struct fidx_queue *q);

/*
 * Appends item (not NULL), waiting while the queue is full.  Returns 0, or -1
 * with errno = EPIPE when the queue was aborted.
 */
int fidx_queue_push(struct fidx_queue *q, void *item);

/*
 * Appends the n items of items[] in order, waiting for room as needed, and
 * wakes consumers once for all of them.  Returns n, or fewer when the queue
 * was aborted (errno = EPIPE): items[ret..n) are then not in the queue.
 */
size_t fidx_queue_push_many(struct fidx_queue *q, void *const *items, size_t n);

/*
 * Removes the oldest item, waiting while the queue is empty and some producer
 * is still running.  Returns NULL once every producer is done and the queue
 * is drained, or after fidx_queue_abort().
 */
void *fidx_queue_pop(struct fidx_queue *q);

/*
 * As fidx_queue_pop(), but waits at most wait_ns: then returns NULL with
 * *timed_out set (the queue still empty, some producer still running).
 * *timed_out is false whenever another result is returned.
 */
void *fidx_queue_pop_wait(struct fidx_queue *q, int64_t wait_ns, bool *timed_out);

/*
 * Removes up to max of the oldest items into items[] and returns how many.
 * It waits while the queue is empty and some producer is still running; with
 * fill, it waits until max items are there (or every producer is done), so
 * that the caller gets a full window to reorder.  Only one thread at a time
 * may wait with fill.  Returns 0 once every producer is done and the queue is
 * drained, or after fidx_queue_abort().
 */
size_t fidx_queue_pop_many(struct fidx_queue *q, void **items, size_t max, bool fill);

/*
 * Removes the oldest item without waiting.  Returns NULL when the queue is
 * empty at this moment.
 */
void *fidx_queue_trypop(struct fidx_queue *q);

/* Marks one producer as finished; the last one wakes every waiting consumer. */
void fidx_queue_done(struct fidx_queue *q);

/*
 * Makes every current and future push fail and every pop return NULL, so that
 * all stages unblock.  Items left in the queue can be taken with
 * fidx_queue_trypop() for cleanup.
 */
void fidx_queue_abort(struct fidx_queue *q);

/* Returns the number of items in the queue at this moment. */
size_t fidx_queue_len(struct fidx_queue *q);

#endif /* FIDX_QUEUE_H */
