"""The one streaming/sharding runner: split work across the processes of ``accelerate launch`` in input order,
and stream a jsonl corpus into a jsonl file, resumably.

- :func:`processes` gives this run's process group: under ``accelerate launch`` (or ``torchrun``; the
  ``WORLD_SIZE`` variable says so) accelerate's ``PartialState``, else this process alone, without importing
  accelerate. :meth:`Processes.map` gives each rank a contiguous shard of a list and returns every rank's
  results gathered in input order, on every rank.
- :func:`stream_jsonl` reads a jsonl file lazily, ``chunk_size`` records at a time, maps each chunk over the
  processes with the caller's scoring function, and rank 0 appends one output line per input record, flushed
  and synced after each chunk. A second run resumes after the last complete line of the output (a line cut by
  a crash is dropped and redone). Memory: one chunk, whatever the corpus size.

The metric-specific parts (what a record holds, how a shard is scored, what a line of output says) live in
:mod:`.korbertscore` and :mod:`.perplexity`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from kometrics.cli.io import iter_jsonl

__all__ = ["Processes", "processes", "count_done", "stream_jsonl"]

T = TypeVar("T")
R = TypeVar("R")


class Processes:
    """This run's processes: ``count`` of them, this one is ``rank``; ``is_main`` on rank 0."""

    def __init__(self, state: Any = None) -> None:
        self.state = state  # accelerate's PartialState, or None in a plain single process
        self.count = 1 if state is None else int(state.num_processes)
        self.rank = 0 if state is None else int(state.process_index)
        self.is_main = self.rank == 0

    def device(self, requested: Any = None) -> Any:
        """The device this rank scores on: ``requested`` when given, else the rank's own (``cuda:<local rank>``
        under accelerate), else ``None`` (the metric's default)."""
        if requested is not None or self.state is None:
            return requested
        return None if self.state.device.type == "mps" else str(self.state.device)

    def map(self, items: Sequence[T], fn: Callable[[list[T]], list[R]]) -> list[R]:
        """``fn`` over contiguous shards of ``items`` (rank ``r`` gets ``items[n*r//k : n*(r+1)//k]``); every
        rank returns all results, in the order of ``items``. ``fn`` returns one result per item."""
        n = len(items)
        lo, hi = n * self.rank // self.count, n * (self.rank + 1) // self.count
        mine = fn(list(items[lo:hi])) if hi > lo else []
        if len(mine) != hi - lo:
            raise RuntimeError(f"the scoring function returned {len(mine)} results for {hi - lo} items")
        if self.count == 1:
            return mine
        from accelerate.utils import gather_object

        return list(gather_object(mine))  # concatenated in rank order: the input order

    def broadcast(self, value: T) -> T:
        """Rank 0's ``value`` on every rank."""
        if self.count == 1:
            return value
        from accelerate.utils import broadcast_object_list

        return broadcast_object_list([value])[0]

    def wait(self) -> None:
        """Wait until every rank gets here."""
        if self.count > 1:
            self.state.wait_for_everyone()


@cache
def processes() -> Processes:
    """The process group of this run (see :class:`Processes`). Without CUDA, processes started by
    ``accelerate launch`` form a group only when told they are CPU processes (gloo): said unless CUDA is there."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return Processes()
    import torch
    from accelerate import PartialState

    cpu = os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true", "yes") or not torch.cuda.is_available()
    return Processes(PartialState(cpu=cpu))


def count_done(output: str | os.PathLike) -> int:
    """Number of complete records already in ``output``; a partial last line (a killed run) is cut off."""
    path = Path(output)
    if not path.is_file():
        return 0
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with open(path, "r+b") as f:
            f.truncate(end)
    return data[:end].count(b"\n")


def stream_jsonl(input_path: str | os.PathLike, output_path: str | os.PathLike,
                 score: Callable[[list[tuple[int, Any]]], list[dict[str, Any]]], *, chunk_size: int = 1000,
                 resume: bool = True) -> int:
    """Stream ``input_path`` into ``output_path``: one output line per non-blank input line, in input order.

    ``score`` gets a shard of ``(index, record)`` pairs (``index`` counts records from 0; ``record`` is the
    line's JSON value) and returns one JSON-able dict per pair. With ``resume`` an existing output is continued
    after its last complete line (it must come from the same input and options); without it the output is
    started over. A ``TypeError``/``ValueError`` from ``score`` is raised again naming the chunk's records and
    lines. Returns the number of records written by this call.
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    group = processes()
    output = Path(output_path)
    if group.is_main and not resume and output.exists():
        output.unlink()
    done = group.broadcast(count_done(output) if group.is_main else 0)
    written = 0
    chunk: list[tuple[int, int, Any]] = []  # (index, line number, record)

    def flush() -> None:
        nonlocal written
        try:
            rows = group.map([(i, rec) for i, _, rec in chunk], score)
        except (TypeError, ValueError) as e:
            first, last = chunk[0], chunk[-1]
            raise type(e)(f"{os.fspath(input_path)}: in the chunk of records {first[0]}..{last[0]} (lines "
                          f"{first[1]}-{last[1]}): {e}") from e
        if group.is_main:
            with open(output, "a", encoding="utf-8") as f:
                for row in rows:
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
        written += len(chunk)
        chunk.clear()
        group.wait()

    for index, (lineno, record) in enumerate(iter_jsonl(input_path)):
        if index < done:
            continue
        chunk.append((index, lineno, record))
        if len(chunk) == chunk_size:
            flush()
    if chunk:
        flush()
    return written
