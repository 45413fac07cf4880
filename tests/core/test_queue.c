/*
 * test_queue.c - the bounded queue: order, bounds, many producers and
 * consumers, putting and taking many at once (and waiting for a full window), closing and
 * aborting.  Also run under TSan by `make check`.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "queue.h"

#define ITEM(n) ((void *)(uintptr_t)(n))

static void test_fifo_order(void **state)
{
	(void)state;
	struct fidx_queue *q = fidx_queue_create(4, 1);
	assert_non_null(q);
	for (uintptr_t i = 1; i <= 4; i++)
		assert_int_equal(fidx_queue_push(q, ITEM(i)), 0);
	assert_int_equal(fidx_queue_len(q), 4);
	for (uintptr_t i = 1; i <= 4; i++)
		assert_ptr_equal(fidx_queue_pop(q), ITEM(i));
	assert_null(fidx_queue_trypop(q));
	fidx_queue_done(q);
	assert_null(fidx_queue_pop(q)); /* closed and drained: does not block */
	fidx_queue_destroy(q);
}

static void test_zero_capacity_refused(void **state)
{
	(void)state;
	errno = 0;
	assert_null(fidx_queue_create(0, 1));
	assert_int_equal(errno, EINVAL);
}

struct slow_consumer {
	struct fidx_queue *q;
	int taken;
};

/* Waits, so that the producer meets a full queue, then takes everything. */
static void *slow_consume(void *arg)
{
	struct slow_consumer *c = arg;
	usleep(50 * 1000);
	while (fidx_queue_pop(c->q))
		c->taken++;
	return NULL;
}

static void test_push_waits_when_full(void **state)
{
	(void)state;
	struct slow_consumer c = {.q = fidx_queue_create(2, 1)};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, slow_consume, &c), 0);
	for (uintptr_t i = 1; i <= 100; i++) {
		assert_int_equal(fidx_queue_push(c.q, ITEM(i)), 0);
		assert_true(fidx_queue_len(c.q) <= 2); /* never above capacity */
	}
	fidx_queue_done(c.q);
	pthread_join(t, NULL);
	assert_int_equal(c.taken, 100);
	fidx_queue_destroy(c.q);
}

#define PRODUCERS 4
#define CONSUMERS 3
#define PER_PRODUCER 20000

struct mpmc {
	struct fidx_queue *q;
	unsigned id;
	uint64_t sum;        /* consumers: sum of items taken */
	uint64_t count;      /* consumers: items taken */
};

static void *produce(void *arg)
{
	struct mpmc *p = arg;
	for (uintptr_t i = 0; i < PER_PRODUCER; i++)
		assert_int_equal(fidx_queue_push(p->q, ITEM(p->id * PER_PRODUCER + i + 1)), 0);
	fidx_queue_done(p->q);
	return NULL;
}

static void *consume(void *arg)
{
	struct mpmc *c = arg;
	void *item;
	while ((item = fidx_queue_pop(c->q))) {
		c->sum += (uintptr_t)item;
		c->count++;
	}
	return NULL;
}

static void test_many_producers_and_consumers(void **state)
{
	(void)state;
	struct fidx_queue *q = fidx_queue_create(16, PRODUCERS);
	struct mpmc p[PRODUCERS], c[CONSUMERS];
	pthread_t pt[PRODUCERS], ct[CONSUMERS];
	for (unsigned i = 0; i < CONSUMERS; i++) {
		c[i] = (struct mpmc){.q = q};
		pthread_create(&ct[i], NULL, consume, &c[i]);
	}
	for (unsigned i = 0; i < PRODUCERS; i++) {
		p[i] = (struct mpmc){.q = q, .id = i};
		pthread_create(&pt[i], NULL, produce, &p[i]);
	}
	for (unsigned i = 0; i < PRODUCERS; i++)
		pthread_join(pt[i], NULL);
	uint64_t sum = 0, count = 0;
	for (unsigned i = 0; i < CONSUMERS; i++) {
		pthread_join(ct[i], NULL);
		sum += c[i].sum;
		count += c[i].count;
	}
	uint64_t n = (uint64_t)PRODUCERS * PER_PRODUCER;
	assert_int_equal(count, n);
	assert_int_equal(sum, n * (n + 1) / 2); /* every item exactly once */
	fidx_queue_destroy(q);
}

