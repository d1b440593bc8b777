"""Phrase-break annotation formats: the canonical string, per-word labels and K-ToBI break indices.

An utterance ``W = w_1 ... w_n`` is a sequence of words (eojeols, separated by spaces). A phrase-break
annotation ``B`` says, for each position ``i = 1 .. n-1`` *between* word ``w_i`` and word ``w_{i+1}``,
whether a prosodic boundary follows ``w_i`` and of which type.

Three interchangeable forms:

- **canonical string**: the words separated by spaces, with a separate token after a word that is
  followed by a boundary: ``/`` = accentual phrase (AP) boundary, ``//`` = intonation phrase (IP)
  boundary, nothing = no boundary (NB), e.g. ``"오늘은 / 날씨가 정말 // 좋네요"``.
- **per-word labels**: one label per word, the boundary *after* that word: ``"NB"``, ``"AP"`` or ``"IP"``
  (a token-classification tagger predicts these; the example gives ``["AP", "NB", "IP", "IP"]``).
- **K-ToBI break indices**: one integer per word, the break after it. ``NB = 1`` (word boundary inside an
  accentual phrase), ``AP = 2``, ``IP = 3``. Reading, ``0`` (no break, clitic-like) is taken as NB and
  ``4`` (used for IP in some K-ToBI variants, or for the utterance end) as IP.

The utterance-final position. After the last word there is always the end of the utterance, which is an
intonation-phrase boundary in K-ToBI; the text says nothing about it, so it is **not** a scored position
(an utterance of ``n`` words has ``n - 1`` boundary positions). The canonical string therefore ends with
a word; a trailing ``/`` or ``//`` after the last word is accepted when parsing and carries no
information (``"a / b //"`` equals ``"a / b"``). Per-word labels and break indices give the last word
``"IP"`` / ``3`` when written and accept any valid label there when read.

Internally an annotation is a tuple of words and a tuple of ``n - 1`` boundary codes
(``0 = NB, 1 = AP, 2 = IP``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

__all__ = [
    "LABELS",
    "NB",
    "AP",
    "IP",
    "Annotation",
    "AnnotationError",
    "parse_annotation",
    "format_annotation",
    "annotation_to_labels",
    "labels_to_annotation",
    "annotation_to_break_indices",
    "break_indices_to_annotation",
    "canonicalize",
]

#: Label names indexed by boundary code.
LABELS = ("NB", "AP", "IP")
NB, AP, IP = 0, 1, 2
#: Boundary token of the canonical string for each code (NB has none).
_TOKENS = {AP: "/", IP: "//"}
_TOKEN_CODE = {"/": AP, "//": IP}
_LABEL_CODE = {name: code for code, name in enumerate(LABELS)}
#: K-ToBI break index written for each code, and codes read for each index.
_BREAK_OF_CODE = {NB: 1, AP: 2, IP: 3}
_CODE_OF_BREAK = {0: NB, 1: NB, 2: AP, 3: IP, 4: IP}


class AnnotationError(ValueError):
    """A malformed annotation. The message shows where: the token index and a caret under the string."""


class Annotation(NamedTuple):
    """An utterance's words and the boundary code after each word but the last (``len(words) - 1``)."""

    words: tuple[str, ...]
    breaks: tuple[int, ...]

    def __str__(self) -> str:
        return format_annotation(self)


def _where(text: str, tokens: list[str], k: int) -> str:
    start = sum(len(t) + 1 for t in tokens[:k])  # tokens are re-joined with single spaces
    joined = " ".join(tokens)
    return f"\n  {joined}\n  {' ' * start}^"


def parse_annotation(text: str, *, name: str = "annotation") -> Annotation:
    """Parse a canonical annotation string into an :class:`Annotation`.

    Tokens are separated by whitespace; ``/`` and ``//`` are boundary tokens, every other token is a word.
    Raises :class:`AnnotationError` (a ``ValueError``) naming ``name`` and pointing at the offending token
    when the string is not a string, is empty, starts with a boundary, has two boundary tokens in a row, or
    has a token such as ``///`` or a word glued to a slash (``word/``).

    >>> parse_annotation("오늘은 / 날씨가 정말 // 좋네요")
    Annotation(words=('오늘은', '날씨가', '정말', '좋네요'), breaks=(1, 0, 2))
    """
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a string, got {type(text).__name__}")
    tokens = text.split()
    if not tokens:
        raise AnnotationError(f"{name} is empty: an annotation needs at least one word")
    words: list[str] = []
    breaks: list[int] = []
    previous_was_break = False
    for k, tok in enumerate(tokens):
        if tok in _TOKEN_CODE:
            if not words:
                raise AnnotationError(f"{name}: boundary {tok!r} at token {k} comes before any word"
                                      f"{_where(text, tokens, k)}")
            if previous_was_break:
                raise AnnotationError(f"{name}: two boundary tokens in a row at token {k}; write one "
                                      f"boundary ('/' or '//') per position{_where(text, tokens, k)}")
            breaks[-1] = _TOKEN_CODE[tok]
            previous_was_break = True
            continue
        if "/" in tok:
            raise AnnotationError(f"{name}: token {k} {tok!r} mixes a word and '/'; boundaries are separate "
                                  f"tokens '/' (AP) or '//' (IP) surrounded by spaces{_where(text, tokens, k)}")
        words.append(tok)
        breaks.append(NB)
        previous_was_break = False
    # the slot after the last word is the utterance end: not a scored position
    return Annotation(tuple(words), tuple(breaks[:-1]))


