"""t_push.py - fidx push: scans made offline copied into a PostgreSQL store.

A SQLite database holds three scans: t_columns' hostile tree (every digest),
a folder of 100,000 hard links (six batches of rows; 45,000, three batches, on
a sanitizer build, where the point is memory errors, not scale), and a scan
made before schema 5, without a UUID.  Checked against a throwaway server:

  * each pushed scan's seal, recomputed by the server from its rows, is the
    seal it was made with (intact), and fidx verify on the server agrees;
  * what the server answers of a pushed scan is what the file answers
    (find -l, export csv and jsonl; the ids each store gives aside);
  * pushed again: stored once (nothing sent, the server's row count
    unchanged), the scan made before schema 5 found by the UUID its seal
    gives it;
  * a push killed (SIGKILL) after the server committed part of it is taken
    up after the last row kept: every row once, the seal intact;
  * the server stopped at random moments (a clean restart or a SIGKILL of
    the postmaster, random delays; the seed is printed) in the middle of a
    push or of a scan --db: the cut-off command fails with one line, exit
    2 (or ends first), the push run again or the scan resumed completes,
    every row once, the seal intact (a cut at a random moment: either outcome
    is checked, so the script shares the CPUs with others, its server
    restarts on its own port);
  * --spool: with the server unreachable, a scan goes into the spool file
    with one warning line that names the push to run, exit 0; pushed, the
    server answers for it as the file does; without --spool: exit 2, one
    line;
  * a source row altered behind fidx's back: the server's seal differs,
    exit 1; a push into a SQLite file: exit 2, one line.
"""

import json
import os
import random
import re
import signal
import subprocess
import sys
import time

import lib
from lib import Checker, run_fidx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pg"))
import pgserver  # noqa: E402
import t_columns  # noqa: E402

ROLE = "pusher"
DB = "cases"
LINKS = 45000 if lib.is_asan() else 100000  # batches of 20,000 rows: three, or six


def server_rows(pg, uuid):
	"""The server's row count of the scan of uuid (0 when it has none)."""
	out = pg.psql("SELECT count(*) FROM fidx.file f JOIN fidx.scan s ON s.id = f.scan_id"
		      " WHERE s.uuid = '%s';" % uuid, user=ROLE, dbname=DB)
	return int(out)


def without_ids(text):
	"""Lines with the ids each store gives its rows taken out, sorted."""
	out = []
	for line in text.split(b"\n"):
		line = re.sub(rb'"(id|scan_id)":\d+', b'"\\1":_', line)
		out.append(re.sub(rb"^\d+,\d+,", b"_,_,", line))
	return sorted(out)


def uuids(db):
	"""{scan id: uuid} of a store, from fidx scans --json."""
	res = run_fidx("scans", "--json", "--db", db)
	return {r["id"]: r["uuid"] for r in map(json.loads, res.out.splitlines())}


def seal_hex(db, uuid):
	"""The seal of the scan of uuid in the SQLite database db, in hex."""
	con = lib.connect(db)
	try:
		return con.execute("SELECT hex(seal) FROM scan WHERE uuid = ?", (uuid,)).fetchone()[0].decode()
	finally:
		con.close()


def forget(pg, uuid):
	"""Removes the scan of uuid from the server, as if it had never been pushed."""
	pg.psql("".join("DELETE FROM fidx.%s WHERE scan_id IN (SELECT id FROM fidx.scan WHERE"
			" uuid = '%s');" % (table, uuid) for table in
			("seal_batch", "file", "path_index", "path_block", "path_trigram")) +
		"DELETE FROM fidx.scan WHERE uuid = '%s';" % uuid, user=ROLE, dbname=DB)


def stop_server(pg, how):
	"""Stops the server the way named (a clean restart, or a crash and a start)."""
	if how == "restart":
		pg.restart()
	else:
		pg.kill()
		pg.start()


