#!/usr/bin/python3
"""t_match.py - `fidx match`: hash lists in, hits out, against Python's hashlib.

A tree with hostile names (newline, backslash, both, tab, leading dash,
invalid UTF-8), duplicate contents, a hard link, an empty file, a symlink, a
FIFO and a file its scanner cannot read is scanned as user nobody with
--hash md5,sha1,sha256,sha512 (so the unreadable file has no digest), and a
second small tree with --hash sha256,xxh128.  The lists are written by the
real tools: sha256sum (escaped lines for the names with a newline or a
backslash), md5sum -b, sha1sum, sha512sum, sha256sum --tag, sha256sum -z,
hashdeep -c md5,sha256 -r, plus a synthetic NSRL CSV (quoted, upper case,
CRLF), a bare list in mixed case with comments, and lists with malformed
lines at known line numbers.

Expected hits are computed here: the files whose hashlib digest is one the
lists were made from (so a copy of a listed file is a hit too); --not
expects every other regular file that has a digest.  Checked: the paths
(-0, byte-exact), -l and --json (algorithm, digest, list, line, scan id,
path_base64), the exact malformed line numbers in the warnings, the summary
and --show-malformed, --strict, an algorithm the scan lacks (fatal alone, a
warning beside a list that applies), --algo xxh128, stdin, the count of
files not compared, and the exit statuses.
"""

import base64
import hashlib
import json
import os
import re
import subprocess

import xxhash

import lib
from lib import Checker, TempDir, check_fatal, run_fidx, write

FOUR = ["md5", "sha1", "sha256", "sha512"]

# name -> content; several names share a content (a copy of a listed file is a hit).
FILES = {
	b"plain.txt": b"plain\n",
	b"copy-of-plain": b"plain\n",
	b"new\nline": b"newline content",
	b"back\\slash": b"backslash content",
	b"both\\\nx": b"both content",
	b"tab\tname": b"tab content",
	b"-dash": b"dash content",
	b"inv\xff\xfename": b"invalid utf-8 name",
	b"sp ace": b"space",
	b"empty": b"",
	b"sub/deep/one": b"one",
	b"sub/deep/two": b"two",
	b"hd/a": b"hashdeep a",
	b"hd/b,comma": b"hashdeep b",
	b"hd/c": b"hashdeep c",
	b"nsrl/x": b"nsrl x",
	b"nsrl/y": b"nsrl y",
	b"bare/u": b"bare upper",
	b"bare/l": b"bare lower",
	b"other/never-listed": b"never listed",
	b"other/also-unknown": b"unknown too",
}
SECRET = b"secret"


def sh_tool(argv, cwd, stdin=None):
	"""Runs a real tool (argv of bytes) in cwd; returns its stdout bytes."""
	p = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True)
	if p.returncode != 0:
		raise RuntimeError("%r failed: %r" % (argv, p.stderr[:300]))
	return p.stdout


def run_stdin(data, *args):
	"""Runs fidx with data on standard input; returns a lib.Result-like tuple."""
	p = subprocess.run([lib.FIDX] + list(args), input=data, capture_output=True, timeout=120)
	return lib.Result(p.returncode, p.stdout, p.stderr, 0, False)


def paths0(res):
	"""The set of NUL-terminated paths on stdout."""
	return set(res.out.split(b"\0")[:-1]) if res.out else set()


