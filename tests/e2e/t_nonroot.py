#!/usr/bin/python3
"""t_nonroot.py - a scan run as nobody over entries it cannot read.

As root, builds a tree readable by everyone except: a file with mode 000, a
directory with mode 000 holding a file and a subdirectory, and a directory
with mode 0444 (its names can be listed, not stat'ed).  Runs the scan as
nobody (setpriv) with the database in a folder nobody may write, then checks:

  * exit 1; the 000 file is recorded with its metadata and the error
    'open: Permission denied', no digests; the 000 directory is recorded with
    its metadata and an error naming EACCES, its children absent; each name
    of the 0444 directory is recorded with an error naming EACCES;
  * everything else equals the ground truth; the scan row counts the errors;
    the summary gives the error count;
  * stderr carries, once and up front, a note that unreadable entries will be
    recorded as errors;
  * --errors lists each entry with an error on stdout as "PATH: ERROR";
  * a fidx database that nobody cannot write is refused: exit 2, unchanged.
Needs root to switch users; skipped otherwise.
"""

import os
import re

import lib
from lib import ANY, Checker, Contains, compare, run_fidx, truth, write

EACCES = os.strerror(13)  # "Permission denied"
NOTE = re.compile(rb"unreadable|not readable|cannot (be )?read|can't read|permission", re.I)


def build(top):
	"""Builds the tree of the header with its unreadable parts; returns its root."""
	root = top + b"/tree"
	os.makedirs(root + b"/open/sub")
	os.makedirs(root + b"/closed/inner")
	os.makedirs(root + b"/listonly")
	write(root + b"/open/a", b"readable a")
	write(root + b"/open/sub/b", b"readable b")
	write(root + b"/secret", b"nobody may read this")
	write(root + b"/closed/c", b"hidden")
	write(root + b"/closed/inner/d", b"hidden too")
	write(root + b"/listonly/e", b"listed, not stat'ed")
	write(root + b"/listonly/f", b"listed, not stat'ed")
	os.chmod(root + b"/secret", 0)
	os.chmod(root + b"/closed", 0)
	os.chmod(root + b"/listonly", 0o444)
	lib.settle(root)
	# settle the files' atimes too: nobody cannot read them with O_NOATIME
	for dirpath, dirs, files in os.walk(root):
		for f in files:
			with open(os.path.join(dirpath, f), "rb") as fh:
				fh.read(1)
	lib.settle(root)
	return root


def expected(root):
	"""What a scan as nobody must record: the truth, with the errors nobody meets."""
	want = truth(root)
	for p in list(want):
		if p.startswith(root + b"/closed/") or p.startswith(root + b"/listonly/"):
			del want[p]
	r = want[root + b"/secret"]
	for d in lib.DIGESTS:
		r[d] = None
	r["error"] = "open: " + EACCES
	want[root + b"/closed"]["error"] = Contains(EACCES)
	for n in (b"e", b"f"):
		row = {c: ANY for c in lib.COLUMNS}
		row.update(name=n, ext=b"", error=Contains(EACCES))
		for d in lib.DIGESTS:
			row[d] = None
		want[root + b"/listonly/" + n] = row
	for r in want.values():
		for d in ("md5", "sha1", "sha512", "xxh128"):
			r[d] = None
	return want


def main():
	chk = Checker()
	if os.geteuid() != 0:
		chk.skip("scan as nobody", "not root")
		chk.done()
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		os.chmod(top, 0o755)
		root = build(top)
		dbdir = top + b"/db"
		os.mkdir(dbdir)
		os.chown(dbdir, lib.NOBODY, lib.NOBODY)
		want = expected(root)

		with chk.guard("scan as nobody"):
			db = dbdir + b"/fidx.db"
			res = run_fidx("scan", "-o", db, root, uid=lib.NOBODY)
			chk.ok("nobody: exit 1", res.rc == 1 and not res.timed_out, repr(res))
			got, dups = lib.db_rows(db, 1)
			compare(chk, "nobody", got, dups, want)
			nerr = sum(1 for r in want.values() if r["error"] is not None)
			scans = lib.scan_rows(db)
			if chk.ok("nobody: one scan row", len(scans) == 1, repr(scans)):
				lib.check_scan_row(chk, "nobody", scans[0], root, got)
				chk.eq("nobody: scan.errors", scans[0]["errors"], nerr)
			chk.ok("nobody: the summary gives the error count",
			       nerr in lib.summary_numbers(res.out) and
			       re.search(rb"error", res.out, re.I) is not None, lib.short(res.out))
			lines = res.err_lines()
			notes = [l for l in lines if NOTE.search(l)]
			chk.ok("nobody: one note on stderr that unreadable entries become errors",
			       len(notes) == 1 and re.search(rb"error", notes[0], re.I) is not None,
			       "stderr=%s" % lib.short(res.err))
			chk.ok("nobody: the note comes first, as a 'fidx: ' line",
			       bool(lines) and lines[0].startswith(b"fidx: ") and NOTE.search(lines[0]),
			       "stderr=%s" % lib.short(res.err))

		with chk.guard("--errors"):
			db = dbdir + b"/errors.db"
			res = run_fidx("scan", "-q", "--errors", "-o", db, root, uid=lib.NOBODY)
			chk.ok("--errors: exit 1", res.rc == 1, repr(res))
			got, _ = lib.db_rows(db, 1)
			out = res.out_lines()
			errs = {p: r["error"] for p, r in got.items() if r["error"]}
			listed = [l for l in out if any(l == p + b": " + e.encode() for p, e in errs.items())]
			chk.ok("--errors: one 'PATH: ERROR' line per error", len(listed) == len(errs) == 4,
			       "errors %s, stdout %s" % (lib.short(errs), lib.short(res.out)))
			chk.ok("--errors: the summary line, the seal line and the list only",
			       len(out) == len(errs) + 2 and lib.is_seal_line(out[1]), lib.short(res.out))

		with chk.guard("read-only database"):
			db = top + b"/root-owned.db"
			res = run_fidx("scan", "-q", "-o", db, root + b"/open")
			chk.ok("read-only db: made by root", res.rc == 0, repr(res))
			before = lib.read_bytes(db)
			res = run_fidx("scan", "-o", db, root + b"/open", uid=lib.NOBODY)
			chk.ok("read-only db: exit 2", res.rc == 2, repr(res))
			lines = res.err_lines()
			if len(lines) == 2 and NOTE.search(lines[0]) and b"error" in lines[0].lower():
				lines = lines[1:]  # the up-front note of a non-root scan may come first
			chk.ok("read-only db: one 'fidx: ' line on stderr (after the note)",
			       len(lines) == 1 and lines[0].startswith(b"fidx: "), lib.short(res.err))
			chk.ok("read-only db: unchanged", lib.read_bytes(db) == before, "bytes differ")
	chk.done()


if __name__ == "__main__":
	main()
