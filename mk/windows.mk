# windows.mk - the Windows build: build/win/fidx.exe, cross-compiled on Debian with
# MinGW-w64 (docs/WINDOWS.md).  Included by the Makefile.
#
#   make windows         build/win/fidx.exe (64-bit, static: no DLL beside it) and the
#                        Wine suite's helpers (tests/windows/)
#   make check-windows   make windows (-Werror) and the Linux build, then the suite under
#   (or windows-check)   Wine (tests/windows/run, about 35-50 s on 2 cores; docs/TESTING.md);
#                        make check runs it beside its sanitizer stages (CHECK_EXTRA_BG)
#
# The same sources as the Linux build, less what Windows has no counterpart for or
# Debian packages no MinGW build of (the walker of src/lib/ and its source, the Linux
# I/O of hashio.c, The Sleuth Kit, libpq, ncurses, OpenSSL), plus the Windows files
# (*_win.c beside the Linux ones: the Win32 source of entries, its hashing stage,
# hashing with CNG) and src/compat/, the POSIX calls the shared code makes, on Win32.
# SQLite is compiled from the amalgamation that scripts/sqlite-source makes from
# Debian's source package; XXH3 comes from libxxhash's header, inlined.

WIN_BUILD   := build/win
WIN_CC      := x86_64-w64-mingw32-gcc-posix
WIN_CXX     := x86_64-w64-mingw32-g++-posix
WIN_WINDRES := x86_64-w64-mingw32-windres
# -Wno-format: MinGW checks printf formats as Microsoft's printf, which knows no %zu;
# fidx prints through MinGW's own (C99) printf (__USE_MINGW_ANSI_STDIO), and the Linux
# build checks the same format strings.
WIN_CFLAGS  := -std=gnu17 -Wall -Wextra -Wno-format -O2 -g0 -D_GNU_SOURCE -D__USE_MINGW_ANSI_STDIO=1 \
	       -D_WIN32_WINNT=0x0A00 -DWINVER=0x0A00 -DUNICODE -D_UNICODE -D_POSIX_THREAD_SAFE_FUNCTIONS=200112L -DXXH_INLINE_ALL \
	       -DFIDX_VERSION='"$(VERSION)"' -include src/compat/win.h -Isrc/compat/include \
	       -I$(WIN_BUILD)/include -Iinclude -Isrc/lib -Isrc/core -Isrc/store -Isrc/tool \
	       $(EXTRA_CFLAGS)
WIN_LDFLAGS := -static
WIN_LIBS    := -lbcrypt -lshlwapi -ladvapi32

