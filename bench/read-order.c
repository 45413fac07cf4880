/*
 * read-order.c - does the order in which a scan reads files matter on a
 * spinning disk?  The measurement behind `fidx scan --io=hdd` reading one file
 * at a time in on-disk order (docs/BENCHMARKS.md, "Spinning disks: reading in
 * on-disk order"); bench/hdd-order drives it on a loop-mounted ext4 image.
 *
 *	build/bench/read-order fill DIR [-n FILES] [-s SEED]
 *	build/bench/read-order check DEVICE ROOT
 *	build/bench/read-order model ROOT [ORDER...]
 *	build/bench/read-order time [-m MARKER] ROOT ORDER...
 *	build/bench/read-order meta ROOT
 *	build/bench/read-order replay < TRACE
 *
 * The three orders of the regular files under ROOT:
 *
 *	walk   readdir order, depth first, a directory entered when its entry
 *	       is read (the order of find(1), one thread)
 *	inode  by inode number
 *	phys   by the physical offset of the first extent, from
 *	       fidx_file_first_extent() (src/core/blockdev.c); files without one
 *	       (empty) first, by inode
 *	phys:N the walk order cut into windows of N files, each window in
 *	       phys order: what a reader that sorts the files the walk has
 *	       handed it so far achieves (fidx's HDD reader, src/core/hashio.c)
 *
 * fill makes a tree in which the three disagree, on any ext4: FILES files
 * (default 20000; 99.5% of 512 B to 256 KiB, 0.5% of 1 to 16 MiB, each
 * octave of sizes equally likely, about 72 KiB a file on average) in 288
 * folders (48 with 5 subfolders each) created in shuffled order, so that
 * ext4's Orlov allocator spreads them over the block groups and readdir's
 * hash order owes nothing to creation order.  Files are written eight at a time, 64 KiB round-robin
 * between the eight, each chunk pushed to the disk at once
 * (sync_file_range), so that the allocator places chunks of different files
 * side by side instead of each file in one piece at writeback.  Then a third
 * of the files is deleted and written again, with the files not yet made,
 * into the freed holes and with reused inode numbers.  SEED fixes the tree.
 *
 * check reads the first block of every file's first extent from DEVICE (the
 * block device of ROOT's filesystem, O_DIRECT) and compares it with the
 * file's bytes, so that the offsets the orders are built on are proven.
 *
 * model prints, per ORDER (default walk, inode, phys), the head travel of a
 * single reader: the sum over consecutive files of |start of the next file's
 * first extent - end of the previous file's last extent|, the number of
 * those steps that go backwards, and the travel inside fragmented files (the
 * same in every order).  It then
 * prices that path on a model of a 7200-rpm disk: bytes at 150 MB/s, and for
 * every step that is not contiguous either the time to read over the gap at
 * that rate (a short forward gap) or a positioning of 5 ms (a short seek plus
 * half a turn), whichever is less; a backward step always costs a
 * positioning.  Reading the inodes (open) is left out of the model.
 *
 * time lists the tree (metadata and first extents, not timed) and then, for
 * each ORDER in turn: sync, drop the page cache ("1": file data and block
 * device pages, not the in-memory inodes, which a scan's walk has loaded
 * before it reads), read every file once with one stream (open, read() of
 * 1 MiB to end of file, close), and print "ORDER SECONDS BYTES FILES".
 * Repeat it with the orders rotated and take medians (bench/hdd-order).
 * With -m, "read-order begin ORDER" and "read-order end ORDER" are written
 * to MARKER (a tracefs trace_marker) around each order's reads, for replay.
 *
 * meta times what the phys order costs up front: from a dropped page,
 * dentry and inode cache ("3"), the walk with one lstat per file, and the
 * same walk with an open and a FIEMAP per file; "meta SECONDS SECONDS".
 *
 * replay prices the requests a real run sent to the block device on the
 * same disk model: TRACE is the text of a tracefs buffer holding the event
 * block:block_rq_issue of that device and the markers above (bench/hdd-order
 * writes them around `fidx scan` too).  For each section between "begin
 * NAME" and "end NAME" it prints "NAME REQUESTS MB STEPS BACKWARD STREAMS
 * ISSUE_S STREAMS_S": the read requests, their megabytes, how many do not
 * start where the one before ended and how many of those go backwards (in
 * issue order), the tasks that issued them, and the model disk's seconds
 * serving them in issue order (ISSUE_S) and as STREAMS readers that each
 * wait for one request at a time (STREAMS_S): each task's requests stay in
 * its own order, and the disk takes, among the next request of every task,
 * the nearest at or after the head (C-LOOK, as an elevator and a disk's
 * command queue do).  For one reader both are the same; for many readers
 * STREAMS_S is what a real disk would do with their requests, issue order
 * what it would do without reordering.  Unlike model, replay sees what the
 * kernel really read: inode tables, read-ahead, and the interleaving of
 * parallel readers.  It cannot see that on a slower disk the readers would
 * have taken other files from the queue at other moments.
 *
 * Errors end the program with status 2 and a message; check ends with
 * status 1 when an offset is wrong.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "blockdev.h"

#define READ_SIZE (1 << 20)   /* read() size of the timed reads */
#define CHUNK (64 << 10)      /* write size of fill, per file per turn */
#define SLOTS 8               /* files fill writes at once */
#define MAP_BATCH 64          /* extents asked per FIEMAP call of map() */

