"""``compute_metrics`` for ``transformers.Trainer``: MERGE metrics of an NLI classifier on a MERGE set."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .inputs import as_flags, as_seed_ids, as_threshold_grid, as_word_classes
from .scoring import score

__all__ = ["make_compute_metrics", "compute_metrics_factory", "flatten_result"]


def flatten_result(result: dict[str, Any], curve_points: Sequence[float] | None = None) -> dict[str, float]:
    """Scalars only (what ``Trainer`` logs): accuracy, seed accuracy, MC, ``sv_accuracy@CT`` and
    ``sv_accuracy_<class>@CT`` for the CTs in ``curve_points`` (default: all); ``None`` values are left out."""
    out: dict[str, float] = {}
    for key in ("accuracy", "seed_accuracy", "matching_correctness", "variant_accuracy_given_seed_correct",
                "variant_accuracy_given_seed_wrong"):
        if result.get(key) is not None:
            out[key] = float(result[key])
    keep = None if curve_points is None else {float(c) for c in as_threshold_grid(curve_points)[0]}
    for ct, v in result["sv_accuracy"].items():
        if keep is None or ct in keep:
            out[f"sv_accuracy@{ct:g}"] = float(v)
    for cls, curve in (result.get("sv_accuracy_by_word_class") or {}).items():
        for ct, v in curve.items():
            if keep is None or ct in keep:
                out[f"sv_accuracy_{cls}@{ct:g}"] = float(v)
    return out


def make_compute_metrics(
    seed_ids: Sequence[str],
    is_seed: Sequence[bool] | None,
    word_classes: Sequence[str] | None = None,
    thresholds: Sequence[float] | None = None,
    curve_points: Sequence[float] | None = (0.5, 0.75, 0.9, 1.0),
) -> Callable[[Any], dict[str, float]]:
    """A ``compute_metrics(eval_pred)`` for ``Trainer`` evaluating an NLI classifier on a MERGE set.

    ``seed_ids`` / ``is_seed`` / ``word_classes`` describe the rows of the evaluation dataset in order
    (``Trainer`` does not shuffle evaluation data). The returned function takes ``eval_pred`` (logits of
    shape (N, num_labels), or a tuple whose first item is those logits; and label ids), predicts
    ``argmax(-1)`` and returns :func:`flatten_result` of the MERGE metrics (``Trainer`` prefixes ``eval_``).
    The SV curve is computed on ``thresholds`` (MC uses them); only ``curve_points`` are logged.

    Works with ``TrainingArguments(batch_eval_metrics=True)`` too: then ``Trainer`` calls it per batch with
    ``compute_result=False`` (argmax predictions and labels are kept, ``{}`` returned) and with
    ``compute_result=True`` on the last batch (the metrics of all rows; the store is emptied).
    """
    ids = as_seed_ids(list(seed_ids))
    flags = None if is_seed is None else as_flags(list(is_seed))
    classes = None if word_classes is None else as_word_classes(list(word_classes))
    as_threshold_grid(thresholds)  # fail now, not after a long evaluation
    if curve_points is not None:
        as_threshold_grid(curve_points)

    store: dict[str, list[np.ndarray]] = {"preds": [], "labels": []}

    def _numpy(x: Any) -> np.ndarray:
        if hasattr(x, "detach"):
            x = x.detach().float().cpu() if x.is_floating_point() else x.detach().cpu()
        return np.asarray(x)

    def compute_metrics(eval_pred: Any, compute_result: bool | None = None) -> dict[str, float]:
        logits, labels = eval_pred[0], eval_pred[1]
        if isinstance(logits, (tuple, list)):
            logits = logits[0]
        logits = _numpy(logits)
        if logits.ndim != 2:
            raise ValueError(f"expected logits of shape (N, num_labels), got {logits.shape}")
        store["preds"].append(logits.argmax(-1))
        store["labels"].append(_numpy(labels).astype(np.int64).reshape(-1))
        if compute_result is False:
            return {}
        preds, gold = np.concatenate(store["preds"]), np.concatenate(store["labels"])
        store["preds"].clear()
        store["labels"].clear()
        if len(preds) != len(ids):
            raise ValueError(f"the evaluation set has {len(preds)} rows but make_compute_metrics was given "
                             f"{len(ids)} seed_ids: build it from the same dataset, in the same order")
        result = score(preds, gold, ids, is_seed=flags, word_classes=classes,
                                       thresholds=thresholds)
        return flatten_result(result, curve_points)

    return compute_metrics


#: The former name of :func:`make_compute_metrics`.
compute_metrics_factory = make_compute_metrics
