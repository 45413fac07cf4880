#!/usr/bin/python3
"""t_browse.py - fidx browse driven through tmux (send-keys, capture-pane) and a pty.

A tree with known sizes, hard links (one inode under three names, two in one
folder), two identical files, a folder nobody can list (scanned as nobody: an
error row), folders with distinct mtimes, and hostile names (a newline, an
OSC that would retitle the window, an SGR that would colour, bytes that are
not UTF-8, a 250-byte name) is scanned; `fidx browse -b` then runs in a
private tmux server, in an 80x24 window, and every screen is compared with
the ground truth:

  * the header's totals and each line of a folder (size, count, marker,
    name) against `fidx du --json -b`, os.lstat and coreutils du;
  * each sort order (size, count, time, name, and each reversed), the
    apparent/allocated toggle, Enter and left (not above PATH);
  * hard links: counted once (coreutils du agrees), names but the first marked H;
  * help, info (full path, type, sizes, row id from the database, the error
    text), the duplicates of a file (the other copy named), a shell in the
    selected folder (`pwd > FILE; exit`), a resize;
  * hostile names shown escaped: no window title set, no colour obeyed, and
    (under a pty, every byte fidx writes) no byte of a name's escape sequences;
  * `q` leaves the terminal as it was (shell prompt, stty icanon echo);
  * not a terminal, a PATH argument, a PATH not in the scan: one line, exit 2.

Every wait polls the pane (wait_for) instead of sleeping.
"""

import json
import os
import pty
import re
import select
import shutil
import sqlite3
import subprocess
import time

import lib
from lib import Checker, TempDir, run_fidx, write

SOCK = "fidx-e2e-browse-%d" % os.getpid()
ENV = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8", SHELL="/bin/sh", PS1="$ ",
	   TERM="xterm-256color", HOME="/tmp")
ENV.pop("TMUX", None)
TIMEOUT = 20 if lib.is_asan() else 8
T0, STEP = 1_600_000_000, 86400 * 40  # the folders' times, STEP apart
LINE = re.compile(r"^\s*(\S+) \[([# ]{10})\] +([\d.]+)% (\d{4}-\d\d-\d\d| {9}-|.{7}) (.) (.*)$")


