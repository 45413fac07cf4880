#!/usr/bin/python3
"""t_schema.py - schema objects fidx did not create are never run.

A database travels between examiners; anyone who had it may have added to its
schema.  Each case is a copy of a database holding one sealed scan, edited
with Python's sqlite3:

  * the trigger of the report (AFTER INSERT ON file: UPDATE file SET size =
    999 WHERE scan_id = 1, and a row into a table of its own, to be seen):
    `fidx scan` into it is refused with one line naming it, the file byte
    for byte as it was, no -wal or -shm left; scan 1 still verifies; `fidx
    find`, `export` and `dupes` answer as on the clean copy, with one warning
    line naming it, and the trigger never fires;
  * the same trigger added while a scan writes (after the store accepted the
    database): it never fires, scan 1 is unchanged and the new scan seals;
  * a foreign view, index and table, a view of fidx's with another text, a
    column added to a table of fidx's: each refused for writing, named, and
    read with a warning;
  * databases of every schema version fidx made (1 to 6 made from the
    current one by dropping what later versions added, as SQLite's ALTER
    TABLE DROP COLUMN rewrites the table's SQL, and the views, whose text
    of those versions is not known here), and one with SQLite's statistics
    tables (ANALYZE): read and written without a word, migrated to the
    current version by the write, the sealed scan (from 4 on: a copy of 3
    loses the run_ns it was sealed with) intact before and after.
"""

import os
import shutil
import signal
import sqlite3
import subprocess
import time

import lib
from lib import Checker, TempDir, run_fidx, write

CURRENT_VERSION = 7  # FIDX_SCHEMA_VERSION (src/store/store.h)
BATCH_ROWS = 10000  # the rows of one transaction of the store (DEFAULT_BATCH_ROWS, src/store/sqlite/sqlite.c)
REFUSED = b"holds schema objects fidx did not create (%s); refusing to write to it"
WARNED = b"holds schema objects fidx did not create (%s); reading it without running them"

TRIGGER = ("CREATE TABLE fired (n INTEGER);"
	   " CREATE TRIGGER evil AFTER INSERT ON file BEGIN"
	   " UPDATE file SET size = 999 WHERE scan_id = 1;"
	   " INSERT INTO fired VALUES (1); END;")


def edited(top, db, name, sql):
	"""A copy of db named name, with sql run on it by Python's sqlite3 (WAL folded back)."""
	folder = top + b"/" + name
	os.mkdir(folder)
	copy = folder + b"/c.db"
	shutil.copyfile(db, copy)
	con = lib.connect(copy)
	con.executescript(sql)
	con.commit()
	con.close()
	return copy


def older(top, db, version):
	"""A copy of db turned into a database of an older schema version (lib.downgrade)."""
	folder = top + b"/v%d" % version
	os.mkdir(folder)
	copy = folder + b"/c.db"
	shutil.copyfile(db, copy)
	lib.downgrade(copy, version)
	return copy


def folder_state(path):
	"""The names beside a database and its bytes."""
	return sorted(os.listdir(os.path.dirname(path))), lib.read_bytes(path)


def fired(db):
	"""The rows of the trigger's table (it is there only if the trigger ran)."""
	con = lib.connect(db)
	try:
		return con.execute("SELECT count(*) FROM fired").fetchone()[0]
	finally:
		con.close()


def check_refused(chk, label, db, root, named):
	"""`fidx scan` into db: one line naming the objects, the file and its folder as they were."""
	before = folder_state(db)
	res = run_fidx("scan", "-q", "-o", db, root)
	lib.check_fatal(chk, "%s: scan refused" % label, res, mention=REFUSED % named)
	chk.ok("%s: the file byte for byte as it was, nothing left beside it" % label,
	       folder_state(db) == before, repr(folder_state(db)[0]))


