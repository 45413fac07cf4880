#!/usr/bin/python3
"""t_du.py - fidx du against coreutils du, directory by directory.

Builds a tree with what du has rules for: hard links within one directory,
across sibling directories and across depths (one file with four names), a
random tree of 60 directories with 40 files hard-linked into random places,
sparse files, symlinks (to a file, to a directory, dangling), a FIFO, empty
files and directories, a directory named 'a-b' beside 'a' (which sorts
between '/a' and '/a/x'), and names with a newline, invalid UTF-8, a leading
space and a leading dash.  Scans it with --hash none, then:

  * for depths 0, 1, 2, 3 and 100: the lines shown are exactly PATH and the
    directories down to that depth (os.lstat walk); each line's apparent and
    allocated sizes equal `du -s --apparent-size -B1 DIR` and `du -s -B1 DIR`
    run on that directory alone; entries equal the walk's count below it;
    depth is its level; errors are 0; lines are sorted by allocated size,
    then path;
  * --sort apparent and --sort path order the same lines their way;
  * the text form with -b -0 holds the same figures in the same order, and
    the default text form gives each size as fidx's human format;
  * PATH: absolute, relative with a trailing '/', with '.' and '..'; a
    regular file shows itself (du -s FILE); a path no scan holds, or above
    the root, is one fatal line naming it;
  * several scans: one block per selected scan (the newest of each root by
    default, --scan for others), PATH picks the scans that hold it;
  * a scan made with --no-stat is refused; bad -d and --sort values too;
  * as nobody (root only): a tree with an unreadable file, directory and a
    list-only directory, scanned and measured by du as nobody: sizes match
    du's (which counts what it could stat, as fidx does), and ERRORS equals
    the rows with an error below each directory.
"""

import base64
import stat
import json
import os
import random
import re
import subprocess

import lib
from lib import Checker, run_fidx, write

HUMAN_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
TEXT_LINE = re.compile(rb" *(\d+) +(\d+|\S+ \S+) +(\d+|\S+ \S+) +(\d+) +(\d+)  (/.*)\Z", re.S)


def human(n):
	"""A size as fidx prints it for people (output.c, fidx_human_size)."""
	if n < 1024:
		return "%d B" % n
	v, u = float(n), 0
	while v >= 1024 and u < len(HUMAN_UNITS) - 1:
		v /= 1024
		u += 1
	return ("%.1f %s" if v < 9.95 else "%.0f %s") % (v, HUMAN_UNITS[u])


def build(top):
	"""Builds the test tree; returns its root (bytes)."""
	root = top + b"/tree"
	for d in (b"a/x/y/z", b"a/empty", b"a-b", b"hl", b"sp", b"links", b"p",
		  b"new\nline", b"bad\xff\xfe", b" space", b"-dash", b"empty", b"deep/1/2/3/4"):
		os.makedirs(root + b"/" + d)
	write(root + b"/a/f1", os.urandom(5000))
	write(root + b"/a/x/f2", os.urandom(100))
	write(root + b"/a/x/y/z/f3", os.urandom(3000))
	write(root + b"/a/zero", b"")
	os.link(root + b"/a/f1", root + b"/a/f1-again")       # within a directory
	os.link(root + b"/a/f1", root + b"/a-b/f1-there")     # across siblings
	write(root + b"/hl/one", os.urandom(70000))
	os.link(root + b"/hl/one", root + b"/hl/two")
	os.link(root + b"/hl/one", root + b"/a/x/y/three")    # across depths
	os.link(root + b"/hl/one", root + b"/deep/1/2/3/4/four")
	lib.sparse(root + b"/sp/ten-mib", 10 << 20, [(5 << 20, b"x" * 5000)])
	lib.sparse(root + b"/sp/one-gib", 1 << 30, [((1 << 30) - 4096, b"y" * 4096)])
	os.symlink(b"../a/f1", root + b"/links/to-file")
	os.symlink(b"../a", root + b"/links/to-dir")
	os.symlink(b"nowhere/at/all" * 10, root + b"/links/dangling")
	os.mkfifo(root + b"/p/fifo")
	write(root + b"/new\nline/n\nfile", os.urandom(1234))
	write(root + b"/bad\xff\xfe/\xffx", os.urandom(4097))
	write(root + b"/ space/ s", os.urandom(10))
	write(root + b"/-dash/-d", os.urandom(4096))

	rng = random.Random(5)
	dirs = [root + b"/rand"]
	os.mkdir(dirs[0])
	for i in range(60):
		d = rng.choice(dirs) + b"/d%d" % i
		os.mkdir(d)
		dirs.append(d)
	files = []
	for i in range(200):
		f = rng.choice(dirs) + b"/f%d" % i
		write(f, os.urandom(rng.choice([0, 1, 100, 4095, 4096, 4097, 20000, 70000])))
		files.append(f)
	for i, f in enumerate(rng.sample(files, 40)):
		for k in range(rng.randint(1, 3)):
			os.link(f, rng.choice(dirs) + b"/h%d-%d" % (i, k))
	lib.settle(root)
	return root


