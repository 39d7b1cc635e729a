#!/usr/bin/env python3
"""python_side.py - the Python rows of `make bench`, each measured in
this process of its own (bench.py runs it with PY, and uses the
standard library alone): attn's module from this tree (python/), which
loads build/libattn.so.0.

  python_side.py cases N ATTN WORK [torch]
      N parametrized small cases (Q, K, V, dO of 1 x 2 x 128 x 64 bhsd,
      seeds 0 to N - 1), each a kernel's results (output, lse, grad_q,
      grad_k, grad_v: attn's rounded to float32, made untimed) checked
      by a reference's forward + backward and comparison, timed: three
      ways.  attn.check in this process; the same through the CLI ATTN
      with files in WORK, as a test without the module does it (Q, K, V
      and dO to .npy, the results to one .npz, attn --grad --check); and,
      with "torch", PyTorch's float64 autograd of the formula and
      torch.testing.assert_close with attn's tolerances (rtol 1e-5, atol
      1e-8) on each result.  Prints "cases N INPROC_S CLI_S TORCH_S
      FAILED" (TORCH_S "-" without torch), each the sum of the N timed
      parts, and FAILED the cases whose check by the CLI failed (exit 1,
      an attn that disagrees with the module); PyTorch is imported
      before, as a test session has it imported.
  python_side.py overhead REPS
      attn.attention of the output of a 1 x 1 x 1 x 1 case, REPS calls
      after a warm-up: prints "overhead SECONDS", the median call.
  python_side.py grad N RUNS
      attn.attention of grad_q, grad_k and grad_v of 1 x 8 x N x 128
      (standard normal, as bench-compute -g's, from NumPy's generator:
      the time does not depend on the numbers), the median of RUNS:
      prints "grad N SECONDS".

Every result is asserted, so that no row times a run that did not do
its work: a check in the process or by PyTorch that fails stops the
bench; the CLI's are counted (FAILED), for bench.py to report.
"""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import attn  # noqa: E402

STAGES = ("output", "lse", "grad_q", "grad_k", "grad_v")
SHAPE = (1, 2, 128, 64)


def case(seed):
    """Q, K, V and dO of one case."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(SHAPE) for _ in range(4)]


def kernel_of(got):
    """A kernel's results: attn's rounded to float32."""
    return {s: got[s].astype(np.float32) for s in STAGES}


def cases(n):
    """Each case's operands and the kernel's results, made untimed."""
    for seed in range(n):
        q, k, v, do = case(seed)
        got = attn.attention(q, k, v, stages=STAGES, grad_out=do)
        yield q, k, v, do, kernel_of(got)


def in_process(n):
    t = 0.0
    for q, k, v, do, res in cases(n):
        t0 = time.perf_counter()
        rows = attn.check(res, q, k, v, grad_out=do)
        t += time.perf_counter() - t0
        assert len(rows) == len(STAGES) and all(r.passed for r in rows)
    return t


def through_cli(n, cli, work):
    names = [os.path.join(work, x + ".npy") for x in ("q", "k", "v", "do")]
    cand = os.path.join(work, "cand.npz")
    t, failed = 0.0, 0
    for q, k, v, do, res in cases(n):
        t0 = time.perf_counter()
        for name, x in zip(names, (q, k, v, do)):
            np.save(name, x)
        np.savez(cand, **res)
        rc = subprocess.run([cli, "--grad", names[3], "-s",
                             ",".join(STAGES), "--check", cand] + names[:3],
                            stdout=subprocess.DEVNULL).returncode
        t += time.perf_counter() - t0
        if rc not in (0, 1):
            raise SystemExit("python_side.py: %s: exit %d" % (cli, rc))
        failed += rc
    return t, failed


def with_torch(torch, n):
    t = 0.0
    for q, k, v, do, res in cases(n):
        t0 = time.perf_counter()
        q, k, v, do = (torch.from_numpy(x) for x in (q, k, v, do))
        q, k, v = (x.requires_grad_() for x in (q, k, v))
        s = q @ k.transpose(-1, -2) / SHAPE[-1] ** 0.5
        lse = torch.logsumexp(s, dim=-1, keepdim=True)
        out = torch.softmax(s, dim=-1) @ v
        out.backward(do)
        for name, x in zip(STAGES, (out, lse, q.grad, k.grad, v.grad)):
            torch.testing.assert_close(torch.from_numpy(res[name]).double(),
                                       x.detach(), rtol=1e-5, atol=1e-8)
        t += time.perf_counter() - t0
    return t


def main(argv):
    if argv[0] == "cases":
        n, cli, work = int(argv[1]), argv[2], argv[3]
        t_torch = "-"
        if argv[4:] == ["torch"]:
            import torch
            t_torch = "%.6g" % with_torch(torch, n)
        t_in = in_process(n)
        t_cli, failed = through_cli(n, cli, work)
        print("cases %d %.6g %.6g %s %d" % (n, t_in, t_cli, t_torch, failed))
    elif argv[0] == "overhead":
        reps = int(argv[1])
        x = np.ones((1, 1, 1, 1))
        for _ in range(100):
            attn.attention(x, x, x, stages="output")
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            attn.attention(x, x, x, stages="output")
            times.append(time.perf_counter() - t)
        print("overhead %.6g" % statistics.median(times))
    elif argv[0] == "grad":
        n, runs = int(argv[1]), int(argv[2])
        q, k, v, do = (np.random.default_rng(s).standard_normal(
            (1, 8, n, 128)) for s in (1, 2, 3, 4))
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            got = attn.attention(q, k, v, stages=("grad_q", "grad_k",
                                                  "grad_v"), grad_out=do)
            times.append(time.perf_counter() - t)
            assert got["grad_q"].shape == q.shape
        print("grad %d %.6g" % (n, statistics.median(times)))
    else:
        raise SystemExit("python_side.py: cases, overhead or grad")


if __name__ == "__main__":
    main(sys.argv[1:])
