"""Perplexity at scale, on the runner of :mod:`.stream`: sharded across the processes of ``accelerate launch``
in input order, and jsonl in -> jsonl out, resumable.

- :func:`score_sharded`: every rank scores a contiguous shard of the texts; the per-text sums are gathered in
  input order and every rank returns the same dict as :func:`kometrics.perplexity.score` on the whole list.
- :func:`score_jsonl`: one output record per input text (index, NLL sum, counts, perplexity), resumable;
  :func:`summarize_jsonl` reads the output back into corpus figures without holding the per-text lists.

Multi-GPU: ``accelerate launch --num_processes 8 -m kometrics.cli perplexity stream --input corpus.jsonl
--output scores.jsonl --model-id skt/kogpt2-base-v2``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from kometrics.cli.io import iter_jsonl
from kometrics.perplexity.api import signature
from kometrics.perplexity.modeling import causal_nll, load_model, pseudo_nll
from kometrics.perplexity.scoring import (
    LN2,
    bits_per_unit,
    perplexity,
    summarize,
    unit_counts,
    validate_predictions,
)

from .stream import processes, stream_jsonl

__all__ = ["score_sharded", "score_jsonl", "summarize_jsonl"]


def _nll_counts(texts: list[str], model_id: str, mode: str, device: Any, dtype: Any, empty: str,
                options: dict[str, Any]) -> list[tuple[float, int]]:
    """(NLL sum in nats, scored tokens) of each text, in order."""
    validate_predictions(texts, empty=empty)
    model, tokenizer = load_model(model_id, "causal" if mode == "causal" else "masked", device, dtype)
    on_empty = "nan" if empty == "nan" else "error"
    common = {"batch_size": options["batch_size"], "max_length": options["max_length"], "on_empty": on_empty}
    if mode == "causal":
        out = causal_nll(texts, model, tokenizer, add_start_token=options["add_start_token"],
                         stride=options["stride"], **common)
    else:
        out = pseudo_nll(texts, model, tokenizer, variant=options["pll_variant"], **common)
    return [(s.nll_sum, s.token_count) for s in out]


def _signature(model_id: str, mode: str, device: Any, dtype: Any, options: dict[str, Any]) -> str:
    model, tokenizer = load_model(model_id, "causal" if mode == "causal" else "masked", device, dtype)
    return signature(model_id, mode, model, tokenizer, options["add_start_token"], options["max_length"],
                     options["stride"], dtype, options["pll_variant"])


def score_sharded(predictions: Sequence[str], model_id: str, batch_size: int = 16, add_start_token: bool = True,
                  max_length: int | None = None, stride: int | None = None, device: Any = None, dtype: Any = None,
                  mode: str = "causal", pll_variant: str = "original", empty: str = "error") -> dict[str, Any]:
    """:func:`kometrics.perplexity.score` with the texts sharded across the processes of ``accelerate launch``
    (or ``torchrun``); every rank returns the full result. In a single process it is ``score``."""
    texts = validate_predictions(predictions, empty=empty)
    options = dict(batch_size=batch_size, add_start_token=add_start_token, max_length=max_length, stride=stride,
                   pll_variant=pll_variant)
    device = processes().device(device)
    scored = processes().map(texts, lambda part: _nll_counts(part, model_id, mode, device, dtype, empty, options))
    return summarize([s[0] for s in scored], [s[1] for s in scored], texts,
                     signature=_signature(model_id, mode, device, dtype, options))


def score_jsonl(input_path: str | os.PathLike, output_path: str | os.PathLike, model_id: str, *,
                field: str = "text", chunk_size: int = 1024, resume: bool = True, batch_size: int = 16,
                add_start_token: bool = True, max_length: int | None = None, stride: int | None = None,
                device: Any = None, dtype: Any = None, mode: str = "causal", pll_variant: str = "original",
                empty: str = "error") -> dict[str, Any]:
    """Stream ``input_path`` (jsonl; each line a string or an object with ``field``) into ``output_path``, one
    record per input text: ``{"index", "nll_sum", "token_count", "char_count", "byte_count", "word_count",
    "perplexity"}``. With ``resume`` an existing output is continued after its last complete record (it must
    come from the same input and options). Returns :func:`summarize_jsonl` of the output."""
    options = dict(batch_size=batch_size, add_start_token=add_start_token, max_length=max_length, stride=stride,
                   pll_variant=pll_variant)
    device = processes().device(device)

    def score_shard(records: list[tuple[int, Any]]) -> list[dict[str, Any]]:
        texts = []
        for index, rec in records:
            if isinstance(rec, dict) and field in rec:
                rec = rec[field]
            elif not isinstance(rec, str):
                raise ValueError(f"record {index}: expected a string or an object with a {field!r} key")
            texts.append(rec)
        texts = validate_predictions(texts, empty=empty)  # normalised (NFC): scored and counted alike
        out = []
        for (index, _), text, (nll, count) in zip(records, texts,
                                                  _nll_counts(texts, model_id, mode, device, dtype, empty, options)):
            units = unit_counts(text)
            out.append({"index": index, "nll_sum": nll, "token_count": count, "char_count": units["chars"],
                        "byte_count": units["bytes"], "word_count": units["words"],
                        "perplexity": perplexity(nll, count) if count else None})
        return out

    stream_jsonl(input_path, output_path, score_shard, chunk_size=chunk_size, resume=resume)
    return summarize_jsonl(output_path, signature=_signature(model_id, mode, device, dtype, options))


def summarize_jsonl(path: str | os.PathLike, signature: str | None = None) -> dict[str, Any]:
    """Corpus figures of a :func:`score_jsonl` output, read line by line (no per-text lists kept)."""
    nll = tokens = chars = nbytes = words = texts = skipped = 0
    ppl_sum = 0.0
    nlls: list[float] = []
    for _, rec in iter_jsonl(path):
        texts += 1
        if not rec["token_count"]:
            skipped += 1
            continue
        nlls.append(rec["nll_sum"])
        if len(nlls) >= 4096:
            nll, nlls = nll + math.fsum(nlls), []
        tokens += rec["token_count"]
        chars += rec["char_count"]
        nbytes += rec["byte_count"]
        words += rec["word_count"]
        ppl_sum += rec["perplexity"]
    nll += math.fsum(nlls)
    out = {"texts": texts, "unscored_texts": skipped,
           "mean_perplexity": ppl_sum / (texts - skipped) if texts > skipped else float("nan"),
           "corpus_perplexity": perplexity(nll, tokens), "bits_per_token": bits_per_unit(nll, tokens),
           "bits_per_character": bits_per_unit(nll, chars), "bits_per_byte": bits_per_unit(nll, nbytes),
           "word_perplexity": perplexity(nll, words), "nll_sum": nll, "nll_bits": nll / LN2,
           "token_count": tokens, "char_count": chars, "byte_count": nbytes, "word_count": words}
    if signature is not None:
        out["signature"] = signature
    return out
