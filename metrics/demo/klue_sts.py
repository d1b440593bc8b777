"""KLUE-STS in ``kometrics demo``: two model-free baselines scored on the 519 real KLUE-STS dev pairs."""

from __future__ import annotations

import numpy as np

from kometrics.demo import DemoContext, DemoSection
from kometrics.klue_sts.scoring import bootstrap_intervals, sts_scores


def char_bigram_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two sentences' character bigrams (spaces removed), scaled to 0-5."""
    def grams(s: str) -> set[str]:
        s = "".join(s.split())
        return {s[i:i + 2] for i in range(len(s) - 1)} or {s}

    ga, gb = grams(a), grams(b)
    return 5.0 * len(ga & gb) / len(ga | gb)


def run(ctx: DemoContext) -> DemoSection:
    from kometrics.datasets_scripts.readers import read_klue_sts

    records = ctx.take(read_klue_sts(ctx.data_dir))
    gold = np.array([r["labels"]["real-label"] for r in records])
    rng = np.random.default_rng(0)
    systems = {
        "character-bigram overlap (no model)": np.array(
            [char_bigram_overlap(r["sentence1"], r["sentence2"]) for r in ctx.progress(records, "klue_sts")]),
        "gold + N(0, 1) noise (a noisy oracle)": np.clip(gold + rng.normal(0.0, 1.0, len(gold)), 0, 5),
    }
    section = DemoSection(title=f"klue_sts: KLUE-STS dev, {len(records)} real pairs "
                                f"({int((gold >= 3).sum())} positive at >= 3.0)")
    section.lines.append("system                                   Pearson (95% CI)       Spearman   F1 (95% CI)")
    for name, preds in systems.items():
        scores = sts_scores(preds, gold)
        ci = bootstrap_intervals(preds, gold, confidence_level=0.95, n_resamples=1000, seed=0)
        section.results[name] = {**scores, **{f"{k}_ci": v for k, v in ci.items()}}
        section.lines.append(
            f"{name:<40} {scores['pearson']:.3f} [{ci['pearson'][0]:.3f}, {ci['pearson'][1]:.3f}]  "
            f"{scores['spearmanr']:.3f}      {scores['f1']:.3f} [{ci['f1'][0]:.3f}, {ci['f1'][1]:.3f}]")
    section.lines.append("Scores are on the 0-1 scale (the KLUE leaderboard prints them x100).")
    return section
