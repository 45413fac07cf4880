/*
 * test_hashlist.c - unit tests of the hash-list reader and digest set
 * (src/core/hashlist.c).
 *
 * The parser is fed the lines the real tools write (their exact shapes are
 * also produced by the tools themselves in tests/e2e/t_match.py): coreutils
 * sums in text, binary and escaped form, --tag lines, openssl's, hashdeep
 * files, NSRL and RDS v3 CSV headers, bare digests, and lines broken in each
 * way the parser names.  Expected digests are the published vectors of the
 * empty message (RFC 1321, FIPS 180), decoded here by the test's own hex
 * reader, never by the code under test.  The set is checked against a plain
 * list, past several doublings of its table.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "hashlist.h"

#define MD5_EMPTY "d41d8cd98f00b204e9800998ecf8427e"
#define SHA1_EMPTY "da39a3ee5e6b4b0d3255bfef95601890afd80709"
#define SHA256_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA512_EMPTY "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce" \
		     "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"

/* Decodes hex (either case) into out; the test's own reader. */
static void unhex(const char *hex, uint8_t *out)
{
	for (size_t i = 0; hex[2 * i]; i++) {
		unsigned v;
		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

/* Parses line with p; returns what fidx_hashlist_parse_line() returned. */
static int parse(struct fidx_hashlist_parser *p, const char *line, struct fidx_hashlist_entry *e)
{
	return fidx_hashlist_parse_line(p, line, strlen(line), e);
}

/* Asserts that digest i of e is algo with the value hex. */
static void assert_digest(const struct fidx_hashlist_entry *e, size_t i, enum fidx_digest algo,
			  const char *hex)
{
	uint8_t want[FIDX_DIGEST_MAX];
	assert_true(i < e->n);
	assert_int_equal(e->algo[i], algo);
	unhex(hex, want);
	assert_memory_equal(e->digest[i], want, fidx_digest_len(algo));
}

/* Asserts that line is one digest, algo = hex, for a fresh parser with unlabelled algo. */
static void assert_one(int unlabelled, const char *line, enum fidx_digest algo, const char *hex)
{
	struct fidx_hashlist_parser p;
	struct fidx_hashlist_entry e;
	fidx_hashlist_parser_init(&p, unlabelled);
	assert_int_equal(parse(&p, line, &e), 1);
	assert_int_equal(e.n, 1);
	assert_digest(&e, 0, algo, hex);
}

/* Asserts that line is malformed for a fresh parser, with a reason containing why. */
static void assert_bad(int unlabelled, const char *line, const char *why)
{
	struct fidx_hashlist_parser p;
	struct fidx_hashlist_entry e;
	fidx_hashlist_parser_init(&p, unlabelled);
	assert_int_equal(parse(&p, line, &e), -1);
	if (!strstr(p.why, why))
		fail_msg("'%s': reason '%s' lacks '%s'", line, p.why, why);
}

static void test_sums_lines(void **state)
{
	(void)state;
	assert_one(-1, MD5_EMPTY "  empty", FIDX_MD5, MD5_EMPTY);
	assert_one(-1, SHA1_EMPTY " *binary name", FIDX_SHA1, SHA1_EMPTY);
	assert_one(-1, SHA256_EMPTY "  name  with  spaces ", FIDX_SHA256, SHA256_EMPTY);
	assert_one(-1, SHA512_EMPTY "  x", FIDX_SHA512, SHA512_EMPTY);
	/* coreutils' escaped form, for a name with a newline or a backslash */
	assert_one(-1, "\\" SHA256_EMPTY "  a\\nb\\\\c", FIDX_SHA256, SHA256_EMPTY);
	/* upper case, CRLF, a tab, leading blanks */
	assert_one(-1, "D41D8CD98F00B204E9800998ECF8427E  x\r", FIDX_MD5, MD5_EMPTY);
	assert_one(-1, MD5_EMPTY "\tx", FIDX_MD5, MD5_EMPTY);
	assert_one(-1, "  " MD5_EMPTY "  x", FIDX_MD5, MD5_EMPTY);
	/* bare digests, with trailing blanks */
	assert_one(-1, SHA256_EMPTY, FIDX_SHA256, SHA256_EMPTY);
	assert_one(-1, SHA1_EMPTY " \t\r", FIDX_SHA1, SHA1_EMPTY);
	/* --algo: 32 digits are xxh128's, other lengths refused */
	assert_one(FIDX_XXH128, "99aa06d3014798d86001c324468d497f  x", FIDX_XXH128,
		   "99aa06d3014798d86001c324468d497f");
	assert_bad(FIDX_SHA256, MD5_EMPTY, "32 hex digits: not a sha256 digest");
}

static void test_sums_malformed(void **state)
{
	(void)state;
	assert_bad(-1, "d41d8cd98f00b204e9800998ecf842  x", "30 hex digits");
	assert_bad(-1, SHA256_EMPTY "00", "66 hex digits");
	assert_bad(-1, "not a list", "not a digest line");
	assert_bad(-1, MD5_EMPTY "x  name", "not a digest line");
	assert_bad(-1, "g41d8cd98f00b204e9800998ecf8427e", "not a digest line");
}

static void test_skipped_lines(void **state)
{
	(void)state;
	struct fidx_hashlist_parser p;
	struct fidx_hashlist_entry e;
	fidx_hashlist_parser_init(&p, -1);
	assert_int_equal(parse(&p, "", &e), 0);
	assert_int_equal(parse(&p, "   \r", &e), 0);
	assert_int_equal(parse(&p, "# a comment", &e), 0);
	assert_int_equal(parse(&p, MD5_EMPTY, &e), 1);
	assert_int_equal(p.format, FIDX_HASHLIST_SUMS);
}

static void test_tag_lines(void **state)
{
	(void)state;
	assert_one(-1, "SHA256 (file) = " SHA256_EMPTY, FIDX_SHA256, SHA256_EMPTY);
	assert_one(-1, "MD5 (a (b) = c) = " MD5_EMPTY, FIDX_MD5, MD5_EMPTY);
	assert_one(-1, "\\SHA1 (a\\nb) = " SHA1_EMPTY, FIDX_SHA1, SHA1_EMPTY);
	assert_one(-1, "SHA512 (x) = " SHA512_EMPTY "\r", FIDX_SHA512, SHA512_EMPTY);
	/* openssl dgst: no space before '(', "= " after ')' */
	assert_one(-1, "SHA2-256(file)= " SHA256_EMPTY, FIDX_SHA256, SHA256_EMPTY);
	assert_one(-1, "MD5(x)= " MD5_EMPTY, FIDX_MD5, MD5_EMPTY);
	/* a label wins over the length and over --algo */
	assert_one(FIDX_XXH128, "MD5 (x) = " MD5_EMPTY, FIDX_MD5, MD5_EMPTY);
	assert_bad(-1, "BLAKE2b (x) = " SHA512_EMPTY, "unknown algorithm 'BLAKE2b'");
	assert_bad(-1, "SHA256 (x) = " MD5_EMPTY, "SHA256 digest of 32 hex digits (expected 64)");
	assert_bad(-1, "SHA256 (x) = ", "SHA256 digest of 0 hex digits");
	assert_bad(-1, "SHA256 (x) " SHA256_EMPTY, "not a digest line");
}

static void test_hashdeep(void **state)
{
	(void)state;
	struct fidx_hashlist_parser p;
	struct fidx_hashlist_entry e;
	fidx_hashlist_parser_init(&p, -1);
	assert_int_equal(parse(&p, "%%%% HASHDEEP-1.0", &e), 0);
	assert_int_equal(p.format, FIDX_HASHLIST_HASHDEEP);
	assert_int_equal(parse(&p, "0," MD5_EMPTY ",/too/early", &e), -1);
	assert_non_null(strstr(p.why, "no '%%%% size,...,filename' line"));
	assert_int_equal(parse(&p, "%%%% size,md5,sha256,filename", &e), 0);
	assert_int_equal(parse(&p, "## Invoked from: /root", &e), 0);
	assert_int_equal(parse(&p, "##", &e), 0);
	assert_int_equal(parse(&p, "0," MD5_EMPTY "," SHA256_EMPTY ",/a,b,,c", &e), 1);
	assert_int_equal(e.n, 2);
	assert_digest(&e, 0, FIDX_MD5, MD5_EMPTY);
	assert_digest(&e, 1, FIDX_SHA256, SHA256_EMPTY);
	assert_int_equal(parse(&p, "0," MD5_EMPTY ",/no/sha256", &e), -1);
	assert_non_null(strstr(p.why, "3 fields, the column line has 4"));
	assert_int_equal(parse(&p, "0," MD5_EMPTY ",nothex,/f", &e), -1);
	assert_non_null(strstr(p.why, "field 3: not a sha256 digest"));
	assert_int_equal(parse(&p, "0," MD5_EMPTY, &e), -1);
	assert_non_null(strstr(p.why, "2 fields, the column line has 4"));
	assert_int_equal(parse(&p, "0,xyz," SHA256_EMPTY ",/f", &e), -1);
	assert_non_null(strstr(p.why, "field 2: not a md5 digest"));
	/* tiger and whirlpool are columns fidx does not compute: skipped */
	assert_int_equal(parse(&p, "%%%% size,tiger,sha1,filename", &e), 0);
	assert_int_equal(parse(&p, "5,abc," SHA1_EMPTY ",/x", &e), 1);
	assert_int_equal(e.n, 1);
	assert_digest(&e, 0, FIDX_SHA1, SHA1_EMPTY);
	assert_int_equal(parse(&p, "%%%% size,tiger,name", &e), -1);
	assert_non_null(strstr(p.why, "does not end with 'filename'"));
	assert_int_equal(parse(&p, "%%%% size,tiger,filename", &e), -1);
	assert_non_null(strstr(p.why, "names no digest"));
}

static void test_csv_nsrl(void **state)
{
	(void)state;
	struct fidx_hashlist_parser p;
	struct fidx_hashlist_entry e;
	fidx_hashlist_parser_init(&p, -1);
	assert_int_equal(parse(&p, "\"SHA-1\",\"MD5\",\"CRC32\",\"FileName\",\"FileSize\","
				   "\"ProductCode\",\"OpSystemCode\",\"SpecialCode\"\r", &e), 0);
	assert_int_equal(p.format, FIDX_HASHLIST_CSV);
	assert_int_equal(p.nfields, 8);
	assert_int_equal(parse(&p, "\"DA39A3EE5E6B4B0D3255BFEF95601890AFD80709\","
				   "\"D41D8CD98F00B204E9800998ECF8427E\",\"00000000\","
				   "\"a \"\"quoted\"\", name\",0,1,\"WIN\",\"\"\r", &e), 1);
	assert_int_equal(e.n, 2);
	assert_digest(&e, 0, FIDX_SHA1, SHA1_EMPTY);
	assert_digest(&e, 1, FIDX_MD5, MD5_EMPTY);
	/* a repeated header is skipped, not malformed */
	assert_int_equal(parse(&p, "\"SHA-1\",\"MD5\",\"CRC32\",\"FileName\",\"FileSize\","
				   "\"ProductCode\",\"OpSystemCode\",\"SpecialCode\"", &e), 0);
	assert_int_equal(parse(&p, "\"" SHA1_EMPTY "\",\"" MD5_EMPTY "\",\"0\",\"x\",0,1", &e), -1);
	assert_non_null(strstr(p.why, "6 fields, the header has 8"));
	assert_int_equal(parse(&p, "\"" SHA1_EMPTY "\",\"" MD5_EMPTY "\",\"0\",\"x,0,1,2,3", &e), -1);
	assert_non_null(strstr(p.why, "unterminated quote"));
	assert_int_equal(parse(&p, "\"" SHA1_EMPTY "\"x,\"" MD5_EMPTY "\",0,x,0,1,2,3", &e), -1);
	assert_non_null(strstr(p.why, "text after a closing quote"));
	assert_int_equal(parse(&p, "\"" SHA1_EMPTY "\",\"nothex\",0,x,0,1,2,3", &e), -1);
	assert_non_null(strstr(p.why, "field 2: not a md5 digest"));
	assert_int_equal(parse(&p, "\"\",\"\",0,x,0,1,2,3", &e), -1);
	assert_non_null(strstr(p.why, "no digest"));
	/* one empty digest cell of two is fine */
	assert_int_equal(parse(&p, "\"\",\"" MD5_EMPTY "\",0,x,0,1,2,3", &e), 1);
	assert_int_equal(e.n, 1);
	assert_digest(&e, 0, FIDX_MD5, MD5_EMPTY);
	assert_int_equal(parse(&p, "", &e), 0);
}

static void test_csv_rds3(void **state)
{
	(void)state;
	struct fidx_hashlist_parser p;
	struct fidx_hashlist_entry e;
	fidx_hashlist_parser_init(&p, -1);
	assert_int_equal(parse(&p, "sha256,sha1,md5,crc32,file_name,file_size,package_id", &e), 0);
	assert_int_equal(p.format, FIDX_HASHLIST_CSV);
	assert_int_equal(p.ncols, 3);
	assert_int_equal(parse(&p, SHA256_EMPTY "," SHA1_EMPTY "," MD5_EMPTY ",0,f,0,7", &e), 1);
	assert_int_equal(e.n, 3);
	assert_digest(&e, 0, FIDX_SHA256, SHA256_EMPTY);
	assert_digest(&e, 1, FIDX_SHA1, SHA1_EMPTY);
	assert_digest(&e, 2, FIDX_MD5, MD5_EMPTY);

	/* A first line that names no digest is no header: malformed, still sums. */
	fidx_hashlist_parser_init(&p, -1);
	assert_int_equal(parse(&p, "name,size", &e), -1);
	assert_int_equal(p.format, FIDX_HASHLIST_SUMS);
	/* A header is only the first line. */
	fidx_hashlist_parser_init(&p, -1);
	assert_int_equal(parse(&p, MD5_EMPTY, &e), 1);
	assert_int_equal(parse(&p, "md5,name", &e), -1);
	assert_int_equal(p.format, FIDX_HASHLIST_SUMS);
}

static void test_set(void **state)
{
	(void)state;
	struct fidx_hashset *s = fidx_hashset_create();
	uint8_t d[FIDX_DIGEST_MAX] = {0};
	const size_t n = 200000; /* many doublings of the table */
	uint64_t x = 1;
	assert_non_null(s);
	for (size_t i = 0; i < n; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		memcpy(d, &x, 8);
		memcpy(d + 8, &i, sizeof(i));
		struct fidx_hashloc loc = {(uint32_t)(i % 3), (uint32_t)i + 1};
		assert_int_equal(fidx_hashset_add(s, FIDX_SHA256, d, loc), 1);
	}
	assert_int_equal(fidx_hashset_count(s, FIDX_SHA256), n);
	x = 1;
	for (size_t i = 0; i < n; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		memcpy(d, &x, 8);
		memcpy(d + 8, &i, sizeof(i));
		const struct fidx_hashloc *loc = fidx_hashset_find(s, FIDX_SHA256, d);
		assert_non_null(loc);
		assert_int_equal(loc->line, i + 1);
		assert_int_equal(loc->list, i % 3);
		/* the same bytes under another algorithm are another digest */
		assert_null(fidx_hashset_find(s, FIDX_SHA512, d));
		d[31] ^= 1;
		assert_null(fidx_hashset_find(s, FIDX_SHA256, d));
		d[31] ^= 1;
		/* a repeat keeps the first place */
		if (i % 1000 == 0)
			assert_int_equal(fidx_hashset_add(s, FIDX_SHA256, d,
							  (struct fidx_hashloc){9, 9}), 0);
	}
	assert_non_null(fidx_hashset_find(s, FIDX_SHA256, d));
	assert_int_equal(fidx_hashset_find(s, FIDX_SHA256, d)->list, (n - 1) % 3);
	assert_int_equal(fidx_hashset_count(s, FIDX_SHA256), n);
	/* md5 and xxh128 have the same length, and are kept apart */
	memset(d, 7, 16);
	assert_int_equal(fidx_hashset_add(s, FIDX_MD5, d, (struct fidx_hashloc){0, 1}), 1);
	assert_null(fidx_hashset_find(s, FIDX_XXH128, d));
	assert_int_equal(fidx_hashset_add(s, FIDX_XXH128, d, (struct fidx_hashloc){0, 2}), 1);
	assert_int_equal(fidx_hashset_find(s, FIDX_XXH128, d)->line, 2);
	assert_int_equal(fidx_hashset_find(s, FIDX_MD5, d)->line, 1);
	fidx_hashset_destroy(s);
}

/* What the loader told about malformed lines. */
struct bad_lines {
	uint64_t line[16];
	size_t n;
	size_t stop_at; /* return nonzero at this many calls (0: never) */
};

static int on_bad(void *ctx, uint64_t line, const char *why)
{
	struct bad_lines *b = ctx;
	assert_non_null(why);
	assert_true(*why != '\0');
	if (b->n < 16)
		b->line[b->n] = line;
	b->n++;
	return b->stop_at && b->n == b->stop_at;
}

/* Writes len bytes of data into a new temporary file; returns its path (static). */
static const char *temp_list(const void *data, size_t len)
{
	static char path[64];
	strcpy(path, "/tmp/test_hashlist.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	return path;
}

static void test_load(void **state)
{
	(void)state;
	static const char text[] =
		"\xef\xbb\xbf# a list of mixed lines\n"              /* 1: BOM, comment */
		MD5_EMPTY "  a\n"                                    /* 2 */
		"\n"                                                 /* 3 */
		"bad line\n"                                         /* 4: malformed */
		"SHA256 (b) = " SHA256_EMPTY "\r\n"                  /* 5 */
		MD5_EMPTY "  repeated\n"                             /* 6: repeat */
		"abc\n"                                              /* 7: malformed */
		"abcd\n"                                             /* 8: malformed */
		SHA1_EMPTY;                                          /* 9: no newline */
	struct fidx_hashset *s = fidx_hashset_create();
	struct fidx_hashlist_stats st;
	struct bad_lines b = {0};
	const char *path = temp_list(text, sizeof(text) - 1);

	assert_int_equal(fidx_hashlist_load(s, path, 4, -1, on_bad, &b, &st), 0);
	assert_int_equal(st.lines, 9);
	assert_int_equal(st.malformed, 3);
	assert_int_equal(b.n, 3);
	assert_int_equal(b.line[0], 4);
	assert_int_equal(b.line[1], 7);
	assert_int_equal(b.line[2], 8);
	assert_int_equal(st.digests[FIDX_MD5], 2);
	assert_int_equal(st.digests[FIDX_SHA256], 1);
	assert_int_equal(st.digests[FIDX_SHA1], 1);
	assert_int_equal(st.repeated, 1);
	assert_int_equal(st.format, FIDX_HASHLIST_SUMS);
	uint8_t d[FIDX_DIGEST_MAX];
	unhex(MD5_EMPTY, d);
	const struct fidx_hashloc *loc = fidx_hashset_find(s, FIDX_MD5, d);
	assert_non_null(loc);
	assert_int_equal(loc->list, 4);
	assert_int_equal(loc->line, 2);
	unhex(SHA1_EMPTY, d);
	assert_int_equal(fidx_hashset_find(s, FIDX_SHA1, d)->line, 9);

	/* The callback stops the load. */
	b = (struct bad_lines){.stop_at = 2};
	errno = 0;
	assert_int_equal(fidx_hashlist_load(s, path, 0, -1, on_bad, &b, &st), -1);
	assert_int_equal(errno, ECANCELED);
	unlink(path);

	/* A missing file. */
	assert_int_equal(fidx_hashlist_load(s, "/nonexistent/list", 0, -1, on_bad, &b, &st), -1);
	assert_int_equal(errno, ENOENT);
	fidx_hashset_destroy(s);
}

static void test_load_nul_and_long(void **state)
{
	(void)state;
	/* sha256sum -z: NUL ends each line, and names may hold newlines */
	static const char z[] = MD5_EMPTY "  a\nb\0" "junk\0" SHA1_EMPTY "  c\0";
	struct fidx_hashset *s = fidx_hashset_create();
	struct fidx_hashlist_stats st;
	struct bad_lines b = {0};
	const char *path = temp_list(z, sizeof(z) - 1);
	assert_int_equal(fidx_hashlist_load(s, path, 0, -1, on_bad, &b, &st), 0);
	unlink(path);
	assert_int_equal(st.lines, 3);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.line[0], 2);
	assert_int_equal(st.digests[FIDX_MD5] + st.digests[FIDX_SHA1], 2);

	/* A line of 3 MiB (a name longer than the read block), then a digest. */
	size_t big = 3u << 20;
	char *text = malloc(big + 200);
	assert_non_null(text);
	memcpy(text, SHA256_EMPTY "  ", 66);
	memset(text + 66, 'n', big);
	size_t len = 66 + big;
	text[len++] = '\n';
	memcpy(text + len, SHA512_EMPTY "\n", 129);
	len += 129;
	path = temp_list(text, len);
	free(text);
	b = (struct bad_lines){0};
	assert_int_equal(fidx_hashlist_load(s, path, 1, -1, on_bad, &b, &st), 0);
	unlink(path);
	assert_int_equal(st.lines, 2);
	assert_int_equal(b.n, 0);
	assert_int_equal(st.digests[FIDX_SHA256], 1);
	assert_int_equal(st.digests[FIDX_SHA512], 1);
	fidx_hashset_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sums_lines),
		cmocka_unit_test(test_sums_malformed),
		cmocka_unit_test(test_skipped_lines),
		cmocka_unit_test(test_tag_lines),
		cmocka_unit_test(test_hashdeep),
		cmocka_unit_test(test_csv_nsrl),
		cmocka_unit_test(test_csv_rds3),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_load_nul_and_long),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
