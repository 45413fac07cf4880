"""pgserver.py - a throwaway PostgreSQL server for the tests of fidx's PostgreSQL store.

Design.  PgServer runs the server binaries of the newest
/usr/lib/postgresql/*/bin on a cluster of its own in a fresh temporary folder;
the system's clusters (Debian's "main") are never used:

    FOLDER/          0755, owned by the server user; also the unix socket directory
      ca.crt         the test CA (0644): clients' sslrootcert
      server.crt     the server's certificate for localhost and 127.0.0.1, and
      server.key     its key (0600, owned by the server user)
      data/          the cluster: initdb --no-sync, UTF8, C locale
      server.log     the server's log (pg_ctl -l)

  * initdb and postgres refuse to run as root, so a root caller runs them as
    nobody (65534, no supplementary groups) with HOME=FOLDER (so nobody must
    be able to reach $TMPDIR, as /tmp); anyone else runs them as itself.
  * Authentication is SCRAM everywhere: the superuser fidx_admin gets a random
    password at initdb, roles get theirs from create_role().  pg_hba.conf
    accepts the unix socket and TLS on 127.0.0.1 and rejects TCP without TLS,
    so every TCP connection exercises TLS, meant for sslmode=verify-full with
    the folder's own CA (made with the openssl CLI: EC P-256, valid two days).
  * The port is found by binding port 0; another one is tried when someone
    takes it before the postmaster binds it.  restart() keeps the port.
  * Durability is off (fsync, synchronous_commit, full_page_writes; minimal
    WAL) and shared memory small: a crash of the machine may lose the
    cluster, which dies with the test anyway.
  * Cleanup: stop() stops the server with pg_ctl -m immediate, SIGKILLs
    whatever is left (the postmaster and its children, found through /proc:
    every backend is a session of its own, so process groups do not help),
    removes the SysV shared memory segment of a killed postmaster (ipcrm)
    and the folder.  It runs on __exit__, when start() fails, at exit
    (atexit), and on SIGTERM or SIGHUP when the caller left those at their
    default action (the process then dies of the signal as it would have).
    SIGINT needs nothing: KeyboardInterrupt unwinds through __exit__ and
    atexit.  Only a SIGKILL of the test leaves a server behind.
  * kill() is a crash: SIGKILL of the postmaster alone.  start() then reaps
    its orphans and removes its stale lock files (postgres would take them
    for a live postmaster's while an init that reaps late leaves it a zombie)
    and the server recovers; stop() reaps them too.
  * park() is the one way to keep a cluster: a clean stop (pg_ctl -m fast)
    that leaves the folder, and returns what PgServer.reopen() needs to run
    it again on the same port (a benchmark resumed by a later process); the
    certificates stay valid two days from the cluster's making.
  * Clients: conninfo() and uri() quote or percent-encode every value; psql()
    runs the psql of the same bin directory (not /usr/bin/psql, Debian's
    pg_wrapper, a Perl script that costs ~60 ms a call) with the SQL on
    stdin, the password in PGPASSWORD, never on the command line, the
    caller's PG* variables removed, and -w: it never prompts.  SQL text is
    built with quote_ident() and quote_literal().

Nothing is printed on success; failures raise PgError, with the server log's
tail when the server may know why.
"""

import atexit
import contextlib
import glob
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse

ADMIN = "fidx_admin"
NOBODY = 65534
START_TIMEOUT = 30      # seconds, pg_ctl start -t
STOP_TIMEOUT = 10       # seconds, pg_ctl stop -t, and any wait for processes to die
PORT_ATTEMPTS = 5
LOG_TAIL_LINES = 20

CONFIG = """
# fidx tests: a throwaway server (tests/pg/pgserver.py)
listen_addresses = '127.0.0.1'
unix_socket_directories = {folder}
ssl = on
ssl_cert_file = {cert}
ssl_key_file = {key}
password_encryption = 'scram-sha-256'
fsync = off
synchronous_commit = off
full_page_writes = off
wal_level = minimal
max_wal_senders = 0
shared_buffers = 16MB
huge_pages = off
max_connections = 50
"""

HBA = """\
# fidx tests: SCRAM on the unix socket and over TLS on loopback; TCP without TLS is refused
local     all all              scram-sha-256
hostssl   all all 127.0.0.1/32 scram-sha-256
hostnossl all all all          reject
"""

