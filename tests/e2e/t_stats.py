#!/usr/bin/python3
"""t_stats.py - fidx stats against a ground truth computed with os.lstat.

Builds a tree holding every type (files, directories, symlinks, a FIFO, a
socket, and as root a character and a block device), files of sizes on and
around the powers of two (0, 1, 2, 3, 4, 7, 8, 1023, 1024, ..., a sparse
file of 8 GiB + 5), twenty extensions of different weights (case kept:
'txt' and 'TXT' apart; 'gz' for a.tar.gz; none for README and .bashrc; one
not UTF-8, one with a newline), a file with three hard links, and mtimes set
by hand: before 1970, in the future, and several equal ones (ties go by
path).  Scans it, then checks every number of --json against the walk:

  * entries, errors; count and bytes by type;
  * by extension: count and bytes, the --top largest by bytes (then count,
    then name), the rest in extensions_other; for --top 3, 10, 0 and 1000;
  * the histogram: from the first to the last non-empty bucket, each bucket
    [2^(k-1), 2^k - 1] (and [0, 0]) with its count and bytes;
  * the largest, oldest and newest regular files, with sizes, mtime_ns and
    ISO times;
  * the text form with -b -0: the same figures and paths as --json, paths
    NUL-ended; the default text form gives sizes for people;
  * two roots: one report per scan, by scan id;
  * as nobody (root only): a tree with entries it cannot read: entries,
    errors and types against the rows (SQL), not-stat'ed entries counted
    without bytes;
  * a --no-stat scan and bad --top values are refused.
"""

import base64
import json
import os
import re
import socket
import stat
import time

import lib
from lib import Checker, run_fidx, write

TYPE_ORDER = "fdlpscb"
TYPE_NAMES = {"f": "file", "d": "directory", "l": "symlink", "p": "fifo", "s": "socket",
	      "c": "char device", "b": "block device"}

# (name, size) of the files whose extensions weigh differently
EXT_FILES = [(b"e%02d.x%02d" % (i, i), 1000 * (i + 1)) for i in range(14)] + [
	(b"tie1.same", 5000), (b"tie2.other", 5000), (b"tie3.more", 2500), (b"tie4.more", 2500)]


def build(top):
	"""Builds the test tree; returns its root."""
	root = top + b"/tree"
	os.makedirs(root + b"/sub/deeper")
	os.makedirs(root + b"/exts")
	os.makedirs(root + b"/dir.d")
	sizes = [0, 1, 2, 3, 4, 7, 8, 1023, 1024, 1025, 4095, 4096, 65536, 1 << 20]
	for s in sizes:
		write(root + b"/sub/size%d.bin" % s, b"z" * s)
	lib.sparse(root + b"/sub/deeper/huge.img", (8 << 30) + 5, [(1 << 30, b"data")])
	for name, size in EXT_FILES:
		write(root + b"/exts/" + name, b"e" * size)
	for name in (b"a.txt", b"b.TXT", b"c.tar.gz", b"README", b".bashrc", b"trail.",
		     b"f.\xff\xfe", b"g.a\nb", b"-dash.txt", b" space.txt"):
		write(root + b"/" + name, b"n" * (len(name) * 10))
	write(root + b"/sub/linked.dat", b"L" * 3000)
	os.link(root + b"/sub/linked.dat", root + b"/linked-2.dat")
	os.link(root + b"/sub/linked.dat", root + b"/sub/deeper/linked-3.dat")
	os.symlink(b"sub/size8.bin", root + b"/link")
	os.symlink(b"nowhere", root + b"/dangling")
	os.mkfifo(root + b"/fifo")
	s = socket.socket(socket.AF_UNIX)
	s.bind(root + b"/sock")
	s.close()
	if os.geteuid() == 0:
		os.mknod(root + b"/chr", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
		os.mknod(root + b"/blk", 0o600 | stat.S_IFBLK, os.makedev(7, 200))
	# mtimes: by hand, so that lists have ties, old and future times
	files = sorted(p for p in walk(root) if stat.S_ISREG(os.lstat(p).st_mode))
	for i, p in enumerate(files):
		ns = 1_600_000_000_123_456_789 + (i % 5) * 1_000_000_000
		if i == 3:
			ns = -1_000_000_000_123_456_789  # 1938
		elif i == 4:
			ns = -1  # a nanosecond before 1970
		elif i == 7:
			ns = 4_102_444_800_000_000_001  # 2100
		os.utime(p, ns=(ns, ns))
	lib.settle(root)
	return root


def walk(root):
	"""Every path at and below root (os.lstat, symlinks not followed)."""
	out = [root]
	for name in os.listdir(root):
		p = root + b"/" + name
		if stat.S_ISDIR(os.lstat(p).st_mode):
			out += walk(p)
		else:
			out.append(p)
	return out


def iso(ns):
	"""ns since the epoch as fidx prints it: 2023-11-14T22:13:20.123456789Z."""
	sec, frac = divmod(ns, 10**9)
	return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)) + ".%09dZ" % frac


