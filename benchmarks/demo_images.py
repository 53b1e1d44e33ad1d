"""Deterministic demo images for the presets' ``demo_items``: small flat-colour PNG drawings with a
caption, distinguishable at a glance and a few KB each. No randomness: colours and shapes come
from a hash of the caption, so the same call always writes the same bytes."""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

SIZE = (320, 320)
SHAPES = ("circle", "square", "triangle", "diamond", "bars", "rings")


def _palette(seed: str) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
    h = hashlib.sha256(seed.encode("utf-8")).digest()
    bg = (150 + h[0] % 100, 150 + h[1] % 100, 150 + h[2] % 100)
    fg = (h[3] % 140, h[4] % 140, h[5] % 140)
    return bg, fg, h[6]


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size)
    except (TypeError, OSError):  # Pillow without FreeType
        return ImageFont.load_default()


def draw_image(
    folder: Path,
    name: str,
    caption: str,
    *,
    subtitle: str = "",
    shape: str | None = None,
    size: tuple[int, int] = SIZE,
    mirror: bool = False,
) -> str:
    """Write ``folder/name`` (a PNG) and return ``name`` (the path relative to ``folder``)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    bg, fg, n = _palette(caption + "|" + subtitle)
    w, h = size
    img = Image.new("RGB", size, bg)
    d = ImageDraw.Draw(img)
    shape = shape or SHAPES[n % len(SHAPES)]
    cx, cy, r = w // 2, int(h * 0.42), int(min(w, h) * 0.22)
    if mirror:
        cx = w - cx
    if shape == "circle":
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fg)
    elif shape == "square":
        d.rectangle((cx - r, cy - r, cx + r, cy + r), fill=fg)
    elif shape == "triangle":
        d.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=fg)
    elif shape == "diamond":
        d.polygon([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], fill=fg)
    elif shape == "bars":
        for i in range(4):
            x = cx - r + i * (r // 2)
            d.rectangle((x, cy - r + i * 8, x + r // 3, cy + r), fill=fg)
    elif shape == "person":
        d.ellipse((cx - r // 3, cy - r, cx + r // 3, cy - r // 3), fill=fg)
        d.rectangle((cx - r // 2, cy - r // 4, cx + r // 2, cy + r), fill=fg)
    else:  # rings
        for i in range(3):
            rr = r - i * (r // 3)
            d.ellipse((cx - rr, cy - rr, cx + rr, cy + rr), outline=fg, width=6)
    d.rectangle((0, h - 78, w, h), fill=(250, 250, 250))
    font = _font(18)
    small = _font(13)
    lines = textwrap.wrap(caption, width=30)[:2]
    y = h - 72
    for line in lines:
        d.text((10, y), line, fill=(20, 20, 20), font=font)
        y += 22
    if subtitle:
        d.text((10, h - 22), subtitle[:44], fill=(90, 90, 90), font=small)
    img = img.quantize(colors=16)
    img.save(folder / name, format="PNG", optimize=True)
    return name
