# fidx - GNU Make build.
#
#   make                 build/fidx, build/libfidx.a (the walker library, public header
#                        include/fidx/walk.h) and build/examples/walk-count
#   make run [DIR=...]   install deps, build, scan DIR (default /usr/share) into ./fidx.db
#   make check           install deps, build with -Werror, run every test:
#                        unit tests, the store conformance suite (on SQLite and on a
#                        throwaway PostgreSQL server), end-to-end suite,
#                        the same under ASan+UBSan, the threaded core (unit tests and
#                        the e2e scripts marked 'e2e: tsan') under TSan
#   make cng-check       the Windows crypto backend (CNG) built with MinGW-w64 and run under
#                        Wine: known answers, files against coreutils (tests/windows/crypto-check)
#   make windows         build/win/fidx.exe for 64-bit Windows, cross-built with MinGW-w64
#                        (mk/windows.mk, docs/WINDOWS.md); make check-windows runs it under
#                        Wine (part of make check); make bench-windows the listing and
#                        reading studies under Wine
#   make alloc-check     an allocation failure at every allocation site of fidx's code
#                        in turn, for scan, dupes, check, du, find, export, report and
#                        verify (a short version runs in make check's e2e suite)
#   make bench           side-by-side benchmarks against the peers (docs/BENCHMARKS.md)
#   make bench-walk      the walker against bfs, find, fd, nftw and fts, warm and cold
#   make bench-hash      content hashing against rhash, hashdeep, sha256sum, b3sum, warm and cold
#   make bench-hdd       reading in on-disk order, on a loop-mounted ext4 image (root)
#   make bench-find      fidx find and its index against plocate (updatedb), warm
#   make bench-du        fidx du and stats beside coreutils du, warm
#   make bench-browse    fidx browse's first frame and peak RSS on a million entries, warm
#   make bench-dupes     fidx dupes against jdupes, fdupes and rmlint, warm and cold
#   make bench-export    fidx export of a million entries in every format; the stdout buffer
#   make bench-match     fidx match: a 5M-line list against a million files, and the set study
#   make bench-rescan    incremental rescans of /usr/share: unchanged, and with 1% of files changed
#   make bench-aide      fidx scan and fidx check beside AIDE's --init and --check, warm and cold
#   make bench-image     fidx scan --image of a 2 GB ext4 image against fiwalk and tsk_loaddb,
#                        warm and cold
#   make bench-fleet     fidx on PostgreSQL: ingest (scan, push) against export | psql \copy,
#                        COPY text against binary, a simulated fleet's pushes and questions
#   make bench-fleet-scale  a simulated fleet (50 hosts x 200k files, 30 days of 1% rescans:
#                        bench/sqlite/gen-fleet) pushed day by day: storage and push time a
#                        day, the fleet questions on one server and on 3 shards (when
#                        sharding is there); BENCH_FSCALE_QUICK=1 a 5 x 20k x 5 smoke run
#   make bench-delta     daily rescans kept on PostgreSQL as their changes: rows and bytes of
#                        each push, questions at chain depths 1, 8 and 30 against whole scans
#   make fuzz [FUZZ_SECONDS=60]
#                        every libFuzzer target of tests/fuzz/ (clang, ASan+UBSan) for
#                        FUZZ_SECONDS each, one after the other, growing its corpus
#                        (docs/TESTING.md); make fuzz-check (part of make check) runs each
#                        over its kept corpus and for FUZZ_CHECK_SECONDS more
#   make install [PREFIX=/usr/local] [DESTDIR=]
#                        fidx, its man page, libfidx.a, <fidx/walk.h>, fidx.pc,
#                        fidx-pg-setup and the PostgreSQL schema it runs, fidx-pg-shard
#
# The sources are in layers (docs/ARCHITECTURE.md), each built into its own
# archive:
#
#   src/lib/           build/libfidx.a        the walker: what <fidx/walk.h> and fidx.pc
#                                             promise, libc and pthreads only
#   src/core/          build/libfidx-core.a   the engine: never prints, never exits
#   src/store/         build/libfidx-store.a  the store API and its backends
#                                             (src/store/sqlite/, with build/gen/schema_objects.c
#                                             written at build time by its schema-objects tool;
#                                             src/store/postgres/, libpq)
#   src/tool/          build/libfidx-tool.a   the command line: options, output, formats
#   src/tool/builtin/                         one file per command, linked into build/fidx
#
# BUILD names the output folder, so that the sanitizer builds (build/asan,
# build/tsan) live beside the normal one.

VERSION   := 0.1.0
PREFIX    ?= /usr/local
BUILD     ?= build
DIR       ?= /usr/share
CC        ?= cc
CFLAGS    ?= -O2 -g
# Debian's python3, which has the python3-xxhash module the tests use.
PYTHON    ?= /usr/bin/python3
PKGS      := sqlite3 libpq libcrypto libxxhash
# ncurses (wide characters) for fidx browse alone: its flags reach that one object, its
# library only the fidx binary.
CURSES_CFLAGS = $(shell pkg-config --cflags ncursesw 2>/dev/null)
CURSES_LIBS = $(shell pkg-config --libs ncursesw 2>/dev/null)

PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
SQLITE_CFLAGS = $(shell pkg-config --cflags sqlite3 2>/dev/null)
PQ_CFLAGS = $(shell pkg-config --cflags libpq 2>/dev/null)
CRYPTO_CFLAGS = $(shell pkg-config --cflags libcrypto libxxhash 2>/dev/null)
# The Sleuth Kit and libewf are loaded by the image source when an image is read
# (dlopen: source_image.c), by the names their libraries have here.
soname = $(shell objdump -p $(shell pkg-config --variable=libdir $(1) 2>/dev/null)/$(2).so \
	   2>/dev/null | awk '/SONAME/ {print $$2}')
TSK_CFLAGS = $(shell pkg-config --cflags tsk libewf 2>/dev/null) \
	     -DFIDX_TSK_SONAME='"$(or $(call soname,tsk,libtsk),libtsk.so.19)"' \
	     -DFIDX_EWF_SONAME='"$(or $(call soname,libewf,libewf),libewf.so.2)"'
BASE_CFLAGS = -std=gnu17 -Wall -Wextra -pthread -D_GNU_SOURCE -DFIDX_VERSION='"$(VERSION)"' \
	      $(CFLAGS) $(EXTRA_CFLAGS)
ALL_LDLIBS = $(PKG_LIBS) -pthread $(EXTRA_LDFLAGS)

# What each layer may include: its own headers and those of the layers it
# stands on.  Only the SQLite backend sees <sqlite3.h>'s folder, only the
# PostgreSQL backend <libpq-fe.h>'s (and tests/layers/run checks that no
# other file names them).
LIB_INC    := -Iinclude -Isrc/lib
CORE_INC   := $(LIB_INC) -Isrc/core -Isrc/store
TOOL_INC   := $(CORE_INC) -Isrc/tool
SQLITE_INC := $(CORE_INC) -Isrc/store/sqlite
PQ_INC     := $(CORE_INC) -Isrc/store/postgres
$(BUILD)/obj/lib/%.o: LAYER_CFLAGS = $(LIB_INC)
$(BUILD)/obj/core/%.o: LAYER_CFLAGS = $(CORE_INC) $(CRYPTO_CFLAGS)
$(BUILD)/obj/core/source_image.o: LAYER_CFLAGS = $(CORE_INC) $(CRYPTO_CFLAGS) $(TSK_CFLAGS)
$(BUILD)/obj/store/%.o: LAYER_CFLAGS = $(CORE_INC)
$(BUILD)/obj/store/sqlite/%.o $(BUILD)/obj/gen/%.o: LAYER_CFLAGS = $(SQLITE_INC) $(SQLITE_CFLAGS)
$(BUILD)/obj/store/postgres/%.o: LAYER_CFLAGS = $(PQ_INC) $(PQ_CFLAGS)
$(BUILD)/obj/tool/%.o: LAYER_CFLAGS = $(TOOL_INC) $(CRYPTO_CFLAGS)
$(BUILD)/obj/tool/builtin/browse.o: LAYER_CFLAGS = $(TOOL_INC) $(CRYPTO_CFLAGS) $(CURSES_CFLAGS)

