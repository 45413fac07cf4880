#!/usr/bin/python3
# e2e: tsan (tests/e2e/run --marked tsan): every read strategy's threads, -j1 and -j3.
"""t_hashio.py - digests under every read strategy (--io, --drop-cache), against the truth.

Every strategy of the content reader must give the same, right digests:
the default (auto), --io=ssd, --io=hdd, and both with --drop-cache, each
with -j1 and -j3.  With --io=hdd a worker hashes a file the page cache
holds and the single reader reads the others, so the trees are scanned
both warm and cold ("cool": fsync, then POSIX_FADV_DONTNEED on each file;
never a global cache drop).  Four trees:

  * main: sizes at the edges of reads, blocks and the large-file path (0,
    1, 2, and 4 KiB, 64 KiB, 128 KiB, 256 KiB, 1 MiB, 2 MiB, 4 MiB, 8 MiB
    each -1/0/+1, 4 MiB + 3, 16 MiB + 1, 33 MiB - 5), sparse files
    (data after a hole, a hole at the end, only a hole), 3,000 small files
    in 12 directories, hard links, hostile names, a FIFO and symlinks.  All
    five digests; every column of every row against lib.truth(), the row
    count against find(1).  After a --drop-cache scan the large files must
    have left the page cache (mincore(2) on a mapping made with O_NOATIME);
    the first --drop-cache scan of a mode starts with them read into the
    cache (the control: the measure must see them there), the second cold.
  * race: under race-shim.so, "fidx-race-modify*" is overwritten (same size,
    new mtime) and "fidx-race-truncate*" cut to half once fidx has read from
    it, small (one read) and large (20 MiB); both are recorded with the
    error 'changed during scan' and no digest, in every mode (auto given
    explicitly here), warm with -j1 and cold with -j3, while the files next
    to them hash right under the shim.  The race files are rewritten, with
    an mtime in 2001, before each scan.
  * hdd: 2,000 cold files (240 of them of several 256 KiB blocks) scanned
    with --io=hdd -j3 under strace -f: digests right, the row count
    find(1)'s, the reads of different files never interleave (one stream
    at a time; --io=ssd -j3 does interleave them), and the files are read
    in the order of their first extent's place on disk (FIEMAP; inode order
    where there is none), all 2,000 being one window of the reader.
  * big: a sparse file of 4 GiB + 3 MiB + 7 bytes with distinct markers
    across 2 GiB, just before 4 GiB, across 4 GiB and at the end, scanned
    with --hash sha256,xxh128 in hdd mode (cold) and ssd mode; every
    column, the size among them.  The truth is hashlib's and xxhash's
    digests of its layout, computed once while the first scan runs
    (sha256sum(1) takes 20 s of CPU over 4 GiB here, and reading the holes
    costs seconds of page-cache zeroing).  Both scans run with --progress:
    while the one file is being hashed the line must show growing byte
    counts within it, and an ETA.
Last, the usage errors of --io and --drop-cache: exit 2, one line naming
the option (and the bad value), no database.
"""

import collections
import ctypes
import errno
import fcntl
import mmap
import os
import random
import re
import struct
import subprocess
import threading
import time

import lib
from lib import Checker, OneOf, Truth, compare, run_fidx, truth, write

ALL = "md5,sha1,sha256,sha512,xxh128"
MODES = [("auto", []), ("ssd", ["--io=ssd"]), ("hdd", ["--io=hdd"]),
	 ("ssd+drop", ["--io=ssd", "--drop-cache"]), ("hdd+drop", ["--io=hdd", "--drop-cache"])]
JOBS = ["1", "3"]
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
EDGES = [4 * KiB, 64 * KiB, 128 * KiB, 256 * KiB, MiB, 2 * MiB, 4 * MiB, 8 * MiB]
SIZES = sorted({0, 1, 2, 4 * MiB + 3, 16 * MiB + 1, 33 * MiB - 5} |
	       {e + d for e in EDGES for d in (-1, 0, 1)})
LARGE = MiB  # files at least this large are looked for in the page cache
SMALL_DIRS, SMALL_FILES = 12, 3000
HDD_DIRS, HDD_FILES = 8, 2000
NAMES = [b"new\nline", b"inv\xff\xfeutf8", b"tab\tname", b"-dash", b"caf\xc3\xa9.txt"]
ERR_CHANGED = "changed during scan"
OLD_NS = 978307200 * 10**9  # 2001-01-01: a write by the shim surely moves the mtime
RACE = {b"fidx-race-modify-small": 3000, b"fidx-race-modify-big": 20 * MiB + 5,
	b"fidx-race-truncate-small": 70001, b"fidx-race-truncate-big": 20 * MiB + 3}
