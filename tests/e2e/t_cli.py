#!/usr/bin/python3
"""t_cli.py - the command line every command shares, checked on each of them.

  * Option errors name the option as given, in every command: a letter in the
    middle of a cluster ('-y' of -ya), an unknown long name, --NAME=VALUE on an
    option that takes no value (--help=x and another of the command's), a
    missing argument (the short form at the end of a cluster, the long form
    abbreviated: named in full), and an abbreviation of several long names
    (both named).  Which options a command has is read from its --help, so a
    new option is covered without editing this file.  Each is one 'fidx: '
    line and the command's usage status (2; 15 for diff and check).
  * Output that cannot be written: every command, each command's --help, scan
    --version, fidx --help, -h, --version, help and help COMMAND, into
    /dev/full and into a closed pipe: the usage status of a write failure
    (2; 14 for diff and check) and one line 'fidx: cannot write output: WHY'.
    A scan whose summary cannot be written is kept (its row is complete in
    the database) and the line says so and how to read its seal.
  * fidx help is fidx --help, fidx help COMMAND is COMMAND --help (exit 0);
    an unknown command is one line naming the commands at the least edit
    distance (at most 2, computed here), exit 2.
  * Small surprises: find -l shows a symlink's '-> TARGET' as ls -l does
    (every field against ls -ld); scans --help says its --scan default (every
    scan) and scans lists every scan; find --json and export jsonl give mode
    as the number lstat gives (permissions as stat.filemode); no '1 files'
    (or entries, dirs, errors, bytes, rows, groups...) in the text of scan,
    verify, dupes, match, export and a malformed hash list; a rescan that
    reused every digest (and a --hash none scan) says 'nothing read'.
  * FIDX_DB: from a folder holding another ./fidx.db, every command with
    FIDX_DB set answers as with --db FIDX_DB; scan without -o adds its scan to
    FIDX_DB (and makes no ./fidx.db); --db, -o and a first argument that is a
    database win over it, an empty FIDX_DB is unset; a missing FIDX_DB is one
    line that names it '(from FIDX_DB)'; every --help's --db line names it.
"""

import json
import os
import re
import sqlite3
import stat
import subprocess

import lib
from lib import Checker, TempDir, run_fidx, write

# The commands of the table, as the shell completions learn them (help is not one; push needs a
# server and is left to t_push.py).
COMMANDS = [c.decode() for c in (line.split(b"\t")[0] for line in
				  run_fidx("--completion-helper").out.splitlines())
	    if c not in (b"push", b"help")]
USAGE_STATUS = {"diff": 15, "check": 15}
WRITE_STATUS = {"diff": 14, "check": 14}


def help_options(cmd):
	"""
	The options cmd's --help lists: [(short letter or None, long name, takes
	an argument)], from lines "  -x, --name ARG  help" and "      --name ARG".
	"""
	out = run_fidx(cmd, "--help").out.decode()
	opts = []
	for line in out.splitlines():
		m = re.match(r"  (?:-(\S), |    )--([a-z0-9-]+)(?: (\S+))?(?:\s|$)", line)
		if m:
			arg = m.group(3) is not None and not m.group(3)[0].islower()
			opts.append((m.group(1), m.group(2), arg))
	return opts


def unique_prefix(name, names):
	"""The shortest prefix of name that no other of names starts with, if shorter than name."""
	for n in range(1, len(name)):
		p = name[:n]
		if sum(1 for x in names if x.startswith(p)) == 1:
			return p
	return None


def shared_prefix(names):
	"""(prefix, [names]) of a prefix that is no name itself and two or more names start with."""
	for n in (1, 2, 3):
		for name in names:
			p = name[:n]
			many = sorted(x for x in names if x.startswith(p))
			if len(many) > 1 and p not in names:
				return p, many
	return None, []


def check_one_error(chk, cmd, label, args, want):
	"""cmd ARGS fails with the usage status and one line holding each of want (bytes)."""
	res = run_fidx(cmd, *args, timeout=30)
	lines = res.err_lines()
	status = USAGE_STATUS.get(cmd, 2)
	chk.ok("%s %s: exit %d, one 'fidx: ' line naming %s" % (cmd, label, status, want),
	       res.rc == status and len(lines) == 1 and lines[0].startswith(b"fidx: ") and
	       all(w in lines[0] for w in want) and b"'%s'" % cmd.encode() not in
	       lines[0].split(b"(see")[0], repr(res))


