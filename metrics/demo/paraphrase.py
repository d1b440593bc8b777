"""``kometrics demo`` section: the paraphrase benchmark on a slice of KLUE-STS dev (about a minute on CPU)."""

from __future__ import annotations

import warnings

from kometrics.bench.paraphrase.benchmark import BenchmarkConfig, format_table2, run_benchmark
from kometrics.datasets_scripts.paraphrase.corpus import build_named
from kometrics.demo import DemoContext, DemoSection

__all__ = ["run"]

DEFAULT_PAIRS = 100


def run(ctx: DemoContext) -> DemoSection:
    """BLEU, GLEU, TER, chrF and korbertscore (every layer, idf off) against KLUE-STS human scores."""
    model, label = ctx.model("bert", "klue/bert-base")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        corpus = build_named("klue-sts", ctx.data_dir)
    n = ctx.limit if ctx.limit is not None else DEFAULT_PAIRS
    cfg = BenchmarkConfig(data="klue-sts", model=model, idf="off", limit=min(n, len(corpus)), n_boot=200, seed=0,
                          batch_size=32, examples=0, progress=False)
    result = run_benchmark(cfg, corpus=corpus, model_label=label)
    a = corpus.meta["agreement"]
    lines = [
        f"KLUE-STS dev: {len(corpus)} pairs rated 0-5 by {a['raters']} annotators (5-7 per pair); agreement: "
        f"Krippendorff's alpha (interval) {a['krippendorff_alpha_interval']:.3f}, mean pairwise Pearson "
        f"{a['mean_pairwise_pearson']:.3f}",
        f"human score = mean of the raters' z-scores; {len(result.ids)} pairs drawn with seed 0; model: {label}",
        "",
        *format_table2(result).splitlines(),
    ]
    if result.table3:
        best = result.best_layer["no_idf"]
        row = next(r for r in result.table3 if r["layer"] == best)
        lines.append(f"Table 3 (layer sweep 0-{result.table3[-1]['layer']}): best F1 layer {best} "
                     f"(Pearson {row['F1_pearson']:+.4f}); full tables: kometrics bench paraphrase")
    return DemoSection(title="paraphrase benchmark (Korean BERTScore paper, Tables 2-3, on KLUE-STS)", lines=lines,
                       results={"n_pairs": len(result.ids), "table2": result.table2,
                                "best_layer": result.best_layer, "signature": result.signature, "model": label})
