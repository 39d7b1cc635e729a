#!/usr/bin/env python3
"""bench.py - attn against the NumPy script bench/attn_numpy.py, as
`make bench` runs it; prints one table (and keeps it in WORK/table.txt).

  bench.py --attn ATTN --compute BENCH_COMPUTE --work DIR
           [--numbers BENCH_NUMBERS] [--python PY] [--spawn BENCH_SPAWN]
           [--quick | --compute-only] [--only PART,..]
           [--sizes N,..] [--torch-sizes N,..] [--compute-sizes N,..]
           [--compute-d D,..]
           [--grad-sizes N,..] [--runs R] [--big N] [--dgemm N]
           [--numbers-rows N] [--emulate-sizes N,..] [--paged-sizes N,..]
           [--py-cases N] [--py-grad N]

The backward rows: Q, K, V and dO of 1 x 8 x n x 128 (bhsd .npy, attn
gen's, seeds 1 to 4) at n = 256, 1024 and 4096; attn's forward alone
(output to .npy), attn's forward and backward (grad_q, grad_k and grad_v
written to one .npz, -f npz), attn's --check of output,
lse, grad_q, grad_k and grad_v in one run against the .npz a kernel
would write (NumPy's naive formula, numpy_side.py grads; left out
without PY), and the peer,
bench/torch_grad.py: PyTorch's float64 autograd of the naive formula
on the same files, dq, dk and dv to one .npz.  Without a PyTorch in PY
its columns are left out.

--quick is n = 512 and 2048, PyTorch at 2048 (--torch-sizes 0: none),
the kernel at 4096, the backward at 256 and 1024, --emulate at 1024
(1024 and 4096 otherwise), the paged run at 1024 (4096 otherwise), and
no n = 65536 run;
--compute-only is the kernel alone (the lines "compute alone", at
2048, 4096 and 8192 unless --compute-sizes says, at d = 64 and 128
unless --compute-d says), for work on the kernel; --only PART,.. runs
only the parts named (startup, table, compute, grad, emulate, paged,
numbers, big, python), for work on one of them; the other options (for tests/bench.sh)
set one part of a run each.

The start-up row is attn's own, the one a learner meets: attn --explain
on attn(1)'s worked example (data/examples/apple-cheese.json), wall and
CPU time of the whole process.  Python's start-up is in every NumPy
row; the rows at n = 512 are there for information.

Inputs are attn gen's (standard normal; Q, K and V seeds 1, 2 and 3),
T = S = n, d_k = d_v = 64, in separate files, and each program writes its
output in the format it read.  Every time is the median over several runs
of a whole process, fork to reaped exit, and so is every peak RSS (the
kernel's maximum resident set), both taken by BENCH_SPAWN (bench/spawn.c,
whose own start-up is not in the time); attn's and NumPy's runs take
turns, so that other work on the machine weighs on both alike.  PY (a
Python with NumPy) runs the script, checks that its output and attn's
agree to 1e-9 of the largest |output| ("rel diff"), and measures dgemm
and NumPy's compute alone; without it those columns are left out.  When
PY also has PyTorch, rows "torch" set attn from .npy beside
bench/attn_torch.py (float64, the explicit formula) at 4096 and 8192.
Each of the project's targets is printed beside its figure, met or
missed by how much.

The limit the kernel is measured against is the processor's own, taken
in the same run: the header gives the FMA peak of every instruction set
attn's loops come in that the CPU runs (bench-compute -p: a loop of
independent multiply-adds on all threads, bench/peak.c), names the
processor (family and model) and the BLAS kernels NumPy runs, and gives
NumPy's dgemm as a fraction of the peak of those kernels' instruction
set.  Every row of the kernel alone is GFLOP/s, and by CPU time (the
threads' flops over their CPU seconds, as the peak is measured, which a
loaded machine does not lower either) a fraction of the peak of the
instruction set it ran.  Below them, where one thread's cycles go at
the largest n (bench-compute -t): the kernel's loops alone on one
task's block of keys, product by product, then with the softmax, and
the kernel itself on one thread, each a fraction of one thread's peak,
so that what each step loses shows.  The peers (NumPy's attention and
dgemm, PyTorch) stay as rows that attn must stay ahead of: a ratio to a
peer's BLAS says as much about the peer's build as about attn.

The Python rows (part python, with PY): the module attn of this tree,
run by PY in a process of its own (bench/python_side.py, which says
how): --py-cases (500) parametrized cases of 1 x 2 x 128 x 64, each a
kernel's results checked by a reference's forward + backward and
comparison, attn.check in the process against the same through the CLI
with .npy and .npz files (>= 20x) and against PyTorch's float64 autograd
with torch.testing (>= 3x, when PY has PyTorch); the median call of a 1
x 1 x 1 x 1 case less bench-compute's median at n = 1 (d 64, the
kernel's own time, up to a few multiply-adds more), the module's
overhead (<= 50 us); and 1 x 8 x --py-grad (2048) x 128 forward +
backward from Python against bench-compute -g's (within 1.1x).

--as avx2 (make bench BENCH_AS=avx2) measures an AVX-512 machine as an
AVX2 one: every process it starts has ATTN_ISA=avx2 (attn and
bench-compute read it), OPENBLAS_CORETYPE=Haswell (NumPy's and
PyTorch's OpenBLAS), NPY_DISABLE_CPU_FEATURES naming the AVX-512 targets
NumPy's own loops would take here (exp, max and sum then run on AVX2, as
they would on such a machine) and ATEN_CPU_CAPABILITY=avx2 (PyTorch's);
the header prints them, and the instruction set each side then uses.

This file uses the standard library alone: NumPy, and its BLAS threads,
only ever run in processes of their own.
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
D = 64
FORMATS = ('csv', 'json', 'npy')
AGREE = 1e-9
BIG = 65536

# The targets of speed and memory, as ratios taken in one run: a peer's
# time over attn's, at least (attn ahead of it); attn's JSON time over
# its CSV time at the same n, at most; attn's peak RSS over NumPy's, at
# most; the kernel's rate as a fraction of the FMA peak of its
# instruction set, at least, and its rate at the larger of two sizes
# over its rate at the smaller, at least; at n = 65536 the time the
# dgemm rate allows (4 T S d flops) over attn's whole run, at least, and
# its peak RSS in MiB, at most.
AHEAD = 1.0
# attn --explain on the worked example, whole process, at most (ms)
STARTUP_WALL_MS, STARTUP_CPU_MS, STARTUP_RUNS = 5.0, 2.0, 21
JSON_OVER_CSV = 1.2
RSS_TARGET = {('csv', 8192): 1.2}
PEAK_TARGET = 0.85
NO_FALL = 0.95
WHOLE_RUN = 0.9     # a whole run's rate from .npy, of the kernel's alone
COMPUTE_SIZES = (2048, 4096, 8192)
COMPUTE_D = (64, 128)
BIG_OF_DGEMM, BIG_MIB = 0.7, 256.0
# --emulate's forward, at most this times attn's own
EMULATE_TARGET = 3
EMULATED = ('bf16', 'fp32', 'fp8-e4m3')
EMU_HEADS, EMU_D = 8, 128
# a paged run (--block-table) of 1 x 8 x n x 128 against the forward on
# the same keys contiguous, at most this times it; pages of PAGE keys
PAGED_TARGET = 1.2
PAGE = 256

# The backward rows: heads and d, and the targets, as ratios
# taken in one run: attn's forward and backward against its forward at
# most; PyTorch's time against attn's at least (more at small n, where
# torch's start and T x S passes weigh); attn's peak RSS against
# torch's at most.
GRAD_H, GRAD_D = 8, 128
GRAD_RATIO = 3.0
GRAD_PEAK = 0.8     # forward and backward's 7 products, of the FMA peak
CHECK_RATIO = 5.0   # --check of the five stages, against the forward
TORCH_SPEED, TORCH_SPEED_SMALL, TORCH_SMALL = 1.0, 3.0, 1024
TORCH_RSS = 0.25

# The Python rows (bench/python_side.py): small parametrized cases in one
# process against the same through the CLI with .npz files, and against
# PyTorch's float64 autograd with torch.testing, at least; one call's
# overhead over libattn's compute time, in microseconds, at most; and
# 1 x 8 x n x 128 forward + backward from Python over bench-compute's
# time of the same, at most.
PY_CASES, PY_GRAD_N = 500, 2048
PY_OVER_CLI, PY_OVER_TORCH, PY_OVERHEAD_US, PY_GRAD_RATIO = 20, 3, 50, 1.1


def plural(n, word):
    return '%d %s%s' % (n, word, '' if n == 1 else 's')


def sizes_arg(text):
    return tuple(int(w) for w in text.split(','))


PARTS = ('startup', 'table', 'compute', 'grad', 'emulate', 'paged',
         'numbers', 'big', 'python')


def parts_arg(text):
    parts = set(text.split(','))
    for w in parts - set(PARTS):
        raise argparse.ArgumentTypeError(
            '%r is no part of the bench: %s' % (w, ', '.join(PARTS)))
    return parts


class Failed(Exception):
    pass


def measured(value, what, unit):
    """value, a figure measured (a time, a rate, a peak RSS), when it is
    above zero; else Failed naming it.  The table divides by every such
    figure, and a zero is a clock that did not advance or a figure
    printed too short to show, never a result."""
    if not value > 0:
        raise Failed('%s: measured %g %s, which is no measurement' % (
            what, value, unit))
    return value


def failure(args, status, stderr):
    return Failed('%s: exit %d\n%s' % (' '.join(args), status,
                                        stderr.rstrip()))


def run(args, out=subprocess.DEVNULL, failed=None, cpu=False):
    """Run args to the end: (seconds, peak RSS in MiB), the seconds of
    the wall clock, or of CPU (user and system) when cpu.  stdout goes to
    out; a failure raises Failed with what the program said, but exit 1
    (a --check that failed) when failed is a list: args are added to
    it.  Both figures are bench-spawn's: the kernel keeps a process's
    maximum RSS across exec, so a child spawned from this Python would
    report this Python's own peak whenever it is the larger, as it is
    for attn at small n; and the time of a spawn from here would add
    this Python's fork to every run."""
    err_path = os.path.join(WORK, 'stderr.txt')
    rss_path = os.path.join(WORK, 'rss.txt')
    with open(err_path, 'w') as err:
        rc = subprocess.call([SPAWN, rss_path] + args,
                             stdin=subprocess.DEVNULL, stdout=out,
                             stderr=err)
    if rc == 1 and failed is not None:
        failed.append(args)
    elif rc != 0:
        with open(err_path) as err:
            raise failure(args, rc, err.read())
    with open(rss_path) as f:
        wall, kib, cpu_s = f.read().split()
    what = ' '.join(os.path.basename(w) for w in args[:2])
    return (measured(float(cpu_s if cpu else wall), what, 's'),
            measured(int(kib) / 1024.0, what, 'MiB'))


