/*
 * cli.c - option tables, --help and option errors shared by the subcommands.
 */
#include "cli.h"

#include <string.h>

#include "diag.h"

void fidx_cli_longopts(const struct fidx_option *opts, size_t n, struct option *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = opts[i].opt;
	memset(&out[n], 0, sizeof(out[n]));
}

void fidx_cli_usage(FILE *out, const struct fidx_option *opts, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct fidx_option *d = &opts[i];
		const char *arg = d->arg ? d->arg : "";
		const char *sep = d->arg ? " " : "";
		char left[64];
		int c = d->opt.val;
		if (c > 0 && c < 256) /* has a short form */
			snprintf(left, sizeof(left), "-%c, --%s%s%s", c, d->opt.name, sep, arg);
		else
			snprintf(left, sizeof(left), "    --%s%s%s", d->opt.name, sep, arg);
		if (strlen(left) > 20)
			fprintf(out, "  %s\n  %-21s%s\n", left, "", d->help);
		else
			fprintf(out, "  %-21s%s\n", left, d->help);
	}
}

void fidx_cli_bad_option(const char *command, int c, char **argv)
{
	/* getopt_long() leaves optind past the offending word (or its argument). */
	const char *word = argv[optind - 1];
	if (c == ':')
		fidx_error("option '%s' needs an argument (see 'fidx %s --help')",
			   fidx_quote(word), command);
	else if (optopt > 0 && optopt < 256 && word[0] == '-' && word[1] != '-')
		fidx_error("unknown option '-%c' (see 'fidx %s --help')", optopt, command);
	else
		fidx_error("unknown option '%s' (see 'fidx %s --help')", fidx_quote(word), command);
}

int fidx_query_option(int c, const char *arg, struct fidx_query_args *a)
{
	switch (c) {
	case FIDX_OPT_DB: a->db = arg; return 1;
	case FIDX_OPT_SCAN: a->scan = arg; return 1;
	case FIDX_OPT_JSON: a->json = true; return 1;
	case '0': a->nul = true; return 1;
	default: return 0;
	}
}
