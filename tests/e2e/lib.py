"""lib.py - the shared helpers of the fidx end-to-end suite.

Design.  Every t_*.py script builds its own trees in a fresh temporary folder
(TempDir, which also unmounts what a test mounted there), runs the binary named
by $FIDX (run_fidx), and compares what the database holds (db_rows,
scan_row) with a ground truth computed here without fidx:

  * truth() walks a tree through directory descriptors (os.open with dir_fd,
    os.listdir on the descriptor), so paths longer than PATH_MAX work, and
    takes every metadata column from os.lstat (or os.stat where a symlink is
    followed), link targets from os.readlink, digests from hashlib and xxhash
    over the contents (read with O_NOATIME, so the ground truth does not move
    the atimes it records), and birth times from coreutils stat(1)
    ("%.9W", nanoseconds; '-' or 0 means unknown).
  * compare() checks that every entry is present exactly once, nothing extra,
    then one check per column over all rows, so a failure names the column
    and shows a few differing rows.

Output is one line per check, "ok - NAME" or "not ok - NAME: WHY" (WHY on one
line, bytes shown with repr so that hostile names stay on it); Checker.done()
exits 0 iff every check passed.  The runner (tests/e2e/run) counts the lines.
"""

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time

import xxhash

FIDX = os.environ.get("FIDX", "")
SHIM = os.environ.get("FIDX_SHIM", "")

DIGESTS = ["md5", "sha1", "sha256", "sha512", "xxh128"]
META = ["size", "blocks", "mode", "uid", "gid", "nlink", "dev", "ino",
	"atime_ns", "mtime_ns", "ctime_ns"]
COLUMNS = ["name", "ext", "type"] + META + ["btime_ns", "link_target"] + DIGESTS + ["error"]
SCAN_COLUMNS = ["id", "root", "host", "os", "kernel", "arch", "version", "options",
		"started_ns", "finished_ns", "status", "entries", "files", "dirs",
		"bytes", "errors"]

ELOOP_TEXT = os.strerror(errno.ELOOP)  # "Too many levels of symbolic links"
NOBODY = 65534
READ_CHUNK = 1 << 20


# ---------------------------------------------------------------- checks ----

class Checker:
	"""Prints one line per check and remembers whether any failed."""

	def __init__(self):
		self.failed = 0
		self.passed = 0

	def ok(self, name, cond, why=""):
		"""Records check name as passed when cond is true; returns cond."""
		if cond:
			self.passed += 1
			print("ok - %s" % name, flush=True)
		else:
			self.failed += 1
			why = one_line(why) or "failed"
			print("not ok - %s: %s" % (name, why), flush=True)
		return bool(cond)

	def eq(self, name, got, want):
		"""Passes when got == want (a Matcher in want is applied to got)."""
		return self.ok(name, matches(got, want), "got %s, want %s" % (short(got), short(want)))

	def skip(self, name, why):
		"""Records a skipped check (counted as passed, as TAP does)."""
		self.passed += 1
		print("ok - %s # skip %s" % (name, one_line(why)), flush=True)

	@contextlib.contextmanager
	def guard(self, name):
		"""Runs a block; an exception in it becomes one failed check."""
		try:
			yield
		except Exception as e:  # report and go on with the next block
			self.ok(name, False, "exception %s: %s" % (type(e).__name__, e))

	def done(self):
		"""Exits the script: 0 iff every check passed."""
		sys.stdout.flush()
		sys.exit(1 if self.failed else 0)


def one_line(s):
	"""Returns s as a single line of at most ~600 characters."""
	s = str(s).replace("\n", "\\n").replace("\r", "\\r")
	return s if len(s) <= 600 else s[:600] + "..."


def short(v):
	"""Returns repr(v) cut to a readable length."""
	r = repr(v)
	return r if len(r) <= 200 else r[:200] + "..."


class Matcher:
	"""An expected value that is not a plain value."""

	def match(self, v):
		raise NotImplementedError


class _Any(Matcher):
	"""Matches any value (a column the contract leaves open)."""
	def match(self, v):
		return True

	def __repr__(self):
		return "ANY"


ANY = _Any()


class Contains(Matcher):
	"""A text value containing a substring."""

	def __init__(self, sub):
		self.sub = sub

	def match(self, v):
		return isinstance(v, str) and self.sub in v

	def __repr__(self):
		return "<text containing %r>" % self.sub


class OneOf(Matcher):
	"""Any of several values."""

	def __init__(self, *values):
		self.values = values

	def match(self, v):
		return any(matches(v, x) for x in self.values)

	def __repr__(self):
		return "<one of %r>" % (self.values,)