struct blocked {
	struct fidx_queue *q;
	int ret;
	void *item;
};

static void *blocked_push(void *arg)
{
	struct blocked *b = arg;
	b->ret = fidx_queue_push(b->q, ITEM(2));
	return NULL;
}

static void *blocked_pop(void *arg)
{
	struct blocked *b = arg;
	b->item = fidx_queue_pop(b->q);
	return NULL;
}

static void test_abort_unblocks_everyone(void **state)
{
	(void)state;
	struct fidx_queue *full = fidx_queue_create(1, 1);
	struct fidx_queue *empty = fidx_queue_create(1, 1);
	assert_int_equal(fidx_queue_push(full, ITEM(1)), 0);
	struct blocked pusher = {.q = full}, popper = {.q = empty, .item = ITEM(7)};
	pthread_t a, b;
	pthread_create(&a, NULL, blocked_push, &pusher);
	pthread_create(&b, NULL, blocked_pop, &popper);
	usleep(20 * 1000);
	fidx_queue_abort(full);
	fidx_queue_abort(empty);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert_int_equal(pusher.ret, -1);
	assert_null(popper.item);
	assert_int_equal(fidx_queue_push(full, ITEM(3)), -1);
	assert_int_equal(errno, EPIPE);
	/* What was left can still be taken for cleanup. */
	assert_ptr_equal(fidx_queue_trypop(full), ITEM(1));
	fidx_queue_destroy(full);
	fidx_queue_destroy(empty);
}

/* Aborts the queue arg after 20 ms. */
static void *abort_later(void *arg)
{
	usleep(20 * 1000);
	fidx_queue_abort(arg);
	return NULL;
}

/* Aborts the queue arg once it holds 4 items (its capacity in test_push_many). */
static void *abort_when_full(void *arg)
{
	while (fidx_queue_len(arg) < 4)
		usleep(1000);
	fidx_queue_abort(arg);
	return NULL;
}

/* A consumer that takes items one by one, slowly. */
static void *take_slowly(void *arg)
{
	struct slow_consumer *c = arg;
	while (fidx_queue_pop(c->q)) {
		c->taken++;
		usleep(1000);
	}
	return NULL;
}

/*
 * push_many keeps the order, waits for room in a queue smaller than the
 * items, and stops at an abort, saying how many went in.
 */
static void test_push_many(void **state)
{
	(void)state;
	void *items[10], *got[10];
	for (uintptr_t i = 0; i < 10; i++)
		items[i] = ITEM(i + 1);
	struct fidx_queue *q = fidx_queue_create(16, 1);
	assert_non_null(q);
	assert_int_equal(fidx_queue_push_many(q, items, 10), 10);
	assert_int_equal(fidx_queue_pop_many(q, got, 10, false), 10);
	for (uintptr_t i = 0; i < 10; i++)
		assert_ptr_equal(got[i], ITEM(i + 1));
	fidx_queue_destroy(q);

	struct slow_consumer c = {.q = fidx_queue_create(3, 1)};
	pthread_t t;
	assert_non_null(c.q);
	assert_int_equal(pthread_create(&t, NULL, take_slowly, &c), 0);
	assert_int_equal(fidx_queue_push_many(c.q, items, 10), 10);
	fidx_queue_done(c.q);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(c.taken, 10);
	fidx_queue_destroy(c.q);

	q = fidx_queue_create(4, 1);
	assert_non_null(q);
	assert_int_equal(pthread_create(&t, NULL, abort_when_full, q), 0);
	errno = 0;
	assert_int_equal(fidx_queue_push_many(q, items, 10), 4);
	assert_int_equal(errno, EPIPE);
	assert_int_equal(pthread_join(t, NULL), 0);
	fidx_queue_destroy(q);
}

