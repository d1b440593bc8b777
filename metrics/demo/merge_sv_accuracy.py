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


def mere_source(ctx: DemoContext):
    """``(kind, scorer, name, label)`` of the LM that proposes the variants: a masked LM when one can be loaded
    (the user's ``--mlm`` or klue/bert-base), else the real offline causal LM (Gemma-3-270M: the MERGE paper
    finds the source LM does not bias the results), else a tiny random MLM (labelled)."""
    from kometrics.datasets_scripts.merge import CausalLMScorer, MLMFillMask
    from kometrics.demo import _loadable

    if "mlm" in ctx.models or (not ctx.offline and _loadable("klue/bert-base")):
        mlm, label = ctx.model("mlm", "klue/bert-base")
        return "mlm", MLMFillMask(mlm), mlm, label
    real = ctx.real("gpt2")
    if real is not None:
        path, name = real
        return "causal", CausalLMScorer(path), path, f"{name}: real causal LM, offline (--lm); no Korean MLM offline"
    mlm, label = ctx.model("mlm", "klue/bert-base")
    return "mlm", MLMFillMask(mlm), mlm, label


def zero_shot_predictions(scorer, rows: list[dict], progress) -> dict[str, list]:
    """Zero-shot NLI labels of every row by the source causal LM (:mod:`kometrics.models.zero_shot_nli`)."""
    from kometrics.models.zero_shot_nli import ZeroShotNLI

    nli = ZeroShotNLI(scorer.model, scorer.tokenizer, device=scorer.device)
    return nli.predict([r["premise"] for r in rows], [r["hypothesis"] for r in rows], progress=progress)


def _score(metric, preds: list[int], rows: list[dict]) -> dict:
    with warnings.catch_warnings():  # seeds without variants: reported as a count
        warnings.filterwarnings("ignore", message=".*seed row but no variant")
        return metric.compute(predictions=preds, references=[r["label"] for r in rows],
                              seed_ids=[r["seed_id"] for r in rows], is_seed=[r["is_seed"] for r in rows],
                              word_classes=[r["word_class"] for r in rows])