def matches(got, want):
	"""Returns whether got is want (or satisfies the Matcher want)."""
	if isinstance(want, Matcher):
		return want.match(got)
	return got == want


# ---------------------------------------------------------- temp folders ----

class TempDir:
	"""A fresh temporary folder, removed at exit with whatever is mounted in it."""

	def __init__(self):
		self.path = tempfile.mkdtemp(prefix="fidx-e2e-")
		self.mounts = []

	def __enter__(self):
		return self

	def __exit__(self, *exc):
		self.cleanup()
		return False

	def mount_tmpfs(self, where, size):
		"""Mounts a tmpfs of size (mount's syntax, e.g. '1m') at where."""
		subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=0755" % size,
				"tmpfs", where], check=True)
		self.mounts.append(where)

	def cleanup(self):
		"""Unmounts everything below the folder, then removes it."""
		for m in reversed(self.mounts):
			subprocess.run(["umount", m], stderr=subprocess.DEVNULL)
		for m in sorted(mounts_below(self.path), key=len, reverse=True):
			subprocess.run(["umount", "-l", m], stderr=subprocess.DEVNULL)
		shutil.rmtree(self.path, ignore_errors=True)


def mounts_below(top):
	"""Returns the mount points at or below top (from /proc/self/mountinfo)."""
	out = []
	top = os.path.realpath(top)
	with open("/proc/self/mountinfo", "rb") as f:
		for line in f:
			mp = line.split(b" ")[4]
			mp = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), mp)
			mp = os.fsdecode(mp)
			if mp == top or mp.startswith(top + "/"):
				out.append(mp)
	return out


def write(path, data=b"", mode=0o644):
	"""Creates (or truncates) the file path holding data."""
	fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
	try:
		os.write(fd, data)
	finally:
		os.close(fd)


def sparse(path, size, data_at=()):
	"""Creates a sparse file of size bytes, with (offset, bytes) pieces written."""
	fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
	try:
		os.ftruncate(fd, size)
		for off, data in data_at:
			os.pwrite(fd, data, off)
	finally:
		os.close(fd)


def settle(root):
	"""
	Reads every directory and symlink below root once, then waits a moment.
	Under relatime, the first read of a fresh directory or symlink moves its
	atime (readlink always may); after this, neither the ground truth nor the
	scan moves it again, so a recorded atime is stable.  Regular files are
	left alone: their atimes must not move at all.
	"""
	time.sleep(0.02)
	stack = [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
	while stack:
		fd = stack.pop()
		try:
			for n in os.listdir(fd):
				st = os.lstat(n, dir_fd=fd)
				if stat.S_ISLNK(st.st_mode):
					os.readlink(n, dir_fd=fd)
				elif stat.S_ISDIR(st.st_mode):
					try:
						stack.append(os.open(n, os.O_RDONLY | os.O_DIRECTORY |
								     os.O_NOFOLLOW, dir_fd=fd))
					except OSError:
						pass
		finally:
			os.close(fd)
	time.sleep(0.02)


# ------------------------------------------------------------ running fidx ----

class Result:
	"""What one fidx run did."""

	def __init__(self, rc, out, err, elapsed, timed_out):
		self.rc = rc              # exit status (negative: killed by that signal)
		self.out = out            # stdout bytes
		self.err = err            # stderr bytes
		self.elapsed = elapsed    # seconds
		self.timed_out = timed_out

	def err_lines(self):
		"""The non-empty lines of stderr."""
		return [l for l in self.err.split(b"\n") if l]

	def out_lines(self):
		"""The non-empty lines of stdout."""
		return [l for l in self.out.split(b"\n") if l]

	def __repr__(self):
		return "rc=%r timed_out=%r stdout=%s stderr=%s" % (
			self.rc, self.timed_out, short(self.out), short(self.err))


def user_prefix(uid):
	"""The command prefix that runs a program as uid (and gid uid), no groups."""
	return ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups"]


def is_asan():
	"""Whether the binary under test is a sanitizer build (each run costs ~10x; its RSS means
	little): a script may then repeat a randomised check fewer times."""
	with open(FIDX, "rb") as f:
		return b"__asan_init" in f.read()


def is_tsan():
	"""
	Whether the binary under test is the TSan build.  The e2e scripts marked "e2e: tsan"
	run on it (tests/e2e/run --marked tsan) for their threaded paths; a part that says
	nothing more about threads (the same code as another part, or only Python's work)
	is skipped there with a line saying so, as is anything that preloads an allocator.
	"""
	with open(FIDX, "rb") as f:
		return b"__tsan_init" in f.read()


def run_fidx(*args, timeout=120, env=None, cwd=None, uid=None, preload=None):
	"""
	Runs fidx with args (str or bytes), stdin from /dev/null, and returns a
	Result.  env adds variables; preload sets LD_PRELOAD (and the ASan option
	that allows it); uid runs it as that user.  A run longer than timeout
	seconds is killed with its process group (Result.timed_out).
	"""
	cmd = ([] if uid is None else user_prefix(uid)) + [FIDX] + list(args)
	e = dict(os.environ)
	if env:
		e.update(env)
	if preload:
		e["LD_PRELOAD"] = preload
		e["ASAN_OPTIONS"] = ":".join(filter(None, [e.get("ASAN_OPTIONS"),
							   "verify_asan_link_order=0"]))
	t0 = time.monotonic()
	p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
			     stderr=subprocess.PIPE, env=e, cwd=cwd, start_new_session=True)
	try:
		out, err = p.communicate(timeout=timeout)
		timed_out = False
	except subprocess.TimeoutExpired:
		os.killpg(p.pid, signal.SIGKILL)
		out, err = p.communicate()
		timed_out = True
	return Result(p.returncode, out, err, time.monotonic() - t0, timed_out)


