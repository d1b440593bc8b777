"""The multi-reference lookup R(W): read a reference folder written by ``kometrics lmre build``.

A reference folder is a small Hugging Face dataset folder: ``README.md`` (a dataset card whose YAML
``configs:`` points at the data file), ``references.jsonl`` (one utterance a line: ``id``, ``text``,
``words``, ``references`` (canonical annotations, most frequent first), ``counts`` (how many of the
``n_iter`` iterations produced each), ``n_iter``, ``n_valid`` (iterations with a usable answer)) and
``build_info.json`` (options and statistics of the build). ``datasets.load_dataset(folder)`` reads it too.

Several folders (one per LLM or run) combine into one lookup: the LMRE paper's best setting ("combined", GPT-4.1
and Claude references together) is the union of each folder's kept annotations, duplicates merged, with
the folders that contributed each reference kept in :attr:`ReferenceLookup.provenance`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .formats import parse_annotation

__all__ = ["REFERENCES_FILE", "ReferenceLookup", "load_reference_records", "load_references", "references_for",
           "source_name", "utterance_key"]

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


class ReferenceLookup(dict):
    """``{utterance key: [reference annotations]}`` plus where each reference came from.

    ``sources``: the name of each folder read (:func:`source_name`), in order; ``provenance``:
    ``{utterance key: {reference: [source names]}}``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str] = []
        self.provenance: dict[str, dict[str, list[str]]] = {}


def source_name(folder: str | os.PathLike) -> str:
    """A reference folder's name in signatures and provenance: ``<llm>@<folder name>`` from its
    ``build_info.json`` (``llm`` key), else the folder name."""
    path = Path(folder)
    if path.is_file():
        path = path.parent
    name = path.resolve().name
    info = path / "build_info.json"
    if info.is_file():
        try:
            llm = json.loads(info.read_text(encoding="utf-8")).get("llm")
        except (json.JSONDecodeError, AttributeError):
            llm = None
        if isinstance(llm, str) and llm:
            return f"{llm}@{name}"
    return name


def load_references(folders: str | os.PathLike | Sequence[str | os.PathLike]) -> ReferenceLookup:
    """``{utterance: [reference annotations]}`` from one reference folder or several; the key is
    :func:`utterance_key`.

    With several folders (e.g. one built by each LLM: the LMRE paper's "combined" setting), an utterance's
    references are the union of each folder's kept annotations, in folder order, duplicates merged; the
    result's ``provenance`` says which folders gave each reference and ``sources`` names the folders.
    Utterances for which no folder kept a reference map to an empty list (:func:`references_for` refuses
    them). Two records of the same utterance are merged (references de-duplicated, order kept).
    """
    if isinstance(folders, (str, os.PathLike)):
        folders = [folders]
    folders = list(folders)
    if not folders:
        raise ValueError("load_references needs at least one reference folder")
    lookup = ReferenceLookup()
    for folder in folders:
        name = source_name(folder)
        if name in lookup.sources:
            raise ValueError(f"reference folder {str(folder)!r} is given twice (as {name!r})")
        lookup.sources.append(name)
        for rec in load_reference_records(folder):
            key = utterance_key(rec["words"] if "words" in rec else rec["text"])
            merged = lookup.setdefault(key, [])
            origin = lookup.provenance.setdefault(key, {})
            for r in rec["references"]:
                if r not in merged:
                    merged.append(r)
                if name not in origin.setdefault(r, []):
                    origin[r].append(name)
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
