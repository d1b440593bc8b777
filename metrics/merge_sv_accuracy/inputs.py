"""Input checks for MERGE seed-variant accuracy: labels, seed ids, seed flags, word classes, the CT grid.

Every check raises ``TypeError``/``ValueError`` naming the argument, the problem and the first offending
index, so nothing is silently cast (``datasets.Value("int64")`` would truncate ``1.7`` to ``1``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_THRESHOLDS",
    "MAX_CT_DENOMINATOR",
    "as_labels",
    "as_seed_ids",
    "as_flags",
    "as_word_classes",
    "as_threshold_grid",
    "check_lengths",
]

#: The correctness-threshold grid CT of the paper's plots: 0.05, 0.10, ..., 1.00 (20 values).
DEFAULT_THRESHOLDS: tuple[float, ...] = tuple(float(Fraction(k, 20)) for k in range(1, 21))
#: CT values are read as the nearest fraction with a denominator up to this (0.15 -> 3/20 exactly).
MAX_CT_DENOMINATOR = 10_000


def _to_array(values: Any, name: str, keep_objects: bool = True) -> np.ndarray:
    if hasattr(values, "detach") and hasattr(values, "cpu"):  # torch tensor
        values = values.detach().cpu().numpy()
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(f"{name} must be a sequence, got {type(values).__name__}")
    if isinstance(values, np.ndarray):
        arr = values
    elif keep_objects:  # strings: never let numpy turn 1 into '1'
        arr = np.empty(len(values), dtype=object)
        arr[:] = list(values)
    else:  # numbers: let numpy find a numeric dtype fast, fall back to objects
        try:
            arr = np.asarray(values)
        except ValueError:
            arr = np.empty(len(values), dtype=object)
            arr[:] = list(values)
        if arr.dtype.kind not in "iub":
            arr = np.empty(len(values), dtype=object)
            arr[:] = list(values)
    if arr.ndim != 1:
        nested = next((i for i, v in enumerate(values) if np.ndim(v) != 0), None) if arr.ndim > 1 else None
        where = f": {name}[{nested}] is {values[nested]!r}" if nested is not None else ""
        raise ValueError(f"{name} must be one value per row (1-D), got shape {arr.shape}{where}")
    return arr


def as_labels(values: Any, name: str) -> np.ndarray:
    """Integer class ids (>= 0) as an int64 array.

    Rejects floats (even ``1.0``), bools, strings and negative ids (``-1`` marks unlabelled rows in the
    Hugging Face NLI datasets: drop those rows first). Map string labels to ids before calling.
    """
    if not isinstance(values, np.ndarray) and not hasattr(values, "detach") and isinstance(values, Sequence):
        # numpy would read [True, 0, 1] as the integers [1, 0, 1]: a bool among the labels is refused here
        for i, v in enumerate(values):
            if isinstance(v, (bool, np.bool_)):
                raise TypeError(f"{name}[{i}] is {v!r} (bool): labels must be integer class ids, not booleans "
                                "(pass int(v) if True/False really are the classes 1/0)")
    arr = _to_array(values, name, keep_objects=False)
    if arr.dtype.kind in "iu":
        out = arr.astype(np.int64, copy=False)
    else:
        if arr.dtype.kind == "O":
            for i, v in enumerate(arr):
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
                    raise TypeError(
                        f"{name}[{i}] is {v!r} ({type(v).__name__}): labels must be integer class ids "
                        "(map string labels with a dict, take logits.argmax(-1) for predictions)")
            out = arr.astype(np.int64) if len(arr) else np.zeros(0, dtype=np.int64)
        else:
            first = arr[0] if len(arr) else None
            raise TypeError(f"{name}[0] is {first!r} ({arr.dtype} array): labels must be integer class ids "
                            "(map string labels with a dict, take logits.argmax(-1) for predictions)")
    neg = np.flatnonzero(out < 0)
    if neg.size:
        i = int(neg[0])
        raise ValueError(f"{name}[{i}] is {out[i]}: labels must be class ids >= 0 "
                         f"({neg.size} negative value(s); -1 marks unlabelled rows, drop them)")
    return out


def as_seed_ids(values: Any, name: str = "seed_ids") -> np.ndarray:
    """Non-empty strings as a numpy array (object or unicode)."""
    arr = _to_array(values, name)
    if arr.dtype.kind == "U":
        empty = np.flatnonzero(arr == "")
    else:
        for i, v in enumerate(arr):
            if not isinstance(v, str):
                raise TypeError(f"{name}[{i}] is {v!r} ({type(v).__name__}): seed ids must be strings "
                                "(pass str(id))")
        empty = np.flatnonzero(arr == "") if len(arr) else np.zeros(0, dtype=np.int64)
    if empty.size:
        raise ValueError(f"{name}[{int(empty[0])}] is an empty string: every row needs the id of its seed")
    return arr


def as_flags(values: Any, name: str = "is_seed") -> np.ndarray:
    """Booleans (``True``/``False``, numpy bools, or 0/1 integers) as a bool array."""
    arr = _to_array(values, name, keep_objects=False)
    if arr.dtype.kind == "b":
        return arr.astype(bool, copy=False)
    if arr.dtype.kind in "iu":
        bad = np.flatnonzero((arr != 0) & (arr != 1))
    elif arr.dtype.kind == "O":
        ok = np.fromiter((isinstance(v, (bool, np.bool_)) or (isinstance(v, numbers.Integral) and v in (0, 1))
                          for v in arr), dtype=bool, count=len(arr))
        bad = np.flatnonzero(~ok)
    else:
        bad = np.arange(min(len(arr), 1))
    if bad.size:
        i = int(bad[0])
        raise TypeError(f"{name}[{i}] is {arr[i]!r}: pass booleans (True for the seed row, False for a variant)")
    return arr.astype(bool)


def as_word_classes(values: Any, name: str = "word_classes") -> np.ndarray:
    """Strings (empty for seed rows or an unknown class) as an object array."""
    arr = _to_array(values, name)
    if arr.dtype.kind != "U":
        for i, v in enumerate(arr):
            if not isinstance(v, str):
                raise TypeError(f"{name}[{i}] is {v!r} ({type(v).__name__}): word classes must be strings "
                                "('' for seed rows)")
    return arr.astype(object)


def as_threshold_grid(thresholds: Iterable[float] | float | None) -> tuple[list[float], np.ndarray, np.ndarray]:
    """Read the correctness-threshold grid.

    Each CT is read as the nearest fraction ``num/den`` with ``den <= MAX_CT_DENOMINATOR`` (so ``0.15`` and
    ``np.arange(0.05, 1.01, 0.05)[2] == 0.15000000000000002`` both mean exactly 3/20), and must lie in
    (0, 1]. Returns ``(ct_values, numerators, denominators)`` sorted ascending; ``ct_values`` are
    ``float(num/den)`` (the result dict's keys).
    """
    if thresholds is None:
        thresholds = DEFAULT_THRESHOLDS
    if isinstance(thresholds, numbers.Real) and not isinstance(thresholds, bool):
        thresholds = [thresholds]
    if isinstance(thresholds, (str, bytes)) or not isinstance(thresholds, (Sequence, np.ndarray, Iterable)):
        raise TypeError(f"thresholds must be a list of numbers in (0, 1], got {type(thresholds).__name__}")
    values = list(thresholds)
    if not values:
        raise ValueError("thresholds is empty: pass at least one correctness threshold in (0, 1]")
    fracs: list[Fraction] = []
    for i, t in enumerate(values):
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, numbers.Real):
            raise TypeError(f"thresholds[{i}] is {t!r}: correctness thresholds are numbers in (0, 1]")
        if not math.isfinite(float(t)):
            raise ValueError(f"thresholds[{i}] is {t!r}: correctness thresholds are numbers in (0, 1]")
        f = Fraction(float(t)).limit_denominator(MAX_CT_DENOMINATOR)
        if not 0 < f <= 1:
            raise ValueError(f"thresholds[{i}] is {t!r}: correctness thresholds must lie in (0, 1] "
                             "(CT = 0 would count every seed, CT > 1 none)")
        if f in fracs:
            raise ValueError(f"thresholds[{i}] is {t!r}, a duplicate of thresholds[{fracs.index(f)}]")
        fracs.append(f)
    fracs.sort()
    return ([float(f) for f in fracs], np.array([f.numerator for f in fracs], dtype=np.int64),
            np.array([f.denominator for f in fracs], dtype=np.int64))


def check_lengths(**columns: Any) -> None:
    """All given columns (``None`` = not given) have the same length."""
    given = {k: len(v) for k, v in columns.items() if v is not None}
    if len(set(given.values())) > 1:
        first = next(iter(given))
        for k, n in given.items():
            if n != given[first]:
                raise ValueError(f"{first} and {k} differ in length: {given[first]} != {n} "
                                 "(one value per row of the MERGE set)")
