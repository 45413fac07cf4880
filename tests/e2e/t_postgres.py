"""t_postgres.py - fidx with a PostgreSQL store, end to end.

A throwaway server (tests/pg/pgserver.py: its own cluster, SCRAM, TLS on
loopback) holds a database owned by a login role whose name and password
hold a quote, a backslash and a space.  Checked:

  * a scan of t_columns' hostile tree (names of every byte, a path longer
    than PATH_MAX, a FIFO, links, hard links, sparse and empty files, old
    and far times), every digest, into the server through the unix socket:
    its rows, read back with psql (the ground truth's reader, not fidx),
    equal the tree as the OS shows it, column by column, and the scan row
    counts them;
  * every query command answers from the server as it answers from a
    SQLite scan of the same tree (the ids aside, which each store gives);
  * `find PATTERN` (substrings of the tree's hostile names, every other with -i)
    through the server's path index gives what SQLite's gives;
  * the seal is intact; a row altered, added and removed with psql is
    named by fidx verify; the path index's blocks or trigram lists damaged
    with psql: find fails with one line naming the damage, exit 2;
  * a rescan over TLS with sslmode=verify-full (a URI) reuses the digests;
  * the password never appears in what fidx prints;
  * one clear line, exit 2, for a server that is not there, a wrong
    password, a database that holds no inventory, plain TCP refused;
  * stores of schema 5, 6 and 7 (the columns and the table later versions added dropped
    with psql): a sealed scan verifies as it is, and after the first scan
    brought the store to the current version.
"""

import json
import os
import re
import sys

import lib
from lib import Checker, Truth, compare, run_fidx, truth

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pg"))
import pgserver  # noqa: E402
import t_columns  # noqa: E402
import t_report  # noqa: E402

ALL = "md5,sha1,sha256,sha512,xxh128"
ROLE = "fidx ingest 'a\\b"
PASSWORD = "pa ss'wo\\rd-" + "x7Q"
DB = "fleet"
BYTES_COLS = ["name", "ext", "link_target"] + lib.DIGESTS
TEXT_COLS = ["type", "error"]
INT_COLS = ["size", "blocks", "mode", "uid", "gid", "nlink", "dev", "ino"]


def pg_rows(pg, scan_id):
	"""
	Reads the file rows of scan scan_id with psql into {path: row} of
	lib.COLUMNS (as lib.db_rows() gives them) and the paths stored twice.
	"""
	def b(c):
		return "coalesce(encode(%s, 'hex'), 'N')" % c

	def i(c):
		return "coalesce(%s::text, 'N')" % c

	parts = [b("path")] + [b(c) for c in BYTES_COLS + TEXT_COLS] + [i(c) for c in INT_COLS]
	for t in lib.TIMES:
		parts += [i(t + "_ns"), i(t + "_sec"), i(t + "_nsec")]
	out = pg.psql("SELECT concat_ws('|', %s) FROM fidx.file WHERE scan_id = %d;" %
		      (", ".join(parts), scan_id), user=ROLE, dbname=DB)
	rows, dups = {}, []
	for line in out.splitlines():
		f = line.split("|")
		path = bytes.fromhex(f[0])
		d, k = {}, 1
		for c in BYTES_COLS + TEXT_COLS:
			v = None if f[k] == "N" else bytes.fromhex(f[k])
			d[c] = v.decode("utf-8", "replace") if c in TEXT_COLS and v is not None else v
			k += 1
		for c in INT_COLS:
			d[c] = None if f[k] == "N" else int(f[k])
			k += 1
		for t in lib.TIMES:
			ns, sec, nsec = (None if v == "N" else int(v) for v in f[k:k + 3])
			d[t + "_ns"] = ns if ns is not None else (
				None if sec is None else sec * 1000000000 + nsec)
			k += 3
		if path in rows:
			dups.append(path)
		rows[path] = d
	return rows, dups


def without_ids(text):
	"""
	Output with what each store says of itself taken out (the ids it gives
	its rows, its name in the command line, its library, the database a
	SQLite scan records in its options), lines sorted.
	"""
	lines = []
	for line in text.split(b"\n"):
		if re.search(rb"<command_line|<start_time|<library|^## # fidx", line):
			continue
		line = re.sub(rb',"database":"[^"]*"', b"", line)
		line = re.sub(rb'"(id|scan_id|base_scan_id)":\d+', b'"\\1":_', line)
		line = re.sub(rb"^\d+,\d+,", b"_,_,", line)
		line = re.sub(rb"\bscan \d+", b"scan _", line)
		lines.append(line)
	return sorted(lines)