def check_option_errors(chk, cmd):
	"""Every kind of option error, on cmd."""
	opts = help_options(cmd)
	if not chk.ok("%s --help lists options" % cmd, len(opts) > 2, repr(opts)):
		return
	shorts = {s for s, _, _ in opts if s}
	longs = [l for _, l, _ in opts]
	bad = next(c for c in "yYzZwW" if c not in shorts)
	# a refused letter first in a cluster: getopt has not moved past the word
	check_one_error(chk, cmd, "-%sa (cluster)" % bad, ["-%sa" % bad],
			[b"unknown option", b"'-%s'" % bad.encode()])
	check_one_error(chk, cmd, "--no-such-option", ["--no-such-option=1"],
			[b"unknown option", b"'--no-such-option'"])
	flags = [l for s, l, a in opts if not a and l != "help"]
	for name in ["help"] + flags[:1]:
		check_one_error(chk, cmd, "--%s=x" % name, ["--%s=x" % name],
				[b"'--%s'" % name.encode(), b"takes no argument"])
	with_arg = [(s, l) for s, l, a in opts if a]
	short_arg = next(((s, l) for s, l in with_arg if s), None)
	flag_short = next((s for s, l, a in opts if s and not a and s not in "hi"), None)
	if short_arg and flag_short:
		check_one_error(chk, cmd, "-%s%s (missing argument)" % (flag_short, short_arg[0]),
				["-%s%s" % (flag_short, short_arg[0])],
				[b"'-%s'" % short_arg[0].encode(), b"needs an argument"])
	elif short_arg:
		check_one_error(chk, cmd, "-%s (missing argument)" % short_arg[0],
				["-%s" % short_arg[0]],
				[b"'-%s'" % short_arg[0].encode(), b"needs an argument"])
	if with_arg:
		name = with_arg[-1][1]
		abbrev = unique_prefix(name, longs) or name
		check_one_error(chk, cmd, "--%s (missing argument)" % abbrev, ["--%s" % abbrev],
				[b"'--%s'" % name.encode(), b"needs an argument"])
	prefix, many = shared_prefix(longs)
	if prefix:
		check_one_error(chk, cmd, "--%s (ambiguous)" % prefix, ["--%s" % prefix],
				[b"ambiguous", b"'--%s'" % prefix.encode()] +
				[b"--%s" % m.encode() for m in many])


def build(top):
	"""A tree with duplicates, scanned twice with a change between; returns (db, list)."""
	root = top + b"/tree"
	os.makedirs(root + b"/sub")
	write(root + b"/a.txt", b"alpha\n")
	write(root + b"/sub/b.txt", b"alpha\n")
	write(root + b"/c.bin", b"\0" * 5000)
	db = top + b"/w.db"
	res = run_fidx("scan", "-q", "-o", db, root)
	write(root + b"/c.bin", b"\1" * 6000)
	res2 = run_fidx("scan", "-q", "-o", db, root)
	write(root + b"/new.txt", b"new\n")
	lst = top + b"/list.sha256"
	write(lst, b"%s  a.txt\n" % lib.hashlib.sha256(b"alpha\n").hexdigest().encode())
	return root, db, lst, res.rc == 0 and res2.rc == 0