# The shared sources Windows builds, and the Windows ones.
WIN_SRCS := $(filter-out src/core/source_walk.c src/core/source_image.c src/core/hashio.c \
		src/core/hash_openssl.c src/core/blockdev.c src/core/dedupe.c src/core/mounts.c, \
		$(wildcard src/core/*.c)) \
	    src/store/store.c src/store/postgres_win.c \
	    $(filter-out src/store/sqlite/schema-objects.c, \
		$(wildcard src/store/sqlite/*.c)) \
	    $(filter-out src/tool/builtin/browse.c, \
		$(wildcard src/tool/*.c src/tool/builtin/*.c)) \
	    $(wildcard src/compat/*.c)
WIN_OBJS := $(patsubst src/%.c,$(WIN_BUILD)/obj/%.o,$(WIN_SRCS)) $(WIN_BUILD)/obj/compat/regex.o \
	    $(WIN_BUILD)/obj/gen/schema_objects.o $(WIN_BUILD)/obj/gen/report_assets.o \
	    $(WIN_BUILD)/obj/sqlite3.o
WIN_HEADERS := $(HEADERS) $(wildcard src/compat/*.h src/compat/include/*.h src/compat/include/*/*.h)

.PHONY: windows check-windows windows-check
windows: $(WIN_BUILD)/fidx.exe $(WIN_BUILD)/tests/wincheck.exe

$(WIN_BUILD)/sqlite/sqlite3.c:
	scripts/sqlite-source $(WIN_BUILD)/sqlite

# The headers the Windows build takes from Debian's packages: SQLite's (of the
# amalgamation it compiles) and libxxhash's (architecture-independent, inlined).
$(WIN_BUILD)/include/sqlite3.h: $(WIN_BUILD)/sqlite/sqlite3.c
	@mkdir -p $(@D)
	cp $(WIN_BUILD)/sqlite/sqlite3.h $@
$(WIN_BUILD)/include/xxhash.h: /usr/include/xxhash.h
	@mkdir -p $(@D)
	cp $< $@

# SQLite as Debian configures it where it matters to fidx: threads, and the
# functions the store uses (json_*, built in).
$(WIN_BUILD)/obj/sqlite3.o: $(WIN_BUILD)/sqlite/sqlite3.c
	@mkdir -p $(@D)
	$(WIN_CC) -O2 -g0 -DSQLITE_THREADSAFE=1 -DSQLITE_OMIT_LOAD_EXTENSION -w -c -o $@ $<

$(WIN_BUILD)/obj/%.o: src/%.c $(WIN_HEADERS) $(WIN_BUILD)/include/sqlite3.h \
		$(WIN_BUILD)/include/xxhash.h mk/windows.mk
	@mkdir -p $(@D)
	$(WIN_CC) $(WIN_CFLAGS) -Isrc/store/sqlite -c -o $@ $<

# POSIX regex over the C++ library's std::regex (regex.cc).
$(WIN_BUILD)/obj/compat/regex.o: src/compat/regex.cc src/compat/include/regex.h mk/windows.mk
	@mkdir -p $(@D)
	$(WIN_CXX) -std=gnu++17 -Wall -Wextra -O2 -g0 -Isrc/compat/include -c -o $@ $<

$(WIN_BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(WIN_HEADERS) $(WIN_BUILD)/include/sqlite3.h \
		mk/windows.mk
	@mkdir -p $(@D)
	$(WIN_CC) $(WIN_CFLAGS) -Isrc/store/sqlite -c -o $@ $<

$(WIN_BUILD)/fidx.exe: $(WIN_OBJS)
	$(WIN_CXX) $(WIN_LDFLAGS) -o $@ $(WIN_OBJS) $(WIN_LIBS)

# The Wine suite's checker: what the Win32 API itself says of a tree (tests/windows/).
$(WIN_BUILD)/tests/%.exe: tests/windows/%.c mk/windows.mk
	@mkdir -p $(@D)
	$(WIN_CC) -std=gnu17 -Wall -Wextra -Werror -O2 -D_WIN32_WINNT=0x0A00 -DUNICODE \
		-D__USE_MINGW_ANSI_STDIO=1 -municode -static -o $@ $<

# The suite also reads fidx.exe's databases with the Linux fidx, and the Linux fidx's with it.
windows-check: check-windows
check-windows:
	@$(MAKE) --no-print-directory -j$(BUILD_JOBS) EXTRA_CFLAGS=-Werror windows $(BUILD)/fidx
	$(PYTHON) tests/windows/run --fidx $(WIN_BUILD)/fidx.exe --checker $(WIN_BUILD)/tests/wincheck.exe \
		--linux-fidx $(BUILD)/fidx

# The Windows build's studies, under Wine (docs/BENCHMARKS.md, "fidx on Windows"): how to
# list folders (bench/windows/listbench.c on a tree of WIN_BENCH_ENTRIES entries: 100 folders
# of equal files), and reading with and without FILE_FLAG_SEQUENTIAL_SCAN beside CNG's digests
# (bench/windows/read-hash.c, through tests/windows/crypto-check --bench).  Wine's figures, not
# Windows': they compare methods, they do not predict Windows' speed.
WIN_BENCH_ENTRIES ?= 50000
.PHONY: bench-windows
bench-windows: $(WIN_BUILD)/bench/listbench.exe
	@set -e; tmp=$$(mktemp -d /tmp/fidx-winbench.XXXXXX); trap 'WINEPREFIX=$$tmp/prefix wineserver -k 2>/dev/null; rm -rf $$tmp' EXIT; \
	export WINEPREFIX=$$tmp/prefix WINEDEBUG=-all; \
	per=$$(( $(WIN_BENCH_ENTRIES) / 100 )); \
	for d in $$(seq 1 100); do mkdir -p $$tmp/tree/d$$d; \
		( cd $$tmp/tree/d$$d && seq 1 $$per | xargs touch ); done; \
	echo "== load average before: $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	wine $(WIN_BUILD)/bench/listbench.exe "Z:$$tmp/tree" 3 | tr -d '\r'; \
	OUT=$(WIN_BUILD)/bench WINEPREFIX=$$tmp/prefix tests/windows/crypto-check --bench | grep -v '^ok'; \
	echo "== load average after: $$(cut -d' ' -f1-3 /proc/loadavg)"

$(WIN_BUILD)/bench/%.exe: bench/windows/%.c mk/windows.mk
	@mkdir -p $(@D)
	$(WIN_CC) -std=gnu17 -Wall -Wextra -Werror -O2 -D_WIN32_WINNT=0x0A00 -DUNICODE \
		-D__USE_MINGW_ANSI_STDIO=1 -municode -static -o $@ $<
