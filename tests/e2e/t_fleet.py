# e2e: alone (tests/e2e/run): it restarts the server in the middle of scans.
"""t_fleet.py - many hosts in one PostgreSQL store, and a server that goes away.

Each "host" is fidx run in a UTS namespace of its own with a host name set
(unshare(CLONE_NEWUTS), sethostname()), so that one machine plays a fleet.
Checked:

  * 20 hosts scan at once into a database that has no schema yet: all
    complete (one of them makes the schema, the others wait for it), each
    scan's rows are its tree's, each seal is intact;
  * two hosts with the same root are both shown by default (a root is a
    root of one host), each path as "host:path"; --host narrows to one
    (globs, repeatable) and then paths come bare; `match` names the host
    that holds a known-bad digest; a host name with a newline, a quote,
    $(...) and a byte that is not UTF-8 round-trips and is never run;
  * the fleet's questions answer from every host: a substring `find`
    through the path index each scan has on the server (one per complete
    scan, checked with psql) gives exactly the paths of every host's tree
    that hold it, -i too; `dupes` groups files of several hosts by their
    recorded SHA-256 (hashlib's groups of the trees), each path as
    "host:path", and two hosts' files with one device and inode (one root
    scanned as two hosts) are two files, not hard links of each other;
  * `fidx diff HOST_A:PATH HOST_B:PATH` compares two hosts' trees below PATH;
  * `fidx check` compares a live tree with this host's newest scan of it,
    asks for --host when only other hosts have one, and takes --host;
  * a server restarted in the middle of a scan: the scan fails with one
    line, exit 2, and what it had committed stays; `fidx scan --resume`
    then completes it, sealed and intact, every entry once.
"""

import base64
import hashlib
import json
import os
import sys
import threading
import time

import lib
from lib import Checker, run_fidx, truth, write

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pg"))
import pgserver  # noqa: E402

HOSTS = 20
ROLE = "fleet_ingest"
DB = "fleet"
EVIL_HOST = b"evil\nhost$(touch PWNED)'\xff"


def build_host_tree(root, n, extra=b""):
	"""A small tree of host n: a few files of its own, one file every host has."""
	os.makedirs(root + b"/etc/conf.d")
	write(root + b"/etc/hostname", b"host %d\n" % n)
	write(root + b"/etc/common", b"the same on every host\n")
	for i in range(10):
		write(root + b"/etc/conf.d/%02d.conf" % i, b"n=%d i=%d\n" % (n, i))
	if extra:
		write(root + b"/etc/extra", extra)


