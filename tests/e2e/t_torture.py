#!/usr/bin/python3
"""t_torture.py - writers killed at random moments leave the database sound and the tree whole.

A seeded random tree (about 1,500 files: small ones, some of a few MiB,
copies, hard links, symlinks) gets a complete scan 1; then, again and again,
one writing command chosen at random is started and killed with SIGKILL
after a random delay within its usual duration:

    fidx scan (a rescan, its digests reused)      fidx scan --rehash -j 2
    fidx scan --resume (when the newest scan was cut short)
    fidx check --update                           fidx dupes (keeps digests)
    fidx dupes --link --keep first (hard links the copies in the tree)

After every kill: PRAGMA integrity_check says ok; every scan that was
complete before the kill is byte for byte as it was (its scan row and every
file row); `fidx verify` finds every complete scan intact; every file of the
tree still holds its bytes (a kill during --link never loses or changes a
name's content; a .fidx-link-* name left by a kill between the link and the
exchange, or the exchange and the removal, must hold the bytes of a name of
the tree, as dedupe.h says: it is noted and removed).  At the end a scan
is killed part way and resumed to the end, and the resumed scan equals a clean
scan of the same tree, column by column.

    FIDX_TORTURE_KILLS     kills at most (default 12; `make torture`: 400)
    FIDX_TORTURE_SECONDS   and at most this long (default 40; `make torture`: 1800)
    FIDX_TORTURE_SEED      the random seed (default: from the time; printed)
"""

import hashlib
import os
import random
import signal
import subprocess
import time

import lib
from lib import Checker, run_fidx, write

# The columns a resumed scan must share with a clean one (not the times a read moves).
SAME = ("type", "size", "mode", "uid", "gid", "nlink", "ino", "mtime_ns", "link_target", "md5",
	"sha1", "sha256", "sha512", "xxh128", "error")


def setting(name, default):
	"""A positive integer from the environment."""
	v = os.environ.get(name, "")
	return int(v) if v.isdigit() and int(v) > 0 else default


def build(root, rng):
	"""The random tree of the header; returns {path: sha256 of its bytes} of its files."""
	dirs = [root]
	for i in range(40):
		d = rng.choice(dirs) + b"/d%02d" % i
		os.makedirs(d)
		dirs.append(d)
	blobs = []
	for i in range(1500):
		d = rng.choice(dirs)
		p = d + b"/f%04d" % i
		r = rng.random()
		if blobs and r < 0.1:
			data = rng.choice(blobs)                    # a copy
		elif r < 0.12:
			data = os.urandom(rng.randint(1, 3) << 20)  # a few MiB
		else:
			data = os.urandom(rng.randint(0, 8192))
		write(p, data)
		if len(data) > 512 and len(blobs) < 200:
			blobs.append(data)
	files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
	for i in range(20):
		src = rng.choice(files)
		os.link(src, os.path.dirname(src) + b"/h%02d" % i)
	for i in range(10):
		os.symlink(b"f%04d" % rng.randrange(1500), rng.choice(dirs) + b"/l%02d" % i)
	lib.settle(root)
	return contents(root)


def contents(root):
	"""{path: sha256} of every regular file under root (symlinks not followed)."""
	out = {}
	for d, _, fs in os.walk(root):
		for f in fs:
			p = os.path.join(d, f)
			if os.path.isfile(p) and not os.path.islink(p):
				with open(p, "rb") as fh:
					out[p] = hashlib.sha256(fh.read()).hexdigest()
	return out


def complete_scans(db):
	"""The ids of the complete scans."""
	return [s["id"] for s in lib.scan_rows(db) if s["status"] == "complete"]


def fingerprint(db, ids):
	"""A digest of the scan rows and every file row of scans ids, as stored."""
	con = lib.connect(db)
	try:
		h = hashlib.sha256()
		for sid in ids:
			for table, col in (("scan", "id"), ("file", "scan_id")):
				for row in con.execute("SELECT * FROM %s WHERE %s = ? ORDER BY rowid" % (
						table, col), (sid,)):
					h.update(repr(row).encode())
		return h.hexdigest()
	finally:
		con.close()


def timed(args):
	"""Runs fidx to the end; returns its duration in seconds and its exit status."""
	t0 = time.monotonic()
	res = run_fidx(*args, timeout=300)
	return time.monotonic() - t0, res.rc