def bucket(size):
	"""The histogram bucket of a size: 0 for 0, else its bit length."""
	return size.bit_length()


def expected(root, top_n):
	"""The --json report of a scan of root, computed from os.lstat."""
	types = {}
	exts = {}
	hist = {}
	files = []
	paths = walk(root)
	for p in paths:
		st = os.lstat(p)
		t = lib.type_of(st.st_mode)
		c = types.setdefault(t, [0, 0])
		c[0] += 1
		c[1] += st.st_size
		if t != "f":
			continue
		e = exts.setdefault(lib.ext_of(lib.name_of(p)), [0, 0])
		e[0] += 1
		e[1] += st.st_size
		h = hist.setdefault(bucket(st.st_size), [0, 0])
		h[0] += 1
		h[1] += st.st_size
		files.append((p, st.st_size, st.st_mtime_ns))
	order = sorted(exts, key=lambda e: (-exts[e][1], -exts[e][0], e))
	other = order[top_n:]
	lo, hi = min(hist), max(hist)
	return {
		"entries": len(paths), "errors": 0,
		"types": [{"type": t, "name": TYPE_NAMES[t], "count": types[t][0], "bytes": types[t][1]}
			  for t in TYPE_ORDER if t in types],
		"extensions": [{"ext": e, "count": exts[e][0], "bytes": exts[e][1]}
			       for e in order[:top_n]],
		"extensions_other": {"extensions": len(other), "count": sum(exts[e][0] for e in other),
				     "bytes": sum(exts[e][1] for e in other)},
		"histogram": [{"min": (1 << (k - 1)) if k else 0, "max": (1 << k) - 1 if k else 0,
			       "count": hist.get(k, [0, 0])[0], "bytes": hist.get(k, [0, 0])[1]}
			      for k in range(lo, hi + 1)],
		"largest": [{"path": p, "size": s}
			    for p, s, m in sorted(files, key=lambda f: (-f[1], f[0]))[:top_n]],
		"oldest": [{"path": p, "mtime_ns": m, "mtime": iso(m)}
			   for p, s, m in sorted(files, key=lambda f: (f[2], f[0]))[:top_n]],
		"newest": [{"path": p, "mtime_ns": m, "mtime": iso(m)}
			   for p, s, m in sorted(files, key=lambda f: (-f[2], f[0]))[:top_n]],
	}


def decode(obj):
	"""A --json report with every path and extension as exact bytes."""

	def exact(d, key):
		b64 = d.pop(key + "_base64", None)
		d[key] = base64.b64decode(b64) if b64 is not None else d[key].encode()

	for e in obj.get("extensions", []):
		exact(e, "ext")
	for lst in ("largest", "oldest", "newest"):
		for it in obj.get(lst, []):
			exact(it, "path")
	exact(obj, "root")
	return obj


def stats_json(chk, label, *args, **kw):
	"""Runs fidx stats --json with args; returns the decoded reports, or None."""
	res = run_fidx("stats", "--json", *args, **kw)
	if not chk.ok("%s: exit 0, nothing on stderr" % label, res.rc == 0 and not res.err, repr(res)):
		return None
	try:
		return [decode(json.loads(l)) for l in res.out_lines()]
	except ValueError as e:
		chk.ok("%s: one JSON object per line" % label, False, "%s %s" % (e, lib.short(res.out)))
		return None


def compare_report(chk, label, got, want):
	"""One check per section of a report."""
	for key in ("entries", "errors", "types", "extensions", "extensions_other", "histogram",
		    "largest", "oldest", "newest"):
		chk.eq("%s: %s" % (label, key), got.get(key), want[key])


