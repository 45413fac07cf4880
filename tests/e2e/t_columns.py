#!/usr/bin/python3
"""t_columns.py - every column of every row of a hostile tree, against the truth.

The tree holds names with newlines, tabs, leading dashes, spaces and invalid
UTF-8, a path longer than PATH_MAX (40 levels of 200-byte names, made with
dir_fd chaining), a directory of 20,000 entries (mostly empty files: where
the filesystem is mounted with 'discard', removing files with data is slow),
symlinks of every kind (to a file, to a directory, absolute, dangling, a loop
pair, a self loop, odd target bytes), a FIFO, a socket, character and block devices, hard links,
empty, 1-byte, page-sized, multi-MiB and sparse files, setuid and sticky
modes, foreign owners and timestamps before 1970 and after 2100.  It is
scanned with all five digests with -j1 and again with -j4 into the same
database; both scans must equal the ground truth of lib.truth() column by
column, and their scan rows must count it right.  Separately: the atimes of
the files (unchanged by a scan), the atimes of fresh directories (unchanged
too), and the views file_view and data.  (A sparse file over 4 GiB is
t_hashio.py's, scanned in both read modes.)
"""

import os
import socket
import stat
import subprocess
import time

import lib
from lib import Checker, Truth, compare, run_fidx, truth, write

ALL = "md5,sha1,sha256,sha512,xxh128"
NAMES = [b"new\nline", b"\nleading-newline", b"tab\tname", b"-dash", b"--", b"-n",
	 b" lead space", b"trail space ", b"inv\xff\xfeutf8", b"\x80", b"caf\xc3\xa9.txt",
	 b"back\\slash", b"quote\"'", b".bashrc", b"a.tar.gz", b"x.", b"noext",
	 b"\x01ctrl\x7f", b"%s%n%d", b"*?[x]", b"..dots", b"...", b"\xe2\x80\xae rtl",
	 b"semi;colon|pipe", b"\x1b[31mred", b"emoji\xf0\x9f\x98\x80.\xff", b"n" * 255]
BIG_DIR_ENTRIES = 20000
DEEP_LEVELS = 40


def build_names(root):
	"""names/: one file per hostile name, a dotted directory, a directory with a newline."""
	d = root + b"/names"
	os.mkdir(d)
	for n in NAMES:
		write(d + b"/" + n, n)
	os.mkdir(d + b"/dir.with.dot")
	os.mkdir(d + b"/new\ndir")
	write(d + b"/new\ndir/-inside\t", b"inside")


