"""The ``kometrics`` command.

``kometrics score <metric> --predictions FILE [--references FILE] [--input NAME=FILE] [--option value ...]``
works for every metric folder: it loads the folder with ``evaluate.load`` and prints the result as JSON.
``kometrics demo`` runs every metric on real Korean data. Metric packages add their own sub-commands
(``kometrics merge generate``, ``kometrics lmre build``, ``kometrics bench ...``) through a ``cli.py`` module
with ``register(commands, bench)``, found here by name.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import math
import sys
from pathlib import Path
from typing import Any

from kometrics import METRICS

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


def _coerce(value: Any, feature: Any, where: str) -> Any:
    from datasets import Sequence, Value

    if isinstance(feature, (Sequence, list)):
        inner = feature.feature if isinstance(feature, Sequence) else feature[0]
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise SystemExit(f"{where}: expected a list, got {value!r}")
        return [_coerce(v, inner, where) for v in value]
    if isinstance(feature, Value):
        dtype = feature.dtype
        if dtype.startswith("float"):
            try:
                out = float(value)
            except (TypeError, ValueError):
                raise SystemExit(f"{where}: {value!r} is not a number") from None
            return out
        if dtype.startswith("int"):
            try:
                return int(value)
            except (TypeError, ValueError):
                raise SystemExit(f"{where}: {value!r} is not an integer") from None
        if dtype == "bool":
            if isinstance(value, str):
                if value.lower() in ("1", "true", "yes"):
                    return True
                if value.lower() in ("0", "false", "no"):
                    return False
                raise SystemExit(f"{where}: {value!r} is not a boolean")
            return bool(value)
        if dtype == "string":
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return value


def read_column(path: str | Path, name: str) -> list[Any]:
    """Read one input column from a file.

    - ``.jsonl``: one JSON value per line; a line that is an object gives its ``name`` key (or the
      singular, e.g. ``prediction`` for ``predictions``).
    - ``.tsv``: one row per item; a row with several cells is a list (several references).
    - anything else: plain text, one item per line (blank lines are kept as empty strings).
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if path.suffix == ".jsonl":
        out = []
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{i + 1}: not valid JSON ({e.msg})") from None
            if isinstance(value, dict):
                for key in (name, name.rstrip("s"), "text"):
                    if key in value:
                        value = value[key]
                        break
                else:
                    raise SystemExit(f"{path}:{i + 1}: object has no {name!r} key")
            out.append(value)
        return out
    if path.suffix == ".tsv":
        rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
        return [row if len(row) > 1 else (row[0] if row else "") for row in rows]
    return lines


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


def _jsonable(obj: Any) -> Any:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if np is not None and isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if np is not None and isinstance(obj, np.generic):
        return _jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else obj
    return obj


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
        inputs[name] = [_coerce(v, schema[name], f"{name}[{i}]") for i, v in enumerate(inputs[name])]
    options = _parse_options(extra)
    result = metric.compute(**inputs, **options)
    json.dump(_jsonable(result), sys.stdout, ensure_ascii=False, indent=2 if args.pretty else None,
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
