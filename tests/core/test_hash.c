/*
 * test_hash.c - unit tests of the hashing module (src/core/hash.c).
 *
 * Expected digests never come from the code under test: the known answers of
 * hash_vectors.h (RFC 1321, FIPS 180, the others from md5sum ... xxh128sum),
 * the same that tests/windows/hashkat.c checks on the CNG backend, and the
 * large input, a generated file just over 3 MiB that spans many read blocks
 * and ends in a partial one, is hashed at test time by md5sum, sha1sum,
 * sha256sum, sha512sum and xxh128sum (run without a shell, file on stdin).
 *
 * The group set-up makes a temporary folder holding the large file and asks
 * the tools for its digests once; every test then uses those.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/hash_vectors.h"
#include "hash.h"

extern char **environ;

#define ALL_DIGESTS ((1u << FIDX_NDIGESTS) - 1)

/* Just over 3 MiB, and not a multiple of any plausible read size. */
#define BIG_SIZE (3u * 1024 * 1024 + 1000)

/* The published vectors of the empty message and of "abc" (hash_vectors.h). */
static const char *const *const vec_empty = hash_vectors[HV_EMPTY].hex;
static const char *const *const vec_abc = hash_vectors[HV_ABC].hex;

/* The independent tool for each digest; each prints "<hex>  -" for stdin. */
static const char *const tools[FIDX_NDIGESTS] = {
	[FIDX_MD5] = "md5sum",
	[FIDX_SHA1] = "sha1sum",
	[FIDX_SHA256] = "sha256sum",
	[FIDX_SHA512] = "sha512sum",
	[FIDX_XXH128] = "xxh128sum",
};

/* What the group set-up prepares. */
static struct {
	char dir[64];                                      /* temporary folder */
	char big_path[96];                                 /* the large file */
	unsigned char *big;                                /* its BIG_SIZE bytes */
	char big_hex[FIDX_NDIGESTS][2 * FIDX_DIGEST_MAX + 1]; /* the tools' digests */
} fx;

/* Fills buf with a fixed pseudo-random sequence (xorshift64). */
static void fill_pattern(unsigned char *buf, size_t len)
{
	uint64_t x = 0x9e3779b97f4a7c15u;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (unsigned char)(x >> 24);
	}
}

/* Writes len bytes of data to a new file path; fails the test on error. */
static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

/* Opens a new file in the fixture folder holding data; returns its fd. */
static int file_with(const char *name, const void *data, size_t len)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fx.dir, name);
	write_file(path, data, len);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

/*
 * Runs tool with path as its stdin and stores the first word it prints (the
 * hex digest) in hex.  Returns 0, or -1 if it could not run or failed.
 */
