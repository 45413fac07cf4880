# fish completion for fidx.  The commands and each command's options come from
# the fidx being completed (`fidx --completion-helper`, `fidx COMMAND
# --completion-helper`: one a line, fields separated by tabs), so they are
# always those of the installed version.  An option whose argument is a DB or
# a FILE, and every argument that is not an option, completes file names.

# The command word of the line being completed, or nothing.
function __fidx_command
    set -l words (commandline -opc)
    for w in $words[2..-1]
        if not string match -q -- '-*' $w
            echo $w
            return
        end
    end
end

# The options of the command being completed, as fish's "candidate<TAB>description".
function __fidx_options
    set -l cmd (__fidx_command)
    test -n "$cmd"; or return
    fidx $cmd --completion-helper 2>/dev/null | while read -l line
        set -l f (string split \t -- $line)
        test -n "$f[1]"; and printf '%s\t%s\n' $f[1] $f[4]
        printf '%s\t%s\n' $f[2] $f[4]
    end
end

# Whether the previous word is an option of the command that takes an argument
# other than a DB or a FILE (then nothing is offered).
function __fidx_takes_other
    set -l cmd (__fidx_command)
    set -l prev (commandline -opc)[-1]
    test -n "$cmd"; or return 1
    fidx $cmd --completion-helper 2>/dev/null | while read -l line
        set -l f (string split \t -- $line)
        if test -n "$f[3]"; and contains -- $prev $f[1] $f[2]
            contains -- $f[3] DB FILE; and return 1
            return 0
        end
    end
    return 1
end

# Whether the line so far is "fidx" or "fidx help": a command name comes next.
function __fidx_wants_command
    set -l cmd (__fidx_command)
    test -z "$cmd"; and return 0
    set -l words (commandline -opc)
    test "$cmd" = help -a (count $words) -eq 2
end

# Whether an option of the command comes next (the word being completed starts with "-").
function __fidx_wants_option
    not __fidx_wants_command; and string match -q -- '-*' (commandline -ct)
end

# Whether a file name comes next: an argument, or the DB or FILE of an option.
function __fidx_wants_file
    not __fidx_wants_command; and not string match -q -- '-*' (commandline -ct)
    and not __fidx_takes_other
end

complete -c fidx -f
complete -c fidx -n __fidx_wants_command -a '(fidx --completion-helper 2>/dev/null)'
complete -c fidx -n __fidx_wants_option -a '(__fidx_options)'
complete -c fidx -n __fidx_wants_file -F
