/*
 * commands.h - the subcommands of fidx.
 *
 * To add a command:
 *   1. write src/cmd_<name>.c with `int cmd_<name>(int argc, char **argv)`,
 *      whose return value is the exit status (argv[0] is the command name);
 *   2. declare it here;
 *   3. add it to the table in main.c with its one-line summary;
 *   4. add its tests as tests/e2e/t_<name>*.py and document it in man/fidx.1.
 */
#ifndef FIDX_COMMANDS_H
#define FIDX_COMMANDS_H

/* fidx scan: record a tree into the database. */
int cmd_scan(int argc, char **argv);

/* fidx scans: list the scans of a database. */
int cmd_scans(int argc, char **argv);

/* fidx find: entries by path substring, glob or regex, and filters (a locate). */
int cmd_find(int argc, char **argv);

/* fidx dupes: groups of files with identical content, largest waste first. */
int cmd_dupes(int argc, char **argv);

/* fidx du: disk usage per directory, from the database. */
int cmd_du(int argc, char **argv);

/* fidx stats: totals by type and extension, sizes, largest, oldest, newest. */
int cmd_stats(int argc, char **argv);

/* fidx match: the scanned files whose digest is (--not: is not) in hash lists. */
int cmd_match(int argc, char **argv);

/* fidx export: the inventory as csv, jsonl, checksum lists, body file, DFXML. */
int cmd_export(int argc, char **argv);

/* fidx diff: what was added, removed, changed and moved between two scans. */
int cmd_diff(int argc, char **argv);

/* fidx check: the live tree against its newest complete scan. */
int cmd_check(int argc, char **argv);

/* fidx verify: recompute the seal of scans and name the rows that changed. */
int cmd_verify(int argc, char **argv);

/* Prints fidx's version and the versions of the libraries it runs with. */
void print_version(void);

#endif /* FIDX_COMMANDS_H */
