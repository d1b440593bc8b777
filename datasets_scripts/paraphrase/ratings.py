"""Human ratings of paraphrase pairs: per-rater standard scores and inter-rater agreement.

The Korean BERTScore paper (Hyeon & Choi 2019, section 3.2) converts each rater's scores to standard scores "to remove each rater's
bias" and reports Cohen's kappa between its two raters (0.4922). Here:

- :func:`rater_z_scores`: ``z = (x - mean_r) / sd_r`` with the mean and standard deviation of rater ``r`` over
  *all the pairs that rater scored*; ``sd_r`` uses ``ddof`` (default 0, the population deviation, as
  ``scipy.stats.zscore``). A rater with a single rating or zero variance has no defined z: see ``degenerate``.
- :func:`human_scores`: the human score of a pair is the mean of its raters' z-scores.
- :func:`cohen_kappa` (two raters), :func:`krippendorff_alpha` (any number, missing ratings allowed) and
  :func:`mean_pairwise_correlation`; :func:`agreement` picks what applies.

Ratings come per pair as two parallel lists: ``rater_ids[i]`` (strings) and ``ratings[i]`` (numbers).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

__all__ = [
    "RaterStats",
    "rater_statistics",
    "rater_z_scores",
    "human_scores",
    "rating_matrix",
    "cohen_kappa",
    "krippendorff_alpha",
    "mean_pairwise_correlation",
    "agreement",
]

DEGENERATE = ("drop", "zero", "error")


@dataclass(frozen=True)
class RaterStats:
    """One rater over the corpus: number of ratings, mean, standard deviation (with the ``ddof`` used)."""

    rater: str
    n: int
    mean: float
    sd: float

    @property
    def degenerate(self) -> bool:
        """True when z is undefined: a single rating, or zero (or undefined) standard deviation."""
        return self.n < 2 or not self.sd > 0 or not math.isfinite(self.sd)


def _check_shapes(rater_ids: Sequence[Sequence[str]], ratings: Sequence[Sequence[float]]) -> None:
    if len(rater_ids) != len(ratings):
        raise ValueError(f"rater_ids has {len(rater_ids)} pairs but ratings has {len(ratings)}")
    for i, (ids, vals) in enumerate(zip(rater_ids, ratings)):
        if len(ids) != len(vals):
            raise ValueError(f"pair {i}: {len(ids)} rater ids but {len(vals)} ratings")
        if len(set(ids)) != len(ids):
            raise ValueError(f"pair {i}: rater ids repeat ({list(ids)}); one rating per rater and pair")
        for j, v in enumerate(vals):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise TypeError(f"ratings[{i}][{j}] must be a number, got {type(v).__name__}")
            if not math.isfinite(float(v)):
                raise ValueError(f"ratings[{i}][{j}] is {v}; ratings must be finite")


def rater_statistics(rater_ids: Sequence[Sequence[str]], ratings: Sequence[Sequence[float]],
                     ddof: int = 0) -> dict[str, RaterStats]:
    """Mean and standard deviation of every rater over all the pairs that rater scored.

    ``sd = sqrt(sum((x - mean)^2) / (n - ddof))``; with ``n <= ddof`` the sd is NaN (degenerate rater).
    """
    _check_shapes(rater_ids, ratings)
    by_rater: dict[str, list[float]] = {}
    for ids, vals in zip(rater_ids, ratings):
        for r, v in zip(ids, vals):
            by_rater.setdefault(str(r), []).append(float(v))
    out = {}
    for r, vals in by_rater.items():
        x = np.asarray(vals, dtype=np.float64)
        sd = float(np.sqrt(((x - x.mean()) ** 2).sum() / (len(x) - ddof))) if len(x) > ddof else math.nan
        out[r] = RaterStats(r, len(x), float(x.mean()), sd)
    return out


def rater_z_scores(rater_ids: Sequence[Sequence[str]], ratings: Sequence[Sequence[float]], ddof: int = 0,
                   degenerate: str = "drop") -> list[list[float]]:
    """Standard score of every rating: ``z = (x - mean_r) / sd_r`` per rater ``r`` (see :func:`rater_statistics`).

    ``degenerate`` says what happens to the ratings of a rater whose z is undefined (a single rating, or all
    ratings equal):

    - ``"drop"`` (default): their z is NaN and they do not count in the pair's mean; a warning names the raters.
    - ``"zero"``: their z is 0 (the rater is put at the centre: such ratings say nothing about order); warns.
    - ``"error"``: ``ValueError`` naming the raters.

    Returns a list per pair parallel to ``ratings``.
    """
    if degenerate not in DEGENERATE:
        raise ValueError(f"degenerate must be one of {DEGENERATE}, got {degenerate!r}")
    stats = rater_statistics(rater_ids, ratings, ddof=ddof)
    bad = sorted(r for r, s in stats.items() if s.degenerate)
    if bad:
        detail = ", ".join(f"{r} (n={stats[r].n}, sd={stats[r].sd:.3g})" for r in bad[:10])
        msg = (f"{len(bad)} rater(s) have no defined z-score (a single rating or zero variance): {detail}"
               f"{' ...' if len(bad) > 10 else ''}")
        if degenerate == "error":
            raise ValueError(msg + "; pass degenerate='drop' or 'zero' to keep going")
        what = "left out of the pair means (degenerate='drop')" if degenerate == "drop" else \
            "given z = 0 (degenerate='zero')"
        warnings.warn(f"{msg}; their ratings are {what}", stacklevel=2)
    out = []
    for ids, vals in zip(rater_ids, ratings):
        row = []
        for r, v in zip(ids, vals):
            s = stats[str(r)]
            if s.degenerate:
                row.append(math.nan if degenerate == "drop" else 0.0)
            else:
                row.append((float(v) - s.mean) / s.sd)
        out.append(row)
    return out


def human_scores(z_scores: Sequence[Sequence[float]], ids: Sequence[str] | None = None) -> np.ndarray:
    """The human score of each pair: the mean of its raters' z-scores (NaN entries, i.e. dropped raters,
    left out). A pair with no usable rating gets NaN and a warning naming it (first ten)."""
    out = np.full(len(z_scores), np.nan)
    empty = []
    for i, row in enumerate(z_scores):
        vals = [v for v in row if not math.isnan(v)]
        if vals:
            out[i] = float(np.mean(vals))
        else:
            empty.append(ids[i] if ids is not None else i)
    if empty:
        warnings.warn(f"{len(empty)} pair(s) have no usable rating and get a NaN human score: {empty[:10]}",
                      stacklevel=2)
    return out


def rating_matrix(rater_ids: Sequence[Sequence[str]], ratings: Sequence[Sequence[float]]
                  ) -> tuple[list[str], np.ndarray]:
    """``(raters, M)``: ``M[k, i]`` is rater ``raters[k]``'s rating of pair ``i`` (NaN where not rated)."""
    _check_shapes(rater_ids, ratings)
    raters = sorted({str(r) for ids in rater_ids for r in ids})
    index = {r: k for k, r in enumerate(raters)}
    m = np.full((len(raters), len(ratings)), np.nan)
    for i, (ids, vals) in enumerate(zip(rater_ids, ratings)):
        for r, v in zip(ids, vals):
            m[index[str(r)], i] = float(v)
    return raters, m


