"""t_fleetdelta.py - daily rescans pushed to a PostgreSQL store as their changes.

Two hosts (fidx in UTS namespaces of their own, as t_fleet.py does; one
named with a newline, a quote and a byte that is not UTF-8), each with a
tree that holds hostile names (a newline, bytes that are not UTF-8),
scan it four days running, about 1% of the files changed each day (one
added, one removed, the rest rewritten).  Each host's scans are pushed into
one database as changes (the default) and into another whole (--full).
Checked:

  * the push line of each rescan names the scan it is the changes of, and
    every seal is intact on the server, fidx verify agreeing;
  * a 1% rescan adds at most 2% of the rows and of the bytes a full push of
    the same scan adds (every fidx table, psql's count and pg_column_size:
    deterministic figures, no timing);
  * every query answers the same from both stores, column by column (the
    ids each server gives its rows aside): scans, find -l and a substring
    find (the path index of whole scans; of changed ones, that of the whole
    scan their chain ends in and the rows above it), export
    jsonl and csv, du, stats, dupes, match, diff between two days of a host
    (composed along the chain), and the default selection of the fleet;
  * fidx prune: --dry-run drops nothing; --keep 2 --host alpha drops that
    host's oldest scans, rebuilds whole the scan kept that was their
    changes, and every kept scan verifies and answers as before; a rescan
    pushed after it goes as changes; a SQLite file is refused;
  * a row lent along a chain altered with psql: the verify of the scan that
    stores it names it, a later scan's seal differs; made damaged, it stops
    a whole read of the scan but not a diff of two scans of the chain, which
    composes the changes stored and never reads a row they share;
  * find on a chain of changes at every depth up to PG_DELTA_DEPTH (a third
    tree, ten days: files added, removed, renamed, rewritten, a path gone at
    depth 2 and back at depth 3) answers byte for byte as the same scan
    pushed whole, for hostile names (a newline, not UTF-8, %, _, \, glob
    characters), -i, a glob, a regex, -l, and patterns without a trigram;
    and a pattern with trigrams reads the path index of the chain's whole
    scan (PostgreSQL's statistics of fidx.path_block).
"""

import csv
import io
import json
import os
import subprocess
import sys
import threading
import time

import lib
from lib import Checker, run_fidx, write

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pg"))
import pgserver  # noqa: E402

ROLE = "delta_ingest"
HOSTS = [b"alpha", b"be\nta'$(id)\xff"]  # the second: a newline, a quote, not UTF-8
FILES = 20 * 50      # files of a tree: 1% is 10 of them
DAYS = 4


def build(root, n):
	"""A tree of FILES files in 20 folders, hostile names among them."""
	for d in range(20):
		os.makedirs(root + b"/d%02d" % d)
		for f in range(50):
			write(root + b"/d%02d/f%03d.txt" % (d, f), b"host %d folder %d file %d\n" % (n, d, f))
	write(root + b"/d00/new\nline", b"a newline in my name\n")
	write(root + b"/d01/bad\xff\xfeutf8", b"not UTF-8\n")
	write(root + b"/d02/same-everywhere", b"the same on every host\n")


def change(root, day):
	"""About 1% of the files: 8 rewritten, one removed, one added."""
	for i in range(8):
		d, f = (day * 7 + i * 3) % 20, (day * 13 + i * 11) % 50
		write(root + b"/d%02d/f%03d.txt" % (d, f), b"changed on day %d (%d)\n" % (day, i))
	os.unlink(root + b"/d%02d/f%03d.txt" % ((day * 5) % 20, 49 - day))
	write(root + b"/d%02d/added-%d" % ((day * 3) % 20, day), b"added on day %d\n" % day)


# What a push adds to each table, by scan (the server's id): rows and bytes.
TABLES = [("scan", "id"), ("file", "scan_id"), ("seal_batch", "scan_id"),
	  ("path_index", "scan_id"), ("path_block", "scan_id"), ("path_trigram", "scan_id"),
	  ("scan_delta", "scan_id")]


