"""The math of (Korean) BERTScore as small pure functions, in the notation of Hyeon & Choi (2019).

A reference ``x = <x_1..x_n>`` and a candidate ``x̂ = <x̂_1..x̂_m>`` are word-piece sequences with contextual
embeddings; embeddings here are already L2-normalised, so ``x_i · x̂_j`` is their cosine similarity.

    P = Σ_j w(x̂_j) max_i x_i·x̂_j / Σ_j w(x̂_j)        (greedy matching along the candidate)
    R = Σ_i w(x_i) max_j x_i·x̂_j / Σ_i w(x_i)         (greedy matching along the reference)
    F1 = 2 P R / (P + R)

``w`` is 1 (0 for ``[CLS]``/``[SEP]``, which stay in the max as in bert_score) or the idf weight
``idf(t) = log((M + 1) / (df(t) + 1))`` over ``M`` idf sentences. With several references, P, R and F1 are
each maxed over the references, then optionally rescaled as ``(X - b) / (1 - b)``.
"""

from __future__ import annotations

import csv
import math
import os
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import torch

__all__ = ["idf_weights", "weight_table", "greedy_match", "f1", "rescale", "read_baseline", "max_over_references"]


def idf_weights(sentences_ids: Iterable[Sequence[int]]) -> tuple[dict[int, float], float]:
    """``idf(t) = log((M + 1) / (df(t) + 1))`` for every piece id seen in the ``M`` sentences (given as piece
    ids, special tokens included); unseen pieces get ``log(M + 1)`` (the second value). Range ``[0, log(M+1)]``.
    """
    df: Counter[int] = Counter()
    m = 0
    for ids in sentences_ids:
        df.update(set(ids))
        m += 1
    return {t: math.log((m + 1) / (c + 1)) for t, c in df.items()}, math.log(m + 1)


def weight_table(size: int, idf: tuple[dict[int, float], float] | None, zero_ids: Iterable[int]) -> np.ndarray:
    """A lookup ``table[id] -> weight`` of length ``size``: idf values (``idf`` given) or 1 with ``zero_ids``
    (``[CLS]``, ``[SEP]``) at 0."""
    if idf is None:
        table = np.ones(size, dtype=np.float32)
        table[[i for i in zero_ids if i < size]] = 0.0
        return table
    values, default = idf
    table = np.full(size, default, dtype=np.float32)
    if values:
        keys = np.fromiter(values.keys(), dtype=np.int64, count=len(values))
        vals = np.fromiter(values.values(), dtype=np.float64, count=len(values))
        table[keys] = vals
    return table


def greedy_match(sim: torch.Tensor, cand_valid: torch.Tensor, ref_valid: torch.Tensor,
                 cand_w: torch.Tensor, ref_w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Greedy matching precision and recall, batched.

    ``sim[..., j, i]`` is the cosine of candidate piece ``j`` and reference piece ``i`` (any leading batch
    dims, e.g. ``[B, M, N]`` or ``[B, layers, M, N]``); ``cand_valid [B, M]`` / ``ref_valid [B, N]`` mark real
    pieces and ``cand_w`` / ``ref_w`` their weights (0 where not valid). Returns ``(P, R)`` of the leading
    shape; a pair whose weights sum to 0 gives NaN (the caller decides what that means).
    """
    extra = sim.dim() - 3
    cv = cand_valid.view(cand_valid.shape[0], *([1] * extra), cand_valid.shape[1])
    rv = ref_valid.view(ref_valid.shape[0], *([1] * extra), ref_valid.shape[1])
    masked = sim.masked_fill(~(cv.unsqueeze(-1) & rv.unsqueeze(-2)), -math.inf)
    best_for_cand = masked.max(dim=-1).values.masked_fill(~cv, 0.0)  # max_i x_i·x̂_j
    best_for_ref = masked.max(dim=-2).values.masked_fill(~rv, 0.0)  # max_j x_i·x̂_j
    cw = cand_w.view(cv.shape)
    rw = ref_w.view(rv.shape)
    precision = (best_for_cand * cw).sum(-1) / cw.sum(-1)
    recall = (best_for_ref * rw).sum(-1) / rw.sum(-1)
    return precision, recall


def f1(precision: torch.Tensor, recall: torch.Tensor) -> torch.Tensor:
    """Harmonic mean ``2PR / (P + R)``; NaN (0/0) becomes 0, as in bert_score."""
    out = 2 * precision * recall / (precision + recall)
    return torch.nan_to_num(out, nan=0.0)


def rescale(x: np.ndarray, b: float) -> np.ndarray:
    """Baseline rescaling ``(x - b) / (1 - b)``: a random pair scores about 0, an identical pair 1."""
    return (x - b) / (1 - b)


def read_baseline(path: str | os.PathLike, layer: int) -> tuple[float, float, float]:
    """``(b_P, b_R, b_F)`` for ``layer`` from a bert_score baseline file (CSV with header ``LAYER,P,R,F``)."""
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    if not rows or [c.strip() for c in rows[0][:4]] != ["LAYER", "P", "R", "F"]:
        raise ValueError(f"baseline_path {os.fspath(path)!r} is not a bert_score baseline file: its header must be "
                         "LAYER,P,R,F")
    for row in rows[1:]:
        if row and int(float(row[0])) == layer:
            return float(row[1]), float(row[2]), float(row[3])
    raise ValueError(f"baseline_path {os.fspath(path)!r} has no row for layer {layer}")


def max_over_references(values: np.ndarray, groups: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group (prediction) the max of ``values`` over its references and the index of that reference.

    ``groups`` gives each flat pair's prediction index, non-decreasing; ``values`` may have leading dims
    (e.g. ``[3, n_pairs]``). Returns ``(max [..., n_groups], argmax of the last row [n_groups])``.
    """
    starts = np.searchsorted(groups, np.arange(n_groups))
    maxed = np.maximum.reduceat(values, starts, axis=-1)
    counts = np.diff(np.append(starts, len(groups)))
    width = int(counts.max()) if n_groups else 0
    grid = np.full((n_groups, width), -np.inf)
    col = np.arange(len(groups)) - np.repeat(starts, counts)
    grid[groups, col] = np.nan_to_num(np.asarray(values).reshape(-1, len(groups))[-1], nan=-np.inf)
    return maxed, grid.argmax(axis=1) if n_groups else np.zeros(0, dtype=int)
