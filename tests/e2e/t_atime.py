#!/usr/bin/python3
"""t_atime.py - which access times a scan moves, and which it records.

Every statement of README's "Access times" paragraph and of the ACCESS
TIMES section of man/fidx.1 is checked here, as root (skipped otherwise).

A tree holds every kind of entry a scan treats apart: directories (one owned
by nobody), regular files (one with two names, one empty, one nobody may not
read, one owned by nobody), symlinks (to a file, dangling, one owned by
nobody, one with two names: a hard link of the symlink itself, two in a
loop), a FIFO and a socket.  Before each run, every entry gets an atime ten
days in the past with os.utime (its mtime kept, its ctime now newer), so
that relatime too would update it on the next access.  After the run,
os.lstat of every entry gives its atime (and its mtime and ctime, which must
never move); the set of entries whose atime moved must be exactly the one
the documentation names:

  relatime, root       the symlinks only (readlink), with the default hash,
                       --hash none, --no-stat, --follow, for a PATH that is
                       a symlink (and that link), for `fidx check` and `fidx
                       dupes PATH` (which reads the two copies of a file);
                       a second scan soon after moves nothing (relatime's
                       rule)
  strictatime, root    the symlinks, again on a second scan
  relatime, nobody     the symlinks, the directories it lists that it does
                       not own, the files it reads that it does not own (the
                       readable non-empty ones; with --hash none or
                       --no-stat none), with `fidx check` and `fidx dupes
                       PATH` too
  noatime, read-only   nothing, as root (--follow too) and as nobody
  ext4 image           mounted -o ro,noload,loop: nothing, as root and as
                       nobody, and the image's bytes stay as they were

The strictatime, noatime and read-only cases scan a bind mount of the tree
made in the test's folder (mount --bind, then mount -o remount,bind,...),
which TempDir.cleanup unmounts.  A normal mount is the folder's own (relatime
on most systems; when it is not, the cases that need it are skipped).  The
image case is skipped where mkfs.ext4 or loop devices are missing.

Also, for every scan: the atime fidx recorded for each entry is the one
before the run (each entry is stat'ed before it is read), but for what the
documentation excepts: a name of an inode another name of which was read
first (the symlink with two names; as nobody, the file with two names) may
record an atime those reads gave it (at most the one after: under strictatime
each read moves it again, a tick of the coarse clock apart on a loaded
machine); with --follow a followed link records its target's
atime and a link in a loop may record one that following the other link
moved; --no-stat records none.
"""

import os
import re
import socket
import subprocess
import time

import lib
from lib import Checker, run_fidx, write

DAY_NS = 86_400 * 10**9
NOBODY = lib.NOBODY


def build(top):
	"""The tree of the header; returns (root, every path in it, relative, '' for the root)."""
	root = top + b"/tree"
	os.makedirs(root + b"/sub")
	os.makedirs(root + b"/mine")
	os.makedirs(root + b"/loops")
	write(root + b"/file", b"root's, readable by all")
	os.link(root + b"/file", root + b"/hardfile")
	write(root + b"/sub/deep", b"root's, readable by all")  # a duplicate, for dupes
	write(root + b"/empty", b"")
	write(root + b"/secret", b"root's, for root only", mode=0o600)
	write(root + b"/mine/own", b"nobody's")
	os.chown(root + b"/mine/own", NOBODY, NOBODY)
	os.chown(root + b"/mine", NOBODY, NOBODY)
	os.symlink(b"file", root + b"/link")
	os.symlink(b"/nonexistent", root + b"/dangling")
	os.symlink(b"own", root + b"/mine/ownlink")
	os.lchown(root + b"/mine/ownlink", NOBODY, NOBODY)
	os.symlink(b"file", root + b"/twice1")
	os.link(root + b"/twice1", root + b"/twice2", follow_symlinks=False)
	os.symlink(b"l2", root + b"/loops/l1")
	os.symlink(b"l1", root + b"/loops/l2")
	os.mkfifo(root + b"/fifo")
	s = socket.socket(socket.AF_UNIX)
	try:
		s.bind(os.fsdecode(root + b"/sock"))
	finally:
		s.close()
	rels = [b""]
	for dirpath, dirs, files in os.walk(root):
		for n in dirs + files:
			rels.append(os.path.relpath(os.path.join(dirpath, n), root))
	return root, sorted(rels)


