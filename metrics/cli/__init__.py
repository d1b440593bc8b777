"""The ``kometrics`` command.

``kometrics score <metric> --predictions FILE [--references FILE] [--input NAME=FILE] [--option value ...]``
works for every metric folder: it loads the folder with ``evaluate.load`` and prints the result as JSON.
``kometrics demo`` runs every metric on real Korean data. Metric packages add their own sub-commands
(``kometrics merge generate``, ``kometrics lmre build``, ``kometrics bench ...``) through a module
``kometrics.cli.<name>`` with ``register(commands, bench)``, found here by name. Files are read and results
written by :mod:`kometrics.cli.io`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from kometrics import METRICS
from kometrics.cli.io import coerce, jsonable, read_column

__all__ = ["main", "read_column", "metric_folder", "load_metric"]


def metric_folder(name: str) -> Path:
    """The folder of metric ``name`` inside the installed package (what ``evaluate.load`` takes)."""
    if name not in METRICS:
        raise SystemExit(f"unknown metric {name!r}; choose one of {', '.join(METRICS)}")
    folder = Path(__file__).resolve().parent.parent / name
    if not (folder / f"{name}.py").is_file():
        raise SystemExit(f"metric {name!r} is not available in this installation ({folder})")
    return folder


def load_metric(name: str, **kwargs: Any):
    import evaluate

    return evaluate.load(str(metric_folder(name)), **kwargs)


def _parse_options(extra: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    i = 0
    while i < len(extra):
        tok = extra[i]
        if not tok.startswith("--"):
            raise SystemExit(f"unexpected argument {tok!r}: options are written --name value")
        key = tok[2:].replace("-", "_")
        if "=" in key:
            key, raw = key.split("=", 1)
            i += 1
        elif i + 1 < len(extra) and not extra[i + 1].startswith("--"):
            raw = extra[i + 1]
            i += 2
        else:
            raw = "true"
            i += 1
        try:
            opts[key] = json.loads(raw)
        except json.JSONDecodeError:
            opts[key] = raw
    return opts


def cmd_score(args: argparse.Namespace, extra: list[str]) -> int:
    metric = load_metric(args.metric)
    features = metric.features
    if isinstance(features, list):  # several accepted schemas: take the first that fits the references
        features = features[0]
    inputs: dict[str, Any] = {"predictions": read_column(args.predictions, "predictions")}
    if args.references:
        inputs["references"] = read_column(args.references, "references")
    for spec in args.input or []:
        name, _, file = spec.partition("=")
        if not file:
            raise SystemExit(f"--input takes NAME=FILE, got {spec!r}")
        inputs[name] = read_column(file, name)
    schemas = metric.features if isinstance(metric.features, list) else [metric.features]
    for name in list(inputs):
        schema = next((s for s in schemas if name in s and (name != "references" or _fits(inputs[name], s[name]))),
                      schemas[0])
        if name not in schema:
            raise SystemExit(f"{args.metric} takes no input {name!r}; it takes {', '.join(schema)}")
        inputs[name] = [coerce(v, schema[name], f"{name}[{i}]") for i, v in enumerate(inputs[name])]
    options = _parse_options(extra)
    result = metric.compute(**inputs, **options)
    json.dump(jsonable(result), sys.stdout, ensure_ascii=False, indent=2 if args.pretty else None,
              allow_nan=True)
    sys.stdout.write("\n")
    return 0


def _fits(values: list[Any], feature: Any) -> bool:
    from datasets import Sequence

    is_seq = isinstance(feature, (Sequence, list))
    return all(isinstance(v, list) == is_seq for v in values)


def cmd_demo(args: argparse.Namespace, extra: list[str]) -> int:
    from kometrics.demo import run_demo

    return run_demo(data_dir=args.data_dir, limit=args.limit, offline=args.offline,
                    models={k: v for k, v in (("bert", args.model), ("gpt2", args.lm), ("mlm", args.mlm)) if v},
                    only=args.only, real_models=not args.tiny)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse._SubParsersAction]]:
    parser = argparse.ArgumentParser(prog="kometrics", description="Korean evaluation metrics")
    commands = parser.add_subparsers(dest="command", required=True)

    score = commands.add_parser("score", help="score files with one metric and print JSON")
    score.add_argument("metric", choices=METRICS)
    score.add_argument("--predictions", required=True, help="jsonl, tsv or text file (one item a line)")
    score.add_argument("--references", help="jsonl, tsv (several cells: several references) or text")
    score.add_argument("--input", action="append", metavar="NAME=FILE",
                       help="another input column of the metric, e.g. seed_ids=ids.txt")
    score.add_argument("--pretty", action="store_true", help="indent the JSON")
    score.set_defaults(func=cmd_score, allow_extra=True)

    demo = commands.add_parser("demo", help="run every metric on real Korean data and print a report")
    demo.add_argument("--data-dir", help="folder with klue/, korsts/, kornli/ (default: ../shared/data)")
    demo.add_argument("--limit", type=int, default=None, help="at most this many items per metric")
    demo.add_argument("--model", help="encoder for korbertscore (default: the documented Hub model)")
    demo.add_argument("--lm", help="causal LM for perplexity (default: the documented Hub model)")
    demo.add_argument("--mlm", help="masked LM for pseudo-perplexity and MERE (default: klue/bert-base)")
    demo.add_argument("--offline", action="store_true", help="do not try the Hub: use the real offline model "
                      "(Gemma-3-270M, gemma extra) where one of the kind exists, else tiny random models")
    demo.add_argument("--tiny", action="store_true", help="use tiny random stand-ins even where a real offline "
                      "model exists (a quick check that every pipeline runs)")
    demo.add_argument("--only", action="append", choices=[*METRICS, "paraphrase"],
                      help="run only these sections")
    demo.set_defaults(func=cmd_demo, allow_extra=False)

    bench = commands.add_parser("bench", help="benchmarks and experiments").add_subparsers(
        dest="bench", required=True)
    groups = {"commands": commands, "bench": bench}
    plugins = [f"{__package__}.{name}" for name in (*METRICS, "paraphrase", "models")] + ["kometrics.publish"]
    for module_name in plugins:
        _register_plugin(module_name, commands, bench)
    return parser, groups


def _register_plugin(module_name: str, commands, bench) -> None:
    """Import ``module_name`` and let it add its sub-commands; a missing module is skipped, a broken one is
    reported on stderr (one broken plugin must not take every other command down)."""
    try:
        mod = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name and module_name.startswith(e.name):
            return  # not part of this installation
        print(f"kometrics: could not load the commands of {module_name}: {e!r}", file=sys.stderr)
        return
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"kometrics: could not load the commands of {module_name}: {e!r}", file=sys.stderr)
        return
    if hasattr(mod, "register"):
        mod.register(commands, bench)


def main(argv: list[str] | None = None) -> int:
    parser, _ = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "allow_extra", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return int(args.func(args, extra) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