static int tool_digest(const char *tool, const char *path, char *hex, size_t size)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = {(char *)tool, NULL};
	char out[512];
	size_t got = 0;
	ssize_t n;
	int pfd[2], status, ok;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, path, O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	ok = posix_spawnp(&pid, tool, &fa, NULL, argv, environ) == 0;
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	while (ok && got < sizeof(out) - 1 &&
	       (n = read(pfd[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += (size_t)n;
	close(pfd[0]);
	if (!ok)
		return -1;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	out[got] = '\0';
	out[strcspn(out, " \n")] = '\0';
	if (strlen(out) + 1 > size)
		return -1;
	strcpy(hex, out);
	return 0;
}

/* Lower-case hex of digest d as the hasher wrote it. */
static const char *hex_of(const uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX],
			  enum fidx_digest d)
{
	static char hex[2 * FIDX_DIGEST_MAX + 1];
	size_t len = fidx_digest_len(d);

	for (size_t i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", out[d][i]);
	hex[2 * len] = '\0';
	return hex;
}

/* Checks every digest of mask in out against expected[d]. */
static void check_digests(const uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX],
			  unsigned mask, const char *const expected[FIDX_NDIGESTS])
{
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (mask & (1u << d))
			assert_string_equal(hex_of(out, d), expected[d]);
}

/* fx.big_hex as an array of pointers, the shape check_digests() takes. */
static const char *const *big_expected(void)
{
	static const char *ptrs[FIDX_NDIGESTS];

	for (int d = 0; d < FIDX_NDIGESTS; d++)
		ptrs[d] = fx.big_hex[d];
	return ptrs;
}

/*
 * Hashes fd with h, expecting success and len bytes; closes fd.  Odd calls
 * tell fidx_hash_fd() the size, the others do not, so both ways of ending a
 * file are used throughout.
 */
static void hash_ok(struct fidx_hasher *h, int fd,
		    uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX], uint64_t len,
		    atomic_uint_least64_t *progress)
{
	static unsigned calls;
	uint64_t bytes = ~(uint64_t)0;
	uint64_t expect = calls++ % 2 ? len : UINT64_MAX;

	assert_int_equal(fidx_hash_fd(h, fd, expect, out, &bytes, progress, NULL), 0);
	assert_int_equal(bytes, len);
	assert_int_equal(close(fd), 0);
}

/* Writes the large file and asks the tools for its digests. */
static int group_setup(void **state)
{
	int fd, ok;

	(void)state;
	snprintf(fx.dir, sizeof(fx.dir), "/tmp/fidx-test-hash.XXXXXX");
	if (!mkdtemp(fx.dir))
		return -1;
	snprintf(fx.big_path, sizeof(fx.big_path), "%s/big", fx.dir);
	fx.big = malloc(BIG_SIZE);
	if (!fx.big)
		return -1;
	fill_pattern(fx.big, BIG_SIZE);
	fd = open(fx.big_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	ok = write(fd, fx.big, BIG_SIZE) == (ssize_t)BIG_SIZE;
	if (close(fd) < 0 || !ok)
		return -1;
	for (int d = 0; d < FIDX_NDIGESTS; d++) {
		if (tool_digest(tools[d], fx.big_path, fx.big_hex[d],
				sizeof(fx.big_hex[d])) < 0) {
			fprintf(stderr, "test_hash: cannot run '%s'\n", tools[d]);
			return -1;
		}
		if (strlen(fx.big_hex[d]) != 2 * fidx_digest_len(d))
			return -1;
	}
	return 0;
}

/* nftw() callback removing one entry of the fixture folder. */
static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Removes the fixture folder. */
static int group_teardown(void **state)
{
	(void)state;
	free(fx.big);
	return nftw(fx.dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* The published vectors, for every digest at once. */
static void test_vectors(void **state)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	struct fidx_hasher *h = fidx_hasher_create(ALL_DIGESTS);

	(void)state;
	assert_non_null(h);
	hash_ok(h, file_with("empty", "", 0), out, 0, NULL);
	check_digests(out, ALL_DIGESTS, vec_empty);
	hash_ok(h, file_with("abc", "abc", 3), out, 3, NULL);
	check_digests(out, ALL_DIGESTS, vec_abc);
	fidx_hasher_destroy(h);
}

/*
 * Every known answer (hash_vectors.h), every digest at once, each message fed
 * whole, in growing pieces and in pieces cut at block edges, after junk that
 * the reset must drop; one hasher for all, so nothing leaks between messages.
 */
static void test_known_answers(void **state)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	struct fidx_hasher *h = fidx_hasher_create(ALL_DIGESTS);

	(void)state;
	assert_non_null(h);
	for (int v = 0; v < HASH_NVECTORS; v++) {
		size_t len;
		unsigned char *m = hash_vector_message(&hash_vectors[v], &len);

		assert_non_null(m);
		for (int way = 0; way < HASH_VECTOR_WAYS; way++) {
			assert_int_equal(hash_vector_hasher(h, way, m, len, out), 0);
			check_digests(out, ALL_DIGESTS, hash_vectors[v].hex);
		}
		free(m);
	}
	fidx_hasher_destroy(h);
}

/*
 * The single-digest API (the seal's and push's): each cryptographic digest
 * alone gives the known answers, reset in mid-message and after a final;
 * XXH128 and numbers past the digests are refused.
 */
static void test_digester(void **state)
{
	uint8_t out[FIDX_DIGEST_MAX];
	char hex[2 * FIDX_DIGEST_MAX + 1];

	(void)state;
	for (int d = 0; d < FIDX_XXH128; d++) {
		struct fidx_digester *g = fidx_digester_create(d);

		assert_non_null(g);
		for (int v = 0; v < HASH_NVECTORS; v++) {
			size_t len;
			unsigned char *m = hash_vector_message(&hash_vectors[v], &len);

			assert_non_null(m);
			for (int way = 0; way < HASH_VECTOR_WAYS; way++) {
				assert_int_equal(hash_vector_digester(g, way, m, len, out), 0);
				hash_vector_hex(out, fidx_digest_len(d), hex);
				assert_string_equal(hex, hash_vectors[v].hex[d]);
			}
			free(m);
		}
		/* A final, then a reset with nothing in between: the empty message. */
		assert_int_equal(fidx_digester_final(g, out), 0);
		assert_int_equal(fidx_digester_reset(g), 0);
		assert_int_equal(fidx_digester_final(g, out), 0);
		hash_vector_hex(out, fidx_digest_len(d), hex);
		assert_string_equal(hex, vec_empty[d]);
		fidx_digester_destroy(g);
	}
	errno = 0;
	assert_null(fidx_digester_create(FIDX_XXH128));
	assert_int_equal(errno, EINVAL);
	assert_null(fidx_digester_create(FIDX_NDIGESTS));
	fidx_digester_destroy(NULL);
	assert_non_null(fidx_crypto_library());
}

/* A file of many read blocks and a partial last one, against the tools. */
static void test_large_file(void **state)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	struct fidx_hasher *h = fidx_hasher_create(ALL_DIGESTS);

	(void)state;
	assert_non_null(h);
	assert_true(BIG_SIZE > 8 * FIDX_HASH_READ_SIZE);
	hash_ok(h, open(fx.big_path, O_RDONLY | O_CLOEXEC), out, BIG_SIZE, NULL);
	check_digests(out, ALL_DIGESTS, big_expected());
	fidx_hasher_destroy(h);
}

/* Hashing starts at the descriptor's current offset. */
static void test_current_offset(void **state)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	struct fidx_hasher *h = fidx_hasher_create(ALL_DIGESTS);
	int fd = file_with("xxabc", "xxabc", 5);

	(void)state;
	assert_non_null(h);
	assert_int_equal(lseek(fd, 2, SEEK_SET), 2);
	hash_ok(h, fd, out, 3, NULL);
	check_digests(out, ALL_DIGESTS, vec_abc);
	fidx_hasher_destroy(h);
}