def check_write_failures(chk, top, root, db, lst):
	"""Every command and every help into /dev/full and a closed pipe."""
	runs = {
		"scans": ["scans", db], "find": ["find", db], "dupes": ["dupes", db],
		"du": ["du", db], "stats": ["stats", db], "match": ["match", "-q", db, lst],
		"export": ["export", "--db", db, "-f", "csv"], "diff": ["diff", "-q", db],
		"check": ["check", "-q", db], "verify": ["verify", db],
	}
	# Under ASan each command's help goes into the failing outputs once, as `CMD --help` and
	# `help CMD` in turn (both print it with the same code).
	asan = lib.is_asan()
	for n, cmd in enumerate(COMMANDS):
		status = WRITE_STATUS.get(cmd, 2)
		if cmd in runs:
			lib.check_write_errors(chk, cmd, *runs[cmd], status=status)
		if not asan or n % 2 == 0:
			lib.check_write_errors(chk, "%s --help" % cmd, cmd, "--help", status=status)
		if not asan or n % 2 == 1:
			lib.check_write_errors(chk, "help %s" % cmd, "help", cmd, status=status)
	lib.check_write_errors(chk, "scan --version", "scan", "--version")
	for args in (["--help"], ["-h"], ["--version"], ["help"]):
		lib.check_write_errors(chk, "fidx %s" % " ".join(args), *args)
	# scan: the scan is kept, and the line says how to see its seal
	for label, how in (("/dev/full", "full"), ("a closed pipe", "pipe")):
		sdb = top + b"/scan-%s.db" % how.encode()
		if how == "full":
			with open("/dev/full", "wb") as f:
				rc, err = lib.run_to(f.fileno(), "scan", "-q", "-o", sdb, root)
			why = b"No space left on device"
		else:
			r, w = os.pipe()
			os.close(r)
			rc, err = lib.run_to(w, "scan", "-q", "-o", sdb, root)
			os.close(w)
			why = b"Broken pipe"
		rows = lib.scan_rows(sdb) if os.path.exists(sdb) else []
		chk.ok("scan > %s: exit 2, one line naming the scan kept" % label,
		       rc == 2 and err == b"fidx: cannot write output: %s (scan 1 is kept; its seal:"
		       b" fidx verify --db '%s' --scan 1)\n" % (why, sdb), "rc=%d %r" % (rc, err))
		chk.ok("scan > %s: the scan is in the database, complete and sealed" % label,
		       len(rows) == 1 and rows[0]["status"] == "complete", repr(rows))
		res = run_fidx("verify", "--db", sdb, "--scan", "1")
		chk.ok("scan > %s: the command named shows the seal" % label,
		       res.rc == 0 and b"seal sha256:" in res.out, repr(res))


def osa_distance(a, b):
	"""Edit distance with swaps of neighbours (optimal string alignment)."""
	d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
	for i in range(len(a) + 1):
		d[i][0] = i
	for j in range(len(b) + 1):
		d[0][j] = j
	for i in range(1, len(a) + 1):
		for j in range(1, len(b) + 1):
			d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1,
				      d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
			if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
				d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
	return d[len(a)][len(b)]


def check_help_and_typos(chk):
	"""fidx help [COMMAND]; an unknown command suggests the closest ones."""
	top = run_fidx("--help")
	res = run_fidx("help")
	chk.ok("help: exit 0, the usage of --help", res.rc == 0 and res.out == top.out and
	       not res.err, repr(res))
	for cmd in COMMANDS:
		want = run_fidx(cmd, "--help")
		res = run_fidx("help", cmd)
		chk.ok("help %s: exit 0, %s --help" % (cmd, cmd),
		       res.rc == 0 and res.out == want.out and res.out.startswith(b"usage: fidx " +
										     cmd.encode()),
		       repr(res))
	typos = set()
	for cmd in COMMANDS:
		typos.add(cmd[1:])                            # first letter dropped
		typos.add(cmd[1] + cmd[0] + cmd[2:])  # two letters swapped
		typos.add(cmd + "x")
	typos |= {"xyzzy", "exprot", "scna", "d"}
	# Under ASan (a run costs ~6x there) each typo is tried in one of its two forms, in turn:
	# every typo still checked, each form on half of them.
	asan = lib.is_asan()
	for k, typo in enumerate(sorted(t for t in typos if t not in COMMANDS)):
		dist = {c: osa_distance(typo, c) for c in COMMANDS}
		best = min(dist.values())
		near = sorted(c for c in COMMANDS if dist[c] == best) \
			if best <= 2 and best < len(typo) else []
		forms = ([typo], ["help", typo])
		for args in forms[k % 2:k % 2 + 1] if asan else forms:
			res = run_fidx(*args)
			lines = res.err_lines()
			named = sorted(set(re.findall(rb"'([a-z]+)'", lines[0].split(b"mean", 1)[1])))\
				if len(lines) == 1 and b"did you mean" in lines[0] else []
			chk.ok("fidx %s: exit 2, one line naming %s" % (" ".join(args), near or "no command"),
			       res.rc == 2 and not res.out and len(lines) == 1 and
			       lines[0].startswith(b"fidx: unknown command '%s'" % typo.encode()) and
			       [n.decode() for n in named] == near, repr(res))


def ls_long(path):
	"""ls -ld's line of path (literal name, the time as find -l shows it), as bytes."""
	p = subprocess.run([b"ls", b"-ld", b"-N", b"--color=never", b"--time-style=+%Y-%m-%d %H:%M",
			    b"--", path], capture_output=True, env=dict(os.environ, LC_ALL="C.UTF-8"))
	return p.stdout.rstrip(b"\n")


