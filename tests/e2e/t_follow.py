#!/usr/bin/python3
"""t_follow.py - symlinks, without and with --follow.

The tree:

    root.d/
      f                 a file
      d/x               a directory with a file
      d/up -> ..        a link back to an ancestor (the root)
      to-file -> f      a link to a file
      to-dir -> d       a link to a directory inside the tree
      to-out -> OUT     a link to a directory outside the tree (OUT/y, OUT/z/w)
      to-fifo -> fifo   a link to a FIFO, and the FIFO
      dangling -> nowhere
      loop-a -> loop-b, loop-b -> loop-a, self -> self

Without --follow every link is a row of type 'l' with its lstat data and
link_target, nothing behind a link is entered, no errors, exit 0.  With
--follow the walk is find -L's: a link to a file gets the target's metadata
(type 'f') and digests, a link to a directory is entered (to-dir/x,
to-out/y...), to-fifo is a 'p' that is never opened (the scan must not hang),
link_target is kept; a dangling link stays 'l' without error; the loops and
the links to an ancestor (d/up, to-dir/up) carry an ELOOP error and are not
entered twice; exit 1 because of those errors.
"""

import os

import lib
from lib import Checker, Truth, compare, run_fidx, truth, write


def build(top):
	"""Builds the tree of the header; returns its root."""
	root = top + b"/root.d"
	out = top + b"/outside"
	os.makedirs(out + b"/z")
	write(out + b"/y", b"outside y")
	write(out + b"/z/w", b"outside w")
	os.makedirs(root + b"/d")
	write(root + b"/f", b"the file\n")
	write(root + b"/d/x", b"x in d")
	os.symlink(b"..", root + b"/d/up")
	os.symlink(b"f", root + b"/to-file")
	os.symlink(b"d", root + b"/to-dir")
	os.symlink(out, root + b"/to-out")
	os.mkfifo(root + b"/fifo")
	os.symlink(b"fifo", root + b"/to-fifo")
	os.symlink(b"nowhere", root + b"/dangling")
	os.symlink(b"loop-b", root + b"/loop-a")
	os.symlink(b"loop-a", root + b"/loop-b")
	os.symlink(b"self", root + b"/self")
	lib.settle(root)
	lib.settle(out)
	return root


NOT_FOLLOWED = "not followed: its target is outside the scanned roots (--follow-all follows it)"


def check_inside(chk, top, root):
	"""--follow follows only the links whose targets lie inside the root: find -L's tree,
	but a link to elsewhere is the link itself, with an error that says so, and nothing
	behind it is read (a planted link to a file outside is not hashed)."""
	os.symlink(top + b"/outside/y", root + b"/planted")
	lib.settle(root)
	want = truth(root, Truth(follow=True))
	plain = truth(root)
	for name in (b"/to-out", b"/planted"):
		want = {p: r for p, r in want.items() if not p.startswith(root + name + b"/")}
		want[root + name] = dict(plain[root + name], error=NOT_FOLLOWED)
	db = top + b"/inside.db"
	res = run_fidx("scan", "-q", "--follow", "--hash", "md5,sha1,sha256,sha512,xxh128",
		       "-o", db, root, timeout=60)
	chk.ok("--follow: exit 1 (loops, and links to outside, are errors)",
	       res.rc == 1 and not res.timed_out, repr(res))
	got, dups = lib.db_rows(db, 1)
	compare(chk, "--follow", got, dups, want)
	r = got.get(root + b"/planted") or {}
	chk.ok("--follow: a planted link to a file outside is not read (no digest)",
	       r.get("type") == "l" and r.get("sha256") is None and r.get("error") == NOT_FOLLOWED,
	       lib.short(repr(r)))
	chk.ok("--follow: nothing below the link to a folder outside",
	       not [p for p in got if p.startswith(root + b"/to-out/")])
	chk.ok("--follow: a link to a folder inside is followed (to-dir/x)",
	       (got.get(root + b"/to-dir/x") or {}).get("type") == "f")
	os.unlink(root + b"/planted")
	lib.settle(root)


