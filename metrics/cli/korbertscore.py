"""``kometrics korbertscore {layers,baseline,stream,plot}`` and ``kometrics bench korbertscore[-layers]``.

``layers`` is the paraphrase experiment (:mod:`kometrics.bench.paraphrase`) with the n-gram metrics off: its
Table 3, computed once, by the same code."""

from __future__ import annotations

import argparse
import json
import sys

__all__ = ["register"]


def _add_model(p: argparse.ArgumentParser, required: bool = False) -> None:
    p.add_argument("--model", "--model-type", dest="model", required=required,
                   help="Hub id or local folder (default klue/bert-base)")
    p.add_argument("--device", default=None)
    p.add_argument("--batch-size", type=int, default=64)


def cmd_layers(args: argparse.Namespace, extra: list[str]) -> int:
    """Table 3 of the paraphrase experiment alone: korbertscore P/R/F1 at every layer against the human scores,
    the n-gram metrics off."""
    from kometrics.bench.paraphrase.benchmark import BenchmarkConfig, format_table3, run_benchmark
    from kometrics.bench.paraphrase.plotting import plot_layers
    from kometrics.korbertscore.embedding import DEFAULT_MODEL

    cfg = BenchmarkConfig(data=args.source, model=args.model or DEFAULT_MODEL, ngram=False, idf="on" if args.idf
                          else "off", limit=args.limit, seed=args.seed, n_boot=args.bootstrap,
                          batch_size=args.batch_size, device=args.device, data_dir=args.data_dir, examples=0,
                          progress=False)
    result = run_benchmark(cfg)
    best = result.best_layer["idf" if args.idf else "no_idf"]
    print(f"KorBERTScore layer sweep: {cfg.model} on {result.corpus.get('name')} ({len(result.ids)} pairs, "
          f"idf={args.idf})")
    print(format_table3(result))
    print(f"\nbest layer (F1 Pearson): {best} over {len(result.ids)} pairs\nsignature: {result.signature}")
    if args.png:
        plot_layers(result, args.png)
        print(f"plot: {args.png}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result.to_json(), f, ensure_ascii=False, indent=1)
    return 0


def cmd_baseline(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.korbertscore.baseline import build_baseline
    from kometrics.korbertscore.embedding import DEFAULT_MODEL

    if args.text:
        from kometrics.cli.io import read_lines

        texts = [line.strip() for line in read_lines(args.text, "--text") if line.strip()]
        where = args.text
    elif args.source == "korsts-train":
        from kometrics.datasets_scripts.readers import read_korsts

        texts = [s for row in read_korsts("train", args.data_dir) for s in (row["sentence1"], row["sentence2"])]
        where = "KorSTS train"
    else:
        from kometrics.datasets_scripts.readers import iter_korean_text

        texts = list(iter_korean_text(args.data_dir))
        where = "KLUE dev sets and KorSTS train"
    table = build_baseline(texts, args.model or DEFAULT_MODEL, args.output, n_pairs=args.pairs, seed=args.seed,
                           batch_size=args.batch_size, device=args.device)
    print(f"wrote {args.output}: {len(table)} layers from {args.pairs} random pairs of {len(texts)} sentences "
          f"({where}, seed {args.seed})")
    return 0


def cmd_stream(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.runners.korbertscore import stream_score

    idf: object = False
    if args.idf_file:
        from kometrics.cli.io import read_lines

        idf = [line for line in read_lines(args.idf_file, "--idf-file") if line.strip()]
    n = stream_score(args.input, args.output, prediction_key=args.prediction_key,
                     reference_key=args.reference_key, chunk_size=args.chunk_size, model_type=args.model,
                     num_layers=args.num_layers, idf=idf, batch_size=args.batch_size, device=args.device,
                     rescale_with_baseline=args.baseline is not None, baseline_path=args.baseline,
                     long_text=args.long_text, resume=not args.no_resume)
    print(f"scored {n} new records into {args.output}", file=sys.stderr)
    return 0


def cmd_plot(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.korbertscore.plotting import plot_alignment

    plot_alignment(args.candidate, args.reference, model_type=args.model, num_layers=args.num_layers,
                   fname=args.output)
    print(f"saved {args.output}")
    return 0


def cmd_bench(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.bench.korbertscore import main

    return main(args)


def _add_layers_arguments(p: argparse.ArgumentParser) -> None:
    _add_model(p)
    p.add_argument("--source", default="klue-sts",
                   help="klue-sts, korsts-dev, korsts-train, a corpus folder, a ratings file, or a .jsonl/.tsv file "
                        "with sentence1, sentence2, score (see `kometrics bench paraphrase --data`)")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--limit", type=int, default=None, help="a seeded random subset of this many pairs")
    p.add_argument("--seed", type=int, default=0, help="seed of --limit and the bootstrap (default 0)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--idf", action="store_true")
    p.add_argument("--png", default=None, help="save the per-layer plot here")
    p.add_argument("--json", default=None, help="save the results (tables, config, signature) as JSON here")
    p.set_defaults(func=cmd_layers)


def register(commands, bench) -> None:
    top = commands.add_parser("korbertscore", help="KorBERTScore tools: layer sweep, baselines, streaming, plots")
    sub = top.add_subparsers(dest="korbertscore_command", required=True)

    layers = sub.add_parser("layers", help="correlation with human scores at every layer (Table 3 of "
                                           "`kometrics bench paraphrase`, n-gram metrics off)")
    _add_layers_arguments(layers)

    base = sub.add_parser("baseline", help="build a bert_score-format baseline file from Korean text")
    _add_model(base)
    base.add_argument("--output", required=True)
    base.add_argument("--text", default=None, help="text file, one sentence a line (default: --source)")
    base.add_argument("--source", choices=["all", "korsts-train"], default="all",
                      help="sentences from ../shared/data: all = KLUE dev sets + KorSTS train (default), "
                           "korsts-train = KorSTS train only")
    base.add_argument("--data-dir", default=None)
    base.add_argument("--pairs", type=int, default=10000)
    base.add_argument("--seed", type=int, default=0)
    base.set_defaults(func=cmd_baseline)

    stream = sub.add_parser("stream", help="score jsonl -> jsonl, resumable; shards under accelerate launch")
    _add_model(stream)
    stream.add_argument("--input", required=True)
    stream.add_argument("--output", required=True)
    stream.add_argument("--num-layers", type=int, default=None)
    stream.add_argument("--prediction-key", default="prediction")
    stream.add_argument("--reference-key", default="reference")
    stream.add_argument("--chunk-size", type=int, default=1000)
    stream.add_argument("--idf-file", default=None, help="sentences (one a line) to compute idf from")
    stream.add_argument("--baseline", default=None, help="baseline file: rescale with it")
    stream.add_argument("--long-text", default="window", choices=["window", "truncate", "error"])
    stream.add_argument("--no-resume", action="store_true", help="start over instead of continuing the output")
    stream.set_defaults(func=cmd_stream)

    plot = sub.add_parser("plot", help="alignment heatmap of one pair")
    _add_model(plot)
    plot.add_argument("--candidate", required=True)
    plot.add_argument("--reference", required=True)
    plot.add_argument("--num-layers", type=int, default=None)
    plot.add_argument("--output", required=True)
    plot.set_defaults(func=cmd_plot)

    b = bench.add_parser("korbertscore", help="throughput vs bert_score on KorSTS with a BERT-base-sized model")
    b.add_argument("--limit", type=int, default=2000, help="pairs (default 2000)")
    b.add_argument("--num-layers", type=int, default=8)
    b.add_argument("--batch-size", type=int, default=64)
    b.add_argument("--model", default=None, help="model folder (default: a random BERT-base built once)")
    b.add_argument("--data-dir", default=None)
    b.add_argument("--cache-dir", default=None)
    b.add_argument("--device", default="cpu")
    b.add_argument("--repeats", type=int, default=1, help="alternating runs per system; the fastest is kept")
    b.set_defaults(func=cmd_bench)

    bl = bench.add_parser("korbertscore-layers", help="same as `kometrics korbertscore layers`")
    _add_layers_arguments(bl)
