#!/usr/bin/python3
"""t_query.py - what every query command shares, checked on each of them.

The query commands (scans, find, dupes, du, stats, match, export) open the
database read-only, choose scans the same way and refuse bad databases the
same way.  For each command, with the least arguments it needs:

  * --help exits 0 on stdout, and every long option it lists is accepted
    (none is "unknown"); an unknown option is one fatal line;
  * a missing database (named, and the default ./fidx.db), an empty file, a
    text file, another application's SQLite file and a fidx database of a
    newer schema are each refused with exit 2 and one "fidx: " line naming
    the file, and the file is left byte for byte as it was;
  * --scan naming no scan, or not a number, is refused; a database whose only
    scan is still running has "no complete scan" by default, and --scan
    names it anyway;
  * a database is read without being written: its bytes and mtime do not
    change, and user nobody reads a root-owned database in a folder it
    cannot write (read-only media);
  * while another connection holds the write lock with rows not yet
    committed (a scan in the middle of a batch), every command answers at
    once and sees only committed rows;
  * output to a full disk fails with exit 2 and one line; output into a
    closed pipe ends the command at once.

Then `fidx scans` itself: its table and its --json against the scan table.
"""

import base64
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess

import lib
from lib import Checker, TempDir, run_fidx, write

# Each query command with the least arguments it needs besides the database.
QUERY_ARGS = {
	"scans": [],
	"find": [],
	"dupes": [],
	"du": [],
	"stats": [],
	"match": ["@LIST"],
	"export": ["--format", "csv"],
	"verify": [],
}


def commands_listed():
	"""The commands `fidx --help` lists."""
	res = run_fidx("--help")
	names = []
	for line in res.out.decode().splitlines():
		if line.startswith("  ") and line.split():
			names.append(line.split()[0])
	return names


def argv(cmd, db, lst):
	"""The arguments of cmd on database db (None: the default), with list lst for match."""
	args = [a if a != "@LIST" else lst for a in QUERY_ARGS[cmd]]
	return [cmd] + (["--db", db] if db is not None else []) + args


def check_help(chk, cmd):
	"""--help is on stdout, exit 0; every long option it lists is known."""
	res = run_fidx(cmd, "--help")
	chk.ok("%s --help: exit 0, usage on stdout, nothing on stderr" % cmd,
	       res.rc == 0 and res.out.startswith(b"usage: fidx " + cmd.encode()) and not res.err,
	       repr(res))
	# the option lines: "  -x, --name ARG  help" or "      --name ARG  help"
	longs = sorted(set(w.rstrip(",").split("=")[0] for line in res.out.decode().splitlines()
			   if line.lstrip().startswith("-")
			   for w in line.split()[:2] if w.startswith("--") and len(w) > 2))
	unknown = []
	for opt in longs:
		r = run_fidx(cmd, opt, timeout=30)
		if b"unknown option" in r.err:
			unknown.append(opt)
	chk.ok("%s --help: its %d long options are all accepted" % (cmd, len(longs)),
	       longs and not unknown, "unknown: %r (listed: %r)" % (unknown, longs))
	lib.check_fatal(chk, "%s --no-such-option" % cmd, run_fidx(cmd, "--no-such-option"),
			mention=b"--no-such-option")


def check_bad_databases(chk, cmd, top, lst):
	"""Missing, empty, foreign and newer databases: one fatal line, file unchanged."""
	missing = top + b"/missing.db"
	lib.check_fatal(chk, "%s: missing database" % cmd, run_fidx(*argv(cmd, missing, lst)),
			mention=b"missing.db")
	chk.ok("%s: missing database not created" % cmd, not os.path.exists(missing))
	odd = top + b"/back\\slash\nnew.db"
	lib.check_fatal(chk, "%s: a missing database's name is escaped" % cmd,
			run_fidx(*argv(cmd, odd, lst)), mention=b"back\\\\slash\\nnew.db")
	empty_cwd = top + b"/empty-cwd"
	os.makedirs(empty_cwd, exist_ok=True)
	lib.check_fatal(chk, "%s: default ./fidx.db missing" % cmd,
			run_fidx(*argv(cmd, None, lst), cwd=empty_cwd), mention=b"fidx.db")
	for name in (b"empty.db", b"text.db", b"foreign.db", b"newer.db"):
		path = top + b"/" + name
		before = lib.read_bytes(path)
		lib.check_fatal(chk, "%s: %s refused" % (cmd, name.decode()),
				run_fidx(*argv(cmd, path, lst)), mention=name)
		chk.ok("%s: %s unchanged" % (cmd, name.decode()), lib.read_bytes(path) == before)


