/*
 * options.c - the one option parser of the commands, and their --help (options.h).
 *
 * The table becomes getopt_long()'s: a short letter is its own value, a
 * long-only option gets LONG_ONLY + its index in the table.  getopt runs
 * with opterr = 0 and a leading ':' in the short options, so that every
 * refusal comes back here and is told in one line naming the option as it
 * was given (bad_option()).
 */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "fdutil.h"
#include "scan.h"

/* getopt value of the long-only option at index i of a table. */
#define LONG_ONLY 0x1000

/* Columns of --help: the options' help starts at HELP_COLUMN and ends before WIDTH. */
#define HELP_COLUMN 23
#define WIDTH 80

/* Returns how many options a table holds (FIDX_OPT_END not counted). */
static size_t count_options(const struct fidx_option *options)
{
	size_t n = 0;
	while (options[n].kind != FIDX_OPT_KIND_END)
		n++;
	return n;
}

/* The getopt value of option i of the table. */
static int value_of(const struct fidx_option *options, size_t i)
{
	return options[i].short_name ? options[i].short_name : LONG_ONLY + (int)i;
}

/* Returns the option whose getopt value is val, or NULL (n options). */
static const struct fidx_option *option_by_value(const struct fidx_option *options, size_t n,
						 int val)
{
	for (size_t i = 0; i < n; i++)
		if (value_of(options, i) == val)
			return &options[i];
	return NULL;
}

/*
 * Writes text from column `column`, wrapped at spaces to end before WIDTH;
 * the lines after the first start at HELP_COLUMN.  Within a line the text
 * is kept as it is (two spaces stay two); the spaces where it breaks are
 * dropped.  A word longer than a line stands alone.
 */
static void write_wrapped(FILE *out, const char *text, size_t column)
{
	const char *p = text;
	while (*p == ' ')
		p++;
	while (*p) {
		size_t room = WIDTH - 1 - column, len = strlen(p), cut = len;
		if (len > room) {
			/* The last space that leaves a line of at most room bytes, else the first. */
			cut = 0;
			for (size_t i = 1; i <= room; i++)
				if (p[i] == ' ' && p[i - 1] != ' ')
					cut = i;
			if (!cut)
				cut = strcspn(p, " ");
		}
		size_t n = cut;
		while (n && p[n - 1] == ' ')
			n--;
		fwrite(p, 1, n, out);
		p += cut;
		while (*p == ' ')
			p++;
		if (*p) {
			fprintf(out, "\n%*s", HELP_COLUMN, "");
			column = HELP_COLUMN;
		}
	}
	putc('\n', out);
}

void fidx_options_help(FILE *out, const struct fidx_option *options, const struct fidx_help *help)
{
	fputs(help->text, out);
	if (help->more)
		help->more(out);
	fputs("Options:\n", out);
	for (size_t i = 0; options[i].kind != FIDX_OPT_KIND_END; i++) {
		const struct fidx_option *o = &options[i];
		char left[64];
		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->long_name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->long_name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		if (strlen(left) > HELP_COLUMN - 3)
			fprintf(out, "  %s\n%*s", left, HELP_COLUMN, "");
		else
			fprintf(out, "  %-*s", HELP_COLUMN - 2, left);
		write_wrapped(out, o->help, HELP_COLUMN);
	}
	fprintf(out, "  %-*s", HELP_COLUMN - 2, "-h, --help");
	write_wrapped(out, "show this help", HELP_COLUMN);
	fputs(help->footer, out);
}

/*
 * Reports the option getopt_long() refused (c is ':' for a missing argument,
 * anything else for an unknown option) as one line naming the command and
 * the option as given: a letter of a cluster ('-x' of -axb), an unknown
 * long name, --name=value given to an option of the table that takes no
 * value, a missing argument, or an abbreviation of several long names.
 */
