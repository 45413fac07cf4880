/*
 * read-size.c - measures SHA-256 throughput against the read buffer size,
 * to choose FIDX_HASH_READ_SIZE (docs/BENCHMARKS.md, "Read size").
 *
 *	build/bench/read-size [-c] [-r RUNS] [-j THREADS] [-m MODES] FILE...
 *	build/bench/read-size -g DIR
 *
 * Each mode hashes every FILE with SHA-256 the way a fidx hash worker does:
 * open(O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC|O_NOATIME), hash, close, one
 * EVP context and one page-aligned buffer per thread reused for every file.
 * The modes are read() loops with a buffer of 16k, 64k, 128k, 256k or 1m,
 * "mmap" (map the whole file, madvise(MADV_SEQUENTIAL), one update), and
 * "fidx" (the library's fidx_hash_fd() with FIDX_HASH_READ_SIZE).  THREADS
 * threads take files from a shared counter, as the hash workers take them
 * from the queue.
 *
 * Runs are interleaved (run 1 of every mode, then run 2 ...) so that a slow
 * spell of this shared machine hits every mode alike; each mode's median run
 * is reported.  With -c every timed run starts from a cold page cache (sync,
 * then drop_caches, as root); otherwise one untimed pass warms the cache.
 * Every mode must produce the same digests (their XOR is compared), so a
 * broken mode cannot win.
 *
 * -g DIR writes the fixture files: DIR/mib/ (200 files of 1 MiB),
 * DIR/gib (one 1 GiB file), DIR/kib/ and DIR/byte/ (2000 files of 1 KiB and
 * of 1 byte), all of pseudo-random bytes.
 *
 * Output: one Markdown table: per mode the median and the fastest wall-clock
 * seconds, MB/s, microseconds per file and time relative to the best mode
 * (all from the median), then the median
 * CPU seconds (user + system) and MB per CPU second, which a busy shared
 * machine disturbs less than the wall clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "hash.h"

#define MAX_RUNS 15
#define MAX_MODES 16
#define SHA256_LEN 32
#define OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

enum kind { READ_LOOP, MMAP_WHOLE, FIDX_LIB };

struct mode {
	const char *name; /* as given with -m */
	enum kind kind;
	size_t size;      /* read size of READ_LOOP */
	double secs[MAX_RUNS]; /* wall-clock seconds of each run */
	double cpu[MAX_RUNS];  /* user + system CPU seconds of each run */
};

/* The whole measurement, shared read-only by the threads except next. */
struct bench {
	char **files;
	int nfiles;
	atomic_int next;       /* index of the next file to hash */
	const struct mode *mode;
	EVP_MD *sha256;
};

/* One thread's result. */
struct worker {
	struct bench *b;
	uint8_t xor[SHA256_LEN]; /* XOR of every digest this thread made */
	uint64_t bytes;          /* bytes hashed */
	pthread_t tid;
};

/* Prints "read-size: <message>" and exits with status 2. */
__attribute__((noreturn, format(printf, 1, 2)))
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("read-size: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* Opens path as a hash worker does (O_NOATIME when the kernel allows it). */
static int open_file(const char *path)
{
	int fd = open(path, OPEN_FLAGS | O_NOATIME);

	if (fd < 0 && errno == EPERM)
		fd = open(path, OPEN_FLAGS);
	if (fd < 0)
		die("cannot open '%s': %s", path, strerror(errno));
	return fd;
}

/* Hashes fd with read() into buf of size bytes; returns the bytes read. */
static uint64_t hash_read(EVP_MD_CTX *ctx, const EVP_MD *md, int fd,
			  unsigned char *buf, size_t size, uint8_t *out)
{
	uint64_t total = 0;
	ssize_t n;

	if (!EVP_DigestInit_ex2(ctx, md, NULL))
		die("EVP_DigestInit_ex2 failed");
	while ((n = read(fd, buf, size)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("read: %s", strerror(errno));
		}
		EVP_DigestUpdate(ctx, buf, (size_t)n);
		total += (uint64_t)n;
	}
	EVP_DigestFinal_ex(ctx, out, NULL);
	return total;
}

/* Hashes fd through one mapping of the whole file; returns its size. */
static uint64_t hash_mmap(EVP_MD_CTX *ctx, const EVP_MD *md, int fd, uint8_t *out)
{
	struct stat st;
	void *p = NULL;

	if (fstat(fd, &st) < 0)
		die("fstat: %s", strerror(errno));
	if (!EVP_DigestInit_ex2(ctx, md, NULL))
		die("EVP_DigestInit_ex2 failed");
	if (st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			die("mmap: %s", strerror(errno));
		madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
		EVP_DigestUpdate(ctx, p, (size_t)st.st_size);
		munmap(p, (size_t)st.st_size);
	}
	EVP_DigestFinal_ex(ctx, out, NULL);
	return (uint64_t)st.st_size;
}

/* Thread body: hashes files from the shared counter until none is left. */
static void *work(void *arg)
{
	struct worker *w = arg;
	struct bench *b = w->b;
	const struct mode *m = b->mode;
	uint8_t out[FIDX_NDIGESTS][FIDX_DIGEST_MAX];
	struct fidx_hasher *h = NULL;
	EVP_MD_CTX *ctx = NULL;
	unsigned char *buf = NULL;
	int i;

	if (m->kind == FIDX_LIB) {
		h = fidx_hasher_create(1u << FIDX_SHA256);
		if (!h)
			die("fidx_hasher_create: %s", strerror(errno));
	} else {
		ctx = EVP_MD_CTX_new();
		if (!ctx)
			die("out of memory");
	}
	if (m->kind == READ_LOOP) {
		buf = aligned_alloc(4096, m->size);
		if (!buf)
			die("out of memory");
	}
	while ((i = atomic_fetch_add(&b->next, 1)) < b->nfiles) {
		int fd = open_file(b->files[i]);
		uint64_t n;

		switch (m->kind) {
		case READ_LOOP:
			w->bytes += hash_read(ctx, b->sha256, fd, buf, m->size,
					      out[FIDX_SHA256]);
			break;
		case MMAP_WHOLE:
			w->bytes += hash_mmap(ctx, b->sha256, fd, out[FIDX_SHA256]);
			break;
		case FIDX_LIB:
			if (fidx_hash_fd(h, fd, out, &n, NULL, NULL) < 0)
				die("read '%s': %s", b->files[i], strerror(errno));
			w->bytes += n;
			break;
		}
		close(fd);
		for (int k = 0; k < SHA256_LEN; k++)
			w->xor[k] ^= out[FIDX_SHA256][k];
	}
	fidx_hasher_destroy(h);
	EVP_MD_CTX_free(ctx);
	free(buf);
	return NULL;
}

/* Empties the page cache (root only), after writing dirty pages back. */
static void drop_caches(void)
{
	int fd;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "3\n", 2) != 2)
		die("cannot drop caches (run as root): %s", strerror(errno));
	close(fd);
}

