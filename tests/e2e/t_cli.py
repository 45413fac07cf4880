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
"""

import os
import re
import sqlite3

import lib
from lib import Checker, TempDir, run_fidx, write

COMMANDS = ["scan", "scans", "find", "dupes", "du", "stats", "match", "export", "diff",
	    "check", "verify"]
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
	for cmd in COMMANDS:
		status = WRITE_STATUS.get(cmd, 2)
		if cmd in runs:
			lib.check_write_errors(chk, cmd, *runs[cmd], status=status)
		lib.check_write_errors(chk, "%s --help" % cmd, cmd, "--help", status=status)
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


def main():
	chk = Checker()
	for cmd in COMMANDS:
		with chk.guard("option errors of %s" % cmd):
			check_option_errors(chk, cmd)
	with TempDir() as t:
		top = t.path.encode()
		root, db, lst, ok = build(top)
		if chk.ok("setup: two scans", ok):
			with chk.guard("write failures"):
				check_write_failures(chk, top, root, db, lst)
	chk.done()


if __name__ == "__main__":
	main()
