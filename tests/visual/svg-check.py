"""svg-check.py SVG PNG - check a --svg picture as rsvg-convert drew it:
the PNG has the size the SVG declares, cells of weight 1 and 0 (when the
picture has them) are drawn in viridis's yellow and purple, unlike each
other, and masked cells in neither.  Cells are found by their <title>
("query, key: value"), so nothing here knows the layout.  Prints one line
per check; exits 1 when one fails."""
import sys
import xml.etree.ElementTree as ET

import png

NS = "{http://www.w3.org/2000/svg}"
svg_path, png_path = sys.argv[1], sys.argv[2]
root = ET.parse(svg_path).getroot()
image = png.read(png_path)
failed = 0


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what)
    failed += not ok


def near(rgb, want, tol=12):
    return all(abs(a - b) <= tol for a, b in zip(rgb, want))


w, h = float(root.get("width")), float(root.get("height"))
check(image[0] == round(w) and image[1] == round(h),
      "PNG is %dx%d, the SVG says %gx%g" % (image[0], image[1], w, h))
cells = {}
for rect in root.iter(NS + "rect"):
    title = rect.find(NS + "title")
    if title is None:
        continue
    value = title.text.rsplit(": ", 1)[1]
    x = float(rect.get("x")) + float(rect.get("width")) / 2
    y = float(rect.get("y")) + float(rect.get("height")) / 2
    # the cell's colour a quarter in, away from the value printed in it
    cells.setdefault(value, []).append(
        png.pixel(image, x - float(rect.get("width")) / 4, y))
check(len(cells) > 0, "%d kinds of cell found by their titles" % len(cells))
if "1" in cells and "0" in cells:
    one, zero = cells["1"][0], cells["0"][0]
    check(near(one, (253, 231, 37)), "weight 1 is yellow: %s" % (one,))
    check(near(zero, (68, 1, 84)), "weight 0 is purple: %s" % (zero,))
    check(one != zero, "weights 1 and 0 differ in colour")
for rgb in cells.get("masked", []):
    check(not near(rgb, (68, 1, 84), 40) and not near(rgb, (253, 231, 37), 40),
          "a masked cell is neither: %s" % (rgb,))
sys.exit(1 if failed else 0)
