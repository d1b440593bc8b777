"""``compute_metrics`` for the ``transformers`` Trainer on KLUE-STS (a regression head, one score per pair)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .scoring import as_scores, sts_scores

__all__ = ["STSComputeMetrics", "compute_metrics", "make_compute_metrics"]


def _first(x: Any) -> Any:
    # Some models return (logits, hidden_states, ...) as predictions.
    return x[0] if isinstance(x, (tuple, list)) and len(x) and not np.isscalar(x[0]) else x


def _unpack(eval_pred: Any) -> tuple[Any, Any]:
    """``(predictions, label_ids)`` of an ``EvalPrediction``, or of a ``(predictions, labels)`` tuple or list."""
    if hasattr(eval_pred, "predictions"):
        return eval_pred.predictions, eval_pred.label_ids
    if isinstance(eval_pred, (tuple, list)) and len(eval_pred) >= 2:
        return eval_pred[0], eval_pred[1]
    raise TypeError(f"eval_pred must be an EvalPrediction or a (predictions, labels) pair, got "
                    f"{type(eval_pred).__name__}")


class STSComputeMetrics:
    """A ``compute_metrics`` callable: ``{"pearson", "spearmanr", "f1"}`` of an STS regression model.

    ``eval_pred`` is an ``EvalPrediction`` or a ``(predictions, labels)`` tuple or list. Works both ways the
    Trainer calls it:

    - ``batch_eval_metrics=False`` (default): called once with all predictions (shape ``(N,)`` or ``(N, 1)``).
    - ``batch_eval_metrics=True``: called per batch with torch tensors and ``compute_result``; batches are
      accumulated (on the CPU, in float64) and the scores are returned when ``compute_result`` is True,
      after which the accumulator is reset for the next evaluation.
    """

    def __init__(self, threshold: float = 3.0) -> None:
        self.threshold = threshold
        self._preds: list[np.ndarray] = []
        self._refs: list[np.ndarray] = []

    def __call__(self, eval_pred: Any, compute_result: bool | None = None) -> dict[str, float]:
        predictions, labels = _unpack(eval_pred)
        preds = as_scores(_first(predictions), "predictions")
        refs = as_scores(_first(labels), "label_ids")
        if len(preds) != len(refs):
            raise ValueError(f"predictions and label_ids differ in length: {len(preds)} != {len(refs)}")
        if compute_result is None:  # the whole evaluation set at once
            return sts_scores(preds, refs, threshold=self.threshold)
        self._preds.append(preds)
        self._refs.append(refs)
        if not compute_result:
            return {}
        preds, refs = np.concatenate(self._preds), np.concatenate(self._refs)
        self._preds, self._refs = [], []
        return sts_scores(preds, refs, threshold=self.threshold)


def make_compute_metrics(threshold: float = 3.0) -> STSComputeMetrics:
    """A fresh ``compute_metrics`` (its own accumulator) for ``Trainer(compute_metrics=...)``."""
    return STSComputeMetrics(threshold=threshold)


#: Ready-made hook: ``Trainer(..., compute_metrics=kometrics.klue_sts.compute_metrics)``.
compute_metrics = STSComputeMetrics()
