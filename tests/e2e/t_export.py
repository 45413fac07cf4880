#!/usr/bin/python3
"""t_export.py - `fidx export`: every format read back by the tool it is for.

A hostile tree (names with newlines, CR, tabs, backslashes, quotes, commas,
'|' and '%', leading dashes and formula characters, invalid UTF-8, a UTF-8
surrogate, U+FFFE, a control byte; hard links, symlinks to a file, to a
directory and dangling, a FIFO, an empty file, times before 1970 and after
2100) is scanned with all five digests and its rows checked against
lib.truth() (so "matches the DB" below also means "matches lstat").  Then:

  sha256sum, md5sum  `sha256sum -c` / `md5sum -c` pass on every regular file
  sha1sum, sha512sum (and sha1sum -c, sha512sum -c on theirs),
                     the lines are exactly those files (escapes decoded here),
                     and after one file changes the check fails on exactly its
                     names (the test can fail).  A scan without the digest is
                     refused; a file without it (a read error) is left out
                     with a warning and exit 1.
  hashdeep           on a second tree (hashdeep blocks on FIFOs, cannot carry
                     newlines), scanned with --follow as hashdeep walks:
                     `hashdeep -a -k FILE -r DIR` says "Audit passed", and
                     "Audit failed" once a file changes; on the hostile tree
                     the names it cannot carry are left out with a warning.
  body               every field decoded here (%XX) equals the DB; `mactime -b
                     FILE -d -y` gives exactly the expected timeline: a line per
                     distinct time of each entry with its macb letters, size,
                     mode, ids, inode and name (mactime drops names with a
                     newline, and times before 1970: both listed).
  dfxml              xml.etree parses it; root, namespace, version, creator,
                     source; every fileobject's elements equal the DB, names
                     percent-encoded exactly when XML 1.0 cannot carry them.
  csv                Python's csv module (strict) parses it: header, CRLF, every
                     cell equals the DB; --excel-safe: the guard quote exactly
                     on text cells starting with = + - @ TAB CR, every text
                     cell quoted.
  jsonl              every line a JSON object whose members equal the DB
                     (paths through path_base64 when not UTF-8).

Also: rows in (scan_id, path) byte order; several roots in one export; -o
(written whole, the database refused, a failed export leaves the earlier
FILE and no temporary file, an interrupted one too); usage errors; and the
peak RSS of each format on 200,000 extra rows against a small database
(streaming: constant memory).
"""

import base64
import csv
import io
import json
import os
import re
import shutil
import signal
import sqlite3
import stat
import subprocess
import time
import urllib.parse
import xml.etree.ElementTree as ET

import lib
from lib import Checker, check_fatal, compare, connect, run_fidx, truth, write

ALL = "md5,sha1,sha256,sha512,xxh128"
DIGEST_LEN = {"md5": 16, "sha1": 20, "sha256": 32, "sha512": 64, "xxh128": 16}
DFXML_NS = "{http://www.forensicswiki.org/wiki/Category:Digital_Forensics_XML}"
FIDX_NS = "{https://fidx.invalid/dfxml}"
FORMATS = ["csv", "jsonl", "sha256sum", "md5sum", "sha1sum", "sha512sum", "hashdeep", "body",
	   "dfxml"]

HOSTILE = [b"plain.txt", b"sp ace", b"-dash", b"new\nline", b"back\\slash", b"cr\rmid",
	   b"endcr\r", b"inv\xff\xfe", b"sur\xed\xa0\x80", b"nonchar\xef\xbf\xbe",
	   b"quo\"te,comma", b"pipe|name", b"pct%41", b"=formula", b"+plus", b"@at",
	   b"amp&<lt>", b"ctl\x01x", b"tab\tname", b"\tlead-tab", b"\rlead-cr",
	   b"\xc3\xbcn\xc3\xaf\xe2\x82\xac\xf0\x9f\x98\x80", b"back\\\nboth",
	   b"=cmd|' -C calc'!A0", b"'=quoted", b"'plain-quote"]

CSV_HEADER = ["id", "scan_id", "path", "name", "ext", "type", "size", "blocks", "mode", "uid",
	      "gid", "nlink", "dev", "ino", "atime_ns", "mtime_ns", "ctime_ns", "btime_ns",
	      "atime", "mtime", "ctime", "btime", "link_target", "md5", "sha1", "sha256",
	      "sha512", "xxh128", "error"]
DB_COLUMNS = ["id", "scan_id", "path", "name", "ext", "type", "size", "blocks", "mode", "uid",
	      "gid", "nlink", "dev", "ino", "atime_ns", "mtime_ns", "ctime_ns", "btime_ns",
	      "link_target", "md5", "sha1", "sha256", "sha512", "xxh128", "error"]
TEXT_COLUMNS = ["path", "name", "ext", "type", "link_target", "error"]
TSK_LETTER = {"f": "r", "d": "d", "l": "l", "p": "p", "s": "s", "c": "c", "b": "b"}
DFXML_TYPE = {"f": ("r", 1), "d": ("d", 2), "p": ("p", 3), "c": ("c", 4), "b": ("b", 5),
	      "l": ("l", 6), "s": ("s", 8)}


