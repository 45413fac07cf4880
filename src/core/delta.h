/*
 * delta.h - a scan as its changes from an earlier scan of the same root:
 * the rows it inherits unchanged, given as runs of the earlier scan's ids,
 * and the encoding a server keeps them in (docs/SCHEMA.md, "scan_delta").
 *
 * A rescan's rows are mostly those of the scan before it, with new ids (the
 * ids of a host's database ascend in the order of its walk).  A run says:
 * the earlier scan's rows of ids lo..hi (those it has) are this scan's rows
 * of ids id + off, equal in every other column; with fill, but for
 * digests_from, which a row whose digests were copied from the earlier scan
 * (core/reuse.h) names: a row of the earlier scan that has a digest and no
 * digests_from gets the earlier scan's id there.  What no run covers is
 * sent as rows.  The same intervals, composed along a chain of deltas, map
 * the rows a server stores to the scans that hold them (fidx_delta_compose()).
 *
 * Encoding of the runs (a bytea on the server): a varint count, then per
 * run, in ascending order of lo: varint lo - (previous hi + 1) (the first:
 * lo), varint (hi - lo) << 1 | fill, zigzag varint off - previous off (the
 * first: off).  Varints are LEB128 (as the path index's).  A 1% change
 * breaks about 1% of the runs: a few bytes per changed row, not per row.
 */
#ifndef FIDX_DELTA_H
#define FIDX_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Keys of a map lie in [0, FIDX_DELTA_KEY_MAX]: ids below 2^40. */
#define FIDX_DELTA_KEY_MAX ((INT64_C(1) << 40) - 1)

/* One interval of a map from the ids of one scan to those of another. */
struct fidx_delta_map {
	int64_t lo, hi;   /* the ids lo..hi of the scan mapped (those it has) ... */
	int64_t off;      /* ... are the rows id + off of the scan mapped to */
	int64_t fill;     /* not 0: digests_from is set to fill in a row with a digest and
			     none (a run's fill: the earlier scan's id) */
};

/*
 * Encodes the n maps m (sorted by lo, disjoint, fill 0 or 1) as the runs of a
 * delta.  Returns the bytes malloc'ed (*len of them), or NULL when out of
 * memory.
 */
uint8_t *fidx_delta_encode(const struct fidx_delta_map *m, size_t n, size_t *len);

/*
 * Decodes len bytes of runs into *out (malloc'ed, *n of them; fill 0 or 1),
 * checked to be sorted, disjoint and within the keys.  Returns 0, or -1
 * with err set (EBADMSG: "the changes of scan S are damaged", with what).
 */
int fidx_delta_decode(const void *p, size_t len, int64_t scan, struct fidx_delta_map **out,
		      size_t *n, struct fidx_error *err);

/*
 * Composes inner (ids of A to ids of B) with outer (ids of B to ids of T),
 * both sorted by lo and disjoint, into the map from ids of A to ids of T,
 * sorted by lo: an A id maps when inner maps it to a B id that outer maps.
 * A fill of inner wins over outer's (the row's value was set nearer A).
 * Returns 0 with *out malloc'ed (*n maps; NULL when none), or -1 with err
 * set (out of memory; EBADMSG when two of inner's maps give the same id,
 * which only damaged runs do: the message names scan, whose runs inner
 * are).  Time O((ninner + nouter) log).
 */
int fidx_delta_compose(const struct fidx_delta_map *inner, size_t ninner, int64_t scan,
		       const struct fidx_delta_map *outer, size_t nouter,
		       struct fidx_delta_map **out, size_t *n, struct fidx_error *err);

#endif /* FIDX_DELTA_H */
