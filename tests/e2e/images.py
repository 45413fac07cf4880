"""images.py - disk images built at test time, and their ground truth read with The Sleuth Kit.

Design.  The image tests (t_image.py) need file systems whose contents are known, built
without mounting anything (no loop device, no FUSE, no root needed), and a truth about
them that does not come from fidx.  So every image here is made by the file system's own
user-space tools writing into a plain file, and every truth is read back with TSK's own
command-line tools:

  builders     ext4()   mke2fs -d TREE, then debugfs rm (deleted entries)
               fat()    mkfs.fat, then mtools (mcopy -s, mdel: deleted entries)
               ntfs()   mkntfs, then ntfscp (files, one alternate data stream); the
                        timestomp and the deletion are patches of the MFT in the image
                        bytes, done here (ntfsprogs cannot delete without mounting)
               gpt()    sfdisk, then the file system images copied to their partitions
               split_raw(), e01(), truncated(), corrupt_table(): other shapes of a
                        finished image
  readers      fls_entries() (fls -r -p -l), fls_body() (fls -r -m /), icat_digests(),
               istat_times(), fiwalk_files() (DFXML), mmls_parts(), ewf_verify()

Each builder takes a folder to work in and returns the image path; the file system builders
also return a Contents (a dict path -> bytes of the live regular files, with the deleted
ones, directories, links... as attributes).  Paths are bytes, relative, "/"-separated, as
"fls -p" prints them.  The builders fix what can be fixed for reproducibility: two ext4
or FAT builds are byte-identical (fixed UUID, hash seed, serial, tool clocks and tree
times), while NTFS keeps build-time times and a random serial number (mkntfs and ntfscp
take no clock), apart from the timestomped times.

Every tool runs with TZ=UTC (fls and istat print times in the local zone otherwise) and
LC_ALL=C.UTF-8.  A missing tool raises ToolMissing naming it and its Debian package; a tool
that fails raises ToolFailed with its command line, exit status and stderr.  The whole set
builds in a fraction of a second; `python3 images.py` builds everything in a temporary
folder, prints what the readers return and checks the key facts.
"""

import calendar
import hashlib
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

# The Debian package of each tool used, for the message of ToolMissing.
PACKAGES = {
	"mke2fs": "e2fsprogs", "debugfs": "e2fsprogs",
	"mkfs.fat": "dosfstools", "mcopy": "mtools", "mdel": "mtools",
	"mkntfs": "ntfs-3g", "ntfscp": "ntfs-3g",
	"sfdisk": "fdisk",
	"ewfacquire": "ewf-tools", "ewfverify": "ewf-tools",
	"fls": "sleuthkit", "fiwalk": "sleuthkit", "icat": "sleuthkit", "istat": "sleuthkit",
	"mmls": "sleuthkit",
}

# Fixed values, so that two builds give the same metadata where the tools allow it.
EXT4_UUID = "0b7d1e0e-1c2d-4e3f-8a9b-0c1d2e3f4a5b"
EXT4_HASH_SEED = "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9"
GPT_DISK_GUID = "f1d0f1d0-0000-4000-8000-000000000000"
GPT_LINUX = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"        # Linux filesystem
GPT_BASIC_DATA = "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7"   # Microsoft basic data
T0 = 1600000000          # 2020-09-13 12:26:40 UTC: the first time given to a tree entry
FAKE_TIME = 1500000000   # 2017-07-14 02:40:00 UTC: mke2fs's clock (crtime of ext4 inodes)
SECTOR = 512
FILETIME_EPOCH = 116444736000000000  # 1601-01-01 to 1970-01-01 in 100 ns units

# The timestomped NTFS file's $STANDARD_INFORMATION times (ns since the epoch, multiples of
# 100 ns as FILETIMEs are), all before any build time.
STOMP_SI = {"crtime": 981173106123456700, "mtime": 981173107234567800,
	"ctime": 981173108345678900, "atime": 981173109456789000}
# ... and its $STANDARD_INFORMATION flags: read-only, hidden, system, archive.
STOMP_FLAGS = 0x1 | 0x2 | 0x4 | 0x20


class ToolMissing(RuntimeError):
	"""A command-line tool this module needs is not installed."""


class ToolFailed(RuntimeError):
	"""A tool exited non-zero; .argv, .returncode, .stderr tell how."""

	def __init__(self, argv, returncode, stderr):
		self.argv = argv
		self.returncode = returncode
		self.stderr = stderr
		msg = stderr.decode("utf-8", "replace").strip().replace("\n", " | ") or "(no message)"
		RuntimeError.__init__(self, "%s exited %d: %s" % (" ".join(argv), returncode, msg[:500]))


class Contents(dict):
	"""path (bytes) -> contents (bytes) of every live regular file a builder put in.

	Attributes: tree (the source folder, left in place: it holds exactly the live regular
	files, folders and links, so a test can compare a scan of it with one of the image), deleted
	(path as fls shows it -> bytes), dirs (list of paths), symlinks (path -> target bytes),
	fifos (list), hardlinks (list of path pairs), streams ("path:name" -> bytes), mtimes
	(path -> epoch seconds given), stomped (path of the timestomped file, NTFS), stomped_si
	(its $STANDARD_INFORMATION times written, as STOMP_SI), stomped_flags (its flags
	written there, STOMP_FLAGS)."""

	def __init__(self):
		dict.__init__(self)
		self.tree = None
		self.deleted = {}
		self.dirs = []
		self.symlinks = {}
		self.fifos = []
		self.hardlinks = []
		self.streams = {}
		self.mtimes = {}
		self.stomped = None
		self.stomped_si = None
		self.stomped_flags = None


# --------------------------------------------------------------- running ----

def _env():
	"""Returns the environment every tool runs in."""
	env = dict(os.environ)
	env.update(TZ="UTC", LC_ALL="C.UTF-8", MTOOLS_SKIP_CHECK="1",
		E2FSPROGS_FAKE_TIME=str(FAKE_TIME))
	env.pop("MTOOLSRC", None)
	env["PATH"] = ":".join([x for x in env.get("PATH", "").split(":") if x] + ["/usr/sbin", "/sbin"])
	return env


def need(*tools):
	"""Returns the full path of the last tool; raises ToolMissing naming the first one not found.

	The search is $PATH then /usr/sbin and /sbin, where Debian puts mke2fs, mkntfs... and
	where a non-root $PATH does not look."""
	found = None
	for t in tools:
		found = shutil.which(t, path=_env()["PATH"])
		if found is None:
			raise ToolMissing("%s not found (Debian package %s)" % (t, PACKAGES.get(t, "?")))
	return found


def run(argv, check=True, input=None):
	"""Returns the CompletedProcess (stdout and stderr as bytes) of argv run with _env()."""
	argv = [need(argv[0])] + list(argv[1:])
	p = subprocess.run(argv, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
		env=_env(), stdin=None if input is not None else subprocess.DEVNULL)
	if check and p.returncode != 0:
		raise ToolFailed(argv, p.returncode, p.stderr)
	return p