/* Writes the large input into a pipe in odd-sized pieces. */
static void *pipe_writer(void *arg)
{
	int fd = *(int *)arg;
	size_t off = 0;

	while (off < BIG_SIZE) {
		size_t len = BIG_SIZE - off < 4093 ? BIG_SIZE - off : 4093;
		ssize_t n = write(fd, fx.big + off, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	return NULL;
}

/* Data from a pipe arrives in short reads; the digests must not change. */
static void test_pipe_short_reads(void **state)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	struct fidx_hasher *h = fidx_hasher_create(ALL_DIGESTS);
	pthread_t writer;
	int pfd[2];

	(void)state;
	assert_non_null(h);
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&writer, NULL, pipe_writer, &pfd[1]), 0);
	hash_ok(h, pfd[0], out, BIG_SIZE, NULL);
	assert_int_equal(pthread_join(writer, NULL), 0);
	check_digests(out, ALL_DIGESTS, big_expected());
	fidx_hasher_destroy(h);
}

/* Ends the test run if a test blocks: a read that should not happen waits forever. */
static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "test_hash: blocked in a read past the expected size\n";
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

/*
 * The expected size ends the reading: no read waits for end of file (a pipe
 * kept open would block it), nothing past it is read (a file that grew is
 * not read on), and a file shorter than expected is read to its end.
 */
static void test_expect(void **state)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	struct fidx_hasher *h = fidx_hasher_create(ALL_DIGESTS);
	uint64_t bytes = 0;
	int pfd[2];

	(void)state;
	assert_non_null(h);
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	assert_int_equal(write(pfd[1], "abc", 3), 3);
	signal(SIGALRM, on_alarm);
	alarm(20);
	assert_int_equal(fidx_hash_fd(h, pfd[0], 3, out, &bytes, NULL, NULL), 0);
	alarm(0);
	assert_int_equal(bytes, 3);
	check_digests(out, ALL_DIGESTS, vec_abc);
	close(pfd[0]);
	close(pfd[1]);

	int fd = file_with("short", "abc", 3);
	assert_int_equal(fidx_hash_fd(h, fd, 1000, out, &bytes, NULL, NULL), 0);
	assert_int_equal(bytes, 3);
	check_digests(out, ALL_DIGESTS, vec_abc);
	close(fd);

	fd = file_with("long", "abcdef", 6);
	assert_int_equal(fidx_hash_fd(h, fd, 3, out, &bytes, NULL, NULL), 0);
	assert_int_equal(bytes, 3);
	check_digests(out, ALL_DIGESTS, vec_abc);
	close(fd);
	fidx_hasher_destroy(h);
}