obj = $(patsubst src/%.c,$(BUILD)/obj/%.o,$(1))
LIB_OBJS     := $(call obj,$(sort $(wildcard src/lib/*.c)))
# The Windows build's own files (*_win.c, hash_cng.c: mk/windows.mk) are not Linux's; the
# crypto backend here is OpenSSL's (hash_openssl.c).
CORE_OBJS    := $(call obj,$(filter-out %_win.c src/core/hash_cng.c,$(sort $(wildcard src/core/*.c))))
STORE_OBJS   := $(call obj,$(sort $(filter-out %_win.c,$(wildcard src/store/*.c)) $(wildcard src/store/postgres/*.c) \
		  $(filter-out src/store/sqlite/schema-objects.c,$(wildcard src/store/sqlite/*.c)))) \
		$(BUILD)/obj/gen/schema_objects.o $(BUILD)/obj/gen/pg_schema.o
TOOL_OBJS    := $(call obj,$(filter-out src/tool/main.c %_win.c,$(sort $(wildcard src/tool/*.c)))) \
		$(BUILD)/obj/gen/report_assets.o
BUILTIN_OBJS := $(call obj,$(sort $(wildcard src/tool/builtin/*.c)))
# What the tool and the tests link (a group: core and the store call each other).
INTERNAL_LIBS = $(BUILD)/libfidx-tool.a $(BUILD)/libfidx-store.a $(BUILD)/libfidx-core.a \
		$(BUILD)/libfidx.a
LINK_INTERNAL = -Wl,--start-group $(INTERNAL_LIBS) -Wl,--end-group
HEADERS    := $(wildcard include/fidx/*.h src/*/*.h src/*/*/*.h)

# Unit tests mirror the layers: tests/<layer>/test_*.c links the internal
# libraries; tests/store/ is the conformance suite every store backend must
# pass, tests/store/sqlite/ the SQLite backend's own (it may read the file
# with SQLite to check it).
UNIT_SRCS := $(sort $(wildcard tests/lib/test_*.c tests/core/test_*.c tests/store/test_*.c \
		      tests/tool/test_*.c))
SQLITE_UNIT_SRCS := $(sort $(wildcard tests/store/sqlite/test_*.c))
UNIT_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(UNIT_SRCS) $(SQLITE_UNIT_SRCS))
# The threaded core: the unit tests run under TSan.
TSAN_UNITS := lib/test_walk core/test_queue core/test_scan core/test_hashio store/test_seal \
	store/sqlite/test_seal

SANITIZE_ASAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# How the ASan build links UBSan's runtime.  GCC makes it a shared library of its own beside
# ASan's, whose 6 MB of zero-filled globals LeakSanitizer reads through at every exit (a page
# fault a page): ~25 ms more per run of fidx, of which make check's ASan stage makes thousands.
# Linked in statically (-static-libubsan) it costs nothing and reports as before; clang's ASan
# runtime holds UBSan's, and the probe leaves it as it is.
ASAN_LINK_UBSAN = $(shell printf 'int main(void){return 0;}' | $(CC) -x c -fsanitize=undefined \
	-static-libubsan -o /dev/null - 2>/dev/null && echo -static-libubsan)
SANITIZE_TSAN := -fsanitize=thread

.PHONY: all deps browser-deps torture test-binaries run check check-builds check-background unit e2e alloc-check library layers pg fuzz fuzz-build fuzz-check \
	fuzz-targets install bench bench-walk bench-hash bench-hdd bench-find bench-du bench-browse bench-dupes bench-match bench-export bench-rescan bench-store bench-aide bench-fleet bench-fleet-scale bench-delta bench-image bench-report clean
.SUFFIXES:

all: $(BUILD)/fidx $(BUILD)/libfidx.a $(BUILD)/examples/walk-count

deps:
	@scripts/install-deps

$(BUILD)/obj/%.o: src/%.c $(HEADERS) Makefile
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(LAYER_CFLAGS) -MMD -c -o $@ $<

# What SQLite makes of the schema's SQL in each version (schema.h), written by
# replaying src/store/sqlite/schema.c at build time, so that no query replays it.
$(BUILD)/gen/schema-objects: src/store/sqlite/schema-objects.c src/store/sqlite/schema.c \
		$(HEADERS) Makefile
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(SQLITE_INC) $(SQLITE_CFLAGS) -o $@ src/store/sqlite/schema-objects.c \
		src/store/sqlite/schema.c $(ALL_LDLIBS)

$(BUILD)/gen/schema_objects.c: $(BUILD)/gen/schema-objects
	@mkdir -p $(@D)
	$< $@

# The PostgreSQL schema's script, as the C string the backend runs (postgres.h);
# scripts/fidx-pg-setup runs the same file with psql.
$(BUILD)/gen/pg_schema.c: src/store/postgres/schema.sql Makefile
	@mkdir -p $(@D)
	{ echo '/* Generated from src/store/postgres/schema.sql by the Makefile. */'; \
	  echo 'const char fidx_pg_schema_sql[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$$/\\n"/' $<; \
	  echo ';'; } > $@

# fidx report's page (src/tool/report/), as the C strings report.c writes.
$(BUILD)/gen/report_assets.c: src/tool/report/report.css src/tool/report/report.js Makefile
	@mkdir -p $(@D)
	{ echo '/* Generated from src/tool/report/ by the Makefile. */'; \
	  echo 'const char fidx_report_css[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$$/\\n"/' src/tool/report/report.css; \
	  echo ';'; echo 'const char fidx_report_js[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$$/\\n"/' src/tool/report/report.js; \
	  echo ';'; } > $@

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(HEADERS) Makefile
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(LAYER_CFLAGS) -MMD -c -o $@ $<

$(BUILD)/libfidx.a: $(LIB_OBJS)
$(BUILD)/libfidx-core.a: $(CORE_OBJS)
$(BUILD)/libfidx-store.a: $(STORE_OBJS)
$(BUILD)/libfidx-tool.a: $(TOOL_OBJS)
$(BUILD)/libfidx.a $(BUILD)/libfidx-core.a $(BUILD)/libfidx-store.a $(BUILD)/libfidx-tool.a:
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/fidx: $(BUILD)/obj/tool/main.o $(BUILTIN_OBJS) $(INTERNAL_LIBS)
	$(CC) $(BASE_CFLAGS) -o $@ $(BUILD)/obj/tool/main.o $(BUILTIN_OBJS) $(LINK_INTERNAL) \
		$(ALL_LDLIBS) $(CURSES_LIBS)

# A unit test sees the headers of its layer (the SQLite backend's tests, SQLite's too),
# and the tests' own through -Itests (tests/store/fixture.h: "store/fixture.h").
TEST_HEADERS := $(wildcard tests/*/*.h tests/*/*/*.h)
$(BUILD)/tests/lib/%: TEST_INC = $(LIB_INC)
$(BUILD)/tests/core/% $(BUILD)/tests/store/%: TEST_INC = $(CORE_INC) $(CRYPTO_CFLAGS)
$(BUILD)/tests/store/sqlite/%: TEST_INC = $(SQLITE_INC) $(SQLITE_CFLAGS)
$(BUILD)/tests/tool/%: TEST_INC = $(TOOL_INC) $(CRYPTO_CFLAGS)
$(BUILD)/tests/%: tests/%.c $(TEST_HEADERS) $(INTERNAL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(TEST_INC) -Itests $(shell pkg-config --cflags cmocka) -o $@ $< \
		$(LINK_INTERNAL) $(ALL_LDLIBS) $(shell pkg-config --libs cmocka)

# Examples of the library, built as a user would (only the public header).
$(BUILD)/examples/%: examples/%.c $(BUILD)/libfidx.a include/fidx/walk.h
	@mkdir -p $(@D)
	$(CC) -std=gnu17 -Wall -Wextra -Iinclude $(CFLAGS) $(EXTRA_CFLAGS) -o $@ $< \
		$(BUILD)/libfidx.a -pthread $(EXTRA_LDFLAGS)

# Measurement programs of bench/ (each one .c file, linked like the tests;
# bench/sqlite/ studies the SQLite backend's own choices, with SQLite).
$(BUILD)/bench/%: bench/%.c bench/bench.h $(INTERNAL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CORE_INC) $(CRYPTO_CFLAGS) -Ibench -o $@ $< $(LINK_INTERNAL) \
		$(ALL_LDLIBS)

$(BUILD)/bench/sqlite/%: bench/sqlite/%.c bench/bench.h $(INTERNAL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(SQLITE_INC) $(SQLITE_CFLAGS) $(CRYPTO_CFLAGS) -Ibench -o $@ $< \
		$(LINK_INTERNAL) $(ALL_LDLIBS)

# The I/O strategy study also measures io_uring (liburing, a --bench dependency).
$(BUILD)/bench/hash-io: bench/hash-io.c bench/bench.h $(INTERNAL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CORE_INC) $(CRYPTO_CFLAGS) $(shell pkg-config --cflags liburing) \
		-o $@ $< $(LINK_INTERNAL) $(ALL_LDLIBS) $(shell pkg-config --libs liburing)

# Test-only preloads: files that change or vanish at the moment fidx opens them
# (race-shim), allocations that fail from a chosen one on (fail-shim).  The
# suite finds the second beside the first.
$(BUILD)/tests/race-shim.so: tests/e2e/race-shim.c
	@mkdir -p $(@D)
	$(CC) -std=gnu17 -Wall -Wextra -Werror -O2 -shared -fPIC -o $@ $< -ldl

$(BUILD)/tests/fail-shim.so: tests/e2e/fail-shim.c
	@mkdir -p $(@D)
	$(CC) -std=gnu17 -Wall -Wextra -Werror -O2 -shared -fPIC -o $@ $<

# fidx with an allocation failure at a chosen call site (tests/alloc/wrap.c): the same
# objects as $(BUILD)/fidx, linked with each allocating function of libc that fidx's code
# calls wrapped (--wrap reaches fidx's own objects, not SQLite's or libcrypto's
# allocations).  t_allocsites.py finds it beside $(BUILD)/fidx, as allocfail/fidx.
ALLOC_WRAP := malloc calloc realloc reallocarray strdup strndup asprintf vasprintf \
	posix_memalign aligned_alloc open_memstream realpath getcwd __getdelim
comma := ,
$(BUILD)/tests/alloc/wrap.o: tests/alloc/wrap.c Makefile
	@mkdir -p $(@D)
	$(CC) -std=gnu17 -Wall -Wextra -Werror -O2 -g -c -o $@ $<

$(BUILD)/allocfail/fidx: $(BUILD)/obj/tool/main.o $(BUILTIN_OBJS) $(INTERNAL_LIBS) \
		$(BUILD)/tests/alloc/wrap.o
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -o $@ $(BUILD)/obj/tool/main.o $(BUILTIN_OBJS) \
		$(BUILD)/tests/alloc/wrap.o $(LINK_INTERNAL) $(ALL_LDLIBS) $(CURSES_LIBS) \
		$(addprefix -Wl$(comma)--wrap=,$(ALLOC_WRAP))

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

# Scripts run E2E_JOBS at once (the CPUs and one, at most 4; those marked "e2e: alone" by themselves); the
# durations of the last run on the same build, kept in its folder, start the longest first.
# E2E_MARKED=WORD runs only the scripts marked "e2e: WORD" (tsan: those run on the TSan build).
# One lane more than the CPUs: the scripts wait on servers, terminals and timers for about a
# third of their time (CI: 26.6 CPU-minutes in 20.4 minutes on 2 CPUs), and what must not
# share the machine is marked "e2e: alone".
E2E_JOBS ?= $(shell n=$$(( $$(nproc 2>/dev/null || echo 1) + 1 )); [ $$n -le 4 ] || n=4; echo $$n)
# E2E_PHASE=shared or alone runs one of the two parts (make check runs other work beside the
# second).  A fresh build folder (CI's) orders the scripts by tests/e2e/durations/, the
# durations of a run on the build of that name (test, tsan, asan), kept in git.
# E2E_UNMARKED=WORD leaves out the scripts marked "e2e: WORD" (no-asan: make check's ASan
# stage leaves out those whose time goes to servers, t_shard's three PostgreSQL servers).
E2E_MARKED ?=
E2E_UNMARKED ?=
E2E_PHASE ?= all
e2e: $(BUILD)/fidx $(BUILD)/tests/race-shim.so $(BUILD)/tests/fail-shim.so \
		$(BUILD)/allocfail/fidx browser-deps
	$(PYTHON) tests/e2e/run -j $(E2E_JOBS) --times $(BUILD)/e2e-times.json \
		--seed tests/e2e/durations/$(notdir $(BUILD)).json --phase $(E2E_PHASE) \
		$(if $(E2E_MARKED),--marked $(E2E_MARKED)) \
		$(if $(E2E_UNMARKED),--unmarked $(E2E_UNMARKED)) \
		--fidx $(BUILD)/fidx --shim $(BUILD)/tests/race-shim.so

# The crash-consistency torture at length: writers SIGKILLed at random moments (make check
# runs the same script briefly, tests/e2e/t_torture.py).
TORTURE_KILLS ?= 400
TORTURE_SECONDS ?= 1800
torture: $(BUILD)/fidx $(BUILD)/tests/race-shim.so
	FIDX_TORTURE_KILLS=$(TORTURE_KILLS) FIDX_TORTURE_SECONDS=$(TORTURE_SECONDS) \
		$(PYTHON) tests/e2e/run -j 1 --fidx $(BUILD)/fidx --shim $(BUILD)/tests/race-shim.so \
		t_torture

# Allocation failure at every site: t_allocsites.py fails each allocation call site of
# fidx's code in turn (in make check's e2e run: every site of scan, one in three of the
# other commands).  docs/TESTING.md has the figures.
alloc-check: $(BUILD)/fidx $(BUILD)/allocfail/fidx
	FIDX=$(abspath $(BUILD)/fidx) FIDX_ALLOC_ALL=1 $(PYTHON) tests/e2e/t_allocsites.py

# The Windows crypto backend (src/core/hash_cng.c) under Wine, apart from the Windows build:
# the known answers of tests/core/hash_vectors.h, random files against coreutils and xxhsum
# (tests/windows/crypto-check; CNG_BENCH=1 adds bench/windows/read-hash.c on a 256 MiB file).
.PHONY: cng-check
cng-check:
	OUT=$(BUILD)/windows-cng tests/windows/crypto-check $(if $(CNG_BENCH),--bench)

# The browser tests' driver (t_report.py): playwright-core from the npm registry, at the
# version package-lock.json pins, driving Debian's Chromium (scripts/install-deps); never a
# browser download.
browser-deps: tests/browser/node_modules/.installed
tests/browser/node_modules/.installed: tests/browser/package.json tests/browser/package-lock.json
	cd tests/browser && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

run: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/fidx scan -o fidx.db $(DIR); st=$$?; [ $$st -le 1 ] || exit $$st
	@echo
	@echo "Some questions for ./fidx.db (fidx scans|find|dupes|du|stats|match|export, or sqlite3):"
	$(BUILD)/fidx scans fidx.db
	@echo "-- the ten largest files of the newest scan, in SQL"
	sqlite3 -header -column fidx.db "SELECT size, path FROM file WHERE scan_id = (SELECT max(id) FROM scan) AND type = 'f' ORDER BY size DESC LIMIT 10"
	$(BUILD)/fidx du fidx.db | head -12
	$(BUILD)/fidx dupes fidx.db | head -12

# The library as a user gets it: installed into a staging prefix, the example
# compiled with `pkg-config --cflags --libs fidx` alone, its counts checked.
library:
	tests/library/run $(BUILD)

# The layers kept apart: only the SQLite backend knows SQLite, libfidx.a is
# the walker alone, core never prints or exits, nothing is left unresolved.
layers: $(BUILD)/fidx $(BUILD)/libfidx.a
	tests/layers/run $(BUILD) $(EXTRA_LDFLAGS)

# The PostgreSQL store: the server harness's own checks, then the store
# conformance suite against a throwaway server (tests/pg/with-server).
pg: $(BUILD)/tests/store/test_store $(BUILD)/tests/store/test_seal
	$(PYTHON) tests/pg/t_pgserver.py
	tests/pg/with-server env FIDX_TEST_STORE=postgresql $(BUILD)/tests/store/test_store
	tests/pg/with-server env FIDX_TEST_STORE=postgresql $(BUILD)/tests/store/test_seal

# Fuzzing (docs/TESTING.md): tests/fuzz/fuzz_NAME.c (tests/fuzz/sqlite/fuzz_NAME.c when it
# reads a database with SQLite itself) is a libFuzzer target over its kept corpus,
# tests/fuzz/corpus/NAME/.  The libraries and commands are built by clang into build/fuzz with
# coverage (fuzzer-no-link) and ASan+UBSan; each target links them, the commands, and main.c
# renamed fidx_main() (the query commands run in-process, as the binary runs them).
FUZZ_BUILD    ?= build/fuzz
FUZZ_CC       ?= clang
FUZZ_SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# fidx is C17 with GNU extensions; clang names one of them (a struct ending in a flexible array
# inside another, dedupe.c's FIDEDUPERANGE request) in -Wall.
FUZZ_WARN     := -Wno-gnu-variable-sized-type-not-at-end
FUZZ_SRCS     := $(sort $(wildcard tests/fuzz/fuzz_*.c tests/fuzz/sqlite/fuzz_*.c))
FUZZ_NAMES    := $(patsubst fuzz_%.c,%,$(notdir $(FUZZ_SRCS)))
FUZZ_BINS     := $(patsubst tests/%.c,$(BUILD)/tests/%,$(FUZZ_SRCS))
FUZZ_SECONDS  ?= 60
FUZZ_CHECK_SECONDS ?= 1
# What every run gets: no input over 64 KiB (a database of 16 pages), a hang after 10 s, the
# messages of fidx itself (stdout, stderr) out of the log; libFuzzer and the sanitizers still
# write theirs.
FUZZ_FLAGS    ?= -max_len=65536 -timeout=10 -rss_limit_mb=2048 -close_fd_mask=3
# The shell's $$bin: the target of name $$n.
FUZZ_BIN      = bin=$(FUZZ_BUILD)/tests/fuzz/fuzz_$$n; \
		[ -x $$bin ] || bin=$(FUZZ_BUILD)/tests/fuzz/sqlite/fuzz_$$n

fuzz-build:
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) CFLAGS='-O1 -g' \
		EXTRA_CFLAGS='-Werror $(FUZZ_WARN) $(FUZZ_SANITIZE) -fsanitize=fuzzer-no-link' \
		EXTRA_LDFLAGS='$(FUZZ_SANITIZE)' fuzz-targets

fuzz-targets: $(FUZZ_BINS)

# main.c with its main() renamed, for the targets that run commands.
$(BUILD)/obj/fuzz/main.o: src/tool/main.c $(HEADERS) Makefile
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(TOOL_INC) $(CRYPTO_CFLAGS) -Dmain=fidx_main -c -o $@ $<

$(BUILD)/tests/fuzz/%: TEST_INC = $(TOOL_INC) $(CRYPTO_CFLAGS)
$(BUILD)/tests/fuzz/sqlite/%: TEST_INC = $(TOOL_INC) $(SQLITE_INC) $(SQLITE_CFLAGS) $(CRYPTO_CFLAGS)
$(FUZZ_BINS): $(BUILD)/tests/%: tests/%.c $(wildcard tests/fuzz/*.h) $(INTERNAL_LIBS) \
		$(BUILD)/obj/fuzz/main.o $(BUILTIN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(TEST_INC) -Itests -fsanitize=fuzzer -o $@ $< \
		$(BUILD)/obj/fuzz/main.o $(BUILTIN_OBJS) $(LINK_INTERNAL) $(ALL_LDLIBS) $(CURSES_LIBS)

# Each target for FUZZ_SECONDS, one at a time on one core; what it finds new is kept in its
# corpus (minimise it now and then: docs/TESTING.md), a crash in $(FUZZ_BUILD)/artifacts/.
fuzz: deps
	@$(MAKE) --no-print-directory fuzz-build
	@mkdir -p $(FUZZ_BUILD)/artifacts
	@set -e; for n in $(FUZZ_NAMES); do echo "== fuzz $$n ($(FUZZ_SECONDS) s)"; \
		mkdir -p tests/fuzz/corpus/$$n; $(FUZZ_BIN); \
		$$bin $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
			-artifact_prefix=$(FUZZ_BUILD)/artifacts/$$n- -print_final_stats=1 \
			tests/fuzz/corpus/$$n; done

# Each target over its kept corpus, then FUZZ_CHECK_SECONDS of fuzzing; what it finds goes to
# a folder thrown away, so the corpus in git is never written by a check.
fuzz-check:
	@$(MAKE) --no-print-directory fuzz-build
	@set -e; for n in $(FUZZ_NAMES); do \
		new=$$(mktemp -d); st=0; $(FUZZ_BIN); \
		$$bin $(FUZZ_FLAGS) -max_total_time=$(FUZZ_CHECK_SECONDS) \
			-artifact_prefix=$$new/ $$new tests/fuzz/corpus/$$n >$$new.log 2>&1 || st=$$?; \
		echo "== fuzz-check $$n: $$(grep -E '^Done ' $$new.log || echo 'no end')"; \
		if [ $$st -ne 0 ]; then tail -n 60 $$new.log; rm -rf $$new $$new.log; \
			echo "fuzz-check: $$n failed (exit $$st)"; exit 1; fi; \
		rm -rf $$new $$new.log; done

# Each build of `make check` compiles on every CPU (BUILD_JOBS).
BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
# What a build's tests need built: the tool, the libraries, the unit tests, the shims.
test-binaries: all $(UNIT_BINS) $(BUILD)/tests/race-shim.so $(BUILD)/tests/fail-shim.so \
	$(BUILD)/allocfail/fidx

# make check, in stages; the CPUs a stage leaves idle are given to work of a later one.
#
#   1. build/test (-Werror), on every CPU.
#   2. Its tests: layers, unit, pg, the e2e suite, library.  Beside them, at idle priority
#      (CHECK_IDLE: SCHED_IDLE, so that they take only the CPU time the tests leave, as the
#      unit tests, the servers' waits and the scripts that run alone do), the later stages'
#      builds, one after the other (make check-builds): build/tsan, build/asan and
#      build/fuzz, each on every CPU, then the TSan unit tests of TSAN_UNITS (threads and
#      no timing: they only take longer there); their output is in build/check/builds.log,
#      shown when one fails (the unit tests' at the end).  A stage that needs a build not
#      done yet waits for it.
#   3. TSan: the e2e scripts marked 'e2e: tsan' (t_hashio, then four that run alone).
#   4. ASan+UBSan: the e2e scripts that share the CPUs (tests/e2e/run --phase shared), then
#      those marked 'e2e: alone', one at a time (--phase alone).
#   From the start of stage 3 on, in the background at normal priority (make
#   check-background): fuzz-check (the fuzz targets over their corpora, once build/fuzz is
#   made), then each target of CHECK_EXTRA_BG, one after the other, each into
#   build/check/NAME.log, shown at the end.  Stage 3 keeps a CPU idle most of its time
#   (t_hashio alone, then the scripts that run alone), as do the alone scripts of stage 4.
#   5. make check waits for those and fails when any stage or background target failed.
#
# CHECK_EXTRA_BG: make targets that make check runs in the background, one after the other,
# beside the TSan and ASan stages (stage 3, about 2 minutes with a CPU idle most of it, then
# the ASan stage, whose alone scripts leave a CPU idle for 2.5 minutes more; fuzz-check takes
# the first 40 s), and waits for at its end; their failure is make check's.  The Windows
# stage plugs in here: a target check-windows (the MinGW build of fidx.exe and its tests
# under Wine) is run as soon as this Makefile has a rule "check-windows:"; a name without a
# rule is skipped with a note, and CHECK_EXTRA_BG= runs nothing.  A target that builds on every CPU slows the
# stages beside it no more than its CPU time: it may use $(BUILD_JOBS).
CHECK_EXTRA_BG ?= check-windows
CHECK_IDLE ?= $(shell chrt --idle 0 true 2>/dev/null && echo chrt --idle 0 || echo nice -n 19)
TEST_MAKE = $(MAKE) --no-print-directory BUILD=build/test EXTRA_CFLAGS=-Werror
TSAN_MAKE = $(MAKE) --no-print-directory BUILD=build/tsan CFLAGS='-O1 -g' \
	EXTRA_CFLAGS='-Werror $(SANITIZE_TSAN)' EXTRA_LDFLAGS='$(SANITIZE_TSAN)'
ASAN_MAKE = $(MAKE) --no-print-directory BUILD=build/asan CFLAGS='-O1 -g' \
	EXTRA_CFLAGS='-Werror $(SANITIZE_ASAN)' EXTRA_LDFLAGS='$(SANITIZE_ASAN) $(ASAN_LINK_UBSAN)'
# What the e2e target of a build needs (the sanitizer builds make it in check-builds).
E2E_BINS = fidx tests/race-shim.so tests/fail-shim.so allocfail/fidx
# The folder of make check's logs and of the marks check-builds leaves as each build is done.
CHECK_DIR := build/check
# The shell's wait_built NAME: waits until check-builds has made build NAME (its mark), or
# returns 1 showing the log when check-builds failed.
WAIT_BUILT = wait_built() { \
		while [ ! -e $(CHECK_DIR)/$$1.built ]; do \
			if [ -e $(CHECK_DIR)/builds.failed ]; then \
				echo "== the builds of make check failed ($(CHECK_DIR)/builds.log):"; \
				tail -n 40 $(CHECK_DIR)/builds.log; return 1; fi; \
			sleep 0.5; done; }

check-builds:
	$(TSAN_MAKE) -j$(BUILD_JOBS) $(addprefix build/tsan/tests/,$(TSAN_UNITS)) \
		$(addprefix build/tsan/,$(E2E_BINS))
	@touch $(CHECK_DIR)/tsan.built
	$(ASAN_MAKE) -j$(BUILD_JOBS) $(addprefix build/asan/,$(E2E_BINS))
	@touch $(CHECK_DIR)/asan.built
	$(MAKE) --no-print-directory -j$(BUILD_JOBS) fuzz-build
	@touch $(CHECK_DIR)/fuzz.built
	@echo "== threaded core under TSan"
	$(TSAN_MAKE) UNIT_BINS='$(addprefix build/tsan/tests/,$(TSAN_UNITS))' unit
	@touch $(CHECK_DIR)/tsan-unit.built

# Beside the TSan and ASan stages: fuzz-check (once build/fuzz is made), then each of
# CHECK_EXTRA_BG that has a rule here; a log each.  Fails when one failed, after running all.
check-background:
	@st=0; $(WAIT_BUILT); for t in fuzz-check $(CHECK_EXTRA_BG); do \
		log=$(CHECK_DIR)/$$t.log; \
		if ! grep -qs "^$$t *:" $(MAKEFILE_LIST); then \
			echo "== $$t: no rule in the Makefile, skipped" > $$log; continue; fi; \
		t0=$$(date +%s); echo "== $$t (in the background beside the sanitizer stages)" > $$log; \
		if [ $$t = fuzz-check ] && ! wait_built fuzz >> $$log 2>&1; then st=1; continue; fi; \
		if $(MAKE) --no-print-directory $$t >> $$log 2>&1; then \
			echo "== $$t: done in $$(( $$(date +%s) - t0 )) s" >> $$log; \
		else echo "== $$t: FAILED after $$(( $$(date +%s) - t0 )) s" >> $$log; st=1; fi; \
		done; exit $$st

check: deps
	@$(TEST_MAKE) -j$(BUILD_JOBS) test-binaries
	@rm -rf $(CHECK_DIR); mkdir -p $(CHECK_DIR)
	@echo "== the TSan, ASan and fuzz builds, in the background at idle priority"
	@$(WAIT_BUILT); \
	setsid $(CHECK_IDLE) sh -c '$(MAKE) --no-print-directory check-builds \
		> $(CHECK_DIR)/builds.log 2>&1 || touch $(CHECK_DIR)/builds.failed' & builds=$$!; \
	late=; trap 'kill -TERM -$$builds $${late:+-$$late} 2>/dev/null || :' EXIT; \
	set -e; \
	$(TEST_MAKE) layers unit pg e2e library; \
	echo "== in the background: fuzz-check$(CHECK_EXTRA_BG:%=, %) ($(CHECK_DIR)/*.log)"; \
	setsid $(MAKE) --no-print-directory check-background > $(CHECK_DIR)/background.log 2>&1 & \
		late=$$!; \
	echo "== threaded end-to-end scripts under TSan (marked 'e2e: tsan')"; \
	wait_built tsan; \
	$(TSAN_MAKE) E2E_MARKED=tsan e2e; \
	echo "== end-to-end suite under ASan+UBSan: the scripts that share the CPUs"; \
	wait_built asan; \
	$(ASAN_MAKE) E2E_PHASE=shared E2E_UNMARKED=no-asan e2e; \
	echo "== end-to-end suite under ASan+UBSan: the scripts that run alone"; \
	$(ASAN_MAKE) E2E_PHASE=alone E2E_UNMARKED=no-asan e2e; \
	echo "== waiting for the background: fuzz-check$(CHECK_EXTRA_BG:%=, %)"; \
	st=0; wait $$late || st=$$?; late=; \
	for t in fuzz-check $(CHECK_EXTRA_BG); do cat $(CHECK_DIR)/$$t.log; done; \
	cat $(CHECK_DIR)/background.log; \
	wait_built tsan-unit || st=1; wait $$builds || st=1; \
	sed -n '/^== threaded core under TSan/,$$p' $(CHECK_DIR)/builds.log; \
	[ $$st -eq 0 ] || { echo "make check: a background stage failed"; exit 1; }

install: all
	install -D -m 755 $(BUILD)/fidx $(DESTDIR)$(PREFIX)/bin/fidx
	install -D -m 644 man/fidx.1 $(DESTDIR)$(PREFIX)/share/man/man1/fidx.1
	install -D -m 644 $(BUILD)/libfidx.a $(DESTDIR)$(PREFIX)/lib/libfidx.a
	install -D -m 644 include/fidx/walk.h $(DESTDIR)$(PREFIX)/include/fidx/walk.h
	install -D -m 755 scripts/fidx-pg-setup $(DESTDIR)$(PREFIX)/bin/fidx-pg-setup
	install -D -m 755 scripts/fidx-pg-shard $(DESTDIR)$(PREFIX)/bin/fidx-pg-shard
	install -D -m 644 src/store/postgres/schema.sql $(DESTDIR)$(PREFIX)/share/fidx/schema.sql
	install -D -m 644 completions/fidx.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/fidx
	install -D -m 644 completions/_fidx $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_fidx
	install -D -m 644 completions/fidx.fish \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/fidx.fish
	@mkdir -p $(DESTDIR)$(PREFIX)/lib/pkgconfig
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' fidx.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/fidx.pc

bench: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all
	bench/run

bench-walk: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all $(BUILD)/bench/gen-tree $(BUILD)/bench/walk-nftw \
		$(BUILD)/bench/walk-fts
	BUILD=$(BUILD) bench/walk

bench-hash: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all $(BUILD)/bench/read-size $(BUILD)/bench/hash-io
	BUILD=$(BUILD) bench/hash

bench-hdd: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all $(BUILD)/bench/read-order
	BUILD=$(BUILD) bench/hdd-order

bench-find: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all $(BUILD)/bench/gen-tree $(BUILD)/bench/sqlite/find-build
	BUILD=$(BUILD) bench/find

bench-du: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all $(BUILD)/bench/gen-tree
	BUILD=$(BUILD) bench/du

bench-browse: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all $(BUILD)/bench/gen-tree
	BUILD=$(BUILD) bench/browse

bench-dupes: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all
	BUILD=$(BUILD) bench/dupes

# Preload of bench/export: another stdout buffer size without rebuilding fidx.
$(BUILD)/bench/stdout-buffer.so: bench/stdout-buffer.c
	@mkdir -p $(@D)
	$(CC) -std=gnu17 -Wall -Wextra -Werror -O2 -shared -fPIC -o $@ $< -ldl

bench-export: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all $(BUILD)/bench/gen-tree $(BUILD)/bench/stdout-buffer.so
	BUILD=$(BUILD) bench/export

bench-match: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all $(BUILD)/bench/sqlite/match-set
	BUILD=$(BUILD) bench/match

bench-report: deps browser-deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all $(BUILD)/bench/gen-tree
	BUILD=$(BUILD) bench/report

bench-fleet: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all $(BUILD)/bench/gen-tree
	BUILD=$(BUILD) bench/fleet

bench-fleet-scale: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all $(BUILD)/bench/sqlite/gen-fleet
	BUILD=$(BUILD) bench/fleet-scale

# Its own build: chains of 30 scans kept as changes (the store keeps 8 by default).
bench-delta: deps
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/bench-delta \
		EXTRA_CFLAGS=-DPG_DELTA_DEPTH=64 $(BUILD)/bench-delta/fidx
	BUILD=$(BUILD)/bench-delta bench/delta

bench-store: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all $(BUILD)/bench/gen-tree $(BUILD)/bench/sqlite/store-bench
	BUILD=$(BUILD) bench/store

bench-rescan: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all
	BUILD=$(BUILD) bench/rescan

bench-aide: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all
	BUILD=$(BUILD) bench/aide

bench-image: deps
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all
	BUILD=$(BUILD) bench/image

clean:
	rm -rf build

include mk/windows.mk

-include $(wildcard $(BUILD)/obj/*.d $(BUILD)/obj/*/*.d $(BUILD)/obj/*/*/*.d)
