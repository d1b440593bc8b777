"""Sub-commands: ``kometrics perplexity stream|surprisal|ngram`` and ``kometrics bench perplexity|generations``."""

from __future__ import annotations

import argparse
import json
import sys


def _stream(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.runners.perplexity import score_jsonl
    from kometrics.runners.stream import processes

    summary = score_jsonl(args.input, args.output, args.model_id, field=args.field, chunk_size=args.chunk_size,
                          resume=not args.no_resume, batch_size=args.batch_size, mode=args.mode,
                          pll_variant=args.pll_variant, max_length=args.max_length, stride=args.stride,
                          device=args.device, dtype=args.dtype, empty=args.empty,
                          add_start_token=not args.no_start_token)
    if processes().is_main:
        json.dump(summary, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    return 0


def _surprisal(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.perplexity.api import token_surprisals

    for piece, bits in token_surprisals(args.text, args.model_id, mode=args.mode):
        print(f"{bits:8.3f}  {piece!r}")
    return 0


def _ngram(args: argparse.Namespace, extra: list[str]) -> int:
    from pathlib import Path

    from kometrics.cli import read_column
    from kometrics.models.ngram import train_ngram

    texts = read_column(args.data, "text")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise SystemExit(f"{args.data}: item {i} is not one text ({t!r})")
    if args.limit is not None:
        texts = texts[: args.limit]
    discounts = None if args.discount is None else [args.discount] * args.order
    meta = train_ngram(texts, args.out, args.order, args.unit, smoothing=args.smoothing, discounts=discounts,
                       source=Path(args.data).name)
    json.dump(meta, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0


def _generations(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.bench.generations import main

    return main(args=args)


def _bench_real(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.bench.perplexity_real import main

    return main(args=args)


def _bench(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.bench.perplexity import main

    return main(args=args)


def register(commands, bench) -> None:
    from kometrics.bench.generations import build_parser as build_generations_parser
    from kometrics.bench.perplexity import build_parser
    from kometrics.bench.perplexity_real import build_parser as build_real_parser

    top = commands.add_parser("perplexity", help="perplexity: stream a jsonl corpus, show token surprisals, train n-gram LMs")
    sub = top.add_subparsers(dest="perplexity_command", required=True)
    s = sub.add_parser("stream", help="score a jsonl corpus into a jsonl file (resumable; shards under "
                                      "accelerate launch)")
    s.add_argument("--input", required=True, help="jsonl: one string or one object with --field per line")
    s.add_argument("--output", required=True, help="jsonl written one record per input line")
    s.add_argument("--model-id", required=True, help="Hub id or local path (e.g. skt/kogpt2-base-v2)")
    s.add_argument("--field", default="text")
    s.add_argument("--mode", choices=["causal", "pseudo"], default="causal")
    s.add_argument("--pll-variant", choices=["original", "word_l2r"], default="original")
    s.add_argument("--batch-size", type=int, default=16)
    s.add_argument("--chunk-size", type=int, default=1024, help="texts read and written at a time")
    s.add_argument("--max-length", type=int, default=None)
    s.add_argument("--stride", type=int, default=None)
    s.add_argument("--device", default=None)
    s.add_argument("--dtype", default=None)
    s.add_argument("--empty", choices=["error", "nan"], default="error")
    s.add_argument("--no-start-token", action="store_true", help="do not prepend BOS (first token unscored)")
    s.add_argument("--no-resume", action="store_true", help="start over instead of continuing the output")
    s.set_defaults(func=_stream, allow_extra=False)
    t = sub.add_parser("surprisal", help="print each token's surprisal (bits) for one text")
    t.add_argument("text")
    t.add_argument("--model-id", required=True)
    t.add_argument("--mode", choices=["causal", "pseudo"], default="causal")
    t.set_defaults(func=_surprisal, allow_extra=False)
    n = sub.add_parser("ngram", help="train an interpolated Kneser-Ney n-gram LM (ARPA + metadata) on Korean text")
    n.add_argument("--data", required=True, help="training text: one sentence a line (or jsonl/tsv, column 'text')")
    n.add_argument("--out", required=True, help="folder for model.arpa and its metadata model.json")
    n.add_argument("--order", type=int, required=True, choices=range(1, 7), metavar="N",
                   help="n-gram order, 1-6 (kenlm as built by pip loads up to 6)")
    n.add_argument("--unit", choices=["char", "morpheme", "eojeol"], required=True,
                   help="char: NFC code points (space = <sp>); morpheme: kiwipiepy form/TAG; eojeol: words")
    n.add_argument("--smoothing", choices=["modified-kneser-ney", "kneser-ney"], default="modified-kneser-ney",
                   help="interpolated Kneser-Ney with three discounts per order (default) or one")
    n.add_argument("--discount", type=float, default=None,
                   help="one fixed discount for every order instead of the counts-of-counts estimates")
    n.add_argument("--limit", type=int, default=None, help="train on the first N sentences only")
    n.set_defaults(func=_ngram, allow_extra=False)
    g = bench.add_parser("generations", help="model generations in bits/char: character unigram, character and morpheme "
                                             "n-grams and a causal LM on the same held-apart text, in bits/char")
    build_generations_parser(g)
    g.set_defaults(func=_generations, allow_extra=False)
    b = bench.add_parser("perplexity", help="throughput and peak memory against evaluate's perplexity algorithm")
    build_parser(b)
    b.set_defaults(func=_bench, allow_extra=False)
    r = bench.add_parser("perplexity-real", help="a real causal LM (default: the prepared Gemma-3-270M) on KLUE "
                                                  "sentences: original vs shuffled, bits per character, exactness "
                                                  "against a hand token loop and evaluate's algorithm")
    build_real_parser(r)
    r.set_defaults(func=_bench_real, allow_extra=False)
