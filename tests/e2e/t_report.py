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
import sqlite3
import stat
import subprocess

import lib
from lib import Checker, TempDir, run_fidx, write

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "..", "browser", "check-report.mjs")
HOSTILE = b"evil\n<img src=x onerror=alert(1)>\x1b[31m\xff\"'&.txt"
HOSTILE_DIR = b"dir\n999 GiB\x1b[2J\xfe\xe2\x80\xaeab\xe2\x80\x8bc"


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
		elif 0x80 <= c < 0xA0 or 0xD800 <= c <= 0xDFFF or invisible(c):
			out += "\\u%04x" % c
		else:
			out += ch
	return out


def invisible(c):
	"""report.js's invisible(): zero-width, bidi and separator characters, shown as \\uXXXX."""
	return c == 0xAD or 0x200B <= c <= 0x200F or 0x2028 <= c <= 0x202E or \
		0x2060 <= c <= 0x2064 or 0x2066 <= c <= 0x206F or c == 0xFEFF


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
		# A hostile folder of many small files: with --nodes 40 most of them are one
		# "smaller entries" box, whose tooltip names the folder.
		os.makedirs(top + b"/" + HOSTILE_DIR)
		for i in range(300):
			write(top + b"/" + HOSTILE_DIR + b"/f%03d" % i, b"%03d" % i)
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
		res = run_fidx("report", "--nodes", "40", db, "-o", html)
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
		files = [os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs
			 if stat.S_ISREG(os.lstat(os.path.join(d, f)).st_mode)]
		by_size = sorted(files, key=lambda p: (-os.lstat(p).st_size, os.path.basename(p), p))[:100]

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
			want_rest = shown(top + b"/" + HOSTILE_DIR) + ": "
			chk.ok("browser: a 'smaller entries' box's tooltip names its folder escaped",
			       any(t.startswith(want_rest) for t in got["titles"]), repr(got["titles"]))
			bad = [t for t in got["titles"] if re.search("[\x00-\x1f\x7f-\x9f\ufffd"
								     "\u200b-\u200f\u202a-\u202e]", t)]
			chk.eq("browser: no tooltip holds a control, invisible or bidi character", bad, [])

		# Without the browser: the data itself.
		data = page_data(raw)
		stats = json.loads(run_fidx("stats", "--json", "--scan", "2", db).out.splitlines()[0])
		chk.eq("types: counts and bytes as fidx stats gives them (every name counts)",
		       sorted((t[0], t[2], t[3]) for t in data["types"]) if data else None,
		       sorted((t["type"], t["count"], t["bytes"]) for t in stats["types"]))
		rest = [n for n in data["tree"] if n[2] == "+"] if data else []
		chk.ok("--nodes 40: at most 40 nodes, the hostile folder's rest in one '+' node",
		       data and len(data["tree"]) <= 40 and any(
			       data["tree"][n[0]][1] == HOSTILE_DIR.decode("utf-8", "surrogateescape")
			       for n in rest), repr(rest))
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
		check_budget(chk, base)
		check_link_order(chk, base)
		check_damaged(chk, base, db, top)
		res = run_fidx("report", "-o", "-", db, top + b"/a")
		data = page_data(res.out)
		whole = [json.loads(l) for l in run_fidx("diff", "--json", db, "1", "2").out_lines()]
		below = sorted(d["path"] for d in whole if d["path"] == top.decode() + "/a" or
			       d["path"].startswith(top.decode() + "/a/"))
		chk.eq("PATH: the changes listed are those of its tree",
		       sorted(e[2] for e in data["diff"]["list"]) if data else None, below)

		# An earlier report: its mode and its other names kept.
		private = base + b"/private.html"
		write(private, b"old")
		os.chmod(private, 0o600)
		os.link(private, base + b"/other-name.html")
		res = run_fidx("report", "--no-dupes", "-o", private, db)
		chk.ok("-o over a report of mode 0600 with two names: both names hold the page,"
		       " still 0600", res.rc == 0 and (os.stat(private).st_mode & 0o777) == 0o600 and
		       page_data(open(base + b"/other-name.html", "rb").read()) is not None, repr(res))
		os.unlink(base + b"/other-name.html")
		write(private, b"old")
		os.chmod(private, 0o600)
		res = run_fidx("report", "--no-dupes", "-o", private, db)
		chk.ok("-o over a report of mode 0600 (renamed over): still 0600", res.rc == 0 and
		       (os.stat(private).st_mode & 0o777) == 0o600, repr(res))
		long_name = base + b"/" + b"r" * 250 + b".html"
		res = run_fidx("report", "--no-dupes", "-o", long_name, db)
		chk.ok("-o a 255-byte name", res.rc == 0 and os.path.exists(long_name), repr(res))

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
			      n.startswith(b".fidx-report-")), [])
	return chk.done()


