#!/usr/bin/python3
"""t_failures.py - a scan that fails says so, whatever failed, and its row agrees.

  * Out of memory: a preload (fail-shim.so, beside the race shim) makes every
    allocation fail from the Nth on, or only the Nth, for N spread over a
    whole scan's allocations (counted first).  For each run: no crash; exit 0
    or 1 only with the summary "complete" and a complete row holding every
    entry; exit 2 with one "fidx: " line, no summary, and a row that is not
    complete (failed, or running when not even that could be written, which
    `fidx scans` then shows as dead).  This used to exit 0 saying "complete"
    while the row said failed (the message of the failure could not be
    allocated).  Skipped on the ASan build, whose allocator cannot be
    interposed.
  * A full disk: a tmpfs filled to leave 1 to 14 MiB, a scan of 20,000
    entries into it: exit 2 saying so (No space left on device) and the
    row 'failed' (it used
    to stay 'running'), or the scan complete and sealed (`fidx verify`),
    with a warning when only the indexes did not fit, which a later scan
    builds.
  * A scan killed with SIGKILL: `fidx scans` shows it dead, --json keeps
    "running" and says alive false.
"""

import json
import os
import shutil
import signal
import subprocess
import time

import lib
from lib import Checker, TempDir, run_fidx, write

FAIL_SHIM = os.path.join(os.path.dirname(lib.SHIM), "fail-shim.so")


def asan_build():
	"""Whether $FIDX is linked with ASan (its allocator cannot be interposed)."""
	out = subprocess.run(["ldd", lib.FIDX], capture_output=True).stdout
	return b"libasan" in out


