/*
 * regex.cc - regex.h's POSIX calls over std::regex (the Windows build only).
 *
 * std::regex's `extended` grammar is POSIX's ERE; `nosubs` and `icase` are
 * REG_NOSUB and REG_ICASE.  It matches chars, so a path's bytes are matched
 * as they are, whatever their encoding, as glibc's regexec does in the C
 * locale.  No exception leaves this file: a bad pattern is REG_BADPAT, a
 * failed allocation REG_ESPACE, a match that runs out of stack no match.
 */
#include <new>
#include <regex>
#include <string.h>

#include "regex.h"

int regcomp(regex_t *re, const char *pattern, int flags)
{
	auto f = std::regex_constants::extended;
	if (flags & REG_ICASE)
		f |= std::regex_constants::icase;
	if (flags & REG_NOSUB)
		f |= std::regex_constants::nosubs;
	try {
		re->compiled = new std::regex(pattern, f);
		re->re_nsub = static_cast<std::regex *>(re->compiled)->mark_count();
		return 0;
	} catch (const std::regex_error &) {
		return REG_BADPAT;
	} catch (const std::bad_alloc &) {
		return REG_ESPACE;
	}
}

int regexec(const regex_t *re, const char *s, size_t nmatch, regmatch_t *match, int flags)
{
	(void)nmatch, (void)match, (void)flags;
	try {
		return std::regex_search(s, *static_cast<const std::regex *>(re->compiled)) ? 0
		       : REG_NOMATCH;
	} catch (...) {
		return REG_NOMATCH;
	}
}

size_t regerror(int code, const regex_t *re, char *buf, size_t size)
{
	(void)re;
	const char *why = code == REG_ESPACE ? "out of memory"
			  : code == REG_NOMATCH ? "no match" : "invalid regular expression";
	if (size > 0) {
		strncpy(buf, why, size - 1);
		buf[size - 1] = '\0';
	}
	return strlen(why) + 1;
}

void regfree(regex_t *re)
{
	delete static_cast<std::regex *>(re->compiled);
	re->compiled = nullptr;
}
