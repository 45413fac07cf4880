/*
 * diag.c - messages for the user: one line each, written atomically.
 */
#include "diag.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


static atomic_bool progress_shown; /* a progress line is on stderr */

void fidx_diag_progress_line(bool shown)
{
	atomic_store(&progress_shown, shown);
}

/*
 * Formats prefix + message + newline into one buffer and writes it at once,
 * after erasing the progress line when one is shown.
 */
static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char buf[8192];
	int n = snprintf(buf, sizeof(buf), "%sfidx: %s",
			 atomic_load(&progress_shown) ? "\r\033[K" : "", prefix);
	int m = vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	size_t len = n + (m < 0 ? 0 : (size_t)m < sizeof(buf) - n - 1 ? (size_t)m
							      : sizeof(buf) - n - 2);
	buf[len++] = '\n';
	ssize_t ignored = write(STDERR_FILENO, buf, len);
	(void)ignored;
}

void fidx_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

void fidx_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}
