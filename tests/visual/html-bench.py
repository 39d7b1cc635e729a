"""html-bench.py ATTN DIR --case NAME ARG... [--case NAME ARG...]... - the
workbench of attn -f html ARG..., for each case, used with the keyboard
alone in headless Chromium (cdp.py), against attn's own output for the
same options:

- the page loads with no console error, nothing fetched, the controls
  shown and on;
- at the run's options (the "as attn ran it" button) the page's script
  writes every table, colour, arithmetic, statistic, check line, legend
  and heading exactly as attn wrote them;
- Tab reaches the controls in order; Space toggles the scaling and the
  causal mask, arrow keys move the temperature, the query and the
  block; after each, the page names the options attn computes the same
  with (the scale's text read back is the double the test works out:
  1/sqrt(d_k), 1, or the run's --scale, times the temperature), and
  every visible number, colour and arithmetic equals attn -f html's
  with those options (--no-scale, --scale X, --causal), at the printed
  digits;
- the query and block controls move the marked row and the focus view,
  whose weights are those of the weights table;
- predict mode hides the weights after a change until m (or s) is
  pressed, then names the entropy change, which equals attn --stats's;
- the step-through mode (Enter on its button) shows one stage at a
  time in large type, from Q as read, arrow keys move, Escape leaves;
- at a phone's width (390 px) nothing is wider than the screen, in
  both modes;
- no console error at the end.

ARG... are attn's arguments (with -f html added); those the controls
set (--no-scale, --scale X, --causal) are taken out of the reference
runs and put back as the page says.  ARG... starting `--off WHY` instead
checks a page whose controls are off: shown disabled, with a note naming
WHY, and no data embedded.  Pages and a phone's screenshot go to DIR.

Two browsers serve every case (one for the page, one for attn's), since
starting them takes longer than a case.  Prints "PASS case NAME" or
"FAIL case NAME", then its checks a line each; exits 1 when one fails.
"""
import json
import math
import os
import re
import subprocess
import sys

import cdp

attn, outdir = sys.argv[1], sys.argv[2]
cases, k = [], 3
while k < len(sys.argv):
    if sys.argv[k] == "--case":
        cases.append((sys.argv[k + 1], []))
        k += 2
    else:
        cases[-1][1].append(sys.argv[k])
        k += 1
args = []
lines, failed = [], 0


def check(ok, what):
    global failed
    lines.append(("ok   " if ok else "FAIL ") + what)
    failed += not ok


def page(name, extra):
    """attn -f html with args (less the controls' options) and extra."""
    path = os.path.join(outdir, case + "-" + name + ".html")
    rest, k = [], 0
    while k < len(args):
        if args[k] == "--scale":
            k += 2
            continue
        if args[k] not in ("--no-scale", "--causal"):
            rest.append(args[k])
        k += 1
    with open(path, "w") as f:
        run = subprocess.run([attn, "-f", "html"] + (args if extra is None
                                                     else rest + extra),
                             stdout=f, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(run.args),
                                               run.stderr.strip()))
    return "file://" + os.path.abspath(path)


# What a person sees of the page: each shown section's heading, tables
# (text, arithmetic, masked or not, colours of each number), worked
# text, check line and statistics, and the lines on top.
SNAP = r"""(function () {
  var out = {head: [], sections: []};
  document.querySelectorAll('p.head').forEach(function (p) {
    out.head.push(p.textContent);
  });
  document.querySelectorAll('main > section').forEach(function (s) {
    if (s.hidden) return;
    var o = {id: s.id, h2: s.querySelector('h2').textContent, blocks: [],
             check: null, stats: []};
    s.querySelectorAll(':scope > .blocks > .block').forEach(function (b) {
      var t = b.querySelector('table'), pre = b.querySelector('details pre');
      o.blocks.push({
        caption: t.caption ? t.caption.textContent : '',
        rows: Array.prototype.map.call(t.rows, function (tr) {
          return Array.prototype.map.call(tr.cells, function (c) {
            if (c.tagName !== 'TD') return [c.textContent];
            var st = getComputedStyle(c);
            return [c.textContent, c.getAttribute('data-a'),
                    c.classList.contains('masked'), st.backgroundColor,
                    st.color];
          });
        }),
        pre: pre ? pre.textContent : null});
    });
    var check = s.querySelector('.check');
    if (check) o.check = check.textContent;
    var legend = s.querySelector('p.legend');
    if (legend) o.legend = legend.textContent;
    s.querySelectorAll('table.stats').forEach(function (t) {
      o.stats.push(Array.prototype.map.call(t.rows, function (tr) {
        return Array.prototype.map.call(tr.cells, function (c) {
          return c.textContent; });
      }));
    });
    out.sections.push(o);
  });
  return out;
})()"""