def parse_text(out):
	"""
	Parses the -b -0 text form of one report into the shape of --json (paths
	and extension labels as bytes).  Raises ValueError when it does not parse.
	"""
	pos = 0

	def upto(sep):
		nonlocal pos
		end = out.index(sep, pos)
		piece = out[pos:end]
		pos = end + 1
		return piece

	rep = {}
	m = re.fullmatch(rb"scan (\d+): (.*)", upto(b"\0"), re.S)
	rep["scan"], rep["root"] = int(m[1]), m[2]
	m = re.fullmatch(rb"entries (\d+), with an error (\d+)", upto(b"\n"))
	rep["entries"], rep["errors"] = int(m[1]), int(m[2])
	sections = {}
	while True:
		line = upto(b"\n")
		if not line:
			continue
		head = line.split()[0]
		if head in (b"LARGEST", b"OLDEST", b"NEWEST"):
			rows = []
			while out[pos:pos + 1] not in (b"\n", b""):
				rows.append(upto(b"\0"))
			sections[head] = rows
			if head == b"NEWEST":
				break
			continue
		rows = []
		while True:
			l = upto(b"\n")
			if not l:
				break
			rows.append(l)
		sections[head] = rows
	rep["types"] = []
	for l in sections[b"TYPE"]:
		m = re.fullmatch(rb"(\S+(?: device)?) +(\d+) +(\d+)", l)
		rep["types"].append((m[1].decode(), int(m[2]), int(m[3])))
	rep["extensions"] = []
	for l in sections[b"EXTENSION"]:
		m = re.fullmatch(rb"(.+?) +(\d+) +(\d+)", l)
		rep["extensions"].append((m[1], int(m[2]), int(m[3])))
	rep["histogram"] = [tuple(int(x) for x in l.split()) for l in sections[b"SIZE"]]
	rep["largest"] = [tuple(re.fullmatch(rb" *(\d+)  (/.*)", r, re.S).groups())
			  for r in sections[b"LARGEST"]]
	for k in (b"OLDEST", b"NEWEST"):
		rep[k.decode().lower()] = [tuple(re.fullmatch(rb"(\S+) +(/.*)", r, re.S).groups())
					   for r in sections[k]]
	return rep, pos


def text_of(rep):
	"""The parse_text() shape of a --json report (labels of plain extensions)."""
	exts = [((b"." + e["ext"]) if e["ext"] else b"(none)", e["count"], e["bytes"])
		for e in rep["extensions"]]
	o = rep["extensions_other"]
	if o["extensions"]:
		exts.append((b"(other: %d)" % o["extensions"], o["count"], o["bytes"]))
	return {
		"scan": rep["scan_id"], "root": rep["root"], "entries": rep["entries"],
		"errors": rep["errors"],
		"types": [(t["name"], t["count"], t["bytes"]) for t in rep["types"]],
		"extensions": exts,
		"histogram": [(h["min"], h["max"] + 1, h["count"], h["bytes"]) for h in rep["histogram"]],
		"largest": [(b"%d" % it["size"], it["path"]) for it in rep["largest"]],
		"oldest": [(it["mtime"].encode(), it["path"]) for it in rep["oldest"]],
		"newest": [(it["mtime"].encode(), it["path"]) for it in rep["newest"]],
	}


def check_text(chk, db, report):
	"""The text form with -b -0 against the --json report of the same scan."""
	res = run_fidx("stats", "-b", "-0", db)
	if not chk.ok("text -b -0: exit 0", res.rc == 0 and not res.err, repr(res)):
		return
	try:
		got, end = parse_text(res.out)
	except (ValueError, TypeError, AttributeError) as e:
		chk.ok("text -b -0: parses", False, "%s: %s" % (e, lib.short(res.out)))
		return
	want = text_of(report)
	# an extension that is not printable ASCII is shown escaped, on its one line:
	# compare its figures, and that its label is printable
	plain = lambda label: re.fullmatch(rb"[ -~]+", label) is not None
	exts = []
	for (label, c, b), w in zip(got["extensions"], want["extensions"]):
		exts.append((w[0] if plain(label) and not plain(w[0]) else label, c, b))
	got["extensions"] = exts + got["extensions"][len(exts):]
	for key in want:
		chk.eq("text -b -0: %s" % key, got.get(key), want[key])
	chk.eq("text -b -0: nothing after the report", res.out[end:], b"")
	res = run_fidx("stats", db)
	types = [l for l in res.out_lines() if l.split()[:1] == [b"directory"]]
	d = [t for t in report["types"] if t["type"] == "d"][0]
	chk.ok("text: sizes for people", len(types) == 1 and
	       types[0].split()[-2:] == human(d["bytes"]).encode().split(), lib.short(types))


def human(n):
	"""A size as fidx prints it for people (output.c, fidx_human_size)."""
	units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
	if n < 1024:
		return "%d B" % n
	v, u = float(n), 0
	while v >= 1024 and u < len(units) - 1:
		v /= 1024
		u += 1
	return ("%.1f %s" if v < 9.95 else "%.0f %s") % (v, units[u])