def walk(root):
	"""{directory: (level, entries at and below it)} by os.lstat, and the total entries."""
	out = {}

	def visit(path, level):
		n = 1
		st = os.lstat(path)
		if not stat.S_ISDIR(st.st_mode):
			return 1
		for name in os.listdir(path):
			n += visit(path + b"/" + name, level + 1)
		out[path] = (level, n)
		return n

	visit(root, 0)
	return out


class Du:
	"""coreutils du -s of one path at a time (never several: du shares its hard links)."""

	def __init__(self, uid=None):
		self.uid = uid
		self.cache = {}

	def one(self, args, path):
		"""The first number du prints for path with args."""
		pre = [] if self.uid is None else lib.user_prefix(self.uid)
		p = subprocess.run(pre + ["du", "-s"] + args + ["--", path], capture_output=True)
		return int(p.stdout.split(b"\t", 1)[0])

	def __call__(self, path):
		"""(apparent, allocated) of path."""
		if path not in self.cache:
			self.cache[path] = (self.one(["--apparent-size", "-B1"], path),
					    self.one(["-B1"], path))
		return self.cache[path]


def path_of(obj, key="path"):
	"""The exact bytes of a JSON path member (its base64 form when not UTF-8)."""
	b64 = obj.get(key + "_base64")
	return base64.b64decode(b64) if b64 is not None else obj[key].encode()


def du_json(chk, label, *args, **kw):
	"""Runs fidx du --json -b with args; returns its rows (path as bytes), or None."""
	res = run_fidx("du", "--json", *args, **kw)
	if not chk.ok("%s: exit 0, nothing on stderr" % label, res.rc == 0 and not res.err,
		      repr(res)):
		return None
	rows = []
	try:
		for line in res.out_lines():
			r = json.loads(line)
			r["path"] = path_of(r)
			rows.append(r)
	except ValueError as e:
		chk.ok("%s: one JSON object per line" % label, False, "%s: %s" % (e, lib.short(res.out)))
		return None
	return rows


def check_rows(chk, label, rows, want_dirs, du, entries=None, depth_of=None):
	"""
	Checks rows against du for each path, and that they are exactly want_dirs;
	entries maps a path to its expected entries (errors then 0), depth_of to
	its expected level.
	"""
	got = [r["path"] for r in rows]
	chk.eq("%s: the directories shown" % label, sorted(got), sorted(want_dirs))
	chk.ok("%s: each once" % label, len(got) == len(set(got)), lib.short(got))
	bad = []
	for r in rows:
		a, b = du(r["path"])
		if (r["apparent"], r["allocated"]) != (a, b):
			bad.append("%r fidx %d/%d du %d/%d" % (r["path"], r["apparent"], r["allocated"], a, b))
	chk.ok("%s: apparent and allocated = du -s --apparent-size -B1 / du -s -B1 of each (%d)" %
	       (label, len(rows)), not bad, "; ".join(bad[:4]))
	if entries is not None:
		bad = [(r["path"], r["entries"], entries[r["path"]]) for r in rows
		       if r["entries"] != entries[r["path"]] or r["errors"] != 0]
		chk.ok("%s: entries = the walk's count below each, errors 0" % label, not bad,
		       lib.short(bad[:4]))
	if depth_of is not None:
		bad = [(r["path"], r["depth"]) for r in rows if r["depth"] != depth_of(r["path"])]
		chk.ok("%s: depth of each line" % label, not bad, lib.short(bad[:4]))


