"""Scale: shard scoring across processes/GPUs with accelerate, and stream jsonl in -> jsonl out (resumable).

Under ``accelerate launch`` (or ``torchrun``) every rank scores a contiguous shard and the results are
gathered back in input order; in a single plain process the same functions simply score everything.

    accelerate launch --multi_gpu --num_processes 8 -m kometrics.cli korbertscore stream \\
        --input corpus.jsonl --output scored.jsonl --model klue/bert-base

idf: ``idf=True`` means idf over ALL references of the call, so :func:`score_sharded` computes it from the
full reference list before sharding; streaming has no "all" (the corpus may not fit in memory), so there
``idf`` must be False or an explicit list of sentences.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from kometrics.korbertscore.pipeline import score, validate_inputs

__all__ = ["score_sharded", "stream_score", "count_done"]


def _state():
    """accelerate's PartialState when running distributed, else None."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return None
    import torch
    from accelerate import PartialState

    return PartialState(cpu=not torch.cuda.is_available())


def _on_rank_device(state, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Each rank uses its own device (cuda:<local rank>) unless the caller chose one."""
    if state is not None and kwargs.get("device") is None:
        return {**kwargs, "device": str(state.device)}
    return kwargs


def _score_parts(state, preds: list, refs: list, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """Score this rank's contiguous shard; return per-item rows of every rank in input order."""
    from accelerate.utils import gather_object

    idx = list(range(len(preds)))
    with state.split_between_processes(idx) as mine:
        mine = list(mine)
        res = score([preds[i] for i in mine], [refs[i] for i in mine], **kwargs) if mine else None
        rows = [{"index": i, "precision": res["precision"][k], "recall": res["recall"][k], "f1": res["f1"][k],
                 "best_reference": res["best_reference"][k], "hashcode": res["hashcode"],
                 "num_layers": res["num_layers"]} for k, i in enumerate(mine)]
    gathered = gather_object(rows)
    return sorted(gathered, key=lambda r: r["index"])


def score_sharded(predictions: Sequence[str], references: Sequence[Any], **kwargs: Any) -> dict[str, Any]:
    """:func:`score`, with the pairs split across the processes of ``accelerate launch``; every rank gets the
    full result in input order (identical to one process)."""
    preds, refs, multi = validate_inputs(predictions, references)
    state = _state()
    if state is None or state.num_processes == 1:
        return score(predictions, references, **kwargs)
    kwargs = _on_rank_device(state, kwargs)
    if kwargs.get("idf") is True:
        kwargs = {**kwargs, "idf": [r for group in refs for r in group]}
    items = list(references)
    rows = _score_parts(state, preds, items, kwargs)
    if not rows:
        return score([], [], **kwargs)
    out = {k: [r[k] for r in rows] for k in ("precision", "recall", "f1", "best_reference")}
    out.update(num_layers=rows[0]["num_layers"], hashcode=rows[0]["hashcode"])
    return out


def count_done(output: str | os.PathLike) -> int:
    """Number of complete records already in ``output``; a partial last line (a killed run) is cut off."""
    path = Path(output)
    if not path.is_file():
        return 0
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        path.write_bytes(data)
    return data.count(b"\n")


def _records(path: str | os.PathLike, skip: int) -> Iterator[tuple[int, dict[str, Any]]]:
    n = 0
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            n += 1
            if n <= skip:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({e.msg})") from None
            if not isinstance(rec, dict):
                raise ValueError(f"{path}:{lineno}: each line must be a JSON object")
            yield lineno, rec


def stream_score(input_path: str | os.PathLike, output_path: str | os.PathLike, *,
                 prediction_key: str = "prediction", reference_key: str = "reference", chunk_size: int = 1000,
                 **kwargs: Any) -> int:
    """Score a jsonl corpus chunk by chunk and append one line per input record to ``output_path``.

    Each output line is the input object plus ``precision``, ``recall``, ``f1``, ``best_reference`` and
    ``hashcode``. Records already in the output are skipped (resume after an interruption). Memory holds one
    chunk. Under ``accelerate launch`` each chunk is split across ranks and rank 0 writes. Returns the number
    of records written by this call.
    """
    if kwargs.get("idf") is True:
        raise ValueError("idf=True is not defined for a stream (idf over which references?); pass idf=False or "
                         "idf=<list of sentences>")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    state = _state()
    kwargs = _on_rank_device(state, kwargs)
    main = state is None or state.is_main_process
    done = count_done(output_path) if main else 0
    if state is not None:
        from accelerate.utils import broadcast_object_list

        box = [done]
        broadcast_object_list(box)
        done = box[0]
    written = 0
    chunk: list[tuple[int, dict[str, Any]]] = []

    def flush() -> None:
        nonlocal written
        preds, refs = [], []
        for lineno, rec in chunk:
            for key in (prediction_key, reference_key):
                if key not in rec:
                    raise ValueError(f"{input_path}:{lineno}: object has no {key!r} key")
            preds.append(rec[prediction_key])
            refs.append(rec[reference_key])
        res = score_sharded(preds, refs, **kwargs) if state is not None else score(preds, refs, **kwargs)
        if main:
            with open(output_path, "a", encoding="utf-8") as f:
                for k, (_, rec) in enumerate(chunk):
                    out = {**rec, "precision": res["precision"][k], "recall": res["recall"][k],
                           "f1": res["f1"][k], "best_reference": res["best_reference"][k],
                           "hashcode": res["hashcode"]}
                    f.write(json.dumps(out, ensure_ascii=False) + "\n")
        written += len(chunk)
        chunk.clear()

    for item in _records(input_path, done):
        chunk.append(item)
        if len(chunk) >= chunk_size:
            flush()
    if chunk:
        flush()
    if state is not None:
        state.wait_for_everyone()
    return written