def cohen_kappa(a: Sequence[float], b: Sequence[float], weights: str | None = None,
                categories: Sequence[float] | None = None) -> float:
    """Cohen's kappa of two raters over the same items: ``kappa = 1 - sum(w * O) / sum(w * E)``.

    ``O`` is the observed joint distribution of (a, b) over the categories, ``E`` the product of its margins;
    ``w`` is ``[i != j]`` (unweighted: ``kappa = (p_o - p_e) / (1 - p_e)``), ``|c_i - c_j|`` (``"linear"``) or
    ``(c_i - c_j)^2`` (``"quadratic"``) on the category values ``c``. ``categories`` default: the values seen.
    Range -1..1 (1 = perfect agreement, 0 = chance level). NaN when ``E`` has no weight (one category only).
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"a and b must be 1-D of the same length, got {x.shape} and {y.shape}")
    if len(x) == 0:
        raise ValueError("a and b are empty")
    cats = np.unique(np.concatenate([x, y])) if categories is None else np.asarray(sorted(categories), float)
    pos = {float(c): k for k, c in enumerate(cats)}
    for name, arr in (("a", x), ("b", y)):
        for i, v in enumerate(arr):
            if float(v) not in pos:
                raise ValueError(f"{name}[{i}] = {v} is not one of the categories {cats.tolist()}")
    k = len(cats)
    obs = np.zeros((k, k))
    for u, v in zip(x, y):
        obs[pos[float(u)], pos[float(v)]] += 1
    obs /= obs.sum()
    exp = np.outer(obs.sum(1), obs.sum(0))
    diff = cats[:, None] - cats[None, :]
    if weights is None:
        w = (diff != 0).astype(float)
    elif weights == "linear":
        w = np.abs(diff)
    elif weights == "quadratic":
        w = diff ** 2
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    denom = float((w * exp).sum())
    if denom == 0:
        return math.nan
    return 1.0 - float((w * obs).sum()) / denom


def krippendorff_alpha(matrix: np.ndarray, level: str = "interval") -> float:
    """Krippendorff's alpha of a raters x units matrix (NaN = not rated): ``alpha = 1 - D_o / D_e``.

    Only units with at least two ratings count ("pairable values"; ``n`` of them in all). With ``m_u`` values
    in unit ``u`` and metric ``delta``::

        D_o = 1/n * sum_u 1/(m_u - 1) * sum_{i != j in u} delta(v_i, v_j)
        D_e = 1/(n (n - 1)) * sum_{i != j over all pairable values} delta(v_i, v_j)

    ``level``: ``"interval"`` (``delta = (v_i - v_j)^2``) or ``"nominal"`` (``delta = [v_i != v_j]``).
    Range: 1 = perfect agreement, 0 = chance, below 0 = systematic disagreement. NaN when ``D_e`` is 0.
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"matrix must be raters x units (2-D), got shape {m.shape}")
    if level not in ("interval", "nominal"):
        raise ValueError(f"level must be 'interval' or 'nominal', got {level!r}")
    units = [col[~np.isnan(col)] for col in m.T]
    units = [u for u in units if len(u) >= 2]
    if not units:
        return math.nan
    values = np.concatenate(units)
    n = len(values)

    def pair_sum(v: np.ndarray) -> float:  # sum over ordered pairs i != j of delta(v_i, v_j)
        if level == "interval":
            return float(2 * len(v) * (v ** 2).sum() - 2 * v.sum() ** 2)
        _, counts = np.unique(v, return_counts=True)
        return float(len(v) ** 2 - (counts ** 2).sum())

    d_o = sum(pair_sum(u) / (len(u) - 1) for u in units) / n
    d_e = pair_sum(values) / (n * (n - 1))
    return math.nan if d_e == 0 else 1.0 - d_o / d_e


