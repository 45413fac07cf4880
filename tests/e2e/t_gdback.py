#!/usr/bin/python3
"""t_gdback.py - queries written for GDBack give GDBack's answers on fidx's database.

GDBack, the Go tool fidx grew from, kept one inventory per database in
data(id, full_path, file_name, file_extension, hash_md5, size_bytes,
date_creation, date_last_modification) and metadata(id, signature_md5,
challenge, so, architecture, date_db_creation): file_extension as Go's
filepath.Ext (with the dot; ".bashrc" for .bashrc, "." for "dot."), hash_md5
lower-case hex of every file, dates "YYYY-MM-DD HH:MM:SS" in the scanning
host's local time, one row per non-directory (symlinks too), so = GOOS,
architecture = GOARCH.

Nineteen GDBack-era queries run on a fidx database of a tree (scanned with
--hash md5,sha256 under a TZ with summer time, then scanned again, then a
folder of it scanned on its own, as users do); their answers are computed
here from the tree (os.walk, os.lstat, hashlib, Go's rules written out,
time.localtime under the same TZ) and compared row for row.  The interactive
mode's default digests (MD5 and SHA-256) are checked in t_interactive.py.
"""

import calendar
import hashlib
import os
import platform
import sqlite3
import time

import lib
from lib import Checker, TempDir, run_fidx, write

TZ = "CET-1CEST,M3.5.0,M10.5.0/3"


def utc(y, mo, d, h=0, mi=0, s=0):
	"""Seconds since the epoch of a UTC date."""
	return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))


# name: (content or None for a symlink target, mtime)
FILES = {
	b"setup.exe": (b"MZ" + b"\0" * 100, utc(2020, 3, 14, 9, 26, 53)),
	b"photo.JPG": (b"\xff\xd8jpeg", utc(2020, 7, 1, 12)),
	b"photo.jpg": (b"\xff\xd8jpeg", utc(2020, 12, 31, 23, 30)),
	b"archive.tar.gz": (b"gz" * 50, utc(2019, 1, 1)),
	b".bashrc": (b"alias ll='ls -l'\n", utc(2021, 6, 6)),
	b"dot.": (b"dotted", utc(2022, 2, 2)),
	b"README": (b"readme", utc(2023, 10, 29, 0, 30)),   # the night summer time ended
	b"..hidden.cfg": (b"x=1", utc(2023, 3, 26, 1, 30)),  # the night it began
	b"empty.txt": (b"", utc(2024, 1, 1)),
	b"sub/nested.exe": (b"MZ" + b"\1" * 10, utc(2020, 6, 15)),
	b"sub/deeper/copy.jpg": (b"\xff\xd8jpeg", utc(2024, 8, 8, 8, 8, 8)),
	b"sub/far.log": (b"far", utc(2400, 7, 1, 3)),
}
LINKS = {b"sub/link-to-setup": b"../setup.exe"}


def go_ext(name):
	"""Go's filepath.Ext: from the last dot of the name on, with it; '' without a dot."""
	i = name.rfind(b".")
	return name[i:] if i >= 0 else b""


def local(sec):
	"""sec as GDBack formatted it: 'YYYY-MM-DD HH:MM:SS' in TZ (time.localtime)."""
	saved = os.environ.get("TZ")
	os.environ["TZ"] = TZ
	time.tzset()
	try:
		return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(sec)).encode()
	finally:
		if saved is None:
			del os.environ["TZ"]
		else:
			os.environ["TZ"] = saved
		time.tzset()


def build(root):
	"""The tree, its times set; returns {path: row dict} of GDBack's data table."""
	os.makedirs(root + b"/sub/deeper")
	for name, (content, mtime) in FILES.items():
		p = root + b"/" + name
		write(p, content)
		os.utime(p, ns=(mtime * 10**9, mtime * 10**9))
	for name, target in LINKS.items():
		os.symlink(target, root + b"/" + name)