def check_root_link(chk, top):
	"""rootlink -> / in a hostile tree: --follow records the link and does not walk the system."""
	root = top + b"/hostile.d"
	os.makedirs(root)
	os.symlink(b"/", root + b"/rootlink")
	os.symlink(b"/etc/shadow", root + b"/shadow")
	db = top + b"/hostile.db"
	res = run_fidx("scan", "-q", "--follow", "-o", db, root, timeout=60)
	got, _ = lib.db_rows(db, 1)
	chk.ok("--follow: rootlink -> / and a link to /etc/shadow: three rows, done at once",
	       res.rc == 1 and not res.timed_out and len(got) == 3, "%r, %d rows" % (res, len(got)))
	chk.eq("--follow: both links recorded as links, not followed",
	       sorted((r["type"], r["error"]) for p, r in got.items() if p != root),
	       [("l", NOT_FOLLOWED), ("l", NOT_FOLLOWED)])


def main():
	chk = Checker()
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		root = build(top)

		with chk.guard("no --follow"):
			want = truth(root)
			db = top + b"/plain.db"
			res = run_fidx("scan", "-q", "--hash", "sha256,md5", "-o", db, root, timeout=60)
			chk.ok("no --follow: exit 0", res.rc == 0 and not res.timed_out, repr(res))
			for r in want.values():
				for d in ("sha1", "sha512", "xxh128"):
					r[d] = None
			got, dups = lib.db_rows(db, 1)
			compare(chk, "no --follow", got, dups, want)
			links = [p for p, r in got.items() if r["type"] == "l"]
			chk.eq("no --follow: every link recorded as 'l'", len(links), 9)

		with chk.guard("--follow-all"):
			want = truth(root, Truth(follow=True))
			expect = {
				b"/to-file": "f", b"/to-dir": "d", b"/to-dir/x": "f", b"/to-out": "d",
				b"/to-out/y": "f", b"/to-out/z/w": "f", b"/to-fifo": "p",
				b"/dangling": "l",
			}
			chk.ok("--follow-all: ground truth is find -L's",
			       all(want.get(root + k, {}).get("type") == v for k, v in expect.items()),
			       "truth %s" % lib.short({k: want.get(root + k, {}).get("type")
						      for k in expect}))
			db = top + b"/follow.db"
			res = run_fidx("scan", "-q", "--follow-all", "--hash",
				       "md5,sha1,sha256,sha512,xxh128", "-o", db, root, timeout=60)
			chk.ok("--follow-all: does not hang (loops, FIFO)", not res.timed_out, repr(res))
			chk.ok("--follow-all: exit 1 (the loops are errors)", res.rc == 1, repr(res))
			got, dups = lib.db_rows(db, 1)
			compare(chk, "--follow-all", got, dups, want)
			for name in (b"/loop-a", b"/self", b"/d/up", b"/to-dir/up"):
				r = got.get(root + name) or {}
				chk.ok("--follow-all: %s reports ELOOP" % name.decode(),
				       lib.ELOOP_TEXT in (r.get("error") or ""), lib.short(r.get("error")))
			nx = [p for p in got if p.startswith(root + b"/d/up/") or
			      p.startswith(root + b"/to-dir/up/")]
			chk.ok("--follow-all: a link to an ancestor is not entered", not nx,
			       lib.short(nx[:3]))
			scans = lib.scan_rows(db)
			if chk.ok("--follow-all: one scan row", len(scans) == 1, repr(scans)):
				lib.check_scan_row(chk, "--follow-all", scans[0], root, got)
				chk.eq("--follow-all: scan.errors counts the loops", scans[0]["errors"],
				       sum(1 for r in want.values() if r["error"] is not None))

		with chk.guard("--follow"):
			check_inside(chk, top, root)
		with chk.guard("--follow, a link to /"):
			check_root_link(chk, top)
	chk.done()


if __name__ == "__main__":
	main()