def kill_after(args, delay):
	"""Starts fidx with args and SIGKILLs it after delay seconds (unless done); returns its status."""
	p = subprocess.Popen([lib.FIDX] + list(args), stdin=subprocess.DEVNULL,
			     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
	try:
		return p.wait(timeout=delay)
	except subprocess.TimeoutExpired:
		p.send_signal(signal.SIGKILL)
		return p.wait()


def main():
	chk = Checker()
	kills = setting("FIDX_TORTURE_KILLS", 12)
	seconds = setting("FIDX_TORTURE_SECONDS", 40)
	seed = setting("FIDX_TORTURE_SEED", int(time.time()))
	print("# seed %d (FIDX_TORTURE_SEED), at most %d kills in %d s" % (seed, kills, seconds))
	rng = random.Random(seed)
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		root = top + b"/tree"
		want = build(root, rng)
		db = top + b"/t.db"
		res = run_fidx("scan", "-q", "-o", db, root, timeout=300)
		chk.ok("scan 1 complete", res.rc == 0, repr(res))
		ops = {
			"scan": ["scan", "-q", "--db", db, root],
			"scan --rehash": ["scan", "-q", "--rehash", "-j", "2", "--db", db, root],
			"scan --resume": ["scan", "-q", "--resume", "--db", db],
			"check --update": ["check", "-q", "--update", db, root],
			"dupes": ["dupes", db],
			"dupes --link": ["dupes", "--link", "--keep", "first", db],
		}
		# The exit statuses of a run to the end (check: AIDE's bits of what changed).
		fine = {"scan": (0, 1), "scan --rehash": (0, 1), "scan --resume": (0, 1),
			"check --update": tuple(range(8)), "dupes": (0, 1)}
		usual = {}
		done, problems, start = 0, [], time.monotonic()
		while done < kills and time.monotonic() - start < seconds:
			scans = lib.scan_rows(db)
			cut = scans and scans[-1]["status"] != "complete"
			name = rng.choice([n for n in ops if n != "scan --resume" or cut])
			if name not in usual:  # how long it takes, once, on a copy
				copy = top + b"/timing.db"
				subprocess.run(["cp", db, copy], check=True)
				args = [copy if a == db else a for a in ops[name]]
				usual[name], rc = timed(args) if name != "dupes --link" else (0.3, 0)
				os.unlink(copy)
				if name in fine and rc not in fine[name]:
					problems.append("%s run to the end: exit %d" % (name, rc))
			before = complete_scans(db)
			print_before = fingerprint(db, before)
			delay = rng.uniform(0, max(usual[name], 0.05) * 1.2)
			status = kill_after(ops[name], delay)
			done += 1
			what = "%s killed after %.3f s (exit %s)" % (name, delay, status)
			if lib.integrity(db) != "ok":
				problems.append(what + ": integrity_check: " + lib.integrity(db))
			if fingerprint(db, before) != print_before:
				problems.append(what + ": a complete scan changed")
			v = run_fidx("verify", db, timeout=300)
			if v.rc != 0:
				problems.append(what + ": verify exit %d: %s" % (v.rc, lib.short(v.out + v.err)))
			now = contents(root)
			lost = [p for p in want if now.get(p) != want[p]]
			if lost:
				problems.append(what + ": %d names lost or changed, e.g. %r" % (len(lost), lost[0]))
			left = [p for p in now if b".fidx-link-" in p]
			wanted = set(want.values())
			for p in left:
				if now[p] not in wanted:
					problems.append(what + ": left behind %r, bytes of no name" % p)
				else:
					print("# %s: left %r (a copy's bytes), removed" % (what, p))
					os.unlink(p)
		print("# %d kills in %.1f s" % (done, time.monotonic() - start))
		chk.ok("%d kills: integrity, complete scans unchanged, verify intact, the tree whole" %
		       done, done > 0 and not problems, "; ".join(problems[:5]))

		# A scan cut short and resumed to the end equals a clean scan of the same tree.
		# A kill may come before the scan has its row (a slow start: a sanitizer build)
		# or after it ended: then the newest scan would be an older one, made before a
		# dupes --link changed the tree, so kill again until a new scan is cut short.
		# The kill comes within the middle of a whole run's duration, measured once.
		rescan = ["scan", "-q", "--rehash", "-j", "1", "--db", db, root]
		whole, _ = timed(rescan)
		cut = False
		for _ in range(10):
			made = len(lib.scan_rows(db))
			kill_after(rescan, rng.uniform(0.2, 0.8) * whole)
			scans = lib.scan_rows(db)
			if len(scans) > made and scans[-1]["status"] != "complete":
				cut = True
				break
		if not cut:  # never cut: the newest scan is still one of this tree as it is
			print("# no kill cut a scan short in 10 tries; a complete scan compared")
			run_fidx(*rescan, timeout=300)
		while lib.scan_rows(db)[-1]["status"] != "complete":
			res = run_fidx("scan", "-q", "--resume", "--db", db, timeout=300)
			if res.rc not in (0, 1):
				chk.ok("resume to the end", False, repr(res))
				break
		clean = top + b"/clean.db"
		run_fidx("scan", "-q", "-o", clean, root, timeout=300)
		a, _ = lib.db_rows(db, lib.scan_rows(db)[-1]["id"])
		b, _ = lib.db_rows(clean, 1)
		diff = [p for p in set(a) | set(b)
			if p not in a or p not in b or any(a[p][c] != b[p][c] for c in SAME)]
		chk.ok("the scan cut short and resumed equals a clean scan (%d entries)" % len(b),
		       not diff and len(a) == len(b), lib.short(sorted(diff)[:5]))
	chk.done()


if __name__ == "__main__":
	main()
