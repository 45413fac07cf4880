/*
 * visible.h - a name as a screen shows it: every byte seen, none obeyed,
 * its width in columns known.
 *
 * A name may hold any byte but '/' and NUL: newlines, escape sequences that
 * would retitle or recolour a terminal, bytes that are not UTF-8.  A
 * full-screen program (fidx browse) also needs each name's width, to cut it
 * to a column and to pad after it.  fidx_visible() turns a name into text
 * that a terminal can only show, unit by unit:
 *
 *     unit of the name                      shown as           columns
 *     printable ASCII                       itself             1
 *     '\'                                   \\                 2
 *     newline, tab, carriage return         \n \t \r           2
 *     other C0 bytes, DEL                   \x1b \x7f          4
 *     valid UTF-8, printable (wcwidth)      itself             wcwidth
 *       (zero-width: only after a shown character, as a combining mark)
 *     bidi and zero-width format characters \u{202e}           8 or 9
 *     anything else (invalid UTF-8, a C1    \xff per byte      4 each
 *       control, a character the locale
 *       cannot show; every non-ASCII byte
 *       when the locale is not UTF-8)
 *
 * Like fidx_quote() (error.c), but cut by columns rather than bytes, and
 * aware of the locale the screen uses (setlocale(LC_CTYPE, "") first).
 */
#ifndef FIDX_VISIBLE_H
#define FIDX_VISIBLE_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes of out that always hold one more unit and the NUL. */
#define FIDX_VISIBLE_UNIT 16

/*
 * Writes into out (size bytes, at least FIDX_VISIBLE_UNIT) the visible form
 * of the longest prefix of the NUL-ended string s that fits maxwidth
 * columns and out, NUL-ended; sets *width (when not NULL) to its columns.
 * Returns the bytes of s it shows: strlen(s) when all of s fits.
 */
size_t fidx_visible(const char *s, int maxwidth, char *out, size_t size, int *width);

/* The columns fidx_visible() needs for the whole of s. */
int fidx_visible_width(const char *s);

/* Whether the locale's characters are UTF-8 (else every non-ASCII byte is escaped). */
bool fidx_visible_utf8(void);

#endif /* FIDX_VISIBLE_H */
