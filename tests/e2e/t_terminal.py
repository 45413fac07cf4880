#!/usr/bin/python3
# e2e: alone (tests/e2e/run): it watches the progress line redraw while a scan runs.
"""t_terminal.py - what reaches a terminal, under a pseudo-terminal.

Names: a tree of hostile names (ESC sequences that colour the terminal and
rename its window, C1 controls in UTF-8, DEL, a newline, a tab, bytes that
are not UTF-8, quotes beside controls, a hostile directory, a symlink with a
hostile target) beside plain ones.  Each command that prints names (find,
find -l, find -0, find --json, stats, du, dupes, diff, check, match, scans,
verify, export csv, sha256sum, hashdeep, body, dfxml, jsonl) runs twice:

  * with stdout on a pty (raw mode, so the bytes are those written) and
    NO_COLOR=1 (the colours of paths are t_color.py's): no byte a terminal
    could obey reaches it (no C0 control but newline and NUL, no
    DEL, no C1 control, nothing that is not UTF-8), and every hostile name
    the command prints is shown as `ls -d --quoting-style=shell-escape`
    shows it (LC_ALL=C.UTF-8), plain names as they are; where that ls quotes
    a name wrongly (it does for some names holding a quote: its output does
    not give the name back in bash), fidx's form must give it back;
  * into a pipe: the names are there byte for byte, as before.

JSON, for every byte: a name per byte value 0x01..0xff (but '/') and per C1
control in UTF-8, in find --json: every line parses, every path comes back
(from path_base64 when it is not UTF-8), and no raw control byte is written.

The progress line of a slow scan (sparse files of 1 GiB, SHA-512, -j1) with
stderr on a pty of 120 columns, resized to 40 and then to 25 while it runs:
what the terminal receives is played on a model of a terminal (xterm's
rules: a character written in the last column wraps at the next one; CR,
LF, CSI K), and no redraw is wider than the width of the moment (after a
grace of 1 s for a redraw already on its way), none ever wraps, each
width was used (the line got narrower), and when the scan is over no
progress text is left on the screen.

Long queries (find, find -l, match, export over a database of 200,000 rows
made with SQL, 50,000 on a sanitizer build): with stderr on a pty and stdout into a pipe read slowly (so
the query lasts seconds), a progress line appears on the terminal ("N/TOTAL
rows read", TOTAL the rows of the selected scan as SQLite counts them), fits
its width, is erased at the end, and never reaches stdout, whose bytes are
those of the same query without a terminal; with stderr into a pipe, with
-q, and with stdout on the same terminal, no progress line is drawn.
"""

import hashlib
import json
import os
import re
import select
import signal
import sqlite3
import struct
import subprocess
import termios
import threading
import time
import tty
import fcntl

import lib
from lib import Checker, TempDir, run_fidx, write

HOSTILE = [
	b"evil\x1b[31mRED\x1b]0;pwned\x07.txt",
	b"csi\xc2\x9b31mC1.txt",
	b"osc\xc2\x9d0;title\xc2\x9c.txt",
	b"bad\xff\xfe.bin",
	b"trunc\xe2\x82",
	b"del\x7fete",
	b"new\nline",
	b"tab\there",
	b"it's\x01",
	b"\x01a'\x02",
	b"'\x1b",
	b"caf\xc3\xa9\x1b[2J",
	b"nonchar\xef\xbf\xbe\x01",
	b"\x1b",
	b"a'b\x01",
	b"q'q\x01'",
	b"x\x01'y\x02",
	b"unassigned\xcd\xb8\x01",
]
PLAIN = [b"plain.txt", b"sp ace", b"caf\xc3\xa9", b"quote'd"]
HOSTILE_DIR = b"dir\x1b[5m"
CONTENT = b"same content\n"
HOSTILE_TARGETS = [b"target\x1b]0;x\x07", b"\x01a'\x02", b"\x1bX'"]


def unsafe(name):
	"""Whether a name holds a C0 control, DEL, a C1 control or invalid UTF-8 (computed here)."""
	try:
		text = name.decode("utf-8")
	except UnicodeDecodeError:
		return True
	return any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in text)


