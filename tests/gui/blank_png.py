"""Writes a blank (one colour) RGB PNG of WxH pixels: what a screenshot of a panel that drew
nothing looks like, for the test of loupe_png_check itself.

usage: blank_png.py OUT.png W H
"""
import struct
import sys
import zlib


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def main():
    out, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    row = b"\x00" + b"\x1e\x1e\x1e" * w  # filter byte 0, then ImGui's dark background
    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(row * h))
    png += chunk(b"IEND", b"")
    with open(out, "wb") as f:
        f.write(png)


if __name__ == "__main__":
    main()
