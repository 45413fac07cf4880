#!/usr/bin/python3
# e2e: alone (tests/e2e/run): it relies on timestamp ticks.
# e2e: tsan (tests/e2e/run --marked tsan): the scan inside check, beside its baseline.
"""t_check.py - fidx check: the live tree against its baseline scan.

The tree, the mutations and the expected report are t_diff.py's (a ground
truth from two lib.truth snapshots, not from the database).  After a
baseline scan and the mutations:

  * `fidx check DB ROOT` and `fidx check DB` report exactly the changes,
    with diff's exit bits, and the database is untouched: the same scan
    rows, the same bytes; no temporary database is left behind;
  * the file rewritten with its size and mtime restored shows content
    ('H') because every file is read again;
  * --ignore ctime, --json, -0 against the same ground truth;
  * --update records the live scan (one more scan row, every file read:
    reused 0), its counts line names the scan and its seal, and `fidx diff`
    of the two scans says the same; a check right after it finds nothing
    (exit 0, no output);
  * --trust-metadata --update: the new scan's `reused` count is the number
    of files whose device, inode, size, mtime and ctime are unchanged (from
    os.lstat), and a file rewritten in place is still caught (its ctime);
  * --update while another process holds the write lock, then commits and
    closes (which checkpoints and deletes the WAL if no process holds a lock
    on the database): the new scan is whole, complete and sealed;
  * errors with AIDE's codes: no baseline for a PATH, a missing PATH, a
    missing database, an unknown --ignore name;
  * SIGINT while a huge new file is read: exit 130 promptly, the temporary
    database removed, no scan added.
"""

import contextlib
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import time

import lib
import t_diff
from lib import Checker, TempDir, run_fidx, write


def db_state(db):
	"""The scan rows and a digest of the database file's bytes."""
	with open(db, "rb") as f:
		data = hashlib.sha256(f.read()).hexdigest()
	return lib.scan_rows(db), data


def scan_table(db):
	"""id -> (reused, hashed, base_scan_id) of every scan."""
	con = lib.connect(db)
	try:
		return {r[0]: r[1:] for r in con.execute("SELECT id, reused, hashed, base_scan_id"
							 " FROM scan")}
	finally:
		con.close()


def check_report(chk, top, fidx_db, root, before, after):
	"""check without --update: the report, nothing written, nothing left."""
	want = t_diff.expect(before, after, root, root)
	tmp = top + b"/tmpdir"
	os.mkdir(tmp)
	env = {"TMPDIR": os.fsdecode(tmp)}
	state = db_state(fidx_db)
	res = run_fidx("check", fidx_db, root, env=env)
	t_diff.check_report(chk, "check DB ROOT", res, want)
	chk.eq("check DB ROOT: exit 7", res.rc, 7)
	chk.ok("check: the counts on stderr", res.err.startswith(b"check of '%s' against scan 1: " %
								  root), repr(res.err))
	chk.ok("check: the database is untouched (scan rows, bytes)", db_state(fidx_db) == state,
	       "changed")
	chk.eq("check: no temporary database left in $TMPDIR", os.listdir(tmp), [])
	lines = set(res.out.split(b"\n"))
	chk.ok("check: a rewrite with size and mtime restored is caught (content read again)",
	       b"changed ......c...H.... " + root + b"/sneaky" in lines, "not reported")

	res = run_fidx("check", "--db", fidx_db, env=env)
	t_diff.check_report(chk, "check --db DB (root of the newest scan)", res, want)
	res = run_fidx("check", "-q", "--ignore", "ctime", fidx_db, root, env=env)
	t_diff.check_report(chk, "check --ignore ctime", res,
			    t_diff.expect(before, after, root, root, t_diff.DEFAULT - {"ctime"}))
	chk.eq("check -q: nothing on stderr", res.err, b"")
	res = run_fidx("check", "-0", fidx_db, root, env=env)
	t_diff.check_report(chk, "check -0", res, want, nul=True)
	dres = run_fidx("diff", "--json", "-v", fidx_db, "1", "1")
	chk.eq("diff of a scan with itself: nothing", (dres.rc, dres.out), (0, b""))
	res = run_fidx("check", "--json", fidx_db, root, env=env)
	got = [(o["kind"], t_diff.json_path(o, "path"), o.get("summary"))
	       for o in map(json.loads, filter(None, res.out.split(b"\n")))]
	exp = [(e["kind"], e["path"], e["summary"] if e["kind"] in ("changed", "moved") else None)
	       for e in want]
	chk.ok("check --json: kind, path, summary", got == exp, "got %s" % lib.short(got[:3]))
	chk.eq("check: still one scan", len(lib.scan_rows(fidx_db)), 1)
	chk.eq("check: nothing left in $TMPDIR after every run", os.listdir(tmp), [])
	return want


