# Three PostgreSQL servers of its own; one of them killed and started again (shares the cores).
# e2e: no-asan (make check runs it on the test build alone): its time goes to three servers,
# and the code it drives (push, kept changes, the reads) runs under ASan in t_fleet, t_push,
# t_fleetdelta and t_postgres.
"""t_shard.py - a fleet store spread over shards (scripts/fidx-pg-shard, postgres_fdw).

Three throwaway servers (tests/pg/pgserver.py) on loopback: a coordinator and
two shards, each first a fleet store of fidx-pg-setup init, then joined by
fidx-pg-shard over TLS (sslmode=verify-full); the coordinator's server also
holds "single", a plain fleet database, the reference.  Hosts scan trees of
their own (one host name with a newline, a quote and a byte that is not
UTF-8) into files; six scans are pushed into the sharded store (through the
coordinator, as its owner and as an ingest role; straight to their shard,
named by fidx-pg-shard where, as the shard's owner and as an ingest role
made on the shard).  Two of those hosts (alpha, through the coordinator as
an ingest role; the hostile one, straight to its shard as the shard's
owner) then rescan a changed tree (two files rewritten, two removed, two
added: one with a newline, a quote and a byte that is not UTF-8 in its
name) into a copy of their file and push it the same way: as changes.  The single
database gets the same pushes in the order of the sharded store's ids.
Checked:

  * every table of schema fidx with a host_id column is partitioned on the
    coordinator (one of a later schema too, with its identity and policy),
    the others plain; on a shard the host-less tables are
    foreign; the hosts spread over both shards; a shard refuses a host that
    is not its own and one its coordinator does not know, in one line;
  * each rescan pushed as changes, intact (its push line), and kept as
    changes: a row of fidx.scan_delta on the coordinator (the single
    database keeps them so too);
  * every fleet question (scans, find, match with a hash list, dupes, du,
    stats, export csv and jsonl, diff HOST:PATH HOST:PATH, verify, and diff
    of a host's two scans, composed from the changes stored) answers
    through the coordinator byte for byte as the single database does, exit
    status and stderr too, once the ids are normalized: a scan id by its
    rank among the store's, a file id by the order it first shows in (the
    two stores number rows apart; nothing else is changed);
  * fidx prune --keep 1 through the coordinator: each rescanned host's
    earlier scan dropped, its rescan rebuilt whole (no row of
    fidx.scan_delta left), every scan kept verifying; compared below with
    a reference pruned the same way;
  * row-level security through the coordinator: the ingest role sees its
    own host alone (with psql too, and no foreign partition), the analyst
    reads every host;
  * a shard stopped (its postmaster killed): every question fails with one
    line, exit 2 (diff: 18), naming the shard's foreign server and its port;
    a push of a host on it through the coordinator fails the same way,
    leaving no scan; a host whose shard is up still pushes straight to it;
    the shard started again: the failed push, run again, completes, and
    every answer is whole again (a second reference's, pushed in the new
    order of ids, then pruned with --keep 1 as the sharded store was);
  * a host scanning live straight to its shard, another through the
    coordinator: each scan intact, its paths whole through the coordinator.
"""

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import lib
from lib import Checker, run_fidx, write

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pg"))
import pgserver  # noqa: E402
from t_fleet import build_host_tree  # noqa: E402

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")
DB = "fleet"
SINGLE = "single"
EVIL = b"evil\nhost'$(id)\xff"
HOSTS = [b"alpha", b"beta", EVIL, b"gamma", b"delta", b"epsilon"]
DIRECT = {b"beta", EVIL}        # pushed straight to their shard
# A table of a later schema version, made before fidx-pg-shard runs: sharded as fidx's own.
NEXT_TABLE = """
SET ROLE fidx_owner;
CREATE TABLE fidx.next_table (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	host_id bigint NOT NULL, note bytea);
ALTER TABLE fidx.next_table ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON fidx.next_table TO fidx_analyst;
CREATE POLICY analyst_reads ON fidx.next_table FOR SELECT TO fidx_analyst USING (true);
"""
# Hosts that rescan a changed tree and push it as changes, and where to.
RESCAN = [(b"alpha", "the coordinator as an ingest role"), (EVIL, "its shard")]
HOSTILE = b"new\nline'$(id)\xfe"   # a file the rescans add
LATER = [b"zeta", b"eta", b"theta", b"iota", b"kappa", b"lambda"]  # for the shard-down part