def tiny(text):
    """The check line with its largest |sum - 1|, rounding error below
    1e-13 whose last bit depends on exp's, made a word."""
    def sub(m):
        return "TINY" if abs(float(m.group(0))) < 1e-13 else m.group(0)
    return re.sub(r"[0-9.]+e-[0-9]+|\b0\b", sub, text or "")


def first_difference(got, want):
    """Where two snapshots first differ, in words."""
    if got["head"] != want["head"]:
        return "head %r != %r" % (got["head"], want["head"])
    ids = [[s["id"] for s in x["sections"]] for x in (got, want)]
    if ids[0] != ids[1]:
        return "sections %r != %r" % tuple(ids)
    for a, b in zip(got["sections"], want["sections"]):
        for key in ("h2", "check", "stats"):
            if a[key] != b[key]:
                return "%s %s: %r != %r" % (a["id"], key, a[key], b[key])
        for n, (x, y) in enumerate(zip(a["blocks"], b["blocks"])):
            for r, (u, v) in enumerate(zip(x["rows"], y["rows"])):
                for c, (p, q) in enumerate(zip(u, v)):
                    if p != q:
                        return "%s block %d row %d cell %d: %r != %r" % (
                            a["id"], n, r, c, p, q)
            if x != y:
                return "%s block %d worked text:\n%s\n!=\n%s" % (
                    a["id"], n, x["pre"], y["pre"])
    return "?"


def compare(got, want, what):
    """Check that two snapshots agree; name the first difference."""
    for s in got["sections"] + want["sections"]:
        s["check"] = tiny(s["check"])
    check(got == want, "%s: %s" % (what, "every number, colour and "
                                   "arithmetic as attn's" if got == want else
                                   "the page differs from attn's: " +
                                   first_difference(got, want)))


browser = cdp.Browser()
ref = cdp.Browser()
status = 0


def attn_snapshot(name, extra):
    ref.load(page(name, extra))
    return ref.js(SNAP)


def active():
    return browser.js("document.activeElement.id || "
                      "document.activeElement.tagName")


def press(key):
    browser.press(key)
    browser.js("new Promise(r => requestAnimationFrame(() => r(1)))")


