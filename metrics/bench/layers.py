"""Layer sweep: correlation of P, R and F1 with human similarity scores at every layer (the paper's Table 3).

All layers come from one forward pass per sentence (:func:`~.pipeline.score_layers`). Sources of human
scores: KLUE-STS dev (``real-label``, 0-5), KorSTS dev/train (``score``, 0-5) from ../shared/data, or a user
file (``.jsonl`` with ``sentence1``, ``sentence2``, ``score``; or ``.tsv`` with those columns).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from kometrics.korbertscore.pipeline import score_layers

__all__ = ["SOURCES", "load_pairs", "layer_sweep", "format_table"]

SOURCES = ("klue-sts", "korsts-dev", "korsts-train")


def load_pairs(source: str, data_dir: str | os.PathLike | None = None, limit: int | None = None
               ) -> tuple[list[str], list[str], list[float]]:
    """``(sentence1s, sentence2s, human scores)`` from a named source or a file."""
    if source == "klue-sts":
        from kometrics.datasets_scripts.readers import read_klue_sts

        rows = [(r["sentence1"], r["sentence2"], float(r["labels"]["real-label"])) for r in read_klue_sts(data_dir)]
    elif source in ("korsts-dev", "korsts-train"):
        from kometrics.datasets_scripts.readers import read_korsts

        rows = [(r["sentence1"], r["sentence2"], r["score"]) for r in read_korsts(source.split("-")[1], data_dir)]
    else:
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"source must be one of {SOURCES} or a .jsonl/.tsv file, got {source!r}")
        rows = []
        if path.suffix == ".jsonl":
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
                if line.strip():
                    rec = json.loads(line)
                    try:
                        rows.append((rec["sentence1"], rec["sentence2"], float(rec["score"])))
                    except KeyError as e:
                        raise ValueError(f"{path}:{i + 1}: missing key {e}") from None
        else:
            with open(path, encoding="utf-8", newline="") as f:
                for i, rec in enumerate(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)):
                    try:
                        rows.append((rec["sentence1"], rec["sentence2"], float(rec["score"])))
                    except (KeyError, TypeError) as e:
                        raise ValueError(f"{path}: row {i + 1}: needs sentence1, sentence2, score ({e})") from None
    if limit is not None:
        rows = rows[:limit]
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def layer_sweep(cands: list[str], refs: list[str], human: list[float], model_type: str, idf: bool = False,
                batch_size: int = 64, device: str | None = None, layers: list[int] | None = None) -> dict[str, Any]:
    """Pearson and Spearman correlation of P, R, F1 with ``human`` at every layer.

    Returns ``{"table": {layer: {"precision": {"pearson": .., "spearman": ..}, "recall": .., "f1": ..}},
    "best_layer": layer with the highest F1 Pearson (the paper's criterion), "n": pairs}``.
    """
    from scipy.stats import pearsonr, spearmanr

    if len(human) != len(cands):
        raise ValueError(f"human must have one score per pair, got {len(human)} for {len(cands)} pairs")
    scores = score_layers(cands, refs, model_type=model_type, layers=layers, idf=idf, batch_size=batch_size,
                          device=device)
    h = np.asarray(human, dtype=np.float64)
    table: dict[int, dict[str, dict[str, float]]] = {}
    for layer, vals in scores.items():
        table[layer] = {}
        for key in ("precision", "recall", "f1"):
            x = np.nan_to_num(vals[key])
            table[layer][key] = {"pearson": float(pearsonr(x, h)[0]), "spearman": float(spearmanr(x, h)[0])}
    best = max(table, key=lambda x: (np.nan_to_num(table[x]["f1"]["pearson"], nan=-2.0), -x))
    return {"table": table, "best_layer": int(best), "n": len(cands)}


def format_table(result: dict[str, Any], stat: str = "pearson") -> str:
    """A markdown table like the paper's Table 3 (one row per layer), both statistics, best layer marked."""
    lines = ["| layer | P pearson | R pearson | F1 pearson | P spearman | R spearman | F1 spearman |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for layer, row in sorted(result["table"].items()):
        mark = " *" if layer == result["best_layer"] else ""
        cells = [f"{row[k]['pearson']:.4f}" for k in ("precision", "recall", "f1")]
        cells += [f"{row[k]['spearman']:.4f}" for k in ("precision", "recall", "f1")]
        lines.append(f"| {layer}{mark} | " + " | ".join(cells) + " |")
    lines.append(f"\nbest layer (F1 Pearson): {result['best_layer']} over {result['n']} pairs")
    return "\n".join(lines)