/* Seconds of the monotonic clock. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* User plus system CPU seconds used by this process so far. */
static double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/*
 * Hashes every file once with mode m on nthreads threads.  Returns the
 * wall-clock seconds taken; sets *cpu to the CPU seconds, *bytes and xor
 * (the XOR of all digests).
 */
static double run_once(struct bench *b, const struct mode *m, int nthreads,
		       double *cpu, uint64_t *bytes, uint8_t xor[SHA256_LEN])
{
	struct worker w[64];
	double t0, t1, c0;

	memset(w, 0, sizeof(w));
	atomic_store(&b->next, 0);
	b->mode = m;
	c0 = cpu_now();
	t0 = now();
	if (nthreads == 1) {
		w[0].b = b;
		work(&w[0]);
	} else {
		for (int t = 0; t < nthreads; t++) {
			w[t].b = b;
			if (pthread_create(&w[t].tid, NULL, work, &w[t]) != 0)
				die("pthread_create failed");
		}
		for (int t = 0; t < nthreads; t++)
			pthread_join(w[t].tid, NULL);
	}
	t1 = now();
	*cpu = cpu_now() - c0;
	*bytes = 0;
	memset(xor, 0, SHA256_LEN);
	for (int t = 0; t < nthreads; t++) {
		*bytes += w[t].bytes;
		for (int k = 0; k < SHA256_LEN; k++)
			xor[k] ^= w[t].xor[k];
	}
	return t1 - t0;
}

/* qsort() order of doubles, ascending. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Returns the median of n values (sorts a copy). */
static double median(const double *v, int n)
{
	double s[MAX_RUNS];

	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* Parses a -m item: "16k", "1m", "mmap" or "fidx". */
static void parse_mode(const char *s, struct mode *m)
{
	char *end;
	unsigned long v;

	memset(m, 0, sizeof(*m));
	m->name = s;
	if (strcmp(s, "mmap") == 0) {
		m->kind = MMAP_WHOLE;
		return;
	}
	if (strcmp(s, "fidx") == 0) {
		m->kind = FIDX_LIB;
		return;
	}
	m->kind = READ_LOOP;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || v == 0 || end == s)
		die("bad mode '%s'", s);
	if (strcmp(end, "k") == 0)
		v *= 1024;
	else if (strcmp(end, "m") == 0)
		v *= 1024 * 1024;
	else if (*end)
		die("bad mode '%s'", s);
	m->size = v;
}

/* Writes path with size pseudo-random bytes (a xorshift64 stream). */
static void make_file(const char *path, uint64_t size, uint64_t seed)
{
	static uint64_t block[1 << 17]; /* 1 MiB */
	uint64_t x = seed | 1;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		die("cannot create '%s': %s", path, strerror(errno));
	while (size > 0) {
		size_t len = size < sizeof(block) ? (size_t)size : sizeof(block);

		for (size_t i = 0; i < (len + 7) / 8; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			block[i] = x;
		}
		if (write(fd, block, len) != (ssize_t)len)
			die("cannot write '%s': %s", path, strerror(errno));
		size -= len;
	}
	if (close(fd) < 0)
		die("cannot write '%s': %s", path, strerror(errno));
}