/* The disk model of the file comment. */
#define HDD_RATE 150e6        /* bytes per second */
#define HDD_POSITION 0.005    /* seconds per positioning */

/* One extent: bytes [logical, logical+len) of the file at phys on the device. */
struct extent {
	uint64_t logical, phys, len;
};

/* One regular file of the tree. */
struct file {
	char *path;
	uint64_t ino, size;
	uint64_t phys;        /* first extent's offset, if placed */
	bool placed;          /* fidx_file_first_extent() answered */
	struct extent *ext;   /* every extent (model, check), else NULL */
	size_t nextents;      /* number of extents in ext */
};

/* The regular files under a root, in walk order. */
struct tree {
	struct file *v;
	size_t n, cap;
};

/* What list() gathers per file beyond path, inode and size. */
enum depth { STAT_ONLY, FIRST_EXTENT, ALL_EXTENTS };

/* Opens path for reading, without updating its access time when allowed. */
static int open_read(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		die("cannot open '%s': %s", path, strerror(errno));
	return fd;
}

/*
 * Every extent of fd, in logical order, with FIEMAP asked MAP_BATCH at a time
 * (no sync).  Sets *ext (malloc'ed) and *n.  Dies on error.
 */
static void map(int fd, const char *path, struct extent **ext, size_t *n)
{
	size_t bytes = sizeof(struct fiemap) + MAP_BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = xmalloc(bytes);
	size_t count = 0, cap = 0;
	uint64_t start = 0;
	bool last = false;

	*ext = NULL;
	while (!last) {
		memset(fm, 0, bytes);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_extent_count = MAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) != 0)
			die("FIEMAP of '%s': %s", path, strerror(errno));
		if (fm->fm_mapped_extents == 0)
			break;
		for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];
			if (count == cap) {
				cap = cap ? 2 * cap : 4;
				*ext = realloc(*ext, cap * sizeof(**ext));
				if (!*ext)
					die("out of memory");
			}
			(*ext)[count++] = (struct extent){e->fe_logical, e->fe_physical, e->fe_length};
			start = e->fe_logical + e->fe_length;
			last = e->fe_flags & FIEMAP_EXTENT_LAST;
		}
	}
	free(fm);
	*n = count;
}

/* Appends the regular file name of dirfd (path, malloc'ed, is kept) to t. */
static void add_file(struct tree *t, int dirfd, const char *name, char *path, enum depth depth)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		die("cannot stat '%s': %s", path, strerror(errno));
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->v = realloc(t->v, t->cap * sizeof(*t->v));
		if (!t->v)
			die("out of memory");
	}
	struct file *f = &t->v[t->n++];
	*f = (struct file){.path = path, .ino = st.st_ino, .size = (uint64_t)st.st_size};
	if (depth == STAT_ONLY)
		return;
	int fd = open_read(dirfd, name);
	if (fidx_file_first_extent(fd, &f->phys) == 0)
		f->placed = true;
	else if (errno != ENODATA)
		die("first extent of '%s': %s", path, strerror(errno));
	if (depth == ALL_EXTENTS)
		map(fd, path, &f->ext, &f->nextents);
	close(fd);
}

/*
 * Appends the regular files under the folder path (open as dirfd, which is
 * closed) to t in walk order: readdir order, each subfolder entered when its
 * entry comes.
 */