/* reset, update in uneven pieces and final give the digests of the whole. */
static void test_hasher_steps(void **state)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	struct fidx_hasher *h = fidx_hasher_create(ALL_DIGESTS);
	size_t off = 0, piece = 1;

	(void)state;
	assert_non_null(h);
	/* Left mid-message first: reset must start over. */
	assert_int_equal(fidx_hasher_update(h, "junk", 4), 0);
	assert_int_equal(fidx_hasher_reset(h), 0);
	while (off < BIG_SIZE) {
		size_t len = BIG_SIZE - off < piece ? BIG_SIZE - off : piece;
		assert_int_equal(fidx_hasher_update(h, fx.big + off, len), 0);
		off += len;
		piece = piece * 3 + 1;
	}
	assert_int_equal(fidx_hasher_final(h, out), 0);
	check_digests(out, ALL_DIGESTS, big_expected());
	fidx_hasher_destroy(h);
}

/* One hasher, many files: no state leaks from one file into the next. */
static void test_reuse(void **state)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	struct fidx_hasher *h = fidx_hasher_create(ALL_DIGESTS);

	(void)state;
	assert_non_null(h);
	hash_ok(h, open(fx.big_path, O_RDONLY | O_CLOEXEC), out, BIG_SIZE, NULL);
	check_digests(out, ALL_DIGESTS, big_expected());
	hash_ok(h, file_with("abc", "abc", 3), out, 3, NULL);
	check_digests(out, ALL_DIGESTS, vec_abc);
	hash_ok(h, file_with("empty", "", 0), out, 0, NULL);
	check_digests(out, ALL_DIGESTS, vec_empty);
	hash_ok(h, open(fx.big_path, O_RDONLY | O_CLOEXEC), out, BIG_SIZE, NULL);
	check_digests(out, ALL_DIGESTS, big_expected());
	fidx_hasher_destroy(h);
}

/* Checks that every digest row outside mask still holds the fill byte. */
static void check_untouched(const uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX],
			    unsigned mask, uint8_t fill)
{
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (!(mask & (1u << d)))
			for (int i = 0; i < FIDX_DIGEST_MAX; i++)
				assert_int_equal(out[d][i], fill);
}

/* Each digest alone, a pair, and none: only the mask is computed. */
static void test_mask_subsets(void **state)
{
	const unsigned masks[] = {
		1u << FIDX_MD5, 1u << FIDX_SHA1, 1u << FIDX_SHA256,
		1u << FIDX_SHA512, 1u << FIDX_XXH128,
		(1u << FIDX_MD5) | (1u << FIDX_XXH128),
		(1u << FIDX_SHA1) | (1u << FIDX_SHA512), 0,
	};
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		struct fidx_hasher *h = fidx_hasher_create(masks[i]);

		assert_non_null(h);
		memset(out, 0xa5, sizeof(out));
		hash_ok(h, file_with("abc", "abc", 3), out, 3, NULL);
		check_digests(out, masks[i], vec_abc);
		check_untouched(out, masks[i], 0xa5);
		memset(out, 0x5a, sizeof(out));
		hash_ok(h, open(fx.big_path, O_RDONLY | O_CLOEXEC), out,
			BIG_SIZE, NULL);
		check_digests(out, masks[i], big_expected());
		check_untouched(out, masks[i], 0x5a);
		fidx_hasher_destroy(h);
	}
}

/* A mask bit beyond the known digests is refused. */
static void test_invalid_mask(void **state)
{
	(void)state;
	errno = 0;
	assert_null(fidx_hasher_create(1u << FIDX_NDIGESTS));
	assert_int_equal(errno, EINVAL);
	fidx_hasher_destroy(NULL);
}