SYMLINKS = {b"link", b"dangling", b"mine/ownlink", b"twice1", b"twice2", b"loops/l1",
	    b"loops/l2"}
TWICE = (b"twice1", b"twice2")
HARDFILE = (b"file", b"hardfile")
LOOPS = (b"loops/l1", b"loops/l2")
# What nobody reads that it does not own: the directories it lists, the
# files with content it may read.
NOBODY_DIRS = {b"", b"sub", b"loops"}
NOBODY_FILES = {b"file", b"hardfile", b"sub/deep"}
# A followed link's target (the entry whose metadata --follow records).
TARGETS = {b"link": b"file", b"mine/ownlink": b"mine/own", b"twice1": b"file",
	   b"twice2": b"file"}
MOVED_BY_NOBODY = SYMLINKS | NOBODY_DIRS | NOBODY_FILES


def at(root, rel):
	"""The path of rel below root (rel itself when absolute)."""
	if rel.startswith(b"/"):
		return rel
	return root + b"/" + rel if rel else root


def age(root, rels):
	"""Gives every entry an atime ten days old, its mtime kept (its ctime becomes now)."""
	old = time.time_ns() - 10 * DAY_NS
	for rel in rels:
		p = at(root, rel)
		os.utime(p, ns=(old, os.lstat(p).st_mtime_ns), follow_symlinks=False)


def times(root, rels):
	"""{rel: (atime, mtime, ctime)} by os.lstat, which moves none of them."""
	out = {}
	for rel in rels:
		st = os.lstat(at(root, rel))
		out[rel] = (st.st_atime_ns, st.st_mtime_ns, st.st_ctime_ns)
	return out


def show(rels):
	"""A set of relative paths for a message."""
	return sorted(os.path.basename(r).decode(errors="replace") if r.startswith(b"/") else
		      r.decode(errors="replace") or "." for r in rels)


def recorded_atimes(db, scan_root, rels):
	"""{rel: atime_ns} of the newest scan in db of the entries below scan_root."""
	scan_id = lib.scan_rows(db)[-1]["id"]
	rows, _ = lib.db_rows(db, scan_id)
	return {rel: rows[at(scan_root, rel)]["atime_ns"] for rel in rels
		if at(scan_root, rel) in rows}


def check_recorded(chk, label, rec, before, after, follow=False, no_stat=False,
		   other_user=False):
	"""
	The recorded atimes are those before the run, but for the documented
	exceptions: a name of an inode another name of which was read (the
	symlink with two names; as another user, the file with two names) may
	record an atime the run gave it (from the one before to the one after:
	under strictatime each read through either name moves it), at least one
	name of the symlink the one before;
	with --follow, a followed link records its target's, a link in a loop
	either.
	"""
	if no_stat:
		chk.ok("%s: no atime recorded (--no-stat)" % label,
		       rec and all(v is None for v in rec.values()), lib.short(rec))
		return
	bad = []
	for rel, got in rec.items():
		if follow and rel in TARGETS:
			ok = got == before[TARGETS[rel]][0]
		elif rel in TWICE or (other_user and rel in HARDFILE) or (follow and rel in LOOPS):
			# Moved by a read through the other name, maybe again by a later one
			# (strictatime: each readlink moves it, a coarse clock tick apart): a
			# time of the run, from the one before to the one after.
			ok = got is not None and before[rel][0] <= got <= after[rel][0]
		else:
			ok = got == before[rel][0]
		if not ok:
			bad.append((rel, got, before[rel][0]))
	if not follow:
		first = [rec.get(r) == before[r][0] for r in TWICE]
		if not any(first):
			bad.append(("neither name of the twice-linked symlink records the atime before",
				    [rec.get(r) for r in TWICE]))
	chk.ok("%s: every recorded atime is the one before the run%s" %
	       (label, " (a followed link: its target's)" if follow else ""),
	       len(rec) == sum(1 for r in before if not r.startswith(b"/")) and not bad,
	       "%d of %d entries recorded; differ (entry, recorded, before): %s" %
	       (len(rec), len(before), lib.short(bad[:4])))


