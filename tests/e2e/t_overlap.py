#!/usr/bin/python3
"""t_overlap.py - scans of nested roots, and of no digests: one row per path by default.

A tree T and a folder S inside it are scanned in both orders into one
database (`fidx scan T` then `fidx scan T/S` after S changed, and then T again
over both); every query command must then show each path of the tree once,
from the newest scan whose tree holds it (docs/SCHEMA.md, "The scans shown"),
with the ground truth taken from the tree itself (os.lstat, hashlib, du(1)):

  * find lists every path once; export sha256sum and csv write each file
    once, with the digest of its content as the newest scan saw it, and
    the scan it came from; match finds each listed file once; dupes groups
    by the contents shown; stats counts each path in one scan; du's figures
    for T are `du -s` of T, with S's newer rows in them, and S has no block
    of its own; the GDBack view `data` holds each non-directory once;
  * `fidx dupes --db DB T/S` (which records a scan with no digests) does not
    break `fidx export --format sha256sum` (T's scan covers S), while a root
    of which no scan has digests makes export name the scans to use;
  * --scan still shows the scans named, whole.

The old behaviour this replaces: every path under S listed twice, and export
failing with "scan N has no sha256 digests" after a dupes scan.
"""

import csv
import hashlib
import io
import json
import os
import subprocess

import lib
from lib import Checker, TempDir, run_fidx, write


def build(top):
	"""T with a folder S (its own files, duplicates of files outside it, a link)."""
	t = top + b"/T"
	s = t + b"/S"
	os.makedirs(s + b"/deep")
	os.makedirs(t + b"/other")
	write(t + b"/top.txt", b"top")
	write(t + b"/other/copy", b"shared content")
	write(s + b"/orig", b"shared content")
	write(s + b"/deep/changes", b"before")
	write(s + b"/name\nwith newline", b"odd")
	os.symlink(b"orig", s + b"/link")
	return t, s


def walk(root):
	"""{path: (type letter, sha256 or None)} of every entry under and including root."""
	out = {}
	for dirpath, dirs, files in os.walk(root):
		out[dirpath] = ("d", None)
		for n in dirs:
			p = os.path.join(dirpath, n)
			if os.path.islink(p):
				out[p] = ("l", None)
		for n in files:
			p = os.path.join(dirpath, n)
			if os.path.islink(p):
				out[p] = ("l", None)
			else:
				with open(p, "rb") as f:
					out[p] = ("f", hashlib.sha256(f.read()).hexdigest())
	return out


def under(path, root):
	"""Whether path is root or below it (bytes)."""
	return path == root or path.startswith(root + b"/")


def parse_sums(out):
	"""{path: [digest, ...]} of sha256sum lines (coreutils' escapes undone)."""
	sums = {}
	for l in out.split(b"\n"):
		if not l:
			continue
		esc = l.startswith(b"\\")
		d, _, p = (l[1:] if esc else l).partition(b"  ")
		if esc:
			p = p.replace(b"\\n", b"\n").replace(b"\\r", b"\r").replace(b"\\\\", b"\\")
		sums.setdefault(p, []).append(d.decode())
	return sums


def lines(res):
	"""Non-empty output lines, or NUL-separated records with -0."""
	return [l for l in res.out.split(b"\n") if l]


def check_shown(chk, label, db, want, src):
	"""Every command shows each path of want once; src(path) is the scan it comes from."""
	files = {p: d for p, (t, d) in want.items() if t == "f"}
	res = run_fidx("find", "-0", db)
	got = [p for p in res.out.split(b"\0") if p]
	chk.eq("%s: find lists every path once" % label, (res.rc, sorted(got)),
	       (0, sorted(want)))

	res = run_fidx("export", "--format", "csv", db)
	rows = list(csv.DictReader(io.StringIO(res.out.decode("utf-8", "surrogateescape"))))
	got = {}
	for r in rows:
		got.setdefault(os.fsencode(r["path"]), []).append((int(r["scan_id"]), r["sha256"] or None))
	want_csv = {p: [(src(p), d)] for p, (t, d) in want.items()}
	chk.eq("%s: export csv: each path once, from its scan, with the digest shown" % label,
	       got, want_csv)

	res = run_fidx("export", "--format", "jsonl", db)
	paths = [json.loads(l)["path"] for l in res.out.split(b"\n") if l]
	chk.eq("%s: export jsonl: each path once" % label, len(paths), len(set(paths)))

	res = run_fidx("export", "--format", "sha256sum", db)
	chk.eq("%s: export sha256sum: exit 0" % label, (res.rc, res.err), (0, b""))
	chk.eq("%s: export sha256sum: each file once, with its content's digest" % label,
	       parse_sums(res.out), {p: [d] for p, d in files.items()})

	listfile = db + b".list"
	with open(listfile, "wb") as f:
		for p, d in files.items():
			f.write(d.encode() + b"  x\n")
	res = run_fidx("match", "-0", db, listfile)
	got = sorted(p for p in res.out.split(b"\0") if p)
	chk.eq("%s: match: every file once" % label, (res.rc, got), (0, sorted(files)))

	res = run_fidx("dupes", "--json", db)
	groups = sorted(sorted(os.fsencode(f["path"]) for f in json.loads(l)["files"])
			for l in res.out.split(b"\n") if l)
	by_digest = {}
	for p, d in files.items():
		by_digest.setdefault(d, []).append(p)
	chk.eq("%s: dupes: the groups of the contents shown" % label, groups,
	       sorted(sorted(g) for g in by_digest.values() if len(g) > 1))

	res = run_fidx("stats", "--json", db)
	counts = {json.loads(l)["scan_id"]: json.loads(l)["entries"] for l in lines(res)}
	want_counts = {}
	for p in want:
		want_counts[src(p)] = want_counts.get(src(p), 0) + 1
	chk.eq("%s: stats: each path counted in one scan" % label, counts, want_counts)

	con = lib.connect(db)
	data = [r[0] for r in con.execute("SELECT full_path FROM data")]
	con.close()
	chk.eq("%s: the data view: each non-directory once" % label, sorted(data),
	       sorted(p for p, (t, _) in want.items() if t != "d"))


