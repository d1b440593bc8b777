"""Paired bootstrap confidence intervals (``scipy.stats.bootstrap``) and the vectorised correlation statistics
they resample.

Pairs are resampled with replacement: resample ``b`` takes the pairs
``numpy.random.default_rng(seed).integers(0, n, (n_resamples, n))[b]``, so every statistic bootstrapped with
the same ``seed`` sees the same resamples (their intervals are comparable, and a difference of two
statistics on those resamples is a paired comparison). The package's tooling (the paraphrase experiment) uses
this module too.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["CI_METHODS", "pearson_rows", "spearman_rows", "bootstrap_interval"]

#: ``scipy.stats.bootstrap``'s interval methods.
CI_METHODS = ("BCa", "percentile", "basic")


def pearson_rows(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Pearson's r along ``axis``: ``sum(dx dy) / sqrt(sum(dx^2) sum(dy^2))``; NaN where a side is constant."""
    dx = x - x.mean(axis=axis, keepdims=True)
    dy = y - y.mean(axis=axis, keepdims=True)
    num = (dx * dy).sum(axis=axis)
    den = np.sqrt((dx * dx).sum(axis=axis) * (dy * dy).sum(axis=axis))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def spearman_rows(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's rho along ``axis``: Pearson's r of the average ranks (ties share their mean rank)."""
    from scipy.stats import rankdata

    return pearson_rows(rankdata(x, axis=axis), rankdata(y, axis=axis), axis=axis)


def bootstrap_interval(data: Sequence[np.ndarray], statistic: Callable[..., np.ndarray], *,
                       confidence_level: float = 0.95, n_resamples: int = 1000, seed: int | None = 0,
                       method: str = "BCa", name: str = "the statistic") -> list[float]:
    """``[low, high]``: the paired bootstrap interval of ``statistic(*data, axis=-1)`` (vectorised).

    ``method`` is scipy's: ``"BCa"`` (default), ``"percentile"`` or ``"basic"``. BCa is undefined when many
    resamples tie with the observed value (small or easy sets); then the percentile interval of the same
    resamples is returned, with a ``RuntimeWarning`` naming ``name``.
    """
    from scipy import stats

    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 2:
        raise ValueError(f"n_resamples must be an integer of at least 2, got {n_resamples!r}")
    if method.lower() not in {m.lower() for m in CI_METHODS}:
        raise ValueError(f"the interval method must be one of {CI_METHODS}, got {method!r}")
    kwargs = dict(paired=True, vectorized=True, confidence_level=confidence_level)
    fell_back = False
    with warnings.catch_warnings():  # degenerate resamples are expected; what matters is said below
        warnings.simplefilter("ignore", category=RuntimeWarning)
        warnings.simplefilter("ignore", category=stats.DegenerateDataWarning)
        res = stats.bootstrap(tuple(data), statistic, n_resamples=int(n_resamples), method=method,
                              rng=np.random.default_rng(seed), **kwargs)
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if not (np.isfinite(low) and np.isfinite(high)) and method.lower() == "bca":
            res = stats.bootstrap(tuple(data), statistic, n_resamples=0, method="percentile", bootstrap_result=res,
                                  **kwargs)
            low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
            fell_back = True
    if fell_back:
        warnings.warn(f"the BCa interval of {name} is undefined on these data (degenerate bootstrap distribution); "
                      "the percentile interval of the same resamples is returned", RuntimeWarning, stacklevel=2)
    if not (np.isfinite(low) and np.isfinite(high)):
        undefined = int(np.count_nonzero(~np.isfinite(res.bootstrap_distribution)))
        warnings.warn(f"the bootstrap interval of {name} is NaN: on {len(data[0])} pairs, {undefined} of "
                      f"{int(n_resamples)} resamples are degenerate (e.g. constant predictions or references), where "
                      f"{name} is undefined; a confidence interval needs more pairs", RuntimeWarning, stacklevel=2)
    return [low, high]
