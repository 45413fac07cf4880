/*
 * browse_win.c - `fidx browse` in the Windows build, which has no curses
 * (Debian packages no ncurses for MinGW): the command is in the table, as on
 * Linux, and says what to use instead.
 */
#include <string.h>

#include "builtin.h"
#include "diag.h"

int cmd_browse(int argc, char **argv, const struct fidx_command *cmd)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: fidx browse [DB] [PATH]\n\n%s.\n\nNot in the Windows build: it draws"
		       " with ncurses, which has no Windows build in Debian.  'fidx report' shows"
		       " the same tree as one HTML page; fidx browse on Linux reads the same"
		       " database.\n", cmd->summary);
		return 0;
	}
	fidx_error("browse is not in the Windows build (no curses): use 'fidx report DB -o"
		   " report.html', or fidx browse on Linux with the same database");
	return cmd->failed;
}
