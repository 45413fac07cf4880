/*
 * push.c - a scan copied from one store into another, its seal checked
 * there (push.h).
 */
#include "push.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "row.h"
#include "sysinfo.h"

/* Ignores a finding of the check: the counts in the result tell them. */
static void count_only(void *arg, const struct fidx_seal_finding *f)
{
	(void)arg;
	(void)f;
}

/*
 * Writes into out the UUID a scan without one is known by: SHA-256 of
 * "fidx scan " and its seal, cut to 16 bytes, as RFC 9562 version 8.
 * Returns 0, or -1 with err set.
 */
static int uuid_of_seal(const uint8_t *seal, size_t len, char out[FIDX_UUID_TEXT],
			struct fidx_error *err)
{
	static const char tag[] = "fidx scan ";
	uint8_t md[FIDX_DIGEST_MAX];
	struct fidx_digester *g = fidx_digester_create(FIDX_SHA256);
	int ok = g && fidx_digester_update(g, tag, sizeof(tag) - 1) == 0 &&
		 fidx_digester_update(g, seal, len) == 0 && fidx_digester_final(g, md) == 0;
	fidx_digester_destroy(g);
	if (!ok)
		return fidx_fail(err, EIO, "cannot hash a seal into a UUID");
	md[6] = (uint8_t)((md[6] & 0x0f) | 0x80); /* version 8 */
	md[8] = (uint8_t)((md[8] & 0x3f) | 0x80); /* the RFC's variant */
	snprintf(out, FIDX_UUID_TEXT,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", md[0],
		 md[1], md[2], md[3], md[4], md[5], md[6], md[7], md[8], md[9], md[10], md[11],
		 md[12], md[13], md[14], md[15]);
	return 0;
}

int fidx_push_scan(struct fidx_store *from, const struct fidx_scan_row *scan,
		   struct fidx_store *to, struct fidx_push_result *r, atomic_uint_least64_t *sent,
		   struct fidx_error *err)
{
	struct fidx_push_state ps;
	struct fidx_scan_row named = *scan;
	char uuid[FIDX_UUID_TEXT];

	*r = (struct fidx_push_result){0};
	if (!scan->status || strcmp(scan->status, "complete") != 0 ||
	    scan->seal_len != FIDX_SEAL_LEN)
		return fidx_fail(err, EINVAL, "scan %" PRId64 " is not complete and sealed: a push"
				 " takes complete scans ('fidx scans' lists them)", scan->id);
	if (!scan->uuid) {
		if (uuid_of_seal(scan->seal, scan->seal_len, uuid, err) < 0)
			return -1;
		named.uuid = uuid;
	}
	if (fidx_store_push_begin(to, &named, &ps, err) < 0)
		return -1;
	r->id = ps.scan_id;
	r->already = ps.complete;
	r->after = ps.after;
	if (!ps.complete) {
		const char *root = scan->root;
		struct fidx_rows_query q = {.scans = &scan->id, .roots = &root, .nscans = 1,
					    .columns = FIDX_FILE_ALL, .order = FIDX_ROWS_ID,
					    .damage = FIDX_ROWS_STOP};
		struct fidx_rows *it = fidx_store_rows(from, &q, err);
		const struct fidx_row *row;
		int rc;
		if (!it)
			return -1;
		while ((rc = fidx_rows_next(it, &row, err)) == 1) {
			if (fidx_row_int(row, FIDX_COL_ID) <= ps.after)
				continue;
			if ((rc = fidx_store_push_row(to, ps.scan_id, row, err)) < 0)
				break;
			r->rows++;
			if (sent)
				atomic_fetch_add_explicit(sent, 1, memory_order_relaxed);
		}
		fidx_rows_close(it);
		if (rc < 0 || fidx_store_push_end(to, ps.scan_id, scan, err) < 0)
			return -1;
	}
	return fidx_store_verify(to, ps.scan_id, count_only, NULL, &r->seal, err);
}
