# damage.py IN OUT MEMBER stored|deflated - IN's members copied into OUT,
# stored or deflated, with the lowest bit of MEMBER's first element
# flipped (the byte after its .npy header, version 1.0) while the
# archive keeps the CRC-32 of the bytes as they were: a member damaged
# after it was written, which numpy.load refuses ("Bad CRC-32").
import struct
import sys
import zipfile
import zlib

src, dst, member, how = sys.argv[1:5]
method = zipfile.ZIP_STORED if how == "stored" else zipfile.ZIP_DEFLATED
with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w", method) as out:
    for info in z.infolist():
        data = bytearray(z.read(info))
        if info.filename == member:
            good = struct.pack("<I", zlib.crc32(data))
            data[10 + struct.unpack("<H", data[8:10])[0]] ^= 1
            bad = struct.pack("<I", zlib.crc32(data))
        out.writestr(info.filename, bytes(data))
with open(dst, "rb") as f:
    b = f.read()
# The CRC is in the member's local header and in its central directory
# entry: both get the CRC of the bytes before the damage.
assert b.count(bad) == 2, "the member's CRC-32 is not found twice"
with open(dst, "wb") as f:
    f.write(b.replace(bad, good))