def run_to(out, *args):
	"""
	Runs fidx with stdout on the file descriptor out and SIGPIPE ignored (as
	Python leaves it: a closed pipe is then EPIPE, not a kill); returns
	(exit status, stderr).
	"""
	p = subprocess.run([FIDX] + list(args), stdin=subprocess.DEVNULL, stdout=out,
			   stderr=subprocess.PIPE, restore_signals=False, timeout=120)
	return p.returncode, p.stderr


def check_write_errors(chk, label, *args, status=2, note=b""):
	"""
	A full disk and a closed pipe: exit status (2 unless told), one line
	saying the output failed (with note, bytes, after the reason).
	"""
	with open("/dev/full", "wb") as full:
		rc, err = run_to(full.fileno(), *args)
	chk.ok("%s > /dev/full: exit %d, one line" % (label, status), rc == status and
	       err == b"fidx: cannot write output: No space left on device" + note + b"\n",
	       "rc=%d %r" % (rc, err))
	r, w = os.pipe()
	os.close(r)
	rc, err = run_to(w, *args)
	os.close(w)
	chk.ok("%s into a closed pipe: exit %d, one line" % (label, status), rc == status and
	       err == b"fidx: cannot write output: Broken pipe" + note + b"\n", "rc=%d %r" % (rc, err))


def check_fatal(chk, name, res, mention=None):
	"""
	Checks the form of a fatal error: exit 2, not hung, exactly one line on
	stderr starting with "fidx: " (naming mention, bytes, when given).
	"""
	lines = res.err_lines()
	chk.ok(name + ": exit 2", res.rc == 2 and not res.timed_out, repr(res))
	good = len(lines) == 1 and lines[0].startswith(b"fidx: ")
	if good and mention is not None:
		good = mention in lines[0]
	chk.ok(name + ": one 'fidx: ' line on stderr" +
	       ("" if mention is None else " naming %s" % short(mention)), good,
	       "stderr=%s" % short(res.err))


SEAL_LINE = re.compile(rb"seal sha256:[0-9a-f]{64} \(scan \d+\)")


def is_seal_line(line):
	"""Whether a line of `fidx scan`'s stdout is the seal line of a complete scan."""
	return SEAL_LINE.fullmatch(line) is not None


def summary_numbers(text):
	"""Returns every integer in text (digit groups joined: 20,000 -> 20000)."""
	text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
	text = re.sub(r"(?<=\d)[,_'\u202f\u00a0 ](?=\d{3}\b)", "", text)
	return [int(x) for x in re.findall(r"(?<![\d.])\d+(?![\d.])", text)]


def makefile_version():
	"""fidx's version as the Makefile sets it (VERSION := x.y.z)."""
	mk = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Makefile")
	with open(mk) as f:
		m = re.search(r"^VERSION\s*:?=\s*(\S+)", f.read(), re.M)
	return m.group(1) if m else None


# ------------------------------------------------------------- databases ----

def connect(db):
	"""A connection to db in which TEXT comes back as raw bytes."""
	con = sqlite3.connect(db, timeout=10)
	con.text_factory = bytes
	return con


def _txt(v):
	"""bytes from SQLite as str (invalid UTF-8 replaced); other values as they are."""
	return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


TIMES = ["atime", "mtime", "ctime", "btime"]


