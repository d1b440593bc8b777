"""MERGE seed-variant (SV) accuracy, matching correctness (MC) and the per-class curves.

Notation (the MERGE paper): a seed problem ``s`` has a set ``V(s)`` of variants (the same premise and
hypothesis with one shared word replaced, same label). With ``c(s)`` the number of variants of ``s`` that
the model classifies correctly and ``n(s) = |V(s)|``,

    SV(CT) = |{s : n(s) > 0 and c(s) / n(s) >= CT}| / |{s : n(s) > 0}|          (CT in (0, 1])

i.e. a seed counts as solved at correctness threshold CT when *at least* a share CT of its variants is
right. The matching correctness is the CT whose SV accuracy is closest to the plain accuracy on the seeds:

    MC = max argmin_CT |SV(CT) - SeedAcc|                                       (ties: the higher CT)

A low MC means the model's seed accuracy is only "explained" by accepting seeds where few variants are
right, i.e. poor generalisation to minimal replacements.

Everything is vectorised: rows are grouped by seed id once (``pandas.factorize``, else ``np.unique``),
counts come from ``np.bincount`` and CT comparisons are exact integer arithmetic
``c * den >= num * n`` with ``CT = num/den`` (no float round-off at 0.15, 0.35, ...).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .inputs import (
    DEFAULT_THRESHOLDS,
    as_flags,
    as_labels,
    as_seed_ids,
    as_threshold_grid,
    as_word_classes,
    check_lengths,
)

__all__ = [
    "VERSION",
    "factorize",
    "sv_pass_counts",
    "matching_correctness",
    "signature",
    "score",
    "seed_variant_accuracy",
]

#: Version of the metric (the kometrics release it ships with), part of every signature.
VERSION = "0.1.0"


def factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` with ``uniques[codes] == values``; codes are int64 in ``[0, len(uniques))``."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas comes with datasets
        uniques, codes = np.unique(values, return_inverse=True)
        return codes.astype(np.int64).reshape(-1), uniques
    codes, uniques = pd.factorize(values, sort=False)
    return codes.astype(np.int64, copy=False), np.asarray(uniques, dtype=object)


def sv_pass_counts(n_correct: np.ndarray, n_total: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Number of seeds whose share of correct variants is at least each CT.

    ``n_correct[s] / n_total[s] >= num[t] / den[t]`` is tested as ``n_correct * den >= num * n_total``
    in int64 (exact). ``n_total`` must be > 0 for every seed passed in. Returns int64 counts, one per CT.
    """
    n_correct = n_correct.astype(np.int64, copy=False)
    n_total = n_total.astype(np.int64, copy=False)
    # Seeds share few distinct (c, n) pairs: compare each pair once, weighted by how many seeds have it.
    if n_total.size == 0:
        return np.zeros(len(num), dtype=np.int64)
    base = int(n_total.max()) + 1
    pair_keys, weight = np.unique(n_correct * base + n_total, return_counts=True)
    c, n = pair_keys // base, pair_keys % base
    passes = c[:, None] * den[None, :] >= num[None, :] * n[:, None]
    return (passes * weight[:, None]).sum(axis=0).astype(np.int64)


def matching_correctness(pass_counts: np.ndarray, n_seeds_correct: int, cts: list[float]) -> float:
    """The CT whose SV accuracy is closest to the seed accuracy (both over the same ``n`` seeds).

    Both are fractions of the same denominator, so ``|SV(CT) - SeedAcc| = |pass_counts - n_seeds_correct| / n``
    is compared exactly in integers; among equally close CTs the highest is returned.
    """
    diff = np.abs(pass_counts.astype(np.int64) - int(n_seeds_correct))
    best = np.flatnonzero(diff == diff.min())
    return float(cts[int(best[-1])])


def signature(cts: list[float]) -> str:
    """How a result was made (the sacrebleu habit): the CT grid (``default`` = 0.05, 0.10, ..., 1.00) and the
    version; CTs are exact fractions, written with ``%g``."""
    grid = "default" if cts == list(DEFAULT_THRESHOLDS) else ",".join(f"{c:g}" for c in cts)
    return f"merge_sv_accuracy|ct:{grid}|version:{VERSION}"