def run_case(chk, label, cmd, src, rels, moves, uid=None, scan_root=None, db=None,
	     fresh=True, follow=False, no_stat=False):
	"""
	Ages the tree (unless fresh is False), runs fidx with cmd as uid, and
	checks that exactly the entries of moves had their atime moved, that no
	mtime or ctime moved, and (when db is given) the atimes recorded for the
	entries below scan_root.  An absolute path in moves is an entry outside
	the tree, aged and checked too.
	"""
	watched = rels + sorted(m for m in moves if m.startswith(b"/"))
	if fresh:
		age(src, watched)
	time.sleep(0.05)  # the run's accesses fall in another tick of the coarse clock
	before = times(src, watched)
	res = run_fidx(*cmd, uid=uid)
	after = times(src, watched)
	# scan: 0, or 1 for nobody's errors; check: AIDE's codes, at most 7 for changes
	chk.ok("%s: ran (no fatal error)" % label, 0 <= res.rc <= 7 and res.rc != 2 and
	       not res.timed_out, repr(res))
	moved = {r for r in watched if after[r][0] != before[r][0]}
	chk.eq("%s: the atimes that moved" % label, show(moved), show(moves))
	went_back = {r for r in moved if after[r][0] < before[r][0]}
	chk.eq("%s: none moved backwards" % label, show(went_back), [])
	other = {r for r in watched if after[r][1:] != before[r][1:]}
	chk.eq("%s: no mtime or ctime moved" % label, show(other), [])
	if db is not None:
		check_recorded(chk, label, recorded_atimes(db, scan_root, rels), before, after,
			       follow=follow, no_stat=no_stat, other_user=uid is not None)


def atime_mode(path):
	"""How the mount holding path updates atimes: ro, noatime, relatime or strictatime."""
	path = os.path.realpath(path)
	best, opts = b"", []
	with open("/proc/self/mountinfo", "rb") as f:
		for line in f:
			fields = line.split(b" ")
			mp = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), fields[4])
			mp = os.path.realpath(mp)
			if (path == mp or path.startswith(mp.rstrip(b"/") + b"/")) and len(mp) >= len(best):
				sep = fields.index(b"-")
				best, opts = mp, fields[5].split(b",") + fields[sep + 3].strip().split(b",")
	for mode in (b"ro", b"noatime", b"relatime"):
		if mode in opts:
			return mode.decode()
	return "strictatime"


def bind(chk, td, src, where, option):
	"""
	Bind-mounts src at where, then remounts it with option (ro, noatime,
	strictatime).  Returns False, the case skipped, where mounts are refused.
	"""
	os.mkdir(where)
	p = subprocess.run(["mount", "--bind", src, where], capture_output=True)
	if p.returncode != 0:
		chk.skip("%s bind mount" % option, "mount --bind refused: %s" % p.stderr[-200:])
		return False
	td.mounts.append(where)
	subprocess.run(["mount", "-o", "remount,bind," + option, where], check=True)
	return True


def sha256_of(path):
	"""The SHA-256 of a file's bytes, read without moving its atime."""
	fd = os.open(path, os.O_RDONLY | os.O_NOATIME)
	try:
		return lib.hash_fd(fd, ["sha256"])["sha256"]
	finally:
		os.close(fd)


def image_case(chk, td, top, scan):
	"""
	The tree in an ext4 image, mounted as the documentation says
	(mount -o ro,noload,loop): no atime moves, as root or as nobody, and the
	image's bytes are those before the mount.
	"""
	img, mnt = top + b"/disk.img", top + b"/image"
	os.mkdir(mnt)
	with open(img, "wb") as f:
		f.truncate(16 << 20)
	made = subprocess.run(["mkfs.ext4", "-q", "-F", img], capture_output=True)
	if made.returncode != 0:
		chk.skip("ext4 image", "mkfs.ext4 failed: %s" % made.stderr[-200:])
		return
	rw = subprocess.run(["mount", "-o", "loop", img, mnt], capture_output=True)
	if rw.returncode != 0:
		chk.skip("ext4 image", "no loop mount here: %s" % rw.stderr[-200:])
		return
	try:
		iroot, irels = build(mnt)
		age(iroot, irels)
	finally:
		subprocess.run(["umount", mnt], check=True)
	sealed = sha256_of(img)
	subprocess.run(["mount", "-o", "ro,noload,loop", img, mnt], check=True)
	td.mounts.append(mnt)
	chk.eq("ext4 image: mount -o ro,noload,loop mounts it read-only", atime_mode(mnt), "ro")
	scan("ext4 image, root", iroot, moves=set(), tree=(iroot, irels), fresh=False)
	scan("ext4 image, root, --follow", iroot, "--follow", moves=set(), tree=(iroot, irels),
	     fresh=False, follow=True)
	scan("ext4 image, nobody", iroot, moves=set(), uid=NOBODY, tree=(iroot, irels), fresh=False)
	subprocess.run(["umount", mnt], check=True)
	td.mounts.remove(mnt)
	chk.ok("ext4 image: its bytes unchanged by the mount, the scans and the unmount",
	       sha256_of(img) == sealed, "the image changed")


