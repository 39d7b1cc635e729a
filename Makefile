# attn - build, test and install.
#
#   make demo      install missing packages, build, explain the worked example
#   make check     install missing packages, run every test, also under
#                  AddressSanitizer and UndefinedBehaviorSanitizer (make
#                  -jN check runs suites side by side, at any N)
#   make install   PREFIX=/usr/local DESTDIR= (uninstall likewise)
#   make check-valgrind   the CLI suite under valgrind memcheck
#   make dist      attn-VERSION.tar.gz; dist-test and deb-test: the
#                  tarball, and the Debian packages of debian/
#   make fuzz      libFuzzer harnesses, FUZZ_SECONDS (60) each; fuzz-ci: 20 s
#   make bench     attn against NumPy (BENCH_QUICK=1: a subset, a minute;
#                  BENCH_AS=avx2: an AVX-512 machine as an AVX2 one)
#
# Objects go to $(BUILD) (build/, or build/asan/ for the sanitizer run);
# a change of the flags that make code rebuilds them.  WERROR makes no
# code, so it is not one of them: a build directory remembers it
# ($(BUILD)/flags) and compiles every object with it until the code flags
# change, so that `make install` after `make check` installs the objects
# that were tested, and a build that asks for -Werror rebuilds objects
# made without it.
#
# CC, CXX, AR, CFLAGS and CXXFLAGS may come from the environment or the
# command line; LDLIBS adds libraries to the ones attn links with
# (ATTN_LIBS).  The library is C but for lib/charconv.cc, which wraps
# libstdc++'s <charconv>; whatever links libattn.a adds -lstdc++.

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions

CC     ?= cc
CFLAGS ?= -O2 -g
CXX    ?= g++
CXXFLAGS ?= -O2 -g
AR     ?= ar
BUILD  ?= build

# The version: VERSION's, and the commit's in a git checkout
# (tools/version.sh says how).
VERSION := $(shell sh tools/version.sh)
ifeq ($(VERSION),)
$(error tools/version.sh found no version)
endif

WARNINGS = -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wconversion
CXX_WARNINGS = -std=c++17 -Wall -Wextra -Wpedantic -Wshadow -Wconversion
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all \
           -fno-omit-frame-pointer

include tools/pkg.mk
CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS   = $(shell pkg-config --libs check)

BASE_CFLAGS = $(CPPFLAGS) $(CFLAGS) $(SAN) $(WARNINGS) $(CJSON_CFLAGS) \
              $(ZIP_CFLAGS) -Ilib \
              -MMD -MP
# -Werror when this build directory's objects are made with it (read when
# a recipe runs, after $(BUILD)/flags is up to date).
STRICT      = $(shell sed -n 2p $(BUILD)/flags 2>/dev/null)
ALL_CFLAGS  = $(BASE_CFLAGS) $(STRICT)
BASE_CXXFLAGS = $(CPPFLAGS) $(CXXFLAGS) $(SAN) $(CXX_WARNINGS) -Ilib -MMD -MP
ALL_CXXFLAGS  = $(BASE_CXXFLAGS) $(STRICT)
ATTN_LIBS  = $(CJSON_LIBS) $(ZIP_LIBS) -lstdc++ -lm -lpthread
# The CLI alone adds libunistring (display widths of labels in tables)
# and ncurses (attn workbench; ncursesw, the wide-character build, where
# pkg-config knows it); libattn never prints, so it needs neither.  Only
# the file that draws the workbench includes curses.h.
CLI_LIBS   = -lunistring $(CURSES_LIBS)
# attn carries libstdc++, libunistring and ncurses in itself, from the
# .a files their -dev packages hold: the dynamic loader then maps libc,
# libm, libcjson, libzip and zlib (and what libzip links) and relocates
# fewer symbols, which halves the CPU time of attn's start
# (bench/README.md).
# STATIC_LIBS= links them shared; a sanitizer build always does.
STATIC_LIBS ?= 1
ifeq ($(STATIC_LIBS)$(SAN),1)
ATTN_LINK  = -static-libgcc -Wl,-Bstatic -lunistring $(CURSES_LIBS) \
             -lstdc++ -Wl,-Bdynamic $(CJSON_LIBS) $(ZIP_LIBS) -lm -lpthread