def check_scan_row(chk, pg, want, root):
	"""The scan row (psql) against the tree."""
	out = pg.psql("SELECT encode(root, 'hex'), encode(status, 'escape'), entries, files, dirs,"
		      " bytes, errors, seal IS NOT NULL FROM fidx.scan WHERE id = 1;",
		      user=ROLE, dbname=DB)
	f = out.split("|")
	chk.eq("scan row: root", bytes.fromhex(f[0]), root)
	chk.eq("scan row: status", f[1], "complete")
	chk.eq("scan row: entries", int(f[2]), len(want))
	chk.eq("scan row: files", int(f[3]), sum(1 for r in want.values() if r["type"] == "f"))
	chk.eq("scan row: dirs", int(f[4]), sum(1 for r in want.values() if r["type"] == "d"))
	chk.eq("scan row: bytes", int(f[5]),
	       sum(r["size"] for r in want.values() if r["type"] == "f"))
	chk.eq("scan row: sealed", f[7], "t")


def first_difference(a, b):
	"""Where two lists first differ (index and both items), or both values, shortened."""
	if isinstance(a, list) and isinstance(b, list):
		for i, (x, y) in enumerate(zip(a, b)):
			if x != y:
				return "item %d: %s / %s" % (i, lib.short(x), lib.short(y))
		return "%d / %d items" % (len(a), len(b))
	return "%s / %s" % (lib.short(a), lib.short(b))


def check_queries(chk, target, sqlite_db):
	"""Every query command: the server's answer is SQLite's."""
	commands = [["find", "-l"], ["find", "--json"], ["du"], ["du", "--depth", "3", "--json"], ["stats"],
		    ["dupes"]]
	for fmt in ("csv", "jsonl", "sha256sum", "hashdeep", "body", "dfxml"):
		commands.append(["export", "-f", fmt])
	a, b = (run_fidx("scans", "--json", "--db", db) for db in (target, sqlite_db))
	keys = ("root", "status", "host", "entries", "files", "dirs", "bytes", "errors", "hashed")
	try:
		mine, theirs = (json.loads(r.out.splitlines()[0]) for r in (a, b))
		same = all(mine[k] == theirs[k] for k in keys) and len(mine["seal"]) == 64
	except (ValueError, IndexError, KeyError) as e:
		same, mine = False, e
	chk.ok("scans --json: the scan as SQLite has it", same, lib.short(repr(mine)))
	uuid4 = r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
	chk.ok("scans --json: each store gave its scan a UUID of its own (version 4)",
	       same and all(re.match(uuid4, r["uuid"]) for r in (mine, theirs)) and
	       mine["uuid"] != theirs["uuid"], lib.short(repr(mine)))
	# A hunt: every tenth digest of the tree, and one of no file; the server finds the
	# files by its index of SHA-256, SQLite by reading every row: the same files.
	sums = run_fidx("export", "-f", "sha256sum", "--db", sqlite_db).out.split(b"\n")
	hunt = top_dir(sqlite_db) + b"/hunt.sha256"
	with open(hunt, "wb") as f:
		f.write(b"".join(l.lstrip(b"\\")[:64] + b"  x\n" for l in sums[::10] if len(l) > 64))
		f.write(b"%s  none\n" % (b"0" * 64))
	a = run_fidx("match", "-0", "--db", target, hunt)
	b = run_fidx("match", "-0", "--db", sqlite_db, hunt)
	chk.ok("match: the server's index finds the files SQLite's full read finds",
	       a.rc == b.rc == 0 and sorted(a.out.split(b"\0")) == sorted(b.out.split(b"\0")) and
	       a.out.count(b"\0") > 100 and b"index of sha256" in a.err,
	       "%d/%d files; %s" % (a.out.count(b"\0"), b.out.count(b"\0"), lib.short(a.err)))
	# Substring finds through each store's path index: pieces of the hostile names.
	pieces = sorted({n[1:5] for n in t_columns.NAMES if len(n) >= 5} | {b"root.d/n"})
	for i, piece in enumerate(p for p in pieces if not p.startswith(b"-")):
		commands.append(["find", "-0"] + (["-i"] if i % 2 else []) + [piece])
	# The report's data: the same page but for where and when it was written (and when each
	# store's scan of the tree ran).
	pages = [run_fidx("report", "-o", "-", "--db", db) for db in (target, sqlite_db)]
	data = [t_report.page_data(p.out) for p in pages]
	for d in data:
		for k in ("database", "generated", "started", "finished"):
			(d or {}).get("scan", {}).pop(k, None)
	diff = sorted(k for k in set(data[0] or {}) | set(data[1] or {})
		      if (data[0] or {}).get(k) != (data[1] or {}).get(k))
	chk.ok("report: the server's page holds SQLite's data", data[0] and not diff,
	       "%s; differ: %s" % (lib.short(pages[0].err), ", ".join(
		       "%s: %s" % (k, first_difference(data[0].get(k), data[1].get(k)))
		       for k in diff)))
	for cmd in commands:
		a = run_fidx(*cmd, "--db", target)
		b = run_fidx(*cmd, "--db", sqlite_db)
		same = a.rc == b.rc and without_ids(a.out) == without_ids(b.out)
		shown = " ".join(c if isinstance(c, str) else repr(c) for c in cmd)
		chk.ok("%s: the server's answer is SQLite's" % shown, same and a.out,
		       "rc %d/%d, %d/%d bytes, err %s" % (a.rc, b.rc, len(a.out), len(b.out),
							 lib.short(a.err)))


