#!/usr/bin/python3
"""t_diff.py - fidx diff against a ground truth taken from the trees themselves.

Builds a tree (files, directories, symlinks, a FIFO, hard links, names with
a newline, invalid UTF-8 and a leading dash), takes a snapshot of it
(lib.truth: os.lstat, os.readlink, hashlib, stat(1) birth times, never the
database), scans it, then mutates it: adds, removes, renames a file and a
directory, truncates, appends, chmods, chowns, touches with the mtime set
back to its old value (only ctime shows it), rewrites a file in place with
its size and mtime restored, replaces a file with a symlink, retargets a
symlink, adds a hard link; snapshots and scans again.  The report expected
is computed here from the two snapshots with the rules of `fidx diff --help`
(path below the root, moves by device, inode, type and content, one summary
position per attribute) and compared with fidx's output byte for byte; a
few entries are also checked against summary strings written by hand from
what the mutation does.  Then:

  * exit status bits; the counts on stderr; -q;
  * --json (paths as text or base64), -v values (sizes, ls -l modes, ids,
    SHA-256 in hex), -0;
  * --ignore (ctime: the touch and the renames' ctime vanish), --atime
    (a read between two scans), identical scans (exit 0, no output);
  * OLD alone, scans of two roots (a copy: paths below each root);
  * errors, one line each with AIDE's codes: bad and unknown scan ids, too
    many arguments, an unknown --ignore name, a missing database, a file
    that is not one, a newer schema, no earlier scan, /dev/full;
  * --help, and the database never written.
"""

import base64
import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import time

import lib
from lib import Checker, TempDir, run_fidx, write

ATTRS = ["type", "size", "perm", "owner", "group", "mtime", "ctime", "inode", "nlink",
	 "target", "content", "atime", "btime", "error", "state"]
LETTERS = "t>pugmcinlHabeD"
DEFAULT = set(ATTRS) - {"atime"}
KINDS = {"added": 1, "removed": 2, "changed": 4}


def snapshot(root):
	"""The tree as lib.truth sees it (SHA-256 of every regular file)."""
	lib.settle(root)
	return lib.truth(root, lib.Truth(hashes=["sha256"]))


def key_of(path, root):
	"""The path below root ('' for the root), as the comparison keys it."""
	if root == b"/":
		return b"" if path == b"/" else path
	return path[len(root):]


def compare(a, b, attrs):
	"""(changed attribute names, summary) of OLD row a against NEW row b."""
	ch = set()
	if a["type"] != b["type"]:
		ch.add("type")
	for name, col in (("size", "size"), ("owner", "uid"), ("group", "gid"), ("mtime", "mtime_ns"),
			  ("ctime", "ctime_ns"), ("nlink", "nlink"), ("atime", "atime_ns"),
			  ("btime", "btime_ns"), ("target", "link_target"), ("error", "error")):
		if a[col] != b[col]:
			ch.add(name)
	if stat.S_IMODE(a["mode"]) != stat.S_IMODE(b["mode"]):
		ch.add("perm")
	if (a["dev"], a["ino"]) != (b["dev"], b["ino"]):
		ch.add("inode")
	unknown = False
	if a["type"] == "f" and b["type"] == "f":
		if a["sha256"] is not None and b["sha256"] is not None:
			if a["sha256"] != b["sha256"]:
				ch.add("content")
		elif a["sha256"] is not None or b["sha256"] is not None:
			unknown = True
	ch &= attrs
	unknown = unknown and "content" in attrs
	s = ""
	for i, n in enumerate(ATTRS):
		if n == "size" and n in ch:
			s += ">" if b["size"] > a["size"] else "<"
		elif n == "content" and unknown:
			s += "?"
		else:
			s += LETTERS[i] if n in ch else "."
	return ch, s, unknown


def same_content(a, b):
	"""Whether added row b can be where removed row a went (type, content, birth time)."""
	if a["type"] != b["type"]:
		return False
	if a["btime_ns"] is not None and b["btime_ns"] is not None and a["btime_ns"] != b["btime_ns"]:
		return False
	if a["type"] == "f" and a["sha256"] is not None and b["sha256"] is not None:
		return a["sha256"] == b["sha256"]
	return a["size"] == b["size"] and a["mtime_ns"] == b["mtime_ns"]


