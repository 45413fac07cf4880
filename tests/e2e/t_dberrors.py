#!/usr/bin/python3
"""t_dberrors.py - a database that cannot be opened: one line, the real cause.

Each case is checked against what the OS says for the same user: the errno of
an open(2) (or a write(2)) of the same file, run as that user by Python.  Each
must exit 2 with exactly one "fidx: " line (after the note a scan as nobody
prints first) naming the file at fault and that errno's text, and leave every
file as it was (no database made where none was):

  * nobody, in a folder it cannot write: `fidx scan small` (./fidx.db);
  * nobody, a database file it may not write;
  * nobody, its own database in a folder it cannot write (no -wal can be
    made beside it), and an empty file of its own there (no -journal);
  * a read-only mount: an existing database, a new one;
  * a full disk when the database is created (the empty file is not left);
  * a path through a missing folder, and a database that is a directory;
  * reading as nobody a database whose -shm it may not read;
  * `fidx dupes` on a database nobody may not write: its warning says why.
"""

import errno
import os
import shutil
import sqlite3
import subprocess

import lib
from lib import Checker, TempDir, run_fidx, write

NOTE = b"fidx: warning: not running as root"


def os_says(path, flags, uid=None, data=None):
	"""The errno text of os.open(path, flags) (then writing data) as uid; '' when it works."""
	code = ("import os, sys\n"
		"try:\n"
		"    fd = os.open(sys.argv[1], int(sys.argv[2]), 0o644)\n"
		"    if len(sys.argv) > 3: os.write(fd, sys.argv[3].encode())\n"
		"except OSError as e:\n"
		"    print(os.strerror(e.errno), end='')\n")
	args = [os.fsdecode(path), str(flags)] + ([data] if data else [])
	cmd = ([] if uid is None else lib.user_prefix(uid)) + ["/usr/bin/python3", "-c", code] + args
	return subprocess.run(cmd, capture_output=True, text=True).stdout.encode()


def state(folder):
	"""Every name in folder with its bytes (None for a folder)."""
	out = {}
	for n in sorted(os.listdir(folder)):
		p = os.path.join(folder, n)
		out[n] = None if os.path.isdir(p) else lib.read_bytes(p)
	return out


def check_case(chk, label, res, line):
	"""Exit 2, one fatal line: exactly line (bytes), after the note of a non-root scan."""
	lines = [l for l in res.err_lines() if not l.startswith(NOTE)]
	chk.ok("%s: exit 2" % label, res.rc == 2, repr(res))
	chk.eq("%s: one line with the OS's reason" % label, lines, [line])