def tool(pg, name, *args, stdin=None):
	"""Runs scripts/NAME as pg's administrator; returns its stdout (raises on failure)."""
	env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
	# The server's own psql first: /usr/bin/psql is Debian's wrapper, ~60 ms a call.
	env.update(PGHOST=pg.socket_dir, PGPORT=str(pg.port), PGUSER=pgserver.ADMIN,
		   PGPASSWORD=pg.admin_password, PATH=pg.bin + ":" + os.environ.get("PATH", ""))
	r = subprocess.run([os.path.join(SCRIPTS, name)] +
			   [os.fsencode(a) if isinstance(a, str) else a for a in args],
			   input=stdin, capture_output=True, env=env, timeout=60)
	if r.returncode:
		raise RuntimeError("%s %s: %s" % (name, args[0], r.stderr.decode(errors="replace")))
	return r.stdout.decode()


def passwords(out):
	"""{role: password} of fidx-pg-setup's output."""
	return dict(line.rsplit(" ", 1) for line in out.splitlines())


def owner_conninfo(pg, pw, dbname=DB):
	"""The conninfo of fidx_owner over TLS on loopback, as fidx-pg-shard reads it."""
	return pgserver.make_conninfo(dict(host=pg.host, port=pg.port, dbname=dbname,
					   sslmode="verify-full", sslrootcert=pg.ca_file,
					   user="fidx_owner", password=pw))


def ranks(target):
	"""{scan id: its rank} of a store's scans, from fidx scans --json."""
	res = run_fidx("scans", "--json", "--db", target)
	ids = sorted(json.loads(line)["id"] for line in res.out.splitlines())
	return {i: n + 1 for n, i in enumerate(ids)}


def normalized(out, rank, table):
	"""out with the ids a store gave replaced: a scan's by its rank (#N), a file's by the
	order it first shows in (fN); table: the first column of a text line is a scan id."""
	files = {}

	def scan(v):
		return b"#%d" % rank[int(v)] if int(v) in rank else v

	def file(v):
		return b"f%d" % files.setdefault(v, len(files) + 1)

	lines = []
	for line in out.split(b"\n"):
		if line.startswith(b"{"):
			of_file = b'"scan_id":' in line
			line = re.sub(rb'"(id|scan_id)":(\d+)', lambda m: b'"%s":%s' % (m.group(1), (
				file if m.group(1) == b"id" and of_file else scan)(m.group(2))), line)
		else:
			line = re.sub(rb"^(\d+),(\d+),", lambda m: file(m.group(1)) + b"," +
				      scan(m.group(2)) + b",", line)
			if table:
				line = re.sub(rb"^ *(\d+)(?=  )", lambda m: scan(m.group(1)), line)
			line = re.sub(rb"\bscan (\d+)", lambda m: b"scan " + scan(m.group(1)), line)
		lines.append(line)
	return b"\n".join(lines)


def questions(top, lst):
	"""The fleet questions asked of both stores: (label, argv after the command)."""
	a, b = top + b"/h0", top + b"/h3"
	return [
		("scans", ["scans"]),
		("scans --json", ["scans", "--json"]),
		("find", ["find", "--host", "*", "-0", "conf"]),
		("find -l --json", ["find", "--host", "*", "--json", "-l"]),
		("find --hash", ["find", "--host", "*", "--hash",
				 hashlib.sha256(b"the same on every host\n").hexdigest()]),
		("match", ["match", "--host", "*", "-l", lst]),
		("dupes", ["dupes", "--host", "*"]),
		("dupes --json", ["dupes", "--host", "*", "--json"]),
		("du", ["du", "--host", "*", "-b", "-d", "3"]),
		("stats", ["stats", "--host", "*", "-b"]),
		("stats --json", ["stats", "--host", "*", "--json"]),
		("export csv", ["export", "--host", "*", "-f", "csv"]),
		("export jsonl", ["export", "--host", "*", "-f", "jsonl"]),
		("diff", ["diff", "--ignore", "mtime,ctime,inode,btime", b"alpha:" + a + b"/etc",
			  b"gamma:" + b + b"/etc"]),
		("verify --all", ["verify", "--all"]),
	]


