#!/usr/bin/python3
"""t_pgserver.py - the self-test of the throwaway PostgreSQL server (tests/pg/).

    /usr/bin/python3 tests/pg/t_pgserver.py

Starts a PgServer and checks, with the psql of its bin directory:

  * the postmaster runs as nobody when we are root (else as us), per /proc;
  * SCRAM over the unix socket: the right password in, none or a wrong one out;
  * TCP: TLS with verify-full against the folder's CA (to 127.0.0.1 through
    conninfo(), through PGSSLMODE/PGSSLROOTCERT, and by the name localhost)
    is in and pg_stat_ssl says so; a wrong password, TCP without TLS, a host
    name the certificate does not name and a CA that did not sign it are out;
  * quoting: SQL literals round-trip hostile strings through the server,
    conninfo and URI strings come out as libpq wants them, and a role and a
    database with quotes, backslashes and spaces in their names and password
    work through create_role(), create_database(), conninfo(), uri(), psql();
  * restart(); kill() then start() (crash recovery); stop(), and kill() then
    stop(), leaving no process, folder or shared memory segment behind;
    park() (no process left, the folder kept, a later stop() a no-op), then
    reopen() of what it returned, through JSON (the same port, the data),
    and reopen() of a folder without a cluster (an error, nothing removed).

Meanwhile two runs of with-server, started once the first server is up so
that theirs come up alongside the checks, have their command wait for a line;
then it checks that the environment they export works (and that pg_trgm can
be created in fidx_test), that the exit status is the command's (3; 143 when a
SIGTERM to with-server, passed on, kills the command) and that nothing is
left behind.

Prints "ok - NAME" or "not ok - NAME: WHY" per check (tests/e2e/lib.py's
Checker) and "# ..." lines with timings; exits 0 iff every check passed.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "e2e")]
import pgserver  # noqa: E402
from lib import Checker  # noqa: E402
from pgserver import make_conninfo, make_uri, quote_literal  # noqa: E402

WITH_SERVER = os.path.join(HERE, "with-server")
PSQL = os.path.join(pgserver.bin_dir(), "psql")
TIMEOUT = 60  # seconds for anything that should take a few

HOSTILE_ROLE = "fidx 'r\\o\"le' :x"
HOSTILE_PASSWORD = "p w'\\\" :pw=x ü"
HOSTILE_DB = "db 'x\\y\" é"
LITERALS = ["", "a'b", "back\\slash", "\\'", "', E'x", ":pw :'pw' :\"pw\"", "$$dollar$$",
	    "ünï ☃", "line\nbreak\ttab", "--comment", "/* c */;"]

# the command run by with-server: reports its folder and postmaster, uses the
# environment, waits for a line on stdin, then runs $END
CHILD = r"""
echo "$FIDX_TEST_PG_CA"
head -n1 "${FIDX_TEST_PG_CA%/*}/data/postmaster.pid"
"$PSQL" -XAtqw -d "$FIDX_TEST_PG" -c 'SELECT current_user, current_database()'
"$PSQL" -XAtqw -d "$FIDX_TEST_PG_URI" -c 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()'
"$PSQL" -XAtqw -d "$FIDX_TEST_PG_ADMIN dbname=fidx_test" -c 'CREATE EXTENSION pg_trgm' \
	-c "SELECT current_user, current_database(), similarity('fidx', 'fidx!') > 0.3"