def time_select(con):
	"""
	The SQL of the four times of a file row as exact nanoseconds (Python ints
	of any size, from SQLite's integers): T_ns, or, from schema 4, T_sec and
	T_nsec where T_ns cannot hold the time.  Returns the column list
	"atime_ns, atime_sec, atime_nsec, ..." (NULLs before version 4).
	"""
	has = {_txt(r[1]) for r in con.execute("PRAGMA table_info(file)")}
	cols = []
	for t in TIMES:
		cols.append(t + "_ns")
		for x in ("_sec", "_nsec"):
			cols.append(t + x if t + x in has else "NULL")
	return ", ".join(cols)


def time_values(vals):
	"""The four exact nanosecond times of time_select()'s twelve values."""
	out = []
	for i in range(4):
		ns, sec, nsec = vals[3 * i:3 * i + 3]
		out.append(ns if ns is not None else None if sec is None else sec * 10**9 + nsec)
	return out


def db_rows(db, scan_id):
	"""
	Returns (rows, dups): rows maps path bytes to a dict of COLUMNS as fidx
	stored them for scan scan_id (type and error as str; the times as exact
	nanoseconds, whichever columns hold them); dups lists paths stored more
	than once.
	"""
	con = connect(db)
	try:
		plain = [c for c in COLUMNS if not c.endswith("time_ns")]
		cur = con.execute("SELECT path, %s, %s FROM file WHERE scan_id = ?" %
				  (", ".join(plain), time_select(con)), (scan_id,))
		rows, dups = {}, []
		for r in cur:
			d = dict(zip(plain, r[1:1 + len(plain)]))
			for t, v in zip(TIMES, time_values(r[1 + len(plain):])):
				d[t + "_ns"] = v
			d["type"] = _txt(d["type"])
			d["error"] = _txt(d["error"])
			if r[0] in rows:
				dups.append(r[0])
			rows[r[0]] = d
		return rows, dups
	finally:
		con.close()


def scan_rows(db):
	"""Returns the scan table as a list of dicts (TEXT columns as str, root as bytes)."""
	con = connect(db)
	try:
		out = []
		for r in con.execute("SELECT %s FROM scan ORDER BY id" % ", ".join(SCAN_COLUMNS)):
			d = dict(zip(SCAN_COLUMNS, r))
			for k in ("host", "os", "kernel", "arch", "version", "options", "status"):
				d[k] = _txt(d[k])
			out.append(d)
		return out
	finally:
		con.close()


def dump_scan(db, scan_id):
	"""Every column of scan scan_id and of its file rows, for before/after comparisons."""
	con = connect(db)
	try:
		s = con.execute("SELECT * FROM scan WHERE id = ?", (scan_id,)).fetchall()
		f = con.execute("SELECT * FROM file WHERE scan_id = ? ORDER BY id", (scan_id,)).fetchall()
		return s, f
	finally:
		con.close()


def start_scan(db, *args, rows=1, settle=0.3, stdout=subprocess.DEVNULL):
	"""
	Starts `fidx scan -q -j 1 --db DB ARGS...` in its own session and returns
	the process once its rows new scan rows are in db (fidx is past its
	start-up), settle seconds later: the moment to signal a slow scan.
	stdout is where its stdout goes (subprocess.PIPE to read the summary).
	"""
	n0 = len(scan_rows(db)) if os.path.exists(db) else 0
	p = subprocess.Popen([FIDX, "scan", "-q", "-j", "1", "--db", db, *args],
			     stdin=subprocess.DEVNULL, stdout=stdout,
			     stderr=subprocess.PIPE, start_new_session=True)
	deadline = time.monotonic() + 20
	while time.monotonic() < deadline and p.poll() is None:
		try:
			if os.path.exists(db) and len(scan_rows(db)) >= n0 + rows:
				break
		except Exception:  # schema not made yet, or locked: try again
			pass
		time.sleep(0.05)
	time.sleep(settle)
	return p


# What each older schema version holds: its tables (and the index made after a
# bulk load), and how many columns of scan and file (their first ones).  Views
# are left out of an older copy: their text of that version is not known here,
# and fidx reads none of them.
OLDER_VERSIONS = {
	1: ({"scan", "file", "file_scan_path"}, 16, 25),
	2: ({"scan", "file", "file_scan_path", "file_digest", "path_index", "path_block",
	     "path_trigram"}, 16, 25),
	3: ({"scan", "file", "file_scan_path", "file_digest", "path_index", "path_block",
	     "path_trigram", "file_seal"}, 21, 26),
	4: ({"scan", "file", "file_scan_path", "file_digest", "path_index", "path_block",
	     "path_trigram", "file_seal", "local_time"}, 22, 34),
	5: ({"scan", "file", "file_scan_path", "file_digest", "path_index", "path_block",
	     "path_trigram", "file_seal", "local_time", "scan_uuid"}, 23, 34),
	6: ({"scan", "file", "file_scan_path", "file_digest", "path_index", "path_block",
	     "path_trigram", "file_seal", "local_time", "scan_uuid"}, 23, 48),
}