def run_case():
    global D
    browser.events = []
    url = page("page", None)
    browser.viewport(1000, 900)
    browser.load(url)
    check(browser.errors() == [], "no console errors: %s" % browser.errors())
    check(browser.requests() == [url], "nothing fetched but the page: %s" %
          browser.requests())
    check(not browser.js("document.getElementById('bench').hidden"),
          "the controls are shown")
    if off is not None:
        check(browser.js("Array.prototype.every.call(document.querySelectorAll("
                         "'#bench input, #bench select, #bench button:not("
                         "#ctl-steps)'), function (e) { return e.disabled; })"),
              "every control is off but the step-through")
        note = browser.js("document.getElementById('bench-note').textContent")
        check(off in note, "the note says why (%r): %r" % (off, note))
        check(browser.js("document.getElementById('attn-data')") is None,
              "no data embedded")
        return
    D = browser.js("JSON.parse(document.getElementById('attn-data')"
                   ".textContent)")
    blocks = len(D["blocks"])

    # the run's own numbers, and the page's at the run's state
    base = browser.js(SNAP)
    browser.js("document.getElementById('ctl-reset').focus()")
    press("Enter")
    compare(browser.js(SNAP), base, "as attn ran it, worked out again")
    cmd = browser.js("document.getElementById('bench-cmd').textContent")
    check("numbers of the run" in cmd, "it says so: %r" % cmd)

    # the state the page should be in, as the test works it out
    run_scale = float(D["scale"])
    state = {"base": {"default": "default", "none": "none"}.get(D["mode"],
                                                              "run"),
             "m": 1.0, "causal": bool(D["causal"])}

    def expected_scale():
        b = {"default": 1 / math.sqrt(D["dk"]), "none": 1.0,
             "run": run_scale}[state["base"]]
        return b if state["m"] == 1 else b * state["m"]

    def agree(what):
        """The page names the options; attn with them writes the same."""
        got = browser.js(SNAP)
        said = browser.js("document.getElementById('bench-cmd')"
                          ".getAttribute('data-options')").split()
        scale = browser.js("document.getElementById('bench-cmd')"
                           ".getAttribute('data-scale')")
        check(float(scale) == expected_scale(),
              "%s: the scale %s is %r" % (what, scale, expected_scale()))
        check(("--causal" in said) == state["causal"],
              "%s: --causal said as the mask is: %r" % (what, said))
        want = attn_snapshot("ref", said)
        compare(got, want, "%s (attn %s)" % (what, " ".join(said)))
        return said

    # Tab from the top reaches the controls, in order
    browser.js("window.scrollTo(0, 0); var h = document.querySelector("
               "'h1'); h.tabIndex = -1; h.focus()")
    press("Tab")
    check(active() == "ctl-scale", "Tab reaches the scaling first: %s" %
          active())
    press(" ")
    state["base"] = "none" if state["base"] == "default" else "default"
    agree("Space on the scaling")
    press("Tab")
    check(active() == "ctl-temp", "then the temperature: %s" % active())
    press("ArrowRight")
    press("ArrowRight")
    state["m"] = float(browser.js("document.getElementById('ctl-temp-out')"
                                  ".textContent"))
    check(state["m"] > 1, "ArrowRight raises the temperature: %r" %
          state["m"])
    agree("ArrowRight twice on the temperature")
    press("Tab")
    check(active() == "ctl-causal", "then causal: %s" % active())
    press(" ")
    state["causal"] = not state["causal"]
    agree("Space on causal")
    browser.press("Tab", shift=True)
    browser.press("Tab", shift=True)
    check(active() == "ctl-scale", "Shift+Tab back to the scaling: %s" %
          active())
    press(" ")
    state["base"] = "none" if state["base"] == "default" else "default"
    agree("the scaling again, with the temperature and causal")
    browser.press("Tab")
    browser.press("ArrowLeft")
    press("ArrowLeft")
    state["m"] = float(browser.js("document.getElementById('ctl-temp-out')"
                                  ".textContent"))
    said = agree("ArrowLeft twice on the temperature")

    # the query row: the marker and the focus view follow it
    FOCUS = ("(function () { var n = +(document.getElementById('ctl-block')"
             " || {value: 0}).value, i = +document.getElementById("
             "'ctl-query').value; var tr = document.querySelectorAll("
             "'#weights > .blocks > .block')[n].querySelector('tbody')"
             ".rows[i]; return [i, n, Array.prototype.slice.call(tr.cells, 1)"
             ".map(function (c) { return c.textContent; }), Array.prototype"
             ".map.call(document.querySelectorAll('#focus td.w'), function "
             "(c) { return c.textContent; }), Array.prototype.map.call("
             "document.querySelectorAll('#weights tr.chosen > th'), function"
             " (c) { return c.textContent; }), tr.cells[0].textContent]; })()")
    press("Tab")
    press("Tab")
    check(active() == "ctl-query", "past causal, the query: %s" % active())
    for key in ["ArrowDown"] * min(2, D["T"] - 1):
        press(key)
        i, n, row, shown, marked, label = browser.js(FOCUS)
        check(row == shown and marked == [label] and i > 0,
              "ArrowDown on the query: row %d marked, the focus view shows "
              "its weights %r: %r, %r" % (i, row, shown, marked))
    if blocks > 1:
        press("Tab")
        check(active() == "ctl-block", "then the block: %s" % active())
        press("ArrowDown")
        i, n, row, shown, marked, label = browser.js(FOCUS)
        check(n == 1 and row == shown and marked == [label],
              "ArrowDown on the block: block 2, the focus view shows its "
              "weights %r: %r" % (row, shown))

    # predict mode: Space on it, a change, the weights hidden, m
    press("Tab")
    check(active() == "ctl-predict", "then predict: %s" % active())
    press(" ")
    stats = "--stats" if "--stats" not in args else None

    def entropy(opts):
        """attn --stats' entropy of the chosen row and block."""
        i, n = browser.js(FOCUS)[:2]
        ref.load(page("stats", opts + ([stats] if stats else [])))
        return ref.js("document.querySelectorAll('table.stats')[%d]"
                      ".tBodies[0].rows[%d].cells[3].textContent" % (n, i))
    before = entropy(said)
    browser.js("document.getElementById('ctl-causal').focus()")
    press(" ")
    state["causal"] = not state["causal"]
    hidden = browser.js(
        "[getComputedStyle(document.querySelector('#weights td'))"
        ".visibility, getComputedStyle(document.querySelector('#output td'))"
        ".visibility, document.getElementById('predict').hidden, "
        "document.getElementById('predict-q').textContent]")
    check(hidden[:3] == ["hidden", "hidden", False] and
          "more concentrated or more spread" in hidden[3],
          "a change in predict mode hides the weights and asks: %r" % hidden)
    press("m")
    said = agree("the causal mask in predict mode, once answered")
    after = entropy(said)
    result = browser.js("document.getElementById('predict-result')"
                        ".textContent")
    shown = browser.js("getComputedStyle(document.querySelector("
                       "'#weights td')).visibility")
    if "-" in (before, after):
        way = "no softmax"
        told = "no softmax" in result
    else:
        way = ("more concentrated" if float(after) < float(before) else
               "more spread" if float(after) > float(before) else
               "unchanged")
        told = ("entropy %s \u2192 %s" % (before, after)) in result and \
            ("are " + way) in result
    check(shown == "visible" and told and "You said more concentrated" in
          result, "m shows them, with attn's entropies %s and %s (%s): %r" %
          (before, after, way, result))

    # step through, keys only
    browser.js("document.getElementById('ctl-steps').focus()")
    press("Enter")
    STEP = ("[document.body.classList.contains('steps'), Array.prototype"
            ".filter.call(document.querySelectorAll('main > section'), "
            "function (s) { return getComputedStyle(s).display !== 'none'; })"
            ".map(function (s) { return s.id; }), parseFloat(getComputedStyle("
            "document.querySelector('main td')).fontSize), "
            "document.getElementById('step-where').textContent]")
    on, shown, size, where = browser.js(STEP)
    check(on and shown == ["q"] and size >= 24,
          "Enter on step through: one stage in large type, the first Q as "
          "read: %r, %r px, %r" % (shown, size, where))
    first = shown
    press("ArrowRight")
    on, shown, size, where = browser.js(STEP)
    check(shown == ["k"] and "stage 2 of" in where,
          "ArrowRight shows the next stage alone, K as read: %r %r" %
          (shown, where))
    browser.viewport(390, 800, mobile=True)
    wide = browser.js("[document.documentElement.scrollWidth, "
                      "window.innerWidth]")
    check(wide[0] <= wide[1], "stepping at a phone's width: nothing wider "
          "than the screen: %s" % wide)
    browser.viewport(1000, 900)
    press("ArrowLeft")
    on, shown, size, where = browser.js(STEP)
    check(shown == first, "ArrowLeft goes back: %r" % shown)
    press("Escape")
    on, shown, size, where = browser.js(STEP)
    check(not on and len(shown) > 1 and active() == "ctl-steps",
          "Escape shows every stage again: %r" % shown)

    # a phone's width
    browser.viewport(390, 800, mobile=True)
    browser.load(url)
    wide = browser.js("[document.documentElement.scrollWidth, "
                      "window.innerWidth]")
    check(wide[0] <= wide[1], "at 390 px nothing is wider than the screen: "
          "%s" % wide)
    shot = os.path.join(outdir, case + "-phone.png")
    browser.screenshot(shot)
    check(browser.errors() == [], "still no console errors: %s" %
          browser.errors())


try:
    for case, args in cases:
        off = None
        if args[:1] == ["--off"]:
            off, args = args[1], args[2:]
        lines, failed = [], 0
        try:
            run_case()
        except Exception as e:
            check(False, "stopped: %s: %s" % (type(e).__name__, e))
        print("%s case %s: %d checks" % ("FAIL" if failed else "PASS", case,
                                         len(lines)))
        for line in lines:
            print("    " + line)
        status = status or failed
finally:
    browser.close()
    ref.close()
sys.exit(1 if status else 0)