def ls_quoted(path):
	"""
	ls -d --quoting-style=shell-escape PATH in C.UTF-8, without its newline;
	a relative name (a link target) is made as a file in a scratch folder first,
	a path gone since its scan for a moment.
	"""
	cwd, made = None, None
	if not path.startswith(b"/"):
		cwd = SCRATCH
		write(SCRATCH + b"/" + path, b"")
	elif not os.path.lexists(path):
		made = path
		write(path, b"")
	p = subprocess.run([b"ls", b"-d", b"--quoting-style=shell-escape", b"--", path],
			   capture_output=True, cwd=cwd,
			   env={"LC_ALL": "C.UTF-8", "PATH": os.environ["PATH"]})
	if made:
		os.unlink(made)
	return p.stdout[:-1]


SCRATCH = None  # a folder for ls_quoted(), set by main()


def bash_unquote(form):
	"""What bash makes of form as one word (printf %s)."""
	p = subprocess.run([b"bash", b"-c", b"printf %s " + form], capture_output=True,
			   env={"LC_ALL": "C.UTF-8", "PATH": os.environ["PATH"]})
	return p.stdout if p.returncode == 0 else None


class Display:
	"""How each path must be shown on a terminal: ls's form, checked by bash."""

	def __init__(self):
		self.cache = {}
		self.ls_wrong = []   # paths whose ls form bash does not read back

	def want(self, path):
		"""(form, exact): the form expected, and whether it must be exactly that."""
		if path not in self.cache:
			if not unsafe(path):
				self.cache[path] = (path, True)
			else:
				form = ls_quoted(path)
				good = bash_unquote(form) == path
				if not good:
					self.ls_wrong.append(path)
				self.cache[path] = (form, good)
		return self.cache[path]

	def shown(self, path, out):
		"""Whether out shows path as it must (for an ls-wrong name: any form bash reads back)."""
		form, exact = self.want(path)
		if exact:
			return form in out
		return any(bash_unquote(m) == path for m in candidate_forms(out))


def candidate_forms(out):
	"""The shell-quoted words in out (a quote, then quoted pieces and $'...' pieces)."""
	return re.findall(rb"(?:'[^']*'|\$'(?:[^'\\]|\\.)*'|\\')+", out)


