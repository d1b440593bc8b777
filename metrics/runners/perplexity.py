"""Scale: score a corpus sharded across processes (``accelerate launch``) and stream jsonl in -> jsonl out.

- :func:`score_sharded`: every rank scores a contiguous shard of the texts; the per-text sums are gathered in
  input order and every rank returns the same dict as :func:`score` on the whole list.
- :func:`score_jsonl`: reads a jsonl file lazily, ``chunk_size`` records at a time, writes one jsonl record
  per input line (index, NLL sum, counts, perplexity), flushes after each chunk, and on a second run resumes
  after the last complete record (a line cut by a crash is dropped and redone). Under ``accelerate launch``
  each chunk is split between the ranks and rank 0 writes. Memory: one chunk, whatever the corpus size.
  :func:`summarize_jsonl` reads the output back into corpus figures without holding the per-text lists.

Multi-GPU: ``accelerate launch --num_processes 8 -m kometrics.cli perplexity stream --input corpus.jsonl
--output scores.jsonl --model-id skt/kogpt2-base-v2``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

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

__all__ = ["score_sharded", "score_jsonl", "summarize_jsonl", "iter_jsonl_texts"]


def _state():
    """accelerate's process state. Without CUDA, processes started by ``accelerate launch``/``torchrun`` only
    form a group when told they are CPU processes (gloo backend): say so unless CUDA is there."""
    import torch
    from accelerate import PartialState

    cpu = os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true", "yes") or not torch.cuda.is_available()
    return PartialState(cpu=cpu)


def _scores(texts: list[str], model_id: str, mode: str, device: Any, dtype: Any, on_empty: str,
            **options: Any) -> list[tuple[float, int]]:
    model, tokenizer = load_model(model_id, "causal" if mode == "causal" else "masked", device, dtype)
    options = dict(options)
    if mode == "causal":
        options.pop("pll_variant", None)
        out = causal_nll(texts, model, tokenizer, on_empty=on_empty, **options)
    else:
        options.pop("add_start_token", None), options.pop("stride", None), options.pop("padding_side", None)
        variant = options.pop("pll_variant", "original")
        out = pseudo_nll(texts, model, tokenizer, variant=variant, on_empty=on_empty, **options)
    return [(s.nll_sum, s.token_count) for s in out]


def _shard_scores(texts: list[str], model_id: str, mode: str, device: Any, dtype: Any, on_empty: str,
                  options: dict[str, Any]) -> list[tuple[float, int]]:
    """Scores of ``texts`` in order, each rank scoring its contiguous shard (one process: all of it)."""
    from accelerate.utils import gather_object

    state = _state()
    n, k = len(texts), state.num_processes
    bounds = [n * r // k for r in range(k + 1)]
    lo, hi = bounds[state.process_index], bounds[state.process_index + 1]
    dev = device if device is not None else (state.device if state.device.type != "mps" else None)
    mine = _scores(texts[lo:hi], model_id, mode, dev, dtype, on_empty, **options) if hi > lo else []
    if k == 1:
        return mine
    # gather_object concatenates the ranks' lists in rank order: the input order
    return list(gather_object(mine))


def score_sharded(predictions: Sequence[str], model_id: str, batch_size: int = 16, add_start_token: bool = True,
                  max_length: int | None = None, stride: int | None = None, device: Any = None, dtype: Any = None,
                  mode: str = "causal", pll_variant: str = "original", empty: str = "error") -> dict[str, Any]:
    """:func:`kometrics.perplexity.score` with the texts sharded across the processes of ``accelerate launch``
    (or ``torchrun``); every rank returns the full result. In a single process it is ``score``."""
    texts = validate_predictions(predictions, empty=empty)
    options = dict(batch_size=batch_size, add_start_token=add_start_token, max_length=max_length, stride=stride,
                   pll_variant=pll_variant)
    scored = _shard_scores(texts, model_id, mode, device, dtype, "nan" if empty == "nan" else "error", options)
    model, tokenizer = load_model(model_id, "causal" if mode == "causal" else "masked", device, dtype)
    sig = signature(model_id, mode, model, tokenizer, add_start_token, max_length, stride, dtype, pll_variant)
    return summarize([s[0] for s in scored], [s[1] for s in scored], texts, signature=sig)


def iter_jsonl_texts(path: str | os.PathLike, field: str = "text") -> Iterator[str]:
    """The ``field`` of each jsonl record (or the record itself if it is a string), lazily."""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            if isinstance(rec, str):
                yield rec
            elif isinstance(rec, dict) and field in rec:
                yield rec[field]
            else:
                raise ValueError(f"{path}:{n}: expected a string or an object with a {field!r} key")


def _done_records(output: Path) -> int:
    """Complete records already in ``output``; a trailing partial line (a crash mid-write) is cut off."""
    if not output.exists():
        return 0
    data = output.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with open(output, "r+b") as f:
            f.truncate(end)
    return data[:end].count(b"\n")


def score_jsonl(input_path: str | os.PathLike, output_path: str | os.PathLike, model_id: str, *,
                field: str = "text", chunk_size: int = 1024, resume: bool = True, batch_size: int = 16,
                add_start_token: bool = True, max_length: int | None = None, stride: int | None = None,
                device: Any = None, dtype: Any = None, mode: str = "causal", pll_variant: str = "original",
                empty: str = "error") -> dict[str, Any]:
    """Stream ``input_path`` (jsonl; each line a string or an object with ``field``) into ``output_path``, one
    record per input text: ``{"index", "nll_sum", "token_count", "char_count", "byte_count", "word_count",
    "perplexity"}``. With ``resume`` an existing output is continued after its last complete record (it must
    come from the same input and options). Returns :func:`summarize_jsonl` of the output."""
    state = _state()
    output = Path(output_path)
    done = _done_records(output) if (resume and state.is_main_process) else 0
    if not resume and state.is_main_process and output.exists():
        output.unlink()
    if state.num_processes > 1:
        from accelerate.utils import broadcast_object_list

        done = broadcast_object_list([done])[0]
    options = dict(batch_size=batch_size, add_start_token=add_start_token, max_length=max_length, stride=stride,
                   pll_variant=pll_variant)
    on_empty = "nan" if empty == "nan" else "error"

    def flush(start: int, chunk: list[str]) -> None:
        try:
            validate_predictions(chunk, empty=empty)
            scored = _shard_scores(chunk, model_id, mode, device, dtype, on_empty, options)
        except (TypeError, ValueError) as e:  # name the record: predictions[i] counts from the chunk's start
            raise type(e)(f"{input_path}: in the chunk of records {start}..{start + len(chunk) - 1}: {e}") from e
        if state.is_main_process:
            with open(output, "a", encoding="utf-8") as f:
                for i, (text, (nll, count)) in enumerate(zip(chunk, scored)):
                    units = unit_counts(text)
                    rec = {"index": start + i, "nll_sum": nll, "token_count": count, "char_count": units["chars"],
                           "byte_count": units["bytes"], "word_count": units["words"],
                           "perplexity": perplexity(nll, count) if count else None}
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
        state.wait_for_everyone()

    chunk: list[str] = []
    start = done
    for i, text in enumerate(iter_jsonl_texts(input_path, field)):
        if i < done:
            continue
        chunk.append(text)
        if len(chunk) == chunk_size:
            flush(start, chunk)
            start, chunk = start + len(chunk), []
    if chunk:
        flush(start, chunk)
    model, tokenizer = load_model(model_id, "causal" if mode == "causal" else "masked", device, dtype)
    sig = signature(model_id, mode, model, tokenizer, add_start_token, max_length, stride, dtype, pll_variant)
    return summarize_jsonl(output, signature=sig)


def summarize_jsonl(path: str | os.PathLike, signature: str | None = None) -> dict[str, Any]:
    """Corpus figures of a :func:`score_jsonl` output, read line by line (no per-text lists kept)."""
    nll = tokens = chars = nbytes = words = texts = skipped = 0
    ppl_sum = 0.0
    nlls: list[float] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
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
