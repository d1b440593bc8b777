"""KLUE-STS scoring: Pearson r, Spearman rho and binary F1 at a threshold, as the official KLUE baseline.

The official baseline (KLUE-benchmark/KLUE-baseline, ``klue_baseline/metrics/functional.py``) computes
``pearsonr(preds, labels)[0] * 100`` and ``f1_score(labels >= 3, preds >= 3, average="binary") * 100``.
Here the same numbers are returned on the 0-1 scale, in float64.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .bootstrap import bootstrap_interval, pearson_rows, spearman_rows
from .correlation import correlation

__all__ = [
    "VERSION",
    "as_scores",
    "binarize",
    "pearson",
    "spearman",
    "f1_binary",
    "sts_scores",
    "score",
    "klue_sts_scores",
    "signature",
    "bootstrap_intervals",
]

#: Version of the metric (the kometrics release it ships with), part of every signature.
VERSION = "0.1.0"

_NAMES = ("predictions", "references")


def as_scores(values: Any, name: str) -> np.ndarray:
    """Check that ``values`` are finite real numbers and return them as a 1-D float64 array.

    Accepts lists, tuples, numpy arrays and tensors of shape ``(N,)`` or ``(N, 1)`` (a regression head's
    output). Raises ``TypeError``/``ValueError`` naming ``name`` and the first offending index.
    """
    if hasattr(values, "detach") and hasattr(values, "cpu"):  # a torch tensor
        values = values.detach().cpu().double().numpy()
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(f"{name} must be a sequence of numbers, got {type(values).__name__}")
    arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one score per item (shape (N,) or (N, 1)), got shape {arr.shape}")
    if arr.dtype.kind not in "fiu":
        for i, v in enumerate(arr):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                raise TypeError(f"{name}[{i}] is {v!r} ({type(v).__name__}), not a number")
    out = arr.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name}[{i}] is {out[i]}: scores must be finite numbers "
                         f"({bad.size} non-finite value(s) in {name})")
    return out


def _check_pair(predictions: np.ndarray, references: np.ndarray) -> None:
    if len(predictions) != len(references):
        raise ValueError(f"predictions and references differ in length: {len(predictions)} != {len(references)}")
    if len(predictions) == 0:
        raise ValueError("predictions and references are empty: KLUE-STS scores need at least two pairs")


def binarize(scores: np.ndarray, threshold: float = 3.0) -> np.ndarray:
    """The "paraphrased" class: ``scores >= threshold`` (KLUE: 3.0 on the 0-5 scale, inclusive)."""
    return np.asarray(scores) >= threshold


def pearson(predictions: np.ndarray, references: np.ndarray) -> float:
    """Pearson's r in [-1, 1] (``scipy.stats.pearsonr``). NaN with a warning when either side is constant."""
    return correlation(predictions, references, "pearson", _NAMES)[0]


def spearman(predictions: np.ndarray, references: np.ndarray) -> float:
    """Spearman's rho in [-1, 1] (``scipy.stats.spearmanr``). NaN with a warning when either side is constant."""
    return correlation(predictions, references, "spearman", _NAMES)[0]


def f1_binary(predicted_positive: np.ndarray, reference_positive: np.ndarray) -> float:
    """F1 of the positive class: ``2 TP / (2 TP + FP + FN)`` in [0, 1].

    With no positive prediction and no positive reference the score is ill-defined; like scikit-learn's
    ``f1_score`` (``zero_division="warn"``, used by the official baseline) it is 0.0, with a warning.
    """
    pred = np.asarray(predicted_positive, dtype=bool)
    ref = np.asarray(reference_positive, dtype=bool)
    tp = int(np.count_nonzero(pred & ref))
    fp = int(np.count_nonzero(pred & ~ref))
    fn = int(np.count_nonzero(~pred & ref))
    if 2 * tp + fp + fn == 0:
        warnings.warn("F1 is ill-defined: no predicted and no reference positives; returning 0.0 "
                      "(as scikit-learn's f1_score)", RuntimeWarning, stacklevel=2)
        return 0.0
    return 2 * tp / (2 * tp + fp + fn)


