# tests/fuzz/fuzz.mk - libFuzzer harnesses for attn's readers and for the
# whole program.  Included by the top Makefile; also works on its own
# (make -f tests/fuzz/fuzz.mk fuzz) from the top of the tree.
#
#   make fuzz                 build, then run each harness FUZZ_SECONDS
#                             (default 60), side by side under make -j;
#                             exit non-zero when one finds a crash, a
#                             leak, UB or a timeout
#   make fuzz-ci              the same, FUZZ_CI_SECONDS (default 20) each
#   make fuzz-regress         run each harness once over its seeds and its
#                             reproducers in tests/fuzz/regress/ (no fuzzing)
#   make fuzz-build           only build build/fuzz/fuzz_{json,text,npy,npz,
#                             jsonl,cli}
#   make fuzz-deps            install clang and libclang-rt-dev if missing
#   make fuzz-cli-seeds       regenerate tests/fuzz/corpus/fuzz_cli/
#
# Harnesses (each file's opening comment says what its input bytes mean):
#
#   fuzz_json  attn_read_array(ATTN_FMT_JSON) and attn_read_bundle; a small
#              bundle that reads is also computed (attn_plan, attn_run)
#   fuzz_text  attn_read_array for CSV, TSV, white-space text and AUTO,
#              plus a print/parse round trip of every number read
#   fuzz_cli   attn's main() in-process (cli/*.c built with
#              -Dmain=attn_main): argv from a fixed table of option words
#              (fuzz_cli_table.h), input files and stdin from the fuzz data;
#              checks exit codes, stdout/stderr rules and that a failed run
#              changes no file
#   fuzz_npy   attn_read_array for .npy (named and guessed by its magic):
#              offsets inside the file, as many elements as the bytes
#              hold, the same array when read twice; seeded with files
#              numpy wrote of each dtype, byte order, version and rank
#   fuzz_npz   .npz archives in memory through libzip into the .npy
#              reader, as --check (attn_read_named) and --proj
#              (attn_read_layer) read them: memory given back, the same
#              arrays when read twice; and archives attn's own writer
#              makes of fuzzed members (with ZIP64's fields too), which
#              must read as each member's .npy read alone; seeded with
#              archives of every kind of member
#   fuzz_jsonl attn_read_array for JSON Lines (named, and guessed by
#              name and by content): what the lines read as is what one
#              JSON array of them reads as
#
# Needs clang with libFuzzer (Debian: clang, libclang-rt-dev); FUZZ_CC
# picks the compiler, FUZZ_CXX the one for lib/charconv.cc.  Objects and binaries go to build/fuzz/, whatever
# BUILD says.  A run fuzzes a copy of the seeds, build/fuzz/corpus-NAME/
# (kept between runs, so that coverage accumulates); tests/fuzz/corpus/ is
# only read.  Crashes are saved as build/fuzz/crashes/NAME-crash-SHA1 and
# so on; reproduce one with
#
#   build/fuzz/NAME build/fuzz/crashes/NAME-crash-...
#   FUZZ_CLI_VERBOSE=1 build/fuzz/fuzz_cli FILE     (prints argv and stderr)
#
# then minimise it (NAME -minimize_crash=1 -runs=10000 FILE) and keep it
# as tests/fuzz/regress/NAME-SHORT-DESCRIPTION, which fuzz-regress runs.
#
# FUZZ_NAMES='fuzz_json' runs one harness.  To explore past a crash that
# is known but not yet fixed, add -fork=1 -ignore_crashes=1 to FUZZ_FLAGS
# (crashes are still saved; the exit status then says less).  The seeds
# of fuzz_json, fuzz_text and fuzz_jsonl are made by make-seeds.sh, those
# of fuzz_npy and fuzz_npz by make-npy-seeds.py and make-npz-seeds.py
# (they need NumPy), those of fuzz_cli by make-cli-seeds.sh.

# This file, however it was reached (include or -f), for the sub-make.
FUZZ_MK := $(lastword $(MAKEFILE_LIST))

FUZZ_CC          ?= clang
FUZZ_CXX         ?= clang++
FUZZ_SECONDS     ?= 60
FUZZ_CI_SECONDS  ?= 20
# what one fuzz-run-NAME target runs for (fuzz and fuzz-ci set it)
FUZZ_TIME        ?= $(FUZZ_SECONDS)
FUZZ_CFLAGS      ?= -O1 -g
# Passed to every harness run; a single input may take at most 10 s.
FUZZ_FLAGS       ?= -timeout=10 -rss_limit_mb=2048 -print_final_stats=1

