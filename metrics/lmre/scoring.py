"""LMRE scoring: a hypothesis annotation against a set of references, vectorised with numpy.

Notation (the LMRE paper's, Interspeech 2025): an utterance ``W`` of ``n`` words, a hypothesis annotation ``B_h`` and the reference
set ``R(W) = {B_r^(1), ..., B_r^(k)}``. An annotation is the set of its boundary positions
``{i : boundary after w_i, 1 <= i <= n-1}`` (``break_types="binary"``), or of ``(i, type)`` pairs with type
AP or IP (``break_types="typed"``). The utterance-final position is never scored (see ``formats``).

- ``F1(B_h, B_r) = 2 |B_h ∩ B_r| / (|B_h| + |B_r|)``, and ``1.0`` when both are empty.
- ``EM(B_h, B_r) = 1`` if ``B_h = B_r`` else ``0``.
- ``best(B_h) = max_j sim(B_h, B_r^(j))``; accepted iff ``best(B_h) > θ`` (strictly).

Vectorisation. The strings of a batch are concatenated and read as one array of code points; tokens,
boundary tokens, words, the word-by-word check of each reference against its prediction and the boundary
code after each word are all found with numpy on that array. Every scored position of every (hypothesis,
reference) pair then becomes one entry of three flat arrays (hypothesis code, reference code, pair id;
codes 0 = NB, 1 = AP, 2 = IP) and each score is a ``bincount`` over pair ids. Inputs the fast reader
flags (malformed strings, mismatched words, unusual whitespace) go through the plain parser, which raises
the error with its position.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

from .formats import LABELS, NB, Annotation, format_annotation, parse_annotation

__all__ = [
    "SIMILARITIES",
    "BREAK_TYPES",
    "NORMALIZATIONS",
    "check_inputs",
    "normalize_inputs",
    "DEFAULT_THETA",
    "ParsedInputs",
    "parse_inputs",
    "parse_annotations_plain",
    "pair_scores",
    "best_reference",
    "lmre_scores",
    "score",
    "explain",
    "signature",
    "VERSION",
]

SIMILARITIES = ("f1", "em")
BREAK_TYPES = ("binary", "typed")
#: Default acceptance threshold θ: with EM it means "equals some reference"; with F1 "shares more than
#: half of the boundaries (harmonic mean of precision and recall) with some reference".
DEFAULT_THETA = 0.5
#: Version of the metric (the kometrics release it ships with), part of every signature.
VERSION = "0.1.0"
#: Unicode normalisation of every annotation before reading: "NFC" (default; the same word typed in
#: decomposed jamo (NFD, e.g. from macOS) matches its precomposed form), "NFKC", or None (as given).
NORMALIZATIONS = ("NFC", "NFKC", None)
# Characters that show nothing: whitespace, control (Cc), format (Cf: zero-width space, BOM ...), separators.
_INVISIBLE = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})


class ParsedInputs:
    """Validated inputs, flat: one entry per scored position of each (prediction, reference) pair."""

    def __init__(self, n: int, owner: np.ndarray, starts: np.ndarray, hyp: np.ndarray, ref: np.ndarray,
                 pair: np.ndarray, reference_strings: list[str], single_spaced: bool = False) -> None:
        self.n = n  # number of predictions
        self.owner = owner  # (M,) prediction index of each reference (non-decreasing)
        self.starts = starts  # (N,) index of each prediction's first reference
        self.hyp = hyp  # (P,) hypothesis boundary code at each scored position
        self.ref = ref  # (P,) reference boundary code at the same position
        self.pair = pair  # (P,) reference index (0..M-1) the position belongs to
        self.reference_strings = reference_strings  # (M,) the reference strings as given
        self.single_spaced = single_spaced  # every string was checked to be single-spaced (fast canonical form)

    @classmethod
    def from_annotations(cls, predictions: Sequence[Annotation], references: Sequence[Annotation],
                         owner: np.ndarray, starts: np.ndarray, reference_strings: list[str]) -> ParsedInputs:
        """From parsed annotations (the plain path; references must already match their predictions)."""
        lengths = np.fromiter((len(a.breaks) for a in references), dtype=np.int64, count=len(references))
        ref = np.fromiter((c for a in references for c in a.breaks), dtype=np.int8, count=int(lengths.sum()))
        hyp = np.fromiter((c for o in owner.tolist() for c in predictions[o].breaks), dtype=np.int8,
                          count=int(lengths.sum()))
        pair = np.repeat(np.arange(len(references)), lengths)
        return cls(len(predictions), owner, starts, hyp, ref, pair, reference_strings)


def _first_difference(a: Sequence[str], b: Sequence[str]) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            if unicodedata.normalize("NFC", x) == unicodedata.normalize("NFC", y):
                return (f"word {i}: {ascii(y)} instead of {ascii(x)}, the same letters in another Unicode "
                        "normalisation form (NFD vs NFC); keep normalize='NFC' to compare them as equal")
            return f"word {i}: {y!r} instead of {x!r}"
    return f"{len(b)} words instead of {len(a)}"


def _check_normalize(normalize: Any) -> str | None:
    if normalize is False:
        return None
    if normalize not in NORMALIZATIONS:
        raise ValueError(f"normalize must be one of {NORMALIZATIONS}, got {normalize!r}")
    return normalize


def _normalized(text: Any, form: str | None) -> Any:
    if not isinstance(text, str):
        return text  # left for the checks, which name it
    if form is not None and not unicodedata.is_normalized(form, text):
        text = unicodedata.normalize(form, text)
    if all(ch.isspace() or unicodedata.category(ch) in _INVISIBLE for ch in text):
        return ""  # only zero-width spaces, BOM, control characters ...: an empty annotation
    return text


def normalize_inputs(predictions: Sequence[str], references: Sequence[Sequence[str] | str],
                     normalize: str | None = "NFC") -> tuple[list[str], list[list[str] | str]]:
    """Copies of the inputs in the Unicode form ``normalize`` (None: as given); an annotation of invisible
    characters only becomes ``""`` (an empty annotation, an error when read). Non-strings are kept as they
    are, for :func:`check_inputs` / the reader to name."""
    form = _check_normalize(normalize)
    if isinstance(predictions, str) or isinstance(references, str):
        return predictions, references  # the reader says what is wrong
    preds = [_normalized(p, form) for p in predictions]
    refs = [[_normalized(x, form) for x in r] if isinstance(r, (list, tuple)) else _normalized(r, form)
            for r in references]
    return preds, refs


def check_inputs(predictions: Any, references: Any) -> bool:
    """Check the types and nesting of the inputs, raising ``TypeError``/``ValueError`` that names the argument
    and the index: ``predictions`` a list of strings, ``references`` a list (one per prediction) of strings
    or of non-empty lists of strings. Returns whether any reference is a list (several references)."""
    for name, value in (("predictions", predictions), ("references", references)):
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise TypeError(f"{name} must be a list, got {type(value).__name__}")
    if len(predictions) != len(references):
        raise ValueError(f"got {len(predictions)} predictions but {len(references)} reference lists; "
                         "give one list of references per prediction")
    for i, p in enumerate(predictions):
        if not isinstance(p, str):
            raise TypeError(f"predictions[{i}] must be an annotation string, got {type(p).__name__} ({p!r})")
    multi = False
    for i, r in enumerate(references):
        if isinstance(r, str):
            continue
        if not isinstance(r, (list, tuple)):
            raise TypeError(f"references[{i}] must be an annotation string or a list of them, got "
                            f"{type(r).__name__} ({r!r})")
        if not r:
            raise ValueError(f"references[{i}] is empty; every prediction needs at least one reference")
        for j, x in enumerate(r):
            if not isinstance(x, str):
                raise TypeError(f"references[{i}][{j}] must be an annotation string, got {type(x).__name__} "
                                f"({x!r})")
        multi = True
    return multi


def _flatten(predictions: Sequence[str], references: Sequence[Sequence[str] | str]) -> tuple[list[str], np.ndarray,
                                                                                              np.ndarray]:
    """Flat reference strings, their owners and each prediction's first reference; checks the containers."""
    if isinstance(predictions, str) or isinstance(references, str):
        raise TypeError("predictions and references must be lists (of strings, and of lists of strings)")
    if len(predictions) != len(references):
        raise ValueError(f"got {len(predictions)} predictions but {len(references)} reference lists; "
                         "give one list of references per prediction")
    if all(type(r) is list for r in references):  # the common case, without a Python loop per reference
        counts = np.fromiter(map(len, references), dtype=np.int64, count=len(references))
        if counts.all():
            flat = list(chain.from_iterable(references))
            owner = np.repeat(np.arange(len(references)), counts)
            return flat, owner, np.cumsum(counts) - counts
    flat: list[str] = []
    counts = np.zeros(len(references), dtype=np.int64)
    for i, ref_list in enumerate(references):
        if isinstance(ref_list, str):
            flat.append(ref_list)
            counts[i] = 1
            continue
        if not isinstance(ref_list, (list, tuple)):
            raise TypeError(f"references[{i}] must be a list of annotation strings, got {type(ref_list).__name__}")
        if not ref_list:
            raise ValueError(f"references[{i}] is empty; every prediction needs at least one reference "
                             "(an utterance the builder kept no reference for cannot be scored)")
        flat.extend(ref_list)
        counts[i] = len(ref_list)
    owner = np.repeat(np.arange(len(references)), counts)
    starts = np.cumsum(counts) - counts
    return flat, owner, starts


