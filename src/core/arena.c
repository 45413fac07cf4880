/*
 * arena.c - byte strings in large chunks (arena.h).
 */
#include "arena.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct fidx_arena_chunk {
	struct fidx_arena_chunk *next;  /* the chunk filled before this one */
	size_t used, size;              /* bytes of data[] taken, and its capacity */
	char data[];
};

char *fidx_arena_copy(struct fidx_arena *a, const void *s, size_t len)
{
	struct fidx_arena_chunk *c = a->head;
	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > FIDX_ARENA_CHUNK ? len + 1 : FIDX_ARENA_CHUNK;
		if (!(c = malloc(sizeof(*c) + size))) {
			errno = ENOMEM;
			return NULL;
		}
		c->size = size;
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	char *p = c->data + c->used;
	memcpy(p, s, len);
	p[len] = '\0';
	c->used += len + 1;
	return p;
}

void fidx_arena_free(struct fidx_arena *a)
{
	for (struct fidx_arena_chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}
