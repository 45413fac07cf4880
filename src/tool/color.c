/*
 * color.c - paths in colour on a terminal (color.h).
 *
 * LS_COLORS is read once, into the colours of the types and a list of
 * extensions, the first time a path is coloured.
 */
#include "color.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "diag.h"
#include "options.h"
#include "output.h"

#define SGR_MAX 32   /* bytes of one colour ("01;38;5;208") */
#define EXT_MAX 256  /* extensions kept from LS_COLORS */

enum color_when { WHEN_AUTO, WHEN_NEVER, WHEN_ALWAYS };

/* The types LS_COLORS names, in this order. */
static const char *const type_keys[] = {"di", "ln", "pi", "so", "bd", "cd", "ex", "fi"};
static const char type_letters[] = "dlpsbc";   /* the letters of the first six */
#define NTYPES (sizeof(type_keys) / sizeof(type_keys[0]))
/* GNU ls's colours when LS_COLORS is unset. */
static const char *const type_defaults[NTYPES] = {"01;34", "01;36", "40;33", "01;35",
						  "40;33;01", "40;33;01", "01;32", ""};

static enum color_when when = WHEN_AUTO;
static struct {
	bool read;
	char type[NTYPES][SGR_MAX];
	size_t next;
	struct {
		char ext[64];     /* with its dot: ".jpg" */
		char sgr[SGR_MAX];
	} ext[EXT_MAX];
} colors;

int fidx_color_arg(const char *arg, void *unused)
{
	(void)unused;
	if (strcmp(arg, "never") == 0)
		when = WHEN_NEVER;
	else if (strcmp(arg, "always") == 0)
		when = WHEN_ALWAYS;
	else if (strcmp(arg, "auto") == 0)
		when = WHEN_AUTO;
	else {
		fidx_error("--color takes never, always or auto, not '%s'", fidx_quote(arg));
		return -1;
	}
	return 0;
}

bool fidx_color_on(void)
{
	static int on = -1;
	if (on < 0) {
		const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
		on = when == WHEN_ALWAYS ||
		     (when == WHEN_AUTO && fidx_out_tty() && !(no && *no) &&
		      !(term && strcmp(term, "dumb") == 0));
	}
	return on;
}

/* Whether sgr (len bytes) is a colour and nothing else: digits and ';'. */
static bool plain_sgr(const char *sgr, size_t len)
{
	if (!len || len >= SGR_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((sgr[i] < '0' || sgr[i] > '9') && sgr[i] != ';')
			return false;
	return true;
}

/* Reads the defaults, then LS_COLORS, into colors. */
static void read_colors(void)
{
	const char *ls = getenv("LS_COLORS");
	colors.read = true;
	/* As GNU ls: LS_COLORS changes the colours it names, the others stay. */
	for (size_t t = 0; t < NTYPES; t++)
		strcpy(colors.type[t], type_defaults[t]);
	for (const char *p = ls ? ls : ""; *p;) {
		size_t len = strcspn(p, ":"), klen = strcspn(p, "=");
		if (klen < len && plain_sgr(p + klen + 1, len - klen - 1)) {
			const char *sgr = p + klen + 1;
			size_t slen = len - klen - 1;
			if (klen > 2 && p[0] == '*' && p[1] == '.' && klen - 1 < 64 &&
			    colors.next < EXT_MAX) {
				memcpy(colors.ext[colors.next].ext, p + 1, klen - 1);
				memcpy(colors.ext[colors.next].sgr, sgr, slen);
				colors.next++;
			}
			for (size_t t = 0; t < NTYPES && klen == 2; t++)
				if (memcmp(p, type_keys[t], 2) == 0) {
					memcpy(colors.type[t], sgr, slen);
					colors.type[t][slen] = '\0';
				}
		}
		p += len + (p[len] == ':');
	}
}

/* The colour of a path of type and mode, or "" for none. */
static const char *color_of(const char *path, char type, uint32_t mode)
{
	if (!colors.read)
		read_colors();
	const char *letter = type ? strchr(type_letters, type) : NULL;
	if (letter)
		return colors.type[letter - type_letters];
	if (type != 'f')
		return "";
	if ((mode & 0111) && colors.type[6][0])
		return colors.type[6];
	size_t len = strlen(path);
	for (size_t i = colors.next; i-- > 0;) {
		size_t e = strlen(colors.ext[i].ext);
		if (e < len && strcasecmp(path + len - e, colors.ext[i].ext) == 0)
			return colors.ext[i].sgr;
	}
	return colors.type[7];
}

void fidx_color_path(const char *path, char type, uint32_t mode, bool nul)
{
	const char *sgr = fidx_color_on() ? color_of(path, type, mode) : "";
	if (*sgr)
		printf("\033[%sm", sgr);
	fidx_out_name(stdout, path);
	if (*sgr)
		fputs_unlocked("\033[0m", stdout);
	putc_unlocked(nul ? '\0' : '\n', stdout);
}