def main():
	chk = Checker()
	with TempDir() as td:
		top = os.fsencode(td.path)
		os.chmod(top, 0o755)
		root = top + b"/tree"
		for name, data in FILES.items():
			os.makedirs(os.path.dirname(root + b"/" + name), exist_ok=True)
			write(root + b"/" + name, data)
		os.link(root + b"/plain.txt", root + b"/hardlink")
		os.symlink(b"plain.txt", root + b"/symlink")
		os.mkfifo(root + b"/fifo")
		write(root + b"/" + SECRET, b"unreadable to nobody")
		os.chmod(root + b"/" + SECRET, 0)
		dbdir = top + b"/db"
		os.mkdir(dbdir)
		os.chown(dbdir, lib.NOBODY, lib.NOBODY)
		db = dbdir + b"/m.db"
		res = run_fidx("scan", "-q", "--hash", ",".join(FOUR), "-o", db, root, uid=lib.NOBODY)
		chk.ok("scan 1 as nobody (one unreadable file)", res.rc == 1, repr(res))
		root2 = top + b"/tree2"
		os.mkdir(root2)
		write(root2 + b"/x1", b"plain\n")
		write(root2 + b"/x2", b"tree2 only")
		res = run_fidx("scan", "-q", "--hash", "sha256,xxh128", "-o", db, root2)
		chk.ok("scan 2 (sha256,xxh128)", res.rc == 0, repr(res))

		# Ground truth: hashlib over every regular file (root reads the secret too).
		truth = lib.truth(root, lib.Truth(hashes=FOUR, btime=False))
		regular = {p: r for p, r in truth.items() if r["type"] == "f"}
		hexof = {p: {d: r[d].hex() for d in FOUR} for p, r in regular.items()}
		secret = root + b"/" + SECRET
		comparable = set(regular) - {secret}
		chk.eq("regular files in the truth", len(regular), len(FILES) + 2)

		L = top + b"/lists"
		os.mkdir(L)
		listed = {d: set() for d in FOUR}  # digests (hex) the lists were made from

		def names(*prefixes):
			return [n for n in FILES if n.split(b"/")[0] in prefixes or n in prefixes]

		def make(fname, argv, files, algo, extra_stdin=None):
			out = sh_tool(argv + files, root, extra_stdin)
			write(L + b"/" + fname, out)
			for f in files:
				listed[algo].add(hexof[root + b"/" + f][algo])
			return out

		sha256_files = [b"new\nline", b"back\\slash", b"both\\\nx", b"plain.txt", b"-dash"]
		out = make(b"a.sha256", [b"sha256sum", b"--"], sha256_files, "sha256")
		chk.ok("sha256sum escaped the names with a newline or backslash",
		       out.count(b"\n") == len(sha256_files) and out.count(b"\n\\") >= 2, repr(out))
		make(b"b.md5", [b"md5sum", b"-b", b"--"], [b"tab\tname", b"sp ace"], "md5")
		make(b"c.sha1", [b"sha1sum", b"--"], [b"inv\xff\xfename", b"sub/deep/one"], "sha1")
		make(b"d.sha512", [b"sha512sum", b"--"], [b"sub/deep/two"], "sha512")
		out = make(b"e.tag", [b"sha256sum", b"--tag", b"--"], [b"empty", b"new\nline"],
			   "sha256")
		chk.ok("sha256sum --tag wrote BSD lines", out.startswith(b"SHA256 (") and
		       b"\\SHA256 (new\\nline)" in out, repr(out))
		make(b"f.z", [b"sha256sum", b"-z", b"--"], [b"both\\\nx"], "sha256")
		hd = sh_tool([b"hashdeep", b"-c", b"md5,sha256", b"-r", b"hd"], root)
		write(L + b"/g.hashdeep", hd)
		chk.ok("hashdeep wrote its header", hd.startswith(b"%%%% HASHDEEP-1.0\n"), repr(hd[:80]))
		for f in names(b"hd"):
			listed["md5"].add(hexof[root + b"/" + f]["md5"])
			listed["sha256"].add(hexof[root + b"/" + f]["sha256"])

		# NSRL-style CSV: upper-case quoted SHA-1 and MD5, other columns, CRLF, unrelated rows.
		rows = [b'"SHA-1","MD5","CRC32","FileName","FileSize","ProductCode",'
			b'"OpSystemCode","SpecialCode"']
		for f in names(b"nsrl"):
			h = hexof[root + b"/" + f]
			rows.append(b'"%s","%s","0000ABCD","%s",%d,1234,"358",""' % (
				h["sha1"].upper().encode(), h["md5"].upper().encode(), f, len(FILES[f])))
			listed["sha1"].add(h["sha1"])
			listed["md5"].add(h["md5"])
		for i in range(50):
			rows.append(b'"%s","%s","00000000","unrelated %d",1,1,"358",""' % (
				hashlib.sha1(b"u%d" % i).hexdigest().upper().encode(),
				hashlib.md5(b"u%d" % i).hexdigest().upper().encode(), i))
		write(L + b"/h.csv", b"\r\n".join(rows) + b"\r\n")

		# A bare list: mixed case, comments, blank lines.
		u, lo = hexof[root + b"/bare/u"]["sha256"], hexof[root + b"/bare/l"]["md5"]
		write(L + b"/i.bare", b"# known bad\n\n%s\n  %s  \n# end\n" % (
			u.upper().encode(), (lo[:16].upper() + lo[16:]).encode()))
		listed["sha256"].add(u)
		listed["md5"].add(lo)

		all_lists = sorted(os.listdir(L))
		lists = [L + b"/" + n for n in all_lists]
		expect = {p for p in comparable if any(hexof[p][d] in listed[d] for d in FOUR)}
		chk.ok("the lists cover some files, not all", 0 < len(expect) < len(comparable),
		       "%d of %d" % (len(expect), len(comparable)))

		res = run_fidx("match", "--scan", "1", "-0", db, *lists)
		got = paths0(res)
		chk.eq("positive match: exit 0", res.rc, 0)
		chk.ok("positive match: the paths equal hashlib's", got == expect,
		       "missing %r extra %r" % (sorted(expect - got)[:5], sorted(got - expect)[:5]))
		chk.ok("positive match: each path once", len(res.out.split(b"\0")) - 1 == len(got))
		chk.ok("copies of listed content match (copy-of-plain, hardlink)",
		       {root + b"/copy-of-plain", root + b"/hardlink"} <= got)
		err = res.err.decode("utf-8", "replace")
		chk.ok("no malformed line reported for the tools' lists",
		       "malformed lines (" not in err and
		       err.count(" repeated, 0 malformed lines") == len(os.listdir(L)), err)
		m = re.search(r"(\d+) files? compared in 1 scan: (\d+) in the lists", err)
		chk.ok("summary: files compared and hits", m and int(m.group(1)) == len(comparable)
		       and int(m.group(2)) == len(expect), err)
		m = re.search(r"warning: (\d+) regular files? not compared", err)
		chk.ok("the unreadable file is counted as not compared", m and int(m.group(1)) == 1, err)
		for n in all_lists:
			chk.ok("summary names list %s" % n.decode(), ("'%s'" % os.fsdecode(L + b"/" + n))
			       in err, err)
		chk.ok("summary: formats told", "(hashdeep)" in err and "(csv)" in err and
		       "(sums)" in err, err)

		# --not: every comparable file outside the lists; the unreadable one only counted.
		res = run_fidx("match", "--scan", "1", "--not", "-0", db, *lists)
		got = paths0(res)
		chk.eq("--not: exit 0", res.rc, 0)
		chk.ok("--not: the paths equal hashlib's", got == comparable - expect,
		       "missing %r extra %r" % (sorted((comparable - expect) - got)[:5],
						sorted(got - (comparable - expect))[:5]))
		chk.ok("--not: the unreadable file is not listed", secret not in got)
		chk.ok("--not: symlink and FIFO are never listed",
		       not ({root + b"/symlink", root + b"/fifo"} & got))
		m = re.search(r"warning: (\d+) regular files? not compared: no md5 or sha1 or sha256 or"
			      r" sha512 digest", res.err.decode())
		chk.ok("--not: the count of files not compared", m and int(m.group(1)) == 1,
		       res.err)

		# --json and -l on the sha256sum list alone: line numbers as sha256sum wrote them.
		a = L + b"/a.sha256"
		res = run_fidx("match", "--scan", "1", "--json", db, a)
		objs = [json.loads(x) for x in res.out_lines()]
		first_line = {}
		for i, f in enumerate(sha256_files):
			first_line.setdefault(hexof[root + b"/" + f]["sha256"], i + 1)
		want = {p for p in comparable if hexof[p]["sha256"] in first_line}
		good = len(objs) == len(want)
		for o in objs:
			p = base64.b64decode(o["path_base64"]) if "path_base64" in o else \
				os.fsencode(o["path"])
			h = hexof.get(p, {}).get("sha256")
			good = good and p in want and o["algorithm"] == "sha256" and o["digest"] == h \
				and o["line"] == first_line[h] and o["scan_id"] == 1 \
				and os.fsencode(o["list"]) == a
		chk.ok("--json: path, algorithm, digest, list, line, scan_id", good, res.out[:600])
		chk.ok("--json: path_base64 for the invalid UTF-8 name",
		       all("path_base64" in o for o in objs if "\ufffd" in o["path"] or
			   "\\udc" in repr(o["path"])), res.out[:300])
		res = run_fidx("match", "--scan", "1", "-l", "-0", db, a)
		recs = res.out.split(b"\0")[:-1]
		good = len(recs) == len(want)
		for r in recs:
			m = re.match(rb"sha256:([0-9a-f]{64})  (.*):(\d+)  (/.*)$", r, re.S)
			good = good and m is not None and m.group(4) in want and \
				m.group(1).decode() == hexof[m.group(4)]["sha256"] and \
				int(m.group(3)) == first_line[m.group(1).decode()]
		chk.ok("-l: ALGO:HEX  LIST:LINE  PATH", good, res.out[:400])

		# Without --scan: the newest complete scan of each root, so tree2 too.
		res = run_fidx("match", "-0", "-q", db, a)
		chk.ok("default scans: both roots", root2 + b"/x1" in paths0(res) and
		       root + b"/plain.txt" in paths0(res), repr(res))

		# Several matches: the first list on the command line, its first line.
		res = run_fidx("match", "--scan", "1", "--json", db, L + b"/e.tag", a)
		o = [json.loads(x) for x in res.out_lines() if b"line" in x]
		nl = [x for x in o if x["path"] == os.fsdecode(root + b"/new\nline")]
		chk.ok("two lists hold a digest: the first list wins",
		       len(nl) == 1 and os.fsencode(nl[0]["list"]) == L + b"/e.tag" and nl[0]["line"] == 2,
		       nl)

		# Standard input, and -z lists.
		res = run_stdin(lib.read_bytes(a), "match", "--scan", "1", "-0", "-q", os.fsdecode(db),
				"-")
		chk.ok("list on standard input ('-')", res.rc == 0 and paths0(res) == want, repr(res))
		chk.eq("-q: nothing on stderr but warnings", [l for l in res.err_lines()
							   if b"warning" not in l], [])
		res = run_fidx("match", "--scan", "1", "-0", db, L + b"/f.z")
		chk.ok("sha256sum -z list", paths0(res) == {root + b"/both\\\nx"}, repr(res))

		# Malformed lines at known line numbers.
		good_line = lib.read_bytes(L + b"/d.sha512").rstrip(b"\n")
		bad = {3, 6, 7, 8} | set(range(20, 41))
		text = []
		for n in range(1, 46):
			text.append(b"# comment" if n == 1 else b"" if n == 5 else
				    (b"junk %d" % n if n % 2 else b"0123456789abcdef  odd length")
				    if n in bad else good_line)
		bl = L + b"/bad.txt"
		write(bl, b"\n".join(text) + b"\n")
		res = run_fidx("match", "--scan", "1", "-0", db, bl)
		lines = res.err.decode().splitlines()
		warned = [int(m.group(1)) for l in lines
			  for m in [re.search(r"'[^']*bad.txt' line (\d+): ", l)] if m]
		chk.eq("malformed: the first 10 lines warned, by number", warned, sorted(bad)[:10])
		chk.ok("malformed: a reason on each", all(("not a digest line" in l or
							   "16 hex digits" in l) for l in lines
							  if " line " in l and "bad.txt" in l), lines)
		summ = [l for l in lines if "malformed lines (" in l]
		chk.ok("malformed: summary with count and ranges",
		       len(summ) == 1 and "25 malformed lines (lines 3, 6-8, 20-40)" in summ[0] and
		       "--show-malformed" in summ[0], summ)
		chk.ok("malformed: the good lines still match", res.rc == 0 and
		       paths0(res) == {root + b"/sub/deep/two"}, repr(res))
		res = run_fidx("match", "--scan", "1", "--show-malformed", "-q", db, bl)
		warned = [int(m.group(1)) for l in res.err.decode().splitlines()
			  for m in [re.search(r"bad.txt' line (\d+): ", l)] if m]
		chk.eq("--show-malformed: every line number", warned, sorted(bad))
		res = run_fidx("match", "--scan", "1", "--strict", db, bl)
		check_fatal(chk, "--strict", res, mention=b"line 3")
		chk.eq("--strict: nothing on stdout", res.out, b"")

		# Many runs of malformed lines: the summary stays one line, the rest elided.
		write(L + b"/sparse.txt", b"".join(b"junk\n" + good_line + b"\n" for _ in range(30)))
		res = run_fidx("match", db, L + b"/sparse.txt")
		summ = [l for l in res.err_lines() if b"malformed lines (" in l]
		chk.ok("30 separate malformed lines: 10 numbers then '...'", len(summ) == 1 and
		       b"(lines 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, ...)" in summ[0], summ)
		# A large garbage list: still a dozen lines of stderr.
		write(L + b"/junk.txt", b"".join(b"not a digest %d\n" % i for i in range(100000)))
		res = run_fidx("match", db, L + b"/junk.txt", a)
		chk.ok("100000 malformed lines: 12 lines of warnings (10, the count, no digest)",
		       len([l for l in res.err_lines() if b"junk.txt" in l]) == 12 and
		       b"100000 malformed lines (lines 1-100000)" in res.err, res.err[-400:])

		# No hits: exit 1; a list without digests or unreadable: exit 2.
		write(L + b"/none.md5", (hashlib.md5(b"nothing").hexdigest() + "  x\n").encode())
		res = run_fidx("match", "--scan", "1", db, L + b"/none.md5")
		chk.ok("no hits: exit 1, nothing on stdout", res.rc == 1 and res.out == b"", repr(res))
		m = re.search(rb"(\d+) files? compared in 1 scan: 0 in the lists", res.err)
		chk.ok("no hits: summary says 0", m is not None, res.err)
		write(L + b"/empty.txt", b"# nothing\n\n")
		res = run_fidx("match", db, L + b"/empty.txt")
		chk.ok("a list without digests: exit 2", res.rc == 2 and b"no digest" in res.err,
		       repr(res))
		check_fatal(chk, "missing list", run_fidx("match", db, L + b"/missing"),
			    mention=b"missing")
		check_fatal(chk, "no list", run_fidx("match", db), mention=b"no hash list")
		check_fatal(chk, "unknown --algo", run_fidx("match", "--algo", "crc32", db, a),
			    mention=b"crc32")
		check_fatal(chk, "a list that is a folder", run_fidx("match", db, L),
			    mention=b"Is a directory")

		# Algorithms the scan lacks: scan 2 has sha256 and xxh128 only.
		res = run_fidx("match", "--scan", "2", db, L + b"/b.md5")
		check_fatal(chk, "md5 list against a sha256,xxh128 scan", res, mention=b"md5")
		res = run_fidx("match", "--scan", "2", "-0", db, L + b"/b.md5", a)
		chk.ok("md5 and sha256 lists against scan 2: sha256 hits, md5 warned",
		       res.rc == 0 and paths0(res) == {root2 + b"/x1"} and
		       re.search(rb"b.md5': its 2 md5 digests are not compared", res.err), repr(res))
		res = run_fidx("match", "--scan", "1,2", "-0", db, L + b"/b.md5", a)
		chk.ok("scans 1 and 2: scan 2 lacks md5, said so",
		       re.search(rb"scan 2 \('[^']*tree2'\) has no md5 digests: its files are compared"
				 rb" by sha256 only", res.err) is not None and
		       paths0(res) == want | {root2 + b"/x1"} |
		       {p for p in comparable if hexof[p]["md5"] in listed["md5"] and
			p.split(b"/")[-1] in (b"tab\tname", b"sp ace")}, repr(res))

		# --algo xxh128: 32 hex digits read as xxh128, against scan 2.
		x2 = xxhash.xxh3_128(b"tree2 only").hexdigest()
		write(L + b"/x.bare", (x2 + "\n").encode())
		res = run_fidx("match", "--scan", "2", db, L + b"/x.bare")
		check_fatal(chk, "32 digits are md5 by default (not in scan 2)", res, mention=b"md5")
		res = run_fidx("match", "--scan", "2", "--algo", "xxh128", "--json", db, L + b"/x.bare")
		o = [json.loads(x) for x in res.out_lines()]
		chk.ok("--algo xxh128: the file with that XXH3-128",
		       res.rc == 0 and len(o) == 1 and o[0]["path"] == os.fsdecode(root2 + b"/x2") and
		       o[0]["algorithm"] == "xxh128" and o[0]["digest"] == x2 and o[0]["scan_id"] == 2,
		       repr(res))
		res = run_fidx("match", "--algo", "sha256", db, L + b"/x.bare")
		chk.ok("--algo sha256 on 32 digits: malformed, named", res.rc == 2 and
		       b"32 hex digits: not a sha256 digest" in res.err, repr(res))
		lib.check_write_errors(chk, "match --not", "match", "-q", "--scan", "1", "--not", db,
				   L + b"/x.bare")
	chk.done()


if __name__ == "__main__":
	main()
