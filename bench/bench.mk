# bench/bench.mk - make bench and make bench-numbers, and the test that
# keeps the benchmark from rotting (bench-test, a suite of make check).
# Included by the top Makefile, whose variables it reads ($(BUILD),
# $(ATTN), $(TIMED), ...); make from the top of the tree.

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
# the processor's FMA peak (bench/peak.c) and NumPy's dgemm, its
# start-up, its backward pass against PyTorch's autograd (1 x 8 x n
# x 128 at n = 256 to 4096) and its five-stage --check against its
# forward, its number text, --emulate bf16, fp32 and fp8-e4m3 against
# the forward at 1 x 8 x n x 128, self-attention at n = 65536, and the
# Python module against the CLI and PyTorch on 500 small cases, its
# overhead a call and its backward against bench-compute's
# (bench/python_side.py) (bench/bench.py says how), in one table; a few minutes,
# BENCH_QUICK=1 a subset.  NumPy runs on OpenBLAS's threaded build, as
# NumPy's users have it, not on the reference BLAS; bench-spawn
# (bench/spawn.c) times each process and reads its peak RSS.  make
# check's bench-test does without PyTorch's forward rows.  `make bench
# BENCH_AS=avx2` measures an AVX-512 machine as an AVX2 one, attn and
# its peers alike (bench/bench.py says how).
BENCH_PKGS    = python3 python3-numpy python3-torch libopenblas0-pthread
BENCH_COMPUTE = $(BUILD)/bench-compute
BENCH_SPAWN   = $(BUILD)/bench-spawn

$(BENCH_COMPUTE): $(BUILD)/bench/compute.o $(BUILD)/bench/peak.o $(LIBATTN)
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

# attn-mpi against attn on this machine (bench/mpi.sh): a forward pass
# of BENCH_MPI_N queries and keys by one attn process and by 1 and 2
# ranks of attn-mpi, one thread each; bench/README.md has its figures.
BENCH_MPI_N ?= 65536

.PHONY: bench-mpi
bench-mpi: $(ATTN) $(ATTN_MPI)
	sh bench/mpi.sh $(BENCH_MPI_N) $(BUILD)
