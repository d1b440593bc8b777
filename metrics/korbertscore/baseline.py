"""Baseline files for rescaling: the mean P, R, F1 of random sentence pairs at every layer.

bert_score computes its baselines from random pairs of monolingual Common Crawl sentences, no idf; the
rescaled score ``(x - b) / (1 - b)`` then puts an unrelated pair near 0. bert_score ships none for Korean
models, so this builds them from Korean text (e.g. the KLUE / KorSTS sentences in ../shared/data), all layers
in one forward pass, and writes bert_score's CSV format::

    LAYER,P,R,F
    0,0.61,0.61,0.60
    ...
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence

import numpy as np

from .pipeline import score_layers

__all__ = ["random_pairs", "build_baseline", "write_baseline"]


def random_pairs(texts: Sequence[str], n_pairs: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """``n_pairs`` random pairs of two different non-empty texts (drawn with replacement, seeded)."""
    pool = list(dict.fromkeys(t.strip() for t in texts if t and t.strip()))
    if len(pool) < 2:
        raise ValueError(f"texts must hold at least two different non-empty sentences, got {len(pool)}")
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(pool), size=n_pairs)
    b = (a + rng.integers(1, len(pool), size=n_pairs)) % len(pool)  # never the same sentence
    return [pool[i] for i in a], [pool[j] for j in b]


def write_baseline(table: dict[int, tuple[float, float, float]], path: str | os.PathLike) -> None:
    """Write ``{layer: (P, R, F)}`` as bert_score's baseline CSV (header ``LAYER,P,R,F``, one row per layer)."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["LAYER", "P", "R", "F"])
        for layer in sorted(table):
            w.writerow([layer, *(f"{v:.8f}" for v in table[layer])])


def build_baseline(texts: Sequence[str], model_type: str, output: str | os.PathLike | None = None,
                   n_pairs: int = 10000, seed: int = 0, batch_size: int = 64, device: str | None = None,
                   dtype: str | None = None, pairs_per_call: int = 500) -> dict[int, tuple[float, float, float]]:
    """Mean P, R, F1 over ``n_pairs`` random pairs of ``texts`` for every layer ``0..depth`` (one forward pass
    per sentence, no idf). Writes the table to ``output`` when given and returns it.

    Pairs are scored ``pairs_per_call`` at a time: a call holds every layer of every token of its sentences
    (about ``2 * pairs * tokens * (depth + 1) * hidden * 4`` bytes), so memory stays bounded; the means are
    those of one call (to float32 rounding)."""
    if isinstance(pairs_per_call, bool) or not isinstance(pairs_per_call, int) or pairs_per_call < 1:
        raise ValueError(f"pairs_per_call must be a positive integer, got {pairs_per_call!r}")
    cands, refs = random_pairs(texts, n_pairs, seed)
    sums: dict[int, np.ndarray] = {}
    for a in range(0, n_pairs, pairs_per_call):
        part = score_layers(cands[a:a + pairs_per_call], refs[a:a + pairs_per_call], model_type=model_type,
                            batch_size=batch_size, device=device, dtype=dtype)
        for x, v in part.items():
            sums[x] = sums.get(x, 0.0) + np.array([np.sum(v["precision"]), np.sum(v["recall"]), np.sum(v["f1"])])
    table = {x: tuple(float(t) for t in total / n_pairs) for x, total in sums.items()}
    if output is not None:
        write_baseline(table, output)
    return table