def output_of(args):
    """What args print on stdout; a failure raises Failed."""
    p = subprocess.run(args, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        raise failure(args, p.returncode, p.stderr)
    return p.stdout


def median_runs(argv_list, runs, failed=None, cpu=False, warmup=False):
    """Take turns running each argv, runs times: for each the median
    seconds and median peak RSS.  failed, cpu: as for run.  warmup: each
    argv runs once first, untimed, so that no timed run pays for the
    caches a first run of a program finds cold."""
    t = [[] for _ in argv_list]
    m = [[] for _ in argv_list]
    for argv in argv_list if warmup else ():
        run(argv, failed=[], cpu=cpu)
    for _ in range(runs):
        for i, argv in enumerate(argv_list):
            ti, mi = run(argv, failed=failed, cpu=cpu)
            t[i].append(ti)
            m[i].append(mi)
    return [(statistics.median(t[i]), statistics.median(m[i]))
            for i in range(len(argv_list))]


def data(name):
    return os.path.join(WORK, 'data', name)


def gen(rows, cols, seed, fmt, path):
    if not os.path.exists(path):
        run([ATTN, 'gen', '%dx%d' % (rows, cols), '--seed', str(seed),
             '-f', fmt, '-o', path])
    return path


def gen4(n, seed, path):
    """1 x EMU_HEADS x n x EMU_D, attn gen's, in .npy."""
    if not os.path.exists(path):
        run([ATTN, 'gen', '1x%dx%dx%d' % (EMU_HEADS, n, EMU_D), '--seed',
             str(seed), '-f', 'npy', '-o', path])
    return path


def npy_reshaped(src, dst, shape, page_bytes, order):
    """The .npy src (float64, C order) written to dst with its header's
    shape made shape, and its data cut into pieces of page_bytes put in
    order (dst's piece p is src's piece order[p]): a contiguous K of
    1 x n x H x D as a cache of pages, with the standard library alone."""
    with open(src, 'rb') as f:
        raw = f.read()
    if raw[6] == 1:
        body = 10 + int.from_bytes(raw[8:10], 'little')
    else:
        body = 12 + int.from_bytes(raw[8:12], 'little')
    head = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }" % (
        ', '.join(str(x) for x in shape))
    head += ' ' * (63 - (10 + len(head)) % 64) + '\n'
    data = raw[body:]
    with open(dst, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + len(head).to_bytes(2, 'little'))
        f.write(head.encode('latin-1'))
        for p in order:
            f.write(data[p * page_bytes:(p + 1) * page_bytes])


