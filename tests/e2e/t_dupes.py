#!/usr/bin/python3
# e2e: alone (tests/e2e/run): it interrupts a slow dupes after half a second.
# e2e: tsan (tests/e2e/run --marked tsan): dupes' scan and its hashing threads, interrupted too.
"""t_dupes.py - `fidx dupes` against a Python ground truth and against jdupes.

Builds a tree with duplicate groups of many kinds: three copies of a small
file, copies between one and two edge blocks, files of 1 MiB and 5 MiB that
share their size and their first and last blocks but differ in the middle
(so the edge hash must not decide), two copies of 6 MiB (read by a streamer),
hard links (an inode with two names and a copy; an inode with two names and
no copy), symlinks to duplicates (never followed), empty files, names with a
newline, an invalid UTF-8 byte, a space and a leading dash, and unique files.
The ground truth groups every regular file found by a walk that does not
follow symlinks by (size, SHA-256 of the content): a group is two distinct
inodes at least, each with all its paths.  Then:

  * PATH mode (temporary database, in $TMPDIR, gone afterwards): --json and
    the text form (-0, and with newlines) each equal the truth: the files,
    their paths and hard links, size, digest, waste, the order (most waste
    first), the total line; empty files only with --empty;
  * jdupes -r -0 finds the same groups: jdupes lists one name per inode
    (hard links are not duplicates of each other by default), leaves out
    empty files and does not follow symlinks, so each group compares as its
    set of (device, inode) pairs, and every name jdupes prints is one fidx
    lists for that inode;
  * --db FILE keeps a scan with hash none; file_digest is then filled for
    what was read (never for a file read for nothing); a second run in DB
    mode gives the same groups and opens no file of the tree (strace);
  * DB mode on a sha256 scan reads no file and writes no digest;
  * a file changed since the scan, and a file nobody may read (run as
    nobody), are each left out with one warning line naming them;
  * a database nobody cannot write: the groups anyway, one warning;
  * under the race shim, a small and a large file overwritten once fidx has
    read from them (same size, the mtime moves) are left out, never grouped
    with their former copies (-j 1 and -j 3);
  * SIGINT while the files are read: exit 130, nothing listed, the
    temporary database removed;
  * a file as PATH (exit 1), overlapping PATHs (each file once), a hard
    link across two PATHs (one file, both names), a missing $TMPDIR (exit 2,
    one line);
  * exit status 1 when nothing is duplicated, 2 for a missing PATH or
    --scan with PATHs.
"""

import base64
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import time

import xxhash

import lib
from lib import Checker, TempDir, run_fidx, write

MIB = 1 << 20


def rnd(seed, n):
	"""n pseudo-random bytes from seed (reproducible)."""
	out = bytearray()
	h = hashlib.sha256(seed.encode()).digest()
	while len(out) < n:
		h = hashlib.sha256(h).digest()
		out += h * 64  # 2 KiB per step: fast enough for a few MiB
	return bytes(out[:n])