def check_stops(chk, pg, db, links, target, uuid):
	"""Pushes and scans cut off by the server stopping at random moments."""
	seed = int(os.environ.get("FIDX_TEST_SEED", random.randrange(1 << 30)))
	print("# server stops: seed %d (FIDX_TEST_SEED)" % seed)
	rng = random.Random(seed)
	# A crash may lose a commit the server acknowledged when synchronous_commit is off (the
	# test servers' setting, for speed): fidx's promise is for what the server made durable.
	pg.psql("ALTER ROLE %s SET synchronous_commit = on;" % ROLE)
	for k, (what, how) in enumerate((("push", "restart"), ("push", "kill"),
					 ("scan", "kill"), ("scan", "restart"))):
		name = "%s, server %s after a random delay" % (what, "restarted" if how == "restart"
							      else "killed")
		newest = "SELECT coalesce(max(id), 0) FROM fidx.scan WHERE root = '%s'::bytea;" % (
			os.fsdecode(links))
		if what == "push":
			forget(pg, uuid)
			args = ["push", "--scan", "2", db, target]
		else:
			args = ["scan", "-q", "--hash", "none", "--db", target, links]
			before = int(pg.psql(newest, user=ROLE, dbname=DB))
		p = subprocess.Popen([lib.FIDX] + args, stdin=subprocess.DEVNULL,
				     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
		time.sleep(rng.uniform(0.05, 1.5))
		stop_server(pg, how)
		_, err = p.communicate(timeout=300)
		chk.ok("%s: cut off with one line, exit 2 (or ended first)" % name,
		       p.returncode == 0 or (p.returncode == 2 and err.count(b"\n") == 1),
		       "exit %d: %s" % (p.returncode, lib.short(err)))
		if what == "push":
			r = run_fidx(*args, timeout=300)
			chk.ok("%s: pushed again, intact" % name, r.rc == 0 and
			       b"intact on the server" in r.out, lib.short(r.out + r.err))
			chk.eq("%s: every row once" % name, server_rows(pg, uuid), LINKS + 5)
			continue
		if p.returncode != 0:
			# Stopped before the scan row was written: nothing to resume, scan again.
			begun = int(pg.psql(newest, user=ROLE, dbname=DB)) > before
			r = run_fidx(*(["scan", "-q", "--resume", "--db", target, links] if begun
				       else args), timeout=300)
			chk.ok("%s: %s to the end" % (name, "resumed" if begun else "scanned again"),
			       r.rc == 0, lib.short(r.out + r.err))
		out = pg.psql("SELECT s.id, s.entries, count(f.id), count(DISTINCT f.path),"
			      " encode(s.status, 'escape') FROM fidx.scan s JOIN fidx.file f"
			      " ON f.scan_id = s.id WHERE s.root = '%s'::bytea GROUP BY s.id"
			      " ORDER BY s.id DESC LIMIT 1;" % os.fsdecode(links),
			      user=ROLE, dbname=DB)
		sid, entries, rows, paths, status = out.split("|")
		chk.ok("%s: complete, every entry once" % name, status == "complete" and
		       int(entries) == int(rows) == int(paths) == LINKS + 5, out)
		r = run_fidx("verify", "--scan", sid, "--db", target)
		chk.ok("%s: the seal intact" % name, r.rc == 0 and b" intact " in r.out,
		       lib.short(r.out + r.err))


def check_spool(chk, top, small, target):
	"""A server that cannot be reached, with and without --spool."""
	spool = top + b"/spool.db"
	nowhere = "host=127.0.0.1 port=1 dbname=nowhere user=nobody connect_timeout=5"
	r = run_fidx("scan", "-q", "--db", nowhere, "--spool", spool, small)
	chk.ok("--spool, server unreachable: exit 0, one warning naming the spool and the push",
	       r.rc == 0 and len(r.err_lines()) == 1 and b"fidx push '%s'" % spool in r.err and
	       b"-> '%s'" % spool in r.out, lib.short(r.out + r.err))
	r = run_fidx("push", spool, target, timeout=120)
	chk.ok("--spool: the spool pushed, intact", r.rc == 0 and b"intact on the server" in r.out,
	       lib.short(r.out + r.err))
	mine = run_fidx("find", "-l", "--db", spool)
	theirs = run_fidx("find", "-l", "--db", target, small)
	chk.ok("--spool: the server answers for the spooled scan as the file does",
	       mine.rc == theirs.rc == 0 and mine.out == theirs.out and mine.out,
	       lib.short(theirs.out + theirs.err))
	r = run_fidx("scan", "-q", "--db", nowhere, small)
	chk.ok("without --spool, server unreachable: exit 2, one line",
	       r.rc == 2 and len(r.err_lines()) == 1 and b"nowhere" in r.err, lib.short(r.err))


def main():
	chk = Checker()
	with lib.TempDir() as td, pgserver.PgServer() as pg:
		top = os.fsencode(td.path)
		os.chmod(td.path, 0o755)
		pg.create_role(ROLE, "push-" + os.urandom(6).hex())
		pg.create_database(DB, ROLE)
		target = pg.conninfo(user=ROLE, dbname=DB)
		db = top + b"/offline.db"
		root, _ = t_columns.build(top)
		lib.settle(root)
		links = top + b"/links"
		os.mkdir(links)
		for k in range(4):  # a file has at most 65,000 names on ext4
			lib.write(links + b"/f%d" % k, b"file %d, many names\n" % k)
		for i in range(LINKS):
			os.link(links + b"/f%d" % (i % 4), links + b"/l%06d" % i)
		old = top + b"/old.db"
		small = top + b"/small"
		os.mkdir(small)
		for name in (b"a", b"b\nc", b"\xff"):
			lib.write(small + b"/" + name, name * 3)
		res = [run_fidx("scan", "-q", "--hash", "md5,sha1,sha256,sha512,xxh128", "-o", db,
				root, timeout=300),
		       run_fidx("scan", "-q", "--hash", "none", "-o", db, links, timeout=300),
		       run_fidx("scan", "-q", "-o", old, small)]
		chk.ok("setup: three scans made offline", all(r.rc == 0 for r in res),
		       lib.short([r.err for r in res]))
		lib.downgrade(old, 4)
		ids = uuids(db)

		with chk.guard("first push"):
			r = run_fidx("push", db, target, timeout=300)
			lines = r.out.decode("utf-8", "replace").splitlines()
			chk.ok("push: exit 0, a line per scan, each seal intact on the server",
			       r.rc == 0 and len(lines) == 2 and
			       all("intact on the server" in l for l in lines), lib.short(r.out + r.err))
			mine = run_fidx("verify", "--all", "--db", db)
			theirs = run_fidx("verify", "--all", "--db", target)
			seals = [re.findall(rb"sha256:[0-9a-f]{64}", x.out) for x in (mine, theirs)]
			chk.ok("push: fidx verify on the server gives the file's seals, intact",
			       theirs.rc == 0 and seals[0] == seals[1] and len(seals[0]) == 2,
			       lib.short(theirs.out + theirs.err))
			chk.eq("push: the server keeps each scan's UUID", sorted(uuids(target).values()),
			       sorted(ids.values()))
			for cmd in (["find", "-l", "--scan", "1"], ["export", "-f", "csv", "--scan", "1"],
				    ["export", "-f", "jsonl", "--scan", "1"]):
				a = run_fidx(*cmd, "--db", db)
				b = run_fidx(*cmd, "--db", target)
				chk.ok("push: %s answers as the file" % " ".join(cmd),
				       a.rc == b.rc == 0 and without_ids(a.out) == without_ids(b.out),
				       lib.short(b.err))
		with chk.guard("pushed again"):
			before = server_rows(pg, ids[2])
			r = run_fidx("push", db, target)
			chk.ok("again: exit 0, every scan already there, its seal the one recorded",
			       r.rc == 0 and r.out.count(b": already in ") == 2 and
			       r.out.count(b"recorded there (its rows not read again") == 2,
			       lib.short(r.out + r.err))
			chk.eq("again: nothing stored twice", server_rows(pg, ids[2]), before)
			# The server's record of a seal altered: the push says so (exit 1); rows
			# altered there are left to fidx verify, which reads them.
			pg.psql("UPDATE fidx.scan SET seal = pg_catalog.sha256(seal) WHERE uuid = '%s';"
				% ids[2], user=ROLE, dbname=DB)
			r = run_fidx("push", db, target)
			chk.ok("again, a recorded seal altered: MISMATCH, exit 1",
			       r.rc == 1 and r.out.count(b"is not the seal recorded there: MISMATCH") == 1
			       and r.out.count(b"recorded there (its rows") == 1, lib.short(r.out + r.err))
			pg.psql("UPDATE fidx.scan SET seal = decode('%s', 'hex') WHERE uuid = '%s';"
				% (seal_hex(db, ids[2]), ids[2]), user=ROLE, dbname=DB)
			pg.psql("UPDATE fidx.file SET size = size + 1 WHERE id = (SELECT min(f.id) FROM"
				" fidx.file f JOIN fidx.scan s ON s.id = f.scan_id WHERE s.uuid = '%s'"
				" AND f.type = 'f'::bytea);" % ids[2], user=ROLE, dbname=DB)
			r = run_fidx("push", db, target)
			v = run_fidx("verify", "--db", target)
			chk.ok("again, a row altered there: push compares the record (exit 0), fidx"
			       " verify reads the rows (exit 1, MISMATCH)",
			       r.rc == 0 and v.rc == 1 and b"MISMATCH" in v.out, lib.short(r.out + v.out))
			pg.psql("UPDATE fidx.file SET size = size - 1 WHERE id = (SELECT min(f.id) FROM"
				" fidx.file f JOIN fidx.scan s ON s.id = f.scan_id WHERE s.uuid = '%s'"
				" AND f.type = 'f'::bytea);" % ids[2], user=ROLE, dbname=DB)
			v = run_fidx("verify", "--db", target)
			chk.ok("again: put back, every seal verifies", v.rc == 0, lib.short(v.out + v.err))
			r1 = run_fidx("push", old, target)
			r2 = run_fidx("push", old, target)
			chk.ok("a scan made before schema 5: pushed, then found by its seal's UUID",
			       r1.rc == 0 and b"intact on the server" in r1.out and
			       r2.rc == 0 and b": already in " in r2.out, lib.short(r1.out + r2.out))
		with chk.guard("a push cut off"):
			forget(pg, ids[2])
			p = subprocess.Popen([lib.FIDX, "push", "--scan", "2", db, target],
					     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
					     stderr=subprocess.PIPE, start_new_session=True)
			deadline, kept = time.monotonic() + 60, 0
			while time.monotonic() < deadline and p.poll() is None and not kept:
				kept = server_rows(pg, ids[2])
			p.send_signal(signal.SIGKILL)
			p.communicate()
			chk.ok("cut off: killed after the server kept part of the rows",
			       0 < kept < LINKS + 5, "%d rows kept" % kept)
			r = run_fidx("push", "--scan", "2", db, target, timeout=300)
			chk.ok("cut off: pushed again, taken up after the last row kept, intact",
			       r.rc == 0 and b"taken up after row" in r.out and
			       b"intact on the server" in r.out, lib.short(r.out + r.err))
			chk.eq("cut off: every row once", server_rows(pg, ids[2]), LINKS + 5)
			dup = pg.psql("SELECT count(*) - count(DISTINCT f.origin_id) FROM fidx.file f JOIN"
				      " fidx.scan s ON s.id = f.scan_id WHERE s.uuid = '%s';" % ids[2],
				      user=ROLE, dbname=DB)
			chk.eq("cut off: no row of the origin twice", dup, "0")
		with chk.guard("server stopped at random moments"):
			check_stops(chk, pg, db, links, target, ids[2])
		with chk.guard("spool"):
			check_spool(chk, top, small, target)
		with chk.guard("refusals"):
			con = lib.connect(db)
			con.execute("UPDATE file SET size = size + 1 WHERE scan_id = 1 AND type = 'f'"
				    " AND id = (SELECT min(id) FROM file WHERE scan_id = 1 AND type = 'f')")
			con.execute("UPDATE scan SET uuid = 'fb7a1c52-0000-4000-8000-000000000001'"
				    " WHERE id = 1")
			con.commit()
			con.close()
			r = run_fidx("push", "--scan", "1", db, target, timeout=300)
			chk.ok("a row altered in the file: the server's seal differs, exit 1",
			       r.rc == 1 and b"MISMATCH" in r.out, lib.short(r.out + r.err))
			r = run_fidx("push", db, top + b"/other.db")
			chk.ok("a push into a SQLite file: exit 2, one line",
			       r.rc == 2 and len(r.err_lines()) == 1 and b"server" in r.err,
			       lib.short(r.err))
	chk.done()


if __name__ == "__main__":
	main()