def expect(before, after, root_a, root_b, attrs=DEFAULT):
	"""
	The entries fidx diff must report, sorted by key: dicts of kind, path,
	old_path, summary, changes (names), unknown, and the rows a and b.
	"""
	ka = {key_of(p, root_a): p for p in before}
	kb = {key_of(p, root_b): p for p in after}
	out = []
	removed = sorted(k for k in ka if k not in kb)
	added = sorted(k for k in kb if k not in ka)
	for k in sorted(set(ka) & set(kb)):
		a, b = before[ka[k]], after[kb[k]]
		ch, s, unk = compare(a, b, attrs)
		if ch:
			out.append(dict(key=k, kind="changed", path=kb[k], old_path=None, summary=s,
					changes=ch, unknown=unk, a=a, b=b))
	taken = set()
	for k in added:
		b = after[kb[k]]
		move = None
		for r in removed:
			a = before[ka[r]]
			if r not in taken and (a["dev"], a["ino"]) == (b["dev"], b["ino"]) and \
			   same_content(a, b):
				move = r
				break
		if move is None:
			out.append(dict(key=k, kind="added", path=kb[k], old_path=None,
					summary="+" * len(ATTRS), changes=set(), unknown=False))
			continue
		taken.add(move)
		a = before[ka[move]]
		ch, s, unk = compare(a, b, attrs)
		out.append(dict(key=move, kind="moved", path=kb[k], old_path=ka[move], summary=s,
				changes=ch, unknown=unk, a=a, b=b))
	for r in removed:
		if r not in taken:
			out.append(dict(key=r, kind="removed", path=ka[r], old_path=None,
					summary="-" * len(ATTRS), changes=set(), unknown=False))
	out.sort(key=lambda e: e["key"])
	return out


def render(entries, nul=False):
	"""The text output of entries, as bytes."""
	end = b"\0" if nul else b"\n"
	out = b""
	for e in entries:
		out += b"%-7s %s " % (e["kind"].encode(), e["summary"].encode())
		if e["old_path"] is not None:
			out += e["old_path"] + (b"\0" if nul else b" -> ")
		out += e["path"] + end
	return out


def status_of(entries):
	"""The exit status expected for entries."""
	st = 0
	for e in entries:
		if e["kind"] == "moved":
			st |= 3 | (4 if e["changes"] else 0)
		else:
			st |= KINDS[e["kind"]]
	return st


def show_diff(got, want):
	"""The first differing lines of two outputs, for a message."""
	g, w = got.split(b"\n"), want.split(b"\n")
	for i in range(max(len(g), len(w))):
		x = g[i] if i < len(g) else None
		y = w[i] if i < len(w) else None
		if x != y:
			return "line %d: got %r want %r" % (i + 1, x, y)
	return "equal"


def json_path(obj, key):
	"""The bytes of path member key of a --json object."""
	if key + "_base64" in obj:
		return base64.b64decode(obj[key + "_base64"])
	return obj[key].encode()


def scan(chk, db, root, label):
	"""Scans root into db; returns the new scan id."""
	r = run_fidx("scan", "-q", "-o", db, root)
	chk.ok("%s: scan exits 0" % label, r.rc == 0, repr(r))
	con = lib.connect(db)
	try:
		return con.execute("SELECT max(id) FROM scan").fetchone()[0]
	finally:
		con.close()


def build(root):
	"""The first state of the tree."""
	os.makedirs(root + b"/dsrc/inner")
	os.makedirs(root + b"/gonedir")
	os.makedirs(root + b"/keep")
	for name, data in ((b"trunc", b"t" * 5000), (b"app", b"a" * 100), (b"perm", b"p"),
			   (b"own", b"o"), (b"grp", b"g"), (b"touched", b"touch me"),
			   (b"sneaky", b"original"), (b"repl", b"replace me"), (b"hl_src", b"hard"),
			   (b"gone.txt", b"bye"), (b"ren_src", b"rename me"), (b"-dash", b"dash"),
			   (b"bad\xff", b"not utf-8"), (b"keep/same", b"same"), (b"empty", b""),
			   (b"dsrc/one", b"1"), (b"dsrc/inner/two", b"22"), (b"gonedir/x", b"x")):
		write(root + b"/" + name, data)
	os.symlink(b"app", root + b"/lnk")
	os.mkfifo(root + b"/fifo")
	past = 1_500_000_000_000_000_000
	for name in (b"touched", b"sneaky"):
		os.utime(root + b"/" + name, ns=(past, past))