def parse_annotations_plain(predictions: Sequence[str], references: Sequence[Sequence[str] | str]) -> ParsedInputs:
    """The plain reader: parse every string with :func:`parse_annotation`; raise at the first bad index."""
    flat, owner, starts = _flatten(predictions, references)
    preds = [parse_annotation(p, name=f"predictions[{i}]") for i, p in enumerate(predictions)]
    refs = []
    for m, (text, i) in enumerate(zip(flat, owner.tolist())):
        j = m - int(starts[i])
        ref = parse_annotation(text, name=f"references[{i}][{j}]")
        if ref.words != preds[i].words:
            raise ValueError(f"references[{i}][{j}] is not an annotation of the words of predictions[{i}] "
                             f"({_first_difference(preds[i].words, ref.words)}); a prediction and its "
                             "references must annotate the same word sequence")
        refs.append(ref)
    return ParsedInputs.from_annotations(preds, refs, owner, starts, flat)


#: Whitespace that ``str.split`` knows besides ASCII 9-13 and 32: strings with these take the plain path.
_OTHER_SPACE = np.array([0x1C, 0x1D, 0x1E, 0x1F, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
                         0x202F, 0x205F, 0x3000], dtype=np.uint32)
#: Class of each code point up to U+3000 (above: 0): 1 = ASCII whitespace, 2 = other whitespace.
_CLASS = np.zeros(0x3002, dtype=np.uint8)
_CLASS[[9, 10, 11, 12, 13, 32]] = 1
_CLASS[_OTHER_SPACE] = 2
_SLASH = ord("/")


