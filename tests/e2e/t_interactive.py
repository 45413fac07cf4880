#!/usr/bin/python3
# e2e: alone (tests/e2e/run): it answers prompts as they appear.
"""t_interactive.py - the interactive mode: `fidx scan -i`, and `fidx` alone on a terminal.

Drives the real binary ($FIDX) through a pseudo-terminal, as a person would:
it reads the table of filesystems, answers each question once wrongly
(expecting a "fidx: ..." reason and the same question again), then rightly,
and checks that the scan it started recorded the tree this script made.
Then checks that, without a terminal on stdin, nothing is asked and nothing
waits for an answer.

  scan -i -o DB   the filesystem by its number in the table, 2 workers,
                  the tree as a path relative to the mount point
  fidx (alone)    in a fresh cwd: the mount point typed, the default
                  workers, the tree as an absolute path; ./fidx.db
  scan -i         Ctrl-D at the first question: no scan, no database

The filesystem chosen is the listed one with the longest mount point that
holds the tree (the tree's own filesystem, unless it is not listed).  Every
wait is bounded (select with a deadline); a child still running is killed.
"""
import json
import os
import pty
import re
import select
import signal
import subprocess
import tempfile
import time

import lib

PROMPT_FS = rb"Filesystem to scan \[1-(\d+)\]: "
PROMPT_JOBS = rb"Worker threads \[(\d+)\]: "
PROMPT_SUB = rb"Sub-path to scan \(blank = all of it\): "
REASON = rb"fidx: [^\r\n]*\r?\n"
ANSWER_WAIT = 20      # seconds to wait for a prompt
SCAN_WAIT = 300       # seconds to wait for the scan to end (sanitizer builds are slow)


class Failure(Exception):
	"""A step failed: the session cannot go on."""


class Session:
	"""fidx running with a pseudo-terminal as its stdin, stdout and stderr."""

	def __init__(self, argv, cwd):
		pid, fd = pty.fork()
		if pid == 0:
			try:
				os.chdir(cwd)
				os.execv(argv[0], argv)
			finally:
				os._exit(127)
		self.pid, self.fd = pid, fd
		self.out = b""      # everything read so far
		self.pos = 0        # where the next expect() starts looking
		self.eof = False
		self.status = None  # exit status, once reaped

	def _read(self, deadline):
		"""Reads what arrives before deadline; sets eof when the terminal closed."""
		left = deadline - time.monotonic()
		if left <= 0 or not select.select([self.fd], [], [], left)[0]:
			return
		try:
			data = os.read(self.fd, 65536)
		except OSError:     # EIO: every holder of the slave side closed it
			data = b""
		if data:
			self.out += data
		else:
			self.eof = True

	def tail(self):
		return lib.short(self.out[-300:])

	def expect(self, pattern, timeout=ANSWER_WAIT):
		"""Waits for pattern after the last match; returns the match, or raises Failure."""
		deadline = time.monotonic() + timeout
		rx = re.compile(pattern)
		while True:
			m = rx.search(self.out, self.pos)
			if m:
				self.pos = m.end()
				return m
			if self.eof or time.monotonic() >= deadline:
				raise Failure("no %r %s; output ends with %s" % (
					pattern.decode(), "before it ended" if self.eof else
					"within %d s" % timeout, self.tail()))
			self._read(deadline)

	def send(self, line):
		os.write(self.fd, line.encode() + b"\n")

	def wait(self, timeout=SCAN_WAIT):
		"""Reads to the end and reaps the child; returns its exit status, or raises Failure."""
		deadline = time.monotonic() + timeout
		while not self.eof and time.monotonic() < deadline:
			self._read(deadline)
		while time.monotonic() < deadline:
			pid, st = os.waitpid(self.pid, os.WNOHANG)
			if pid:
				self.status = os.waitstatus_to_exitcode(st)
				return self.status
			time.sleep(0.05)
		raise Failure("still running after %d s; output ends with %s" % (timeout, self.tail()))

	def close(self):
		"""Kills the child if it still runs, and closes the terminal."""
		if self.status is None:
			try:
				os.kill(self.pid, signal.SIGKILL)
				os.waitpid(self.pid, 0)
			except (ProcessLookupError, ChildProcessError):
				pass
		os.close(self.fd)


def make_tree(base):
	"""Makes the tree to scan below base; returns its resolved path."""
	tree = os.path.realpath(os.path.join(base, "tree"))
	os.makedirs(os.path.join(tree, "sub", "deeper"))
	lib.write(os.path.join(tree, "a.txt"), b"alpha\n")
	lib.write(os.path.join(tree, "sub", "b.bin"), bytes(range(256)) * 10)
	lib.write(os.path.join(tree, "sub", "with space.txt"))
	lib.write(os.path.join(tree, "sub", "deeper", "c"), b"c")
	return tree


def table_rows(text):
	"""The rows of the printed table: [(number, rest of the line)]."""
	rows = []
	for line in text.decode("utf-8", "replace").splitlines():
		m = re.match(r"^\s*(\d+)  (.*)$", line)
		if m:
			rows.append((int(m.group(1)), m.group(2)))
	return rows


