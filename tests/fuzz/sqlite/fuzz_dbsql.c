/*
 * fuzz_dbsql.c - a hostile database made by SQL: the row checks
 * (src/store/sqlite/rowcheck.c), the row and scan-row readers (read.c,
 * paths.c), the path index as stored (pathstore.c, core/pathindex.c) and the
 * scan options JSON (core/scanrow.c), each reached through the query
 * commands (queries.h).
 *
 * At start a template database is scanned from a small tree (fuzz_template()).
 * Each input is SQL, run on a fresh copy of it (`UPDATE file SET size='abc'`,
 * `UPDATE scan SET options='{"hash":1}'`, `DELETE FROM path_block`, a
 * trigger, a view...), within a bounded number of SQLite steps; every query
 * command then reads the copy.  What SQL can write, a hostile or damaged
 * database can hold; fidx must refuse it with a message, never misread it.
 *
 * FIDX_FUZZ_TEMPLATE=PATH copies the template to PATH at start (the seeds of
 * fuzz_dbfile are made so).
 */
#include <sqlite3.h>

#include "fuzz/fuzz.h"
#include "fuzz/queries.h"

/* The template's bytes, read once. */
static uint8_t *template;
static size_t template_len;

/* Stops a statement that has run too long (SQLite's progress handler). */
static int too_long(void *arg)
{
	return ++*(unsigned *)arg > 2000; /* 2,000 calls of 1,000 steps each */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_stdout();
	char db[512];
	snprintf(db, sizeof(db), "%s/template.db", fuzz_dir());
	fuzz_template(db);
	FILE *f = fopen(db, "rb");
	if (!f || fseek(f, 0, SEEK_END) < 0 || (template_len = (size_t)ftell(f)) == 0 ||
	    fseek(f, 0, SEEK_SET) < 0 || !(template = malloc(template_len)) ||
	    fread(template, 1, template_len, f) != template_len) {
		perror("fuzz: cannot read the template database");
		abort();
	}
	fclose(f);
	const char *save = getenv("FIDX_FUZZ_TEMPLATE");
	if (save && *save) {
		FILE *out = fopen(save, "wb");
		if (!out || fwrite(template, 1, template_len, out) != template_len || fclose(out))
			abort();
	}
	return 0;
}

/* Runs the input as SQL on a copy of the template, then every query command on it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char db[512], *sql = strndup((const char *)data, size);
	if (!sql)
		abort();
	fuzz_file("fuzz.db", template, template_len, db, sizeof(db));
	sqlite3 *h = NULL;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		abort();
	unsigned calls = 0;
	sqlite3_progress_handler(h, 1000, too_long, &calls);
	sqlite3_limit(h, SQLITE_LIMIT_LENGTH, 1 << 20);
	sqlite3_exec(h, sql, NULL, NULL, NULL); /* what it did before an error stays */
	free(sql);
	if (sqlite3_close(h) != SQLITE_OK)
		abort();
	fuzz_queries(db);
	return 0;
}