FUZZ_DIR   = build/fuzz
# the harnesses of lib/ alone, and fuzz_cli, which adds cli/
FUZZ_LIB_NAMES = fuzz_json fuzz_text fuzz_npy fuzz_npz fuzz_jsonl
FUZZ_NAMES = $(FUZZ_LIB_NAMES) fuzz_cli
FUZZ_LIB_BINS = $(addprefix $(FUZZ_DIR)/,$(FUZZ_LIB_NAMES))
FUZZ_BINS  = $(addprefix $(FUZZ_DIR)/,$(FUZZ_NAMES))

FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=all \
                -fno-omit-frame-pointer
FUZZ_WARNINGS = -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wconversion \
                $(WERROR)
include tools/pkg.mk
FUZZ_ALL_CFLAGS   = $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
                    $(FUZZ_WARNINGS) $(CJSON_CFLAGS) $(ZIP_CFLAGS) -Ilib -Itests/fuzz \
                    -MMD -MP
FUZZ_ALL_CXXFLAGS = $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
                    -std=c++17 -Wall -Wextra -Wpedantic -Wshadow \
                    -Wconversion $(WERROR) -Ilib -MMD -MP
FUZZ_LDLIBS       = $(CJSON_LIBS) $(ZIP_LIBS) -lstdc++ -lm -lpthread
# The CLI alone adds libunistring and ncurses, as in the Makefile
# (CLI_LIBS).
FUZZ_CLI_LDLIBS   = -lunistring $(CURSES_LIBS)

