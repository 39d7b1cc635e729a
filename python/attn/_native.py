"""libattn.so.0 through ctypes: the library found, its session API
(attn_session.h) declared, and one run of attn's words and in-memory
files.

ctypes rather than cffi: ctypes is Python's standard library, so the
module needs no package beyond python3-numpy and no compiler; cffi's ABI
mode would add python3-cffi for the same dozen foreign calls a run,
whose cost is small beside the run they start (the commit that chose
ctypes has the figures).  ctypes.CDLL releases the GIL for the length of
every foreign call, so another Python thread runs while libattn
computes.
"""
import ctypes
import os
import weakref

from ._soname import SONAME

_HERE = os.path.dirname(os.path.abspath(__file__))


def _library_path():
    """Where libattn is: ATTN_LIBRARY when set; the build tree's
    build/SONAME when this package is the source tree's python/attn;
    else the soname, as the dynamic loader finds it (installed)."""
    given = os.environ.get("ATTN_LIBRARY")
    if given:
        return given
    built = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "build",
                         SONAME)
    if os.path.exists(os.path.join(_HERE, "..", "..", "lib",
                                   "attn_session.h")) and \
            os.path.exists(built):
        return built
    return SONAME


class _About(ctypes.Structure):
    """struct attn_option_about."""
    _fields_ = [("name", ctypes.c_char_p), ("arg", ctypes.c_char_p),
                ("help", ctypes.c_char_p), ("value", ctypes.c_int),
                ("words", ctypes.POINTER(ctypes.c_char_p)),
                ("convention", ctypes.c_int)]


LIB = ctypes.CDLL(_library_path())
_P = ctypes.c_void_p
for _name, _res, _args in (
        ("attn_option_count", ctypes.c_size_t, []),
        ("attn_option_about", None, [ctypes.c_size_t,
                                     ctypes.POINTER(_About)]),
        ("attn_session_new", _P, []),
        ("attn_session_arg", ctypes.c_int, [_P, ctypes.c_char_p]),
        ("attn_session_file", ctypes.c_int, [_P, ctypes.c_char_p, _P,
                                             ctypes.c_size_t]),
        ("attn_session_npy", ctypes.c_int, [_P, ctypes.c_char_p,
                                            ctypes.c_char_p, ctypes.c_size_t,
                                            _P, ctypes.c_size_t]),
        ("attn_session_member", ctypes.c_int, [_P, ctypes.c_char_p,
                                               ctypes.c_char_p,
                                               ctypes.c_char_p,
                                               ctypes.c_size_t, _P,
                                               ctypes.c_size_t]),
        ("attn_session_max_memory", ctypes.c_int, [_P, ctypes.c_char_p]),
        ("attn_session_run", ctypes.c_int, [_P]),
        ("attn_session_output", _P, [_P, ctypes.POINTER(ctypes.c_size_t)]),
        ("attn_session_messages", ctypes.c_char_p, [_P]),
        ("attn_session_free", None, [_P])):
    _f = getattr(LIB, _name)
    _f.restype = _res
    _f.argtypes = _args

# What attn_option_about's value says an argument is.
OPTION_NONE, OPTION_TEXT, OPTION_FILE, OPTION_WORDS, OPTION_STAGES = range(5)


def options():
    """Every option of attn's table, as dicts (name, arg, help, value,
    words, convention), in the table's order."""
    out = []
    about = _About()
    for i in range(LIB.attn_option_count()):
        LIB.attn_option_about(i, ctypes.byref(about))
        words = []
        if about.words:
            j = 0
            while about.words[j] is not None:
                words.append(about.words[j].decode())
                j += 1
        out.append({"name": about.name.decode(),
                    "arg": about.arg.decode() if about.arg else None,
                    "help": about.help.decode(), "value": about.value,
                    "words": tuple(words),
                    "convention": bool(about.convention)})
    return out


def run(words, files=(), max_memory=None):
    """Run attn with words (its command line after "attn") and files
    read in place of the file names: (name, buffer), a NUL-ended NumPy
    buffer of a file's bytes, or (name, header, array), a .npy in two
    pieces, its header (bytes) and the C-contiguous array whose bytes are
    its data, read where they lie (float64 without a copy); or (name,
    member, header, array), such a .npy as member member.npy of the .npz
    name, the members of one name in order.  Returns
    (exit code, output as a NumPy uint8 array, the messages' text).  The
    output is the session's own memory, not a copy: the session is freed
    when the last array over it goes."""
    import numpy
    s = LIB.attn_session_new()
    if not s:
        raise MemoryError("attn: out of memory")
    owned = False
    try:
        keep = []
        for w in words:
            if LIB.attn_session_arg(s, w.encode() if w.isascii() else
                                    os.fsencode(w)) != 0:
                raise MemoryError("attn: out of memory")
        for f in files:
            keep.append(f)
            if len(f) == 2:
                rc = LIB.attn_session_file(s, f[0].encode(),
                                           f[1].ctypes.data, f[1].size - 1)
            elif len(f) == 3:
                rc = LIB.attn_session_npy(
                    s, f[0].encode(), f[1], len(f[1]),
                    f[2].__array_interface__["data"][0], f[2].nbytes)
            else:
                rc = LIB.attn_session_member(
                    s, f[0].encode(), f[1].encode(), f[2], len(f[2]),
                    f[3].__array_interface__["data"][0], f[3].nbytes)
            if rc != 0:
                raise MemoryError("attn: out of memory")
        if max_memory is not None and LIB.attn_session_max_memory(
                s, str(max_memory).encode()) != 0:
            raise MemoryError("attn: out of memory")
        code = LIB.attn_session_run(s)
        msg = LIB.attn_session_messages(s).decode("utf-8", "replace")
        n = ctypes.c_size_t()
        p = LIB.attn_session_output(s, ctypes.byref(n))
        if n.value == 0:
            return code, numpy.empty(0, numpy.uint8), msg
        # the ctypes array is the last base of every view of the output
        raw = (ctypes.c_uint8 * n.value).from_address(p)
        weakref.finalize(raw, LIB.attn_session_free, s)
        out = numpy.ctypeslib.as_array(raw)
        owned = True
        return code, out, msg
    finally:
        if not owned:
            LIB.attn_session_free(s)
