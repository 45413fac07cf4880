/*
 * output.h - what the query commands print, and how.
 *
 * A command's results go to stdout through stdio with one large buffer
 * (fidx_out_begin()), written by one thread, so output is a few large
 * write()s and never interleaves.  Paths are printed byte for byte, ended by
 * '\n' or, with -0, by '\0' (the only byte a path cannot hold); the --json
 * form of a path is fidx_json_path() (json.h).  The one exception is a
 * terminal: a name holding control bytes or invalid UTF-8 reaches it quoted
 * as ls quotes it (fidx_out_name()), so a hostile name cannot drive it;
 * every printer of names goes through fidx_out_name().  fidx_out_end() reports a
 * failed write (a full disk, a closed pipe) as one line; nothing is lost
 * silently.
 */
#ifndef FIDX_OUTPUT_H
#define FIDX_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The stdout buffer, chosen by measurement (docs/BENCHMARKS.md, "fidx export
 * and the stdout buffer"): 64 KiB, one default pipe buffer, beat 4 KiB (2x
 * the kernel time), 256 KiB and 1 MiB into a pipe and into a file.
 */
#ifndef FIDX_OUT_BUFFER
#define FIDX_OUT_BUFFER (64 * 1024)
#endif

/* Gives stdout a FIDX_OUT_BUFFER buffer, fully buffered even on a terminal. */
void fidx_out_begin(void);

/*
 * Whether name holds what a terminal may obey rather than show: a C0
 * control byte, DEL, a C1 control (U+0080..U+009F, in UTF-8), or bytes that
 * are not valid UTF-8.
 */
bool fidx_name_unsafe(const char *name);

/*
 * Writes s to out quoted for a POSIX shell as `ls --quoting-style=shell-escape`
 * quotes a name that needs it: in single quotes, a quote as '\'', and each
 * unprintable character (those of fidx_name_unsafe(), and what the C.UTF-8
 * locale's iswprint() refuses) in $'...' as \a \b \t \n \v \f \r or \ooo
 * per byte: 'evil'$'\033''[31m'.  Pasted into a shell, it is s again.
 */
void fidx_shell_quote(FILE *out, const char *s);

/* fidx_shell_quote() into a malloc'ed string, or NULL when out of memory. */
char *fidx_shell_quoted(const char *s);

/* Whether stdout is a terminal (asked once). */
bool fidx_out_tty(void);

/*
 * Writes a name (a path, a root, a link target) to out byte for byte, except
 * on a terminal: there an unsafe name (fidx_name_unsafe()) is written as
 * fidx_shell_quote() quotes it, so that nothing in it can drive the terminal.
 * fidx_out_quotes() says whether it will be (a printer with an encoding of
 * its own, such as a CSV field, quotes the quoted form its way).
 */
static inline bool fidx_out_quotes(FILE *out, const char *name)
{
	return out == stdout && fidx_out_tty() && fidx_name_unsafe(name);
}

static inline void fidx_out_name(FILE *out, const char *name)
{
	if (fidx_out_quotes(out, name))
		fidx_shell_quote(out, name);
	else
		fputs_unlocked(name, out);
}

/* Writes path (as fidx_out_name()) and its terminator ('\0' when nul, else '\n') to stdout. */
static inline void fidx_out_path(const char *path, bool nul)
{
	fidx_out_name(stdout, path);
	putc_unlocked(nul ? '\0' : '\n', stdout);
}

/*
 * Writes "host:" (the host as fidx_out_name() writes a name) when host is
 * not NULL: the prefix of a path of one host among many (a fleet's store).
 */
static inline void fidx_out_host(const char *host)
{
	if (!host)
		return;
	fidx_out_name(stdout, host);
	putc_unlocked(':', stdout);
}

/*
 * Flushes stdout.  Returns 0, or -1 after printing "cannot write output:
 * <why>" when any write failed (once: a later call returns -1 silently).
 * main() calls it after every command, so that no output is lost unnoticed,
 * --help and --version included.
 */
int fidx_out_end(void);

/* Like fidx_out_end(), with "(note)" after the reason, for what was kept. */
int fidx_out_end_note(const char *note);

/*
 * Formats st_mode as `ls -l` does (10 characters: the type letter, '?' for
 * an unknown type, then rwx with setuid/setgid s/S and sticky t/T) into buf.
 * Returns buf.
 */
const char *fidx_mode_string(uint32_t mode, char buf[static 11]);

/* Bytes of the text of fidx_size_text(), its NUL included. */
#define FIDX_SIZE_TEXT 24

/*
 * The one size formatter of fidx: bytes as an exact decimal number when
 * exact, else for people, in powers of 1024 with one decimal below 10
 * ("0 B", "512 B", "1.5 KiB", "23 MiB", "4.0 GiB").  Returns buf.
 */
const char *fidx_size_text(uint64_t bytes, bool exact, char buf[static FIDX_SIZE_TEXT]);

#endif /* FIDX_OUTPUT_H */
