/*
 * export_sums.c - `fidx export --format sha256sum | md5sum | sha1sum |
 * sha512sum | hashdeep`: checksum lists that the tools themselves verify.
 *
 * sha256sum, md5sum, sha1sum and sha512sum write what GNU coreutils writes
 * and `sha256sum -c` (md5sum -c, ...) reads: the hex digest, two spaces
 * (text mode) and the path.  A name holding a backslash, a newline or a
 * carriage return is escaped as coreutils 9.1 (Debian 12) escapes it: the
 * line starts with a backslash, and in the name \ becomes \\, LF becomes \n
 * and CR becomes \r (coreutils reads the same escapes back).  Only regular
 * files are listed; one whose digest is NULL (it could not be read: see its
 * error) is left out and counted in a warning.  When a selected scan did not
 * compute the digest at all, nothing is written: the error says which scan
 * and what it has.
 *
 * hashdeep writes a known-hash file for `hashdeep -a -k FILE -r DIR`:
 *
 *     %%%% HASHDEEP-1.0
 *     %%%% size,md5,sha1,sha256,filename
 *     ## Invoked from: <working directory>
 *     ## $ fidx export ...             ('#' for root, as hashdeep writes it)
 *     ##
 *     <size>,<md5>,<sha1>,<sha256>,<path>
 *
 * with the digests among hashdeep's md5, sha1 and sha256 that every
 * selected scan computed.  hashdeep splits a line at its first commas and
 * takes the rest as the name, so commas in names are fine; it has no escape
 * at all, and reads a line up to LF with a final CR removed, so a name
 * holding a newline or ending in CR cannot be written: such files are left
 * out with a warning (hashdeep itself writes them raw and then fails its
 * own audit).  hashdeep follows symlinks when it walks (-r), so a tree with
 * symlinks audits clean against an export of a `fidx scan --follow`.
 */
#include "export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "json.h"
#include "record.h"

/* Refuses scans that did not compute the format's digest (export_need_digest()). */
int export_sums_begin(struct export_ctx *ctx)
{
	return export_need_digest(ctx, ctx->fmt->digest, ctx->fmt->name);
}

/* Writes one "<hex>  <path>" line in coreutils' form, or counts the file. */
void export_sums_row(struct export_ctx *ctx, const struct fidx_row *row)
{
	enum fidx_digest d = (enum fidx_digest)ctx->fmt->digest;
	size_t dlen = fidx_digest_len(d);
	const uint8_t *digest = fidx_row_digest(row, d);
	const char *path = export_text(row, FIDX_COL_PATH);
	size_t len = fidx_row_len(row, FIDX_COL_PATH);
	FILE *out = ctx->out;

	if (!digest) {
		ctx->no_digest++;
		return;
	}
	bool shown = fidx_out_quotes(out, path); /* on a terminal: quoted instead */
	bool escape = !shown && strcspn(path, "\\\n\r") != len;
	if (escape)
		putc_unlocked('\\', out);
	fidx_write_hex(out, digest, dlen);
	export_put(out, "  ", 2);
	if (shown) {
		fidx_shell_quote(out, path);
	} else if (!escape) {
		export_put(out, path, len);
	} else {
		for (const char *p = path; *p; p++) {
			switch (*p) {
			case '\\': export_put(out, "\\\\", 2); break;
			case '\n': export_put(out, "\\n", 2); break;
			case '\r': export_put(out, "\\r", 2); break;
			default: putc_unlocked(*p, out);
			}
		}
	}
	putc_unlocked('\n', out);
}

/* Warns about the regular files left out for want of a digest. */
void export_sums_end(struct export_ctx *ctx)
{
	if (ctx->no_digest)
		fidx_warn("%llu regular %s left out: %s no digest (%s could not be read; %s error"
			  " column says why)", (unsigned long long)ctx->no_digest,
			  fidx_plural(ctx->no_digest, "file", "files"),
			  fidx_plural(ctx->no_digest, "it has", "they have"),
			  fidx_plural(ctx->no_digest, "it", "they"),
			  fidx_plural(ctx->no_digest, "its", "their"));
}