def listed_mount(rows, tree):
	"""The listed mount point, longest first, that holds tree: (number, mount point) or None."""
	best = None
	for num, rest in rows:
		mp = rest.split("  ")[0]
		if (mp == "/" or tree == mp or tree.startswith(mp + "/")) and \
		   (best is None or len(mp) > len(best[1])):
			best = (num, mp)
	return best


def check_db(chk, label, db, tree, jobs=None):
	"""Checks that db holds one complete scan of tree recording exactly its entries."""
	if not chk.ok("%s: database written" % label, os.path.exists(db), "no %s" % db):
		return
	root = os.fsencode(tree)
	mine = [s for s in lib.scan_rows(db) if s["root"] == root]
	if not chk.ok("%s: one scan row with the chosen root" % label, len(mine) == 1,
		      "scan rows %s" % lib.short(lib.scan_rows(db))):
		return
	s = mine[0]
	chk.eq("%s: scan.status" % label, s["status"], "complete")
	if jobs is not None:
		try:
			opts = json.loads(s["options"])
		except (TypeError, ValueError):
			opts = None
		if isinstance(opts, dict) and "jobs" in opts:
			chk.eq("%s: workers recorded in scan.options" % label, opts["jobs"], jobs)
		else:
			chk.skip("%s: workers recorded in scan.options" % label,
				 "options hold no 'jobs': %s" % lib.short(s["options"]))
	got, dups = lib.db_rows(db, s["id"])
	want = lib.truth(root, lib.Truth(hashes=["md5", "sha256"], btime=False))
	lib.compare(chk, label, got, dups, want, columns=["type", "size", "md5", "sha256"])
	chk.eq("%s: MD5 and SHA-256 by default (GDBack's data view needs MD5)" % label,
	       json.loads(s["options"]).get("hash"), "md5,sha256")


def scan_i(chk, base, tree, odd=None, below=None):
	"""
	`fidx scan -i -o DB`: the filesystem by number, 2 workers, a relative
	sub-path.  odd, when given, is a listed mount point whose name holds a
	newline and a tab: the table must show it escaped, on one line.  below,
	when given, is another mount point below the tree's filesystem: refused
	as a sub-path, the message naming it and the chosen filesystem.
	"""
	db = os.path.join(base, "out", "scan-i.db")
	os.makedirs(os.path.dirname(db))
	s = Session([lib.FIDX, "scan", "-i", "-o", db], base)
	step = "scan -i: table and first question"
	try:
		n = int(s.expect(PROMPT_FS).group(1))
		rows = table_rows(s.out[:s.pos])
		if [r[0] for r in rows] != list(range(1, n + 1)):
			raise Failure("the question says 1-%d, the table has %s" % (n, lib.short(rows)))
		mount = listed_mount(rows, tree)
		if not mount:
			raise Failure("no listed filesystem holds %s: %s" % (tree, lib.short(rows)))
		chk.ok(step, True)
		if odd is not None:
			shown = odd.replace("\n", "\\n").replace("\t", "\\t")
			chk.ok("scan -i: a mount point with a newline and a tab is shown escaped",
			       any(rest.startswith(shown + "  ") for _, rest in rows),
			       "no row for %r in %s" % (shown, lib.short(rows)))
		step = "scan -i: a wrong filesystem number is asked again"
		for wrong in ("0", str(n + 1), "many"):
			s.send(wrong)
			s.expect(REASON)
			s.expect(PROMPT_FS)
		chk.ok(step, True)
		s.send(str(mount[0]))
		step = "scan -i: a wrong worker count is asked again"
		s.expect(PROMPT_JOBS)
		for wrong in ("0", "zero", "100000"):
			s.send(wrong)
			s.expect(REASON)
			s.expect(PROMPT_JOBS)
		chk.ok(step, True)
		s.send("2")
		step = "scan -i: a missing sub-path is asked again"
		s.expect(PROMPT_SUB)
		s.send("no-such-dir-fidx-e2e/x")
		s.expect(REASON)
		s.expect(PROMPT_SUB)
		chk.ok(step, True)
		if below is not None:
			# a folder of another filesystem mounted below the chosen one
			step = "scan -i: a sub-path on a filesystem mounted below is refused, both named"
			s.send(os.path.relpath(below, mount[1]))
			said = s.expect(REASON).group(0)
			want = ("'%s' is on another filesystem mounted below '%s'" % (
				os.path.relpath(below, mount[1]), mount[1])).encode()
			if want not in said:
				raise Failure("said %r, not %r" % (said, want))
			s.expect(PROMPT_SUB)
			chk.ok(step, True)
		s.send(os.path.relpath(tree, mount[1]))
		step = "scan -i: the scan runs and exits 0"
		st = s.wait()
		if st != 0:
			raise Failure("exit status %d; output ends with %s" % (st, s.tail()))
		chk.ok(step, True)
	except Failure as e:
		chk.ok(step, False, e)
		return
	finally:
		s.close()
	check_db(chk, "scan -i", db, tree, jobs=2)