else
ATTN_LINK  = $(CLI_LIBS) $(ATTN_LIBS)
endif

LIB_SRC  = $(wildcard lib/*.c) $(wildcard lib/*.cc)
CLI_SRC  = $(wildcard cli/*.c)
UNIT_SRC = $(wildcard tests/unit/*.c) $(wildcard tests/ref/*.c)

LIB_OBJ  = $(patsubst %.cc,$(BUILD)/%.o,$(LIB_SRC:%.c=$(BUILD)/%.o))
# The HTML page's script is a JavaScript file of its own,
# cli/print_html.js, which tools/js2c.sh makes into C strings.
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/print_html_js.o
UNIT_OBJ = $(UNIT_SRC:%.c=$(BUILD)/%.o)

LIBATTN = $(BUILD)/libattn.a
# What the library's objects add, so that libattn.so.0 can hold them too
# (below, where they are compiled).
LIB_PIC = -fPIC -fno-semantic-interposition
LIBATTN_SO = $(BUILD)/libattn.so.0
ATTN    = $(BUILD)/attn
UNIT    = $(BUILD)/unit-tests

# Shell completion, generated from the table of options by a program
# linked with the CLI's objects (all but main).
COMPLETE     = $(BUILD)/attn-complete
COMPLETE_OBJ = $(BUILD)/tools/complete.o
COMPLETIONS  = $(BUILD)/attn.bash $(BUILD)/_attn

# Packages on Debian: what building needs, and what the tests add.
# debian/control's Build-Depends names the same (build-essential's
# aside): make deb-test compares them.
BUILD_PKGS = pkg-config g++ libcjson-dev check libunistring-dev \
             libncurses-dev libzip-dev zlib1g-dev
TEST_PKGS  = groff-base man-db jq locales tmux python3 libxml2-utils \
             librsvg2-bin chromium zsh python3-numpy python3-torch

.PHONY: all demo check check-plain check-asan check-valgrind \
        valgrind-setup test unit cli-test cli-locale-test bad-test matrix-test mem-test \
        doc-test boundary-test cycles-test build-test install-test lint-man \
        visual-test completion-test progress-test npy-test kernel-test grad-kernel-test deps \
        test-deps install uninstall clean bench-numbers bench bench-test \
        dist dist-test deb-test ci-deps FORCE

all: $(ATTN) $(LIBATTN) $(LIBATTN_SO) $(COMPLETIONS)

# The stamp: line 1, the compiler and the flags that make code (not the
# test objects' own additions, which would make the stamp depend on which
# target asked first); line 2, WERROR.  Without WERROR, a stamp whose
# code flags are the same is kept, -Werror and all.
CODE_FLAGS = $(CC) $(BASE_CFLAGS) $(CXX) $(BASE_CXXFLAGS) $(LIB_PIC)

$(BUILD)/flags: FORCE
	@mkdir -p $(@D)
	@new=$@.$$$$; printf '%s\n%s\n' '$(CODE_FLAGS)' '$(WERROR)' >$$new; \
	if cmp -s $$new $@ || { [ -z '$(WERROR)' ] && \
	    [ "$$(head -n 1 $@ 2>/dev/null)" = '$(CODE_FLAGS)' ]; }; then \
		rm -f $$new; \
	else \
		mv $$new $@; \
	fi

$(BUILD)/%.o: %.c $(BUILD)/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.cc $(BUILD)/flags
	@mkdir -p $(@D)
	$(CXX) $(ALL_CXXFLAGS) -c -o $@ $<

$(BUILD)/tests/%.o: ALL_CFLAGS += $(CHECK_CFLAGS) -Itests/unit -Itests/ref
# The library's objects go into libattn.a and libattn.so.0 alike, so they
# are position-independent; -fno-semantic-interposition lets calls within
# the library be inlined and bound directly, as in an executable, since
# libattn.so.0 exports only the public API (lib/libattn.map), which no
# call inside the library expects to be replaced.
$(BUILD)/lib/%.o: ALL_CFLAGS += $(LIB_PIC)
$(BUILD)/lib/%.o: ALL_CXXFLAGS += $(LIB_PIC)
$(BUILD)/cli/workbench_draw.o: ALL_CFLAGS += $(CURSES_CFLAGS)
# The emulation's float32 steps are each one rounding: never contracted
# into an fma that the software oracle (tests/unit/emulate_ref.c) lacks.
$(BUILD)/lib/emulate.o $(BUILD)/lib/round.o: ALL_CFLAGS += -ffp-contract=off

include tools/js2c.mk

$(BUILD)/gen/print_html_js.o: $(BUILD)/gen/print_html_js.c $(BUILD)/flags
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# attn --version: main.o alone is compiled with the version, and again
# when it changes ($(BUILD)/version holds the last one).
$(BUILD)/cli/main.o: ALL_CFLAGS += -DATTN_VERSION='"$(VERSION)"'
$(BUILD)/cli/main.o: $(BUILD)/version

$(BUILD)/version: FORCE
	@mkdir -p $(@D)
	@echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' >$@

$(LIBATTN): $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

# The shared library: soname libattn.so.0, exporting what lib/libattn.map
# lists, the public headers' functions (tests/boundary.sh holds the two
# together), with every symbol it uses resolved (-z defs).  -z nodelete
# keeps it mapped after a dlclose: the thread pool's idle workers run its
# code for the life of the process.  attn and the tests link libattn.a,
# which also holds what attn_private.h declares.
$(LIBATTN_SO): $(LIB_OBJ) lib/libattn.map
	$(CXX) -shared $(CFLAGS) $(SAN) $(LDFLAGS) -Wl,-soname,libattn.so.0 \
	    -Wl,--version-script=lib/libattn.map -Wl,-z,defs \
	    -Wl,-z,nodelete -o $@ $(LIB_OBJ) $(ATTN_LIBS) $(LDLIBS)

$(ATTN): $(CLI_OBJ) $(LIBATTN)
	$(CC) $(CFLAGS) $(SAN) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIBATTN) \
	    $(ATTN_LINK) $(LDLIBS)

$(BUILD)/tools/%.o: ALL_CFLAGS += -Icli

$(COMPLETE): $(COMPLETE_OBJ) $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ)) \
    $(LIBATTN)
	$(CC) $(CFLAGS) $(SAN) $(LDFLAGS) -o $@ $^ $(CLI_LIBS) $(ATTN_LIBS) \
	    $(LDLIBS)

$(BUILD)/attn.bash: $(COMPLETE)
	./$(COMPLETE) bash >$@.tmp && mv $@.tmp $@

$(BUILD)/_attn: $(COMPLETE)
	./$(COMPLETE) zsh >$@.tmp && mv $@.tmp $@

# The CLI's objects but main's, as an archive: a unit test that reads
# the CLI's tables (check_suggest.c, the table of options) takes what it
# calls and what that calls, and no more.
CLI_ARCHIVE = $(BUILD)/attn-cli.a

$(CLI_ARCHIVE): $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ))
	rm -f $@
	$(AR) rcs $@ $^

# -iquote: cli/check.h is not Check's <check.h>.
$(BUILD)/tests/unit/check_suggest.o: ALL_CFLAGS += -iquote cli

# The unit tests add libunistring, the oracle of lib/utf8.c's table of
# Unicode's format characters (and the CLI's own libraries).
$(UNIT): $(UNIT_OBJ) $(CLI_ARCHIVE) $(LIBATTN)
	$(CC) $(CFLAGS) $(SAN) $(LDFLAGS) -o $@ $(UNIT_OBJ) $(CLI_ARCHIVE) \
	    $(LIBATTN) $(CHECK_LIBS) $(CLI_LIBS) $(ATTN_LIBS) $(LDLIBS)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) \
    $(COMPLETE_OBJ:.o=.d) $(BUILD)/bench/numbers.d \
    $(BUILD)/bench/compute.d

# ---------------------------------------------------------------- set-up

# Install what pkg-config, groff, jq or localedef cannot find, with
# apt-get as root; anyone else is told the apt-get command, never sudo.
deps:
	@sh tests/install-deps.sh $(BUILD_PKGS)

test-deps:
	@sh tests/install-deps.sh $(BUILD_PKGS) $(TEST_PKGS)

demo: deps
	@$(MAKE) --no-print-directory all
	./$(ATTN) --explain -d 3 data/examples/apple-cheese.json

# ---------------------------------------------------------------- tests

# The whole suite: warnings are errors; the suites that run attn's code,
# on the plain build and again under ASan and UBSan.
check: test-deps
	@$(MAKE) --no-print-directory check-plain check-asan
	@echo 'make check: all suites passed'

# Suites of attn's code: make check runs each on both builds.
CODE_TESTS = unit bad-test mem-test doc-test visual-test \
             completion-test progress-test npy-test kernel-test \
             grad-kernel-test
# Suites of what a sanitizer does not change (the files' graph, the
# exported names, the man page, the build's variables, the benchmark's
# table, the installed tree): once, on the plain build.  The matrix,
# whose point is the sanitizers' view of every combination: once, under
# them.  The CLI suite runs on both builds, in a locale whose decimal
# point is a comma on the plain one and in C under the sanitizers: its
# expected bytes are the same in both.
PLAIN_TESTS = cli-locale-test cycles-test boundary-test build-test \
              lint-man bench-test install-test
ASAN_TESTS  = cli-test matrix-test

# The two halves of make check, which make -j runs side by side: they
# share no file (build/ and build/asan/).
check-plain:
	@$(MAKE) --no-print-directory WERROR=-Werror $(CODE_TESTS) \
	    $(PLAIN_TESTS)

# Under the sanitizers the visual suite runs attn's own screens in tmux
# (the heatmap, the workbench): the page in Chromium and the SVG in
# rsvg-convert are the same bytes the plain build's run shows them, and
# the matrix writes both under the sanitizers.
check-asan:
	@$(MAKE) --no-print-directory WERROR=-Werror BUILD=build/asan \
	    SAN='$(SANFLAGS)' VISUAL_PARTS='heatmap-tmux workbench-tmux' \
	    $(CODE_TESTS) $(ASAN_TESTS)

# Every suite on one build (BUILD, SAN as given).
test: $(CODE_TESTS) $(PLAIN_TESTS) $(ASAN_TESTS)

# Each suite prints its time, "time build unit: 12.3 s".
TIMED = sh tests/timed.sh

unit: $(UNIT)
	$(TIMED) '$(BUILD) unit' sh tests/locale.sh ./$(UNIT)

cli-test: $(ATTN)
	$(TIMED) '$(BUILD) cli-test' sh tests/cli/run.sh ./$(ATTN)

# The CLI suite where the decimal point is a comma: the same bytes.
cli-locale-test: $(ATTN)
	$(TIMED) '$(BUILD) cli-test (de_DE)' sh tests/locale.sh \
	    sh tests/cli/run.sh ./$(ATTN)

# Hostile inputs (tests/bad/): one clear line, the status attn(1) gives,
# nothing on stdout, -o FILE untouched; make check runs it again under
# ASan/UBSan.
bad-test: $(ATTN)
	$(TIMED) '$(BUILD) bad-test' sh tests/bad/run.sh ./$(ATTN)

# The matrix (tests/matrix/): every printer on every stage of every
# variant (--grad, --proj, --rope, --sinks, --emulate ...) in every layout,
# generated, each run checked for its status, sanitizer reports and the
# labels of its rows; make check runs it again under ASan/UBSan.
matrix-test: $(ATTN)
	$(TIMED) '$(BUILD) matrix-test' sh tests/matrix/run.sh ./$(ATTN)

# What a person sees (tests/visual/): the heatmap in a real terminal, the
# SVG checked by xmllint and rendered by rsvg-convert, the HTML page in
# headless Chromium.
visual-test: $(ATTN)
	$(TIMED) '$(BUILD) visual-test' sh tests/visual/run.sh ./$(ATTN) \
	    $(VISUAL_PARTS)

# The completion scripts, sourced in bash (and zsh) and asked for
# completions.
completion-test: $(ATTN) $(COMPLETIONS)
	$(TIMED) '$(BUILD) completion-test' sh tests/completion.sh ./$(ATTN) \
	    $(BUILD)/attn.bash $(BUILD)/_attn

# The progress line: in a terminal (tmux) and not in pipes.
progress-test: $(ATTN)
	$(TIMED) '$(BUILD) progress-test' sh tests/progress.sh ./$(ATTN)

# .npy in and out against NumPy's own reader and writer, and the man
# page's numpy.loadtxt of -f csv (skipped, with a notice, where no Python
# has NumPy; make check installs python3-numpy).
npy-test: $(ATTN)
	$(TIMED) '$(BUILD) npy-test' sh tests/npy.sh ./$(ATTN)

# attn --check on a float32 kernel written for the test, right and wrong.
FAKE_KERNEL = $(BUILD)/fake-kernel

$(FAKE_KERNEL): tests/kernel/fake_kernel.c $(BUILD)/flags
	$(CC) $(CFLAGS) $(SAN) $(WARNINGS) $(STRICT) $(LDFLAGS) -o $@ \
	    tests/kernel/fake_kernel.c -lm

kernel-test: $(ATTN) $(FAKE_KERNEL)
	$(TIMED) '$(BUILD) kernel-test' sh tests/kernel/run.sh ./$(ATTN) \
	    ./$(FAKE_KERNEL)

# attn --grad --check --emulate on backward passes written in NumPy, in
# float32 and bfloat16, right and with bugs planted.
grad-kernel-test: $(ATTN)
	$(TIMED) '$(BUILD) grad-kernel-test' sh tests/kernel/grad.sh ./$(ATTN)

# libattn defines only attn_ names; cli/ includes only lib/attn.h,
# lib/attn_io.h and lib/attn_private.h; the public headers declare none
# of the CLI's plumbing; libattn.so.0 exports what they declare alone.
boundary-test: $(LIBATTN) $(LIBATTN_SO)
	$(TIMED) '$(BUILD) boundary-test' sh tests/boundary.sh $(LIBATTN) \
	    $(LIBATTN_SO)

# No circles among the files of lib/ or of cli/ (calls by nm, includes by
# cc -MM).
CYCLES_DIRS = lib cli

cycles-test: $(LIBATTN) $(ATTN)
	$(TIMED) '$(BUILD) cycles-test' sh tests/cycles.sh $(BUILD) \
	    $(CYCLES_DIRS)

# CC and AR come from the environment; LDLIBS adds to attn's libraries.
build-test:
	$(TIMED) '$(BUILD) build-test' sh tests/build.sh

# ATTN_MAX_MEMORY, cgroup limits: what attn accepts it can hold (heap
# counted by an LD_PRELOAD shim, runs under prlimit --as, a made-up
# cgroup in a private mount namespace); parts that cannot run here, as
# under ASan, are skipped with a notice.
mem-test: $(ATTN)
	$(TIMED) '$(BUILD) mem-test' sh tests/memory/run.sh ./$(ATTN)

# The examples in the man pages and the README are tests too (the
# tutorial's against the figures its books print), and every file the
# documents name is in the repository.
doc-test: $(ATTN)
	$(TIMED) '$(BUILD) doc-test' sh tests/examples.sh ./$(ATTN) \
	    $(MAN_PAGES) README.md
	sh tests/links.sh README.md HACKING.md data/examples/README.md \
	    $(MAN_PAGES) bench/README.md

# The CLI suite under valgrind memcheck: any error or leak makes valgrind
# exit 99, which fails the case; its report goes to build/valgrind/.
VALGRIND = valgrind --quiet --error-exitcode=99 --leak-check=full \
           --show-leak-kinds=definite,indirect \
           --errors-for-leak-kinds=definite,indirect \
           --log-file=$(CURDIR)/build/valgrind/%p.log

# valgrind's start costs much CPU before attn's own, once a case
# (tests/cli/run.sh): the suite runs in VALGRIND_PARTS parts, each every
# Nth case, which make -j runs side by side.
VALGRIND_PARTS = 4
VALGRIND_RUNS  = $(addprefix check-valgrind-,$(shell seq $(VALGRIND_PARTS)))

.PHONY: $(VALGRIND_RUNS)

check-valgrind: $(VALGRIND_RUNS)

$(VALGRIND_RUNS): $(ATTN) valgrind-setup
	$(TIMED) 'valgrind cli-test $(@:check-valgrind-%=%)/$(VALGRIND_PARTS)' \
	    env ATTN_TEST_WRAPPER='$(VALGRIND)' \
	    ATTN_TEST_SHARD=$(@:check-valgrind-%=%)/$(VALGRIND_PARTS) \
	    sh tests/cli/run.sh ./$(ATTN)

valgrind-setup:
	@sh tests/install-deps.sh valgrind
	@rm -rf build/valgrind && mkdir -p build/valgrind

# `make install` copies what this build made, compiling nothing.
install-test: $(ATTN) $(LIBATTN) $(LIBATTN_SO) $(COMPLETIONS)
	+$(TIMED) '$(BUILD) install-test' sh tests/install.sh $(BUILD)

lint-man:
	@for page in $(MAN_PAGES); do \
	out=$$(groff -mdoc -ww -z $$page 2>&1); \
	if [ -n "$$out" ]; then echo "$$page: $$out"; exit 1; fi; \
	echo "groff -mdoc -ww -z $$page: clean"; done

# ---------------------------------------------------------------- benchmarks

# ns a number read and written, and a JSON array's reading against CSV's
# (bench/numbers.c); lines "parse ns/number: X", "print ns/number: Y".
BENCH_NUMBERS = $(BUILD)/bench-numbers

$(BENCH_NUMBERS): $(BUILD)/bench/numbers.o $(LIBATTN)
	$(CC) $(CFLAGS) $(SAN) $(LDFLAGS) -o $@ $^ $(ATTN_LIBS) $(LDLIBS)

bench-numbers: $(BENCH_NUMBERS)
	./$(BENCH_NUMBERS)

# make bench: attn against the NumPy script bench/attn_numpy.py from CSV,
# JSON and .npy at n = 512 to 8192, and against PyTorch's in float64
# (bench/attn_torch.py) from .npy at 4096 and 8192, its kernel against
# NumPy's dgemm, its backward pass against PyTorch's autograd (1 x 8 x n
# x 128 at n = 256 to 4096) and its five-stage --check against its
# forward, its number text, --emulate bf16 and fp32 against the forward
# at 1 x 8 x n x 128, and self-attention at n =
# 65536 (bench/bench.py says how), in one table; a few minutes,
# BENCH_QUICK=1 a subset.  NumPy runs on OpenBLAS's threaded build, as
# NumPy's users have it, not on the reference BLAS; bench-spawn
# (bench/spawn.c) times each process and reads its peak RSS.  make
# check's bench-test does without PyTorch's forward rows.  `make bench
# BENCH_AS=avx2` measures an AVX-512 machine as an AVX2 one, attn and
# its peers alike (bench/bench.py says how).
BENCH_PKGS    = python3 python3-numpy python3-torch libopenblas0-pthread
BENCH_COMPUTE = $(BUILD)/bench-compute
BENCH_SPAWN   = $(BUILD)/bench-spawn

$(BENCH_COMPUTE): $(BUILD)/bench/compute.o $(LIBATTN)
	$(CC) $(CFLAGS) $(SAN) $(LDFLAGS) -o $@ $^ $(ATTN_LIBS) $(LDLIBS)

# A launcher, not a part of attn: never under the sanitizers, whose
# start-up it would add to every time it takes.
$(BENCH_SPAWN): bench/spawn.c bench/clock.h $(BUILD)/flags
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARNINGS) $(STRICT) $(LDFLAGS) -o $@ \
	    bench/spawn.c

bench:
	@sh tests/install-deps.sh $(BUILD_PKGS) $(BENCH_PKGS)
	@$(MAKE) --no-print-directory $(ATTN) $(BENCH_COMPUTE) \
	    $(BENCH_NUMBERS) $(BENCH_SPAWN)
	BENCH_AS='$(BENCH_AS)' sh bench/run.sh $(BUILD) $(BENCH_QUICK)

# make bench in miniature, with outputs that disagree and a run that
# fails: the benchmark must not rot between runs.
bench-test: $(ATTN) $(BENCH_COMPUTE) $(BENCH_SPAWN)
	$(TIMED) '$(BUILD) bench-test' sh tests/bench.sh ./$(ATTN) \
	    ./$(BENCH_COMPUTE) ./$(BENCH_SPAWN)

# ---------------------------------------------------------------- install

# attn(1), the reference, the pages of its subcommands, and the guides
# (attn help TOPIC opens them).
MAN1_PAGES = man/attn.1 man/attn-gen.1 man/attn-workbench.1
MAN7_PAGES = man/attn-kernels.7 man/attn-tutorial.7
MAN_PAGES  = $(MAN1_PAGES) $(MAN7_PAGES)

# The .pc file's paths, as ${prefix}/... when they lie under PREFIX, so
# that pkg-config --define-variable=prefix=DIR relocates them.
PC_LIBDIR     = $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
PC_INCLUDEDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))

# Installs the objects that were built (and tested: see the stamp above)
# as they are.  pkg-config finds the library as libattn and as attn; a
# program links libattn.so (the link to libattn.so.0) unless it asks for
# libattn.a.
install: $(ATTN) $(LIBATTN) $(LIBATTN_SO) $(COMPLETIONS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
	    $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man7 \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 755 $(ATTN) $(DESTDIR)$(BINDIR)/attn
	install -m 644 $(LIBATTN) $(DESTDIR)$(LIBDIR)/libattn.a
	install -m 644 $(LIBATTN_SO) $(DESTDIR)$(LIBDIR)/libattn.so.0
	ln -sf libattn.so.0 $(DESTDIR)$(LIBDIR)/libattn.so
	install -m 644 lib/attn.h $(DESTDIR)$(INCLUDEDIR)/attn.h
	install -m 644 lib/attn_io.h $(DESTDIR)$(INCLUDEDIR)/attn_io.h
	install -m 644 $(MAN1_PAGES) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(MAN7_PAGES) $(DESTDIR)$(MANDIR)/man7
	install -m 644 $(BUILD)/attn.bash $(DESTDIR)$(BASHCOMPDIR)/attn
	install -m 644 $(BUILD)/_attn $(DESTDIR)$(ZSHCOMPDIR)/_attn
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(PC_LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(PC_INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    lib/libattn.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/libattn.pc
	ln -sf libattn.pc $(DESTDIR)$(LIBDIR)/pkgconfig/attn.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/attn $(DESTDIR)$(LIBDIR)/libattn.a \
	    $(DESTDIR)$(LIBDIR)/libattn.so.0 $(DESTDIR)$(LIBDIR)/libattn.so \
	    $(DESTDIR)$(INCLUDEDIR)/attn.h $(DESTDIR)$(INCLUDEDIR)/attn_io.h \
	    $(MAN1_PAGES:man/%=$(DESTDIR)$(MANDIR)/man1/%) \
	    $(MAN7_PAGES:man/%=$(DESTDIR)$(MANDIR)/man7/%) \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/libattn.pc \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/attn.pc \
	    $(DESTDIR)$(BASHCOMPDIR)/attn $(DESTDIR)$(ZSHCOMPDIR)/_attn

clean:
	rm -rf build

# ---------------------------------------------------------------- release

# make dist: attn-VERSION.tar.gz of the last commit, the same bytes
# whoever makes it (tools/dist.sh says how); it builds outside git and
# says its version there too.
dist:
	@sh tools/dist.sh

# The tarball made twice, compared, read back, and built and tested
# outside git (tests/dist.sh).
dist-test: test-deps
	$(TIMED) 'dist-test' sh tests/dist.sh

# The Debian packages of debian/ built, linted, installed and used
# (tests/deb.sh); CI installs them with dpkg (DEB_INSTALL=dpkg).
DEB_PKGS = $(BUILD_PKGS) build-essential debhelper dpkg-dev lintian jq \
           locales zsh

deb-test:
	@sh tests/install-deps.sh $(DEB_PKGS)
	@$(MAKE) --no-print-directory $(ATTN)
	$(TIMED) '$(BUILD) deb-test' env BUILD_PKGS='$(BUILD_PKGS)' \
	    TEST_PKGS='$(TEST_PKGS)' sh tests/deb.sh ./$(ATTN)

# Every package CI needs, in one apt-get: its later steps run side by
# side, and two apt-gets at once would fight for dpkg's lock.
ci-deps:
	@sh tests/install-deps.sh $(sort $(BUILD_PKGS) $(TEST_PKGS) \
	    $(DEB_PKGS) valgrind $(FUZZ_PKGS))

FORCE:

# ---------------------------------------------------------------- fuzzing

include tests/fuzz/fuzz.mk