def main():
	chk = Checker()
	with TempDir() as t:
		top = t.path.encode()
		os.chmod(top, 0o755)
		small = top + b"/small"
		os.mkdir(small)
		write(small + b"/a", b"a\n")
		good = top + b"/good.db"
		res = run_fidx("scan", "-q", "-o", good, small)
		chk.ok("setup: a database", res.rc == 0, repr(res))
		nb = lib.NOBODY

		# nobody in a folder it cannot write: the default ./fidx.db
		ro = top + b"/ro"
		os.mkdir(ro, 0o755)
		before = state(ro)
		why = os_says(ro + b"/fidx.db", os.O_RDWR | os.O_CREAT, uid=nb)
		res = run_fidx("scan", "-q", small, cwd=ro, uid=nb)
		check_case(chk, "nobody, a folder it cannot write", res,
			   b"fidx: cannot create database 'fidx.db': " + why)
		chk.eq("nobody, a folder it cannot write: no file made", state(ro), before)

		# nobody, a database file it may not write
		db = ro + b"/root.db"
		shutil.copyfile(good, db)
		before = state(ro)
		why = os_says(db, os.O_RDWR, uid=nb)
		res = run_fidx("scan", "-q", "-o", db, small, uid=nb)
		check_case(chk, "nobody, a database it may not write", res,
			   b"fidx: cannot write database '%s': %s" % (db, why))
		chk.eq("nobody, a database it may not write: unchanged", state(ro), before)

		# nobody's own database in a folder it cannot write: no -wal beside it
		db = ro + b"/own.db"
		shutil.copyfile(good, db)
		os.chown(db, nb, nb)
		before = state(ro)
		why = os_says(db + b"-wal", os.O_RDWR | os.O_CREAT, uid=nb)
		res = run_fidx("scan", "-q", "-o", db, small, uid=nb)
		check_case(chk, "nobody, its database in a folder it cannot write", res,
			   b"fidx: cannot create '%s-wal' beside database '%s': %s" % (db, db, why))
		chk.eq("nobody, its database in a folder it cannot write: unchanged", state(ro), before)
		db = ro + b"/empty.db"
		write(db)
		os.chown(db, nb, nb)
		before = state(ro)
		why = os_says(db + b"-journal", os.O_RDWR | os.O_CREAT, uid=nb)
		res = run_fidx("scan", "-q", "-o", db, small, uid=nb)
		check_case(chk, "nobody, its empty file in a folder it cannot write", res,
			   b"fidx: cannot create '%s-journal' beside database '%s': %s" % (db, db, why))
		chk.eq("nobody, its empty file in a folder it cannot write: unchanged", state(ro),
		       before)

		# a read-only mount
		mnt = top + b"/rom"
		os.mkdir(mnt)
		t.mount_tmpfs(os.fsdecode(mnt), "4m")
		db = mnt + b"/e.db"
		shutil.copyfile(good, db)
		subprocess.run(["mount", "-o", "remount,ro", mnt], check=True)
		before = state(mnt)
		res = run_fidx("scan", "-q", "-o", db, small)
		check_case(chk, "read-only mount, a database", res, b"fidx: cannot write database"
			   b" '%s': %s" % (db, os_says(db, os.O_RDWR)))
		new = mnt + b"/new.db"
		res = run_fidx("scan", "-q", "-o", new, small)
		check_case(chk, "read-only mount, a new database", res, b"fidx: cannot create database"
			   b" '%s': %s" % (new, os_says(new, os.O_RDWR | os.O_CREAT)))
		chk.eq("read-only mount: unchanged", state(mnt), before)

		# a full disk when the database is made
		full = top + b"/full"
		os.mkdir(full)
		t.mount_tmpfs(os.fsdecode(full), "256k")
		try:
			with open(full + b"/filler", "wb") as f:
				while True:
					f.write(b"\0" * 4096)
					f.flush()
		except OSError as e:
			chk.eq("full disk: filled", e.errno, errno.ENOSPC)
		before = state(full)
		new = full + b"/new.db"
		why = os_says(full + b"/probe", os.O_RDWR | os.O_CREAT, data="x" * 8192)
		os.unlink(full + b"/probe")
		res = run_fidx("scan", "-q", "-o", new, small)
		check_case(chk, "full disk at creation", res,
			   b"fidx: cannot write database '%s': %s" % (new, why))
		chk.eq("full disk at creation: no database file left", state(full), before)

		# a missing folder, a directory
		new = top + b"/no/such/x.db"
		res = run_fidx("scan", "-q", "-o", new, small)
		check_case(chk, "a path through a missing folder", res, b"fidx: cannot create database"
			   b" '%s': %s" % (new, os_says(new, os.O_RDWR | os.O_CREAT)))
		chk.ok("a path through a missing folder: not made", not os.path.exists(top + b"/no"))
		d = top + b"/dir.db"
		os.mkdir(d)
		res = run_fidx("scan", "-q", "-o", d, small)
		check_case(chk, "a database that is a directory", res, b"fidx: cannot open database"
			   b" '%s': %s" % (d, os_says(d, os.O_RDWR)))

		# reading, as nobody, a database whose -shm it may not read
		db = ro + b"/held.db"
		shutil.copyfile(good, db)
		con = sqlite3.connect(db)
		con.execute("PRAGMA wal_autocheckpoint = 0")
		con.execute("INSERT INTO scan (root, started_ns, status) VALUES ('/x', 1, 'failed')")
		con.commit()
		try:
			os.chmod(db + b"-shm", 0o600)
			res = run_fidx("scans", db, uid=nb)
			lib.check_fatal(chk, "nobody reads, an -shm it may not read", res)
			chk.eq("nobody reads, an -shm it may not read: the reason", res.err_lines(),
			       [b"fidx: cannot read '%s-shm' beside database '%s': %s" %
				(db, db, os_says(db + b"-shm", os.O_RDONLY, uid=nb))])
		finally:
			con.close()

		# dupes on a database nobody may not write: the digests are not kept, and why
		db = ro + b"/dupes.db"
		dtree = top + b"/dtree"
		os.mkdir(dtree)
		write(dtree + b"/x", b"same\n")
		write(dtree + b"/y", b"same\n")
		res = run_fidx("scan", "-q", "--hash", "none", "-o", db, dtree)
		chk.ok("dupes: a scan without digests", res.rc == 0, repr(res))
		res = run_fidx("dupes", db, uid=nb)
		chk.eq("dupes as nobody: one warning with the reason", res.err_lines(),
		       [b"fidx: warning: the digests computed are not kept: cannot write database"
			b" '%s': %s" % (db, os_says(db, os.O_RDWR, uid=nb))])
	chk.done()


if __name__ == "__main__":
	main()
