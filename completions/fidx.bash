# bash completion for fidx.  The commands and each command's options come from
# the fidx being completed (`fidx --completion-helper`, `fidx COMMAND
# --completion-helper`: one a line, fields separated by tabs), so they are
# always those of the installed version.  An option whose argument is a DB or
# a FILE, and every argument that is not an option, completes file names.

# Completes the command names (and fidx's own options) from word $1.
_fidx_commands() {
	local line names=()
	while IFS= read -r line; do
		names+=("${line%%$'\t'*}")
	done < <("${COMP_WORDS[0]}" --completion-helper 2>/dev/null)
	mapfile -t COMPREPLY < <(compgen -W "${names[*]} --help --version" -- "$1")
}

_fidx() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local cmd="" i line rest short long arg
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	COMPREPLY=()
	if [[ -z $cmd || ($cmd == help && $i -eq $((COMP_CWORD - 1))) ]]; then
		_fidx_commands "$cur"
		return
	fi
	local options=() takes=""
	# Tabs are split by hand: read would merge the empty fields.
	while IFS= read -r line; do
		short=${line%%$'\t'*} rest=${line#*$'\t'}
		long=${rest%%$'\t'*} rest=${rest#*$'\t'}
		arg=${rest%%$'\t'*}
		[[ -n $short ]] && options+=("$short")
		options+=("$long")
		if [[ -n $arg && ($prev == "$long" || $prev == "$short") ]]; then
			takes=$arg
		fi
	done < <("${COMP_WORDS[0]}" "$cmd" --completion-helper 2>/dev/null)
	case $takes in
	DB | FILE | "") ;;
	*) return ;; # a value fidx checks itself (a digest list, a mode, a number)
	esac
	if [[ -z $takes && $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "${options[*]}" -- "$cur")
		return
	fi
	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}

complete -F _fidx fidx