def _read_fast(strings: list[str], n_pred: int, owner: np.ndarray) -> tuple[Any, ...] | None:
    """Vectorised reader of ``n_pred`` predictions followed by their references (``owner``: prediction of
    each reference). Returns ``(hyp, ref, pair, clean)``: flat arrays, and whether every string is
    single-spaced; or ``None`` when anything looks wrong (the caller then uses the plain reader, which
    raises the precise error).

    All strings are read as one array of code points ``c``: a token starts at a non-space after a space or
    a string start and ends before a space or a string end; ``/`` and ``//`` tokens are boundaries, the
    rest are words; every ``/`` of the text must belong to a boundary token. A reference has the words of
    its prediction iff the word lengths agree and the word characters (``c`` without spaces and slashes)
    agree, segment by segment.
    """
    try:
        c = np.frombuffer("".join(strings).encode("utf-32-le"), dtype=np.uint32)
    except (TypeError, UnicodeEncodeError):
        return None
    n_str, n_c = len(strings), len(c)
    lens = np.fromiter(map(len, strings), dtype=np.int64, count=n_str)
    if n_c == 0 or n_c != int(lens.sum()) or not lens.all():
        return None  # an empty string (the plain reader says which)
    cls = _CLASS[np.minimum(c, 0x3001)]
    if (cls == 2).any():
        return None
    space = cls == 1
    solid = ~space
    cend = np.cumsum(lens)
    cstart = cend - lens
    edge = np.zeros(n_c + 1, dtype=bool)  # edge[i]: a string starts (or ends) at position i
    edge[cstart] = True
    edge[n_c] = True
    gap = np.ones(n_c + 2, dtype=bool)  # gap[i + 1] = space[i], with gaps before and after the text
    gap[1:-1] = space
    tok_pos = np.flatnonzero(solid & (gap[:-2] | edge[:-1]))
    tok_end = np.flatnonzero(solid & (gap[2:] | edge[1:]))
    tok_len = tok_end - tok_pos + 1
    n_tok = len(tok_pos)
    slash_first = c[tok_pos] == _SLASH
    is_ip = slash_first & (tok_len == 2) & (c[np.minimum(tok_pos + 1, n_c - 1)] == _SLASH)
    is_break = (slash_first & (tok_len == 1)) | is_ip
    n_slash = int(np.count_nonzero(c == _SLASH))
    if n_slash != int(np.count_nonzero(is_break)) + int(np.count_nonzero(is_ip)):
        return None  # a '/' inside a word, or '///'
    first_tok = np.searchsorted(tok_pos, cstart)  # each string's first token (== n_tok or the next: no token)
    tok_str = np.cumsum(np.bincount(first_tok, minlength=n_tok + 1)[:n_tok]) - 1
    same_prev = np.zeros(n_tok, dtype=bool)
    same_prev[1:] = tok_str[1:] == tok_str[:-1]
    if (is_break & ~same_prev).any() or (is_break[1:] & is_break[:-1] & same_prev[1:]).any():
        return None  # a boundary first, or two in a row
    wt = np.flatnonzero(~is_break)
    w_str, w_len = tok_str[wt], tok_len[wt]
    n_words = np.bincount(w_str, minlength=n_str)
    if (n_words == 0).any():
        return None  # an empty string
    after = np.zeros(n_tok, dtype=np.int8)  # the boundary token after each token, within its string
    after[:-1] = np.where(same_prev[1:] & is_break[1:], np.where(is_ip[1:], 2, 1), 0)
    code = after[wt]
    w_off = np.cumsum(n_words) - n_words
    ref_s = np.arange(n_pred, n_str)
    if (n_words[ref_s] != n_words[owner]).any():
        return None
    rw = np.arange(int(w_off[n_pred]), len(wt)) if n_str > n_pred else np.zeros(0, dtype=np.int64)
    pw = rw - np.repeat(w_off[ref_s] - w_off[owner], n_words[ref_s])
    if (w_len[rw] != w_len[pw]).any():
        return None
    wc = c[solid & (c != _SLASH)]  # the word characters, string after string
    n_wc = np.bincount(w_str, weights=w_len, minlength=n_str).astype(np.int64)
    wc_off = np.cumsum(n_wc) - n_wc
    ridx = np.arange(int(wc_off[n_pred]), len(wc)) if n_str > n_pred else np.zeros(0, dtype=np.int64)
    if (wc[ridx] != wc[ridx - np.repeat(wc_off[ref_s] - wc_off[owner], n_wc[ref_s])]).any():
        return None
    last = np.zeros(len(wt), dtype=bool)
    last[w_off + n_words - 1] = True
    keep = ~last[rw]
    pair = np.repeat(np.arange(n_str - n_pred), n_words[ref_s])[keep]
    clean = not ((space & (c != 32)).any() or (space[1:] & space[:-1]).any() or space[cstart].any()
                 or space[cend - 1].any())
    return code[pw][keep], code[rw][keep], pair, clean


