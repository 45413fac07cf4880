/*
 * cli.c - option tables, --help and option errors shared by the subcommands.
 */
#include "cli.h"

#include <stdlib.h>
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

/* Returns the option of opts whose getopt value is val, or NULL. */
static const struct fidx_option *option_by_val(const struct fidx_option *opts, size_t n, int val)
{
	for (size_t i = 0; i < n; i++)
		if (opts[i].opt.val == val)
			return &opts[i];
	return NULL;
}

void fidx_cli_bad_option(const char *command, int c, char **argv, const struct fidx_option *opts,
			 size_t n)
{
	/*
	 * getopt_long() leaves optind past a long option's word, and past a
	 * cluster of short ones only when the refused letter is its last: the
	 * word tells the form, optopt (the refused option's value, 0 for a long
	 * name it does not know) which option.
	 */
	const char *word = argv[optind - 1];
	bool long_form = word[0] == '-' && word[1] == '-';
	const struct fidx_option *known = optopt ? option_by_val(opts, n, optopt) : NULL;
	char shown[8];

	snprintf(shown, sizeof(shown), "-%c", optopt > 0 && optopt < 256 ? optopt : '?');
	if (c == ':' || (known && long_form)) {
		/* a missing argument, or --name=value given to an option without one */
		const char *what = c == ':' ? "needs an argument" : "takes no argument";
		if (long_form && known)
			fidx_error("option '--%s' %s (see 'fidx %s --help')", known->opt.name, what,
				   command);
		else
			fidx_error("option '%s' %s (see 'fidx %s --help')", fidx_quote(shown), what,
				   command);
		return;
	}
	if (!long_form) {
		fidx_error("unknown option '%s' (see 'fidx %s --help')", fidx_quote(shown), command);
		return;
	}
	/* An unknown long name, or an abbreviation of several. */
	size_t len = strcspn(word + 2, "=");
	char names[256] = "";
	size_t used = 0, matches = 0;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(opts[i].opt.name, word + 2, len) != 0)
			continue;
		matches++;
		if (used < sizeof(names))
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s--%s",
						 used ? ", " : "", opts[i].opt.name);
	}
	char *name = strndup(word, len + 2);
	if (matches > 1)
		fidx_error("option '%s' is ambiguous: %s (see 'fidx %s --help')",
			   fidx_quote(name ? name : word), names, command);
	else
		fidx_error("unknown option '%s' (see 'fidx %s --help')", fidx_quote(name ? name : word),
			   command);
	free(name);
}

const char *fidx_cli_db(const char *given)
{
	const char *env = getenv("FIDX_DB");
	return given ? given : env && *env ? env : "fidx.db";
}

const char *fidx_cli_db_origin(const char *path)
{
	const char *env = getenv("FIDX_DB");
	return path && path == env ? " (from FIDX_DB)" : "";
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