def check_many_at_once(chk, pg, top, target):
	"""HOSTS scans at once into a database without a schema."""
	roots = []
	for n in range(HOSTS):
		root = top + b"/h%02d" % n
		build_host_tree(root, n)
		roots.append(root)
	results = [None] * HOSTS

	def one(n):
		results[n] = lib.as_host(b"host%02d" % n, "scan", "-q", "--db", target, roots[n])

	threads = [threading.Thread(target=one, args=(n,)) for n in range(HOSTS)]
	for t in threads:
		t.start()
	for t in threads:
		t.join()
	failed = [(n, r.returncode, r.stderr) for n, r in enumerate(results) if r.returncode]
	chk.ok("%d hosts at once: every scan exits 0" % HOSTS, not failed, lib.short(failed[:3]))
	res = run_fidx("scans", "--json", "--db", target)
	scans = [json.loads(line) for line in res.out.splitlines()]
	hosts = sorted(s["host"] for s in scans if s["status"] == "complete")
	chk.eq("%d hosts at once: a complete scan of each" % HOSTS, hosts,
	       ["host%02d" % n for n in range(HOSTS)])
	res = run_fidx("verify", "--all", "--db", target)
	chk.ok("%d hosts at once: every seal intact" % HOSTS,
	       res.rc == 0 and res.out.count(b" intact ") == HOSTS, lib.short(res.out + res.err))
	bad = []
	for n in (0, HOSTS // 2, HOSTS - 1):
		want = truth(roots[n], lib.Truth(hashes=["sha256"]))
		got = run_fidx("find", "--host", "host%02d" % n, "--db", target, "-0")
		paths = set(got.out.split(b"\0")[:-1])
		if paths != set(want):
			bad.append((n, len(paths), len(want)))
	chk.ok("%d hosts at once: a host's paths are its tree's" % HOSTS, not bad, repr(bad))


def json_bytes(obj, key):
	"""The bytes of a name fidx wrote in JSON as key (key_base64 when not UTF-8)."""
	if key + "_base64" in obj:
		return base64.b64decode(obj[key + "_base64"])
	return obj[key].encode()


def check_fleet_questions(chk, pg, top, target):
	"""find and dupes across the hosts of check_many_at_once (top/hNN, host hNN)."""
	roots = {b"host%02d" % n: top + b"/h%02d" % n for n in range(HOSTS)}
	n = pg.psql("SELECT count(*) FROM fidx.path_index i JOIN fidx.scan s ON s.id = i.scan_id"
		    " WHERE s.status = 'complete'::bytea;", user=ROLE, dbname=DB)
	chk.eq("every complete scan has its path index on the server", n.strip(), str(HOSTS))
	for pattern, icase in ((b"conf.d/0", False), (b"COMMON", True), (b"/etc/host", False)):
		want = set()
		for host, root in roots.items():
			for p in truth(root, lib.Truth(hashes=["sha256"])):
				hay, needle = (p.lower(), pattern.lower()) if icase else (p, pattern)
				if needle in hay:
					want.add(host + b":" + p)
		args = ["find", "--db", target, "-0"] + (["-i"] if icase else []) + [pattern]
		got = set(run_fidx(*args).out.split(b"\0")[:-1])
		chk.ok("find %s%s across %d hosts: every host's matching paths, host:path" %
		       ("-i " if icase else "", pattern.decode(), HOSTS),
		       got == want and len(want) >= HOSTS,
		       "%d got, %d wanted, e.g. %r" % (len(got), len(want), sorted(got ^ want)[:3]))
	# dupes: groups of equal content among every host's files, by hashlib.
	by_digest = {}
	for host, root in roots.items():
		for dirpath, _, files in os.walk(root):
			for f in files:
				p = os.path.join(dirpath, f)
				with open(p, "rb") as fh:
					data = fh.read()
				if data:
					by_digest.setdefault(hashlib.sha256(data).hexdigest(), set()).add(
						host + b":" + p)
	want = sorted(sorted(g) for g in by_digest.values() if len(g) >= 2)
	res = run_fidx("dupes", "--db", target, "--json", "--host", "host*")
	got = []
	for line in res.out.splitlines():
		g = json.loads(line)
		if "files" in g:
			got.append(sorted(json_bytes(f, "host") + b":" + json_bytes(f, "path")
					  for f in g["files"]))
	chk.ok("dupes across %d hosts: hashlib's groups, each file as its host's" % HOSTS,
	       res.rc == 0 and sorted(got) == want and want,
	       "rc %d, %d groups got, %d wanted: %s" % (res.rc, len(got), len(want),
							 lib.short(res.out + res.err)))
	res = run_fidx("dupes", "--db", target, "--host", "host0[01]")
	chk.ok("dupes --host: text lines host:path", res.rc == 0 and
	       b"host00:" + roots[b"host00"] + b"/etc/common\n" in res.out and
	       b"host01:" + roots[b"host01"] + b"/etc/common\n" in res.out,
	       lib.short(res.out + res.err))


def check_same_root(chk, pg, top, target):
	"""Two hosts, one root: both shown, each path with its host."""
	root = top + b"/same"
	build_host_tree(root, 100, extra=b"alpha's own\n")
	r1 = lib.as_host(b"alpha", "scan", "-q", "--db", target, root)
	os.unlink(root + b"/etc/extra")
	write(root + b"/etc/bad", b"known bad content\n")
	r2 = lib.as_host(EVIL_HOST, "scan", "-q", "--db", target, root)
	chk.ok("same root: both hosts scan it", r1.returncode == 0 and r2.returncode == 0,
	       lib.short(r1.stderr + r2.stderr))
	res = run_fidx("find", "--db", target, "-0", "--host", "alpha", "--host", "evil*")
	got = set(res.out.split(b"\0")[:-1])
	chk.ok("same root: alpha's file shown as alpha:path",
	       b"alpha:" + root + b"/etc/extra" in got, lib.short(sorted(got)[:4]))
	chk.ok("same root: the other host's file shown as host:path",
	       EVIL_HOST + b":" + root + b"/etc/bad" in got, lib.short(sorted(got)[:4]))
	res = run_fidx("find", "--db", target, "-0", "--host", "alpha")
	got = set(res.out.split(b"\0")[:-1])
	chk.ok("--host alpha: alpha's paths alone, bare", root + b"/etc/extra" in got and
	       root + b"/etc/bad" not in got and all(p.startswith(root) for p in got),
	       lib.short(sorted(got)[:4]))
	# One root scanned as two hosts: one device and inode, two hosts' files.
	res = run_fidx("dupes", "--db", target, "--json", "--host", "alpha", "--host", "evil*")
	groups = [json.loads(line) for line in res.out.splitlines()]
	common = [g for g in groups if any(f["path"].endswith("/etc/common")
					   for f in g.get("files", []))]
	chk.ok("same root on two hosts: its files are duplicates across the hosts, not hard"
	       " links", res.rc == 0 and len(common) == 1 and len(common[0]["files"]) == 2 and
	       {json_bytes(f, "host") for f in common[0]["files"]} == {b"alpha", EVIL_HOST},
	       lib.short(res.out + res.err))
	res = run_fidx("find", "--db", target, "--host", "nobody-here")
	chk.ok("--host that matches no host: exit 2, one line", res.rc == 2 and
	       len(res.err_lines()) == 1 and b"--host" in res.err, lib.short(res.err))
	res = run_fidx("scans", "--json", "--db", target, "--host", "evil*")
	rows = [json.loads(line) for line in res.out.splitlines()]
	# fidx's JSON gives a byte that is not UTF-8 as \u00XX (docs/SCHEMA.md, "Paths and names").
	chk.ok("a hostile host name round-trips (scans --json)",
	       len(rows) == 1 and rows[0]["host"] == EVIL_HOST.decode("latin-1"), repr(rows)[:300])
	chk.ok("a hostile host name is never run", not os.path.exists(os.path.join(
		os.getcwd(), "PWNED")) and not os.path.exists(top + b"/PWNED"), "PWNED exists")
	r = lib.as_host(b"stranger", "check", "--db", target, root)
	chk.ok("check on a host with no scan of the root, several hosts having one: exit 17,"
	       " one line asking for --host", r.returncode == 17 and r.stderr.count(b"\n") == 1 and
	       b"--host" in r.stderr, lib.short(r.stderr))
	r = lib.as_host(b"alpha", "check", "--db", target, root)
	chk.ok("check on alpha: against alpha's own scan: exit 7 (added, removed, changed),"
	       " a file added, one removed",
	       r.returncode == 7 and b": 1 added, 1 removed," in r.stdout + r.stderr,
	       "rc %d: %s" % (r.returncode, lib.short(r.stdout + r.stderr)))
	r = lib.as_host(b"stranger", "check", "--db", target, "--host", "evil*", root)
	chk.ok("check --host: against that host's scan (nothing changed since)",
	       r.returncode == 0, lib.short(r.stdout + r.stderr))
	# host00 and host01 scanned trees of their own: their /etc differ in hostname and in
	# the ten files of conf.d, and hold the common file alike.
	a, b = top + b"/h00", top + b"/h01"
	r = run_fidx("diff", "--db", target, "--ignore", "mtime,ctime,inode,btime",
		     b"host00:" + a + b"/etc", b"host01:" + b + b"/etc")
	lines = r.out.splitlines()
	chk.ok("diff HOST:PATH HOST:PATH: the trees of two hosts compared below PATH (what"
	       " differs in content: hostname and the ten conf files)",
	       r.rc == 4 and len(lines) == 11 and all(l.startswith(b"changed ") and b"H" in l
						       for l in lines) and
	       not any(l.endswith(b"/common") for l in lines), lib.short(r.out + r.err))
	r = run_fidx("diff", "--db", target, b"host00:" + a + b"/etc/conf.d",
		     b"host00:" + a + b"/etc/conf.d")
	chk.ok("diff HOST:PATH of one tree with itself: identical, exit 0",
	       r.rc == 0 and not r.out, lib.short(r.out + r.err))
	r = run_fidx("diff", "--db", target, "nohost:/etc", "host00:/etc")
	chk.ok("diff HOST:PATH of a host with no such scan: exit 17, one line",
	       r.rc == 17 and len(r.err_lines()) == 1 and b"nohost" in r.err, lib.short(r.err))
	lst = top + b"/bad.sha256"
	write(lst, hashlib.sha256(b"known bad content\n").hexdigest().encode() + b"  bad\n")
	res = run_fidx("match", "--db", target, "-0", lst, "--host", "alpha", "--host", "evil*")
	chk.eq("match: the host holding the known-bad digest, with its path",
	       res.out.split(b"\0")[:-1], [EVIL_HOST + b":" + root + b"/etc/bad"])


def check_restart(chk, pg, top, target):
	"""A server restarted in the middle of a scan; the scan resumed."""
	root = top + b"/big"
	os.makedirs(root)
	for d in range(25):
		os.mkdir(root + b"/d%02d" % d)
		for i in range(1000):
			write(root + b"/d%02d/f%04d" % (d, i), b"%d" % i)
	write(root + b"/fidx-race-hold", b"held")
	release = top + b"/release"
	env = {"LD_PRELOAD": lib.SHIM, "FIDX_RACE_RELEASE": os.fsdecode(release),
	       "ASAN_OPTIONS": ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"),
						      "verify_asan_link_order=0"]))}
	box = {}
	t = threading.Thread(target=lambda: box.update(r=lib.as_host(
		b"gamma", "scan", "-q", "-j", "1", "--db", target, root, env=env, timeout=300)))
	t.start()
	# Wait until the scan row is there and a batch is committed, then restart.
	deadline = time.monotonic() + 60
	while time.monotonic() < deadline:
		n = pg.psql("SELECT count(*) FROM fidx.file f JOIN fidx.scan s ON s.id = f.scan_id"
			    " WHERE s.host = 'gamma'::bytea;", user=ROLE, dbname=DB, check=False)
		if n.strip().isdigit() and int(n) > 0:
			break
		time.sleep(0.2)
	pg.restart()
	write(release, b"")
	t.join()
	r = box.get("r")
	err = r.stderr if r else b""
	chk.ok("server restarted mid-scan: the scan fails, exit 2, one line",
	       r is not None and r.returncode == 2 and err.count(b"\n") == 1 and
	       b"database" in err, lib.short(err))
	os.unlink(release)
	res = lib.as_host(b"gamma", "scan", "-q", "--resume", "--db", target, root, timeout=300)
	chk.ok("--resume after the restart: exit 0", res.returncode == 0,
	       lib.short(res.stdout + res.stderr))
	out = pg.psql("SELECT s.id, encode(s.status, 'escape') FROM fidx.scan s"
		      " WHERE s.host = 'gamma'::bytea;",
		      user=ROLE, dbname=DB)
	chk.ok("--resume: one scan of gamma, complete", len(out.splitlines()) == 1 and
	       out.endswith("|complete"), out)
	scan_id = out.split("|")[0]
	res = run_fidx("verify", "--scan", scan_id, "--db", target)
	chk.ok("--resume: its seal intact", res.rc == 0 and b" intact " in res.out,
	       lib.short(res.out + res.err))
	res = run_fidx("find", "--db", target, "--scan", scan_id, "-0")
	paths = res.out.split(b"\0")[:-1]
	want = truth(root, lib.Truth(hashes=["sha256"]))
	chk.ok("--resume: every entry once", sorted(paths) == sorted(want),
	       "%d rows, %d distinct, %d entries" % (len(paths), len(set(paths)), len(want)))


def main():
	chk = Checker()
	if not lib.SHIM or not os.path.exists(lib.SHIM):
		chk.ok("race shim built", False, "FIDX_SHIM=%r does not exist" % lib.SHIM)
		chk.done()
	with lib.TempDir() as td, pgserver.PgServer() as pg:
		top = os.fsencode(td.path)
		os.chmod(td.path, 0o755)
		pg.create_role(ROLE, "fleet-" + os.urandom(6).hex())
		pg.create_database(DB, ROLE)
		target = pg.conninfo(user=ROLE, dbname=DB)
		with chk.guard("many hosts at once"):
			check_many_at_once(chk, pg, top, target)
		with chk.guard("fleet questions"):
			check_fleet_questions(chk, pg, top, target)
		with chk.guard("same root on two hosts"):
			check_same_root(chk, pg, top, target)
		with chk.guard("server restarted"):
			check_restart(chk, pg, top, target)
	chk.done()


if __name__ == "__main__":
	main()
