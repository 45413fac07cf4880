"""t_pgsecurity.py - a fleet's server set up by scripts/fidx-pg-setup: who may do what.

The throwaway server (tests/pg/pgserver.py: SCRAM, TLS) is set up by the
script as an administrator would: the database and the schema (made by its
owner, from src/store/postgres/schema.sql), an ingest role for host alpha,
one for host beta, one for a hostile host name, an analyst.  Checked:

  * the schema's file and scan tables have the SQLite tables' columns, by
    name, order and kind (PRAGMA table_info of a fidx.db against
    information_schema);
  * each ingest role scans its own host (fidx run under that host name), and
    is refused, in one line, for another host;
  * ingest role A cannot read, alter or delete host B's rows, even with SQL
    written by hand through psql as A: B's seals stay intact;
  * the analyst reads every host and writes nothing;
  * an ingest role pushes a rescan as its changes (fidx.scan_delta under the
    policies as every table of a host's rows), its seal intact;
  * the TLS material the script makes verifies (openssl verify), names the
    server, and its key is private.
"""

import os
import re
import sqlite3
import subprocess
import sys

import lib
from lib import Checker, run_fidx, write

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pg"))
import pgserver  # noqa: E402
from lib import as_host  # noqa: E402

SETUP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
		     "fidx-pg-setup")
DB = "fleet"
EVIL = b"evil\nhost'$(id)"


def setup(pg, *args):
	"""Runs fidx-pg-setup as the server's administrator; returns {role: password}."""
	env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
	env.update(PGHOST=pg.socket_dir, PGPORT=str(pg.port), PGUSER=pgserver.ADMIN,
		   PGPASSWORD=pg.admin_password)
	r = subprocess.run([SETUP] + [os.fsencode(a) if isinstance(a, str) else a for a in args],
			   capture_output=True, env=env, timeout=60)
	if r.returncode:
		raise RuntimeError("fidx-pg-setup %s: %s" % (args[0], r.stderr.decode(errors="replace")))
	return dict(line.rsplit(" ", 1) for line in r.stdout.decode().splitlines())


def check_columns(chk, pg, top, owner_pw):
	"""The server's tables have the SQLite tables' columns."""
	sq = top + b"/cols.db"
	run_fidx("scan", "-q", "-o", sq, top + b"/a")
	con = sqlite3.connect(sq)
	for table in ("file", "scan"):
		want = [(n, "bigint" if t == "INTEGER" else "bytea")
			for _, n, t, *_ in con.execute("PRAGMA table_info(%s)" % table)]
		out = pg.psql("SELECT column_name || ' ' || data_type FROM information_schema.columns"
			      " WHERE table_schema = 'fidx' AND table_name = '%s'"
			      " AND column_name NOT IN ('host_id', 'origin_id')"
			      " ORDER BY ordinal_position;" % table, user="fidx_owner",
			      password=owner_pw, dbname=DB)
		got = [tuple(l.split(" ", 1)) for l in out.splitlines()]
		# uuid is a uuid on the server, text in SQLite.
		got = [(n, "bytea" if t == "uuid" else t) for n, t in got]
		chk.eq("schema: fidx.%s has the columns of SQLite's %s" % (table, table), got, want)
	con.close()


def as_role(pg, role, pw, sql):
	"""Runs hand-written SQL through psql as role; returns (exit status, stdout + stderr)."""
	env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
	env["PGPASSWORD"] = pw
	r = subprocess.run([os.path.join(pg.bin, "psql"), "-X", "-v", "ON_ERROR_STOP=1", "-At",
			    "-d", pg.conninfo(user=role, dbname=DB)], input=sql,
			   capture_output=True, env=env, encoding="utf-8", errors="replace")
	return r.returncode, r.stdout + r.stderr


