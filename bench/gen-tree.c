/*
 * gen-tree.c - deterministic trees of empty files for `make bench-walk`.
 *
 *   build/bench/gen-tree SHAPE DEST
 *
 * Shapes:
 *   kernel   92,087 entries shaped like a Linux kernel source tree: 5,000
 *            directories up to 8 levels below DEST, the number of files per
 *            directory skewed (most hold a few, a few dozen hold hundreds),
 *            names like real sources (irq_core.c, gpio.h, Makefile, Kconfig)
 *            and a few symlinks to a file beside them (87,049 files, 38
 *            symlinks).
 *   million  twelve kernel-shaped subtrees (tree00 ... tree11, each from its
 *            own seed) under DEST: 1,089,662 entries (1,029,285 files in
 *            60,001 directories, 376 symlinks).
 *   wide     200,000 files in DEST itself.
 *   deep     a chain of 2,500 directories named dddddddddd below DEST (a path
 *            of 27,500 bytes, far past PATH_MAX), with a file "f" at every
 *            250th level: 2,512 entries.
 * (The counts include DEST and the marker below.)
 *
 * The same SHAPE always gives the same tree: every choice comes from one
 * splitmix64 generator with a fixed seed, and a name already taken in its
 * directory is redrawn, which is itself deterministic.  Files are made with
 * mknodat() and directories with mkdirat() relative to their parent's
 * descriptor, so no path is resolved per entry and the deep chain needs no
 * path longer than one name.
 *
 * DEST may be missing (it is created; its parent must exist) or empty.  The
 * generation writes DEST/.gen-tree-SHAPE-vN.incomplete first (N: the
 * generator's version, GEN_TREE_VERSION, raised whenever a shape changes) and
 * renames it to DEST/.gen-tree-SHAPE-vN when the tree is complete.  A DEST
 * that already holds that marker is left as it is (exit 0), so reruns are
 * cheap; any other non-empty DEST is refused (exit 1), an interrupted
 * generation or another version's tree included: bench/walk removes those.
 * The marker is one more empty file of the tree, seen by every walker alike.
 *
 * Prints one line: the entries made (DEST and the marker included), and how
 * many are directories, files and symlinks.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GEN_TREE_VERSION 1      /* raise it whenever the tree of a shape changes */
#define KERNEL_DIRS 5000        /* directories of one kernel-shaped tree */
#define KERNEL_TOP 20           /* its top-level directories */
#define KERNEL_DEPTH 8          /* its deepest level below its root */
#define MILLION_TREES 12        /* kernel-shaped subtrees of the million shape */
#define WIDE_FILES 200000       /* files of the wide shape */
#define DEEP_LEVELS 2500        /* directories of the deep chain */
#define DEEP_FILE_EVERY 250     /* a file at every this many levels */
#define SEED 0x9e3779b97f4a7c15 /* the generator's seed (the million's subtree i: SEED + i) */

/* What a generation made so far. */
struct counts {
	unsigned long dirs;     /* directories, DEST included */
	unsigned long files;    /* regular files, the marker included */
	unsigned long symlinks; /* symbolic links */
};

static uint64_t rng_state;      /* the splitmix64 generator's state */
static struct counts made;      /* what the generation made */
static const char *dest;        /* DEST as given, for messages */

/* Words that source file and directory names are made of. */
static const char *const words[] = {
	"acpi", "adc", "addr", "alloc", "alsa", "amd", "arm", "async", "atomic", "audio",
	"bio", "bitmap", "block", "bpf", "bridge", "buf", "bus", "cache", "can", "cdev",
	"chip", "clk", "codec", "common", "config", "console", "core", "cpu", "crc", "crypto",
	"ctrl", "debug", "dev", "dma", "drm", "dsa", "dsp", "dt", "edac", "eeprom",
	"efi", "entry", "eth", "event", "ext4", "fault", "fb", "fifo", "fw", "gem",
	"gpio", "gpu", "hash", "hid", "host", "hw", "i2c", "i915", "idle", "iio",
	"init", "input", "intel", "io", "iommu", "ipc", "ipv4", "ipv6", "irq", "kvm",
	"led", "link", "list", "lock", "mac", "map", "mdio", "media", "mem", "mfd",
	"mm", "mmc", "mmu", "mod", "msi", "mtd", "mux", "net", "nfs", "nvme",
	"of", "page", "pci", "perf", "phy", "pin", "pm", "power", "proc", "ptp",
	"pwm", "qcom", "queue", "radio", "ras", "regmap", "regs", "reset", "ring", "rtc",
	"sched", "scsi", "sdio", "sensor", "serial", "setup", "slab", "smp", "snd", "soc",
	"sound", "spi", "stat", "sync", "sys", "sysfs", "table", "tcp", "thermal", "timer",
	"trace", "tty", "uart", "udp", "usb", "util", "vfs", "video", "virtio", "vm",
	"watchdog", "wifi", "wlan", "xattr", "xdp", "xfrm", "xhci", "zone", "zram", "zstd",
};
#define NWORDS (sizeof(words) / sizeof(words[0]))