def downgrade(db, version):
	"""
	Turns the fidx database at db into one of an older schema version, as that
	fidx made it but for its views: drops the views, the tables and indexes a
	later version added and the columns it added (ALTER TABLE DROP COLUMN),
	and sets user_version.
	"""
	keep, scan_cols, file_cols = OLDER_VERSIONS[version]
	con = connect(db)
	try:
		for kind in ("view", "index", "table"):
			for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = ?",
						   (kind,)).fetchall():
				if (kind == "view" or name.decode() not in keep) and \
				   not name.startswith(b"sqlite_"):
					con.execute("DROP %s \"%s\"" % (kind, name.decode()))
		for table, n in (("scan", scan_cols), ("file", file_cols)):
			cols = [_txt(r[1]) for r in con.execute("PRAGMA table_info(%s)" % table)]
			for c in reversed(cols[n:]):
				con.execute("ALTER TABLE %s DROP COLUMN %s" % (table, c))
		con.execute("PRAGMA user_version = %d" % version)
		con.commit()
	finally:
		con.close()


def integrity(db):
	"""Returns PRAGMA integrity_check's answer ('ok' when sound)."""
	con = connect(db)
	try:
		return "; ".join(_txt(r[0]) for r in con.execute("PRAGMA integrity_check"))
	finally:
		con.close()


def read_bytes(path):
	"""The bytes of path, or None when it does not exist."""
	try:
		with open(path, "rb") as f:
			return f.read()
	except FileNotFoundError:
		return None


# ---------------------------------------------------------- ground truth ----

TYPES = {stat.S_IFREG: "f", stat.S_IFDIR: "d", stat.S_IFLNK: "l", stat.S_IFIFO: "p",
	 stat.S_IFSOCK: "s", stat.S_IFCHR: "c", stat.S_IFBLK: "b"}


def type_of(mode):
	"""The type letter of a st_mode ('f' 'd' 'l' 'p' 's' 'c' 'b'), or None."""
	return TYPES.get(stat.S_IFMT(mode))


def ext_of(name):
	"""The extension column of a name: os.path.splitext without the dot."""
	return os.path.splitext(name)[1][1:]


def norm_root(root, cwd=None):
	"""
	The absolute root path fidx must record for root (bytes): made absolute,
	'' and '.' components dropped, the folders above the last component
	resolved by os.path.realpath, the last component kept ('..' resolved).
	"""
	root = os.fsencode(root)
	if not root.startswith(b"/"):
		root = os.fsencode(cwd or os.getcwd()) + b"/" + root
	parts = [p for p in root.split(b"/") if p not in (b"", b".")]
	if not parts:
		return b"/"
	if parts[-1] == b"..":
		return os.path.realpath(b"/" + b"/".join(parts))
	above = os.path.realpath(b"/" + b"/".join(parts[:-1]))
	return above.rstrip(b"/") + b"/" + parts[-1]


def name_of(path):
	"""The name column of a path: its last component, '/' for the root '/'."""
	return b"/" if path == b"/" else path.rsplit(b"/", 1)[1]


def meta_row(path, st):
	"""The expected metadata columns of an entry with stat result st."""
	name = name_of(path)
	row = {"name": name, "ext": ext_of(name), "type": type_of(st.st_mode),
	       "size": st.st_size, "blocks": st.st_blocks, "mode": st.st_mode,
	       "uid": st.st_uid, "gid": st.st_gid, "nlink": st.st_nlink, "dev": st.st_dev,
	       "ino": st.st_ino, "atime_ns": st.st_atime_ns, "mtime_ns": st.st_mtime_ns,
	       "ctime_ns": st.st_ctime_ns, "btime_ns": None, "link_target": None,
	       "error": None}
	for d in DIGESTS:
		row[d] = None
	return row


def new_hashers(hashes):
	"""Fresh hash objects for the digest names in hashes."""
	return {d: (xxhash.xxh3_128() if d == "xxh128" else hashlib.new(d)) for d in hashes}