def check_read(chk, label, db, clean, named):
	"""find, export and dupes on db answer as on the clean copy, with one warning each."""
	for args in (["find", "-0"], ["export", "-f", "csv"], ["dupes"]):
		res = run_fidx(*args, db)
		want = run_fidx(*args, clean)
		cmd = " ".join(args)
		chk.ok("%s: %s answers as on the clean copy" % (label, cmd),
		       res.rc == want.rc and res.out == want.out, "%r vs %r" % (res, want))
		chk.eq("%s: %s says so once" % (label, cmd), res.err_lines(),
		       [b"fidx: warning: database '%s' " % db + WARNED % named])


def check_trigger(chk, top, db, root):
	"""The trigger of the report: refused for writing, never run."""
	t = edited(top, db, b"trigger", TRIGGER)
	scan1 = lib.dump_scan(t, 1)
	check_refused(chk, "trigger", t, root, b"table 'fired', trigger 'evil'")
	check_read(chk, "trigger", t, db, b"table 'fired', trigger 'evil'")
	chk.eq("trigger: never fired", fired(t), 0)
	chk.ok("trigger: scan 1 unchanged", lib.dump_scan(t, 1) == scan1)
	res = run_fidx("verify", t)
	chk.ok("trigger: fidx verify finds scan 1 intact", res.rc == 0 and b"intact" in res.out,
	       repr(res))


def check_trigger_during_scan(chk, top, db):
	"""
	A trigger added while a scan writes, after the store accepted the
	database: the scan is stopped (SIGSTOP) once it committed its first
	BATCH_ROWS rows, between two transactions, Python adds the trigger, and
	the scan goes on with its other rows; the trigger never fires.  The race
	shim holds the scan's read of one file until the trigger is made, so the
	scan cannot end before, however fast the machine is.
	"""
	folder = top + b"/during"
	os.mkdir(folder)
	d = folder + b"/c.db"
	shutil.copyfile(db, d)
	slow = top + b"/slow"
	dirs = 30
	for k in range(dirs):
		os.makedirs(slow + b"/d%d" % k)
	for i in range(3 * BATCH_ROWS):
		write(slow + b"/d%d/f%d" % (i % dirs, i))
	write(slow + b"/fidx-race-hold", b"held")
	release = folder + b"/release"
	scan1 = lib.dump_scan(d, 1)
	p = subprocess.Popen([lib.FIDX, "scan", "-q", "-j", "1", "--hash", "md5", "--db", d, slow],
			     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
			     stderr=subprocess.PIPE, start_new_session=True,
			     env=dict(os.environ, LD_PRELOAD=lib.SHIM,
				      FIDX_RACE_RELEASE=release.decode(),
				      ASAN_OPTIONS=":".join(filter(None, [
					      os.environ.get("ASAN_OPTIONS"),
					      "verify_asan_link_order=0"]))))
	deadline = time.monotonic() + 100  # below the shim's own limit of a hold, 120 s
	while time.monotonic() < deadline and p.poll() is None:
		con = lib.connect(d)
		n = con.execute("SELECT count(*) FROM file WHERE scan_id = 2").fetchone()[0]
		con.close()
		if n >= BATCH_ROWS:
			break
		time.sleep(0.01)
	last = None
	while last is None and time.monotonic() < deadline and p.poll() is None:
		os.kill(p.pid, signal.SIGSTOP)
		try:
			con = sqlite3.connect(d, timeout=0.2)
			con.executescript(TRIGGER)
			con.commit()
			last = con.execute("SELECT max(id) FROM file").fetchone()[0]
			con.close()
		except sqlite3.OperationalError:  # stopped inside a transaction: a little further
			con.close()
			os.kill(p.pid, signal.SIGCONT)
			time.sleep(0.005)
	os.kill(p.pid, signal.SIGCONT)
	write(release, b"")
	_, err = p.communicate(timeout=120)
	chk.ok("trigger during a scan: the scan completes", p.returncode == 0, repr(err))
	con = lib.connect(d)
	after = con.execute("SELECT count(*) FROM file WHERE id > ?", (last or 0,)).fetchone()[0]
	con.close()
	chk.ok("trigger during a scan: rows were inserted after the trigger was made",
	       last is not None and after > 0, "none after row %r" % last)
	chk.eq("trigger during a scan: never fired", fired(d), 0)
	chk.ok("trigger during a scan: scan 1 unchanged", lib.dump_scan(d, 1) == scan1)
	res = run_fidx("verify", "--all", d)
	chk.ok("trigger during a scan: both scans intact", res.rc == 0 and
	       res.out.count(b"intact") == 2, repr(res))


