#!/usr/bin/env python3
"""Renders a `tmux capture-pane -p -e` dump (ANSI colours) to a PNG, for the README.

Usage: python3 scripts/screenshot.py [--light] capture.ansi assets/screenshot.png
`--light` draws on a white background with dark default text, as a light terminal does (for the
light theme's screenshot). Needs Pillow (`pip install pillow`) and the DejaVu Sans Mono font."""
import re
import sys
import unicodedata

from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
SIZE = 15
PALETTE = [
    (30, 30, 30), (205, 49, 49), (13, 188, 121), (229, 229, 16),
    (36, 114, 200), (188, 63, 188), (17, 168, 205), (229, 229, 229),
    (102, 102, 102), (241, 76, 76), (35, 209, 139), (245, 245, 67),
    (59, 142, 234), (214, 112, 214), (41, 184, 219), (255, 255, 255),
]
FG, BG = (220, 220, 220), (24, 24, 28)


def color256(n):
    if n < 16:
        return PALETTE[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    v = 8 + (n - 232) * 10
    return (v, v, v)


def parse(text):
    rows = []
    for line in text.split("\n"):
        fg, bg, bold, rev = FG, BG, False, False
        cells = []
        for part in re.split(r"(\x1b\[[0-9;]*m)", line):
            if part.startswith("\x1b["):
                codes = [int(c) if c else 0 for c in part[2:-1].split(";")]
                i = 0
                while i < len(codes):
                    c = codes[i]
                    if c == 0:
                        fg, bg, bold, rev = FG, BG, False, False
                    elif c == 1:
                        bold = True
                    elif c == 7:
                        rev = True
                    elif c == 22:
                        bold = False
                    elif c == 27:
                        rev = False
                    elif 30 <= c <= 37:
                        fg = PALETTE[c - 30]
                    elif 90 <= c <= 97:
                        fg = PALETTE[c - 90 + 8]
                    elif c == 39:
                        fg = FG
                    elif 40 <= c <= 47:
                        bg = PALETTE[c - 40]
                    elif 100 <= c <= 107:
                        bg = PALETTE[c - 100 + 8]
                    elif c == 49:
                        bg = BG
                    elif c in (38, 48) and i + 4 < len(codes) and codes[i + 1] == 2:
                        rgb = tuple(codes[i + 2:i + 5])
                        if c == 38:
                            fg = rgb
                        else:
                            bg = rgb
                        i += 4
                    elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
                        if c == 38:
                            fg = color256(codes[i + 2])
                        else:
                            bg = color256(codes[i + 2])
                        i += 2
                    i += 1
            else:
                for ch in part:
                    f, b = (bg, fg) if rev else (fg, bg)
                    cells.append((ch, f, b, bold))
                    if unicodedata.east_asian_width(ch) in ("W", "F"):
                        cells.append(("", f, b, bold))  # the second cell of a wide char
        rows.append(cells)
    return rows


def main():
    global FG, BG
    args = sys.argv[1:]
    if args and args[0] == "--light":
        FG, BG = (30, 30, 30), (255, 255, 255)
        args = args[1:]
    src, dst = args[0], args[1]
    rows = parse(open(src, encoding="utf-8").read().rstrip("\n"))
    font, bold = ImageFont.truetype(FONT, SIZE), ImageFont.truetype(BOLD, SIZE)
    cw = int(font.getlength("M"))
    ch = SIZE + 4
    width = max(len(r) for r in rows)
    img = Image.new("RGB", (width * cw + 16, len(rows) * ch + 16), BG)
    d = ImageDraw.Draw(img)
    for y, row in enumerate(rows):
        for x, (c, f, b, is_bold) in enumerate(row):
            px, py = 8 + x * cw, 8 + y * ch
            if b != BG:
                d.rectangle([px, py, px + cw, py + ch], fill=b)
            d.text((px, py + 1), c, font=bold if is_bold else font, fill=f)
    img.save(dst)


if __name__ == "__main__":
    main()
