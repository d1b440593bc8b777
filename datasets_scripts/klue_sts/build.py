"""Build the KLUE-STS folder (Hugging Face ``klue``/``sts`` schema) from the official KLUE JSON."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

__all__ = ["to_hf_record", "build"]

CARD = Path(__file__).with_name("README.md")

#: KLUE-STS binarisation: a pair is a paraphrase (binary-label 1) iff real-label >= 3.0.
BINARY_THRESHOLD = 3.0


def to_hf_record(record: dict) -> dict:
    """One official KLUE-STS record -> the ``klue``/``sts`` schema (annotations dropped).

    Raises ``ValueError`` naming the guid when a field is missing or the labels disagree with each other.
    """
    guid = record.get("guid", "?")
    try:
        labels = record["labels"]
        out = {
            "guid": record["guid"],
            "source": record["source"],
            "sentence1": record["sentence1"],
            "sentence2": record["sentence2"],
            "labels": {
                "label": float(labels["label"]),
                "real-label": float(labels["real-label"]),
                "binary-label": int(labels["binary-label"]),
            },
        }
    except KeyError as e:
        raise ValueError(f"record {guid}: missing field {e.args[0]!r}") from None
    if out["labels"]["binary-label"] not in (0, 1):
        raise ValueError(f"record {guid}: binary-label must be 0 or 1, got {labels['binary-label']!r}")
    expected = int(out["labels"]["real-label"] >= BINARY_THRESHOLD)
    if out["labels"]["binary-label"] != expected:
        raise ValueError(f"record {guid}: binary-label {out['labels']['binary-label']} disagrees with real-label "
                         f"{out['labels']['real-label']!r} (KLUE's rule: 1 iff real-label >= {BINARY_THRESHOLD})")
    return out


def build(source: str | os.PathLike, out_dir: str | os.PathLike) -> Path:
    """Write ``out_dir/README.md`` (the card with ``configs:``) and ``out_dir/validation.jsonl``.

    ``source`` is ``klue-sts-v1.1_dev.json`` or a folder containing it (e.g. ``../shared/data/klue``).
    Returns ``out_dir``, which ``datasets.load_dataset(out_dir)`` loads.
    """
    src = Path(source)
    if src.is_dir():
        src = src / "klue-sts-v1.1_dev.json"
    with open(src, encoding="utf-8") as f:
        records = json.load(f)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "validation.jsonl.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(to_hf_record(rec), ensure_ascii=False) + "\n")
    tmp.replace(out / "validation.jsonl")
    shutil.copyfile(CARD, out / "README.md")
    return out
