"""Read the pixels of a PNG (8-bit RGB or RGBA, not interlaced: what Chromium's screenshots are).

The browser test checks the colours a screenshot holds; a small decoder over zlib and numpy saves a
dependency on an imaging library for that.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {2: 3, 6: 4}  # colour type -> bytes per pixel at bit depth 8


def _chunks(data: bytes) -> dict[bytes, bytes]:
    chunks: dict[bytes, bytes] = {}
    offset = len(_SIGNATURE)
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        chunks[kind] = chunks.get(kind, b"") + data[offset + 8 : offset + 8 + length]
        offset += 12 + length
    return chunks


def _paeth(left: int, up: int, up_left: int) -> int:
    estimate = left + up - up_left
    distances = (abs(estimate - left), abs(estimate - up), abs(estimate - up_left))
    return (left, up, up_left)[distances.index(min(distances))]


def _unfilter_row(kind: int, row: NDArray[np.uint8], above: NDArray[np.uint8], bpp: int) -> None:
    """Undo the row's filter in place (PNG specification, section 9)."""
    if kind == 0:
        return
    if kind == 2:
        row += above
        return
    if kind == 1:
        for channel in range(bpp):
            row[channel::bpp] = np.cumsum(row[channel::bpp], dtype=np.uint64) % 256
        return
    values, up = row.tolist(), above.tolist()
    for i in range(len(values)):
        left = values[i - bpp] if i >= bpp else 0
        if kind == 3:
            values[i] = (values[i] + (left + up[i]) // 2) % 256
        else:
            up_left = up[i - bpp] if i >= bpp else 0
            values[i] = (values[i] + _paeth(left, up[i], up_left)) % 256
    row[:] = values


def read_rgb(path: Path) -> NDArray[np.uint8]:
    """The image as a (height, width, 3) array of RGB bytes."""
    data = path.read_bytes()
    if not data.startswith(_SIGNATURE):
        raise ValueError(f"{path} is not a PNG")
    chunks = _chunks(data)
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    if depth != 8 or colour not in _CHANNELS or interlace:
        raise ValueError(f"{path}: unsupported PNG (depth {depth}, colour type {colour})")
    bpp = _CHANNELS[colour]
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), dtype=np.uint8)
    rows = raw.reshape(height, 1 + width * bpp)
    pixels = rows[:, 1:].copy()
    above = np.zeros(width * bpp, dtype=np.uint8)
    for y in range(height):
        _unfilter_row(int(rows[y, 0]), pixels[y], above, bpp)
        above = pixels[y]
    return pixels.reshape(height, width, bpp)[:, :, :3]
