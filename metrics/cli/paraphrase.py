"""``kometrics paraphrase build`` and ``kometrics bench paraphrase`` (registered by the kometrics CLI)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["register", "cmd_build", "cmd_bench"]


def _resolve_model(model: str, data_dir: str | None) -> tuple[str, str]:
    """``--model tiny``: a tiny random BERT built offline from the Korean data (pipeline check only)."""
    if model != "tiny":
        from kometrics.bench.paraphrase.benchmark import describe_model

        return model, describe_model(model)
    import tempfile

    from kometrics.datasets_scripts.readers import default_data_dir, iter_korean_text
    from kometrics.models.tiny import build_tiny_bert

    root = Path(data_dir) if data_dir else default_data_dir()
    path = build_tiny_bert(Path(tempfile.gettempdir()) / "kometrics-demo" / "tiny-bert", iter_korean_text(root))
    return path, "tiny random BERT built offline (numbers only show that the pipeline works)"


def cmd_build(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.datasets_scripts.paraphrase.build import build

    corpus, folder = build(args.source, args.out, data_dir=args.data_dir,
                           scale=tuple(args.scale) if args.scale else None, ddof=args.ddof,
                           degenerate=args.degenerate)
    print(f"wrote {len(corpus)} pairs to {folder} (datasets.load_dataset({str(folder)!r}, split='test'))")
    print("agreement: " + json.dumps(corpus.meta["agreement"], ensure_ascii=False))
    return 0


def cmd_bench(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.bench.paraphrase.benchmark import BenchmarkConfig, run_benchmark, write_outputs
    from kometrics.datasets_scripts.paraphrase.corpus import build_named

    model, label = (args.model, "none (--no-bert)") if args.no_bert else _resolve_model(args.model, args.data_dir)
    cfg = BenchmarkConfig(
        data=args.data, model=model, layers=args.layers, layer=args.layer, tokenize=args.tokenize, idf=args.idf,
        bert=not args.no_bert, limit=args.limit, seed=args.seed, n_boot=args.bootstrap, batch_size=args.batch_size,
        device=args.device, data_dir=args.data_dir, scale=tuple(args.scale) if args.scale else None,
        examples=args.examples, bleu_smooth=args.bleu_smooth, exclude_special_tokens=args.exclude_special_tokens,
        protocol=args.protocol, progress=not args.quiet)
    cfg.validate()
    corpus = build_named(cfg.data, cfg.data_dir, scale=cfg.scale)
    try:
        result = run_benchmark(cfg, corpus=corpus, model_label=label)
    except OSError as e:
        raise SystemExit(f"cannot load model {args.model!r} ({e}); pass a local path with --model, "
                         "--model tiny for an offline pipeline check, or --no-bert") from None
    print(result.report())
    print(f"\nsignature: {result.signature}")
    for note in result.notes:
        print(f"note: {note}")
    if args.out != "-":
        out = Path(args.out) if args.out else Path("paraphrase_bench") / corpus.name
        paths = write_outputs(result, out, plots=not args.no_plots)
        print(f"wrote {', '.join(p.name for p in paths)} to {out}")
    return 0


def register(commands: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    """Add ``kometrics paraphrase build`` and ``kometrics bench paraphrase``."""
    from kometrics.bench.paraphrase.ngram import TOKENIZATIONS
    from kometrics.datasets_scripts.paraphrase.corpus import NAMED_SOURCES
    from kometrics.datasets_scripts.paraphrase.ratings import DEGENERATE

    sources = ", ".join(["klue-sts", "korsts", *[k for k in NAMED_SOURCES if k not in ("klue-sts", "korsts-dev")]])

    para = commands.add_parser("paraphrase", help="graded paraphrase corpora (build them as datasets folders)")
    sub = para.add_subparsers(dest="paraphrase_command", required=True)
    b = sub.add_parser("build", help="write a corpus folder that datasets.load_dataset loads",
                       description="Build a graded paraphrase corpus: per-rater z-scores, human scores, agreement.")
    b.add_argument("source", help=f"{sources}, or a ratings file (.tsv/.csv: id, reference, candidate, "
                                  "one column per rater)")
    b.add_argument("--out", help="output folder (default: datasets_scripts/paraphrase/data/<name>)")
    b.add_argument("--data-dir", help="folder with klue/ and korsts/ (default: ../shared/data)")
    b.add_argument("--scale", type=float, nargs=2, metavar=("MIN", "MAX"),
                   help="rating scale (default 0 5 for KLUE-STS/KorSTS, 0 6 for a ratings file, as the paper)")
    b.add_argument("--ddof", type=int, default=0, help="ddof of the per-rater standard deviation (default 0)")
    b.add_argument("--degenerate", choices=DEGENERATE, default="drop",
                   help="raters with one rating or zero variance: drop their ratings (default), z=0, or error")
    b.set_defaults(func=cmd_build, allow_extra=False)

    p = bench.add_parser("paraphrase", help="the Korean BERTScore paper's experiment: metrics vs human scores",
                         description="Correlate BLEU, GLEU, TER, chrF and korbertscore P/R/F1 (every layer) with "
                                     "human paraphrase scores; print Tables 2-4, write CSV/JSON/PNG.")
    p.add_argument("--data", default="klue-sts", help=f"{sources}, a ratings file or a corpus folder "
                                                      "(default klue-sts)")
    p.add_argument("--model", default="klue/bert-base",
                   help="encoder for korbertscore: Hub id or local path (default klue/bert-base); 'tiny' = a tiny "
                        "random model built offline")
    p.add_argument("--layers", default="all", help="layers to sweep: all (default) or e.g. 0-12 or 4,8,12")
    p.add_argument("--layer", type=int, help="layer of Table 2's BERT rows (default: the model's documented "
                                             "layer, else 8/12 of its depth)")
    p.add_argument("--tokenize", choices=TOKENIZATIONS, default="ko-mecab",
                   help="tokenization of BLEU, GLEU and TER (default ko-mecab morphemes)")
    p.add_argument("--idf", choices=("off", "on", "both"), default="both", help="korbertscore idf weighting")
    p.add_argument("--no-bert", action="store_true", help="only the n-gram metrics")
    p.add_argument("--limit", type=int, help="a seeded random subset of this many pairs")
    p.add_argument("--seed", type=int, default=0, help="seed of --limit and the bootstrap (default 0)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--device", help="torch device (default: cuda if available, else cpu)")
    p.add_argument("--data-dir", help="folder with klue/ and korsts/ (default: ../shared/data)")
    p.add_argument("--scale", type=float, nargs=2, metavar=("MIN", "MAX"), help="scale of a ratings file")
    p.add_argument("--examples", type=int, default=10, help="pairs in Table 4 (default 10)")
    p.add_argument("--bleu-smooth", choices=("exp", "floor", "add-k", "none"), default="exp",
                   help="sentence-BLEU smoothing (default exp, sacrebleu's sentence_bleu default)")
    p.add_argument("--exclude-special-tokens", action="store_true",
                   help="BERTScore over the word pieces only (no [CLS]/[SEP]), as the paper")
    p.add_argument("--protocol", choices=("default", "paper"), default="default",
                   help="'paper': the Korean BERTScore paper's settings in one switch (unsmoothed sentence BLEU, word pieces only, "
                        "Table 2 at layer round(8/12 * depth)); recorded in the signature as protocol:paper")
    p.add_argument("--out", help="output folder (default paraphrase_bench/<corpus>; '-' writes nothing)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_bench, allow_extra=False)


if __name__ == "__main__":  # pragma: no cover
    from kometrics.cli import main

    sys.exit(main(["bench", "paraphrase", *sys.argv[1:]]))
