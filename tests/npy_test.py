"""npy_test.py ATTN - attn's .npy reader and writer against NumPy's.

Run by tests/npy.sh with an interpreter that has NumPy.  Each check
prints one line; the run fails when any check fails.

- Reading: arrays that numpy.save (and numpy.lib.format.write_array, for
  header versions 2.0 and 3.0) wrote, of every dtype attn reads in both
  byte orders, 1- to 4-D, come back bit for bit.  attn echoes an array
  through a computation that is exact: with Q and K zero, --no-scale and
  the array as --bias, the `scaled` stage is the array itself.
- attn-kernels(7), "From Python": its first script writes the inputs in
  data/examples/kernel/ byte for byte, the output of its kernel, as this
  NumPy computes it, passes `attn --check --emulate fp32`, and its dK
  passes `attn --grad --check -s grad_k`.
- Writing: numpy.load reads attn's -f npy output with the shape and dtype
  attn(1) gives (B x H x T x S for per-head stages, output B x T x H*d_v,
  levels of one left out), equal to attn's shortest-round-trip CSV of the
  same stage, and --npy-dtype f4 equal to that rounded to float32.  The
  file is byte for byte what numpy.save writes for the array it holds
  (NumPy >= 1.24, whose header has room for the first dim to grow).
- -f npz: numpy.load reads the archive of several stages (4-D inputs in
  both layouts with --grad, and --npy-dtype f4, and -s all) with the
  stages as its arrays, in the order -s lists them, each stored (as
  numpy.savez stores them) and equal byte for byte to the -f npy file
  of that stage alone, its dtype and shape too.
- The man page's Python reads -f csv with numpy.loadtxt, one stage a
  call and several split at their comment lines, and gets the stages
  -f json gives; numpy.loadtxt refuses two stages of other widths.
- -o FILE.txt is numbers only, a space apart, as numpy.savetxt writes:
  numpy.loadtxt and attn --check read back the stage -f json gives.
- A .npz given as an operand is refused with a numpy.save command that,
  run as printed, saves its first array as a .npy attn reads: names with
  commas, quotes and an ESC, long ones, and a path through a directory.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from numpy.lib import format as npformat

ATTN = sys.argv[1]
failed = 0
passed = 0


def check(ok, what):
    global failed, passed
    if ok:
        passed += 1
    else:
        failed += 1
        print('FAIL ' + what)


def attn(*args):
    r = subprocess.run([ATTN] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, cwd=work)
    if r.returncode != 0:
        raise RuntimeError('attn %s: status %d: %s' % (
            ' '.join(args), r.returncode, r.stderr.decode()))
    return r.stdout


def csv_of(*args):
    """attn's csv output for args, as an array."""
    return np.array([[float(x) for x in line.split(',')]
                     for line in attn(*args).decode().splitlines()])


