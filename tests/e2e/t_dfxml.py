#!/usr/bin/python3
"""t_dfxml.py - `fidx export --format dfxml` is valid DFXML, element by element.

The schema.  DFXML's XML Schema is dfxml.xsd of the DFXML working group
(github.com/dfxml-working-group/dfxml_schema): version 1.2.0 (commit 1987d67,
"Declare v1.2.0"), the one fidx's output declares, and the 2.0.0 draft
(2.0.0-beta.0, commit 99ff668).  Below, MODELS writes down by hand, for each
version, the declaration of every element fidx writes: its content model (the
xs:sequence or xs:all of its children, with minOccurs/maxOccurs and the
xs:any wildcards, in the schema's order), its simple type, and its
attributes.  The two versions differ, for what fidx writes, only in the
xs:any namespace="##other" wildcards that 2.0 dropped from the head of
dfxml, fileobject_type and metadata.  The XSD files are not shipped and no
network is needed: a small validator here (greedy matching, exact for these
deterministic content models) checks fidx's output against MODELS.  With
DFXML_XSD set to paths of dfxml.xsd (':'-separated, each beside its ref/
folder) and xmllint installed, each document is also given to `xmllint
--schema`; without them that check is skipped.

The files.  Scans of trees built here give fileobjects with every
combination of elements fidx writes:

  all digests   as root, --hash md5,sha1,sha256,sha512,xxh128: a regular
                file, an empty one, a hard link, directories, symlinks (to a
                file, dangling, to a non-UTF-8 target), a FIFO, a socket, a
                character device when mknod is allowed, names that XML 1.0
                cannot carry (not UTF-8, a control byte, U+FFFE) or must
                escape (& < > " TAB LF CR), times before 1970 (-1 ns,
                -1.5 s, 1901-12-13) on a file, a directory and a symlink:
                four hashdigests (DFXML has no name for xxh128);
  none          the same tree with --hash none: no hashdigest;
  xxh128        --hash xxh128: digests, none DFXML can name;
  no-stat       --no-stat: filename, id, name_type, meta_type only;
  nobody        as nobody: a file it cannot read (error and metadata, no
                digests), a directory it cannot open (error), names in a
                directory it can list but not search (error, no metadata);
  follow        --follow: a loop of links (error, metadata, link_target), a
                link to an ancestor (error), a followed link to a file
                (digests and link_target);
  far times     on a tmpfs: times around year 0 (XML Schema 1.0 has no year
                0: ISO's 0000 is its -0001), before 1 BCE, after 9999;
  error+all     the all-digests database with an error put on every row:
                error together with every other element, digests too.

For each: the document validates against both models; every fileobject's
elements and values equal its database row (present exactly when the column
is not NULL, ISO 8601 times, names percent-decoded); source lists the root.
Then a coverage check: every element fidx writes was seen, each also in a
fileobject that carries an error.  Last, the models must refuse each of
MUTANTS, a valid document broken one way (an element out of order, twice,
unknown, of the wrong type; an attribute not allowed...), as xmllint does.
"""

import os
import re
import shutil
import socket
import sqlite3
import subprocess
import time
import urllib.parse
import xml.etree.ElementTree as ET

import lib
from lib import Checker, run_fidx, write

NS = "http://www.forensicswiki.org/wiki/Category:Digital_Forensics_XML"
DC = "http://purl.org/dc/elements/1.1/"
XML_NS = "http://www.w3.org/XML/1998/namespace"
FIDX_NS = "https://fidx.invalid/dfxml"
ALL = "md5,sha1,sha256,sha512,xxh128"
DFXML_DIGESTS = ["md5", "sha1", "sha256", "sha512"]
TYPES = {"f": ("r", 1), "d": ("d", 2), "p": ("p", 3), "c": ("c", 4), "b": ("b", 5),
	 "l": ("l", 6), "s": ("s", 8)}


# ----------------------------------------------------------- simple types ----

def is_integer(t):
	"""xs:integer's lexical space (whitespace collapsed)."""
	return re.fullmatch(r"[+-]?[0-9]+", t.strip()) is not None


