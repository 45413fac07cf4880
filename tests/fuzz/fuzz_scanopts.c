/*
 * fuzz_scanopts.c - the scan options JSON (src/core/scanrow.c): what a store
 * reads out of scan.options into a scan row's opt_* fields
 * (fidx_scan_row_read_options(), for a store that cannot ask its database),
 * and the shape a new scan must repeat to continue one
 * (fidx_scan_shape_of(): the digest list and the --exclude array decoded).
 *
 * The input is the options text, as a database hands it back (up to its
 * first NUL byte).  A row is read, copied, shaped; the copy must shape the
 * same, and a shape must equal itself.
 */
#include "fuzz.h"

#include "record.h"
#include "scanrow.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* Reads the input as scan.options, then copies and shapes the row. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fidx_scan_row row = {0};
	row.id = 1;
	if (!(row.options = strndup((const char *)data, size)))
		abort();
	if (fidx_scan_row_read_options(&row) < 0)
		abort(); /* out of memory only */
	if (row.opt_stat < -1 || row.opt_stat > 1 || row.opt_xdev < 0 || row.opt_xdev > 1 ||
	    row.opt_follow < 0 || row.opt_follow > 1)
		abort();

	struct fidx_error err = {0};
	struct fidx_scan_row copy;
	if (fidx_scan_row_copy(&copy, &row, &err) < 0)
		abort();
	struct fidx_scan_shape a, b;
	int ra = fidx_scan_shape_of(&row, &a, &err);
	int rb = fidx_scan_shape_of(&copy, &b, &err);
	if (ra != rb || (ra < 0 && err.code != EINVAL))
		abort();
	if (ra == 0) {
		if (!fidx_scan_shape_eq(&a, &b) || !fidx_scan_shape_eq(&a, &a))
			abort();
		for (size_t i = 0; i < a.nexcludes; i++)
			if (!a.excludes[i])
				abort();
		if (a.excludes && a.excludes[a.nexcludes])
			abort(); /* NULL-terminated */
		fidx_scan_shape_free(&a);
		fidx_scan_shape_free(&b);
	}
	unsigned mask;
	if (fidx_scan_row_digests(&row, &mask) == 0 && mask >> FIDX_NDIGESTS)
		abort();
	fidx_scan_row_free(&copy);
	fidx_scan_row_free(&row);
	return 0;
}