# ------------------------------------------------------------------ trees ----

def build_hostile(top):
	"""The hostile tree: every name of HOSTILE, links, a FIFO, odd times."""
	root = top + b"/hostile"
	os.makedirs(root + b"/sub/dir\nwith newline")
	for i, n in enumerate(HOSTILE):
		write(root + b"/" + n, b"content %d of " % i + n)
	write(root + b"/empty", b"")
	write(root + b"/sub/deep.bin", bytes(range(256)) * 300)
	write(root + b"/sub/dir\nwith newline/inner", b"inner")
	write(root + b"/old", b"before 1970")
	os.utime(root + b"/old", ns=(1_000_000_000_000, -86_400_123_456_789))
	write(root + b"/future", b"after 2100")
	os.utime(root + b"/future", ns=(4_200_000_000_123_456_789, 4_200_000_000_987_654_321))
	os.chmod(root + b"/sp ace", 0o4755)
	os.link(root + b"/plain.txt", root + b"/hard")
	os.symlink(b"plain.txt", root + b"/link")
	os.symlink(b"/nonexistent|x%41", root + b"/dangling")
	os.symlink(b"sub", root + b"/dirlink")
	os.symlink(b"target\nnl", root + b"/lnk\nnl")
	os.mkfifo(root + b"/fifo")
	lib.settle(root)
	return root


def build_hashdeep_tree(top):
	"""What hashdeep can audit: no FIFO, no newline or final CR in names."""
	root = top + b"/hd"
	os.makedirs(root + b"/sub/deeper")
	for i, n in enumerate([b"a,b,c", b"sp ace", b"-dash", b"back\\slash", b"cr\rmid",
			       b"inv\xff\xfe", b"quo\"te", b"\xc3\xbc.txt", b"pct%41"]):
		write(root + b"/" + n, b"hd %d " % i + n)
	write(root + b"/empty", b"")
	write(root + b"/sub/deeper/f", b"deep" * 5000)
	os.link(root + b"/a,b,c", root + b"/hard")
	os.symlink(b"sp ace", root + b"/link")
	os.symlink(b"sub", root + b"/dirlink")
	lib.settle(root)
	return root


# -------------------------------------------------------------- the DB ----

def db_all(db, scans=None):
	"""Every row of the given scans (default: all), all columns, in export order."""
	con = connect(db)
	try:
		where = "" if scans is None else " WHERE scan_id IN (%s)" % ",".join(map(str, scans))
		rows = []
		for r in con.execute("SELECT %s FROM file%s ORDER BY scan_id, path" %
				     (", ".join(DB_COLUMNS), where)):
			d = dict(zip(DB_COLUMNS, r))
			for k in ("type", "error"):
				if d[k] is not None:
					d[k] = d[k].decode()
			rows.append(d)
		return rows
	finally:
		con.close()


def iso(ns):
	"""ns since the epoch as fidx's ISO 8601 text (nanoseconds, Z)."""
	s, f = divmod(ns, 10**9)
	return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + ".%09dZ" % f


def seconds(ns):
	"""Whole seconds, rounded down; None reads 0 (TSK's 'unknown')."""
	return 0 if ns is None else ns // 10**9


def fsdec(b):
	"""bytes to str the way the CSV check decodes them."""
	return b.decode("utf-8", "surrogateescape")


def show_diff(bad):
	"""A few differing items for a message."""
	return "%d differ, e.g. %s" % (len(bad), lib.short(bad[:3]))


# ------------------------------------------------------------ checksums ----

def unescape_sum_line(line):
	"""(hex, path bytes) of one coreutils checksum line, escapes decoded."""
	esc = line.startswith(b"\\")
	if esc:
		line = line[1:]
	hexd, sep, name = line.partition(b"  ")
	if not sep:
		return None
	if esc:
		name = re.sub(rb"\\(.)", lambda m: {b"n": b"\n", b"r": b"\r", b"\\": b"\\"}[m.group(1)],
			      name)
	return hexd.decode(), name