def is_non_negative(t):
	"""xs:nonNegativeInteger's lexical space."""
	t = t.strip()
	return re.fullmatch(r"\+?[0-9]+|-0+", t) is not None


DATETIME = re.compile(r"(-?)([0-9]{4,})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
		      r"(\.[0-9]+)?(Z|[+-](?:(?:0[0-9]|1[0-3]):[0-5][0-9]|14:00))?")


def is_datetime(t):
	"""xs:dateTime of XML Schema 1.0: no year 0000, a leading zero only in 4 digits."""
	m = DATETIME.fullmatch(t.strip())
	if not m:
		return False
	year_s, month, day, hour, minute, sec = (m.group(2), int(m.group(3)), int(m.group(4)),
						 int(m.group(5)), int(m.group(6)), int(m.group(7)))
	year = int(year_s)
	if year == 0 or (len(year_s) > 4 and year_s[0] == "0"):
		return False
	if m.group(1):
		year = 1 - year  # -0001 is 1 BCE; only leap years matter here
	leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
	days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
	if not 1 <= month <= 12 or not 1 <= day <= days[month - 1]:
		return False
	if hour == 24:
		return minute == 0 and sec == 0 and not (m.group(8) or ".0").strip(".0")
	return hour < 24 and minute < 60 and sec < 60


def enum(*values):
	"""A check for an xs:enumeration restriction of xs:string."""
	return lambda t: t in values


def any_text(t):
	"""xs:string (and dc:SimpleLiteral's text)."""
	return True


# name_type's enumeration and hashDigestType's, in both versions.
NAME_TYPES = enum("-", "p", "c", "d", "b", "r", "l", "s", "h", "w", "V", "v")
HASH_TYPES = enum("SHA1", "SHA224", "SHA256", "SHA384", "SHA512", "MD5", "MD6", "OTHER",
		  "sha1", "sha224", "sha256", "sha384", "sha512", "md5", "md6", "other")


# --------------------------------------------------------------- the model ----

class Decl:
	"""
	An element declaration: kind is "seq" (content: particles), "all"
	(content: names), "text" (content: a check of the text), "empty" or
	"any" (xs:anyType); attrs maps each unqualified attribute allowed to a
	check of its value; other: attributes of other namespaces are allowed
	(xs:anyAttribute namespace="##other"); required: attributes that must be
	there.
	"""

	def __init__(self, kind, content=None, attrs=None, other=True, required=()):
		self.kind = kind
		self.content = content
		self.attrs = attrs or {}
		self.other = other
		self.required = required


def seq(text):
	"""
	Particles of an xs:sequence written as "name? name* name+ name ##other*":
	a DFXML element (or "##other"/"##any" for an xs:any wildcard), then its
	minOccurs/maxOccurs: '?' 0..1, '*' 0..unbounded, '+' 1..unbounded, none 1..1.
	"""
	out = []
	for tok in text.split():
		name, suffix = (tok[:-1], tok[-1]) if tok[-1] in "?*+" else (tok, "")
		lo, hi = {"?": (0, 1), "*": (0, None), "+": (1, None), "": (1, 1)}[suffix]
		out.append((name, lo, hi))
	return out


def string_decl(check=any_text, attrs=None):
	"""An element of type dfxml:string (or another simpleContent type): text, ##other attributes."""
	return Decl("text", check, attrs)


def time_decl():
	"""An element of type dfxml:dftime: an xs:dateTime with an optional prec attribute."""
	return Decl("text", is_datetime, {"prec": is_non_negative})


# fileobject_type's sequence, 1.2.0 (dfxml.xsd lines 285-324): 2.0.0-beta.0
# is the same without the first two "##other*".
FILEOBJECT_12 = ("##other* parent_object? filename* error? partition? id? name_type? filesize?"
		 " unalloc? alloc? alloc_inode? alloc_name? used? unused? orphan? compressed?"
		 " inode? meta_type? mode? nlink? uid? gid? mtime? ctime? atime? crtime? seq?"
		 " dtime? bkup_time? link_target? libmagic? ##other* byte_runs? hashdigest*"
		 " ##other*")
