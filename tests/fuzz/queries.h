/*
 * queries.h - the query commands of fidx run in-process against one
 * database, for the hostile-database targets (fuzz_dbfile.c,
 * sqlite/fuzz_dbsql.c): scans, find (substring, glob, regex, --json), du,
 * stats, dupes, export in every format, diff, verify, match and report,
 * each as `fidx COMMAND DB ...` would run it, so each reaches its store
 * reads and row checks through the tool layer.  Their output goes to
 * /dev/null (fuzz_quiet_stdout()); their exit status is not judged: a
 * damaged database must be refused with a message, and only a crash, a
 * leak, undefined behaviour or a hang is a finding.
 */
#ifndef FIDX_FUZZ_QUERIES_H
#define FIDX_FUZZ_QUERIES_H

#include <sys/stat.h>

#include "fuzz.h"

/*
 * Makes what the queries need beside the database (once): a hash list for
 * match, holding the SHA-256 and MD5 of "x\n" (a file content of the
 * template's tree, fuzz_template()) and an MD5 of no file.
 */
static inline const char *fuzz_query_list(void)
{
	static char path[512];
	if (!path[0]) {
		static const char list[] =
			"73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac  x\n"
			"401b30e3b8b5d629635a5c613cdb7919  x\n"
			"e4d7f1b4ed2e42d15898f4b27b019da4\n";
		fuzz_file("list.md5", list, sizeof(list) - 1, path, sizeof(path));
	}
	return path;
}

/*
 * Runs every query command against db, and those that take scan ids also
 * with scans 1 and 2 named (a hostile database chooses what ids mean).
 */
static inline void fuzz_queries(const char *db)
{
	char report[512];
	snprintf(report, sizeof(report), "%s/report.html", fuzz_dir());
	const char *list = fuzz_query_list();
	const char *const runs[][12] = {
		{"scans", db, NULL},
		{"scans", "--json", db, NULL},
		{"find", db, "a", NULL},
		{"find", "--json", "--scan", "1", db, "", NULL},
		{"find", "-g", "-i", db, "*.T?T", NULL},
		{"find", "-r", db, "su[b]/.*c", NULL},
		{"du", db, NULL},
		{"du", "--scan", "2", "-d", "3", db, NULL},
		{"stats", db, NULL},
		{"stats", "--json", "--scan", "1,2", db, NULL},
		{"dupes", db, NULL},
		{"dupes", "--json", "--scan", "1,2", db, NULL},
		{"export", db, "--format", "csv", NULL},
		{"export", db, "--format", "jsonl", "--scan", "1", NULL},
		{"export", db, "--format", "sha256sum", NULL},
		{"export", db, "--format", "hashdeep", NULL},
		{"export", db, "--format", "body", NULL},
		{"export", db, "--format", "dfxml", NULL},
		{"diff", db, NULL},
		{"diff", "--json", db, "1", "2", NULL},
		{"verify", db, NULL},
		{"verify", "--scan", "1", db, NULL},
		{"match", db, list, NULL},
		{"match", "--not", db, list, NULL},
		{"report", "-o", report, db, NULL},
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		fuzz_fidx(runs[i]);
}

/*
 * Makes the template database at db (once per process): a small tree (a
 * folder, two files with the same content, an empty file, a link) scanned
 * twice with every digest, a file changed between, so that each query has
 * rows, duplicates, a difference and seals to read.  Aborts when it cannot.
 */
static inline void fuzz_template(const char *db)
{
	char tree[512], path[600];
	snprintf(tree, sizeof(tree), "%s/tree", fuzz_dir());
	snprintf(path, sizeof(path), "%s/sub", tree);
	if (mkdir(tree, 0700) < 0 || mkdir(path, 0700) < 0) {
		perror("fuzz: cannot make the template's tree");
		abort();
	}
	static const struct { const char *name, *text; } files[] = {
		{"tree/a.txt", "x\n"}, {"tree/sub/c.txt", "x\n"}, {"tree/empty", ""},
		{"tree/sub/b.bin", "\x7f" "ELF"},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		fuzz_file(files[i].name, files[i].text, strlen(files[i].text), path, sizeof(path));
	snprintf(path, sizeof(path), "%s/link", tree);
	if (symlink("a.txt", path) < 0)
		abort();
	const char *scan[] = {"scan", "-q", "-o", db, "--hash", "sha256,md5,xxh128", tree, NULL};
	if (fuzz_fidx(scan) != 0)
		abort();
	fuzz_file("tree/sub/b.bin", "changed", 7, path, sizeof(path));
	if (fuzz_fidx(scan) != 0)
		abort();
}

#endif /* FIDX_FUZZ_QUERIES_H */
