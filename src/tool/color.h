/*
 * color.h - paths in colour on a terminal, as ls colours them (--color,
 * NO_COLOR, LS_COLORS).
 *
 * The commands that list paths (find, dupes, du, match) take --color WHEN:
 * never, always, or auto (the default): on when stdout is a terminal,
 * NO_COLOR is unset or empty (no-color.org) and TERM is not "dumb".  The
 * colours are LS_COLORS's (dircolors(1)): by type (di, ln, pi, so, bd, cd,
 * ex for an executable file, fi) and, for a regular file, by extension
 * ("*.jpg", matched without regard to case), over GNU ls's defaults for
 * those it does not name.  A value that is not made of digits and ';' is ignored: a
 * colour can never carry another escape sequence.  The name itself is
 * written as fidx_out_name() writes it (quoted on a terminal when unsafe).
 */
#ifndef FIDX_COLOR_H
#define FIDX_COLOR_H

#include <stdbool.h>
#include <stdint.h>

/* The --color option of a command's table. */
#define FIDX_OPT_COLOR                                                                         \
	FIDX_OPT_CALL(0, "color", "WHEN", fidx_color_arg, NULL,                                  \
		      "colour the paths as ls does (LS_COLORS): never, always or auto (the "   \
		      "default: on a terminal, unless NO_COLOR is set)")

/* Takes --color's argument.  Returns 0, or -1 after printing why. */
int fidx_color_arg(const char *arg, void *unused);

/* Whether paths are coloured (decided on the first call). */
bool fidx_color_on(void);

/*
 * Writes path to stdout as fidx_out_name() does, in the colour of its type
 * (a type letter, 'f' 'd' 'l' 'p' 's' 'c' 'b', or 0 when unknown; mode: its
 * st_mode when known, for the executable bit, else 0) when colours are on,
 * then the line's end ('\0' when nul, else '\n').
 */
void fidx_color_path(const char *path, char type, uint32_t mode, bool nul);

#endif /* FIDX_COLOR_H */