def mutate(root):
	"""The changes between the two scans."""
	p = lambda n: root + b"/" + n  # noqa: E731
	write(p(b"added.txt"), b"new file")
	os.mkdir(p(b"newdir"))
	write(p(b"newdir/inside"), b"in")
	write(p(b"new\nline"), b"newline name")
	os.unlink(p(b"gone.txt"))
	shutil.rmtree(p(b"gonedir"))
	os.rename(p(b"ren_src"), p(b"ren_dst"))
	os.rename(p(b"dsrc"), p(b"ddst"))
	os.rename(p(b"-dash"), p(b"-dash-moved"))
	os.truncate(p(b"trunc"), 1000)
	with open(p(b"app"), "ab") as f:
		f.write(b"more")
	with open(p(b"bad\xff"), "ab") as f:
		f.write(b"!")
	os.chmod(p(b"perm"), 0o600)
	os.chown(p(b"own"), lib.NOBODY, -1)
	os.chown(p(b"grp"), -1, lib.NOBODY)
	st = os.lstat(p(b"touched"))
	os.utime(p(b"touched"), ns=(st.st_atime_ns, st.st_mtime_ns))
	st = os.lstat(p(b"sneaky"))
	with open(p(b"sneaky"), "r+b") as f:
		f.write(b"ORIGINAL")
	os.utime(p(b"sneaky"), ns=(st.st_atime_ns, st.st_mtime_ns))
	os.unlink(p(b"repl"))
	os.symlink(b"app", p(b"repl"))
	os.symlink(b"trunc", p(b"lnk.tmp"))
	os.rename(p(b"lnk.tmp"), p(b"lnk"))
	os.link(p(b"hl_src"), p(b"hl_new"))


def check_report(chk, label, res, want, nul=False):
	"""Checks a text report byte for byte, and its exit status."""
	got = res.out
	chk.ok("%s: report as expected (%d entries)" % (label, len(want)), got == render(want, nul),
	       show_diff(got, render(want, nul)))
	chk.eq("%s: exit status" % label, res.rc, status_of(want))