def costs(pg, db):
	"""{scan: (rows, bytes)}: what the server keeps for each scan (pg_column_size of each row)."""
	parts = " UNION ALL ".join("SELECT t.%s AS s, pg_column_size(t.*) AS b FROM fidx.%s t"
				   % (key, table) for table, key in TABLES)
	out = pg.psql("SELECT s, count(*), sum(b) FROM (%s) x GROUP BY s;" % parts, user=ROLE,
		      dbname=db)
	return {int(s): (int(n), int(b)) for s, n, b in (line.split("|") for line in out.split())}


def no_ids(out, fmt):
	"""The rows of an export in format fmt, each a dict without the server's row id."""
	if fmt == "jsonl":
		rows = [json.loads(line) for line in out.splitlines()]
	else:
		rows = list(csv.DictReader(io.StringIO(out.decode("utf-8", "surrogateescape"))))
	for r in rows:
		r.pop("id", None)
	return rows


def compare(chk, label, delta, full, *args, fmt=None, empty=False, any_order=False):
	"""Runs fidx args against both stores: the same exit and output (rows without ids; with
	any_order, lines in any order: the store's own order), not empty unless empty."""
	a = run_fidx(*args[:1], "--db", delta, *args[1:])
	b = run_fidx(*args[:1], "--db", full, *args[1:])
	if any_order:
		same = a.rc == b.rc and a.err == b.err and \
		       sorted(a.out.splitlines()) == sorted(b.out.splitlines())
	elif fmt:
		same = a.rc == b.rc == 0 and no_ids(a.out, fmt) == no_ids(b.out, fmt)
	else:
		same = a.rc == b.rc and a.out == b.out and a.err == b.err
	chk.ok("%s: the same from both stores" % label, same and (a.out or empty),
	       lib.short(a.out[:300] + a.err) + " / " + lib.short(b.out[:300] + b.err))


def check_prune(chk, pg, delta, full, db, root, ids):
	"""fidx prune on the store of changes: the kept scans whole and sealed, a rescan after."""
	first = ids[:DAYS]  # the first host's scans, oldest first
	res = run_fidx("prune", "--keep-days", "1", "--db", delta)
	chk.ok("prune --keep-days 1: every scan is younger, nothing dropped",
	       res.rc == 0 and res.out.startswith(b"dropped 0 scans"), lib.short(res.out + res.err))
	res = run_fidx("prune", "--dry-run", "--keep-days", "200000", "--db", delta)
	chk.ok("prune --dry-run --keep-days 200000 (days * a day past int64 ns): nothing dropped",
	       res.rc == 0 and res.out.startswith(b"would drop 0 scans"), lib.short(res.out + res.err))
	res = run_fidx("prune", "--dry-run", "--keep", "2", "--host", "alpha", "--db", delta)
	chk.ok("prune --dry-run: says what would go, drops nothing",
	       res.rc == 0 and res.out.count(b"would drop scan") == DAYS - 2 and
	       pg.psql("SELECT count(*) FROM fidx.scan;", user=ROLE, dbname="delta") == str(len(ids)),
	       lib.short(res.out + res.err))
	res = run_fidx("prune", "--keep", "2", "--host", "alpha", "--db", delta)
	chk.ok("prune --keep 2 --host alpha: the two oldest dropped, the next rebuilt whole",
	       res.rc == 0 and res.out.count(b"dropped scan") == DAYS - 2 and
	       b"1 rebuilt whole" in res.out, lib.short(res.out + res.err))
	kept = [int(i) for i in pg.psql("SELECT id FROM fidx.scan ORDER BY id;", user=ROLE,
					 dbname="delta").split()]
	chk.eq("prune: the scans left", kept, first[DAYS - 2:] + ids[DAYS:])
	res = run_fidx("verify", "--db", delta, "--scan", ",".join(map(str, kept)))
	chk.ok("prune: every kept scan's seal verifies", res.rc == 0 and
	       res.out.count(b"intact") == len(kept), lib.short(res.out + res.err))
	for scan in kept[:2]:
		compare(chk, "prune: scan %d answers as before" % scan, delta, full, "export", "-f",
			"jsonl", "--scan", str(scan), fmt="jsonl")
	compare(chk, "prune: a substring find of the scan rebuilt whole (its path index)", delta,
		full, "find", "-l", "--scan", str(kept[0]), "f02")
	change(root, DAYS)
	lib.settle(root)
	p = lib.as_host(b"alpha", "scan", "-q", "--hash", "md5,sha256", "-o", db, root)
	res = run_fidx("push", "-q", db, delta)
	chk.ok("a rescan after the prune goes as changes, intact", p.returncode == 0 and
	       res.rc == 0 and b"(changes from scan %d:" % DAYS in res.out and
	       b"intact on the server" in res.out.splitlines()[-1], lib.short(res.out + res.err))
	res = run_fidx("prune", "--keep", "1", "--db", db)
	chk.ok("prune of a SQLite file: refused, exit 2, one line",
	       res.rc == 2 and res.err.count(b"\n") == 1 and b"keeps every scan" in res.err,
	       lib.short(res.out + res.err))