def inputs(n, fmt):
    return [gen(n, D, seed, fmt, data('%s%d.%s' % (role, n, fmt)))
            for seed, role in enumerate('qkv', 1)]


def machine():
    info = {}
    try:
        for line in output_of(['lscpu']).splitlines():
            key, _, value = line.partition(':')
            info[key.strip()] = value.strip()
    except (OSError, Failed):
        pass
    model = info.get('Model name', 'unknown CPU')
    if info.get('CPU family') and info.get('Model'):
        model += ' (family %s, model %s)' % (info['CPU family'],
                                            info['Model'])
    cores = info.get('Core(s) per socket')
    sockets = info.get('Socket(s)', '1')
    cpus = len(os.sched_getaffinity(0))
    if cores and sockets.isdigit() and cores.isdigit():
        return '%s, %d cores, %d CPUs to use' % (
            model, int(cores) * int(sockets), cpus)
    return '%s, %d CPUs to use' % (model, cpus)


# OpenBLAS's kernels (openblas_get_corename) by the instruction set
# their dgemm runs; any other is measured against the best peak.
BLAS_ISA = {'skylakex': 'avx512', 'cooperlake': 'avx512',
            'sapphirerapids': 'avx512', 'haswell': 'avx2', 'zen': 'avx2'}


def target_note(value, target, at_least=True, unit='x'):
    """'>= 10x met' or '>= 10x MISSED by 23%' (how far value falls short
    of the target, as a share of it)."""
    sign = '>=' if at_least else '<='
    met = value >= target if at_least else value <= target
    text = '%s %g%s' % (sign, target, unit)
    if met:
        return text + ' met'
    short = (target - value) / target if at_least else (value - target) / target
    return '%s MISSED by %.0f%%' % (text, 100 * short)


def numbers_end_to_end(m, runs):
    """CPU ns a number that attn itself spends reading and writing CSV,
    whole process against whole process: printing is attn gen -f csv
    against -f npy; parsing is an m x 64 Q in CSV against the same in
    .npy, with one key and value, so the kernel costs next to nothing.
    CPU time, not the wall clock's: the text is read and written on
    every core, and the difference of two wall times that threads
    shorten was noise, once below zero."""
    count = m * D
    tmp_csv, tmp_npy = data('print.csv'), data('print.npy')
    (pc, _), (pn, _) = median_runs(
        [[ATTN, 'gen', '%dx%d' % (m, D), '--seed', '1', '-f', f, '-o', p]
         for f, p in (('csv', tmp_csv), ('npy', tmp_npy))], runs, cpu=True)
    q_csv = gen(m, D, 1, 'csv', data('q%d.csv' % m))
    q_npy = gen(m, D, 1, 'npy', data('q%d.npy' % m))
    k = gen(1, D, 2, 'npy', data('k1.npy'))
    v = gen(1, D, 3, 'npy', data('v1.npy'))
    out = data('parse-out.npy')
    (rc, _), (rn, _) = median_runs(
        [[ATTN, q, k, v, '-f', 'npy', '-o', out] for q in (q_csv, q_npy)],
        runs, cpu=True)
    for p in (tmp_csv, tmp_npy, out):
        os.remove(p)
    return (rc - rn) / count * 1e9, (pc - pn) / count * 1e9


