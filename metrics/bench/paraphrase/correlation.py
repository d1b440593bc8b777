"""Correlation of a metric with human scores, with paired bootstrap intervals: the cells of Tables 2 and 3.

Built on the package's one correlation helper and one bootstrap, :mod:`kometrics.klue_sts.correlation` (the
undefined-case policy: NaN with a warning that says why) and :mod:`kometrics.klue_sts.bootstrap`
(``scipy.stats.bootstrap``). The paper reports Pearson's r between each metric and the human score; we add
Spearman's rho and percentile bootstrap intervals from ``n_resamples`` resamples of the pairs, seeded, so every
metric sees the same resamples and intervals are comparable. Point estimates are ``scipy.stats.pearsonr`` /
``spearmanr`` on all pairs.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from kometrics.klue_sts.bootstrap import bootstrap_interval, pearson_rows, spearman_rows
from kometrics.klue_sts.correlation import correlation, undefined_reason

__all__ = ["ROWS", "correlate", "paired_difference"]

#: The vectorised statistic of each correlation method.
ROWS = {"pearson": pearson_rows, "spearman": spearman_rows}
_NAMES = ("the metric's scores", "the human scores")


def _check(*columns: np.ndarray) -> None:
    shapes = {c.shape for c in columns}
    if len(shapes) != 1 or columns[0].ndim != 1:
        raise ValueError(f"the score columns must be 1-D of one length, got shapes {[c.shape for c in columns]}")
    if not all(np.isfinite(c).all() for c in columns):
        raise ValueError("metric and human scores must be finite; drop or fix the NaN/inf pairs first")


def correlate(metric: np.ndarray, human: np.ndarray, n_resamples: int = 1000, seed: int = 0,
              confidence_level: float = 0.95, ci_method: str = "percentile") -> dict[str, Any]:
    """Pearson and Spearman of ``metric`` with ``human`` and their paired bootstrap intervals.

    Returns ``{"n", "pearson", "pearson_ci": [lo, hi], "spearman", "spearman_ci": [lo, hi]}``; an undefined
    correlation (a constant column) is NaN with NaN bounds and a warning, never an exception.
    """
    x = np.asarray(metric, dtype=np.float64)
    y = np.asarray(human, dtype=np.float64)
    _check(x, y)
    out: dict[str, Any] = {"n": int(len(x))}
    defined = undefined_reason(x, y, _NAMES) is None
    for name, rows in ROWS.items():
        out[name] = correlation(x, y, name, _NAMES)[0]
        out[f"{name}_ci"] = bootstrap_interval(
            (x, y), rows, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed, method=ci_method,
            name=name) if defined else [float("nan"), float("nan")]
    return out


def paired_difference(a: np.ndarray, b: np.ndarray, human: np.ndarray, method: str = "pearson",
                      n_resamples: int = 1000, seed: int = 0, confidence_level: float = 0.95,
                      ci_method: str = "percentile") -> dict[str, Any]:
    """``r(a, human) - r(b, human)`` and its paired bootstrap interval (both correlations computed on the
    same resamples, so the interval accounts for their dependence). An interval above 0: ``a`` correlates
    better with the human score than ``b`` on this data. NaN where either correlation is undefined."""
    if method not in ROWS:
        raise ValueError(f"method must be 'pearson' or 'spearman', got {method!r}")
    x, y, h = (np.asarray(v, dtype=np.float64) for v in (a, b, human))
    _check(x, y, h)
    with warnings.catch_warnings():  # correlate() has said it for each column
        warnings.simplefilter("ignore", RuntimeWarning)
        point = correlation(x, h, method)[0] - correlation(y, h, method)[0]
    rows = ROWS[method]
    if np.isnan(point):
        return {"difference": point, "ci": [float("nan"), float("nan")]}
    ci = bootstrap_interval((x, y, h), lambda p, q, g, axis=-1: rows(p, g, axis) - rows(q, g, axis),
                            confidence_level=confidence_level, n_resamples=n_resamples, seed=seed,
                            method=ci_method, name=f"the {method} difference")
    return {"difference": float(point), "ci": ci}