def rescan(chk, top, name, day):
	"""Scans tree top/name as host alpha into top/name.db: built on day 0, then changed."""
	root, db = top + b"/" + name, top + b"/" + name + b".db"
	if day:
		change(root, day)
	else:
		build(root, 9)
	lib.settle(root)
	p = lib.as_host(b"alpha", "scan", "-q", "--hash", "md5", "-o", db, root)
	chk.ok("%s day %d: scanned" % (name.decode(), day), p.returncode == 0, lib.short(p.stderr))
	return db


def check_shard_ids(chk, pg, top):
	"""A scan rebuilt whole by prune on a server whose ids do not ascend (a shard's hosts
	push to it straight, its sequence ahead): exactly its old rows dropped, sealed."""
	pg.create_database("shard", ROLE)
	url = pg.conninfo(user=ROLE, dbname="shard")
	res = run_fidx("push", "-q", rescan(chk, top, b"shard", 0), url)
	chk.ok("shard: the first scan pushed", res.rc == 0, lib.short(res.out + res.err))
	pg.psql("ALTER SEQUENCE fidx.file_id RESTART WITH 1000000000000;", user=ROLE,
		dbname="shard")
	res = run_fidx("push", "-q", rescan(chk, top, b"shard", 1), url)
	chk.ok("shard: the rescan pushed as changes, its ids at 10^12",
	       res.rc == 0 and b"(changes from scan 1:" in res.out, lib.short(res.out + res.err))
	pg.psql("ALTER SEQUENCE fidx.file_id RESTART WITH 1;", user=ROLE, dbname="shard")
	res = run_fidx("prune", "--keep", "1", "--db", url)
	chk.ok("shard: prune --keep 1 rebuilds the rescan whole",
	       res.rc == 0 and b"1 rebuilt whole" in res.out, lib.short(res.out + res.err))
	rows = pg.psql("SELECT count(*), count(DISTINCT origin_id) FROM fidx.file;", user=ROLE,
		       dbname="shard")
	want = pg.psql("SELECT entries FROM fidx.scan;", user=ROLE, dbname="shard")
	chk.eq("shard: the scan kept has its rows once each", rows, "%s|%s" % (want, want))
	res = run_fidx("verify", "--db", url)
	chk.ok("shard: its seal verifies", res.rc == 0 and b"intact" in res.out,
	       lib.short(res.out + res.err))