static void list_dir(struct tree *t, int dirfd, const char *path, enum depth depth)
{
	DIR *d = fdopendir(dirfd);
	if (!d)
		die("cannot list '%s': %s", path, strerror(errno));
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			if (errno)
				die("cannot list '%s': %s", path, strerror(errno));
			break;
		}
		const char *name = de->d_name;
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		char *sub;
		if (asprintf(&sub, "%s/%s", path, name) < 0)
			die("out of memory");
		if (de->d_type == DT_DIR) {
			int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				die("cannot open '%s': %s", sub, strerror(errno));
			list_dir(t, fd, sub, depth);
			free(sub);
		} else if (de->d_type == DT_REG) {
			add_file(t, dirfd, name, sub, depth);
		} else if (de->d_type == DT_UNKNOWN) {
			die("'%s': the filesystem gives no d_type", sub);
		} else {
			free(sub);
		}
	}
	closedir(d);
}

/* The regular files under root, in walk order. */
static struct tree list(const char *root, enum depth depth)
{
	struct tree t = {0};
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		die("cannot open '%s': %s", root, strerror(errno));
	list_dir(&t, fd, root, depth);
	if (t.n == 0)
		die("no regular file under '%s'", root);
	return t;
}

/* Frees what list() made. */
static void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].path);
		free(t->v[i].ext);
	}
	free(t->v);
}

/* qsort() order by inode number. */
static int by_inode(const void *a, const void *b)
{
	const struct file *x = a, *y = b;
	return (x->ino > y->ino) - (x->ino < y->ino);
}

/* qsort() order by first extent, files without one first, ties by inode. */
static int by_phys(const void *a, const void *b)
{
	const struct file *x = a, *y = b;
	if (x->placed != y->placed)
		return x->placed ? 1 : -1;
	if (x->placed && x->phys != y->phys)
		return (x->phys > y->phys) - (x->phys < y->phys);
	return by_inode(a, b);
}

/*
 * A copy of walk (the tree in walk order) put in order; walk itself is kept.
 * "phys:N" cuts the walk order into windows of N files and sorts each window
 * by phys, as a reader that orders what the walk has handed it so far.
 */
static struct file *ordered(const struct tree *walk, const char *order)
{
	struct file *v = xmalloc(walk->n * sizeof(*v));
	size_t window = walk->n;
	char *end;
	memcpy(v, walk->v, walk->n * sizeof(*v));
	if (strcmp(order, "inode") == 0) {
		qsort(v, walk->n, sizeof(*v), by_inode);
	} else if (strncmp(order, "phys", 4) == 0) {
		if (order[4] == ':' && ((window = strtoul(order + 5, &end, 10)) == 0 || *end))
			die("bad window in '%s'", order);
		else if (order[4] != ':' && order[4] != '\0')
			die("unknown order '%s'", order);
		for (size_t i = 0; i < walk->n; i += window)
			qsort(v + i, walk->n - i < window ? walk->n - i : window, sizeof(*v), by_phys);
	} else if (strcmp(order, "walk") != 0) {
		die("unknown order '%s' (walk, inode, phys or phys:N)", order);
	}
	return v;
}

/* xorshift64*: the generator of fill, seeded by the caller (state never 0). */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717u;
}

/* A uniform double in [0, 1). */
static double rnd_unit(uint64_t *s)
{
	return (double)(rnd(s) >> 11) / 9007199254740992.0;
}

/*
 * A size of one of the octaves [lo, 2 lo), [2 lo, 4 lo) ... (octaves of
 * them), the octave uniform and the size uniform within it: log-uniform
 * from octave to octave, without libm.
 */
static uint64_t rnd_octaves(uint64_t *s, uint64_t lo, unsigned octaves)
{
	uint64_t base = lo << (rnd(s) % octaves);
	return base + (uint64_t)(rnd_unit(s) * (double)base);
}

/* Shuffles the n indices of v (Fisher-Yates). */
static void shuffle(size_t *v, size_t n, uint64_t *s)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = rnd(s) % i, tmp = v[i - 1];
		v[i - 1] = v[j];
		v[j] = tmp;
	}
}

/* A file of fill's plan. */
struct planned {
	char path[64];        /* relative to DIR */
	uint64_t size;
};

