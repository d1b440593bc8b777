"""Benchmark: the vectorised SV accuracy against a plain-Python brute-force loop, measured in the same run.

``kometrics bench merge_sv_accuracy [--rows 1000000] [--variants-per-seed 10]`` prints the timings and ratio.
:func:`brute_force_sv_accuracy` is also the independent reference the tests compare against: it shares no
code with ``scoring.py`` (dicts, loops and ``fractions.Fraction``).
"""

from __future__ import annotations

import time
from collections import defaultdict
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["brute_force_sv_accuracy", "random_merge_set", "run_benchmark"]


def brute_force_sv_accuracy(predictions, references, seed_ids, is_seed=None, word_classes=None,
                            thresholds=None) -> dict[str, Any]:
    """The definitions of the metric card, one loop each, exact fractions. No input checks."""
    if thresholds is None:
        thresholds = [k / 20 for k in range(1, 21)]
    cts = sorted(Fraction(t).limit_denominator(10_000) for t in thresholds)
    n = len(predictions)
    is_seed = [False] * n if is_seed is None else list(is_seed)
    var_total: dict[str, int] = defaultdict(int)
    var_right: dict[str, int] = defaultdict(int)
    seed_right: dict[str, bool] = {}
    cls_total: dict[tuple[str, str], int] = defaultdict(int)
    cls_right: dict[tuple[str, str], int] = defaultdict(int)
    for i in range(n):
        ok = int(predictions[i]) == int(references[i])
        s = seed_ids[i]
        if is_seed[i]:
            seed_right[s] = ok
            continue
        var_total[s] += 1
        var_right[s] += ok
        if word_classes is not None and word_classes[i] != "":
            cls_total[(s, word_classes[i])] += 1
            cls_right[(s, word_classes[i])] += ok

    def curve(total, right):
        keys = list(total)
        return {float(ct): sum(1 for k in keys if Fraction(right[k], total[k]) >= ct) / len(keys) for ct in cts}

    out: dict[str, Any] = {"accuracy": sum(var_right.values()) / sum(var_total.values()),
                           "sv_accuracy": curve(var_total, var_right),
                           "n_seeds": len(var_total),
                           "n_seeds_without_variants": sum(1 for s in seed_right if s not in var_total)}
    if seed_right:
        out["seed_accuracy"] = sum(seed_right.values()) / len(seed_right)
        target = sum(seed_right[s] for s in var_total) / len(var_total)
        best = None
        for ct in cts:  # ascending, so '<=' keeps the higher CT on ties
            d = abs(Fraction(sum(1 for s in var_total if Fraction(var_right[s], var_total[s]) >= ct),
                             len(var_total)) - Fraction(sum(seed_right[s] for s in var_total), len(var_total)))
            if best is None or d <= best[0]:
                best = (d, float(ct))
        out["matching_correctness"] = best[1]
        out["seed_accuracy_with_variants"] = target
        for name, want in (("variant_accuracy_given_seed_correct", True),
                           ("variant_accuracy_given_seed_wrong", False)):
            tot = sum(var_total[s] for s in var_total if seed_right[s] == want)
            out[name] = sum(var_right[s] for s in var_total if seed_right[s] == want) / tot if tot else None
    if word_classes is not None:
        out["sv_accuracy_by_word_class"] = {}
        for cls in sorted({c for _, c in cls_total}):
            keys = [k for k in cls_total if k[1] == cls]
            out["sv_accuracy_by_word_class"][cls] = curve({k: cls_total[k] for k in keys},
                                                          {k: cls_right[k] for k in keys})
    return out


def random_merge_set(n_rows: int, variants_per_seed: int = 10, n_labels: int = 3, seed: int = 0,
                     p_correct: float = 0.8) -> dict[str, Any]:
    """A random MERGE-shaped set: seeds with a seed row and 1..2*variants_per_seed-1 variants each."""
    rng = np.random.default_rng(seed)
    sizes = []
    total = 0
    while total < n_rows:
        k = int(rng.integers(1, 2 * variants_per_seed)) + 1
        k = min(k, n_rows - total)
        if k < 2 and sizes:  # a last seed without variants: give its row to the previous seed
            sizes[-1] += k
        else:
            sizes.append(k)
        total += k
    group = np.repeat(np.arange(len(sizes)), sizes)
    first = np.r_[0, np.cumsum(sizes)[:-1]]
    is_seed = np.zeros(n_rows, dtype=bool)
    is_seed[first] = True
    refs = rng.integers(0, n_labels, len(sizes))[group]
    preds = np.where(rng.random(n_rows) < p_correct, refs, rng.integers(0, n_labels, n_rows))
    classes = np.array(["NOUN", "VERB", "ADJ", "ADV"], dtype=object)[rng.integers(0, 4, n_rows)]
    classes[is_seed] = ""
    ids = np.array([f"seed-{g}" for g in range(len(sizes))], dtype=object)[group]
    return {"predictions": preds, "references": refs, "seed_ids": ids, "is_seed": is_seed, "word_classes": classes}


def run_benchmark(n_rows: int = 1_000_000, variants_per_seed: int = 10, brute_rows: int = 200_000,
                  repeat: int = 3) -> dict[str, float]:
    """Time :func:`seed_variant_accuracy` on ``n_rows`` and the brute force on ``brute_rows`` (scaled)."""
    from kometrics.merge_sv_accuracy.scoring import seed_variant_accuracy

    data = random_merge_set(n_rows, variants_per_seed)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        seed_variant_accuracy(**data)
        best = min(best, time.perf_counter() - t0)
    sub = random_merge_set(brute_rows, variants_per_seed, seed=1)
    lists = {k: v.tolist() for k, v in sub.items()}
    t0 = time.perf_counter()
    brute_force_sv_accuracy(**lists)
    brute = (time.perf_counter() - t0) * n_rows / brute_rows
    t0 = time.perf_counter()
    seed_variant_accuracy(**lists)
    from_lists = time.perf_counter() - t0
    return {"rows": n_rows, "vectorised_s": best, "brute_force_s_scaled": brute, "speedup": brute / best,
            "vectorised_from_python_lists_s_at_brute_rows": from_lists, "brute_rows": brute_rows}


def main() -> None:  # pragma: no cover - printed by the CLI
    out = run_benchmark()
    print(out)


if __name__ == "__main__":  # pragma: no cover
    main()
