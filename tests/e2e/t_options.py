#!/usr/bin/python3
"""t_options.py - the options of `fidx scan`, each against the ground truth.

--exclude by name and by path below the root (an excluded directory is absent
with all its contents), --hash none / a subset / an unknown name, --progress
when stderr is not a terminal, the default
hash (sha256) and the default database (./fidx.db), --db, -j 0 / abc / -1,
an unknown option, --version (fidx's, SQLite's, OpenSSL's and xxHash's
versions, from the libraries in use), --help (every option named), two roots
(two scan rows), a second run appending scan 2 without touching scan 1,
--xdev with a tmpfs mounted inside the tree, how a root is made absolute
('//', '/./' and a trailing '/' collapsed, the folders above the last
component resolved, so '..' is), a root that is a
symlink to a directory (followed, like find -H), a root that is a file, and
--no-stat (paths, names, types and link targets as the truth has them, every
metadata column and digest NULL; refused with a --hash other than none).
"""

import os
import re
import resource
import sqlite3
import ssl
import subprocess

import lib
from lib import Checker, Truth, compare, run_fidx, truth, write

HELP_OPTIONS = ["-o", "--db", "--hash", "-j", "--jobs", "--xdev", "--exclude", "--follow",
		"--no-stat", "-q", "--quiet", "--progress", "--errors", "-i", "--help", "--version"]


def build(top):
	"""A small tree with something for each exclude pattern to catch."""
	root = top + b"/tree"
	for d in (b"a/b/deep", b"c/a/b", b"x/y", b"skipdir/inner", b"keep"):
		os.makedirs(root + b"/" + d)
	for f in (b"a/b/deep/f", b"a/b/g.o", b"c/a/b/h", b"x/1.tmp", b"x/y/2.tmp", b"x/3.txt",
		  b"skipdir/inner/i", b"skipdir/j", b"keep/k.o", b"keep/l.c", b"top.o", b"top.c"):
		write(root + b"/" + f, f)
	lib.settle(root)
	return root


def no_digests_but(rows, keep):
	"""Sets every digest of rows outside keep to NULL; returns rows."""
	for r in rows.values():
		for d in lib.DIGESTS:
			if d not in keep:
				r[d] = None
	return rows


def check_excludes(chk, top, root):
	"""Name and path patterns; an excluded directory is not entered."""
	db = top + b"/exclude.db"
	pats = ["*.o", "skipdir", "a/b", "x/*.tmp"]
	args = []
	for p in pats:
		args += ["--exclude", p]
	res = run_fidx("scan", "-q", *args, "-o", db, root)
	chk.ok("--exclude: exit 0", res.rc == 0, repr(res))

	def skip(rel, name):
		"""The four patterns, written out by hand."""
		return (name.endswith(b".o") or name == b"skipdir" or rel == b"a/b" or
			re.fullmatch(rb"x/[^/]*\.tmp", rel) is not None)

	want = no_digests_but(truth(root, Truth(skip=skip)), ["sha256"])
	got, dups = lib.db_rows(db, 1)
	compare(chk, "--exclude", got, dups, want)
	for rel, present in ((b"a/b", False), (b"a/b/deep/f", False), (b"c/a/b/h", True),
			     (b"skipdir", False), (b"skipdir/inner/i", False), (b"x/1.tmp", False),
			     (b"x/y/2.tmp", True), (b"keep/k.o", False), (b"top.o", False),
			     (b"keep/l.c", True), (b"a", True)):
		chk.eq("--exclude: %s %s" % (rel.decode(), "kept" if present else "left out"),
		       (root + b"/" + rel) in got, present)


