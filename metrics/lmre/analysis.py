"""Agreement of LMRE scores with human judgments (the paper's Pearson r and Spearman ρ)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from .correlation import correlation

__all__ = ["acceptance_gap", "correlate_with_human", "format_gap_table"]


def correlate_with_human(scores: Sequence[float], human_scores: Sequence[float]) -> dict[str, Any]:
    """Pearson r and Spearman ρ (with two-sided p-values) between per-annotation scores and human scores.

    ``scores`` are e.g. LMRE ``best_score`` values or 0/1 ``accepted`` flags, ``human_scores`` e.g. 1-5
    ratings of the same annotations, in the same order. Pairs where either value is missing (``None`` or
    NaN) are left out with a warning. A coefficient is NaN, with a warning that says why, when it is
    undefined: fewer than two pairs left, or a constant side.

    >>> r = correlate_with_human([0.2, 0.5, 0.9, 1.0], [1, 2, 4, 5])
    >>> round(r["pearson"], 3), round(r["spearman"], 3), r["n"]
    (0.988, 1.0, 4)
    """
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
    names = ("scores", "human_scores")
    pearson, pearson_p = correlation(x, y, "pearson", names)
    spearman, spearman_p = correlation(x, y, "spearman", names)
    return {"pearson": pearson, "pearson_pvalue": pearson_p, "spearman": spearman, "spearman_pvalue": spearman_p,
            "n": len(x)}


def acceptance_gap(human_scores: Sequence[float], accepted: dict[str, Sequence[bool]],
                   acceptable_from: float) -> dict[str, Any]:
    """Acceptance rate per human-score group under each evaluation method, and its gap to human judgement.

    The LMRE paper's analysis: a human judges an annotation acceptable when its score is ``>= acceptable_from``
    (e.g. 3 on a 1-5 scale), so the human acceptance of a score group is 1 (acceptable) or 0. For each
    method (e.g. ``{"single": [...], "lmre": [...]}``, one accepted flag per annotation) and each group,
    ``rate`` is the share of the group's annotations the method accepts and ``gap`` = human acceptance -
    rate (both in [0, 1]; a positive gap under-accepts, a negative one over-accepts). ``acceptable``
    summarises the acceptable groups: ``mean_gap`` (the mean of their gaps, the figure the paper reports:
    single reference 26.59%, LMRE 7.04%) and ``pooled_gap`` (1 - rate over all their annotations).

    >>> g = acceptance_gap([5, 5, 4, 2], {"single": [True, False, False, False], "lmre": [True, True, True, False]}, 3)
    >>> [(row["score"], row["gap"]["single"], row["gap"]["lmre"]) for row in g["groups"]]
    [(2.0, 0.0, 0.0), (4.0, 1.0, 0.0), (5.0, 0.5, 0.0)]
    >>> g["acceptable"]["mean_gap"]
    {'single': 0.75, 'lmre': 0.0}
    """
    n = len(human_scores)
    if not accepted:
        raise ValueError("accepted needs at least one method, e.g. {'single': [...], 'lmre': [...]}")
    for name, flags in accepted.items():
        if len(flags) != n:
            raise ValueError(f"accepted[{name!r}] has {len(flags)} flags but human_scores has {n}; give one per "
                             "annotation")
        for i, f in enumerate(flags):
            if not isinstance(f, (bool, int)) or f not in (0, 1):
                raise TypeError(f"accepted[{name!r}][{i}]={f!r} is not a boolean")
    scores = []
    for i, s in enumerate(human_scores):
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s):
            raise ValueError(f"human_scores[{i}]={s!r} is not a finite number")
        scores.append(float(s))
    if not scores:
        raise ValueError("human_scores is empty")
    groups = []
    for value in sorted(set(scores)):
        idx = [i for i, s in enumerate(scores) if s == value]
        human = 1.0 if value >= acceptable_from else 0.0
        rate = {m: sum(bool(accepted[m][i]) for i in idx) / len(idx) for m in accepted}
        groups.append({"score": value, "n": len(idx), "human": human, "rate": rate,
                       "gap": {m: human - r for m, r in rate.items()}})
    ok = [g for g in groups if g["human"] == 1.0]
    ok_idx = [i for i, s in enumerate(scores) if s >= acceptable_from]
    summary: dict[str, Any] = {"n": len(ok_idx), "groups": len(ok)}
    if ok:
        summary["mean_gap"] = {m: sum(g["gap"][m] for g in ok) / len(ok) for m in accepted}
        summary["pooled_gap"] = {m: 1.0 - sum(bool(accepted[m][i]) for i in ok_idx) / len(ok_idx) for m in accepted}
    else:
        import warnings

        warnings.warn(f"acceptance_gap: no annotation has a human score >= {acceptable_from}; the acceptable "
                      "summary is empty", stacklevel=2)
    return {"acceptable_from": float(acceptable_from), "methods": list(accepted), "groups": groups,
            "acceptable": summary}


def format_gap_table(gap: dict[str, Any]) -> str:
    """The :func:`acceptance_gap` result as a plain-text table (rates and gaps in percent)."""
    methods = gap["methods"]
    head = ["score", "n", "human"] + [f"{m} rate" for m in methods] + [f"{m} gap" for m in methods]
    rows = [[f"{g['score']:g}", str(g["n"]), f"{100 * g['human']:.0f}%"]
            + [f"{100 * g['rate'][m]:.2f}%" for m in methods] + [f"{100 * g['gap'][m]:+.2f}%" for m in methods]
            for g in gap["groups"]]
    acc = gap["acceptable"]
    if "mean_gap" in acc:
        rows.append([f">={gap['acceptable_from']:g} (mean of groups)", str(acc["n"]), "100%"] + [""] * len(methods)
                    + [f"{100 * acc['mean_gap'][m]:+.2f}%" for m in methods])
        rows.append([f">={gap['acceptable_from']:g} (pooled)", str(acc["n"]), "100%"] + [""] * len(methods)
                    + [f"{100 * acc['pooled_gap'][m]:+.2f}%" for m in methods])
    widths = [max(len(r[k]) for r in [head, *rows]) for k in range(len(head))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
