"""``kometrics merge generate|review|validate|predict`` (the MERE generator; zero-shot NLI predictions) and
``kometrics bench merge_sv_accuracy``.

The generator lives in ``kometrics.datasets_scripts.merge`` and is imported only when a command runs, so the
metric itself never needs kiwipiepy or transformers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _generate(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.datasets_scripts.merge import (
        CausalLMScorer,
        MereOptions,
        MLMFillMask,
        build_dataset,
        read_seeds,
    )

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    seeds = read_seeds(args.seeds, data_dir=args.data_dir, limit=args.limit)
    if args.lm:
        scorer, lm_name = CausalLMScorer(args.lm, device=args.device), args.lm
    else:
        lm_name = args.mlm or "klue/bert-base"
        scorer = MLMFillMask(lm_name, device=args.device)
    options = MereOptions(top_k=args.top_k, probability_floor=args.floor,
                          max_variants_per_target=args.max_per_target,
                          word_classes=tuple(args.word_classes))
    try:
        from tqdm.auto import tqdm

        progress = lambda xs: tqdm(xs, desc="MERE", file=sys.stderr)  # noqa: E731
    except ImportError:  # pragma: no cover
        progress = None
    stats = build_dataset(seeds, scorer, args.out, k=args.k, sample_seed=args.sample_seed, options=options,
                          lm_name=lm_name, seed_source=str(args.seeds), progress=progress)
    print(json.dumps(stats, ensure_ascii=False, indent=2))
    return 0


def _review(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.datasets_scripts.merge import export_review_csv

    n = export_review_csv(args.dataset, args.out, config=args.config)
    print(f"{n} variants written to {args.out}: fill the 'validated' column with yes/no, then run "
          f"kometrics merge validate --dataset {args.dataset} --review {args.out}")
    return 0


def _validate(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.datasets_scripts.merge import apply_review

    print(json.dumps(apply_review(args.dataset, args.review), indent=2))
    return 0


def _predict(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.cli.io import jsonable, read_jsonl
    from kometrics.merge_sv_accuracy import score
    from kometrics.models.zero_shot_nli import ZeroShotNLI

    path = Path(args.dataset) / "data" / f"{args.config}.jsonl"
    if not path.is_file():
        raise SystemExit(f"{path} does not exist: pass a folder written by 'kometrics merge generate'")
    rows = read_jsonl(path)
    if not rows:
        raise SystemExit(f"{path} has no rows")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    nli = ZeroShotNLI(args.lm, device=args.device)
    try:
        from tqdm.auto import tqdm

        progress = lambda xs: tqdm(xs, desc="zero-shot NLI", file=sys.stderr)  # noqa: E731
    except ImportError:  # pragma: no cover
        progress = None
    out = nli.predict([r["premise"] for r in rows], [r["hypothesis"] for r in rows], progress=progress)
    chosen = out["raw" if args.no_calibration else "calibrated"]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        for r, pred, raw, s in zip(rows, chosen, out["raw"], out["scores"]):
            f.write(json.dumps({"variant_id": r["variant_id"], "seed_id": r["seed_id"], "is_seed": r["is_seed"],
                                "word_class": r["word_class"], "label": r["label"], "prediction": pred,
                                "prediction_raw": raw, "label_scores": s}, ensure_ascii=False) + "\n")
    result = score(chosen, [r["label"] for r in rows], [r["seed_id"] for r in rows],
                   is_seed=[r["is_seed"] for r in rows], word_classes=[r["word_class"] for r in rows])
    print(json.dumps(jsonable({"predictions": "zero-shot NLI by " + args.lm
                               + (" (raw)" if args.no_calibration else " (contextual calibration)"),
                               "written": args.out, **result}), ensure_ascii=False, indent=2))
    return 0


def _bench(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.bench.merge_sv_accuracy import run_benchmark

    r = run_benchmark(args.rows, args.variants_per_seed, args.brute_rows, args.repeat)
    print(f"merge_sv_accuracy on {r['rows']:,} rows (seeds + variants, 4 word classes, 20 CTs):")
    print(f"  vectorised (numpy arrays in):   {r['vectorised_s']:.3f} s (best of {args.repeat})")
    print(f"  brute-force Python loop:        {r['brute_force_s_scaled']:.2f} s "
          f"(measured on {r['brute_rows']:,} rows, scaled linearly)")
    print(f"  speed-up:                       {r['speedup']:.0f}x")
    print(f"  vectorised from Python lists ({r['brute_rows']:,} rows): "
          f"{r['vectorised_from_python_lists_s_at_brute_rows']:.3f} s")
    return 0


def register(commands, bench) -> None:
    merge = commands.add_parser("merge", help="MERE variants of Korean NLI seeds (MERGE datasets)")
    sub = merge.add_subparsers(dest="merge_command", required=True)

    gen = sub.add_parser("generate", help="generate variants and write a dataset folder (jsonl + card)")
    gen.add_argument("--seeds", required=True,
                     help="'klue' (KLUE-NLI dev), 'kornli' (xnli.dev.ko.tsv) or a jsonl/csv/tsv file with "
                          "premise, hypothesis, label")
    source = gen.add_mutually_exclusive_group()
    source.add_argument("--mlm", help="masked LM proposing the replacements (Hub id or path; default klue/bert-base)")
    source.add_argument("--lm", help="causal LM proposing the replacements instead (Hub id or path, e.g. the folder of "
                                     "`kometrics models prepare gemma-3-270m`); P(r) > P(o) on whole sentences")
    gen.add_argument("--out", required=True, help="output dataset folder")
    gen.add_argument("--data-dir", help="folder with klue/ and kornli/ (default ../shared/data)")
    gen.add_argument("--limit", type=int, help="at most this many seeds")
    gen.add_argument("--k", type=int, default=5, help="variants per seed in the 'var' config (default 5)")
    gen.add_argument("--sample-seed", type=int, default=0, help="seed of the 'var' sampling (default 0)")
    gen.add_argument("--top-k", type=int, default=30, help="LM candidates per masked sentence (default 30)")
    gen.add_argument("--floor", type=float, default=1e-3, help="probability floor for P(r) (default 0.001)")
    gen.add_argument("--max-per-target", type=int, default=None, help="keep at most this many r per word")
    gen.add_argument("--word-classes", nargs="+", default=["NOUN", "VERB", "ADJ", "ADV"],
                     choices=["NOUN", "VERB", "ADJ", "ADV"])
    gen.add_argument("--device", help="torch device (default: cuda if available)")
    gen.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    gen.set_defaults(func=_generate, allow_extra=False)

    rev = sub.add_parser("review", help="export a CSV for manual review (validated column to fill)")
    rev.add_argument("--dataset", required=True, help="a folder written by 'merge generate'")
    rev.add_argument("--out", required=True, help="CSV file to write")
    rev.add_argument("--config", default="var", choices=["var", "all"])
    rev.set_defaults(func=_review, allow_extra=False)

    val = sub.add_parser("validate", help="read a filled review CSV back (validated flag + config)")
    val.add_argument("--dataset", required=True)
    val.add_argument("--review", required=True, help="the CSV with the validated column filled (yes/no)")
    val.set_defaults(func=_validate, allow_extra=False)

    pre = sub.add_parser("predict", help="zero-shot NLI predictions for a dataset folder by a causal LM (it scores "
                                         "the label words 함의/중립/모순), scored with merge_sv_accuracy")
    pre.add_argument("--dataset", required=True, help="a folder written by 'merge generate'")
    pre.add_argument("--config", default="all", choices=["all", "var", "validated"])
    pre.add_argument("--lm", required=True, help="causal LM (Hub id or path, e.g. the Gemma-3-270M folder)")
    pre.add_argument("--out", required=True, help="jsonl to write: one prediction per row, with its label scores")
    pre.add_argument("--no-calibration", action="store_true",
                     help="argmax of the raw label scores (default: contextual calibration, Zhao et al. 2021)")
    pre.add_argument("--device", help="torch device (default: cuda if available)")
    pre.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    pre.set_defaults(func=_predict, allow_extra=False)

    b = bench.add_parser("merge_sv_accuracy", help="vectorised SV accuracy vs a brute-force loop")
    b.add_argument("--rows", type=int, default=1_000_000)
    b.add_argument("--variants-per-seed", type=int, default=10)
    b.add_argument("--brute-rows", type=int, default=100_000)
    b.add_argument("--repeat", type=int, default=3)
    b.set_defaults(func=_bench, allow_extra=False)
