"""attn in-process: attention and its backward in float64, and attn's
check of a kernel's arrays, as NumPy arrays and Python exceptions.

Every call is a run of attn itself, inside this process: libattn.so.0
parses attn's options through attn's one table of options, reads the
arrays given, computes, checks and writes as attn(1) does, through the
same code, so that each stage returned has the bytes of attn's
``-f npy`` of the same run, a check's rows and hints are attn's own, and
an error is attn's message and exit code as an exception.  Conventions
are attn's options with ``-`` written ``_`` (``causal=True``,
``window=(3, 0)``, ``lse_base="2"``); an option added to attn is a
keyword here with no new code.  See attn(1) and ``help(attn.attention)``.

Functions: attention, check, assert_close, conventions, cli_help.
Exceptions: Error and its subclasses UsageError, DataError, NoInputError,
MemoryLimitError, IOError_, InternalError.
"""
import collections
import functools
import io
import json
import os
import warnings

import numpy

from . import _native

__all__ = ["attention", "check", "assert_close", "conventions", "cli_help",
           "Row", "Verdict", "Error", "UsageError", "DataError",
           "NoInputError", "MemoryLimitError", "OutputError",
           "InternalError", "Warning_"]


class Error(Exception):
    """An error attn reports: str(e) is attn's message line, e.status its
    exit code (attn(1), EXIT STATUS)."""

    status = 70

    def __init__(self, message, status=None):
        Exception.__init__(self, message)
        if status is not None:
            self.status = status


class UsageError(Error):
    """A convention or keyword attn refuses (exit code 64)."""
    status = 64


class DataError(Error):
    """An array attn refuses: its shape, dtype or numbers (exit 65)."""
    status = 65


class NoInputError(Error):
    """A file named by a path that cannot be opened (exit 66)."""
    status = 66


class MemoryLimitError(Error, MemoryError):
    """A run that would pass the memory limit, refused before it starts
    (max_memory=, or ATTN_MAX_MEMORY; exit 71)."""
    status = 71


class OutputError(Error):
    """What attn could not write (exit 73 or 74)."""
    status = 74


class InternalError(Error):
    """A fault of attn's own (exit 70)."""
    status = 70


class Warning_(UserWarning):
    """A warning line attn writes (query rows that attend no key ...)."""


_ERRORS = {64: UsageError, 65: DataError, 66: NoInputError,
           71: MemoryLimitError, 73: OutputError, 74: OutputError}


def _raise(code, msg):
    """The exception of exit code code, with attn's error line."""
    lines = [ln for ln in msg.splitlines()
             if ln.startswith("attn: ") and
             not ln.startswith("attn: warning: ")]
    cls = _ERRORS.get(code, InternalError)
    raise cls(lines[0] if lines else msg.strip() or
              "attn: exit %d" % code, code)


def _warn(msg):
    for ln in msg.splitlines():
        if ln.startswith("attn: warning: "):
            warnings.warn(ln, Warning_, stacklevel=3)


def _run(words, files, max_memory, ok=(0,)):
    code, out, msg = _native.run(words, files, max_memory)
    if code not in ok:
        _raise(code, msg)
    _warn(msg)
    return code, out, msg


# ---------------------------------------------------------------- arrays

def _ndarray(x):
    """x as a NumPy array: anything numpy.asarray takes, and a PyTorch
    tensor (detached, on the CPU; bfloat16 widened to float32, exactly)."""
    if isinstance(x, numpy.ndarray):
        return x
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu()
        if str(getattr(x, "dtype", "")) == "torch.bfloat16":
            x = x.float()
        return x.numpy()
    try:
        return numpy.asarray(x)
    except (ValueError, TypeError):	# ragged: attn refuses its dtype
        a = numpy.empty(1, object)
        a[0] = x
        return a