FILEOBJECT_20 = ("parent_object? filename* error? partition? id? name_type? filesize?"
		 " unalloc? alloc? alloc_inode? alloc_name? used? unused? orphan? compressed?"
		 " inode? meta_type? mode? nlink? uid? gid? mtime? ctime? atime? crtime? seq?"
		 " dtime? bkup_time? link_target? libmagic? byte_runs? hashdigest* ##other*")
# The dfxml root's sequence.
DFXML_12 = ("##other* metadata creator? source? ##other* diskimageobject*"
	    " partitionsystemobject* partitionobject* volume* fileobject* rusage? ##other*")
DFXML_20 = ("##other* metadata creator? source? diskimageobject* partitionsystemobject*"
	    " partitionobject* volume* fileobject* rusage? ##other*")
# metadata: xs:any ##any (lax), then in 1.2.0 xs:any of Dublin Core (strict) and ##any again.
METADATA_12 = "##any* ##dc* ##any*"
METADATA_20 = "##any*"


def model(dfxml_seq, fileobject_seq, metadata_seq):
	"""The declarations of the elements fidx writes, for one version of the schema."""
	return {
		"dfxml": Decl("seq", seq(dfxml_seq),
			      {"version": any_text, "catalogDesignDate":
			       lambda t: re.fullmatch(r"-?[0-9]{4,}-[0-9]{2}-[0-9]{2}", t) is not None},
			      required=("version",)),
		"metadata": Decl("seq", seq(metadata_seq), other=False),
		"creator": Decl("seq", seq("program? version? build_environment?"
					   " execution_environment? library*"), {"version": any_text}),
		"program": string_decl(),
		"version": Decl("any"),
		"execution_environment": Decl("all", {"os_sysname", "os_release", "os_version",
						      "host", "arch", "command_line", "uid",
						      "username", "start_time"}),
		"command_line": string_decl(),
		"start_time": Decl("text", is_datetime),
		"library": Decl("empty", None, {"name": any_text, "version": any_text}),
		"source": Decl("seq", seq("image_filename*")),
		"image_filename": string_decl(),
		"fileobject": Decl("seq", seq(fileobject_seq)),
		"filename": string_decl(),
		"error": string_decl(),
		"id": string_decl(),
		"name_type": Decl("text", NAME_TYPES, other=False),
		"filesize": Decl("text", is_integer),
		"inode": Decl("text", is_non_negative),
		"meta_type": Decl("text", is_non_negative),
		"mode": Decl("text", is_non_negative),
		"nlink": Decl("text", is_non_negative),
		"uid": string_decl(),
		"gid": string_decl(),
		"mtime": time_decl(),
		"ctime": time_decl(),
		"atime": time_decl(),
		"crtime": time_decl(),
		"link_target": string_decl(),
		"hashdigest": Decl("text", any_text, {"type": HASH_TYPES, "base": is_non_negative}),
	}


MODELS = {"1.2.0": model(DFXML_12, FILEOBJECT_12, METADATA_12),
	  "2.0.0-beta.0": model(DFXML_20, FILEOBJECT_20, METADATA_20)}
# Elements of other namespaces that lax wildcards validate when declared:
# dc:type, of type dc:SimpleLiteral (text, an xml:lang attribute; ref/dc.xsd).
FOREIGN = {"{%s}type" % DC: Decl("text", any_text, {"{%s}lang" % XML_NS: any_text}, other=False)}


# ------------------------------------------------------------ the validator ----

def split_tag(tag):
	"""(namespace, local name) of an ElementTree tag."""
	if tag.startswith("{"):
		ns, _, local = tag[1:].partition("}")
		return ns, local
	return "", tag


def fits(particle, tag):
	"""Whether an element named tag fits a particle's name or wildcard."""
	ns, local = split_tag(tag)
	if particle == "##any":
		return True
	if particle == "##other":
		return ns not in ("", NS)
	if particle == "##dc":
		return ns == DC
	return ns == NS and local == particle