def build(root):
	"""Builds the tree of the header under root."""
	d = lambda *p: os.path.join(root, *p)
	for sub in (b"a", b"b", b"c/deep", b"odd", b"links", b"uniq", b"empty"):
		os.makedirs(d(sub))
	small = rnd("small", 100)
	for p in (b"a/s1", b"b/s2", b"c/deep/s3"):
		write(d(p), small)
	mid = rnd("mid", 20000)  # between one and two 16 KiB blocks: read whole
	write(d(b"a/m1"), mid)
	write(d(b"b/m2"), mid)
	# Equal size, equal first and last blocks, one byte apart in the middle.
	for size, tag in ((MIB, b"1m"), (5 * MIB, b"5m")):
		base = bytearray(rnd("edge" + tag.decode(), size))
		write(d(b"a/e" + tag + b"-x"), bytes(base))
		write(d(b"c/e" + tag + b"-x-copy"), bytes(base))
		base[size // 2] ^= 0xFF
		write(d(b"b/e" + tag + b"-y"), bytes(base))
	# Two blocks exactly (read whole) and one byte more (read at both ends first);
	# 32 KiB is also the size of SQLite's -shm file, of a temporary database too.
	for size in (32768, 32769):
		block = rnd("b%d" % size, size)
		write(d(b"a/k%d" % size), block)
		write(d(b"c/k%d" % size), block)
	big = rnd("big", 6 * MIB)
	write(d(b"a/big"), big)
	write(d(b"c/big"), big)
	# Hard links: an inode with two names and a copy; an inode alone with two names.
	hl = rnd("hl", 3000)
	write(d(b"links/h1"), hl)
	os.link(d(b"links/h1"), d(b"links/h1-link"))
	write(d(b"b/h2"), hl)
	write(d(b"links/solo"), rnd("solo", 3000))
	os.link(d(b"links/solo"), d(b"links/solo-link"))
	os.symlink(b"../a/s1", d(b"links/to-s1"))
	os.symlink(b"../a/big", d(b"links/to-big"))
	# Nasty names holding copies of one content.
	nasty = rnd("nasty", 777)
	for name in (b"new\nline", b"bad\xffutf8", b"with space", b"-dash"):
		write(d(b"odd", name), nasty)
	# Same size as the nasty files, other content; and unique files.
	write(d(b"uniq/same-size"), rnd("other", 777))
	for i in range(5):
		write(d(b"uniq", b"u%d" % i), rnd("u%d" % i, 500 + i))
	for name in (b"z1", b"z2", b"z3"):
		write(d(b"empty", name), b"")


def sha256_file(path):
	"""SHA-256 of a file's content, hex."""
	h = hashlib.sha256()
	with open(path, "rb") as f:
		for block in iter(lambda: f.read(MIB), b""):
			h.update(block)
	return h.hexdigest()


def edges_of(path, size, block):
	"""A file's edges as file_digest holds them: XXH3-128 of its first and last blocks."""
	with open(path, "rb") as f:
		data = f.read(block) + os.pread(f.fileno(), block, size - block)
	return xxhash.xxh3_128(data).digest()


def truth(root, empty=False):
	"""
	The groups: a list of dicts {size, digest, files: {(dev, ino): sorted paths}}
	for every (size, SHA-256) shared by two inodes at least, symlinks not followed.
	"""
	by = {}
	for dirpath, dirs, files in os.walk(root):
		for n in files:
			p = os.path.join(dirpath, n)
			st = os.lstat(p)
			if not stat.S_ISREG(st.st_mode) or (st.st_size == 0 and not empty):
				continue
			key = (st.st_size, sha256_file(p))
			by.setdefault(key, {}).setdefault((st.st_dev, st.st_ino), []).append(p)
	out = []
	for (size, digest), files in by.items():
		if len(files) >= 2:
			out.append({"size": size, "digest": digest,
				    "files": {k: sorted(v) for k, v in files.items()}})
	return out


def canon(groups):
	"""Groups as a comparable set: (size, digest, frozenset of (inode, paths))."""
	return set((g["size"], g["digest"],
		    frozenset((k, tuple(v)) for k, v in g["files"].items())) for g in groups)


def from_json(out):
	"""Parses --json output into the form of truth(), keeping the order."""
	groups = []
	for line in out.split(b"\n"):
		if not line:
			continue
		o = json.loads(line)
		files = {}
		order = []
		for f in o["files"]:
			paths = [path_of(f)] + [path_of(l) for l in f["links"]]
			files[(f["dev"], f["ino"])] = paths
			order.append(paths[0])
		groups.append({"size": o["size"], "digest": o["digest"], "files": files,
			       "waste": o["waste"], "algorithm": o["algorithm"], "order": order})
	return groups


def path_of(obj):
	"""The exact bytes of a JSON path member (base64 when not UTF-8)."""
	if "path_base64" in obj:
		return base64.b64decode(obj["path_base64"])
	return obj["path"].encode()


HEADER = re.compile(rb"^(\d+) copies of .*\((\d+) bytes each\): .*\((\d+) bytes\), "
		    rb"(sha256|sha512) ([0-9a-f]+)$")


def from_text(out, sep):
	"""
	Parses the text output (lines ended by sep) into (groups, total line): a
	header, one path per file, '= ' + path for its other names, an empty line.
	"""
	recs = out.split(sep)
	assert recs[-1] == b"", "output does not end with its separator"
	recs = recs[:-1]
	total = recs[-1]
	groups, i = [], 0
	body = recs[:-1]
	while i < len(body):
		m = HEADER.match(body[i])
		assert m, "not a header: %r" % body[i]
		i += 1
		files = []
		while body[i] != b"":
			if body[i].startswith(b"= "):
				files[-1].append(body[i][2:])
			else:
				files.append([body[i]])
			i += 1
		i += 1
		groups.append({"count": int(m.group(1)), "size": int(m.group(2)),
			       "waste": int(m.group(3)), "digest": m.group(5).decode(), "files": files})
	return groups, total


def with_inodes(groups):
	"""Text groups (paths only) in the form of truth(), inodes from lstat."""
	out = []
	for g in groups:
		files = {}
		for paths in g["files"]:
			st = os.lstat(paths[0])
			files[(st.st_dev, st.st_ino)] = paths
		out.append({"size": g["size"], "digest": g["digest"], "files": files})
	return out


def jdupes_sets(root):
	"""jdupes -r -0's groups, each as a frozenset of (dev, ino); and every name it printed."""
	res = subprocess.run(["jdupes", "-r", "-q", "-0", root], stdout=subprocess.PIPE,
			     stderr=subprocess.PIPE)
	sets, names = set(), set()
	for grp in res.stdout.split(b"\0\0"):
		paths = [p for p in grp.split(b"\0") if p]
		if paths:
			names.update(paths)
			sets.add(frozenset((os.lstat(p).st_dev, os.lstat(p).st_ino) for p in paths))
	return res.returncode, sets, names


def strace_opens(args, tree, env=None):
	"""
	Runs fidx under strace (env adds variables); returns (Result, [(path, flags)] of
	the files under tree it opened).
	"""
	log = os.path.join(os.path.dirname(tree), b"strace.log")
	cmd = ["strace", "-f", "-qq", "-e", "trace=open,openat,openat2", "-o", log, lib.FIDX] + list(args)
	# LeakSanitizer cannot run under ptrace: an ASan build checks leaks in the other runs.
	e = dict(os.environ, ASAN_OPTIONS=":".join(filter(None, [os.environ.get("ASAN_OPTIONS"),
								 "detect_leaks=0"])))
	e.update(env or {})
	p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, env=e)
	res = lib.Result(p.returncode, p.stdout, p.stderr, 0, False)
	opened = []
	with open(log, "rb") as f:
		for line in f:
			m = re.search(rb'open(?:at2?)?\((?:AT_FDCWD|\d+), "((?:[^"\\]|\\.)*)", ([A-Z_|]+)', line)
			if m and m.group(1).startswith(tree + b"/"):
				opened.append((m.group(1), m.group(2)))
	os.unlink(log)
	return res, opened