/* Makes dir/sub/NNNN for n files of size bytes each. */
static void make_set(const char *dir, const char *sub, int n, uint64_t size)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		die("cannot create '%s': %s", path, strerror(errno));
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s/%04d", dir, sub, i);
		make_file(path, size, (uint64_t)i * 7919 + size);
	}
}

/* Writes the fixture files of -g under dir. */
static void make_fixtures(const char *dir)
{
	char path[PATH_MAX];

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die("cannot create '%s': %s", dir, strerror(errno));
	make_set(dir, "mib", 200, 1 << 20);
	make_set(dir, "kib", 2000, 1024);
	make_set(dir, "byte", 2000, 1);
	snprintf(path, sizeof(path), "%s/gib", dir);
	make_file(path, (uint64_t)1 << 30, 42);
	sync();
}

/* Prints the usage and exits with status 2. */
static void usage(void)
{
	fputs("usage: read-size [-c] [-r RUNS] [-j THREADS] [-m MODES] FILE...\n"
	      "       read-size -g DIR\n"
	      "  -c  cold cache: drop caches before every timed run (root)\n"
	      "  -r  runs per mode, median reported (default 3, at most 15)\n"
	      "  -j  threads sharing the files (default 1, at most 64)\n"
	      "  -m  modes, comma-separated (default 16k,64k,128k,256k,1m,mmap,fidx)\n"
	      "  -g  write the fixture files under DIR and exit\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static char default_modes[] = "16k,64k,128k,256k,1m,mmap,fidx";
	struct mode modes[MAX_MODES];
	struct bench b = {0};
	char *mode_list = default_modes;
	int nmodes = 0, runs = 3, nthreads = 1, opt;
	bool cold = false, have_ref = false;
	uint8_t ref[SHA256_LEN];
	uint64_t bytes = 0;
	double best = 0;

	while ((opt = getopt(argc, argv, "cr:j:m:g:")) != -1) {
		switch (opt) {
		case 'c': cold = true; break;
		case 'r': runs = atoi(optarg); break;
		case 'j': nthreads = atoi(optarg); break;
		case 'm': mode_list = optarg; break;
		case 'g': make_fixtures(optarg); return 0;
		default: usage();
		}
	}
	if (optind == argc || runs < 1 || runs > MAX_RUNS || nthreads < 1 ||
	    nthreads > 64)
		usage();
	for (char *s = strtok(mode_list, ","); s; s = strtok(NULL, ",")) {
		if (nmodes == MAX_MODES)
			die("too many modes");
		parse_mode(s, &modes[nmodes++]);
	}
	b.files = argv + optind;
	b.nfiles = argc - optind;
	b.sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (!b.sha256)
		die("libcrypto has no SHA256");

	if (!cold) {
		uint8_t x[SHA256_LEN];
		double c;

		run_once(&b, &modes[0], nthreads, &c, &bytes, x);
	}
	for (int r = 0; r < runs; r++) {
		for (int i = 0; i < nmodes; i++) {
			uint8_t x[SHA256_LEN];
			uint64_t n;

			if (cold)
				drop_caches();
			modes[i].secs[r] = run_once(&b, &modes[i], nthreads,
						    &modes[i].cpu[r], &n, x);
			if (!have_ref) {
				memcpy(ref, x, sizeof(ref));
				bytes = n;
				have_ref = true;
			} else if (memcmp(ref, x, sizeof(ref)) != 0 || n != bytes) {
				die("mode '%s' disagrees with mode '%s'",
				    modes[i].name, modes[0].name);
			}
		}
	}

	for (int i = 0; i < nmodes; i++) {
		double m = median(modes[i].secs, runs);

		if (i == 0 || m < best)
			best = m;
	}
	printf("%d files, %llu bytes, %d thread(s), %s cache, median of %d runs, "
	       "FIDX_HASH_READ_SIZE %d\n\n",
	       b.nfiles, (unsigned long long)bytes, nthreads,
	       cold ? "cold" : "warm", runs, FIDX_HASH_READ_SIZE);
	printf("| mode | median s | min s | MB/s | us/file | time vs best "
	       "| CPU s | MB per CPU s |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int i = 0; i < nmodes; i++) {
		double m = median(modes[i].secs, runs);
		double c = median(modes[i].cpu, runs);
		double lo = modes[i].secs[0];

		for (int r = 1; r < runs; r++)
			if (modes[i].secs[r] < lo)
				lo = modes[i].secs[r];
		printf("| %s | %.4f | %.4f | %.0f | %.2f | %.3f | %.4f | %.0f |\n",
		       modes[i].name, m, lo, (double)bytes / m / 1e6,
		       m * 1e6 / b.nfiles, m / best, c, (double)bytes / c / 1e6);
	}
	EVP_MD_free(b.sha256);
	return 0;
}
