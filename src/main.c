/*
 * main.c - the fidx command: dispatch to a subcommand.
 *
 * Map of the sources (docs/ARCHITECTURE.md draws the pipeline):
 *   main.c          this file: the subcommand table, --help, --version
 *   cmd_scan.c      `fidx scan`: options, roots, summary, exit status
 *   cmd_scans.c     `fidx scans`: the scans a database holds (the model query command)
 *   cmd_dupes.c     `fidx dupes`: identical files (dupes.c: size, edges, SHA-256)
 *   cmd_find.c      `fidx find`: a locate (findpat.c: patterns; pathindex.c: the trigram index;
 *                   when.c: --newer dates, ISO times, shared with stats)
 *   cmd_du.c        `fidx du`: sizes per directory, one pass (intern.c: keys to indexes)
 *   cmd_stats.c     `fidx stats`: figures of a scan, one pass (space.c: shared with du)
 *   cmd_match.c     `fidx match`: files in (or not in) hash lists (hashlist.c: lists, digest set)
 *   cmd_export.c    `fidx export`: formats other tools read (export*.c: one writer per format)
 *   cmd_diff.c      `fidx diff`: two scans compared (diff.c: merge by path, moves, report)
 *   cmd_check.c     `fidx check`: a live scan (scratch database) against its baseline, by diff.c
 *   cmd_verify.c    `fidx verify`: a scan's seal recomputed (seal.c: the canonical rows)
 *   cli.c           option tables, --help and option errors of every command
 *   query.c         the read side: read-only open, scan selection (--scan)
 *   output.c        results on stdout: one big buffer, byte-exact paths, sizes for people
 *   dbfile.c        recognising a fidx database from its header, before SQLite opens it
 *   interactive.c   the prompts of `fidx scan -i` (and of a bare `fidx` on a terminal)
 *   mounts.c        the mount table, from /proc/self/mountinfo
 *   scan.c          the pipeline: walker -> hash queue -> hash workers -> writer queue -> writer
 *   walk.c          the parallel directory walk (getdents64 + statx, shared work)
 *   queue.c         the bounded blocking queue between pipeline stages
 *   hash.c          all requested digests of a file in one read pass
 *   store_sqlite.c  the SQLite store behind store.h (schema in docs/SCHEMA.md)
 *   progress.c      the progress line
 *   record.c        the inventory entry and digest names
 *   sysinfo.c       host, OS, kernel, architecture, clock
 *   json.c, diag.c  JSON strings; one-line user messages
 */
#include <openssl/crypto.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "commands.h"
#include "diag.h"

static const struct command {
	const char *name;                  /* as typed */
	int (*run)(int argc, char **argv); /* returns the exit status */
	const char *summary;               /* one line for --help */
} commands[] = {
	{"scan", cmd_scan, "record a folder or disk into the database"},
	{"scans", cmd_scans, "list the scans a database holds"},
	{"find", cmd_find, "entries by path substring, glob or regex, with filters"},
	{"dupes", cmd_dupes, "groups of files with identical content, largest waste first"},
	{"du", cmd_du, "disk usage per directory (apparent and allocated)"},
	{"stats", cmd_stats, "totals by type and extension, size histogram, largest, oldest"},
	{"match", cmd_match, "files whose digest is (--not: is not) in hash lists"},
	{"export", cmd_export, "write the inventory as csv, jsonl, sha256sum, hashdeep, body, dfxml"},
	{"diff", cmd_diff, "what was added, removed, changed and moved between two scans"},
	{"check", cmd_check, "the live tree against its newest complete scan, as diff reports"},
	{"verify", cmd_verify, "recompute the seal of scans; name rows altered, added, removed"},
};

void print_version(void)
{
	unsigned xxh = XXH_versionNumber();
	printf("fidx %s\n", FIDX_VERSION);
	printf("SQLite %s\n", sqlite3_libversion());
	printf("%s\n", OpenSSL_version(OPENSSL_VERSION));
	printf("xxHash %u.%u.%u\n", xxh / 10000, xxh / 100 % 100, xxh % 100);
}

/* Prints the commands, generated from the table, on out. */
static void usage(FILE *out)
{
	fputs("usage: fidx COMMAND [OPTIONS] [ARGS]\n"
	      "       fidx              (on a terminal: choose a filesystem to scan, as scan -i)\n\n"
	      "A fast, complete inventory of a disk or folder in SQLite.\n\n"
	      "Commands:\n", out);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s%s\n", commands[i].name, commands[i].summary);
	fputs("\n'fidx COMMAND --help' describes a command; --version shows versions.\n", out);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		if (isatty(STDIN_FILENO)) {
			char *interactive[] = {"scan", "-i", NULL};
			return cmd_scan(2, interactive);
		}
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		print_version();
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fidx_error("unknown command '%s'", fidx_quote(argv[1]));
	usage(stderr);
	return 2;
}