def validate(decls, e, where, problems):
	"""Appends to problems every way e (declared by decls) breaks its declaration."""
	ns, local = split_tag(e.tag)
	decl = decls.get(local) if ns == NS else FOREIGN.get(e.tag)
	if decl is None:
		problems.append("%s: element %s is not declared" % (where, e.tag))
		return
	for a, v in e.attrib.items():
		ans, _ = split_tag(a)
		if a in decl.attrs:
			if not decl.attrs[a](v):
				problems.append("%s: attribute %s=%r is not of its type" % (where, a, v))
		elif not (decl.other and ans not in ("", NS)):
			problems.append("%s: attribute %s is not allowed" % (where, a))
	for a in decl.required:
		if a not in e.attrib:
			problems.append("%s: attribute %s is required" % (where, a))
	kids = list(e)
	text = e.text or ""
	if decl.kind in ("seq", "all", "empty"):
		if text.strip() or any((k.tail or "").strip() for k in kids):
			problems.append("%s: text where only elements may be" % where)
	if decl.kind == "text":
		if kids:
			problems.append("%s: child elements in simple content" % where)
		elif not decl.content(text):
			problems.append("%s: %r is not of the element's type" % (where, text))
	elif decl.kind == "empty" and kids:
		problems.append("%s: child elements in an empty element" % where)
	elif decl.kind == "all":
		names = [split_tag(k.tag) for k in kids]
		bad = [k.tag for k in kids if split_tag(k.tag)[0] != NS or
		       split_tag(k.tag)[1] not in decl.content]
		dup = {n for n in names if names.count(n) > 1}
		if bad or dup:
			problems.append("%s: xs:all allows each of %s once, got %s" %
					(where, sorted(decl.content), [k.tag for k in kids]))
	elif decl.kind == "seq":
		i = 0
		for particle, lo, hi in decl.content:
			n = 0
			while i < len(kids) and (hi is None or n < hi) and fits(particle, kids[i].tag):
				i += 1
				n += 1
			if n < lo:
				problems.append("%s: %s expected before %s" % (
					where, particle, kids[i].tag if i < len(kids) else "the end"))
				return
		if i < len(kids):
			before = split_tag(kids[i - 1].tag)[1] if i else "the start"
			problems.append("%s: %s not allowed after %s (the sequence is %s)" % (
				where, split_tag(kids[i].tag)[1], before,
				" ".join(p for p, _, _ in decl.content)))
			return
	if decl.kind in ("seq", "all"):
		for n, k in enumerate(kids):
			kns, klocal = split_tag(k.tag)
			if kns == NS or k.tag in FOREIGN:
				validate(decls, k, "%s/%s[%d]" % (where, klocal, n + 1), problems)
			# any other element came through a lax wildcard: not checked further


def schema_problems(version, top):
	"""Every problem of the document top against MODELS[version] (at most a few hundred)."""
	problems = []
	if top.tag != "{%s}dfxml" % NS:
		return ["the root is %s, not dfxml in the DFXML namespace" % top.tag]
	validate(MODELS[version], top, "/dfxml", problems)
	return problems


# ------------------------------------------------------------------- trees ----

def build(top):
	"""The tree of the header; returns its root."""
	root = top + b"/tree"
	os.makedirs(root + b"/sub/deeper")
	write(root + b"/plain.txt", b"plain")
	write(root + b"/empty", b"")
	write(root + b"/sub/deeper/deep", bytes(range(256)) * 40)
	write(root + b"/inv\xff\xfe", b"not UTF-8")
	write(root + b"/ctl\x01byte", b"a control byte")
	write(root + b"/amp&<lt>\"q\"\ttab", b"escaped")
	write(root + b"/nl\ncr\rname", b"character references")
	write(root + b"/nonchar\xef\xbf\xbe", b"U+FFFE")
	write(root + b"/old", b"before 1970")
	os.link(root + b"/plain.txt", root + b"/hard")
	os.symlink(b"plain.txt", root + b"/link")
	os.symlink(b"/nonexistent", root + b"/dangling")
	os.symlink(b"t\xffgt", root + b"/badtarget")
	os.mkfifo(root + b"/fifo")
	s = socket.socket(socket.AF_UNIX)
	try:
		s.bind(os.fsdecode(root + b"/sock"))
	finally:
		s.close()
	try:
		os.mknod(root + b"/chr", 0o600 | 0o020000, os.makedev(1, 3))
	except OSError:
		pass  # not allowed here: the tree has no device
	os.utime(root + b"/old", ns=(-1_500_000_000, -2_147_483_648_000_000_000))
	os.utime(root + b"/sub/deeper", ns=(-86_400_000_000_001, -1))
	os.utime(root + b"/link", ns=(-1, -1_500_000_000), follow_symlinks=False)
	lib.settle(root)
	return root