def make_bad_databases(top, good):
	"""Writes the databases check_bad_databases refuses."""
	write(top + b"/empty.db", b"")
	write(top + b"/text.db", b"hello, not a database\n" * 20)
	con = sqlite3.connect(top + b"/foreign.db")
	con.execute("CREATE TABLE file (path TEXT)")
	con.commit()
	con.close()
	shutil.copyfile(good, top + b"/newer.db")
	con = sqlite3.connect(top + b"/newer.db")
	con.execute("PRAGMA user_version = 99")
	con.commit()
	con.close()


def check_scan_selection(chk, cmd, db, running_db, lst):
	"""--scan errors; only a running scan: no complete scan, unless named."""
	lib.check_fatal(chk, "%s --scan 999" % cmd, run_fidx(*argv(cmd, db, lst), "--scan", "999"),
			mention=b"999")
	lib.check_fatal(chk, "%s --scan x" % cmd, run_fidx(*argv(cmd, db, lst), "--scan", "x"),
			mention=b"'x'")
	if cmd == "scans":
		return
	lib.check_fatal(chk, "%s: only a running scan" % cmd, run_fidx(*argv(cmd, running_db, lst)),
			mention=b"no complete scan")
	res = run_fidx(*argv(cmd, running_db, lst), "--scan", "1")
	chk.ok("%s --scan 1 reads the running scan" % cmd, res.rc in (0, 1) and
	       not any(b"no complete scan" in l or b"cannot" in l for l in res.err_lines()),
	       repr(res))


def check_read_only(chk, cmd, db, ro_db, mount_db, lst):
	"""
	The database is not written; nobody reads it in a folder it cannot write;
	root reads it on a read-only mount (where no -shm file can be made).
	"""
	st0 = os.stat(db)
	before = lib.read_bytes(db)
	res = run_fidx(*argv(cmd, db, lst))
	st1 = os.stat(db)
	chk.ok("%s: runs (exit 0 or 1)" % cmd, res.rc in (0, 1), repr(res))
	chk.ok("%s: database bytes and mtime unchanged" % cmd,
	       lib.read_bytes(db) == before and st0.st_mtime_ns == st1.st_mtime_ns)
	res = run_fidx(*argv(cmd, ro_db, lst), uid=lib.NOBODY)
	chk.ok("%s: nobody reads a database in a folder it cannot write" % cmd,
	       res.rc in (0, 1) and not any(b"cannot" in l for l in res.err_lines()), repr(res))
	res = run_fidx(*argv(cmd, mount_db, lst))
	chk.ok("%s: reads a database on a read-only mount" % cmd,
	       res.rc in (0, 1) and not any(b"cannot" in l for l in res.err_lines()), repr(res))


def check_concurrent_writer(chk, cmd, db, lst):
	"""Another connection holds the write lock with uncommitted rows: no wait, not seen."""
	con = sqlite3.connect(db, timeout=10, isolation_level=None)
	con.execute("BEGIN IMMEDIATE")
	con.execute("INSERT INTO scan (root, started_ns, status) VALUES ('/uncommitted', 1, 'complete')")
	con.execute("INSERT INTO file (scan_id, path, name, ext, type, size) VALUES"
		    " ((SELECT max(id) FROM scan), '/uncommitted', 'uncommitted', '', 'd', 1)")
	try:
		res = run_fidx(*argv(cmd, db, lst), timeout=20)
		chk.ok("%s: answers while a writer holds the lock" % cmd,
		       res.rc in (0, 1) and not res.timed_out and res.elapsed < 5, repr(res))
		chk.ok("%s: uncommitted rows not seen" % cmd, b"/uncommitted" not in res.out, repr(res))
	finally:
		con.execute("ROLLBACK")
		con.close()