def check_nobody(chk, top):
	"""Entries nobody cannot read: the report against the rows."""
	if os.geteuid() != 0:
		chk.skip("stats as nobody", "not root")
		return
	root = top + b"/locked"
	os.makedirs(root + b"/closed")
	os.makedirs(root + b"/listonly")
	write(root + b"/open.txt", b"o" * 100)
	write(root + b"/closed/c.txt", b"c" * 200)
	write(root + b"/listonly/e.txt", b"e" * 300)
	write(root + b"/listonly/f.dat", b"f" * 400)
	os.chmod(root + b"/closed", 0)
	os.chmod(root + b"/listonly", 0o444)
	dbdir = top + b"/nobody"
	os.mkdir(dbdir)
	os.chown(dbdir, lib.NOBODY, lib.NOBODY)
	db = dbdir + b"/fidx.db"
	res = run_fidx("scan", "-q", "--hash", "none", "-o", db, root, uid=lib.NOBODY)
	chk.ok("nobody: scan exit 1", res.rc == 1, repr(res))
	reps = stats_json(chk, "nobody", db, uid=lib.NOBODY)
	if not reps:
		return
	con = lib.connect(db)
	q = lambda sql: con.execute(sql).fetchall()
	want_types = [{"type": t.decode() if t else None,
		       "name": TYPE_NAMES[t.decode()] if t else "unknown",
		       "count": n, "bytes": b or 0}
		      for t, n, b in q("SELECT type, count(*), sum(size) FROM file GROUP BY type")]
	want_types.sort(key=lambda t: TYPE_ORDER.index(t["type"]) if t["type"] else 99)
	chk.eq("nobody: types against the rows", reps[0]["types"], want_types)
	chk.eq("nobody: entries and errors against the rows",
	       (reps[0]["entries"], reps[0]["errors"]),
	       q("SELECT count(*), count(error) FROM file")[0])
	chk.ok("nobody: some entries were not stat'ed", q("SELECT count(*) FROM file WHERE size IS NULL")[0][0] >= 2, "")
	exts = q("SELECT ext, count(*), sum(size) FROM file WHERE type = 'f' AND size IS NOT NULL"
		 " GROUP BY ext ORDER BY sum(size) DESC")
	chk.eq("nobody: extensions of the files with a size",
	       [(e["ext"], e["count"], e["bytes"]) for e in reps[0]["extensions"]], exts)
	con.close()


def main():
	chk = Checker()
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		os.chmod(top, 0o755)
		root = build(top)
		db = top + b"/fidx.db"
		res = run_fidx("scan", "-q", "--hash", "none", "-o", db, root)
		if not chk.ok("scan the tree", res.rc == 0, repr(res)):
			chk.done()
		report = None
		with chk.guard("reports"):
			for n in (10, 3, 0, 1000):
				args = [] if n == 10 else ["--top", str(n)]
				reps = stats_json(chk, "--top %d" % n, *args, db)
				if reps is None:
					continue
				label = "--top %d" % n
				chk.ok("%s: one report" % label, len(reps) == 1 and reps[0]["scan_id"] == 1 and
				       reps[0]["root"] == root, lib.short(reps))
				compare_report(chk, label, reps[0], expected(root, n))
				if n == 10:
					report = reps[0]
		with chk.guard("text"):
			if report:
				check_text(chk, db, report)
		with chk.guard("scans"):
			other = top + b"/other"
			os.mkdir(other)
			write(other + b"/x.log", b"l" * 77)
			res = run_fidx("scan", "-q", "--hash", "none", "-o", db, other)
			chk.ok("scan a second root", res.rc == 0, repr(res))
			reps = stats_json(chk, "two roots", db)
			if reps is not None:
				chk.eq("two roots: one report per scan, by id",
				       [(r["scan_id"], r["root"]) for r in reps], [(1, root), (2, other)])
				if len(reps) == 2:
					compare_report(chk, "two roots, the second", reps[1], expected(other, 10))
			res = run_fidx("stats", db)
			chk.eq("two roots, text: two reports", res.out.count(b"\nscan ") +
			       res.out.startswith(b"scan "), 2)
			reps = stats_json(chk, "--scan 2", "--scan", "2", db)
			chk.eq("--scan 2: its report alone", reps and [r["scan_id"] for r in reps], [2])
			nostat = top + b"/nostat.db"
			run_fidx("scan", "-q", "--no-stat", "-o", nostat, other)
			lib.check_fatal(chk, "a --no-stat scan", run_fidx("stats", nostat),
					mention=b"--no-stat")
			for v in ("-1", "x", "", "+3", " 3"):
				lib.check_fatal(chk, "--top %r" % v, run_fidx("stats", "--top", v, db),
						mention=b"--top")
			# A count past any list is all of it, as with du -d (one parser).
			huge = run_fidx("stats", "--top", "99999999999", db)
			most = run_fidx("stats", "--top", "2147483647", db)
			chk.ok("--top 99999999999: all, as --top 2147483647", huge.rc == 0 and
			       huge.out == most.out and b"(other" not in huge.out, repr(huge))
		with chk.guard("nobody"):
			check_nobody(chk, top)
	chk.done()


if __name__ == "__main__":
	main()