def check_groups(chk, name, got, want):
	"""Compares parsed groups with the truth, then their order and waste."""
	if not chk.ok(name + ": the groups equal the ground truth", canon(got) == canon(want),
		      "missing %s extra %s" % (lib.short(canon(want) - canon(got)),
					       lib.short(canon(got) - canon(want)))):
		return
	wastes = [(len(g["files"]) - 1) * g["size"] for g in got]
	chk.ok(name + ": most waste first", wastes == sorted(wastes, reverse=True), repr(wastes))


def main():
	chk = Checker()
	with TempDir() as t:
		top = t.path.encode()
		os.chmod(top, 0o755)
		root = top + b"/tree"
		build(root)
		tmp = top + b"/tmp"
		os.mkdir(tmp)
		os.chmod(tmp, 0o1777)
		env = {"TMPDIR": tmp.decode()}
		want = truth(root)
		want_empty = truth(root, empty=True)

		with chk.guard("PATH --json"):
			res = run_fidx("dupes", "--json", root, env=env)
			chk.ok("PATH --json: exit 0, no warning", res.rc == 0 and not res.err, repr(res))
			got = from_json(res.out)
			check_groups(chk, "PATH --json", got, want)
			chk.ok("PATH --json: waste = (files - 1) x size, algorithm sha256",
			       all(g["waste"] == (len(g["files"]) - 1) * g["size"] and
				   g["algorithm"] == "sha256" for g in got))
			chk.ok("PATH --json: files ordered by their first path",
			       all(g["order"] == sorted(g["order"]) for g in got))
			chk.ok("PATH: the temporary database is removed", os.listdir(tmp) == [],
			       repr(os.listdir(tmp)))

		with chk.guard("PATH with $TMPDIR inside"):
			inside = root + b"/tmp-inside"
			os.mkdir(inside)
			res, opened = strace_opens(["dupes", "--json", root], root,
						   env={"TMPDIR": inside.decode()})
			chk.ok("$TMPDIR inside the PATH: exit 0, no warning", res.rc == 0 and not res.err,
			       repr(res))
			# SQLite opens its files without O_NOATIME; fidx reads contents with it.
			read = [p for p, flags in opened if p.startswith(inside) and b"O_NOATIME" in flags]
			chk.ok("$TMPDIR inside the PATH: the temporary database is not scanned", not read,
			       lib.short(read))
			check_groups(chk, "$TMPDIR inside the PATH", from_json(res.out), want)
			chk.ok("$TMPDIR inside the PATH: the temporary database is removed",
			       os.listdir(inside) == [], repr(os.listdir(inside)))
			os.rmdir(inside)

		with chk.guard("PATH text"):
			for sep, opt in ((b"\0", ["-0"]), (b"\n", [])):
				res = run_fidx("dupes", *opt, root, env=env)
				label = "PATH text %s" % ("-0" if opt else "(lines)")
				chk.ok(label + ": exit 0", res.rc == 0 and not res.err, repr(res))
				if not opt:
					# A newline in a name splits its line: compare the rest.
					res.out = res.out.replace(b"new\nline", b"new\0line")
				groups, total = from_text(res.out, sep)
				if not opt:
					for g in groups:
						g["files"] = [[p.replace(b"\0", b"\n") for p in f] for f in g["files"]]
				check_groups(chk, label, with_inodes(groups), want)
				chk.ok(label + ": header counts and waste agree",
				       all(g["count"] == len(g["files"]) and
					   g["waste"] == (g["count"] - 1) * g["size"] for g in groups))
				nums = lib.summary_numbers(total.split(b"(")[0])
				waste = sum(g["waste"] for g in groups)
				chk.ok(label + ": total line: groups, files, bytes",
				       nums[:2] == [len(want), sum(len(g["files"]) for g in want)] and
				       b"(%d bytes)" % waste in total, repr(total))

		with chk.guard("--empty"):
			res = run_fidx("dupes", "--json", "--empty", root, env=env)
			got = from_json(res.out)
			check_groups(chk, "--empty", got, want_empty)
			chk.ok("without --empty no group of empty files",
			       all(g["size"] > 0 for g in want) and
			       any(g["size"] == 0 for g in got))

		with chk.guard("jdupes"):
			rc, jd, names = jdupes_sets(root)
			mine = set(frozenset(g["files"]) for g in want)
			chk.ok("jdupes -r: the same groups (as inode sets)", rc == 0 and jd == mine,
			       "jdupes only %s, fidx only %s" % (lib.short(jd - mine), lib.short(mine - jd)))
			listed = set(p for g in want for ps in g["files"].values() for p in ps)
			chk.ok("jdupes -r: every name it prints is listed by fidx", names <= listed,
			       lib.short(names - listed))

		with chk.guard("--db hash none"):
			db = top + b"/kept.db"
			# the root three ways: still one scan (as fidx scan makes)
			res = run_fidx("dupes", "--json", "--db", db, root, root + b"/",
				       root + b"/./", env=env)
			chk.ok("--db: exit 0", res.rc == 0, repr(res))
			check_groups(chk, "--db", from_json(res.out), want)
			con = lib.connect(db)
			opts = con.execute("SELECT options FROM scan").fetchall()
			chk.ok("--db: one scan, hash none", len(opts) == 1 and
			       json.loads(opts[0][0])["hash"] == "none", repr(opts))
			rows = con.execute("SELECT f.path, f.size, d.edge_block, d.edges, d.sha256"
					   " FROM file_digest d JOIN file f ON f.id = d.file_id").fetchall()
			con.close()
			in_groups = {p: g["digest"] for g in want for ps in g["files"].values() for p in ps}
			bad = [r[0] for r in rows if r[4] is not None and r[0] in in_groups and
			       r[4].hex() != in_groups[r[0]]]
			bad += [r[0] for r in rows if r[4] is not None and r[4].hex() != sha256_file(r[0])]
			chk.ok("--db: file_digest holds the SHA-256 of every file of a group",
			       set(in_groups) <= set(r[0] for r in rows if r[4] is not None) and not bad,
			       lib.short(bad))
			edges = [r for r in rows if r[3] is not None]
			chk.ok("--db: edges only for files larger than two blocks: XXH3-128 of their"
			       " first and last blocks",
			       edges and all(r[1] > 2 * r[2] and r[3] == edges_of(r[0], r[1], r[2])
					     for r in edges), lib.short(edges))
			read_for_nothing = [r[0] for r in rows if r[0].startswith(root + b"/uniq/u")]
			chk.ok("--db: files of a size no other has are never read",
			       not read_for_nothing, lib.short(read_for_nothing))
			res, opened = strace_opens(["dupes", "--json", db], root)
			opened = [p for p, _ in opened]
			chk.ok("DB mode, second run: exit 0", res.rc == 0, repr(res))
			check_groups(chk, "DB mode, second run", from_json(res.out), want)
			chk.ok("DB mode, second run: no file of the tree opened", not opened,
			       lib.short(opened))

		with chk.guard("sha256 scan"):
			db = top + b"/sha.db"
			r = run_fidx("scan", "-q", "-o", db, root)
			chk.ok("setup: sha256 scan", r.rc == 0, repr(r))
			res, opened = strace_opens(["dupes", "--json", db], root)
			opened = [p for p, _ in opened]
			chk.ok("sha256 scan: exit 0", res.rc == 0 and not res.err, repr(res))
			check_groups(chk, "sha256 scan", from_json(res.out), want)
			chk.ok("sha256 scan: no file opened", not opened, lib.short(opened))
			con = lib.connect(db)
			n = con.execute("SELECT count(*) FROM file_digest").fetchone()[0]
			con.close()
			chk.eq("sha256 scan: no digest written", n, 0)

		with chk.guard("sha512 and mixed scans"):
			db = top + b"/sha512.db"
			r = run_fidx("scan", "-q", "--hash", "sha512", "-o", db, root)
			chk.ok("setup: sha512 scan", r.rc == 0, repr(r))
			res, opened = strace_opens(["dupes", "--json", db], root)
			opened = [p for p, _ in opened]
			got = from_json(res.out)
			want512 = [dict(g, digest=hashlib.sha512(open(next(iter(g["files"].values()))[0],
								     "rb").read()).hexdigest())
				   for g in want]
			check_groups(chk, "sha512 scan", got, want512)
			chk.ok("sha512 scan: algorithm sha512, no file opened",
			       all(g["algorithm"] == "sha512" for g in got) and not opened,
			       lib.short(opened))
			# One root with SHA-512, another with SHA-256: sizes across both are read.
			db = top + b"/mixed.db"
			for hashes, sub in (("sha512", b"/a"), ("sha256", b"/b")):
				r = run_fidx("scan", "-q", "--hash", hashes, "-o", db, root + sub)
				chk.ok("setup: %s scan of %r" % (hashes, sub), r.rc == 0, repr(r))
			res = run_fidx("dupes", "--json", db)
			sub = [dict(g, files={k: [p for p in v if p.startswith((root + b"/a/", root + b"/b/"))]
					      for k, v in g["files"].items()}) for g in want]
			sub = [dict(g, files={k: v for k, v in g["files"].items() if v}) for g in sub]
			check_groups(chk, "mixed sha512 and sha256 scans", from_json(res.out),
				     [g for g in sub if len(g["files"]) >= 2])
			# The same root scanned twice, both selected: each path once.
			db = top + b"/twice.db"
			for _ in range(2):
				r = run_fidx("scan", "-q", "--hash", "none", "-o", db, root)
			res = run_fidx("dupes", "--json", "--scan", "1,2", db)
			check_groups(chk, "--scan 1,2 of one root", from_json(res.out), want)

		with chk.guard("changed file"):
			db = top + b"/changed.db"
			r = run_fidx("scan", "-q", "--hash", "none", "-o", db, root)
			chk.ok("setup: hash none scan", r.rc == 0, repr(r))
			victim = root + b"/b/s2"
			st = os.stat(victim)
			os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns + 1000000000))
			res = run_fidx("dupes", "--json", db)
			lines = res.err_lines()
			chk.ok("changed file: one warning naming it", len(lines) == 1 and
			       lines[0].startswith(b"fidx: warning: ") and b"b/s2" in lines[0] and
			       b"changed" in lines[0], repr(res))
			w = [dict(g, files={k: [p for p in v if p != victim] for k, v in g["files"].items()})
			     for g in want]
			w = [dict(g, files={k: v for k, v in g["files"].items() if v}) for g in w]
			check_groups(chk, "changed file", from_json(res.out), w)
			os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))

		with chk.guard("nobody"):
			if os.geteuid() != 0:
				chk.skip("nobody", "not root")
			else:
				secret = root + b"/c/deep/s3"
				os.chmod(secret, 0)
				res = run_fidx("dupes", "--json", root, env=env, uid=lib.NOBODY)
				os.chmod(secret, 0o644)
				lines = res.err_lines()
				chk.ok("nobody: exit 0, one warning naming the unreadable file",
				       res.rc == 0 and len(lines) == 1 and b"c/deep/s3" in lines[0] and
				       os.strerror(13).encode() in lines[0], repr(res))
				w = [dict(g, files={k: v for k, v in g["files"].items() if secret not in v})
				     for g in want]
				check_groups(chk, "nobody", from_json(res.out), w)
				# A database nobody cannot write: the groups anyway, said once.
				rodir = top + b"/ro"
				os.mkdir(rodir, 0o755)
				rodb = rodir + b"/none.db"
				shutil.copyfile(top + b"/changed.db", rodb)
				os.chmod(rodb, 0o644)
				res = run_fidx("dupes", "--json", rodb, uid=lib.NOBODY)
				lines = res.err_lines()
				chk.ok("read-only database: exit 0, one warning that digests are not kept",
				       res.rc == 0 and len(lines) == 1 and b"not kept" in lines[0], repr(res))
				check_groups(chk, "read-only database", from_json(res.out), want)

		with chk.guard("race"):
			if not lib.SHIM or not os.path.exists(lib.SHIM):
				chk.ok("race shim built", False, "FIDX_SHIM=%r does not exist" % lib.SHIM)
			else:
				# The shim overwrites a fidx-race-modify* file once fidx has read
				# from it (same size, the mtime moves): the bytes hashed are then
				# no longer the file's.  A small file (read whole at once) and a
				# large one (edges by pread, then whole by read) with copies.
				race = top + b"/race"
				os.mkdir(race)
				for size, tag in ((5000, b"small"), (MIB, b"large")):
					data = rnd("race" + tag.decode(), size)
					for name in (b"fidx-race-modify-" + tag, b"copy-" + tag):
						write(race + b"/" + name, data)
						os.utime(race + b"/" + name, ns=(978307200 * 10**9,) * 2)
				for jobs in ("1", "3"):
					res = run_fidx("dupes", "--json", "-j", jobs, race, env=env,
						       preload=lib.SHIM)
					lines = sorted(res.err_lines())
					chk.ok("race -j %s: no group, exit 1, the files changed while read"
					       " left out, one warning each" % jobs,
					       res.rc == 1 and not res.out and len(lines) == 2 and
					       all(b"fidx-race-modify-" + t in l and b"changed" in l
						   for t, l in zip((b"large", b"small"), lines)), repr(res))
					for tag in (b"small", b"large"):  # the shim races once per process
						data = rnd("race" + tag.decode(), 5000 if tag == b"small" else MIB)
						write(race + b"/fidx-race-modify-" + tag, data)
						os.utime(race + b"/fidx-race-modify-" + tag,
							 ns=(978307200 * 10**9,) * 2)

		with chk.guard("SIGINT"):
			# Two sparse 1 GiB files equal at both ends: the whole reads take
			# seconds, long enough to be interrupted.
			slow = top + b"/slow"
			os.mkdir(slow)
			for i, name in enumerate((b"/s1", b"/s2")):
				with open(slow + name, "wb") as f:
					f.truncate(1 << 30)
					f.seek(1 << 29)
					f.write(b"%d" % i)
			e = dict(os.environ, **env)
			p = subprocess.Popen([lib.FIDX, "dupes", "-q", slow], stdin=subprocess.DEVNULL,
					     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
			time.sleep(0.5)
			p.send_signal(signal.SIGINT)
			out, err = p.communicate(timeout=60)
			chk.ok("SIGINT during PATH: exit 130, nothing listed, the temporary database"
			       " removed", p.returncode == 130 and not out and os.listdir(tmp) == [],
			       "rc=%r out=%r err=%r left=%r" % (p.returncode, out, err, os.listdir(tmp)))
			shutil.rmtree(slow)

		with chk.guard("PATH forms"):
			# A file as PATH, and overlapping PATHs: each file once.
			res = run_fidx("dupes", "--json", root + b"/a/s1", env=env)
			chk.ok("a file as PATH: exit 1, no group", res.rc == 1 and not res.out, repr(res))
			res = run_fidx("dupes", "--json", root + b"/c", root, root + b"/c/deep", env=env)
			check_groups(chk, "overlapping PATHs", from_json(res.out), want)
			# A hard link across two PATHs (two scans) is one file.
			x = top + b"/across"
			os.makedirs(x + b"/p")
			os.makedirs(x + b"/q")
			write(x + b"/p/f", rnd("across", 40000))
			os.link(x + b"/p/f", x + b"/q/g")
			write(x + b"/q/copy", rnd("across", 40000))
			res = run_fidx("dupes", "--json", x + b"/q", x + b"/p", env=env)
			got = [sorted(g["files"].values()) for g in from_json(res.out)]
			chk.eq("a hard link across two PATHs: one file with both names",
			       got, [[[x + b"/p/f", x + b"/q/g"], [x + b"/q/copy"]]])
			shutil.rmtree(x)
			lib.check_fatal(chk, "a missing $TMPDIR", run_fidx(
				"dupes", root, env={"TMPDIR": (top + b"/no-such-dir").decode()}),
					mention=b"no-such-dir")

		with chk.guard("exit status"):
			solo = top + b"/solo"
			os.makedirs(solo)
			write(solo + b"/x", b"one")
			write(solo + b"/y", b"two")
			res = run_fidx("dupes", solo, env=env)
			chk.ok("no duplicates: exit 1, a total of 0 groups",
			       res.rc == 1 and res.out.startswith(b"0 groups") and not res.err, repr(res))
			lib.check_fatal(chk, "missing PATH", run_fidx("dupes", top + b"/nope", env=env),
					mention=b"nope")
			lib.check_fatal(chk, "--scan with a PATH", run_fidx("dupes", "--scan", "1", root,
									  env=env))
			chk.ok("no temporary database left behind", os.listdir(tmp) == [],
			       repr(os.listdir(tmp)))
	chk.done()


if __name__ == "__main__":
	main()