def small_tree(root, n=60):
	"""A small tree: files, directories, a link."""
	for d in range(3):
		os.makedirs(root + "/d%d" % d)
		for f in range(n // 3):
			write(root + "/d%d/f%d" % (d, f), b"x" * f)
	os.symlink("d0", root + "/link")


def entries_of(root):
	"""Every entry under and including root (what a complete scan holds)."""
	n = 1
	for _, dirs, files in os.walk(root):
		n += len(dirs) + len(files)
	return n


def scan_status(db):
	"""(status, entries) of the database's scan rows, or None when it cannot be read."""
	try:
		return [(s["status"], s["entries"]) for s in lib.scan_rows(db)]
	except Exception:
		return None


def check_outcome(chk, label, res, db, want_entries, problems):
	"""Checks one failing-or-not run against the rules above; collects what is wrong."""
	rows = scan_status(db)
	summary = any(b" complete: " in l and l.startswith(b"scan ") for l in res.out_lines())
	if res.rc < 0:
		problems.append("%s: killed by signal %d: %r" % (label, -res.rc, res.err[-300:]))
	elif res.rc in (0, 1):
		if not summary or rows != [("complete", want_entries)]:
			problems.append("%s: exit %d but summary %r, rows %r" % (label, res.rc, summary,
										 rows))
	elif res.rc == 2:
		lines = res.err_lines()
		if summary or not lines or not lines[-1].startswith(b"fidx: "):
			problems.append("%s: exit 2 but summary %r, stderr %r" % (label, summary,
										  res.err[-300:]))
		if rows and rows[0][0] == "complete" and not any(b"close" in l for l in lines):
			problems.append("%s: exit 2 but the row says complete: %r" % (label, rows))
		if rows and rows[0][0] == "running":
			shown = run_fidx("scans", db)
			if b" dead " not in shown.out:
				problems.append("%s: a running row left behind is not shown dead: %r" %
						(label, shown.out))
	else:
		problems.append("%s: exit %d: %r" % (label, res.rc, res.err[-300:]))


def check_out_of_memory(chk, top):
	"""Allocations failing from the Nth on, or only the Nth, all through a scan."""
	if asan_build():
		chk.skip("out of memory", "the ASan build's allocator cannot be interposed")
		return
	if not os.path.exists(FAIL_SHIM):
		chk.ok("out of memory: the fail shim is built", False, FAIL_SHIM)
		return
	root = top + "/oom-tree"
	os.makedirs(root)
	small_tree(root)
	want = entries_of(root)
	count_file = top + "/count"
	db = top + "/count.db"
	res = run_fidx("scan", "-q", "-j", "2", "--db", db, root, preload=FAIL_SHIM,
		       env={"FIDX_FAIL_COUNT": count_file})
	chk.eq("out of memory: a scan under the shim, failing nothing: exit 0", res.rc, 0)
	total = int(open(count_file).read())
	chk.ok("out of memory: the scan's allocations are counted", total > 1000, total)
	points = sorted({1, 2, 5, 10, 20, 50, 100} |
			{max(1, total * i // 40) for i in range(1, 41)})
	problems, outcomes = [], {}
	for n in points:
		for burst in ("", ":1"):
			label = "fail from %d%s" % (n, " (once)" if burst else " on")
			db = top + "/oom-%d%s.db" % (n, "-1" if burst else "")
			res = run_fidx("scan", "-q", "-j", "2", "--db", db, root, preload=FAIL_SHIM,
				       env={"FIDX_FAIL_ALLOC": "%d%s" % (n, burst)}, timeout=60)
			if res.timed_out:
				problems.append("%s: hung" % label)
				continue
			outcomes[res.rc] = outcomes.get(res.rc, 0) + 1
			check_outcome(chk, label, res, db, want, problems)
	chk.ok("out of memory: %d runs, every outcome as it says (exit statuses %r)" %
	       (2 * len(points), sorted(outcomes.items())), not problems,
	       "%d wrong: %s" % (len(problems), "; ".join(problems[:4])))
	chk.ok("out of memory: the sweep reaches failures and successes",
	       outcomes.get(2, 0) > 0 and outcomes.get(0, 0) > 0, repr(outcomes))


def sweep_points(total, spread=30, tail=160, step=2):
	"""Allocation numbers to fail: spread over the run, and densely over its end (the seal)."""
	return sorted({max(1, total * i // spread) for i in range(1, spread + 1)} |
		      set(range(max(1, total - tail), total + 1, step)))


def make_interrupted(db):
	"""Turns db's one complete scan into an interrupted one that kept half its rows."""
	con = lib.connect(db)
	half = con.execute("SELECT (min(id) + max(id)) / 2 FROM file").fetchone()[0]
	con.execute("DELETE FROM file_seal WHERE file_id > ?", (half,))
	con.execute("DELETE FROM file WHERE id > ?", (half,))
	con.execute("UPDATE scan SET status = 'interrupted', seal = NULL, pid = NULL,"
		    " entries = (SELECT count(*) FROM file), files = (SELECT count(*) FROM file"
		    " WHERE type = 'f'), dirs = (SELECT count(*) FROM file WHERE type = 'd'),"
		    " bytes = (SELECT coalesce(sum(size), 0) FROM file WHERE type = 'f'),"
		    " errors = 0, hashed = (SELECT count(*) FROM file WHERE type = 'f')")
	con.commit()
	con.close()


def sealed_right(db):
	"""Problems of db after a run: a complete scan whose seal is missing or does not verify."""
	res = run_fidx("verify", "--all", "--json", db)
	bad = []
	for line in res.out.split(b"\n"):
		if line:
			o = json.loads(line)
			if o.get("status") == "complete" and o.get("seal") != "intact":
				bad.append("scan %s complete, seal %s" % (o.get("scan_id"), o.get("seal")))
	return bad


def check_out_of_memory_commands(chk, top):
	"""
	One allocation failing (or every one from the Nth on) in verify, check
	--update, scan --resume and a scan into a database that holds one: no
	crash; the answer of a run that succeeds is the same; a failure is one
	line (verify never reports tampering it did not find); afterwards every
	complete scan is sealed and its seal verifies, and a one-time failure
	leaves no row 'running' (a resume leaves it 'interrupted' or 'failed', and
	a second resume completes it).
	"""
	if asan_build() or not os.path.exists(FAIL_SHIM):
		chk.skip("out of memory in every writer", "no fail shim on this build")
		return
	root = top + "/cmd-tree"
	os.makedirs(root)
	small_tree(root, 30)
	base = top + "/cmd-base.db"
	for _ in range(2):
		run_fidx("scan", "-q", "--hash", "sha256,md5", "--db", base, root)
	interrupted = top + "/cmd-interrupted.db"
	run_fidx("scan", "-q", "--db", interrupted, root)
	make_interrupted(interrupted)
	cases = [("verify", ["verify", "--all", "@"], base, False),
		 ("check --update", ["check", "-q", "--update", "@"], base, True),
		 ("scan --resume", ["scan", "-q", "--resume", "--db", "@"], interrupted, True),
		 ("scan into a database", ["scan", "-q", "--db", "@", root], base, True)]
	for label, args, template, writes in cases:
		work = top + "/cmd-work.db"
		problems, runs = [], 0

		def run_once(fail):
			for f in os.listdir(top):
				if f.startswith("cmd-work.db"):
					os.unlink(os.path.join(top, f))
			shutil.copy(template, work)
			env = {"FIDX_FAIL_COUNT": top + "/cmd-count"}
			if fail:
				env["FIDX_FAIL_ALLOC"] = fail
			return run_fidx(*[work if a == "@" else a for a in args], preload=FAIL_SHIM,
					env=env, timeout=60)

		clean = run_once(None)
		clean_rows = scan_status(work) if writes else None
		total = int(open(top + "/cmd-count").read())
		for n in sweep_points(total):
			for burst in (":1", ""):
				fail = "%d%s" % (n, burst)
				res = run_once(fail)
				runs += 1
				tag = "%s at %s" % (label, fail)
				if res.rc < 0 or res.timed_out:
					problems.append("%s: killed (%r)" % (tag, res.rc))
					continue
				if res.rc == clean.rc:
					if not writes and res.out != clean.out:
						problems.append("%s: exit %d, another answer" % (tag, res.rc))
				elif res.rc not in (2, 18) or not res.err_lines() or \
				     not res.err_lines()[-1].startswith(b"fidx: "):
					problems.append("%s: exit %d: %r" % (tag, res.rc, res.err[-200:]))
				if not writes:
					continue
				problems += ["%s: %s" % (tag, b) for b in sealed_right(work)]
				rows = scan_status(work) or []
				if burst and any(st == "running" for st, _ in rows):
					problems.append("%s: a row left running: %r" % (tag, rows))
				if burst and label == "scan --resume" and res.rc != 0:
					# Failed before the rows were taken up: as it was; after: failed.
					# Either way a run with memory enough completes it.
					if rows[:1] and rows[0][0] not in ("interrupted", "failed"):
						problems.append("%s: the resumed row is %r" % (tag, rows[:1]))
					again = run_fidx("scan", "-q", "--resume", "--db", work)
					rows = scan_status(work) or []
					if again.rc != 0 or rows != [("complete", clean_rows[0][1])]:
						problems.append("%s: resumed again: exit %d, rows %r" %
								(tag, again.rc, rows))
					problems += ["%s, resumed again: %s" % (tag, b) for b in sealed_right(work)]
		chk.ok("out of memory, %s: %d runs, every outcome as it says" % (label, runs),
		       not problems, "%d wrong: %s" % (len(problems), "; ".join(problems[:3])))


def check_full_disk(chk, top):
	"""A database on a tmpfs with 24 KiB to 14 MiB free."""
	root = top + "/disk-tree"
	for d in range(40):
		os.makedirs(root + "/d%02d" % d)
		for f in range(500):
			write(root + "/d%02d/f%03d" % (d, f), b"y" * (f % 5))
	want = entries_of(root)
	mnt = top + "/small-fs"
	os.mkdir(mnt)
	try:
		subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", mnt], check=True)
	except (subprocess.CalledProcessError, OSError) as e:
		chk.skip("full disk", "cannot mount a tmpfs: %s" % e)
		return
	try:
		problems, outcomes = [], {}
		# The KiB sizes: room for hardly a database (it cannot be read back,
		# its first scan row cannot be written).
		for free_kib in (24, 72, 120, 200, 1024, 2048, 3072, 4096, 6144, 8192, 10240, 12288,
				 14336):
			for name in os.listdir(mnt):
				os.unlink(os.path.join(mnt, name))
			st = os.statvfs(mnt)
			fill = st.f_bavail * st.f_frsize - free_kib * 1024
			if fill > 0:
				with open(mnt + "/fill", "wb") as f:
					f.write(b"\0" * fill)
			db = mnt + "/d.db"
			label = "%d KiB free" % free_kib
			res = run_fidx("scan", "-q", "--db", db, root, timeout=120)
			left = sorted(n for n in os.listdir(mnt) if n.startswith("d.db"))
			if fill > 0:  # room again, to read what was left
				os.unlink(mnt + "/fill")
			rows = scan_status(db) if left else []
			if res.rc == 2:
				outcomes["failed"] = outcomes.get("failed", 0) + 1
				if left and (not rows or len(rows) != 1 or rows[0][0] != "failed"):
					problems.append("%s: exit 2, files %r, rows %r" % (label, left, rows))
				if b"No space left on device" not in res.err and b"disk is full" not in res.err:
					problems.append("%s: exit 2 without saying the disk is full: %r" %
							(label, res.err))
			elif res.rc == 0:
				outcomes["complete"] = outcomes.get("complete", 0) + 1
				v = run_fidx("verify", db)
				if rows != [("complete", want)] or v.rc != 0:
					problems.append("%s: exit 0, rows %r, verify %r" % (label, rows, v))
				if res.err and not res.err.startswith(b"fidx: warning: cannot index"):
					problems.append("%s: exit 0, stderr %r" % (label, res.err))
				if res.err:
					outcomes["no index"] = outcomes.get("no index", 0) + 1
			else:
				problems.append("%s: exit %d: %r" % (label, res.rc, res.err))
		chk.ok("full disk: every outcome is failed (one row 'failed', never 'running', or"
		       " no database left) or complete and sealed: %r" % sorted(outcomes.items()),
		       not problems,
		       "; ".join(problems[:4]))
		chk.ok("full disk: the sweep reaches both", outcomes.get("failed") and
		       outcomes.get("complete"), repr(outcomes))
	finally:
		subprocess.run(["umount", mnt])


def check_dead(chk, top):
	"""A scan killed with SIGKILL stays 'running': fidx scans shows it dead."""
	root = top + "/slow"
	os.makedirs(root)
	for i in range(3):
		lib.sparse(root + "/big%d" % i, 512 << 20, [(1, b"!")])
	db = top + "/dead.db"
	p = lib.start_scan(db, "--hash", "sha512", root)
	os.killpg(p.pid, signal.SIGKILL)
	p.communicate()
	res = run_fidx("scans", db)
	line = res.out_lines()[1] if len(res.out_lines()) > 1 else b""
	chk.ok("killed scan: fidx scans shows it dead", line.split()[1:2] == [b"dead"], repr(res))
	o = json.loads(run_fidx("scans", "--json", db).out.split(b"\n")[0])
	chk.eq("killed scan: --json keeps the recorded status and says alive false",
	       (o["status"], o["alive"]), ("running", False))
	p = lib.start_scan(db, "--hash", "sha512", root)
	try:
		o = json.loads(run_fidx("scans", "--json", db).out.split(b"\n")[1])
		chk.eq("a scan still running: running, alive true", (o["status"], o["alive"]),
		       ("running", True))
	finally:
		os.killpg(p.pid, signal.SIGKILL)
		p.communicate()


def main():
	chk = Checker()
	with TempDir() as td:
		top = td.path
		with chk.guard("out of memory"):
			check_out_of_memory(chk, top)
		with chk.guard("out of memory in every writer"):
			check_out_of_memory_commands(chk, top)
		with chk.guard("full disk"):
			check_full_disk(chk, top)
		with chk.guard("dead scans"):
			check_dead(chk, top)
	chk.done()


if __name__ == "__main__":
	main()