def check_update(chk, fidx_db, root, want):
	"""--update: one more scan, all files read; diff agrees; a second check is clean."""
	res = upd = run_fidx("check", "--update", fidx_db, root)
	t_diff.check_report(chk, "check --update", res, want)
	scans = scan_table(fidx_db)
	chk.eq("check --update: one scan added", sorted(scans), [1, 2])
	files = sum(1 for r in lib.db_rows(fidx_db, 2)[0].values() if r["type"] == "f")
	chk.eq("check --update: every file read (reused 0, hashed all)", scans.get(2)[:2], (0, files))
	res = run_fidx("diff", fidx_db)
	t_diff.check_report(chk, "diff of the baseline and the --update scan", res, want)
	con = lib.connect(fidx_db)
	seal = con.execute("SELECT lower(hex(seal)) FROM scan WHERE id = 2").fetchone()[0]
	con.close()
	chk.ok("check --update: the counts name the new scan and its seal, for the notes",
	       seal and upd.err.endswith(b"; recorded as scan 2, seal sha256:%s\n" % seal),
	       repr(upd.err))
	res = run_fidx("check", fidx_db)
	chk.ok("check right after --update: no output, exit 0", res.rc == 0 and res.out == b"",
	       repr(res))
	chk.eq("check right after --update: counts", res.err,
	       b"check of '%s' against scan 2: identical\n" % root)


def check_trust(chk, fidx_db, root):
	"""--trust-metadata --update: reused counts what lstat says is unchanged."""
	t_diff.snapshot(root)
	before = {p: os.lstat(p) for p in lib.truth(root, lib.Truth(hashes=[], btime=False))}
	sneaky = root + b"/sneaky"
	st = os.lstat(sneaky)
	with open(sneaky, "r+b") as f:
		f.write(b"sneaky!!")
	os.utime(sneaky, ns=(st.st_atime_ns, st.st_mtime_ns))
	write(root + b"/fresh", b"fresh")
	after = {p: os.lstat(p) for p in lib.truth(root, lib.Truth(hashes=[], btime=False))}
	key = lambda s: (s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)  # noqa: E731
	old = {key(s) for p, s in before.items() if lib.type_of(s.st_mode) == "f"}
	files = [p for p, s in after.items() if lib.type_of(s.st_mode) == "f"]
	unchanged = sum(1 for p in files if key(after[p]) in old)
	res = run_fidx("check", "--update", "--trust-metadata", fidx_db, root)
	lines = set(res.out.split(b"\n"))
	chk.ok("--trust-metadata: a rewrite in place is caught (ctime moved)",
	       b"changed ......c...H.... " + sneaky in lines, repr(res.out))
	chk.ok("--trust-metadata: the new file is added", b"added   " + b"+" * 15 + b" " + root +
	       b"/fresh" in lines, repr(res.out))
	chk.eq("--trust-metadata: exit 5", res.rc, 5)
	scans = scan_table(fidx_db)
	new = max(scans)
	chk.eq("--trust-metadata: reused = files unchanged in dev, ino, size, mtime, ctime; "
	       "hashed = the rest; base = the baseline", scans[new],
	       (unchanged, len(files) - unchanged, new - 1))
	chk.ok("--trust-metadata: something was reused and something read",
	       0 < unchanged < len(files), "unchanged %d of %d" % (unchanged, len(files)))


def db_fds(pid, db):
	"""How many descriptors of process pid are open on the file db."""
	n = 0
	try:
		for fd in os.listdir("/proc/%d/fd" % pid):
			with contextlib.suppress(OSError):
				n += os.readlink("/proc/%d/fd/%s" % (pid, fd)) == os.fsdecode(db)
	except OSError:
		pass
	return n