def check_du(chk, label, db, t, s, top_scan):
	"""du of T is du -s of T (S's newer rows in it), and S has no block of its own."""
	res = run_fidx("du", "-b", "-d", "1", "--json", db)
	objs = [json.loads(l) for l in lines(res)]
	got = {os.fsencode(o["path"]): (o["scan_id"], o["apparent"], o["allocated"]) for o in objs}
	want = {}
	for p in [t] + [os.path.join(t, n) for n in os.listdir(t)
			if os.path.isdir(os.path.join(t, n)) and not os.path.islink(os.path.join(t, n))]:
		app = int(subprocess.run(["du", "-s", "--apparent-size", "-B1", p],
					 capture_output=True).stdout.split()[0])
		alloc = int(subprocess.run(["du", "-s", "-B1", p], capture_output=True).stdout.split()[0])
		want[p] = (top_scan, app, alloc)
	chk.eq("%s: du -d 1: T and its folders as du -s, S included, one block" % label, got, want)


def main():
	chk = Checker()
	with TempDir() as td:
		top = os.fsencode(td.path)
		t, s = build(top)
		db = top + b"/c.db"
		res = run_fidx("scan", "-q", "--db", db, t)
		chk.eq("scan 1 of T: exit 0", res.rc, 0)
		write(s + b"/deep/changes", b"after: S changed since T was scanned")
		write(s + b"/new", b"new in S")
		lib.settle(s)
		res = run_fidx("scan", "-q", "--db", db, s)
		chk.eq("scan 2 of S, inside T: exit 0", res.rc, 0)
		want = walk(t)
		with chk.guard("T then S"):
			check_shown(chk, "T then S", db, want, lambda p: 2 if under(p, s) else 1)
			check_du(chk, "T then S", db, t, s, 1)
		with chk.guard("--scan"):
			res = run_fidx("find", "-0", "--scan", "1,2", db, "changes")
			got = [p for p in res.out.split(b"\0") if p]
			chk.eq("--scan 1,2: the scans named, whole (the path in both)", got,
			       [s + b"/deep/changes"] * 2)

		res = run_fidx("scan", "-q", "--db", db, t)
		chk.eq("scan 3 of T again, over S: exit 0", res.rc, 0)
		with chk.guard("T, S, T"):
			check_shown(chk, "T, S, T", db, walk(t), lambda p: 3)
			check_du(chk, "T, S, T", db, t, s, 3)

		# fidx dupes --db DB S records a scan of S with no digests: not a gap in the sums.
		res = run_fidx("dupes", "--db", db, s)
		chk.ok("dupes --db DB S: exit 0 or 1", res.rc in (0, 1), repr(res))
		con = lib.connect(db)
		hashes = [lib._txt(r[0]) for r in con.execute("SELECT json_extract(options, '$.hash')"
							      " FROM scan ORDER BY id")]
		con.close()
		chk.eq("the dupes scan records no digests", hashes[-1], "none")
		with chk.guard("after dupes --db"):
			res = run_fidx("export", "--format", "sha256sum", db)
			files = {p: [d] for p, (ty, d) in walk(t).items() if ty == "f"}
			chk.eq("export sha256sum after dupes --db: exit 0, every file of T from scan 3",
			       (res.rc, res.err, parse_sums(res.out)), (0, b"", files))
			res = run_fidx("find", "-0", db)
			chk.eq("find after dupes --db: every path once (S from the newest scan)",
			       sorted(p for p in res.out.split(b"\0") if p), sorted(walk(t)))

		# A root of which no scan has digests: export says which scans to name.
		lone = top + b"/lone"
		os.mkdir(lone)
		write(lone + b"/x", b"x")
		run_fidx("scan", "-q", "--hash", "none", "--db", db, lone)
		res = run_fidx("export", "--format", "sha256sum", db)
		lib.check_fatal(chk, "export sha256sum with a root without digests", res, lone)
		chk.ok("the message names the scans that have them", b"--scan 3" in res.err,
		       repr(res.err))
		res = run_fidx("export", "--format", "sha256sum", "--scan", "3", db)
		chk.eq("export --scan 3 then: exit 0", res.rc, 0)

		# The case: the folder first, then the tree around it.
		db2 = top + b"/c2.db"
		run_fidx("scan", "-q", "--db", db2, s)
		run_fidx("scan", "-q", "--db", db2, t)
		with chk.guard("S then T"):
			check_shown(chk, "S then T", db2, walk(t), lambda p: 2)
			check_du(chk, "S then T", db2, t, s, 2)
	chk.done()


if __name__ == "__main__":
	main()