def build_deep(root):
	"""40 levels of 200-byte names (over 8 KiB of path), by dir_fd chaining."""
	os.mkdir(root + b"/deep")
	fd = os.open(root + b"/deep", os.O_RDONLY | os.O_DIRECTORY)
	for i in range(DEEP_LEVELS):
		n = b"%02d" % i + b"d" * 198
		os.mkdir(n, dir_fd=fd)
		sub = os.open(n, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
		os.close(fd)
		fd = sub
	f = os.open(b"bottom.txt", os.O_WRONLY | os.O_CREAT, 0o640, dir_fd=fd)
	os.write(f, b"at the bottom\n")
	os.close(f)
	os.symlink(b"bottom.txt", b"bottom.lnk", dir_fd=fd)
	os.mkfifo(b"bottom.fifo", dir_fd=fd)
	os.close(fd)


def build_big_dir(root):
	"""20,000 entries; mostly empty files, which are quick to make and remove."""
	d = root + b"/big"
	os.mkdir(d)
	for i in range(BIG_DIR_ENTRIES):
		n = b"%05d" % i + (b".e" if i % 7 == 0 else b"")
		fd = os.open(d + b"/" + n, os.O_WRONLY | os.O_CREAT, 0o644)
		if i % 500 == 0:
			os.write(fd, n)
		os.close(fd)


def build_files(root):
	"""files/: sizes around page and chunk edges, sparse files, hard links, odd
	modes, owners and times."""
	d = root + b"/files"
	os.mkdir(d)
	write(d + b"/empty")
	write(d + b"/one", b"1")
	write(d + b"/page", os.urandom(4096))
	write(d + b"/page+1", os.urandom(4097))
	write(d + b"/mib+1.bin", os.urandom((1 << 20) + 1))
	write(d + b"/three.mib", os.urandom(3 << 20))
	lib.sparse(d + b"/sparse", 16 << 20, [(8 << 20, b"x")])
	lib.sparse(d + b"/hole-only", 5 << 20)
	os.link(d + b"/one", d + b"/one.hard")
	os.link(d + b"/page", root + b"/names/page.hard2")
	write(d + b"/setuid", b"#!/bin/sh\n")
	os.chown(d + b"/setuid", 1234, 5678)
	os.chmod(d + b"/setuid", 0o4755)
	write(d + b"/no-perms", b"secret")
	os.chmod(d + b"/no-perms", 0)
	os.mkdir(d + b"/sticky")
	os.chmod(d + b"/sticky", 0o1777)
	write(d + b"/old", b"from 1969")
	os.utime(d + b"/old", ns=(7258118400_123456789, -1_500_000_001))
	write(d + b"/future", b"from 2200")
	os.utime(d + b"/future", ns=(1, 7258118400_987654321))


def build_links(root):
	"""links/: a symlink of every kind; none is followed without --follow."""
	d = root + b"/links"
	os.mkdir(d)
	os.symlink(b"../files/one", d + b"/to-file")
	os.symlink(b"../names", d + b"/to-dir")
	os.symlink(root + b"/files/page", d + b"/absolute")
	os.symlink(b"does-not-exist", d + b"/dangling")
	os.symlink(b"loop-b", d + b"/loop-a")
	os.symlink(b"loop-a", d + b"/loop-b")
	os.symlink(b"self", d + b"/self")
	os.symlink(b"we\nird\xff\t", d + b"/odd-target")
	os.symlink(b"../special/fifo", d + b"/to-fifo")
	os.symlink(b"a/" * 2000, d + b"/long-target")


def build_special(root):
	"""special/: FIFO, socket, devices; returns False if mknod was refused."""
	d = root + b"/special"
	os.mkdir(d)
	os.mkfifo(d + b"/fifo")
	s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	s.bind(d + b"/sock")
	s.close()
	made = True
	for n, kind, dev in ((b"/chr", stat.S_IFCHR, os.makedev(1, 3)),
			     (b"/blk", stat.S_IFBLK, os.makedev(7, 250))):
		try:
			os.mknod(d + n, kind | 0o600, dev)
		except PermissionError:
			made = False
	return made


def build(top):
	"""Builds the whole tree under top; returns (root, whether devices were made)."""
	root = top + b"/root.d"
	os.mkdir(root)
	build_names(root)
	build_deep(root)
	build_big_dir(root)
	build_files(root)
	build_links(root)
	devices = build_special(root)
	return root, devices


def find_paths(root):
	"""The paths find(1) lists (an independent check of the ground truth walk)."""
	p = subprocess.run([b"find", root, b"-print0"], capture_output=True, check=True)
	return set(p.stdout.split(b"\0")[:-1])


def check_scan(chk, label, db, scan_id, root, want, res, t0, t1):
	"""The checks of one scan of the main tree."""
	chk.ok("%s: exit 0, not hung on the FIFO" % label, res.rc == 0 and not res.timed_out,
	       repr(res))
	chk.ok("%s: nothing on stderr" % label, res.err == b"", lib.short(res.err))
	out = res.out_lines()
	chk.ok("%s: one summary line and the seal line on stdout" % label,
	       len(out) == 2 and lib.is_seal_line(out[1]), lib.short(res.out))
	nums = lib.summary_numbers(res.out)
	nfiles = sum(1 for r in want.values() if r["type"] == "f")
	chk.ok("%s: summary gives the entry and file counts" % label,
	       len(want) in nums and nfiles in nums,
	       "want %d entries and %d files in %s" % (len(want), nfiles, lib.short(res.out)))
	got, dups = lib.db_rows(db, scan_id)
	compare(chk, label, got, dups, want)
	scans = {s["id"]: s for s in lib.scan_rows(db)}
	s = scans.get(scan_id)
	if not chk.ok("%s: scan row %d exists" % (label, scan_id), s is not None, repr(scans)):
		return got
	lib.check_scan_row(chk, label, s, root, want, "complete", t0, t1)
	u = os.uname()
	chk.eq("%s: scan.host" % label, s["host"], socket.gethostname())
	chk.eq("%s: scan.kernel" % label, s["kernel"], u.release)
	chk.eq("%s: scan.arch" % label, s["arch"], u.machine)
	chk.ok("%s: scan.os names the system" % label, bool(s["os"]), repr(s["os"]))
	chk.eq("%s: scan.version" % label, s["version"], lib.makefile_version())
	return got


def check_db_shape(chk, db):
	"""Column types, pragmas and the two views."""
	con = lib.connect(db)
	try:
		one = lambda q: con.execute(q).fetchone()[0]
		chk.eq("db: path and name are TEXT",
		       one("SELECT count(*) FROM file WHERE typeof(path) != 'text' "
			   "OR typeof(name) != 'text'"), 0)
		chk.eq("db: digests are BLOB or NULL",
		       one("SELECT count(*) FROM file WHERE " + " OR ".join(
			       "typeof(%s) NOT IN ('blob', 'null')" % d for d in lib.DIGESTS)), 0)
		chk.ok("db: user_version is set", one("PRAGMA user_version") > 0,
		       "user_version %r" % one("PRAGMA user_version"))
		chk.eq("db: journal_mode", lib._txt(one("PRAGMA journal_mode")), "wal")
		chk.eq("db: integrity_check", lib.integrity(db), "ok")
		nfile = one("SELECT count(*) FROM file")
		chk.eq("db: file_view has one row per file row", one("SELECT count(*) FROM file_view"),
		       nfile)
		cols = [c[0] for c in con.execute("SELECT * FROM data LIMIT 0").description]
		chk.eq("db: data view columns", cols,
		       ["id", "full_path", "file_name", "file_extension", "hash_md5", "size_bytes",
			"date_creation", "date_last_modification"])
		# data mirrors the Go tool's table: one row per entry but directories, of
		# the newest complete scan of each root (t_gdback.py tests it whole)
		chk.eq("db: data has one row per non-directory row of the newest scan",
		       one("SELECT count(*) FROM data"),
		       one("SELECT count(*) FROM file WHERE type IS NOT 'd' AND scan_id IN"
			   " (SELECT max(id) FROM scan WHERE status = 'complete' GROUP BY root)"))
		chk.eq("db: data agrees with file (path, name, size, md5 hex)",
		       one("SELECT count(*) FROM data d JOIN file f ON f.id = d.id WHERE "
			   "d.full_path IS NOT f.path OR d.file_name IS NOT f.name OR "
			   "d.size_bytes IS NOT f.size OR "
			   "(f.md5 IS NULL AND coalesce(d.hash_md5, '') != '') OR "
			   "(f.md5 IS NOT NULL AND lower(d.hash_md5) IS NOT lower(hex(f.md5)))"), 0)
	finally:
		con.close()


def check_atimes(chk, root, before):
	"""No atime moved during the scans (the tree was settled, see lib.settle)."""
	after = truth(root, Truth(hashes=[], btime=False))
	files = {p for p, r in before.items() if r["type"] == "f"}
	moved = [p for p in files if after[p]["atime_ns"] != before[p]["atime_ns"]]
	chk.ok("file atimes unchanged by the scans", not moved,
	       "%d of %d moved, e.g. %s" % (len(moved), len(files), lib.short(sorted(moved)[:3])))
	others = [p for p in before if p not in files and p in after and
		  after[p]["atime_ns"] != before[p]["atime_ns"]]
	chk.ok("atimes of the other entries unchanged by the scans", not others,
	       "e.g. %s" % lib.short(others[:3]))


def check_dir_atimes(chk, top):
	"""A scan of fresh directories must not move their atimes (relatime would)."""
	root = top + b"/fresh"
	os.makedirs(root + b"/a/b/c")
	for d in (b"", b"/a", b"/a/b", b"/a/b/c"):
		write(root + d + b"/file", b"x")
	os.mkdir(top + b"/control")
	write(top + b"/control/file")
	time.sleep(0.05)
	c0 = os.lstat(top + b"/control").st_atime_ns
	os.listdir(top + b"/control")
	if os.lstat(top + b"/control").st_atime_ns == c0:
		chk.skip("directory atimes unchanged by a scan", "this filesystem does not move them")
		return
	before = truth(root, Truth(hashes=[], btime=False))
	res = run_fidx("scan", "-q", "--hash", "none", "-o", top + b"/fresh.db", root)
	after = truth(root, Truth(hashes=[], btime=False))
	moved = [p for p, r in before.items() if r["atime_ns"] != after[p]["atime_ns"]]
	chk.ok("directory atimes unchanged by a scan (O_NOATIME on directories)",
	       res.rc == 0 and not moved, "%r; moved: %s" % (res, lib.short(moved)))


def main():
	chk = Checker()
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		root, devices = build(top)
		if not devices:
			chk.skip("device nodes in the tree", "mknod not permitted")
		lib.settle(root)
		want = truth(root)
		chk.eq("ground truth: a path longer than PATH_MAX",
		       max(len(p) for p in want) > 4096, True)
		chk.ok("ground truth agrees with find(1)", find_paths(root) == set(want),
		       "symmetric difference %s" % lib.short(sorted(find_paths(root) ^ set(want))[:3]))
		db = top + b"/fidx.db"
		results = {}
		for sid, jobs in ((1, "1"), (2, "4")):
			label = "-j%s" % jobs
			with chk.guard(label + ": scan"):
				t0 = time.time_ns()
				res = run_fidx("scan", "-q", "-j", jobs, "--hash", ALL, "-o", db, root,
					       timeout=300)
				t1 = time.time_ns()
				results[sid] = check_scan(chk, label, db, sid, root, want, res, t0, t1)
		if len(results) == 2:
			a, b = results[1], results[2]
			same = set(a) == set(b) and all(a[p] == b[p] for p in a)
			chk.ok("-j1 and -j4 record the same rows", same,
			       "%d paths differ" % sum(1 for p in set(a) | set(b) if a.get(p) != b.get(p)))
		with chk.guard("database shape"):
			check_db_shape(chk, db)
		with chk.guard("atimes"):
			check_atimes(chk, root, want)
		with chk.guard("directory atimes"):
			check_dir_atimes(chk, top)
	chk.done()


if __name__ == "__main__":
	main()