/* Extensions of source files, each with its weight out of 100. */
static const struct { const char *ext; unsigned weight; } exts[] = {
	{".c", 55}, {".h", 30}, {".S", 3}, {".rst", 4}, {".txt", 2}, {".dts", 3}, {".yaml", 3},
};

/*
 * How many files a directory holds, as buckets of [lo, hi] each drawn with
 * its weight out of 1000: skewed as in a kernel tree (about 18 on average).
 */
static const struct { unsigned weight, lo, hi; } file_buckets[] = {
	{420, 0, 4}, {290, 5, 12}, {170, 13, 30}, {85, 31, 70}, {30, 71, 200}, {5, 201, 500},
};

/* Prints "gen-tree: " and the formatted message on stderr and exits 1. */
__attribute__((format(printf, 1, 2), noreturn))
static void die(const char *fmt, ...)
{
	va_list ap;
	fputs("gen-tree: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Returns the next number of the splitmix64 generator. */
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
	return z ^ (z >> 31);
}

/* Returns a number in [0, n) (n > 0); the tiny modulo bias does not matter here. */
static unsigned below(unsigned n)
{
	return (unsigned)(rng() % n);
}

/* Returns a word of the list. */
static const char *word(void)
{
	return words[below(NWORDS)];
}

/*
 * Writes into buf (NAME_MAX + 1 bytes) n words (1 to 3) joined by '_', then
 * suffix.  The words are drawn last to first: any fixed order keeps the trees
 * deterministic, and this one is what the trees of version 1 were made with.
 */
static void join_words(char *buf, unsigned n, const char *suffix)
{
	const char *w[3];
	for (unsigned i = n; i-- > 0;)
		w[i] = word();
	size_t len = 0;
	for (unsigned i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, NAME_MAX + 1 - len, "%s%s", i ? "_" : "", w[i]);
	snprintf(buf + len, NAME_MAX + 1 - len, "%s", suffix);
}

/* Writes a directory name into buf (NAME_MAX + 1 bytes): a word, sometimes two or a number. */
static void dir_name(char *buf)
{
	unsigned r = below(10);
	if (r < 9) {
		join_words(buf, r < 6 ? 1 : 2, "");
	} else {
		unsigned num = below(100);
		snprintf(buf, NAME_MAX + 1, "%s%u", word(), num);
	}
}

/* Writes a source file name into buf (NAME_MAX + 1 bytes): one to three words and an extension. */
static void file_name(char *buf)
{
	unsigned r = below(100), acc = 0;
	const char *ext = exts[0].ext;
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		acc += exts[i].weight;
		if (r < acc) {
			ext = exts[i].ext;
			break;
		}
	}
	unsigned n = below(10);
	join_words(buf, n < 3 ? 1 : n < 8 ? 2 : 3, ext);
}

/* Makes the empty file name in dirfd; returns false if the name is taken, exits on other errors. */
static bool make_file(int dirfd, const char *name)
{
	if (mknodat(dirfd, name, S_IFREG | 0644, 0) < 0) {
		if (errno == EEXIST)
			return false;
		die("%s: cannot create file '%s': %s", dest, name, strerror(errno));
	}
	made.files++;
	return true;
}

/* Makes the directory name in dirfd and returns its descriptor, or -1 if the name is taken. */
static int make_dir(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0755) < 0) {
		if (errno == EEXIST)
			return -1;
		die("%s: cannot create directory '%s': %s", dest, name, strerror(errno));
	}
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		die("%s: cannot open directory '%s': %s", dest, name, strerror(errno));
	made.dirs++;
	return fd;
}

