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
# a change of the flags that make code rebuilds them.  -Werror is sticky:
# WERROR makes no code, so changing it alone does not rebuild; instead
# $(BUILD)/flags records it, and once a build directory was made with
# WERROR=-Werror (as make check makes it), every later make there keeps
# -Werror until the code flags change.  So `make install` after `make
# check` installs the very objects that were tested, compiling nothing,
# and a make that asks for -Werror rebuilds objects made without it.
#
# The rules of the suites are in tests/suites.mk, the benchmark's in
# bench/bench.mk, the release's in tools/release.mk, the fuzzers' in
# tests/fuzz/fuzz.mk: each beside what it runs.
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
# The Python module, where Debian's python3 finds it: its own packages'
# directory under /usr, a site's (python3.X) under any other prefix.
PYTHON     ?= /usr/bin/python3
PYTHONDIR  ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3)/dist-packages)

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
# pkg-config knows it); libattn never prints, so it needs neither (but
# libattn.so.0's session, below, takes libunistring with the printers).
# Only the file that draws the workbench includes curses.h.
CLI_LIBS   = -lunistring $(CURSES_LIBS)
# attn carries libstdc++, libunistring and ncurses in itself, from the
# .a files their -dev packages hold: the dynamic loader then maps libc,
# libm, libcjson and zlib and relocates fewer symbols, which halves the
# CPU time of attn's start (bench/README.md); libzip, and what it links,
# wait for the first .npz (lib/zip_load.c).
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
CLI_OBJ  = $(filter-out $(SESSION_OBJ),$(CLI_SRC:%.c=$(BUILD)/%.o)) \
           $(BUILD)/gen/print_html_js.o
# attn's command line as a library call (lib/attn_session.h), which
# libattn.so.0 holds with the CLI's objects it calls, for the Python
# module; attn itself does not.
SESSION_OBJ = $(BUILD)/cli/session.o
UNIT_OBJ = $(UNIT_SRC:%.c=$(BUILD)/%.o)

LIBATTN = $(BUILD)/libattn.a
# What the library's objects add, so that libattn.so.0 can hold them too
# (below, where they are compiled).
LIB_PIC = -fPIC -fno-semantic-interposition
# The shared library's soname, written here alone: the link, make
# install and the Python module (python/attn/_soname.py, which make
# writes) take it from here.
SONAME     = libattn.so.0
LIBATTN_SO = $(BUILD)/$(SONAME)
# The Python module (python/attn/) learns the soname from this file,
# which make rewrites when SONAME changes.
PY_SONAME  = python/attn/_soname.py
CLI_ARCHIVE = $(BUILD)/attn-cli.a
ATTN    = $(BUILD)/attn
UNIT    = $(BUILD)/unit-tests

# attn-mpi (cli/mpi/main.c): attn's run shared among the processes of an MPI
# job, built beside attn where Open MPI's compiler wrapper is (MPICC); MPI=
# builds attn alone.  It links the CLI's objects but main's, as the unit
# tests do.
MPICC    ?= mpicc
MPI      ?= $(if $(shell command -v $(MPICC) 2>/dev/null),1)
ATTN_MPI  = $(BUILD)/attn-mpi
MPI_OBJ   = $(BUILD)/cli/mpi/main.o

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
             librsvg2-bin chromium zsh python3-numpy python3-torch \
             python3-pytest $(MPI_PKGS)
# Open MPI, for attn-mpi: make check installs it, make and make demo do
# not; a Debian build without it takes the nompi profile.
MPI_PKGS   = openmpi-bin libopenmpi-dev

.PHONY: all demo check check-plain check-asan check-valgrind \
        valgrind-setup test unit cli-test cli-locale-test bad-test matrix-test mem-test \
        doc-test boundary-test cycles-test build-test install-test lint-man \
        visual-test completion-test progress-test npy-test kernel-test grad-kernel-test deps \
        python-test mpi-test \
        test-deps install uninstall clean bench-numbers bench bench-test \
        dist dist-test deb-test ci-deps FORCE

