#!/usr/bin/python3
"""Remake the image files the reader tests take: a valid JPEG-compressed YCbCr
TIFF of tile_256.png and its pixels as an independent decoder (Pillow) gives
them, and the broken files of the CLI cases (a PNG claiming 100000x100000
pixels, a PNG and a TIFF cut short, a TIFF in a compression libtiff lacks)."""
import io
import os
import struct
import zlib

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
CASES = os.path.join(HERE, "..", "cases")

tile = Image.open(os.path.join(DATA, "tile_256.png")).convert("RGB")

# JPEG in TIFF with YCbCr photometric and 2x2 chroma subsampling in one strip,
# what scanners and slide exporters write, put together here by hand: the
# strip is a whole JPEG stream from Pillow's encoder, and the expected pixels
# are that stream decoded as a JPEG, without libtiff.
def ifd_entry(tag, kind, count, value):
    if kind == 3 and count == 1:
        return struct.pack("<HHIHH", tag, kind, count, value, 0)
    return struct.pack("<HHII", tag, kind, count, value)


def jpeg_ycbcr_tiff(image):
    jpeg = io.BytesIO()
    image.save(jpeg, format="JPEG", quality=90, subsampling="4:2:0")
    strip = jpeg.getvalue()
    w, h = image.size
    n = 12
    extra_at = 8 + 2 + 12 * n + 4  # bits per sample, subsampling
    data_at = extra_at + 6 + 4
    entries = [ifd_entry(256, 3, 1, w), ifd_entry(257, 3, 1, h),
               ifd_entry(258, 3, 3, extra_at), ifd_entry(259, 3, 1, 7),
               ifd_entry(262, 3, 1, 6), ifd_entry(273, 4, 1, data_at),
               ifd_entry(277, 3, 1, 3), ifd_entry(278, 3, 1, h),
               ifd_entry(279, 4, 1, len(strip)), ifd_entry(284, 3, 1, 1),
               struct.pack("<HHIHH", 530, 3, 2, 2, 2), ifd_entry(531, 3, 1, 1)]
    assert len(entries) == n
    return (b"II*\0" + struct.pack("<I", 8) + struct.pack("<H", n) + b"".join(entries) +
            struct.pack("<I", 0) + struct.pack("<HHH", 8, 8, 8) + struct.pack("<HH", 0, 0) +
            strip), strip


tif_bytes, jpeg_bytes = jpeg_ycbcr_tiff(tile)
with open(os.path.join(DATA, "tile_256_jpeg.tif"), "wb") as f:
    f.write(tif_bytes)
Image.open(io.BytesIO(jpeg_bytes)).convert("RGB").save(
    os.path.join(DATA, "tile_256_jpeg_decoded.png"))


def chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def write(case, name, data):
    os.makedirs(os.path.join(CASES, case), exist_ok=True)
    with open(os.path.join(CASES, case, name), "wb") as f:
        f.write(data)


# 100000 x 100000 RGB: its header alone must get it refused
huge = (b"\x89PNG\r\n\x1a\n" +
        chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0)) +
        chunk(b"IDAT", zlib.compress(b"\0" * 1024)) + chunk(b"IEND", b""))
write("segment_png_too_large", "huge.png", huge)

png = io.BytesIO()
tile.save(png, format="PNG")
write("segment_png_truncated", "cut.png", png.getvalue()[: len(png.getvalue()) // 2])

tif = io.BytesIO()
tile.save(tif, format="TIFF")  # uncompressed, strips, IFD before the pixels
raw = tif.getvalue()
write("segment_tiff_truncated", "cut.tif", raw[: len(raw) // 2])

# A minimal 8x8 grey TIFF whose Compression is JPEG 2000 (34712), which
# libtiff does not decode.
def tiff_with_compression(scheme, w=8, h=8):
    pixels = bytes(range(w * h))
    entries = [(256, 3, 1, w), (257, 3, 1, h), (258, 3, 1, 8), (259, 3, 1, scheme),
               (262, 3, 1, 1), (273, 4, 1, 0), (277, 3, 1, 1), (278, 3, 1, h),
               (279, 4, 1, len(pixels))]
    ifd_at = 8
    data_at = ifd_at + 2 + 12 * len(entries) + 4
    out = b"II*\0" + struct.pack("<I", ifd_at) + struct.pack("<H", len(entries))
    for tag, kind, count, value in entries:
        if tag == 273:
            value = data_at
        if kind == 3:
            out += struct.pack("<HHIHH", tag, kind, count, value, 0)
        else:
            out += struct.pack("<HHII", tag, kind, count, value)
    return out + struct.pack("<I", 0) + pixels


write("segment_tiff_unsupported_compression", "jp2k.tif", tiff_with_compression(34712))
