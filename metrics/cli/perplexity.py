"""Sub-commands: ``kometrics perplexity stream|surprisal`` and ``kometrics bench perplexity``."""

from __future__ import annotations

import argparse
import json
import sys


def _stream(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.runners.perplexity import score_jsonl

    summary = score_jsonl(args.input, args.output, args.model_id, field=args.field, chunk_size=args.chunk_size,
                          resume=not args.no_resume, batch_size=args.batch_size, mode=args.mode,
                          pll_variant=args.pll_variant, max_length=args.max_length, stride=args.stride,
                          device=args.device, dtype=args.dtype, empty=args.empty,
                          add_start_token=not args.no_start_token)
    from kometrics.runners.perplexity import _state

    if _state().is_main_process:
        json.dump(summary, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    return 0


def _surprisal(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.perplexity.api import token_surprisals

    for piece, bits in token_surprisals(args.text, args.model_id, mode=args.mode):
        print(f"{bits:8.3f}  {piece!r}")
    return 0


def _bench(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.bench.perplexity import main

    return main(args=args)


def register(commands, bench) -> None:
    from kometrics.bench.perplexity import build_parser

    top = commands.add_parser("perplexity", help="perplexity: stream a jsonl corpus, show token surprisals")
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
    b = bench.add_parser("perplexity", help="throughput and peak memory against evaluate's perplexity algorithm")
    build_parser(b)
    b.set_defaults(func=_bench, allow_extra=False)
