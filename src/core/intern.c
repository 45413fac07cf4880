/*
 * intern.c - byte strings to dense indexes (intern.h).
 *
 * Hashing is XXH3-64 (libxxhash, already linked for the digests).  The slot
 * array doubles when it would pass half full, so a probe sequence stays
 * short; the entries keep their hash, so growing never hashes a key again.
 */
#include "intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "arena.h"

struct entry {
	uint64_t hash;    /* XXH3-64 of the key */
	size_t len;       /* key length in bytes, without the NUL */
	const char *key;  /* in an arena chunk */
};

struct fidx_intern {
	uint32_t *slots;     /* index + 1 of an entry, 0 for an empty slot */
	size_t mask;         /* slots - 1 (a power of two) */
	struct entry *ents;  /* entries by index */
	size_t n, cap;       /* entries used and allocated */
	struct fidx_arena keys; /* the keys' bytes */
};

struct fidx_intern *fidx_intern_new(void)
{
	struct fidx_intern *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->mask = 1023;
	if (!(t->slots = calloc(t->mask + 1, sizeof(*t->slots)))) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

/* Returns the slot that holds key, or the empty slot where it would go. */
static size_t probe(const struct fidx_intern *t, const void *key, size_t len, uint64_t h)
{
	size_t i = (size_t)h & t->mask;
	for (;;) {
		uint32_t s = t->slots[i];
		if (!s)
			return i;
		const struct entry *e = &t->ents[s - 1];
		if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0)
			return i;
		i = (i + 1) & t->mask;
	}
}

int64_t fidx_intern_find(const struct fidx_intern *t, const void *key, size_t len)
{
	uint32_t s = t->slots[probe(t, key, len, XXH3_64bits(key, len))];
	return s ? (int64_t)s - 1 : -1;
}

/* Doubles the slot array.  Returns 0, or -1 with errno ENOMEM. */
static int grow_slots(struct fidx_intern *t)
{
	size_t nmask = t->mask * 2 + 1;
	uint32_t *ns = calloc(nmask + 1, sizeof(*ns));
	if (!ns) {
		errno = ENOMEM;
		return -1;
	}
	for (size_t k = 0; k < t->n; k++) {
		size_t i = (size_t)t->ents[k].hash & nmask;
		while (ns[i])
			i = (i + 1) & nmask;
		ns[i] = (uint32_t)(k + 1);
	}
	free(t->slots);
	t->slots = ns;
	t->mask = nmask;
	return 0;
}

int64_t fidx_intern_add(struct fidx_intern *t, const void *key, size_t len, int *added)
{
	uint64_t h = XXH3_64bits(key, len);
	size_t i = probe(t, key, len, h);

	if (added)
		*added = 0;
	if (t->slots[i])
		return (int64_t)t->slots[i] - 1;
	if (t->n >= UINT32_MAX - 1) {
		errno = ENOMEM;
		return -1;
	}
	/* At most half full after this key: grow first, and find the slot again. */
	if (2 * (t->n + 1) > t->mask + 1) {
		if (grow_slots(t) < 0)
			return -1;
		i = probe(t, key, len, h);
	}
	if (t->n == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 256;
		struct entry *ne = realloc(t->ents, ncap * sizeof(*ne));
		if (!ne) {
			errno = ENOMEM;
			return -1;
		}
		t->ents = ne;
		t->cap = ncap;
	}
	const char *copy = fidx_arena_copy(&t->keys, key, len);
	if (!copy)
		return -1;
	t->ents[t->n] = (struct entry){.hash = h, .len = len, .key = copy};
	t->slots[i] = (uint32_t)(t->n + 1);
	if (added)
		*added = 1;
	return (int64_t)t->n++;
}

const char *fidx_intern_key(const struct fidx_intern *t, int64_t i, size_t *len)
{
	if (len)
		*len = t->ents[i].len;
	return t->ents[i].key;
}

size_t fidx_intern_count(const struct fidx_intern *t)
{
	return t->n;
}

void fidx_intern_free(struct fidx_intern *t)
{
	if (!t)
		return;
	fidx_arena_free(&t->keys);
	free(t->ents);
	free(t->slots);
	free(t);
}