def parse_inputs(predictions: Sequence[str], references: Sequence[Sequence[str] | str],
                 chunk_size: int = 20_000) -> ParsedInputs:
    """Read and check the inputs; raise ``ValueError``/``TypeError`` naming the first offending index.

    ``references[i]`` is a list of annotation strings (or one string: a single reference). The words of
    every reference must equal the words of ``predictions[i]``. Predictions are read ``chunk_size`` at a
    time by the vectorised reader (bounded memory); a chunk it flags goes through the plain parser.
    """
    flat, owner, starts = _flatten(predictions, references)
    n = len(predictions)
    hyps, refs, pairs = [], [], []
    clean = True
    for lo in range(0, n, chunk_size):
        hi = min(n, lo + chunk_size)
        r_lo, r_hi = int(starts[lo]), (int(starts[hi]) if hi < n else len(flat))
        fast = _read_fast(list(predictions[lo:hi]) + flat[r_lo:r_hi], hi - lo, owner[r_lo:r_hi] - lo)
        if fast is None:
            try:
                plain = parse_annotations_plain(predictions[lo:hi], references[lo:hi])
            except (ValueError, TypeError) as e:  # re-number the indices of the chunk
                raise type(e)(_renumber(str(e), lo)) from None
            fast = (plain.hyp, plain.ref, plain.pair, False)
        clean &= fast[3]
        hyps.append(fast[0])
        refs.append(fast[1])
        pairs.append(fast[2] + r_lo)
    return ParsedInputs(n, owner, starts, _concat(hyps, np.int8), _concat(refs, np.int8), _concat(pairs, np.int64),
                        flat, single_spaced=clean)


