/*
 * export_dfxml.c - `fidx export --format dfxml`: Digital Forensics XML.
 *
 *     <?xml version="1.0" encoding="UTF-8"?>
 *     <dfxml xmlns="http://www.forensicswiki.org/wiki/Category:Digital_Forensics_XML"
 *            xmlns:dc="http://purl.org/dc/elements/1.1/"
 *            xmlns:fidx="https://fidx.invalid/dfxml" version="1.2.0">
 *       <metadata><dc:type>File system inventory</dc:type></metadata>
 *       <creator>program, version, execution_environment (command_line,
 *                start_time), library (each one the store keeps databases
 *                with, as fidx_store_library_of() names it)</creator>
 *       <source><image_filename>each selected scan's root</image_filename></source>
 *       <fileobject>...</fileobject>       one per entry, streamed
 *     </dfxml>
 *
 * A fileobject holds its elements in the order of the schema's sequence
 * (fileobject_type in dfxml.xsd, the same in 1.2.0 and 2.0.0-beta.0):
 * filename (the absolute path), error when the entry has one (the schema
 * allows it only straight after filename), id (file.id), name_type (r d l p
 * s c b, '-' unknown), filesize, inode, meta_type (TSK's number), mode
 * (st_mode in decimal, as the DFXML Python tools write it from stat), nlink,
 * uid, gid, mtime, ctime, atime, crtime (UTC with nanoseconds as XML Schema
 * 1.0's xs:dateTime has it: a year after 9999 without the '+' of ISO's
 * expanded years, no year 0, so ISO's 0000 is -0001 and every earlier year
 * one further back; crtime only when the filesystem keeps it), link_target, then one
 * hashdigest per digest the scan computed among md5, sha1, sha256, sha512
 * (DFXML has no name for XXH128).  Elements whose column is NULL are left
 * out.  Several scans make one flat list of fileobjects, in scan order.
 * tests/e2e/t_dfxml.py holds the schema's sequences and checks them.
 *
 * Text.  & < > " are written as entities; TAB, LF and CR as character
 * references (&#9; &#10; &#13;), so a parser gives them back exactly (a raw
 * CR would be read as LF).  XML 1.0 cannot carry the other control
 * characters (U+0001..U+001F), U+FFFE, U+FFFF, nor bytes that are not UTF-8,
 * not even as references.  A name holding any of those is written
 * percent-encoded, and the element says so with the attribute
 * fidx:encoding="percent": '%', every byte below 0x20, 0x7f and every byte
 * outside a valid UTF-8 character become %XX, the rest stays as is, so
 * urllib.parse.unquote_to_bytes(text) gives back the exact bytes.  The
 * attribute is fidx's own: neither schema declares it, both admit it (the
 * elements that may carry it, of type dfxml:string, allow any attribute of
 * another namespace).
 */
#include "export.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "record.h"
#include "store.h"
#include "when.h"

/* The namespace of fidx's one extension, the encoding attribute. */
#define FIDX_DFXML_NS "https://fidx.invalid/dfxml"

/* Returns whether XML 1.0 can carry every character of s as text. */
static bool xml_clean(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; ) {
		if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')
			return false;
		size_t n = export_utf8_char(p);
		if (!n)
			return false;
		p += n;
	}
	return true;
}

/* Writes the ASCII character c escaped for XML text and attributes. */
static void put_xml_ascii(FILE *out, unsigned char c)
{
	switch (c) {
	case '&': export_puts(out, "&amp;"); break;
	case '<': export_puts(out, "&lt;"); break;
	case '>': export_puts(out, "&gt;"); break;
	case '"': export_puts(out, "&quot;"); break;
	case '\t': export_puts(out, "&#9;"); break;
	case '\n': export_puts(out, "&#10;"); break;
	case '\r': export_puts(out, "&#13;"); break;
	default: putc_unlocked(c, out);
	}
}

/* Writes s, which xml_clean() accepted, escaped. */
static void put_xml_text(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; ) {
		const unsigned char *start = p;
		while (*p >= 0x20 && *p != '&' && *p != '<' && *p != '>' && *p != '"')
			p++;
		export_put(out, start, (size_t)(p - start));
		if (!*p)
			break;
		put_xml_ascii(out, *p++);
	}
}

/* Writes s percent-encoded (see the header), then escaped for XML. */
static void put_xml_percent(FILE *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; ) {
		size_t n = export_utf8_char(p);
		if (n > 1) {
			export_put(out, p, n);
			p += n;
		} else if (n == 1 && *p >= 0x20 && *p != 0x7f && *p != '%') {
			put_xml_ascii(out, *p++);
		} else {
			char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
			export_put(out, esc, 3);
			p++;
		}
	}
}

