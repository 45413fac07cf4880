#!/usr/bin/python3
# e2e: alone (tests/e2e/run): it relies on timestamp ticks and interrupts scans mid-run.
# e2e: tsan (tests/e2e/run --marked tsan): digests reused by the hashing stage; scans resumed.
"""t_rescan.py - incremental rescans (digests reused) and `fidx scan --resume`.

Incremental: a tree is scanned, then changed the ways a disk changes (a file
added, removed, renamed, truncated, appended to, chmod'ed, chown'ed,
rewritten with its size and mtime restored so that only ctime shows it,
replaced by a symlink, given a second hard link), and scanned again.  The
ground truth is the OS: os.lstat snapshots taken after each scan say which
regular files still have the device, inode, size, mtime and ctime of the
first scan, and whose mtime and ctime were older than the first scan's start
by more than their granularity (a file written just before it is read again,
though unchanged: a change after the read might not have moved its times).
Exactly those take their digests from scan 1 (file.digests_from = 1,
scan.reused), every other file is read (scan.hashed), and every digest
equals hashlib's.  Under strace, the rescan opens for reading exactly the
files whose metadata changed.  --rehash reads all; a scan asking for a digest
the earlier scan lacks reads all; a `--hash none` scan in between does not
make the next hashed scan read all.

Resume: a slow scan (sparse files, -j1, SHA-512) is interrupted by SIGINT
and killed by SIGKILL; `fidx scan --resume` (with and without the PATH)
continues the same scan row, keeps what it had, and ends with exactly the
rows of a full scan (compared column by column with lib.truth), each path
once.  Refused with one line: nothing to resume (newest scan complete, no
database: none is created), a scan whose writer is still alive, options
that would change the scan's content.  The resumed scan keeps its own
options (--hash md5 and the --exclude patterns of the first run, one of them
not UTF-8, so that it must come back byte for byte from scan.options).  Two
roots resumed together each keep their own rows (and the base scan of the
first run); of two --resume started at once one is refused; `fidx dupes`
digests of dropped rows go with them; --resume --errors lists the errors of
the first run too.
"""

import concurrent.futures
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import lib
from lib import Checker, run_fidx, write

SLOW_FILES = 6
SLOW_SIZE = 512 << 20
SETTLE_S = 0.25  # longer than the 0.1 s a fine timestamp must be older than a scan


def settled(v, started_ns):
	"""Whether snapshot values v are old enough, at a scan's start, for a later change
	to move them: 2 s before it for a time in whole seconds (1 or 2 s timestamps),
	0.1 s for a finer one."""
	return all(t < started_ns - (2000000000 if t % 1000000000 == 0 else 100000000)
		   for t in v[3:5])


def snapshot(root):
	"""{path: (dev, ino, size, mtime_ns, ctime_ns)} of every regular file under root."""
	out = {}
	for d, _, names in os.walk(root):
		for n in names:
			p = os.path.join(d, n)
			st = os.lstat(p)
			if (st.st_mode & 0o170000) == 0o100000:
				out[p] = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
	return out


def unchanged(before, after):
	"""The paths of after whose file (by inode) has the metadata it had in before."""
	old = {v[:2]: v for v in before.values()}
	return {p for p, v in after.items() if old.get(v[:2]) == v}


def sha256(path):
	"""hashlib's SHA-256 of a file."""
	import hashlib
	with open(path, "rb") as f:
		return hashlib.sha256(f.read()).digest()


def scan(db, root, *opts):
	"""Runs fidx scan; returns the result."""
	return run_fidx("scan", "-q", "--db", db, *opts, root)


def scan_row(db, scan_id):
	"""The scan row as a dict (reused, hashed, base_scan_id included)."""
	con = lib.connect(db)
	try:
		cur = con.execute("SELECT * FROM scan WHERE id = ?", (scan_id,))
		names = [c[0] for c in cur.description]
		r = cur.fetchone()
		return dict(zip(names, r)) if r else None
	finally:
		con.close()