def _concat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


def _renumber(message: str, offset: int) -> str:
    if not offset:
        return message
    return re.sub(r"(predictions|references)\[(\d+)\]", lambda m: f"{m.group(1)}[{int(m.group(2)) + offset}]", message)


def pair_scores(hyp: np.ndarray, ref: np.ndarray, pair: np.ndarray, n_pairs: int, similarity: str = "f1",
                break_types: str = "binary") -> np.ndarray:
    """Similarity of each (hypothesis, reference) pair from its scored positions (flat arrays).

    binary: ``B = {i : code_i != NB}``; typed: ``B = {(i, code_i) : code_i != NB}``.
    F1 = ``2 |B_h ∩ B_r| / (|B_h| + |B_r|)`` (1.0 when both are empty); EM = ``[B_h = B_r]``. Range [0, 1].
    """
    h = hyp != NB
    r = ref != NB
    if similarity == "em":
        differ = (h != r) if break_types == "binary" else (hyp != ref)
        return (np.bincount(pair[differ], minlength=n_pairs) == 0).astype(np.float64)
    both = (h & r) if break_types == "binary" else ((hyp == ref) & r)
    tp = np.bincount(pair[both], minlength=n_pairs)
    denom = np.bincount(pair[h], minlength=n_pairs) + np.bincount(pair[r], minlength=n_pairs)
    return np.where(denom == 0, 1.0, 2.0 * tp / np.maximum(denom, 1))


