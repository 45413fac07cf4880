#!/usr/bin/python3
"""t_verify.py - the seal of a scan and `fidx verify`, against sqlite3 and sha256sum.

Builds a tree with hostile names (a newline, bytes that are not UTF-8, a
leading dash, spaces), a symlink, a hard link, an empty file and a FIFO,
scans it with digests, then:

  * the summary's "seal sha256:<hex> (scan N)" line equals scan.seal, and
    equals what the documented SQL gives through the real sqlite3 shell
    piped into the real sha256sum; each file_seal row is the first 8 bytes
    of SHA-256 of its row's line, one per file row;
  * verify on the intact database: exit 0, "intact" with the row count, in
    text and --json; --seal with the right value (either case, with or
    without "sha256:") exit 0, a wrong one exit 1, a malformed one exit 2;
  * each edit made with the sqlite3 shell (a size, a digest, a path, a name,
    a row deleted, a row inserted, the scan row's root, entries, host, a
    REAL and a text with '|' and a newline in integer columns) makes verify
    exit 1 and name exactly what changed: the rows (id and byte-exact path,
    in --json and in the -0 text), the scan fields its rows contradict; and
    verify's computed seal is the shell's for the edited database too;
  * a database rewritten with a recomputed seal and row hash passes without
    --seal (what a seal kept in the database cannot prove) and fails with
    the seal written down before;
  * a scan without a seal (schema version 2; made before version 3; not
    complete) exits 1 and says why;
  * two roots in one run (their rows interleaved): two seals, each the
    shell's, each verified, file_seal rows with their own scan; a row
    deleted from the second is named there, the first stays intact; a row
    moved from one scan to the other is added to one, removed from the
    other; --all verifies every complete scan;
  * a sealed scan whose status was edited away from complete (and a row of
    it altered) is still verified, by default and with --all, though an
    older intact scan of its root is the newest complete one;
  * two roots interrupted (SIGINT) and resumed: the seals, computed from
    the rows kept (read back) and the rows written after, are the shell's,
    file_seal has exactly the rows' hashes, verify finds both intact;
  * verify writes nothing: the database's bytes and mtime stay, and user
    nobody verifies a root-owned copy in a folder it cannot write.
"""

import base64
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time

import lib
from lib import Checker, TempDir, run_fidx, write

# The canonical lines of a scan, as docs/SCHEMA.md gives them ({scan}: its id): the
# file rows in id order, then the scan row.
SEAL_SQL = """
SELECT quote(id)||'|'||quote(scan_id)||'|'||quote(CAST(path AS BLOB))||'|'||quote(CAST(name AS BLOB))||'|'||
 quote(CAST(ext AS BLOB))||'|'||quote(CAST(type AS BLOB))||'|'||quote(size)||'|'||quote(blocks)||'|'||
 quote(mode)||'|'||quote(uid)||'|'||quote(gid)||'|'||quote(nlink)||'|'||quote(dev)||'|'||quote(ino)||'|'||
 quote(atime_ns)||'|'||quote(mtime_ns)||'|'||quote(ctime_ns)||'|'||quote(btime_ns)||'|'||
 quote(CAST(link_target AS BLOB))||'|'||quote(CAST(md5 AS BLOB))||'|'||quote(CAST(sha1 AS BLOB))||'|'||
 quote(CAST(sha256 AS BLOB))||'|'||quote(CAST(sha512 AS BLOB))||'|'||quote(CAST(xxh128 AS BLOB))||'|'||
 quote(CAST(error AS BLOB))||'|'||quote(digests_from)||
 CASE WHEN coalesce(atime_sec, atime_nsec, mtime_sec, mtime_nsec, ctime_sec, ctime_nsec, btime_sec,
  btime_nsec) IS NULL THEN '' ELSE '|'||quote(atime_sec)||'|'||quote(atime_nsec)||'|'||
  quote(mtime_sec)||'|'||quote(mtime_nsec)||'|'||quote(ctime_sec)||'|'||quote(ctime_nsec)||'|'||
  quote(btime_sec)||'|'||quote(btime_nsec) END
 FROM file WHERE scan_id = {scan} ORDER BY id;
SELECT quote(id)||'|'||quote(CAST(root AS BLOB))||'|'||quote(CAST(host AS BLOB))||'|'||
 quote(CAST(os AS BLOB))||'|'||quote(CAST(kernel AS BLOB))||'|'||quote(CAST(arch AS BLOB))||'|'||
 quote(CAST(version AS BLOB))||'|'||quote(CAST(options AS BLOB))||'|'||quote(started_ns)||'|'||
 quote(finished_ns)||'|'||quote(CAST(status AS BLOB))||'|'||quote(entries)||'|'||quote(files)||'|'||
 quote(dirs)||'|'||quote(bytes)||'|'||quote(errors)||'|'||quote(reused)||'|'||quote(hashed)||'|'||
 quote(base_scan_id)||'|'||quote(pid)||CASE WHEN run_ns IS NULL THEN '' ELSE '|'||quote(run_ns) END
 FROM scan WHERE id = {scan};
"""