def until(pg, db, sql, what):
	"""Polls until psql prints "t" for sql in database db (60 s at most: then fails)."""
	deadline = time.monotonic() + 60
	while pg.psql(sql, user=ROLE, dbname=db) != "t":
		if time.monotonic() > deadline:
			raise AssertionError("waited 60 s for " + what)
		time.sleep(0.05)


def check_push_lock(chk, pg, top):
	"""A push building on a scan prune drops, its changes put there while prune runs (the
	push's first transaction played in psql, held open): prune waits for the base it locks,
	then finds the changes and refuses (they are not all there); the base stays."""
	pg.create_database("race", ROLE)
	url = pg.conninfo(user=ROLE, dbname="race")
	for day in (0, 1):
		res = run_fidx("push", "-q", rescan(chk, top, b"race", day), url)
		chk.ok("race: day %d pushed" % day, res.rc == 0, lib.short(res.out + res.err))
	env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
	env["PGAPPNAME"] = "holder"
	held = subprocess.Popen([os.path.join(pg.bin, "psql"), "-X", "-v", "ON_ERROR_STOP=1",
				 "-qAt", "-o", "/dev/null", "-d", url], stdin=subprocess.PIPE,
				stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
				text=True)
	held.stdin.write("BEGIN;\n"
			 "SELECT id FROM fidx.scan WHERE id = 1 FOR KEY SHARE;\n"
			 "WITH s AS (INSERT INTO fidx.scan (host_id, uuid, root, host, status,"
			 " started_ns) SELECT host_id, md5(random()::text)::uuid, root, host,"
			 " 'running'::bytea, 1000000000000000000"
			 " FROM fidx.scan WHERE id = 2 RETURNING id, host_id)"
			 " INSERT INTO fidx.scan_delta (scan_id, base_id, depth, runs, host_id)"
			 " SELECT s.id, 1, 1, d.runs, s.host_id FROM s, fidx.scan_delta d"
			 " WHERE d.scan_id = 2;\n"
			 "SET application_name = 'held';\n")
	held.stdin.flush()
	until(pg, "race", "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name ="
	      " 'held' AND state = 'idle in transaction';", "the push played in psql")
	out = []
	prune = threading.Thread(target=lambda: out.append(run_fidx("prune", "--keep", "1",
								    "--db", url)))
	prune.start()
	until(pg, "race", "SELECT count(*) = 1 FROM pg_stat_activity WHERE datname = 'race'"
	      " AND wait_event_type = 'Lock';", "prune to wait for a lock")
	held.stdin.write("COMMIT;\n")
	held.stdin.close()
	chk.ok("race: the push played in psql committed", held.wait() == 0, held.stderr.read())
	prune.join()
	res = out[0]
	chk.ok("race: prune waits, then refuses, naming the scan being pushed and what to do",
	       res.rc == 2 and res.err.count(b"\n") == 1 and b"scan 3 of host 'alpha', started"
	       b" 2001-09-09 01:46:40 UTC, is its changes and not complete" in res.err and
	       b"push that host's database again" in res.err, lib.short(res.out + res.err))
	scans = pg.psql("SELECT id FROM fidx.scan ORDER BY id;", user=ROLE, dbname="race")
	chk.eq("race: every scan still there", scans.split(), ["1", "2", "3"])


def check_base_missing(chk, pg, delta, scans, other):
	"""A scan's base deleted behind fidx's back, another's changed to scan other, of another
	host: reading either fails, naming both scans."""
	pg.psql("DELETE FROM fidx.scan WHERE id = %d;" % scans[-2], user=ROLE, dbname="delta")
	res = run_fidx("export", "-f", "jsonl", "--db", delta, "--scan", str(scans[-1]))
	chk.ok("base missing: a read of the scan fails, exit 2, naming its base",
	       res.rc == 2 and res.err.count(b"\n") == 1 and b"base scan %d of scan %d is missing"
	       % (scans[-2], scans[-1]) in res.err, lib.short(res.out + res.err))
	pg.psql("UPDATE fidx.scan_delta SET base_id = %d WHERE scan_id = %d;" % (other, scans[1]),
		user=ROLE, dbname="delta")
	res = run_fidx("export", "-f", "jsonl", "--db", delta, "--scan", str(scans[1]))
	chk.ok("base of another host: a read of the scan fails, exit 2, naming its base",
	       res.rc == 2 and res.err.count(b"\n") == 1 and b"base scan %d of scan %d is of"
	       b" another host or root" % (other, scans[1]) in res.err,
	       lib.short(res.out + res.err))


