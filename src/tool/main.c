/*
 * main.c - the fidx command: dispatch to a command of the table.
 *
 * The sources, by layer (docs/ARCHITECTURE.md draws how they fit):
 *
 *   src/lib/          the walker, libfidx.a: walk.c (getdents64 + statx, shared
 *                     work), fdutil.c (paths longer than PATH_MAX, RLIMIT_NOFILE)
 *   src/core/         the engine, which never prints: scan.c (walk -> hash queue ->
 *                     hashing stage -> writer queue -> store), hashio.c and hash.c
 *                     (reading and digests; the crypto library behind
 *                     hash_openssl.c, or hash_cng.c on Windows), queue.c,
 *                     record.c and row.c (an entry, a row and the column list),
 *                     reuse.c (digests of earlier scans),
 *                     seal.c (the seal's lines and hashes), select.c (the scans a
 *                     query reads), diff.c, dupes.c, findpat.c, hashlist.c, when.c,
 *                     error.c (the one error convention)
 *   src/store/        store.h, the API of the database, store.c its dispatch, and
 *                     sqlite/ the SQLite backend (the only code that knows SQL)
 *   src/tool/         this file; options.c (the option parser and --help), query.c
 *                     (a database opened for a query, its scans selected), output.c,
 *                     diag.c (one-line messages), progress.c, the export formats
 *                     (export*.c), diffout.c, interactive.c, space.c
 *   src/tool/builtin/ one file per command (builtin.h says how to add one)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "builtin.h"
#include "source.h"
#include "diag.h"
#include "hash.h"
#include "output.h"
#include "options.h"
#include "store.h"

/* The commands, in the order fidx --help lists them (FIDX_COMMANDS, builtin.h). */
#define FIDX_COMMAND_ENTRY(name, summary, write_failed, failed, setup) \
	{#name, cmd_##name, summary, write_failed, failed, setup},
static const struct fidx_command commands[] = {FIDX_COMMANDS(FIDX_COMMAND_ENTRY)};
#undef FIDX_COMMAND_ENTRY
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

void fidx_print_version(void)
{
	unsigned xxh = XXH_versionNumber();
	printf("fidx %s\n", FIDX_VERSION);
	for (size_t i = 0; fidx_store_library(i); i++)
		printf("%s\n", fidx_store_library(i));
	printf("%s\n", fidx_crypto_library());
	printf("xxHash %u.%u.%u\n", xxh / 10000, xxh / 100 % 100, xxh % 100);
	printf("%s\n", fidx_image_library());
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
static const struct fidx_command *command_named(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

/*
 * Runs cmd with its arguments, the crypto library set up first when it needs
 * it (fidx_crypto_start(): in one thread, before any other; about 1 ms with
 * OpenSSL, so not for the others).
 * Returns its exit status.
 */
static int start(const struct fidx_command *cmd, int argc, char **argv)
{
	if ((cmd->setup & FIDX_CMD_CRYPTO) && fidx_crypto_start() < 0) {
		fidx_error("cannot start %s: %s", fidx_crypto_library(), strerror(errno));
		return cmd->failed;
	}
	return cmd->run(argc, argv, cmd);
}

/*
 * Runs the command line; returns the exit status, before the check of
 * stdout that main() makes.  *cmd is set to the command run, if any.
 */
static int run(int argc, char **argv, const struct fidx_command **cmd)
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
	if (strcmp(argv[1], FIDX_COMPLETION_HELPER) == 0) {
		for (size_t i = 0; i < NCOMMANDS; i++)
			printf("%s\t%s\n", commands[i].name, commands[i].summary);
		printf("help\t%s\n", "the commands, or a command's help");
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		fidx_print_version();
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
		return (*cmd)->run(2, help, *cmd);
	}
	if (!(*cmd = command_named(argv[1])))
		return unknown_command(argv[1]);
	return start(*cmd, argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
#ifdef _WIN32
	fidx_win_start(&argc, &argv);
#endif
	const struct fidx_command *cmd = NULL;
	int status = run(argc, argv, &cmd);
	/* Output that could not be written is an error, --help and --version too. */
	if (fidx_out_end() < 0)
		status = cmd ? cmd->write_failed : 2;
	return status;
}
