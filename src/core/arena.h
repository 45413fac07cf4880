/*
 * arena.h - byte strings copied into large chunks, freed all at once.
 *
 * For the query commands that keep many keys or paths for the length of one
 * run (the aggregation keys of du and stats, the candidate paths of dupes):
 * one malloc per FIDX_ARENA_CHUNK bytes instead of one per string, and no
 * per-string header.  A string longer than a chunk gets a chunk of its own.
 *
 *     arena.head ──► chunk being filled ──► older chunks ──► NULL
 *
 * Copies stay valid, at the same address, until fidx_arena_free().
 */
#ifndef FIDX_ARENA_H
#define FIDX_ARENA_H

#include <stddef.h>

/* Bytes of one chunk. */
#define FIDX_ARENA_CHUNK (1u << 20)

struct fidx_arena_chunk;

/* An arena; zero-initialised it is empty and ready. */
struct fidx_arena {
	struct fidx_arena_chunk *head;  /* the chunk being filled, the older ones behind it */
};

/*
 * Copies len bytes of s (any bytes, NULs included) and a terminating NUL
 * into the arena.  Returns the copy, or NULL with errno ENOMEM.
 */
char *fidx_arena_copy(struct fidx_arena *a, const void *s, size_t len);

/* Frees every chunk; the arena is empty again. */
void fidx_arena_free(struct fidx_arena *a);

#endif /* FIDX_ARENA_H */
