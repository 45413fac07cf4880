#!/usr/bin/python3
"""t_times.py - every time the kernel can return, recorded and shown exactly.

Times are signed 64-bit seconds and nanoseconds; int64 nanoseconds end in 1677
and 2262, and fidx used to wrap a file of 2400 to 1815.  Two trees get files,
directories and symlinks dated at the issue's points (1901-12-13,
1969-12-31T23:59:59.5, 1970-01-01, 2038-01-19T03:14:08, 2262-04-12,
2400-01-01, 2446-05-10, with odd nanoseconds) as atime and mtime: one on the
test's own folder (ext4 here, which keeps 1901-12-13T20:45:52 to
2446-05-10T22:38:55 and clamps the rest: os.lstat says what it kept), one on
a tmpfs, which keeps any 64-bit second (years -1, 0, 10000, +-2^40 s).  The
ground truth is os.lstat, and for the text of dates Python's datetime (years
1 to 9999) or GNU date (beyond); nothing of fidx.  Checked:

  * the database: every time column, exact, for every entry (lib.db_rows
    reads T_ns, or T_sec and T_nsec beyond its range);
  * file_view (ISO 8601; SQLite's dates end at 9999: NULL beyond);
  * export csv and jsonl (exact nanoseconds and ISO), body (seconds),
    dfxml (ISO), sha256sum and hashdeep (every file listed);
  * find --json and --newer/--older beyond 2262, stats --json's oldest and
    newest;
  * diff and check after an mtime moves from 2400 to 2446 (and the rest,
    unchanged, not reported);
  * the GDBack view's dates in the scanning host's local time (TZ given by a
    rule with summer time) against time.localtime under the same TZ;
  * the seal of such rows, recomputed by `fidx verify`.
"""

import calendar
import csv
import datetime
import io
import json
import os
import re
import stat
import subprocess
import time
import xml.etree.ElementTree as ET

import lib
from lib import Checker, TempDir, run_fidx, write

NS = 10**9


def utc(y, mo, d, h=0, mi=0, s=0):
	"""Seconds since the epoch of a UTC date (any year calendar.timegm takes)."""
	return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))


# The dates, each with a fraction (ns since the epoch).
DATES = {
	"1901": utc(1901, 12, 13, 20, 45, 52) * NS + 7,
	"1969": -NS // 2,
	"1970": 0,
	"2038": utc(2038, 1, 19, 3, 14, 8) * NS + 999999999,
	"2262": utc(2262, 4, 12) * NS + 123456789,
	"2400": utc(2400, 1, 1) * NS + 5,
	"2446": utc(2446, 5, 10, 12) * NS,
}
# Beyond ext4's range, on a tmpfs.
FAR = {
	"y-1": -62167219201 * NS + 1,
	"y0": -62167219200 * NS,
	"y10000": 253402300800 * NS + 42,
	"2p40": (1 << 40) * NS + 999999999,
	"m2p40": -(1 << 40) * NS,
}
# The tree's dates for atime: another point, so that the two are told apart.
ATIME_OF = {"2400": "2446", "2446": "1901", "1901": "2400"}


def civil(sec):
	"""(year, month, day, hour, minute, second) of sec, independently of fidx."""
	if -62135596800 <= sec < 253402300800:  # years 1 to 9999: datetime
		t = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=sec)
		return t.year, t.month, t.day, t.hour, t.minute, t.second
	out = subprocess.run(["date", "-u", "-d", "@%d" % sec, "+%Y %m %d %H %M %S"],
			     capture_output=True, check=True).stdout.split()
	return tuple(int(x) for x in out)


def iso(ns):
	"""fidx's ISO 8601 text of ns: four-digit years, ISO's expanded years beyond."""
	sec, frac = divmod(ns, NS)
	y, mo, d, h, mi, s = civil(sec)
	year = "%04d" % y if 0 <= y <= 9999 else ("+" if y > 0 else "-") + "%04d" % abs(y)
	return "%s-%02d-%02dT%02d:%02d:%02d.%09dZ" % (year, mo, d, h, mi, s, frac)


