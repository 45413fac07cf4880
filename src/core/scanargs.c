/*
 * scanargs.c - a root's recorded path and the JSON of scan.options
 * (scanargs.h).
 */
#include "scanargs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "json.h"
#include "record.h"
#include "scan.h"

char *fidx_root_path(const char *path)
{
#ifdef _WIN32
	return fidx_win_stored(path);
#endif
	char *cwd = NULL;
	if (path[0] != '/' && !(cwd = getcwd(NULL, 0)))
		return NULL;
	size_t len = (cwd ? strlen(cwd) + 1 : 0) + strlen(path) + 2;
	char *joined = malloc(len), *out = malloc(len);
	if (!joined || !out) {
		free(cwd);
		free(joined);
		free(out);
		errno = ENOMEM;
		return NULL;
	}
	snprintf(joined, len, "%s%s%s", cwd ? cwd : "", cwd ? "/" : "", path);
	free(cwd);
	size_t o = 0;
	for (const char *p = joined; *p;) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		size_t n = end - p;
		if (n > 0 && !(n == 1 && p[0] == '.')) {
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p = end;
	}
	out[o] = '\0';
	free(joined);
	if (o == 0)
		return strcpy(out, "/");

	/* Resolve the folders above the last component ("/" when there are none). */
	char *last = strrchr(out, '/');
	bool dotdot = strcmp(last, "/..") == 0;
	char *dir;
	if (dotdot) {
		dir = realpath(out, NULL); /* "..": nothing of its own to keep */
	} else {
		*last = '\0';
		dir = realpath(out[0] ? out : "/", NULL);
		*last = '/';
	}
	if (!dir) {
		free(out);
		return NULL;
	}
	char *abs;
	int n = dotdot ? asprintf(&abs, "%s", dir)
		       : asprintf(&abs, "%s%s", strcmp(dir, "/") == 0 ? "" : dir, last);
	free(dir);
	free(out);
	if (n < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return abs;
}

char *fidx_scan_options_json(unsigned digests, unsigned jobs, bool xdev, bool follow,
			     bool follow_all, bool no_stat, enum fidx_io_mode io, bool drop_cache,
			     const char *const *excludes, size_t nexcludes, const char *database)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		return NULL;
	fputs("{\"hash\":\"", f);
	for (int d = 0, n = 0; d < FIDX_NDIGESTS; d++)
		if (digests >> d & 1)
			fprintf(f, "%s%s", n++ ? "," : "", fidx_digest_name((enum fidx_digest)d));
	fprintf(f, "%s\",\"jobs\":%u,\"xdev\":%s,\"follow\":%s,", digests ? "" : "none", jobs,
		xdev ? "true" : "false", follow ? "true" : "false");
	if (follow_all)  /* only when set: a scan of an older fidx lacks it, and means false */
		fputs("\"follow_all\":true,", f);
	fprintf(f, "\"stat\":%s,\"io\":\"%s\",\"drop_cache\":%s,\"exclude\":[",
		no_stat ? "false" : "true", fidx_io_mode_name(io), drop_cache ? "true" : "false");
	for (size_t i = 0; i < nexcludes; i++) {
		if (i)
			putc(',', f);
		fidx_json_string(f, excludes[i]);
	}
	putc(']', f);
	if (database) {
		fputs(",\"database\":", f);
		fidx_json_string(f, database);
	}
	putc('}', f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
