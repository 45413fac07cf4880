/*
 * sysinfo.h - what a scan row says about the machine it ran on, and the
 * CPUs and clock fidx runs with.
 */
#ifndef FIDX_SYSINFO_H
#define FIDX_SYSINFO_H

#include <stdbool.h>
#include <stdint.h>

struct fidx_sysinfo {
	char host[256];     /* gethostname() */
	char os[256];       /* PRETTY_NAME from /etc/os-release, else uname's sysname */
	char kernel[256];   /* uname's release */
	char arch[256];     /* uname's machine */
};

/* Fills *info; fields that cannot be read are left empty. */
void fidx_sysinfo_read(struct fidx_sysinfo *info);

/* Returns the number of CPUs this process may run on (its affinity mask). */
unsigned fidx_usable_cpus(void);

/*
 * Whether this process may read what only the system's administrator may:
 * root (uid 0) on Linux; on Windows, an elevated administrator's token
 * (whose backup privilege opens any file for reading).
 */
bool fidx_privileged(void);

/* Returns the folder for temporary files: $TMPDIR when set and not empty, else /tmp. */
const char *fidx_tmpdir(void);

/* Returns the wall-clock time in ns since the epoch (UTC). */
int64_t fidx_now_ns(void);

/*
 * Whether the process pid of host (a running scan's scan.pid and scan.host)
 * is alive: 1 when it is (or exists under another user), 0 when it is gone,
 * -1 when this machine cannot tell (another host, no pid recorded).  This
 * process counts as gone: a scan it is not writing is not being written; so
 * does a process of another program (/proc/PID/comm is not this one's: the
 * pid was reused after a reboot or a wrap).
 */
int fidx_writer_alive(int64_t pid, const char *host);

/* Bytes of a UUID as text ("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx") with its NUL. */
#define FIDX_UUID_TEXT 37

/*
 * Writes a new random UUID (RFC 9562 version 4, from getrandom()) as lower-case
 * text into out: a scan's identity across stores.  Returns 0, or -1 with
 * errno set when the kernel gives no random bytes.
 */
int fidx_uuid_new(char out[FIDX_UUID_TEXT]);

/* Returns CLOCK_MONOTONIC in ns: for durations. */
int64_t fidx_monotonic_ns(void);

/* The span of seconds fidx_utc_offsets() looks at: 1800-01-01 to 2500-01-01 UTC. */
#define FIDX_UTC_OFFSETS_FROM (-5364662400LL)
#define FIDX_UTC_OFFSETS_TO 16725225600LL

/*
 * Calls fn(arg, since, offset) with this host's offset from UTC in seconds
 * (its local time zone, as localtime_r() applies it) at lo, with since =
 * INT64_MIN (the offset at lo also stands for every earlier time), then at
 * each second after lo up to hi where the offset changes.  lo and hi (seconds
 * since the epoch) are clipped to FIDX_UTC_OFFSETS_FROM..TO; beyond, the
 * offset at the nearer end stands.  The offset is looked at once a day, so
 * two changes less than a day apart are missed (no zone has had such since
 * 1900).  Returns 0, or the first non-zero value fn returned.
 */
int fidx_utc_offsets(int64_t lo, int64_t hi, int (*fn)(void *arg, int64_t since, long offset),
		     void *arg);

#endif /* FIDX_SYSINFO_H */
