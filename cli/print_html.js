/*
 * print_html.js - the script of the -f html page (print_html.c writes it
 * into the page, which stays standalone): each number's arithmetic on
 * hover and focus, and the workbench.
 *
 * The workbench recomputes the kernel in double precision from what the
 * page embeds (#attn-data: Q, K, V, mask and bias of each block as the
 * run read them, as the shortest text that reads back to each double),
 * in the order of operations of the kernel that made the page
 * (lib/kernel_stream.c): scores, * scale, softcap, + bias, + ALiBi,
 * masks, then the online softmax over blocks of keys.  JavaScript has
 * no fma and an exp of its own, so a number may differ from attn's in
 * its last bit, which the printed digits do not show.  It then writes the
 * tables, colours, statistics, check line and arithmetic again as attn
 * writes them: formatNumber is attn_format_number, the arith* functions
 * are print_arith.c's lines, colour is heatmap_rgb, statistics are
 * print_stats.c's.  tests/visual/html-bench.py holds the two to the same
 * text: for each control it compares the page with attn's own page for
 * the same options.  Texts that C words and the causal control changes
 * come in data-c0 and data-c1 attributes; those the scale changes are
 * written here (scaleLine).
 *
 * The page as attn wrote it is the run's state; nothing is rewritten
 * until a control moves.
 */