def touched():
	"""The (folder, file) of every file change() rewrote or removed, any day."""
	t = set()
	for day in range(1, DAYS + 1):
		t |= {((day * 7 + i * 3) % 20, (day * 13 + i * 11) % 50) for i in range(8)}
		t.add(((day * 5) % 20, 49 - day))
	return t


def check_tamper(chk, pg, delta, scans):
	"""A row of a host's first scan, lent to every later one, altered with psql: the first
	scan's verify names it; each later one's seal differs (exit 1), and names it too."""
	d, f = next((d, f) for d in range(20) for f in range(50) if (d, f) not in touched())
	n = pg.psql("UPDATE fidx.file SET size = size + 1 WHERE scan_id = %d AND path LIKE"
		    " '%%/d%02d/f%03d.txt'::bytea RETURNING id;" % (scans[0], d, f), user=ROLE,
		    dbname="delta")
	chk.ok("tamper: one row of the first scan altered", len(n.split()) == 1, n)
	res = run_fidx("verify", "--db", delta, "--scan", str(scans[0]))
	chk.ok("tamper: the first scan's verify names the row altered", res.rc == 1 and
	       b"d%02d/f%03d.txt" % (d, f) in res.out, lib.short(res.out + res.err))
	res = run_fidx("verify", "--db", delta, "--scan", str(scans[-1]))
	chk.ok("tamper: a later scan that holds it: MISMATCH, exit 1, the row named altered",
	       res.rc == 1 and b"MISMATCH" in res.out and b"1 altered, 0 added, 0 removed" in
	       res.out and res.out.count(b"/h1/") == 1 and b"d%02d/f%03d.txt" % (d, f) in res.out,
	       lib.short(res.out + res.err))
	# The row lent to every later scan made damaged (no type letter): reading the scan
	# whole stops there, but a diff of two scans of the chain composes the changes stored
	# and never reads a row they share.
	pg.psql("UPDATE fidx.file SET type = 'Z'::bytea WHERE id = %s;" % n.split()[0], user=ROLE,
		dbname="delta")
	res = run_fidx("export", "-f", "jsonl", "--db", delta, "--scan", str(scans[0]))
	chk.ok("composed diff: the damaged row stops a whole read (exit 2)",
	       res.rc == 2 and b"damaged" in res.err, lib.short(res.err))
	res = run_fidx("diff", "--db", delta, str(scans[0]), str(scans[-1]))
	chk.ok("composed diff: a diff of the first and last scans reads only their changes",
	       res.rc < 14 and b"damaged" not in res.err and b"added-" in res.out,
	       "exit %d: %s" % (res.rc, lib.short(res.err + res.out[-300:])))

# The names of the tree of check_find(): hostile bytes and pattern characters.
ODD = [b"new\nline name", b"bad\xff\xfeutf8 name", b"100%_done", b"under_score",
       b"back\\slash", b"glob*star?[x]", b"CamelCase.TXT"]
FIND_DAYS = 10  # a whole scan, eight days of changes (PG_DELTA_DEPTH), a whole one again