def check_surprises(chk, top):
	"""find -l symlinks, scans --help, JSON mode, plurals, the read rate."""
	root = top + b"/small"
	os.makedirs(root + b"/dir")
	write(root + b"/file", b"x")
	write(root + b"/dir/copy", b"x")
	os.chmod(root + b"/file", 0o4751)
	for name, target in ((b"to-file", b"file"), (b"dangling", b"no such thing"),
			     (b"to dir", b"dir/"), (b"abs", b"/etc/passwd")):
		os.symlink(target, root + b"/" + name)
	lib.settle(root)
	db = top + b"/small.db"
	res = run_fidx("scan", "-q", "-o", db, root)
	chk.ok("setup: scan small", res.rc == 0, repr(res))

	# find -l against ls -ld, field by field (ls adds '.' or '+' for a context or an ACL)
	res = run_fidx("find", "-l", db)
	bad = []
	for line in res.out_lines():
		got = line.split(None, 7)
		path = got[7].split(b" -> ")[0] if len(got) == 8 else b""
		want = ls_long(path).split(None, 7)
		if want:
			want[0] = want[0].rstrip(b".+")
		if got != want:
			bad.append("%r: got %r, ls -ld %r" % (path, got, want))
	links = [l for l in res.out_lines() if l.startswith(b"l")]
	chk.ok("find -l: each line as ls -ld shows it, a symlink with '-> TARGET'",
	       res.rc == 0 and len(res.out_lines()) == 8 and len(links) == 4 and not bad,
	       "; ".join(bad[:3]) or repr(res))

	# scans: the --scan default it says is the one it has
	con = sqlite3.connect(db)
	con.execute("INSERT INTO scan (root, started_ns, status) VALUES ('/interrupted', 1,"
		    " 'interrupted')")
	con.commit()
	con.close()
	help_text = run_fidx("scans", "--help").out
	scan_line = [l for l in help_text.split(b"\n--")[0].split(b"\n") if b"--scan" in l]
	chk.ok("scans --help: --scan's default is every scan", b"default: every scan" in help_text and
	       b"newest complete" not in help_text, lib.short(scan_line))
	res = run_fidx("scans", "-0", db)
	chk.eq("scans: every scan listed, interrupted too", res.out.count(b"\0"),
	       len(lib.scan_rows(db)))

	# mode: the number the database holds, in find --json and export jsonl
	find_json = {json.loads(l)["path"]: json.loads(l) for l in run_fidx("find", "--json",
									     db).out_lines()}
	export_json = {json.loads(l)["path"]: json.loads(l) for l in
		       run_fidx("export", "--db", db, "-f", "jsonl").out_lines()}
	bad = []
	for path, o in find_json.items():
		st = os.lstat(path)
		e = export_json.get(path, {})
		if not (o.get("mode") == st.st_mode == e.get("mode") and
			o.get("permissions") == stat.filemode(st.st_mode)):
			bad.append("%s: find %r %r, export %r, lstat %d" % (
				path, o.get("mode"), o.get("permissions"), e.get("mode"), st.st_mode))
	chk.ok("--json: mode is lstat's st_mode (a number) in find and export, permissions"
	       " as filemode", len(find_json) == 8 and not bad, "; ".join(bad[:3]))

	# plurals: one of everything
	one = top + b"/one"
	os.makedirs(one)
	write(one + b"/fidx-race-delete-me", b"y")
	odb = top + b"/one.db"
	texts = []
	r = run_fidx("scan", "-q", "-o", odb, one, preload=lib.SHIM)
	texts.append(("scan", r))
	chk.ok("plurals: scan of a dir and a file that vanishes: '2 entries, 1 file, 1 dir, ...,"
	       " 1 error'", re.search(rb": 2 entries, 1 file, 1 dir, 1 B, 1 error, 0 hashed",
				      r.out) is not None, repr(r))
	fdb = top + b"/onefile.db"
	texts.append(("scan of a file", run_fidx("scan", "-o", fdb, root + b"/file")))
	texts.append(("verify", run_fidx("verify", fdb)))
	texts.append(("dupes", run_fidx("dupes", db)))
	lst = top + b"/one.list"
	write(lst, b"%s  x\na  short\n" % lib.hashlib.sha256(b"x").hexdigest().encode())
	texts.append(("match", run_fidx("match", "--show-malformed", fdb, lst)))
	texts.append(("export", run_fidx("export", "--db", odb, "-f", "sha256sum")))
	plural = re.compile(rb"(?<![\d.,])1 (?:regular )?(entries|files|dirs|errors|bytes|rows|groups|digits|"
			    rb"fields|copies|lines|scans|digests|roots)\b")
	for label, r in texts:
		found = plural.findall(r.out + r.err)
		chk.ok("plurals: %s says no '1 <plural>'" % label, r.rc in (0, 1) and not found and
		       (r.out or r.err), "%r in %r" % (found, r))

	# the read rate is of bytes read: none when every digest is reused
	rdb = top + b"/rate.db"
	first = run_fidx("scan", "-o", rdb, root)
	again = run_fidx("scan", "-o", rdb, root)
	none = run_fidx("scan", "--hash", "none", "-o", rdb, root)
	chk.ok("rate: a first scan gives the rate of what it read",
	       re.search(rb"B/s read\)", first.out) is not None, repr(first))
	for label, r in (("a rescan that reused every digest", again), ("--hash none", none)):
		chk.ok("rate: %s says 'nothing read', no B/s" % label,
		       r.rc == 0 and b"nothing read" in r.out and b"B/s" not in r.out, repr(r))


