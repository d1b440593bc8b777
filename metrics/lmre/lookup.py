"""The multi-reference lookup R(W): read a reference folder written by ``kometrics lmre build``.

A reference folder is a small Hugging Face dataset folder: ``README.md`` (a dataset card whose YAML
``configs:`` points at the data file), ``references.jsonl`` (one utterance a line: ``id``, ``text``,
``words``, ``references`` (canonical annotations, most frequent first), ``counts`` (how many of the
``n_iter`` iterations produced each), ``n_iter``, ``n_valid`` (iterations with a usable answer)) and
``build_info.json`` (options and statistics of the build). ``datasets.load_dataset(folder)`` reads it too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .formats import parse_annotation

__all__ = ["REFERENCES_FILE", "load_reference_records", "load_references", "references_for", "utterance_key"]

REFERENCES_FILE = "references.jsonl"


def utterance_key(words: Sequence[str] | str) -> str:
    """The lookup key of an utterance: its words joined by single spaces (boundary tokens removed)."""
    if isinstance(words, str):
        words = parse_annotation(words, name="utterance").words
    return " ".join(words)


def load_reference_records(folder: str | os.PathLike) -> list[dict[str, Any]]:
    """The records of ``folder/references.jsonl`` (or of a ``.jsonl`` file given directly), in file order."""
    path = Path(folder)
    if path.is_dir():
        path = path / REFERENCES_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: pass a folder written by `kometrics lmre build`")
    records = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not valid JSON ({e.msg})") from None
            if not isinstance(rec, dict) or "references" not in rec or not ("words" in rec or "text" in rec):
                raise ValueError(f"{path}:{n}: a record needs 'references' and 'words' (or 'text')")
            records.append(rec)
    return records


def load_references(folder: str | os.PathLike) -> dict[str, list[str]]:
    """``{utterance: [reference annotations]}`` from a reference folder; the key is :func:`utterance_key`.

    Utterances for which the builder kept no reference map to an empty list (:func:`references_for`
    refuses them). Two records of the same utterance are merged (references de-duplicated, order kept).
    """
    lookup: dict[str, list[str]] = {}
    for rec in load_reference_records(folder):
        key = utterance_key(rec["words"] if "words" in rec else rec["text"])
        merged = lookup.setdefault(key, [])
        merged.extend(r for r in rec["references"] if r not in merged)
    return lookup


def references_for(predictions: Sequence[str], lookup: dict[str, list[str]]) -> list[list[str]]:
    """The reference list of each prediction, found by its words. Raises ``KeyError``/``ValueError`` with
    the first prediction index whose utterance is not in the lookup or has no reference."""
    out = []
    for i, pred in enumerate(predictions):
        key = utterance_key(parse_annotation(pred, name=f"predictions[{i}]").words)
        if key not in lookup:
            raise KeyError(f"predictions[{i}]: the utterance {key!r} is not in the reference lookup; "
                           "build references for it first (`kometrics lmre build`)")
        if not lookup[key]:
            raise ValueError(f"predictions[{i}]: the builder kept no reference for {key!r} (no annotation "
                             "reached min_count); raise n_iter or lower min_count")
        out.append(list(lookup[key]))
    return out