def files(db, scan_id):
	"""{path: (sha256, digests_from, md5)} of the regular files of a scan."""
	con = lib.connect(db)
	try:
		return {p: (h, f, m) for p, h, f, m in con.execute(
			"SELECT path, sha256, digests_from, md5 FROM file WHERE scan_id = ? AND type = 'f'",
			(scan_id,))}
	finally:
		con.close()


def build(root):
	"""The tree of the incremental test: 40 files, a subfolder, nasty names."""
	os.makedirs(root + b"/sub/deep")
	for i in range(30):
		write(root + b"/f%02d" % i, b"content %d\n" % i * (i + 1))
	for n in (b"new\nline", b"bad\xff\xfe", b"-dash", b"sp ace"):
		write(root + b"/sub/" + n, b"nasty " + n)
	for i in range(6):
		write(root + b"/sub/deep/d%d" % i, b"deep %d" % i)
	write(root + b"/empty")
	os.link(root + b"/f00", root + b"/sub/hardlink-of-f00")
	os.symlink(b"f01", root + b"/link")
	lib.settle(root)


def mutate(root):
	"""Changes the tree the ways of the header; returns the paths meant to change."""
	time.sleep(0.05)  # past the timestamp granularity of the first scan's stat
	changed = []
	write(root + b"/added", b"a new file")
	os.unlink(root + b"/f02")
	os.rename(root + b"/f03", root + b"/sub/f03-renamed")
	os.truncate(root + b"/f04", 3)
	with open(root + b"/f05", "ab") as f:
		f.write(b"appended")
	os.chmod(root + b"/f06", 0o600)
	os.chown(root + b"/f07", 1, 1)
	# Same size, mtime restored: only ctime tells.
	st = os.stat(root + b"/f08")
	with open(root + b"/f08", "r+b") as f:
		f.write(b"X")
	os.utime(root + b"/f08", ns=(st.st_atime_ns, st.st_mtime_ns))
	os.unlink(root + b"/f09")
	os.symlink(b"f10", root + b"/f09")
	os.link(root + b"/f11", root + b"/sub/second-name-of-f11")
	with open(root + b"/sub/new\nline", "ab") as f:
		f.write(b"!")
	changed += [b"/added", b"/sub/f03-renamed", b"/f04", b"/f05", b"/f06", b"/f07", b"/f08",
		    b"/f11", b"/sub/second-name-of-f11", b"/sub/new\nline"]
	lib.settle(root)
	return [root + c for c in changed]


def openat_reads(log, root):
	"""The paths under root opened without O_DIRECTORY, from strace -xx output."""
	out = set()
	for line in open(log, "rb"):
		m = re.search(rb'openat\([^,]+, "((?:\\x[0-9a-f]{2})*)", ([A-Z_|]+)', line)
		if not m or b"O_DIRECTORY" in m.group(2) or b"= -1" in line:
			continue
		path = bytes(int(h, 16) for h in re.findall(rb"\\x([0-9a-f]{2})", m.group(1)))
		if path.startswith(root + b"/"):
			out.add(path)
	return out


