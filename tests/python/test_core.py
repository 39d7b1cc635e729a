"""attn.attention, attn.check and attn.assert_close against attn itself:
the stages of a run, its errors as exceptions with attn's message and
exit code, the check's rows and report; the keywords from attn's table
of options; the GIL let go while libattn computes."""
import os
import subprocess
import threading
import time

import numpy
import pytest

import attn
from conftest import qkv


def cli(attn_bin, tmp_path, args, arrays):
    """attn run on files of arrays: (exit code, stdout bytes, stderr)."""
    names = []
    for name, a in arrays.items():
        path = os.path.join(tmp_path, name + ".npy")
        numpy.save(path, a)
        names.append(path)
    p = subprocess.run([attn_bin] + args + names, capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode()


def test_stages_are_attns(tmp_path, attn_bin):
    q, k, v = qkv()
    got = attn.attention(q, k, v, layout="bhsd", causal=True)
    assert list(got) == ["output", "lse"]
    code, out, _ = cli(attn_bin, tmp_path, ["--layout", "bhsd", "--causal",
                                            "-s", "output,lse", "-f", "npz", "-o",
                                            str(tmp_path / "r.npz")],
                       {"q": q, "k": k, "v": v})
    assert code == 0
    ref = numpy.load(tmp_path / "r.npz")
    for name in ("output", "lse"):
        assert got[name].dtype == numpy.float64
        assert got[name].shape == ref[name].shape
        assert got[name].tobytes() == ref[name].tobytes()


def test_stages_in_the_order_asked():
    q, k, v = qkv()
    got = attn.attention(q, k, v, layout="bhsd", stages="lse,output")
    assert list(got) == ["lse", "output"]
    got = attn.attention(q, k, v, layout="bhsd", stages=["weights"])
    assert list(got) == ["weights"]
    assert got["weights"].shape == (1, 2, 6, 6)


def test_errors_are_attns(tmp_path, attn_bin):
    q, k, v = qkv()
    with pytest.raises(attn.UsageError) as e:
        attn.attention(q, k, v, layout="bhsd", align="sideways")
    code, _, err = cli(attn_bin, tmp_path, ["--layout", "bhsd", "--align",
                                            "sideways"],
                       {"q": q, "k": k, "v": v})
    assert code == 64 == e.value.status
    assert str(e.value) == err.splitlines()[0].replace(
        str(tmp_path) + "/", "")
    with pytest.raises(attn.DataError) as e:
        attn.attention(q, k[:, :, :, :3], v, layout="bhsd")
    assert e.value.status == 65 and str(e.value).startswith("attn: ")
    with pytest.raises(attn.UsageError, match="did you mean --causal"):
        attn.attention(q, k, v, casual=True)
    with pytest.raises(attn.NoInputError):
        attn.attention(q, k, v, layout="bhsd", mask="/nonexistent/m.npy")


def test_memory_limit_refused_first():
    q, k, v = qkv((1, 1, 512, 64))
    with pytest.raises(attn.MemoryLimitError) as e:
        attn.attention(q, k, v, layout="bhsd", stages="all",
                       max_memory="64K")
    assert isinstance(e.value, MemoryError) and e.value.status == 71
    assert "ATTN_MAX_MEMORY" in str(e.value)


def test_every_convention_is_a_documented_keyword():
    """Each option of attn's table that is a convention is a keyword
    attention() takes, and help(attn.attention) documents it."""
    conv = attn.conventions()
    assert {"causal", "window", "softcap", "alibi", "alibi_slopes",
            "sinks", "mask", "bias", "cu_seqlens_q", "cu_seqlens_k",
            "seqused_k", "emulate", "lse_base", "lse_masked", "like",
            "scale", "threads", "layout", "align"} <= set(conv)
    assert not {"output", "format", "stage", "svg", "check", "help"} & \
        set(conv)
    for key, (option, _arg, text) in conv.items():
        shown = "grad_out" if key == "grad" else key
        assert "    %s=" % shown in attn.attention.__doc__, key
        assert "(%s)" % option in attn.attention.__doc__, key
        assert text.splitlines()[0] in attn.attention.__doc__, key


# attn's options that choose or write output, which the module's calls
# choose themselves (cli/options_table.c's session_chosen), and those of
# attn gen alone.
NOT_KEYWORDS = {"explain", "stage", "format", "header", "full", "npy-dtype",
                "digits", "query-labels", "key-labels", "query",
                "arithmetic", "stats", "heatmap", "svg", "color",
                "color-range", "check", "output", "progress", "no-progress",
                "help", "version", "seed", "dist"}


def test_every_option_of_attn_help_is_a_keyword(attn_bin):
    """Each option attn --help lists (the program's, read apart from the
    module) is a keyword of attention() or one of output: an option added
    to the table becomes a keyword, or this fails until it is listed
    above as output."""
    import re
    text = subprocess.run([attn_bin, "--help"], capture_output=True,
                          check=True).stdout.decode()
    names = set(re.findall(r"^ +(?:-., )?--([a-z0-9-]+)", text, re.M))
    assert len(names) > 40
    keywords = set(attn.conventions())
    for name in sorted(names - NOT_KEYWORDS):
        assert name.replace("-", "_") in keywords, name
    assert not {n.replace("-", "_") for n in NOT_KEYWORDS} & keywords


def test_flags_and_values_reach_attn():
    q, k, v = qkv((1, 1, 5, 4))
    plain = attn.attention(q, k, v, layout="bhsd", stages="weights")
    causal = attn.attention(q, k, v, layout="bhsd", stages="weights",
                            causal=True)
    assert numpy.all(numpy.triu(causal["weights"][0, 0], 1) == 0)
    assert not numpy.all(numpy.triu(plain["weights"][0, 0], 1) == 0)
    w = attn.attention(q, k, v, layout="bhsd", stages="weights",
                       window=(1, 0))["weights"][0, 0]
    assert numpy.all(numpy.tril(w, -2) == 0) and \
        numpy.all(numpy.triu(w, 1) == 0)
    s = attn.attention(q, k, v, layout="bhsd", stages="scaled",
                       scale=0.5)["scaled"]
    assert numpy.allclose(s[0, 0], q[0, 0] @ k[0, 0].T * 0.5)
    with pytest.raises(attn.UsageError, match="True or False"):
        attn.attention(q, k, v, causal="yes")
    with pytest.raises(attn.UsageError, match="not a convention"):
        attn.attention(q, k, v, output="x.npy")


def test_inputs_any_dtype_and_strides():
    q, k, v = qkv((1, 2, 6, 4))
    ref = attn.attention(q, k, v, layout="bhsd")["output"]
    f = attn.attention(numpy.asfortranarray(q), k[:, :, ::1, :],
                       v.copy(order="F"), layout="bhsd")["output"]
    assert f.tobytes() == ref.tobytes()
    big = numpy.zeros((1, 2, 12, 4))
    big[:, :, ::2, :] = k
    assert attn.attention(q, big[:, :, ::2, :], v, layout="bhsd")[
        "output"].tobytes() == ref.tobytes()
    q32 = q.astype(numpy.float32)
    got = attn.attention(q32, k, v, layout="bhsd")["output"]
    want = attn.attention(q32.astype(numpy.float64), k, v,
                          layout="bhsd")["output"]
    assert got.tobytes() == want.tobytes()
    q16 = q.astype(numpy.float16)
    got = attn.attention(q16, k, v, layout="bhsd")["output"]
    want = attn.attention(q16.astype(numpy.float64), k, v,
                          layout="bhsd")["output"]
    assert got.tobytes() == want.tobytes()
    assert attn.attention(q.tolist(), k, v, layout="bhsd")[
        "output"].tobytes() == ref.tobytes()


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    q, k, v = qkv((1, 2, 6, 4))
    ref = attn.attention(q, k, v, layout="bhsd")["output"]
    t = [torch.tensor(x, requires_grad=True) for x in (q, k, v)]
    assert attn.attention(*t, layout="bhsd")["output"].tobytes() == \
        ref.tobytes()
    b = [torch.tensor(x).to(torch.bfloat16) for x in (q, k, v)]
    want = attn.attention(*[x.float().numpy() for x in b],
                          layout="bhsd")["output"]
    assert attn.attention(*b, layout="bhsd")["output"].tobytes() == \
        want.tobytes()


def test_backward_stages():
    q, k, v = qkv((1, 2, 6, 4))
    do = qkv((1, 2, 6, 4), seed=1)[0]
    got = attn.attention(q, k, v, layout="bhsd", grad_out=do,
                         stages=("grad_q", "grad_k", "grad_v"))
    assert [a.shape for a in got.values()] == [(1, 2, 6, 4)] * 3
    with pytest.raises(attn.UsageError):
        attn.attention(q, k, v, layout="bhsd", stages="grad_q")


def test_check_rows_and_hints(tmp_path, attn_bin):
    q, k, v = qkv((1, 2, 6, 4))
    good = attn.attention(q, k, v, layout="bhsd")
    rows = attn.check({"output": good["output"].astype(numpy.float32),
                       "lse": good["lse"]}, q, k, v, layout="bhsd")
    assert rows.passed and [r.stage for r in rows] == ["output", "lse"]
    assert all(r.passed for r in rows) and rows.not_checked == []
    # the other layout: attn's hint names it
    wrong = good["output"].transpose(0, 2, 1, 3).copy()
    wrong = wrong.reshape(good["output"].shape)
    rows = attn.check({"output": wrong, "extra": q}, q, k, v,
                      layout="bhsd")
    assert not rows.passed and not rows[0].passed
    assert [n["array"] for n in rows.not_checked] == ["extra"]
    numpy.savez(tmp_path / "c.npz", output=wrong, extra=q)
    code, out, _ = cli(attn_bin, tmp_path, ["--layout", "bhsd", "--check",
                                            str(tmp_path / "c.npz")],
                       {"q": q, "k": k, "v": v})
    assert code == 1
    with pytest.raises(AssertionError) as e:
        attn.assert_close({"output": wrong, "extra": q}, q, k, v,
                          layout="bhsd")
    assert str(e.value) == out.decode().replace(str(tmp_path / "c.npz"),
                                                "results.npz")
    assert "--layout bshd" in rows[0].hint
    assert rows[0].hint in str(e.value)
    assert attn.assert_close({"output": good["output"]}, q, k, v,
                             layout="bhsd").passed


def test_results_archive_is_numpys(tmp_path):
    """The .npz check() hands attn is the archive numpy.savez writes of
    the same arrays, as numpy.load and zipfile read it: each member's
    dtype, order, shape and bytes, CRC-32 and all; arrays numpy.save
    would pickle go through numpy.savez itself."""
    import io
    import zipfile
    res = {"output": numpy.arange(24.0).reshape(2, 3, 4),
           "lse": numpy.asfortranarray(numpy.arange(6.0, dtype=numpy.float32)
                                       .reshape(2, 3)),
           "dq": numpy.arange(5, dtype=numpy.float16)[::2],
           "\u00e9t\u00e9": numpy.ones((1,), ">f8")}
    raw = attn._npz(res)
    assert raw[-1] == 0
    data = raw[:-1].tobytes()
    assert zipfile.ZipFile(io.BytesIO(data)).testzip() is None
    back = numpy.load(io.BytesIO(data))
    assert list(back) == list(res)
    for name, a in res.items():
        assert back[name].dtype == a.dtype and back[name].shape == a.shape
        assert back[name].tobytes() == a.tobytes()
    assert numpy.load(io.BytesIO(data))["lse"].flags.f_contiguous
    numpy.savez(tmp_path / "ref.npz", **res)
    with zipfile.ZipFile(tmp_path / "ref.npz") as z:
        for name, a in res.items():
            assert z.read(name + ".npy") == \
                zipfile.ZipFile(io.BytesIO(data)).read(name + ".npy")
    odd = {"output": numpy.array([1, "x"], dtype=object)}
    assert numpy.load(io.BytesIO(attn._npz(odd)[:-1].tobytes()),
                      allow_pickle=True)["output"].tolist() == [1, "x"]


def test_float64_read_in_place_not_copied():
    """A float64 array in C order is read where it lies: a Q of 32 MiB
    runs under a limit of 48 MiB, which a copy of it beside it (the same
    Q in Fortran order, which attn reads element by element into an
    array of its own) passes; the numbers are the same either way, and
    the caller's array is left as it was."""
    q = numpy.random.default_rng(0).standard_normal((65536, 64))
    k, v = qkv((4, 64))[:2]
    before = q.copy()
    got = attn.attention(q, k, v, stages="lse", max_memory="48M")
    assert (q == before).all()
    with pytest.raises(attn.MemoryLimitError):
        attn.attention(numpy.asfortranarray(q), k, v, stages="lse",
                       max_memory="48M")
    ref = attn.attention(numpy.asfortranarray(q), k, v, stages="lse")
    assert got["lse"].tobytes() == ref["lse"].tobytes()


def test_arrays_in_two_pieces_read_as_whole_files(tmp_path, attn_bin):
    """An array handed over as a .npy's header and its own bytes reads as
    the file would: strided, Fortran-order, float32, big-endian and
    float16 operands give attn's stages, and a bad value attn's message
    at the byte of the file numpy.save writes."""
    q, k, v = qkv((2, 6, 4))
    for x in (q[:, ::-1], numpy.asfortranarray(q), q.astype(">f8"),
              q.astype(numpy.float32), q.astype(numpy.float16)):
        got = attn.attention(x, k, v, stages="output")
        code, out, _ = cli(attn_bin, tmp_path, ["-s", "output", "-f",
                                                "npz", "-o",
                                                str(tmp_path / "r.npz")],
                           {"q": x, "k": k, "v": v})
        assert code == 0
        assert got["output"].tobytes() == \
            numpy.load(tmp_path / "r.npz")["output"].tobytes()
    bad = q.copy()
    bad[1, 2, 3] = numpy.nan
    with pytest.raises(attn.DataError) as e:
        attn.attention(bad, k, v)
    code, _, err = cli(attn_bin, tmp_path, [], {"q": bad, "k": k, "v": v})
    assert code == 65
    assert str(e.value) == err.splitlines()[0].replace(
        str(tmp_path / "q.npy"), "q.npy")
    head = os.path.getsize(tmp_path / "q.npy") - bad.nbytes
    at = head + 8 * numpy.ravel_multi_index((1, 2, 3), bad.shape)
    assert str(e.value).startswith("attn: q.npy: byte %d: a[1, 2, 3]: " % at)


def test_results_in_memory_read_as_their_archive(tmp_path, attn_bin):
    """check() hands its results over as the members of results.npz,
    each array's own bytes: the verdict and the report are the CLI's of
    numpy.savez's archive of them (float64 read in place, float32,
    Fortran order, a strided view), and a member attn refuses is the
    same error at the same byte of its member."""
    q, k, v = qkv((1, 2, 6, 4))
    got = attn.attention(q, k, v, layout="bhsd")
    out = got["output"]
    for res in ({"output": out, "lse": got["lse"]},
                {"output": out.astype(numpy.float32),
                 "lse": numpy.asfortranarray(got["lse"][0, :, :, 0])},
                {"out": numpy.concatenate([out, out], 3)[..., ::2]},
                {"output": out.transpose(0, 2, 1, 3).copy()}):
        numpy.savez(tmp_path / "c.npz", **res)
        code, text, _ = cli(attn_bin, tmp_path, ["--layout", "bhsd",
                                                 "--check",
                                                 str(tmp_path / "c.npz")],
                            {"q": q, "k": k, "v": v})
        rows = attn.check(res, q, k, v, layout="bhsd")
        assert rows.passed == (code == 0)
        if code:
            with pytest.raises(AssertionError) as e:
                attn.assert_close(res, q, k, v, layout="bhsd")
            assert str(e.value) == text.decode().replace(
                str(tmp_path / "c.npz"), "results.npz")
    for bad in (out.astype(numpy.complex128), out.astype(numpy.int16)):
        numpy.savez(tmp_path / "c.npz", output=bad)
        code, _, err = cli(attn_bin, tmp_path, ["--layout", "bhsd",
                                                "--check",
                                                str(tmp_path / "c.npz")],
                           {"q": q, "k": k, "v": v})
        with pytest.raises(attn.Error) as e:
            attn.check({"output": bad}, q, k, v, layout="bhsd")
        assert e.value.status == code
        assert str(e.value) == err.splitlines()[0].replace(
            str(tmp_path / "c.npz"), "results.npz")


def test_planted_lse_base_fails_with_attns_hint():
    """A kernel's lse in log2 fails with the hint attn gives."""
    q, k, v = qkv((1, 2, 6, 4))
    lse = attn.attention(q, k, v, layout="bhsd", causal=True)["lse"]
    rows = attn.check({"lse": lse / numpy.log(2)}, q, k, v,
                      layout="bhsd", causal=True)
    assert not rows.passed and "--lse-base 2" in rows[0].hint
    assert attn.check({"lse": lse / numpy.log(2)}, q, k, v, layout="bhsd",
                      causal=True, lse_base="2").passed


def test_gil_released_while_computing():
    """ctypes lets go of the GIL for each foreign call: a Python thread
    counts as fast while libattn computes as while the caller sleeps.
    Held, the GIL would leave it a switch interval (5 ms) or two of a run
    of a few hundred."""
    q, k, v = qkv((1, 4, 512, 64))
    done = threading.Event()
    counter = [0]

    def count():
        while not done.is_set():
            counter[0] += 1

    t = threading.Thread(target=count)
    t.start()
    try:
        c0, t0 = counter[0], time.perf_counter()
        time.sleep(0.1)
        c1, t1 = counter[0], time.perf_counter()
        attn.attention(q, k, v, layout="bhsd", stages="all", threads=1)
        c2, t2 = counter[0], time.perf_counter()
    finally:
        done.set()
        t.join()
    free = (c1 - c0) / (t1 - t0)
    during = (c2 - c1) / (t2 - t1)
    assert t2 - t1 > 0.05
    assert during > 0.3 * free, (during, free)


def test_runs_from_threads_at_once():
    q, k, v = qkv((1, 2, 64, 16))
    want = attn.attention(q, k, v, layout="bhsd")["output"].tobytes()
    got = []

    def run():
        got.append(attn.attention(q, k, v, layout="bhsd")["output"]
                   .tobytes())

    ts = [threading.Thread(target=run) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert got == [want] * 4


def test_every_public_function_has_a_docstring():
    for name in attn.__all__:
        obj = getattr(attn, name)
        assert obj.__doc__ and obj.__doc__.strip(), name
    assert attn.__doc__


def test_readme_example_prints_what_it_shows():
    """README.md's example, run, prints the lines the README shows."""
    import contextlib
    import io
    import re
    text = open(os.path.join(os.path.dirname(__file__), "..", "..",
                             "README.md")).read()
    section = text[text.index("## In Python"):]
    code, shown = re.findall(r"```(?:python)?\n(.*?)```", section,
                             re.S)[:2]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue() == shown


def test_check_takes_flashattentions_names():
    """Arrays named as FlashAttention returns them are checked as the
    stages attn's --check reads them as."""
    q, k, v = qkv((1, 2, 6, 4))
    do = qkv((1, 2, 6, 4), seed=2)[0]
    got = attn.attention(q, k, v, layout="bhsd", grad_out=do,
                         stages="output,lse,grad_q,grad_k,grad_v")
    rows = attn.check({"out": got["output"], "softmax_lse": got["lse"],
                       "dq": got["grad_q"], "dk": got["grad_k"],
                       "dv": got["grad_v"]}, q, k, v, layout="bhsd",
                      grad_out=do)
    assert rows.passed
    assert [(r.stage, r.array) for r in rows] == [
        ("output", "out"), ("lse", "softmax_lse"), ("grad_q", "dq"),
        ("grad_k", "dk"), ("grad_v", "dv")]
    rows = attn.check({"dq": got["grad_k"]}, q, k, v, layout="bhsd",
                      grad_out=do)
    assert not rows.passed and rows[0].stage == "grad_q"


def test_attns_warnings_are_python_warnings(tmp_path, capfd):
    """A warning attn writes while reading a file (a header skipped)
    comes as a warnings.warn of attn.Warning_, with attn's line, and
    nothing on the process's stderr."""
    import warnings
    path = tmp_path / "sinks.txt"
    path.write_text("l\n1\n2\n")
    q, k, v = qkv((1, 2, 4, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        attn.attention(q, k, v, layout="bhsd", sinks=str(path))
    lines = [str(w.message) for w in caught
             if issubclass(w.category, attn.Warning_)]
    assert len(lines) == 1 and lines[0].startswith("attn: warning: ")
    assert "column header" in lines[0]
    assert capfd.readouterr().err == ""


def test_pydoc_shows_every_keyword():
    """pydoc3 attn, as README.md and attn(1) say, lists the functions and
    every keyword with its option's help."""
    import sys
    env = dict(os.environ, PYTHONPATH=os.path.dirname(
        os.path.dirname(attn.__file__)))
    text = subprocess.run([sys.executable, "-m", "pydoc", "attn"],
                          capture_output=True, check=True, env=env,
                          ).stdout.decode()
    for name in ("attention(", "check(", "assert_close(", "UsageError",
                 "MemoryLimitError"):
        assert name in text, name
    for key, (option, _arg, _text) in attn.conventions().items():
        assert "(%s)" % option in text, key


def test_a_path_named_as_an_array_of_the_call(tmp_path, monkeypatch):
    """mask="q.npy" is the file q.npy, not the call's Q, which goes by
    that name in memory."""
    q, k, v = qkv((1, 1, 4, 3))
    keep = numpy.tril(numpy.ones((4, 4), bool))
    monkeypatch.chdir(tmp_path)
    numpy.save("q.npy", keep)
    numpy.save("mask.npy", keep)
    want = attn.attention(q, k, v, layout="bhsd", causal=True)["output"]
    for name in ("q.npy", "mask.npy"):
        got = attn.attention(q, k, v, layout="bhsd", mask=name)["output"]
        assert got.tobytes() == want.tobytes(), name


def test_version_is_the_librarys(attn_bin):
    """attn.__version__ is what attn --version says, both built from
    the same tree."""
    out = subprocess.run([attn_bin, "--version"], capture_output=True,
                         check=True).stdout.decode()
    assert out == "attn %s\n" % attn.__version__


def test_session_refuses_what_it_cannot_run():
    """The session (attn_session.h) writes no file and runs attn's
    computation alone: -o, --svg, attn gen and attn workbench are usage
    errors with one line; --help is attn's --help."""
    from attn import _native
    q = attn._npy(numpy.ones((2, 2)))
    files = [("q.npy", q)]
    for words, what in ((["-o", "out.npy"], "-o"), (["--svg", "x.svg"],
                                                      "--svg"),
                        (["gen", "2x2"], "attn gen"),
                        (["workbench"], "attn workbench")):
        code, out, msg = _native.run(words + ["q.npy", "q.npy", "q.npy"],
                                     files)
        assert code == 64 and out.size == 0, words
        assert msg.splitlines()[0].startswith("attn: ") and what in msg
    assert not os.path.exists("out.npy") and not os.path.exists("x.svg")
    code, out, msg = _native.run(["--help"], [])
    assert code == 0 and msg == ""
    assert out.tobytes().decode() == attn.cli_help()
    assert out.tobytes().startswith(b"attn - scaled dot-product attention")


def test_stages_outlive_everything_but_themselves():
    """The stages returned are views of the run's own output, which stays
    until the last of them goes: one kept alone after the rest and the
    dict are gone still reads its numbers."""
    import gc
    q, k, v = qkv((1, 2, 6, 4))
    want = attn.attention(q, k, v, layout="bhsd", stages="all")
    keep = {n: a.copy() for n, a in want.items()}
    got = attn.attention(q, k, v, layout="bhsd", stages="all")
    lse = got["lse"][0, 1]
    del got
    gc.collect()
    for _ in range(20):		# reuse what was freed, if it was
        attn.attention(q * 2, k, v, layout="bhsd", stages="all")
    assert lse.tobytes() == keep["lse"][0, 1].tobytes()
