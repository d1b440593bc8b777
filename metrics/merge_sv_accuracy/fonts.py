"""A Hangul font for matplotlib figures, registered from its file.

matplotlib chooses fonts from a list it caches the first time it runs: a font installed after that is not
in the list, and its default (DejaVu Sans) has no Hangul, so Korean labels come out as empty boxes with
"Glyph ... missing" warnings. :func:`hangul_font` finds a font *file* with Hangul glyphs (the file named by
``KOMETRICS_HANGUL_FONT``, then well-known system paths such as fonts-nanum's NanumGothic, then any system
font whose file name says Nanum / Noto CJK / Malgun ...), checks that it really has Hangul, and registers it
with ``matplotlib.font_manager.fontManager.addfont``. :func:`hangul_rc` gives the settings a figure is drawn
with (``matplotlib.rc_context(hangul_rc())``): that font first, DejaVu Sans for the glyphs it lacks. Where no
Hangul font exists at all, one warning says which package to install.

This file is kept identical in ``metrics/korbertscore/`` and ``metrics/merge_sv_accuracy/`` (each metric
folder ships alone as a Space); a test checks that the copies are equal.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["FONT_FILES", "INSTALL_HINT", "hangul_font", "hangul_rc"]

#: Where Hangul fonts usually are: Debian/Ubuntu fonts-nanum and fonts-noto-cjk, Fedora, macOS, Windows.
FONT_FILES = (
    "/usr/share/fonts/truetype/nanum/NanumGothic.ttf",
    "/usr/share/fonts/nanum/NanumGothic.ttf",
    "/usr/share/fonts/naver-nanum/NanumGothic.ttf",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/System/Library/Fonts/AppleSDGothicNeo.ttc",
    "/Library/Fonts/AppleGothic.ttf",
    "C:/Windows/Fonts/malgun.ttf",
)
INSTALL_HINT = ("no font with Hangul glyphs was found, so Korean text in figures shows as empty boxes: install "
                "one (Debian/Ubuntu: `apt-get install fonts-nanum`; Fedora: `dnf install naver-nanum-gothic-fonts`) "
                "or set KOMETRICS_HANGUL_FONT=/path/to/a/korean/font.ttf")
_NAME_HINTS = ("nanum", "notosanscjk", "notoserifcjk", "notosanskr", "malgun", "applesdgothic", "applegothic",
               "undotum", "unbatang", "baekmuk", "gulim", "batang", "dotum")


def _has_hangul(path: str) -> bool:
    from matplotlib import ft2font

    try:
        font = ft2font.FT2Font(path)
    except (OSError, RuntimeError, ValueError):
        return False
    return font.get_char_index(ord("한")) != 0 and font.get_char_index(ord("글")) != 0


def _candidates() -> Iterator[str]:
    env = os.environ.get("KOMETRICS_HANGUL_FONT")
    if env:
        yield env
    yield from FONT_FILES
    from matplotlib import font_manager

    for path in sorted(font_manager.findSystemFonts()):
        name = Path(path).name.lower().replace("-", "").replace("_", "").replace(" ", "")
        if any(hint in name for hint in _NAME_HINTS):
            yield path


@functools.cache
def hangul_font() -> str | None:
    """The family name of a Hangul font registered with matplotlib from its file, or None when the system
    has none (then one warning, once per process, says what to install)."""
    from matplotlib import font_manager

    for path in _candidates():
        if os.path.isfile(path) and _has_hangul(path):
            font_manager.fontManager.addfont(path)
            return font_manager.FontProperties(fname=path).get_name()
    warnings.warn(INSTALL_HINT, UserWarning, stacklevel=2)
    return None


def hangul_rc() -> dict[str, Any]:
    """``rcParams`` for ``matplotlib.rc_context``: the Hangul font first, DejaVu Sans for the glyphs it lacks,
    and an ASCII minus sign (which every font has)."""
    family = hangul_font()
    rc: dict[str, Any] = {"axes.unicode_minus": False}
    if family is not None:
        rc["font.family"] = [family, "DejaVu Sans"]
    return rc