def sparse_digests(size, pieces, hashes, out):
	"""
	Puts into out the digests (names in hashes) of a file made by sparse(size,
	pieces), computed from its layout (zeros but for the pieces), so that
	nothing reads gigabytes of holes.  Meant to run in a thread beside a scan.
	"""
	hs = new_hashers(hashes)
	zeros = memoryview(bytes(READ_CHUNK))
	pos = 0
	for off, data in tuple(pieces) + ((size, b""),):
		while pos < off:
			n = min(len(zeros), off - pos)
			for h in hs.values():
				h.update(zeros[:n])
			pos += n
		for h in hs.values():
			h.update(data)
		pos += len(data)
	out.update({d: h.digest() for d, h in hs.items()})


# Digests of the sparse files already hashed, by their content (see sparse_key()).
_SPARSE_DIGESTS = {}
SPARSE_MIN = 64 << 20   # a file this large or larger whose data is at most SPARSE_DATA bytes
SPARSE_DATA = 1 << 20


def sparse_key(fd):
	"""
	The content of the sparse file open on fd as (size, ((offset, bytes), ...)), its data
	extents as SEEK_DATA and SEEK_HOLE give them (the rest reads as zeros), when it is a
	regular file of SPARSE_MIN bytes or more with at most SPARSE_DATA bytes of data; else
	None.  The key is the content itself, not metadata: two files with one key hold the
	same bytes.
	"""
	st = os.fstat(fd)
	if not stat.S_ISREG(st.st_mode) or st.st_size < SPARSE_MIN:
		return None
	pieces, off, data = [], 0, 0
	try:
		while off < st.st_size:
			try:
				start = os.lseek(fd, off, os.SEEK_DATA)
			except OSError as e:
				if e.errno == errno.ENXIO:  # no data after off: holes to the end
					break
				raise
			end = os.lseek(fd, start, os.SEEK_HOLE)
			data += end - start
			if data > SPARSE_DATA:
				return None
			b = os.pread(fd, end - start, start)
			if len(b) != end - start:
				return None
			pieces.append((start, b))
			off = end
	except OSError:
		return None
	finally:
		os.lseek(fd, 0, os.SEEK_SET)
	return (st.st_size, tuple(pieces))


def hash_fd(fd, hashes):
	"""
	Digests (raw bytes) of everything readable from fd (a fresh descriptor: from offset 0),
	for each name in hashes.  A large sparse file whose content was hashed before (the same
	size and data extents, compared byte for byte) is not read again: the sparse trees of the
	slow scans hold many copies of one content, and a script takes their truth more than once.
	"""
	key = sparse_key(fd)
	if key is not None and all((key, d) in _SPARSE_DIGESTS for d in hashes):
		return {d: _SPARSE_DIGESTS[(key, d)] for d in hashes}
	hs = new_hashers(hashes)
	while True:
		b = os.read(fd, READ_CHUNK)
		if not b:
			break
		for h in hs.values():
			h.update(b)
	out = {d: h.digest() for d, h in hs.items()}
	if key is not None:
		_SPARSE_DIGESTS.update({(key, d): v for d, v in out.items()})
	return out


def hash_at(dir_fd, name, hashes, follow=False):
	"""Digests of the file name in dir_fd, read without moving its atime."""
	flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
	try:
		fd = os.open(name, flags | os.O_NOATIME, dir_fd=dir_fd)
	except PermissionError:
		fd = os.open(name, flags, dir_fd=dir_fd)
	try:
		return hash_fd(fd, hashes)
	finally:
		os.close(fd)


def parse_btime(s):
	"""stat's '%.9W' text to nanoseconds, or None when unknown ('-' or 0)."""
	s = s.strip()
	if not s or s.startswith("-") or s == "?":
		return None
	sec, _, frac = s.partition(".")
	ns = int(sec) * 10**9 + int((frac + "000000000")[:9])
	return ns or None


def stat_btimes(names, dir_fd=None, follow=False):
	"""
	Birth times of names (bytes) by coreutils stat(1), in order: paths, or
	names relative to dir_fd (the child changes into it first); with follow,
	of what symlinks point to (stat -L).
	"""
	out = []
	for i in range(0, len(names), 2000):
		chunk = names[i:i + 2000]
		pre = (lambda: os.fchdir(dir_fd)) if dir_fd is not None else None
		p = subprocess.run([b"stat"] + ([b"-L"] if follow else []) +
				   [b"--printf", b"%.9W\\0", b"--"] + chunk,
				   capture_output=True, preexec_fn=pre,
				   pass_fds=() if dir_fd is None else (dir_fd,))
		vals = p.stdout.split(b"\0")[:-1]
		if len(vals) != len(chunk):
			raise RuntimeError("stat(1) answered %d of %d: %s" %
					   (len(vals), len(chunk), p.stderr[:300]))
		out += [parse_btime(v.decode()) for v in vals]
	return out


