"""``kometrics demo`` section for LMRE: corpus -> references (stand-in LLM) -> acceptance per strategy."""

from __future__ import annotations

import tempfile
import warnings
from collections import defaultdict
from pathlib import Path

from kometrics.cli.io import read_jsonl
from kometrics.demo import DemoContext, DemoSection

BUCKETS = ("short", "medium", "long")


def acceptance_table(rows: list[dict], lookup) -> tuple[dict[str, dict], int]:
    """Per strategy: LMRE acceptance (F1 > 0.5, EM) against the multi-reference set, the single-reference
    baseline (the most frequent reference alone) and F1 acceptance per length bucket; and how many
    annotations had no reference (not scored)."""
    from kometrics.lmre.lookup import references_for
    from kometrics.lmre.scoring import score

    usable = [r for r in rows if lookup.get(" ".join(r["words"]))]
    by_strategy: dict[str, list[dict]] = defaultdict(list)
    for r in usable:
        by_strategy[r["strategy"]].append(r)
    results: dict[str, dict] = {}
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
    return results, len(rows) - len(usable)


def table_lines(results: dict[str, dict]) -> list[str]:
    header = f"{'strategy':<11} {'LMRE F1>0.5':>12} {'LMRE EM':>8} {'single-ref F1':>14}  " + "  ".join(
        f"{b:>6}" for b in BUCKETS)
    lines = ["  " + header]
    for strategy, r in results.items():
        lines.append("  " + f"{strategy:<11} {r['f1']:>12.3f} {r['em']:>8.3f} {r['single_f1']:>14.3f}  "
                     + "  ".join(f"{r['buckets'][b]:>6.3f}" for b in BUCKETS))
    return lines


def breaks_per_reference(lookup) -> float:
    """Mean number of break marks (/ or //) per reference over the reference set."""
    refs = [ref for key in lookup.keys() for ref in lookup.get(key)]
    return sum(sum(tok in ("/", "//") for tok in ref.split()) for ref in refs) / len(refs) if refs else float("nan")


def run(ctx: DemoContext) -> DemoSection:
    from kometrics.datasets_scripts.phrase_break.build import build_corpus
    from kometrics.datasets_scripts.phrase_break.builder import build_references, read_pool, read_utterances
    from kometrics.datasets_scripts.phrase_break.standin import StandInLLM
    from kometrics.datasets_scripts.readers import read_klue_dp
    from kometrics.lmre.lookup import load_references

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
        results, skipped = acceptance_table(rows, lookup)
        section.lines += [
            f"corpus: {summary['utterances']} KLUE-DP dev sentences x {len(summary['strategies'])} strategies "
            f"({', '.join(summary['strategies'])}); buckets {summary['length_buckets']}; pool {summary['pool']} "
            f"'{summary['pool_strategy']}' annotations of other sentences",
            "A. references from a deterministic local STAND-IN for the LLM (it picks among the rule strategies'",
            "  annotations with noise; it is not a language model): the pipeline at the paper's scale.",
            f"  n_iter={n_iter}, batch 32, few-shot {info['config']['few_shot_size']}, "
            f"min_count={info['config']['min_count']}: {info['requests']} requests, answers {info['answers']}, "
            f"{info['references_per_utterance']:.2f} references per utterance",
            "  acceptance rates (multi-reference F1 per length bucket on the right):",
            *table_lines(results),
        ]
        if skipped:
            section.lines.append(f"  {skipped} annotations ({info['utterances_without_reference']} utterances) were "
                                 "not scored: no annotation of their utterance reached min_count.")
        section.results = {"strategies": results, "build": info, "corpus": summary}
        real = ctx.real("gpt2")
        if real is not None:
            section.lines += _local_llm(ctx, real, corpus, rows, Path(tmp) / "references-local", section.results)
    section.lines.append("single-ref = the most frequent reference alone (the one-gold-annotation baseline).")
    return section


def _local_llm(ctx: DemoContext, real: tuple[str, str], corpus: Path, rows: list[dict], out: Path,
               results: dict) -> list[str]:
    """B. the same corpus' first utterances with references built by the real offline causal LM in-process
    (``--llm local``: constrained decoding, it only chooses where the breaks go)."""
    from kometrics.datasets_scripts.phrase_break.builder import build_references, read_pool, read_utterances
    from kometrics.datasets_scripts.phrase_break.local_llm import LocalCausalLM
    from kometrics.lmre.lookup import load_references

    path, name = real
    utterances = read_utterances(corpus / "utterances.jsonl")
    n_real = min(len(utterances), 12, ctx.limit if ctx.limit is not None else 12)  # about 1 s per answer
    utterances = utterances[:n_real]
    n_iter, few_shot, temperature = 8, 16, 1.0  # about 1 s per answer on 2 CPU cores
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        info = build_references(utterances, read_pool(corpus / "pool.jsonl"), out, LocalCausalLM(path, seed=0),
                                n_iter=n_iter, few_shot_size=few_shot, temperature=temperature, concurrency=1,
                                progress=False)
    lookup = load_references(out)
    keep = {" ".join(u.words) for u in utterances}
    table, skipped = acceptance_table([r for r in rows if " ".join(r["words"]) in keep], lookup)
    results["local_llm"] = {"strategies": table, "build": info, "model": path,
                            "breaks_per_reference": breaks_per_reference(lookup)}
    lines = [
        f"B. references built by a REAL LM in-process: {name} (--llm local, constrained decoding: it copies",
        "  the words and only chooses no break, / or // at each boundary by its next-token probabilities)",
        f"  {n_real} utterances, n_iter={n_iter}, few-shot {few_shot} (smaller than the paper's 64: CPU), temperature "
        f"{temperature} (at 0 this model places no break at all), min_count={info['config']['min_count']} (every "
        f"answer kept): "
        f"{info['answers']} answers, {info['references_per_utterance']:.2f} references per utterance, "
        f"{results['local_llm']['breaks_per_reference']:.2f} breaks per reference",
        *table_lines(table),
    ]
    if skipped:
        lines.append(f"  {skipped} annotations were not scored: no reference reached min_count.")
    lines.append("  this 270M base model copies the sentence it is shown (the next word has probability 0.9-0.99 at a "
                 "boundary, ' /' about e^-6 to e^-10), so its references are (nearly) unbroken and accept only "
                 "annotations without breaks: the local backend works offline, but LMRE needs a model that can "
                 "annotate (see the lmre card).")
    return lines