/* The size of a new file of fill: see the file comment. */
static uint64_t plan_size(uint64_t *s)
{
	if (rnd_unit(s) < 0.005)
		return rnd_octaves(s, 1 << 20, 4);     /* 1 to 16 MiB */
	return rnd_octaves(s, 512, 9);             /* 512 B to 256 KiB */
}

/*
 * Writes the n files of plan named by idx into the folder dirfd, SLOTS at a
 * time: each turn a random open file gets its next CHUNK, pushed to the disk
 * at once.  Returns the bytes written.
 */
static uint64_t write_files(int dirfd, struct planned *plan, const size_t *idx, size_t n, uint64_t *s)
{
	struct {
		int fd;
		const struct planned *p;
		uint64_t off;
	} slot[SLOTS];
	static uint64_t buf[CHUNK / 8];
	size_t next = 0, open_slots = 0;
	uint64_t total = 0;

	for (int i = 0; i < SLOTS; i++)
		slot[i].fd = -1;
	for (;;) {
		for (int i = 0; i < SLOTS && next < n; i++) {
			if (slot[i].fd >= 0)
				continue;
			slot[i].p = &plan[idx[next++]];
			slot[i].off = 0;
			slot[i].fd = openat(dirfd, slot[i].p->path,
					    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (slot[i].fd < 0)
				die("cannot create '%s': %s", slot[i].p->path, strerror(errno));
			open_slots++;
		}
		if (open_slots == 0)
			break;
		int i;
		do
			i = (int)(rnd(s) % SLOTS);
		while (slot[i].fd < 0);
		uint64_t len = slot[i].p->size - slot[i].off;
		if (len > CHUNK)
			len = CHUNK;
		for (size_t k = 0; k < (len + 7) / 8; k++)
			buf[k] = rnd(s);
		if (pwrite(slot[i].fd, buf, len, (off_t)slot[i].off) != (ssize_t)len)
			die("cannot write '%s': %s", slot[i].p->path, strerror(errno));
		if (sync_file_range(slot[i].fd, (off_t)slot[i].off, (off_t)len, SYNC_FILE_RANGE_WRITE) != 0)
			die("sync_file_range '%s': %s", slot[i].p->path, strerror(errno));
		slot[i].off += len;
		total += len;
		if (slot[i].off == slot[i].p->size) {
			if (close(slot[i].fd) != 0)
				die("cannot write '%s': %s", slot[i].p->path, strerror(errno));
			slot[i].fd = -1;
			open_slots--;
		}
	}
	return total;
}

/* fill DIR [-n FILES] [-s SEED]: see the file comment. */
static int cmd_fill(int argc, char **argv)
{
	size_t nfiles = 20000;
	uint64_t seed = 1;
	int c;
	while ((c = getopt(argc, argv, "n:s:")) != -1) {
		if (c == 'n')
			nfiles = strtoul(optarg, NULL, 10);
		else if (c == 's')
			seed = strtoull(optarg, NULL, 10);
		else
			die("usage: read-order fill DIR [-n FILES] [-s SEED]");
	}
	if (optind + 1 != argc || nfiles < 10)
		die("usage: read-order fill DIR [-n FILES >= 10] [-s SEED]");
	uint64_t s = seed * 0x9E3779B97F4A7C15u + 1;

	if (mkdir(argv[optind], 0755) != 0 && errno != EEXIST)
		die("cannot create '%s': %s", argv[optind], strerror(errno));
	int dirfd = open(argv[optind], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		die("cannot open '%s': %s", argv[optind], strerror(errno));

	/* 48 folders with 5 subfolders each, made in shuffled order. */
	enum { TOP = 48, SUB = 5, NDIRS = TOP * (SUB + 1) };
	char dirs[NDIRS][16];
	size_t order[NDIRS];
	for (size_t i = 0; i < NDIRS; i++) {
		if (i < TOP)
			snprintf(dirs[i], sizeof(dirs[i]), "t%02zu", i);
		else
			snprintf(dirs[i], sizeof(dirs[i]), "t%02zu/s%zu", (i - TOP) / SUB, (i - TOP) % SUB);
		order[i] = i;
	}
	shuffle(order, NDIRS, &s);
	for (size_t i = 0; i < NDIRS; i++) {
		const char *d = dirs[order[i]];
		if (strchr(d, '/')) {
			char top[16];
			snprintf(top, sizeof(top), "%.3s", d);
			if (mkdirat(dirfd, top, 0755) != 0 && errno != EEXIST)
				die("cannot create '%s': %s", top, strerror(errno));
		}
		if (mkdirat(dirfd, d, 0755) != 0 && errno != EEXIST)
			die("cannot create '%s': %s", d, strerror(errno));
	}

	/* The plan: each file in a random folder, under a name unique by index. */
	struct planned *plan = xmalloc(nfiles * sizeof(*plan));
	size_t *idx = xmalloc(nfiles * sizeof(*idx));
	for (size_t i = 0; i < nfiles; i++) {
		snprintf(plan[i].path, sizeof(plan[i].path), "%s/f%06zx-%04x",
			 dirs[rnd(&s) % NDIRS], i, (unsigned)(rnd(&s) & 0xffff));
		plan[i].size = plan_size(&s);
		idx[i] = i;
	}
	shuffle(idx, nfiles, &s);

	/* Three quarters first; then a third of those deleted. */
	size_t first = nfiles * 3 / 4, ndel = first / 3;
	uint64_t written = write_files(dirfd, plan, idx, first, &s);
	shuffle(idx, first, &s);
	for (size_t i = 0; i < ndel; i++)
		if (unlinkat(dirfd, plan[idx[i]].path, 0) != 0)
			die("cannot delete '%s': %s", plan[idx[i]].path, strerror(errno));

	/* The deleted files again, new sizes, mixed with the last quarter. */
	size_t nagain = ndel + (nfiles - first);
	size_t *again = xmalloc(nagain * sizeof(*again));
	memcpy(again, idx, ndel * sizeof(*again));
	memcpy(again + ndel, idx + first, (nfiles - first) * sizeof(*again));
	for (size_t i = 0; i < ndel; i++)
		plan[again[i]].size = plan_size(&s);
	shuffle(again, nagain, &s);
	written += write_files(dirfd, plan, again, nagain, &s);
	if (syncfs(dirfd) != 0)
		die("syncfs: %s", strerror(errno));

	uint64_t kept = 0;
	for (size_t i = 0; i < nfiles; i++)
		kept += plan[i].size;
	printf("fill: %zu files, %.1f MiB (%.1f MiB written, %zu deleted and rewritten), %d folders\n",
	       nfiles, kept / 1048576.0, written / 1048576.0, ndel, (int)NDIRS);
	free(again);
	free(idx);
	free(plan);
	close(dirfd);
	return 0;
}

/* check DEVICE ROOT: see the file comment. */
static int cmd_check(int argc, char **argv)
{
	if (argc != 3)
		die("usage: read-order check DEVICE ROOT");
	struct tree t = list(argv[2], ALL_EXTENTS);
	int dev = open(argv[1], O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (dev < 0)
		die("cannot open '%s': %s", argv[1], strerror(errno));
	unsigned char *disk = aligned_alloc(4096, 4096), file[4096];
	if (!disk)
		die("out of memory");
	size_t checked = 0, wrong = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct file *f = &t.v[i];
		if (f->nextents == 0) {
			if (f->placed)
				die("'%s': a first extent but no map", f->path);
			continue;
		}
		const struct extent *e = &f->ext[0];
		uint64_t len = f->size - e->logical;
		if (len > sizeof(file))
			len = sizeof(file);
		if (len > e->len)
			len = e->len;
		int fd = open_read(AT_FDCWD, f->path);
		if (pread(fd, file, len, (off_t)e->logical) != (ssize_t)len)
			die("cannot read '%s': %s", f->path, strerror(errno));
		close(fd);
		if (pread(dev, disk, 4096, (off_t)e->phys) != 4096)
			die("cannot read '%s' at %llu: %s", argv[1],
			    (unsigned long long)e->phys, strerror(errno));
		bool ok = f->placed && f->phys == e->phys && memcmp(disk, file, len) == 0;
		if (!ok && wrong++ < 10)
			fprintf(stderr, "read-order: '%s': first extent at %llu does not hold its data\n",
				f->path, (unsigned long long)e->phys);
		checked++;
	}
	printf("check: %zu files, %zu first extents hold the file's first bytes, %zu do not\n",
	       checked, checked - wrong, wrong);
	free(disk);
	close(dev);
	tree_free(&t);
	return wrong ? 1 : 0;
}

/* What one order costs in the model of the file comment. */
struct travel {
	uint64_t between;     /* bytes of head travel from file to file */
	uint64_t within;      /* bytes of head travel inside fragmented files */
	size_t backward;      /* steps from file to file that go backwards */
	size_t steps;         /* steps from file to file that are not contiguous */
	double hdd;           /* seconds on the model disk */
};

/* Seconds the model disk spends getting from end to start (not the read). */
static double step_cost(uint64_t end, uint64_t start)
{
	if (start == end)
		return 0;
	if (start < end)
		return HDD_POSITION;
	double over = (double)(start - end) / HDD_RATE;
	return over < HDD_POSITION ? over : HDD_POSITION;
}

/* The travel of reading the n files of v in that order. */
static struct travel travel_of(const struct file *v, size_t n)
{
	struct travel tr = {0};
	uint64_t head = 0, bytes = 0;
	bool started = false;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < v[i].nextents; k++) {
			const struct extent *e = &v[i].ext[k];
			uint64_t gap = e->phys > head ? e->phys - head : head - e->phys;
			if (k > 0) {
				tr.within += gap;
				tr.hdd += step_cost(head, e->phys);
			} else if (started) {
				tr.between += gap;
				tr.backward += e->phys < head;
				tr.steps += gap != 0;
				tr.hdd += step_cost(head, e->phys);
			}
			started = true;
			head = e->phys + e->len;
			bytes += e->len;
		}
	}
	tr.hdd += (double)bytes / HDD_RATE;
	return tr;
}

