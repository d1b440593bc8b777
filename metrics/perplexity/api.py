"""The one scoring function behind the evaluate module, the library call, the CLI, the demo and the Space.

``score`` = validate the texts -> per-text NLL sums from the model side -> shape the result with the
arithmetic of :mod:`scoring`. ``token_surprisals`` exposes the per-token numbers that ``score`` sums.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from .modeling import causal_nll, context_length, load_model, pseudo_nll, resolve_dtype, start_token_id
from .scoring import LN2, summarize, validate_predictions

__all__ = ["score", "token_surprisals", "signature"]

MODES = ("causal", "pseudo")


def _check_options(mode: str, batch_size: Any) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be 'causal' (causal LM perplexity) or 'pseudo' (masked LM "
                         f"pseudo-perplexity), got {mode!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")


def signature(model_id: str, mode: str, model: Any, tokenizer: Any, add_start_token: bool,
              max_length: int | None, stride: int | None, dtype: Any, pll_variant: str) -> str:
    """A string that says how the numbers were made (the sacrebleu habit)."""
    window = int(max_length) if max_length is not None else context_length(model, tokenizer)
    parts = [f"mode:{mode}", f"model:{model_id}", f"dtype:{str(resolve_dtype(dtype)).replace('torch.', '')}",
             f"window:{window}"]
    if mode == "causal":
        start = start_token_id(model, tokenizer) if add_start_token else None
        parts += [f"start:{'none' if start is None else start}", f"stride:{window // 2 if stride is None else stride}"]
    else:
        parts.append(f"pll:{pll_variant}")
    return "perplexity|" + "|".join(parts)


def score(predictions: Sequence[str], model_id: str | os.PathLike, batch_size: int = 16,
          add_start_token: bool = True, max_length: int | None = None, stride: int | None = None, device: Any = None, dtype: Any = None,
          mode: str = "causal", pll_variant: str = "original", padding_side: str | None = None,
          empty: str = "error") -> dict[str, Any]:
    """Score ``predictions`` with ``model_id``; the same result as ``evaluate.load(...).compute``.

    See the metric card for every key; in short: ``perplexities`` (per text), ``mean_perplexity``,
    ``corpus_perplexity``, ``bits_per_token``, ``bits_per_character``, ``bits_per_byte``, ``word_perplexity``,
    per-text ``nll_sums`` (nats), ``token_counts``, ``char_counts``, ``byte_counts``, ``word_counts`` and a
    ``signature``.
    """
    _check_options(mode, batch_size)
    texts = validate_predictions(predictions, empty=empty)
    model, tokenizer = load_model(model_id, "causal" if mode == "causal" else "masked", device, dtype)
    on_empty = "nan" if empty == "nan" else "error"
    if mode == "causal":
        scores = causal_nll(texts, model, tokenizer, batch_size=batch_size, add_start_token=add_start_token,
                            max_length=max_length, stride=stride, padding_side=padding_side, on_empty=on_empty)
    else:
        scores = pseudo_nll(texts, model, tokenizer, batch_size=batch_size, max_length=max_length,
                            variant=pll_variant, on_empty=on_empty)
    sig = signature(model_id, mode, model, tokenizer, add_start_token, max_length, stride, dtype, pll_variant)
    return summarize([s.nll_sum for s in scores], [s.token_count for s in scores], texts, signature=sig)


def _pieces(text: str, token_ids: list[int], offsets: list, tokenizer: Any) -> list[str]:
    """The text each scored token stands for: its span of ``text`` plus the gap (spaces) before it, so that
    the pieces joined give the text back. A byte-level token that only continues a character begun by the
    previous token shows as ''."""
    out, shown = [], 0
    for tid, off in zip(token_ids, offsets):
        if off is None:
            out.append(tokenizer.decode([tid]))
            continue
        end = off[1]
        out.append(text[shown:end] if end > shown else "")
        shown = max(shown, end)
    return out


def token_surprisals(text: str, model_id: str | os.PathLike, mode: str = "causal",
                     add_start_token: bool = True, max_length: int | None = None, stride: int | None = None, device: Any = None,
                     dtype: Any = None, pll_variant: str = "original") -> list[tuple[str, float]]:
    """Each scored token of ``text`` with its surprisal in bits, -log2 P(token | context), in text order.

    Causal mode: the context is the preceding tokens (and the start token); pseudo mode: the rest of the text
    with the token masked. The surprisals sum to ``score([text], ...)["nll_sums"][0] / ln 2``. The string of
    each token is its span of ``text`` (a byte-level token that only continues a character shows as '').
    """
    validate_predictions([text])
    _check_options(mode, 1)
    model, tokenizer = load_model(model_id, "causal" if mode == "causal" else "masked", device, dtype)
    if mode == "causal":
        (s,) = causal_nll([text], model, tokenizer, batch_size=1, add_start_token=add_start_token,
                          max_length=max_length, stride=stride, return_tokens=True)
    else:
        (s,) = pseudo_nll([text], model, tokenizer, batch_size=16, max_length=max_length, variant=pll_variant,
                          return_tokens=True)
    pieces = _pieces(text, s.token_ids, s.offsets, tokenizer)
    return [(p, v / LN2 if math.isfinite(v) else v) for p, v in zip(pieces, s.token_nlls)]
