#!/usr/bin/python3
# e2e: alone (tests/e2e/run): it interrupts scans at chosen moments.
# e2e: tsan (tests/e2e/run --marked tsan): the pipeline's threads stopped by a signal.
"""t_signals.py - SIGINT, SIGTERM, SIGHUP and SIGKILL in the middle of a scan.

A slow tree: fifty small files and eight sparse files of 1 GiB, scanned with
-j1 and --hash sha512 (some seconds of hashing).  Each signal is sent once
the scan row is visible in the database (so fidx is past its start-up), which
is a fraction of a second into the scan.

  * SIGINT, SIGTERM and SIGHUP: exit 130 within a few seconds, the scan row says
    'interrupted' and counts the rows it kept, the database passes
    integrity_check, and the rows recorded are correct;
  * SIGINT while a 64 GiB sparse file is being hashed: exit 130 within 5 s,
    not after the whole file, and no digest of the part read is kept;
  * SIGKILL: the database, which already holds a complete scan 1, passes
    integrity_check, scan 2 is left 'running', scan 1 is exactly as before.
  * After SIGINT, the summary says what happened: its entries, files, dirs,
    errors and the entries left unfinished (rows 'not read: scan interrupted'
    or 'not hashed: scan interrupted'), counted apart from the real errors,
    equal the rows in the database (the scan row's errors column still counts
    both); one line on stderr gives the command that continues the scan, the
    database quoted for a shell, and running that command completes it.
  * The scratch databases of `fidx dupes PATH` and `fidx check` in $TMPDIR
    are removed on SIGHUP, and when stdout's reader is gone (SIGPIPE).
"""

import os
import re
import shlex
import signal
import subprocess
import time

import lib
from lib import Checker, run_fidx, truth, write

SLOW_FILES = 8
SLOW_SIZE = 1 << 30
STOP_WITHIN = 10.0  # seconds from the signal to the exit
HUGE_SIZE = 64 << 30  # a sparse file that takes a minute or more to hash
PROMPT_WITHIN = 5.0  # seconds to stop in the middle of it


def build(top):
	"""Builds the slow tree of the header; returns its root."""
	root = top + b"/slow"
	os.makedirs(root + b"/small")
	for i in range(50):
		write(root + b"/small/%02d" % i, b"small %d" % i)
	for i in range(SLOW_FILES):
		lib.sparse(root + b"/big%d" % i, SLOW_SIZE, [(SLOW_SIZE - 1, b"!")])
	lib.settle(root)
	return root


def start(db, root):
	"""Starts a slow scan; returns the process once its scan row is in db."""
	return lib.start_scan(db, "--hash", "sha512", root)


def wait(p, timeout):
	"""Waits for p; returns (exit status, stderr, seconds), killing it after timeout."""
	t0 = time.monotonic()
	try:
		_, err = p.communicate(timeout=timeout)
	except subprocess.TimeoutExpired:
		os.killpg(p.pid, signal.SIGKILL)
		_, err = p.communicate()
	return p.returncode, err, time.monotonic() - t0