class Bench:
    """One run of the benchmark: the options, and the lines of the table
    so far."""

    def __init__(self, a):
        self.a = a
        self.py = a.python
        self.lines = []
        self.disagree = []
        self.script = os.path.join(HERE, 'attn_numpy.py')
        self.torch_script = os.path.join(HERE, 'attn_torch.py')
        self.side = os.path.join(HERE, 'numpy_side.py')
        self.runs = a.runs or 3
        self.csv_time = {}
        self.dgemm = None
        self.torch = None
        self.peak = {}

    def say(self, line=''):
        line = line.rstrip()
        self.lines.append(line)
        print(line, flush=True)

    def numpy(self, *args):
        return output_of([self.py, self.side] + [str(w) for w in args])

    def compute_args(self):
        """bench-compute with attn's thread count: ATTN_THREADS, as the
        CLI reads it, else the library's default."""
        threads = os.environ.get('ATTN_THREADS', '')
        return [self.a.compute] + (['-j', threads] if threads else [])

    def header(self, dgemm):
        """The machine, the FMA peaks and the peers' libraries; with
        dgemm, NumPy's dgemm against the peak of its kernels'
        instruction set."""
        a = self.a
        version = output_of([ATTN, '--version']).strip()
        self.say('%s bench, %s: %s' % (
            version, datetime.date.today().isoformat(), machine()))
        if a.as_env:
            self.say('measured as an AVX2 machine: %s' % a.as_env)
        info = dict(line.split(None, 1) for line in output_of(
            self.compute_args() + ['-r', '1', '64']).splitlines())
        self.isa = info['isa'].strip()
        if self.py:
            try:
                self.torch = output_of([self.py, self.torch_script,
                                        'threads']).split()
            except Failed:
                self.torch = None
        blas = self.numpy('blas').strip() if self.py else None
        self.say('attn threads: %s, kernel instruction set: %s; NumPy %s' % (
            info['threads'].strip(), self.isa, 'BLAS: ' + blas if blas
            else 'not found (no Python with NumPy): its columns are left '
            'out'))
        for line in output_of(self.compute_args() + [
                '-p', '-r', str(self.runs)]).splitlines():
            w = line.split()
            if w[0] == 'peak':
                self.peak[w[1]] = measured(
                    float(w[2]), 'the %s FMA peak' % w[1], 'GFLOP/s')
        self.say('FMA peak, %s threads at once (bench/peak.c), GFLOP/s: %s'
                 % (info['threads'].strip(), ', '.join(
                     '%s %.1f' % (isa, self.peak[isa])
                     for isa in sorted(self.peak, key=self.peak.get,
                                       reverse=True))))
        if blas and dgemm:
            core = blas.partition('(')[2].partition(' kernels')[0]
            isa = BLAS_ISA.get(core.lower())
            if isa not in self.peak:
                isa = self.isa
            self.dgemm = measured(
                float(self.numpy('dgemm', self.a.dgemm, self.runs)),
                'NumPy\'s dgemm at n = %d' % self.a.dgemm, 'GFLOP/s')
            self.say('NumPy\'s dgemm (%d x %d by %d x %d, 2 n^3 flops, %s '
                     'kernels): %.1f GFLOP/s = %.2f of the %s peak' % (
                         (self.a.dgemm,) * 4 + (core or 'its', self.dgemm,
                                                self.dgemm / self.peak[isa],
                                                isa)))
        if self.py:
            self.say('PyTorch: %s' % ('%s, %s threads, float64' % tuple(
                self.torch) if self.torch else 'not found: its rows are '
                'left out'))
        self.say('T = S = n, d_k = d_v = 64, Q, K and V in separate files, '
                 'output in the input\'s format;')
        self.say('whole-process medians of %s after one untimed run each, '
                 'wall time and peak RSS' % (plural(a.runs, 'run') if a.runs
                                             else '5 runs (3 at n >= 4096)'))
        self.say()

    def row(self, fmt, n, peer='numpy'):
        """One line of the table: attn and the NumPy script (or with
        peer 'torch' the PyTorch one, from .npy), fmt in and out, at
        T = S = n."""
        q, k, v = inputs(n, fmt)
        out_a = os.path.join(WORK, 'out', 'attn%d.%s' % (n, fmt))
        out_n = os.path.join(WORK, 'out', '%s%d.%s' % (peer, n, fmt))
        argvs = [[ATTN, q, k, v, '-f', fmt, '-o', out_a]]
        if self.py:
            argvs.append([self.py, self.torch_script if peer == 'torch'
                          else self.script, q, k, v, out_n])
        res = median_runs(argvs, self.a.runs or (5 if n <= 2048 else 3),
                          warmup=True)
        ta, ma = res[0]
        name = 'torch' if peer == 'torch' else fmt
        line = '%-5s %5d %8.3f' % (name, n, ta)
        if fmt == 'csv':
            self.csv_time[n] = ta
        if not self.py:
            self.say(line + ' %8s %10s  %-26s %8.1f' % ('', '', '', ma))
            os.remove(out_a)
            return
        tn, mn = res[1]
        diff = float(self.numpy('compare', out_a, out_n).split()[-1])
        if not diff <= AGREE:
            self.disagree.append('%s n=%d: %g' % (name, n, diff))
        rt = RSS_TARGET.get((name, n))
        note = target_note(tn / ta, AHEAD)
        if name == 'json' and n in self.csv_time:
            note = 'json/csv %.2f ' % (ta / self.csv_time[n]) + target_note(
                ta / self.csv_time[n], JSON_OVER_CSV, False, '')
        self.say(line + ' %8.3f %9.1fx  %-26s %8.1f %9.1f %6.2f  %-14s '
                 '%9.1e' % (tn, tn / ta, note, ma, mn, ma / mn,
                            target_note(ma / mn, rt, False, '') if rt
                            else '', diff))
        os.remove(out_a)
        os.remove(out_n)

    def table(self, sizes, torch_sizes):
        head = '%-5s %5s %8s %8s %10s  %-26s %8s %9s %6s  %-14s %9s' % (
            'input', 'n', 'attn s', 'peer s', 'peer/attn', 'target',
            'attn MiB', 'peer MiB', 'RSS a/p', 'target', 'rel diff')
        self.say('peer: the NumPy script (bench/attn_numpy.py); in rows '
                 '"torch", the PyTorch one from .npy')
        self.say(head)
        self.say('-' * len(head))
        for fmt in FORMATS:
            for n in sizes:
                self.row(fmt, n)
        for n in torch_sizes if self.torch else ():
            if n:  # --torch-sizes 0: none
                self.row('npy', n, 'torch')
        self.say()

    def compute(self, sizes, ds):
        """The kernel alone at each d of ds, as GFLOP/s and a fraction of
        its instruction set's FMA peak, and at d = 64 NumPy's attention
        and dgemm beside it, in the same run; its rate's fall with n;
        and the whole run from .npy against it at d = 64."""
        comp, cpu, cpu_s = {}, {}, {}
        for d in ds:
            for line in output_of(self.compute_args() + [
                    '-r', str(self.runs), '-d', str(d)] +
                    [str(n) for n in sizes]).splitlines():
                w = line.split()
                if w[0] == 'compute':
                    comp[d, int(w[1])], cpu[d, int(w[1])] = (measured(
                        float(r), 'attn\'s kernel at n = %s, d = %d' % (
                            w[1], d), 'GFLOP/s') for r in w[3:5])
                    cpu_s[d, int(w[1])] = measured(
                        float(w[5]), 'attn\'s kernel\'s CPU time at n = '
                        '%s, d = %d' % (w[1], d), 's')
        npc = {}
        if self.py and D in ds:
            npc = dict((int(w[0]), measured(
                float(w[1]), 'NumPy\'s attention at n = %s' % w[0],
                'GFLOP/s')) for w in (
                line.split() for line in self.numpy(
                    'compute', self.runs, *sizes).splitlines()))
        peak = self.peak[self.isa]
        self.say('compute alone (inputs in memory, output stage, %s loops),'
                 ' GFLOP/s = 4 T S d / seconds, median of %s; by CPU time, '
                 'the threads\' own rate,' % (
                     self.isa, plural(self.runs, 'run')))
        self.say('  as the peak is measured, as a fraction of the %s FMA '
                 'peak, %.1f (on a quiet machine the two rates agree):' % (
                     self.isa, peak))
        for d in ds:
            for n in sizes:
                rate, by_cpu = comp[d, n], cpu[d, n]
                line = '  n = %5d  d = %3d  attn %6.1f, by CPU time %6.1f = ' \
                    '%.2f of the peak (%s)' % (
                        n, d, rate, by_cpu, by_cpu / peak, target_note(
                            by_cpu / peak, PEAK_TARGET, unit=''))
                if n in npc and d == D:
                    line += '   NumPy\'s attention %5.1f (attn %.1fx)' % (
                        npc[n], rate / npc[n])
                if self.dgemm and d == D:
                    line += '   attn/dgemm %.2f' % (rate / self.dgemm)
                self.say(line)
            for n0, n1 in zip(sizes, sizes[1:]):
                if n1 == 2 * n0:
                    fall = cpu[d, n1] / cpu[d, n0]
                    self.say('  d = %3d: the rate at n = %d over n = %d: '
                             '%.2f (%s)' % (d, n1, n0, fall, target_note(
                                 fall, NO_FALL, unit='')))
        for n in sizes:
            if D in ds:
                self.whole_run(n, 4.0 * n * n * D / comp[D, n] * 1e-9,
                               cpu_s[D, n], inputs(n, 'npy'))
        self.cycles(sizes[-1], ds)
        self.say()

    def cycles(self, n, ds):
        """Where one thread's cycles go at n keys (bench-compute -t): the
        kernel's loops alone, step by step up to the kernel itself on
        one thread, each as a fraction of one thread's FMA peak."""
        one = ['-j', '1', '-r', str(self.runs)]
        peak = None
        for line in output_of([self.a.compute, '-p'] + one).splitlines():
            w = line.split()
            if w[0] == 'peak' and w[1] == self.isa:
                peak = measured(float(w[2]), 'one thread\'s %s FMA peak' %
                                self.isa, 'GFLOP/s')
        self.say('  where one thread\'s cycles go (bench-compute -t, one task '
                 'of 144 queries, blocks of 128 keys), as a fraction of one '
                 'thread\'s %s FMA peak, %.1f:' % (self.isa, peak))
        for d in ds:
            t = None
            for line in output_of([self.a.compute, '-t', '-r',
                                   str(self.runs), '-d', str(d), str(n)]
                                  ).splitlines():
                if line.startswith('tiles '):
                    t = [measured(float(x), 'bench-compute -t at d = %d' % d,
                                  'GFLOP/s') for x in line.split()[2:5]]
            kernel = None
            for line in output_of([self.a.compute] + one +
                                  ['-d', str(d), str(n)]).splitlines():
                if line.startswith('compute '):
                    kernel = measured(float(line.split()[3]), 'the kernel '
                                      'on one thread at d = %d' % d,
                                      'GFLOP/s')
            self.say('  d = %3d: Q K^T %.2f and P V %.2f on a block in the '
                     'caches; a block\'s scores, softmax and P V %.2f; the '
                     'kernel on one thread at n = %d, every block fetched '
                     'for every task, %.2f' % (
                         d, t[0] / peak, t[1] / peak, t[2] / peak, n,
                         kernel / peak))

    def numbers(self):
        if self.a.numbers:
            lib = {}
            for line in output_of([self.a.numbers]).splitlines():
                key, _, value = line.partition(':')
                lib[key.strip()] = value.strip()
            self.say('numbers, libattn alone (make bench-numbers): parse %s '
                     'ns/number, print %s ns/number' % (
                         lib.get('parse ns/number', '?'),
                         lib.get('print ns/number', '?')))
        parse, prnt = numbers_end_to_end(self.a.numbers_rows, self.runs)
        self.say('numbers, attn end to end (CSV file to doubles, doubles to '
                 'CSV file, CPU time): parse %.0f ns/number, print %.0f '
                 'ns/number' % (parse, prnt))

    def emulate(self, sizes):
        """--emulate bf16, fp32 and fp8-e4m3 against attn's own forward
        pass, 1 x 8 x n x 128 bhsd .npy (FlashAttention's test size at
        4096), each a ratio of medians taken in turns in one run (the
        target: at most EMULATE_TARGET times the forward); then --check
        of that forward's output against the bf16 baseline, judged by
        head (the default) and by the whole tensor, the first's cost
        against the second's."""
        self.say('--emulate, 1 x %d x n x %d bhsd .npy in and out '
                 '(medians of %s; load average %s before):' % (
                     EMU_HEADS, EMU_D, plural(self.runs, 'run'),
                     '%.1f' % os.getloadavg()[0]))
        for n in sizes:
            q, k, v = [gen4(n, seed, data('%s-4d-%d.npy' % (role, n)))
                       for seed, role in enumerate('qkv', 1)]
            # the forward's output, which --check reads below, and the
            # emulations' in a file of their own
            out = os.path.join(WORK, 'out', 'emulate%d.npy' % n)
            emu = os.path.join(WORK, 'out', 'emulated%d.npy' % n)
            base = [ATTN, q, k, v, '-f', 'npy', '-o']
            res = median_runs([base + [out]] +
                              [base + [emu, '--emulate', p]
                               for p in EMULATED],
                              self.runs)
            check = [ATTN, q, k, v, '-s', 'output', '--emulate', 'bf16',
                     '--check', out, '--check-by']
            by = median_runs([check + ['head'], check + ['tensor']],
                             self.runs)
            os.remove(out)
            os.remove(emu)
            line = '  n = %5d  forward %7.3f s' % (n, res[0][0])
            for p, (t, _) in zip(EMULATED, res[1:]):
                line += '   --emulate %s %7.3f s = %4.2fx (%s)' % (
                    p, t, t / res[0][0],
                    target_note(t / res[0][0], EMULATE_TARGET, False))
            self.say(line)
            self.say('  n = %5d  --check --emulate bf16 of output: by head '
                     '%7.3f s, by tensor %7.3f s = %4.2fx' % (
                         n, by[0][0], by[1][0], by[0][0] / by[1][0]))
        self.say('  (load average %.1f after)' % os.getloadavg()[0])
        self.say()

    def paged(self, sizes):
        """A paged run against the forward on the same keys contiguous,
        1 x 8 x n x 128 bshd .npy: K and V as caches of pages of PAGE
        keys (fewer at small n) stored in reverse, the block table naming
        them in order (the target: at most PAGED_TARGET times the
        forward); the two outputs must be the same bytes."""
        self.say('paged KV cache (--block-table), 1 x %d x n x %d bshd .npy '
                 'in and out (medians of %s; load average %.1f before):' % (
                     EMU_HEADS, EMU_D, plural(self.runs, 'run'),
                     os.getloadavg()[0]))
        for n in sizes:
            ps = PAGE if n >= 4 * PAGE else max(1, n // 4)
            pages = n // ps
            q, k, v = [data('%s-bshd-%d.npy' % (role, n)) for role in 'qkv']
            for seed, path in enumerate((q, k, v), 1):
                if not os.path.exists(path):
                    run([ATTN, 'gen', '1x%dx%dx%d' % (n, EMU_HEADS, EMU_D),
                         '--seed', str(seed), '-f', 'npy', '-o', path])
            order = list(reversed(range(pages)))
            caches = []
            for role, path in (('k', k), ('v', v)):
                c = data('%s-cache-%d.npy' % (role, n))
                npy_reshaped(path, c, (pages, ps, EMU_HEADS, EMU_D),
                             ps * EMU_HEADS * EMU_D * 8, order)
                caches.append(c)
            table = data('table-%d.json' % n)
            with open(table, 'w') as f:
                f.write('[[%s]]\n' % ', '.join(str(order.index(j))
                                               for j in range(pages)))
            out = [os.path.join(WORK, 'out', 'paged-%s%d.npy' % (w, n))
                   for w in ('plain', 'paged')]
            base = [ATTN, '--layout', 'bshd', '-f', 'npy', '-o']
            res = median_runs([base + [out[0], q, k, v],
                               base + [out[1], '--block-table', table, q] +
                               caches], self.runs)
            with open(out[0], 'rb') as f0, open(out[1], 'rb') as f1:
                if f0.read() != f1.read():
                    self.disagree.append('paged n = %d' % n)
            for o in out:
                os.remove(o)
            r = res[1][0] / res[0][0]
            self.say('  n = %5d  forward %7.3f s   paged, %s of %d '
                     '%7.3f s = %4.2fx (%s)' % (
                         n, res[0][0], plural(pages, 'page'), ps, res[1][0],
                         r, target_note(r, PAGED_TARGET, False)))
        self.say('  (load average %.1f after)' % os.getloadavg()[0])
        self.say()

    def has_torch(self):
        if not self.py:
            return False
        try:
            output_of([self.py, '-c', 'import torch'])
        except (OSError, Failed):
            return False
        return True

    def grad(self, sizes):
        """attn's forward, its forward and backward, and PyTorch's
        autograd (when PY has it) on the same 4-D files."""
        torch = self.has_torch()
        peer = os.path.join(HERE, 'torch_grad.py')
        self.say('backward, 1 x %d x n x %d bhsd .npy (Q, K, V, dO), '
                 'whole runs, medians of %s; attn forward: output to .npy; '
                 'forward + backward: grad_q, grad_k, grad_v to one .npz;'
                 % (GRAD_H, GRAD_D, plural(self.a.runs or 3, 'run')))
        self.say('peer: %s' % (
            'PyTorch float64 autograd of the naive formula, dq, dk, dv '
            'to .npz (bench/torch_grad.py)' if torch else 'no PyTorch in '
            'the Python found: its columns are left out'))
        if self.py:
            self.say('check: attn --grad DO -s output,lse,grad_q,grad_k,'
                     'grad_v --check NPZ, the .npz of NumPy\'s naive '
                     'formula (bench/numpy_side.py grads)')
        head = '%5s %7s %8s %6s  %-19s' % ('n', 'fwd s', 'f+b s', 'f+b/f',
                                           'target')
        if self.py:
            head += ' %8s %7s  %-19s' % ('check s', 'chk/f', 'target')
        if torch:
            head += ' %8s %8s  %-19s %8s %9s %7s  %-19s %9s' % (
                'torch s', 'torch/a', 'target', 'attn MiB', 'torch MiB',
                'RSS a/t', 'target', 'rel diff')
        self.say(head)
        self.say('-' * len(head))
        for n in sizes:
            shape = '1x%dx%dx%d' % (GRAD_H, n, GRAD_D)
            files = []
            for seed, role in enumerate(('q', 'k', 'v', 'do'), 1):
                path = data('%s%d-4d.npy' % (role, n))
                if not os.path.exists(path):
                    run([ATTN, 'gen', shape, '--seed', str(seed), '-f',
                         'npy', '-o', path])
                files.append(path)
            q, k, v, d_out = files
            out_f = os.path.join(WORK, 'out', 'fwd%d.npy' % n)
            out_b = os.path.join(WORK, 'out', 'grad%d.npz' % n)
            out_t = os.path.join(WORK, 'out', 'torch%d.npz' % n)
            argvs = [[ATTN, q, k, v, '-o', out_f],
                     [ATTN, q, k, v, '--grad', d_out, '-s',
                      'grad_q,grad_k,grad_v', '-o', out_b]]
            if self.py:
                ref = data('grads%d.npz' % n)
                if not os.path.exists(ref):
                    self.numpy('grads', q, k, v, d_out, ref)
                argvs.append([ATTN, q, k, v, '--grad', d_out, '-s',
                              'output,lse,grad_q,grad_k,grad_v', '--check',
                              ref])
            if torch:
                argvs.append([self.py, peer, q, k, v, d_out, out_t])
            failed = []
            res = median_runs(argvs, self.a.runs or 3, failed)
            if failed:
                self.disagree.append('check n=%d failed' % n)
            (tf, _), (tb, mb) = res[0], res[1]
            line = '%5d %7.3f %8.3f %5.2fx  %-19s' % (
                n, tf, tb, tb / tf, target_note(tb / tf, GRAD_RATIO, False))
            if self.py:
                tc = res[2][0]
                line += ' %8.3f %6.2fx  %-19s' % (
                    tc, tc / tf, target_note(tc / tf, CHECK_RATIO, False))
            if torch:
                tt, mt = res[-1]
                speed = TORCH_SPEED_SMALL if n <= TORCH_SMALL else TORCH_SPEED
                diff = float(output_of([self.py, peer, 'compare', out_b,
                                        out_t]).split()[-1])
                if not diff <= AGREE:
                    self.disagree.append('backward n=%d: %g' % (n, diff))
                line += ' %8.3f %7.2fx  %-19s %8.1f %9.1f %7.3f  %-19s %9.1e' % (
                    tt, tt / tb, target_note(tt / tb, speed), mb, mt, mb / mt,
                    target_note(mb / mt, TORCH_RSS, False, ''), diff)
                os.remove(out_t)
            self.say(line)
            os.remove(out_f)
            os.remove(out_b)
        runs = self.a.runs or 3
        peak = self.peak[self.isa]
        self.say('compute alone (inputs in memory, nothing written), '
                 'median of %s: forward, forward + backward (grad_q, '
                 'grad_k, grad_v);' % plural(runs, 'run'))
        self.say('  the ratio for information (the target is on whole '
                 'runs, above; 7 matrix products against the forward\'s 2 '
                 'make 3.5x); GFLOP/s = 2 T S d H a product, by CPU time, '
                 'as a fraction of the %s FMA peak, %.1f' % (self.isa, peak))
        for line in output_of(self.compute_args()[:1] + ['-g'] +
                              self.compute_args()[1:] + ['-r', str(runs)] +
                              [str(n) for n in sizes]).splitlines():
            w = line.split()
            if w[0] == 'grad':
                tf, tb, cf, cb = (measured(float(t), 'attn\'s %s at n = %s'
                                           % (part, w[1]), 's')
                                  for t, part in (
                                      (w[2], 'forward'),
                                      (w[3], 'forward and backward'),
                                      (w[4], 'forward\'s CPU'),
                                      (w[5], 'backward\'s CPU')))
                flops = 2.0 * int(w[1]) ** 2 * GRAD_D * GRAD_H * 1e-9
                rf, rb = 2 * flops / cf, 7 * flops / cb
                self.say('  n = %5s  %7.3f s  %7.3f s  %5.2fx   forward '
                         '%6.1f = %.2f of the peak   forward + backward '
                         '%6.1f = %.2f of the peak (%s)' % (
                             w[1], tf, tb, tb / tf, rf, rf / peak, rb,
                             rb / peak, target_note(rb / peak, GRAD_PEAK,
                                                    unit='')))
        self.say()

    def python(self, cases, grad_n):
        """The module attn in-process (bench/python_side.py, run by PY),
        against the CLI and PyTorch on small cases, its overhead a call,
        and its backward against bench-compute's."""
        side = [self.py, os.path.join(HERE, 'python_side.py')]
        torch = self.has_torch()
        runs = self.a.runs or 3
        self.say('Python module attn (python/, libattn.so.0 in the process),'
                 ' run by %s;' % self.py)
        self.say('%d cases of 1 x 2 x 128 x 64, each a kernel\'s output, '
                 'lse, grad_q, grad_k, grad_v (float32) checked: the '
                 'reference\'s forward + backward and comparison, times '
                 'summed:' % cases)
        w = output_of(side + ['cases', str(cases), ATTN,
                              os.path.join(WORK, 'out')] +
                      (['torch'] if torch else [])).split()
        t_in, t_cli = (measured(float(t), what, 's') for t, what in (
            (w[2], 'the cases in process'), (w[3], 'the cases by the CLI')))
        line = ('  in process %.3f s   CLI with .npz %.3f s = %.1fx (%s)' % (
            t_in, t_cli, t_cli / t_in, target_note(t_cli / t_in,
                                                   PY_OVER_CLI)))
        if torch:
            t_pt = measured(float(w[4]), 'the cases by PyTorch', 's')
            line += ('   PyTorch float64 autograd + torch.testing %.3f s '
                     '= %.1fx (%s)' % (t_pt, t_pt / t_in, target_note(
                         t_pt / t_in, PY_OVER_TORCH)))
        self.say(line)
        if int(w[5]):
            self.disagree.append('python cases: %s of %d by the CLI failed '
                                 'their check' % (w[5], cases))
        call = measured(float(output_of(side + ['overhead', '2000'])
                              .split()[1]), 'a call at 1 x 1 x 1 x 1', 's')
        said = dict(line.split(None, 1) for line in output_of(
            self.compute_args() + ['-r', '99', '1']).splitlines())
        comp = measured(float(said['compute'].split()[1]),
                        'bench-compute at n = 1', 's')
        over = max(call - comp, 0.0) * 1e6
        self.say('  one call, output of 1 x 1 x 1 x 1: %.1f us; libattn\'s '
                 'compute (bench-compute 1, d 64) %.1f us: overhead %.1f us '
                 '(%s)' % (call * 1e6, comp * 1e6, over, target_note(
                     over, PY_OVERHEAD_US, False, ' us')))
        t_py = measured(float(output_of(side + ['grad', str(grad_n),
                                                str(runs)]).split()[2]),
                        'the backward from Python', 's')
        said = dict(line.split(None, 1) for line in output_of(
            self.compute_args() + ['-g', '-r', str(runs), str(grad_n)]
        ).splitlines())
        t_c = measured(float(said['grad'].split()[2]),
                       'bench-compute -g at n = %d' % grad_n, 's')
        self.say('  1 x 8 x %d x 128 forward + backward, medians of %s: '
                 'Python %.3f s, bench-compute -g %.3f s = %.2fx (%s)' % (
                     grad_n, plural(runs, 'run'), t_py, t_c, t_py / t_c,
                     target_note(t_py / t_c, PY_GRAD_RATIO, False)))
        self.say()

    def big(self, n):
        """Self-attention where NumPy cannot go (at n = 65536 its T x S
        would be 32 GiB): from CSV, and from .npy against the kernel
        alone at the same n."""
        x = gen(n, D, 1, 'csv', data('x%d.csv' % n))
        out = os.path.join(WORK, 'out', 'x%d.csv' % n)
        [(t, m)] = median_runs([[ATTN, '--self', x, '-f', 'csv', '-o', out]],
                               self.runs)
        os.remove(out)
        rate = ''
        if self.dgemm:
            # the time the dgemm rate allows, over attn's
            allowed = 4.0 * n * n * D / (self.dgemm * 1e9)
            rate = ', %.2f of the dgemm rate (%s)' % (
                allowed / t, target_note(allowed / t, BIG_OF_DGEMM, unit=''))
        self.say('n = %d self-attention, CSV in and out, attn only (median '
                 'of %s): %.1f s%s, peak RSS %.0f MiB (%s)' % (
                     n, plural(self.runs, 'run'), t, rate, m,
                     target_note(m, BIG_MIB, False, ' MiB')))
        for line in output_of(self.compute_args() + [
                '-r', str(self.runs), str(n)]).splitlines():
            w = line.split()
            if w[0] == 'compute':
                self.say('n = %d self-attention, .npy in and out:' % n)
                self.whole_run(n, *(measured(
                    float(v), 'attn\'s kernel at n = %d' % n, 's')
                    for v in (w[2], w[5])), files=[gen(
                        n, D, 1, 'npy', data('x%d.npy' % n))])

    def whole_run(self, n, alone, alone_cpu, files):
        """A whole run from .npy (files: Q, K and V, or X for --self),
        output to .npy, against the kernel alone at the same n, which
        took alone seconds and alone_cpu CPU seconds: its rate as a
        fraction of the kernel's, by the wall clock and (the target) by
        CPU time, which other processes on a shared machine do not
        lengthen."""
        argv = [ATTN] + (['--self'] if len(files) == 1 else []) + files
        out = os.path.join(WORK, 'out', 'whole%d.npy' % n)
        argv += ['-f', 'npy', '-o', out]
        [(t, _)] = median_runs([argv], self.runs)
        [(c, _)] = median_runs([argv], self.runs, cpu=True)
        os.remove(out)
        self.say('  n = %5d  the whole run from .npy: %.3g s, %.3g s of CPU;'
                 ' the kernel alone %.3g s, %.3g s of CPU: the whole run at '
                 '%.2f of the kernel\'s rate, by CPU time %.2f (%s)' % (
                     n, t, c, alone, alone_cpu, alone / t, alone_cpu / c,
                     target_note(alone_cpu / c, WHOLE_RUN, unit='')))


    def startup(self):
        """attn's own start-up, which a learner meets first: --explain on
        the worked example of attn(1), whole process, wall and CPU time,
        each the median of STARTUP_RUNS runs after one untimed run."""
        example = os.path.join(HERE, '..', 'data', 'examples',
                               'apple-cheese.json')
        argv = [ATTN, '--explain', example]
        [(wall, _)] = median_runs([argv], STARTUP_RUNS, warmup=True)
        [(cpu, _)] = median_runs([argv], STARTUP_RUNS, cpu=True)
        self.say('start-up: attn --explain data/examples/apple-cheese.json, '
                 'medians of %d runs: wall %.2f ms (%s), CPU %.2f ms (%s)' % (
                     STARTUP_RUNS, wall * 1e3, target_note(
                         wall * 1e3, STARTUP_WALL_MS, False, ' ms'),
                     cpu * 1e3, target_note(cpu * 1e3, STARTUP_CPU_MS, False,
                                            ' ms')))
        self.say()


def as_avx2(py):
    """The environment, for this process and so for every process it
    starts, of an AVX2 machine without AVX-512: what each program reads
    to choose its loops.  Returns the settings as a shell would write
    them."""
    env = {'ATTN_ISA': 'avx2', 'OPENBLAS_CORETYPE': 'Haswell',
           'ATEN_CPU_CAPABILITY': 'avx2'}
    if py:
        off = output_of([py, os.path.join(HERE, 'numpy_side.py'),
                         'avx512']).strip()
        if off:
            env['NPY_DISABLE_CPU_FEATURES'] = off
    os.environ.update(env)
    return ' '.join("%s='%s'" % (k, v) if ' ' in v else '%s=%s' % (k, v)
                    for k, v in sorted(env.items()))


def main():
    global ATTN, SPAWN, WORK
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--attn', required=True)
    ap.add_argument('--compute', required=True)
    ap.add_argument('--work', required=True)
    ap.add_argument('--numbers')
    ap.add_argument('--python')
    ap.add_argument('--spawn', required=True)
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--compute-only', action='store_true')
    ap.add_argument('--only', type=parts_arg)
    ap.add_argument('--sizes', type=sizes_arg)
    ap.add_argument('--torch-sizes', type=sizes_arg)
    ap.add_argument('--compute-sizes', type=sizes_arg)
    ap.add_argument('--compute-d', type=sizes_arg)
    ap.add_argument('--runs', type=int)
    ap.add_argument('--big', type=int)
    ap.add_argument('--grad-sizes', type=sizes_arg)
    ap.add_argument('--dgemm', type=int, default=4096)
    ap.add_argument('--numbers-rows', type=int, default=16384)
    ap.add_argument('--emulate-sizes', type=sizes_arg)
    ap.add_argument('--paged-sizes', type=sizes_arg)
    ap.add_argument('--as', dest='as_isa', choices=('avx2',))
    ap.add_argument('--py-cases', type=int, default=PY_CASES)
    ap.add_argument('--py-grad', type=int, default=PY_GRAD_N)
    a = ap.parse_args()
    a.as_env = as_avx2(a.python) if a.as_isa else None
    ATTN, SPAWN = os.path.abspath(a.attn), os.path.abspath(a.spawn)
    WORK = os.path.abspath(a.work)
    os.makedirs(os.path.join(WORK, 'data'), exist_ok=True)
    os.makedirs(os.path.join(WORK, 'out'), exist_ok=True)

    only = a.only or ({'compute'} if a.compute_only else set(PARTS))
    b = Bench(a)
    b.header(bool(only & {'compute', 'big'}))
    if 'startup' in only:
        b.startup()
    if 'table' in only:
        b.table(a.sizes or ((512, 2048) if a.quick else
                            (512, 2048, 4096, 8192)),
                a.torch_sizes or ((2048,) if a.quick else (4096, 8192)))
    if 'compute' in only:
        b.compute(a.compute_sizes or ((4096,) if a.quick else
                                      COMPUTE_SIZES),
                  a.compute_d or COMPUTE_D)
    if 'grad' in only:
        b.grad(a.grad_sizes or ((256, 1024) if a.quick else
                                (256, 1024, 4096)))
    big = a.big if a.big is not None else 0 if a.quick else BIG
    if 'emulate' in only:
        b.emulate(a.emulate_sizes or ((1024,) if a.quick else
                                      (1024, 4096)))
    if 'paged' in only:
        b.paged(a.paged_sizes or ((1024,) if a.quick else (4096,)))
    if 'numbers' in only:
        b.numbers()
    if big and 'big' in only:
        b.big(big)
    if 'python' in only and a.python:
        b.python(a.py_cases, a.py_grad)
    with open(os.path.join(WORK, 'table.txt'), 'w') as f:
        f.write('\n'.join(b.lines) + '\n')
    if b.disagree:
        print('bench: attn and NumPy disagree by more than %g: %s' % (
            AGREE, '; '.join(b.disagree)), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except (Failed, OSError) as e:
        print('bench: %s' % e, file=sys.stderr)
        sys.exit(1)