def sort_key(mode):
	"""The order of lines that --sort mode promises."""
	if mode == "path":
		return lambda r: r["path"]
	return lambda r: (-r[mode], r["path"])


def check_depths(chk, db, root, tree, du):
	"""The whole tree at several depths, every order, the text forms."""
	entries = {p: n for p, (lvl, n) in tree.items()}
	for depth in (0, 1, 2, 3, 100):
		label = "-d %d" % depth
		rows = du_json(chk, label, "-b", "-d", str(depth), db)
		if rows is None:
			continue
		want = [p for p, (lvl, n) in tree.items() if lvl <= depth]
		check_rows(chk, label, rows, want, du, entries, lambda p: tree[p][0])
		chk.ok("%s: sorted by allocated size, then path" % label,
		       rows == sorted(rows, key=sort_key("allocated")),
		       lib.short([(r["allocated"], r["path"]) for r in rows[:6]]))
		chk.ok("%s: scan 1 on every line" % label, all(r["scan_id"] == 1 for r in rows), "")

	for mode in ("apparent", "path", "allocated"):
		rows = du_json(chk, "--sort " + mode, "-d", "100", "--sort", mode, db)
		if rows is not None:
			chk.ok("--sort %s: the order" % mode, rows == sorted(rows, key=sort_key(mode)),
			       lib.short([r["path"] for r in rows[:6]]))
			chk.eq("--sort %s: the same lines" % mode, len(rows), len(tree))

	# the text forms, against the JSON lines
	rows = du_json(chk, "json -d 2", "-d", "2", db) or []
	want = [(r["scan_id"], r["apparent"], r["allocated"], r["entries"], r["errors"], r["path"])
		for r in rows]
	res = run_fidx("du", "-b", "-0", "-d", "2", db)
	head, _, body = res.out.partition(b"\n")
	chk.ok("text: header", head.split() == [b"SCAN", b"APPARENT", b"ALLOCATED", b"ENTRIES",
					       b"ERRORS", b"PATH"], lib.short(head))
	recs = body.split(b"\0")
	chk.ok("text -0: every record NUL-ended", res.rc == 0 and recs[-1] == b"", lib.short(body[-40:]))
	got = []
	for rec in recs[:-1]:
		m = TEXT_LINE.match(rec)
		got.append(m and (int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), m[6]))
	chk.ok("text -b -0: the figures and paths of --json, in order", got == want and want,
	       "got %s want %s" % (lib.short(got[:3]), lib.short(want[:3])))
	res = run_fidx("du", "-0", "-d", "2", db)
	recs = res.out.partition(b"\n")[2].split(b"\0")[:-1]
	got = []
	for rec in recs:
		m = TEXT_LINE.match(rec)
		got.append(m and (m[2].decode(), m[3].decode(), m[6]))
	chk.ok("text: sizes for people (1.5 KiB)",
	       got == [(human(w[1]), human(w[2]), w[5]) for w in want],
	       lib.short(got[:4]))