@functools.lru_cache(maxsize=256)
def _npy_head(descr, fortran, shape):
    """The bytes of a .npy file before its data (format 1.0)."""
    head = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, fortran, repr(shape))
    head += " " * (64 - (10 + len(head) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + \
        head.encode("latin-1")


def _npy(x):
    """x as the bytes of a .npy file and a NUL after them (what attn
    reads in place of a file): the header, then the data in C order, or
    in Fortran order when it lies so (one copy, no conversion: attn reads
    the dtype, and refuses what it does not take with its message)."""
    a = _ndarray(x)
    fortran = a.ndim > 1 and a.flags.f_contiguous and \
        not a.flags.c_contiguous
    if not fortran:
        a = numpy.ascontiguousarray(a)
    descr = a.dtype.str if a.dtype.fields is None else "|V%d" % \
        a.dtype.itemsize
    head = _npy_head(descr, fortran, tuple(int(n) for n in a.shape))
    data = a.nbytes if a.dtype != object else 0
    buf = numpy.empty(len(head) + data + 1, numpy.uint8)
    buf[:len(head)] = numpy.frombuffer(head, numpy.uint8)
    if data:
        buf[len(head):-1] = (a.T if fortran else a).reshape(-1) \
            .view(numpy.uint8)
    buf[-1] = 0
    return buf


def _npy_parts(x):
    """x as a .npy file's header and its data (a C-contiguous array whose
    bytes follow the header): in C order, or in Fortran order when it
    lies so; None for an array whose dtype numpy.save would pickle."""
    a = _ndarray(x)
    if a.dtype.hasobject or a.dtype.fields is not None:
        return None
    fortran = a.ndim > 1 and a.flags.f_contiguous and \
        not a.flags.c_contiguous
    if not fortran:
        a = numpy.ascontiguousarray(a)
    head = _npy_head(a.dtype.str, fortran, tuple(int(n) for n in a.shape))
    return head, a.T if fortran else a


def _npy_file(name, x):
    """x as the file name of the run reads: a .npy in two pieces, its
    header and x's own bytes (read in place, float64 without a copy;
    copied once here only when x is not contiguous), or whole (_npy) for
    a dtype that attn refuses by its message."""
    parts = _npy_parts(x)
    return (name, _npy(x)) if parts is None else (name,) + parts


def _npz(results):
    """results ({name: array}) as the bytes of the .npz numpy.savez
    writes of them, and a NUL after them: what check() hands attn where
    its members cannot go as pieces (_results_files)."""
    buf = io.BytesIO()
    numpy.savez(buf, **{n: _ndarray(a) for n, a in results.items()})
    return numpy.frombuffer(buf.getvalue() + b"\0", numpy.uint8)


def _results_files(results):
    """results ({name: array}) as the files of the .npz results.npz: its
    members each a .npy in two pieces (_npy_parts), read where they lie,
    as the archive numpy.savez writes of them would be read (no zip, no
    copy of a contiguous array); or the archive itself (_npz) where a
    member is one numpy.save would pickle, or there is none."""
    files = []
    for name, x in results.items():
        parts = _npy_parts(x)
        if parts is None:
            return [("results.npz", _npz(results))]
        files.append(("results.npz", name) + parts)
    return files or [("results.npz", _npz(results))]


def _npz_members(out):
    """The members of the .npz attn wrote (its own, stored, in order) as
    {name: float64 array}, each a view of out."""
    arrays = {}
    mv = memoryview(out)
    pos = 0
    while pos + 30 <= len(out) and bytes(mv[pos:pos + 4]) == b"PK\x03\x04":
        size = int.from_bytes(mv[pos + 18:pos + 22], "little")
        nlen = int.from_bytes(mv[pos + 26:pos + 28], "little")
        xlen = int.from_bytes(mv[pos + 28:pos + 30], "little")
        name = bytes(mv[pos + 30:pos + 30 + nlen]).decode()
        start = pos + 30 + nlen + xlen
        if size == 0xFFFFFFFF:		# ZIP64: the size in the extra field
            size = int.from_bytes(mv[pos + 30 + nlen + 12:
                                     pos + 30 + nlen + 20], "little")
        arrays[name[:-4] if name.endswith(".npy") else name] = \
            _npy_view(out, start, size)
        pos = start + size
    return arrays


@functools.lru_cache(maxsize=256)
def _npy_parse(head):
    """The dtype and shape a .npy header (text) declares."""
    shape = head[head.index("(", head.index("'shape'")):]
    shape = tuple(int(t) for t in
                  shape[1:shape.index(")")].replace(" ", "").split(",")
                  if t)
    return numpy.dtype(head.split("'descr': '")[1].split("'")[0]), shape


def _npy_view(out, start, size):
    """The array of the .npy at out[start:start + size], a view."""
    hlen = int(out[start + 8]) | int(out[start + 9]) << 8
    dtype, shape = _npy_parse(
        bytes(out[start + 10:start + 10 + hlen]).decode("latin-1"))
    return out[start + 10 + hlen:start + size].view(dtype).reshape(shape)


# ---------------------------------------------------------------- options

_OPTIONS = _native.options()
_CONVENTIONS = {o["name"].replace("-", "_"): o for o in _OPTIONS
                if o["convention"]}
# attn.attention's own names for conventions of the table: the gradient
# of the output, as FlashAttention and PyTorch call it.
_ALIASES = {"grad_out": "grad"}


# The names the call's arrays go by (attn_session_file), which a path
# given as a keyword's value must not be taken for.
_MEMORY_NAMES = {"q.npy", "k.npy", "v.npy", "results.npz"} | \
    {o["name"] + ".npy" for o in _OPTIONS}


def conventions():
    """The keywords attention, check and assert_close take, from attn's
    table of options: {keyword: (option, argument, help text)}."""
    return {k: ("--" + o["name"], o["arg"], o["help"])
            for k, o in _CONVENTIONS.items()}


def _text(v):
    """A number, word or sequence as attn reads it in an option."""
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, numpy.bool_)):
        raise TypeError
    if isinstance(v, (int, numpy.integer)):
        return str(int(v))
    if isinstance(v, (float, numpy.floating)):
        return repr(float(v))
    if isinstance(v, (list, tuple, numpy.ndarray)):
        return ",".join(_text(x) for x in numpy.asarray(v).reshape(-1)
                        .tolist())
    raise TypeError