def top_dir(path):
	"""The folder of path."""
	return os.path.dirname(path)


def check_tamper(chk, pg, target):
	"""Rows changed behind fidx's back are named by verify."""
	res = run_fidx("verify", "--scan", "1", "--db", target)
	chk.ok("verify: intact", res.rc == 0 and b"intact" in res.out, lib.short(res.out + res.err))
	ids = pg.psql("SELECT id FROM fidx.file WHERE scan_id = 1 AND type = 'f'::bytea"
		      " ORDER BY id LIMIT 2;", user=ROLE, dbname=DB).split()
	pg.psql("UPDATE fidx.file SET size = size + 1 WHERE id = %s;"
		"DELETE FROM fidx.file WHERE id = %s;"
		"INSERT INTO fidx.file (host_id, id, scan_id, path, name, ext) SELECT host_id,"
		" 987654321, 1, root || '/planted'::bytea, 'planted'::bytea, ''::bytea"
		" FROM fidx.scan WHERE id = 1;" % (ids[0], ids[1]), user=ROLE, dbname=DB)
	res = run_fidx("verify", "--scan", "1", "--db", target)
	out = res.out.decode("utf-8", "replace")
	chk.ok("verify: exit 1 after tampering", res.rc == 1, lib.short(res.out + res.err))
	chk.ok("verify: the altered row named", "row %s altered" % ids[0] in out, out)
	chk.ok("verify: the removed row named", "row %s removed" % ids[1] in out, out)
	chk.ok("verify: the planted row named", "row 987654321 added" in out, out)
	# The path index damaged: each decoder says so, in one line.
	root = pg.psql("SELECT encode(root, 'hex') FROM fidx.scan WHERE id = 1;", user=ROLE,
		       dbname=DB)
	piece = os.path.basename(bytes.fromhex(root))[-4:]
	for table, sql in (("blocks", "UPDATE fidx.path_block SET data = '\\x0005'::bytea || data"
			    " WHERE scan_id = 1;"),
			   ("trigram lists", "UPDATE fidx.path_trigram SET blocks = '\\x80'::bytea"
			    " WHERE scan_id = 1;")):
		pg.psql(sql, user=ROLE, dbname=DB)
		res = run_fidx("find", "--scan", "1", "--db", target, "--", piece)
		chk.ok("find with the path index's %s damaged: exit 2, one line" % table,
		       res.rc == 2 and len(res.err_lines()) == 1 and b"path index" in res.err and
		       b"damaged" in res.err, "rc %d: %s" % (res.rc, lib.short(res.err)))


def check_failures(chk, pg, top):
	"""What cannot be opened is one line, exit 2, and no password."""
	cases = [
		("no server there", "host=%s port=1 dbname=x user=u password=%s" %
		 (pgserver.conninfo_value(pg.socket_dir), pgserver.conninfo_value(PASSWORD)),
		 "cannot open database"),
		("a wrong password", pg.conninfo(user=ROLE, password="wrong" + PASSWORD, dbname=DB),
		 "cannot open database"),
		("plain TCP (the server asks for TLS)",
		 pg.conninfo(user=ROLE, dbname=DB, tcp=True) + " sslmode=disable",
		 "cannot open database"),
		("a database with no inventory", pg.conninfo(user=ROLE, dbname="postgres"),
		 "holds no fidx inventory"),
	]
	for label, target, says in cases:
		res = run_fidx("find", "--db", target)
		err = res.err.decode("utf-8", "replace")
		chk.ok("%s: exit 2, one line saying so" % label,
		       res.rc == 2 and err.count("\n") == 1 and says in err, lib.short(res.err))
		chk.ok("%s: the password is not shown" % label,
		       PASSWORD.encode() not in res.out + res.err, lib.short(res.err))


# What each older schema version of the server's lacks: the columns later versions added.
OLDER = {
	7: [],
	6: ["attributes"],
	5: ["attributes", "state", "stream"] +
	   ["fn_%s_%s" % (t, u) for t in lib.TIMES for u in ("ns", "sec", "nsec")],
}