/* pop_many takes what is there, up to max, in order, and 0 once closed. */
static void test_pop_many(void **state)
{
	(void)state;
	void *items[8];
	struct fidx_queue *q = fidx_queue_create(16, 1);
	assert_non_null(q);
	for (uintptr_t i = 1; i <= 5; i++)
		assert_int_equal(fidx_queue_push(q, ITEM(i)), 0);
	assert_int_equal(fidx_queue_pop_many(q, items, 3, false), 3);
	for (uintptr_t i = 0; i < 3; i++)
		assert_ptr_equal(items[i], ITEM(i + 1));
	assert_int_equal(fidx_queue_pop_many(q, items, 8, false), 2);
	assert_ptr_equal(items[0], ITEM(4));
	assert_ptr_equal(items[1], ITEM(5));
	fidx_queue_done(q);
	assert_int_equal(fidx_queue_pop_many(q, items, 8, false), 0);
	assert_int_equal(fidx_queue_pop_many(q, items, 8, true), 0);
	fidx_queue_destroy(q);
}

struct filler {
	struct fidx_queue *q;
	uintptr_t n;              /* items to push, one by one */
};

/* Pushes n items slowly, then closes the queue. */
static void *fill_slowly(void *arg)
{
	struct filler *f = arg;
	for (uintptr_t i = 1; i <= f->n; i++) {
		usleep(2000);
		if (fidx_queue_push(f->q, ITEM(i)) < 0)
			break; /* the test then fails on the counts */
	}
	fidx_queue_done(f->q);
	return NULL;
}

/*
 * With fill, pop_many waits for max items, so a window is full; at the end
 * it returns what is left, and a max above the capacity is a full queue.
 */
static void test_pop_many_fill(void **state)
{
	(void)state;
	void *items[16];
	struct filler f = {.q = fidx_queue_create(6, 1), .n = 10};
	pthread_t t;
	assert_non_null(f.q);
	assert_int_equal(pthread_create(&t, NULL, fill_slowly, &f), 0);
	/* The items come 2 ms apart: without the wait it would return 1. */
	assert_int_equal(fidx_queue_pop_many(f.q, items, 4, true), 4);
	for (uintptr_t i = 0; i < 4; i++)
		assert_ptr_equal(items[i], ITEM(i + 1));
	/* 16 is more than the 6 slots: it waits for a full queue. */
	assert_int_equal(fidx_queue_pop_many(f.q, items, 16, true), 6);
	assert_ptr_equal(items[0], ITEM(5));
	assert_ptr_equal(items[5], ITEM(10));
	assert_int_equal(fidx_queue_pop_many(f.q, items, 16, true), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	fidx_queue_destroy(f.q);
}

/* A fill wait ends at abort. */

static void test_pop_many_fill_abort(void **state)
{
	(void)state;
	void *items[4];
	struct fidx_queue *q = fidx_queue_create(8, 1);
	pthread_t t;
	assert_non_null(q);
	assert_int_equal(fidx_queue_push(q, ITEM(1)), 0);
	assert_int_equal(pthread_create(&t, NULL, abort_later, q), 0);
	assert_int_equal(fidx_queue_pop_many(q, items, 4, true), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	fidx_queue_destroy(q);
}

/*
 * pop_wait: an item waiting is returned at once; an empty queue with a
 * producer running times out (after the wait, not before); a queue whose
 * producers are done gives NULL without a time-out.
 */
static void test_pop_wait(void **state)
{
	(void)state;
	struct fidx_queue *q = fidx_queue_create(4, 1);
	int item = 7;
	bool timed_out = true;
	assert_int_equal(fidx_queue_push(q, &item), 0);
	assert_ptr_equal(fidx_queue_pop_wait(q, 1000000000, &timed_out), &item);
	assert_false(timed_out);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_null(fidx_queue_pop_wait(q, 50000000, &timed_out));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(timed_out);
	int64_t waited = (t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
	assert_true(waited >= 49000000);
	fidx_queue_done(q);
	assert_null(fidx_queue_pop_wait(q, 1000000000, &timed_out));
	assert_false(timed_out);
	fidx_queue_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_order),
		cmocka_unit_test(test_zero_capacity_refused),
		cmocka_unit_test(test_push_waits_when_full),
		cmocka_unit_test(test_many_producers_and_consumers),
		cmocka_unit_test(test_abort_unblocks_everyone),
		cmocka_unit_test(test_push_many),
		cmocka_unit_test(test_pop_many),
		cmocka_unit_test(test_pop_many_fill),
		cmocka_unit_test(test_pop_many_fill_abort),
		cmocka_unit_test(test_pop_wait),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
