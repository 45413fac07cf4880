/*
 * intern.h - byte strings to dense indexes, for the aggregations of fidx du
 * and fidx stats.
 *
 * A command that sums rows by a key (a directory's path, an extension, a
 * device and inode) interns the key once and gets a small index 0, 1, 2, ...
 * in the order keys first appear; it keeps its sums in its own array indexed
 * by it.  So the table holds only keys, and the caller's records can be any
 * shape and grow with fidx_intern_count().
 *
 *     slots[] (open addressing, linear probing, at most half full)
 *       │ index + 1, 0 = empty
 *       ▼
 *     ents[i] = {hash, len, key}  ──►  key bytes in arena chunks, NUL-ended
 *
 * Keys are any bytes (NULs included) of a given length; each is copied into
 * large arena chunks and ended with a NUL, so a path key can be printed as a
 * C string.  Keys and indexes stay valid until fidx_intern_free(): the table
 * only grows.
 */
#ifndef FIDX_INTERN_H
#define FIDX_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct fidx_intern;

/* Returns a new empty table, or NULL with errno set (ENOMEM). */
struct fidx_intern *fidx_intern_new(void);

/*
 * Returns the index of the key of len bytes at key, adding it when new
 * (*added tells which, when added is not NULL); -1 with errno ENOMEM when it
 * could not be added.
 */
int64_t fidx_intern_add(struct fidx_intern *t, const void *key, size_t len, int *added);

/* Returns the index of the key, or -1 when the table does not hold it. */
int64_t fidx_intern_find(const struct fidx_intern *t, const void *key, size_t len);

/* Returns the key of index i (NUL-ended after its length), and its length in *len. */
const char *fidx_intern_key(const struct fidx_intern *t, int64_t i, size_t *len);

/* Returns how many keys the table holds (the next new index). */
size_t fidx_intern_count(const struct fidx_intern *t);

/* Frees the table and every key.  NULL is allowed. */
void fidx_intern_free(struct fidx_intern *t);

#endif /* FIDX_INTERN_H */