def set_size(fd, rows, cols):
	"""Sets the window size of the terminal fd."""
	fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class Pty:
	"""
	Runs fidx with stdout and/or stderr on a pseudo-terminal (in raw mode:
	the bytes as written; else as a terminal gets them, LF as CR LF) and
	collects what the terminal receives, with the time of each read.
	"""

	def __init__(self, args, stdout_tty=True, stderr_tty=False, rows=24, cols=80, env=None,
		     cwd=None, throttle=None, raw=True):
		self.master, slave = os.openpty()
		if raw:
			tty.setraw(slave)
		set_size(slave, rows, cols)
		e = dict(os.environ)
		e.update(env or {})
		self.proc = subprocess.Popen(
			[lib.FIDX] + list(args), stdin=subprocess.DEVNULL,
			stdout=slave if stdout_tty else subprocess.PIPE,
			stderr=slave if stderr_tty else subprocess.PIPE, env=e, cwd=cwd,
			start_new_session=True)
		self.slave = slave
		self.chunks = []  # (monotonic time, bytes)
		self.resizes = [(0.0, cols)]  # (monotonic time, columns), the first for the start
		self.wanted = []  # sizes asked by resize(), made by the reader
		self.lock = threading.Lock()
		self.pipe_out = b""
		self.pipe_err = b""
		self.reader = threading.Thread(target=self._read)
		self.reader.start()
		self.throttle = throttle  # bytes of stdout taken per 0.05 s, or None
		self.out_reader = None
		if throttle and not stdout_tty:
			self.out_reader = threading.Thread(target=self._read_stdout)
			self.out_reader.start()

	def _read_stdout(self):
		"""Takes stdout slowly (throttle bytes every 0.05 s), so that a query lasts."""
		parts = []
		while True:
			b = self.proc.stdout.read(self.throttle)
			if not b:
				break
			parts.append(b)
			time.sleep(0.05)
		self.pipe_out = b"".join(parts)

	def _resize_now(self):
		"""In the reader: takes what was written first, then resizes (so times are in order)."""
		with self.lock:
			wanted, self.wanted = self.wanted, []
		for rows, cols in wanted:
			try:
				while select.select([self.master], [], [], 0)[0]:
					b = os.read(self.master, 65536)
					if not b:
						break
					self.chunks.append((time.monotonic(), b))
			except OSError:
				pass
			set_size(self.master, rows, cols)
			self.resizes.append((time.monotonic(), cols))
			try:
				os.killpg(self.proc.pid, signal.SIGWINCH)
			except ProcessLookupError:
				pass

	def _read(self):
		"""Collects the terminal's bytes until no process holds it."""
		while True:
			self._resize_now()
			try:
				r, _, _ = select.select([self.master], [], [], 0.05)
			except OSError:
				break
			if not r:
				if self.proc.poll() is not None and self.slave is None:
					# drain what is left, then stop
					try:
						while select.select([self.master], [], [], 0.05)[0]:
							b = os.read(self.master, 65536)
							if not b:
								break
							self.chunks.append((time.monotonic(), b))
					except OSError:
						pass
					break
				continue
			try:
				b = os.read(self.master, 65536)
			except OSError:  # EIO: every writer closed the terminal
				break
			if not b:
				break
			self.chunks.append((time.monotonic(), b))

	def resize(self, rows, cols):
		"""Changes the window size, as a terminal emulator does, and sends SIGWINCH."""
		with self.lock:
			self.wanted.append((rows, cols))

	def width_at(self, t):
		"""The columns the terminal had at monotonic time t."""
		return [c for at, c in self.resizes if at <= t][-1] if t >= self.resizes[0][0] \
			else self.resizes[0][1]

	def wait(self, timeout=120):
		"""Waits for the process; returns (exit status, terminal bytes)."""
		os.close(self.slave)
		self.slave = None
		if self.out_reader:
			self.out_reader.join(timeout)
			self.pipe_err = self.proc.stderr.read() if self.proc.stderr else b""
			self.proc.wait()
		else:
			try:
				self.pipe_out, self.pipe_err = self.proc.communicate(timeout=timeout)
			except subprocess.TimeoutExpired:
				os.killpg(self.proc.pid, signal.SIGKILL)
				self.pipe_out, self.pipe_err = self.proc.communicate()
		self.reader.join(timeout=10)
		os.close(self.master)
		return self.proc.returncode, b"".join(c for _, c in self.chunks)


def run_pty(*args, **kw):
	"""Runs fidx with stdout on a terminal; returns (exit status, terminal bytes, stderr)."""
	p = Pty(args, **kw)
	rc, out = p.wait()
	return rc, out, p.pipe_err


def raw_controls(out):
	"""The bytes in out a terminal could obey: C0 but newline and NUL, DEL, C1, invalid UTF-8."""
	bad = []
	text = out.decode("utf-8", "surrogateescape")
	for i, c in enumerate(text):
		o = ord(c)
		if (o < 0x20 and c not in "\n\0") or 0x7f <= o <= 0x9f or 0xdc80 <= o <= 0xdcff:
			bad.append((i, c))
	return bad


def build(top):
	"""The tree, scanned twice with changes between; returns (root, db, paths by kind)."""
	root = top + b"/names"
	os.makedirs(root + b"/" + HOSTILE_DIR)
	for n in HOSTILE + PLAIN:
		write(root + b"/" + n, CONTENT)
	write(root + b"/" + HOSTILE_DIR + b"/inner", CONTENT)
	for i, target in enumerate(HOSTILE_TARGETS):
		os.symlink(target, root + b"/link%d" % i)
	lib.settle(root)
	db = top + b"/names.db"
	r1 = run_fidx("scan", "-q", "-o", db, root)
	# scan 2: one hostile file changed, one added, one moved
	write(root + b"/" + HOSTILE[0], CONTENT + b"more")
	write(root + b"/added\x1b[1m", CONTENT)
	os.rename(root + b"/" + HOSTILE[1], root + b"/moved\xc2\x9b")
	r2 = run_fidx("scan", "-q", "-o", db, root)
	# for check: one more change on the live tree
	write(root + b"/" + HOSTILE[3], CONTENT + b"live")
	# a scan whose root itself is hostile
	hroot = top + b"/root\x1b[7m"
	os.makedirs(hroot)
	write(hroot + b"/f", b"x")
	r3 = run_fidx("scan", "-q", "-o", db, hroot)
	return root, hroot, db, all(r.rc == 0 for r in (r1, r2, r3))