def best_reference(scores: np.ndarray, owner: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per prediction: ``best = max_j score_j`` and the index ``j`` of the first reference reaching it.

    ``scores`` and ``owner`` are flat over all references (``owner`` non-decreasing, every prediction owns
    at least one reference, ``starts[i]`` is the position of its first one).
    """
    if len(starts) == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    best = np.maximum.reduceat(scores, starts)
    hits = np.flatnonzero(scores == best[owner])
    _, first = np.unique(owner[hits], return_index=True)
    index = hits[first] - starts
    return best, index


def _canonical(text: str, single_spaced: bool = False) -> str:
    """Canonical form of an already validated annotation string (single spaces, no trailing boundary)."""
    if single_spaced:
        return text[:-3] if text.endswith(" //") else (text[:-2] if text.endswith(" /") else text)
    tokens = text.split()
    if tokens and tokens[-1] in ("/", "//"):
        tokens.pop()
    return " ".join(tokens)


def signature(similarity: str, theta: float, break_types: str, reference_sources: Sequence[str] | None = None,
              normalize: str | None = "NFC") -> str:
    """How a result was made (sacrebleu habit): similarity, θ, break types, final position, (when given) the
    reference folders that were combined (``refs:a+b``), Unicode normalisation, version."""
    refs = f"|refs:{'+'.join(reference_sources)}" if reference_sources else ""
    return (f"lmre|sim:{similarity}|theta:{theta:g}|breaks:{break_types}|final:excluded{refs}"
            f"|norm:{normalize or 'none'}|version:{VERSION}")


def check_sources(reference_sources: Any) -> list[str] | None:
    """``reference_sources`` as a list of names (a single string is one name), or ``None``."""
    if reference_sources is None:
        return None
    if isinstance(reference_sources, str):
        reference_sources = [reference_sources]
    out = list(reference_sources)
    if not out or not all(isinstance(x, str) and x for x in out):
        raise ValueError(f"reference_sources must be a non-empty list of names, got {reference_sources!r}")
    return out


def check_options(similarity: str, theta: float, break_types: str, normalize: str | None = "NFC") -> None:
    """Raise ``ValueError`` for an unknown similarity / break type / normalisation or a θ outside [0, 1)."""
    if similarity not in SIMILARITIES:
        raise ValueError(f"similarity must be one of {SIMILARITIES}, got {similarity!r}")
    if break_types not in BREAK_TYPES:
        raise ValueError(f"break_types must be one of {BREAK_TYPES}, got {break_types!r}")
    _check_normalize(normalize)
    if isinstance(theta, bool) or not isinstance(theta, (int, float, np.integer, np.floating)):
        raise ValueError(f"theta must be a number in [0, 1), got {theta!r} ({type(theta).__name__})")
    if math.isnan(float(theta)):
        raise ValueError("theta is NaN: pass a number in [0, 1)")
    if float(theta) < 0.0:
        raise ValueError(f"theta must be a number in [0, 1), got {theta!r}: scores are >= 0 and acceptance is "
                         "best > theta, so a negative theta would accept every prediction")
    if float(theta) >= 1.0:
        raise ValueError(f"theta must be a number in [0, 1), got {theta!r}: scores lie in [0, 1] and acceptance "
                         "is best > theta, so theta >= 1 would accept nothing")


def lmre_scores(parsed: ParsedInputs, similarity: str = "f1", theta: float = DEFAULT_THETA,
                break_types: str = "binary", return_all_scores: bool = False,
                normalize: str | None = "NFC") -> dict[str, Any]:
    """The LMRE result for read inputs (see :func:`score` for the keys); ``normalize`` is the normalisation
    the inputs were read with (for the signature)."""
    check_options(similarity, theta, break_types, normalize)
    n, m = parsed.n, len(parsed.owner)
    scores = pair_scores(parsed.hyp, parsed.ref, parsed.pair, m, similarity, break_types)
    best, index = best_reference(scores, parsed.owner, parsed.starts)
    accepted = best > theta
    chosen = (parsed.starts + index).tolist()
    out: dict[str, Any] = {
        "acceptance_rate": float(accepted.mean()) if n else float("nan"),
        "mean_best_score": float(best.mean()) if n else float("nan"),
        "accepted": accepted.tolist(),
        "best_score": best.tolist(),
        "best_reference_index": index.tolist(),
        "best_reference": [_canonical(parsed.reference_strings[k], parsed.single_spaced) for k in chosen],
        "num_references": np.diff(np.append(parsed.starts, m)).tolist(),
        "signature": signature(similarity, float(theta), break_types, normalize=_check_normalize(normalize)),
    }
    if return_all_scores:
        bounds = np.append(parsed.starts, m).tolist()
        flat = scores.tolist()
        out["scores"] = [flat[bounds[i]:bounds[i + 1]] for i in range(n)]
    return out


def score(predictions: Sequence[str], references: Sequence[Sequence[str] | str] | None = None, similarity: str = "f1",
          theta: float = DEFAULT_THETA, break_types: str = "binary", return_all_scores: bool = False,
          reference_folders: Any = None, reference_sources: Sequence[str] | None = None,
          normalize: str | None = "NFC") -> dict[str, Any]:
    """LMRE of hypothesis annotations against their reference sets (the library call; the metric calls it).

    Returns ``acceptance_rate`` (share of accepted predictions, [0, 1]), ``mean_best_score`` ([0, 1]) and,
    per prediction, ``accepted`` (bool), ``best_score``, ``best_reference_index`` (first best reference),
    ``best_reference`` (its canonical string), ``num_references``; ``scores`` (every reference's score)
    with ``return_all_scores``; and a ``signature`` string of the options. Every annotation is put in the
    Unicode form ``normalize`` first (NFC by default; None: as given); one of invisible characters only is
    an empty annotation (an error naming the index).

    References are given per prediction (``references``), or found by each prediction's words in one or
    several reference folders written by the builder (``reference_folders``: several folders combine into
    one reference set per utterance, the LMRE paper's "combined" setting; see :func:`.lookup.load_references`).
    The folders (or the names in ``reference_sources``) are recorded in the signature.

    >>> r = score(["가 / 나 다"], [["가 나 / 다", "가 / 나 다"]])
    >>> r["accepted"], r["best_reference_index"], r["best_score"]
    ([True], [1], [1.0])
    """
    check_options(similarity, theta, break_types, normalize)
    sources = check_sources(reference_sources)
    if reference_folders is not None:
        if references is not None:
            raise ValueError("give references or reference_folders, not both")
        from .lookup import load_references, references_for

        lookup = load_references(reference_folders)
        predictions = normalize_inputs(predictions, [], normalize)[0]  # looked up by their normalised words
        references = references_for(predictions, lookup)
        sources = sources or lookup.sources
    elif references is None:
        raise ValueError("references is missing: give one reference list per prediction, or reference_folders")
    predictions, references = normalize_inputs(predictions, references, normalize)
    out = lmre_scores(parse_inputs(predictions, references), similarity, theta, break_types, return_all_scores,
                      normalize)
    if sources:
        out["signature"] = signature(similarity, float(theta), break_types, sources, _check_normalize(normalize))
    return out


def _boundaries(ann: Annotation, break_types: str) -> set:
    if break_types == "binary":
        return {i for i, c in enumerate(ann.breaks) if c != NB}
    return {(i, c) for i, c in enumerate(ann.breaks) if c != NB}


def _describe(ann: Annotation, items: set, break_types: str) -> list[str]:
    out = []
    for item in sorted(items):
        i, c = (item, ann.breaks[item]) if break_types == "binary" else item
        out.append(f"{LABELS[c] if break_types == 'typed' else 'boundary'} after word {i + 1} {ann.words[i]!r}")
    return out


def explain(prediction: str, references: Sequence[str] | str, similarity: str = "f1",
            theta: float = DEFAULT_THETA, break_types: str = "binary", normalize: str | None = "NFC") -> dict[str, Any]:
    """Why one annotation is accepted or rejected: every reference's score and the boundaries that differ.

    Returns ``prediction`` (canonical), ``accepted``, ``best_score``, ``best_reference_index``,
    ``best_reference``, ``why`` (one sentence) and ``references``: per reference its ``annotation``,
    ``score``, ``matched`` / ``missing`` (in the reference, not the prediction) / ``extra`` (in the
    prediction, not the reference) boundaries, described as "boundary after word 2 '날씨가'".

    >>> e = explain("가 / 나 다", ["가 나 / 다"], similarity="em")
    >>> e["accepted"], e["references"][0]["missing"], e["references"][0]["extra"]
    (False, ["boundary after word 2 '나'"], ["boundary after word 1 '가'"])
    """
    refs = [references] if isinstance(references, str) else list(references)
    (prediction,), (refs,) = normalize_inputs([prediction], [refs], normalize)
    result = score([prediction], [refs], similarity, theta, break_types, return_all_scores=True, normalize=normalize)
    hyp = parse_annotation(prediction, name="prediction")
    bh = _boundaries(hyp, break_types)
    rows = []
    for j, (text, s) in enumerate(zip(refs, result["scores"][0])):
        ref = parse_annotation(text, name=f"references[{j}]")
        br = _boundaries(ref, break_types)
        rows.append({"index": j, "annotation": format_annotation(ref), "score": s,
                     "matched": _describe(ref, bh & br, break_types), "missing": _describe(ref, br - bh, break_types),
                     "extra": _describe(hyp, bh - br, break_types)})
    best, j = result["best_score"][0], result["best_reference_index"][0]
    accepted = result["accepted"][0]
    name = similarity.upper()
    verdict = "accepted" if accepted else "rejected"
    relation = "exceeds" if accepted else "does not exceed"
    why = (f"{verdict}: the best of {len(refs)} reference(s) is #{j} {rows[j]['annotation']!r} with {name} "
           f"{best:.3f}, which {relation} theta={theta:g}")
    if not accepted:
        diffs = [f"missing {m}" for m in rows[j]["missing"]] + [f"extra {e}" for e in rows[j]["extra"]]
        if diffs:
            why += "; against it the prediction has " + ", ".join(diffs)
    return {"prediction": format_annotation(hyp), "similarity": similarity, "theta": float(theta),
            "break_types": break_types, "accepted": accepted, "best_score": best, "best_reference_index": j,
            "best_reference": rows[j]["annotation"], "why": why, "references": rows,
            "signature": result["signature"]}
