/*
 * read-size.c - the buffered-versus-unbuffered study of the hash reader:
 * SHA-256 time per file and throughput against the read buffer size and
 * mmap, warm and cold, to choose FIDX_HASH_READ_SIZE (docs/BENCHMARKS.md,
 * "Read size").
 *
 *	build/bench/read-size [-c] [-r RUNS] [-j THREADS] [-m MODES] FILE...
 *	build/bench/read-size -g DIR
 *
 * Each mode hashes every FILE with SHA-256 the way a fidx hash worker does:
 * open(O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC|O_NOATIME), hash, close, one
 * EVP context and one page-aligned buffer per thread reused for every file.
 * The modes are
 *
 *	SIZE         a read() loop with a buffer of SIZE bytes ("1", "4k",
 *	             "64k", "1m"), to end of file
 *	SIZE@PREFIX  the same loop on the first PREFIX bytes of each file only
 *	             ("1@64k"), for a mode too slow to read whole files
 *	mmap         map the whole file, madvise(MADV_SEQUENTIAL), one update
 *	fidx         the library's fidx_hash_fd() (FIDX_HASH_READ_SIZE), given
 *	             the file's size from stat() as the walk gives it, so it
 *	             stops after that many bytes instead of reading to EOF (the
 *	             scan's fstat() check afterwards is not made here)
 *
 * THREADS threads take files from a shared counter, as the hash workers take
 * them from the queue.
 *
 * Runs are interleaved (run 1 of every mode, then run 2 ...) so that a slow
 * spell of this shared machine hits every mode alike; each mode's median run
 * is reported.  With -c every timed run starts from a cold page cache (sync,
 * then drop_caches, as root); otherwise the untimed reference pass below has
 * warmed it.
 *
 * Digest check.  Before the timed runs, one untimed pass per distinct prefix
 * (and one for whole files) hashes every file with a 1 MiB read() loop and
 * keeps the XOR of the digests and the byte count.  Every timed run of a mode
 * must reproduce the reference of its own prefix, so a broken mode cannot win
 * and a prefix mode is checked on exactly the bytes it hashed.
 *
 * Extrapolation.  A prefix mode hashes fewer bytes than the others; its
 * seconds, CPU seconds and time per file are scaled to the whole files by
 * (bytes of the whole files) / (bytes hashed), and its row says so.  Scaling
 * counts the per-file cost (open, close) as often as the ratio, an
 * overestimate of (ratio - 1) opens and closes per file, which is small
 * beside the per-byte cost of a mode slow enough to need a prefix.  MB/s and
 * MB per CPU second are those of the bytes actually hashed.
 *
 * -g DIR writes the fixture files: DIR/byte/ and DIR/kib/ (2000 files of 1
 * byte and of 1 KiB), DIR/mib/ (200 files of 1 MiB) and DIR/gib (one file of
 * 1 GiB), all of pseudo-random bytes.
 *
 * Output: one Markdown table: per mode the median and the fastest
 * wall-clock seconds, MB/s, time per file and time relative to the best mode
 * (all from the median), then the median CPU seconds (user + system), their
 * system part (the kernel's share: syscalls, page-cache copies and faults)
 * and MB per CPU second, which a busy shared machine disturbs less than the
 * wall clock, and what was measured (every byte, or a prefix and its scale).
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

#include "bench.h"
#include "hash.h"

#define MAX_RUNS 15
#define MAX_MODES 16
#define SHA256_LEN 32
#define NO_PREFIX UINT64_MAX     /* prefix of a mode that hashes whole files */
#define REF_READ_SIZE (1 << 20)  /* read size of the reference passes */

enum kind { READ_LOOP, MMAP_WHOLE, FIDX_LIB };

struct mode {
	const char *name;      /* as given with -m */
	enum kind kind;
	size_t size;           /* read size of READ_LOOP */
	uint64_t prefix;       /* bytes hashed per file at most, or NO_PREFIX */
	double secs[MAX_RUNS]; /* wall-clock seconds of each run */
	double cpu[MAX_RUNS];  /* user + system CPU seconds of each run */
	double sys[MAX_RUNS];  /* system CPU seconds of each run */
	uint8_t ref[SHA256_LEN]; /* XOR of the reference digests of prefix */
	uint64_t ref_bytes;    /* bytes of the reference pass of prefix */
};