def paths_of(db, scan_id):
	"""Every path of a scan, and those of its regular files, from the database."""
	con = lib.connect(db)
	rows = con.execute("SELECT path, type FROM file WHERE scan_id = ?", (scan_id,)).fetchall()
	con.close()
	return sorted(r[0] for r in rows), sorted(r[0] for r in rows if r[1] == b"f")


def check_names(chk, top):
	"""Every printer of names, on a terminal and into a pipe."""
	root, hroot, db, ok = build(top)
	if not chk.ok("setup: three scans", ok):
		return
	disp = Display()
	every, files = paths_of(db, 2)
	hostile = [p for p in every if unsafe(p)]
	hostile_files = [p for p in files if unsafe(p)]
	chk.ok("setup: the tree has hostile names, files and a directory",
	       len(hostile_files) >= len(HOSTILE) and root + b"/" + HOSTILE_DIR in hostile)
	lst = top + b"/names.sha256"
	write(lst, b"%s  x\n" % lib.hashlib.sha256(CONTENT).hexdigest().encode())
	vdb = top + b"/altered.db"
	with open(db, "rb") as f, open(vdb, "wb") as g:
		g.write(f.read())
	for suffix in (b"-wal", b"-shm"):
		if os.path.exists(db + suffix):
			with open(db + suffix, "rb") as f, open(vdb + suffix, "wb") as g:
				g.write(f.read())
	con = lib.connect(vdb)
	con.execute("UPDATE file SET size = size + 1 WHERE scan_id = 2 AND path = CAST(? AS TEXT)",
		    (root + b"/" + HOSTILE[2],))
	con.commit()
	con.close()
	changed = [root + b"/" + HOSTILE[0], root + b"/added\x1b[1m", root + b"/moved\xc2\x9b",
		   root + b"/" + HOSTILE[1]]
	# command, arguments, the paths it must print (raw into a pipe, shown on a terminal)
	s2 = ["--scan", "2"]
	cases = [
		("find", ["find", db] + s2, every),
		("find -l", ["find", "-l", db] + s2, every),
		("find -0", ["find", "-0", db] + s2, every),
		("stats", ["stats", "--top", "100", db] + s2, [root] + files),
		("du", ["du", "-d", "5", db] + s2, [p for p in every if p == root or
						  p == root + b"/" + HOSTILE_DIR]),
		("dupes", ["dupes", db] + s2, [p for p in files if not p.endswith(HOSTILE[0])]),
		("diff", ["diff", "-q", db, "1", "2"], changed),
		("diff -v", ["diff", "-q", "-v", db, "1", "2"], changed),
		("check", ["check", "-q", db, root], [root + b"/" + HOSTILE[3]]),
		("match", ["match", "-q", db, lst] + s2,
		 [p for p in files if not p.endswith(HOSTILE[0])]),
		("scans", ["scans", db], [root, hroot]),
		("verify", ["verify", vdb, "--scan", "2"], [root + b"/" + HOSTILE[2]]),
		("export csv", ["export", "--db", db, "-f", "csv"] + s2, every),
		("export sha256sum", ["export", "--db", db, "-f", "sha256sum"] + s2, None),
		("export hashdeep", ["export", "--db", db, "-f", "hashdeep"] + s2, None),
		("export body", ["export", "--db", db, "-f", "body"] + s2, None),
		("export dfxml", ["export", "--db", db, "-f", "dfxml"] + s2, None),
		("export jsonl", ["export", "--db", db, "-f", "jsonl"] + s2, None),
		("find --json", ["find", "--json", db] + s2, None),
	]
	pipe_exact = {"find": b"".join(p + b"\n" for p in every),
		      "find -0": b"".join(p + b"\0" for p in every)}
	shown_on_tty = {"export sha256sum": files, "export hashdeep": [p for p in files
									 if b"\n" not in p],
			"export body": every, "export dfxml": every}
	for label, args, printed in cases:
		# no colour: the check below admits no escape at all (t_color.py checks colours)
		rc, out, err = run_pty(*args, env={"NO_COLOR": "1"})
		pipe = run_fidx(*args)
		bad = raw_controls(out.replace(b"\r\n", b"\n") if label == "export csv" else out)
		chk.ok("%s on a terminal: no control byte or invalid UTF-8 reaches it" % label,
		       rc == pipe.rc and out and not bad,
		       "rc %r (pipe %r), %d bad, e.g. %r in %r" % (
			       rc, pipe.rc, len(bad), bad[:3], lib.short(out)))
		want_shown = printed if printed is not None else shown_on_tty.get(label, [])
		missing = [p for p in want_shown if not disp.shown(p, out)]
		if want_shown:
			chk.ok("%s on a terminal: each name as ls --quoting-style=shell-escape shows it"
			       % label, not missing, "%d of %d not shown, e.g. %r as %r; got %s" % (
				       len(missing), len(want_shown), missing[:1],
				       [disp.want(p)[0] for p in missing[:1]], lib.short(out)))
		if label in pipe_exact:
			chk.ok("%s into a pipe: byte for byte" % label,
			       pipe.rc == 0 and pipe.out == pipe_exact[label], repr(pipe))
		elif printed is not None:
			raw_missing = [p for p in printed if p not in pipe.out]
			chk.ok("%s into a pipe: the names byte for byte" % label,
			       pipe.rc in (0, 1, 4, 7) and not raw_missing,
			       "%r missing in %r" % (raw_missing[:2], pipe))
	# find -l: a symlink's target is shown quoted too
	for i, target in enumerate(HOSTILE_TARGETS):
		rc, out, _ = run_pty("find", "-l", db, "--scan", "2", "/link%d" % i)
		shown = out.rstrip(b"\n").split(b" -> ", 1)[-1]
		form, exact = disp.want(target)
		chk.ok("find -l on a terminal: the link target %r as ls shows it%s" % (
			target, "" if exact else " (ls's form reads back wrong: fidx's reads back)"),
		       rc == 0 and not raw_controls(out) and
		       (shown == form if exact else bash_unquote(shown) == target), repr(out))
	chk.ok("every ls form but those of names starting with a control and holding a quote"
	       " read back in bash", all(not p.startswith(b"/") and p[:1] < b" " and b"'" in p
					 for p in disp.ls_wrong), repr(disp.ls_wrong))