OPENSSL_CONFIG = """\
[req]
distinguished_name = dn
prompt = no
[dn]
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


class PgError(Exception):
	"""A failure of the throwaway server or of a client command run against it."""


# ------------------------------------------------------------- quoting ----

def _no_nul(s):
	"""Returns s, a str; raises ValueError if it holds NUL (PostgreSQL text cannot)."""
	if "\0" in s:
		raise ValueError("NUL in SQL text: %r" % s)
	return s


def quote_ident(name):
	"""Returns name as an SQL identifier: in double quotes, inner ones doubled."""
	return '"' + _no_nul(name).replace('"', '""') + '"'


def quote_literal(s):
	"""Returns s as an SQL string literal, E'...' with backslashes and quotes doubled."""
	return "E'" + _no_nul(s).replace("\\", "\\\\").replace("'", "''") + "'"


def conninfo_value(v):
	"""Returns v as a libpq conninfo value: bare if plain, else '...' with \\ and ' escaped."""
	v = str(v)
	if v and not re.search(r"[\s'\\]", v):
		return v
	return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


def make_conninfo(params):
	"""Returns the libpq key=value string of params (a dict; None values left out)."""
	return " ".join("%s=%s" % (k, conninfo_value(v))
			for k, v in params.items() if v is not None)


def _pct(v):
	"""Returns v percent-encoded for any part of a URI (all but [A-Za-z0-9_.~-])."""
	return urllib.parse.quote(str(v), safe="")


def make_uri(params):
	"""Returns params (conninfo keywords, None values left out) as a postgresql:// URI.

	user, password, host, port and dbname go in the URI's own parts, except a
	host that is a socket directory: it goes, with the port, in the query."""
	p = {k: v for k, v in params.items() if v is not None}
	auth = ""
	if "user" in p:
		auth = _pct(p.pop("user"))
		if "password" in p:
			auth += ":" + _pct(p.pop("password"))
		auth += "@"
	netloc = ""
	if not str(p.get("host", "")).startswith("/"):
		netloc = _pct(p.pop("host", ""))
		if "port" in p:
			netloc += ":%s" % p.pop("port")
	path = "/" + _pct(p.pop("dbname")) if "dbname" in p else ""
	query = "&".join("%s=%s" % (_pct(k), _pct(v)) for k, v in p.items())
	return "postgresql://" + auth + netloc + path + ("?" + query if query else "")


def _conf_string(s):
	"""Returns s as a postgresql.conf string value: in '...' with ' doubled."""
	return "'" + s.replace("'", "''") + "'"


# ------------------------------------------------------------ processes ----

def bin_dir():
	"""Returns the newest /usr/lib/postgresql/VERSION/bin that holds initdb."""
	dirs = [d for d in glob.glob("/usr/lib/postgresql/*/bin")
		if os.access(os.path.join(d, "initdb"), os.X_OK)]
	if not dirs:
		raise PgError("no PostgreSQL server in /usr/lib/postgresql/*/bin"
			      " (run scripts/install-deps)")
	return max(dirs, key=lambda d: [int(n) for n in re.findall(r"\d+", d)])


def _stat(pid):
	"""Returns (state, ppid, starttime) of process pid from /proc, or None if there is none."""
	try:
		with open("/proc/%d/stat" % pid, "rb") as f:
			st = f.read()
	except OSError:
		return None
	fields = st[st.rindex(b")") + 2:].split()  # after "pid (comm) ", fields 3...
	return fields[0], int(fields[1]), int(fields[19])


def running(pid, starttime=None):
	"""Returns whether process pid exists, is no zombie and (if given) started at starttime."""
	st = _stat(pid)
	return st is not None and st[0] != b"Z" and starttime in (None, st[2])


def family(pid):
	"""Returns {pid: starttime} of process pid and its children (a postmaster's backends)."""
	procs = {}
	for ent in os.listdir("/proc"):
		st = _stat(int(ent)) if ent.isdigit() else None
		if st is not None and (int(ent) == pid or st[1] == pid):
			procs[int(ent)] = st[2]
	return procs


def _lock_pid(path):
	"""Returns the pid on the first line of a postgres lock file, or None (none, or empty)."""
	try:
		with open(path) as f:
			return int(f.readline())
	except (OSError, ValueError):
		return None


def free_port():
	"""Returns a TCP port of 127.0.0.1 that was free a moment ago."""
	with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
		s.bind(("127.0.0.1", 0))
		return s.getsockname()[1]