(function () {
  'use strict';

  /* ------------------------------------------------- the arithmetic panel */

  var workText = document.getElementById('work-text');
  var current = null;

  function showArith(cell) {
    if (current) current.classList.remove('current');
    current = cell;
    cell.classList.add('current');
    workText.textContent = cell.getAttribute('data-a');
  }

  function onPoint(event) {
    var cell = event.target.closest ? event.target.closest('[data-a]') :
        null;
    if (cell) showArith(cell);
  }
  document.addEventListener('mouseover', onPoint);
  document.addEventListener('focusin', onPoint);

  /* --------------------------------------------------- stepping through */

  var form = document.getElementById('bench');
  if (!form) return;
  form.hidden = false;

  var stepper = document.getElementById('stepper');
  var stepWhere = document.getElementById('step-where');
  var stepsButton = document.getElementById('ctl-steps');
  var stepping = false, stepAt = 0;

  function stepSections() {
    return Array.prototype.filter.call(
        document.querySelectorAll('main > section'),
        function (s) { return !s.hidden; });
  }

  /* Show stage stepAt alone (the stages the page shows now: the causal
   * control can add the mask). */
  function showStep() {
    var list = stepSections();
    if (stepAt >= list.length) stepAt = list.length - 1;
    if (stepAt < 0) stepAt = 0;
    list.forEach(function (s, k) { s.classList.toggle('off', k !== stepAt); });
    stepWhere.textContent = 'stage ' + (stepAt + 1) + ' of ' + list.length +
        ': ' + list[stepAt].id;
  }

  function step(by) {
    stepAt += by;
    showStep();
    window.scrollTo(0, stepper.offsetTop);
  }

  function setStepping(on) {
    stepping = on;
    document.body.classList.toggle('steps', on);
    stepper.hidden = !on;
    stepsButton.setAttribute('aria-pressed', on ? 'true' : 'false');
    if (on) {
      stepAt = 0;
      showStep();
      document.getElementById('step-next').focus();
      window.scrollTo(0, stepper.offsetTop);
    } else {
      stepSections().forEach(function (s) { s.classList.remove('off'); });
      stepsButton.focus();
    }
  }

  stepsButton.addEventListener('click', function () { setStepping(!stepping); });
  document.getElementById('step-prev').addEventListener('click',
      function () { step(-1); });
  document.getElementById('step-next').addEventListener('click',
      function () { step(1); });
  document.getElementById('step-exit').addEventListener('click',
      function () { setStepping(false); });

  /* Keys that a focused control does not use itself. */
  function forControl(t) {
    return t.tagName === 'SELECT' || t.tagName === 'TEXTAREA' ||
        (t.tagName === 'INPUT' && t.type === 'range');
  }

  var onKey = null;	/* the workbench's keys, when it runs */
  document.addEventListener('keydown', function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || forControl(e.target)) return;
    if (stepping) {
      if (e.key === 'ArrowRight' || e.key === 'PageDown') step(1);
      else if (e.key === 'ArrowLeft' || e.key === 'PageUp') step(-1);
      else if (e.key === 'Escape') setStepping(false);
      else if (!onKey || !onKey(e)) return;
      e.preventDefault();
    } else if (onKey && onKey(e)) {
      e.preventDefault();
    }
  });

  var dataNode = document.getElementById('attn-data');
  if (!dataNode) return;	/* the controls are off: the note says why */

  /* ------------------------------------------------------------ numbers */

  var EXP = /^(\d)(?:\.(\d+))?e([+-]\d+)$/;

  /* The digits and exponent of a number's toExponential text. */
  function parts(s) {
    var m = EXP.exec(s);
    return { d: m[1] + (m[2] || ''), e: +m[3] };
  }

  /* a (finite, > 0) as m * 2^k, m a BigInt. */
  function binary(a) {
    var v = new DataView(new ArrayBuffer(8));
    v.setFloat64(0, a);
    var hi = v.getUint32(0), ex = (hi >>> 20) & 0x7ff;
    var m = (BigInt(hi & 0xfffff) << 32n) | BigInt(v.getUint32(4));
    if (ex === 0) ex = 1;
    else m |= 1n << 52n;
    return { m: m, k: ex - 1075 };
  }

  /* Whether a (finite, > 0) is exactly N * 10^E. */
  function exactly(a, N, E) {
    var f = binary(a), l = N, r = f.m;
    if (E >= 0) l *= 10n ** BigInt(E);
    else r *= 10n ** BigInt(-E);
    if (f.k >= 0) r <<= BigInt(f.k);
    else l <<= BigInt(-f.k);
    return l === r;
  }

  /* The p + 1 significant digits of |x| and the exponent of the first,
   * rounded as C's printf rounds: to nearest, ties to even
   * (toExponential breaks a tie upwards). */
  function digitsOf(x, p) {
    var a = Math.abs(x), r = parts(a.toExponential(p)), t, down;
    if (a === 0) return r;
    t = parts(a.toExponential(p + 1));
    if (t.d.charAt(p + 1) === '5' && exactly(a, BigInt(t.d), t.e - p - 1)) {
      down = t.d.slice(0, p + 1);
      if (+down.charAt(p) % 2 === 0) return { d: down, e: t.e };
    }
    return r;
  }

  function zeros(n) { return n > 0 ? new Array(n + 1).join('0') : ''; }

  function expText(X) {
    return 'e' + (X < 0 ? '-' : '+') + (Math.abs(X) < 10 ? '0' : '') +
        Math.abs(X);
  }

  function negative(x) { return x < 0 || (x === 0 && 1 / x < 0); }

  /* digits 0: the shortest digits that read back, laid out as %g lays
   * them out with a precision of max(15, their count). */
  function shortest(x) {
    var r = parts(Math.abs(x).toExponential()), d = r.d, X = r.e, s;
    if (X < -4 || X >= Math.max(15, d.length))
      s = d.charAt(0) + (d.length > 1 ? '.' + d.slice(1) : '') + expText(X);
    else if (X < 0)
      s = '0.' + zeros(-X - 1) + d;
    else if (d.length <= X + 1)
      s = d + zeros(X + 1 - d.length);
    else
      s = d.slice(0, X + 1) + '.' + d.slice(X + 1);
    return (negative(x) ? '-' : '') + s;
  }

  /* attn_format_number: x with digits significant digits (0: shortest),
   * %.*g, or with fixed (ATTN_NUM_FIXED) %#.*g with integers plain and
   * no bare point. */
  function formatNumber(x, digits, fixed) {
    var r, d, X, s;
    if (isNaN(x)) return 'nan';
    if (x === Infinity) return 'inf';
    if (x === -Infinity) return '-inf';
    if (digits <= 0) return shortest(x);
    if (digits > 17) digits = 17;
    if (fixed && x === Math.floor(x) && Math.abs(x) < Number('1e' + digits))
      return (x + 0).toFixed(0);
    r = digitsOf(x, digits - 1);
    d = r.d;
    X = r.e;
    if (X < -4 || X >= digits)
      s = d.charAt(0) + '.' + d.slice(1) + expText(X);
    else if (X < 0)
      s = '0.' + zeros(-X - 1) + d;
    else
      s = d.slice(0, X + 1) + '.' + d.slice(X + 1);
    s = fixed ? s.replace(/\.(?=e|$)/, '') : s.replace(/\.?0*(?=e|$)/, '');
    return (negative(x) ? '-' : '') + s;
  }

  /* ------------------------------------------------------------- inputs */

  var D = JSON.parse(dataNode.textContent);
  var T = D.T, S = D.S;

  function value(v) {
    return typeof v === 'number' ? v : v === '-inf' ? -Infinity :
        v === 'inf' ? Infinity : NaN;
  }
  function matrix(m) {
    return m === null ? null : m.map(function (row) { return row.map(value); });
  }
  D.scale = value(D.scale);
  D.softcap = value(D.softcap);
  if (D.alibi) D.alibi = matrix(D.alibi);
  if (D.sinks) D.sinks = D.sinks.map(value);
  D.blocks.forEach(function (b) {
    ['q', 'k', 'v', 'mask', 'bias'].forEach(function (m) { b[m] = matrix(b[m]); });
  });
  var blockOf = {};	/* "batch,head" to its block */
  D.blocks.forEach(function (b, n) { blockOf[b.b + ',' + b.h] = n; });

  /* ------------------------------------------------------------- kernel */

  /* Row i's keys [k0, k1) and its position against key j's j - k0
   * (attn_row_place: its packed sequence, its keys in use). */
  function place(B, i) { return D.place[B.b][i]; }

  /* attn_keeps: whether query i may attend key j. */
  function keeps(B, i, j, causal) {
    var P = place(B, i), pq = P[2], pk = j - P[0];
    if (j < P[0] || j >= P[1]) return false;
    if (causal && pk > pq) return false;
    if (D.window && ((pq > pk && pq - pk > D.window[0]) ||
        (pk > pq && pk - pq > D.window[1])))
      return false;
    if (B.mask && (B.mask[i][j] !== 0) === (D.invert !== 0)) return false;
    return true;
  }

  function table(rows, cols) {
    var m = [], i;
    for (i = 0; i < rows; i++) m.push(new Array(cols).fill(0));
    return m;
  }

  /* Keys of a block of the streaming kernel, which decides where its
   * online softmax rescales (BLOCK_KEYS in lib/kernel_stream.c). */
  var BLOCK_KEYS = 128;

  /*
   * One block of every stage, as lib/kernel_stream.c makes them (the
   * kernel attn runs for a page): the logits as every kernel makes them,
   * then each row's online softmax over blocks of keys, keeping the
   * largest logit m, the sum l of exp(x - m) and the accumulator o of
   * exp(x - m) v,
   *
   *	m' = max(m, max_j x_j), l' = l exp(m - m') + sum_j exp(x_j - m'),
   *	o' = o exp(m - m') + sum_j exp(x_j - m') v_j,
   *
   * then output = o / l, lse = m + log(l), weights = exp(x - m) / l.
   * Null when a scaled score overflows (attn refuses that run).
   */
  function kernel(B, scale, causal) {
    var dk = D.dk, dv = D.dv, cap = D.softcap;
    var sink = D.sinks ? D.sinks[B.h] : -Infinity;
    var slope = D.alibi ? D.alibi[B.b][B.h] : 0;
    var R = { scores: table(T, S), scaled: table(T, S), keep: table(T, S),
      weights: table(T, S), max: [], sum: [], lse: [], out: table(T, dv) };
    var i, j, j0, j1, c, x, m, l, o, mb, mn, mu, a, e, w, E = [];

    for (i = 0; i < T; i++)
      for (j = 0; j < S; j++) {
        x = 0;
        for (c = 0; c < dk; c++) x += B.q[i][c] * B.k[j][c];
        R.scores[i][j] = x;
        x *= scale;
        if (!isFinite(x)) return null;
        if (cap > 0) x = cap * Math.tanh(x / cap);
        if (B.bias) x += B.bias[i][j];
        if (D.alibi) x -= slope * Math.abs(place(B, i)[2] - (j - place(B, i)[0]));
        if (!keeps(B, i, j, causal)) x = -Infinity;
        R.scaled[i][j] = x;
        R.keep[i][j] = x === -Infinity ? 0 : 1;
      }
    for (i = 0; i < T; i++) {
      var P = place(B, i);
      m = sink;
      l = sink === -Infinity ? 0 : 1;
      o = new Array(dv).fill(0);
      /* blocks from the first key of the row's sequence */
      for (j0 = 0; j0 < S; j0 = j1) {
        j1 = j0 < P[0] ? P[0] : Math.min(S, j0 + BLOCK_KEYS);
        mb = -Infinity;
        for (j = j0; j < j1; j++) mb = mb > R.scaled[i][j] ? mb : R.scaled[i][j];
        mn = mb > m ? mb : m;
        mu = mn === -Infinity ? 0 : mn;
        a = Math.exp(m - mu);
        l *= a;
        for (j = j0; j < j1; j++) {
          E[j] = Math.exp(R.scaled[i][j] - mu);
          l += E[j];
        }
        m = mn;
        for (c = 0; c < dv; c++) {
          o[c] *= a;
          for (j = j0; j < j1; j++) o[c] += E[j] * B.v[j][c];
        }
      }
      if (m === -Infinity) {
        /* no key: what --masked-rows says */
        /* over the keys of the row's sequence */
        w = D.maskedRows === 1 ? NaN : D.maskedRows === 2 ?
            (P[1] > P[0] ? 1 / (P[1] - P[0]) : 0) : 0;
        R.max[i] = m;
        R.sum[i] = 0;
        R.lse[i] = -Infinity;
        for (c = 0; c < dv; c++) {
          x = 0;
          if (D.maskedRows !== 2) x = w;
          else for (j = P[0]; j < P[1]; j++) x += w * B.v[j][c];
          R.out[i][c] = x;
        }
        for (j = 0; j < S; j++) R.weights[i][j] = j >= P[0] && j < P[1] ? w : 0;
        continue;
      }
      R.max[i] = m;
      R.sum[i] = l;
      R.lse[i] = m + Math.log(l);
      for (c = 0; c < dv; c++) R.out[i][c] = o[c] / l;
      for (j = 0; j < S; j++) R.weights[i][j] = Math.exp(R.scaled[i][j] - m) / l;
    }
    return R;
  }

  /* print_stats.c's stats_row: row i of block R. */
  function statsRow(R, i) {
    var r = { keys: 0, max: -Infinity, argmax: S, entropy: 0 }, j, x;
    for (j = 0; j < S; j++) r.keys += R.keep[i][j] !== 0 ? 1 : 0;
    r.defined = r.keys > 0;
    if (!r.defined) return r;
    for (j = 0; j < S; j++) {
      x = R.weights[i][j];
      if (x > r.max) {
        r.max = x;
        r.argmax = j;
      }
      if (x > 0) r.entropy -= x * Math.log(x);
    }
    return r;
  }

  /* ------------------------------------------------------------ the page */

  var digits = D.digits;
  function num(x) { return formatNumber(x, digits, true); }
  function numMore(x) {
    return formatNumber(x, digits === 0 || digits >= 17 ? digits : digits + 1,
        true);
  }

  /* A stage's section: its blocks' tables, cells and worked text. */
  function section(id) {
    var sec = document.getElementById(id);
    if (!sec) return null;
    return {
      sec: sec,
      blocks: Array.prototype.map.call(sec.querySelectorAll(
          ':scope > .blocks > .block'), function (div) {
        var t = div.querySelector('table');
        return {
          where: t.caption ? ', ' + t.caption.textContent : '',
          cols: Array.prototype.slice.call(t.tHead.rows[0].cells, 1)
              .map(function (th) { return th.textContent; }),
          rows: Array.prototype.map.call(t.tBodies[0].rows, function (tr) {
            return { tr: tr, cells: Array.prototype.slice.call(tr.cells, 1) };
          }),
          pre: div.querySelector('details pre')
        };
      }),
      check: sec.querySelector('.check'),
      stats: Array.prototype.map.call(sec.querySelectorAll('table.stats'),
          function (t) { return t.tBodies[0].rows; })
    };
  }

  var sec = {};
  ['scores', 'scaled', 'weights', 'output', 'lse', 'mask'].forEach(
      function (id) { sec[id] = section(id); });
  var arith = document.querySelector('main td[data-a]') !== null;
  var Qn = sec.scores.blocks[0].rows.map(function (r) {
    return r.tr.cells[0].textContent;
  });
  var Kn = sec.scores.blocks[0].cols;

  /* The block of output column j of output block n, and its column. */
  function outCol(n, j) {
    var w = D.output[n][j];
    return { n: blockOf[w[0] + ',' + w[1]], c: w[2] };
  }

  /* --------------------------------------------------------- arithmetic */

  /* print_arith.c, a function a line, over one block: B its inputs, R
   * its stages. */
  function factor(x) { return x < 0 ? '(' + num(x) + ')' : num(x); }
  function term(x, more) {
    return ' ' + (negative(x) ? '-' : '+') + ' ' +
        (more ? numMore(Math.abs(x)) : num(Math.abs(x)));
  }
  function kept(R, i, j) { return R.keep[i][j] !== 0; }
  function hasSoftmax(R, i) { return !isNaN(R.max[i]) && R.max[i] !== -Infinity; }
  function shiftedExp(R, i, j) { return Math.exp(R.scaled[i][j] - R.max[i]); }

  function arithDot(B, R, i, j) {
    var s = Qn[i] + '.' + Kn[j] + ' =', c;
    for (c = 0; c < D.dk; c++)
      s += (c > 0 ? ' + ' : ' ') + factor(B.q[i][c]) + 'x' + factor(B.k[j][c]);
    return s + ' = ' + num(R.scores[i][j]) + '\n';
  }

  function arithScaled(B, R, i, j, scale) {
    var s = Qn[i] + '.' + Kn[j] + ': ', cap = D.softcap;
    if (!kept(R, i, j)) return s + 'masked\n';
    if (cap > 0) s += num(cap) + ' tanh(';
    s += factor(R.scores[i][j]) + ' x ' + num(scale);
    if (cap > 0) s += ' / ' + num(cap) + ')';
    if (B.bias) s += term(B.bias[i][j], false);
    if (D.alibi)
      s += ' - ' + num(D.alibi[B.b][B.h]) + ' x |' + place(B, i)[2] + ' - ' +
          (j - place(B, i)[0]) + '|';
    return s + ' = ' + num(R.scaled[i][j]) + '\n';
  }

  function arithRow(R, i) {
    var max = R.max[i], s = 'softmax of row ' + Qn[i] + ': ';
    if (isNaN(max))
      return s + 'a nan among its logits makes every weight nan\n';
    if (max === -Infinity)
      return s + 'every key is masked, so there is no softmax: ' +
          '--masked-rows ' + D.maskedRowsName + ' gives its weights\n';
    return s + 'subtract the maximum ' + num(max) +
        ', exponentiate, divide by the sum\n';
  }

  function arithExp(R, i, j) {
    var x = R.scaled[i][j], max = R.max[i];
    if (!kept(R, i, j)) return Kn[j] + ': masked\n';
    return Kn[j] + ': exp(' + num(x) + ' - ' + num(max) + ') = exp(' +
        num(x - max) + ') = ' + numMore(shiftedExp(R, i, j)) + '\n';
  }

  function arithSinkExp(B, R, i) {
    var s = D.sinks[B.h], max = R.max[i];
    return 'sink: exp(' + num(s) + ' - ' + num(max) + ') = exp(' +
        num(s - max) + ') = ' + numMore(Math.exp(s - max)) + '\n';
  }

  function arithSum(B, R, i) {
    var s = 'sum =', terms = 0, j;
    if (D.sinks) {
      s += ' ' + numMore(Math.exp(D.sinks[B.h] - R.max[i]));
      terms++;
    }
    for (j = 0; j < S; j++)
      if (kept(R, i, j)) {
        if (terms++ === 0) s += ' ' + numMore(shiftedExp(R, i, j));
        else s += term(shiftedExp(R, i, j), true);
      }
    if (terms > 1) s += ' = ' + numMore(R.sum[i]);
    return s + '\n';
  }

  function arithWeight(R, i, j) {
    if (!kept(R, i, j)) return Kn[j] + ': masked, weight 0\n';
    return Kn[j] + ': ' + numMore(shiftedExp(R, i, j)) + ' / ' +
        numMore(R.sum[i]) + ' = ' + num(R.weights[i][j]) + '\n';
  }

  /* lse as the run writes it (lib/passes.c's attn_lse_convention):
   * --lse-base 2 and --lse-masked inf; R.lse holds the natural value. */
  function lseShown(x) {
    if (x === -Infinity) return D.lseMaskedInf ? Infinity : -Infinity;
    return D.lseBase2 ? x * Math.LOG2E : x;
  }

  function arithUnshifted(B, R, i) {
    var sum = Math.exp(R.lse[i]), s, sep = '', j, x;
    if (!isFinite(sum))
      return '(without subtracting the maximum, exp would overflow here)\n';
    s = 'the same without subtracting the maximum:';
    if (D.sinks) {
      s += sep + ' exp(sink ' + num(D.sinks[B.h]) + ') = ' +
          numMore(Math.exp(D.sinks[B.h]));
      sep = ',';
    }
    for (j = 0; j < S; j++)
      if (kept(R, i, j)) {
        x = R.scaled[i][j];
        s += sep + ' exp(' + num(x) + ') = ' + numMore(Math.exp(x));
        sep = ',';
      }
    s += '; sum = ' + (D.lseBase2 ? '2^lse' : 'exp(lse)') + ' = ' +
        numMore(sum) + ';';
    sep = '';
    for (j = 0; j < S; j++)
      if (kept(R, i, j)) {
        s += sep + ' ' + numMore(Math.exp(R.scaled[i][j])) + ' / ' +
            numMore(sum) + ' = ' + num(R.weights[i][j]);
        sep = ',';
      }
    return s + '\n';
  }

  function arithOutput(B, R, i, c, label) {
    var s = Qn[i] + '[' + label + '] =', terms = 0, j;
    if (!hasSoftmax(R, i))
      return s + ' ' + num(R.out[i][c]) + ' (no key may be attended: ' +
          '--masked-rows ' + D.maskedRowsName + ')\n';
    for (j = 0; j < S; j++) {
      if (!kept(R, i, j)) continue;
      s += (terms++ > 0 ? ' + ' : ' ') + factor(R.weights[i][j]) + ' x ' +
          factor(B.v[j][c]);
    }
    s += ' = ' + num(R.out[i][c]);
    if (terms < S)
      s += ' (' + (S - terms) + ' masked key' + (S - terms === 1 ? '' : 's') +
          ' left out)';
    return s + '\n';
  }

  function arithLse(R, i) {
    if (!hasSoftmax(R, i))
      return Qn[i] + ': no softmax, lse = ' + num(lseShown(R.lse[i])) + '\n';
    var b = D.lseBase2 ? ['(', ') / log(2)'] : ['', ''];
    return Qn[i] + ': lse = ' + b[0] + 'max + log(sum)' + b[1] + ' = ' +
        b[0] + num(R.max[i]) + ' + log(' + numMore(R.sum[i]) + ')' + b[1] +
        ' = ' + num(lseShown(R.lse[i])) + '\n';
  }

  /* print_arith_cell, without the line naming the cell. */
  function arithCell(id, B, R, i, j, c, label, scale) {
    var s;
    switch (id) {
    case 'scaled':
      return arithDot(B, R, i, j) + arithScaled(B, R, i, j, scale);
    case 'weights':
      s = arithDot(B, R, i, j) + arithScaled(B, R, i, j, scale) +
          arithRow(R, i);
      if (!hasSoftmax(R, i)) return s;
      if (D.sinks) s += arithSinkExp(B, R, i);
      return s + arithExp(R, i, j) + arithSum(B, R, i) + arithWeight(R, i, j);
    case 'output':
      return arithOutput(B, R, i, c, label);
    case 'lse':
      return arithLse(R, i);
    }
    return '';
  }

  /* print_arith_block's lines for block n of stage id. */
  function arithBlock(id, n, res, scale) {
    var ind = '  ', s = '', i, j, c, j0, o, B, R, cols;
    if (id === 'output') {
      cols = sec.output.blocks[n].cols;
      for (j0 = 0; j0 < cols.length; j0 += D.dv) {
        o = outCol(n, j0);
        B = D.blocks[o.n];
        R = res[o.n];
        for (i = 0; i < T; i++)
          for (c = 0; c < D.dv; c++)
            s += ind + arithOutput(B, R, i, c, cols[j0 + c]);
      }
      return s;
    }
    B = D.blocks[n];
    R = res[n];
    for (i = 0; i < T; i++) {
      if (id === 'scaled') {
        for (j = 0; j < S; j++) s += ind + arithScaled(B, R, i, j, scale);
      } else if (id === 'lse') {
        s += ind + arithLse(R, i);
      } else if (id === 'weights') {
        s += ind + arithRow(R, i);
        if (!hasSoftmax(R, i)) continue;
        if (D.sinks) s += ind + '  ' + arithSinkExp(B, R, i);
        for (j = 0; j < S; j++) s += ind + '  ' + arithExp(R, i, j);
        s += ind + '  ' + arithSum(B, R, i);
        for (j = 0; j < S; j++) s += ind + '  ' + arithWeight(R, i, j);
        s += ind + '  ' + arithUnshifted(B, R, i);
      }
    }
    return s;
  }

  /* --------------------------------------------------------------- cells */

  /* heatmap_rgb: the colour of weight w, between viridis's stops. */
  function colour(w) {
    var x = isNaN(w) ? 0 : w < 0 ? 0 : w > 1 ? 8 : w * 8;
    var k = x >= 8 ? 7 : Math.floor(x), f = x - k;
    return [0, 1, 2].map(function (c) {
      return Math.round((1 - f) * D.stops[k][c] + f * D.stops[k + 1][c]);
    });
  }
  function hex(rgb) {
    return '#' + rgb.map(function (v) { return (v < 16 ? '0' : '') +
        v.toString(16); }).join('');
  }

  function setCell(td, text, head, a) {
    td.textContent = text;
    if (arith && a !== null) {
      td.setAttribute('data-a', head + a.replace(/\n$/, ''));
      if (td === current) workText.textContent = td.getAttribute('data-a');
    }
  }

  /* --color-range, as heatmap_position: a weight is drawn at w / top,
   * top being 1, the largest weight the masks keep on the page, or the
   * largest its row keeps; the legend names top under "max".  Without
   * the option ("auto") the range is chosen as heatmap_scale_init
   * chooses it, for the weights of the moment: row when the weights the
   * masks keep are unequal and lie in a band narrower than 0.25, else
   * unit. */
  var legends = Array.prototype.slice.call(
      document.querySelectorAll('p.legend'));
  var given = legends.length && legends[0].getAttribute('data-range') ||
      'unit';
  var range = given, band = null;
  function chooseRange(res) {
    var lo = Infinity, hi = -Infinity;
    if (given !== 'auto') return;
    res.forEach(function (R) {
      R.weights.forEach(function (row, i) {
        row.forEach(function (w, j) {
          if (R.keep[i][j] === 0 || isNaN(w)) return;
          lo = Math.min(lo, w);
          hi = Math.max(hi, w);
        });
      });
    });
    band = lo < hi && hi - lo < 0.25 ? [lo, hi] : null;
    range = band ? 'row' : 'unit';
  }
  function heatMax(R, i0, i1) {
    var top = 0, i, j;
    for (i = i0; i < i1; i++)
      for (j = 0; j < R.weights[i].length; j++)
        if (R.keep[i][j] !== 0 && R.weights[i][j] > top)
          top = R.weights[i][j];
    return top;
  }
  function heatTop(res, n, i) {
    if (range === 'row') return heatMax(res[n], i, i + 1);
    if (range !== 'max') return 1;
    return res.reduce(function (top, R) {
      return Math.max(top, heatMax(R, 0, R.weights.length));
    }, 0);
  }
  function heatPosition(top, w) {
    return isNaN(w) ? w : top <= 0 ? 0 : w / top;
  }
  function renderLegends(res) {
    if (given === 'auto') {
      legends.forEach(function (p) {
        p.childNodes[2].textContent = band ? " each row's largest weight " +
            '(chosen: every weight lies in ' + num(band[0]) + ' to ' +
            num(band[1]) + ') ' : ' 1 ';
      });
      return;
    }
    if (range !== 'max') return;
    legends.forEach(function (p) {
      p.childNodes[2].textContent = ' ' + num(heatTop(res, 0, 0)) +
          ', the largest weight ';
    });
  }

  function setWeight(td, w, masked) {
    var rgb;
    td.classList.toggle('masked', masked);
    td.style.background = '';
    td.style.color = '';
    if (masked || isNaN(w)) return;
    rgb = colour(w);
    td.style.background = hex(rgb);
    td.style.color = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 140 ?
        '#000' : '#fff';
  }

  /* Stage id written again from res, the blocks' stages. */
  function renderStage(id, res, scale) {
    var S_ = sec[id];
    if (!S_) return;
    S_.blocks.forEach(function (blk, n) {
      blk.rows.forEach(function (row, i) {
        row.cells.forEach(function (td, j) {
          var o = id === 'output' ? outCol(n, j) : { n: n, c: j };
          var B = D.blocks[o.n], R = res[o.n], head = id + blk.where + ', ' +
              Qn[i] + ', ' + blk.cols[j] + ':\n';
          var masked;
          switch (id) {
          case 'scaled':
            setCell(td, num(R.scaled[i][j]), head,
                arithCell(id, B, R, i, j, 0, '', scale));
            break;
          case 'weights':
            masked = R.weights[i][j] === 0 && R.keep[i][j] === 0;
            setCell(td, masked ? '-' : num(R.weights[i][j]), head,
                arithCell(id, B, R, i, j, 0, '', scale));
            setWeight(td, heatPosition(heatTop(res, o.n, i),
                R.weights[i][j]), masked);
            break;
          case 'mask':
            setCell(td, num(R.keep[i][j]), head, null);
            break;
          case 'lse':
            setCell(td, num(lseShown(R.lse[i])), head,
                arithCell(id, B, R, i, 0, 0, '', scale));
            break;
          case 'output':
            setCell(td, num(R.out[i][o.c]), head,
                arithCell(id, B, R, i, 0, o.c, blk.cols[j], scale));
            break;
          }
        });
      });
      if (blk.pre) blk.pre.textContent = arithBlock(id, n, res, scale);
    });
  }

  /* print_row_sum_check for the weights. */
  function checkLine(res) {
    var worst = 0, lo = Infinity, hi = -Infinity, nans = 0, masked = 0;
    var s, los, his;
    res.forEach(function (R, n) {
      var i, j, sum, target, d;
      for (i = 0; i < T; i++) {
        if (R.lse[i] === -Infinity) {
          masked++;
          continue;
        }
        sum = 0;
        for (j = 0; j < S; j++) sum += R.weights[i][j];
        if (isNaN(sum)) {
          nans++;
          continue;
        }
        target = D.sinks ? 1 - Math.exp(D.sinks[D.blocks[n].h] - R.lse[i]) : 1;
        d = Math.abs(sum - target);
        if (d > worst) worst = d;
        lo = sum < lo ? sum : lo;
        hi = sum > hi ? sum : hi;
      }
    });
    if (D.sinks) {
      los = num(lo);
      his = num(hi);
      s = 'check: with sinks each row of weights sums to 1 - exp(sink - lse), ' +
          'less than 1, the rest being the sink\'s (sums ' + los +
          (los !== his ? ' to ' + his : '') + '; largest |sum - (1 - ' +
          'exp(sink - lse))| = ' + formatNumber(worst, 2, false) + ')';
    } else {
      s = 'check: each row of weights sums to 1 (largest |sum - 1| = ' +
          formatNumber(worst, 2, false) + ')';
    }
    if (masked > 0)
      s += '; ' + masked + ' row' + (masked === 1 ? '' : 's') + ' that attend' +
          (masked === 1 ? 's' : '') + ' no key left out';
    if (nans > 0)
      s += '; ' + nans + ' row' + (nans === 1 ? ' is' : 's are') +
          ' nan (a nan or inf in the bias)';
    return s;
  }

  function renderStats(res) {
    sec.weights.stats.forEach(function (rows, n) {
      Array.prototype.forEach.call(rows, function (tr, i) {
        var r = statsRow(res[n], i), td = tr.cells;
        td[1].textContent = r.defined ? num(r.max) : '-';
        td[2].textContent = r.defined && r.argmax < S ? Kn[r.argmax] : '-';
        td[3].textContent = r.defined ? num(r.entropy) : '-';
        td[4].textContent = r.defined ? num(Math.exp(r.entropy)) : '-';
        td[5].textContent = String(r.keys);
      });
    });
  }

  /* ------------------------------------------------------------- state */

  var MULTS = [0.1, 0.2, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 10];
  var ONE = MULTS.indexOf(1);
  var runBase = D.mode === 'value' ? 'run' : D.mode;
  var state = { base: runBase, m: ONE, causal: D.causal !== 0, row: 0,
    block: 0 };
  var res = null;	/* the stages of the state shown */
  var pending = null;	/* predict mode: the stages before the change */

  var ctl = {
    scale: document.getElementById('ctl-scale'),
    temp: document.getElementById('ctl-temp'),
    tempOut: document.getElementById('ctl-temp-out'),
    causal: document.getElementById('ctl-causal'),
    query: document.getElementById('ctl-query'),
    block: document.getElementById('ctl-block'),
    predict: document.getElementById('ctl-predict'),
    reset: document.getElementById('ctl-reset'),
    cmd: document.getElementById('bench-cmd'),
    focus: document.getElementById('focus'),
    ask: document.getElementById('predict'),
    question: document.getElementById('predict-q'),
    result: document.getElementById('predict-result')
  };
  var heads = Array.prototype.slice.call(document.querySelectorAll('p.head'));
  var headText = heads.map(function (p) { return p.textContent; });
  var formulas = Array.prototype.slice.call(
      document.querySelectorAll('span.formula[data-c0]'));

  function scaleOf(st) {
    var base = st.base === 'run' ? D.scale : st.base === 'none' ? 1 :
        1 / Math.sqrt(D.dk);
    return st.m === ONE ? base : base * MULTS[st.m];
  }

  function isRun(st) {
    return st.base === runBase && st.m === ONE &&
        st.causal === (D.causal !== 0);
  }

  /* print_scale_line for the state. */
  function scaleLine(st, scale) {
    if (st.m === ONE && st.base === 'default')
      return 'scale = 1/sqrt(d_k) = 1/sqrt(' + D.dk + ') = ' + num(scale);
    if (st.m === ONE && st.base === 'none')
      return 'scale = ' + num(scale) + ' (--no-scale)';
    return 'scale = ' + num(scale) + ' (--scale)';
  }

  /* The options with which attn computes what the page shows. */
  function options(st, scale) {
    var o = [];
    if (st.m !== ONE || st.base === 'run') o.push('--scale ' + String(scale));
    else if (st.base === 'none') o.push('--no-scale');
    if (st.causal) o.push('--causal');
    return o;
  }

  function describe(st, scale) {
    var o = options(st, scale), text;
    ctl.cmd.setAttribute('data-scale', String(scale));
    ctl.cmd.setAttribute('data-options', o.join(' '));
    if (isRun(st)) {
      text = 'These are the numbers of the run, as attn wrote them.';
    } else {
      text = 'attn computes these numbers with ' +
          (o.length > 0 ? o.join(' ') : 'neither --scale nor --no-scale') +
          (!st.causal && D.causal ? ', without --causal' : '') +
          ' (the run\'s other options as they were).';
    }
    ctl.cmd.textContent = text;
  }

  /* Every number of the page for the state. */
  function render() {
    var scale = scaleOf(state), next = [], i;
    for (i = 0; i < D.blocks.length; i++) {
      next.push(kernel(D.blocks[i], scale, state.causal));
      if (next[i] === null) {
        ctl.cmd.textContent = 'A scaled score overflows a double at this ' +
            'scale: attn refuses the run, and the page keeps the numbers ' +
            'it showed.';
        return false;
      }
    }
    res = next;
    chooseRange(res);
    heads.forEach(function (p, k) {
      var t = p.hasAttribute('data-c0') ?
          p.getAttribute(state.causal ? 'data-c1' : 'data-c0') : headText[k];
      if (/^scale = /.test(headText[k]) &&
          (state.base !== runBase || state.m !== ONE))
        t = scaleLine(state, scale);
      p.textContent = t;
    });
    formulas.forEach(function (f) {
      f.textContent = f.getAttribute(state.causal ? 'data-c1' : 'data-c0');
    });
    if (sec.mask)
      sec.mask.sec.hidden = !(state.causal || D.window || D.maskFile ||
          D.biasFile || D.packed);
    ['scaled', 'weights', 'output', 'lse', 'mask'].forEach(function (id) {
      renderStage(id, res, scale);
    });
    if (sec.weights.check) sec.weights.check.textContent = checkLine(res);
    renderLegends(res);
    renderStats(res);
    describe(state, scale);
    renderFocus();
    if (stepping) showStep();
    return true;
  }

  /* ------------------------------------------------------ the query row */

  function blockName(n) {
    return ctl.block ? ', ' + ctl.block.options[n].textContent : '';
  }

  /* The chosen row marked in every table of its block. */
  function mark() {
    var b = D.blocks[state.block];
    document.querySelectorAll('tr.chosen').forEach(function (tr) {
      tr.classList.remove('chosen');
    });
    ['scores', 'scaled', 'weights', 'lse', 'mask'].forEach(function (id) {
      if (sec[id])
        sec[id].blocks[state.block].rows[state.row].tr.classList.add('chosen');
    });
    sec.output.blocks.forEach(function (blk, n) {
      if (D.output[n].some(function (w) { return w[0] === b.b && w[1] === b.h; }))
        blk.rows[state.row].tr.classList.add('chosen');
    });
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /* The workbench's view of the chosen row: its scores, scaled logits and
   * weights, key by key, with the weights as percentages and bars, and
   * its entropy. */
  function renderFocus() {
    var n = state.block, i = state.row, R = res[n], r = statsRow(R, i);
    var box = ctl.focus, t, tr, j, w, pct, bar, cell;
    box.textContent = '';
    box.appendChild(el('h2', null, 'Query ' + Qn[i] + blockName(n) +
        ': its row of scores, scaled and weights [1 x S = 1x' + S + ' each]'));
    t = el('table');
    tr = t.createTHead().insertRow();
    ['key', 'score', 'scaled', 'weight', 'share'].forEach(function (h) {
      var th = el('th', h === 'share' ? 'pct' : h === 'weight' ? 'w' : null, h);
      th.scope = 'col';
      tr.appendChild(th);
    });
    var body = t.createTBody();
    for (j = 0; j < S; j++) {
      tr = body.insertRow();
      cell = el('th', null, Kn[j]);
      cell.scope = 'row';
      tr.appendChild(cell);
      tr.appendChild(el('td', null, num(R.scores[i][j])));
      tr.appendChild(el('td', null, num(R.scaled[i][j])));
      w = R.weights[i][j];
      tr.appendChild(el('td', 'w', R.keep[i][j] === 0 && w === 0 ? '-' :
          num(w)));
      pct = el('td', 'pct');
      if (!isNaN(w)) {
        bar = el('span', 'pbar');
        bar.style.width = (Math.max(0, Math.min(1, w)) * 6).toFixed(2) + 'rem';
        pct.appendChild(bar);
        pct.appendChild(document.createTextNode((100 * w).toFixed(1) + '%'));
      }
      tr.appendChild(pct);
    }
    var scroll = el('div', 'scroll');
    scroll.appendChild(t);
    box.appendChild(scroll);
    box.appendChild(el('p', 'w', r.defined ? 'entropy ' + num(r.entropy) +
        ' nats; effective number of keys exp(entropy) = ' +
        num(Math.exp(r.entropy)) + ' of the ' + r.keys + ' it may attend' :
        'This row may attend no key: it has no softmax.'));
    mark();
  }

  /* ------------------------------------------------------------ predict */

  var concealed = ['weights', 'output', 'lse'];
  function conceal(on) {
    concealed.forEach(function (id) { sec[id].sec.classList.toggle('concealed', on); });
    ctl.focus.classList.toggle('concealed', on);
    ctl.ask.hidden = !on;
    if (on && current && current.closest('.concealed')) {
      current.classList.remove('current');
      current = null;
      workText.textContent = 'Hidden until you predict.';
    }
  }

  function entropyOf(rs, n, i) {
    var r = statsRow(rs[n], i);
    return r.defined ? r.entropy : NaN;
  }

  function ask() {
    ctl.question.textContent = 'Before you look: are the weights of ' +
        Qn[state.row] + blockName(state.block) +
        ' more concentrated or more spread than before?';
  }

  function answer(said) {
    var e0 = entropyOf(pending, state.block, state.row);
    var e1 = entropyOf(res, state.block, state.row), was;
    var who = Qn[state.row] + blockName(state.block);
    if (isNaN(e0) || isNaN(e1)) {
      ctl.result.textContent = who + ' may attend no key ' +
          (isNaN(e1) ? 'now' : 'before') + ': it has no softmax, and no ' +
          'entropy to compare.  You said ' + said + '.';
    } else {
      if (Math.abs(e1 - e0) <= 1e-12 * Math.max(1, Math.abs(e0)))
        was = 'unchanged';
      else
        was = e1 < e0 ? 'more concentrated' : 'more spread';
      ctl.result.textContent = 'The weights of ' + who + ' are ' + was +
          ': entropy ' + num(e0) + ' \u2192 ' + num(e1) +
          ' nats, effective number of keys ' + num(Math.exp(e0)) +
          ' \u2192 ' + num(Math.exp(e1)) + '. You said ' + said +
          (said === was ? ': right.' : '.');
    }
    pending = null;
    conceal(false);
    ctl.result.focus();
  }

  /* A control moved: work the page out again, behind the question in
   * predict mode. */
  function changed() {
    var before = res;
    if (!render()) return;
    if (ctl.predict.checked && pending === null && before !== null) {
      pending = before;
      ctl.result.textContent = '';
      ask();
      conceal(true);
    }
  }

  /* ----------------------------------------------------------- controls */

  function showControls() {
    ctl.scale.indeterminate = state.base === 'run';
    ctl.scale.checked = state.base === 'default';
    ctl.temp.value = String(state.m);
    ctl.tempOut.textContent = String(MULTS[state.m]);
    ctl.temp.setAttribute('aria-valuetext', 'scale times ' + MULTS[state.m]);
    ctl.causal.checked = state.causal;
  }

  ctl.temp.min = '0';
  ctl.temp.max = String(MULTS.length - 1);
  ctl.temp.step = '1';
  ctl.result.tabIndex = -1;
  showControls();

  ctl.scale.addEventListener('change', function () {
    state.base = ctl.scale.checked ? 'default' : 'none';
    showControls();
    changed();
  });
  ctl.temp.addEventListener('input', function () {
    state.m = +ctl.temp.value;
    showControls();
    changed();
  });
  ctl.causal.addEventListener('change', function () {
    state.causal = ctl.causal.checked;
    changed();
  });
  ctl.query.addEventListener('change', function () {
    state.row = +ctl.query.value;
    renderFocus();
    if (pending) ask();
  });
  if (ctl.block)
    ctl.block.addEventListener('change', function () {
      state.block = +ctl.block.value;
      renderFocus();
      if (pending) ask();
    });
  ctl.predict.addEventListener('change', function () {
    if (!ctl.predict.checked && pending) {
      pending = null;
      conceal(false);
    }
    ctl.result.textContent = ctl.predict.checked ? 'Now change the scaling, ' +
        'the temperature or the causal mask: the weights stay hidden ' +
        'until you say which way they went.' : '';
  });
  ctl.reset.addEventListener('click', function () {
    state.base = runBase;
    state.m = ONE;
    state.causal = D.causal !== 0;
    showControls();
    changed();
  });
  document.getElementById('predict-m').addEventListener('click',
      function () { answer('more concentrated'); });
  document.getElementById('predict-s').addEventListener('click',
      function () { answer('more spread'); });
  onKey = function (e) {
    if (pending === null || (e.key !== 'm' && e.key !== 's')) return false;
    answer(e.key === 'm' ? 'more concentrated' : 'more spread');
    return true;
  };

  /* The run's own stages, for the focus view and for predict mode's
   * first question; the tables stay as attn wrote them. */
  res = [];
  for (var n = 0; n < D.blocks.length; n++)
    res.push(kernel(D.blocks[n], scaleOf(state), state.causal));
  describe(state, scaleOf(state));
  renderFocus();
})();