/* model ROOT [ORDER...]: see the file comment. */
static int cmd_model(int argc, char **argv)
{
	static char *defaults[] = {"walk", "inode", "phys"};
	if (argc < 2)
		die("usage: read-order model ROOT [ORDER...]");
	char **orders = argc > 2 ? argv + 2 : defaults;
	int norders = argc > 2 ? argc - 2 : 3;
	struct tree t = list(argv[1], ALL_EXTENTS);
	size_t extents = 0, fragmented = 0;
	uint64_t bytes = 0;
	for (size_t i = 0; i < t.n; i++) {
		extents += t.v[i].nextents;
		fragmented += t.v[i].nextents > 1;
		bytes += t.v[i].size;
	}
	printf("%zu files, %.1f MiB, %zu extents, %zu files in more than one extent\n\n",
	       t.n, bytes / 1048576.0, extents, fragmented);
	printf("| order | head travel between files (GiB) | mean step (MiB) | backward steps"
	       " | non-contiguous steps | travel inside files (GiB) | model 7200-rpm disk (s) |\n");
	printf("|---|--:|--:|--:|--:|--:|--:|\n");
	for (int o = 0; o < norders; o++) {
		struct file *v = ordered(&t, orders[o]);
		struct travel tr = travel_of(v, t.n);
		printf("| %s | %.1f | %.1f | %zu | %zu | %.2f | %.1f |\n", orders[o],
		       tr.between / 1073741824.0, tr.between / 1048576.0 / (double)(t.n - 1),
		       tr.backward, tr.steps, tr.within / 1073741824.0, tr.hdd);
		free(v);
	}
	tree_free(&t);
	return 0;
}