def check_incremental(chk, top):
	"""Scan, change, rescan: exactly the changed files are read."""
	root = top + b"/tree"
	db = top + b"/inc.db"
	build(root)
	time.sleep(SETTLE_S)
	write(root + b"/racy", b"written just before the first scan")
	res = scan(db, root)
	chk.ok("first scan: exit 0", res.rc == 0, repr(res))
	snap1 = snapshot(root)
	meant = mutate(root)
	time.sleep(SETTLE_S)
	snap2 = snapshot(root)
	same = unchanged(snap1, snap2)
	chk.ok("the test's changes all show in ctime or inode (precondition)",
	       not [p for p in meant if p in same], lib.short([p for p in meant if p in same]))
	chk.ok("the file written just before the first scan is unchanged (precondition)",
	       root + b"/racy" in same)
	started = scan_row(db, 1)["started_ns"]
	same = {p for p in same if settled(snap2[p], started)}

	res = scan(db, root)
	chk.ok("rescan: exit 0", res.rc == 0, repr(res))
	nums = lib.summary_numbers(res.out)
	s = scan_row(db, 2)
	want_read = set(snap2) - same
	chk.eq("rescan: scan.reused counts the unchanged files", s["reused"], len(same))
	chk.eq("rescan: scan.hashed counts the changed and new files", s["hashed"], len(want_read))
	chk.eq("rescan: scan.base_scan_id names scan 1", s["base_scan_id"], 1)
	res = run_fidx("scans", "--json", "--scan", "2", db)
	js = [json.loads(l) for l in res.out.splitlines()]
	chk.ok("rescan: fidx scans --json gives hashed, reused and base_scan_id",
	       len(js) == 1 and (js[0]["hashed"], js[0]["reused"], js[0]["base_scan_id"]) ==
	       (len(want_read), len(same), 1), lib.short(res.out))
	chk.ok("rescan: the summary gives both counts", len(same) in nums and len(want_read) in nums,
	       lib.short(res.out))
	got = files(db, 2)
	chk.eq("rescan: file.digests_from = 1 exactly for the unchanged files",
	       {p for p, v in got.items() if v[1] == 1}, same)
	chk.eq("rescan: file.digests_from NULL for the files read",
	       {p for p, v in got.items() if v[1] is None}, want_read)
	bad = [p for p in snap2 if got.get(p, (None,))[0] != sha256(p)]
	chk.ok("rescan: every SHA-256 is the content's (hashlib)", not bad, lib.short(bad[:3]))
	chk.ok("rescan: the file rewritten with size and mtime restored was read again",
	       got.get(root + b"/f08", (None, 1))[1] is None)
	if settled(snap2[root + b"/racy"], started):
		chk.skip("rescan: the file written just before the first scan was read again",
			 "the first scan started more than 0.1 s after it was written (slow start)")
	else:
		chk.ok("rescan: the file written just before the first scan was read again",
		       got.get(root + b"/racy", (None, 1))[1] is None)

	# Under strace: only the changed files are opened.
	with open(root + b"/f12", "ab") as f:
		f.write(b"+")
	with open(root + b"/sub/bad\xff\xfe", "ab") as f:
		f.write(b"+")
	lib.settle(root)
	time.sleep(SETTLE_S)
	snap3 = snapshot(root)
	want_open = set(snap3) - unchanged(snap2, snap3)
	log = top + b"/strace.log"
	if shutil.which("strace"):
		# LeakSanitizer cannot run under ptrace: an ASan build checks leaks in the other runs.
		env = dict(os.environ, ASAN_OPTIONS=":".join(filter(None, [
			os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"])))
		p = subprocess.run(["strace", "-f", "-qq", "-xx", "-e", "trace=openat", "-e",
				    "signal=none", "-o", log, lib.FIDX, "scan", "-q", "--db", db, root],
				   stdin=subprocess.DEVNULL, capture_output=True, timeout=120, env=env)
		chk.ok("third scan under strace: exit 0", p.returncode == 0, lib.short(p.stderr))
		opened = openat_reads(log, root)
		chk.eq("third scan opens exactly the two changed files", opened, want_open)
		chk.eq("third scan: scan.hashed", scan_row(db, 3)["hashed"], len(want_open))
		chk.eq("third scan: digests reused from scan 2, or from scan 1 through it",
		       {v[1] for p, v in files(db, 3).items() if p not in want_open},
		       {1, 2} if len(same) else {2})
	else:
		chk.skip("third scan under strace", "strace is not installed")
		scan(db, root)

	res = scan(db, root, "--rehash")
	s = scan_row(db, 4)
	chk.ok("--rehash: every file read, none reused",
	       res.rc == 0 and s["hashed"] == len(snap3) and s["reused"] == 0, repr(s))
	chk.ok("--rehash: no base scan recorded", s["base_scan_id"] is None, repr(s))

	res = scan(db, root, "--hash", "md5,sha256")
	s = scan_row(db, 5)
	chk.ok("--hash md5,sha256 after sha256 scans: every file read (no MD5 to reuse)",
	       res.rc == 0 and s["hashed"] == len(snap3) and s["reused"] == 0, repr(s))
	scan(db, root, "--hash", "none")
	res = scan(db, root, "--hash", "md5")
	s = scan_row(db, 7)
	chk.ok("--hash md5 after a --hash none scan: MD5 reused from scan 5, nothing read",
	       res.rc == 0 and s["hashed"] == 0 and s["reused"] == len(snap3) and
	       s["base_scan_id"] == 5, repr(s))
	m = files(db, 7)
	import hashlib
	bad = [p for p in snap3 if m[p][2] != hashlib.md5(open(p, "rb").read()).digest()]
	chk.ok("--hash md5: the reused MD5s are the content's", not bad, lib.short(bad[:3]))


GAP = 2.0  # seconds between an interrupted run and its --resume


def start_slow(db, root, *opts):
	"""Starts a slow scan; returns the process once its scan row is in db."""
	return lib.start_scan(db, *opts, root, settle=0.4)


def build_slow(top):
	"""Small files, sparse big ones (seconds of SHA-512 at -j1), files to exclude."""
	root = top + b"/slow"
	os.makedirs(root + b"/small")
	for i in range(40):
		write(root + b"/small/%02d" % i, b"small %d" % i)
		write(root + b"/small/%02d.skip" % i, b"excluded %d" % i)
	for i in range(SLOW_FILES):
		lib.sparse(root + b"/big%d" % i, SLOW_SIZE, [(SLOW_SIZE - 1, b"!")])
	write(root + b"/small/odd\nname\xff", b"nasty")
	write(root + b"/small/latin1-\xfe", b"excluded by a pattern that is not UTF-8")
	lib.settle(root)
	return root


def check_resumed(chk, label, db, root, scan_id, opts):
	"""The resumed scan: complete, same id, exactly the rows of a full scan."""
	scans = lib.scan_rows(db)
	chk.eq("%s: still one scan row" % label, [s["id"] for s in scans], [scan_id])
	got, dups = lib.db_rows(db, scan_id)
	want = lib.truth(root, opts)
	lib.compare(chk, label, got, dups, want)
	lib.check_scan_row(chk, label, scans[0], root, want)
	s = scan_row(db, scan_id)
	nfiles = sum(1 for r in want.values() if r["type"] == "f")
	chk.eq("%s: scan.hashed counts every file once" % label, s["hashed"], nfiles)
	chk.eq("%s: integrity_check" % label, lib.integrity(db), "ok")


def check_resume(chk, top):
	"""SIGINT and SIGKILL, then --resume."""
	root = build_slow(top)
	opts = lib.Truth(hashes=("md5",),
			 skip=lambda rel, name: name.endswith(b".skip") or name.endswith(b"\xfe"))
	for sig in (signal.SIGINT, signal.SIGKILL):
		label = "resume after %s" % signal.Signals(sig).name
		db = top + b"/%s.db" % signal.Signals(sig).name.encode()
		p = start_slow(db, root, "--hash", "md5", "--exclude", "*.skip", "--exclude", b"*\xfe")
		if not chk.ok("%s: the scan was still running when signalled" % label,
			      p.poll() is None, "it ended first: make the slow tree slower"):
			continue
		os.killpg(p.pid, sig) if sig == signal.SIGKILL else p.send_signal(sig)
		p.communicate(timeout=60)
		before = lib.scan_rows(db)[0]
		chk.eq("%s: the scan is left %s" % (label, "running" if sig == signal.SIGKILL
						      else "interrupted"),
		       before["status"], "running" if sig == signal.SIGKILL else "interrupted")
		kept, _ = lib.db_rows(db, 1)
		args = ["--resume"] if sig == signal.SIGINT else ["--resume", root]
		time.sleep(GAP)  # idle between the runs: not part of the scan's run time
		res = run_fidx("scan", "-q", "--db", db, *args, timeout=300)
		chk.ok("%s: exit 0" % label, res.rc == 0, repr(res))
		check_resumed(chk, label, db, root, 1, opts)
		con = lib.connect(db)
		run, started, finished = con.execute(
			"SELECT run_ns, started_ns, finished_ns FROM scan WHERE id = 1").fetchone()
		con.close()
		chk.ok("%s: run_ns leaves out the %g s between the runs" % (label, GAP),
		       run is not None and 0 < run <= finished - started - GAP * 10**9,
		       "run_ns %r, end - start %d" % (run, finished - started))
		if sig == signal.SIGINT:
			chk.ok("%s: run_ns at least the resumed run's own time" % label,
			       run is not None and run >= 0.5 * res.elapsed * 10**9,
			       "run_ns %r, resumed run %.2f s" % (run, res.elapsed))
		res = run_fidx("scans", "--json", db)
		o = json.loads(res.out.split(b"\n")[0])
		chk.eq("%s: fidx scans shows run_ns as the duration" % label,
		       o["duration_s"], round(run / 1e9, 3) if run is not None else None)
		after, _ = lib.db_rows(db, 1)
		kept_ok = [p for p, r in kept.items() if r["error"] is None and after.get(p) != r]
		chk.ok("%s: the rows recorded before are kept as they were" % label, not kept_ok,
		       lib.short(kept_ok[:3]))
		res = run_fidx("scan", "-q", "--db", db, "--resume", root)
		lib.check_fatal(chk, "%s: --resume again (now complete)" % label, res, b"complete")

	# A scan whose writer still runs (a fidx scanning elsewhere stands for
	# it) is not taken over, whatever the row's status says; a pid now
	# taken by another program (this Python) is not its writer.
	db = top + b"/SIGINT.db"
	slow = top + b"/alive-writer"
	os.makedirs(slow)
	lib.sparse(slow + b"/big", 1 << 30, [(1, b"!")])
	other = lib.start_scan(top + b"/alive-writer.db", "--hash", "sha512", slow)
	try:
		for status, word in (("running", b"still writing"), ("interrupted", b"taking up")):
			con = lib.connect(db)
			con.execute("UPDATE scan SET status = ?, pid = ?, host = ?",
				    (status, other.pid, socket.gethostname()))
			con.commit()
			con.close()
			res = run_fidx("scan", "-q", "--db", db, "--resume")
			lib.check_fatal(chk, "--resume of a scan (%s) whose process is alive" % status,
					res, word)
	finally:
		os.killpg(other.pid, signal.SIGKILL)
		other.communicate()
	con = lib.connect(db)
	con.execute("UPDATE scan SET status = 'running', pid = ?, host = ?",
		    (os.getpid(), socket.gethostname()))
	con.commit()
	con.close()
	res = run_fidx("scans", db)
	chk.ok("a 'running' scan whose pid another program took: fidx scans shows it dead",
	       b" dead " in res.out, repr(res))

	missing = top + b"/none.db"
	res = run_fidx("scan", "-q", "--db", missing, "--resume", root)
	lib.check_fatal(chk, "--resume without a database", res, b"nothing to resume")
	chk.ok("--resume without a database creates none", not os.path.exists(missing))
	res = run_fidx("scan", "-q", "--db", missing, "--resume")
	lib.check_fatal(chk, "--resume without a database or PATH", res, b"nothing to resume")
	res = run_fidx("scan", "-q", "--db", db, "--resume", "--hash", "sha1")
	lib.check_fatal(chk, "--resume --hash", res, b"--resume")
	res = run_fidx("scan", "-q", "--db", db, "--resume", top)
	lib.check_fatal(chk, "--resume of a PATH never scanned", res,
			b"nothing to resume: database '%s' holds no scan of '%s'" % (db, top))


def digest_rows(db):
	"""[(file_id, path of that file row, None when gone)] of table file_digest."""
	con = lib.connect(db)
	try:
		return con.execute("SELECT d.file_id, f.path FROM file_digest d"
				   " LEFT JOIN file f ON f.id = d.file_id").fetchall()
	finally:
		con.close()


def check_resume_two_roots(chk, top):
	"""
	`fidx scan SLOW SMALL` interrupted, then `--resume --rehash SLOW SMALL`
	twice at once: one resumes, the other is refused before it writes
	anything; each scan keeps its own rows, and SMALL's, whose files were
	taken from an earlier complete scan before the interruption, keeps naming
	that scan.  `fidx dupes` run
	on the interrupted scan keeps digests of files it left unfinished
	(file_digest): the resume drops those with the rows, so that no digest
	ends up naming another file (a new row may take a dropped row's id).
	"""
	slow, small = top + b"/two-slow", top + b"/two-small"
	os.makedirs(slow)
	for i in range(2):  # same size, different last byte: dupes reads only their edges
		lib.sparse(slow + b"/big%d" % i, SLOW_SIZE, [(SLOW_SIZE - 1, b"!?"[i:i + 1])])
	os.makedirs(small + b"/sub")
	for i in range(5):
		write(small + b"/sub/s%d" % i, b"small %d" % i)
	lib.settle(slow)
	lib.settle(small)
	time.sleep(SETTLE_S)
	db = top + b"/two.db"
	res = scan(db, small, "--hash", "md5")
	chk.ok("two roots: a complete scan of the small root first (scan 1)", res.rc == 0, repr(res))
	p = start_slow(db, small, "--hash", "md5", slow)
	if not chk.ok("two roots: the scan was still running when signalled", p.poll() is None,
		      "it ended first: make the slow tree slower"):
		return
	p.send_signal(signal.SIGINT)
	p.communicate(timeout=60)
	kept = {r["id"]: len(lib.db_rows(db, r["id"])[0]) for r in lib.scan_rows(db)}
	chk.ok("two roots: the small root has rows kept from the first run", kept.get(3),
	       repr(kept))
	res = run_fidx("dupes", "--scan", "2", db)
	chk.ok("two roots: fidx dupes on the interrupted scan", res.rc in (0, 1), repr(res))
	digest_of = dict(digest_rows(db))
	chk.ok("two roots: dupes kept digests of the interrupted scan's files", digest_of,
	       repr(digest_of))
	write(slow + b"/new", b"created before the resume")
	with concurrent.futures.ThreadPoolExecutor(2) as pool:
		runs = list(pool.map(lambda _: run_fidx("scan", "-q", "--db", db, "--resume",
							"--rehash", slow, small, timeout=300),
				     range(2)))
	runs.sort(key=lambda r: r.rc)
	chk.ok("two roots: two --resume at once: one exits 0", runs[0].rc == 0, repr(runs[0]))
	lib.check_fatal(chk, "two roots: two --resume at once: the other", runs[1])
	opts = lib.Truth(hashes=("md5",))
	for scan_id, root in ((2, slow), (3, small)):
		label = "two roots: resumed scan %d" % scan_id
		got, dups = lib.db_rows(db, scan_id)
		want = lib.truth(root, opts)
		if root == slow:  # its row is the first run's, from before "new" was made in it
			want[slow]["mtime_ns"] = want[slow]["ctime_ns"] = lib.ANY
		lib.compare(chk, label, got, dups, want)
		lib.check_scan_row(chk, label, lib.scan_rows(db)[scan_id - 1], root, want)
	moved = [(i, digest_of.get(i), p) for i, p in digest_rows(db) if digest_of.get(i) != p]
	chk.ok("two roots: each file_digest row still names the file it was read from", not moved,
	       lib.short(moved))
	s = scan_row(db, 3)
	chk.ok("two roots: the small root's files reused from scan 1, which it still names",
	       (s["reused"], s["hashed"], s["base_scan_id"]) == (5, 0, 1), repr(s))


def check_resume_errors(chk, top):
	"""--resume --errors lists the errors the first run recorded too, as the row counts them."""
	root = top + b"/loop"
	os.makedirs(root)
	lib.sparse(root + b"/big", SLOW_SIZE, [(SLOW_SIZE - 1, b"!")])
	os.symlink(b".", root + b"/to-itself")
	lib.settle(root)
	db = top + b"/loop.db"
	p = start_slow(db, root, "--follow", "--hash", "sha512")
	if not chk.ok("--errors: the scan was still running when signalled", p.poll() is None,
		      "it ended first: make the slow tree slower"):
		return
	p.send_signal(signal.SIGINT)
	p.communicate(timeout=60)
	kept = {p: r["error"] for p, r in lib.db_rows(db, 1)[0].items() if r["error"]}
	chk.ok("--errors: the first run recorded the loop", root + b"/to-itself" in kept,
	       repr(kept))
	res = run_fidx("scan", "-q", "--db", db, "--resume", "--errors", timeout=300)
	listed = [l for l in res.out_lines() if l.startswith(root + b"/")]
	chk.ok("--resume --errors: exit 1, the loop's error listed", res.rc == 1 and listed == [
		b"%s: %s" % (root + b"/to-itself", kept[root + b"/to-itself"].encode())], repr(res))
	chk.eq("--resume --errors: the summary counts it", lib.scan_rows(db)[0]["errors"], 1)


def scan_paths(db, scan_id):
	"""The paths of scan_id's rows in db."""
	con = lib.connect(db)
	try:
		return [r[0] for r in con.execute("SELECT path FROM file WHERE scan_id = ?",
						  (scan_id,))]
	finally:
		con.close()


def check_own_database(chk, top):
	"""
	A tree that holds the database being written (`cd d; fidx scan .`): its
	files are left out, the scan row says so, the scan exits 0, and diff and
	check come back clean (the folder's times, which the database's -wal and
	-shm move, are not a change); by inode with --follow, by path with --no-stat;
	the same through a symlinked or bind-mounted root (--no-stat: by name and
	inode), and with check's scratch database in a folder of the tree.
	"""
	root = top + b"/withdb"
	os.makedirs(root + b"/sub")
	write(root + b"/a", b"alpha")
	db = root + b"/fidx.db"
	own = {db + x for x in (b"", b"-wal", b"-shm", b"-journal")}
	for run in (1, 2):
		res = run_fidx("scan", "-q", ".", cwd=root)
		chk.eq("database inside the tree, scan %d: exit 0, nothing on stderr" % run,
		       (res.rc, res.err), (0, b""))
		got, _ = lib.db_rows(db, run)
		chk.eq("scan %d: no row of the database, its -wal, -shm or -journal" % run,
		       sorted(p for p in got if p in own), [])
		chk.eq("scan %d: every other entry recorded" % run, sorted(got),
		       [root, root + b"/a", root + b"/sub"])
		chk.eq("scan %d: the other file read" % run, got[root + b"/a"]["sha256"],
		       sha256(root + b"/a"))
		con = lib.connect(db)
		opts = json.loads(con.execute("SELECT options FROM scan WHERE id = ?",
					      (run,)).fetchone()[0])
		con.close()
		chk.eq("scan %d: the scan row's options name the database left out" % run,
		       opts.get("database"), os.fsdecode(db))
	res = run_fidx("diff", cwd=root)
	chk.eq("database inside the tree: fidx diff of the two scans: identical, exit 0",
	       (res.rc, res.out), (0, b""))
	for args, label in (([], "check"), (["--update"], "check --update")):
		res = run_fidx("check", *args, cwd=root)
		chk.eq("database inside the tree: fidx %s: identical, exit 0" % label,
		       (res.rc, res.out), (0, b""))
	write(root + b"/new", b"new")
	res = run_fidx("check", cwd=root)
	chk.eq("database inside the tree: a file added beside it is still found (exit 1)",
	       (res.rc, res.out), (1, b"added   +++++++++++++++ " + root + b"/new\n"))
	chk.eq("database inside the tree: integrity_check", lib.integrity(db), "ok")

	# Reached through a link (--follow-all, the database being outside the tree: by inode)
	# and with --no-stat (by path).
	other = top + b"/elsewhere.db"
	os.symlink(other, root + b"/link-to-db")
	res = run_fidx("scan", "-q", "--follow-all", "--db", other, root)
	got, _ = lib.db_rows(other, 1)
	chk.ok("--follow-all: the database reached through a link is left out",
	       res.rc == 0 and root + b"/link-to-db" not in got and root + b"/a" in got,
	       "rc=%d %s" % (res.rc, lib.short(sorted(got))))
	res = run_fidx("scan", "-q", "--no-stat", ".", cwd=root)
	con = lib.connect(db)
	paths = [r[0] for r in con.execute("SELECT path FROM file WHERE scan_id ="
					   " (SELECT max(id) FROM scan)")]
	con.close()
	chk.ok("--no-stat: the database left out by its path",
	       res.rc == 0 and not own & set(paths) and root + b"/a" in paths,
	       "rc=%d %s" % (res.rc, lib.short(sorted(paths))))

	# The root given through a symlink or a bind mount: the walk's paths are
	# not the database's own; it is still left out (by inode; by name and
	# inode with --no-stat), and its folder's times are still not a change.
	os.symlink(b"withdb", top + b"/via-link")
	ways = [(b"via-link", "a symlinked root")]
	try:
		os.mkdir(top + b"/via-bind")
		subprocess.run(["mount", "--bind", root, top + b"/via-bind"], check=True,
			       stderr=subprocess.DEVNULL)
		ways.append((b"via-bind", "a bind-mounted root"))
	except (OSError, subprocess.CalledProcessError):
		chk.skip("a bind-mounted root", "cannot bind-mount here")
	try:
		for name, label in ways:
			for args in ([], ["--no-stat"]):
				tag = "%s%s" % (label, " --no-stat" if args else "")
				# the database in the tree, named by its own path, not the walk's
				inner = root + b"/via.db"
				for run in (1, 2):
					res = run_fidx("scan", "-q", *args, "-o", inner, top + b"/" + name)
					paths = scan_paths(inner, run) if res.rc == 0 else []
					chk.ok("%s, scan %d: exit 0, no row of its database, -wal or -shm" %
					       (tag, run), res.rc == 0 and not [p for p in paths
					       if os.path.basename(p).startswith(b"via.db")] and
					       top + b"/" + name + b"/a" in paths,
					       "rc=%d %s %s" % (res.rc, res.err[-300:], lib.short(sorted(paths))))
					time.sleep(0.05)
				res = run_fidx("diff", "--db", inner)
				chk.eq("%s: fidx diff: identical (the folder's times are the database's)" %
				       tag, (res.rc, res.out), (0, b""))
				res = run_fidx("check", "--db", inner)
				chk.eq("%s: fidx check: identical" % tag, (res.rc, res.out), (0, b""))
				for f in (inner, inner + b"-wal", inner + b"-shm"):
					if os.path.exists(f):
						os.unlink(f)
	finally:
		if len(ways) > 1:
			subprocess.run(["umount", top + b"/via-bind"])

	# check's scratch database in a folder of the tree (TMPDIR inside it).
	scratch = root + b"/sub"
	res = run_fidx("scan", "-q", ".", cwd=root)
	chk.eq("a baseline with times for check: exit 0", res.rc, 0)
	for run in (1, 2):
		res = run_fidx("check", "-v", cwd=root, env={"TMPDIR": os.fsdecode(scratch)})
		chk.eq("check with TMPDIR inside the tree, run %d: identical (the scratch"
		       " database's folder times are not a change)" % run, (res.rc, res.out), (0, b""))
		time.sleep(0.05)

	# The same root given twice, or spelled twice, is one scan.
	twice = top + b"/twice.db"
	res = run_fidx("scan", "-q", "--db", twice, "withdb", "./withdb", "withdb/", top + b"/withdb",
		       cwd=top)
	chk.eq("the same root given four ways: one scan, exit 0",
	       (res.rc, [s["root"] for s in lib.scan_rows(twice)]), (0, [root]))


def main():
	chk = Checker()
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		# On the TSan build, a single root's resume and --resume --errors take the threads of
		# the two roots' resume (at five times its cost), a scan of its own database none of
		# its own.
		tsan_skips = {"resume", "own database", "resume --errors"} if lib.is_tsan() else set()
		for name, fn in (("incremental rescans", check_incremental), ("resume", check_resume),
				 ("own database", check_own_database),
				 ("resume of two roots", check_resume_two_roots),
				 ("resume --errors", check_resume_errors)):
			if name in tsan_skips:
				chk.skip(name, "TSan build: run on the normal and ASan builds")
				continue
			t = time.monotonic()
			with chk.guard(name):
				fn(chk, top)
			print("# %s: %.1f s" % (name, time.monotonic() - t), flush=True)
	chk.done()


if __name__ == "__main__":
	main()