def check_update_other_process(chk, top):
	"""--update while another process closes its connection: the new scan lands whole.

	The other process holds the write lock, so the check waits to write its
	scan row; then it commits and closes, which checkpoints and deletes the
	WAL unless some process still holds a lock on the database.  The check
	must hold its lock all the while (no second descriptor of the file opened
	and closed beside its connection, which drops the process's locks)."""
	root = top + b"/other-process"
	db = top + b"/other-process.db"
	os.mkdir(root)
	write(root + b"/a", b"a")
	t_diff.scan(chk, db, root, "--update beside another process: baseline")
	write(root + b"/b", b"b")
	con = sqlite3.connect(db, timeout=10, isolation_level=None)
	con.execute("BEGIN IMMEDIATE")
	p = subprocess.Popen([lib.FIDX, "check", "--update", "-q", db, root],
			     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
	deadline = time.monotonic() + 2
	while db_fds(p.pid, db) < 2 and p.poll() is None and time.monotonic() < deadline:
		time.sleep(0.02)
	time.sleep(0.3)
	con.execute("COMMIT")
	con.close()
	out, err = p.communicate(timeout=60)
	chk.ok("--update beside another process: exit 5 (b added, the root changed)",
	       p.returncode == 5 and out == b"changed .....mc........ %s\nadded   %s %s/b\n" %
	       (root, b"+" * 15, root), repr((p.returncode, out, err)))
	rows = lib.scan_rows(db)
	chk.eq("--update beside another process: scan 2 complete, 3 entries",
	       [(r["id"], r["status"], r["entries"]) for r in rows], [(1, "complete", 2),
								   (2, "complete", 3)])
	chk.eq("--update beside another process: its 3 rows are there",
	       len(lib.db_rows(db, 2)[0]), 3)
	res = run_fidx("verify", "--scan", "2", db)
	chk.ok("--update beside another process: scan 2 sealed and intact", res.rc == 0, repr(res))


def check_errors(chk, top, fidx_db, root):
	"""Errors: one line each, AIDE's exit codes."""
	def one(name, res, code, mention=None):
		lines = res.err_lines()
		chk.ok("%s: exit %d, one 'fidx: ' line" % (name, code),
		       res.rc == code and len(lines) == 1 and lines[0].startswith(b"fidx: ") and
		       (mention is None or mention in lines[0]) and res.out == b"", repr(res))

	other = top + b"/other"
	os.mkdir(other)
	one("a PATH never scanned", run_fidx("check", fidx_db, other), 17, other)
	one("a PATH that does not exist", run_fidx("check", fidx_db, top + b"/nowhere"), 18,
	    b"nowhere")
	one("a missing database", run_fidx("check", "--db", top + b"/missing.db", root), 18,
	    b"missing.db")
	one("an unknown --ignore name", run_fidx("check", "--ignore", "inode,colour", fidx_db), 15,
	    b"'colour'")
	one("too many arguments", run_fidx("check", fidx_db, root, root), 15)


def check_interrupt(chk, top, fidx_db, root):
	"""SIGINT while a huge new file is read: 130, scratch removed, no scan added."""
	lib.sparse(root + b"/huge", 64 << 30, [((64 << 30) - 1, b"!")])
	tmp = top + b"/tmpint"
	os.mkdir(tmp)
	scans = len(lib.scan_rows(fidx_db))
	env = dict(os.environ, TMPDIR=os.fsdecode(tmp))
	p = subprocess.Popen([lib.FIDX, "check", "-q", fidx_db, root], stdout=subprocess.PIPE,
			     stderr=subprocess.PIPE, env=env, start_new_session=True)
	time.sleep(1.0)
	running = p.poll() is None and len(os.listdir(tmp)) > 0
	t0 = time.monotonic()
	p.send_signal(signal.SIGINT)
	try:
		p.communicate(timeout=20)
	except subprocess.TimeoutExpired:
		os.killpg(p.pid, signal.SIGKILL)
		p.communicate()
	took = time.monotonic() - t0
	chk.ok("SIGINT: the check was running, its scratch database in $TMPDIR", running,
	       "rc=%r files=%r" % (p.returncode, os.listdir(tmp)))
	chk.ok("SIGINT: exit 130 within 5 s", p.returncode == 130 and took < 5,
	       "rc=%r after %.1f s" % (p.returncode, took))
	chk.eq("SIGINT: the scratch database is removed", os.listdir(tmp), [])
	chk.eq("SIGINT: no scan added", len(lib.scan_rows(fidx_db)), scans)
	os.unlink(root + b"/huge")


def main():
	chk = Checker()
	with TempDir() as td:
		top = os.fsencode(td.path)
		root = top + b"/tree"
		fidx_db = top + b"/fidx.db"
		os.mkdir(root)
		t_diff.build(root)
		before = t_diff.snapshot(root)
		t_diff.scan(chk, fidx_db, root, "baseline scan")
		t_diff.mutate(root)
		after = t_diff.snapshot(root)
		want = []
		with chk.guard("check"):
			want = check_report(chk, top, fidx_db, root, before, after)
		with chk.guard("check --update"):
			check_update(chk, fidx_db, root, want)
		with chk.guard("check --trust-metadata"):
			check_trust(chk, fidx_db, root)
		with chk.guard("--update beside another process"):
			check_update_other_process(chk, top)
		with chk.guard("errors"):
			check_errors(chk, top, fidx_db, root)
		with chk.guard("SIGINT"):
			check_interrupt(chk, top, fidx_db, root)
	chk.done()


if __name__ == "__main__":
	main()