/* Writes <tag>s</tag>, percent-encoded and marked when XML cannot carry s. */
static void put_element(FILE *out, const char *indent, const char *tag, const char *s)
{
	char *shown = export_tty_name(out, s);
	if (shown)
		s = shown;
	bool clean = xml_clean(s);
	export_puts(out, indent);
	putc_unlocked('<', out);
	export_puts(out, tag);
	export_puts(out, clean ? ">" : " fidx:encoding=\"percent\">");
	if (clean)
		put_xml_text(out, s);
	else
		put_xml_percent(out, s);
	export_puts(out, "</");
	export_puts(out, tag);
	export_puts(out, ">\n");
	free(shown);
}

/*
 * Writes <library name="NAME" version="VERSION"/> for lib, a library as
 * fidx_store_library_of() names it ("NAME VERSION": the name, a space, the
 * version; without a space, all of it is the name).
 */
static void put_library(FILE *out, const char *lib)
{
	char name[256];
	const char *space = strrchr(lib, ' ');
	size_t n = space ? (size_t)(space - lib) : strlen(lib);
	if (n >= sizeof(name))
		n = sizeof(name) - 1;
	memcpy(name, lib, n);
	name[n] = '\0';
	export_puts(out, "    <library name=\"");
	put_xml_text(out, name);
	export_puts(out, "\" version=\"");
	put_xml_text(out, space ? space + 1 : "");
	export_puts(out, "\"/>\n");
}

/*
 * Writes everything before the first fileobject: the XML declaration, the
 * root element, metadata, the creator (fidx, the command line, the time,
 * the store's libraries) and the source (each selected scan's root, in
 * scan order).  Returns 0, or -1 after printing "out of memory".
 */
int export_dfxml_begin(struct export_ctx *ctx)
{
	FILE *out = ctx->out;
	struct timespec now;

	export_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			 "<dfxml xmlns=\"http://www.forensicswiki.org/wiki/Category:Digital_Forensics_XML\""
			 " xmlns:dc=\"http://purl.org/dc/elements/1.1/\""
			 " xmlns:fidx=\"" FIDX_DFXML_NS "\" version=\"1.2.0\">\n"
			 "  <metadata>\n    <dc:type>File system inventory</dc:type>\n  </metadata>\n"
			 "  <creator>\n    <program>fidx</program>\n    <version>" FIDX_VERSION
			 "</version>\n    <execution_environment>\n");

	/* The command line may hold any bytes: percent-encoded if one needs it. */
	bool clean = true;
	for (int i = 0; i < ctx->argc; i++)
		clean = clean && xml_clean(ctx->argv[i]);
	export_puts(out, clean ? "      <command_line>"
			       : "      <command_line fidx:encoding=\"percent\">");
	if (export_put_command(out, ctx, clean ? put_xml_text : put_xml_percent) < 0)
		return -1;
	export_puts(out, "</command_line>\n");

	clock_gettime(CLOCK_REALTIME, &now);
	export_puts(out, "      <start_time>");
	export_put_iso(out, (struct fidx_time){.sec = now.tv_sec, .nsec = (uint32_t)now.tv_nsec});
	export_puts(out, "</start_time>\n    </execution_environment>\n");
	put_library(out, fidx_store_library_of(ctx->q->st));
	export_puts(out, "  </creator>\n  <source>\n");

	/* The selected scans, ascending ids: the order of their fileobjects. */
	const struct fidx_scan_list *scans = &ctx->q->sel.scans;
	for (size_t i = 0; i < scans->n; i++) {
		const char *root = scans->rows[i].root;
		put_element(out, "    ", "image_filename", root ? root : "");
	}
	export_puts(out, "  </source>\n");
	return 0;
}

/* Writes <tag>integer</tag> of column c unless it is NULL. */
static void put_int(FILE *out, const char *tag, const struct fidx_row *row, enum fidx_col c,
		    bool is_unsigned)
{
	if (!fidx_row_has(row, c))
		return;
	export_puts(out, "    <");
	export_puts(out, tag);
	putc_unlocked('>', out);
	if (is_unsigned)
		export_put_u64(out, fidx_row_u64(row, c));
	else
		export_put_i64(out, fidx_row_int(row, c));
	export_puts(out, "</");
	export_puts(out, tag);
	export_puts(out, ">\n");
}