def build_nobody(top):
	"""What nobody meets: a file and a directory it cannot read, a list-only directory."""
	root = top + b"/locked"
	os.makedirs(root + b"/closed/inner")
	os.makedirs(root + b"/listonly")
	write(root + b"/open", b"readable")
	write(root + b"/secret", b"not for nobody")
	write(root + b"/listonly/e", b"listed, not stat'ed")
	os.symlink(b"open", root + b"/lnk")
	os.chmod(root + b"/secret", 0)
	os.chmod(root + b"/closed", 0)
	os.chmod(root + b"/listonly", 0o444)
	lib.settle(root)
	return root


# Times ext4 cannot hold (a tmpfs can): around year 0, after 9999, 2^40 s either side.
FAR_TIMES = {b"y0": -62167219200 * 10**9, b"y-1": -62167219201 * 10**9 + 1,
	     b"bce90": -65000000000 * 10**9, b"y10000": 253402300800 * 10**9 + 42,
	     b"p2e40": (1 << 40) * 10**9 + 999999999, b"m2e40": -(1 << 40) * 10**9}


def build_far(td, top):
	"""A tmpfs tree of files dated FAR_TIMES (mtime; atime the next one); None without tmpfs."""
	mnt = top + b"/far"
	os.mkdir(mnt)
	try:
		td.mount_tmpfs(os.fsdecode(mnt), "1m")
	except (subprocess.CalledProcessError, OSError):
		return None
	root = mnt + b"/tree"
	os.mkdir(root)
	names = list(FAR_TIMES)
	for i, n in enumerate(names):
		write(root + b"/" + n, n)
		os.utime(root + b"/" + n, ns=(FAR_TIMES[names[(i + 1) % len(names)]], FAR_TIMES[n]))
	return root


def build_follow(top):
	"""Links --follow meets: a loop, a link to an ancestor, a link to a file."""
	root = top + b"/follow"
	os.makedirs(root + b"/d")
	write(root + b"/d/f", b"followed")
	os.symlink(b"l2", root + b"/l1")
	os.symlink(b"l1", root + b"/l2")
	os.symlink(b"..", root + b"/d/up")
	os.symlink(b"d/f", root + b"/tofile")
	lib.settle(root)
	return root


# -------------------------------------------------------------- the checks ----

def db_rows(db):
	"""{path: row} of every file row in db: lib.db_rows' columns, its id, error as bytes."""
	rows, _ = lib.db_rows(db, 1)
	con = lib.connect(db)
	try:
		for path, fid, err in con.execute("SELECT path, id, error FROM file WHERE scan_id = 1"):
			rows[path]["id"] = fid
			rows[path]["error"] = err
	finally:
		con.close()
	return rows


def iso(ns):
	"""ns since the epoch as xs:dateTime (UTC, nanoseconds), computed without fidx.

	Years 1 to 9999 from time.gmtime; others from coreutils' date, whose
	years are ISO's (0000 is 1 BCE), written as XML Schema 1.0 has them:
	more digits without '+' after 9999, and no year 0: 1 BCE is -0001."""
	s, f = divmod(ns, 10**9)
	if -62135596800 <= s < 253402300800:
		return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + ".%09dZ" % f
	out = subprocess.run(["date", "-u", "-d", "@%d" % s, "+%Y %m-%dT%H:%M:%S"],
			     capture_output=True, check=True).stdout.decode().split()
	year = int(out[0])
	return ("%04d" % year if year > 0 else "-%04d" % (1 - year)) + "-" + out[1] + ".%09dZ" % f


