#!/usr/bin/python3
"""t_find.py - `fidx find` against Python's answers over the real tree.

A tree of hostile names (newlines, invalid UTF-8, spaces, leading dashes,
'%' '_' '*' '?' '[' for LIKE and glob escaping, upper and lower case, UTF-8,
a deep path) with files of chosen sizes, times, owners and contents is
scanned with every digest; then for many patterns and filter combinations the
-0 output of `fidx find`, split on NUL, must equal, in order, the list Python
computes from os.lstat over the tree:

  * substring: `pattern in path` on bytes (-i: both sides bytes.lower(), which
    folds ASCII only); glob: fnmatch.fnmatchcase on bytes, against the path
    when the pattern holds '/', else the name; regex: re.search on bytes with
    re.DOTALL (POSIX '.' matches a newline) on patterns both dialects read
    alike;
  * filters: --type, --size (+N, -N, N, K/M suffixes), --newer/--older (dates
    in local time under a fixed TZ, UTC with Z, ages), --ext, --user, --hash
    (every digest length, a prefix);
  * the order: byte order of the paths within each scan, scans in id order.

The same queries run on a copy of the database whose index was removed (the
full-scan path) and must give the same bytes; a copy made to look like schema
version 1 and a copy whose scan is still 'running' (named with --scan) too.
Random substrings of the real paths (1 to 7 bytes, some case-swapped with
-i) check that the index never loses a match.  Then -l against os.lstat, pwd
and grp; --json (base64 for non-UTF-8 paths) against the tree; --scan
selection; exit statuses; one error line for each bad option or value.
"""

import base64
import fnmatch
import grp
import hashlib
import json
import os
import pwd
import random
import re
import shutil
import sqlite3
import stat
import time

import xxhash

import lib
from lib import Checker, TempDir, run_fidx, write

# Local time for --newer/--older and -l: a fixed zone, no tzdata needed (UTC+5).
TZ = "XST-5"
DAY = 86400 * 10**9


def build_tree(top):
	"""Makes the tree; returns its root (bytes)."""
	root = top + b"/tree"
	dirs = [b"a", b"sp ace", b"-lead", b"pct", b"bad\xff\xfe", b"nl\ndir", "uni".encode(),
		b"x", b"links"]
	for d in dirs:
		os.makedirs(root + b"/" + d)
	files = {
		b"a/Foo.TXT": b"foo upper", b"a/foo.txt": b"foo lower", b"a/bar.c": b"int x;\n",
		b"a/BAR.C": b"", b"a/colour.h": b"c" * 1023, b"a/color.h": b"c" * 1024,
		b"a/z.tar.gz": b"c" * 1025, b"a/.bashrc": b"", b"a/README": b"r" * 2048,
		b"sp ace/file with space.md": b"space", b"-lead/-dash.txt": b"dash",
		b"pct/100%_done.txt": b"pct", b"pct/under_score": b"u", b"pct/star*name": b"s",
		b"pct/starXname": b"x", b"pct/q?mark": b"q", b"pct/[br]acket": b"b",
		b"bad\xff\xfe/inv\xffalid.bin": b"\xff" * 10, b"nl\ndir/new\nline.txt": b"nl",
		"uni/Ünïcödé.TXT".encode(): b"u8", "uni/ünïcödé.txt".encode(): b"u8 lower",
		b"x/y.JPG": b"j" * 100, b"x/y.jpg": b"j" * 200, b"x/" + b"L" * 200 + b".long": b"",
	}
	for rel, data in files.items():
		write(root + b"/" + rel, data)
	deep = root + b"/deep"
	for i in range(40):
		deep += b"/d%02d" % i
	os.makedirs(deep)
	write(deep + b"/leaf.txt", b"leaf")
	lib.sparse(root + b"/x/big.img", 3 * 1048576, [(0, b"start")])
	os.symlink(b"../a/foo.txt", root + b"/links/to-foo")
	os.symlink(b"nowhere", root + b"/links/dangling")
	os.link(root + b"/a/bar.c", root + b"/links/hard.c")
	os.mkfifo(root + b"/links/fifo")
	os.chown(root + b"/pct/q?mark", lib.NOBODY, lib.NOBODY)
	os.chown(root + b"/x/y.jpg", lib.NOBODY, 0)
	# Times: fixed ones, and ages relative to now (mtime only matters).
	now = time.time_ns()
	times = {b"a/Foo.TXT": 1577836800 * 10**9, b"a/foo.txt": 1686830400 * 10**9,
		 b"a/bar.c": now - 3 * DAY, b"x/y.JPG": now - 10 * DAY, b"x/y.jpg": now - 30 * DAY,
		 b"pct/q?mark": 946684800 * 10**9 + 123456789}
	for rel, t in times.items():
		os.utime(root + b"/" + rel, ns=(t, t))
	return root