/* Returns how many files a kernel-like directory holds, drawn from file_buckets. */
static unsigned files_in_dir(void)
{
	unsigned r = below(1000), acc = 0;
	for (size_t i = 0; i < sizeof(file_buckets) / sizeof(file_buckets[0]); i++) {
		acc += file_buckets[i].weight;
		if (r < acc)
			return file_buckets[i].lo + below(file_buckets[i].hi - file_buckets[i].lo + 1);
	}
	return 0;
}

/*
 * Fills the kernel-like directory dirfd: its files (a Makefile in most
 * directories that have files, a Kconfig in some, a symlink to one of its
 * files in a few), then subdirectories holding the other budget - 1
 * directories of its subtree, split between them with skewed weights.  depth
 * is dirfd's level below the kernel tree's root (0 at the root).
 */
static void fill_kernel_dir(int dirfd, unsigned depth, unsigned budget)
{
	char name[NAME_MAX + 1], last[NAME_MAX + 1] = "";
	unsigned nfiles = files_in_dir();
	if (nfiles > 0 && below(100) < 85 && make_file(dirfd, "Makefile"))
		nfiles--;
	if (nfiles > 0 && below(100) < 30 && make_file(dirfd, "Kconfig"))
		nfiles--;
	while (nfiles > 0) {
		file_name(name);
		if (make_file(dirfd, name)) {
			memcpy(last, name, sizeof(name));
			nfiles--;
		}
	}
	if (last[0] != '\0' && below(1000) < 8) {
		char *dot = strrchr(last, '.');
		snprintf(name, sizeof(name), "%.*s_link%s", (int)(dot - last), last, dot);
		if (symlinkat(last, dirfd, name) == 0)
			made.symlinks++;
		else if (errno != EEXIST)
			die("%s: cannot create symlink '%s': %s", dest, name, strerror(errno));
	}

	unsigned rest = budget - 1;
	if (rest == 0 || depth >= KERNEL_DEPTH)
		return;
	/* How many children: the top is wide, the last level takes the whole rest. */
	unsigned nkids = depth == 0 ? KERNEL_TOP : depth + 1 == KERNEL_DEPTH ? rest : 2 + below(12);
	if (nkids > rest)
		nkids = rest;
	unsigned w[KERNEL_DIRS], total = 0;   /* nkids <= rest < budget <= KERNEL_DIRS */
	for (unsigned i = 0; i < nkids; i++) {
		unsigned r = 1 + below(30);
		w[i] = r * r;   /* squared: a few children take most of the budget */
		total += w[i];
	}
	/* Every child gets at least one directory (itself), the rest by weight. */
	unsigned spread = rest - nkids, given = 0;
	for (unsigned i = 0; i < nkids; i++) {
		unsigned share = 1 + (unsigned)((uint64_t)spread * w[i] / total);
		if (i == nkids - 1)
			share = rest - given;
		given += share;
		int fd;
		do
			dir_name(name);
		while ((fd = make_dir(dirfd, name)) < 0);
		fill_kernel_dir(fd, depth + 1, share);
		close(fd);
	}
}

/* Makes the kernel shape in dirfd. */
static void gen_kernel(int dirfd)
{
	fill_kernel_dir(dirfd, 0, KERNEL_DIRS);
}

/* Makes the million shape in dirfd: MILLION_TREES kernel-shaped subtrees, each from its own seed. */
static void gen_million(int dirfd)
{
	for (unsigned i = 0; i < MILLION_TREES; i++) {
		char name[16];
		snprintf(name, sizeof(name), "tree%02u", i);
		rng_state = SEED + i;
		int fd = make_dir(dirfd, name);
		if (fd < 0)
			die("%s: '%s' appeared during the generation", dest, name);
		fill_kernel_dir(fd, 0, KERNEL_DIRS);
		close(fd);
	}
}