all: $(ATTN) $(LIBATTN) $(LIBATTN_SO) $(COMPLETIONS) $(PY_SONAME) \
    $(if $(MPI),$(ATTN_MPI))

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
# The CLI's objects too: the session's part of them goes into
# libattn.so.0 (attn, a PIE, costs nothing by it).
$(BUILD)/cli/%.o: ALL_CFLAGS += $(LIB_PIC)
$(BUILD)/cli/workbench_draw.o: ALL_CFLAGS += $(CURSES_CFLAGS)
# The emulation's float32 steps are each one rounding: never contracted
# into an fma that the software oracle (tests/unit/emulate_ref.c) lacks.
$(BUILD)/lib/emulate.o $(BUILD)/lib/round.o: ALL_CFLAGS += -ffp-contract=off
# compare.c's blocks of pairs are vectorised only where GCC may take it
# that no floating-point exception traps: the values are the same, since
# nothing is reordered or contracted.
$(BUILD)/lib/compare.o: ALL_CFLAGS += -fno-trapping-math
# libzip is loaded by the name the linker would have given it.
$(BUILD)/lib/zip_load.o: ALL_CFLAGS += -DATTN_LIBZIP='"$(ZIP_SONAME)"'

include tools/js2c.mk

$(BUILD)/gen/print_html_js.o: $(BUILD)/gen/print_html_js.c $(BUILD)/flags
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# attn --version: command.o alone is compiled with the version, and again
# when it changes ($(BUILD)/version holds the last one).
$(BUILD)/cli/command.o $(SESSION_OBJ): ALL_CFLAGS += -DATTN_VERSION='"$(VERSION)"'
$(BUILD)/cli/command.o $(SESSION_OBJ): $(BUILD)/version

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
# which also holds what attn_private.h declares.  The session
# (attn_session.h) takes from the CLI's archive what it calls, and
# libunistring with it (the printers' display widths).
$(LIBATTN_SO): $(LIB_OBJ) $(SESSION_OBJ) $(CLI_ARCHIVE) lib/libattn.map
	$(CXX) -shared $(CFLAGS) $(SAN) $(LDFLAGS) -Wl,-soname,$(SONAME) \
	    -Wl,--version-script=lib/libattn.map -Wl,-z,defs \
	    -Wl,-z,nodelete -o $@ $(LIB_OBJ) $(SESSION_OBJ) $(CLI_ARCHIVE) \
	    -lunistring $(ATTN_LIBS) $(LDLIBS)

$(ATTN): $(CLI_OBJ) $(LIBATTN)
	$(CC) $(CFLAGS) $(SAN) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIBATTN) \
	    $(ATTN_LINK) $(LDLIBS)

$(BUILD)/tools/%.o: ALL_CFLAGS += -Icli

$(MPI_OBJ): cli/mpi/main.c $(BUILD)/flags
	@mkdir -p $(@D)
	$(MPICC) $(ALL_CFLAGS) -Icli -c -o $@ $<

$(ATTN_MPI): $(MPI_OBJ) $(CLI_ARCHIVE) $(LIBATTN)
	$(MPICC) $(CFLAGS) $(SAN) $(LDFLAGS) -o $@ $(MPI_OBJ) $(CLI_ARCHIVE) \
	    $(LIBATTN) $(ATTN_LINK) $(LDLIBS)

$(COMPLETE): $(COMPLETE_OBJ) $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ)) \
    $(LIBATTN)
	$(CC) $(CFLAGS) $(SAN) $(LDFLAGS) -o $@ $^ $(CLI_LIBS) $(ATTN_LIBS) \
	    $(LDLIBS)

$(PY_SONAME): FORCE
	@echo 'SONAME = "$(SONAME)"' | cmp -s - $@ || \
	    echo 'SONAME = "$(SONAME)"' >$@

$(BUILD)/attn.bash: $(COMPLETE)
	./$(COMPLETE) bash >$@.tmp && mv $@.tmp $@

$(BUILD)/_attn: $(COMPLETE)
	./$(COMPLETE) zsh >$@.tmp && mv $@.tmp $@

# The CLI's objects but main's, as an archive (CLI_ARCHIVE, above): a
# unit test that reads the CLI's tables (check_suggest.c, the table of
# options) takes what it calls and what that calls, and no more, and so
# does libattn.so.0's session.
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
    $(SESSION_OBJ:.o=.d) $(MPI_OBJ:.o=.d) \
    $(COMPLETE_OBJ:.o=.d) $(BUILD)/bench/numbers.d \
    $(BUILD)/bench/compute.d $(BUILD)/bench/peak.d

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

# ---------------------------------------------------------------- check

# The whole suite: warnings are errors; the suites that run attn's code,
# on the plain build and again under ASan and UBSan.
check: test-deps
	@$(MAKE) --no-print-directory check-plain check-asan
	@echo 'make check: all suites passed'

# Suites of attn's code: make check runs each on both builds.
CODE_TESTS = unit bad-test mem-test doc-test visual-test \
             completion-test progress-test npy-test kernel-test \
             grad-kernel-test python-test mpi-test
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