/* hashdeep's digests, in the order of its columns. */
static const enum fidx_digest hashdeep_digests[] = {FIDX_MD5, FIDX_SHA1, FIDX_SHA256};
#define NHASHDEEP (sizeof(hashdeep_digests) / sizeof(hashdeep_digests[0]))

/* Writes s for a "##" comment line: one line, whatever its bytes. */
static void put_comment(FILE *out, const char *s)
{
	export_puts(out, fidx_quote(s));
}

/*
 * Writes hashdeep's header: the digests every selected scan computed among
 * its three, where and how the export was made.  Returns 0, or -1 after
 * printing that the scans share none of them, or that memory ran out.
 */
int export_hashdeep_begin(struct export_ctx *ctx)
{
	unsigned want = 0;
	for (size_t i = 0; i < NHASHDEEP; i++)
		want |= 1u << hashdeep_digests[i];
	if (!(ctx->digests & want)) {
		fidx_error("the selected scans have no digest in common among hashdeep's md5,"
			   " sha1 and sha256 ('fidx scans --json' shows each scan's hash option):"
			   " --format hashdeep needs scans made with e.g. --hash md5,sha256");
		return -1;
	}

	FILE *out = ctx->out;
	export_puts(out, "%%%% HASHDEEP-1.0\n%%%% size,");
	for (size_t i = 0; i < NHASHDEEP; i++)
		if (ctx->digests & (1u << hashdeep_digests[i])) {
			export_puts(out, fidx_digest_name(hashdeep_digests[i]));
			putc_unlocked(',', out);
		}
	export_puts(out, "filename\n## Invoked from: ");
	errno = 0;
	char *cwd = getcwd(NULL, 0);
	if (!cwd && errno == ENOMEM) {
		fidx_error("out of memory");
		return -1;
	}
	put_comment(out, cwd ? cwd : "?");  /* "?": a folder removed, or beyond PATH_MAX */
	free(cwd);
	export_puts(out, geteuid() == 0 ? "\n## # " : "\n## $ ");
	if (export_put_command(out, ctx, put_comment) < 0)
		return -1;
	export_puts(out, "\n## \n");
	return 0;
}

/* Writes one "<size>,<hex>...,<path>" line, or counts the file left out. */
void export_hashdeep_row(struct export_ctx *ctx, const struct fidx_row *row)
{
	const char *path = export_text(row, FIDX_COL_PATH);
	size_t len = fidx_row_len(row, FIDX_COL_PATH);
	const uint8_t *digest[NHASHDEEP];
	FILE *out = ctx->out;

	if (memchr(path, '\n', len) || (len && path[len - 1] == '\r')) {
		ctx->bad_name++;
		return;
	}
	for (size_t i = 0; i < NHASHDEEP; i++) {
		enum fidx_digest d = hashdeep_digests[i];
		digest[i] = NULL;
		if (!(ctx->digests & (1u << d)))
			continue;
		if (!(digest[i] = fidx_row_digest(row, d))) {
			ctx->no_digest++;
			return;
		}
	}
	export_put_u64(out, fidx_row_u64(row, FIDX_COL_SIZE));
	for (size_t i = 0; i < NHASHDEEP; i++)
		if (digest[i]) {
			putc_unlocked(',', out);
			fidx_write_hex(out, digest[i], fidx_digest_len(hashdeep_digests[i]));
		}
	putc_unlocked(',', out);
	if (fidx_out_quotes(out, path))
		fidx_shell_quote(out, path); /* on a terminal */
	else
		export_put(out, path, len);
	putc_unlocked('\n', out);
}

/* Warns about the files left out: no digest, or a name hashdeep cannot carry. */
void export_hashdeep_end(struct export_ctx *ctx)
{
	export_sums_end(ctx);
	if (ctx->bad_name)
		fidx_warn("%llu regular %s left out: %s a newline or %s in a carriage return,"
			  " which hashdeep's format cannot carry", (unsigned long long)ctx->bad_name,
			  fidx_plural(ctx->bad_name, "file", "files"),
			  fidx_plural(ctx->bad_name, "its name holds", "their names hold"),
			  fidx_plural(ctx->bad_name, "ends", "end"));
}