/* Makes the wide shape in dirfd: WIDE_FILES source-like files, numbered so that none clash. */
static void gen_wide(int dirfd)
{
	char name[NAME_MAX + 1];
	for (unsigned i = 0; i < WIDE_FILES; i++) {
		file_name(name);
		char *dot = strrchr(name, '.');
		char numbered[NAME_MAX + 1];
		snprintf(numbered, sizeof(numbered), "%.*s_%06u%s", (int)(dot - name), name, i, dot);
		if (!make_file(dirfd, numbered))
			die("%s: '%s' appeared during the generation", dest, numbered);
	}
}

/*
 * Makes the deep shape in dirfd: a chain of DEEP_LEVELS directories, each
 * reached from the one above through its descriptor (only one is open at a
 * time), with the file "f" at every DEEP_FILE_EVERY-th level.
 */
static void gen_deep(int dirfd)
{
	int fd = dirfd;
	for (unsigned level = 1; level <= DEEP_LEVELS; level++) {
		int sub = make_dir(fd, "dddddddddd");
		if (sub < 0)
			die("%s: 'dddddddddd' appeared during the generation (level %u)", dest, level);
		if (fd != dirfd)
			close(fd);
		fd = sub;
		if (level % DEEP_FILE_EVERY == 0 && !make_file(fd, "f"))
			die("%s: 'f' appeared during the generation at level %u", dest, level);
	}
	close(fd);
}

/*
 * Opens DEST for a generation of shape: returns its descriptor, after making
 * it if it was missing; returns -1 when it already holds that shape (its
 * marker); exits when it cannot be used (not empty, not a directory).
 */
static int open_dest(const char *shape, const char *marker)
{
	if (mkdir(dest, 0755) < 0 && errno != EEXIST)
		die("%s: cannot create directory: %s", dest, strerror(errno));
	int fd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		die("%s: cannot open directory: %s", dest, strerror(errno));
	if (faccessat(fd, marker, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		close(fd);
		return -1;
	}
	int dupfd = dup(fd);
	DIR *d = dupfd < 0 ? NULL : fdopendir(dupfd);
	if (d == NULL)
		die("%s: cannot read directory: %s", dest, strerror(errno));
	struct dirent *de;
	char other[NAME_MAX + 1] = "";
	bool empty = true;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		empty = false;
		if (strncmp(de->d_name, ".gen-tree-", 10) == 0)
			memcpy(other, de->d_name, sizeof(other));
	}
	closedir(d);
	if (other[0] != '\0')
		die("%s: holds an interrupted generation or another one than %s (%s): "
		    "remove it (rm -rf) and rerun", dest, marker, other);
	if (!empty)
		die("%s: not empty and not a generated %s tree (no %s): refusing to write into it",
		    dest, shape, marker);
	return fd;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; void (*gen)(int dirfd); } shapes[] = {
		{"kernel", gen_kernel}, {"million", gen_million},
		{"wide", gen_wide}, {"deep", gen_deep},
	};
	size_t s = 0;
	while (argc == 3 && s < sizeof(shapes) / sizeof(shapes[0]) && strcmp(argv[1], shapes[s].name))
		s++;
	if (argc != 3 || s == sizeof(shapes) / sizeof(shapes[0])) {
		fputs("usage: gen-tree kernel|million|wide|deep DEST\n", stderr);
		return 2;
	}
	const char *shape = argv[1];
	dest = argv[2];
	char marker[64], partial[80];
	snprintf(marker, sizeof(marker), ".gen-tree-%s-v%d", shape, GEN_TREE_VERSION);
	snprintf(partial, sizeof(partial), "%s.incomplete", marker);

	int fd = open_dest(shape, marker);
	if (fd < 0) {
		printf("gen-tree: %s: already holds the %s tree (%s): nothing to do\n",
		       dest, shape, marker);
		return 0;
	}
	made.dirs = 1;
	if (!make_file(fd, partial))
		die("%s: '%s' appeared during the generation", dest, partial);
	rng_state = SEED;
	shapes[s].gen(fd);
	if (renameat(fd, partial, fd, marker) < 0)
		die("%s: cannot rename '%s' to '%s': %s", dest, partial, marker, strerror(errno));
	close(fd);
	printf("gen-tree: %s: made the %s tree: %lu entries (%lu directories, %lu files, "
	       "%lu symlinks), its root and %s included\n", dest, shape,
	       made.dirs + made.files + made.symlinks, made.dirs, made.files, made.symlinks, marker);
	return 0;
}
