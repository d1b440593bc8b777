"""Reading and writing for the whole tooling: the one jsonl reader, input columns of ``kometrics score``, and
JSON output.

- :func:`iter_jsonl` / :func:`read_jsonl`: the values of a jsonl file, blank lines skipped, a bad line named
  ``path:line``. Everything of the package that reads jsonl (the CLI, the runners, the benchmarks, the dataset
  builders) reads it here. Metric folders keep their own reader where their Space needs one (they ship alone).
- :func:`read_lines` / :func:`read_column`: the lines of a text file, one input column of ``kometrics score``
  from a ``.jsonl``, ``.tsv`` or text file.

Files are UTF-8 with or without a byte-order mark, and lines end at ``\n`` or ``\r\n`` only (a form feed or
U+2028 inside a text stays in it). A mistake in a file is a :class:`UsageError` naming the file (and the option
and line where known): ``kometrics`` prints it as one line with exit status 2.
- :func:`coerce` / :func:`jsonable`: CLI values to a metric's feature types, and results (or anything the
  tooling writes) to plain JSON.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["UsageError", "iter_jsonl", "read_jsonl", "read_lines", "read_column", "coerce", "jsonable", "where"]


class UsageError(ValueError):
    """A mistake in what the user gave (a file, an option, a row): ``kometrics`` prints it as one line on stderr
    and exits with status 2."""


def iter_jsonl(path: str | os.PathLike, *, objects: bool = False) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of every non-blank line of a jsonl file, lazily (memory: one line).

    Raises ``ValueError("path:line: not valid JSON (...)")`` on a bad line and, with ``objects``, when a line is
    not a JSON object.
    """
    with open(path, encoding="utf-8-sig") as f:  # a byte-order mark is not data
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{os.fspath(path)}:{lineno}: not valid JSON ({e.msg})") from None
            if objects and not isinstance(value, dict):
                raise ValueError(f"{os.fspath(path)}:{lineno}: each line must be a JSON object, got "
                                 f"{type(value).__name__}")
            yield lineno, value


def read_jsonl(path: str | os.PathLike, *, objects: bool = False) -> list[Any]:
    """The values of every non-blank line of a jsonl file (see :func:`iter_jsonl`)."""
    return [value for _, value in iter_jsonl(path, objects=objects)]


def where(option: str | None, path: Any) -> str:
    """How an error names a file: ``--predictions p.txt``, ``--input seed_ids=ids.txt`` or the path."""
    if not option:
        return str(path)
    return f"{option}{path}" if option.endswith("=") else f"{option} {path}"


def _check_file(path: Path, option: str | None) -> str:
    """How errors name the file; a missing file or a directory is a :class:`UsageError`."""
    loc = where(option, path)
    if path.is_dir():
        raise UsageError(f"{loc}: is a directory; pass a file")
    if not path.exists():
        raise UsageError(f"{loc}: no such file")
    return loc


def read_lines(path: str | os.PathLike, option: str | None = None) -> list[str]:
    """The lines of a UTF-8 text file, without their line ends.

    A leading byte-order mark is dropped (``utf-8-sig``); lines end at ``\\n`` or ``\\r\\n`` only (a form
    feed, a lone ``\\r`` or U+2028 stays inside its line, unlike ``str.splitlines``); a final line end does
    not start another line. A missing file, a directory or bytes that are not UTF-8 raise
    :class:`UsageError` naming ``option`` (e.g. ``"--predictions"``) and the file.
    """
    path = Path(path)
    loc = _check_file(path, option)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise UsageError(f"{loc}: cannot be read ({e.strerror or e})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise UsageError(f"{loc}:{line}: not UTF-8 text (byte {e.start}); save the file as UTF-8") from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_column(path: str | os.PathLike, name: str, option: str | None = None) -> list[Any]:
    """Read one input column from a file (UTF-8 with or without a BOM).

    - ``.jsonl``: one JSON value per line (:func:`iter_jsonl`); a line that is an object gives its ``name`` key
      (or the singular, e.g. ``prediction`` for ``predictions``).
    - ``.tsv``: one row per item; a row with several cells is a list (several references).
    - anything else: plain text, one item per line (:func:`read_lines`; blank lines are kept as empty strings).

    Errors are :class:`UsageError` naming ``option`` (e.g. ``"--predictions"``), the file and the line.
    """
    path = Path(path)
    if path.suffix == ".jsonl":
        loc = _check_file(path, option)
        out = []
        try:
            for lineno, value in iter_jsonl(path):
                if isinstance(value, dict):
                    for key in (name, name.rstrip("s"), "text"):
                        if key in value:
                            value = value[key]
                            break
                    else:
                        raise UsageError(f"{loc}:{lineno}: object has no {name!r} key")
                out.append(value)
        except UnicodeDecodeError as e:
            raise UsageError(f"{loc}: not UTF-8 text (byte {e.start}); save the file as UTF-8") from None
        except UsageError:
            raise
        except ValueError as e:  # iter_jsonl names path:line
            raise UsageError(f"{option} {e}" if option else str(e)) from None
        return out
    lines = read_lines(path, option)
    if path.suffix == ".tsv":
        rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
        return [row if len(row) > 1 else (row[0] if row else "") for row in rows]
    return lines


def coerce(value: Any, feature: Any, where: str) -> Any:
    """``value`` (from a file or the command line) as ``feature`` (a ``datasets`` feature) wants it; a value
    that does not fit ends the command with a message naming ``where``."""
    from datasets import Sequence, Value

    if isinstance(feature, (Sequence, list)):
        inner = feature.feature if isinstance(feature, Sequence) else feature[0]
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise UsageError(f"{where}: expected a list, got {value!r}")
        return [coerce(v, inner, where) for v in value]
    if isinstance(feature, Value):
        dtype = feature.dtype
        if dtype.startswith("float"):
            try:
                out = float(value)
            except (TypeError, ValueError):
                raise UsageError(f"{where}: {value!r} is not a number") from None
            return out
        if dtype.startswith("int"):
            try:
                return int(value)
            except (TypeError, ValueError):
                raise UsageError(f"{where}: {value!r} is not an integer") from None
        if dtype == "bool":
            if isinstance(value, str):
                if value.lower() in ("1", "true", "yes"):
                    return True
                if value.lower() in ("0", "false", "no"):
                    return False
                raise UsageError(f"{where}: {value!r} is not a boolean")
            return bool(value)
        if dtype == "string":
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return value


def jsonable(obj: Any, finite: bool = False) -> Any:
    """``obj`` with numpy arrays and scalars as Python lists and numbers, dict keys as strings, NaN as None
    (with ``finite``, infinities too: strict JSON)."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None
    if isinstance(obj, dict):
        return {str(k): jsonable(v, finite) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v, finite) for v in obj]
    if np is not None and isinstance(obj, np.ndarray):
        return jsonable(obj.tolist(), finite)
    if np is not None and isinstance(obj, np.generic):
        return jsonable(obj.item(), finite)
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if (finite or math.isnan(obj)) else obj
    return obj
