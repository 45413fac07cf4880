/*
 * sysinfo_win.c - sysinfo.h's answers on Windows (the Windows build only;
 * sysinfo.c holds the portable part and Linux's).
 *
 * The scan row's os, kernel and arch read "Windows 10.0", its build number
 * ("19045") and "x86_64"/"aarch64" as uname spells them, so that one query
 * sorts the hosts of both kinds together.
 */
#include "sysinfo.h"

#include <windows.h>
#include <psapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel's own version (GetVersionEx lies to programs without a manifest). */
static bool kernel_version(RTL_OSVERSIONINFOW *v)
{
	typedef LONG(WINAPI * get_version_fn)(RTL_OSVERSIONINFOW *);
	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
	get_version_fn get = ntdll ? (get_version_fn)(void (*)(void))GetProcAddress(ntdll,
									      "RtlGetVersion")
			     : NULL;
	memset(v, 0, sizeof(*v));
	v->dwOSVersionInfoSize = sizeof(*v);
	return get && get(v) == 0;
}

void fidx_sysinfo_read(struct fidx_sysinfo *info)
{
	memset(info, 0, sizeof(*info));
	if (gethostname(info->host, sizeof(info->host) - 1) < 0)
		info->host[0] = '\0';
	RTL_OSVERSIONINFOW v;
	if (kernel_version(&v)) {
		snprintf(info->os, sizeof(info->os), "Windows %lu.%lu", v.dwMajorVersion,
			 v.dwMinorVersion);
		snprintf(info->kernel, sizeof(info->kernel), "%lu", v.dwBuildNumber);
	} else {
		snprintf(info->os, sizeof(info->os), "Windows");
	}
	SYSTEM_INFO si;
	GetNativeSystemInfo(&si);
	const char *arch = si.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_AMD64 ? "x86_64"
			   : si.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_ARM64 ? "aarch64"
			   : si.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_INTEL ? "i686"
			   : "";
	snprintf(info->arch, sizeof(info->arch), "%s", arch);
}

/* The executable's file name (no folder) of process p into buf; false when unknown. */
static bool image_name(HANDLE p, wchar_t *buf, DWORD size)
{
	DWORD n = size;
	if (!QueryFullProcessImageNameW(p, 0, buf, &n))
		return false;
	wchar_t *slash = wcsrchr(buf, L'\\');
	if (slash)
		memmove(buf, slash + 1, (wcslen(slash + 1) + 1) * sizeof(wchar_t));
	return true;
}

int fidx_writer_alive(int64_t pid, const char *host)
{
	char here[256] = "";
	if (pid <= 0 || pid > UINT32_MAX || !host || gethostname(here, sizeof(here) - 1) < 0 ||
	    strcmp(host, here) != 0)
		return -1;
	if ((DWORD)pid == GetCurrentProcessId())
		return 0;
	HANDLE p = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
	if (!p)
		return GetLastError() == ERROR_ACCESS_DENIED ? 1 : 0;
	DWORD code = 0;
	int alive = GetExitCodeProcess(p, &code) && code == STILL_ACTIVE;
	/* The pid taken by another program since: gone. */
	wchar_t theirs[MAX_PATH], ours[MAX_PATH];
	if (alive && image_name(p, theirs, MAX_PATH) &&
	    image_name(GetCurrentProcess(), ours, MAX_PATH) && _wcsicmp(theirs, ours) != 0)
		alive = 0;
	CloseHandle(p);
	return alive;
}

const char *fidx_tmpdir(void)
{
	static char dir[MAX_PATH * 3 + 1];
	const char *env = getenv("TMPDIR");
	if (env && *env)
		return env;
	if (!dir[0]) {
		wchar_t w[MAX_PATH + 1];
		DWORD n = GetTempPathW(MAX_PATH + 1, w);
		if (n == 0 || n > MAX_PATH)
			return ".";
		if (n > 1 && w[n - 1] == L'\\' && w[n - 2] != L':')
			w[n - 1] = L'\0';
		if (!WideCharToMultiByte(CP_UTF8, 0, w, -1, dir, sizeof(dir), NULL, NULL))
			return ".";
	}
	return dir;
}

unsigned fidx_usable_cpus(void)
{
	DWORD_PTR mask = 0, system = 0;
	if (GetProcessAffinityMask(GetCurrentProcess(), &mask, &system) && mask) {
		unsigned n = (unsigned)__builtin_popcountll((unsigned long long)mask);
		/* One processor group's mask: a machine of more than 64 CPUs has more. */
		DWORD all = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
		return all > 64 && n == 64 ? (unsigned)all : n;
	}
	DWORD all = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
	return all ? (unsigned)all : 1;
}

bool fidx_privileged(void)
{
	HANDLE token;
	TOKEN_ELEVATION elevation = {0};
	DWORD got = 0;
	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token))
		return false;
	bool elevated = GetTokenInformation(token, TokenElevation, &elevation, sizeof(elevation),
					    &got) && elevation.TokenIsElevated;
	CloseHandle(token);
	return elevated;
}