class Truth:
	"""Options of a ground-truth walk (see truth())."""

	def __init__(self, follow=False, xdev=False, hashes=DIGESTS, skip=None, btime=True):
		self.follow = follow  # follow symlinks below the root, like find -L
		self.xdev = xdev      # do not enter directories on another device
		self.hashes = hashes  # digests expected for regular files
		self.skip = skip      # skip(rel_path_bytes, name_bytes) -> True to leave out
		self.btime = btime    # ask stat(1) for birth times


def truth(root, opts=None):
	"""
	Returns {path: row} for every entry under and including root (an absolute,
	normalised path; a root symlink is followed, as find -H does).  Rows hold
	every column of COLUMNS.  With opts.follow, a symlink below the root is
	followed when its target exists: it gets the target's metadata (and its
	digests, its contents when a directory) and keeps its link_target; a
	dangling one stays 'l' without error; a loop, or a link to a directory
	that is an ancestor, gets an error naming ELOOP (metadata left open: ANY,
	unless only lstat can describe it).
	"""
	opts = opts or Truth()
	root = os.fsencode(root)
	rows = {}
	short_paths, long_groups = [], []

	def btime_later(path, name):
		"""Queues an entry's birth time for stat(1), unless its row leaves it open."""
		if not opts.btime or rows[path]["btime_ns"] is ANY:
			return
		item = (path, name, bool(rows[path].get("followed")))
		if len(path) < 3800:
			short_paths.append(item)
		else:
			long_groups[-1][1].append(item)

	st = os.stat(root)
	rows[root] = meta_row(root, st)
	if stat.S_ISREG(st.st_mode) and opts.hashes:
		fd = os.open(root, os.O_RDONLY | os.O_NOATIME)
		try:
			rows[root].update(hash_fd(fd, opts.hashes))
		finally:
			os.close(fd)
	if opts.btime:
		short_paths.append((root, root, True))
	if not stat.S_ISDIR(st.st_mode):
		_fill_btimes(rows, short_paths, [])
		return rows
	root_dev = st.st_dev
	# stack of (dir fd, dir path, path below root, ancestors' (dev, ino))
	top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOATIME)
	stack = [(top, root, b"", ((st.st_dev, st.st_ino),))]
	try:
		while stack:
			fd, dpath, drel, anc = stack.pop()
			try:
				names = sorted(os.fsencode(n) for n in os.listdir(fd))
				if opts.btime and len(dpath) + 260 >= 3800:
					# names here may make paths too long for stat(1)
					long_groups.append((os.dup(fd), []))
				for name in names:
					path = (dpath if dpath != b"/" else b"") + b"/" + name
					rel = drel + b"/" + name if drel else name
					if opts.skip and opts.skip(rel, name):
						continue
					sub = _truth_entry(rows, fd, path, name, opts, anc)
					btime_later(path, name)
					if sub is None:
						continue
					sst = os.fstat(sub)
					if opts.xdev and sst.st_dev != root_dev:
						os.close(sub)
						continue
					stack.append((sub, path, rel, anc + ((sst.st_dev, sst.st_ino),)))
			finally:
				os.close(fd)
		_fill_btimes(rows, short_paths, long_groups)
	finally:
		for s in stack:
			os.close(s[0])
		for g in long_groups:
			os.close(g[0])
	return rows


def _truth_entry(rows, fd, path, name, opts, anc):
	"""Adds the row of one entry; returns a descriptor of it to enter, or None."""
	lst = os.lstat(name, dir_fd=fd)
	row = meta_row(path, lst)
	rows[path] = row
	follow_open = False
	if stat.S_ISLNK(lst.st_mode):
		row["link_target"] = os.readlink(name, dir_fd=fd)
		if not opts.follow:
			return None
		try:
			st = os.stat(name, dir_fd=fd)
		except FileNotFoundError:
			return None  # dangling: recorded as the link itself
		except OSError as e:
			if e.errno != errno.ELOOP:
				raise
			row["error"] = Contains(ELOOP_TEXT)
			return None
		if stat.S_ISDIR(st.st_mode) and (st.st_dev, st.st_ino) in anc:
			for k in META + ["type", "btime_ns"]:
				row[k] = ANY
			row["error"] = Contains(ELOOP_TEXT)
			return None
		target = row["link_target"]
		row.update(meta_row(path, st))
		row["link_target"] = target
		row["followed"] = True
		follow_open = True
		lst = st
	if stat.S_ISREG(lst.st_mode) and opts.hashes:
		row.update(hash_at(fd, name, opts.hashes, follow=follow_open))
	if stat.S_ISDIR(lst.st_mode):
		flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOATIME
		if not follow_open:
			flags |= os.O_NOFOLLOW
		return os.open(name, flags, dir_fd=fd)
	return None