SLOW_FILES = 4
SLOW_SIZE = 512 << 20  # a sparse file: seconds of SHA-512 at -j1, in all
SEAL_LINE = re.compile(rb"^seal sha256:([0-9a-f]{64}) \(scan (\d+)\)$")
NEWLINE_NAME = b"new\nline.txt"


def build(root):
	"""The tree: hostile names, a link, a hard link, an empty file, a FIFO."""
	os.makedirs(root + b"/sub dir/deeper")
	write(root + b"/" + NEWLINE_NAME, b"two\nlines\n")
	write(root + b"/bad-\xff\xfe.bin", b"\x00\x01\x02" * 100)
	write(root + b"/-dash", b"dash")
	write(root + b"/sub dir/empty", b"")
	write(root + b"/sub dir/deeper/data.txt", b"d" * 5000)
	os.link(root + b"/sub dir/deeper/data.txt", root + b"/hard")
	os.symlink(b"sub dir/deeper/data.txt", root + b"/link")
	os.mkfifo(root + b"/fifo")
	# Times beyond int64 nanoseconds (2262): kept in the columns of schema 4, sealed too.
	write(root + b"/far", b"far")
	os.utime(root + b"/far", ns=(13569465600 * 10**9 + 5, 15032385535 * 10**9))


def cli_lines(db, scan_id):
	"""The canonical lines from the sqlite3 shell, as bytes."""
	p = subprocess.run(["sqlite3", "-readonly", "-list", db], input=SEAL_SQL.format(scan=scan_id).encode(),
			   stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
	return p.stdout


def cli_seal(db, scan_id):
	"""The seal as `sqlite3 DB < seal.sql | sha256sum` gives it (the real tools, piped)."""
	sql = subprocess.Popen(["sqlite3", "-readonly", "-list", db], stdin=subprocess.PIPE,
			       stdout=subprocess.PIPE)
	sums = subprocess.Popen(["sha256sum"], stdin=sql.stdout, stdout=subprocess.PIPE)
	sql.stdout.close()
	sql.stdin.write(SEAL_SQL.format(scan=scan_id).encode())
	sql.stdin.close()
	out = sums.communicate()[0]
	sql.wait()
	return out.split()[0].decode()


def seals_printed(res):
	"""{scan id: seal hex} from the summary's seal lines."""
	out = {}
	for line in res.out_lines():
		m = SEAL_LINE.match(line)
		if m:
			out[int(m.group(2))] = m.group(1).decode()
	return out


def json_path(o):
	"""The exact bytes of the path of a --json object."""
	if "path_base64" in o:
		return base64.b64decode(o["path_base64"])
	return None if o["path"] is None else o["path"].encode()


def verify_json(db, *args):
	"""Runs verify --json; returns (result, findings, verdicts)."""
	res = run_fidx("verify", "--json", *args, db)
	objs = [json.loads(l) for l in res.out_lines()]
	rows = sorted((o["row"], o["id"], json_path(o)) for o in objs if "row" in o)
	fields = sorted(o["field"] for o in objs if "field" in o)
	verdicts = {o["scan_id"]: o for o in objs if "seal" in o}
	return res, (rows, fields), verdicts


def edited(top, db, name, sql):
	"""A copy of db with sql run on it by the sqlite3 shell."""
	copy = top + b"/" + name + b".db"
	shutil.copyfile(db, copy)
	subprocess.run(["sqlite3", copy, sql], check=True)
	return copy


def one(db, sql, args=()):
	"""The first column of the first row of sql on db."""
	con = lib.connect(db)
	try:
		return con.execute(sql, args).fetchone()[0]
	finally:
		con.close()


def check_seal_form(chk, db, res):
	"""The summary's seal, scan.seal, the shell's recomputation and the row hashes agree."""
	printed = seals_printed(res)
	chk.eq("summary: one seal line for scan 1", sorted(printed), [1])
	seal = printed.get(1, "")
	chk.eq("summary's seal is scan.seal", one(db, "SELECT lower(hex(seal)) FROM scan WHERE id = 1"),
	       seal.encode())
	chk.eq("sqlite3 | sha256sum gives the seal", cli_seal(db, 1), seal)
	lines = cli_lines(db, 1).split(b"\n")[:-1]
	nrows = one(db, "SELECT count(*) FROM file WHERE scan_id = 1")
	chk.ok("one line per file row, then the scan row's; all printable ASCII",
	       len(lines) == nrows + 1 and lines[-1].startswith(b"1|X'") and
	       all(re.fullmatch(rb"[\x20-\x7e]+", l) for l in lines), "%d lines, %d rows" %
	       (len(lines), nrows))
	check_row_hashes(chk, "scan 1", db, 1)
	return seal


def check_row_hashes(chk, label, db, scan_id):
	"""file_seal holds, for each row of the scan and no other, its scan and row hash."""
	lines = cli_lines(db, scan_id).split(b"\n")[:-2]
	want = {int(l.split(b"|")[0]): (scan_id, hashlib.sha256(l).digest()[:8]) for l in lines}
	con = lib.connect(db)
	got = {r[0]: (r[1], r[2]) for r in con.execute(
		"SELECT file_id, scan_id, row_hash FROM file_seal WHERE scan_id = ? OR file_id IN"
		" (SELECT id FROM file WHERE scan_id = ?)", (scan_id, scan_id))}
	con.close()
	chk.eq("%s: file_seal: each row's scan and the first 8 bytes of SHA-256 of its line" %
	       label, got, want)


def check_intact(chk, db, seal, nrows):
	"""verify on the intact database, and --seal."""
	res = run_fidx("verify", db)
	chk.eq("intact: exit 0 and the one verdict line", (res.rc, res.out),
	       (0, b"scan 1: seal sha256:%s intact (%d rows)\n" % (seal.encode(), nrows)))
	res, found, verdicts = verify_json(db)
	v = verdicts.get(1, {})
	chk.ok("intact --json: exit 0, seal intact, recorded = computed, no finding",
	       res.rc == 0 and v.get("seal") == "intact" and v.get("recorded") == seal ==
	       v.get("computed") and v.get("rows") == nrows and found == ([], []), repr(res))
	for given in (seal, "sha256:" + seal, "sha256:" + seal.upper()):
		res = run_fidx("verify", "--seal", given, db)
		chk.ok("--seal %s...: exit 0, the rows match" % given[:12], res.rc == 0 and
		       b"the rows match --seal" in res.out, repr(res))
	wrong = "%064x" % (int(seal, 16) ^ 1)
	res = run_fidx("verify", "--seal", wrong, db)
	chk.ok("--seal of another value: exit 1, says so", res.rc == 1 and
	       b"do NOT match --seal sha256:" + wrong.encode() in res.out, repr(res))
	for bad in ("abc", "sha256:" + seal[:-1], seal + "0", "md5:" + seal, seal[:-1] + "g"):
		res = run_fidx("verify", "--seal", bad, db)
		chk.ok("--seal %r: exit 2, one line" % bad[:16], res.rc == 2 and res.out == b"" and
		       len(res.err_lines()) == 1, repr(res))


def check_edits(chk, top, db, rows_by_path):
	"""Each edit with the sqlite3 shell is found and named."""
	nl = rows_by_path[lib.norm_root(top + b"/tree") + b"/" + NEWLINE_NAME]
	bad = rows_by_path[lib.norm_root(top + b"/tree") + b"/bad-\xff\xfe.bin"]
	data = rows_by_path[lib.norm_root(top + b"/tree") + b"/sub dir/deeper/data.txt"]
	root = lib.norm_root(top + b"/tree")
	new_path = root + b"/planted\nfile"
	cases = [
		("size", "UPDATE file SET size = size + 1 WHERE id = %d" % nl["id"],
		 [("altered", nl["id"], nl["path"])], ["bytes"]),
		("digest", "UPDATE file SET sha256 = zeroblob(32) WHERE id = %d" % bad["id"],
		 [("altered", bad["id"], bad["path"])], []),
		("path", "UPDATE file SET path = path || 'x' WHERE id = %d" % data["id"],
		 [("altered", data["id"], data["path"] + b"x")], []),
		("name", "UPDATE file SET name = 'other' WHERE id = %d" % bad["id"],
		 [("altered", bad["id"], bad["path"])], []),
		("deleted row", "DELETE FROM file WHERE id = %d" % data["id"],
		 [("removed", data["id"], None)], ["bytes", "entries", "files"]),
		("inserted row", "INSERT INTO file (scan_id, path, name, ext, type, size) VALUES"
		 " (1, CAST(X'%s' AS TEXT), 'file', '', 'p', 0)" % new_path.hex(),
		 [("added", -1, new_path)], ["entries"]),
		("scan root", "UPDATE scan SET root = root || '-elsewhere'", [], ["root"]),
		("scan entries", "UPDATE scan SET entries = entries - 1", [], ["entries"]),
		("scan host", "UPDATE scan SET host = 'another-host'", [], []),
		("a REAL size", "UPDATE file SET size = 0.5 WHERE id = %d" % nl["id"],
		 [("altered", nl["id"], nl["path"])], ["bytes"]),
		("text in an integer column", "UPDATE file SET uid = 'x|y' || char(10) || 'z'"
		 " WHERE id = %d" % bad["id"], [("altered", bad["id"], bad["path"])], []),
	]
	for label, sql, want_rows, want_fields in cases:
		with chk.guard(label):
			copy = edited(top, db, label.replace(" ", "-").encode(), sql)
			res, (got_rows, got_fields), verdicts = verify_json(copy)
			if want_rows and want_rows[0][1] == -1:  # the inserted row's id
				want_rows = [(want_rows[0][0], one(copy, "SELECT max(id) FROM file"),
					      want_rows[0][2])]
			v = verdicts.get(1, {})
			chk.ok("%s: exit 1, seal mismatch" % label, res.rc == 1 and
			       v.get("seal") == "mismatch", repr(res))
			chk.eq("%s: the rows named" % label, got_rows, sorted(want_rows))
			chk.eq("%s: the scan fields named" % label, got_fields, sorted(want_fields))
			chk.eq("%s: verify's computed seal is the shell's" % label, v.get("computed"),
			       cli_seal(copy, 1))
			text = run_fidx("verify", "-0", copy)
			recs = text.out.split(b"\0")
			for kind, fid, path in want_rows:
				if kind == "removed":
					want = b"scan 1: row %d removed (its path went with it)" % fid
				else:
					want = b"scan 1: row %d %s: '%s'" % (fid, kind.encode(), path)
				chk.ok("%s: -0 text names row %d byte for byte" % (label, fid),
				       want in recs, lib.short(text.out))
			chk.ok("%s: -0 text: exit 1, every line NUL-ended, MISMATCH" % label,
			       text.rc == 1 and recs[-1] == b"" and b"\n" not in b"".join(
				       r for r in recs if not r.endswith(b"'")) and
			       any(b"seal MISMATCH" in r for r in recs), lib.short(text.out))


def check_resealed(chk, top, db, seal):
	"""Whoever rewrites the database can rewrite its seal: only --seal catches it."""
	copy = edited(top, db, b"resealed", "UPDATE file SET size = 1 WHERE id = (SELECT max(id)"
		      " FROM file WHERE type = 'f')")
	lines = cli_lines(copy, 1).split(b"\n")[:-1]
	fid = one(copy, "SELECT max(id) FROM file WHERE type = 'f'")
	line = [l for l in lines[:-1] if int(l.split(b"|")[0]) == fid][0]
	new = hashlib.sha256(b"".join(l + b"\n" for l in lines)).hexdigest()
	con = lib.connect(copy)
	con.execute("UPDATE file_seal SET row_hash = ? WHERE file_id = ?",
		    (hashlib.sha256(line).digest()[:8], fid))
	con.execute("UPDATE scan SET seal = ? WHERE id = 1", (bytes.fromhex(new),))
	con.commit()
	con.close()
	res = run_fidx("verify", copy)
	chk.ok("resealed: verify alone finds it intact (the limit of a seal in the database)",
	       res.rc == 0 and b"sha256:%s intact" % new.encode() in res.out, repr(res))
	res = run_fidx("verify", "--seal", seal, copy)
	chk.ok("resealed: --seal with the seal written down: exit 1, resealed",
	       res.rc == 1 and b"do NOT match --seal" in res.out and b"resealed" in res.out,
	       repr(res))


def check_unsealed(chk, top, db):
	"""Scans without a seal: exit 1 and the reason."""
	v2 = edited(top, db, b"v2", "")
	lib.downgrade(v2, 2)
	res = run_fidx("verify", v2)
	chk.eq("schema version 2: exit 1, no seal", (res.rc, res.out),
	       (1, b"scan 1: no seal (database schema version 2: seals came with version 3)\n"))
	res, _, verdicts = verify_json(v2)
	chk.ok("schema version 2 --json: seal none", res.rc == 1 and
	       verdicts.get(1, {}).get("seal") == "none", repr(res))
	cases = [
		("made before version 3", "UPDATE scan SET seal = NULL, pid = NULL; DELETE FROM"
		 " file_seal", b"made before schema version 3"),
		("interrupted", "UPDATE scan SET seal = NULL, status = 'interrupted'; DELETE FROM"
		 " file_seal", b"only complete scans are sealed"),
		("seal removed", "UPDATE scan SET seal = NULL", b"the seal was removed"),
	]
	for label, sql, why in cases:
		copy = edited(top, db, label.replace(" ", "-").encode(), sql)
		res = run_fidx("verify", "--scan", "1", copy)
		chk.ok("%s: exit 1, no seal, why, the seal computed now" % label, res.rc == 1 and
		       b"scan 1: no seal (" in res.out and why in res.out and
		       ("sha256:" + cli_seal(copy, 1)).encode() in res.out, repr(res))


def check_two_roots(chk, top):
	"""Two roots in one run, then a rescan: each scan sealed and verified."""
	a, b = top + b"/ra", top + b"/rb"
	for r in (a, b):
		os.makedirs(r + b"/d")
		for i in range(30):
			write(r + b"/d/f%02d" % i, b"%d" % i)
	db = top + b"/two.db"
	res = run_fidx("scan", "--db", db, a, b)
	printed = seals_printed(res)
	chk.ok("two roots: exit 0, a seal line each", res.rc == 0 and sorted(printed) == [1, 2],
	       repr(res))
	chk.ok("two roots: each seal is the shell's", all(printed[s] == cli_seal(db, s)
							  for s in printed), repr(printed))
	for s in (1, 2):
		check_row_hashes(chk, "two roots, scan %d" % s, db, s)
	res = run_fidx("verify", db)
	chk.ok("two roots: both intact", res.rc == 0 and len(res.out_lines()) == 2 and
	       all(b"intact" in l for l in res.out_lines()), repr(res))
	victim = one(db, "SELECT max(id) FROM file WHERE scan_id = 2 AND type = 'f'")
	cut = edited(top, db, b"two-cut", "DELETE FROM file WHERE id = %d" % victim)
	res, (rows, _), verdicts = verify_json(cut)
	chk.ok("two roots, a row of scan 2 deleted: scan 1 intact, scan 2 names it",
	       res.rc == 1 and verdicts.get(1, {}).get("seal") == "intact" and
	       verdicts.get(2, {}).get("seal") == "mismatch" and rows == [("removed", victim, None)],
	       repr(res))
	moved = edited(top, db, b"two-moved", "UPDATE file SET scan_id = 1 WHERE id = %d" % victim)
	res, (rows, _), verdicts = verify_json(moved)
	path = one(db, "SELECT path FROM file WHERE id = ?", (victim,))
	chk.ok("two roots, a row moved from scan 2 to scan 1: added to 1, removed from 2",
	       res.rc == 1 and verdicts.get(1, {}).get("seal") == "mismatch" and
	       verdicts.get(2, {}).get("seal") == "mismatch" and
	       rows == [("added", victim, path), ("removed", victim, None)], repr(res))
	res = run_fidx("scan", "--db", db, a)
	printed = seals_printed(res)
	chk.ok("rescan: sealed as scan 3", res.rc == 0 and list(printed) == [3] and
	       printed[3] == cli_seal(db, 3), repr(res))
	res = run_fidx("verify", db)
	chk.ok("default: the newest complete scan of each root (2 and 3)", res.rc == 0 and
	       [l.split(b":")[0] for l in res.out_lines()] == [b"scan 2", b"scan 3"], repr(res))
	res = run_fidx("verify", "--all", db)
	chk.ok("--all: every complete scan", res.rc == 0 and
	       [l.split(b":")[0] for l in res.out_lines()] == [b"scan 1", b"scan 2", b"scan 3"],
	       repr(res))
	for args in (["--all", "--scan", "1"], ["--seal", printed[3]]):
		res = run_fidx("verify", *args, db)
		chk.ok("%s: exit 2, one line" % " ".join(args)[:20], res.rc == 2 and
		       len(res.err_lines()) == 1 and res.out == b"", repr(res))


def check_resume(chk, top):
	"""
	Two roots, a slow one and a small one, interrupted and resumed: the rows
	kept from the first run are read back once, those dropped lose their
	file_seal rows, the new ones are sealed as written; each seal is the
	shell's and verify finds both intact.
	"""
	slow, small = top + b"/slow", top + b"/small"
	os.makedirs(slow + b"/d")
	os.makedirs(small + b"/d")
	for i in range(SLOW_FILES):
		lib.sparse(slow + b"/big%d" % i, SLOW_SIZE, [(SLOW_SIZE - 1, b"!")])
	for i in range(40):
		write(slow + b"/d/s%02d" % i, b"small %d" % i)
		write(small + b"/d/f%02d\n|x" % i, b"%d" % i)
	db = top + b"/resume.db"
	p = lib.start_scan(db, "--hash", "sha512", slow, small, rows=2, settle=0.4)
	if not chk.ok("resume: the scan was still running when interrupted", p.poll() is None,
		      "it ended first: make the slow tree slower"):
		p.communicate(timeout=60)
		return
	p.send_signal(signal.SIGINT)
	p.communicate(timeout=60)
	dropped = one(db, "SELECT count(*) FROM file WHERE error LIKE '%scan interrupted'")
	kept = one(db, "SELECT count(*) FROM file WHERE error IS NULL")
	chk.ok("resume: the first run left rows to keep and rows to do again", dropped and kept,
	       "%r kept, %r dropped" % (kept, dropped))
	chk.eq("resume: an interrupted scan has no seal",
	       one(db, "SELECT count(*) FROM scan WHERE seal IS NOT NULL"), 0)
	res = run_fidx("scan", "--db", db, "--resume", slow, small, timeout=300)
	printed = seals_printed(res)
	chk.ok("resume: exit 0, a seal line for each scan", res.rc == 0 and
	       sorted(printed) == [1, 2], repr(res))
	for s in sorted(printed):
		chk.eq("resume: scan %d's seal is the shell's" % s, cli_seal(db, s), printed[s])
		check_row_hashes(chk, "resume, scan %d" % s, db, s)
	res = run_fidx("verify", db)
	chk.ok("resume: verify finds both intact", res.rc == 0 and len(res.out_lines()) == 2 and
	       all(b"intact" in l for l in res.out_lines()), repr(res))


def check_read_only(chk, top, db, seal):
	"""verify writes nothing, and works where it cannot write."""
	before = (lib.read_bytes(db), os.stat(db).st_mtime_ns)
	res = run_fidx("verify", db)
	chk.ok("verify leaves the database byte for byte, mtime too",
	       res.rc == 0 and (lib.read_bytes(db), os.stat(db).st_mtime_ns) == before, repr(res))
	rodir = top + b"/ro"
	os.mkdir(rodir, 0o755)
	ro = rodir + b"/evidence.db"
	shutil.copyfile(db, ro)
	os.chmod(ro, 0o644)
	os.chmod(top, 0o755)
	res = run_fidx("verify", "--seal", seal, ro, uid=lib.NOBODY)
	chk.ok("nobody verifies a root-owned database in a folder it cannot write",
	       res.rc == 0 and b"intact" in res.out and sorted(os.listdir(rodir)) ==
	       [b"evidence.db"], repr(res))


def check_status_edited(chk, top):
	"""A sealed scan whose status was edited away from complete is still verified.

	Only complete scans are sealed (and a complete scan is never resumed), so
	a sealed scan that is not complete had its status edited; the default
	selection (newest complete scan of each root) and --all (complete scans)
	must not let that edit hide it behind an older, intact scan."""
	root = top + b"/status"
	os.makedirs(root)
	write(root + b"/f", b"f")
	db = top + b"/status.db"
	for _ in range(2):
		res = run_fidx("scan", "-q", "--db", db, root)
		chk.ok("status edited: scan exits 0", res.rc == 0, repr(res))
	victim = one(db, "SELECT id FROM file WHERE scan_id = 2 AND type = 'f'")
	hid = edited(top, db, b"status-hidden", "UPDATE file SET size = size + 1 WHERE id = %d;"
		     " UPDATE scan SET status = 'interrupted' WHERE id = 2" % victim)
	for args in ([], ["--all"]):
		res, (rows, fields), verdicts = verify_json(hid, *args)
		chk.ok("status edited, verify %s: exit 1, scan 2 checked and names the row and the"
		       " status" % " ".join(args), res.rc == 1 and
		       verdicts.get(2, {}).get("seal") == "mismatch" and
		       ("altered", victim, root + b"/f") in rows and "status" in fields and
		       verdicts.get(1, {}).get("seal") == "intact", repr(res))


def main():
	chk = Checker()
	with TempDir() as t:
		top = os.fsencode(t.path)
		root = top + b"/tree"
		build(root)
		db = top + b"/fidx.db"
		res = run_fidx("scan", "--hash", "sha256,md5", "--db", db, root)
		chk.ok("scan: exit 0", res.rc == 0, repr(res))
		con = lib.connect(db)
		cols = ["id", "path", "type"]
		rows = {r[1]: dict(zip(cols, r)) for r in
			con.execute("SELECT %s FROM file WHERE scan_id = 1" % ", ".join(cols))}
		con.close()
		with chk.guard("seal form"):
			seal = check_seal_form(chk, db, res)
		with chk.guard("intact"):
			check_intact(chk, db, seal, len(rows))
		check_edits(chk, top, db, rows)
		with chk.guard("resealed"):
			check_resealed(chk, top, db, seal)
		with chk.guard("unsealed"):
			check_unsealed(chk, top, db)
		with chk.guard("two roots"):
			check_two_roots(chk, top)
		with chk.guard("status edited"):
			check_status_edited(chk, top)
		with chk.guard("resume"):
			check_resume(chk, top)
		with chk.guard("read-only"):
			check_read_only(chk, top, db, seal)
	chk.done()


main()