def main():
	chk = Checker()
	if os.geteuid() != 0:
		chk.skip("access times", "not root: neither mounts nor another user")
		chk.done()
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		os.chmod(top, 0o755)
		src, rels = build(top)
		dbdir = top + b"/db"
		os.mkdir(dbdir)
		os.chown(dbdir, NOBODY, NOBODY)
		n = [0]

		def db_for(label):
			"""A new database path for one run."""
			n[0] += 1
			return dbdir + b"/%d.db" % n[0]

		def scan(label, root, *args, moves, uid=None, tree=(src, rels), **kw):
			"""A scan of root (tree, or a mount of it) with args, checked by run_case."""
			db = db_for(label)
			with chk.guard(label):
				run_case(chk, label, ["scan", "-q", "-o", db, *args, root], tree[0], tree[1],
					 moves, uid=uid, scan_root=root, db=db, **kw)
			return db

		mode = atime_mode(src)
		if mode not in ("relatime", "strictatime"):
			chk.skip("the folder's own mount", "it is %s: nothing can move there" % mode)
		else:
			label = "%s, root" % mode
			db = scan(label, src, moves=SYMLINKS)
			scan(label + ", --hash none", src, "--hash", "none", moves=SYMLINKS)
			scan(label + ", --no-stat", src, "--no-stat", moves=SYMLINKS, no_stat=True)
			scan(label + ", --follow", src, "--follow", moves=SYMLINKS, follow=True)
			with chk.guard(label + ", fidx check"):
				run_case(chk, label + ", fidx check", ["check", "-q", db, src], src, rels,
					 SYMLINKS)
			with chk.guard(label + ", fidx dupes PATH"):
				run_case(chk, label + ", fidx dupes PATH", ["dupes", src], src, rels,
					 SYMLINKS)
			if mode == "relatime":
				scan(label + ", a second scan", src, moves=set(), fresh=False)
			rootlink = top + b"/rootlink"
			os.symlink(src, rootlink)
			scan(label + ", a PATH that is a symlink", rootlink, moves=SYMLINKS | {rootlink})
			scan("%s, nobody" % mode, src, moves=MOVED_BY_NOBODY, uid=NOBODY)
			scan("%s, nobody, --hash none" % mode, src, "--hash", "none",
			     moves=SYMLINKS | NOBODY_DIRS, uid=NOBODY)
			scan("%s, nobody, --no-stat" % mode, src, "--no-stat",
			     moves=SYMLINKS | NOBODY_DIRS, uid=NOBODY, no_stat=True)
			with chk.guard("%s, nobody, fidx check" % mode):
				run_case(chk, "%s, nobody, fidx check" % mode, ["check", "-q", db, src], src,
					 rels, MOVED_BY_NOBODY, uid=NOBODY)
			with chk.guard("%s, nobody, fidx dupes PATH" % mode):
				run_case(chk, "%s, nobody, fidx dupes PATH" % mode, ["dupes", src], src, rels,
					 MOVED_BY_NOBODY, uid=NOBODY)

		strict = top + b"/strict"
		with chk.guard("strictatime bind mount"):
			if bind(chk, td, src, strict, "strictatime"):
				chk.eq("strictatime bind mount: mounted so", atime_mode(strict), "strictatime")
				scan("strictatime, root", strict, moves=SYMLINKS)
				scan("strictatime, root, a second scan", strict, moves=SYMLINKS,
				     fresh=False)

		for option in ("noatime", "ro"):
			where = top + b"/" + option.encode()
			with chk.guard("%s bind mount" % option):
				if not bind(chk, td, src, where, option):
					continue
				chk.eq("%s bind mount: mounted so" % option, atime_mode(where), option)
				scan("%s, root" % option, where, moves=set())
				scan("%s, root, --follow" % option, where, "--follow", moves=set(),
				     follow=True)
				scan("%s, nobody" % option, where, moves=set(), uid=NOBODY)

		with chk.guard("ext4 image"):
			image_case(chk, td, top, scan)
	chk.done()


if __name__ == "__main__":
	main()
