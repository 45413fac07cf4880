#!/usr/bin/python3
"""t_complete.py - the shell completions (completions/) in bash, fish and zsh themselves.

Each shell loads fidx's completion for a `fidx` on its PATH (the binary under
test) and completes command lines:

  * bash: the completion function is called with COMP_WORDS set, as bash's
    completion does, and COMPREPLY read back;
  * fish: `complete -C LINE` prints what fish would offer;
  * zsh: an interactive zsh in a pseudo-terminal (zsh/zpty) with compinit
    is sent the line and two TABs, and the screen read until it shows what
    is wanted (at most 30 s: no fixed sleep to lose on a loaded machine).

Checked against what fidx itself says: for every command, the options
completed after "-" in bash and fish are exactly those its --help lists
(parsed from --help, not from the completion helper); the commands after
"fidx" are those of `fidx --help`; "fidx du" offers du and dupes; an option
taking a FILE or DB (dupes --log, export -o) completes a file name, one
taking another value (scan --hash) offers nothing; a positional argument
completes file names; `fidx help sc` offers scan and scans.  zsh: "dupes
--de" becomes "--delete", "du" lists du and dupes with their summaries,
"--log PREFIX" completes the file.  A shell that is not installed is
skipped with a note (scripts/install-deps installs all three).
"""

import os
import re
import shutil
import subprocess

import lib
from lib import Checker, TempDir

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMPLETIONS = os.path.join(REPO, "completions")

BASH = r'''
source "$1"
shift
COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_fidx
printf '%s\n' "${COMPREPLY[@]}"
'''

ZSH = r'''
zmodload zsh/zpty
setopt extendedglob
# Reads the terminal until it shows $1 (or 30 s pass); leaves it all in $out.  The match
# is on the text without its escape sequences (zsh draws the space after a completed word
# in bold: "--delete\e[1m \e[0m"), as the script reads the screen.
wait_for() {
	local line t=0
	out=""
	while [[ ${out//$'\e'\[[0-9;?]#[a-zA-Z]/} != *"$1"* ]] && (( t < 300 )); do
		if zpty -r -t z line; then out+=$line; else sleep 0.1; (( t++ )); fi
	done
}
zpty -b z zsh -f -i
zpty -w z "PS1='>'; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D;
 zstyle ':completion:*' list-prompt ''; zstyle ':completion:*' menu no; LISTMAX=1000;
 print SETUP''DONE"
wait_for SETUPDONE
zpty -w -n z 'fidx '"$2"$'\t\t'
wait_for "$3"
print -r -- "$out"
zpty -d z
'''


def help_options(cmd):
	"""The options a command's --help lists: every -x and --long at the start of a line."""
	res = lib.run_fidx(cmd, "--help")
	opts = set()
	for line in res.out.decode().split("\n"):
		m = re.match(r"^  (-\S), (--[\w-]+)|^      (--[\w-]+)", line)
		if m:
			opts.update(o for o in m.groups() if o)
	return opts


def commands():
	"""The commands `fidx --help` lists."""
	out = lib.run_fidx("--help").out.decode()
	block = out.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
	return {line.split()[0] for line in block.split("\n") if line.strip()} - {"help"}