def sts_scores(predictions: Sequence[float] | np.ndarray, references: Sequence[float] | np.ndarray,
               threshold: float = 3.0) -> dict[str, float]:
    """``{"pearson", "spearmanr", "f1"}`` for similarity scores on KLUE's 0-5 scale (any scale works): the
    numbers alone, as the Trainer hook logs them.

    F1 is computed after binarising both sides with ``>= threshold``.
    """
    preds = as_scores(predictions, "predictions")
    refs = as_scores(references, "references")
    _check_pair(preds, refs)
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    return {
        "pearson": pearson(preds, refs),
        "spearmanr": spearman(preds, refs),
        "f1": f1_binary(binarize(preds, threshold), binarize(refs, threshold)),
    }


def _f1_stat(threshold: float):
    def stat(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        p, r = x >= threshold, y >= threshold
        tp = (p & r).sum(axis=axis)
        denom = 2 * tp + (p & ~r).sum(axis=axis) + (~p & r).sum(axis=axis)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0)

    return stat


def bootstrap_intervals(predictions: np.ndarray, references: np.ndarray, threshold: float = 3.0, *,
                        confidence_level: float = 0.95, n_resamples: int = 1000, seed: int | None = 0,
                        method: str = "BCa") -> dict[str, list[float]]:
    """Paired bootstrap confidence intervals of Pearson r, Spearman rho and F1 (``scipy.stats.bootstrap``).

    Pairs are resampled with replacement; the three statistics see the same resamples (one generator
    seeded with ``seed`` per statistic). ``method`` is scipy's: ``"BCa"`` (default), ``"percentile"`` or
    ``"basic"``. Returns ``{"pearson": [low, high], "spearmanr": [...], "f1": [...]}``.
    """
    preds = np.asarray(predictions, dtype=np.float64)
    refs = np.asarray(references, dtype=np.float64)
    stats_ = (("pearson", pearson_rows), ("spearmanr", spearman_rows), ("f1", _f1_stat(threshold)))
    return {key: bootstrap_interval((preds, refs), stat, confidence_level=confidence_level,
                                    n_resamples=n_resamples, seed=seed, method=method, name=key)
            for key, stat in stats_}


def signature(threshold: float = 3.0, confidence_level: float | None = None, n_resamples: int = 1000,
              seed: int | None = 0, ci_method: str = "BCa") -> str:
    """How a result was made (the sacrebleu habit): the threshold, the interval options, the version."""
    ci = "none" if confidence_level is None else \
        f"{ci_method}|level:{confidence_level:g}|resamples:{n_resamples}|seed:{seed}"
    return f"klue_sts|threshold:{threshold:g}|ci:{ci}|version:{VERSION}"


def score(predictions: Sequence[float] | np.ndarray, references: Sequence[float] | np.ndarray,
          threshold: float = 3.0, confidence_level: float | None = None, n_resamples: int = 1000,
          seed: int | None = 0, ci_method: str = "BCa") -> dict[str, Any]:
    """KLUE-STS of predicted similarity scores: the library call, the same result as
    ``evaluate.load("metrics/klue_sts").compute``.

    Returns ``pearson``, ``spearmanr``, ``f1`` (see :func:`sts_scores`), with ``confidence_level`` the paired
    bootstrap intervals ``pearson_ci``, ``spearmanr_ci``, ``f1_ci`` (:func:`bootstrap_intervals`), and a
    ``signature``.
    """
    result: dict[str, Any] = dict(sts_scores(predictions, references, threshold=threshold))
    if confidence_level is not None:
        intervals = bootstrap_intervals(as_scores(predictions, "predictions"), as_scores(references, "references"),
                                        threshold, confidence_level=confidence_level, n_resamples=n_resamples,
                                        seed=seed, method=ci_method)
        result.update({f"{key}_ci": value for key, value in intervals.items()})
    result["signature"] = signature(threshold, confidence_level, n_resamples, seed, ci_method)
    return result


#: The former name of :func:`score`.
klue_sts_scores = score