def main():
	chk = Checker()
	with lib.TempDir() as td, pgserver.PgServer() as pg:
		top = os.fsencode(td.path)
		os.chmod(td.path, 0o755)
		for h in (b"a", b"b", b"e"):
			os.makedirs(top + b"/" + h + b"/etc")
			write(top + b"/" + h + b"/etc/passwd", b"root:x:0:0 on " + h + b"\n")
		pw = setup(pg, "init", DB)
		pw.update(setup(pg, "ingest", DB, "ingest_a", "alpha"))
		pw.update(setup(pg, "ingest", DB, "ingest_b", "beta"))
		pw.update(setup(pg, "ingest", DB, "ingest 'e\\", EVIL))
		pw.update(setup(pg, "analyst", DB, "reader"))
		chk.eq("setup: a password for each role made", sorted(pw),
		       sorted(["fidx_owner", "ingest_a", "ingest_b", "ingest 'e\\", "reader"]))
		with chk.guard("schema"):
			check_columns(chk, pg, top, pw["fidx_owner"])
			# Every table of a host's rows: host_id NOT NULL (the shards split by it),
			# row-level security on, both roles' policies.
			out = pg.psql("SELECT c.table_name, c.is_nullable, cl.relrowsecurity,"
				      " (SELECT string_agg(policyname, ',' ORDER BY policyname)"
				      "  FROM pg_policies p WHERE p.schemaname = 'fidx'"
				      "  AND p.tablename = c.table_name)"
				      " FROM information_schema.columns c JOIN pg_class cl"
				      " ON cl.relname = c.table_name AND cl.relnamespace = 'fidx'::regnamespace"
				      " WHERE c.table_schema = 'fidx' AND c.column_name = 'host_id'"
				      " ORDER BY 1;", dbname=DB).splitlines()
			tables = [line.split("|")[0] for line in out]
			chk.ok("schema: the changes of scans are a table of a host's rows",
			       "scan_delta" in tables, repr(tables))
			chk.eq("schema: each table of a host's rows: host_id NOT NULL, row-level security,"
			       " both policies", [line.split("|", 1)[1] for line in out],
			       ["NO|t|analyst_reads,ingest_own"] * len(out))

		def target(role):
			return pg.conninfo(user=role, password=pw[role], dbname=DB)

		with chk.guard("ingest"):
			ra = as_host(b"alpha", "scan", "-q", "--db", target("ingest_a"), top + b"/a")
			rb = as_host(b"beta", "scan", "-q", "--db", target("ingest_b"), top + b"/b")
			re_ = as_host(EVIL, "scan", "-q", "--db", target("ingest 'e\\"), top + b"/e")
			chk.ok("ingest: each role scans its own host (the hostile name too)",
			       ra.returncode == rb.returncode == re_.returncode == 0,
			       lib.short(ra.stderr + rb.stderr + re_.stderr))
			r = as_host(b"beta", "scan", "-q", "--db", target("ingest_a"), top + b"/b")
			chk.ok("ingest: role A scanning as host beta: exit 2, one line",
			       r.returncode == 2 and r.stderr.count(b"\n") == 1 and
			       b"row-level security" in r.stderr, lib.short(r.stderr))
			r = run_fidx("scans", "--json", "--db", target("ingest_a"))
			hosts = re.findall(rb'"host":"([^"]*)"', r.out)
			chk.ok("ingest: role A sees its own host's scans alone", r.rc == 0 and
			       hosts == [b"alpha"], lib.short(r.out + r.err))
		with chk.guard("hand-written SQL as A"):
			bscan = pg.psql("SELECT id FROM fidx.scan WHERE host = 'beta'::bytea;",
					user="reader", password=pw["reader"], dbname=DB)
			attempts = [
				("read B's rows", "SELECT count(*) FROM fidx.file WHERE scan_id = %s;"
				 % bscan, lambda out: out.strip() == "0"),
				("read B's scan row", "SELECT count(*) FROM fidx.scan WHERE id = %s;"
				 % bscan, lambda out: out.strip() == "0"),
				("alter B's rows", "UPDATE fidx.file SET size = 0 WHERE scan_id = %s;"
				 % bscan, None),
				("delete B's rows", "DELETE FROM fidx.file WHERE scan_id = %s;" % bscan,
				 None),
				("alter B's scan row", "UPDATE fidx.scan SET status = 'failed'::bytea"
				 " WHERE id = %s;" % bscan, None),
				("delete B's scan row", "DELETE FROM fidx.scan WHERE id = %s;" % bscan,
				 None),
				("add a row to B's scan", "INSERT INTO fidx.file (host_id, id, scan_id,"
				 " path) SELECT host_id, 42, id, root FROM fidx.scan WHERE id = %s;" % bscan,
				 None),
				("add a row under B's host id", "INSERT INTO fidx.file (host_id, id,"
				 " scan_id, path) SELECT id, 43, 1, '/x'::bytea FROM fidx.host"
				 " WHERE name <> 'alpha'::bytea;", None),
				("claim host beta", "INSERT INTO fidx.host_role VALUES (current_user,"
				 " 'beta'::bytea);", None),
				("turn row-level security off", "ALTER TABLE fidx.file DISABLE ROW LEVEL"
				 " SECURITY;", None),
				("become the owner", "SET ROLE fidx_owner; DELETE FROM fidx.file;", None),
			]
			for label, sql, ok in attempts:
				rc, out = as_role(pg, "ingest_a", pw["ingest_a"], sql)
				if ok:
					chk.ok("as A with psql: %s: nothing" % label, rc == 0 and ok(out),
					       out)
				else:
					chk.ok("as A with psql: %s: refused or no row" % label, rc != 0 or
					       re.fullmatch(r"(UPDATE|DELETE|INSERT 0) 0\n", out), out)
			r = run_fidx("verify", "--all", "--db", target("reader"))
			chk.ok("after A's attempts: B's scan, and every other, intact", r.rc == 0 and
			       r.out.count(b" intact ") == 3, lib.short(r.out + r.err))
			n = pg.psql("SELECT count(*) FROM fidx.file WHERE scan_id = %s;" % bscan,
				    user="reader", password=pw["reader"], dbname=DB)
			chk.eq("after A's attempts: B's rows all there (its folder, etc, passwd)", n, "3")
		with chk.guard("analyst"):
			r = run_fidx("scans", "--json", "--db", target("reader"))
			hosts = sorted(re.findall(rb'"host":"([^"]*)"', r.out))
			chk.eq("analyst: reads every host", len(hosts), 3)
			r = as_host(b"alpha", "scan", "-q", "--db", target("reader"), top + b"/a")
			chk.ok("analyst: a scan is refused, exit 2, one line", r.returncode == 2 and
			       r.stderr.count(b"\n") == 1 and b"permission denied" in r.stderr,
			       lib.short(r.stderr))
			rc, out = as_role(pg, "reader", pw["reader"], "DELETE FROM fidx.file;")
			chk.ok("analyst: psql DELETE is refused", rc != 0 and "permission denied" in out,
			       out)
		with chk.guard("a rescan pushed as changes by an ingest role"):
			local = top + b"/alpha.db"
			for i in range(2):
				write(top + b"/a/etc/day", b"day %d\n" % i)
				r = as_host(b"alpha", "scan", "-q", "-o", local, top + b"/a")
				chk.ok("push as changes: scan %d" % i, r.returncode == 0, lib.short(r.stderr))
			r = run_fidx("push", "-q", "--scan", "1", local, target("ingest_a"))
			chk.ok("push as changes: role A pushes a scan, its seal intact",
			       r.rc == 0 and b"intact on the server" in r.out, lib.short(r.out + r.err))
			r = run_fidx("push", "-q", local, target("ingest_a"))
			chk.ok("push as changes: then the rescan goes as changes, intact",
			       r.rc == 0 and b"changes from scan 1" in r.out and
			       r.out.count(b"intact on the server") == 1 and
			       r.out.count(b"recorded there (its rows not read again") == 1,
			       lib.short(r.out + r.err))
			n = pg.psql("SELECT count(*) FROM fidx.scan_delta;", user="ingest_b",
				    password=pw["ingest_b"], dbname=DB)
			chk.eq("push as changes: role B sees none of A's changes", n, "0")
			# host_id is the writer's: the scan and its base must be of that host too.
			mine = ("SELECT s.id, s.host_id FROM fidx.scan s WHERE NOT EXISTS (SELECT 1"
				" FROM fidx.scan_delta d WHERE d.scan_id = s.id) LIMIT 1")
			attempts = [
				("B's scan as changes of A's", "INSERT INTO fidx.scan_delta"
				 " (scan_id, base_id, depth, runs, host_id) SELECT %s, a.id, 1,"
				 " ''::bytea, a.host_id FROM (%s) a;" % (bscan, mine)),
				("A's scan as changes of B's", "INSERT INTO fidx.scan_delta"
				 " (scan_id, base_id, depth, runs, host_id) SELECT a.id, %s, 1,"
				 " ''::bytea, a.host_id FROM (%s) a;" % (bscan, mine)),
				("A's changes moved onto B's scan", "UPDATE fidx.scan_delta"
				 " SET base_id = %s;" % bscan),
			]
			for label, sql in attempts:
				rc, out = as_role(pg, "ingest_a", pw["ingest_a"], sql)
				chk.ok("as A with psql: %s: refused" % label,
				       rc != 0 and "row-level security" in out, out)
		with chk.guard("tls"):
			d = top + b"/tls"
			r = subprocess.run([SETUP, "tls", d, "fleet.example"], capture_output=True)
			v = subprocess.run(["openssl", "verify", "-CAfile", d + b"/ca.crt",
					    d + b"/server.crt"], capture_output=True)
			san = subprocess.run(["openssl", "x509", "-noout", "-ext", "subjectAltName",
					      "-in", d + b"/server.crt"], capture_output=True)
			key_mode = os.stat(d + b"/server.key").st_mode & 0o777
			chk.ok("tls: the certificate verifies against the CA, names the server, its key"
			       " is private", r.returncode == 0 and v.returncode == 0 and
			       b"DNS:fleet.example" in san.stdout and key_mode == 0o600 and
			       b"ssl_cert_file" in r.stdout, lib.short(r.stderr + v.stdout + san.stdout))
	chk.done()


if __name__ == "__main__":
	main()