/* Reads the whole file path once; returns the bytes read. */
static uint64_t read_whole(const char *path, void *buf)
{
	int fd = open_read(AT_FDCWD, path);
	uint64_t total = 0;
	ssize_t n;
	while ((n = read(fd, buf, READ_SIZE)) > 0)
		total += (uint64_t)n;
	if (n < 0)
		die("cannot read '%s': %s", path, strerror(errno));
	close(fd);
	return total;
}

/* Writes "read-order WHAT ORDER" to the trace marker fd (if >= 0). */
static void mark(int fd, const char *what, const char *order)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "read-order %s %s\n", what, order);
	if (fd >= 0 && write(fd, line, (size_t)n) != n)
		die("cannot write the trace marker: %s", strerror(errno));
}

/* time [-m MARKER] ROOT ORDER...: see the file comment. */
static int cmd_time(int argc, char **argv)
{
	int marker = -1, c;
	while ((c = getopt(argc, argv, "m:")) != -1) {
		if (c != 'm')
			die("usage: read-order time [-m MARKER] ROOT ORDER...");
		marker = open(optarg, O_WRONLY | O_CLOEXEC);
		if (marker < 0)
			die("cannot open '%s': %s", optarg, strerror(errno));
	}
	if (argc - optind < 2)
		die("usage: read-order time [-m MARKER] ROOT ORDER...");
	struct tree t = list(argv[optind], FIRST_EXTENT);
	uint64_t want = 0;
	for (size_t i = 0; i < t.n; i++)
		want += t.v[i].size;
	void *buf = xmalloc(READ_SIZE);
	for (int a = optind + 1; a < argc; a++) {
		struct file *v = ordered(&t, argv[a]);
		uint64_t bytes = 0;
		drop_caches("1");
		mark(marker, "begin", argv[a]);
		double t0 = now();
		for (size_t i = 0; i < t.n; i++)
			bytes += read_whole(v[i].path, buf);
		double secs = now() - t0;
		mark(marker, "end", argv[a]);
		if (bytes != want)
			die("%s: read %llu bytes, the listing said %llu", argv[a],
			    (unsigned long long)bytes, (unsigned long long)want);
		printf("%s %.3f %llu %zu\n", argv[a], secs, (unsigned long long)bytes, t.n);
		fflush(stdout);
		free(v);
	}
	if (marker >= 0)
		close(marker);
	free(buf);
	tree_free(&t);
	return 0;
}