def check_paths(chk, db, top, root, tree, du):
	"""PATH: absolute, relative, a file, missing, above the root."""
	a = root + b"/a"
	want = [p for p in tree if p == a or (p.startswith(a + b"/") and p.count(b"/") == a.count(b"/") + 1)]
	depth_of = lambda p: p.count(b"/") - a.count(b"/")
	entries = {p: n for p, (lvl, n) in tree.items()}
	rows = du_json(chk, "PATH absolute", "-b", db, a)
	if rows is not None:
		check_rows(chk, "PATH absolute", rows, want, du, entries, depth_of)
	for rel in (b"tree/a/", b"./tree/x/../a/."):
		rows = du_json(chk, "PATH %r" % rel, "-b", db, rel, cwd=top)
		if rows is not None:
			chk.eq("PATH %r: taken from the working directory" % rel,
			       sorted(r["path"] for r in rows), sorted(want))
	rows = du_json(chk, "--db and PATH", "--db", db, "-d", "0", root + b"/a-b")
	if rows is not None:
		check_rows(chk, "--db and PATH", rows, [root + b"/a-b"], du, entries)
	f = root + b"/hl/one"
	rows = du_json(chk, "PATH a file", "-b", db, f)
	if rows is not None:
		check_rows(chk, "PATH a file", rows, [f], du)
		chk.ok("PATH a file: entries 1, depth 0",
		       rows and rows[0]["entries"] == 1 and rows[0]["depth"] == 0, lib.short(rows))
	name = root + b"/new\nline"
	rows = du_json(chk, "PATH with a newline", "-d", "0", db, name)
	if rows is not None:
		check_rows(chk, "PATH with a newline", rows, [name], du, entries)
	for bad, label in ((root + b"/nope", "a path not in the scan"), (top, "above the root"),
			   (root + b"/links/to-dir/x", "through a symlink")):
		res = run_fidx("du", db, bad)
		lib.check_fatal(chk, "PATH %s" % label, res, mention=bad)
		chk.ok("PATH %s: nothing on stdout" % label, res.out == b"", lib.short(res.out))


def check_scans(chk, top, root, du):
	"""Several scans and roots; --no-stat refused."""
	other = top + b"/other"
	os.makedirs(other + b"/sub")
	write(other + b"/sub/o", os.urandom(9000))
	db = top + b"/multi.db"
	for r in (root, other, root):
		res = run_fidx("scan", "-q", "--hash", "none", "-o", db, r)
		chk.ok("scan %r into multi.db" % r, res.rc == 0, repr(res))
	rows = du_json(chk, "two roots", "-b", "-d", "0", db)
	if rows is not None:
		chk.eq("two roots: the newest scan of each, by scan id",
		       [(r["scan_id"], r["path"]) for r in rows], [(2, other), (3, root)])
		check_rows(chk, "two roots", rows, [other, root], du)
	rows = du_json(chk, "--scan 1,2", "-b", "-d", "1", "--scan", "1,2", db)
	if rows is not None:
		chk.eq("--scan 1,2: its blocks in scan order",
		       [r["scan_id"] for r in rows], sorted(r["scan_id"] for r in rows))
		chk.eq("--scan 1,2: both roots", sorted(set((r["scan_id"], r["path"]) for r in rows
							     if r["depth"] == 0)),
		       [(1, root), (2, other)])
	rows = du_json(chk, "PATH in one root", "-d", "0", db, other + b"/sub")
	if rows is not None:
		chk.eq("PATH in one root: only its scan", [(r["scan_id"], r["path"]) for r in rows],
		       [(2, other + b"/sub")])
	rows = du_json(chk, "--scan 1,3 PATH", "-b", "-d", "0", "--scan", "1,3", db, root + b"/hl")
	if rows is not None:
		chk.ok("--scan 1,3 PATH: one line per scan, the same figures",
		       [r["scan_id"] for r in rows] == [1, 3] and
		       rows[0]["allocated"] == rows[1]["allocated"] == du(root + b"/hl")[1],
		       lib.short(rows))
	res = run_fidx("du", "-d", "0", db)
	chk.ok("text, two roots: one header", res.rc == 0 and
	       res.out.count(b"ALLOCATED") == 1 and len(res.out_lines()) == 3, lib.short(res.out))

	nostat = top + b"/nostat.db"
	res = run_fidx("scan", "-q", "--no-stat", "-o", nostat, other)
	chk.ok("scan --no-stat", res.rc == 0, repr(res))
	lib.check_fatal(chk, "a --no-stat scan", run_fidx("du", nostat), mention=b"--no-stat")
	for args, label in ((["-d", "-1"], "-d -1"), (["-d", "x"], "-d x"),
			    (["--sort", "size"], "--sort size"), (["-d"], "-d without N")):
		lib.check_fatal(chk, label, run_fidx("du", *args, db))
	res = run_fidx("du", db, root, root)
	lib.check_fatal(chk, "three arguments", res)
	# A depth past any tree is every level, as with stats --top (one parser).
	huge, most = run_fidx("du", "-d", "99999999999", db), run_fidx("du", "-d", "2147483647", db)
	chk.ok("-d 99999999999: every level, as -d 2147483647", huge.rc == 0 and
	       huge.out == most.out and most.out.count(b"\n") > 3, repr(huge))