def check_main(chk, fidx_db, root, before, after, s1, s2):
	"""The report of the mutations: text, hand-written summaries, JSON, -v, -0."""
	want = expect(before, after, root, root)
	res = run_fidx("diff", fidx_db)
	check_report(chk, "default scans", res, want)
	counts = {k: sum(1 for e in want if e["kind"] == k) for k in ("added", "removed", "changed",
								       "moved")}
	chk.eq("counts on stderr", res.err,
	       b"scan %d -> scan %d: %d added, %d removed, %d changed, %d moved\n" % (
		       s1, s2, counts["added"], counts["removed"], counts["changed"], counts["moved"]))
	chk.ok("every kind is present", all(counts.values()), repr(counts))
	chk.eq("exit status is 7", res.rc, 7)
	res = run_fidx("diff", "-q", "--db", fidx_db, str(s1), str(s2))
	check_report(chk, "OLD NEW given, -q", res, want)
	chk.eq("-q: nothing on stderr", res.err, b"")
	res = run_fidx("diff", fidx_db, str(s1))
	check_report(chk, "OLD alone", res, want)

	# What each mutation must show, written by hand.
	lines = set(res.out.split(b"\n"))
	p = lambda n: root + b"/" + n  # noqa: E731
	hand = [
		(b"added   +++++++++++++++ " + p(b"added.txt"), "added file"),
		(b"added   +++++++++++++++ " + p(b"newdir/inside"), "file in an added folder"),
		(b"removed --------------- " + p(b"gone.txt"), "removed file"),
		(b"removed --------------- " + p(b"gonedir"), "removed folder"),
		(b"removed --------------- " + p(b"gonedir/x"), "file of a removed folder"),
		(b"changed .<...mc...H.... " + p(b"trunc"), "truncate: shrank, mtime, ctime, content"),
		(b"changed .>...mc...H.... " + p(b"app"), "append: grew, mtime, ctime, content"),
		(b"changed ..p...c........ " + p(b"perm"), "chmod: permissions, ctime"),
		(b"changed ...u..c........ " + p(b"own"), "chown: owner, ctime"),
		(b"changed ....g.c........ " + p(b"grp"), "chgrp: group, ctime"),
		(b"changed ......c........ " + p(b"touched"), "mtime set back: only ctime"),
		(b"changed ......c...H.... " + p(b"sneaky"), "rewritten, size and mtime kept: ctime, content"),
		(b"changed ......c.n...... " + p(b"hl_src"), "hard link added: nlink, ctime"),
		(b"added   +++++++++++++++ " + p(b"hl_new"), "the new hard link"),
		(b"moved   ............... " + p(b"dsrc/one") + b" -> " + p(b"ddst/one"),
		 "file in a renamed folder: moved, unchanged"),
	]
	for line, what in hand:
		chk.ok("summary: %s" % what, line in lines, "no line %r" % line)
	for name, new in ((b"ren_src", b"ren_dst"), (b"dsrc", b"ddst"), (b"-dash", b"-dash-moved")):
		hit = [l for l in lines if l.startswith(b"moved   ") and
		       l.endswith(b" " + p(name) + b" -> " + p(new))]
		chk.ok("summary: rename %r is a move (ctime at most)" % name,
		       len(hit) == 1 and hit[0][8:23].replace(b"c", b".") == b"." * 15, repr(hit))
	repl = [l for l in lines if l.endswith(b" " + p(b"repl"))]
	# The symlink may get the inode number the file freed (ext4 hands it out again).
	reused = before[p(b"repl")]["ino"] == after[p(b"repl")]["ino"]
	chk.ok("summary: file replaced by a symlink shows t, size, target, and inode unless its"
	       " number was given out again", len(repl) == 1 and repl[0][:8] == b"changed " and
	       all(repl[0][8 + ATTRS.index(a)] != ord(".") for a in ("type", "size", "target"))
	       and (repl[0][8 + ATTRS.index("inode")] == ord(".")) == reused
	       and repl[0][8 + ATTRS.index("content")] == ord("."), repr(repl))
	lnk = [l for l in lines if l.endswith(b" " + p(b"lnk"))]
	chk.ok("summary: retargeted symlink shows l and i", len(lnk) == 1 and
	       lnk[0][8 + ATTRS.index("target")] == ord("l") and
	       lnk[0][8 + ATTRS.index("inode")] == ord("i"), repr(lnk))
	chk.ok("summary: the FIFO and keep/same are not listed",
	       not any(l.endswith(b"/fifo") or l.endswith(b"/keep/same") for l in lines), "listed")

	# --json
	res = run_fidx("diff", "--json", fidx_db)
	try:
		objs = [json.loads(l) for l in res.out.split(b"\n") if l]
	except ValueError as e:
		objs = []
		chk.ok("--json: every line is JSON", False, str(e))
	got = [(o["kind"], json_path(o, "path"), json_path(o, "old_path") if "old_path" in o else None,
		o.get("summary"), sorted(o.get("changes", [])), o.get("unknown", []))
	       for o in objs]
	exp = [(e["kind"], e["path"], e["old_path"],
		e["summary"] if e["kind"] in ("changed", "moved") else None,
		sorted(e["changes"]), ["content"] if e["unknown"] else []) for e in want]
	chk.ok("--json: kind, path, old_path, summary, changes", got == exp,
	       "got %s want %s" % (lib.short(got[:3]), lib.short(exp[:3])) if got != exp else "")
	chk.ok("--json: a non-UTF-8 path comes in base64",
	       any("path_base64" in o and json_path(o, "path") == p(b"bad\xff") for o in objs),
	       "no path_base64")
	chk.eq("--json: exit status", res.rc, status_of(want))

	# -v, as text and JSON
	res = run_fidx("diff", "-v", fidx_db)
	out = res.out
	tr_a, tr_b = before[p(b"trunc")], after[p(b"trunc")]
	for line, what in (
		(b"        size     5000 -> 1000\n", "size"),
		(b"        perm     -rw-r--r-- -> -rw-------\n", "perm"),
		(b"        owner    0 -> %d\n" % lib.NOBODY, "owner"),
		(b"        group    0 -> %d\n" % lib.NOBODY, "group"),
		(b"        nlink    1 -> 2\n", "nlink"),
		(b"        content  sha256:%s -> sha256:%s\n" % (tr_a["sha256"].hex().encode(),
							      tr_b["sha256"].hex().encode()),
		 "content digests"),
		(b"        type     file -> symlink\n", "type"),
		(b"        target   'app' -> 'trunc'\n", "target"),
	):
		chk.ok("-v: %s line" % what, line in out, "missing %r" % line)
	res = run_fidx("diff", "-v", "--json", fidx_db)
	objs = {json_path(o, "path"): o for o in map(json.loads, filter(None, res.out.split(b"\n")))}
	o = objs.get(p(b"trunc"), {})
	chk.eq("-v --json: old and new values of the changed attributes",
	       (o.get("old"), o.get("new")),
	       ({"size": 5000, "mtime": iso(tr_a["mtime_ns"]), "ctime": iso(tr_a["ctime_ns"]),
		 "content": {"sha256": tr_a["sha256"].hex()}},
		{"size": 1000, "mtime": iso(tr_b["mtime_ns"]), "ctime": iso(tr_b["ctime_ns"]),
		 "content": {"sha256": tr_b["sha256"].hex()}}))
	o = objs.get(p(b"own"), {})
	chk.eq("-v --json: owner", (o.get("old", {}).get("owner"), o.get("new", {}).get("owner")),
	       (0, lib.NOBODY))

	# -0
	res = run_fidx("diff", "-0", fidx_db)
	check_report(chk, "-0", res, want, nul=True)

	# --ignore
	attrs = DEFAULT - {"ctime"}
	res = run_fidx("diff", "--ignore", "ctime", fidx_db)
	w = expect(before, after, root, root, attrs)
	check_report(chk, "--ignore ctime", res, w)
	chk.ok("--ignore ctime: the touched file is not listed", p(b"touched") not in res.out, "listed")
	res = run_fidx("diff", "--ignore", "ctime,mtime,content,size,nlink", fidx_db)
	check_report(chk, "--ignore ctime,mtime,content,size,nlink", res,
		     expect(before, after, root, root,
			    DEFAULT - {"ctime", "mtime", "content", "size", "nlink"}))