def format_annotation(annotation: Annotation) -> str:
    """The canonical string of an :class:`Annotation` (single spaces, no boundary after the last word).

    >>> format_annotation(Annotation(("가", "나", "다"), (2, 0)))
    '가 // 나 다'
    """
    words, breaks = annotation
    if len(breaks) != max(len(words) - 1, 0):
        raise ValueError(f"an annotation of {len(words)} words needs {max(len(words) - 1, 0)} boundary codes, "
                         f"got {len(breaks)}")
    out: list[str] = []
    for i, word in enumerate(words):
        out.append(word)
        if i < len(breaks) and breaks[i] != NB:
            out.append(_TOKENS[breaks[i]])
    return " ".join(out)


def canonicalize(text: str, *, name: str = "annotation") -> str:
    """Parse and re-format: one space between tokens, no trailing boundary.

    >>> canonicalize("  가 /  나 //")
    '가 / 나'
    """
    return format_annotation(parse_annotation(text, name=name))


def annotation_to_labels(text: str | Annotation) -> list[str]:
    """Per-word labels: the boundary after each word; the last word gets ``"IP"`` (the utterance end).

    >>> annotation_to_labels("오늘은 / 날씨가 정말 // 좋네요")
    ['AP', 'NB', 'IP', 'IP']
    """
    ann = parse_annotation(text) if isinstance(text, str) else text
    return [LABELS[c] for c in ann.breaks] + ["IP"]


def labels_to_annotation(words: Sequence[str], labels: Sequence[str | int], *, name: str = "labels") -> str:
    """Canonical string from words and one label per word (``"NB"``/``"AP"``/``"IP"`` or codes 0/1/2).

    The last word's label is the utterance end and is not written (any valid label is accepted there).

    >>> labels_to_annotation(["가", "나", "다"], ["AP", "NB", "NB"])
    '가 / 나 다'
    """
    if len(words) != len(labels):
        raise ValueError(f"{name}: {len(labels)} labels for {len(words)} words; give one label per word")
    codes = []
    for i, lab in enumerate(labels):
        if isinstance(lab, str):
            code = _LABEL_CODE.get(lab.upper())
        elif isinstance(lab, int) and not isinstance(lab, bool) and 0 <= lab < len(LABELS):
            code = int(lab)
        else:
            try:  # numpy integers
                code = int(lab) if int(lab) == lab and 0 <= int(lab) < len(LABELS) else None
            except (TypeError, ValueError):
                code = None
        if code is None:
            raise ValueError(f"{name}[{i}] is {lab!r}; expected one of {LABELS} or a code 0-2")
        codes.append(code)
    for i, w in enumerate(words):
        if not isinstance(w, str) or not w or w.split() != [w] or "/" in w:
            raise ValueError(f"words[{i}] is {w!r}; a word is a non-empty string without spaces or '/'")
    return format_annotation(Annotation(tuple(words), tuple(codes[:-1])))


def annotation_to_break_indices(text: str | Annotation) -> list[int]:
    """K-ToBI break index after each word (NB=1, AP=2, IP=3; the utterance end is 3).

    >>> annotation_to_break_indices("오늘은 / 날씨가 정말 // 좋네요")
    [2, 1, 3, 3]
    """
    ann = parse_annotation(text) if isinstance(text, str) else text
    return [_BREAK_OF_CODE[c] for c in ann.breaks] + [_BREAK_OF_CODE[IP]]


def break_indices_to_annotation(words: Sequence[str], indices: Sequence[int], *, name: str = "indices") -> str:
    """Canonical string from K-ToBI break indices (0-1 -> NB, 2 -> AP, 3-4 -> IP), one per word.

    >>> break_indices_to_annotation(["가", "나", "다"], [4, 1, 4])
    '가 // 나 다'
    """
    if len(words) != len(indices):
        raise ValueError(f"{name}: {len(indices)} break indices for {len(words)} words; give one per word")
    codes = []
    for i, b in enumerate(indices):
        code = _CODE_OF_BREAK.get(b) if not isinstance(b, bool) else None
        if code is None:
            raise ValueError(f"{name}[{i}] is {b!r}; K-ToBI break indices are integers 0-4")
        codes.append(code)
    return labels_to_annotation(words, codes, name=name)
