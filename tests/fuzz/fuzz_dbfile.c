/*
 * fuzz_dbfile.c - a hostile database file: the header probe
 * (src/store/sqlite/dbfile.c, fidx_store_probe()) and every query command
 * run on the file as it is (queries.h).
 *
 * The input is the database file's bytes.  The probe must answer one of its
 * kinds, or -1 with errno set; a file the probe takes for fidx's is then
 * queried by scans, find, du, stats, dupes, export, diff, verify, match and
 * report in-process.  Mutations of the seeds (small fidx databases, made by
 * sqlite/fuzz_dbsql with FIDX_FUZZ_TEMPLATE set) reach the schema check, the
 * scan rows and the row decoders behind SQLite's own checks of its format.
 */
#include "fuzz.h"
#include "queries.h"

#include "store.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_stdout();
	fuzz_query_list();
	return 0;
}

/* Writes the input as a database, probes it and, when it looks like fidx's, queries it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char db[512];
	fuzz_file("fuzz.db", data, size, db, sizeof(db));
	uint32_t version = 0;
	errno = 0;
	int kind = fidx_store_probe(db, &version);
	if (kind < 0 ? errno == 0 : kind > FIDX_STORE_OTHER)
		abort();
	if (size == 0 && kind != FIDX_STORE_NONE)
		abort(); /* an empty file is nothing yet */
	if (kind == FIDX_STORE_FIDX)
		fuzz_queries(db);
	return 0;
}
