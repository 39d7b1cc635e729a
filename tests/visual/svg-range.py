"""svg-range.py SVG PNG QUERY - how far apart the colours of one row of a
--svg picture are, as rsvg-convert drew it: the row's cells are found by
their <title> ("QUERY, key: value"), each read a quarter in from its
left edge (away from the value printed in it).  Prints

    spread D     the largest RGB distance between two cells of the row
    top R,G,B    the colour of the row's largest weight
    low R,G,B    the colour of its smallest
    top-yellow   when that of the largest is viridis's yellow (the top
                 of the scale), within 12 a channel as svg-check.py judges

for svg.sh to judge (--color-range row must spread a near-uniform row
over the scale, unit leaves it in a few neighbouring colours)."""
import math
import sys
import xml.etree.ElementTree as ET

import png

NS = "{http://www.w3.org/2000/svg}"
svg_path, png_path, query = sys.argv[1], sys.argv[2], sys.argv[3]
root = ET.parse(svg_path).getroot()
image = png.read(png_path)
row = []
for rect in root.iter(NS + "rect"):
    title = rect.find(NS + "title")
    if title is None or not title.text.startswith(query + ", "):
        continue
    value = float(title.text.rsplit(": ", 1)[1])
    x = float(rect.get("x")) + float(rect.get("width")) / 4
    y = float(rect.get("y")) + float(rect.get("height")) / 2
    row.append((value, png.pixel(image, x, y)))
if len(row) < 2:
    print("no row %r in %s" % (query, svg_path))
    sys.exit(1)
spread = max(math.dist(a[1], b[1]) for a in row for b in row)
row.sort()
print("spread %d" % round(spread))
print("top %d,%d,%d" % row[-1][1])
print("low %d,%d,%d" % row[0][1])
if all(abs(a - b) <= 12 for a, b in zip(row[-1][1], (253, 231, 37))):
    print("top-yellow")
