"""``compute_metrics`` for generation models under ``Seq2SeqTrainer(predict_with_generate=True)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .pipeline import score

__all__ = ["make_compute_metrics", "decode_pairs"]


def _unpack(eval_pred: Any) -> tuple[Any, Any]:
    """``(predictions, label_ids)`` of an ``EvalPrediction``, or of a ``(predictions, labels)`` tuple or list."""
    if hasattr(eval_pred, "predictions"):
        return eval_pred.predictions, eval_pred.label_ids
    if isinstance(eval_pred, (tuple, list)) and len(eval_pred) >= 2:
        return eval_pred[0], eval_pred[1]
    raise TypeError(f"eval_pred must be an EvalPrediction or a (predictions, labels) pair, got "
                    f"{type(eval_pred).__name__}")


def decode_pairs(eval_pred: Any, tokenizer: Any) -> tuple[list[str], list[str]]:
    """Generated ids and label ids -> texts. ``-100`` (label padding, and the padding the Trainer adds when it
    gathers generations of different lengths) becomes the pad token before decoding. ``eval_pred`` is an
    ``EvalPrediction`` or a ``(predictions, labels)`` tuple or list."""
    preds, labels = _unpack(eval_pred)
    if isinstance(preds, tuple):
        preds = preds[0]
    preds, labels = np.asarray(preds), np.asarray(labels)
    if preds.ndim == 3:  # logits (predict_with_generate=False): take the argmax ids
        preds = preds.argmax(-1)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    preds = np.where(preds < 0, pad, preds)
    labels = np.where(labels < 0, pad, labels)
    decoded_preds = tokenizer.batch_decode(preds, skip_special_tokens=True)
    decoded_labels = tokenizer.batch_decode(labels, skip_special_tokens=True)
    return [p.strip() for p in decoded_preds], [r.strip() for r in decoded_labels]


def make_compute_metrics(tokenizer: Any, model_type: str | None = None, num_layers: int | None = None,
                         prefix: str = "korbertscore", **score_kwargs: Any) -> Callable[[Any], dict[str, float]]:
    """A ``compute_metrics(eval_pred)`` returning the mean ``{prefix}_precision``, ``_recall`` and ``_f1``.

    ``tokenizer`` decodes the generation model's ids; ``model_type``/``num_layers``/``score_kwargs`` go to
    :func:`score` (the scoring encoder, e.g. "klue/bert-base", is unrelated to the model being trained).
    Empty generations score 0 (with a warning), which pulls the mean down as it should.
    """

    def compute_metrics(eval_pred: Any) -> dict[str, float]:
        preds, refs = decode_pairs(eval_pred, tokenizer)
        res = score(preds, refs, model_type=model_type, num_layers=num_layers, **score_kwargs)
        return {f"{prefix}_{k}": float(np.mean(res[k])) if res[k] else 0.0 for k in ("precision", "recall", "f1")}

    return compute_metrics