/* The whole measurement, shared read-only by the threads except next. */
struct bench {
	char **files;
	uint64_t *sizes;       /* st_size of each file, taken before the runs */
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

/*
 * Hashes the first prefix bytes of fd (all of it for NO_PREFIX) with read()
 * into buf of size bytes; returns the bytes hashed.  Once prefix bytes are
 * in, it stops without reading on to end of file.
 */
static uint64_t hash_read(EVP_MD_CTX *ctx, const EVP_MD *md, int fd,
			  unsigned char *buf, size_t size, uint64_t prefix,
			  uint8_t *out)
{
	uint64_t total = 0;
	ssize_t n;

	if (!EVP_DigestInit_ex2(ctx, md, NULL))
		die("EVP_DigestInit_ex2 failed");
	while (total < prefix) {
		size_t want = prefix - total < size ? (size_t)(prefix - total) : size;

		n = read(fd, buf, want);
		if (n == 0)
			break;
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
		/* aligned_alloc() wants a multiple of the alignment. */
		buf = aligned_alloc(4096, (m->size + 4095) / 4096 * 4096);
		if (!buf)
			die("out of memory");
	}
	while ((i = atomic_fetch_add(&b->next, 1)) < b->nfiles) {
		int fd = open_file(b->files[i]);
		uint64_t n;

		switch (m->kind) {
		case READ_LOOP:
			w->bytes += hash_read(ctx, b->sha256, fd, buf, m->size,
					      m->prefix, out[FIDX_SHA256]);
			break;
		case MMAP_WHOLE:
			w->bytes += hash_mmap(ctx, b->sha256, fd, out[FIDX_SHA256]);
			break;
		case FIDX_LIB:
			if (fidx_hash_fd(h, fd, b->sizes[i], out, &n, NULL,
					 NULL) < 0)
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

/*
 * User plus system CPU seconds used by this process so far; *sys receives
 * the system part.
 */
static double cpu_now(double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + *sys;
}

/*
 * Hashes every file once with mode m on nthreads threads.  Returns the
 * wall-clock seconds taken; sets *cpu to the CPU seconds, *sys to their
 * system part, *bytes and xor
 * (the XOR of all digests).
 */
static double run_once(struct bench *b, const struct mode *m, int nthreads,
		       double *cpu, double *sys, uint64_t *bytes,
		       uint8_t xor[SHA256_LEN])
{
	struct worker w[64];
	double t0, t1, c0, s0;

	memset(w, 0, sizeof(w));
	atomic_store(&b->next, 0);
	b->mode = m;
	c0 = cpu_now(&s0);
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
	*cpu = cpu_now(sys) - c0;
	*sys -= s0;
	*bytes = 0;
	memset(xor, 0, SHA256_LEN);
	for (int t = 0; t < nthreads; t++) {
		*bytes += w[t].bytes;
		for (int k = 0; k < SHA256_LEN; k++)
			xor[k] ^= w[t].xor[k];
	}
	return t1 - t0;
}

/*
 * Sets the reference digest XOR and byte count of every mode: one untimed
 * pass with a REF_READ_SIZE read() loop per distinct prefix, whole files
 * last, so that with a warm cache every byte has just been read.
 */
static void make_references(struct bench *b, struct mode *modes, int nmodes,
			    int nthreads)
{
	for (int whole = 0; whole <= 1; whole++) {
		for (int i = 0; i < nmodes; i++) {
			struct mode ref = {.name = "reference", .kind = READ_LOOP,
					   .size = REF_READ_SIZE,
					   .prefix = modes[i].prefix};
			double cpu, sys;
			int j = 0;

			if ((modes[i].prefix == NO_PREFIX) != whole)
				continue;
			while (j < i && modes[j].prefix != modes[i].prefix)
				j++;
			if (j < i) {
				memcpy(modes[i].ref, modes[j].ref, sizeof(modes[i].ref));
				modes[i].ref_bytes = modes[j].ref_bytes;
				continue;
			}
			run_once(b, &ref, nthreads, &cpu, &sys, &modes[i].ref_bytes,
				 modes[i].ref);
		}
	}
}

/*
 * Parses a byte count of a mode: digits, then nothing, "k" (KiB) or "m"
 * (MiB), ending at end.  Returns it; dies on anything else or on zero.
 */
static uint64_t parse_size(const char *s, const char *end, const char *mode)
{
	char *stop;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &stop, 10);
	if (errno || v == 0 || stop == s || *s == '-')
		die("bad mode '%s'", mode);
	if (stop + 1 == end && *stop == 'k')
		v *= 1024;
	else if (stop + 1 == end && *stop == 'm')
		v *= 1024 * 1024;
	else if (stop != end)
		die("bad mode '%s'", mode);
	return v;
}

/* Parses a -m item: "4k", "1m", "1@64k", "mmap" or "fidx". */
static void parse_mode(const char *s, struct mode *m)
{
	const char *at = strchr(s, '@');

	memset(m, 0, sizeof(*m));
	m->name = s;
	m->prefix = NO_PREFIX;
	if (strcmp(s, "mmap") == 0) {
		m->kind = MMAP_WHOLE;
		return;
	}
	if (strcmp(s, "fidx") == 0) {
		m->kind = FIDX_LIB;
		return;
	}
	m->kind = READ_LOOP;
	m->size = (size_t)parse_size(s, at ? at : s + strlen(s), s);
	if (at)
		m->prefix = parse_size(at + 1, at + 1 + strlen(at + 1), s);
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
	make_set(dir, "byte", 2000, 1);
	make_set(dir, "kib", 2000, 1024);
	make_set(dir, "mib", 200, 1 << 20);
	snprintf(path, sizeof(path), "%s/gib", dir);
	make_file(path, (uint64_t)1 << 30, 42);
	sync();
}

/* Writes a duration of s seconds into buf with a unit that keeps 3-4 digits. */
static void format_time(char *buf, size_t len, double s)
{
	if (s >= 1)
		snprintf(buf, len, "%.3f s", s);
	else if (s >= 1e-3)
		snprintf(buf, len, "%.3f ms", s * 1e3);
	else
		snprintf(buf, len, "%.2f us", s * 1e6);
}

/* Writes a byte count into buf as B, KiB, MiB or GiB (one decimal if not whole). */
static void format_bytes(char *buf, size_t len, uint64_t n)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
	double v = (double)n;
	int u = 0;

	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, v == (double)(uint64_t)v ? "%.0f %s" : "%.1f %s",
		 v, units[u]);
}

/* Prints a rate in MB/s: whole numbers from 100 up, else 3 decimals. */
static void print_rate(double mb_per_s)
{
	printf(mb_per_s >= 100 ? "%.0f" : "%.3f", mb_per_s);
}

/* Prints the usage and exits with status 2. */
static void usage(void)
{
	fputs("usage: read-size [-c] [-r RUNS] [-j THREADS] [-m MODES] FILE...\n"
	      "       read-size -g DIR\n"
	      "  -c  cold cache: drop caches before every timed run (root)\n"
	      "  -r  runs per mode, median reported (default 3, at most 15)\n"
	      "  -j  threads sharing the files (default 1, at most 64)\n"
	      "  -m  modes, comma-separated (default 1@64k,4k,64k,256k,1m,mmap,fidx):\n"
	      "      SIZE (read() buffer, suffix k or m), SIZE@PREFIX (only the first\n"
	      "      PREFIX bytes of each file, extrapolated), mmap, fidx\n"
	      "  -g  write the fixture files under DIR and exit\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static char default_modes[] = "1@64k,4k,64k,256k,1m,mmap,fidx";
	struct mode modes[MAX_MODES];
	struct bench b = {0};
	char *mode_list = default_modes;
	int nmodes = 0, runs = 3, nthreads = 1, opt;
	bool cold = false;
	uint64_t bytes = 0; /* of the whole files */
	double best = 0, scale[MAX_MODES];

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
	b.sizes = calloc((size_t)b.nfiles, sizeof(*b.sizes));
	if (!b.sizes)
		die("out of memory");
	for (int i = 0; i < b.nfiles; i++) {
		struct stat st;

		if (stat(b.files[i], &st) < 0)
			die("cannot stat '%s': %s", b.files[i], strerror(errno));
		b.sizes[i] = (uint64_t)st.st_size;
		bytes += b.sizes[i];
	}
	b.sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (!b.sha256)
		die("libcrypto has no SHA256");

	make_references(&b, modes, nmodes, nthreads);
	for (int i = 0; i < nmodes; i++) {
		if (modes[i].prefix == NO_PREFIX && modes[i].ref_bytes != bytes)
			die("the files changed size since they were stat'ed");
		scale[i] = modes[i].ref_bytes ?
			   (double)bytes / (double)modes[i].ref_bytes : 1;
	}
	for (int r = 0; r < runs; r++) {
		for (int i = 0; i < nmodes; i++) {
			uint8_t x[SHA256_LEN];
			uint64_t n;

			if (cold)
				drop_caches("3");
			modes[i].secs[r] = run_once(&b, &modes[i], nthreads,
						    &modes[i].cpu[r], &modes[i].sys[r],
						    &n, x) * scale[i];
			modes[i].cpu[r] *= scale[i];
			modes[i].sys[r] *= scale[i];
			if (memcmp(modes[i].ref, x, sizeof(x)) != 0 ||
			    n != modes[i].ref_bytes)
				die("mode '%s' disagrees with the reference pass",
				    modes[i].name);
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
	printf("| mode | median s | min s | MB/s | time/file | time vs best "
	       "| CPU s | sys s | MB per CPU s | measured on |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
	for (int i = 0; i < nmodes; i++) {
		double m = median(modes[i].secs, runs);
		double c = median(modes[i].cpu, runs);
		double sys = median(modes[i].sys, runs);
		double lo = modes[i].secs[0];
		char per_file[32], pre[32], hashed[32];

		for (int r = 1; r < runs; r++)
			if (modes[i].secs[r] < lo)
				lo = modes[i].secs[r];
		format_time(per_file, sizeof(per_file), m / b.nfiles);
		printf("| %s | %.4f | %.4f | ", modes[i].name, m, lo);
		print_rate((double)bytes / m / 1e6);
		printf(" | %s | %.3f | %.4f | %.4f | ", per_file, m / best, c, sys);
		print_rate((double)bytes / c / 1e6);
		printf(" | ");
		if (modes[i].ref_bytes == bytes) {
			printf("all bytes |\n");
		} else {
			format_bytes(pre, sizeof(pre), modes[i].prefix);
			format_bytes(hashed, sizeof(hashed), modes[i].ref_bytes);
			printf("first %s of each file (%s), times x%.1f |\n",
			       pre, hashed, scale[i]);
		}
	}
	EVP_MD_free(b.sha256);
	free(b.sizes);
	return 0;
}