def mean_pairwise_correlation(matrix: np.ndarray, method: str = "pearson",
                              min_overlap: int = 3) -> tuple[float, int]:
    """Mean over rater pairs of the correlation of their ratings on the units both rated.

    Pairs sharing fewer than ``min_overlap`` units, or where one side is constant there, are skipped.
    Returns ``(mean, number of rater pairs used)``; ``(nan, 0)`` when no pair qualifies.
    """
    from kometrics.klue_sts.correlation import METHODS, correlation, undefined_reason

    m = np.asarray(matrix, dtype=np.float64)
    if method not in METHODS:
        raise ValueError(f"method must be 'pearson' or 'spearman', got {method!r}")
    vals = []
    for a, b in combinations(range(m.shape[0]), 2):
        both = ~np.isnan(m[a]) & ~np.isnan(m[b])
        x, y = m[a, both], m[b, both]
        if both.sum() < min_overlap or undefined_reason(x, y) is not None:
            continue
        vals.append(correlation(x, y, method)[0])
    return (float(np.mean(vals)), len(vals)) if vals else (math.nan, 0)


def agreement(rater_ids: Sequence[Sequence[str]], ratings: Sequence[Sequence[float]],
              categories: Sequence[float] | None = None) -> dict[str, Any]:
    """Inter-rater agreement of a corpus, as a JSON-able dict.

    Always: ``raters`` (count), ``krippendorff_alpha_interval``, ``mean_pairwise_pearson`` (and the number of
    rater pairs it averages). With exactly two raters who both rated every pair (the paper's setting) also
    ``cohen_kappa`` (unweighted, as the paper reports) and ``cohen_kappa_quadratic``. With fewer than two
    raters per pair anywhere (single-score data such as KorSTS) agreement is not defined: ``{"raters": n,
    "note": ...}``.
    """
    raters, m = rating_matrix(rater_ids, ratings)
    per_pair = (~np.isnan(m)).sum(0)
    if len(raters) < 2 or per_pair.max(initial=0) < 2:
        return {"raters": len(raters), "note": "fewer than two ratings per pair: agreement is not defined"}
    mpc, npairs = mean_pairwise_correlation(m)
    out: dict[str, Any] = {
        "raters": len(raters),
        "ratings_per_pair": {"min": int(per_pair.min()), "max": int(per_pair.max()),
                             "mean": float(per_pair.mean())},
        "krippendorff_alpha_interval": krippendorff_alpha(m, "interval"),
        "mean_pairwise_pearson": mpc,
        "mean_pairwise_pearson_rater_pairs": npairs,
    }
    if len(raters) == 2 and per_pair.min() == 2:
        out["cohen_kappa"] = cohen_kappa(m[0], m[1], categories=categories)
        out["cohen_kappa_quadratic"] = cohen_kappa(m[0], m[1], weights="quadratic", categories=categories)
    return out
