"""KorBERTScore in ``kometrics demo``: real KLUE-STS and KorSTS dev pairs scored, correlated with human scores."""

from __future__ import annotations

import time
import warnings

import numpy as np

from kometrics.demo import DemoContext, DemoSection
from kometrics.klue_sts.correlation import pearson, spearman
from kometrics.korbertscore.embedding import DEFAULT_MODEL, default_layer, load_encoder
from kometrics.korbertscore.pipeline import score


def run(ctx: DemoContext) -> DemoSection:
    from kometrics.datasets_scripts.readers import read_klue_sts, read_korsts

    model, label = ctx.model("bert", DEFAULT_MODEL)
    depth = load_encoder(model).depth
    layer, how = default_layer(model)  # the layer score uses without num_layers, and why
    klue = ctx.take(read_klue_sts(ctx.data_dir), default=300)
    korsts = ctx.take(read_korsts("dev", ctx.data_dir), default=300)
    sets = {
        "KLUE-STS dev": ([r["sentence1"] for r in klue], [r["sentence2"] for r in klue],
                         np.array([r["labels"]["real-label"] for r in klue])),
        "KorSTS dev": ([r["sentence1"] for r in korsts], [r["sentence2"] for r in korsts],
                       np.array([r["score"] for r in korsts])),
    }
    section = DemoSection(title=f"korbertscore: {label}, layer {layer} of {depth}")
    section.lines.append(f"layer {layer}: {how}")
    section.lines.append("data            pairs  mean F1   Pearson(P/R/F1 vs human)   Spearman(F1)  pairs/s")
    for name, (c, r, human) in sets.items():
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = score(c, r, model_type=model, num_layers=layer)
        secs = time.perf_counter() - start
        p, rr, f = (np.array(res[k]) for k in ("precision", "recall", "f1"))
        pear = [pearson(x, human, ("korbertscore's scores", "the human scores")) for x in (p, rr, f)]
        spear = spearman(f, human, ("korbertscore's F1", "the human scores"))
        section.results[name] = {"n": len(c), "mean_f1": float(f.mean()), "pearson_p": pear[0], "pearson_r": pear[1],
                                 "pearson_f1": pear[2], "spearman_f1": spear, "hashcode": res["hashcode"]}
        section.lines.append(f"{name:<15} {len(c):>5}  {f.mean():.4f}   {pear[0]:.3f} / {pear[1]:.3f} / {pear[2]:.3f}"
                             f"        {spear:.3f}        {len(c) / secs:.0f}")
    i = int(np.argmax(sets["KorSTS dev"][2]))
    c, r, h = sets["KorSTS dev"][0][i], sets["KorSTS dev"][1][i], sets["KorSTS dev"][2][i]
    one = score([c], [r], model_type=model, num_layers=layer)
    section.lines.append(f"example (human {h:.1f}/5): F1 {one['f1'][0]:.4f}")
    section.lines.append(f"  candidate: {c}")
    section.lines.append(f"  reference: {r}")
    section.lines.append(f"hashcode: {res['hashcode']}")
    if "tiny random" in label:
        section.lines.append("The model has random weights (offline stand-in), so correlations here only show that "
                             "the pipeline runs; with klue/bert-base they measure the metric.")
    elif model != DEFAULT_MODEL:
        section.lines.append(f"Real measurements, but of this model's layer {layer}, not of {DEFAULT_MODEL}.")
    return section