def _images(image_paths):
	"""Returns image_paths (a path or a list of them) as a list of str."""
	if isinstance(image_paths, (str, bytes, os.PathLike)):
		return [os.fsdecode(image_paths)]
	return [os.fsdecode(p) for p in image_paths]


def _offset(offset):
	"""Returns the TSK arguments for a partition offset in sectors (or none)."""
	return [] if offset is None else ["-o", str(offset)]


def _data(seed, n):
	"""Returns n pseudo-random bytes, the same for the same seed."""
	return random.Random(seed).randbytes(n)


def _write_tree(top, files, dirs=()):
	"""Creates the folders dirs and the files {path: bytes} below top; returns None."""
	for d in dirs:
		os.makedirs(os.path.join(top, os.fsdecode(d)), exist_ok=True)
	for p, data in files.items():
		full = os.path.join(top, os.fsdecode(p))
		os.makedirs(os.path.dirname(full), exist_ok=True)
		with open(full, "wb") as f:
			f.write(data)


def _unlink(top, paths, mtimes):
	"""Removes paths below top, then gives their folders back the times in mtimes."""
	for p in paths:
		os.unlink(os.path.join(top, os.fsdecode(p)))
	for p in paths:
		d = p.rsplit(b"/", 1)[0] if b"/" in p else None
		if d in mtimes:
			os.utime(os.path.join(top, os.fsdecode(d)), (mtimes[d], mtimes[d]))


def _fresh(path):
	"""Removes path if it exists; returns path."""
	if os.path.lexists(path):
		os.unlink(path)
	return path


# ------------------------------------------------------------------ ext4 ----

def ext4(dir, name="ext4.img", size_mib=8):
	"""Returns (image path, Contents) of an ext4 image with 2 deleted files."""
	need("mke2fs", "debugfs")
	c = Contents()
	tree = c.tree = os.path.join(dir, name + ".tree")
	shutil.rmtree(tree, ignore_errors=True)
	files = {
		b"hello.txt": b"hello\n",
		b"a/copy of hello.txt": b"hello\n",                  # duplicate of hello.txt
		b"a/b/c/deep.txt": b"three folders down\n",
		b"a/b/c/big.bin": _data(1, 300 * 1024),             # ~300 blocks of 1 KiB
		b"a/b/twin1.dat": _data(2, 4000),
		b"twin2.dat": _data(2, 4000),                        # duplicate of a/b/twin1.dat
		b"empty": b"",
		b"with space.txt": b"a name with a space\n",
		"caf\u00e9.txt".encode(): b"non-ASCII name\n",
		b"doomed.txt": b"deleted in the root\n",
		b"a/b/doomed-2.txt": b"deleted two folders down\n",
	}
	doomed = [b"doomed.txt", b"a/b/doomed-2.txt"]
	c.dirs = [b"a", b"a/b", b"a/b/c"]
	_write_tree(tree, files, c.dirs)
	os.link(os.path.join(tree, "a/b/c/deep.txt"), os.path.join(tree, "a/deep-hardlink.txt"))
	os.symlink("hello.txt", os.path.join(tree, "link-to-hello"))
	os.mkfifo(os.path.join(tree, "fifo"))
	for p, data in files.items():
		c[p] = data
	c[b"a/deep-hardlink.txt"] = files[b"a/b/c/deep.txt"]
	c.hardlinks = [(b"a/b/c/deep.txt", b"a/deep-hardlink.txt")]
	c.symlinks = {b"link-to-hello": b"hello.txt"}
	c.fifos = [b"fifo"]
	# Times: entry i gets atime = mtime = T0 + 3600*i (mke2fs -d copies both, in whole
	# seconds), ctime the same through debugfs below, crtime = FAKE_TIME.
	every = sorted(list(c) + c.dirs + list(c.symlinks) + c.fifos, key=lambda p: (-p.count(b"/"), p))
	for i, p in enumerate(every):
		c.mtimes[p] = T0 + 3600 * i
		os.utime(os.path.join(tree, os.fsdecode(p)), (c.mtimes[p], c.mtimes[p]),
			follow_symlinks=False)
	img = _fresh(os.path.join(dir, name))
	run(["mke2fs", "-q", "-F", "-t", "ext4", "-b", "1024", "-U", EXT4_UUID,
		"-E", "hash_seed=" + EXT4_HASH_SEED, "-L", "fidx-ext4", "-d", tree,
		img, "%dM" % size_mib])
	cmds = ["sif \"/%s\" ctime @%d" % (os.fsdecode(p), c.mtimes[p]) for p in every]
	cmds += ["rm \"/%s\"" % os.fsdecode(p) for p in doomed]
	script = os.path.join(dir, name + ".debugfs")
	with open(script, "w") as f:
		f.write("\n".join(cmds) + "\n")
	p = run(["debugfs", "-w", "-f", script, img])
	os.unlink(script)
	errors = [l for l in p.stderr.splitlines() if b": " in l and not l.startswith(b"debugfs ")]
	if errors:
		raise ToolFailed(["debugfs", "-w", "-f", script, img], 0, b"\n".join(errors))
	for p in doomed:
		c.deleted[p] = c.pop(p)
	_unlink(tree, doomed, c.mtimes)
	_expect_deleted(img, c.deleted)
	return img, c


def _expect_deleted(img, deleted):
	"""Returns None; raises RuntimeError unless fls -d lists every path of deleted."""
	seen = {e["path"] for e in fls_entries(img, deleted_only=True)}
	missing = [p for p in deleted if p not in seen]
	if missing:
		raise RuntimeError("%s: fls -d does not list %r (it lists %r)" % (img, missing, sorted(seen)))


# ------------------------------------------------------------------- FAT ----