static void bad_option(const char *command, int c, char **argv, const struct fidx_option *options,
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
	const struct fidx_option *known = optopt ? option_by_value(options, n, optopt) : NULL;
	bool is_help = optopt == 'h';
	char shown[8];

	snprintf(shown, sizeof(shown), "-%c", optopt > 0 && optopt < 256 ? optopt : '?');
	if (c == ':' || ((known || is_help) && long_form)) {
		/* a missing argument, or --name=value given to an option without one */
		const char *what = c == ':' ? "needs an argument" : "takes no argument";
		if (long_form && (known || is_help))
			fidx_error("option '--%s' %s (see 'fidx %s --help')",
				   known ? known->long_name : "help", what, command);
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
	for (size_t i = 0; i <= n; i++) {
		const char *name = i < n ? options[i].long_name : "help";
		if (strncmp(name, word + 2, len) != 0)
			continue;
		matches++;
		if (used < sizeof(names))
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s--%s",
						 used ? ", " : "", name);
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

/*
 * Writes the first clause of help (up to a colon, semicolon or parenthesis,
 * at most 60 bytes, cut at a space): the description a shell shows beside
 * an option.
 */
static void write_gist(FILE *out, const char *help)
{
	size_t n = strcspn(help, ":;(\t\n");
	if (n > 60) {
		n = 60;
		while (n > 0 && help[n] != ' ')
			n--;
	}
	while (n > 0 && help[n - 1] == ' ')
		n--;
	fwrite(help, 1, n, out);
}

void fidx_options_completion(FILE *out, const struct fidx_option *options)
{
	for (size_t i = 0; options[i].kind != FIDX_OPT_KIND_END; i++) {
		const struct fidx_option *o = &options[i];
		if (o->short_name)
			fprintf(out, "-%c", o->short_name);
		fprintf(out, "\t--%s\t%s\t", o->long_name, o->arg ? o->arg : "");
		write_gist(out, o->help);
		putc('\n', out);
	}
	fputs("-h\t--help\t\tshow this help\n", out);
}

int fidx_parse_options(int argc, char **argv, const struct fidx_option *options,
		       const struct fidx_help *help)
{
	if (argc == 2 && strcmp(argv[1], FIDX_COMPLETION_HELPER) == 0) {
		fidx_options_completion(stdout, options);
		return FIDX_PARSE_HELP;
	}
	size_t n = count_options(options);
	/* On the stack: parsing allocates nothing, so that out of memory is never a usage error. */
	struct option longopts[FIDX_OPT_MAX + 2] = {{0}};
	char shortopts[3 * FIDX_OPT_MAX + 4];
	int c;

	if (n > FIDX_OPT_MAX)
		abort(); /* a table longer than FIDX_OPT_MAX: a bug of the command */
	size_t k = 0;
	shortopts[k++] = ':';
	for (size_t i = 0; i < n; i++) {
		const struct fidx_option *o = &options[i];
		longopts[i] = (struct option){o->long_name, o->arg ? required_argument : no_argument,
					      NULL, value_of(options, i)};
		if (o->short_name) {
			shortopts[k++] = (char)o->short_name;
			if (o->arg)
				shortopts[k++] = ':';
		}
	}
	longopts[n] = (struct option){"help", no_argument, NULL, 'h'};
	shortopts[k++] = 'h';
	shortopts[k] = '\0';

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct fidx_option *o = c == ':' || c == '?' ? NULL
					      : option_by_value(options, n, c);
		if (c == 'h' && !o) {
			fidx_options_help(stdout, options, help);
			return FIDX_PARSE_HELP;
		}
		if (!o) {
			bad_option(help->command, c, argv, options, n);
			return FIDX_PARSE_ERROR;
		}
		switch (o->kind) {
		case FIDX_OPT_KIND_FLAG:
			*(bool *)o->value = true;
			break;
		case FIDX_OPT_KIND_STRING:
			*(const char **)o->value = optarg;
			break;
		case FIDX_OPT_KIND_CALL:
			if (o->call(o->arg ? optarg : NULL, o->value) < 0)
				return FIDX_PARSE_ERROR;
			break;
		default:
			break;
		}
	}
	return optind;
}

int fidx_jobs_arg(const char *arg, void *jobs)
{
	char *end;
	errno = 0;
	unsigned long n = strtoul(arg, &end, 10);
	if (errno || *end || end == arg || n < 1 || n > FIDX_MAX_JOBS || arg[0] == '-') {
		fidx_error("invalid --jobs '%s': expected a number from 1 to %d", fidx_quote(arg),
			   FIDX_MAX_JOBS);
		return -1;
	}
	*(unsigned *)jobs = (unsigned)n;
	return 0;
}

int fidx_io_arg(const char *arg, void *mode)
{
	if (fidx_io_mode_parse(arg, mode) == 0)
		return 0;
	fidx_error("invalid --io '%s': expected ssd, hdd or auto", fidx_quote(arg));
	return -1;
}

unsigned fidx_jobs_fit(unsigned jobs, unsigned long *limit)
{
	unsigned long nofile = fidx_raise_nofile();
	unsigned long fit = nofile > FIDX_FDS_RESERVED + FIDX_FDS_PER_JOB
				    ? (nofile - FIDX_FDS_RESERVED) / FIDX_FDS_PER_JOB : 1;
	*limit = nofile;
	return jobs > fit ? (unsigned)fit : jobs;
}

const char *fidx_db_name(const char *given)
{
	const char *env = getenv("FIDX_DB");
	return given ? given : env && *env ? env : "fidx.db";
}

const char *fidx_db_origin(const char *name)
{
	const char *env = getenv("FIDX_DB");
	return name && name == env ? " (from FIDX_DB)" : "";
}

int fidx_host_arg(const char *arg, void *value)
{
	struct fidx_query_args *qa = value;
	if (qa->nhosts == FIDX_MAX_HOSTS) {
		fidx_error("--host: at most %d patterns", FIDX_MAX_HOSTS);
		return -1;
	}
	qa->hosts[qa->nhosts++] = arg;
	return 0;
}
