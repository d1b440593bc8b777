"""Correlation of two lists of scores under one policy: Pearson's r and Spearman's rho (``scipy.stats``) with
their two-sided p-values. A correlation of fewer than two pairs, or with a constant side, is undefined: it is
NaN, with a ``RuntimeWarning`` that says why.

The same file sits in ``metrics/klue_sts/`` and ``metrics/lmre/`` (each folder ships alone as a Space); the
package's tooling (the paraphrase experiment) uses ``kometrics.klue_sts.correlation``.
``tests/test_correlation.py`` checks that the copies are byte-identical.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

__all__ = ["METHODS", "undefined_reason", "correlation", "pearson", "spearman"]

#: Correlation methods and how warnings name them.
METHODS = {"pearson": "Pearson r", "spearman": "Spearman rho"}


def undefined_reason(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray,
                     names: tuple[str, str] = ("x", "y")) -> str | None:
    """Why the correlation of ``x`` and ``y`` is undefined (fewer than two pairs, a constant side), or None."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) < 2:
        return f"fewer than two pairs ({len(x)})"
    for name, values in zip(names, (x, y)):
        if np.all(values == values[0]):
            return f"{name} are constant (all {values[0]:g}), so their variance is zero"
    return None


def correlation(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, method: str = "pearson",
                names: tuple[str, str] = ("x", "y")) -> tuple[float, float]:
    """``(coefficient in [-1, 1], two-sided p-value)`` of ``x`` and ``y`` (``scipy.stats.pearsonr`` or
    ``spearmanr``); ``(NaN, NaN)`` with a ``RuntimeWarning`` naming ``names`` when it is undefined."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    if len(x) != len(y):
        raise ValueError(f"{names[0]} and {names[1]} differ in length: {len(x)} != {len(y)}")
    why = undefined_reason(x, y, names)
    if why is not None:
        warnings.warn(f"{METHODS[method]} is undefined ({why}); returning NaN", RuntimeWarning, stacklevel=3)
        return math.nan, math.nan
    from scipy import stats

    res = (stats.pearsonr if method == "pearson" else stats.spearmanr)(x, y)
    return float(res.statistic), float(res.pvalue)


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray,
            names: tuple[str, str] = ("x", "y")) -> float:
    """Pearson's r in [-1, 1]; NaN with a warning when undefined (see :func:`correlation`)."""
    return correlation(x, y, "pearson", names)[0]


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray,
             names: tuple[str, str] = ("x", "y")) -> float:
    """Spearman's rho in [-1, 1]; NaN with a warning when undefined (see :func:`correlation`)."""
    return correlation(x, y, "spearman", names)[0]
