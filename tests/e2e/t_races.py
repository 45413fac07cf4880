#!/usr/bin/python3
# e2e: tsan (tests/e2e/run --marked tsan): the hashing stage's threads on files that change.
"""t_races.py - files that vanish or grow while the scan reads them.

race-shim.so (LD_PRELOAD, see race-shim.c) unlinks "fidx-race-delete*" just
before fidx opens it and appends to "fidx-race-append*" just after.  Then:

  * the deleted file is still recorded, with the metadata the walk saw
    (the ground truth taken before the scan), error
    'open: No such file or directory' and no digests;
  * the appended file gets the error 'changed during scan' and no digests
    (its size and times may be the walk's or the later ones);
  * the other files are hashed as usual, and the scan exits 1;
  * --errors lists the five after the summary, the newline of one name
    escaped as \\n so that each stays on one line.
The directory holding them changes when the file is unlinked, so its mtime,
ctime and size may be from before or after.
"""

import os

import lib
from lib import Checker, OneOf, compare, run_fidx, truth, write

ERR_GONE = "open: " + os.strerror(2)   # "No such file or directory"
ERR_CHANGED = "changed during scan"


def main():
	chk = Checker()
	if not lib.SHIM or not os.path.exists(lib.SHIM):
		chk.ok("race shim built", False, "FIDX_SHIM=%r does not exist" % lib.SHIM)
		chk.done()
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		root = top + b"/root.d"
		os.makedirs(root + b"/r")
		write(root + b"/before", b"a normal file")
		write(root + b"/r/fidx-race-delete-1", b"to be deleted" * 1000)
		write(root + b"/r/fidx-race-delete-2.txt", b"")
		write(root + b"/r/fidx-race-delete-new\nline", b"a name to escape")
		write(root + b"/r/fidx-race-append-1", b"to be appended to" * 1000)
		write(root + b"/r/fidx-race-append-2", b"x" * (3 << 20))
		write(root + b"/r/normal", b"a normal file next to them")
		lib.settle(root)
		want = truth(root)
		db = top + b"/fidx.db"
		res = run_fidx("scan", "-q", "--errors", "--hash", "md5,sha1,sha256,sha512,xxh128",
			       "-o", db, root, preload=lib.SHIM, timeout=120)
		now = truth(root, lib.Truth(hashes=[], btime=False))
		chk.ok("races: exit 1", res.rc == 1 and not res.timed_out, repr(res))
		chk.ok("races: the shim did its work (files deleted and grown)",
		       root + b"/r/fidx-race-delete-1" not in now and
		       now.get(root + b"/r/fidx-race-append-1", {}).get("size", 0) >
		       want[root + b"/r/fidx-race-append-1"]["size"],
		       "tree after the scan: %s" % lib.short(sorted(now)))
		for name in (b"fidx-race-delete-1", b"fidx-race-delete-2.txt",
			     b"fidx-race-delete-new\nline"):
			r = want[root + b"/r/" + name]
			for d in lib.DIGESTS:
				r[d] = None
			r["error"] = ERR_GONE
		for name in (b"fidx-race-append-1", b"fidx-race-append-2"):
			p = root + b"/r/" + name
			r = want[p]
			for d in lib.DIGESTS:
				r[d] = None
			r["error"] = ERR_CHANGED
			for k in ("size", "blocks", "mtime_ns", "ctime_ns"):
				r[k] = OneOf(r[k], now[p][k])
		d = want[root + b"/r"]
		for k in ("size", "blocks", "mtime_ns", "ctime_ns"):
			d[k] = OneOf(d[k], now[root + b"/r"][k])
		got, dups = lib.db_rows(db, 1)
		compare(chk, "races", got, dups, want)
		scans = lib.scan_rows(db)
		if chk.ok("races: one scan row", len(scans) == 1, repr(scans)):
			lib.check_scan_row(chk, "races", scans[0], root, got)
			chk.eq("races: scan.errors", scans[0]["errors"], 5)
		errs = sorted((p.replace(b"\n", b"\\n") + b": " + r["error"].encode())
			      for p, r in want.items() if r["error"] is not None)
		chk.eq("--errors: the summary and the seal, then 'PATH: ERROR' per error, paths escaped",
		       sorted(l for l in res.out_lines()[1:] if not lib.is_seal_line(l)), errs)
	chk.done()


if __name__ == "__main__":
	main()
