"""t_image.py - fidx scan --image: disk images read with The Sleuth Kit, never written.

Images are built here without mounting (images.py: ext4, FAT and NTFS made by their own
tools, deleted entries, an NTFS alternate data stream, a timestomped NTFS file, a GPT disk
holding the ext4 and the FAT, that disk split in three pieces, as an E01, cut in half, and
with its partition table destroyed).  The ground truth comes from The Sleuth Kit's own
tools, never from fidx:

  * every name fls -r -p -l lists is a row, nothing else but the image's own row, each
    file system's root and the NTFS files fls shows only through their streams; per row
    the type, the metadata address (ino), size, uid, gid, the four times (whole seconds,
    as fls prints them; a time fls shows as 0000-00-00 is NULL), deleted (fls's '*') and
    orphan ($OrphanFiles) in the state column;
  * the SHA-256 of every live regular file and stream is icat's; the file list is
    fiwalk's (its DFXML);
  * NTFS: $STANDARD_INFORMATION and $FILE_NAME times are istat's, to the 100 ns, and the
    timestomped file is found by SQL ($SI earlier than $FN); the attributes are the
    $STANDARD_INFORMATION flags istat prints (the timestomped file's set read-only,
    hidden, system); export --format body equals fls -m's lines ($FILE_NAME lines,
    "(deleted)") field by field;
  * the GPT disk: paths under pN (mmls's order), the scan's options name the table and
    partitions; its split pieces and its E01 give the same rows (diff: only the image's
    own row differs), the E01's stored MD5 verifies (ewfverify) and equals the row's MD5,
    the image's digests are those of its bytes;
  * a truncated image and a destroyed table: exit 1, one error line each, what is
    readable still recorded; a file that is not an image: one line, exit 2;
  * find, dupes (by recorded SHA-256: equal contents in the image, never a stream with
    its file), match, check of an image against its scan (identical), and every image
    byte-identical afterwards; a scan without --image gets the one-line hint;
  * a block device (a read-only loop device on the ext4 image): the same rows below it, its
    row the media's size and digest.
"""

import hashlib
import json
import xml.etree.ElementTree as ET
import os
import shutil
import sqlite3
import subprocess
import sys

import images as I
import lib
from lib import Checker, run_fidx

DFXML = "{http://www.forensicswiki.org/wiki/Category:Digital_Forensics_XML}"
TYPES = {"r": b"f", "d": b"d", "l": b"l", "p": b"p", "v": b"f", "V": b"d"}


def sha256_of(*paths):
	"""SHA-256 hex of the concatenated files."""
	h = hashlib.sha256()
	for p in paths:
		with open(p, "rb") as f:
			h.update(f.read())
	return h.hexdigest()


def rows_of(db, root):
	"""path -> dict of the rows of the newest scan of root."""
	con = sqlite3.connect(db)
	con.text_factory = bytes
	cur = con.execute("SELECT f.* FROM file f WHERE f.scan_id = (SELECT max(id) FROM scan"
			  " WHERE root = ?)", (os.fsdecode(root),))
	names = [d[0] for d in cur.description]
	out = {r[names.index("path")]: dict(zip(names, r)) for r in cur}
	con.close()
	return out


def scan_of(db, root):
	"""The newest scan row of root, as a dict."""
	con = sqlite3.connect(db)
	cur = con.execute("SELECT * FROM scan WHERE root = ? ORDER BY id DESC LIMIT 1", (root,))
	names = [d[0] for d in cur.description]
	row = dict(zip(names, cur.fetchone()))
	con.close()
	return row


def seal_sql():
	"""The seal.sql of docs/SCHEMA.md ("Recomputing it without fidx"), as the docs give it."""
	here = os.path.dirname(os.path.abspath(__file__))
	with open(os.path.join(here, "..", "..", "docs", "SCHEMA.md")) as f:
		text = f.read()
	start = text.index("```sql\n", text.index("Save this as `seal.sql`")) + 7
	return text[start:text.index("```", start)]