def make_certs(folder):
	"""Makes in folder a CA and a server certificate for localhost and 127.0.0.1 signed by it.

	Returns (ca.crt, server.crt, server.key); the CA's key is removed."""
	cnf, ca_key = os.path.join(folder, "openssl.cnf"), os.path.join(folder, "ca.key")
	ca, cert, key = (os.path.join(folder, n) for n in ("ca.crt", "server.crt", "server.key"))
	with open(cnf, "w") as f:
		f.write(OPENSSL_CONFIG)
	new_key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-noenc", "-days", "2"]
	for argv in (["-extensions", "ca", "-subj", "/CN=fidx test CA", "-keyout", ca_key, "-out", ca],
		     ["-extensions", "server", "-subj", "/CN=localhost", "-CA", ca, "-CAkey", ca_key,
		      "-keyout", key, "-out", cert]):
		r = subprocess.run(["openssl", "req", "-config", cnf, "-x509"] + new_key + argv,
				   stdin=subprocess.DEVNULL, capture_output=True, text=True)
		if r.returncode:
			raise PgError("openssl req failed (exit %d): %s"
				      % (r.returncode, r.stderr.strip()))
	os.remove(ca_key)
	os.remove(cnf)
	os.chmod(ca, 0o644)
	os.chmod(cert, 0o644)
	return ca, cert, key


# --------------------------------------------------------------- cleanup ----

_live = set()           # servers started and not yet stopped


def _stop_all():
	"""Stops every server still running (at exit, and on SIGTERM/SIGHUP)."""
	for srv in list(_live):
		srv.stop()


def _die_of(signum, frame):
	"""Handles SIGTERM/SIGHUP: stops the servers, then dies of the signal (its default action)."""
	_stop_all()
	signal.signal(signum, signal.SIG_DFL)
	os.kill(os.getpid(), signum)


def _handle_signals():
	"""Makes SIGTERM and SIGHUP stop the servers first, if the caller left them at default."""
	if threading.current_thread() is not threading.main_thread():
		return  # only the main thread may set handlers; atexit still covers a normal exit
	for sig in (signal.SIGTERM, signal.SIGHUP):
		if signal.getsignal(sig) == signal.SIG_DFL:
			signal.signal(sig, _die_of)


atexit.register(_stop_all)


# ---------------------------------------------------------------- server ----