def _fill_btimes(rows, short_paths, long_groups):
	"""Puts stat(1)'s birth times into rows: items are (path, name, followed)."""
	for follow in (False, True):
		items = [it for it in short_paths if it[2] == follow]
		for (p, _, _), b in zip(items, stat_btimes([it[0] for it in items], follow=follow)):
			rows[p]["btime_ns"] = b
		for gfd, group in long_groups:
			items = [it for it in group if it[2] == follow]
			bts = stat_btimes([it[1] for it in items], dir_fd=gfd, follow=follow)
			for (p, _, _), b in zip(items, bts):
				rows[p]["btime_ns"] = b


def compare(chk, label, got, dups, want, columns=COLUMNS):
	"""
	Checks rows read from the database (got, with dups) against want: the same
	set of paths, each once, then one check per column over all common rows.
	"""
	missing = sorted(set(want) - set(got))
	extra = sorted(set(got) - set(want))
	chk.ok("%s: every entry recorded" % label, not missing,
	       "%d of %d missing, e.g. %s" % (len(missing), len(want), short(missing[:3])))
	chk.ok("%s: nothing extra recorded" % label, not extra,
	       "%d extra, e.g. %s" % (len(extra), short(extra[:3])))
	chk.ok("%s: each entry recorded once" % label, not dups,
	       "%d duplicated, e.g. %s" % (len(dups), short(dups[:3])))
	common = sorted(set(want) & set(got))
	for c in columns:
		bad = [p for p in common if not matches(got[p][c], want[p][c])]
		chk.ok("%s: column %s" % (label, c), not bad,
		       "%d of %d rows differ, e.g. %s" % (
			       len(bad), len(common),
			       "; ".join("%s got %s want %s" % (short(p), show(c, got[p][c]),
								show(c, want[p][c]))
					 for p in bad[:3])))


def show(column, v):
	"""A value of column for a message (digests in hex)."""
	if column in DIGESTS and isinstance(v, bytes):
		return v.hex()
	return short(v)


def check_scan_row(chk, label, s, root, rows, status="complete", t0=None, t1=None):
	"""Checks a scan row s against the file rows of its scan (want rows or db rows)."""
	chk.eq("%s: scan.root" % label, s["root"], root)
	chk.eq("%s: scan.status" % label, s["status"], status)
	chk.eq("%s: scan.entries" % label, s["entries"], len(rows))
	chk.eq("%s: scan.files" % label, s["files"],
	       sum(1 for r in rows.values() if r["type"] == "f"))
	chk.eq("%s: scan.dirs" % label, s["dirs"],
	       sum(1 for r in rows.values() if r["type"] == "d"))
	chk.eq("%s: scan.bytes" % label, s["bytes"],
	       sum(r["size"] or 0 for r in rows.values() if r["type"] == "f"))
	chk.eq("%s: scan.errors" % label, s["errors"],
	       sum(1 for r in rows.values() if r["error"] is not None))
	times = isinstance(s["started_ns"], int) and isinstance(s["finished_ns"], int) and \
		s["started_ns"] <= s["finished_ns"]
	if times and t0 is not None:
		times = t0 <= s["started_ns"] and s["finished_ns"] <= t1
	chk.ok("%s: scan.started_ns <= finished_ns, within the run" % label, times,
	       "started %r finished %r run [%r, %r]" % (s["started_ns"], s["finished_ns"], t0, t1))
	try:
		opt_ok = isinstance(json.loads(s["options"]), dict)
	except (TypeError, ValueError):
		opt_ok = False
	chk.ok("%s: scan.options is a JSON object" % label, opt_ok, short(s["options"]))


# Runs the rest of argv under host name argv[1], in a UTS namespace of its own.
_AS_HOST = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
name = os.fsencode(sys.argv[1])
if libc.unshare(0x04000000) != 0 or libc.sethostname(name, len(name)) != 0:
    sys.exit("as-host: %s" % os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[2], sys.argv[2:])
"""


def as_host(host, *args, timeout=120, env=None):
	"""Runs fidx args as host name host (bytes) in a UTS namespace of its own; returns the
	CompletedProcess (rc in returncode, stdout, stderr)."""
	cmd = [b"/usr/bin/python3", b"-c", _AS_HOST.encode(), host, os.fsencode(FIDX)]
	cmd += [a if isinstance(a, bytes) else os.fsencode(a) for a in args]
	e = dict(os.environ)
	e.update(env or {})
	return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
			      env=e)