NORMAL = {b"normal-empty": 0, b"normal-one": 1, b"normal-64k+1": 64 * KiB + 1,
	  b"normal-big": 20 * MiB + 1, b"not-fidx-race-modify": 5000}
BIG_SIZE = 4 * GiB + 3 * MiB + 7
BIG_PIECES = ((2 * GiB - 2, b"\x21\x22\x23\x24"), (4 * GiB - 9, b"\xb1\xb2\xb3\xb4"),
	      (4 * GiB - 3, b"\xa1\xa2\xa3\xa4\xa5\xa6"), (BIG_SIZE - 5, b"\xe1\xe2\xe3\xe4\xe5"))
BIG_TIMEOUT = 300
FS_IOC_FIEMAP = 0xC020660B
FIEMAP_HEAD = struct.Struct("=QQIIII")     # start, length, flags, mapped, count, reserved
FIEMAP_EXTENT = struct.Struct("=QQQ16sI12s")  # logical, physical, length, -, flags, -
FIEMAP_EXTENT_UNKNOWN = 0x2  # also set with DELALLOC: no place on disk yet
READ_CALL = re.compile(rb"^\d+\s+(?:read|pread64|readv|preadv|preadv2)\(\d+<([^>]*)>")


# ---------------------------------------------------------------- trees ----

def build_main(top, rng):
	"""The main tree of the header; returns its root and its large files."""
	root = top + b"/main"
	for d in (b"sizes", b"sparse", b"names", b"links", b"special"):
		os.makedirs(root + b"/" + d)
	large = []
	for n in SIZES:
		p = root + b"/sizes/s%d" % n
		write(p, rng.randbytes(n))
		if n >= LARGE:
			large.append(p)
	lib.sparse(root + b"/sparse/data-after-hole", 12 * MiB + 5,
		   [(9 * MiB + 3, rng.randbytes(3 * MiB + 2))])
	lib.sparse(root + b"/sparse/hole-at-end", 6 * MiB + 1,
		   [(0, rng.randbytes(100)), (MiB + 1, b"x" * 10)])
	lib.sparse(root + b"/sparse/only-hole", 5 * MiB)
	for i in range(SMALL_DIRS):
		os.mkdir(root + b"/small-%02d" % i)
	for i in range(SMALL_FILES):
		n = rng.choice([0, 1, 17, 4096, 4097, rng.randint(0, 9000)])
		write(root + b"/small-%02d/%05d" % (i % SMALL_DIRS, i), rng.randbytes(n))
	for i, n in enumerate(NAMES):
		write(root + b"/names/" + n, rng.randbytes(70000 * i + 1))
	os.link(root + b"/sizes/s65537", root + b"/links/hard-65537")
	os.link(root + b"/small-00/00000", root + b"/links/hard-small")
	os.symlink(b"../sizes/s1", root + b"/links/to-file")
	os.symlink(b"nowhere", root + b"/links/dangling")
	os.symlink(b"../special/fifo", root + b"/links/to-fifo")
	os.mkfifo(root + b"/special/fifo")
	return root, large


