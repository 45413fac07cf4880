#!/usr/bin/python3
"""t_allocsites.py - an allocation that fails at any call site of fidx's code ends cleanly.

t_failures.py fails allocations by their number over a whole run: the sites
that allocate early are hit, most others never.  This script fails them by
site.  It drives BUILD/allocfail/fidx (beside $FIDX; the Makefile links it
from the same objects with tests/alloc/wrap.c and -Wl,--wrap for each
allocating libc function), where a site is the return address of an
allocation call as an offset in the executable:

  1. One run of each command below with FIDX_ALLOC_SITES collects the sites
     it reaches (fidx's own code only: --wrap does not reach the
     allocations inside SQLite, libcrypto or libc, which t_failures.py's
     count-based runs cover).
  2. Then one run per site with FIDX_ALLOC_FAIL_SITE=SITE: the first call
     from that site fails with ENOMEM (with FIDX_ALLOC_ALL=1, a site called
     more than once also fails at its last call, in a run of its own).  The
     wrapper says whether the failure fired; a site a run did not reach
     again (threads) is counted, not judged.

The tree: files, folders, a symlink, hard links, identical files, and a
file fidx cannot read (the commands run as nobody when the script runs as
root), changed after the baseline scan so that check and a rescan see
differences.  The commands and what each outcome must be:

  * scan into a new database, scan into one that holds a complete scan:
    exit 0 or 1 only with the summary "complete" and a complete last row
    holding every entry whose seal verifies; exit 2 with exactly one
    "fidx: " line, no summary, and the new row not complete; the earlier
    scan complete and its seal intact either way.
  * dupes, check, du, find, export --format csv and hashdeep, verify (read-only on the
    database): the unfailed run's exit status and stdout, byte for byte, with
    nothing on stderr but what it had and warnings; or exit 2 (18 for check:
    the database cannot be read) with exactly one "fidx: " line.  Never exit 0 (or the clean status) with another
    output.  The database is left byte for byte as it was, and the scratch
    database of check is gone from $TMPDIR.
  * report -o FILE --no-dupes: as a query, and the page the same as the
    unfailed run's; on failure no FILE and no temporary file left.

By default (make check) every site of the two scans and every third site of
the other commands are failed; FIDX_ALLOC_ALL=1 (make alloc-check) fails
every site, and the last call of the sites called more than once.  Each
wrong outcome names its site as function, file and line (addr2line).
Skipped on a sanitizer build (its allocator is not the one wrapped, and
it is not built there).
"""

import os
import shutil
import struct
import subprocess
import time

import lib
from lib import Checker, TempDir, run_fidx, write

ALLOCFAIL = os.path.join(os.path.dirname(os.path.abspath(lib.FIDX)), "allocfail", "fidx")
FULL = os.environ.get("FIDX_ALLOC_ALL") == "1"
ONLY = os.environ.get("FIDX_ALLOC_ONLY")  # one command's label, to study it alone


def make_tree(root):
	"""The tree: folders, files, identical files, hard links, a symlink, an unreadable file."""
	for d in ("a", "a/b", "c"):
		os.makedirs(os.path.join(root, d))
	for i in range(12):
		write("%s/a/f%02d.txt" % (root, i), b"x" * (i * 37))
	for i in range(4):
		write("%s/c/same%d.bin" % (root, i), b"the same content\n" * 100)
		write("%s/a/b/g%d" % (root, i), bytes(range(i, i + 50)))
	os.link(root + "/a/f05.txt", root + "/c/hard5")
	os.link(root + "/a/f05.txt", root + "/a/b/hard5")
	os.symlink("../a/f01.txt", root + "/c/link")
	write(root + "/c/secret", b"no one reads this")
	os.chmod(root + "/c/secret", 0)


def change_tree(root):
	"""What check and a rescan find: one file grown, one added, one removed."""
	with open(root + "/a/f03.txt", "ab") as f:
		f.write(b"more")
	write(root + "/a/b/new", b"new file")
	os.unlink(root + "/a/f11.txt")


def entries_of(root):
	"""Every entry under and including root (what a complete scan holds)."""
	n = 1
	for _, dirs, files in os.walk(root):
		n += len(dirs) + len(files)
	return n