def check_json_bytes(chk, top):
	"""find --json with a name per byte value and per C1 control."""
	root = top + b"/bytes"
	os.makedirs(root)
	names = [b"b%02x-" % i + bytes([i]) + b"-" for i in range(1, 256) if i != 0x2f]
	names += [b"c1%02x-" % i + bytes([0xc2, i]) + b"-" for i in range(0x80, 0xa0)]
	for n in names:
		write(root + b"/" + n, b"")
	db = top + b"/bytes.db"
	res = run_fidx("scan", "-q", "--hash", "none", "-o", db, root)
	chk.ok("setup: scan the names of every byte", res.rc == 0, repr(res))
	res = run_fidx("find", "--json", db)
	got, bad = set(), []
	for line in res.out.split(b"\n")[:-1]:
		try:
			o = json.loads(line)
		except ValueError as e:
			bad.append("%r: %s" % (line[:80], e))
			continue
		import base64
		p = base64.b64decode(o["path_base64"]) if "path_base64" in o else o["path"].encode()
		got.add(p)
	want = {root} | {root + b"/" + n for n in names}
	chk.ok("find --json: every line parses and every path comes back", not bad and got == want,
	       "%s; missing %r" % ("; ".join(bad[:2]), sorted(want - got)[:3]))
	ctl = raw_controls(res.out.replace(b"\n", b""))
	chk.ok("find --json: no raw control byte (C0, DEL, C1) or invalid UTF-8 in the output",
	       not ctl, "%d, e.g. %r" % (len(ctl), ctl[:4]))