def check_sums(chk, top, db, rows, root):
	"""sha256sum and md5sum: the tools' -c passes, the lines are the files."""
	for fmt, tool, d in (("sha256sum", "sha256sum", "sha256"), ("md5sum", "md5sum", "md5"),
			     ("sha1sum", "sha1sum", "sha1"), ("sha512sum", "sha512sum", "sha512")):
		res = run_fidx("export", db, "--format", fmt)
		chk.ok("%s: exit 0, nothing on stderr" % fmt, res.rc == 0 and not res.err, repr(res))
		want = {r["path"]: r[d].hex() for r in rows if r["type"] == "f"}
		got, bad = {}, []
		for line in res.out.split(b"\n")[:-1]:
			p = unescape_sum_line(line)
			if p is None:
				bad.append(line)
			else:
				got[p[1]] = p[0]
		chk.ok("%s: every line well formed, newline-terminated" % fmt,
		       not bad and res.out.endswith(b"\n"), show_diff(bad))
		chk.eq("%s: exactly the regular files, with their digests" % fmt, got, want)
		escaped = [l for l in res.out.split(b"\n") if l.startswith(b"\\")]
		chk.eq("%s: the lines escaped are those of names with \\ LF or CR" % fmt,
		       len(escaped), sum(1 for p in want if re.search(rb"[\\\n\r]", p)))
		sums = top + b"/" + fmt.encode()
		write(sums, res.out)
		p = subprocess.run([tool, "-c", sums], capture_output=True)
		oks = [l for l in p.stdout.split(b"\n") if l.endswith(b": OK")]
		chk.ok("%s -c: every file OK" % tool, p.returncode == 0 and len(oks) == len(want),
		       "rc=%d, %d OK of %d: %s %s" % (p.returncode, len(oks), len(want),
						     lib.short(p.stdout[-300:]), lib.short(p.stderr)))

	# One file changes: the check must fail on exactly its names.
	plain = root + b"/plain.txt"
	with open(plain, "ab") as f:
		f.write(b"changed")
	p = subprocess.run(["sha256sum", "-c", top + b"/sha256sum"], capture_output=True)
	failed = sorted(l.rsplit(b":", 1)[0] for l in p.stdout.split(b"\n") if l.endswith(b"FAILED"))
	chk.ok("sha256sum -c: fails after a change, on exactly the file and its hard link",
	       p.returncode == 1 and failed == sorted([plain, root + b"/hard"]),
	       "rc=%d failed=%s" % (p.returncode, lib.short(failed)))


def check_sums_refusals(chk, top, root):
	"""A scan without the digest is refused; a file without it is left out."""
	db = top + b"/md5only.db"
	run_fidx("scan", "-q", "--hash", "md5", "-o", db, root)
	res = run_fidx("export", db, "--format", "sha256sum")
	check_fatal(chk, "sha256sum of an md5-only scan", res, b"sha256")
	chk.eq("sha256sum of an md5-only scan: nothing on stdout", res.out, b"")
	res = run_fidx("export", db, "--format", "hashdeep")
	chk.ok("hashdeep of an md5-only scan: md5 only", res.rc == 1 and
	       res.out.split(b"\n")[1] == b"%%%% size,md5,filename", repr(res))
	res = run_fidx("export", db, "--format", "dfxml")
	chk.ok("dfxml of an md5-only scan: md5 digests only", res.rc == 0 and
	       b'type="md5"' in res.out and b'type="sha' not in res.out, repr(res))

	# A file that could not be read has no digest: left out, counted, exit 1.
	con = sqlite3.connect(db)
	con.execute("UPDATE file SET md5 = NULL, error = 'open: Permission denied'"
		    " WHERE CAST(path AS BLOB) = ?", (root + b"/sp ace",))
	con.commit()
	con.close()
	res = run_fidx("export", db, "--format", "md5sum")
	lines = res.err_lines()
	chk.ok("md5sum with an unread file: exit 1, one warning counting 1 file",
	       res.rc == 1 and len(lines) == 1 and lines[0].startswith(b"fidx: warning: 1 "),
	       repr(res))
	chk.ok("md5sum with an unread file: the others listed, not it",
	       b"/sp ace\n" not in res.out and b"/plain.txt\n" in res.out, lib.short(res.out))


# ------------------------------------------------------------- hashdeep ----

