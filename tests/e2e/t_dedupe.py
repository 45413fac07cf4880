#!/usr/bin/python3
"""t_dedupe.py - `fidx dupes --delete | --link | --reflink`, against the file system.

Each case builds a tree of duplicate groups (three copies of one file, one
of them with a second name; two copies of another; a name with a newline
and an invalid UTF-8 byte; unique files), scans it with SHA-256 into a
database, maybe changes the tree, acts, and compares the tree afterwards
with what the plan said, through os.stat and the bytes of every file:

  * --dry-run: the plan (-0, parsed exactly) keeps the first file of each
    group and deletes every other name; nothing in the tree changed
    (inode, size, mtime, ctime and bytes of every name);
  * --delete: every name the plan deleted is gone, each kept name is the
    same inode with the same bytes, unique files untouched; stdout says
    "deleted" for exactly the names planned; the --log JSON lines name
    each, with done true (hostile names recovered exactly from them);
  * --link --keep newest / oldest / PATTERN: every name of a group is the
    kept inode afterwards, with the kept file's mode and mtime; a pattern
    that matches no file leaves its group alone (exit 3, a warning);
  * a copy changed since the scan (bytes and mtime restored): left alone
    (its ctime), the others done, exit 3; a kept copy changed or removed:
    the whole group left alone, the other copies still there; a copy whose
    row has no ctime (an older or edited database) and whose bytes changed:
    left alone because its bytes differ from the kept copy's;
  * under the race shim, copies rewritten while fidx compares them (the
    first read trips it): a small one (read whole at once) left alone as
    changed while it was compared, a large one as its bytes differ;
  * a FIFO and a device node swapped in for copies: left alone, and (strace)
    never opened but with O_PATH;
  * as nobody, a copy in a read-only folder: "Permission denied", kept;
  * a copy on another file system (a tmpfs, as root): every action leaves
    it alone ("leave" in the plan: an overlay, NFS or FUSE mount can show
    the kept file itself under another device);
  * a folder on a copy's path replaced by a symlink after the scan: nothing
    followed, nothing deleted; a copy with a name outside the scanned tree:
    deleted, its bytes not counted as reclaimed; as nobody, --link of
    root's copy in a sticky folder: refused before anything is linked;
  * --reflink where the file system cannot share extents: left alone with
    why, nothing changed; on XFS (a loop image, when mkfs.xfs and root are
    there) the copies share the kept file's extents (FIEMAP's physical
    offsets equal) and keep their own inodes and bytes;
  * refusals (exit 2, one line, nothing changed): two actions, --json with
    an action, --keep without one, --empty with an action, a scan made on
    another host.
"""

import fcntl
import json
import os
import re
import stat
import shutil
import struct
import subprocess

import lib
from lib import Checker, TempDir, run_fidx, write

NOBODY = 65534
NAMES = {  # group -> names (relative to the tree), the first of each group sorts first
	"big": [b"a/big", b"b/big", b"b/big-link", b"c/big"],
	"small": [b"a/small", b"c/small"],
	"odd": [b"a/odd\nname\xff", b"b/odd-copy"],
}
LINKED = (b"b/big", b"b/big-link")  # two names of one inode
UNIQUE = [b"a/unique1", b"c/unique2"]


def build(top, mode=0o644):
	"""Makes the tree under top: the groups of NAMES (hard link LINKED), the unique files."""
	data = {"big": os.urandom(300000), "small": os.urandom(3000), "odd": os.urandom(70000)}
	for d in (b"a", b"b", b"c"):
		os.makedirs(top + b"/" + d, exist_ok=True)
	for group, names in NAMES.items():
		for n in names:
			if n == LINKED[1]:
				os.link(top + b"/" + LINKED[0], top + b"/" + n)
			else:
				write(top + b"/" + n, data[group], mode)
	for n in UNIQUE:
		write(top + b"/" + n, os.urandom(5000), mode)
	return data


def overwrite(path):
	"""Changes the first byte of a file and puts its mtime back (its ctime moves)."""
	st = os.stat(path)
	with open(path, "r+b") as f:
		first = f.read(1)
		f.seek(0)
		f.write(b"Y" if first == b"X" else b"X")
	os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def snapshot(top):
	"""name -> (ino, size, mtime_ns, ctime_ns, mode, bytes) of every regular file below top."""
	out = {}
	for d, _, files in os.walk(top):
		for f in files:
			p = os.path.join(d, f)
			st = os.lstat(p)
			with open(p, "rb") as fh:
				out[os.path.relpath(p, top)] = (st.st_ino, st.st_size, st.st_mtime_ns,
								 st.st_ctime_ns, st.st_mode, fh.read())
	return out


