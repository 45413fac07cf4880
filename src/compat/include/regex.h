/*
 * regex.h - POSIX regcomp(3)/regexec(3) for the Windows build, which MinGW
 * lacks: the POSIX extended grammar of the C++ library's std::regex
 * (src/compat/regex.cc), matching bytes as glibc does in the C locale.
 * Only what fidx uses: REG_EXTENDED, REG_NOSUB, REG_ICASE, no submatches.
 */
#ifndef FIDX_COMPAT_REGEX_H
#define FIDX_COMPAT_REGEX_H

#include <stddef.h>

#define REG_EXTENDED 1
#define REG_ICASE 2
#define REG_NOSUB 4
#define REG_NEWLINE 8
#define REG_NOMATCH 1
#define REG_BADPAT 2
#define REG_ESPACE 12

typedef struct {
	size_t re_nsub;
	void *compiled; /* the std::regex */
} regex_t;

typedef struct {
	long rm_so, rm_eo;
} regmatch_t;

#ifdef __cplusplus
extern "C" {
#endif
/* 0, or REG_BADPAT (the pattern is not an extended regex) or REG_ESPACE. */
int regcomp(regex_t *re, const char *pattern, int flags);
/* 0 when re matches somewhere in s, else REG_NOMATCH; no submatch is reported. */
int regexec(const regex_t *re, const char *s, size_t nmatch, regmatch_t *match, int flags);
/* What regcomp's code says, into buf (size bytes).  Returns the length it needs. */
size_t regerror(int code, const regex_t *re, char *buf, size_t size);
void regfree(regex_t *re);
#ifdef __cplusplus
}
#endif

#endif