def race_content(name, size):
	"""The content a race file is (re)written with: its name, repeated."""
	return (name * (size // len(name) + 1))[:size]


def write_race_files(root):
	"""(Re)writes the race files of root/r, dated 2001."""
	for name, size in RACE.items():
		p = root + b"/r/" + name
		write(p, race_content(name, size))
		os.utime(p, ns=(OLD_NS, OLD_NS))


def build_race(top, rng):
	"""The race tree: race files and normal ones in r/, one normal file above."""
	root = top + b"/race"
	os.makedirs(root + b"/r")
	for name, size in NORMAL.items():
		write(root + b"/r/" + name, rng.randbytes(size))
	write(root + b"/above", b"a normal file above")
	write_race_files(root)
	return root


def build_hdd(top, rng):
	"""
	2,000 files of plain names in 8 directories: mostly small, one in ten of
	300 KiB + 7 and one in fifty of 1 MiB + 1, so that many take several
	reads (the HDD reader reads 256 KiB at a time) and could interleave.
	"""
	root = top + b"/hdd"
	for i in range(HDD_DIRS):
		os.makedirs(root + b"/d%d" % i)
	for i in range(HDD_FILES):
		if i % 50 == 0:
			n = MiB + 1
		elif i % 10 == 1:
			n = 300 * KiB + 7
		else:
			n = rng.choice([0, 1, 4095, 64 * KiB + 1, rng.randint(0, 40000)])
		write(root + b"/d%d/f%04d" % (i % HDD_DIRS, i), rng.randbytes(n))
	return root


def first_extent(path):
	"""
	The physical offset of path's first extent (FS_IOC_FIEMAP, one extent,
	no sync), 0 when it has none with a known place; None without FIEMAP.
	"""
	buf = bytearray(FIEMAP_HEAD.size + FIEMAP_EXTENT.size)
	FIEMAP_HEAD.pack_into(buf, 0, 0, 2**64 - 1, 0, 0, 1, 0)
	fd = os.open(path, os.O_RDONLY | os.O_NOATIME)
	try:
		fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
	except OSError as e:
		if e.errno in (errno.EOPNOTSUPP, errno.ENOTTY):
			return None
		raise
	finally:
		os.close(fd)
	if FIEMAP_HEAD.unpack_from(buf, 0)[3] == 0:
		return 0
	_, phys, _, _, flags, _ = FIEMAP_EXTENT.unpack_from(buf, FIEMAP_HEAD.size)
	return 0 if flags & FIEMAP_EXTENT_UNKNOWN else phys


def disk_keys(paths):
	"""The order --io=hdd promises for paths: first extents, or inodes without FIEMAP."""
	keys = [first_extent(p) for p in paths]
	if None in keys:
		return [os.stat(p).st_ino for p in paths]
	return keys


def find_count(root):
	"""How many entries find(1) lists under and including root."""
	p = subprocess.run([b"find", root, b"-print0"], capture_output=True, check=True)
	return p.stdout.count(b"\0")


# ---------------------------------------------------------- page cache ----

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
		       ctypes.c_int, ctypes.c_long]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
MAP_FAILED = ctypes.c_void_p(-1).value


def resident(path):
	"""Bytes of path in the page cache (mincore), its atime left alone (O_NOATIME)."""
	size = os.stat(path).st_size
	if size == 0:
		return 0
	fd = os.open(path, os.O_RDONLY | os.O_NOATIME)
	try:
		addr = _libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
		if addr == MAP_FAILED:
			raise OSError(ctypes.get_errno(), "mmap %r" % path)
		try:
			vec = ctypes.create_string_buffer((size + mmap.PAGESIZE - 1) // mmap.PAGESIZE)
			if _libc.mincore(addr, size, vec) != 0:
				raise OSError(ctypes.get_errno(), "mincore %r" % path)
			return sum(b & 1 for b in vec.raw) * mmap.PAGESIZE
		finally:
			_libc.munmap(addr, size)
	finally:
		os.close(fd)


def cool(paths):
	"""Writes paths back and drops their pages from the page cache (theirs only)."""
	for p in paths:
		fd = os.open(p, os.O_RDONLY | os.O_NOATIME)
		try:
			os.fsync(fd)
			os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
		finally:
			os.close(fd)


def warm(paths):
	"""Reads paths (O_NOATIME) into the page cache; returns cached_share(paths)."""
	for p in paths:
		fd = os.open(p, os.O_RDONLY | os.O_NOATIME)
		try:
			while os.read(fd, lib.READ_CHUNK):
				pass
		finally:
			os.close(fd)
	return cached_share(paths)


def cached_share(paths):
	"""The share (0 to 1) of the bytes of paths that is in the page cache."""
	total = sum(os.stat(p).st_size for p in paths)
	return sum(min(resident(p), os.stat(p).st_size) for p in paths) / total


# --------------------------------------------------------------- checks ----

def check_run(chk, label, res, rc=0):
	"""Exit status rc, not hung (FIFOs), nothing on stderr."""
	chk.ok("%s: exit %d, not hung" % (label, rc), res.rc == rc and not res.timed_out, repr(res))
	chk.ok("%s: nothing on stderr" % label, res.err == b"", lib.short(res.err))


def check_rows(chk, label, db, root, want, nfind, t0, t1):
	"""
	Every column against want, the row count against find(1), and the scan
	row against the rows stored (which the column checks hold to want).
	"""
	got, dups = lib.db_rows(db, 1)
	compare(chk, label, got, dups, want)
	chk.eq("%s: as many rows as find(1) lists" % label, len(got), nfind)
	scans = lib.scan_rows(db)
	if chk.ok("%s: one scan row" % label, len(scans) == 1, repr(scans)):
		lib.check_scan_row(chk, label, scans[0], root, got, "complete", t0, t1)


def scan(db, root, args, hashes=ALL, preload=None, timeout=300):
	"""One scan of root into a fresh db; returns (Result, t0, t1)."""
	t0 = time.time_ns()
	res = run_fidx("scan", "-q", *args, "--hash", hashes, "-o", db, root, preload=preload,
		       timeout=timeout)
	return res, t0, time.time_ns()


def tsan_skip(chk, label, margs):
	"""
	Whether to skip a --drop-cache mode on the TSan build (saying so): it runs the threads of
	the mode without it, and only adds a call on each file once it is read.
	"""
	if "--drop-cache" not in margs or not lib.is_tsan():
		return False
	chk.skip(label, "TSan build: the threads of %s without --drop-cache; run on the normal and"
		 " ASan builds" % margs[0])
	return True


def check_main(chk, top, rng):
	"""The main tree in every mode and -j, and what --drop-cache leaves cached."""
	root, large = build_main(top, rng)
	cool(large)  # written back, as dirty pages cannot be dropped; the first scan cold
	lib.settle(root)
	want = truth(root)
	nfind = find_count(root)
	chk.eq("main: ground truth agrees with find(1)", len(want), nfind)
	for mode, margs in MODES:
		if tsan_skip(chk, "main %s" % mode, margs):
			continue
		for jobs in JOBS:
			label = "main %s -j%s" % (mode, jobs)
			with chk.guard(label):
				db = top + b"/main-%s-j%s.db" % (mode.encode(), jobs.encode())
				if "--drop-cache" in margs and jobs == JOBS[0]:
					# the scan with -j3 after it starts with a cold cache
					share = warm(large)
					chk.ok("%s: the large files were read into the page cache "
					       "(control)" % label, share >= 0.9,
					       "%.1f%% cached" % (100 * share))
				res, t0, t1 = scan(db, root, margs + ["-j", jobs])
				check_run(chk, label, res)
				check_rows(chk, label, db, root, want, nfind, t0, t1)
				if "--drop-cache" in margs:
					share = cached_share(large)
					chk.ok("%s: the large files left the page cache" % label,
					       share <= 0.01, "%.1f%% still cached" % (100 * share))


def check_races(chk, top, rng):
	"""Modified and truncated files under the shim, in every mode and -j."""
	root = build_race(top, rng)
	lib.settle(root)
	digests = truth(root, Truth(btime=False))
	raced = {root + b"/r/" + n for n in RACE}
	modes = [("auto", ["--io=auto"])] + MODES[1:]
	for mode, margs in modes:
		if tsan_skip(chk, "race %s" % mode, margs):
			continue
		for jobs in JOBS:
			label = "race %s -j%s" % (mode, jobs)
			with chk.guard(label):
				write_race_files(root)
				if jobs != JOBS[0]:
					# cold: in HDD mode the reader, not a worker, reads them
					cool([p for p in digests if digests[p]["type"] == "f"])
				want = truth(root, Truth(hashes=[]))
				for p, r in want.items():
					for d in lib.DIGESTS:
						r[d] = digests[p][d] if p not in raced else None
				db = top + b"/race-%s-j%s.db" % (mode.encode(), jobs.encode())
				res, t0, t1 = scan(db, root, margs + ["-j", jobs], preload=lib.SHIM)
				now = truth(root, Truth(hashes=[], btime=False))
				check_run(chk, label, res, rc=1)
				check_shim_work(chk, label, root, now)
				for p in raced:
					r = want[p]
					r["error"] = ERR_CHANGED
					for k in ("size", "blocks", "mtime_ns", "ctime_ns"):
						r[k] = OneOf(r[k], now[p][k])
				check_rows(chk, label, db, root, want, find_count(root), t0, t1)
				scans = lib.scan_rows(db)
				chk.eq("%s: scan.errors" % label, scans[0]["errors"] if scans else None,
				       len(RACE))


def check_shim_work(chk, label, root, now):
	"""The shim modified and truncated the race files (compare() holds the others)."""
	bad = []
	for name, size in RACE.items():
		p = root + b"/r/" + name
		r = now[p]
		if name.startswith(b"fidx-race-modify"):
			with open(p, "rb") as f:
				same = f.read() == race_content(name, size)
			if r["size"] != size or r["mtime_ns"] == OLD_NS or same:
				bad.append((name, "not modified", r["size"], r["mtime_ns"]))
		elif r["size"] != size // 2:
			bad.append((name, "not truncated to half", r["size"]))
	chk.ok("%s: the shim modified and truncated the race files" % label, not bad,
	       lib.short(bad))


def check_hdd_stream(chk, top, rng):
	"""2,000 files with --io=hdd -j3 under strace: right, counted, one stream."""
	root = build_hdd(top, rng)
	# cold, so that every file goes to the reader, not to the workers that
	# hash cached files; written back, so that FIEMAP knows where each is
	# (and before the truth: placing a file on disk may change its blocks)
	files = [root + b"/d%d/f%04d" % (i % HDD_DIRS, i) for i in range(HDD_FILES)]
	cool(files)
	lib.settle(root)
	want = truth(root)
	nfind = find_count(root)
	cool(files)  # the truth read them back in
	chk.ok("hdd: the files are out of the page cache before the scan",
	       cached_share(files) == 0, "%.1f%% cached" % (100 * cached_share(files)))
	db = top + b"/hdd.db"
	log = top + b"/hdd.strace"
	env = dict(os.environ)
	# LeakSanitizer cannot stop the world of a traced process
	env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "detect_leaks=0"]))
	t0 = time.time_ns()
	p = subprocess.run(["strace", "-f", "-qq", "-y", "-e", "signal=none",
			    "-e", "trace=read,pread64,readv,preadv,preadv2", "-o", log,
			    lib.FIDX, "scan", "-q", "--io=hdd", "-j", "3", "--hash", ALL,
			    "-o", db, root], stdin=subprocess.DEVNULL, capture_output=True,
			   env=env, timeout=300)
	t1 = time.time_ns()
	label = "hdd 2000 files -j3 (strace)"
	chk.ok("%s: exit 0" % label, p.returncode == 0, "rc %d, stderr %s" %
	       (p.returncode, lib.short(p.stderr)))
	check_rows(chk, label, db, root, want, nfind, t0, t1)
	runs = []
	with open(log, "rb") as f:
		for line in f:
			m = READ_CALL.match(line)
			if m and m.group(1).startswith(root + b"/") and \
			   (not runs or runs[-1] != m.group(1)):
				runs.append(m.group(1))
	files = [q for q in files if want[q]["size"] > 0]
	seen = set(runs)
	chk.ok("%s: strace saw fidx read the files" % label,
	       all(q in seen for q in files),
	       "reads seen of %d of %d non-empty files" % (len(seen & set(files)), len(files)))
	split = sorted(q for q, n in collections.Counter(runs).items() if n > 1)
	chk.ok("%s: the reads of two files never interleave (one stream)" % label, not split,
	       "%d files read in several stretches, e.g. %s" % (len(split), lib.short(split[:3])))
	# one window of files (fewer than the reader's 8,192), so one order for all
	order = [q for q in dict.fromkeys(runs) if q in want]
	keys = disk_keys(order)
	late = [(order[i], order[i + 1]) for i in range(len(order) - 1) if keys[i] > keys[i + 1]]
	chk.ok("%s: files read in on-disk order (FIEMAP's first extent, else inode)" % label,
	       not late, "%d of %d files read before one placed earlier, e.g. %s" % (
		       len(late), len(order), lib.short(late[:2])))