def find_change(root, day):
	"""Day day's changes: three files rewritten, one removed, one added, one renamed; the
	file comeback removed on day 2 and back on day 3, a hostile name rewritten on days 4 to
	7 (so that rows above the whole scan hold a newline, bytes above 127, a backslash and
	capitals: the server's literal test sees them)."""
	for i in range(3):
		write(root + b"/g%d/file%03d.dat" % ((day * 3 + i) % 10, (day * 7 + i) % 40),
		      b"rewritten on day %d\n" % day)
	os.unlink(root + b"/g%d/file%03d.dat" % ((day + 5) % 10, 39 - day))
	write(root + b"/g%d/added-%d %%_\\[*]" % (day % 10, day), b"added on day %d\n" % day)
	os.rename(root + b"/g%d/file%03d.dat" % ((day + 2) % 10, 20 + day),
		  root + b"/g%d/renamed-%d.dat" % ((day + 2) % 10, day))
	if day == 2:
		os.unlink(root + b"/g3/comeback-file")
	if day == 3:
		write(root + b"/g3/comeback-file", b"back again\n")
	if 4 <= day <= 7:
		write(root + b"/g1/" + ODD[(0, 1, 4, 6)[day - 4]], b"rewritten\n")


def path_block_reads(pg, db):
	"""How many times PostgreSQL's statistics say fidx.path_block was read."""
	return int(pg.psql("SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM"
			   " pg_stat_user_tables WHERE schemaname = 'fidx' AND relname ="
			   " 'path_block';", user=ROLE, dbname=db))


def check_find(chk, pg, top):
	"""find on every depth of a chain of changes: the answers of the scan pushed whole."""
	root, db = top + b"/find", top + b"/find.db"
	for d in range(10):
		os.makedirs(root + b"/g%d" % d)
		for f in range(40):
			write(root + b"/g%d/file%03d.dat" % (d, f), b"folder %d file %d\n" % (d, f))
		for name in ODD:
			write(root + b"/g%d/" % d + name, b"%d\n" % d)
	write(root + b"/g3/comeback-file", b"here first\n")
	for day in range(FIND_DAYS):
		if day:
			find_change(root, day)
		lib.settle(root)
		res = run_fidx("scan", "-q", "--hash", "md5", "-o", db, root)
		chk.ok("find day %d: scanned" % day, res.rc == 0, lib.short(res.err))
	for name in ("fdelta", "fwhole"):
		pg.create_database(name, ROLE)
	delta = pg.conninfo(user=ROLE, dbname="fdelta")
	full = pg.conninfo(user=ROLE, dbname="fwhole")
	res = run_fidx("push", "-q", db, delta, timeout=300)
	lines = res.out.splitlines()
	chk.ok("find: pushed as changes, exit 0", res.rc == 0, lib.short(res.out + res.err))
	chk.eq("find: days 1 to 8 pushed as changes, day 9 whole (the chain's bound)",
	       [b"(changes from scan" in line for line in lines],
	       [False] + [True] * (FIND_DAYS - 2) + [False])
	res = run_fidx("push", "-q", "--full", db, full, timeout=300)
	chk.ok("find: pushed whole", res.rc == 0 and b"changes from" not in res.out,
	       lib.short(res.out + res.err))
	patterns = [["file01"], ["comeback"], ["-i", "COMEBACK"], ["new\nline"], [b"d\xff\xfe"],
		    [b"\xff\xfe"], ["%_d"], ["r_sc"], ["k\\sl"], ["-g", "glob\\*star*"],
		    ["-i", "camelcase.txt"], ["-r", "file0[0-9]2"], ["renamed"], ["added-"],
		    ["-l", "renamed-"], ["ad"], ["-i", "E"], [" %_\\[*]"]]
	for day in range(1, FIND_DAYS):
		for pat in patterns:
			label = "find day %d (depth %d): %r" % (day, day if day < FIND_DAYS - 1 else 0,
								pat)
			compare(chk, label, delta, full, "find", "--scan", str(day + 1), *pat,
				empty=day == 2 and "comeback" in str(pat).lower())
	# A pattern with trigrams on the deepest scan of the chain: the whole scan's index read.
	before = path_block_reads(pg, "fdelta")
	res = run_fidx("find", "--db", delta, "--scan", str(FIND_DAYS - 1), "comeback")
	after = before
	for _ in range(50):
		after = path_block_reads(pg, "fdelta")
		if after > before:
			break
		time.sleep(0.2)
	chk.ok("find at depth %d: the path index of the chain's whole scan is read" % (FIND_DAYS - 2),
	       res.rc == 0 and res.out and after > before,
	       "reads of path_block %d -> %d: %s" % (before, after, lib.short(res.out + res.err)))