echo ready
read -r line
eval "$END"
"""
CHILD_SAYS = ["fidx_test|fidx_test", "t", "fidx_admin|fidx_test|t"]


# --------------------------------------------------------------- helpers ----

def connect(conninfo, password=None, env=None):
	"""Asks psql on conninfo for the user and database; returns (status, stdout, stderr)."""
	full = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
	full.update(PGCLIENTENCODING="UTF8", **(env or {}))
	if password is not None:
		full["PGPASSWORD"] = password
	r = subprocess.run([PSQL, "-X", "-qAtw", "-d", conninfo,
			    "-c", "SELECT current_user, current_database()"],
			   capture_output=True, env=full, encoding="utf-8", errors="replace",
			   timeout=TIMEOUT)
	return r.returncode, r.stdout.strip(), r.stderr.strip()


def connected(c, name, result, want):
	"""Checks that a connect() result is a success printing want."""
	status, out, err = result
	return c.ok(name, status == 0 and out == want,
		    "status %d, stdout %r, stderr %r" % (status, out, err))


def refused(c, name, result, why):
	"""Checks that a connect() result is a failure to connect whose message contains why."""
	status, _out, err = result
	return c.ok(name, status == 2 and why in err, "status %d, stderr %r" % (status, err))


def uids(pid):
	"""Returns the real, effective, saved and filesystem uids of process pid, from /proc."""
	with open("/proc/%d/status" % pid) as f:
		return next([int(u) for u in line.split()[1:]] for line in f
			    if line.startswith("Uid:"))


def leftovers(procs, folder):
	"""Returns what of a server is still there: which of procs ({pid: starttime}) run, folder."""
	left = ["pid %d" % p for p, t in procs.items() if pgserver.running(p, t)]
	return left + ([folder] if os.path.exists(folder) else [])


def shared_memory():
	"""Returns the ids of the SysV shared memory segments (ipcs -m), as strings."""
	out = subprocess.run(["ipcs", "-m"], capture_output=True, text=True, check=True).stdout
	return {line.split()[1] for line in out.splitlines() if line.startswith("0x")}


# ---------------------------------------------------------------- checks ----

def check_server(c, pg):
	"""The server user, SCRAM on the unix socket, the pg_hba.conf rules."""
	want_uid = pgserver.NOBODY if os.geteuid() == 0 else os.geteuid()
	c.eq("postmaster runs as uid %d" % want_uid, uids(pg.pid), [want_uid] * 4)
	c.eq("unix socket: SCRAM with the password", pg.psql("SELECT current_user"), pgserver.ADMIN)
	c.eq("passwords stored as SCRAM; pg_hba: socket, TLS, no TCP without TLS",
	     pg.psql("SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid"
		     " WHERE rolname = current_user;"
		     "SELECT string_agg(type || ' ' || auth_method, ', ' ORDER BY line_number)"
		     " FROM pg_hba_file_rules"),
	     "t\nlocal scram-sha-256, hostssl scram-sha-256, hostnossl reject")
	refused(c, "unix socket: no password refused", connect(pg.conninfo(password="")),
		"no password supplied")
	refused(c, "unix socket: wrong password refused", connect(pg.conninfo(password="wrong")),
		"password authentication failed")


def check_tls(c, pg):
	"""TLS on TCP: verify-full three ways; a wrong password, no TLS, name or CA refused."""
	tcp = dict(host=pg.host, port=pg.port, user=pgserver.ADMIN, dbname="postgres")
	verify = dict(sslmode="verify-full", sslrootcert=pg.ca_file)
	admin = "fidx_admin|postgres"
	c.eq("tcp: TLS with verify-full through conninfo()",
	     pg.psql("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", tcp=True), "t")
	connected(c, "tcp: verify-full through PGSSLMODE and PGSSLROOTCERT",
		  connect(make_conninfo(tcp), pg.admin_password,
			  dict(PGSSLMODE="verify-full", PGSSLROOTCERT=pg.ca_file)),
		  admin)
	connected(c, "tcp: verify-full by the name localhost",
		  connect(make_conninfo(dict(tcp, host="localhost", hostaddr=pg.host, **verify)),
			  pg.admin_password),
		  admin)
	refused(c, "tcp: wrong password refused", connect(pg.conninfo(password="wrong", tcp=True)),
		"password authentication failed")
	refused(c, "tcp: no TLS (sslmode=disable) refused",
		connect(make_conninfo(dict(tcp, sslmode="disable")), pg.admin_password),
		"pg_hba.conf rejects connection")
	refused(c, "tcp: verify-full with a name the certificate lacks refused",
		connect(make_conninfo(dict(tcp, host="wrong.invalid", hostaddr=pg.host, **verify)),
			pg.admin_password),
		'does not match host name "wrong.invalid"')
	with tempfile.TemporaryDirectory(prefix="fidx-pg-ca-") as other:
		other_ca = pgserver.make_certs(other)[0]
		refused(c, "tcp: verify-full against another CA refused",
			connect(make_conninfo(dict(tcp, sslmode="verify-full", sslrootcert=other_ca)),
				pg.admin_password),
			"certificate verify failed")


def check_quoting(c, pg):
	"""The quoting helpers, alone and through create_*(), conninfo(), uri(), psql()."""
	c.eq("make_conninfo quotes spaces, quotes, backslashes, empty values",
	     make_conninfo(dict(a="x y", b="it's", c="back\\", d="", e="plain=1", f=None)),
	     "a='x y' b='it\\'s' c='back\\\\' d='' e=plain=1")
	c.eq("make_uri percent-encodes; a socket directory goes in the query",
	     make_uri(dict(host="/tmp/a b", port=5, user="u@x", password="p:w/", dbname="d?b")),
	     "postgresql://u%40x:p%3Aw%2F@/d%3Fb?host=%2Ftmp%2Fa%20b&port=5")
	pairs = ",".join("(%s, '%s')" % (quote_literal(s), s.encode().hex()) for s in LITERALS)
	c.eq("quote_literal round-trips %d hostile strings" % len(LITERALS),
	     pg.psql("SELECT count(*) FROM (VALUES %s) v(lit, hex) "
		     "WHERE lit = convert_from(decode(hex, 'hex'), 'UTF8')" % pairs),
	     str(len(LITERALS)))
	pg.create_role(HOSTILE_ROLE, HOSTILE_PASSWORD)
	pg.create_database(HOSTILE_DB, HOSTILE_ROLE)
	want = "%s|%s" % (HOSTILE_ROLE, HOSTILE_DB)
	connected(c, "hostile role and database: conninfo(), unix socket",
		  connect(pg.conninfo(HOSTILE_ROLE, dbname=HOSTILE_DB)), want)
	connected(c, "hostile role and database: uri(), unix socket",
		  connect(pg.uri(HOSTILE_ROLE, dbname=HOSTILE_DB)), want)
	connected(c, "hostile role and database: uri(), TCP with verify-full",
		  connect(pg.uri(HOSTILE_ROLE, dbname=HOSTILE_DB, tcp=True)), want)
	c.eq("hostile role and database: psql(), TCP",
	     pg.psql("SELECT current_user, current_database()",
		     user=HOSTILE_ROLE, dbname=HOSTILE_DB, tcp=True),
	     want)


def check_life_cycle(c, pg):
	"""restart(), kill() then start(), stop(); then kill() and stop() on a server of its own."""
	port = pg.port
	t0 = time.monotonic()
	pg.restart()
	print("# restart: %.2f s" % (time.monotonic() - t0), flush=True)
	c.eq("restart: same port, answers", (pg.port, pg.psql("SELECT 1")), (port, "1"))
	postmaster, procs = pg.pid, pgserver.family(pg.pid)
	pg.kill()
	c.eq("kill: the postmaster is gone, connections fail",
	     (pgserver.running(postmaster), connect(pg.conninfo())[0]), (False, 2))
	t0 = time.monotonic()
	pg.start()
	print("# start after kill (crash recovery): %.2f s" % (time.monotonic() - t0), flush=True)
	c.eq("start after kill: answers, the orphans are gone",
	     (pg.psql("SELECT 1"), leftovers(procs, "/nonexistent")), ("1", []))
	procs, folder = pgserver.family(pg.pid), pg.folder
	t0 = time.monotonic()
	pg.stop()
	print("# stop: %.2f s" % (time.monotonic() - t0), flush=True)
	c.eq("stop: no process or folder left", leftovers(procs, folder), [])
	with pgserver.PgServer() as other:
		procs, folder = pgserver.family(other.pid), other.folder
		with open(os.path.join(other.data, "postmaster.pid")) as f:
			shmid = f.read().split("\n")[6].split()[1]  # line 7: "key id"
		other.kill()
	c.eq("kill then stop: no process, folder or shared memory left",
	     (leftovers(procs, folder), shmid in shared_memory()), ([], False))
	with pgserver.PgServer() as other:
		other.psql("CREATE TABLE kept AS SELECT 'here'::text AS v;")
		procs, port = pgserver.family(other.pid), other.port
		parked = json.loads(json.dumps(other.park()))
	c.eq("park: no process left, the folder kept after the with block's stop()",
	     (leftovers(procs, "/nonexistent"), os.path.isdir(parked["folder"])), ([], True))
	again = pgserver.PgServer.reopen(parked)
	try:
		c.eq("reopen: the same port, the data kept",
		     (again.port, again.psql("SELECT v FROM kept")), (port, "here"))
	finally:
		procs, folder = pgserver.family(again.pid), again.folder
		again.stop()
	c.eq("reopen then stop: no process or folder left", leftovers(procs, folder), [])
	with tempfile.TemporaryDirectory() as empty:
		try:
			pgserver.PgServer.reopen(dict(parked, folder=empty))
			why = "it ran"
		except pgserver.PgError as e:
			why = str(e)
		c.ok("reopen of a folder without a cluster: an error, the folder kept",
		     "no cluster" in why and os.path.isdir(empty), why)


class WithServerRun:
	"""One run of with-server on CHILD, started at once; check() ends and checks it."""

	def __init__(self, name, end, status, sigterm=False):
		"""Starts with-server; its command will end with the shell code end; status is the
		exit status wanted; sigterm: SIGTERM with-server rather than give the command its line."""
		self.name, self.status, self.sigterm = name, status, sigterm
		self.p = subprocess.Popen([WITH_SERVER, "sh", "-c", CHILD], stdin=subprocess.PIPE,
					  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
					  env=dict(os.environ, END=end, PSQL=PSQL))

	def check(self, c):
		"""Waits for the command to be ready, ends it, checks its output, status, leftovers."""
		lines = []
		for line in self.p.stdout:
			if line == "ready\n":
				break
			lines.append(line.rstrip("\n"))
		ca_file, postmaster = lines[:2]  # then CHILD_SAYS
		procs = pgserver.family(int(postmaster))
		if self.sigterm:
			self.p.send_signal(signal.SIGTERM)
		else:
			self.p.stdin.write("\n")
			self.p.stdin.flush()
		try:
			self.p.wait(TIMEOUT)
		except subprocess.TimeoutExpired:
			self.p.kill()
		self.p.wait()
		self.p.stdin.close()  # only now: an end of file would end the command too
		err = self.p.stderr.read()
		c.ok("with-server %s: the environment works" % self.name, lines[2:] == CHILD_SAYS,
		     "stdout %r, stderr %r" % (lines, err))
		c.eq("with-server %s: exit status" % self.name, self.p.returncode, self.status)
		c.eq("with-server %s: no process or folder left" % self.name,
		     (bool(procs), leftovers(procs, os.path.dirname(ca_file))), (True, []))


def main():
	"""Runs every check; exits 0 iff all passed."""
	c = Checker()
	t0 = time.monotonic()
	with pgserver.PgServer() as pg:
		print("# start (initdb, pg_ctl start): %.2f s" % (time.monotonic() - t0),
		      flush=True)
		runs = [WithServerRun("exit 3", "exit 3", 3),
			WithServerRun("SIGTERM", "exit 0", 128 + signal.SIGTERM, sigterm=True)]
		for check in (check_server, check_tls, check_quoting, check_life_cycle):
			with c.guard(check.__name__):
				check(c, pg)
	for run in runs:
		with c.guard("with-server %s" % run.name):
			run.check(c)
	c.done()


if __name__ == "__main__":
	main()
