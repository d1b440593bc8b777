"""``kometrics lmre ...`` sub-commands and ``kometrics bench lmre``.

- ``kometrics lmre build --utterances FILE --pool FILE --out DIR --llm openai --model M [--base-url URL]``
  builds the reference folder (``--llm stand-in --corpus DIR`` uses the offline stand-in of the demo;
  ``--llm local --model PATH_OR_ID`` a local causal LM with constrained decoding; ``--llm
  python:package.module:function`` any callable ``(messages, temperature) -> str``).
- ``kometrics lmre corpus --out DIR`` builds the KLUE-DP phrase-break test bed.
- ``kometrics lmre score --predictions FILE --references-dir DIR [--references-dir DIR2 ...]`` scores
  annotations against one reference folder or the union of several (the LMRE paper's "combined" setting), looking
  each utterance up by its words.
- ``kometrics lmre explain ANNOTATION --reference REF [--reference REF ...]`` explains one decision.
- ``kometrics bench lmre`` times the vectorised scorer against plain loops.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from typing import Any

__all__ = ["register"]


def _add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--similarity", choices=["f1", "em"], default="f1")
    p.add_argument("--theta", type=float, default=0.5, help="accepted iff best score > theta (default 0.5)")
    p.add_argument("--break-types", choices=["binary", "typed"], default="binary")


def _make_llm(args: argparse.Namespace) -> Any:
    from kometrics.datasets_scripts.phrase_break.builder import CallableLLM, OpenAIChatLLM

    if args.llm == "openai":
        if not args.model:
            raise SystemExit("--llm openai needs --model")
        return OpenAIChatLLM(args.model, base_url=args.base_url, api_key_env=args.api_key_env or None,
                             timeout=args.timeout)
    if args.llm == "local":
        if not args.model:
            raise SystemExit("--llm local needs --model (a causal LM: Hub id or folder)")
        from kometrics.datasets_scripts.phrase_break.local_llm import LocalCausalLM

        return LocalCausalLM(args.model, device=args.device, seed=args.seed)
    if args.llm == "stand-in":
        if not args.corpus:
            raise SystemExit("--llm stand-in needs --corpus DIR (a folder built by `kometrics lmre corpus`)")
        from kometrics.datasets_scripts.phrase_break.standin import StandInLLM

        return StandInLLM.from_corpus(args.corpus, seed=args.seed)
    if args.llm.startswith("python:"):
        target = args.llm[len("python:"):]
        module, _, name = target.partition(":")
        if not module or not name:
            raise SystemExit(f"--llm python:MODULE:FUNCTION, got {args.llm!r}")
        return CallableLLM(getattr(importlib.import_module(module), name), name=f"callable:{target}")
    raise SystemExit(f"--llm must be openai, local, stand-in or python:MODULE:FUNCTION, got {args.llm!r}")


def cmd_build(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.datasets_scripts.phrase_break.builder import (
        BuildConfig,
        BuildError,
        build_references,
        read_pool,
        read_utterances,
    )

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    cfg = BuildConfig(n_iter=args.n_iter, pool_size=args.pool_size or None, few_shot_size=args.few_shot_size,
                      batch_size=args.batch_size,
                      min_count=args.min_count, temperature=args.temperature, seed=args.seed,
                      concurrency=args.concurrency, max_retries=args.max_retries, allow_failures=args.allow_failures)
    try:
        info = build_references(read_utterances(args.utterances), read_pool(args.pool), args.out, _make_llm(args),
                                config=cfg, cache_dir=args.cache, progress=not args.quiet)
    except BuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    json.dump(info, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0


def cmd_corpus(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.datasets_scripts.phrase_break.build import run

    return run(args)


def cmd_score(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.cli.io import read_column
    from kometrics.lmre.scoring import score

    predictions = read_column(args.predictions, "annotation", "--predictions")
    result = score(predictions, similarity=args.similarity, theta=args.theta, break_types=args.break_types,
                   reference_folders=args.references_dir)
    if args.summary:
        result = {k: v for k, v in result.items() if not isinstance(v, list)}
    json.dump(result, sys.stdout, ensure_ascii=False, indent=2 if args.pretty else None)
    sys.stdout.write("\n")
    return 0


def cmd_gap(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.cli.io import read_column
    from kometrics.lmre import acceptance_gap, format_gap_table, score

    predictions = read_column(args.predictions, "annotation")
    human = read_column(args.human, "human_score", "--human")
    single = read_column(args.single_references, "reference", "--single-references")
    for name, column in (("--human", human), ("--single-references", single)):
        if len(column) != len(predictions):
            print(f"error: {name} has {len(column)} lines but --predictions has {len(predictions)}", file=sys.stderr)
            return 2
    try:
        human = [float(h) for h in human]
    except (TypeError, ValueError) as e:
        print(f"error: --human: {e}", file=sys.stderr)
        return 2
    opts = {"similarity": args.similarity, "theta": args.theta, "break_types": args.break_types}
    accepted = {"single": score(predictions, single, **opts)["accepted"],
                "lmre": score(predictions, reference_folders=args.references_dir, **opts)["accepted"]}
    gap = acceptance_gap(human, accepted, args.acceptable_from)
    if args.json:
        json.dump(gap, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_gap_table(gap))
    return 0


def cmd_explain(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.lmre.scoring import explain

    result = explain(args.annotation, args.reference, similarity=args.similarity, theta=args.theta,
                     break_types=args.break_types)
    print(result["why"])
    for row in result["references"]:
        print(f"  #{row['index']} {row['score']:.3f}  {row['annotation']}")
    return 0 if result["accepted"] else 1


def cmd_bench(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.bench.lmre import run_benchmark

    run_benchmark(n=args.n, refs=args.refs, naive_n=args.naive_n, seed=args.seed, similarity=args.similarity,
                  break_types=args.break_types)
    return 0


def register(commands: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    from kometrics.datasets_scripts.phrase_break.builder import BuildConfig

    lmre = commands.add_parser("lmre", help="LMRE: phrase-break references, corpus, scoring")
    sub = lmre.add_subparsers(dest="lmre_command", required=True)

    b = sub.add_parser("build", help="build a multi-reference lookup with an LLM")
    b.add_argument("--utterances", required=True, help="jsonl (id, words|text) or text file, one utterance a line")
    b.add_argument("--pool", required=True, help="few-shot pool: jsonl with 'annotation' or text, one a line")
    b.add_argument("--out", required=True, help="output folder (README.md, references.jsonl, build_info.json)")
    b.add_argument("--llm", required=True, help="openai | local | stand-in | python:MODULE:FUNCTION")
    b.add_argument("--model", help="model name for --llm openai; causal LM (Hub id or folder) for --llm local")
    b.add_argument("--device", help="torch device for --llm local (default: cuda if available)")
    b.add_argument("--base-url", help="OpenAI-compatible endpoint (default: api.openai.com)")
    b.add_argument("--api-key-env", default="OPENAI_API_KEY",
                   help="environment variable holding the API key (never logged); '' for none")
    b.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    b.add_argument("--corpus", help="corpus folder for --llm stand-in")
    defaults = BuildConfig()
    b.add_argument("--n-iter", type=int, default=defaults.n_iter,
                   help=f"iterations N_iter (default {defaults.n_iter}, the LMRE paper's best setting)")
    b.add_argument("--pool-size", type=int, default=defaults.pool_size,
                   help=f"few-shot pool |P_FS| drawn once from --pool when it has more (default {defaults.pool_size}; "
                        "0: the whole pool)")
    b.add_argument("--few-shot-size", type=int, default=None, help="default: half the few-shot pool")
    b.add_argument("--batch-size", type=int, default=32)
    b.add_argument("--min-count", type=int, default=None, help="default: ceil(n_iter / 10)")
    b.add_argument("--temperature", type=float, default=0.0)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--concurrency", type=int, default=4)
    b.add_argument("--max-retries", type=int, default=5)
    b.add_argument("--cache", help="response cache folder (default OUT/cache); reuse it to resume")
    b.add_argument("--allow-failures", action="store_true", help="write the folder even if requests failed")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    b.add_argument("--verbose", action="store_true", help="log retries and failures")
    b.set_defaults(func=cmd_build)

    c = sub.add_parser("corpus", help="build the KLUE-DP phrase-break test bed")
    from kometrics.datasets_scripts.phrase_break.build import add_arguments

    add_arguments(c)
    c.set_defaults(func=cmd_corpus)

    s = sub.add_parser("score", help="score annotations against a reference folder")
    s.add_argument("--predictions", required=True, help="jsonl (key 'annotation') or text, one annotation a line")
    s.add_argument("--references-dir", required=True, action="append",
                   help="folder written by `kometrics lmre build`; repeat to combine several (their union)")
    _add_options(s)
    s.add_argument("--summary", action="store_true", help="only the corpus-level numbers")
    s.add_argument("--pretty", action="store_true")
    s.set_defaults(func=cmd_score)

    g = sub.add_parser("gap", help="acceptance rate per human-score group: single reference vs LMRE vs humans")
    g.add_argument("--predictions", required=True, help="annotations to judge (jsonl key 'annotation', or text)")
    g.add_argument("--human", required=True, help="one human score per annotation (e.g. 1-5; jsonl key 'human_score')")
    g.add_argument("--single-references", required=True, help="the single gold reference of each annotation")
    g.add_argument("--references-dir", required=True, action="append",
                   help="LMRE reference folder; repeat to combine several")
    g.add_argument("--acceptable-from", type=float, required=True,
                   help="human score from which an annotation is acceptable (e.g. 3 on a 1-5 scale)")
    _add_options(g)
    g.add_argument("--json", action="store_true", help="print the result as JSON instead of a table")
    g.set_defaults(func=cmd_gap)

    e = sub.add_parser("explain", help="why one annotation is accepted or rejected")
    e.add_argument("annotation")
    e.add_argument("--reference", action="append", required=True, help="a reference annotation (repeat)")
    _add_options(e)
    e.set_defaults(func=cmd_explain)

    bl = bench.add_parser("lmre", help="vectorised LMRE vs plain loops")
    from kometrics.bench.lmre import add_arguments as bench_arguments

    bench_arguments(bl)
    bl.set_defaults(func=cmd_bench)