/* Writes <tag>xs:dateTime</tag> of time column c unless it is NULL. */
static void put_time(FILE *out, const char *tag, const struct fidx_row *row, enum fidx_col c)
{
	struct fidx_time t;
	char iso[FIDX_WHEN_ISO];
	if (!fidx_row_time(row, c, &t))
		return;
	export_puts(out, "    <");
	export_puts(out, tag);
	putc_unlocked('>', out);
	fidx_when_iso(t, iso);
	if (iso[0] == '+') {
		/* xs:dateTime writes a year after 9999 with more digits but no '+'. */
		export_puts(out, iso + 1);
	} else if (iso[0] == '-' || strncmp(iso, "0000-", 5) == 0) {
		/*
		 * XML Schema 1.0 has no year 0: its -0001 is 1 BCE, ISO's (and
		 * fidx's) 0000.  Years before 1 are written one further back.
		 */
		char *rest;
		long long year = strtoll(iso, &rest, 10);
		fprintf(out, "-%04lld", 1 - year);
		export_puts(out, rest);
	} else {
		export_puts(out, iso);
	}
	export_puts(out, "</");
	export_puts(out, tag);
	export_puts(out, ">\n");
}

/* DFXML's name_type letter and TSK's meta_type number of a type column. */
static void type_codes(const char *type, char *name_type, int *meta_type)
{
	static const char letters[] = "fdpcbls";
	static const char names[] = "rdpcbls";
	static const int metas[] = {1, 2, 3, 4, 5, 6, 8};
	const char *p = *type ? strchr(letters, *type) : NULL;
	*name_type = p ? names[p - letters] : '-';
	*meta_type = p ? metas[p - letters] : 0;
}

/* The digests DFXML names, as hashdigest's type attribute spells them. */
static const enum fidx_digest dfxml_digests[] = {FIDX_MD5, FIDX_SHA1, FIDX_SHA256, FIDX_SHA512};

/* Writes the fileobject of one entry, its elements in the schema's order. */
void export_dfxml_row(struct export_ctx *ctx, const struct fidx_row *row)
{
	FILE *out = ctx->out;
	char name_type;
	int meta_type;

	type_codes(export_text(row, FIDX_COL_TYPE), &name_type, &meta_type);
	export_puts(out, "  <fileobject>\n");
	put_element(out, "    ", "filename", export_text(row, FIDX_COL_PATH));
	if (fidx_row_has(row, FIDX_COL_ERROR))
		put_element(out, "    ", "error", fidx_row_text(row, FIDX_COL_ERROR));
	/* An entry of a disk image (fidx scan --image): its partition (pN), as fiwalk numbers them. */
	const char *state = fidx_row_text(row, FIDX_COL_STATE);
	if (state && fidx_row_u64(row, FIDX_COL_DEV))
		put_int(out, "partition", row, FIDX_COL_DEV, true);
	put_int(out, "id", row, FIDX_COL_ID, false);
	export_puts(out, "    <name_type>");
	putc_unlocked(name_type, out);
	export_puts(out, "</name_type>\n");
	put_int(out, "filesize", row, FIDX_COL_SIZE, true);
	/* Its allocation, as fiwalk writes it: a deleted name and an orphan are unallocated. */
	if (state) {
		bool live = strcmp(state, "allocated") == 0 || strcmp(state, "virtual") == 0;
		export_puts(out, live ? "    <alloc>1</alloc>\n" : "    <unalloc>1</unalloc>\n");
		if (strcmp(state, "orphan") == 0)
			export_puts(out, "    <orphan>1</orphan>\n");
	}
	put_int(out, "inode", row, FIDX_COL_INO, true);
	if (meta_type) {
		export_puts(out, "    <meta_type>");
		export_put_i64(out, meta_type);
		export_puts(out, "</meta_type>\n");
	}
	put_int(out, "mode", row, FIDX_COL_MODE, false);
	put_int(out, "nlink", row, FIDX_COL_NLINK, true);
	put_int(out, "uid", row, FIDX_COL_UID, false);
	put_int(out, "gid", row, FIDX_COL_GID, false);
	put_time(out, "mtime", row, FIDX_COL_MTIME);
	put_time(out, "ctime", row, FIDX_COL_CTIME);
	put_time(out, "atime", row, FIDX_COL_ATIME);
	put_time(out, "crtime", row, FIDX_COL_BTIME);
	if (fidx_row_has(row, FIDX_COL_LINK_TARGET))
		put_element(out, "    ", "link_target", fidx_row_text(row, FIDX_COL_LINK_TARGET));
	for (size_t i = 0; i < sizeof(dfxml_digests) / sizeof(dfxml_digests[0]); i++) {
		enum fidx_digest d = dfxml_digests[i];
		const uint8_t *p = fidx_row_digest(row, d);
		if (!p)
			continue;
		export_puts(out, "    <hashdigest type=\"");
		export_puts(out, fidx_digest_name(d));
		export_puts(out, "\">");
		fidx_write_hex(out, p, fidx_digest_len(d));
		export_puts(out, "</hashdigest>\n");
	}
	export_puts(out, "  </fileobject>\n");
}

/* Closes the root element. */
void export_dfxml_end(struct export_ctx *ctx)
{
	export_puts(ctx->out, "</dfxml>\n");
}
