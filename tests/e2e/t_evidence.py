#!/usr/bin/python3
# e2e: alone (tests/e2e/run): it holds an export stuck in write() after a fixed pause.
"""t_evidence.py - the query commands leave evidence as they found it.

A database that no connection is open on (no -wal or -shm beside it) is read
as an immutable file under fidx's reader lock (src/store/sqlite/dbfile.h); fidx's writers
do not write the main file while a reader holds that lock.

  * every query command (find, dupes, du, stats, match, scans, export, diff,
    verify, check's baseline) on a quiescent database: the folder's listing,
    and the size, mtime and ctime of the folder and of every file in it, are
    as before (os.stat);
  * a query started before a `fidx scan` into the same database (an export
    held in the middle of its output by a pipe nobody reads) answers with
    exactly the rows it began with, while the scan writes more than SQLite's
    1000-page checkpoint threshold: the main file does not move until the
    query ends; the next writer folds the WAL back;
  * queries started while a slow scan runs answer exactly (Python's sqlite3
    after the scan), and the database passes integrity_check, every seal
    intact (`fidx verify`);
  * a writer that is not fidx (Python's sqlite3, which knows nothing of the
    lock) rewriting the main file during such a read: the query fails with
    one line saying so, exit 2.
"""

import hashlib
import os
import select
import signal
import subprocess
import time

import lib
from lib import Checker, TempDir, run_fidx, write

HELD_FILES = 2000     # rows enough for an export to fill a pipe and fidx's buffer
BULK_FILES = 20000    # rows enough for a scan's WAL to pass 1000 pages
SLOW_SIZE = 512 << 20


def folder_state(folder):
	"""The names in folder and, for it and each, (size, mtime, ctime, inode)."""
	def one(p):
		st = os.lstat(p)
		return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
	names = sorted(os.listdir(folder))
	return {"names": names, ".": one(folder),
		**{n: one(os.path.join(folder, n)) for n in names}}