# The rule of each suite (tests/suites.mk), the benchmark (bench/bench.mk)
# and the release's checks (tools/release.mk), each beside what it runs.
include tests/suites.mk
include bench/bench.mk

# ---------------------------------------------------------------- install

# attn(1), the reference, the pages of its subcommands, and the guides
# (attn help TOPIC opens them).
# attn-mpi(1) is installed with attn-mpi alone, and checked with the rest.
MAN1_PAGES = man/attn.1 man/attn-gen.1 man/attn-workbench.1
MAN1_MPI   = man/attn-mpi.1
MAN7_PAGES = man/attn-kernels.7 man/attn-tutorial.7
MAN_PAGES  = $(MAN1_PAGES) $(MAN1_MPI) $(MAN7_PAGES)

# The .pc file's paths, as ${prefix}/... when they lie under PREFIX, so
# that pkg-config --define-variable=prefix=DIR relocates them.
PC_LIBDIR     = $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
PC_INCLUDEDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))

# Installs the objects that were built (and tested: see the stamp above)
# as they are.  pkg-config finds the library as libattn and as attn; a
# program links libattn.so (the link to libattn.so.0) unless it asks for
# libattn.a.
install: $(ATTN) $(LIBATTN) $(LIBATTN_SO) $(COMPLETIONS) $(PY_SONAME) \
    $(if $(MPI),$(ATTN_MPI))
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
	    $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man7 \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 755 $(ATTN) $(DESTDIR)$(BINDIR)/attn
	$(if $(MPI),install -m 755 $(ATTN_MPI) $(DESTDIR)$(BINDIR)/attn-mpi)
	install -m 644 $(LIBATTN) $(DESTDIR)$(LIBDIR)/libattn.a
	install -m 644 $(LIBATTN_SO) $(DESTDIR)$(LIBDIR)/libattn.so.0
	ln -sf libattn.so.0 $(DESTDIR)$(LIBDIR)/libattn.so
	install -m 644 lib/attn.h $(DESTDIR)$(INCLUDEDIR)/attn.h
	install -m 644 lib/attn_io.h $(DESTDIR)$(INCLUDEDIR)/attn_io.h
	install -m 644 lib/attn_session.h $(DESTDIR)$(INCLUDEDIR)/attn_session.h
	install -m 644 $(MAN1_PAGES) $(DESTDIR)$(MANDIR)/man1
	$(if $(MPI),install -m 644 $(MAN1_MPI) $(DESTDIR)$(MANDIR)/man1)
	install -m 644 $(MAN7_PAGES) $(DESTDIR)$(MANDIR)/man7
	install -m 644 $(BUILD)/attn.bash $(DESTDIR)$(BASHCOMPDIR)/attn
	install -m 644 $(BUILD)/_attn $(DESTDIR)$(ZSHCOMPDIR)/_attn
	install -d $(DESTDIR)$(PYTHONDIR)/attn
	install -m 644 python/attn/*.py $(DESTDIR)$(PYTHONDIR)/attn
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(PC_LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(PC_INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    lib/libattn.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/libattn.pc
	ln -sf libattn.pc $(DESTDIR)$(LIBDIR)/pkgconfig/attn.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/attn $(DESTDIR)$(BINDIR)/attn-mpi \
	    $(DESTDIR)$(LIBDIR)/libattn.a \
	    $(DESTDIR)$(LIBDIR)/libattn.so.0 $(DESTDIR)$(LIBDIR)/libattn.so \
	    $(DESTDIR)$(INCLUDEDIR)/attn.h $(DESTDIR)$(INCLUDEDIR)/attn_io.h \
	    $(DESTDIR)$(INCLUDEDIR)/attn_session.h \
	    $(MAN1_PAGES:man/%=$(DESTDIR)$(MANDIR)/man1/%) \
	    $(MAN1_MPI:man/%=$(DESTDIR)$(MANDIR)/man1/%) \
	    $(MAN7_PAGES:man/%=$(DESTDIR)$(MANDIR)/man7/%) \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/libattn.pc \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/attn.pc \
	    $(DESTDIR)$(BASHCOMPDIR)/attn $(DESTDIR)$(ZSHCOMPDIR)/_attn
	rm -rf $(DESTDIR)$(PYTHONDIR)/attn

clean:
	rm -rf build

# ---------------------------------------------------------------- release

include tools/release.mk

FORCE:

# ---------------------------------------------------------------- fuzzing

include tests/fuzz/fuzz.mk