def walk(root):
	"""Every entry under and including root: {path: info} from os.lstat and the contents."""
	out = {}

	def add(path):
		st = os.lstat(path)
		name = lib.name_of(path)
		info = {"type": lib.type_of(st.st_mode), "size": st.st_size, "mode": st.st_mode,
			"uid": st.st_uid, "gid": st.st_gid, "nlink": st.st_nlink,
			"mtime_ns": st.st_mtime_ns, "name": name, "ext": lib.ext_of(name),
			"digests": {}}
		if stat.S_ISREG(st.st_mode):
			with open(path, "rb") as f:
				data = f.read()
			for d in ("md5", "sha1", "sha256", "sha512"):
				info["digests"][d] = hashlib.new(d, data).hexdigest()
			info["digests"]["xxh128"] = xxhash.xxh3_128(data).hexdigest()
		if stat.S_ISLNK(st.st_mode):
			info["link_target"] = os.readlink(path)
		out[path] = info

	add(root)
	for dpath, dnames, fnames in os.walk(root):
		for n in dnames + fnames:
			add(os.path.join(dpath, n))
	return out


class Query:
	"""One find query: its argv after the database, and Python's predicate."""

	def __init__(self, label, args, pred):
		self.label = label
		self.args = args
		self.pred = pred


def substring(pat, icase=False):
	"""The predicate of a substring pattern (bytes)."""
	if icase:
		return lambda p, i: pat.lower() in p.lower()
	return lambda p, i: pat in p


def glob(pat, icase=False):
	"""The predicate of a glob: whole path when it holds '/', else the name."""
	def pred(p, i):
		subject = p if b"/" in pat else i["name"]
		if icase:
			return fnmatch.fnmatchcase(subject.lower(), pat.lower())
		return fnmatch.fnmatchcase(subject, pat)
	return pred


def regex(pat, icase=False):
	"""The predicate of a regex, searched anywhere; '.' matches a newline as in POSIX."""
	r = re.compile(pat, re.DOTALL | (re.IGNORECASE if icase else 0))
	return lambda p, i: r.search(p) is not None


def local_ns(text, fmt):
	"""Seconds since the epoch (as ns) of text read as local time (TZ set)."""
	return int(time.mktime(time.strptime(text, fmt))) * 10**9


