/*
 * sysinfo.c - host, operating system, kernel and architecture of this machine.
 *
 * What only Linux tells this way (uname, os-release, /proc, the CPU
 * affinity) is in the #ifndef _WIN32 parts; Windows' answers to the same
 * questions are in sysinfo_win.c.
 */
#include "sysinfo.h"

#include <errno.h>
#include <fcntl.h>
#ifndef _WIN32
#include <sched.h>
#include <signal.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#ifndef _WIN32
#include <sys/utsname.h>
#endif
#include <time.h>
#include <unistd.h>

#ifndef _WIN32
/* Copies PRETTY_NAME's value from os-release into buf; returns 0 if found. */
static int read_os_release(char *buf, size_t size)
{
	FILE *f = fopen("/etc/os-release", "re");
	if (!f)
		f = fopen("/usr/lib/os-release", "re");
	if (!f)
		return -1;
	char line[512];
	int found = -1;
	while (found < 0 && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "PRETTY_NAME=", 12) != 0)
			continue;
		char *v = line + 12;
		v[strcspn(v, "\n")] = '\0';
		size_t len = strlen(v);
		if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
			v[len - 1] = '\0';
			v++;
		}
		len = strnlen(v, size - 1);
		memcpy(buf, v, len);
		buf[len] = '\0';
		found = 0;
	}
	fclose(f);
	return found;
}

void fidx_sysinfo_read(struct fidx_sysinfo *info)
{
	memset(info, 0, sizeof(*info));
	if (gethostname(info->host, sizeof(info->host) - 1) < 0)
		info->host[0] = '\0';
	struct utsname u;
	if (uname(&u) == 0) {
		snprintf(info->kernel, sizeof(info->kernel), "%s", u.release);
		snprintf(info->arch, sizeof(info->arch), "%s", u.machine);
		snprintf(info->os, sizeof(info->os), "%s", u.sysname);
	}
	read_os_release(info->os, sizeof(info->os));
}

#endif

int64_t fidx_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#ifndef _WIN32
/* Reads /proc/<pid>/comm ("self" for pid 0) into buf.  Returns 0, or -1 when it cannot. */
static int read_comm(int64_t pid, char *buf, size_t size)
{
	char path[64];
	if (pid)
		snprintf(path, sizeof(path), "/proc/%lld/comm", (long long)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/comm");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

int fidx_writer_alive(int64_t pid, const char *host)
{
	char here[256] = "", theirs[64], ours[64];
	if (pid <= 0 || !host || gethostname(here, sizeof(here) - 1) < 0 || strcmp(host, here) != 0)
		return -1;
	if (pid == getpid())
		return 0;
	if (kill((pid_t)pid, 0) < 0 && errno != EPERM)
		return 0;
	/* The pid taken by another program since (a reboot, pids wrapped): gone. */
	if (read_comm(pid, theirs, sizeof(theirs)) == 0 && read_comm(0, ours, sizeof(ours)) == 0 &&
	    strcmp(theirs, ours) != 0)
		return 0;
	return 1;
}

const char *fidx_tmpdir(void)
{
	const char *dir = getenv("TMPDIR");
	return dir && *dir ? dir : "/tmp";
}

#endif

int64_t fidx_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The host's offset from UTC at second t (0 when localtime_r() cannot say). */
static long utc_offset_at(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
#ifdef _WIN32
	/* No tm_gmtoff: the local broken-down time read as UTC, less t. */
	if (!localtime_r(&tt, &tm))
		return 0;
	time_t as_utc = _mkgmtime(&tm);
	return as_utc == (time_t)-1 ? 0 : (long)(as_utc - tt);
#else
	return localtime_r(&tt, &tm) ? tm.tm_gmtoff : 0;
#endif
}

int fidx_utc_offsets(int64_t lo, int64_t hi, int (*fn)(void *arg, int64_t since, long offset),
		     void *arg)
{
	const int64_t day = 86400;
	lo = lo < FIDX_UTC_OFFSETS_FROM ? FIDX_UTC_OFFSETS_FROM
	     : lo > FIDX_UTC_OFFSETS_TO ? FIDX_UTC_OFFSETS_TO : lo;
	hi = hi < lo ? lo : hi > FIDX_UTC_OFFSETS_TO ? FIDX_UTC_OFFSETS_TO : hi;
	tzset();
	long offset = utc_offset_at(lo);
	int ret = fn(arg, INT64_MIN, offset);
	for (int64_t t = lo; ret == 0 && t < hi;) {
		int64_t next = hi - t > day ? t + day : hi;
		long at = utc_offset_at(next);
		if (at == offset) {
			t = next;
			continue;
		}
		/* The first second of the change, in (t, next]. */
		int64_t a = t, b = next;
		while (b - a > 1) {
			int64_t m = a + (b - a) / 2;
			if (utc_offset_at(m) == offset)
				a = m;
			else
				b = m;
		}
		offset = utc_offset_at(b);
		ret = fn(arg, b, offset);
		t = b;
	}
	return ret;
}

#ifndef _WIN32
bool fidx_privileged(void)
{
	return geteuid() == 0;
}

unsigned fidx_usable_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

#endif

int fidx_uuid_new(char out[FIDX_UUID_TEXT])
{
	unsigned char b[16];
	size_t got = 0;
	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
		if (n < 0 && errno != EINTR)
			return -1;
		got += n > 0 ? (size_t)n : 0;
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* the RFC's variant */
	snprintf(out, FIDX_UUID_TEXT,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
	return 0;
}