def check_scans(chk, db, top):
	"""`fidx scans`: its table and --json against the scan table."""
	want = lib.scan_rows(db)
	res = run_fidx("scans", db)
	chk.ok("scans: exit 0, a header", res.rc == 0 and
	       res.out.split()[:2] == [b"ID", b"STATUS"], repr(res))
	res = run_fidx("scans", "-0", db)
	lines = res.out.split(b"\0")
	chk.ok("scans -0: no header, one NUL-ended line per scan", res.rc == 0 and
	       lines[-1] == b"" and len(lines) == 1 + len(want), repr(res))
	got = [(int(l.split()[0]), l.split()[1].decode(), l.split()[4]) for l in lines[:-1]]
	exp = [(s["id"], s["status"], str(s["entries"]).encode() if s["entries"] is not None
		else b"-") for s in want]
	chk.eq("scans: id, status, entries per line", got, exp)
	chk.ok("scans: each line ends with its root, byte for byte",
	       all(l.endswith(b"  " + s["root"]) for l, s in zip(lines, want)), repr(lines))
	res = run_fidx("scans", "--json", db)
	objs = [json.loads(l) for l in res.out_lines()]
	fields = ["id", "status", "host", "os", "kernel", "arch", "version", "started_ns",
		  "finished_ns", "entries", "files", "dirs", "bytes", "errors"]
	chk.eq("scans --json: every field as in the scan table",
	       [{k: o[k] for k in fields} for o in objs], [{k: s[k] for k in fields} for s in want])
	roots = [base64.b64decode(o["root_base64"]) if "root_base64" in o else
		 o["root"].encode() for o in objs]
	chk.eq("scans --json: roots (base64 when not UTF-8)", roots, [s["root"] for s in want])
	chk.eq("scans --json: options are the recorded JSON", [o["options"] for o in objs],
	       [json.loads(s["options"]) if s["options"] else None for s in want])
	res = run_fidx("scans", "-0", "--scan", "2,1,2", db)
	chk.ok("scans -0 --scan 2,1,2: two lines, in id order",
	       res.rc == 0 and res.out.count(b"\0") == 2 and
	       res.out.split(b"\0")[0].endswith(want[0]["root"]), repr(res))


def main():
	chk = Checker()
	listed = commands_listed()
	with TempDir() as t:
		top = t.path.encode()
		# Two roots, one with a newline and an invalid UTF-8 byte in its name.
		roots = [top + b"/tree", top + b"/odd\nroot\xff"]
		for r in roots:
			os.makedirs(r + b"/sub")
			write(r + b"/a.txt", b"alpha\n")
			write(r + b"/sub/b.txt", b"alpha\n")
			write(r + b"/sub/c.bin", b"\0" * 5000)
		db = top + b"/q.db"
		for r in roots:
			res = run_fidx("scan", "-q", "--hash", "md5,sha256", "-o", db, r)
			chk.ok("setup: scan %r" % r, res.rc == 0, repr(res))
		lst = top + b"/list.sha256"
		write(lst, hashlib.sha256(b"alpha\n").hexdigest().encode() + b"  a.txt\n")
		make_bad_databases(top, db)
		running = top + b"/running.db"
		shutil.copyfile(db, running)
		con = sqlite3.connect(running)
		con.execute("DELETE FROM file WHERE scan_id = 2")
		con.execute("DELETE FROM scan WHERE id = 2")
		con.execute("UPDATE scan SET status = 'running', finished_ns = NULL, entries = NULL,"
			    " seal = NULL")
		con.commit()
		con.close()
		rodir = top + b"/ro"
		os.mkdir(rodir, 0o755)
		ro_db = rodir + b"/q.db"
		shutil.copyfile(db, ro_db)
		os.chmod(ro_db, 0o644)
		os.chmod(lst, 0o644)
		os.chmod(top, 0o755)
		romount = top + b"/romount"
		os.mkdir(romount)
		t.mount_tmpfs(romount, "64m")
		mount_db = romount + b"/q.db"
		shutil.copyfile(db, mount_db)
		subprocess.run(["mount", "-o", "remount,ro", romount], check=True)

		for cmd in QUERY_ARGS:
			if not chk.ok("%s is listed by fidx --help" % cmd, cmd in listed, repr(listed)):
				continue
			with chk.guard(cmd):
				check_help(chk, cmd)
				check_bad_databases(chk, cmd, top, lst)
				check_scan_selection(chk, cmd, db, running, lst)
				check_read_only(chk, cmd, db, ro_db, mount_db, lst)
				check_concurrent_writer(chk, cmd, db, lst)
				lib.check_write_errors(chk, cmd, *argv(cmd, db, lst))
		with chk.guard("scans"):
			check_scans(chk, db, top)
	chk.done()


if __name__ == "__main__":
	main()