def queries(root, tree):
	"""The pattern and filter queries, each with its Python predicate."""
	qs = []
	subs = [b"foo", b"Foo", b"FOO", b"a/", b"", b"x", b"ab", b".txt", b"%_", b"_", b"*", b"?",
		b"[br]", b"\n", b"\xff", b"\xff\xfe/inv", b"new\nline", b"e w", b"-d", b"-lead/-",
		"ü".encode(), "Ü".encode(), b"d07/d08/d09", b"nothing-like-this", b"/leaf.txt",
		b"L" * 150, root + b"/a/bar.c", b"TXT", b"tar.gz"]
	for s in subs:
		qs.append(Query("substring %r" % s, ["--", s], substring(s)))
	for s in (b"foo", b"FOO", b"txt", b"bar.C", "ÜNÏ".encode(), b"Ab", b"\xff", b"L" * 10):
		qs.append(Query("-i substring %r" % s, ["-i", "--", s], substring(s, True)))
	globs = [b"*.txt", b"*.TXT", b"foo*", b"*o*", b"?ar.c", b"[bB]ar.*", b"[!f]*", b"*/a/*",
		 root + b"/a/*.c", b"*\n*", b"*%*", b"*_*", b"100%_done.txt", b"*.[ch]", b"star*",
		 b"*/deep/*/leaf.txt", b"*\xff*", b"*[*]*", b"q[?]mark", b"[[]br]acket", b"*.long",
		 b"-*", b"*", b"*/", b"tree", b"d1?", b"*/d0[0-3]/*"]
	for g in globs:
		qs.append(Query("glob %r" % g, ["-g", "--", g], glob(g)))
	for g in (b"*.txt", b"FOO.*", b"*/A/*", b"[A-C]*"):
		qs.append(Query("-i glob %r" % g, ["-i", "-g", "--", g], glob(g, True)))
	regexes = [b"foo", b"Foo$", b"^/", rb"\.txt$", rb"(bar|foo)\.", rb"d[0-9]+/leaf", b"a.c",
		   b"b+ar", b"colou?r", b"new.line", b"\xff", rb"ba?r\.c", b"(ab)*c", b"^.*/a/[^/]*$",
		   "é".encode(), rb"d3[5-9]/d[0-9]{2}/", b"L{100}", rb"\*name", rb"star.name$",
		   rb"100%_", b"(x|y)/y", rb"[.]h$", b"d0(1|2)/d0"]
	for r in regexes:
		qs.append(Query("regex %r" % r, ["-r", "--", r], regex(r)))
	for r in (b"FOO", rb"bar\.C$", b"^.*/UNI/"):
		qs.append(Query("-i regex %r" % r, ["-i", "-r", "--", r], regex(r, True)))

	# Filters, alone and with patterns.
	now = time.time_ns()
	d2022 = local_ns("2022-01-01", "%Y-%m-%d")
	d2020noon = local_ns("2020-01-01 12:00", "%Y-%m-%d %H:%M")
	utc2021 = 1609459200 * 10**9
	digests = tree[root + b"/a/bar.c"]["digests"]
	filters = [
		(["--type", "f"], lambda p, i: i["type"] == "f"),
		(["--type", "d,l"], lambda p, i: i["type"] in ("d", "l")),
		(["-t", "p"], lambda p, i: i["type"] == "p"),
		(["--size", "+1K"], lambda p, i: i["size"] > 1024),
		(["--size", "-1K"], lambda p, i: i["size"] < 1024),
		(["--size", "1K"], lambda p, i: i["size"] == 1024),
		(["--size", "0"], lambda p, i: i["size"] == 0),
		(["--size", "+2m"], lambda p, i: i["size"] > 2 * 1048576),
		(["--size", "2048"], lambda p, i: i["size"] == 2048),
		(["--newer", "2022-01-01"], lambda p, i: i["mtime_ns"] > d2022),
		(["--older", "2021-01-01T00:00:00Z"], lambda p, i: i["mtime_ns"] < utc2021),
		(["--older", "2020-01-01 12:00"], lambda p, i: i["mtime_ns"] < d2020noon),
		(["--newer", "7d"], lambda p, i: i["mtime_ns"] > now - 7 * DAY),
		(["--older", "2d", "--newer", "20d"],
		 lambda p, i: now - 20 * DAY < i["mtime_ns"] < now - 2 * DAY),
		(["--older", "48h"], lambda p, i: i["mtime_ns"] < now - 2 * DAY),
		(["--ext", "txt"], lambda p, i: i["ext"].lower() == b"txt"),
		(["-e", "JPG,c"], lambda p, i: i["ext"].lower() in (b"jpg", b"c")),
		(["--ext", ".gz"], lambda p, i: i["ext"].lower() == b"gz"),
		(["--user", "nobody"], lambda p, i: i["uid"] == lib.NOBODY),
		(["-u", "0"], lambda p, i: i["uid"] == 0),
		(["--hash", digests["sha256"]], lambda p, i: i["digests"].get("sha256") == digests["sha256"]),
		(["--hash", digests["md5"].upper()], lambda p, i: i["digests"].get("md5") == digests["md5"]),
		(["--hash", digests["xxh128"]], lambda p, i: i["digests"].get("xxh128") == digests["xxh128"]),
		(["--hash", digests["sha1"]], lambda p, i: i["digests"].get("sha1") == digests["sha1"]),
		(["--hash", digests["sha512"]], lambda p, i: i["digests"].get("sha512") == digests["sha512"]),
		(["--hash", digests["sha256"][:9]],
		 lambda p, i: any(v.startswith(digests["sha256"][:9]) for v in i["digests"].values())),
	]
	for args, pred in filters:
		qs.append(Query("filter %s" % " ".join(args), args, pred))
	combos = [
		(["--type", "f", "--size", "-2K", "--", b"a"], substring(b"a"),
		 lambda i: i["type"] == "f" and i["size"] < 2048),
		(["-g", "--newer", "2019-06-01", "--", b"*.txt"], glob(b"*.txt"),
		 lambda i: i["mtime_ns"] > local_ns("2019-06-01", "%Y-%m-%d")),
		(["-i", "--ext", "txt", "--", b"FOO"], substring(b"FOO", True),
		 lambda i: i["ext"].lower() == b"txt"),
		(["-r", "-t", "l,f", "--", b"hard|to-"], regex(b"hard|to-"),
		 lambda i: i["type"] in ("l", "f")),
		(["--user", str(lib.NOBODY), "--type", "f", "--", b"y."], substring(b"y."),
		 lambda i: i["uid"] == lib.NOBODY and i["type"] == "f"),
		(["--size", "+0", "--type", "f", "--", b"nothing-like-this"],
		 substring(b"nothing-like-this"), lambda i: False),
	]
	for args, pat, extra in combos:
		qs.append(Query("combo %r" % args, args,
				lambda p, i, pat=pat, extra=extra: pat(p, i) and extra(i)))
	return qs


