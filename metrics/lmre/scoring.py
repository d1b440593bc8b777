"""LMRE scoring: a hypothesis annotation against a set of references, vectorised with numpy.

Notation (the seed's): an utterance ``W`` of ``n`` words, a hypothesis annotation ``B_h`` and the reference
set ``R(W) = {B_r^(1), ..., B_r^(k)}``. An annotation is the set of its boundary positions
``{i : boundary after w_i, 1 <= i <= n-1}`` (``break_types="binary"``), or of ``(i, type)`` pairs with type
AP or IP (``break_types="typed"``). The utterance-final position is never scored (see ``formats``).

- ``F1(B_h, B_r) = 2 |B_h ∩ B_r| / (|B_h| + |B_r|)``, and ``1.0`` when both are empty.
- ``EM(B_h, B_r) = 1`` if ``B_h = B_r`` else ``0``.
- ``best(B_h) = max_j sim(B_h, B_r^(j))``; accepted iff ``best(B_h) > θ`` (strictly).

All pairs (hypothesis, reference) of a batch are laid out as rows of two int8 matrices of boundary codes
(0 = NB, 1 = AP, 2 = IP), padded with NB, so every score is a few boolean reductions over rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .formats import LABELS, NB, Annotation, format_annotation, parse_annotation

__all__ = [
    "SIMILARITIES",
    "BREAK_TYPES",
    "DEFAULT_THETA",
    "ParsedInputs",
    "parse_inputs",
    "code_matrix",
    "pair_scores",
    "best_reference",
    "lmre_scores",
    "score",
    "explain",
    "signature",
]

SIMILARITIES = ("f1", "em")
BREAK_TYPES = ("binary", "typed")
#: Default acceptance threshold θ: with EM it means "equals some reference"; with F1 "shares more than
#: half of the boundaries (harmonic mean of precision and recall) with some reference".
DEFAULT_THETA = 0.5
VERSION = "1"


class ParsedInputs:
    """Validated inputs: parsed predictions, parsed references flattened, and the owner of each reference."""

    def __init__(self, predictions: list[Annotation], references: list[Annotation], owner: np.ndarray,
                 starts: np.ndarray, reference_texts: list[str]) -> None:
        self.predictions = predictions
        self.references = references
        self.owner = owner  # (M,) index of the prediction each reference belongs to (non-decreasing)
        self.starts = starts  # (N,) index of each prediction's first reference in ``references``
        self.reference_texts = reference_texts  # canonical strings of ``references``


def _first_difference(a: Sequence[str], b: Sequence[str]) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"word {i}: {y!r} instead of {x!r}"
    return f"{len(b)} words instead of {len(a)}"


def parse_inputs(predictions: Sequence[str], references: Sequence[Sequence[str] | str]) -> ParsedInputs:
    """Parse and check the inputs; raise ``ValueError``/``TypeError`` naming the first offending index.

    ``references[i]`` is a list of annotation strings (or one string: a single reference). The words of
    every reference must equal the words of ``predictions[i]``.
    """
    if isinstance(predictions, str) or isinstance(references, str):
        raise TypeError("predictions and references must be lists (of strings, and of lists of strings)")
    if len(predictions) != len(references):
        raise ValueError(f"got {len(predictions)} predictions but {len(references)} reference lists; "
                         "give one list of references per prediction")
    preds: list[Annotation] = []
    refs: list[Annotation] = []
    texts: list[str] = []
    owner: list[int] = []
    starts = np.zeros(len(predictions), dtype=np.int64)
    for i, (pred, ref_list) in enumerate(zip(predictions, references)):
        hyp = parse_annotation(pred, name=f"predictions[{i}]")
        preds.append(hyp)
        if isinstance(ref_list, str):
            ref_list = [ref_list]
        elif not isinstance(ref_list, (list, tuple)):
            raise TypeError(f"references[{i}] must be a list of annotation strings, got {type(ref_list).__name__}")
        if not ref_list:
            raise ValueError(f"references[{i}] is empty; every prediction needs at least one reference "
                             "(an utterance the builder kept no reference for cannot be scored)")
        starts[i] = len(refs)
        for j, ref_text in enumerate(ref_list):
            ref = parse_annotation(ref_text, name=f"references[{i}][{j}]")
            if ref.words != hyp.words:
                raise ValueError(f"references[{i}][{j}] is not an annotation of the words of predictions[{i}] "
                                 f"({_first_difference(hyp.words, ref.words)}); a prediction and its "
                                 "references must annotate the same word sequence")
            refs.append(ref)
            texts.append(format_annotation(ref))
            owner.append(i)
    return ParsedInputs(preds, refs, np.asarray(owner, dtype=np.int64), starts, texts)


def code_matrix(annotations: Sequence[Annotation], width: int | None = None) -> np.ndarray:
    """``(len(annotations), width)`` int8 matrix of boundary codes, padded with NB (0).

    Built from one flat array (no Python loop over cells): row ``a`` holds ``annotations[a].breaks``.
    """
    lengths = np.fromiter((len(a.breaks) for a in annotations), dtype=np.int64, count=len(annotations))
    width = int(lengths.max(initial=0)) if width is None else width
    out = np.zeros((len(annotations), max(width, 1)), dtype=np.int8)
    total = int(lengths.sum())
    if total:
        flat = np.fromiter((c for a in annotations for c in a.breaks), dtype=np.int8, count=total)
        rows = np.repeat(np.arange(len(annotations)), lengths)
        offsets = np.cumsum(lengths) - lengths
        cols = np.arange(total) - np.repeat(offsets, lengths)
        out[rows, cols] = flat
    return out


def pair_scores(hyp: np.ndarray, ref: np.ndarray, similarity: str = "f1", break_types: str = "binary") -> np.ndarray:
    """Similarity of row ``a`` of ``hyp`` with row ``a`` of ``ref`` (both ``(M, L)`` code matrices).

    binary: ``B = {i : code_i != NB}``; typed: ``B = {(i, code_i) : code_i != NB}``.
    F1 = ``2 |B_h ∩ B_r| / (|B_h| + |B_r|)`` (1.0 when both are empty); EM = ``[B_h = B_r]``. Range [0, 1].
    """
    h = hyp != NB
    r = ref != NB
    if similarity == "em":
        same = (h == r) if break_types == "binary" else (hyp == ref)
        return same.all(axis=1).astype(np.float64)
    if break_types == "binary":
        tp = np.count_nonzero(h & r, axis=1)
    else:
        tp = np.count_nonzero((hyp == ref) & r, axis=1)
    denom = np.count_nonzero(h, axis=1) + np.count_nonzero(r, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(denom == 0, 1.0, 2.0 * tp / np.maximum(denom, 1))
    return f1.astype(np.float64)


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


def signature(similarity: str, theta: float, break_types: str) -> str:
    """How a result was made (sacrebleu habit): similarity, θ, break types, final position, version."""
    return f"lmre|sim:{similarity}|theta:{theta:g}|breaks:{break_types}|final:excluded|v:{VERSION}"


def check_options(similarity: str, theta: float, break_types: str) -> None:
    """Raise ``ValueError`` for an unknown similarity / break type or a θ outside [0, 1)."""
    if similarity not in SIMILARITIES:
        raise ValueError(f"similarity must be one of {SIMILARITIES}, got {similarity!r}")
    if break_types not in BREAK_TYPES:
        raise ValueError(f"break_types must be one of {BREAK_TYPES}, got {break_types!r}")
    if isinstance(theta, bool) or not isinstance(theta, (int, float, np.floating)) or not 0.0 <= float(theta) < 1.0:
        raise ValueError(f"theta must be a number in [0, 1), got {theta!r}: scores lie in [0, 1] and acceptance "
                         "is best > theta, so theta >= 1 would accept nothing")


def lmre_scores(parsed: ParsedInputs, similarity: str = "f1", theta: float = DEFAULT_THETA,
                break_types: str = "binary", return_all_scores: bool = False) -> dict[str, Any]:
    """The LMRE result for validated inputs (see :func:`score` for the keys)."""
    check_options(similarity, theta, break_types)
    n = len(parsed.predictions)
    width = max((len(a.breaks) for a in parsed.predictions), default=0)
    hyp = code_matrix(parsed.predictions, width)
    ref = code_matrix(parsed.references, width)
    scores = pair_scores(hyp[parsed.owner], ref, similarity, break_types)
    best, index = best_reference(scores, parsed.owner, parsed.starts)
    accepted = best > theta
    out: dict[str, Any] = {
        "acceptance_rate": float(accepted.mean()) if n else float("nan"),
        "mean_best_score": float(best.mean()) if n else float("nan"),
        "accepted": accepted.tolist(),
        "best_score": best.tolist(),
        "best_reference_index": index.tolist(),
        "best_reference": [parsed.reference_texts[s + j] for s, j in zip(parsed.starts.tolist(), index.tolist())],
        "num_references": np.diff(np.append(parsed.starts, len(parsed.references))).tolist(),
        "signature": signature(similarity, float(theta), break_types),
    }
    if return_all_scores:
        bounds = np.append(parsed.starts, len(parsed.references)).tolist()
        flat = scores.tolist()
        out["scores"] = [flat[bounds[i]:bounds[i + 1]] for i in range(n)]
    return out


def score(predictions: Sequence[str], references: Sequence[Sequence[str] | str], similarity: str = "f1",
          theta: float = DEFAULT_THETA, break_types: str = "binary", return_all_scores: bool = False) -> dict[str, Any]:
    """LMRE of hypothesis annotations against their reference sets (the library call; the metric calls it).

    Returns ``acceptance_rate`` (share of accepted predictions, [0, 1]), ``mean_best_score`` ([0, 1]) and,
    per prediction, ``accepted`` (bool), ``best_score``, ``best_reference_index`` (first best reference),
    ``best_reference`` (its canonical string), ``num_references``; ``scores`` (every reference's score)
    with ``return_all_scores``; and a ``signature`` string of the options.

    >>> r = score(["가 / 나 다"], [["가 나 / 다", "가 / 나 다"]])
    >>> r["accepted"], r["best_reference_index"], r["best_score"]
    ([True], [1], [1.0])
    """
    check_options(similarity, theta, break_types)
    return lmre_scores(parse_inputs(predictions, references), similarity, theta, break_types, return_all_scores)


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
            theta: float = DEFAULT_THETA, break_types: str = "binary") -> dict[str, Any]:
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
    result = score([prediction], [refs], similarity, theta, break_types, return_all_scores=True)
    parsed = parse_inputs([prediction], [refs])
    hyp = parsed.predictions[0]
    bh = _boundaries(hyp, break_types)
    rows = []
    for j, (ref, s) in enumerate(zip(parsed.references, result["scores"][0])):
        br = _boundaries(ref, break_types)
        rows.append({"index": j, "annotation": parsed.reference_texts[j], "score": s,
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