def check_seal_by_hand(chk, db, root):
	"""The seal of root's scan, recomputed with the sqlite3 shell and the documented SQL."""
	scan = scan_of(db, root)
	sql = seal_sql().replace("scan_id = 1", "scan_id = %d" % scan["id"]).replace(
		"id = 1;", "id = %d;" % scan["id"])
	lines = subprocess.run(["sqlite3", "-readonly", "-list", db], input=sql.encode(),
			       capture_output=True).stdout
	chk.eq("the seal of an image's scan, by docs/SCHEMA.md's SQL and sha256 (streams, "
	       "$FILE_NAME times, states)", hashlib.sha256(lines).hexdigest(),
	       scan["seal"].hex() if scan["seal"] else None)


def check_fls(chk, label, rows, prefix, image, offset=None):
	"""Every fls -r -p -l entry is a row with fls's columns; returns the entries."""
	fl = I.fls_entries([image], offset)
	missing, bad = [], {}
	for x in fl:
		r = rows.get(prefix + x["path"])
		if r is None:
			missing.append(x["path"])
			continue
		want_type = TYPES.get(x["meta_type"]) or TYPES.get(x["name_type"])
		state = r["state"]
		checks = {
			"type": r["type"] == want_type,
			"ino": x["realloc"] or r["ino"] == x["inode"],
			"size": x["realloc"] or r["size"] == x["size"],
			"owner": x["realloc"] or (r["uid"], r["gid"]) == (x["uid"], x["gid"]),
			"state": (state == b"orphan") if x["orphan"] else
				 (state in (b"deleted", b"reallocated")) == bool(x["deleted"]),
		}
		for k in ("atime", "mtime", "ctime", "crtime"):
			col = "btime_ns" if k == "crtime" else k + "_ns"
			v = r[col]
			checks[k] = x["realloc"] or (v is None if x[k] is None else
						     v is not None and v // 10**9 == x[k])
		for k, good in checks.items():
			if not good:
				bad.setdefault(k, []).append((x["path"], x))
	chk.eq(label + ": every entry fls lists is a row", missing, [])
	for k in ("type", "ino", "size", "owner", "state", "atime", "mtime", "ctime", "crtime"):
		chk.ok(label + ": %s as fls -l" % k, k not in bad, repr(bad.get(k, [])[:2]))
	# Nothing else: the image, the file system's root, files seen by fls only as streams.
	listed = {prefix + x["path"] for x in fl}
	streams = {p.split(b":")[0] for p in listed if b":" in p[len(prefix):]}
	extra = [p for p in rows if p.startswith(prefix) and p not in listed and p not in streams]
	chk.eq(label + ": no row fls does not list", extra, [])
	return fl


def check_content(chk, label, rows, prefix, image, fl, offset=None):
	"""The SHA-256 of every live file and stream is icat's (where icat reads the whole size)."""
	wrong = []
	for x in fl:
		r = rows.get(prefix + x["path"])
		if not r or r["type"] != b"f" or x["deleted"] or x["orphan"] or x["meta_type"] != "r":
			continue
		want = I.icat_digests([image], x["addr"], offset)
		if want["size"] != x["size"]:
			continue  # TSK itself cannot read it all ($BadClus:$Bad): an error row
		if r["sha256"] is None or r["sha256"].hex() != want["sha256"] or \
		   r["md5"].hex() != want["md5"]:
			wrong.append((x["path"], r["error"]))
	chk.eq(label + ": SHA-256 and MD5 of every live file as icat's", wrong, [])


def check_fiwalk(chk, label, rows, prefix, image, db):
	"""fiwalk's file list (its DFXML) is in the rows, with its MD5 where it has one; the
	DFXML export says allocated or not as fiwalk does."""
	fw = I.fiwalk_files([image])
	missing = [f["path"] for f in fw if prefix + f["path"] not in rows]
	chk.eq(label + ": every fiwalk fileobject is a row", missing, [])
	bad = [f["path"] for f in fw if f.get("md5") and prefix + f["path"] in rows and
	       rows[prefix + f["path"]]["type"] == b"f" and
	       (rows[prefix + f["path"]]["md5"] or b"").hex() != f["md5"]]
	chk.eq(label + ": MD5 of the regular files as fiwalk's", bad, [])
	# export --format dfxml: allocated or not as fiwalk says, for every file both list.
	scan = scan_of(db, image)["id"]
	res = run_fidx("export", "--format", "dfxml", "--db", db, "--scan", str(scan))
	ours = {}
	for fo in ET.fromstring(res.out).iter(DFXML + "fileobject"):
		name = fo.findtext(DFXML + "filename", "").encode("utf-8", "surrogateescape")
		if name.startswith(prefix):
			ours[name[len(prefix):]] = fo.find(DFXML + "unalloc") is None
	theirs = {f["path"]: f["alloc"] for f in fw if f["path"] in ours and f["alloc"] is not None}
	chk.eq(label + ": export --format dfxml: alloc and unalloc as fiwalk's",
	       {p: ours[p] for p in theirs if ours[p] != theirs[p]}, {})


def check_ntfs(chk, db, ntfs, contents):
	"""$SI and $FN times as istat's; the stomped file found by SQL; streams; body as fls -m."""
	rows = rows_of(db, ntfs.encode())
	prefix = ntfs.encode() + b"/fs/"
	fl = check_fls(chk, "ntfs", rows, prefix, ntfs)
	check_content(chk, "ntfs", rows, prefix, ntfs, fl)
	stomped = prefix + contents.stomped
	x = [e for e in fl if e["path"] == contents.stomped][0]
	t = I.istat_times([ntfs], x["addr"])
	r = rows[stomped]
	cols = {"atime": "atime", "mtime": "mtime", "ctime": "ctime", "crtime": "btime"}
	chk.eq("ntfs: $STANDARD_INFORMATION times as istat's (ns)",
	       {k: r[c + "_ns"] for k, c in cols.items()}, t["si"])
	chk.eq("ntfs: $FILE_NAME times as istat's (ns)",
	       {k: r["fn_" + c + "_ns"] for k, c in cols.items()}, {k: t["fn"][k] for k in cols})
	con = sqlite3.connect(db)
	con.text_factory = bytes
	hits = [p for (p,) in con.execute("SELECT path FROM file WHERE btime_ns < fn_btime_ns"
					   " AND mtime_ns < fn_mtime_ns")]
	con.close()
	chk.eq("ntfs: the timestomped file is the one with $SI earlier than $FN", hits, [stomped])
	# The attributes: $STANDARD_INFORMATION's flags, as istat names them, on every entry
	# TSK gives metadata (a stream's row has its file's); the patched ones exactly.
	chk.eq("ntfs: the flags set in the image are the attributes of its row",
	       r["attributes"], contents.stomped_flags)
	istat, bad = {}, []
	for x in fl:
		row = rows.get(prefix + x["path"])
		if row is None or x["realloc"] or row["state"] == b"virtual":
			continue
		if x["inode"] not in istat:
			istat[x["inode"]] = I.istat_si_flags([ntfs], x["inode"])
		want = istat[x["inode"]]
		got = None if row["attributes"] is None else \
			{n for bit, n in I.SI_FLAG_NAMES.items() if row["attributes"] & bit}
		if got != want:
			bad.append((x["path"], row["attributes"], want))
	chk.eq("ntfs: every entry's attributes are its $STANDARD_INFORMATION flags (istat)",
	       bad[:3], [])
	chk.ok("ntfs: attributes compared on files, streams and the deleted one",
	       len(istat) > 10, repr(istat))
	for name, data in contents.streams.items():
		s = rows.get(prefix + name)
		chk.ok("ntfs: stream %s is a row of its own with its content" % name.decode(),
		       s is not None and s["stream"] == name.split(b":")[1] and
		       s["sha256"] == hashlib.sha256(data).digest() and s["type"] == b"f", repr(s))
	# export --format body against fls -m: the same lines (name, inode, mode, owner, size,
	# times), $FILE_NAME lines included.
	res = run_fidx("export", "--format", "body", "--db", db, "--scan",
		       str(scan_of(db, ntfs)["id"]))
	# fls -m gives a $FILE_NAME line the size of that attribute: its size is not compared.
	ours = set()
	for line in res.out.split(b"\n"):
		f = line.split(b"|")
		if len(f) == 11 and f[1].startswith(prefix):
			fn = b" ($FILE_NAME)" in f[1]
			ours.add((b"/" + f[1][len(prefix):], f[2], b"" if fn else f[6]) + tuple(f[7:11]))
	theirs = set()
	for b in I.fls_body([ntfs]):
		theirs.add((b["name"], str(b["inode"]).encode(),
			    b"" if b["file_name"] else str(b["size"]).encode()) +
			   tuple(str(b[k] or 0).encode() for k in ("atime", "mtime", "ctime", "crtime")))
	chk.eq("ntfs: export --format body has every line of fls -m (name, inode, size, times)",
	       sorted(theirs - ours)[:3], [])


def check_gpt(chk, d, db, gpt, ext4, fat):
	"""A partitioned disk: pN paths, the options, the split set, the E01, diff."""
	rows = rows_of(db, gpt.encode())
	parts = I.mmls_parts(gpt)
	for i, part in enumerate(parts, 1):
		prefix = gpt.encode() + b"/p%d/" % i
		fl = check_fls(chk, "gpt p%d" % i, rows, prefix, gpt, part["start"])
		check_content(chk, "gpt p%d" % i, rows, prefix, gpt, fl, part["start"])
	opts = json.loads(scan_of(db, gpt)["options"])["image"]
	chk.eq("gpt: the scan's options name the table and each partition (mmls)",
	       (opts["table"].lower().startswith("gpt"), [(p["name"], p["start"], p["length"])
							  for p in opts["partitions"]]),
	       (True, [("p%d" % i, p["start"], p["length"]) for i, p in enumerate(parts, 1)]))
	me = rows[gpt.encode()]
	chk.eq("gpt: the image's row holds the SHA-256 of its bytes", me["sha256"].hex(),
	       sha256_of(gpt))
	# The split set and the E01 of the same disk.
	pieces = I.split_raw(gpt, d)
	e01 = I.e01(gpt, d)
	res = run_fidx("scan", "-q", "--image", "--hash", "md5,sha256", "-o", db, pieces[0], e01)
	chk.eq("split and E01: scanned, no error", (res.rc, res.err), (0, b""))
	srow = rows_of(db, pieces[0].encode())[pieces[0].encode()]
	chk.eq("split: the image's digest covers every piece", srow["sha256"].hex(),
	       sha256_of(*pieces))
	erow = rows_of(db, e01.encode())[e01.encode()]
	v = I.ewf_verify(e01)
	eopts = json.loads(scan_of(db, e01)["options"])["image"]
	chk.ok("e01: ewfverify verifies it", v["ok"], repr(v))
	chk.eq("e01: the row's MD5 is the media's, as stored in the E01 and recorded in the options",
	       (erow["md5"].hex(), eopts.get("stored_md5"), erow["error"]),
	       (v["stored_md5"].lower(), v["stored_md5"].lower(), None))
	chk.eq("e01: the media's SHA-256 is the raw disk's", erow["sha256"].hex(), sha256_of(gpt))
	for name, root in (("split", pieces[0]), ("e01", e01)):
		res = run_fidx("diff", "--db", db, str(scan_of(db, gpt)["id"]),
			       str(scan_of(db, root)["id"]))
		changed = [l for l in res.out.split(b"\n") if l]
		chk.ok("diff raw disk -> %s: only the image's own row differs" % name,
		       res.rc in (0, 4) and len(changed) <= 1 and
		       all(l.endswith(b" " + root.encode()) for l in changed), repr(res.out[:300]))


def check_device(chk, d, db, ext4):
	"""A block device (a read-only loop device on the ext4 image): the image's rows below it."""
	p = subprocess.run(["losetup", "-r", "-f", "--show", ext4], capture_output=True)
	dev = p.stdout.strip().decode()
	if not chk.ok("block device: a read-only loop device on the ext4 image (losetup, root)",
		      p.returncode == 0 and dev, repr(p.stderr)):
		return
	try:
		res = run_fidx("scan", "-q", "--image", "-o", db, dev)
		rows = rows_of(db, dev.encode())
		img = rows_of(db, ext4.encode())
		rel = lambda rs, root: {k[len(root):]: (v["type"], v["ino"], v["size"], v["sha256"])
					for k, v in rs.items() if k != root}
		chk.eq("block device: the rows of its file system are the image file's",
		       (res.rc, rel(rows, dev.encode())), (0, rel(img, ext4.encode())))
		me = rows.get(dev.encode(), {})
		chk.eq("block device: its row is a block device of the image's size and digest",
		       (me.get("type"), me.get("size"), (me.get("sha256") or b"").hex()),
		       (b"b", os.path.getsize(ext4), sha256_of(ext4)))
		res = run_fidx("scan", "-q", "-o", os.path.join(d, "dev.db"), dev)
		chk.ok("block device without --image: a one-line hint",
		       len([l for l in res.err_lines() if b"is a block device" in l]) == 1,
		       repr(res.err))
	finally:
		subprocess.run(["losetup", "-d", dev])


def deep_tree(top, names):
	"""Makes folders names[0]/names[1]/... below top (through descriptors: no PATH_MAX),
	a file 'end' in the last; returns the paths made, relative."""
	fd, made, path = os.open(top, os.O_RDONLY), [], b""
	for n in names:
		os.mkdir(n, dir_fd=fd)
		sub = os.open(n, os.O_RDONLY, dir_fd=fd)
		os.close(fd)
		fd, path = sub, path + (b"/" if path else b"") + n
		made.append(path)
	os.close(os.open(b"end", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
	os.close(fd)
	return made + [path + b"/end"]


def check_deep(chk, d, db):
	"""Folders 140 levels deep, and a folder path of 4,095 bytes (on which The Sleuth Kit's
	own walk aborts the process): every entry recorded, no crash."""
	for label, names in (("140 levels", [b"d"] * 140),
			     ("a 4,095-byte folder path", [bytes([97 + i]) * 250 for i in range(16)] +
			      [b"q" * 79])):
		tree = os.path.join(d, "deep-tree")
		shutil.rmtree(tree, ignore_errors=True)
		os.mkdir(tree)
		made = deep_tree(tree.encode(), names)
		img = os.path.join(d, "deep.img")
		if os.path.exists(img):
			os.unlink(img)
		subprocess.run(["mke2fs", "-q", "-t", "ext4", "-d", tree, img, "16M"], check=True,
			       capture_output=True)
		res = run_fidx("scan", "-q", "--image", "-o", db, img)
		rows = rows_of(db, img.encode())
		prefix = img.encode() + b"/fs/"
		missing = [p for p in made if prefix + p not in rows]
		chk.ok("deep folders (%s): no crash, every entry recorded" % label,
		       res.rc in (0, 1) and not missing, repr((res.rc, res.err[-200:], missing[-1:])))


def check_broken(chk, d, db, gpt):
	"""A truncated image, a destroyed table, something that is no image."""
	cut = I.truncated(gpt, d)
	res = run_fidx("scan", "-q", "--image", "-o", db, cut)
	rows = rows_of(db, cut.encode())
	p2 = rows.get(cut.encode() + b"/p2", {})
	chk.ok("truncated: exit 1, the first partition whole",
	       res.rc == 1 and sum(p.startswith(cut.encode() + b"/p1/") for p in rows) ==
	       sum(p.startswith(gpt.encode() + b"/p1/") for p in rows_of(db, gpt.encode())),
	       repr((res.rc, res.err[:200], len(rows))))
	chk.ok("truncated: the second partition's row says it ends past the image",
	       b"past the end of the image" in (p2.get("error") or b""), repr(p2.get("error")))
	bad = I.corrupt_table(gpt, d)
	res = run_fidx("scan", "-q", "--image", "-o", db, bad)
	rows = rows_of(db, bad.encode())
	me = rows.get(bad.encode(), {})
	chk.ok("destroyed table: exit 1, the image's row says why, its digest still made",
	       res.rc == 1 and b"neither a partition table" in (me.get("error") or b"") and
	       me.get("sha256") and len(rows) == 1, repr((res.rc, res.err, me.get("error"))))
	junk = os.path.join(d, "junk.bin")
	with open(junk, "wb") as f:
		f.write(b"\0" * 4096)
	res = run_fidx("scan", "-q", "--image", "-o", db, junk)
	chk.ok("not an image: one row, with why, exit 1",
	       res.rc == 1 and len(rows_of(db, junk.encode())) == 1, repr((res.rc, res.err)))
	res = run_fidx("scan", "-q", "--image", "-o", db, os.path.join(d, "absent.img"))
	lib.check_fatal(chk, "a missing image", res, b"absent.img")


def check_queries(chk, d, db, ext4, contents):
	"""find, dupes, match, check, and the hint."""
	root = ext4.encode()
	scan = str(scan_of(db, ext4)["id"])
	res = run_fidx("find", "--db", db, "--scan", scan, "big.bin")
	chk.eq("find: a name inside an image", res.out, root + b"/fs/a/b/c/big.bin\n")
	# dupes: the image's files of equal content, by their recorded SHA-256.
	links = {b for a, b in contents.hardlinks}
	by = {}
	for p, data in contents.items():
		if p not in links and data:
			by.setdefault(hashlib.sha256(data).digest(), []).append(root + b"/fs/" + p)
	want = sorted(sorted(v) for v in by.values() if len(v) > 1)
	res = run_fidx("dupes", "--db", db, "--scan", scan, "--json")
	got = sorted(sorted(os.fsencode(f["path"]) for f in json.loads(l)["files"])
		     for l in res.out.split(b"\n") if l)
	chk.eq("dupes: groups of equal content inside the image (a hard link is its file)",
	       [[p for p in g if not any(p.endswith(b"/" + l) for l in links)] for g in got], want)
	data = contents[b"a/b/c/big.bin"]
	lst = os.path.join(d, "bad.md5")
	with open(lst, "w") as f:
		f.write("%s  evil\n" % hashlib.md5(data).hexdigest())
	res = run_fidx("match", "--db", db, "--scan", scan, lst)
	chk.ok("match: a known-bad MD5 finds the file in the image",
	       root + b"/fs/a/b/c/big.bin" in res.out,
	       repr(res.out[:200]))
	res = run_fidx("check", "--db", db, ext4)
	chk.eq("check: the image against its scan is identical", (res.rc, res.out), (0, b""))
	res = run_fidx("scan", "-q", "-o", os.path.join(d, "plain.db"), ext4)
	hint = [l for l in res.err_lines() if b"--image" in l]
	chk.ok("without --image: recorded as one file, with a one-line hint",
	       res.rc == 0 and len(hint) == 1, repr(res.err))


def main():
	chk = Checker()
	with lib.TempDir() as t:
		d = t.path
		ext4, ec = I.ext4(d)
		fat, fc = I.fat(d)
		ntfs, nc = I.ntfs(d)
		gpt, _ = I.gpt(d, [ext4, fat])
		before = {p: sha256_of(p) for p in (ext4, fat, ntfs, gpt)}
		db = os.path.join(d, "img.db")
		res = run_fidx("scan", "-q", "--image", "--hash", "md5,sha1,sha256", "-o", db,
			       ext4, fat, ntfs, gpt)
		# NTFS's $BadClus:$Bad cannot be read by TSK: its one error.
		chk.ok("scan of four images: one run, one scan each, sealed",
		       res.rc in (0, 1) and res.out.count(b"seal sha256:") == 4, repr(res))
		for label, img in (("ext4", ext4), ("fat", fat)):
			rows = rows_of(db, img.encode())
			prefix = img.encode() + b"/fs/"
			fl = check_fls(chk, label, rows, prefix, img)
			check_content(chk, label, rows, prefix, img, fl)
			check_fiwalk(chk, label, rows, prefix, img, db)
			deleted = {x["path"] for x in fl if x["deleted"]}
			chk.ok("%s: the deleted files are rows, marked deleted" % label,
			       deleted and all(rows[prefix + p]["state"] in (b"deleted", b"reallocated")
					       for p in deleted), repr(deleted))
		check_ntfs(chk, db, ntfs, nc)
		check_gpt(chk, d, db, gpt, ext4, fat)
		res = run_fidx("verify", "--db", db)
		chk.eq("every image scan's seal verifies", res.rc, 0)
		check_seal_by_hand(chk, db, ntfs)
		check_queries(chk, d, db, ext4, ec)
		check_device(chk, d, db, ext4)
		check_broken(chk, d, db, gpt)
		check_deep(chk, d, db)
		chk.eq("every image is byte-identical after all", {p: sha256_of(p) for p in before},
		       before)
	chk.done()


if __name__ == "__main__":
	main()