def fat(dir, name="fat.img", size_mib=8, fat_bits=16):
	"""Returns (image path, Contents) of a FAT16 (or FAT32: size_mib >= 33) image with 2 deleted files.

	mtools writes a long name (LFN) for any name that is not a plain 8.3 one.  A deleted
	entry without a long name loses its first character, which fls prints as "_"
	("gone.txt" comes back as "_one.txt"): Contents.deleted holds the names as fls shows
	them.  Times: FAT keeps mtimes in 2 s steps, access times as dates."""
	need("mkfs.fat", "mcopy", "mdel")
	c = Contents()
	src = c.tree = os.path.join(dir, name + ".tree")
	shutil.rmtree(src, ignore_errors=True)
	files = {
		b"A long file name.txt": b"long file name\n",
		b"SHORT.TXT": b"hello\n",
		b"Sub/copy of short.txt": b"hello\n",                # duplicate of SHORT.TXT
		"Caf\u00e9 cr\u00e8me.txt".encode(): b"non-ASCII long name\n",
		b"with space.txt": b"a name with a space\n",
		b"empty.txt": b"",
		b"Sub/Deeper/Deepest/big.bin": _data(3, 300 * 1024),
		b"gone.txt": b"deleted, short name only\n",
		b"Sub/Another deleted file.txt": b"deleted, long name\n",
	}
	doomed = {b"gone.txt": b"_one.txt",                    # as fls shows them once deleted
		b"Sub/Another deleted file.txt": b"Sub/Another deleted file.txt"}
	c.dirs = [b"Sub", b"Sub/Deeper", b"Sub/Deeper/Deepest"]
	_write_tree(src, files, c.dirs)
	# FAT stores local times: the tools run with TZ=UTC.
	for i, p in enumerate(sorted(list(files) + c.dirs, key=lambda p: (-p.count(b"/"), p))):
		c.mtimes[p] = T0 + 3600 * i
		os.utime(os.path.join(src, os.fsdecode(p)), (c.mtimes[p], c.mtimes[p]))
	img = _fresh(os.path.join(dir, name))
	spc = "1" if fat_bits == 32 else "2"
	run(["mkfs.fat", "--invariant", "-C", "-F", str(fat_bits), "-s", spc, "-n", "FIDXFAT",
		"-i", "F1D0FA7D", img, str(size_mib * 1024)])
	target = img + "@@0"
	top = sorted(os.listdir(src))
	run(["mcopy", "-s", "-m", "-Q", "-i", target] + [os.path.join(src, t) for t in top] + ["::/"])
	run(["mdel", "-i", target] + ["::/" + os.fsdecode(p) for p in doomed])
	for p, data in files.items():
		if p in doomed:
			c.deleted[doomed[p]] = data
		else:
			c[p] = data
	_unlink(src, doomed, c.mtimes)
	_expect_deleted(img, c.deleted)
	return img, c


# ------------------------------------------------------------------ NTFS ----

def ntfs(dir, name="ntfs.img", size_mib=8):
	"""Returns (image path, Contents) of an NTFS image: an ADS, a timestomped file, a deleted one.

	ntfsprogs cannot make a folder or delete a file without mounting, so every file is in
	the root.  The deletion is simulated in the image bytes (_Ntfs.delete): the MFT entry
	is marked free (record flag and $MFT bitmap) and its name is taken out of the root's
	index, its bytes left in the index slack where a real deletion leaves them; fls shows
	it as deleted ("-/r *").  Its data is resident, so no cluster needs freeing; its
	sequence number is left as it was.  The
	timestomp writes STOMP_SI into the $STANDARD_INFORMATION of "stomped.exe"; its
	$FILE_NAME keeps the build time.  NTFS times otherwise are the build time."""
	need("mkntfs", "ntfscp")
	c = Contents()
	src = c.tree = os.path.join(dir, name + ".tree")
	shutil.rmtree(src, ignore_errors=True)
	files = {
		b"hello.txt": b"hello\n",
		b"copy of hello.txt": b"hello\n",                    # duplicate of hello.txt
		b"big.bin": _data(4, 300 * 1024),                    # non-resident, 75 clusters
		b"with space.txt": b"a name with a space\n",
		"na\u00efve.txt".encode(): b"non-ASCII name\n",
		b"empty.txt": b"",
		b"ads.txt": b"the main stream\n",
		b"stomped.exe": b"MZ pretend program\n",
		b"doomed.txt": b"deleted by patching the MFT\n",
	}
	streams = {b"ads.txt:Zone.Identifier": b"[ZoneTransfer]\r\nZoneId=3\r\n"}
	_write_tree(src, files)
	sdir = os.path.join(dir, name + ".streams")
	shutil.rmtree(sdir, ignore_errors=True)
	_write_tree(sdir, {k.replace(b":", b"-"): v for k, v in streams.items()})
	img = os.path.join(dir, name)
	with open(_fresh(img), "wb") as f:
		f.truncate(size_mib << 20)
	run(["mkntfs", "-q", "-F", "-Q", "-s", "512", "-c", "4096", "-L", "FIDXNTFS", img])
	for p in files:
		run(["ntfscp", "-q", img, os.path.join(src, os.fsdecode(p)), os.fsdecode(p)])
	for k in streams:
		base, stream = k.split(b":", 1)
		run(["ntfscp", "-q", "-N", os.fsdecode(stream), img,
			os.path.join(sdir, os.fsdecode(k.replace(b":", b"-"))), os.fsdecode(base)])
	shutil.rmtree(sdir)
	entries = {e["path"]: e["inode"] for e in fls_entries(img)}
	with _Ntfs(img) as fs:
		fs.stomp(entries[b"stomped.exe"], STOMP_SI)
		fs.set_flags(entries[b"stomped.exe"], STOMP_FLAGS)
		fs.delete(entries[b"doomed.txt"])
	for p, data in files.items():
		c[p] = data
	c.deleted[b"doomed.txt"] = c.pop(b"doomed.txt")
	_unlink(src, [b"doomed.txt"], c.mtimes)
	c.streams = streams
	c.stomped = b"stomped.exe"
	c.stomped_si = dict(STOMP_SI)
	c.stomped_flags = STOMP_FLAGS
	_expect_deleted(img, c.deleted)
	return img, c


