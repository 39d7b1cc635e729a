"""html-check.py PAGE DIR [--hover SELECTOR TEXT]... [--tab TEXT]
[--no-arithmetic] - load an attn -f html page in headless Chromium (cdp.py)
as a person would, and check:

- it loads with no console error, no uncaught exception, and asks for
  nothing but itself (the page is standalone);
- a screenshot at 1000x900 (DIR/desktop.png) is not blank;
  DIR/hover.png is the screen with the last hovered cell's arithmetic;
- moving the mouse over the cell SELECTOR finds (the first match,
  scrolled into view) shows that cell's worked arithmetic in the panel,
  containing TEXT; pressing Tab, past the workbench's controls, focuses
  the first number and shows its arithmetic, containing TEXT
  (--no-arithmetic: the page says the input is too large, and no cell
  carries any);
- at a phone's width (375 px) nothing is wider than the screen, and a
  screenshot (DIR/phone.png) is taken.

Prints a line per check; exits 1 when one fails.
"""
import os
import sys

import cdp
import png

args = sys.argv[1:]
page, outdir = os.path.abspath(args[0]), args[1]
hovers, tab, arith = [], None, True
i = 2
while i < len(args):
    if args[i] == "--hover":
        hovers.append((args[i + 1], args[i + 2]))
        i += 3
    elif args[i] == "--tab":
        tab = args[i + 1]
        i += 2
    elif args[i] == "--no-arithmetic":
        arith = False
        i += 1
    else:
        raise SystemExit("html-check: unknown argument " + args[i])

failed = 0


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what)
    failed += not ok


def not_blank(path, width, height):
    image = png.read(path)
    colours = {png.pixel(image, x, y)
               for x in range(0, image[0], 7) for y in range(0, image[1], 7)}
    return image[0] == width and image[1] == height and len(colours) > 5


b = cdp.Browser()
try:
    url = "file://" + page
    b.viewport(1000, 900)
    b.load(url)
    check(b.errors() == [], "no console errors: %s" % b.errors())
    check(b.requests() == [url], "nothing fetched but the page: %s" %
          b.requests())
    shot = os.path.join(outdir, "desktop.png")
    b.screenshot(shot)
    check(not_blank(shot, 1000, 900), "a screenshot shows the page (%s)"
          % shot)
    panel = "document.getElementById('work-text').textContent"
    for selector, text in hovers:
        cell = "document.querySelector(%r)" % selector
        b.js(cell + ".scrollIntoView({block: 'center'})")
        box = b.js("(function () { var r = %s.getBoundingClientRect(); "
                   "return [r.left + r.width / 2, r.top + r.height / 2]; "
                   "})()" % cell)
        b.mouse_over(box[0], box[1])
        want = b.js(cell + ".getAttribute('data-a')")
        shown = b.until("%s === %s.getAttribute('data-a') && %s" %
                        (panel, cell, panel))
        check(shown == want and text in (shown or ""),
              "hovering %s shows its arithmetic, with %r: %r" %
              (selector, text, shown))
        check(b.js(cell + ".classList.contains('current')"),
              "the hovered cell is marked")
        shot = os.path.join(outdir, "hover.png")
        b.screenshot(shot)
    if tab is not None:
        # The pointer leaves the hovered cell first: left there, the
        # scroll below moves another number under it, whose mouseover
        # Chromium may send after the Tab's focus (a loaded machine), and
        # the panel then shows that number instead.
        b.mouse_over(0, 0)
        b.js("window.scrollTo(0, 0); document.activeElement.blur()")
        b.js("new Promise(r => requestAnimationFrame(() => "
             "requestAnimationFrame(() => r(1))))")
        # past the workbench's controls (html-bench.py tests them)
        for presses in range(1, 31):
            b.key("Tab", "Tab", 9)
            if b.js("document.activeElement.hasAttribute('data-a')"):
                break
        shown = b.until("document.activeElement.hasAttribute('data-a') && "
                        "%s === document.activeElement.getAttribute('data-a')"
                        " && %s" % (panel, panel))
        first = b.js("document.activeElement === document.querySelector("
                     "'main [data-a]')")
        check(isinstance(shown, str) and tab in shown and first,
              "Tab, past the controls (%d presses), focuses the first number "
              "and shows its arithmetic, with %r: %r" % (presses, tab, shown))
    if not arith:
        check(b.js("document.querySelectorAll('[data-a]').length") == 0,
              "no cell carries arithmetic")
        check("too large" in b.js("document.body.textContent"),
              "the page says the input is too large to work out")
    b.viewport(375, 740, mobile=True)
    b.load(url)
    wide = b.js("[document.documentElement.scrollWidth, window.innerWidth]")
    check(wide[0] <= wide[1], "nothing wider than a phone: %s" % wide)
    check(b.js("parseFloat(getComputedStyle(document.body).fontSize)") >= 14,
          "text of at least 14 px on a phone")
    shot = os.path.join(outdir, "phone.png")
    b.screenshot(shot)
    check(not_blank(shot, 375, 740), "a phone screenshot (%s)" % shot)
    check(b.errors() == [], "still no console errors: %s" % b.errors())
finally:
    b.close()
sys.exit(1 if failed else 0)