def link_base(path):
	"""The address the executable's first byte is linked at (0 for a PIE), from its ELF header."""
	with open(path, "rb") as f:
		head = f.read(64)
		etype = struct.unpack_from("<H", head, 16)[0]
		if etype == 3:  # ET_DYN: offsets are addresses
			return 0
		phoff, = struct.unpack_from("<Q", head, 32)
		phentsize, phnum = struct.unpack_from("<HH", head, 54)
		f.seek(phoff)
		table = f.read(phentsize * phnum)
	loads = [struct.unpack_from("<Q", table, i * phentsize + 16)[0]
		 for i in range(phnum) if struct.unpack_from("<I", table, i * phentsize)[0] == 1]
	return min(loads)


def where(offsets):
	"""{offset: 'function at file:line (inlined in ...)'} for the sites, through addr2line."""
	if not offsets:
		return {}
	base = link_base(ALLOCFAIL)
	out = subprocess.run(["addr2line", "-a", "-f", "-i", "-p", "-e", ALLOCFAIL] +
			     ["%#x" % (base + o - 1) for o in offsets],  # the call, not the return
			     capture_output=True, text=True).stdout
	names, cur = {}, None
	for line in out.splitlines():
		if line.startswith("0x"):
			addr, _, rest = line.partition(": ")
			cur = int(addr, 16) - base + 1
			names[cur] = rest.replace(os.getcwd() + "/", "")
		elif cur is not None:
			names[cur] += " " + line.strip().replace(os.getcwd() + "/", "")
	return names


def read_sites(path):
	"""(sites {offset: (calls, function)}, fired, lost) from a FIDX_ALLOC_SITES file."""
	sites, fired, lost = {}, False, 0
	try:
		with open(path) as f:
			for line in f:
				w = line.split()
				if w[0] == "fired":
					fired = True
				elif w[0] == "lost":
					lost = int(w[1])
				else:
					sites[int(w[0], 16)] = (int(w[1]), w[2])
	except FileNotFoundError:
		pass
	return sites, fired, lost


class Command:
	"""One command under test: how to run it and how to judge a run."""

	def __init__(self, label, args, kind, template=None, every=3, fatal=2):
		self.label = label        # its name in the checks
		self.args = args          # its arguments; "@DB" stands for the work database
		self.kind = kind          # "scan", "query" or "report"
		self.template = template  # the database copied to the work database first, or None
		# (its arguments name the work database and the tree relatively: a run starts in
		# the work folder, so that the paths made absolute are failed too)
		self.every = every        # in the short run, one site in every this many
		self.fatal = fatal        # its exit status for a failure (check's is 18)


class Bench:
	"""The work folder, the tree and the runs of one command at a time."""

	def __init__(self, top, uid):
		self.top = top
		self.uid = uid
		self.work = top + "/work"
		self.tmp = top + "/tmp"        # $TMPDIR of every run: scratch databases go here
		self.root = top + "/tree"
		os.mkdir(self.work)
		os.mkdir(self.tmp)
		if uid is not None:
			os.chmod(top, 0o755)
			for d in (self.work, self.tmp):
				os.chown(d, uid, uid)
		self.db = self.work + "/work.db"
		self.sites_file = self.work + "/sites"
		self.page = self.work + "/report.html"

	def clear(self, template):
		"""Removes what a run left in the work folder; copies template to the work database."""
		for name in os.listdir(self.work):
			os.unlink(os.path.join(self.work, name))
		if template:
			shutil.copy(template, self.db)
			if self.uid is not None:
				os.chown(self.db, self.uid, self.uid)

	def run(self, cmd, fail=None):
		"""Runs cmd under the allocfail binary (failing the site fail); returns (Result, sites file)."""
		self.clear(cmd.template)
		env = {"FIDX_ALLOC_SITES": self.sites_file, "TMPDIR": self.tmp}
		if fail:
			env["FIDX_ALLOC_FAIL_SITE"] = fail
		saved = lib.FIDX
		lib.FIDX = ALLOCFAIL
		try:
			res = run_fidx(*cmd.args, env=env, uid=self.uid, timeout=60, cwd=self.work)
		finally:
			lib.FIDX = saved
		return res, read_sites(self.sites_file)


def scan_rows(db):
	"""[(status, entries)] of db's scans, or None when it cannot be read."""
	try:
		return [(s["status"], s["entries"]) for s in lib.scan_rows(db)]
	except Exception:
		return None


def seal_problems(db):
	"""What `fidx verify --all` finds wrong with the complete scans of db."""
	res = run_fidx("verify", "--all", db)
	return [] if res.rc == 0 else ["verify --all: exit %d: %r" % (res.rc, res.err[-200:])]