def expected(tree, pred):
	"""The paths of tree for which pred holds, in byte order."""
	return sorted(p for p, i in tree.items() if pred(p, i))


def split0(out):
	"""-0 output as a list of paths."""
	if not out:
		return []
	return out[:-1].split(b"\0") if out.endswith(b"\0") else [out]


def run_find(db, *args):
	"""Runs fidx find on db with TZ fixed."""
	return run_fidx("find", "--db", db, *args, env={"TZ": TZ})


def check_queries(chk, label, db, qs, tree, others=(), stride=1):
	"""
	Each query on db against Python; on each database of others, the same bytes (for
	every filter and combination, and every stride-th pattern).
	"""
	bad, mismatch = [], []
	for n, q in enumerate(qs):
		want = expected(tree, q.pred)
		res = run_find(db, "-0", *q.args)
		got = split0(res.out)
		if got != want or res.rc != (0 if want else 1) or res.err:
			bad.append("%s: rc=%d err=%r missing=%s extra=%s order=%s" % (
				q.label, res.rc, res.err[:200], lib.short(sorted(set(want) - set(got))),
				lib.short(sorted(set(got) - set(want))), got != sorted(got)))
		compared = n % stride == 0 or q.label.startswith(("filter", "combo"))
		for other_label, other in others if compared else ():
			r2 = run_find(other, "-0", *q.args)
			if (r2.out, r2.rc, r2.err) != (res.out, res.rc, res.err):
				mismatch.append("%s on %s: rc=%d err=%r" % (q.label, other_label, r2.rc,
									     r2.err[:200]))
	chk.ok("%s: %d queries equal Python's answers, in byte order" % (label, len(qs)),
	       not bad, "; ".join(bad[:4]))
	every = "" if stride == 1 else " (every filter, every %s pattern)" % \
		{2: "second", 3: "third"}[stride]
	for other_label, _ in others:
		mm = [m for m in mismatch if (" on %s:" % other_label) in m]
		chk.ok("%s: the same output %s%s" % (label, other_label, every), not mm,
		       "; ".join(mm[:4]))