class _Ntfs:
	"""The MFT of an NTFS image file, read and patched in place (records de-fixed, re-fixed)."""

	def __init__(self, path):
		"""Opens the image and finds the MFT from the boot sector and record 0."""
		self.f = open(path, "r+b")
		boot = self._pread(0, 512)
		if boot[3:11] != b"NTFS    ":
			raise ValueError("%s: not an NTFS boot sector" % path)
		bps, spc = struct.unpack_from("<HB", boot, 11)
		self.cluster = bps * spc
		mft_lcn, = struct.unpack_from("<Q", boot, 0x30)
		cpr, = struct.unpack_from("<b", boot, 0x40)
		self.rsize = cpr * self.cluster if cpr > 0 else 1 << -cpr
		# Record 0 is at the MFT's first cluster; its $DATA runs place every other record.
		self.runs = [(mft_lcn, (self.rsize + self.cluster - 1) // self.cluster)]
		self.runs = _runlist(self._attr(self.read(0), 0x80)["runlist"])

	def __enter__(self):
		"""Returns self."""
		return self

	def __exit__(self, *exc):
		"""Closes the image."""
		self.f.close()
		return False

	def _pread(self, off, n):
		"""Returns n bytes of the image at off (a bytearray)."""
		self.f.seek(off)
		return bytearray(self.f.read(n))

	def _pwrite(self, off, data):
		"""Writes data into the image at off."""
		self.f.seek(off)
		self.f.write(data)

	def _where(self, runs, pos):
		"""Returns the image offset of byte pos of a non-resident stream with these runs."""
		vcn, within = divmod(pos, self.cluster)
		for lcn, n in runs:
			if vcn < n:
				if lcn is None:
					raise ValueError("sparse run")
				return (lcn + vcn) * self.cluster + within
			vcn -= n
		raise ValueError("byte %d beyond the runs" % pos)

	def read(self, entry):
		"""Returns MFT record entry, fixups undone (a bytearray)."""
		return _unfix(self._pread(self._where(self.runs, entry * self.rsize), self.rsize), b"FILE")

	def write(self, entry, rec):
		"""Writes MFT record entry back, fixups redone."""
		self._pwrite(self._where(self.runs, entry * self.rsize), _refix(rec))

	def _attr(self, rec, atype, name=""):
		"""Returns the first attribute of type atype (and name) in rec, as a dict."""
		off, = struct.unpack_from("<H", rec, 0x14)
		while off + 8 <= len(rec):
			t, length = struct.unpack_from("<II", rec, off)
			if t == 0xFFFFFFFF or length == 0:
				break
			nonres, nlen, noff = struct.unpack_from("<BBH", rec, off + 8)
			aname = rec[off + noff:off + noff + 2 * nlen].decode("utf-16-le")
			if t == atype and aname == name:
				a = {"off": off, "nonresident": bool(nonres)}
				if nonres:
					roff, = struct.unpack_from("<H", rec, off + 0x20)
					a["runlist"] = bytes(rec[off + roff:off + length])
				else:
					clen, coff = struct.unpack_from("<IH", rec, off + 0x10)
					a["content"] = off + coff
					a["length"] = clen
				return a
			off += length
		raise KeyError("no attribute 0x%x %r" % (atype, name))

	def stomp(self, entry, times):
		"""Sets the $STANDARD_INFORMATION times of entry ({crtime,mtime,ctime,atime}: ns)."""
		rec = self.read(entry)
		si = self._attr(rec, 0x10)
		ft = [times[k] // 100 + FILETIME_EPOCH for k in ("crtime", "mtime", "ctime", "atime")]
		struct.pack_into("<4Q", rec, si["content"], *ft)
		self.write(entry, rec)

	def set_flags(self, entry, flags):
		"""Sets the flags of the $STANDARD_INFORMATION of entry (FILE_ATTRIBUTE_*, at byte 32)."""
		rec = self.read(entry)
		si = self._attr(rec, 0x10)
		struct.pack_into("<I", rec, si["content"] + 32, flags)
		self.write(entry, rec)

	def delete(self, entry):
		"""Marks entry free and moves its name out of its parent's index into the slack."""
		rec = self.read(entry)
		fn = self._attr(rec, 0x30)
		parent = struct.unpack_from("<Q", rec, fn["content"])[0] & 0xFFFFFFFFFFFF
		flags, = struct.unpack_from("<H", rec, 0x16)
		struct.pack_into("<H", rec, 0x16, flags & ~1)
		self.write(entry, rec)
		bitmap = self._attr(self.read(0), 0xB0)
		if bitmap["nonresident"]:
			pos = self._where(_runlist(bitmap["runlist"]), entry // 8)
			b = self._pread(pos, 1)
			self._pwrite(pos, bytes([b[0] & ~(1 << entry % 8) & 0xFF]))
		else:
			r0 = self.read(0)
			r0[bitmap["content"] + entry // 8] &= ~(1 << entry % 8) & 0xFF
			self.write(0, r0)
		prec = self.read(parent)
		root = self._attr(prec, 0x90, "$I30")
		if _drop_index_entry(prec, root["content"] + 16, entry):
			self.write(parent, prec)
			return
		alloc = self._attr(prec, 0xA0, "$I30")
		bsize, = struct.unpack_from("<I", prec, root["content"] + 8)
		runs = _runlist(alloc["runlist"])
		for i in range(sum(n for _, n in runs) * self.cluster // bsize):
			pos = self._where(runs, i * bsize)
			block = self._pread(pos, bsize)
			if block[:4] != b"INDX":
				continue
			block = _unfix(block, b"INDX")
			if _drop_index_entry(block, 0x18, entry):
				self._pwrite(pos, _refix(block))
				return
		raise KeyError("entry %d not in the index of %d" % (entry, parent))


def _unfix(buf, magic):
	"""Returns buf (a FILE or INDX record) with the update-sequence fixups undone."""
	if buf[:4] != magic:
		raise ValueError("bad record magic %r" % bytes(buf[:4]))
	uoff, ucount = struct.unpack_from("<HH", buf, 4)
	usn = buf[uoff:uoff + 2]
	for i in range(1, ucount):
		end = i * SECTOR - 2
		if buf[end:end + 2] != usn:
			raise ValueError("torn record: fixup %d does not match" % i)
		buf[end:end + 2] = buf[uoff + 2 * i:uoff + 2 * i + 2]
	return buf


def _refix(buf):
	"""Returns buf with the update-sequence fixups applied again (same sequence number)."""
	buf = bytearray(buf)
	uoff, ucount = struct.unpack_from("<HH", buf, 4)
	usn = buf[uoff:uoff + 2]
	for i in range(1, ucount):
		end = i * SECTOR - 2
		buf[uoff + 2 * i:uoff + 2 * i + 2] = buf[end:end + 2]
		buf[end:end + 2] = usn
	return bytes(buf)


def _runlist(raw):
	"""Returns the runs [(lcn or None when sparse, clusters)] of an NTFS mapping pairs array."""
	runs, i, lcn = [], 0, 0
	while i < len(raw) and raw[i]:
		ls, os_ = raw[i] & 0xF, raw[i] >> 4
		n = int.from_bytes(raw[i + 1:i + 1 + ls], "little")
		if os_:
			lcn += int.from_bytes(raw[i + 1 + ls:i + 1 + ls + os_], "little", signed=True)
			runs.append((lcn, n))
		else:
			runs.append((None, n))
		i += 1 + ls + os_
	return runs


def _drop_index_entry(buf, node, entry):
	"""Returns whether the index node at buf[node:] named entry; if so removes it (bytes to slack)."""
	first, used = struct.unpack_from("<II", buf, node)
	e, end = node + first, node + used
	while e < end:
		ref, elen, klen, eflags = struct.unpack_from("<QHHH", buf, e)
		if eflags & 2 or elen == 0:
			return False
		if ref & 0xFFFFFFFFFFFF == entry:
			if eflags & 1:
				raise ValueError("index entry of %d has a subnode" % entry)
			gone = bytes(buf[e:e + elen])
			buf[e:end] = buf[e + elen:end] + gone
			struct.pack_into("<I", buf, node + 4, used - elen)
			return True
		e += elen
	return False


# ---------------------------------------------------------- disk shapes ----

def gpt(dir, parts, name="gpt.img"):
	"""Returns (image path, [{number, start, length, source, type}]) of a GPT disk holding parts.

	parts: file system image paths, or (path, type) pairs, type a GPT type GUID (or an
	sfdisk alias); it defaults to "Linux filesystem" for ext2/3/4 and "Microsoft basic
	data" otherwise.  Partitions start at sector 2048, 1 MiB aligned, and are named after
	their source file (mmls prints the names as descriptions); starts and lengths are in
	512-byte sectors.  The table is written by sfdisk: sgdisk does the same but always
	syncs and sleeps a second before asking the kernel to re-read the table."""
	need("sfdisk")
	img = os.path.join(dir, name)
	layout, start = [], 2048
	for i, p in enumerate(parts, 1):
		path, code = (p, None) if isinstance(p, (str, bytes, os.PathLike)) else p
		path = os.fsdecode(path)
		if code is None:
			with open(path, "rb") as f:
				f.seek(1080)
				code = GPT_LINUX if f.read(2) == b"\x53\xef" else GPT_BASIC_DATA
		length = -(-os.path.getsize(path) // SECTOR)
		layout.append({"number": i, "start": start, "length": length, "source": path, "type": code})
		start += -(-length // 2048) * 2048
	with open(_fresh(img), "wb") as f:
		f.truncate((start + 2048) * SECTOR)
	script = ["label: gpt", "label-id: " + GPT_DISK_GUID, "first-lba: 34"]
	for l in layout:
		script.append('start=%d, size=%d, type=%s, uuid=%s%012d, name="%s"' % (l["start"],
			l["length"], l["type"], GPT_DISK_GUID[:24], l["number"], os.path.basename(l["source"])))
	run(["sfdisk", "-q", "--no-reread", "--no-tell-kernel", img],
		input=("\n".join(script) + "\n").encode())
	for l in layout:
		_copy(l["source"], img, os.path.getsize(l["source"]), 0, l["start"] * SECTOR)
	return img, layout


def _copy(src, dst, length, src_off=0, dst_off=0):
	"""Copies length bytes of file src at src_off into file dst (created if need be) at dst_off."""
	with open(src, "rb") as f, open(dst, "r+b" if os.path.exists(dst) else "wb") as g:
		while length > 0:
			try:
				n = os.copy_file_range(f.fileno(), g.fileno(), length, src_off, dst_off)
			except OSError:
				f.seek(src_off)
				g.seek(dst_off)
				n = g.write(f.read(min(length, 1 << 20)))
			if n <= 0:
				break
			length, src_off, dst_off = length - n, src_off + n, dst_off + n


def split_raw(image, dir, pieces=3, name="disk"):
	"""Returns the paths [dir/disk.001, dir/disk.002, ...] of image cut into pieces.

	TSK's raw reader, given only the first piece, finds the rest when the first ends in
	".001" (or "000", or "_001": three digits) or ".aa"; a two-digit or one-digit suffix
	(".01", ".1") is read as a single file.  Every piece but the last is a multiple of 512
	bytes (TSK warns and stops otherwise)."""
	size = os.path.getsize(image)
	step = -(-size // pieces // SECTOR) * SECTOR
	out = []
	for i in range(pieces):
		path = _fresh(os.path.join(dir, "%s.%03d" % (name, i + 1)))
		_copy(image, path, min(step, max(size - i * step, 0)), i * step)
		out.append(path)
	return out


def e01(image, dir, name="disk", segment_bytes=None):
	"""Returns the path of dir/NAME.E01, an EnCase 6 image of image (deflate fast, MD5+SHA-1 stored).

	segment_bytes (at least 1 MiB) caps the size of each segment file (.E01, .E02...: TSK
	and ewfverify take the .E01 alone); by default there is one segment."""
	need("ewfacquire")
	target = os.path.join(dir, name)
	for f in os.listdir(dir):
		if re.fullmatch(re.escape(name) + r"\.E\w\w", f):
			os.unlink(os.path.join(dir, f))
	seg = str(segment_bytes) if segment_bytes else "1GiB"
	run(["ewfacquire", "-u", "-q", "-t", target, "-f", "encase6", "-c", "fast", "-S", seg,
		"-d", "sha1", "-b", "64", "-C", "fidx-case", "-D", "fidx e2e image", "-e", "fidx",
		"-E", "1", "-N", "built by tests/e2e/images.py", "-m", "fixed", "-M", "physical", image])
	return target + ".E01"


def ewf_verify(e01_path):
	"""Returns {ok, stored_md5, computed_md5} from ewfverify of an E01 set."""
	need("ewfverify")
	p = run(["ewfverify", "-q", e01_path], check=False)
	text = p.stdout.decode("utf-8", "replace")
	stored = re.search(r"MD5 hash stored in file:\s*(\w+)", text)
	computed = re.search(r"MD5 hash calculated over data:\s*(\w+)", text)
	return {"ok": p.returncode == 0 and "SUCCESS" in text,
		"stored_md5": stored and stored.group(1), "computed_md5": computed and computed.group(1)}


def truncated(image, dir, name=None, keep=None):
	"""Returns the path of a copy of image cut at half its size, or after keep bytes.

	The cut is rounded down to a sector.  On gpt()'s disk of two 8 MiB file systems the
	half falls exactly at the second partition's start: mmls still reads the primary table,
	the first partition is whole, fls -o of the second fails (offset beyond the image);
	pass keep to cut inside a file system instead."""
	path = _fresh(os.path.join(dir, name or "truncated-" + os.path.basename(image)))
	cut = os.path.getsize(image) // 2 if keep is None else keep
	_copy(image, path, cut // SECTOR * SECTOR)
	return path


def corrupt_table(gpt_image, dir, name=None):
	"""Returns the path of a copy of gpt_image whose partition tables no tool can read.

	The protective MBR's 55 AA signature is cleared and both GPT headers (sector 1 and the
	last sector) are zeroed; the partition entries and the file systems are untouched, so
	mmls fails while fls -o START still reads each partition."""
	path = _fresh(os.path.join(dir, name or "corrupt-" + os.path.basename(gpt_image)))
	shutil.copyfile(gpt_image, path)
	size = os.path.getsize(path)
	with open(path, "r+b") as f:
		f.seek(510)
		f.write(b"\0\0")
		for lba in (1, size // SECTOR - 1):
			f.seek(lba * SECTOR)
			f.write(bytes(SECTOR))
	return path


# ------------------------------------------------------- ground truth ----

_TIME = re.compile(rb"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?: ?\((\w+)\)|Z)?$")


def time_ns(text):
	"""Returns the ns since the epoch of a TSK or DFXML UTC time text, None for 0000-00-00 or empty."""
	m = _TIME.match(text.strip() if isinstance(text, bytes) else text.strip().encode())
	if not m:
		if not text.strip():
			return None
		raise ValueError("unparsed time %r" % text)
	y, mo, d, h, mi, s = (int(x) for x in m.groups()[:6])
	if y == 0:
		return None
	if m.group(8) not in (None, b"UTC", b"GMT"):
		raise ValueError("time %r is not UTC" % text)
	frac = (m.group(7) or b"").ljust(9, b"0")[:9]
	return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) * 10**9 + int(frac)


def _seconds(ns, fraction):
	"""Returns ns as int seconds, or float seconds when the text carried a fraction."""
	if ns is None:
		return None
	return ns / 1e9 if fraction else ns // 10**9


def _split_addr(addr):
	"""Returns (inode as int, attribute suffix or None) of a TSK address like 64-128-4."""
	parts = addr.split("-", 1)
	return int(parts[0]), (parts[1] if len(parts) > 1 else None)


_FLS = re.compile(rb"^(\S)/(\S) (\* )?(\d+(?:-\d+-\d+)?)(\(realloc\))?:\t")


def fls_entries(image_paths, offset_sectors=None, fstype=None, deleted_only=False):
	"""Returns a dict per line of fls -r -p -l (TZ=UTC): path, type, deleted, inode, attr, times...

	Keys: path (bytes, relative, "file:stream" for an alternate data stream), name (its last
	component), type ("r/r", "d/d", "l/l", "p/p", "-/r", "V/V"...: name type / metadata
	type), name_type, meta_type, deleted (the "*"), realloc, inode (int, the inode or MFT
	entry), attr (the "TYPE-ID" suffix, e.g. "128-1", "128-4" for a stream; None on ext and
	FAT), addr (both), orphan (under $OrphanFiles/), mtime/atime/ctime/crtime (epoch seconds:
	int, float when fls printed a fraction; None for 0000-00-00) and the same as *_ns (int
	ns), size, uid, gid (fls prints gid before uid; these are the right way round).
	Names: fls has no quoting, so it prints every control character of a name (newline,
	tab...) as "^": such a name comes back altered, and the same as one holding a real "^"
	(fiwalk_files has the exact names).  Other bytes, invalid UTF-8 included, come back as
	they are."""
	argv = ["fls", "-r", "-p", "-l"] + (["-d"] if deleted_only else []) + _offset(offset_sectors)
	argv += (["-f", fstype] if fstype else []) + _images(image_paths)
	out = []
	for line in run(argv).stdout.split(b"\n"):
		if not line:
			continue
		m = _FLS.match(line)
		if not m:
			raise ValueError("unparsed fls line %r" % line)
		fields = line[m.end():].rsplit(b"\t", 7)
		if len(fields) != 8:
			raise ValueError("unparsed fls line %r" % line)
		path = fields[0]
		inode, attr = _split_addr(m.group(4).decode())
		e = {"path": path, "name": path.rsplit(b"/", 1)[-1],
			"type": (m.group(1) + b"/" + m.group(2)).decode(),
			"name_type": m.group(1).decode(), "meta_type": m.group(2).decode(),
			"deleted": m.group(3) is not None, "realloc": m.group(5) is not None,
			"addr": m.group(4).decode(), "inode": inode, "attr": attr,
			"orphan": path.startswith(b"$OrphanFiles/")}
		for k, v in zip(("mtime", "atime", "ctime", "crtime"), fields[1:5]):
			e[k + "_ns"] = time_ns(v)
			e[k] = _seconds(e[k + "_ns"], b"." in v)
		e["size"], e["gid"], e["uid"] = int(fields[5]), int(fields[6]), int(fields[7])
		out.append(e)
	return out


def fls_body(image_paths, offset=None):
	"""Returns a dict per line of fls -r -m / (MD5|name|inode|mode|uid|gid|size|a|m|c|crtime).

	Keys: md5, name (the raw field), path (bytes, without the leading "/" and the suffixes
	below), addr, inode, attr, mode ("r/rrw-r--r--"), file_name (True for the NTFS
	"($FILE_NAME)" lines, which carry the $FILE_NAME times), deleted ("(deleted)" or
	"(deleted-realloc)"), link_target (bytes after " -> " for a symlink; a name holding " -> "
	is ambiguous), uid, gid, size, atime, mtime, ctime, crtime (epoch seconds, int or float).
	A "|" in a name is kept (the fields are split from both ends); control characters come
	back as "^" (see fls_entries)."""
	argv = ["fls", "-r", "-m", "/"] + _offset(offset) + _images(image_paths)
	out = []
	for line in run(argv).stdout.split(b"\n"):
		if not line:
			continue
		f = line.split(b"|")
		if len(f) < 11:
			raise ValueError("unparsed body line %r" % line)
		name, tail = b"|".join(f[1:-9]), f[-9:]
		path, deleted, file_name, target = name, False, False, None
		for suffix in (b" (deleted-realloc)", b" (deleted)"):
			if path.endswith(suffix):
				path, deleted = path[:-len(suffix)], True
				break
		if path.endswith(b" ($FILE_NAME)"):
			path, file_name = path[:-len(b" ($FILE_NAME)")], True
		if tail[1].startswith(b"l") and b" -> " in path:
			path, target = path.split(b" -> ", 1)
		inode, attr = _split_addr(tail[0].decode())
		e = {"md5": f[0].decode(), "name": name, "path": path[1:] if path.startswith(b"/") else path,
			"addr": tail[0].decode(), "inode": inode, "attr": attr, "mode": tail[1].decode(),
			"file_name": file_name, "deleted": deleted, "link_target": target,
			"uid": int(tail[2]), "gid": int(tail[3]), "size": int(tail[4])}
		for k, v in zip(("atime", "mtime", "ctime", "crtime"), tail[5:]):
			e[k] = float(v) if b"." in v else int(v)
		out.append(e)
	return out


def icat_digests(image_paths, addr, offset=None):
	"""Returns {md5, sha1, sha256, size} of icat's output for addr ("5"; "64-128-4": a stream)."""
	argv = [need("icat")] + _offset(offset) + _images(image_paths) + [str(addr)]
	h = {k: hashlib.new(k) for k in ("md5", "sha1", "sha256")}
	size = 0
	with tempfile.TemporaryFile() as err:
		with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err,
				stdin=subprocess.DEVNULL, env=_env()) as p:
			for chunk in iter(lambda: p.stdout.read(1 << 16), b""):
				size += len(chunk)
				for x in h.values():
					x.update(chunk)
		if p.returncode != 0:
			err.seek(0)
			raise ToolFailed(argv, p.returncode, err.read())
	out = {k: x.hexdigest() for k, x in h.items()}
	out["size"] = size
	return out


def icat_sha256(image_paths, addr, offset=None):
	"""Returns the sha256 hex of icat's output for addr."""
	return icat_digests(image_paths, addr, offset)["sha256"]


_ISTAT_KEYS = {b"Created": "crtime", b"File Created": "crtime", b"File Modified": "mtime",
	b"Written": "mtime",
	b"MFT Modified": "ctime", b"Inode Modified": "ctime", b"Accessed": "atime"}


# The names istat gives the bits of $STANDARD_INFORMATION's flags (FILE_ATTRIBUTE_*).
SI_FLAG_NAMES = {0x1: "Read Only", 0x2: "Hidden", 0x4: "System", 0x20: "Archive",
		 0x40: "Device", 0x80: "Normal", 0x100: "Temporary", 0x200: "Sparse",
		 0x400: "Reparse Point", 0x800: "Compressed", 0x1000: "Offline",
		 0x2000: "Not Content Indexed", 0x4000: "Encrypted"}


def istat_si_flags(image_paths, addr, offset=None):
	"""Returns the set of names istat prints as the flags of NTFS entry addr's $STANDARD_INFORMATION."""
	argv = ["istat"] + _offset(offset) + _images(image_paths) + [str(addr)]
	si = False
	for line in run(argv).stdout.split(b"\n"):
		if line.startswith(b"$STANDARD_INFORMATION Attribute Values"):
			si = True
		elif si and line.startswith(b"Flags:"):
			return {n.strip().decode() for n in line[6:].split(b",") if n.strip()}
		elif not line.strip():
			si = False
	return None


def istat_times(image_paths, addr, offset=None):
	"""Returns {"si": {crtime,mtime,ctime,atime}, "fn": {...}, "fn_all", "inode"} of istat, in int ns.

	"si" is NTFS's $STANDARD_INFORMATION, "fn" its first $FILE_NAME ("fn_all" all of them,
	each with its "name"), "inode" the "Inode Times" of ext or the "Directory Entry Times" of
	FAT; a section istat does not print is absent.  Created/File Modified (FAT: Written)/MFT
	(Inode) Modified/Accessed map to crtime/mtime/ctime/atime."""
	argv = ["istat"] + _offset(offset) + _images(image_paths) + [str(addr)]
	out, cur = {"fn_all": []}, None
	for line in run(argv).stdout.split(b"\n"):
		if line.startswith(b"$STANDARD_INFORMATION Attribute Values"):
			cur = out.setdefault("si", {})
		elif line.startswith(b"$FILE_NAME Attribute Values"):
			cur = {}
			out["fn_all"].append(cur)
		elif line.startswith(b"Inode Times") or line.startswith(b"Directory Entry Times"):
			cur = out.setdefault("inode", {})
		elif cur is not None and line.startswith(b"Name: "):
			cur["name"] = line[6:]
		elif cur is not None and b":\t" in line:
			k, v = line.split(b":\t", 1)
			if k in _ISTAT_KEYS:
				cur[_ISTAT_KEYS[k]] = time_ns(v)
		elif not line.strip():
			cur = None
	if out["fn_all"]:
		out["fn"] = out["fn_all"][0]
	return out


_DFXML = "{http://www.forensicswiki.org/wiki/Category:Digital_Forensics_XML}"
_XNN = re.compile(rb"\\x([0-9A-Fa-f]{2})")


def fiwalk_files(image_paths, dots=False):
	"""Returns one dict per DFXML fileobject of fiwalk -X (MD5 and SHA-1 on).

	Keys: filename (str, as DFXML has it: fiwalk writes a backslash, a control character
	or a byte of invalid UTF-8 as \\xNN), path (the name's exact bytes, those escapes
	undone), volume_offset (bytes),
	partition, id, alloc (False for <unalloc>), inode, name_type, meta_type, filesize, mode,
	uid, gid, nlink, md5, sha1 (None when fiwalk gave none: directories of some file
	systems, empty or unreadable files), mtime/atime/ctime/crtime (epoch seconds, int or
	float) and *_ns.  The "." and ".." entries are left out unless dots."""
	need("fiwalk")
	with tempfile.TemporaryDirectory(prefix="fiwalk-") as tmp:
		xml = os.path.join(tmp, "out.xml")
		run(["fiwalk", "-X", xml] + _images(image_paths))
		root = ET.parse(xml).getroot()
	out = []
	for vol in root.iter(_DFXML + "volume"):
		voff = int(vol.get("offset", "0"))
		for fo in vol.iter(_DFXML + "fileobject"):
			e = {"volume_offset": voff, "alloc": None, "md5": None, "sha1": None}
			for child in fo:
				tag = child.tag[len(_DFXML):] if child.tag.startswith(_DFXML) else child.tag
				text = (child.text or "").strip()
				if tag == "hashdigest":
					e[child.get("type").lower()] = text.lower()
				elif tag in ("alloc", "unalloc"):
					e["alloc"] = (tag == "alloc") == (text == "1")
				elif tag in ("mtime", "atime", "ctime", "crtime", "dtime", "bkup_time"):
					e[tag + "_ns"] = time_ns(text)
					e[tag] = _seconds(e[tag + "_ns"], "." in text)
				elif tag in ("partition", "id", "inode", "filesize", "mode", "uid", "gid", "nlink",
						"seq", "meta_type", "used"):
					e[tag] = int(text)
				elif tag in ("filename", "name_type"):
					e[tag] = text
			e["path"] = _XNN.sub(lambda m: bytes([int(m.group(1), 16)]),
				e.get("filename", "").encode("utf-8", "surrogateescape"))
			if not dots and e["path"].rsplit(b"/", 1)[-1] in (b".", b".."):
				continue
			out.append(e)
	return out


_MMLS = re.compile(r"^(\d+):\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(.*)$")


def mmls_parts(image):
	"""Returns [{index, slot, start, end, length, description}] of mmls's partition rows.

	Meta rows and unallocated ("-------") rows are left out; sectors are 512 bytes.  Raises
	ToolFailed when mmls finds no partition table."""
	out = []
	for line in run(["mmls"] + _images(image)).stdout.decode("utf-8", "replace").splitlines():
		m = _MMLS.match(line)
		if m and m.group(2) != "Meta" and not m.group(2).startswith("---"):
			out.append({"index": int(m.group(1)), "slot": m.group(2), "start": int(m.group(3)),
				"end": int(m.group(4)), "length": int(m.group(5)), "description": m.group(6).strip()})
	return out


# ------------------------------------------------------------- self-test ----

def _check(cond, what):
	"""Returns None; raises AssertionError(what) unless cond (asserts that survive -O)."""
	if not cond:
		raise AssertionError(what)


def _self_test():
	"""Builds every image, prints the readers' output in short, checks the key facts; returns 0."""
	def show(title, entries, keys, n=3):
		"""Prints a count and the first n entries."""
		print("  %s: %d" % (title, len(entries)))
		for e in entries[:n]:
			print("    " + "  ".join("%s=%r" % (k, e.get(k)) for k in keys))

	with tempfile.TemporaryDirectory(prefix="fidx-images-") as tmp:
		t0 = time.monotonic()
		e4, e4c = ext4(tmp)
		fa, fac = fat(tmp)
		nt, ntc = ntfs(tmp)
		g, layout = gpt(tmp, [e4, fa])
		os.mkdir(os.path.join(tmp, "split"))
		pieces = split_raw(g, os.path.join(tmp, "split"))
		ewf = e01(g, tmp)
		cut = truncated(g, tmp)
		bad = corrupt_table(g, tmp)
		built = time.monotonic() - t0
		print("built everything in %.3f s" % built)

		keys = ("path", "type", "deleted", "addr", "mtime", "size", "uid", "gid")
		for label, img, c in (("ext4", e4, e4c), ("fat", fa, fac), ("ntfs", nt, ntc)):
			print("%s: %s, %d bytes" % (label, os.path.basename(img), os.path.getsize(img)))
			es = fls_entries(img)
			show("fls entries", es, keys)
			show("deleted (orphans aside)", [e for e in es if e["deleted"] and not e["orphan"]], keys)
			byp = {e["path"]: e for e in es}
			for p, data in list(c.items()) + list(c.streams.items()):
				_check(p in byp, "%s: %r not listed" % (label, p))
				_check(icat_sha256(img, byp[p]["addr"]) == hashlib.sha256(data).hexdigest(),
					"%s: icat %r" % (label, p))
				_check(byp[p]["size"] == len(data), "%s: size of %r" % (label, p))
			for p in c.deleted:
				_check(p in byp and byp[p]["deleted"], "%s: %r not deleted" % (label, p))
			_check(len(c.deleted) == (1 if label == "ntfs" else 2), "%s: deleted count" % label)
			print("  icat gives the sha256 of all %d files; deleted: %r"
				% (len(c) + len(c.streams), sorted(c.deleted)))
			body = fls_body(img)
			show("body lines", body, ("path", "addr", "mode", "file_name", "deleted", "mtime"), 2)
			fw = fiwalk_files(img)
			show("fiwalk files", fw, ("path", "partition", "inode", "alloc", "filesize", "md5"), 2)
			fwp = {e["path"]: e for e in fw}
			for p, data in c.items():
				if data:
					_check(fwp[p]["md5"] == hashlib.md5(data).hexdigest(), "%s: fiwalk md5 %r"
						% (label, p))

		es = {e["path"]: e for e in fls_entries(e4)}
		_check(es[b"link-to-hello"]["type"] == "l/l" and es[b"fifo"]["type"] == "p/p", "ext4 types")
		_check(es[b"a/deep-hardlink.txt"]["inode"] == es[b"a/b/c/deep.txt"]["inode"], "hard link")
		for k in ("mtime", "atime", "ctime"):
			_check(es[b"hello.txt"][k] == e4c.mtimes[b"hello.txt"], "ext4 " + k)
		_check(es[b"hello.txt"]["crtime"] == FAKE_TIME, "ext4 crtime")
		print("ext4 istat of hello.txt: %r" % istat_times(e4, es[b"hello.txt"]["inode"])["inode"])
		es = {e["path"]: e for e in fls_entries(fa)}
		_check(es[b"SHORT.TXT"]["mtime"] == fac.mtimes[b"SHORT.TXT"], "fat mtime")

		es = fls_entries(nt)
		ads = [e for e in es if e["path"] == b"ads.txt:Zone.Identifier"]
		main = [e for e in es if e["path"] == b"ads.txt"]
		_check(ads and main and ads[0]["inode"] == main[0]["inode"] and ads[0]["attr"] != main[0]["attr"],
			"ntfs ADS")
		print("ntfs ADS: %r addr %s (main stream %s)" % (ads[0]["path"], ads[0]["addr"], main[0]["addr"]))
		stomped = [e for e in es if e["path"] == b"stomped.exe"][0]
		t = istat_times(nt, stomped["inode"])
		print("ntfs timestomped entry %d, istat times in ns:" % stomped["inode"])
		for k in ("crtime", "mtime", "ctime", "atime"):
			print("  %-6s SI %d  FN %d" % (k, t["si"][k], t["fn"][k]))
			_check(t["si"][k] == STOMP_SI[k] and t["si"][k] < t["fn"][k], "stomped " + k)
		fnl = [b for b in fls_body(nt) if b["path"] == b"stomped.exe" and b["file_name"]]
		_check(fnl and fnl[0]["crtime"] > STOMP_SI["crtime"] // 10**9, "body $FILE_NAME line")
		dl = [e for e in es if e["deleted"] and not e["orphan"]]
		print("ntfs deleted: %r" % [(e["path"], e["type"], e["addr"]) for e in dl])
		_check([e["path"] for e in dl] == [b"doomed.txt"], "ntfs deleted")

		parts = mmls_parts(g)
		show("mmls " + os.path.basename(g), parts, ("slot", "start", "length", "description"))
		_check([p["start"] for p in parts] == [l["start"] for l in layout], "mmls starts")
		counts = [len(fls_entries(g, l["start"])) for l in layout]
		print("  fls -o START: %r entries" % counts)
		fw = fiwalk_files(g)
		_check({e["partition"] for e in fw} == {1, 2}, "fiwalk partitions")
		print("  fiwalk over the disk: %d files in partitions 1 and 2" % len(fw))

		print("split: %r" % [os.path.basename(p) for p in pieces])
		alone = [len(fls_entries(pieces[0], l["start"])) for l in layout]
		listed = [len(fls_entries(pieces, l["start"])) for l in layout]
		_check(alone == counts == listed, "split entries %r %r %r" % (alone, listed, counts))
		big = [e for e in fls_entries(pieces[0], layout[1]["start"]) if e["name"] == b"big.bin"][0]
		_check(icat_sha256(pieces[0], big["addr"], layout[1]["start"])
			== hashlib.sha256(fac[b"Sub/Deeper/Deepest/big.bin"]).hexdigest(), "split icat")
		print("  the first piece alone: %r entries, big.bin of the last partition intact" % alone)

		v = ewf_verify(ewf)
		print("e01: %s %r" % (os.path.basename(ewf), v))
		with open(g, "rb") as f:
			_check(v["ok"] and v["stored_md5"] == hashlib.file_digest(f, "md5").hexdigest(), "E01")
		_check([len(fls_entries(ewf, l["start"])) for l in layout] == counts, "E01 entries")

		try:
			mmls_parts(cut)
			print("truncated: mmls still reads the primary table")
		except ToolFailed as e:
			print("truncated: mmls fails: %s" % e)
		_check(len(fls_entries(cut, layout[0]["start"])) == counts[0], "truncated 1st partition")
		try:
			fls_entries(cut, layout[1]["start"])
			print("truncated: fls of the 2nd partition still works")
		except ToolFailed as e:
			print("truncated: fls -o %d fails: %s" % (layout[1]["start"], e.stderr.decode().strip()))
		try:
			mmls_parts(bad)
			raise AssertionError("mmls read the corrupt table")
		except ToolFailed as e:
			print("corrupt table: mmls exits %d" % e.returncode)
		_check([len(fls_entries(bad, l["start"])) for l in layout] == counts, "corrupt: fls -o")
		print("corrupt table: fls -o START still reads %r entries" % counts)
		print("ALL OK (build %.3f s, with the checks %.3f s)" % (built, time.monotonic() - t0))
	return 0


if __name__ == "__main__":
	sys.exit(_self_test())