/* The progress counter grows by exactly the bytes read, across files. */
static void test_progress(void **state)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	struct fidx_hasher *h = fidx_hasher_create(1u << FIDX_SHA256);
	atomic_uint_least64_t progress = 7;
	int pfd[2];
	pthread_t writer;

	(void)state;
	assert_non_null(h);
	hash_ok(h, open(fx.big_path, O_RDONLY | O_CLOEXEC), out, BIG_SIZE,
		&progress);
	assert_int_equal(atomic_load(&progress), 7 + BIG_SIZE);
	hash_ok(h, file_with("abc", "abc", 3), out, 3, &progress);
	assert_int_equal(atomic_load(&progress), 7 + BIG_SIZE + 3);
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&writer, NULL, pipe_writer, &pfd[1]), 0);
	hash_ok(h, pfd[0], out, BIG_SIZE, &progress);
	assert_int_equal(pthread_join(writer, NULL), 0);
	assert_int_equal(atomic_load(&progress), 7 + 2 * (uint64_t)BIG_SIZE + 3);
	fidx_hasher_destroy(h);
}

/* A failing read returns -1 with the read's errno, and the hasher lives on. */
static void test_read_error(void **state)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	struct fidx_hasher *h = fidx_hasher_create(ALL_DIGESTS);
	uint64_t bytes;
	int fd = open(fx.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	(void)state;
	assert_non_null(h);
	assert_true(fd >= 0);
	errno = 0;
	assert_int_equal(fidx_hash_fd(h, fd, UINT64_MAX, out, &bytes, NULL, NULL), -1);
	assert_int_equal(errno, EISDIR);
	assert_int_equal(bytes, 0);
	close(fd);
	errno = 0;
	assert_int_equal(fidx_hash_fd(h, -1, 3, out, &bytes, NULL, NULL), -1);
	assert_int_equal(errno, EBADF);
	hash_ok(h, file_with("abc", "abc", 3), out, 3, NULL);
	check_digests(out, ALL_DIGESTS, vec_abc);
	fidx_hasher_destroy(h);
}

/* A raised cancel flag stops the read before the next block. */
static void test_cancel(void **state)
{
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	struct fidx_hasher *h = fidx_hasher_create(ALL_DIGESTS);
	atomic_bool cancel = true;
	uint64_t bytes = 99;
	int fd = file_with("cancel", "abc", 3);

	(void)state;
	assert_non_null(h);
	assert_true(fd >= 0);
	errno = 0;
	assert_int_equal(fidx_hash_fd(h, fd, 3, out, &bytes, NULL, &cancel), -1);
	assert_int_equal(errno, ECANCELED);
	assert_int_equal(bytes, 0);
	close(fd);
	atomic_store(&cancel, false);
	hash_ok(h, file_with("abc", "abc", 3), out, 3, NULL);
	check_digests(out, ALL_DIGESTS, vec_abc);
	fidx_hasher_destroy(h);
}

/* Expects list to parse to mask. */
static void parses_to(const char *list, unsigned mask)
{
	unsigned got = 0xdead;

	assert_int_equal(fidx_digest_list_parse(list, &got), 0);
	assert_int_equal(got, mask);
}

/* Expects list to be refused with EINVAL, leaving the mask alone. */
static void refused(const char *list)
{
	unsigned got = 0xdead;

	errno = 0;
	assert_int_equal(fidx_digest_list_parse(list, &got), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(got, 0xdead);
}

/* Digest lists: valid ones, duplicates, "none", unknown names, empty items. */
static void test_list_parse(void **state)
{
	(void)state;
	parses_to("sha256", 1u << FIDX_SHA256);
	parses_to("md5", 1u << FIDX_MD5);
	parses_to("xxh128,sha1", (1u << FIDX_XXH128) | (1u << FIDX_SHA1));
	parses_to("md5,sha1,sha256,sha512,xxh128", ALL_DIGESTS);
	parses_to("sha256,sha256,md5,sha256", (1u << FIDX_SHA256) | (1u << FIDX_MD5));
	parses_to("none", 0);

	refused("");
	refused(",");
	refused("md5,");
	refused(",md5");
	refused("md5,,sha1");
	refused("sha3");
	refused("SHA256");
	refused("sha256 ");
	refused(" sha256");
	refused("sha2566");
	refused("a-very-long-unknown-digest-name");
	refused("none,md5");
	refused("md5,none");
	refused("nonee");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_digester),
		cmocka_unit_test(test_large_file),
		cmocka_unit_test(test_current_offset),
		cmocka_unit_test(test_pipe_short_reads),
		cmocka_unit_test(test_reuse),
		cmocka_unit_test(test_mask_subsets),
		cmocka_unit_test(test_invalid_mask),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_read_error),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_expect),
		cmocka_unit_test(test_hasher_steps),
		cmocka_unit_test(test_list_parse),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
