"""The one scoring function behind the evaluate module, the library call, the CLI, the demo and the Space.

``score`` = validate the texts -> per-text NLL sums from the model side -> shape the result with the
arithmetic of :mod:`scoring`. ``token_surprisals`` exposes the per-token numbers that ``score`` sums.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from .model_setup import dtype_name, model_tag
from .modeling import (
    DEFAULT_MAX_TOKENS,
    causal_nll,
    check_budget,
    context_length,
    load_model,
    pseudo_nll,
    start_token_id,
)
from .ngram import is_ngram_model, unit_surprisals
from .ngram import score as ngram_score
from .scoring import LN2, VERSION, check_normalize, summarize, validate_predictions

__all__ = ["VERSION", "score", "token_surprisals", "signature"]

MODES = ("causal", "pseudo")


def _check_options(mode: str, batch_size: Any, max_tokens: Any = DEFAULT_MAX_TOKENS) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be 'causal' (causal LM perplexity) or 'pseudo' (masked LM "
                         f"pseudo-perplexity), got {mode!r}")
    check_budget(batch_size, max_tokens)


def _ngram_normalize(normalize: Any) -> None:
    if check_normalize(normalize) != "NFC":
        raise ValueError(f"normalize={normalize!r}: an n-gram model reads NFC text by construction (its units were "
                         "counted on NFC text); keep normalize='NFC'")


def signature(model_id: str, mode: str, model: Any, tokenizer: Any, add_start_token: bool,
              max_length: int | None, stride: int | None, dtype: Any, pll_variant: str,
              normalize: str | None = "NFC") -> str:
    """A string that says how the numbers were made (the sacrebleu habit): every option that changes them
    (the Unicode normalisation included), and the version."""
    window = int(max_length) if max_length is not None else context_length(model, tokenizer)
    parts = [f"mode:{mode}", f"model:{model_tag(model_id)}", f"dtype:{dtype_name(dtype)}",
             f"window:{window}"]
    if mode == "causal":
        start = start_token_id(model, tokenizer) if add_start_token else None
        parts += [f"start:{'none' if start is None else start}", f"stride:{window // 2 if stride is None else stride}"]
    else:
        parts.append(f"pll:{pll_variant}")
    parts.append(f"norm:{check_normalize(normalize) or 'none'}")
    return "perplexity|" + "|".join(parts) + f"|version:{VERSION}"


def score(predictions: Sequence[str], model_id: str | os.PathLike, batch_size: int = 16,
          add_start_token: bool = True, max_length: int | None = None, stride: int | None = None, device: Any = None, dtype: Any = None,
          mode: str = "causal", pll_variant: str = "original", padding_side: str | None = None,
          empty: str = "error", ngram_unit: str | None = None, ngram_eos: bool = True,
          max_tokens: int = DEFAULT_MAX_TOKENS, normalize: str | None = "NFC") -> dict[str, Any]:
    """Score ``predictions`` with ``model_id``; the same result as ``evaluate.load(...).compute``.

    See the metric card for every key; in short: ``perplexities`` (per text), ``mean_perplexity``,
    ``corpus_perplexity``, ``bits_per_token``, ``bits_per_character``, ``bits_per_byte``, ``word_perplexity``,
    per-text ``nll_sums`` (nats), ``token_counts``, ``char_counts``, ``byte_counts``, ``word_counts`` and a
    ``signature``. ``batch_size`` (rows) and ``max_tokens`` (rows x padded width) bound each forward pass;
    neither changes the numbers (n-gram models take neither).

    The texts are put in the Unicode form ``normalize`` first (NFC by default, None: as given); the model and
    the unit counts see the same text. A text of invisible characters only is an empty text.

    An n-gram model (ARPA or kenlm binary file, or a folder written by ``kometrics perplexity ngram``) is scored
    by :func:`.ngram.score` (``ngram_unit``, ``ngram_eos``; the result adds ``unknown_units``).
    """
    if is_ngram_model(model_id):
        _ngram_normalize(normalize)
        return ngram_score(predictions, model_id, ngram_unit=ngram_unit, add_start_token=add_start_token,
                           ngram_eos=ngram_eos, empty=empty, batch_size=batch_size, max_length=max_length,
                           stride=stride, device=device, dtype=dtype, mode=mode, pll_variant=pll_variant,
                           padding_side=padding_side)
    if ngram_unit is not None:
        raise ValueError(f"ngram_unit applies to n-gram models only; {model_id!r} is not an ARPA or kenlm file")
    _check_options(mode, batch_size, max_tokens)
    texts = validate_predictions(predictions, empty=empty, normalize=normalize)
    model, tokenizer = load_model(model_id, "causal" if mode == "causal" else "masked", device, dtype)
    on_empty = "nan" if empty == "nan" else "error"
    if mode == "causal":
        scores = causal_nll(texts, model, tokenizer, batch_size=batch_size, add_start_token=add_start_token,
                            max_length=max_length, stride=stride, padding_side=padding_side, on_empty=on_empty,
                            max_tokens=max_tokens)
    else:
        scores = pseudo_nll(texts, model, tokenizer, batch_size=batch_size, max_length=max_length,
                            variant=pll_variant, on_empty=on_empty, max_tokens=max_tokens)
    sig = signature(model_id, mode, model, tokenizer, add_start_token, max_length, stride, dtype, pll_variant,
                    normalize)
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
                     add_start_token: bool = True, max_length: int | None = None, stride: int | None = None,
                     device: Any = None, dtype: Any = None, pll_variant: str = "original",
                     normalize: str | None = "NFC") -> list[tuple[str, float]]:
    """Each scored token of ``text`` with its surprisal in bits, -log2 P(token | context), in text order.

    Causal mode: the context is the preceding tokens (and the start token); pseudo mode: the rest of the text
    with the token masked. The surprisals sum to ``score([text], ...)["nll_sums"][0] / ln 2``. The string of
    each token is its span of ``text`` (a byte-level token that only continues a character shows as ''), after
    the Unicode normalisation ``normalize`` (NFC by default).
    """
    if is_ngram_model(model_id):
        _ngram_normalize(normalize)
        return unit_surprisals(text, model_id, add_start_token=add_start_token)
    (text,) = validate_predictions([text], normalize=normalize)
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