def iso(ns):
	"""ns as fidx prints times: ISO 8601 UTC with nanoseconds."""
	return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 10**9)) + ".%09dZ" % (ns % 10**9)


def check_atime(chk, fidx_db, root, s2):
	"""
	A file read between two scans: identical by default, 'a' with --atime.
	Returns the id of the third scan.
	"""
	target = root + b"/added.txt"
	st0 = os.lstat(target)
	with open(target, "rb") as f:  # without O_NOATIME: relatime moves it once
		f.read()
	moved = os.lstat(target).st_atime_ns != st0.st_atime_ns
	s3 = scan(chk, fidx_db, root, "third scan")
	res = run_fidx("diff", fidx_db, str(s2), str(s3))
	chk.ok("identical scans: no output, exit 0", res.rc == 0 and res.out == b"", repr(res))
	chk.eq("identical scans: counts say so", res.err, b"scan %d -> scan %d: identical\n" % (s2, s3))
	res = run_fidx("diff", "-q", fidx_db, str(s2), str(s3))
	chk.ok("identical scans with -q: nothing at all", res.rc == 0 and res.out == b"" and
	       res.err == b"", repr(res))
	if not moved:
		chk.skip("--atime reports a read", "the filesystem did not move the atime")
		return s3
	res = run_fidx("diff", "--atime", fidx_db, str(s2), str(s3))
	chk.eq("--atime: the read file shows 'a'", res.out,
	       b"changed ...........a... " + target + b"\n")
	chk.eq("--atime: exit 4", res.rc, 4)
	return s3


def check_roots(chk, fidx_db, top, root, s_last):
	"""A copy of the tree at another root: the paths compare below each root."""
	copy = top + b"/copy"
	subprocess.run(["cp", "-a", root, copy], check=True)
	lib.settle(copy)
	sc = scan(chk, fidx_db, copy, "scan of a copy")
	res = run_fidx("diff", "-0", fidx_db, str(s_last), str(sc))
	lines = [l for l in res.out.split(b"\0") if l]
	chk.ok("two roots: nothing added or removed, every entry 'changed' under the copy's root",
	       lines and all(l.startswith(b"changed ") and b" " + copy in l for l in lines),
	       lib.short(lines[:3]))
	chk.ok("two roots: every entry has a new inode", lines and all(l[8 + ATTRS.index("inode")] == ord("i")
							    for l in lines), lib.short(lines[:3]))