def bare_fidx(chk, base, tree):
	"""`fidx` alone in a fresh cwd: the mount point typed, default workers, an absolute sub-path."""
	cwd = os.path.join(base, "cwd")
	os.makedirs(cwd)
	s = Session([lib.FIDX], cwd)
	step = "fidx alone: table and first question"
	try:
		s.expect(PROMPT_FS)
		mount = listed_mount(table_rows(s.out[:s.pos]), tree)
		if not mount:
			raise Failure("no listed filesystem holds %s" % tree)
		chk.ok(step, True)
		step = "fidx alone: an unknown mount point is asked again, a listed one taken"
		s.send("/no-such-mount-point-fidx-e2e")
		s.expect(REASON)
		s.expect(PROMPT_FS)
		s.send(mount[1])
		s.expect(PROMPT_JOBS)
		chk.ok(step, True)
		s.send("")
		step = "fidx alone: an absolute sub-path, the scan exits 0"
		s.expect(PROMPT_SUB)
		s.send(tree)
		st = s.wait()
		if st != 0:
			raise Failure("exit status %d; output ends with %s" % (st, s.tail()))
		chk.ok(step, True)
	except Failure as e:
		chk.ok(step, False, e)
		return
	finally:
		s.close()
	check_db(chk, "fidx alone: ./fidx.db", os.path.join(cwd, "fidx.db"), tree)


def end_of_input(chk, base):
	"""`fidx scan -i` where the user presses Ctrl-D at the first question: nothing is scanned."""
	db = os.path.join(base, "eof.db")
	s = Session([lib.FIDX, "scan", "-i", "-o", db], base)
	step = "scan -i: end of input scans nothing"
	try:
		s.expect(PROMPT_FS)
		os.write(s.fd, b"\x04")
		s.expect(REASON)
		st = s.wait(ANSWER_WAIT)
		if st == 0 or os.path.exists(db):
			raise Failure("exit status %d, database %s" % (
				st, "written" if os.path.exists(db) else "absent"))
		chk.ok(step, True)
	except Failure as e:
		chk.ok(step, False, e)
	finally:
		s.close()


def no_terminal(chk, base, args, label, fatal):
	"""
	Runs fidx args with stdin a pipe left open (a fidx that asked would wait on
	it): it must end by itself without asking; with fatal, as a usage error.
	"""
	cwd = tempfile.mkdtemp(dir=base)
	with open(os.path.join(cwd, ".out"), "w+b") as out, \
	     open(os.path.join(cwd, ".err"), "w+b") as err:
		t0 = time.monotonic()
		p = subprocess.Popen([lib.FIDX] + args, cwd=cwd, stdin=subprocess.PIPE,
				     stdout=out, stderr=err, start_new_session=True)
		while p.poll() is None and time.monotonic() - t0 < ANSWER_WAIT:
			time.sleep(0.05)
		hung = p.poll() is None
		if hung:
			os.killpg(p.pid, signal.SIGKILL)
		p.wait()
		p.stdin.close()
		out.seek(0)
		err.seek(0)
		res = lib.Result(p.returncode, out.read(), err.read(), time.monotonic() - t0, hung)
	chk.ok("%s: ends without an answer" % label, not hung,
	       "still running after %d s with stdin open" % ANSWER_WAIT)
	both = res.out + res.err
	chk.ok("%s: asks nothing" % label, b"Filesystem to scan" not in both and
	       b"Worker threads" not in both, "printed %s" % lib.short(both))
	if fatal and not hung:
		lib.check_fatal(chk, label, res)


def main():
	chk = lib.Checker()
	with lib.TempDir() as tmp:
		tree = make_tree(tmp.path)
		odd = os.path.join(os.path.realpath(tmp.path), "odd\nmount\tpoint")
		os.mkdir(odd)
		try:
			if re.match(r"/(dev|proc|run|sys)(/|$)", odd):
				raise OSError("a tmpfs under %s is not listed" % odd.split("/")[1])
			tmp.mount_tmpfs(odd, "1m")
		except (OSError, subprocess.CalledProcessError) as e:
			chk.skip("scan -i: a mount point with a newline and a tab is shown escaped",
				 "cannot mount a listed tmpfs here: %s" % e)
			odd = None
		below = os.path.join(os.path.realpath(tmp.path), "below")
		os.mkdir(below)
		try:
			tmp.mount_tmpfs(below, "1m")
		except (OSError, subprocess.CalledProcessError) as e:
			chk.skip("scan -i: a sub-path on a filesystem mounted below is refused",
				 "cannot mount a tmpfs here: %s" % e)
			below = None
		with chk.guard("scan -i through a terminal"):
			scan_i(chk, tmp.path, tree, odd, below)
		with chk.guard("fidx alone through a terminal"):
			bare_fidx(chk, tmp.path, tree)
		with chk.guard("scan -i, end of input"):
			end_of_input(chk, tmp.path)
		with chk.guard("scan -i without a terminal"):
			no_terminal(chk, tmp.path, ["scan", "-i"], "scan -i without a terminal", True)
		with chk.guard("fidx alone without a terminal"):
			no_terminal(chk, tmp.path, [], "fidx alone without a terminal", False)
	chk.done()


if __name__ == "__main__":
	main()