def ask(target, argv):
	"""Runs fidx argv[0] --db target argv[1:]; returns (status, stdout, stderr)."""
	r = run_fidx(argv[0], "--db", target, *argv[1:])
	return r.rc, r.out, r.err


def compare(chk, label, coord, single, top, lst, pairs=()):
	"""Every question through the coordinator answers as the single database does; pairs:
	more (name, argv through the coordinator, argv of the single database)."""
	rc, rs = ranks(coord), ranks(single)
	chk.eq("%s: the same number of scans in both stores" % label, len(rc), len(rs))
	took = [0.0, 0.0]
	for name, argv, argv_s in [(n, a, a) for n, a in questions(top, lst)] + list(pairs):
		t0 = time.monotonic()
		c = ask(coord, argv)
		t1 = time.monotonic()
		s = ask(single, argv_s)
		took[0] += t1 - t0
		took[1] += time.monotonic() - t1
		table = argv[0] in ("scans", "du")
		cn, sn = normalized(c[1], rc, table), normalized(s[1], rs, table)
		same = (c[0] == s[0] and cn == sn and
			normalized(c[2], rc, False) == normalized(s[2], rs, False))
		first = next((i for i, (x, y) in enumerate(zip(cn.split(b"\n"), sn.split(b"\n")))
			      if x != y), None)
		chk.ok("%s: %s through the coordinator as on a single server (exit %d, %d bytes)" %
		       (label, name, c[0], len(c[1])), same and c[1] and
		       (c[0] in (0, 1, 4) or argv[0] == "diff" and c[0] < 14),
		       "exit %d, %d; first line that differs: %r\n  vs %r; stderr %s" %
		       (c[0], s[0], first is not None and cn.split(b"\n")[first],
			first is not None and sn.split(b"\n")[first], lib.short(c[2] + s[2])))
	# For the reader only (a shared machine: nothing is checked of it).
	print("# %s: the questions took %.2f s through the coordinator, %.2f s on one server" %
	      (label, took[0], took[1]))


def push_in_order(coord, single, files, hosts, rescans=None):
	"""Pushes the scans of hosts into the single database in the order of the ids the
	sharded store gave them (a rescan from rescans[host], the file of both scans: as changes);
	returns the failures."""
	uuid = {}
	for host in hosts:
		for f in [files[host]] + ([rescans[host]] if host in (rescans or {}) else []):
			r = run_fidx("scans", "--json", "--db", f)
			for line in r.out.splitlines():
				uuid.setdefault(json.loads(line)["uuid"], f)
	res = run_fidx("scans", "--json", "--db", coord)
	bad = []
	for s in sorted((json.loads(line) for line in res.out.splitlines()), key=lambda s: s["id"]):
		if s["uuid"] in uuid:
			r = run_fidx("push", "-q", uuid[s["uuid"]], single)
			if r.rc:
				bad.append((s["uuid"], r.rc, r.err))
	return bad


def change(root):
	"""A rescan's changes: two files rewritten, two added (one a hostile name), two removed."""
	write(root + b"/etc/hostname", b"renamed host, longer\n")
	write(root + b"/etc/conf.d/03.conf", b"rewritten\n")
	write(root + b"/etc/conf.d/" + HOSTILE, b"a hostile name\n")
	write(root + b"/var/added", b"added\n")
	os.unlink(root + b"/etc/conf.d/07.conf")
	os.unlink(root + b"/var/f05")


def uuids(target):
	"""The uuids of a store's scans, in the order of their ids."""
	res = run_fidx("scans", "--json", "--db", target)
	return [s["uuid"] for s in sorted(map(json.loads, res.out.splitlines()),
					  key=lambda s: s["id"])]


def scan_ids(target):
	"""{uuid: id} of a store's scans."""
	res = run_fidx("scans", "--json", "--db", target)
	return {s["uuid"]: s["id"] for s in map(json.loads, res.out.splitlines())}