def one_error_line(res, clean):
	"""
	Whether stderr is exactly one line starting 'fidx: ' beyond the warnings
	the unfailed run gave too (scan's that it does not run as root).
	"""
	lines = [l for l in res.err_lines() if l not in clean.err_lines()]
	return len(lines) == 1 and lines[0].startswith(b"fidx: ")


def judge_scan(bench, cmd, res, clean, want, earlier):
	"""Problems of one scan run (t_failures.py's rules, the earlier scans kept whole)."""
	bad = []
	rows = scan_rows(bench.db)
	summary = any(l.startswith(b"scan ") and b" complete: " in l for l in res.out_lines())
	if res.rc in (0, 1):
		if res.rc != clean.rc or not summary or rows != earlier + [("complete", want)]:
			bad.append("exit %d, summary %r, rows %r" % (res.rc, summary, rows))
		bad += seal_problems(bench.db)
	elif res.rc == 2:
		if summary or not one_error_line(res, clean):
			bad.append("exit 2, summary %r, stderr %r" % (summary, res.err[-300:]))
		if rows is not None and rows[:len(earlier)] != earlier:
			bad.append("exit 2, the earlier scans are now %r" % rows)
		if rows and len(rows) > len(earlier) and rows[-1][0] == "complete":
			bad.append("exit 2 but the row says complete: %r" % rows)
		if rows is not None and earlier:
			bad += seal_problems(bench.db)
	else:
		bad.append("exit %d: %r" % (res.rc, res.err[-300:]))
	return bad


def judge_query(bench, cmd, res, clean, before, clean_page):
	"""Problems of one run of a read-only command or of report."""
	bad = []
	warnings_only = all(l.startswith(b"fidx: warning: ") for l in res.err_lines()
			    if l not in clean.err_lines())
	if res.rc == clean.rc and res.rc != cmd.fatal:
		if res.out != clean.out:
			bad.append("exit %d with another output (%d bytes, not %d): %r" %
				   (res.rc, len(res.out), len(clean.out), res.out[-200:]))
		if not warnings_only:
			bad.append("exit %d with stderr %r" % (res.rc, res.err[-300:]))
		if cmd.kind == "report":
			page = lib.read_bytes(bench.page) if os.path.exists(bench.page) else None
			if page != clean_page:
				bad.append("exit %d, the page differs (%s bytes)" %
					   (res.rc, None if page is None else len(page)))
	elif res.rc == cmd.fatal:
		if not one_error_line(res, clean):
			bad.append("exit %d, stderr %r" % (res.rc, res.err[-300:]))
		if cmd.kind == "report":
			left = sorted(n for n in os.listdir(bench.work) if n not in ("work.db", "sites"))
			if left:
				bad.append("exit 2, left behind: %r" % left)
	else:
		bad.append("exit %d (clean: %d): %r" % (res.rc, clean.rc, res.err[-300:]))
	if cmd.template and lib.read_bytes(bench.db) != before:
		bad.append("exit %d, the database changed" % res.rc)
	if os.listdir(bench.tmp):
		bad.append("exit %d, left in $TMPDIR: %r" % (res.rc, os.listdir(bench.tmp)))
		for name in os.listdir(bench.tmp):
			path = os.path.join(bench.tmp, name)
			(shutil.rmtree if os.path.isdir(path) else os.unlink)(path)
	return bad


def points(sites, cmd):
	"""The failures to inject: OFFSET[:NTH] strings, the short or the full choice."""
	order = sorted(sites)
	if not FULL:
		return ["%#x" % o for i, o in enumerate(order) if i % cmd.every == 0]
	out = []
	for o in order:
		out.append("%#x" % o)
		if sites[o][0] > 1:
			out.append("%#x:%d" % (o, sites[o][0]))
	return out


