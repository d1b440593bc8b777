"""``compute_metrics`` for ``Trainer``/``Seq2SeqTrainer``: score a generation model's outputs with a fixed
reference LM (the model under training is not the judge).

>>> from kometrics.perplexity.trainer import make_compute_metrics
>>> trainer = Seq2SeqTrainer(..., args=Seq2SeqTrainingArguments(..., predict_with_generate=True),
...                          compute_metrics=make_compute_metrics(tokenizer, "skt/kogpt2-base-v2"))  # doctest: +SKIP
>>> trainer.evaluate()  # eval_perplexity, eval_corpus_perplexity, eval_bits_per_character, ...  # doctest: +SKIP

With ``predict_with_generate`` the predictions are generated token ids; with a plain ``Trainer`` they are
logits (batch, length, vocab), turned into ids by argmax (teacher-forced greedy reading; pass
``preprocess_logits_for_metrics=argmax_logits`` to keep only the ids and save memory). Positions holding -100
(the Trainer's padding across batches) become the tokenizer's pad id and are dropped by the decoding.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .api import score

__all__ = ["make_compute_metrics", "decode_predictions", "argmax_logits"]

KEYS = ("corpus_perplexity", "bits_per_token", "bits_per_character", "bits_per_byte", "word_perplexity")


def argmax_logits(logits: Any, labels: Any) -> Any:
    """``preprocess_logits_for_metrics`` for a plain ``Trainer``: keep the argmax ids, not the logits."""
    if isinstance(logits, tuple):
        logits = logits[0]
    return logits.argmax(dim=-1)


def decode_predictions(predictions: Any, tokenizer: Any, skip_special_tokens: bool = True) -> list[str]:
    """Token ids (or logits) from an ``EvalPrediction`` as texts: -100 and other negative ids become the pad
    id (else EOS, else 0), special tokens are skipped, surrounding whitespace is stripped."""
    if isinstance(predictions, tuple):
        predictions = predictions[0]
    arr = np.asarray(predictions)
    if arr.ndim == 3:
        arr = arr.argmax(-1)
    if arr.ndim != 2:
        raise ValueError(f"predictions must be token ids (batch, length) or logits (batch, length, vocab), "
                         f"got shape {arr.shape}")
    pad = next((v for v in (tokenizer.pad_token_id, tokenizer.eos_token_id) if isinstance(v, int)), 0)
    arr = np.where(arr < 0, pad, arr).astype(np.int64)
    texts = tokenizer.batch_decode(arr.tolist(), skip_special_tokens=skip_special_tokens)
    return [t.strip() for t in texts]


def make_compute_metrics(tokenizer: Any, model_id: str, *, mode: str = "causal", batch_size: int = 16,
                         device: Any = None, dtype: Any = None, prefix: str = "",
                         skip_special_tokens: bool = True,
                         **options: Any) -> Callable[[Any], dict[str, float]]:
    """A ``compute_metrics(eval_pred) -> dict`` that decodes the predictions with ``tokenizer`` (the
    generation model's) and scores the texts with the reference LM ``model_id`` (loaded once, reused).

    Returned keys (the Trainer prefixes ``eval_``): ``perplexity`` (mean per text, evaluate's figure),
    ``corpus_perplexity``, ``bits_per_token``, ``bits_per_character``, ``bits_per_byte``,
    ``word_perplexity`` and ``unscored`` (outputs that decoded to nothing: NaN, left out of the figures,
    with a warning).
    """

    def compute_metrics(eval_pred: Any) -> dict[str, float]:
        predictions = eval_pred.predictions if hasattr(eval_pred, "predictions") else eval_pred[0]
        texts = decode_predictions(predictions, tokenizer, skip_special_tokens=skip_special_tokens)
        result = score(texts, model_id, batch_size=batch_size, device=device, dtype=dtype, mode=mode,
                       empty="nan", **options)
        out = {f"{prefix}perplexity": float(result["mean_perplexity"])}
        out.update({f"{prefix}{k}": float(result[k]) for k in KEYS})
        out[f"{prefix}unscored"] = float(sum(1 for p in result["perplexities"] if math.isnan(p)))
        return out

    return compute_metrics