def _shown(value):
    """A value in a message: one line, short."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 40 else text[:37] + "..."


def _words(conv, files):
    """conv (keyword: value) as attn's words; arrays into files."""
    words = []
    for key, value in conv.items():
        name = _ALIASES.get(key, key)
        o = _CONVENTIONS.get(name)
        if o is None and name.replace("_", "-") in \
                {x["name"] for x in _OPTIONS}:
            raise UsageError("attn: %s= is not a convention: the call "
                             "chooses it" % key)
        if o is None:		# attn's message, "did you mean" and all
            words.append("--" + name.replace("_", "-"))
            continue
        opt = "--" + o["name"]
        if value is None or value is False:
            continue
        if o["value"] == _native.OPTION_NONE or value is True:
            if value is not True:
                raise UsageError("attn: %s= takes True or False, not %s"
                                 % (key, _shown(value)))
            words.append(opt)
        elif o["value"] == _native.OPTION_FILE and \
                isinstance(value, (str, os.PathLike)):
            path = os.fspath(value)
            if path in _MEMORY_NAMES:	# a file, not the call's array
                path = os.path.join(".", path)
            words.append(opt + "=" + path)
        elif o["value"] == _native.OPTION_FILE and not \
                isinstance(value, (int, float)):
            path = o["name"] + ".npy"
            files.append(_npy_file(path, value))
            words.append(opt + "=" + path)
        else:
            try:
                words.append(opt + "=" + _text(value))
            except TypeError:
                raise UsageError("attn: %s= takes a number, a word or a "
                                 "list, not %s" % (key, _shown(value))) \
                    from None
    return words


def _stage_list(stages):
    if isinstance(stages, str):
        return stages
    return ",".join(stages)


def _operands(q, k, v, files):
    names = []
    for name, x in (("q", q), ("k", k), ("v", v)):
        path = name + ".npy"
        files.append(_npy_file(path, x))
        names.append(path)
    return names


# ---------------------------------------------------------------- calls

def attention(q, k, v, *, stages=("output", "lse"), layout=None,
              grad_out=None, max_memory=None, **conventions):
    files = []
    conv = dict(conventions)
    if layout is not None:
        conv["layout"] = layout
    if grad_out is not None:
        conv["grad_out"] = grad_out
    words = ["-f", "npz", "-s", _stage_list(stages)]
    words += _words(conv, files) + ["--"] + _operands(q, k, v, files)
    _, out, _ = _run(words, files, max_memory)
    return _npz_members(out)


Row = collections.namedtuple("Row", [
    "stage", "passed", "max_abs_error", "max_rel_error", "baseline",
    "worst", "hint", "why", "array", "details"])
Row.__doc__ = """One stage's verdict, as attn --check -f json gives it:
stage, passed, max_abs_error, max_rel_error, baseline (the emulated
baseline's error, None without --emulate), worst (the worst element),
hint (what a failure looks like, None), why (the failing test in words),
array (the name of the array checked), details (every field of attn's
JSON row)."""


class Verdict(list):
    """The rows of a check, a Row a stage checked, with .passed (attn's
    verdict, False when any row fails), .not_checked (each array given
    but not checked: {"array", "why", "near"}) and .table (the report
    attn prints, when asked for: assert_close)."""
    passed = True
    not_checked = ()
    table = None


def _check_run(results, q, k, v, rtol, atol, grad_out, max_memory,
               conventions, fmt):
    files = []
    conv = dict(conventions)
    for name, value in (("rtol", rtol), ("atol", atol),
                        ("grad_out", grad_out)):
        if value is not None:
            conv[name] = value
    files += _results_files(results)
    words = ["--check=results.npz"] + (["-f", fmt] if fmt else [])
    words += _words(conv, files) + ["--"] + _operands(q, k, v, files)
    return _run(words, files, max_memory, ok=(0, 1))