def tmux(*args, check=True):
	"""Runs a tmux command on the private server; returns its stdout as text."""
	p = subprocess.run(["tmux", "-L", SOCK, "-f", "/dev/null"] + list(args), env=ENV,
			   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
	if check and p.returncode != 0:
		raise RuntimeError("tmux %s: %s" % (" ".join(args), p.stderr.decode(errors="replace")))
	return p.stdout.decode("utf-8", "replace")


def screen(escapes=False):
	"""The pane's lines (with -e: its attributes as SGR sequences)."""
	args = ["capture-pane", "-p", "-t", "b"] + (["-e"] if escapes else [])
	return tmux(*args).split("\n")


def wait_for(pred, what, timeout=None):
	"""Polls the pane until pred(lines) is true; returns the lines (raises when it never is)."""
	end = time.monotonic() + (timeout or TIMEOUT)
	while True:
		lines = screen()
		if pred(lines):
			return lines
		if time.monotonic() > end:
			raise RuntimeError("timed out waiting for %s; screen:\n%s" % (what, "\n".join(lines)))
		time.sleep(0.02)


def settle(pred):
	"""Polls the pane until pred(lines) or the timeout; returns the last lines (no raise)."""
	end = time.monotonic() + TIMEOUT
	while True:
		lines = screen()
		if pred(lines) or time.monotonic() > end:
			return lines
		time.sleep(0.02)


def keys(*k):
	"""Sends keys to the pane (tmux key names, or literal text with -l when a str starts with '=')."""
	for x in k:
		if x.startswith("="):
			tmux("send-keys", "-t", "b", "-l", x[1:])
		else:
			tmux("send-keys", "-t", "b", x)


def status(lines):
	"""The last non-empty line of the pane (the status line)."""
	rest = [l for l in lines if l.strip()]
	return rest[-1] if rest else ""


def entries(lines):
	"""The entry lines of a browse screen: (size, bar, pct, count, marker, name) each."""
	out = []
	for l in lines[2:-1]:
		m = LINE.match(l.rstrip())
		if m:
			out.append((m.group(1), m.group(2), float(m.group(3)), m.group(4).strip(),
				    m.group(5), m.group(6)))
	return out


def shown(dirline):
	"""A predicate: the screen shows the folder dirline ('--- PATH ') and its status line."""
	return lambda lines: len(lines) > 2 and lines[1].startswith("--- " + dirline + " ") and \
		"sort:" in status(lines)


def sel_index(lines):
	"""The selected entry's index (0-based) from the status line's 'k/n'."""
	m = re.search(r"(\d+)/(\d+)\s*$", status(lines).rstrip())
	return int(m.group(1)) - 1 if m else None


def build(top):
	"""The tree; returns its root (bytes)."""
	r = top + b"/t"
	for d in (b"big", b"other", b"dup", b"old", b"weird", b"empty"):
		os.makedirs(r + b"/" + d)
	write(r + b"/big/a", os.urandom(50000))
	os.link(r + b"/big/a", r + b"/big/a2")
	os.link(r + b"/big/a", r + b"/other/alink")
	write(r + b"/big/b", os.urandom(20000))
	write(r + b"/big/c", os.urandom(1234))
	write(r + b"/other/x", os.urandom(7000))
	same = os.urandom(3000)
	write(r + b"/dup/one", same)
	write(r + b"/dup/two", same)
	write(r + b"/dup/three", os.urandom(3000))
	write(r + b"/old/f", os.urandom(10))
	os.makedirs(r + b"/locked/inner")
	write(r + b"/locked/inner/s", os.urandom(100))
	for name in (b"new\nline", b"esc\x1b]0;owned\x07title", b"red\x1b[31mname",
		     b"bad\xff\xfename", b"L" * 250):
		write(r + b"/weird/" + name, b"w")
	write(r + b"/top.txt", os.urandom(500))
	# Distinct times: 'old' oldest, 'dup' newest (its subtree's newest entry).
	for i, d in enumerate((b"old", b"weird", b"locked", b"empty", b"other", b"big", b"dup")):
		t = T0 + i * STEP
		for dp, dn, fn in os.walk(r + b"/" + d):
			for n in fn:
				os.utime(os.path.join(dp, n), (t, t), follow_symlinks=False)
			os.utime(dp, (t, t))
	os.utime(r + b"/top.txt", (T0 - 10 * STEP, T0 - 10 * STEP))
	os.chmod(r + b"/locked", 0)
	os.chmod(top, 0o755)
	for dp, dn, fn in os.walk(r):
		if dp != r + b"/locked":
			os.chmod(dp, 0o755)
	return r


def du_json(db, path):
	"""fidx du --json -b -d 9 of path: {path: row}."""
	res = run_fidx("du", "--json", "-b", "-d", "9", db, path)
	assert res.rc == 0, repr(res)
	return {os.fsencode(json.loads(l)["path"]) if "path_base64" not in json.loads(l) else None:
		json.loads(l) for l in res.out_lines()}


def coreutils_du(path, apparent):
	"""Bytes coreutils du reports for path alone."""
	args = ["du", "-s", "-B1"] + (["--apparent-size"] if apparent else []) + [path]
	return int(subprocess.run(args, stdout=subprocess.PIPE, check=True).stdout.split()[0])


def truth_children(root, path, du):
	"""{name (str, as shown, no '/'): (apparent, allocated, count or '', is_dir)} of path's children."""
	out = {}
	for n in os.listdir(path):
		p = path + b"/" + n
		st = os.lstat(p)
		if os.path.isdir(p) and not os.path.islink(p):
			d = du[p]
			out[n] = (d["apparent"], d["allocated"], str(d["entries"] - 1), True)
		else:
			out[n] = (st.st_size, st.st_blocks * 512, "", False)
	return out


def check_listing(chk, label, lines, truth, allocated):
	"""Each entry line against truth (names plain ASCII only); the bar and percentages."""
	got = {}
	for size, bar, pct, count, mark, name in entries(lines):
		got[name.rstrip("/")] = (int(size), count, bar, pct, name.endswith("/"))
	want = {os.fsdecode(n): v for n, v in truth.items() if n.isascii() and n.isalnum() or
		n in (b"top.txt",)}
	bad = []
	for n, (app, alloc, count, isdir) in want.items():
		g = got.get(n)
		s = alloc if allocated else app
		if not g or g[0] != s or g[1] != count or g[4] != isdir:
			bad.append((n, g, (s, count, isdir)))
	chk.ok("%s: every entry's size, count and '/' as du and lstat say" % label,
	       not bad and len(want) > 1, lib.short(bad))
	largest = max(g[0] for g in got.values()) if got else 0
	total = sum(1 for g in got.values())
	wrong = [(n, g[2]) for n, g in got.items()
		 if largest and g[2].count("#") != int(g[0] * 10 // largest)]
	chk.ok("%s: bars against the largest entry (%d entries)" % (label, total), not wrong,
	       lib.short(wrong))
	return got


def check_main(chk, td, root, db):
	"""Everything in one tmux window, one session of fidx browse after another."""
	du = du_json(db, root)
	tmux("new-session", "-d", "-s", "b", "-x", "80", "-y", "24", "/bin/sh")
	tmux("set-option", "-g", "status", "off")
	wait_for(lambda l: any("$" in x for x in l), "a shell prompt")
	keys("=%s browse -b %s %s; echo rc=$?" % (lib.FIDX, os.fsdecode(db), os.fsdecode(root)),
	     "Enter")
	lines = wait_for(shown(os.fsdecode(root)), "the first screen")
	top = du[root]
	head = "scan 1: apparent %d, allocated %d, %d entries, %d errors" % (
		top["apparent"], top["allocated"], top["entries"], top["errors"])
	chk.ok("header: scan id, totals and errors as du --json", lines[0].startswith(head),
	       "%r, want %r" % (lines[0], head))
	rest = lines[0][len(head):].strip()
	chk.ok("header: the scan's root, whole or cut with ...", rest == os.fsdecode(root) or
	       (rest.endswith("...") and len(rest) > 6 and os.fsdecode(root).startswith(rest[:-3])),
	       lines[0])
	truth = truth_children(root, root, du)
	got = check_listing(chk, "root", lines, truth, False)
	sizes = [int(e[0]) for e in entries(lines)]
	chk.ok("sort by size (default): largest first", sizes == sorted(sizes, reverse=True) and
	       "sort: size, largest first" in status(lines), lib.short(sizes))
	chk.ok("every entry of the root listed", len(entries(lines)) == len(truth),
	       "%d lines, %d entries" % (len(entries(lines)), len(truth)))
	pct = {n: g[3] for n, g in got.items()}
	want_pct = {n: round(truth[os.fsencode(n)][0] * 100 / top["apparent"], 1) for n in pct}
	chk.ok("percent of the folder's total", all(abs(pct[n] - want_pct[n]) < 0.051 for n in pct),
	       lib.short((pct, want_pct)))
	chk.ok("locked: marked ! (its error)", any(e[5] == "locked/" and e[4] == "!"
						  for e in entries(lines)), lib.short(entries(lines)))

	# The toggle.
	keys("a")
	lines = wait_for(lambda l: "allocated" in status(l), "allocated sizes")
	check_listing(chk, "allocated", lines, truth, True)
	sizes = [int(e[0]) for e in entries(lines)]
	chk.ok("allocated: sorted by allocated size", sizes == sorted(sizes, reverse=True),
	       lib.short(sizes))
	keys("a")
	lines = wait_for(lambda l: "apparent" in status(l), "apparent sizes again")
	chk.ok("a again: apparent sizes", [int(e[0]) for e in entries(lines)] ==
	       sorted((v[0] for v in truth.values()), reverse=True), lib.short(entries(lines)))

	# Sorts: count, time, name, each reversed.
	keys("C")
	lines = wait_for(lambda l: "sort: count, most" in status(l), "sort by count")
	cnt = [int(e[3] or 0) for e in entries(lines)]
	chk.ok("C: most entries first", cnt == sorted(cnt, reverse=True) and cnt[0] > 0, cnt)
	keys("C")
	lines = wait_for(lambda l: "sort: count, fewest" in status(l), "count reversed")
	cnt = [int(e[3] or 0) for e in entries(lines)]
	chk.ok("C again: fewest first", cnt == sorted(cnt), cnt)
	keys("M")
	lines = wait_for(lambda l: "sort: time, newest" in status(l), "sort by time")
	order = [e[5].rstrip("/") for e in entries(lines)]
	latest = {}
	for n in os.listdir(root):
		p = root + b"/" + n
		t = os.lstat(p).st_mtime_ns
		for dp, dn, fn in os.walk(p):
			for x in dn + fn:
				t = max(t, os.lstat(os.path.join(dp, x)).st_mtime_ns)
		latest[os.fsdecode(n)] = t // 10**9
	want = sorted(latest, key=lambda n: (-latest[n], n))
	chk.eq("M: newest below first (mtimes set apart)", order, want)
	newest = time.strftime("%Y-%m-%d", time.gmtime(T0 + 6 * STEP))
	chk.ok("M: the date column (dup's newest: %s)" % newest,
	       entries(lines) and entries(lines)[0][3] == newest,
	       lib.short(entries(lines)))
	keys("M")
	lines = wait_for(lambda l: "sort: time, oldest" in status(l), "time reversed")
	chk.eq("M again: oldest first", [e[5].rstrip("/") for e in entries(lines)],
	       sorted(latest, key=lambda n: (latest[n], n)))
	keys("n")
	lines = wait_for(lambda l: "sort: name, A-Z" in status(l), "sort by name")
	names = [e[5].rstrip("/") for e in entries(lines)]
	chk.eq("n: by name", names, sorted(os.fsdecode(n) for n in truth))
	keys("n")
	lines = wait_for(lambda l: "sort: name, Z-A" in status(l), "name reversed")
	chk.eq("n again: Z-A", [e[5].rstrip("/") for e in entries(lines)],
	       sorted((os.fsdecode(n) for n in truth), reverse=True))
	keys("n")
	lines = wait_for(lambda l: "sort: name, A-Z" in status(l), "sort by name")

	# Enter big (names A-Z: big is the first), hard links, and back up.
	names = [e[5].rstrip("/") for e in entries(lines)]
	moves = []
	for k, want in (("End", len(names) - 1), ("PPage", 0), ("NPage", len(names) - 1),
			("k", len(names) - 2), ("Up", len(names) - 3), ("j", len(names) - 2),
			("Home", 0)):
		keys(k)
		moves.append((k, sel_index(settle(lambda l: sel_index(l) == want)), want))
	chk.ok("End, PgUp, PgDn, k, Up, j, Home move the selection",
	       all(got == want for _, got, want in moves), moves)
	keys("Home")
	for _ in range(names.index("big")):
		keys("j")
	wait_for(lambda l: sel_index(l) == names.index("big"), "big selected")
	keys("Enter")
	lines = wait_for(shown(os.fsdecode(root + b"/big")), "big")
	got = check_listing(chk, "big", lines, truth_children(root, root + b"/big", du), False)
	marks = {e[5]: e[4] for e in entries(lines)}
	want_big = coreutils_du(root + b"/big", True)
	chk.ok("big: counted once, as coreutils du -s --apparent-size (%d)" % want_big,
	       re.search(r"apparent %d " % want_big, status(lines)) is not None, status(lines))
	keys("Left")
	lines = wait_for(shown(os.fsdecode(root)), "back at the root")
	chk.eq("left: back up, big still selected", sel_index(lines), names.index("big"))
	for _ in range(names.index("other") - names.index("big")):
		keys("j")
	wait_for(lambda l: sel_index(l) == names.index("other"), "other selected")
	keys("Enter")
	lines = wait_for(shown(os.fsdecode(root + b"/other")), "other")
	marks.update({"other/" + e[5]: e[4] for e in entries(lines)})
	three = [marks.get("a"), marks.get("a2"), marks.get("other/alink")]
	chk.ok("hard links: of a's three names only the first unmarked, the later two H",
	       sorted(three) == [" ", "H", "H"] and marks.get("b") == " ", lib.short(marks))
	keys("Left")
	wait_for(shown(os.fsdecode(root)), "back at the root")
	keys("Left")
	lines = wait_for(lambda l: "at the top" in status(l), "not above the top")
	chk.ok("left at the top: stays, says why", lines[1].startswith("--- %s " % os.fsdecode(root)),
	       lines[1])

	# Help.
	keys("?")
	lines = wait_for(lambda l: "fidx browse - help" in l[0], "help")
	text = "\n".join(lines)
	chk.ok("?: help names the keys and what the bar is against",
	       "sort by size" in text and "largest entry" in text and "a shell" in text, text)
	keys("Space")
	wait_for(shown(os.fsdecode(root)), "back from help")

	# Info on locked (its error).
	keys("Home")
	for _ in range(names.index("locked")):
		keys("j")
	wait_for(lambda l: sel_index(l) == names.index("locked"), "locked selected")
	keys("i")
	lines = wait_for(lambda l: "fidx browse - info" in l[0], "info")
	text = "\n".join(lines)
	con = sqlite3.connect(os.fsdecode(db))
	rid, err = con.execute("SELECT id, error FROM file WHERE scan_id = 1 AND CAST(path AS BLOB)"
			       " = ?", (root + b"/locked",)).fetchone()
	con.close()
	chk.ok("i: full path, type, row id and error text of the row",
	       ("path      %s/locked" % os.fsdecode(root)) in text and "type      directory" in text
	       and ("row id    %d of scan 1" % rid) in text and err[:30] in text, text)
	keys("q")
	wait_for(shown(os.fsdecode(root)), "back from info")

	# Duplicates of dup/one.
	keys("Home")
	for _ in range(names.index("dup")):
		keys("j")
	wait_for(lambda l: sel_index(l) == names.index("dup"), "dup selected")
	keys("Enter")
	lines = wait_for(shown(os.fsdecode(root + b"/dup")), "dup")
	if "sort: name, A-Z" not in status(lines):
		keys("n")
	lines = wait_for(lambda l: "sort: name, A-Z" in status(l), "dup by name")
	dn = [e[5] for e in entries(lines)]
	keys("Home")
	for _ in range(dn.index("one")):
		keys("j")
	wait_for(lambda l: sel_index(l) == dn.index("one"), "one selected")
	keys("d")
	lines = wait_for(lambda l: "duplicates of" in l[0], "the duplicates page")
	text = "\n".join(lines)
	chk.ok("d: the other copy named, the unrelated file of the same size not",
	       ("  %s/dup/two" % os.fsdecode(root)) in text and "2 files of" in text
	       and "three" not in text, text)
	keys("Escape")
	wait_for(shown(os.fsdecode(root + b"/dup")), "back from duplicates")
	keys("Home")
	for _ in range(dn.index("three")):
		keys("j")
	wait_for(lambda l: sel_index(l) == dn.index("three"), "three selected")
	keys("d")
	lines = wait_for(lambda l: "duplicates of" in l[0] or "no other file" in status(l),
			 "duplicates of three")
	chk.ok("d on a file without a copy: says so", "no other file" in status(lines),
	       status(lines))

	# A shell in big.
	keys("Left")
	wait_for(shown(os.fsdecode(root)), "the root")
	keys("Home")
	for _ in range(names.index("big")):
		keys("j")
	wait_for(lambda l: sel_index(l) == names.index("big"), "big selected")
	out = os.fsdecode(os.fsencode(td) + b"/pwd.txt")
	keys("b")
	wait_for(lambda l: any("exit it to come back" in x for x in l), "the shell")
	keys("=pwd > %s; exit" % out, "Enter")
	lines = wait_for(lambda l: "back from the shell" in status(l), "back from the shell")
	with open(out, "rb") as f:
		chk.eq("b: a shell in the selected folder", f.read().strip(), root + b"/big")
	chk.ok("b: the browser redrawn after the shell",
	       lines[1].startswith("--- %s " % os.fsdecode(root)), lines[:2])

	# Resize.
	tmux("resize-window", "-t", "b", "-x", "100", "-y", "30")
	lines = wait_for(lambda l: len(l) >= 30 and "sort:" in l[29], "the resized screen")
	chk.ok("resize: the status line at the new bottom", "sort:" in lines[29], lines[-3:])
	tmux("resize-window", "-t", "b", "-x", "80", "-y", "24")
	wait_for(lambda l: "sort:" in l[23], "back to 80x24")

	# Hostile names.
	keys("Home")
	for _ in range(names.index("weird")):
		keys("j")
	wait_for(lambda l: sel_index(l) == names.index("weird"), "weird selected")
	keys("Enter")
	lines = wait_for(shown(os.fsdecode(root + b"/weird")), "weird")
	text = "\n".join(lines)
	chk.ok("hostile names escaped: \\n, \\x1b, \\x07, \\xff",
	       "new\\nline" in text and "red\\x1b[31mname" in text and
	       "esc\\x1b]0;owned\\x07title" in text and "bad\\xff\\xfename" in text, text)
	chk.ok("a 250-byte name cut at the screen's edge with ...",
	       any(l.rstrip().endswith("LLL...") and len(l.rstrip()) == 80 for l in lines), text)
	title = tmux("display-message", "-p", "-t", "b", "#{pane_title}")
	chk.ok("no name retitled the window (%r)" % title.strip(), "owned" not in title, title)
	esc = "\n".join(screen(escapes=True))
	sgr = set(re.findall(r"\x1b\[([0-9;]*)m", esc))
	chk.ok("no colour obeyed: only reverse video and the defaults on the pane", sgr <= {"7", "0", "27", "39", "49", ""},
	       sorted(sgr))

	# q restores the terminal.
	keys("q")
	lines = wait_for(lambda l: any(x.startswith("rc=") for x in l), "fidx's exit")
	chk.ok("q: exit 0, the shell's screen back", "rc=0" in lines and
	       not any(x.startswith("--- ") for x in lines), lines)
	keys("=stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e echo -e -icanon -e -echo "
	     "| tr '\\n' ' '; echo", "Enter")
	lines = wait_for(lambda l: any("icanon" in x and "stty" not in x for x in l), "stty")
	modes = [x for x in lines if "icanon" in x and "stty" not in x][0].split()
	chk.eq("q: the terminal's modes restored (icanon, echo)", sorted(modes), ["echo", "icanon"])

	# A PATH argument: starts there, does not go above it.
	keys("=%s browse -b %s %s/big 2>%s/err; echo rc=$?" % (
		lib.FIDX, os.fsdecode(db), os.fsdecode(root), td), "Enter")
	lines = wait_for(shown(os.fsdecode(root + b"/big")), "browse of big")
	keys("Left")
	lines = wait_for(lambda l: "at the top" in status(l), "not above PATH")
	chk.ok("PATH: starts there and stays below it",
	       lines[1].startswith("--- %s/big " % os.fsdecode(root)), lines[1])
	keys("q")
	wait_for(lambda l: sum(1 for x in l if x.startswith("rc=")) >= 2, "the second exit")
	with open(os.path.join(td, "err"), "rb") as f:
		chk.eq("nothing on stderr", f.read(), b"")


def on_pty(args, send=b"", until=b"sort:", env=None):
	"""
	Runs fidx with stdin and stdout a pty and stderr a pipe; once its output
	holds until (when send), sends send.  Returns (status, every byte of its
	output, stderr).
	"""
	master, slave = pty.openpty()
	os.set_blocking(master, False)
	subprocess.run(["stty", "-F", os.ttyname(slave), "cols", "80", "rows", "24"], check=True)
	p = subprocess.Popen([lib.FIDX] + list(args), stdin=slave, stdout=slave,
			     stderr=subprocess.PIPE, env=dict(ENV, **(env or {})),
			     start_new_session=True)
	os.close(slave)
	out, sent = b"", False
	end = time.monotonic() + TIMEOUT * 3
	while time.monotonic() < end:
		r, _, _ = select.select([master], [], [], 0.1)
		if r:
			try:
				chunk = os.read(master, 65536)
			except OSError:
				break
			if not chunk:
				break
			out += chunk
		if send and not sent and until in out:
			os.write(master, send)
			sent = True
		if p.poll() is not None and not r:
			break
	if p.poll() is None:
		p.kill()
	err = p.stderr.read()
	p.wait()
	os.close(master)
	return p.returncode, out, err


def check_pty(chk, root, db):
	"""Every byte fidx writes, errors, refusal off a terminal."""
	rc, out, err = on_pty(["browse", "-b", db, root + b"/weird"], send=b"q")
	chk.ok("pty: browse of weird quits with exit 0", rc == 0, (rc, err))
	bad = [s for s in (b"\x1b]0;owned", b"\x1b[31m", b"\xff\xfe", b"new\nline", b"\x07title")
	       if s in out]
	chk.ok("pty: no byte of a name's control sequences reaches the terminal",
	       not bad and b"red\\x1b[31mname" in out, lib.short((bad, out[-300:])))
	rc, out, err = on_pty(["browse", db, "/nonexistent/x"])
	chk.ok("PATH no scan holds: exit 2, one line naming it", rc == 2 and
	       err.count(b"\n") == 1 and b"no selected scan holds '/nonexistent/x'" in err, (rc, err))
	rc, out, err = on_pty(["browse", db, root + b"/nothere"])
	chk.ok("PATH not in the scan: exit 2, one line naming it", rc == 2 and
	       err.count(b"\n") == 1 and b"no entry '" + root + b"/nothere' in scan 1" in err,
	       (rc, err))
	rc, out, err = on_pty(["browse", db, root + b"/top.txt"])
	chk.ok("PATH a file: exit 2, not a directory", rc == 2 and b"not a directory" in err,
	       (rc, err))
	res = run_fidx("browse", db)
	chk.ok("not a terminal: exit 2, one line", res.rc == 2 and len(res.err_lines()) == 1 and
	       b"needs a terminal" in res.err and not res.out, repr(res))
	res = run_fidx("browse", "--help")
	chk.ok("--help: exit 0, the keys", res.rc == 0 and b"usage: fidx browse" in res.out and
	       b"Keys:" in res.out, repr(res))


def check_no_shell(chk, td, root, db):
	"""b on a scan of another host: one line on the status bar, no shell."""
	other = os.fsencode(td) + b"/other.db"
	shutil.copy(db, other)
	con = sqlite3.connect(os.fsdecode(other))
	try:
		con.execute("UPDATE scan SET host = 'elsewhere.example' WHERE id = 1")
		con.commit()
	except sqlite3.DatabaseError as e:
		con.close()
		chk.skip("b refused for another host", "the scan row cannot be changed: %s" % e)
		return
	con.close()
	rc, out, err = on_pty(["browse", other, root], send=b"bq", until=b"sort:")
	chk.ok("b on another host's scan: refused with its reason, no shell",
	       rc == 0 and b"made on host elsewhere.example" in out and
	       b"exit it to come back" not in out, lib.short((rc, err, out[-400:])))


def main():
	chk = Checker()
	if not shutil.which("tmux"):
		chk.ok("tmux installed (scripts/install-deps)", False, "no tmux")
		chk.done()
	with TempDir() as td:
		top = os.fsencode(td.path)
		root = build(top)
		dbdir = top + b"/db"
		os.mkdir(dbdir)
		os.chown(dbdir, lib.NOBODY, lib.NOBODY)
		db = dbdir + b"/b.db"
		res = run_fidx("scan", "-q", "--hash", "none", "-o", db, root, uid=lib.NOBODY)
		if not chk.ok("scan as nobody: exit 1 (locked unreadable)", res.rc == 1, repr(res)):
			chk.done()
		try:
			with chk.guard("tmux session"):
				check_main(chk, td.path, root, db)
		finally:
			tmux("kill-server", check=False)
		with chk.guard("pty"):
			check_pty(chk, root, db)
		with chk.guard("another host"):
			check_no_shell(chk, td.path, root, db)
		os.chmod(root + b"/locked", 0o755)
	chk.done()


if __name__ == "__main__":
	main()