def check_hash_options(chk, top, root):
	"""Digest choices, defaults, long options and usage errors."""
	for spec, keep in (("none", []), ("md5", ["md5"]), ("xxh128,sha1", ["sha1", "xxh128"])):
		db = top + b"/hash-%s.db" % spec.replace(",", "-").encode()
		res = run_fidx("scan", "-q", "--hash", spec, "-o", db, root)
		chk.ok("--hash %s: exit 0" % spec, res.rc == 0, repr(res))
		got, dups = lib.db_rows(db, 1)
		compare(chk, "--hash %s" % spec, got, dups,
			no_digests_but(truth(root, Truth(hashes=keep)), keep),
			columns=lib.DIGESTS)
	# default hash, default database, relative root
	res = run_fidx("scan", "-q", "tree", cwd=top)
	chk.ok("default db: exit 0", res.rc == 0, repr(res))
	db = top + b"/fidx.db"
	chk.ok("default db: ./fidx.db created", os.path.exists(db), repr(os.listdir(top)))
	if os.path.exists(db):
		got, dups = lib.db_rows(db, 1)
		compare(chk, "default (sha256, relative root)", got, dups,
			no_digests_but(truth(root, Truth(hashes=["sha256"])), ["sha256"]))
	# --db, long form
	db = top + b"/long-db.db"
	res = run_fidx("scan", "--quiet", "--db", db, "--jobs", "2", root)
	chk.ok("--db/--jobs/--quiet: exit 0 and the database made", res.rc == 0 and
	       os.path.exists(db), repr(res))
	res = run_fidx("scan", "--progress", "-o", top + b"/progress.db", root)
	chk.ok("--progress: exit 0, one summary line and the seal line on stdout",
	       res.rc == 0 and len(res.out_lines()) == 2 and lib.is_seal_line(res.out_lines()[1]),
	       repr(res))
	for bad in (["--hash", "sha3"], ["--hash", "md5,nope"], ["--hash", ""],
		    ["-j", "0"], ["-j", "abc"], ["-j", "-1"], ["--jobs", "2x"], ["--no-such-option"],
		    ["--exclude"]):
		db = top + b"/usage.db"
		res = run_fidx("scan", *bad, "-o", db, root) if bad != ["--exclude"] else \
			run_fidx("scan", "-o", db, root, *bad)
		lib.check_fatal(chk, "usage %s" % " ".join(bad), res)
		chk.ok("usage %s: no database created" % " ".join(bad), not os.path.exists(db),
		       "it exists")
	res = run_fidx("scan", "-o", top + b"/noroot.db")
	lib.check_fatal(chk, "usage: scan without a PATH (stdin not a terminal)", res)


def installed_version(pkg):
	"""The upstream version of a Debian package (1.2.3-4 -> 1.2.3), or None."""
	p = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True,
			   text=True)
	if p.returncode != 0 or not p.stdout:
		return None
	v = p.stdout.split(":")[-1]
	return v.rsplit("-", 1)[0]


def check_version_help(chk):
	"""--version names the libraries in use; --help names every option."""
	res = run_fidx("--version")
	out = res.out.decode("utf-8", "replace")
	chk.ok("--version: exit 0", res.rc == 0, repr(res))
	fv = lib.makefile_version()
	chk.ok("--version: names fidx's version %s" % fv, fv is not None and fv in out,
	       lib.short(out))
	chk.ok("--version: names SQLite %s" % sqlite3.sqlite_version,
	       sqlite3.sqlite_version in out, lib.short(out))
	ossl = re.search(r"OpenSSL (\S+)", ssl.OPENSSL_VERSION).group(1)
	chk.ok("--version: names OpenSSL %s" % ossl, ossl in out, lib.short(out))
	xv = installed_version("libxxhash0")
	chk.ok("--version: names xxHash %s" % xv, xv is not None and xv in out and
	       re.search("xxhash", out, re.I) is not None, lib.short(out))
	for args in (["scan", "--help"], ["--help"]):
		res = run_fidx(*args)
		out = res.out.decode("utf-8", "replace")
		chk.ok("%s: exit 0, text on stdout" % " ".join(args), res.rc == 0 and out.strip(),
		       repr(res))
	res = run_fidx("scan", "--help")
	out = res.out.decode("utf-8", "replace")
	missing = [o for o in HELP_OPTIONS if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(o), out)]
	chk.ok("scan --help names every option", not missing, "missing %s" % missing)