def main_file(db):
	"""The size, mtime and ctime of a database's main file."""
	st = os.stat(db)
	return (st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def csv_paths(out):
	"""The path column of `fidx export -f csv --csv-raw` output (paths here need no quoting)."""
	lines = out.split(b"\n")
	col = lines[0].split(b",").index(b"path")
	return sorted(l.split(b",")[col] for l in lines[1:] if l)


def db_paths(db, where):
	"""The paths of the file rows matching where, by Python's sqlite3."""
	con = lib.connect(db)
	try:
		return sorted(r[0] for r in con.execute("SELECT path FROM file WHERE " + where))
	finally:
		con.close()


def held_export(db):
	"""Starts `fidx export DB -f csv --csv-raw`, returns it once it is stuck writing to its pipe."""
	p = subprocess.Popen([lib.FIDX, "export", db, "-f", "csv", "--csv-raw"], stdin=subprocess.DEVNULL,
			     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
	select.select([p.stdout], [], [], 20)
	time.sleep(0.3)  # the pipe and fidx's buffer fill; it waits in write()
	return p


def drain(p):
	"""Reads all of a held export; returns (exit status, stdout, stderr)."""
	out, err = p.communicate(timeout=120)
	return p.returncode, out, err


def check_quiescent(chk, top, tree, ev, db):
	"""Every query command on a database at rest leaves its folder as it was."""
	lst = top + b"/list.sha256"
	write(lst, hashlib.sha256(lib.read_bytes(tree + b"/d0/f0")).hexdigest().encode() + b"  a\n")
	tmp = top + b"/tmp"
	os.mkdir(tmp)
	env = {"TMPDIR": os.fsdecode(tmp)}
	commands = [
		["find", db, "f1"], ["find", "-l", db, "f1"], ["dupes", db], ["du", db],
		["stats", db], ["match", db, lst], ["scans", db], ["export", db, "-f", "csv"],
		["export", db, "-f", "dfxml"], ["diff", db], ["verify", db], ["check", db, tree],
	]
	for args in commands:
		before = folder_state(ev)
		res = run_fidx(*args, env=env)
		after = folder_state(ev)
		name = " ".join("DB" if a == db else os.fsdecode(os.path.basename(a)) for a in args)
		chk.ok("%s: answers" % name, res.rc in (0, 1) and
		       not any(b"cannot" in l or b"warning" in l for l in res.err_lines()), repr(res))
		chk.eq("%s: no file made beside the database" % name, after["names"], before["names"])
		chk.eq("%s: size, mtime and ctime of the folder and its files unchanged" % name,
		       after, before)


def check_reader_first(chk, top, ev, db):
	"""A query begun before a scan: its rows as they were; the main file still meanwhile."""
	bulk = top + b"/bulk"
	for d in range(BULK_FILES // 500):
		os.makedirs(bulk + b"/d%d" % d)
		for i in range(500):
			write(bulk + b"/d%d/file-with-a-long-name-%05d" % (d, i))
	want = db_paths(db, "scan_id IN (SELECT max(id) FROM scan WHERE status = 'complete'"
			" GROUP BY root)")
	main0 = main_file(db)
	p = held_export(db)
	res = run_fidx("scan", "-q", "--hash", "none", "-o", db, bulk)
	chk.ok("reader first: a scan of %d files into the database meanwhile" % BULK_FILES,
	       res.rc == 0, repr(res))
	wal = os.stat(db + b"-wal").st_size if os.path.exists(db + b"-wal") else 0
	chk.ok("reader first: the scan wrote more than 1000 pages (%d bytes of WAL)" % wal,
	       wal > 1000 * 4096, "wal %d" % wal)
	chk.eq("reader first: the main file did not move while the query read it",
	       main_file(db), main0)
	rc, out, err = drain(p)
	chk.ok("reader first: export exit 0, nothing on stderr", rc == 0 and not err,
	       "rc=%r %r" % (rc, err))
	chk.ok("reader first: export gives exactly the rows it began with",
	       csv_paths(out) == want, "%d paths, want %d" % (len(csv_paths(out)), len(want)))
	# The next writer folds the WAL back and removes it.
	res = run_fidx("scan", "-q", "-o", db, top + b"/small")
	chk.ok("reader first: a later scan", res.rc == 0, repr(res))
	chk.eq("reader first: then no -wal or -shm is left", sorted(os.listdir(ev)), [b"e.db"])
	chk.eq("reader first: integrity_check", lib.integrity(db), "ok")
	scans = lib.scan_rows(db)
	bulk_scan = [s for s in scans if s["root"] == bulk][0]
	chk.eq("reader first: the bulk scan holds every entry",
	       len(db_paths(db, "scan_id = %d" % bulk_scan["id"])), BULK_FILES + BULK_FILES // 500 + 1)
	res = run_fidx("verify", "--all", db)
	chk.ok("reader first: every seal intact", res.rc == 0 and
	       res.out.count(b"intact") == len(scans), repr(res))


def check_writer_first(chk, top, ev, db):
	"""Queries begun while a slow scan runs answer from the committed, complete scans."""
	slow = top + b"/slow"
	os.mkdir(slow)
	for i in range(2):
		lib.sparse(slow + b"/big%d" % i, SLOW_SIZE, [(SLOW_SIZE - 1, b"!")])
	p = lib.start_scan(db, "--hash", "sha512", slow)
	complete = "scan_id IN (SELECT max(id) FROM scan WHERE status = 'complete' GROUP BY root)"
	res_find = run_fidx("find", "-0", db, "/")
	res_exp = run_fidx("export", db, "-f", "csv", "--csv-raw")
	running = p.poll() is None
	_, err = p.communicate(timeout=120)
	chk.ok("writer first: the scan was still running during the queries", running)
	chk.ok("writer first: the scan", p.returncode == 0, "rc=%r %r" % (p.returncode, err))
	# The slow scan's rows are newer than any query's selection: compare without them.
	want = db_paths(db, complete + " AND scan_id <> (SELECT max(id) FROM scan)")
	chk.ok("writer first: find answers exactly", res_find.rc == 0 and
	       sorted(res_find.out.split(b"\0")[:-1]) == want, repr(res_find))
	chk.ok("writer first: export answers exactly", res_exp.rc == 0 and
	       csv_paths(res_exp.out) == want, repr(res_exp))
	chk.eq("writer first: integrity_check", lib.integrity(db), "ok")
	res = run_fidx("verify", "--all", db)
	chk.ok("writer first: every seal intact", res.rc == 0 and
	       res.out.count(b"intact") == len(lib.scan_rows(db)), repr(res))
	chk.eq("writer first: no -wal or -shm left", sorted(os.listdir(ev)), [b"e.db"])


def check_foreign_writer(chk, db):
	"""Python's sqlite3 rewrites the main file under a held read: the query says so."""
	p = held_export(db)
	con = lib.connect(db)
	con.execute("INSERT INTO scan (root, started_ns, status) VALUES ('/other', 1, 'failed')")
	con.commit()
	con.close()  # the last connection: checkpoints into the main file
	rc, out, err = drain(p)
	lines = [l for l in err.split(b"\n") if l]
	chk.ok("foreign writer: exit 2, one line saying the database changed while read",
	       rc == 2 and len(lines) == 1 and b"changed while it was read" in lines[0],
	       "rc=%r %r" % (rc, err))


def check_foreign_writer_output(chk, top, db):
	"""The same with -o FILE: the export that read a changed database is not put in place."""
	out = top + b"/changed.csv"
	for attempt in range(10):
		p = subprocess.Popen([lib.FIDX, "export", db, "-f", "csv", "-o", out],
				     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
				     stderr=subprocess.PIPE, start_new_session=True)
		caught = False
		while p.poll() is None:
			# Its temporary file beside FILE: the database is held, rows are going out.
			if any(n.startswith(b"changed.csv.") for n in os.listdir(top)):
				os.killpg(p.pid, signal.SIGSTOP)
				caught = p.poll() is None
				break
			time.sleep(0.0002)
		if caught:
			break
		p.communicate()
		if os.path.exists(out):
			os.unlink(out)
	if not caught:
		chk.ok("foreign writer, -o: the export caught while it runs", False, "10 attempts")
		return
	con = lib.connect(db)
	con.execute("INSERT INTO scan (root, started_ns, status) VALUES ('/other2', 1, 'failed')")
	con.commit()
	con.close()
	os.killpg(p.pid, signal.SIGCONT)
	_, err = p.communicate(timeout=120)
	lines = [l for l in err.split(b"\n") if l]
	chk.ok("foreign writer, -o: exit 2, one line, and FILE not made",
	       p.returncode == 2 and len(lines) == 1 and b"changed while it was read" in lines[0]
	       and not os.path.exists(out) and
	       not [n for n in os.listdir(top) if n.startswith(b"changed.csv")],
	       "rc=%r %r %r" % (p.returncode, err, os.listdir(top)))


def main():
	chk = Checker()
	with TempDir() as t:
		top = t.path.encode()
		tree = top + b"/tree"
		for d in range(4):
			os.makedirs(tree + b"/d%d" % d)
			for i in range(HELD_FILES // 4):
				write(tree + b"/d%d/f%d" % (d, i), b"content %d\n" % (i % 50))
		os.makedirs(top + b"/small")
		write(top + b"/small/x", b"x\n")
		lib.settle(tree)
		ev = top + b"/evidence"
		os.mkdir(ev)
		db = ev + b"/e.db"
		for _ in range(2):
			res = run_fidx("scan", "-q", "--hash", "sha256,md5", "-o", db, tree)
			chk.ok("setup: scan", res.rc == 0, repr(res))
		chk.eq("setup: the scans left no -wal or -shm", sorted(os.listdir(ev)), [b"e.db"])
		with chk.guard("quiescent"):
			check_quiescent(chk, top, tree, ev, db)
		with chk.guard("reader first"):
			check_reader_first(chk, top, ev, db)
		with chk.guard("writer first"):
			check_writer_first(chk, top, ev, db)
		with chk.guard("foreign writer"):
			check_foreign_writer(chk, db)
			check_foreign_writer_output(chk, top, db)
	chk.done()


if __name__ == "__main__":
	main()