def check_other_objects(chk, top, db, root):
	"""A foreign view, index, table, a changed view, an added column."""
	cases = [
		("foreign view", "CREATE VIEW spy AS SELECT path FROM file", b"view 'spy'"),
		("foreign index", "CREATE INDEX by_size ON file (size)", b"index 'by_size'"),
		("foreign table", "CREATE TABLE notes (text TEXT)", b"table 'notes'"),
		("changed view", "DROP VIEW data; CREATE VIEW data AS SELECT id, path AS full_path"
		 " FROM file", b"view 'data' changed"),
		("added column", "ALTER TABLE scan ADD COLUMN case_number TEXT",
		 b"table 'scan' changed"),
	]
	for label, sql, named in cases:
		c = edited(top, db, label.replace(" ", "-").encode(), sql)
		check_refused(chk, label, c, root, named)
		check_read(chk, label, c, db, named)


def check_ours(chk, top, db, root):
	"""Databases of every version fidx made, and one with ANALYZE's tables: no word."""
	cases = [("version %d" % v, older(top, db, v)) for v in sorted(lib.OLDER_VERSIONS)]
	cases.append(("ANALYZE", edited(top, db, b"analyzed", "ANALYZE")))
	for label, c in cases:
		# A copy of version 3 loses run_ns, which its seal covers: from 4 on.
		sealed = label == "ANALYZE" or int(label.split()[1]) >= 4
		if sealed:
			res = run_fidx("verify", "--scan", "1", c)
			chk.ok("%s: scan 1's seal verifies as it is" % label,
			       res.rc == 0 and b"intact" in res.out, repr(res))
		res = run_fidx("find", "-0", c)
		want = run_fidx("find", "-0", db)
		chk.ok("%s: find answers, not a word on stderr" % label,
		       res.rc == 0 and res.out == want.out and not res.err, repr(res))
		res = run_fidx("scan", "-q", "-o", c, root)
		chk.ok("%s: a scan into it" % label, res.rc == 0 and not res.err, repr(res))
		res = run_fidx("find", "-0", c)
		chk.ok("%s: read after the scan, not a word on stderr" % label,
		       res.rc == 0 and not res.err, repr(res))
		if sealed:
			res = run_fidx("verify", "--scan", "1", c)
			chk.ok("%s: scan 1's seal verifies once migrated" % label,
			       res.rc == 0 and b"intact" in res.out, repr(res))
		chk.eq("%s: migrated to the current version" % label,
		       lib.connect(c).execute("PRAGMA user_version").fetchone()[0], CURRENT_VERSION)


def main():
	chk = Checker()
	with TempDir() as t:
		top = t.path.encode()
		root = top + b"/tree"
		os.makedirs(root + b"/sub")
		write(root + b"/a.txt", b"alpha\n")
		write(root + b"/sub/b.txt", b"alpha\n")
		write(root + b"/sub/c.bin", b"\0" * 5000)
		db = top + b"/clean.db"
		res = run_fidx("scan", "-q", "--hash", "sha256", "-o", db, root)
		chk.ok("setup: a sealed scan", res.rc == 0, repr(res))
		with chk.guard("trigger"):
			check_trigger(chk, top, db, root)
		with chk.guard("trigger during a scan"):
			check_trigger_during_scan(chk, top, db)
		with chk.guard("other objects"):
			check_other_objects(chk, top, db, root)
		with chk.guard("ours"):
			check_ours(chk, top, db, root)
	chk.done()


if __name__ == "__main__":
	main()