PROGRESS_DRAW_RE = re.compile(rb"\r[^\r]*?\x1b\[K")
PROGRESS_RE = re.compile(rb"(\d+)/(\d+)\+? files hashed, ([\d.]+) (B|KiB|MiB|GiB)/")


def check_progress_within_file(chk, label, res):
	"""
	The progress line moves within one huge file: while its only file is
	not yet hashed, several redraws show growing byte counts, and an ETA.
	"""
	unit = {b"B": 1, b"KiB": 1 << 10, b"MiB": 1 << 20, b"GiB": 1 << 30}
	within = []
	eta = False
	for line in res.err.split(b"\r"):
		m = PROGRESS_RE.search(line)
		if not m or m.group(1) != b"0" or m.group(2) != b"1":
			continue
		within.append(float(m.group(3)) * unit[m.group(4)])
		eta = eta or b"ETA " in line
	moving = [b for b in within if 0 < b < BIG_SIZE]
	chk.ok("%s: progress shows bytes within the file" % label,
	       len(set(moving)) >= 3 and moving == sorted(moving),
	       "%d redraws inside the file, values %r" % (len(within), sorted(set(moving))[:8]))
	chk.ok("%s: progress gives an ETA within the file" % label, eta, res.err[-300:])


def check_big(chk, top):
	"""The file over 4 GiB in hdd and ssd mode."""
	root = top + b"/big"
	os.mkdir(root)
	path = root + b"/big.sparse"
	lib.sparse(path, BIG_SIZE, BIG_PIECES)
	cool([path])  # placed on disk first (that may change its blocks), and cold
	lib.settle(root)
	want = truth(root, Truth(hashes=[]))
	sums = {}
	th = threading.Thread(target=lib.sparse_digests,
			      args=(BIG_SIZE, BIG_PIECES, ["sha256", "xxh128"], sums))
	th.start()
	first = True
	# HDD first, cold, so that the reader reads it, not a worker; then SSD,
	# whose streamer reads it cached or not (reading 4 GiB of holes cold
	# costs seconds of page zeroing)
	for mode in ("hdd", "ssd"):
		label = "4 GiB + 3 MiB + 7 %s" % mode
		db = top + b"/big-%s.db" % mode.encode()
		res, t0, t1 = scan(db, root, ["--io=" + mode, "--progress"], hashes="sha256,xxh128",
				   timeout=BIG_TIMEOUT)
		print("# %s: scan took %.1f s" % (label, res.elapsed), flush=True)
		check_progress_within_file(chk, label, res)
		res.err = PROGRESS_DRAW_RE.sub(b"", res.err)  # anything else must not be there
		if first:
			th.join()
			chk.ok("4 GiB: ground truth computed", set(sums) == {"sha256", "xxh128"},
			       repr(sums))
			want[path].update(sums)
			first = False
		check_run(chk, label, res)
		got, _ = lib.db_rows(db, 1)
		chk.eq("%s: size" % label, got.get(path, {}).get("size"), BIG_SIZE)
		check_rows(chk, label, db, root, want, find_count(root), t0, t1)


