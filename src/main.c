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
 *   store_sqlite.c  the SQLite store behind store.h (schema.c: the schema's SQL, docs/SCHEMA.md)
 *   progress.c      the progress line
 *   record.c        the inventory entry and digest names
 *   sysinfo.c       host, OS, kernel, architecture, clock
 *   json.c, diag.c  JSON strings; one-line user messages
 */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "commands.h"
#include "diag.h"
#include "diff.h"
#include "hash.h"
#include "output.h"

static const struct command {
	const char *name;                  /* as typed */
	int (*run)(int argc, char **argv); /* returns the exit status */
	const char *summary;               /* one line for --help */
	int write_failed;                  /* the exit status when stdout cannot be written */
	int failed;                        /* ... and when it cannot start (out of memory) */
	bool crypto;                       /* hashes or seals: libcrypto set up first */
} commands[] = {
	{"scan", cmd_scan, "record a folder or disk into the database", 2, 2, true},
	{"scans", cmd_scans, "list the scans a database holds", 2, 2, false},
	{"find", cmd_find, "entries by path substring, glob or regex, with filters", 2, 2, false},
	{"dupes", cmd_dupes, "groups of files with identical content, largest waste first", 2, 2, true},
	{"du", cmd_du, "disk usage per directory (apparent and allocated)", 2, 2, false},
	{"stats", cmd_stats, "totals by type and extension, size histogram, largest, oldest", 2, 2, false},
	{"match", cmd_match, "files whose digest is (--not: is not) in hash lists", 2, 2, false},
	{"export", cmd_export, "write the inventory as csv, jsonl, sha256sum, hashdeep, body, dfxml",
	 2, 2, false},
	{"diff", cmd_diff, "what was added, removed, changed and moved between two scans",
	 FIDX_DIFF_EXIT_WRITE, FIDX_DIFF_EXIT_READ, false},
	{"check", cmd_check, "the live tree against its newest complete scan, as diff reports",
	 FIDX_DIFF_EXIT_WRITE, FIDX_DIFF_EXIT_READ, true},
	{"verify", cmd_verify, "recompute the seal of scans; name rows altered, added, removed", 2, 2,
	 true},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

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
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-10s%s\n", commands[i].name, commands[i].summary);
	fprintf(out, "  %-10s%s\n", "help",
		"this list; 'fidx help COMMAND' is 'fidx COMMAND --help'");
	fputs("\n'fidx COMMAND --help' describes a command; --version shows versions.\n"
	      "FIDX_DB names the database when the command line does not (default ./fidx.db).\n",
	      out);
}

/*
 * The edit distance between a and b (optimal string alignment: insertions,
 * deletions, substitutions and swaps of neighbours cost 1), at most 99.
 */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t d[32][32];
	if (la >= 32 || lb >= 32)
		return 99;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

/*
 * Refuses word, which names no command, in one line: with the closest
 * commands (at most two edits away, as git's "did you mean"), else a
 * pointer to the list.  Returns 2, the exit status of a usage error.
 */
static int unknown_command(const char *word)
{
	size_t best = 3, dist[NCOMMANDS];
	for (size_t i = 0; i < NCOMMANDS; i++) {
		dist[i] = edit_distance(word, commands[i].name);
		if (dist[i] < best)
			best = dist[i];
	}
	if (word[0] == '-') {
		fidx_error("unknown option '%s' (see 'fidx --help')", fidx_quote(word));
		return 2;
	}
	if (best > 2 || best >= strlen(word)) {
		fidx_error("unknown command '%s' (see 'fidx --help')", fidx_quote(word));
		return 2;
	}
	char names[256];
	size_t n = 0, shown = 0, count = 0;
	for (size_t i = 0; i < NCOMMANDS; i++)
		count += dist[i] == best;
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (dist[i] != best)
			continue;
		shown++;
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s'%s'",
				      shown == 1 ? "" : shown == count ? " or " : ", ", commands[i].name);
	}
	fidx_error("unknown command '%s'; did you mean %s?", fidx_quote(word), names);
	return 2;
}

/* Returns the command called name, or NULL. */
static const struct command *command_named(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

/* Sets libcrypto up (fidx_crypto_start()) and fetches SHA-256 once.  Returns 0, or -1. */
static int crypto_start(void)
{
	if (fidx_crypto_start() < 0)
		return -1;
	EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);
	EVP_MD_free(md);
	return md ? 0 : -1;
}

/*
 * Runs cmd with its arguments, libcrypto set up first when it needs it (in
 * one thread, before any other: about 1 ms, so not for the others).
 * Returns its exit status.
 */
static int start(const struct command *cmd, int argc, char **argv)
{
	if (cmd->crypto && crypto_start() < 0) {
		fidx_error("cannot start OpenSSL's libcrypto: out of memory");
		return cmd->failed;
	}
	return cmd->run(argc, argv);
}

/*
 * Runs the command line; returns the exit status, before the check of
 * stdout that main() makes.  *cmd is set to the command run, if any.
 */
static int run(int argc, char **argv, const struct command **cmd)
{
	if (argc < 2) {
		if (isatty(STDIN_FILENO)) {
			char *interactive[] = {"scan", "-i", NULL};
			*cmd = command_named("scan");
			return start(*cmd, 2, interactive);
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
	if (strcmp(argv[1], "help") == 0) {
		if (argc > 3) {
			fidx_error("unexpected argument '%s' (see 'fidx --help')", fidx_quote(argv[3]));
			return 2;
		}
		if (argc == 2 || strcmp(argv[2], "help") == 0) {
			usage(stdout);
			return 0;
		}
		if (!(*cmd = command_named(argv[2])))
			return unknown_command(argv[2]);
		char *help[] = {argv[2], "--help", NULL};
		return (*cmd)->run(2, help);
	}
	if (!(*cmd = command_named(argv[1])))
		return unknown_command(argv[1]);
	return start(*cmd, argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	const struct command *cmd = NULL;
	int status = run(argc, argv, &cmd);
	/* Output that could not be written is an error, --help and --version too. */
	if (fidx_out_end() < 0)
		status = cmd ? cmd->write_failed : 2;
	return status;
}