def truth(root):
	"""GDBack's data rows of the tree: every entry but directories, from the tree itself."""
	rows = {}
	for dirpath, dirs, files in os.walk(root):
		for n in files + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
			p = os.path.join(dirpath, n)
			st = os.lstat(p)
			md5 = None
			if not os.path.islink(p):
				with open(p, "rb") as f:
					md5 = hashlib.md5(f.read()).hexdigest().encode()
			rows[p] = {"full_path": p, "file_name": n, "file_extension": go_ext(n),
				   "hash_md5": md5, "size_bytes": st.st_size,
				   "date_last_modification": local(st.st_mtime_ns // 10**9)}
	return rows


def goarch():
	"""Go's GOARCH for this machine."""
	m = platform.machine()
	return {"x86_64": "amd64", "aarch64": "arm64", "i686": "386", "armv7l": "arm"}.get(m, m)


def queries(want, started):
	"""(label, sql, expected rows): GDBack-era queries and their answers from the tree."""
	rows = list(want.values())

	def sel(cols, pred=lambda r: True, key=None):
		out = [tuple(r[c] for c in cols) for r in rows if pred(r)]
		return sorted(out, key=key)

	by_ext = {}
	for r in rows:
		by_ext[r["file_extension"]] = by_ext.get(r["file_extension"], 0) + 1
	by_md5 = {}
	for r in rows:
		if r["hash_md5"]:
			by_md5[r["hash_md5"]] = by_md5.get(r["hash_md5"], 0) + 1
	years = {}
	for r in rows:
		y = r["date_last_modification"][:4]
		years[y] = years.get(y, 0) + 1
	setup_md5 = hashlib.md5(FILES[b"setup.exe"][0]).hexdigest().encode()
	return [
		("count of files", "SELECT count(*) FROM data", [(len(rows),)]),
		("executables", "SELECT full_path FROM data WHERE file_extension = '.exe'",
		 sel(["full_path"], lambda r: r["file_extension"] == b".exe")),
		("pictures, lower case", "SELECT full_path FROM data WHERE file_extension IN"
		 " ('.jpg', '.png')", sel(["full_path"], lambda r: r["file_extension"] in
					  (b".jpg", b".png"))),
		("pictures, any case", "SELECT full_path FROM data WHERE lower(file_extension) ="
		 " '.jpg'", sel(["full_path"], lambda r: r["file_extension"].lower() == b".jpg")),
		("extensions counted", "SELECT file_extension, count(*) FROM data GROUP BY"
		 " file_extension", sorted(by_ext.items())),
		("a known-bad MD5", "SELECT full_path FROM data WHERE hash_md5 = '%s'" %
		 setup_md5.decode(), sel(["full_path"], lambda r: r["hash_md5"] == setup_md5)),
		("duplicates by MD5", "SELECT hash_md5, count(*) FROM data WHERE hash_md5 IS NOT"
		 " NULL GROUP BY hash_md5 HAVING count(*) > 1",
		 sorted((h, n) for h, n in by_md5.items() if n > 1)),
		("the three largest", "SELECT full_path, size_bytes FROM data ORDER BY size_bytes"
		 " DESC, full_path LIMIT 3",
		 sorted(sel(["full_path", "size_bytes"]), key=lambda t: (-t[1], t[0]))[:3]),
		("total bytes", "SELECT sum(size_bytes) FROM data",
		 [(sum(r["size_bytes"] for r in rows),)]),
		("modified in 2020", "SELECT full_path FROM data WHERE date_last_modification BETWEEN"
		 " '2020-01-01 00:00:00' AND '2020-12-31 23:59:59'",
		 sel(["full_path"], lambda r: b"2020-01-01 00:00:00" <= r["date_last_modification"]
		     <= b"2020-12-31 23:59:59")),
		("modified since 2024", "SELECT full_path FROM data WHERE date_last_modification >="
		 " '2024-01-01'", sel(["full_path"], lambda r: r["date_last_modification"] >=
				       b"2024-01-01")),
		("dates of README and the hidden file (summer time's edges)",
		 "SELECT file_name, date_last_modification FROM data WHERE file_name IN"
		 " ('README', '..hidden.cfg')",
		 sel(["file_name", "date_last_modification"],
		     lambda r: r["file_name"] in (b"README", b"..hidden.cfg"))),
		("dot files", "SELECT file_name, file_extension FROM data WHERE file_name LIKE '.%'",
		 sel(["file_name", "file_extension"], lambda r: r["file_name"].startswith(b"."))),
		("no extension", "SELECT full_path FROM data WHERE file_extension = ''",
		 sel(["full_path"], lambda r: r["file_extension"] == b"")),
		("a name ending with a dot", "SELECT full_path, file_extension FROM data WHERE"
		 " file_extension = '.'",
		 sel(["full_path", "file_extension"], lambda r: r["file_extension"] == b".")),
		("per year", "SELECT substr(date_last_modification, 1, 4) AS year, count(*) FROM data"
		 " GROUP BY year", sorted(years.items())),
		("empty files", "SELECT full_path FROM data WHERE size_bytes = 0",
		 sel(["full_path"], lambda r: r["size_bytes"] == 0)),
		("the symlink is a row", "SELECT full_path, size_bytes FROM data WHERE"
		 " full_path LIKE '%link-to-setup'",
		 sel(["full_path", "size_bytes"], lambda r: r["full_path"].endswith(b"link-to-setup"))),
		("metadata", "SELECT so, architecture, date_db_creation, signature_md5, challenge"
		 " FROM metadata", [(b"linux", goarch().encode(), local(started), None, None)]),
	]


def main():
	chk = Checker()
	with TempDir() as td:
		top = os.fsencode(td.path)
		root = top + b"/tree"
		build(root)
		db = top + b"/gdback.db"
		for run in (1, 2):  # one inventory: scanning again does not double the rows
			res = run_fidx("scan", "-q", "--hash", "md5,sha256", "--db", db, root,
				       env={"TZ": TZ})
			chk.eq("scan %d (TZ with summer time): exit 0" % run, (res.rc, res.err), (0, b""))
		res = run_fidx("scan", "-q", "--hash", "md5,sha256", "--db", db, root + b"/sub",
			       env={"TZ": TZ})
		chk.eq("a folder of the tree scanned on its own: exit 0", res.rc, 0)
		want = truth(root)
		con = lib.connect(db)
		started = con.execute("SELECT started_ns FROM scan WHERE id = 2").fetchone()[0] // 10**9
		ok = 0
		qs = queries(want, started)
		for label, sql, expected in qs:
			try:
				got = sorted(tuple(r) for r in con.execute(sql))
			except sqlite3.Error as e:
				got = "error: %s" % e
			exp = sorted(tuple(x.encode() if isinstance(x, str) else x for x in t)
				     for t in expected)
			ok += chk.eq("GDBack query: %s" % label, got, exp)
		con.close()
		chk.eq("all %d GDBack-era queries give GDBack's answers" % len(qs), ok, len(qs))
	chk.done()


if __name__ == "__main__":
	main()