def rescan(chk, co, files, top, targets):
	"""Hosts of RESCAN rescan a changed tree into a copy of their file (their earlier scan
	in it) and push it as changes: through the coordinator (as its owner, as an ingest
	role), straight to their shard (likewise).  Returns {host: the file of both scans}."""
	rescans = {}
	for host, to in RESCAN:
		n = HOSTS.index(host)
		root, rescans[host] = top + b"/h%d" % n, top + b"/h%d-rescan.db" % n
		shutil.copyfile(files[host], rescans[host])
		change(root)
		lib.settle(root)
		r = lib.as_host(host, "scan", "-q", "-o", rescans[host], root)
		if r.returncode:
			raise RuntimeError("rescan as %r: %s" % (host, r.stderr))
		r = run_fidx("push", "-q", rescans[host], targets[to](host))
		last = (r.out.splitlines() or [b""])[-1]
		chk.ok("a rescan pushed through %s: exit 0, as changes, intact" % to, r.rc == 0 and
		       b"(changes from scan " in last and b"intact on the server" in last,
		       lib.short(r.out + r.err))
	out = co.psql("SELECT s.uuid FROM fidx.scan_delta d JOIN fidx.scan s ON s.id = d.scan_id;",
		      dbname=DB)
	chk.eq("the coordinator: each rescan is kept as changes (a row of fidx.scan_delta)",
	       sorted(out.split()), sorted(uuids(f)[1] for f in rescans.values()))
	return rescans


def diff_pairs(coord, single, rescans):
	"""diff between the two scans of a host that rescanned (composed from the changes
	stored; one pushed through the coordinator, one straight to its shard): (name, argv
	through the coordinator, argv of the single database)."""
	pairs = []
	c, s = scan_ids(coord), scan_ids(single)
	for host, v in ((b"alpha", []), (EVIL, ["--json"])):
		two = uuids(rescans[host])
		pairs.append(("diff of the two scans of %r %s" % (host, " ".join(v)),
			      ["diff"] + v + [str(c[u]) for u in two],
			      ["diff"] + v + [str(s[u]) for u in two]))
	return pairs


def prune(chk, label, target, rescans):
	"""fidx prune --keep 1: each rescanned host's earlier scan dropped, its rescan rebuilt whole."""
	r = run_fidx("prune", "--keep", "1", "--db", target)
	chk.ok("%s: prune --keep 1 drops the earlier scans, rebuilds the rescans whole" % label,
	       r.rc == 0 and r.out.count(b"dropped scan ") == len(rescans) and
	       b"(%d rebuilt whole" % len(rescans) in r.out, lib.short(r.out + r.err))


@contextlib.contextmanager
def servers(n):
	"""n throwaway servers, made and started at once (initdb is most of a start), stopped at
	the end whatever happens."""
	pgs = [pgserver.PgServer() for _ in range(n)]
	pgserver._handle_signals()  # SIGTERM, SIGHUP stop them (start() in a thread does not)
	try:
		failed = []

		def start(pg):
			try:
				pg.start()
			except BaseException as e:  # noqa: B902 (raised again below)
				failed.append(e)

		threads = [threading.Thread(target=start, args=(pg,)) for pg in pgs]
		for t in threads:
			t.start()
		for t in threads:
			t.join()
		if failed:
			raise failed[0]
		yield pgs
	finally:
		for pg in pgs:
			pg.stop()


