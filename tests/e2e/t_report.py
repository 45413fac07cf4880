#!/usr/bin/python3
"""t_report.py - `fidx report`: the page, checked in a real browser against fidx du, dupes, diff.

A tree with two identical files, a hard link, a sparse file (apparent far
above allocated), a file nobody can read and a hostile name (newline,
markup with an onerror handler, an escape sequence, a byte that is not
UTF-8, quotes) is scanned as nobody, changed and scanned again.  Then
`fidx report` writes its page, which Debian's Chromium opens headless,
driven by playwright-core (tests/browser/check-report.mjs):

  * the totals shown (their exact data values) equal `fidx du -d 0 -b`, the
    duplicates summary equals what `fidx dupes --scan N --json` lists, and the
    changes line equals `fidx diff --json`'s counts;
  * the largest files are listed in the order of their sizes (os.stat);
  * the hostile name is shown as text, its bytes marked (\\n, \\x1b, \\xff):
    no element was injected, no alert ran, the page made no request (it
    works offline) and logged nothing, no console error;
  * a click on a directory's box zooms into it (the path shown is its own,
    its entry count is du's), a click on the first crumb goes back;
  * the unreadable file is in the errors table with its error.
Without a browser: the HTML file holds no raw '<' of a name, no control
byte and no byte that is not UTF-8; the treemap data stays within --nodes
with the rest summed; PATH narrows the page to its tree; -o - writes to
stdout; an output that cannot be written exits 2 and leaves nothing behind.
"""

import json
import os
import re
import shutil
import stat
import subprocess

import lib
from lib import Checker, TempDir, run_fidx, write

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "..", "browser", "check-report.mjs")
HOSTILE = b"evil\n<img src=x onerror=alert(1)>\x1b[31m\xff\"'&.txt"


def shown(name):
	"""How the page shows a name: report.js's escOf() of each character."""
	out = ""
	for ch in name.decode("utf-8", "surrogateescape"):
		c = ord(ch)
		if 0xDC80 <= c <= 0xDCFF:
			out += "\\x%02x" % (c - 0xDC00)
		elif ch == "\n":
			out += "\\n"
		elif ch == "\t":
			out += "\\t"
		elif ch == "\r":
			out += "\\r"
		elif c < 0x20 or c == 0x7F:
			out += "\\x%02x" % c
		elif 0x80 <= c < 0xA0:
			out += "\\u00%02x" % c
		else:
			out += ch
	return out


def page_data(html):
	"""The JSON data of a report page."""
	m = re.search(rb'<script type="application/json" id="fidx-data">(.*?)</script>', html, re.S)
	return json.loads(m.group(1)) if m else None