def count_scans(db):
	"""The scan rows of db; 0 when it does not exist (and it is not made)."""
	return len(lib.scan_rows(db)) if os.path.exists(db) else 0


def check_fidx_db(chk, top):
	"""FIDX_DB in every command, and its precedence."""
	tree_a, tree_b = top + b"/env-a", top + b"/env-b"
	for t, data in ((tree_a, b"a"), (tree_b, b"b")):
		os.makedirs(t + b"/sub")
		write(t + b"/one", data)
		write(t + b"/sub/two", data)
	env_db = top + b"/env.db"
	elsewhere = top + b"/elsewhere"
	os.makedirs(elsewhere)
	env = {"FIDX_DB": os.fsdecode(env_db)}
	for n in range(2):
		res = run_fidx("scan", "-q", tree_a, env=env, cwd=elsewhere)
		chk.ok("FIDX_DB: scan without -o, run %d: exit 0" % (n + 1), res.rc == 0, repr(res))
		write(tree_a + b"/sub/two", b"changed %d" % n)
	chk.ok("FIDX_DB: the scans went to FIDX_DB, no ./fidx.db made",
	       count_scans(env_db) == 2 and not os.path.exists(elsewhere + b"/fidx.db"),
	       repr(os.listdir(elsewhere)))
	if os.path.exists(elsewhere + b"/fidx.db"):  # the base made it from the scans above
		os.unlink(elsewhere + b"/fidx.db")
	res = run_fidx("scan", "-q", "-o", b"fidx.db", tree_b, env=env, cwd=elsewhere)
	chk.ok("FIDX_DB: -o wins", res.rc == 0 and count_scans(env_db) == 2 and
	       count_scans(elsewhere + b"/fidx.db") == 1, repr(res))
	write(tree_a + b"/one", b"changed")
	lst = top + b"/env.list"
	write(lst, b"%s  x\n" % lib.hashlib.sha256(b"a").hexdigest().encode())
	runs = {"scans": [], "find": ["sub"], "dupes": [], "du": [], "stats": [],
		"match": ["-q", lst], "export": ["-f", "csv"], "diff": ["-q"], "check": ["-q"],
		"verify": []}
	for cmd, args in runs.items():
		want = run_fidx(cmd, "--db", env_db, *args, cwd=elsewhere)
		got = run_fidx(cmd, *args, env=env, cwd=elsewhere)
		local = run_fidx(cmd, "--db", b"fidx.db", *args, cwd=elsewhere)
		chk.ok("FIDX_DB: %s reads it, as --db does" % cmd,
		       got.rc == want.rc and got.out == want.out and got.out != local.out and
		       got.rc in (0, 1, 4), "FIDX_DB %r; --db %r" % (got, want))
		res = run_fidx(cmd, "--db", b"fidx.db", *args, env=env, cwd=elsewhere)
		chk.ok("FIDX_DB: %s --db ./fidx.db wins over it" % cmd,
		       res.rc == local.rc and res.out == local.out, "%r; want %r" % (res, local))
		res = run_fidx(cmd, *args, env={"FIDX_DB": ""}, cwd=elsewhere)
		chk.ok("FIDX_DB: %s with FIDX_DB empty reads ./fidx.db" % cmd,
		       res.rc == local.rc and res.out == local.out, "%r; want %r" % (res, local))
		missing = top + b"/no-such-dir/missing.db"
		res = run_fidx(cmd, *args, env={"FIDX_DB": os.fsdecode(missing)}, cwd=elsewhere)
		lib.check_fatal(chk, "FIDX_DB: %s with FIDX_DB missing" % cmd, res,
				mention=b"'%s' (from FIDX_DB)" % missing) if cmd not in ("diff", "check") \
			else chk.ok("FIDX_DB: %s with FIDX_DB missing: exit 18, one line naming it" % cmd,
				    res.rc == 18 and len(res.err_lines()) == 1 and
				    b"'%s' (from FIDX_DB)" % missing in res.err, repr(res))
		help_text = run_fidx(cmd, "--help").out
		chk.ok("FIDX_DB: %s --help names it on the --db line" % cmd,
		       re.search(rb"--db DB +(?:[^\n]|\n {20,})*\$FIDX_DB", help_text) is not None,
		       lib.short(help_text))
	# a first argument that is a database wins over FIDX_DB
	want = run_fidx("find", b"fidx.db", "sub", cwd=elsewhere)
	res = run_fidx("find", b"fidx.db", "sub", env=env, cwd=elsewhere)
	chk.ok("FIDX_DB: a positional DB wins", res.rc == 0 and res.out == want.out and
	       tree_b in res.out and tree_a not in res.out, repr(res))
	missing = top + b"/no-such-dir/missing.db"
	res = run_fidx("scan", "-q", tree_a, env={"FIDX_DB": os.fsdecode(missing)}, cwd=elsewhere)
	lib.check_fatal(chk, "FIDX_DB: scan into a folder that does not exist", res,
			mention=b"(from FIDX_DB)")
	chk.ok("FIDX_DB: scan --help names it", b"$FIDX_DB" in run_fidx("scan", "--help").out)