/* One read request of a block trace, in bytes of the device. */
struct request {
	uint64_t start, len;
	size_t stream;        /* index of the task that issued it */
	size_t next;          /* the stream's next request, or SIZE_MAX */
};

/* How the model disk served a list of requests. */
struct served {
	double secs;          /* positioning and transfer */
	size_t steps;         /* requests not contiguous with the one served before */
	size_t backward;      /* of which backwards */
};

/*
 * Serves the n requests rq of nstreams streams on the model disk.  One
 * stream (all requests linked in issue order): in issue order.  Several:
 * each stream has its next request waiting, and the disk takes among them
 * the one that starts nearest at or after the head, else the lowest
 * (C-LOOK).  first[s] is stream s's first request.
 */
static struct served serve(const struct request *rq, const size_t *first, size_t nstreams)
{
	struct served sv = {0};
	size_t *cur = xmalloc(nstreams * sizeof(*cur));
	memcpy(cur, first, nstreams * sizeof(*cur));
	bool started = false;
	uint64_t head = 0;
	for (;;) {
		size_t pick = SIZE_MAX, low = SIZE_MAX;
		for (size_t k = 0; k < nstreams; k++) {
			size_t i = cur[k];
			if (i == SIZE_MAX)
				continue;
			if (rq[i].start >= head && (pick == SIZE_MAX || rq[i].start < rq[cur[pick]].start))
				pick = k;
			if (low == SIZE_MAX || rq[i].start < rq[cur[low]].start)
				low = k;
		}
		if (low == SIZE_MAX)
			break;
		if (pick == SIZE_MAX)
			pick = low;
		const struct request *r = &rq[cur[pick]];
		cur[pick] = r->next;
		if (started) {
			sv.secs += step_cost(head, r->start);
			sv.steps += r->start != head;
			sv.backward += r->start < head;
		}
		started = true;
		sv.secs += (double)r->len / HDD_RATE;
		head = r->start + r->len;
	}
	free(cur);
	return sv;
}

/* The n requests of a trace section, and their issuing tasks. */
struct section {
	char name[64];        /* "" outside a section */
	struct request *rq;
	size_t n, cap;
	long *pids;           /* the task of each stream */
	size_t *first, *last; /* each stream's first and last request */
	size_t nstreams, scap;
};

/* Appends a request of task pid to sec, in its stream. */
static void section_add(struct section *sec, uint64_t start, uint64_t len, long pid)
{
	size_t k = 0;
	while (k < sec->nstreams && sec->pids[k] != pid)
		k++;
	if (k == sec->nstreams) {
		if (k == sec->scap) {
			sec->scap = sec->scap ? 2 * sec->scap : 16;
			sec->pids = realloc(sec->pids, sec->scap * sizeof(*sec->pids));
			sec->first = realloc(sec->first, sec->scap * sizeof(*sec->first));
			sec->last = realloc(sec->last, sec->scap * sizeof(*sec->last));
			if (!sec->pids || !sec->first || !sec->last)
				die("out of memory");
		}
		sec->pids[k] = pid;
		sec->first[k] = SIZE_MAX;
		sec->nstreams++;
	}
	if (sec->n == sec->cap) {
		sec->cap = sec->cap ? 2 * sec->cap : 4096;
		sec->rq = realloc(sec->rq, sec->cap * sizeof(*sec->rq));
		if (!sec->rq)
			die("out of memory");
	}
	sec->rq[sec->n] = (struct request){start, len, k, SIZE_MAX};
	if (sec->first[k] == SIZE_MAX)
		sec->first[k] = sec->n;
	else
		sec->rq[sec->last[k]].next = sec->n;
	sec->last[k] = sec->n++;
}