FUZZ_LIB_OBJ = $(patsubst %.c,$(FUZZ_DIR)/%.o,$(wildcard lib/*.c)) \
               $(patsubst %.cc,$(FUZZ_DIR)/%.o,$(wildcard lib/*.cc))
FUZZ_CLI_OBJ = $(patsubst %.c,$(FUZZ_DIR)/%.o,$(filter-out cli/session.c,\
               $(wildcard cli/*.c))) \
               $(FUZZ_DIR)/gen/print_html_js.o
FUZZ_HARNESS_OBJ = $(FUZZ_NAMES:%=$(FUZZ_DIR)/tests/fuzz/%.o)

.PHONY: fuzz fuzz-ci fuzz-regress fuzz-build fuzz-deps fuzz-cli-seeds \
        fuzz-FORCE

# Debian packages: clang and its libFuzzer runtime, and what attn builds
# with (tests/install-deps.sh installs the missing ones).
FUZZ_PKGS = pkg-config libcjson-dev libzip-dev zlib1g-dev libunistring-dev \
            libncurses-dev clang libclang-rt-dev

fuzz-deps:
	@sh tests/install-deps.sh $(FUZZ_PKGS)

fuzz-build: $(FUZZ_BINS)

# Rebuild the objects when the compiler or its flags change.
$(FUZZ_DIR)/flags: fuzz-FORCE
	@mkdir -p $(@D)
	@echo '$(FUZZ_CC) $(FUZZ_ALL_CFLAGS) $(FUZZ_CXX)' | cmp -s - $@ || \
	    echo '$(FUZZ_CC) $(FUZZ_ALL_CFLAGS) $(FUZZ_CXX)' > $@

fuzz-FORCE:

# main() becomes attn_main(), which fuzz_cli calls; nothing else changes.
$(FUZZ_CLI_OBJ): FUZZ_DEFS = -Dmain=attn_main
$(FUZZ_DIR)/cli/workbench_draw.o: FUZZ_DEFS += $(CURSES_CFLAGS)
# libzip's soname, which lib/zip_load.c opens, as the Makefile gives it.
$(FUZZ_DIR)/lib/zip_load.o: FUZZ_DEFS += -DATTN_LIBZIP='"$(ZIP_SONAME)"'
# attn --version, as the Makefile's command.o has it (tools/version.sh).
$(FUZZ_DIR)/cli/command.o: FUZZ_DEFS += -DATTN_VERSION='"$(shell sh tools/version.sh)"'

$(FUZZ_DIR)/%.o: %.c $(FUZZ_DIR)/flags
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_ALL_CFLAGS) $(FUZZ_DEFS) -c -o $@ $<

# The page's script as C strings (tools/js2c.mk makes the .c).
include tools/js2c.mk
$(FUZZ_DIR)/gen/print_html_js.o: $(FUZZ_DIR)/gen/print_html_js.c \
    $(FUZZ_DIR)/flags
	$(FUZZ_CC) $(FUZZ_ALL_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/%.o: %.cc $(FUZZ_DIR)/flags
	@mkdir -p $(@D)
	$(FUZZ_CXX) $(FUZZ_ALL_CXXFLAGS) -c -o $@ $<

# A harness of the library: its one source file and lib/.
$(FUZZ_LIB_BINS): $(FUZZ_DIR)/%: $(FUZZ_DIR)/tests/fuzz/%.o $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ \
	    $(FUZZ_LDLIBS)

$(FUZZ_DIR)/fuzz_cli: $(FUZZ_DIR)/tests/fuzz/fuzz_cli.o $(FUZZ_CLI_OBJ) \
    $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ \
	    $(FUZZ_CLI_LDLIBS) $(FUZZ_LDLIBS)

-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_CLI_OBJ:.o=.d) \
    $(FUZZ_HARNESS_OBJ:.o=.d)

# Each harness runs as a target of its own, fuzz-run-NAME (for FUZZ_TIME
# seconds) or fuzz-regress-NAME, so that make -j runs them side by side,
# each with a core (CI runs make -j2: the six 20 s runs take 60 s); -k
# lets the others finish when one fails, and the sub-make then fails.
FUZZ_RUNS    = $(FUZZ_NAMES:%=fuzz-run-%)
FUZZ_REGRESS = $(FUZZ_NAMES:%=fuzz-regress-%)

.PHONY: $(FUZZ_RUNS) $(FUZZ_REGRESS)

# A sub-make builds, so that pkg-config runs after fuzz-deps installed it.
fuzz: fuzz-deps
	@$(MAKE) --no-print-directory -f $(FUZZ_MK) fuzz-build
	@$(MAKE) --no-print-directory -f $(FUZZ_MK) -k $(FUZZ_RUNS) \
	    FUZZ_TIME=$(FUZZ_SECONDS)

fuzz-ci: fuzz-deps
	@$(MAKE) --no-print-directory -f $(FUZZ_MK) fuzz-build
	@$(MAKE) --no-print-directory -f $(FUZZ_MK) -k $(FUZZ_RUNS) \
	    FUZZ_TIME=$(FUZZ_CI_SECONDS)

# fuzz-run-NAME: harness NAME for FUZZ_TIME s on build/fuzz/corpus-NAME,
# seeded from tests/fuzz/corpus/NAME, with NAME.dict when there is one.
# The log goes to build/fuzz/NAME.log; the summary (executions, coverage)
# or the crash report is printed.
$(FUZZ_RUNS):
	@h=$(@:fuzz-run-%=%); \
	corpus=$(FUZZ_DIR)/corpus-$$h; \
	mkdir -p $(FUZZ_DIR)/crashes $$corpus; \
	cp tests/fuzz/corpus/$$h/* $$corpus/; \
	dict=; \
	if [ -f tests/fuzz/$$h.dict ]; then dict=-dict=tests/fuzz/$$h.dict; fi; \
	echo "$$h: fuzzing for $(FUZZ_TIME) s (log: $(FUZZ_DIR)/$$h.log)"; \
	if ./$(FUZZ_DIR)/$$h $(FUZZ_FLAGS) $$dict -max_len=4096 \
	    -max_total_time=$(FUZZ_TIME) \
	    -artifact_prefix=$(FUZZ_DIR)/crashes/$$h- \
	    $$corpus >$(FUZZ_DIR)/$$h.log 2>&1; then \
		grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' \
		    $(FUZZ_DIR)/$$h.log | sed "s/^/$$h: /"; \
	else \
		tail -n 60 $(FUZZ_DIR)/$$h.log; \
		echo "$$h: FAILED (inputs in $(FUZZ_DIR)/crashes/)"; \
		exit 1; \
	fi

# Every seed and every saved reproducer, once: a quick regression test.
fuzz-regress: fuzz-deps
	@$(MAKE) --no-print-directory -f $(FUZZ_MK) fuzz-build
	@$(MAKE) --no-print-directory -f $(FUZZ_MK) -k $(FUZZ_REGRESS)

$(FUZZ_REGRESS):
	@h=$(@:fuzz-regress-%=%); \
	set -- tests/fuzz/corpus/$$h/*; \
	for f in tests/fuzz/regress/$$h-*; do \
		if [ -f "$$f" ]; then set -- "$$@" "$$f"; fi; \
	done; \
	if ./$(FUZZ_DIR)/$$h "$$@" >$(FUZZ_DIR)/$$h-regress.log 2>&1; then \
		echo "$$h: $$# inputs ran clean"; \
	else \
		tail -n 60 $(FUZZ_DIR)/$$h-regress.log; \
		echo "$$h: FAILED"; \
		exit 1; \
	fi

# The fuzz_cli seeds are binary (bytes index fuzz_cli_table.h); they are
# made from readable descriptions in make-cli-seeds.sh by mkseed_cli.
$(FUZZ_DIR)/mkseed_cli: tests/fuzz/mkseed_cli.c tests/fuzz/fuzz_cli_table.h
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=c11 -Wall -Wextra -O1 -o $@ tests/fuzz/mkseed_cli.c

fuzz-cli-seeds: $(FUZZ_DIR)/mkseed_cli
	sh tests/fuzz/make-cli-seeds.sh $(FUZZ_DIR)/mkseed_cli
