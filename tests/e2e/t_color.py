#!/usr/bin/python3
"""t_color.py - paths in colour (--color, NO_COLOR, TERM, LS_COLORS) on a terminal and off it.

A tree with a folder, a symlink, an executable, a .jpg, a plain file and
names holding escape sequences (one that renames the window, one that
colours) is scanned; `fidx find`, `du`, `dupes` and
`match` then run with stdout a pseudo-terminal (pty) or a pipe:

  * on a terminal by default: folders in GNU ls's 01;34, symlinks 01;36,
    executables 01;32, plain files uncoloured, as ls without LS_COLORS;
  * NO_COLOR=1, TERM=dumb, --color=never: no colour at all; into a pipe:
    none unless --color=always;
  * LS_COLORS: its folder colour, an extension matched without regard to
    case (*.JPG for p.jpg), the later of two values for one type, and a
    value that is not digits and ';' (an attempt to carry another escape
    sequence) ignored, the default kept;
  * every escape sequence on the terminal is a colour (ESC [ digits ; m):
    the hostile name is shell-quoted inside its colour, never obeyed;
  * du colours its folders, dupes and match their files (by extension);
  * --color=sometimes: exit 2, one line.
"""

import hashlib
import os
import pty
import re
import subprocess

import lib
from lib import Checker, TempDir, run_fidx, write

SGR = re.compile(rb"\x1b\[[0-9;]*m")


def on_tty(args, env=None):
	"""Runs fidx with stdout a pseudo-terminal; returns (status, what the terminal got)."""
	master, slave = pty.openpty()
	e = dict(os.environ, TERM="xterm")
	e.pop("NO_COLOR", None)
	e.pop("LS_COLORS", None)
	e.update(env or {})
	p = subprocess.Popen([lib.FIDX] + list(args), stdin=subprocess.DEVNULL, stdout=slave,
			     stderr=subprocess.PIPE, env=e)
	os.close(slave)
	out = b""
	while True:
		try:
			chunk = os.read(master, 65536)
		except OSError:
			break
		if not chunk:
			break
		out += chunk
	p.wait(timeout=60)
	os.close(master)
	return p.returncode, out.replace(b"\r\n", b"\n")


def colored(out, sgr, path):
	"""Whether out shows path in colour sgr."""
	return b"\x1b[" + sgr + b"m" + path + b"\x1b[0m" in out


def main():
	chk = Checker()
	with TempDir() as td:
		top = os.fsencode(td.path) + b"/t"
		os.makedirs(top + b"/dir")
		write(top + b"/p.jpg", b"picture")
		write(top + b"/copy.jpg", b"picture")
		write(top + b"/plain", b"text")
		write(top + b"/run", b"#!/bin/sh\n", 0o755)
		write(top + b"/evil\x1b]0;owned\x07name", b"x")
		write(top + b"/red\x1b[31mname", b"x")
		os.symlink(b"p.jpg", top + b"/ln")
		db = os.fsencode(td.path) + b"/c.db"
		assert run_fidx("scan", "-q", "-o", db, top).rc == 0

		rc, out = on_tty(["find", db])
		chk.ok("terminal: a folder in 01;34, a symlink 01;36, an executable 01;32",
		       colored(out, b"01;34", top + b"/dir") and colored(out, b"01;36", top + b"/ln") and
		       colored(out, b"01;32", top + b"/run") and rc == 0, repr(out[-400:]))
		chk.ok("terminal: a plain file and a .jpg without LS_COLORS: no colour",
		       b"\n" + top + b"/plain\n" in out and b"\n" + top + b"/p.jpg\n" in out, repr(out))
		escapes = re.findall(rb"\x1b.{0,12}", out)
		chk.ok("terminal: every escape sequence is a colour of fidx's; hostile names quoted",
		       all(SGR.match(e) for e in escapes) and not any(b"[31m" in e for e in escapes) and
		       b"'%s/evil'$'\\033'']0;owned'$'\\a''name'" % top in out and
		       b"'%s/red'$'\\033''[31mname'" % top in out, repr(out))

		for label, args, env in (("NO_COLOR=1", ["find", db], {"NO_COLOR": "1"}),
					 ("TERM=dumb", ["find", db], {"TERM": "dumb"}),
					 ("--color=never", ["find", "--color=never", db], {})):
			rc, out = on_tty(args, env)
			chk.ok("terminal, %s: no colour" % label, rc == 0 and not SGR.search(out),
			       repr(out[:300]))
		rc, out = on_tty(["find", db], {"NO_COLOR": ""})
		chk.ok("terminal, NO_COLOR empty: colours", SGR.search(out), repr(out[:200]))

		res = run_fidx("find", db)
		never = run_fidx("find", "--color=never", db)
		chk.ok("pipe: no colour by default (the bytes of --color=never, names byte for byte)",
		       res.rc == 0 and res.out == never.out and b"\x1b[01;34m" not in res.out and
		       top + b"/red\x1b[31mname\n" in res.out, repr(res))
		res = run_fidx("find", "--color=always", db)
		chk.ok("pipe, --color=always: colours", colored(res.out, b"01;34", top + b"/dir"),
		       repr(res))

		ls = {"LS_COLORS": "di=38;5;99:*.JPG=35:ex=1;\x1b]0;x\x07:ln=01;04:ln=4"}
		rc, out = on_tty(["find", db], ls)
		chk.ok("LS_COLORS: its folder colour, *.JPG matching p.jpg, its symlink colour",
		       colored(out, b"38;5;99", top + b"/dir") and colored(out, b"35", top + b"/p.jpg")
		       and colored(out, b"4", top + b"/ln"), repr(out[-400:]))
		chk.ok("LS_COLORS: a value carrying another escape sequence is ignored (ex keeps"
		       " ls's default)", b"]0;x" not in out and colored(out, b"01;32", top + b"/run"),
		       repr(out[-400:]))

		rc, out = on_tty(["du", db])
		chk.ok("du: its folders in colour", colored(out, b"01;34", top) and rc == 0,
		       repr(out[-300:]))
		rc, out = on_tty(["dupes", db], {"LS_COLORS": "*.jpg=35"})
		chk.ok("dupes: its files by extension", colored(out, b"35", top + b"/copy.jpg") and
		       colored(out, b"35", top + b"/p.jpg") and rc == 0, repr(out[-300:]))
		lst = os.fsencode(td.path) + b"/list.sha256"
		write(lst, b"%s  x\n" % hashlib.sha256(b"picture").hexdigest().encode())
		rc, out = on_tty(["match", db, lst], {"LS_COLORS": "*.jpg=35"})
		chk.ok("match: its files by extension", colored(out, b"35", top + b"/p.jpg") and
		       rc == 0, repr(out[-300:]))
		res = run_fidx("find", "--color=sometimes", db)
		lib.check_fatal(chk, "--color=sometimes", res, mention=b"sometimes")
	chk.done()


if __name__ == "__main__":
	main()
