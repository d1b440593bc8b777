"""``kometrics demo`` section for LMRE: corpus -> references (stand-in LLM) -> acceptance per strategy."""

from __future__ import annotations

import tempfile
import warnings
from collections import defaultdict
from pathlib import Path

from kometrics.cli.io import read_jsonl
from kometrics.demo import DemoContext, DemoSection

BUCKETS = ("short", "medium", "long")


def run(ctx: DemoContext) -> DemoSection:
    from kometrics.datasets_scripts.phrase_break.build import build_corpus
    from kometrics.datasets_scripts.phrase_break.builder import build_references, read_pool, read_utterances
    from kometrics.datasets_scripts.phrase_break.standin import StandInLLM
    from kometrics.datasets_scripts.readers import read_klue_dp
    from kometrics.lmre.lookup import load_references, references_for
    from kometrics.lmre.scoring import score

    section = DemoSection("LMRE: multi-reference evaluation of phrase breaks (KLUE-DP dev)")
    sentences = read_klue_dp(ctx.data_dir)
    n_eval = len(ctx.take(sentences, default=300))
    pool_size = min(128, max(0, len(sentences) - n_eval))
    n_iter = 20
    with tempfile.TemporaryDirectory(prefix="lmre-demo-") as tmp:
        corpus, refs_dir = Path(tmp) / "corpus", Path(tmp) / "references"
        summary = build_corpus(corpus, limit=n_eval, pool_size=pool_size, sentences=sentences)
        llm = StandInLLM.from_corpus(corpus)
        with warnings.catch_warnings():  # utterances without a reference are reported below
            warnings.simplefilter("ignore", UserWarning)
            info = build_references(read_utterances(corpus / "utterances.jsonl"),
                                    read_pool(corpus / "pool.jsonl"), refs_dir, llm, n_iter=n_iter, concurrency=2)
        lookup = load_references(refs_dir)
        rows = read_jsonl(corpus / "annotations.jsonl")
    section.lines += [
        f"corpus: {summary['utterances']} KLUE-DP dev sentences x {len(summary['strategies'])} strategies "
        f"({', '.join(summary['strategies'])}); buckets {summary['length_buckets']}; pool {summary['pool']} "
        f"'{summary['pool_strategy']}' annotations of other sentences",
        "references: built by a deterministic local STAND-IN for the LLM (it picks among the rule strategies'",
        "  annotations with noise; it is not a language model), so the numbers only show the pipeline at work.",
        f"  n_iter={n_iter}, batch 32, few-shot {info['config']['few_shot_size']}, min_count={info['config']['min_count']}: "
        f"{info['requests']} requests, answers {info['answers']}, "
        f"{info['references_per_utterance']:.2f} references per utterance",
    ]
    results: dict[str, dict] = {}
    header = f"{'strategy':<11} {'LMRE F1>0.5':>12} {'LMRE EM':>8} {'single-ref F1':>14}  " + "  ".join(
        f"{b:>6}" for b in BUCKETS)
    section.lines += ["acceptance rates (multi-reference F1 per length bucket on the right):", "  " + header]
    usable = [r for r in rows if lookup.get(" ".join(r["words"]))]
    skipped = len(rows) - len(usable)
    by_strategy: dict[str, list[dict]] = defaultdict(list)
    for r in usable:
        by_strategy[r["strategy"]].append(r)
    for strategy, items in by_strategy.items():
        preds = [r["annotation"] for r in items]
        refs = references_for(preds, lookup)
        f1 = score(preds, refs, similarity="f1", theta=0.5)
        em = score(preds, refs, similarity="em", theta=0.5)
        single = score(preds, [[r[0]] for r in refs], similarity="f1", theta=0.5)
        per_bucket = {}
        for b in BUCKETS:
            flags = [a for a, r in zip(f1["accepted"], items) if r["length_bucket"] == b]
            per_bucket[b] = sum(flags) / len(flags) if flags else float("nan")
        results[strategy] = {"f1": f1["acceptance_rate"], "em": em["acceptance_rate"],
                             "single_f1": single["acceptance_rate"], "buckets": per_bucket, "n": len(items)}
        section.lines.append("  " + f"{strategy:<11} {f1['acceptance_rate']:>12.3f} {em['acceptance_rate']:>8.3f} "
                             f"{single['acceptance_rate']:>14.3f}  " + "  ".join(
                                 f"{per_bucket[b]:>6.3f}" for b in BUCKETS))
    section.lines.append("single-ref = the most frequent reference alone (the one-gold-annotation baseline).")
    if skipped:
        section.lines.append(f"{skipped} annotations ({info['utterances_without_reference']} utterances) were not "
                             "scored: no annotation of their utterance reached min_count.")
    section.results = {"strategies": results, "build": info, "corpus": summary}
    return section