def check_usage(chk, top, root):
	"""Bad values of --io and an argument to --drop-cache: usage errors."""
	for bad, option, value in ((["--io=bad"], b"--io", b"bad"), (["--io="], b"--io", None),
				   (["--io=ssd,hdd"], b"--io", b"ssd,hdd"),
				   (["--drop-cache=yes"], b"--drop-cache", None),
				   (["--io"], b"--io", None)):
		db = top + b"/usage.db"
		# a lone --io goes last, or it would take the root as its value
		args = ["scan", "-o", db, root] + bad if bad == ["--io"] else \
			["scan"] + bad + ["-o", db, root]
		res = run_fidx(*args)
		label = "usage %s" % " ".join(bad)
		lib.check_fatal(chk, label, res, mention=option)
		if value is not None:
			chk.ok("%s: the error names the value" % label, value in res.err,
			       lib.short(res.err))
		chk.ok("%s: no database created" % label, not os.path.exists(db), "it exists")


def main():
	chk = Checker()
	if not lib.SHIM or not os.path.exists(lib.SHIM):
		chk.ok("race shim built", False, "FIDX_SHIM=%r does not exist" % lib.SHIM)
		chk.done()
	rng = random.Random(4)
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		for name, fn in (("main", check_main), ("races", check_races),
				 ("hdd stream", check_hdd_stream)):
			t = time.monotonic()
			with chk.guard(name):
				fn(chk, top, rng)
			print("# %s: %.1f s" % (name, time.monotonic() - t), flush=True)
		t = time.monotonic()
		if lib.is_tsan():
			# 20 s there: one file, read by the same reader and hashers as main's 33 MiB
			chk.skip("4 GiB", "TSan build: the normal and ASan builds read it; main's large"
				 " files take the same threads")
		else:
			with chk.guard("4 GiB"):
				check_big(chk, top)
		print("# 4 GiB: %.1f s" % (time.monotonic() - t), flush=True)
		with chk.guard("usage"):
			check_usage(chk, top, top + b"/race")
	chk.done()


if __name__ == "__main__":
	main()