def _mc(value) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def run(ctx: DemoContext) -> DemoSection:
    import evaluate
    import torch

    from kometrics.cli import metric_folder
    from kometrics.datasets_scripts.merge import MereOptions, build_rows, read_seeds

    kind, scorer, lm_name, label = mere_source(ctx)
    tiny = label.startswith("tiny")
    # 12 seeds with a real causal LM (a few minutes on 2 CPU cores; the MERGE card's run), 20 otherwise.
    n_seeds = ctx.limit if ctx.limit is not None else (12 if kind == "causal" else 20)
    seeds = read_seeds("klue", data_dir=ctx.data_dir, limit=n_seeds)
    # A random tiny MLM spreads its probability thinly: no floor there, 0.001 for a real model.
    options = MereOptions(top_k=30, probability_floor=0.0 if tiny else 1e-3)
    threads = torch.get_num_threads()
    if kind == "mlm":
        torch.set_num_threads(1)  # small single-sentence forwards: threads only add overhead on shared CPUs
    try:
        rows, counts = build_rows(seeds, scorer, options=options, lm_name=lm_name,
                                  progress=lambda xs: ctx.progress(xs, "MERE", len(seeds)))
    finally:
        torch.set_num_threads(threads)
    variants = [r for r in rows if not r["is_seed"]]
    source = ("P(r) > P(o): variant premise and hypothesis each more probable than the seed's (sentence log-prob)"
              if kind == "causal" else "P(r) > P(o) at the masked position")
    lines = [f"seeds: {len(seeds)} KLUE-NLI v1.1 dev problems; source LM: {label}",
             f"MERE: {counts['shared_words']} shared open-class words, {counts['targets']} replaceable targets, "
             f"{counts['candidates']} candidates -> {len(variants)} variants "
             f"({dict(sorted(Counter(r['word_class'] for r in variants).items()))}); "
             f"{counts['seeds_without_variants']} seeds without variants; constraint: {source}"]
    rejections = {k.split(":", 1)[1]: v for k, v in counts.items() if k.startswith("rejected:")}
    skips = {k: counts[k] for k in ("not_eojeol_initial", "derivation", "compound_noun", "stem_fused_with_ending",
                                    "eojeol_not_reproducible", "original_multi_piece", "span_not_aligned")
             if counts[k]}
    lines.append(f"rejected candidates: {dict(sorted(rejections.items(), key=lambda kv: -kv[1]))}")
    lines.append(f"skipped targets: {skips}")
    for r in variants[:4]:
        lines.append(f"  [{r['word_class']}] {r['original']} -> {r['replacement']}: {r['premise']} / {r['hypothesis']}")
    results: dict = {"counts": dict(counts), "n_variants": len(variants), "source": kind}
    if not variants:
        return DemoSection("merge_sv_accuracy (MERE on KLUE-NLI)", lines + ["no variants: nothing to score"], results)
    metric = evaluate.load(str(metric_folder("merge_sv_accuracy")))
    systems: dict[str, list[int]] = {}
    if kind == "causal":
        zs = zero_shot_predictions(scorer, rows, lambda xs: ctx.progress(xs, "zero-shot NLI", len(rows)))
        systems["zero-shot NLI, calibrated"] = zs["calibrated"]
        systems["zero-shot NLI, raw"] = zs["raw"]
        lines.append("predictions: ZERO-SHOT NLI by the same LM (it scores the label words 함의/중립/모순 after a "
                     "Korean prompt; 'calibrated' divides by its label preference on content-free input, Zhao et "
                     "al. 2021); a 270M base model, not a trained NLI classifier: expect near chance (1/3)")
        lines.append(f"  predicted labels (calibrated): {dict(sorted(Counter(zs['calibrated']).items()))}, raw: "
                     f"{dict(sorted(Counter(zs['raw']).items()))}; gold: "
                     f"{dict(sorted(Counter(r['label'] for r in rows).items()))} (0 entailment, 1 neutral, "
                     "2 contradiction)")
        results["zero_shot"] = zs
    systems["noisy oracle (not a model)"] = noisy_oracle(rows)
    lines.append("the noisy oracle: the gold label with p=0.9 on seeds, 0.8 on variants (seeded) - a reference "
                 "point for the metric, not a model")
    lines.append(f"  {'predictions':<28} {'seed acc':>8} {'var acc':>8} {'SV@0.5':>7} {'SV@0.75':>7} {'SV@1.0':>7}"
                 f" {'MC':>5}")
    results["systems"] = {}
    for name, preds in systems.items():
        result = _score(metric, preds, rows)
        sv = result["sv_accuracy"]
        results["systems"][name] = result
        lines.append(f"  {name:<28} {result['seed_accuracy']:>8.3f} {result['accuracy']:>8.3f} "
                     f"{sv[0.5]:>7.3f} {sv[0.75]:>7.3f} {sv[1.0]:>7.3f} {_mc(result['matching_correctness']):>5}")
    first = next(iter(results["systems"].values()))
    results["result"] = first
    lines.append(f"SV accuracy over {first['n_seeds']} seeds with variants ({first['n_seeds_without_variants']} "
                 "without: left out); MC = matching correctness, the CT whose SV accuracy is closest to the seed accuracy")
    if first["n_seeds"] < 30:
        lines.append(f"only {first['n_seeds']} seeds have variants: these curves show the metric at work, they are "
                     "not estimates (`kometrics merge generate --limit N` for more)")
    if tiny:
        lines.append("the tiny random MLM proposes arbitrary words: the variants only show that the pipeline runs")
    return DemoSection("merge_sv_accuracy (MERE on KLUE-NLI)", lines, results)