def carried(e):
	"""The bytes an element carries: percent-decoded when it says so."""
	if e.get("{%s}encoding" % FIDX_NS) == "percent":
		return urllib.parse.unquote_to_bytes(e.text)
	return (e.text or "").encode("utf-8")


def want_elements(r):
	"""The (name, text or bytes) pairs a fileobject of row r must hold, in any order."""
	want = [("filename", r["path"]), ("id", str(r["id"]))]
	if r["error"] is not None:
		want.append(("error", r["error"]))
	nt, mt = TYPES.get(r["type"], ("-", None))
	want.append(("name_type", nt))
	if mt is not None:
		want.append(("meta_type", str(mt)))
	for tag, col in (("filesize", "size"), ("inode", "ino"), ("mode", "mode"),
			 ("nlink", "nlink"), ("uid", "uid"), ("gid", "gid")):
		if r[col] is not None:
			want.append((tag, str(r[col])))
	for tag, col in (("mtime", "mtime_ns"), ("ctime", "ctime_ns"), ("atime", "atime_ns"),
			 ("crtime", "btime_ns")):
		if r[col] is not None:
			want.append((tag, iso(r[col])))
	if r["link_target"] is not None:
		want.append(("link_target", r["link_target"]))
	for d in DFXML_DIGESTS:
		if r[d] is not None:
			want.append(("hashdigest", (d, r[d].hex())))
	return sorted(want, key=repr)


def got_elements(fo):
	"""The (name, text or bytes) pairs a fileobject holds."""
	got = []
	for c in fo:
		name = split_tag(c.tag)[1]
		if name in ("filename", "error", "link_target"):
			got.append((name, carried(c)))
		elif name == "hashdigest":
			got.append((name, (c.get("type"), c.text)))
		else:
			got.append((name, c.text))
	return sorted(got, key=repr)


def xmllint_paths():
	"""The dfxml.xsd files of $DFXML_XSD that exist, when xmllint is installed."""
	if not shutil.which("xmllint"):
		return []
	return [p for p in os.environ.get("DFXML_XSD", "").split(":") if p and os.path.isfile(p)]