def main():
	chk = Checker()
	with lib.TempDir() as td, servers(3) as (co, s1, s2):
		top = os.fsencode(td.path)
		os.chmod(td.path, 0o755)
		shards = {"shard_a": s1, "shard_b": s2}
		pw = {name: passwords(tool(pg, "fidx-pg-setup", "init", DB))["fidx_owner"]
		      for name, pg in (("co", co), ("shard_a", s1), ("shard_b", s2))}
		tool(co, "fidx-pg-setup", "init", SINGLE)
		roles = passwords(tool(co, "fidx-pg-setup", "ingest", DB, "ingest_a", "alpha"))
		roles.update(passwords(tool(co, "fidx-pg-setup", "analyst", DB, "reader")))
		for pg in (co, s1, s2):  # a table of a later schema version, unknown to the script
			pg.psql(NEXT_TABLE, dbname=DB)
		for k, (name, pg) in enumerate(shards.items(), 1):
			tool(pg, "fidx-pg-shard", "shard", DB, str(k), str(len(shards)),
			     stdin=owner_conninfo(co, pw["co"]).encode() + b"\n")
		tool(co, "fidx-pg-shard", "coordinator", DB, stdin="".join(
			"%s %s\n" % (name, owner_conninfo(pg, pw[name]))
			for name, pg in shards.items()).encode())
		coord = owner_conninfo(co, pw["co"])
		single = owner_conninfo(co, pw["co"], SINGLE)
		reader = pgserver.make_conninfo(dict(host=co.socket_dir, port=co.port, dbname=DB,
						     user="reader", password=roles["reader"]))
		ingest = pgserver.make_conninfo(dict(host=co.socket_dir, port=co.port, dbname=DB,
						     user="ingest_a", password=roles["ingest_a"]))

		def direct(host):
			"""The conninfo of host's shard (fidx-pg-shard where), and the shard's name."""
			name = tool(co, "fidx-pg-shard", "where", DB, host).strip()
			return owner_conninfo(shards[name], pw[name]), name

		with chk.guard("set-up"):
			out = co.psql("SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n"
				      " ON n.oid = c.relnamespace WHERE n.nspname = 'fidx' AND"
				      " c.relkind IN ('r', 'p') ORDER BY 1;", dbname=DB)
			got = dict(line.split("|") for line in out.splitlines())
			chk.eq("coordinator: the tables of hosts partitioned, the others plain", got,
			       {"file": "p", "file_digest": "p", "host": "r", "host_role": "r",
				"meta": "r", "path_block": "p", "path_index": "p", "path_trigram": "p",
				"scan": "p", "scan_delta": "p", "seal_batch": "p", "next_table": "p"})
			out = s1.psql("SELECT c.relname || ':' || c.relkind::text FROM pg_class c JOIN"
				      " pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'fidx'"
				      " AND c.relname IN ('meta', 'host', 'file') ORDER BY 1;", dbname=DB)
			chk.eq("shard: its rows in tables, the host-less tables foreign", out,
			       "file:r\nhost:f\nmeta:f")

		# Each host's scan, made into a file of its own as that host.
		files = {}
		for n, host in enumerate(HOSTS + LATER):
			root = top + b"/h%d" % n
			build_host_tree(root, n, extra=b"known bad\n" if n in (1, 4) else b"")
			if host in dict(RESCAN):  # a rescan of a few changes is smaller as changes
				os.makedirs(root + b"/var")
				for i in range(20):
					write(root + b"/var/f%02d" % i, b"host %d file %d\n" % (n, i))
			files[host] = top + b"/h%d.db" % n
			r = lib.as_host(host, "scan", "-q", "-o", files[host], root)
			if r.returncode:
				raise RuntimeError("scan as %r: %s" % (host, r.stderr))
		lst = top + b"/bad.sha256"
		write(lst, hashlib.sha256(b"known bad\n").hexdigest().encode() + b"  bad\n")

		with chk.guard("pushes"):
			bad = []
			for host in HOSTS:
				if host == b"beta":
					# An ingest role of the shard's (the host_role row goes to the
					# coordinator's table, through the shard's foreign table).
					target, name = direct(host)
					roles.update(passwords(tool(shards[name], "fidx-pg-setup", "ingest",
								    DB, "ingest_b", "beta")))
					target = pgserver.make_conninfo(dict(
						host=shards[name].socket_dir, port=shards[name].port,
						dbname=DB, user="ingest_b", password=roles["ingest_b"]))
				elif host in DIRECT:
					target, name = direct(host)
				elif host == b"alpha":
					target = ingest
				else:
					target = coord
				r = run_fidx("push", "-q", files[host], target)
				if r.rc:
					bad.append((host, r.rc, r.err))
			chk.ok("every push into the sharded store exits 0 (through the coordinator, as"
			       " an ingest role; straight to a shard, as its owner and as an ingest role)",
			       not bad, lib.short(bad))
			# A host pushed to a shard that is not its own: refused at its first row.
			right = direct(b"gamma")[1]
			wrong = [n for n in shards if n != right][0]
			r = run_fidx("push", "-q", files[b"gamma"], owner_conninfo(shards[wrong], pw[wrong]))
			chk.ok("a push to the wrong shard: exit 2, one line, the shard's check named",
			       r.rc == 2 and r.err.count(b"\n") == 1 and b"fidx_on_shard" in r.err,
			       lib.short(r.err))
			r = run_fidx("push", "-q", files[b"kappa"], owner_conninfo(s1, pw["shard_a"]))
			chk.ok("a push to a shard of a host its coordinator does not know: exit 2, one"
			       " line naming fidx-pg-shard where", r.rc == 2 and r.err.count(b"\n") == 1
			       and b"fidx-pg-shard where" in r.err, lib.short(r.err))
			rescans = rescan(chk, co, files, top, {
				"the coordinator as an ingest role": lambda h: ingest,
				"its shard": lambda h: direct(h)[0]})
			bad = push_in_order(coord, single, files, HOSTS, rescans)
			chk.ok("every push into the single database exits 0", not bad, lib.short(bad))
			out = co.psql("SELECT count(*) FROM fidx.scan_delta;", dbname=SINGLE)
			chk.eq("the single database keeps the rescans as changes too", out,
			       str(len(rescans)))
			n = [int(pg.psql("SELECT count(DISTINCT host_id) FROM fidx.scan;", dbname=DB))
			     for pg in (s1, s2)]
			chk.ok("the hosts spread over both shards", sum(n) == len(HOSTS) and min(n) > 0,
			       repr(n))
			# The table of a later version: a row per host through the coordinator, each on
			# its host's shard, ids from the coordinator's identity, the analyst's policy kept.
			co.psql("SET ROLE fidx_owner; INSERT INTO fidx.next_table (host_id, note)"
				" SELECT id, name FROM fidx.host h WHERE EXISTS (SELECT 1 FROM fidx.scan s"
				" WHERE s.host_id = h.id);", dbname=DB)
			m = [int(pg.psql("SELECT count(*) FROM fidx.next_table l WHERE EXISTS (SELECT 1"
					 " FROM fidx.scan s WHERE s.host_id = l.host_id);", dbname=DB))
			     for pg in (s1, s2)]
			ids = co.psql("SELECT count(DISTINCT id) FROM fidx.next_table;", user="reader",
				      password=roles["reader"], dbname=DB)
			chk.ok("a table with host_id of a later schema: sharded as the others, its rows"
			       " on their hosts' shards, read by the analyst", m == n and
			       ids == str(len(HOSTS)), "%r %r %r" % (m, n, ids))

		with chk.guard("same answers"):
			compare(chk, "all shards up", coord, single, top, lst,
				diff_pairs(coord, single, rescans))

		with chk.guard("row-level security"):
			r = run_fidx("scans", "--json", "--db", ingest)
			hosts = [json.loads(line)["host"] for line in r.out.splitlines()]
			chk.ok("the ingest role sees its own host alone through the coordinator",
			       r.rc == 0 and hosts == ["alpha"] * 2, lib.short(r.out + r.err))
			r = run_fidx("scans", "--json", "--db", reader)
			chk.ok("the analyst reads every host through the coordinator",
			       r.rc == 0 and len(r.out.splitlines()) == len(HOSTS) + len(rescans),
			       lib.short(r.out + r.err))
			out = co.psql("SELECT count(*) FROM fidx.file f JOIN fidx.host h ON h.id = f.host_id"
				      " WHERE h.name <> 'alpha'::bytea;", user="ingest_a",
				      password=roles["ingest_a"], dbname=DB)
			chk.eq("the ingest role with psql on the coordinator: no row of another host", out,
			       "0")
			out = co.psql("SELECT count(*) FROM fidx.file_shard_a;", user="ingest_a",
				      password=roles["ingest_a"], dbname=DB, check=False)
			chk.ok("the ingest role with psql on the coordinator: a foreign partition itself"
			       " is refused", out == "", out)

		with chk.guard("prune"):
			# Compared with a reference pruned the same way below, once the shard is back.
			prune(chk, "the coordinator", coord, rescans)
			out = co.psql("SELECT count(*) FROM fidx.scan_delta;", dbname=DB)
			chk.eq("the coordinator: no scan left kept as changes", out, "0")
			r = run_fidx("verify", "--all", "--db", coord)
			chk.ok("every scan kept verifies through the coordinator", r.rc == 0 and
			       r.out.count(b" intact ") == len(HOSTS), lib.short(r.out + r.err))

		with chk.guard("a shard down"):
			# A host of each shard, registered now (no scan of theirs is pushed yet).
			on = {}
			for host in LATER:
				on.setdefault(direct(host)[1], host)
			down_name, up_name = "shard_b", "shard_a"
			down_host, up_host = on[down_name], on[up_name]
			s2.kill()
			for name, argv in questions(top, lst):
				rc, out, err = ask(coord, argv)
				# diff's status for a store that cannot be read is 18 (diffout.h).
				want = 18 if argv[0] == "diff" else 2
				chk.ok("%s down: %s fails, exit %d, one line naming it and its port" %
				       (down_name, name, want), rc == want and err.count(b"\n") == 1 and
				       err.startswith(b"fidx: ") and down_name.encode() in err and
				       b"port %d failed" % s2.port in err,
				       "exit %d: %s" % (rc, lib.short(err)))
			r = run_fidx("push", "-q", files[down_host], coord)
			chk.ok("%s down: a push of its host through the coordinator fails, exit 2, one"
			       " line naming it" % down_name, r.rc == 2 and r.err.count(b"\n") == 1 and
			       down_name.encode() in r.err, lib.short(r.err))
			r = run_fidx("push", "-q", files[up_host], direct(up_host)[0])
			chk.ok("%s down: a host of %s pushes straight to it" % (down_name, up_name),
			       r.rc == 0, lib.short(r.err))
			s2.start()
			uuid = json.loads(run_fidx("scans", "--json", "--db", files[down_host]).out)["uuid"]
			r = run_fidx("scans", "--json", "--db", coord)
			chk.ok("%s back: the push that failed left no scan" % down_name,
			       r.rc == 0 and uuid.encode() not in r.out, lib.short(r.out + r.err))
			r = run_fidx("push", "-q", files[down_host], coord)
			chk.ok("%s back: the failed push, run again, completes" % down_name, r.rc == 0,
			       lib.short(r.err))
			# A new reference: ids of the shards' own sequences sort the scans pushed
			# straight to a shard among the others by those ids, not by time.
			co.psql("CREATE DATABASE single2 OWNER fidx_owner;")
			single2 = owner_conninfo(co, pw["co"], "single2")
			bad = push_in_order(coord, single2, files, HOSTS + [up_host, down_host], rescans)
			chk.ok("every push into a second single database exits 0", not bad,
			       lib.short(bad))
			prune(chk, "the second single database", single2, rescans)
			compare(chk, "%s back, pruned" % down_name, coord, single2, top, lst)

		with chk.guard("live scans"):
			rest = [h for h in LATER if h not in (up_host, down_host)]
			for host, where in ((rest[0], "its shard"), (rest[1], "the coordinator")):
				target = direct(host)[0] if where == "its shard" else coord
				root = top + b"/h%d" % (len(HOSTS) + LATER.index(host))
				r = lib.as_host(host, "scan", "-q", "--db", target, root)
				chk.ok("fidx scan --db of %s: exit 0" % where, r.returncode == 0,
				       lib.short(r.stderr))
				r = run_fidx("verify", "--db", coord, "--host", host)
				chk.ok("a live scan into %s: intact through the coordinator" % where,
				       r.rc == 0 and b" intact " in r.out, lib.short(r.out + r.err))
				r = run_fidx("find", "--db", coord, "--host", host, "-0")
				want = lib.truth(root, lib.Truth(hashes=["sha256"]))
				chk.eq("a live scan into %s: its paths through the coordinator" % where,
				       sorted(r.out.split(b"\0")[:-1]), sorted(want))
	chk.done()


if __name__ == "__main__":
	main()