def sweep(chk, bench, cmd, want, earlier, figures):
	"""Collects cmd's sites, fails them in turn, checks each outcome; adds to figures."""
	t0 = time.monotonic()
	clean, (sites, _, lost) = bench.run(cmd)
	before = lib.read_bytes(bench.db) if cmd.template else None
	clean_page = lib.read_bytes(bench.page) if cmd.kind == "report" and \
		os.path.exists(bench.page) else None
	chk.ok("%s: the unfailed run works and its sites are counted" % cmd.label,
	       0 <= clean.rc != cmd.fatal and len(sites) > 10 and not lost and
	       (cmd.kind != "report" or clean_page),
	       "%r, %d sites, %d calls lost" % (clean, len(sites), lost))
	if cmd.kind == "scan":
		chk.eq("%s: the unfailed run is complete" % cmd.label, scan_rows(bench.db),
		       earlier + [("complete", want)])
	problems, runs, missed = {}, 0, 0
	for fail in points(sites, cmd):
		res, (_, fired, _) = bench.run(cmd, fail)
		runs += 1
		if res.timed_out:
			bad = ["hung"]
		elif res.rc < 0:
			bad = ["killed by signal %d: %r" % (-res.rc, res.err[-300:])]
		elif not fired:
			missed += 1
			continue
		elif cmd.kind == "scan":
			bad = judge_scan(bench, cmd, res, clean, want, earlier)
		else:
			bad = judge_query(bench, cmd, res, clean, before, clean_page)
		if bad:
			problems[fail] = bad
	names = where(sorted({int(f.split(":")[0], 16) for f in problems}))
	said = ["%s (%s): %s" % (f, names.get(int(f.split(":")[0], 16), "?"), "; ".join(b))
		for f, b in problems.items()]
	took = time.monotonic() - t0
	figures.append((cmd.label, len(sites), runs, missed, len(problems), took))
	print("# %s: %d sites, %d runs (%d not reached again), %d wrong, %.1f s" %
	      (cmd.label, len(sites), runs, missed, len(problems), took), flush=True)
	chk.ok("%s: %d runs, each a failure at one allocation site, every outcome clean" %
	       (cmd.label, runs), not problems, "%d wrong: %s" % (len(problems), " | ".join(said)))
	chk.ok("%s: the failures fired" % cmd.label, runs == 0 or missed < runs / 4,
	       "%d of %d runs did not reach their site" % (missed, runs))


def main():
	chk = Checker()
	if lib.is_asan() or not os.path.exists(ALLOCFAIL) or \
	   b"libasan" in subprocess.run(["ldd", lib.FIDX], capture_output=True).stdout:
		chk.skip("allocation failure at every site",
			 "a sanitizer build, or no %s (make BUILD/allocfail/fidx)" % ALLOCFAIL)
		chk.done()
	uid = lib.NOBODY if os.geteuid() == 0 else None
	with TempDir() as td:
		top = td.path if isinstance(td.path, str) else td.path.decode()
		bench = Bench(top, uid)
		make_tree(bench.root)
		base = top + "/base.db"
		res = run_fidx("scan", "-q", "--hash", "sha256,md5", "--db", bench.work + "/b.db",
			       bench.root, uid=uid)
		chk.eq("the baseline scan records the unreadable file (exit 1)", res.rc, 1)
		shutil.move(bench.work + "/b.db", base)
		change_tree(bench.root)
		want = entries_of(bench.root)
		db = "work.db"  # relative, as are scan's roots: the runs start in the work folder
		rel = "../tree"
		commands = [
			Command("scan", ["scan", "-q", "-j", "2", "--db", db, rel], "scan"),
			Command("rescan", ["scan", "-q", "-j", "2", "--db", db, rel], "scan", base),
			Command("dupes", ["dupes", db], "query", base),
			Command("check", ["check", db, bench.root], "query", base, fatal=18),
			Command("du", ["du", "-d", "5", db], "query", base),
			Command("find", ["find", "--long", db, "f0"], "query", base),
			Command("export", ["export", "--format", "csv", db], "query", base),
			Command("export hashdeep", ["export", "--format", "hashdeep", db], "query",
				base),
			Command("report", ["report", "-o", bench.page, "--no-dupes", db], "report",
				base),
			Command("verify", ["verify", db], "query", base),
		]
		for c in commands:
			if c.kind == "scan":
				c.every = 1
		earlier = {"scan": [], "rescan": [("complete", scan_rows(base)[0][1])]}
		figures = []
		for cmd in commands:
			if ONLY and cmd.label != ONLY:
				continue
			with chk.guard(cmd.label):
				sweep(chk, bench, cmd, want, earlier.get(cmd.label, []), figures)
		print("# total: %d runs over %d sites in %.1f s (%s)" %
		      (sum(f[2] for f in figures), sum(f[1] for f in figures),
		       sum(f[5] for f in figures), "every site" if FULL else "short"), flush=True)
	chk.done()


if __name__ == "__main__":
	main()
