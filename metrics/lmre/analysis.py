"""Agreement of LMRE scores with human judgments (the paper's Pearson r and Spearman ρ)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["correlate_with_human"]


def correlate_with_human(scores: Sequence[float], human_scores: Sequence[float]) -> dict[str, Any]:
    """Pearson r and Spearman ρ (with two-sided p-values) between per-annotation scores and human scores.

    ``scores`` are e.g. LMRE ``best_score`` values or 0/1 ``accepted`` flags, ``human_scores`` e.g. 1-5
    ratings of the same annotations, in the same order. Pairs where either value is missing (``None`` or
    NaN) are left out with a warning; fewer than 3 pairs, or a constant input, give NaN coefficients.

    >>> r = correlate_with_human([0.2, 0.5, 0.9, 1.0], [1, 2, 4, 5])
    >>> round(r["pearson"], 3), round(r["spearman"], 3), r["n"]
    (0.993, 1.0, 4)
    """
    import warnings

    import numpy as np
    from scipy import stats

    if len(scores) != len(human_scores):
        raise ValueError(f"scores has {len(scores)} values but human_scores has {len(human_scores)}; "
                         "give one human score per annotation")
    x, y = [], []
    for i, (a, b) in enumerate(zip(scores, human_scores)):
        if a is None or b is None or (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            continue
        try:
            x.append(float(a))
            y.append(float(b))
        except (TypeError, ValueError):
            raise TypeError(f"scores[{i}]={a!r} / human_scores[{i}]={b!r} is not a number") from None
    dropped = len(scores) - len(x)
    if dropped:
        warnings.warn(f"correlate_with_human: left out {dropped} pair(s) with a missing score", stacklevel=2)
    out: dict[str, Any] = {"pearson": float("nan"), "pearson_pvalue": float("nan"), "spearman": float("nan"),
                           "spearman_pvalue": float("nan"), "n": len(x)}
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return out
    p = stats.pearsonr(x, y)
    s = stats.spearmanr(x, y)
    out.update(pearson=float(p.statistic), pearson_pvalue=float(p.pvalue), spearman=float(s.statistic),
               spearman_pvalue=float(s.pvalue))
    return out