def build(root, dates):
	"""A file, a directory and a symlink per date; returns nothing (os.lstat is the truth)."""
	os.makedirs(root)
	for name, ns in dates.items():
		a = dates.get(ATIME_OF.get(name), ns)
		write(root + "/f" + name, name.encode())
		os.mkdir(root + "/d" + name)
		os.symlink("f" + name, root + "/l" + name)
		for p in ("/f", "/d", "/l"):
			os.utime(root + p + name, ns=(a, ns), follow_symlinks=False)
	os.utime(root, ns=(0, 0))


def lstat_times(root):
	"""{path bytes: (atime_ns, mtime_ns, ctime_ns)} of every entry, by os.lstat."""
	out = {}
	for dirpath, dirs, files in os.walk(os.fsencode(root)):
		for n in [b""] + dirs + files:
			p = os.path.join(dirpath, n) if n else dirpath
			if n and p in out:
				continue
			st = os.lstat(p)
			out[p] = (st.st_atime_ns, st.st_mtime_ns, st.st_ctime_ns)
	return out


def check_db(chk, label, db, scan, want):
	"""Every time column of every row against os.lstat, exactly."""
	rows, dups = lib.db_rows(db, scan)
	chk.eq("%s: every entry once" % label, (sorted(rows), dups), (sorted(want), []))
	for i, col in enumerate(("atime_ns", "mtime_ns", "ctime_ns")):
		bad = [(p, rows[p][col], want[p][i]) for p in want if p in rows and
		       rows[p][col] != want[p][i]]
		chk.ok("%s: %s exact for every entry" % (label, col), not bad, lib.short(bad[:3]))
	con = lib.connect(db)
	n = con.execute("SELECT count(*) FROM file WHERE scan_id = ? AND mtime_ns IS NULL"
			" AND mtime_sec IS NOT NULL", (scan,)).fetchone()[0]
	wrapped = con.execute("SELECT count(*) FROM file WHERE scan_id = ? AND (mtime_ns IS NULL)"
			      " = (mtime_sec IS NULL)", (scan,)).fetchone()[0]
	con.close()
	beyond = sum(1 for t in want.values() if not -(1 << 63) <= t[1] < (1 << 63))
	chk.eq("%s: times beyond int64 ns in mtime_sec/mtime_nsec, the rest in mtime_ns" % label,
	       (n, wrapped), (beyond, 0))
	return rows