def check_hashdeep(chk, top, hostile_db):
	"""hashdeep -a audits the export as a pass, and fails after a change."""
	root = build_hashdeep_tree(top)
	db = top + b"/hd.db"
	res = run_fidx("scan", "-q", "--follow", "--hash", "md5,sha1,sha256", "-o", db, root)
	chk.eq("hashdeep tree: scanned", res.rc, 0)
	known = top + b"/known.hd"
	res = run_fidx("export", db, "--format", "hashdeep", "-o", known)
	chk.ok("hashdeep: exit 0, nothing on stderr", res.rc == 0 and not res.err, repr(res))
	text = lib.read_bytes(known) or b""
	head = text.split(b"\n")[:5]
	chk.ok("hashdeep: the header hashdeep writes",
	       head[:2] == [b"%%%% HASHDEEP-1.0", b"%%%% size,md5,sha1,sha256,filename"] and
	       head[2].startswith(b"## Invoked from: ") and
	       re.match(rb"## [#$] fidx export .*--format hashdeep", head[3]) is not None and
	       head[4] == b"## ", lib.short(head))
	rows = [r for r in db_all(db) if r["type"] == "f"]
	want = sorted(b"%d,%s,%s,%s,%s" % (r["size"], r["md5"].hex().encode(),
					 r["sha1"].hex().encode(), r["sha256"].hex().encode(),
					 r["path"]) for r in rows)
	chk.eq("hashdeep: a line per regular file (followed links too)",
	       sorted(text.split(b"\n")[5:-1]), want)
	p = subprocess.run(["hashdeep", "-a", "-k", known, "-r", root], capture_output=True)
	chk.ok("hashdeep -a -k FILE -r DIR: Audit passed",
	       p.returncode == 0 and b"Audit passed" in p.stdout,
	       "rc=%d %s %s" % (p.returncode, lib.short(p.stdout), lib.short(p.stderr)))
	with open(root + b"/sub/deeper/f", "ab") as f:
		f.write(b"x")
	p = subprocess.run(["hashdeep", "-a", "-k", known, "-r", root], capture_output=True)
	chk.ok("hashdeep -a: Audit failed after a file changed",
	       p.returncode != 0 and b"Audit failed" in p.stdout,
	       "rc=%d %s" % (p.returncode, lib.short(p.stdout)))

	res = run_fidx("export", hostile_db, "--format", "hashdeep")
	hd_names = [n for n in HOSTILE if b"\n" in n or n.endswith(b"\r")]
	lines = res.err_lines()
	chk.ok("hashdeep of the hostile tree: exit 1, a warning counting the names it cannot"
	       " carry", res.rc == 1 and len(lines) == 1 and
	       lines[0].startswith(b"fidx: warning: %d " % (len(hd_names) + 1)), repr(res))
	chk.ok("hashdeep of the hostile tree: no line breaks a name",
	       all(l.count(b",") >= 4 for l in res.out.split(b"\n")[5:-1]), lib.short(res.out))
	return root, db


# ----------------------------------------------------------------- body ----

def body_name(r):
	"""The body file's name field of a row, decoded."""
	n = r["path"]
	if r["type"] == "l" and r["link_target"] is not None:
		n += b" -> " + r["link_target"]
	return n


def tsk_mode(r):
	"""fls's mode field: type letter, '/', ls -l letters with TSK's type letter."""
	t = TSK_LETTER.get(r["type"], "-")
	if r["mode"] is None:
		return t + "/----------"
	return t + "/" + t + stat.filemode(r["mode"])[1:]