class Screen:
	"""A model of a terminal: cells, a cursor, xterm's deferred wrap, CR, LF and CSI K/J."""

	def __init__(self, cols):
		self.cols = cols
		self.rows = [[" "] * 1000]
		self.r = self.c = 0
		self.pending = False
		self.wraps = 0     # wraps of a progress redraw (a line that began with CR)
		self.unknown = []  # escape sequences the model does not know
		self.in_redraw = False

	def _put(self, ch):
		if self.pending:
			if self.in_redraw:
				self.wraps += 1
			self._down()
			self.c = 0
			self.pending = False
		self.rows[self.r][self.c] = ch
		if self.c == self.cols - 1:
			self.pending = True
		else:
			self.c += 1

	def _down(self):
		self.r += 1
		if self.r == len(self.rows):
			self.rows.append([" "] * 1000)

	def feed(self, data):
		"""Plays bytes (ASCII and escape sequences) on the screen."""
		i = 0
		while i < len(data):
			b = data[i:i + 1]
			if b == b"\x1b":
				m = re.match(rb"\x1b\[([0-9;?]*)([@-~])", data[i:])
				if not m:
					self.unknown.append(data[i:i + 8])
					i += 1
					continue
				if m.group(2) == b"K" and m.group(1) in (b"", b"0"):
					for k in range(self.c, len(self.rows[self.r])):
						self.rows[self.r][k] = " "
					self.pending = False
				else:
					self.unknown.append(m.group(0))
				i += len(m.group(0))
				continue
			if b == b"\r":
				self.c = 0
				self.pending = False
				# a redraw, unless a message follows (it may erase the line first)
				rest = re.sub(rb"^(?:\x1b\[[0-9;?]*[@-~])*", b"", data[i + 1:i + 40])
				self.in_redraw = not rest.startswith(b"fidx: ")
			elif b == b"\n":
				self._down()
				self.pending = False
				self.in_redraw = False
			else:
				self._put(b.decode("latin-1"))
			i += 1

	def text(self):
		"""The non-empty rows of the screen, right-stripped."""
		return [l for l in ("".join(r).rstrip() for r in self.rows) if l]


def redraws(chunks):
	"""
	The redraws in what a terminal received: (time, visible text) of each
	CR-started piece that is not a message ("fidx: ...", which may follow
	the erase of the line).
	"""
	out, cur, t_cur, started = [], b"", 0, False

	def end():
		text = re.sub(rb"\x1b\[[0-9;?]*[@-~]", b"", cur)
		if started and not text.startswith(b"fidx: "):
			out.append((t_cur, text))

	for t, data in chunks:
		for b in re.split(rb"(\r|\n)", data):
			if b in (b"\r", b"\n"):
				end()
				cur, started = b"", b == b"\r"
			else:
				cur += b
				t_cur = t
	end()
	return out


# Seconds after a resize in which a redraw may still be one drawn for the old
# width: the time between fidx's write and this test's read of it (a loaded
# machine delays the read), not a slowness of fidx, which asks the width at
# every redraw.
GRACE = 1.0


