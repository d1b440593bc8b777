"""Correlation of a metric with human scores, with paired bootstrap 95% intervals.

The paper (Table 2, 3) reports Pearson's r between each metric and the human score; we add Spearman's rho
and percentile bootstrap intervals: ``n_boot`` resamples of the pairs drawn with replacement from
``numpy.random.default_rng(seed)`` (the same resamples for every metric, so intervals are comparable); the
interval is the (2.5, 97.5) percentiles of the statistic over resamples. Point estimates are
``scipy.stats.pearsonr`` / ``scipy.stats.spearmanr`` on all pairs.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

__all__ = ["bootstrap_indices", "pearson_rows", "spearman_rows", "correlate", "paired_difference"]


def bootstrap_indices(n: int, n_boot: int = 1000, seed: int = 0) -> np.ndarray:
    """``(n_boot, n)`` integer array: row b is the b-th resample of ``range(n)`` with replacement."""
    if n < 2:
        raise ValueError(f"need at least 2 pairs to correlate, got {n}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r along the last axis: ``sum(dx dy) / sqrt(sum(dx^2) sum(dy^2))`` (NaN where constant)."""
    dx = x - x.mean(axis=-1, keepdims=True)
    dy = y - y.mean(axis=-1, keepdims=True)
    num = (dx * dy).sum(-1)
    den = np.sqrt((dx * dx).sum(-1) * (dy * dy).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho along the last axis: Pearson's r of the average ranks (ties share their mean rank)."""
    from scipy.stats import rankdata

    return pearson_rows(rankdata(x, axis=-1), rankdata(y, axis=-1))


def correlate(metric: np.ndarray, human: np.ndarray, indices: np.ndarray | None = None, n_boot: int = 1000,
              seed: int = 0, confidence: float = 0.95) -> dict[str, Any]:
    """Pearson and Spearman of ``metric`` with ``human`` and their bootstrap intervals.

    ``indices``: resamples from :func:`bootstrap_indices` (pass the same array for every metric); built from
    ``n_boot`` and ``seed`` when omitted. Returns ``{"n", "pearson", "pearson_ci": [lo, hi], "spearman",
    "spearman_ci": [lo, hi]}``; a constant column gives NaN (with a warning), never an exception.
    """
    from scipy import stats

    x = np.asarray(metric, dtype=np.float64)
    y = np.asarray(human, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"metric and human must be 1-D of the same length, got {x.shape} and {y.shape}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("metric and human scores must be finite; drop or fix the NaN/inf pairs first")
    if indices is None:
        indices = bootstrap_indices(len(x), n_boot, seed)
    alpha = (1.0 - confidence) / 2.0
    out: dict[str, Any] = {"n": int(len(x))}
    constant = np.ptp(x) == 0 or np.ptp(y) == 0
    if constant:
        warnings.warn("a metric column or the human scores are constant: correlation is undefined (NaN)",
                      stacklevel=2)
    for name, point_fn, rows_fn in (("pearson", stats.pearsonr, pearson_rows),
                                    ("spearman", stats.spearmanr, spearman_rows)):
        point = float("nan") if constant else float(point_fn(x, y)[0])
        boot = rows_fn(x[indices], y[indices])
        if np.isnan(boot).all():
            ci = [float("nan"), float("nan")]
        else:
            ci = [float(v) for v in np.nanquantile(boot, [alpha, 1.0 - alpha])]
        out[name] = point
        out[f"{name}_ci"] = ci
    return out


def paired_difference(a: np.ndarray, b: np.ndarray, human: np.ndarray, indices: np.ndarray,
                      method: str = "pearson", confidence: float = 0.95) -> dict[str, Any]:
    """``r(a, human) - r(b, human)`` and its paired bootstrap interval (both correlations computed on the
    same resamples, so the interval accounts for their dependence). An interval above 0: ``a`` correlates
    better with the human score than ``b`` on this data."""
    from scipy import stats

    fns = {"pearson": (stats.pearsonr, pearson_rows), "spearman": (stats.spearmanr, spearman_rows)}
    if method not in fns:
        raise ValueError(f"method must be 'pearson' or 'spearman', got {method!r}")
    point_fn, rows_fn = fns[method]
    x, y, h = (np.asarray(v, dtype=np.float64) for v in (a, b, human))
    if not (x.shape == y.shape == h.shape and x.ndim == 1):
        raise ValueError(f"a, b and human must be 1-D of one length, got {x.shape}, {y.shape}, {h.shape}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point = float(point_fn(x, h)[0] - point_fn(y, h)[0])
    boot = rows_fn(x[indices], h[indices]) - rows_fn(y[indices], h[indices])
    alpha = (1.0 - confidence) / 2.0
    ci = ([float("nan")] * 2 if np.isnan(boot).all()
          else [float(v) for v in np.nanquantile(boot, [alpha, 1.0 - alpha])])
    return {"difference": point, "ci": ci}