EVIL = b"\x1b[31m\x9b\xff\x07"  # CSI, C1 CSI, a byte that is not UTF-8, BEL


def raw_controls(data):
	"""The bytes of data a terminal could obey: C0 but newline, DEL, C1, invalid UTF-8."""
	text = data.decode("utf-8", "surrogateescape")
	return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f or
		0xdc80 <= ord(c) <= 0xdcff]


def check_hostile_arguments(chk, top, db):
	"""Arguments holding control bytes come back quoted in every error, never raw."""
	evil = EVIL.decode("utf-8", "surrogateescape")
	cases = [
		["diff", "--ignore", evil, db], ["check", "--ignore", "size," + evil, db],
		["find", "--size", evil, db, "x"], ["find", "--newer", evil, db, "x"],
		["find", "--type", evil, db, "x"], ["find", "--scan", evil, db, "x"],
		["find", "-r", "(" + evil, db], ["export", "-f", evil, db],
		["scan", "-q", "-o", top + b"/h.db", top + b"/missing" + EVIL],
		["scan", "--hash", evil, top], ["scan", "--jobs", evil, top],
		["du", db, top + b"/nowhere" + EVIL], ["match", db, top + b"/nolist" + EVIL],
		["verify", "--scan", evil, db], ["dupes", top + b"/none" + EVIL],
		["stats", "--top", evil, db], [evil], ["help", evil], ["find", "--" + evil],
	]
	bad = []
	for args in cases:
		res = run_fidx(*args, timeout=30)
		if res.rc == 0 or not res.err or raw_controls(res.err):
			bad.append((args, res.rc, res.err[-200:]))
	chk.ok("hostile arguments: %d errors, each quoted (no control byte or invalid UTF-8"
	       " on stderr)" % len(cases), not bad, lib.short(bad[:3]))


def main():
	chk = Checker()
	with chk.guard("help and typos"):
		check_help_and_typos(chk)
	for cmd in COMMANDS:
		with chk.guard("option errors of %s" % cmd):
			check_option_errors(chk, cmd)
	with TempDir() as t:
		top = t.path.encode()
		root, db, lst, ok = build(top)
		if chk.ok("setup: two scans", ok):
			with chk.guard("write failures"):
				check_write_failures(chk, top, root, db, lst)
		with chk.guard("hostile arguments"):
			check_hostile_arguments(chk, top, db)
		with chk.guard("small surprises"):
			check_surprises(chk, top)
		with chk.guard("FIDX_DB"):
			check_fidx_db(chk, top)
	chk.done()


if __name__ == "__main__":
	main()