def check_progress(chk, top):
	"""A slow scan's progress line under a pty resized twice."""
	if not lib.SHIM or not os.path.exists(lib.SHIM):
		chk.ok("progress: race shim built", False, "FIDX_SHIM=%r does not exist" % lib.SHIM)
		return
	root = top + b"/slow"
	os.makedirs(root)
	# Some bytes to hash, then a file whose open the race shim holds until the
	# test releases it: the scan lasts until a second after the last resize
	# has had its grace, however fast or loaded the machine is.
	for i in range(2):
		lib.sparse(root + b"/big%d" % i, 1 << 28, [((1 << 28) - 1, b"!")])
	write(root + b"/fidx-race-hold", b"held")
	release = top + b"/release"
	db = top + b"/slow.db"
	p = Pty(["scan", "-j", "1", "--hash", "sha512", "-o", db, root], stdout_tty=False,
		stderr_tty=True, cols=120, raw=False,
		env={"LD_PRELOAD": lib.SHIM, "FIDX_RACE_RELEASE": release.decode(),
		     "ASAN_OPTIONS": ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"),
							  "verify_asan_link_order=0"]))})
	t0 = time.monotonic()
	for at, cols in ((1.5, 40), (3.0, 25)):
		time.sleep(max(0, t0 + at - time.monotonic()))
		p.resize(24, cols)
	time.sleep(max(0, t0 + 3.0 + GRACE + 1.0 - time.monotonic()))
	write(release, b"")
	rc, got = p.wait()
	chk.ok("progress: the scan ran (exit 0) and outlived the resizes", rc == 0 and
	       len(p.resizes) == 3 and p.chunks and p.chunks[-1][0] > p.resizes[-1][0] + 0.5,
	       "rc %r, resizes %r, after %.1f s" % (rc, p.resizes, time.monotonic() - t0))
	too_wide, used = [], {c: 0 for _, c in p.resizes}
	for t, s in redraws(p.chunks):
		if not s:
			continue  # the final erase
		now = p.width_at(t)
		grace = any(at <= t < at + GRACE for at, _ in p.resizes[1:])
		if len(s) > now and not grace:
			too_wide.append((round(t - t0, 2), now, s))
		if not grace:
			used[now] += 1
	chk.ok("progress: no redraw wider than the terminal of the moment", not too_wide,
	       "%d, e.g. %r" % (len(too_wide), too_wide[:2]))
	chk.ok("progress: redrawn at each width (the resizes were followed)",
	       all(used.values()), repr(used))
	wide = [s for t, s in redraws(p.chunks) if p.width_at(t) == 120]
	chk.ok("progress: at 120 columns the line is wider than 40 (the resize matters)",
	       any(len(s) > 40 for s in wide), lib.short(wide[-1:]))
	screen = Screen(120)
	for t, data in p.chunks:
		# What arrives within the grace after a resize may have been drawn before it.
		screen.cols = p.width_at(t - GRACE)
		screen.c = min(screen.c, screen.cols - 1)
		screen.feed(data)
	chk.ok("progress: no redraw ever wraps", screen.wraps == 0 and not screen.unknown,
	       "%d wraps, unknown %r" % (screen.wraps, screen.unknown[:3]))
	# what is left but the messages (a message may wrap: it is no redraw)
	left = [l for l in screen.text() if re.search(r"hashed|ETA|/s\b|\d+/\d+|entr", l)]
	chk.ok("progress: nothing is left on the screen after the scan", not left, repr(left))
	chk.ok("progress: the line was erased at the end", got.endswith(b"\r\x1b[K"),
	       repr(got[-40:]))


# On a sanitizer build a quarter (each query's stdout is read slowly all the same, so that it
# lasts seconds: the same redraws, a quarter of the rows to read around them).
BIG_ROWS = 50000 if lib.is_asan() else 200000


def big_database(top):
	"""A database whose scan 2 holds BIG_ROWS regular files, made with SQL."""
	tree = top + b"/tiny"
	os.makedirs(tree)
	write(tree + b"/a", b"a")
	db = top + b"/big.db"
	res = run_fidx("scan", "-q", "-o", db, tree)
	con = sqlite3.connect(db)
	con.execute("INSERT INTO scan (root, host, options, started_ns, finished_ns, status, entries,"
		    " files, dirs, bytes, errors) VALUES ('/big', 'made by SQL', '{\"hash\":\"sha256\"}',"
		    " 1, 2, 'complete', ?, ?, 0, ?, 0)", (BIG_ROWS, BIG_ROWS, BIG_ROWS))
	con.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
		    " INSERT INTO file (scan_id, path, name, ext, type, size, mode, uid, gid, nlink,"
		    " mtime_ns, sha256) SELECT 2, printf('/big/d%03d/file%07d.txt', i % 100, i),"
		    " printf('file%07d.txt', i), 'txt', 'f', 1, 33188, 0, 0, 1,"
		    " 1700000000000000000, randomblob(32) FROM n", (BIG_ROWS,))
	con.commit()
	n = con.execute("SELECT count(*) FROM file WHERE scan_id = 2").fetchone()[0]
	digest = con.execute("SELECT sha256 FROM file WHERE scan_id = 2 LIMIT 1").fetchone()[0]
	con.close()
	lst = top + b"/big.sha256"
	write(lst, digest.hex().encode() + b"  one\n")
	return db, lst, n, res.rc == 0


