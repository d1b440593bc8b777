"""Build the phrase-break test bed from KLUE-DP dev into a dataset folder (see README.md beside this file).

    python -m kometrics.datasets_scripts.phrase_break.build --out DIR [--limit 300] [--pool-size 128]
    kometrics lmre corpus --out DIR ...                      (the same)

Writes ``DIR/utterances.jsonl``, ``DIR/annotations.jsonl`` (one row per utterance and strategy),
``DIR/pool.jsonl`` (few-shot pool for the reference builder, from utterances *not* in the evaluation part),
and ``DIR/README.md`` (this folder's card, whose ``configs:`` make ``datasets.load_dataset(DIR, name)``
work). The KLUE data is read where it lies; nothing of it is stored in the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kometrics.cli.io import iter_jsonl

from ..readers import DPSentence, read_klue_dp
from .strategies import STRATEGIES, length_bucket

__all__ = ["build_corpus", "annotate", "utterance_record", "main", "CARD"]

CARD = Path(__file__).with_name("README.md")
_TOKENS = {1: "/", 2: "//"}


def annotate(words: Sequence[str], breaks: Sequence[int]) -> str:
    """Canonical annotation string (``/`` AP, ``//`` IP after a word; nothing after the last word)."""
    if len(breaks) != len(words) - 1:
        raise ValueError(f"{len(breaks)} boundary codes for {len(words)} words (need {len(words) - 1})")
    out = []
    for i, w in enumerate(words):
        out.append(w)
        if i < len(breaks) and breaks[i]:
            out.append(_TOKENS[breaks[i]])
    return " ".join(out)


def utterance_record(sent: DPSentence) -> dict[str, Any]:
    words = [w.form for w in sent.words]
    return {"id": sent.guid, "text": " ".join(words), "words": words, "n_words": len(words),
            "length_bucket": length_bucket(len(words))}


def _usable(sent: DPSentence) -> str | None:
    if len(sent.words) < 2:
        return "fewer than 2 words"
    if any("/" in w.form or not w.form.strip() for w in sent.words):
        return "a word contains '/' (the boundary mark)"
    return None


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    with open(tmp, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    os.replace(tmp, path)
    return n


def build_corpus(out_dir: str | os.PathLike, data_dir: str | os.PathLike | None = None, limit: int | None = 300,
                 pool_size: int = 128, pool_strategy: str = "rule", strategies: Sequence[str] | None = None,
                 human_scores: dict[str, float] | None = None,
                 sentences: Sequence[DPSentence] | None = None) -> dict[str, Any]:
    """Write the test bed into ``out_dir`` and return a summary (counts per strategy and length bucket).

    The first ``limit`` usable KLUE-DP dev sentences (all when ``None``) are the evaluation utterances,
    each annotated by every strategy; the next ``pool_size`` are annotated by ``pool_strategy`` as the
    few-shot pool (a stand-in for the expert annotations of the paper). ``human_scores`` maps annotation
    ids (``<utterance id>:<strategy>``) to a human score; others get ``null``.
    """
    strategies = list(strategies or STRATEGIES)
    for name in [*strategies, pool_strategy]:
        if name not in STRATEGIES:
            raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be positive, got {limit}")
    sents = list(sentences) if sentences is not None else read_klue_dp(data_dir)
    skipped: Counter = Counter()
    usable = []
    for s in sents:
        why = _usable(s)
        if why:
            skipped[why] += 1
        else:
            usable.append(s)
    n_eval = len(usable) if limit is None else min(limit, len(usable))
    evaluation, pool = usable[:n_eval], usable[n_eval:n_eval + pool_size]
    if pool_size and len(pool) < pool_size:
        raise ValueError(f"only {len(pool)} sentences remain for a pool of {pool_size}; lower limit or pool_size")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    human_scores = dict(human_scores or {})
    utterances = [utterance_record(s) for s in evaluation]
    rows = []
    for s, u in zip(evaluation, utterances):
        for name in strategies:
            ann_id = f"{s.guid}:{name}"
            rows.append({"id": ann_id, "utterance_id": s.guid, "text": u["text"], "words": u["words"],
                         "annotation": annotate(u["words"], STRATEGIES[name](s)), "strategy": name,
                         "n_words": u["n_words"], "length_bucket": u["length_bucket"],
                         "human_score": human_scores.pop(ann_id, None)})
    if human_scores:
        raise ValueError(f"human_scores has ids that are not annotations of this corpus, e.g. "
                         f"{next(iter(human_scores))!r}")
    pool_rows = []
    for s in pool:
        u = utterance_record(s)
        pool_rows.append({"id": s.guid, "text": u["text"], "words": u["words"],
                          "annotation": annotate(u["words"], STRATEGIES[pool_strategy](s)), "strategy": pool_strategy})
    _write_jsonl(out / "utterances.jsonl", utterances)
    _write_jsonl(out / "annotations.jsonl", rows)
    _write_jsonl(out / "pool.jsonl", pool_rows)
    if CARD.is_file():
        shutil.copyfile(CARD, out / "README.md")
    summary = {
        "out_dir": str(out),
        "utterances": len(utterances),
        "annotations": len(rows),
        "pool": len(pool_rows),
        "skipped": dict(skipped),
        "length_buckets": dict(Counter(u["length_bucket"] for u in utterances)),
        "strategies": strategies,
        "pool_strategy": pool_strategy,
        "source": "KLUE-DP v1.1 dev (klue-dp-v1.1_dev.tsv), CC BY-SA 4.0",
    }
    with open(out / "build_info.json", "w", encoding="utf-8") as f:
        json.dump(summary, f, ensure_ascii=False, indent=2)
    return summary


def read_human_scores(path: str | os.PathLike) -> dict[str, float]:
    """``{annotation id: score}`` from a jsonl file of ``{"id": ..., "human_score": ...}`` rows."""
    out = {}
    for n, rec in iter_jsonl(path, objects=True):
        if "id" not in rec or "human_score" not in rec:
            raise ValueError(f"{path}:{n}: a row needs 'id' and 'human_score'")
        out[str(rec["id"])] = float(rec["human_score"])
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="folder to write (created)")
    parser.add_argument("--data-dir", help="folder with klue/ (default: ../shared/data or $KOMETRICS_DATA)")
    parser.add_argument("--limit", type=int, default=300, help="evaluation utterances (default 300; 0 = all)")
    parser.add_argument("--pool-size", type=int, default=128, help="few-shot pool size (default 128)")
    parser.add_argument("--pool-strategy", default="rule", choices=list(STRATEGIES))
    parser.add_argument("--strategy", action="append", choices=list(STRATEGIES), help="strategies (default all)")
    parser.add_argument("--human-scores", help="jsonl of {id: '<utterance id>:<strategy>', human_score}")


def run(args: argparse.Namespace) -> int:
    summary = build_corpus(args.out, data_dir=args.data_dir, limit=args.limit or None, pool_size=args.pool_size,
                           pool_strategy=args.pool_strategy, strategies=args.strategy,
                           human_scores=read_human_scores(args.human_scores) if args.human_scores else None)
    json.dump(summary, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="phrase_break.build", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