def main():
	chk = Checker()
	with lib.TempDir() as td, pgserver.PgServer() as pg:
		top = os.fsencode(td.path)
		os.chmod(td.path, 0o755)
		pg.create_role(ROLE, "pw")
		for db in ("delta", "whole"):
			pg.create_database(db, ROLE)
		delta = pg.conninfo(user=ROLE, dbname="delta")
		full = pg.conninfo(user=ROLE, dbname="whole")
		roots, dbs = [], []
		for n, host in enumerate(HOSTS):
			root = top + b"/h%d" % n
			db = top + b"/h%d.db" % n
			build(root, n)
			roots.append(root)
			dbs.append(db)
		with chk.guard("daily scans"):
			for day in range(DAYS):
				for n, host in enumerate(HOSTS):
					if day:
						change(roots[n], day)
					lib.settle(roots[n])
					p = lib.as_host(host, "scan", "-q", "--hash", "md5,sha256", "-o",
						    dbs[n], roots[n])
					chk.ok("%s day %d: scanned" % (repr(host)[2:-1], day),
					       p.returncode == 0, lib.short(p.stderr))
		with chk.guard("pushes"):
			for n, host in enumerate(HOSTS):
				p = run_fidx("push", "-q", dbs[n], delta, timeout=300)
				lines = p.out.splitlines()
				chk.ok("%s: pushed as changes, exit 0" % repr(host)[2:-1],
				       p.rc == 0 and len(lines) == DAYS, lib.short(p.out + p.err))
				chk.eq("%s: every rescan sent as the changes of the scan before" % repr(host)[2:-1],
				       [b"(changes from scan %d:" % day in line
					for day, line in enumerate(lines, 0)],
				       [False] + [True] * (DAYS - 1))
				chk.ok("%s: every seal intact" % repr(host)[2:-1],
				       all(b"intact on the server" in line for line in lines), lib.short(p.out))
				p = run_fidx("push", "-q", "--full", dbs[n], full, timeout=300)
				chk.ok("%s: pushed whole, exit 0" % repr(host)[2:-1],
				       p.rc == 0 and b"changes from" not in p.out, lib.short(p.out + p.err))
		ids = [int(i) for i in pg.psql("SELECT id FROM fidx.scan ORDER BY id;", user=ROLE,
						dbname="delta").split()]
		with chk.guard("rows and bytes"):
			kept = pg.psql("SELECT scan_id FROM fidx.scan_delta ORDER BY scan_id;", user=ROLE,
				       dbname="delta").split()
			chk.eq("each rescan is kept as changes", len(kept), len(HOSTS) * (DAYS - 1))
			d_cost, f_cost = costs(pg, "delta"), costs(pg, "whole")
			for scan in map(int, kept):
				(d_rows, d_bytes), (f_rows, f_bytes) = d_cost[scan], f_cost[scan]
				chk.ok("scan %d: rows %d of %d (<= 2%%)" % (scan, d_rows, f_rows),
				       d_rows * 50 <= f_rows, "%d / %d" % (d_rows, f_rows))
				chk.ok("scan %d: bytes %d of %d (<= 2%%)" % (scan, d_bytes, f_bytes),
				       d_bytes * 50 <= f_bytes, "%d / %d" % (d_bytes, f_bytes))
		with chk.guard("verify"):
			res = run_fidx("verify", "--db", delta, "--scan", ",".join(map(str, ids)))
			chk.ok("verify: every seal intact on the store of changes",
			       res.rc == 0 and res.out.count(b"intact") == len(ids), lib.short(res.out))
		with chk.guard("queries"):
			compare(chk, "scans", delta, full, "scans", "--json")
			compare(chk, "the fleet's default selection: find -l", delta, full, "find", "-l")
			compare(chk, "find a substring", delta, full, "find", "f01")
			compare(chk, "find a hostile name", delta, full, "find", "new\nline")
			compare(chk, "export jsonl", delta, full, "export", "-f", "jsonl", fmt="jsonl")
			compare(chk, "du", delta, full, "du")
			compare(chk, "stats", delta, full, "stats")
			compare(chk, "dupes", delta, full, "dupes")
			for scan in ids:
				s = str(scan)
				compare(chk, "scan %d: export jsonl" % scan, delta, full, "export", "-f",
					"jsonl", "--scan", s, fmt="jsonl")
				if scan > DAYS:
					continue  # the first host's scans: the other queries too
				compare(chk, "scan %d: find f02 -l" % scan, delta, full, "find", "-l", "--scan", s,
					"f02")
				compare(chk, "scan %d: export csv" % scan, delta, full, "export", "-f", "csv",
					"--scan", s, fmt="csv")
				compare(chk, "scan %d: du" % scan, delta, full, "du", "--scan", s)
				compare(chk, "scan %d: stats" % scan, delta, full, "stats", "--scan", s)
			lst = top + b"/bad.md5"
			digest = pg.psql("SELECT encode(md5, 'hex') FROM fidx.file WHERE name ="
					 " 'same-everywhere'::bytea LIMIT 1;", user=ROLE, dbname="whole")
			write(lst, digest.encode() + b"  known\n")
			compare(chk, "match", delta, full, "match", lst)
			# A hunt over every scan of every chain (depth 0 to DAYS - 1): digests of rows
			# lent down the chains, of rows rewritten on some day, and of nothing.
			some = pg.psql("SELECT DISTINCT encode(md5, 'hex') FROM fidx.file WHERE md5 IS"
				       " NOT NULL ORDER BY 1 LIMIT 60;", user=ROLE, dbname="whole").split()
			lst = top + b"/hunt.md5"
			write(lst, b"".join(b"%s  f%d\n" % (d.encode(), i) for i, d in enumerate(some)) +
			      b"0" * 32 + b"  nothing\n")
			every = ",".join(map(str, ids))
			compare(chk, "match, every scan", delta, full, "match", "--scan", every, lst,
				any_order=True)
			compare(chk, "match -l, every scan", delta, full, "match", "-l", "--scan", every,
				lst, any_order=True)
			compare(chk, "match --json, the last scans", delta, full, "match", "--json", lst,
				any_order=True)
			per = DAYS
			for h in range(len(HOSTS)):
				first, last = ids[h * per], ids[h * per + per - 1]
				for a, b in ((first, last), (last - 1, last), (last, first)):
					compare(chk, "diff %d %d --json" % (a, b), delta, full, "diff", "--json",
						str(a), str(b))
				compare(chk, "diff %d %d" % (first, last), delta, full, "diff", str(first),
					str(last))
		with chk.guard("prune"):
			check_prune(chk, pg, delta, full, dbs[0], roots[0], ids)
		with chk.guard("prune where ids do not ascend"):
			check_shard_ids(chk, pg, top)
		with chk.guard("a lent row altered"):
			check_tamper(chk, pg, delta, ids[DAYS:])
		with chk.guard("a base missing"):
			check_base_missing(chk, pg, delta, ids[DAYS:], ids[DAYS - 1])
		with chk.guard("push and prune at once"):
			check_push_lock(chk, pg, top)
		with chk.guard("find on every depth of a chain"):
			check_find(chk, pg, top)
	chk.done()


if __name__ == "__main__":
	main()
