#!/usr/bin/python3
"""t_hostile.py - rows fidx never writes: one clear line, never a wrong answer.

A database with two sealed scans of a small tree (all five digests) and a
third, of another tree, without digests but with the SHA-256 `fidx dupes`
computed (file_digest), is
copied and damaged with Python's sqlite3, one way per case, in each class a
stress run of every query command on the ASan+UBSan build found (a harness
corrupting rows at random):

  * values of a type fidx never writes: text, a real, a blob in an INTEGER
    column; a digest of the wrong length (an empty blob included) or kind;
    a path that is not text, not absolute, or not below its scan's root; a
    type letter fidx does not write; a scan row's text that is a blob;
  * path index blocks that decode to empty, out of order or misplaced paths,
    or to an entry whose row is another's; a block missing; an index row
    counting 2^32 - 1 blocks (which hung: a list of them all was made);
  * times at the ends of 64 bits (a duration that overflowed).

Each command that reads the damaged value must exit with its fatal status
and print one line naming the scan and the row (or the index block) and
what is wrong, and nothing else; on the sanitizer build, no report (which
exits otherwise).  `fidx scans` shows a duration of extreme times as Python
computes it.  A rescan never reuses a damaged digest, nor the digests of a
row damaged in another one: the file is read again.  A scan's status or root
that is not text (or holds a NUL byte) equals no status or root asked for; a
schema version below 1 is damage, not a newer fidx's database.
"""

import hashlib
import json
import os
import re
import shutil
import time

import lib
from lib import Checker, TempDir, run_fidx, write

# status of a fatal error: diff and check say 18 (AIDE's), the others 2
FATAL = {"diff": 18, "check": 18}


def build(top):
	"""The tree and the database of the header; returns (db, tree, list of a digest)."""
	tree = top + b"/tree"
	os.makedirs(tree + b"/sub")
	for i in range(6):
		write(tree + b"/sub/f%d.txt" % i, b"content %d\n" % (i % 2))
	write(tree + b"/big.bin", os.urandom(50000))
	shutil.copy(tree + b"/big.bin", tree + b"/sub/copy.bin")
	os.symlink(b"sub/f1.txt", tree + b"/link")
	time.sleep(0.3)  # older than the scans by more than a tick: their digests are reused
	db = top + b"/base.db"
	for _ in range(2):
		res = run_fidx("scan", "-q", "--hash", "md5,sha1,sha256,sha512,xxh128", "-o", db, tree)
		assert res.rc == 0, res
	# Another tree (not inside this one: every row of scan 2 is shown by default).
	other = top + b"/other"
	shutil.copytree(tree + b"/sub", other, symlinks=True)
	res = run_fidx("scan", "-q", "--hash", "none", "-o", db, other)
	assert res.rc == 0, res
	res = run_fidx("dupes", "--scan", "3", db)
	assert res.rc == 0, res
	lst = top + b"/list.sha256"
	write(lst, hashlib.sha256(b"content 1\n").hexdigest().encode() + b"  x\n")
	return db, tree, lst


def varint(v):
	"""v as the path index writes it (LEB128)."""
	out = b""
	while v >= 0x80:
		out += bytes([v & 0x7f | 0x80])
		v >>= 7
	return out + bytes([v])


def damaged(top, db, name, sql):
	"""A copy of db with sql run on it (Python's sqlite3, the WAL folded back)."""
	copy = top + b"/" + name.replace(b" ", b"-") + b".db"
	shutil.copyfile(db, copy)
	con = lib.connect(copy)
	con.executescript(sql)
	con.commit()
	con.close()
	return copy


def row_id(db, where):
	"""The id of the first file row matching where."""
	con = lib.connect(db)
	try:
		return con.execute("SELECT min(id) FROM file WHERE " + where).fetchone()[0]
	finally:
		con.close()


def check_line(chk, label, res, cmd, line):
	"""
	The fatal status of cmd, and exactly one line on stderr (besides warnings
	that the damage has nothing to do with) matching regex line.
	"""
	lines = [l for l in res.err_lines() if not l.startswith(b"fidx: warning:")]
	chk.ok("%s: exit %d, one line" % (label, FATAL.get(cmd, 2)),
	       res.rc == FATAL.get(cmd, 2) and len(lines) == 1 and not res.timed_out, repr(res))
	chk.ok("%s: it names what is damaged" % label,
	       len(lines) == 1 and re.fullmatch(line, lines[0]) is not None,
	       "stderr %s, want %s" % (lib.short(res.err), line))