def scan(top, db, uid=None):
	"""Scans top into db with SHA-256, after the files' times settled."""
	lib.settle(top)
	res = run_fidx("scan", "-q", "--hash", "sha256", "-o", db, top)
	assert res.rc == 0, res
	if uid is not None:
		os.chown(db, uid, uid)
		os.chown(os.path.dirname(db), uid, uid)


def plan_of(out, top):
	"""The -0 plan as {group's first name: [(verb, name)]}, names relative to top, and its total."""
	fields = out.split(b"\0")
	groups, cur, total = {}, None, None
	for f in fields:
		if f.startswith(b"plan: "):
			total = f
		elif b" copies of " in f and b"sha256 " in f:
			cur = []
		elif f == b"" and cur is not None:
			groups[cur[0][1]] = cur
			cur = None
		elif cur is not None:
			verb, path = f.split(b" ", 1)
			cur.append((verb, os.path.relpath(path, top)))
	return groups, total


def main():
	chk = Checker()
	if os.geteuid() != 0:
		chk.skip("dupes --delete/--link/--reflink", "not root: neither another user nor mounts")
		chk.done()
	with TempDir() as td:
		base = os.fsencode(td.path)
		os.chmod(base, 0o755)
		n = [0]

		def case(mode=0o644, owner=None):
			"""A new folder with a tree and its database: (top, db, data, snapshot)."""
			n[0] += 1
			top = base + b"/t%d" % n[0]
			os.makedirs(top)
			data = build(top, mode)
			if owner is not None:
				for d, dirs, files in os.walk(top):
					for x in dirs + files:
						os.chown(os.path.join(d, x), owner, owner, follow_symlinks=False)
				os.chown(top, owner, owner)
			dbdir = base + b"/db%d" % n[0]
			os.makedirs(dbdir)
			db = dbdir + b"/x.db"
			scan(top, db, uid=owner)
			return top, db, data, snapshot(top)

		with chk.guard("--dry-run"):
			top, db, data, before = case()
			res = run_fidx("dupes", "--delete", "--dry-run", "-0", db)
			groups, total = plan_of(res.out, top)
			# files are listed by their first name, each name in order: sorted names
			want = {sorted(v)[0]: [(b"keep", sorted(v)[0])] + [(b"delete", x) for x in sorted(v)[1:]]
				for v in NAMES.values()}
			chk.eq("--dry-run: the plan keeps the first file of each group, deletes the rest",
			       groups, want)
			chk.ok("--dry-run: the plan's total", total.startswith(
				b"plan: delete 4 files (5 names), ") and total.endswith(
				b" (%d bytes)" % (2 * 300000 + 3000 + 70000)), repr(total))
			chk.ok("--dry-run: exit 0, nothing on stderr", res.rc == 0 and not res.err, repr(res))
			chk.eq("--dry-run: nothing changed in the tree", snapshot(top), before)

		with chk.guard("--delete"):
			top, db, data, before = case()
			log = top + b".log"
			res = run_fidx("dupes", "--delete", "-0", "--log", log, db)
			after = snapshot(top)
			planned = [nm for g in want.values() for v, nm in g if v == b"delete"]
			kept = [nm for g in want.values() for v, nm in g if v == b"keep"]
			chk.eq("--delete: the names planned are gone, nothing else", sorted(after),
			       sorted(set(before) - set(planned)))
			chk.ok("--delete: each kept name the same inode with the same bytes and times",
			       all(after[k] == before[k] for k in kept + UNIQUE))
			done = [os.path.relpath(l[len(b"deleted "):], top) for l in res.out.split(b"\0")
				if l.startswith(b"deleted /")]
			chk.eq("--delete: stdout says deleted for each name planned (and only those)",
			       sorted(done), sorted(planned))
			chk.ok("--delete: exit 0, nothing on stderr", res.rc == 0 and not res.err, repr(res))
			entries = [json.loads(l) for l in open(log, "rb").read().splitlines()]

			def path_of(e, key):
				if key + "_base64" in e:
					import base64
					return base64.b64decode(e[key + "_base64"])
				return e[key].encode()
			chk.eq("--log: one line a name, all done, each naming its kept copy",
			       sorted((os.path.relpath(path_of(e, "path"), top), e["done"], e["action"])
				      for e in entries),
			       sorted((p, True, "delete") for p in planned))
			chk.ok("--log: size, sha256, dev and ino of each",
			       all(e["size"] == len(data[g]) for e in entries for g in NAMES
				   if os.path.relpath(path_of(e, "path"), top) in NAMES[g]) and
			       all(len(e["sha256"]) == 64 and e["ino"] == before[os.path.relpath(
				       path_of(e, "path"), top)][0] for e in entries))

		for rule, pick in (("newest", lambda ns: ns[-1]), ("oldest", lambda ns: ns[0]),
				   ("*/c/*", lambda ns: [x for x in ns if x.startswith(b"c/")][0])):
			with chk.guard("--link --keep " + rule):
				n[0] += 1
				top = base + b"/t%d" % n[0]
				os.makedirs(top)
				build(top)
				# distinct mtimes in the order of the names, sorted
				order = sorted(nm for v in NAMES.values() for nm in v if nm != LINKED[1])
				for i, nm in enumerate(order):
					os.utime(top + b"/" + nm, ns=(1600000000 * 10**9 + i * 10**9,) * 2)
				dbdir = base + b"/db%d" % n[0]
				os.makedirs(dbdir)
				db = dbdir + b"/x.db"
				scan(top, db)
				before = snapshot(top)
				res = run_fidx("dupes", "--link", "--keep", rule, db)
				after = snapshot(top)
				good = res.rc == (3 if rule.startswith("*") else 0)
				for group, names in NAMES.items():
					files = sorted(nm for nm in names if nm != LINKED[1])
					k = pick(files) if rule != "*/c/*" or any(
						x.startswith(b"c/") for x in files) else None
					if k is None:
						good &= all(after[x] == before[x] for x in names)
						continue
					good &= all(after[x][0] == before[k][0] and after[x][5] == data_of(before, k)
						    and after[x][4] == before[k][4] and after[x][2] == before[k][2]
						    for x in names)
				chk.ok("--link --keep %s: every name of a group is the kept file now" % rule,
				       good, repr(res))
				if rule.startswith("*"):
					chk.ok("--keep PATTERN matching no file: its group left alone, a warning",
					       b"leave " in res.out and b"no file matches --keep" in res.err,
					       repr(res))

		with chk.guard("changed since the scan"):
			top, db, data, before = case()
			victim = top + b"/c/big"
			overwrite(victim)
			res = run_fidx("dupes", "--delete", db)
			chk.ok("a copy changed since the scan (mtime restored): left alone, its ctime",
			       os.path.exists(victim) and b"'%s' not deleted: changed since it was scanned"
			       b" (its ctime)" % victim in res.err and res.rc == 3, repr(res))
			chk.ok("... the other copies deleted", not os.path.exists(top + b"/b/big") and
			       not os.path.exists(top + b"/c/small"))

			top, db, data, before = case()
			kept = top + b"/a/big"
			overwrite(kept)
			os.unlink(top + b"/a/small")
			res = run_fidx("dupes", "--delete", db)
			after = snapshot(top)
			chk.ok("a kept copy changed, another removed: their groups left alone",
			       all(after.get(x) == before[x] for x in (b"b/big", b"b/big-link", b"c/big",
								   b"c/small")) and res.rc == 3 and
			       b"the kept copy '%s': changed since it was scanned (its ctime)" % kept
			       in res.err and b"the kept copy '%s/a/small': cannot open" % top in res.err,
			       repr(res))

			top, db, data, before = case()
			victim = top + b"/c/small"
			lib.connect(db).execute("UPDATE file SET ctime_ns = NULL WHERE path = ?",
						(os.fsdecode(victim),)).connection.commit()
			overwrite(victim)
			res = run_fidx("dupes", "--delete", db)
			chk.ok("no ctime recorded, bytes changed: left alone, its bytes differ",
			       os.path.exists(victim) and b"'%s' not deleted: its bytes differ from the kept"
			       b" copy's now" % victim in res.err, repr(res))

		with chk.guard("changed while compared"):
			if not lib.SHIM:
				chk.skip("copies changed while fidx compares them", "no FIDX_SHIM")
			else:
				n[0] += 1
				top = base + b"/t%d" % n[0]
				os.makedirs(top)
				small, large = os.urandom(9000), os.urandom(3 << 20)
				for name, blob in ((b"a-small", small), (b"fidx-race-modify-small", small),
						   (b"b-large", large), (b"fidx-race-modify-large", large)):
					write(top + b"/" + name, blob)
				db = base + b"/race.db"
				scan(top, db)
				res = run_fidx("dupes", "--delete", db, preload=lib.SHIM)
				chk.ok("a copy rewritten after its first bytes were compared (read whole at"
				       " once): left alone, it changed while it was compared",
				       os.path.exists(top + b"/fidx-race-modify-small") and
				       b"fidx-race-modify-small' not deleted: changed while it was compared"
				       in res.err, repr(res))
				chk.ok("a large copy rewritten ahead of the comparison: left alone, its bytes"
				       " differ", os.path.exists(top + b"/fidx-race-modify-large") and
				       b"fidx-race-modify-large' not deleted: its bytes differ from the kept"
				       b" copy's now" in res.err and res.rc == 3, repr(res))

		with chk.guard("a FIFO and a device node in place of copies"):
			top, db, data, before = case()
			os.unlink(top + b"/c/small")
			os.mkfifo(top + b"/c/small")
			os.unlink(top + b"/b/odd-copy")
			os.mknod(top + b"/b/odd-copy", stat.S_IFCHR | 0o600, os.makedev(1, 3))
			log = base + b"/strace.log"
			p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat,openat2", "-o",
					    log, lib.FIDX, "dupes", "--delete", db],
					   capture_output=True, timeout=120, env=dict(
						   os.environ, ASAN_OPTIONS=":".join(filter(None, [
							   os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"]))))
			opens = [m.group(1) for m in re.finditer(
				rb'open(?:at2?)?\((?:AT_FDCWD|\d+), "(?:[^"]*/)?(?:small|odd-copy)", ([A-Z_|]+)',
				read(log))]
			chk.ok("a FIFO and a device node swapped in for copies: left alone, no longer"
			       " regular files", p.returncode == 3 and p.stderr.count(
				       b"changed since it was scanned (no longer a regular file)") == 2,
			       repr(p.stderr))
			chk.ok("... and never opened but with O_PATH (strace)",
			       opens and all(b"O_PATH" in f for f in opens), repr(opens))

		with chk.guard("read-only folder"):
			top, db, data, before = case(owner=NOBODY)
			os.chmod(top + b"/c", 0o555)
			res = run_fidx("dupes", "--delete", db, uid=NOBODY)
			after = snapshot(top)
			chk.ok("as nobody, copies in a read-only folder: Permission denied, kept",
			       b"c/big" in after and b"c/small" in after and
			       b"'%s/c/big' not deleted: cannot delete: Permission denied" % top in res.err
			       and res.rc == 3, repr(res))
			chk.ok("... the others deleted", b"b/big" not in after and b"b/odd-copy" not in after)

		with chk.guard("another file system"):
			n[0] += 1
			top = base + b"/t%d" % n[0]
			os.makedirs(top + b"/m")
			td.mount_tmpfs(os.fsdecode(top + b"/m"), "4m")
			blob = os.urandom(200000)
			write(top + b"/a", blob)
			write(top + b"/m/b", blob)
			db = base + b"/fs.db"
			scan(top, db)
			before = snapshot(top)
			for action in ("--link", "--reflink", "--delete"):
				res = run_fidx("dupes", action, db)
				chk.ok("%s: a copy on another file system is left alone: 'leave' in the plan,"
				       " a warning, exit 3" % action,
				       snapshot(top) == before and b"\nleave %s/m/b\n" % top in res.out and
				       b"on another file system than the kept one left alone" in res.err and
				       res.rc == 3, repr(res))

		with chk.guard("symlinks, sticky folders, names outside the scan"):
			n[0] += 1
			top = base + b"/t%d" % n[0]
			blob = os.urandom(20000)
			os.makedirs(top + b"/sub")
			write(top + b"/k", blob)
			write(top + b"/sub/x", blob)
			os.makedirs(top + b"/outside")
			os.link(top + b"/sub/x", top + b"/outside/x")
			db = base + b"/sym.db"
			lib.settle(top)
			assert run_fidx("scan", "-q", "--hash", "sha256", "-o", db, top + b"/k",
					top + b"/sub").rc == 0
			os.rename(top + b"/sub", top + b"/sub.old")
			os.symlink(b"outside", top + b"/sub")
			res = run_fidx("dupes", "--delete", db)
			chk.ok("a folder on a copy's path replaced by a symlink: not followed, nothing deleted",
			       os.path.exists(top + b"/outside/x") and os.path.exists(top + b"/sub.old/x") and
			       b"a folder on its path, is a symlink now" in res.err and res.rc == 3,
			       repr(res))
			os.unlink(top + b"/sub")
			os.rename(top + b"/sub.old", top + b"/sub")
			res = run_fidx("dupes", "--delete", db)
			chk.ok("a copy with a name the scans did not record: deleted, its bytes not counted",
			       not os.path.exists(top + b"/sub/x") and read(top + b"/outside/x") == blob and
			       b"has 1 more name the scans did not record" in res.err and
			       b"deleted 1 file (1 name), 0 B (0 bytes) reclaimed" in res.out, repr(res))

			n[0] += 1
			top = base + b"/t%d" % n[0]
			os.makedirs(top + b"/s")
			os.chown(top, NOBODY, NOBODY)
			write(top + b"/a", blob, 0o666)
			write(top + b"/s/b", blob)
			os.chmod(top + b"/s", 0o1777)
			db = base + b"/sticky.db"
			scan(top, db, uid=NOBODY)
			res = run_fidx("dupes", "--link", db, uid=NOBODY)
			chk.ok("as nobody, --link of a root's copy in a sticky folder: refused, no name left",
			       os.listdir(top + b"/s") == [b"b"] and os.stat(top + b"/s/b").st_nlink == 1 and
			       b"in a sticky folder" in res.err and res.rc == 3, repr(res))

		with chk.guard("--reflink on XFS"):
			reflink_on_xfs(chk, td, base)

		with chk.guard("refusals"):
			top, db, data, before = case()
			for label, args in (("--delete --link", ["--delete", "--link"]),
					    ("--json with --delete", ["--delete", "--json"]),
					    ("--keep without an action", ["--keep", "newest"]),
					    ("--dry-run without an action", ["--dry-run"]),
					    ("--empty with --delete", ["--delete", "--empty"])):
				lib.check_fatal(chk, label, run_fidx("dupes", *args, db))
			lib.connect(db).execute("UPDATE scan SET host = 'elsewhere'").connection.commit()
			res = run_fidx("dupes", "--delete", db)
			lib.check_fatal(chk, "a scan made on another host", res, mention=b"elsewhere")
			chk.eq("refusals: nothing changed in the tree", snapshot(top), before)
	chk.done()


def data_of(snap, name):
	"""The bytes of name in a snapshot."""
	return snap[name][5]


def read(path):
	"""The bytes of a file."""
	with open(path, "rb") as f:
		return f.read()


def extents(path):
	"""The physical offsets of a file's extents (FIEMAP), after a sync."""
	FS_IOC_FIEMAP = 0xC020660B
	with open(path, "rb") as f:
		os.fsync(f.fileno())
		req = bytearray(struct.pack("=QQIIII", 0, 2**64 - 1, 1, 0, 32, 0) + b"\0" * 56 * 32)
		fcntl.ioctl(f.fileno(), FS_IOC_FIEMAP, req)
		count = struct.unpack_from("=I", req, 20)[0]
		return [struct.unpack_from("=QQQ", req, 32 + 56 * i)[1] for i in range(count)]


def reflink_on_xfs(chk, td, base):
	"""--reflink on a loop-mounted XFS: the copies share the kept file's extents."""
	if not shutil.which("mkfs.xfs"):
		chk.skip("--reflink on XFS", "mkfs.xfs is not installed (xfsprogs)")
		return
	img, mnt = base + b"/xfs.img", base + b"/xfs"
	with open(img, "wb") as f:
		f.truncate(320 << 20)
	os.makedirs(mnt)
	made = subprocess.run(["mkfs.xfs", "-q", "-m", "reflink=1", img], capture_output=True)
	mounted = made.returncode == 0 and subprocess.run(
		["mount", "-o", "loop", img, mnt], capture_output=True).returncode == 0
	if not mounted:
		chk.skip("--reflink on XFS", "no XFS loop mount here: %s" % made.stderr[-200:])
		return
	td.mounts.append(os.fsdecode(mnt))
	blob = os.urandom(3 << 20)
	for nm in (b"a", b"b", b"c"):
		write(mnt + b"/" + nm, blob)
	db = base + b"/xfs.db"
	scan(mnt, db)
	inodes = {nm: os.stat(mnt + b"/" + nm).st_ino for nm in (b"a", b"b", b"c")}
	chk.ok("XFS: the copies have extents of their own first",
	       extents(mnt + b"/b") != extents(mnt + b"/a"))
	res = run_fidx("dupes", "--reflink", db)
	chk.ok("--reflink: exit 0, reflinked each copy", res.rc == 0 and res.out.count(
		b"\nreflinked /") == 2, repr(res))
	chk.ok("--reflink: the copies share the kept file's extents, keep their inodes and bytes",
	       all(extents(mnt + b"/" + nm) == extents(mnt + b"/a") and read(mnt + b"/" + nm) == blob
		   and os.stat(mnt + b"/" + nm).st_ino == inodes[nm] for nm in (b"b", b"c")))


if __name__ == "__main__":
	main()