def browse(chk, html, zoom, shot=None):
	"""Opens html in Chromium (check-report.mjs); returns what the page showed, or None."""
	cmd = ["node", CHECK, html, zoom] + ([shot] if shot else [])
	p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
	try:
		got = json.loads(p.stdout)
	except ValueError:
		got = None
	chk.ok("browser: Chromium opened the page (playwright-core)", got is not None and
	       p.returncode == 0, "exit %d: %s %s" % (p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
	return got if p.returncode == 0 else None


def du_totals(db, *path):
	"""fidx du -d 0 -b --json of path (or the root): the exact totals, as strings."""
	res = run_fidx("du", "-d", "0", "-b", "--json", db, *path)
	row = json.loads(res.out.splitlines()[0])
	return {k: str(row[k]) for k in ("apparent", "allocated", "entries", "errors")}


def main():
	chk = Checker()
	if not os.path.exists(CHECK) or not shutil.which("node"):
		chk.ok("browser: node and tests/browser present (make check installs them)", False)
		return chk.done()
	with TempDir() as td:
		os.chmod(td.path, 0o755)
		base = os.fsencode(td.path)
		top = base + b"/t"
		os.makedirs(top + b"/a/b")
		os.makedirs(top + b"/c")
		blob = os.urandom(300000)
		write(top + b"/a/big.bin", blob)
		write(top + b"/c/copy.bin", blob)
		write(top + b"/a/b/x.txt", b"linked\n")
		os.link(top + b"/a/b/x.txt", top + b"/c/hl.txt")
		with open(top + b"/c/sparse.img", "wb") as f:
			f.truncate(200 << 20)
		write(top + b"/" + HOSTILE, b"x" * 70000)
		write(top + b"/secret", b"s" * 5000)
		os.chmod(top + b"/secret", 0)
		dbdir = base + b"/db"
		os.mkdir(dbdir)
		os.chown(dbdir, lib.NOBODY, lib.NOBODY)
		db = dbdir + b"/r.db"
		uid = lib.NOBODY if os.geteuid() == 0 else None
		res = run_fidx("scan", "-q", "-o", db, top, uid=uid)
		chk.ok("scan 1 (as nobody: one unreadable file)", res.rc == 1, repr(res))
		os.unlink(top + b"/c/hl.txt")
		write(top + b"/a/new.txt", b"new")
		res = run_fidx("scan", "-q", "-o", db, top, uid=uid)
		chk.ok("scan 2", res.rc == 1, repr(res))

		html = base + b"/r.html"
		res = run_fidx("report", db, "-o", html)
		chk.ok("report: exit 0, nothing on stdout", res.rc == 0 and res.out == b"", repr(res))
		raw = open(html, "rb").read() if os.path.exists(html) else b""
		chk.ok("report: one file, no raw markup, control byte or non-UTF-8 byte of a name",
		       b"<img" not in raw and b"\x1b" not in raw and b"\xff" not in raw and
		       raw.startswith(b"<!DOCTYPE html>") and raw.rstrip().endswith(b"</html>"))
		chk.ok("report: its file has the mode a new file gets (0644 under umask 022)",
		       os.path.exists(html) and (os.stat(html).st_mode & 0o777) ==
		       0o666 & ~lib_umask())

		want = du_totals(db)
		dupes = [json.loads(l) for l in run_fidx("dupes", "--json", "--scan", "2", db).out_lines()]
		diff = [json.loads(l) for l in run_fidx("diff", "--json", db, "1", "2").out_lines()]
		kinds = {k: sum(1 for d in diff if d["kind"] == k)
			 for k in ("added", "removed", "changed", "moved")}
		files = [p for p in (top + b"/a/big.bin", top + b"/c/copy.bin", top + b"/a/b/x.txt",
				     top + b"/c/sparse.img", top + b"/" + HOSTILE, top + b"/a/new.txt",
				     top + b"/secret")]
		by_size = sorted(files, key=lambda p: (-os.stat(p).st_size, os.path.basename(p)))

		shot = os.environ.get("FIDX_REPORT_SCREENSHOT")
		got = browse(chk, html, top.decode() + "/a", shot)
		if got:
			chk.eq("browser: totals shown equal fidx du -d 0 -b", {
				k: got["totals"][k] for k in want}, want)
			chk.eq("browser: duplicates shown equal fidx dupes (groups, reclaimable bytes)",
			       (got["dupes"]["groups"], got["dupes"]["waste"], got["totals"]["waste"]),
			       (str(len(dupes)), str(sum(g["waste"] for g in dupes)),
				str(sum(g["waste"] for g in dupes))))
			chk.ok("browser: there are duplicates to show", len(dupes) == 1)
			chk.eq("browser: changes shown equal fidx diff's counts", got["diff"],
			       "Since scan 1: %d added, %d removed, %d changed, %d moved." % (
				       kinds["added"], kinds["removed"], kinds["changed"], kinds["moved"]))
			chk.eq("browser: largest files by size (ties by name), the hostile name as escaped text",
			       got["largest"], [shown(p) for p in by_size])
			chk.ok("browser: the hostile name's bytes marked (\\n, \\x1b, \\xff)",
			       {"\\n", "\\x1b", "\\xff"} <= set(got["escapes"]), repr(got["escapes"]))
			chk.eq("browser: nothing injected, no alert, no request (offline)",
			       (got["injected"], got["alerts"], got["requests"]), (0, [], []))
			chk.eq("browser: no console message, no page error",
			       (got["console"], got["errors"]), ([], []))
			a = du_totals(db, top + b"/a")
			chk.eq("browser: a click on a/ zooms into it, its entries as du counts them",
			       (got.get("crumbs_zoomed"), "%s entries" % format(int(a["entries"]), ",")
				in (got.get("note_zoomed") or "")), (top.decode() + "/a", True))
			chk.eq("browser: the first crumb goes back to the top",
			       (got["crumbs_before"], got.get("crumbs_back")), (top.decode(), top.decode()))
			chk.ok("browser: the unreadable file in the errors table with its error",
			       any(r[0] == top.decode() + "/secret" and "Permission denied" in r[1]
				   for r in got["error_rows"]) if uid is not None else True,
			       repr(got["error_rows"]))
			chk.ok("browser: the treemap drew boxes", got["boxes"] >= 3, repr(got["boxes"]))

		# Without the browser: the data itself.
		res = run_fidx("report", "--nodes", "3", "--no-dupes", "--against", "none", "-o", "-", db)
		data = page_data(res.out)
		chk.ok("-o -: the page on stdout", res.rc == 0 and data is not None, repr(res)[:300])
		if data:
			tree = data["tree"]
			rest = [n for n in tree if n[2] == "+"]
			chk.ok("--nodes 3: at most 3 boxes, the rest summed in one '+' node",
			       len(tree) <= 3 and len(rest) == 1, repr(tree))
			kids = [n for n in tree if n[0] == 0]
			chk.eq("--nodes 3: the children written add up to the top's entries",
			       sum(n[5] for n in kids) + 1, tree[0][5])
			chk.eq("--no-dupes, --against none: neither computed",
			       (data["dupes"], data["diff"]), (None, None))
		res = run_fidx("report", "-o", "-", db, top + b"/a")
		data = page_data(res.out)
		a = du_totals(db, top + b"/a")
		chk.eq("PATH: the page shows its tree, its totals du's",
		       data and (data["scan"]["base"], data["totals"]), (top.decode() + "/a", a))
		res = run_fidx("report", "-o", "-", db, top + b"/nowhere")
		lib.check_fatal(chk, "PATH in no scan", res, mention=b"nowhere")
		res = run_fidx("report", "-o", base + b"/missing/r.html", db)
		lib.check_fatal(chk, "-o in a missing folder", res, mention=b"missing/r.html")
		chk.ok("-o in a missing folder: nothing left", not os.path.exists(base + b"/missing"))
		# A device or a symlink is written to, never replaced by a rename.
		res = run_fidx("report", "--no-dupes", "-o", "/dev/null", db)
		chk.ok("-o /dev/null: exit 0, /dev/null still the device", res.rc == 0 and
		       stat.S_ISCHR(os.lstat("/dev/null").st_mode), repr(res))
		write(base + b"/target.html", b"old")
		os.symlink(b"target.html", base + b"/link.html")
		res = run_fidx("report", "--no-dupes", "-o", base + b"/link.html", db)
		chk.ok("-o SYMLINK: the link kept, its target holds the page", res.rc == 0 and
		       os.path.islink(base + b"/link.html") and
		       page_data(open(base + b"/target.html", "rb").read()) is not None, repr(res))
		write(base + b"/r.html", b"earlier report")
		res = run_fidx("report", "--against", "99", "-o", base + b"/r.html", db)
		chk.ok("a failed run leaves an earlier report as it was",
		       open(base + b"/r.html", "rb").read() == b"earlier report")
		res = run_fidx("report", "--against", "99", "-o", base + b"/x.html", db)
		lib.check_fatal(chk, "--against a scan that is not there", res, mention=b"99")
		chk.eq("failed runs leave no file beside the output",
		       sorted(n for n in os.listdir(base) if n.startswith(b"x.html") or
			      n.startswith(b"r.html.")), [])
	return chk.done()


def lib_umask():
	"""The process's umask."""
	m = os.umask(0)
	os.umask(m)
	return m


if __name__ == "__main__":
	raise SystemExit(main())