def main():
	chk = Checker()
	with TempDir() as t:
		top = t.path.encode()
		db, tree, lst = build(top)
		f1 = row_id(db, "scan_id = 2 AND path LIKE '%/sub/f1.txt'")
		big = row_id(db, "scan_id = 2 AND path LIKE '%/big.bin'")
		d3 = row_id(db, "scan_id = 3 AND id IN (SELECT file_id FROM file_digest)")
		env = {"TMPDIR": os.fsdecode(top)}
		D = rb"fidx: database '[^']*' is damaged: "
		# an index block of one entry: a path below scan 2's root, the id of row f1 (another path)
		con = lib.connect(db)
		zz = con.execute("SELECT root FROM scan WHERE id = 2").fetchone()[0] + b"/zz"
		con.close()
		entry = varint(0) + varint(len(zz)) + zz + varint(2 * f1)
		# two entries below the root, the second before the first: ROOT/b, ROOT/a
		rb = zz[:-3] + b"/b"
		backwards = (varint(0) + varint(len(rb)) + rb + varint(2) +
			     varint(len(rb) - 1) + varint(1) + b"a" + varint(2))

		# (label, SQL, [commands], the line each prints)
		cases = [
			("size holds text", "UPDATE file SET size = 'abc' WHERE id = %d" % f1,
			 [["export", "-f", "csv"], ["du"], ["stats"], ["find", "-l"], ["diff", "1", "2"],
			  ["check", "@TREE"]],
			 D + rb"scan 2, row %d: size holds text, not an integer" % f1),
			("mtime holds a real", "UPDATE file SET mtime_ns = 1.5 WHERE id = %d" % f1,
			 [["export", "-f", "body"], ["stats"], ["find", "--json"]],
			 D + rb"scan 2, row %d: mtime_ns holds a real number, not an integer" % f1),
			("a time beyond 2262 holds text", "UPDATE file SET mtime_ns = NULL,"
			 " mtime_sec = 'soon', mtime_nsec = 0 WHERE id = %d" % f1,
			 [["export", "-f", "csv"], ["stats"], ["find", "--json"]],
			 D + rb"scan 2, row %d: mtime_sec holds text, not an integer" % f1),
			("dev holds a blob", "UPDATE file SET dev = X'01' WHERE id = %d" % f1,
			 [["du"], ["export", "-f", "dfxml"], ["dupes"]],
			 D + rb"scan 2, row %d: dev holds a blob, not an integer" % f1),
			("empty digests", "UPDATE file SET md5 = X'', sha1 = X'', sha256 = X'',"
			 " sha512 = X'', xxh128 = X''",
			 [["diff", "1", "2"], ["diff", "-v", "1", "2"]],
			 D + rb"scan 1, row \d+: md5 holds 0 bytes, not 16"),
			("a short sha256", "UPDATE file SET sha256 = X'00' WHERE id = %d" % f1,
			 [["dupes"], ["match", "@LIST"], ["export", "-f", "sha256sum", "--scan", "2"],
			  ["find", "--hash", "00"], ["export", "-f", "hashdeep", "--scan", "2"]],
			 D + rb"scan 2, row %d: sha256 holds 1 byte, not 32" % f1),
			("a sha256 as text", "UPDATE file SET sha256 = lower(hex(sha256)) WHERE id = %d" % f1,
			 [["dupes"], ["export", "-f", "jsonl"]],
			 D + rb"scan 2, row %d: sha256 holds text, not a blob" % f1),
			("a short digest of dupes", "UPDATE file_digest SET sha256 = X'00'"
			 " WHERE file_id = %d" % d3,
			 [["dupes", "--scan", "3"]],
			 D + rb"scan 3, row %d: sha256 holds 1 byte, not 32" % d3),
			("a path below no root", "UPDATE file SET path = '/etc/passwd' WHERE id = %d" % f1,
			 [["export", "-f", "csv"], ["stats"], ["dupes"]],
			 D + rb"scan 2, row %d: path '/etc/passwd' is not below the scan's root '[^']*'"
			 % f1),
			("a path changed under its index entry", "UPDATE file SET path ="
			 " '/etc/passwd' WHERE id = %d" % f1,
			 [["find", "-l", "f1.txt"]],
			 rb"fidx: the path index of scan 2 in database '[^']*' is damaged"
			 rb" \(block \d+: the row of an entry, %d, is another path's\)" % f1),
			("a path below no root, du", "UPDATE file SET path = '/etc/passwd' WHERE id = %d" % f1,
			 [["du"]],
			 D + rb"scan 2: \d+ rows lie at or below its root, its scan row counts \d+ entries"),
			("a relative path", "UPDATE file SET path = 'sub/x' WHERE id = %d" % f1,
			 [["export", "-f", "csv"], ["diff", "1", "2"]],
			 D + rb"scan 2, row %d: path 'sub/x' is not absolute" % f1),
			("a path as an integer", "UPDATE file SET path = CAST(42 AS BLOB) WHERE id = %d" % f1,
			 [["stats"], ["match", "@LIST"]],
			 D + rb"scan 2, row %d: path holds a blob, not text" % f1),
			("a type fidx never writes", "UPDATE file SET type = 'x' WHERE id = %d" % f1,
			 [["match", "@LIST"], ["export", "-f", "md5sum", "--scan", "2"], ["stats"],
			  ["dupes"]],
			 D + rb"scan 2, row %d: type holds another text, not a type letter fidx writes"
			 % f1),
			("the host of a scan as a blob", "UPDATE scan SET host = X'' WHERE id = 2",
			 [["check", "@TREE"], ["scans"], ["find"]],
			 D + rb"scan 2: host holds a blob, not text"),
			("an index block of empty paths", "UPDATE path_block SET data = X'000000000000'"
			 " WHERE key = 2 << 32",
			 [["find", "-i", "F1"], ["find"]],
			 rb"fidx: the path index of scan 2 in database '[^']*' is damaged"
			 rb" \(block 0: a path out of order\)"),
			("an index block out of order", "UPDATE path_block SET data = X'%s'"
			 " WHERE key = 2 << 32" % backwards.hex(),
			 [["find"]],
			 rb"fidx: the path index of scan 2 in database '[^']*' is damaged"
			 rb" \(block 0: a path out of order\)"),
			("an index entry of another row",
			 "UPDATE path_block SET data = X'%s' WHERE key = 2 << 32" % entry.hex(),
			 [["find", "-l"]],
			 rb"fidx: the path index of scan 2 in database '[^']*' is damaged"
			 rb" \(block 0: the row of an entry, %d, is another path's\)" % f1),
			("an index entry outside the root", "UPDATE path_block SET data ="
			 " X'00042f65746302' WHERE key = 2 << 32",
			 [["find"]],
			 rb"fidx: the path index of scan 2 in database '[^']*' is damaged"
			 rb" \(block 0: a path outside the scan's root\)"),
			("an index block missing", "DELETE FROM path_block WHERE key = 2 << 32",
			 [["find"]],
			 rb"fidx: the path index of scan 2 in database '[^']*' is damaged"
			 rb" \(block 0: a block that is missing\)"),
			("an index of 2^32 - 1 blocks", "UPDATE path_index SET blocks = 4294967295"
			 " WHERE scan_id = 2",
			 [["find"], ["find", "-i", "F1"]],
			 rb"fidx: the path index of scan 2 in database '[^']*' is damaged"
			 rb" \(block \d+: a block that is missing\)"),
		]
		for label, sql, cmds, line in cases:
			copy = damaged(top, db, label.encode(), sql)
			for cmd in cmds:
				args = [a if a not in ("@TREE", "@LIST") else (tree if a == "@TREE" else lst)
					for a in cmd]
				res = run_fidx(*args[:1], copy, *args[1:], env=env)
				check_line(chk, "%s: %s" % (label, " ".join(cmd)), res, cmd[0], line)
		# verify names what was changed (and reads damaged rows without stopping)
		copy = damaged(top, db, b"verify", "UPDATE file SET size = 'abc' WHERE id = %d" % f1)
		res = run_fidx("verify", copy)
		chk.ok("verify reads a damaged row and names it altered", res.rc == 1 and
		       (b"row %d altered" % f1) in res.out, repr(res))

		# extreme times: a duration as Python computes it, no overflow (from the end
		# less the start: run_ns, which schema 4 records, is set aside)
		copy = damaged(top, db, b"times", "UPDATE scan SET started_ns = -9223372036854775808,"
			       " finished_ns = 9223372036854775807, run_ns = NULL WHERE id = 2")
		res = run_fidx("scans", "--json", copy)
		objs = [json.loads(l) for l in res.out_lines()] if res.rc == 0 else []
		dur = [o["duration_s"] for o in objs if o["id"] == 2]
		chk.ok("scans --json: the duration of times 2^64 ns apart", res.rc == 0 and
		       dur and abs(dur[0] - (2 ** 64 - 1) / 1e9) < 1e3, repr(res))
		res = run_fidx("scans", copy)
		chk.ok("scans: the duration of times 2^64 ns apart", res.rc == 0 and
		       b"18446744073.7s" in res.out, repr(res))

		# a damaged digest is not reused: the rescan reads the file
		copy = damaged(top, db, b"reuse", "UPDATE file SET sha256 = CAST(zeroblob(32) AS TEXT)"
			       " WHERE id = %d" % big)
		res = run_fidx("scan", "-q", "--hash", "md5,sha1,sha256,sha512,xxh128", "-o", copy, tree)
		chk.ok("rescan beside a damaged digest", res.rc == 0, repr(res))
		con = lib.connect(copy)
		got = con.execute("SELECT sha256, digests_from FROM file WHERE scan_id = 4 AND"
				  " path = (SELECT path FROM file WHERE id = ?)", (big,)).fetchone()
		con.close()
		chk.eq("rescan: the file of the damaged row is read again",
		       got, (hashlib.sha256(lib.read_bytes(tree + b"/big.bin")).digest(), None))
		# ... nor the digests of a row damaged in a column the rescan does not take
		copy = damaged(top, db, b"reuse other", "UPDATE file SET xxh128 = X'00'"
			       " WHERE id = %d" % big)
		res = run_fidx("scan", "-q", "--hash", "md5,sha256", "-o", copy, tree)
		con = lib.connect(copy)
		got = con.execute("SELECT digests_from FROM file WHERE scan_id = 4 AND"
				  " path = (SELECT path FROM file WHERE id = ?)", (big,)).fetchone()
		con.close()
		chk.ok("rescan beside a row damaged in another digest: the file is read again",
		       res.rc == 0 and got == (None,), repr((res, got)))
		# ... nor anything of a scan that began at the first nanosecond of 64 bits
		copy = damaged(top, db, b"reuse start", "UPDATE scan SET started_ns ="
			       " -9223372036854775808 WHERE id = 2")
		res = run_fidx("scan", "-q", "--hash", "md5,sha1,sha256,sha512,xxh128", "-o", copy, tree)
		con = lib.connect(copy)
		got = con.execute("SELECT count(*) FROM file WHERE scan_id = 4 AND"
				  " digests_from IS NOT NULL").fetchone()
		con.close()
		chk.ok("rescan of a scan begun at -2^63 ns: nothing reused", res.rc == 0 and
		       got == (0,), repr((res, got)))

		# A status or a root that is not text, or holds a NUL byte, equals no status or
		# root: the scan is not selected by it, as a SQL comparison would have it.
		want = run_fidx("find", "--scan", "1,3", db)
		copy = damaged(top, db, b"status blob", "PRAGMA ignore_check_constraints = 1;"
			       " UPDATE scan SET status = CAST('complete' AS BLOB) WHERE id = 2")
		res = run_fidx("find", copy)
		chk.ok("a status stored as a blob is not 'complete': find reads scans 1 and 3",
		       res.rc == 0 and want.rc == 0 and res.out == want.out, repr((res, want)))
		copy = damaged(top, db, b"root nul", "UPDATE scan SET root = root ||"
			       " CAST(X'00' AS TEXT) || 'z' WHERE id = 1")
		res = run_fidx("diff", copy)
		chk.ok("a root holding a NUL byte is not the root: diff finds no scan before scan 2",
		       res.rc == 17 and b"no complete scan of" in res.err, repr(res))
		# A schema version below 1 is damage (18), not a newer fidx's database (19).
		copy = damaged(top, db, b"version 0", "PRAGMA user_version = 0")
		res = run_fidx("diff", copy)
		chk.ok("schema version 0: diff exits 18", res.rc == 18 and
		       b"has schema version 0" in res.err, repr(res))
		# verify reads the columns the tables have, whatever user_version says.
		copy = damaged(top, db, b"version 3", "PRAGMA user_version = 3")
		res = run_fidx("verify", "--scan", "2", copy)
		chk.ok("verify of a database of schema 4 that says 3: intact", res.rc == 0, repr(res))
	chk.done()


if __name__ == "__main__":
	main()
