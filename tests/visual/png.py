"""png.py - read a PNG with the standard library alone (zlib), for tests
that look at what rsvg-convert and Chromium drew: its size, and the
colour of a pixel.  Handles 8-bit RGB and RGBA, non-interlaced (what both
write)."""
import struct
import zlib


def read(path):
    """(width, height, rows): rows[y] is a bytes object of RGBA pixels."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s is not a PNG" % path)
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError("%s: depth %d colour type %d interlace %d" %
                         (path, depth, ctype, interlace))
    bpp = 4 if ctype == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        prev = line
        if bpp == 3:
            line = bytearray(b for k in range(width)
                             for b in (*line[3 * k:3 * k + 3], 255))
        rows.append(bytes(line))
    return width, height, rows


def pixel(image, x, y):
    """The (r, g, b) of pixel (x, y)."""
    _, _, rows = image
    row = rows[int(y)]
    return tuple(row[4 * int(x):4 * int(x) + 3])