def main():
	chk = Checker()
	with TempDir() as td:
		top = td.path
		bindir = os.path.join(top, "bin")
		os.makedirs(bindir)
		os.symlink(lib.FIDX, os.path.join(bindir, "fidx"))
		env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"], HOME=top,
			   XDG_CONFIG_HOME=top, XDG_DATA_HOME=top)
		files = os.path.join(top, "files")
		os.makedirs(files)
		for name in ("case.db", "case.log", "other"):
			open(os.path.join(files, name), "w").close()
		pre = os.path.join(files, "case.")
		cmds = sorted(commands())
		want_cmds = set(cmds) | {"help"}

		def bash(*words):
			res = subprocess.run(["bash", "-c", BASH, "t", os.path.join(COMPLETIONS, "fidx.bash"),
					      "fidx", *words], env=env, capture_output=True, timeout=60)
			return {l for l in res.stdout.decode().split("\n") if l}

		def fish(line):
			res = subprocess.run(["fish", "-N", "-c", "source %s; complete -C %s" % (
				os.path.join(COMPLETIONS, "fidx.fish"), shlex_quote("fidx " + line))],
				env=env, capture_output=True, timeout=60)
			return {l.split("\t")[0] for l in res.stdout.decode().split("\n") if l}

		shells = {"bash": bash, "fish": fish}
		# Under a sanitizer build only bash drives fidx: what the shells do with its answers
		# does not change with the build, and each start costs ten times as much.
		asan = lib.is_asan()
		for shell, complete in shells.items():
			if asan and shell != "bash":
				chk.skip("%s completion" % shell, "sanitizer build: run on the normal build")
				continue
			if not shutil.which(shell):
				chk.skip("%s completion" % shell, "%s is not installed" % shell)
				continue
			with chk.guard(shell):
				got_cmds = complete("")
				chk.eq("%s: the commands of fidx --help (and help)" % shell,
				       got_cmds - {"--help", "--version"}, want_cmds)
				bad = []
				for cmd in cmds:
					got = complete(cmd, "-") if shell == "bash" else complete(cmd + " -")
					if got != help_options(cmd):
						bad.append((cmd, sorted(got ^ help_options(cmd))))
				chk.ok("%s: every command's options are those its --help lists" % shell,
				       not bad, repr(bad))
				args = {
					"fidx du": (["du"], "du"),
					"dupes --de": (["dupes", "--de"], "dupes --de"),
					"dupes --log FILE": (["dupes", "--log", pre], "dupes --log " + pre),
					"export -o FILE": (["export", "-o", pre], "export -o " + pre),
					"scan --hash": (["scan", "--hash", ""], "scan --hash "),
					"scans DB": (["scans", pre], "scans " + pre),
					"help sc": (["help", "sc"], "help sc"),
				}
				want = {
					"fidx du": {"du", "dupes"},
					"dupes --de": {"--delete"},
					"dupes --log FILE": {pre + "db", pre + "log"},
					"export -o FILE": {pre + "db", pre + "log"},
					"scan --hash": set(),
					"scans DB": {pre + "db", pre + "log"},
					"help sc": {"scan", "scans"},
				}
				for label, (words, line) in args.items():
					got = complete(*words) if shell == "bash" else complete(line)
					chk.eq("%s: %s" % (shell, label), got, want[label])

		if asan:
			chk.skip("zsh completion", "sanitizer build: run on the normal build")
		elif not shutil.which("zsh"):
			chk.skip("zsh completion", "zsh is not installed")
		else:
			def zsh(line, expect):
				res = subprocess.run(["zsh", "-f", "-c", ZSH, "t", COMPLETIONS, line, expect],
						     env=env, capture_output=True, timeout=90)
				screen = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", res.stdout.decode(errors="replace"))
				return screen.replace("\r", "\n")
			with chk.guard("zsh"):
				screen = zsh("dupes --de", "fidx dupes --delete ")
				chk.ok("zsh: 'dupes --de' becomes 'dupes --delete'",
				       "fidx dupes --delete " in screen, repr(screen[-300:]))
				screen = zsh("du", "groups of files with identical content")
				chk.ok("zsh: 'du' lists du and dupes with their summaries",
				       re.search(r"du +-- disk usage per directory", screen) and
				       re.search(r"dupes +-- groups of files with identical content", screen),
				       repr(screen[-300:]))
				screen = zsh("dupes --log " + os.path.join(files, "case.d"),
					     "fidx dupes --log %s " % os.path.join(files, "case.db"))
				chk.ok("zsh: '--log PREFIX' completes the file name",
				       "fidx dupes --log %s " % os.path.join(files, "case.db") in screen,
				       repr(screen[-300:]))
	chk.done()


def shlex_quote(s):
	"""s quoted for fish (single quotes; no quote in our lines)."""
	assert "'" not in s
	return "'%s'" % s


if __name__ == "__main__":
	main()
