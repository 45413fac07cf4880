/*
 * json.h - writing JSON strings: options in a scan row, paths and digests in
 * the --json output of the query commands.
 */
#ifndef FIDX_JSON_H
#define FIDX_JSON_H

#include <stddef.h>
#include <stdio.h>

/*
 * Writes s as a quoted JSON string.  Valid UTF-8 is kept; control characters
 * (C0, DEL and the C1 controls U+0080..U+009F) are escaped (\u001b), so no
 * byte of the output can drive a terminal; a byte that is not part of valid
 * UTF-8 is written as \u00XX (its Latin-1 reading), since JSON cannot carry
 * raw bytes.
 */
void fidx_json_string(FILE *out, const char *s);

/*
 * Writes the member "key": path (as fidx_json_string() writes it); when path
 * is not valid UTF-8, also "key_base64": its exact bytes in base64 (RFC
 * 4648), so that a reader can always recover the name.  No separator is
 * written before or after.
 */
void fidx_json_path(FILE *out, const char *key, const char *path);

/* Writes len bytes as lower-case hex (a digest) to out, unquoted. */
void fidx_write_hex(FILE *out, const unsigned char *p, size_t len);

/* Writes len bytes as a quoted lower-case hex string (a digest). */
void fidx_json_hex(FILE *out, const unsigned char *p, size_t len);

#endif /* FIDX_JSON_H */