def check_view(chk, label, db, scan, want):
	"""file_view's ISO times (SQLite's dates: years 0000 to 9999, NULL outside)."""
	con = lib.connect(db)
	got = {r[0]: (r[1], r[2]) for r in con.execute(
		"SELECT path, atime, mtime FROM file_view WHERE scan_id = ?", (scan,))}
	con.close()

	def view(ns):
		y = civil(ns // NS)[0]
		return iso(ns).encode() if 0 <= y <= 9999 else None

	bad = [(p, got.get(p), (view(t[0]), view(t[1]))) for p, t in want.items()
	       if got.get(p) != (view(t[0]), view(t[1]))]
	chk.ok("%s: file_view atime and mtime" % label, not bad, lib.short(bad[:3]))


def xs_datetime(text):
	"""XML Schema 1.0's xs:dateTime of fidx's ISO text: no '+', no year 0 (ISO's 0000 is -0001)."""
	year, rest = re.match(r"([+-]?[0-9]+)(-.*)", text).groups()
	y = int(year)
	return ("%04d" % y if y > 0 else "-%04d" % (1 - y)) + rest


def check_exports(chk, label, db, want):
	"""csv, jsonl, body, dfxml: the times; sha256sum and hashdeep: every file."""
	res = run_fidx("export", "--format", "csv", db)
	rows = list(csv.DictReader(io.StringIO(res.out.decode("utf-8", "surrogateescape"))))
	got = {os.fsencode(r["path"]): r for r in rows}
	bad = [p for p, t in want.items() if p not in got or
	       (got[p]["atime_ns"], got[p]["mtime_ns"], got[p]["atime"], got[p]["mtime"]) !=
	       (str(t[0]), str(t[1]), iso(t[0]), iso(t[1]))]
	chk.ok("%s: export csv: *_ns exact and ISO times" % label, res.rc == 0 and not bad,
	       "rc=%d %s" % (res.rc, lib.short([(p, got.get(p)) for p in bad[:2]])))

	res = run_fidx("export", "--format", "jsonl", db)
	objs = [json.loads(l) for l in res.out.split(b"\n") if l]
	got = {os.fsencode(o["path"]): o for o in objs}
	bad = [p for p, t in want.items() if p not in got or
	       (got[p]["atime_ns"], got[p]["mtime_ns"], got[p]["ctime_ns"], got[p]["atime"],
		got[p]["mtime"]) != (t[0], t[1], t[2], iso(t[0]), iso(t[1]))]
	chk.ok("%s: export jsonl: *_ns exact (numbers of any size) and ISO" % label,
	       res.rc == 0 and not bad, lib.short([(p, got.get(p)) for p in bad[:2]]))

	res = run_fidx("export", "--format", "body", db)
	got = {}
	for line in res.out.split(b"\n"):
		f = line.split(b"|")
		if len(f) == 11:  # a symlink's name is "path -> target"
			got[f[1].split(b" -> ")[0]] = (int(f[7]), int(f[8]), int(f[9]))
	bad = [p for p, t in want.items() if got.get(p) != (t[0] // NS, t[1] // NS, t[2] // NS)]
	chk.ok("%s: export body: atime, mtime, ctime in whole seconds (rounded down)" % label,
	       res.rc == 0 and not bad, lib.short([(p, got.get(p)) for p in bad[:2]]))

	res = run_fidx("export", "--format", "dfxml", db)
	ns = "{http://www.forensicswiki.org/wiki/Category:Digital_Forensics_XML}"
	got = {}
	for fo in ET.fromstring(res.out).iter(ns + "fileobject"):
		name = fo.findtext(ns + "filename")
		got[os.fsencode(name)] = (fo.findtext(ns + "atime"), fo.findtext(ns + "mtime"))
	xs = lambda ns: xs_datetime(iso(ns))
	bad = [p for p, t in want.items() if got.get(p) != (xs(t[0]), xs(t[1]))]
	chk.ok("%s: export dfxml: atime and mtime (xs:dateTime)" % label, res.rc == 0 and not bad,
	       lib.short([(p, got.get(p)) for p in bad[:2]]))

	files = {p for p in want if stat.S_ISREG(os.lstat(p).st_mode)}
	for fmt in ("sha256sum", "hashdeep"):
		res = run_fidx("export", "--format", fmt, db)
		listed = {p for p in files if p in res.out}
		chk.ok("%s: export %s lists every file" % (label, fmt), res.rc == 0 and
		       listed == files, "rc=%d missing %s" % (res.rc, lib.short(sorted(files - listed))))


def check_find_stats(chk, label, db, want):
	"""find --json and its --newer/--older beyond 2262; stats' oldest and newest."""
	res = run_fidx("find", "--json", db)
	objs = {os.fsencode(o["path"]): o for o in map(json.loads, res.out.split(b"\n")[:-1])}
	bad = [p for p, t in want.items() if p not in objs or
	       (objs[p]["mtime_ns"], objs[p]["mtime"]) != (t[1], iso(t[1]))]
	chk.ok("%s: find --json mtime and mtime_ns" % label, res.rc == 0 and not bad,
	       lib.short([(p, objs.get(p)) for p in bad[:2]]))
	for opt, when, keep in (("--newer", "2300-01-01Z", lambda m: m > utc(2300, 1, 1) * NS),
				("--older", "1902-01-01Z", lambda m: m < utc(1902, 1, 1) * NS),
				("--newer", "9999-12-31T23:59:59Z",
				 lambda m: m > 253402300799 * NS)):
		res = run_fidx("find", opt, when, db)
		got = sorted(res.out.split(b"\n")[:-1])
		chk.eq("%s: find %s %s" % (label, opt, when), got,
		       sorted(p for p, t in want.items() if keep(t[1])))
	res = run_fidx("stats", "--json", "--top", "3", db)
	o = json.loads(res.out.split(b"\n")[0])
	files = sorted((t[1], p) for p, t in want.items() if stat.S_ISREG(os.lstat(p).st_mode))
	for key, items in (("oldest", files[:3]), ("newest", files[::-1][:3])):
		chk.eq("%s: stats --json %s" % (label, key),
		       [(x["mtime_ns"], x["mtime"], os.fsencode(x["path"])) for x in o[key]],
		       [(m, iso(m), p) for m, p in items])


def check_changes(chk, label, db, root, want):
	"""diff and check: an mtime moved from 2400 to 2446 is that one change, exact."""
	path = root + "/f2400"
	old = want[os.fsencode(path)][1]
	new = utc(2446, 5, 10, 22, 38, 55) * NS
	os.utime(path, ns=(os.lstat(path).st_atime_ns, new))
	new = os.lstat(path).st_mtime_ns
	res = run_fidx("check", "-v", "--json", db, root)
	objs = [json.loads(l) for l in res.out.split(b"\n") if l]
	chk.eq("%s: check -v --json: the one file changed, mtime old and new" % label,
	       [(o["path"], o["old"].get("mtime"), o["new"].get("mtime")) for o in objs],
	       [(path, iso(old), iso(new))])
	res = run_fidx("scan", "-q", "--db", db, root)
	chk.eq("%s: the rescan: exit 0" % label, res.rc, 0)
	res = run_fidx("diff", "-v", db)
	line = ("        mtime    %s -> %s\n" % (iso(old), iso(new))).encode()
	chk.ok("%s: diff -v: the mtime line of the one change" % label,
	       res.rc == 4 and line in res.out and res.out.count(b"changed ") == 1, repr(res))


def check_gdback_local(chk, top):
	"""data's dates in the scanning host's local time, summer time included."""
	root = top + "/local"
	db = top + "/local.db"
	tz = "EST5EDT,M3.2.0,M11.1.0"
	dates = {"jan": utc(2024, 1, 15, 12) * NS, "jul": utc(2024, 7, 15, 12) * NS,
		 "far": utc(2400, 7, 1, 3) * NS, "old": utc(1950, 6, 1) * NS}
	os.makedirs(root)
	for n, ns in dates.items():
		write(root + "/" + n)
		os.utime(root + "/" + n, ns=(ns, ns))
	res = run_fidx("scan", "-q", "--db", db, root, env={"TZ": tz})
	chk.eq("local: scan with TZ=%s: exit 0" % tz, res.rc, 0)
	con = lib.connect(db)
	got = {os.path.basename(r[0]): r[1] for r in con.execute(
		"SELECT full_path, date_last_modification FROM data")}
	started = con.execute("SELECT started_ns FROM scan").fetchone()[0]
	meta = con.execute("SELECT date_db_creation FROM metadata").fetchone()[0]
	con.close()
	saved = os.environ.get("TZ")
	os.environ["TZ"] = tz
	time.tzset()
	try:
		want = {n.encode(): time.strftime("%Y-%m-%d %H:%M:%S",
						  time.localtime(ns // NS)).encode()
			for n, ns in dates.items()}
		want_meta = time.strftime("%Y-%m-%d %H:%M:%S",
					  time.localtime(started // NS)).encode()
	finally:
		if saved is None:
			del os.environ["TZ"]
		else:
			os.environ["TZ"] = saved
		time.tzset()
	chk.eq("local: data.date_last_modification in the scanning host's zone", got, want)
	chk.ok("local: winter and summer offsets differ",
	       want[b"jan"][11:13] == b"07" and want[b"jul"][11:13] == b"08", repr(want))
	chk.eq("local: metadata.date_db_creation", meta, want_meta)


def check_gdback_far(chk, top):
	"""data's local dates at the ends of the years 0000 to 9999: NULL beyond, on a tmpfs."""
	root, db = top + "/gfar", top + "/gfar.db"
	tz, offset = "EST5EDT,M3.2.0,M11.1.0", -5 * 3600  # winter: every date below
	y0, y10000 = -62167219200, 253402300800
	dates = {"bce90": -65000000000, "y0": y0, "y0-10d": y0 + 10 * 86400,
		 "y9999": y10000 - 3600, "y10000-3h": y10000 + 3 * 3600,
		 "y10000-6h": y10000 + 6 * 3600}
	os.makedirs(root)
	for n, sec in dates.items():
		write(root + "/" + n)
		os.utime(root + "/" + n, ns=(sec * NS, sec * NS))
	res = run_fidx("scan", "-q", "--db", db, root, env={"TZ": tz})
	chk.eq("far local: scan with TZ=%s: exit 0" % tz, res.rc, 0)
	con = lib.connect(db)
	got = {os.path.basename(r[0]): r[1] for r in con.execute(
		"SELECT full_path, date_last_modification FROM data")}
	con.close()
	want = {}
	for n, sec in dates.items():
		local = sec + offset
		if y0 <= local < y10000:  # coreutils' date: ISO years, 0000 included
			want[n.encode()] = subprocess.run(
				["date", "-u", "-d", "@%d" % local, "+%Y-%m-%d %H:%M:%S"],
				capture_output=True, check=True).stdout.strip()
		else:
			want[n.encode()] = None
	chk.eq("far local: data.date_last_modification, NULL outside 0000 to 9999", got, want)


def main():
	chk = Checker()
	with TempDir() as td:
		top = td.path
		near, far = top + "/near", top + "/tmpfs/far"
		build(near, DATES)
		os.mkdir(top + "/tmpfs")
		try:
			td.mount_tmpfs(top + "/tmpfs", "4m")
			build(far, FAR)
			trees = [("ext4", near), ("tmpfs", far)]
		except (subprocess.CalledProcessError, OSError) as e:
			chk.skip("tmpfs tree", "cannot mount a tmpfs: %s" % e)
			trees = [("ext4", near)]
		for label, root in trees:
			db = top + "/%s.db" % label
			want = lstat_times(root)
			res = run_fidx("scan", "-q", "--db", db, root)
			chk.eq("%s: scan: exit 0" % label, (res.rc, res.err), (0, b""))
			with chk.guard(label + ": the database"):
				check_db(chk, label, db, 1, want)
			with chk.guard(label + ": file_view"):
				check_view(chk, label, db, 1, want)
			with chk.guard(label + ": exports"):
				check_exports(chk, label, db, want)
			with chk.guard(label + ": find and stats"):
				check_find_stats(chk, label, db, want)
			res = run_fidx("verify", db)
			chk.ok("%s: verify: the seal of such rows holds" % label,
			       res.rc == 0 and b"intact" in res.out, repr(res))
			if label == "ext4":
				with chk.guard(label + ": diff and check"):
					check_changes(chk, label, db, root, want)
		with chk.guard("GDBack dates in local time"):
			check_gdback_local(chk, top)
		if len(trees) > 1:
			with chk.guard("GDBack dates beyond the years 0000 to 9999"):
				check_gdback_far(chk, top + "/tmpfs")
	chk.done()


if __name__ == "__main__":
	main()