def random_substrings(tree, n, seed):
	"""n random 1-7 byte pieces of the real paths (some case-swapped, for -i)."""
	rnd = random.Random(seed)
	paths = sorted(tree)
	qs = []
	for k in range(n):
		p = rnd.choice(paths)
		ln = rnd.randint(1, 7)
		at = rnd.randint(0, max(0, len(p) - ln))
		s = p[at:at + ln]
		if k % 3 == 0:
			s = s.swapcase()
			qs.append(Query("random -i %r" % s, ["-i", "--", s], substring(s, True)))
		else:
			qs.append(Query("random %r" % s, ["--", s], substring(s)))
	return qs


def copy_db(src, dst, *sql):
	"""Copies database src to dst (folding its WAL in) and runs sql statements on the copy."""
	con = sqlite3.connect(src)
	out = sqlite3.connect(dst)
	con.backup(out)
	con.close()
	for s in sql:
		out.executescript(s)
	out.commit()
	out.close()


def check_long(chk, db, tree, root):
	"""-l: permissions, links, user, group, size, local mtime and path against lstat."""
	res = run_find(db, "-l", "-0", "-t", "f,d,l,p")
	bad = []
	pat = re.compile(rb"^(\S{10}) +(\d+) (\S+) +(\S+) +(\d+) (\d{4}-\d\d-\d\d \d\d:\d\d) (.*)$",
			 re.S)
	recs = split0(res.out)
	for rec in recs:
		m = pat.match(rec)
		if not m:
			bad.append("unparsed %r" % rec[:100])
			continue
		path = m.group(7)
		if b" -> " in path and tree.get(path) is None:
			# a symlink: "PATH -> TARGET", as ls -l shows it
			path, target = path.rsplit(b" -> ", 1)
			i = tree.get(path)
			if i is not None and (i["type"] != "l" or i["link_target"] != target):
				bad.append("%r: ' -> %r' after a path that is no such symlink" % (path, target))
		elif tree.get(path) is not None and tree[path]["type"] == "l":
			bad.append("%r: a symlink without ' -> TARGET'" % path)
		i = tree.get(path)
		if i is None:
			bad.append("unknown path %r" % path)
			continue
		try:
			user = pwd.getpwuid(i["uid"]).pw_name
		except KeyError:
			user = str(i["uid"])
		try:
			group = grp.getgrgid(i["gid"]).gr_name
		except KeyError:
			group = str(i["gid"])
		when = time.strftime("%Y-%m-%d %H:%M", time.localtime(i["mtime_ns"] // 10**9))
		want = (stat.filemode(i["mode"]).encode(), b"%d" % i["nlink"], user.encode(),
			group.encode(), b"%d" % i["size"], when.encode())
		if m.groups()[:6] != want:
			bad.append("%r: got %r want %r" % (path, m.groups()[:6], want))
	want_paths = expected(tree, lambda p, i: i["type"] in ("f", "d", "l", "p"))
	chk.ok("-l: one record per entry, every column as lstat, pwd, grp and localtime say",
	       res.rc == 0 and not bad and [long_path(pat.match(r).group(7), tree) for r in recs
					     if pat.match(r)] == want_paths,
	       "; ".join(bad[:4]) or repr(res))


def long_path(shown, tree):
	"""The path of a -l record's last field (PATH, or PATH -> TARGET for a symlink)."""
	if shown in tree:
		return shown
	return shown.rsplit(b" -> ", 1)[0]


def check_json(chk, db, tree):
	"""--json: one object per line; path (base64 when not UTF-8) and columns as the tree."""
	res = run_find(db, "--json")
	bad, paths = [], []
	for line in res.out.split(b"\n")[:-1]:
		try:
			o = json.loads(line)
		except ValueError as e:
			bad.append("bad JSON %r: %s" % (line[:100], e))
			continue
		if "path_base64" in o:
			path = base64.b64decode(o["path_base64"])
			if path.decode("utf-8", "surrogateescape") == path.decode("utf-8", "ignore"):
				bad.append("base64 for a UTF-8 path %r" % path)
		else:
			path = o["path"].encode()
		paths.append(path)
		i = tree.get(path)
		if i is None:
			bad.append("unknown path %r" % path)
			continue
		want = {"type": i["type"], "size": i["size"], "uid": i["uid"], "gid": i["gid"],
			"nlink": i["nlink"], "mtime_ns": i["mtime_ns"], "mode": i["mode"],
			"permissions": stat.filemode(i["mode"]), "error": None}
		for d in ("md5", "sha1", "sha256", "sha512", "xxh128"):
			want[d] = i["digests"].get(d)
		got = {k: o.get(k) for k in want}
		if got != want:
			bad.append("%r: got %r want %r" % (path, got, want))
		lt = o.get("link_target_base64") or o.get("link_target")
		if i["type"] == "l" and (lt is None or
					 (os.fsencode(lt) if "link_target_base64" not in o
					  else base64.b64decode(lt)) != i["link_target"]):
			bad.append("%r: link_target %r" % (path, lt))
		t = o.get("mtime", "")
		if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z", t or ""):
			bad.append("%r: mtime %r" % (path, t))
	chk.ok("--json: every entry once, in byte order, columns as the tree",
	       res.rc == 0 and not bad and paths == sorted(tree), "; ".join(bad[:4]) or repr(res))


def check_errors(chk, db):
	"""Bad options and values: exit 2 and one line naming the culprit."""
	cases = [
		(["--size", "1Q"], b"--size"), (["--size", "+"], b"--size"),
		(["--size", "99999999999999999999"], b"--size"),
		(["--newer", "yesterday"], b"--newer"), (["--older", "2024-02-30"], b"--older"),
		(["--newer", "2024-01-31T25:00"], b"--newer"), (["--newer", " 999-01-01"], b"--newer"),
		(["--older", "+202-01-01"], b"--older"), (["--type", "q"], b"--type"),
		(["--type", "fd"], b"--type"), (["--ext", ""], b"--ext"), (["--ext", "a,,b"], b"--ext"),
		(["--user", "no-such-user-zz"], b"no-such-user-zz"), (["--hash", "xyz"], b"--hash"),
		(["--hash", "a" * 129], b"--hash"), (["-r", "--", "("], b"regex"),
		(["-g", "-r", "x"], b"-g and -r"), (["x", "y"], b"'y'"), (["--bogus"], b"--bogus"),
		(["--type"], b"--type"), (["-g"], b"-g"),
	]
	for args, mention in cases:
		lib.check_fatal(chk, "find %s" % " ".join(args), run_find(db, *args), mention=mention)


def main():
	chk = Checker()
	os.environ["TZ"] = TZ
	time.tzset()
	with TempDir() as td:
		top = os.fsencode(td.path)
		root = build_tree(top)
		lib.settle(root)
		db = top + b"/fidx.db"
		res = run_fidx("scan", "-q", "--hash", "md5,sha1,sha256,sha512,xxh128", "-o", db, root)
		if not chk.ok("scan of the tree", res.rc == 0, repr(res)):
			chk.done()
		tree = walk(root)
		con = lib.connect(db)
		idx = con.execute("SELECT scan_id, paths FROM path_index").fetchall()
		con.close()
		chk.eq("the scan built its path index, one path per entry", idx, [(1, len(tree))])

		noindex = top + b"/noindex.db"
		copy_db(db, noindex, "DELETE FROM path_index; DELETE FROM path_block;"
			" DELETE FROM path_trigram;")
		v1 = top + b"/v1.db"
		copy_db(db, v1, "")
		lib.downgrade(v1, 1)
		running = top + b"/running.db"
		copy_db(db, running, "DELETE FROM path_index; DELETE FROM path_block;"
			" DELETE FROM path_trigram; UPDATE scan SET status = 'running',"
			" finished_ns = NULL, entries = NULL;")
		others = [("without the index", noindex), ("of schema version 1", v1),
			  ("with --scan 1 of a running scan", running)]
		# Under ASan (a run costs ~6x there, most of it in starting and ending the process)
		# every query runs on the indexed database; the copies without an index and of schema
		# version 1 answer every filter and every third pattern, the running scan every third
		# query (each kind of pattern still among them: a copy reads its rows by the same
		# code whatever the pattern).
		asan = lib.is_asan()
		stride = 3 if asan else 1
		# The running copy needs --scan 1: wrap it.
		qs = queries(root, tree)
		check_queries(chk, "patterns and filters", db, qs, tree, others=others[:2],
			      stride=stride)
		check_queries(chk, "patterns and filters, --scan 1 of a running scan", running,
			      [Query(q.label, ["--scan", "1"] + q.args, q.pred)
			       for q in qs[:40][::stride]], tree)
		# 150 random substrings, 40 under ASan, where the copy without an index answers only
		# the fixed queries above.
		check_queries(chk, "random substrings", db,
			      random_substrings(tree, 40 if asan else 150, 5), tree,
			      others=[] if asan else others[:1])
		res = run_find(running)
		chk.ok("a running scan is not read by default", res.rc == 2 and
		       b"no complete scan" in res.err, repr(res))

		check_long(chk, db, tree, root)
		check_json(chk, db, tree)

		# Newline-separated output: the same paths, each followed by '\n'.
		res = run_find(db, "--", b"a/")
		want = expected(tree, substring(b"a/"))
		chk.ok("without -0: each path then a newline", res.out == b"".join(p + b"\n" for p in want)
		       and res.rc == 0, repr(res))
		# The database as first argument.
		res = run_fidx("find", db, "foo", env={"TZ": TZ})
		chk.ok("DB PATTERN as arguments", res.rc == 0 and res.out ==
		       b"".join(p + b"\n" for p in expected(tree, substring(b"foo"))), repr(res))
		res = run_fidx("find", db, env={"TZ": TZ})
		chk.ok("DB alone: every entry", res.rc == 0 and
		       res.out.count(b"\n") == sum(1 + p.count(b"\n") for p in tree), repr(res))

		# Dates beyond int64 nanoseconds (1677..2262) are the ends of time, not an
		# overflow (UBSan stopped --newer 9999-01-01 once).
		every = sorted(tree)
		for args, want in ((["--older", "9999-12-31"], every), (["--newer", "9999-12-31"], []),
				   (["--newer", "1000-01-01"], every), (["--older", "1000-01-01T00:00Z"], []),
				   (["--newer", "999999999w"], every)):
			res = run_find(db, "-0", *args)
			chk.ok("%s: %s" % (" ".join(args), "every entry" if want else "none"),
			       split0(res.out) == want and res.rc == (0 if want else 1) and not res.err,
			       repr(res))

		# A second scan of the same root, with one more file: --scan selection.
		write(root + b"/a/added-later.txt", b"new")
		res = run_fidx("scan", "-q", "--hash", "sha256", "-o", db, root)
		chk.ok("second scan", res.rc == 0, repr(res))
		tree2 = walk(root)
		for args, want in (([], expected(tree2, substring(b".txt"))),
				   (["--scan", "1"], expected(tree, substring(b".txt"))),
				   (["--scan", "2,1"], expected(tree, substring(b".txt")) +
				    expected(tree2, substring(b".txt")))):
			res = run_find(db, "-0", *args, ".txt")
			chk.ok("--scan %s: the scan's paths, scans in id order" % (args[1:] or ["default"]),
			       res.rc == 0 and split0(res.out) == want, repr(res))
		con = lib.connect(db)
		idx = con.execute("SELECT scan_id FROM path_index ORDER BY scan_id").fetchall()
		con.close()
		chk.eq("each complete scan has its index", idx, [(1,), (2,)])

		check_errors(chk, db)
		lib.check_write_errors(chk, "find -l", "find", "-l", "--db", db)
		res = run_find(db, "--help")
		chk.ok("--help: exit 0, says what -i folds", res.rc == 0 and b"ASCII" in res.out and
		       b"usage: fidx find" in res.out, repr(res))
	chk.done()


main()