def same_bits(a, b):
    a = np.ascontiguousarray(a, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def path(name):
    return os.path.join(work, name)


def save(name, a, version=None):
    with open(path(name), 'wb') as f:
        npformat.write_array(f, a, version=version)


work = tempfile.mkdtemp(prefix='attn-npy-')
rng = np.random.default_rng(10)

# ------------------------------------------------------------ reading

# Values that lose something when mishandled: subnormals, the extremes,
# all 53 bits, and -inf (which a bias may hold); -0 reads as -0 (the unit
# tests show it), but the echo below turns it into 0.
special = np.array([1 / 3, -0.0, 5e-324, 2.2250738585072014e-308,
                    1.7976931348623157e308, -2.5, 0.1, -np.inf])


def zeros_for(shape):
    """Zero Q, K and V (d_k = d_v = 1 a head) for a bias of this shape:
    1 x S as one row, T x S, B x T x S, or B x H x T x S with H heads;
    and the --heads it needs."""
    if len(shape) == 1:
        shape = (1,) + shape
    heads = shape[1] if len(shape) == 4 else 1
    b = shape[:1] if len(shape) >= 3 else ()
    t, s = shape[-2], shape[-1]
    save('zq.npy', np.zeros(b + (t, heads)))
    save('zk.npy', np.zeros(b + (s, heads)))
    save('zv.npy', np.zeros(b + (s, heads)))
    return ['--heads', str(heads)]


for dtype in ('<f8', '<f4', '<f2', '>f8', '>f4', '>f2'):
    for version in ((1, 0), (2, 0), (3, 0)):
        for shape in ((8,), (2, 4), (2, 2, 2), (1, 2, 2, 2)):
            values = special.copy()
            values[4] = np.finfo(np.dtype(dtype)).max   # a bias is < inf
            a = values.reshape(shape).astype(dtype)
            save('in.npy', a, version)
            attn('--no-scale', '--bias', 'in.npy', '-s', 'scaled', '-f',
                 'npy', '-o', 'out.npy', *zeros_for(shape),
                 'zq.npy', 'zk.npy', 'zv.npy')
            got = np.load(path('out.npy'))
            # The echo adds each value to a score of 0, which makes -0
            # 0; one row is 1 x S; a batch of one is left out.
            want = a.astype(np.float64) + 0.0
            if len(shape) == 1:
                want = want.reshape(1, -1)
            if len(shape) == 4:
                want = want.reshape(shape[1:])
            check(same_bits(got, want), 'read %s version %d.0 shape %s: '
                  'got %r, want %r' % (dtype, version[0], shape, got, want))

# ------------------------------------------------------------ writing

q = rng.standard_normal((2, 3, 8))      # B x T x H*d_k, H = 2
k = rng.standard_normal((2, 5, 4))      # B x S x G*d_k, G = 1
v = rng.standard_normal((2, 5, 6))      # B x S x G*d_v
for name, a in (('q.npy', q), ('k.npy', k), ('v.npy', v)):
    np.save(path(name), a)
common = ['--heads', '2', '--kv-heads', '1', 'q.npy', 'k.npy', 'v.npy']
shapes = {'scores': (2, 2, 3, 5), 'scaled': (2, 2, 3, 5),
          'weights': (2, 2, 3, 5), 'lse': (2, 2, 3, 1),
          'mask': (2, 2, 3, 5), 'output': (2, 3, 12)}
for stage, shape in shapes.items():
    attn('-s', stage, '-f', 'npy', '-o', stage + '.npy', *common)
    with open(path(stage + '.npy'), 'rb') as f:
        raw = f.read()
    got = np.load(path(stage + '.npy'))
    lines = attn('-s', stage, '-f', 'csv', *common).decode().splitlines()
    # a stacked stage's dims, on the comment line before its blocks
    check(lines[0] == '# %s %s' % (stage, 'x'.join(map(str, shape))),
          '%s: the csv starts %r, not its dims' % (stage, lines[0]))
    csv = np.array([[float(x) for x in line.split(',')]
                    for line in lines[1:]])
    check(got.dtype == np.float64 and got.shape == shape,
          '%s: numpy.load gives %s %s, want float64 %s' % (
              stage, got.dtype, got.shape, shape))
    check(same_bits(got.reshape(-1, got.shape[-1]), csv),
          '%s: the .npy differs from the csv of the same stage' % stage)
    b = tempfile.SpooledTemporaryFile()
    np.save(b, got)
    b.seek(0)
    if np.lib.NumpyVersion(np.__version__) >= '1.24.0':
        check(b.read() == raw, '%s: not byte for byte what numpy.save '
              'writes' % stage)
    attn('-s', stage, '-f', 'npy', '--npy-dtype', 'f4', '-o', 'f4.npy',
         *common)
    got4 = np.load(path('f4.npy'))
    check(got4.dtype == np.float32 and got4.shape == shape and
          np.array_equal(got4, got.astype(np.float32)),
          '%s: --npy-dtype f4 is not the float64 result as float32' % stage)

# More values than the writer puts in one fwrite (1024 float64, 2048
# float32): attn gen's 3000 x 3 and 100 x 100 weights, whole and in
# order, as their csv says.
attn('gen', '3000x3', '--seed', '5', '-f', 'npy', '-o', 'gen.npy')
check(same_bits(np.load(path('gen.npy')),
                csv_of('gen', '3000x3', '--seed', '5', '-f', 'csv')),
      'attn gen 3000x3 -f npy differs from its csv')
# attn gen of 3 and 4 dims: numpy.load gives the array's shape, and its
# numbers are those of the 2-D gen of its rows (24x8 for 2x4x3x8) in C
# order, in npy, in json, and in the stacked csv that numpy.loadtxt reads
# past its "# gen DIMS" line.
for shape in ((2, 4, 3, 8), (3, 2, 5)):
    dims = 'x'.join(str(d) for d in shape)
    flat = '%dx%d' % (int(np.prod(shape[:-1])), shape[-1])
    want = csv_of('gen', flat, '--seed', '11', '-f', 'csv').reshape(shape)
    attn('gen', dims, '--seed', '11', '-o', 'nd.npy')
    got = np.load(path('nd.npy'))
    check(same_bits(got, want), 'attn gen %s -f npy is not gen %s '
          'reshaped' % (dims, flat))
    got = np.array(json.loads(attn('gen', dims, '--seed', '11', '-f',
                                   'json')))
    check(same_bits(got, want), 'attn gen %s -f json is not gen %s '
          'reshaped' % (dims, flat))
    attn('gen', dims, '--seed', '11', '-o', 'nd.csv')
    got = np.loadtxt(path('nd.csv'), delimiter=',', ndmin=2)
    check(same_bits(got.reshape(shape), want), 'numpy.loadtxt of attn gen '
          '%s -o nd.csv is not gen %s' % (dims, flat))
np.save(path('x.npy'), rng.standard_normal((100, 2)))
want = csv_of('--self', 'x.npy', '-s', 'weights', '-f', 'csv')
for dtype, flag in ((np.float64, 'f8'), (np.float32, 'f4')):
    attn('--self', 'x.npy', '-s', 'weights', '-f', 'npy', '--npy-dtype',
         flag, '-o', 'w.npy')
    got = np.load(path('w.npy'))
    check(got.dtype == dtype and
          np.array_equal(got, want.astype(dtype)),
          '100 x 100 weights as %s differ from their csv' % flag)

# ------------------------------------------------------------ layouts

# 4-D inputs as PyTorch (B x H x S x D) and FlashAttention (B x S x H x D)
# lay them out, with grouped-query heads, a key-padding mask B x 1 x 1 x S
# and a bias 1 x H x T x S broadcast as NumPy does: output in the layout
# it came in, weights B x H x T x S, and with a 4-D dO the gradients of
# Q, K and V laid out as those, against a float64 reference here.
B, H, G, T, S, DK, DV = 2, 4, 2, 3, 5, 8, 6
q = rng.standard_normal((B, H, T, DK))
k = rng.standard_normal((B, G, S, DK))
v = rng.standard_normal((B, G, S, DV))
pad = np.ones((B, 1, 1, S), dtype=bool)
pad[1, 0, 0, 3:] = False
bias = rng.standard_normal((1, H, T, S))
kk = np.repeat(k, H // G, axis=1)
vv = np.repeat(v, H // G, axis=1)
logits = q @ kk.transpose(0, 1, 3, 2) / np.sqrt(DK) + bias
logits = np.where(pad, logits, -np.inf)
w_ref = np.exp(logits - logits.max(-1, keepdims=True))
w_ref /= w_ref.sum(-1, keepdims=True)
out_ref = w_ref @ vv
# The backward pass for an upstream gradient d_out shaped like output:
# dS = P * (dP - rowsum(dO * O)); the KV heads' gradients add up over the
# query heads that share them.
d_out = rng.standard_normal((B, H, T, DV))
d_s = w_ref * (d_out @ vv.transpose(0, 1, 3, 2) -
               (d_out * out_ref).sum(-1, keepdims=True))
grad_ref = {
    'grad_q': d_s @ kk / np.sqrt(DK),
    'grad_k': (d_s.transpose(0, 1, 3, 2) @ q / np.sqrt(DK))
    .reshape(B, G, H // G, S, DK).sum(2),
    'grad_v': (w_ref.transpose(0, 1, 3, 2) @ d_out)
    .reshape(B, G, H // G, S, DV).sum(2),
}
np.save(path('pad.npy'), pad.astype(np.float64))
np.save(path('bias.npy'), bias)
for layout, perm in (('bhsd', (0, 1, 2, 3)), ('bshd', (0, 2, 1, 3))):
    for name, a in (('q', q), ('k', k), ('v', v), ('do', d_out)):
        np.save(path('%s-%s.npy' % (name, layout)), a.transpose(perm))
    files = ['q-%s.npy' % layout, 'k-%s.npy' % layout, 'v-%s.npy' % layout]
    opts = ['--layout', layout, '-m', 'pad.npy', '--bias', 'bias.npy']
    attn(*(opts + ['-s', 'output', '-f', 'npy', '-o', 'out.npy'] + files))
    attn(*(opts + ['-s', 'weights', '-f', 'npy', '-o', 'w.npy'] + files))
    got = np.load(path('out.npy'))
    want = out_ref.transpose(perm)
    check(got.shape == want.shape and np.allclose(got, want, rtol=1e-12,
                                                  atol=1e-14),
          '%s: output %s, want %s like the inputs; largest difference %g'
          % (layout, got.shape, want.shape,
             np.abs(got - want).max() if got.shape == want.shape else 0))
    got = np.load(path('w.npy'))
    check(got.shape == w_ref.shape and np.allclose(got, w_ref, rtol=1e-12,
                                                   atol=1e-14),
          '%s: weights %s, want B x H x T x S %s' % (layout, got.shape,
                                                    w_ref.shape))
    # dO 4-D as output is; grad_q, grad_k, grad_v laid out as Q, K, V.
    for stage, want in grad_ref.items():
        attn(*(opts + ['--grad', 'do-%s.npy' % layout, '-s', stage, '-f',
                       'npy', '-o', 'g.npy'] + files))
        got = np.load(path('g.npy'))
        want = want.transpose(perm)
        check(got.shape == want.shape and
              np.allclose(got, want, rtol=1e-11, atol=1e-13),
              '%s: %s %s, want %s like its input' % (
                  layout, stage, got.shape, want.shape))

# ------------------------------------------------------------ npz

# -f npz (by -o's extension) in both layouts with a mask, a bias and
# GQA: numpy.load gives the stages of -s, in that order, each member
# stored and the very bytes of the -f npy file of that stage alone (the
# forward stages, the backward ones in Q's, K's and V's layouts, f8 and
# f4); -s all likewise, with every stage the run offers.
import zipfile  # noqa: E402
for layout in ('bhsd', 'bshd'):
    files = ['q-%s.npy' % layout, 'k-%s.npy' % layout, 'v-%s.npy' % layout]
    opts = ['--layout', layout, '-m', 'pad.npy', '--bias', 'bias.npy',
            '--grad', 'do-%s.npy' % layout]
    for stages, dtype in (('output,lse,grad_q,grad_k,grad_v', []),
                          ('grad_v,weights,grad_q,grad_k', ['--npy-dtype',
                                                            'f4']),
                          ('all', [])):
        what = '%s -s %s %s' % (layout, stages, ' '.join(dtype))
        attn(*(opts + dtype + ['-s', stages, '-o', 'g.npz'] + files))
        with np.load(path('g.npz')) as z, \
                zipfile.ZipFile(path('g.npz')) as zf:
            names = z.files
            want = stages.split(',')
            if stages == 'all':
                want = [ln[2:].split(' ')[0] for ln in
                        attn(*(opts + ['-s', 'all', '-f', 'csv'] + files))
                        .decode().splitlines() if ln.startswith('# ')]
            check(names == want, '%s: numpy.load finds %r, want %r' % (
                what, names, want))
            for name in names:
                attn(*(opts + dtype + ['-s', name, '-f', 'npy', '-o',
                                       'one.npy'] + files))
                one = np.load(path('one.npy'))
                got = z[name]
                check(got.dtype == one.dtype and got.shape == one.shape and
                      got.tobytes() == one.tobytes(),
                      '%s: %s is %s %s, not the -f npy file\'s %s %s' % (
                          what, name, got.dtype, got.shape, one.dtype,
                          one.shape))
                with open(path('one.npy'), 'rb') as f:
                    check(zf.read(name + '.npy') == f.read(),
                          '%s: member %s.npy is not the bytes of -f npy' % (
                              what, name))
                check(zf.getinfo(name + '.npy').compress_type ==
                      zipfile.ZIP_STORED, '%s: %s.npy is compressed, not '
                      'stored as numpy.savez stores it' % (what, name))

# ------------------------------------------------------------ attn-kernels(7)

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(top, 'man', 'attn-kernels.7')) as f:
    page = f.read()
# The literal block after the comment that names this test, its roff
# escapes (\e a backslash, \& nothing) read as Python.
section = page[page.index('tests/npy_test.py runs this script'):]
script = section[section.index('.Bd -literal -offset indent\n') + 28:]
script = script[:script.index('\n.Ed')]
script = script.replace('\\e', '\\').replace('\\&', '')
kdir = os.path.join(work, 'kernel')
os.mkdir(kdir)
subprocess.run([sys.executable, '-c', script], cwd=kdir, check=True)
for name in ('q.npy', 'k.npy', 'v.npy', 'do.npy'):
    with open(os.path.join(kdir, name), 'rb') as f:
        mine = f.read()
    with open(os.path.join(top, 'data', 'examples', 'kernel', name),
              'rb') as f:
        kept = f.read()
    check(mine == kept, 'attn-kernels(7): its script writes another %s than '
          'data/examples/kernel/ holds' % name)
r = subprocess.run([ATTN, '--check', 'out.npy', '--emulate', 'fp32',
                    'q.npy', 'k.npy', 'v.npy'], cwd=kdir,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
check(r.returncode == 0, 'attn-kernels(7): the kernel of its script fails: %s%s' %
      (r.stdout.decode(), r.stderr.decode()))
r = subprocess.run([ATTN, '--grad', 'do.npy', '--check', 'dk.npy', '-s',
                    'grad_k', '--rtol', '1e-4', '--atol', '1e-6', 'q.npy',
                    'k.npy', 'v.npy'], cwd=kdir, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE)
check(r.returncode == 0, 'attn-kernels(7): the dK of its script fails: %s%s' %
      (r.stdout.decode(), r.stderr.decode()))

# ------------------------------------------------------------ man page

# The man page's Python that reads -f csv with numpy.loadtxt, run as it
# stands, from the top of the tree with this attn first on PATH: one
# stage a call, a stack reshaped to the dims of its comment, and several
# stages split at their comment lines, each equal to the stage as JSON.
# numpy.loadtxt on several stages at once fails, as the page says.
with open(os.path.join(top, 'man', 'attn.1')) as f:
    man = f.read()
start = man.index('.Bd -literal -offset indent\nimport subprocess\n')
script = man[man.index('\n', start) + 1:man.index('\n.Ed\n', start) + 1]
script = script.replace('\\e', '\\').replace('\\&', '')
bindir = os.path.join(work, 'bin')
os.mkdir(bindir)
os.symlink(ATTN, os.path.join(bindir, 'attn'))
saved_path, saved_cwd = os.environ.get('PATH', ''), os.getcwd()
os.environ['PATH'] = bindir + os.pathsep + saved_path
os.chdir(top)
ns = {}
try:
    exec(compile(script, 'man/attn.1', 'exec'), ns)
finally:
    os.environ['PATH'] = saved_path
    os.chdir(saved_cwd)
two_heads = os.path.join(top, 'data', 'examples', 'two-heads.json')
apple = os.path.join(top, 'data', 'examples', 'apple-cheese.json')
want = np.array(json.loads(attn('-s', 'weights', '-f', 'json', '--heads',
                                '2', two_heads)))
check(same_bits(ns['w'], want), 'man page: numpy.loadtxt of a stack '
      'gives %r, not the weights %r' % (ns['w'], want))
want = json.loads(attn('-s', 'scaled,lse', '-f', 'json', apple))
check(sorted(ns['stages']) == sorted(want) and
      all(same_bits(ns['stages'][k], np.array(want[k])) for k in want),
      'man page: the stages split at their comments are %r, not %r' % (
          ns['stages'], want))
try:
    np.loadtxt(attn('-s', 'scaled,lse', '-f', 'csv', apple).decode()
               .splitlines(), delimiter=',')
    check(False, 'man page: numpy.loadtxt reads two stages of another '
          'width at once, which the page says it refuses')
except ValueError:
    check(True, '')

# ------------------------------------------------------------ -o FILE.txt

# Without -f, -o FILE.txt writes whitespace text as numpy.savetxt does:
# numbers only (a stack under its "# NAME DIMS" comment, which loadtxt
# skips), which numpy.loadtxt reads back bit for bit, the -inf of a
# causal mask too, and attn too (--check of the same stage finds no
# difference at all).
for stage, opts in (('weights', ['--heads', '2']), ('output', ['--heads',
                    '2']), ('scaled', ['--causal']), ('lse', [])):
    what = '-o r.txt -s %s %s' % (stage, ' '.join(opts))
    attn(*(['-s', stage, '-o', 'r.txt'] + opts + [two_heads]))
    with open(path('r.txt')) as f:
        lines = [x for x in f.read().splitlines() if not x.startswith('#')]
    try:
        numbers_only = all(float(t) == float(t) or t == 'nan'
                           for x in lines for t in x.split(' '))
    except ValueError:
        numbers_only = False
    check(numbers_only, '%s: not numbers only, a space apart' % what)
    want = np.array(json.loads(attn(*(['-s', stage, '-f', 'json'] + opts +
                                      [two_heads]))), dtype=np.float64)
    try:
        got = np.loadtxt(path('r.txt'), ndmin=2)
    except ValueError as e:
        got = e
    check(isinstance(got, np.ndarray) and got.size == want.size and
          same_bits(got, want.reshape(got.shape)),
          '%s: numpy.loadtxt reads %r, not %r' % (what, got, want))
    r = subprocess.run([ATTN, '--check', 'r.txt', '-s', stage] + opts +
                       [two_heads], cwd=work, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    check(r.returncode == 0 and b'max abs error   0\n' in r.stdout,
          '%s: attn --check reads it back as another stage: %s%s' % (
              what, r.stdout.decode(), r.stderr.decode()))

# A single problem: no batch or head level.
attn('-s', 'weights', '-f', 'npy', '-o', 'w.npy', '--self', 'zq.npy')
check(np.load(path('w.npy')).shape == (2, 2), 'one problem: weights '
      'are not 2-D')

# ------------------------------------------------------------ .npz operands

# A .npz given where one array goes is refused (65) with a numpy.save
# command: run as printed, in the directory attn ran in, it saves the
# archive's first array, which attn then reads.  Names that a cut or a
# quote would break: a long one, a comma, a quote in the file's name and
# in the array's, an ESC, a path through a directory.
os.makedirs(path('a long directory name, with a comma'), exist_ok=True)
for archive, names in (
        ('long.npz', ['model.layers.0.self_attn.q_proj.weight', 'k']),
        ('commas.npz', ['a,b', 'c']),
        ("it's.npz", ["the array's", 'k']),
        ('esc.npz', ['x\x1b[31m']),
        ('a long directory name, with a comma/x.npz', ['inner'])):
    first = rng.standard_normal((3, 2))
    np.savez(path(archive), **dict((n, first if i == 0 else first * 2)
                                   for i, n in enumerate(names)))
    r = subprocess.run([ATTN, '--self', archive], cwd=work,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = r.stderr.decode()
    check(r.returncode == 65 and r.stdout == b'' and
          err.count('\n') == 1 and ', e.g. numpy.save(' in err,
          '%s as an operand: status %d, %r' % (archive, r.returncode, err))
    command = err.rstrip('\n').split(', e.g. ', 1)[-1]
    saved = set(os.listdir(work))
    cwd = os.getcwd()
    os.chdir(work)
    try:
        exec(command, {'numpy': np})
        ran = None
    except Exception as e:
        ran = e
    os.chdir(cwd)
    new = sorted(set(os.listdir(work)) - saved)
    check(ran is None and len(new) == 1 and
          same_bits(np.load(path(new[0])), first),
          '%s: %r did not save its first array: %r' % (archive, command,
                                                       ran))
    if len(new) == 1:
        np.save(path('first.npy'), first)
        check(same_bits(csv_of('-s', 'weights', '-f', 'csv', '--self',
                               new[0]),
                        csv_of('-s', 'weights', '-f', 'csv', '--self',
                               'first.npy')),
              '%s: attn does not read %s as the array' % (archive, new[0]))
        os.remove(path(new[0]))

print('npy: %d passed, %d failed (numpy %s)' % (passed, failed,
                                               np.__version__))
sys.exit(1 if failed else 0)