def check_query_progress(chk, top):
	"""The progress line of find, match and export on a terminal, and where it must not be."""
	db, lst, n, ok = big_database(top)
	if not chk.ok("setup: a database of %d rows" % BIG_ROWS, ok and n == BIG_ROWS, repr(n)):
		return
	cases = [("find", ["find", "--scan", "2", db]),
		 ("find -l", ["find", "-l", "--scan", "2", db]),
		 ("match --not", ["match", "--not", "-l", "--scan", "2", db, lst]),
		 ("export csv", ["export", "--db", db, "--scan", "2", "-f", "csv"])]
	line = re.compile(rb"(\d+)/(\d+) rows read")
	for label, args in cases:
		ref = run_fidx(*args)
		rate = max(len(ref.out) * 2 // 3, 1 << 20)  # stdout read in about 1.5 s
		p = Pty(args, stdout_tty=False, stderr_tty=True, cols=80, throttle=rate // 20,
			raw=False)
		rc, got = p.wait()
		draws = [s for _, s in redraws(p.chunks) if s]
		totals = {int(m.group(2)) for m in (line.search(s) for s in draws) if m}
		chk.ok("%s: a progress line on the terminal, of the %d rows of the scan" % (label, n),
		       rc == ref.rc and draws and totals == {n}, "rc %r/%r, %d redraws, totals %r, %r" % (
			       rc, ref.rc, len(draws), totals, lib.short(got[-200:])))
		chk.ok("%s: each redraw fits 80 columns" % label, all(len(s) < 80 for s in draws),
		       repr([s for s in draws if len(s) >= 80][:2]))
		screen = Screen(80)
		screen.feed(got)
		left = [l for l in screen.text() if re.search(r"rows read|rows/s|ETA", l)]
		chk.ok("%s: erased at the end, nothing left" % label, not left and screen.wraps == 0,
		       repr(left[:3]))
		chk.ok("%s: stdout holds the results alone, as without a terminal" % label,
		       p.pipe_out == ref.out and b"rows read" not in p.pipe_out,
		       "%d bytes, want %d" % (len(p.pipe_out), len(ref.out)))
		chk.ok("%s: with stderr into a pipe, no progress line" % label,
		       b"rows read" not in ref.err and b"\r" not in ref.err, lib.short(ref.err))
		p = Pty(args + ["-q"], stdout_tty=False, stderr_tty=True, cols=80, throttle=rate // 20)
		rc, got = p.wait()
		chk.ok("%s -q: no progress line" % label, rc == ref.rc and b"rows read" not in got,
		       lib.short(got))
		p = Pty(args, stdout_tty=True, stderr_tty=True, cols=80)
		rc, got = p.wait()
		chk.ok("%s with stdout on the same terminal: no progress line" % label,
		       rc == ref.rc and b"rows read" not in got and len(got) >= len(ref.out),
		       "rc %r, %d bytes" % (rc, len(got)))


def main():
	chk = Checker()
	global SCRATCH
	with TempDir() as t:
		top = t.path.encode()
		SCRATCH = top + b"/ls-scratch"
		os.makedirs(SCRATCH)
		with chk.guard("names on a terminal"):
			check_names(chk, top)
		with chk.guard("JSON of every byte"):
			check_json_bytes(chk, top)
		with chk.guard("the progress line of a scan"):
			check_progress(chk, top)
		with chk.guard("the progress line of a query"):
			check_query_progress(chk, top)
	chk.done()


if __name__ == "__main__":
	main()