def check(results, q, k, v, *, rtol=None, atol=None, grad_out=None,
          max_memory=None, **conventions):
    _, out, _ = _check_run(results, q, k, v, rtol, atol, grad_out,
                           max_memory, conventions, "json")
    report = json.loads(out.tobytes().decode())
    rows = Verdict(Row(r["stage"], r["pass"], r.get("max_abs_error"),
                       r.get("max_rel_error"), r.get("baseline"),
                       r.get("worst"), r.get("hint"), r.get("why"),
                       r.get("array"), r) for r in report["stages"])
    rows.passed = report["pass"]
    rows.not_checked = report.get("not_checked", [])
    return rows


def assert_close(results, q, k, v, *, rtol=None, atol=None, grad_out=None,
                 max_memory=None, **conventions):
    rows = check(results, q, k, v, rtol=rtol, atol=atol,
                 grad_out=grad_out, max_memory=max_memory, **conventions)
    if not rows.passed:
        _, out, _ = _check_run(results, q, k, v, rtol, atol, grad_out,
                               max_memory, conventions, None)
        rows.table = out.tobytes().decode()
        raise AssertionError(rows.table)
    return rows


def cli_help():
    """attn --help: the synopsis and every option, as attn prints it."""
    return _run(["--help"], [], None)[1].tobytes().decode()


# attn --version's, the library's own (tools/version.sh's at its build).
__version__ = _run(["--version"], [], None)[1].tobytes().decode().split()[1]


def _conventions_doc():
    lines = []
    for key, o in _CONVENTIONS.items():
        arg = "True" if o["value"] == _native.OPTION_NONE else \
            "array or path" if o["value"] == _native.OPTION_FILE else \
            o["arg"]
        if o["words"]:
            arg += " (" + ", ".join(o["words"]) + ")"
        shown = key if key not in _ALIASES.values() else \
            [a for a, n in _ALIASES.items() if n == key][0]
        lines.append("    %s=%s    (--%s)" % (shown, arg, o["name"]))
        for h in o["help"].splitlines():
            lines.append("        " + h)
    return "\n".join(lines)


attention.__doc__ = """attention(q, k, v, *, stages=("output", "lse"),
layout=None, grad_out=None, max_memory=None, **conventions) -> dict

Attention softmax(Q K^T / sqrt(d_k)) V in float64 as attn computes it:
{stage: numpy float64 array} for each stage asked for, in the order
asked, shaped as attn's -f npy writes the stage for the layout and with
its bytes.  q, k, v: anything numpy.asarray takes (float16, float32,
float64; any strides; PyTorch CPU tensors), as attn's operands (2-D,
3-D packed with cu_seqlens_q, or 4-D in layout), handed to attn where
they lie: copied only when not contiguous, and float64 in C order read
in place, left as it was.  stages: a name, a
comma-separated list, "all", or a sequence of names (attn -s); the
backward ones want grad_out (dO, attn --grad).  max_memory: the run's
memory limit as ATTN_MAX_MEMORY reads it ("1G"); a run past it raises
MemoryLimitError before it starts.  Errors raise Error's subclasses
(UsageError, DataError, NoInputError, MemoryLimitError) with attn's
message; attn's warnings are warnings.warn(Warning_).

Conventions, attn's options (attn(1)) with - written _: a flag takes
True or False; an array option (FILE) an array or a path; the others a
number, a word, or a sequence (written comma-separated, window=(3, 0)).

""" + _conventions_doc()

check.__doc__ = """check(results, q, k, v, *, rtol=None, atol=None,
grad_out=None, max_memory=None, **conventions) -> Verdict

attn --check of a kernel's results ({name: array}, the names attn's
--check reads in a .npz: stage names, or FlashAttention's out, softmax_lse,
dq, dk, dv ...) against attn's run of q, k, v with the same conventions
as attention() takes (emulate="bf16" for an emulated baseline), the
results handed over where they lie as the members of results.npz: a
Verdict, the rows attn's report holds (Row: stage, passed, max_abs_error,
max_rel_error, baseline, worst, hint ...), with .passed and
.not_checked, the arrays given that no stage checked."""

assert_close.__doc__ = """assert_close(results, q, k, v, **as check) ->
Verdict

check(), for pytest: raises AssertionError whose message is the report
attn --check prints (its table, verdict and hints) when the check fails;
returns the rows otherwise."""