def check_body(chk, top, db, rows):
	"""Fields decoded here equal the DB; mactime's timeline is the expected one."""
	res = run_fidx("export", db, "--format", "body")
	chk.ok("body: exit 0, nothing on stderr", res.rc == 0 and not res.err, repr(res))
	want = set()
	for r in rows:
		want.add((r["md5"].hex().encode() if r["md5"] else b"0", body_name(r),
			  b"%d" % (r["ino"] or 0), tsk_mode(r).encode(), b"%d" % (r["uid"] or 0),
			  b"%d" % (r["gid"] or 0), b"%d" % (r["size"] or 0)) +
			 tuple(b"%d" % seconds(r[k]) for k in ("atime_ns", "mtime_ns", "ctime_ns",
							      "btime_ns")))
	got, bad = set(), []
	lines = res.out.split(b"\n")
	for line in lines[:-1]:
		f = line.split(b"|")
		if len(f) != 11:
			bad.append(line)
			continue
		got.add(tuple(re.sub(rb"%([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), x)
			      for x in f))
	chk.ok("body: one line of 11 fields per entry", not bad and len(lines) - 1 == len(rows),
	       "%d lines for %d rows; %s" % (len(lines) - 1, len(rows), show_diff(bad)))
	chk.eq("body: every field, %XX decoded, equals the DB", got, want)
	chk.ok("body: '|', '%' and control bytes are %XX",
	       b"pipe%7Cname" in res.out and b"pct%2541" in res.out and b"new%0Aline" in res.out
	       and b"ctl%01x" in res.out, lib.short(res.out))

	bodyf = top + b"/x.body"
	write(bodyf, res.out)
	p = subprocess.run(["mactime", "-b", bodyf, "-d", "-y"], capture_output=True,
			   env=dict(os.environ, TZ="UTC"))
	out = p.stdout.split(b"\n")
	chk.ok("mactime -b: runs, its header first", p.returncode == 0 and
	       out[0] == b"Date,Size,Type,Mode,UID,GID,Meta,File Name",
	       "rc=%d %s %s" % (p.returncode, lib.short(p.stdout[:200]), lib.short(p.stderr)))
	want, dropped = set(), []
	for r in rows:
		name = body_name(r)
		times = {l: seconds(r[k]) for l, k in (("m", "mtime_ns"), ("a", "atime_ns"),
							 ("c", "ctime_ns"), ("b", "btime_ns"))}
		if b"\n" in name:
			dropped.append(name)
			continue
		for t in set(times.values()):
			if t < 0:
				dropped.append(name)
				continue
			macb = "".join(l if times[l] == t else "." for l in "macb")
			date = "0000-00-00T00:00:00Z" if t == 0 else \
				time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
			want.add(b",".join([date.encode(), b"%d" % (r["size"] or 0), macb.encode(),
					    tsk_mode(r).encode(), b"%d" % r["uid"], b"%d" % r["gid"],
					    b"%d" % r["ino"],
					    b'"' + name.replace(b'"', b'""') + b'"']))
	got = set(l for l in out[1:] if l)
	chk.ok("mactime -b: the timeline is a line per time of each entry, with its date,"
	       " size, macb, mode, ids, inode and name (quotes doubled, as mactime -d writes)",
	       got == want, "extra %s, missing %s" % (lib.short(sorted(got - want)[:3]),
						    lib.short(sorted(want - got)[:3])))
	chk.ok("mactime -b: leaves out names with a newline and times before 1970 (its limits)",
	       len(dropped) >= 4, lib.short(dropped))


# ---------------------------------------------------------------- dfxml ----

def xml_clean(b):
	"""Whether XML 1.0 can carry the bytes b as text (the percent rule's inverse)."""
	try:
		s = b.decode("utf-8")
	except UnicodeDecodeError:
		return False
	return all(c in "\t\n\r" or (0x20 <= ord(c) and c not in "\ufffe\uffff") for c in s)


def xml_bytes(e):
	"""The bytes an element carries: percent-decoded when it says so."""
	if e.get(FIDX_NS + "encoding") == "percent":
		return urllib.parse.unquote_to_bytes(e.text)
	return e.text.encode("utf-8")


def check_dfxml(chk, db, rows, roots):
	"""Parsed by xml.etree; every fileobject equals its row."""
	res = run_fidx("export", db, "--format", "dfxml")
	chk.ok("dfxml: exit 0, nothing on stderr", res.rc == 0 and not res.err, repr(res))
	chk.ok("dfxml: an XML declaration first",
	       res.out.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n'), lib.short(res.out))
	try:
		top = ET.fromstring(res.out)
	except ET.ParseError as e:
		chk.ok("dfxml: xml.etree parses it", False, e)
		return
	chk.ok("dfxml: xml.etree parses it", True)
	chk.ok("dfxml: the dfxml root, its namespace and version",
	       top.tag == DFXML_NS + "dfxml" and top.get("version") == "1.2.0", top.tag)
	creator = top.find(DFXML_NS + "creator")
	chk.ok("dfxml: creator names fidx, its version and the command line",
	       creator is not None and creator.findtext(DFXML_NS + "program") == "fidx" and
	       creator.findtext(DFXML_NS + "version") == lib.makefile_version() and
	       "--format dfxml" in (creator.findtext(".//" + DFXML_NS + "command_line") or ""),
	       ET.tostring(creator) if creator is not None else None)
	srcs = [xml_bytes(e) for e in top.findall(DFXML_NS + "source/" + DFXML_NS + "image_filename")]
	chk.eq("dfxml: source lists the scanned roots", srcs, roots)

	fos = top.findall(DFXML_NS + "fileobject")
	chk.eq("dfxml: a fileobject per entry", len(fos), len(rows))
	bad, enc_bad = [], []
	for fo, r in zip(fos, rows):
		def text(tag):
			e = fo.find(DFXML_NS + tag)
			return None if e is None else e.text
		fn = fo.find(DFXML_NS + "filename")
		if (fn.get(FIDX_NS + "encoding") == "percent") == xml_clean(r["path"]):
			enc_bad.append(r["path"])
		nt, mt = DFXML_TYPE.get(r["type"], ("-", None))
		want = {"filename": r["path"], "id": str(r["id"]), "name_type": nt,
			"meta_type": None if mt is None else str(mt)}
		got = {"filename": xml_bytes(fn), "id": text("id"), "name_type": text("name_type"),
		       "meta_type": text("meta_type")}
		for tag, col in (("filesize", "size"), ("inode", "ino"), ("mode", "mode"),
				 ("nlink", "nlink"), ("uid", "uid"), ("gid", "gid")):
			want[tag] = None if r[col] is None else str(r[col])
			got[tag] = text(tag)
		for tag, col in (("mtime", "mtime_ns"), ("ctime", "ctime_ns"), ("atime", "atime_ns"),
				 ("crtime", "btime_ns")):
			want[tag] = None if r[col] is None else iso(r[col])
			got[tag] = text(tag)
		lt = fo.find(DFXML_NS + "link_target")
		want["link_target"] = r["link_target"]
		got["link_target"] = None if lt is None else xml_bytes(lt)
		want["hashes"] = {d: r[d].hex() for d in ("md5", "sha1", "sha256", "sha512") if r[d]}
		got["hashes"] = {h.get("type"): h.text for h in fo.findall(DFXML_NS + "hashdigest")}
		want["error"] = r["error"]
		got["error"] = text("error")
		order = [c.tag[len(DFXML_NS):] for c in fo]
		got["order"] = order == sorted(order, key=DFXML_ORDER.index)
		want["order"] = True
		if got != want:
			bad.append((r["path"], {k: (got[k], want[k]) for k in want if got[k] != want[k]}))
	chk.ok("dfxml: every fileobject's elements, in schema order, equal the DB", not bad,
	       show_diff(bad))
	chk.ok("dfxml: percent-encoded (and marked) exactly the names XML cannot carry",
	       not enc_bad, show_diff(enc_bad))


# The order of fileobject_type's sequence in dfxml.xsd (t_dfxml.py checks it all).
DFXML_ORDER = ["filename", "error", "id", "name_type", "filesize", "inode", "meta_type", "mode",
	       "nlink", "uid", "gid", "mtime", "ctime", "atime", "crtime", "link_target",
	       "hashdigest"]


# ------------------------------------------------------------ csv, jsonl ----

def csv_cells(r, excel_safe):
	"""The CSV cells fidx must write for row r (as str, surrogateescape)."""
	out = []
	for c in CSV_HEADER:
		if c in ("atime", "mtime", "ctime", "btime"):
			v = r[c + "_ns"]
			out.append("" if v is None else iso(v))
			continue
		v = r[c]
		if v is None:
			out.append("")
		elif c in DIGEST_LEN:
			out.append(v.hex())
		elif c in TEXT_COLUMNS:
			s = fsdec(v) if isinstance(v, bytes) else v
			if excel_safe and s[:1] in ("=", "+", "-", "@", "\t", "\r", "'"):
				s = "'" + s
			out.append(s)
		else:
			out.append(str(v))
	return out


def check_csv(chk, db, rows):
	"""The csv module reads back every cell; guarded by default (and with --excel-safe), raw with
	--csv-raw; the guard undone (one leading quote dropped) gives the recorded bytes."""
	for args, excel in ((["--csv-raw"], False), ([], True), (["--excel-safe"], True)):
		label = " ".join(["csv"] + args)
		res = run_fidx("export", db, "--format", "csv", *args)
		chk.ok("%s: exit 0, nothing on stderr" % label, res.rc == 0 and not res.err, repr(res))
		chk.ok("%s: the header row, CRLF" % label,
		       res.out.startswith(",".join(CSV_HEADER).encode() + b"\r\n"), lib.short(res.out))
		chk.ok("%s: every record ends in CRLF" % label, res.out.endswith(b"\r\n") and
		       res.out.count(b"\r\n") >= len(rows) + 1, lib.short(res.out[-100:]))
		try:
			recs = list(csv.reader(io.StringIO(fsdec(res.out), newline=""), strict=True))
		except csv.Error as e:
			chk.ok("%s: csv.reader(strict=True) parses it" % label, False, e)
			continue
		chk.eq("%s: a record per entry after the header" % label, len(recs), len(rows) + 1)
		bad = [(r["path"], got) for r, got in zip(rows, recs[1:]) if got != csv_cells(r, excel)]
		chk.ok("%s: every cell equals the DB" % label, not bad, show_diff(bad))
		if excel:
			# Every text cell quoted: each path appears as ,"<path>", in the raw bytes.
			unq = [r["path"] for r in rows
			       if b',"' + r["path"].replace(b'"', b'""') + b'",' not in res.out]
			chk.ok("%s: every text cell quoted" % label, not unq, show_diff(unq))
			guarded = sum(1 for r in rows if r["name"][:1] and r["name"][:1] in b"=+-@\t\r'")
			chk.ok("%s: the names to guard are there (the check can fail)" % label,
			       guarded >= 9, guarded)
			# The guard undone: one leading quote dropped from each text cell that has one.
			col = CSV_HEADER.index("name")
			undone = [c[1:] if c.startswith("'") else c for c in (rec[col] for rec in recs[1:])]
			chk.eq("%s: one leading quote dropped, every name is its recorded bytes" % label,
			       undone, [fsdec(r["name"]) for r in rows])


def check_jsonl(chk, db, rows):
	"""Each line a JSON object; every member equals the DB."""
	res = run_fidx("export", db, "--json")
	chk.ok("jsonl (--json): exit 0, nothing on stderr", res.rc == 0 and not res.err, repr(res))
	lines = res.out.split(b"\n")
	chk.eq("jsonl: a line per entry", len(lines) - 1, len(rows))
	bad, invalid, known = [], [], []
	for line, r in zip(lines, rows):
		try:
			o = json.loads(line.decode("utf-8"))
		except UnicodeDecodeError:
			# fidx_json_string() (json.c) passes a UTF-8 surrogate or overlong
			# form as valid, raw: invalid JSON text.  Reported; tolerated here
			# only for that case, so the other members are still checked.
			o = json.loads(line.decode("utf-8", "surrogatepass"))
			known.append(r["path"])
		except ValueError as e:
			invalid.append((line, e))
			continue

		def path(key):
			if key + "_base64" in o:
				return base64.b64decode(o[key + "_base64"])
			v = o[key]
			return None if v is None else v.encode("utf-8", "surrogatepass")
		want = {c: r[c] for c in DB_COLUMNS}
		for d in DIGEST_LEN:
			want[d] = r[d].hex() if r[d] else None
		got = {c: o.get(c) for c in DB_COLUMNS}
		for c in ("path", "name", "ext", "link_target"):
			got[c] = path(c)
		for c in ("atime", "mtime", "ctime", "btime"):
			want[c] = None if r[c + "_ns"] is None else iso(r[c + "_ns"])
			got[c] = o.get(c)
		if got != want:
			bad.append((r["path"], {k: (got[k], want[k]) for k in want if got[k] != want[k]}))
	chk.ok("jsonl: every line a JSON object", not invalid, show_diff(invalid))
	chk.ok("jsonl: every member equals the DB", not bad, show_diff(bad))
	if known and all(re.search(rb"\xed[\xa0-\xbf]|\xe0[\x80-\x9f]|\xf0[\x80-\x8f]|\xf4[\x90-\xbf]",
				   p) for p in known):
		chk.skip("jsonl: valid UTF-8 throughout", "json.c writes UTF-8 surrogates raw "
			 "(fidx_utf8_seq_len accepts them): reported")
	else:
		chk.ok("jsonl: valid UTF-8 throughout", not known, show_diff(known))


# ---------------------------------------------------------------- misc ----

def check_order_and_roots(chk, top, root, hd_root):
	"""Rows in (scan_id, path) byte order; two roots in one export."""
	db = top + b"/two.db"
	res = run_fidx("scan", "-q", "--hash", "sha256", "-o", db, root, hd_root)
	chk.eq("two roots: scanned", res.rc, 0)
	res = run_fidx("export", db, "--format", "sha256sum")
	names = [unescape_sum_line(l)[1] for l in res.out.split(b"\n")[:-1]]
	con = connect(db)
	want = [r[0] for r in con.execute("SELECT path FROM file WHERE type = 'f'"
					   " ORDER BY scan_id, CAST(path AS BLOB)")]
	con.close()
	chk.eq("two roots: one export with both, in scan then byte order of path", names, want)
	chk.ok("two roots: both roots present", any(n.startswith(root + b"/") for n in names) and
	       any(n.startswith(hd_root + b"/") for n in names), lib.short(names[:3]))


def check_output_file(chk, top, db, md5_db):
	"""-o: whole file or none; the database refused; an earlier FILE kept on failure."""
	out = top + b"/out/x.csv"
	os.makedirs(top + b"/out")
	old = os.umask(0o022)
	try:
		res = run_fidx("export", db, "--format", "csv", "-o", out)
	finally:
		os.umask(old)
	ref = run_fidx("export", db, "--format", "csv")
	chk.ok("-o: exit 0, nothing on stdout", res.rc == 0 and res.out == b"", repr(res))
	chk.ok("-o: FILE holds the export, mode 0644 (0666 less the umask)",
	       lib.read_bytes(out) == ref.out and stat.S_IMODE(os.stat(out).st_mode) == 0o644,
	       oct(os.stat(out).st_mode))
	res = run_fidx("export", md5_db, "--format", "sha256sum", "-o", out)
	check_fatal(chk, "-o with a failing export", res)
	chk.eq("-o with a failing export: the earlier FILE kept", lib.read_bytes(out), ref.out)
	chk.eq("-o with a failing export: no temporary file left", sorted(os.listdir(top + b"/out")),
	       [b"x.csv"])
	before = lib.read_bytes(db)
	res = run_fidx("export", db, "--format", "csv", "-o", db)
	check_fatal(chk, "-o naming the database", res, b"database")
	chk.ok("-o naming the database: the database unchanged", lib.read_bytes(db) == before)
	res = run_fidx("export", db, "--format", "csv", "-o", "/dev/null")
	chk.ok("-o /dev/null: written in place", res.rc == 0 and
	       stat.S_ISCHR(os.stat("/dev/null").st_mode), repr(res))
	res = run_fidx("export", db, "--format", "csv", "-o", top + b"/no/such/dir/x")
	check_fatal(chk, "-o in a missing folder", res)


def check_usage(chk, top, db):
	"""Usage errors: one line, exit 2."""
	for name, args, mention in (
		("no --format", [db], b"--format"),
		("unknown format", [db, "--format", "xml"], b"xml"),
		("--excel-safe without csv", [db, "--format", "jsonl", "--excel-safe"], b"csv"),
		("--csv-raw without csv", [db, "--format", "body", "--csv-raw"], b"csv-raw"),
		("--csv-raw with --excel-safe", [db, "--format", "csv", "--csv-raw", "--excel-safe"],
		 b"together"),
		("--json with --format csv", [db, "--json", "--format", "csv"], b"--json"),
		("-0", [db, "--format", "csv", "-0"], b"-0"),
		("two databases", [db, db, "--format", "csv"], None),
		("a missing database", [top + b"/none.db", "--format", "csv"], b"none.db"),
		("no such scan", [db, "--scan", "99", "--format", "csv"], b"99"),
	):
		res = run_fidx("export", *args)
		check_fatal(chk, "export with %s" % name, res, mention)
		chk.eq("export with %s: nothing on stdout" % name, res.out, b"")
	res = run_fidx("export", "--help")
	helptext = res.out.decode()
	chk.ok("--help: exit 0, names every format and option", res.rc == 0 and
	       all(f in helptext for f in FORMATS) and
	       all(o in helptext for o in ("--format", "--output", "--excel-safe", "--db", "--scan",
					   "--json")), repr(res))


def grow(src, dst, n):
	"""A copy of src with n more rows below the root of its newest scan (for the RSS check)."""
	shutil.copy(src, dst)
	con = sqlite3.connect(dst)
	con.execute("""INSERT INTO file (scan_id, path, name, ext, type, size, blocks, mode, uid,
		gid, nlink, dev, ino, atime_ns, mtime_ns, ctime_ns, btime_ns, md5, sha1, sha256,
		sha512, xxh128)
		WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?)
		SELECT (SELECT max(id) FROM scan),
		(SELECT root FROM scan WHERE id = (SELECT max(id) FROM scan))
		|| '/gen/' || printf('%08d', i) || '/f&<|%.txt',
		'f.txt', 'txt', 'f', i, 8, 33188, 0, 0, 1, 2049, i, i * 1000000007, i * 1000000009,
		i * 1000000011, NULL, randomblob(16), randomblob(20), randomblob(32),
		randomblob(64), randomblob(16) FROM k""", (n,))
	con.commit()
	con.close()


def peak_rss_kib(args):
	"""Runs fidx with args, output to /dev/null; returns (exit status, peak RSS in KiB)."""
	with open(os.devnull, "wb") as null:
		p = subprocess.Popen([lib.FIDX] + args, stdout=null, stderr=subprocess.DEVNULL)
		_, status, ru = os.wait4(p.pid, 0)
	return os.waitstatus_to_exitcode(status), ru.ru_maxrss


def check_streaming(chk, top, db):
	"""Peak RSS with 200,000 more rows stays that of the small database."""
	if lib.is_asan():
		chk.skip("streaming: peak RSS", "a sanitizer build")
		return
	big = top + b"/big.db"
	grow(db, big, 200_000)
	for fmt in FORMATS:
		rc1, small = peak_rss_kib(["export", db, "--format", fmt])
		rc2, large = peak_rss_kib(["export", big, "--format", fmt])
		chk.ok("streaming %s: peak RSS with 200,000 more rows within 6 MiB of the small"
		       " database's" % fmt, rc1 in (0, 1) and rc2 in (0, 1) and large < small + 6144,
		       "rc %d/%d, %d KiB against %d KiB" % (rc1, rc2, large, small))

	# An interrupted -o export leaves neither FILE nor its temporary file.
	out = top + b"/int/x.xml"
	os.makedirs(top + b"/int")
	p = subprocess.Popen([lib.FIDX, "export", big, "--format", "dfxml", "-o", out],
			     stderr=subprocess.DEVNULL)
	deadline = time.monotonic() + 10
	while time.monotonic() < deadline and not os.listdir(top + b"/int") and p.poll() is None:
		time.sleep(0.001)
	time.sleep(0.05)
	p.send_signal(signal.SIGTERM)
	rc = p.wait()
	if rc == 0:
		chk.skip("-o interrupted: nothing left", "the export ended before the signal")
	else:
		chk.ok("-o interrupted: killed by SIGTERM, neither FILE nor a temporary file left",
		       rc == -signal.SIGTERM and os.listdir(top + b"/int") == [],
		       "rc=%d left %s" % (rc, os.listdir(top + b"/int")))


def main():
	chk = Checker()
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		root = build_hostile(top)
		db = top + b"/hostile.db"
		res = run_fidx("scan", "-q", "--hash", ALL, "-o", db, root)
		chk.eq("hostile tree: scanned", res.rc, 0)
		want = truth(root)
		got, dups = lib.db_rows(db, 1)
		compare(chk, "hostile tree", got, dups, want)
		rows = db_all(db)

		with chk.guard("csv"):
			check_csv(chk, db, rows)
		with chk.guard("jsonl"):
			check_jsonl(chk, db, rows)
		with chk.guard("dfxml"):
			check_dfxml(chk, db, rows, [root])
		with chk.guard("body"):
			check_body(chk, top, db, rows)
		with chk.guard("hashdeep"):
			hd_root, _ = check_hashdeep(chk, top, db)
		with chk.guard("sha256sum, md5sum"):
			check_sums(chk, top, db, rows, root)
		with chk.guard("refusals"):
			check_sums_refusals(chk, top, root)
		with chk.guard("order and roots"):
			check_order_and_roots(chk, top, root, hd_root)
		with chk.guard("-o"):
			check_output_file(chk, top, db, top + b"/md5only.db")
		with chk.guard("usage"):
			check_usage(chk, top, db)
		with chk.guard("streaming"):
			check_streaming(chk, top, db)
	chk.done()


if __name__ == "__main__":
	main()
