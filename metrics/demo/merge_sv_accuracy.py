"""``kometrics demo`` section: KLUE-NLI seeds through MERE, then merge_sv_accuracy on a baseline's predictions."""

from __future__ import annotations

import random
import warnings
from collections import Counter

from kometrics.demo import DemoContext, DemoSection


def noisy_oracle(rows: list[dict], p_seed: float = 0.9, p_variant: float = 0.8, seed: int = 0) -> list[int]:
    """A deterministic baseline that is NOT a model: the gold label with probability ``p_seed`` on seed rows
    and ``p_variant`` on variants, otherwise another label, drawn with ``random.Random(f"{seed}:{row id}")``."""
    preds = []
    for row in rows:
        rng = random.Random(f"{seed}:{row['variant_id']}")
        p = p_seed if row["is_seed"] else p_variant
        gold = row["label"]
        preds.append(gold if rng.random() < p else rng.choice([x for x in range(3) if x != gold]))
    return preds


def run(ctx: DemoContext) -> DemoSection:
    import evaluate
    import torch

    from kometrics.cli import metric_folder
    from kometrics.datasets_scripts.merge import MereOptions, MLMFillMask, build_rows, read_seeds

    n_seeds = ctx.limit if ctx.limit is not None else 20
    seeds = read_seeds("klue", data_dir=ctx.data_dir, limit=n_seeds)
    mlm, label = ctx.model("mlm", "klue/bert-base")
    tiny = label.startswith("tiny")
    # A random tiny MLM spreads its probability thinly: no floor there, 0.001 for a real model.
    options = MereOptions(top_k=30, probability_floor=0.0 if tiny else 1e-3)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small single-sentence forwards: threads only add overhead on shared CPUs
    try:
        rows, counts = build_rows(seeds, MLMFillMask(mlm), options=options, lm_name=mlm,
                                  progress=lambda xs: ctx.progress(xs, "MERE", len(seeds)))
    finally:
        torch.set_num_threads(threads)
    variants = [r for r in rows if not r["is_seed"]]
    lines = [f"seeds: {len(seeds)} KLUE-NLI v1.1 dev problems; MLM: {label}",
             f"MERE: {counts['shared_words']} shared open-class words, {counts['targets']} replaceable targets, "
             f"{counts['candidates']} candidates -> {len(variants)} variants "
             f"({dict(sorted(Counter(r['word_class'] for r in variants).items()))}); "
             f"{counts['seeds_without_variants']} seeds without variants"]
    rejections = {k.split(":", 1)[1]: v for k, v in counts.items() if k.startswith("rejected:")}
    skips = {k: counts[k] for k in ("not_eojeol_initial", "derivation", "compound_noun", "stem_fused_with_ending",
                                    "eojeol_not_reproducible", "original_multi_piece", "span_not_aligned")
             if counts[k]}
    lines.append(f"rejected candidates: {dict(sorted(rejections.items(), key=lambda kv: -kv[1]))}")
    lines.append(f"skipped targets: {skips}")
    for r in variants[:3]:
        lines.append(f"  [{r['word_class']}] {r['original']} -> {r['replacement']}: {r['premise']} / {r['hypothesis']}")
    if not variants:
        return DemoSection("merge_sv_accuracy (MERE on KLUE-NLI)", lines + ["no variants: nothing to score"],
                           {"counts": dict(counts)})
    preds = noisy_oracle(rows)
    metric = evaluate.load(str(metric_folder("merge_sv_accuracy")))
    with warnings.catch_warnings():  # seeds without variants: reported below as a count
        warnings.filterwarnings("ignore", message=".*seed row but no variant")
        result = metric.compute(predictions=preds, references=[r["label"] for r in rows],
                                seed_ids=[r["seed_id"] for r in rows], is_seed=[r["is_seed"] for r in rows],
                                word_classes=[r["word_class"] for r in rows])
    sv = result["sv_accuracy"]
    lines += [
        "predictions: a seeded NOISY ORACLE, not a model (gold label with p=0.9 on seeds, 0.8 on variants)",
        f"accuracy on variants {result['accuracy']:.3f}, seed accuracy {result['seed_accuracy']:.3f}",
        f"SV accuracy at CT 0.5 / 0.75 / 1.0: {sv[0.5]:.3f} / {sv[0.75]:.3f} / {sv[1.0]:.3f} "
        f"over {result['n_seeds']} seeds with variants ({result['n_seeds_without_variants']} without: left out)",
        f"matching correctness MC = {result['matching_correctness']}",
        "variant accuracy given seed right / wrong: "
        + " / ".join("n/a" if v is None else f"{v:.3f}" for v in (result["variant_accuracy_given_seed_correct"],
                                                               result["variant_accuracy_given_seed_wrong"])),
    ]
    for cls, curve in (result["sv_accuracy_by_word_class"] or {}).items():
        lines.append(f"  SV@0.75 {cls}: {curve[0.75]:.3f}")
    if tiny:
        lines.append("the tiny random MLM proposes arbitrary words: the variants only show that the pipeline runs")
    return DemoSection("merge_sv_accuracy (MERE on KLUE-NLI)", lines,
                       {"counts": dict(counts), "result": result, "n_variants": len(variants)})