def check_roots_and_append(chk, top, root):
	"""Two roots make two scans; a later run appends and leaves them alone."""
	db = top + b"/two.db"
	r1, r2 = root + b"/a", root + b"/keep"
	res = run_fidx("scan", "-q", "-o", db, r1, r2)
	chk.ok("two roots: exit 0", res.rc == 0, repr(res))
	scans = lib.scan_rows(db)
	chk.eq("two roots: two scan rows", [(s["id"], s["root"]) for s in scans], [(1, r1), (2, r2)])
	for sid, r in ((1, r1), (2, r2)):
		got, dups = lib.db_rows(db, sid)
		want = no_digests_but(truth(r), ["sha256"])
		compare(chk, "two roots: scan %d" % sid, got, dups, want)
		if sid <= len(scans):
			lib.check_scan_row(chk, "two roots: scan %d" % sid, scans[sid - 1], r, want)
	before = lib.dump_scan(db, 1), lib.dump_scan(db, 2)
	res = run_fidx("scan", "-q", "-o", db, root + b"/x")
	chk.ok("append: exit 0", res.rc == 0, repr(res))
	scans = lib.scan_rows(db)
	chk.eq("append: scan ids", [s["id"] for s in scans], [1, 2, 3])
	chk.ok("append: scans 1 and 2 untouched",
	       (lib.dump_scan(db, 1), lib.dump_scan(db, 2)) == before, "they changed")
	got, dups = lib.db_rows(db, 3)
	compare(chk, "append: scan 3", got, dups,
		no_digests_but(truth(root + b"/x"), ["sha256"]))
	# The two roots of one run with scan ids that are not consecutive (another
	# scan between them, as a second fidx on the same database may take one):
	# each root's rows and totals stay its own.  Made by resuming scans 4 and
	# 6, interrupted before they recorded anything, with scan 5 between them
	# (fidx runs no trigger that could take an id in the middle of a run).
	for r in (r1, root + b"/x", r2):
		res = run_fidx("scan", "-q", "-o", db, r)
		chk.ok("interleaved ids: a scan of %r" % r, res.rc == 0, repr(res))
	con = lib.connect(db)
	con.executescript("DELETE FROM file_seal WHERE scan_id IN (4, 6);"
			  " DELETE FROM file WHERE scan_id IN (4, 6);"
			  " DELETE FROM path_index WHERE scan_id IN (4, 6);"
			  " DELETE FROM path_block WHERE key >> 32 IN (4, 6);"
			  " DELETE FROM path_trigram WHERE key >> 24 IN (4, 6);"
			  " UPDATE scan SET status = 'interrupted', finished_ns = NULL, entries = NULL,"
			  " seal = NULL WHERE id IN (4, 6);")
	con.commit()
	con.close()
	res = run_fidx("scan", "-q", "--resume", "-o", db, r1, r2)
	chk.ok("interleaved ids: exit 0", res.rc == 0, repr(res))
	chk.ok("interleaved ids: the summary names scans 4 and 6",
	       res.out.startswith(b"scans 4, 6 (2 roots) complete:"), repr(res.out))
	scans = {s["id"]: s for s in lib.scan_rows(db)}
	chk.eq("interleaved ids: scan ids", sorted(scans), [1, 2, 3, 4, 5, 6])
	for sid, r in ((4, r1), (6, r2)):
		got, dups = lib.db_rows(db, sid)
		want = no_digests_but(truth(r), ["sha256"])
		compare(chk, "interleaved ids: scan %d" % sid, got, dups, want)
		if sid in scans:
			lib.check_scan_row(chk, "interleaved ids: scan %d" % sid, scans[sid], r, want)


def check_xdev(chk, td, top):
	"""A tmpfs mounted in the tree: recorded, entered only without --xdev."""
	root = top + b"/xdev"
	os.makedirs(root + b"/mnt")
	write(root + b"/before", b"on the first filesystem")
	td.mount_tmpfs(os.fsdecode(root + b"/mnt"), "4m")
	os.makedirs(root + b"/mnt/sub")
	write(root + b"/mnt/sub/inside", b"on the tmpfs")
	write(root + b"/mnt/file", b"tmpfs file")
	lib.settle(root)
	for xdev in (True, False):
		label = "--xdev" if xdev else "no --xdev"
		db = top + (b"/xdev.db" if xdev else b"/noxdev.db")
		res = run_fidx("scan", "-q", *(["--xdev"] if xdev else []), "-o", db, root)
		chk.ok("%s: exit 0" % label, res.rc == 0, repr(res))
		want = no_digests_but(truth(root, Truth(xdev=xdev)), ["sha256"])
		chk.ok("%s: the ground truth %s the tmpfs" % (label, "stops at" if xdev else "enters"),
		       ((root + b"/mnt/file") in want) != xdev and (root + b"/mnt") in want, "")
		got, dups = lib.db_rows(db, 1)
		compare(chk, label, got, dups, want)