def check_budget(chk, base):
	"""--nodes goes to the heaviest entries of the whole tree, not to one folder's children."""
	top = base + b"/bud"
	os.makedirs(top + b"/A")
	for i in range(400):
		write(top + b"/A/f%03d" % i, b"x" * 4000)
	for i in range(4):
		os.makedirs(top + b"/B/s%d" % i)
		write(top + b"/B/s%d/big" % i, os.urandom(400000))
	db = base + b"/bud.db"
	assert run_fidx("scan", "-q", "--hash", "none", "-o", db, top).rc == 0
	data = page_data(run_fidx("report", "--nodes", "60", "-o", "-", db).out)
	tree = data["tree"] if data else []
	names = {i: n[1] for i, n in enumerate(tree)}
	b = [i for i, n in enumerate(tree) if n[1] == "B" and n[0] == 0]
	kids = [n for n in tree if b and n[0] == b[0]]
	chk.ok("--nodes 60: B (4 large files) opened, all its folders written, beside A's 400",
	       len(tree) <= 60 and len(kids) == 4 and all(n[2] == "d" for n in kids),
	       repr([(names.get(n[0]), n[1], n[2]) for n in tree][:20]))
	chk.ok("--nodes 60: A's smaller files in its '+' node",
	       any(n[2] == "+" and names.get(n[0]) == "A" for n in tree))


def check_link_order(chk, base):
	"""Of a hard-linked file's names, the first in path order counts (no H flag), whichever
	the walk met first: pairs across two folders, half of them each way."""
	top = base + b"/links"
	for d in (b"p", b"q"):
		os.makedirs(top + b"/" + d)
	for i in range(8):
		first, other = (b"p", b"q") if i % 2 else (b"q", b"p")
		write(top + b"/%s/n%d" % (first, i), b"%d" % i * (1000 + i))
		os.link(top + b"/%s/n%d" % (first, i), top + b"/%s/n%d" % (other, i))
	db = base + b"/links.db"
	assert run_fidx("scan", "-q", "-j1", "--hash", "none", "-o", db, top).rc == 0
	data = page_data(run_fidx("report", "--no-dupes", "--top", "100", "-o", "-", db).out)
	flagged = sorted((e[0], e[5] & 4) for e in (data["largest"] if data else []))
	want = sorted(((top + b"/%s/n%d" % (d, i)).decode(), 4 if d == b"q" else 0)
		      for i in range(8) for d in (b"p", b"q"))
	chk.eq("hard links: the name first in path order counts, the other is flagged H",
	       flagged, want)


def check_damaged(chk, base, db, top):
	"""A directory known only from the rows below it can be opened; a top that is a file is damage."""
	copy = base + b"/norow.db"
	shutil.copy(db, copy)
	con = sqlite3.connect(copy)
	con.execute("DELETE FROM file_seal WHERE file_id IN (SELECT id FROM file WHERE scan_id = 2"
		    " AND path = ?)", (top.decode() + "/c",))
	con.execute("DELETE FROM file WHERE scan_id = 2 AND path = ?", (top.decode() + "/c",))
	con.execute("UPDATE scan SET entries = entries - 1 WHERE id = 2")
	con.commit()
	con.close()
	data = page_data(run_fidx("report", "--no-dupes", "-o", "-", copy).out)
	c = [n for n in (data["tree"] if data else []) if n[1] == "c" and n[0] == 0]
	chk.ok("a folder without its row: a directory (type d, flag 8) with its children",
	       c and c[0][2] == "d" and c[0][8] & 8 and any(
		       n[0] == data["tree"].index(c[0]) for n in data["tree"]), repr(c))
	copy = base + b"/filetop.db"
	shutil.copy(db, copy)
	con = sqlite3.connect(copy)
	con.execute("UPDATE file SET type = 'f' WHERE scan_id = 2 AND path = ?", (top.decode(),))
	con.commit()
	con.close()
	res = run_fidx("report", "--no-dupes", "-o", base + b"/damaged.html", copy)
	lib.check_fatal(chk, "a top that is a file above other rows", res, mention=b"damaged")


def lib_umask():
	"""The process's umask."""
	m = os.umask(0)
	os.umask(m)
	return m


if __name__ == "__main__":
	raise SystemExit(main())
