/*
 * json.h - writing JSON strings.
 */
#ifndef FIDX_JSON_H
#define FIDX_JSON_H

#include <stdio.h>

/*
 * Writes s as a quoted JSON string.  Valid UTF-8 is kept; control characters
 * are escaped; a byte that is not part of valid UTF-8 is written as \u00XX
 * (its Latin-1 reading), since JSON cannot carry raw bytes.
 */
void fidx_json_string(FILE *out, const char *s);

#endif /* FIDX_JSON_H */