def check_interrupt(chk, top, root, want, sig):
	"""SIGINT or SIGTERM: exit 130, an interrupted but sound scan."""
	label = signal.Signals(sig).name
	db = top + b"/%s.db" % label.encode()
	p = start(db, root)
	running = p.poll() is None
	chk.ok("%s: the scan was still running when signalled" % label, running,
	       "it ended first (exit %r): make the slow tree slower" % p.returncode)
	if not running:
		return
	p.send_signal(sig)
	rc, err, secs = wait(p, 60)
	chk.ok("%s: exit 130" % label, rc == 130, "exit %r, stderr %s" % (rc, lib.short(err)))
	chk.ok("%s: stops within %g s" % (label, STOP_WITHIN), secs <= STOP_WITHIN,
	       "took %.1f s" % secs)
	chk.eq("%s: integrity_check" % label, lib.integrity(db), "ok")
	scans = lib.scan_rows(db)
	if not chk.ok("%s: one scan row" % label, len(scans) == 1, repr(scans)):
		return
	s = scans[0]
	chk.eq("%s: scan.status" % label, s["status"], "interrupted")
	got, dups = lib.db_rows(db, 1)
	chk.ok("%s: rows were kept" % label, len(got) >= 1, "no rows")
	chk.eq("%s: scan.entries counts the rows kept" % label, s["entries"], len(got))
	chk.ok("%s: finished_ns set" % label, isinstance(s["finished_ns"], int) and
	       s["finished_ns"] >= s["started_ns"], repr(s))
	bad = [p for p in got if p not in want]
	chk.ok("%s: every row kept is an entry of the tree" % label, not bad and not dups,
	       lib.short(bad[:3]))
	wrong = [p for p, r in got.items() if p in want and
		 any(r[c] != want[p][c] for c in ("type", "size", "ino", "mtime_ns"))]
	chk.ok("%s: the rows kept hold the right metadata" % label, not wrong,
	       lib.short(wrong[:3]))
	wrong = [p for p, r in got.items() if p in want and r["sha512"] is not None and
		 r["sha512"] != want[p]["sha512"]]
	chk.ok("%s: the digests kept are right (no partial digest)" % label, not wrong,
	       lib.short(wrong[:3]))


def check_summary(chk, top, root, want):
	"""SIGINT: the summary against the rows, and the command that continues the scan."""
	db = top + b"/summary it's.db"
	p = lib.start_scan(db, "--hash", "sha512", root, stdout=subprocess.PIPE)
	if not chk.ok("summary: the scan was still running when signalled", p.poll() is None,
		      "it ended first (exit %r)" % p.returncode):
		return
	p.send_signal(signal.SIGINT)
	try:
		out, err = p.communicate(timeout=60)
	except subprocess.TimeoutExpired:
		os.killpg(p.pid, signal.SIGKILL)
		out, err = p.communicate()
	chk.eq("summary: exit 130", p.returncode, 130)
	con = lib.connect(db)
	unfinished_sql = "error IN ('not read: scan interrupted', 'not hashed: scan interrupted')"
	n = {
		"entries": con.execute("SELECT count(*) FROM file WHERE scan_id = 1").fetchone()[0],
		"files": con.execute("SELECT count(*) FROM file WHERE scan_id = 1 AND type = 'f'")
		.fetchone()[0],
		"dirs": con.execute("SELECT count(*) FROM file WHERE scan_id = 1 AND type = 'd'")
		.fetchone()[0],
		"errors": con.execute("SELECT count(*) FROM file WHERE scan_id = 1 AND error IS NOT"
				      " NULL AND NOT " + unfinished_sql).fetchone()[0],
		"unfinished": con.execute("SELECT count(*) FROM file WHERE scan_id = 1 AND " +
					  unfinished_sql).fetchone()[0],
	}
	column = con.execute("SELECT errors FROM scan WHERE id = 1").fetchone()[0]
	con.close()
	m = re.search(rb"interrupted: (\d+) entr(?:y|ies), (\d+) files?, (\d+) dirs?, [^,]+, (\d+)"
		      rb" errors?(?:, (\d+) left unfinished)?,", out)
	got = dict(zip(["entries", "files", "dirs", "errors", "unfinished"],
		       [int(x or 0) for x in m.groups()])) if m else None
	chk.eq("summary: entries, files, dirs, errors and unfinished as the rows say", got, n)
	chk.ok("summary: the interruption left entries unfinished", n["unfinished"] > 0, repr(n))
	chk.eq("summary: the scan row's errors still counts both", column,
	       n["errors"] + n["unfinished"])
	lines = [l for l in err.split(b"\n") if l]
	hint = re.fullmatch(rb"fidx: interrupted: (\d+) entr(?:y|ies) left unfinished .*; continue the"
			    rb" scan with: (fidx scan --resume --db .*)", lines[0]) \
		if len(lines) == 1 else None
	chk.ok("summary: one line on stderr: how many were left, and the command that continues",
	       hint is not None and int(hint.group(1)) == n["unfinished"], repr(err))
	if not hint:
		return
	argv = shlex.split(os.fsdecode(hint.group(2)))
	chk.eq("summary: the command names the database, quoted for a shell", os.fsencode(argv[4]),
	       db)
	res = run_fidx(*[os.fsencode(a) for a in argv[1:]], timeout=300)
	scans = lib.scan_rows(db)
	chk.ok("summary: that command completes the scan", res.rc == 0 and len(scans) == 1 and
	       scans[0]["status"] == "complete" and scans[0]["entries"] == len(want),
	       "%r; %r" % (res, scans))