def check_document(chk, label, top, db, root, seen):
	"""Exports db as DFXML and checks it against both models and the database."""
	res = run_fidx("export", db, "--format", "dfxml")
	chk.ok("%s: export exit 0, nothing on stderr" % label, res.rc == 0 and not res.err,
	       repr(res))
	chk.ok("%s: the XML declaration first" % label,
	       res.out.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n'), lib.short(res.out))
	try:
		doc = ET.fromstring(res.out)
	except ET.ParseError as e:
		chk.ok("%s: well-formed XML" % label, False, e)
		return
	chk.ok("%s: declares DFXML 1.2.0" % label, doc.get("version") == "1.2.0",
	       doc.attrib)
	for version in MODELS:
		problems = schema_problems(version, doc)
		chk.ok("%s: valid against the DFXML %s model (order, types, attributes)" %
		       (label, version), not problems,
		       "%d problems: %s" % (len(problems), "; ".join(problems[:4])))
	xsds = xmllint_paths()
	if not xsds:
		chk.skip("%s: xmllint --schema dfxml.xsd" % label,
			 "set DFXML_XSD to dfxml.xsd paths (and install xmllint) to run it")
	for xsd in xsds:
		out = top + b"/lint.xml"
		with open(out, "wb") as f:
			f.write(res.out)
		p = subprocess.run(["xmllint", "--noout", "--schema", xsd, out], capture_output=True)
		chk.ok("%s: xmllint --schema %s: validates" % (label, xsd),
		       p.returncode == 0 and p.stderr.strip().endswith(b"validates"),
		       p.stderr[-600:])

	srcs = [carried(e) for e in doc.iterfind("{%s}source/{%s}image_filename" % (NS, NS))]
	chk.eq("%s: source lists the root" % label, srcs, [root])
	rows = db_rows(db)
	fos = doc.findall("{%s}fileobject" % NS)
	bad, matched = [], set()
	for fo in fos:
		fn = fo.find("{%s}filename" % NS)
		path = carried(fn) if fn is not None else None
		r = rows.get(path)
		if r is None:
			bad.append((path, "no such row"))
			continue
		r["path"] = path
		matched.add(path)
		got, want = got_elements(fo), want_elements(r)
		if got != want:
			bad.append((path, [x for x in got if x not in want], [x for x in want if x not in got]))
		names = {split_tag(c.tag)[1] for c in fo}
		seen["all"] |= names
		if "error" in names:
			seen["with error"] |= names
	chk.ok("%s: a fileobject per row, each once" % label,
	       len(fos) == len(rows) == len(matched), "%d fileobjects, %d rows, %d matched" %
	       (len(fos), len(rows), len(matched)))
	chk.ok("%s: every fileobject holds exactly its row's elements and values" % label,
	       not bad, "%d differ (extra, missing), e.g. %s" % (len(bad), lib.short(bad[:3])))
	return res.out


def q(local):
	"""The tag of a DFXML element."""
	return "{%s}%s" % (NS, local)


def first_full(doc):
	"""The first fileobject holding an error, an mtime and a hashdigest."""
	return next(fo for fo in doc.iter(q("fileobject"))
		    if all(fo.find(q(t)) is not None for t in ("error", "mtime", "hashdigest")))


def move_to_end(doc, tag):
	"""Moves a fileobject's first tag element to the end of the fileobject."""
	fo = first_full(doc)
	e = fo.find(q(tag))
	fo.remove(e)
	fo.append(e)


def add_after_digests(doc, tag, text):
	"""Appends a new tag element after a fileobject's hashdigests."""
	ET.SubElement(first_full(doc), q(tag)).text = text


def swap_first_two(doc):
	"""Swaps filename and the element after it."""
	fo = first_full(doc)
	a = fo[0]
	fo.remove(a)
	fo.insert(1, a)


def twice(doc, tag):
	"""Repeats a fileobject's tag element."""
	fo = first_full(doc)
	e = fo.find(q(tag))
	fo.insert(list(fo).index(e), ET.fromstring(ET.tostring(e)))


def set_text(doc, tag, text):
	"""Replaces the text of a fileobject's tag element."""
	first_full(doc).find(q(tag)).text = text


def source_last(doc):
	"""Moves source after the fileobjects."""
	e = doc.find(q("source"))
	doc.remove(e)
	doc.append(e)


# Ways to break a valid document, each of which both models (and the XSDs) must refuse.
MUTANTS = [
	("error after the times and digests (where fidx wrote it before)",
	 lambda d: move_to_end(d, "error")),
	("link_target after hashdigest", lambda d: add_after_digests(d, "link_target", "t")),
	("filename after id", swap_first_two),
	("mtime twice", lambda d: twice(d, "mtime")),
	("name_type outside its enumeration", lambda d: set_text(d, "name_type", "x")),
	("a negative inode", lambda d: set_text(d, "inode", "-1")),
	("a size that is not an integer", lambda d: set_text(d, "filesize", "1.5")),
	("February 30th", lambda d: set_text(d, "mtime", "2020-02-30T00:00:00Z")),
	("year 0000", lambda d: set_text(d, "atime", "0000-01-01T00:00:00Z")),
	("a time without seconds", lambda d: set_text(d, "ctime", "2020-01-01T00:00Z")),
	("an unqualified attribute the schema lacks",
	 lambda d: first_full(d).find(q("filename")).set("encoding", "percent")),
	("an attribute on name_type", lambda d: first_full(d).find(q("name_type")).set(
		"{%s}encoding" % FIDX_NS, "percent")),
	("an element the schema lacks", lambda d: first_full(d).insert(1, ET.Element(q("bogus")))),
	("a hashdigest type outside hashDigestType",
	 lambda d: first_full(d).find(q("hashdigest")).set("type", "xxh128")),
	("no metadata", lambda d: d.remove(d.find(q("metadata")))),
	("text in library", lambda d: set_library_text(d)),
	("source after the fileobjects", source_last),
	("no version attribute", lambda d: d.attrib.pop("version")),
]


def set_library_text(doc):
	"""Gives the creator's library element text, which its empty content forbids."""
	doc.find(q("creator")).find(q("library")).text = "text"


def check_model_rejects(chk, top, doc_bytes):
	"""Each mutant of the valid document breaks both models (and the XSDs given)."""
	for what, mutate in MUTANTS:
		doc = ET.fromstring(doc_bytes)
		mutate(doc)
		refused = [v for v in MODELS if schema_problems(v, doc)]
		chk.eq("the models refuse %s" % what, refused, list(MODELS))
		for xsd in xmllint_paths():
			out = top + b"/mutant.xml"
			with open(out, "wb") as f:
				f.write(ET.tostring(doc))
			p = subprocess.run(["xmllint", "--noout", "--schema", xsd, out],
					   capture_output=True)
			chk.ok("xmllint --schema %s refuses %s" % (xsd, what), p.returncode == 3,
			       p.stderr[-300:])


def scan(chk, label, db, root, *args, uid=None, rc=0):
	"""Scans root into db with args; returns whether it exited rc."""
	res = run_fidx("scan", "-q", "-o", db, *args, root, uid=uid)
	return chk.ok("%s: scan exit %d" % (label, rc), res.rc == rc and not res.timed_out,
		      repr(res))


def main():
	chk = Checker()
	seen = {"all": set(), "with error": set()}
	with lib.TempDir() as td:
		top = os.fsencode(td.path)
		os.chmod(top, 0o755)
		root = build(top)
		cases = [("all digests", "--hash", ALL), ("none", "--hash", "none"),
			 ("xxh128", "--hash", "xxh128"), ("no-stat", "--no-stat")]
		for label, *args in cases:
			with chk.guard(label):
				db = top + b"/%s.db" % label.replace(" ", "-").encode()
				if scan(chk, label, db, root, *args):
					if label == "all digests":
						got, dups = lib.db_rows(db, 1)
						lib.compare(chk, label, got, dups, lib.truth(root))
					check_document(chk, label, top, db, root, seen)

		with chk.guard("error+all"):
			db = top + b"/error-all.db"
			shutil.copy(top + b"/all-digests.db", db)
			con = sqlite3.connect(db)
			con.execute("UPDATE file SET error = 'synthetic: ' || name")
			con.commit()
			con.close()
			doc = check_document(chk, "error+all", top, db, root, seen)
			if doc:
				check_model_rejects(chk, top, doc)

		with chk.guard("nobody"):
			if os.geteuid() != 0:
				chk.skip("nobody", "not root")
			else:
				nroot = build_nobody(top)
				dbdir = top + b"/nobody"
				os.mkdir(dbdir)
				os.chown(dbdir, lib.NOBODY, lib.NOBODY)
				db = dbdir + b"/n.db"
				if scan(chk, "nobody", db, nroot, "--hash", ALL, uid=lib.NOBODY, rc=1):
					check_document(chk, "nobody", top, db, nroot, seen)

		with chk.guard("far times"):
			far = build_far(td, top)
			if far is None:
				chk.skip("far times", "cannot mount a tmpfs")
			else:
				db = top + b"/far.db"
				if scan(chk, "far times", db, far, "--hash", "md5"):
					check_document(chk, "far times", top, db, far, seen)

		with chk.guard("follow"):
			froot = build_follow(top)
			db = top + b"/follow.db"
			if scan(chk, "follow", db, froot, "--follow", "--hash", ALL, rc=1):
				check_document(chk, "follow", top, db, froot, seen)

		writes = {"filename", "error", "id", "name_type", "filesize", "inode", "meta_type",
			  "mode", "nlink", "uid", "gid", "mtime", "ctime", "atime", "crtime",
			  "link_target", "hashdigest"}
		chk.eq("coverage: every element fidx writes seen in a fileobject",
		       sorted(writes - seen["all"]), [])
		chk.eq("coverage: each also seen beside an error", sorted(writes - seen["with error"]),
		       [])
	chk.done()


if __name__ == "__main__":
	main()