def check_errors(chk, top, fidx_db):
	"""Errors: one line each, AIDE's exit codes."""
	def one(name, res, code, mention=None):
		lines = res.err_lines()
		chk.ok("%s: exit %d, one 'fidx: ' line" % (name, code),
		       res.rc == code and len(lines) == 1 and lines[0].startswith(b"fidx: ") and
		       (mention is None or mention in lines[0]) and res.out == b"", repr(res))

	one("scan id 0", run_fidx("diff", fidx_db, "0"), 15, b"'0'")
	one("scan id -3", run_fidx("diff", fidx_db, "1", "-3"), 15)
	one("three scan ids", run_fidx("diff", fidx_db, "1", "2", "3"), 15, b"'3'")
	one("unknown --ignore name", run_fidx("diff", "--ignore", "ctime,bogus", fidx_db), 15,
	    b"'bogus'")
	one("unknown option", run_fidx("diff", "--frobnicate", fidx_db), 15)
	one("no such scan", run_fidx("diff", fidx_db, "1", "999"), 17, b"999")
	con = lib.connect(fidx_db)
	newest = con.execute("SELECT max(id) FROM scan").fetchone()[0]
	con.close()
	one("OLD alone, the newest: nothing after it", run_fidx("diff", fidx_db, str(newest)), 17,
	    b"after scan %d" % newest)
	missing = top + b"/missing.db"
	one("missing database", run_fidx("diff", missing), 18, b"missing.db")
	text = top + b"/notes.txt"
	write(text, b"not a database\n")
	one("not a fidx database", run_fidx("diff", "--db", text), 18, b"notes.txt")
	newer = top + b"/newer.db"
	shutil.copy(fidx_db, newer)
	con = sqlite3.connect(newer)
	con.execute("PRAGMA user_version = 99")
	con.commit()
	con.close()
	one("newer schema version", run_fidx("diff", newer), 19, b"99")
	lone = top + b"/lone.db"
	single = top + b"/single"
	os.mkdir(single)
	r = run_fidx("scan", "-q", "-o", lone, single)
	chk.eq("lone scan: exit 0", r.rc, 0)
	one("one scan only: nothing earlier", run_fidx("diff", lone), 17, b"before scan 1")
	with open("/dev/full", "wb") as full:
		rc, err = lib.run_to(full.fileno(), "diff", fidx_db, "1", "2")
	chk.ok("/dev/full: exit 14, one line", rc == 14 and
	       err == b"fidx: cannot write output: No space left on device\n", "rc=%d %r" % (rc, err))


def check_help_and_read_only(chk, fidx_db):
	"""--help on stdout naming every option and the legend; the database never written."""
	res = run_fidx("diff", "--help")
	text = res.out.decode()
	chk.ok("--help: exit 0, on stdout", res.rc == 0 and res.err == b"" and
	       text.startswith("usage: fidx diff"), repr(res))
	for opt in ("--db", "--json", "--null", "--verbose", "--ignore", "--atime", "--quiet"):
		chk.ok("--help lists %s" % opt, opt in text, "missing")
	chk.ok("--help: the legend names every --ignore attribute",
	       all(a in text for a in ATTRS), "missing")
	allowed = [set(LETTERS[i] + ".") for i in range(len(ATTRS))]
	allowed[ATTRS.index("size")] |= set("<s")
	allowed[ATTRS.index("content")] |= set("?")
	examples = re.findall(r"^  (?:changed|moved  ) (\S+) ", text, re.M)
	chk.ok("--help: its example summaries put each letter at its position",
	       examples and all(len(s) == len(ATTRS) and
				all(c in allowed[i] for i, c in enumerate(s)) for s in examples),
	       "examples %r" % examples)
	with open(fidx_db, "rb") as f:
		data = f.read()
	mtime = os.stat(fidx_db).st_mtime_ns
	for args in ([], ["-v", "--json"], ["-0", "1"]):
		run_fidx("diff", fidx_db, *args)
	with open(fidx_db, "rb") as f:
		same = f.read() == data
	chk.ok("the database is never written (bytes, mtime)", same and
	       os.stat(fidx_db).st_mtime_ns == mtime, "changed")


def main():
	chk = Checker()
	with TempDir() as td:
		top = os.fsencode(td.path)
		root = top + b"/tree"
		fidx_db = top + b"/fidx.db"
		os.mkdir(root)
		build(root)
		before = snapshot(root)
		s1 = scan(chk, fidx_db, root, "first scan")
		mutate(root)
		after = snapshot(root)
		s2 = scan(chk, fidx_db, root, "second scan")
		with chk.guard("the report of the mutations"):
			check_main(chk, fidx_db, root, before, after, s1, s2)
		s3 = s2
		with chk.guard("atime and identical scans"):
			s3 = check_atime(chk, fidx_db, root, s2)
		with chk.guard("two roots"):
			check_roots(chk, fidx_db, top, root, s3)
		with chk.guard("errors"):
			check_errors(chk, top, fidx_db)
		with chk.guard("help and read-only"):
			check_help_and_read_only(chk, fidx_db)
	chk.done()


if __name__ == "__main__":
	main()