def check_prompt_stop(chk, top):
	"""SIGINT in the middle of a huge file: the scan stops at once, keeping no digest of it."""
	root = top + b"/huge"
	os.mkdir(root)
	lib.sparse(root + b"/huge", HUGE_SIZE, [(HUGE_SIZE - 1, b"!")])
	db = top + b"/huge.db"
	p = start(db, root)
	running = p.poll() is None
	chk.ok("SIGINT in a huge file: the scan was still running", running,
	       "it ended first (exit %r)" % p.returncode)
	if not running:
		return
	p.send_signal(signal.SIGINT)
	rc, err, secs = wait(p, 2 * PROMPT_WITHIN)
	chk.ok("SIGINT in a huge file: exit 130 within %g s (not after hashing all of it)" %
	       PROMPT_WITHIN, rc == 130 and secs <= PROMPT_WITHIN,
	       "exit %r after %.1f s (killed at %g s)" % (rc, secs, 2 * PROMPT_WITHIN))
	if rc != 130:
		return
	got, _ = lib.db_rows(db, 1)
	r = got.get(root + b"/huge")
	chk.ok("SIGINT in a huge file: no digest of the part read",
	       r is None or r["sha512"] is None, "sha512 %s" % lib.show("sha512", r and r["sha512"]))
	chk.eq("SIGINT in a huge file: integrity_check", lib.integrity(db), "ok")


def check_kill(chk, top, root):
	"""SIGKILL: a sound database, scan 2 left running, scan 1 unchanged."""
	db = top + b"/killed.db"
	res = run_fidx("scan", "-q", "-o", db, root + b"/small")
	if not chk.ok("SIGKILL: a first complete scan", res.rc == 0, repr(res)):
		return
	before = lib.dump_scan(db, 1)
	p = start(db, root)
	running = p.poll() is None
	chk.ok("SIGKILL: the scan was still running when killed", running,
	       "it ended first (exit %r)" % p.returncode)
	if not running:
		return
	os.killpg(p.pid, signal.SIGKILL)
	rc, _, _ = wait(p, 30)
	chk.eq("SIGKILL: killed", rc, -signal.SIGKILL)
	chk.eq("SIGKILL: integrity_check", lib.integrity(db), "ok")
	scans = lib.scan_rows(db)
	chk.eq("SIGKILL: scan statuses", [(s["id"], s["status"]) for s in scans],
	       [(1, "complete"), (2, "running")])
	chk.ok("SIGKILL: scan 1 intact", lib.dump_scan(db, 1) == before, "it changed")


def scratch_left(tmp):
	"""The files left in the scratch folder tmp."""
	return sorted(os.listdir(tmp))