def check_roots_forms(chk, top, root):
	"""How a root is written: made absolute, collapsed, '..' resolved, symlink kept by name."""
	os.symlink(b"tree/keep", top + b"/link-root")
	for arg, cwd, want_root in (
			(b"./tree//keep/./", top, root + b"/keep"),
			(b"tree/c/../keep", top, root + b"/keep"),
			(b"tree/keep/..", top, root),
			(b"link-root/k.o", top, root + b"/keep/k.o"),
			(root + b"/keep/", None, root + b"/keep"),
			(b"link-root", top, top + b"/link-root")):
		label = "root %s" % lib.short(arg)
		db = top + b"/forms.db"
		if os.path.exists(db):
			os.unlink(db)
		res = run_fidx("scan", "-q", "-o", db, arg, cwd=cwd)
		chk.ok("%s: exit 0" % label, res.rc == 0, repr(res))
		scans = lib.scan_rows(db) if os.path.exists(db) else []
		chk.eq("%s: scan.root" % label, [s["root"] for s in scans], [want_root])
		got, dups = lib.db_rows(db, 1) if os.path.exists(db) else ({}, [])
		want = no_digests_but(truth(want_root), ["sha256"])
		if arg == b"link-root":
			want[want_root]["link_target"] = lib.OneOf(None, b"tree/keep")
		compare(chk, label, got, dups, want)
	# a root that is a regular file
	db = top + b"/file-root.db"
	res = run_fidx("scan", "-q", "--hash", "md5,sha512", "-o", db, root + b"/top.c")
	chk.ok("a file as root: exit 0", res.rc == 0, repr(res))
	got, dups = lib.db_rows(db, 1)
	compare(chk, "a file as root", got, dups,
		no_digests_but(truth(root + b"/top.c", Truth(hashes=["md5", "sha512"])),
			       ["md5", "sha512"]))


def check_no_stat(chk, top, root):
	"""--no-stat: the listing's names and types, no metadata, no digests."""
	db = top + b"/nostat.db"
	os.symlink(b"top.c", root + b"/link-to-top")
	os.mkfifo(root + b"/fifo")
	res = run_fidx("scan", "-q", "--no-stat", "-o", db, root)
	chk.ok("--no-stat: exit 0", res.rc == 0, repr(res))
	want = truth(root)
	for r in want.values():
		for c in lib.META + ["btime_ns"] + lib.DIGESTS:
			r[c] = None
	got, dups = lib.db_rows(db, 1)
	compare(chk, "--no-stat", got, dups, want)
	rows = lib.scan_rows(db)
	chk.ok("--no-stat: the scan row says stat false and hash none",
	       rows and '"stat":false' in rows[0]["options"] and '"hash":"none"' in rows[0]["options"],
	       repr(rows))
	res = run_fidx("scan", "-q", "--no-stat", "--hash", "none", "-o", top + b"/nostat2.db", root)
	chk.ok("--no-stat --hash none: exit 0", res.rc == 0, repr(res))
	bad = top + b"/nostat-bad.db"
	res = run_fidx("scan", "--no-stat", "--hash", "md5", "-o", bad, root)
	lib.check_fatal(chk, "--no-stat --hash md5", res, mention=b"--no-stat")
	chk.ok("--no-stat --hash md5: no database created", not os.path.exists(bad), "it exists")
	os.unlink(root + b"/link-to-top")
	os.unlink(root + b"/fifo")


def check_low_fd_limit(chk, top):
	"""An open file limit of 64 and -j 64: fewer jobs, a warning, and no EMFILE anywhere."""
	wide = top + b"/wide"
	for i in range(300):
		os.makedirs(b"%s/d%03d/sub" % (wide, i))
		write(b"%s/d%03d/f" % (wide, i), b"x")
	db = top + b"/fd.db"

	def limit():
		resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

	p = subprocess.run([lib.FIDX, "scan", "-q", "-j", "64", "-o", db, wide],
			   stdin=subprocess.DEVNULL, capture_output=True, preexec_fn=limit, timeout=120)
	chk.ok("open file limit 64, -j 64: exit 0", p.returncode == 0,
	       "rc=%d stderr=%r" % (p.returncode, p.stderr))
	chk.ok("open file limit 64, -j 64: says it lowered --jobs",
	       p.stderr.startswith(b"fidx: warning: --jobs 64 lowered to"), repr(p.stderr))
	got, dups = lib.db_rows(db, 1)
	compare(chk, "open file limit 64, -j 64", got, dups,
		no_digests_but(truth(wide), ["sha256"]))


def main():
	chk = Checker()
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		root = build(top)
		for name, fn, args in (
				("--exclude", check_excludes, (chk, top, root)),
				("--hash and usage", check_hash_options, (chk, top, root)),
				("--version and --help", check_version_help, (chk,)),
				("roots and appending", check_roots_and_append, (chk, top, root)),
				("--xdev", check_xdev, (chk, td, top)),
				("forms of a root", check_roots_forms, (chk, top, root)),
				("--no-stat", check_no_stat, (chk, top, root)),
				("open file limit", check_low_fd_limit, (chk, top))):
			with chk.guard(name):
				fn(*args)
	chk.done()


if __name__ == "__main__":
	main()