def _curve(pass_counts: np.ndarray, n: int, cts: list[float]) -> dict[float, float]:
    return {ct: float(k) / n for ct, k in zip(cts, pass_counts.tolist())}


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def score(
    predictions: Any,
    references: Any,
    seed_ids: Any,
    is_seed: Any = None,
    word_classes: Any = None,
    thresholds: Any = None,
) -> dict[str, Any]:
    """MERGE metrics for predictions on a set of seed and variant rows: the library call, the same result as
    ``evaluate.load("metrics/merge_sv_accuracy").compute``.

    Args:
        predictions, references: integer class ids, one per row.
        seed_ids: the id of the seed each row belongs to (str).
        is_seed: ``True`` on the row holding the seed problem itself (at most one per seed id), ``False`` on
            variants. ``None``: every row is a variant (no seed accuracy, no MC).
        word_classes: the class of the replaced word on variant rows (``''`` = unknown; ignored on seed rows).
        thresholds: the CT grid, numbers in (0, 1] (default 0.05, 0.10, ..., 1.0).

    Returns a dict (see the metric card for every definition): ``accuracy`` (over variant rows),
    ``seed_accuracy``, ``sv_accuracy`` {CT: value}, ``matching_correctness``, ``sv_accuracy_by_word_class``
    {class: {CT: value}}, ``variant_accuracy_given_seed_correct`` / ``_seed_wrong``, ``n_seeds`` (seeds in
    the SV curve), ``n_variants``, ``n_seeds_without_variants``, ``seed_accuracy_with_variants`` (the seed
    accuracy MC is matched against), ``n_variants_without_word_class``, and a ``signature``. Values that need
    seed rows or word classes are ``None`` without them.

    Raises ``ValueError``/``TypeError`` on bad input: non-integer or negative labels, lengths that differ,
    empty seed ids, two seed rows for one id, variants whose seed row is missing while other seeds have
    one, CT outside (0, 1], no variant row at all. Seeds with a seed row but no variant are left out of
    the SV curve, counted in ``n_seeds_without_variants`` and warned about.
    """
    preds = as_labels(predictions, "predictions")
    refs = as_labels(references, "references")
    ids = as_seed_ids(seed_ids)
    flags = None if is_seed is None else as_flags(is_seed)
    classes = None if word_classes is None else as_word_classes(word_classes)
    check_lengths(predictions=preds, references=refs, seed_ids=ids, is_seed=flags, word_classes=classes)
    cts, num, den = as_threshold_grid(thresholds)
    if len(preds) == 0:
        raise ValueError("no rows: pass the predictions for a MERGE set (seed and variant rows)")

    codes, uniques = factorize(ids)
    n_groups = len(uniques)
    correct = preds == refs
    seed_row = np.zeros(len(preds), dtype=bool) if flags is None else flags
    variant = ~seed_row
    if not variant.any():
        raise ValueError("no variant rows (is_seed is True everywhere): the SV accuracy needs variants")

    n_var = np.bincount(codes[variant], minlength=n_groups)
    c_var = np.bincount(codes[variant & correct], minlength=n_groups)
    n_seedrows = np.bincount(codes[seed_row], minlength=n_groups)
    has_seed_rows = bool(seed_row.any())

    if (n_seedrows > 1).any():
        rows = np.flatnonzero(seed_row)
        _, first_idx = np.unique(codes[rows], return_index=True)
        dup = np.setdiff1d(rows, rows[first_idx])[0]
        first = rows[first_idx][np.searchsorted(np.unique(codes[rows]), codes[dup])]
        raise ValueError(f"is_seed[{dup}] marks a second seed row for seed_ids[{dup}]={ids[dup]!r} "
                         f"(the first is row {first}): each seed id has at most one seed row")
    if has_seed_rows:
        orphan = variant & (n_seedrows[codes] == 0)
        if orphan.any():
            i = _first(orphan)
            raise ValueError(f"seed_ids[{i}]={ids[i]!r} has variant rows but no seed row (is_seed=True) while "
                             f"other seeds have one ({int(np.count_nonzero(orphan))} such variant row(s)): add "
                             "the seed rows or omit is_seed to score variants only")
    in_curve = n_var > 0
    n_seeds = int(in_curve.sum())
    n_without = int(np.count_nonzero(~in_curve))
    if n_without:
        i = _first(seed_row & ~in_curve[codes])
        warnings.warn(f"{n_without} seed(s) have a seed row but no variant (first: seed_ids[{i}]={ids[i]!r}); "
                      "they are left out of the SV curves and counted in n_seeds_without_variants",
                      stacklevel=2)

    pass_counts = sv_pass_counts(c_var[in_curve], n_var[in_curve], num, den)
    n_variants = int(n_var.sum())
    result: dict[str, Any] = {
        "accuracy": float(c_var.sum()) / n_variants,
        "seed_accuracy": None,
        "sv_accuracy": _curve(pass_counts, n_seeds, cts),
        "matching_correctness": None,
        "sv_accuracy_by_word_class": None,
        "variant_accuracy_given_seed_correct": None,
        "variant_accuracy_given_seed_wrong": None,
        "n_seeds": n_seeds,
        "n_variants": n_variants,
        "n_seeds_without_variants": n_without,
        "seed_accuracy_with_variants": None,
        "n_variants_without_word_class": None,
        "signature": signature(cts),
    }

    if has_seed_rows:
        seed_ok = np.bincount(codes[seed_row & correct], minlength=n_groups).astype(bool)
        result["seed_accuracy"] = float(np.count_nonzero(correct[seed_row])) / int(seed_row.sum())
        n_ok_in_curve = int(np.count_nonzero(seed_ok & in_curve))
        result["seed_accuracy_with_variants"] = n_ok_in_curve / n_seeds
        result["matching_correctness"] = matching_correctness(pass_counts, n_ok_in_curve, cts)
        given_ok = variant & seed_ok[codes]
        given_wrong = variant & ~seed_ok[codes]
        if given_ok.any():
            result["variant_accuracy_given_seed_correct"] = float(np.count_nonzero(correct[given_ok])) / int(
                given_ok.sum())
        if given_wrong.any():
            result["variant_accuracy_given_seed_wrong"] = float(np.count_nonzero(correct[given_wrong])) / int(
                given_wrong.sum())
        seed_label = np.full(n_groups, -1, dtype=np.int64)
        seed_label[codes[seed_row]] = refs[seed_row]
        mismatch = variant & (seed_label[codes] != refs)
        if mismatch.any():
            i = _first(mismatch)
            warnings.warn(f"{int(mismatch.sum())} variant row(s) have a reference label different from their seed's "
                          f"(first: row {i}, seed_ids[{i}]={ids[i]!r}); MERE keeps the label, so check the data",
                          stacklevel=2)

    if classes is not None:
        var_classes = classes[variant]
        known = var_classes != ""
        result["n_variants_without_word_class"] = int(np.count_nonzero(~known))
        if not known.all():
            i = _first(variant & (classes == ""))
            warnings.warn(f"{int(np.count_nonzero(~known))} variant row(s) have no word class (first: row {i}); "
                          "they are left out of sv_accuracy_by_word_class and counted in "
                          "n_variants_without_word_class", stacklevel=2)
        cls_codes, cls_names = factorize(var_classes[known])
        k = max(len(cls_names), 1)
        key = codes[variant][known] * k + cls_codes
        keys, inv = np.unique(key, return_inverse=True)
        inv = inv.reshape(-1)
        n_k = np.bincount(inv, minlength=len(keys))
        c_k = np.bincount(inv[correct[variant][known]], minlength=len(keys))
        key_class = keys % k
        by_class: dict[str, dict[float, float]] = {}
        for j in np.argsort(cls_names.astype(str), kind="stable"):
            sel = key_class == j
            by_class[str(cls_names[j])] = _curve(sv_pass_counts(c_k[sel], n_k[sel], num, den),
                                                 int(sel.sum()), cts)
        result["sv_accuracy_by_word_class"] = by_class
    return result


#: The former name of :func:`score`.
seed_variant_accuracy = score