def check_scratch(chk, top, root):
	"""
	The scratch databases of `fidx dupes PATH` and `fidx check` (in $TMPDIR)
	are removed when the run is stopped by SIGHUP (the terminal closed), and
	when stdout's reader went away (SIGPIPE: `fidx dupes /usr | head`).
	"""
	tmp = top + b"/scratch-tmp"
	os.mkdir(tmp)
	env = dict(os.environ, TMPDIR=os.fsdecode(tmp))
	# SIGHUP while dupes reads the slow tree's big files (all of one size)
	p = subprocess.Popen([lib.FIDX, "dupes", "-q", root], stdin=subprocess.DEVNULL,
			     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
			     start_new_session=True)
	deadline = time.monotonic() + 20
	while time.monotonic() < deadline and p.poll() is None and not scratch_left(tmp):
		time.sleep(0.01)
	time.sleep(0.5)
	running = p.poll() is None
	p.send_signal(signal.SIGHUP)
	rc, err, _ = wait(p, 60)
	chk.ok("dupes PATH, SIGHUP: exit 130, its scratch database removed",
	       running and rc == 130 and not scratch_left(tmp),
	       "running %r, exit %r, left %r, %s" % (running, rc, scratch_left(tmp), lib.short(err)))
	# SIGPIPE: the reader of stdout gone before the groups are printed
	small = top + b"/pipe-tree"
	os.makedirs(small)
	for i in range(3):
		write(small + b"/copy%d" % i, b"the same bytes\n")
	db = top + b"/pipe.db"
	res = run_fidx("scan", "-q", "--db", db, small)
	chk.eq("SIGPIPE: the baseline scan", res.rc, 0)
	write(small + b"/copy0", b"changed bytes\n")
	for label, args in (("dupes PATH", ["dupes", small]), ("check", ["check", db])):
		for ignored in (False, True):
			# Ignored (a shell that ignores it), the write fails: exit 2 or 14, one line.
			pre = (lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN)) if ignored else None
			p = subprocess.Popen([lib.FIDX] + args, stdin=subprocess.DEVNULL,
					     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
					     preexec_fn=pre)
			p.stdout.close()  # the reader is gone before fidx writes
			_, err = p.communicate(timeout=60)
			if ignored:
				want = 14 if label == "check" else 2
				chk.ok("%s, stdout's reader gone, SIGPIPE ignored: exit %d, one line, its"
				       " scratch database removed" % (label, want),
				       p.returncode == want and err.count(b"\n") == 1 and
				       b"cannot write output: Broken pipe" in err and not scratch_left(tmp),
				       "exit %r, left %r, %r" % (p.returncode, scratch_left(tmp), err))
			else:
				chk.ok("%s, stdout's reader gone: dies of SIGPIPE, its scratch database"
				       " removed" % label,
				       p.returncode == -signal.SIGPIPE and not scratch_left(tmp),
				       "exit %r, left %r, %s" % (p.returncode, scratch_left(tmp),
								 lib.short(err)))


def main():
	chk = Checker()
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		root = build(top)
		want = truth(root, lib.Truth(hashes=[], btime=False))
		big = lib.hash_at(None, root + b"/big0", ["sha512"])["sha512"]  # all alike
		for p, r in want.items():
			r["sha512"] = None
			if r["type"] == "f":
				r["sha512"] = big if r["size"] == SLOW_SIZE else \
					lib.hash_at(None, p, ["sha512"])["sha512"]
		# On the TSan build, SIGINT alone stops the threads: SIGTERM and SIGHUP set the same
		# flag, the summary's resume hashes 8 GiB in one thread, SIGKILL stops no thread.
		tsan = lib.is_tsan()
		for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
			name = signal.Signals(sig).name
			if tsan and sig != signal.SIGINT:
				chk.skip(name, "TSan build: the same stop as SIGINT's, run on the others")
				continue
			with chk.guard(name):
				check_interrupt(chk, top, root, want, sig)
		if tsan:
			chk.skip("the summary after SIGINT", "TSan build: run on the normal and ASan builds")
		else:
			with chk.guard("the summary after SIGINT"):
				check_summary(chk, top, root, want)
		with chk.guard("SIGINT in a huge file"):
			check_prompt_stop(chk, top)
		if tsan:
			chk.skip("SIGKILL", "TSan build: run on the normal and ASan builds")
		else:
			with chk.guard("SIGKILL"):
				check_kill(chk, top, root)
		with chk.guard("scratch databases"):
			check_scratch(chk, top, root)
	chk.done()


if __name__ == "__main__":
	main()
