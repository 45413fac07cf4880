/*
 * push.h - a scan copied from one store into a server's (`fidx push`), its
 * seal checked there.
 *
 * Scans made offline (an air-gapped host, an examiner's collected
 * databases) reach a fleet's store this way.  A scan is known by its UUID:
 * one pushed twice is stored once, and a push cut off halfway is taken up
 * after the last row the server committed.  The rows go over as they are
 * (every file column, their ids where they were made), so the seal the
 * server recomputes from its rows is the seal the scan was made with.
 */
#ifndef FIDX_PUSH_H
#define FIDX_PUSH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "scanrow.h"
#include "seal.h"
#include "store.h"

/* What pushing one scan did. */
struct fidx_push_result {
	int64_t id;                   /* the scan's id in the store pushed to */
	bool already;                 /* it was there whole: no row sent, none read back */
	int64_t after;                /* a push cut off was taken up after this row (0: none) */
	uint64_t rows;                /* rows sent */
	int64_t base;                 /* kept as its changes from this scan (its id where it
					 was made; 0: kept whole) ... */
	uint64_t lent;                /* ... which lends it these rows (not sent) */
	struct fidx_seal_result seal; /* its seal recomputed from the server's rows (already:
					 only .sealed and .recorded*, the seal the server
					 recorded) */
};

/*
 * Pushes scan (a complete, sealed scan read from `from`) into `to`: its scan
 * row and its rows, then its seal recomputed from what `to` holds into
 * r->seal (intact when r->seal.computed equals the seal the scan was made
 * with).  A scan complete there already is not read back (that was done
 * when it was pushed, and `fidx verify` does it): r->seal holds the seal
 * the server recorded, which should be the scan's.  A scan made before schema 5 has no UUID: it is given one made from
 * its seal (RFC 9562 version 8), so that pushing it again finds it.  Unless
 * whole, a scan whose earlier scan (the same host's, of the same root) is in
 * `to` goes as its changes from it when that sends fewer rows: the rows
 * equal but for their ids are lent by runs of ids (core/delta.h), the
 * others sent; `to` may still keep it whole (fidx_store_push_delta()).  sent
 * (when not NULL) counts the rows sent, for a progress line.  Returns 0, or
 * -1 with err set.
 */
int fidx_push_scan(struct fidx_store *from, const struct fidx_scan_row *scan,
		   struct fidx_store *to, bool whole, struct fidx_push_result *r,
		   atomic_uint_least64_t *sent, struct fidx_error *err);

#endif /* FIDX_PUSH_H */