/* Prints the replay line of sec (see the file comment) and empties it. */
static void section_print(struct section *sec)
{
	uint64_t bytes = 0;
	struct served fifo = {0}, streams = {0};
	if (sec->n > 0) {
		streams = serve(sec->rq, sec->first, sec->nstreams);
		/* Issue order: one stream of every request. */
		for (size_t i = 0; i < sec->n; i++) {
			bytes += sec->rq[i].len;
			sec->rq[i].next = i + 1 < sec->n ? i + 1 : SIZE_MAX;
		}
		size_t zero = 0;
		fifo = serve(sec->rq, &zero, 1);
	}
	printf("%s %zu %.1f %zu %zu %zu %.3f %.3f\n", sec->name, sec->n, bytes / 1e6,
	       fifo.steps, fifo.backward, sec->nstreams, fifo.secs, streams.secs);
	sec->name[0] = '\0';
	sec->n = sec->nstreams = 0;
}

/* replay < TRACE: see the file comment. */
static int cmd_replay(int argc, char **argv)
{
	struct section sec = {0};
	char *line = NULL;
	size_t linecap = 0;
	(void)argv;
	if (argc != 1)
		die("usage: read-order replay < TRACE");
	while (getline(&line, &linecap, stdin) > 0) {
		const char *p, *q;
		char name[64], rwbs[16];
		unsigned long long sector;
		unsigned nr;
		if ((p = strstr(line, "tracing_mark_write: read-order begin ")) &&
		    sscanf(p + 37, "%63s", name) == 1) {
			snprintf(sec.name, sizeof(sec.name), "%s", name);
			sec.n = sec.nstreams = 0;
		} else if (strstr(line, "tracing_mark_write: read-order end ") && sec.name[0]) {
			section_print(&sec);
		} else if (sec.name[0] && (p = strstr(line, "block_rq_issue: ")) &&
			   sscanf(p + 16, "%*u,%*u %15s", rwbs) == 1 && strchr(rwbs, 'R') &&
			   (q = strchr(p, ')')) && sscanf(q + 1, " %llu + %u", &sector, &nr) == 2 &&
			   nr > 0) {
			/* The task: "COMM-PID [CPU]" begins the line. */
			const char *cpu = strstr(line, " [");
			const char *dash = cpu;
			while (dash && dash > line && dash[-1] != '-')
				dash--;
			if (!cpu || dash <= line)
				die("no task in trace line: %s", line);
			section_add(&sec, sector * 512, (uint64_t)nr * 512, strtol(dash, NULL, 10));
		}
	}
	free(line);
	free(sec.rq);
	free(sec.pids);
	free(sec.first);
	free(sec.last);
	return 0;
}

/* meta ROOT: see the file comment. */
static int cmd_meta(int argc, char **argv)
{
	if (argc != 2)
		die("usage: read-order meta ROOT");
	double secs[2];
	for (int i = 0; i < 2; i++) {
		drop_caches("3");
		double t0 = now();
		struct tree t = list(argv[1], i == 0 ? STAT_ONLY : FIRST_EXTENT);
		secs[i] = now() - t0;
		tree_free(&t);
	}
	printf("meta %.3f %.3f\n", secs[0], secs[1]);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int, char **);
	} cmds[] = {
		{"fill", cmd_fill}, {"check", cmd_check}, {"model", cmd_model},
		{"time", cmd_time}, {"meta", cmd_meta}, {"replay", cmd_replay},
	};
	if (argc >= 2)
		for (size_t i = 0; i < sizeof(cmds) / sizeof(*cmds); i++)
			if (strcmp(argv[1], cmds[i].name) == 0)
				return cmds[i].run(argc - 1, argv + 1);
	die("usage: read-order fill|check|model|time|meta|replay ... (see bench/read-order.c)");
}
