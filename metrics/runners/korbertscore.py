"""KorBERTScore at scale, on the runner of :mod:`.stream`: sharded across the processes of ``accelerate launch``
in input order, and jsonl in -> jsonl out, resumable.

    accelerate launch --multi_gpu --num_processes 8 -m kometrics.cli korbertscore stream \\
        --input corpus.jsonl --output scored.jsonl --model klue/bert-base

idf: ``idf=True`` means idf over ALL references of the call, so :func:`score_sharded` computes it from the
full reference list before sharding; streaming has no "all" (the corpus may not fit in memory), so there
``idf`` must be False or an explicit list of sentences.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from kometrics.korbertscore.pipeline import score, validate_inputs

from .stream import processes, stream_jsonl

__all__ = ["score_sharded", "stream_score"]

_PER_ITEM = ("precision", "recall", "f1", "best_reference")


def _rows(preds: list[str], refs: list[Any], kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """One dict per pair: its scores, the hashcode and the layer."""
    res = score(preds, refs, **kwargs)
    return [{**{k: res[k][i] for k in _PER_ITEM}, "hashcode": res["hashcode"], "num_layers": res["num_layers"]}
            for i in range(len(preds))]


def score_sharded(predictions: Sequence[str], references: Sequence[Any], **kwargs: Any) -> dict[str, Any]:
    """:func:`kometrics.korbertscore.score`, with the pairs split across the processes of ``accelerate launch``;
    every rank gets the full result in input order (identical to one process)."""
    preds, refs, _ = validate_inputs(predictions, references)
    group = processes()
    if group.count == 1:
        return score(predictions, references, **kwargs)
    kwargs = {**kwargs, "device": group.device(kwargs.get("device"))}
    if kwargs.get("idf") is True:  # idf over all the references, not over each rank's shard
        kwargs["idf"] = [r for group_refs in refs for r in group_refs]
    items = list(zip(preds, references))
    rows = group.map(items, lambda part: _rows([p for p, _ in part], [r for _, r in part], kwargs))
    if not rows:
        return score([], [], **kwargs)
    out: dict[str, Any] = {k: [r[k] for r in rows] for k in _PER_ITEM}
    out.update(num_layers=rows[0]["num_layers"], hashcode=rows[0]["hashcode"])
    return out


def stream_score(input_path: str | os.PathLike, output_path: str | os.PathLike, *,
                 prediction_key: str = "prediction", reference_key: str = "reference", chunk_size: int = 1000,
                 resume: bool = True, **kwargs: Any) -> int:
    """Score a jsonl corpus chunk by chunk and append one line per input record to ``output_path``.

    Each output line is the input object plus ``precision``, ``recall``, ``f1``, ``best_reference`` and
    ``hashcode``. Records already in the output are skipped (resume after an interruption; ``resume=False``
    starts over). Under ``accelerate launch`` each chunk is split across ranks and rank 0 writes. Returns the
    number of records written by this call.
    """
    if kwargs.get("idf") is True:
        raise ValueError("idf=True is not defined for a stream (idf over which references?); pass idf=False or "
                         "idf=<list of sentences>")
    kwargs = {**kwargs, "device": processes().device(kwargs.get("device"))}

    def score_shard(records: list[tuple[int, Any]]) -> list[dict[str, Any]]:
        for index, rec in records:
            if not isinstance(rec, dict):
                raise ValueError(f"record {index} is {type(rec).__name__}; each line must be a JSON object")
            for key in (prediction_key, reference_key):
                if key not in rec:
                    raise ValueError(f"record {index} has no {key!r} key")
        rows = _rows([rec[prediction_key] for _, rec in records], [rec[reference_key] for _, rec in records],
                     kwargs)
        return [{**rec, **{k: row[k] for k in (*_PER_ITEM, "hashcode")}} for (_, rec), row in zip(records, rows)]

    return stream_jsonl(input_path, output_path, score_shard, chunk_size=chunk_size, resume=resume)