def check_older(chk, pg, root):
	"""A store of schema 5, 6 or 7: its sealed scan verifies as it is and after the first write
	migrated it to the current version (the columns added, NULL in its rows)."""
	for version, cols in sorted(OLDER.items()):
		db = "old%d" % version
		label = "a store of schema %d" % version
		pg.create_database(db, ROLE)
		target = pg.conninfo(user=ROLE, dbname=db)
		res = run_fidx("scan", "-q", "--db", target, root, timeout=300)
		chk.ok("%s: setup, a sealed scan" % label, res.rc == 0, lib.short(res.err))
		# Schema 8 added the table of scans kept as changes and the function of its policy.
		drop = "ALTER TABLE fidx.file %s;" % ", ".join("DROP COLUMN " + c for c in cols) \
			if cols else ""
		pg.psql("%s DROP TABLE fidx.scan_delta; DROP FUNCTION fidx.scan_of(bigint, bigint);"
			" UPDATE fidx.meta SET value = '%d' WHERE key = 'version';" % (drop, version),
			user=ROLE, dbname=db)
		res = run_fidx("verify", "--db", target)
		chk.ok("%s: its scan verifies as it is" % label,
		       res.rc == 0 and b"intact" in res.out and not res.err, lib.short(res.out + res.err))
		res = run_fidx("find", "--db", target, "--scan", "1")
		chk.ok("%s: read as it is" % label, res.rc == 0 and not res.err, lib.short(res.err))
		res = run_fidx("scan", "-q", "--db", target, root, timeout=300)
		chk.ok("%s: a scan into it" % label, res.rc == 0 and not res.err, lib.short(res.err))
		chk.eq("%s: migrated to the current version" % label,
		       pg.psql("SELECT value FROM fidx.meta WHERE key = 'version';", user=ROLE,
			       dbname=db).strip(), "8")
		res = run_fidx("verify", "--db", target, "--scan", "1,2")
		chk.ok("%s: both scans verify once migrated" % label,
		       res.rc == 0 and res.out.count(b"intact") == 2, lib.short(res.out + res.err))


def main():
	chk = Checker()
	with lib.TempDir() as td, pgserver.PgServer() as pg:
		top = os.fsencode(td.path)
		os.chmod(td.path, 0o755)
		pg.create_role(ROLE, PASSWORD)
		pg.create_database(DB, ROLE)
		target = pg.conninfo(user=ROLE, dbname=DB)
		root, _ = t_columns.build(top)
		lib.settle(root)
		want = truth(root, Truth(btime=True))
		with chk.guard("scan into the server"):
			res = run_fidx("scan", "-q", "--hash", ALL, "--db", target, root, timeout=300)
			chk.ok("scan: exit 0, nothing on stderr", res.rc == 0 and not res.err,
			       lib.short(res.err))
			chk.ok("scan: the password is not shown", PASSWORD.encode() not in res.out,
			       lib.short(res.out))
			got, dups = pg_rows(pg, 1)
			compare(chk, "rows read with psql", got, dups, want)
			check_scan_row(chk, pg, want, root)
		sqlite_db = top + b"/same.db"
		with chk.guard("queries"):
			res = run_fidx("scan", "-q", "--hash", ALL, "-o", sqlite_db, root, timeout=300)
			chk.ok("setup: the same tree scanned into SQLite", res.rc == 0, lib.short(res.err))
			check_queries(chk, target, sqlite_db)
		with chk.guard("rescan over TLS"):
			uri = pg.uri(user=ROLE, dbname=DB, tcp=True)  # sslmode=verify-full, the CA's file
			chk.ok("setup: the URI asks for verify-full", "sslmode=verify-full" in uri, uri)
			res = run_fidx("scan", "-q", "--db", uri, root, timeout=300)
			same = run_fidx("scan", "-q", "-o", sqlite_db, root, timeout=300)
			out = res.out.decode("utf-8", "replace")
			counts = [re.search(r"(\d+) hashed, (\d+) reused", r.out.decode()) for r in (res, same)]
			chk.ok("rescan over verify-full TLS: exit 0, the digests reused as SQLite reuses them",
			       res.rc == 0 and counts[0] and counts[1] and
			       counts[0].groups() == counts[1].groups() and int(counts[0].group(2)) > 0,
			       lib.short(res.out + res.err))
			chk.ok("rescan: the password is not shown", PASSWORD.encode() not in res.out,
			       out)
			ssl = pg.psql("SELECT count(*) FROM pg_stat_ssl WHERE ssl;", dbname="postgres")
			chk.ok("rescan: the server saw TLS connections", ssl != "", ssl)
		with chk.guard("tampering"):
			check_tamper(chk, pg, target)
		with chk.guard("failures"):
			check_failures(chk, pg, top)
		with chk.guard("older schemas"):
			check_older(chk, pg, root)
	chk.done()


if __name__ == "__main__":
	main()
