#!/usr/bin/python3
"""t_errors.py - fatal errors: exit 2, one line on stderr, earlier scans intact.

A root that does not exist (no database file is created), a database in a
missing directory, a database that is a text file, an SQLite database that is
not fidx's, a fidx database with a newer schema (user_version 99): each must
exit 2 with one "fidx: " line and leave the file byte for byte as it was.
Then a full filesystem: a 1 MiB tmpfs holds a database with one small scan;
a second scan of a tree whose rows cannot fit must exit 2 with one line
saying the disk is full, and the database must still pass integrity_check
with scan 1 exactly as before.
"""

import os
import sqlite3

import lib
from lib import Checker, run_fidx, write

FULL_FILES = 6000


def check_missing_root(chk, top):
	"""A missing root: fatal, no database made, an existing one unchanged."""
	db = top + b"/missing-root.db"
	missing = top + b"/no/such/dir"
	res = run_fidx("scan", "-o", db, missing)
	lib.check_fatal(chk, "missing root", res, mention=missing)
	chk.ok("missing root: no database file created", not os.path.exists(db), "it exists")
	# the same with a database that already holds a scan: it stays as it was
	root = top + b"/small"
	res = run_fidx("scan", "-q", "-o", db, root)
	chk.ok("missing root: a first scan works", res.rc == 0, repr(res))
	before = lib.read_bytes(db)
	res = run_fidx("scan", "-o", db, missing)
	lib.check_fatal(chk, "missing root, existing db", res, mention=missing)
	chk.ok("missing root, existing db: scan 1 intact and no new scan",
	       [s["id"] for s in lib.scan_rows(db)] == [1] and lib.integrity(db) == "ok",
	       repr(lib.scan_rows(db)))
	chk.ok("missing root, existing db: file unchanged", lib.read_bytes(db) == before,
	       "bytes differ")


def check_bad_databases(chk, top):
	"""Databases fidx must refuse without touching them."""
	root = top + b"/small"
	res = run_fidx("scan", "-o", top + b"/no/such/dir/x.db", root)
	lib.check_fatal(chk, "database in a missing directory", res)
	chk.ok("database in a missing directory: nothing created",
	       not os.path.exists(top + b"/no"), "it exists")

	cases = []
	text = top + b"/notes.txt"
	write(text, b"this is not a database\n" * 100)
	cases.append(("a text file as database", text))

	other = top + b"/other.sqlite"
	con = sqlite3.connect(other)
	con.execute("CREATE TABLE t(x)")
	con.execute("INSERT INTO t VALUES (42)")
	con.commit()
	con.close()
	cases.append(("an SQLite database that is not fidx's", other))

	newer = top + b"/newer.db"
	res = run_fidx("scan", "-q", "-o", newer, root)
	chk.ok("newer schema: a first scan works", res.rc == 0, repr(res))
	con = sqlite3.connect(newer)
	con.execute("PRAGMA journal_mode = DELETE")
	con.execute("PRAGMA user_version = 99")
	con.commit()
	con.close()
	cases.append(("a database with user_version 99", newer))

	for label, db in cases:
		before = lib.read_bytes(db)
		res = run_fidx("scan", "-o", db, root)
		lib.check_fatal(chk, label, res)
		chk.ok("%s: unchanged" % label, lib.read_bytes(db) == before, "bytes differ")
		chk.ok("%s: no -wal or -journal left" % label,
		       not any(os.path.exists(db + s) for s in (b"-wal", b"-journal")),
		       repr(os.listdir(top)))


def check_disk_full(chk, td, top):
	"""A database on a full tmpfs: fatal, sound, scan 1 as before."""
	mnt = top + b"/full"
	os.mkdir(mnt)
	td.mount_tmpfs(os.fsdecode(mnt), "1m")
	db = mnt + b"/fidx.db"
	res = run_fidx("scan", "-q", "-o", db, top + b"/small")
	if not chk.ok("disk full: the first scan fits", res.rc == 0, repr(res)):
		return
	before = lib.dump_scan(db, 1)
	big = top + b"/big"
	os.mkdir(big)
	for i in range(FULL_FILES):
		write(big + b"/%05d-" % i + b"n" * 180, b"")
	res = run_fidx("scan", "-q", "--hash", "none", "-o", db, big, timeout=120)
	lib.check_fatal(chk, "disk full", res)
	line = (res.err_lines() or [b""])[0].lower()
	chk.ok("disk full: the message says so", b"no space left" in line or b"full" in line,
	       lib.short(res.err))
	chk.eq("disk full: integrity_check", lib.integrity(db), "ok")
	chk.ok("disk full: scan 1 intact", lib.dump_scan(db, 1) == before, "it changed")
	con = lib.connect(db)
	try:
		rows = con.execute("SELECT s.status, s.entries, (SELECT count(*) FROM file f"
				   " WHERE f.scan_id = s.id) FROM scan s WHERE s.id = 2").fetchall()
	finally:
		con.close()
	if chk.ok("disk full: scan 2 is recorded", len(rows) == 1, repr(rows)):
		status, entries, stored = rows[0]
		chk.eq("disk full: scan 2 is marked failed", lib._txt(status), "failed")
		chk.eq("disk full: scan 2 counts only the rows kept", entries, stored)


def main():
	chk = Checker()
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		os.makedirs(top + b"/small/sub")
		write(top + b"/small/a", b"a")
		write(top + b"/small/sub/b", b"b")
		for name, fn, args in (("missing root", check_missing_root, (chk, top)),
				       ("bad databases", check_bad_databases, (chk, top)),
				       ("disk full", check_disk_full, (chk, td, top))):
			with chk.guard(name):
				fn(*args)
	chk.done()


if __name__ == "__main__":
	main()
