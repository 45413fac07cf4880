/*
 * postgres_win.c - the PostgreSQL backend's place in the Windows build, which
 * has no libpq (Debian packages none for MinGW): it claims what the real
 * backend claims (a postgresql:// or postgres:// URI, a "key=value" conninfo
 * string) so that such a --db is refused with the reason, never taken for a
 * SQLite file's name.
 */
#include <errno.h>
#include <string.h>

#include "backend.h"
#include "error.h"

#define NO_LIBPQ "the Windows build has no PostgreSQL client (libpq): copy the database to" \
	" Linux and use fidx push there"

/* "none". */
static const char *none_library(void)
{
	return "PostgreSQL: none (no libpq in the Windows build)";
}

/* Whether target is what the PostgreSQL backend would take (postgres.c's claims()). */
static bool none_claims(const char *target)
{
	if (strncmp(target, "postgresql://", 13) == 0 || strncmp(target, "postgres://", 11) == 0)
		return true;
	/* A conninfo string: key=value words, no folder (a file is named with one). */
	const char *eq = strchr(target, '=');
	return eq && eq > target && !strpbrk(target, "/\\:") && target[0] != '.';
}

/* Refuses: there is no server to ask. */
static int none_probe(const char *target, uint32_t *version)
{
	(void)target;
	*version = 0;
	errno = ENOTSUP;
	return -1;
}

/* Refuses, with the reason. */
static struct fidx_store *none_open(const char *target, enum fidx_store_mode mode,
				    const struct fidx_store_opts *opts, struct fidx_error *err)
{
	(void)mode, (void)opts;
	fidx_fail(err, ENOTSUP, "cannot open '%s': %s", fidx_quote(target), NO_LIBPQ);
	return NULL;
}

const struct fidx_store_ops fidx_store_postgres = {
	.name = "postgres",
	.library = none_library,
	.claims = none_claims,
	.probe = none_probe,
	.open = none_open,
};
