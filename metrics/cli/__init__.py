"""The ``kometrics`` command.

``kometrics score <metric> --predictions FILE [--references FILE] [--input NAME=FILE] [--option value ...]``
works for every metric folder: it loads the folder with ``evaluate.load`` and prints the result as JSON.
``kometrics demo`` runs every metric on real Korean data. Metric packages add their own sub-commands
(``kometrics merge generate``, ``kometrics lmre build``, ``kometrics bench ...``) through a module
``kometrics.cli.<name>`` with ``register(commands, bench)``, found here by name. Files are read and results
written by :mod:`kometrics.cli.io`.

Input files are UTF-8 (a leading byte-order mark is dropped) and split into lines at ``\\n`` and ``\\r\\n``
only, so a form feed or U+2028 inside a text stays in it. A user error (a missing or unreadable file, an
unknown or incomplete option, inputs of different lengths, a bad value in a row) prints one line on stderr
that names the file, option or index, and the command exits with status 2; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kometrics import METRICS
from kometrics.cli.io import UsageError, coerce, jsonable, read_column, read_lines, where

__all__ = ["main", "read_column", "read_lines", "metric_folder", "load_metric", "UsageError"]


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (exit status 2, as argparse's own)."""

    def error(self, message: str):  # noqa: D102 - argparse API
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def metric_folder(name: str) -> Path:
    """The folder of metric ``name`` inside the installed package (what ``evaluate.load`` takes)."""
    if name not in METRICS:
        raise UsageError(f"unknown metric {name!r}; choose one of {', '.join(METRICS)}")
    folder = Path(__file__).resolve().parent.parent / name
    if not (folder / f"{name}.py").is_file():
        raise SystemExit(f"metric {name!r} is not available in this installation ({folder})")
    return folder


def load_metric(name: str, **kwargs: Any):
    import evaluate

    return evaluate.load(str(metric_folder(name)), **kwargs)


def _parse_options(extra: list[str], params: Mapping[str, inspect.Parameter] | None = None,
                   owner: str = "the metric") -> dict[str, Any]:
    """``--name value`` / ``--name=value`` pairs (values read as JSON, else as strings).

    With ``params`` (the keyword arguments of the metric's ``_compute``), an unknown name is an error, and a
    name without a value is ``True`` only for an option whose default is a bool (a flag such as ``--idf``);
    any other option without a value is an error. Without ``params`` every bare name is a flag.
    """
    opts: dict[str, Any] = {}
    i = 0
    while i < len(extra):
        tok = extra[i]
        if not tok.startswith("--") or tok == "--":
            raise UsageError(f"unexpected argument {tok!r}: options are written --name value")
        key = tok[2:]
        if "=" in key:  # --name=value: the value is kept as written (klue/bert-base stays klue/bert-base)
            key, raw = key.split("=", 1)
            i += 1
        elif i + 1 < len(extra) and not extra[i + 1].startswith("--"):
            raw = extra[i + 1]
            i += 2
        else:
            raw = None
            i += 1
        key = key.replace("-", "_")
        if params is not None and key not in params:
            known = ", ".join(f"--{k}" for k in params) or "none"
            raise UsageError(f"unknown option --{key} for {owner}; it takes {known}")
        if raw is None:
            if params is not None and not isinstance(params[key].default, bool):
                raise UsageError(f"option --{key} needs a value (--{key} VALUE)")
            raw = "true"
        try:
            opts[key] = json.loads(raw)
        except json.JSONDecodeError:
            opts[key] = raw
    return opts


def _compute_options(metric: Any) -> dict[str, inspect.Parameter]:
    """The keyword options of a metric's ``_compute`` (its inputs, i.e. feature columns, left out)."""
    features = metric.features if isinstance(metric.features, list) else [metric.features]
    columns = {name for schema in features for name in schema}
    params = inspect.signature(type(metric)._compute).parameters
    return {k: p for k, p in params.items() if k != "self" and k not in columns
            and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}


def cmd_score(args: argparse.Namespace, extra: list[str]) -> int:
    metric = load_metric(args.metric)
    params = _compute_options(metric)
    options = _parse_options(extra, params, owner=args.metric)  # option mistakes first: nothing is read yet
    missing = [k for k, p in params.items() if p.default is inspect.Parameter.empty and k not in options]
    if missing:
        raise UsageError(f"{args.metric} needs {' and '.join(f'--{k} VALUE' for k in missing)}")
    schemas = metric.features if isinstance(metric.features, list) else [metric.features]
    files = {"predictions": ("--predictions", args.predictions)}
    if args.references and "references" not in schemas[0]:
        raise UsageError(f"{args.metric} takes no --references; it takes {', '.join(schemas[0])}")
    if args.references:
        files["references"] = ("--references", args.references)
    elif "references" in schemas[0]:
        raise UsageError(f"{args.metric} needs --references FILE (one reference per line, or a .tsv/.jsonl "
                         "file for several)")
    for spec in args.input or []:
        name, _, file = spec.partition("=")
        if not name or not file:
            raise UsageError(f"--input takes NAME=FILE, got {spec!r}")
        if not any(name in s for s in schemas):
            raise UsageError(f"{args.metric} takes no input {name!r}; it takes {', '.join(schemas[0])}")
        files[name] = (f"--input {name}=", file)
    inputs: dict[str, Any] = {}
    for name, (option, file) in files.items():
        inputs[name] = read_column(file, name, option)
        if not inputs[name]:
            raise UsageError(f"{where(option, file)}: the file is empty; give one item per line")
    lengths = {name: len(v) for name, v in inputs.items()}
    if len(set(lengths.values())) > 1:
        raise UsageError("the inputs differ in length: " + ", ".join(
            f"{where(*files[n])} has {k} item(s)" for n, k in lengths.items()) + "; give one per line")
    for name in list(inputs):
        schema = next((s for s in schemas if name in s and (name != "references" or _fits(inputs[name], s[name]))),
                      schemas[0])
        loc = where(*files[name])
        inputs[name] = [coerce(v, schema[name], f"{loc}: {name}[{i}]") for i, v in enumerate(inputs[name])]
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
    parser = _Parser(prog="kometrics", description="Korean evaluation metrics")
    parser.add_argument("--debug", action="store_true",
                        help="show the Python traceback of an error (may be given anywhere on the line)")
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
    demo.add_argument("--mlm", help="masked LM for pseudo-perplexity and MERE (default: klue/bert-base; offline, MERE "
                           "uses the real causal LM instead)")
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


#: Exceptions that report a user's mistake (bad input, option or file); anything else is a bug and keeps its
#: traceback.
_USER_ERRORS = (UsageError, ValueError, TypeError, OSError)


def _one_line(message: str) -> str:
    return re.sub(r"\s*\n\s*", " ", str(message)).strip()


def main(argv: list[str] | None = None) -> int:
    """Run the ``kometrics`` command; returns the exit status (2 for a user error, printed as one line)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    parser, _ = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "allow_extra", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args.func(args, extra) or 0)
    except SystemExit as e:  # a sub-command's own "raise SystemExit('message')"
        if debug or e.code is None or isinstance(e.code, int):
            raise
        print(f"kometrics: error: {_one_line(e.code)}", file=sys.stderr)
        return 2
    except _USER_ERRORS as e:
        if debug:
            raise
        print(f"kometrics: error: {_one_line(e)} (--debug shows the traceback)", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
