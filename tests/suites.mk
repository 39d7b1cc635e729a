# tests/suites.mk - the rule of each suite that make check runs, beside
# the suites themselves, and make check-valgrind.
# Included by the top Makefile, whose variables it reads ($(BUILD),
# $(ATTN), $(TIMED), ...); make from the top of the tree.

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

# attn-mpi (tests/mpi.sh): attn's bytes, messages and status from 1 to
# 4 processes of an MPI job over a matrix of conventions, and a rank's
# faults; skipped, saying why, where attn-mpi is not built (no mpicc)
# or mpirun is missing.
ifeq ($(MPI),1)
mpi-test: $(ATTN) $(ATTN_MPI)
	$(TIMED) '$(BUILD) mpi-test' sh tests/mpi.sh ./$(ATTN) ./$(ATTN_MPI)
else
mpi-test:
	@echo 'mpi-test: skipped: no $(MPICC) (Open MPI: make test-deps installs it)'
endif

# Hostile inputs (tests/bad/): one clear line, the status attn(1) gives,
# nothing on stdout, -o FILE untouched; make check runs it again under
# ASan/UBSan.
bad-test: $(ATTN)
	$(TIMED) '$(BUILD) bad-test' sh tests/bad/run.sh ./$(ATTN)

# The matrix (tests/matrix/): every printer on every stage of every
# variant (--grad, --proj, --rope, --sinks, --emulate ...) in every layout,
# generated, each run checked for its status, sanitizer reports and the
# labels of its rows, and where attn-mpi is built a sample of them run
# again by two of its processes for attn's bytes; make check runs it
# under ASan/UBSan.
matrix-test: $(ATTN) $(if $(MPI),$(ATTN_MPI))
	$(TIMED) '$(BUILD) matrix-test' sh tests/matrix/run.sh ./$(ATTN) \
	    $(if $(MPI),./$(ATTN_MPI))

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

# The Python module (python/attn/) over libattn.so.0, with pytest
# (tests/python/): its stages byte for byte attn's, attn's messages as
# exceptions, its check attn's; make check runs it again under ASan/UBSan
# (the library built with them, their runtime preloaded).
python-test: $(ATTN) $(LIBATTN_SO) $(PY_SONAME)
	$(TIMED) '$(BUILD) python-test' sh tests/python/run.sh ./$(ATTN) \
	    $(LIBATTN_SO)

# attn --check on a float32 kernel written for the test, right and wrong.
FAKE_KERNEL = $(BUILD)/fake-kernel

$(FAKE_KERNEL): tests/kernel/fake_kernel.c $(BUILD)/flags
	$(CC) $(CFLAGS) $(SAN) $(WARNINGS) $(STRICT) $(LDFLAGS) -o $@ \
	    tests/kernel/fake_kernel.c -lm

kernel-test: $(ATTN) $(FAKE_KERNEL)
	$(TIMED) '$(BUILD) kernel-test' sh tests/kernel/run.sh ./$(ATTN) \
	    ./$(FAKE_KERNEL)

# attn --grad --check --emulate on backward passes written in NumPy, in
# float32 and bfloat16, right and with bugs planted; and --check of
# FlashAttention-2's lse under causal ALiBi, written in NumPy too;
# --emulate's two orders of the scale against attention_ref in PyTorch;
# paged KV caches against the keys gathered, and against PyTorch.
grad-kernel-test: $(ATTN)
	$(TIMED) '$(BUILD) grad-kernel-test' sh tests/kernel/grad.sh ./$(ATTN)
	$(TIMED) '$(BUILD) grad-kernel-test (ALiBi)' sh tests/kernel/alibi.sh ./$(ATTN)
	$(TIMED) '$(BUILD) grad-kernel-test (order)' sh tests/kernel/order.sh ./$(ATTN)
	$(TIMED) '$(BUILD) grad-kernel-test (paged)' sh tests/kernel/paged.sh ./$(ATTN)

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
# exit 99, which fails the case; its report goes to build/valgrind/,
# without the frames of inlined functions, whose reading was a sixth of
# valgrind's start (bench/README.md).
VALGRIND = valgrind --quiet --error-exitcode=99 --leak-check=full \
           --read-inline-info=no --show-leak-kinds=definite,indirect \
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
install-test: $(ATTN) $(LIBATTN) $(LIBATTN_SO) $(COMPLETIONS) \
    $(if $(MPI),$(ATTN_MPI))
	+$(TIMED) '$(BUILD) install-test' sh tests/install.sh $(BUILD)

lint-man:
	@for page in $(MAN_PAGES); do \
	out=$$(groff -mdoc -ww -z $$page 2>&1); \
	if [ -n "$$out" ]; then echo "$$page: $$out"; exit 1; fi; \
	echo "groff -mdoc -ww -z $$page: clean"; done