class PgServer:
	"""A throwaway PostgreSQL cluster in a temporary folder; `with PgServer() as pg:`."""

	host = "127.0.0.1"

	def __init__(self):
		"""Chooses the binaries and the server user; start() makes and runs the cluster."""
		self.bin = bin_dir()
		self.folder = None          # the temporary folder, None before start(), after stop()
		self.port = None
		self.pid = None             # the running postmaster's pid
		self._orphans = {}          # {pid: starttime} of a killed postmaster's children
		self.admin_password = secrets.token_urlsafe(24)
		self._passwords = {ADMIN: self.admin_password}
		# a root caller runs the server as nobody (subprocess's equivalent of
		# setpriv --reuid=65534 --regid=65534 --clear-groups)
		self._as_user = {}
		if os.geteuid() == 0:
			self._as_user = dict(user=NOBODY, group=NOBODY, extra_groups=[])

	def __enter__(self):
		self.start()
		return self

	def __exit__(self, *exc):
		self.stop()
		return False

	# where things are
	@property
	def socket_dir(self):
		"""The unix socket directory (the folder)."""
		return self.folder

	@property
	def data(self):
		"""The cluster's data directory."""
		return os.path.join(self.folder, "data")

	@property
	def log_file(self):
		"""The server's log file."""
		return os.path.join(self.folder, "server.log")

	@property
	def ca_file(self):
		"""The CA certificate that signed the server's (readable by anyone)."""
		return os.path.join(self.folder, "ca.crt")

	# life cycle
	def start(self):
		"""Makes the cluster on the first call, then runs the server (if it does not run);
		stops everything if that fails."""
		if self.pid is not None:
			return
		_live.add(self)
		_handle_signals()
		try:
			if self.folder is None:
				self._create()
			self._launch()
		except BaseException:
			self.stop()
			raise

	def restart(self):
		"""Stops the server cleanly (pg_ctl -m fast), starts it again on the same port."""
		self._shutdown("fast")
		self.start()

	def kill(self):
		"""SIGKILLs the postmaster alone, a crash; start() or stop() reaps its orphans."""
		self._orphans = family(self.pid)
		os.kill(self.pid, signal.SIGKILL)
		self._wait(lambda: not running(self.pid), "the killed postmaster to die")
		self.pid = None

	def stop(self):
		"""Stops the server (pg_ctl -m immediate, SIGKILL of what is left); removes the folder."""
		_live.discard(self)
		if self.folder is None:
			return
		self._shutdown("immediate")
		self._drop_shared_memory()
		shutil.rmtree(self.folder, ignore_errors=True)
		self.folder = None

	def park(self):
		"""Stops the server cleanly (pg_ctl -m fast) and keeps the folder (this object
		forgets it: a later stop() does nothing); returns a dict (JSON-able) from which
		reopen() runs the same cluster again."""
		_live.discard(self)
		self._shutdown("fast")
		parked = dict(folder=self.folder, port=self.port, passwords=dict(self._passwords))
		self.folder = None
		return parked

	@classmethod
	def reopen(cls, parked):
		"""Runs again a cluster park() kept, on the same port; raises PgError if it cannot."""
		pg = cls()
		if not os.path.isfile(os.path.join(parked["folder"], "data", "PG_VERSION")):
			raise PgError("no cluster in %s to reopen" % parked["folder"])
		pg.folder, pg.port = parked["folder"], parked["port"]
		pg._passwords = dict(parked["passwords"])
		pg.admin_password = pg._passwords[ADMIN]
		_live.add(pg)
		_handle_signals()
		try:
			pg._launch()
		except BaseException:  # the folder stays: stop() would remove it
			_live.discard(pg)
			pg._shutdown("immediate")
			raise
		return pg

	def _create(self):
		"""Makes the folder, the certificates, and the cluster with its configuration."""
		self.folder = tempfile.mkdtemp(prefix="fidx-pg-")
		os.chmod(self.folder, 0o755)
		_ca, cert, key = make_certs(self.folder)
		pwfile = os.path.join(self.folder, "pwfile")
		with open(os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
			f.write(self.admin_password + "\n")
		if self._as_user:
			for path in (self.folder, key, pwfile):
				os.chown(path, NOBODY, NOBODY)
		self._server_cmd(["initdb", "-D", self.data, "-U", ADMIN, "--pwfile", pwfile,
				  "--auth", "scram-sha-256", "--encoding", "UTF8", "--no-locale",
				  "--no-sync"])
		os.remove(pwfile)
		with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
			f.write(CONFIG.format(folder=_conf_string(self.folder),
					      cert=_conf_string(cert), key=_conf_string(key)))
		with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
			f.write(HBA)

	def _launch(self):
		"""Starts the postmaster with pg_ctl -w on a free port (another if it gets taken)."""
		self._reap()  # the orphans of a killed postmaster still hold its shared memory
		locks = [self._pid_file] + glob.glob(os.path.join(self.folder, ".s.PGSQL.*.lock"))
		for lock in locks:  # a killed postmaster's, if any
			pid = _lock_pid(lock)
			if pid is not None and not running(pid):
				os.remove(lock)
		fixed = self.port is not None
		for _ in range(1 if fixed else PORT_ATTEMPTS):
			if not fixed:
				self.port = free_port()
			log_start = os.path.getsize(self.log_file) if os.path.exists(self.log_file) else 0
			r = self._server_cmd(["pg_ctl", "start", "-w", "-t", str(START_TIMEOUT),
					      "-D", self.data, "-l", self.log_file,
					      "-o", "-p %d" % self.port], check=False)
			self.pid = self._read_pid()
			if r.returncode == 0:
				return
			with open(self.log_file, errors="replace") as f:
				f.seek(log_start)
				if "Address already in use" not in f.read():
					break
		raise PgError(self._why("pg_ctl start failed (exit %d): %s"
					% (r.returncode, r.stdout.strip())))

	def _shutdown(self, mode):
		"""Stops the postmaster with pg_ctl stop -m mode, waits for its processes to end
		(pg_ctl returns once postmaster.pid is gone, a moment before the postmaster itself
		has exited: seen under load), then reaps whatever is left."""
		pid = self._read_pid()
		if pid is not None and running(pid):
			procs = family(pid)
			self._orphans.update(procs)
			self._server_cmd(["pg_ctl", "stop", "-w", "-t", str(STOP_TIMEOUT), "-m", mode,
					  "-D", self.data], check=False)
			with contextlib.suppress(PgError):  # what is left is SIGKILLed below
				self._wait(lambda: not any(running(p, t) for p, t in procs.items()),
					   "the server's processes to end")
		self._reap()
		self.pid = None

	def _reap(self):
		"""SIGKILLs the server's processes still running (the postmaster of postmaster.pid
		and its children, a killed postmaster's orphans), and waits until none is left."""
		procs, self._orphans = self._orphans, {}
		pid = self._read_pid()
		if pid is not None and running(pid):
			procs.update(family(pid))
		for p, starttime in procs.items():
			if running(p, starttime):
				with contextlib.suppress(ProcessLookupError):
					os.kill(p, signal.SIGKILL)
		self._wait(lambda: not any(running(p, t) for p, t in procs.items()),
			   "the server's processes to die")

	def _drop_shared_memory(self):
		"""Removes the SysV shared memory segment named in a killed postmaster's
		postmaster.pid (postgres removes it on any other exit, or at its next start)."""
		try:
			with open(self._pid_file) as f:
				shmid = f.read().split("\n")[6].split()[1]  # line 7: "key id"
		except (OSError, IndexError):
			return
		subprocess.run(["ipcrm", "-m", shmid],
			       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

	@property
	def _pid_file(self):
		"""The postmaster's lock file, postmaster.pid in the data directory."""
		return os.path.join(self.data, "postmaster.pid")

	def _read_pid(self):
		"""Returns the pid in postmaster.pid, or None."""
		return _lock_pid(self._pid_file)

	def _wait(self, done, what):
		"""Polls done() for up to STOP_TIMEOUT seconds; raises PgError naming what if in vain."""
		deadline = time.monotonic() + STOP_TIMEOUT
		while not done():
			if time.monotonic() > deadline:
				raise PgError("timed out waiting for %s" % what)
			time.sleep(0.01)

	def _server_cmd(self, argv, check=True):
		"""Runs a program of the bin directory as the server user; returns the result."""
		env = {"PATH": "/usr/bin:/bin", "HOME": self.folder, "LC_ALL": "C"}
		r = subprocess.run([os.path.join(self.bin, argv[0])] + argv[1:], cwd=self.folder,
				   env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
				   stderr=subprocess.STDOUT, text=True, errors="replace", **self._as_user)
		if check and r.returncode:
			raise PgError(self._why("%s failed (exit %d): %s"
						% (argv[0], r.returncode, r.stdout.strip())))
		return r

	def _why(self, msg):
		"""Returns msg followed by the last lines of the server log, if there is one."""
		try:
			with open(self.log_file, errors="replace") as f:
				tail = f.readlines()[-LOG_TAIL_LINES:]
		except OSError:
			return msg
		return msg + "\n--- server log tail:\n" + "".join(tail).rstrip()

	# clients
	def _params(self, user, password, dbname, tcp):
		"""Returns the connection keywords: the unix socket, or TCP and TLS verify-full."""
		if tcp:
			return dict(host=self.host, port=self.port, user=user, password=password,
				    dbname=dbname, sslmode="verify-full", sslrootcert=self.ca_file)
		return dict(host=self.socket_dir, port=self.port, user=user, password=password,
			    dbname=dbname)

	def _password(self, user, password):
		"""Returns password, or if None the one set for user here (None if there is none)."""
		return self._passwords.get(user) if password is None else password

	def conninfo(self, user=ADMIN, password=None, dbname="postgres", tcp=False):
		"""Returns a libpq key=value conninfo string (password None: the one set here)."""
		return make_conninfo(self._params(user, self._password(user, password), dbname, tcp))

	def uri(self, user=ADMIN, password=None, dbname="postgres", tcp=False):
		"""Returns the same as conninfo() as a postgresql:// URI."""
		return make_uri(self._params(user, self._password(user, password), dbname, tcp))

	def psql(self, sql, user=ADMIN, password=None, dbname="postgres", tcp=False, check=True):
		"""Runs the SQL script sql through psql; returns its output (rows as a|b), without
		the last newline.  A failure raises PgError, unless check is false."""
		env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
		env["PGCLIENTENCODING"] = "UTF8"
		password = self._password(user, password)
		if password is not None:
			env["PGPASSWORD"] = password
		r = subprocess.run([os.path.join(self.bin, "psql"), "-X", "-v", "ON_ERROR_STOP=1",
				    "-qAtw", "-d", make_conninfo(self._params(user, None, dbname, tcp))],
				   input=sql, capture_output=True, env=env, encoding="utf-8",
				   errors="replace")
		if check and r.returncode:
			raise PgError(self._why("psql failed (exit %d): %s"
						% (r.returncode, r.stderr.strip())))
		return r.stdout[:-1] if r.stdout.endswith("\n") else r.stdout

	def create_role(self, name, password, login=True, extra=""):
		"""Creates role name with password, LOGIN unless login is false; extra: SQL options."""
		self.psql("CREATE ROLE %s %s PASSWORD %s %s;" % (quote_ident(name),
			  "LOGIN" if login else "NOLOGIN", quote_literal(password), extra))
		self._passwords[name] = password

	def create_database(self, name, owner):
		"""Creates database name owned by role owner."""
		self.psql("CREATE DATABASE %s OWNER %s;" % (quote_ident(name), quote_ident(owner)))
