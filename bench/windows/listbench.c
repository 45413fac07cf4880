/*
 * listbench.c - how the Windows source should list folders: one thread walks
 * a tree recursively with each method in turn, warm (each run twice, the
 * second counted), and says how many entries it saw and how long it took.
 *
 *   listbench ROOT [ROUNDS]
 *
 *   find        FindFirstFileExW(FindExInfoBasic, FIND_FIRST_EX_LARGE_FETCH):
 *               no change time, no file ID
 *   idboth      GetFileInformationByHandleEx(FileIdBothDirectoryInfo), 128 KiB
 *               a call: all four times, the file ID, sizes, attributes
 *   idboth+open the same, and one open per entry with FILE_READ_ATTRIBUTES
 *               for FILE_STANDARD_INFO (the link count): what source_win.c does
 *   idboth+open+streams  ... and FILE_STREAM_INFO on that handle
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

#define LIST_BUF (128 * 1024)

enum method { FIND, IDBOTH, IDBOTH_OPEN, IDBOTH_OPEN_STREAMS };

static unsigned long long entries;
static void *list_buf;
static BYTE stream_buf[16384];

/* Opens w for attributes and reads what the method asks for. */
static void open_one(const WCHAR *w, enum method m)
{
	HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES,
			       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			       OPEN_EXISTING,
			       FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return;
	FILE_STANDARD_INFO std;
	GetFileInformationByHandleEx(h, FileStandardInfo, &std, sizeof(std));
	if (m == IDBOTH_OPEN_STREAMS)
		GetFileInformationByHandleEx(h, FileStreamInfo, stream_buf, sizeof(stream_buf));
	CloseHandle(h);
}

/* Walks the folder at w (a \\?\ path in a buffer of 40000 units) with method m. */
static void walk(WCHAR *w, enum method m)
{
	size_t n = wcslen(w);
	if (m == FIND) {
		WIN32_FIND_DATAW fd;
		wcscpy(w + n, L"\\*");
		HANDLE f = FindFirstFileExW(w, FindExInfoBasic, &fd, FindExSearchNameMatch, NULL,
					    FIND_FIRST_EX_LARGE_FETCH);
		w[n] = 0;
		if (f == INVALID_HANDLE_VALUE)
			return;
		do {
			if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0)
				continue;
			entries++;
			if ((fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) &&
			    !(fd.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
				swprintf(w + n, 40000 - n, L"\\%ls", fd.cFileName);
				walk(w, m);
				w[n] = 0;
			}
		} while (FindNextFileW(f, &fd));
		FindClose(f);
		return;
	}
	HANDLE h = CreateFileW(w, FILE_LIST_DIRECTORY, FILE_SHARE_READ | FILE_SHARE_WRITE |
			       FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
			       FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return;
	/* Subfolders are walked after the listing, so one buffer serves every level. */
	WCHAR **subs = NULL;
	size_t nsubs = 0, cap = 0;
	while (GetFileInformationByHandleEx(h, FileIdBothDirectoryInfo, list_buf, LIST_BUF)) {
		const BYTE *p = list_buf;
		for (;;) {
			const FILE_ID_BOTH_DIR_INFO *e = (const FILE_ID_BOTH_DIR_INFO *)p;
			size_t k = e->FileNameLength / 2;
			if (!((k == 1 && e->FileName[0] == '.') ||
			      (k == 2 && e->FileName[0] == '.' && e->FileName[1] == '.'))) {
				entries++;
				swprintf(w + n, 40000 - n, L"\\%.*ls", (int)k, e->FileName);
				if (m != IDBOTH)
					open_one(w, m);
				if ((e->FileAttributes & FILE_ATTRIBUTE_DIRECTORY) &&
				    !(e->FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
					if (nsubs == cap) {
						cap = cap ? 2 * cap : 16;
						subs = realloc(subs, cap * sizeof(*subs));
					}
					subs[nsubs++] = _wcsdup(w + n);
				}
				w[n] = 0;
			}
			if (!e->NextEntryOffset)
				break;
			p += e->NextEntryOffset;
		}
	}
	CloseHandle(h);
	for (size_t i = 0; i < nsubs; i++) {
		wcscpy(w + n, subs[i]);
		walk(w, m);
		w[n] = 0;
		free(subs[i]);
	}
	free(subs);
}

int wmain(int argc, WCHAR **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: listbench ROOT [ROUNDS]\n");
		return 2;
	}
	int rounds = argc > 2 ? _wtoi(argv[2]) : 3;
	static WCHAR w[40000];
	wcscpy(w, L"\\\\?\\");
	if (!GetFullPathNameW(argv[1], 40000 - 8, w + 4, NULL))
		return 2;
	list_buf = malloc(LIST_BUF);
	static const char *const names[] = {"find", "idboth", "idboth+open", "idboth+open+streams"};
	LARGE_INTEGER f;
	QueryPerformanceFrequency(&f);
	for (int m = FIND; m <= IDBOTH_OPEN_STREAMS; m++) {
		double best = 1e30;
		for (int r = 0; r <= rounds; r++) { /* round 0 warms the caches */
			LARGE_INTEGER t0, t1;
			entries = 0;
			QueryPerformanceCounter(&t0);
			walk(w, m);
			QueryPerformanceCounter(&t1);
			double s = (double)(t1.QuadPart - t0.QuadPart) / (double)f.QuadPart;
			if (r > 0 && s < best)
				best = s;
		}
		printf("%-20s %llu entries, best of %d: %.3f s (%.1f us an entry)\n", names[m],
		       entries, rounds, best, best * 1e6 / (double)(entries ? entries : 1));
	}
	return 0;
}