def check_nobody(chk, top):
	"""Unreadable entries: du and fidx, both as nobody, count what they could stat."""
	if os.geteuid() != 0:
		chk.skip("du as nobody", "not root")
		return
	root = top + b"/locked"
	os.makedirs(root + b"/open/sub")
	os.makedirs(root + b"/closed/inner")
	os.makedirs(root + b"/listonly")
	write(root + b"/open/a", os.urandom(6000))
	write(root + b"/open/sub/b", os.urandom(300))
	write(root + b"/secret", os.urandom(5000))
	write(root + b"/closed/c", os.urandom(7000))
	write(root + b"/listonly/e", os.urandom(8000))
	os.chmod(root + b"/secret", 0)
	os.chmod(root + b"/closed", 0)
	os.chmod(root + b"/listonly", 0o444)
	dbdir = top + b"/nobody"
	os.mkdir(dbdir)
	os.chown(dbdir, lib.NOBODY, lib.NOBODY)
	db = dbdir + b"/fidx.db"
	res = run_fidx("scan", "-q", "--hash", "none", "-o", db, root, uid=lib.NOBODY)
	chk.ok("nobody: scan exit 1 (errors recorded)", res.rc == 1, repr(res))
	rows = du_json(chk, "nobody", "-b", "-d", "5", db, uid=lib.NOBODY)
	if rows is None:
		return
	want = [root, root + b"/open", root + b"/open/sub", root + b"/closed", root + b"/listonly"]
	check_rows(chk, "nobody", rows, want, Du(lib.NOBODY))
	con = lib.connect(db)
	bad = []
	for r in rows:
		p = r["path"]
		n = con.execute("SELECT count(*) FROM file WHERE scan_id = 1 AND error IS NOT NULL"
				" AND (CAST(path AS BLOB) = ? OR substr(CAST(path AS BLOB), 1, ?) = ?)",
				(p, len(p) + 1, p + b"/")).fetchone()[0]
		if n != r["errors"]:
			bad.append((p, r["errors"], n))
	total = con.execute("SELECT errors FROM scan WHERE id = 1").fetchone()[0]
	con.close()
	chk.ok("nobody: errors = the rows with an error below each", not bad, lib.short(bad))
	chk.ok("nobody: the root counts every error of the scan (%r)" % total,
	       rows and rows[0]["path"] == root and rows[0]["errors"] == total and total >= 2,
	       lib.short(rows[:1]))


def main():
	chk = Checker()
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		os.chmod(top, 0o755)
		root = build(top)
		tree = walk(root)
		db = top + b"/fidx.db"
		res = run_fidx("scan", "-q", "--hash", "none", "-o", db, root)
		if not chk.ok("scan the tree", res.rc == 0, repr(res)):
			chk.done()
		du = Du()
		with chk.guard("depths"):
			check_depths(chk, db, root, tree, du)
		with chk.guard("paths"):
			check_paths(chk, db, top, root, tree, du)
		with chk.guard("scans"):
			check_scans(chk, top, root, du)
		with chk.guard("nobody"):
			check_nobody(chk, top)
	chk.done()


if __name__ == "__main__":
	main()
